/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compact encoding of a window's parts (store_codec.c): unsigned
 * LEB128 varints, zigzag for signed values, raw IEEE doubles, length-
 * prefixed strings, and the frame every stored blob is wrapped in
 * (doc/storage.md, "Blobs"). Pure byte work: no SQLite, no window types,
 * so the fuzzers and unit tests reach it directly.
 *
 * Both sides remember their first error and turn every later call into a
 * no-op, so a part's encoder or decoder is a straight run of calls with
 * one check at the end; a decoder never reads past its input and reports
 * a truncated or overlong varint, a string longer than its buffer or an
 * input with bytes left over as -EBADMSG.
 */
#ifndef VITALSD_STORE_CODEC_H
#define VITALSD_STORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

struct store_enc {
	struct vbuf b;
	int err; /* first error (-ENOMEM), 0 none */
};

void store_enc_u(struct store_enc *e, uint64_t v);
void store_enc_s(struct store_enc *e, int64_t v);
void store_enc_f64(struct store_enc *e, double v);
/* A double as a varint when it is a whole number of at most 53 bits
 * (meminfo kB, task counts: most gauges), else tag and 8 bytes; bit for
 * bit either way (−0 and NaN take the 8 bytes). */
void store_enc_num(struct store_enc *e, double v);
void store_enc_bytes(struct store_enc *e, const void *p, size_t n);
void store_enc_str(struct store_enc *e, const char *s);
void store_enc_release(struct store_enc *e);

struct store_dec {
	const uint8_t *p, *end;
	int err; /* first error (-EBADMSG), 0 none */
};

void store_dec_init(struct store_dec *d, const void *p, size_t n);
uint64_t store_dec_u(struct store_dec *d);
/* A varint that must not exceed max (a count, an enum): -EBADMSG if it
 * does, and 0 returned, so a hostile count never sizes an allocation. */
uint64_t store_dec_u_max(struct store_dec *d, uint64_t max);
int64_t store_dec_s(struct store_dec *d);
double store_dec_f64(struct store_dec *d);
double store_dec_num(struct store_dec *d);
const void *store_dec_bytes(struct store_dec *d, size_t n);
/* A string into buf (NUL-terminated); longer than sz − 1: -EBADMSG. */
void store_dec_str(struct store_dec *d, char *buf, size_t sz);
/* Marks the input malformed (a part's own check failed): -EBADMSG. */
void store_dec_fail(struct store_dec *d);
/* 0 when every byte was read without error, else the error. */
int store_dec_end(const struct store_dec *d);

/*
 * The frame: FRAME_MAGIC, the part, the part's own format version, the
 * payload's codec, its stored length, for a compressed payload its decoded
 * length, the CRC-32C of the header and the decoded payload, then the
 * stored payload. A reader checks the header before it allocates or
 * decompresses anything, and the CRC before it hands back a byte.
 */
#define STORE_FRAME_MAGIC 0xB7
#define STORE_FRAME_MAX (16u << 20) /* a payload bigger is refused */
#define STORE_ZSTD_LEVEL 3	    /* zstd's default, and ours */
/*
 * Caps on the level's parameters in a thread's compression context
 * (store_frame_put_zstd): log2 of the match window, of the hash table's
 * and of the chain table's entries. A window's blobs (at most ~22 KB at
 * 2,100 tasks) get the level's own parameters (zstd sizes them to the
 * payload, all below the caps but the hash and chain tables by one step
 * each: +0.01 % of stored bytes); a larger payload (task summaries, a
 * spool move) finds matches 64 KiB back at most. The workspace is then
 * at most ~0.45 MiB whatever the payload, where the level alone grows it
 * to 0.9 MiB at 128 KiB and 1.3 MiB at 512 KiB, and a kept context keeps
 * its largest for 128 more uses (bench/README.md, "zstd contexts").
 */
#define STORE_ZSTD_WLOG_MAX 16
#define STORE_ZSTD_HLOG_MAX 15
#define STORE_ZSTD_CLOG_MAX 14

