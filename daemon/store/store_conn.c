/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Read-only connections to the window store, one per query thread. In WAL
 * mode a reader works on a snapshot of its own: it neither waits for the
 * writer (a put, a roll-up, a size trim) nor makes the writer wait, and
 * readers do not wait for each other. So no read ever takes the writer's
 * lock, and a long roll-up pass delays no `top`.
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

#include "store/store.h"
#include "store_int.h"

static int
conn_prepare(struct store *rc)
{
	int r;

	if ((r = store_read_prepare(rc)) != SQLITE_OK ||
	    (r = store_parts_prepare(rc, false)) != SQLITE_OK)
		return r;
	return SQLITE_OK;
}

static void
conn_db_close(struct store *rc)
{
	if (rc->db == NULL)
		return;
	if (rc->in_txn)
		sqlite3_exec(rc->db, "COMMIT", NULL, NULL, NULL);
	rc->in_txn = false;
	store_read_finalize(rc);
	store_parts_finalize(rc);
	sqlite3_close(rc->db);
	rc->db = NULL;
}

/* Open rc->path read-only; -errno, rc->db NULL on failure. */
static int
conn_db_open(struct store *rc)
{
	struct stat sb;
	int r;

	if (stat(rc->path, &sb) < 0)
		return errno == ENOENT ? -EBADF : -errno;
	r = sqlite3_open_v2(rc->path, &rc->db,
	    SQLITE_OPEN_READONLY | SQLITE_OPEN_EXRESCODE, NULL);
	if (r == SQLITE_OK) {
		sqlite3_busy_timeout(rc->db,
		    rc->o.busy_timeout_ms ? rc->o.busy_timeout_ms : 1000);
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
	return 0;
}

int
store_conn_open(const struct store *writer, struct store **ret)
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
	(void)conn_db_open(rc);
	*ret = rc;
	return 0;
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
 * Start a read: one snapshot for every statement of the request. The
 * writer raises max_span_ns before it commits a longer window, so the
 * value read after the snapshot began covers every window in it.
 */
int
store_conn_begin(struct store *rc)
{
	struct stat sb;
	int r;

	if (rc->db != NULL &&
	    (stat(rc->path, &sb) < 0 || sb.st_dev != rc->dev ||
		sb.st_ino != rc->ino))
		conn_db_close(rc); /* moved aside: a new file, or none */
	if (rc->db == NULL && (r = conn_db_open(rc)) < 0)
		return r;
	if ((r = sqlite3_exec(rc->db, "BEGIN; SELECT 1 FROM windows LIMIT 1",
		 NULL, NULL, NULL)) != SQLITE_OK) {
		sqlite3_exec(rc->db, "ROLLBACK", NULL, NULL, NULL);
		conn_db_close(rc);
		return store_fail(rc, r, "read snapshot");
	}
	rc->in_txn = true;
	rc->max_span_ns = __atomic_load_n(&rc->writer->max_span_ns,
	    __ATOMIC_ACQUIRE);
	return 0;
}

void
store_conn_end(struct store *rc)
{
	if (rc->db != NULL && rc->in_txn)
		sqlite3_exec(rc->db, "COMMIT", NULL, NULL, NULL);
	rc->in_txn = false;
}
