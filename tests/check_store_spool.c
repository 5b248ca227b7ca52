/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Batched commits (store/store_spool.c): windows wait in the spool and
 * move into the main file in one transaction; readers see both files as
 * one, a window never twice and never missing; a daemon that died leaves
 * its spool for the next open; a spool that cannot be had means window
 * by window commits, said in the stats.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cgroup/cgroup.h"
#include "dmabuf/dmabuf.h"
#include "fgbg/fgbg.h"
#include "gpufreq/gpufreq.h"
#include "store/store_int.h"
#include "store_fix.h"
#include "syscalls/syscalls.h"
#include "wcpu/wcpu.h"
#include "testutil.h"
#include "vitalsd.h"

static char *dir;
static char path[PATH_MAX], spool[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("spool", path, sizeof(path));
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_spool(unsigned commit_s)
{
	return sf_open_spool(path, spool, commit_s);
}

/* A 10 s window with two processes; seq places it in the boot. */
static struct window *
mkwin(uint64_t seq)
{
	struct window *w = sf_mkwin_boot(seq, "boot-a");
	struct window_task t;
	int i;

	w->d_ctxt = 1000 + seq;
	for (i = 0; i < 2; i++) {
		memset(&t, 0, sizeof(t));
		t.id = t.tgid = 100 + i;
		t.starttime = 5000 + (uint64_t)i;
		snprintf(t.comm, sizeof(t.comm), "p%d", i);
		window_task_set_namef(&t, "proc%d", i);
		t.d_utime = 10 * (uint64_t)(i + 1);
		t.d_stime = seq;
		t.samples = 10;
		t.wall_ns = 10 * SEC;
		t.total_ticks = 2000;
		t.norm_ticks = 1000;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	return w;
}

static void
put(struct store *s, uint64_t seq)
{
	struct window *w = mkwin(seq);

	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

/* Rows of `sql` in the file at p, read by a connection of its own. */
static long long
count_in(const char *p, const char *sql)
{
	sqlite3_stmt *st;
	sqlite3 *db;
	long long n = -1;

	ck_assert_int_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	/* window_tasks and window_parts as readers see them: the main
	 * tables and level 0's span tables (store_span.c) */
	ck_assert_int_eq(store_span_views(db, false), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

#define WINDOWS(p) count_in((p), "SELECT count(*) FROM windows")

/* What a reader (a query thread's connection) sees of the store. */
static void
reader_sees(struct store *s, size_t want_windows, uint64_t want_utime)
{
	struct window_task *t;
	struct window **v;
	struct store *rc;
	size_t n, i;

	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_windows(rc, T0, T0 + 86400 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, want_windows);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(v[i]->nprocs, 2);
		window_free(v[i]);
	}
	free(v);
	ck_assert_int_eq(store_top(rc, T0, T0 + 86400 * SEC, false, METRIC_CPU,
			     1, &t, &n),
	    0);
	if (want_windows == 0) {
		ck_assert_uint_eq(n, 0);
	} else {
		ck_assert_uint_eq(n, 1);
		ck_assert_int_eq(t[0].id, 101); /* 20 ticks a window */
		ck_assert_uint_eq(t[0].d_utime, want_utime);
		ck_assert_str_eq(window_task_name(&t[0]), "proc1");
	}
	free(t);
	store_conn_end(rc);
	store_conn_close(rc);
}

START_TEST(test_batch)
{
	struct store *s = open_spool(3600);
	struct store_stats st;

	store_get_stats(s, &st);
	ck_assert(st.spool_on);
	put(s, 1);
	put(s, 2);
	put(s, 3);
	/* committed, but into the spool: the main file has none yet */
	ck_assert_int_eq(WINDOWS(path), 0);
	ck_assert_int_eq(WINDOWS(spool), 3);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.spool_pending, 3);
	ck_assert_uint_eq(st.windows_written, 3);
	reader_sees(s, 3, 60);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(WINDOWS(path), 3);
	ck_assert_int_eq(WINDOWS(spool), 0);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM window_tasks"),
	    3);
	/* the two processes' instances: moved once, and out of the spool */
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM instance"), 2);
	ck_assert_int_eq(count_in(spool, "SELECT count(*) FROM instance"), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.spool_pending, 0);
	ck_assert_uint_eq(st.spool_flushes, 1);
	ck_assert_uint_eq(st.spool_moved, 3);
	reader_sees(s, 3, 60);
	/* ids keep going across the files */
	put(s, 4);
	ck_assert_int_eq(count_in(spool, "SELECT min(id) FROM windows"),
	    count_in(path, "SELECT max(id) FROM windows") + 1);
	reader_sees(s, 4, 80);
	store_close(s);
	/* the last move at close, and no spool file left behind */
	ck_assert_int_eq(WINDOWS(path), 4);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM instance"), 2);
	ck_assert_int_eq(access(spool, F_OK), -1);
}
END_TEST

/* A top-1 of processes over the day on rc in a snapshot: its utime. */
static uint64_t
top_utime(struct store *rc)
{
	struct window_task *t;
	uint64_t u;
	size_t n;

	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_top(rc, T0, T0 + 86400 * SEC, false, METRIC_CPU,
			     1, &t, &n),
	    0);
	store_conn_end(rc);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(t[0].id, 101);
	u = t[0].d_utime;
	free(t);
	return u;
}

/*
 * A read connection idle (store_conn_idle, the read pool's after 30 s
 * without a read) gives back its caches and keeps its file, the spool
 * attached and the views over both: its next read opens nothing, and
 * sees the windows that moved and came meanwhile as a fresh connection
 * does.
 */
START_TEST(test_reader_idle_released)
{
	struct store *s = open_spool(3600);
	struct store_cache_stats cs;
	struct store *rc;

	put(s, 1);
	put(s, 2);
	put(s, 3);
	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_uint_eq(top_utime(rc), 60);
	store_conn_cache_stats(rc, &cs);
	ck_assert_uint_eq(cs.opens, 1);
	ck_assert_uint_gt(cs.bytes, 0);
	ck_assert_uint_eq(cs.misses, 3);
	store_conn_idle(rc);
	ck_assert(!store_conn_is_open(rc)); /* nothing held to give back */
	store_conn_cache_stats(rc, &cs);
	ck_assert_uint_eq(cs.bytes, 0);
	ck_assert_uint_eq(cs.misses, 3); /* the counts outlive the caches */
	/* meanwhile the spool's windows move to the main file, two come */
	ck_assert_int_eq(store_flush(s), 0);
	put(s, 4);
	put(s, 5);
	ck_assert_uint_eq(top_utime(rc), 100);
	ck_assert(store_conn_is_open(rc));
	store_conn_cache_stats(rc, &cs);
	ck_assert_uint_eq(cs.opens, 1);
	ck_assert_uint_eq(cs.misses, 3 + 5);
	reader_sees(s, 5, 100); /* a fresh connection: the same */
	store_conn_close(rc);
	store_close(s);
}
END_TEST

/*
 * Schema v28: the six parts kept as one blob per window in tables of
 * their own. Window seq gets each with a figure of its own.
 */
static struct window *
mkwin_parts(uint64_t seq)
{
	struct window *w = mkwin(seq);
	struct window_cgroup *cg = window_cgroup_new();
	struct window_wcpu *wc = window_wcpu_new();
	struct window_fgbg *fg = window_fgbg_new();
	struct window_dmabuf *db = window_dmabuf_new();
	struct window_gpufreq *gf = window_gpufreq_new(1);
	struct window_syscalls *sc = window_syscalls_new();

	ck_assert(cg && wc && fg && db && gf && sc);
	cg->walks = 10 + (uint32_t)seq;
	wc->busy_ticks = 20 + seq;
	fg->scans = 30 + (uint32_t)seq;
	db->passes = 1;
	db->total_bytes = 40 + seq;
	gf->reads = 50 + (uint32_t)seq;
	snprintf(gf->dev[0].name, sizeof(gf->dev[0].name), "kgsl-3d0");
	sc->floor_ns = 60 + seq;
	window_part_set(w, WPART_CGROUP, cg);
	window_part_set(w, WPART_WCPU, wc);
	window_part_set(w, WPART_FGBG, fg);
	window_part_set(w, WPART_DMABUF, db);
	window_part_set(w, WPART_GPUFREQ, gf);
	window_part_set(w, WPART_SYSCALLS, sc);
	return w;
}

/* Windows first..last of mkwin_parts put into s. */
static void
put_parts(struct store *s, uint64_t first, uint64_t last)
{
	struct window *w;
	uint64_t seq;

	for (seq = first; seq <= last; seq++) {
		w = mkwin_parts(seq);
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
}

/* w, loaded, has the six parts mkwin_parts gave window seq */
static void
parts_of(const struct window *w, uint64_t seq)
{
	ck_assert_ptr_nonnull(window_cgroup(w));
	ck_assert_uint_eq(window_cgroup(w)->walks, 10 + seq);
	ck_assert_ptr_nonnull(window_wcpu(w));
	ck_assert_uint_eq(window_wcpu(w)->busy_ticks, 20 + seq);
	ck_assert_ptr_nonnull(window_fgbg(w));
	ck_assert_uint_eq(window_fgbg(w)->scans, 30 + seq);
	ck_assert_ptr_nonnull(window_dmabuf(w));
	ck_assert_uint_eq(window_dmabuf(w)->total_bytes, 40 + seq);
	ck_assert_ptr_nonnull(window_gpufreq(w));
	ck_assert_uint_eq(window_gpufreq(w)->reads, 50 + seq);
	ck_assert_ptr_nonnull(window_syscalls(w));
	ck_assert_uint_eq(window_syscalls(w)->floor_ns, 60 + seq);
}

/* The windows of [from, to) as rc loads them: want of them, windows
 * 1..want of mkwin_parts, each with its parts. */
static void
load_parts(struct store *rc, int64_t from, int64_t to, size_t want)
{
	struct window **v;
	size_t n, i;

	ck_assert_int_eq(store_windows(rc, from, to, 0, &v, &n), 0);
	ck_assert_uint_eq(n, want);
	for (i = 0; i < n; i++) {
		parts_of(v[i], 1 + i);
		window_free(v[i]);
	}
	free(v);
}

/* The window of id_sql's id, as the writer loads it (roll-ups read so),
 * has the parts mkwin_parts gave window seq. */
static void
writer_parts(struct store *s, const char *id_sql, uint64_t seq)
{
	struct window *w = NULL;

	ck_assert_int_eq(store_load(s, count_in(path, id_sql), &w), 0);
	parts_of(w, seq);
	window_free(w);
}

/* Every window of s as a reader loads it, and each range read of the
 * six parts, against windows first..last of mkwin_parts. */
static void
reader_parts(struct store *s, uint64_t first, uint64_t last)
{
	int64_t from = T0 - SEC, to = T0 + 86400 * SEC;
	struct window_dmabuf *db = NULL;
	struct window_gpufreq *gf = NULL;
	struct window_syscalls *sc = NULL;
	struct window_fgbg **fg = NULL;
	struct store_wcpu_win *wc = NULL;
	struct store_hist *fw = NULL;
	struct window **v;
	struct store *rc;
	size_t n, i;
	uint32_t nw = 0;

	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_windows(rc, from, to, 0, &v, &n), 0);
	ck_assert_uint_eq(n, last - first + 1);
	for (i = 0; i < n; i++) {
		parts_of(v[i], first + i);
		window_free(v[i]);
	}
	free(v);
	ck_assert_int_eq(store_dmabuf_range(rc, from, to, &db, &nw), 0);
	ck_assert_ptr_nonnull(db);
	ck_assert_uint_eq(nw, n);
	ck_assert_uint_eq(db->total_bytes, 40 + last); /* the last pass's */
	ck_assert_int_eq(store_gpufreq_range(rc, from, to, &gf), 0);
	ck_assert_ptr_nonnull(gf);
	ck_assert_uint_eq(gf->windows, n);
	ck_assert_int_eq(store_syscalls_range(rc, from, to, &sc, &nw), 0);
	ck_assert_ptr_nonnull(sc);
	ck_assert_uint_eq(nw, n);
	ck_assert_int_eq(store_fgbg_range(rc, from, to, &fg, &fw, &n), 0);
	ck_assert_uint_eq(n, last - first + 1);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(fg[i]->scans, 30 + first + i);
	store_fgbg_range_free(fg, fw, n);
	ck_assert_int_eq(store_wcpu_span(rc, from, to, &wc, &n), 0);
	ck_assert_uint_eq(n, last - first + 1);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(wc[i].p);
		ck_assert_uint_eq(wc[i].p->busy_ticks, 20 + first + i);
	}
	store_wcpu_span_free(wc, n);
	window_dmabuf_free(db);
	window_gpufreq_free(gf);
	window_syscalls_free(sc);
	store_conn_end(rc);
	store_conn_close(rc);
}

