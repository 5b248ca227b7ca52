/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The window store: migrations (the steps: store_schema.c), opening (with corruption
 * checks), one window per transaction, roll-ups and retention. Below it:
 * the rows of one window (store_write.c), reads (store_read.c), each
 * signal's tables (store_<signal>.c), all on store_core.c. doc/storage.md
 * describes the schema.
 *
 * Library code: nothing here logs. Failures return -errno and leave the
 * SQLite message in the stats for the caller to report once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "privs/privs.h"
#include "proc/proc.h"
#include "store/store.h"
#include "window/window.h"
#include "store_int.h"

static int
pragma_int(sqlite3 *db, const char *sql, int64_t *ret)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	rc = store_run_int(st, ret);
	sqlite3_finalize(st);
	return rc;
}

static int
put_locked(struct store *s, const struct window *w)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), id = 0, dt;
	uint64_t del0;
	int rc, r = 0;

	if (s == NULL || s->db == NULL)
		return -EBADF;
	del0 = s->st.deleted_size;
	if ((rc = store_run(store_ws(s, WS_BEGIN))) != SQLITE_OK) {
		r = store_fail(s, rc, "begin");
		goto fail;
	}
	if ((rc = store_write_window(s, w, &id)) != SQLITE_OK) {
		r = store_fail(s, rc, "insert window");
		/* Not ours after all: the writer moves it aside. */
		if (rc == STORE_RC_NOTHING || rc == SQLITE_CONSTRAINT_TRIGGER)
			r = store_fail_errno(s, -EUCLEAN,
			    "insert window: "
			    "stored nothing (a trigger or a schema not ours)");
		goto fail;
	}
	if (id != 0 && (rc = store_prov_put(s, &w->prov)) != SQLITE_OK) {
		r = store_fail(s, rc, "insert provenance");
		goto fail;
	}
	if (id != 0 && s->o.max_bytes && (r = store_enforce_size(s, id)) < 0)
		goto fail;
	if ((rc = store_run(store_ws(s, WS_COMMIT))) != SQLITE_OK) {
		r = store_fail(s, rc, "commit");
		goto fail;
	}
	if (id != 0)
		s->st.windows_written++;
	s->st.state = STORE_OK;
	/* A past failure ("disk is full") is not today's news. */
	s->st.last_err = 0;
	s->st.last_errmsg[0] = '\0';
	store_after_write(s);
	dt = clock_ns(CLOCK_MONOTONIC) - t0;
	s->st.commit_ns_last = (uint64_t)dt;
	if ((uint64_t)dt > s->st.commit_ns_max)
		s->st.commit_ns_max = (uint64_t)dt;
	return 0;
fail:
	store_rollback(s);
	s->st.deleted_size = del0; /* those deletions were undone */
	s->st.write_failures++;
	store_note_write_error(s, r);
	return r;
}

static void db_close(struct store *s);

/* One window in its own transaction (lock held; store_spool.c's
 * store_put decides where a window goes); a -shm fault healed before
 * and after it (store_heal_reopen). */
int
store_put_locked(struct store *s, const struct window *w)
{
	int r;

	store_heal_reopen(s);
	r = put_locked(s, w);
	store_heal_reopen(s);
	return r;
}

/*
 * After a -shm fault (store_heal.c), at a top-level call with the lock
 * held and no statement of the connection in use: close without a
 * checkpoint, then open again; the open resets the index's header, so
 * the new connection rebuilds it from the WAL's frames. The spool's
 * puts heal the spool; the main store heals before a put, after it,
 * before a maintenance pass and before its close, so no move,
 * checkpoint or close of the main store's connection runs on an index
 * a fault emptied. The main store's connection attaches the spool and
 * its checkpoints name no database (every attached one): so a pending
 * spool is healed here as well, between the main connection's close
 * (which lets go of the attachment) and its open, before anything
 * attaches the spool again. Lock order: the main store's, then the
 * spool's (as store_spool.c's puts take them).
 */
