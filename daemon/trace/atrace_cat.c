/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace categories, set as frameworks/native/cmds/atrace does:
 *   debug.atrace.app_0 .. app_<n-1>  cmdline names (or "*") of the apps
 *                                   whose ATRACE_TAG_APP markers are wanted
 *   debug.atrace.app_number         n
 *   debug.atrace.tags.enableflags   the ATRACE_TAG_* mask, "%#" PRIx64
 * in that order: libcutils (trace-dev.inc) re-reads its tags, and with them
 * the app list, when the serial of the tags property changes, which it
 * checks on every atrace_get_enabled_tags() (and android.os.Trace on every
 * isTagEnabled). So the tags are written last, on set and on restore, and
 * every process sees the change at its next trace call; no binder poke is
 * needed (current atrace pokes only PDX services).
 *
 * Ownership rule (doc/ftrace.md): the properties are free when the tags
 * and app_number are both absent, empty or 0. vitalsd takes them only when
 * free, and only while its instance captures ATrace; they are its while
 * both still read what it wrote; anything else is another tracer's
 * (perfetto, atrace, a shell setprop): vitalsd leaves them alone, counts
 * it, and takes them again once they are free. At stop it restores what it
 * saved, only if the values are still its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "atrace_cat.h"
#include "core/log.h"
#include "core/sysprop.h"
#include "trace/atrace_cat.h"
#include "trace/trace.h"

const char *
atcat_state_name(unsigned st)
{
	static const char *const names[ATCAT__MAX] = {
		[ATCAT_UNKNOWN] = "unknown",
		[ATCAT_OFF] = "off",
		[ATCAT_ON] = "on",
		[ATCAT_SKIPPED_OTHER_OWNER] = "skipped_other_owner",
		[ATCAT_UNAVAILABLE_NO_PROPS] = "unavailable_no_props",
		[ATCAT_ERROR] = "error",
	};

	return st < ATCAT__MAX ? names[st] : "?";
}

/* ------------------------------------------------------------ ownership */

/* A property as read: absent, or its value. */
struct pval {
	bool set;
	char v[SYSPROP_VALUE_MAX];
};

struct atcat {
	struct sysprop *sp;
	int open_err; /* sysprop_open's, when it failed */
	struct event *timer;
	unsigned check_ms;
	uint64_t tags;
	char tags_str[32]; /* what vitalsd writes to the tags */
	char app[ATCAT_APPS_MAX][SYSPROP_VALUE_MAX];
	unsigned napps;
	char napps_str[8];
	bool active; /* between start and stop */
	/* vitalsd stepped back from tags another tracer set over its own,
	 * with its app list still in place (saved_app/number still hold
	 * what was there before it) */
	bool leftover;
	unsigned state; /* enum atcat_state */
	int err;
	uint64_t flags; /* tags as last read (parsed) */
	/* what was there before vitalsd wrote (valid while ON) */
	struct pval saved_tags, saved_number, saved_app[ATCAT_APPS_MAX];
	/* counts since the last window */
	uint32_t checks, foreign, takeovers, yields, restores, set_fail,
	    read_fail;
};

unsigned
atcat_state(const struct atcat *ac)
{
	return ac ? ac->state : ATCAT_OFF;
}

const char *
atcat_backend(const struct atcat *ac)
{
	return sysprop_backend(ac ? ac->sp : NULL);
}

static int
pget(struct atcat *ac, const char *name, struct pval *ret)
{
	int r = sysprop_get(ac->sp, name, ret->v, sizeof(ret->v));

	ret->set = r == 0;
	if (r == -ENOENT) {
		ret->v[0] = '\0';
		return 0;
	}
	return r;
}

static int
pput(struct atcat *ac, const char *name, const struct pval *p)
{
	return p->set ? sysprop_set(ac->sp, name, p->v) :
			sysprop_unset(ac->sp, name);
}

/* What libcutils reads as 0: absent, empty, or a number equal to 0
 * (strtoull base 0, the whole value). Anything else may be in use. */
static bool
zeroish(const struct pval *p, uint64_t *ret)
{
	char *end;
	uint64_t v;

	*ret = 0;
	if (!p->set || p->v[0] == '\0')
		return true;
	errno = 0;
	v = strtoull(p->v, &end, 0);
	if (*end != '\0' || errno != 0)
		return false;
	*ret = v;
	return v == 0;
}

static void
app_name(unsigned i, char *buf, size_t len)
{
	snprintf(buf, len, ATCAT_APP_PROP_FMT, i);
}

/* The app list reads what vitalsd wrote (n: app_number as read). */
static bool
apps_ours(struct atcat *ac, const struct pval *n)
{
	struct pval a;
	char name[40];
	unsigned i;

	if (ac->napps == 0 || !n->set || strcmp(n->v, ac->napps_str) != 0)
		return false;
	for (i = 0; i < ac->napps; i++) {
		app_name(i, name, sizeof(name));
		if (pget(ac, name, &a) < 0 || !a.set ||
		    strcmp(a.v, ac->app[i]) != 0)
			return false;
	}
	return true;
}

