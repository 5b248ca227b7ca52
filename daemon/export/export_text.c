/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A page in the OpenMetrics 1.0 text format, or in Prometheus' text format
 * 0.0.4 for a scraper that does not ask for OpenMetrics (doc/export.md).
 *
 * The two differ where this file writes them: OpenMetrics names a
 * counter's family without "_total" in its TYPE/UNIT/HELP lines and its
 * samples with it, has UNIT lines, and ends with "# EOF"; the 0.0.4 format
 * names the metric as sampled in TYPE and HELP and has neither UNIT nor
 * EOF. Label values escape \, " and newline in both.
 *
 * Pure: a state and a sample in, text out. The page's size is bounded by
 * the CPUs (8 lines each), the top N (5 lines per process) and a fixed
 * rest.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/sysnames.h"
#include "export/export.h"
#include "window/window.h"

struct om {
	struct vbuf *out;
	enum export_format fmt;
	const char *fam; /* the family being written */
	bool counter;	 /* its samples end in _total */
	/* the labels of the next sample, escaped: room for every label of
	 * a sample at its longest (a 255-byte path all escapes is 510) */
	char lab[4096];
	size_t nlab;
	int err;
};

static void
put(struct om *o, const char *s, size_t n)
{
	int r;

	if (o->err)
		return;
	if ((r = vbuf_reserve(o->out, n)) < 0) {
		o->err = r;
		return;
	}
	memcpy(o->out->p + o->out->len, s, n);
	o->out->len += n;
	o->out->p[o->out->len] = '\0';
}

