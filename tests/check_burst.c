/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Burst triggers (daemon/burst/, doc/bursts.md): the rule syntax, each
 * condition over synthetic samples and windows, the budgets in their
 * order, and the record.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "burst/burst.h"
#include "core/util.h"
#include "sched/sched.h"
#include "trace/trace.h"
#include "window/window.h"

#define S NSEC_PER_SEC
#define MS NSEC_PER_MSEC

/* ------------------------------------------------------------ parsing */

static struct burst_rule
parse_ok(const char *s)
{
	struct burst_rule r;
	char err[160] = "";

	ck_assert_msg(burst_rule_parse(s, &r, err, sizeof(err)) == 0, "%s: %s",
	    s, err);
	return r;
}

static void
parse_bad(const char *s, const char *want)
{
	struct burst_rule r;
	char err[160] = "";

	ck_assert_msg(burst_rule_parse(s, &r, err, sizeof(err)) == -EINVAL,
	    "%s accepted", s);
	ck_assert_msg(strstr(err, want) != NULL, "%s: '%s' lacks '%s'", s, err,
	    want);
}

START_TEST(test_parse)
{
	struct burst_rule r;

	r = parse_ok("stall when=psi_some:memory:20");
	ck_assert_str_eq(r.name, "stall");
	ck_assert_int_eq(r.cond, BURST_PSI_SOME);
	ck_assert_int_eq(r.res, PSI_MEMORY);
	ck_assert(r.level == 20);
	r = parse_ok("rq when=rq_p99:8ms duration=5s cooldown=2m");
	ck_assert_int_eq(r.cond, BURST_RQ_P99);
	ck_assert_int_eq(r.bound_ns, 8 * MS);
	ck_assert_uint_eq(r.duration_ms, 5000);
	ck_assert_uint_eq(r.cooldown_ms, 120000);
	/* the bound is after the last ':', the glob may hold some */
	r = parse_ok("jank when=slice:Choreographer#doFrame*:32ms "
		     "match=name:com.example.app");
	ck_assert_int_eq(r.cond, BURST_SLICE);
	ck_assert_str_eq(r.pattern, "Choreographer#doFrame*");
	ck_assert_int_eq(r.bound_ns, 32 * MS);
	ck_assert_int_eq(r.sel, BURST_SEL_NAME);
	ck_assert_str_eq(r.sel_name, "com.example.app");
	r = parse_ok("ns when=slice:a:b:c:500us");
	ck_assert_str_eq(r.pattern, "a:b:c");
	ck_assert_int_eq(r.bound_ns, 500 * NSEC_PER_USEC);
	r = parse_ok("faults when=majflt_rate:50 match=uid:10123");
	ck_assert_int_eq(r.cond, BURST_MAJFLT_RATE);
	ck_assert(r.level == 50);
	ck_assert_int_eq(r.sel, BURST_SEL_UID);
	ck_assert_uint_eq(r.sel_uid, 10123);

	parse_bad("x", "no when=");
	parse_bad("when=rq_p99:1ms", "starts with its name");
	parse_bad("x when=psi_some:disk:10", "when=");
	parse_bad("x when=psi_some:cpu:101", "when=");
	parse_bad("x when=psi_some:cpu", "when=");
	parse_bad("x when=rq_p99:0", "when=");
	parse_bad("x when=slice:Choreographer", "when=");
	parse_bad("x when=majflt_rate:0", "when=");
	parse_bad("x when=majflt_rate:-1", "when=");
	parse_bad("x when=rq_p99:1ms match=name:foo", "system-wide");
	parse_bad("x when=rq_p99:1ms duration=11s", "duration=");
	parse_bad("x when=rq_p99:1ms duration=0", "duration=");
	parse_bad("x when=rq_p99:1ms colour=red", "unknown rule key");
	parse_bad("x when=rq_p99:1ms match", "KEY=VALUE");
	parse_bad("averyveryveryveryverylongrulename when=rq_p99:1ms",
	    "name too long");
}
END_TEST