static bool
is_ours(struct atcat *ac, const struct pval *t, const struct pval *n)
{
	uint64_t v;

	if (!t->set || strcmp(t->v, ac->tags_str) != 0)
		return false;
	if (ac->napps)
		return apps_ours(ac, n);
	return zeroish(n, &v);
}

/* Nobody's: tags and app_number read 0, or the app list is vitalsd's own
 * left from before it stepped back. */
static bool
is_free(struct atcat *ac, const struct pval *t, const struct pval *n)
{
	uint64_t v;

	if (!zeroish(t, &v))
		return false;
	return zeroish(n, &v) || (ac->leftover && apps_ours(ac, n));
}

/* Put back the app list that was there before vitalsd's. */
static int
restore_apps(struct atcat *ac)
{
	char name[40];
	unsigned i;
	int r, first = 0;

	for (i = 0; i < ac->napps; i++) {
		app_name(i, name, sizeof(name));
		if ((r = pput(ac, name, &ac->saved_app[i])) < 0 && !first)
			first = r;
	}
	if (ac->napps &&
	    (r = pput(ac, ATCAT_APP_NUMBER_PROP, &ac->saved_number)) < 0 &&
	    !first)
		first = r;
	return first;
}

/* Put back what was saved: the app list first, the tags last (their
 * serial change is what makes processes re-read the list). */
static int
restore(struct atcat *ac)
{
	int r, first = restore_apps(ac);

	if ((r = pput(ac, ATCAT_TAGS_PROP, &ac->saved_tags)) < 0 && !first)
		first = r;
	return first;
}

/* The properties are free (t and n as just read): save, then write. */
static int
take(struct atcat *ac, const struct pval *t, const struct pval *n)
{
	char name[40];
	unsigned i;
	int r;

	ac->saved_tags = *t;
	/* its own app list left in place: what was there before it is
	 * still in saved_* */
	if (!(ac->leftover && apps_ours(ac, n))) {
		ac->saved_number = *n;
		for (i = 0; i < ac->napps; i++) {
			app_name(i, name, sizeof(name));
			if ((r = pget(ac, name, &ac->saved_app[i])) < 0)
				return r;
		}
	}
	ac->leftover = false;
	for (i = 0; i < ac->napps; i++) {
		app_name(i, name, sizeof(name));
		if ((r = sysprop_set(ac->sp, name, ac->app[i])) < 0)
			goto undo;
	}
	if (ac->napps &&
	    (r = sysprop_set(ac->sp, ATCAT_APP_NUMBER_PROP, ac->napps_str)) < 0)
		goto undo;
	if ((r = sysprop_set(ac->sp, ATCAT_TAGS_PROP, ac->tags_str)) < 0)
		goto undo;
	return 0;
undo:
	restore(ac);
	return r;
}

static void
go_other(struct atcat *ac, const struct pval *t, const struct pval *n)
{
	uint64_t v = 0;

	zeroish(t, &v);
	ac->flags = v;
	ac->foreign++;
	if (ac->state == ATCAT_SKIPPED_OTHER_OWNER)
		return;
	if (ac->state == ATCAT_ON) {
		ac->yields++;
		ac->leftover = ac->napps > 0;
	}
	log_info("atrace categories: held by another tracer (tags %s, "
		 "app_number %s): left alone",
	    t->set ? t->v : "unset", n->set ? n->v : "unset");
	ac->state = ATCAT_SKIPPED_OTHER_OWNER;
}

void
atcat_check(struct atcat *ac)
{
	struct pval t, n;
	int r;

	if (ac == NULL || !ac->active || ac->state == ATCAT_ERROR)
		return;
	if ((r = pget(ac, ATCAT_TAGS_PROP, &t)) < 0 ||
	    (r = pget(ac, ATCAT_APP_NUMBER_PROP, &n)) < 0) {
		ac->read_fail++;
		return;
	}
	ac->checks++;
	if (ac->state == ATCAT_ON && is_ours(ac, &t, &n))
		return;
	if (!is_free(ac, &t, &n)) {
		go_other(ac, &t, &n);
		return;
	}
	/* free: first time, after another tracer finished, or cleared
	 * under vitalsd (then saved are the values just read) */
	if ((r = take(ac, &t, &n)) < 0) {
		ac->set_fail++;
		ac->state = ATCAT_ERROR;
		ac->err = r;
		log_warnx("atrace categories: setting the debug.atrace "
			  "properties failed: %s (not retried)",
		    strerror(-r));
		return;
	}
	if (ac->state != ATCAT_ON)
		log_info("atrace categories: on (tags %s, %u apps)",
		    ac->tags_str, ac->napps);
	ac->takeovers++;
	ac->flags = ac->tags;
	ac->state = ATCAT_ON;
}