static void
puts_(struct om *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Bytes of the valid UTF-8 sequence at s (1-4), 0: not one. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong, surrogates, past U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

/*
 * A label value as the text formats want it: \, " and newline escaped,
 * and what is not UTF-8 (a comm or cgroup name is any bytes, and a cut
 * may split a character) written as U+FFFD, for a parser refuses the
 * whole page over one bad byte.
 */
static int
label_escape(struct vbuf *out, const char *s, bool esc)
{
	struct om o = { .out = out };
	size_t n;

	while (*s) {
		if (esc && *s == '\\')
			puts_(&o, "\\\\");
		else if (esc && *s == '"')
			puts_(&o, "\\\"");
		else if (esc && *s == '\n')
			puts_(&o, "\\n");
		else if ((n = utf8_len((const unsigned char *)s)) == 0)
			puts_(&o, "\xef\xbf\xbd"); /* U+FFFD */
		else {
			put(&o, s, n);
			s += n;
			continue;
		}
		s++;
	}
	return o.err;
}

int
export_label_escape(struct vbuf *out, const char *s)
{
	return label_escape(out, s, true);
}

/* s with what is not UTF-8 as U+FFFD, nothing escaped (OTLP strings). */
int
export_utf8(struct vbuf *out, const char *s)
{
	return label_escape(out, s, false);
}

/* One family's metadata; HELP text here never holds \ or a newline. */
static void
family(struct om *o, const char *name, bool counter, const char *unit,
    const char *help)
{
	const char *suf = counter && o->fmt == EXPORT_PROMETHEUS ? "_total" :
								   "";
	char line[512];

	o->fam = name;
	o->counter = counter;
	snprintf(line, sizeof(line), "# HELP %s%s %s\n# TYPE %s%s %s\n", name,
	    suf, help, name, suf, counter ? "counter" : "gauge");
	puts_(o, line);
	if (unit && o->fmt == EXPORT_OPENMETRICS) {
		snprintf(line, sizeof(line), "# UNIT %s %s\n", name, unit);
		puts_(o, line);
	}
}

/* Labels of the next sample, added one at a time. */
static void
lab(struct om *o, const char *k, const char *v)
{
	struct vbuf b = { 0 };
	int n;

	if (export_label_escape(&b, v) < 0) {
		o->err = -ENOMEM;
		return;
	}
	n = snprintf(o->lab + o->nlab, sizeof(o->lab) - o->nlab, "%s%s=\"%s\"",
	    o->nlab ? "," : "", k, b.p ? b.p : "");
	vbuf_release(&b);
	if (n < 0 || (size_t)n >= sizeof(o->lab) - o->nlab) {
		o->err = -ENAMETOOLONG;
		return;
	}
	o->nlab += (size_t)n;
}

static void
lab_u(struct om *o, const char *k, unsigned long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", v);
	lab(o, k, s);
}

/* The sample's name and labels, then the value text. */
static void
sample_text(struct om *o, const char *val)
{
	char head[160];

	snprintf(head, sizeof(head), "%s%s", o->fam,
	    o->counter ? "_total" : "");
	puts_(o, head);
	if (o->nlab) {
		puts_(o, "{");
		put(o, o->lab, o->nlab);
		puts_(o, "}");
	}
	puts_(o, " ");
	puts_(o, val);
	puts_(o, "\n");
	o->nlab = 0;
}

static void
sample_u(struct om *o, unsigned long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", v);
	sample_text(o, s);
}

static void
sample_d(struct om *o, double v)
{
	char s[40];

	snprintf(s, sizeof(s), "%.9g", v);
	sample_text(o, s);
}

/* num / den exactly when den is a power of ten (USER_HZ 100, µs, ns),
 * else to 17 digits: a counter's text must not wobble between scrapes. */
static void
sample_ratio(struct om *o, uint64_t num, uint64_t den)
{
	unsigned digits = 0;
	uint64_t d = den;
	char s[48];

	while (d > 1 && d % 10 == 0) {
		d /= 10;
		digits++;
	}
	if (d != 1 || den == 0) {
		snprintf(s, sizeof(s), "%.17g", den ? (double)num / den : 0.0);
	} else if (digits == 0) {
		snprintf(s, sizeof(s), "%llu", (unsigned long long)num);
	} else {
		uint64_t frac = num % den;
		int n;

		n = snprintf(s, sizeof(s), "%llu.%0*llu",
		    (unsigned long long)(num / den), (int)digits,
		    (unsigned long long)frac);
		/* trim trailing zeros, keep one digit after the point */
		while (n > 2 && s[n - 1] == '0' && s[n - 2] != '.')
			s[--n] = '\0';
	}
	sample_text(o, s);
}

/* ---------------------------------------------------------------- system */

static void
page_cpu(struct om *o, const struct sys_sample *s, unsigned hz)
{
	uint64_t v[EXPORT_CPU_MODES];
	unsigned i, m;

	if (s->stat_err)
		return;
	family(o, "system_cpu_time_seconds", true, "seconds",
	    "Seconds each logical CPU spent in each mode (/proc/stat cpuN).");
	for (i = 0; i < s->stat.cpu_span && i < VITALS_CPU_MAX; i++) {
		if (!s->stat.online[i])
			continue;
		export_cpu_fields(&s->stat.cpu[i], v);
		for (m = 0; m < EXPORT_CPU_MODES; m++) {
			lab_u(o, "cpu_logical_number", i);
			lab(o, "cpu_mode", export_cpu_modes[m]);
			sample_ratio(o, v[m], hz);
		}
	}
	family(o, "vitals_cpu_time_seconds", true, "seconds",
	    "CPU seconds of all CPUs by mode (/proc/stat's cpu line).");
	export_cpu_fields(&s->stat.all, v);
	for (m = 0; m < EXPORT_CPU_MODES; m++) {
		lab(o, "cpu_mode", export_cpu_modes[m]);
		sample_ratio(o, v[m], hz);
	}
	family(o, "vitals_cpus_online", false, NULL,
	    "Logical CPUs online (cpuN lines in /proc/stat).");
	sample_u(o, s->stat.ncpu_online);
}

static void
page_psi(struct om *o, const struct sys_sample *s)
{
	static const char *const res[PSI__MAX] = { "cpu", "memory", "io" };
	unsigned i, k;
	bool any = false;

	for (i = 0; i < PSI__MAX; i++)
		any |= s->psi_err[i] == 0;
	if (!any)
		return;
	family(o, "vitals_pressure_stall_seconds", true, "seconds",
	    "Time some or all tasks stalled on a resource (PSI total=).");
	for (i = 0; i < PSI__MAX; i++) {
		if (s->psi_err[i])
			continue;
		for (k = 0; k < 2; k++) {
			const struct psi_line *l = k ? &s->psi[i].full :
						       &s->psi[i].some;

			if (k && !s->psi[i].have_full)
				continue;
			lab(o, "resource", res[i]);
			lab(o, "kind", k ? "full" : "some");
			sample_ratio(o, l->total_us, 1000000);
		}
	}
	family(o, "vitals_pressure_ratio", false, "ratio",
	    "Share of time stalled, the kernel's running averages (PSI avg).");
	for (i = 0; i < PSI__MAX; i++) {
		if (s->psi_err[i])
			continue;
		for (k = 0; k < 2; k++) {
			const struct psi_line *l = k ? &s->psi[i].full :
						       &s->psi[i].some;
			const double avg[3] = { l->avg10, l->avg60, l->avg300 };
			static const char *const win[3] = { "10s", "60s",
				"300s" };
			unsigned a;

			if (k && !s->psi[i].have_full)
				continue;
			for (a = 0; a < 3; a++) {
				lab(o, "resource", res[i]);
				lab(o, "kind", k ? "full" : "some");
				lab(o, "window", win[a]);
				sample_d(o, avg[a] / 100.0);
			}
		}
	}
}

#define MI(k) ((s->mem.have & (1u << (k))) != 0)

static void
page_mem(struct om *o, const struct sys_sample *s)
{
	const uint64_t *kb = s->mem.kb;

	if (s->mem_err || !MI(MI_MEMTOTAL) || !MI(MI_MEMFREE))
		return;
	family(o, "system_memory_limit_bytes", false, "bytes",
	    "Memory the kernel manages (MemTotal).");
	sample_u(o, (unsigned long long)kb[MI_MEMTOTAL] * 1024);
	if (MI(MI_BUFFERS) && MI(MI_CACHED)) {
		uint64_t rest = kb[MI_MEMFREE] + kb[MI_BUFFERS] + kb[MI_CACHED];
		uint64_t used = kb[MI_MEMTOTAL] > rest ?
		    kb[MI_MEMTOTAL] - rest :
		    0;

		family(o, "system_memory_usage_bytes", false, "bytes",
		    "Memory by state; used = MemTotal - MemFree - Buffers - "
		    "Cached.");
		lab(o, "system_memory_state", "used");
		sample_u(o, (unsigned long long)used * 1024);
		lab(o, "system_memory_state", "free");
		sample_u(o, (unsigned long long)kb[MI_MEMFREE] * 1024);
		lab(o, "system_memory_state", "buffers");
		sample_u(o, (unsigned long long)kb[MI_BUFFERS] * 1024);
		lab(o, "system_memory_state", "cached");
		sample_u(o, (unsigned long long)kb[MI_CACHED] * 1024);
	}
	if (MI(MI_MEMAVAILABLE)) {
		family(o, "vitals_memory_available_bytes", false, "bytes",
		    "The kernel's estimate of memory available without "
		    "swapping (MemAvailable).");
		sample_u(o, (unsigned long long)kb[MI_MEMAVAILABLE] * 1024);
	}
	if (MI(MI_SWAPTOTAL) && MI(MI_SWAPFREE)) {
		uint64_t t = kb[MI_SWAPTOTAL], f = kb[MI_SWAPFREE];

		family(o, "system_paging_usage_bytes", false, "bytes",
		    "Swap space by state (SwapTotal, SwapFree).");
		lab(o, "system_paging_state", "used");
		sample_u(o, (unsigned long long)(t > f ? t - f : 0) * 1024);
		lab(o, "system_paging_state", "free");
		sample_u(o, (unsigned long long)f * 1024);
	}
}

#define VM(k) ((s->vm.have & (1u << (k))) != 0)

static void
page_vm(struct om *o, const struct sys_sample *s)
{
	unsigned i;

	if (s->vm_err)
		return;
	if (VM(VM_PGFAULT) && VM(VM_PGMAJFAULT)) {
		uint64_t all = s->vm.v[VM_PGFAULT],
			 maj = s->vm.v[VM_PGMAJFAULT];

		family(o, "system_paging_faults", true, NULL,
		    "Page faults; minor = pgfault - pgmajfault (/proc/vmstat).");
		lab(o, "system_paging_fault_type", "minor");
		sample_u(o, all > maj ? all - maj : 0);
		lab(o, "system_paging_fault_type", "major");
		sample_u(o, maj);
	}
	family(o, "vitals_vmstat_events", true, NULL,
	    "Other /proc/vmstat counters vitalsd keeps, by key.");
	for (i = 0; i < VM__MAX; i++) {
		if (i == VM_PGFAULT || i == VM_PGMAJFAULT || !VM(i))
			continue;
		lab(o, "event", vmstat_key_name(i));
		sample_u(o, s->vm.v[i]);
	}
}

/* ------------------------------------------------------------- processes */

/* pid, its start (seconds after boot, exact) and comm */
static void
lab_proc(struct om *o, const struct export_state *st,
    const struct export_proc *p)
{
	char start[48];
	uint64_t den = st->hz, digits = 0, d = den;

	while (d > 1 && d % 10 == 0) {
		d /= 10;
		digits++;
	}
	if (d == 1 && digits)
		snprintf(start, sizeof(start), "%llu.%0*llu",
		    (unsigned long long)(p->starttime / den), (int)digits,
		    (unsigned long long)(p->starttime % den));
	else
		snprintf(start, sizeof(start), "%llu/%llu",
		    (unsigned long long)p->starttime, (unsigned long long)den);
	lab_u(o, "process_pid", (unsigned long long)p->pid);
	lab(o, "process_start_time", start);
	lab(o, "process_executable_name", p->comm);
}

static void
page_procs(struct om *o, const struct export_state *st)
{
	const struct export_sums *u = &st->sum;
	unsigned i, k;

	if (st->samples == 0)
		return;
	family(o, "process_cpu_time_seconds", true, "seconds",
	    "CPU seconds of a process since it started (utime, stime); the "
	    "top N, then the rest since vitalsd started.");
	for (i = 0; i < st->ntop; i++) {
		const struct export_proc *p = &st->procs[st->top[i]];

		for (k = 0; k < 2; k++) {
			lab_proc(o, st, p);
			lab(o, "cpu_mode", k ? "system" : "user");
			sample_ratio(o, k ? p->stime : p->utime, st->hz);
		}
	}
	lab(o, "process_executable_name", "other");
	lab(o, "cpu_mode", "user");
	sample_ratio(o, u->o_utime, st->hz);
	lab(o, "process_executable_name", "other");
	lab(o, "cpu_mode", "system");
	sample_ratio(o, u->o_stime, st->hz);

	family(o, "process_paging_faults", true, NULL,
	    "Page faults of a process since it started; the top N, then the "
	    "rest since vitalsd started.");
	for (i = 0; i < st->ntop; i++) {
		const struct export_proc *p = &st->procs[st->top[i]];

		for (k = 0; k < 2; k++) {
			lab_proc(o, st, p);
			lab(o, "process_paging_fault_type",
			    k ? "major" : "minor");
			sample_u(o, k ? p->majflt : p->minflt);
		}
	}
	lab(o, "process_executable_name", "other");
	lab(o, "process_paging_fault_type", "minor");
	sample_u(o, u->o_minflt);
	lab(o, "process_executable_name", "other");
	lab(o, "process_paging_fault_type", "major");
	sample_u(o, u->o_majflt);

	family(o, "process_memory_usage_bytes", false, "bytes",
	    "Resident memory of a process (stat field 24); the top N, then "
	    "the other live processes together.");
	for (i = 0; i < st->ntop; i++) {
		const struct export_proc *p = &st->procs[st->top[i]];

		lab_proc(o, st, p);
		sample_u(o,
		    (unsigned long long)(p->rss_pages * st->page_bytes));
	}
	lab(o, "process_executable_name", "other");
	sample_u(o, (unsigned long long)(st->o_rss_pages * st->page_bytes));

	family(o, "vitals_processes_cpu_time_seconds", true, "seconds",
	    "CPU seconds of every process seen since vitalsd started: the "
	    "total the process series and other add up to.");
	lab(o, "cpu_mode", "user");
	sample_ratio(o, u->utime, st->hz);
	lab(o, "cpu_mode", "system");
	sample_ratio(o, u->stime, st->hz);
	family(o, "vitals_processes_paging_faults", true, NULL,
	    "Page faults of every process seen since vitalsd started.");
	lab(o, "process_paging_fault_type", "minor");
	sample_u(o, u->minflt);
	lab(o, "process_paging_fault_type", "major");
	sample_u(o, u->majflt);
	family(o, "vitals_processes", false, NULL,
	    "Live processes in the latest sample, and those with series.");
	lab(o, "set", "live");
	sample_u(o, st->nprocs);
	lab(o, "set", "top");
	sample_u(o, st->ntop);
}

/* ---------------------------------------------------------------- cgroups */

static void
lab_cg(struct om *o, const struct export_cg *g)
{
	lab_u(o, "cgroup_id", (unsigned long long)g->id);
	lab(o, "cgroup_path", g->path[0] ? g->path : "/");
	lab_u(o, "cgroup_depth", g->depth);
}

static void
lab_cg_other(struct om *o, unsigned depth)
{
	lab(o, "cgroup_path", "other");
	lab_u(o, "cgroup_depth", depth);
}

static void
page_cgroups(struct om *o, const struct export_state *st)
{
	unsigned i, d, k;

	if (st->cg_depths == 0)
		return;
	family(o, "vitals_cgroup_cpu_time_seconds", true, "seconds",
	    "CPU seconds of a cgroup (cpu.stat) since vitalsd first saw it; "
	    "the top N, then the rest per depth.");
	for (i = 0; i < st->ncgtop; i++) {
		const struct export_cg *g = &st->cgs[st->cgtop[i]];

		for (k = 0; k < 2; k++) {
			lab_cg(o, g);
			lab(o, "cpu_mode", k ? "system" : "user");
			sample_ratio(o, k ? g->system_us : g->user_us, 1000000);
		}
	}
	for (d = 0; d < EXPORT_CG_DEPTHS; d++) {
		if (!(st->cg_depths & (1u << d)))
			continue;
		for (k = 0; k < 2; k++) {
			lab_cg_other(o, d);
			lab(o, "cpu_mode", k ? "system" : "user");
			sample_ratio(o,
			    k ? st->cg_o_system_us[d] : st->cg_o_user_us[d],
			    1000000);
		}
	}
	family(o, "vitals_cgroup_paging_faults", true, NULL,
	    "Page faults in a cgroup (memory.stat) since vitalsd first saw "
	    "it; the top N, then the rest per depth.");
	for (i = 0; i < st->ncgtop; i++) {
		const struct export_cg *g = &st->cgs[st->cgtop[i]];

		for (k = 0; k < 2; k++) {
			lab_cg(o, g);
			lab(o, "fault_type", k ? "major" : "minor");
			sample_u(o,
			    k ? g->pgmajfault :
				g->pgfault > g->pgmajfault ?
				g->pgfault - g->pgmajfault :
				0);
		}
	}
	for (d = 0; d < EXPORT_CG_DEPTHS; d++) {
		if (!(st->cg_depths & (1u << d)))
			continue;
		for (k = 0; k < 2; k++) {
			uint64_t all = st->cg_o_pgfault[d];
			uint64_t maj = st->cg_o_pgmajfault[d];

			lab_cg_other(o, d);
			lab(o, "fault_type", k ? "major" : "minor");
			sample_u(o, k ? maj : all > maj ? all - maj : 0);
		}
	}
	family(o, "vitals_cgroup_memory_usage_bytes", false, "bytes",
	    "A cgroup's memory.current; the top N, then the rest per depth.");
	for (i = 0; i < st->ncgtop; i++) {
		const struct export_cg *g = &st->cgs[st->cgtop[i]];

		if (!g->have_mem)
			continue;
		lab_cg(o, g);
		sample_u(o, g->mem_bytes);
	}
	for (d = 0; d < EXPORT_CG_DEPTHS; d++) {
		if (!(st->cg_depths & (1u << d)))
			continue;
		lab_cg_other(o, d);
		sample_u(o, st->cg_o_mem[d]);
	}
}

/* ------------------------------------------------------------- GPU freq */

/* Per GPU device (gpufreq.c): the last closed window's gauges, where the
 * device gave the figure, and time in state since the exporter saw it. */
static void
page_gpu(struct om *o, const struct export_state *st)
{
	static const char *const stat[3] = { "min", "mean", "max" };
	uint32_t i, k;
	uint64_t ppm;

	if (!st->gpu_on)
		return;
	family(o, "vitals_gpu_devices", false, NULL,
	    "GPU devices the frequency collector reads.");
	sample_u(o, st->ngpu);
	if (st->ngpu == 0)
		return;
	family(o, "vitals_gpu_freq_hz", false, "hz",
	    "GPU current frequency over the last closed window's readings.");
	for (i = 0; i < st->ngpu; i++) {
		const struct export_gpu *g = &st->gpu[i];
		const struct gpufreq_win *w = &g->last;
		uint64_t v[3];

		if (!g->in_last || !(w->have & GPUFREQ_HAVE_CUR) || !w->cur_n)
			continue;
		v[0] = w->cur_min_hz;
		v[1] = w->cur_sum_hz / w->cur_n;
		v[2] = w->cur_max_hz;
		for (k = 0; k < 3; k++) {
			lab(o, "device", g->name);
			lab(o, "stat", stat[k]);
			sample_u(o, v[k]);
		}
	}
	family(o, "vitals_gpu_freq_limit_hz", false, "hz",
	    "GPU frequency floor and ceiling (devfreq min_freq, max_freq).");
	for (i = 0; i < st->ngpu; i++) {
		const struct export_gpu *g = &st->gpu[i];

		if (g->in_last && (g->last.have & GPUFREQ_HAVE_MIN)) {
			lab(o, "device", g->name);
			lab(o, "limit", "min");
			sample_u(o, g->last.min_hz);
		}
		if (g->in_last && (g->last.have & GPUFREQ_HAVE_MAX)) {
			lab(o, "device", g->name);
			lab(o, "limit", "max");
			sample_u(o, g->last.max_hz);
		}
	}
	family(o, "vitals_gpu_busy_ratio", false, "ratio",
	    "GPU busy share over the last closed window (0-1).");
	for (i = 0; i < st->ngpu; i++)
		if (st->gpu[i].in_last &&
		    gpufreq_busy_ppm(&st->gpu[i].last, &ppm)) {
			lab(o, "device", st->gpu[i].name);
			sample_ratio(o, ppm, 1000000);
		}
	family(o, "vitals_gpu_time_in_state_seconds", true, "seconds",
	    "Time the GPU spent at each frequency (devfreq trans_stat).");
	for (i = 0; i < st->ngpu; i++)
		for (k = 0; k < st->gpu[i].nstates; k++) {
			lab(o, "device", st->gpu[i].name);
			lab_u(o, "hz", st->gpu[i].hz[k]);
			sample_ratio(o, st->gpu[i].ms[k], 1000);
		}
}

/* ---------------------------------------------------------- BPF, health */

static void
page_bpf(struct om *o, const struct export_sums *u)
{
	if (!u->bpf)
		return;
	family(o, "vitals_sched_oncpu_seconds", true, "seconds",
	    "On-CPU time the sched_switch accounting attributed (closed "
	    "windows).");
	sample_ratio(o, u->bpf_oncpu_ns, NSEC_PER_SEC);
	family(o, "vitals_sched_runqueue_wait_seconds", true, "seconds",
	    "Time runnable tasks waited for a CPU (closed windows).");
	sample_ratio(o, u->bpf_rq_ns, NSEC_PER_SEC);
	family(o, "vitals_sched_runqueue_waits", true, NULL,
	    "Run-queue waits measured (closed windows).");
	sample_u(o, u->bpf_rq_count);
	family(o, "vitals_sched_switches", true, NULL,
	    "Context switches seen by the BPF program (closed windows).");
	sample_u(o, u->bpf_switches);
	family(o, "vitals_sched_wakeups", true, NULL,
	    "Wakeups seen by the BPF program (closed windows).");
	sample_u(o, u->bpf_wakeups);
	family(o, "vitals_sched_lost_seconds", true, "seconds",
	    "On-CPU time no map entry could take (closed windows).");
	sample_ratio(o, u->bpf_lost_ns, NSEC_PER_SEC);
}

/* ------------------------------------------------------ syscall latency */

static void
sc_name(char *buf, size_t len, uint32_t arch, uint32_t nr)
{
	const char *n;

	if (nr == EXPORT_SC_OTHER) {
		snprintf(buf, len, "other");
		return;
	}
	n = arch < SYSNAMES__MAX ? sysnames_name(arch, nr) : NULL;
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "nr%u", nr);
}

