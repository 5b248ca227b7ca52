/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The payloads of a window's other parts (store_kv.c, store_sys.c,
 * store_bpfrows.c): every figure back bit for bit, the NULL of an empty
 * gauge kept, and every class of malformed input refused: cuts, a byte
 * left over, overlong varints, counts the payload cannot hold, tags and
 * flags the encoder never writes, keys out of order.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_bpfrows.h"
#include "store/store_codec.h"
#include "store/store_kv.h"
#include "store/store_sys.h"

/* A decoder under test: 0 or -EBADMSG, its result released. */
typedef int (*get_fn)(const void *p, size_t len, size_t max);

/* The counters' payload version under test (loop tests: 1, 2). */
static unsigned kv_version = STORE_KV_VERSION;

static int
kv_put(struct store_enc *e, const struct store_kv_count *c, size_t nc,
    const struct store_kv_gauge *g, size_t ng)
{
	return kv_version == 1 ? store_kv_put_v1(e, c, nc, g, ng) :
				 store_kv_put(e, c, nc, g, ng);
}

static int
kv_get(const void *p, size_t len, size_t max)
{
	struct store_kv kv;
	int r = store_kv_get(p, len, kv_version, max, &kv);

	if (r == 0) {
		ck_assert_uint_le(kv.ncount, max);
		ck_assert_uint_le(kv.ngauge, max);
		store_kv_release(&kv);
	}
	return r;
}

static int
sys_get(const void *p, size_t len, size_t max)
{
	struct store_sys s;
	int r = store_sys_get(p, len, max, &s);

	if (r == 0) {
		ck_assert_uint_le(s.ncpu, max);
		ck_assert_uint_le(s.npsi, max);
		store_sys_release(&s);
	}
	return r;
}

static int
bpf_get(const void *p, size_t len, size_t max)
{
	struct store_bpfrows b;
	int r = store_bpfrows_get(p, len, max, &b);

	if (r == 0) {
		ck_assert_uint_le(b.nuid, max);
		ck_assert_uint_le(b.nproc, max);
		store_bpfrows_release(&b);
	}
	return r;
}

static int
bpf4_get(const void *p, size_t len, size_t max)
{
	struct store_bpfrows b;
	int r = store_bpfrows_get_v(p, len, STORE_BPFROWS_VERSION, max, &b);

	if (r == 0) {
		ck_assert_uint_le(b.nuid, max);
		ck_assert_uint_le(b.nproc, max);
		ck_assert_uint_le(b.nthread, max);
		store_bpfrows_release(&b);
	}
	return r;
}

/* Every cut, a byte more, an overlong first varint, a count over max, and
 * every byte flipped (refused or decoded within bounds, never read past:
 * ASan). */
static void
malformed(const struct store_enc *e, get_fn get, size_t max)
{
	uint8_t *copy = malloc(e->b.len + 12);
	size_t i;

	ck_assert_ptr_nonnull(copy);
	ck_assert_int_eq(get(e->b.p, e->b.len, max), 0);
	for (i = 0; i < e->b.len; i++)
		ck_assert_msg(get(e->b.p, i, max) == -EBADMSG, "cut at %zu", i);
	memcpy(copy, e->b.p, e->b.len);
	copy[e->b.len] = 0;
	ck_assert_int_eq(get(copy, e->b.len + 1, max), -EBADMSG);
	/* the row count as eleven bytes */
	memset(copy, 0x80, 10);
	copy[10] = 0;
	ck_assert_int_eq(get(copy, 11, max), -EBADMSG);
	for (i = 0; i < e->b.len; i++) {
		memcpy(copy, e->b.p, e->b.len);
		copy[i] ^= 0x5a;
		(void)get(copy, e->b.len, max);
	}
	free(copy);
}

/* A count far beyond what the bytes could hold, within max. */
static void
lying_count(get_fn get)
{
	struct store_enc e = { 0 };

	store_enc_u(&e, 1000000);
	store_enc_bytes(&e, "\0\0\0\0\0\0\0\0", 8);
	ck_assert_int_eq(get(e.b.p, e.b.len, SIZE_MAX), -EBADMSG);
	store_enc_release(&e);
}

/* ---------------------------------------------------------------- kv */

static const struct gauge gauges[] = {
	{ 0 }, /* no reading: NULL */
	{ .n = 11,
	    .min = 22549024,
	    .max = 22586352,
	    .sum = 248168748,
	    .last = 22549024 }, /* MemFree */
	{ .n = 11, .min = 1.36, .max = 24.6, .sum = 168.22, .last = 24.6 },
	{ .n = 10, .min = 2, .max = 2, .sum = 20, .last = 2 },
	{ .n = 1, .min = -5, .max = 3, .sum = -5, .last = 3 },
	{ .n = 3, .min = -0.0, .max = 0, .sum = 0, .last = 0 },
	{ .n = UINT32_MAX,
	    .min = 9007199254740992.0,
	    .max = 9007199254740992.0,
	    .sum = 1e300,
	    .last = 9007199254740992.0 },
	{ .n = 2,
	    .min = -9007199254740992.0,
	    .max = 9007199254740992.0,
	    .sum = 0,
	    .last = -9007199254740992.0 },
	{ .n = 4, .min = 1, .max = INFINITY, .sum = INFINITY, .last = 1 },
	{ .n = 5, .min = 7, .max = 3, .sum = 20, .last = 5 }, /* max < min */
	/* load averages: hundredths, the sum a few ulps off them */
	{ .n = 11,
	    .min = 1.58,
	    .max = 3.19,
	    .sum = 27.820000000000004,
	    .last = 3.19 },
	{ .n = 11,
	    .min = 44.68,
	    .max = 51.39,
	    .sum = 502.98999999999995,
	    .last = 51.39 },
	{ .n = 2, .min = -0.5, .max = -0.0, .sum = -0.5, .last = -0.0 },
	{ .n = 3, .min = 1.0 / 3, .max = 0.25, .sum = 0.75, .last = 0.25 },
	{ .n = 3, .min = 1e15, .max = 1e15 + 0.5, .sum = 3e15, .last = 1e15 },
};
#define NG (sizeof(gauges) / sizeof(gauges[0]))

