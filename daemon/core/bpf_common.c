/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every BPF feature shares: pin names in Android's bpfloader convention,
 * the bpffs check, libbpf's log routed into ours, and the kernel's run-time
 * statistics switch, whether the kernel keeps sched_info (the run-queue
 * source's check, and the tests'). Built with or without BPF support: without it the
 * functions that need libbpf return -EOPNOTSUPP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "core/bpf_common.h"
#include "core/log.h"

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/*
 * <bpffs>/<kind>_vitals_<name>, '/' in name replaced by '_' as bpfloader
 * does for section names ("tp_btf/sched_switch" → "tp_btf_sched_switch").
 */
int
bpf_pin_path(const char *bpffs, const char *kind, const char *name, char *ret,
    size_t retsz)
{
	size_t i, n;
	int len;

	len = snprintf(ret, retsz, "%s/%s_vitals_", bpffs, kind);
	if (len < 0 || (size_t)len >= retsz)
		return -ENAMETOOLONG;
	n = strlen(name);
	if ((size_t)len + n >= retsz)
		return -ENAMETOOLONG;
	for (i = 0; i < n; i++)
		ret[len + i] = name[i] == '/' ? '_' : name[i];
	ret[len + n] = '\0';
	return 0;
}

/* 0 when dir is on a bpffs; -ENOENT, -ENOTDIR or -EMEDIUMTYPE otherwise. */
int
bpf_check_bpffs(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) < 0)
		return -errno;
	if ((unsigned long)sf.f_type != (unsigned long)BPF_FS_MAGIC)
		return -EMEDIUMTYPE;
	return 0;
}

#ifdef HAVE_BPF
static int
libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	size_t n;

	/* libbpf's debug chatter never; its notes at -v, warnings always. */
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	if (level == LIBBPF_WARN)
		log_warnx("libbpf: %s", msg);
	else
		log_debug("libbpf: %s", msg);
	return 0;
}

void
bpf_common_init(void)
{
	libbpf_set_print(libbpf_log);
}

/* The kernel keeps run_cnt/run_time_ns per program while this fd is open. */
int
bpf_stats_enable(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}
#else
void
bpf_common_init(void)
{
}

int
bpf_stats_enable(void)
{
	return -EOPNOTSUPP;
}
#endif

/*
 * The kernel keeps sched_info (CONFIG_SCHED_INFO, and on kernels before
 * 5.14 sched_info_on(): delay accounting not off at boot): this process's
 * /proc/self/schedstat exists and counts its own runs (the third field;
 * a kernel that keeps none writes "0 0 0" there, or no file at all).
 */
bool
bpf_sched_info_kept(void)
{
	unsigned long long ns, delay, count = 0;
	FILE *f = fopen("/proc/self/schedstat", "re");
	bool ok;

	if (f == NULL)
		return false;
	ok = fscanf(f, "%llu %llu %llu", &ns, &delay, &count) == 3 && count > 0;
	fclose(f);
	return ok;
}
