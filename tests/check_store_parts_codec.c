/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The payloads of a window's other parts (store_kv.c, store_sys.c,
 * store_bpfrows.c; the BPF rows' keys alone, store_bpfkeys.c, against the
 * full decoder): every figure back bit for bit, the NULL of an empty
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

/* ------------------------------------------------------- bpfrows keys */

/* A little PRNG of its own: the same rows on every run. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A figure of a random width: 0, a byte, …, all 64 bits. */
static uint64_t
rnd_fig(uint64_t *s)
{
	unsigned bits = (unsigned)(rnd(s) % 65);

	return bits == 0 ? 0 :
	    bits == 64	 ? rnd(s) :
			   rnd(s) & (((uint64_t)1 << bits) - 1);
}

/* A histogram of random length (trailing slots empty), counts small,
 * middling or up to 2³² − 1; rq_count its sum or not. */
static void
rnd_hist(uint64_t *s, uint32_t *h, uint64_t *count, bool big)
{
	unsigned len = (unsigned)(rnd(s) % (VITALS_BPF_RQ_SLOTS + 1)), k;
	uint64_t r;

	memset(h, 0, VITALS_BPF_RQ_SLOTS * sizeof(*h));
	for (k = 0, *count = 0; k < len; k++) {
		r = rnd(s);
		h[k] = r % 4 == 0 ? 0 :
		    r % 4 == 1	  ? (uint32_t)(r >> 8) % 100 :
		    r % 4 == 2	  ? (uint32_t)(r >> 8) % 70000 :
		    big		  ? (uint32_t)(r >> 8) :
				    (uint32_t)(r >> 8) % 1000;
		if (k + 1 == len && h[k] == 0)
			h[k] = 1;
		*count += h[k];
	}
	if (rnd(s) % 5 == 0)
		*count += rnd(s) % 3 ? 1 + rnd(s) % 9 : rnd_fig(s);
}

/* Process p's figures made its thread rows' sums (sum_threads): true
 * when it has thread rows and no sum overflows (the encoder derives it). */
static bool
sum_fits(struct window_bpf_proc *p, const struct window_bpf_thread *t,
    size_t nt)
{
	uint64_t on = 0, rq = 0, c = 0;
	uint32_t h[VITALS_BPF_RQ_SLOTS] = { 0 };
	bool any = false, fits = true;
	size_t j;
	unsigned k;

	for (j = 0; j < nt; j++) {
		if (t[j].tgid != p->tgid)
			continue;
		any = true;
		fits = fits &&
		    !__builtin_add_overflow(on, t[j].oncpu_ns, &on) &&
		    !__builtin_add_overflow(rq, t[j].rq_ns, &rq) &&
		    !__builtin_add_overflow(c, t[j].rq_count, &c);
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			fits = fits &&
			    !__builtin_add_overflow(h[k], t[j].rq_hist[k],
				&h[k]);
	}
	sum_threads(p, t, nt);
	return any && fits;
}

/*
 * Random rows of every kind: up to nu uids; processes of ascending (or,
 * one seed in four, shuffled) tgids, each with 0-4 thread rows, some
 * exited, some their threads' sums (derived by the encoder), some one
 * figure off; threads of no process row; the "other" process and thread
 * rows, the process often their sum. Counts into *ret_*.
 */