static void
mk_kv(struct store_kv_count *c, size_t nc, struct store_kv_gauge *g)
{
	size_t i;

	memset(c, 0, nc * sizeof(*c));
	for (i = 0; i < nc; i++) {
		c[i].key = (uint32_t)(i * i + (i > 3 ? 200 : 0));
		c[i].value = i == 0 ? UINT64_MAX : i * 1000003;
	}
	memset(g, 0, NG * sizeof(*g));
	for (i = 0; i < NG; i++) {
		g[i].key = (uint32_t)(100 + 3 * i);
		g[i].g = gauges[i];
	}
	g[NG - 1].key = UINT32_MAX;
}

START_TEST(test_kv_roundtrip)
{
	enum { NC = 42 };
	struct store_kv_count c[NC];
	struct store_kv_gauge g[NG];
	struct store_enc e = { 0 };
	struct store_kv kv;
	size_t i;

	kv_version = (unsigned)_i + 1;
	mk_kv(c, NC, g);
	ck_assert_int_eq(kv_put(&e, c, NC, g, NG), 0);
	ck_assert_int_eq(store_kv_get(e.b.p, e.b.len, kv_version, 64, &kv), 0);
	ck_assert_uint_eq(kv.ncount, NC);
	ck_assert_uint_eq(kv.ngauge, NG);
	ck_assert_mem_eq(kv.count, c, sizeof(c));
	for (i = 0; i < NG; i++) {
		ck_assert_uint_eq(kv.gauge[i].key, g[i].key);
		ck_assert_mem_eq(&kv.gauge[i].g, &g[i].g, sizeof(g[i].g));
	}
	store_kv_release(&kv);
	ck_assert_ptr_null(kv.count);
	store_enc_release(&e);
	/* MemFree's gauge in form 1: 4 + 3 + 1 + 3 bytes, not 4 doubles */
	store_enc_gauge(&e, &gauges[1]);
	ck_assert_uint_le(e.b.len, 13);
	store_enc_release(&e);
	/* load1's in form 2: 2 to 3 bytes a figure */
	store_enc_gauge(&e, &gauges[10]);
	ck_assert_uint_le(e.b.len, 14);
	store_enc_release(&e);
	/* a third is no number of hundredths: four doubles */
	store_enc_gauge(&e, &gauges[13]);
	ck_assert_uint_eq(e.b.len, 2 + 4 * 9);
	store_enc_release(&e);
	/* nothing at all */
	ck_assert_int_eq(kv_put(&e, c, 0, g, 0), 0);
	ck_assert_uint_eq(e.b.len, 2);
	ck_assert_int_eq(store_kv_get(e.b.p, e.b.len, kv_version, 0, &kv), 0);
	ck_assert_uint_eq(kv.ncount + kv.ngauge, 0);
	store_kv_release(&kv);
	store_enc_release(&e);
}
END_TEST

START_TEST(test_kv_bad)
{
	enum { NC = 12 };
	struct store_kv_count c[NC];
	struct store_kv_gauge g[NG];
	struct store_enc e = { 0 };
	struct store_kv kv;

	kv_version = (unsigned)_i + 1;
	mk_kv(c, NC, g);
	c[5].key = c[4].key; /* a repeat */
	ck_assert_int_eq(kv_put(&e, c, NC, g, NG), -EINVAL);
	store_enc_release(&e);
	mk_kv(c, NC, g);
	g[2].key = 1; /* out of order */
	ck_assert_int_eq(kv_put(&e, c, NC, g, NG), -EINVAL);
	store_enc_release(&e);
	mk_kv(c, NC, g);
	ck_assert_int_eq(kv_put(&e, c, NC, g, NG), 0);
	malformed(&e, kv_get, 64);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, NC - 1), -EBADMSG);
	store_enc_release(&e);
	lying_count(kv_get);
	/* a repeated key (step 0 after the first): steps and values
	 * interleaved (1), or a column of steps then one of values (2) */
	store_enc_u(&e, 2);
	store_enc_u(&e, 5);
	store_enc_u(&e, kv_version == 1 ? 1 : 0);
	store_enc_u(&e, kv_version == 1 ? 0 : 1);
	store_enc_u(&e, 1);
	store_enc_u(&e, 0);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* a key past 32 bits */
	store_enc_u(&e, 2);
	store_enc_u(&e, UINT32_MAX);
	store_enc_u(&e, 1);
	store_enc_u(&e, 1);
	store_enc_u(&e, 1);
	store_enc_u(&e, 0);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* a gauge form the encoder never writes */
	store_enc_u(&e, 0);
	store_enc_u(&e, 1);
	store_enc_u(&e, 7);
	store_enc_u(&e, 3); /* n */
	store_enc_u(&e, 3); /* form */
	store_enc_bytes(&e, "\0\0\0\0\0\0\0\0", 8);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* form 1 out of its range: min past 2^53 */
	store_enc_u(&e, 0);
	store_enc_u(&e, 1);
	store_enc_u(&e, 7);
	store_enc_u(&e, 3);
	store_enc_u(&e, 1);
	store_enc_s(&e, (1LL << 53) + 1);
	store_enc_u(&e, 0);
	store_enc_u(&e, 0);
	store_enc_s(&e, 0);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* form 1 whose sum overflows */
	store_enc_u(&e, 0);
	store_enc_u(&e, 1);
	store_enc_u(&e, 7);
	store_enc_u(&e, UINT32_MAX);
	store_enc_u(&e, 1);
	store_enc_s(&e, 1LL << 52);
	store_enc_u(&e, 0);
	store_enc_u(&e, 0);
	store_enc_s(&e, INT64_MAX);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* form 2 with hundredths past 2^53 */
	store_enc_u(&e, 0);
	store_enc_u(&e, 1);
	store_enc_u(&e, 7);
	store_enc_u(&e, 3);
	store_enc_u(&e, 2);
	store_enc_s(&e, (1LL << 53) + 1);
	store_enc_bytes(&e, "\0\0\0\0\0\0\0", 7);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* and a num tag that is not one */
	store_enc_u(&e, 0);
	store_enc_u(&e, 1);
	store_enc_u(&e, 7);
	store_enc_u(&e, 1);
	store_enc_u(&e, 0);
	store_enc_u(&e, 3);
	store_enc_u(&e, 0);
	store_enc_u(&e, 0);
	store_enc_u(&e, 0);
	ck_assert_int_eq(kv_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	ck_assert_int_eq(store_kv_get("", 0, kv_version, 64, &kv), -EBADMSG);
}
END_TEST

