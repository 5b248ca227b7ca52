/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Batched commits (doc/storage.md, "Batched commits"). Every commit to the
 * main file costs flash far beyond the bytes it adds: the WAL frames of
 * each page it touches, the -shm index and, later, the checkpoint. So a
 * closed window is committed at once into the spool, a database of the
 * same schema on a RAM file system, and the spool's windows move into the
 * main file in one transaction every commit_s seconds, before maintenance
 * and at close. A crash of the daemon loses nothing the spool holds (the
 * next open moves it); a power cut loses at most commit_s of windows.
 *
 * Ids: one counter (id_hwm, on the main store) hands out every window id
 * of both files, so a window keeps its id when it moves and a roll-up in
 * the main file never takes an id a waiting window has.
 *
 * Readers (store_conn.c) attach the spool too and see both through
 * temporary views: a spool window counts only while the main file has no
 * window of its id. A move commits the main file first and empties the
 * spool after, so between the two a window is in both and counted once;
 * a reader takes its spool snapshot before its main one, so it never
 * misses a window that moved in between.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "store/store.h"
#include "store_int.h"

/* statements on the main store's connection: SP__MAX, then one move per
 * table (windows first) */
#define SPOOL_TABLES_MAX (STORE_SPOOL_NSTMT - SP__MAX)
#define SPOOL_MAX_BYTES (16ULL << 20) /* the spool's own size bound */
#define SPOOL_COMMIT_S_DEFAULT 60

enum {
	SP_PICK,       /* the spool's windows the main file has not got */
	SP_CLEAR,      /* forget the picked ids */
	SP_EMPTY,      /* empty the spool */
	SP_PENDING,    /* windows in the spool */
	SP_MAX_ID,     /* the largest id of either file */
	SP_HAVE,       /* the main file already has this window */
	SP_MAX_IID,    /* the largest instance id of either file */
	SP_EMPTY_INST, /* the spool's instance rows, once moved */
	SP_INST,       /* move them: new ones in, until_ns raised */
	SP_MAX_KEY,    /* the largest key id of either file */
	SP_KEYS,       /* the spool's new keys into the main file */
	SP_EMPTY_KEYS, /* the spool's keys, once moved */
	SP_BOOTS,      /* the spool's boots into the main file (v24) */
	SP__MAX
};

/* clang-format off */
static const char *const sp_sql[SP__MAX] = {
	[SP_PICK] =
	    "INSERT INTO temp.spool_ids SELECT s.id FROM spool.windows s"
	    " WHERE NOT EXISTS (SELECT 1 FROM main.windows m"
	    "  WHERE m.id = s.id)"
	    " AND NOT EXISTS (SELECT 1 FROM main.windows m"
	    "  WHERE m.wall_start_ns = s.wall_start_ns AND m.boot = s.boot"
	    "  AND m.level = s.level AND m.mono_start_ns = s.mono_start_ns)"
	    " AND NOT (s.level = 0 AND s.boot != 0 AND EXISTS"
	    "  (SELECT 1 FROM main.windows m INDEXED BY windows_roll"
	    "  WHERE m.boot = s.boot"
	    "  AND m.level > 0 AND m.mono_start_ns <= s.mono_start_ns"
	    "  AND m.mono_end_ns >= s.mono_end_ns))",
	[SP_CLEAR] = "DELETE FROM temp.spool_ids",
	[SP_EMPTY] = "DELETE FROM spool.windows",
	[SP_PENDING] = "SELECT count(*) FROM spool.windows",
	[SP_MAX_ID] = "SELECT max(coalesce((SELECT max(id) FROM main.windows),"
	    " 0), coalesce((SELECT max(id) FROM spool.windows), 0))",
	[SP_HAVE] =
	    "SELECT 1 FROM main.windows WHERE wall_start_ns = ?4 AND"
	    " boot = boot_key(?1) AND level = ?2 AND mono_start_ns = ?3",
	[SP_MAX_IID] = "SELECT max(coalesce((SELECT max(iid) FROM"
	    " main.instance), 0), coalesce((SELECT max(iid) FROM"
	    " spool.instance), 0))",
	[SP_EMPTY_INST] = "DELETE FROM spool.instance",
	[SP_MAX_KEY] = "SELECT max(coalesce((SELECT max(id) FROM"
	    " main.window_key), 0), coalesce((SELECT max(id) FROM"
	    " spool.window_key), 0))",
	/* a key's row never changes: one the main file has stays */
	[SP_KEYS] = "INSERT INTO main.window_key (id, kind, key)"
	    " SELECT id, kind, key FROM spool.window_key WHERE true"
	    " ON CONFLICT DO NOTHING",
	[SP_EMPTY_KEYS] = "DELETE FROM spool.window_key",
	/* a boot's id is its text's (store_boot_key): one the main file
	 * has is the same row */
	[SP_BOOTS] = "INSERT INTO main.boot (id, boot_id)"
	    " SELECT id, boot_id FROM spool.boot WHERE true"
	    " ON CONFLICT DO NOTHING",
	/* SP_INST is made from the table's columns (attach) */
};
/* clang-format on */

