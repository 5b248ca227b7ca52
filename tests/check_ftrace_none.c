/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon/trace/ftrace_none.c (ftrace built out, as Android.bp builds it) against
 * the real ftrace.c: the same state and event names, which are protocol
 * strings, and an open that says ftrace is off for want of tracefs. The
 * stub is compiled in here under other names, beside the real library.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#define ftrace_state_name none_state_name
#define ftrace_ev_name none_ev_name
#define ftrace_open none_open
#define ftrace_tracing_dir none_tracing_dir
#define ftrace_free none_free
#define ftrace_finish none_finish
#define ftrace_drain none_drain
#define ftrace_window none_window
#define ftrace_set_gpu_mem_cb none_set_gpu_mem_cb
#define ftrace_instance_remove none_instance_remove
#define ftrace_captures_atrace none_captures_atrace
#define ftrace_built none_built
#define ftrace_bytes none_bytes
#define ftrace_buffer_bytes none_buffer_bytes
#define ftrace_after_sample none_after_sample
#include "../daemon/trace/ftrace_none.c"
#undef ftrace_state_name
#undef ftrace_ev_name
#undef ftrace_tracing_dir

#include "testutil.h"

/* the real ones (vitalsd.h was read under the names above) */
const char *ftrace_state_name(unsigned st);
const char *ftrace_ev_name(unsigned ev);
int ftrace_tracing_dir(const char *tracefs, const char *sys_root, char *buf,
    size_t sz);

START_TEST(test_names_match)
{
	unsigned i;

	for (i = 0; i <= FTRACE__MAX; i++)
		ck_assert_str_eq(none_state_name(i), ftrace_state_name(i));
	for (i = 0; i <= FEV__MAX; i++)
		ck_assert_str_eq(none_ev_name(i), ftrace_ev_name(i));
}
END_TEST

START_TEST(test_off_without_tracefs)
{
	struct ftrace_opts o = { .instance = "vitalsd" };
	struct window_trace wt;
	struct ftrace *ft = (struct ftrace *)&o;
	char why[64], a[64], b[64];
	unsigned st = FTRACE_ON;

	ck_assert_int_eq(none_open(NULL, &o, &ft, &st, why, sizeof(why)),
	    -EOPNOTSUPP);
	ck_assert_ptr_null(ft);
	ck_assert_uint_eq(st, FTRACE_OFF_NO_TRACEFS);
	ck_assert_str_eq(why, "built without libtracefs");
	memset(&wt, 0, sizeof(wt));
	ck_assert_int_eq(none_window(NULL, &wt), 0);
	ck_assert_uint_eq(wt.state, FTRACE_OFF_NO_TRACEFS);
	ck_assert_ptr_null(none_free(NULL));
	ck_assert(!none_captures_atrace(NULL));
	ck_assert(!none_built()); /* vitalsd --version says "ftrace: off" */
	ck_assert_uint_eq(none_bytes(NULL), 0); /* holds nothing */
	ck_assert_uint_eq(none_buffer_bytes(NULL), 0);
	/* the helper's instance directory: as ftrace.c for a given mount */
	ck_assert_int_eq(none_tracing_dir("/t", "/sys", a, sizeof(a)), 0);
	ck_assert_int_eq(ftrace_tracing_dir("/t", "/sys", b, sizeof(b)), 0);
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(none_tracing_dir(NULL, "/sys", a, sizeof(a)), 0);
	ck_assert_str_eq(a, "/sys/kernel/tracing");
	{
		volatile size_t small = 4; /* not folded into a warning */

		ck_assert_int_eq(none_tracing_dir(NULL, "/sys", a, small),
		    -ENAMETOOLONG);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ftrace_none");
	TCase *tc = tcase_create("stub");

	tcase_add_test(tc, test_names_match);
	tcase_add_test(tc, test_off_without_tracefs);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
