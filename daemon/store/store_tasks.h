/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's task rows as a compact payload (store_tasks.c), keyed by
 * instance ids. Pure encoding: the store maps ids to identities.
 */
#ifndef VITALSD_STORE_TASKS_H
#define VITALSD_STORE_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store_codec.h"
#include "window/window.h"

/* The frame's part and version of a window's task rows (procs and
 * threads alike: which list a blob holds is its column). Version 3 is
 * written (columns, RSS by reference within the blob), 1 and 2 still
 * read. */
#define STORE_TASKS_PART 1
#define STORE_TASKS_VERSION 3

/* Rows t[0..n) with their instance ids, ascending without repeats
 * (-EINVAL otherwise), as version 3. Identity fields are not written. */
int store_tasks_put(struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n);
/* The same as version 2 (tests, and what v21–v24 stores hold). */
int store_tasks_put_v2(struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n);
/* The same as version 1 (tests, and what older stores hold). */
int store_tasks_put_v1(struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n);
/* The rows of p[0..len), a payload of that version (1, 2 or 3; any other:
 * -EBADMSG): at most max of them (-EBADMSG past it, or for any malformed
 * byte); figures only, identities zeroed. Caller frees *ret and
 * *ret_iid. */
int store_tasks_get(const void *p, size_t len, unsigned version, size_t max,
    struct window_task **ret, uint64_t **ret_iid, size_t *ret_n);

/* Only the rows of the instance ids want[0..nwant) (ascending): version 1
 * read up to the last of them (the frame's CRC vouches for the bytes
 * after), version 2 through every column (the others' figures read past,
 * not kept), version 3 decoded whole (a row's RSS may be an earlier
 * row's); malformed rows on the way: -EBADMSG. Caller frees *ret,
 * *ret_iid. */
int store_tasks_find(const void *p, size_t len, unsigned version, size_t max,
    const uint64_t *want, size_t nwant, struct window_task **ret,
    uint64_t **ret_iid, size_t *ret_n);

#endif /* VITALSD_STORE_TASKS_H */
