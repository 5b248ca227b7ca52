/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client's pure parts: durations, JSON escaping and emission, and the
 * text rendering of hand-built messages (client_fixture.h), checked
 * against percentages worked out by hand. check_client_render.c reads the
 * client's JSON and figures back as numbers; check_client_cli.c runs the
 * built binary.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "client_fixture.h"
#include "jsonmini.h"
#include "testutil.h"

/* ------------------------------------------------------------ durations */

START_TEST(test_duration_ok)
{
	static const struct {
		const char *s;
		int64_t ns;
	} ok[] = {
		{ "30s", 30 * NS },
		{ "5m", 300 * NS },
		{ "2h", 7200 * NS },
		{ "1d", 86400 * NS },
		{ "250ms", 250000000LL },
		{ "0s", 0 },
		{ "45", 45 * NS },
		{ "1.5", 1500000000LL },
		{ "1.5h", 5400 * NS },
		{ "1h30m", 5400 * NS },
		{ "1d2h3m4s5ms", 93784 * NS + 5000000LL },
		{ "0.001s", 1000000LL },
		{ "0.0000000001s", 0 }, /* beyond ns: truncated */
		{ "106751d", 106751LL * 86400 * NS },
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t ns = -1;

		ck_assert_msg(duration_parse(ok[i].s, &ns) == 0, "%s", ok[i].s);
		ck_assert_msg(ns == ok[i].ns, "%s: %lld", ok[i].s,
		    (long long)ns);
	}
}
END_TEST

START_TEST(test_duration_bad)
{
	static const char *const einval[] = { "", "s", "m5", "5x", "5 s", " 5s",
		"5s ", "-5s", "+5s", "5S", "5sec", "1h30", "5..5s", ".s",
		"1e3s", "5mss", "0x10s", "5s5", "ms" };
	static const char *const erange[] = { "106752d",
		"9223372036854775808ms", "99999999999999999999s",
		"106751d23h59m59s999ms", "18446744073709551616" };
	size_t i;
	int64_t ns = 7;

	for (i = 0; i < sizeof(einval) / sizeof(einval[0]); i++)
		ck_assert_msg(duration_parse(einval[i], &ns) == -EINVAL,
		    "'%s' accepted", einval[i]);
	for (i = 0; i < sizeof(erange) / sizeof(erange[0]); i++)
		ck_assert_msg(duration_parse(erange[i], &ns) == -ERANGE,
		    "'%s' not ERANGE", erange[i]);
	ck_assert_int_eq(duration_parse(NULL, &ns), -EINVAL);
	ck_assert_int_eq(ns, 7); /* untouched on failure */
}
END_TEST

START_TEST(test_duration_format)
{
	char b[16];

	duration_format(b, sizeof(b), 850000000LL);
	ck_assert_str_eq(b, "850ms");
	duration_format(b, sizeof(b), 10 * NS);
	ck_assert_str_eq(b, "10.0s");
	duration_format(b, sizeof(b), 300 * NS);
	ck_assert_str_eq(b, "5m00s");
	duration_format(b, sizeof(b), 7500 * NS);
	ck_assert_str_eq(b, "2h05m");
	duration_format(b, sizeof(b), 3 * 86400 * NS + 4 * 3600 * NS);
	ck_assert_str_eq(b, "3d04h");
	duration_format(b, sizeof(b), -1);
	ck_assert_str_eq(b, "n/a");
}
END_TEST

