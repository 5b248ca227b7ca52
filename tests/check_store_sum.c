/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-instance summaries of spans (store/store_tasksum.c): a top-N that
 * sums whole spans from their summaries gives what the windows one by
 * one give, on random ranges, through every change of the windows a
 * span holds: a window arriving late, roll-ups, retention, the size
 * bound, windows waiting in the spool, renamed tasks and reused pids;
 * and a damaged or missing summary only means its windows are read.
 *
 * VITALS_TEST_SCALE=S (CI's sanitizer build, .ci/run) divides the random
 * ranges of each comparison (at least 2 stay, with the first's history)
 * and the payload fuzz's 20,000 mutations (at least 2,000); the fixed
 * ranges (the whole span and beyond, an aligned hour, 10 min and minute,
 * one ns over an hour's edges) and every store change run at any scale.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
/* not aligned on any span: ranges and spans cut each other */
#define T0 (1700000000LL * NSEC_PER_SEC)
#define NPROC 24
#define NTHR 24

static char *dir;
static char path[PATH_MAX], spool[PATH_MAX];
static unsigned long rnd_state;

static unsigned
rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rnd_state >> 33) % n);
}

static void
setup(void)
{
	dir = tu_mkdtemp_db("sum", path, sizeof(path));
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
	rnd_state = 42;
	store_sum_off = false;
}

static void
teardown(void)
{
	store_sum_off = false;
	tu_rmtree(dir);
	free(dir);
}

/*
 * A 10 s window of `boot` at seq: a random part of NPROC processes and
 * NTHR threads active; process 3 renamed from seq 200 on, pid 7 reused
 * every 90 windows, figures with thirds in norm_ticks (sums that round).
 */
static struct window *
mkwin(const char *boot, uint64_t seq, int64_t wall0)
{
	struct window *w = window_new(seq, 0);
	struct window_task t;
	int i, th;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", boot);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = wall0 + w->mono_start_ns;
	w->wall_end_ns = wall0 + w->mono_end_ns;
	w->samples = w->samples_valid = 10;
	for (th = 0; th < 2; th++)
		for (i = 0; i < (th ? NTHR : NPROC); i++) {
			if (rnd(10) < 4)
				continue;
			/* one process only in the first 50 min */
			if (!th && i == NPROC - 1 && seq >= 300)
				continue;
			memset(&t, 0, sizeof(t));
			t.id = 100 + i + 1000 * th;
			t.tgid = th ? 100 + i % 5 : t.id;
			t.starttime = 5000 + (uint64_t)i;
			if (i == 7)
				t.starttime += seq / 90;
			t.uid = 1000 + (uint32_t)i;
			snprintf(t.comm, sizeof(t.comm), "%s%d", th ? "t" : "p",
			    i);
			window_task_set_namef(&t, "%s%d%s", th ? "thr" : "proc",
			    i, i == 3 && seq >= 200 ? "-renamed" : "");
			if (th)
				window_task_set_name(&t, t.comm);
			t.d_utime = rnd(50);
			t.d_stime = rnd(20);
			t.d_minflt = rnd(1000);
			t.d_majflt = rnd(3);
			t.samples = 1 + rnd(10);
			t.wall_ns = t.samples * SEC;
			t.total_ticks = 200 * t.samples;
			t.norm_ticks = (double)t.total_ticks / 3.0;
			t.rss_pages_max = 100 + rnd(1000);
			t.rss_pages_last = t.rss_pages_max - rnd(50);
			t.born = rnd(20) == 0;
			t.exited = rnd(20) == 0;
			ck_assert_int_eq(window_add_task(w, th, &t), 0);
		}
	return w;
}

