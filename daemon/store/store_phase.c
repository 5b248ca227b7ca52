/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phase rows of a window's ftrace part in the store
 * (window_trace_phase, schema v20, doc/storage.md): one row per kept
 * (process, slice name), other = 1 the rest. The per-class counts are
 * blobs of PCLASS__MAX little-endian u64s. store_trace.c prepares the
 * statements and calls these inside its transaction; the window-level
 * figures are its named counters.
 */
#include <errno.h>
#include <string.h>

#include "trace/trace.h"
#include "store_int.h"

const char store_phase_ins_sql[] =
    "INSERT INTO window_trace_phase (window_id, other, pid, start_ticks,"
    " comm, name, have, count, incomplete, open, total_ns, max_ns, faults,"
    " file_faults, major, pages_read, reclaim, reclaim_ns, blk, blk_bytes,"
    " faults_by, major_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " ?, ?, ?, ?, ?, ?, ?, ?, ?)";

const char store_phase_sel_sql[] =
    "SELECT other, pid, start_ticks, comm, name, have, count, incomplete,"
    " open, total_ns, max_ns, faults, file_faults, major, pages_read,"
    " reclaim, reclaim_ns, blk, blk_bytes, faults_by, major_by"
    " FROM window_trace_phase WHERE window_id = ?";

static void
classes_enc(const uint64_t v[PCLASS__MAX], unsigned char out[PCLASS__MAX * 8])
{
	unsigned k, b;

	for (k = 0; k < PCLASS__MAX; k++)
		for (b = 0; b < 8; b++)
			out[8 * k + b] = (unsigned char)(v[k] >> (8 * b));
}

/* A blob of another length is refused (the row reads without classes). */
static int
classes_dec(const void *blob, int len, uint64_t v[PCLASS__MAX])
{
	const unsigned char *p = blob;
	unsigned k, b;

	memset(v, 0, PCLASS__MAX * sizeof(*v));
	if (len != PCLASS__MAX * 8 || p == NULL)
		return -EBADMSG;
	for (k = 0; k < PCLASS__MAX; k++)
		for (b = 0; b < 8; b++)
			v[k] |= (uint64_t)p[8 * k + b] << (8 * b);
	return 0;
}

static int
put_phase(sqlite3_stmt *st, int64_t id, bool other,
    const struct window_trace_phase *x)
{
	unsigned char fb[PCLASS__MAX * 8], mb[PCLASS__MAX * 8];

	classes_enc(x->faults_by, fb);
	classes_enc(x->major_by, mb);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, other);
	sqlite3_bind_int(st, 3, other ? -1 : x->pid);
	sqlite3_bind_int64(st, 4, other ? 0 : (sqlite3_int64)x->start_ticks);
	sqlite3_bind_text(st, 5, other ? "" : x->comm,
	    (int)strnlen(x->comm, sizeof(x->comm)), SQLITE_STATIC);
	sqlite3_bind_text(st, 6, other ? "" : x->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, x->have);
	sqlite3_bind_int64(st, 8, x->count);
	sqlite3_bind_int64(st, 9, x->incomplete);
	sqlite3_bind_int64(st, 10, x->open);
	sqlite3_bind_int64(st, 11, (sqlite3_int64)x->total_ns);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)x->max_ns);
	sqlite3_bind_int64(st, 13, (sqlite3_int64)x->faults);
	sqlite3_bind_int64(st, 14, (sqlite3_int64)x->file_faults);
	sqlite3_bind_int64(st, 15, (sqlite3_int64)x->major);
	sqlite3_bind_int64(st, 16, (sqlite3_int64)x->pages_read);
	sqlite3_bind_int64(st, 17, (sqlite3_int64)x->reclaim);
	sqlite3_bind_int64(st, 18, (sqlite3_int64)x->reclaim_ns);
	sqlite3_bind_int64(st, 19, (sqlite3_int64)x->blk);
	sqlite3_bind_int64(st, 20, (sqlite3_int64)x->blk_bytes);
	sqlite3_bind_blob(st, 21, fb, sizeof(fb), SQLITE_TRANSIENT);
	sqlite3_bind_blob(st, 22, mb, sizeof(mb), SQLITE_TRANSIENT);
	return store_run(st);
}

/* The rows of t (kept and rest) for window id: SQLITE_OK or the error. */
int
store_phase_put(sqlite3_stmt *st, int64_t id, const struct window_trace *t)
{
	const struct window_trace_phase *r = window_phase_rest(t);
	unsigned i;
	int rc = SQLITE_OK;

	for (i = 0; i < t->nphase && rc == SQLITE_OK; i++)
		rc = put_phase(st, id, false, &t->phase[i]);
	if (rc == SQLITE_OK && r)
		rc = put_phase(st, id, true, r);
	return rc;
}

/* Rows of window id into t (which has room for rows): SQLITE_DONE or the
 * error; a damaged class blob reads as no classes, counted. */
int
store_phase_load(sqlite3_stmt *st, int64_t id, struct window_trace *t,
    uint64_t *ret_bad)
{
	int rc;

	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct window_trace_phase x;
		const unsigned char *s;

		memset(&x, 0, sizeof(x));
		x.pid = sqlite3_column_int(st, 1);
		x.start_ticks = (uint64_t)sqlite3_column_int64(st, 2);
		if ((s = sqlite3_column_text(st, 3)) != NULL)
			snprintf(x.comm, sizeof(x.comm), "%s", s);
		if ((s = sqlite3_column_text(st, 4)) != NULL)
			snprintf(x.name, sizeof(x.name), "%s", s);
		x.have = (uint32_t)sqlite3_column_int64(st, 5);
		x.count = (uint32_t)sqlite3_column_int64(st, 6);
		x.incomplete = (uint32_t)sqlite3_column_int64(st, 7);
		x.open = (uint32_t)sqlite3_column_int64(st, 8);
		x.total_ns = (uint64_t)sqlite3_column_int64(st, 9);
		x.max_ns = (uint64_t)sqlite3_column_int64(st, 10);
		x.faults = (uint64_t)sqlite3_column_int64(st, 11);
		x.file_faults = (uint64_t)sqlite3_column_int64(st, 12);
		x.major = (uint64_t)sqlite3_column_int64(st, 13);
		x.pages_read = (uint64_t)sqlite3_column_int64(st, 14);
		x.reclaim = (uint64_t)sqlite3_column_int64(st, 15);
		x.reclaim_ns = (uint64_t)sqlite3_column_int64(st, 16);
		x.blk = (uint64_t)sqlite3_column_int64(st, 17);
		x.blk_bytes = (uint64_t)sqlite3_column_int64(st, 18);
		if (classes_dec(sqlite3_column_blob(st, 19),
			sqlite3_column_bytes(st, 19), x.faults_by) < 0 ||
		    classes_dec(sqlite3_column_blob(st, 20),
			sqlite3_column_bytes(st, 20), x.major_by) < 0) {
			memset(x.faults_by, 0, sizeof(x.faults_by));
			memset(x.major_by, 0, sizeof(x.major_by));
			(*ret_bad)++;
		}
		if (sqlite3_column_int(st, 0))
			t->phase_rest = x;
		else if (t->nphase < VITALS_TRACE_PHASES)
			t->phase[t->nphase++] = x;
	}
	sqlite3_reset(st);
	return rc;
}
