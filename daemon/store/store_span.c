/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Level 0's bulky rows in one table per span (schema v27, doc/storage.md,
 * "Level 0 in tables per span"). A level-0 window's task blobs and parts
 * row go into l0_tasks_K and l0_parts_K, K = floor(wall_start_ns /
 * STORE_SPAN_NS), instead of window_tasks and window_parts; once every
 * level-0 window of a span is gone (rolled up, mostly), both tables are
 * dropped whole. SQLite deletes row by row, journaling and rewriting
 * every leaf it takes a row from; a dropped table's pages go to the free
 * list unjournaled (secure_delete FAST), so a roll-up no longer writes
 * what it deletes twice.
 *
 * The span tables have no foreign key: a window deleted leaves its rows
 * behind until store_span_sweep (in the same transaction, by every path
 * that deletes windows, and once at open for a crash between the two)
 * drops the tables whose span holds no level-0 window any more and
 * deletes the rows of windows that are gone from the rest.
 *
 * Readers see window_tasks and window_parts through temporary views of
 * the main table, every span table and the spool's (store_conn.c), so
 * every read path (top, summaries, history, exports, roll-ups, salvage)
 * runs its SQL unchanged; a view is made again when the main file's
 * schema changed (a span table came or went).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "store/store.h"
#include "store_int.h"

bool store_span_nosweep; /* tests: a crash between a roll-up and its drop */

static const struct {
	const char *main, *prefix, *cols, *ddl;
} span_tab[2] = {
	{ "window_tasks", "l0_tasks_", "window_id, procs, threads",
	    "(window_id INTEGER PRIMARY KEY, procs BLOB, threads BLOB)" },
	{ "window_parts", "l0_parts_",
	    "window_id, kv, sys, bpf, " STORE_FOLD_COLS,
	    "(window_id INTEGER PRIMARY KEY, kv BLOB, sys BLOB, bpf BLOB,"
	    " cgroup BLOB, wcpu BLOB, fgbg BLOB, dmabuf BLOB, gpufreq BLOB,"
	    " syscalls BLOB)" },
};

/* The parts kept as one blob per window in a table of their own, folded
 * into the parts row of a level-0 window the spool moves (schema v28):
 * column k of STORE_FOLD_COLS is table fold_tab[k]'s blob. */
static const char *const fold_tab[STORE_FOLD_N] = { "window_cgroup",
	"window_wcpu", "window_fgbg", "window_dmabuf", "window_gpufreq",
	"window_syscalls" };

int64_t
store_span_of(int64_t wall_start_ns)
{
	return wall_bucket(wall_start_ns, STORE_SPAN_NS);
}

/* "l0_tasks_K" (K < 0: "l0_tasks_mK"), NUL-terminated in buf. */
static void
span_name(char *buf, size_t n, unsigned t, int64_t k)
{
	if (k < 0)
		snprintf(buf, n, "%sm%" PRIu64, span_tab[t].prefix,
		    (uint64_t)0 - (uint64_t)k);
	else
		snprintf(buf, n, "%s%" PRId64, span_tab[t].prefix, k);
}

/* The span of a table name of kind t; false: not one. */
static bool
span_parse(const char *name, unsigned t, int64_t *ret)
{
	size_t pl = strlen(span_tab[t].prefix);
	const char *p = name + pl;
	bool neg;
	char *end;
	unsigned long long v;

	if (strncmp(name, span_tab[t].prefix, pl) != 0)
		return false;
	neg = *p == 'm';
	p += neg;
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (*end != '\0' || errno != 0 || v > (uint64_t)INT64_MAX)
		return false;
	*ret = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

bool
store_span_table(const char *name)
{
	int64_t k;

	return span_parse(name, 0, &k) || span_parse(name, 1, &k);
}

/* The spans of the main file's tables of kind t, ascending. */
static int
span_list(sqlite3 *db, unsigned t, int64_t **ret, size_t *ret_n)
{
	sqlite3_stmt *st;
	int64_t *v = NULL, k, *p;
	size_t n = 0, cap = 0;
	int rc;

	*ret = NULL;
	*ret_n = 0;
	if ((rc = sqlite3_prepare_v2(db,
		 "SELECT name FROM main.sqlite_schema WHERE type = 'table'"
		 " AND name GLOB ?1 || '*'",
		 -1, &st, NULL)) != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, span_tab[t].prefix, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!span_parse((const char *)sqlite3_column_text(st, 0), t,
			&k))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((p = realloc(v, cap * sizeof(*p))) == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			v = p;
		}
		v[n++] = k;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return rc == SQLITE_ROW ? SQLITE_ERROR : rc;
	}
	*ret = v;
	*ret_n = n;
	return SQLITE_OK;
}