START_TEST(test_uint_parse)
{
	uint64_t v = 5;

	ck_assert_int_eq(uint_parse("42", 100, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(uint_parse("18446744073709551615", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(uint_parse("18446744073709551616", UINT64_MAX, &v),
	    -ERANGE);
	ck_assert_int_eq(uint_parse("101", 100, &v), -ERANGE);
	ck_assert_int_eq(uint_parse("-1", 100, &v), -EINVAL);
	ck_assert_int_eq(uint_parse("1x", 100, &v), -EINVAL);
	ck_assert_int_eq(uint_parse(" 1", 100, &v), -EINVAL);
	ck_assert_int_eq(uint_parse("", 100, &v), -EINVAL);
	ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

/* ------------------------------------------------------------ JSON */

static char *
esc(const char *s, size_t len)
{
	struct sbuf b;

	sbuf_init(&b);
	json_escape(&b, s, len);
	ck_assert_int_eq(b.err, 0);
	return b.buf;
}

static void
assert_esc(const char *in, size_t len, const char *want)
{
	char *got = esc(in, len);
	struct jm *j;

	ck_assert_str_eq(got, want);
	/* and a strict parser takes it */
	j = jm_parse(got, strlen(got));
	ck_assert_msg(j != NULL && j->t == JM_STR, "not JSON: %s", got);
	jm_free(j);
	free(got);
}

START_TEST(test_json_escape)
{
	char all[32];
	size_t i;
	char *got;
	struct jm *j;

	assert_esc("plain", 5, "\"plain\"");
	assert_esc("", 0, "\"\"");
	assert_esc("a\"b\\c/d", 7, "\"a\\\"b\\\\c/d\"");
	assert_esc("\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\"");
	assert_esc("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
	assert_esc("nul\0byte", 8, "\"nul\\u0000byte\"");
	/* UTF-8 passes through: 2, 3 and 4 bytes, and the edges */
	assert_esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
	    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	assert_esc("\xc2\x80\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf", 11,
	    "\"\xc2\x80\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf\"");
	/* invalid bytes: one U+FFFD each, then resync */
	assert_esc("\x80", 1, "\"\\ufffd\""); /* lone continuation */
	assert_esc("a\xff"
		   "b",
	    3, "\"a\\ufffdb\"");
	/* overlong NUL, surrogate */
	assert_esc("\xc0\x80", 2, "\"\\ufffd\\ufffd\"");
	assert_esc("\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\"");
	assert_esc("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
	assert_esc("\xf4\x90\x80\x80", 4,
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
	assert_esc("\xf5\x80", 2, "\"\\ufffd\\ufffd\"");
	assert_esc("x\xe2\x82", 3, "\"x\\ufffd\\ufffd\""); /* truncated */
	assert_esc("\xe2\x82"
		   "A",
	    3, "\"\\ufffd\\ufffdA\"");
	assert_esc("\xc3\"", 2, "\"\\ufffd\\\"\"");

	/* every control byte escaped, and the round trip is exact */
	for (i = 0; i < 31; i++)
		all[i] = (char)(i + 1);
	got = esc(all, 31);
	j = jm_parse(got, strlen(got));
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(memcmp(j->str, all, 31), 0);
	for (i = 0; got[i]; i++)
		ck_assert((unsigned char)got[i] >= 0x20);
	jm_free(j);
	free(got);
}
END_TEST

START_TEST(test_json_emitter)
{
	struct sbuf b;
	struct json j;
	struct jm *p;

	sbuf_init(&b);
	json_init(&j, &b);
	json_obj_begin(&j, NULL);
	json_str(&j, "s", "x\ny");
	json_str(&j, "none", NULL);
	json_u64(&j, "u", UINT64_MAX);
	json_i64(&j, "i", INT64_MIN);
	json_double(&j, "half", 0.5);
	json_double(&j, "tenth", 0.1);
	json_double(&j, "third", 1.0 / 3);
	json_double(&j, "nan", NAN);
	json_double(&j, "inf", INFINITY);
	json_double(&j, "big", 1e300);
	json_double(&j, "whole", 2.0);
	json_bool(&j, "t", true);
	json_null(&j, "z");
	json_arr_begin(&j, "a");
	json_u64(&j, NULL, 1);
	json_obj_begin(&j, NULL);
	json_obj_end(&j);
	json_arr_begin(&j, NULL);
	json_arr_end(&j);
	json_i32(&j, NULL, 2);
	json_arr_end(&j);
	json_obj_end(&j);
	ck_assert_str_eq(sbuf_str(&b),
	    "{\"s\":\"x\\ny\",\"none\":null,\"u\":\"18446744073709551615\","
	    "\"i\":\"-9223372036854775808\",\"half\":0.5,\"tenth\":0.1,"
	    "\"third\":0.33333333333333331,\"nan\":null,\"inf\":null,"
	    "\"big\":1e+300,\"whole\":2,\"t\":true,\"z\":null,"
	    "\"a\":[\"1\",{},[],2]}");
	p = jm_parse(b.buf, b.len);
	ck_assert_ptr_nonnull(p);
	ck_assert(jm_get(p, "third")->num == 1.0 / 3); /* exact round trip */
	jm_free(p);
	sbuf_free(&b);
}
END_TEST

START_TEST(test_fmt_summary)
{
	struct sbuf b;

	build_window();
	sbuf_init(&b);
	fmt_summary(&b, &win, &fctx);
	ck_assert_str_eq(sbuf_str(&b), summary_text);
	sbuf_free(&b);
}
END_TEST

START_TEST(test_fmt_summary_unknown)
{
	Vitals__Window w = VITALS__WINDOW__INIT;
	Vitals__Task t = mk_task(9, "idle", "idle", 0, 0, 0);
	Vitals__Task *tp = &t;
	struct sbuf b;

	/* no aggregate, no wall time, no hz: every figure n/a, none 0 % */
	w.n_procs = 1;
	w.procs = &tp;
	w.nprocs_total = 1;
	sbuf_init(&b);
	fmt_summary(&b, &w, &fctx);
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&b), "\n  n/a 9/idle: n/a user + n/a kernel\n"));
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&b), "\nn/a TOTAL: n/a user + n/a kernel\n"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "CPU busy n/a = user n/a + kernel n/a + irq n/a + softirq n/a\n"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "Pressure: n/a\n"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "Load: n/a / n/a / n/a"));
	ck_assert_ptr_null(strstr(sbuf_str(&b), "more processes"));
	sbuf_free(&b);
}
END_TEST

START_TEST(test_fmt_cpu)
{
	struct sbuf b;
	const char *s;

	build_window();
	sbuf_init(&b);
	fmt_cpu(&b, &win);
	s = sbuf_str(&b);
	ck_assert_ptr_nonnull(strstr(s,
	    "CPU window 42: 10.0s, USER_HZ 100, "
	    "1 CPUs online\n"));
	/* all: busy 960/4000 = 24.0 %, iowait 1.0 %, steal 2.5 % */
	ck_assert_ptr_nonnull(strstr(s,
	    "\n  all    -        24.0%   1.0%   2.5%        -        -     -"
	    "    -\n"));
	/* cpu0: 300/1000 = 30.0 %, avg 1500000 kHz, ratio 1.5/2 = 0.75 */
	ck_assert_ptr_nonnull(strstr(s,
	    "\n  cpu0   online   30.0%   1.0%   0.0%  1500000  2000000  0.75"
	    " 1024\n"));
	/* cpu1: offline, no deltas: n/a, never 0 % nor 0 ticks */
	ck_assert_ptr_nonnull(strstr(s,
	    "\n  cpu1   offline    n/a    n/a    n/a      n/a      n/a   n/a"
	    "  n/a\n"));
	/* the ticks behind the shares, a table of their own */
	ck_assert_ptr_nonnull(strstr(s,
	    "\n  ticks       busy    iowait     steal     total\n"
	    "  all          960        40       100      4000\n"
	    "  cpu0         300        10         0      1000\n"
	    "  cpu1         n/a       n/a       n/a       n/a\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "all ticks: user 700 nice 100 system 120 idle 2900\n"
	    "    iowait 40 irq 20 softirq 20 steal 100\n"
	    "    (guest 50, guest_nice 0: inside user, nice); 10 samples\n"));
	/* every line fits 80 columns */
	for (; *s; s = strchr(s, '\n') + 1)
		ck_assert_int_le(strcspn(s, "\n"), 80);
	sbuf_free(&b);
}
END_TEST

START_TEST(test_fmt_top)
{
	Vitals__TaskList tl = VITALS__TASK_LIST__INIT;
	Vitals__Task a = mk_task(1234, "burner", "burner", 950, 50, 10 * NS);
	Vitals__Task th = mk_task(1240, "burner", "worker-1", 30, 10, 20 * NS);
	Vitals__Task *v[1];
	struct sbuf b;

	/* machine share 1000/4000 = 25.0 %, normalised 1000/500 = 200.0 % */
	a.total_ticks = 4000;
	a.norm_ticks = 500;
	a.d_minflt = 3;
	a.rss_pages_max = 300;
	a.uid = VITALS_UID_UNKNOWN;
	v[0] = &a;
	tl.metric = VITALS__METRIC__METRIC_CPU;
	tl.from_wall_ns = 1700000000LL * NS;
	tl.to_wall_ns = 1700000060LL * NS;
	tl.hz = 100;
	tl.n_tasks = 1;
	tl.tasks = v;
	sbuf_init(&b);
	fmt_top(&b, &tl, &fctx);
	ck_assert_str_eq(sbuf_str(&b),
	    "Top 1 processes by cpu (sorted by utime+stime), USER_HZ 100,\n"
	    "  2023-11-14 22:13:20.000 to 2023-11-14 22:14:20.000 (1m00s):\n"
	    "   pid uid   core share   norm utime stime minflt majflt rss_kB  "
	    "name\n"
	    "  1234   ? 100.0% 25.0% 200.0%   950    50      3      0   1200  "
	    "burner\n");

	/* threads: tid, tgid, comm (process name); 40 ticks / 20 s = 2.0 % */
	th.tgid = 1234;
	th.exited = true;
	v[0] = &th;
	tl.threads = true;
	tl.metric = VITALS__METRIC__METRIC_MAJFLT;
	sbuf_reset(&b);
	fmt_top(&b, &tl, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "Top 1 threads by majflt"));
	/* 83 columns in full: the name gives way, marked (ASCII here) */
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "\n- 1240 1234 1000 2.0%   n/a  n/a    30    10      0      0      "
	    "0  worker-1 (bu~\n"));

	tl.n_tasks = 0;
	sbuf_reset(&b);
	fmt_top(&b, &tl, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "(no activity in the "
	    "range)"));
	sbuf_free(&b);
}
END_TEST

