/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall part downstream of the collector, on synthetic parts: the
 * percentile estimator against known distributions, the roll-up merge
 * (sums exact, the top bound with "other", slow calls by time and
 * bounded), copies, the store's blob (round trip, damage), stored windows
 * folded over a range and rolled up, the wire answer with its filter, and
 * the client's text and JSON of it.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "core/sysnames.h"
#include "frame.h"
#include "jsonmini.h"
#include "store/store_codec.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC 1000000000LL
#define T0 (1700000000LL * SEC)
#define X86_READ 0
#define X86_WRITE 1
#define X86_FUTEX 202

/* A row of n calls all of latency lat_ns (one bucket), err of them
 * EAGAIN. */
static struct sc_row
mkrow(int32_t tgid, uint64_t start, const char *comm, uint32_t nr, uint64_t n,
    uint64_t lat_ns, uint64_t err)
{
	struct sc_row r;
	unsigned b = 0;

	memset(&r, 0, sizeof(r));
	r.tgid = tgid;
	r.start_ns = start;
	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	r.nr = nr;
	r.count = n;
	r.errors[SC_ERR_EAGAIN] = err;
	r.sum_ns = n * lat_ns;
	r.max_ns = lat_ns;
	while (b + 1 < SC_HIST_N && ((uint64_t)2 << b) <= lat_ns)
		b++;
	r.hist[b] = n;
	return r;
}

static struct sc_slow
mkslow(int32_t tid, int32_t tgid, uint32_t nr, int64_t enter, uint64_t lat)
{
	struct sc_slow s;

	memset(&s, 0, sizeof(s));
	s.tid = tid;
	s.tgid = tgid;
	s.start_ns = 100;
	snprintf(s.comm, sizeof(s.comm), "t%d", tid);
	s.nr = nr;
	s.ret = -110;
	s.boot_enter_ns = enter;
	s.lat_ns = lat;
	return s;
}

/* A part with the given rows and slow calls (copied). */
static struct window_syscalls *
mkpart(const struct sc_row *rows, size_t nrows, const struct sc_slow *slow,
    size_t nslow)
{
	struct window_syscalls *p = window_syscalls_new();

	ck_assert_ptr_nonnull(p);
	p->state = SC_ON;
	p->arch = SYSNAMES_X86_64;
	p->have = SC_HAVE_PROG_STATS;
	p->slow_ns = 50000000;
	p->prog_run_ns = 1000;
	p->prog_run_cnt = 10;
	p->ctr.missing_enter = 1;
	p->ctr.rb_full = 2;
	if (nrows) {
		ck_assert_ptr_nonnull(p->rows = calloc(nrows, sizeof(*rows)));
		memcpy(p->rows, rows, nrows * sizeof(*rows));
	}
	p->nrows = nrows;
	if (nslow) {
		ck_assert_ptr_nonnull(p->slow = calloc(nslow, sizeof(*slow)));
		memcpy(p->slow, slow, nslow * sizeof(*slow));
	}
	p->nslow = nslow;
	window_syscalls_sort(p);
	return p;
}

static uint64_t
total(const struct window_syscalls *p, uint64_t *sum, uint64_t *err)
{
	uint64_t n = p->other.count;
	size_t i;

	*sum = p->other.sum_ns;
	*err = sc_row_errors(&p->other);
	for (i = 0; i < p->nrows; i++) {
		n += p->rows[i].count;
		*sum += p->rows[i].sum_ns;
		*err += sc_row_errors(&p->rows[i]);
	}
	return n;
}

static const struct sc_row *
row_of(const struct window_syscalls *p, int32_t tgid, uint32_t nr)
{
	size_t i;

	for (i = 0; i < p->nrows; i++)
		if (p->rows[i].tgid == tgid && p->rows[i].nr == nr)
			return &p->rows[i];
	return NULL;
}

/* Exact where every call of the bucket has the same latency at its top;
 * within 2x of the true quantile for any spread in the bucket. */
