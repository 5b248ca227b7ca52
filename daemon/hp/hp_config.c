/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Perfetto trace config of a heapprofd session: its parameters checked
 * before anything runs, then written as a binary perfetto.protos.TraceConfig
 * (through the project's subset, proto/perfetto_config.proto, which keeps
 * Perfetto's field numbers) and as the text format, for dry runs. The only
 * code that knows Perfetto's messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_config.pb-c.h"
#include "core/util.h"
#include "hp/hp.h"

static bool
pow2(uint64_t v)
{
	return v && (v & (v - 1)) == 0;
}

/*
 * What heapprofd and traced would refuse or quietly change is refused
 * here, with the reason: heapprofd truncates shmem above 500 MiB and wants
 * a power of two, a multiple of 4096, at least 8192.
 */
int
hp_params_check(const struct hp_params *p, char *why, size_t whysz)
{
	unsigned i;

	if (p->npids == 0 && p->nnames == 0)
		return snprintf(why, whysz, "no target: a pid or a name"),
		       -EINVAL;
	if (p->npids > HP_PIDS_MAX || p->nnames > HP_PIDS_MAX)
		return snprintf(why, whysz, "more than %d targets",
			   HP_PIDS_MAX),
		       -EINVAL;
	for (i = 0; i < p->npids; i++)
		if (p->pids[i] <= 0)
			return snprintf(why, whysz, "pid %d is not a process",
				   (int)p->pids[i]),
			       -EINVAL;
	for (i = 0; i < p->nnames; i++) {
		const char *n = p->names[i];

		if (n[0] == '\0' || strchr(n, '/') || strchr(n, '@') ||
		    strpbrk(n, "*?["))
			return snprintf(why, whysz,
				   "name '%s' is not a "
				   "normalised process name (no '/', '@' or glob)",
				   n),
			       -EINVAL;
	}
	if (p->sampling_interval_bytes == 0)
		return snprintf(why, whysz, "sampling interval of 0 bytes"),
		       -EINVAL;
	if (p->shmem_size_bytes < HP_SHMEM_MIN ||
	    p->shmem_size_bytes > HP_SHMEM_MAX || !pow2(p->shmem_size_bytes) ||
	    p->shmem_size_bytes % 4096)
		return snprintf(why, whysz,
			   "shmem size %llu: must be a power "
			   "of two, a multiple of 4096, from %llu to %llu bytes",
			   (unsigned long long)p->shmem_size_bytes,
			   HP_SHMEM_MIN, HP_SHMEM_MAX),
		       -EINVAL;
	if (p->duration_ms == 0 || p->duration_ms > HP_DURATION_MAX_MS)
		return snprintf(why, whysz,
			   "duration %u ms: from 1 ms to "
			   "%u ms",
			   p->duration_ms, HP_DURATION_MAX_MS),
		       -EINVAL;
	if (p->dump_interval_ms && p->dump_interval_ms >= p->duration_ms)
		return snprintf(why, whysz,
			   "dump interval %u ms not shorter "
			   "than the duration",
			   p->dump_interval_ms),
		       -EINVAL;
	if (p->no_startup && p->no_running)
		return snprintf(why, whysz,
			   "no_startup and no_running together "
			   "profile nothing"),
		       -EINVAL;
	if (p->adaptive_shmem_threshold &&
	    p->adaptive_shmem_threshold > p->shmem_size_bytes)
		return snprintf(why, whysz,
			   "adaptive sampling threshold %llu "
			   "above the shared memory size",
			   (unsigned long long)p->adaptive_shmem_threshold),
		       -EINVAL;
	if (p->adaptive_max_interval &&
	    p->adaptive_max_interval < p->sampling_interval_bytes)
		return snprintf(why, whysz,
			   "adaptive sampling maximum %llu below "
			   "the sampling interval",
			   (unsigned long long)p->adaptive_max_interval),
		       -EINVAL;
	if (p->buffer_kb < 1024)
		return snprintf(why, whysz, "trace buffer below 1024 kB"),
		       -EINVAL;
	if (p->ninstalled_by > HP_INSTALLERS_MAX)
		return snprintf(why, whysz, "too many installers"), -EINVAL;
	return 0;
}

/*
 * Continuous dumps from the number asked for: with no interval given, one
 * every duration / dumps (phase the same), and heapprofd's own dump at the
 * end makes the last — two by default, what a growth claim needs. A
 * duration shorter than dumps ms keeps the single dump at the end.
 */
void
hp_params_dumps(struct hp_params *p)
{
	if (p->dump_interval_ms == 0 && p->dumps > 1 &&
	    p->duration_ms / p->dumps >= 1)
		p->dump_interval_ms = p->duration_ms / p->dumps;
}

int
hp_config_encode(const struct hp_params *p, uint8_t **ret, size_t *ret_len)
{
	Perfetto__Protos__TraceConfig tc = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig buf =
	    PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__DataSource ds[2] = {
		PERFETTO__PROTOS__TRACE_CONFIG__DATA_SOURCE__INIT,
		PERFETTO__PROTOS__TRACE_CONFIG__DATA_SOURCE__INIT,
	};
	Perfetto__Protos__DataSourceConfig dsc[2] = {
		PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT,
		PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT,
	};
	Perfetto__Protos__HeapprofdConfig hc =
	    PERFETTO__PROTOS__HEAPPROFD_CONFIG__INIT;
	Perfetto__Protos__HeapprofdConfig__ContinuousDumpConfig cd =
	    PERFETTO__PROTOS__HEAPPROFD_CONFIG__CONTINUOUS_DUMP_CONFIG__INIT;
	Perfetto__Protos__ProcessStatsConfig ps =
	    PERFETTO__PROTOS__PROCESS_STATS_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig *bufs[1] = { &buf };
	Perfetto__Protos__TraceConfig__DataSource *dss[2] = { &ds[0], &ds[1] };
	char *names[HP_PIDS_MAX], *inst[HP_INSTALLERS_MAX];
	uint64_t pids[HP_PIDS_MAX];
	uint8_t *out;
	size_t n;
	unsigned i;

	if (p->npids > HP_PIDS_MAX || p->nnames > HP_PIDS_MAX ||
	    p->ninstalled_by > HP_INSTALLERS_MAX)
		return -EINVAL;
	buf.has_size_kb = true;
	buf.size_kb = p->buffer_kb;
	buf.has_fill_policy = true;
	buf.fill_policy =
	    PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER;
	tc.n_buffers = 1;
	tc.buffers = bufs;

	for (i = 0; i < p->nnames; i++)
		names[i] = (char *)p->names[i];
	for (i = 0; i < p->npids; i++)
		pids[i] = (uint64_t)p->pids[i];
	for (i = 0; i < p->ninstalled_by; i++)
		inst[i] = (char *)p->installed_by[i];
	hc.has_sampling_interval_bytes = true;
	hc.sampling_interval_bytes = p->sampling_interval_bytes;
	hc.n_process_cmdline = p->nnames;
	hc.process_cmdline = p->nnames ? names : NULL;
	hc.n_pid = p->npids;
	hc.pid = p->npids ? pids : NULL;
	hc.n_target_installed_by = p->ninstalled_by;
	hc.target_installed_by = p->ninstalled_by ? inst : NULL;
	if (p->max_heapprofd_memory_kb) {
		hc.has_max_heapprofd_memory_kb = true;
		hc.max_heapprofd_memory_kb = p->max_heapprofd_memory_kb;
	}
	if (p->max_heapprofd_cpu_secs) {
		hc.has_max_heapprofd_cpu_secs = true;
		hc.max_heapprofd_cpu_secs = p->max_heapprofd_cpu_secs;
	}
	if (p->dump_interval_ms) {
		cd.has_dump_phase_ms = cd.has_dump_interval_ms = true;
		cd.dump_phase_ms = cd.dump_interval_ms = p->dump_interval_ms;
		hc.continuous_dump_config = &cd;
	}
	hc.has_shmem_size_bytes = true;
	hc.shmem_size_bytes = p->shmem_size_bytes;
	hc.has_block_client = true;
	hc.block_client = p->block_client;
	if (p->no_startup) {
		hc.has_no_startup = true;
		hc.no_startup = true;
	}
	if (p->no_running) {
		hc.has_no_running = true;
		hc.no_running = true;
	}
	if (p->adaptive_shmem_threshold) {
		hc.has_adaptive_sampling_shmem_threshold = true;
		hc.adaptive_sampling_shmem_threshold =
		    p->adaptive_shmem_threshold;
	}
	if (p->adaptive_max_interval) {
		hc.has_adaptive_sampling_max_sampling_interval_bytes = true;
		hc.adaptive_sampling_max_sampling_interval_bytes =
		    p->adaptive_max_interval;
	}
	dsc[0].name = (char *)"android.heapprofd";
	dsc[0].has_target_buffer = true;
	dsc[0].target_buffer = 0;
	dsc[0].heapprofd_config = &hc;
	ds[0].config = &dsc[0];

	ps.has_scan_all_processes_on_start = true;
	ps.scan_all_processes_on_start = true;
	ps.has_proc_stats_poll_ms = true;
	ps.proc_stats_poll_ms = p->proc_stats_poll_ms;
	dsc[1].name = (char *)"linux.process_stats";
	dsc[1].has_target_buffer = true;
	dsc[1].target_buffer = 0;
	dsc[1].process_stats_config = &ps;
	ds[1].config = &dsc[1];
	tc.n_data_sources = 2;
	tc.data_sources = dss;

	tc.has_duration_ms = true;
	tc.duration_ms = p->duration_ms;
	tc.has_write_into_file = true;
	tc.write_into_file = true;
	tc.has_flush_timeout_ms = true;
	tc.flush_timeout_ms = 30000;

	n = perfetto__protos__trace_config__get_packed_size(&tc);
	if ((out = malloc(n ? n : 1)) == NULL)
		return -ENOMEM;
	perfetto__protos__trace_config__pack(&tc, out);
	*ret = out;
	*ret_len = n;
	return 0;
}

/* A string in text format: quotes and backslashes escaped. */
static void
text_str(struct vbuf *out, const char *indent, const char *key, const char *s)
{
	vbuf_printf(out, "%s%s: \"", indent, key);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			vbuf_printf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			vbuf_printf(out, "\\%03o", (unsigned char)*s);
		else
			vbuf_printf(out, "%c", *s);
	}
	vbuf_printf(out, "\"\n");
}

