/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ftrace part of a window in the store (schema v5, doc/storage.md):
 * slice, counter, binder, run-queue and gpu_mem rows in window_trace_*
 * (binder latency rows, window_trace_btxn, since v19; fault phase rows,
 * window_trace_phase, since v20: store_phase.c),
 * and the window-level figures (state, loss, totals, the ATrace
 * categories' state and counts) as named counters of kind "trace" in
 * window_count, so a new figure needs no migration.
 * Called by store.c and store_read.c inside their transaction and lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "window/window.h"
#include "store_int.h"

enum {
	TS_INS_SLICE,
	TS_INS_COUNTER,
	TS_INS_BINDER,
	TS_INS_RQ,
	TS_INS_GPU,
	TS_INS_BTXN,
	TS_SEL_SLICE,
	TS_SEL_COUNTER,
	TS_SEL_BINDER,
	TS_SEL_RQ,
	TS_SEL_GPU,
	TS_SEL_BTXN,
	TS_INS_PHASE,
	TS_SEL_PHASE,
};

/* kind of the row that holds what did not fit */
#define KIND_OTHER 255

static const char *const ts_sql[] = {
	[TS_INS_SLICE] =
	    "INSERT INTO window_trace_slice (window_id, kind,"
	    " tgid, tid, depth, name, count, incomplete, total_ns, max_ns)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[TS_INS_COUNTER] =
	    "INSERT INTO window_trace_counter (window_id,"
	    " tgid, name, n, last, min, max) VALUES (?, ?, ?, ?, ?, ?, ?)",
	[TS_INS_BINDER] = "INSERT INTO window_trace_binder (window_id,"
			  " from_pid, to_pid, calls, oneway, replies)"
			  " VALUES (?, ?, ?, ?, ?, ?)",
	[TS_INS_RQ] = "INSERT INTO window_trace_rq (window_id, tid, count,"
		      " total_ns, max_ns) VALUES (?, ?, ?, ?, ?)",
	[TS_INS_GPU] = "INSERT INTO window_trace_gpu (window_id, gpu_id, pid,"
		       " events, last_size) VALUES (?, ?, ?, ?, ?)",
	[TS_INS_BTXN] = "INSERT INTO window_trace_btxn (window_id, other,"
			" from_pid, to_pid, code, twoway, oneway, received,"
			" replied, unreceived, unreplied, recv_sum_ns,"
			" recv_max_ns, reply_sum_ns, reply_max_ns, recv_hist,"
			" reply_hist) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
			" ?, ?, ?, ?, ?, ?, ?)",
	[TS_SEL_SLICE] = "SELECT kind, tgid, tid, depth, name, count,"
			 " incomplete, total_ns, max_ns FROM window_trace_slice"
			 " WHERE window_id = ?",
	[TS_SEL_COUNTER] = "SELECT tgid, name, n, last, min, max"
			   " FROM window_trace_counter WHERE window_id = ?",
	[TS_SEL_BINDER] = "SELECT from_pid, to_pid, calls, oneway, replies"
			  " FROM window_trace_binder WHERE window_id = ?",
	[TS_SEL_RQ] = "SELECT tid, count, total_ns, max_ns"
		      " FROM window_trace_rq WHERE window_id = ?",
	[TS_SEL_GPU] = "SELECT gpu_id, pid, events, last_size"
		       " FROM window_trace_gpu WHERE window_id = ?",
	[TS_SEL_BTXN] = "SELECT other, from_pid, to_pid, code, twoway,"
			" oneway, received, replied, unreceived, unreplied,"
			" recv_sum_ns, recv_max_ns, reply_sum_ns,"
			" reply_max_ns, recv_hist, reply_hist"
			" FROM window_trace_btxn WHERE window_id = ?",
	[TS_INS_PHASE] = store_phase_ins_sql,
	[TS_SEL_PHASE] = store_phase_sel_sql,
};

/* ------------------------------------------------------------ counters */

#define TR_U64(f) STORE_FIELD(struct window_trace, f)
#define TR_U32(f) STORE_FIELD(struct window_trace, f)

static const struct store_field counters[] = {
	TR_U32(state),
	TR_U32(enabled),
	TR_U32(missing),
	TR_U64(overrun),
	TR_U64(dropped),
	TR_U64(commit_overrun),
	TR_U64(pages_lost),
	TR_U64(missed),
	TR_U32(stats_fail),
	TR_U32(backlog),
	TR_U64(entries),
	TR_U64(events),
	TR_U64(pages),
	TR_U64(bytes),
	TR_U64(read_ns),
	TR_U64(bad_markers),
	TR_U64(names_cut),
	TR_U64(unknown_events),
	TR_U64(bad_pages),
	TR_U64(buffered),
	TR_U64(slices),
	TR_U64(incomplete),
	TR_U64(orphan_ends),
	TR_U64(sched_switch),
	TR_U64(sched_waking),
	TR_U64(binder_received),
	TR_U64(gpu_events),
	TR_U32(slices_other),
	TR_U32(counters_other),
	TR_U32(binder_other),
	TR_U32(rq_other),
	TR_U32(gpu_other),
	/* binder pairing (binder.c) */
	TR_U64(btxn_orphan_replies),
	TR_U64(btxn_orphan_recv),
	TR_U64(btxn_lost),
	TR_U64(btxn_exit),
	TR_U64(btxn_stale),
	TR_U64(btxn_abandoned),
	TR_U64(btxn_expired),
	TR_U64(btxn_full),
	TR_U64(btxn_open),
	TR_U32(btxn_other),
	/* fault phases (phase.c) */
	TR_U64(phase_events),
	TR_U64(phase_open),
	TR_U64(phase_incomplete),
	TR_U64(phase_untracked),
	TR_U64(maps_reads),
	TR_U64(maps_skipped),
	TR_U64(maps_fail),
	TR_U64(maps_bad_lines),
	TR_U64(maps_cut),
	TR_U64(fault_unknown),
	TR_U32(phase_other),
	/* ATrace categories (atrace_cat.c) */
	TR_U32(cat_state),
	TR_U64(cat_tags),
	TR_U64(cat_flags),
	TR_U32(cat_checks),
	TR_U32(cat_foreign),
	TR_U32(cat_takeovers),
	TR_U32(cat_yields),
	TR_U32(cat_restores),
	TR_U32(cat_set_fail),
	TR_U32(cat_read_fail),
};

static int
put_trace(struct store *s, int64_t id, const char *key, uint64_t v)
{
	return store_put_count(s, id, "trace", key, v);
}

/* A window_count row of kind "trace" (store_read.c hands them over); the
 * first one makes the window's ftrace part. */
static void
store_trace_count(struct window *w, const char *kind, const char *key,
    uint64_t v)
{
	struct window_trace *t;
	unsigned i;

	if (strcmp(kind, "trace") != 0)
		return;
	if ((t = window_trace_make(w, false)) == NULL)
		return; /* short of memory: read without its ftrace part */

	if (strcmp(key, "errno") == 0) {
		t->err = -(int32_t)v;
		return;
	}
	if (strcmp(key, "atrace") == 0) {
		t->atrace = v != 0;
		return;
	}
	if (strcmp(key, "cat_errno") == 0) {
		t->cat_err = -(int32_t)v;
		return;
	}
	if (strcmp(key, "binder_calls") == 0)
		t->binder_total.calls = (uint32_t)v;
	else if (strcmp(key, "binder_oneway") == 0)
		t->binder_total.oneway = (uint32_t)v;
	else if (strcmp(key, "binder_replies") == 0)
		t->binder_total.replies = (uint32_t)v;
	else if (strcmp(key, "rq_count") == 0)
		t->rq_total.count = v;
	else if (strcmp(key, "rq_total_ns") == 0)
		t->rq_total.total_ns = v;
	else if (strcmp(key, "rq_max_ns") == 0)
		t->rq_total.max_ns = v;
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (strcmp(key, counters[i].key) == 0)
			store_field_set(t, &counters[i], v);
}

/* ---------------------------------------------------------------- rows */

static int
put_slice(struct store *s, int64_t id, unsigned kind,
    const struct window_trace_slice *x)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_TRACE][TS_INS_SLICE],
	    ts_sql[TS_INS_SLICE]);

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, (int)kind);
	sqlite3_bind_int(st, 3, x->tgid);
	sqlite3_bind_int(st, 4, x->tid);
	sqlite3_bind_int(st, 5, x->depth);
	sqlite3_bind_text(st, 6, x->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, x->count);
	sqlite3_bind_int64(st, 8, x->incomplete);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)x->total_ns);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)x->max_ns);
	return store_run(st);
}

