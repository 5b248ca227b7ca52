/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Varints, zigzag, doubles, strings and the blob frame (store_codec.h,
 * doc/storage.md "Blobs"). Little-endian throughout, whatever the host.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>
#include <zstd.h>

#include "store/store_codec.h"

/* ------------------------------------------------------------ encoding */

static void
enc_raw(struct store_enc *e, const void *p, size_t n)
{
	int r;

	if (e->err || n == 0)
		return;
	if ((r = vbuf_reserve(&e->b, n)) < 0) {
		e->err = r;
		return;
	}
	memcpy(e->b.p + e->b.len, p, n);
	e->b.len += n;
}

void
store_enc_u(struct store_enc *e, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	enc_raw(e, buf, n);
}

void
store_enc_s(struct store_enc *e, int64_t v)
{
	/* zigzag: 0, -1, 1, -2 … → 0, 1, 2, 3 …; the shift is on the
	 * unsigned value, so INT64_MIN is well defined */
	uint64_t u = (uint64_t)v;

	store_enc_u(e, (u << 1) ^ (v < 0 ? ~(uint64_t)0 : 0));
}

void
store_enc_f64(struct store_enc *e, double v)
{
	uint8_t buf[8];
	uint64_t u;
	unsigned i;

	memcpy(&u, &v, sizeof(u));
	for (i = 0; i < 8; i++)
		buf[i] = (uint8_t)(u >> (8 * i));
	enc_raw(e, buf, sizeof(buf));
}

#define NUM_EXACT (1LL << 53) /* every integer up to it is a double */

void
store_enc_num(struct store_enc *e, double v)
{
	/* low bit 0: zigzag(v) << 1 follows; 1: the raw double follows */
	if (v == v && !(v == 0 && signbit(v)) && v >= -NUM_EXACT &&
	    v <= NUM_EXACT && v == (double)(int64_t)v) {
		int64_t i = (int64_t)v;
		uint64_t z = ((uint64_t)i << 1) ^ (i < 0 ? ~(uint64_t)0 : 0);

		store_enc_u(e, z << 1);
		return;
	}
	store_enc_u(e, 1);
	store_enc_f64(e, v);
}

void
store_enc_bytes(struct store_enc *e, const void *p, size_t n)
{
	enc_raw(e, p, n);
}

void
store_enc_str(struct store_enc *e, const char *s)
{
	size_t n = strlen(s);

	store_enc_u(e, n);
	enc_raw(e, s, n);
}

void
store_enc_release(struct store_enc *e)
{
	vbuf_release(&e->b);
	e->err = 0;
}

/* ------------------------------------------------------------ decoding */

void
store_dec_init(struct store_dec *d, const void *p, size_t n)
{
	d->p = p;
	d->end = d->p + n;
	d->err = 0;
}

static void
dec_fail(struct store_dec *d)
{
	if (!d->err)
		d->err = -EBADMSG;
	d->p = d->end;
}

uint64_t
store_dec_u(struct store_dec *d)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t c;

	if (d->err)
		return 0;
	if (d->p < d->end && *d->p < 0x80)
		return *d->p++; /* one byte: most of them */
	do {
		if (d->p == d->end)
			return dec_fail(d), 0; /* truncated */
		c = *d->p++;
		/* the tenth byte may carry only the top bit of 64 */
		if (shift == 63 && (c & 0x7e))
			return dec_fail(d), 0;
		v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while ((c & 0x80) && shift < 64);
	if (c & 0x80)
		return dec_fail(d), 0; /* over ten bytes */
	return v;
}

uint64_t
store_dec_u_max(struct store_dec *d, uint64_t max)
{
	uint64_t v = store_dec_u(d);

	if (v > max)
		return dec_fail(d), 0;
	return v;
}

