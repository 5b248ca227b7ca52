/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tables that fit: every formatter fed long and odd data (7-digit pids,
 * the largest uid, 15-byte comms, long UTF-8 command lines, numbers of 12
 * digits and more) prints no line wider than 80 display columns (code
 * points, not bytes), in the order of the figure it prints; names are
 * abbreviated with the locale's marker, numbers never. And the sparkline:
 * levels, gaps, buckets, UTF-8 and ASCII.
 */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "client_fixture.h"

#define LONG_NAME                                                     \
	"/system/priv-app/SomeVeryLongApplicationName/oat/arm64/"     \
	"com.example.an.application.with.a.long.name:remote_service_" \
	"process --flag=value \xc3\xa9\xc3\xa8\xe2\x82\xac"

static const struct fmt_ctx wide = { 110500000000LL, 4, false, 0, true };

/* Every line of s at most 80 columns; the number of lines. */
static size_t
assert_fits(const char *s)
{
	size_t n = 0;

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		ck_assert_msg(text_ncols(s, len) <= TEXT_WIDTH,
		    "%zu columns: '%.*s'", text_ncols(s, len), (int)len, s);
		n++;
		s += len + (nl != NULL);
	}
	return n;
}

/* a before b in s, both present */
static void
assert_order(const char *s, const char *a, const char *b)
{
	const char *pa = strstr(s, a), *pb = strstr(s, b);

	ck_assert_msg(pa && pb && pa < pb, "'%s' not before '%s' in\n%s", a, b,
	    s);
}

static Vitals__Task
odd_task(int32_t id, const char *comm, uint64_t ticks)
{
	Vitals__Task t = mk_task(id, LONG_NAME, comm, ticks, ticks / 3,
	    60 * NS);

	t.uid = 4294967294u;
	t.tgid = id;
	t.d_minflt = 123456789012ULL;
	t.d_majflt = 9876543;
	t.rss_pages_max = 2500000000ULL;
	t.total_ticks = 24000;
	t.norm_ticks = 6000;
	t.starttime = 18446744073709551ULL;
	t.wtd_source = "cap";
	t.wtd_ticks = (double)ticks * 0.5;
	return t;
}

START_TEST(test_top_fits)
{
	Vitals__Task a = odd_task(9999999, "very_long_comm_", 5000);
	Vitals__Task b = odd_task(1234567, "another_long_cm", 9000);
	Vitals__Task c = odd_task(42, "x", 7);
	Vitals__Task *v[3] = { &a, &b, &c };
	Vitals__TaskList tl = VITALS__TASK_LIST__INIT;
	Vitals__Metric m[] = { VITALS__METRIC__METRIC_CPU,
		VITALS__METRIC__METRIC_WEIGHTED, VITALS__METRIC__METRIC_RSS };
	struct sbuf o;
	size_t i;

	tl.tasks = v;
	tl.n_tasks = 3;
	tl.hz = 100;
	tl.from_wall_ns = 1700000000LL * NS;
	tl.to_wall_ns = 1700003600LL * NS;
	sbuf_init(&o);
	for (i = 0; i < 3; i++) {
		tl.metric = m[i];
		tl.threads = i == 1;
		a.rss_pages_max = i == 2 ? 1 : 2500000000ULL;
		sbuf_reset(&o);
		fmt_top(&o, &tl, &wide);
		assert_fits(sbuf_str(&o));
		/* the order of the figure: b (9000 ticks) before a (5000)
		 * before c; by rss, a's one page last */
		if (i < 2) {
			assert_order(sbuf_str(&o), " 1234567 ", " 9999999 ");
			assert_order(sbuf_str(&o), " 9999999 ", " 42 ");
		} else {
			assert_order(sbuf_str(&o), " 42 ", " 9999999 ");
		}
		/* numbers whole; the name cut with the ASCII marker */
		ck_assert_ptr_nonnull(strstr(sbuf_str(&o), " 123456789012"));
		ck_assert_ptr_nonnull(strstr(sbuf_str(&o), " 10000000000 "));
		ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "~\n"));
		if (i == 1)
			ck_assert_ptr_nonnull(
			    strstr(sbuf_str(&o), "very_long_comm_ ("));
	}
	/* UTF-8: the marker is U+2026, and the width counts code points */
	text_set_utf8(true);
	tl.metric = VITALS__METRIC__METRIC_CPU;
	tl.threads = false;
	sbuf_reset(&o);
	fmt_top(&o, &tl, &wide);
	assert_fits(sbuf_str(&o));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "\xe2\x80\xa6\n"));
	text_set_utf8(false);
	sbuf_free(&o);
}
END_TEST

