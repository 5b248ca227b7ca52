/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instances without an index on their identity (schema v25,
 * store/store_inst.c): the writer finds them in a cache a scan of the
 * table fills, so a task met again after a reopen, after its cache
 * outgrew its bound, or in a spool keeps its one row and id; readers that
 * look an instance up by pid still find it.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store_int.h"
#include "store_fix.h"
#include "testutil.h"
#include "vitalsd.h"

static char *dir;
static char path[PATH_MAX], spool[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("inst", path, sizeof(path));
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
	store_inst_cache_max = 262144;
}

static void
teardown(void)
{
	store_inst_cache_max = 262144;
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_at(bool with_spool)
{
	return sf_open_spool(path, with_spool ? spool : NULL, 3600);
}

/* Window seq with processes pid0 .. pid0 + n - 1, each 10 ticks + seq. */
static void
put(struct store *s, uint64_t seq, int32_t pid0, int n)
{
	struct window *w = sf_mkwin_boot(seq, "boot-a");
	struct window_task t;
	int i;

	for (i = 0; i < n; i++) {
		memset(&t, 0, sizeof(t));
		t.id = t.tgid = pid0 + i;
		t.starttime = 7000 + (uint64_t)(pid0 + i);
		snprintf(t.comm, sizeof(t.comm), "p%d", pid0 + i);
		window_task_set_namef(&t, "proc%d", pid0 + i);
		t.d_utime = 10 + seq;
		t.samples = 10;
		t.wall_ns = 10 * SEC;
		t.total_ticks = 2000;
		t.norm_ticks = 1000;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

static long long
q(struct store *s, const char *sql)
{
	char buf[64];

	ck_assert_int_eq(store_exec(s, sql, buf, sizeof(buf)), 0);
	return atoll(buf);
}

#define INSTANCES(s) q((s), "SELECT count(*) FROM instance")
#define IDENTITIES(s)                                                     \
	q((s),                                                            \
	    "SELECT count(*) FROM (SELECT DISTINCT thread, id, starttime" \
	    " FROM instance)")

/* The sum of pid's d_utime over its history, by the reader's lookup. */
static uint64_t
history_utime(struct store *s, int32_t pid)
{
	struct store_hist *h;
	uint64_t sum = 0;
	size_t n, i;

	ck_assert_int_eq(store_history(s, false, pid, 0, T0, T0 + 86400 * SEC,
			     &h, &n),
	    0);
	for (i = 0; i < n; i++)
		sum += h[i].t.d_utime;
	free(h);
	return sum;
}

START_TEST(no_identity_index)
{
	struct store *s = open_at(false);

	put(s, 1, 100, 3);
	/* the rowid is the only key: no UNIQUE index, no other index */
	ck_assert_int_eq(q(s,
			     "SELECT count(*) FROM pragma_index_list("
			     "'instance')"),
	    0);
	ck_assert_int_eq(INSTANCES(s), 3);
	store_close(s);
}
END_TEST

/* A reopened handle loads the cache by a scan: the same tasks again are
 * the same rows, a new one a new row, and readers find each by pid. */
START_TEST(reopen_finds_instances)
{
	struct store *s = open_at(false);
	long long iid;

	put(s, 1, 100, 3);
	iid = q(s, "SELECT iid FROM instance WHERE id = 101");
	store_close(s);
	s = open_at(false);
	put(s, 2, 100, 4); /* 100..102 again, 103 new */
	ck_assert_int_eq(INSTANCES(s), 4);
	ck_assert_int_eq(IDENTITIES(s), 4);
	ck_assert_int_eq(q(s, "SELECT iid FROM instance WHERE id = 101"), iid);
	ck_assert_uint_eq(history_utime(s, 101), 11 + 12);
	ck_assert_uint_eq(history_utime(s, 103), 12);
	store_close(s);
}
END_TEST

/* Past its bound the cache is never whole again: a miss is looked up by
 * a scan of the table, and still finds the row it has. */
START_TEST(cache_past_bound)
{
	struct store *s = open_at(false);

	put(s, 1, 100, 6);
	store_close(s);
	store_inst_cache_max = 4;
	s = open_at(false);
	put(s, 2, 100, 6);
	put(s, 3, 102, 6); /* 102..105 known, 106, 107 new */
	ck_assert_int_eq(INSTANCES(s), 8);
	ck_assert_int_eq(IDENTITIES(s), 8);
	ck_assert_uint_eq(history_utime(s, 104), 11 + 12 + 13);
	ck_assert(store_inst_cache_bounded(s));
	store_close(s);
}
END_TEST

/* Prunes that leave the table under half the bound make the cache whole
 * again (a miss is no longer a scan for the life of the handle). */
START_TEST(bound_lifted_by_prune)
{
	struct store *s;
	uint64_t n = 0;

	store_inst_cache_max = 8;
	s = open_at(false);
	put(s, 1, 100, 10); /* 10 instances: past the bound */
	ck_assert(store_inst_cache_bounded(s));
	put(s, 2 * 8640, 100, 2); /* two days on (until_ns: a day grid) */
	/* window 1 goes: 102..109 end with it, 100, 101 live on */
	ck_assert_int_eq(store_exec(s,
			     "DELETE FROM windows WHERE id ="
			     " (SELECT min(id) FROM windows)",
			     NULL, 0),
	    0);
	ck_assert_int_eq(store_inst_prune(s, &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert(!store_inst_cache_bounded(s));
	put(s, 2 * 8640 + 1, 100, 3); /* 100, 101 known, 102 new again */
	ck_assert_int_eq(INSTANCES(s), 3);
	ck_assert_int_eq(IDENTITIES(s), 3);
	store_close(s);
}
END_TEST

/* Instances whose until_ns is the day's end d. */
static long long
until_count(struct store *s, long long d)
{
	char sql[96];

	snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM instance WHERE until_ns = %lld", d);
	return q(s, sql);
}

/* Past a day's end the first instance met raises every one met in the
 * day that ended (one pass over the cache, each leaf written once), not
 * one row per instance as each comes back, those met early in the day
 * too (up to 4 Dec 2026 its last hour alone); one not met in that day
 * keeps its day. */
START_TEST(day_end_raises_all)
{
	const long long day = 86400LL * SEC;
	struct store *s = open_at(false);
	long long d0;

	/* 5,600 s before a day's end (T0 is 6,600 s before one): 300 */
	put(s, 100, 300, 1);
	/* 2,600 s before it: 100..102 */
	put(s, 400, 100, 3);
	d0 = q(s, "SELECT max(until_ns) FROM instance");
	ck_assert_int_eq(until_count(s, d0), 4);
	/* past the day's end: 100 alone, the four raised */
	put(s, 700, 100, 1);
	ck_assert_int_eq(q(s, "SELECT until_ns FROM instance WHERE id = 100"),
	    d0 + day);
	ck_assert_int_eq(until_count(s, d0 + day), 4);
	/* two days on: only those met in the day before go on (100 with
	 * 101, which set it off; 200 is new) */
	put(s, 9340, 200, 1);
	put(s, 9341, 101, 1);
	ck_assert_int_eq(until_count(s, d0 + 2 * day), 3);
	ck_assert_int_eq(q(s, "SELECT until_ns FROM instance WHERE id = 100"),
	    d0 + 2 * day);
	ck_assert_int_eq(until_count(s, d0 + day), 2); /* 102 and 300 */
	/* after a reopen the cache agrees with the rows */
	store_close(s);
	s = open_at(false);
	put(s, 9342, 100, 3);
	ck_assert_int_eq(until_count(s, d0 + 2 * day), 4);
	ck_assert_int_eq(INSTANCES(s), 5);
	store_close(s);
}
END_TEST

/* Every day's end raises its last hour at once, not only the first the
 * handle meets: the instance that sets a raise off is one it raises, and
 * its new until_ns kept as the day's end last raised made every later
 * day's end raise its instances one by one as each came back (on
 * store_bench 3,758 single raises after day 2's end, each a leaf of
 * instance rewritten and journaled). */
START_TEST(second_day_end_raises_all)
{
	const long long day = 86400LL * SEC;
	struct store *s = open_at(false);
	long long d1;

	/* T0 is 6,600 s before a day's end (D1); D2 is a day later */
	put(s, 400, 100, 3); /* D1's last hour: 100..102 */
	d1 = q(s, "SELECT max(until_ns) FROM instance");
	ck_assert_int_eq(until_count(s, d1), 3);
	put(s, 700, 100, 1); /* past D1: the three to D2 */
	ck_assert_int_eq(until_count(s, d1 + day), 3);
	put(s, 9000, 100, 3); /* D2's last hour: all three again */
	ck_assert_int_eq(until_count(s, d1 + day), 3);
	put(s, 9310, 100, 1); /* past D2: 100 sets it off, 101, 102 too */
	ck_assert_int_eq(until_count(s, d1 + 2 * day), 3);
	ck_assert_int_eq(INSTANCES(s), 3);
	/* a third day's end alike, after a reopen (seen_ns starts over:
	 * 101 and 102 are met in D3's last hour by this handle) */
	store_close(s);
	s = open_at(false);
	put(s, 17640, 100, 3); /* D3's last hour */
	put(s, 17950, 102, 1); /* past D3: 102 sets it off */
	ck_assert_int_eq(until_count(s, d1 + 3 * day), 3);
	store_close(s);
}
END_TEST

/* A prune takes the pruned rows' entries out of the cache and keeps the
 * rest: a survivor met again is its row, a pruned task a new one. */
START_TEST(prune_keeps_cache)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	long long iid102;

	store_opts_default(&o);
	o.rollup_batch_s = 0;
	o.retain_s = 3600;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	put(s, 1, 100, 3);    /* 100..102 */
	put(s, 9400, 102, 2); /* 26 h on: past a second day's end, so
			       * no day's-end raise takes 100, 101 on */
	iid102 = q(s, "SELECT iid FROM instance WHERE id = 102");
	ck_assert_int_eq(store_maintain(s, T0 + 94010 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.deleted_age, 1);
	/* 100 and 101 named only the deleted window; 102's row lives to
	 * its day's end like 103's */
	ck_assert_uint_eq(st.instances_pruned, 2);
	ck_assert_int_eq(INSTANCES(s), 2);
	put(s, 9401, 100, 4); /* 100, 101 anew; 102, 103 again */
	ck_assert_int_eq(INSTANCES(s), 4);
	ck_assert_int_eq(IDENTITIES(s), 4);
	ck_assert_int_eq(q(s, "SELECT iid FROM instance WHERE id = 102"),
	    iid102);
	ck_assert_int_gt(q(s, "SELECT iid FROM instance WHERE id = 100"),
	    q(s, "SELECT iid FROM instance WHERE id = 103"));
	store_close(s);
}
END_TEST

/* A killed run's spool holds instances the next runs never wrote: once
 * they have moved, their tasks are found, not written again. */
START_TEST(leftover_spool_instances)
{
	struct store *s;
	int status;
	pid_t pid;

	s = open_at(true);
	put(s, 1, 100, 2);
	store_close(s);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		s = open_at(true);
		put(s, 2, 200, 2);
		put(s, 3, 100, 3); /* 102 new */
		_exit(0);	   /* no close, no move */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* a run without the spool loads its cache from the main file */
	s = open_at(false);
	put(s, 4, 101, 1);
	store_close(s);
	/* the spool again: windows 2 and 3 move, then their tasks return */
	s = open_at(true);
	put(s, 5, 200, 2);
	put(s, 6, 100, 3);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(q(s, "SELECT count(*) FROM windows"), 6);
	ck_assert_int_eq(INSTANCES(s), 5);
	ck_assert_int_eq(IDENTITIES(s), 5);
	ck_assert_uint_eq(history_utime(s, 201), 12 + 15);
	ck_assert_uint_eq(history_utime(s, 101), 11 + 13 + 14 + 16);
	ck_assert_uint_eq(history_utime(s, 102), 13 + 16);
	store_close(s);
}
END_TEST

/* With a whole cache the spool is not scanned for a new instance (it
 * holds only what the cache wrote); after a rollback it is, until the
 * move. */
START_TEST(spool_not_scanned)
{
	struct store *s = open_at(true);
	uint64_t f0;

	put(s, 1, 100, 5);
	f0 = store_inst_finds();
	put(s, 2, 200, 5); /* five new, the spool holding five */
	put(s, 3, 100, 3); /* known */
	ck_assert_uint_eq(store_inst_finds(), f0);
	store_inst_forget(s);
	put(s, 4, 300, 2); /* rows no cache saw may wait in the spool */
	ck_assert_uint_gt(store_inst_finds(), f0);
	ck_assert_int_eq(store_flush(s), 0);
	f0 = store_inst_finds();
	put(s, 5, 400, 2);
	ck_assert_uint_eq(store_inst_finds(), f0);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(INSTANCES(s), 14);
	ck_assert_int_eq(IDENTITIES(s), 14);
	store_close(s);
}
END_TEST

/* A rollback (a move that failed, a spool's write undone) empties the
 * main store's cache while the spool holds committed instance rows: the
 * cache loaded again before they move must not call their tasks new
 * after the move (one row an identity). */
START_TEST(forget_then_move)
{
	struct store *s = open_at(true);

	put(s, 1, 100, 2);
	store_inst_forget(s); /* what store_rollback does */
	put(s, 2, 100, 1);    /* loads the cache: the main file is empty */
	ck_assert_int_eq(store_flush(s), 0);
	put(s, 3, 101, 1); /* met first since the move */
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(INSTANCES(s), 2);
	ck_assert_int_eq(IDENTITIES(s), 2);
	ck_assert_uint_eq(history_utime(s, 101), 11 + 13);
	store_close(s);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("store_inst");
	TCase *tc = tcase_create("inst");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, no_identity_index);
	tcase_add_test(tc, reopen_finds_instances);
	tcase_add_test(tc, cache_past_bound);
	tcase_add_test(tc, leftover_spool_instances);
	tcase_add_test(tc, day_end_raises_all);
	tcase_add_test(tc, second_day_end_raises_all);
	tcase_add_test(tc, prune_keeps_cache);
	tcase_add_test(tc, forget_then_move);
	tcase_add_test(tc, spool_not_scanned);
	tcase_add_test(tc, bound_lifted_by_prune);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(suite());
}
