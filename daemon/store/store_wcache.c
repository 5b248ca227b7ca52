/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoded window rows kept between top-N reads on one connection
 * (store_taskread.c): the windows at a range's edges (those no summary
 * covers) are read again by the next read over much the same hours, and
 * decoding a window's blob (frame CRC, zstd, varints) is ~20 µs of the
 * ~1.5 ms a top-20 over an hour costs. An entry keeps only what the sums
 * use (88 bytes a row, not a struct window_task) and the blob it came
 * from: it is used only when the window's blob is still byte for byte the
 * one decoded, so a window rewritten under the same id (a roll-up, a
 * recovered file) is decoded afresh. Bounded by WCACHE_BYTES and
 * WCACHE_SLOTS, least recently used out first, but never an entry the
 * read in progress used: a read wider than the cache keeps the windows it
 * met first rather than evicting each before the next read comes back to
 * it (a scan through an LRU cache hits nothing). Freed with the
 * connection's statements (so an idle read connection holds none). Only
 * the thread owning the store (under its lock) touches it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define WCACHE_BYTES (2u << 20) /* per connection */
#define WCACHE_SLOTS 512

struct wrow {
	int64_t iid;
	int64_t last_wid; /* the window whose names it takes */
	uint64_t d_utime, d_stime, d_minflt, d_majflt;
	uint64_t wall_ns, total_ticks, rss_pages_max, rss_pages_last;
	double norm_ticks;
	uint32_t samples;
	bool born, exited;
};

struct wentry {
	int64_t wid;
	bool threads;
	uint64_t used;	    /* last use, on the cache's clock */
	uint64_t used_read; /* the read that last used it */
	void *blob;
	size_t blob_n;
	struct wrow *rows;
	size_t n;
};

struct store_wcache {
	struct wentry e[WCACHE_SLOTS];
	unsigned n;
	size_t bytes;
	uint64_t clock;
	uint64_t read; /* reads begun */
	uint64_t hits, misses;
	unsigned next; /* the entry after the last used: the next window's? */
};

static size_t
entry_bytes(const struct wentry *x)
{
	return x->blob_n + x->n * sizeof(struct wrow);
}

static void
entry_drop(struct store_wcache *c, unsigned i)
{
	c->bytes -= entry_bytes(&c->e[i]);
	free(c->e[i].blob);
	free(c->e[i].rows);
	c->e[i] = c->e[--c->n];
}

void
store_wcache_free(struct store *s)
{
	struct store_wcache *c = s->wcache;

	if (c == NULL)
		return;
	while (c->n)
		entry_drop(c, c->n - 1);
	free(c);
	s->wcache = NULL;
}

void
store_wcache_stats(const struct store *s, uint64_t *hits, uint64_t *misses)
{
	*hits = s->wcache ? s->wcache->hits : 0;
	*misses = s->wcache ? s->wcache->misses : 0;
}

/* A top-N read begins: what it uses stays while it runs. */
void
store_wcache_begin(struct store *s)
{
	if (s->wcache)
		s->wcache->read++;
}

/* Window wid's rows of that list summed into g when the cache holds the
 * very blob: 1; 0 when it does not (the caller decodes). */
int
store_wcache_sum(struct store *s, int64_t wid, bool threads, const void *blob,
    size_t blob_n, struct store_aggs *g)
{
	struct store_wcache *c = s->wcache;
	unsigned i;
	size_t k;

	if (c == NULL)
		return 0;
	/* a read meets its windows in the order an earlier one put them */
	i = c->next;
	if (i >= c->n || c->e[i].wid != wid || c->e[i].threads != threads)
		for (i = 0; i < c->n; i++)
			if (c->e[i].wid == wid && c->e[i].threads == threads)
				break;
	if (i == c->n || c->e[i].blob_n != blob_n ||
	    memcmp(c->e[i].blob, blob, blob_n) != 0) {
		c->misses++;
		return 0;
	}
	c->hits++;
	c->next = i + 1;
	c->e[i].used = ++c->clock;
	c->e[i].used_read = c->read;
	/* store_agg_sums' arithmetic, straight from the kept rows */
	for (k = 0; k < c->e[i].n; k++) {
		const struct wrow *w = &c->e[i].rows[k];
		struct store_agg *d = store_agg_slot(g, w->iid);
		struct window_task *x;

		if (d == NULL)
			return -ENOMEM;
		x = &d->t;
		x->d_utime += w->d_utime;
		x->d_stime += w->d_stime;
		x->d_minflt += w->d_minflt;
		x->d_majflt += w->d_majflt;
		x->samples += w->samples;
		x->wall_ns += w->wall_ns;
		x->total_ticks += w->total_ticks;
		x->norm_ticks += w->norm_ticks;
		if (w->rss_pages_max > x->rss_pages_max)
			x->rss_pages_max = w->rss_pages_max;
		x->born = x->born || w->born;
		x->rss_pages_last = w->rss_pages_last;
		x->exited = w->exited;
		d->last_wid = w->last_wid;
	}
	return 1;
}

