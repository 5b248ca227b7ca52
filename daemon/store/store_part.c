/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tables of each window part, one line each: what store_write.c (a
 * window's rows), store_read.c (reading them back) and the connections'
 * statements iterate. A part's tables live in its store_<signal>.c; a
 * part with nothing in the store would have &store_part_none.
 */
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
