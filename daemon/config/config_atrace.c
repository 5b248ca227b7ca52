/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The atrace_categories and atrace_apps settings: atrace's userspace
 * category names and their ATRACE_TAG_* bits, and the app list as the
 * debug.atrace.app_N properties will hold it. In config's layer so that
 * config calls nothing above it; trace/atrace_cat.c sets the properties.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config/config_atrace.h"
#include "core/sysprop.h"

/* The userspace categories of atrace (cmds/atrace/atrace.cpp
 * k_categories) and their tags (libcutils cutils/trace.h). */
static const struct {
	const char *name;
	uint64_t tag;
} categories[] = {
	{ "gfx", 1ULL << 1 },	    /* ATRACE_TAG_GRAPHICS */
	{ "input", 1ULL << 2 },	    /* ATRACE_TAG_INPUT */
	{ "view", 1ULL << 3 },	    /* ATRACE_TAG_VIEW */
	{ "webview", 1ULL << 4 },   /* ATRACE_TAG_WEBVIEW */
	{ "wm", 1ULL << 5 },	    /* ATRACE_TAG_WINDOW_MANAGER */
	{ "am", 1ULL << 6 },	    /* ATRACE_TAG_ACTIVITY_MANAGER */
	{ "sm", 1ULL << 7 },	    /* ATRACE_TAG_SYNC_MANAGER */
	{ "audio", 1ULL << 8 },	    /* ATRACE_TAG_AUDIO */
	{ "video", 1ULL << 9 },	    /* ATRACE_TAG_VIDEO */
	{ "camera", 1ULL << 10 },   /* ATRACE_TAG_CAMERA */
	{ "hal", 1ULL << 11 },	    /* ATRACE_TAG_HAL */
	{ "res", 1ULL << 13 },	    /* ATRACE_TAG_RESOURCES */
	{ "dalvik", 1ULL << 14 },   /* ATRACE_TAG_DALVIK */
	{ "rs", 1ULL << 15 },	    /* ATRACE_TAG_RS */
	{ "bionic", 1ULL << 16 },   /* ATRACE_TAG_BIONIC */
	{ "power", 1ULL << 17 },    /* ATRACE_TAG_POWER */
	{ "pm", 1ULL << 18 },	    /* ATRACE_TAG_PACKAGE_MANAGER */
	{ "ss", 1ULL << 19 },	    /* ATRACE_TAG_SYSTEM_SERVER */
	{ "database", 1ULL << 20 }, /* ATRACE_TAG_DATABASE */
	{ "network", 1ULL << 21 },  /* ATRACE_TAG_NETWORK */
	{ "adb", 1ULL << 22 },	    /* ATRACE_TAG_ADB */
	{ "vibrator", 1ULL << 23 }, /* ATRACE_TAG_VIBRATOR */
	{ "aidl", 1ULL << 24 },	    /* ATRACE_TAG_AIDL */
	{ "nnapi", 1ULL << 25 },    /* ATRACE_TAG_NNAPI */
	{ "rro", 1ULL << 26 },	    /* ATRACE_TAG_RRO */
	{ "thermal", 1ULL << 27 },  /* ATRACE_TAG_THERMAL */
};
#define NCAT (sizeof(categories) / sizeof(categories[0]))

/* atrace's categories that only enable kernel events (its sysfiles):
 * vitalsd's instance chooses its own events, so these are refused with
 * their own message rather than as unknown words. */
static const char *const kernel_only[] = { "sched", "irq", "irqoff",
	"preemptoff", "i2c", "freq", "membus", "idle", "disk", "mmc", "load",
	"sync", "workq", "memreclaim", "regulators", "binder_driver",
	"binder_lock", "pagecache", "memory" };

int
atcat_parse_categories(const char *value, uint64_t *ret, char *bad,
    size_t badsz)
{
	char buf[512], *tok, *save = NULL;
	uint64_t tags = 0;
	unsigned i;

	if (strlen(value) >= sizeof(buf))
		return -ERANGE;
	if (strcmp(value, "none") == 0) {
		*ret = 0;
		return 0;
	}
	strcpy(buf, value);
	for (tok = strtok_r(buf, ", \t", &save); tok != NULL;
	     tok = strtok_r(NULL, ", \t", &save)) {
		for (i = 0; i < NCAT; i++)
			if (strcmp(tok, categories[i].name) == 0)
				break;
		if (i == NCAT) {
			bool kern = false;

			for (i = 0;
			     i < sizeof(kernel_only) / sizeof(kernel_only[0]);
			     i++)
				kern |= strcmp(tok, kernel_only[i]) == 0;
			if (bad)
				snprintf(bad, badsz, "%s%s", tok,
				    kern ? " (a kernel-event category)" : "");
			return -EINVAL;
		}
		tags |= categories[i].tag;
	}
	*ret = tags;
	return 0;
}

void
atcat_tag_names(uint64_t tags, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < NCAT; i++) {
		int k;

		if (!(tags & categories[i].tag))
			continue;
		k = snprintf(buf + n, len - n, "%s%s", n ? " " : "",
		    categories[i].name);
		if (k < 0 || (size_t)k >= len - n)
			return;
		n += (size_t)k;
	}
}

int
atcat_parse_apps(const char *value, char *buf, size_t len)
{
	char tmp[ATCAT_APPS_MAX * SYSPROP_VALUE_MAX], *tok, *save = NULL;
	size_t n = 0;
	unsigned count = 0;

	if (strlen(value) >= sizeof(tmp))
		return -ERANGE;
	if (len == 0)
		return -ERANGE;
	buf[0] = '\0';
	if (strcmp(value, "none") == 0)
		return 0;
	strcpy(tmp, value);
	for (tok = strtok_r(tmp, ", \t", &save); tok != NULL;
	     tok = strtok_r(NULL, ", \t", &save)) {
		int k;

		if (++count > ATCAT_APPS_MAX)
			return -ERANGE;
		/* each becomes the value of one property */
		if (sysprop_value_check("debug.atrace.app_0", tok) < 0)
			return -EINVAL;
		k = snprintf(buf + n, len - n, "%s%s", n ? "," : "", tok);
		if (k < 0 || (size_t)k >= len - n)
			return -ERANGE;
		n += (size_t)k;
	}
	return 0;
}