int64_t
store_dec_s(struct store_dec *d)
{
	uint64_t u = store_dec_u(d);

	return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

double
store_dec_f64(struct store_dec *d)
{
	const uint8_t *p = store_dec_bytes(d, 8);
	uint64_t u = 0;
	double v;
	unsigned i;

	if (p == NULL)
		return 0;
	for (i = 0; i < 8; i++)
		u |= (uint64_t)p[i] << (8 * i);
	memcpy(&v, &u, sizeof(v));
	return v;
}

double
store_dec_num(struct store_dec *d)
{
	uint64_t u = store_dec_u(d), z;
	int64_t i;

	if (u == 1)
		return store_dec_f64(d);
	if (u & 1)
		return dec_fail(d), 0; /* a tag this version does not know */
	z = u >> 1;
	i = (int64_t)((z >> 1) ^ (~(z & 1) + 1));
	if (i < -NUM_EXACT || i > NUM_EXACT)
		return dec_fail(d), 0; /* the encoder never writes it */
	return (double)i;
}

const void *
store_dec_bytes(struct store_dec *d, size_t n)
{
	const uint8_t *p = d->p;

	if (d->err)
		return NULL;
	if ((size_t)(d->end - d->p) < n)
		return dec_fail(d), NULL;
	d->p += n;
	return p;
}

void
store_dec_str(struct store_dec *d, char *buf, size_t sz)
{
	uint64_t n = store_dec_u(d);
	const void *p;

	if (sz)
		buf[0] = '\0';
	if (d->err)
		return;
	if (sz == 0 || n > sz - 1)
		return dec_fail(d);
	if ((p = store_dec_bytes(d, (size_t)n)) == NULL)
		return;
	memcpy(buf, p, (size_t)n);
	buf[n] = '\0';
}

void
store_dec_fail(struct store_dec *d)
{
	dec_fail(d);
}

int
store_dec_end(const struct store_dec *d)
{
	if (d->err)
		return d->err;
	return d->p == d->end ? 0 : -EBADMSG;
}

/* ------------------------------------------------------------ CRC-32C */

/*
 * Castagnoli, reflected (the polynomial iSCSI, ext4 and btrfs use). The
 * instructions of SSE 4.2 (x86-64) and of ARMv8's CRC extension compute
 * exactly this CRC, 8 bytes per instruction; the table is the fallback
 * and the reference the tests hold them to. Which one runs is decided
 * once, from what the CPU says it has (cpuid, the auxiliary vector).
 */
static uint32_t crc_tab[256];

static void
crc_tab_init(void)
{
	uint32_t c;
	unsigned i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_tab[i] = c;
	}
}

uint32_t
store_crc32c_table(uint32_t crc, const void *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const uint8_t *b = p;

	pthread_once(&once, crc_tab_init);
	crc = ~crc;
	while (n--)
		crc = crc_tab[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CRC_HW 1

__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t c = ~crc, v;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&v, b, 8);
		c = _mm_crc32_u64(c, v);
	}
	while (n--)
		c = _mm_crc32_u8((uint32_t)c, *b++);
	return ~(uint32_t)c;
}

static int
crc_hw_have(void)
{
	return __builtin_cpu_supports("sse4.2");
}

#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#include <sys/auxv.h>
#define CRC_HW 1
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#if defined(__clang__)
#define CRC_ARM_TARGET __attribute__((target("crc")))
#define CRC_ARM_8(c, v) __builtin_arm_crc32cd((c), (v))
#define CRC_ARM_1(c, v) __builtin_arm_crc32cb((c), (v))
#else
#define CRC_ARM_TARGET __attribute__((target("+crc")))
#define CRC_ARM_8(c, v) __builtin_aarch64_crc32cx((c), (v))
#define CRC_ARM_1(c, v) __builtin_aarch64_crc32cb((c), (v))
#endif

CRC_ARM_TARGET static uint32_t
crc_hw(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t c = ~crc;
	uint64_t v;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&v, b, 8);
		c = CRC_ARM_8(c, v);
	}
	while (n--)
		c = CRC_ARM_1(c, *b++);
	return ~c;
}

static int
crc_hw_have(void)
{
#ifdef __ARM_FEATURE_CRC32
	return 1;
#else
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}
#endif

int
store_crc32c_hw(uint32_t crc, const void *p, size_t n, uint32_t *ret)
{
#ifdef CRC_HW
	if (crc_hw_have()) {
		*ret = crc_hw(crc, p, n);
		return 0;
	}
#else
	(void)crc;
	(void)p;
	(void)n;
	(void)ret;
#endif
	return -EOPNOTSUPP;
}

static uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static void
crc_pick(void)
{
	crc_fn = store_crc32c_table;
#ifdef CRC_HW
	if (crc_hw_have())
		crc_fn = crc_hw;
#endif
}