static void
put(struct store *s, const char *boot, uint64_t seq, int64_t wall0)
{
	struct window *w = mkwin(boot, seq, wall0);

	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

static long long
q_int(struct store *s, const char *sql)
{
	char buf[64];

	ck_assert_int_eq(store_exec(s, sql, buf, sizeof(buf)), 0);
	return atoll(buf);
}

/* Equal but for the last bits of norm_ticks, summed in another order. */
static void
task_same(const struct window_task *a, const struct window_task *b)
{
	struct window_task x = *a;

	ck_assert(
	    fabs(a->norm_ticks - b->norm_ticks) <= 1e-9 * fabs(b->norm_ticks));
	x.norm_ticks = b->norm_ticks;
	tu_task_eq(&x, b);
}

/* One range, both lists, a metric and a cut: summaries against windows. */
static void
same_top(struct store *r, int64_t from, int64_t to)
{
	struct window_task *a, *b;
	size_t na, nb, i;
	unsigned th, n = rnd(3) ? 0 : 1 + rnd(5);
	enum store_metric m = (enum store_metric)rnd(METRIC_RSS + 1);

	for (th = 0; th < 2; th++) {
		store_sum_off = false;
		ck_assert_int_eq(store_top(r, from, to, th, m, n, &a, &na), 0);
		store_sum_off = true;
		ck_assert_int_eq(store_top(r, from, to, th, m, n, &b, &nb), 0);
		store_sum_off = false;
		ck_assert_uint_eq(na, nb);
		for (i = 0; i < na; i++)
			task_same(&a[i], &b[i]);
		free(a);
		free(b);
	}
}

static void
same_hist(const struct store_hist *a, size_t na, const struct store_hist *b,
    size_t nb)
{
	size_t i;

	ck_assert_uint_eq(na, nb);
	for (i = 0; i < na; i++) {
		ck_assert_str_eq(a[i].boot_id, b[i].boot_id);
		ck_assert_uint_eq(a[i].level, b[i].level);
		ck_assert_int_eq(a[i].wall_start_ns, b[i].wall_start_ns);
		ck_assert_int_eq(a[i].mono_start_ns, b[i].mono_start_ns);
		tu_task_eq(&a[i].t, &b[i].t);
	}
}

/* A process's history (every instance of pid 107: reused), one
 * instance's, a process's threads: skipping hours by their summaries
 * gives the rows every window gives. */
static void
same_history(struct store *r, int64_t from, int64_t to)
{
	struct store_hist *a, *b;
	size_t na, nb;
	unsigned k;

	for (k = 0; k < 3; k++) {
		/* one instance of the reused pid (15 min), every instance of
		 * one, one process's only instance */
		int32_t id = k < 2 ? 107 : 100 + (int32_t)rnd(NPROC);
		uint64_t start = k == 0 ? 5007 + rnd(20) :
		    k == 1		? 0 :
					  5000 + (uint64_t)(id - 100);

		store_sum_off = false;
		ck_assert_int_eq(store_history(r, false, id, start, from, to,
				     &a, &na),
		    0);
		store_sum_off = true;
		ck_assert_int_eq(store_history(r, false, id, start, from, to,
				     &b, &nb),
		    0);
		store_sum_off = false;
		same_hist(a, na, b, nb);
		free(a);
		free(b);
	}
	store_sum_off = false;
	ck_assert_int_eq(store_thread_history(r, 102, 0, from, to, &a, &na), 0);
	store_sum_off = true;
	ck_assert_int_eq(store_thread_history(r, 102, 0, from, to, &b, &nb), 0);
	store_sum_off = false;
	same_hist(a, na, b, nb);
	free(a);
	free(b);
}

/* Random ranges over [lo, hi), and a few whole-span and edge cases. */
static void
same_ranges(struct store *r, int64_t lo, int64_t hi, unsigned k)
{
	int64_t len = hi - lo, from, to;
	unsigned i;

	k = (unsigned)tu_scaled(k, 2);
	same_top(r, lo - 3600 * SEC, hi + 3600 * SEC);
	same_history(r, lo - 3600 * SEC, hi + 3600 * SEC);
	same_top(r, lo, hi);
	/* exactly one hour, one 10 min, one minute span, aligned */
	from = (lo / (3600 * SEC) + 1) * 3600 * SEC;
	same_top(r, from, from + 3600 * SEC);
	same_top(r, from, from + 600 * SEC);
	same_top(r, from + 60 * SEC, from + 120 * SEC);
	same_top(r, from - 1, from + 3600 * SEC + 1);
	for (i = 0; i < k; i++) {
		from = lo - 600 * SEC + (int64_t)rnd(1000000) * (len / 1000000);
		to = from + 1 + (int64_t)rnd(1000000) * (len / 1000000);
		same_top(r, from, to);
		if (i % 4 == 0)
			same_history(r, from, to);
	}
}

/* Level 2 keeps its thread rows (the default: it drops them). */
static bool keep_threads;

/* a test edits task rows in place by their table's name: level 0 in
 * the main tables, not in tables per span (store_span.c) */
static bool edit_in_place;

static struct store *
open_opts(const char *sp, uint64_t max_bytes)
{
	struct store_opts o;
	struct store *s;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.rollup2_threads = keep_threads;
	o.rollup1_after_s = 4 * 3600;
	o.rollup2_after_s = 5 * 3600;
	o.retain_s = 6 * 3600;
	o.max_bytes = max_bytes;
	o.spool_path = sp;
	o.no_spans = edit_in_place;
	o.commit_s = 3600;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	return s;
}

START_TEST(test_sum_equal_through_changes)
{
	struct store *s;
	int64_t end = T0 + 1800 * 10 * SEC; /* 5 h of windows */
	long long nsum, nwin, n3600;
	char sql[256];
	uint64_t q;

	/* 0: level 2 keeps threads, so no roll-up changes an hour's sums;
	 * 1: it drops them, and the hours it rolls are summarised again */
	keep_threads = _i == 0;
	s = open_opts(NULL, 0);
	for (q = 0; q < 1800; q++)
		put(s, "boot-a", q, T0);
	/* no summary yet: every range window by window, the same */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM task_sum"), 0);
	same_ranges(s, T0, end, 10);
	/* maintenance builds them (after rolling up the first hour) */
	ck_assert_int_eq(store_maintain(s, end + 60 * SEC), 0);
	nsum = q_int(s, "SELECT count(*) FROM task_sum");
	ck_assert_int_gt(nsum, 25); /* 10 min spans: 29 over, 5 hours */
	/* no span shorter than 10 min since v21 */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM task_sum WHERE"
			     " span_ns < 600000000000"),
	    0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM task_sum WHERE"
			     " span_ns = 3600000000000"),
	    5); /* the hours holding windows, but the last (not over) */
	same_ranges(s, T0, end, 40);
	/* a history of a 15 min instance skips the hours without it */
	{
		uint64_t iid = (uint64_t)q_int(s,
		    "SELECT iid FROM instance"
		    " WHERE thread = 0 AND id = 107"
		    " AND starttime = 5007");
		int64_t *skip;
		size_t nskip;

		ck_assert_int_eq(store_sum_absent(s, T0, end, false, &iid, 1,
				     &skip, &nskip),
		    0);
		ck_assert_uint_ge(nskip, 3);
		free(skip);
	}

	/* a window arriving late into a summarised span (another boot, so
	 * not a replay): its spans' summaries go, the answer follows */
	put(s, "boot-b", 5, T0 + 3600 * SEC);
	ck_assert_int_lt(q_int(s, "SELECT count(*) FROM task_sum"), nsum);
	same_ranges(s, T0, end, 20);
	ck_assert_int_eq(store_maintain(s, end + 120 * SEC), 0);
	same_ranges(s, T0, end, 20);

	/* roll-ups (level 0 older than 4 h into minutes, level 1 older
	 * than 5 h into 10 min), then retention (6 h); a roll-up keeps the
	 * sums of every span longer than its bucket, so the summaries of
	 * the hours retention keeps (from T0 + 1 h) are not written again:
	 * marked here, still marked after; a rolled bucket's own summary
	 * and shorter ones go (a span of one window reads that window) */
	(void)q_int(s,
	    "UPDATE task_sum SET n_windows = n_windows + 100000"
	    " WHERE span_ns = 3600000000000");
	snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM task_sum WHERE span_ns = 3600000000000"
	    " AND start_ns >= %lld AND n_windows >= 100000",
	    (long long)(T0 + 3600 * SEC));
	n3600 = q_int(s, sql);
	ck_assert_int_ge(n3600, 3);
	ck_assert_int_eq(store_maintain(s, end + 2 * 3600 * SEC), 0);
	if (keep_threads)
		ck_assert_int_eq(q_int(s, sql), n3600);
	else
		ck_assert_int_lt(q_int(s, sql), n3600);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM task_sum t WHERE span_ns <"
			     " 3600000000000 AND (SELECT count(*) FROM windows"
			     " w WHERE w.wall_start_ns >= t.start_ns AND"
			     " w.wall_start_ns < t.start_ns + t.span_ns) < 2"),
	    0);
	ck_assert_int_gt(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " level > 0"),
	    0);
	same_ranges(s, T0, end, 40);
	nwin = q_int(s, "SELECT count(*) FROM windows");
	ck_assert_int_eq(store_maintain(s, end + 4 * 3600 * SEC), 0);
	ck_assert_int_lt(q_int(s, "SELECT count(*) FROM windows"), nwin);
	same_ranges(s, T0, end, 40);
	/* every summary stands for windows still there: those it was built
	 * of, or fewer that roll-ups merged them into (same_ranges above:
	 * with the same sums) */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM task_sum t WHERE n_windows"
			     " < (SELECT count(*) FROM windows w WHERE"
			     " w.wall_start_ns >= t.start_ns AND"
			     " w.wall_start_ns < t.start_ns + t.span_ns)"
			     " OR NOT EXISTS (SELECT 1 FROM windows w WHERE"
			     " w.wall_start_ns >= t.start_ns AND"
			     " w.wall_start_ns < t.start_ns + t.span_ns)"),
	    0);
	store_close(s);
}
END_TEST