static void
lab_sc(struct om *o, const struct export_sc *sc,
    const struct export_sc_series *s)
{
	char nm[32];

	if (s->tgid < 0) {
		lab(o, "pid", "other");
		lab(o, "comm", "other");
		lab(o, "syscall", "other");
		return;
	}
	lab_u(o, "pid", (unsigned long long)s->tgid);
	lab(o, "comm", s->comm);
	sc_name(nm, sizeof(nm), sc->arch, s->nr);
	lab(o, "syscall", nm);
}

/* 2^k ns in seconds, exactly (a label value that never wobbles) */
static void
le_text(char *buf, size_t len, uint64_t ns)
{
	int n = snprintf(buf, len, "%llu.%09llu",
	    (unsigned long long)(ns / NSEC_PER_SEC),
	    (unsigned long long)(ns % NSEC_PER_SEC));

	while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
		buf[--n] = '\0';
}

static void
sc_hist(struct om *o, const struct export_sc *sc,
    const struct export_sc_hist *h)
{
	static const char fam[] = "vitals_syscall_latency_seconds";
	char nm[32], le[40], name[64];
	uint64_t cum = 0;
	unsigned b;

	sc_name(nm, sizeof(nm), sc->arch, h->nr);
	snprintf(name, sizeof(name), "%s_bucket", fam);
	o->fam = name;
	for (b = 0; b + 1 < SC_HIST_N; b++) {
		cum += h->b[b];
		le_text(le, sizeof(le), (uint64_t)2 << b);
		lab(o, "syscall", nm);
		lab(o, "le", le);
		sample_u(o, cum);
	}
	/* Σ b = count by the part's contract; never below the buckets */
	cum += h->b[SC_HIST_N - 1];
	if (h->count > cum)
		cum = h->count;
	lab(o, "syscall", nm);
	lab(o, "le", "+Inf");
	sample_u(o, cum);
	snprintf(name, sizeof(name), "%s_count", fam);
	lab(o, "syscall", nm);
	sample_u(o, cum);
	snprintf(name, sizeof(name), "%s_sum", fam);
	lab(o, "syscall", nm);
	sample_ratio(o, h->sum_ns, NSEC_PER_SEC);
}

