/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of window.c: window lifetime, per-CPU growth, task lists,
 * gauges and the enum names that appear in dumps and stored rows.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

/* A CPU the window has never heard of is unknown, never 0 kHz. */
static void
assert_cpu_unknown(const struct window_cpu *c)
{
	ck_assert_int_eq(c->max_khz, -1);
	ck_assert_int_eq(c->capacity, -1);
	ck_assert_uint_eq(c->samples, 0);
	ck_assert_uint_eq(c->wall_ns, 0);
	ck_assert_uint_eq(c->cur_khz.n, 0);
	ck_assert_uint_eq(c->freq_ratio.n, 0);
	ck_assert(!c->online_end);
	ck_assert_uint_eq(cpu_times_total(&c->d), 0);
}

/* ---------------------------------------------------------------- window */

START_TEST(new_fields)
{
	struct window *w = window_new(7, 4);
	unsigned i;

	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->seq, 7);
	ck_assert_uint_eq(w->cpu_span, 4);
	ck_assert_ptr_nonnull(w->cpu);
	for (i = 0; i < 4; i++)
		assert_cpu_unknown(&w->cpu[i]);
	ck_assert_uint_eq(w->samples, 0);
	ck_assert_uint_eq(w->samples_valid, 0);
	for (i = 0; i < INV__MAX; i++) {
		ck_assert_uint_eq(w->inv_samples[i], 0);
		ck_assert_uint_eq(w->inv_deltas[i], 0);
	}
	ck_assert_uint_eq(w->nprocs, 0);
	ck_assert_uint_eq(w->nthreads, 0);
	for (i = 0; i < PSI__MAX; i++)
		ck_assert(!w->psi[i].available);
	ck_assert_uint_eq(w->online_cpus.n, 0);
	ck_assert_ptr_null(window_free(w));
}
END_TEST

START_TEST(new_no_cpus)
{
	/* The first window opens before /proc/stat was ever read. */
	struct window *w = window_new(1, 0);

	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->cpu_span, 0);
	window_free(w);
}
END_TEST

START_TEST(new_too_many_cpus)
{
	ck_assert_ptr_null(window_new(1, VITALS_CPU_MAX + 1));
}
END_TEST

START_TEST(free_null)
{
	ck_assert_ptr_null(window_free(NULL));
}
END_TEST

START_TEST(grow_keeps_old_new_unknown)
{
	struct window *w = window_new(1, 2);
	unsigned i;

	ck_assert_ptr_nonnull(w);
	/* CPU 1 has been measured before the growth */
	w->cpu[1].max_khz = 2400000;
	w->cpu[1].capacity = 1024;
	w->cpu[1].samples = 5;
	w->cpu[1].d.user = 77;
	gauge_add(&w->cpu[1].cur_khz, 1800000);

	ck_assert_int_eq(window_grow_cpus(w, 8), 0);
	ck_assert_uint_eq(w->cpu_span, 8);
	ck_assert_int_eq(w->cpu[1].max_khz, 2400000);
	ck_assert_int_eq(w->cpu[1].capacity, 1024);
	ck_assert_uint_eq(w->cpu[1].samples, 5);
	ck_assert_uint_eq(w->cpu[1].d.user, 77);
	ck_assert_uint_eq(w->cpu[1].cur_khz.n, 1);
	assert_cpu_unknown(&w->cpu[0]);
	for (i = 2; i < 8; i++)
		assert_cpu_unknown(&w->cpu[i]);
	window_free(w);
}
END_TEST

START_TEST(grow_smaller_is_noop)
{
	/* A CPU going offline at the top must not drop its window data. */
	struct window *w = window_new(1, 6);

	ck_assert_ptr_nonnull(w);
	w->cpu[5].samples = 3;
	ck_assert_int_eq(window_grow_cpus(w, 2), 0);
	ck_assert_uint_eq(w->cpu_span, 6);
	ck_assert_uint_eq(w->cpu[5].samples, 3);
	ck_assert_int_eq(window_grow_cpus(w, 6), 0);
	ck_assert_uint_eq(w->cpu_span, 6);
	ck_assert_int_eq(window_grow_cpus(w, 0), 0);
	ck_assert_uint_eq(w->cpu_span, 6);
	window_free(w);
}
END_TEST