static void
rnd_rows(uint64_t seed, size_t np_max, struct store_bpfrows *b, size_t *ret_der,
    size_t *ret_other)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1, r;
	size_t np = 1 + rnd(&s) % np_max, nt = 0, i, j, n;
	struct window_bpf_proc *p = calloc(np + 1, sizeof(*p));
	struct window_bpf_thread *t = calloc(5 * (np + 2), sizeof(*t));
	struct window_bpf_uid *u = calloc(4, sizeof(*u));
	bool big = rnd(&s) % 4 == 0;
	int32_t tgid = 1 + (int32_t)(rnd(&s) % 1000), tid;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(u);
	b->nuid = rnd(&s) % 4;
	for (i = 0; i < b->nuid; i++) {
		u[i].uid = i == 0 ? UINT32_MAX : (uint32_t)rnd(&s);
		u[i].oncpu_ns = rnd_fig(&s);
		u[i].exited_ns = rnd_fig(&s);
		u[i].exited_tasks = rnd(&s) % 50;
		u[i].rq_ns = rnd_fig(&s);
		rnd_hist(&s, u[i].rq_hist, &u[i].rq_count, true);
	}
	for (i = 0; i < np; i++) {
		p[i].tgid = tgid;
		p[i].starttime = rnd(&s) % 3 ? 1000 + rnd(&s) % 100000 :
					       rnd_fig(&s);
		p[i].flags = rnd(&s) % 4 == 0 ? WBPF_PROC_EXITED : 0;
		n = rnd(&s) % 5;
		for (j = 0, tid = tgid; j < n; j++, tid += 1 + rnd(&s) % 3) {
			t[nt].tid = tid;
			t[nt].tgid = tgid;
			t[nt].uid = rnd(&s) % 3 ? 10000 + (uint32_t)(i % 7) :
						  (uint32_t)rnd(&s);
			t[nt].starttime = p[i].starttime + j;
			t[nt].oncpu_ns = rnd(&s) % 4 ?
			    rnd_fig(&s) % 2000000000 :
			    rnd_fig(&s);
			t[nt].rq_ns = rnd_fig(&s);
			rnd_hist(&s, t[nt].rq_hist, &t[nt].rq_count, big);
			nt++;
		}
		/* a thread of no process row here (its process exited in
		 * an earlier window) */
		if (rnd(&s) % 6 == 0) {
			t[nt] = t[nt ? nt - 1 : 0];
			t[nt].tid = t[nt].tgid = tid + 1;
			nt++;
			tid += 2;
		}
		tgid = tid + 1 + (int32_t)(rnd(&s) % 50);
	}
	/* the "other" rows */
	if (rnd(&s) % 3) {
		t[nt] = (struct window_bpf_thread){ .tid = -1,
			.tgid = -1,
			.uid = UINT32_MAX,
			.oncpu_ns = rnd_fig(&s),
			.rq_ns = rnd(&s) % 1000000 };
		rnd_hist(&s, t[nt].rq_hist, &t[nt].rq_count, false);
		nt++;
		p[np] = (struct window_bpf_proc){ .tgid = -1 };
		(*ret_other)++;
		np++;
	}
	for (i = 0; i < np; i++) {
		r = rnd(&s) % 8;
		if (r < 5) { /* its threads' sum: derived when it fits */
			*ret_der += sum_fits(&p[i], t, nt) && r < 4;
			if (r == 4) /* one figure off */
				p[i].rq_ns++;
		} else {
			p[i].oncpu_ns = rnd_fig(&s);
			p[i].rq_ns = rnd_fig(&s);
			rnd_hist(&s, p[i].rq_hist, &p[i].rq_count, big);
		}
	}
	if (seed % 4 == 3) /* an order of their own */
		for (i = np; i > 1; i--) {
			struct window_bpf_proc x = p[i - 1];

			j = rnd(&s) % i;
			p[i - 1] = p[j];
			p[j] = x;
		}
	*b = (struct store_bpfrows){ u, b->nuid, p, np, t, nt };
}

static void
rows_free(struct store_bpfrows *b)
{
	free(b->uid);
	free(b->proc);
	free(b->thread);
}

/* The keys decoder gives the full decoder's rows' keys, or refuses what
 * it refuses: the same answer for buf[0..len) in version v. (Called a
 * million times: check's assertions, which write to the log each time,
 * only on a difference.) */
