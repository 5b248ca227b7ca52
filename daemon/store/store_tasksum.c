/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-instance summaries of wall-clock spans (table task_sum,
 * doc/storage.md "Summaries"): for each span of 600 s and 3600 s
 * (aligned on the wall clock, like roll-up buckets) that is over, the
 * sums of every task's figures over the windows starting in it, one blob
 * per list. A top-N over a range sums the largest spans it covers whole
 * and reads the windows at its edges, so a day is a few dozen blobs,
 * not 8,640.
 *
 * A summary is only ever what its windows say, never a second source:
 * maintenance builds the missing ones from the windows of the main file;
 * every write that adds or removes a window forgets the summaries of its
 * spans (the store's inserts, roll-ups, retention, the size bound, a
 * spool move) in the same transaction; a reader uses none that reaches a
 * window still waiting in the spool. A span without a summary is read
 * window by window, as before: a database migrated from an older schema,
 * or whose maintenance has not caught up, answers the same, slower.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store/store_tasks.h"
#include "window/window.h"
#include "store_int.h"

/* Spans, largest first; each divides the next larger. No 60 s level
 * since v21: it cost 0.77 KiB per level-0 window, a fifth of the store
 * on store_bench, to spare a 1 h top-N 0.2-0.3 ms (doc/storage.md). */
static const int64_t sum_span_ns[] = {
	3600 * NSEC_PER_SEC,
	600 * NSEC_PER_SEC,
};
#define SUM_LEVELS (sizeof(sum_span_ns) / sizeof(sum_span_ns[0]))
#define SUM_SPAN_MAX "3600000000000"
#define SUM_ROWS_MAX (1u << 20) /* as store_sumcodec.c */
/* Windows decoded per maintenance pass at most (the rest: next pass). */
#define SUM_BUILD_WINDOWS 4096

bool store_sum_off; /* tests: read every range window by window */

enum {
	SUM_GET = SUMF__MAX, /* one span's summary of a list */
	SUM_MAIN_RANGE,	     /* the main file's first and last start */
	SUM_MISSING,	     /* spans over, of 2+ windows, not summarised */
	SUM_SRC,	     /* the windows of a span, oldest first */
	SUM_PUT,
	SUM_SPOOL_FIRST, /* the spool's first window (made while attached) */
	SUM__MAX
};
_Static_assert(SUM__MAX <= STORE_SUM_NSTMT, "STORE_SUM_NSTMT");

/* A window condition's spans: every summary a window it selects is in. */
#define FORGET(cond)                                                         \
	"WITH d(lo, hi) AS (SELECT min(wall_start_ns), max(wall_start_ns)"   \
	" FROM main.windows WHERE " cond ") DELETE FROM main.task_sum WHERE" \
	" start_ns > (SELECT lo FROM d) - " SUM_SPAN_MAX " AND start_ns <="  \
	" (SELECT hi FROM d) AND start_ns + span_ns > (SELECT lo FROM d)"

/*
 * The main file's first and last window start, every top-N's first step.
 * Two subqueries, not min() and max() in one SELECT: SQLite reads a lone
 * min() or max() off the index's end, but a SELECT of both scans the
 * whole index, a row for every window stored (check_store_sum
 * test_sum_range_plan).
 */
const char store_sum_range_sql[] =
    "SELECT (SELECT min(wall_start_ns) FROM main.windows),"
    " (SELECT max(wall_start_ns) FROM main.windows)";

