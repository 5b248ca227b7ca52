/* SPDX-License-Identifier: Apache-2.0 */
/*
 * drift: how much a task's figures in one window say about the next, per
 * column, in a real database (doc/storage.md, "Do figures drift?").
 *
 *   drift DB   (a copy: opening it migrates it to the current schema)
 *
 * Reads every level-0 window oldest first through the store, pairs each
 * task row with the same instance's row in the window before (same boot,
 * the next window by wall time), and prints per column: the pairs, the
 * share equal to the previous value, the mean bit length of the value
 * and of its difference from the previous one (zigzag), the lag-1
 * correlation, and for RSS the bit length of the difference from the
 * instance's first value in the file (a reference kept once). Bit
 * lengths stand for what a varint or a Rice code pays; the difference
 * wins where its column's mean is clearly below the value's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

enum col {
	C_UTIME,
	C_STIME,
	C_MINFLT,
	C_MAJFLT,
	C_SAMPLES,
	C_WALL,
	C_TOTAL,
	C_RSSMAX,
	C_RSSLAST,
	NCOL
};
static const char *const col_name[NCOL] = { "d_utime", "d_stime", "d_minflt",
	"d_majflt", "samples", "wall_ns", "total_ticks", "rss_pages_max",
	"rss_pages_last" };

struct acc {
	uint64_t n, eq;
	double bits_v, bits_d, sx, sy, sxx, syy, sxy;
};

struct ref {
	bool thread;
	int32_t id;
	uint64_t starttime, rss0;
};

static struct acc acc[NCOL], acc_ref;
static struct ref *refs;
static size_t nrefs, caprefs;

static unsigned
bitlen(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

static uint64_t
zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static uint64_t
colv(const struct window_task *t, enum col c)
{
	switch (c) {
	case C_UTIME:
		return t->d_utime;
	case C_STIME:
		return t->d_stime;
	case C_MINFLT:
		return t->d_minflt;
	case C_MAJFLT:
		return t->d_majflt;
	case C_SAMPLES:
		return t->samples;
	case C_WALL:
		return t->wall_ns;
	case C_TOTAL:
		return t->total_ticks;
	case C_RSSMAX:
		return t->rss_pages_max;
	default:
		return t->rss_pages_last;
	}
}

static void
add(struct acc *a, uint64_t prev, uint64_t v)
{
	double x = (double)prev, y = (double)v;

	a->n++;
	a->eq += prev == v;
	a->bits_v += bitlen(v);
	a->bits_d += bitlen(zz((int64_t)(v - prev)));
	a->sx += x;
	a->sy += y;
	a->sxx += x * x;
	a->syy += y * y;
	a->sxy += x * y;
}

static const struct window_task *
find(const struct window_task *v, size_t n, const struct window_task *t)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].id == t->id && v[i].starttime == t->starttime)
			return &v[i];
	return NULL;
}

static uint64_t
ref_of(bool thread, const struct window_task *t)
{
	size_t i;

	for (i = 0; i < nrefs; i++)
		if (refs[i].thread == thread && refs[i].id == t->id &&
		    refs[i].starttime == t->starttime)
			return refs[i].rss0;
	if (nrefs == caprefs) {
		size_t c = caprefs ? caprefs * 2 : 256;
		struct ref *r = realloc(refs, c * sizeof(*r));

		if (r == NULL)
			return t->rss_pages_last;
		refs = r;
		caprefs = c;
	}
	refs[nrefs++] = (struct ref){ thread, t->id, t->starttime,
		t->rss_pages_last };
	return t->rss_pages_last;
}

static void
pair_list(const struct window_task *prev, size_t np,
    const struct window_task *cur, size_t nc, bool thread)
{
	const struct window_task *p;
	size_t i;
	int c;

	for (i = 0; i < nc; i++) {
		uint64_t r0 = ref_of(thread, &cur[i]);

		if ((p = find(prev, np, &cur[i])) == NULL || p->exited ||
		    cur[i].born)
			continue;
		for (c = 0; c < NCOL; c++)
			add(&acc[c], colv(p, (enum col)c),
			    colv(&cur[i], (enum col)c));
		acc_ref.n++;
		acc_ref.bits_d += bitlen(
		    zz((int64_t)(cur[i].rss_pages_last - r0)));
	}
}

static void
print_acc(const char *name, const struct acc *a)
{
	double n = (double)a->n;
	double cov = a->sxy / n - (a->sx / n) * (a->sy / n);
	double vx = a->sxx / n - (a->sx / n) * (a->sx / n);
	double vy = a->syy / n - (a->sy / n) * (a->sy / n);
	double r = vx > 0 && vy > 0 ? cov / sqrt(vx * vy) : NAN;

	printf("  %-15s %8" PRIu64 " %6.1f %% %7.2f %7.2f %7.3f\n", name, a->n,
	    100.0 * (double)a->eq / n, a->bits_v / n, a->bits_d / n, r);
}

int
main(int argc, char **argv)
{
	struct store_opts o;
	struct store *s = NULL;
	struct window **v = NULL;
	size_t n = 0, i, used = 0;
	int r, c;

	if (argc != 2) {
		fprintf(stderr, "usage: drift DB (a copy: it is migrated)\n");
		return 2;
	}
	log_init(true, 0, "drift");
	store_opts_default(&o);
	o.max_bytes = 0;
	o.retain_s = 0;
	if ((r = store_open(argv[1], &o, &s)) < 0) {
		fprintf(stderr, "drift: store_open %s: %s\n", argv[1],
		    strerror(-r));
		return 1;
	}
	if ((r = store_windows(s, INT64_MIN / 2, INT64_MAX / 2, 0, &v, &n)) <
	    0) {
		fprintf(stderr, "drift: store_windows: %s\n", strerror(-r));
		return 1;
	}
	for (i = 1; i < n; i++) {
		const struct window *a = v[i - 1], *b = v[i];

		if (a->level != 0 || b->level != 0 ||
		    strcmp(a->boot_id, b->boot_id) != 0 ||
		    b->wall_start_ns - a->wall_end_ns >
			(int64_t)(a->wall_end_ns - a->wall_start_ns))
			continue;
		used++;
		pair_list(a->procs, a->nprocs, b->procs, b->nprocs, false);
		pair_list(a->threads, a->nthreads, b->threads, b->nthreads,
		    true);
	}
	printf("drift: %s: %zu windows, %zu adjacent level-0 pairs\n", argv[1],
	    n, used);
	printf("  %-15s %8s %8s %7s %7s %7s\n", "column", "pairs", "equal",
	    "bits v", "bits Δ", "r lag1");
	for (c = 0; c < NCOL; c++)
		print_acc(col_name[c], &acc[c]);
	if (acc_ref.n)
		printf("  %-15s %8" PRIu64 " %8s %7s %7.2f   (rss_pages_last "
		       "− the instance's first value in the file)\n",
		    "rss vs ref", acc_ref.n, "", "",
		    acc_ref.bits_d / (double)acc_ref.n);
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	free(refs);
	store_close(s);
	return 0;
}
