/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parts kept as one framed blob per window in a table of their own
 * (struct store_blobpart, store_int.h: DMA-BUF, GPU frequency, syscalls):
 * a window's blob written and read back, and the blobs of a range folded
 * into one by the part's merge. A blob that does not decode is counted
 * (blob_errors) and the window reads without the part.
 */
#include <errno.h>

#include "store/store.h"
#include "store_int.h"

/*
 * A part kept as one framed blob per window in a table of its own
 * (struct store_blobpart): its statements are bp->sql, made by
 * STORE_BLOBPART_SQL, and live in s->part_st[bp->id].
 */
int
store_blobpart_put(struct store *s, const struct store_blobpart *bp, int64_t id,
    const struct store_enc *payload)
{
	return store_blob_put(store_stmt(s, &s->part_st[bp->id][BP_INS],
				  bp->sql[BP_INS]),
	    id, bp->part, bp->version, payload);
}

int
store_blobpart_load(struct store *s, const struct store_blobpart *bp,
    int64_t id, struct window *w)
{
	const struct window_part_ops *ops = window_parts[bp->id];
	void *p;
	int r;

	r = store_blob_load(s,
	    store_stmt(s, &s->part_st[bp->id][BP_SEL], bp->sql[BP_SEL]),
	    bp->fold, id, bp->part, bp->version, bp->dec, &p, bp->what);
	if (r < 0)
		return r;
	if (p) {
		void *old = window_part(w, bp->id);

		if (old)
			ops->free(old);
		window_part_set(w, bp->id, p);
	}
	return 0;
}

int
store_blobpart_range(struct store *s, const struct store_blobpart *bp,
    int64_t from_wall_ns, int64_t to_wall_ns, void **ret, uint32_t *ret_windows)
{
	const struct window_part_ops *ops = window_parts[bp->id];
	sqlite3_stmt *st;
	void *acc = NULL, *p;
	uint32_t nw = 0;
	int rc = SQLITE_DONE, r = 0;

	if (s == NULL)
		return -EBADF;
	if (from_wall_ns >= to_wall_ns)
		return -EINVAL;
	if ((st = store_stmt(s, &s->part_st[bp->id][BP_RANGE],
		 bp->sql[BP_RANGE])) == NULL)
		return -ENOTSUP;
	store_bind_named(st, ":from", from_wall_ns);
	store_bind_named(st, ":to", to_wall_ns);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* a window without the part (STORE_FOLD_BLOB: NULL) */
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		r = store_blob_column(s, st, 0, bp->part, bp->version, bp->dec,
		    &p);
		if (r < 0)
			break;
		if (p == NULL)
			continue; /* did not decode: counted */
		r = ops->merge(&acc, p);
		ops->free(p);
		nw++;
	}
	if (r == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = store_fail(s, rc, bp->range_what);
	sqlite3_reset(st);
	if (r < 0) {
		if (acc)
			ops->free(acc);
		return r;
	}
	*ret = acc;
	if (ret_windows)
		*ret_windows = nw;
	return 0;
}