/* clang-format off */
static const char *const sum_sql[SUM__MAX] = {
	[SUMF_ID] = FORGET("id = ?1") " AND (span_ns <= ?2 OR span_ns % ?2 != 0)",
	[SUMF_AGE] = FORGET("(?1 != '' AND boot = boot_key(?1) AND boot_end_ns < ?2)"
	    " OR (?4 AND (?1 = '' OR boot != boot_key(?1)) AND wall_end_ns < ?3)"),
	[SUMF_OLDEST] = FORGET("id IN (SELECT id FROM main.windows"
	    " WHERE id != ?1 ORDER BY wall_start_ns, id LIMIT ?2)"),
	[SUMF_MOVED] = FORGET("id IN (SELECT id FROM temp.spool_ids)"),
	[SUM_GET] = "SELECT CASE WHEN ?3 THEN threads ELSE procs END"
	    " FROM main.task_sum WHERE start_ns = ?1 AND span_ns = ?2",
	[SUM_MAIN_RANGE] = store_sum_range_sql,
	[SUM_MISSING] = "SELECT wall_start_ns / ?1 AS b FROM main.windows"
	    " WHERE wall_start_ns >= 0 AND wall_start_ns <"
	    " (SELECT max(wall_start_ns) FROM main.windows) / ?1 * ?1"
	    " GROUP BY b HAVING count(*) > 1 AND NOT EXISTS (SELECT 1 FROM"
	    " main.task_sum WHERE start_ns = b * ?1 AND span_ns = ?1)"
	    " ORDER BY b DESC",
	/* lookups, not a join: window_tasks is a view of the span tables
	 * too (store_span.c) */
	[SUM_SRC] = "SELECT w.id, (SELECT t.procs FROM window_tasks t WHERE"
	    " t.window_id = w.id), (SELECT t.threads FROM window_tasks t"
	    " WHERE t.window_id = w.id) FROM main.windows w"
	    " WHERE w.wall_start_ns >= ?1 AND w.wall_start_ns < ?2"
	    " ORDER BY w.wall_start_ns, w.mono_start_ns, w.id",
	[SUM_PUT] = "INSERT OR REPLACE INTO main.task_sum"
	    " (start_ns, span_ns, n_windows, procs, threads)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)",
	[SUM_SPOOL_FIRST] = "SELECT min(wall_start_ns) FROM spool.windows",
};
/* clang-format on */

int
store_sum_prepare(struct store *s)
{
	unsigned i;

	/* a schema without task_sum (a file not yet migrated, a test's
	 * older version): no statements, every read goes window by window */
	for (i = 0; i < SUM__MAX; i++)
		if (i != SUMF_MOVED && i != SUM_SPOOL_FIRST &&
		    sqlite3_prepare_v3(s->db, sum_sql[i], -1,
			SQLITE_PREPARE_PERSISTENT, &s->sum_st[i],
			NULL) != SQLITE_OK) {
			store_sum_finalize(s);
			break;
		}
	return SQLITE_OK;
}

void
store_sum_finalize(struct store *s)
{
	unsigned i;

	for (i = 0; i < SUM__MAX; i++) {
		sqlite3_finalize(s->sum_st[i]);
		s->sum_st[i] = NULL;
	}
}

/* The spool goes: what was prepared on it with it. */
void
store_sum_spool_gone(struct store *s)
{
	sqlite3_finalize(s->sum_st[SUM_SPOOL_FIRST]);
	s->sum_st[SUM_SPOOL_FIRST] = NULL;
}

sqlite3_stmt *
store_sum_forget_stmt(struct store *s, enum store_sum_forget f)
{
	/* temp.spool_ids exists once the spool is attached (store_spool.c) */
	if (f == SUMF_MOVED && s->sum_st[f] == NULL &&
	    s->sum_st[SUMF_ID] != NULL &&
	    sqlite3_prepare_v3(s->db, sum_sql[f], -1, SQLITE_PREPARE_PERSISTENT,
		&s->sum_st[f], NULL) != SQLITE_OK)
		s->sum_st[f] = NULL;
	return s->sum_st[f];
}