uint32_t
store_crc32c(uint32_t crc, const void *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, crc_pick);
	return crc_fn(crc, p, n);
}

/* ------------------------------------------------------------ zstd */

/*
 * One compression and one decompression context per thread, made at its
 * first use and freed when the thread ends: ZSTD_compress() and
 * ZSTD_decompress() make and free one per call, which costs more than a
 * window's blob takes to decode (measured: more than half of a day's
 * history read).
 */
static pthread_key_t zctx_key[2];

static int zctx_ok;
static uint64_t zctx_made[2]; /* contexts made (store_codec_contexts_made) */
/* Σ over live contexts of their size as last measured, every thread
 * (store_codec_bytes); each thread's own share of it per kind */
static uint64_t zctx_bytes;
static __thread uint64_t zctx_mine[2];

/* The calling thread's context of kind d measured again (NULL: gone). A
 * context's workspace changes at a use (grown for a larger payload,
 * shrunk by zstd after it stayed too large for 128 uses), so this runs
 * after each. ZSTD_sizeof_*: a few fields summed. */
static void
zctx_note(int d, const void *c)
{
	uint64_t now = c == NULL ? 0 :
	    d			 ? ZSTD_sizeof_DCtx(c) :
				   ZSTD_sizeof_CCtx(c);

	/* modular: a shrink adds the two's complement */
	__atomic_add_fetch(&zctx_bytes, now - zctx_mine[d], __ATOMIC_RELAXED);
	zctx_mine[d] = now;
}

/* key destructors: run in the exiting thread, its TLS still there */
static void
zctx_free_c(void *p)
{
	ZSTD_freeCCtx(p);
	zctx_note(0, NULL);
}

static void
zctx_free_d(void *p)
{
	ZSTD_freeDCtx(p);
	zctx_note(1, NULL);
}

static void
zctx_init(void)
{
	zctx_ok = pthread_key_create(&zctx_key[0], zctx_free_c) == 0 &&
	    pthread_key_create(&zctx_key[1], zctx_free_d) == 0;
}

/* The thread's context (d: decompression), NULL: none to be had. */
static void *
zctx(int d)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	void *c;

	pthread_once(&once, zctx_init);
	if (!zctx_ok)
		return NULL;
	if ((c = pthread_getspecific(zctx_key[d])) != NULL)
		return c;
	c = d ? (void *)ZSTD_createDCtx() : (void *)ZSTD_createCCtx();
	if (c != NULL)
		__atomic_add_fetch(&zctx_made[d], 1, __ATOMIC_RELAXED);
	if (c != NULL && pthread_setspecific(zctx_key[d], c) != 0) {
		if (d)
			ZSTD_freeDCtx(c);
		else
			ZSTD_freeCCtx(c);
		c = NULL;
	}
	return c;
}

/* The calling thread's context of kind d (1: decompression) freed. */
static void
zctx_release(int d)
{
	void *c;

	if (!zctx_ok || (c = pthread_getspecific(zctx_key[d])) == NULL)
		return;
	(void)pthread_setspecific(zctx_key[d], NULL);
	if (d)
		ZSTD_freeDCtx(c);
	else
		ZSTD_freeCCtx(c);
	zctx_note(d, NULL);
}

/*
 * The calling thread's contexts freed: an idle reader's with its
 * connection. A compression context holds its match tables (~0.3 MiB at
 * level 3 for a window's blobs) that would otherwise stay for the
 * thread's life; the next use makes one again.
 */
void
store_codec_release(void)
{
	zctx_release(0);
	zctx_release(1);
}

/*
 * Only the decompression context: the store writer's, after its queue
 * drained. Its compression context is kept: one made again for every
 * window wrote its tables afresh (zstd zeroes a new context's tables, a
 * kept one's are reused as they are), each page faulted in after the
 * heap trim gave it back, and the trim's madvise calls (a TLB shootdown
 * of the other CPUs each) were mostly for its pages: ~40 % of the
 * writer's CPU a window (bench/README.md, "Writer thread, sixth pass").
 */
void
store_codec_release_decoder(void)
{
	zctx_release(1);
}

uint64_t
store_codec_contexts_made(int d)
{
	return __atomic_load_n(&zctx_made[d ? 1 : 0], __ATOMIC_RELAXED);
}

static uint64_t zdict_bytes(void);

