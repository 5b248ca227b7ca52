/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the store costs and holds (store/store_usage.c): the kernel's
 * write accounting parsed and turned into a rate per day, the history the
 * stored windows cover and how long the size bound holds at that density;
 * and, on the real /proc/self/io, that a store's writes show up; the
 * statements it holds: prepared at first use, a pass's finalized after it.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "store/store_int.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define T0 (1699999800LL * NSEC_PER_SEC)

/* /proc/<pid>/io as Linux 6.x prints it */
static const char io_text[] = "rchar: 123456\n"
			      "wchar: 654321\n"
			      "syscr: 100\n"
			      "syscw: 200\n"
			      "read_bytes: 4096\n"
			      "write_bytes: 1052672\n"
			      "cancelled_write_bytes: 4096\n";

START_TEST(test_io_parse)
{
	uint64_t v = 7;

	ck_assert_int_eq(store_io_parse(io_text, &v), 0);
	ck_assert_uint_eq(v, 1052672 - 4096);
	/* no write_bytes line (an unreadable or foreign file) */
	ck_assert_int_eq(store_io_parse("rchar: 1\nwchar: 2\n", &v), -EINVAL);
	ck_assert_uint_eq(v, 1052672 - 4096);
	ck_assert_int_eq(store_io_parse("", &v), -EINVAL);
	/* more taken back than charged: a torn read, not a negative */
	ck_assert_int_eq(store_io_parse("write_bytes: 10\n"
					"cancelled_write_bytes: 11\n",
			     &v),
	    -ERANGE);
	/* cancelled_write_bytes absent (older kernels): nothing taken back */
	ck_assert_int_eq(store_io_parse("write_bytes: 8192", &v), 0);
	ck_assert_uint_eq(v, 8192);
}
END_TEST

START_TEST(test_rate_per_day)
{
	struct store_usage u = { 0 };
	int64_t span;
	unsigned i;

	/* nothing yet, then one reading: no interval */
	ck_assert_uint_eq(store_usage_per_day(&u, &span), 0);
	ck_assert_int_eq(span, 0);
	store_usage_sample(&u, 1000 * SEC, 1 << 20);
	ck_assert_uint_eq(store_usage_per_day(&u, &span), 0);
	/* 1 MiB more after an hour, read every minute: 24 MiB per day */
	for (i = 1; i <= 60; i++)
		store_usage_sample(&u, (1000 + 60 * i) * SEC,
		    (1 << 20) + (uint64_t)i * (1 << 20) / 60);
	ck_assert_uint_eq(store_usage_per_day(&u, &span), 24ull << 20);
	ck_assert_int_eq(span, 3600 * SEC);
	/* readings closer than 15 min apart are not kept */
	ck_assert_uint_eq(u.n, 5);
	/* after two days at 2 MiB per hour, only the last 24 h count */
	for (i = 1; i <= 48 * 4; i++)
		store_usage_sample(&u, (4600 + 900 * (int64_t)i) * SEC,
		    (2 << 20) + (uint64_t)i * (512 << 10));
	ck_assert_uint_eq(store_usage_per_day(&u, &span), 48ull << 20);
	ck_assert_int_eq(span, 24 * 3600 * SEC);
	ck_assert_uint_eq(u.n, STORE_USAGE_PTS);
	/* a counter that went back starts the rate again */
	store_usage_sample(&u, 200000 * SEC, 5);
	ck_assert_uint_eq(store_usage_per_day(&u, &span), 0);
	ck_assert_uint_eq(u.n, 1);
}
END_TEST

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("usage", path, sizeof(path));
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct window *
mkwin(uint64_t seq, int64_t wall, int64_t len_s)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id),
	    "8c1e7a6c-3f9b-4c2e-9a47-0d5f1e2b3c4d");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + len_s * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + len_s * SEC;
	w->samples = w->samples_valid = 10;
	return w;
}

/* The bound's reach: history × max / (db bytes − free pages); returns
 * the free pages. */
