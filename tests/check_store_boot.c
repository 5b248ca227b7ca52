/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Boots interned (schema v24, store_schema.c): a v23 file, made from the
 * windows this build wrote (every table copied, windows with the boot's
 * text as v23 had it), migrates in place and answers windows, top and
 * history exactly as before; the boot table holds each boot once; the
 * step refuses to run with foreign keys on (it would cascade); the boot
 * id is a function of the text alone, 0 for "".
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"
#include "testutil.h"
#include "vitalsd.h"

#define T0 (1699999800LL * NSEC_PER_SEC)
#define SEC NSEC_PER_SEC
#define BOOT_A "8c1e7a6c-3f9b-4c2e-9a47-0d5f1e2b3c4d"
#define BOOT_B "0b6f2d1e-5a4c-4e3b-8d2a-1c9f7e6d5b4a"
#define NWIN 9

static char *dir;
static char path[PATH_MAX], old[PATH_MAX + 8];

static void
setup(void)
{
	dir = tu_mkdtemp_db("boot", path, sizeof(path));
	snprintf(old, sizeof(old), "%s.v23", path);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_default(const char *p)
{
	struct store_opts o;
	struct store *s = NULL;
	int r;

	store_opts_default(&o);
	r = store_open(p, &o, &s);
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

/* Window k: boot A for 0-3, B for 4-6 (its monotonic clock restarted),
 * unknown ("") for 7-8; two processes and a thread with figures of k. */
static struct window *
mkwin(unsigned k)
{
	struct window *w = window_new(k, 0);
	const char *boot = k < 4 ? BOOT_A : k < 7 ? BOOT_B : "";
	unsigned base = k < 4 ? 0 : k < 7 ? 4 : 7;
	struct window_task t;
	int32_t i;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", boot);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)(k - base) * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + (int64_t)k * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	w->all.d.user = 100 + k;
	w->all.d.idle = 900;
	for (i = 0; i < 3; i++) {
		memset(&t, 0, sizeof(t));
		t.id = i < 2 ? 10 * (i + 1) : 11;
		t.tgid = i < 2 ? t.id : 10;
		t.starttime = 1000 + (uint64_t)t.id;
		t.uid = 10000;
		snprintf(t.comm, sizeof(t.comm), "c%d", t.id);
		window_task_set_name(&t, t.comm);
		t.d_utime = 7 * k + (uint64_t)t.id;
		t.d_stime = 3 * k;
		t.samples = 10;
		t.wall_ns = 10 * SEC;
		t.total_ticks = 2000;
		t.rss_pages_max = 500 + k;
		ck_assert_int_eq(window_add_task(w, i == 2, &t), 0);
	}
	return w;
}

/* What a reader gets: windows, top processes and a process's history,
 * as one text to compare. */
static char *
answers(struct store *s)
{
	struct window **v;
	struct window_task *top;
	struct store_hist *h;
	size_t n, i, j;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(store_windows(s, T0, T0 + NWIN * 10 * SEC, 0, &v, &n),
	    0);
	ck_assert_uint_eq(n, NWIN);
	for (i = 0; i < n; i++) {
		const struct window *w = v[i];

		fprintf(f, "w %s %u %llu %lld %lld %llu %zu %zu", w->boot_id,
		    w->level, (unsigned long long)w->seq,
		    (long long)w->mono_start_ns, (long long)w->wall_start_ns,
		    (unsigned long long)w->all.d.user, w->nprocs, w->nthreads);
		for (j = 0; j < w->nprocs; j++)
			fprintf(f, " p%d:%llu", w->procs[j].id,
			    (unsigned long long)w->procs[j].d_utime);
		for (j = 0; j < w->nthreads; j++)
			fprintf(f, " t%d:%llu", w->threads[j].id,
			    (unsigned long long)w->threads[j].d_utime);
		fputc('\n', f);
		window_free(v[i]);
	}
	free(v);
	ck_assert_int_eq(store_top(s, T0, T0 + NWIN * 10 * SEC, false,
			     METRIC_CPU, 5, &top, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	for (i = 0; i < n; i++)
		fprintf(f, "top %d %llu\n", top[i].id,
		    (unsigned long long)top[i].d_utime);
	free(top);
	ck_assert_int_eq(store_history(s, false, 20, 0, T0,
			     T0 + NWIN * 10 * SEC, &h, &n),
	    0);
	ck_assert_uint_eq(n, NWIN);
	for (i = 0; i < n; i++)
		fprintf(f, "h %s %lld %llu\n", h[i].boot_id,
		    (long long)h[i].mono_start_ns,
		    (unsigned long long)h[i].t.d_utime);
	free(h);
	fclose(f);
	return out;
}

static void
exec_raw(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK,
	    "%s: %s", sql, err ? err : "");
}

/*
 * The file at path as a v23 store holds it: a fresh v23 file (the real
 * steps 1-24) with every table's rows copied and each window's boot as
 * its text.
 */
static void
make_v23(void)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char sql[PATH_MAX + 256];

	ck_assert_int_eq(store_create_version(old, 23, NULL), 0);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "ATTACH '%s' AS old", old);
	exec_raw(db, sql);
	exec_raw(db, "BEGIN");
	exec_raw(db,
	    "INSERT INTO old.windows (id, " STORE_WINDOW_COLS ")"
	    " SELECT id, " STORE_WINDOW_SEL_COLS " FROM main.windows");
	ck_assert_int_eq(sqlite3_prepare_v2(db,
			     "SELECT name FROM main.sqlite_schema WHERE"
			     " type = 'table' AND name NOT LIKE 'sqlite_%'"
			     " AND name NOT IN ('windows', 'boot')",
			     -1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		/* level 0's span tables (v27, store_span.c): an older file
		 * holds their rows in the main tables */
		snprintf(sql, sizeof(sql),
		    "INSERT INTO old.\"%s\" SELECT * FROM main.\"%s\"",
		    strncmp(t, "l0_tasks_", 9) == 0	? "window_tasks" :
			strncmp(t, "l0_parts_", 9) == 0 ? "window_parts" :
							  t,
		    t);
		exec_raw(db, sql);
	}
	sqlite3_finalize(st);
	exec_raw(db, "COMMIT");
	sqlite3_close(db);
}

START_TEST(v23_file_migrates_with_the_same_answers)
{
	struct store *s = open_default(path);
	char *before, *after;
	unsigned k;

	for (k = 0; k < NWIN; k++) {
		struct window *w = mkwin(k);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM boot"), 3);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM boot WHERE id ="
			     " boot_key(boot_id)"),
	    3);
	before = answers(s);
	store_close(s);
	make_v23();

	s = open_default(old); /* migrates v23 -> v24 */
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM pragma_table_info('windows')"
			     " WHERE name = 'boot_id'"),
	    0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), NWIN);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM boot"), 3);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE boot ="
			     " boot_key('" BOOT_B "')"),
	    3);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE boot = 0"),
	    2);
	/* the windows' child rows survived the table's rebuild */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_parts"), NWIN);
	ck_assert_int_eq(q_int(s, "PRAGMA foreign_key_check"), 0);
	after = answers(s);
	ck_assert_str_eq(after, before);
	free(after);
	/* and it goes on: a replayed window is stored once, a new one is */
	{
		struct window *w = mkwin(5);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), NWIN);
	after = answers(s);
	ck_assert_str_eq(after, before);
	free(after);
	free(before);
	store_close(s);
}
END_TEST