/* One foreground/background dataset: top, proc and the health line. */
START_TEST(test_fmt_state)
{
	Vitals__TaskList tl = VITALS__TASK_LIST__INIT;
	Vitals__ProcessInfo pi = VITALS__PROCESS_INFO__INIT;
	Vitals__HistoryPoint h1 = VITALS__HISTORY_POINT__INIT, h2 = h1, *hv[2];
	Vitals__FgbgWindow fw = VITALS__FGBG_WINDOW__INIT;
	Vitals__Counter c0 = VITALS__COUNTER__INIT, c1 = c0, *cv[2];
	Vitals__Window w = VITALS__WINDOW__INIT;
	Vitals__Task a = mk_task(4711, "com.example.app", "app", 30, 20, 0);
	Vitals__Task *v[1];
	struct sbuf b;

	/* (30 + 20) ticks at USER_HZ 100: 500 ms */
	a.uid = 10123;
	a.d_minflt = 400;
	a.d_majflt = 2;
	a.samples = 5;
	v[0] = &a;
	tl.metric = VITALS__METRIC__METRIC_CPU;
	tl.from_wall_ns = 1700000000LL * NS;
	tl.to_wall_ns = 1700000060LL * NS;
	tl.hz = 100;
	tl.n_tasks = 1;
	tl.tasks = v;
	tl.state = "background";
	sbuf_init(&b);
	fmt_top(&b, &tl, &fctx);
	ck_assert_str_eq(sbuf_str(&b),
	    "Top 1 processes in state background by cpu, 2023-11-14 "
	    "22:13:20.000 to 2023-11-14 22:14:20.000, USER_HZ 100 (only the "
	    "intervals they spent background):\n"
	    "      pid        uid     cpu_ms    utime    stime    minflt  "
	    "majflt samples  name\n"
	    "     4711      10123        500       30       20       400     "
	    "  2       5  com.example.app\n");
	tl.n_tasks = 0;
	sbuf_reset(&b);
	fmt_top(&b, &tl, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "(no process was active in state background)"));

	/* proc: the windows with activity in the state, then Σ */
	h1.wall_start_ns = 1700000000LL * NS;
	h1.wall_end_ns = 1700000010LL * NS;
	h1.hz = 100;
	h1.task = &a;
	h2 = h1;
	h2.wall_start_ns = 1700000010LL * NS;
	h2.wall_end_ns = 1700000020LL * NS;
	h2.level = 1;
	hv[0] = &h1;
	hv[1] = &h2;
	pi.history = hv;
	pi.n_history = 2;
	pi.state = "background";
	sbuf_reset(&b);
	fmt_process(&b, &pi, 4711, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "Process 4711 in state background: 2 windows\n"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "(roll-up level 1)\n"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "  Σ utime 60 stime 40 minflt 800 majflt 4\n"));
	pi.n_history = 0;
	sbuf_reset(&b);
	fmt_process(&b, &pi, 4711, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "(no activity in state background in the range)"));

	/* health: absent, on, and no part */
	fw.status = "absent";
	w.fgbg = &fw;
	sbuf_reset(&b);
	fmt_fgbg_health(&b, &w);
	ck_assert_str_eq(sbuf_str(&b),
	    "Foreground/background: absent (not Android, no Android "
	    "cpusets; fgbg = auto)\n");
	fw.status = "on";
	fw.cpuset = "/dev/cpuset";
	fw.reads = 12;
	c0.name = "cpuset";
	c0.value = 11;
	c1.name = "oom_score_adj";
	c1.value = 1;
	cv[0] = &c0;
	cv[1] = &c1;
	fw.sources = cv;
	fw.n_sources = 2;
	sbuf_reset(&b);
	fmt_fgbg_health(&b, &w);
	ck_assert_str_eq(sbuf_str(&b),
	    "Foreground/background: on, cpusets at /dev/cpuset; 12 states "
	    "read in the last window (cpuset 11, oom_score_adj 1), read "
	    "errors 0\n");
	w.fgbg = NULL;
	sbuf_reset(&b);
	fmt_fgbg_health(&b, &w);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "off (fgbg = off)"));
	sbuf_free(&b);
}
END_TEST

