/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sampling tick and what becomes of a closed window: the sample on
 * the timer's grid, burst sampling, the window's line and its hand-over to
 * the writer, heapprofd, burst rules and the exporter.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "burst/burst.h"
#include "wcpu/wcpu.h"
#include "gpufreq/gpufreq.h"
#include "control/control.h"
#include "core/log.h"
#include "core/loopstat.h"
#include "core/util.h"
#include "daemon.h"
#include "export/export.h"
#include "export/otlp.h"
#include "gpumem/gpumem.h"
#include "hp/hp.h"
#include "rpc/rpc.h"
#include "syscalls/sc_collect.h"
#include "sched/sched.h"
#include "store/store.h"
#include "trace/trace.h"
#include "window/collector.h"
#include "window/window.h"
#include "wss/wss.h"
#include "daemon_int.h"

static void gpumem_sample(struct vitalsd *d, int64_t mono_ns);

/*
 * A window's line, "window N: ..., store ...", once the writer has
 * committed it: a kill after the line loses at most the open window. When
 * it was not committed (the store fails, the queue dropped it) the line
 * says why.
 */
void
window_done(void *arg, const struct writer_done *dn)
{
	struct vitalsd *d = arg;
	struct vbuf b = { 0 };
	struct store_stats st;
	unsigned queued;
	uint64_t dropped;
	const char *why;

	writer_get(d->wr, &st, &queued, &dropped);
	if (dn->err == -ENOBUFS)
		why = "not stored: the write queue was full";
	else if (dn->err < 0)
		why = dn->final ? "not stored" : "not committed yet";
	else
		why = NULL;
	vbuf_printf(&b, "%s, store %s (queued %u, dropped %llu", dn->note,
	    store_state_name(st.state), queued, (unsigned long long)dropped);
	if (why && dn->err != -ENOBUFS)
		vbuf_printf(&b, ": %s: %s", why,
		    st.last_err ? st.last_errmsg : strerror(-dn->err));
	else if (why)
		vbuf_printf(&b, ": %s", why);
	else if (st.last_err)
		vbuf_printf(&b, ": %s", st.last_errmsg);
	vbuf_printf(&b, ")");
	if (b.p)
		log_info("%s", b.p);
	vbuf_release(&b);
}

void
writer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;

	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	writer_each_done(d->wr, window_done, d);
	loopstat_end("writer done", t0);
}

void
window_log_cb(const struct window *w, void *arg)
{
	struct vitalsd *d = arg;
	struct vbuf b = { 0 };
	int r;

	dump_summary_line(w, &b);
	/* Queued, not waited for: the line comes when the writer says the
	 * window is committed (window_done). */
	if (d->wr && (r = writer_submit_note(d->wr, w, b.p ? b.p : "")) < 0)
		log_warnx("%s; not queued for the store: %s", b.p ? b.p : "",
		    strerror(-r));
	else if (d->wr == NULL && b.p)
		log_info("%s", b.p);
	vbuf_release(&b);
	/* heapprofd rules look at every closed window but the
	 * last: a session started while stopping would be killed at once
	 * and still spend its budget */
	if (d->hp && !d->stopping)
		heapprofd_window(d->hp, w);
	if (d->bu && !d->stopping) {
		struct clocks now;

		collector_clocks(&now);
		burst_window(d->bu, w, now.mono_ns, now.wall_ns);
	}
	if (d->ex)
		export_window(d->ex, w);
}

void
arm_tick(struct vitalsd *d, int64_t now_ns)
{
	int64_t delay = d->next_ns - now_ns;
	struct timeval tv;

	if (delay < 0)
		delay = 0;
	tv.tv_sec = delay / NSEC_PER_SEC;
	tv.tv_usec = (delay % NSEC_PER_SEC) / NSEC_PER_USEC;
	event_add(d->tick, &tv);
}

/* The CPUs' scales as just sampled, into the kernel's weighting; a
 * window just opened has none yet: the ones written stay. */
static void
wcpu_push_scale(struct vitalsd *d)
{
	uint32_t cap[VITALS_CPU_MAX], freq[VITALS_CPU_MAX];
	const struct window *w;
	unsigned n;

	if (d->bs == NULL || (w = collector_open(d->col)) == NULL ||
	    w->samples == 0)
		return;
	n = wcpu_scales(w, cap, freq, VITALS_CPU_MAX);
	(void)bpf_sched_set_scale(d->bs, cap, freq, n);
}

static void tick_sample(struct vitalsd *d, const struct clocks *now);

/*
 * The tick's first part: the drain settled, the timer's lateness, and the
 * sample made ready (collector_prepare). When its process scan walks
 * every task, the walk goes to the scan's worker and the sample runs at
 * its end (tick_walked); else the sample runs now.
 */
