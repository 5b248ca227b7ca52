/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A leftover spool whose ids the main file gave away (doc/storage.md,
 * "One id for a window in both files"). Ids are shared only while every
 * writer of the main file sees the spool: a daemon killed with windows in
 * the spool, then a run without the spool (its directory refused, or
 * store_spool_dir off), hands out window, instance and key ids from the
 * main file's largest alone, and those can be the spool's. Before the
 * first move of such a spool, its rows are made to agree with the main
 * file:
 *
 *   - a spool window whose id the main file gives another window takes
 *     a new id (in every table that names it);
 *   - a spool instance the main file has under another id takes that id
 *     (its until_ns raised there); one whose id the main file gives
 *     another instance takes a new id;
 *   - a key likewise (window_key: (kind, key));
 *
 * and the task and counter blobs of the spool's windows are rewritten
 * with the new ids (decoded, renumbered, sorted again, framed). New ids
 * come from past the largest either file holds, so none clashes again.
 * One transaction on the main connection (the spool attached); in the
 * usual case (no clash) it is three lookups and nothing is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store/store_kv.h"
#include "store/store_tasks.h"
#include "store_int.h"

#define ROWS_MAX 65536

struct idpair {
	int64_t from, to;
};

struct idmap {
	struct idpair *p;
	size_t n, cap;
};

static int
map_add(struct idmap *m, int64_t from, int64_t to)
{
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		struct idpair *p = realloc(m->p, nc * sizeof(*p));

		if (p == NULL)
			return SQLITE_NOMEM;
		m->p = p;
		m->cap = nc;
	}
	m->p[m->n++] = (struct idpair){ from, to };
	return SQLITE_OK;
}

static int
pair_cmp(const void *a, const void *b)
{
	const struct idpair *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/* id's new id, or id itself. */
static int64_t
map_get(const struct idmap *m, int64_t id)
{
	struct idpair k = { id, 0 };
	const struct idpair *p;

	if (m->n == 0)
		return id;
	p = bsearch(&k, m->p, m->n, sizeof(*m->p), pair_cmp);
	return p != NULL ? p->to : id;
}

/*
 * Rows (old id, the main file's id for the same thing or NULL) of the
 * spool's clashing ids: NULL takes ++*next.
 */
static int
collect(sqlite3 *db, const char *sql, int64_t *next, struct idmap *m)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t to = sqlite3_column_type(st, 1) == SQLITE_NULL ?
		    ++*next :
		    sqlite3_column_int64(st, 1);

		if ((rc = map_add(m, sqlite3_column_int64(st, 0), to)) !=
		    SQLITE_OK)
			break;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && m->n > 1)
		qsort(m->p, m->n, sizeof(*m->p), pair_cmp);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* sql with ?1 old, ?2 new, run for every pair of m. */