/* Room for an entry of n rows from blob, its blob copied, in the cache
 * (its rows still to fill), evicting older entries for it if evict;
 * NULL: nothing is kept. */
static struct wentry *
entry_new(struct store *s, int64_t wid, bool threads, const void *blob,
    size_t blob_n, size_t n, bool evict)
{
	struct store_wcache *c = s->wcache;
	struct wentry x = { .wid = wid,
		.threads = threads,
		.blob_n = blob_n,
		.n = n };
	unsigned i;

	if (entry_bytes(&x) > WCACHE_BYTES / 4)
		return NULL;
	if (c == NULL && (c = s->wcache = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if (c->read == 0)
		c->read = 1;
	for (i = 0; i < c->n; i++) /* a stale entry of that window */
		if (c->e[i].wid == wid && c->e[i].threads == threads) {
			entry_drop(c, i);
			break;
		}
	while (c->n &&
	    (c->n == WCACHE_SLOTS ||
		c->bytes + entry_bytes(&x) > WCACHE_BYTES)) {
		unsigned old = 0;

		for (i = 1; i < c->n; i++)
			if (c->e[i].used < c->e[old].used)
				old = i;
		if (c->e[old].used_read == c->read || !evict)
			return NULL; /* full of this read's windows */
		entry_drop(c, old);
	}
	if ((x.blob = malloc(blob_n ? blob_n : 1)) == NULL ||
	    (n && (x.rows = malloc(n * sizeof(*x.rows))) == NULL)) {
		free(x.blob);
		return NULL;
	}
	memcpy(x.blob, blob, blob_n);
	x.used = ++c->clock;
	x.used_read = c->read;
	c->next = c->n + 1;
	c->e[c->n] = x;
	c->bytes += entry_bytes(&x);
	return &c->e[c->n++];
}

/* Keep window wid's decoded rows (from blob) for the next reads; without
 * memory, or when they alone exceed the bound, nothing is kept. */
void
store_wcache_put(struct store *s, int64_t wid, bool threads, const void *blob,
    size_t blob_n, const struct window_task *t, const uint64_t *iid, size_t n)
{
	struct wentry *x = entry_new(s, wid, threads, blob, blob_n, n, true);
	size_t k;

	for (k = 0; x != NULL && k < n; k++) {
		struct wrow *w = &x->rows[k];

		w->iid = (int64_t)iid[k];
		w->last_wid = wid;
		w->d_utime = t[k].d_utime;
		w->d_stime = t[k].d_stime;
		w->d_minflt = t[k].d_minflt;
		w->d_majflt = t[k].d_majflt;
		w->samples = t[k].samples;
		w->wall_ns = t[k].wall_ns;
		w->total_ticks = t[k].total_ticks;
		w->norm_ticks = t[k].norm_ticks;
		w->rss_pages_max = t[k].rss_pages_max;
		w->rss_pages_last = t[k].rss_pages_last;
		w->born = t[k].born;
		w->exited = t[k].exited;
	}
}

/*
 * The same for a span's summary (its aggregates, each with the window
 * its names come from), under a key no window id takes; only into room
 * the cache has: a read whose edge windows already overflow it (300
 * processes, a full hour: ~118 windows of ~30 KB) would otherwise trade
 * a window's decode for each summary's, and measured slower (top_cost:
 * 0.58 against 0.66 ms).
 */
void
store_wcache_put_aggs(struct store *s, int64_t key, bool threads,
    const void *blob, size_t blob_n, const struct store_agg *a, size_t n)
{
	struct wentry *x = entry_new(s, key, threads, blob, blob_n, n, false);
	size_t k;

	for (k = 0; x != NULL && k < n; k++) {
		struct wrow *w = &x->rows[k];
		const struct window_task *t = &a[k].t;

		w->iid = a[k].iid;
		w->last_wid = a[k].last_wid;
		w->d_utime = t->d_utime;
		w->d_stime = t->d_stime;
		w->d_minflt = t->d_minflt;
		w->d_majflt = t->d_majflt;
		w->samples = t->samples;
		w->wall_ns = t->wall_ns;
		w->total_ticks = t->total_ticks;
		w->norm_ticks = t->norm_ticks;
		w->rss_pages_max = t->rss_pages_max;
		w->rss_pages_last = t->rss_pages_last;
		w->born = t->born;
		w->exited = t->exited;
	}
}
