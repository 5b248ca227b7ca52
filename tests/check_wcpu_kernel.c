/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity-weighted CPU on this kernel, with BPF (root): a burning child's
 * weighted figure, from the kernel's own weighting of its slices, agrees
 * with its plain CPU time where every CPU has capacity 1024 and no
 * cpufreq (this VM) — within 1 % in `vitals --json top --weighted` and in
 * every window of `vitals --json proc`; the windows count the nanoseconds
 * weighed without a frequency rather than hide them.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "taskstat.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

static struct jm *
vitals_json(const struct td *d, const char *const *args)
{
	const char *argv[16] = { "--json" };
	struct run r;
	struct jm *j;
	int i;

	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	r = td_vitals(d, -1, argv);
	ck_assert_msg(r.code == 0, "vitals --json %s: exit %d: %s", args[0],
	    r.code, r.err);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	run_free(&r);
	return j;
}

static long long
ll(const struct jm *o, const char *k)
{
	const struct jm *v = jm_get(o, k);

	/* protobuf's JSON leaves zeros out */
	return v ? v->ll : 0;
}

static double
num(const struct jm *o, const char *k)
{
	const struct jm *v = jm_get(o, k);

	return v ? v->num : 0;
}

/* 1 % of the plain ticks, and the figure says where it came from */
static void
assert_agrees(const struct jm *t, const char *what)
{
	long long ticks = ll(t, "d_utime") + ll(t, "d_stime");
	const struct jm *src = jm_get(t, "wtd_source");
	double wtd = num(t, "wtd_ticks");

	ck_assert_msg(src && src->t == JM_STR && !strcmp(src->str, "bpf"),
	    "%s: source %s", what, src && src->str ? src->str : "none");
	fprintf(stderr, "%s: plain %lld ticks, weighted %.3f (%s)\n", what,
	    ticks, wtd, src->str);
	ck_assert_msg(fabs(wtd - (double)ticks) <= 0.01 * (double)ticks,
	    "%s: weighted %.3f ticks, plain %lld", what, wtd, ticks);
}