static void
page_syscalls(struct om *o, const struct export_sc *sc)
{
	static const char *const cls[SC_ERR__MAX] = { "eagain", "eintr",
		"etimedout", "other" };
	size_t i;
	unsigned k;

	if (sc == NULL)
		return;
	family(o, "vitals_syscall_calls", true, NULL,
	    "Syscalls that returned, per process and syscall (closed "
	    "windows; the rest under pid=\"other\").");
	for (i = 0; i < sc->nseries; i++) {
		lab_sc(o, sc, &sc->series[i]);
		sample_u(o, sc->series[i].count);
	}
	lab_sc(o, sc, &sc->other);
	sample_u(o, sc->other.count);
	family(o, "vitals_syscall_errors", true, NULL,
	    "Syscalls that returned an error, by class.");
	for (i = 0; i <= sc->nseries; i++) {
		const struct export_sc_series *s = i < sc->nseries ?
		    &sc->series[i] :
		    &sc->other;

		for (k = 0; k < SC_ERR__MAX; k++) {
			lab_sc(o, sc, s);
			lab(o, "class", cls[k]);
			sample_u(o, s->errors[k]);
		}
	}
	family(o, "vitals_syscall_time_seconds", true, "seconds",
	    "Sum of syscall latencies, per process and syscall.");
	for (i = 0; i < sc->nseries; i++) {
		lab_sc(o, sc, &sc->series[i]);
		sample_ratio(o, sc->series[i].sum_ns, NSEC_PER_SEC);
	}
	lab_sc(o, sc, &sc->other);
	sample_ratio(o, sc->other.sum_ns, NSEC_PER_SEC);
	/* a histogram family: TYPE histogram, samples _bucket/_count/_sum */
	puts_(o,
	    "# HELP vitals_syscall_latency_seconds Syscall latency per "
	    "syscall, log2 buckets; calls under the floor in the "
	    "floor's bucket.\n# TYPE vitals_syscall_latency_seconds "
	    "histogram\n");
	if (o->fmt == EXPORT_OPENMETRICS)
		puts_(o, "# UNIT vitals_syscall_latency_seconds seconds\n");
	o->counter = false;
	for (i = 0; i < sc->nhists; i++)
		sc_hist(o, sc, &sc->hists[i]);
	sc_hist(o, sc, &sc->hists[EXPORT_SC_HISTS]);
	family(o, "vitals_syscall_lost", true, NULL,
	    "Syscall tracer losses and skips, by reason.");
	lab(o, "reason", "missing_enter");
	sample_u(o, sc->ctr.missing_enter);
	lab(o, "reason", "mismatch");
	sample_u(o, sc->ctr.mismatch);
	lab(o, "reason", "map_full");
	sample_u(o, sc->ctr.map_full);
	lab(o, "reason", "rb_full");
	sample_u(o, sc->ctr.rb_full);
	lab(o, "reason", "slow_dropped");
	sample_u(o, sc->ctr.slow_dropped);
	lab(o, "reason", "compat");
	sample_u(o, sc->ctr.compat);
	lab(o, "reason", "drain_errors");
	sample_u(o, sc->ctr.drain_errors);
	if (!sc->have_prog)
		return;
	family(o, "vitals_syscall_prog_run_seconds", true, "seconds",
	    "Run time of the syscall tracer's BPF programs (BPF stats on).");
	sample_ratio(o, sc->prog_run_ns, NSEC_PER_SEC);
	family(o, "vitals_syscall_prog_runs", true, NULL,
	    "Runs of the syscall tracer's BPF programs (BPF stats on).");
	sample_u(o, sc->prog_run_cnt);
}

