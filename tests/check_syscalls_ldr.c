/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall latency programs in Android's bpfloader format
 * (build/bpf/vitalsd_sc.o from bpf/aosp/vitalsd_sc.c), root: the test
 * loader (tests/bpfldr) accepts the object and pins its maps and three
 * programs under this test's own bpffs directory; attached by hand as
 * vitalsd would (perf event of the tracepoint, the program set on it), a
 * child's 20 nanosleeps of 2 ms are its (tgid, nr) entry's running totals:
 * count exact, Σ within 10 % of the child's own, on CLOCK_MONOTONIC.
 */
#ifndef HAVE_BPF_CORE
int
main(void)
{
	return 77; /* a build without BPF */
}
#else
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "syscalls/sc_collect.h"
#include "syscalls/syscalls.bpf.h"
#include "testutil.h"

static const char *
build_path(const char *rel)
{
	static char p[2][PATH_MAX + 256];
	static int slot;
	const char *b = getenv("VITALS_BUILDDIR");
	char *r = p[slot++ % 2];

	snprintf(r, PATH_MAX + 256, "%.*s/%.200s", PATH_MAX - 1, b ? b : "..",
	    rel);
	return r;
}

static int
tp_id(const char *ev)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
		"/sys/kernel/debug/tracing" };
	char path[256];
	FILE *f;
	int id, i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], ev);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
		return id;
	}
	return -1;
}

static int
attach(int prog, const char *ev)
{
	struct perf_event_attr pa;
	int pfd, id = tp_id(ev);

	ck_assert_msg(id > 0, "no tracepoint %s", ev);
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = (uint64_t)id;
	pfd = (int)syscall(SYS_perf_event_open, &pa, -1, 0, -1,
	    PERF_FLAG_FD_CLOEXEC);
	ck_assert_msg(pfd >= 0, "perf_event_open %s: %s", ev, strerror(errno));
	ck_assert_int_eq(ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog), 0);
	ck_assert_int_eq(ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0), 0);
	return pfd;
}

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct sc_ldr_key {
	int32_t tgid;
	uint32_t nr;
};