START_TEST(grow_limit)
{
	struct window *w = window_new(1, 1);

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(window_grow_cpus(w, VITALS_CPU_MAX + 1), -E2BIG);
	ck_assert_uint_eq(w->cpu_span, 1); /* unchanged on failure */
	ck_assert_int_eq(window_grow_cpus(w, VITALS_CPU_MAX), 0);
	ck_assert_uint_eq(w->cpu_span, VITALS_CPU_MAX);
	assert_cpu_unknown(&w->cpu[VITALS_CPU_MAX - 1]);
	ck_assert_int_eq(window_grow_cpus(w, VITALS_CPU_MAX + 100), -E2BIG);
	ck_assert_uint_eq(w->cpu_span, VITALS_CPU_MAX);
	window_free(w);
}
END_TEST

/* A busy phone has thousands of threads active inside one window. */
START_TEST(add_task_thousands)
{
	struct window *w = window_new(1, 0);
	struct window_task t;
	unsigned i;

	ck_assert_ptr_nonnull(w);
	for (i = 0; i < 5000; i++) {
		memset(&t, 0, sizeof(t));
		t.id = (int32_t)(10000 + i);
		t.tgid = (int32_t)(10000 + i / 10);
		t.starttime = 1000 + i;
		t.d_utime = i;
		t.d_stime = 2 * i;
		snprintf(t.comm, sizeof(t.comm), "t%u", i);
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
		if (i % 10 == 0) {
			t.id = t.tgid;
			ck_assert_int_eq(window_add_task(w, false, &t), 0);
		}
	}
	ck_assert_uint_eq(w->nthreads, 5000);
	ck_assert_uint_eq(w->nprocs, 500);
	ck_assert_uint_ge(w->threads_cap, w->nthreads);
	ck_assert_uint_ge(w->procs_cap, w->nprocs);
	/* order and contents survive every realloc */
	for (i = 0; i < 5000; i++) {
		char want[VITALS_COMM_LEN];

		snprintf(want, sizeof(want), "t%u", i);
		ck_assert_int_eq(w->threads[i].id, (int32_t)(10000 + i));
		ck_assert_uint_eq(w->threads[i].starttime, 1000 + i);
		ck_assert_uint_eq(w->threads[i].d_utime, i);
		ck_assert_uint_eq(w->threads[i].d_stime, 2 * i);
		ck_assert_str_eq(w->threads[i].comm, want);
	}
	for (i = 0; i < 500; i++) {
		ck_assert_int_eq(w->procs[i].id, (int32_t)(10000 + i));
		ck_assert_uint_eq(w->procs[i].d_utime, 10 * i);
	}
	window_free(w);
}
END_TEST

/*
 * A closed window's arrays cut to their count (window_shrink, at publish):
 * window_bytes falls by the spare the doubling left, every row is kept,
 * and the window still takes more rows after (a part's late add).
 */
