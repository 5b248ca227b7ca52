/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU memory part of a window in the store (schema v4, doc/storage.md):
 * one window_gpumem row with the map's state and the reading's counters,
 * one window_gpu row per (gpu, pid) pair; and the span query behind
 * `vitals gpumem --since` and growth triggers. store.c and store_read.c
 * call the put/load halves inside their transaction and lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpumem/gpumem.h"
#include "store/store.h"
#include "window/window.h"
#include "store_int.h"

enum {
	GS_INS_STATE,
	GS_INS_GPU,
	GS_SEL_STATE,
	GS_SEL_GPU,
	GS_SPAN_WINS,
	GS_SEL_ONE,
};

#define GS_STATE_COLS                                                  \
	"state, why, err, source, capacity, entries, saturated, "      \
	"traversals, traversal_fail, restarts, vanished, duplicates, " \
	"truncated, stale, events, events_late, traverse_ns, "         \
	"traverse_ns_max, tp_events, insert_fail, batch_walks, recovered"
#define GS_STATE_NCOLS 22

#define GS_GPU_COLS \
	"gpu_id, pid, starttime, bytes, min_bytes, max_bytes, stale, name"

static const char *const gs_sql[] = {
	[GS_INS_STATE] = "INSERT INTO window_gpumem (window_id, " GS_STATE_COLS
			 ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
			 " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[GS_INS_GPU] = "INSERT INTO window_gpu (window_id, " GS_GPU_COLS
		       ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[GS_SEL_STATE] = "SELECT " GS_STATE_COLS
			 " FROM window_gpumem WHERE window_id = ?",
	[GS_SEL_GPU] = "SELECT " GS_GPU_COLS " FROM window_gpu"
		       " WHERE window_id = ? ORDER BY gpu_id, pid, starttime",
	/*
	 * The windows ending in (from, to], oldest first, each with its
	 * state row's saturated flag (NULL: no state row). The range seeks
	 * windows_wall (no window is longer than :span); child rows are
	 * looked up per window (GS_SEL_GPU, GS_SEL_ONE), never joined:
	 * where a reader's views stand for the tables (store_conn.c), SQLite
	 * would read a joined view whole.
	 */
	[GS_SPAN_WINS] = "SELECT w.id, w.wall_end_ns, (SELECT s.saturated"
			 " FROM window_gpumem s WHERE s.window_id = w.id)"
			 " FROM windows w WHERE w.wall_start_ns <= :to"
			 " AND w.wall_start_ns > :from - :span"
			 " AND w.wall_end_ns > :from AND w.wall_end_ns <= :to"
			 " ORDER BY w.wall_end_ns, w.id",
	[GS_SEL_ONE] = "SELECT " GS_GPU_COLS " FROM window_gpu"
		       " WHERE window_id = ?1 AND gpu_id = ?2 AND pid = ?3"
		       " AND starttime = ?4",
};

/* window_gpumem's columns in GS_STATE_COLS order */
static void
state_values(const struct window_gpumem *g, int64_t v[GS_STATE_NCOLS])
{
	v[0] = g->state;
	v[1] = g->why;
	v[2] = g->err;
	v[3] = g->source;
	v[4] = g->capacity;
	v[5] = g->entries;
	v[6] = g->saturated;
	v[7] = g->traversals;
	v[8] = g->traversal_fail;
	v[9] = g->restarts;
	v[10] = g->vanished;
	v[11] = g->duplicates;
	v[12] = g->truncated;
	v[13] = g->stale;
	v[14] = (int64_t)g->events;
	v[15] = (int64_t)g->events_late;
	v[16] = (int64_t)g->traverse_ns;
	v[17] = (int64_t)g->traverse_ns_max;
	v[18] = (int64_t)g->tp_events;
	v[19] = (int64_t)g->insert_fail;
	v[20] = g->batch_walks;
	v[21] = g->recovered;
}

static void
state_set(struct window_gpumem *g, const int64_t v[GS_STATE_NCOLS])
{
	g->state = (uint32_t)v[0];
	g->why = (uint32_t)v[1];
	g->err = (int32_t)v[2];
	g->source = (uint32_t)v[3];
	g->capacity = (uint32_t)v[4];
	g->entries = (uint32_t)v[5];
	g->saturated = v[6] != 0;
	g->traversals = (uint32_t)v[7];
	g->traversal_fail = (uint32_t)v[8];
	g->restarts = (uint32_t)v[9];
	g->vanished = (uint32_t)v[10];
	g->duplicates = (uint32_t)v[11];
	g->truncated = (uint32_t)v[12];
	g->stale = (uint32_t)v[13];
	g->events = (uint64_t)v[14];
	g->events_late = (uint64_t)v[15];
	g->traverse_ns = (uint64_t)v[16];
	g->traverse_ns_max = (uint64_t)v[17];
	g->tp_events = (uint64_t)v[18];
	g->insert_fail = (uint64_t)v[19];
	g->batch_walks = (uint32_t)v[20];
	g->recovered = (uint32_t)v[21];
}

/* Window id's GPU memory; nothing when the window has no GpuMem part. */
static int
store_gpumem_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_gpumem_part *g = window_gpumem(w);
	int64_t v[GS_STATE_NCOLS];
	sqlite3_stmt *st;
	size_t i;
	int rc, k;

	if (g == NULL || (g->st.state == GPUMEM_UNKNOWN && g->n_gpu == 0))
		return SQLITE_OK;
	st = store_stmt(s, &s->part_st[WPART_GPUMEM][GS_INS_STATE],
	    gs_sql[GS_INS_STATE]);
	state_values(&g->st, v);
	sqlite3_bind_int64(st, 1, id);
	for (k = 0; k < GS_STATE_NCOLS; k++)
		sqlite3_bind_int64(st, k + 2, v[k]);
	if ((rc = store_run(st)) != SQLITE_OK)
		return rc;
	st = store_stmt(s, &s->part_st[WPART_GPUMEM][GS_INS_GPU],
	    gs_sql[GS_INS_GPU]);
	for (i = 0; i < g->n_gpu; i++) {
		const struct window_gpu_proc *p = &g->gpu[i];

		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, p->gpu_id);
		sqlite3_bind_int64(st, 3, p->pid);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)p->starttime);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)p->bytes);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)p->min_bytes);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)p->max_bytes);
		sqlite3_bind_int(st, 8, p->stale);
		sqlite3_bind_text(st, 9, p->name,
		    (int)strnlen(p->name, sizeof(p->name)), SQLITE_TRANSIENT);
		if ((rc = store_run(st)) != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* One window_gpu row (GS_GPU_COLS from column 0). */
static void
col_gpu(sqlite3_stmt *st, struct window_gpu_proc *p)
{
	const char *name = (const char *)sqlite3_column_text(st, 7);

	memset(p, 0, sizeof(*p));
	p->gpu_id = (uint32_t)sqlite3_column_int64(st, 0);
	p->pid = (int32_t)sqlite3_column_int64(st, 1);
	p->starttime = (uint64_t)sqlite3_column_int64(st, 2);
	p->bytes = (uint64_t)sqlite3_column_int64(st, 3);
	p->min_bytes = (uint64_t)sqlite3_column_int64(st, 4);
	p->max_bytes = (uint64_t)sqlite3_column_int64(st, 5);
	p->stale = sqlite3_column_int(st, 6) != 0;
	if (name)
		snprintf(p->name, sizeof(p->name), "%s", name);
}

static int
store_gpumem_load(struct store *s, int64_t id, struct window *w)
{
	struct window_gpumem_part *g;
	struct window_gpu_proc *out = NULL, *np;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc, k;

	st = store_stmt(s, &s->part_st[WPART_GPUMEM][GS_SEL_STATE],
	    gs_sql[GS_SEL_STATE]);
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t v[GS_STATE_NCOLS];

		for (k = 0; k < GS_STATE_NCOLS; k++)
			v[k] = sqlite3_column_int64(st, k);
		/* a state row makes the part */
		if ((g = window_gpumem_make(w)) == NULL) {
			sqlite3_reset(st);
			return -ENOMEM;
		}
		state_set(&g->st, v);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read window gpumem");
	st = store_stmt(s, &s->part_st[WPART_GPUMEM][GS_SEL_GPU],
	    gs_sql[GS_SEL_GPU]);
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((np = realloc(out, cap * sizeof(*np))) == NULL) {
				sqlite3_reset(st);
				free(out);
				return -ENOMEM;
			}
			out = np;
		}
		col_gpu(st, &out[n++]);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(out);
		return store_fail(s, rc, "read window gpu");
	}
	if (n == 0)
		return 0; /* no pair: the part is the state row's, if any */
	if ((g = window_gpumem_make(w)) == NULL) {
		free(out);
		return -ENOMEM;
	}
	free(g->gpu);
	g->gpu = out;
	g->n_gpu = n;
	return 0;
}

