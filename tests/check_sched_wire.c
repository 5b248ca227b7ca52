/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF sched rows end to end, on this kernel: a child burns CPU and
 * exits inside a window; the daemon's BPF rows hold its on-CPU time
 * (within 5 % + 20 ms of its own utime + stime), flagged exited; `vitals
 * top --source bpf` lists it; `vitals health` shows every kernel loss
 * counter. Root: the daemon loads the programs (a pin directory of its
 * own).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

static char pins[128];

/* A child that burns ms of CPU, says its utime + stime (ticks), ends. */
static pid_t
burner(unsigned ms, uint64_t *ret_ticks)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tms t;
		uint64_t ticks;

		close(p[0]);
		tu_burn_ms(ms);
		times(&t);
		ticks = (uint64_t)t.tms_utime + (uint64_t)t.tms_stime;
		if (write(p[1], &ticks, sizeof(ticks)) != sizeof(ticks))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], ret_ticks, sizeof(*ret_ticks)),
	    sizeof(*ret_ticks));
	close(p[0]);
	return pid;
}

START_TEST(test_exited_child_on_the_wire)
{
	static const char *const args[] = { "--interval-ms", "200",
		"--window-s", "1", NULL };
	static const char *const health[] = { "--json", "health", NULL };
	static const char *const health_text[] = { "health", NULL };
	static const char *const top[] = { "--json", "top", "--source", "bpf",
		"--since", "1m", "-n", "100000", NULL };
	static const char *const top_text[] = { "top", "--source", "bpf",
		"--since", "1m", "-n", "100000", NULL };
	static const char *const top_procfs[] = { "--json", "top", "--since",
		"1m", "-n", "100000", NULL };
	static const char *const top_rq[] = { "--json", "top", "--source",
		"bpf", "--by", "rq-p99", "--since", "1m", NULL };
	long hz = sysconf(_SC_CLK_TCK);
	const struct jm *row = NULL, *b;
	uint64_t ticks = 0;
	double bpf_ms = 0, proc_ms;
	char conf[256], pidtxt[16];
	struct jm *j = NULL;
	struct run r;
	struct td d;
	int status, i;
	pid_t pid;

	snprintf(conf, sizeof(conf), "bpffs = %s\n", pins);
	td_start(&d, "schedwire", conf, args);
	td_wait(&d, 15000, health, td_has_window);

	pid = burner(400, &ticks);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	proc_ms = (double)ticks * 1000.0 / (double)hz;
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)pid);

	/* the window it ended in closes within a second or two */
	for (i = 0; i < 50 && row == NULL; i++) {
		tu_sleep_ms(200);
		r = td_vitals(&d, -1, top);
		ck_assert_msg(r.code == 0, "vitals top: %d %s", r.code, r.err);
		jm_free(j);
		ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
		run_free(&r);
		if ((b = jm_path(j, "top.sched")) != NULL)
			row = jm_find_id(b, pid);
		if (row && !jm_get(row, "exited"))
			row = NULL; /* its last window not in yet */
	}
	ck_assert_msg(row != NULL, "pid %d not in the BPF top", (int)pid);
	ck_assert(jm_get(row, "exited")->b);
	bpf_ms = jm_get(row, "oncpu_ns")->num / 1e6;
	fprintf(stderr, "exited child: bpf %.1f ms, procfs %.1f ms\n", bpf_ms,
	    proc_ms);
	ck_assert_msg(fabs(bpf_ms - proc_ms) <= 0.05 * proc_ms + 20.0,
	    "bpf %.1f ms vs procfs %.1f ms", bpf_ms, proc_ms);
	ck_assert_double_ge(proc_ms, 300.0);
	jm_free(j);
	j = NULL;

	/* the text view lists it too */
	r = td_vitals(&d, -1, top_text);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, "(BPF sched_switch accounting") != NULL,
	    "%s", r.out);
	ck_assert_msg(strstr(r.out, pidtxt) != NULL, "%s", r.out);
	run_free(&r);
	/* a procfs top asked just before is not the answer to a BPF one:
	 * the daemon's shared answers tell the two apart */
	r = td_vitals(&d, -1, top_procfs);
	ck_assert_int_eq(r.code, 0);
	run_free(&r);
	r = td_vitals(&d, -1, top);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_msg(jm_path(j, "top.sched") != NULL, "%s", r.out);
	jm_free(j);
	j = NULL;
	run_free(&r);
	/* another metric answers */
	r = td_vitals(&d, -1, top_rq);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\"sched_metric\""));
	run_free(&r);

	/* every loss counter in health, text and JSON */
	r = td_vitals(&d, -1, health);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_ptr_nonnull(b = jm_path(j, "health.last.health.bpf"));
	ck_assert_ptr_nonnull(jm_get(b, "rq_samples"));
	ck_assert_ptr_nonnull(jm_get(b, "procs_exited"));
	ck_assert_ptr_nonnull(jm_get(b, "thr_exited"));
	ck_assert_ptr_nonnull(jm_get(b, "full_proc"));
	ck_assert_ptr_nonnull(jm_get(b, "oncpu_total_ns"));
	ck_assert_ptr_nonnull(jm_get(b, "lost_ns"));
	ck_assert_double_gt(jm_get(b, "oncpu_total_ns")->num, 0);
	jm_free(j);
	run_free(&r);
	r = td_vitals(&d, -1, health_text);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, "  bpf kernel: accounted ") != NULL, "%s",
	    r.out);
	run_free(&r);
	td_stop(&d);
}
END_TEST

int
main(void)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int nf;

	if (!tu_need_root("the daemon loads BPF programs"))
		return 77;
	snprintf(pins, sizeof(pins), "/sys/fs/bpf/vitals-wire-%d",
	    (int)getpid());
	s = suite_create("sched_wire");
	tc = tcase_create("kernel");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_exited_child_on_the_wire);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* the daemon's other programs pin there too: empty it, then go */
	(void)bpf_sched_unpin(pins);
	{
		DIR *dir = opendir(pins);
		struct dirent *e;

		while (dir && (e = readdir(dir)) != NULL)
			if (e->d_name[0] != '.')
				(void)unlinkat(dirfd(dir), e->d_name, 0);
		if (dir)
			closedir(dir);
		(void)rmdir(pins);
	}
	return nf == 0 ? 0 : 1;
}
