/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The v8 task store (store_inst.c, store_taskread.c) on real files: blobs
 * damaged by SQL (a flipped byte, a cut, another part or version, garbage
 * of every type, an id no instance has) are refused and counted while the
 * window's other figures still read; v7 → v8 interrupted by an error and
 * by SIGKILL leaves a v7 file that migrates on the next open; roll-ups
 * keep every task's sums exact; a renamed task keeps each window's names;
 * instances no window refers to are pruned; a rolled-back put hands out
 * no id twice.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store_codec.h"
#include "store/store_int.h"
#include "store/store_tasks.h"
#include "testutil.h"
#include "vitalsd.h"

#define T0 (1699999800LL * NSEC_PER_SEC)
#define SEC NSEC_PER_SEC
#define BOOT "8c1e7a6c-3f9b-4c2e-9a47-0d5f1e2b3c4d"

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("blob", path, sizeof(path));
}

static void
teardown(void)
{
	store_inst_migrate_test = NULL;
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_default(void)
{
	struct store_opts o;
	struct store *s = NULL;
	int r;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	/* rows edited in place by their table's name: level 0 in the
	 * main tables, not in tables per span (store_span.c) */
	o.no_spans = true;
	r = store_open(path, &o, &s);
	ck_assert_msg(r == 0, "store_open: %d", r);
	return s;
}

static long long
q_int(struct store *s, const char *sql)
{
	char buf[64];
	int r = store_exec(s, sql, buf, sizeof(buf));

	ck_assert_msg(r == 0, "%s: %d", sql, r);
	return strtoll(buf, NULL, 10);
}

static uint64_t
blob_errors(struct store *s)
{
	struct store_stats st;

	store_get_stats(s, &st);
	return st.blob_errors;
}

static struct window_task
mktask(int32_t id, int32_t tgid, uint64_t k)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.tgid = tgid;
	t.starttime = 1000 + (uint64_t)id;
	t.uid = 10000 + (uint32_t)tgid;
	snprintf(t.comm, sizeof(t.comm), "c%d", id);
	if (id == tgid)
		window_task_set_namef(&t, "com.example.app%d", id);
	else
		window_task_set_name(&t, t.comm);
	t.d_utime = 7 * k + (uint64_t)id;
	t.d_stime = 3 * k;
	t.d_minflt = 11 * k + 1;
	t.d_majflt = k % 3;
	t.samples = 10;
	t.wall_ns = 10 * SEC;
	t.total_ticks = 2000;
	t.norm_ticks = 1000.125 + (double)k;
	t.rss_pages_max = 500 + 13 * k + (uint64_t)id;
	t.rss_pages_last = 400 + 5 * k;
	return t;
}

/* Window k of a 10 s timeline: processes 10, 20, 30 and their threads
 * 11, 21, 31, 32, each with figures of its own in each window. */
static struct window *
mkwin(unsigned k)
{
	struct window *w = window_new(k, 0);
	static const int32_t procs[] = { 10, 20, 30 };
	static const int32_t threads[][2] = { { 11, 10 }, { 21, 20 },
		{ 31, 30 }, { 32, 30 } };
	struct window_task t;
	unsigned i;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), BOOT);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)k * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + (int64_t)k * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	w->all.d.user = 100 + k;
	w->all.d.idle = 900;
	w->d_ctxt = 5000 + k;
	for (i = 0; i < 3; i++) {
		t = mktask(procs[i], procs[i], k + i);
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	for (i = 0; i < 4; i++) {
		t = mktask(threads[i][0], threads[i][1], 2 * k + i);
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
	}
	return w;
}

