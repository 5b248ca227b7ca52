/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of metrics.c: the CPU arithmetic every stored figure rests on.
 *
 * The cpu_times fixtures give each field its own power of two, so a sum
 * that takes a field it must not (guest, iowait, steal) or misses one it
 * must take lands on a different number and names the culprit.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

static const struct cpu_times bits = {
	.user = 1,
	.nice = 2,
	.system = 4,
	.idle = 8,
	.iowait = 16,
	.irq = 32,
	.softirq = 64,
	.steal = 128,
	.guest = 256,
	.guest_nice = 512,
};

/* Every field, in struct order, for loops over "each field in turn". */
static uint64_t *
field(struct cpu_times *t, unsigned i)
{
	uint64_t *f[] = { &t->user, &t->nice, &t->system, &t->idle, &t->iowait,
		&t->irq, &t->softirq, &t->steal, &t->guest, &t->guest_nice };

	ck_assert_uint_lt(i, sizeof(f) / sizeof(f[0]));
	return f[i];
}

#define NFIELDS 10

/* ------------------------------------------------------------ total/busy */

START_TEST(total_excludes_guest)
{
	/* user..steal = 1+2+4+8+16+32+64+128; guest (256) and guest_nice
	 * (512) are already inside user and nice. */
	ck_assert_uint_eq(cpu_times_total(&bits), 255);
}
END_TEST

START_TEST(busy_excludes_idle_iowait_steal_guest)
{
	/* user + nice + system + irq + softirq = 1+2+4+32+64 */
	ck_assert_uint_eq(cpu_times_busy(&bits), 103);
}
END_TEST

START_TEST(busy_iowait_steal_apart)
{
	/* A CPU that only waited on I/O, or only had its time stolen by the
	 * hypervisor, did no work of its own. */
	struct cpu_times io = { .iowait = 500 }, st = { .steal = 700 };

	ck_assert_uint_eq(cpu_times_busy(&io), 0);
	ck_assert_uint_eq(cpu_times_total(&io), 500);
	ck_assert_uint_eq(cpu_times_busy(&st), 0);
	ck_assert_uint_eq(cpu_times_total(&st), 700);
}
END_TEST

START_TEST(guest_only_adds_nothing)
{
	struct cpu_times g = { .guest = 1000, .guest_nice = 1000 };

	ck_assert_uint_eq(cpu_times_total(&g), 0);
	ck_assert_uint_eq(cpu_times_busy(&g), 0);
}
END_TEST

START_TEST(total_realistic)
{
	/* A real /proc/stat first line (4 CPUs, a VM host with guests). */
	struct cpu_times t = {
		.user = 1754361,
		.nice = 2345,
		.system = 512233,
		.idle = 98765432,
		.iowait = 43210,
		.irq = 0,
		.softirq = 12345,
		.steal = 999,
		.guest = 400000,
		.guest_nice = 2000,
	};

	ck_assert_uint_eq(cpu_times_total(&t),
	    1754361ULL + 2345 + 512233 + 98765432 + 43210 + 0 + 12345 + 999);
	ck_assert_uint_eq(cpu_times_busy(&t),
	    1754361ULL + 2345 + 512233 + 0 + 12345);
}
END_TEST

/* ------------------------------------------------------------ delta/add */

START_TEST(delta_fieldwise)
{
	struct cpu_times prev = bits, cur = bits, d;
	unsigned i;

	/* field i grows by 1000 * (i + 1): each delta is distinct */
	for (i = 0; i < NFIELDS; i++)
		*field(&cur, i) += 1000 * (i + 1);
	ck_assert_int_eq(cpu_times_delta(&prev, &cur, &d), 0);
	for (i = 0; i < NFIELDS; i++)
		ck_assert_uint_eq(*field(&d, i), 1000 * (i + 1));
}
END_TEST

START_TEST(delta_equal_is_zero)
{
	struct cpu_times d;
	unsigned i;

	memset(&d, 0xa5, sizeof(d));
	ck_assert_int_eq(cpu_times_delta(&bits, &bits, &d), 0);
	for (i = 0; i < NFIELDS; i++)
		ck_assert_uint_eq(*field(&d, i), 0);
}
END_TEST

/* Each field in turn goes back by one: the whole delta is refused. */
START_TEST(delta_regression_each_field)
{
	struct cpu_times prev, cur, d, poison;
	unsigned i;

	for (i = 0; i < NFIELDS; i++)
		*field(&prev, i) = 1000000 + i;
	cur = prev;
	for (i = 0; i < NFIELDS; i++)
		*field(&cur, i) += 50; /* every other field moved forward */
	*field(&cur, _i) = *field(&prev, _i) - 1;

	memset(&poison, 0x5a, sizeof(poison));
	d = poison;
	ck_assert_int_eq(cpu_times_delta(&prev, &cur, &d), -ERANGE);
	/* ret untouched: no partial result leaks out */
	ck_assert_mem_eq(&d, &poison, sizeof(d));
}
END_TEST

START_TEST(delta_iowait_nohz_regression)
{
	/* The real case: on NO_HZ kernels iowait of an idle CPU can read
	 * lower than before while idle grows. */
	struct cpu_times prev = { .user = 100, .idle = 5000, .iowait = 300 };
	struct cpu_times cur = { .user = 100, .idle = 5100, .iowait = 299 };
	struct cpu_times d = { .user = 42 };

	ck_assert_int_eq(cpu_times_delta(&prev, &cur, &d), -ERANGE);
	ck_assert_uint_eq(d.user, 42);
	ck_assert_uint_eq(d.idle, 0);
}
END_TEST