/* Tables of a database (schema `db`) that move with their window: windows
 * first, then every table with a window_id column, and the instance table
 * and key dictionary (moved by SP_INST and SP_KEYS). Also the readers'
 * views (store_conn.c). */
static const char tables_sql[] =
    "SELECT m.name FROM %s.sqlite_schema AS m WHERE m.type = 'table' AND"
    " (m.name IN ('windows', 'instance', 'window_key', 'boot') OR EXISTS (SELECT 1 FROM pragma_table_info(m.name,"
    " '%s') AS c WHERE c.name = 'window_id')) AND m.name NOT GLOB 'l0_*'"
    " ORDER BY m.name != 'windows',"
    " m.name";

/* A statement run to its end; unlike store_run, an INSERT that adds no
 * row is no news here (most tables have none for most windows). */
static int
run(sqlite3_stmt *st)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* "a, b, c": the columns of table t in schema db, by the main file's
 * order (both files hold the same columns; their order is the main
 * file's). NULL on failure. */
static char *
columns(sqlite3 *db, const char *schema, const char *t)
{
	sqlite3_stmt *st;
	struct vbuf b = { 0 };
	bool oom = false;
	int rc;

	if (sqlite3_prepare_v2(db,
		"SELECT name FROM pragma_table_info(?1, ?2) ORDER BY cid", -1,
		&st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (vbuf_printf(&b, "%s\"%s\"", b.len ? ", " : "",
			(const char *)sqlite3_column_text(st, 0)) < 0)
			oom = true;
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || b.len == 0 || oom) {
		vbuf_release(&b);
		return NULL;
	}
	return b.p;
}

/* For each table of the main file that moves, call fn(name, cols). */
int
store_spool_tables(sqlite3 *db,
    int (*fn)(sqlite3 *db, const char *t, const char *cols, void *arg),
    void *arg)
{
	char sql[sizeof(tables_sql) + 16];
	sqlite3_stmt *st;
	int rc, r = 0;

	snprintf(sql, sizeof(sql), tables_sql, "main", "main");
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		char *cols = columns(db, "main", t);

		r = cols ? fn(db, t, cols, arg) : SQLITE_NOMEM;
		free(cols);
	}
	sqlite3_finalize(st);
	if (r != 0)
		return r;
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
prepare_move(sqlite3 *db, const char *t, const char *cols, void *arg)
{
	struct store *s = arg;
	struct vbuf b = { 0 };
	int rc;

	if (strcmp(t, "instance") == 0 || strcmp(t, "window_key") == 0 ||
	    strcmp(t, "boot") == 0)
		return SQLITE_OK; /* SP_INST, SP_KEYS, SP_BOOTS */
	if (s->spool_nst == STORE_SPOOL_NSTMT)
		return SQLITE_FULL;
	/* level 0's task blobs and parts, with the folded parts' blobs,
	 * go to their spans' tables (store_span_move) */
	rc = vbuf_printf(&b,
	    "INSERT INTO main.\"%s\" (%s) SELECT %s FROM spool.\"%s\""
	    " WHERE %s IN (SELECT id FROM temp.spool_ids%s)",
	    t, cols, cols, t, strcmp(t, "windows") ? "window_id" : "id",
	    store_span_on(s) &&
		    (strcmp(t, "window_tasks") == 0 ||
			strcmp(t, "window_parts") == 0 ||
			store_span_folded(t)) ?
		" WHERE id NOT IN (SELECT id FROM spool.windows WHERE"
		" level = 0)" :
		"");
	if (rc < 0) {
		vbuf_release(&b);
		return SQLITE_NOMEM;
	}
	rc = sqlite3_prepare_v3(db, b.p, -1, SQLITE_PREPARE_PERSISTENT,
	    &s->spool_st[s->spool_nst], NULL);
	vbuf_release(&b);
	if (rc == SQLITE_OK)
		s->spool_nst++;
	return rc;
}

/* The spool store: the main one's settings, no roll-ups or retention
 * (its windows move on long before), its own small size bound. */
static int
spool_store_open(struct store *s)
{
	struct store_opts o = s->o;
	int r;

	o.spool_path = NULL;
	o.rollup1_s = o.rollup2_s = 0;
	o.retain_s = 0;
	o.max_bytes = SPOOL_MAX_BYTES;
	o.no_spans = true; /* emptied at every move: plain tables */
	if ((r = store_db_open(s->o.spool_path, &o, &s->spool)) < 0)
		return r;
	return 0;
}

/* Statement i of sp_sql, or the instance move made from its columns: an
 * instance new to the main file goes in, one it has takes the spool's
 * until_ns when that is later (the rest of the row never changes). */
static int
prepare_sp(struct store *s, unsigned i)
{
	struct vbuf b = { 0 };
	char *cols;
	int rc;

	if (i != SP_INST)
		return sqlite3_prepare_v3(s->db, sp_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &s->spool_st[i], NULL);
	if ((cols = columns(s->db, "main", "instance")) == NULL)
		return SQLITE_ERROR;
	rc = vbuf_printf(&b,
	    "INSERT INTO main.instance (%s) SELECT %s FROM spool.instance"
	    " WHERE true ON CONFLICT (iid) DO UPDATE SET until_ns ="
	    " excluded.until_ns WHERE excluded.until_ns > until_ns"
	    " ON CONFLICT DO NOTHING",
	    cols, cols);
	free(cols);
	if (rc < 0) {
		vbuf_release(&b);
		return SQLITE_NOMEM;
	}
	rc = sqlite3_prepare_v3(s->db, b.p, -1, SQLITE_PREPARE_PERSISTENT,
	    &s->spool_st[i], NULL);
	vbuf_release(&b);
	return rc;
}

/* Attach the spool to the main connection and prepare the moves: the
 * statements live and die with that connection (store.c, db_close). */
static int
attach(struct store *s)
{
	sqlite3_stmt *st;
	int64_t max = 0, max_iid = 0, max_key = 0, pending = 0;
	unsigned i;
	int rc;

	if (sqlite3_prepare_v2(s->db, "ATTACH ?1 AS spool", -1, &st, NULL) !=
	    SQLITE_OK)
		return store_fail(s, sqlite3_errcode(s->db), "spool: attach");
	sqlite3_bind_text(st, 1, s->spool->path, -1, SQLITE_STATIC);
	rc = store_run(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "spool: attach");
	s->spool_attached = true;
	rc = sqlite3_exec(s->db,
	    "CREATE TEMP TABLE IF NOT EXISTS spool_ids"
	    " (id INTEGER PRIMARY KEY)",
	    NULL, NULL, NULL);
	for (i = 0; i < SP__MAX && rc == SQLITE_OK; i++)
		if ((rc = prepare_sp(s, i)) == SQLITE_OK)
			s->spool_nst = i + 1;
	if (rc == SQLITE_OK)
		rc = store_spool_tables(s->db, prepare_move, s);
	if (rc == SQLITE_OK)
		rc = store_run_int(s->spool_st[SP_MAX_ID], &max);
	if (rc == SQLITE_OK)
		rc = store_run_int(s->spool_st[SP_MAX_IID], &max_iid);
	if (rc == SQLITE_OK)
		rc = store_run_int(s->spool_st[SP_MAX_KEY], &max_key);
	/* a leftover spool whose ids a run without it gave away
	 * (store_spool_ids.c): made to agree before anything moves */
	if (rc == SQLITE_OK)
		rc = store_run_int(s->spool_st[SP_PENDING], &pending);
	if (rc == SQLITE_OK && pending > 0) {
		store_inst_leftover(s);
		rc = store_spool_fix_ids(s, &max, &max_iid, &max_key);
	}
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "spool: prepare");
	/* the spool's instances take the main store's ids (store_inst.c) */
	s->spool->inst_main = s;
	store_inst_seed(s, max_iid);
	store_keys_seed(s, max_key); /* and its keys (store_keys.c) */
	/* one counter for the ids of both files, from the largest either
	 * holds (or held: it never goes back while the handle lives) */
	if (max > s->id_next)
		s->id_next = max;
	s->id_hwm = &s->id_next;
	s->spool->id_hwm = &s->id_next;
	return 0;
}

/* Forget the attachment (its statements too) on a live connection. */
static void
detach(struct store *s)
{
	unsigned i;

	for (i = 0; i < s->spool_nst; i++) {
		sqlite3_finalize(s->spool_st[i]);
		s->spool_st[i] = NULL;
	}
	s->spool_nst = 0;
	store_sum_spool_gone(s);
	if (s->spool_attached && s->db != NULL)
		(void)sqlite3_exec(s->db, "DETACH spool", NULL, NULL, NULL);
	s->spool_attached = false;
	/* keys the spool held may not be in the next one; nor instance rows
	 * (the cache's raises among them: store_inst.c) */
	store_keys_forget(s);
	store_inst_forget(s);
}

/*
 * The moves' statements between two moves: a move runs every commit_s
 * (15 min by default) and its statements (one per table, ~180 KiB of
 * SQLite's heap on the main connection, doc/storage.md "The moves'
 * statements") would sit prepared in between. attach() prepares them
 * all (they check the schema), each move prepares again what is missing
 * (moves_prepare) and its end finalizes them (moves_release): only what
 * a put uses (SP_HAVE) stays. A prepare that fails fails that move,
 * counted, and its windows wait in the spool for the next.
 */
static bool
move_only(unsigned i)
{
	return i != SP_HAVE;
}

static void
moves_release(struct store *s)
{
	unsigned i;

	for (i = 0; i < s->spool_nst; i++)
		if (move_only(i)) {
			sqlite3_finalize(s->spool_st[i]);
			s->spool_st[i] = NULL;
		}
	if (s->spool_nst > SP__MAX)
		s->spool_nst = SP__MAX;
}

static int
moves_prepare(struct store *s)
{
	unsigned i;
	int rc = SQLITE_OK;

	for (i = 0; i < SP__MAX && rc == SQLITE_OK; i++)
		if (s->spool_st[i] == NULL)
			rc = prepare_sp(s, i);
	if (rc == SQLITE_OK && s->spool_nst <= SP__MAX) {
		s->spool_nst = SP__MAX;
		rc = store_spool_tables(s->db, prepare_move, s);
	}
	return rc;
}

/*
 * With the main file open (lock held, or the handle not yet shared): open
 * the spool (once per handle), attach it, and move what it holds (a
 * daemon that died left it). A spool that cannot be had is said in the
 * stats and the store commits window by window instead; the next put
 * tries again after a reopen of the main file, not after a failure.
 */
static void
spool_up(struct store *s)
{
	int64_t n = 0;
	int r;

	if (s->spool_attached || s->spool_tried || s->db == NULL ||
	    s->o.spool_path == NULL || s->o.spool_path[0] == '\0')
		return;
	s->spool_tried = true; /* once per connection (store.c, db_close) */
	s->st.spool_on = false;
	if (s->spool == NULL && (r = spool_store_open(s)) < 0)
		goto off;
	if ((r = attach(s)) < 0)
		goto off;
	if (store_run_int(s->spool_st[SP_PENDING], &n) == SQLITE_OK)
		s->st.spool_pending = (uint64_t)n;
	s->st.spool_on = true;
	s->st.spool_err = 0;
	if (n > 0)
		(void)store_spool_flush_locked(s);
	moves_release(s); /* prepared again by the next move */
	return;
off:
	s->st.spool_err = r;
	detach(s);
}

/*
 * The move's statements, inside the caller's open transaction: every
 * spool window the main file lacks goes into it (the size bound enforced
 * with them). Lock held. Nothing leaves the spool here: that waits for
 * the commit (store_spool_let_go).
 */
int
store_spool_move(struct store *s, struct store_move *m)
{
	sqlite3_stmt **tab = s->spool_st;
	unsigned i;
	int rc, r;

	memset(m, 0, sizeof(*m));
	m->t0 = clock_ns(CLOCK_MONOTONIC);
	m->busy0 = s->busy_ns;
	m->del0 = s->st.deleted_size;
	/* attached by the caller before its transaction (ATTACH cannot run
	 * inside one): store_spool_attach */
	if (!s->spool_attached || s->db == NULL)
		return 0;
	m->on = true;
	if ((rc = moves_prepare(s)) != SQLITE_OK)
		return store_fail(s, rc, "spool: prepare");
	rc = run(tab[SP_CLEAR]);
	if (rc == SQLITE_OK)
		rc = run(tab[SP_PICK]);
	m->moved = rc == SQLITE_OK ? sqlite3_changes(s->db) : 0;
	for (i = SP__MAX; i < s->spool_nst && rc == SQLITE_OK; i++)
		if ((rc = run(tab[i])) == SQLITE_OK && i == SP__MAX &&
		    sqlite3_changes(s->db) != m->moved)
			rc = SQLITE_CORRUPT; /* not what was picked */
	if (rc == SQLITE_OK && store_span_on(s))
		rc = store_span_move(s);
	if (rc == SQLITE_OK)
		rc = run(tab[SP_INST]);
	if (rc == SQLITE_OK)
		rc = run(tab[SP_KEYS]);
	if (rc == SQLITE_OK)
		rc = run(tab[SP_BOOTS]);
	/* the main file's summaries of the spans the moved windows join;
	 * with summaries kept (SUMF_ID prepared) a statement that cannot be
	 * had would leave them stale: the move fails instead */
	if (rc == SQLITE_OK && m->moved > 0) {
		sqlite3_stmt *f = store_sum_forget_stmt(s, SUMF_MOVED);

		if (f == NULL && store_sum_forget_stmt(s, SUMF_ID) != NULL)
			rc = SQLITE_NOMEM;
		else
			rc = store_sum_forget_run(s, f);
	}
	if (rc == SQLITE_OK)
		rc = store_prov_move(s);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "spool: move");
	if (m->moved > 0 && s->o.max_bytes &&
	    (r = store_enforce_size(s, s->id_next)) < 0)
		return r;
	return 0;
}