START_TEST(test_proc_fits)
{
	Vitals__Task w[6], th[2];
	Vitals__HistoryPoint h[6], p[2];
	Vitals__HistoryPoint *hv[6], *pv[2];
	Vitals__ProcessInfo pi = VITALS__PROCESS_INFO__INIT;
	Vitals__SchedTask st = VITALS__SCHED_TASK__INIT;
	struct sbuf o;
	size_t i;

	for (i = 0; i < 6; i++) {
		Vitals__HistoryPoint z = VITALS__HISTORY_POINT__INIT;

		w[i] = odd_task(9999999, "very_long_comm_", 100 * (i + 1));
		h[i] = z;
		/* a hole of two windows between the 3rd and the 4th */
		h[i].wall_start_ns =
		    (1700000000LL + 10 * (int64_t)i + (i >= 3 ? 20 : 0)) * NS;
		h[i].wall_end_ns = h[i].wall_start_ns + 10 * NS;
		h[i].hz = 100;
		h[i].level = i == 5 ? 2 : 0;
		h[i].task = &w[i];
		hv[i] = &h[i];
	}
	for (i = 0; i < 2; i++) {
		Vitals__HistoryPoint z = VITALS__HISTORY_POINT__INIT;

		th[i] = odd_task(9999990 + (int32_t)i,
		    i ? "RenderThread_lon" : "small", i ? 900 : 10);
		p[i] = z;
		p[i].hz = 100;
		p[i].task = &th[i];
		p[i].sched = &st;
		pv[i] = &p[i];
	}
	st.id = 9999991;
	st.tgid = 9999999;
	st.uid = 4294967294u;
	st.oncpu_ns = 123456789012345ULL;
	st.rq_count = 987654321;
	st.rq_ns = 98765432109876ULL;
	st.name = LONG_NAME;
	pi.history = hv;
	pi.n_history = 6;
	pi.threads = pv;
	pi.n_threads = 2;
	pi.cgroup = "/sys/fs/cgroup/some/very/long/cgroup/path/that/goes/on/"
		    "and/on/uid_1000/pid_9999999";
	pi.sched = &st;
	sbuf_init(&o);
	fmt_process(&o, &pi, 9999999, &wide);
	fmt_sched_proc(&o, &pi);
	assert_fits(sbuf_str(&o));
	/* threads by utime+stime: the 900-tick one first */
	assert_order(sbuf_str(&o), " 9999991 ", " 9999990 ");
	/* the sparklines, one per figure; the hole is two gaps */
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "History, oldest left"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "  core "));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "_.-  =*#\n"));
	sbuf_free(&o);
}
END_TEST