START_TEST(test_quantile)
{
	uint64_t h[SC_HIST_N] = { 0 }, lo, hi, v;
	unsigned b, i;

	ck_assert_uint_eq(sc_hist_quantile(h, 0, 0, 0, 0.5), 0);
	/* 100 calls of 1000 ns (bucket 9: [512, 1024)), max 1000 */
	h[9] = 100;
	v = sc_hist_quantile(h, 0, 0, 1000, 0.5);
	ck_assert_uint_eq(v, 512 + 512 * 50 / 100);
	ck_assert_uint_eq(sc_hist_quantile(h, 0, 0, 1000, 0.99), 1000);
	ck_assert_uint_eq(sc_hist_quantile(h, 0, 0, 1000, 1.0), 1000);
	/* two buckets: 90 fast-ish at [1024, 2048), 10 at [2^20, 2^21) */
	memset(h, 0, sizeof(h));
	h[10] = 90;
	h[20] = 10;
	v = sc_hist_quantile(h, 0, 0, 1500000, 0.5);
	ck_assert_uint_ge(v, 1024);
	ck_assert_uint_lt(v, 2048);
	ck_assert_uint_eq(v, 1024 + 1024 * 50 / 90);
	/* rank 90 is the last of bucket 10: its top */
	ck_assert_uint_eq(sc_hist_quantile(h, 0, 0, 1500000, 0.9), 2048);
	/* p99: rank 99, the 9th of 10 in bucket 20, then the max clamps */
	v = sc_hist_quantile(h, 0, 0, 1500000, 0.99);
	ck_assert_uint_eq(v, 1500000); /* 2^20 + 2^20 * 9/10 > max */
	v = sc_hist_quantile(h, 0, 0, 4000000, 0.99);
	ck_assert_uint_eq(v, (1 << 20) + (uint64_t)(1 << 20) * 9 / 10);
	/* calls under a 1 µs floor: 50 fast, 50 in bucket 12 */
	memset(h, 0, sizeof(h));
	h[12] = 50;
	ck_assert_uint_eq(sc_hist_quantile(h, 50, 1000, 8000, 0.25), 500);
	v = sc_hist_quantile(h, 50, 1000, 8000, 0.75);
	ck_assert_uint_ge(v, 4096);
	ck_assert_uint_lt(v, 8192);
	/* the error bound: a sample spread of latencies, each quantile's
	 * estimate within a factor 2 of the exact one */
	for (b = 3; b < 28; b += 5) {
		uint64_t lat[200], n = 0;

		memset(h, 0, sizeof(h));
		for (i = 0; i < 200; i++) {
			uint64_t x = ((uint64_t)1 << b) + (uint64_t)i * i * 37 +
			    (i % 7) * ((uint64_t)1 << (b + i % 3));
			unsigned k = 0;

			while (k + 1 < SC_HIST_N && ((uint64_t)2 << k) <= x)
				k++;
			h[k]++;
			lat[n++] = x;
		}
		for (i = 0; i < n; i++) /* insertion sort, small */
			for (unsigned j = i; j > 0 && lat[j - 1] > lat[j];
			     j--) {
				uint64_t t = lat[j];

				lat[j] = lat[j - 1];
				lat[j - 1] = t;
			}
		for (unsigned qp = 10; qp < 100; qp += 20) {
			double q = qp / 100.0;
			uint64_t exact = lat[(qp * n + 99) / 100 - 1];

			v = sc_hist_quantile(h, 0, 0, lat[n - 1], q);
			ck_assert_msg(v <= 2 * exact && exact <= 2 * v,
			    "b %u q %.1f: est %llu exact %llu", b, q,
			    (unsigned long long)v, (unsigned long long)exact);
		}
	}
	sc_hist_bounds(0, &lo, &hi);
	ck_assert_uint_eq(lo, 0);
	ck_assert_uint_eq(hi, 2);
	sc_hist_bounds(SC_HIST_N - 1, &lo, &hi);
	ck_assert_uint_eq(hi, UINT64_MAX);
}
END_TEST

