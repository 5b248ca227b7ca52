/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace categories against the property double, without a daemon: the
 * category names map to libcutils' ATRACE_TAG_* bits; vitalsd writes the
 * app list, its count and the tags (tags last) only when the properties
 * are free, steps back from another tracer's values (counted), takes them
 * again once they are free, and at stop puts back exactly what was there
 * (an absent property absent again) only if the values are still its own.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/atrace_cat.h"
#include "testutil.h"
#include "vitalsd.h"

#define TAGS ATCAT_TAGS_PROP
#define NUM ATCAT_APP_NUMBER_PROP

static char *dir;
static struct sysprop *sp;

static void
setup(void)
{
	dir = tu_mkdtemp("atcat");
	ck_assert_ptr_nonnull(dir);
	ck_assert_int_eq(sysprop_open(dir, &sp), 0);
}

static void
teardown(void)
{
	sp = sysprop_free(sp);
	tu_rmtree(dir);
	free(dir);
}

/* The property's value, or "(unset)". */
static const char *
prop(const char *name)
{
	static char v[4][SYSPROP_VALUE_MAX];
	static unsigned k;
	char *b = v[k++ % 4];
	int r = sysprop_get(sp, name, b, SYSPROP_VALUE_MAX);

	if (r == -ENOENT)
		return "(unset)";
	ck_assert_int_eq(r, 0);
	return b;
}

static struct atcat *
make(uint64_t tags, const char *apps)
{
	struct atcat_opts o = { .prop_root = dir,
		.tags = tags,
		.apps = apps,
		.check_ms = 0 };
	struct atcat *ac = NULL;

	ck_assert_int_eq(atcat_new(NULL, &o, &ac), 0);
	return ac;
}

START_TEST(test_categories)
{
	/* every name atrace knows with a userspace tag, and its bit as
	 * cutils/trace.h defines it */
	static const struct {
		const char *name;
		unsigned bit;
	} want[] = { { "gfx", 1 }, { "input", 2 }, { "view", 3 },
		{ "webview", 4 }, { "wm", 5 }, { "am", 6 }, { "sm", 7 },
		{ "audio", 8 }, { "video", 9 }, { "camera", 10 }, { "hal", 11 },
		{ "res", 13 }, { "dalvik", 14 }, { "rs", 15 }, { "bionic", 16 },
		{ "power", 17 }, { "pm", 18 }, { "ss", 19 }, { "database", 20 },
		{ "network", 21 }, { "adb", 22 }, { "vibrator", 23 },
		{ "aidl", 24 }, { "nnapi", 25 }, { "rro", 26 },
		{ "thermal", 27 } };
	char bad[64], names[256];
	uint64_t t;
	unsigned i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_int_eq(atcat_parse_categories(want[i].name, &t, bad,
				     sizeof(bad)),
		    0);
		ck_assert_msg(t == 1ULL << want[i].bit, "%s: %#llx",
		    want[i].name, (unsigned long long)t);
		atcat_tag_names(t, names, sizeof(names));
		ck_assert_str_eq(names, want[i].name);
	}
	ck_assert_int_eq(atcat_parse_categories("gfx, input view,am wm", &t,
			     bad, sizeof(bad)),
	    0);
	ck_assert_uint_eq(t, 0x6eULL);
	atcat_tag_names(t, names, sizeof(names));
	ck_assert_str_eq(names, "gfx input view wm am");
	ck_assert_int_eq(atcat_parse_categories("", &t, NULL, 0), 0);
	ck_assert_uint_eq(t, 0);
	ck_assert_int_eq(atcat_parse_categories("none", &t, NULL, 0), 0);
	ck_assert_uint_eq(t, 0);
	/* kernel-event categories are vitalsd's instance's business */
	ck_assert_int_eq(atcat_parse_categories("gfx sched", &t, bad,
			     sizeof(bad)),
	    -EINVAL);
	ck_assert_str_eq(bad, "sched (a kernel-event category)");
	ck_assert_int_eq(atcat_parse_categories("gfx nosuch", &t, bad,
			     sizeof(bad)),
	    -EINVAL);
	ck_assert_str_eq(bad, "nosuch");
	/* ATRACE_TAG_APP comes from the app list, not a category */
	ck_assert_int_eq(atcat_parse_categories("app", &t, NULL, 0), -EINVAL);
}
END_TEST

