/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store's clocks: ages within a boot come from CLOCK_BOOTTIME, windows
 * of earlier boots are judged by the wall clock only when it is believed,
 * and a wall clock that jumped far ahead deletes nothing until it is
 * confirmed (counted in the stats). Also: windows before 1970 are windows.
 *
 * The wall clock cannot be moved in CI, so "now" is injected through
 * store_maintain_at().
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define HOUR (3600 * SEC)
#define DAY (24 * HOUR)
#define YEAR (365 * DAY)
/* a wall-clock origin aligned on 600 s */
#define T0 (1699999800LL * SEC)
#define BOOT_A "aaaaaaaa-0000-4000-8000-000000000001" /* an earlier boot */
#define BOOT_B "bbbbbbbb-0000-4000-8000-000000000002" /* this boot */
#define NWIN 100

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("store-time", path, sizeof(path));
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_opts(const struct store_opts *o)
{
	struct store *s = NULL;

	ck_assert_int_eq(store_open(path, o, &s), 0);
	return s;
}

static long long
q_int(struct store *s, const char *sql)
{
	char buf[64];

	ck_assert_int_eq(store_exec(s, sql, buf, sizeof(buf)), 0);
	return strtoll(buf, NULL, 10);
}

/* A 10 s level-0 window of boot `boot` at boottime `boot_ns`, wall `wall`. */
static void
put(struct store *s, const char *boot, uint64_t seq, int64_t boot_ns,
    int64_t wall)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", boot);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = boot_ns - 5 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = boot_ns;
	w->boot_end_ns = boot_ns + 10 * SEC;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + 10 * SEC;
	w->samples = w->samples_valid = 10;
	w->all.samples = 10;
	w->all.wall_ns = 10 * SEC;
	w->all.d.user = seq;
	w->all.d.idle = 1000;
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

/*
 * Boot A: NWIN windows from T0 (boottime 100 s on). Boot B, this one, two
 * hours later: NWIN windows from T1 (boottime 50 s on), the last ending at
 * boottime 1050 s.
 */
#define T1 (T0 + 2 * HOUR)
#define B_END_BOOT (50 * SEC + NWIN * 10 * SEC)

static void
fill_two_boots(struct store *s)
{
	unsigned k;

	for (k = 0; k < NWIN; k++)
		put(s, BOOT_A, k, 100 * SEC + k * 10 * SEC, T0 + k * 10 * SEC);
	for (k = 0; k < NWIN; k++)
		put(s, BOOT_B, k, 50 * SEC + k * 10 * SEC, T1 + k * 10 * SEC);
}

static struct store_now
mknow(int64_t boot_ns, int64_t wall_ns, int sync)
{
	struct store_now n;

	memset(&n, 0, sizeof(n));
	n.boot_ns = boot_ns;
	n.wall_ns = wall_ns;
	snprintf(n.boot_id, sizeof(n.boot_id), "%s", BOOT_B);
	n.wall_sync = sync;
	return n;
}

/* The wall clock jumps 10 years ahead (boottime 10 s later): nothing is
 * deleted or rolled, the pass is counted, the windows the clock would
 * have deleted are counted; once the kernel says the clock is
 * synchronised, the earlier boot's windows go and this boot's stay. */
START_TEST(forward_jump_deletes_nothing)
{
	struct store_opts o;
	struct store_stats st;
	struct store_now now;
	struct store *s;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	s = open_opts(&o);
	fill_two_boots(s);
	now = mknow(B_END_BOOT + 10 * SEC,
	    T1 + NWIN * 10 * SEC + 10 * SEC + 10 * YEAR, 0);
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2 * NWIN);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " level > 0"),
	    0);
	store_get_stats(s, &st);
	ck_assert(st.clock_suspect);
	ck_assert(!st.clock_confirmed);
	ck_assert_int_ge(st.clock_ahead_ns, 10 * YEAR);
	ck_assert_uint_eq(st.clock_deferred, 1);
	ck_assert_uint_eq(st.clock_held, NWIN); /* boot A's, by the wall */
	ck_assert_uint_eq(st.deleted_age, 0);
	ck_assert_uint_eq(st.windows_rolled, 0);

	/* still unconfirmed a minute later: waits again, counted again */
	now.boot_ns += 60 * SEC;
	now.wall_ns += 60 * SEC;
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2 * NWIN);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.clock_deferred, 2);

	/* confirmed by the kernel: the earlier boot is judged by it; this
	 * boot's windows are minutes old by CLOCK_BOOTTIME and stay */
	now.wall_sync = 1;
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_A "')"),
	    0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_B "') AND level = 0"),
	    NWIN);
	store_get_stats(s, &st);
	ck_assert(st.clock_confirmed);
	ck_assert_uint_eq(st.clock_deferred, 2);
	ck_assert_uint_eq(st.clock_held, 0);
	ck_assert_uint_eq(st.deleted_age, NWIN);
	store_close(s);
}
END_TEST

/* The same jump, never confirmed by the kernel: confirmed once the clock
 * has run in step with boottime for clock_stable_s; a step restarts that
 * wait. Roll-ups of this boot go by boottime meanwhile. */
