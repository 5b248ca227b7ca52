/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every file of the store shares: SQLite failures as -errno, running
 * a prepared statement, the transaction undone, the file sizes after a
 * write and the counter tables. The lowest layer of the
 * store: store.c, store_write.c, store_read.c and the store_<signal>.c
 * files call it; it calls none of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "store/store.h"
#include "window/window.h"
#include "store_int.h"

/* ------------------------------------------------------------- errors */

/* An SQLite result as 0 or -errno. */
int
store_rc_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_TOOBIG:
		return -EFBIG;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return -EINVAL;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		/* Retrying cannot help: store_recover() replaces the file. */
		return -EUCLEAN;
	default: /* IOERR*, CANTOPEN, PROTOCOL, ... */
		return -EIO;
	}
}

int
store_fail_errno(struct store *s, int err, const char *msg)
{
	s->st.last_err = err;
	snprintf(s->st.last_errmsg, sizeof(s->st.last_errmsg), "%s", msg);
	return err;
}

/* Map an SQLite failure, keep its message for the caller's one log line. */
int
store_fail(struct store *s, int rc, const char *what)
{
	char msg[sizeof(s->st.last_errmsg)];

	int err = store_rc_errno(rc) ? store_rc_errno(rc) : -EIO, sys;

	snprintf(msg, sizeof(msg), "%s: %s", what,
	    s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	/* A full tmpfs can surface as an I/O error (growing -shm, say). */
	if (s->db &&
	    ((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN)) {
		sys = sqlite3_system_errno(s->db);
		if (sys == ENOSPC || sys == EDQUOT)
			err = -ENOSPC;
	}
	return store_fail_errno(s, err, msg);
}

/* Writes that fail say so in health until one succeeds. */
void
store_note_write_error(struct store *s, int err)
{
	if (err == -ENOSPC)
		s->st.state = STORE_FULL;
	else if (err != -EBUSY && err != -EFBIG && err != -EINVAL)
		s->st.state = STORE_IO_ERROR;
}

/* Step to completion, ignoring rows; the statement is reset for reuse. */
int
store_run(sqlite3_stmt *st)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc == SQLITE_DONE)
		rc = store_check_insert(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

sqlite3_stmt *
store_stmt(struct store *s, sqlite3_stmt **slot, const char *sql)
{
	if (*slot == NULL && s->db != NULL &&
	    sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, slot,
		NULL) != SQLITE_OK) {
		sqlite3_finalize(*slot);
		*slot = NULL;
	}
	return *slot;
}

sqlite3_stmt *
store_ws(struct store *s, enum store_wstmt i)
{
	return store_stmt(s, &s->ws[i], store_ws_sql[i]);
}

sqlite3_stmt *
store_rs(struct store *s, enum store_rstmt i)
{
	return store_stmt(s, &s->rs[i], store_rs_sql[i]);
}

/* The statements of every window's put, kept prepared; and those that
 * undo (store_rollback), which must not need a prepare that can fail. */
static bool
ws_hot(enum store_wstmt i)
{
	return i == WS_BEGIN || i == WS_COMMIT || i == WS_ROLLBACK ||
	    i == WS_INS_WINDOW || i == WS_INS_BOOT || i == WS_COVERED ||
	    i == WS_INS_PARTS || i == WS_SAVEPOINT || i == WS_RELEASE ||
	    i == WS_ROLLBACK_TO;
}

static void
stmt_drop(sqlite3_stmt **slot)
{
	sqlite3_finalize(*slot);
	*slot = NULL;
}

void
store_stmts_release(struct store *s, bool parts)
{
	unsigned i, k;

	for (i = 0; i < WS__MAX; i++)
		if (!ws_hot((enum store_wstmt)i))
			stmt_drop(&s->ws[i]);
	for (i = 0; i < RS__MAX; i++)
		stmt_drop(&s->rs[i]);
	for (i = 0; i < WPART__MAX; i++)
		for (k = 0; k < STORE_PART_NSTMT; k++) {
			const char *sql = s->part_st[i][k] != NULL ?
			    sqlite3_sql(s->part_st[i][k]) :
			    NULL;

			if (sql != NULL &&
			    (parts || strncmp(sql, "INSERT", 6) != 0))
				stmt_drop(&s->part_st[i][k]);
		}
}

/*
 * A maintenance step's write transaction: BEGIN IMMEDIATE on its own, or a
 * savepoint inside the pass's one transaction (store_maint.c), so that a
 * pass writes page 1, the tail pages its steps share and their journal
 * once rather than once per step (doc/storage.md, "Maintenance"). A
 * step's store_rollback undoes that step alone.
 */
int
store_txn_begin(struct store *s)
{
	if (s->pass_txn && !sqlite3_get_autocommit(s->db))
		return store_run(store_ws(s, WS_SAVEPOINT));
	s->pass_txn = false; /* SQLite ended it (SQLITE_FULL, I/O error) */
	return store_run(store_ws(s, WS_BEGIN));
}

int
store_txn_commit(struct store *s)
{
	if (s->pass_txn && !sqlite3_get_autocommit(s->db))
		return store_run(store_ws(s, WS_RELEASE));
	return store_run(store_ws(s, WS_COMMIT));
}

/* One integer from a one-row statement (PRAGMA page_count, count(*)). */
int
store_run_int(sqlite3_stmt *st, int64_t *ret)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * After a step of st that finished (SQLITE_DONE): an INSERT of ours always
 * adds its row; one that added none was swallowed by something that is
 * not ours. STORE_RC_NOTHING then, else SQLITE_DONE.
 */
int
store_check_insert(sqlite3_stmt *st)
{
	const char *sql = sqlite3_sql(st);

	if (sql == NULL || strncmp(sql, "INSERT", 6) != 0 ||
	    strstr(sql, "DO NOTHING") != NULL)
		return SQLITE_DONE;
	return sqlite3_changes(sqlite3_db_handle(st)) > 0 ? SQLITE_DONE :
							    STORE_RC_NOTHING;
}

static uint64_t
file_bytes(const char *path, const char *suffix)
{
	char p[PATH_MAX];
	struct stat sb;

	if ((size_t)snprintf(p, sizeof(p), "%s%s", path, suffix) >= sizeof(p))
		return 0;
	return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/*
 * The size bound counts the WAL as well: once the WAL passes half its
 * reserve it is checkpointed and truncated, so main file + WAL stays within
 * max_bytes after every write. A reader mostly makes the writer wait not
 * here: the checkpoint runs without the busy handler, so with a reader's
 * snapshot still in the WAL it copies what it can (as PASSIVE does) and
 * returns SQLITE_BUSY at once instead of sleeping until the reader ends.
 * Readers that hold snapshots back to back would then keep the WAL from
 * ever being rewound: once it is past the whole reserve, or after
 * STORE_WAL_BUSY_RUN such tries in a row, the truncation waits for them
 * with the busy handler (up to busy_timeout_ms), counted in wal_waited.
 * Its failure does not undo the commit; it is tried again after the next
 * write.
 */
void
store_after_write(struct store *s)
{
	uint64_t wal = file_bytes(s->path, "-wal");

	/* an index a -shm fault emptied: no checkpoint before the reopen */
	if (store_heal_pending(s))
		return;
	if (s->o.max_bytes && wal > s->wal_reserve / 2) {
		int64_t t0 = clock_ns(CLOCK_MONOTONIC);
		bool wait = wal > s->wal_reserve ||
		    s->wal_busy_run >= STORE_WAL_BUSY_RUN;
		int rc;

		if (wait)
			s->st.wal_waited++;
		else
			sqlite3_busy_handler(s->db, NULL, NULL);
		rc = sqlite3_wal_checkpoint_v2(s->db, NULL,
		    SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		store_busy_set(s);
		if (rc == SQLITE_BUSY && !wait)
			s->st.wal_busy++;
		s->wal_busy_run = rc == SQLITE_BUSY ? s->wal_busy_run + 1 : 0;
		store_tclock_add_ckpt(
		    (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0));
		wal = file_bytes(s->path, "-wal");
	}
	/* a rollback journal kept between moves (PERSIST) counts too */
	s->st.db_bytes = file_bytes(s->path, "") + wal +
	    file_bytes(s->path, "-journal");
}

/* A struct's field named in a counter table, as a number. */
uint64_t
store_field_get(const void *base, const struct store_field *f)
{
	const char *p = (const char *)base + f->off;
	uint32_t v32;
	uint64_t v64;

	if (f->size == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

void
store_field_set(void *base, const struct store_field *f, uint64_t v)
{
	char *p = (char *)base + f->off;
	uint32_t v32 = (uint32_t)v;

	if (f->size == 4)
		memcpy(p, &v32, 4);
	else
		memcpy(p, &v, 8);
}

/*
 * Hand free pages back to the file system, but only past a reserve the
 * next moves reuse (budget / 32, at least 256 KiB; down to half of it):
 * an incremental vacuum moves pages from the end of the file into the
 * holes, each written again with its parent and pointer-map page, and a
 * file that shrinks after every roll-up pass grows back at the next move,
 * appending where it could have reused. A free-list leaf reused is not
 * even journaled (doc/storage.md, "The main file's journal"). Inside the
 * caller's transaction.
 */
int
store_vacuum_excess(struct store *s)
{
	int64_t nfree, keep;
	char sql[64];
	int rc;

	if ((rc = store_run_int(store_ws(s, WS_FREELIST), &nfree)) != SQLITE_OK)
		return rc;
	keep = (int64_t)s->budget / 32;
	if (keep < (256 << 10))
		keep = 256 << 10;
	keep /= s->page_size > 0 ? s->page_size : 4096;
	if (s->o.max_bytes == 0 || nfree <= keep || !s->incremental)
		return SQLITE_OK;
	snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%lld)",
	    (long long)(nfree - keep / 2));
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL);
}

/* The main file's pages and, of those, the free ones; a failure is the
 * store's (store_fail, "page count"). */
int
store_pages(struct store *s, int64_t *ret_pages, int64_t *ret_free)
{
	int rc;

	rc = store_run_int(store_ws(s, WS_PAGE_COUNT), ret_pages);
	if (rc == SQLITE_OK)
		rc = store_run_int(store_ws(s, WS_FREELIST), ret_free);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "page count");
	return 0;
}

/*
 * Keep the main file within its budget inside the current transaction, so
 * the bound holds at every commit (auto_vacuum NONE: the pages in use; the
 * file may keep what this transaction appended first, store_vacuum_over):
 * drop the oldest windows (never `keep`,
 * the one being written) and hand the freed pages back to the file system.
 * Once over the bound it makes room down to a low-water mark, 1/64 below,
 * so that the next puts do not each pay for a delete and a vacuum.
 * -EFBIG: even alone, `keep` does not fit.
 */
int
store_enforce_size(struct store *s, int64_t keep)
{
	int64_t psz = s->page_size, pages, nfree, nwin, k, excess, per;
	int64_t limit = (int64_t)s->budget;
	int64_t low = limit - limit / 64;
	sqlite3_stmt *f;
	int rc;

	for (;;) {
		if ((rc = store_pages(s, &pages, &nfree)) < 0)
			return rc;
		/* auto_vacuum NONE: free pages stay in the file and are
		 * reused first; the pages in use are bounded (the file
		 * follows them, and a file left over the bound by a lower
		 * bound is rebuilt after the pass: store_vacuum_over) */
		if ((s->incremental ? pages : pages - nfree) * psz <= limit)
			return 0;
		/* Free pages alone are enough: give them back. */
		if (s->incremental && nfree > 0 &&
		    (pages - nfree) * psz <= limit) {
			if ((rc = store_run(store_ws(s, WS_VACUUM))) !=
			    SQLITE_OK)
				return store_fail(s, rc, "incremental_vacuum");
			continue;
		}
		if ((rc = store_run_int(store_ws(s, WS_COUNT), &nwin)) !=
		    SQLITE_OK)
			return store_fail(s, rc, "count");
		if (nwin <= (keep ? 1 : 0)) {
			if ((s->incremental ? pages : pages - nfree) * psz <=
			    (int64_t)s->budget)
				return 0; /* fits, just not with headroom */
			return store_fail_errno(s, -EFBIG,
			    "store: one window exceeds max_bytes");
		}
		limit = low;
		/* Guess from the average window, then let the loop correct. */
		excess = (pages - nfree) * psz - limit;
		per = (pages - nfree) * psz / nwin;
		k = (per > 0 ? excess / per : 0) + 1;
		/* first the summaries of their spans (store_tasksum.c) */
		if ((f = s->sum_st[SUMF_OLDEST]) != NULL) {
			sqlite3_bind_int64(f, 1, keep);
			sqlite3_bind_int64(f, 2, k);
			while ((rc = sqlite3_step(f)) == SQLITE_ROW)
				;
			sqlite3_reset(f);
			if (rc != SQLITE_DONE)
				return store_fail(s, rc, "summaries");
		}
		sqlite3_bind_int64(store_ws(s, WS_DEL_OLDEST), 1, keep);
		sqlite3_bind_int64(store_ws(s, WS_DEL_OLDEST), 2, k);
		if ((rc = store_run(store_ws(s, WS_DEL_OLDEST))) != SQLITE_OK)
			return store_fail(s, rc, "delete oldest");
		s->st.deleted_size += (uint64_t)sqlite3_changes(s->db);
		/* level-0 rows of the windows gone, or their spans whole */
		if (sqlite3_changes(s->db) > 0 && store_span_on(s) &&
		    (rc = store_span_sweep(s)) != SQLITE_OK)
			return store_fail(s, rc, "span sweep");
		if (s->incremental &&
		    (rc = store_run(store_ws(s, WS_VACUUM))) != SQLITE_OK)
			return store_fail(s, rc, "incremental_vacuum");
	}
}

/*
 * auto_vacuum NONE: the file is rebuilt without its free pages (VACUUM,
 * outside any transaction, after the pass that made the room) only when
 * it was over its budget at open (the bound was lowered since it was
 * made), or is over it by more than an eighth. At the bound the file
 * otherwise stays where it is: the transaction that crosses the budget
 * grows the file by what it appended before store_enforce_size deleted
 * down to the low-water mark, and the pages freed there are reused by
 * the next ones, so the file holds at most the budget plus the largest
 * single put or move (inside the WAL's reserve of max_bytes). A rebuild
 * writes the whole file twice; at every crossing it would cost far more
 * than NONE saves. s->st.rebuilds counts them.
 */
int
store_vacuum_over(struct store *s)
{
	int64_t pages, nfree, budget = (int64_t)s->budget;
	int rc;

	if (s->incremental || s->o.max_bytes == 0)
		return 0;
	if ((rc = store_pages(s, &pages, &nfree)) < 0)
		return rc;
	if (pages * s->page_size <= budget) {
		s->rebuild_due = false;
		return 0;
	}
	/* the pages in use must fit, or a rebuild gains nothing yet */
	if (nfree == 0 || (pages - nfree) * s->page_size > budget ||
	    (!s->rebuild_due && pages * s->page_size <= budget + budget / 8))
		return 0;
	if ((rc = sqlite3_exec(s->db, "VACUUM", NULL, NULL, NULL)) != SQLITE_OK)
		return store_fail(s, rc, "vacuum");
	s->rebuild_due = false;
	s->st.rebuilds++;
	return 0;
}

void
store_blob_error(struct store *s)
{
	struct store *w = s->writer ? (struct store *)s->writer : s;

	__atomic_add_fetch(&w->st.blob_errors, 1, __ATOMIC_RELAXED);
}

/*
 * Parts kept as one framed, compressed blob per window in a table of
 * their own (store_cgroup.c, store_fgbg.c, store_wcpu.c): st inserts ?1
 * the window id, ?2 the blob.
 */
int
store_blob_put(sqlite3_stmt *st, int64_t id, unsigned part, unsigned version,
    const struct store_enc *pl)
{
	struct store_enc fr = { 0 };
	int rc = SQLITE_NOMEM;

	if (pl->err == 0 &&
	    store_frame_put_zstd(&fr, part, version, pl->b.p, pl->b.len,
		STORE_ZSTD_LEVEL) == 0 &&
	    fr.err == 0) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_blob(st, 2, fr.b.p, (int)fr.b.len, SQLITE_STATIC);
		rc = store_run(st);
		sqlite3_clear_bindings(st);
	}
	store_enc_release(&fr);
	return rc;
}

