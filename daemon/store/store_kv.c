/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's named counters and gauges as one payload (doc/storage.md,
 * "Blobs"), by key id:
 *
 *   u  counters; per counter, key ids ascending:
 *        u key − previous key (the first: key), u value
 *   u  gauges; per gauge, key ids ascending:
 *        u key − previous key (the first: key), gauge
 *
 * That is version 1 (written up to schema v20, still read).
 * Version 2 (since): the same fields, the key ids and the gauges' n in
 * columns, where zstd and the dictionary meet them as one run:
 *
 *   u  counters c; c × u key step; c × u value
 *   u  gauges g; g × u key step; g × u n; then, for each gauge with
 *      n > 0 in order, its u form; then, for each again, its figures
 *      (below, without the form)
 *
 *   gauge: u n; when n > 0, u form, then
 *     form 0: num min, num max, num sum, num last
 *     form 1 (all four whole numbers, |v| ≤ 2^53, min ≤ max, min ≤ last):
 *             s min, u max − min, u last − min, s sum − n·min
 *     form 2 (each within a few ulps of a number of hundredths):
 *             for min, max, sum, last: s k, s bits(v) − bits(k / 100)
 *
 * Form 1 is how meminfo, task counts and online CPUs look, form 2 load
 * averages and PSI averages (two decimals; their sums a few ulps off): a
 * few bytes where four 9-byte doubles would stand. Form 2 is exact for
 * any double (the difference of the bit patterns is taken mod 2^64); the
 * encoder picks it only when it is short. Every figure reads back bit for
 * bit; a decoder refuses what the encoder never writes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_codec.h"
#include "store/store_kv.h"

#define NUM_EXACT (1LL << 53)

enum { GF_NUMS = 0, GF_INTS = 1, GF_CENTS = 2 };

#define CENTS_ULPS (1 << 20) /* form 2 only when every value is this close */

/* v as a whole number every double reaches exactly (not −0, not NaN) */
static bool
whole(double v, int64_t *ret)
{
	if (!(v >= -NUM_EXACT && v <= NUM_EXACT) || (v == 0 && signbit(v)) ||
	    v != (double)(int64_t)v)
		return false;
	*ret = (int64_t)v;
	return true;
}

static bool
in_range(int64_t v)
{
	return v >= -NUM_EXACT && v <= NUM_EXACT;
}

