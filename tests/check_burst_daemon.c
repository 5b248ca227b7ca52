/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Burst triggers on a real daemon and the real kernel's pressure files:
 * a rule that always holds (CPU "some" pressure >= 0 %) starts bursts on
 * its own, each recorded with its reason and counted in health, the
 * cooldown between them kept; the windows they fell in were sampled every
 * 100 ms; a rule whose figure is absent here (the run-queue p99 with BPF
 * off) is counted as such; `vitals bursts` says it in text and JSON; a
 * daemon without rules answers ABSENT.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"

#define CONF                                                    \
	"bpf_load = off\n"                                      \
	"ftrace = off\n"                                        \
	"burst_rule = always when=psi_some:cpu:0 cooldown=3s\n" \
	"burst_rule = rq when=rq_p99:1s\n"                      \
	"burst_rule = faults when=majflt_rate:1000000000\n"     \
	"burst_duration = 1500ms\n"                             \
	"burst_min_gap = 0\n"                                   \
	"burst_max_per_hour = 100\n"

static long long
ll(const struct jm *o, const char *path)
{
	const struct jm *v = jm_path(o, path);

	ck_assert_msg(v && jm_is_int(v), "%s: not an integer", path);
	return v->ll;
}

static bool
two_started(const struct run *r)
{
	struct jm *j = jm_parse(r->out, strlen(r->out));
	const struct jm *v;
	bool ok;

	if (j == NULL)
		return false;
	v = jm_path(j, "bursts.health.started");
	ok = v && jm_is_int(v) && v->ll >= 2;
	jm_free(j);
	return ok;
}

/* A closed window of the last ones was sampled in a burst. */
static bool
burst_window(const struct run *r)
{
	struct jm *j = jm_parse(r->out, strlen(r->out));
	const struct jm *ws, *v;
	bool ok = false;
	size_t i;

	if (j == NULL)
		return false;
	ws = jm_path(j, "windows.windows");
	for (i = 0; ws && ws->t == JM_ARR && i < ws->n; i++)
		if ((v = jm_path(&ws->v[i], "health.burst_samples")) &&
		    jm_is_int(v) && v->ll > 0)
			ok = true;
	jm_free(j);
	return ok;
}