/*
 * A blob's payload decoded by dec when its frame is of part and version;
 * -EBADMSG for a frame that is not, or a payload dec refuses.
 */
int
store_blob_unframe(const void *b, size_t n, unsigned part, unsigned version,
    store_blob_dec *dec, void **ret)
{
	struct store_frame f;
	int r;

	*ret = NULL;
	if (store_frame_get(b, n, &f) < 0)
		return -EBADMSG;
	if (f.part != part || f.version != version)
		r = -EBADMSG;
	else
		r = dec(f.payload, f.len, ret);
	store_frame_release(&f);
	return r;
}

/* A named parameter of st, when the statement has it. */
void
store_bind_named(sqlite3_stmt *st, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(st, name);

	if (i > 0)
		sqlite3_bind_int64(st, i, v);
}

/*
 * Column col of st's row, a framed blob, decoded into *ret. One that does
 * not decode is counted (blob_errors) and reads as none (*ret NULL, 0);
 * -errno for what else failed.
 */
int
store_blob_column(struct store *s, sqlite3_stmt *st, int col, unsigned part,
    unsigned version, store_blob_dec *dec, void **ret)
{
	int r = store_blob_unframe(sqlite3_column_blob(st, col),
	    (size_t)sqlite3_column_bytes(st, col), part, version, dec, ret);

	if (r == -EBADMSG) {
		store_blob_error(s);
		*ret = NULL;
		r = 0;
	}
	return r;
}

