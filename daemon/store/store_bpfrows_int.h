/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What store_bpfrows.c (versions 1 to 3) gives store_bpfrows4.c (version
 * 4 and the reader of every version); no other file includes it.
 */
#ifndef VITALSD_STORE_BPFROWS_INT_H
#define VITALSD_STORE_BPFROWS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store_bpfrows.h"
#include "store/store_codec.h"

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
