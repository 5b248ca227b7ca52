/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tables of each window part, one line each: what store_write.c (a
 * window's rows), store_read.c (reading them back) and the connections'
 * statements iterate. A part's tables live in its store_<signal>.c; a
 * part with nothing in the store would have &store_part_none.
 */
#include <errno.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "store/store.h"
#include "store_int.h"

const struct store_part store_part_none = { 0 };

const struct store_part *const store_parts[WPART__MAX] = {
	[WPART_SCHED] = &store_sched_part,
	[WPART_GPUMEM] = &store_gpumem_part,
	[WPART_WSS] = &store_wss_part,
	[WPART_TRACE] = &store_trace_part,
	[WPART_CGROUP] = &store_cgroup_part,
	[WPART_FGBG] = &store_fgbg_part,
	[WPART_WCPU] = &store_wcpu_part,
	[WPART_DMABUF] = &store_dmabuf_part,
	[WPART_GPUFREQ] = &store_gpufreq_part,
	[WPART_SYSCALLS] = &store_syscalls_part,
};

int
store_parts_prepare(struct store *s, bool readable)
{
	/* a read connection (store_conn.c) writes nothing, and where the
	 * spool's views shadow the tables an INSERT would not even prepare */
	bool ro = sqlite3_db_readonly(s->db, "main") == 1;
	unsigned i, k;
	int rc;

	for (i = 0; i < WPART__MAX; i++) {
		const struct store_part *p = store_parts[i];

		if (readable && p->load == NULL)
			continue;
		for (k = 0; k < p->nsql && k < STORE_PART_NSTMT; k++)
			if ((!ro || strncmp(p->sql[k], "INSERT", 6) != 0) &&
			    (rc = sqlite3_prepare_v3(s->db, p->sql[k], -1,
				 SQLITE_PREPARE_PERSISTENT, &s->part_st[i][k],
				 NULL)) != SQLITE_OK)
				return rc;
	}
	return SQLITE_OK;
}

void
store_parts_finalize(struct store *s)
{
	unsigned i, k;

	for (i = 0; i < WPART__MAX; i++)
		for (k = 0; k < STORE_PART_NSTMT; k++) {
			sqlite3_finalize(s->part_st[i][k]);
			s->part_st[i][k] = NULL;
		}
}

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
	    store_stmt(s, &s->part_st[bp->id][BP_SEL], bp->sql[BP_SEL]), id,
	    bp->part, bp->version, bp->dec, &p, bp->what);
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
