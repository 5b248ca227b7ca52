/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What store_bpfrows.c (versions 1 to 3) gives store_bpfrows4.c (version
 * 4 and the reader of every version), and what both give
 * store_bpfkeys.c (the rows' keys alone); no other file includes it.
 */
#ifndef VITALSD_STORE_BPFROWS_INT_H
#define VITALSD_STORE_BPFROWS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store_bpfrows.h"
#include "store/store_codec.h"

#define BYTES_MAX 8   /* a u64's bytes */
#define P4_DERIVED 1u /* version 4's flags bit 0: figures = Σ its thread rows */

/* Rows of one kind (row i at base + i * stride) and the ones not written
 * (skip[i] nonzero; NULL: every row). */
struct rows4 {
	char *base;
	size_t n, stride;
	const uint8_t *skip;
};

#define ROWS4(arr, cnt, skp) \
	((struct rows4){ (char *)(arr), (cnt), sizeof(*(arr)), (skp) })

/* store_bpfrows4.c: version 4's row count (rows of at least min bytes,
 * at most max and what the bytes left hold; past either the decoder
 * fails); its N column of the m rows written of r, into their zeroed u64
 * at off: 0 or -EBADMSG. */
size_t store_bpfrows_count4(struct store_dec *d, size_t max, size_t min);
int store_bpfrows_nums(struct store_dec *d, const struct rows4 *r, size_t m,
    size_t off);
/* A thread's tgid from its version-4 code, its tid and the previous
 * thread row's tgid (0 before the first): false outside 32 bits. */
bool store_bpfrows_tgid4(uint64_t code, int32_t tid, int32_t prev,
    int32_t *ret);

/* The length of a histogram, trailing empty slots left out, and its sum. */
unsigned store_bpfrows_slots(const uint32_t h[VITALS_BPF_RQ_SLOTS],
    uint64_t *ret_sum);
/* An int32 from a running sum of steps; false when it leaves the range. */
bool store_bpfrows_step32(struct store_dec *d, int64_t *acc, int32_t *ret);
/* A thread's tgid from its tid and tid − tgid; false when either leaves
 * the int32 range (checked before any arithmetic that could overflow). */
bool store_bpfrows_tgid(int32_t tid, int64_t off, int32_t *ret);
/* A uid from a running sum of steps; false when it leaves 32 bits. */
bool store_bpfrows_uid_step(struct store_dec *d, int64_t *acc, uint32_t *ret);
/* Version 2's rows from d (the payload's len bytes), into b (zeroed; the
 * caller's to release either way): 0, -EBADMSG, -ENOMEM. */
int store_bpfrows_get2(struct store_dec *d, size_t len, size_t max,
    struct store_bpfrows *b);
/* Version 3's tail after them: 0 or -EBADMSG. */
int store_bpfrows_get3_tail(struct store_dec *d, struct store_bpfrows *b);

#endif /* VITALSD_STORE_BPFROWS_INT_H */