static int
apply(sqlite3 *db, const char *sql, const struct idmap *m)
{
	sqlite3_stmt *st;
	size_t i;
	int rc;

	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	for (i = 0; i < m->n && rc == SQLITE_OK; i++) {
		sqlite3_bind_int64(st, 1, m->p[i].from);
		sqlite3_bind_int64(st, 2, m->p[i].to);
		rc = store_run(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * A rename by m (sql: SET col = ?2 WHERE col = ?1) in two steps, every old
 * id to its negative first and then to its new id, so that a pair whose
 * new id is another pair's old id never chains into it, and no step makes
 * two rows share a key. Ids are positive.
 */
static int
rename_ids(sqlite3 *db, const char *sql, const struct idmap *m)
{
	sqlite3_stmt *st;
	size_t i;
	int rc, step;

	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	for (step = 0; step < 2 && rc == SQLITE_OK; step++)
		for (i = 0; i < m->n && rc == SQLITE_OK; i++) {
			sqlite3_bind_int64(st, 1,
			    step ? -m->p[i].from : m->p[i].from);
			sqlite3_bind_int64(st, 2,
			    step ? m->p[i].to : -m->p[i].from);
			rc = store_run(st);
		}
	sqlite3_finalize(st);
	return rc;
}

/* Each spool table naming a window: its rows of a renumbered window. */
static int
renumber_tables(sqlite3 *db, const struct idmap *m)
{
	sqlite3_stmt *st;
	char sql[200];
	int rc, r = SQLITE_OK;

	if (m->n == 0)
		return SQLITE_OK;
	if ((rc = sqlite3_prepare_v2(db,
		 "SELECT t.name FROM spool.sqlite_schema t WHERE t.type ="
		 " 'table' AND EXISTS (SELECT 1 FROM pragma_table_info(t.name,"
		 " 'spool') c WHERE c.name = 'window_id')",
		 -1, &st, NULL)) != SQLITE_OK)
		return rc;
	while (r == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(sql, sizeof(sql),
		    "UPDATE spool.\"%s\" SET window_id = ?2 WHERE window_id ="
		    " ?1",
		    (const char *)sqlite3_column_text(st, 0));
		r = rename_ids(db, sql, m);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_OK)
		return r;
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
iid_cmp(const void *a, const void *b)
{
	const struct {
		uint64_t iid;
		size_t i;
	} *x = a, *y = b;

	return x->iid < y->iid ? -1 : x->iid > y->iid;
}

/* A task blob with its instance ids renumbered by m (ret empty: none
 * changed); -EBADMSG for a blob that does not decode (left as it is). */
static int
tasks_renumber(const void *blob, size_t n, const struct idmap *m,
    struct store_enc *ret)
{
	struct {
		uint64_t iid;
		size_t i;
	} *k = NULL;
	struct store_frame f;
	struct store_enc pl = { 0 };
	struct window_task *t = NULL, *t2 = NULL;
	uint64_t *iid = NULL, *iid2 = NULL;
	size_t nt = 0, i;
	bool changed = false;
	int r;

	if ((r = store_frame_get(blob, n, &f)) < 0)
		return r;
	if (f.part != STORE_TASKS_PART)
		r = -EBADMSG;
	else
		r = store_tasks_get(f.payload, f.len, f.version, ROWS_MAX, &t,
		    &iid, &nt);
	for (i = 0; r == 0 && i < nt; i++)
		changed |= map_get(m, (int64_t)iid[i]) != (int64_t)iid[i];
	if (r < 0 || !changed)
		goto out;
	if ((k = calloc(nt, sizeof(*k))) == NULL ||
	    (t2 = calloc(nt, sizeof(*t2))) == NULL ||
	    (iid2 = calloc(nt, sizeof(*iid2))) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nt; i++) {
		k[i].iid = (uint64_t)map_get(m, (int64_t)iid[i]);
		k[i].i = i;
	}
	qsort(k, nt, sizeof(*k), iid_cmp);
	for (i = 0; i < nt; i++) {
		t2[i] = t[k[i].i];
		iid2[i] = k[i].iid;
	}
	if ((r = store_tasks_put(&pl, t2, iid2, nt)) == 0)
		r = store_frame_put_zstd(ret, STORE_TASKS_PART,
		    STORE_TASKS_VERSION, pl.b.p, pl.b.len, 0);
out:
	store_frame_release(&f);
	store_enc_release(&pl);
	free(k);
	free(t);
	free(t2);
	free(iid);
	free(iid2);
	return r;
}

static int
kc_cmp(const void *a, const void *b)
{
	const struct store_kv_count *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int
kg_cmp(const void *a, const void *b)
{
	const struct store_kv_gauge *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* A counters blob with its key ids renumbered by m, as tasks_renumber. */
static int
kv_renumber(const void *blob, size_t n, const struct idmap *m,
    struct store_enc *ret)
{
	struct store_frame f;
	struct store_enc pl = { 0 };
	struct store_kv kv = { 0 };
	bool changed = false;
	size_t i;
	int r;

	if ((r = store_frame_get(blob, n, &f)) < 0)
		return r;
	if (f.part != STORE_KV_PART)
		r = -EBADMSG;
	else
		r = store_kv_get(f.payload, f.len, f.version, ROWS_MAX, &kv);
	for (i = 0; r == 0 && i < kv.ncount; i++) {
		uint32_t to = (uint32_t)map_get(m, kv.count[i].key);

		changed |= to != kv.count[i].key;
		kv.count[i].key = to;
	}
	for (i = 0; r == 0 && i < kv.ngauge; i++) {
		uint32_t to = (uint32_t)map_get(m, kv.gauge[i].key);

		changed |= to != kv.gauge[i].key;
		kv.gauge[i].key = to;
	}
	if (r == 0 && changed) {
		if (kv.ncount > 1)
			qsort(kv.count, kv.ncount, sizeof(*kv.count), kc_cmp);
		if (kv.ngauge > 1)
			qsort(kv.gauge, kv.ngauge, sizeof(*kv.gauge), kg_cmp);
		if ((r = store_kv_put(&pl, kv.count, kv.ncount, kv.gauge,
			 kv.ngauge)) == 0)
			r = store_frame_put_zstd(ret, STORE_KV_PART,
			    STORE_KV_VERSION, pl.b.p, pl.b.len, 0);
	}
	store_kv_release(&kv);
	store_frame_release(&f);
	store_enc_release(&pl);
	return r;
}

/* Every blob of spool table.col rewritten by fn (a blob that does not
 * decode stays: its reader counts it). */
static int
rewrite(sqlite3 *db, const char *table, const char *col, const struct idmap *m,
    int (*fn)(const void *, size_t, const struct idmap *, struct store_enc *))
{
	char sql[160];
	sqlite3_stmt *sel, *upd = NULL;
	int rc, r;

	if (m->n == 0)
		return SQLITE_OK;
	snprintf(sql, sizeof(sql),
	    "SELECT window_id, \"%s\" FROM spool.\"%s\" WHERE \"%s\" IS NOT"
	    " NULL",
	    col, table, col);
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &sel, NULL)) != SQLITE_OK)
		return rc;
	snprintf(sql, sizeof(sql),
	    "UPDATE spool.\"%s\" SET \"%s\" = ?2 WHERE window_id = ?1", table,
	    col);
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &upd, NULL)) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		struct store_enc e = { 0 };

		r = fn(sqlite3_column_blob(sel, 1),
		    (size_t)sqlite3_column_bytes(sel, 1), m, &e);
		if (r == -ENOMEM) {
			store_enc_release(&e);
			rc = SQLITE_NOMEM;
			break;
		}
		if (r == 0 && e.b.len) {
			sqlite3_bind_int64(upd, 1,
			    sqlite3_column_int64(sel, 0));
			sqlite3_bind_blob(upd, 2, e.b.p, (int)e.b.len,
			    SQLITE_STATIC);
			rc = store_run(upd);
		}
		store_enc_release(&e);
		if (rc != SQLITE_ROW && rc != SQLITE_OK)
			break;
	}
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return rc;
}