START_TEST(test_apps)
{
	char buf[ATCAT_APPS_MAX * SYSPROP_VALUE_MAX], many[2048], big[128];
	unsigned i;

	ck_assert_int_eq(atcat_parse_apps("com.a, com.b *", buf, sizeof(buf)),
	    0);
	ck_assert_str_eq(buf, "com.a,com.b,*");
	ck_assert_int_eq(atcat_parse_apps("none", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	many[0] = '\0';
	for (i = 0; i < ATCAT_APPS_MAX + 1; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
		    "p%u,", i);
	ck_assert_int_eq(atcat_parse_apps(many, buf, sizeof(buf)), -ERANGE);
	/* one app is one property value: at most 91 bytes */
	memset(big, 'a', 92);
	big[92] = '\0';
	ck_assert_int_eq(atcat_parse_apps(big, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* Free properties: app list, count, tags set; restored to "never set". */
START_TEST(test_take_restore_unset)
{
	struct window_trace wt;
	struct atcat *ac = make(0x6, "com.example.a,*");

	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	ck_assert_str_eq(prop(TAGS), "0x6");
	ck_assert_str_eq(prop(NUM), "2");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "com.example.a");
	ck_assert_str_eq(prop("debug.atrace.app_1"), "*");
	atcat_check(ac);
	atcat_check(ac);
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_uint_eq(wt.cat_state, ATCAT_ON);
	ck_assert_uint_eq(wt.cat_checks, 3);
	ck_assert_uint_eq(wt.cat_takeovers, 1);
	ck_assert_uint_eq(wt.cat_foreign, 0);
	ck_assert_uint_eq(wt.cat_flags, 0x6);
	ck_assert_uint_eq(wt.cat_tags, 0x6);
	atcat_stop(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_OFF);
	ck_assert_str_eq(prop(TAGS), "(unset)");
	ck_assert_str_eq(prop(NUM), "(unset)");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "(unset)");
	ck_assert_str_eq(prop("debug.atrace.app_1"), "(unset)");
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_uint_eq(wt.cat_state, ATCAT_OFF);
	ck_assert_uint_eq(wt.cat_restores, 1);
	atcat_free(ac);
}
END_TEST

/* What atrace leaves after a trace ("0" and an empty count) comes back
 * exactly; an app slot beyond vitalsd's list is not touched. */
START_TEST(test_restore_values)
{
	struct atcat *ac = make(0x2, "com.x");

	ck_assert_int_eq(sysprop_set(sp, TAGS, "0"), 0);
	ck_assert_int_eq(sysprop_set(sp, NUM, ""), 0);
	ck_assert_int_eq(sysprop_set(sp, "debug.atrace.app_0", "old"), 0);
	ck_assert_int_eq(sysprop_set(sp, "debug.atrace.app_1", "old1"), 0);
	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	ck_assert_str_eq(prop(TAGS), "0x2");
	ck_assert_str_eq(prop(NUM), "1");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "com.x");
	atcat_free(ac); /* stops first */
	ck_assert_str_eq(prop(TAGS), "0");
	ck_assert_str_eq(prop(NUM), "");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "old");
	ck_assert_str_eq(prop("debug.atrace.app_1"), "old1");
}
END_TEST

/* Another tracer's tags before the start: left alone, counted per check,
 * taken once it clears them; at stop the then-current "0" comes back. */
START_TEST(test_foreign_then_free)
{
	struct window_trace wt;
	struct atcat *ac = make(0x6, "");
	unsigned i;

	ck_assert_int_eq(sysprop_set(sp, TAGS, "0x40"), 0);
	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_SKIPPED_OTHER_OWNER);
	for (i = 0; i < 3; i++)
		atcat_check(ac);
	ck_assert_str_eq(prop(TAGS), "0x40");
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_uint_eq(wt.cat_state, ATCAT_SKIPPED_OTHER_OWNER);
	ck_assert_uint_eq(wt.cat_foreign, 4);
	ck_assert_uint_eq(wt.cat_checks, 4);
	ck_assert_uint_eq(wt.cat_takeovers, 0);
	ck_assert_uint_eq(wt.cat_flags, 0x40);
	/* the other tracer finishes as atrace does: tags "0" */
	ck_assert_int_eq(sysprop_set(sp, TAGS, "0"), 0);
	atcat_check(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	ck_assert_str_eq(prop(TAGS), "0x6");
	ck_assert_str_eq(prop(NUM), "(unset)");
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_uint_eq(wt.cat_takeovers, 1);
	ck_assert_uint_eq(wt.cat_foreign, 0);
	atcat_stop(ac);
	ck_assert_str_eq(prop(TAGS), "0");
	atcat_free(ac);
}
END_TEST

/* A tracer that starts while vitalsd holds them: vitalsd steps back and,
 * at stop, does not put anything back over the other's values. */
START_TEST(test_yield)
{
	struct window_trace wt;
	struct atcat *ac = make(0x6, "com.mine");

	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	/* perfetto's atrace: apps first, then tags */
	ck_assert_int_eq(sysprop_set(sp, "debug.atrace.app_0", "com.their"), 0);
	ck_assert_int_eq(sysprop_set(sp, NUM, "1"), 0);
	ck_assert_int_eq(sysprop_set(sp, TAGS, "0x22"), 0);
	atcat_check(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_SKIPPED_OTHER_OWNER);
	atcat_stop(ac);
	ck_assert_str_eq(prop(TAGS), "0x22");
	ck_assert_str_eq(prop(NUM), "1");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "com.their");
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_uint_eq(wt.cat_yields, 1);
	ck_assert_uint_eq(wt.cat_foreign, 1);
	ck_assert_uint_eq(wt.cat_restores, 0);
	atcat_free(ac);
}
END_TEST

