/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sum_sizes: what a current database's task blobs and summaries take,
 * and what each payload version makes of the same rows
 * (bench/README.md "sum_sizes"; doc/storage.md "Where a level-0
 * window's bytes go").
 *
 *   build/bench/sum_sizes DB
 *
 * Opens DB read-only (a file store_bench --keep left), registers its
 * dictionaries, decodes every level-0 window's task blobs and every
 * summary, and prints per blob kind the mean bytes as stored, then the
 * rows re-encoded as version 1, 2 and (task lists) 3: raw, zstd 3, and
 * zstd 3 with a dictionary trained (4 KiB) on the even blobs, measured
 * on the odd ones. Every re-encoding is decoded again and compared, or
 * it stops. For the task lists also: version 3 with each row's RSS as its
 * difference from its instance's first value (a measurement, no format),
 * the bits a Rice code with the best parameter per column would take
 * (about what the figures themselves hold) and per column, the rows whose
 * RSS an earlier row of the blob has, and the time of a find and of a
 * whole decode per version.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zdict.h>
#include <zstd.h>

#include "store/store_codec.h"
#include "store/store_int.h"
#include "store/store_tasks.h"
#include "window/window.h"

enum { K_TP, K_TT, K_SP, K_ST, K__MAX };
static const char *const kname[K__MAX] = { "tasks, processes", "tasks, threads",
	"summaries, processes", "summaries, threads" };

struct set {
	size_t n, cap, bytes;
	void **p;
	size_t *len;
};

static struct set stored[K__MAX], enc[K__MAX][3], enc_ref[2];

/* Each instance's first rss_pages_last in the file (open addressing on
 * iid + 1): the reference an `instance` row could hold. */
static struct {
	uint64_t *key, *val;
	size_t mask;
} first_rss;

static uint64_t
first_rss_of(uint64_t iid, uint64_t v)
{
	size_t h;

	if (first_rss.key == NULL) {
		first_rss.mask = (1u << 20) - 1;
		first_rss.key = calloc(first_rss.mask + 1, sizeof(uint64_t));
		first_rss.val = calloc(first_rss.mask + 1, sizeof(uint64_t));
		if (first_rss.key == NULL || first_rss.val == NULL)
			exit(1);
	}
	for (h = (size_t)(iid * 0x9E3779B97F4A7C15ull >> 40) & first_rss.mask;
	     first_rss.key[h] && first_rss.key[h] != iid + 1;
	     h = (h + 1) & first_rss.mask)
		;
	if (first_rss.key[h] == 0) {
		first_rss.key[h] = iid + 1;
		first_rss.val[h] = v;
	}
	return first_rss.val[h];
}
static double rice[2], rice_col[2][8];
static size_t rice_n[2], rows_n[2], rows_shared[2];
static double find_ns[2][3], get_ns[2][3]; /* per list, per version */

static void die(const char *what);

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One row's find and a whole decode of p[0..len), version v: mean ns of
 * 20 each into the list's sums. */
static void
time_versions(int th, unsigned v, const void *p, size_t len,
    const uint64_t *iid, size_t n)
{
	struct window_task *t;
	uint64_t *oid;
	size_t k, got;
	double t0;
	int r;

	t0 = now_ns();
	for (k = 0; k < 20; k++) {
		r = store_tasks_find(p, len, v, n, &iid[n / 2], 1, &t, &oid,
		    &got);
		if (r < 0 || got != 1)
			die("a find does not read back");
		free(t);
		free(oid);
	}
	find_ns[th][v - 1] += (now_ns() - t0) / 20;
	t0 = now_ns();
	for (k = 0; k < 20; k++) {
		if (store_tasks_get(p, len, v, n, &t, &oid, &got) < 0)
			die("a decode does not read back");
		free(t);
		free(oid);
	}
	get_ns[th][v - 1] += (now_ns() - t0) / 20;
}
static const char *const col_name[8] = { "iid step", "d_utime", "d_stime",
	"d_minflt", "d_majflt", "flags", "rss_pages_max",
	"rss_pages_last - max" };

static void
die(const char *what)
{
	fprintf(stderr, "sum_sizes: %s\n", what);
	exit(1);
}

static void
set_add(struct set *s, const void *p, size_t n)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		if ((s->p = realloc(s->p, s->cap * sizeof(*s->p))) == NULL ||
		    (s->len = realloc(s->len, s->cap * sizeof(*s->len))) ==
			NULL)
			die("out of memory");
	}
	if ((s->p[s->n] = malloc(n ? n : 1)) == NULL)
		die("out of memory");
	memcpy(s->p[s->n], p, n);
	s->len[s->n++] = n;
	s->bytes += n;
}