#define FOLD_TABLES                                                    \
	"(SELECT count(*) FROM window_cgroup) + (SELECT count(*) FROM" \
	" window_wcpu) + (SELECT count(*) FROM window_fgbg) + (SELECT" \
	" count(*) FROM window_dmabuf) + (SELECT count(*) FROM"        \
	" window_gpufreq) + (SELECT count(*) FROM window_syscalls)"
#define FOLDED                                                             \
	"SELECT count(*) FROM window_parts WHERE cgroup NOT NULL AND wcpu" \
	" NOT NULL AND fgbg NOT NULL AND dmabuf NOT NULL AND gpufreq NOT"  \
	" NULL AND syscalls NOT NULL"

/* The name of the file's one span parts table (the tests' windows all
 * fall in one hour). */
static void
parts_table(sqlite3 *db, char *name, size_t n)
{
	sqlite3_stmt *q;

	ck_assert_int_eq(sqlite3_prepare_v2(db,
			     "SELECT name FROM sqlite_schema WHERE name GLOB"
			     " 'l0_parts_*'",
			     -1, &q, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	snprintf(name, n, "%s", sqlite3_column_text(q, 0));
	ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
	sqlite3_finalize(q);
}

/*
 * A move puts a level-0 window's six one-blob parts in its span's parts
 * row (v28), not in their tables; readers and the writer read them there
 * as before the move, range reads included.
 */
START_TEST(test_move_folds_parts)
{
	struct store *s = open_spool(3600);

	put_parts(s, 1, 3);
	/* in the spool: in the parts' own tables there */
	ck_assert_int_eq(count_in(spool, "SELECT " FOLD_TABLES), 18);
	reader_parts(s, 1, 3);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(count_in(path, "SELECT " FOLD_TABLES), 0);
	ck_assert_int_eq(count_in(path, FOLDED), 3);
	ck_assert_int_eq(count_in(path,
			     "SELECT count(*) FROM sqlite_schema WHERE name"
			     " GLOB 'l0_parts_*'"),
	    1);
	reader_parts(s, 1, 3);
	/* the writer's own load (roll-ups read so) */
	writer_parts(s, "SELECT min(id) FROM windows", 1);
	/* a spool window beside moved ones */
	put_parts(s, 4, 4);
	reader_parts(s, 1, 4);
	store_close(s);
	ck_assert_int_eq(count_in(path, FOLDED), 4);
}
END_TEST

/* Runs of rc's statements that look a folded part up (STORE_FOLD_SEL:
 * the parts view, then the part's table); they must be all six. */
static int
fold_sel_runs(struct store *rc)
{
	sqlite3_stmt *st = NULL;
	int runs = 0, n = 0;

	while ((st = sqlite3_next_stmt(rc->db, st)) != NULL) {
		const char *sql = sqlite3_sql(st);

		if (strstr(sql, "WHERE ?2 AND window_id = ?1") == NULL)
			continue;
		n++;
		runs += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0);
	}
	ck_assert_int_eq(n, 6);
	return runs;
}

/*
 * A window's load takes its folded parts from the parts row it holds
 * (RS_PARTS): no lookup of its own for a moved window's six; one each,
 * in the tables, for a window whose parts row has none (the spool's).
 */
START_TEST(test_load_takes_parts_row)
{
	int64_t from = T0 - SEC, to = T0 + 86400 * SEC;
	struct store *s = open_spool(3600), *rc;

	put_parts(s, 1, 3);
	ck_assert_int_eq(store_flush(s), 0);
	put_parts(s, 4, 4); /* stays in the spool, in the tables there */
	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	load_parts(rc, from, T0 + 40 * SEC, 3);
	ck_assert_int_eq(fold_sel_runs(rc), 0);
	load_parts(rc, from, to, 4);
	ck_assert_int_eq(fold_sel_runs(rc), 6);
	store_conn_end(rc);
	store_conn_close(rc);
	store_close(s);
}
END_TEST

/*
 * A v27 file's span parts tables get the columns at open (v28's C half)
 * and take the next move's folded rows.
 */
START_TEST(test_v27_span_takes_folds)
{
	struct store *s = open_spool(3600);
	sqlite3 *db;
	const char *c[] = { "cgroup", "wcpu", "fgbg", "dmabuf", "gpufreq",
		"syscalls" };
	char sql[256], name[64];
	size_t i;

	put(s, 1); /* no folded part: nothing lost by the drops below */
	store_close(s);
	/* back to what v27 made: the parts tables without the columns */
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	parts_table(db, name, sizeof(name));
	for (i = 0; i < 6; i++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE %s DROP COLUMN %s",
		    name, c[i]);
		sf_exec_raw(db, sql);
		snprintf(sql, sizeof(sql),
		    "ALTER TABLE window_parts DROP COLUMN %s", c[i]);
		sf_exec_raw(db, sql);
	}
	sf_exec_raw(db, "PRAGMA user_version = 27");
	sqlite3_close(db);

	s = open_spool(3600);
	put_parts(s, 2, 3);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(count_in(path, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	ck_assert_int_eq(count_in(path, FOLDED), 2);
	ck_assert_int_eq(count_in(path, "SELECT " FOLD_TABLES), 0);
	reader_sees(s, 3, 60);
	/* the two moved into the ALTERed table read their parts back */
	writer_parts(s, "SELECT max(id) FROM windows", 3);
	store_close(s);
}
END_TEST

/*
 * A folded blob that does not decode is counted and its window reads
 * without that part; its other parts and the other windows read.
 */
START_TEST(test_folded_blob_damaged)
{
	struct store *s = open_spool(3600);
	struct store_stats st;
	struct window *w;
	char sql[256], name[64];
	sqlite3 *db;
	uint64_t before;

	put_parts(s, 1, 2);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	parts_table(db, name, sizeof(name));
	snprintf(sql, sizeof(sql),
	    "UPDATE %s SET cgroup = x'b70102' WHERE window_id = (SELECT"
	    " min(window_id) FROM %s)",
	    name, name);
	sf_exec_raw(db, sql);
	sqlite3_close(db);
	store_get_stats(s, &st);
	before = st.blob_errors;
	w = NULL;
	ck_assert_int_eq(store_load(s,
			     count_in(path, "SELECT min(id) FROM windows"), &w),
	    0);
	ck_assert_ptr_null(window_cgroup(w));
	ck_assert_ptr_nonnull(window_wcpu(w));
	ck_assert_uint_eq(window_wcpu(w)->busy_ticks, 21);
	ck_assert_uint_eq(w->nprocs, 2);
	window_free(w);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, before + 1);
	writer_parts(s, "SELECT max(id) FROM windows", 2);
	store_close(s);
}
END_TEST

/* The daemon dies with windows in the spool: the next open moves them. */
START_TEST(test_crash_leftover)
{
	struct store *s;
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		s = open_spool(3600);
		put(s, 1);
		put(s, 2);
		_exit(0); /* no close, no move */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(WINDOWS(path), 0);
	ck_assert_int_eq(WINDOWS(spool), 2);
	s = open_spool(3600);
	ck_assert_int_eq(WINDOWS(path), 2);
	ck_assert_int_eq(WINDOWS(spool), 0);
	put(s, 3);
	reader_sees(s, 3, 60);
	store_close(s);
	ck_assert_int_eq(WINDOWS(path), 3);
}
END_TEST

static void
copy_file(const char *from, const char *to)
{
	(void)unlink(to);
	ck_assert_int_eq(store_heal_copy_file(from, to), 0);
}

/*
 * Death between the move's commit and the spool's emptying: the windows
 * are in both files. The next open moves nothing twice.
 */
START_TEST(test_crash_mid_move)
{
	char keep[PATH_MAX], a[PATH_MAX + 8], b[PATH_MAX + 8];
	struct store *s = open_spool(3600);

	put(s, 1);
	put(s, 2);
	snprintf(keep, sizeof(keep), "%s/kept.db", dir);
	/* the spool as it was before the move (its WAL folded in) */
	ck_assert_int_eq(store_exec(s->spool, "PRAGMA wal_checkpoint(TRUNCATE)",
			     NULL, 0),
	    0);
	copy_file(spool, keep);
	ck_assert_int_eq(store_flush(s), 0);
	put(s, 3);
	store_close(s);
	ck_assert_int_eq(WINDOWS(path), 3);
	/* the old spool back, as a death before the emptying leaves it:
	 * windows 1 and 2 in both files */
	copy_file(keep, spool);
	snprintf(a, sizeof(a), "%s-wal", spool);
	snprintf(b, sizeof(b), "%s-shm", spool);
	(void)unlink(a);
	(void)unlink(b);
	ck_assert_int_eq(WINDOWS(spool), 2);
	s = open_spool(3600);
	/* nothing moved twice */
	ck_assert_int_eq(WINDOWS(path), 3);
	ck_assert_int_eq(WINDOWS(spool), 0);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM window_tasks"),
	    3);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM instance"), 2);
	reader_sees(s, 3, 60);
	store_close(s);
}
END_TEST