START_TEST(shrink_to_count)
{
	struct window *w = window_new(1, 0);
	struct window_task t;
	size_t before;
	unsigned i;

	ck_assert_ptr_nonnull(w);
	for (i = 0; i < 1100; i++) { /* caps grow to 2048 and 128 */
		memset(&t, 0, sizeof(t));
		t.id = (int32_t)(100 + i);
		t.d_utime = i;
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
		if (i % 11 == 0)
			ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	ck_assert_uint_gt(w->threads_cap, w->nthreads);
	ck_assert_uint_gt(w->procs_cap, w->nprocs);
	before = window_bytes(w);
	window_shrink(w);
	ck_assert_uint_eq(w->threads_cap, 1100);
	ck_assert_uint_eq(w->procs_cap, 100);
	ck_assert_uint_eq(before - window_bytes(w),
	    (2048 - 1100 + 128 - 100) * sizeof(struct window_task));
	for (i = 0; i < 1100; i++) {
		ck_assert_int_eq(w->threads[i].id, (int32_t)(100 + i));
		ck_assert_uint_eq(w->threads[i].d_utime, i);
	}
	ck_assert_int_eq(w->procs[99].id, 100 + 99 * 11);
	/* full now: the next add grows it again */
	ck_assert_int_eq(window_add_task(w, true, &t), 0);
	ck_assert_uint_eq(w->nthreads, 1101);
	ck_assert_uint_ge(w->threads_cap, 1101);
	ck_assert_int_eq(w->threads[1100].id, t.id);
	/* an empty window: nothing to cut, nothing freed */
	window_free(w);
	w = window_new(1, 0);
	window_shrink(w);
	ck_assert_uint_eq(w->nprocs + w->nthreads, 0);
	window_free(w);
}
END_TEST

/* The task is copied: the caller may reuse its struct at once. */
START_TEST(add_task_copies)
{
	struct window *w = window_new(1, 0);
	struct window_task t = { .id = 42, .d_majflt = 9, .exited = true };

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	t.id = 43;
	t.d_majflt = 0;
	ck_assert_int_eq(w->procs[0].id, 42);
	ck_assert_uint_eq(w->procs[0].d_majflt, 9);
	ck_assert(w->procs[0].exited);
	ck_assert_uint_eq(w->nthreads, 0);
	window_free(w);
}
END_TEST

/* ---------------------------------------------------------------- gauges */

START_TEST(gauge_basic)
{
	struct gauge g = { 0 };

	gauge_add(&g, 3.0);
	gauge_add(&g, 1.0);
	gauge_add(&g, 2.0);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_double_eq(g.min, 1.0);
	ck_assert_double_eq(g.max, 3.0);
	ck_assert_double_eq(g.sum, 6.0);
	ck_assert_double_eq(g.last, 2.0);
	ck_assert_double_eq(gauge_avg(&g), 2.0);
}
END_TEST

START_TEST(gauge_first_value_sets_min_max)
{
	/* A zeroed gauge's min/max of 0 must not win against real values. */
	struct gauge pos = { 0 }, neg = { 0 };

	gauge_add(&pos, 5.0);
	gauge_add(&pos, 7.0);
	ck_assert_double_eq(pos.min, 5.0);
	ck_assert_double_eq(pos.max, 7.0);
	gauge_add(&neg, -5.0);
	gauge_add(&neg, -7.0);
	ck_assert_double_eq(neg.min, -7.0);
	ck_assert_double_eq(neg.max, -5.0);
	ck_assert_double_eq(gauge_avg(&neg), -6.0);
}
END_TEST

START_TEST(gauge_empty_avg_nan)
{
	struct gauge g = { 0 };

	ck_assert_double_nan(gauge_avg(&g));
	gauge_add(&g, 0.0);
	/* one reading of zero is a reading: 0, not "unknown" */
	ck_assert_double_eq(gauge_avg(&g), 0.0);
}
END_TEST

START_TEST(gauge_merge_values)
{
	struct gauge a = { 0 }, b = { 0 };

	gauge_add(&a, 4.0);
	gauge_add(&a, 6.0);
	gauge_add(&b, 1.0);
	gauge_add(&b, 9.0);
	gauge_add(&b, 5.0);
	gauge_merge(&a, &b);
	ck_assert_uint_eq(a.n, 5);
	ck_assert_double_eq(a.min, 1.0);
	ck_assert_double_eq(a.max, 9.0);
	ck_assert_double_eq(a.sum, 25.0);
	ck_assert_double_eq(gauge_avg(&a), 5.0);
	ck_assert_double_eq(a.last, 5.0); /* the later gauge's last */
}
END_TEST

START_TEST(gauge_merge_empty)
{
	struct gauge a = { 0 }, empty = { 0 }, b = { 0 };

	/* empty into empty stays empty */
	gauge_merge(&a, &empty);
	ck_assert_uint_eq(a.n, 0);
	ck_assert_double_nan(gauge_avg(&a));

	/* into an empty one: a copy, with min/max not polluted by zeros */
	gauge_add(&b, 10.0);
	gauge_add(&b, 20.0);
	gauge_merge(&a, &b);
	ck_assert_uint_eq(a.n, 2);
	ck_assert_double_eq(a.min, 10.0);
	ck_assert_double_eq(a.max, 20.0);
	ck_assert_double_eq(a.last, 20.0);
	ck_assert_double_eq(gauge_avg(&a), 15.0);

	/* an empty later gauge changes nothing, not even last */
	gauge_merge(&a, &empty);
	ck_assert_uint_eq(a.n, 2);
	ck_assert_double_eq(a.min, 10.0);
	ck_assert_double_eq(a.last, 20.0);
}
END_TEST

/* ----------------------------------------------------------------- names */

/* Names are identifiers in dumps and stored rows: fixed, distinct. */
START_TEST(names_invalid)
{
	static const char *const want[INV__MAX] = {
		[INV_SLEPT] = "slept",
		[INV_NO_ADVANCE] = "no_advance",
		[INV_REGRESSION] = "regression",
		[INV_READ_FAILED] = "read_failed",
		[INV_PARSE] = "parse",
		[INV_VANISHED] = "vanished",
		[INV_IDENTITY] = "identity",
		[INV_HOTPLUG] = "hotplug",
	};
	unsigned i;

	for (i = 0; i < INV__MAX; i++)
		ck_assert_str_eq(invalid_name(i), want[i]);
	ck_assert_str_eq(invalid_name(INV__MAX), "?");
	ck_assert_str_eq(invalid_name((enum vitals_invalid) - 1), "?");
}
END_TEST

START_TEST(names_coll)
{
	static const char *const want[COLL__MAX] = {
		[COLL_STAT] = "stat",
		[COLL_LOADAVG] = "loadavg",
		[COLL_PSI] = "psi",
		[COLL_VMSTAT] = "vmstat",
		[COLL_MEMINFO] = "meminfo",
		[COLL_CPUFREQ] = "cpufreq",
		[COLL_PROCS] = "procs",
	};
	unsigned i;

	for (i = 0; i < COLL__MAX; i++)
		ck_assert_str_eq(coll_name(i), want[i]);
	ck_assert_str_eq(coll_name(COLL__MAX), "?");
}
END_TEST

START_TEST(names_psi)
{
	ck_assert_str_eq(psi_res_name(PSI_CPU), "cpu");
	ck_assert_str_eq(psi_res_name(PSI_MEMORY), "memory");
	ck_assert_str_eq(psi_res_name(PSI_IO), "io");
	ck_assert_str_eq(psi_res_name(PSI__MAX), "?");
}
END_TEST

/* No two names of one enum may collide, whatever they are. */
START_TEST(names_distinct)
{
	unsigned i, j;

	for (i = 0; i < INV__MAX; i++)
		for (j = i + 1; j < INV__MAX; j++)
			ck_assert_str_ne(invalid_name(i), invalid_name(j));
	for (i = 0; i < COLL__MAX; i++)
		for (j = i + 1; j < COLL__MAX; j++)
			ck_assert_str_ne(coll_name(i), coll_name(j));
	for (i = 0; i < PSI__MAX; i++)
		for (j = i + 1; j < PSI__MAX; j++)
			ck_assert_str_ne(psi_res_name(i), psi_res_name(j));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("window");
	TCase *tc;

	tc = tcase_create("window");
	tcase_add_test(tc, new_fields);
	tcase_add_test(tc, new_no_cpus);
	tcase_add_test(tc, new_too_many_cpus);
	tcase_add_test(tc, free_null);
	tcase_add_test(tc, grow_keeps_old_new_unknown);
	tcase_add_test(tc, grow_smaller_is_noop);
	tcase_add_test(tc, grow_limit);
	tcase_add_test(tc, add_task_thousands);
	tcase_add_test(tc, add_task_copies);
	tcase_add_test(tc, shrink_to_count);
	suite_add_tcase(s, tc);

	tc = tcase_create("gauge");
	tcase_add_test(tc, gauge_basic);
	tcase_add_test(tc, gauge_first_value_sets_min_max);
	tcase_add_test(tc, gauge_empty_avg_nan);
	tcase_add_test(tc, gauge_merge_values);
	tcase_add_test(tc, gauge_merge_empty);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_test(tc, names_invalid);
	tcase_add_test(tc, names_coll);
	tcase_add_test(tc, names_psi);
	tcase_add_test(tc, names_distinct);
	suite_add_tcase(s, tc);

	return tu_run(s);
}
