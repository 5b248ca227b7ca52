/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A full walk read off the loop (issue 20; doc/bpf.md, "Full walks"). The
 * iterator's walk of every task is the loop's longest work: at 2,100 tasks
 * 4 ms of the kernel running taskiter_dump into the read and 1.5 ms of
 * parse (bench/README.md, "What the tick does at 2,100 tasks"). When the
 * sample due now will walk, the tick starts the walk here (the sched
 * accounting's baseline read first, then the walk, as the sample reads
 * them on the loop) and returns; the walk's end comes back through the
 * worker's eventfd and the continuation runs the sample with the walk's
 * snapshot. The loop serves everything else meanwhile.
 *
 * Ownership: the taskiter (its buffers, its snapshot) is the worker's from
 * worker_start until the loop took the result (worker_done); the loop
 * touches it only through procscan_walk_cancel, which waits for the job
 * first. A result is used only by the sample it was started for: one that
 * closes the window if it was started for a close, one that does not if
 * not, and with the same taskiter; any other is dropped (counted) and the
 * sample walks on the loop as it would have.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include <event2/event.h>

#include "core/worker.h"
#include "proc/proc.h"
#include "proc_scan_int.h"

struct walk_async {
	struct worker *wk;
	struct event *ev;
	void (*cb)(void *arg); /* the sample's continuation, on the loop */
	void *cb_arg;
	/* the job: set by the loop before worker_start, its results by the
	 * worker, the loop's again once taken */
	struct taskiter *ti;
	struct walk_result res;
	bool named; /* the worker's thread named (the worker's) */
	/* the loop's */
	bool owed;  /* a continuation is due (started, not yet called) */
	bool ready; /* a result taken from the worker, not yet used */
	bool full;  /* started for a sample that closes the window */
	int64_t start_ns;
	uint64_t ti_bytes; /* taskiter_bytes at the start (health) */
	uint32_t dropped;  /* results dropped, not yet in a window */
};

/* The walk's reads, in the sample's order: the baseline, then the walk
 * (tests: after delay_ms). They touch ti alone: the scan's inline walk
 * and the worker's job both make them. */
void
walk_read(struct taskiter *ti, struct walk_result *wr)
{
	if (wr->delay_ms > 0)
		nap_ms(wr->delay_ms);
	wr->state_r = wr->want_state ?
	    taskiter_ev_state(ti, &wr->gen, &wr->doubt) :
	    0;
	wr->read_r = taskiter_read(ti, &wr->snap);
}

/* On the worker: what the sample reads before it walks, then the walk. */
static int
walk_job(void *arg)
{
	struct walk_async *wa = arg;

	/* its own name, so that top -H and bench/peers.sh tell its CPU from
	 * the other workers' */
	if (!wa->named) {
		(void)prctl(PR_SET_NAME, "vitalsd-walk", 0, 0, 0);
		wa->named = true;
	}
	walk_read(wa->ti, &wa->res);
	return 0;
}

/* The job's result taken (wait: until it ends); 1 when one was. */
static int
walk_take(struct walk_async *wa, bool wait)
{
	int r;

	if (!worker_busy(wa->wk) || worker_done(wa->wk, wait, &r) <= 0)
		return 0;
	wa->ready = true;
	return 1;
}

static void
walk_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct walk_async *wa = arg;

	(void)fd;
	(void)what;
	(void)walk_take(wa, false);
	/* still running (a wake-up for an earlier job), or nothing owed */
	if (worker_busy(wa->wk) || !wa->owed)
		return;
	wa->owed = false;
	wa->cb(wa->cb_arg);
}

