/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's named counters and gauges as a compact payload (store_kv.c),
 * keyed by small key ids that the store's key dictionary maps to (kind,
 * key). Pure encoding: the caller supplies the ids. Also the gauge
 * encoding the other parts share.
 */
#ifndef VITALSD_STORE_KV_H
#define VITALSD_STORE_KV_H

#include <stddef.h>
#include <stdint.h>

#include "store/store_codec.h"
#include "window/window.h"

/* The frame's part number and the version written (store_codec.h): 2
 * (the key ids, the gauges' n and forms in columns) since schema v21;
 * 1 read. */
#define STORE_KV_PART 2
#define STORE_KV_VERSION 2

struct store_kv_count {
	uint32_t key; /* key id */
	uint64_t value;
};

struct store_kv_gauge {
	uint32_t key; /* key id */
	struct gauge g;
};

struct store_kv {
	struct store_kv_count *count;
	size_t ncount;
	struct store_kv_gauge *gauge;
	size_t ngauge;
};

/* A gauge: n, and when n > 0 min, max, sum and last, bit for bit. A gauge
 * with n == 0 has no figures (NULL in a table) and reads back zeroed. */
void store_enc_gauge(struct store_enc *e, const struct gauge *g);
void store_dec_gauge(struct store_dec *d, struct gauge *ret);

/* Counters c[0..nc) and gauges g[0..ng), each list's key ids ascending
 * without repeats (-EINVAL otherwise), as version 2; _v1 as version 1
 * (tests, and what older stores hold). */
int store_kv_put(struct store_enc *e, const struct store_kv_count *c, size_t nc,
    const struct store_kv_gauge *g, size_t ng);
int store_kv_put_v1(struct store_enc *e, const struct store_kv_count *c,
    size_t nc, const struct store_kv_gauge *g, size_t ng);
/* The lists of p[0..len), a payload of that version (1 or 2, else
 * -EBADMSG), at most max entries each (-EBADMSG past it, or for any
 * malformed byte). Release *ret with store_kv_release(). */
int store_kv_get(const void *p, size_t len, unsigned version, size_t max,
    struct store_kv *ret);
void store_kv_release(struct store_kv *kv);

#endif /* VITALSD_STORE_KV_H */
