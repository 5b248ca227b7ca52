/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The capacity-weighted CPU part of a window in the store: one blob per
 * window in window_wcpu (doc/storage.md, "Capacity-weighted CPU"), framed
 * and compressed as the task blobs are (store_codec.c). A blob that does
 * not decode is counted (blob_errors) and the window reads without the
 * part. store_wcpu_span() reads the parts of a range alone, for `top
 * --weighted` and `proc`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_bpfrows.h"
#include "store/store_codec.h"
#include "store_int.h"
#include "wcpu/wcpu.h"

#define WCPU_PART 12	    /* the frame's part number */
#define WCPU_PART_V1 1	    /* rows after rows, each in full (still read) */
#define WCPU_PART_VERSION 2 /* columns; rows the BPF part names, by reference */
#define WCPU_ROW_MIN 5	    /* bytes a version-1 or own row takes at least */

/* How a version-2 payload gives one kind of rows (processes, threads). */
enum {
	WCPU_ROWS_OWN = 0, /* keys, on-CPU and weighted time of each row */
	WCPU_ROWS_BPF = 1, /* the BPF part's rows of the kind, their weighted
			    * time alone */
};

/* BPF rows a span read decodes at most: bpf_procs' and bpf_threads'
 * largest bound and the "other" row (store_wparts.c's ROWS_MAX) */
#define WCPU_REF_MAX (VITALS_BPF_ROWS_MAX + 1)

enum { WS_INS, WS_SEL, WS_SPAN, WS_BPF };

/* clang-format off */
static const char *const ws_sql[] = {
	[WS_INS] = "INSERT INTO main.window_wcpu (window_id, blob) VALUES (?, ?)",
	[WS_SEL] = STORE_FOLD_SEL("window_wcpu", "wcpu"),
	/* a correlated lookup, not a join (store_read.c says why) */
	[WS_SPAN] = "SELECT " STORE_BOOT_TEXT("w.") ", w.level, w.hz, w.wall_start_ns,"
	    " w.wall_end_ns,"
	    " " STORE_FOLD_BLOB("w", "window_wcpu", "wcpu") ","
	    " w.id"
	    " FROM windows w WHERE w.wall_start_ns < :to"
	    " AND w.wall_start_ns >= :from - :span AND w.wall_end_ns > :from"
	    " ORDER BY w.wall_start_ns, w.mono_start_ns, w.id",
	/* the BPF blob of a span row whose wcpu payload names its rows,
	 * through the view a window's load reads (main, span tables,
	 * spool: store_span.c, store_conn.c) */
	[WS_BPF] = "SELECT bpf FROM window_parts WHERE window_id = ?",
};
/* clang-format on */

/* ------------------------------------------------------------ version 1 */

static void
enc_rows_v1(struct store_enc *e, const struct wcpu_row *v, size_t n)
{
	size_t i;

	store_enc_u(e, n);
	for (i = 0; i < n; i++) {
		store_enc_s(e, v[i].id);
		store_enc_s(e, v[i].tgid);
		store_enc_u(e, v[i].starttime);
		store_enc_u(e, v[i].oncpu_ns);
		store_enc_u(e, v[i].wtd_ns);
	}
}

/* sorted by key, one row each: wcpu_find() bisects */
static bool
row_after(const struct wcpu_row *a, const struct wcpu_row *b)
{
	return b->id > a->id || (b->id == a->id && b->starttime > a->starttime);
}