enum store_codec_kind {
	STORE_CODEC_RAW = 0,
	STORE_CODEC_ZSTD = 1,  /* one zstd frame with its content size */
	STORE_CODEC_ZDICT = 2, /* the same, made with a trained dictionary */
	STORE_CODEC__MAX
};

struct store_frame {
	unsigned part;	     /* which part of a window */
	unsigned version;    /* the part's format version */
	unsigned codec;	     /* enum store_codec_kind, as stored */
	const void *payload; /* decoded: into the blob, or buf */
	size_t len;	     /* decoded length */
	size_t stored;	     /* bytes the payload took in the blob */
	uint32_t dict;	     /* STORE_CODEC_ZDICT: the dictionary's id */
	void *buf;	     /* owned decoded payload (zstd), or NULL */
};

/* A raw frame. */
int store_frame_put(struct store_enc *e, unsigned part, unsigned version,
    const void *payload, size_t len);
/* A zstd frame at level (0: STORE_ZSTD_LEVEL), or a raw one when zstd
 * does not make the frame smaller. */
int store_frame_put_zstd(struct store_enc *e, unsigned part, unsigned version,
    const void *payload, size_t len, int level);
/*
 * Dictionaries (zstd's, trained on a store's own payloads): registered
 * once per process under their id, the CRC-32C of their bytes, so one id
 * is one content whichever file it came from. A frame of codec
 * STORE_CODEC_ZDICT names its dictionary by that id; a reader that has
 * not got it refuses the frame (-EBADMSG, as any other bad frame).
 */
/* Register dict[0..n) (a copy; again: a no-op): its id in *ret_id;
 * -EINVAL when zstd refuses it or its CRC is 0, -ENOMEM. */
int store_zdict_add(const void *dict, size_t n, uint32_t *ret_id);
/* the calling thread's zstd contexts freed (made again at the next use) */
void store_codec_release(void);
/* only its decompression context (the store writer: see writer_trim) */
void store_codec_release_decoder(void);
/* zstd contexts made so far, every thread (d: decompression ones) */
uint64_t store_codec_contexts_made(int d);
/* zstd's heap now (Health.memory.zstd_bytes): Σ over every thread's live
 * contexts of their size at their last use (ZSTD_sizeof_CCtx/_DCtx),
 * plus the registered dictionaries' compression and decompression forms
 * and their vector */
uint64_t store_codec_bytes(void);
/* Whether the dictionary of id is registered. */
bool store_zdict_have(uint32_t id);
/* Tests: forget every dictionary (none may be in use, no store open). */
void store_zdict_reset(void);
/* Train a dictionary of at most cap bytes on the n samples laid end to
 * end in buf (sizes in len[]): 0 and *ret (free it) and *ret_n, or
 * -EINVAL (zstd could not: too few or too alike), -ENOMEM. */
int store_zdict_train(const void *buf, const size_t *len, unsigned n,
    size_t cap, void **ret, size_t *ret_n);
/* A frame compressed with dictionary id (registered: else, and when it
 * does not pay, as store_frame_put_zstd would make it). */
int store_frame_put_zdict(struct store_enc *e, unsigned part, unsigned version,
    const void *payload, size_t len, uint32_t id);

/* The frame in blob[0..n), decoded: -EBADMSG for a bad magic, length,
 * codec, compressed stream or checksum, -ENOMEM (ret untouched either
 * way). A zstd payload is decompressed into ret->buf: release it with
 * store_frame_release() (a no-op for raw frames). */
int store_frame_get(const void *blob, size_t n, struct store_frame *ret);
void store_frame_release(struct store_frame *f);

/* CRC-32C of p[0..n) continuing crc (0 to start): the CPU's
 * instructions where it has them, else a table. */
uint32_t store_crc32c(uint32_t crc, const void *p, size_t n);
/* The table alone (the reference), and the instructions alone:
 * -EOPNOTSUPP where the CPU or the build has none (ret untouched). */
uint32_t store_crc32c_table(uint32_t crc, const void *p, size_t n);
int store_crc32c_hw(uint32_t crc, const void *p, size_t n, uint32_t *ret);

#endif /* VITALSD_STORE_CODEC_H */