/* Mean bytes: raw, zstd 3, zstd 3 with a dictionary (odd blobs). */
static void
report(const char *name, const struct set *s)
{
	size_t i, z3 = 0, zd = 0, nd = 0, cap = 0, tl = 0, tn = 0, dn;
	ZSTD_CCtx *c = ZSTD_createCCtx();
	char *tb = malloc(s->bytes + 1);
	size_t *tlen = calloc(s->n + 1, sizeof(size_t));
	void *out, *dict = malloc(4096);

	if (c == NULL || tb == NULL || tlen == NULL || dict == NULL)
		die("out of memory");
	for (i = 0; i < s->n; i++)
		cap = s->len[i] > cap ? s->len[i] : cap;
	if ((out = malloc(ZSTD_compressBound(cap))) == NULL)
		die("out of memory");
	for (i = 0; i < s->n; i++) {
		size_t a = ZSTD_compressCCtx(c, out, ZSTD_compressBound(cap),
		    s->p[i], s->len[i], 3);

		z3 += a < s->len[i] ? a : s->len[i];
		if (i % 2 == 0) {
			memcpy(tb + tl, s->p[i], s->len[i]);
			tl += s->len[i];
			tlen[tn++] = s->len[i];
		}
	}
	dn = ZDICT_trainFromBuffer(dict, 4096, tb, tlen, (unsigned)tn);
	if (!ZDICT_isError(dn)) {
		ZSTD_CDict *cd = ZSTD_createCDict(dict, dn, 3);

		for (i = 1; i < s->n && cd != NULL; i += 2) {
			size_t a = ZSTD_compress_usingCDict(c, out,
			    ZSTD_compressBound(cap), s->p[i], s->len[i], cd);

			zd += a < s->len[i] ? a : s->len[i];
			nd++;
		}
		ZSTD_freeCDict(cd);
	}
	printf("  %-34s %8.1f %8.1f %8.1f\n", name,
	    s->n ? (double)s->bytes / (double)s->n : 0.0,
	    s->n ? (double)z3 / (double)s->n : 0.0,
	    nd ? (double)zd / (double)nd : NAN);
	ZSTD_freeCCtx(c);
	free(out);
	free(tb);
	free(tlen);
	free(dict);
}

/* Bits of v[0..n) Rice-coded with the best parameter (a quotient of 20
 * or more escapes: 20 ones, 6 bits of length, the value). */
static size_t
rice_bits(const uint64_t *v, size_t n)
{
	size_t best = SIZE_MAX, b, i;
	unsigned k;

	for (k = 0; k < 40; k++) {
		for (b = 6, i = 0; i < n; i++) {
			uint64_t q = v[i] >> k;

			b += q < 20 ?
			    q + 1 + k :
			    20 + 6 + 64 - (size_t)__builtin_clzll(v[i]);
		}
		best = b < best ? b : best;
	}
	return best;
}

