/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Read-only connections to the window store, one per query thread. In WAL
 * mode a reader works on a snapshot of its own: it neither waits for the
 * writer (a put, a roll-up, a size trim) nor makes the writer wait, and
 * readers do not wait for each other. So no read ever takes the writer's
 * lock, and a long roll-up pass delays no `top`. With a spool the main
 * file has a rollback journal instead (store.c, db_journal): a request
 * holds SHARED on it from its snapshot to its end, a batched move's
 * commit waits for it, and a snapshot taken during that commit waits for
 * the commit (store_busy.c) — the per-window commits, to the spool, never
 * wait on a reader.
 *
 * A read connection is a struct store of its own (its lock is only ever
 * taken by the thread that owns it), so every read function of store_*.c
 * runs on it unchanged. It opens the file the writer opened, read-only
 * (SQLITE_OPEN_READONLY and PRAGMA query_only: a bug in a read path cannot
 * write), and opens it again when the writer has moved a damaged file
 * aside and started a new one (another inode at the same path).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/util.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store_int.h"

/*
 * The spool's windows beside the main file's (store_spool.c): it is
 * attached (read-only, as the connection) and each table that moves is
 * shadowed by a temporary view of both, a spool row counting while the
 * main file has no window of its id. Views answer lookups by window id
 * and range scans of windows with the files' own indexes; a join of two
 * views would not (SQLite reads the inner one whole), so reads join in C.
 */
static int
view_both(sqlite3 *db, const char *t, const char *cols, void *arg)
{
	bool inst = strcmp(t, "instance") == 0;
	bool keys = strcmp(t, "window_key") == 0 || strcmp(t, "boot") == 0;
	const char *key = inst	 ? "iid" :
	    keys		 ? "id" :
	    strcmp(t, "windows") ? "window_id" :
				   "id";
	struct vbuf b = { 0 };
	int rc;

	(void)arg;
	/* level 0's span tables are in these two (store_span_views) */
	if (strcmp(t, "window_tasks") == 0 || strcmp(t, "window_parts") == 0)
		return SQLITE_OK;
	/* an instance or key row counts once too: the main file's while it
	 * has one */
	if (vbuf_printf(&b,
		"CREATE TEMP VIEW \"%s\" AS SELECT %s FROM main.\"%s\""
		" UNION ALL SELECT %s FROM spool.\"%s\" AS s WHERE NOT EXISTS"
		" (SELECT 1 FROM main.%s m WHERE m.%s = s.%s)",
		t, cols, t, cols, t,
		inst	 ? "instance" :
		    keys ? t :
			   "windows",
		inst ? "iid" : "id", key) < 0)
		return SQLITE_NOMEM;
	rc = sqlite3_exec(db, b.p, NULL, NULL, NULL);
	vbuf_release(&b);
	return rc;
}

static int
conn_spool(struct store *rc)
{
	const char *path = rc->o.spool_path;
	struct stat sb;
	sqlite3_stmt *st;
	int r;

	rc->spool_attached = false;
	if (path == NULL || path[0] == '\0' || stat(path, &sb) < 0)
		return SQLITE_OK; /* none (yet): the main file alone */
	if ((r = sqlite3_prepare_v2(rc->db, "ATTACH ?1 AS spool", -1, &st,
		 NULL)) != SQLITE_OK)
		return r;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	r = store_run(st);
	sqlite3_finalize(st);
	if (r == SQLITE_OK)
		r = store_spool_tables(rc->db, view_both, NULL);
	if (r != SQLITE_OK)
		return r;
	rc->spool_attached = true;
	rc->spool_dev = sb.st_dev;
	rc->spool_ino = sb.st_ino;
	return SQLITE_OK;
}

static int
conn_prepare(struct store *rc)
{
	int r;

	if ((r = store_read_prepare(rc)) != SQLITE_OK ||
	    (r = store_parts_prepare(rc, false)) != SQLITE_OK)
		return r;
	/* prepared to check them; a query prepares what it reads */
	store_stmts_release(rc, true);
	return SQLITE_OK;
}

enum { SNAP_BEGIN, SNAP_SPOOL, SNAP_MAIN, SNAP_COMMIT, SNAP__MAX };

static const char *const snap_sql[SNAP__MAX] = {
	[SNAP_BEGIN] = "BEGIN",
	[SNAP_SPOOL] = "SELECT 1 FROM spool.windows LIMIT 1",
	[SNAP_MAIN] = "SELECT 1 FROM main.windows LIMIT 1",
	[SNAP_COMMIT] = "COMMIT",
};