START_TEST(test_fmt_process)
{
	/*
	 * Two windows of 10 s: 500 + 100 ticks (60.0 %), then 200 + 0 over
	 * 5 s of samples (40.0 %). Σ: 800 ticks over 15 s = 8 s / 15 s =
	 * 53.3 %; machine share 800 / (4000 + 2000) = 13.3 %.
	 */
	Vitals__Task w1 = mk_task(4321, "app", "app", 500, 100, 10 * NS);
	Vitals__Task w2 = mk_task(4321, "app", "app", 200, 0, 5 * NS);
	Vitals__Task t1 = mk_task(4322, "app", "RenderThread", 300, 0, 10 * NS);
	Vitals__Task t2 = mk_task(4323, "app", "main", 50, 50, 10 * NS);
	Vitals__Task t1b = mk_task(4322, "app", "RenderThread", 100, 0, 5 * NS);
	Vitals__HistoryPoint h1 = VITALS__HISTORY_POINT__INIT;
	Vitals__HistoryPoint h2 = VITALS__HISTORY_POINT__INIT;
	Vitals__HistoryPoint p1 = VITALS__HISTORY_POINT__INIT;
	Vitals__HistoryPoint p2 = VITALS__HISTORY_POINT__INIT;
	Vitals__HistoryPoint p3 = VITALS__HISTORY_POINT__INIT;
	Vitals__HistoryPoint *hist[2] = { &h1, &h2 };
	Vitals__HistoryPoint *thr[3] = { &p2, &p1, &p3 };
	Vitals__ProcessInfo pi = VITALS__PROCESS_INFO__INIT;
	struct sbuf b;
	const char *s;

	w1.total_ticks = 4000;
	w2.total_ticks = 2000;
	w1.starttime = w2.starttime = 777;
	w1.d_majflt = 2;
	w2.d_majflt = 1;
	w1.rss_pages_max = 100;
	w2.rss_pages_max = 250;
	h1.wall_start_ns = 1700000000LL * NS;
	h1.wall_end_ns = 1700000010LL * NS;
	h1.hz = 100;
	h1.task = &w1;
	h2.wall_start_ns = 1700000010LL * NS;
	h2.wall_end_ns = 1700000020LL * NS;
	h2.hz = 100;
	h2.task = &w2;
	p1.hz = p2.hz = p3.hz = 100;
	p1.task = &t1;
	p2.task = &t2;
	p3.task = &t1b;
	pi.n_history = 2;
	pi.history = hist;
	pi.n_threads = 3;
	pi.threads = thr;
	sbuf_init(&b);
	fmt_process(&b, &pi, 4321, &fctx);
	s = sbuf_str(&b);
	ck_assert_ptr_nonnull(strstr(s, "Process 4321: 2 windows (app)\n"));
	/* the rows were wider than 80 columns: now the time of day under a
	 * date line, columns as wide as their data */
	ck_assert_ptr_nonnull(strstr(s,
	    "  windows from 2023-11-14 (local time):\n"
	    "  start       len  core share norm utime stime minflt majflt "
	    "rss_kB\n"
	    "  22:13:20  10.0s 60.0% 15.0%  n/a   500   100      0      2    "
	    "400\n"
	    "  22:13:30  10.0s 40.0% 10.0%  n/a   200     0      0      1   "
	    "1000\n"
	    "  Σ 777     20.0s 53.3% 13.3%  n/a   700   100      0      3   "
	    "1000  2 windows\n"));
	/* threads Σ per tid, by CPU: 4322 400 ticks / 15 s = 26.7 %, then
	 * 4323 100 / 10 s = 10.0 % */
	ck_assert_ptr_nonnull(strstr(s,
	    "Threads: 2 (Σ over the range, sorted by utime+stime)\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "      tid  core share norm utime stime minflt majflt rss_kB  "
	    "comm\n"
	    "     4322 26.7%   n/a  n/a   400     0      0      0      0  "
	    "RenderThread\n"
	    "     4323 10.0%   n/a  n/a    50    50      0      0      0  "
	    "main\n"));
	sbuf_free(&b);
}
END_TEST