START_TEST(test_burner_weighted_equals_plain)
{
	static const char *const args[] = { "--interval-ms", "200",
		"--window-s", "1", NULL };
	static const char *const health[] = { "--json", "health", NULL };
	static const char *const top[] = { "top", "--weighted", "--since", "1m",
		"-n", "500", NULL };
	static const char *const summary[] = { "summary", NULL };
	const char *proc[] = { "proc", NULL, "--since", "1m", NULL };
	const struct jm *t = NULL, *h, *wc;
	struct jm *j = NULL;
	char pids[16];
	long long ticks = 0;
	unsigned i, k, n = 0;
	struct td d;
	pid_t pid;

	td_start(&d, "wcpu", NULL, args);
	td_wait(&d, 10000, health, td_has_window);
	ck_assert_msg(td_file_has(d.log, "bpf: loaded") ||
		td_file_has(d.log, "bpf: reused"),
	    "BPF accounting is not on");
	/* switching out every 50 ms: each 1 s window holds its slices */
	pid = tu_burner_start_switching(50);
	snprintf(pids, sizeof(pids), "%d", (int)pid);
	proc[1] = pids;
	/* about 3 s of burning over 1 s windows */
	for (i = 0; i < 60 && ticks < 250; i++) {
		tu_sleep_ms(250);
		jm_free(j);
		j = vitals_json(&d, top);
		ck_assert_str_eq(jm_path(j, "top.metric")->str,
		    "METRIC_WEIGHTED");
		t = jm_find_id(jm_path(j, "top.tasks"), pid);
		ticks = t ? ll(t, "d_utime") + ll(t, "d_stime") : 0;
	}
	ck_assert_msg(t != NULL && ticks >= 250,
	    "the burner has %lld ticks in top --weighted", ticks);
	assert_agrees(t, "top --weighted");
	/* ranked by weighted CPU: no task after another has more of it
	 * (whether the burner leads depends on what else runs: meson runs
	 * suites side by side) */
	{
		const struct jm *ts = jm_path(j, "top.tasks");

		for (k = 1; k < ts->n; k++)
			ck_assert_msg(num(&ts->v[k - 1], "wtd_ticks") >=
				num(&ts->v[k], "wtd_ticks"),
			    "top --weighted: row %u above row %u", k - 1, k);
	}
	jm_free(j);

	/* the text: ordered by it, its column and source */
	{
		struct run r = td_vitals(&d, -1, top);

		ck_assert_msg(r.code == 0, "vitals top --weighted: %d %s",
		    r.code, r.err);
		fprintf(stderr, "%s", r.out);
		ck_assert_ptr_nonnull(
		    strstr(r.out, "by capacity-weighted cpu"));
		ck_assert_ptr_nonnull(strstr(r.out, "wcore source"));
		/* the row wraps its name onto a second line (80 columns) */
		ck_assert_ptr_nonnull(strstr(r.out, "% bpf"));
		run_free(&r);
	}
	/* window by window */
	j = vitals_json(&d, proc);
	h = jm_path(j, "process.history");
	ck_assert_ptr_nonnull(h);
	for (k = 0; k < h->n; k++) {
		const struct jm *task = jm_get(&h->v[k], "task");
		char what[32];

		if (ll(task, "d_utime") + ll(task, "d_stime") < 20)
			continue; /* a partial window at either end */
		snprintf(what, sizeof(what), "proc window %u", k);
		assert_agrees(task, what);
		n++;
	}
	ck_assert_msg(n >= 2, "only %u busy windows in proc", n);
	jm_free(j);
	/* every stored wcpu part read back: its rows named among the BPF
	 * rows of its window (version 2) decoded against them, none refused
	 * (a JSON field of 0 is left out) */
	j = vitals_json(&d, health);
	ck_assert_ptr_nonnull(h = jm_path(j, "health.store"));
	ck_assert_int_eq(ll(h, "blob_errors"), 0);
	jm_free(j);

	/* the last window's head: drained, nothing weighed by capacity
	 * unknown (cpu_capacity is there), every ns without a frequency
	 * (no cpufreq here) counted */
	j = vitals_json(&d, summary);
	ck_assert_ptr_nonnull(wc = jm_path(j, "snapshot.window.wcpu"));
	ck_assert_int_ge(ll(wc, "drains"), 1);
	ck_assert_int_gt(ll(wc, "bpf_oncpu_ns"), 0);
	ck_assert_int_eq(ll(wc, "bpf_wtd_ns"), ll(wc, "bpf_oncpu_ns"));
	ck_assert_int_eq(ll(wc, "bpf_nocap_ns"), 0);
	fprintf(stderr,
	    "window: %lld ns on CPU, %lld weighed without a "
	    "frequency\n",
	    ll(wc, "bpf_oncpu_ns"), ll(wc, "bpf_nofreq_ns"));
	ck_assert_int_gt(ll(wc, "bpf_nofreq_ns"), 0);
	ck_assert_double_eq_tol(num(wc, "approx_factor"), 1.0, 1e-12);
	jm_free(j);
	tu_burner_stop(pid);
	td_stop(&d);
}
END_TEST

/*
 * The kernel side alone, with scales no CPU of this VM has: capacity 512
 * and frequency 256 on every CPU. A child burns 1 s of CPU; its row
 * weighs ((slice × 512) >> 10) × 256 >> 10 per slice, an eighth of its
 * time less under a nanosecond a slice, and no slice was weighed without
 * a scale.
 */