START_TEST(test_settings)
{
	struct burst_settings bs;
	unsigned i;

	burst_settings_init(&bs);
	ck_assert_uint_eq(bs.duration_ms, VITALS_BURST_MAX_MS);
	ck_assert_uint_eq(bs.max_per_hour, 6);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_min_gap", "30s"), 0);
	ck_assert_uint_eq(bs.min_gap_ms, 30000);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_cooldown", "5m"), 0);
	ck_assert_uint_eq(bs.cooldown_ms, 300000);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_duration", "3s"), 0);
	ck_assert_uint_eq(bs.duration_ms, 3000);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_duration", "20s"),
	    -ERANGE);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_max_per_hour", "2"), 0);
	ck_assert_uint_eq(bs.max_per_hour, 2);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_colour", "1"), -ENOENT);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_rule", "x"), -EINVAL);
	for (i = 0; i < BURST_RULES_MAX; i++)
		ck_assert_int_eq(burst_settings_set(&bs, "burst_rule",
				     "r when=rq_p99:1ms"),
		    0);
	ck_assert_int_eq(burst_settings_set(&bs, "burst_rule",
			     "r when=rq_p99:1ms"),
	    -ERANGE);
	ck_assert_uint_eq(bs.nrules, BURST_RULES_MAX);
}
END_TEST

/* --------------------------------------------------- the test's daemon */

static unsigned starts, last_ms;
static int64_t other_until;

static void
start_cb(void *arg, unsigned ms)
{
	(void)arg;
	starts++;
	last_ms = ms;
}

static int64_t
until_cb(void *arg)
{
	(void)arg;
	return other_until;
}

static struct burst *
mk(struct burst_settings *bs, const char *const *rules)
{
	struct burst_hooks h = { .start = start_cb, .until = until_cb };
	struct burst *b = NULL;

	for (; *rules; rules++)
		ck_assert_int_eq(burst_settings_set(bs, "burst_rule", *rules),
		    0);
	ck_assert_int_eq(burst_new(bs, &h, &b), 0);
	starts = last_ms = 0;
	other_until = 0;
	return b;
}

/* A sample whose memory "some" total is us. */
static void
psi_at(struct burst *b, uint64_t us, int64_t mono)
{
	struct sys_sample s;

	memset(&s, 0, sizeof(s));
	s.psi_err[PSI_CPU] = -ENOENT; /* a kernel without it */
	s.psi[PSI_MEMORY].some.total_us = us;
	burst_sample(b, &s, mono, mono + 1000 * S);
}

/*
 * Pressure over the last ≥ 1 s: a first reading sets the base, samples
 * closer than a second wait, a counter that goes back restarts it.
 */
START_TEST(test_psi)
{
	struct burst_settings bs;
	struct burst_fire f[BURST_LOG_MAX];
	struct burst_stats st;
	const char *const rules[] = { "mem when=psi_some:memory:20",
		"cpu when=psi_some:cpu:1", NULL };
	struct burst *b;
	int64_t t = 100 * S;

	burst_settings_init(&bs);
	b = mk(&bs, rules);
	psi_at(b, 1000000, t);		  /* base */
	psi_at(b, 1100000, t + 500 * MS); /* < 1 s: waits */
	psi_at(b, 1150000, t + S);	  /* 150 ms of 1 s: 15 % */
	ck_assert_uint_eq(starts, 0);
	psi_at(b, 1400000, t + 2 * S); /* 250 ms of 1 s: 25 % */
	ck_assert_uint_eq(starts, 1);
	ck_assert_uint_eq(last_ms, VITALS_BURST_MAX_MS);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 1);
	ck_assert_str_eq(f[0].rule_name, "mem");
	ck_assert_int_eq(f[0].outcome, BURST_STARTED);
	ck_assert_int_eq(f[0].cond, BURST_PSI_SOME);
	ck_assert(f[0].value > 24.99 && f[0].value < 25.01);
	ck_assert(f[0].threshold == 20);
	ck_assert_int_eq(f[0].pid, 0);
	ck_assert_int_eq(f[0].mono_ns, t + 2 * S);
	ck_assert_ptr_nonnull(strstr(f[0].why, "memory pressure"));
	/* still stalled, the burst runs: counted, recorded once */
	psi_at(b, 1700000, t + 3 * S);
	psi_at(b, 2000000, t + 4 * S);
	ck_assert_uint_eq(starts, 1);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 2);
	ck_assert_int_eq(f[1].outcome, BURST_DURING_BURST);
	/* a counter that went back (a wrap, a new kernel): a new base */
	psi_at(b, 10, t + 20 * S);
	psi_at(b, 900000, t + 21 * S); /* 90 %, but cooling down */
	ck_assert_uint_eq(starts, 1);
	burst_stats(b, &st);
	ck_assert_uint_eq(st.outcome[BURST_STARTED], 1);
	ck_assert_uint_eq(st.outcome[BURST_DURING_BURST], 2);
	ck_assert_uint_eq(st.outcome[BURST_COOLDOWN], 1);
	ck_assert_uint_eq(st.held, 4);
	/* cpu had no file: each sample's evaluation counted unavailable */
	ck_assert_uint_eq(st.unavailable, 8);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 3);
	ck_assert_int_eq(f[2].outcome, BURST_COOLDOWN);
	/* after the cooldown (10 min) it starts again */
	psi_at(b, 900000 + 300000, t + 700 * S);
	psi_at(b, 900000 + 600000, t + 701 * S);
	ck_assert_uint_eq(starts, 2);
	burst_free(b);
}
END_TEST