/* The same config in Perfetto's text format (perfetto --txt reads it),
 * fields in field-number order as protoc --decode prints them. */
int
hp_config_text(const struct hp_params *p, struct vbuf *out)
{
	const char *in = "      ";
	unsigned i;

	vbuf_printf(out,
	    "buffers {\n  size_kb: %u\n  fill_policy: "
	    "RING_BUFFER\n}\n",
	    p->buffer_kb);
	vbuf_printf(out,
	    "data_sources {\n  config {\n    name: "
	    "\"android.heapprofd\"\n    target_buffer: 0\n"
	    "    heapprofd_config {\n");
	vbuf_printf(out, "%ssampling_interval_bytes: %llu\n", in,
	    (unsigned long long)p->sampling_interval_bytes);
	for (i = 0; i < p->nnames; i++)
		text_str(out, in, "process_cmdline", p->names[i]);
	for (i = 0; i < p->npids; i++)
		vbuf_printf(out, "%spid: %d\n", in, (int)p->pids[i]);
	if (p->dump_interval_ms)
		vbuf_printf(out,
		    "%scontinuous_dump_config {\n%s  "
		    "dump_phase_ms: %u\n%s  dump_interval_ms: %u\n%s}\n",
		    in, in, p->dump_interval_ms, in, p->dump_interval_ms, in);
	vbuf_printf(out, "%sshmem_size_bytes: %llu\n", in,
	    (unsigned long long)p->shmem_size_bytes);
	vbuf_printf(out, "%sblock_client: %s\n", in,
	    p->block_client ? "true" : "false");
	if (p->no_startup)
		vbuf_printf(out, "%sno_startup: true\n", in);
	if (p->no_running)
		vbuf_printf(out, "%sno_running: true\n", in);
	if (p->max_heapprofd_memory_kb)
		vbuf_printf(out, "%smax_heapprofd_memory_kb: %u\n", in,
		    p->max_heapprofd_memory_kb);
	if (p->max_heapprofd_cpu_secs)
		vbuf_printf(out, "%smax_heapprofd_cpu_secs: %llu\n", in,
		    (unsigned long long)p->max_heapprofd_cpu_secs);
	if (p->adaptive_shmem_threshold)
		vbuf_printf(out, "%sadaptive_sampling_shmem_threshold: %llu\n",
		    in, (unsigned long long)p->adaptive_shmem_threshold);
	if (p->adaptive_max_interval)
		vbuf_printf(out,
		    "%sadaptive_sampling_max_sampling_interval_bytes: %llu\n",
		    in, (unsigned long long)p->adaptive_max_interval);
	for (i = 0; i < p->ninstalled_by; i++)
		text_str(out, in, "target_installed_by", p->installed_by[i]);
	vbuf_printf(out, "    }\n  }\n}\n");
	vbuf_printf(out,
	    "data_sources {\n  config {\n    name: "
	    "\"linux.process_stats\"\n    target_buffer: 0\n"
	    "    process_stats_config {\n"
	    "      scan_all_processes_on_start: true\n"
	    "      proc_stats_poll_ms: %u\n    }\n  }\n}\n",
	    p->proc_stats_poll_ms);
	return vbuf_printf(out,
		   "duration_ms: %u\nwrite_into_file: true\n"
		   "flush_timeout_ms: 30000\n",
		   p->duration_ms) < 0 ?
	    -ENOMEM :
	    0;
}