/* A reader while the spool holds a window the main file has too. */
START_TEST(test_reader_counts_once)
{
	struct store *s = open_spool(3600), *rc;
	struct window **v;
	size_t n, i;

	put(s, 1);
	put(s, 2);
	/* as the move's first half leaves it: main has them, spool too */
	ck_assert_int_eq(store_exec(s,
			     "INSERT INTO main.windows SELECT * FROM "
			     "spool.windows",
			     NULL, 0),
	    0);
	ck_assert_int_eq(store_exec(s,
			     "INSERT INTO main.window_tasks SELECT * FROM "
			     "spool.window_tasks;"
			     "INSERT INTO main.instance SELECT * FROM "
			     "spool.instance",
			     NULL, 0),
	    0);
	ck_assert_int_eq(WINDOWS(path), 2);
	ck_assert_int_eq(WINDOWS(spool), 2);
	reader_sees(s, 2, 40);
	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_windows(rc, T0, T0 + 86400 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	store_conn_end(rc);
	store_conn_close(rc);
	/* and the move takes nothing twice */
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(WINDOWS(path), 2);
	ck_assert_int_eq(WINDOWS(spool), 0);
	store_close(s);
}
END_TEST

/* commit_s after the first waiting window, the next put moves them. */
START_TEST(test_commit_interval)
{
	struct store *s = open_spool(1);
	struct store_stats st;

	put(s, 1);
	ck_assert_int_eq(WINDOWS(path), 0);
	tu_sleep_ms(1100);
	put(s, 2);
	ck_assert_int_eq(WINDOWS(path), 2);
	ck_assert_int_eq(WINDOWS(spool), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.spool_flushes, 1);
	ck_assert_uint_gt(st.flush_ns_last, 0);
	store_close(s);
}
END_TEST

/* Maintenance sees what waited: it moves the spool first. */
START_TEST(test_maintain_moves)
{
	struct store *s = open_spool(3600);

	put(s, 1);
	put(s, 2);
	ck_assert_int_eq(store_maintain(s, T0 + 100 * SEC), 0);
	ck_assert_int_eq(WINDOWS(path), 2);
	ck_assert_int_eq(WINDOWS(spool), 0);
	store_close(s);
}
END_TEST

/*
 * A pass moves the spool and rolls up in one transaction; windows the move
 * brings that are already old enough to roll (a spool that could not move
 * for long) wait for the next pass, so a reader, which sees the spool's
 * copies until the commit lets them go, never counts one beside its
 * roll-up. The next pass rolls them, sums kept.
 */
START_TEST(test_pass_spares_moved)
{
	struct store_opts o;
	struct store *s;
	uint64_t q;

	store_opts_default(&o);
	o.spool_path = spool;
	o.commit_s = 3600;
	o.rollup1_after_s = 600;
	o.rollup1_s = 60;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	for (q = 0; q < 30; q++) /* 300 s from T0 */
		put(s, q);
	ck_assert_int_eq(WINDOWS(path), 0);
	ck_assert_int_eq(store_maintain(s, T0 + 7200 * SEC), 0);
	ck_assert_int_eq(WINDOWS(spool), 0);
	ck_assert_int_eq(count_in(path,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 0"),
	    30);
	reader_sees(s, 30, 30 * 20);
	ck_assert_int_eq(store_maintain(s, T0 + 7200 * SEC), 0);
	ck_assert_int_eq(count_in(path,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 0"),
	    0);
	ck_assert_int_ge(count_in(path, "SELECT count(*) FROM windows"), 5);
	ck_assert_int_le(count_in(path, "SELECT count(*) FROM windows"), 6);
	reader_sees(s, (size_t)count_in(path, "SELECT count(*) FROM windows"),
	    30 * 20);
	store_close(s);
}
END_TEST

/* One SQL statement on the file at p, by a connection of its own. */
static void
exec_in(const char *p, const char *sql)
{
	sqlite3 *h;

	ck_assert_int_eq(sqlite3_open(p, &h), SQLITE_OK);
	sqlite3_busy_timeout(h, 2000);
	ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(h));
	sqlite3_close(h);
}

/*
 * A move that fails inside a pass in a way SQLite does not undo itself
 * (a statement aborted by a trigger) takes the whole pass back: no
 * transaction is left open, the windows wait in the spool, and once the
 * cause is gone the next pass moves them.
 */
START_TEST(test_pass_move_fails)
{
	struct store_stats st;
	struct store *s = open_spool(3600);

	put(s, 1);
	put(s, 2);
	exec_in(path,
	    "CREATE TRIGGER no_move BEFORE INSERT ON windows"
	    " BEGIN SELECT RAISE(ABORT, 'refused'); END");
	ck_assert_int_lt(store_maintain(s, T0 + 100 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.spool_failures, 1);
	ck_assert_int_eq(WINDOWS(spool), 2);
	/* nothing holds the main file: another connection writes at once */
	exec_in(path, "DROP TRIGGER no_move");
	ck_assert_int_eq(store_maintain(s, T0 + 100 * SEC), 0);
	ck_assert_int_eq(WINDOWS(path), 2);
	ck_assert_int_eq(WINDOWS(spool), 0);
	reader_sees(s, 2, 40);
	store_close(s);
}
END_TEST

/* No spool to be had: every window is its own transaction, as before. */
START_TEST(test_no_spool)
{
	struct store_stats st;
	struct store *s;

	snprintf(spool, sizeof(spool), "%s/missing/spool.db", dir);
	s = open_spool(3600);
	store_get_stats(s, &st);
	ck_assert(!st.spool_on);
	ck_assert_int_ne(st.spool_err, 0);
	put(s, 1);
	ck_assert_int_eq(WINDOWS(path), 1);
	reader_sees(s, 1, 20);
	store_close(s);
}
END_TEST

/*
 * The store's SQLite takes no initial page-cache block (store_core.c,
 * store_sqlite_setup): a connection that reads the schema and one count
 * holds the pages it read, not SQLite's default block of 20 slots
 * (87,208 B at 4 KiB pages), whatever else the open costs. With the
 * block the same open and read took ~102 KB here, without it ~19 KB.
 */
START_TEST(test_page_cache_by_page)
{
	sqlite3_int64 before, after;
	struct store *s;
	sqlite3 *db;

	s = open_spool(3600); /* the store's open: SQLite set up */
	put(s, 1);
	store_close(s);
	before = sqlite3_memory_used();
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "SELECT count(*) FROM windows", NULL,
			     NULL, NULL),
	    SQLITE_OK);
	after = sqlite3_memory_used();
	sqlite3_close(db);
	ck_assert_msg(after > before, "the open allocated nothing");
	ck_assert_msg(after - before < 64 * 1024,
	    "a connection's open and first read: %lld B",
	    (long long)(after - before));
}
END_TEST

/*
 * An instance the main file has, seen again a day later: its row must
 * say it lives on (until_ns, on a day grid, what instance retention goes
 * by). The spool gets the changed copy and the move raises the main file's row; the id
 * stays the one the main file gave it.
 */
START_TEST(test_instance_lives_on)
{
	struct store *s = open_spool(3600);
	long long iid, until0, until1;

	put(s, 1);
	ck_assert_int_eq(store_flush(s), 0);
	iid = count_in(path, "SELECT iid FROM instance WHERE id = 101");
	until0 = count_in(path, "SELECT until_ns FROM instance WHERE id = 101");
	/* 7,000 s later: past the day's end (T0 is 6,600 s before one) */
	put(s, 700);
	/* the first instance past the day's end raises every one of that
	 * day with it: both copied to the spool, with their ids */
	ck_assert_int_eq(count_in(spool, "SELECT count(*) FROM instance"), 2);
	ck_assert_int_eq(count_in(spool,
			     "SELECT iid FROM instance WHERE id = 101"),
	    iid);
	reader_sees(s, 2, 40);
	ck_assert_int_eq(store_flush(s), 0);
	until1 = count_in(path, "SELECT until_ns FROM instance WHERE id = 101");
	ck_assert_int_gt(until1, until0);
	ck_assert_int_ge(until1, T0 + 7010 * SEC);
	ck_assert_int_eq(count_in(path,
			     "SELECT until_ns FROM instance WHERE id = 100"),
	    until1);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM instance"), 2);
	ck_assert_int_eq(count_in(spool, "SELECT count(*) FROM instance"), 0);
	store_close(s);
}
END_TEST

/*
 * The main file cannot take a move (another connection holds its write
 * lock): the windows wait in the spool, counted; maintenance neither
 * merges nor deletes meanwhile; once the lock goes, one move takes all.
 */
START_TEST(test_move_fails)
{
	struct store_stats st;
	struct store_opts o;
	struct store *s;
	sqlite3 *h;

	store_opts_default(&o);
	o.spool_path = spool;
	o.commit_s = 3600;
	o.busy_timeout_ms = 50;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	put(s, 1);
	put(s, 2);
	h = tu_db_hold(path);
	ck_assert_int_eq(store_flush(s), -EBUSY);
	ck_assert_int_lt(store_maintain(s, T0 + 100 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.spool_failures, 2);
	ck_assert_uint_eq(st.spool_pending, 2);
	put(s, 3); /* the spool still takes windows */
	tu_db_release(h);
	ck_assert_int_eq(WINDOWS(path), 0);
	reader_sees(s, 3, 60);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(WINDOWS(path), 3);
	ck_assert_int_eq(WINDOWS(spool), 0);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM instance"), 2);
	store_close(s);
}
END_TEST

/* Statements prepared on the main file's connection that read the
 * spool: the moves' (store_spool.c, moves_prepare). */
static unsigned
spool_readers(struct store *s)
{
	sqlite3_stmt *st = NULL;
	unsigned n = 0;

	while ((st = sqlite3_next_stmt(s->db, st)) != NULL)
		if (strstr(sqlite3_sql(st), "FROM spool.") != NULL)
			n++;
	return n;
}

/*
 * The moves' statements live only through a move: none is held on the
 * main connection between moves (only the put's replay check stays),
 * and each move prepares them again and moves every window.
 */
START_TEST(test_moves_prepared_per_move)
{
	struct store *s = open_spool(3600);
	struct store_stats st;
	unsigned round;

	for (round = 1; round <= 3; round++) {
		put(s, 2 * round - 1);
		put(s, 2 * round);
		ck_assert_uint_eq(spool_readers(s), 0);
		ck_assert_int_eq(store_flush(s), 0);
		ck_assert_uint_eq(spool_readers(s), 0);
		ck_assert_int_eq(WINDOWS(path), 2 * round);
		ck_assert_int_eq(WINDOWS(spool), 0);
	}
	/* and a maintenance pass's move the same */
	put(s, 7);
	ck_assert_int_eq(store_maintain(s, T0 + 100 * SEC), 0);
	ck_assert_uint_eq(spool_readers(s), 0);
	ck_assert_int_eq(WINDOWS(path), 7);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.spool_flushes, 4);
	ck_assert_uint_eq(st.spool_moved, 7);
	ck_assert_uint_eq(st.spool_failures, 0);
	reader_sees(s, 7, 140);
	store_close(s);
}
END_TEST

/* A replay of a window the main file has goes nowhere. */
START_TEST(test_replay)
{
	struct store *s = open_spool(3600);
	struct store_stats st;

	put(s, 1);
	ck_assert_int_eq(store_flush(s), 0);
	put(s, 1);
	ck_assert_int_eq(WINDOWS(spool), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.spool_pending, 0);
	ck_assert_uint_eq(st.windows_written, 1);
	store_close(s);
	ck_assert_int_eq(WINDOWS(path), 1);
}
END_TEST

/* A window of processes pid0 and pid0 + 1 (names "run<pid>") with one
 * vmstat counter vm: what makes instance and key ids. */
static struct window *
mkwin_ids(uint64_t seq, int32_t pid0, enum vmstat_key vm)
{
	struct window *w = mkwin(seq);
	size_t i;

	for (i = 0; i < w->nprocs; i++) {
		struct window_task *t = &w->procs[i];

		t->id = t->tgid = pid0 + (int32_t)i;
		t->starttime = 7000 + (uint64_t)pid0 + i;
		window_task_set_namef(t, "run%d", (int)t->id);
		t->d_utime = (uint64_t)pid0 + i;
	}
	w->d_vm[vm] = 1000 + seq;
	w->vm_have = 1u << vm;
	return w;
}

static void
put_ids(struct store *s, uint64_t seq, int32_t pid0, enum vmstat_key vm)
{
	struct window *w = mkwin_ids(seq, pid0, vm);

	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

/*
 * Killed with windows in the spool, then a run without the spool, then
 * one with it: the run between gave away the spool's window, instance
 * and key ids to windows, tasks and counters of its own. The leftover
 * spool's move renumbers its rows and blobs first: every window reads
 * back with its own tasks, names and counters, nothing lost or crossed.
 */
START_TEST(test_id_clash)
{
	struct store_opts o;
	struct store *s;
	struct window **v;
	struct window_task *t;
	size_t n, i, j;
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		s = open_spool(3600);
		put_ids(s, 1, 300, VM_PGFAULT);
		put_ids(s, 2, 300, VM_PGFAULT);
		_exit(0); /* no close, no move */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(WINDOWS(spool), 2);
	/* the run without the spool: ids from the main file's alone, and
	 * one task (300) the spool has too */
	store_opts_default(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	put_ids(s, 10, 400, VM_PGMAJFAULT);
	put_ids(s, 11, 299, VM_PSWPIN);
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT min(id) FROM windows"),
	    count_in(spool, "SELECT min(id) FROM windows"));
	ck_assert_int_eq(count_in(path, "SELECT min(iid) FROM instance"),
	    count_in(spool, "SELECT min(iid) FROM instance"));
	ck_assert_int_eq(count_in(path, "SELECT min(id) FROM window_key"),
	    count_in(spool, "SELECT min(id) FROM window_key"));
	/* the spool again */
	s = open_spool(3600);
	ck_assert_int_eq(WINDOWS(spool), 0);
	ck_assert_int_eq(WINDOWS(path), 4);
	ck_assert_int_eq(store_windows(s, T0, T0 + 86400 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++) {
		static const struct {
			uint64_t seq;
			int32_t pid0;
			enum vmstat_key vm;
		} want[] = { { 1, 300, VM_PGFAULT }, { 2, 300, VM_PGFAULT },
			{ 10, 400, VM_PGMAJFAULT }, { 11, 299, VM_PSWPIN } };
		struct window *w = mkwin_ids(want[i].seq, want[i].pid0,
		    want[i].vm);

		ck_assert_uint_eq(v[i]->seq, want[i].seq);
		ck_assert_uint_eq(v[i]->nprocs, 2);
		for (j = 0; j < 2; j++) {
			ck_assert_int_eq(v[i]->procs[j].id, w->procs[j].id);
			ck_assert_str_eq(window_task_name(&v[i]->procs[j]),
			    window_task_name(&w->procs[j]));
			ck_assert_uint_eq(v[i]->procs[j].d_utime,
			    w->procs[j].d_utime);
		}
		ck_assert_uint_eq(v[i]->vm_have, 1u << want[i].vm);
		ck_assert_uint_eq(v[i]->d_vm[want[i].vm], 1000 + want[i].seq);
		window_free(w);
		window_free(v[i]);
	}
	free(v);
	/* task 300 once, its two windows summed */
	ck_assert_int_eq(store_top(s, T0, T0 + 86400 * SEC, false, METRIC_CPU,
			     0, &t, &n),
	    0);
	ck_assert_uint_eq(n, 5); /* 300, 301; 400, 401; 299 */
	for (i = 0; i < n; i++)
		if (t[i].id == 300)
			ck_assert_uint_eq(t[i].d_utime, 300 * 3);
	free(t);
	ck_assert_int_eq(count_in(path,
			     "SELECT count(*) FROM instance WHERE id = 300"),
	    1);
	store_close(s);
}
END_TEST

/* ------------------------------------------ a commit that fails and lands */

/*
 * A VFS over the default one whose next sync of a file named "*-wal"
 * fails when armed: the commit's frames are in the WAL, the commit says
 * error. SQLite's recovery (the WAL index rebuilt, as after a -shm cut)
 * finds them whole and the "failed" transaction is there after all.
 */
static sqlite3_vfs shim_vfs, *shim_base;
static int shim_fail_syncs;
static char shim_cut[PATH_MAX + 8]; /* cut to nothing at the failure */

struct shim_file {
	sqlite3_file f;
	sqlite3_file *real; /* the base VFS's, right after this */
	bool wal;
};

#define REAL(f) (((struct shim_file *)(f))->real)

static int
shim_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}

static int
shim_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
	return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}

static int
shim_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}

