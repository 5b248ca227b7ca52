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
 *
 * Memos: the sums of the last MEMO_SLOTS reads, each with the serials of
 * the entries it added in order. A read defers adding while its entries
 * so far begin some memo's list; when its whole list is a memo's it takes
 * that memo's sums (the same additions in the same order: bit for bit
 * the same), else it adds what it deferred at the first difference and
 * goes on. An entry's rows never change under its serial, and every
 * entry is still checked against the blob read, so a changed, added or
 * deleted window or summary changes the list: nothing to invalidate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define WCACHE_BYTES (2u << 20) /* per connection */
#define WCACHE_SLOTS 512
#define MEMO_SLOTS 4		/* whole reads' sums kept */
#define MEMO_BYTES (512u << 10) /* their rows and piece lists, together */

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
	uint64_t serial;    /* unique on the connection: this blob's entry */
	uint64_t used;	    /* last use, on the cache's clock */
	uint64_t used_read; /* the read that last used it */
	void *blob;
	size_t blob_n;
	struct wrow *rows;
	size_t n;
};

/* A whole read's sums: the entries it summed, in order, and what they
 * summed to (the slots in the order the read made them). */
struct memo {
	uint64_t *serial;
	size_t npieces;
	struct wrow *rows;
	size_t n;
	uint64_t used; /* last use, on the cache's clock; 0: empty */
};

