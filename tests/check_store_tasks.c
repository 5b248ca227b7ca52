/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's task rows as payloads (store/store_tasks.c), every version:
 * round trips, finds of any subset, versions told apart, version 3's RSS
 * references (bad ones refused), and damaged payloads refused or read
 * within the caller's bound. Split from check_store_codec.c.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_codec.h"
#include "store/store_tasks.h"

/* n rows: most share the window's sample tuple, some differ. */
static void
mk_tasks(struct window_task *t, uint64_t *iid, size_t n)
{
	size_t i;

	memset(t, 0, n * sizeof(*t));
	for (i = 0; i < n; i++) {
		iid[i] = 3 + i * i; /* ascending, gaps of every size */
		t[i].d_utime = i * 7;
		t[i].d_stime = i % 3;
		t[i].d_minflt = i * 1000003;
		t[i].d_majflt = i == 5 ? UINT64_MAX : 0;
		t[i].samples = 10;
		t[i].wall_ns = 10000000123ull;
		t[i].total_ticks = 2004;
		t[i].norm_ticks = 1002.0 / 3;
		if (i % 4 == 1) { /* born late, or a delta dropped */
			t[i].samples = (uint32_t)(i % 10);
			t[i].wall_ns = i * 999999937ull;
			t[i].total_ticks = i * 200;
			t[i].norm_ticks = i % 8 == 1 ? -0.0 : i / 7.0;
		}
		t[i].rss_pages_max = 1000 + i * 4096;
		t[i].rss_pages_last = t[i].rss_pages_max - (i % 5) * 13;
		if (i % 2 == 1) /* a thread of the row before's process */
			t[i].rss_pages_last = t[i - 1].rss_pages_last;
		if (i % 8 == 7) /* and of an earlier one */
			t[i].rss_pages_last = t[i - 6].rss_pages_last;
		if (i % 2 == 1 && i % 3 == 0)
			t[i].rss_pages_max = t[i].rss_pages_last;
		t[i].born = i % 4 == 1;
		t[i].exited = i % 6 == 2;
	}
}

/* Version 3 (written), or 1 and 2 (what older stores hold). */
static int
tasks_put(unsigned version, struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n)
{
	return version == 1 ? store_tasks_put_v1(e, t, iid, n) :
	    version == 2    ? store_tasks_put_v2(e, t, iid, n) :
			      store_tasks_put(e, t, iid, n);
}

/* Every figure back as written, norm_ticks bit for bit. */
START_TEST(test_tasks_roundtrip)
{
	unsigned version = (unsigned)_i + 1;
	enum { N = 64 };
	struct window_task in[N], *out;
	uint64_t iid[N], *oid;
	struct store_enc e = { 0 };
	size_t n, i;

	mk_tasks(in, iid, N);
	ck_assert_int_eq(tasks_put(version, &e, in, iid, N), 0);
	ck_assert_int_eq(store_tasks_get(e.b.p, e.b.len, version, N, &out, &oid,
			     &n),
	    0);
	ck_assert_uint_eq(n, N);
	for (i = 0; i < N; i++) {
		ck_assert_uint_eq(oid[i], iid[i]);
		ck_assert_mem_eq(&out[i], &in[i], sizeof(in[i]));
	}
	/* the rows that share the mode carry no sample tuple */
	ck_assert_uint_lt(e.b.len, N * 20);
	free(out);
	free(oid);
	store_enc_release(&e);
	/* no rows */
	ck_assert_int_eq(tasks_put(version, &e, in, iid, 0), 0);
	ck_assert_int_eq(store_tasks_get(e.b.p, e.b.len, version, N, &out, &oid,
			     &n),
	    0);
	ck_assert_uint_eq(n, 0);
	free(out);
	free(oid);
	store_enc_release(&e);
}
END_TEST