void
store_heal_reopen(struct store *s)
{
	struct store *sp = s->spool;
	bool spool = sp != NULL && store_heal_pending(sp);
	bool open = s->db != NULL;

	if (!store_heal_pending(s) && !spool)
		return;
	if (open) {
		sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
		    NULL);
		db_close(s);
	}
	if (spool) {
		pthread_mutex_lock(&sp->lock);
		(void)store_reopen_locked(sp);
		pthread_mutex_unlock(&sp->lock);
	}
	/* a closed store waits for its retry (store_recover), as before */
	if (open)
		(void)store_reopen_locked(s);
}

/* ------------------------------------------------------------ opening */

static int
exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Forward only, one transaction per step, user_version moves with it. */
static int
migrate(sqlite3 *db, int64_t from, unsigned to)
{
	char sql[96];
	int64_t v;
	int rc;

	for (v = from; v < to; v++) {
		if ((rc = exec_sql(db, "BEGIN IMMEDIATE")) != SQLITE_OK)
			return rc;
		rc = exec_sql(db, store_migrations[v].sql);
		if (rc == SQLITE_OK && store_migrations[v].fn != NULL)
			rc = store_migrations[v].fn(db);
		snprintf(sql, sizeof(sql),
		    "PRAGMA application_id = %d;"
		    "PRAGMA user_version = %lld",
		    STORE_APPLICATION_ID, (long long)v + 1);
		if (rc == SQLITE_OK)
			rc = exec_sql(db, sql);
		if (rc == SQLITE_OK)
			rc = exec_sql(db, "COMMIT");
		if (rc != SQLITE_OK) {
			if (!sqlite3_get_autocommit(db))
				exec_sql(db, "ROLLBACK");
			return rc;
		}
	}
	return SQLITE_OK;
}

/*
 * The main file of a store with a spool takes a rollback journal
 * (doc/storage.md, "The main file's journal"): its only writes are the
 * batched moves and maintenance, and a rollback journal writes a page
 * appended past the file's old end (or a free-list leaf reused) once,
 * where WAL writes every page twice (frame, then checkpoint). A store
 * that commits window by window (no spool, or the spool itself on its
 * RAM file system) keeps WAL. A file in WAL mode changes over only with
 * no other connection on it; if another holds it, it stays in WAL until
 * the next open, which is as safe.
 */
static int
db_journal(struct store *s)
{
	static const char *const mode[] = {
		[STORE_JOURNAL_PERSIST] = "PERSIST",
		[STORE_JOURNAL_TRUNCATE] = "TRUNCATE",
		[STORE_JOURNAL_WAL] = "WAL",
	};
	enum store_journal j = s->o.journal;
	char sql[80];
	int rc;

	if (s->o.spool_path == NULL || s->o.spool_path[0] == '\0' ||
	    (unsigned)j >= sizeof(mode) / sizeof(mode[0]))
		j = STORE_JOURNAL_WAL;
	/* a move that spilled its cache would take EXCLUSIVE early and hold
	 * the readers off for the rest of it: room for 8 MiB of pages (as
	 * used; a move of 300 s of windows needs a few hundred KiB) */
	snprintf(sql, sizeof(sql), "PRAGMA journal_mode = %s;%s", mode[j],
	    j == STORE_JOURNAL_WAL ? "" : "PRAGMA cache_size = -8192");
	rc = exec_sql(s->db, sql);
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		rc = SQLITE_OK; /* still WAL: changed over at the next open */
	return rc;
}

/* Settings a new database needs before its first table. auto_vacuum
 * NONE (the default) keeps no pointer-map pages: with INCREMENTAL every
 * move rewrites and journals the pointer-map page of the pages it
 * appends, every page taken from the free list updates one, and a new
 * table's root is moved to the front of the file (measured: 6 % of the
 * moves' writes, 13 % of two days', doc/storage.md). */