struct store_wcache {
	struct wentry e[WCACHE_SLOTS];
	unsigned n;
	size_t bytes;
	uint64_t clock;
	uint64_t read; /* reads begun */
	uint64_t hits, misses;
	unsigned next; /* the entry after the last used: the next window's? */
	uint64_t serials; /* entries made */
	struct memo memo[MEMO_SLOTS];
	size_t memo_bytes;
	uint64_t memo_hits, memo_saved;
	/* the read in progress: the entries it met, in order; while some
	 * memo still begins with them, none is summed yet (deferred) */
	uint64_t rd_serial[WCACHE_SLOTS];
	size_t rd_k;
	unsigned rd_alive;   /* memos that begin with rd_serial[0..rd_k) */
	unsigned rd_missing; /* pieces decoded and not (yet) kept */
	bool rd_bad;	     /* a piece met without an entry: no memo */
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

static size_t
memo_bytes(const struct memo *m)
{
	return m->npieces * sizeof(*m->serial) + m->n * sizeof(*m->rows);
}

static void
memo_drop(struct store_wcache *c, unsigned i)
{
	c->memo_bytes -= memo_bytes(&c->memo[i]);
	free(c->memo[i].serial);
	free(c->memo[i].rows);
	memset(&c->memo[i], 0, sizeof(c->memo[i]));
}

void
store_wcache_free(struct store *s)
{
	struct store_wcache *c = s->wcache;
	unsigned i;

	if (c == NULL)
		return;
	/* its counts outlive it: whatever closed the connection */
	s->wcache_gone.hits += c->hits;
	s->wcache_gone.misses += c->misses;
	s->wcache_gone.memo_hits += c->memo_hits;
	s->wcache_gone.memo_saved += c->memo_saved;
	while (c->n)
		entry_drop(c, c->n - 1);
	for (i = 0; i < MEMO_SLOTS; i++)
		memo_drop(c, i);
	free(c);
	s->wcache = NULL;
}

void
store_wcache_stats(const struct store *s, uint64_t *hits, uint64_t *misses)
{
	*hits = s->wcache ? s->wcache->hits : 0;
	*misses = s->wcache ? s->wcache->misses : 0;
}

void
store_wcache_memo_stats(const struct store *s, uint64_t *hits, uint64_t *saved,
    size_t *bytes)
{
	*hits = s->wcache ? s->wcache->memo_hits : 0;
	*saved = s->wcache ? s->wcache->memo_saved : 0;
	*bytes = s->wcache ? s->wcache->memo_bytes : 0;
}

void
store_conn_cache_stats(const struct store *rc, struct store_cache_stats *ret)
{
	const struct store_wcache *c = rc ? rc->wcache : NULL;

	memset(ret, 0, sizeof(*ret));
	if (rc == NULL)
		return;
	/* the caches freed with a closed connection, then the live one */
	*ret = rc->wcache_gone;
	ret->bytes = 0;
	ret->opens = rc->opens;
	if (c == NULL)
		return;
	ret->hits += c->hits;
	ret->misses += c->misses;
	ret->memo_hits += c->memo_hits;
	ret->memo_saved += c->memo_saved;
	ret->bytes = sizeof(*c) + c->bytes + c->memo_bytes;
}

/* A top-N read begins: what it uses stays while it runs; every kept
 * memo may still be its answer. */
void
store_wcache_begin(struct store *s)
{
	struct store_wcache *c = s->wcache;
	unsigned i;

	if (c == NULL)
		return;
	c->read++;
	c->rd_k = 0;
	c->rd_alive = 0;
	c->rd_missing = 0;
	c->rd_bad = false;
	for (i = 0; i < MEMO_SLOTS; i++)
		if (c->memo[i].used)
			c->rd_alive |= 1u << i;
}

/* store_agg_sums' arithmetic, straight from entry i's kept rows */
static int
entry_sum(struct store_wcache *c, unsigned i, struct store_aggs *g)
{
	size_t k;

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
	return 0;
}

/* No memo is this read's answer after all: sum the entries it deferred,
 * in their order (each is still kept: the read in progress evicts none
 * it used, and meets each window once). */
static int
replay(struct store_wcache *c, struct store_aggs *g)
{
	size_t j;
	unsigned i;
	int r;

	c->rd_alive = 0;
	for (j = 0; j < c->rd_k; j++) {
		for (i = 0; i < c->n && c->e[i].serial != c->rd_serial[j]; i++)
			;
		if (i == c->n)
			return -EIO; /* cannot happen: see above */
		if ((r = entry_sum(c, i, g)) < 0)
			return r;
	}
	return 0;
}

static void
note(struct store_wcache *c, uint64_t serial)
{
	if (c->rd_k < WCACHE_SLOTS)
		c->rd_serial[c->rd_k++] = serial;
	else
		c->rd_bad = true; /* longer than a memo may be */
}

/* Entry i met as the read's next piece: 1 when a memo still begins with
 * the pieces so far (nothing summed), 0 when it was summed into g. */
static int
piece(struct store_wcache *c, unsigned i, struct store_aggs *g)
{
	uint64_t serial = c->e[i].serial;
	unsigned m, was = c->rd_alive;
	int r;

	for (m = 0; m < MEMO_SLOTS; m++)
		if ((c->rd_alive & (1u << m)) &&
		    (c->memo[m].npieces <= c->rd_k ||
			c->memo[m].serial[c->rd_k] != serial))
			c->rd_alive &= ~(1u << m);
	if (c->rd_alive) {
		/* a memo holds at most WCACHE_SLOTS pieces: rd_k < that */
		c->rd_serial[c->rd_k++] = serial;
		return 1;
	}
	if (was && (r = replay(c, g)) < 0)
		return r;
	note(c, serial);
	return entry_sum(c, i, g);
}

/* Window wid's rows of that list summed into g when the cache holds the
 * very blob: 1; 0 when it does not (the caller decodes, after the pieces
 * deferred so far were summed). A piece may instead be deferred: while
 * the pieces of the read so far begin some memo, they are only noted
 * (store_wcache_end). */
int
store_wcache_sum(struct store *s, int64_t wid, bool threads, const void *blob,
    size_t blob_n, struct store_aggs *g)
{
	struct store_wcache *c = s->wcache;
	unsigned i;
	int r;

	if (c == NULL) {
		/* decoded afresh all the same (the cache is made by the
		 * first put): counted with the closed caches' */
		s->wcache_gone.misses++;
		return 0;
	}
	/* a read meets its windows in the order an earlier one put them */
	i = c->next;
	if (i >= c->n || c->e[i].wid != wid || c->e[i].threads != threads)
		for (i = 0; i < c->n; i++)
			if (c->e[i].wid == wid && c->e[i].threads == threads)
				break;
	if (i == c->n || c->e[i].blob_n != blob_n ||
	    memcmp(c->e[i].blob, blob, blob_n) != 0) {
		c->misses++;
		c->rd_missing++;
		if (c->rd_alive && (r = replay(c, g)) < 0)
			return r;
		return 0;
	}
	c->hits++;
	c->next = i + 1;
	c->e[i].used = ++c->clock;
	c->e[i].used_read = c->read;
	if ((r = piece(c, i, g)) < 0)
		return r;
	return 1;
}

/* The read's sums into a memo, the least recently used one out for it;
 * none when they exceed the bound. */
static void
memo_save(struct store_wcache *c, const struct store_aggs *g)
{
	struct memo x = { .npieces = c->rd_k, .n = g->n };
	unsigned i, old = 0;
	size_t k;

	if (memo_bytes(&x) > MEMO_BYTES / 2 ||
	    (x.serial = malloc(x.npieces * sizeof(*x.serial) + 1)) == NULL)
		return;
	if ((x.rows = malloc(x.n * sizeof(*x.rows) + 1)) == NULL) {
		free(x.serial);
		return;
	}
	memcpy(x.serial, c->rd_serial, x.npieces * sizeof(*x.serial));
	for (k = 0; k < x.n; k++) {
		const struct store_agg *a = &g->a[k];
		struct wrow *w = &x.rows[k];

		w->iid = a->iid;
		w->last_wid = a->last_wid;
		w->d_utime = a->t.d_utime;
		w->d_stime = a->t.d_stime;
		w->d_minflt = a->t.d_minflt;
		w->d_majflt = a->t.d_majflt;
		w->samples = a->t.samples;
		w->wall_ns = a->t.wall_ns;
		w->total_ticks = a->t.total_ticks;
		w->norm_ticks = a->t.norm_ticks;
		w->rss_pages_max = a->t.rss_pages_max;
		w->rss_pages_last = a->t.rss_pages_last;
		w->born = a->t.born;
		w->exited = a->t.exited;
	}
	x.used = ++c->clock;
	for (i = 0; i < MEMO_SLOTS; i++)
		if (c->memo[i].used < c->memo[old].used)
			old = i;
	memo_drop(c, old);
	while (c->memo_bytes + memo_bytes(&x) > MEMO_BYTES) {
		for (i = 0, old = MEMO_SLOTS; i < MEMO_SLOTS; i++)
			if (c->memo[i].used &&
			    (old == MEMO_SLOTS ||
				c->memo[i].used < c->memo[old].used))
				old = i;
		memo_drop(c, old);
	}
	c->memo[old] = x;
	c->memo_bytes += memo_bytes(&x);
	c->memo_saved++;
}

/* Memo m's sums as g's (g empty): the slots as the read made them, each
 * as store_agg_slot made it and the pieces summed into it. */
static int
memo_load(struct store_wcache *c, unsigned m, struct store_aggs *g)
{
	const struct memo *x = &c->memo[m];
	size_t k;

	if (g->cap < x->n) {
		struct store_agg *p = realloc(g->a, x->n * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		g->a = p;
		g->cap = x->n;
	}
	memset(g->a, 0, x->n * sizeof(*g->a));
	for (k = 0; k < x->n; k++) {
		const struct wrow *w = &x->rows[k];
		struct store_agg *a = &g->a[k];

		a->iid = w->iid;
		a->last_wid = w->last_wid;
		a->t.d_utime = w->d_utime;
		a->t.d_stime = w->d_stime;
		a->t.d_minflt = w->d_minflt;
		a->t.d_majflt = w->d_majflt;
		a->t.samples = w->samples;
		a->t.wall_ns = w->wall_ns;
		a->t.total_ticks = w->total_ticks;
		a->t.norm_ticks = w->norm_ticks;
		a->t.rss_pages_max = w->rss_pages_max;
		a->t.rss_pages_last = w->rss_pages_last;
		a->t.born = w->born;
		a->t.exited = w->exited;
	}
	g->n = x->n;
	g->hint = g->n;
	/* the index is left empty: nothing is summed into g after this */
	return 0;
}

/*
 * The read's pieces all met (r: how its summing ended). When they are a
 * memo's, in its order, g takes the memo's sums: the same entries summed
 * in the same order give the same figures bit for bit. Otherwise what
 * was deferred is summed now, and a read whose every piece is an entry
 * becomes a memo. Error: g is not the read's sums.
 */
int
store_wcache_end(struct store *s, struct store_aggs *g, int r)
{
	struct store_wcache *c = s->wcache;
	unsigned m;

	if (c == NULL)
		return r;
	if (r == 0 && c->rd_alive) {
		for (m = 0; m < MEMO_SLOTS; m++)
			if ((c->rd_alive & (1u << m)) &&
			    c->memo[m].npieces == c->rd_k)
				break;
		if (m < MEMO_SLOTS) {
			c->rd_alive = 0;
			c->memo[m].used = ++c->clock;
			c->memo_hits++;
			return memo_load(c, m, g);
		}
		r = replay(c, g);
	}
	c->rd_alive = 0;
	if (r == 0 && !c->rd_bad && c->rd_missing == 0)
		memo_save(c, g);
	return r;
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
	if (c == NULL) {
		if ((c = s->wcache = calloc(1, sizeof(*c))) == NULL)
			return NULL;
		/* this read's pieces before it are not noted: no memo */
		c->rd_bad = true;
	}
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
	x.serial = ++c->serials;
	x.used = ++c->clock;
	x.used_read = c->read;
	c->next = c->n + 1;
	c->e[c->n] = x;
	c->bytes += entry_bytes(&x);
	return &c->e[c->n++];
}

/* A piece the read decoded is now entry x (NULL: not kept). */
static void
kept(struct store_wcache *c, const struct wentry *x)
{
	if (c == NULL || x == NULL || c->rd_missing == 0)
		return;
	c->rd_missing--;
	note(c, x->serial);
}

/* Keep window wid's decoded rows (from blob) for the next reads; without
 * memory, or when they alone exceed the bound, nothing is kept. */
void
store_wcache_put(struct store *s, int64_t wid, bool threads, const void *blob,
    size_t blob_n, const struct window_task *t, const uint64_t *iid, size_t n)
{
	struct wentry *x = entry_new(s, wid, threads, blob, blob_n, n, true);
	size_t k;

	kept(s->wcache, x);
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

	kept(s->wcache, x);
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