/* ------------------------------------------------------------- spans */

static bool
same_instance(const struct window_gpu_proc *a, const struct window_gpu_proc *b)
{
	return a->gpu_id == b->gpu_id && a->pid == b->pid &&
	    a->starttime == b->starttime;
}

struct span_row {
	struct window_gpu_proc p;
	int64_t end; /* its window's wall_end_ns */
	size_t seq;  /* its window's place, oldest first */
};

static int
span_row_cmp(const void *a, const void *b)
{
	const struct span_row *x = a, *y = b;

	if (x->p.gpu_id != y->p.gpu_id)
		return x->p.gpu_id < y->p.gpu_id ? -1 : 1;
	if (x->p.pid != y->p.pid)
		return x->p.pid < y->p.pid ? -1 : 1;
	if (x->p.starttime != y->p.starttime)
		return x->p.starttime < y->p.starttime ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Fold rows (sorted by instance, oldest first) into one span each. */
static int
span_fold(const struct span_row *row, size_t nrow, struct gpumem_span **ret,
    size_t *ret_n)
{
	struct gpumem_span *out = NULL, *np, *cur = NULL;
	size_t n = 0, cap = 0, i;

	for (i = 0; i < nrow; i++) {
		struct window_gpu_proc p = row[i].p;

		if (cur && same_instance(&cur->p, &p)) {
			if (p.min_bytes > cur->p.min_bytes)
				p.min_bytes = cur->p.min_bytes;
			if (p.max_bytes < cur->p.max_bytes)
				p.max_bytes = cur->p.max_bytes;
			cur->p = p;
			cur->last_wall_ns = row[i].end;
			cur->windows++;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((np = realloc(out, cap * sizeof(*np))) == NULL) {
				free(out);
				return -ENOMEM;
			}
			out = np;
		}
		cur = &out[n++];
		memset(cur, 0, sizeof(*cur));
		cur->p = p;
		cur->first_bytes = p.bytes;
		cur->first_wall_ns = cur->last_wall_ns = row[i].end;
		cur->windows = 1;
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

/*
 * The series of the spans span_fold made from the same sorted rows: nid
 * windows (ends[], oldest first) in points of step windows counted back
 * from the newest, as many as GPUMEM_SERIES_POINTS and max_values allow
 * (none when the instances alone pass max_values). An instance's value at
 * a point is its row in the newest of the point's windows that has one.
 * Two arrays for all instances, sized once: no allocation per instance.
 */
static int
span_series(const struct span_row *row, size_t nrow, const int64_t *ends,
    size_t nid, struct gpumem_span *sp, size_t nsp, size_t max_values,
    struct gpumem_series *ser)
{
	size_t np = nid < GPUMEM_SERIES_POINTS ? nid : GPUMEM_SERIES_POINTS;
	size_t step, cap, i, k = 0, nv = 0;

	memset(ser, 0, sizeof(*ser));
	ser->windows = (uint32_t)nid;
	if (max_values == 0)
		max_values = GPUMEM_SERIES_VALUES;
	if (nsp > 0 && np > max_values / nsp)
		np = max_values / nsp;
	if (np == 0)
		return 0;
	step = (nid + np - 1) / np;
	np = (nid + step - 1) / step;
	cap = nsp * np < nrow ? nsp * np : nrow;
	ser->end_wall_ns = malloc(np * sizeof(*ser->end_wall_ns));
	ser->bytes = malloc((cap ? cap : 1) * sizeof(*ser->bytes));
	ser->index = malloc((cap ? cap : 1) * sizeof(*ser->index));
	if (!ser->end_wall_ns || !ser->bytes || !ser->index) {
		store_gpumem_series_free(ser);
		return -ENOMEM;
	}
	ser->n = np;
	ser->step = (uint32_t)step;
	for (i = 0; i < np; i++)
		ser->end_wall_ns[i] = ends[nid - 1 - (np - 1 - i) * step];
	for (i = 0; i < nrow; i++) {
		uint32_t b = (uint32_t)(np - 1 - (nid - 1 - row[i].seq) / step);

		if (i > 0 && !same_instance(&row[i - 1].p, &row[i].p))
			k++;
		if (k >= nsp)
			break; /* cannot be: span_fold saw the same rows */
		if (sp[k].series_n == 0)
			sp[k].series_off = nv;
		else if (ser->index[nv - 1] == b) {
			ser->bytes[nv - 1] =
			    row[i].p.bytes; /* a newer window */
			continue;
		}
		ser->bytes[nv] = row[i].p.bytes;
		ser->index[nv++] = b;
		sp[k].series_n++;
	}
	ser->nvalues = nv;
	return 0;
}

void
store_gpumem_series_free(struct gpumem_series *ser)
{
	if (ser == NULL)
		return;
	free(ser->end_wall_ns);
	free(ser->bytes);
	free(ser->index);
	memset(ser, 0, sizeof(*ser));
}

static void
bind_name(sqlite3_stmt *st, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(st, name);

	if (i > 0)
		sqlite3_bind_int64(st, i, v);
}

/* The rows of one window: all of them, or one instance's (q != NULL). */
static int
span_window(struct store *s, int64_t id, int64_t end, size_t seq,
    const struct window_gpu_proc *q, struct span_row **row, size_t *n,
    size_t *cap)
{
	sqlite3_stmt *st = store_stmt(s,
	    &s->part_st[WPART_GPUMEM][q ? GS_SEL_ONE : GS_SEL_GPU],
	    gs_sql[q ? GS_SEL_ONE : GS_SEL_GPU]);
	struct span_row *np;
	int rc, r = 0;

	sqlite3_bind_int64(st, 1, id);
	if (q) {
		sqlite3_bind_int64(st, 2, q->gpu_id);
		sqlite3_bind_int64(st, 3, q->pid);
		sqlite3_bind_int64(st, 4, (int64_t)q->starttime);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			if ((np = realloc(*row, *cap * sizeof(*np))) == NULL) {
				r = -ENOMEM;
				break;
			}
			*row = np;
		}
		col_gpu(st, &(*row)[*n].p);
		(*row)[*n].end = end;
		(*row)[(*n)++].seq = seq;
	}
	sqlite3_reset(st);
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "read gpu span");
	return r;
}

/*
 * The spans of windows ending in (from, to] (q: one instance's only),
 * and the state of the latest of them with a state row, its saturated
 * flag that of any (*ret_have: there was one). Lock held.
 */
static int
span_locked(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    const struct window_gpu_proc *q, struct gpumem_span **ret, size_t *ret_n,
    struct window_gpumem *ret_state, size_t max_values,
    struct gpumem_series *ser)
{
	sqlite3_stmt *st = store_stmt(s,
	    &s->part_st[WPART_GPUMEM][GS_SPAN_WINS], gs_sql[GS_SPAN_WINS]);
	struct span_row *row = NULL;
	int64_t *ids = NULL, *ends = NULL, last_state = 0, *np;
	size_t nid = 0, cid = 0, nrow = 0, crow = 0, i;
	bool saturated = false, have = false;
	int rc, r = 0;

	bind_name(st, ":from", from_wall_ns);
	bind_name(st, ":to", to_wall_ns);
	bind_name(st, ":span", s->max_span_ns);
	/* ids first: the per-window lookups run other statements */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (nid == cid) {
			cid = cid ? cid * 2 : 64;
			if ((np = realloc(ids, cid * sizeof(*np))) == NULL) {
				r = -ENOMEM;
				break;
			}
			ids = np;
			if ((np = realloc(ends, cid * sizeof(*np))) == NULL) {
				r = -ENOMEM;
				break;
			}
			ends = np;
		}
		ids[nid] = sqlite3_column_int64(st, 0);
		ends[nid] = sqlite3_column_int64(st, 1);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			saturated |= sqlite3_column_int(st, 2) != 0;
			last_state = ids[nid];
			have = true;
		}
		nid++;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "read gpu span");
	sqlite3_reset(st);
	if (r == 0 && ret_state && have) {
		int64_t v[GS_STATE_NCOLS];
		int k;

		st = store_stmt(s, &s->part_st[WPART_GPUMEM][GS_SEL_STATE],
		    gs_sql[GS_SEL_STATE]);
		sqlite3_bind_int64(st, 1, last_state);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			for (k = 0; k < GS_STATE_NCOLS; k++)
				v[k] = sqlite3_column_int64(st, k);
			memset(ret_state, 0, sizeof(*ret_state));
			state_set(ret_state, v);
			ret_state->saturated = saturated;
		} else if (rc != SQLITE_DONE) {
			r = store_fail(s, rc, "read gpu span");
		}
		sqlite3_reset(st);
	}
	for (i = 0; i < nid && r == 0; i++)
		r = span_window(s, ids[i], ends[i], i, q, &row, &nrow, &crow);
	if (r == 0 && nrow > 1)
		qsort(row, nrow, sizeof(*row), span_row_cmp);
	if (r == 0)
		r = span_fold(row, nrow, ret, ret_n);
	if (r == 0 && ser &&
	    (r = span_series(row, nrow, ends, nid, *ret, *ret_n, max_values,
		 ser)) < 0) {
		free(*ret);
		*ret = NULL;
		*ret_n = 0;
	}
	free(row);
	free(ids);
	free(ends);
	return r;
}