/* Version 2 holds version 1's varints in another order: the same
 * length; each read as the other refused or different; an unknown
 * version refused. */
START_TEST(test_kv_versions)
{
	enum { NC = 42 };
	struct store_kv_count c[NC];
	struct store_kv_gauge g[NG];
	struct store_enc e1 = { 0 }, e2 = { 0 };
	struct store_kv kv;
	size_t i;

	mk_kv(c, NC, g);
	ck_assert_int_eq(store_kv_put_v1(&e1, c, NC, g, NG), 0);
	ck_assert_int_eq(store_kv_put(&e2, c, NC, g, NG), 0);
	ck_assert_uint_eq(e1.b.len, e2.b.len);
	ck_assert(memcmp(e1.b.p, e2.b.p, e1.b.len) != 0);
	ck_assert_int_eq(store_kv_get(e2.b.p, e2.b.len, 2, 64, &kv), 0);
	ck_assert_mem_eq(kv.count, c, sizeof(c));
	for (i = 0; i < NG; i++)
		ck_assert_mem_eq(&kv.gauge[i].g, &g[i].g, sizeof(g[i].g));
	store_kv_release(&kv);
	ck_assert_int_eq(store_kv_get(e2.b.p, e2.b.len, 3, 64, &kv), -EBADMSG);
	ck_assert_int_eq(store_kv_get(e1.b.p, e1.b.len, 0, 64, &kv), -EBADMSG);
	if (store_kv_get(e2.b.p, e2.b.len, 1, 64, &kv) == 0) {
		ck_assert(
		    kv.ncount != NC || memcmp(kv.count, c, sizeof(c)) != 0);
		store_kv_release(&kv);
	}
	store_enc_release(&e1);
	store_enc_release(&e2);
}
END_TEST

/* Damaged payloads of each version (several flips, cuts, random bytes):
 * refused, or read within the caller's bound. */
START_TEST(test_kv_fuzz)
{
	enum { NC = 30 };
	struct store_kv_count c[NC];
	struct store_kv_gauge g[NG];
	struct store_enc e = { 0 };
	uint64_t st = 0x9e3779b97f4a7c15ull;
	uint8_t buf[2048];
	size_t i, k, len;
	int bad = 0;

	kv_version = (unsigned)_i + 1;
	mk_kv(c, NC, g);
	ck_assert_int_eq(kv_put(&e, c, NC, g, NG), 0);
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
		if (kv_get(buf, k % 5 == 0 ? (size_t)(st % len) : len, 64) < 0)
			bad++;
	}
	ck_assert_int_gt(bad, 1000);
	store_enc_release(&e);
}
END_TEST

/* --------------------------------------------------------------- sys */

static void
mk_sys(struct store_sys_cpu *c, size_t nc, struct store_sys_psi *p, size_t np)
{
	size_t i;

	memset(c, 0, nc * sizeof(*c));
	for (i = 0; i < nc; i++) {
		struct window_cpu *x = &c[i].c;

		c[i].cpu = (int32_t)i - 1;
		x->d.user = 810 + i;
		x->d.system = 173 * i;
		x->d.idle = i == 3 ? UINT64_MAX : 14;
		x->d.guest_nice = i;
		x->samples = 10;
		x->wall_ns = 10000008636ull;
		if (i == 4) { /* a CPU that came online late */
			x->samples = 3;
			x->wall_ns = 3000000001ull;
		}
		x->online_end = i != 5;
		x->max_khz = i == 0 ? -1 : 2400000;
		x->capacity = i == 0 ? -1 : (int32_t)(1024 - i);
		if (i == 2)
			x->capacity = INT32_MIN;
		if (i) {
			x->cur_khz = (struct gauge){ .n = 10,
				.min = 1200000,
				.max = 2400000,
				.sum = 18000000,
				.last = 2400000 };
			x->freq_ratio = (struct gauge){ .n = 10,
				.min = 0.5,
				.max = 1,
				.sum = 7.5,
				.last = 1 };
		}
	}
	c[nc - 1].cpu = INT32_MAX;
	memset(p, 0, np * sizeof(*p));
	for (i = 0; i < np; i++) {
		struct window_psi *x = &p[i].p;

		p[i].res = (uint32_t)i;
		x->available = true;
		x->have_full = i != 0;
		x->samples = 10;
		x->d_some_us = 9448802 * i;
		x->d_full_us = i == 1 ? UINT64_MAX : 302;
		x->some_avg10 = (struct gauge){ .n = 10,
			.min = 96.24,
			.max = 97.18,
			.sum = 967.5,
			.last = 96.78 };
		if (i != 2)
			x->full_avg10 = (struct gauge){ .n = 10 };
	}
	p[np - 1].res = 255;
}

START_TEST(test_sys_roundtrip)
{
	enum { NC = 9, NP = 3 };
	struct store_sys_cpu c[NC];
	struct store_sys_psi p[NP];
	struct store_enc e = { 0 };
	struct store_sys s;
	size_t i;

	mk_sys(c, NC, p, NP);
	ck_assert_int_eq(store_sys_put(&e, c, NC, p, NP), 0);
	ck_assert_int_eq(store_sys_get(e.b.p, e.b.len, 16, &s), 0);
	ck_assert_uint_eq(s.ncpu, NC);
	ck_assert_uint_eq(s.npsi, NP);
	for (i = 0; i < NC; i++)
		ck_assert_mem_eq(&s.cpu[i], &c[i], sizeof(c[i]));
	for (i = 0; i < NP; i++)
		ck_assert_mem_eq(&s.psi[i], &p[i], sizeof(p[i]));
	store_sys_release(&s);
	store_enc_release(&e);
	/* any order is kept, the aggregate line anywhere */
	c[0].cpu = 7;
	c[1].cpu = -1;
	ck_assert_int_eq(store_sys_put(&e, c, NC, p, NP), 0);
	ck_assert_int_eq(store_sys_get(e.b.p, e.b.len, 16, &s), 0);
	for (i = 0; i < NC; i++)
		ck_assert_mem_eq(&s.cpu[i], &c[i], sizeof(c[i]));
	store_sys_release(&s);
	store_enc_release(&e);
	ck_assert_int_eq(store_sys_put(&e, c, 0, p, 0), 0);
	ck_assert_int_eq(store_sys_get(e.b.p, e.b.len, 16, &s), 0);
	ck_assert_uint_eq(s.ncpu + s.npsi, 0);
	store_sys_release(&s);
	store_enc_release(&e);
}
END_TEST

