/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v2 groups on this kernel (root: a group is made for the test in
 * the real hierarchy, /sys/fs/cgroup or a hybrid host's unified mount):
 * a CPU burner moved into it, and the group's Δusage_usec over a walk
 * agrees with the burner's own CPU time from /proc/<pid>/stat; the daemon
 * shows the group through `vitals cgroups`.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "harness.h"
#include "testutil.h"
#include "vitalsd.h"

static char hier[256], grp[512], name[64];

/* the v2 hierarchy, as cgroup.c finds it under /sys */
static bool
find_hier(void)
{
	static const char *const cand[] = { "/sys/fs/cgroup",
		"/sys/fs/cgroup/unified" };
	char p[300];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/cgroup.controllers", cand[i]);
		if (access(p, F_OK) == 0) {
			snprintf(hier, sizeof(hier), "%s", cand[i]);
			return true;
		}
	}
	return false;
}

static void
setup(void)
{
	ck_assert_msg(find_hier(), "no cgroup v2 hierarchy under /sys");
	snprintf(name, sizeof(name), "vitals-test-%d", (int)getpid());
	snprintf(grp, sizeof(grp), "%s/%s", hier, name);
	ck_assert_int_eq(mkdir(grp, 0755), 0);
}

static void
teardown(void)
{
	rmdir(grp);
}

/* A burner in the test group. */
static pid_t
burner_in_group(void)
{
	char p[600], v[32];
	pid_t pid = tu_burner_start();
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.procs", grp);
	ck_assert_int_ge(fd = open(p, O_WRONLY | O_CLOEXEC), 0);
	snprintf(v, sizeof(v), "%d", (int)pid);
	ck_assert_int_eq(write(fd, v, strlen(v)), (ssize_t)strlen(v));
	close(fd);
	return pid;
}

/* utime + stime of pid, in µs */
static uint64_t
cpu_us(pid_t pid)
{
	char p[64], buf[1024], *s;
	unsigned long long ut, st;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_ptr_nonnull(s = strrchr(buf, ')'));
	ck_assert_int_eq(sscanf(s + 2,
			     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			     "%llu %llu",
			     &ut, &st),
	    2);
	return (ut + st) * 1000000ULL /
	    (unsigned long long)sysconf(_SC_CLK_TCK);
}

START_TEST(test_burner_agrees)
{
	struct cgroup_config c = { .on = true, .depth = 1, .max = 16 };
	struct cgroup_opts o = { .sys_root = "/sys", .cfg = &c };
	const struct window_cgroup_grp *g = NULL;
	struct window *w1, *w2;
	struct cgroup *cg;
	uint64_t a, b;
	pid_t pid;
	size_t i;
	double diff;

	pid = burner_in_group();
	ck_assert_int_eq(cgroup_new(&o, &cg), 0);
	w1 = window_new(1, 0);
	w2 = window_new(2, 0);
	tu_sleep_ms(200);
	a = cpu_us(pid);
	ck_assert_int_eq(cgroup_window(cg, w1), 0);
	tu_sleep_ms(1500);
	b = cpu_us(pid);
	ck_assert_int_eq(cgroup_window(cg, w2), 0);
	ck_assert_uint_eq(window_cgroup(w2)->state, CG_STATE_OK);
	ck_assert_str_eq(window_cgroup(w2)->root, hier);
	for (i = 0; i < window_cgroup(w2)->n; i++)
		if (!strcmp(window_cgroup(w2)->g[i].path, name))
			g = &window_cgroup(w2)->g[i];
	ck_assert_msg(g != NULL, "group %s not walked", name);
	ck_assert_uint_eq(g->deltas, 1);
	ck_assert(g->have & CG_HAVE_CPU);
	/* the kernel scales user and system to usage, a µs off at most */
	ck_assert_uint_le(g->d_user_us + g->d_system_us, g->d_usage_us + 2);
	ck_assert_uint_ge(g->d_user_us + g->d_system_us + 2, g->d_usage_us);
	/* ticks are 10 ms and the two reads are not the same instant:
	 * 5 % and 30 ms */
	diff = (double)g->d_usage_us - (double)(b - a);
	if (diff < 0)
		diff = -diff;
	ck_assert_msg(b - a > 300000, "the burner ran only %llu us",
	    (unsigned long long)(b - a));
	ck_assert_msg(diff <= 0.05 * (double)(b - a) + 30000,
	    "cgroup %llu us, the burner's own %llu us",
	    (unsigned long long)g->d_usage_us, (unsigned long long)(b - a));
	tu_burner_stop(pid);
	window_free(w1);
	window_free(w2);
	cgroup_free(cg);
}
END_TEST

/* The daemon walks the subtree it is given; the client prints it. */
START_TEST(test_daemon_shows_group)
{
	static const char *const text[] = { "cgroups", NULL };
	static const char *const args[] = { "--interval-ms", "200",
		"--window-s", "1", NULL };
	static const char *const health[] = { "--json", "health", NULL };
	char conf[512], want[128];
	const char *line;
	double pct = 0;
	struct run r;
	struct td d;
	pid_t pid;
	int i;

	pid = burner_in_group();
	snprintf(conf, sizeof(conf), "cgroup_root = %s\ncgroup_depth = 1\n",
	    hier);
	td_start(&d, "cgroup", conf, args);
	td_wait(&d, 10000, health, td_has_window);
	snprintf(want, sizeof(want), " /%s\n", name);
	/* two walks make a delta: wait for a window that has one */
	for (i = 0; i < 50; i++) {
		r = td_vitals(&d, -1, text);
		ck_assert_msg(r.code == 0, "vitals cgroups: %d %s", r.code,
		    r.err);
		if ((line = strstr(r.out, want)) != NULL) {
			/* the start of that line: its CPU% column */
			while (line > r.out && line[-1] != '\n')
				line--;
			if (sscanf(line, " %lf%%", &pct) == 1 && pct > 10.0)
				break;
		}
		run_free(&r);
		tu_sleep_ms(200);
	}
	ck_assert_msg(i < 50, "no group %s with CPU in `vitals cgroups`", name);
	ck_assert_ptr_nonnull(strstr(r.out, "cgroups: ok at "));
	ck_assert_ptr_nonnull(strstr(r.out, "GROUP\n"));
	run_free(&r);
	/* the burner carries its group: `vitals proc` says where it is */
	{
		char pids[16], cgline[128];
		const char *const proc[] = { "proc", pids, "--since", "1m",
			NULL };

		snprintf(pids, sizeof(pids), "%d", (int)pid);
		snprintf(cgline, sizeof(cgline), "  cgroup /%s (now)\n", name);
		r = td_vitals(&d, -1, proc);
		ck_assert_msg(r.code == 0, "vitals proc: %d %s", r.code, r.err);
		ck_assert_msg(strstr(r.out, cgline) != NULL, "%s", r.out);
		run_free(&r);
	}
	td_stop(&d);
	tu_burner_stop(pid);
}
END_TEST

int
main(void)
{
	Suite *s;
	TCase *tc;

	if (!tu_need_root("cgroups are made in the real hierarchy"))
		return 77;
	s = suite_create("cgroup_kernel");
	tc = tcase_create("kernel");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_burner_agrees);
	tcase_add_test(tc, test_daemon_shows_group);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