/* After a reopen of the main file, attach the spool again (a put or a
 * pass does this before its transaction). Lock held. */
void
store_spool_attach(struct store *s)
{
	if (!s->spool_attached)
		spool_up(s);
}

/*
 * After the transaction holding a move: committed, the main file has the
 * windows and now, and only now, the spool lets go of them (a crash in
 * between leaves them in both; the next move skips them). Not committed:
 * they stay in the spool for the next move, counted as a failed batch.
 */
static int
let_go(struct store *s, const struct store_move *m, bool committed)
{
	sqlite3_stmt **tab = s->spool_st;
	int64_t dt;
	int rc;

	if (!m->on)
		return 0;
	if (!committed) {
		(void)run(tab[SP_CLEAR]);
		s->st.deleted_size = m->del0;
		s->st.spool_failures++;
		return 0;
	}
	/* how long the commit waited for readers' SHARED locks to go */
	store_busy_note(true, s->busy_ns - m->busy0);
	(void)run(tab[SP_CLEAR]);
	s->st.spool_flushes++;
	s->st.spool_moved += (uint64_t)m->moved;
	if ((rc = run(tab[SP_EMPTY])) != SQLITE_OK ||
	    (rc = run(tab[SP_EMPTY_INST])) != SQLITE_OK ||
	    (rc = run(tab[SP_EMPTY_KEYS])) != SQLITE_OK) {
		/* in both files now: readers and the next move count them
		 * once, but nothing may delete them from the main file (a
		 * roll-up, retention) until the spool has let go */
		s->st.spool_failures++;
		return store_fail(s, rc, "spool: empty");
	}
	store_inst_moved(s);
	s->st.spool_pending = 0;
	store_after_write(s);
	dt = clock_ns(CLOCK_MONOTONIC) - m->t0;
	s->st.flush_ns_last = (uint64_t)dt;
	if ((uint64_t)dt > s->st.flush_ns_max)
		s->st.flush_ns_max = (uint64_t)dt;
	return 0;
}