int
store_sum_forget_run(struct store *s, sqlite3_stmt *st)
{
	int rc;

	(void)s;
	if (st == NULL)
		return SQLITE_OK;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* A stored summary blob's rows; -EBADMSG for anything malformed. */
static int
sum_decode(const void *blob, size_t n, struct store_agg **ret, size_t *ret_n)
{
	struct store_frame f;
	int r;

	if ((r = store_frame_get(blob, n, &f)) < 0)
		return r;
	if (f.part != STORE_TASKSUM_PART)
		r = -EBADMSG;
	else
		r = store_tasksum_get(f.payload, f.len, f.version, ret, ret_n);
	store_frame_release(&f);
	return r;
}

/* --------------------------------------------------------------- build */

static int
agg_iid_cmp(const void *a, const void *b)
{
	const struct store_agg *x = a, *y = b;

	return x->iid < y->iid ? -1 : x->iid > y->iid;
}

/* The framed summary of g (NULL blob when it holds nobody). */
static int
sum_bind(sqlite3_stmt *st, int col, struct store_aggs *g)
{
	struct store_enc raw = { 0 }, e = { 0 };
	int r;

	if (g->n == 0) {
		sqlite3_bind_null(st, col);
		return 0;
	}
	if (g->n > 1)
		qsort(g->a, g->n, sizeof(*g->a), agg_iid_cmp);
	if ((r = store_tasksum_put(&raw, g->a, g->n)) == 0)
		r = store_frame_put_zstd(&e, STORE_TASKSUM_PART,
		    STORE_TASKSUM_VERSION, raw.b.p, raw.b.len, 0);
	store_enc_release(&raw);
	if (r == 0 &&
	    sqlite3_bind_blob(st, col, e.b.p, (int)e.b.len, SQLITE_TRANSIENT) !=
		SQLITE_OK)
		r = -ENOMEM;
	store_enc_release(&e);
	return r;
}

/* Column i's task blob summed into g; a bad blob counted, skipped. */
static int
src_add(struct store *s, sqlite3_stmt *st, int i, int64_t wid,
    struct store_aggs *g)
{
	struct store_frame f;
	struct window_task *t = NULL;
	uint64_t *iid = NULL;
	size_t n = 0;
	int r;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	r = store_frame_get(sqlite3_column_blob(st, i),
	    (size_t)sqlite3_column_bytes(st, i), &f);
	if (r == 0) {
		if (f.part != STORE_TASKS_PART)
			r = -EBADMSG;
		else
			r = store_tasks_get(f.payload, f.len, f.version,
			    SUM_ROWS_MAX, &t, &iid, &n);
		store_frame_release(&f);
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		store_blob_error(s);
		return 0;
	}
	r = store_agg_rows(g, wid, t, iid, n);
	free(t);
	free(iid);
	return r;
}

/* The summary of [b, b + span): its windows' rows summed, in order. */
static int
build_one(struct store *s, int64_t b, int64_t span, size_t *ret_n)
{
	sqlite3_stmt *st = s->sum_st[SUM_SRC], *put = s->sum_st[SUM_PUT];
	struct store_aggs g[2];
	size_t n = 0;
	int rc, r = 0, i;

	memset(g, 0, sizeof(g));
	sqlite3_bind_int64(st, 1, b);
	sqlite3_bind_int64(st, 2, b + span);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t wid = sqlite3_column_int64(st, 0);

		n++;
		for (i = 0; i < 2 && r == 0; i++)
			r = src_add(s, st, 1 + i, wid, &g[i]);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "summary: windows");
	sqlite3_reset(st);
	if (r == 0) {
		sqlite3_bind_int64(put, 1, b);
		sqlite3_bind_int64(put, 2, span);
		sqlite3_bind_int64(put, 3, (int64_t)n);
		for (i = 0; i < 2 && r == 0; i++)
			r = sum_bind(put, 4 + i, &g[i]);
		if (r == 0 && (rc = store_run(put)) != SQLITE_OK)
			r = store_fail(s, rc, "summary: insert");
		sqlite3_clear_bindings(put);
	}
	for (i = 0; i < 2; i++)
		store_aggs_free(&g[i]);
	*ret_n = n;
	return r;
}

/*
 * Summaries of the spans that are over (a window of the main file starts
 * after them), hold two windows or more and have none, newest first, in
 * one transaction; at most SUM_BUILD_WINDOWS windows decoded per call.
 */
int
store_sum_build(struct store *s)
{
	sqlite3_stmt *st = s->sum_st[SUM_MISSING];
	int64_t *b = NULL, *p;
	size_t nb = 0, cap = 0, done = 0, n, i;
	unsigned l;
	int rc, r = 0;

	if (st == NULL || s->db == NULL)
		return 0;
	if ((rc = store_txn_begin(s)) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	for (l = 0; l < SUM_LEVELS && r == 0 && done < SUM_BUILD_WINDOWS; l++) {
		nb = 0;
		sqlite3_bind_int64(st, 1, sum_span_ns[l]);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (nb == cap) {
				cap = cap ? cap * 2 : 64;
				if ((p = realloc(b, cap * sizeof(*b))) ==
				    NULL) {
					r = -ENOMEM;
					break;
				}
				b = p;
			}
			b[nb++] = sqlite3_column_int64(st, 0) * sum_span_ns[l];
		}
		if (r == 0 && rc != SQLITE_DONE)
			r = store_fail(s, rc, "summary: missing");
		sqlite3_reset(st);
		for (i = 0; i < nb && r == 0 && done < SUM_BUILD_WINDOWS; i++) {
			r = build_one(s, b[i], sum_span_ns[l], &n);
			done += n;
		}
	}
	free(b);
	if (r == 0 && (rc = store_txn_commit(s)) != SQLITE_OK)
		r = store_fail(s, rc, "summary: commit");
	if (r < 0)
		store_rollback(s);
	return r;
}

/* ---------------------------------------------------------------- read */

struct cover {
	struct store *s;
	int64_t from, to;
	bool threads;
	struct store_aggs *g;
	store_sum_windows_fn windows;
	int64_t pend_lo, pend_hi; /* windows waiting to be read */
	bool pend;
};