/* Slots up to the last non-zero one, little-endian u32 each. */
static size_t
hist_enc(const uint32_t hist[VITALS_TRACE_BTXN_SLOTS],
    unsigned char out[VITALS_TRACE_BTXN_SLOTS * 4])
{
	size_t n = VITALS_TRACE_BTXN_SLOTS, k;

	while (n > 0 && hist[n - 1] == 0)
		n--;
	for (k = 0; k < n; k++) {
		out[4 * k] = (unsigned char)hist[k];
		out[4 * k + 1] = (unsigned char)(hist[k] >> 8);
		out[4 * k + 2] = (unsigned char)(hist[k] >> 16);
		out[4 * k + 3] = (unsigned char)(hist[k] >> 24);
	}
	return n * 4;
}

/* A stored histogram back; a blob of another length is refused. */
static int
hist_dec(const void *blob, int len, uint32_t hist[VITALS_TRACE_BTXN_SLOTS])
{
	const unsigned char *p = blob;
	int k;

	if (len < 0 || len % 4 || len > VITALS_TRACE_BTXN_SLOTS * 4 ||
	    (len && p == NULL))
		return -EBADMSG;
	memset(hist, 0, VITALS_TRACE_BTXN_SLOTS * sizeof(*hist));
	for (k = 0; k < len / 4; k++)
		hist[k] = (uint32_t)p[4 * k] | (uint32_t)p[4 * k + 1] << 8 |
		    (uint32_t)p[4 * k + 2] << 16 | (uint32_t)p[4 * k + 3] << 24;
	return 0;
}

