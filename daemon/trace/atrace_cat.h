/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace categories (atrace_cat.c): the debug.atrace.* properties that make
 * applications write markers, set as atrace does while vitalsd's ftrace
 * instance captures them, put back when it stops, and left alone while
 * another tracer owns them (doc/ftrace.md).
 */
#ifndef VITALS_ATRACE_CAT_H
#define VITALS_ATRACE_CAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config_atrace.h"
#include "core/sysprop.h"

#define ATCAT_TAGS_PROP "debug.atrace.tags.enableflags"
#define ATCAT_APP_NUMBER_PROP "debug.atrace.app_number"
#define ATCAT_APP_PROP_FMT "debug.atrace.app_%u"

/* Where the categories stand; stored per window, values never change. */
enum atcat_state {
	ATCAT_UNKNOWN,		    /* not reported (an older window) */
	ATCAT_OFF,		    /* none configured, or no ATrace capture */
	ATCAT_ON,		    /* vitalsd's values are set */
	ATCAT_SKIPPED_OTHER_OWNER,  /* another tracer's values: left alone */
	ATCAT_UNAVAILABLE_NO_PROPS, /* no system properties here */
	ATCAT_ERROR,		    /* a property write failed: see err */
	ATCAT__MAX
};

const char *atcat_state_name(unsigned st);

struct event_base;
struct window_trace;
struct atcat;

struct atcat_opts {
	const char *prop_root; /* sysprop_open(); NULL: the platform's */
	uint64_t tags;	       /* ATRACE_TAG_* bits to set */
	const char *apps;      /* normalised list, "" none */
	unsigned check_ms;     /* ownership re-check period; 0: no timer */
};

int atcat_new(struct event_base *base, const struct atcat_opts *o,
    struct atcat **ret);
struct atcat *atcat_free(struct atcat *ac);
/* The instance captures ATrace now: take the properties if free, and
 * re-check them every check_ms. */
void atcat_start(struct atcat *ac);
/* It stops: put back what vitalsd changed, if the values are still its. */
void atcat_stop(struct atcat *ac);
/* One ownership check (the timer's; tests call it directly). */
void atcat_check(struct atcat *ac);
unsigned atcat_state(const struct atcat *ac);
/* sysprop_backend() of its properties: "platform", "dir" or "none" */
const char *atcat_backend(const struct atcat *ac);
/* The state at close and the counts since the last call. */
void atcat_window(struct atcat *ac, struct window_trace *wt);

#endif /* VITALS_ATRACE_CAT_H */