/* Rows of the same key add; sums stay exact through the bound. */
START_TEST(test_merge)
{
	struct sc_row r1[] = {
		mkrow(10, 100, "app", X86_READ, 100, 2000, 5),
		mkrow(10, 100, "app", X86_FUTEX, 10, 1000000, 0),
		mkrow(20, 200, "db", X86_WRITE, 50, 4000, 1),
	};
	struct sc_row r2[] = {
		mkrow(10, 100, "app2", X86_READ, 30, 100000, 2),
		/* the same pid, another start: another process */
		mkrow(10, 999, "app", X86_READ, 7, 3000, 0),
		mkrow(30, 300, "svc", X86_WRITE, 3, 500, 0),
	};
	struct sc_slow s1[] = { mkslow(11, 10, X86_FUTEX, 5000, 60000000) };
	struct sc_slow s2[] = { mkslow(12, 10, X86_READ, 1000, 70000000),
		mkslow(13, 20, X86_WRITE, 9000, 80000000) };
	struct window_syscalls *a = mkpart(r1, 3, s1, 1),
			       *b = mkpart(r2, 3, s2, 2);
	struct window_syscalls *acc = NULL, *c;
	uint64_t n, sum, err, n1, s1sum, e1, n2, s2sum, e2;
	const struct sc_row *r;

	n1 = total(a, &s1sum, &e1);
	n2 = total(b, &s2sum, &e2);
	b->floor_ns = 777;
	b->have = 0; /* stats off in the later window */
	ck_assert_int_eq(window_syscalls_merge(&acc, NULL), 0);
	ck_assert_ptr_null(acc);
	ck_assert_int_eq(window_syscalls_merge(&acc, a), 0);
	ck_assert_ptr_nonnull(acc);
	ck_assert_ptr_ne(acc->rows, a->rows);
	ck_assert_int_eq(window_syscalls_merge(&acc, b), 0);
	n = total(acc, &sum, &err);
	ck_assert_uint_eq(n, n1 + n2);
	ck_assert_uint_eq(sum, s1sum + s2sum);
	ck_assert_uint_eq(err, e1 + e2);
	ck_assert_uint_eq(acc->nrows, 5);
	ck_assert_ptr_nonnull(r = row_of(acc, 10, X86_READ));
	ck_assert_uint_eq(r->start_ns, 100);
	ck_assert_uint_eq(r->count, 130);
	ck_assert_uint_eq(r->errors[SC_ERR_EAGAIN], 7);
	ck_assert_uint_eq(r->max_ns, 100000);
	ck_assert_uint_eq(r->hist[10] + r->hist[16], 130);
	ck_assert_str_eq(r->comm, "app2"); /* the later window's */
	/* counters and run time add; stats only where both had them */
	ck_assert_uint_eq(acc->ctr.missing_enter, 2);
	ck_assert_uint_eq(acc->ctr.rb_full, 4);
	ck_assert_uint_eq(acc->prog_run_ns, 2000);
	ck_assert_uint_eq(acc->have & SC_HAVE_PROG_STATS, 0);
	ck_assert_uint_eq(acc->floor_ns, 777);
	/* slow calls by time */
	ck_assert_uint_eq(acc->nslow, 3);
	ck_assert_int_eq(acc->slow[0].tid, 12);
	ck_assert_int_eq(acc->slow[1].tid, 11);
	ck_assert_int_eq(acc->slow[2].tid, 13);
	/* largest Σ first */
	ck_assert_int_eq(acc->rows[0].tgid, 10);
	ck_assert_uint_eq(acc->rows[0].nr, X86_FUTEX);

	/* dup: deep and equal */
	ck_assert_ptr_nonnull(c = window_syscalls_dup(acc));
	ck_assert_ptr_ne(c->rows, acc->rows);
	ck_assert_int_eq(memcmp(c->rows, acc->rows,
			     acc->nrows * sizeof(*acc->rows)),
	    0);
	ck_assert_int_eq(memcmp(c->slow, acc->slow,
			     acc->nslow * sizeof(*acc->slow)),
	    0);
	window_syscalls_free(c);
	window_syscalls_free(acc);
	window_syscalls_free(a);
	window_syscalls_free(b);
}
END_TEST

/* Past the top bound: the smallest rows go to other, sums unchanged;
 * past the slow bound: the latest calls go, counted. */