static void
atcat_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct atcat *ac = arg;

	(void)fd;
	(void)what;
	atcat_check(ac);
}

int
atcat_new(struct event_base *base, const struct atcat_opts *o,
    struct atcat **ret)
{
	char buf[ATCAT_APPS_MAX * SYSPROP_VALUE_MAX], *tok, *save = NULL;
	struct atcat *ac;
	int r;

	if ((ac = calloc(1, sizeof(*ac))) == NULL)
		return -ENOMEM;
	ac->state = ATCAT_OFF;
	ac->tags = o->tags;
	ac->check_ms = o->check_ms;
	snprintf(ac->tags_str, sizeof(ac->tags_str), "%#" PRIx64, o->tags);
	snprintf(buf, sizeof(buf), "%s", o->apps ? o->apps : "");
	for (tok = strtok_r(buf, ",", &save);
	     tok != NULL && ac->napps < ATCAT_APPS_MAX;
	     tok = strtok_r(NULL, ",", &save))
		snprintf(ac->app[ac->napps++], SYSPROP_VALUE_MAX, "%s", tok);
	snprintf(ac->napps_str, sizeof(ac->napps_str), "%u", ac->napps);
	if ((r = sysprop_open(o->prop_root, &ac->sp)) < 0)
		ac->open_err = r;
	if (base && o->check_ms &&
	    (ac->timer = event_new(base, -1, EV_PERSIST, atcat_timer_cb, ac)) ==
		NULL) {
		atcat_free(ac);
		return -ENOMEM;
	}
	if (ac->timer)
		event_priority_set(ac->timer, 1);
	*ret = ac;
	return 0;
}

void
atcat_start(struct atcat *ac)
{
	struct timeval tv;

	if (ac == NULL || ac->active)
		return;
	if (ac->tags == 0 && ac->napps == 0) {
		ac->state = ATCAT_OFF;
		return;
	}
	if (!sysprop_available(ac->sp)) {
		ac->state = ATCAT_UNAVAILABLE_NO_PROPS;
		ac->err = ac->open_err;
		return;
	}
	ac->active = true;
	atcat_check(ac);
	if (ac->timer) {
		tv.tv_sec = ac->check_ms / 1000;
		tv.tv_usec = (ac->check_ms % 1000) * 1000;
		event_add(ac->timer, &tv);
	}
}

void
atcat_stop(struct atcat *ac)
{
	struct pval t, n;
	int r;

	if (ac == NULL || !ac->active)
		return;
	ac->active = false;
	if (ac->timer)
		event_del(ac->timer);
	if (ac->state == ATCAT_ON || ac->leftover) {
		/* only values that are still vitalsd's are put back */
		if (pget(ac, ATCAT_TAGS_PROP, &t) < 0 ||
		    pget(ac, ATCAT_APP_NUMBER_PROP, &n) < 0) {
			ac->read_fail++;
		} else if (!is_ours(ac, &t, &n)) {
			/* another tracer's tags over vitalsd's app list
			 * (a bare setprop): the list goes, the tags stay */
			if (apps_ours(ac, &n) && restore_apps(ac) < 0)
				ac->set_fail++;
			if (ac->state == ATCAT_ON)
				ac->foreign++;
		} else if ((r = restore(ac)) < 0) {
			ac->set_fail++;
			ac->err = r;
			log_warnx("atrace categories: restoring failed: %s",
			    strerror(-r));
		} else {
			ac->restores++;
			log_info("atrace categories: restored (tags %s)",
			    ac->saved_tags.set ? ac->saved_tags.v : "unset");
		}
	}
	ac->leftover = false;
	if (ac->state != ATCAT_ERROR)
		ac->state = ATCAT_OFF;
}

struct atcat *
atcat_free(struct atcat *ac)
{
	if (ac == NULL)
		return NULL;
	atcat_stop(ac);
	if (ac->timer)
		event_free(ac->timer);
	sysprop_free(ac->sp);
	free(ac);
	return NULL;
}

void
atcat_window(struct atcat *ac, struct window_trace *wt)
{
	if (ac == NULL) {
		wt->cat_state = ATCAT_OFF;
		return;
	}
	wt->cat_state = ac->state;
	wt->cat_err = ac->err;
	wt->cat_tags = ac->tags;
	wt->cat_flags = ac->state == ATCAT_ON ||
		ac->state == ATCAT_SKIPPED_OTHER_OWNER ?
	    ac->flags :
	    0;
	wt->cat_checks = ac->checks;
	wt->cat_foreign = ac->foreign;
	wt->cat_takeovers = ac->takeovers;
	wt->cat_yields = ac->yields;
	wt->cat_restores = ac->restores;
	wt->cat_set_fail = ac->set_fail;
	wt->cat_read_fail = ac->read_fail;
	ac->checks = ac->foreign = ac->takeovers = ac->yields = 0;
	ac->restores = ac->set_fail = ac->read_fail = 0;
}