uint64_t
store_codec_bytes(void)
{
	return __atomic_load_n(&zctx_bytes, __ATOMIC_RELAXED) + zdict_bytes();
}

/* ------------------------------------------------------------ frames */

/*
 * The CRC covers the header as written and the decoded payload: a flipped
 * part, version, codec or length is caught as surely as a flipped payload
 * byte, and for a compressed payload the check is on what the reader will
 * use, after the decompressor, not on the bytes it was fed.
 */
static int
frame_put(struct store_enc *e, unsigned part, unsigned version, unsigned codec,
    uint32_t dict, const void *stored, size_t slen, const void *payload,
    size_t len)
{
	size_t start = e->b.len;
	uint32_t crc;
	uint8_t c[4];
	unsigned i;

	store_enc_bytes(e, (const uint8_t[]){ STORE_FRAME_MAGIC }, 1);
	store_enc_u(e, part);
	store_enc_u(e, version);
	store_enc_u(e, codec);
	store_enc_u(e, slen);
	if (codec != STORE_CODEC_RAW)
		store_enc_u(e, len);
	if (codec == STORE_CODEC_ZDICT)
		store_enc_u(e, dict);
	if (e->err)
		return e->err;
	crc = store_crc32c(0, e->b.p + start, e->b.len - start);
	crc = store_crc32c(crc, payload, len);
	for (i = 0; i < 4; i++)
		c[i] = (uint8_t)(crc >> (8 * i));
	store_enc_bytes(e, c, sizeof(c));
	store_enc_bytes(e, stored, slen);
	return e->err;
}

int
store_frame_put(struct store_enc *e, unsigned part, unsigned version,
    const void *payload, size_t len)
{
	if (len > STORE_FRAME_MAX)
		return -E2BIG;
	return frame_put(e, part, version, STORE_CODEC_RAW, 0, payload, len,
	    payload, len);
}

static size_t
u_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int
store_frame_put_zstd(struct store_enc *e, unsigned part, unsigned version,
    const void *payload, size_t len, int level)
{
	ZSTD_CCtx *cc;
	size_t cap, clen;
	void *z;
	int r;

	if (len > STORE_FRAME_MAX)
		return -E2BIG;
	cap = ZSTD_compressBound(len);
	if ((z = malloc(cap)) == NULL)
		return -ENOMEM;
	if ((cc = zctx(0)) != NULL) {
		/* the level's parameters for len, but no window, hash or
		 * chain table above the caps: the context's workspace is
		 * bounded whatever the payload (STORE_ZSTD_WLOG_MAX) */
		ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
		    level ? level : STORE_ZSTD_LEVEL);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog,
		    STORE_ZSTD_WLOG_MAX);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_hashLog, STORE_ZSTD_HLOG_MAX);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_chainLog,
		    STORE_ZSTD_CLOG_MAX);
		clen = ZSTD_compress2(cc, z, cap, payload, len);
		ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
		zctx_note(0, cc);
	} else {
		clen = ZSTD_compress(z, cap, payload, len,
		    level ? level : STORE_ZSTD_LEVEL);
	}
	/* raw when zstd fails or does not pay for its decoded length */
	if (ZSTD_isError(clen) || clen + u_len(len) >= len)
		r = frame_put(e, part, version, STORE_CODEC_RAW, 0, payload,
		    len, payload, len);
	else
		r = frame_put(e, part, version, STORE_CODEC_ZSTD, 0, z, clen,
		    payload, len);
	free(z);
	return r;
}

/* ------------------------------------------------------- dictionaries */

struct zdict {
	uint32_t id;
	ZSTD_CDict *cd;
	ZSTD_DDict *dd;
};

/* Few (one per list a store compresses, per file): a vector searched
 * in order, never shrunk; the entries live as long as the process. */
static struct {
	pthread_mutex_t lock;
	struct zdict *d;
	size_t n, cap;
	uint64_t bytes; /* Σ ZSTD_sizeof_CDict + _DDict, and the vector */
} zdicts = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t
zdict_bytes(void)
{
	uint64_t b;

	pthread_mutex_lock(&zdicts.lock);
	b = zdicts.bytes + zdicts.cap * sizeof(*zdicts.d);
	pthread_mutex_unlock(&zdicts.lock);
	return b;
}