/* With foreign keys on, dropping the old windows table would delete
 * every window's rows in its child tables: the step refuses. */
START_TEST(v24_step_refuses_with_foreign_keys_on)
{
	sqlite3 *db;

	ck_assert_int_eq(store_create_version(old, 23, NULL), 0);
	ck_assert_int_eq(sqlite3_open(old, &db), SQLITE_OK);
	ck_assert_int_eq(store_boot_fn(db), SQLITE_OK);
	exec_raw(db, "PRAGMA foreign_keys = ON; BEGIN");
	ck_assert_int_ne(store_migrations[23].fn(db), SQLITE_OK);
	exec_raw(db, "ROLLBACK");
	sqlite3_close(db);
}
END_TEST

START_TEST(boot_key_of_the_text_alone)
{
	int64_t a = store_boot_key(BOOT_A, strlen(BOOT_A));
	int64_t b = store_boot_key(BOOT_B, strlen(BOOT_B));

	ck_assert_int_eq(store_boot_key("", 0), 0);
	ck_assert_int_eq(store_boot_key(BOOT_A, strlen(BOOT_A)), a);
	ck_assert_int_ne(a, b);
	ck_assert_int_gt(a, 0);
	ck_assert_int_lt(a, 1LL << 47);
	ck_assert_int_gt(b, 0);
	ck_assert_int_lt(b, 1LL << 47);
	/* a prefix is another boot */
	ck_assert_int_ne(store_boot_key(BOOT_A, 8), a);
}
END_TEST

static Suite *
suite(void)
{
	Suite *su = suite_create("store_boot");
	TCase *tc = tcase_create("boot");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, v23_file_migrates_with_the_same_answers);
	tcase_add_test(tc, v24_step_refuses_with_foreign_keys_on);
	tcase_add_test(tc, boot_key_of_the_text_alone);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