static int
db_create(sqlite3 *db, enum store_vacuum v)
{
	int rc = exec_sql(db,
	    v == STORE_VACUUM_INCREMENTAL ? "PRAGMA auto_vacuum = INCREMENTAL" :
					    "PRAGMA auto_vacuum = NONE");

	return rc == SQLITE_OK ? exec_sql(db, "PRAGMA journal_mode = WAL") : rc;
}

static bool
rc_corrupt(int rc)
{
	return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* Why a file is moved aside goes into the stats beside its new name. */
static int
mark_bad(struct store *s, bool *ret_bad, const char *why, const char *detail)
{
	snprintf(s->st.last_errmsg, sizeof(s->st.last_errmsg), "%s: %s", why,
	    detail ? detail : sqlite3_errmsg(s->db));
	*ret_bad = true;
	return SQLITE_OK;
}

/*
 * Decide whether the file at s->path is ours, healthy and current. Sets
 * *ret_bad (and returns SQLITE_OK) for a file to move aside: unreadable as
 * SQLite, failing its integrity check, or somebody else's (application_id,
 * user_version newer than this build, or tables without our mark).
 */
static int
db_check(struct store *s, bool *ret_bad)
{
	int64_t app = 0, ver = 0, nobj = 0;
	char first[64] = "";
	sqlite3_stmt *st;
	int rc, rows = 0;

	*ret_bad = false;
	rc = sqlite3_prepare_v2(s->db, store_heal_check_sql(s), -1, &st, NULL);
	if (rc == SQLITE_OK) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *t;

			t = (const char *)sqlite3_column_text(st, 0);
			if (rows++ == 0)
				snprintf(first, sizeof(first), "%s",
				    t ? t : "");
		}
		sqlite3_finalize(st);
	}
	if (rc == SQLITE_DONE && (rows != 1 || strcmp(first, "ok") != 0))
		return mark_bad(s, ret_bad, "integrity check", first);
	if (rc == SQLITE_DONE)
		rc = pragma_int(s->db, "PRAGMA application_id", &app);
	if (rc == SQLITE_OK)
		rc = pragma_int(s->db, "PRAGMA user_version", &ver);
	if (rc == SQLITE_OK)
		rc = pragma_int(s->db, "SELECT count(*) FROM sqlite_schema",
		    &nobj);
	if (rc_corrupt(rc))
		return mark_bad(s, ret_bad, "unreadable", NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (rc == SQLITE_OK && nobj > 0) {
		char why[96];

		if ((rc = store_heal_foreign_objects(s->db, why,
			 sizeof(why))) != SQLITE_OK)
			return rc_corrupt(rc) ?
			    mark_bad(s, ret_bad, "unreadable", NULL) :
			    rc;
		if (why[0])
			return mark_bad(s, ret_bad, "not our schema", why);
	}
	if (app == 0 && ver == 0 && nobj == 0) {
		if ((rc = db_create(s->db, s->o.vacuum)) != SQLITE_OK)
			return rc;
	} else if (app != STORE_APPLICATION_ID || ver < 1 ||
	    ver > STORE_SCHEMA_VERSION) {
		char d[64];

		snprintf(d, sizeof(d), "application_id %lld user_version %lld",
		    (long long)app, (long long)ver);
		return mark_bad(s, ret_bad, "not our schema", d);
	}
	/* A step that does not apply means a schema that is not ours. */
	rc = migrate(s->db, ver, STORE_SCHEMA_VERSION);
	if (rc_corrupt(rc) || (rc & 0xff) == SQLITE_ERROR)
		return mark_bad(s, ret_bad, "migration", NULL);
	return rc;
}

