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
#include "store/store_codec.h"
#include "store_int.h"
#include "wcpu/wcpu.h"

#define WCPU_PART 12 /* the frame's part number */
#define WCPU_PART_VERSION 1
#define WCPU_ROW_MIN 5 /* bytes a row takes at least */

enum { WS_INS, WS_SEL, WS_SPAN };

/* clang-format off */
static const char *const ws_sql[] = {
	[WS_INS] = "INSERT INTO window_wcpu (window_id, blob) VALUES (?, ?)",
	[WS_SEL] = "SELECT blob FROM window_wcpu WHERE window_id = ?",
	/* a correlated lookup, not a join (store_read.c says why) */
	[WS_SPAN] = "SELECT " STORE_BOOT_TEXT("w.") ", w.level, w.hz, w.wall_start_ns,"
	    " w.wall_end_ns,"
	    " (SELECT c.blob FROM window_wcpu c WHERE c.window_id = w.id)"
	    " FROM windows w WHERE w.wall_start_ns < :to"
	    " AND w.wall_start_ns >= :from - :span AND w.wall_end_ns > :from"
	    " ORDER BY w.wall_start_ns, w.mono_start_ns, w.id",
};
/* clang-format on */

static void
enc_rows(struct store_enc *e, const struct wcpu_row *v, size_t n)
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

static int
dec_rows(struct store_dec *d, size_t len, size_t max, struct wcpu_row **ret,
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
		/* sorted by key, one row each: wcpu_find() bisects */
		if (i &&
		    (v[i].id < v[i - 1].id ||
			(v[i].id == v[i - 1].id &&
			    v[i].starttime <= v[i - 1].starttime)))
			store_dec_fail(d);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The payload, field by field as doc/storage.md lists it. */
void
store_wcpu_encode(struct store_enc *e, const struct window_wcpu *p)
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
	enc_rows(e, p->procs, p->nprocs);
	enc_rows(e, p->threads, p->nthreads);
}

/* payload into a new part; -EBADMSG for anything malformed. */
int
store_wcpu_decode(const void *payload, size_t len, struct window_wcpu **ret)
{
	struct window_wcpu *p;
	struct store_dec d;
	int r;

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
	if ((r = dec_rows(&d, len, WCPU_PROCS_MAX, &p->procs, &p->nprocs)) <
		0 ||
	    (r = dec_rows(&d, len, WCPU_THREADS_MAX, &p->threads,
		 &p->nthreads)) < 0) {
		window_wcpu_free(p);
		return r;
	}
	if (store_dec_end(&d) < 0) {
		window_wcpu_free(p);
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static int
wcpu_dec(const void *payload, size_t len, void **ret)
{
	struct window_wcpu *p = NULL;
	int r = store_wcpu_decode(payload, len, &p);

	*ret = p;
	return r;
}

static int
store_wcpu_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_wcpu *p = window_wcpu(w);
	struct store_enc pl = { 0 };
	int rc;

	if (p == NULL)
		return SQLITE_OK;
	store_wcpu_encode(&pl, p);
	rc = store_blob_put(store_stmt(s, &s->part_st[WPART_WCPU][WS_INS],
				ws_sql[WS_INS]),
	    id, WCPU_PART, WCPU_PART_VERSION, &pl);
	store_enc_release(&pl);
	return rc;
}

static int
store_wcpu_load(struct store *s, int64_t id, struct window *w)
{
	void *p;
	int r;

	r = store_blob_load(s,
	    store_stmt(s, &s->part_st[WPART_WCPU][WS_SEL], ws_sql[WS_SEL]), id,
	    WCPU_PART, WCPU_PART_VERSION, wcpu_dec, &p, "read wcpu");
	if (r < 0)
		return r;
	if (p) {
		window_wcpu_free(window_wcpu(w));
		window_part_set(w, WPART_WCPU, p);
	}
	return 0;
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
		if (sqlite3_column_type(st, 5) == SQLITE_BLOB) {
			void *p;

			r = store_blob_column(s, st, 5, WCPU_PART,
			    WCPU_PART_VERSION, wcpu_dec, &p);
			e->p = p;
		}
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