static uint64_t
bits(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

/* v as k hundredths and how many ulps it is off them; false when it is
 * not near a number of hundredths (or not finite). */
static bool
cents(double v, int64_t *ret_k, int64_t *ret_d)
{
	double x = v * 100;
	int64_t k, d;

	if (!(x >= -NUM_EXACT && x <= NUM_EXACT))
		return false;
	k = llround(x);
	d = (int64_t)(bits(v) - bits((double)k / 100));
	if (d < -CENTS_ULPS || d > CENTS_ULPS)
		return false;
	*ret_k = k;
	*ret_d = d;
	return true;
}

static double
from_cents(int64_t k, int64_t d)
{
	uint64_t u = bits((double)k / 100) + (uint64_t)d;
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

/* What of a gauge's body (n > 0; n is written apart) to write: its form
 * and figures (version 1), or the form or the figures alone (version 2
 * puts all the forms before all the figures). */
enum { BODY_ALL, BODY_FORM, BODY_FIGURES };

static void
gauge_body_put(struct store_enc *e, const struct gauge *g, int what)
{
	int64_t k[4], d[4];
	int64_t mn, mx, sm, ls, nmin, dsum;

	if (whole(g->min, &mn) && whole(g->max, &mx) && whole(g->sum, &sm) &&
	    whole(g->last, &ls) && mx >= mn && ls >= mn &&
	    !__builtin_mul_overflow((int64_t)g->n, mn, &nmin) &&
	    !__builtin_sub_overflow(sm, nmin, &dsum)) {
		if (what != BODY_FIGURES)
			store_enc_u(e, GF_INTS);
		if (what == BODY_FORM)
			return;
		store_enc_s(e, mn);
		store_enc_u(e, (uint64_t)(mx - mn));
		store_enc_u(e, (uint64_t)(ls - mn));
		store_enc_s(e, dsum);
		return;
	}
	if (cents(g->min, &k[0], &d[0]) && cents(g->max, &k[1], &d[1]) &&
	    cents(g->sum, &k[2], &d[2]) && cents(g->last, &k[3], &d[3])) {
		unsigned i;

		if (what != BODY_FIGURES)
			store_enc_u(e, GF_CENTS);
		if (what == BODY_FORM)
			return;
		for (i = 0; i < 4; i++) {
			store_enc_s(e, k[i]);
			store_enc_s(e, d[i]);
		}
		return;
	}
	if (what != BODY_FIGURES)
		store_enc_u(e, GF_NUMS);
	if (what == BODY_FORM)
		return;
	store_enc_num(e, g->min);
	store_enc_num(e, g->max);
	store_enc_num(e, g->sum);
	store_enc_num(e, g->last);
}

void
store_enc_gauge(struct store_enc *e, const struct gauge *g)
{
	store_enc_u(e, g->n);
	if (g->n > 0)
		gauge_body_put(e, g, BODY_ALL);
}

/* The figures of a gauge of n readings (n > 0) in form (or, form < 0,
 * the form first, then its figures). */
static void
gauge_body_get(struct store_dec *d, uint32_t n, int form, struct gauge *ret)
{
	struct gauge g = { .n = n };
	int64_t mn, sm, nmin;
	uint64_t dmax, dlast;

	switch (form >= 0 ? (uint64_t)form : store_dec_u_max(d, GF_CENTS)) {
	case GF_NUMS:
		g.min = store_dec_num(d);
		g.max = store_dec_num(d);
		g.sum = store_dec_num(d);
		g.last = store_dec_num(d);
		break;
	case GF_INTS:
		mn = store_dec_s(d);
		dmax = store_dec_u(d);
		dlast = store_dec_u(d);
		sm = store_dec_s(d);
		/* ranges the encoder keeps to: anything else is malformed */
		if (d->err || !in_range(mn) || dmax > 2 * (uint64_t)NUM_EXACT ||
		    dlast > 2 * (uint64_t)NUM_EXACT ||
		    !in_range(mn + (int64_t)dmax) ||
		    !in_range(mn + (int64_t)dlast) ||
		    __builtin_mul_overflow((int64_t)g.n, mn, &nmin) ||
		    __builtin_add_overflow(sm, nmin, &sm) || !in_range(sm)) {
			store_dec_fail(d);
			break;
		}
		g.min = (double)mn;
		g.max = (double)(mn + (int64_t)dmax);
		g.last = (double)(mn + (int64_t)dlast);
		g.sum = (double)sm;
		break;
	case GF_CENTS: {
		double *v[4] = { &g.min, &g.max, &g.sum, &g.last };
		unsigned i;

		for (i = 0; i < 4 && !d->err; i++) {
			int64_t k = store_dec_s(d), u = store_dec_s(d);

			if (k < -NUM_EXACT || k > NUM_EXACT) {
				store_dec_fail(d);
				break;
			}
			*v[i] = from_cents(k, u);
		}
		break;
	}
	}
	if (d->err)
		g = (struct gauge){ 0 };
	*ret = g;
}

void
store_dec_gauge(struct store_dec *d, struct gauge *ret)
{
	uint32_t n = (uint32_t)store_dec_u_max(d, UINT32_MAX);

	*ret = (struct gauge){ 0 };
	if (n > 0 && !d->err)
		gauge_body_get(d, n, -1, ret);
}

/* key ids ascending without repeats */
static bool
keys_ok(const struct store_kv_count *c, size_t nc,
    const struct store_kv_gauge *g, size_t ng)
{
	size_t i;

	for (i = 1; i < nc; i++)
		if (c[i].key <= c[i - 1].key)
			return false;
	for (i = 1; i < ng; i++)
		if (g[i].key <= g[i - 1].key)
			return false;
	return true;
}

int
store_kv_put(struct store_enc *e, const struct store_kv_count *c, size_t nc,
    const struct store_kv_gauge *g, size_t ng)
{
	size_t i;

	if (!keys_ok(c, nc, g, ng))
		return -EINVAL;
	store_enc_u(e, nc);
	for (i = 0; i < nc; i++)
		store_enc_u(e, c[i].key - (i ? c[i - 1].key : 0));
	for (i = 0; i < nc; i++)
		store_enc_u(e, c[i].value);
	store_enc_u(e, ng);
	for (i = 0; i < ng; i++)
		store_enc_u(e, g[i].key - (i ? g[i - 1].key : 0));
	for (i = 0; i < ng; i++)
		store_enc_u(e, g[i].g.n);
	for (i = 0; i < ng; i++)
		if (g[i].g.n > 0)
			gauge_body_put(e, &g[i].g, BODY_FORM);
	for (i = 0; i < ng; i++)
		if (g[i].g.n > 0)
			gauge_body_put(e, &g[i].g, BODY_FIGURES);
	return e->err;
}

int
store_kv_put_v1(struct store_enc *e, const struct store_kv_count *c, size_t nc,
    const struct store_kv_gauge *g, size_t ng)
{
	uint32_t prev = 0;
	size_t i;

	if (!keys_ok(c, nc, g, ng))
		return -EINVAL;
	store_enc_u(e, nc);
	for (i = 0; i < nc; i++) {
		store_enc_u(e, c[i].key - prev);
		prev = c[i].key;
		store_enc_u(e, c[i].value);
	}
	store_enc_u(e, ng);
	for (i = 0, prev = 0; i < ng; i++) {
		store_enc_u(e, g[i].key - prev);
		prev = g[i].key;
		store_enc_gauge(e, &g[i].g);
	}
	return e->err;
}

/* The next key id: ascending, within 32 bits; false when not. */
static bool
next_key(struct store_dec *d, size_t i, uint32_t *key)
{
	uint64_t step = store_dec_u(d);

	if (d->err || (i && step == 0) || step > UINT32_MAX - (uint64_t)*key)
		return false;
	*key += (uint32_t)step;
	return true;
}

static int
get_v1(const void *p, size_t len, size_t max, struct store_kv *ret)
{
	struct store_dec d;
	struct store_kv kv = { 0 };
	uint32_t key = 0;
	size_t i, n;

	store_dec_init(&d, p, len);
	/* a counter or a gauge takes at least 2 bytes */
	n = (size_t)store_dec_u_max(&d, max < len / 2 ? max : len / 2);
	if (d.err)
		return -EBADMSG;
	if (n && (kv.count = calloc(n, sizeof(*kv.count))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!next_key(&d, i, &key))
			goto bad;
		kv.count[i].key = key;
		kv.count[i].value = store_dec_u(&d);
	}
	kv.ncount = n;
	n = (size_t)store_dec_u_max(&d, max < len / 2 ? max : len / 2);
	if (d.err)
		goto bad;
	if (n && (kv.gauge = calloc(n, sizeof(*kv.gauge))) == NULL) {
		store_kv_release(&kv);
		return -ENOMEM;
	}
	for (i = 0, key = 0; i < n; i++) {
		if (!next_key(&d, i, &key))
			goto bad;
		kv.gauge[i].key = key;
		store_dec_gauge(&d, &kv.gauge[i].g);
	}
	kv.ngauge = n;
	if (store_dec_end(&d) < 0)
		goto bad;
	*ret = kv;
	return 0;
bad:
	store_kv_release(&kv);
	return -EBADMSG;
}

void
store_kv_release(struct store_kv *kv)
{
	free(kv->count);
	free(kv->gauge);
	memset(kv, 0, sizeof(*kv));
}

static int
get_v2(const void *p, size_t len, size_t max, struct store_kv *ret)
{
	struct store_dec d;
	struct store_kv kv = { 0 };
	uint32_t key = 0;
	size_t i, n;

	store_dec_init(&d, p, len);
	/* a counter or a gauge takes at least 2 bytes */
	n = (size_t)store_dec_u_max(&d, max < len / 2 ? max : len / 2);
	if (d.err)
		return -EBADMSG;
	if (n && (kv.count = calloc(n, sizeof(*kv.count))) == NULL)
		return -ENOMEM;
	kv.ncount = n;
	for (i = 0; i < n; i++) {
		if (!next_key(&d, i, &key))
			goto bad;
		kv.count[i].key = key;
	}
	for (i = 0; i < n; i++)
		kv.count[i].value = store_dec_u(&d);
	n = (size_t)store_dec_u_max(&d, max < len / 2 ? max : len / 2);
	if (d.err)
		goto bad;
	if (n && (kv.gauge = calloc(n, sizeof(*kv.gauge))) == NULL) {
		store_kv_release(&kv);
		return -ENOMEM;
	}
	kv.ngauge = n;
	for (i = 0, key = 0; i < n; i++) {
		if (!next_key(&d, i, &key))
			goto bad;
		kv.gauge[i].key = key;
	}
	for (i = 0; i < n; i++)
		kv.gauge[i].g.n = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	/* the forms, kept in min's place until the figures */
	for (i = 0; i < n; i++)
		if (kv.gauge[i].g.n > 0)
			kv.gauge[i].g.min = (double)store_dec_u_max(&d,
			    GF_CENTS);
	for (i = 0; i < n && !d.err; i++)
		if (kv.gauge[i].g.n > 0)
			gauge_body_get(&d, kv.gauge[i].g.n,
			    (int)kv.gauge[i].g.min, &kv.gauge[i].g);
	if (store_dec_end(&d) < 0)
		goto bad;
	*ret = kv;
	return 0;
bad:
	store_kv_release(&kv);
	return -EBADMSG;
}

int
store_kv_get(const void *p, size_t len, unsigned version, size_t max,
    struct store_kv *ret)
{
	if (version == 1)
		return get_v1(p, len, max, ret);
	if (version == 2)
		return get_v2(p, len, max, ret);
	return -EBADMSG;
}
