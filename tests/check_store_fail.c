/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the window store's failure handling: corrupt, truncated and
 * foreign files moved aside, recovery while open and in the writer, and the
 * mapping of SQLite's failures (full, busy) to -errno and store states; one
 * handle shared by two threads.
 *
 * Every test works in its own temporary directory (tests/lib/store_fix.c).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_fix.h"
#include "testutil.h"
#include "vitalsd.h"

/* ------------------------------------------------------------- corruption */

enum damage {
	DMG_GARBAGE,	    /* the whole file overwritten with random bytes */
	DMG_TRUNCATED,	    /* cut to half its length */
	DMG_TEXT,	    /* not SQLite at all */
	DMG_PAGES,	    /* valid header, garbage inside the b-trees */
	DMG_FOREIGN_ID,	    /* another application's database */
	DMG_FOREIGN_TABLES, /* SQLite without our mark, with tables */
	DMG_FUTURE,	    /* ours, from a newer schema than this build */
	DMG_OUR_MARK_NO_TABLES, /* our mark but the tables are gone */
	DMG__MAX
};

static void
make_db_with_data(void)
{
	struct store *s = sf_open_default();
	unsigned k;

	for (k = 0; k < 30; k++)
		sf_put(s, sf_full_window(k, T0 + k * 10 * SEC, 40, 10));
	store_close(s);
}

static void
overwrite(off_t off, size_t len, unsigned seed)
{
	int fd = open(sf_path, O_WRONLY);
	char *buf = malloc(len);
	size_t i;

	ck_assert_int_ge(fd, 0);
	srand(seed);
	for (i = 0; i < len; i++)
		buf[i] = (char)rand();
	ck_assert_int_eq(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
	free(buf);
}

static void
damage(enum damage d)
{
	struct store *s;

	switch (d) {
	case DMG_GARBAGE:
		overwrite(0, sf_fsize(sf_path), 1);
		break;
	case DMG_TRUNCATED:
		ck_assert_int_eq(truncate(sf_path,
				     (off_t)sf_fsize(sf_path) / 2),
		    0);
		break;
	case DMG_TEXT:
		ck_assert_int_eq(tu_writes(sf_path, "not a database\n"), 0);
		break;
	case DMG_PAGES:
		/* keep page 1 (header and schema), wreck the rest */
		overwrite(4096, sf_fsize(sf_path) - 4096, 2);
		break;
	case DMG_FOREIGN_ID:
		s = sf_open_default();
		ck_assert_int_eq(store_exec(s, "PRAGMA application_id = 1234",
				     NULL, 0),
		    0);
		store_close(s);
		break;
	case DMG_FOREIGN_TABLES:
		ck_assert_int_eq(unlink(sf_path), 0);
		ck_assert_int_eq(
		    store_create_version(sf_path, 1,
			"PRAGMA application_id = 0; PRAGMA user_version = 0;"),
		    0);
		break;
	case DMG_FUTURE:
		s = sf_open_default();
		ck_assert_int_eq(store_exec(s, "PRAGMA user_version = 99", NULL,
				     0),
		    0);
		store_close(s);
		break;
	case DMG_OUR_MARK_NO_TABLES:
		s = sf_open_default();
		ck_assert_int_eq(store_exec(s, "DROP TABLE main.window_tasks",
				     NULL, 0),
		    0);
		store_close(s);
		break;
	default:
		ck_abort();
	}
}

START_TEST(corrupt_moved_aside)
{
	enum damage d = (enum damage)_i;
	char wal[PATH_MAX + 8], moved_wal[300];
	struct store_stats st;
	struct store *s;
	struct window **v;
	size_t n;

	make_db_with_data();
	damage(d);
	/* a WAL beside a wrecked file is evidence too */
	snprintf(wal, sizeof(wal), "%s-wal", sf_path);
	if (d == DMG_GARBAGE)
		ck_assert_int_eq(tu_writes(wal, "stale wal"), 0);

	s = sf_open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert_msg(strncmp(st.corrupt_path, sf_path, strlen(sf_path)) == 0 &&
		strncmp(st.corrupt_path + strlen(sf_path), ".corrupt-", 9) == 0,
	    "moved to %s", st.corrupt_path);
	ck_assert(sf_exists(st.corrupt_path));
	if (d == DMG_GARBAGE) {
		snprintf(moved_wal, sizeof(moved_wal), "%s-wal",
		    st.corrupt_path);
		ck_assert(sf_exists(moved_wal));
	}
	/* a fresh, working database in its place */
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 0);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	sf_put(s, sf_full_window(1, T0, 2, 1));
	ck_assert_int_eq(store_windows(s, T0, T0 + SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	sf_free_windows(v, n);
	store_close(s);
	/* and the fresh one is kept on the next open */
	s = sf_open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 1);
	store_close(s);
}
END_TEST

/*
 * The file goes bad under an open store: the failure says "corrupt"
 * (-EUCLEAN, not a retryable -EIO), and store_recover moves it aside as
 * store_open would and goes on with a fresh database in the same handle.
 */
START_TEST(corrupt_while_open_recovers)
{
	struct store_stats st;
	struct store *s = sf_open_default();
	struct window **v;
	struct window *w;
	unsigned k;
	size_t n;
	int r = 0;

	for (k = 0; k < 30; k++)
		sf_put(s, sf_full_window(k, T0 + k * 10 * SEC, 40, 10));
	/* everything in the main file, nothing of it in memory */
	ck_assert_int_eq(store_exec(s, "PRAGMA wal_checkpoint(TRUNCATE)", NULL,
			     0),
	    0);
	ck_assert_uint_gt(sf_fsize(sf_path), 8 * 4096);
	overwrite(4096, sf_fsize(sf_path) - 4096, 3);
	ck_assert_int_eq(store_exec(s, "PRAGMA shrink_memory", NULL, 0), 0);
	for (k = 30; k < 40 && r == 0; k++) {
		w = sf_full_window(k, T0 + k * 10 * SEC, 40, 10);
		r = store_put(s, w);
		window_free(w);
	}
	ck_assert_int_eq(r, -EUCLEAN);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.last_err, -EUCLEAN);
	ck_assert_int_eq(st.state, STORE_IO_ERROR);
	ck_assert_uint_eq(st.corrupt_moved, 0);

	ck_assert_int_eq(store_recover(s), 0);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert_msg(strncmp(st.corrupt_path, sf_path, strlen(sf_path)) == 0 &&
		strncmp(st.corrupt_path + strlen(sf_path), ".corrupt-", 9) == 0,
	    "moved to %s", st.corrupt_path);
	ck_assert(sf_exists(st.corrupt_path));
	ck_assert(sf_exists(sf_path));
	/* fresh and ours, and the handle works for writes and reads */
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 0);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	sf_put(s, sf_full_window(100, T0 + 1000 * SEC, 5, 2));
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(store_windows(s, T0, T0 + 2000 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->nprocs, 5);
	sf_free_windows(v, n);
	store_close(s);
	/* the fresh file is kept on the next open */
	s = sf_open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 1);
	store_close(s);
}
END_TEST