int
procscan_walk_async(struct procscan *ps, struct event_base *base,
    void (*cb)(void *arg), void *arg)
{
	struct walk_async *wa;
	int r;

	if (ps->wa != NULL)
		return 0;
	if (base == NULL || cb == NULL)
		return -EINVAL;
	if ((wa = calloc(1, sizeof(*wa))) == NULL)
		return -ENOMEM;
	wa->cb = cb;
	wa->cb_arg = arg;
	if ((r = worker_new(&wa->wk)) < 0) {
		free(wa);
		return r;
	}
	/* the continuation is the tick's: as urgent as the tick (the
	 * daemon's priority 0; a base without priorities has only it) */
	if ((wa->ev = event_new(base, worker_fd(wa->wk), EV_READ | EV_PERSIST,
		 walk_done_cb, wa)) == NULL ||
	    event_priority_set(wa->ev, 0) < 0 || event_add(wa->ev, NULL) < 0) {
		if (wa->ev)
			event_free(wa->ev);
		worker_free(wa->wk);
		free(wa);
		return -ENOMEM;
	}
	ps->wa = wa;
	return 0;
}

void
walk_async_free(struct procscan *ps)
{
	struct walk_async *wa = ps->wa;

	if (wa == NULL)
		return;
	event_free(wa->ev);
	/* a walk under way ends (a read of the kernel's, bounded) */
	worker_free(wa->wk);
	free(wa);
	ps->wa = NULL;
}

void
procscan_walk_delay_test(struct procscan *ps, unsigned ms)
{
	ps->walk_delay_ms = ms;
}

int
walk_async_start(struct procscan *ps, bool want_state, bool full)
{
	struct walk_async *wa = ps->wa;

	if (wa == NULL || wa->owed || wa->ready || worker_busy(wa->wk))
		return 0;
	wa->ti = ps->ti;
	wa->res.want_state = want_state;
	wa->res.delay_ms = ps->walk_delay_ms;
	wa->full = full;
	wa->ti_bytes = taskiter_bytes(ps->ti);
	wa->start_ns = clock_ns(CLOCK_MONOTONIC);
	if (worker_start(wa->wk, walk_job, wa) < 0)
		return 0;
	wa->owed = true;
	return 1;
}

bool
procscan_walk_owed(const struct procscan *ps)
{
	return ps->wa != NULL && ps->wa->owed;
}

void
procscan_walk_cancel(struct procscan *ps)
{
	struct walk_async *wa = ps->wa;

	if (wa == NULL)
		return;
	(void)walk_take(wa, true);
	if (wa->ready) {
		wa->ready = false;
		wa->dropped++;
	}
	/* the sample it was for still runs: its continuation, next round
	 * of the loop (the eventfd was read above) */
	if (wa->owed)
		event_active(wa->ev, EV_READ, 0);
}

bool
walk_async_bytes(const struct procscan *ps, uint64_t *ret)
{
	const struct walk_async *wa = ps->wa;

	if (wa == NULL || !worker_busy(wa->wk))
		return false;
	*ret = wa->ti_bytes;
	return true;
}

const struct walk_result *
walk_async_take(struct procscan *ps, const struct scan_ctx *ctx,
    struct window *w)
{
	struct walk_async *wa = ps->wa;
	int64_t ns;

	if (wa == NULL)
		return NULL;
	w->health.walks_dropped += wa->dropped;
	wa->dropped = 0;
	if (!wa->ready)
		return NULL;
	wa->ready = false;
	if (wa->full != ctx->full || wa->ti != ps->ti) {
		/* read for another sample (a close came sooner, or the
		 * iterator was loaded again): this one reads its own */
		w->health.walks_dropped++;
		return NULL;
	}
	w->health.walks_off_loop++;
	ns = clock_ns(CLOCK_MONOTONIC) - wa->start_ns;
	if (ns > 0 && (uint64_t)ns > w->health.walk_wait_ns_max)
		w->health.walk_wait_ns_max = (uint64_t)ns;
	return &wa->res;
}

void
procscan_walk_unused(struct procscan *ps)
{
	struct walk_async *wa = ps->wa;

	if (wa != NULL && wa->ready) {
		wa->ready = false;
		wa->dropped++;
	}
}