static int
keys_agree(const void *buf, size_t len, unsigned v, size_t max)
{
	struct store_bpfrows b;
	struct store_bpfkeys k;
	int rf = store_bpfrows_get_v(buf, len, v, max, &b);
	int rk = store_bpfrows_keys(buf, len, v, max, &k);
	size_t i;

	if (rk != rf)
		ck_abort_msg("keys %d, full %d (len %zu)", rk, rf, len);
	if (rf < 0)
		return rf;
	if (k.nproc != b.nproc || k.nthread != b.nthread)
		ck_abort_msg("rows: keys %zu %zu, full %zu %zu", k.nproc,
		    k.nthread, b.nproc, b.nthread);
	for (i = 0; i < b.nproc; i++)
		if (k.proc[i].id != b.proc[i].tgid ||
		    k.proc[i].tgid != b.proc[i].tgid ||
		    k.proc[i].starttime != b.proc[i].starttime ||
		    k.proc[i].oncpu_ns != b.proc[i].oncpu_ns)
			ck_abort_msg("process row %zu", i);
	for (i = 0; i < b.nthread; i++)
		if (k.thread[i].id != b.thread[i].tid ||
		    k.thread[i].tgid != b.thread[i].tgid ||
		    k.thread[i].starttime != b.thread[i].starttime ||
		    k.thread[i].oncpu_ns != b.thread[i].oncpu_ns)
			ck_abort_msg("thread row %zu", i);
	store_bpfrows_release(&b);
	store_bpfkeys_release(&k);
	return 0;
}

/*
 * The keys alone (the span read's decoder): on random rows of every kind,
 * the full decoder's keys and on-CPU times, derived processes' sums and
 * "other" rows included, for each version; and on every cut, a byte
 * more and every byte changed three ways, refused exactly when the full
 * decoder refuses.
 */
START_TEST(test_bpfkeys_random)
{
	size_t der = 0, other = 0, nrows = 0, refused = 0, tried = 0, n, i;
	struct store_bpfrows in;
	struct store_enc e = { 0 };
	uint8_t *copy;
	uint64_t seed;
	unsigned v;

	for (seed = 0; seed < 200; seed++) {
		rnd_rows(seed, seed % 10 == 0 ? 400 : 12, &in, &der, &other);
		nrows += in.nproc + in.nthread;
		ck_assert_int_eq(store_bpfrows_put4(&e, &in), 0);
		ck_assert_int_eq(keys_agree(e.b.p, e.b.len, 4, 1 << 20), 0);
		/* the bound counts rows of each kind as the full one does */
		n = in.nproc > in.nthread ? in.nproc : in.nthread;
		n = n > in.nuid ? n : in.nuid;
		ck_assert_int_eq(keys_agree(e.b.p, e.b.len, 4, n), 0);
		ck_assert_int_eq(keys_agree(e.b.p, e.b.len, 4, n - 1),
		    -EBADMSG);
		if (seed % 3 == 1 && seed % 10 != 0) { /* cuts, changes */
			copy = malloc(e.b.len + 1);
			ck_assert_ptr_nonnull(copy);
			for (i = 0; i < e.b.len; i++)
				refused += keys_agree(e.b.p, i, 4, 1 << 20) < 0;
			tried += 5 * e.b.len + 1;
			memcpy(copy, e.b.p, e.b.len);
			copy[e.b.len] = (uint8_t)seed;
			refused += keys_agree(copy, e.b.len + 1, 4, 1 << 20) <
			    0;
			for (i = 0; i < e.b.len; i++) {
				static const uint8_t x[] = { 0x5a, 0x80, 0x01 };

				for (v = 0; v < 3; v++) {
					memcpy(copy, e.b.p, e.b.len);
					copy[i] ^= x[v];
					refused += keys_agree(copy, e.b.len, 4,
						       1 << 20) < 0;
				}
				memcpy(copy, e.b.p, e.b.len);
				copy[i] = 0;
				refused += keys_agree(copy, e.b.len, 4,
					       1 << 20) < 0;
			}
			free(copy);
		}
		store_enc_release(&e);
		/* the older versions: decoded whole, the same keys */
		ck_assert_int_eq(store_bpfrows_put3(&e, &in), 0);
		ck_assert_int_eq(keys_agree(e.b.p, e.b.len, 3, 1 << 20), 0);
		ck_assert_int_eq(keys_agree(e.b.p, e.b.len, 4, 1 << 20),
		    -EBADMSG);
		store_enc_release(&e);
		ck_assert_int_eq(store_bpfrows_put2(&e, &in), 0);
		ck_assert_int_eq(keys_agree(e.b.p, e.b.len, 2, 1 << 20), 0);
		store_enc_release(&e);
		for (i = 0; i < in.nproc; i++)
			in.proc[i].flags = 0;
		ck_assert_int_eq(store_bpfrows_put(&e, in.uid, in.nuid, in.proc,
				     in.nproc),
		    0);
		ck_assert_int_eq(keys_agree(e.b.p, e.b.len, 1, 1 << 20), 0);
		store_enc_release(&e);
		ck_assert_int_eq(keys_agree("", 0, 5, 1 << 20), -EBADMSG);
		rows_free(&in);
	}
	/* what the rows were: derived processes, "other" rows, refusals */
	ck_assert_uint_ge(der, 1000);
	ck_assert_uint_ge(other, 100);
	ck_assert_uint_ge(nrows, 10000);
	ck_assert_uint_ge(refused, tried / 2);
	ck_assert_uint_lt(refused, tried);
}
END_TEST

