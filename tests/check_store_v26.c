/* SPDX-License-Identifier: Apache-2.0 */
/*
 * windows without its UNIQUE (boot, level, mono_start_ns) index (schema
 * v26, store_schema.c): a v25 file migrates in place, its rows and their
 * child rows kept; a window put twice is stored once, and a level-0
 * window a roll-up already holds is not stored again; the replay check
 * goes by windows_wall and the roll-up check by windows_roll (no scan of
 * windows); the step refuses to run with foreign keys on.
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
#define NWIN 12

static char *dir;
static char path[PATH_MAX], old[PATH_MAX + 8];

static void
setup(void)
{
	dir = tu_mkdtemp_db("v26", path, sizeof(path));
	snprintf(old, sizeof(old), "%s.v25", path);
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

/* Window k of boot A at `level`, 10 s (a level-1 one: `len` windows). */
static struct window *
mkwin(unsigned k, unsigned level, unsigned len)
{
	struct window *w = window_new(k, 0);
	struct window_task t;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", BOOT_A);
	w->level = level;
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)k * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + (int64_t)len * 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + w->mono_start_ns;
	w->wall_end_ns = T0 + w->mono_end_ns;
	w->samples = w->samples_valid = 10;
	w->all.d.user = 100 + k;
	w->all.d.idle = 900;
	memset(&t, 0, sizeof(t));
	t.id = t.tgid = 10;
	t.starttime = 1010;
	t.uid = 10000;
	snprintf(t.comm, sizeof(t.comm), "c10");
	t.d_utime = 7 * k + 1;
	t.samples = 10;
	t.wall_ns = 10 * SEC;
	t.total_ticks = 2000;
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	return w;
}

static void
put(struct store *s, unsigned k, unsigned level, unsigned len)
{
	struct window *w = mkwin(k, level, len);

	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

static void
exec_raw(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK,
	    "%s: %s", sql, err ? err : "");
}

/* The file at path as a v25 store holds it: a fresh v25 file (the real
 * steps 1-25) with every table's rows copied. */
static void
make_v25(void)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char sql[PATH_MAX + 256];

	ck_assert_int_eq(store_create_version(old, 25, NULL), 0);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "ATTACH '%s' AS old", old);
	exec_raw(db, sql);
	exec_raw(db, "BEGIN");
	ck_assert_int_eq(sqlite3_prepare_v2(db,
			     "SELECT name FROM main.sqlite_schema WHERE"
			     " type = 'table' AND name NOT LIKE 'sqlite_%'",
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

/* the windows' identities and ids, as one number to compare */
#define DIGEST                                                              \
	"SELECT sum((id * 1000003 + level * 7919 + mono_start_ns / 1000000" \
	" + wall_start_ns % 1000003) % 2147483647) FROM windows"

START_TEST(v25_file_migrates_keeping_rows)
{
	struct store *s = open_default(path);
	long long digest, parts;
	unsigned k;

	for (k = 0; k < NWIN; k++)
		put(s, k, 0, 1);
	put(s, 100, 1, 6); /* a roll-up of windows not stored */
	digest = q_int(s, DIGEST);
	parts = q_int(s, "SELECT count(*) FROM window_parts");
	ck_assert_int_eq(parts, NWIN + 1);
	store_close(s);
	make_v25();

	s = open_default(old); /* migrates v25 -> v26 */
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM pragma_index_list('windows')"
			     " WHERE \"unique\""),
	    0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM pragma_index_list('windows')"
			     " WHERE name = 'windows_roll' AND partial"),
	    1);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM pragma_index_list('windows')"
			     " WHERE name = 'windows_wall'"),
	    1);
	ck_assert_int_eq(q_int(s, DIGEST), digest);
	/* the windows' child rows survived the table's rebuild */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_parts"), parts);
	ck_assert_int_eq(q_int(s, "PRAGMA foreign_key_check"), 0);
	/* and it goes on: a replayed window is stored once */
	put(s, 3, 0, 1);
	put(s, 100, 1, 6);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), NWIN + 1);
	put(s, NWIN, 0, 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), NWIN + 2);
	store_close(s);
}
END_TEST

/* Exactly once without the UNIQUE key: a window put again, at either
 * level, and a level-0 window inside a stored roll-up are not stored. */
START_TEST(replays_stored_once)
{
	struct store *s = open_default(path);

	put(s, 0, 0, 1);
	put(s, 0, 0, 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	put(s, 6, 1, 6); /* holds 6..11 */
	put(s, 6, 1, 6);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2);
	put(s, 8, 0, 1); /* inside the roll-up: a replay */
	put(s, 11, 0, 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2);
	put(s, 12, 0, 1); /* past it: new */
	put(s, 5, 0, 1);  /* before it: new */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 4);
	/* the same start at another level is another window */
	put(s, 0, 1, 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 5);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 0"),
	    3);
	store_close(s);
}
END_TEST

/* The plan of one statement, all its rows' details joined. */
static void
plan(sqlite3 *db, const char *sql, char *out, size_t len)
{
	char q[1024];
	sqlite3_stmt *st;
	size_t n = 0;

	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	ck_assert_int_eq(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW && n + 1 < len)
		n += (size_t)snprintf(out + n, len - n, "%s;",
		    (const char *)sqlite3_column_text(st, 3));
	sqlite3_finalize(st);
}

START_TEST(checks_go_by_an_index)
{
	struct store *s = open_default(path);
	char buf[1024];
	sqlite3 *db;
	unsigned k;

	for (k = 0; k < NWIN; k++)
		put(s, k, 0, 1);
	store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(store_boot_fn(db), SQLITE_OK);
	exec_raw(db, "ANALYZE");
	plan(db, store_ws_sql[WS_HAVE_WINDOW], buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "windows_wall") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "SCAN") == NULL, "%s", buf);
	plan(db, store_ws_sql[WS_COVERED], buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "windows_roll") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "SCAN") == NULL, "%s", buf);
	sqlite3_close(db);
}
END_TEST

/* With foreign keys on, dropping the old windows table would delete
 * every window's rows in its child tables: the step refuses. */
START_TEST(v26_step_refuses_with_foreign_keys_on)
{
	sqlite3 *db;

	ck_assert_int_eq(store_create_version(old, 25, NULL), 0);
	ck_assert_int_eq(sqlite3_open(old, &db), SQLITE_OK);
	ck_assert_int_eq(store_boot_fn(db), SQLITE_OK);
	exec_raw(db, "PRAGMA foreign_keys = ON; BEGIN");
	ck_assert_int_ne(store_migrations[25].fn(db), SQLITE_OK);
	exec_raw(db, "ROLLBACK");
	exec_raw(db, "PRAGMA foreign_keys = OFF; BEGIN");
	ck_assert_int_eq(store_migrations[25].fn(db), SQLITE_OK);
	exec_raw(db, "COMMIT");
	sqlite3_close(db);
}
END_TEST

static Suite *
suite(void)
{
	Suite *su = suite_create("store_v26");
	TCase *tc = tcase_create("v26");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, v25_file_migrates_keeping_rows);
	tcase_add_test(tc, replays_stored_once);
	tcase_add_test(tc, checks_go_by_an_index);
	tcase_add_test(tc, v26_step_refuses_with_foreign_keys_on);
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