/*
 * The budgets, in order: a running burst (anyone's), the rule's cooldown,
 * the gap since any rule's burst, the bursts of the last hour.
 */
START_TEST(test_budgets)
{
	struct burst_settings bs;
	struct burst_stats st;
	struct burst_fire f[BURST_LOG_MAX];
	const char *const rules[] = { "a when=psi_some:memory:10 cooldown=1s",
		"b when=psi_some:io:10 cooldown=1s", NULL };
	struct sys_sample s;
	struct burst *b;
	int64_t t = 1000 * S;
	unsigned i;
	size_t n;

	burst_settings_init(&bs);
	bs.min_gap_ms = 60000;
	bs.max_per_hour = 2;
	bs.duration_ms = 1000;
	b = mk(&bs, rules);
	memset(&s, 0, sizeof(s));
	s.psi_err[PSI_CPU] = -ENOENT;
	/* both stalled all the time: 100 % every second */
	for (i = 0; i <= 4000; i++) {
		s.psi[PSI_MEMORY].some.total_us = (uint64_t)i * 1000000;
		s.psi[PSI_IO].some.total_us = (uint64_t)i * 1000000;
		if (i == 200)
			other_until = t + 230 * S; /* a caller's burst */
		burst_sample(b, &s, t + i * S, 0);
	}
	/* starts at 1 s (a), then every 60 s alternately, except while the
	 * caller's burst ran, and at most 2 in any hour */
	burst_stats(b, &st);
	ck_assert_uint_eq(st.outcome[BURST_STARTED], starts);
	ck_assert_uint_eq(st.held, 2 * 4000);
	ck_assert_uint_eq(st.held,
	    st.outcome[BURST_STARTED] + st.outcome[BURST_DURING_BURST] +
		st.outcome[BURST_COOLDOWN] + st.outcome[BURST_GAP] +
		st.outcome[BURST_HOURLY]);
	ck_assert(st.outcome[BURST_GAP] > 0);
	ck_assert(st.outcome[BURST_HOURLY] > 0);
	ck_assert(st.outcome[BURST_DURING_BURST] >= 30);
	n = burst_log(b, f, BURST_LOG_MAX);
	/* every start at least min_gap after the one before, at most 2 in
	 * any hour, none while the caller's burst ran */
	{
		int64_t prev = 0, hist[16];
		unsigned k = 0, j;

		for (i = 0; i < n; i++) {
			if (f[i].outcome != BURST_STARTED)
				continue;
			ck_assert(prev == 0 || f[i].mono_ns - prev >= 60 * S);
			ck_assert(f[i].mono_ns >= t + 230 * S ||
			    f[i].mono_ns < t + 200 * S);
			prev = f[i].mono_ns;
			if (k < 16)
				hist[k++] = f[i].mono_ns;
		}
		for (j = 2; j < k; j++)
			ck_assert(hist[j] - hist[j - 2] >= 3600 * S);
		/* 4000 s: at most 2 in each of 2 hours, and one more */
		ck_assert(k >= 3 && k <= 6);
	}
	burst_free(b);
}
END_TEST

/* ----------------------------------------------------- window figures */

static struct window *
mkwin(void)
{
	struct window *w = window_new(1, 1);

	ck_assert_ptr_nonnull(w);
	w->mono_start_ns = 10 * S;
	w->mono_end_ns = 20 * S;
	return w;
}

static void
add_proc(struct window *w, int32_t pid, const char *name, uint32_t uid,
    uint64_t majflt, uint64_t wall_ns)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.id = t.tgid = pid;
	t.starttime = 100 + (uint64_t)pid;
	t.uid = uid;
	window_task_set_name(&t, name);
	snprintf(t.comm, sizeof(t.comm), "%.15s", name);
	t.d_majflt = majflt;
	t.wall_ns = wall_ns;
	t.samples = 10;
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
}