START_TEST(test_fmt_health)
{
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__WindowHealth wh = VITALS__WINDOW_HEALTH__INIT;
	Vitals__StoreHealth st = VITALS__STORE_HEALTH__INIT;
	Vitals__ControlHealth ct = VITALS__CONTROL_HEALTH__INIT;
	Vitals__Counter inv = VITALS__COUNTER__INIT, cs = VITALS__COUNTER__INIT;
	Vitals__Counter cm = VITALS__COUNTER__INIT;
	Vitals__Counter *invv[1] = { &inv }, *csv[1] = { &cs },
			*cmv[1] = { &cm };
	struct sbuf b;
	const char *s;

	build_window();
	inv.name = "vanished";
	inv.value = 3;
	win.n_invalid_deltas = 1;
	win.invalid_deltas = invv;
	/* own cpu: 60000 + 40000 us over 10 s = 1.0 % of a core */
	wh.self_utime_us = 60000;
	wh.self_stime_us = 40000;
	cs.name = "procs";
	cs.value = 50000000; /* 10 samples: 5000 us each */
	cm.name = "procs";
	cm.value = 9000000;
	wh.n_coll_ns_sum = 1;
	wh.coll_ns_sum = csv;
	wh.n_coll_ns_max = 1;
	wh.coll_ns_max = cmv;
	wh.sample_ns_sum = 60000000;
	wh.sample_ns_max = 11000000;
	wh.tick_late_ns_sum = 20000000; /* 10 samples: 2000 us each */
	wh.tick_late_ns_max = 5000000;
	wh.tick_late_held_ns_sum = 7000000;
	wh.tick_late_runq_ns_sum = 9000000;
	wh.tick_late_max_held_ns = 1000000;
	wh.tick_late_max_runq_ns = 3500000;
	win.health = &wh;
	st.state = "ok";
	st.windows_written = 12;
	st.commit_ns_last = 1500000;
	st.commit_ns_max = 2500000;
	ct.connections = 1;
	ct.requests = 9;
	ct.denied = 2;
	ct.queries = 3;
	ct.query_ns_max = 2500000;
	h.last = &win;
	h.store = &st;
	h.control = &ct;
	h.interval_ms = 100;
	h.uptime_ns = 125 * NS;
	h.burst_until_mono_ns = fctx.now_mono_ns + 4 * NS;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	ck_assert_ptr_nonnull(strstr(s,
	    "vitalsd up 2m05s, sampling every 100 "
	    "ms (burst, 4.0s left)\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "Last window 42: 10.0s, samples 10, "
	    "valid 10\n  invalid samples: none\n  dropped deltas: vanished "
	    "3\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "  own cpu: 1.0% of a core (user 60000 "
	    "us + sys 40000 us over 10.0s)\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "  cost per sample, avg/max us: procs "
	    "5000/9000; whole sample 6000/11000\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "  timer lateness avg/max us: "
	    "2000/5000\n  of it, us: held by a callback 7000, waiting for a "
	    "CPU 9000 (sum); latest tick 1000 + 3500\n"));
	sbuf_free(&b);
	/* no schedstat: the CPU wait is unknown, not 0 */
	wh.tick_late_runq_absent = true;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	ck_assert_ptr_nonnull(strstr(s,
	    "  of it, us: held by a callback 7000, waiting for a CPU unknown "
	    "(no schedstat); latest tick 1000\n"));
	wh.tick_late_runq_absent = false;
	/* no identity asked or read: no line */
	ck_assert_ptr_null(strstr(s, "identities:"));
	sbuf_free(&b);
	/* the identity worker's counts (doc/metrics.md "Identity reads") */
	wh.ident_queued = 7;
	wh.ident_done = 6;
	wh.ident_stale = 1;
	wh.ident_full = 2;
	wh.ident_pending = 1;
	wh.ident_loop = 3;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	ck_assert_ptr_nonnull(strstr(s,
	    "  identities: 7 queued to the worker, 6 answered (1 stale: "
	    "instance gone), 2 refused (queue full), 1 pending; 3 read on "
	    "the loop\n"));
	wh.ident_queued = wh.ident_done = wh.ident_stale = 0;
	wh.ident_full = wh.ident_pending = wh.ident_loop = 0;
	/* no walk read off the loop: no line */
	ck_assert_ptr_null(strstr(s, "full walks"));
	sbuf_free(&b);
	/* full walks read on the walk's worker (doc/metrics.md "Full walks
	 * off the loop") */
	wh.walks_off_loop = 9;
	wh.walks_dropped = 1;
	wh.walk_wait_ns_max = 6250000;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "  full walks read off the loop: 9, 1 dropped (walked on the "
	    "loop); longest wait for one 6.250 ms\n"));
	wh.walks_off_loop = wh.walks_dropped = 0;
	wh.walk_wait_ns_max = 0;
	/* no directory listed or skipped (not the /proc scan): no line */
	ck_assert_ptr_null(strstr(sbuf_str(&b), "procfs listings"));
	sbuf_free(&b);
	/* the /proc scan's listings (doc/metrics.md "Listings skipped") */
	wh.lists_read = 4;
	wh.lists_skipped = 6;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "  procfs listings: 4 read, 6 skipped (no fork since the last)\n"));
	wh.lists_read = wh.lists_skipped = 0;
	sbuf_free(&b);
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	ck_assert_ptr_nonnull(strstr(s,
	    "  store queries 3 (slowest 2.500 ms), "
	    "queued 0\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "Store: ok, 0 bytes; windows written "
	    "12,"));
	ck_assert_ptr_nonnull(strstr(s, "commit last 1.500 ms max 2.500 ms"));
	ck_assert_ptr_nonnull(strstr(s,
	    "Control: 1 connections; accepted 0, "
	    "requests 9, denied 2,"));
	ck_assert_ptr_nonnull(strstr(s, "refused at a cap 0\n"));
	/* a wall clock the store does not believe yet says so */
	ck_assert_ptr_null(strstr(s, "wall clock"));
	ck_assert_ptr_null(strstr(s, "Provenance"));
	sbuf_free(&b);
	{
		Vitals__Provenance pv = VITALS__PROVENANCE__INIT;

		pv.boot_id = "b-1";
		pv.kernel_release = "5.10.198-android13";
		pv.vitalsd_version = "0.1.0";
		pv.btime_s = 0;
		pv.build_fingerprint =
		    "google/oriole:14/UQ1A:user/release-keys";
		pv.fingerprint_source = "property";
		h.provenance = &pv;
		sbuf_init(&b);
		fmt_health(&b, &h, &fctx);
		s = sbuf_str(&b);
		ck_assert_msg(
		    strstr(s,
			"Provenance: vitalsd 0.1.0; kernel "
			"5.10.198-android13; boot b-1, booted n/a "
			"(btime 0)\n  build fingerprint: "
			"google/oriole:14/UQ1A:user/release-keys\n") != NULL,
		    "%s", s);
		sbuf_free(&b);
		pv.fingerprint_source = "none";
		sbuf_init(&b);
		fmt_health(&b, &h, &fctx);
		ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
		    "  build fingerprint: none (no system properties: not "
		    "Android)\n"));
		h.provenance = NULL;
	}
	sbuf_free(&b);
	st.clock_suspect = true;
	st.clock_ahead_ns = 87600LL * 3600 * NS;
	st.clock_deferred = 3;
	st.clock_held = 2832;
	ct.cap_refused = 7;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	ck_assert_msg(
	    strstr(s,
		"  wall clock 87600.0 h ahead of the stored "
		"windows, not confirmed: deletions by wall time wait (2832 "
		"windows held)\n") != NULL,
	    "%s", s);
	ck_assert_ptr_nonnull(strstr(s,
	    "  maintenance passes that waited for "
	    "the wall clock 3\n"));
	ck_assert_ptr_nonnull(strstr(s, "refused at a cap 7\n"));
	win.health = NULL;
	win.n_invalid_deltas = 0;
	sbuf_free(&b);
}
END_TEST

