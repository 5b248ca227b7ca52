/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ftrace reader's timed drain after a sample (ftrace_after_sample):
 * while samples come within its period the reader's own timer never fires
 * (one wake-up of the loop a second, not two); without them it does. Root
 * and tracefs: an instance of its own.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "testutil.h"
#include "vitalsd.h"
#include "core/loopstat.h"

#define TRACEFS "/sys/kernel/tracing"

static char inst[64];

static void
setup(void)
{
	struct stat st;

	if (stat(TRACEFS "/instances", &st) < 0)
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	ck_assert_int_eq(stat(TRACEFS "/instances", &st), 0);
	snprintf(inst, sizeof(inst), "vitals_test_tick_%d", (int)getpid());
}

static void
teardown(void)
{
	ftrace_instance_remove(NULL, inst);
}

/* The loop for ms; every step_ms a "sample" (0: none). Returns the
 * longest time between two samples, ms (a stalled machine's steps run
 * long). */
static int64_t
run(struct event_base *base, struct ftrace *ft, unsigned ms, unsigned step_ms)
{
	int64_t last = clock_ns(CLOCK_MONOTONIC) / 1000000, gap = 0;
	unsigned t;

	for (t = 0; t < ms; t += step_ms ? step_ms : ms) {
		unsigned d = step_ms ? step_ms : ms;
		struct timeval tv = { d / 1000, (long)(d % 1000) * 1000 };

		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
		if (step_ms) {
			int64_t now = clock_ns(CLOCK_MONOTONIC) / 1000000;

			ftrace_after_sample(ft);
			if (now - last > gap)
				gap = now - last;
			last = now;
		}
	}
	return gap;
}

START_TEST(test_drain_after_sample)
{
	struct ftrace_opts o = {
		.instance = inst,
		.buffer_kb = 1024,
		.tick_ms = 300,
		.max_pages = 64,
		.wake_percent = 90,
	};
	struct event_base *base = event_base_new();
	struct ftrace *ft = NULL;
	struct loopstat ls;
	unsigned state, tries;
	int64_t gap = 0;
	char why[512];

	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(event_base_priority_init(base, 3), 0);
	ck_assert_msg(ftrace_open(base, &o, &ft, &state, why, sizeof(why)) == 0,
	    "ftrace_open: %s", why);
	/* samples every 200 ms, the period 300: each drains (over half the
	 * period since the last) and pushes the timer on. A step the machine
	 * stalled past the period (beside a build) proves nothing: the
	 * phase again, three times at most. */
	for (tries = 0; tries < 3; tries++) {
		loopstat_take(&ls);
		gap = run(base, ft, 1600, 200);
		loopstat_take(&ls);
		if (gap < 280)
			break;
		fprintf(stderr, "a step of %lld ms: again\n", (long long)gap);
	}
	ck_assert_int_lt(gap, 280);
	ck_assert_msg(strcmp(ls.what, "ftrace tick") != 0,
	    "the reader's own timer fired between samples");
	/* no samples: the own timer drains, ~5 times in 1.6 s */
	run(base, ft, 1600, 0);
	loopstat_take(&ls);
	ck_assert_str_eq(ls.what, "ftrace tick");
	ftrace_free(ft);
	event_base_free(base);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ftrace_tick");
	TCase *tc = tcase_create("tick");

	if (!tu_need_root("an ftrace instance"))
		return 77;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_drain_after_sample);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