START_TEST(test_sum_size_bound)
{
	struct store *s = open_opts(NULL, 0);
	int64_t end = T0 + 900 * 10 * SEC;
	long long bytes, nwin;
	uint64_t q;

	for (q = 0; q < 900; q++)
		put(s, "boot-a", q, T0);
	ck_assert_int_eq(store_maintain(s, end + 60 * SEC), 0);
	ck_assert_int_gt(q_int(s, "SELECT count(*) FROM task_sum"), 12);
	bytes = q_int(s,
	    "SELECT page_count * page_size FROM"
	    " pragma_page_count, pragma_page_size");
	nwin = q_int(s, "SELECT count(*) FROM windows");
	store_close(s);
	/* half the bound: the oldest windows go, their spans' summaries
	 * with them */
	s = open_opts(NULL, (uint64_t)bytes / 2);
	put(s, "boot-a", 900, T0);
	ck_assert_int_lt(q_int(s, "SELECT count(*) FROM windows"), nwin);
	same_ranges(s, T0, end, 30);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM task_sum t WHERE n_windows"
			     " != (SELECT count(*) FROM windows w WHERE"
			     " w.wall_start_ns >= t.start_ns AND"
			     " w.wall_start_ns < t.start_ns + t.span_ns)"),
	    0);
	store_close(s);
}
END_TEST

START_TEST(test_sum_spool)
{
	struct store *s = open_opts(spool, 0), *r;
	int64_t end = T0 + 1200 * 10 * SEC;
	uint64_t q;

	for (q = 0; q < 900; q++)
		put(s, "boot-a", q, T0);
	ck_assert_int_eq(store_maintain(s, T0 + 900 * 10 * SEC), 0);
	ck_assert_int_gt(q_int(s, "SELECT count(*) FROM task_sum"), 12);
	/* windows waiting in the spool, one of them late into an old span */
	for (; q < 1200; q++)
		put(s, "boot-a", q, T0);
	put(s, "boot-b", 3, T0 + 1800 * SEC);
	ck_assert_int_gt(s->spool ? 1 : 0, 0);
	ck_assert_int_eq(store_conn_open(s, &r), 0);
	ck_assert_int_eq(store_conn_begin(r), 0);
	same_ranges(r, T0, end, 30);
	store_conn_end(r);
	/* moved: the old span's summaries forgotten, then built again */
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(store_conn_begin(r), 0);
	same_ranges(r, T0, end, 20);
	store_conn_end(r);
	ck_assert_int_eq(store_maintain(s, end + 60 * SEC), 0);
	ck_assert_int_eq(store_conn_begin(r), 0);
	same_ranges(r, T0, end, 30);
	store_conn_end(r);
	store_conn_close(r);
	store_close(s);
}
END_TEST

/*
 * Every top-N asks the main file's first and last window start: it reads
 * the two ends of windows_wall, not the index whole (a row a window
 * stored; SQLite takes min() and max() of one SELECT by a scan). The
 * answer is the stored range's.
 */
