/* SPDX-License-Identifier: Apache-2.0 */
/*
 * System-wide files: kept open and re-read from offset 0 each sample, so a
 * tick costs one pread per file rather than open+read+close. A file that is
 * absent (PSI off, no cpufreq driver) is "unknown", never zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "proc/proc.h"

/* Absent per-CPU files are looked for again at most this often. */
#define CPUFREQ_RETRY_SAMPLES 64

enum sys_file {
	SF_STAT,
	SF_LOADAVG,
	SF_PSI_CPU,
	SF_PSI_MEM,
	SF_PSI_IO,
	SF_VMSTAT,
	SF_MEMINFO,
	SF__MAX
};

static const char *const sf_path[SF__MAX] = {
	[SF_STAT] = "stat",
	[SF_LOADAVG] = "loadavg",
	[SF_PSI_CPU] = "pressure/cpu",
	[SF_PSI_MEM] = "pressure/memory",
	[SF_PSI_IO] = "pressure/io",
	[SF_VMSTAT] = "vmstat",
	[SF_MEMINFO] = "meminfo",
};

struct cpu_files {
	int cur_fd;	   /* scaling_cur_freq, −1 closed */
	uint32_t retry_at; /* sample number to look again */
	int64_t max_khz;   /* cpuinfo_max_freq, −1 unknown */
	int32_t capacity;  /* cpu_capacity, −1 unknown */
};

struct sysfiles {
	int procfd;
	int cpudirfd; /* <sys>/devices/system/cpu, −1 if absent */
	int fd[SF__MAX];
	struct cpu_files cpu[VITALS_CPU_MAX];
	uint32_t nsample;
	struct vbuf buf;
};

int
sysfiles_open(const char *proc_root, const char *sys_root,
    struct sysfiles **ret)
{
	struct sysfiles *sf;
	char path[PATH_MAX];
	unsigned i;

	if ((sf = calloc(1, sizeof(*sf))) == NULL)
		return -ENOMEM;
	for (i = 0; i < SF__MAX; i++)
		sf->fd[i] = -1;
	for (i = 0; i < VITALS_CPU_MAX; i++) {
		sf->cpu[i].cur_fd = -1;
		sf->cpu[i].max_khz = -1;
		sf->cpu[i].capacity = -1;
	}
	sf->procfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sf->procfd < 0) {
		int r = -errno;

		free(sf);
		return r;
	}
	snprintf(path, sizeof(path), "%s/devices/system/cpu", sys_root);
	sf->cpudirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*ret = sf;
	return 0;
}

struct sysfiles *
sysfiles_free(struct sysfiles *sf)
{
	unsigned i;

	if (sf == NULL)
		return NULL;
	for (i = 0; i < SF__MAX; i++)
		if (sf->fd[i] >= 0)
			close(sf->fd[i]);
	for (i = 0; i < VITALS_CPU_MAX; i++)
		if (sf->cpu[i].cur_fd >= 0)
			close(sf->cpu[i].cur_fd);
	if (sf->cpudirfd >= 0)
		close(sf->cpudirfd);
	close(sf->procfd);
	vbuf_release(&sf->buf);
	free(sf);
	return NULL;
}

/* Read one kept-open file into sf->buf; reopen it if it was closed. */
static int
sf_read(struct sysfiles *sf, enum sys_file f)
{
	int r;

	if (sf->fd[f] < 0) {
		sf->fd[f] = openat(sf->procfd, sf_path[f],
		    O_RDONLY | O_CLOEXEC);
		if (sf->fd[f] < 0)
			return -errno;
	}
	if ((r = read_fd_all(sf->fd[f], &sf->buf)) < 0) {
		/* A file that errors (PSI disabled: EOPNOTSUPP) is reopened
		 * next time rather than trusted. */
		close(sf->fd[f]);
		sf->fd[f] = -1;
		return r;
	}
	if (sf->buf.len == 0)
		return -ENODATA;
	return 0;
}

static int
cpu_read_u64(struct sysfiles *sf, unsigned cpu, const char *name, uint64_t *ret)
{
	char path[64];
	int r;

	if (sf->cpudirfd < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "cpu%u/%s", cpu, name);
	if ((r = read_at(sf->cpudirfd, path, &sf->buf)) < 0)
		return r;
	return parse_u64_text(sf->buf.p, sf->buf.len, ret);
}