static int
put_btxn(struct store *s, int64_t id, bool other,
    const struct window_trace_btxn *b)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_TRACE][TS_INS_BTXN],
	    ts_sql[TS_INS_BTXN]);
	unsigned char rh[VITALS_TRACE_BTXN_SLOTS * 4];
	unsigned char ph[VITALS_TRACE_BTXN_SLOTS * 4];
	size_t rn = hist_enc(b->recv_hist, rh),
	       pn = hist_enc(b->reply_hist, ph);

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, other);
	sqlite3_bind_int(st, 3, other ? -1 : b->from_pid);
	sqlite3_bind_int(st, 4, other ? -1 : b->to_pid);
	sqlite3_bind_int64(st, 5, other ? 0 : b->code);
	sqlite3_bind_int64(st, 6, b->twoway);
	sqlite3_bind_int64(st, 7, b->oneway);
	sqlite3_bind_int64(st, 8, b->received);
	sqlite3_bind_int64(st, 9, b->replied);
	sqlite3_bind_int64(st, 10, b->unreceived);
	sqlite3_bind_int64(st, 11, b->unreplied);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)b->recv_sum_ns);
	sqlite3_bind_int64(st, 13, (sqlite3_int64)b->recv_max_ns);
	sqlite3_bind_int64(st, 14, (sqlite3_int64)b->reply_sum_ns);
	sqlite3_bind_int64(st, 15, (sqlite3_int64)b->reply_max_ns);
	sqlite3_bind_blob(st, 16, rh, (int)rn, SQLITE_TRANSIENT);
	sqlite3_bind_blob(st, 17, ph, (int)pn, SQLITE_TRANSIENT);
	return store_run(st);
}

static bool
btxn_empty(const struct window_trace_btxn *b)
{
	return !b->twoway && !b->oneway && !b->received && !b->replied &&
	    !b->unreceived && !b->unreplied;
}