/*
 * Where a folded part's blob of window id is (schema v28; fold: its
 * column of the parts row, st: its STORE_FOLD_SEL). While store_load of
 * id holds the window's parts row (RS_PARTS), the blob is that row's
 * column when not NULL; else it can only be in the part's table (a blob
 * is in one place), so st looks there alone (?2 = 0), as it does for a
 * window without a parts row. Otherwise (and for STORE_FOLD_NONE, a
 * part that names no column) st looks in both. SQLITE_ROW
 * with the blob at column *ret_col of *ret_st, SQLITE_DONE (none), or an
 * error code. The caller resets st; RS_PARTS stays as it was (for
 * store_wparts_done).
 */
int
store_fold_step(struct store *s, sqlite3_stmt *st, enum store_fold fold,
    int64_t id, sqlite3_stmt **ret_st, int *ret_col)
{
	bool held = fold != STORE_FOLD_NONE && s->ld_active && s->ld_id == id;
	int col = STORE_FOLD_COL(fold);

	if (held && s->ld_parts &&
	    sqlite3_column_type(s->rs[RS_PARTS], col) != SQLITE_NULL) {
		*ret_st = s->rs[RS_PARTS];
		*ret_col = col;
		return SQLITE_ROW;
	}
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, !held);
	*ret_st = st;
	*ret_col = 0;
	return sqlite3_step(st);
}