/*
 * temp.window_tasks and temp.window_parts: the main table and every span
 * table, and with spool the spool's rows of windows the main file has not
 * got (as store_conn.c's other views). Read-only: a write names its
 * table (main.window_tasks, a span's).
 */
int
store_span_views(sqlite3 *db, bool spool)
{
	struct vbuf b = { 0 };
	int64_t *k = NULL;
	size_t n = 0, i;
	char name[64];
	unsigned t;
	int rc = SQLITE_OK;

	for (t = 0; t < 2 && rc == SQLITE_OK; t++) {
		const char *m = span_tab[t].main, *c = span_tab[t].cols;

		if ((rc = span_list(db, t, &k, &n)) != SQLITE_OK)
			break;
		b.len = 0;
		if (vbuf_printf(&b,
			"DROP VIEW IF EXISTS temp.%s;"
			"CREATE TEMP VIEW %s AS SELECT %s FROM main.%s",
			m, m, c, m) < 0)
			rc = SQLITE_NOMEM;
		for (i = 0; i < n && rc == SQLITE_OK; i++) {
			span_name(name, sizeof(name), t, k[i]);
			if (vbuf_printf(&b, " UNION ALL SELECT %s FROM main.%s",
				c, name) < 0)
				rc = SQLITE_NOMEM;
		}
		if (rc == SQLITE_OK && spool &&
		    vbuf_printf(&b,
			" UNION ALL SELECT %s FROM spool.%s AS s WHERE NOT"
			" EXISTS (SELECT 1 FROM main.windows w WHERE w.id ="
			" s.window_id)",
			c, m) < 0)
			rc = SQLITE_NOMEM;
		if (rc == SQLITE_OK && vbuf_printf(&b, ";") < 0)
			rc = SQLITE_NOMEM;
		free(k);
		k = NULL;
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, b.p, NULL, NULL, NULL);
	}
	vbuf_release(&b);
	return rc;
}

/* The schema version of the main file (a span table made or dropped
 * changes it); -1 on failure. */
int64_t
store_span_schema(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA main.schema_version", -1, &st,
		NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void
store_span_release(struct store *s)
{
	unsigned t;

	for (t = 0; t < 2; t++) {
		sqlite3_finalize(s->span_ins[t]);
		s->span_ins[t] = NULL;
	}
}

/* The writer's views again (a span table came or went). */
static int
writer_views(struct store *s)
{
	return store_span_views(s->db, false);
}

/*
 * After a rollback: a span table it made (or dropped) is gone (or back),
 * so the cached INSERTs and the writer's views are not to be trusted.
 */
void
store_span_forget(struct store *s)
{
	if (s->o.no_spans || s->db == NULL)
		return;
	store_span_release(s);
	s->span_stale = writer_views(s) != SQLITE_OK;
}

/* Both tables of span k, made if missing (inside the caller's write). */
static int
span_make(struct store *s, int64_t k)
{
	char name[64], sql[256];
	unsigned t;
	int rc = SQLITE_OK;
	bool made = false;

	for (t = 0; t < 2 && rc == SQLITE_OK; t++) {
		sqlite3_stmt *st;

		span_name(name, sizeof(name), t, k);
		if ((rc = sqlite3_prepare_v2(s->db,
			 "SELECT 1 FROM main.sqlite_schema WHERE type ="
			 " 'table' AND name = ?1",
			 -1, &st, NULL)) != SQLITE_OK)
			break;
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_ROW) {
			rc = SQLITE_OK;
			continue;
		}
		if (rc != SQLITE_DONE)
			break;
		snprintf(sql, sizeof(sql), "CREATE TABLE main.%s %s", name,
		    span_tab[t].ddl);
		rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		made = true;
	}
	if (rc == SQLITE_OK && made)
		rc = writer_views(s);
	return rc;
}

/*
 * The INSERT of a level-0 window's row of kind t (0: task blobs, 1:
 * parts) starting at wall_start_ns: into its span's table, made if
 * missing. NULL with *ret_rc set on failure.
 */
