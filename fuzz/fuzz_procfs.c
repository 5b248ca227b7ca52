/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for every procfs parser: the system files
 * (/proc/stat, loadavg, PSI, vmstat, meminfo), the per-task files (stat,
 * status, cmdline), the task iterator's binary records and a cgroup v2
 * group's files (cpu.stat, memory.stat, memory.events, and the uid_/pid_
 * directory names of Android's hierarchy). The first byte picks the
 * parser (0xf0 and above: the cgroup files); the rest is the file's bytes. A process chooses its own
 * comm and cmdline, so these parsers read hostile text on every sample.
 * Each result is checked for the bounds the collector relies on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
system_file(unsigned which, const char *buf, size_t len)
{
	struct procstat ps;
	struct loadavg la;
	struct psi psi;
	struct vmstat vm;
	struct meminfo mi;

	switch (which) {
	case 0:
		if (procstat_parse(buf, len, &ps) == 0 &&
		    (ps.cpu_span > VITALS_CPU_MAX ||
			ps.ncpu_online > VITALS_CPU_MAX))
			abort();
		break;
	case 1:
		(void)loadavg_parse(buf, len, &la);
		break;
	case 2:
		(void)psi_parse(buf, len, &psi);
		break;
	case 3:
		(void)vmstat_parse(buf, len, &vm);
		break;
	default:
		(void)meminfo_parse(buf, len, &mi);
		break;
	}
}

static void
task_file(unsigned which, const char *buf, size_t len)
{
	struct pid_stat st;
	struct pid_status ss;
	char name[VITALS_NAME_LEN];
	uint64_t v;

	switch (which) {
	case 0:
		if (pidstat_parse(buf, len, &st) == 0 &&
		    strnlen(st.comm, sizeof(st.comm)) >= sizeof(st.comm))
			abort();
		break;
	case 1:
		(void)pidstatus_parse(buf, len, &ss);
		break;
	case 2:
		if (cmdline_name(buf, len, name, sizeof(name)) >= 0 &&
		    strnlen(name, sizeof(name)) >= sizeof(name))
			abort();
		break;
	default:
		(void)parse_u64_text(buf, len, &v);
		break;
	}
}

/* A group's files: any process that may write in a delegated subtree
 * names its groups, and the files follow the kernel's layout only. */
static void
cgroup_file(unsigned which, const char *buf, size_t len)
{
	struct cg_read r;
	char name[256];
	int64_t id;

	memset(&r, 0, sizeof(r));
	switch (which) {
	case 0:
		(void)cg_parse_cpu_stat(buf, len, &r);
		break;
	case 1:
		(void)cg_parse_memory_stat(buf, len, &r);
		break;
	case 2:
		(void)cg_parse_memory_events(buf, len, &r);
		break;
	default:
		/* a directory entry's name: NUL-terminated, at most 255 */
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, buf, len);
		name[len] = '\0';
		id = cg_name_id(name, which & 1 ? "uid_" : "pid_");
		if (id < -1 || id > INT32_MAX)
			abort();
		break;
	}
}

/* DMA-BUF's files (dmabuf_parse.c): fdinfo, a link's text, sysfs lines */
static void
dmabuf_file(unsigned which, const char *buf, size_t len)
{
	struct dmabuf_fdinfo fi;
	char name[DMABUF_NAME_LEN];
	uint64_t v;

	switch (which & 3) {
	case 0:
	case 1:
		if (dmabuf_parse_fdinfo(buf, len, &fi) == 0 &&
		    (!(fi.have & DMABUF_FDI_SIZE) ||
			memchr(fi.exp_name, '\0', sizeof(fi.exp_name)) == NULL))
			abort();
		break;
	case 2:
		(void)dmabuf_link_is(buf, len);
		(void)dmabuf_parse_u64(buf, len, &v);
		break;
	default:
		if (dmabuf_parse_name(buf, len, name, sizeof(name)) == 0 &&
		    memchr(name, '\0', sizeof(name)) == NULL)
			abort();
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct taskiter_snap snap = { 0 };
	const char *buf = (const char *)data + 1;
	void *copy;
	size_t len, i;

	if (size < 1)
		return 0;
	len = size - 1;
	if (data[0] >= 0xf0) {
		cgroup_file(data[0] & 0xf, buf, len);
		return 0;
	}
	if (data[0] >= 0xec) {
		dmabuf_file(data[0] & 3, buf, len);
		return 0;
	}
	switch (data[0] % 10) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4:
		system_file(data[0] % 10, buf, len);
		break;
	case 5:
	case 6:
	case 7:
	case 8:
		task_file(data[0] % 10 - 5, buf, len);
		break;
	default:
		/* the daemon's read buffer is malloc'd: aligned */
		if ((copy = malloc(len ? len : 1)) == NULL)
			return 0;
		memcpy(copy, buf, len);
		if (taskiter_parse(copy, len, &snap) == 0) {
			for (i = 0; i < snap.nprocs; i++)
				if (snap.procs[i].first +
					snap.procs[i].nthreads >
				    snap.nthreads)
					abort();
		}
		taskiter_snap_release(&snap);
		free(copy);
		break;
	}
	return 0;
}