START_TEST(test_sum_range_plan)
{
	struct store *s = open_opts(NULL, 0);
	char q[512], plan[1024];
	sqlite3_stmt *st;
	size_t n = 0;
	unsigned search = 0, scan = 0;
	uint64_t k;

	/* no window: no range (sum_zone reads column 0's NULL) */
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, store_sum_range_sql, -1, &st,
			     NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_type(st, 0), SQLITE_NULL);
	ck_assert_int_eq(sqlite3_column_type(st, 1), SQLITE_NULL);
	sqlite3_finalize(st);
	for (k = 0; k < 40; k++)
		put(s, "boot-a", k, T0);
	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", store_sum_range_sql);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, q, -1, &st, NULL),
	    SQLITE_OK);
	plan[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW && n + 1 < sizeof(plan)) {
		const char *d = (const char *)sqlite3_column_text(st, 3);

		/* "SEARCH [main.]windows USING COVERING INDEX windows_wall"
		 * (the schema's name or not, as SQLite's version prints it) */
		search += strncmp(d, "SEARCH ", 7) == 0 &&
		    strstr(d, "INDEX windows_wall") != NULL;
		scan += strncmp(d, "SCAN ", 5) == 0 &&
		    strstr(d, "windows") != NULL;
		n += (size_t)snprintf(plan + n, sizeof(plan) - n, "%s;", d);
	}
	sqlite3_finalize(st);
	ck_assert_msg(scan == 0, "%s", plan);
	ck_assert_msg(search == 2, "%s", plan);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, store_sum_range_sql, -1, &st,
			     NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int64(st, 0),
	    q_int(s,
		"SELECT wall_start_ns FROM windows"
		" ORDER BY wall_start_ns LIMIT 1"));
	ck_assert_int_eq(sqlite3_column_int64(st, 1),
	    q_int(s,
		"SELECT wall_start_ns FROM windows"
		" ORDER BY wall_start_ns DESC LIMIT 1"));
	ck_assert_int_lt(sqlite3_column_int64(st, 0),
	    sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	store_close(s);
}
END_TEST

/* A damaged summary is counted and its windows read instead. */
START_TEST(test_sum_damaged)
{
	struct store *s = open_opts(NULL, 0);
	int64_t end = T0 + 720 * 10 * SEC;
	struct store_stats st;
	uint64_t q;

	for (q = 0; q < 720; q++)
		put(s, "boot-a", q, T0);
	ck_assert_int_eq(store_maintain(s, end + 60 * SEC), 0);
	ck_assert_int_eq(q_int(s,
			     "UPDATE task_sum SET procs ="
			     " substr(procs, 1, 20) || x'00' ||"
			     " substr(procs, 22) WHERE span_ns ="
			     " 3600000000000 RETURNING 1"),
	    1);
	same_ranges(s, T0, end, 10);
	store_get_stats(s, &st);
	ck_assert_uint_gt(st.blob_errors, 0);
	store_close(s);
}
END_TEST

/* One top-N window by window, both lists: every figure of a against b. */
static void
top_all(struct store *s, int64_t from, int64_t to, bool th,
    struct window_task **ret, size_t *ret_n)
{
	store_sum_off = true;
	ck_assert_int_eq(store_top(s, from, to, th, METRIC_CPU, 0, ret, ret_n),
	    0);
	store_sum_off = false;
}

static void
tops_eq(const struct window_task *a, size_t na, const struct window_task *b,
    size_t nb)
{
	size_t i;

	ck_assert_uint_eq(na, nb);
	for (i = 0; i < na; i++)
		tu_task_eq(&a[i], &b[i]);
}

/*
 * Decoded windows kept between reads (store_wcache.c): the second read
 * takes them from the cache and answers the same; a window whose blob
 * changed under the same id is decoded again (its new figures, as a
 * fresh connection reads them), never taken from the cache.
 */
START_TEST(test_sum_wcache)
{
	struct store *s = (edit_in_place = true, open_opts(NULL, 0));
	int64_t end = T0 + 200 * 10 * SEC;
	struct window_task *a, *b, *c, *d;
	size_t na, nb, nc, nd, i;
	uint64_t hits, misses, h2, m2, ua = 0, uc = 0;
	bool th = _i;

	for (i = 0; i < 200; i++)
		put(s, "boot-a", i, T0);
	top_all(s, T0, end, th, &a, &na);
	store_wcache_stats(s, &hits, &misses);
	ck_assert_uint_eq(hits, 0);
	top_all(s, T0, end, th, &b, &nb);
	store_wcache_stats(s, &h2, &m2);
	ck_assert_uint_eq(h2, 200); /* every window from the cache */
	ck_assert_uint_eq(m2, misses);
	hits = h2;
	tops_eq(a, na, b, nb);
	/* window 100's list now holds window 101's rows */
	ck_assert_int_eq(q_int(s,
			     th ? "UPDATE window_tasks SET threads = (SELECT"
				  " threads FROM window_tasks ORDER BY"
				  " window_id LIMIT 1 OFFSET 100) WHERE"
				  " window_id = (SELECT window_id FROM"
				  " window_tasks ORDER BY window_id LIMIT 1"
				  " OFFSET 99) RETURNING 1" :
				  "UPDATE window_tasks SET procs = (SELECT"
				  " procs FROM window_tasks ORDER BY"
				  " window_id LIMIT 1 OFFSET 100) WHERE"
				  " window_id = (SELECT window_id FROM"
				  " window_tasks ORDER BY window_id LIMIT 1"
				  " OFFSET 99) RETURNING 1"),
	    1);
	top_all(s, T0, end, th, &c, &nc);
	store_wcache_stats(s, &h2, &m2);
	ck_assert_uint_eq(m2, misses + 1); /* that window alone decoded */
	ck_assert_uint_eq(h2, hits + 199);
	store_close(s);
	s = open_opts(NULL, 0);
	top_all(s, T0, end, th, &d, &nd);
	store_wcache_stats(s, &hits, &misses);
	ck_assert_uint_eq(hits, 0);
	tops_eq(c, nc, d, nd);
	for (i = 0; i < na; i++)
		ua += a[i].d_utime + a[i].d_stime;
	for (i = 0; i < nc; i++)
		uc += c[i].d_utime + c[i].d_stime;
	ck_assert_uint_ne(ua, uc); /* the change is in the answer */
	free(a);
	free(b);
	free(c);
	free(d);
	store_close(s);
}
END_TEST