/* The writer thread recovers on its own and loses no window to it. */
START_TEST(writer_recovers_corrupt_store)
{
	struct store *s = sf_open_default();
	struct store_stats st;
	struct writer *wr;
	uint64_t dropped;
	unsigned k, queued;
	int i;

	for (k = 0; k < 30; k++)
		sf_put(s, sf_full_window(k, T0 + k * 10 * SEC, 40, 10));
	ck_assert_int_eq(store_exec(s, "PRAGMA wal_checkpoint(TRUNCATE)", NULL,
			     0),
	    0);
	overwrite(4096, sf_fsize(sf_path) - 4096, 3);
	ck_assert_int_eq(store_exec(s, "PRAGMA shrink_memory", NULL, 0), 0);
	ck_assert_int_eq(writer_start(s, 16, &wr), 0);
	for (k = 30; k < 35; k++) {
		struct window *w = sf_full_window(k, T0 + k * 10 * SEC, 40, 10);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		window_free(w);
	}
	for (i = 0; i < 1000; i++) {
		writer_get(wr, &st, &queued, &dropped);
		if (queued == 0)
			break;
		usleep(10000);
	}
	writer_stop(wr, 1000);
	ck_assert_uint_eq(queued, 0);
	ck_assert_uint_eq(dropped, 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert(sf_exists(st.corrupt_path));
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 5);
	store_close(s);
}
END_TEST

START_TEST(empty_file_is_initialised)
{
	struct store *s;
	struct store_stats st;

	ck_assert_int_eq(tu_writes(sf_path, ""), 0);
	s = sf_open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	store_close(s);
}
END_TEST

START_TEST(open_errors)
{
	struct store *s = (struct store *)&s; /* must stay untouched */
	struct store_opts o;
	char p[PATH_MAX + 16];

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	snprintf(p, sizeof(p), "%s/missing/vitals.db", sf_dir);
	ck_assert_int_eq(store_open(p, &o, &s), -ENOENT);
	ck_assert_ptr_eq(s, (struct store *)&s);
	/* a directory where the file should be is not "corrupt" */
	ck_assert_int_eq(mkdir(sf_path, 0755), 0);
	ck_assert_int_lt(store_open(sf_path, &o, &s), 0);
	ck_assert_ptr_eq(s, (struct store *)&s);
	ck_assert_int_eq(rmdir(sf_path), 0);
	ck_assert_int_eq(store_put(NULL, NULL), -EBADF);
	ck_assert_int_eq(store_maintain(NULL, 0), -EBADF);
}
END_TEST