static int
prepare_all(struct store *s)
{
	int64_t av = 0;
	unsigned i;
	int rc;

	/* NONE (0) and INCREMENTAL (2) are both ours, whichever
	 * store_vacuum says (a file keeps the mode it was made with: a
	 * change would rewrite it whole); FULL (edited by hand) is fixed
	 * once, to the configured mode. */
	if ((rc = pragma_int(s->db, "PRAGMA auto_vacuum", &av)) != SQLITE_OK)
		return rc;
	if (av == 1) {
		av = s->o.vacuum == STORE_VACUUM_INCREMENTAL ? 2 : 0;
		if ((rc = exec_sql(s->db,
			 av == 2 ? "PRAGMA auto_vacuum = INCREMENTAL" :
				   "PRAGMA auto_vacuum = NONE")) != SQLITE_OK ||
		    (rc = exec_sql(s->db, "VACUUM")) != SQLITE_OK)
			return rc;
	}
	s->incremental = av == 2;
	if ((rc = pragma_int(s->db, "PRAGMA page_size", &s->page_size)) !=
	    SQLITE_OK)
		return rc;
	/* NONE: a file made under a larger bound is rebuilt once, after
	 * the first pass that deleted down to this one (store_vacuum_over) */
	if (!s->incremental && s->o.max_bytes > 0) {
		int64_t pages = 0;

		if ((rc = pragma_int(s->db, "PRAGMA page_count", &pages)) !=
		    SQLITE_OK)
			return rc;
		s->rebuild_due = pages * s->page_size > (int64_t)s->budget;
	}
	if ((rc = pragma_int(s->db,
		 "SELECT coalesce(max(wall_end_ns -"
		 " wall_start_ns), 0) FROM windows",
		 &s->max_span_ns)) != SQLITE_OK)
		return rc;
	/* level 0's span tables behind views, and what a crash between a
	 * delete and its sweep left (store_span.c) */
	if (!s->o.no_spans && (rc = store_span_open(s)) != SQLITE_OK)
		return rc;
	for (i = 0; i < WS__MAX; i++)
		if ((rc = sqlite3_prepare_v3(s->db, store_ws_sql[i], -1,
			 SQLITE_PREPARE_PERSISTENT, &s->ws[i], NULL)) !=
		    SQLITE_OK)
			return rc;
	if ((rc = store_parts_prepare(s, false)) != SQLITE_OK ||
	    (rc = store_inst_prepare(s)) != SQLITE_OK ||
	    (rc = store_keys_prepare(s)) != SQLITE_OK ||
	    (rc = store_read_prepare(s)) != SQLITE_OK)
		return rc;
	/* every statement prepared: the schema is ours; all but the put's
	 * are prepared again at first use */
	store_stmts_release(s, true);
	return SQLITE_OK;
}

static void
db_close(struct store *s)
{
	unsigned i;

	/* an index a -shm fault may have emptied: no checkpoint may trust
	 * it (the next open resets it: store_heal_before_open) */
	if (store_heal_pending(s))
		sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
		    NULL);
	/* store_spool.c's statements and its attachment go with the
	 * connection (it attaches again when it next needs to) */
	for (i = 0; i < s->spool_nst; i++) {
		sqlite3_finalize(s->spool_st[i]);
		s->spool_st[i] = NULL;
	}
	s->spool_nst = 0;
	s->spool_attached = false;
	s->spool_tried = false;
	for (i = 0; i < WS__MAX; i++) {
		sqlite3_finalize(s->ws[i]);
		s->ws[i] = NULL;
	}
	store_read_finalize(s);
	store_parts_finalize(s);
	store_inst_finalize(s);
	store_keys_finalize(s);
	store_span_release(s);
	if (s->wacc != NULL) {
		store_wacc_release(s->wacc);
		free(s->wacc);
		s->wacc = NULL;
	}
	store_prov_finalize(s);
	sqlite3_close(s->db);
	s->db = NULL;
}

/* Per-connection settings and the WAL/size budget split. */
static int
db_settings(struct store *s)
{
	char sql[200];
	uint64_t r = s->o.max_bytes / 8;
	int rc;

	if (r > (4u << 20))
		r = 4u << 20;
	s->wal_reserve = r;
	s->budget = s->o.max_bytes - r;
	snprintf(sql, sizeof(sql),
	    "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"
	    "PRAGMA secure_delete = FAST;"
	    "PRAGMA journal_size_limit = %llu;"
	    "PRAGMA wal_autocheckpoint = %llu",
	    (unsigned long long)(r ? r : 4u << 20),
	    (unsigned long long)(r ? r / 4096 + 1 : 1000));
	if ((rc = exec_sql(s->db, sql)) != SQLITE_OK)
		return rc;
	return db_journal(s);
}

