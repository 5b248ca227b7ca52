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
#include <unistd.h>

#include "harness.h"
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
	static const char *const top[] = { "top", "--weighted", "--since",
		"1m", "-n", "500", NULL };
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
	pid = tu_burner_start();
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
	/* the busiest by weighted CPU is the burner (2 CPUs, one burner) */
	ck_assert_int_eq(jm_find_id(jm_path(j, "top.tasks"), pid) ==
		&jm_path(j, "top.tasks")->v[0],
	    1);
	jm_free(j);

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

	/* the last window's head: drained, nothing weighed by capacity
	 * unknown (cpu_capacity is there), every ns without a frequency
	 * (no cpufreq here) counted */
	j = vitals_json(&d, summary);
	ck_assert_ptr_nonnull(wc = jm_path(j, "snapshot.window.wcpu"));
	ck_assert_int_ge(ll(wc, "drains"), 1);
	ck_assert_int_gt(ll(wc, "bpf_oncpu_ns"), 0);
	ck_assert_int_eq(ll(wc, "bpf_wtd_ns"), ll(wc, "bpf_oncpu_ns"));
	ck_assert_int_eq(ll(wc, "bpf_nocap_ns"), 0);
	ck_assert_int_ge(ll(wc, "bpf_nofreq_ns"), ll(wc, "bpf_oncpu_ns"));
	ck_assert_double_eq_tol(num(wc, "approx_factor"), 1.0, 1e-12);
	jm_free(j);
	tu_burner_stop(pid);
	td_stop(&d);
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
	suite_add_tcase(s, tc);
	return tu_run(s);
}