START_TEST(stable_clock_confirms)
{
	struct store_opts o;
	struct store_stats st;
	struct store_now now;
	struct store *s;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.clock_stable_s = 3600;
	o.rollup1_after_s = 1800;
	o.rollup2_after_s = 1800;
	s = open_opts(&o);
	fill_two_boots(s);
	now = mknow(B_END_BOOT + 10 * SEC,
	    T1 + NWIN * 10 * SEC + 10 * SEC + 10 * YEAR, -EPERM);
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	store_get_stats(s, &st);
	ck_assert(st.clock_suspect && !st.clock_confirmed);
	/* 40 min later the clock steps again: the wait starts over */
	now.boot_ns += 40 * 60 * SEC;
	now.wall_ns += 40 * 60 * SEC + HOUR;
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	store_get_stats(s, &st);
	ck_assert(!st.clock_confirmed);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_A "')"),
	    NWIN);
	/* this boot's windows are over 30 min old by boottime: rolled,
	 * whatever the wall clock says */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_B "') AND level = 0"),
	    0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_B "') AND level = 2"),
	    2);
	ck_assert_int_eq(q_int(s,
			     "SELECT sum(samples) FROM windows WHERE"
			     " boot = boot_key('" BOOT_B "')"),
	    10 * NWIN);
	/* ... and not the earlier boot's: the wall clock is not believed */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_A "') AND level = 0"),
	    NWIN);
	/* 59 min in step: not yet; one hour: confirmed */
	now.boot_ns += 59 * 60 * SEC;
	now.wall_ns += 59 * 60 * SEC + SEC; /* a slew, not a step */
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	store_get_stats(s, &st);
	ck_assert(!st.clock_confirmed);
	ck_assert_uint_eq(st.clock_deferred, 3);
	now.boot_ns += 60 * SEC;
	now.wall_ns += 60 * SEC;
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	store_get_stats(s, &st);
	ck_assert(st.clock_confirmed);
	ck_assert_uint_eq(st.clock_deferred, 3);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_A "')"),
	    0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_B "')"),
	    2);
	store_close(s);
}
END_TEST

/* Within a boot the wall clock does not decide: windows older than
 * retain_s by boottime go even when the wall clock stepped back and calls
 * them young; the earlier boot, two hours back by the wall, stays. */
START_TEST(boottime_ages_within_boot)
{
	struct store_opts o;
	struct store_stats st;
	struct store_now now;
	struct store *s;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	s = open_opts(&o);
	fill_two_boots(s);
	now = mknow(8 * DAY, T1 + NWIN * 10 * SEC + 20 * SEC, 0);
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	store_get_stats(s, &st);
	ck_assert_msg(!st.clock_suspect, "ahead %lld ns",
	    (long long)st.clock_ahead_ns);
	ck_assert_uint_eq(st.clock_deferred, 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_B "')"),
	    0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " boot = boot_key('" BOOT_A "')"),
	    NWIN);
	ck_assert_uint_eq(st.deleted_age, NWIN);
	store_close(s);
}
END_TEST

/* Started after three days off, nothing of this boot stored yet: the gap
 * is suspect, the earlier boot's windows wait; a synchronised clock ends
 * the wait. */
START_TEST(reboot_gap_waits)
{
	struct store_opts o;
	struct store_stats st;
	struct store_now now;
	struct store *s;
	unsigned k;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.retain_s = DAY / SEC;
	s = open_opts(&o);
	for (k = 0; k < NWIN; k++)
		put(s, BOOT_A, k, 100 * SEC + k * 10 * SEC, T0 + k * 10 * SEC);
	now = mknow(30 * SEC, T0 + 3 * DAY, 0);
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	store_get_stats(s, &st);
	ck_assert(st.clock_suspect);
	ck_assert_uint_eq(st.clock_held, NWIN);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), NWIN);
	now.wall_sync = 1;
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 0);
	/* one day off is not suspect */
	for (k = 0; k < NWIN; k++)
		put(s, BOOT_A, 1000 + k, 100 * SEC + k * 10 * SEC,
		    T0 + 3 * DAY + k * 10 * SEC);
	now = mknow(30 * SEC, T0 + 4 * DAY, 0);
	ck_assert_int_eq(store_maintain_at(s, &now), 0);
	store_get_stats(s, &st);
	ck_assert(!st.clock_suspect);
	store_close(s);
}
END_TEST

/* Windows before 1970 (a device that booted with its clock at 0) are
 * read back by ranges there, and buckets below 0 are as wide as any. */
START_TEST(windows_before_1970)
{
	struct store_opts o;
	struct window **v;
	struct store *s;
	size_t n, i;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	s = open_opts(&o);
	put(s, BOOT_B, 1, 10 * SEC, -20 * SEC);
	put(s, BOOT_B, 2, 20 * SEC, -10 * SEC);
	put(s, BOOT_B, 3, 30 * SEC, 0);
	put(s, BOOT_B, 4, 40 * SEC, 10 * SEC);
	ck_assert_int_eq(store_windows(s, -HOUR, -5 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0]->wall_start_ns, -20 * SEC);
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	/* 600 s buckets: [-600 s, 0) and [0, 600 s), two of them */
	ck_assert_int_eq(store_windows(s, VITALS_WALL_MIN, HOUR, 600, &v, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0]->samples, 20);
	ck_assert_uint_eq(v[1]->samples, 20);
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	/* roll-ups keep the same buckets */
	ck_assert_int_eq(store_maintain(s, 7 * DAY - HOUR), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE"
			     " level = 2"),
	    2);
	ck_assert_int_eq(q_int(s, "SELECT min(wall_start_ns) FROM windows"),
	    -20 * SEC);
	store_close(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("store_time");
	TCase *tc = tcase_create("clock");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, forward_jump_deletes_nothing);
	tcase_add_test(tc, stable_clock_confirms);
	tcase_add_test(tc, boottime_ages_within_boot);
	tcase_add_test(tc, reboot_gap_waits);
	tcase_add_test(tc, windows_before_1970);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