START_TEST(test_rules_start_bursts)
{
	static const char *const args[] = { "--interval-ms", "1000",
		"--window-s", "2", NULL };
	static const char *const bursts_json[] = { "--json", "bursts", NULL };
	static const char *const bursts_text[] = { "bursts", NULL };
	static const char *const health[] = { "--json", "health", NULL };
	static const char *const windows[] = { "--json", "cpu", "--since", "5m",
		NULL };
	const struct jm *f, *fs;
	struct jm *j;
	struct run r;
	struct td d;
	long long prev = 0;
	size_t i, started = 0;

	if (geteuid() != 0)
		return;
	if (access("/proc/pressure/cpu", R_OK) != 0)
		ck_abort_msg("no /proc/pressure/cpu: the kernel has PSI off");
	td_start(&d, "burst-daemon", CONF, args);
	td_wait(&d, 30000, bursts_json, two_started);

	r = td_vitals(&d, -1, bursts_json);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_int_eq(ll(j, "bursts.health.rules"), 3);
	ck_assert_int_ge(ll(j, "bursts.health.started"), 2);
	ck_assert_int_eq(ll(j, "bursts.health.duration_ms"), 1500);
	ck_assert_int_eq(ll(j, "bursts.health.min_gap_ms"), 0);
	ck_assert_int_eq(ll(j, "bursts.health.max_per_hour_limit"), 100);
	/* held = every outcome summed */
	ck_assert_int_eq(ll(j, "bursts.health.held"),
	    ll(j, "bursts.health.started") +
		ll(j, "bursts.health.during_burst") +
		ll(j, "bursts.health.cooldown") +
		ll(j, "bursts.health.min_gap") +
		ll(j, "bursts.health.max_per_hour"));
	/* the run-queue rule without BPF: absent, at every window close */
	ck_assert_int_ge(ll(j, "bursts.health.unavailable"), 1);
	ck_assert_int_ge(ll(j, "bursts.health.evaluations"),
	    ll(j, "bursts.health.held") + ll(j, "bursts.health.unavailable"));
	ck_assert_ptr_nonnull(fs = jm_path(j, "bursts.firings"));
	ck_assert_int_eq(fs->t, JM_ARR);
	for (i = 0; i < fs->n; i++) {
		const struct jm *o;

		f = &fs->v[i];
		ck_assert_ptr_nonnull(o = jm_get(f, "outcome"));
		/* the faults rule never holds: a billion faults a second */
		ck_assert_str_eq(jm_get(f, "rule")->str, "always");
		ck_assert_str_eq(jm_get(f, "cond")->str, "psi_some");
		if (strcmp(o->str, "started") != 0)
			continue;
		started++;
		ck_assert_int_eq(ll(f, "duration_ms"), 1500);
		ck_assert_int_eq(ll(f, "pid"), 0);
		ck_assert(jm_get(f, "value")->num >= 0);
		ck_assert(jm_get(f, "threshold")->num == 0);
		ck_assert_ptr_nonnull(
		    strstr(jm_get(f, "why")->str, "cpu pressure"));
		/* the rule's cooldown (3 s) between its bursts */
		ck_assert(prev == 0 || ll(f, "mono_ns") - prev >= 3000000000LL);
		prev = ll(f, "mono_ns");
	}
	ck_assert_uint_ge(started, 2);
	jm_free(j);
	run_free(&r);

	r = td_vitals(&d, -1, bursts_text);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Bursts: 3 rules"));
	ck_assert_ptr_nonnull(strstr(r.out, "always"));
	ck_assert_ptr_nonnull(strstr(r.out, "started"));
	ck_assert_ptr_nonnull(strstr(r.out, "-> 1.5 s burst"));
	run_free(&r);

	/* the same counts in health */
	r = td_vitals(&d, -1, health);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_int_eq(ll(j, "health.bursts.rules"), 3);
	ck_assert_int_ge(ll(j, "health.bursts.started"), 2);
	jm_free(j);
	run_free(&r);

	/* the bursts' windows were sampled every 100 ms */
	td_wait(&d, 15000, windows, burst_window);
	td_stop(&d);
}
END_TEST

START_TEST(test_no_rules)
{
	static const char *const args[] = { "--interval-ms", "1000", NULL };
	static const char *const bursts[] = { "bursts", NULL };
	static const char *const health[] = { "--json", "health", NULL };
	const struct jm *v;
	struct jm *j;
	struct run r;
	struct td d;

	if (geteuid() != 0)
		return;
	td_start(&d, "burst-none", "bpf_load = off\nftrace = off\n", args);
	td_wait(&d, 10000, health, NULL);
	r = td_vitals(&d, -1, bursts);
	ck_assert_int_eq(r.code, 8);
	ck_assert_ptr_nonnull(strstr(r.err, "no burst rules"));
	run_free(&r);
	r = td_vitals(&d, -1, health);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	/* absent: null, as every message the answer does not carry */
	ck_assert_ptr_nonnull(v = jm_path(j, "health.bursts"));
	ck_assert_int_eq(v->t, JM_NULL);
	jm_free(j);
	run_free(&r);
	td_stop(&d);
}
END_TEST

static Suite *
burst_daemon_suite(void)
{
	Suite *s = suite_create("burst_daemon");
	TCase *tc = tcase_create("daemon");

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_rules_start_bursts);
	tcase_add_test(tc, test_no_rules);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "burst_daemon: needs root (daemon as in CI)\n");
		return 77;
	}
	sr = srunner_create(burst_daemon_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