static int
dec_rows_v1(struct store_dec *d, size_t len, size_t max, struct wcpu_row **ret,
    size_t *ret_n)
{
	uint64_t n = store_dec_u_max(d, max), i;
	struct wcpu_row *v;

	*ret = NULL;
	*ret_n = 0;
	if (n > len / WCPU_ROW_MIN)
		store_dec_fail(d);
	if (d->err || n == 0)
		return 0;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		v[i].id = (int32_t)store_dec_s(d);
		v[i].tgid = (int32_t)store_dec_s(d);
		v[i].starttime = store_dec_u(d);
		v[i].oncpu_ns = store_dec_u(d);
		v[i].wtd_ns = store_dec_u(d);
		if (i && !row_after(&v[i - 1], &v[i]))
			store_dec_fail(d);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* ------------------------------------------------------------ version 2 */

/*
 * A row's weighted time as the window's totals predict it: on-CPU time
 * × Σ wtd / Σ on-CPU (the part's head), on-CPU time itself when the head
 * has none. Exact integer arithmetic, so writer and reader agree; the
 * payload holds the row's difference from it (0 where every CPU weighs
 * 1024 at full frequency, as on a machine without capacities).
 */
static uint64_t
wtd_pred(const struct window_wcpu *p, uint64_t oncpu_ns)
{
	unsigned __int128 q;

	if (p->oncpu_ns == 0)
		return oncpu_ns;
	q = (unsigned __int128)oncpu_ns * p->wtd_ns / p->oncpu_ns;
	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

static int
cmp_row(const void *a, const void *b)
{
	const struct wcpu_row *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

/*
 * The BPF part's rows of one kind (threads, or processes) as wcpu rows
 * without their weighted time, "other" rows left out, sorted by key:
 * *ret (free it; NULL when none) and *ret_n; -EBADMSG when two share a
 * key (no wcpu part could name them), -ENOMEM.
 */
static int
ref_rows(const struct store_wcpu_ref *ref, bool thread, struct wcpu_row **ret,
    size_t *ret_n)
{
	const struct store_bpfkey *kv = ref->keys == NULL ? NULL :
	    thread					  ? ref->keys->thread :
							    ref->keys->proc;
	size_t n = ref->keys == NULL ? (thread ? ref->nthread : ref->nproc) :
	    thread		     ? ref->keys->nthread :
				       ref->keys->nproc;
	size_t i, k = 0;
	bool sorted = true;
	struct wcpu_row *v;

	*ret = NULL;
	*ret_n = 0;
	if (n == 0)
		return 0;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (kv != NULL && kv[i].id != -1)
			v[k++] = (struct wcpu_row){ .id = kv[i].id,
				.tgid = kv[i].tgid,
				.starttime = kv[i].starttime,
				.oncpu_ns = kv[i].oncpu_ns };
		else if (kv != NULL)
			continue;
		else if (thread && ref->thread[i].tid != -1)
			v[k++] = (struct wcpu_row){ .id = ref->thread[i].tid,
				.tgid = ref->thread[i].tgid,
				.starttime = ref->thread[i].starttime,
				.oncpu_ns = ref->thread[i].oncpu_ns };
		else if (!thread && ref->proc[i].tgid != -1)
			v[k++] = (struct wcpu_row){ .id = ref->proc[i].tgid,
				.tgid = ref->proc[i].tgid,
				.starttime = ref->proc[i].starttime,
				.oncpu_ns = ref->proc[i].oncpu_ns };
	}
	/* tables hand their rows back sorted: most often no sort */
	for (i = 1; i < k && sorted; i++)
		sorted = cmp_row(&v[i - 1], &v[i]) <= 0;
	if (!sorted)
		qsort(v, k, sizeof(*v), cmp_row);
	for (i = 1; i < k; i++)
		if (!row_after(&v[i - 1], &v[i])) {
			free(v);
			return -EBADMSG;
		}
	*ret = v;
	*ret_n = k;
	return 0;
}

/*
 * Whether each of rows v[0..n) is one of the BPF rows of its kind, key,
 * process and on-CPU time alike: then gap[i] (n of them) says how many
 * of those rows, in key order, lie between row i − 1's and row i's.
 */
static bool
rows_in_ref(const struct wcpu_row *v, size_t n,
    const struct store_wcpu_ref *ref, bool thread, uint64_t **ret_gap)
{
	struct wcpu_row *r = NULL;
	uint64_t *gap = NULL;
	size_t nr, i, k = 0, last = 0;
	bool in;

	*ret_gap = NULL;
	if (ref == NULL || n == 0 || ref_rows(ref, thread, &r, &nr) < 0)
		return false;
	in = nr >= n && (gap = calloc(n, sizeof(*gap))) != NULL;
	for (i = 0; in && i < n; i++) {
		while (k < nr && cmp_row(&r[k], &v[i]) < 0)
			k++;
		in = k < nr && cmp_row(&r[k], &v[i]) == 0 &&
		    r[k].tgid == v[i].tgid && r[k].oncpu_ns == v[i].oncpu_ns;
		gap[i] = k - last;
		last = ++k;
	}
	free(r);
	if (!in) {
		free(gap);
		return false;
	}
	*ret_gap = gap;
	return true;
}

static void
enc_rows(struct store_enc *e, const struct window_wcpu *p,
    const struct wcpu_row *v, size_t n, const struct store_wcpu_ref *ref,
    bool thread)
{
	uint64_t *gap, st = 0;
	int64_t prev = 0;
	size_t i;

	if (rows_in_ref(v, n, ref, thread, &gap)) {
		store_enc_u(e, WCPU_ROWS_BPF);
		store_enc_u(e, n);
		for (i = 0; i < n; i++)
			store_enc_u(e, gap[i]);
		free(gap);
	} else {
		store_enc_u(e, WCPU_ROWS_OWN);
		store_enc_u(e, n);
		for (i = 0; i < n; prev = v[i++].id)
			store_enc_s(e, v[i].id - prev);
		for (i = 0; i < n; i++)
			store_enc_s(e, (int64_t)v[i].id - v[i].tgid);
		for (i = 0; i < n; st = v[i++].starttime)
			store_enc_s(e, (int64_t)(v[i].starttime - st));
		for (i = 0; i < n; i++)
			store_enc_u(e, v[i].oncpu_ns);
	}
	for (i = 0; i < n; i++)
		store_enc_s(e,
		    (int64_t)(v[i].wtd_ns - wtd_pred(p, v[i].oncpu_ns)));
}

/* An int32 from a running sum of steps; false when it leaves the range. */
static bool
step32(int64_t *acc, int64_t step, int32_t *ret)
{
	if (step < -((int64_t)1 << 32) || step > ((int64_t)1 << 32) ||
	    *acc + step < INT32_MIN || *acc + step > INT32_MAX)
		return false;
	*acc += step;
	*ret = (int32_t)*acc;
	return true;
}

/* Own rows' keys and on-CPU times into v[0..n) (zeroed). */
static void
dec_own(struct store_dec *d, struct wcpu_row *v, size_t n)
{
	int64_t acc = 0, t;
	uint64_t st = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (!step32(&acc, store_dec_s(d), &v[i].id))
			store_dec_fail(d);
	for (i = 0; i < n; i++) {
		/* the offset's range first: no overflow in the difference */
		t = store_dec_s(d);
		if (t < -((int64_t)1 << 32) || t > ((int64_t)1 << 32))
			t = INT64_MAX;
		else
			t = (int64_t)v[i].id - t;
		if (t < INT32_MIN || t > INT32_MAX)
			store_dec_fail(d);
		else
			v[i].tgid = (int32_t)t;
	}
	for (i = 0; i < n; i++)
		v[i].starttime = st += (uint64_t)store_dec_s(d);
	for (i = 0; i < n; i++) {
		v[i].oncpu_ns = store_dec_u(d);
		if (i && !row_after(&v[i - 1], &v[i]))
			store_dec_fail(d);
	}
}

static int
dec_rows(struct store_dec *d, size_t len, size_t max,
    const struct window_wcpu *p, const struct store_wcpu_ref *ref, bool thread,
    struct wcpu_row **ret, size_t *ret_n)
{
	uint64_t mode = store_dec_u_max(d, WCPU_ROWS_BPF), n, i, k, gap;
	struct wcpu_row *v = NULL;
	size_t nr = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	/* an own row takes at least 5 bytes, a named one 2 */
	n = store_dec_u_max(d, max);
	if (n > len / (mode == WCPU_ROWS_OWN ? WCPU_ROW_MIN : 2))
		store_dec_fail(d);
	if (d->err)
		return 0;
	if (mode == WCPU_ROWS_BPF) {
		if (ref == NULL)
			return -ENODATA;
		if ((r = ref_rows(ref, thread, &v, &nr)) < 0)
			return r;
		/* row i is the BPF row gap[i] past row i − 1's: moved down
		 * in place, as k ≥ i */
		for (i = 0, k = 0; i < n && !d->err; i++, k++) {
			gap = store_dec_u_max(d, nr);
			if (gap > nr - k) {
				store_dec_fail(d);
				break;
			}
			k += gap;
			if (k >= nr)
				store_dec_fail(d);
			else
				v[i] = v[k];
		}
		if (d->err) {
			free(v);
			return 0;
		}
	} else if (n && (v = calloc(n, sizeof(*v))) == NULL) {
		return -ENOMEM;
	} else {
		dec_own(d, v, n);
	}
	for (i = 0; i < n; i++)
		v[i].wtd_ns = wtd_pred(p, v[i].oncpu_ns) +
		    (uint64_t)store_dec_s(d);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The head, both versions: the window's figures before the rows. */
static void
enc_head(struct store_enc *e, const struct window_wcpu *p)
{
	store_enc_u(e, p->busy_ticks);
	store_enc_u(e, p->wbusy);
	store_enc_u(e, p->nocap_ticks);
	store_enc_u(e, p->nofreq_ticks);
	store_enc_u(e, p->windows);
	store_enc_u(e, p->drains);
	store_enc_u(e, p->oncpu_ns);
	store_enc_u(e, p->wtd_ns);
	store_enc_u(e, p->nocap_ns);
	store_enc_u(e, p->nofreq_ns);
	store_enc_u(e, p->procs_cut);
	store_enc_u(e, p->threads_cut);
}

/* The payload, field by field as doc/storage.md lists it (version 2). */
void
store_wcpu_encode(struct store_enc *e, const struct window_wcpu *p,
    const struct store_wcpu_ref *ref)
{
	enc_head(e, p);
	enc_rows(e, p, p->procs, p->nprocs, ref, false);
	enc_rows(e, p, p->threads, p->nthreads, ref, true);
}

/* Version 1's payload (older stores; tests). */
void
store_wcpu_encode_v1(struct store_enc *e, const struct window_wcpu *p)
{
	enc_head(e, p);
	enc_rows_v1(e, p->procs, p->nprocs);
	enc_rows_v1(e, p->threads, p->nthreads);
}

/* payload of version into a new part: -EBADMSG for anything malformed,
 * -ENODATA for rows named by reference when ref is NULL. */
int
store_wcpu_decode(const void *payload, size_t len, unsigned version,
    const struct store_wcpu_ref *ref, struct window_wcpu **ret)
{
	struct window_wcpu *p;
	struct store_dec d;
	int r;

	*ret = NULL;
	if (version != WCPU_PART_V1 && version != WCPU_PART_VERSION)
		return -EBADMSG;
	if ((p = window_wcpu_new()) == NULL)
		return -ENOMEM;
	store_dec_init(&d, payload, len);
	p->busy_ticks = store_dec_u(&d);
	p->wbusy = store_dec_u(&d);
	p->nocap_ticks = store_dec_u(&d);
	p->nofreq_ticks = store_dec_u(&d);
	p->windows = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->drains = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->oncpu_ns = store_dec_u(&d);
	p->wtd_ns = store_dec_u(&d);
	p->nocap_ns = store_dec_u(&d);
	p->nofreq_ns = store_dec_u(&d);
	p->procs_cut = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->threads_cut = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	if (version == WCPU_PART_V1)
		r = dec_rows_v1(&d, len, WCPU_PROCS_MAX, &p->procs, &p->nprocs);
	else
		r = dec_rows(&d, len, WCPU_PROCS_MAX, p, ref, false, &p->procs,
		    &p->nprocs);
	if (r == 0 && version == WCPU_PART_V1)
		r = dec_rows_v1(&d, len, WCPU_THREADS_MAX, &p->threads,
		    &p->nthreads);
	else if (r == 0)
		r = dec_rows(&d, len, WCPU_THREADS_MAX, p, ref, true,
		    &p->threads, &p->nthreads);
	if (r == 0 && store_dec_end(&d) < 0)
		r = -EBADMSG;
	if (r < 0) {
		window_wcpu_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* A blob b[0..n): its frame, then its payload (store_wcpu_decode). */
static int
wcpu_unframe(const void *b, size_t n, const struct store_wcpu_ref *ref,
    struct window_wcpu **ret)
{
	struct store_frame f;
	int r;

	*ret = NULL;
	if (store_frame_get(b, n, &f) < 0)
		return -EBADMSG;
	r = f.part != WCPU_PART ?
	    -EBADMSG :
	    store_wcpu_decode(f.payload, f.len, f.version, ref, ret);
	store_frame_release(&f);
	return r;
}

/* The rows of the window's sched part, as a reference (NULL: none). */
static const struct store_wcpu_ref *
sched_ref(const struct window *w, struct store_wcpu_ref *ref)
{
	const struct window_bpf *b = window_sched(w);

	if (b == NULL || b->head_only)
		return NULL;
	*ref = (struct store_wcpu_ref){ .proc = b->proc,
		.nproc = b->nprocs,
		.thread = b->thread,
		.nthread = b->nthreads };
	return ref;
}

static int
store_wcpu_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_wcpu *p = window_wcpu(w);
	struct store_wcpu_ref ref;
	struct store_enc pl = { 0 };
	int rc;

	if (p == NULL)
		return SQLITE_OK;
	store_wcpu_encode(&pl, p, sched_ref(w, &ref));
	rc = store_blob_put(store_stmt(s, &s->part_st[WPART_WCPU][WS_INS],
				ws_sql[WS_INS]),
	    id, WCPU_PART, WCPU_PART_VERSION, &pl);
	store_enc_release(&pl);
	return rc;
}

/*
 * Column col of st's row into *ret (NULL: none); ref, the BPF rows the
 * blob may name (NULL: none). A blob that does not decode, or names rows
 * the window has not got, is counted (blob_errors) and reads as none.
 */
static int
wcpu_column(struct store *s, sqlite3_stmt *st, int col,
    const struct store_wcpu_ref *ref, struct window_wcpu **ret)
{
	int r = wcpu_unframe(sqlite3_column_blob(st, col),
	    (size_t)sqlite3_column_bytes(st, col), ref, ret);

	if (r == -EBADMSG || r == -ENODATA) {
		store_blob_error(s);
		*ret = NULL;
		r = 0;
	}
	return r;
}

/* After the sched part's load (store_parts[] order): its rows are the
 * reference a version-2 blob may name. */
static int
store_wcpu_load(struct store *s, int64_t id, struct window *w)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_WCPU][WS_SEL],
	    ws_sql[WS_SEL]);
	struct window_wcpu *p = NULL;
	struct store_wcpu_ref ref;
	sqlite3_stmt *at;
	int rc, r = 0, col;

	if (st == NULL)
		return -ENOTSUP;
	rc = store_fold_step(s, st, STORE_FOLD_WCPU, id, &at, &col);
	if (rc == SQLITE_ROW) {
		/* the sched part's rows (loaded before this part, even when
		 * its counters did not read: store_bpf_load) */
		r = wcpu_column(s, at, col, sched_ref(w, &ref), &p);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read wcpu");
	if (r < 0)
		return r;
	if (p) {
		window_wcpu_free(window_wcpu(w));
		window_part_set(w, WPART_WCPU, p);
	}
	return 0;
}

/* The BPF rows' keys of window id (span_part): 0, -ENOENT none (no row,
 * no blob, or one that did not decode: counted), -ENOMEM. */
static int
span_keys(struct store *s, int64_t id, struct store_bpfkeys *ret)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_WCPU][WS_BPF],
	    ws_sql[WS_BPF]);
	struct store_frame f;
	int rc, r = -ENOENT;

	if (st == NULL)
		return -ENOTSUP;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_BLOB ||
		    store_frame_get(sqlite3_column_blob(st, 0),
			(size_t)sqlite3_column_bytes(st, 0), &f) < 0) {
			r = -EBADMSG;
		} else {
			r = f.part != STORE_BPFROWS_PART ?
			    -EBADMSG :
			    store_bpfrows_keys(f.payload, f.len, f.version,
				WCPU_REF_MAX, ret);
			store_frame_release(&f);
		}
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read wcpu bpf");
	if (r == -EBADMSG || r == -ENOENT) {
		store_blob_error(s);
		r = -ENOENT;
	}
	return r;
}

