/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The payload of a span's summary (table task_sum, part 16; doc/storage.md
 * "task_sum"): pure byte work, no SQLite.
 *
 * Version 1 (written up to schema v20, still read), rows in iid order:
 *   u count; per row u iid step, u d_utime, d_stime, d_minflt, d_majflt,
 *   samples, wall_ns, total_ticks, f64 norm_ticks, u rss_pages_max,
 *   s rss_pages_last − rss_pages_max, u flags, s last window id step.
 *
 * Version 2 (written since v21): the same figures, columns, and the
 * sample tuple (samples, wall_ns, total_ticks, norm_ticks: the sums a
 * row's windows gave, shared by every task present throughout the same
 * windows) once per distinct value:
 *   u rows n; u tuples m (≤ n); m × (u samples, u wall_ns,
 *   u total_ticks, f64 norm_ticks) in order of first use; u W (the
 *   greatest last window id, as its 64-bit pattern);
 *   n × u iid step; n × u d_utime; n × u d_stime; n × u d_minflt;
 *   n × u d_majflt; n × u tuple index (< m); n × u rss_pages_max;
 *   n × s rss_pages_last − rss_pages_max; n × u flags (1 born,
 *   2 exited); n × u W − last window id (mod 2⁶⁴).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "window/window.h"
#include "store_int.h"

#define SUM_ROWS_MAX (1u << 20)

int
store_tasksum_put_v1(struct store_enc *e, const struct store_agg *a, size_t n)
{
	int64_t prev = 0, wid = 0;
	size_t i;

	store_enc_u(e, n);
	for (i = 0; i < n; i++) {
		const struct window_task *t = &a[i].t;

		if (a[i].iid <= prev && i > 0)
			return -EINVAL;
		store_enc_u(e, (uint64_t)(a[i].iid - prev));
		prev = a[i].iid;
		store_enc_u(e, t->d_utime);
		store_enc_u(e, t->d_stime);
		store_enc_u(e, t->d_minflt);
		store_enc_u(e, t->d_majflt);
		store_enc_u(e, t->samples);
		store_enc_u(e, t->wall_ns);
		store_enc_u(e, t->total_ticks);
		store_enc_f64(e, t->norm_ticks);
		store_enc_u(e, t->rss_pages_max);
		store_enc_s(e, (int64_t)(t->rss_pages_last - t->rss_pages_max));
		store_enc_u(e, (t->born ? 1u : 0) | (t->exited ? 2u : 0));
		store_enc_s(e,
		    (int64_t)((uint64_t)a[i].last_wid - (uint64_t)wid));
		wid = a[i].last_wid;
	}
	return e->err;
}

static bool
tuple_eq(const struct window_task *x, const struct window_task *y)
{
	/* bitwise for the double: a NaN or −0 is its own tuple */
	return x->samples == y->samples && x->wall_ns == y->wall_ns &&
	    x->total_ticks == y->total_ticks &&
	    memcmp(&x->norm_ticks, &y->norm_ticks, sizeof(double)) == 0;
}

