/* SPDX-License-Identifier: Apache-2.0 */
/*
 * System properties without a device: the host double keeps the property
 * service's rules (init's IsLegalPropertyName / IsLegalPropertyValue and
 * PropertySet: name charset, value < 92 bytes except ro.*, UTF-8, ro.*
 * write-once, ctl.* refused), replaces values atomically, and a host
 * without a double has no properties and says so.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sysprop.h"
#include "testutil.h"

static char *dir;
static struct sysprop *sp;

static void
setup(void)
{
	dir = tu_mkdtemp("sysprop");
	ck_assert_ptr_nonnull(dir);
	ck_assert_int_eq(sysprop_open(dir, &sp), 0);
	ck_assert_str_eq(sysprop_backend(sp), "dir");
}

static void
teardown(void)
{
	sp = sysprop_free(sp);
	tu_rmtree(dir);
	free(dir);
}

/* Entries of the double's directory, "." and ".." aside. */
static unsigned
entries(void)
{
	struct dirent *e;
	unsigned n = 0;
	DIR *d = opendir(dir);

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

START_TEST(test_names)
{
	static const char *const good[] = { "a", "debug.atrace.app_0",
		"ro.build.type", "vendor.x-y@1:2_3", "A.B.c9",
		"persist.sys.a" };
	static const char *const bad[] = { "", ".a", "a.", "a..b", "a b", "a/b",
		"a$b", "ä", "debug.atrace.app_0\n", "a\tb" };
	char v[SYSPROP_VALUE_MAX];
	unsigned i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(sysprop_name_ok(good[i]), "%s", good[i]);
		ck_assert_int_eq(sysprop_set(sp, good[i], "1"), 0);
		ck_assert_int_eq(sysprop_get(sp, good[i], v, sizeof(v)), 0);
		ck_assert_str_eq(v, "1");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(!sysprop_name_ok(bad[i]), "%s", bad[i]);
		ck_assert_int_eq(sysprop_set(sp, bad[i], "1"), -EINVAL);
		ck_assert_int_eq(sysprop_get(sp, bad[i], v, sizeof(v)),
		    -EINVAL);
	}
	ck_assert(!sysprop_name_ok(NULL));
	ck_assert_uint_eq(entries(), sizeof(good) / sizeof(good[0]));
}
END_TEST