START_TEST(test_sched_fits)
{
	Vitals__SchedTask s[3];
	Vitals__SchedTask *v[3];
	Vitals__TaskList tl = VITALS__TASK_LIST__INIT;
	Vitals__SchedWindow sw = VITALS__SCHED_WINDOW__INIT;
	Vitals__SchedUid u[2], *uv[2];
	Vitals__Window win1 = VITALS__WINDOW__INIT, *wv[1] = { &win1 };
	struct sbuf o;
	size_t i;

	for (i = 0; i < 3; i++) {
		Vitals__SchedTask z = VITALS__SCHED_TASK__INIT;

		s[i] = z;
		s[i].id = 9999990 + (int32_t)i;
		s[i].tgid = 9999999;
		s[i].uid = 4294967294u;
		s[i].oncpu_ns = 100000000000000ULL * (i == 1 ? 3 : i + 1);
		s[i].rq_count = 987654321;
		s[i].rq_ns = 98765432109876ULL / (i + 1);
		s[i].name = LONG_NAME;
		v[i] = &s[i];
	}
	for (i = 0; i < 2; i++) {
		Vitals__SchedUid z = VITALS__SCHED_UID__INIT;

		u[i] = z;
		u[i].uid = i ? 4294967294u : 10123;
		u[i].oncpu_ns = 123456789012345ULL * (i + 1);
		u[i].rq_count = 987654321;
		u[i].rq_ns = 98765432109876ULL;
		uv[i] = &u[i];
	}
	tl.sched = v;
	tl.n_sched = 3;
	tl.to_wall_ns = 60 * NS;
	sbuf_init(&o);
	for (i = 0; i < 2; i++) {
		tl.threads = i;
		sbuf_reset(&o);
		fmt_sched_top(&o, &tl);
		assert_fits(sbuf_str(&o));
		/* on-CPU: 3e14 (9999991 and 9999992 tie: by id), then 1e14 */
		assert_order(sbuf_str(&o), " 9999991 ", " 9999992 ");
		assert_order(sbuf_str(&o), " 9999992 ", " 9999990 ");
	}
	sw.uids = uv;
	sw.n_uids = 2;
	win1.sched = &sw;
	sbuf_reset(&o);
	fmt_sched_uids(&o, wv, 1, 0);
	assert_fits(sbuf_str(&o));
	assert_order(sbuf_str(&o), "4294967294 ", "10123 ");
	sbuf_free(&o);
}
END_TEST

START_TEST(test_window_views_fit)
{
	Vitals__Task a = odd_task(9999999, "very_long_comm_", 5000);
	Vitals__Task b = odd_task(77, "b", 9000);
	Vitals__Task *v[2] = { &a, &b };
	Vitals__Window w2, *wv[2];
	struct sbuf o;
	const char *extra;

	build_window();
	win.procs = v;
	win.n_procs = 2;
	sbuf_init(&o);
	fmt_watch_top(&o, &win, &wide);
	assert_fits(sbuf_str(&o));
	assert_order(sbuf_str(&o), " 77 ", " 9999999 ");
	sbuf_reset(&o);
	fmt_cpu(&o, &win);
	assert_fits(sbuf_str(&o));
	/* the summary: dumpsys's lines are AOSP's (not fitted); vitals' own
	 * section after the blank line fits */
	sbuf_reset(&o);
	fmt_summary(&o, &win, &wide);
	extra = strstr(sbuf_str(&o), "\n\nvitals: ");
	ck_assert_ptr_nonnull(extra);
	assert_fits(extra);
	/* cpu --since: a second window 30 s later (two windows missing) */
	w2 = win;
	w2.wall_start_ns = win.wall_start_ns + 30 * NS;
	w2.wall_end_ns = win.wall_end_ns + 30 * NS;
	wv[0] = &win;
	wv[1] = &w2;
	sbuf_reset(&o);
	fmt_cpu_spark(&o, wv, 2, &wide);
	assert_fits(sbuf_str(&o));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "  busy "));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "_  _\n"));
	sbuf_free(&o);
}
END_TEST