START_TEST(test_rq_p99)
{
	struct burst_settings bs;
	struct burst_fire f[BURST_LOG_MAX];
	struct burst_stats st;
	const char *const rules[] = { "rq when=rq_p99:8ms", NULL };
	struct window_bpf *wb;
	struct window *w = mkwin();
	struct burst *b;
	unsigned i;

	burst_settings_init(&bs);
	b = mk(&bs, rules);
	/* no BPF part: the figure is absent, counted */
	burst_window(b, w, 30 * S, 0);
	burst_stats(b, &st);
	ck_assert_uint_eq(st.unavailable, 1);
	ck_assert_ptr_nonnull(wb = window_sched_make(w, true));
	wb->state = VBPF_OFF_NO_BTF;
	burst_window(b, w, 31 * S, 0);
	burst_stats(b, &st);
	ck_assert_uint_eq(st.unavailable, 2);
	/* 1000 waits: 985 in [2, 4) µs, 15 in [8, 16) ms across two
	 * processes and "other": p99 in the 8 ms slot, bound 16 ms */
	wb->state = VBPF_ON_LOADED;
	ck_assert_int_eq(window_bpf_reserve(wb, 0, 2, 0), 0);
	wb->nprocs = 2;
	memset(wb->proc, 0, 2 * sizeof(*wb->proc));
	wb->proc[0].tgid = 10;
	wb->proc[0].rq_hist[1] = 900;
	wb->proc[1].tgid = 11;
	wb->proc[1].rq_hist[1] = 85;
	wb->proc[1].rq_hist[13] = 5;
	wb->proc_other.rq_hist[13] = 4; /* 9 of 1000: p99 still 2-4 µs */
	burst_window(b, w, 32 * S, 0);
	ck_assert_uint_eq(starts, 0);
	wb->proc_other.rq_hist[13] = 10; /* 15 of 1000 */
	burst_window(b, w, 33 * S, 0);
	ck_assert_uint_eq(starts, 1);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 1);
	ck_assert(f[0].value > 16.3 && f[0].value < 16.4); /* 2^14 µs */
	ck_assert(f[0].threshold == 8);
	/* all in the open top slot: said as -1 */
	for (i = 0; i < VITALS_BPF_RQ_SLOTS; i++)
		wb->proc[0].rq_hist[i] = wb->proc[1].rq_hist[i] =
		    wb->proc_other.rq_hist[i] = 0;
	wb->proc[0].rq_hist[VITALS_BPF_RQ_SLOTS - 1] = 3;
	other_until = 0;
	burst_window(b, w, 2000 * S, 0);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 2);
	ck_assert(f[1].value == -1);
	ck_assert_int_eq(f[1].outcome, BURST_STARTED);
	burst_free(b);
	window_free(w);
}
END_TEST

static void
add_slice(struct window_trace *t, int32_t tgid, const char *name,
    uint32_t count, uint64_t max_ns)
{
	struct window_trace_slice *s = &t->slice[t->nslices++];

	memset(s, 0, sizeof(*s));
	s->tgid = s->tid = tgid;
	s->count = count;
	s->incomplete = count ? 0 : 1;
	s->max_ns = max_ns;
	s->total_ns = max_ns * count;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

START_TEST(test_slice)
{
	struct burst_settings bs;
	struct burst_fire f[BURST_LOG_MAX];
	struct burst_stats st;
	const char *const rules[] = {
		"jank when=slice:Choreographer#doFrame*:32ms "
		"match=name:com.example.app",
		NULL
	};
	struct window *w = mkwin();
	struct window_trace *t;
	struct burst *b;

	burst_settings_init(&bs);
	b = mk(&bs, rules);
	burst_window(b, w, 30 * S, 0);
	burst_stats(b, &st);
	ck_assert_uint_eq(st.unavailable, 1);
	ck_assert_ptr_nonnull(t = window_trace_make(w, true));
	t->state = FTRACE_ON;
	add_proc(w, 500, "com.example.app", 10100, 0, 10 * S);
	add_proc(w, 600, "com.other", 10200, 0, 10 * S);
	/* long, but another process's; long, but incomplete (no
	 * duration); the right name, too short; a name that does not
	 * match */
	add_slice(t, 600, "Choreographer#doFrame 123", 1, 90 * MS);
	add_slice(t, 500, "Choreographer#doFrame 124", 0, 0);
	add_slice(t, 500, "Choreographer#doFrame 125", 3, 20 * MS);
	add_slice(t, 500, "RV OnBindView", 1, 80 * MS);
	burst_window(b, w, 31 * S, 0);
	ck_assert_uint_eq(starts, 0);
	add_slice(t, 500, "Choreographer#doFrame 126", 2, 48 * MS);
	add_slice(t, 500, "Choreographer#doFrame 127", 1, 40 * MS);
	burst_window(b, w, 32 * S, 0);
	ck_assert_uint_eq(starts, 1);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 1);
	ck_assert_int_eq(f[0].pid, 500);
	ck_assert(f[0].value == 48);
	ck_assert_ptr_nonnull(strstr(f[0].why, "Choreographer#doFrame 126"));
	t->state = FTRACE_OFF_CONFIG;
	burst_window(b, w, 33 * S, 0);
	burst_stats(b, &st);
	ck_assert_uint_eq(st.unavailable, 2);
	burst_free(b);
	window_free(w);
}
END_TEST

