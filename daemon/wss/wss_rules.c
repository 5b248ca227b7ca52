/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor's processes by name: the control plane's
 * `wss_start --name`, and the config rules (wss_rule) that give every
 * process of a name a target, checked every few seconds. This file sits
 * above wss.c (it starts targets through it), so its timer is armed by
 * whoever made the monitor (daemon.c), not by wss_new().
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/loopstat.h"
#include "core/util.h"
#include "wss/wss.h"
#include "wss_int.h"

#define WSS_RULES_EVERY_S 5 /* rule scan cadence */

/*
 * Walk the numeric entries of proc_root: fn(w, pid, name, arg) for each
 * readable process until it returns non-zero, which is returned.
 */
static int
each_process(struct wss *w,
    int (*fn)(struct wss *, int32_t, const char *, void *), void *arg)
{
	char pname[WSS_NAME_LEN];
	struct dirent *de;
	uint64_t start, v;
	DIR *d;
	int fd, r = 0;

	if ((fd = dup(w->procfd)) < 0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (parse_uint(de->d_name, INT32_MAX, &v) < 0 || v == 0)
			continue;
		if (wss_read_ident(w, (int32_t)v, &start, pname,
			sizeof(pname)) < 0)
			continue;
		r = fn(w, (int32_t)v, pname, arg);
	}
	closedir(d);
	return r;
}

struct name_find {
	const char *name;
	int32_t pid;
};

static int
name_cb(struct wss *w, int32_t pid, const char *name, void *arg)
{
	struct name_find *f = arg;

	(void)w;
	if (strcmp(name, f->name) != 0)
		return 0;
	f->pid = pid;
	return 1;
}

/* The first process whose name is name exactly; -ESRCH none. */
int
wss_find_name(struct wss *w, const char *name, int32_t *ret_pid)
{
	struct name_find f = { name, 0 };
	int r;

	wss_settle(w);
	if ((r = each_process(w, name_cb, &f)) < 0)
		return r;
	if (r == 0)
		return -ESRCH;
	*ret_pid = f.pid;
	return 0;
}

static int
rule_cb(struct wss *w, int32_t pid, const char *name, void *arg)
{
	const struct wss_rule *rule;
	struct target *t;
	char err[160];
	unsigned i;
	int *n = arg;

	for (i = 0; i < w->cfg.nrules; i++) {
		rule = &w->cfg.rule[i];
		if (strcmp(name, rule->name) != 0)
			continue;
		if ((t = wss_target_find(w, pid)) != NULL && !t->st.ended)
			return 0;
		if (wss_start(w, pid, rule->mode, rule->lib, w->cfg.method, err,
			sizeof(err)) == 0)
			(*n)++;
		else
			log_debug("wss: rule %s: %s", rule->name, err);
		return 0; /* the first rule naming the process decides */
	}
	return 0;
}

/* Every process a rule names that is not a target yet gets one (while
 * the limits allow); the number started. */
int
wss_rules_scan(struct wss *w)
{
	int n = 0, r;

	wss_settle(w);
	if (w->cfg.nrules == 0)
		return 0;
	if ((r = each_process(w, rule_cb, &n)) < 0)
		return r;
	return n;
}

static void
rules_cb_run(evutil_socket_t fd, short what, void *arg)
{
	struct wss *w = arg;
	struct timeval tv = { .tv_sec = WSS_RULES_EVERY_S };

	(void)fd;
	(void)what;
	if (wss_busy(w)) {
		/* a pass owns the buffers: the scan when it ends */
		w->rules_deferred = true;
		return;
	}
	wss_rules_scan(w);
	event_add(w->rules_ev, &tv);
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
rules_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	rules_cb_run(fd, what, arg);
	loopstat_end("wss rules", t0);
}

/*
 * Arm the rule scan on the monitor's loop: at once, then every
 * WSS_RULES_EVERY_S at loop priority 1. Nothing to do without rules or a
 * loop; wss_free() frees the timer.
 */
int
wss_rules_start(struct wss *w)
{
	struct timeval tv = { 0, 0 };

	if (w->base == NULL || w->cfg.nrules == 0 || w->rules_ev)
		return 0;
	if ((w->rules_ev = event_new(w->base, -1, 0, rules_cb, w)) == NULL)
		return -ENOMEM;
	if (event_base_get_npriorities(w->base) > 1)
		event_priority_set(w->rules_ev, 1);
	event_add(w->rules_ev, &tv);
	return 0;
}