static int
put_rows(struct store *s, int64_t id, const struct window_trace *t)
{
	sqlite3_stmt *st;
	unsigned i;
	int rc = SQLITE_OK;

	for (i = 0; i < t->nslices && rc == SQLITE_OK; i++)
		rc = put_slice(s, id, t->slice[i].kind, &t->slice[i]);
	if (rc == SQLITE_OK &&
	    (t->slice_other.count || t->slice_other.incomplete))
		rc = put_slice(s, id, KIND_OTHER, &t->slice_other);
	for (i = 0; i < t->ncounters && rc == SQLITE_OK; i++) {
		const struct window_trace_counter *c = &t->counter[i];

		st = store_stmt(s, &s->part_st[WPART_TRACE][TS_INS_COUNTER],
		    ts_sql[TS_INS_COUNTER]);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, c->tgid);
		sqlite3_bind_text(st, 3, c->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, c->n);
		sqlite3_bind_int64(st, 5, c->last);
		sqlite3_bind_int64(st, 6, c->min);
		sqlite3_bind_int64(st, 7, c->max);
		rc = store_run(st);
	}
	for (i = 0; i < t->nbinder && rc == SQLITE_OK; i++) {
		const struct window_trace_binder *b = &t->binder[i];

		st = store_stmt(s, &s->part_st[WPART_TRACE][TS_INS_BINDER],
		    ts_sql[TS_INS_BINDER]);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, b->from_pid);
		sqlite3_bind_int(st, 3, b->to_pid);
		sqlite3_bind_int64(st, 4, b->calls);
		sqlite3_bind_int64(st, 5, b->oneway);
		sqlite3_bind_int64(st, 6, b->replies);
		rc = store_run(st);
	}
	for (i = 0; i < t->nrq && rc == SQLITE_OK; i++) {
		const struct window_trace_rq *q = &t->rq[i];

		st = store_stmt(s, &s->part_st[WPART_TRACE][TS_INS_RQ],
		    ts_sql[TS_INS_RQ]);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, q->tid);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)q->count);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)q->total_ns);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)q->max_ns);
		rc = store_run(st);
	}
	for (i = 0; i < t->ngpu && rc == SQLITE_OK; i++) {
		const struct window_trace_gpu *g = &t->gpu[i];

		st = store_stmt(s, &s->part_st[WPART_TRACE][TS_INS_GPU],
		    ts_sql[TS_INS_GPU]);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, g->gpu_id);
		sqlite3_bind_int(st, 3, g->pid);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)g->events);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)g->last_size);
		rc = store_run(st);
	}
	for (i = 0; i < t->nbtxn && rc == SQLITE_OK; i++)
		rc = put_btxn(s, id, false, &t->btxn[i]);
	if (rc == SQLITE_OK && !btxn_empty(&t->btxn_rest))
		rc = put_btxn(s, id, true, &t->btxn_rest);
	if (rc == SQLITE_OK)
		rc = store_phase_put(store_stmt(s,
					 &s->part_st[WPART_TRACE][TS_INS_PHASE],
					 ts_sql[TS_INS_PHASE]),
		    id, t);
	return rc;
}

/* Everything ftrace of window id; nothing when it has no ftrace part. */
static int
store_trace_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_trace *t = window_trace(w);
	int rc = SQLITE_OK;
	unsigned i;

	if (t == NULL || t->state == FTRACE_UNKNOWN)
		return SQLITE_OK;
	/* state always (its row says "reported"), the rest when set */
	for (i = 0;
	     i < sizeof(counters) / sizeof(counters[0]) && rc == SQLITE_OK; i++)
		if (i == 0 || store_field_get(t, &counters[i]))
			rc = put_trace(s, id, counters[i].key,
			    store_field_get(t, &counters[i]));
	if (rc == SQLITE_OK && t->err)
		rc = put_trace(s, id, "errno", (uint64_t)-t->err);
	if (rc == SQLITE_OK && t->atrace)
		rc = put_trace(s, id, "atrace", 1);
	if (rc == SQLITE_OK && t->cat_err)
		rc = put_trace(s, id, "cat_errno", (uint64_t)-t->cat_err);
	if (rc == SQLITE_OK && t->binder_total.calls)
		rc = put_trace(s, id, "binder_calls", t->binder_total.calls);
	if (rc == SQLITE_OK && t->binder_total.oneway)
		rc = put_trace(s, id, "binder_oneway", t->binder_total.oneway);
	if (rc == SQLITE_OK && t->binder_total.replies)
		rc = put_trace(s, id, "binder_replies",
		    t->binder_total.replies);
	if (rc == SQLITE_OK && t->rq_total.count) {
		rc = put_trace(s, id, "rq_count", t->rq_total.count);
		if (rc == SQLITE_OK)
			rc = put_trace(s, id, "rq_total_ns",
			    t->rq_total.total_ns);
		if (rc == SQLITE_OK)
			rc = put_trace(s, id, "rq_max_ns", t->rq_total.max_ns);
	}
	if (rc == SQLITE_OK)
		rc = put_rows(s, id, t);
	return rc;
}