static void
page_health(struct om *o, const struct export_page *pg)
{
	const struct export_sums *u = &pg->st->sum;
	const struct window *w = pg->open;
	unsigned i;

	family(o, "vitals_collector_samples", true, NULL,
	    "Samples taken, and those whose system deltas were valid.");
	lab(o, "set", "taken");
	sample_u(o, u->samples + (w ? w->samples : 0));
	lab(o, "set", "valid");
	sample_u(o, u->samples_valid + (w ? w->samples_valid : 0));
	family(o, "vitals_collector_invalid", true, NULL,
	    "Whole samples and single deltas dropped, by reason.");
	for (i = 0; i < INV__MAX; i++) {
		lab(o, "what", "sample");
		lab(o, "reason", invalid_name(i));
		sample_u(o, u->inv_samples[i] + (w ? w->inv_samples[i] : 0));
	}
	for (i = 0; i < INV__MAX; i++) {
		lab(o, "what", "delta");
		lab(o, "reason", invalid_name(i));
		sample_u(o, u->inv_deltas[i] + (w ? w->inv_deltas[i] : 0));
	}
	family(o, "vitals_collector_late_ticks", true, NULL,
	    "Sampling ticks that fired over half an interval late.");
	sample_u(o, u->late_ticks + (w ? w->health.late_ticks : 0));
	family(o, "vitals_store_windows_dropped", true, NULL,
	    "Closed windows lost to a full write queue.");
	sample_u(o, pg->st->store_dropped);
	if (pg->stats) {
		const struct export_stats *x = pg->stats;

		family(o, "vitals_metrics_scrapes", true, NULL,
		    "Pages served by this endpoint.");
		sample_u(o, x->scrapes);
		family(o, "vitals_metrics_refused", true, NULL,
		    "Connections and requests of this endpoint refused, by "
		    "reason.");
		lab(o, "reason", "connections");
		sample_u(o, x->cap_refused);
		lab(o, "reason", "timeout");
		sample_u(o, x->timed_out);
		lab(o, "reason", "bad_request");
		sample_u(o, x->bad_requests);
		lab(o, "reason", "not_found");
		sample_u(o, x->not_found + x->bad_method);
	}
}

