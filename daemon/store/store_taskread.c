/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tasks read back from their blobs (schema v8, store_inst.c writes them):
 * a whole window's processes and threads, top-N over a range and one
 * task's history. The windows of a range come from the windows_wall
 * index, each window's blob is decoded here and summed by instance id in
 * a hash; identities come from the instance table (or the window's own
 * row in window_task_ident), looked up once per read. The answers are
 * the ones v7's SQL gave: the same sums, the same order (metric
 * descending, then id, starttime), names and end state from the latest
 * window of the range holding the task.
 *
 * A blob that does not decode (frame, checksum, part, version or bytes)
 * is skipped and counted (blob_errors); the rest of the window reads.
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

#define TASKS_MAX (1u << 20) /* rows of one blob; more is refused */
#define RCACHE_MAX 65536

/* ---------------------------------------------------------- identities */

struct ident {
	bool thread;
	int32_t id, tgid;
	uint64_t starttime;
	uint32_t uid;
	char comm[VITALS_COMM_LEN];
	char name[VITALS_NAME_LEN];
};

struct store_rcache {
	struct store_imap map;
	struct ident *e;
	size_t n, cap;
};

void
store_rcache_free(struct store *s)
{
	if (s->rcache == NULL)
		return;
	store_imap_free(&s->rcache->map);
	free(s->rcache->e);
	free(s->rcache);
	s->rcache = NULL;
}

void
store_rcache_reset(struct store *s)
{
	store_rcache_free(s);
}

static void
col_text(sqlite3_stmt *st, int i, char *buf, size_t sz)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	snprintf(buf, sz, "%s", t ? t : "");
}

/* tgid, uid, comm, name from column i on (a NULL name is the comm) */
static void
col_ident(sqlite3_stmt *st, int i, struct ident *d)
{
	d->tgid = sqlite3_column_int(st, i);
	d->uid = (uint32_t)sqlite3_column_int64(st, i + 1);
	col_text(st, i + 2, d->comm, sizeof(d->comm));
	if (sqlite3_column_type(st, i + 3) == SQLITE_NULL)
		memcpy(d->name, d->comm, sizeof(d->comm));
	else
		col_text(st, i + 3, d->name, sizeof(d->name));
}

