/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The blob encoding (store/store_codec.c): varints and zigzag at their
 * edges, strings, doubles bit for bit, and the frame against every
 * truncation and every single-bit flip. The task rows' payloads are
 * check_store_tasks.c's.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_codec.h"

static size_t
enc_len_u(uint64_t v)
{
	struct store_enc e = { 0 };
	size_t n;

	store_enc_u(&e, v);
	ck_assert_int_eq(e.err, 0);
	n = e.b.len;
	store_enc_release(&e);
	return n;
}

START_TEST(test_varint_edges)
{
	static const uint64_t v[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX,
		(uint64_t)1 << 63, UINT64_MAX - 1, UINT64_MAX };
	static const size_t len[] = { 1, 1, 1, 2, 2, 3, 5, 10, 10, 10 };
	struct store_enc e = { 0 };
	struct store_dec d;
	unsigned i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_uint_eq(enc_len_u(v[i]), len[i]);
		store_enc_u(&e, v[i]);
	}
	store_dec_init(&d, e.b.p, e.b.len);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_uint_eq(store_dec_u(&d), v[i]);
	ck_assert_int_eq(store_dec_end(&d), 0);
	store_enc_release(&e);
}
END_TEST

START_TEST(test_zigzag_edges)
{
	static const int64_t v[] = { 0, -1, 1, -64, 63, -65, 64, INT32_MIN,
		INT64_MAX, INT64_MIN };
	struct store_enc e = { 0 };
	struct store_dec d;
	unsigned i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		store_enc_s(&e, v[i]);
	/* small magnitudes of either sign take one byte */
	ck_assert_uint_eq((uint8_t)e.b.p[1], 1); /* -1 → 1 */
	ck_assert_uint_eq((uint8_t)e.b.p[2], 2); /* 1 → 2 */
	store_dec_init(&d, e.b.p, e.b.len);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_int_eq(store_dec_s(&d), v[i]);
	ck_assert_int_eq(store_dec_end(&d), 0);
	store_enc_release(&e);
}
END_TEST

/* Truncated, overlong and over-64-bit varints are errors, not values. */
START_TEST(test_varint_bad)
{
	static const uint8_t trunc[] = { 0x80 };
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x00 };
	static const uint8_t over64[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0x02 };
	static const uint8_t max64[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0x01 };
	struct store_dec d;

	store_dec_init(&d, trunc, sizeof(trunc));
	ck_assert_uint_eq(store_dec_u(&d), 0);
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	store_dec_init(&d, eleven, sizeof(eleven));
	(void)store_dec_u(&d);
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	store_dec_init(&d, over64, sizeof(over64));
	(void)store_dec_u(&d);
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	store_dec_init(&d, max64, sizeof(max64));
	ck_assert_uint_eq(store_dec_u(&d), UINT64_MAX);
	ck_assert_int_eq(store_dec_end(&d), 0);
	/* an error sticks: later reads return nothing */
	store_dec_init(&d, trunc, sizeof(trunc));
	(void)store_dec_u(&d);
	ck_assert_uint_eq(store_dec_u(&d), 0);
	ck_assert_ptr_null(store_dec_bytes(&d, 0));
	/* a bound is enforced */
	store_dec_init(&d, max64, sizeof(max64));
	ck_assert_uint_eq(store_dec_u_max(&d, 1000), 0);
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
}
END_TEST