START_TEST(test_fmt_burst)
{
	Vitals__BurstAck a = VITALS__BURST_ACK__INIT;
	struct sbuf b;

	a.duration_ms = 10000;
	a.interval_ms = 100;
	sbuf_init(&b);
	fmt_burst(&b, &a, 0);
	ck_assert_str_eq(sbuf_str(&b),
	    "burst: sampling every 100 ms for "
	    "10.0 s\n");
	sbuf_reset(&b);
	fmt_burst(&b, &a, 30000);
	ck_assert_str_eq(sbuf_str(&b),
	    "burst: sampling every 100 ms for "
	    "10.0 s (asked 30.0 s; the daemon caps a burst)\n");
	sbuf_free(&b);
}
END_TEST

static Suite *
client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_duration_ok);
	tcase_add_test(tc, test_duration_bad);
	tcase_add_test(tc, test_duration_format);
	tcase_add_test(tc, test_uint_parse);
	tcase_add_test(tc, test_json_escape);
	tcase_add_test(tc, test_json_emitter);
	tcase_add_test(tc, test_fmt_summary);
	tcase_add_test(tc, test_fmt_summary_unknown);
	tcase_add_test(tc, test_fmt_cpu);
	tcase_add_test(tc, test_fmt_top);
	tcase_add_test(tc, test_fmt_process);
	tcase_add_test(tc, test_fmt_state);
	tcase_add_test(tc, test_fmt_health);
	tcase_add_test(tc, test_fmt_burst);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* rendered times are local: pin the zone */
	setenv("TZ", "UTC", 1);
	tzset();
	return tu_run(client_suite());
}