START_TEST(test_bound)
{
	struct sc_row r1[] = { mkrow(1, 1, "a", 0, 10, 1000, 0),
		mkrow(2, 2, "b", 0, 10, 2000, 1),
		mkrow(3, 3, "c", 0, 10, 3000, 0) };
	struct sc_row r2[] = { mkrow(4, 4, "d", 0, 10, 4000, 0),
		mkrow(5, 5, "e", 0, 10, 500, 2) };
	struct sc_slow s1[] = { mkslow(1, 1, 0, 10, 1),
		mkslow(2, 2, 0, 30, 1) };
	struct sc_slow s2[] = { mkslow(3, 3, 0, 20, 1),
		mkslow(4, 4, 0, 40, 1) };
	struct window_syscalls *a = mkpart(r1, 3, s1, 2),
			       *b = mkpart(r2, 2, s2, 2);
	uint64_t n, sum, err, n1, sa, ea, n2, sb, eb;

	a->other = mkrow(-1, 0, "", 0, 5, 100, 1);
	a->other_rows = 4;
	n1 = total(a, &sa, &ea);
	n2 = total(b, &sb, &eb);
	a->top_max = b->top_max = 3;
	a->slow_max = b->slow_max = 3;
	ck_assert_int_eq(window_syscalls_merge(&a, b), 0);
	ck_assert_uint_eq(a->nrows, 3);
	ck_assert_int_eq(a->rows[0].tgid, 4);
	ck_assert_int_eq(a->rows[1].tgid, 3);
	ck_assert_int_eq(a->rows[2].tgid, 2);
	ck_assert_uint_eq(a->other_rows, 4 + 2);
	ck_assert_int_eq(a->other.tgid, -1);
	ck_assert_uint_eq(a->other.count, 5 + 10 + 10);
	ck_assert_uint_eq(a->other.max_ns, 1000);
	n = total(a, &sum, &err);
	ck_assert_uint_eq(n, n1 + n2);
	ck_assert_uint_eq(sum, sa + sb);
	ck_assert_uint_eq(err, ea + eb);
	ck_assert_uint_eq(a->nslow, 3);
	ck_assert_int_eq(a->slow[2].boot_enter_ns, 30);
	ck_assert_uint_eq(a->ctr.slow_dropped, 1);
	/* a later off window (a state part, no bounds) keeps the range's */
	window_syscalls_free(b);
	ck_assert_ptr_nonnull(b = window_syscalls_new());
	b->state = SC_OFF;
	ck_assert_int_eq(window_syscalls_merge(&a, b), 0);
	ck_assert_uint_eq(a->top_max, 3);
	ck_assert_uint_eq(a->nrows, 3);
	ck_assert_uint_eq(a->state, SC_OFF);
	window_syscalls_free(a);
	window_syscalls_free(b);
}
END_TEST

static struct window_syscalls *
sample_part(void)
{
	struct sc_row r[] = { mkrow(10, 5000000000ULL, "app", X86_READ, 100,
				  2000, 5),
		mkrow(10, 5000000000ULL, "app", X86_FUTEX, 10, 60000000, 0),
		mkrow(20, 7, "db", 9999, 4, 1000, 0) };
	struct sc_slow s[] = { mkslow(11, 10, X86_FUTEX, 123456789012LL,
				   60000000),
		mkslow(21, 20, X86_READ, 123456789000LL, 55000000) };
	struct window_syscalls *p = mkpart(r, 3, s, 2);

	p->other = mkrow(-1, 0, "", X86_READ, 3, 700, 1);
	p->other_rows = 2;
	p->floor_ns = 0;
	p->top_max = 32;
	p->slow_max = 64;
	p->rows[0].fast = 0;
	return p;
}

/* The blob's round trip, and what a damaged payload gives. */
START_TEST(test_codec)
{
	struct window_syscalls *p = sample_part(), *q = NULL;
	struct store_enc e = { 0 };

	p->ctr.compat = 5000000000ULL;
	p->err = -3;
	store_syscalls_encode(&e, p);
	ck_assert_int_eq(e.err, 0);
	ck_assert_int_eq(store_syscalls_decode(e.b.p, e.b.len, &q), 0);
	ck_assert_uint_eq(q->state, SC_ON);
	ck_assert_int_eq(q->err, -3);
	ck_assert_uint_eq(q->ctr.compat, 5000000000ULL);
	ck_assert_uint_eq(q->nrows, 3);
	ck_assert_int_eq(memcmp(q->rows, p->rows, 3 * sizeof(*p->rows)), 0);
	ck_assert_int_eq(memcmp(&q->other, &p->other, sizeof(p->other)), 0);
	ck_assert_uint_eq(q->other_rows, 2);
	ck_assert_uint_eq(q->nslow, 2);
	ck_assert_int_eq(memcmp(q->slow, p->slow, 2 * sizeof(*p->slow)), 0);
	ck_assert_uint_eq(q->top_max, 32);
	window_syscalls_free(q);
	/* compact: a row of one bucket takes well under its struct */
	ck_assert_uint_lt(e.b.len, 3 * sizeof(struct sc_row) / 4);
	ck_assert_int_eq(store_syscalls_decode(e.b.p, e.b.len - 1, &q),
	    -EBADMSG);
	ck_assert_int_eq(store_syscalls_decode(e.b.p, e.b.len / 2, &q),
	    -EBADMSG);
	ck_assert_int_eq(store_syscalls_decode("\x01\x00\x00\x00", 4, &q),
	    -EBADMSG);
	store_enc_release(&e);
	window_syscalls_free(p);
}
END_TEST