/* A bare `setprop` of the tags over vitalsd's: its app list is its own
 * left behind, so the properties are free again once the tags are 0, and
 * what was there before vitalsd is what comes back at the end; stopped
 * while the other tags are in place, the list goes and the tags stay. */
START_TEST(test_leftover_apps)
{
	struct atcat *ac = make(0x6, "com.mine");

	ck_assert_int_eq(sysprop_set(sp, "debug.atrace.app_0", "orig"), 0);
	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	ck_assert_int_eq(sysprop_set(sp, TAGS, "0x8"), 0);
	atcat_check(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_SKIPPED_OTHER_OWNER);
	ck_assert_int_eq(sysprop_set(sp, TAGS, "0"), 0);
	atcat_check(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	ck_assert_str_eq(prop(TAGS), "0x6");
	atcat_stop(ac);
	ck_assert_str_eq(prop(TAGS), "0");
	ck_assert_str_eq(prop(NUM), "(unset)");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "orig");

	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	ck_assert_str_eq(prop("debug.atrace.app_0"), "com.mine");
	ck_assert_int_eq(sysprop_set(sp, TAGS, "0x8"), 0);
	atcat_check(ac);
	atcat_stop(ac);
	ck_assert_str_eq(prop(TAGS), "0x8");
	ck_assert_str_eq(prop(NUM), "(unset)");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "orig");
	atcat_free(ac);
}
END_TEST

/* Only an app list (tags "0", as `atrace -a app` with no category writes)
 * is another tracer's too; so is a tags value libcutils cannot parse. */
START_TEST(test_foreign_forms)
{
	struct atcat *ac = make(0x6, "");

	ck_assert_int_eq(sysprop_set(sp, TAGS, "0"), 0);
	ck_assert_int_eq(sysprop_set(sp, NUM, "1"), 0);
	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_SKIPPED_OTHER_OWNER);
	ck_assert_str_eq(prop(TAGS), "0");
	ck_assert_int_eq(sysprop_set(sp, NUM, ""), 0);
	ck_assert_int_eq(sysprop_set(sp, TAGS, "garbage"), 0);
	atcat_check(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_SKIPPED_OTHER_OWNER);
	ck_assert_int_eq(sysprop_set(sp, TAGS, "0x0"), 0);
	atcat_check(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	/* cleared under vitalsd (a shell `setprop ... 0`): taken again */
	ck_assert_int_eq(sysprop_set(sp, TAGS, "0"), 0);
	atcat_check(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ON);
	ck_assert_str_eq(prop(TAGS), "0x6");
	atcat_free(ac);
	ck_assert_str_eq(prop(TAGS), "0");
}
END_TEST

/* Nothing configured: off, no property touched. No properties: said so. */
START_TEST(test_off_and_unavailable)
{
	struct window_trace wt;
	struct atcat_opts o = { .prop_root = NULL, .tags = 0x2 };
	struct atcat *ac = make(0, "");

	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_OFF);
	ck_assert_str_eq(prop(TAGS), "(unset)");
	atcat_free(ac);