/* Static per-CPU facts: hardware limits that do not change per tick. */
static void
cpu_read_static(struct sysfiles *sf, unsigned cpu)
{
	struct cpu_files *cf = &sf->cpu[cpu];
	uint64_t v;

	if (cpu_read_u64(sf, cpu, "cpufreq/cpuinfo_max_freq", &v) == 0 &&
	    v > 0 && v <= INT64_MAX)
		cf->max_khz = (int64_t)v;
	if (cpu_read_u64(sf, cpu, "cpu_capacity", &v) == 0 && v <= INT32_MAX)
		cf->capacity = (int32_t)v;
}

static int64_t
cpu_read_cur(struct sysfiles *sf, unsigned cpu)
{
	struct cpu_files *cf = &sf->cpu[cpu];
	char path[64];
	uint64_t v;

	if (cf->cur_fd < 0) {
		if (sf->cpudirfd < 0 || sf->nsample < cf->retry_at)
			return -1;
		/* Refresh the static facts whenever the CPU is (re)opened:
		 * hotplug may have brought a different policy. */
		cpu_read_static(sf, cpu);
		snprintf(path, sizeof(path), "cpu%u/cpufreq/scaling_cur_freq",
		    cpu);
		cf->cur_fd = openat(sf->cpudirfd, path, O_RDONLY | O_CLOEXEC);
		if (cf->cur_fd < 0) {
			cf->retry_at = sf->nsample + CPUFREQ_RETRY_SAMPLES;
			return -1;
		}
	}
	if (read_fd_all(cf->cur_fd, &sf->buf) < 0 ||
	    parse_u64_text(sf->buf.p, sf->buf.len, &v) < 0 || v > INT64_MAX) {
		/* Offline CPUs' files fail to read: reopen later. */
		close(cf->cur_fd);
		cf->cur_fd = -1;
		cf->retry_at = sf->nsample + CPUFREQ_RETRY_SAMPLES;
		return -1;
	}
	return (int64_t)v;
}

static uint64_t
elapsed(int64_t *t0)
{
	int64_t t = clock_ns(CLOCK_MONOTONIC);
	uint64_t d = t > *t0 ? (uint64_t)(t - *t0) : 0;

	*t0 = t;
	return d;
}

void
sysfiles_read(struct sysfiles *sf, struct sys_sample *ret)
{
	int64_t t = clock_ns(CLOCK_MONOTONIC);
	unsigned i, cpu;
	int r;

	memset(ret->coll_ns, 0, sizeof(ret->coll_ns));

	r = sf_read(sf, SF_STAT);
	ret->stat_err = r < 0 ?
	    r :
	    procstat_parse(sf->buf.p, sf->buf.len, &ret->stat);
	ret->coll_ns[COLL_STAT] = elapsed(&t);

	r = sf_read(sf, SF_LOADAVG);
	ret->loadavg_err = r < 0 ?
	    r :
	    loadavg_parse(sf->buf.p, sf->buf.len, &ret->loadavg);
	ret->coll_ns[COLL_LOADAVG] = elapsed(&t);

	for (i = 0; i < PSI__MAX; i++) {
		r = sf_read(sf, SF_PSI_CPU + i);
		ret->psi_err[i] = r < 0 ?
		    r :
		    psi_parse(sf->buf.p, sf->buf.len, &ret->psi[i]);
	}
	ret->coll_ns[COLL_PSI] = elapsed(&t);

	r = sf_read(sf, SF_VMSTAT);
	ret->vm_err = r < 0 ? r :
			      vmstat_parse(sf->buf.p, sf->buf.len, &ret->vm);
	ret->coll_ns[COLL_VMSTAT] = elapsed(&t);

	r = sf_read(sf, SF_MEMINFO);
	ret->mem_err = r < 0 ? r :
			       meminfo_parse(sf->buf.p, sf->buf.len, &ret->mem);
	ret->coll_ns[COLL_MEMINFO] = elapsed(&t);

	/* Frequencies only for CPUs /proc/stat calls online. */
	for (cpu = 0; cpu < VITALS_CPU_MAX; cpu++) {
		if (ret->stat_err == 0 && cpu < ret->stat.cpu_span &&
		    ret->stat.online[cpu])
			ret->cur_khz[cpu] = cpu_read_cur(sf, cpu);
		else
			ret->cur_khz[cpu] = -1;
	}
	ret->coll_ns[COLL_CPUFREQ] = elapsed(&t);
	sf->nsample++;
}

int64_t
sysfiles_max_khz(const struct sysfiles *sf, unsigned cpu)
{
	return cpu < VITALS_CPU_MAX ? sf->cpu[cpu].max_khz : -1;
}

int32_t
sysfiles_capacity(const struct sysfiles *sf, unsigned cpu)
{
	return cpu < VITALS_CPU_MAX ? sf->cpu[cpu].capacity : -1;
}