START_TEST(delta_large_values)
{
	/* Counters near 2^64 (long uptimes at high HZ): no overflow in Δ. */
	struct cpu_times prev = { .idle = UINT64_MAX - 10 };
	struct cpu_times cur = { .idle = UINT64_MAX };
	struct cpu_times d;

	ck_assert_int_eq(cpu_times_delta(&prev, &cur, &d), 0);
	ck_assert_uint_eq(d.idle, 10);
}
END_TEST

START_TEST(add_all_fields)
{
	struct cpu_times acc = bits, d;
	unsigned i;

	for (i = 0; i < NFIELDS; i++)
		*field(&d, i) = 3 * (i + 1);
	cpu_times_add(&acc, &d);
	cpu_times_add(&acc, &d);
	for (i = 0; i < NFIELDS; i++)
		ck_assert_uint_eq(*field(&acc, i), (1u << i) + 2 * 3 * (i + 1));
}
END_TEST

/* --------------------------------------------------------------- figures */

START_TEST(core_equiv_values)
{
	/* 150 ticks at 100 Hz = 1.5 s of CPU over 3 s of wall */
	ck_assert_double_eq(metric_core_equiv(150, 3 * NSEC_PER_SEC, 100), 0.5);
	/* 4 s of CPU in 2 s: two cores, over 100 % like top */
	ck_assert_double_eq(metric_core_equiv(400, 2 * NSEC_PER_SEC, 100), 2.0);
	/* the same ticks mean half as much CPU at 200 Hz */
	ck_assert_double_eq(metric_core_equiv(400, 2 * NSEC_PER_SEC, 200), 1.0);
	/* 250 ms of wall, 1000 Hz */
	ck_assert_double_eq(metric_core_equiv(125, 250 * NSEC_PER_MSEC, 1000),
	    0.5);
	ck_assert_double_eq(metric_core_equiv(0, NSEC_PER_SEC, 100), 0.0);
}
END_TEST

START_TEST(core_equiv_no_denominator)
{
	ck_assert_double_nan(metric_core_equiv(100, 0, 100));
	ck_assert_double_nan(metric_core_equiv(100, NSEC_PER_SEC, 0));
	ck_assert_double_nan(metric_core_equiv(0, 0, 100));
}
END_TEST

START_TEST(machine_share_values)
{
	ck_assert_double_eq(metric_machine_share(25, 100), 0.25);
	ck_assert_double_eq(metric_machine_share(800, 800), 1.0);
	ck_assert_double_eq(metric_machine_share(0, 800), 0.0);
	ck_assert_double_nan(metric_machine_share(25, 0));
	ck_assert_double_nan(metric_machine_share(0, 0));
}
END_TEST

START_TEST(normalised_values)
{
	/* 200 ticks of a task on a 4-CPU machine whose Δtotal was 800:
	 * 800 / 4 = 200 per CPU, so the task kept one CPU fully busy. */
	ck_assert_double_eq(metric_normalised(200, 800.0 / 4), 1.0);
	ck_assert_double_eq(metric_normalised(50, 200.0), 0.25);
	ck_assert_double_eq(metric_normalised(0, 200.0), 0.0);
	ck_assert_double_nan(metric_normalised(50, 0.0));
	ck_assert_double_nan(metric_normalised(50, -1.0));
}
END_TEST

/* The three figures name different things and must not be confused. */
START_TEST(figures_related)
{
	/* 4 CPUs over 2 s at 100 Hz: Δtotal 800. A task used 300 ticks. */
	double core = metric_core_equiv(300, 2 * NSEC_PER_SEC, 100);
	double share = metric_machine_share(300, 800);
	double norm = metric_normalised(300, 800.0 / 4);

	ck_assert_double_eq(core, 1.5);
	ck_assert_double_eq(share, 0.375);
	ck_assert_double_eq(norm, 1.5); /* = share × 4 CPUs */
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc;

	tc = tcase_create("cpu_times");
	tcase_add_test(tc, total_excludes_guest);
	tcase_add_test(tc, busy_excludes_idle_iowait_steal_guest);
	tcase_add_test(tc, busy_iowait_steal_apart);
	tcase_add_test(tc, guest_only_adds_nothing);
	tcase_add_test(tc, total_realistic);
	tcase_add_test(tc, delta_fieldwise);
	tcase_add_test(tc, delta_equal_is_zero);
	tcase_add_loop_test(tc, delta_regression_each_field, 0, NFIELDS);
	tcase_add_test(tc, delta_iowait_nohz_regression);
	tcase_add_test(tc, delta_large_values);
	tcase_add_test(tc, add_all_fields);
	suite_add_tcase(s, tc);

	tc = tcase_create("figures");
	tcase_add_test(tc, core_equiv_values);
	tcase_add_test(tc, core_equiv_no_denominator);
	tcase_add_test(tc, machine_share_values);
	tcase_add_test(tc, normalised_values);
	tcase_add_test(tc, figures_related);
	suite_add_tcase(s, tc);

	return tu_run(s);
}