/* Prose views go through text_fit (as vitals does): wrapped at spaces. */
START_TEST(test_prose_fits)
{
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__StoreHealth st = VITALS__STORE_HEALTH__INIT;
	Vitals__ControlHealth ct = VITALS__CONTROL_HEALTH__INIT;
	Vitals__TraceList tl = VITALS__TRACE_LIST__INIT;
	Vitals__TraceWindow tw = VITALS__TRACE_WINDOW__INIT;
	Vitals__TraceWindow *twv[1] = { &tw };
	Vitals__TraceSlice sl[2], *slv[2];
	Vitals__HeapprofdList hl = VITALS__HEAPPROFD_LIST__INIT;
	Vitals__HeapprofdSession hs = VITALS__HEAPPROFD_SESSION__INIT;
	Vitals__HeapprofdSession *hsv[1] = { &hs };
	char *missing[3] = { "binder/binder_transaction",
		"binder/binder_transaction_received", "gpu_mem/gpu_mem_total" };
	struct sbuf o, f;
	size_t i;

	build_window();
	st.state = "ok";
	st.db_bytes = 123456789012ULL;
	st.windows_written = 987654321;
	st.corrupt_path = "/data/misc/vitalsd/vitals.db.corrupt-1700000000";
	ct.accepted = 1234567890;
	h.uptime_ns = 86400ULL * 400 * NS;
	h.interval_ms = 1000;
	h.last = &win;
	h.store = &st;
	h.control = &ct;
	for (i = 0; i < 2; i++) {
		Vitals__TraceSlice z = VITALS__TRACE_SLICE__INIT;

		sl[i] = z;
		sl[i].kind = "slice";
		sl[i].pid = 9999999;
		sl[i].tid = 9999998;
		sl[i].count = 4000000000u;
		sl[i].total_ns = i ? 999999999999999ULL : 5;
		sl[i].max_ns = 99999999999ULL;
		sl[i].name = LONG_NAME;
		slv[i] = &sl[i];
	}
	tw.wall_start_ns = 1700000000LL * NS;
	tw.wall_end_ns = 1700000010LL * NS;
	tw.state = "on";
	tw.missing = missing;
	tw.n_missing = 3;
	tw.slice = slv;
	tw.n_slice = 2;
	tl.windows = twv;
	tl.n_windows = 1;
	hs.id = 123456;
	hs.created_wall_ns = 1700000000LL * NS;
	hs.rule = "a-long-rule-name-for-a-process";
	hs.by_rule = true;
	hs.target = LONG_NAME;
	hs.outcome = "refused";
	hs.message = "one session per target in the last hour, try later";
	hl.sessions = hsv;
	hl.n_sessions = 1;
	sbuf_init(&o);
	sbuf_init(&f);
	fmt_health(&o, &h, &wide);
	fmt_trace(&o, &tl);
	text_fit(&f, sbuf_str(&o), TEXT_WIDTH);
	assert_fits(sbuf_str(&f));
	/* wrapping keeps every word: nothing lost */
	ck_assert_ptr_nonnull(strstr(sbuf_str(&f), "gpu_mem/gpu_mem_total"));
	/* slices by total time */
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "slices, sorted by"));
	assert_order(strstr(sbuf_str(&o), "slices, sorted by"),
	    "1000000000.000", " 0.000");
	/* the session table fits by itself */
	sbuf_reset(&o);
	fmt_hp_list(&o, &hl);
	assert_fits(sbuf_str(&o));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "123456"));
	sbuf_free(&o);
	sbuf_free(&f);
}
END_TEST

/* A row too wide even with the name at its least wraps whole: every row
 * takes the same lines, the later ones indented; numbers intact. */
START_TEST(test_table_wraps)
{
	struct table *t = table_new();
	struct sbuf o;
	size_t i, lines;

	for (i = 0; i < 8; i++)
		table_col(t, "n", 0, 1, 0);
	table_col(t, "name", 0, 2, TABLE_LEFT | TABLE_FLEX);
	for (i = 0; i < 8; i++)
		table_cell(t, "%llu", 18446744073709551615ULL);
	table_label(t, "a\033[31mname");
	sbuf_init(&o);
	table_render(t, &o, TEXT_WIDTH);
	lines = assert_fits(sbuf_str(&o));
	/* header and row take the same number of lines, at least two */
	ck_assert_uint_ge(lines, 4);
	ck_assert_uint_eq(lines % 2, 0);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "18446744073709551615"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "\n    "));
	/* a control byte never reaches the terminal */
	ck_assert_ptr_null(strchr(sbuf_str(&o), '\033'));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "a?[31mname"));
	ck_assert_uint_eq(table_rows(t), 1);
	table_free(t);
	sbuf_free(&o);
}
END_TEST

