/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set part of a window in the store (schema v7,
 * doc/storage.md): one window_wss row per target, one window_wss_region
 * row per region of the target's last pass in the window. Written, not
 * read back: roll-ups drop it with the level-0 windows (doc/wss.md).
 * Called by store.c inside its transaction and lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window/window.h"
#include "wss/wss.h"
#include "store_int.h"

enum { SW_INS_TARGET, SW_INS_REGION };

static const char *const sw_sql[] = {
	[SW_INS_TARGET] =
	    "INSERT INTO window_wss (window_id, pid, starttime,"
	    " name, mode, library, method, interval_ms, passes, pass_ns_sum,"
	    " pass_ns_max, pass_cpu_ns, maps_changes, read_errors, pfn_zeroed,"
	    " ended) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[SW_INS_REGION] =
	    "INSERT INTO window_wss_region (window_id, pid,"
	    " starttime, vaddr_start, vaddr_end, label, pages, resident,"
	    " accessed, idle, not_resident, gone)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
};

static int
put_target(struct store *s, int64_t id, const struct window_wss *t)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_WSS][SW_INS_TARGET],
	    sw_sql[SW_INS_TARGET]);

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, t->pid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)t->starttime);
	sqlite3_bind_text(st, 4, t->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, wss_mode_name(t->mode), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, t->lib, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, wss_method_name(t->method), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, t->interval_ms);
	sqlite3_bind_int64(st, 9, t->passes);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)t->pass_ns_sum);
	sqlite3_bind_int64(st, 11, (sqlite3_int64)t->pass_ns_max);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)t->pass_cpu_ns);
	sqlite3_bind_int64(st, 13, t->maps_changes);
	sqlite3_bind_int64(st, 14, t->read_errors);
	sqlite3_bind_int64(st, 15, t->pfn_zeroed);
	sqlite3_bind_int(st, 16, t->ended);
	return store_run(st);
}

static int
put_region(struct store *s, int64_t id, const struct window_wss *t,
    const struct window_wss_region *g)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_WSS][SW_INS_REGION],
	    sw_sql[SW_INS_REGION]);

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, t->pid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)t->starttime);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)g->start);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)g->end);
	sqlite3_bind_text(st, 6, g->label, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, g->pages);
	sqlite3_bind_int64(st, 8, g->resident);
	sqlite3_bind_int64(st, 9, g->accessed);
	sqlite3_bind_int64(st, 10, g->idle);
	sqlite3_bind_int64(st, 11, g->not_resident);
	sqlite3_bind_int(st, 12, g->gone);
	return store_run(st);
}

static int
store_wss_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_wss_part *p = window_wss(w);
	size_t i, k;
	int rc = SQLITE_OK;

	for (i = 0; p && i < p->ntargets && rc == SQLITE_OK; i++) {
		const struct window_wss *t = &p->target[i];

		rc = put_target(s, id, t);
		for (k = 0; k < t->nregions && rc == SQLITE_OK; k++)
			rc = put_region(s, id, t, &t->regions[k]);
	}
	return rc;
}

/* written, never read back into a window (doc/wss.md) */
const struct store_part store_wss_part = {
	.sql = sw_sql,
	.nsql = sizeof(sw_sql) / sizeof(sw_sql[0]),
	.put = store_wss_put,
};