/* Windows of the range starting in [lo, hi), after what came before. */
static int
cover_windows(struct cover *c, int64_t lo, int64_t hi)
{
	if (c->pend && c->pend_hi == lo) {
		c->pend_hi = hi;
		return 0;
	}
	c->pend = true;
	c->pend_lo = lo;
	c->pend_hi = hi;
	return 0;
}

static int
cover_flush(struct cover *c)
{
	if (!c->pend)
		return 0;
	c->pend = false;
	return c->windows(c->s, c->from, c->to, c->threads, c->pend_lo,
	    c->pend_hi, c->g);
}

/* The decoded-rows cache's key for a summary: below every window id
 * (ids are > 0; spans start at >= 0 and are whole seconds apart). */
static int64_t
sum_cache_key(int64_t b, int64_t span)
{
	return -b - 1 - (span == sum_span_ns[0] ? 0 : 1);
}

/*
 * The summary of [b, b + span) summed in: 1, or 0 when there is none.
 * The windows pending before it are summed first (time order: a span
 * without a summary then starts a run of windows of its own); its rows
 * come from the connection's cache of decoded rows when it holds this
 * very blob (store_wcache.c), else are decoded and kept there.
 */
static int
cover_sum(struct cover *c, int64_t b, int64_t span)
{
	sqlite3_stmt *st = c->s->sum_st[SUM_GET];
	int64_t key = sum_cache_key(b, span);
	struct store_agg *a = NULL;
	size_t n = 0, bn;
	const void *blob;
	int rc, r = 0, have = 0;

	if ((r = cover_flush(c)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, b);
	sqlite3_bind_int64(st, 2, span);
	sqlite3_bind_int(st, 3, c->threads);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		have = 1;
		/* NULL: a span with no such task */
		if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
			blob = sqlite3_column_blob(st, 0);
			bn = (size_t)sqlite3_column_bytes(st, 0);
			if ((r = store_wcache_sum(c->s, key, c->threads, blob,
				 bn, c->g)) == 0) {
				if ((r = sum_decode(blob, bn, &a, &n)) == 0) {
					r = store_agg_sums(c->g, a, n);
					if (r == 0)
						store_wcache_put_aggs(c->s, key,
						    c->threads, blob, bn, a, n);
				} else if (r != -ENOMEM) {
					/* damaged: counted, its windows
					 * read */
					store_blob_error(c->s);
					have = 0;
					r = 0;
				}
			} else if (r == 1) {
				r = 0;
			}
		}
	} else if (rc != SQLITE_DONE) {
		r = store_fail(c->s, rc, "summary");
	}
	sqlite3_reset(st);
	free(a);
	return r < 0 ? r : have;
}

/* [lo, hi) (both >= 0) by the largest summaries from level l down. */
static int
cover(struct cover *c, int64_t lo, int64_t hi, unsigned l)
{
	int64_t span, first, last, b;
	int r;

	if (lo >= hi)
		return 0;
	if (l == SUM_LEVELS)
		return cover_windows(c, lo, hi);
	span = sum_span_ns[l];
	first = (lo + span - 1) / span * span;
	last = hi / span * span;
	if (first >= last)
		return cover(c, lo, hi, l + 1);
	if ((r = cover(c, lo, first, l + 1)) < 0)
		return r;
	for (b = first; b < last; b += span) {
		if ((r = cover_sum(c, b, span)) < 0)
			return r;
		if (r == 0 && (r = cover(c, b, b + span, l + 1)) < 0)
			return r;
	}
	return cover(c, last, hi, l + 1);
}