/* A top-N from the summaries, both lists' figures exact. */
static void
top_sum(struct store *s, int64_t from, int64_t to, bool th,
    struct window_task **ret, size_t *ret_n)
{
	store_sum_off = false;
	ck_assert_int_eq(store_top(s, from, to, th, METRIC_CPU, 0, ret, ret_n),
	    0);
}

/*
 * Summaries' decoded rows kept between reads too (store_tasksum.c
 * cover_sum, in store_wcache.c under keys below every window id): the
 * second read over the same range decodes nothing and answers the same;
 * a summary whose blob changed under the same span is decoded again and
 * the answer is a fresh connection's.
 */
START_TEST(test_sum_scache)
{
	struct store *s = open_opts(NULL, 0);
	int64_t from = T0 + 7 * 10 * SEC, end = T0 + 720 * 10 * SEC;
	struct window_task *a, *b, *c, *d;
	size_t na, nb, nc, nd, i;
	uint64_t h1, m1, h2, m2, h3, m3, ua = 0, uc = 0;
	bool th = _i;
	const char *col = th ? "threads" : "procs";
	char sql[512];

	for (i = 0; i < 720; i++)
		put(s, "boot-a", i, T0);
	ck_assert_int_eq(store_maintain(s, end + 60 * SEC), 0);
	ck_assert_int_gt(q_int(s, "SELECT count(*) FROM task_sum"), 5);
	top_sum(s, from, end, th, &a, &na);
	store_wcache_stats(s, &h1, &m1);
	ck_assert_uint_eq(h1, 0);
	/* the windows at the edges and a few summaries, not 713 windows */
	ck_assert_uint_gt(m1, 2);
	ck_assert_uint_lt(m1, 713);
	top_sum(s, from, end, th, &b, &nb);
	store_wcache_stats(s, &h2, &m2);
	ck_assert_uint_eq(m2, m1); /* nothing decoded again */
	/* the first read's first lookup came before the cache existed:
	 * a miss not in the live cache's count (in the connection's,
	 * below) */
	ck_assert_uint_eq(h2, m1 + 1);
	tops_eq(a, na, b, nb);
	/* the second 10-minute span's summary now holds the third's rows */
	snprintf(sql, sizeof(sql),
	    "UPDATE task_sum SET %s = (SELECT %s FROM task_sum WHERE"
	    " span_ns = 600000000000 ORDER BY start_ns LIMIT 1 OFFSET 2)"
	    " WHERE span_ns = 600000000000 AND start_ns = (SELECT start_ns"
	    " FROM task_sum WHERE span_ns = 600000000000 ORDER BY start_ns"
	    " LIMIT 1 OFFSET 1) RETURNING 1",
	    col, col);
	ck_assert_int_eq(q_int(s, sql), 1);
	top_sum(s, from, end, th, &c, &nc);
	store_wcache_stats(s, &h3, &m3);
	ck_assert_uint_eq(m3, m2 + 1); /* that summary alone decoded */
	ck_assert_uint_eq(h3, h2 + (h2 - h1) - 1);
	/* a cache freed with its connection (idle, a moved file, a failed
	 * snapshot) leaves its counts in health: they never go back */
	{
		struct store_cache_stats cs;

		/* every decode counted: the live cache's and the one
		 * before it existed */
		store_conn_cache_stats(s, &cs);
		ck_assert_uint_eq(cs.hits, h3);
		ck_assert_uint_eq(cs.misses, m3 + 1);
		ck_assert_uint_gt(cs.bytes, 0);
		store_wcache_free(s);
		store_conn_cache_stats(s, &cs);
		ck_assert_uint_eq(cs.hits, h3);
		ck_assert_uint_eq(cs.misses, m3 + 1);
		ck_assert_uint_eq(cs.bytes, 0);
	}
	store_close(s);
	s = open_opts(NULL, 0);
	top_sum(s, from, end, th, &d, &nd);
	store_wcache_stats(s, &h1, &m1);
	ck_assert_uint_eq(h1, 0);
	tops_eq(c, nc, d, nd);
	for (i = 0; i < na; i++)
		ua += a[i].d_utime + a[i].d_stime;
	for (i = 0; i < nc; i++)
		uc += c[i].d_utime + c[i].d_stime;
	ck_assert_uint_ne(ua, uc); /* the change is in the answer */
	free(a);
	free(b);
	free(c);
	free(d);
	store_close(s);
}
END_TEST

/* A top-N of the metric m on s, summaries on. */
static void
top_m(struct store *s, int64_t from, int64_t to, bool th, enum store_metric m,
    struct window_task **ret, size_t *ret_n)
{
	store_sum_off = false;
	ck_assert_int_eq(store_top(s, from, to, th, m, 20, ret, ret_n), 0);
}

static uint64_t
memo_hits(struct store *s)
{
	uint64_t hits, saved;
	size_t bytes;

	store_wcache_memo_stats(s, &hits, &saved, &bytes);
	ck_assert_uint_le(bytes, 512u << 10); /* the bound */
	return hits;
}

/* The answer of a fresh connection (no cache, no memo) equals x. */
static void
fresh_eq(struct store **s, int64_t from, int64_t to, bool th,
    enum store_metric m, const struct window_task *x, size_t nx)
{
	struct window_task *d;
	size_t nd;