static int
shim_truncate(sqlite3_file *f, sqlite3_int64 n)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), n);
}

static int
shim_sync(sqlite3_file *f, int flags)
{
	int rc = REAL(f)->pMethods->xSync(REAL(f), flags);

	if (rc == SQLITE_OK && ((struct shim_file *)f)->wal &&
	    shim_fail_syncs > 0) {
		shim_fail_syncs--;
		if (shim_cut[0])
			ck_assert_int_eq(truncate(shim_cut, 0), 0);
		return SQLITE_IOERR_FSYNC;
	}
	return rc;
}

static int
shim_size(sqlite3_file *f, sqlite3_int64 *n)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), n);
}

static int
shim_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int
shim_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int
shim_check(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int
shim_fcntl(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int
shim_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int
shim_devchar(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int
shim_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **p)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}

static int
shim_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void
shim_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int
shim_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static const sqlite3_io_methods shim_io = {
	.iVersion = 2,
	.xClose = shim_close,
	.xRead = shim_read,
	.xWrite = shim_write,
	.xTruncate = shim_truncate,
	.xSync = shim_sync,
	.xFileSize = shim_size,
	.xLock = shim_lock,
	.xUnlock = shim_unlock,
	.xCheckReservedLock = shim_check,
	.xFileControl = shim_fcntl,
	.xSectorSize = shim_sector,
	.xDeviceCharacteristics = shim_devchar,
	.xShmMap = shim_shm_map,
	.xShmLock = shim_shm_lock,
	.xShmBarrier = shim_shm_barrier,
	.xShmUnmap = shim_shm_unmap,
};

static int
shim_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags,
    int *out)
{
	struct shim_file *sf = (struct shim_file *)f;
	size_t l = name ? strlen(name) : 0;
	int rc;

	(void)v;
	sf->real = (sqlite3_file *)(sf + 1);
	sf->wal = l > 4 && strcmp(name + l - 4, "-wal") == 0;
	rc = shim_base->xOpen(shim_base, name, sf->real, flags, out);
	sf->f.pMethods = rc == SQLITE_OK ? &shim_io : NULL;
	return rc;
}