START_TEST(test_sys_bad)
{
	enum { NC = 4, NP = 3 };
	struct store_sys_cpu c[NC];
	struct store_sys_psi p[NP];
	struct store_enc e = { 0 };
	size_t i;

	mk_sys(c, NC, p, NP);
	p[1].res = 256;
	ck_assert_int_eq(store_sys_put(&e, c, NC, p, NP), -EINVAL);
	store_enc_release(&e);
	mk_sys(c, NC, p, NP);
	ck_assert_int_eq(store_sys_put(&e, c, NC, p, NP), 0);
	malformed(&e, sys_get, 16);
	ck_assert_int_eq(sys_get(e.b.p, e.b.len, NC - 1), -EBADMSG);
	store_enc_release(&e);
	lying_count(sys_get);
	/* a first row without its samples and wall time, or unknown flags */
	for (i = 0; i < 2; i++) {
		store_enc_u(&e, 1);
		store_enc_s(&e, 0);
		store_enc_u(&e, i ? 4 : 0);
		store_enc_bytes(&e, "\0\0\0\0\0\0\0\0\0\0", 10);
		store_enc_u(&e, 1);
		store_enc_u(&e, 1);
		store_enc_bytes(&e, "\0\0\0\0\0", 5);
		ck_assert_int_eq(sys_get(e.b.p, e.b.len, 16), -EBADMSG);
		store_enc_release(&e);
	}
	/* a CPU number past 32 bits */
	store_enc_u(&e, 1);
	store_enc_s(&e, (int64_t)INT32_MAX + 2);
	store_enc_u(&e, 2);
	store_enc_bytes(&e, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 17);
	ck_assert_int_eq(sys_get(e.b.p, e.b.len, 16), -EBADMSG);
	store_enc_release(&e);
	/* a PSI row with a flag the encoder never sets */
	store_enc_u(&e, 0);
	store_enc_u(&e, 1);
	store_enc_u(&e, 0);
	store_enc_u(&e, 4);
	store_enc_bytes(&e, "\0\0\0\0\0", 5);
	ck_assert_int_eq(sys_get(e.b.p, e.b.len, 16), -EBADMSG);
	store_enc_release(&e);
}
END_TEST

/* ----------------------------------------------------------- bpfrows */

static void
mk_bpf(struct window_bpf_uid *u, size_t nu, struct window_bpf_proc *p,
    size_t np)
{
	size_t i, k;

	memset(u, 0, nu * sizeof(*u));
	for (i = 0; i < nu; i++) {
		u[i].uid = i == 0 ? UINT32_MAX : (uint32_t)(10000 + i * 37);
		u[i].oncpu_ns = 19705938577ull * i;
		u[i].exited_ns = i == 2 ? UINT64_MAX : 2231621251ull;
		u[i].exited_tasks = 198 + i;
	}
	u[1].uid = 0;
	memset(p, 0, np * sizeof(*p));
	for (i = 0; i < np; i++) {
		p[i].tgid = i == 0 ? -1 : (int32_t)(5852 + 13 * i);
		p[i].starttime = i == 0 ? 0 : 2395733 + i / 3;
		p[i].oncpu_ns = 335597887 + i;
		p[i].rq_ns = 20723198016ull;
		p[i].rq_count = 0;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++) {
			p[i].rq_hist[k] = k < 18 ? (uint32_t)(k * i % 200) : 0;
			p[i].rq_count += p[i].rq_hist[k];
		}
		if (i % 3 == 1) /* a count the histogram does not sum to */
			p[i].rq_count = 425;
	}
	p[1].tgid = INT32_MAX;
	p[2].tgid = INT32_MIN;
	p[2].starttime = UINT64_MAX;
	p[3].rq_hist[VITALS_BPF_RQ_SLOTS - 1] = UINT32_MAX;
	memset(p[4].rq_hist, 0, sizeof(p[4].rq_hist));
}

START_TEST(test_bpfrows_roundtrip)
{
	enum { NU = 6, NP = 33 };
	struct window_bpf_uid u[NU];
	struct window_bpf_proc p[NP];
	struct store_enc e = { 0 };
	struct store_bpfrows b;

	mk_bpf(u, NU, p, NP);
	ck_assert_int_eq(store_bpfrows_put(&e, u, NU, p, NP), 0);
	ck_assert_int_eq(store_bpfrows_get(e.b.p, e.b.len, 64, &b), 0);
	ck_assert_uint_eq(b.nuid, NU);
	ck_assert_uint_eq(b.nproc, NP);
	ck_assert_mem_eq(b.uid, u, sizeof(u));
	ck_assert_mem_eq(b.proc, p, sizeof(p));
	store_bpfrows_release(&b);
	store_enc_release(&e);
	/* the smallest rows: every figure 0, rq_count the empty sum (the
	 * fuzzer's find: a bound of 6 bytes a row refused them) */
	memset(p, 0, sizeof(p));
	ck_assert_int_eq(store_bpfrows_put(&e, u, 0, p, 4), 0);
	ck_assert_uint_eq(e.b.len, 2 + 4 * 5);
	ck_assert_int_eq(store_bpfrows_get(e.b.p, e.b.len, 64, &b), 0);
	ck_assert_uint_eq(b.nproc, 4);
	ck_assert_mem_eq(b.proc, p, 4 * sizeof(*p));
	store_bpfrows_release(&b);
	store_enc_release(&e);
	/* the "other" uid and process take one byte for their key */
	store_bpfrows_put(&e, u, 1, NULL, 0);
	ck_assert_uint_eq(((const uint8_t *)e.b.p)[1], 0);
	store_enc_release(&e);
}
END_TEST