/*
 * The wcpu blob in column 5 of a span row; only when its payload names
 * the window's BPF rows, their keys (span_keys) for the window id in
 * column 6. No BPF rows to name leaves such a part unreadable: counted,
 * none.
 */
static int
span_part(struct store *s, sqlite3_stmt *st, struct window_wcpu **ret)
{
	struct store_bpfkeys keys = { 0 };
	int r;

	r = wcpu_unframe(sqlite3_column_blob(st, 5),
	    (size_t)sqlite3_column_bytes(st, 5), NULL, ret);
	if (r != -ENODATA)
		return r == -EBADMSG ? (store_blob_error(s), 0) : r;
	if ((r = span_keys(s, sqlite3_column_int64(st, 6), &keys)) == 0) {
		r = wcpu_column(s, st, 5,
		    &(struct store_wcpu_ref){ .keys = &keys }, ret);
		store_bpfkeys_release(&keys);
	}
	return r == -ENOENT ? 0 : r;
}

void
store_wcpu_span_free(struct store_wcpu_win *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		window_wcpu_free(v[i].p);
	free(v);
}

/* The windows of [from, to] oldest first, each with its part (NULL:
 * none, or a blob that did not decode: counted). */
int
store_wcpu_span(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct store_wcpu_win **ret, size_t *ret_n)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_WCPU][WS_SPAN],
	    ws_sql[WS_SPAN]);
	struct store_wcpu_win *v = NULL, *e;
	size_t n = 0, cap = 0;
	int rc = SQLITE_DONE, r = 0;

	if (st == NULL)
		return -ENOTSUP;
	store_bind_named(st, ":from", from_wall_ns);
	store_bind_named(st, ":to", to_wall_ns);
	store_bind_named(st, ":span", s->max_span_ns);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *boot = sqlite3_column_text(st, 0);

		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;

			if ((e = realloc(v, nc * sizeof(*v))) == NULL) {
				r = -ENOMEM;
				break;
			}
			v = e;
			cap = nc;
		}
		e = &v[n];
		memset(e, 0, sizeof(*e));
		snprintf(e->boot_id, sizeof(e->boot_id), "%s",
		    boot ? (const char *)boot : "");
		e->level = (uint32_t)sqlite3_column_int64(st, 1);
		e->hz = (uint32_t)sqlite3_column_int64(st, 2);
		e->wall_start_ns = sqlite3_column_int64(st, 3);
		e->wall_end_ns = sqlite3_column_int64(st, 4);
		if (sqlite3_column_type(st, 5) == SQLITE_BLOB)
			r = span_part(s, st, &e->p);
		n++;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "read wcpu span");
	sqlite3_reset(st);
	if (r < 0) {
		store_wcpu_span_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

const struct store_part store_wcpu_part = {
	.sql = ws_sql,
	.nsql = sizeof(ws_sql) / sizeof(ws_sql[0]),
	.put = store_wcpu_put,
	.load = store_wcpu_load,
};