static struct zdict *
zdict_find(uint32_t id)
{
	size_t i;

	for (i = 0; i < zdicts.n; i++)
		if (zdicts.d[i].id == id)
			return &zdicts.d[i];
	return NULL;
}

int
store_zdict_add(const void *dict, size_t n, uint32_t *ret_id)
{
	uint32_t id = store_crc32c(0, dict, n);
	ZSTD_CDict *cd = NULL;
	ZSTD_DDict *dd = NULL;
	struct zdict *v;
	int r = 0;

	if (id == 0 || n == 0 || n > STORE_FRAME_MAX)
		return -EINVAL;
	pthread_mutex_lock(&zdicts.lock);
	if (zdict_find(id) != NULL)
		goto out;
	if (ZDICT_isError(ZDICT_getDictHeaderSize(dict, n))) {
		r = -EINVAL;
		goto out;
	}
	cd = ZSTD_createCDict(dict, n, STORE_ZSTD_LEVEL);
	dd = ZSTD_createDDict(dict, n);
	if (cd == NULL || dd == NULL) {
		r = -ENOMEM;
		goto out;
	}
	if (zdicts.n == zdicts.cap) {
		size_t nc = zdicts.cap ? zdicts.cap * 2 : 8;

		if ((v = realloc(zdicts.d, nc * sizeof(*v))) == NULL) {
			r = -ENOMEM;
			goto out;
		}
		zdicts.d = v;
		zdicts.cap = nc;
	}
	zdicts.d[zdicts.n++] = (struct zdict){ id, cd, dd };
	zdicts.bytes += ZSTD_sizeof_CDict(cd) + ZSTD_sizeof_DDict(dd);
	cd = NULL;
	dd = NULL;
out:
	pthread_mutex_unlock(&zdicts.lock);
	ZSTD_freeCDict(cd);
	ZSTD_freeDDict(dd);
	if (r == 0)
		*ret_id = id;
	return r;
}

bool
store_zdict_have(uint32_t id)
{
	bool have;

	pthread_mutex_lock(&zdicts.lock);
	have = zdict_find(id) != NULL;
	pthread_mutex_unlock(&zdicts.lock);
	return have;
}

void
store_zdict_reset(void)
{
	size_t i;

	pthread_mutex_lock(&zdicts.lock);
	for (i = 0; i < zdicts.n; i++) {
		ZSTD_freeCDict(zdicts.d[i].cd);
		ZSTD_freeDDict(zdicts.d[i].dd);
	}
	free(zdicts.d);
	zdicts.d = NULL;
	zdicts.n = zdicts.cap = 0;
	zdicts.bytes = 0;
	pthread_mutex_unlock(&zdicts.lock);
}

/* The compression or decompression dictionary of id (NULL: none). An
 * entry never moves out of use: the vector may grow, but the dictionary
 * objects it points to are never freed. */
static const void *
zdict_get(uint32_t id, int d)
{
	const struct zdict *z;
	const void *p = NULL;

	pthread_mutex_lock(&zdicts.lock);
	if ((z = zdict_find(id)) != NULL)
		p = d ? (const void *)z->dd : (const void *)z->cd;
	pthread_mutex_unlock(&zdicts.lock);
	return p;
}

int
store_zdict_train(const void *buf, const size_t *len, unsigned n, size_t cap,
    void **ret, size_t *ret_n)
{
	void *d;
	size_t got;

	if ((d = malloc(cap)) == NULL)
		return -ENOMEM;
	got = ZDICT_trainFromBuffer(d, cap, buf, len, n);
	if (ZDICT_isError(got)) {
		free(d);
		return -EINVAL;
	}
	*ret = d;
	*ret_n = got;
	return 0;
}