/*
 * Before SQLite opens anything, the files are looked at from a directory
 * fd, never through a link (doc/security.md): the database and any -wal,
 * -shm or -journal must be regular files with one link, owned by the
 * directory's owner (fstatat, AT_SYMLINK_NOFOLLOW); a missing database is
 * created here, mode 0640, O_EXCL | O_NOFOLLOW. An existing one is never
 * opened here: closing another fd of a file drops every POSIX lock this
 * process holds on it, SQLite's included. So a planted symlink or hard
 * link is refused with its name, and a read-only file system, a directory
 * or a denied create say so (SQLite's own read-only retry reported ENOENT).
 * SQLite then gets the directory's real path (no symlink anywhere, so
 * SQLITE_OPEN_NOFOLLOW holds) in *dbpath. -errno with the reason in the
 * stats.
 */
static int
db_precheck(struct store *s, char *dbpath, size_t dbpathsz)
{
	static const char *const side[] = { "-wal", "-shm", "-journal" };
	char dir[PATH_MAX], name[NAME_MAX + 16], link[64], msg[256];
	const char *base = strrchr(s->path, '/');
	struct stat dst, st;
	struct statfs sfs;
	ssize_t n;
	int dfd, fd, r;
	unsigned i;

	if (base == NULL) {
		snprintf(dir, sizeof(dir), ".");
		base = s->path;
	} else if ((size_t)(base - s->path) >= sizeof(dir)) {
		return -ENAMETOOLONG;
	} else {
		memcpy(dir, s->path, (size_t)(base - s->path));
		dir[base - s->path] = '\0';
		if (dir[0] == '\0')
			snprintf(dir, sizeof(dir), "/");
		base++;
	}
	if (strlen(base) > NAME_MAX || base[0] == '\0')
		return -ENAMETOOLONG;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = -errno;
		snprintf(msg, sizeof(msg), "open: directory %.160s: %s", dir,
		    strerror(-r));
		return store_fail_errno(s, r, msg);
	}
	if (fstat(dfd, &dst) < 0) {
		r = -errno;
		goto out;
	}
	/* an existing database on a read-only mount would be opened
	 * read-only by SQLite; a missing one fails its create below anyway,
	 * so a policy that denies statfs (SELinux filesystem getattr) only
	 * loses the earlier message */
	if (fstatfs(dfd, &sfs) == 0 && (sfs.f_flags & ST_RDONLY)) {
		r = -EROFS;
		goto out;
	}
	r = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (r == -ENOENT) {
		if ((fd = openat(dfd, base,
			 O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 0640)) < 0 ||
		    fstat(fd, &st) < 0)
			r = -errno;
		else
			r = 0;
		if (fd >= 0)
			close(fd);
	}
	if (r < 0) {
		snprintf(msg, sizeof(msg), "open: %s: %s", base, strerror(-r));
		close(dfd);
		return store_fail_errno(s, r, msg);
	}
	if ((r = statedir_check_stat(&st, base, (uint32_t)dst.st_uid, msg + 6,
		 sizeof(msg) - 6)) < 0) {
		memcpy(msg, "open: ", 6);
		close(dfd);
		return store_fail_errno(s, r, msg);
	}
	for (i = 0; r == 0 && i < sizeof(side) / sizeof(side[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", base, side[i]);
		r = statedir_check_file(dfd, name, (uint32_t)dst.st_uid,
		    msg + 6, sizeof(msg) - 6);
		if (r == -ENOENT) {
			r = 0;
		} else if (r < 0) {
			memcpy(msg, "open: ", 6);
			close(dfd);
			return store_fail_errno(s, r, msg);
		}
	}
	if (r < 0)
		goto out;
	/* the directory's own path, every link resolved by the kernel */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
	if ((n = readlink(link, dir, sizeof(dir) - 1)) > 0 && dir[0] == '/') {
		dir[n] = '\0';
		if (stat(dir, &st) < 0 || st.st_dev != dst.st_dev ||
		    st.st_ino != dst.st_ino)
			n = -1;
	}
	if (n <= 0 || dir[0] != '/') /* no /proc: the path as given */
		r = snprintf(dbpath, dbpathsz, "%s", s->path);
	else
		r = snprintf(dbpath, dbpathsz, "%s%s%s", dir, n == 1 ? "" : "/",
		    base);
	r = r < 0 || (size_t)r >= dbpathsz ? -ENAMETOOLONG : 0;
out:
	if (r < 0) {
		snprintf(msg, sizeof(msg), "open: %s", strerror(-r));
		store_fail_errno(s, r, msg);
	}
	close(dfd);
	return r;
}

/* SQLITE_OK with *ret_bad: the file must be moved aside. */
static int
db_open(struct store *s, bool *ret_bad)
{
	char dbpath[PATH_MAX];
	int rc, r;

	*ret_bad = false;
	if ((r = db_precheck(s, dbpath, sizeof(dbpath))) < 0)
		return r;
	store_sqlite_setup();
	rc = sqlite3_open_v2(dbpath, &s->db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
		SQLITE_OPEN_EXRESCODE,
	    NULL);
	if (rc != SQLITE_OK)
		return rc;
	if ((rc = store_boot_fn(s->db)) != SQLITE_OK)
		return rc;
	/* Leave a suspect file and its WAL exactly as found. */
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	store_busy_set(s);
	if ((rc = db_check(s, ret_bad)) != SQLITE_OK || *ret_bad)
		return rc;
	if ((rc = db_settings(s)) == SQLITE_OK)
		rc = prepare_all(s);
	/* Our mark and version but not our tables: not ours after all. */
	if ((rc & 0xff) == SQLITE_ERROR || rc_corrupt(rc))
		return mark_bad(s, ret_bad, "schema", NULL);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	return rc;
}

static int
rename_if(const char *from, const char *to, const char *suffix)
{
	char a[PATH_MAX], b[PATH_MAX];

	snprintf(a, sizeof(a), "%s%s", from, suffix);
	snprintf(b, sizeof(b), "%s%s", to, suffix);
	if (rename(a, b) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Keep the bad file (and its WAL, for forensics) under a new name. */
static int
move_aside(struct store *s)
{
	char dst[sizeof(s->st.corrupt_path)];
	long long t = (long long)time(NULL);
	struct stat sb;
	int i, r;

	if (strlen(s->path) + 40 >= sizeof(dst))
		return -ENAMETOOLONG;
	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(dst, sizeof(dst), "%s.corrupt-%lld", s->path,
			    t);
		else
			snprintf(dst, sizeof(dst), "%s.corrupt-%lld.%d",
			    s->path, t, i);
		if (lstat(dst, &sb) < 0 && errno == ENOENT)
			break;
	}
	if (rename(s->path, dst) < 0)
		return -errno;
	if ((r = rename_if(s->path, dst, "-wal")) < 0 ||
	    (r = rename_if(s->path, dst, "-shm")) < 0 ||
	    (r = rename_if(s->path, dst, "-journal")) < 0)
		return r;
	s->st.corrupt_moved++;
	memcpy(s->st.corrupt_path, dst, sizeof(dst));
	return 0;
}

/*
 * Open s->path into s (s->db NULL on entry). A file that is not a healthy
 * store of ours is moved aside once and a fresh database created in its
 * place. On failure s->db may be left open: the caller closes it.
 */
static int
open_db(struct store *s)
{
	bool bad;
	int attempt, rc, r;

	for (attempt = 0; attempt < 2; attempt++) {
		/* What SQLite's WAL recovery would drop is said, and kept. */
		if (attempt == 0)
			(void)store_heal_before_open(s);
		rc = db_open(s, &bad);
		if (rc < 0) /* refused before SQLite: why is in the stats */
			return rc;
		if (rc != SQLITE_OK) {
			r = store_fail(s, rc, "open");
			/* A missing directory or a denied open says why. */
			if ((rc & 0xff) == SQLITE_CANTOPEN && s->db &&
			    sqlite3_system_errno(s->db))
				r = -sqlite3_system_errno(s->db);
			return r;
		}
		if (!bad)
			break;
		if (attempt > 0) /* a file we just created fails its checks */
			return -EIO;
		db_close(s);
		if ((r = move_aside(s)) < 0)
			return store_fail_errno(s, r,
			    "open: cannot move bad file");
	}
	/* A file moved aside: what still reads of it comes along. */
	if (attempt > 0)
		(void)store_salvage(s, s->st.corrupt_path);
	s->st.state = STORE_OK;
	store_after_write(s);
	return 0;
}

/* One database file (store_spool.c's store_open adds the spool). */
int
store_db_open(const char *path, const struct store_opts *o, struct store **ret)
{
	struct store *s;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	if ((s->path = strdup(path)) == NULL) {
		free(s);
		return -ENOMEM;
	}
	/* faults before it are not its own (its first open resets no
	 * index that readers may be using) */
	s->shm_seen = store_heal_faults();
	pthread_mutex_init(&s->lock, NULL);
	if (o)
		s->o = *o;
	else
		store_opts_default(&s->o);
	if ((r = open_db(s)) < 0) {
		store_db_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

/*
 * The database went bad while open (-EUCLEAN from a put or a read): close
 * the connection without a checkpoint, so file and WAL stay as found, move
 * them aside as store_open does and start a fresh database in the same
 * handle. Counted in corrupt_moved / corrupt_path. On failure the store is
 * left closed (calls return -EBADF) and store_recover may be tried again.
 */
int
store_recover(struct store *s)
{
	bool moved = false;
	int r;

	if (s == NULL)
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	if (s->db != NULL) {
		sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
		    NULL);
		db_close(s);
		if ((r = move_aside(s)) < 0) {
			store_fail_errno(s, r, "recover: cannot move bad file");
			goto fail;
		}
		moved = true;
	}
	/* Closed before (a failed recovery): the file is checked anew. */
	if ((r = open_db(s)) < 0)
		goto fail;
	if (moved)
		(void)store_salvage(s, s->st.corrupt_path);
	pthread_mutex_unlock(&s->lock);
	return 0;
fail:
	if (s->db)
		db_close(s);
	s->st.state = STORE_CLOSED;
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * Close the connection without a checkpoint and open the same file again
 * (the open's checks run; a bad file is moved aside as at open). Lock
 * held. Used after the -shm was cut under the connection (store_heal.c).
 */
int
store_reopen_locked(struct store *s)
{
	int r;

	if (s->db != NULL) {
		sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
		    NULL);
		db_close(s);
	}
	if ((r = open_db(s)) < 0) {
		if (s->db)
			db_close(s);
		s->st.state = STORE_CLOSED;
	}
	return r;
}

struct store *
store_db_close(struct store *s)
{
	if (s == NULL)
		return NULL;
	if (s->db)
		db_close(s);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
	return NULL;
}

/* SQLite's allocations in this process, every connection: now, peak. */
void
store_sqlite_memory(uint64_t *ret_used, uint64_t *ret_peak)
{
	sqlite3_int64 u = sqlite3_memory_used(),
		      p = sqlite3_memory_highwater(0);

	*ret_used = u > 0 ? (uint64_t)u : 0;
	*ret_peak = p > 0 ? (uint64_t)p : 0;
}

/*
 * The writer's page caches emptied of what no statement holds: between
 * writes (every window_s) the pages are read again from the OS's cache
 * when next needed. With a spool the main file's connection may cache up
 * to 8 MiB (db_journal) and would keep it; the caches grow with the file
 * otherwise, to 2 MiB a connection.
 */
void
store_release_memory(struct store *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->db != NULL)
		(void)sqlite3_db_release_memory(s->db);
	if (s->spool != NULL && s->spool->db != NULL)
		(void)sqlite3_db_release_memory(s->spool->db);
	pthread_mutex_unlock(&s->lock);
}

/* Of that, the page caches: what no SQLITE_CONFIG_PAGECACHE buffer took
 * (there is none), every connection's. */
uint64_t
store_sqlite_cache(void)
{
	sqlite3_int64 cur = 0, hi = 0;

	if (sqlite3_status64(SQLITE_STATUS_PAGECACHE_OVERFLOW, &cur, &hi, 0) !=
	    SQLITE_OK)
		return 0;
	return cur > 0 ? (uint64_t)cur : 0;
}

void
store_get_stats(const struct store *s, struct store_stats *ret)
{
	pthread_mutex_t *lock;

	if (s == NULL) {
		memset(ret, 0, sizeof(*ret));
		ret->state = STORE_CLOSED;
		return;
	}
	/* The lock is not part of the value: casting const off is sound. */
	lock = (pthread_mutex_t *)&s->lock;
	pthread_mutex_lock(lock);
	*ret = s->st;
	pthread_mutex_unlock(lock);
	ret->shm_faults = store_heal_faults(); /* the process's, every store */
}

const char *
store_state_name(enum store_state st)
{
	switch (st) {
	case STORE_OK:
		return "ok";
	case STORE_FULL:
		return "full";
	case STORE_IO_ERROR:
		return "io_error";
	case STORE_CLOSED:
		return "closed";
	}
	return "?";
}

static int
exec_locked(struct store *s, const char *sql, char *ret, size_t retsz)
{
	const char *tail = sql;
	sqlite3_stmt *st;
	bool got = false;
	int rc = SQLITE_OK;

	if (ret && retsz)
		ret[0] = '\0';
	if (s == NULL || s->db == NULL)
		return -EBADF;
	while (rc == SQLITE_OK && tail && *tail) {
		if ((rc = sqlite3_prepare_v2(s->db, tail, -1, &st, &tail)) !=
			SQLITE_OK ||
		    st == NULL)
			break;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *t;

			t = (const char *)sqlite3_column_text(st, 0);
			if (!got && ret && retsz)
				snprintf(ret, retsz, "%s", t ? t : "");
			got = true;
		}
		if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
		else
			(void)store_fail(s, rc, "exec");
		sqlite3_finalize(st);
	}
	return rc == SQLITE_OK ? 0 :
	    store_rc_errno(rc) ? store_rc_errno(rc) :
				 -EIO;
}

int
store_exec(struct store *s, const char *sql, char *ret, size_t retsz)
{
	int r;

	if (s == NULL) /* s->db: under the lock */
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = exec_locked(s, sql, ret, retsz);
	pthread_mutex_unlock(&s->lock);
	return r;
}

int
store_create_version(const char *path, unsigned version, const char *sql)
{
	struct stat sb;
	sqlite3 *db;
	int rc;

	if (version < 1 || version > STORE_SCHEMA_VERSION)
		return -EINVAL;
	if (stat(path, &sb) == 0)
		return -EEXIST;
	store_sqlite_setup();
	rc = sqlite3_open_v2(path, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc == SQLITE_OK)
		rc = store_boot_fn(db);
	if (rc == SQLITE_OK)
		rc = db_create(db,
		    STORE_VACUUM_INCREMENTAL); /* as older builds made */
	if (rc == SQLITE_OK)
		rc = migrate(db, 0, version);
	if (rc == SQLITE_OK && sql)
		rc = exec_sql(db, sql);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 :
	    store_rc_errno(rc) ? store_rc_errno(rc) :
				 -EIO;
}