/* The first start of a window waiting in the attached spool, or max. */
static int
spool_first(struct store *s, int64_t *ret)
{
	sqlite3_stmt **st = &s->sum_st[SUM_SPOOL_FIRST];
	int rc;

	*ret = INT64_MAX;
	if (!s->spool_attached)
		return 0;
	/* kept until the spool is detached or the connection closes,
	 * rather than parsed again by every read */
	if (*st == NULL &&
	    (rc = sqlite3_prepare_v3(s->db, sum_sql[SUM_SPOOL_FIRST], -1,
		 SQLITE_PREPARE_PERSISTENT, st, NULL)) != SQLITE_OK) {
		*st = NULL;
		return store_fail(s, rc, "summary: spool");
	}
	if ((rc = sqlite3_step(*st)) == SQLITE_ROW &&
	    sqlite3_column_type(*st, 0) != SQLITE_NULL)
		*ret = sqlite3_column_int64(*st, 0);
	sqlite3_reset(*st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(s, rc, "summary: spool");
	return 0;
}

/*
 * Where summaries may stand for the windows of [from, to): inside the main
 * file's windows, from 1970 on, before the first window still waiting in
 * the spool (summaries hold the main file's windows alone). lo >= hi:
 * nowhere (or summaries off).
 */
static int
sum_zone(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    int64_t *ret_lo, int64_t *ret_hi)
{
	sqlite3_stmt *st = s->sum_st[SUM_MAIN_RANGE];
	int64_t lo = INT64_MAX, hi = INT64_MIN, cut;
	int rc, r;

	*ret_lo = 0;
	*ret_hi = 0;
	if (st == NULL || store_sum_off)
		return 0;
	if ((r = spool_first(s, &cut)) < 0)
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL) {
		lo = sqlite3_column_int64(st, 0);
		hi = sqlite3_column_int64(st, 1);
		hi = hi < INT64_MAX ? hi + 1 : hi;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(s, rc, "summary: range");
	lo = lo > from_wall_ns ? lo : from_wall_ns;
	lo = lo > 0 ? lo : 0;
	hi = hi < to_wall_ns ? hi : to_wall_ns;
	hi = hi < cut ? hi : cut;
	*ret_lo = lo;
	*ret_hi = hi;
	return 0;
}

/*
 * The hours of [from, to) whose summary shows none of the instances
 * want[0..nwant) (ascending): their windows need not be read for a
 * history of those instances. Starts, ascending, into *ret (free it).
 */
int
store_sum_absent(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, const uint64_t *want, size_t nwant, int64_t **ret,
    size_t *ret_n)
{
	sqlite3_stmt *st = s->sum_st[SUM_GET];
	int64_t lo, hi, b, span = sum_span_ns[0], *out = NULL, *np;
	struct store_agg *a;
	size_t n = 0, cap = 0, na, i, w;
	int rc, r;

	*ret = NULL;
	*ret_n = 0;
	if ((r = sum_zone(s, from_wall_ns, to_wall_ns, &lo, &hi)) < 0)
		return r;
	for (b = (lo + span - 1) / span * span; lo < hi && b + span <= hi;
	     b += span) {
		bool none = false;

		sqlite3_bind_int64(st, 1, b);
		sqlite3_bind_int64(st, 2, span);
		sqlite3_bind_int(st, 3, threads);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			none = true;
			if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
				r = sum_decode(sqlite3_column_blob(st, 0),
				    (size_t)sqlite3_column_bytes(st, 0), &a,
				    &na);
				if (r == 0) {
					for (i = w = 0; i < na && none; i++) {
						while (w < nwant &&
						    want[w] <
							(uint64_t)a[i].iid)
							w++;
						none = w == nwant ||
						    want[w] !=
							(uint64_t)a[i].iid;
					}
					free(a);
				} else if (r != -ENOMEM) {
					store_blob_error(s);
					none = false;
					r = 0;
				}
			}
		} else if (rc != SQLITE_DONE) {
			r = store_fail(s, rc, "summary");
		}
		sqlite3_reset(st);
		if (r < 0)
			break;
		if (!none)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((np = realloc(out, cap * sizeof(*np))) == NULL) {
				r = -ENOMEM;
				break;
			}
			out = np;
		}
		out[n++] = b;
	}
	if (r < 0) {
		free(out);
		return r;
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

/*
 * Every instance's sums over the windows of [from, to), as the windows
 * one by one would give them: the windows starting before the spans used
 * and after them read as such, the spans between from their summaries.
 * Only spans inside the main file's windows and before the first window
 * still in the spool are looked up (their summaries hold the main
 * file's windows alone).
 */
int
store_sum_top(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, struct store_aggs *g, store_sum_windows_fn windows)
{
	struct cover c = { .s = s,
		.windows = windows,
		.from = from_wall_ns,
		.to = to_wall_ns,
		.threads = threads,
		.g = g };
	int64_t lo, hi;
	int r;

	if ((r = sum_zone(s, from_wall_ns, to_wall_ns, &lo, &hi)) < 0)
		return r;
	if (lo >= hi)
		return windows(s, from_wall_ns, to_wall_ns, threads, INT64_MIN,
		    INT64_MAX, g);
	if ((r = cover_windows(&c, INT64_MIN, lo)) < 0 ||
	    (r = cover(&c, lo, hi, 0)) < 0 ||
	    (r = cover_windows(&c, hi, INT64_MAX)) < 0)
		return r;
	return cover_flush(&c);
}