int
store_spool_let_go(struct store *s, const struct store_move *m, bool committed)
{
	int r = let_go(s, m, committed);

	if (m->on)
		moves_release(s); /* until the next move (moves_prepare) */
	return r;
}

/*
 * A move in a transaction of its own (at open, a put's trigger, a flush):
 * on failure the windows stay in the spool for the next try. Lock held.
 */
int
store_spool_flush_locked(struct store *s)
{
	struct store_move m;
	int rc, r;

	if (!s->spool_attached)
		spool_up(s);
	if (!s->spool_attached || s->db == NULL)
		return 0;
	if ((rc = store_run(store_ws(s, WS_BEGIN))) != SQLITE_OK) {
		r = store_fail(s, rc, "spool: begin");
		s->st.spool_failures++;
		store_note_write_error(s, r);
		return r;
	}
	if ((r = store_spool_move(s, &m)) == 0 &&
	    (rc = store_run(store_ws(s, WS_COMMIT))) != SQLITE_OK)
		r = store_fail(s, rc, "spool: commit");
	if (r < 0) {
		store_rollback(s);
		(void)store_spool_let_go(s, &m, false);
		store_note_write_error(s, r);
		return r;
	}
	return store_spool_let_go(s, &m, true);
}

/*
 * How often the writer's maintenance passes should run: a pass moves the
 * spool first, so passes every minute would make every batch a minute
 * long whatever commit_s says. With a spool, one pass per commit_s (at
 * least a minute): the passes then do the moves and a put's own trigger
 * (commit_s after the first waiting window, 10 s later) seldom fires.
 */
