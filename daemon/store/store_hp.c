/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd session records (schema v6, doc/storage.md): a record put
 * whole by its id (the writer thread, writer.c), the reads heapprofd makes
 * at setup (the largest id, the budget records, the sessions a restart
 * finds running), and listing (a query thread's read-only connection).
 * Nothing here runs on the loop thread once it runs. Statements are
 * prepared per call (request rate), under the store's lock like every
 * public store call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hp/hp.h"
#include "store/store.h"
#include "store_int.h"

#define HP_COLS                                                     \
	"id, created_wall_ns, by_rule, rule, caller_uid, target, "  \
	"target_key, params, started, start_wall_ns, end_wall_ns, " \
	"child_pid, child_starttime, outcome, refusal, message, "   \
	"exit_status, term_signal, output_path, output_bytes"

/* Refused rows beyond this many are dropped, oldest first: a rule that
 * holds for hours must not grow the table without bound. */
#define HP_REFUSED_KEEP 1000

static void
bind_text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

static void
bind_opt(sqlite3_stmt *st, int i, int64_t v, bool have)
{
	if (have)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* Columns 2.. of HP_COLS, from ?1 on. */
static void
bind_record(sqlite3_stmt *st, const struct hp_record *r)
{
	sqlite3_bind_int64(st, 1, r->created_wall_ns);
	sqlite3_bind_int(st, 2, r->by_rule);
	if (r->by_rule)
		bind_text(st, 3, r->rule);
	else
		sqlite3_bind_null(st, 3);
	bind_opt(st, 4, r->caller_uid, !r->by_rule);
	bind_text(st, 5, r->target);
	bind_text(st, 6, r->target_key);
	bind_text(st, 7, r->params);
	sqlite3_bind_int(st, 8, r->started);
	bind_opt(st, 9, r->start_wall_ns, r->start_wall_ns != 0);
	bind_opt(st, 10, r->end_wall_ns, r->end_wall_ns != 0);
	bind_opt(st, 11, r->child_pid, r->child_pid > 0);
	bind_opt(st, 12, (int64_t)r->child_starttime, r->child_pid > 0);
	bind_text(st, 13, r->outcome);
	sqlite3_bind_int(st, 14, (int)r->refusal);
	bind_text(st, 15, r->message);
	bind_opt(st, 16, r->exit_status, r->exit_status >= 0);
	bind_opt(st, 17, r->term_signal, r->term_signal > 0);
	if (r->output_path[0])
		bind_text(st, 18, r->output_path);
	else
		sqlite3_bind_null(st, 18);
	bind_opt(st, 19, r->output_bytes, r->output_bytes >= 0);
}

static void
col_text(sqlite3_stmt *st, int i, char *dst, size_t sz)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(dst, sz, "%s", t ? (const char *)t : "");
}

static int64_t
col_opt(sqlite3_stmt *st, int i, int64_t none)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ?
	    none :
	    sqlite3_column_int64(st, i);
}

static void
read_record(sqlite3_stmt *st, struct hp_record *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->created_wall_ns = sqlite3_column_int64(st, 1);
	r->by_rule = sqlite3_column_int(st, 2) != 0;
	col_text(st, 3, r->rule, sizeof(r->rule));
	r->caller_uid = (uint32_t)col_opt(st, 4, 0);
	col_text(st, 5, r->target, sizeof(r->target));
	col_text(st, 6, r->target_key, sizeof(r->target_key));
	col_text(st, 7, r->params, sizeof(r->params));
	r->started = sqlite3_column_int(st, 8) != 0;
	r->start_wall_ns = col_opt(st, 9, 0);
	r->end_wall_ns = col_opt(st, 10, 0);
	r->child_pid = (int32_t)col_opt(st, 11, 0);
	r->child_starttime = (uint64_t)col_opt(st, 12, 0);
	col_text(st, 13, r->outcome, sizeof(r->outcome));
	r->refusal = (unsigned)sqlite3_column_int(st, 14);
	col_text(st, 15, r->message, sizeof(r->message));
	r->exit_status = (int32_t)col_opt(st, 16, -1);
	r->term_signal = (int32_t)col_opt(st, 17, 0);
	col_text(st, 18, r->output_path, sizeof(r->output_path));
	r->output_bytes = col_opt(st, 19, -1);
}

static int
prepare(struct store *s, const char *sql, sqlite3_stmt **ret)
{
	int rc;

	if (s->db == NULL)
		return -ENODEV;
	if ((rc = sqlite3_prepare_v2(s->db, sql, -1, ret, NULL)) != SQLITE_OK)
		return store_fail(s, rc, "heapprofd: prepare");
	return 0;
}

int
store_hp_insert(struct store *s, struct hp_record *r)
{
	sqlite3_stmt *st = NULL, *del = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s,
		 "INSERT INTO hp_session (" HP_COLS ") VALUES "
		 "(NULL, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
		 "?14, ?15, ?16, ?17, ?18, ?19)",
		 &st)) < 0)
		goto out;
	bind_record(st, r);
	if ((rc = store_run(st)) != SQLITE_OK) {
		err = store_fail(s, rc, "heapprofd: insert");
		goto out;
	}
	r->id = sqlite3_last_insert_rowid(s->db);
	if (!r->started &&
	    prepare(s,
		"DELETE FROM hp_session WHERE id IN "
		"(SELECT id FROM hp_session WHERE started = 0 ORDER BY id DESC "
		"LIMIT -1 OFFSET ?1)",
		&del) == 0) {
		sqlite3_bind_int(del, 1, HP_REFUSED_KEEP);
		(void)store_run(del);
	}
	store_after_write(s);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(del);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/*
 * The record as it is now, under the id heapprofd gave it: inserted, or
 * replacing what an earlier put of the same id wrote. One autocommit
 * transaction. Closed: -EBADF, as store_put says (the writer reopens).
 */