int
store_frame_put_zdict(struct store_enc *e, unsigned part, unsigned version,
    const void *payload, size_t len, uint32_t id)
{
	const ZSTD_CDict *cd = zdict_get(id, 0);
	ZSTD_CCtx *cc;
	size_t cap, clen;
	void *z;
	int r;

	if (cd == NULL || (cc = zctx(0)) == NULL)
		return store_frame_put_zstd(e, part, version, payload, len, 0);
	if (len > STORE_FRAME_MAX)
		return -E2BIG;
	cap = ZSTD_compressBound(len);
	if ((z = malloc(cap)) == NULL)
		return -ENOMEM;
	/* the content size stated, no checksum (the frame's CRC is ours),
	 * no dictionary id (the frame names it); the context is the
	 * thread's, so it is left as ZSTD_compressCCtx expects it */
	ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_dictIDFlag, 0);
	ZSTD_CCtx_refCDict(cc, cd);
	clen = ZSTD_compress2(cc, z, cap, payload, len);
	ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
	zctx_note(0, cc);
	if (ZSTD_isError(clen) || clen + u_len(len) + u_len(id) >= len)
		r = frame_put(e, part, version, STORE_CODEC_RAW, 0, payload,
		    len, payload, len);
	else
		r = frame_put(e, part, version, STORE_CODEC_ZDICT, id, z, clen,
		    payload, len);
	free(z);
	return r;
}

/* One zstd frame of exactly n bytes whose header states len: the checks
 * that come before any allocation. */
static bool
zstd_frame_ok(const void *p, size_t n, size_t len)
{
	unsigned long long cs = ZSTD_getFrameContentSize(p, n);

	if (cs == ZSTD_CONTENTSIZE_UNKNOWN || cs == ZSTD_CONTENTSIZE_ERROR ||
	    cs != len)
		return false;
	return ZSTD_findFrameCompressedSize(p, n) == n;
}

int
store_frame_get(const void *blob, size_t n, struct store_frame *ret)
{
	struct store_dec d;
	struct store_frame f = { 0 };
	const uint8_t *m, *c;
	const ZSTD_DDict *dd = NULL;
	ZSTD_DCtx *dc;
	uint32_t crc = 0, want;
	size_t hdr, got;
	unsigned i;

	store_dec_init(&d, blob, n);
	m = store_dec_bytes(&d, 1);
	f.part = (unsigned)store_dec_u_max(&d, 255);
	f.version = (unsigned)store_dec_u_max(&d, 255);
	f.codec = (unsigned)store_dec_u_max(&d, STORE_CODEC__MAX - 1);
	f.stored = (size_t)store_dec_u_max(&d, STORE_FRAME_MAX);
	f.len = f.stored;
	if (!d.err && f.codec != STORE_CODEC_RAW)
		f.len = (size_t)store_dec_u_max(&d, STORE_FRAME_MAX);
	if (!d.err && f.codec == STORE_CODEC_ZDICT)
		f.dict = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	hdr = (size_t)(d.p - (const uint8_t *)blob);
	c = store_dec_bytes(&d, 4);
	f.payload = store_dec_bytes(&d, f.stored);
	if (store_dec_end(&d) < 0 || m == NULL || *m != STORE_FRAME_MAGIC)
		return -EBADMSG;
	if (f.codec == STORE_CODEC_ZDICT && (dd = zdict_get(f.dict, 1)) == NULL)
		return -EBADMSG; /* a dictionary this process has not got */
	if (f.codec != STORE_CODEC_RAW) {
		if (!zstd_frame_ok(f.payload, f.stored, f.len))
			return -EBADMSG;
		if ((f.buf = malloc(f.len ? f.len : 1)) == NULL)
			return -ENOMEM;
		dc = zctx(1);
		if (dd != NULL && dc == NULL)
			got = (size_t)-1; /* an error: no context, no way */
		else if (dd != NULL)
			got = ZSTD_decompress_usingDDict(dc, f.buf, f.len,
			    f.payload, f.stored, dd);
		else if (dc != NULL)
			got = ZSTD_decompressDCtx(dc, f.buf, f.len, f.payload,
			    f.stored);
		else
			got = ZSTD_decompress(f.buf, f.len, f.payload,
			    f.stored);
		if (dc != NULL)
			zctx_note(1, dc);
		if (ZSTD_isError(got) || got != f.len) {
			free(f.buf);
			return -EBADMSG;
		}
		f.payload = f.buf;
	}
	for (i = 0; i < 4; i++)
		crc |= (uint32_t)c[i] << (8 * i);
	want = store_crc32c(store_crc32c(0, blob, hdr), f.payload, f.len);
	if (crc != want) {
		free(f.buf);
		return -EBADMSG;
	}
	*ret = f;
	return 0;
}

void
store_frame_release(struct store_frame *f)
{
	free(f->buf);
	f->buf = NULL;
	f->payload = NULL;
	f->len = 0;
}
