/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall part of a window in the store: one blob per window that has
 * the part (doc/storage.md, "window_syscalls"), framed and compressed as
 * the other parts' blobs are (store_codec.c). A histogram is stored from
 * its first to its last non-zero bucket; a slow call's enter time as the
 * difference from the one before. A blob that does not decode is counted
 * (blob_errors) and the window reads without the part.
 * store_syscalls_range() folds the parts of a range into one, for
 * `vitals syscalls --since`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_codec.h"
#include "store_int.h"
#include "syscalls/sc_window.h"

#define SC_PART 23 /* the frame's part number */
#define SC_PART_VERSION 1
#define ROW_MIN 12 /* bytes a row takes at least */
#define SLOW_MIN 9 /* bytes a slow call takes at least */
#define SC_ROWS_MAX 65536

static const char *const ss_sql[] = STORE_BLOBPART_SQL("window_syscalls",
    "syscalls");

static int sc_dec(const void *payload, size_t len, void **ret);

static const struct store_blobpart bp = {
	.id = WPART_SYSCALLS,
	.fold = STORE_FOLD_SYSCALLS,
	.part = SC_PART,
	.version = SC_PART_VERSION,
	.sql = ss_sql,
	.dec = sc_dec,
	.what = "read syscalls",
	.range_what = "read syscalls range",
};

/* a row's figures after its identity: count ... hist */
static void
enc_figs(struct store_enc *e, const struct sc_row *r)
{
	unsigned i, lo = 0, hi = SC_HIST_N;

	store_enc_u(e, r->count);
	for (i = 0; i < SC_ERR__MAX; i++)
		store_enc_u(e, r->errors[i]);
	store_enc_u(e, r->sum_ns);
	store_enc_u(e, r->max_ns);
	store_enc_u(e, r->fast);
	while (lo < SC_HIST_N && r->hist[lo] == 0)
		lo++;
	while (hi > lo && r->hist[hi - 1] == 0)
		hi--;
	store_enc_u(e, lo);
	store_enc_u(e, hi - lo);
	for (i = lo; i < hi; i++)
		store_enc_u(e, r->hist[i]);
}

static void
dec_figs(struct store_dec *d, struct sc_row *r)
{
	unsigned i, lo, n;

	r->count = store_dec_u(d);
	for (i = 0; i < SC_ERR__MAX; i++)
		r->errors[i] = store_dec_u(d);
	r->sum_ns = store_dec_u(d);
	r->max_ns = store_dec_u(d);
	r->fast = store_dec_u(d);
	lo = (unsigned)store_dec_u_max(d, SC_HIST_N);
	n = (unsigned)store_dec_u_max(d, SC_HIST_N - lo);
	for (i = 0; i < n && !d->err; i++)
		r->hist[lo + i] = store_dec_u(d);
}

/* The payload, field by field as doc/storage.md lists it. */
void
store_syscalls_encode(struct store_enc *e, const struct window_syscalls *p)
{
	const struct sc_counters *c = &p->ctr;
	int64_t prev = 0;
	size_t i;

	store_enc_u(e, p->state);
	store_enc_s(e, p->err);
	store_enc_u(e, p->arch);
	store_enc_u(e, p->have);
	store_enc_u(e, p->floor_ns);
	store_enc_u(e, p->slow_ns);
	store_enc_u(e, p->top_max);
	store_enc_u(e, p->slow_max);
	store_enc_u(e, c->missing_enter);
	store_enc_u(e, c->mismatch);
	store_enc_u(e, c->map_full);
	store_enc_u(e, c->rb_full);
	store_enc_u(e, c->slow_dropped);
	store_enc_u(e, c->compat);
	store_enc_u(e, c->drain_errors);
	store_enc_u(e, p->prog_run_ns);
	store_enc_u(e, p->prog_run_cnt);
	store_enc_u(e, p->other_rows);
	enc_figs(e, &p->other);
	store_enc_u(e, p->nrows);
	for (i = 0; i < p->nrows; i++) {
		const struct sc_row *r = &p->rows[i];

		store_enc_s(e, r->tgid);
		store_enc_u(e, r->start_ns);
		store_enc_str(e, r->comm);
		store_enc_u(e, r->nr);
		enc_figs(e, r);
	}
	store_enc_u(e, p->nslow);
	for (i = 0; i < p->nslow; i++) {
		const struct sc_slow *s = &p->slow[i];

		store_enc_s(e, s->tid);
		store_enc_s(e, s->tgid);
		store_enc_u(e, s->start_ns);
		store_enc_str(e, s->comm);
		store_enc_u(e, s->nr);
		store_enc_s(e, s->ret);
		store_enc_s(e,
		    (int64_t)((uint64_t)s->boot_enter_ns - (uint64_t)prev));
		prev = s->boot_enter_ns;
		store_enc_u(e, s->lat_ns);
	}
}