int
store_hp_put(struct store *s, const struct hp_record *r)
{
	sqlite3_stmt *st = NULL, *del = NULL;
	int rc, err;

	if (s == NULL || r->id <= 0)
		return s == NULL ? -EBADF : -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (s->db == NULL) {
		err = -EBADF;
		goto out;
	}
	if ((err = prepare(s,
		 "INSERT OR REPLACE INTO hp_session (" HP_COLS ") VALUES "
		 "(?20, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
		 "?14, ?15, ?16, ?17, ?18, ?19)",
		 &st)) < 0)
		goto out;
	bind_record(st, r);
	sqlite3_bind_int64(st, 20, r->id);
	if ((rc = store_run(st)) != SQLITE_OK) {
		err = store_fail(s, rc, "heapprofd: record");
		goto out;
	}
	if (!r->started &&
	    prepare(s,
		"DELETE FROM hp_session WHERE id IN "
		"(SELECT id FROM hp_session WHERE started = 0 ORDER BY id DESC "
		"LIMIT -1 OFFSET ?1)",
		&del) == 0) {
		sqlite3_bind_int(del, 1, HP_REFUSED_KEEP);
		(void)store_run(del);
	}
	store_after_write(s);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(del);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* The largest session id stored (0: none), for the ids handed out next. */
int
store_hp_max_id(struct store *s, int64_t *ret)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, "SELECT coalesce(max(id), 0) FROM hp_session",
		 &st)) == 0 &&
	    (rc = store_run_int(st, &v)) != SQLITE_OK)
		err = store_fail(s, rc, "heapprofd: largest id");
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	if (err == 0)
		*ret = v;
	return err;
}

int
store_hp_update(struct store *s, const struct hp_record *r)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s,
		 "UPDATE hp_session SET created_wall_ns = ?1, "
		 "by_rule = ?2, rule = ?3, caller_uid = ?4, target = ?5, "
		 "target_key = ?6, params = ?7, started = ?8, start_wall_ns = ?9, "
		 "end_wall_ns = ?10, child_pid = ?11, child_starttime = ?12, "
		 "outcome = ?13, refusal = ?14, message = ?15, exit_status = ?16, "
		 "term_signal = ?17, output_path = ?18, output_bytes = ?19 "
		 "WHERE id = ?20",
		 &st)) < 0)
		goto out;
	bind_record(st, r);
	sqlite3_bind_int64(st, 20, r->id);
	if ((rc = store_run(st)) != SQLITE_OK)
		err = store_fail(s, rc, "heapprofd: update");
	else if (sqlite3_changes(s->db) != 1)
		err = -ENOENT;
	store_after_write(s);
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int
store_hp_budget(struct store *s, int64_t since_wall_ns,
    struct hp_budget_rec **ret, size_t *ret_n)
{
	struct hp_budget_rec *v = NULL, *nv;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s,
		 "SELECT start_wall_ns, target_key FROM "
		 "hp_session WHERE started = 1 AND start_wall_ns >= ?1",
		 &st)) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, since_wall_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				err = -ENOMEM;
				goto out;
			}
			v = nv;
		}
		v[n].start_wall_ns = sqlite3_column_int64(st, 0);
		col_text(st, 1, v[n].target, sizeof(v[n].target));
		n++;
	}
	if (rc != SQLITE_DONE)
		err = store_fail(s, rc, "heapprofd: budget");
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	if (err < 0) {
		free(v);
		return err;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int
select_records(struct store *s, const char *sql, int64_t arg,
    struct hp_record **ret, size_t *ret_n)
{
	struct hp_record *v = NULL, *nv;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, sql, &st)) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, arg);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				err = -ENOMEM;
				goto out;
			}
			v = nv;
		}
		read_record(st, &v[n++]);
	}
	if (rc != SQLITE_DONE)
		err = store_fail(s, rc, "heapprofd: read");
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	if (err < 0) {
		free(v);
		return err;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The newest limit records, newest first. */
int
store_hp_list(struct store *s, unsigned limit, struct hp_record **ret,
    size_t *ret_n)
{
	return select_records(s,
	    "SELECT " HP_COLS " FROM hp_session "
	    "ORDER BY id DESC LIMIT ?1",
	    limit ? (int64_t)limit : -1, ret, ret_n);
}

int
store_hp_running(struct store *s, struct hp_record **ret, size_t *ret_n)
{
	return select_records(s,
	    "SELECT " HP_COLS " FROM hp_session "
	    "WHERE outcome = 'running' AND ?1 = ?1 ORDER BY id",
	    0, ret, ret_n);
}

int
store_hp_get(struct store *s, int64_t id, struct hp_record *ret)
{
	struct hp_record *v;
	size_t n;
	int r;

	if ((r = select_records(s,
		 "SELECT " HP_COLS " FROM hp_session "
		 "WHERE id = ?1",
		 id, &v, &n)) < 0)
		return r;
	if (n == 0) {
		free(v);
		return -ENOENT;
	}
	*ret = v[0];
	free(v);
	return 0;
}