#ifndef __BIONIC__
	ck_assert_int_eq(atcat_new(NULL, &o, &ac), 0);
	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_UNAVAILABLE_NO_PROPS);
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_uint_eq(wt.cat_state, ATCAT_UNAVAILABLE_NO_PROPS);
	atcat_free(ac);
#endif
	/* a configured double that is missing */
	o.prop_root = "/nonexistent/vitals-props";
	ck_assert_int_eq(atcat_new(NULL, &o, &ac), 0);
	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_UNAVAILABLE_NO_PROPS);
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_int_eq(wt.cat_err, -ENOENT);
	atcat_free(ac);
}
END_TEST

/* An app slot that is no property file (a directory in the double): the
 * take fails before anything is written, the state is error with its
 * errno, nothing is changed and nothing is retried. */
START_TEST(test_write_fails)
{
	char path[512];
	struct window_trace wt;
	struct atcat *ac = make(0x6, "a,b");

	/* app_1 is a directory: neither read nor replaced */
	snprintf(path, sizeof(path), "%s/debug.atrace.app_1", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/debug.atrace.app_1/x", dir);
	ck_assert_int_eq(tu_writes(path, "x"), 0);
	ck_assert_int_eq(sysprop_set(sp, "debug.atrace.app_0", "before"), 0);
	atcat_start(ac);
	ck_assert_int_eq(atcat_state(ac), ATCAT_ERROR);
	ck_assert_str_eq(prop("debug.atrace.app_0"), "before");
	ck_assert_str_eq(prop(TAGS), "(unset)");
	atcat_check(ac);
	memset(&wt, 0, sizeof(wt));
	atcat_window(ac, &wt);
	ck_assert_uint_eq(wt.cat_state, ATCAT_ERROR);
	ck_assert_int_ne(wt.cat_err, 0);
	ck_assert_uint_eq(wt.cat_set_fail, 1);
	ck_assert_uint_eq(wt.cat_checks, 1); /* the start's only */
	atcat_free(ac);
}
END_TEST

/* The keys: categories as tag bits, apps normalised, prop_root. */
START_TEST(test_config_keys)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_uint_eq(cfg.atrace_tags, 0);
	ck_assert_ptr_null(cfg.atrace_apps);
	ck_assert_ptr_null(cfg.prop_root);
	ck_assert_int_eq(config_set(&cfg, "atrace_categories", "gfx,am"), 0);
	ck_assert_uint_eq(cfg.atrace_tags, 0x42);
	ck_assert_int_eq(config_set(&cfg, "atrace_categories", "sched"),
	    -EINVAL);
	ck_assert_uint_eq(cfg.atrace_tags, 0x42);
	ck_assert_int_eq(config_set(&cfg, "atrace_apps", "com.a com.b"), 0);
	ck_assert_str_eq(cfg.atrace_apps, "com.a,com.b");
	ck_assert_int_eq(config_set(&cfg, "atrace_apps", "none"), 0);
	ck_assert_ptr_null(cfg.atrace_apps);
	ck_assert_int_eq(config_set(&cfg, "prop_root", dir), 0);
	ck_assert_str_eq(cfg.prop_root, dir);
	ck_assert_int_eq(config_set(&cfg, "prop_root", "none"), 0);
	ck_assert_ptr_null(cfg.prop_root);
	ck_assert_int_eq(config_set(&cfg, "prop_root", ""), -EINVAL);
	config_release(&cfg);
}
END_TEST

static Suite *
atcat_suite(void)
{
	Suite *s = suite_create("atrace_cat");
	TCase *tc = tcase_create("double");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_categories);
	tcase_add_test(tc, test_apps);
	tcase_add_test(tc, test_take_restore_unset);
	tcase_add_test(tc, test_restore_values);
	tcase_add_test(tc, test_foreign_then_free);
	tcase_add_test(tc, test_yield);
	tcase_add_test(tc, test_leftover_apps);
	tcase_add_test(tc, test_foreign_forms);
	tcase_add_test(tc, test_off_and_unavailable);
	tcase_add_test(tc, test_write_fails);
	tcase_add_test(tc, test_config_keys);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(atcat_suite());
}