static struct window *
mkwin(uint64_t seq, int64_t start, struct window_syscalls *p)
{
	struct window *w = window_new(seq, 1);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b");
	w->hz = 100;
	w->wall_start_ns = start;
	w->wall_end_ns = start + 10 * SEC;
	w->mono_start_ns = start - T0 + SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	if (p)
		window_part_set(w, WPART_SYSCALLS, p);
	return w;
}

/* Stored, read back, folded over a range, rolled up, a damaged blob. */
START_TEST(test_store)
{
	char db[PATH_MAX], *dir = tu_mkdtemp_db("sc", db, sizeof(db));
	struct window *w1 = mkwin(1, T0, sample_part()), *w2, *w3, **v = NULL;
	struct window_syscalls *r = NULL, *off;
	struct store *s = NULL;
	uint64_t sum, err, n1, s1, e1;
	size_t n = 0;
	uint32_t nw = 0;

	n1 = total(window_syscalls(w1), &s1, &e1);
	w2 = mkwin(2, T0 + 10 * SEC, NULL); /* no part */
	w3 = mkwin(3, T0 + 20 * SEC, sample_part());
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(store_put(s, w3), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 40 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_nonnull(window_syscalls(v[0]));
	ck_assert_uint_eq(window_syscalls(v[0])->nrows, 3);
	ck_assert_ptr_null(window_syscalls(v[1]));
	for (size_t i = 0; i < n; i++)
		window_free(v[i]);
	free(v);

	ck_assert_int_eq(store_syscalls_range(s, T0, T0 + 40 * SEC, &r, &nw),
	    0);
	ck_assert_uint_eq(nw, 2);
	ck_assert_uint_eq(total(r, &sum, &err), 2 * n1);
	ck_assert_uint_eq(sum, 2 * s1);
	ck_assert_uint_eq(err, 2 * e1);
	ck_assert_uint_eq(r->nslow, 4);
	window_syscalls_free(r);

	/* a damaged blob: counted, left out, the window still reads */
	ck_assert_int_eq(store_exec(s,
			     "UPDATE window_syscalls SET blob = x'b70102' "
			     "WHERE window_id = (SELECT min(window_id) FROM "
			     "window_syscalls)",
			     NULL, 0),
	    0);
	ck_assert_int_eq(store_syscalls_range(s, T0, T0 + 40 * SEC, &r, &nw),
	    0);
	ck_assert_uint_eq(nw, 1);
	window_syscalls_free(r);
	ck_assert_int_eq(store_windows(s, T0, T0 + 40 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_null(window_syscalls(v[0]));
	ck_assert_uint_eq(v[0]->samples, w1->samples);
	ck_assert_ptr_nonnull(window_syscalls(v[2]));
	for (size_t i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	ck_assert_int_eq(store_syscalls_range(s, T0, T0 + 5 * SEC, &r, &nw), 0);
	ck_assert_ptr_null(r);
	store_close(s);
	tu_rmtree(dir);
	free(dir);

	/* the maintenance roll-up: one window, one part, sums exact */
	dir = tu_mkdtemp_db("sc-roll", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(store_put(s, w3), 0);
	/* level 0 rolls in hourly batches: an hour past its 6 h age */
	ck_assert_int_eq(store_maintain(s, T0 + 8 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0 - 60 * SEC, T0 + 60 * SEC, 0, &v,
			     &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	ck_assert_ptr_nonnull(window_syscalls(v[0]));
	ck_assert_uint_eq(total(window_syscalls(v[0]), &sum, &err), 2 * n1);
	ck_assert_uint_eq(sum, 2 * s1);
	window_free(v[0]);
	free(v);
	ck_assert_int_eq(store_syscalls_range(s, T0 - 60 * SEC, T0 + 60 * SEC,
			     &r, &nw),
	    0);
	ck_assert_uint_eq(nw, 1);
	ck_assert_uint_eq(total(r, &sum, &err), 2 * n1);
	window_syscalls_free(r);
	store_close(s);
	tu_rmtree(dir);
	free(dir);
	window_free(w1);
	window_free(w2);
	window_free(w3);

	/* an off part is stored as its head */
	ck_assert_ptr_nonnull(off = window_syscalls_new());
	off->state = SC_FAILED;
	off->err = -EPERM;
	dir = tu_mkdtemp_db("sc-off", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	w1 = mkwin(1, T0, off);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_syscalls_range(s, T0, T0 + 40 * SEC, &r, &nw),
	    0);
	ck_assert_uint_eq(r->state, SC_FAILED);
	ck_assert_int_eq(r->err, -EPERM);
	window_syscalls_free(r);
	store_close(s);
	window_free(w1);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

static Vitals__Response *
answer_of(const struct window_syscalls *p, uint32_t windows, int32_t pid,
    const char *comm)
{
	struct rpc_query q = { .op = RPC_Q_SYSCALLS, .id = 9, .pid = pid };
	uint8_t *frame = NULL;
	size_t len = 0;
	Vitals__Response *res;

	if (comm)
		snprintf(q.process, sizeof(q.process), "%s", comm);
	ck_assert_int_eq(rpc_answer_syscalls(&q, p, windows, 1 << 20, &frame,
			     &len),
	    0);
	ck_assert_ptr_nonnull(
	    res = frame_unpack_response(frame + VITALS_FRAME_HDR,
		len - VITALS_FRAME_HDR));
	free(frame);
	return res;
}

/* The answer, its filter, the client's text and JSON. */
START_TEST(test_wire_client)
{
	struct window_syscalls *p = sample_part();
	const Vitals__SyscallsAnswer *d;
	const struct jm *jd, *jr;
	Vitals__Response *res;
	struct sbuf o, f;
	struct jm *j;
	const char *s;
	size_t i;

	p->have = 0;
	res = answer_of(p, 4, 0, NULL);
	ck_assert_int_eq(res->result_case, VITALS__RESPONSE__RESULT_SYSCALLS);
	d = res->syscalls;
	ck_assert_str_eq(d->state, "on");
	ck_assert_str_eq(d->arch, "x86_64");
	ck_assert(d->stored);
	ck_assert_uint_eq(d->windows, 4);
	ck_assert_uint_eq(d->n_rows, 3);
	ck_assert_str_eq(d->rows[0]->name, "futex");
	ck_assert_uint_eq(d->rows[0]->p50_ns,
	    sc_hist_quantile(p->rows[0].hist, 0, 0, p->rows[0].max_ns, 0.5));
	ck_assert_uint_eq(d->rows[1]->mean_ns, 2000);
	ck_assert_uint_eq(d->rows[1]->eagain, 5);
	ck_assert_uint_eq(d->rows[1]->errors, 5);
	ck_assert_str_eq(d->rows[2]->name, ""); /* nr 9999: unknown */
	ck_assert_ptr_nonnull(d->other);
	ck_assert_uint_eq(d->other->rows, 2);
	ck_assert_uint_eq(d->n_slow, 2);
	ck_assert_str_eq(d->slow[0]->name, "read");
	ck_assert_int_eq(d->slow[0]->ret, -110);
	ck_assert_uint_eq(d->counters->rb_full, 2);

	sbuf_init(&o);
	fmt_syscalls(&o, d);
	s = sbuf_str(&o);
	ck_assert_msg(strstr(s, "syscalls: on, x86_64, 4 windows stored") !=
		NULL,
	    "%s", s);
	ck_assert_msg(strstr(s, "app/10") && strstr(s, "futex") &&
		strstr(s, "nr9999") && strstr(s, "(other: 2)"),
	    "%s", s);
	ck_assert_msg(strstr(s, "slow calls (over 50.0 ms)") != NULL, "%s", s);
	ck_assert_ptr_nonnull(strstr(s, "ring buffer full 2"));
	ck_assert_ptr_nonnull(strstr(s, "run time unknown"));
	/* 80 columns at most, once the prose is wrapped as render() does */
	sbuf_init(&f);
	text_fit(&f, s, 80);
	for (const char *l = sbuf_str(&f); *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		ck_assert_msg(text_ncols(l, len) <= 80, "wide: %.*s", (int)len,
		    l);
		l += len + (e != NULL);
	}
	sbuf_free(&f);
	sbuf_free(&o);

	sbuf_init(&o);
	json_response(&o, res);
	ck_assert_ptr_nonnull(j = jm_parse(sbuf_str(&o), o.len));
	ck_assert_ptr_nonnull(jd = jm_get(j, "syscalls"));
	ck_assert_int_eq(jm_get(jd, "prog_run_ns")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jd, "have_prog_stats")->t, JM_BOOL);
	ck_assert_int_eq(jm_get(jd, "rows")->n, 3);
	jr = &jm_get(jd, "rows")->v[1];
	ck_assert_int_eq(jm_get(jr, "sum_ns")->t, JM_STR);
	ck_assert_int_eq(jm_get(jr, "sum_ns")->ll, 200000);
	ck_assert_str_eq(jm_get(jr, "name")->str, "read");
	ck_assert_int_eq(jm_get(&jm_get(jd, "rows")->v[2], "name")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jm_get(jd, "counters"), "missing_enter")->ll,
	    1);
	ck_assert_int_eq(jm_get(&jm_get(jd, "slow")->v[0], "boot_enter_ns")->t,
	    JM_STR);
	jm_free(j);
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);

	/* a filter: one process's rows and slow calls, no other */
	res = answer_of(p, 1, 20, NULL);
	ck_assert_uint_eq(res->syscalls->n_rows, 1);
	ck_assert_int_eq(res->syscalls->rows[0]->tgid, 20);
	ck_assert_ptr_null(res->syscalls->other);
	ck_assert_uint_eq(res->syscalls->n_slow, 1);
	vitals__response__free_unpacked(res, NULL);
	res = answer_of(p, 1, 0, "app");
	ck_assert_uint_eq(res->syscalls->n_rows, 2);
	for (i = 0; i < res->syscalls->n_rows; i++)
		ck_assert_str_eq(res->syscalls->rows[i]->comm, "app");
	vitals__response__free_unpacked(res, NULL);

	/* states said, not zeros */
	res = answer_of(NULL, 0, 0, NULL);
	ck_assert_str_eq(res->syscalls->state, "off");
	sbuf_init(&o);
	fmt_syscalls(&o, res->syscalls);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "syscalls: off"));
	sbuf_free(&o);
	sbuf_init(&o);
	json_response(&o, res);
	ck_assert_ptr_nonnull(j = jm_parse(sbuf_str(&o), o.len));
	ck_assert_int_eq(jm_get(jm_get(j, "syscalls"), "counters")->t, JM_NULL);
	jm_free(j);
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);
	p->state = SC_FAILED;
	p->err = -EPERM;
	res = answer_of(p, 1, 0, NULL);
	sbuf_init(&o);
	fmt_syscalls(&o, res->syscalls);
	ck_assert_msg(strstr(sbuf_str(&o),
			  "syscalls: failed: Operation not "
			  "permitted") != NULL,
	    "%s", sbuf_str(&o));
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);
	/* a range that ends off still shows the earlier windows' rows */
	p->state = SC_OFF;
	p->err = 0;
	res = answer_of(p, 3, 0, NULL);
	sbuf_init(&o);
	fmt_syscalls(&o, res->syscalls);
	ck_assert_msg(strstr(sbuf_str(&o),
			  "syscalls: off at the range's end") != NULL &&
		strstr(sbuf_str(&o), "futex") != NULL,
	    "%s", sbuf_str(&o));
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);
	p->nrows = p->nslow = 0;
	p->other.count = 0;
	p->other_rows = 0;
	p->state = SC_UNSUPPORTED;
	res = answer_of(p, 1, 0, NULL);
	sbuf_init(&o);
	fmt_syscalls(&o, res->syscalls);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "syscalls: unsupported"));
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);
	window_syscalls_free(p);
}
END_TEST