/* The instance iid: *ret NULL when there is none. */
static int
inst_ident(struct store *s, int64_t iid, const struct ident **ret)
{
	struct store_rcache *c = s->rcache;
	sqlite3_stmt *st = store_rs(s, RS_INST);
	struct ident d;
	uint32_t k;
	int rc;

	*ret = NULL;
	if (c != NULL && c->n >= RCACHE_MAX) {
		store_rcache_reset(s);
		c = NULL;
	}
	if (c == NULL && (c = s->rcache = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	if ((k = store_imap_get(&c->map, iid)) != UINT32_MAX) {
		*ret = &c->e[k];
		return 0;
	}
	memset(&d, 0, sizeof(d));
	sqlite3_bind_int64(st, 1, iid);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		d.thread = sqlite3_column_int(st, 0) != 0;
		d.id = sqlite3_column_int(st, 1);
		d.starttime = (uint64_t)sqlite3_column_int64(st, 2);
		col_ident(st, 3, &d);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return store_fail(s, rc, "instance");
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 256;
		struct ident *p = realloc(c->e, nc * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		c->e = p;
		c->cap = nc;
	}
	c->e[c->n] = d;
	if (store_imap_put(&c->map, iid, (uint32_t)c->n) < 0)
		return -ENOMEM;
	*ret = &c->e[c->n++];
	return 0;
}

/* The identity a window's row of iid carried: its own, else the
 * instance's (whose id and starttime it always takes). */
static int
row_ident(struct store *s, int64_t wid, int64_t iid, struct ident *ret)
{
	sqlite3_stmt *st = store_rs(s, RS_IDENT_ONE);
	const struct ident *in;
	int rc, r;

	if ((r = inst_ident(s, iid, &in)) < 0)
		return r;
	if (in == NULL)
		return -ENOENT;
	*ret = *in;
	sqlite3_bind_int64(st, 1, wid);
	sqlite3_bind_int64(st, 2, iid);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		col_ident(st, 0, ret);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(s, rc, "task identity");
	return 0;
}

static void
ident_to_task(const struct ident *d, struct window_task *t)
{
	t->id = d->id;
	t->starttime = d->starttime;
	t->tgid = d->tgid;
	t->uid = d->uid;
	memcpy(t->comm, d->comm, sizeof(t->comm));
	window_task_set_name(t, d->name);
}

/* ---------------------------------------------------------------- blobs */

/* The rows of one stored blob (want: only those of these ids, sorted);
 * -EBADMSG for anything malformed. */
static int
blob_decode(const void *blob, size_t n, const uint64_t *want, size_t nwant,
    struct window_task **ret, uint64_t **ret_iid, size_t *ret_n)
{
	struct store_frame f;
	int r;

	if ((r = store_frame_get(blob, n, &f)) < 0)
		return r;
	if (f.part != STORE_TASKS_PART)
		r = -EBADMSG;
	else if (want != NULL)
		r = store_tasks_find(f.payload, f.len, f.version, TASKS_MAX,
		    want, nwant, ret, ret_iid, ret_n);
	else
		r = store_tasks_get(f.payload, f.len, f.version, TASKS_MAX, ret,
		    ret_iid, ret_n);
	store_frame_release(&f);
	return r;
}

static int col_tasks_of(struct store *s, sqlite3_stmt *st, int i,
    const uint64_t *want, size_t nwant, struct window_task **ret,
    uint64_t **ret_iid, size_t *ret_n);

/* Column i of st decoded (NULL: no rows); a bad blob counted, no rows. */
static int
col_tasks(struct store *s, sqlite3_stmt *st, int i, struct window_task **ret,
    uint64_t **ret_iid, size_t *ret_n)
{
	return col_tasks_of(s, st, i, NULL, 0, ret, ret_iid, ret_n);
}

static int
col_tasks_of(struct store *s, sqlite3_stmt *st, int i, const uint64_t *want,
    size_t nwant, struct window_task **ret, uint64_t **ret_iid, size_t *ret_n)
{
	const void *b;
	int n, r;

	*ret = NULL;
	*ret_iid = NULL;
	*ret_n = 0;
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	b = sqlite3_column_blob(st, i);
	n = sqlite3_column_bytes(st, i);
	if ((r = blob_decode(b, (size_t)n, want, nwant, ret, ret_iid, ret_n)) ==
	    -ENOMEM)
		return r;
	if (r < 0)
		store_blob_error(s);
	return 0;
}

static int
task_cmp(const void *a, const void *b)
{
	const struct window_task *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

struct wident {
	int64_t iid;
	struct ident d;
};

/* A window's rows with their identities, in (id, starttime) order as
 * v7's key kept them, appended to w. */
static int
add_rows(struct store *s, struct window *w, bool thread, struct window_task *t,
    const uint64_t *iid, size_t n, const struct wident *own, size_t nown)
{
	const struct ident *in;
	size_t i, j, k = 0;
	int r;

	for (i = 0; i < n; i++) {
		for (j = 0; j < nown; j++)
			if (own[j].iid == (int64_t)iid[i])
				break;
		if ((r = inst_ident(s, (int64_t)iid[i], &in)) < 0)
			return r;
		if (in == NULL || in->thread != thread) {
			store_blob_error(s); /* names no instance of its list */
			continue;
		}
		t[k] = t[i];
		ident_to_task(j < nown ? &own[j].d : in, &t[k]);
		t[k].id = in->id;
		t[k].starttime = in->starttime;
		k++;
	}
	if (k > 1) /* t may be NULL for none: qsort wants an array */
		qsort(t, k, sizeof(*t), task_cmp);
	for (i = 0; i < k; i++)
		if ((r = window_add_task(w, thread, &t[i])) < 0)
			return r;
	return 0;
}

int
store_load_tasks(struct store *s, int64_t id, struct window *w)
{
	sqlite3_stmt *st = store_rs(s, RS_TASKS);
	struct window_task *t[2] = { NULL, NULL };
	uint64_t *iid[2] = { NULL, NULL };
	size_t n[2] = { 0, 0 }, nown = 0, cown = 0;
	struct wident *own = NULL, *p;
	int rc, r = 0, i;

	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = col_tasks(s, st, 0, &t[0], &iid[0], &n[0]);
		if (r == 0)
			r = col_tasks(s, st, 1, &t[1], &iid[1], &n[1]);
	} else if (rc != SQLITE_DONE) {
		r = store_fail(s, rc, "read window tasks");
	}
	sqlite3_reset(st);
	st = store_rs(s, RS_IDENT);
	sqlite3_bind_int64(st, 1, id);
	while (
	    r == 0 && (n[0] || n[1]) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (nown == cown) {
			cown = cown ? cown * 2 : 8;
			if ((p = realloc(own, cown * sizeof(*p))) == NULL) {
				r = -ENOMEM;
				break;
			}
			own = p;
		}
		own[nown].iid = sqlite3_column_int64(st, 0);
		col_ident(st, 1, &own[nown].d);
		nown++;
	}
	sqlite3_reset(st);
	for (i = 0; i < 2 && r == 0; i++)
		r = add_rows(s, w, i, t[i], iid[i], n[i], own, nown);
	for (i = 0; i < 2; i++) {
		free(t[i]);
		free(iid[i]);
	}
	free(own);
	return r;
}

/* ---------------------------------------------------------------- top-N */

static void
bind_range(struct store *s, sqlite3_stmt *st, int64_t from, int64_t to,
    bool threads)
{
	store_bind_named(st, ":from", from);
	store_bind_named(st, ":to", to);
	store_bind_named(st, ":span", s->max_span_ns);
	store_bind_named(st, ":thread", threads);
}

/* The most sums (instances) whose memory a connection keeps between
 * top-N reads: 4096 x ~200 bytes plus the index */
#define TOP_AGGS_KEEP 4096

/* RS_TASK_BLOBS columns (a top-N's) */
enum { TB_ID, TB_BLOB };

/* RS_TASK_SEG columns (a history's) */
enum {
	TW_ID,
	TW_BOOT,
	TW_LEVEL,
	TW_HZ,
	TW_MONO0,
	TW_MONO1,
	TW_WALL0,
	TW_WALL1,
	TW_BLOB
};

static uint64_t
agg_key(const struct window_task *t, enum store_metric m)
{
	switch (m) {
	case METRIC_CPU:
		return t->d_utime + t->d_stime;
	case METRIC_MINFLT:
		return t->d_minflt;
	case METRIC_MAJFLT:
		return t->d_majflt;
	default:
		return t->rss_pages_max;
	}
}

static int
agg_key_cmp(const void *a, const void *b)
{
	const struct store_agg *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->iid < y->iid ? -1 : x->iid > y->iid;
}

static int
agg_final_cmp(const void *a, const void *b)
{
	const struct store_agg *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return task_cmp(&x->t, &y->t);
}

/*
 * The windows of the range [from, to) whose wall_start_ns is in [lo, hi),
 * oldest first, summed into g (store_tasksum.c covers the rest of the
 * range with summaries).
 */
static int
agg_windows(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, int64_t lo, int64_t hi, struct store_aggs *g)
{
	sqlite3_stmt *st = store_rs(s, RS_TASK_BLOBS);
	struct window_task *t;
	uint64_t *iid;
	size_t nt;
	int rc = SQLITE_DONE, r = 0;

	bind_range(s, st, from_wall_ns, to_wall_ns, threads);
	store_bind_named(st, ":lo", lo);
	store_bind_named(st, ":hi", hi);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t wid = sqlite3_column_int64(st, TB_ID);
		const void *b;
		size_t bn;

		if (sqlite3_column_type(st, TB_BLOB) == SQLITE_NULL)
			continue;
		b = sqlite3_column_blob(st, TB_BLOB);
		bn = (size_t)sqlite3_column_bytes(st, TB_BLOB);
		if ((r = store_wcache_sum(s, wid, threads, b, bn, g)) != 0) {
			r = r < 0 ? r : 0;
			continue;
		}
		t = NULL;
		iid = NULL;
		nt = 0;
		if ((r = blob_decode(b, bn, NULL, 0, &t, &iid, &nt)) < 0) {
			free(t);
			free(iid);
			if (r == -ENOMEM)
				break;
			store_blob_error(s); /* counted, no rows */
			r = 0;
			continue;
		}
		r = store_agg_rows(g, wid, t, iid, nt);
		if (r == 0)
			store_wcache_put(s, wid, threads, b, bn, t, iid, nt);
		free(t);
		free(iid);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "top-N");
	sqlite3_reset(st);
	return r;
}

static int
top_locked(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, enum store_metric m, unsigned n, struct window_task **ret,
    size_t *ret_n)
{
	struct store_aggs g = s->top_aggs;
	struct store_agg *a;
	struct window_task *out = NULL;
	size_t na, k, i;
	struct ident d;
	int r = 0;

	if (s == NULL || s->db == NULL)
		return -EBADF;
	if ((unsigned)m > METRIC_RSS || from_wall_ns >= to_wall_ns)
		return -EINVAL;
	/* the last read's memory, emptied (~100 KiB for 500 tasks: the
	 * pages a fresh allocation would fault in again every read) */
	memset(&s->top_aggs, 0, sizeof(s->top_aggs));
	store_aggs_reset(&g);
	store_rcache_reset(s);
	store_wcache_begin(s);
	r = store_sum_top(s, from_wall_ns, to_wall_ns, threads, &g,
	    agg_windows);
	r = store_wcache_end(s, &g, r);
	a = g.a;
	na = g.n;
	/*
	 * By the metric; only those down to the cut, and its ties, need id
	 * and starttime. An id with no instance is dropped (counted) and
	 * the cut moves down past it.
	 */
	for (i = 0; i < na; i++)
		a[i].key = agg_key(&a[i].t, m);
	if (na > 1)
		qsort(a, na, sizeof(*a), agg_key_cmp);
	for (i = k = 0; i < na && r == 0; i++) {
		const struct ident *in;

		if (n && k >= n && a[i].key != a[k - 1].key)
			break;
		if ((r = inst_ident(s, a[i].iid, &in)) < 0)
			break;
		if (in == NULL) {
			store_blob_error(s);
			continue;
		}
		a[i].t.id = in->id;
		a[i].t.starttime = in->starttime;
		a[k++] = a[i];
	}
	if (k > 1)
		qsort(a, k, sizeof(*a), agg_final_cmp);
	if (n && k > n)
		k = n;
	if (r == 0 && k && (out = calloc(k, sizeof(*out))) == NULL)
		r = -ENOMEM;
	for (i = 0; i < k && r == 0; i++) {
		out[i] = a[i].t;
		if ((r = row_ident(s, a[i].last_wid, a[i].iid, &d)) == -ENOENT)
			r = 0; /* counted above */
		else if (r == 0)
			ident_to_task(&d, &out[i]);
	}
	/* kept for the next read unless it grew past TOP_AGGS_KEEP */
	if (g.cap <= TOP_AGGS_KEEP) {
		store_aggs_reset(&g);
		s->top_aggs = g;
	} else
		store_aggs_free(&g);
	if (r < 0) {
		free(out);
		return r;
	}
	*ret = out;
	*ret_n = k;
	return 0;
}

int
store_top(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, enum store_metric m, unsigned n, struct window_task **ret,
    size_t *ret_n)
{
	int r;

	if (s == NULL) /* s->db: under the lock (store_recover) */
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = top_locked(s, from_wall_ns, to_wall_ns, threads, m, n, ret, ret_n);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* -------------------------------------------------------------- history */

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
hist_cmp(const void *a, const void *b)
{
	return task_cmp(&((const struct store_hist *)a)->t,
	    &((const struct store_hist *)b)->t);
}

struct hist_acc {
	const struct store_imap *set;
	const uint64_t *want;
	size_t nwant;
	struct store_hist *out;
	size_t k, cap;
};

/* The rows of the instances in acc->set in the windows of the range
 * that start in [lo, hi), appended to acc->out. */
static int
hist_seg(struct store *s, struct hist_acc *acc, int64_t from_wall_ns,
    int64_t to_wall_ns, bool threads, int64_t lo, int64_t hi)
{
	sqlite3_stmt *st = store_rs(s, RS_TASK_SEG);
	struct window_task *t;
	struct store_hist *h;
	uint64_t *iid;
	size_t nt, i, first;
	struct ident d;
	int rc = SQLITE_DONE, r = 0;

	bind_range(s, st, from_wall_ns, to_wall_ns, threads);
	store_bind_named(st, ":lo", lo);
	store_bind_named(st, ":hi", hi);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t wid = sqlite3_column_int64(st, TW_ID);

		/* only its rows: the blob is read up to the last of them */
		if ((r = col_tasks_of(s, st, TW_BLOB, acc->want, acc->nwant, &t,
			 &iid, &nt)) < 0)
			break;
		first = acc->k;
		for (i = 0; i < nt && r == 0; i++) {
			if (store_imap_get(acc->set, (int64_t)iid[i]) ==
			    UINT32_MAX)
				continue;
			if ((r = row_ident(s, wid, (int64_t)iid[i], &d)) ==
			    -ENOENT) {
				store_blob_error(s);
				r = 0;
				continue;
			}
			if (r < 0)
				break;
			if (acc->k == acc->cap) {
				acc->cap = acc->cap ? acc->cap * 2 : 32;
				if ((h = realloc(acc->out,
					 acc->cap * sizeof(*h))) == NULL) {
					r = -ENOMEM;
					break;
				}
				acc->out = h;
			}
			h = &acc->out[acc->k++];
			memset(h, 0, sizeof(*h));
			col_text(st, TW_BOOT, h->boot_id, sizeof(h->boot_id));
			h->level = (uint32_t)sqlite3_column_int64(st, TW_LEVEL);
			h->hz = (uint32_t)sqlite3_column_int64(st, TW_HZ);
			h->mono_start_ns = sqlite3_column_int64(st, TW_MONO0);
			h->mono_end_ns = sqlite3_column_int64(st, TW_MONO1);
			h->wall_start_ns = sqlite3_column_int64(st, TW_WALL0);
			h->wall_end_ns = sqlite3_column_int64(st, TW_WALL1);
			h->t = t[i];
			ident_to_task(&d, &h->t);
		}
		free(t);
		free(iid);
		if (r == 0 && acc->k - first > 1)
			qsort(acc->out + first, acc->k - first,
			    sizeof(*acc->out), hist_cmp);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "history");
	sqlite3_reset(st);
	return r;
}

/*
 * Rows of the instances q selects (RS_INST_ID: one id, one or every
 * starttime; RS_INST_TGID: a process's threads), oldest window first,
 * in (id, starttime) order inside a window.
 */
static int
history_locked(struct store *s, enum store_rstmt q, bool threads, int32_t id,
    uint64_t starttime, int64_t from_wall_ns, int64_t to_wall_ns,
    struct store_hist **ret, size_t *ret_n)
{
	struct store_imap set = { 0 };
	uint64_t *want = NULL, *wp;
	size_t nwant = 0, cwant = 0, nskip = 0;
	struct store_hist *out = NULL;
	int64_t *skip = NULL;
	size_t k = 0, cap = 0, i;
	sqlite3_stmt *st;
	int rc, r = 0;

	if (s == NULL || s->db == NULL)
		return -EBADF;
	if (from_wall_ns >= to_wall_ns)
		return -EINVAL;
	store_rcache_reset(s);
	st = store_rs(s, q);
	store_bind_named(st, ":thread", threads);
	store_bind_named(st, ":id", id);
	store_bind_named(st, ":start", (int64_t)starttime);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t v = sqlite3_column_int64(st, 0);

		if (nwant == cwant) {
			cwant = cwant ? cwant * 2 : 8;
			if ((wp = realloc(want, cwant * sizeof(*wp))) == NULL) {
				r = -ENOMEM;
				break;
			}
			want = wp;
		}
		want[nwant++] = (uint64_t)v;
		r = store_imap_put(&set, v, 0);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "history");
	sqlite3_reset(st);
	if (nwant > 1)
		qsort(want, nwant, sizeof(*want), u64_cmp);
	/* hours whose summary holds none of them are not read */
	if (r == 0 && set.n)
		r = store_sum_absent(s, from_wall_ns, to_wall_ns, threads, want,
		    nwant, &skip, &nskip);
	for (i = 0; r == 0 && set.n && i <= nskip; i++) {
		struct hist_acc acc = { &set, want, nwant, out, k, cap };

		r = hist_seg(s, &acc, from_wall_ns, to_wall_ns, threads,
		    i ? skip[i - 1] + STORE_SUM_HOUR_NS : INT64_MIN,
		    i < nskip ? skip[i] : INT64_MAX);
		out = acc.out;
		k = acc.k;
		cap = acc.cap;
	}
	free(skip);
	store_imap_free(&set);
	free(want);
	if (r < 0) {
		free(out);
		return r;
	}
	*ret = out;
	*ret_n = k;
	return 0;
}