/* ------------------------------------------------------ failure mapping */

START_TEST(full_maps_to_enospc)
{
	struct store *s = sf_open_default();
	struct store_stats st;
	struct window *w, **v;
	char sql[64];
	size_t n;
	unsigned k;

	for (k = 0; k < 3; k++)
		sf_put(s, sf_full_window(k, T0 + k * 10 * SEC, 5, 0));
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
	    sf_q_int(s, "PRAGMA page_count"));
	ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
	w = sf_full_window(3, T0 + 30 * SEC, 800, 200);
	ck_assert_int_eq(store_put(s, w), -ENOSPC);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_FULL);
	ck_assert_int_eq(st.last_err, -ENOSPC);
	ck_assert_uint_eq(st.write_failures, 1);
	ck_assert_uint_eq(st.windows_written, 3);
	ck_assert_msg(strlen(st.last_errmsg) > 0, "no message");
	/* nothing half-written; the earlier windows are intact */
	ck_assert_int_eq(store_windows(s, T0, T0 + 3600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(v[2]->nprocs, 5);
	sf_free_windows(v, n);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM window_tasks"), 3);
	/* space comes back: the same window goes in, state is ok again */
	ck_assert_int_eq(store_exec(s, "PRAGMA max_page_count = 1000000", NULL,
			     0),
	    0);
	ck_assert_int_eq(store_put(s, w), 0);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.windows_written, 4);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 4);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(busy_maps_to_ebusy)
{
	struct store_opts o;
	struct store *a, *b;
	struct store_stats st;
	struct window *w;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.busy_timeout_ms = 50;
	a = sf_open_opts(&o);
	b = sf_open_opts(&o);
	ck_assert_int_eq(store_exec(a, "BEGIN IMMEDIATE", NULL, 0), 0);
	w = sf_full_window(1, T0, 3, 0);
	ck_assert_int_eq(store_put(b, w), -EBUSY);
	store_get_stats(b, &st);
	ck_assert_int_eq(st.state, STORE_OK); /* transient, not an outage */
	ck_assert_int_eq(st.last_err, -EBUSY);
	ck_assert_int_eq(store_exec(a, "ROLLBACK", NULL, 0), 0);
	ck_assert_int_eq(store_put(b, w), 0);
	window_free(w);
	store_close(a);
	store_close(b);
}
END_TEST

/* ----------------------------------------------------------------- threads */

static void *
writer_main(void *arg)
{
	struct store *s = arg;
	unsigned k;

	for (k = 0; k < 60; k++) {
		struct window *w = sf_full_window(k, T0 + k * 10 * SEC, 30, 10);

		if (store_put(s, w) != 0)
			return (void *)1;
		window_free(w);
	}
	return NULL;
}

/* One handle shared by a writer thread and a reader (the daemon's shape). */
START_TEST(shared_handle_two_threads)
{
	struct store *s = sf_open_default();
	struct store_stats st;
	struct window_task *t;
	struct window **v;
	pthread_t th;
	void *res;
	size_t n;
	int i;

	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, s), 0);
	for (i = 0; i < 200; i++) {
		ck_assert_int_eq(store_top(s, T0, T0 + 3600 * SEC, false,
				     METRIC_CPU, 5, &t, &n),
		    0);
		ck_assert_uint_le(n, 5);
		free(t);
		ck_assert_int_eq(store_windows(s, T0, T0 + 3600 * SEC, 60, &v,
				     &n),
		    0);
		ck_assert_uint_le(n, 10);
		sf_free_windows(v, n);
		store_get_stats(s, &st);
	}
	ck_assert_int_eq(pthread_join(th, &res), 0);
	ck_assert_ptr_null(res);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 60);
	store_close(s);
}
END_TEST

static Suite *
store_fail_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc;

	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, sf_setup, sf_teardown);
	tcase_add_loop_test(tc, corrupt_moved_aside, 0, DMG__MAX);
	tcase_add_test(tc, corrupt_while_open_recovers);
	tcase_add_test(tc, writer_recovers_corrupt_store);
	tcase_add_test(tc, empty_file_is_initialised);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, full_maps_to_enospc);
	tcase_add_test(tc, busy_maps_to_ebusy);
	tcase_add_test(tc, shared_handle_two_threads);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(store_fail_suite());
}