/* A request through rpc_handle as the control plane runs it: live from
 * the last window (on the loop), a range resolved into a query, the query
 * run on the store as a query thread runs it, bad input refused. */
static Vitals__Response *
handle(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res)
{
	Vitals__Response *r;
	uint8_t *buf;
	size_t len;

	memset(res, 0, sizeof(*res));
	ck_assert_int_eq(frame_pack_request(req, &buf, &len), 0);
	ck_assert_int_eq(rpc_handle(ctx, ROLE_READER, buf + VITALS_FRAME_HDR,
			     len - VITALS_FRAME_HDR, res),
	    0);
	free(buf);
	if (res->verdict == RPC_QUERY)
		return NULL;
	ck_assert_ptr_nonnull(res->frame);
	r = frame_unpack_response(res->frame + VITALS_FRAME_HDR,
	    res->len - VITALS_FRAME_HDR);
	free(res->frame);
	res->frame = NULL;
	ck_assert_ptr_nonnull(r);
	return r;
}

START_TEST(test_daemon_path)
{
	char db[PATH_MAX], *dir = tu_mkdtemp_db("sc-q", db, sizeof(db));
	struct window *w1 = mkwin(1, T0, sample_part());
	struct window *w2 = mkwin(2, T0 + 10 * SEC, sample_part());
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__SyscallsRequest sr = VITALS__SYSCALLS_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	struct vitalsd_info info = { 0 };
	struct control_stats stats = { 0 };
	struct rpc_cache cache = { 0 };
	struct rpc_ctx ctx = { 0 };
	struct rpc_result res;
	Vitals__Response *r;
	struct store *s = NULL;
	uint8_t *frame = NULL;
	size_t len = 0;

	ctx.info = &info;
	ctx.stats = &stats;
	ctx.cache = &cache;
	ctx.max_frame = 1 << 20;
	ctx.now_wall_ns = T0 + 30 * SEC;
	info.hz = 100;
	info.have_store = true;
	req.version = 1;
	req.id = 77;
	req.op_case = VITALS__REQUEST__OP_SYSCALLS;
	req.syscalls = &sr;

	/* no window yet: UNAVAILABLE (the client's exit 5) */
	r = handle(&ctx, &req, &res);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_UNAVAILABLE);
	vitals__response__free_unpacked(r, NULL);
	/* live: the last window's part, filtered by pid */
	info.last = w2;
	sr.pid = 10;
	r = handle(&ctx, &req, &res);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_OK);
	ck_assert(!r->syscalls->stored);
	ck_assert_uint_eq(r->syscalls->windows, 1);
	ck_assert_uint_eq(r->syscalls->n_rows, 2);
	vitals__response__free_unpacked(r, NULL);
	sr.pid = -3;
	r = handle(&ctx, &req, &res);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(r, NULL);
	sr.pid = 0;
	sr.process = "sixteen-bytes-xx"; /* a comm is at most 15 */
	r = handle(&ctx, &req, &res);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(r, NULL);

	/* a range: a query, run on the store */
	sr.process = "db";
	tr.since_ns = 60 * SEC;
	sr.range = &tr;
	ck_assert_ptr_null(handle(&ctx, &req, &res));
	ck_assert_int_eq(res.verdict, RPC_QUERY);
	ck_assert_int_eq(res.query.op, RPC_Q_SYSCALLS);
	ck_assert_str_eq(res.query.process, "db");
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(query_run(s, &res.query, 1 << 20, &frame, &len), 0);
	ck_assert_ptr_nonnull(
	    r = frame_unpack_response(frame + VITALS_FRAME_HDR,
		len - VITALS_FRAME_HDR));
	free(frame);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(r->id, 77);
	ck_assert(r->syscalls->stored);
	ck_assert_uint_eq(r->syscalls->windows, 2);
	ck_assert_uint_eq(r->syscalls->n_rows, 1);
	ck_assert_str_eq(r->syscalls->rows[0]->comm, "db");
	ck_assert_uint_eq(r->syscalls->rows[0]->count, 8); /* 4 + 4 */
	ck_assert_ptr_null(r->syscalls->other);
	vitals__response__free_unpacked(r, NULL);
	store_close(s);
	rpc_cache_release(&cache);
	window_free(w1);
	window_free(w2);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* The daemon's dump text and summary words of a window with the part. */