START_TEST(test_strings_and_doubles)
{
	struct store_enc e = { 0 };
	struct store_dec d;
	char buf[8], big[64];
	double nan_in = nan(""), v;

	store_enc_str(&e, "surfacef");
	store_enc_str(&e, "");
	store_enc_f64(&e, -0.0);
	store_enc_f64(&e, 1.0 / 3);
	store_enc_f64(&e, nan_in);
	store_dec_init(&d, e.b.p, e.b.len);
	store_dec_str(&d, big, sizeof(big));
	ck_assert_str_eq(big, "surfacef");
	store_dec_str(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	v = store_dec_f64(&d);
	ck_assert(v == 0 && signbit(v)); /* bit for bit */
	ck_assert(store_dec_f64(&d) == 1.0 / 3);
	ck_assert(isnan(store_dec_f64(&d)));
	ck_assert_int_eq(store_dec_end(&d), 0);
	/* 8 bytes do not fit buf[8] with its NUL */
	store_dec_init(&d, e.b.p, e.b.len);
	store_dec_str(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	/* a length past the input */
	store_dec_init(&d, e.b.p, 5);
	store_dec_str(&d, big, sizeof(big));
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	/* bytes left over are an error too */
	store_dec_init(&d, e.b.p, e.b.len);
	store_dec_str(&d, big, sizeof(big));
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	store_enc_release(&e);
}
END_TEST

/* Whole numbers take a varint, the rest 9 bytes; all come back bit for
 * bit; a tag or a range the encoder never writes is refused. */
START_TEST(test_num)
{
	static const double v[] = { 0, 1, -1, 12345678, -4096,
		9007199254740992.0, -9007199254740992.0, 9007199254740994.0,
		0.5, -0.0, 1e300, -1.0 / 3 };
	static const size_t len[] = { 1, 1, 1, 4, 2, 8, 8, 9, 9, 9, 9, 9 };
	struct store_enc e = { 0 };
	struct store_dec d;
	double x;
	unsigned i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t before = e.b.len;

		store_enc_num(&e, v[i]);
		ck_assert_msg(e.b.len - before == len[i], "%g: %zu bytes", v[i],
		    e.b.len - before);
	}
	store_enc_num(&e, nan(""));
	store_enc_num(&e, INFINITY);
	store_dec_init(&d, e.b.p, e.b.len);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		x = store_dec_num(&d);
		ck_assert_mem_eq(&x, &v[i], sizeof(x));
	}
	ck_assert(isnan(store_dec_num(&d)));
	ck_assert(isinf(store_dec_num(&d)));
	ck_assert_int_eq(store_dec_end(&d), 0);
	store_enc_release(&e);
	/* tag 3: unknown */
	store_enc_u(&e, 3);
	store_dec_init(&d, e.b.p, e.b.len);
	(void)store_dec_num(&d);
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	store_enc_release(&e);
	/* an integer past 2^53 in the varint form */
	store_enc_u(&e, (uint64_t)((1ULL << 54) + 2) << 1);
	store_dec_init(&d, e.b.p, e.b.len);
	(void)store_dec_num(&d);
	ck_assert_int_eq(store_dec_end(&d), -EBADMSG);
	store_enc_release(&e);
}
END_TEST

START_TEST(test_crc32c_vector)
{
	/* the check value of CRC-32C (RFC 3720, B.4) */
	ck_assert_uint_eq(store_crc32c(0, "123456789", 9), 0xe3069283u);
	/* chaining equals one pass */
	ck_assert_uint_eq(store_crc32c(store_crc32c(0, "1234", 4), "56789", 5),
	    0xe3069283u);
	ck_assert_uint_eq(store_crc32c(0, "", 0), 0);
	ck_assert_uint_eq(store_crc32c_table(0, "123456789", 9), 0xe3069283u);
}
END_TEST

/* The instructions (SSE 4.2, ARMv8 CRC) and the table agree on every
 * length 0..64 at every alignment 0..7, on big buffers and chained. */