int
store_history(struct store *s, bool threads, int32_t id, uint64_t starttime,
    int64_t from_wall_ns, int64_t to_wall_ns, struct store_hist **ret,
    size_t *ret_n)
{
	int r;

	if (s == NULL) /* s->db: under the lock (store_recover) */
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = history_locked(s, RS_INST_ID, threads, id, starttime, from_wall_ns,
	    to_wall_ns, ret, ret_n);
	pthread_mutex_unlock(&s->lock);
	return r;
}

int
store_thread_history(struct store *s, int32_t tgid, uint64_t since,
    int64_t from_wall_ns, int64_t to_wall_ns, struct store_hist **ret,
    size_t *ret_n)
{
	int r;

	if (s == NULL) /* s->db: under the lock (store_recover) */
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = history_locked(s, RS_INST_TGID, true, tgid, since, from_wall_ns,
	    to_wall_ns, ret, ret_n);
	pthread_mutex_unlock(&s->lock);
	return r;
}

int
store_process(struct store *s, int32_t pid, uint64_t starttime,
    int64_t from_wall_ns, int64_t to_wall_ns, struct window_task **ret,
    size_t *ret_n)
{
	struct store_hist *h;
	struct window_task *t = NULL;
	size_t n, i;
	int r;

	if ((r = store_history(s, false, pid, starttime, from_wall_ns,
		 to_wall_ns, &h, &n)) < 0)
		return r;
	if (n && (t = malloc(n * sizeof(*t))) == NULL) {
		free(h);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		t[i] = h[i].t;
	free(h);
	*ret = t;
	*ret_n = n;
	return 0;
}