START_TEST(test_dump)
{
	struct window *w = mkwin(1, T0, sample_part());
	struct vbuf b = { 0 };

	ck_assert_int_eq(dump_window(w, 2, &b), 0);
	ck_assert_msg(strstr(b.p,
			  "syscalls: on (err 0), x86_64, floor 0 ns, "
			  "slow 50000000 ns, 3 rows (+2 in other)") != NULL,
	    "%s", b.p);
	ck_assert_ptr_nonnull(strstr(b.p, "  10 app futex: 10 calls"));
	ck_assert_ptr_null(strstr(b.p, "nr9999")); /* topn 2 */
	vbuf_reset(&b);
	ck_assert_int_eq(dump_window(w, 0, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "  20 db nr9999: 4 calls"));
	vbuf_reset(&b);
	dump_summary_line(w, &b);
	ck_assert_msg(strstr(b.p, " sc=117/2") != NULL, "%s", b.p);
	vbuf_release(&b);
	window_free(w);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sc_window");
	TCase *tc = tcase_create("sc");

	tcase_add_test(tc, test_quantile);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_codec);
	tcase_add_test(tc, test_store);
	tcase_add_test(tc, test_wire_client);
	tcase_add_test(tc, test_daemon_path);
	tcase_add_test(tc, test_dump);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