	store_close(*s);
	*s = open_opts(NULL, 0);
	top_m(*s, from, to, th, m, &d, &nd);
	ck_assert_uint_eq(memo_hits(*s), 0);
	tops_eq(x, nx, d, nd);
	free(d);
}

/*
 * Whole reads' sums kept (store_wcache.c memos): a read meeting the same
 * kept windows and summaries in the same order as an earlier one (the
 * same range, a range selecting the same windows, another metric) takes
 * that read's sums and answers as a fresh connection does; a window
 * whose blob changed, a window added, a maintenance pass rolling up and
 * deleting windows: the memo is not used and the answer is a fresh
 * connection's again, not the old one.
 */
START_TEST(test_sum_memo)
{
	/* the test edits a level-0 blob in place: no per-hour tables */
	struct store *s = (edit_in_place = true, open_opts(NULL, 0));
	int64_t from = T0 + 7 * 10 * SEC - 5 * SEC, end = T0 + 720 * 10 * SEC;
	struct window_task *a, *b, *c;
	size_t na, nb, nc;
	uint64_t h, ua = 0, uc = 0;
	bool th = _i;
	char sql[512];

	for (h = 0; h < 720; h++)
		put(s, "boot-a", h, T0);
	ck_assert_int_eq(store_maintain(s, end + 60 * SEC), 0);
	/* the first read makes the connection's cache (what it met before
	 * was not noted: no memo); the second keeps its sums */
	top_m(s, from, end, th, METRIC_CPU, &a, &na);
	free(a);
	top_m(s, from, end, th, METRIC_CPU, &a, &na);
	ck_assert_uint_eq(memo_hits(s), 0);
	/* the same windows: the same range, then one a little narrower
	 * (no window starts in between) */
	top_m(s, from, end, th, METRIC_CPU, &b, &nb);
	ck_assert_uint_eq(memo_hits(s), 1);
	tops_eq(a, na, b, nb);
	free(b);
	top_m(s, from + 1, end - 1, th, METRIC_CPU, &b, &nb);
	ck_assert_uint_eq(memo_hits(s), 2);
	tops_eq(a, na, b, nb);
	free(b);
	/* another metric ranks the same sums */
	top_m(s, from, end, th, METRIC_RSS, &b, &nb);
	ck_assert_uint_eq(memo_hits(s), 3);
	fresh_eq(&s, from, end, th, METRIC_RSS, b, nb);
	free(b);
	top_m(s, from, end, th, METRIC_CPU, &b, &nb);
	top_m(s, from, end, th, METRIC_CPU, &c, &nc);
	ck_assert_uint_eq(memo_hits(s), 1);
	fresh_eq(&s, from, end, th, METRIC_CPU, c, nc);
	tops_eq(a, na, c, nc);
	free(b);
	free(c);

	/* window 20's list (before the first 10 min span: read as a
	 * window) now holds window 21's rows, its blob changed under the
	 * same id: summed afresh, a fresh connection's answer */
	top_m(s, from, end, th, METRIC_CPU, &b, &nb);
	snprintf(sql, sizeof(sql),
	    "UPDATE window_tasks SET %s = (SELECT %s FROM window_tasks"
	    " ORDER BY window_id LIMIT 1 OFFSET 21) WHERE window_id ="
	    " (SELECT window_id FROM window_tasks ORDER BY window_id"
	    " LIMIT 1 OFFSET 20) RETURNING 1",
	    th ? "threads" : "procs", th ? "threads" : "procs");
	ck_assert_int_eq(q_int(s, sql), 1);
	top_m(s, from, end, th, METRIC_CPU, &c, &nc);
	ck_assert_uint_eq(memo_hits(s), 0);
	fresh_eq(&s, from, end, th, METRIC_CPU, c, nc);
	for (h = 0; h < nb; h++)
		ua += b[h].d_utime + b[h].d_stime;
	for (h = 0; h < nc; h++)
		uc += c[h].d_utime + c[h].d_stime;
	ck_assert_uint_ne(ua, uc); /* the change is in the answer */
	free(b);
	free(c);

	/* a window added in the range (another boot's, late) */
	top_m(s, from, end, th, METRIC_CPU, &b, &nb);
	top_m(s, from, end, th, METRIC_CPU, &c, &nc);
	ck_assert_uint_eq(memo_hits(s), 1);
	free(c);
	put(s, "boot-b", 5, T0 + 3600 * SEC);
	top_m(s, from, end, th, METRIC_CPU, &c, &nc);
	ck_assert_uint_eq(memo_hits(s), 1);
	fresh_eq(&s, from, end, th, METRIC_CPU, c, nc);
	free(b);
	free(c);

	/* a maintenance pass rolling the first hour up and deleting what
	 * is past retention: the memo of before is not the answer */
	top_m(s, from, end, th, METRIC_CPU, &b, &nb);
	top_m(s, from, end, th, METRIC_CPU, &c, &nc);
	ck_assert_uint_eq(memo_hits(s), 1);
	free(c);
	ck_assert_int_eq(store_maintain(s, T0 + 6 * 3600 * SEC + 1800 * SEC),
	    0);
	ck_assert_int_gt(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " level > 0"),
	    0);
	top_m(s, from, end, th, METRIC_CPU, &c, &nc);
	ck_assert_uint_eq(memo_hits(s), 1);
	fresh_eq(&s, from, end, th, METRIC_CPU, c, nc);
	free(b);
	free(c);
	free(a);
	store_close(s);
}
END_TEST

