/* SPDX-License-Identifier: Apache-2.0 */
/* The syscall latency keys (config/config_syscalls.c): defaults, names on
 * this ABI, ranges, the ring buffer's power of two, and that a refused
 * value changes nothing. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "core/sysnames.h"
#include "syscalls/sc_collect.h"

static int
nr(const char *name)
{
	return sysnames_nr(sysnames_native(), name);
}

START_TEST(test_defaults)
{
	struct sc_config c;
	struct config cfg;

	sc_config_init(&c);
	ck_assert(!c.on);
	ck_assert_uint_eq(c.floor_us, 0);
	ck_assert_uint_eq(c.slow_ms, 50);
	ck_assert_uint_eq(c.top, 32);
	ck_assert_uint_eq(c.slow_max, 64);
	ck_assert_uint_eq(c.rb_kib, 64);
	ck_assert(sc_config_traced(&c, (uint32_t)nr("read")));
	ck_assert(sc_config_traced(&c, (uint32_t)nr("fsync")));
	ck_assert(sc_config_traced(&c, (uint32_t)nr("clock_nanosleep")));
	ck_assert(!sc_config_traced(&c, (uint32_t)nr("lseek")));
	ck_assert(!sc_config_traced(&c, 5000));
	/* through config.c's routing */
	config_init(&cfg);
	ck_assert(!cfg.syscalls.on);
	ck_assert_int_eq(config_set(&cfg, "syscall_trace", "on"), 0);
	ck_assert(cfg.syscalls.on);
	ck_assert_int_eq(config_set(&cfg, "syscall_slow_ms", "7"), 0);
	ck_assert_uint_eq(cfg.syscalls.slow_ms, 7);
	ck_assert_int_lt(config_set(&cfg, "syscall_bogus", "1"), 0);
	config_release(&cfg);
}
END_TEST

START_TEST(test_set)
{
	struct sc_config c;
	uint8_t before[sizeof(c.set)];

	sc_config_init(&c);
	ck_assert_int_eq(sc_config_set(&c, "syscalls", "lseek, write"), 0);
	ck_assert(sc_config_traced(&c, (uint32_t)nr("lseek")));
	ck_assert(sc_config_traced(&c, (uint32_t)nr("write")));
	ck_assert(!sc_config_traced(&c, (uint32_t)nr("read")));
	memcpy(before, c.set, sizeof(before));
	ck_assert_int_eq(sc_config_set(&c, "syscalls", "write,nosuchcall"),
	    -EINVAL);
	ck_assert_int_eq(sc_config_set(&c, "syscalls", ""), -EINVAL);
	ck_assert_int_eq(sc_config_set(&c, "syscalls", " , "), -EINVAL);
	ck_assert(!memcmp(before, c.set, sizeof(before)));
}
END_TEST

START_TEST(test_ranges)
{
	struct sc_config c;

	sc_config_init(&c);
	ck_assert_int_lt(sc_config_set(&c, "syscall_trace", "yes"), 0);
	ck_assert_int_eq(sc_config_set(&c, "syscall_rb_kib", "4"), 0);
	ck_assert_uint_eq(c.rb_kib, 4);
	ck_assert_int_eq(sc_config_set(&c, "syscall_rb_kib", "256"), 0);
	ck_assert_int_lt(sc_config_set(&c, "syscall_rb_kib", "96"), 0);
	ck_assert_int_lt(sc_config_set(&c, "syscall_rb_kib", "2"), 0);
	ck_assert_uint_eq(c.rb_kib, 256);
	ck_assert_int_lt(sc_config_set(&c, "syscall_top", "0"), 0);
	ck_assert_int_eq(sc_config_set(&c, "syscall_top", "5"), 0);
	ck_assert_uint_eq(c.top, 5);
	ck_assert_int_eq(sc_config_set(&c, "syscall_floor_us", "10"), 0);
	ck_assert_uint_eq(c.floor_us, 10);
	ck_assert_int_lt(sc_config_set(&c, "syscall_floor_us", "-1"), 0);
	ck_assert_int_eq(sc_config_set(&c, "syscall_slow_max", "0"), 0);
	ck_assert_int_eq(sc_config_set(&c, "nosuch", "0"), -ENOENT);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sc_config");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_set);
	tcase_add_test(tc, test_ranges);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
