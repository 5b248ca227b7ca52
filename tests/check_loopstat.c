/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sampling timer's lateness split (core/loopstat.c, loopstat_late):
 * the part the loop was held by a callback, the part its thread waited
 * for a CPU, and the window's sums of both (collector_note_tick).
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "vitalsd.h"
#include "core/loopstat.h"
#include "core/util.h"
#include "window/collector.h"

#define MS (int64_t) NSEC_PER_MSEC

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* A tick due before a callback that ran on after it: that part is held,
 * and sleeping is not waiting for a CPU. */
START_TEST(held_by_callback)
{
	uint64_t held, runq;
	int64_t due, t0, now;
	struct loopstat ls;

	loopstat_take(&ls);
	loopstat_tick_end();
	due = clock_ns(CLOCK_MONOTONIC);
	t0 = loopstat_begin();
	sleep_ms(20);
	loopstat_end("slow", t0);
	sleep_ms(5);
	now = clock_ns(CLOCK_MONOTONIC);
	(void)loopstat_late(due, now, &held, &runq);
	ck_assert_uint_ge(held, 19 * MS);
	ck_assert_uint_le(held + runq, (uint64_t)(now - due));
	/* the 5 ms after the callback were slept, not waited: at most the
	 * machine's own scheduling noise */
	ck_assert_uint_le(held, (uint64_t)(now - due - 4 * MS));
}
END_TEST

/* A tick on time has no lateness to split, whatever came before. */
START_TEST(on_time)
{
	uint64_t held = 1, runq = 1;
	int64_t t0, now;

	t0 = loopstat_begin();
	sleep_ms(2);
	loopstat_end("short", t0);
	now = clock_ns(CLOCK_MONOTONIC);
	(void)loopstat_late(now + 10 * MS, now, &held, &runq);
	ck_assert_uint_eq(held, 0);
	ck_assert_uint_eq(runq, 0);
	/* a callback that ended before the tick fell due holds nothing */
	(void)loopstat_late(now, now + 3 * MS, &held, &runq);
	ck_assert_uint_eq(held, 0);
	ck_assert_uint_le(runq, 3 * MS);
}
END_TEST

static atomic_bool spin_stop;

static void *
spinner(void *arg)
{
	(void)arg;
	while (!atomic_load(&spin_stop))
		;
	return NULL;
}

/*
 * Runnable but not running: this thread in SCHED_IDLE on one CPU with a
 * normal thread spinning on the same CPU gets the CPU only now and then;
 * over 60 ms of wall time it waits most of it.
 */
START_TEST(waiting_for_cpu)
{
	struct sched_param sp = { 0 };
	uint64_t held, runq;
	int64_t t0, due, now;
	pthread_t th;
	pthread_attr_t at;
	cpu_set_t set;
	int cpu;

	if ((cpu = sched_getcpu()) < 0)
		cpu = 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	t0 = loopstat_begin();
	loopstat_end("mark", t0);
	loopstat_tick_end();
	due = clock_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(pthread_attr_init(&at), 0);
	ck_assert_int_eq(pthread_attr_setaffinity_np(&at, sizeof(set), &set),
	    0);
	atomic_store(&spin_stop, false);
	ck_assert_int_eq(pthread_create(&th, &at, spinner, NULL), 0);
	pthread_attr_destroy(&at); /* its CPU set is on the heap */
	ck_assert_int_eq(sched_setscheduler(0, SCHED_IDLE, &sp), 0);
	/* busy, never sleeping: every moment off the CPU is run-queue wait */
	while (clock_ns(CLOCK_MONOTONIC) - due < 60 * MS)
		;
	now = clock_ns(CLOCK_MONOTONIC);
	if (!loopstat_late(due, now, &held, &runq)) {
		atomic_store(&spin_stop, true);
		pthread_join(th, NULL);
		return; /* no schedstat in this kernel: nothing to compare */
	}
	atomic_store(&spin_stop, true);
	pthread_join(th, NULL);
	ck_assert_uint_eq(held, 0);
	ck_assert_uint_le(runq, (uint64_t)(now - due));
	/* SCHED_IDLE against a normal spinner: well under half the CPU */
	ck_assert_uint_ge(runq, (uint64_t)(now - due) / 2);
}
END_TEST

/* The window sums both parts, and keeps the latest tick's. */
START_TEST(window_sums)
{
	struct collector_opts o = { 0 };
	const struct window *w;
	struct collector *c;
	struct clocks now;

	o.proc_root = "/proc";
	o.sys_root = "/sys";
	o.interval_ms = 1000;
	o.window_s = 3600;
	o.ring = 2;
	o.threads = THREADS_NONE;
	ck_assert_int_eq(collector_new(&o, &c), 0);
	collector_clocks(&now);
	ck_assert_int_ge(collector_sample(c, &now, false), 0);
	ck_assert_ptr_nonnull(w = collector_open(c));
	collector_note_tick(c, 3 * MS, 1 * MS, 2 * MS);
	collector_note_tick(c, 9 * MS, 0, 7 * MS);
	collector_note_tick(c, 4 * MS, 4 * MS, 0);
	collector_note_tick(c, -1 * MS, 0, 0); /* early: 0 late */
	ck_assert_uint_eq(w->health.tick_late_ns_max, 9 * MS);
	ck_assert_uint_eq(w->health.tick_late_ns_sum, 16 * MS);
	ck_assert_uint_eq(w->health.tick_late_held_ns_sum, 5 * MS);
	ck_assert_uint_eq(w->health.tick_late_runq_ns_sum, 9 * MS);
	ck_assert_uint_eq(w->health.tick_late_max_held_ns, 0);
	ck_assert_uint_eq(w->health.tick_late_max_runq_ns, 7 * MS);
	ck_assert(!w->health.tick_late_runq_absent);
	/* a tick without schedstat: the window's CPU wait is unknown */
	collector_note_tick(c, 2 * MS, 0, UINT64_MAX);
	ck_assert(w->health.tick_late_runq_absent);
	ck_assert_uint_eq(w->health.tick_late_runq_ns_sum, 9 * MS);
	ck_assert_uint_eq(w->health.tick_late_ns_sum, 18 * MS);
	collector_free(c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("loopstat");
	TCase *tc = tcase_create("late");

	tcase_add_test(tc, held_by_callback);
	tcase_add_test(tc, on_time);
	tcase_add_test(tc, window_sums);
	suite_add_tcase(s, tc);
	/* each test in its own process (Check forks): the thread left in
	 * SCHED_IDLE on one CPU goes with it */
	tc = tcase_create("runq");
	tcase_add_test(tc, waiting_for_cpu);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