/* An N column of n figures (store_bpfrows4.c's put_nums). */
static void
put_n(struct store_enc *e, const uint64_t *v, size_t n)
{
	uint8_t len[8], b;
	size_t j;
	unsigned k;

	for (j = 0; j < n; j++) {
		for (len[j] = 0; len[j] < 8 && v[j] >> 8 * len[j]; len[j]++)
			;
		store_enc_bytes(e, &len[j], 1);
	}
	for (k = 0; k < 8; k++)
		for (j = 0; j < n; j++)
			if (len[j] > k) {
				b = (uint8_t)(v[j] >> 8 * (len[j] - 1 - k));
				store_enc_bytes(e, &b, 1);
			}
}

#define SUM UINT64_MAX /* v4_sums: rq_count is the slots' sum */

/* A version-4 payload by hand: no uids; one process (tgid 7), derived
 * (pf 1) or with figures of its own, all 0 (pf 0); nt (≤ 8) threads of
 * tgid 7, thread j with oncpu_ns on[j], rq_ns rq[j], rq_count cnt[j]
 * (SUM: its slots' sum) and slots 0 and 1, h0[j] and h1[j]. */
static void
v4_sums(struct store_enc *e, uint64_t pf, size_t nt, const uint64_t *on,
    const uint64_t *rq, const uint64_t *cnt, const uint32_t *h0,
    const uint32_t *h1)
{
	unsigned len[8];
	size_t j;

	store_enc_u(e, 0);
	store_enc_u(e, 1);
	store_enc_s(e, 7);
	store_enc_s(e, 100);
	store_enc_u(e, pf);
	if (!(pf & 1)) {
		store_enc_bytes(e, "\0\0", 2);
		store_enc_u(e, 1);
	}
	store_enc_u(e, nt);
	for (j = 0; j < nt; j++)
		store_enc_s(e, j ? 1 : 7);
	for (j = 0; j < nt; j++)
		store_enc_u(e, j ? 1 : 0);
	for (j = 0; j < nt; j++)
		store_enc_s(e, 0);
	for (j = 0; j < nt; j++)
		store_enc_s(e, 0);
	put_n(e, on, nt);
	put_n(e, rq, nt);
	for (j = 0; j < nt; j++) {
		len[j] = h1[j] ? 2 : h0[j] ? 1 : 0;
		store_enc_u(e, len[j] << 1 | (cnt[j] == SUM));
	}
	for (j = 0; j < nt; j++)
		if (cnt[j] != SUM)
			store_enc_u(e, cnt[j]);
	for (j = 0; j < nt; j++)
		if (len[j] > 0)
			store_enc_u(e, h0[j]);
	for (j = 0; j < nt; j++)
		if (len[j] > 1)
			store_enc_u(e, h1[j]);
}