START_TEST(test_text_fit_abbrev)
{
	struct sbuf o;

	sbuf_init(&o);
	text_set_utf8(false);
	text_abbrev(&o, "abcdef", 4);
	ck_assert_str_eq(sbuf_str(&o), "abc~");
	sbuf_reset(&o);
	text_abbrev(&o, "abcd", 4);
	ck_assert_str_eq(sbuf_str(&o), "abcd");
	text_set_utf8(true);
	sbuf_reset(&o);
	/* é is two bytes and one column: never cut inside */
	text_abbrev(&o, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3);
	ck_assert_str_eq(sbuf_str(&o), "\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	ck_assert_uint_eq(text_cols(sbuf_str(&o)), 3);
	text_set_utf8(false);
	sbuf_reset(&o);
	text_fit(&o, "  one two three four five six", 20);
	ck_assert_str_eq(sbuf_str(&o),
	    "  one two three four\n      five six\n");
	sbuf_free(&o);
}
END_TEST

/* The series portion of the row whose line starts with head (ASCII). */
static const char *
spark_of(const char *s, const char *head, char *buf, size_t len)
{
	const char *p = strstr(s, head), *nl, *q;

	ck_assert_msg(p != NULL, "no row '%s' in\n%s", head, s);
	nl = strchr(p, '\n');
	ck_assert_ptr_nonnull(nl);
	/* the series starts after "lo..hi" and its padding */
	q = strstr(p, "..");
	ck_assert_ptr_nonnull(q);
	while (q < nl && *q != ' ')
		q++;
	while (q < nl && *q == ' ')
		q++;
	if (q == nl) { /* on its own line, indented by 4 */
		q = nl + 1;
		ck_assert_int_eq(strncmp(q, "    ", 4), 0);
		q += 4;
		nl = strchr(q, '\n');
		ck_assert_ptr_nonnull(nl);
	}
	snprintf(buf, len, "%.*s", (int)(nl - q), q);
	return buf;
}

/*
 * gpumem --since: 240 points, two GPUs, a 15-byte comm with a 7-digit
 * pid, bytes of 15 digits, a process gone for the middle third (gaps, not
 * the lowest level) and one at 0 bytes for its first half (the lowest
 * level, not gaps): every line within 80 columns, in ASCII and UTF-8.
 */
START_TEST(test_gpumem_span_fits)
{
	enum { NP = 240 };
	static int64_t ends[NP];
	static uint64_t b[4][NP];
	static uint32_t idx[4][NP];
	Vitals__GpuMemState st = VITALS__GPU_MEM_STATE__INIT;
	Vitals__GpuMem g = VITALS__GPU_MEM__INIT;
	Vitals__GpuProc p[4], *pp[4];
	struct sbuf o, f;
	const char *name[4] = { "", "very_long_comm_", "zero_first", "" };
	const int32_t pid[4] = { 0, 9999999, 42, 0 };
	char buf[256];
	size_t i, k, n;
	int u;

	for (i = 0; i < NP; i++)
		ends[i] = (1700000000LL + 10 * (int64_t)i) * NS;
	for (k = 0; k < 4; k++) {
		Vitals__GpuProc z = VITALS__GPU_PROC__INIT;

		p[k] = z;
		p[k].gpu_id = k == 3 ? 1 : 0;
		p[k].pid = pid[k];
		p[k].name = (char *)name[k];
		for (i = n = 0; i < NP; i++) {
			if (k == 1 && i >= NP / 3 && i < 2 * NP / 3)
				continue; /* gone for the middle third */
			idx[k][n] = (uint32_t)i;
			b[k][n++] = k == 2 ? (i < NP / 2 ? 0 : 4096) :
					     999999999999999ULL - i;
		}
		p[k].series_bytes = b[k];
		p[k].series_index = idx[k];
		p[k].n_series_bytes = p[k].n_series_index = n;
		p[k].bytes = b[k][n - 1];
		pp[k] = &p[k];
	}
	st.state = (char *)"ok";
	st.source = (char *)"pinned";
	g.state = &st;
	g.procs = pp;
	g.n_procs = 4;
	g.since_ns = 2400 * NS;
	g.window_end_wall_ns = ends;
	g.n_window_end_wall_ns = NP;
	g.series_step = 1;
	sbuf_init(&o);
	sbuf_init(&f);
	for (u = 0; u < 2; u++) {
		text_set_utf8(u == 1);
		/* the rows fit by themselves; the table above is prose the
		 * client wraps (text_fit), which leaves them as they are */
		sbuf_reset(&o);
		fmt_gpumem_spark(&o, &g, &wide);
		assert_fits(sbuf_str(&o));
		sbuf_reset(&f);
		text_fit(&f, sbuf_str(&o), TEXT_WIDTH);
		ck_assert_str_eq(sbuf_str(&f), sbuf_str(&o));
		sbuf_reset(&o);
		fmt_gpumem(&o, &g, false);
		sbuf_reset(&f);
		text_fit(&f, sbuf_str(&o), TEXT_WIDTH);
		assert_fits(sbuf_str(&f));
		sbuf_reset(&o);
		fmt_gpumem_spark(&o, &g, &wide);
		/* a row per GPU total and process, GPU 0's first */
		assert_order(sbuf_str(&o), "  gpu 0 total ",
		    "  very_long_comm_ 9999999 ");
		assert_order(sbuf_str(&o), "  zero_first 42 ",
		    "  gpu 1 total ");
		/* numbers whole */
		ck_assert_ptr_nonnull(strstr(sbuf_str(&f), "999999999999760"));
	}
	text_set_utf8(false);
	sbuf_reset(&o);
	fmt_gpumem_spark(&o, &g, &wide);
	/* the middle third a run of gaps between two drawn stretches */
	spark_of(sbuf_str(&o), "  very_long_comm_ 9999999 ", buf, sizeof(buf));
	n = strlen(buf);
	ck_assert_uint_ge(n, 20);
	ck_assert(buf[0] != ' ' && buf[n - 1] != ' ');
	/* column c shows points [c·NP/n, (c+1)·NP/n): a space exactly
	 * where all of them fall in the middle third */
	for (i = 0; i < n; i++) {
		bool gap = i * NP / n >= NP / 3 &&
		    (i + 1) * NP / n <= 2 * NP / 3;

		ck_assert_msg((buf[i] == ' ') == gap, "column %zu of '%s'", i,
		    buf);
	}
	/* zero bytes are a level: its first half the lowest, no gap */
	spark_of(sbuf_str(&o), "  zero_first 42 ", buf, sizeof(buf));
	ck_assert_ptr_null(strchr(buf, ' '));
	ck_assert_uint_eq(buf[0], '_');
	ck_assert_uint_eq(buf[strlen(buf) - 1], '#');
	sbuf_free(&o);
	sbuf_free(&f);
}
END_TEST

/* ---------------------------------------------------------- sparkline */

START_TEST(test_spark_levels)
{
	double v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	double g[5] = { 0, NAN, 10, NAN, 5 };
	double flat[3] = { 4, 4, 4 };
	double none[2] = { NAN, NAN };
	struct sbuf o;

	sbuf_init(&o);
	text_set_utf8(false);
	spark_line(&o, v, 8, 80);
	ck_assert_str_eq(sbuf_str(&o), "_.:-=+*#");
	text_set_utf8(true);
	sbuf_reset(&o);
	spark_line(&o, v, 8, 80);
	ck_assert_str_eq(sbuf_str(&o),
	    "\xe2\x96\x81\xe2\x96\x82\xe2\x96\x83\xe2\x96\x84\xe2\x96\x85"
	    "\xe2\x96\x86\xe2\x96\x87\xe2\x96\x88");
	ck_assert_uint_eq(text_cols(sbuf_str(&o)), 8);
	text_set_utf8(false);
	/* unknown points are gaps, not the lowest level; 5 of 0..10 is
	 * level 3.5, rounded to 4 */
	sbuf_reset(&o);
	spark_line(&o, g, 5, 80);
	ck_assert_str_eq(sbuf_str(&o), "_ # =");
	/* a flat series on the lowest level; nothing known: all gaps */
	sbuf_reset(&o);
	spark_line(&o, flat, 3, 80);
	ck_assert_str_eq(sbuf_str(&o), "___");
	sbuf_reset(&o);
	spark_line(&o, none, 2, 80);
	ck_assert_str_eq(sbuf_str(&o), "  ");
	sbuf_free(&o);
}
END_TEST

START_TEST(test_spark_buckets)
{
	double v[100], lo, hi;
	struct sbuf o;
	size_t i;

	/* 100 points in 10 columns: each column the max of its 10; one
	 * spike in the 5th bucket, the 8th bucket unknown; the 0 of the
	 * first is hidden by its bucket's 1s */
	for (i = 0; i < 100; i++)
		v[i] = (i >= 70 && i < 80) ? NAN : 1;
	v[43] = 9;
	v[0] = 0;
	sbuf_init(&o);
	text_set_utf8(false);
	spark_line(&o, v, 100, 10);
	ck_assert_str_eq(sbuf_str(&o), "....#.. ..");
	ck_assert(spark_range(v, 100, &lo, &hi));
	ck_assert(lo == 0 && hi == 9);
	/* the row: label, range, the series within 80 columns */
	sbuf_reset(&o);
	spark_row(&o, "a-very-long-label", 10, "0", "9", 4, v, 100, TEXT_WIDTH);
	ck_assert_uint_le(text_cols(sbuf_str(&o)), TEXT_WIDTH + 1);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "a-very-lo~ 0..9"));
	sbuf_free(&o);
}
END_TEST