START_TEST(test_crc32c_paths)
{
	enum { BIG = 1 << 20 };
	static const size_t big[] = { 65, 255, 4096, 4099, 65537, BIG };
	uint8_t *buf = malloc(BIG + 8);
	uint32_t hw, seed = 0x12345678;
	size_t i, len, off;
	int have;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < BIG + 8; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	have = store_crc32c_hw(0, "123456789", 9, &hw) == 0;
#if defined(__x86_64__) || defined(__aarch64__)
	/* every machine CI and the phones run on has them */
	ck_assert_int_eq(have, 1);
#endif
	if (have)
		ck_assert_uint_eq(hw, 0xe3069283u);
	for (off = 0; off < 8; off++)
		for (len = 0; len <= 64; len++) {
			uint32_t want = store_crc32c_table(0, buf + off, len);

			ck_assert_uint_eq(store_crc32c(0, buf + off, len),
			    want);
			if (have) {
				ck_assert_int_eq(store_crc32c_hw(0, buf + off,
						     len, &hw),
				    0);
				ck_assert_uint_eq(hw, want);
			}
			/* a running CRC carried in */
			want = store_crc32c_table(want, buf + 100, len);
			ck_assert_uint_eq(store_crc32c(store_crc32c(0,
							   buf + off, len),
					      buf + 100, len),
			    want);
		}
	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		uint32_t want = store_crc32c_table(0, buf + 3, big[i]);

		ck_assert_uint_eq(store_crc32c(0, buf + 3, big[i]), want);
		ck_assert_uint_eq(store_crc32c(store_crc32c(0, buf + 3, 17),
				      buf + 20, big[i] - 17),
		    want);
		if (have) {
			ck_assert_int_eq(store_crc32c_hw(0, buf + 3, big[i],
					     &hw),
			    0);
			ck_assert_uint_eq(hw, want);
		}
	}
	free(buf);
}
END_TEST

static void
make_frame(struct store_enc *e)
{
	static const char payload[] = "a window's part, in columns";

	ck_assert_int_eq(store_frame_put(e, 3, 1, payload, sizeof(payload)), 0);
}

START_TEST(test_frame_roundtrip)
{
	struct store_enc e = { 0 };
	struct store_frame f;

	make_frame(&e);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.part, 3);
	ck_assert_uint_eq(f.version, 1);
	ck_assert_uint_eq(f.codec, STORE_CODEC_RAW);
	ck_assert_uint_eq(f.len, sizeof("a window's part, in columns"));
	ck_assert_str_eq(f.payload, "a window's part, in columns");
	/* an empty payload is a frame too */
	store_enc_release(&e);
	ck_assert_int_eq(store_frame_put(&e, 0, 0, "", 0), 0);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.len, 0);
	store_enc_release(&e);
}
END_TEST

/* Every cut and every single flipped bit is refused, ret untouched. */
START_TEST(test_frame_corrupt)
{
	struct store_enc e = { 0 };
	struct store_frame f, keep;
	uint8_t *copy;
	size_t i, bit;

	make_frame(&e);
	memset(&keep, 0x5a, sizeof(keep));
	for (i = 0; i < e.b.len; i++) {
		f = keep;
		ck_assert_int_eq(store_frame_get(e.b.p, i, &f), -EBADMSG);
		ck_assert_mem_eq(&f, &keep, sizeof(f));
	}
	copy = malloc(e.b.len);
	ck_assert_ptr_nonnull(copy);
	for (i = 0; i < e.b.len; i++)
		for (bit = 0; bit < 8; bit++) {
			memcpy(copy, e.b.p, e.b.len);
			copy[i] ^= (uint8_t)(1u << bit);
			ck_assert_msg(store_frame_get(copy, e.b.len, &f) ==
				-EBADMSG,
			    "byte %zu bit %zu", i, bit);
		}
	/* a byte more is not a frame either */
	memcpy(copy, e.b.p, e.b.len);
	store_enc_bytes(&e, "", 1);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), -EBADMSG);
	free(copy);
	store_enc_release(&e);
	/* a codec this build does not know */
	store_enc_bytes(&e,
	    (const uint8_t[]){ STORE_FRAME_MAGIC, 1, 1, STORE_CODEC__MAX, 0, 0,
		0, 0, 0 },
	    9);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), -EBADMSG);
	store_enc_release(&e);
}
END_TEST

/* A payload like a window's: repetitive varints, so zstd shrinks it. */
static void
mk_payload(struct store_enc *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		store_enc_u(e, (i * 37) % 300);
	ck_assert_int_eq(e->err, 0);
}