START_TEST(test_kernel_weighs_scales)
{
	struct bpf_sched_opts o = { .load = VBPF_LOAD_AUTO,
		.rq = true,
		.sys_root = "/sys" };
	struct bpf_sched_batch b = { 0 };
	struct window_wcpu *p = window_wcpu_new();
	uint64_t tot0[VITALS_BPF_TOT], tot1[VITALS_BPF_TOT], ticks, start;
	uint32_t cap[VITALS_CPU_MAX], freq[VITALS_CPU_MAX];
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	const struct wcpu_row *row;
	struct bpf_sched *bs = NULL;
	char bpffs[128], why[256], state = '?';
	unsigned st, i, hz = (unsigned)sysconf(_SC_CLK_TCK);
	int go[2], status;
	double want;
	pid_t pid;

	snprintf(bpffs, sizeof(bpffs), "/sys/fs/bpf/vitals-wcpu-%d",
	    (int)getpid());
	o.bpffs = bpffs;
	bpf_common_init();
	ck_assert_msg(bpf_sched_open(&o, &bs, &st, why, sizeof(why)) == 0,
	    "bpf: %s: %s", vbpf_state_name(st), why);
	ck_assert_int_gt(ncpu, 0);
	for (i = 0; i < (unsigned)ncpu && i < VITALS_CPU_MAX; i++) {
		cap[i] = 512;
		freq[i] = 256;
	}
	ck_assert_int_eq(bpf_sched_set_scale(bs, cap, freq, i), 0);
	ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
	ck_assert_int_eq(bpf_sched_totals(bs, tot0), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct timespec ts;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		do {
			for (volatile unsigned k = 0; k < 100000; k++)
				;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		} while (ts.tv_sec < 1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(go[0]);
	ck_assert_int_eq(ts_read_stat(pid, &state, &ticks, &start), 0);
	/* drained as the daemon does, until it blocks and both sides are
	 * read once more */
	for (i = 0; i < 5000; i++) {
		ck_assert_int_eq(ts_read_stat(pid, &state, &ticks, &start), 0);
		ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
		ck_assert_int_eq(wcpu_bpf_add(p, &b, hz, 0, 0), 0);
		if (state == 'S')
			break;
		if (i % 50 == 0)
			fprintf(stderr, "child %c %llu ticks\n", state,
			    (unsigned long long)ticks);
		tu_sleep_ms(20);
	}
	ck_assert_int_eq(state, 'S');
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
		ck_assert_int_eq(wcpu_bpf_add(p, &b, hz, 0, 0), 0);
	}
	ck_assert_int_eq(bpf_sched_totals(bs, tot1), 0);
	close(go[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);

	/* its process row, by /proc's own starttime */
	row = wcpu_find(p, false, pid, start);
	ck_assert_msg(row != NULL, "no row for %d starttime %llu", (int)pid,
	    (unsigned long long)start);
	ck_assert_uint_ge(row->oncpu_ns, 900 * NSEC_PER_MSEC);
	want = (double)row->oncpu_ns / 8;
	fprintf(stderr, "kernel: %llu ns on CPU, %llu weighted (1/8: %.0f)\n",
	    (unsigned long long)row->oncpu_ns, (unsigned long long)row->wtd_ns,
	    want);
	ck_assert_uint_le(row->wtd_ns, (uint64_t)want);
	/* a nanosecond lost to each of two roundings per slice, at most */
	ck_assert_msg((double)row->wtd_ns >= want - 2.0 * 20000,
	    "weighted %llu, want %.0f", (unsigned long long)row->wtd_ns, want);
	ck_assert_ptr_nonnull(wcpu_find(p, true, pid, start));
	/* every CPU had both scales: nothing weighed as 1024 */
	ck_assert_uint_eq(tot1[VBPF_TOT_WTD_NOCAP], tot0[VBPF_TOT_WTD_NOCAP]);
	ck_assert_uint_eq(tot1[VBPF_TOT_WTD_NOFREQ], tot0[VBPF_TOT_WTD_NOFREQ]);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
	tu_rmtree(bpffs);
	window_wcpu_free(p);
}
END_TEST

int
main(void)
{
	Suite *s;
	TCase *tc;

	if (!tu_need_root("BPF accounting needs CAP_BPF"))
		return 77;
	s = suite_create("wcpu_kernel");
	tc = tcase_create("kernel");
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_burner_weighted_equals_plain);
	tcase_add_test(tc, test_kernel_weighs_scales);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