int
export_render(const struct export_page *pg, enum export_format fmt,
    struct vbuf *out)
{
	struct om o = { .out = out, .fmt = fmt };

	vbuf_reset(out);
	if (pg->sys) {
		unsigned hz = pg->st ? pg->st->hz : 100;

		page_cpu(&o, pg->sys, hz);
		page_psi(&o, pg->sys);
		page_mem(&o, pg->sys);
		page_vm(&o, pg->sys);
	}
	if (pg->st) {
		page_procs(&o, pg->st);
		page_cgroups(&o, pg->st);
		page_bpf(&o, &pg->st->sum);
		page_gpu(&o, pg->st);
		page_syscalls(&o, pg->st->sc);
		page_health(&o, pg);
	}
	if (fmt == EXPORT_OPENMETRICS)
		puts_(&o, "# EOF\n");
	return o.err;
}

/* OpenMetrics when the Accept header names it (Prometheus asks for it
 * first, with text/plain 0.0.4 as a lower-q fallback). */
enum export_format
export_accept(const char *accept)
{
	if (accept && strstr(accept, "application/openmetrics-text"))
		return EXPORT_OPENMETRICS;
	return EXPORT_PROMETHEUS;
}

const char *
export_content_type(enum export_format fmt)
{
	return fmt == EXPORT_OPENMETRICS ?
	    "application/openmetrics-text; version=1.0.0; charset=utf-8" :
	    "text/plain; version=0.0.4; charset=utf-8";
}
