/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provenance of stored windows (doc/storage.md, "Provenance"). A daemon
 * start writes one row, in the transaction of its first window, keyed by
 * (boot_id, since_mono_ns); a window's provenance is the row of its boot
 * with the latest since_mono_ns not after the window's start. So no
 * window row grows, and a roll-up window (made from one boot's windows)
 * reads the provenance of its first.
 *
 * With batched commits the row goes into the spool with the window and
 * moves with the spool's windows; the spool keeps its copy (one row per
 * daemon start), so a main file pruned of a boot whose windows still wait
 * in the spool gets the row back at the next move. A reader looks in
 * both files.
 */
#include <errno.h>
#include <string.h>

#include "core/provenance.h"
#include "core/util.h"
#include "store/store.h"
#include "store_int.h"

#define PROV_COLS                                                        \
	"boot_id, since_mono_ns, kernel, version, btime_s, fingerprint," \
	" fp_source"

/* clang-format off */
static const char *const prov_sql[STORE_PROV__MAX] = {
	[STORE_PROV_PUT] = "INSERT OR IGNORE INTO main.provenance (" PROV_COLS
	    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[STORE_PROV_GET] = "SELECT " PROV_COLS " FROM main.provenance"
	    " WHERE boot_id = ?1 AND since_mono_ns <= ?2"
	    " ORDER BY since_mono_ns DESC LIMIT 1",
	[STORE_PROV_GET_SPOOL] = "SELECT " PROV_COLS " FROM"
	    " (SELECT * FROM main.provenance WHERE boot_id = ?1 AND"
	    " since_mono_ns <= ?2 UNION ALL SELECT * FROM spool.provenance"
	    " WHERE boot_id = ?1 AND since_mono_ns <= ?2)"
	    " ORDER BY since_mono_ns DESC LIMIT 1",
	[STORE_PROV_MOVE] = "INSERT OR IGNORE INTO main.provenance (" PROV_COLS
	    ") SELECT " PROV_COLS " FROM spool.provenance",
	/* a boot none of whose windows is left (the current boot's row
	 * comes back from the spool, see above) */
	[STORE_PROV_PRUNE] = "DELETE FROM main.provenance AS p WHERE NOT"
	    " EXISTS (SELECT 1 FROM main.windows w WHERE w.boot ="
	    " boot_key(p.boot_id))",
};

/* and a boot row no window names (v24; a put writes its own again): once
 * a pass, not kept prepared */
static const char prune_boot_sql[] =
    "DELETE FROM main.boot AS b WHERE NOT EXISTS (SELECT 1 FROM"
    " main.windows w WHERE w.boot = b.id)";
/* clang-format on */

static sqlite3_stmt *
stmt(struct store *s, enum store_prov_stmt i)
{
	if (s->prov_st[i] == NULL &&
	    sqlite3_prepare_v3(s->db, prov_sql[i], -1,
		SQLITE_PREPARE_PERSISTENT, &s->prov_st[i], NULL) != SQLITE_OK)
		return NULL;
	return s->prov_st[i];
}

void
store_prov_finalize(struct store *s)
{
	unsigned i;

	for (i = 0; i < STORE_PROV__MAX; i++) {
		sqlite3_finalize(s->prov_st[i]);
		s->prov_st[i] = NULL;
	}
}

static void
bind_str(sqlite3_stmt *st, int i, const char *v, size_t max)
{
	sqlite3_bind_text(st, i, v, (int)strnlen(v, max), SQLITE_TRANSIENT);
}

/* In the put's transaction: the row of p unless this handle wrote it. */
int
store_prov_put(struct store *s, const struct provenance *p)
{
	sqlite3_stmt *st;
	int rc;

	if (p->version[0] == '\0' ||
	    (s->prov_written &&
		s->prov_last.since_mono_ns == p->since_mono_ns &&
		provenance_same(&s->prov_last, p)))
		return SQLITE_OK;
	if ((st = stmt(s, STORE_PROV_PUT)) == NULL)
		return sqlite3_errcode(s->db);
	bind_str(st, 1, p->boot_id, sizeof(p->boot_id));
	sqlite3_bind_int64(st, 2, p->since_mono_ns);
	bind_str(st, 3, p->kernel, sizeof(p->kernel));
	bind_str(st, 4, p->version, sizeof(p->version));
	sqlite3_bind_int64(st, 5, p->btime_s);
	bind_str(st, 6, p->fingerprint, sizeof(p->fingerprint));
	sqlite3_bind_int64(st, 7, p->fp_source);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return rc;
	/* taken for written; a rollback (store_prov_forget) says otherwise */
	s->prov_last = *p;
	s->prov_written = true;
	return SQLITE_OK;
}

void
store_prov_forget(struct store *s)
{
	s->prov_written = false;
}

static void
col_str(sqlite3_stmt *st, int i, char *buf, size_t sz)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	snprintf(buf, sz, "%s", t ? t : "");
}

/* w->prov from the stored rows; none found (a window stored before
 * provenance was kept): left empty, not an error. */
int
store_prov_load(struct store *s, struct window *w)
{
	struct provenance *p = &w->prov;
	sqlite3_stmt *st;
	int rc;

	memset(p, 0, sizeof(*p));
	st = stmt(s, s->spool_attached ? STORE_PROV_GET_SPOOL : STORE_PROV_GET);
	if (st == NULL)
		return store_fail(s, sqlite3_errcode(s->db), "provenance");
	sqlite3_bind_text(st, 1, w->boot_id,
	    (int)strnlen(w->boot_id, sizeof(w->boot_id)), SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, w->mono_start_ns);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		col_str(st, 0, p->boot_id, sizeof(p->boot_id));
		p->since_mono_ns = sqlite3_column_int64(st, 1);
		col_str(st, 2, p->kernel, sizeof(p->kernel));
		col_str(st, 3, p->version, sizeof(p->version));
		p->btime_s = sqlite3_column_int64(st, 4);
		col_str(st, 5, p->fingerprint, sizeof(p->fingerprint));
		p->fp_source = (uint32_t)sqlite3_column_int64(st, 6);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "provenance");
	return 0;
}

/* In the move's transaction (store_spool.c). */
int
store_prov_move(struct store *s)
{
	sqlite3_stmt *st = stmt(s, STORE_PROV_MOVE);
	int rc;

	if (st == NULL)
		return sqlite3_errcode(s->db);
	rc = sqlite3_step(st);
	/* not kept between moves, as the moves' own (store_spool.c,
	 * moves_release) */
	sqlite3_finalize(st);
	s->prov_st[STORE_PROV_MOVE] = NULL;
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* In maintenance's instance prune transaction (store_maint.c). */
int
store_prov_prune(struct store *s)
{
	sqlite3_stmt *st = stmt(s, STORE_PROV_PRUNE);
	int rc;

	if (st == NULL)
		return sqlite3_errcode(s->db);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE && sqlite3_changes(s->db) > 0)
		s->prov_written = false; /* ours may be gone: write it again */
	if (rc != SQLITE_DONE)
		return rc;
	return sqlite3_exec(s->db, prune_boot_sql, NULL, NULL, NULL);
}