/* The spool's clashes: new ids from past *max_* (raised by those used). */
#define SQL_WIN_CLASH                                                   \
	"SELECT s.id, NULL FROM spool.windows s JOIN main.windows m ON" \
	" m.id = s.id WHERE m.boot IS NOT s.boot OR m.level IS NOT"     \
	" s.level OR m.mono_start_ns IS NOT s.mono_start_ns"
/* a join: main.instance has no index on the identity (v25), and SQLite
 * builds a transient one for the join rather than scan per spool row */
#define SQL_INST_CLASH                                                      \
	"SELECT s.iid, m.iid FROM spool.instance s LEFT JOIN main.instance" \
	" m ON m.thread = s.thread AND m.id = s.id AND m.starttime ="       \
	" s.starttime WHERE (m.iid IS NOT NULL AND m.iid != s.iid) OR"      \
	" (m.iid IS NULL AND EXISTS (SELECT 1 FROM main.instance x WHERE"   \
	" x.iid = s.iid))"
#define SQL_KEY_CLASH                                                      \
	"SELECT x.sid, x.same FROM (SELECT s.id AS sid, (SELECT m.id FROM" \
	" main.window_key m WHERE m.kind = s.kind AND m.key = s.key) AS"   \
	" same FROM spool.window_key s) x WHERE (x.same IS NOT NULL AND"   \
	" x.same != x.sid) OR (x.same IS NULL AND EXISTS (SELECT 1 FROM"   \
	" main.window_key m WHERE m.id = x.sid))"