sqlite3_stmt *
store_span_ins(struct store *s, unsigned t, int64_t wall_start_ns, int *ret_rc)
{
	int64_t k = store_span_of(wall_start_ns);
	char name[64], sql[256];
	int rc;

	*ret_rc = SQLITE_OK;
	if (s->span_stale && (rc = writer_views(s)) != SQLITE_OK) {
		*ret_rc = rc;
		return NULL;
	}
	s->span_stale = false;
	if (s->span_ins[t] != NULL && s->span_k[t] == k)
		return s->span_ins[t];
	if ((rc = span_make(s, k)) != SQLITE_OK) {
		*ret_rc = rc;
		return NULL;
	}
	sqlite3_finalize(s->span_ins[t]);
	s->span_ins[t] = NULL;
	span_name(name, sizeof(name), t, k);
	snprintf(sql, sizeof(sql),
	    "INSERT INTO main.%s (%s) VALUES (?1, ?2, ?3%s)", name,
	    t ? "window_id, kv, sys, bpf" : span_tab[t].cols, t ? ", ?4" : "");
	if ((rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
		 &s->span_ins[t], NULL)) != SQLITE_OK) {
		s->span_ins[t] = NULL;
		*ret_rc = rc;
		return NULL;
	}
	s->span_k[t] = k;
	return s->span_ins[t];
}

bool
store_span_on(const struct store *s)
{
	return !s->o.no_spans;
}

/*
 * The parts rows of span k's level-0 windows being moved: the spool's
 * window_parts row and the blob of each folded part's table in one row
 * (a window with none of them has none, as before).
 */
static int
fold_move(struct store *s, int64_t k)
{
	struct vbuf b = { 0 };
	char name[64];
	unsigned f;
	int rc;

	span_name(name, sizeof(name), 1, k);
	rc = vbuf_printf(&b,
	    "INSERT INTO main.%s (%s) SELECT * FROM (SELECT w.id, p.kv,"
	    " p.sys, p.bpf",
	    name, span_tab[1].cols);
	for (f = 0; f < STORE_FOLD_N && rc >= 0; f++)
		rc = vbuf_printf(&b,
		    ", (SELECT x.blob FROM spool.%s x WHERE x.window_id ="
		    " w.id) AS f%u",
		    fold_tab[f], f);
	if (rc >= 0)
		rc = vbuf_printf(&b,
		    " FROM spool.windows w LEFT JOIN spool.window_parts p ON"
		    " p.window_id = w.id WHERE w.id IN (SELECT id FROM"
		    " temp.spool_ids) AND w.level = 0 AND %s = %" PRId64
		    ") WHERE kv IS NOT NULL OR sys IS NOT NULL OR bpf IS NOT"
		    " NULL",
		    SQL_SPAN_OF("w.wall_start_ns"), k);
	for (f = 0; f < STORE_FOLD_N && rc >= 0; f++)
		rc = vbuf_printf(&b, " OR f%u IS NOT NULL", f);
	if (rc < 0) {
		vbuf_release(&b);
		return SQLITE_NOMEM;
	}
	rc = sqlite3_exec(s->db, b.p, NULL, NULL, NULL);
	vbuf_release(&b);
	return rc;
}

/* t: one of the folded parts' tables (its level-0 rows move into the
 * span's parts row, not into it) */
bool
store_span_folded(const char *t)
{
	unsigned f;

	for (f = 0; f < STORE_FOLD_N; f++)
		if (strcmp(t, fold_tab[f]) == 0)
			return true;
	return false;
}

/*
 * v28's C half: each span parts table of a v27 file gets the folded
 * parts' columns (the SQL half gave them to window_parts). Adding a
 * column rewrites no row: the schema says it, rows without it read NULL.
 */