/*
 * Window id's folded part fold by st (store_fold_step) into *ret (NULL:
 * none). One that does not decode is counted (blob_errors) and the window
 * reads without it; -errno for what else failed.
 */
int
store_blob_load(struct store *s, sqlite3_stmt *st, enum store_fold fold,
    int64_t id, unsigned part, unsigned version, store_blob_dec *dec,
    void **ret, const char *what)
{
	sqlite3_stmt *at;
	int rc, r = 0, col;

	*ret = NULL;
	if ((rc = store_fold_step(s, st, fold, id, &at, &col)) == SQLITE_ROW) {
		r = store_blob_column(s, at, col, part, version, dec, ret);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, what);
	return r;
}

/*
 * The id a boot is interned under (schema v24, doc/storage.md "boot"):
 * 0 for "" (unknown), else 47 bits of a 64-bit FNV-1a hash of the text,
 * never 0. A function of the text alone, so the spool and the main file
 * agree without a shared counter; 47 bits are 6 bytes in a record, and
 * two boots of one file share an id with odds ~ n² / 2⁴⁸ (n boots).
 */
int64_t
store_boot_key(const char *boot_id, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		h ^= (unsigned char)boot_id[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h &= (1ULL << 47) - 1;
	return h ? (int64_t)h : 1;
}

static void
boot_key_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	sqlite3_result_int64(ctx,
	    store_boot_key((const char *)sqlite3_value_text(argv[0]),
		(size_t)sqlite3_value_bytes(argv[0])));
}