/*
 * Every (gpu, pid, starttime) in windows ending in (from, to]: bytes at the
 * first and the last of them, min and max over all. Oldest first per
 * instance; instances in gpu, pid order.
 */
int
store_gpumem_span(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct gpumem_span **ret, size_t *ret_n, struct window_gpumem *ret_state)
{
	return store_gpumem_span_series(s, from_wall_ns, to_wall_ns, 0, ret,
	    ret_n, ret_state, NULL);
}

/* ret_series (may be NULL): the instances' bytes per point (span_series). */
int
store_gpumem_span_series(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, size_t max_values, struct gpumem_span **ret,
    size_t *ret_n, struct window_gpumem *ret_state,
    struct gpumem_series *ret_series)
{
	int r;

	if (ret_series)
		memset(ret_series, 0, sizeof(*ret_series));
	if (s == NULL)
		return -EBADF;
	if (from_wall_ns >= to_wall_ns)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	r = s->db == NULL ? -EBADF :
			    span_locked(s, from_wall_ns, to_wall_ns, NULL, ret,
				ret_n, ret_state, max_values, ret_series);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * One instance's span: growth is ret->p.bytes − ret->first_bytes (end to
 * end), peak growth ret->p.max_bytes − ret->first_bytes. -ENOENT: the
 * instance has no GPU memory stored in the span.
 */
int
store_gpumem_growth(struct store *s, uint32_t gpu_id, int32_t pid,
    uint64_t starttime, int64_t from_wall_ns, int64_t to_wall_ns,
    struct gpumem_span *ret)
{
	struct window_gpu_proc q = { .gpu_id = gpu_id,
		.pid = pid,
		.starttime = starttime };
	struct gpumem_span *sp = NULL;
	size_t n = 0;
	int r;

	if (s == NULL)
		return -EBADF;
	if (from_wall_ns >= to_wall_ns)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	r = s->db == NULL ? -EBADF :
			    span_locked(s, from_wall_ns, to_wall_ns, &q, &sp,
				&n, NULL, 0, NULL);
	pthread_mutex_unlock(&s->lock);
	if (r < 0)
		return r;
	if (n == 0) {
		free(sp);
		return -ENOENT;
	}
	*ret = sp[0];
	free(sp);
	return 0;
}

const struct store_part store_gpumem_part = {
	.sql = gs_sql,
	.nsql = sizeof(gs_sql) / sizeof(gs_sql[0]),
	.put = store_gpumem_put,
	.load = store_gpumem_load,
};