static void
put_n(struct store *s, unsigned from, unsigned to)
{
	unsigned k;

	for (k = from; k < to; k++) {
		struct window *w = mkwin(k);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
}

static void
free_windows(struct window **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
}

/* ------------------------------------------------------- corrupt blobs */

/* The blob of window wid's column col, re-framed or re-encoded by how. */
enum reframe {
	RF_VERSION,
	RF_PART,
	RF_NO_INSTANCE,
	RF_AS_V1,
	RF_AS_V2,
	RF_BAD_REF,
	RF_CUT_VARINT,
};

/* The rows re-encoded as version 3 with one RSS for all (the first row's
 * own, the others referring back to it) and max = last, then damaged:
 * the second reference made to point past the one value met (bad), or
 * the payload cut inside the values' varint (cut). The payload ends
 * [nref] [0] [1] … [1] [value] [0 × n]; the frame is made whole. */
static void
bad_v3(struct store_enc *pe, struct window_task *t, const uint64_t *iid,
    size_t n, bool cut)
{
	size_t i, at;

	ck_assert_uint_ge(n, 3);
	for (i = 0; i < n; i++)
		t[i].rss_pages_last = t[i].rss_pages_max = 300000; /* 3 bytes */
	ck_assert_int_eq(store_tasks_put(pe, t, iid, n), 0);
	at = pe->b.len - n - 3 - n; /* the references */
	ck_assert_uint_eq(pe->b.p[at - 1], n - 1);
	ck_assert_uint_eq(pe->b.p[at], 0);
	ck_assert_uint_eq(pe->b.p[at + 1], 1);
	if (cut)
		pe->b.len = pe->b.len - n - 1; /* ends inside the value */
	else
		pe->b.p[at + 2] = 2; /* one value met: 2 is past it */
}

static void
reframe(struct store *s, int64_t wid, const char *col, enum reframe how)
{
	char sql[160];
	sqlite3_stmt *st;
	struct store_frame f;
	struct store_enc e = { 0 }, pe = { 0 };
	struct window_task *t;
	uint64_t *iid;
	size_t n;

	snprintf(sql, sizeof(sql),
	    "SELECT %s FROM window_tasks WHERE window_id = %lld", col,
	    (long long)wid);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(store_frame_get(sqlite3_column_blob(st, 0),
			     (size_t)sqlite3_column_bytes(st, 0), &f),
	    0);
	ck_assert_uint_eq(f.part, STORE_TASKS_PART);
	ck_assert_uint_eq(f.version, STORE_TASKS_VERSION);
	switch (how) {
	case RF_AS_V1: /* as a store before v21 wrote it */
		ck_assert_int_eq(store_tasks_get(f.payload, f.len, f.version,
				     100, &t, &iid, &n),
		    0);
		ck_assert_int_eq(store_tasks_put_v1(&pe, t, iid, n), 0);
		ck_assert_int_eq(store_frame_put_zstd(&e, f.part, 1, pe.b.p,
				     pe.b.len, 0),
		    0);
		free(t);
		free(iid);
		break;
	case RF_AS_V2: /* as a store of v21–v24 wrote it */
		ck_assert_int_eq(store_tasks_get(f.payload, f.len, f.version,
				     100, &t, &iid, &n),
		    0);
		ck_assert_int_eq(store_tasks_put_v2(&pe, t, iid, n), 0);
		ck_assert_int_eq(store_frame_put_zstd(&e, f.part, 2, pe.b.p,
				     pe.b.len, 0),
		    0);
		free(t);
		free(iid);
		break;
	case RF_BAD_REF:
	case RF_CUT_VARINT:
		ck_assert_int_eq(store_tasks_get(f.payload, f.len, f.version,
				     100, &t, &iid, &n),
		    0);
		bad_v3(&pe, t, iid, n, how == RF_CUT_VARINT);
		ck_assert_int_eq(store_frame_put(&e, f.part, f.version, pe.b.p,
				     pe.b.len),
		    0);
		free(t);
		free(iid);
		break;
	case RF_VERSION:
		ck_assert_int_eq(store_frame_put(&e, f.part, f.version + 1,
				     f.payload, f.len),
		    0);
		break;
	case RF_PART:
		ck_assert_int_eq(store_frame_put(&e, f.part + 7, f.version,
				     f.payload, f.len),
		    0);
		break;
	case RF_NO_INSTANCE:
		ck_assert_int_eq(store_tasks_get(f.payload, f.len, f.version,
				     100, &t, &iid, &n),
		    0);
		iid[n - 1] = 1000000; /* still ascending, no such instance */
		ck_assert_int_eq(store_tasks_put(&pe, t, iid, n), 0);
		ck_assert_int_eq(store_frame_put(&e, f.part, f.version, pe.b.p,
				     pe.b.len),
		    0);
		free(t);
		free(iid);
		break;
	}
	store_frame_release(&f); /* a zstd frame's payload is its own */
	sqlite3_finalize(st);
	snprintf(sql, sizeof(sql),
	    "UPDATE window_tasks SET %s = ? WHERE window_id = %lld", col,
	    (long long)wid);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_blob(st, 1, e.b.p, (int)e.b.len, SQLITE_STATIC);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	store_enc_release(&e);
	store_enc_release(&pe);
}

static const struct damage {
	const char *what;
	bool threads;	 /* which column */
	const char *set; /* SQL for the column (NULL: reframe) */
	enum reframe how;
} damages[] = {
	{ "payload byte flipped", false,
	    "substr(c, 1, length(c) - 2) || CASE WHEN"
	    " substr(c, length(c) - 1, 1) = x'00' THEN x'01' ELSE x'00' END"
	    " || substr(c, length(c))",
	    0 },
	{ "checksum byte flipped", true,
	    "substr(c, 1, 5) || CASE WHEN substr(c, 6, 1) = x'00'"
	    " THEN x'01' ELSE x'00' END || substr(c, 7)",
	    0 },
	{ "magic flipped", false, "x'B8' || substr(c, 2)", 0 },
	{ "truncated", false, "substr(c, 1, length(c) - 3)", 0 },
	{ "one byte more", true, "c || x'00'", 0 },
	{ "wrong part version", false, NULL, RF_VERSION },
	{ "RSS reference past the values (processes)", false, NULL,
	    RF_BAD_REF },
	{ "RSS reference past the values (threads)", true, NULL, RF_BAD_REF },
	{ "varint cut short (threads)", true, NULL, RF_CUT_VARINT },
	{ "wrong part", true, NULL, RF_PART },
	{ "no such instance", false, NULL, RF_NO_INSTANCE },
	{ "random bytes", false, "randomblob(48)", 0 },
	{ "random bytes (threads)", true, "randomblob(300)", 0 },
	{ "text", true, "'garbage in the threads column'", 0 },
	{ "integer", false, "42", 0 },
	{ "real", true, "2.5", 0 },
	{ "empty blob", false, "x''", 0 },
	{ "zeros", true, "zeroblob(64)", 0 },
};

/* Is row j of list th of window k in what a damaged store returns? */
static bool
row_kept(const struct damage *d, unsigned k, bool th, size_t j)
{
	if (k != 1 || th != d->threads)
		return true;
	/* an id with no instance loses that row (the last), the rest of
	 * the blob reads; any other damage loses the whole blob */
	return d->set == NULL && d->how == RF_NO_INSTANCE &&
	    j + 1 < (th ? 4u : 3u);
}

/*
 * One blob of the middle window damaged: reading the windows returns all
 * three, the damaged rows missing, the other list and the system figures
 * whole; top and history sum what is left; each refusal counted.
 */
START_TEST(corrupt_blob_skipped_and_counted)
{
	const struct damage *d = &damages[_i];
	const char *col = d->threads ? "threads" : "procs";
	struct window **v, *src[3];
	struct window_task *top;
	struct store_hist *h;
	char sql[640];
	struct store *s;
	int64_t wid;
	size_t n, i, j, nt, m, th;
	unsigned k;

	s = open_default();
	put_n(s, 0, 3);
	wid = q_int(s, "SELECT id FROM windows WHERE seq = 1");
	if (d->set != NULL) {
		snprintf(sql, sizeof(sql),
		    "UPDATE window_tasks SET %s = (SELECT %s FROM"
		    " (SELECT %s AS c FROM window_tasks WHERE window_id = %lld))"
		    " WHERE window_id = %lld",
		    col, d->set, col, (long long)wid, (long long)wid);
		ck_assert_msg(store_exec(s, sql, NULL, 0) == 0, "%s", sql);
	} else {
		reframe(s, wid, col, d->how);
	}
	store_close(s);
	s = open_default(); /* from the file */
	ck_assert_uint_eq(blob_errors(s), 0);
	for (k = 0; k < 3; k++)
		src[k] = mkwin(k);

	ck_assert_int_eq(store_windows(s, T0, T0 + 30 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(blob_errors(s), 1);
	for (k = 0; k < 3; k++) {
		ck_assert_uint_eq(v[k]->all.d.user, src[k]->all.d.user);
		ck_assert_uint_eq(v[k]->d_ctxt, src[k]->d_ctxt);
		for (th = 0; th < 2; th++) {
			const struct window_task *got = th ? v[k]->threads :
							     v[k]->procs;
			const struct window_task *want = th ? src[k]->threads :
							      src[k]->procs;
			size_t ngot = th ? v[k]->nthreads : v[k]->nprocs;

			for (j = m = 0; j < (th ? 4u : 3u); j++)
				if (row_kept(d, k, th, j))
					tu_task_eq(&got[m++], &want[j]);
			ck_assert_uint_eq(ngot, m);
		}
	}
	free_windows(v, n);

	/* top of each list: the sums of what is left */
	for (th = 0; th < 2; th++) {
		ck_assert_int_eq(store_top(s, T0, T0 + 30 * SEC, th, METRIC_CPU,
				     0, &top, &nt),
		    0);
		ck_assert_uint_eq(nt, th ? 4 : 3);
		for (i = 0; i < nt; i++) {
			struct window_task x = { 0 };
			const struct window_task *last = NULL;

			for (k = 0; k < 3; k++)
				for (j = 0; j < (th ? 4u : 3u); j++) {
					const struct window_task *p = th ?
					    &src[k]->threads[j] :
					    &src[k]->procs[j];

					if (p->id != top[i].id ||
					    !row_kept(d, k, th, j))
						continue;
					x.d_utime += p->d_utime;
					x.d_minflt += p->d_minflt;
					x.samples += p->samples;
					last = p;
				}
			ck_assert_ptr_nonnull(last);
			ck_assert_uint_eq(top[i].d_utime, x.d_utime);
			ck_assert_uint_eq(top[i].d_minflt, x.d_minflt);
			ck_assert_uint_eq(top[i].samples, x.samples);
			ck_assert_str_eq(window_task_name(&top[i]),
			    window_task_name(last));
			ck_assert_uint_eq(top[i].rss_pages_last,
			    last->rss_pages_last);
		}
		free(top);
	}
	ck_assert_uint_eq(blob_errors(s), 2);
	/* history of a task of the damaged list */
	ck_assert_int_eq(store_history(s, d->threads, d->threads ? 21 : 20, 0,
			     T0, T0 + 30 * SEC, &h, &n),
	    0);
	ck_assert_uint_eq(n, row_kept(d, 1, d->threads, 1) ? 3 : 2);
	ck_assert_int_eq(h[0].wall_start_ns, T0);
	ck_assert_int_eq(h[n - 1].wall_start_ns, T0 + 20 * SEC);
	free(h);
	/* history reads rows of its task only: the id with no instance is
	 * another task's row */
	ck_assert_uint_eq(blob_errors(s),
	    d->set == NULL && d->how == RF_NO_INSTANCE ? 2 : 3);
	for (k = 0; k < 3; k++)
		window_free(src[k]);
	store_close(s);
}
END_TEST

/* Task blobs of version 1 and 2 (older stores') beside version 3: every
 * window, top and history read as written, nothing counted. */
START_TEST(v1_task_blobs_read)
{
	struct window **v, *src[3];
	struct window_task *top;
	struct store_hist *h;
	struct store *s;
	int64_t wid;
	size_t n, nt, j;
	unsigned k;

	s = open_default();
	put_n(s, 0, 3);
	for (k = 0; k < 2; k++) { /* window 0 as v1, 1 as v2, 2 as v3 */
		wid = q_int(s,
		    k ? "SELECT id FROM windows WHERE seq = 1" :
			"SELECT id FROM windows WHERE seq = 0");
		reframe(s, wid, "procs", k ? RF_AS_V2 : RF_AS_V1);
		reframe(s, wid, "threads", k ? RF_AS_V2 : RF_AS_V1);
	}
	for (k = 1; k <= 3; k++) {
		char q[160];

		snprintf(q, sizeof(q),
		    "SELECT count(*) FROM window_tasks WHERE"
		    " substr(procs, 3, 1) = x'%02x' AND"
		    " substr(threads, 3, 1) = x'%02x'",
		    k, k);
		ck_assert_int_eq(q_int(s, q), 1);
	}
	store_close(s);
	s = open_default();
	for (k = 0; k < 3; k++)
		src[k] = mkwin(k);
	ck_assert_int_eq(store_windows(s, T0, T0 + 30 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	for (k = 0; k < 3; k++) {
		ck_assert_uint_eq(v[k]->nprocs, src[k]->nprocs);
		ck_assert_uint_eq(v[k]->nthreads, src[k]->nthreads);
		for (j = 0; j < src[k]->nprocs; j++)
			tu_task_eq(&v[k]->procs[j], &src[k]->procs[j]);
		for (j = 0; j < src[k]->nthreads; j++)
			tu_task_eq(&v[k]->threads[j], &src[k]->threads[j]);
	}
	free_windows(v, n);
	ck_assert_int_eq(store_top(s, T0, T0 + 30 * SEC, true, METRIC_CPU, 0,
			     &top, &nt),
	    0);
	ck_assert_uint_eq(nt, 4);
	free(top);
	ck_assert_int_eq(store_history(s, true, 21, 0, T0, T0 + 30 * SEC, &h,
			     &n),
	    0);
	ck_assert_uint_eq(n, 3);
	free(h);
	ck_assert_uint_eq(blob_errors(s), 0);
	for (k = 0; k < 3; k++)
		window_free(src[k]);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------ migration */

/* Three v7 windows; pid 10 renamed itself (exec) in the third. */
static const char v7_rows[] =
    "INSERT INTO windows (" STORE_WINDOW_COLS ") VALUES"
    " (0, '" BOOT "', 1, 0, 10000000000, 0, 10000000000,"
    " 1699999800000000000, 1699999810000000000, 10000000000, 100, 1000, 0,"
    " 10, 10, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),"
    " (0, '" BOOT "', 2, 10000000000, 20000000000, 10000000000,"
    " 20000000000, 1699999810000000000, 1699999820000000000, 10000000000,"
    " 100, 1000, 0, 10, 10, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,"
    " 0),"
    " (0, '" BOOT "', 3, 20000000000, 30000000000, 20000000000,"
    " 30000000000, 1699999820000000000, 1699999830000000000, 10000000000,"
    " 100, 1000, 0, 10, 10, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,"
    " 0);"
    "INSERT INTO window_task VALUES"
    " (1, 0, 10, 77, 10, 1000, 'bash', NULL, 5, 1, 10, 0, 10, 10000000000,"
    " 1000, 500.5, 300, 290, 1, 0),"
    " (1, 0, 20, 78, 20, 1001, 'srv', 'com.srv', 1, 1, 1, 1, 10,"
    " 10000000000, 1000, 500.5, 900, 900, 0, 0),"
    " (1, 1, 21, 79, 20, 1001, 'srv:io', NULL, 9, 0, 0, 0, 10, 10000000000,"
    " 1000, 500.5, 900, 900, 0, 0),"
    " (2, 0, 10, 77, 10, 1000, 'bash', NULL, 6, 0, 20, 0, 10, 10000000000,"
    " 1000, 500.5, 310, 300, 0, 0),"
    " (3, 0, 10, 77, 10, 1000, 'python3', 'python3 x.py', 70, 2, 900, 3,"
    " 10, 10000000000, 1000, 500.5, 2000, 1900, 0, 1),"
    " (3, 0, 20, 78, 20, 1001, 'srv', 'com.srv', 2, 0, 4, 0, 10,"
    " 10000000000, 1000, 500.5, 950, 940, 0, 0);";

static void
make_v7(void)
{
	ck_assert_int_eq(store_create_version(path, 7, v7_rows), 0);
}

static long long
raw_int(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v = -1;

	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE,
			     NULL),
	    SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

/* The v7 rows above, read through v8 (and on). */
static void
check_migrated(struct store *s)
{
	struct window **v;
	struct window_task *t;
	size_t n;

	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM sqlite_schema WHERE"
			     " name = 'window_task'"),
	    0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM instance"), 3);
	/* the latest window's names are the instance's; the older differ */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM instance WHERE"
			     " comm = 'python3'"),
	    1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_task_ident"), 2);
	ck_assert_int_eq(store_windows(s, T0, T0 + 30 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(v[0]->nprocs, 2);
	ck_assert_uint_eq(v[0]->nthreads, 1);
	ck_assert_str_eq(v[0]->procs[0].comm, "bash");
	ck_assert_str_eq(window_task_name(&v[0]->procs[0]), "bash");
	ck_assert(v[0]->procs[0].born);
	ck_assert(v[0]->procs[0].norm_ticks == 500.5);
	ck_assert_str_eq(window_task_name(&v[0]->procs[1]), "com.srv");
	ck_assert_str_eq(v[0]->threads[0].comm, "srv:io");
	ck_assert_int_eq(v[0]->threads[0].tgid, 20);
	ck_assert_str_eq(v[1]->procs[0].comm, "bash");
	ck_assert_uint_eq(v[1]->procs[0].d_minflt, 20);
	ck_assert_str_eq(v[2]->procs[0].comm, "python3");
	ck_assert_str_eq(window_task_name(&v[2]->procs[0]), "python3 x.py");
	ck_assert(v[2]->procs[0].exited);
	ck_assert_uint_eq(v[2]->procs[0].rss_pages_last, 1900);
	free_windows(v, n);
	/* top: sums over the three, names and state of the latest */
	ck_assert_int_eq(store_top(s, T0, T0 + 30 * SEC, false, METRIC_CPU, 20,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(t[0].id, 10);
	ck_assert_uint_eq(t[0].d_utime, 81);
	ck_assert_uint_eq(t[0].d_minflt, 930);
	ck_assert_uint_eq(t[0].rss_pages_max, 2000);
	ck_assert_str_eq(t[0].comm, "python3");
	ck_assert(t[0].exited && t[0].born);
	ck_assert_int_eq(t[1].id, 20);
	ck_assert_uint_eq(t[1].uid, 1001);
	free(t);
	/* the first 20 s: bash's names (from its own window) */
	ck_assert_int_eq(store_top(s, T0, T0 + 20 * SEC, false, METRIC_CPU, 1,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(t[0].comm, "bash");
	ck_assert(!t[0].exited);
	free(t);
}

static int
fail_second(unsigned n)
{
	return n == 2;
}

START_TEST(migrate_v7_error_midway_keeps_v7)
{
	struct store_opts o;
	struct store *s = NULL;

	make_v7();
	store_inst_migrate_test = fail_second;
	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	ck_assert_int_lt(store_open(path, &o, &s), 0);
	ck_assert_ptr_null(s);
	store_inst_migrate_test = NULL;
	/* still v7, every row there, not moved aside */
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 7);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM window_task"), 6);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_schema WHERE"
				 " name = 'instance'"),
	    0);
	s = open_default();
	check_migrated(s);
	store_close(s);
}
END_TEST

static int
kill_second(unsigned n)
{
	if (n == 2)
		raise(SIGKILL);
	return 0;
}

START_TEST(migrate_v7_sigkill_midway_keeps_v7)
{
	struct store *s;
	pid_t pid;
	int status;

	make_v7();
	if ((pid = fork()) == 0) {
		struct store_opts o;

		store_inst_migrate_test = kill_second;
		store_opts_default(&o);
		o.rollup_batch_s = 0; /* roll at every pass */
		(void)store_open(path, &o, &s);
		_exit(0);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 7);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM window_task"), 6);
	s = open_default();
	check_migrated(s);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------- roll-ups */

/*
 * Twelve 10 s windows roll into two 60 s ones: every task's figures in
 * the rolled windows are the sums (max, last) of its rows in the windows
 * merged, read back from the blobs; top over the range answers the same
 * before and after.
 */
START_TEST(rollup_task_sums_exact)
{
	int64_t now = T0 + 7 * 3600 * SEC;
	struct window **v, *src[12];
	struct window_task *before[2], *after[2];
	size_t nb[2], na[2], n, i, j, k, th;
	struct store *s = open_default();

	put_n(s, 0, 12);
	for (th = 0; th < 2; th++)
		ck_assert_int_eq(store_top(s, T0, T0 + 120 * SEC, th,
				     METRIC_MINFLT, 0, &before[th], &nb[th]),
		    0);
	ck_assert_int_eq(store_maintain(s, now), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_tasks"), 2);
	ck_assert_int_eq(store_windows(s, T0, T0 + 120 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	for (k = 0; k < 12; k++)
		src[k] = mkwin((unsigned)k);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(v[i]->level, 1);
		ck_assert_uint_eq(v[i]->nprocs, 3);
		ck_assert_uint_eq(v[i]->nthreads, 4);
		for (th = 0; th < 2; th++) {
			for (j = 0; j < (th ? 4u : 3u); j++) {
				const struct window_task *r = th ?
				    &v[i]->threads[j] :
				    &v[i]->procs[j];
				struct window_task x = { 0 };
				const struct window_task *last = NULL;

				for (k = 6 * i; k < 6 * i + 6; k++) {
					const struct window_task *p = th ?
					    &src[k]->threads[j] :
					    &src[k]->procs[j];

					x.d_utime += p->d_utime;
					x.d_stime += p->d_stime;
					x.d_minflt += p->d_minflt;
					x.d_majflt += p->d_majflt;
					x.samples += p->samples;
					x.wall_ns += p->wall_ns;
					x.total_ticks += p->total_ticks;
					x.norm_ticks += p->norm_ticks;
					if (p->rss_pages_max > x.rss_pages_max)
						x.rss_pages_max =
						    p->rss_pages_max;
					last = p;
				}
				x.id = last->id;
				x.tgid = last->tgid;
				x.starttime = last->starttime;
				x.uid = last->uid;
				memcpy(x.comm, last->comm, sizeof(x.comm));
				window_task_set_name(&x,
				    window_task_name(last));
				x.rss_pages_last = last->rss_pages_last;
				tu_task_eq(r, &x);
			}
		}
	}
	for (k = 0; k < 12; k++)
		window_free(src[k]);
	free_windows(v, n);
	for (th = 0; th < 2; th++) {
		ck_assert_int_eq(store_top(s, T0, T0 + 120 * SEC, th,
				     METRIC_MINFLT, 0, &after[th], &na[th]),
		    0);
		ck_assert_uint_eq(na[th], nb[th]);
		for (i = 0; i < na[th]; i++) {
			/* Σ norm_ticks may round differently summed in
			 * another order; every integer figure is exact */
			after[th][i].norm_ticks = before[th][i].norm_ticks;
			tu_task_eq(&after[th][i], &before[th][i]);
		}
		free(before[th]);
		free(after[th]);
	}
	ck_assert_uint_eq(blob_errors(s), 0);
	store_close(s);
}
END_TEST

/* ------------------------------------------------- instances, renames */

/* exec() renames pid 10 in window 2: each window keeps its names, top
 * says the latest; one instance, the other identity beside the window. */
START_TEST(rename_keeps_each_windows_names)
{
	struct store *s = open_default();
	struct window **v, *w;
	struct window_task *t;
	size_t n;
	unsigned k;

	for (k = 0; k < 4; k++) {
		w = mkwin(k);
		if (k >= 2) {
			snprintf(w->procs[0].comm, sizeof(w->procs[0].comm),
			    "python3");
			window_task_set_namef(&w->procs[0], "python3 /x.py");
			w->procs[0].uid = 4242; /* setuid */
		}
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	store_close(s);
	s = open_default();
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM instance WHERE thread = 0"
			     " AND id = 10"),
	    1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 40 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 4);
	for (k = 0; k < 4; k++) {
		ck_assert_str_eq(v[k]->procs[0].comm,
		    k >= 2 ? "python3" : "c10");
		ck_assert_uint_eq(v[k]->procs[0].uid, k >= 2 ? 4242 : 10010);
		ck_assert_str_eq(v[k]->procs[1].comm, "c20");
	}
	free_windows(v, n);
	ck_assert_int_eq(store_top(s, T0, T0 + 40 * SEC, false, METRIC_RSS, 3,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 3);
	for (k = 0; k < 3; k++)
		if (t[k].id == 10) {
			ck_assert_str_eq(window_task_name(&t[k]),
			    "python3 /x.py");
			ck_assert_uint_eq(t[k].uid, 4242);
		}
	free(t);
	ck_assert_int_eq(store_top(s, T0, T0 + 20 * SEC, false, METRIC_RSS, 3,
			     &t, &n),
	    0);
	for (k = 0; k < n; k++)
		if (t[k].id == 10)
			ck_assert_str_eq(window_task_name(&t[k]),
			    "com.example.app10");
	free(t);
	ck_assert_uint_eq(blob_errors(s), 0);
	store_close(s);
}
END_TEST

/*
 * Retention deletes the windows of a day ago; the instances only they
 * named go with the next maintenance pass, the others stay; a task seen
 * again later gets a new id above every id handed out before. (A day
 * and more: the instances met in a day are raised together past its
 * end and keep their rows a day longer, store_inst.c.)
 */
START_TEST(instances_pruned_with_their_windows)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s = NULL;
	struct window *w;
	struct window **v;
	struct window_task t;
	size_t n;
	long long maxiid;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.retain_s = 3600;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	put_n(s, 0, 2);
	/* 27 hours on, past a second day's end (T0 is 6,600 s before
	 * one): only pid 20 and its threads are still there */
	w = mkwin(9720);
	window_free(w);
	w = window_new(9720, 0);
	snprintf(w->boot_id, sizeof(w->boot_id), BOOT);
	w->hz = 100;
	w->mono_start_ns = 9720 * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + 27 * 3600 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	t = mktask(20, 20, 1);
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	t = mktask(21, 20, 1);
	ck_assert_int_eq(window_add_task(w, true, &t), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
	maxiid = q_int(s, "SELECT max(iid) FROM instance");
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM instance"), 7);
	ck_assert_int_eq(store_maintain(s, T0 + 27 * 3600 * SEC + 20 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.deleted_age, 2);
	ck_assert_uint_eq(st.instances_pruned, 5);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM instance"), 2);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM instance WHERE id IN"
			     " (20, 21)"),
	    2);
	/* pid 10 again (same starttime): a new id, above every old one */
	w = mkwin(9721);
	w->wall_start_ns = T0 + 27 * 3600 * SEC + 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
	ck_assert_int_gt(q_int(s,
			     "SELECT iid FROM instance WHERE thread = 0 AND"
			     " id = 10"),
	    maxiid);
	ck_assert_int_eq(store_windows(s, T0, T0 + 28 * 3600 * SEC, 0, &v, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[1]->nprocs, 3);
	ck_assert_str_eq(window_task_name(&v[1]->procs[0]),
	    "com.example.app10");
	free_windows(v, n);
	ck_assert_uint_eq(blob_errors(s), 0);
	store_close(s);
}
END_TEST

/*
 * A put that fails after it wrote instances (the file is full) is rolled
 * back with them: the instances it wrote are forgotten, and the next put
 * of the same tasks writes them again (under new ids) and reads back whole.
 */
START_TEST(rolled_back_put_forgets_its_ids)
{
	struct store *s = open_default();
	struct window **v, *w;
	char sql[96];
	size_t n, i;
	unsigned k;

	put_n(s, 0, 1);
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
	    q_int(s, "PRAGMA page_count"));
	ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
	/* 400 new processes: their instances do not fit */
	w = mkwin(1);
	for (k = 0; k < 400; k++) {
		struct window_task t = mktask(1000 + (int32_t)k,
		    1000 + (int32_t)k, k);

		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	ck_assert_int_eq(store_put(s, w), -ENOSPC);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM instance"), 7);
	ck_assert_int_eq(store_exec(s, "PRAGMA max_page_count = 1000000", NULL,
			     0),
	    0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM instance"), 407);
	/* ids are never handed out twice: the undone ones leave a gap */
	ck_assert_int_ge(q_int(s, "SELECT max(iid) FROM instance"), 407);
	ck_assert_int_eq(store_windows(s, T0, T0 + 20 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[1]->nprocs, 403);
	for (i = 0; i < 403; i++)
		tu_task_eq(&v[1]->procs[i], &w->procs[i]);
	free_windows(v, n);
	window_free(w);
	ck_assert_uint_eq(blob_errors(s), 0);
	store_close(s);
}
END_TEST

static Suite *
suite(void)
{
	Suite *su = suite_create("store_blob");
	TCase *tc;

	tc = tcase_create("corrupt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, corrupt_blob_skipped_and_counted, 0,
	    (int)(sizeof(damages) / sizeof(damages[0])));
	suite_add_tcase(su, tc);

	tc = tcase_create("migration");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, migrate_v7_error_midway_keeps_v7);
	tcase_add_test(tc, migrate_v7_sigkill_midway_keeps_v7);
	suite_add_tcase(su, tc);

	tc = tcase_create("instances");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rollup_task_sums_exact);
	tcase_add_test(tc, v1_task_blobs_read);
	tcase_add_test(tc, rename_keeps_each_windows_names);
	tcase_add_test(tc, instances_pruned_with_their_windows);
	tcase_add_test(tc, rolled_back_put_forgets_its_ids);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