/* ------------------------------------------------------------- set-up */

/*
 * SQLite's page cache takes, by default, one block of 20 pages (~87 KiB
 * at 4 KiB pages) for each database file of a connection at its first
 * read, whether the connection then reads 3 pages or 300, and keeps it
 * until the connection closes; its free list, written through every
 * slot, makes all of it resident. The writer's two files and each read
 * connection's two (the spool attached) held 0.96 MiB of such blocks at
 * the end of set-up (bench/README.md, "SQLite's page cache page by
 * page"). With no initial block every cached page is allocated when it
 * is first read, so a cache holds what its connection has read (within
 * its cache_size) and sqlite3_db_release_memory gives all of it back.
 *
 * Small allocations (SQLITE_CONFIG_SMALL_MALLOC): a sorter keeps its
 * records each in an allocation of its own instead of one buffer it
 * doubles. A top-N's edge windows are sorted with their task blobs (the
 * spool's views are a UNION ALL); the doubled buffer passed the 16 KiB
 * mmap threshold (compat.h) at 32, 64 and 128 KiB, and unless the heap
 * happened to hold free chunks that large every read mapped, faulted in
 * and unmapped them: ~3,000 page faults a read thread in 8 s of 32
 * paced callers, 2.5x the read's CPU (bench/README.md, "The read pool
 * opened on demand").
 *
 * Process-wide, and only before SQLite initialises: every open of the
 * store calls this first, and a process that used SQLite before keeps
 * its settings (SQLITE_MISUSE, ignored).
 */
static void
sqlite_setup_once(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
	(void)sqlite3_config(SQLITE_CONFIG_SMALL_MALLOC, 1);
}

void
store_sqlite_setup(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sqlite_setup_once);
}

/* boot_key(text) in SQL, on every connection that reads or writes
 * windows (store.c, store_conn.c, store_salvage.c). */
int
store_boot_fn(sqlite3 *db)
{
	return sqlite3_create_function(db, "boot_key", 1,
	    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
	    boot_key_fn, NULL, NULL);
}