START_TEST(test_frame_zstd)
{
	struct store_enc p = { 0 }, e = { 0 };
	struct store_frame f;
	uint8_t noise[256];
	uint32_t x = 12345;
	size_t i;

	mk_payload(&p, 2000);
	ck_assert_int_eq(store_frame_put_zstd(&e, 1, 2, p.b.p, p.b.len, 0), 0);
	ck_assert_uint_lt(e.b.len, p.b.len / 4);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.codec, STORE_CODEC_ZSTD);
	ck_assert_uint_eq(f.part, 1);
	ck_assert_uint_eq(f.version, 2);
	ck_assert_uint_eq(f.len, p.b.len);
	ck_assert_uint_lt(f.stored, f.len);
	ck_assert_ptr_nonnull(f.buf);
	ck_assert_mem_eq(f.payload, p.b.p, p.b.len);
	store_frame_release(&f);
	ck_assert_ptr_null(f.buf);
	store_enc_release(&e);
	/* every level the bench tries */
	for (i = 1; i <= 19; i += 6) {
		ck_assert_int_eq(store_frame_put_zstd(&e, 1, 2, p.b.p, p.b.len,
				     (int)i),
		    0);
		ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
		ck_assert_mem_eq(f.payload, p.b.p, p.b.len);
		store_frame_release(&f);
		store_enc_release(&e);
	}
	/* noise does not shrink: stored raw, read without a buffer */
	for (i = 0; i < sizeof(noise); i++) {
		x = x * 1103515245u + 12345u;
		noise[i] = (uint8_t)(x >> 16);
	}
	ck_assert_int_eq(store_frame_put_zstd(&e, 1, 2, noise, sizeof(noise),
			     3),
	    0);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.codec, STORE_CODEC_RAW);
	ck_assert_ptr_null(f.buf);
	ck_assert_mem_eq(f.payload, noise, sizeof(noise));
	store_frame_release(&f);
	store_enc_release(&e);
	/* nor does a tiny or empty payload */
	ck_assert_int_eq(store_frame_put_zstd(&e, 1, 2, "", 0, 3), 0);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.codec, STORE_CODEC_RAW);
	store_enc_release(&e);
	store_enc_release(&p);
}
END_TEST

static void *
zstd_thread(void *arg)
{
	const struct store_enc *p = arg;
	struct store_enc e = { 0 };

	ck_assert_int_eq(store_frame_put_zstd(&e, 1, 2, p->b.p, p->b.len, 0),
	    0);
	store_enc_release(&e);
	return NULL;
}

/*
 * zstd's heap (store_codec_bytes, Health.memory.zstd_bytes): a thread's
 * compression context counted once it compressed, within the caps'
 * bound whatever the payload, its decompression context once it decoded,
 * and neither after they were freed (by store_codec_release or at the
 * thread's end).
 */
START_TEST(test_zstd_bytes)
{
	struct store_enc p = { 0 }, e = { 0 };
	struct store_frame f;
	uint64_t b0, b1, b2;
	uint32_t x = 7;
	pthread_t th;
	size_t i;

	store_codec_release();
	b0 = store_codec_bytes();
	/* 1 MiB of 13 symbols: compressible, but no long repeats, so the
	 * level's own parameters would size every table for the whole
	 * payload (window 2^20, hash 2^17: ~1.4 MiB of workspace) */
	for (i = 0; i < (1u << 20); i++) {
		x = x * 1103515245u + 12345u;
		store_enc_bytes(&p,
		    (const uint8_t[]){ (uint8_t)(x >> 16) % 13 }, 1);
	}
	ck_assert_int_eq(p.err, 0);
	ck_assert_int_eq(store_frame_put_zstd(&e, 1, 2, p.b.p, p.b.len, 0), 0);
	b1 = store_codec_bytes();
	fprintf(stderr,
	    "zstd: %llu bytes after a 1 MiB payload's compression\n",
	    (unsigned long long)(b1 - b0));
	/* more than the context's fixed part; at most the caps' workspace
	 * (w16 h15 c14 at level 3: 467,872 B on zstd 1.5.4) with room for
	 * another zstd's layout */
	ck_assert_uint_gt(b1 - b0, 64 * 1024);
	ck_assert_uint_le(b1 - b0, 512 * 1024);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.codec, STORE_CODEC_ZSTD);
	ck_assert_mem_eq(f.payload, p.b.p, p.b.len);
	store_frame_release(&f);
	store_enc_release(&e);
	b2 = store_codec_bytes();
	ck_assert_uint_gt(b2, b1); /* and the decompression context */
	store_codec_release();
	ck_assert_uint_eq(store_codec_bytes(), b0);
	/* another thread's, counted while it lives, gone at its end */
	ck_assert_int_eq(pthread_create(&th, NULL, zstd_thread, &p), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_uint_eq(store_codec_bytes(), b0);
	store_enc_release(&p);
}
END_TEST