static void
agg_eq(const struct store_agg *x, const struct store_agg *y)
{
	ck_assert_int_eq(x->iid, y->iid);
	ck_assert_int_eq(x->last_wid, y->last_wid);
	tu_task_eq(&x->t, &y->t);
	/* bit for bit, −0 and NaN included */
	ck_assert_mem_eq(&x->t.norm_ticks, &y->t.norm_ticks, sizeof(double));
}

static int
sum_put(unsigned version, struct store_enc *e, const struct store_agg *a,
    size_t n)
{
	return version == 1 ? store_tasksum_put_v1(e, a, n) :
			      store_tasksum_put(e, a, n);
}

/* The summary payload, each version: rows back as written; every cut
 * refused; another version refused. */
START_TEST(test_sum_payload)
{
	unsigned version = (unsigned)_i + 1;
	struct store_agg a[7], *b;
	struct store_enc e = { 0 };
	size_t n, i, cut;

	memset(a, 0, sizeof(a));
	for (i = 0; i < 7; i++) {
		a[i].iid = 10 + (int64_t)i * 7;
		a[i].last_wid = 1000 - (int64_t)(i % 3) * 5;
		a[i].t.d_utime = UINT64_MAX - i;
		a[i].t.d_minflt = i * 1000;
		a[i].t.d_majflt = i == 4 ? 3 : 0;
		/* rows 0, 3, 5 share a tuple; 1, 6 another; 2 and 4 alone */
		a[i].t.samples = i == 0 || i == 3 || i == 5 ? 7 :
		    i == 1 || i == 6			    ? 3 :
							      (unsigned)i;
		a[i].t.wall_ns = a[i].t.samples * SEC;
		a[i].t.total_ticks = a[i].t.samples * 100;
		a[i].t.norm_ticks = 1.0 / 3.0 + (double)a[i].t.samples;
		a[i].t.rss_pages_max = 50;
		a[i].t.rss_pages_last = 20 + i * 10; /* above max too */
		a[i].t.born = i == 1;
		a[i].t.exited = i == 2 || i == 1;
	}
	a[2].t.norm_ticks = -0.0;
	a[4].t.norm_ticks = NAN;
	a[4].last_wid = INT64_MAX;
	a[5].last_wid = INT64_MIN;
	a[6].iid = INT64_MAX;
	ck_assert_int_eq(sum_put(version, &e, a, 7), 0);
	ck_assert_int_eq(store_tasksum_get(e.b.p, e.b.len, version, &b, &n), 0);
	ck_assert_uint_eq(n, 7);
	for (i = 0; i < 7; i++)
		agg_eq(&b[i], &a[i]);
	free(b);
	for (cut = 0; cut < e.b.len; cut++)
		ck_assert_int_eq(store_tasksum_get(e.b.p, cut, version, &b, &n),
		    -EBADMSG);
	/* read as the other version, or an unknown one: refused */
	ck_assert_int_eq(store_tasksum_get(e.b.p, e.b.len, 3 - version, &b, &n),
	    -EBADMSG);
	ck_assert_int_eq(store_tasksum_get(e.b.p, e.b.len, 3, &b, &n),
	    -EBADMSG);
	ck_assert_int_eq(store_tasksum_get(e.b.p, e.b.len, 0, &b, &n),
	    -EBADMSG);
	store_enc_release(&e);
	/* none */
	ck_assert_int_eq(sum_put(version, &e, a, 0), 0);
	ck_assert_int_eq(store_tasksum_get(e.b.p, e.b.len, version, &b, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(b);
	store_enc_release(&e);
	/* ids must ascend */
	a[2].iid = a[1].iid;
	ck_assert_int_eq(sum_put(version, &e, a, 3), -EINVAL);
	store_enc_release(&e);
}
END_TEST

/* Version 2 beside version 1: smaller on rows sharing their tuples. */
START_TEST(test_sum_payload_smaller)
{
	struct store_agg a[200];
	struct store_enc e1 = { 0 }, e2 = { 0 };
	size_t i;

	memset(a, 0, sizeof(a));
	for (i = 0; i < 200; i++) {
		a[i].iid = 1 + (int64_t)i * 3;
		a[i].last_wid = 5000 + (int64_t)(i % 6);
		a[i].t.d_utime = rnd(100);
		a[i].t.samples = 60;
		a[i].t.wall_ns = 60 * SEC;
		a[i].t.total_ticks = 48000;
		a[i].t.norm_ticks = 6000.0;
		a[i].t.rss_pages_max = 1000 + rnd(100);
		a[i].t.rss_pages_last = a[i].t.rss_pages_max;
	}
	ck_assert_int_eq(store_tasksum_put_v1(&e1, a, 200), 0);
	ck_assert_int_eq(store_tasksum_put(&e2, a, 200), 0);
	/* v1 repeats the tuple (~16 B) and a wid step per row */
	ck_assert_uint_lt(e2.b.len + 200 * 16, e1.b.len);
	store_enc_release(&e1);
	store_enc_release(&e2);
}
END_TEST

/* Damaged payloads of version 2 (flips, cuts, random bytes): refused or
 * read within their bounds, never more rows than the bytes allow. */
START_TEST(test_sum_payload_fuzz)
{
	struct store_agg a[40], *b;
	struct store_enc e = { 0 };
	uint8_t buf[4096];
	size_t n, i, k, nk, len;
	int r, ok = 0, bad = 0;

	memset(a, 0, sizeof(a));
	for (i = 0; i < 40; i++) {
		a[i].iid = (i ? a[i - 1].iid : 0) + 1 + rnd(100);
		a[i].last_wid = (int64_t)rnd(1000);
		a[i].t.d_utime = rnd(1000000);
		a[i].t.samples = 1 + rnd(4);
		a[i].t.wall_ns = a[i].t.samples * SEC;
		a[i].t.norm_ticks = (double)rnd(1000) / 7.0;
		a[i].t.rss_pages_max = rnd(100000);
		a[i].t.rss_pages_last = rnd(100000);
	}
	ck_assert_int_eq(store_tasksum_put(&e, a, 40), 0);
	len = e.b.len;
	ck_assert_uint_le(len, sizeof(buf));
	for (k = 0, nk = tu_scaled(20000, 2000); k < nk; k++) {
		memcpy(buf, e.b.p, len);
		for (i = 0; i < 1 + rnd(4); i++)
			buf[rnd((unsigned)len)] ^= (uint8_t)(1 + rnd(255));
		if (k % 3 == 0) /* random bytes altogether */
			for (i = 0; i < len; i++)
				buf[i] = (uint8_t)rnd(k % 2 ? 4 : 256);
		r = store_tasksum_get(buf,
		    k % 5 == 0 ? rnd((unsigned)len) : len, 2, &b, &n);
		if (r == 0) {
			ck_assert_uint_le(n * 10, len);
			free(b);
			ok++;
		} else {
			ck_assert_int_eq(r, -EBADMSG);
			bad++;
		}
	}
	ck_assert_int_gt(bad, 0);
	store_enc_release(&e);
}
END_TEST

/* Every stored summary rewritten as version 1 (as an older store wrote
 * them): read as before, nothing counted as damaged. */
static void
sums_to_v1(struct store *s)
{
	sqlite3_stmt *st, *up;
	int col, n = 0;

	ck_assert_int_eq(sqlite3_prepare_v2(s->db,
			     "SELECT start_ns, span_ns, procs, threads"
			     " FROM task_sum",
			     -1, &st, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db,
			     "UPDATE task_sum SET procs = CASE WHEN ?4 THEN"
			     " procs ELSE ?3 END, threads = CASE WHEN ?4"
			     " THEN ?3 ELSE threads END WHERE start_ns = ?1"
			     " AND span_ns = ?2",
			     -1, &up, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		for (col = 0; col < 2; col++) {
			const void *blob = sqlite3_column_blob(st, 2 + col);
			struct store_enc raw = { 0 }, fe = { 0 };
			struct store_frame f;
			struct store_agg *a;
			size_t na;

			if (blob == NULL)
				continue;
			ck_assert_int_eq(
			    store_frame_get(blob,
				(size_t)sqlite3_column_bytes(st, 2 + col), &f),
			    0);
			ck_assert_uint_eq(f.version, 2);
			ck_assert_int_eq(store_tasksum_get(f.payload, f.len, 2,
					     &a, &na),
			    0);
			store_frame_release(&f);
			ck_assert_int_eq(store_tasksum_put_v1(&raw, a, na), 0);
			ck_assert_int_eq(store_frame_put_zstd(&fe,
					     STORE_TASKSUM_PART, 1, raw.b.p,
					     raw.b.len, 0),
			    0);
			sqlite3_bind_int64(up, 1, sqlite3_column_int64(st, 0));
			sqlite3_bind_int64(up, 2, sqlite3_column_int64(st, 1));
			sqlite3_bind_blob(up, 3, fe.b.p, (int)fe.b.len,
			    SQLITE_TRANSIENT);
			sqlite3_bind_int(up, 4, col);
			ck_assert_int_eq(sqlite3_step(up), SQLITE_DONE);
			sqlite3_reset(up);
			free(a);
			store_enc_release(&raw);
			store_enc_release(&fe);
			n++;
		}
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	ck_assert_int_gt(n, 10);
}

START_TEST(test_sum_v1_blobs)
{
	struct store *s = open_opts(NULL, 0);
	int64_t end = T0 + 900 * 10 * SEC;
	struct store_stats st;
	uint64_t q;

	for (q = 0; q < 900; q++)
		put(s, "boot-a", q, T0);
	ck_assert_int_eq(store_maintain(s, end + 60 * SEC), 0);
	same_ranges(s, T0, end, 10);
	sums_to_v1(s);
	same_ranges(s, T0, end, 20);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, 0);
	store_close(s);
}
END_TEST

/* v20 -> v21: the 60 s summaries go, the 600 s and hour ones stay. */
START_TEST(test_sum_migrate_v21)
{
	struct store *s;

	ck_assert_int_eq(store_create_version(path, 20,
			     "INSERT INTO task_sum VALUES"
			     " (0, 60000000000, 2, NULL, NULL),"
			     " (60000000000, 60000000000, 2, NULL, NULL),"
			     " (0, 600000000000, 3, NULL, NULL),"
			     " (0, 3600000000000, 4, NULL, NULL);"),
	    0);
	s = open_opts(NULL, 0);
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM task_sum"), 2);
	ck_assert_int_eq(q_int(s, "SELECT sum(n_windows) FROM task_sum"), 7);
	store_close(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("store_sum");
	TCase *tc = tcase_create("sum");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, test_sum_payload, 0, 2);
	tcase_add_test(tc, test_sum_range_plan);
	tcase_add_test(tc, test_sum_payload_smaller);
	tcase_add_test(tc, test_sum_payload_fuzz);
	tcase_add_test(tc, test_sum_v1_blobs);
	tcase_add_loop_test(tc, test_sum_equal_through_changes, 0, 2);
	tcase_add_test(tc, test_sum_size_bound);
	tcase_add_test(tc, test_sum_spool);
	tcase_add_test(tc, test_sum_damaged);
	tcase_add_loop_test(tc, test_sum_wcache, 0, 2);
	tcase_add_loop_test(tc, test_sum_scache, 0, 2);
	tcase_add_loop_test(tc, test_sum_memo, 0, 2);
	tcase_add_test(tc, test_sum_migrate_v21);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