/*
 * A derived process's sums, which the keys decoder checks without
 * keeping the run-queue figures: an overflow of its threads' on-CPU,
 * run-queue time, run-queue count (written or the slots' sum) or of a
 * slot is refused, as the full decoder refuses it, each beside the same
 * payload not derived (read) or one less (read); slots whose sum passes
 * 2³² − 1 only across slots read (the full decoder decides those).
 */
START_TEST(test_bpfkeys_sums)
{
	static const uint64_t on[] = { 1, 2 }, rq[] = { 3, 4 },
			      sums[] = { SUM, SUM },
			      bigon[] = { UINT64_MAX, 1 },
			      cnt_over[] = { UINT64_MAX - 1, 2 },
			      cnt_max[] = { UINT64_MAX - 1, 1 },
			      cnt_mix[] = { SUM, UINT64_MAX - 4 },
			      cnt_mix_max[] = { SUM, UINT64_MAX - 5 };
	static const uint32_t h5[] = { 5, 6 }, none[] = { 0, 0 },
			      half[] = { 1u << 31, 1u << 31 },
			      half1[] = { (1u << 31) - 1, (1u << 31) - 1 },
			      h0x[] = { 1u << 31, 0 }, h1x[] = { 0, 1u << 31 };
	static const struct {
		uint64_t pf;
		size_t nt;
		const uint64_t *on, *rq, *cnt;
		const uint32_t *h0, *h1;
		int want;
	} c[] = {
		{ 1, 2, on, rq, sums, h5, none, 0 },
		/* on-CPU time */
		{ 1, 2, bigon, rq, sums, h5, none, -EBADMSG },
		{ 0, 2, bigon, rq, sums, h5, none, 0 },
		/* run-queue time */
		{ 1, 2, on, bigon, sums, h5, none, -EBADMSG },
		{ 0, 2, on, bigon, sums, h5, none, 0 },
		/* run-queue counts written, and one the slots' sum */
		{ 1, 2, on, rq, cnt_over, h5, none, -EBADMSG },
		{ 1, 2, on, rq, cnt_max, h5, none, 0 },
		{ 0, 2, on, rq, cnt_over, h5, none, 0 },
		{ 1, 2, on, rq, cnt_mix, h5, none, -EBADMSG },
		{ 1, 2, on, rq, cnt_mix_max, h5, none, 0 },
		/* a slot: 2³¹ twice; 2³¹ − 1 twice */
		{ 1, 2, on, rq, sums, half, none, -EBADMSG },
		{ 0, 2, on, rq, sums, half, none, 0 },
		{ 1, 2, on, rq, sums, half1, none, 0 },
		/* 2³¹ in slot 0 and in slot 1: 2³² over both, no slot over */
		{ 1, 2, on, rq, sums, h0x, h1x, 0 },
		{ 1, 1, on, rq, sums, half, half, 0 },
		/* derived without a thread row */
		{ 1, 0, on, rq, sums, h5, none, -EBADMSG },
		{ 0, 0, on, rq, sums, h5, none, 0 },
	};
	struct store_enc e = { 0 };
	struct store_bpfkeys k;
	unsigned i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		v4_sums(&e, c[i].pf, c[i].nt, c[i].on, c[i].rq, c[i].cnt,
		    c[i].h0, c[i].h1);
		ck_assert_msg(keys_agree(e.b.p, e.b.len, 4, 64) == c[i].want,
		    "case %u", i);
		if (c[i].want == 0) {
			ck_assert_int_eq(store_bpfrows_keys(e.b.p, e.b.len, 4,
					     64, &k),
			    0);
			ck_assert_uint_eq(k.nproc, 1);
			ck_assert_uint_eq(k.nthread, c[i].nt);
			ck_assert_uint_eq(k.proc[0].oncpu_ns,
			    c[i].pf ?
				c[i].on[0] + (c[i].nt > 1 ? c[i].on[1] : 0) :
				0);
			store_bpfkeys_release(&k);
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
	tcase_add_test(tc, test_bpfkeys_random);
	tcase_add_test(tc, test_bpfkeys_sums);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