/* One of the snapshot's statements run to its end (prepared at its first
 * use, kept with the connection). */
static int
snap_run(struct store *rc, unsigned i)
{
	int rc_;

	if (rc->snap_st[i] == NULL &&
	    (rc_ = sqlite3_prepare_v3(rc->db, snap_sql[i], -1,
		 SQLITE_PREPARE_PERSISTENT, &rc->snap_st[i], NULL)) !=
		SQLITE_OK) {
		rc->snap_st[i] = NULL;
		return rc_;
	}
	while ((rc_ = sqlite3_step(rc->snap_st[i])) == SQLITE_ROW)
		;
	sqlite3_reset(rc->snap_st[i]);
	return rc_ == SQLITE_DONE ? SQLITE_OK : rc_;
}

static void
conn_db_close(struct store *rc)
{
	unsigned i;

	if (rc->db == NULL)
		return;
	if (rc->in_txn)
		sqlite3_exec(rc->db, "COMMIT", NULL, NULL, NULL);
	rc->in_txn = false;
	for (i = 0; i < SNAP__MAX; i++) {
		sqlite3_finalize(rc->snap_st[i]);
		rc->snap_st[i] = NULL;
	}
	store_read_finalize(rc);
	store_parts_finalize(rc);
	store_prov_finalize(rc);
	sqlite3_close(rc->db);
	rc->db = NULL;
	rc->idle = false;
}

/* Open rc->path read-only; -errno, rc->db NULL on failure. */
static int
conn_db_open(struct store *rc)
{
	struct stat sb;
	int r;

	if (stat(rc->path, &sb) < 0)
		return errno == ENOENT ? -EBADF : -errno;
	store_sqlite_setup();
	r = sqlite3_open_v2(rc->path, &rc->db,
	    SQLITE_OPEN_READONLY | SQLITE_OPEN_EXRESCODE, NULL);
	if (r == SQLITE_OK)
		r = store_boot_fn(rc->db);
	if (r == SQLITE_OK) {
		store_busy_set(rc); /* a move's commit: waited for */
		r = conn_spool(rc);
	}
	/* level 0's span tables (store_span.c), made again when a span
	 * table came or went (store_conn_begin) */
	if (r == SQLITE_OK) {
		rc->span_schema = store_span_schema(rc->db);
		r = store_span_views(rc->db, rc->spool_attached);
	}
	if (r == SQLITE_OK) {
		r = sqlite3_exec(rc->db, "PRAGMA query_only = 1", NULL, NULL,
		    NULL);
	}
	if (r == SQLITE_OK)
		r = conn_prepare(rc);
	if (r != SQLITE_OK) {
		store_fail(rc, r, "read connection");
		conn_db_close(rc);
		return -EIO;
	}
	rc->dev = sb.st_dev;
	rc->ino = sb.st_ino;
	rc->st.state = STORE_OK;
	rc->opens++;
	return 0;
}

/* The handle; open: the file opened now too (else at the first read). */
static int
conn_new(const struct store *writer, bool open, struct store **ret)
{
	struct store *rc;

	if (writer == NULL || writer->path == NULL)
		return -EBADF;
	if ((rc = calloc(1, sizeof(*rc))) == NULL)
		return -ENOMEM;
	if ((rc->path = strdup(writer->path)) == NULL) {
		free(rc);
		return -ENOMEM;
	}
	pthread_mutex_init(&rc->lock, NULL);
	rc->o = writer->o;
	rc->writer = writer;
	rc->st.state = STORE_CLOSED;
	/* The file may not be there yet: opened at the first read. */
	if (open)
		(void)conn_db_open(rc);
	*ret = rc;
	return 0;
}

int
store_conn_open(const struct store *writer, struct store **ret)
{
	return conn_new(writer, true, ret);
}

/*
 * A read pool thread's handle with nothing opened: its first read opens
 * the file (store_conn_begin, as after a move aside). A thread that is
 * never asked holds no connection: SQLite's schema of both files, the
 * views and the summaries' statements are ~0.3-0.4 MiB a connection
 * (doc/storage.md, "The read pool opened on demand").
 */
int
store_conn_new(const struct store *writer, struct store **ret)
{
	return conn_new(writer, false, ret);
}

struct store *
store_conn_close(struct store *rc)
{
	if (rc == NULL)
		return NULL;
	conn_db_close(rc);
	pthread_mutex_destroy(&rc->lock);
	free(rc->path);
	free(rc);
	return NULL;
}