static uint64_t
tuple_hash(const struct window_task *t)
{
	uint64_t h, d;

	memcpy(&d, &t->norm_ticks, sizeof(d));
	h = t->samples * 0x9e3779b97f4a7c15ULL;
	h = (h ^ t->wall_ns) * 0xff51afd7ed558ccdULL;
	h = (h ^ t->total_ticks) * 0xc4ceb9fe1a85ec53ULL;
	h = (h ^ d) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* ix[i]: row i's tuple among the distinct ones (first use order), whose
 * rows are put in first[0..*ret_m). */
static int
tuples(const struct store_agg *a, size_t n, uint32_t *ix, size_t *first,
    size_t *ret_m)
{
	size_t cap = 16, m = 0, i, h;
	uint32_t *tab;

	while (cap < 2 * n)
		cap *= 2;
	if ((tab = calloc(cap, sizeof(*tab))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		for (h = tuple_hash(&a[i].t) & (cap - 1); tab[h];
		     h = (h + 1) & (cap - 1))
			if (tuple_eq(&a[first[tab[h] - 1]].t, &a[i].t))
				break;
		if (tab[h] == 0) {
			first[m] = i;
			tab[h] = (uint32_t)++m;
		}
		ix[i] = tab[h] - 1;
	}
	free(tab);
	*ret_m = m;
	return 0;
}

int
store_tasksum_put(struct store_enc *e, const struct store_agg *a, size_t n)
{
	uint32_t *ix = NULL;
	size_t *first = NULL, m = 0, i;
	uint64_t w = 0;
	int r;

	if (n > SUM_ROWS_MAX)
		return -EINVAL;
	for (i = 1; i < n; i++)
		if (a[i].iid <= a[i - 1].iid)
			return -EINVAL; /* ascending, no repeats */
	if (n &&
	    ((ix = calloc(n, sizeof(*ix))) == NULL ||
		(first = calloc(n, sizeof(*first))) == NULL)) {
		free(ix);
		return -ENOMEM;
	}
	if ((r = tuples(a, n, ix, first, &m)) < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (i == 0 || a[i].last_wid > (int64_t)w)
			w = (uint64_t)a[i].last_wid;
	store_enc_u(e, n);
	store_enc_u(e, m);
	for (i = 0; i < m; i++) {
		const struct window_task *t = &a[first[i]].t;

		store_enc_u(e, t->samples);
		store_enc_u(e, t->wall_ns);
		store_enc_u(e, t->total_ticks);
		store_enc_f64(e, t->norm_ticks);
	}
	store_enc_u(e, w);
	for (i = 0; i < n; i++)
		store_enc_u(e,
		    (uint64_t)a[i].iid - (i ? (uint64_t)a[i - 1].iid : 0));
	for (i = 0; i < n; i++)
		store_enc_u(e, a[i].t.d_utime);
	for (i = 0; i < n; i++)
		store_enc_u(e, a[i].t.d_stime);
	for (i = 0; i < n; i++)
		store_enc_u(e, a[i].t.d_minflt);
	for (i = 0; i < n; i++)
		store_enc_u(e, a[i].t.d_majflt);
	for (i = 0; i < n; i++)
		store_enc_u(e, ix[i]);
	for (i = 0; i < n; i++)
		store_enc_u(e, a[i].t.rss_pages_max);
	for (i = 0; i < n; i++)
		store_enc_s(e,
		    (int64_t)(a[i].t.rss_pages_last - a[i].t.rss_pages_max));
	for (i = 0; i < n; i++)
		store_enc_u(e,
		    (a[i].t.born ? 1u : 0) | (a[i].t.exited ? 2u : 0));
	for (i = 0; i < n; i++)
		store_enc_u(e, w - (uint64_t)a[i].last_wid);
	r = e->err;
out:
	free(ix);
	free(first);
	return r;
}

static int
get_v1(struct store_dec *d, size_t len, struct store_agg **ret, size_t *ret_n)
{
	struct store_agg *a = NULL;
	uint64_t n, i, iid = 0, flags;
	int64_t wid = 0;

	/* a row takes at least 15 bytes (8 of them the double) */
	n = store_dec_u_max(d,
	    len / 15 < SUM_ROWS_MAX ? len / 15 : SUM_ROWS_MAX);
	if (d->err)
		return d->err;
	if (n && (a = calloc(n, sizeof(*a))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n && !d->err; i++) {
		struct window_task *t = &a[i].t;
		uint64_t step = store_dec_u(d);

		if (i > 0 && step == 0)
			store_dec_fail(d);
		iid += step;
		a[i].iid = (int64_t)iid;
		t->d_utime = store_dec_u(d);
		t->d_stime = store_dec_u(d);
		t->d_minflt = store_dec_u(d);
		t->d_majflt = store_dec_u(d);
		t->samples = (uint32_t)store_dec_u_max(d, UINT32_MAX);
		t->wall_ns = store_dec_u(d);
		t->total_ticks = store_dec_u(d);
		t->norm_ticks = store_dec_f64(d);
		t->rss_pages_max = store_dec_u(d);
		t->rss_pages_last = t->rss_pages_max + (uint64_t)store_dec_s(d);
		flags = store_dec_u_max(d, 3);
		t->born = flags & 1;
		t->exited = (flags & 2) != 0;
		wid = (int64_t)((uint64_t)wid + (uint64_t)store_dec_s(d));
		a[i].last_wid = wid;
	}
	*ret = a;
	*ret_n = (size_t)n;
	return 0;
}

static int
get_v2(struct store_dec *d, size_t len, struct store_agg **ret, size_t *ret_n)
{
	struct store_agg *a = NULL;
	struct window_task *tup = NULL;
	uint64_t n, m, i, iid = 0, w, k, flags;

	/* a row takes at least 10 bytes (one per column), a tuple 11 */
	n = store_dec_u_max(d,
	    len / 10 < SUM_ROWS_MAX ? len / 10 : SUM_ROWS_MAX);
	m = store_dec_u_max(d, n < len / 11 ? n : len / 11);
	if (d->err)
		return d->err;
	if ((n && (a = calloc(n, sizeof(*a))) == NULL) ||
	    (m && (tup = calloc(m, sizeof(*tup))) == NULL)) {
		free(a);
		return -ENOMEM;
	}
	for (i = 0; i < m; i++) {
		tup[i].samples = (uint32_t)store_dec_u_max(d, UINT32_MAX);
		tup[i].wall_ns = store_dec_u(d);
		tup[i].total_ticks = store_dec_u(d);
		tup[i].norm_ticks = store_dec_f64(d);
	}
	w = store_dec_u(d);
	for (i = 0; i < n; i++) {
		uint64_t step = store_dec_u(d);

		if (i > 0 && step == 0)
			store_dec_fail(d);
		iid += step;
		a[i].iid = (int64_t)iid;
	}
	for (i = 0; i < n; i++)
		a[i].t.d_utime = store_dec_u(d);
	for (i = 0; i < n; i++)
		a[i].t.d_stime = store_dec_u(d);
	for (i = 0; i < n; i++)
		a[i].t.d_minflt = store_dec_u(d);
	for (i = 0; i < n; i++)
		a[i].t.d_majflt = store_dec_u(d);
	for (i = 0; i < n; i++) {
		k = store_dec_u_max(d, m ? m - 1 : 0);
		if (m == 0)
			store_dec_fail(d);
		if (d->err)
			break;
		a[i].t.samples = tup[k].samples;
		a[i].t.wall_ns = tup[k].wall_ns;
		a[i].t.total_ticks = tup[k].total_ticks;
		a[i].t.norm_ticks = tup[k].norm_ticks;
	}
	for (i = 0; i < n; i++)
		a[i].t.rss_pages_max = store_dec_u(d);
	for (i = 0; i < n; i++)
		a[i].t.rss_pages_last = a[i].t.rss_pages_max +
		    (uint64_t)store_dec_s(d);
	for (i = 0; i < n; i++) {
		flags = store_dec_u_max(d, 3);
		a[i].t.born = flags & 1;
		a[i].t.exited = (flags & 2) != 0;
	}
	for (i = 0; i < n; i++)
		a[i].last_wid = (int64_t)(w - store_dec_u(d));
	free(tup);
	*ret = a;
	*ret_n = (size_t)n;
	return 0;
}

int
store_tasksum_get(const void *p, size_t len, unsigned version,
    struct store_agg **ret, size_t *ret_n)
{
	struct store_dec d;
	struct store_agg *a = NULL;
	size_t n = 0;
	int r;

	store_dec_init(&d, p, len);
	if (version == 1)
		r = get_v1(&d, len, &a, &n);
	else if (version == 2)
		r = get_v2(&d, len, &a, &n);
	else
		r = -EBADMSG;
	if (r == 0 && (r = store_dec_end(&d)) < 0) {
		free(a);
		return r;
	}
	if (r < 0)
		return r;
	*ret = a;
	*ret_n = n;
	return 0;
}