START_TEST(test_values)
{
	char big[200], v[200];

	/* 91 bytes is the most a value holds (PROP_VALUE_MAX 92) */
	memset(big, 'x', 91);
	big[91] = '\0';
	ck_assert_int_eq(sysprop_set(sp, "debug.v", big), 0);
	ck_assert_int_eq(sysprop_get(sp, "debug.v", v, sizeof(v)), 0);
	ck_assert_str_eq(v, big);
	big[91] = 'x';
	big[92] = '\0';
	ck_assert_int_eq(sysprop_set(sp, "debug.v", big), -E2BIG);
	/* the refused write left the old value */
	ck_assert_int_eq(sysprop_get(sp, "debug.v", v, sizeof(v)), 0);
	ck_assert_uint_eq(strlen(v), 91);
	/* ro.* values may be longer */
	memset(big, 'y', 150);
	big[150] = '\0';
	ck_assert_int_eq(sysprop_set(sp, "ro.long", big), 0);
	ck_assert_int_eq(sysprop_get(sp, "ro.long", v, sizeof(v)), 0);
	ck_assert_str_eq(v, big);
	/* a buffer too small: -ERANGE, buffer untouched */
	strcpy(v, "keep");
	ck_assert_int_eq(sysprop_get(sp, "ro.long", v, 20), -ERANGE);
	ck_assert_str_eq(v, "keep");
	/* UTF-8 only */
	ck_assert_int_eq(sysprop_set(sp, "debug.u", "caf\xc3\xa9"), 0);
	ck_assert_int_eq(sysprop_set(sp, "debug.u", "caf\xe9"), -EILSEQ);
	ck_assert_int_eq(sysprop_set(sp, "debug.u", "\xed\xa0\x80"), -EILSEQ);
	ck_assert_int_eq(sysprop_set(sp, "debug.u", "\xc0\xaf"), -EILSEQ);
	/* the empty value is a value */
	ck_assert_int_eq(sysprop_set(sp, "debug.e", ""), 0);
	ck_assert_int_eq(sysprop_get(sp, "debug.e", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "");
	ck_assert_int_eq(sysprop_get(sp, "debug.none", v, sizeof(v)), -ENOENT);
}
END_TEST

START_TEST(test_ro_write_once)
{
	char v[SYSPROP_VALUE_MAX];

	ck_assert_int_eq(sysprop_set(sp, "ro.build.type", "userdebug"), 0);
	ck_assert_int_eq(sysprop_set(sp, "ro.build.type", "user"), -EROFS);
	ck_assert_int_eq(sysprop_set(sp, "ro.build.type", "userdebug"), -EROFS);
	ck_assert_int_eq(sysprop_unset(sp, "ro.build.type"), -EROFS);
	ck_assert_int_eq(sysprop_get(sp, "ro.build.type", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "userdebug");
	/* a ro.* never set may be "unset" (nothing to do) */
	ck_assert_int_eq(sysprop_unset(sp, "ro.other"), 0);
	/* the one-call read heapprofd uses for the build type */
	ck_assert_int_eq(sysprop_read(dir, "ro.build.type", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "userdebug");
	ck_assert_int_eq(sysprop_read(dir, "ro.debuggable", v, sizeof(v)),
	    -ENOENT);
}
END_TEST

START_TEST(test_ctl_refused)
{
	char v[SYSPROP_VALUE_MAX];

	ck_assert_int_eq(sysprop_set(sp, "ctl.start", "vitalsd"), -EPERM);
	ck_assert_int_eq(sysprop_set(sp, "ctl.stop", "traced"), -EPERM);
	ck_assert_int_eq(sysprop_unset(sp, "ctl.start"), -EPERM);
	ck_assert_int_eq(sysprop_get(sp, "ctl.start", v, sizeof(v)), -ENOENT);
	ck_assert_uint_eq(entries(), 0);
}
END_TEST

/* Replaced whole (rename), nothing else left in the directory; a file
 * written by hand with `echo` reads without its newline; unset removes. */
START_TEST(test_files)
{
	char path[512], v[SYSPROP_VALUE_MAX];
	unsigned i;

	for (i = 0; i < 50; i++) {
		char val[16];

		snprintf(val, sizeof(val), "%#x", i);
		ck_assert_int_eq(sysprop_set(sp,
				     "debug.atrace.tags."
				     "enableflags",
				     val),
		    0);
		ck_assert_int_eq(sysprop_get(sp,
				     "debug.atrace.tags."
				     "enableflags",
				     v, sizeof(v)),
		    0);
		ck_assert_str_eq(v, val);
	}
	ck_assert_uint_eq(entries(), 1);
	snprintf(path, sizeof(path), "%s/debug.hand", dir);
	ck_assert_int_eq(tu_writes(path, "0x1e\n"), 0);
	ck_assert_int_eq(sysprop_get(sp, "debug.hand", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "0x1e");
	ck_assert_int_eq(sysprop_unset(sp, "debug.hand"), 0);
	ck_assert_int_eq(sysprop_get(sp, "debug.hand", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(sysprop_unset(sp, "debug.hand"), 0);
	ck_assert_uint_eq(entries(), 1);
}
END_TEST

/* No double on a host: no properties, said as such; a missing root is
 * an error. */
START_TEST(test_none)
{
	struct sysprop *none = NULL;
	char v[SYSPROP_VALUE_MAX], path[512];

	ck_assert_int_eq(sysprop_open(NULL, &none), 0);
#ifdef __BIONIC__
	ck_assert_str_eq(sysprop_backend(none), "platform");
#else
	ck_assert_str_eq(sysprop_backend(none), "none");
	ck_assert(!sysprop_available(none));
	ck_assert_int_eq(sysprop_get(none, "ro.build.type", v, sizeof(v)),
	    -EOPNOTSUPP);
	ck_assert_int_eq(sysprop_set(none, "debug.x", "1"), -EOPNOTSUPP);
	ck_assert_int_eq(sysprop_read(NULL, "ro.build.type", v, sizeof(v)),
	    -EOPNOTSUPP);
	/* the rules still come first */
	ck_assert_int_eq(sysprop_set(none, "ctl.start", "x"), -EPERM);
	ck_assert_int_eq(sysprop_set(none, "a..b", "x"), -EINVAL);
#endif
	sysprop_free(none);
	ck_assert_ptr_null(sysprop_free(NULL));
	snprintf(path, sizeof(path), "%s/absent", dir);
	ck_assert_int_eq(sysprop_open(path, &none), -ENOENT);
	ck_assert_int_eq(sysprop_read(path, "ro.x", v, sizeof(v)), -ENOENT);
}
END_TEST

static Suite *
sysprop_suite(void)
{
	Suite *s = suite_create("sysprop");
	TCase *tc = tcase_create("double");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_ro_write_once);
	tcase_add_test(tc, test_ctl_refused);
	tcase_add_test(tc, test_files);
	tcase_add_test(tc, test_none);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(sysprop_suite());
}