static void
mk_threads(struct window_bpf_thread *t, size_t nt)
{
	size_t i;

	memset(t, 0, nt * sizeof(*t));
	for (i = 0; i < nt; i++) {
		t[i].tid = i == 0 ? -1 : (int32_t)(5852 + 3 * i);
		t[i].tgid = i == 0 ? -1 : (int32_t)(5852 + 3 * (i / 4 * 4));
		t[i].uid = i == 0 ? UINT32_MAX : (uint32_t)(10000 + i / 5);
		t[i].starttime = i == 0 ? 0 : 2395733 + i * 11;
		t[i].oncpu_ns = 1000003ull * i;
		t[i].rq_ns = i % 2 ? 0 : 777777ull * i;
		t[i].rq_count = i % 2 ? 0 : i;
	}
	t[1].tid = INT32_MAX;
	t[1].tgid = INT32_MIN;
	t[2].uid = 0;
	t[2].starttime = UINT64_MAX;
	t[3].oncpu_ns = UINT64_MAX;
}

/* Version 3: version 2 and the uids' run-queue figures and the threads'
 * histograms; every cut refused, version 2 of the same rows without
 * them. */
START_TEST(test_bpfrows_v3_roundtrip)
{
	enum { NU = 6, NP = 9, NT = 41 };
	struct window_bpf_uid u[NU];
	struct window_bpf_proc p[NP];
	struct window_bpf_thread t[NT];
	struct store_bpfrows in = { u, NU, p, NP, t, NT }, b;
	struct store_enc e = { 0 };
	size_t i, k;

	mk_bpf(u, NU, p, NP);
	mk_threads(t, NT);
	for (i = 0; i < NU; i++) {
		u[i].rq_ns = 1000003ull * i;
		u[i].rq_hist[i % VITALS_BPF_RQ_SLOTS] = (uint32_t)(i * 7);
		u[i].rq_hist[VITALS_BPF_RQ_SLOTS - 1] = i == 3 ? UINT32_MAX : 0;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			u[i].rq_count += u[i].rq_hist[k];
		if (i == 2)
			u[i].rq_count += 5; /* counts without slots */
	}
	for (i = 0; i < NT; i++)
		if (t[i].rq_count)
			t[i].rq_hist[i % 9] = (uint32_t)t[i].rq_count;
	ck_assert_int_eq(store_bpfrows_put3(&e, &in), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 3, 64, &b), 0);
	ck_assert_uint_eq(b.nuid, NU);
	ck_assert_uint_eq(b.nthread, NT);
	ck_assert_mem_eq(b.uid, u, sizeof(u));
	ck_assert_mem_eq(b.proc, p, sizeof(p));
	ck_assert_mem_eq(b.thread, t, sizeof(t));
	store_bpfrows_release(&b);
	for (i = 0; i < e.b.len; i++)
		ck_assert_int_eq(store_bpfrows_get_v(e.b.p, i, 3, 64, &b),
		    -EBADMSG);
	store_enc_release(&e);
	/* version 2 of them: the same rows without the new figures */
	ck_assert_int_eq(store_bpfrows_put2(&e, &in), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 2, 64, &b), 0);
	for (i = 0; i < NU; i++)
		ck_assert_uint_eq(b.uid[i].rq_count, 0);
	for (i = 0; i < NT; i++) {
		ck_assert_uint_eq(b.thread[i].rq_count, t[i].rq_count);
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			ck_assert_uint_eq(b.thread[i].rq_hist[k], 0);
	}
	store_bpfrows_release(&b);
	store_enc_release(&e);
}
END_TEST

/* Version 2 (columns): every figure back, threads and flags too; version
 * 1 blobs still read through the same entry. */
START_TEST(test_bpfrows_v2_roundtrip)
{
	enum { NU = 6, NP = 33, NT = 41 };
	struct window_bpf_uid u[NU];
	struct window_bpf_proc p[NP];
	struct window_bpf_thread t[NT];
	struct store_bpfrows in = { u, NU, p, NP, t, NT }, b;
	struct store_enc e = { 0 };
	size_t i;

	mk_bpf(u, NU, p, NP);
	mk_threads(t, NT);
	for (i = 0; i < NP; i += 4)
		p[i].flags = WBPF_PROC_EXITED;
	ck_assert_int_eq(store_bpfrows_put2(&e, &in), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 2, 64, &b), 0);
	ck_assert_uint_eq(b.nuid, NU);
	ck_assert_uint_eq(b.nproc, NP);
	ck_assert_uint_eq(b.nthread, NT);
	ck_assert_mem_eq(b.uid, u, sizeof(u));
	ck_assert_mem_eq(b.proc, p, sizeof(p));
	ck_assert_mem_eq(b.thread, t, sizeof(t));
	store_bpfrows_release(&b);
	/* more rows than asked for, a version never written, every cut */
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 2, NT - 1, &b),
	    -EBADMSG);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 5, 64, &b),
	    -EBADMSG);
	/* a version-2 payload is not a version-3 one (its tail is missing) */
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 3, 64, &b),
	    -EBADMSG);
	for (i = 0; i < e.b.len; i++)
		ck_assert_int_eq(store_bpfrows_get_v(e.b.p, i, 2, 64, &b),
		    -EBADMSG);
	store_enc_release(&e);
	/* a flag no version defines */
	p[0].flags = 2;
	ck_assert_int_eq(store_bpfrows_put2(&e, &in), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 2, 64, &b),
	    -EBADMSG);
	store_enc_release(&e);
	/* version 1, as older stores hold it */
	p[0].flags = 0;
	for (i = 0; i < NP; i++)
		p[i].flags = 0;
	ck_assert_int_eq(store_bpfrows_put(&e, u, NU, p, NP), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 1, 64, &b), 0);
	ck_assert_uint_eq(b.nthread, 0);
	ck_assert_mem_eq(b.proc, p, sizeof(p));
	store_bpfrows_release(&b);
	store_enc_release(&e);
}
END_TEST