static bool
tick_run(struct vitalsd *d)
{
	uint64_t held, runq;
	int64_t step;
	struct clocks now;

	/* a drain still running (never so 10 s after its start) ends
	 * before anything else can close a window */
	sched_settle(d);
	collector_clocks(&now);
	gpumem_sample(d, now.mono_ns);
	if (d->gf)
		gpufreq_tick(d->gf);
	d->tick_burst = d->burst_until_ns > now.mono_ns;
	if (!d->tick_burst && d->cur_ms != d->interval_ms) {
		d->cur_ms = d->interval_ms;
		collector_set_interval(d->col, d->cur_ms);
		log_info("burst sampling ended");
	}
	step = (int64_t)d->cur_ms * NSEC_PER_MSEC;
	if (now.mono_ns - d->next_ns > step / 2)
		collector_note_late(d->col);
	if (!loopstat_late(d->next_ns, now.mono_ns, &held, &runq))
		runq = UINT64_MAX; /* no schedstat: unknown, not 0 */
	collector_note_tick(d->col, now.mono_ns - d->next_ns, held, runq);
	if (collector_prepare(d->col, &now) > 0)
		return false;
	tick_sample(d, &now);
	return true;
}

/* The sample at now and what follows it; the next tick armed. */
static void
tick_sample(struct vitalsd *d, const struct clocks *now)
{
	int64_t step = (int64_t)d->cur_ms * NSEC_PER_MSEC, after;
	int r;

	if ((r = collector_sample(d->col, now, d->tick_burst)) < 0)
		log_warnx("sample failed: %s", strerror(-r));
	if (d->bu) {
		struct clocks clk;
		const struct sys_sample *sys = collector_last_sys(d->col, &clk);

		burst_sample(d->bu, sys, clk.mono_ns, clk.wall_ns);
	}
	wcpu_push_scale(d);
	/* the ftrace reader's timed drain in this wake-up of the loop */
	ftrace_after_sample(d->ft);
	/* the slow calls under the ring's wake-up fill, in the same one */
	if (d->sc)
		(void)sc_poll(d->sc);
	/* the exporter's walk of the process table; the page waits for a
	 * scrape */
	if (d->ex && (r = export_sample(d->ex)) < 0)
		log_debug("metrics: sample not exported: %s", strerror(-r));

	/* a rule that started a burst in this tick (at a window close or
	 * above) has put the timer on the burst's grid already */
	if (d->cur_ms * NSEC_PER_MSEC != step)
		return;
	/* Keep to the grid; after a stall skip the missed ticks. */
	after = clock_ns(CLOCK_MONOTONIC);
	d->next_ns += step;
	if (d->next_ns <= after)
		d->next_ns = after + step;
	arm_tick(d, after);
}

/* The sample, and the window's close when it is due (the close takes the
 * longest callback so far: this one counts in the next window). */
void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;
	int64_t t0 = loopstat_begin();
	bool done;

	(void)fd;
	(void)what;
	/* a sample whose walk is still out (the timer was armed again
	 * meanwhile: a burst): it runs, and arms the next, at the walk's end */
	if (collector_walk_owed(d->col)) {
		loopstat_end("tick", t0);
		return;
	}
	done = tick_run(d);
	loopstat_end("tick", t0);
	if (done)
		loopstat_tick_end();
}

/* The sample of a tick whose walk ran on the scan's worker, now that it
 * has ended (collector_walk_async's continuation). */
void
tick_walked(void *arg)
{
	struct vitalsd *d = arg;
	int64_t t0 = loopstat_begin();
	struct clocks now;

	/* a close since the tick's first part (outside a sample: today
	 * only the stop's) may have started a drain: it ends before this
	 * sample can close */
	sched_settle(d);
	collector_clocks(&now);
	tick_sample(d, &now);
	loopstat_end("tick walked", t0);
	loopstat_tick_end();
}

void
vitalsd_burst(struct vitalsd *d, unsigned duration_ms)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);

	if (duration_ms == 0 || duration_ms > VITALS_BURST_MAX_MS)
		duration_ms = VITALS_BURST_MAX_MS;
	d->burst_until_ns = now + (int64_t)duration_ms * NSEC_PER_MSEC;
	if (d->cur_ms != VITALS_BURST_INTERVAL_MS &&
	    d->interval_ms > VITALS_BURST_INTERVAL_MS) {
		d->cur_ms = VITALS_BURST_INTERVAL_MS;
		collector_set_interval(d->col, d->cur_ms);
		d->next_ns = now + (int64_t)d->cur_ms * NSEC_PER_MSEC;
		arm_tick(d, now);
	}
	log_info("burst sampling every %u ms for %u ms",
	    VITALS_BURST_INTERVAL_MS, duration_ms);
}

void
burst_cb(void *arg, unsigned duration_ms)
{
	vitalsd_burst(arg, duration_ms);
}

int64_t
burst_until_cb(void *arg)
{
	return ((struct vitalsd *)arg)->burst_until_ns;
}

/* A traversal per tick; a change of state is logged once. */
static void
gpumem_sample(struct vitalsd *d, int64_t mono_ns)
{
	unsigned st, why;
	int err;

	if (d->gm == NULL)
		return;
	(void)gpumem_tick(d->gm, mono_ns); /* failures: in the window */
	st = gpumem_state(d->gm, &why, &err);
	if (why == d->gm_why)
		return;
	d->gm_why = why;
	log_info("gpumem: %s%s%s%s%s", gpumem_state_name(st), why ? ": " : "",
	    gpumem_why_name(why), err ? ": " : "", err ? strerror(-err) : "");
}