static void
rice_tasks(int th, const struct window_task *t, const uint64_t *iid, size_t n)
{
	uint64_t *v = calloc(n + 1, sizeof(*v));
	size_t i, bits = 0;
	int c;

	if (v == NULL)
		die("out of memory");
	for (c = 0; c < 8; c++) {
		for (i = 0; i < n; i++) {
			const struct window_task *r = &t[i];
			int64_t d = (int64_t)(r->rss_pages_last -
			    r->rss_pages_max);

			v[i] = c == 0 ? iid[i] - (i ? iid[i - 1] : 0) :
			    c == 1    ? r->d_utime :
			    c == 2    ? r->d_stime :
			    c == 3    ? r->d_minflt :
			    c == 4    ? r->d_majflt :
			    c == 5    ? (uint64_t)(r->born | r->exited << 1 |
					    (r->samples != t[0].samples) << 2) :
			    c == 6    ? r->rss_pages_max :
					((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
		}
		size_t cb = rice_bits(v, n);

		rice_col[th][c] += (double)cb / 8;
		bits += cb;
	}
	rice[th] += (double)bits / 8;
	rice_n[th]++;
	free(v);
}

static void
tasks_blob(int th, const struct store_frame *f)
{
	struct window_task *t, *b;
	uint64_t *iid, *biid;
	size_t n, bn;
	unsigned v;

	if (store_tasks_get(f->payload, f->len, f->version, 1u << 20, &t, &iid,
		&n) < 0)
		die("a task blob does not decode");
	for (v = 1; v <= 3; v++) {
		struct store_enc e = { 0 };

		if ((v == 1	   ? store_tasks_put_v1(&e, t, iid, n) :
			    v == 2 ? store_tasks_put_v2(&e, t, iid, n) :
				     store_tasks_put(&e, t, iid, n)) < 0 ||
		    store_tasks_get(e.b.p, e.b.len, v, n, &b, &biid, &bn) < 0 ||
		    bn != n ||
		    (n &&
			(memcmp(b, t, n * sizeof(*t)) != 0 ||
			    memcmp(biid, iid, n * sizeof(*iid)) != 0)))
			die("task rows do not read back");
		set_add(&enc[th][v - 1], e.b.p, e.b.len);
		if (n)
			time_versions(th, v, e.b.p, e.b.len, iid, n);
		store_enc_release(&e);
		free(b);
		free(biid);
	}
	if (n)
		rice_tasks(th, t, iid, n);
	/* not a format: version 3 with each row's RSS as its difference
	 * from its instance's first value in the file (zigzag), what a
	 * reference in the `instance` row would leave to store */
	{
		struct window_task *x = calloc(n + 1, sizeof(*x));
		struct store_enc e = { 0 };

		if (x == NULL)
			die("out of memory");
		for (size_t i = 0; i < n; i++) {
			uint64_t ref = first_rss_of(iid[i],
			    t[i].rss_pages_last);
			int64_t dl = (int64_t)(t[i].rss_pages_last - ref);

			x[i] = t[i];
			x[i].rss_pages_last = ((uint64_t)dl << 1) ^
			    (uint64_t)(dl >> 63);
			x[i].rss_pages_max = x[i].rss_pages_last +
			    (t[i].rss_pages_max - t[i].rss_pages_last);
		}
		if (store_tasks_put(&e, x, iid, n) < 0)
			die("cannot encode");
		set_add(&enc_ref[th], e.b.p, e.b.len);
		store_enc_release(&e);
		free(x);
	}
	/* rows whose RSS an earlier row of the blob has (version 3 refers
	 * back to it) */
	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < i && t[j].rss_pages_last != t[i].rss_pages_last;
		     j++)
			;
		rows_shared[th] += j < i;
	}
	rows_n[th] += n;
	free(t);
	free(iid);
}

static void
sum_blob(int k, const struct store_frame *f)
{
	struct store_agg *a, *b;
	size_t n, bn, i;
	unsigned v;

	if (store_tasksum_get(f->payload, f->len, f->version, &a, &n) < 0)
		die("a summary does not decode");
	for (v = 1; v <= 2; v++) {
		struct store_enc e = { 0 };

		if ((v == 1 ? store_tasksum_put_v1(&e, a, n) :
			      store_tasksum_put(&e, a, n)) < 0 ||
		    store_tasksum_get(e.b.p, e.b.len, v, &b, &bn) < 0 ||
		    bn != n)
			die("summary rows do not read back");
		for (i = 0; i < n; i++)
			if (b[i].iid != a[i].iid ||
			    b[i].last_wid != a[i].last_wid ||
			    memcmp(&b[i].t, &a[i].t, sizeof(a[i].t)) != 0)
				die("summary rows do not read back");
		set_add(&enc[k][v - 1], e.b.p, e.b.len);
		store_enc_release(&e);
		free(b);
	}
	free(a);
}

