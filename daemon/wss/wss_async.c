/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Working-set passes off the loop (issue 20). A pass (the end of the last
 * one and the begin of the next: pagemap reads, clear_refs or the
 * page_idle bitmap, smaps; up to 15-20 ms at a 64 MiB heap) runs on one
 * worker thread (core/worker.c), one target at a time; targets falling
 * due meanwhile wait their turn in the order of w->t.
 *
 * Ownership while a pass runs: the target, w->buf and w->npages are the
 * worker's. The loop does not start another pass, defers the rule scan
 * and the helper's answers until the pass ends, and every other entry
 * point that reads targets (wss_get, wss_list, wss_start, wss_stop,
 * wss_window_fill, wss_free ...) first waits for it (wss_settle): those
 * are client requests and reloads, a wait of one pass at most. The
 * daemon's window close does not wait: it asks wss_busy and fills the
 * window in the idle callback, between two passes.
 *
 * The thread is made at the first pass, on the loop, after the daemon's
 * privileges are final; none can be made: passes run on the loop.
 */
#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/worker.h"
#include "wss/wss.h"
#include "wss_int.h"

static int
pass_job(void *arg)
{
	struct target *t = arg;

	return t->w->ops->work(t);
}

/* the figures wss_counts gives while a pass runs, taken when none does */
static void
publish(struct wss *w)
{
	size_t i;

	w->pub_live = 0;
	for (i = 0; i < w->nt; i++)
		w->pub_live += !w->t[i]->st.ended;
	w->pub_pages = (uint32_t)w->npages;
}

static void
job_start(struct wss *w, struct target *t)
{
	t->in_pass = true;
	w->job_t = t;
	if (worker_start(w->wk, pass_job, t) < 0) {
		/* never: the worker is idle here; the pass on the loop */
		t->in_pass = false;
		w->job_t = NULL;
		if (w->ops->work(t) > 0)
			w->ops->arm(t);
	}
}

/* The pass that ended, back to the loop: the target armed again, what
 * waited for the pass told. */
static void
job_end(struct wss *w, int r)
{
	struct target *t = w->job_t;

	w->job_t = NULL;
	t->in_pass = false;
	publish(w);
	if (r > 0 && !t->st.ended)
		w->ops->arm(t);
	if (w->op_deferred && w->op_ev) {
		w->op_deferred = false;
		event_add(w->op_ev, NULL);
	}
	if (w->rules_deferred && w->rules_ev) {
		w->rules_deferred = false;
		event_active(w->rules_ev, EV_TIMEOUT, 1);
	}
	if (w->idle_fn)
		w->idle_fn(w->idle_arg);
}

/* The next target that fell due while the worker was busy. */
static void
next_start(struct wss *w)
{
	size_t i;

	if (worker_busy(w->wk))
		return;
	for (i = 0; i < w->nt; i++) {
		struct target *t = w->t[i];

		if (!t->queued)
			continue;
		t->queued = false;
		if (t->st.ended)
			continue;
		job_start(w, t);
		return;
	}
}

static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct wss *w = arg;
	int r;

	(void)fd;
	(void)what;
	if (worker_done(w->wk, false, &r) <= 0)
		return;
	job_end(w, r);
	next_start(w);
}

/* queued passes after a wss_settle, from the loop (never inside the
 * caller that settled) */
static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	next_start(arg);
}

static bool
ready(struct wss *w)
{
	int r;

	if (w->wk)
		return true;
	if (w->wk_off || w->base == NULL)
		return false;
	if ((r = worker_new(&w->wk)) < 0 ||
	    (w->wk_ev = event_new(w->base, worker_fd(w->wk),
		 EV_READ | EV_PERSIST, done_cb, w)) == NULL ||
	    (w->kick_ev = event_new(w->base, -1, 0, kick_cb, w)) == NULL ||
	    (event_base_get_npriorities(w->base) > 1 &&
		(event_priority_set(w->wk_ev, 1) < 0 ||
		    event_priority_set(w->kick_ev, 1) < 0)) ||
	    event_add(w->wk_ev, NULL) < 0) {
		log_warnx("wss: passes stay on the loop: %s",
		    strerror(r < 0 ? -r : ENOMEM));
		wss_async_free(w);
		w->wk_off = true;
		return false;
	}
	return true;
}

void
wss_counts(struct wss *w, uint32_t *ret_live, uint32_t *ret_pages)
{
	if (!worker_busy(w->wk))
		publish(w);
	*ret_live = w->pub_live;
	*ret_pages = w->pub_pages;
}

void
wss_async_pass(struct target *t)
{
	struct wss *w = t->w;

	if (!ready(w)) {
		if (w->ops->work(t) > 0)
			w->ops->arm(t);
		return;
	}
	if (worker_busy(w->wk)) {
		t->queued = true;
		return;
	}
	job_start(w, t);
}

bool
wss_busy(const struct wss *w)
{
	return w != NULL && worker_busy(w->wk);
}

void
wss_settle(struct wss *w)
{
	int r;

	if (w == NULL || !worker_busy(w->wk))
		return;
	if (worker_done(w->wk, true, &r) > 0)
		job_end(w, r);
	/* the passes that queued meanwhile start from the loop, later */
	if (w->kick_ev)
		event_active(w->kick_ev, EV_TIMEOUT, 1);
}

void
wss_set_idle(struct wss *w, void (*fn)(void *), void *arg)
{
	w->idle_fn = fn;
	w->idle_arg = arg;
}

void
wss_test_no_worker(struct wss *w)
{
	w->wk_off = true;
}

void
wss_test_delay(struct wss *w, unsigned ms)
{
	w->test_delay_ms = ms;
}

void
wss_async_free(struct wss *w)
{
	w->wk = worker_free(w->wk);
	if (w->wk_ev)
		event_free(w->wk_ev);
	if (w->kick_ev)
		event_free(w->kick_ev);
	w->wk_ev = w->kick_ev = NULL;
	if (w->job_t)
		w->job_t->in_pass = false;
	w->job_t = NULL;
}