/* Payloads alike in structure, different in figures: what a store's
 * windows give the trainer. */
static void
dict_samples(struct store_enc *b, size_t *len, unsigned n)
{
	unsigned i, k;
	size_t at;

	for (i = 0; i < n; i++) {
		at = b->b.len;
		store_enc_u(b, 40);
		for (k = 0; k < 40; k++) {
			store_enc_u(b, k + 1);
			store_enc_u(b,
			    (uint64_t)(i * 7 + k * 13) % 5000 + 1000);
			store_enc_f64(b, 1000.125 + k);
		}
		len[i] = b->b.len - at;
	}
	ck_assert_int_eq(b->err, 0);
}

/* A trained dictionary: registered under the CRC of its bytes, used by
 * codec 2, refused when its id is unknown, damaged or cut. */
START_TEST(test_frame_zdict)
{
	struct store_enc b = { 0 }, e = { 0 }, z = { 0 }, c = { 0 };
	struct store_frame f;
	size_t len[400], dn, i;
	void *dict, *few = NULL;
	uint32_t id, again;
	uint64_t zb;

	store_zdict_reset();
	dict_samples(&b, len, 400);
	ck_assert_int_eq(store_zdict_train(b.b.p, len, 400, 4096, &dict, &dn),
	    0);
	ck_assert_uint_le(dn, 4096);
	ck_assert(!store_zdict_have(store_crc32c(0, dict, dn)));
	zb = store_codec_bytes();
	ck_assert_int_eq(store_zdict_add(dict, dn, &id), 0);
	/* its two forms counted in zstd's heap, each holds the bytes */
	ck_assert_uint_ge(store_codec_bytes(), zb + 2 * dn);
	ck_assert_uint_eq(id, store_crc32c(0, dict, dn));
	ck_assert(store_zdict_have(id));
	ck_assert_int_eq(store_zdict_add(dict, dn, &again), 0);
	ck_assert_uint_eq(again, id);
	/* not a dictionary: refused, nothing registered */
	ck_assert_int_eq(store_zdict_add("not a dictionary", 16, &again),
	    -EINVAL);
	ck_assert(!store_zdict_have(store_crc32c(0, "not a dictionary", 16)));

	/* the first sample, with and without the dictionary */
	ck_assert_int_eq(store_frame_put_zdict(&e, 1, 2, b.b.p, len[0], id), 0);
	ck_assert_int_eq(store_frame_put_zstd(&z, 1, 2, b.b.p, len[0], 0), 0);
	ck_assert_uint_lt(e.b.len, z.b.len);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.codec, STORE_CODEC_ZDICT);
	ck_assert_uint_eq(f.dict, id);
	ck_assert_uint_eq(f.len, len[0]);
	ck_assert_mem_eq(f.payload, b.b.p, len[0]);
	store_frame_release(&f);
	/* an id no dictionary has: as store_frame_put_zstd */
	ck_assert_int_eq(store_frame_put_zdict(&c, 1, 2, b.b.p, len[0], 0), 0);
	ck_assert_uint_eq(c.b.len, z.b.len);
	ck_assert_mem_eq(c.b.p, z.b.p, z.b.len);
	store_enc_release(&c);

	/* every cut and every byte flipped: refused (the flips zstd and
	 * the CRC both miss cannot exist: the CRC covers the id too) */
	for (i = 0; i < e.b.len; i++) {
		ck_assert_int_eq(store_frame_get(e.b.p, i, &f), -EBADMSG);
		e.b.p[i] ^= 0x5a;
		if (store_frame_get(e.b.p, e.b.len, &f) == 0) {
			ck_assert_mem_eq(f.payload, b.b.p, len[0]);
			store_frame_release(&f);
		}
		e.b.p[i] ^= 0x5a;
	}
	/* the same frame once the process has not got the dictionary */
	store_zdict_reset();
	ck_assert(!store_zdict_have(id));
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), -EBADMSG);
	/* nor can a writer use it: a plain zstd frame */
	ck_assert_int_eq(store_frame_put_zdict(&c, 1, 2, b.b.p, len[0], id), 0);
	ck_assert_int_eq(store_frame_get(c.b.p, c.b.len, &f), 0);
	ck_assert_uint_eq(f.codec, STORE_CODEC_ZSTD);
	store_frame_release(&f);
	/* registered again (from the file, say): it reads */
	ck_assert_int_eq(store_zdict_add(dict, dn, &again), 0);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_mem_eq(f.payload, b.b.p, len[0]);
	store_frame_release(&f);
	/* too few samples to train on */
	ck_assert_int_eq(store_zdict_train(b.b.p, len, 2, 4096, &few, &dn),
	    -EINVAL);
	store_zdict_reset();
	free(dict);
	store_enc_release(&b);
	store_enc_release(&e);
	store_enc_release(&z);
	store_enc_release(&c);
}
END_TEST