/* Only the rows asked for, exactly as the whole decode gives them. */
START_TEST(test_tasks_find)
{
	unsigned version = (unsigned)_i + 1;
	enum { N = 64 };
	struct window_task in[N], *out;
	uint64_t iid[N], *oid, want[5];
	struct store_enc e = { 0 };
	size_t n, cut;

	mk_tasks(in, iid, N);
	ck_assert_int_eq(tasks_put(version, &e, in, iid, N), 0);
	/* rows 0, 9 and 63, and two ids no row has */
	want[0] = iid[0];
	want[1] = iid[9] - 1;
	want[2] = iid[9];
	want[3] = iid[N - 1];
	want[4] = iid[N - 1] + 1;
	ck_assert_int_eq(store_tasks_find(e.b.p, e.b.len, version, N, want, 5,
			     &out, &oid, &n),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(oid[0], iid[0]);
	ck_assert_mem_eq(&out[0], &in[0], sizeof(in[0]));
	ck_assert_uint_eq(oid[1], iid[9]);
	ck_assert_mem_eq(&out[1], &in[9], sizeof(in[9]));
	ck_assert_uint_eq(oid[2], iid[N - 1]);
	ck_assert_mem_eq(&out[2], &in[N - 1], sizeof(in[0]));
	free(out);
	free(oid);
	/* none asked, none wanted that exists */
	ck_assert_int_eq(store_tasks_find(e.b.p, e.b.len, version, N, want, 0,
			     &out, &oid, &n),
	    0);
	ck_assert_uint_eq(n, 0);
	free(out);
	free(oid);
	/* a cut before the last row asked for is refused */
	for (cut = 0; cut < e.b.len / 2; cut++)
		ck_assert_int_eq(store_tasks_find(e.b.p, cut, version, N, want,
				     5, &out, &oid, &n),
		    -EBADMSG);
	store_enc_release(&e);
}
END_TEST

START_TEST(test_tasks_bad)
{
	unsigned version = (unsigned)_i + 1;
	enum { N = 16 };
	struct window_task in[N], *out = NULL;
	uint64_t iid[N], *oid = NULL;
	struct store_enc e = { 0 };
	size_t n = 99, i;
	uint8_t *copy;

	mk_tasks(in, iid, N);
	iid[7] = iid[6]; /* a repeat */
	ck_assert_int_eq(tasks_put(version, &e, in, iid, N), -EINVAL);
	store_enc_release(&e);
	mk_tasks(in, iid, N);
	ck_assert_int_eq(tasks_put(version, &e, in, iid, N), 0);
	/* more rows than the reader allows */
	ck_assert_int_eq(store_tasks_get(e.b.p, e.b.len, version, N - 1, &out,
			     &oid, &n),
	    -EBADMSG);
	/* every cut */
	for (i = 0; i < e.b.len; i++)
		ck_assert_int_eq(store_tasks_get(e.b.p, i, version, N, &out,
				     &oid, &n),
		    -EBADMSG);
	ck_assert_uint_eq(n, 99); /* untouched */
	/* flipped bytes: refused or decoded, never past the input (ASan) */
	copy = malloc(e.b.len);
	ck_assert_ptr_nonnull(copy);
	for (i = 0; i < e.b.len; i++) {
		memcpy(copy, e.b.p, e.b.len);
		copy[i] ^= 0xa5;
		if (store_tasks_get(copy, e.b.len, version, N, &out, &oid,
			&n) == 0) {
			ck_assert_uint_le(n, N);
			free(out);
			free(oid);
		}
	}
	free(copy);
	store_enc_release(&e);
}
END_TEST

/* Any subset asked for (and ids no row has): exactly the rows the whole
 * decode gives for them, in order. */
START_TEST(test_tasks_find_subsets)
{
	unsigned version = (unsigned)_i + 1;
	enum { N = 64 };
	struct window_task in[N], *all, *out;
	uint64_t iid[N], *aid, *oid, want[2 * N], st = 0x853c49e6748fea9bull;
	struct store_enc e = { 0 };
	size_t n, na, nw, i, j, k;

	mk_tasks(in, iid, N);
	ck_assert_int_eq(tasks_put(version, &e, in, iid, N), 0);
	ck_assert_int_eq(store_tasks_get(e.b.p, e.b.len, version, N, &all, &aid,
			     &na),
	    0);
	for (k = 0; k < 500; k++) {
		for (i = nw = 0; i < N; i++) {
			st ^= st << 13, st ^= st >> 7, st ^= st << 17;
			if (st % (1 + k % 7) == 0)
				want[nw++] = iid[i];
			if (st % 11 == 0)
				want[nw++] = iid[i] + 1; /* none has it */
		}
		ck_assert_int_eq(store_tasks_find(e.b.p, e.b.len, version, N,
				     want, nw, &out, &oid, &n),
		    0);
		for (i = j = 0; i < na; i++) {
			size_t w;

			for (w = 0; w < nw && want[w] != aid[i]; w++)
				;
			if (w == nw)
				continue;
			ck_assert_uint_lt(j, n);
			ck_assert_uint_eq(oid[j], aid[i]);
			ck_assert_mem_eq(&out[j], &all[i], sizeof(out[j]));
			j++;
		}
		ck_assert_uint_eq(j, n);
		free(out);
		free(oid);
	}
	free(all);
	free(aid);
	store_enc_release(&e);
}
END_TEST

/* Version 2 holds version 1's varints in another order: the same
 * length, the same rows; neither version's payload read as an unknown
 * one. */
START_TEST(test_tasks_versions)
{
	enum { N = 64 };
	struct window_task in[N], *out;
	uint64_t iid[N], *oid;
	struct store_enc e1 = { 0 }, e2 = { 0 };
	size_t n;

	mk_tasks(in, iid, N);
	ck_assert_int_eq(store_tasks_put_v1(&e1, in, iid, N), 0);
	ck_assert_int_eq(store_tasks_put_v2(&e2, in, iid, N), 0);
	ck_assert_uint_eq(e1.b.len, e2.b.len);
	ck_assert(memcmp(e1.b.p, e2.b.p, e1.b.len) != 0);
	ck_assert_int_eq(store_tasks_get(e2.b.p, e2.b.len, 0, N, &out, &oid,
			     &n),
	    -EBADMSG);
	ck_assert_int_eq(store_tasks_get(e2.b.p, e2.b.len, 3, N, &out, &oid,
			     &n),
	    -EBADMSG);
	ck_assert_int_eq(store_tasks_get(e2.b.p, e2.b.len, 4, N, &out, &oid,
			     &n),
	    -EBADMSG);
	ck_assert_int_eq(store_tasks_find(e1.b.p, e1.b.len, 4, N, iid, 1, &out,
			     &oid, &n),
	    -EBADMSG);
	store_enc_release(&e1);
	store_enc_release(&e2);
}
END_TEST

/*
 * Version 3's RSS references: rows sharing a last value with an earlier
 * row refer back to it (a payload shorter than version 2's when that
 * pays, the same rows), a list with nothing to share writes no reference
 * column, and a reference past the values met so far, a reference count
 * the column does not hold, or a payload of version 2 read as 3 is
 * refused.
 */
START_TEST(test_tasks_v3_refs)
{
	enum { N = 64 };
	struct window_task in[N], *out;
	uint64_t iid[N], *oid;
	struct store_enc e2 = { 0 }, e3 = { 0 }, b = { 0 };
	size_t n, i, at;

	mk_tasks(in, iid, N);
	ck_assert_int_eq(store_tasks_put_v2(&e2, in, iid, N), 0);
	ck_assert_int_eq(store_tasks_put(&e3, in, iid, N), 0);
	/* half the rows refer back: 3-byte values become 1-byte refs */
	ck_assert_uint_lt(e3.b.len + N / 4, e2.b.len);
	ck_assert_int_eq(store_tasks_get(e2.b.p, e2.b.len, 3, N, &out, &oid,
			     &n),
	    -EBADMSG);
	store_enc_release(&e3);
	/* every value its own: no column, version 2's length and a byte */
	for (i = 0; i < N; i++)
		in[i].rss_pages_last = in[i].rss_pages_max = 5000 + i * 300;
	ck_assert_int_eq(store_tasks_put_v2(&e2, in, iid, 0), 0);
	store_enc_release(&e2);
	ck_assert_int_eq(store_tasks_put_v2(&e2, in, iid, N), 0);
	ck_assert_int_eq(store_tasks_put(&e3, in, iid, N), 0);
	ck_assert_uint_eq(e3.b.len, e2.b.len + 1);
	store_enc_release(&e2);
	store_enc_release(&e3);

	/* by hand: 3 rows of the mode tuple, the third refers to the first
	 * (ref 2), the second's own; then damaged */
	for (i = 0; i < 6; i++) {
		store_enc_u(&b, 3);	 /* rows */
		store_enc_u(&b, 10);	 /* samples */
		store_enc_u(&b, 100);	 /* wall_ns */
		store_enc_u(&b, 50);	 /* ticks */
		store_enc_f64(&b, 6.25); /* norm */
		store_enc_u(&b, 4), store_enc_u(&b, 1),
		    store_enc_u(&b, 1);	       /* iids */
		for (at = 0; at < 4 * 3; at++) /* figures */
			store_enc_u(&b, at);
		store_enc_u(&b, 0), store_enc_u(&b, 0),
		    store_enc_u(&b, 0);		 /* flags */
		store_enc_u(&b, i == 1 ? 2 : 1); /* rows that refer back */
		store_enc_u(&b, 0);
		store_enc_u(&b, 0);
		/* 2: the first of the two values met; 3: one past them */
		store_enc_u(&b, i == 2 ? 3 : i == 3 ? 1 : 2);
		store_enc_u(&b, 700), store_enc_u(&b, 900); /* the values */
		store_enc_s(&b, 0), store_enc_s(&b, 5);
		if (i != 4)
			store_enc_s(&b, -1); /* max − last */
		if (i == 5)
			store_enc_u(&b, 0); /* a byte too many */
		n = 0;
		ck_assert_int_eq(store_tasks_get(b.b.p, b.b.len, 3, N, &out,
				     &oid, &n),
		    i == 0 || i == 3 ? 0 : -EBADMSG);
		if (i == 0 || i == 3) {
			ck_assert_uint_eq(n, 3);
			ck_assert_uint_eq(out[0].rss_pages_last, 700);
			ck_assert_uint_eq(out[1].rss_pages_last, 900);
			ck_assert_uint_eq(out[1].rss_pages_max, 905);
			/* ref 2: the first value met; ref 1: the newest */
			ck_assert_uint_eq(out[2].rss_pages_last,
			    i == 0 ? 700 : 900);
			ck_assert_uint_eq(out[2].rss_pages_max,
			    out[2].rss_pages_last - 1);
			ck_assert_uint_eq(oid[2], 6);
			free(out);
			free(oid);
		}
		store_enc_release(&b);
	}
}
END_TEST

/* Many damaged payloads of each version (several flips, cuts, random
 * bytes): refused, or read within the caller's bound. */
START_TEST(test_tasks_fuzz)
{
	unsigned version = (unsigned)_i + 1;
	enum { N = 48 };
	struct window_task in[N], *out;
	uint64_t iid[N], *oid, st = 88172645463325252ull;
	struct store_enc e = { 0 };
	uint8_t buf[2048];
	size_t n, i, k, len, cut;
	int r, bad = 0;

	mk_tasks(in, iid, N);
	ck_assert_int_eq(tasks_put(version, &e, in, iid, N), 0);
	len = e.b.len;
	ck_assert_uint_le(len, sizeof(buf));
	for (k = 0; k < 20000; k++) {
		memcpy(buf, e.b.p, len);
		for (i = 0; i < 1 + k % 4; i++) {
			st ^= st << 13, st ^= st >> 7, st ^= st << 17;
			buf[st % len] ^= (uint8_t)(1 + (st >> 32) % 255);
		}
		if (k % 7 == 0)
			for (i = 0; i < len; i++) {
				st ^= st << 13, st ^= st >> 7, st ^= st << 17;
				buf[i] = (uint8_t)(st >> 40);
			}
		cut = k % 5 == 0 ? (size_t)(st % len) : len;
		r = k % 2 ?
		    store_tasks_get(buf, cut, version, N, &out, &oid, &n) :
		    store_tasks_find(buf, cut, version, N, iid + 3, 9, &out,
			&oid, &n);
		if (r == 0) {
			ck_assert_uint_le(n, N);
			free(out);
			free(oid);
		} else {
			ck_assert_int_eq(r, -EBADMSG);
			bad++;
		}
	}
	ck_assert_int_gt(bad, 1000);
	store_enc_release(&e);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("store_tasks");
	TCase *tc = tcase_create("tasks");
	SRunner *sr;
	int nf;

	tcase_add_loop_test(tc, test_tasks_roundtrip, 0, 3);
	tcase_add_loop_test(tc, test_tasks_find, 0, 3);
	tcase_add_loop_test(tc, test_tasks_bad, 0, 3);
	tcase_add_test(tc, test_tasks_versions);
	tcase_add_test(tc, test_tasks_v3_refs);
	tcase_add_loop_test(tc, test_tasks_find_subsets, 0, 3);
	tcase_add_loop_test(tc, test_tasks_fuzz, 0, 3);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