START_TEST(test_bpfrows_bad)
{
	enum { NU = 3, NP = 6 };
	struct window_bpf_uid u[NU];
	struct window_bpf_proc p[NP];
	struct store_enc e = { 0 };

	mk_bpf(u, NU, p, NP);
	ck_assert_int_eq(store_bpfrows_put(&e, u, NU, p, NP), 0);
	malformed(&e, bpf_get, 64);
	ck_assert_int_eq(bpf_get(e.b.p, e.b.len, NP - 1), -EBADMSG);
	store_enc_release(&e);
	lying_count(bpf_get);
	/* a uid past 32 bits */
	store_enc_u(&e, 1);
	store_enc_u(&e, (uint64_t)UINT32_MAX + 1);
	store_enc_bytes(&e, "\0\0\0\0", 4);
	ck_assert_int_eq(bpf_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* a tgid past 32 bits, more slots than the histogram has, a
	 * trailing empty slot the encoder would have left out */
	{
		static const struct {
			int64_t tgid;
			uint64_t slots, last;
		} bad[] = {
			{ (int64_t)INT32_MAX + 1, 1, 1 },
			{ INT32_MIN - 1LL, 1, 1 },
			{ 5, VITALS_BPF_RQ_SLOTS + 1, 1 },
			{ 5, 2, 0 },
		};
		unsigned i, k;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			store_enc_u(&e, 0);
			store_enc_u(&e, 1);
			store_enc_s(&e, bad[i].tgid);
			store_enc_s(&e, 100);
			store_enc_bytes(&e, "\0\0", 2);
			store_enc_u(&e, bad[i].slots << 1);
			store_enc_u(&e, 0); /* rq_count */
			for (k = 0; k + 1 < bad[i].slots; k++)
				store_enc_u(&e, 1);
			store_enc_u(&e, bad[i].last);
			ck_assert_msg(bpf_get(e.b.p, e.b.len, 64) == -EBADMSG,
			    "case %u", i);
			store_enc_release(&e);
		}
	}
}
END_TEST

/* Process i's figures made the sum of the thread rows of its tgid. */
static void
sum_threads(struct window_bpf_proc *p, const struct window_bpf_thread *t,
    size_t nt)
{
	size_t j;
	unsigned k;

	p->oncpu_ns = p->rq_ns = p->rq_count = 0;
	memset(p->rq_hist, 0, sizeof(p->rq_hist));
	for (j = 0; j < nt; j++) {
		if (t[j].tgid != p->tgid)
			continue;
		p->oncpu_ns += t[j].oncpu_ns;
		p->rq_ns += t[j].rq_ns;
		p->rq_count += t[j].rq_count;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			p->rq_hist[k] += t[j].rq_hist[k];
	}
}

/* Rows for version 4: threads of a few processes (histograms, counts that
 * are and are not their sums, big and zero figures), processes that are
 * their threads' sums (derive: the "other" rows too, a process of one
 * thread, one of three) and processes that are not (exited threads: one
 * figure off). */
static void
mk_v4(struct window_bpf_uid *u, size_t nu, struct window_bpf_proc *p, size_t np,
    struct window_bpf_thread *t, size_t nt)
{
	size_t i, k;

	mk_bpf(u, nu, p, np);
	mk_threads(t, nt);
	for (i = 0; i < nu; i++) {
		u[i].rq_ns = 1000003ull * i;
		u[i].rq_hist[(i * 5) % VITALS_BPF_RQ_SLOTS] = (uint32_t)(i * 7);
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			u[i].rq_count += u[i].rq_hist[k];
	}
	u[2].rq_count += 9; /* not the sum */
	for (i = 0; i < nt; i++) {
		for (k = i % 4; k < 6 + i % 13; k++)
			t[i].rq_hist[k] = (uint32_t)((i * 31 + k * 7) % 50);
		t[i].rq_hist[5 + i % 13] = 1 + (uint32_t)i;
		for (k = 0, t[i].rq_count = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			t[i].rq_count += t[i].rq_hist[k];
		if (i % 7 == 3)
			t[i].rq_count += 2; /* waits without slots */
		t[i].rq_ns = 987654321ull * (i + 1);
	}
	t[5].rq_hist[VITALS_BPF_RQ_SLOTS - 1] = 70000; /* every slot */
	t[5].rq_count += 70000;
	t[6].rq_ns = UINT64_MAX;
	t[7].oncpu_ns = 0;
	/* processes: tgids of mk_threads (5852 + 12 m; tgid −1 for the
	 * "other" rows) and one with no thread row */
	for (i = 0; i < np; i++) {
		p[i].tgid = i == 0 ? -1 : (int32_t)(5852 + 12 * (i - 1));
		p[i].flags = i % 4 == 2 ? WBPF_PROC_EXITED : 0;
		if (i % 3 != 2)
			sum_threads(&p[i], t, nt);
	}
	p[1].tgid = INT32_MAX; /* no thread row: its own figures */
	p[4].oncpu_ns += 1;    /* one figure off: its own figures */
	p[7].rq_hist[3] += 1;
}

/* Version 4: every figure back bit for bit, derived processes and not;
 * the derivation takes their figures out of the payload; every cut, a
 * byte more, any count over max refused; version 3 of the same rows still
 * reads. */
START_TEST(test_bpfrows_v4_roundtrip)
{
	enum { NU = 6, NP = 10, NT = 41 };
	struct window_bpf_uid u[NU];
	struct window_bpf_proc p[NP], q[NP];
	struct window_bpf_thread t[NT];
	struct store_bpfrows in = { u, NU, p, NP, t, NT }, b;
	struct store_enc e = { 0 }, e2 = { 0 };
	size_t i, nder = 0, k;

	mk_v4(u, NU, p, NP, t, NT);
	for (i = 0; i < NP; i++) {
		q[i] = p[i];
		sum_threads(&q[i], t, NT);
		nder += i != 1 && i % 3 != 2 && i != 4 && i != 7;
	}
	ck_assert_uint_ge(nder, 4);
	ck_assert_int_eq(store_bpfrows_put4(&e, &in), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 4, 64, &b), 0);
	ck_assert_uint_eq(b.nuid, NU);
	ck_assert_uint_eq(b.nproc, NP);
	ck_assert_uint_eq(b.nthread, NT);
	ck_assert_mem_eq(b.uid, u, sizeof(u));
	ck_assert_mem_eq(b.proc, p, sizeof(p));
	ck_assert_mem_eq(b.thread, t, sizeof(t));
	store_bpfrows_release(&b);
	malformed(&e, bpf4_get, 64);
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, NT - 1), -EBADMSG);
	lying_count(bpf4_get);

	/* the derived processes' figures are not in the payload: one ns off
	 * each and they are written, the payload longer by at least their
	 * lengths (one byte each) and their figures' bytes */
	for (i = 0; i < NP; i++)
		if (memcmp(p[i].rq_hist, q[i].rq_hist, sizeof(q[i].rq_hist)) ==
			0 &&
		    p[i].oncpu_ns == q[i].oncpu_ns && i != 1)
			p[i].oncpu_ns += 1;
	ck_assert_int_eq(store_bpfrows_put4(&e2, &in), 0);
	ck_assert_uint_ge(e2.b.len, e.b.len + nder * (2 + 2 + 1));
	ck_assert_int_eq(store_bpfrows_get_v(e2.b.p, e2.b.len, 4, 64, &b), 0);
	ck_assert_mem_eq(b.proc, p, sizeof(p));
	store_bpfrows_release(&b);
	store_enc_release(&e2);

	/* version 3 of the same rows: still read, the same rows */
	ck_assert_int_eq(store_bpfrows_put3(&e2, &in), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e2.b.p, e2.b.len, 3, 64, &b), 0);
	ck_assert_mem_eq(b.uid, u, sizeof(u));
	ck_assert_mem_eq(b.proc, p, sizeof(p));
	ck_assert_mem_eq(b.thread, t, sizeof(t));
	store_bpfrows_release(&b);
	/* and it is not a version-4 payload, nor the other way round */
	ck_assert_int_eq(bpf4_get(e2.b.p, e2.b.len, 64), -EBADMSG);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 3, 64, &b),
	    -EBADMSG);
	store_enc_release(&e2);
	store_enc_release(&e);

	/* nothing at all, and figures of every width */
	ck_assert_int_eq(store_bpfrows_put4(&e,
			     &(struct store_bpfrows){ NULL, 0, NULL, 0, NULL,
				 0 }),
	    0);
	ck_assert_uint_eq(e.b.len, 3);
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), 0);
	store_enc_release(&e);
	for (k = 0; k < 64; k++)
		t[k % NT].oncpu_ns = (uint64_t)1 << k | (k & 1);
	ck_assert_int_eq(store_bpfrows_put4(&e, &in), 0);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 4, 64, &b), 0);
	ck_assert_mem_eq(b.thread, t, sizeof(t));
	store_bpfrows_release(&b);
	store_enc_release(&e);
}
END_TEST