/* The locale decides: C is ASCII, C.UTF-8 UTF-8 (nl_langinfo). */
START_TEST(test_spark_locale)
{
	double v[2] = { 0, 1 };
	struct sbuf o;

	sbuf_init(&o);
	setenv("LC_ALL", "C", 1);
	text_locale_init();
	ck_assert(!text_utf8());
	spark_line(&o, v, 2, 80);
	ck_assert_str_eq(sbuf_str(&o), "_#");
	setenv("LC_ALL", "C.UTF-8", 1);
	text_locale_init();
	ck_assert(text_utf8());
	sbuf_reset(&o);
	spark_line(&o, v, 2, 80);
	ck_assert_str_eq(sbuf_str(&o), "\xe2\x96\x81\xe2\x96\x88");
	ck_assert_str_eq(text_ellipsis(), "\xe2\x80\xa6");
	unsetenv("LC_ALL");
	text_set_utf8(false);
	setlocale(LC_CTYPE, "C");
	sbuf_free(&o);
}
END_TEST

static Suite *
client_fit_suite(void)
{
	Suite *s = suite_create("client_fit");
	TCase *tc = tcase_create("fit");

	tcase_add_test(tc, test_top_fits);
	tcase_add_test(tc, test_proc_fits);
	tcase_add_test(tc, test_sched_fits);
	tcase_add_test(tc, test_window_views_fit);
	tcase_add_test(tc, test_prose_fits);
	tcase_add_test(tc, test_table_wraps);
	tcase_add_test(tc, test_text_fit_abbrev);
	tcase_add_test(tc, test_spark_levels);
	tcase_add_test(tc, test_spark_buckets);
	tcase_add_test(tc, test_spark_locale);
	tcase_add_test(tc, test_gpumem_span_fits);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(client_fit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