/*
 * Rows of window id into its trace part; its counters came with window_count and
 * made the part. A window stored without one has neither counters nor rows.
 */
static int
store_trace_load(struct store *s, int64_t id, struct window *w)
{
	struct window_trace *t;
	sqlite3_stmt *st;
	uint64_t bad = 0;
	int rc;

	if ((t = window_trace(w)) == NULL)
		return 0;
	rc = window_trace_rows(&t);
	window_part_set(w, WPART_TRACE, t);
	if (rc < 0)
		return -ENOMEM;

	st = store_stmt(s, &s->part_st[WPART_TRACE][TS_SEL_SLICE],
	    ts_sql[TS_SEL_SLICE]);
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct window_trace_slice x;
		const unsigned char *name;
		int kind = sqlite3_column_int(st, 0);

		memset(&x, 0, sizeof(x));
		x.kind = (uint8_t)(kind == KIND_OTHER ? 0 : kind);
		x.tgid = sqlite3_column_int(st, 1);
		x.tid = sqlite3_column_int(st, 2);
		x.depth = (uint16_t)sqlite3_column_int(st, 3);
		if ((name = sqlite3_column_text(st, 4)) != NULL)
			snprintf(x.name, sizeof(x.name), "%s", name);
		x.count = (uint32_t)sqlite3_column_int64(st, 5);
		x.incomplete = (uint32_t)sqlite3_column_int64(st, 6);
		x.total_ns = (uint64_t)sqlite3_column_int64(st, 7);
		x.max_ns = (uint64_t)sqlite3_column_int64(st, 8);
		if (kind == KIND_OTHER)
			t->slice_other = x;
		else if (t->nslices < VITALS_TRACE_SLICES)
			t->slice[t->nslices++] = x;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read window trace");
	st = store_stmt(s, &s->part_st[WPART_TRACE][TS_SEL_COUNTER],
	    ts_sql[TS_SEL_COUNTER]);
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    t->ncounters < VITALS_TRACE_COUNTERS) {
		struct window_trace_counter *c = &t->counter[t->ncounters++];
		const unsigned char *name = sqlite3_column_text(st, 1);

		memset(c, 0, sizeof(*c));
		c->tgid = sqlite3_column_int(st, 0);
		if (name)
			snprintf(c->name, sizeof(c->name), "%s", name);
		c->n = (uint32_t)sqlite3_column_int64(st, 2);
		c->last = sqlite3_column_int64(st, 3);
		c->min = sqlite3_column_int64(st, 4);
		c->max = sqlite3_column_int64(st, 5);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(s, rc, "read window trace");
	st = store_stmt(s, &s->part_st[WPART_TRACE][TS_SEL_BINDER],
	    ts_sql[TS_SEL_BINDER]);
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    t->nbinder < VITALS_TRACE_BINDER) {
		struct window_trace_binder *b = &t->binder[t->nbinder++];

		memset(b, 0, sizeof(*b));
		b->from_pid = sqlite3_column_int(st, 0);
		b->to_pid = sqlite3_column_int(st, 1);
		b->calls = (uint32_t)sqlite3_column_int64(st, 2);
		b->oneway = (uint32_t)sqlite3_column_int64(st, 3);
		b->replies = (uint32_t)sqlite3_column_int64(st, 4);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(s, rc, "read window trace");
	st = store_stmt(s, &s->part_st[WPART_TRACE][TS_SEL_RQ],
	    ts_sql[TS_SEL_RQ]);
	sqlite3_bind_int64(st, 1, id);
	while (
	    (rc = sqlite3_step(st)) == SQLITE_ROW && t->nrq < VITALS_TRACE_RQ) {
		struct window_trace_rq *q = &t->rq[t->nrq++];

		memset(q, 0, sizeof(*q));
		q->tid = sqlite3_column_int(st, 0);
		q->count = (uint64_t)sqlite3_column_int64(st, 1);
		q->total_ns = (uint64_t)sqlite3_column_int64(st, 2);
		q->max_ns = (uint64_t)sqlite3_column_int64(st, 3);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(s, rc, "read window trace");
	st = store_stmt(s, &s->part_st[WPART_TRACE][TS_SEL_GPU],
	    ts_sql[TS_SEL_GPU]);
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    t->ngpu < VITALS_TRACE_GPU) {
		struct window_trace_gpu *g = &t->gpu[t->ngpu++];

		memset(g, 0, sizeof(*g));
		g->gpu_id = (uint32_t)sqlite3_column_int64(st, 0);
		g->pid = sqlite3_column_int(st, 1);
		g->events = (uint64_t)sqlite3_column_int64(st, 2);
		g->last_size = (uint64_t)sqlite3_column_int64(st, 3);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(s, rc, "read window trace");
	st = store_stmt(s, &s->part_st[WPART_TRACE][TS_SEL_BTXN],
	    ts_sql[TS_SEL_BTXN]);
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct window_trace_btxn b;

		memset(&b, 0, sizeof(b));
		b.from_pid = sqlite3_column_int(st, 1);
		b.to_pid = sqlite3_column_int(st, 2);
		b.code = (uint32_t)sqlite3_column_int64(st, 3);
		b.twoway = (uint32_t)sqlite3_column_int64(st, 4);
		b.oneway = (uint32_t)sqlite3_column_int64(st, 5);
		b.received = (uint32_t)sqlite3_column_int64(st, 6);
		b.replied = (uint32_t)sqlite3_column_int64(st, 7);
		b.unreceived = (uint32_t)sqlite3_column_int64(st, 8);
		b.unreplied = (uint32_t)sqlite3_column_int64(st, 9);
		b.recv_sum_ns = (uint64_t)sqlite3_column_int64(st, 10);
		b.recv_max_ns = (uint64_t)sqlite3_column_int64(st, 11);
		b.reply_sum_ns = (uint64_t)sqlite3_column_int64(st, 12);
		b.reply_max_ns = (uint64_t)sqlite3_column_int64(st, 13);
		if (hist_dec(sqlite3_column_blob(st, 14),
			sqlite3_column_bytes(st, 14), b.recv_hist) < 0 ||
		    hist_dec(sqlite3_column_blob(st, 15),
			sqlite3_column_bytes(st, 15), b.reply_hist) < 0) {
			/* a damaged histogram: the row without slots */
			memset(b.recv_hist, 0, sizeof(b.recv_hist));
			memset(b.reply_hist, 0, sizeof(b.reply_hist));
		}
		if (sqlite3_column_int(st, 0))
			t->btxn_rest = b;
		else if (t->nbtxn < VITALS_TRACE_BTXN)
			t->btxn[t->nbtxn++] = b;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read window trace");
	rc = store_phase_load(store_stmt(s,
				  &s->part_st[WPART_TRACE][TS_SEL_PHASE],
				  ts_sql[TS_SEL_PHASE]),
	    id, t, &bad);
	while (bad--)
		store_blob_error(s);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read window trace phases");
	window_trace_trim(&t);
	window_part_set(w, WPART_TRACE, t);
	return 0;
}

const struct store_part store_trace_part = {
	.sql = ts_sql,
	.nsql = sizeof(ts_sql) / sizeof(ts_sql[0]),
	.put = store_trace_put,
	.load = store_trace_load,
	.count_kind = "trace",
	.count = store_trace_count,
};