START_TEST(test_ldr)
{
	static const char *const maps[] = { "sc_pend", "sc_tot", "sc_stats" };
	static const char *const progs[] = {
		"tracepoint_raw_syscalls_sys_enter",
		"tracepoint_raw_syscalls_sys_exit",
		"tracepoint_sched_sched_process_exit",
	};
	char bpffs[128], path[PATH_MAX], cmd[PATH_MAX * 2];
	int pfd[3], prog[3], tot, st, i, pp[2];
	struct sc_ldr_key key;
	struct sc_val v;
	int64_t own = 0, t0;
	pid_t pid;

	snprintf(bpffs, sizeof(bpffs), "/sys/fs/bpf/vitals-scldr-%d",
	    (int)getpid());
	ck_assert_int_eq(mkdir(bpffs, 0755), 0);
	snprintf(cmd, sizeof(cmd), "%s -r %s -l system %s",
	    build_path("tests/bpfldr"), bpffs, build_path("bpf/vitalsd_sc.o"));
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/map_vitalsd_sc_%s", bpffs,
		    maps[i]);
		ck_assert_msg(access(path, F_OK) == 0, "no pin %s", path);
	}
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/prog_vitalsd_sc_%s", bpffs,
		    progs[i]);
		prog[i] = bpf_obj_get(path);
		ck_assert_msg(prog[i] >= 0, "%s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/map_vitalsd_sc_sc_tot", bpffs);
	tot = bpf_obj_get(path);
	ck_assert_int_ge(tot, 0);
	pfd[0] = attach(prog[0], "raw_syscalls/sys_enter");
	pfd[1] = attach(prog[1], "raw_syscalls/sys_exit");
	pfd[2] = attach(prog[2], "sched/sched_process_exit");

	ck_assert_int_eq(pipe(pp), 0);
	if ((pid = fork()) == 0) {
		struct timespec ts = { 0, 2000000 };

		for (i = 0; i < 20; i++) {
			t0 = mono_ns();
			syscall(SYS_nanosleep, &ts, NULL);
			own += mono_ns() - t0;
		}
		_exit(write(pp[1], &own, sizeof(own)) == sizeof(own) ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_eq(read(pp[0], &own, sizeof(own)), sizeof(own));
	for (i = 0; i < 3; i++)
		close(pfd[i]);
	key.tgid = pid;
	key.nr = SYS_nanosleep;
	ck_assert_int_eq(bpf_map_lookup_elem(tot, &key, &v), 0);
	fprintf(stderr,
	    "bpfloader object: %llu calls, Σ %.3f ms (child %.3f ms), "
	    "max %.3f ms, comm %.16s\n",
	    (unsigned long long)v.count, (double)v.sum_ns / 1e6,
	    (double)own / 1e6, (double)v.max_ns / 1e6, v.comm);
	ck_assert_uint_eq(v.count, 20);
	ck_assert_msg((double)v.sum_ns <= 1.1 * (double)own &&
		(double)v.sum_ns >= 0.9 * (double)own,
	    "Σ %llu, own %lld", (unsigned long long)v.sum_ns, (long long)own);
	ck_assert(v.max_ns >= 2000000);
	for (i = 0; i < 3; i++)
		close(prog[i]);
	close(tot);
	close(pp[0]);
	close(pp[1]);
	tu_rmtree(bpffs);
}
END_TEST

/* The daemon's reader of those pins (daemon/syscalls/sc_ldr.c): a drain
 * is the difference of running totals, only the configured nrs */
START_TEST(test_collector)
{
	char bpffs[128], cmd[PATH_MAX * 2];
	struct sc_config c;
	struct sc_opts o = { 0 };
	struct sc_collector *sc;
	struct window_syscalls *p;
	const struct sc_row *r = NULL;
	int pp[2], go[2], st, i, k;
	int64_t own = 0, t0;
	size_t j;
	pid_t pid;

	snprintf(bpffs, sizeof(bpffs), "/sys/fs/bpf/vitals-scldr2-%d",
	    (int)getpid());
	ck_assert_int_eq(mkdir(bpffs, 0755), 0);
	snprintf(cmd, sizeof(cmd), "%s -r %s -l system %s",
	    build_path("tests/bpfldr"), bpffs, build_path("bpf/vitalsd_sc.o"));
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	sc_config_init(&c);
	c.on = true;
	ck_assert_int_eq(sc_config_set(&c, "syscalls", "nanosleep"), 0);
	o.cfg = &c;
	o.bpffs = bpffs;
	/* ids from an instance of the test's own (made and removed) */
	o.instance = "vitals-scldr-test";
	k = sc_new(&o, &sc);
	ck_assert_msg(k == 0, "sc_new on pins: %s", strerror(-k));
	/* Health.syscalls' figures: the three perf events, one syscall */
	ck_assert_uint_eq(sc_attached(sc), 3);
	ck_assert_uint_eq(sc_traced(sc), 1);
	ck_assert_int_eq(pipe(pp), 0);
	ck_assert_int_eq(pipe(go), 0);
	if ((pid = fork()) == 0) {
		struct timespec ts = { 0, 2000000 };
		char b;

		for (i = 0; i < 20; i++) {
			t0 = mono_ns();
			syscall(SYS_nanosleep, &ts, NULL);
			own += mono_ns() - t0;
		}
		if (write(pp[1], &own, sizeof(own)) != sizeof(own))
			_exit(1);
		/* alive until the drain read its start time */
		_exit(read(go[0], &b, 1) == 1 ? 0 : 2);
	}
	ck_assert_int_eq(read(pp[0], &own, sizeof(own)), sizeof(own));
	p = sc_drain(sc);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	for (j = 0; j < p->nrows; j++) {
		ck_assert_uint_eq(p->rows[j].nr, SYS_nanosleep);
		if (p->rows[j].tgid == pid)
			r = &p->rows[j];
	}
	ck_assert_ptr_nonnull(r);
	fprintf(stderr, "pins reader: %llu calls, Σ %.3f ms (child %.3f ms)\n",
	    (unsigned long long)r->count, (double)r->sum_ns / 1e6,
	    (double)own / 1e6);
	ck_assert_uint_eq(r->count, 20);
	ck_assert_msg((double)r->sum_ns <= 1.1 * (double)own &&
		(double)r->sum_ns >= 0.9 * (double)own,
	    "Σ %llu, own %lld", (unsigned long long)r->sum_ns, (long long)own);
	ck_assert_uint_ne(r->start_ns, 0);
	sc_collect_part_free(p);
	/* nothing new from the child: no row of it in the next drain */
	p = sc_drain(sc);
	ck_assert_ptr_nonnull(p);
	for (j = 0; j < p->nrows; j++)
		ck_assert_int_ne(p->rows[j].tgid, pid);
	sc_collect_part_free(p);
	sc_free(sc);
	close(pp[0]);
	close(pp[1]);
	close(go[0]);
	close(go[1]);
	tu_rmtree(bpffs);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("syscalls_ldr");
	TCase *tc = tcase_create("ldr");
	SRunner *sr;
	int nf;

	if (geteuid() != 0) {
		fprintf(stderr, "needs root\n");
		return 77;
	}
	tcase_add_test(tc, test_ldr);
	tcase_add_test(tc, test_collector);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
#endif /* HAVE_BPF_CORE */