int
main(int argc, char **argv)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	uint32_t id;
	int k, col;

	if (argc != 2) {
		fprintf(stderr, "usage: sum_sizes DB\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		die("cannot open the database");
	if (sqlite3_prepare_v2(db, "SELECT dict FROM blob_dict", -1, &st,
		NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			store_zdict_add(sqlite3_column_blob(st, 0),
			    (size_t)sqlite3_column_bytes(st, 0), &id);
		sqlite3_finalize(st);
	}
	for (k = 0; k < 2; k++) {
		if (sqlite3_prepare_v2(db,
			k == 0 ? "SELECT t.procs, t.threads FROM window_tasks t"
				 " JOIN windows w ON w.id = t.window_id"
				 " WHERE w.level = 0 ORDER BY w.id" :
				 "SELECT procs, threads FROM task_sum"
				 " ORDER BY span_ns, start_ns",
			-1, &st, NULL) != SQLITE_OK)
			die(sqlite3_errmsg(db));
		while (sqlite3_step(st) == SQLITE_ROW)
			for (col = 0; col < 2; col++) {
				const void *b = sqlite3_column_blob(st, col);
				size_t bn = (size_t)sqlite3_column_bytes(st,
				    col);
				struct store_frame f;

				if (b == NULL)
					continue;
				set_add(&stored[2 * k + col], b, bn);
				if (store_frame_get(b, bn, &f) < 0)
					die("a blob does not decode");
				if (k == 0)
					tasks_blob(col, &f);
				else
					sum_blob(2 + col, &f);
				store_frame_release(&f);
			}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	printf("mean bytes per blob %19s %8s %8s %8s\n", "", "raw", "zstd 3",
	    "+dict");
	for (k = 0; k < K__MAX; k++) {
		char name[64];

		printf("%s: %zu blobs, stored %.1f B\n", kname[k], stored[k].n,
		    stored[k].n ? (double)stored[k].bytes / stored[k].n : 0);
		snprintf(name, sizeof(name), "version 1");
		report(name, &enc[k][0]);
		snprintf(name, sizeof(name), "version 2");
		report(name, &enc[k][1]);
		if (k < 2) {
			snprintf(name, sizeof(name), "version 3");
			report(name, &enc[k][2]);
			snprintf(name, sizeof(name),
			    "v3, RSS − instance's first (no format)");
			report(name, &enc_ref[k]);
		}
		if (k < 2 && rice_n[k])
			printf("  %-34s %8.1f\n",
			    "Rice, best parameter per column",
			    rice[k] / (double)rice_n[k]);
		if (k < 2 && rice_n[k])
			printf("  %-34s %.2f / %.2f / %.2f µs, whole %.2f / "
			       "%.2f / %.2f µs\n",
			    "one row's find, versions 1 / 2 / 3",
			    find_ns[k][0] / 1e3 / (double)rice_n[k],
			    find_ns[k][1] / 1e3 / (double)rice_n[k],
			    find_ns[k][2] / 1e3 / (double)rice_n[k],
			    get_ns[k][0] / 1e3 / (double)rice_n[k],
			    get_ns[k][1] / 1e3 / (double)rice_n[k],
			    get_ns[k][2] / 1e3 / (double)rice_n[k]);
		if (k < 2 && rows_n[k])
			printf("  %-34s %7.1f %% of %.1f a blob\n",
			    "rows whose RSS an earlier row has",
			    100.0 * (double)rows_shared[k] / (double)rows_n[k],
			    (double)rows_n[k] / (double)rice_n[k]);
		for (col = 0; k < 2 && rice_n[k] && col < 8; col++)
			printf("    %-32s %8.1f\n", col_name[col],
			    rice_col[k][col] / (double)rice_n[k]);
	}
	return 0;
}