int
store_span_migrate_v28(sqlite3 *db)
{
	static const char *const col[STORE_FOLD_N] = { "cgroup", "wcpu", "fgbg",
		"dmabuf", "gpufreq", "syscalls" };
	int64_t *k = NULL;
	size_t n = 0, i;
	char name[64], sql[160];
	unsigned f;
	int rc;

	if ((rc = span_list(db, 1, &k, &n)) != SQLITE_OK)
		return rc;
	for (i = 0; i < n && rc == SQLITE_OK; i++) {
		span_name(name, sizeof(name), 1, k[i]);
		for (f = 0; f < STORE_FOLD_N && rc == SQLITE_OK; f++) {
			snprintf(sql, sizeof(sql),
			    "ALTER TABLE main.%s ADD COLUMN %s BLOB", name,
			    col[f]);
			rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
	}
	free(k);
	return rc;
}

/*
 * The spool's level-0 rows of the windows being moved (temp.spool_ids)
 * into their spans' tables (store_spool.c, inside the move's write); the
 * rest of both tables moves by the statements made from their columns.
 */
int
store_span_move(struct store *s)
{
	sqlite3_stmt *st;
	int64_t *k = NULL, *p;
	size_t n = 0, cap = 0, i;
	char name[64], sql[512];
	int rc;

	if ((rc = sqlite3_prepare_v2(s->db,
		 "SELECT DISTINCT " SQL_SPAN_OF(
		     "w.wall_start_ns") " FROM spool.windows w WHERE w.level ="
					" 0 AND w.id IN (SELECT id FROM"
					" temp.spool_ids)",
		 -1, &st, NULL)) != SQLITE_OK)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			if ((p = realloc(k, cap * sizeof(*p))) == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			k = p;
		}
		k[n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(k);
		return rc == SQLITE_ROW ? SQLITE_ERROR : rc;
	}
	rc = SQLITE_OK;
	for (i = 0; i < n && rc == SQLITE_OK; i++) {
		if ((rc = span_make(s, k[i])) != SQLITE_OK)
			break;
		span_name(name, sizeof(name), 0, k[i]);
		snprintf(sql, sizeof(sql),
		    "INSERT INTO main.%s (%s) SELECT %s FROM spool.%s WHERE"
		    " window_id IN (SELECT w.id FROM spool.windows w WHERE"
		    " w.id IN (SELECT id FROM temp.spool_ids) AND w.level = 0"
		    " AND %s = %" PRId64 ")",
		    name, span_tab[0].cols, span_tab[0].cols, span_tab[0].main,
		    SQL_SPAN_OF("w.wall_start_ns"), k[i]);
		rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			rc = fold_move(s, k[i]);
	}
	free(k);
	return rc;
}

/*
 * Every span table checked against windows, inside the caller's write:
 * a span with no level-0 window left is dropped whole (both tables),
 * and the rows of windows deleted are deleted from the others. Called
 * by whatever deleted windows (roll-ups, retention, the size bound) and
 * at open.
 */
int
store_span_sweep(struct store *s)
{
	int64_t *k = NULL, *k2 = NULL;
	size_t n = 0, n2 = 0, i;
	char name[64], sql[512];
	unsigned t;
	bool dropped = false;
	int rc;

	if (store_span_nosweep)
		return SQLITE_OK;
	if ((rc = span_list(s->db, 0, &k, &n)) != SQLITE_OK ||
	    (rc = span_list(s->db, 1, &k2, &n2)) != SQLITE_OK)
		goto out;
	for (i = 0; i < n + n2 && rc == SQLITE_OK; i++) {
		int64_t sk = i < n ? k[i] : k2[i - n];
		int64_t lo = sk * STORE_SPAN_NS, hi = lo + STORE_SPAN_NS;
		sqlite3_stmt *st;
		bool live;

		t = i < n ? 0 : 1;
		span_name(name, sizeof(name), t, sk);
		if ((rc = sqlite3_prepare_v2(s->db,
			 "SELECT 1 FROM main.windows WHERE wall_start_ns >="
			 " ?1 AND wall_start_ns < ?2 AND level = 0 LIMIT 1",
			 -1, &st, NULL)) != SQLITE_OK)
			break;
		sqlite3_bind_int64(st, 1, lo);
		sqlite3_bind_int64(st, 2, hi);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			break;
		live = rc == SQLITE_ROW;
		if (!live) {
			if (t == 0 && s->span_ins[0] && s->span_k[0] == sk)
				store_span_release(s);
			if (t == 1 && s->span_ins[1] && s->span_k[1] == sk)
				store_span_release(s);
			snprintf(sql, sizeof(sql), "DROP TABLE main.%s", name);
			dropped = true;
		} else {
			snprintf(sql, sizeof(sql),
			    "DELETE FROM main.%s WHERE window_id NOT IN"
			    " (SELECT id FROM main.windows WHERE"
			    " wall_start_ns >= %" PRId64 " AND wall_start_ns"
			    " < %" PRId64 " AND level = 0)",
			    name, lo, hi);
		}
		rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK && dropped)
		rc = writer_views(s);
out:
	free(k);
	free(k2);
	return rc;
}

/* At open (the writer): the views, and what a crash between a delete
 * and its sweep left (in a transaction of its own). */
int
store_span_open(struct store *s)
{
	int rc;

	if ((rc = writer_views(s)) != SQLITE_OK)
		return rc;
	/* deferred: a sweep with nothing to do commits nothing (no sync) */
	if ((rc = sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK)
		return rc;
	if ((rc = store_span_sweep(s)) == SQLITE_OK)
		rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