/* A frame header in front of stored bytes, its CRC over decoded: what a
 * hostile or damaged blob may claim. */
static void
put_hdr(struct store_enc *e, unsigned codec, const void *stored, size_t slen,
    uint64_t dlen, const void *decoded, size_t declen)
{
	size_t start = e->b.len;
	uint32_t crc;
	uint8_t c[4];
	unsigned i;

	store_enc_bytes(e, (const uint8_t[]){ STORE_FRAME_MAGIC }, 1);
	store_enc_u(e, 1);
	store_enc_u(e, 1);
	store_enc_u(e, codec);
	store_enc_u(e, slen);
	store_enc_u(e, dlen);
	crc = store_crc32c(0, e->b.p + start, e->b.len - start);
	crc = store_crc32c(crc, decoded, declen);
	for (i = 0; i < 4; i++)
		c[i] = (uint8_t)(crc >> (8 * i));
	store_enc_bytes(e, c, 4);
	store_enc_bytes(e, stored, slen);
	ck_assert_int_eq(e->err, 0);
}

/* Cuts, flips, lies about the decoded length, streams that are not one
 * zstd frame: all refused, ret untouched, nothing leaked (ASan); the few
 * flips zstd does not notice read back the very payload written. */
START_TEST(test_frame_zstd_bad)
{
	struct store_enc p = { 0 }, e = { 0 }, h = { 0 };
	struct store_frame f, keep;
	struct store_frame g;
	const uint8_t *zs;
	uint8_t *copy;
	size_t i, bit, flips = 0;

	mk_payload(&p, 600);
	ck_assert_int_eq(store_frame_put_zstd(&e, 1, 1, p.b.p, p.b.len, 3), 0);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &g), 0);
	ck_assert_uint_eq(g.codec, STORE_CODEC_ZSTD);
	memset(&keep, 0x5a, sizeof(keep));
	for (i = 0; i < e.b.len; i++) {
		f = keep;
		ck_assert_int_eq(store_frame_get(e.b.p, i, &f), -EBADMSG);
		ck_assert_mem_eq(&f, &keep, sizeof(f));
	}
	copy = malloc(e.b.len);
	ck_assert_ptr_nonnull(copy);
	for (i = 0; i < e.b.len; i++)
		for (bit = 0; bit < 8; bit++) {
			memcpy(copy, e.b.p, e.b.len);
			copy[i] ^= (uint8_t)(1u << bit);
			if (store_frame_get(copy, e.b.len, &f) == -EBADMSG)
				continue;
			/* bits zstd does not read (its header's unused
			 * bit, slack in table descriptions and the
			 * bitstream's padding): the same payload, which
			 * the CRC vouches for */
			ck_assert_uint_eq(f.len, p.b.len);
			ck_assert_mem_eq(f.payload, p.b.p, p.b.len);
			store_frame_release(&f);
			flips++;
		}
	ck_assert_uint_le(flips, e.b.len * 8 / 100);
	free(copy);
	/* a decoded length other than the stream's */
	zs = (const uint8_t *)e.b.p + (e.b.len - g.stored);
	put_hdr(&h, STORE_CODEC_ZSTD, zs, g.stored, p.b.len + 1, p.b.p,
	    p.b.len);
	ck_assert_int_eq(store_frame_get(h.b.p, h.b.len, &f), -EBADMSG);
	store_enc_release(&h);
	/* a decoded length over the bound: refused before any allocation */
	put_hdr(&h, STORE_CODEC_ZSTD, zs, g.stored,
	    (uint64_t)STORE_FRAME_MAX + 1, p.b.p, p.b.len);
	ck_assert_int_eq(store_frame_get(h.b.p, h.b.len, &f), -EBADMSG);
	store_enc_release(&h);
	/* the right header, CRC and all, over the stream and a byte more,
	 * or over two frames */
	{
		struct store_enc z = { 0 };

		store_enc_bytes(&z, zs, g.stored);
		store_enc_bytes(&z, "", 1);
		put_hdr(&h, STORE_CODEC_ZSTD, z.b.p, z.b.len, p.b.len, p.b.p,
		    p.b.len);
		ck_assert_int_eq(store_frame_get(h.b.p, h.b.len, &f), -EBADMSG);
		store_enc_release(&h);
		z.b.len--;
		store_enc_bytes(&z, zs, g.stored);
		put_hdr(&h, STORE_CODEC_ZSTD, z.b.p, z.b.len, p.b.len, p.b.p,
		    p.b.len);
		ck_assert_int_eq(store_frame_get(h.b.p, h.b.len, &f), -EBADMSG);
		store_enc_release(&h);
		/* and the control: the same header over the one frame */
		put_hdr(&h, STORE_CODEC_ZSTD, zs, g.stored, p.b.len, p.b.p,
		    p.b.len);
		ck_assert_int_eq(store_frame_get(h.b.p, h.b.len, &f), 0);
		store_frame_release(&f);
		store_enc_release(&h);
		store_enc_release(&z);
	}
	/* not zstd at all under the zstd codec */
	put_hdr(&h, STORE_CODEC_ZSTD, p.b.p, 40, 40, p.b.p, 40);
	ck_assert_int_eq(store_frame_get(h.b.p, h.b.len, &f), -EBADMSG);
	store_enc_release(&h);
	store_frame_release(&g);
	store_enc_release(&e);
	store_enc_release(&p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("store_codec");
	TCase *tc = tcase_create("codec");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_varint_edges);
	tcase_add_test(tc, test_zigzag_edges);
	tcase_add_test(tc, test_varint_bad);
	tcase_add_test(tc, test_strings_and_doubles);
	tcase_add_test(tc, test_num);
	tcase_add_test(tc, test_crc32c_vector);
	tcase_add_test(tc, test_crc32c_paths);
	tcase_add_test(tc, test_frame_roundtrip);
	tcase_add_test(tc, test_frame_corrupt);
	tcase_add_test(tc, test_frame_zstd);
	tcase_add_test(tc, test_frame_zstd_bad);
	tcase_add_test(tc, test_zstd_bytes);
	tcase_add_test(tc, test_frame_zdict);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