/* A long name in the record's sentence is cut between two characters. */
START_TEST(test_why_utf8)
{
	struct burst_settings bs;
	struct burst_fire f[BURST_LOG_MAX];
	const char *const rules[] = { "any when=slice:*:1ms", NULL };
	struct window *w = mkwin();
	struct window_trace *t;
	struct burst *b;
	char name[128], want[128];
	unsigned i;

	burst_settings_init(&bs);
	b = mk(&bs, rules);
	ck_assert_ptr_nonnull(t = window_trace_make(w, true));
	t->state = FTRACE_ON;
	strcpy(name, "a");
	for (i = 0; i < 30; i++)
		strcat(name, "\xe6\x97\xa5"); /* 3 bytes each */
	add_slice(t, 500, name, 1, 5 * MS);
	burst_window(b, w, 30 * S, 0);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 1);
	/* 60 bytes would end inside the 20th character: 'a' and 19 */
	snprintf(want, sizeof(want), "slice '%.58s' of pid 500", name);
	ck_assert_msg(strstr(f[0].why, want) != NULL, "%s", f[0].why);
	burst_free(b);
	window_free(w);
}
END_TEST

START_TEST(test_majflt)
{
	struct burst_settings bs;
	struct burst_fire f[BURST_LOG_MAX];
	const char *const rules[] = { "io when=majflt_rate:100 match=uid:10100",
		NULL };
	struct window *w = mkwin();
	struct burst *b;

	burst_settings_init(&bs);
	b = mk(&bs, rules);
	add_proc(w, 500, "com.example.app", 10100, 999, 10 * S); /* 99.9/s */
	add_proc(w, 600, "com.other", 10200, 5000, 10 * S); /* not the uid */
	add_proc(w, 700, "com.example.app:remote", 10100, 0, 0);
	burst_window(b, w, 30 * S, 0);
	ck_assert_uint_eq(starts, 0);
	add_proc(w, 800, "com.example.app:bg", 10100, 600, 5 * S);   /* 120/s */
	add_proc(w, 900, "com.example.app:ui", 10100, 1100, 10 * S); /* 110 */
	burst_window(b, w, 31 * S, 0);
	ck_assert_uint_eq(starts, 1);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), 1);
	ck_assert_int_eq(f[0].pid, 800);
	ck_assert(f[0].value == 120);
	burst_free(b);
	window_free(w);
}
END_TEST

/* The record keeps the newest 64, oldest first; every one is counted. */
START_TEST(test_log_ring)
{
	struct burst_settings bs;
	struct burst_fire f[BURST_LOG_MAX];
	struct burst_stats st;
	const char *const rules[] = { "io when=majflt_rate:1 cooldown=0",
		NULL };
	struct window *w = mkwin();
	struct burst *b;
	unsigned i;

	burst_settings_init(&bs);
	bs.min_gap_ms = 0;
	bs.max_per_hour = 3600;
	bs.duration_ms = 1;
	b = mk(&bs, rules);
	add_proc(w, 500, "app", 1, 100, S);
	for (i = 0; i < 100; i++)
		burst_window(b, w, (int64_t)(i + 1) * S, 0);
	ck_assert_uint_eq(starts, 100);
	burst_stats(b, &st);
	ck_assert_uint_eq(st.logged, 100);
	ck_assert_uint_eq(burst_log(b, f, BURST_LOG_MAX), BURST_LOG_MAX);
	ck_assert_int_eq(f[0].mono_ns, 37 * S);
	ck_assert_int_eq(f[BURST_LOG_MAX - 1].mono_ns, 100 * S);
	ck_assert_uint_eq(burst_log(b, f, 3), 3);
	ck_assert_int_eq(f[2].mono_ns, 100 * S);
	burst_free(b);
	window_free(w);
}
END_TEST

static Suite *
burst_suite(void)
{
	Suite *s = suite_create("burst");
	TCase *tc = tcase_create("burst");

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_settings);
	tcase_add_test(tc, test_psi);
	tcase_add_test(tc, test_budgets);
	tcase_add_test(tc, test_rq_p99);
	tcase_add_test(tc, test_slice);
	tcase_add_test(tc, test_why_utf8);
	tcase_add_test(tc, test_majflt);
	tcase_add_test(tc, test_log_ring);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(burst_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