static int
fix(struct store *s, int64_t *max_id, int64_t *max_iid, int64_t *max_key,
    struct idmap *w, struct idmap *in, struct idmap *k)
{
	sqlite3 *db = s->db;
	int rc;

	if ((rc = collect(db, SQL_WIN_CLASH, max_id, w)) != SQLITE_OK ||
	    (rc = collect(db, SQL_INST_CLASH, max_iid, in)) != SQLITE_OK ||
	    (rc = collect(db, SQL_KEY_CLASH, max_key, k)) != SQLITE_OK)
		return rc;
	if (w->n == 0 && in->n == 0 && k->n == 0)
		return SQLITE_OK;
	/* children first (their foreign keys checked at the commit) */
	if ((rc = renumber_tables(db, w)) != SQLITE_OK ||
	    (rc = rename_ids(db,
		 "UPDATE spool.windows SET id = ?2 WHERE id = ?1", w)) !=
		SQLITE_OK)
		return rc;
	/* an instance the main file has under another id: that row lives
	 * on as long as the spool's said, and the spool's goes */
	if ((rc = apply(db,
		 "UPDATE main.instance SET until_ns = max(until_ns, (SELECT"
		 " until_ns FROM spool.instance WHERE iid = ?1)) WHERE iid = ?2"
		 " AND (thread, id, starttime) IS (SELECT thread, id,"
		 " starttime FROM spool.instance WHERE iid = ?1)",
		 in)) != SQLITE_OK ||
	    (rc = apply(db,
		 "DELETE FROM spool.instance WHERE iid = ?1 AND EXISTS (SELECT"
		 " 1 FROM main.instance m WHERE m.iid = ?2)",
		 in)) != SQLITE_OK ||
	    (rc = rename_ids(db,
		 "UPDATE spool.instance SET iid = ?2 WHERE iid = ?1", in)) !=
		SQLITE_OK ||
	    (rc = rename_ids(db,
		 "UPDATE spool.window_task_ident SET iid = ?2 WHERE iid = ?1",
		 in)) != SQLITE_OK ||
	    (rc = rewrite(db, "window_tasks", "procs", in, tasks_renumber)) !=
		SQLITE_OK ||
	    (rc = rewrite(db, "window_tasks", "threads", in, tasks_renumber)) !=
		SQLITE_OK)
		return rc;
	if ((rc = apply(db,
		 "DELETE FROM spool.window_key WHERE id = ?1 AND EXISTS (SELECT"
		 " 1 FROM main.window_key m WHERE m.id = ?2)",
		 k)) != SQLITE_OK ||
	    (rc = rename_ids(db,
		 "UPDATE spool.window_key SET id = ?2 WHERE id = ?1", k)) !=
		SQLITE_OK ||
	    (rc = rewrite(db, "window_parts", "kv", k, kv_renumber)) !=
		SQLITE_OK)
		return rc;
	return SQLITE_OK;
}

/*
 * The leftover spool's ids made to agree with the main file, before its
 * first move (attach, store_spool.c). *max_id, *max_iid and *max_key are
 * the largest ids either file holds, raised past the new ones given.
 */
int
store_spool_fix_ids(struct store *s, int64_t *max_id, int64_t *max_iid,
    int64_t *max_key)
{
	struct idmap w = { 0 }, in = { 0 }, k = { 0 };
	int rc;

	if ((rc = sqlite3_exec(s->db,
		 "BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON", NULL, NULL,
		 NULL)) != SQLITE_OK)
		return rc;
	rc = fix(s, max_id, max_iid, max_key, &w, &in, &k);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK && !sqlite3_get_autocommit(s->db))
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	free(w.p);
	free(in.p);
	free(k.p);
	return rc;
}