static void
shim_on(void)
{
	shim_base = sqlite3_vfs_find(NULL);
	ck_assert_ptr_nonnull(shim_base);
	shim_vfs = *shim_base;
	shim_vfs.zName = "vitals-test-shim";
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) + shim_base->szOsFile;
	shim_vfs.xOpen = shim_open;
	shim_vfs.pAppData = NULL;
	ck_assert_int_eq(sqlite3_vfs_register(&shim_vfs, 1), SQLITE_OK);
}

/*
 * The spool's commit of a window says error but its frames are whole in
 * the WAL, and its -shm is cut at that moment (the fault that did this in
 * a daemon): the index rebuilt from the WAL has the window after all, the
 * move takes it to the main file, and the put there is a replay. The
 * window is stored once and counted written once (a daemon had said "7
 * windows written" of 8 stored).
 */
START_TEST(test_failed_commit_landed)
{
	struct store_stats st;
	struct store *s;
	struct window *w;

	if (getenv("VITALS_HEAL_NO_SIGBUS") == NULL)
		ck_assert_int_eq(store_heal_sigbus_install(), 0);
	shim_on();
	s = open_spool(3600);
	put(s, 1);
	put(s, 2);
	store_get_stats(s, &st);
	ck_assert(st.spool_on);
	ck_assert_uint_eq(st.windows_written, 2);

	w = mkwin(3);
	snprintf(shim_cut, sizeof(shim_cut), "%s-shm", spool);
	shim_fail_syncs = 1;
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(shim_fail_syncs, 0);
	shim_cut[0] = '\0';
	store_get_stats(s, &st);
	ck_assert_uint_ge(st.shm_faults, 1);
	ck_assert_uint_eq(st.windows_written, 3);
	put(s, 4);
	ck_assert_int_eq(store_put(s, w), 0); /* a replay: nothing more */
	window_free(w);
	ck_assert_int_eq(store_flush(s), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_written, 4);
	store_close(s);
	ck_assert_int_eq(WINDOWS(path), 4);
	sqlite3_vfs_unregister(&shim_vfs);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("store_spool");
	TCase *tc = tcase_create("spool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_crash_leftover);
	tcase_add_test(tc, test_crash_mid_move);
	tcase_add_test(tc, test_reader_counts_once);
	tcase_add_test(tc, test_reader_idle_released);
	tcase_add_test(tc, test_commit_interval);
	tcase_add_test(tc, test_maintain_moves);
	tcase_add_test(tc, test_no_spool);
	tcase_add_test(tc, test_page_cache_by_page);
	tcase_add_test(tc, test_replay);
	tcase_add_test(tc, test_failed_commit_landed);
	tcase_add_test(tc, test_instance_lives_on);
	tcase_add_test(tc, test_move_fails);
	tcase_add_test(tc, test_moves_prepared_per_move);
	tcase_add_test(tc, test_pass_spares_moved);
	tcase_add_test(tc, test_pass_move_fails);
	tcase_add_test(tc, test_id_clash);
	tcase_add_test(tc, test_move_folds_parts);
	tcase_add_test(tc, test_load_takes_parts_row);
	tcase_add_test(tc, test_v27_span_takes_folds);
	tcase_add_test(tc, test_folded_blob_damaged);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(suite());
}
