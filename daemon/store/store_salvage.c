/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Salvage from a bad file: the windows that still read from a copy of a
 * file moved aside, written into the fresh one. Above store_read.c and
 * store_write.c, below store.c (which calls it when it starts afresh).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "window/window.h"
#include "store_int.h"

static int
ids_scan(sqlite3 *db, const char *sql, int64_t **ids, size_t *n, size_t *cap)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		size_t i;

		for (i = 0; i < *n; i++)
			if ((*ids)[i] == id)
				break;
		if (i < *n) /* met from the other end: all read */
			break;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			int64_t *p = realloc(*ids, c * sizeof(*p));

			if (p == NULL)
				break;
			*ids = p;
			*cap = c;
		}
		(*ids)[(*n)++] = id;
	}
	sqlite3_finalize(st);
	return SQLITE_OK;
}

static void
unlink_set(const char *p)
{
	char b[PATH_MAX + 8];

	unlink(p);
	snprintf(b, sizeof(b), "%s-wal", p);
	unlink(b);
	snprintf(b, sizeof(b), "%s-shm", p);
	unlink(b);
}

/*
 * s was just started afresh because the file now at bad (with its -wal)
 * was moved aside. Copy every window that still reads from a scratch copy
 * of it into s: ids are walked from both ends of the table, so damage in
 * the middle costs only what it holds. Counted in windows_salvaged. The
 * kept copy is not touched. Lock held (or s not shared yet).
 */
int
store_salvage(struct store *s, const char *bad)
{
	char tmp[PATH_MAX], bw[PATH_MAX + 8], tw[PATH_MAX + 8];
	struct store t;
	int64_t *ids = NULL, ver = 0, app = 0, newid;
	size_t n = 0, cap = 0, i, got = 0;
	sqlite3_stmt *st;
	int rc, r = 0;

	memset(&t, 0, sizeof(t));
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.salvage", s->path) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	snprintf(bw, sizeof(bw), "%s-wal", bad);
	snprintf(tw, sizeof(tw), "%s-wal", tmp);
	unlink_set(tmp);
	if ((r = store_heal_copy_file(bad, tmp)) < 0 ||
	    (r = store_heal_copy_file(bw, tw)) < 0)
		goto out;
	t.path = tmp;
	store_sqlite_setup();
	if (sqlite3_open_v2(tmp, &t.db,
		SQLITE_OPEN_READWRITE | SQLITE_OPEN_EXRESCODE,
		NULL) != SQLITE_OK) {
		r = -EIO;
		goto out;
	}
	(void)store_boot_fn(t.db);
	/* Only a file of ours, of this schema, reads back through our
	 * statements; somebody else's data is not imported. */
	if (sqlite3_prepare_v2(t.db, "PRAGMA application_id", -1, &st, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			app = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (sqlite3_prepare_v2(t.db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			ver = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (app != STORE_APPLICATION_ID || ver != STORE_SCHEMA_VERSION ||
	    store_span_views(t.db, false) != SQLITE_OK ||
	    store_read_prepare(&t) != SQLITE_OK ||
	    store_parts_prepare(&t, true) != SQLITE_OK) {
		r = -ENOTSUP;
		goto out;
	}
	(void)ids_scan(t.db, "SELECT id FROM windows ORDER BY id", &ids, &n,
	    &cap);
	(void)ids_scan(t.db, "SELECT id FROM windows ORDER BY id DESC", &ids,
	    &n, &cap);
	if ((rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) !=
	    SQLITE_OK) {
		r = -EIO;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct window *w = NULL;

		if (store_load(&t, ids[i], &w) < 0)
			continue; /* its rows are in the damage */
		rc = store_write_window(s, w, &newid);
		/* and what made it (store_prov.c: once per daemon start) */
		if (rc == SQLITE_OK && newid)
			rc = store_prov_put(s, &w->prov);
		window_free(w);
		if (rc == SQLITE_OK && newid)
			got++;
	}
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		store_rollback(s);
		got = 0;
		r = -EIO;
	}
	s->st.windows_salvaged += got;
out:
	free(ids);
	if (t.db) {
		store_read_finalize(&t);
		store_parts_finalize(&t);
		sqlite3_close(t.db);
	}
	unlink_set(tmp);
	return r < 0 ? r : (int)got;
}