/* A count of rows the payload can hold; 0 and failed on error. */
static size_t
dec_count(struct store_dec *d, size_t len, size_t min)
{
	uint64_t n = store_dec_u_max(d, SC_ROWS_MAX);

	if (n > len / min) {
		store_dec_fail(d);
		return 0;
	}
	return d->err ? 0 : (size_t)n;
}

static int
dec_lists(struct store_dec *d, size_t len, struct window_syscalls *p)
{
	int64_t prev = 0;
	size_t i;

	p->nrows = dec_count(d, len, ROW_MIN);
	if (p->nrows && (p->rows = calloc(p->nrows, sizeof(*p->rows))) == NULL)
		return -ENOMEM;
	for (i = 0; i < p->nrows && !d->err; i++) {
		struct sc_row *r = &p->rows[i];

		r->tgid = (int32_t)store_dec_s(d);
		r->start_ns = store_dec_u(d);
		store_dec_str(d, r->comm, sizeof(r->comm));
		r->nr = (uint32_t)store_dec_u_max(d, UINT32_MAX);
		dec_figs(d, r);
	}
	p->nslow = dec_count(d, len, SLOW_MIN);
	if (p->nslow && (p->slow = calloc(p->nslow, sizeof(*p->slow))) == NULL)
		return -ENOMEM;
	for (i = 0; i < p->nslow && !d->err; i++) {
		struct sc_slow *s = &p->slow[i];

		s->tid = (int32_t)store_dec_s(d);
		s->tgid = (int32_t)store_dec_s(d);
		s->start_ns = store_dec_u(d);
		store_dec_str(d, s->comm, sizeof(s->comm));
		s->nr = (uint32_t)store_dec_u_max(d, UINT32_MAX);
		s->ret = store_dec_s(d);
		s->boot_enter_ns = (int64_t)((uint64_t)prev +
		    (uint64_t)store_dec_s(d));
		prev = s->boot_enter_ns;
		s->lat_ns = store_dec_u(d);
	}
	return 0;
}

/* payload into a new part; -EBADMSG for anything malformed. */
int
store_syscalls_decode(const void *payload, size_t len,
    struct window_syscalls **ret)
{
	struct window_syscalls *p;
	struct sc_counters *c;
	struct store_dec d;
	int r;

	if ((p = window_syscalls_new()) == NULL)
		return -ENOMEM;
	c = &p->ctr;
	store_dec_init(&d, payload, len);
	p->state = (uint32_t)store_dec_u_max(&d, SC_FAILED);
	p->err = (int32_t)store_dec_s(&d);
	p->arch = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->have = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->floor_ns = store_dec_u(&d);
	p->slow_ns = store_dec_u(&d);
	p->top_max = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->slow_max = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	c->missing_enter = store_dec_u(&d);
	c->mismatch = store_dec_u(&d);
	c->map_full = store_dec_u(&d);
	c->rb_full = store_dec_u(&d);
	c->slow_dropped = store_dec_u(&d);
	c->compat = store_dec_u(&d);
	c->drain_errors = store_dec_u(&d);
	p->prog_run_ns = store_dec_u(&d);
	p->prog_run_cnt = store_dec_u(&d);
	p->other_rows = store_dec_u(&d);
	dec_figs(&d, &p->other);
	if ((r = dec_lists(&d, len, p)) < 0) {
		window_syscalls_free(p);
		return r;
	}
	if (store_dec_end(&d) < 0) {
		window_syscalls_free(p);
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static int
sc_dec(const void *payload, size_t len, void **ret)
{
	struct window_syscalls *p = NULL;
	int r = store_syscalls_decode(payload, len, &p);

	*ret = p;
	return r;
}

static int
store_syscalls_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_syscalls *p = window_syscalls(w);
	struct store_enc pl = { 0 };
	int rc;

	if (p == NULL)
		return SQLITE_OK;
	store_syscalls_encode(&pl, p);
	rc = store_blobpart_put(s, &bp, id, &pl);
	store_enc_release(&pl);
	return rc;
}

static int
store_syscalls_load(struct store *s, int64_t id, struct window *w)
{
	return store_blobpart_load(s, &bp, id, w);
}

/*
 * The parts of the windows that ended in (from, to], oldest first, folded
 * into one (window_syscalls_merge); NULL when none has one. Roll-ups and
 * level-0 windows never overlap in time, so every level folds alike.
 * ret_windows: parts folded.
 */
int
store_syscalls_range(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct window_syscalls **ret, uint32_t *ret_windows)
{
	void *acc = NULL;
	int r = store_blobpart_range(s, &bp, from_wall_ns, to_wall_ns, &acc,
	    ret_windows);

	if (r == 0)
		*ret = acc;
	return r;
}

const struct store_part store_syscalls_part = {
	.sql = ss_sql,
	.nsql = sizeof(ss_sql) / sizeof(ss_sql[0]),
	.put = store_syscalls_put,
	.load = store_syscalls_load,
};