/* A hand-made version-4 payload: no uids; one process (tgid 7, flags
 * code pf; when not derived, its figures zero); nt (≤ 8) threads of tgid
 * 7, each oncpu_ns on[j] (in 8 bytes when pad8, else the shortest) and a
 * histogram of one slot, slot, or none. */
static void
v4_payload(struct store_enc *e, uint64_t pf, size_t nt, const uint64_t *on,
    uint32_t slot, bool pad8)
{
	uint8_t b, len[8];
	size_t j;
	unsigned k;

	store_enc_u(e, 0);
	store_enc_u(e, 1);
	store_enc_s(e, 7);
	store_enc_s(e, 100);
	store_enc_u(e, pf);
	if (!(pf & 1)) {
		store_enc_bytes(e, "\0\0", 2); /* lengths 0: oncpu, rq_ns */
		store_enc_u(e, 1);	       /* no slots, count their sum */
	}
	store_enc_u(e, nt);
	for (j = 0; j < nt; j++)
		store_enc_s(e, j ? 1 : 7); /* tids 7, 8, … */
	for (j = 0; j < nt; j++)
		store_enc_u(e,
		    j ? 1 : 0); /* tgid: its tid, then the previous */
	for (j = 0; j < nt; j++)
		store_enc_s(e, 0);
	for (j = 0; j < nt; j++)
		store_enc_s(e, 0);
	for (j = 0; j < nt; j++) {
		len[j] = 8;
		while (!pad8 && len[j] && !(on[j] >> 8 * (len[j] - 1)))
			len[j]--;
		store_enc_bytes(e, &len[j], 1);
	}
	for (k = 0; k < 8; k++)
		for (j = 0; j < nt; j++)
			if (len[j] > k) {
				b = (uint8_t)(on[j] >> 8 * (len[j] - 1 - k));
				store_enc_bytes(e, &b, 1);
			}
	store_enc_bytes(e, "\0\0\0\0\0\0\0\0", nt); /* rq_ns 0 */
	for (j = 0; j < nt; j++)
		store_enc_u(e, slot ? 1 << 1 | 1 : 1);
	for (j = 0; j < nt && slot; j++)
		store_enc_u(e, slot);
}

/* Version 4's own refusals, each beside the payload one change away that
 * decodes (so the refusal is for that change): a flag bit no version
 * defines, a derived process without thread rows, a sum that overflows
 * (on-CPU ns, a histogram slot), a figure's length past 8 bytes or with a
 * leading zero byte, a thread's tgid past 32 bits. */