unsigned
store_maintain_every_s(const struct store *s, unsigned min_s)
{
	unsigned c;

	if (s == NULL || s->o.spool_path == NULL || s->o.spool_path[0] == '\0')
		return min_s;
	c = s->o.commit_s ? s->o.commit_s : SPOOL_COMMIT_S_DEFAULT;
	return c > min_s ? c : min_s;
}

int
store_flush(struct store *s)
{
	int r;

	if (s == NULL)
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = store_spool_flush_locked(s);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * One closed window into the spool (lock held): 1 when it went there,
 * 0 when the main file already has it (a replay), < 0 when the spool
 * failed and the caller writes it to the main file itself.
 */
static int
spool_put(struct store *s, const struct window *w)
{
	sqlite3_stmt *st = s->spool_st[SP_HAVE];
	int64_t have = 0, now, span = w->wall_end_ns - w->wall_start_ns;
	uint64_t evicted, moved_aside;
	unsigned commit_s;
	int rc, r;

	sqlite3_bind_text(st, 1, w->boot_id,
	    (int)strnlen(w->boot_id, sizeof(w->boot_id)), SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, w->level);
	sqlite3_bind_int64(st, 3, w->mono_start_ns);
	sqlite3_bind_int64(st, 4, w->wall_start_ns);
	if ((rc = store_run_int(st, &have)) != SQLITE_OK)
		return store_fail(s, rc, "spool: replay check");
	if (have)
		return 0;
	/* readers bound their range scans by the longest window (of both
	 * files): raised before the spool commits a longer one */
	if (span > s->max_span_ns)
		__atomic_store_n(&s->max_span_ns, span, __ATOMIC_RELEASE);
	pthread_mutex_lock(&s->spool->lock);
	evicted = s->spool->st.deleted_size;
	moved_aside = s->spool->st.corrupt_moved;
	r = store_put_locked(s->spool, w);
	/* the spool's own bound dropped waiting windows (moves failing for
	 * long): counted where the daemon reports sizes */
	s->st.deleted_size += s->spool->st.deleted_size - evicted;
	/* a damaged spool replaced by a new file: attach that one */
	if (s->spool->st.corrupt_moved != moved_aside) {
		pthread_mutex_unlock(&s->spool->lock);
		detach(s);
		if (r < 0)
			return r;
		s->st.windows_written++; /* into the new file */
		return 1;
	}
	pthread_mutex_unlock(&s->spool->lock);
	if (r < 0) {
		s->st.spool_err = r;
		return r;
	}
	now = clock_ns(CLOCK_MONOTONIC);
	if (s->st.spool_pending++ == 0)
		s->spool_first_ns = now;
	s->st.windows_written++;
	commit_s = s->o.commit_s ? s->o.commit_s : SPOOL_COMMIT_S_DEFAULT;
	if (now - s->spool_first_ns >= (int64_t)commit_s * NSEC_PER_SEC)
		(void)store_spool_flush_locked(s);
	return 1;
}

/* ------------------------------------------------------ the public calls */

/* The spool store: the main one's settings, no roll-ups or retention
 * (its windows move on long before), its own small size bound. */
int
store_open(const char *path, const struct store_opts *o, struct store **ret)
{
	int r;

	if ((r = store_db_open(path, o, ret)) < 0)
		return r;
	spool_up(*ret);
	return 0;
}

/* w is the window whose last put failed (s->failed). */
static bool
failed_is(const struct store *s, const struct window *w)
{
	return s->failed.set && s->failed.level == w->level &&
	    s->failed.mono_start_ns == w->mono_start_ns &&
	    s->failed.wall_start_ns == w->wall_start_ns &&
	    strncmp(s->failed.boot_id, w->boot_id, sizeof(s->failed.boot_id)) ==
	    0;
}

static void
failed_set(struct store *s, const struct window *w)
{
	snprintf(s->failed.boot_id, sizeof(s->failed.boot_id), "%.*s",
	    (int)strnlen(w->boot_id, sizeof(w->boot_id)), w->boot_id);
	s->failed.level = w->level;
	s->failed.mono_start_ns = w->mono_start_ns;
	s->failed.wall_start_ns = w->wall_start_ns;
	s->failed.set = true;
}

int
store_put(struct store *s, const struct window *w)
{
	uint64_t written0;
	bool direct, retry;
	int r = 0;

	if (s == NULL) /* s->db: under the lock (store_recover) */
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	written0 = s->st.windows_written;
	retry = failed_is(s, w);
	/* into the spool when there is one; a spool that fails hands what
	 * it has to the main file first, then the window goes there too.
	 * While the spool holds windows it could not move, nothing goes to
	 * the main file past it (its instances would take other ids there):
	 * the error goes back and the writer tries again. A -shm fault
	 * since the last call: reopened first, so no move runs on an index
	 * it emptied (store_heal_reopen). */
	store_heal_reopen(s);
	spool_up(s);
	direct = !s->spool_attached;
	if (!direct && (r = spool_put(s, w)) < 0) {
		retry = true; /* the spool's failed try may have landed */
		direct = (r = store_spool_flush_locked(s)) == 0;
	}
	if (direct)
		r = store_put_locked(s, w);
	else if (r > 0)
		r = 0;
	/* Stored, and not counted: a replay. Of a window whose put failed
	 * (this call's spool try, or an earlier call's), the failed try
	 * landed after all: this window's write, counted now. */
	if (r == 0 && retry && s->st.windows_written == written0)
		s->st.windows_written++;
	if (r < 0)
		failed_set(s, w);
	else if (retry)
		s->failed.set = false;
	store_heal_reopen(s);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static void
unlink_side(const char *path, const char *suffix)
{
	char p[4096];

	if (snprintf(p, sizeof(p), "%s%s", path, suffix) < (int)sizeof(p))
		(void)unlink(p);
}

/* The last move, and an empty spool leaves no file behind. */
struct store *
store_close(struct store *s)
{
	bool empty;
	char *path;

	if (s == NULL || s->spool == NULL)
		return store_db_close(s);
	/* the last move on indexes no fault emptied (the spool's too) */
	store_heal_reopen(s);
	if (!s->spool_attached)
		spool_up(s);
	empty = s->spool_attached && store_spool_flush_locked(s) == 0;
	detach(s);
	path = s->spool->path ? strdup(s->spool->path) : NULL;
	s->spool->inst_main = NULL;
	s->spool = store_db_close(s->spool);
	if (empty && path != NULL) {
		(void)unlink(path);
		unlink_side(path, "-wal");
		unlink_side(path, "-shm");
	}
	free(path);
	s->id_hwm = NULL;
	return store_db_close(s);
}
