/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-instance sums of a top-N read, kept by instance id: a window's
 * rows or a span's summary added in time order (store_taskread.c,
 * store_tasksum.c). Pure arithmetic: no SQLite.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* ------------------------------------------------------- iid → index */

static size_t
imap_hash(int64_t k)
{
	uint64_t h = (uint64_t)k;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h;
}

void
store_imap_free(struct store_imap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

/* The slot of k: its value, or UINT32_MAX when absent. */
uint32_t
store_imap_get(const struct store_imap *m, int64_t k)
{
	size_t h;

	if (m->key == NULL)
		return UINT32_MAX;
	for (h = imap_hash(k) & m->mask; m->val[h] != UINT32_MAX;
	     h = (h + 1) & m->mask)
		if (m->key[h] == k)
			return m->val[h];
	return UINT32_MAX;
}

int
store_imap_put(struct store_imap *m, int64_t k, uint32_t v)
{
	size_t h, i, size;

	if (m->key == NULL || 2 * (m->n + 1) > m->mask + 1) {
		struct store_imap o = *m;

		size = m->key ? 2 * (m->mask + 1) : 256;
		if ((m->key = malloc(size * sizeof(*m->key))) == NULL ||
		    (m->val = malloc(size * sizeof(*m->val))) == NULL) {
			free(m->key);
			*m = o;
			return -ENOMEM;
		}
		memset(m->val, 0xff, size * sizeof(*m->val));
		m->mask = size - 1;
		m->n = 0;
		for (i = 0; o.key && i <= o.mask; i++)
			if (o.val[i] != UINT32_MAX)
				(void)store_imap_put(m, o.key[i], o.val[i]);
		store_imap_free(&o);
	}
	for (h = imap_hash(k) & m->mask; m->val[h] != UINT32_MAX;
	     h = (h + 1) & m->mask)
		if (m->key[h] == k) {
			m->val[h] = v;
			return 0;
		}
	m->key[h] = k;
	m->val[h] = v;
	m->n++;
	return 0;
}

/* ------------------------------------------------------------- sums */

/* The aggregate of iid, made (zeroed) when new; NULL without memory. */
struct store_agg *
store_agg_slot(struct store_aggs *g, int64_t iid)
{
	uint32_t k;

	/* Rows come in instance id order, window after window, and the
	 * slots were made in the order the first of them came: the slot
	 * after the last one used is most often the next row's. */
	if (g->hint < g->n && g->a[g->hint].iid == iid)
		return &g->a[g->hint++];
	if ((k = store_imap_get(&g->map, iid)) != UINT32_MAX) {
		g->hint = (size_t)k + 1;
		return &g->a[k];
	}
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 256;
		struct store_agg *p = realloc(g->a, nc * sizeof(*p));

		if (p == NULL)
			return NULL;
		g->a = p;
		g->cap = nc;
	}
	if (g->n >= UINT32_MAX - 1 ||
	    store_imap_put(&g->map, iid, (uint32_t)g->n) < 0)
		return NULL;
	k = (uint32_t)g->n++;
	g->hint = g->n;
	memset(&g->a[k], 0, sizeof(g->a[k]));
	g->a[k].iid = iid;
	return &g->a[k];
}

/* Sum one window's rows into the aggregates (v7: SUM, TOTAL, MAX). */
int
store_agg_rows(struct store_aggs *g, int64_t wid, const struct window_task *t,
    const uint64_t *iid, size_t n)
{
	struct store_agg one;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		one.iid = (int64_t)iid[i];
		one.last_wid = wid;
		one.t = t[i];
		if ((r = store_agg_sums(g, &one, 1)) < 0)
			return r;
	}
	return 0;
}

/* Add aggregates (a span's summary, or one window's rows) that come
 * after everything summed so far: the end state is theirs (the same
 * arithmetic as store_wcache_sum: change both). */
int
store_agg_sums(struct store_aggs *g, const struct store_agg *a, size_t n)
{
	struct window_task *x;
	struct store_agg *d;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct window_task *t = &a[i].t;

		if ((d = store_agg_slot(g, a[i].iid)) == NULL)
			return -ENOMEM;
		x = &d->t;
		x->d_utime += t->d_utime;
		x->d_stime += t->d_stime;
		x->d_minflt += t->d_minflt;
		x->d_majflt += t->d_majflt;
		x->samples += t->samples;
		x->wall_ns += t->wall_ns;
		x->total_ticks += t->total_ticks;
		x->norm_ticks += t->norm_ticks;
		if (t->rss_pages_max > x->rss_pages_max)
			x->rss_pages_max = t->rss_pages_max;
		x->born = x->born || t->born;
		/* end-of-range state: the latest window holding it */
		x->rss_pages_last = t->rss_pages_last;
		x->exited = t->exited;
		d->last_wid = a[i].last_wid;
	}
	return 0;
}

/* Empty, keeping the memory for the next read. */
void
store_aggs_reset(struct store_aggs *g)
{
	if (g->map.key != NULL)
		memset(g->map.val, 0xff,
		    (g->map.mask + 1) * sizeof(*g->map.val));
	g->map.n = 0;
	g->n = 0;
	g->hint = 0;
}

void
store_aggs_free(struct store_aggs *g)
{
	store_imap_free(&g->map);
	free(g->a);
	memset(g, 0, sizeof(*g));
}