START_TEST(test_bpfrows_v4_bad)
{
	static const uint64_t big[2] = { UINT64_MAX - 1, 1 },
			      over[2] = { UINT64_MAX, 1 };
	struct store_enc e = { 0 };
	struct store_bpfrows b;

	/* flags: exited (2) and derived (1) read; 4 is no flag */
	v4_payload(&e, 2, 2, big, 0, false);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 4, 64, &b), 0);
	ck_assert_uint_eq(b.proc[0].flags, WBPF_PROC_EXITED);
	ck_assert_uint_eq(b.proc[0].oncpu_ns, 0);
	store_bpfrows_release(&b);
	store_enc_release(&e);
	v4_payload(&e, 3, 2, big, 0, false);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 4, 64, &b), 0);
	ck_assert_uint_eq(b.proc[0].flags, WBPF_PROC_EXITED);
	ck_assert_uint_eq(b.proc[0].oncpu_ns, UINT64_MAX);
	ck_assert_int_eq(b.thread[1].tgid, 7);
	store_bpfrows_release(&b);
	store_enc_release(&e);
	v4_payload(&e, 4, 2, big, 0, false);
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	/* derived without thread rows */
	v4_payload(&e, 1, 0, big, 0, false);
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	v4_payload(&e, 0, 0, big, 0, false);
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), 0);
	store_enc_release(&e);
	/* overflows: on-CPU ns; a slot (two threads of 2^31) */
	v4_payload(&e, 1, 2, over, 0, false);
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	v4_payload(&e, 0, 2, over, 0, false); /* not derived: no sum */
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), 0);
	store_enc_release(&e);
	v4_payload(&e, 1, 2, big, 1u << 31, false);
	ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), -EBADMSG);
	store_enc_release(&e);
	v4_payload(&e, 1, 2, big, (1u << 31) - 1, false);
	ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 4, 64, &b), 0);
	ck_assert_uint_eq(b.proc[0].rq_hist[0], UINT32_MAX - 1);
	ck_assert_uint_eq(b.proc[0].rq_count, UINT32_MAX - 1);
	store_bpfrows_release(&b);
	store_enc_release(&e);

	/* a figure's length: 9 bytes; a leading zero byte (1 in 8 bytes) */
	{
		uint8_t *p;
		size_t n;

		v4_payload(&e, 0, 1, big, 0, false);
		ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), 0);
		p = (uint8_t *)e.b.p;
		n = e.b.len;
		/* the thread's oncpu_ns length sits 8 + 1 + 1 bytes from
		 * the end (planes, rq_ns length, word) */
		ck_assert_uint_eq(p[n - 11], 8);
		p[n - 11] = 9;
		ck_assert_int_eq(bpf4_get(p, n, 64), -EBADMSG);
		store_enc_release(&e);
		v4_payload(&e, 0, 2, over, 0, true);
		ck_assert_int_eq(bpf4_get(e.b.p, e.b.len, 64), -EBADMSG);
		store_enc_release(&e);
	}
	/* a thread's tgid past 32 bits: code 2 + zigzag(tid − tgid) */
	{
		static const int64_t off[] = { (int64_t)7 - INT32_MIN + 1,
			-((int64_t)INT32_MAX - 7 + 1), (int64_t)1 << 33 };
		unsigned i;

		for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
			store_enc_u(&e, 0);
			store_enc_u(&e, 0);
			store_enc_u(&e, 1);
			store_enc_s(&e, 7);
			store_enc_u(&e,
			    2 +
				((uint64_t)off[i] << 1 ^
				    (uint64_t)(off[i] >> 63)));
			store_enc_s(&e, 0);
			store_enc_s(&e, 0);
			store_enc_bytes(&e, "\0\0", 2);
			store_enc_u(&e, 1);
			ck_assert_msg(bpf4_get(e.b.p, e.b.len, 64) == -EBADMSG,
			    "case %u", i);
			store_enc_release(&e);
		}
		/* the same payload with a tgid in range reads */
		store_enc_u(&e, 0);
		store_enc_u(&e, 0);
		store_enc_u(&e, 1);
		store_enc_s(&e, 7);
		store_enc_u(&e, 2 + (5 << 1));
		store_enc_s(&e, 0);
		store_enc_s(&e, 0);
		store_enc_bytes(&e, "\0\0", 2);
		store_enc_u(&e, 1);
		ck_assert_int_eq(store_bpfrows_get_v(e.b.p, e.b.len, 4, 64, &b),
		    0);
		ck_assert_int_eq(b.thread[0].tgid, 2);
		store_bpfrows_release(&b);
		store_enc_release(&e);
	}
}
END_TEST

/* A thread's tid − tgid of INT64_MIN, a uid step of INT64_MAX after a
 * uid above 0: refused before any arithmetic on them (fuzz_store_blob's
 * find in version 2, under UBSan a signed overflow), versions 2 and 4;
 * the same payloads with steps in range read. */
START_TEST(test_bpfrows_steps_overflow)
{
	static const struct {
		unsigned v;
		int64_t off, uid2;
		int ok;
	} c[] = {
		{ 2, INT64_MIN, 1, 0 },
		{ 2, 0, INT64_MAX, 0 },
		{ 2, 3, 1, 1 },
		{ 4, INT64_MIN, 1, 0 },
		{ 4, 0, INT64_MAX, 0 },
		{ 4, 3, 1, 1 },
	};
	struct store_enc e = { 0 };
	struct store_bpfrows b;
	unsigned i, j;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		store_enc_u(&e, 0); /* no uids, no processes */
		store_enc_u(&e, 0);
		store_enc_u(&e, 2);
		store_enc_s(&e, 100); /* tids 100, 101 */
		store_enc_s(&e, 1);
		for (j = 0; j < 2; j++) {
			int64_t off = j ? 0 : c[i].off;

			/* version 4: code UINT64_MAX is tid − tgid =
			 * INT64_MIN + 1 */
			if (c[i].v == 2)
				store_enc_s(&e, off);
			else if (off == INT64_MIN)
				store_enc_u(&e, UINT64_MAX);
			else
				store_enc_u(&e,
				    off ? 2 + ((uint64_t)off << 1) : 0);
		}
		store_enc_s(&e, 5); /* uids 5, 5 + uid2 */
		store_enc_s(&e, c[i].uid2);
		store_enc_s(&e, 0);
		store_enc_s(&e, 0);
		if (c[i].v == 2) {
			store_enc_bytes(&e, "\0\0\0\0\0\0", 6);
		} else {
			store_enc_bytes(&e, "\0\0\0\0", 4); /* lengths 0 */
			store_enc_u(&e, 1);
			store_enc_u(&e, 1);
		}
		ck_assert_msg(store_bpfrows_get_v(e.b.p, e.b.len, c[i].v, 64,
				  &b) == (c[i].ok ? 0 : -EBADMSG),
		    "case %u", i);
		if (c[i].ok) {
			ck_assert_int_eq(b.thread[0].tgid, 97);
			ck_assert_uint_eq(b.thread[1].uid, 6);
			store_bpfrows_release(&b);
		}
		store_enc_release(&e);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("store_parts_codec");
	TCase *tc = tcase_create("parts");
	SRunner *sr;
	int nf;

	tcase_add_loop_test(tc, test_kv_roundtrip, 0, 2);
	tcase_add_loop_test(tc, test_kv_bad, 0, 2);
	tcase_add_test(tc, test_kv_versions);
	tcase_add_loop_test(tc, test_kv_fuzz, 0, 2);
	tcase_add_test(tc, test_sys_roundtrip);
	tcase_add_test(tc, test_sys_bad);
	tcase_add_test(tc, test_bpfrows_roundtrip);
	tcase_add_test(tc, test_bpfrows_v2_roundtrip);
	tcase_add_test(tc, test_bpfrows_v3_roundtrip);
	tcase_add_test(tc, test_bpfrows_bad);
	tcase_add_test(tc, test_bpfrows_v4_roundtrip);
	tcase_add_test(tc, test_bpfrows_v4_bad);
	tcase_add_test(tc, test_bpfrows_steps_overflow);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