static long long
check_holds(struct store *s, const struct store_stats *st, uint64_t max)
{
	char v[32];
	long long nfree, psz;
	int64_t used;

	ck_assert_int_eq(store_exec(s, "PRAGMA freelist_count", v, sizeof(v)),
	    0);
	nfree = atoll(v);
	ck_assert_int_eq(store_exec(s, "PRAGMA page_size", v, sizeof(v)), 0);
	psz = atoll(v);
	used = (int64_t)st->db_bytes - nfree * psz;
	ck_assert_int_gt(used, 0);
	ck_assert_int_eq(st->bound_holds_ns,
	    (int64_t)((long double)st->history_ns * max / used));
	return nfree;
}

/* History = Σ durations; the bound's reach = history × max / db bytes;
 * the accounting read from the configured file. */
START_TEST(test_store_history_and_bound)
{
	char io[PATH_MAX + 8];
	struct store_opts o;
	struct store_stats st;
	struct store *s = NULL;
	FILE *f;
	int i;

	snprintf(io, sizeof(io), "%s/io", dir);
	ck_assert_ptr_nonnull(f = fopen(io, "w"));
	fputs(io_text, f);
	fclose(f);
	store_opts_default(&o);
	o.io_path = io;
	o.retain_s = 0; /* nothing judged by age */
	o.rollup1_s = o.rollup2_s = 0;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	for (i = 0; i < 30; i++) {
		struct window *w = mkwin((uint64_t)i, T0 + i * 10 * SEC,
		    i == 29 ? 4 : 10);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 400 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.io_err, 0);
	/* the first reading is the base */
	ck_assert_uint_eq(st.io_written, 0);
	ck_assert_uint_eq(st.history_windows, 30);
	ck_assert_int_eq(st.history_ns, (29 * 10 + 4) * SEC);
	ck_assert_int_eq(st.history_wall_first_ns, T0);
	ck_assert_int_eq(st.history_wall_last_ns, T0 + (290 + 4) * SEC);
	ck_assert_uint_gt(st.db_bytes, 0);
	check_holds(s, &st, o.max_bytes);
	/* free pages (auto_vacuum NONE keeps them) hold no history */
	ck_assert_int_eq(store_exec(s,
			     "DELETE FROM windows WHERE id IN (SELECT id"
			     " FROM windows ORDER BY id LIMIT 20)",
			     NULL, 0),
	    0);
	ck_assert_int_eq(store_maintain(s, T0 + 430 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_int_gt(check_holds(s, &st, o.max_bytes), 0);
	/* written grows by what the file says */
	ck_assert_ptr_nonnull(f = fopen(io, "w"));
	fputs("write_bytes: 2101248\ncancelled_write_bytes: 4096\n", f);
	fclose(f);
	ck_assert_int_eq(store_maintain(s, T0 + 460 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.io_written, 2101248 - 1052672);
	/* an unreadable accounting is said, not zeroed into a rate */
	ck_assert_int_eq(unlink(io), 0);
	ck_assert_int_eq(store_maintain(s, T0 + 520 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.io_err, -ENOENT);
	ck_assert_uint_eq(st.io_written, 2101248 - 1052672);
	store_close(s);
}
END_TEST

static unsigned
stmts_open(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	unsigned n = 0;

	while ((st = sqlite3_next_stmt(db, st)) != NULL)
		n++;
	return n;
}

/*
 * Statements prepared at first use (store_core.c, store_stmt): after open
 * only the put's are held; a read and a pass prepare theirs and the pass
 * finalizes them again; the parts of a window that has none hold none.
 * One that does not prepare fails the step that uses it, with SQLite's
 * message.
 */
START_TEST(test_statements_at_first_use)
{
	struct store_opts o;
	struct store *s = NULL;
	struct window *back = NULL;
	sqlite3_stmt *bad = NULL;
	unsigned i, k, n_open, n_put;
	int64_t id = 0;
	int err;

	store_opts_default(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	n_open = stmts_open(s->db);
	ck_assert_ptr_null(s->ws[WS_DEL_AGE]);
	ck_assert_ptr_null(s->ws[WS_ROLL_SRC]);
	ck_assert_ptr_nonnull(s->ws[WS_INS_WINDOW]);
	for (i = 0; i < RS__MAX; i++)
		ck_assert_ptr_null(s->rs[i]);
	for (i = 0; i < WPART__MAX; i++)
		for (k = 0; k < STORE_PART_NSTMT; k++)
			ck_assert_ptr_null(s->part_st[i][k]);
	for (i = 0; i < 3; i++) {
		struct window *w = mkwin(i, T0 + (int64_t)i * 10 * SEC, 10);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	n_put = stmts_open(s->db);
	for (i = 0; i < WPART__MAX; i++)
		for (k = 0; k < STORE_PART_NSTMT; k++)
			ck_assert_ptr_null(s->part_st[i][k]);
	/* a read prepares what it reads, and reads the window back */
	ck_assert_int_eq(sqlite3_prepare_v2(s->db,
			     "SELECT min(id) FROM windows", -1, &bad, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(store_run_int(bad, &id), SQLITE_OK);
	sqlite3_finalize(bad);
	bad = NULL;
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(store_load(s, id, &back), 0);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(back->wall_start_ns, T0);
	window_free(back);
	ck_assert_ptr_nonnull(s->rs[RS_WINDOW]);
	ck_assert_uint_gt(stmts_open(s->db), n_put);
	/* a pass: its statements go after it, the put's stay */
	ck_assert_int_eq(store_maintain(s, T0 + 400 * SEC), 0);
	ck_assert_ptr_null(s->rs[RS_WINDOW]);
	ck_assert_ptr_null(s->ws[WS_DEL_AGE]);
	ck_assert_ptr_null(s->ws[WS_FREELIST]);
	ck_assert_ptr_nonnull(s->ws[WS_INS_WINDOW]);
	ck_assert_uint_le(stmts_open(s->db), n_put);
	ck_assert_uint_ge(n_put, n_open);
	/* and the next put and pass work as the first */
	{
		struct window *w = mkwin(3, T0 + 30 * SEC, 10);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 460 * SEC), 0);
	/* one that does not prepare: NULL, the step fails, the message is
	 * SQLite's */
	ck_assert_ptr_null(
	    store_stmt(s, &bad, "SELECT x FROM no_such_table_here"));
	ck_assert_int_ne(store_run(bad), SQLITE_OK);
	err = store_fail(s, store_run(bad), "test");
	ck_assert_int_lt(err, 0);
	ck_assert_ptr_nonnull(strstr(s->st.last_errmsg, "no_such_table"));
	store_close(s);
}
END_TEST

/* The real accounting: a store's commits (fsync'd WAL) are charged to
 * this process, so the figure moves. On tmpfs nothing reaches storage. */
START_TEST(test_real_proc_io)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s = NULL;
	struct statfs sf;
	int i;

	store_opts_default(&o);
	o.retain_s = 0;
	o.rollup1_s = o.rollup2_s = 0;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	ck_assert_int_eq(store_maintain(s, T0), 0);
	for (i = 0; i < 20; i++) {
		struct window *w = mkwin((uint64_t)i, T0 + i * 10 * SEC, 10);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 300 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.io_err, 0);
	ck_assert_int_eq(statfs(dir, &sf), 0);
	if (sf.f_type != 0x01021994) /* TMPFS_MAGIC */
		ck_assert_msg(st.io_written >= 20 * 4096,
		    "20 commits charged %llu bytes",
		    (unsigned long long)st.io_written);
	store_close(s);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("store_usage");
	TCase *tc = tcase_create("usage");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_io_parse);
	tcase_add_test(tc, test_rate_per_day);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store_history_and_bound);
	tcase_add_test(tc, test_real_proc_io);
	tcase_add_test(tc, test_statements_at_first_use);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