/*
 * An idle reader's memory given back, its connection kept: the decoded
 * windows and summaries, the sums' arrays, the names, the statements a
 * read prepares at its first use and SQLite's page cache go; the file,
 * the spool attached to it, the views over both and the summaries'
 * statements stay. Opening them again was most of a connection's first
 * read (doc/storage.md, "Idle: released, not closed").
 */
void
store_conn_idle(struct store *rc)
{
	if (rc != NULL && rc->db != NULL && !rc->in_txn && !rc->idle) {
		store_rcache_free(rc);
		store_wcache_free(rc);
		store_aggs_free(&rc->top_aggs);
		store_knames_free(rc);
		store_stmts_release(rc, true);
		store_prov_finalize(rc);
		sqlite3_db_release_memory(rc->db);
		rc->idle = true;
	}
	store_codec_release(); /* the calling (reader's) thread's */
}

bool
store_conn_is_open(const struct store *rc)
{
	return rc != NULL && rc->db != NULL && !rc->idle;
}

bool
store_conn_has_file(const struct store *rc)
{
	return rc != NULL && rc->db != NULL;
}

/*
 * Start a read: one snapshot for every statement of the request. The
 * writer raises max_span_ns before it commits a longer window, so the
 * value read after the snapshot began covers every window in it.
 */
int
store_conn_begin(struct store *rc)
{
	struct stat sb;
	uint64_t busy0;
	int64_t ver;
	int r;

	if (rc->db != NULL &&
	    (stat(rc->path, &sb) < 0 || sb.st_dev != rc->dev ||
		sb.st_ino != rc->ino))
		conn_db_close(rc); /* moved aside: a new file, or none */
	/* the spool came, went or is another file: attach what is there */
	if (rc->db != NULL && rc->o.spool_path != NULL &&
	    rc->o.spool_path[0] != '\0' &&
	    (stat(rc->o.spool_path, &sb) < 0 ?
		    rc->spool_attached :
		    !rc->spool_attached || sb.st_dev != rc->spool_dev ||
			sb.st_ino != rc->spool_ino))
		conn_db_close(rc);
	if (rc->db == NULL && (r = conn_db_open(rc)) < 0)
		return r;
	rc->idle = false;
	/* the spool's snapshot before the main file's: a window that moves
	 * in between is then in both (and counted once), never in neither.
	 * With a rollback journal the main file's SHARED lock waits for a
	 * move's commit (store_busy.c): counted, never an error below the
	 * busy timeout */
	busy0 = rc->busy_ns;
	store_busy_reading(true); /* a lend can help from here on */
	if ((r = snap_run(rc, SNAP_BEGIN)) != SQLITE_OK ||
	    (rc->spool_attached &&
		(r = snap_run(rc, SNAP_SPOOL)) != SQLITE_OK) ||
	    (r = snap_run(rc, SNAP_MAIN)) != SQLITE_OK) {
		sqlite3_exec(rc->db, "ROLLBACK", NULL, NULL, NULL);
		conn_db_close(rc);
		store_busy_reading(false);
		return store_fail(rc, r, "read snapshot");
	}
	store_busy_note(false, rc->busy_ns - busy0);
	/* a span table came or went since the views were made: again, as
	 * this snapshot has them (temp objects only) */
	if ((ver = store_span_schema(rc->db)) != rc->span_schema &&
	    ((r = sqlite3_exec(rc->db, "PRAGMA query_only = 0", NULL, NULL,
		  NULL)) != SQLITE_OK ||
		(r = store_span_views(rc->db, rc->spool_attached)) !=
		    SQLITE_OK ||
		(r = sqlite3_exec(rc->db, "PRAGMA query_only = 1", NULL, NULL,
		     NULL)) != SQLITE_OK)) {
		sqlite3_exec(rc->db, "ROLLBACK", NULL, NULL, NULL);
		conn_db_close(rc);
		store_busy_reading(false);
		return store_fail(rc, r, "read views");
	}
	rc->span_schema = ver;
	rc->in_txn = true;
	rc->max_span_ns = __atomic_load_n(&rc->writer->max_span_ns,
	    __ATOMIC_ACQUIRE);
	return 0;
}

void
store_conn_end(struct store *rc)
{
	if (rc->db != NULL && rc->in_txn)
		(void)snap_run(rc, SNAP_COMMIT);
	rc->in_txn = false;
	store_busy_reading(false);
}
