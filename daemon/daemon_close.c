/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's close: what fills each part (part_close[]), and the drains
 * (sched, syscalls) and working-set passes a window waits for on their
 * threads before it is handed out (pending_finish).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "burst/burst.h"
#include "cgroup/cgroup.h"
#include "wcpu/wcpu.h"
#include "dmabuf/dmabuf.h"
#include "gpufreq/gpufreq.h"
#include "syscalls/sc_collect.h"
#include "control/control.h"
#include "core/log.h"
#include "core/loopstat.h"
#include "trace/atrace_cat.h"
#include "daemon.h"
#include "export/export.h"
#include "export/otlp.h"
#include "gpumem/gpumem.h"
#include "hp/hp.h"
#include "rpc/rpc.h"
#include "sched/sched.h"
#include "store/store.h"
#include "trace/trace.h"
#include "window/collector.h"
#include "window/window.h"
#include "wss/wss.h"
#include "daemon_int.h"

static void
gpumem_close(struct vitalsd *d, struct window *w)
{
	int r;

	if (d->gm && (r = gpumem_window(d->gm, w)) < 0)
		log_warnx("gpumem: window %llu: %s", (unsigned long long)w->seq,
		    strerror(-r));
}

static void
ftrace_close(struct vitalsd *d, struct window *w)
{
	struct window_trace *t;

	/* the whole part while the trackers fill it, then the head alone
	 * when they kept no rows (always so with ftrace off) */
	if ((t = window_trace_make(w, d->ft != NULL)) == NULL) {
		log_warnx("ftrace: window %llu: %s", (unsigned long long)w->seq,
		    strerror(ENOMEM));
		return;
	}
	t->state = d->ft_state;
	t->err = d->ft_err;
	if (d->ft && window_trace_rows(&t) == 0)
		ftrace_window(d->ft, t);
	atcat_window(d->ac, t);
	window_trace_trim(&t);
	window_part_set(w, WPART_TRACE, t);
}

static void wcpu_close(struct vitalsd *d, struct window *w);
static void wcpu_set(struct window *w, struct window_wcpu *p, int err);
static void sched_after_drain(void *arg, struct bpf_sched *bs,
    struct window_bpf *wb, unsigned hz);

/* The waiting window is handed out once no drain still fills a part. */
static void
pending_finish(struct vitalsd *d)
{
	if (!bpf_sched_async_busy(d->bsa) && !sc_async_busy(d->sca) &&
	    !d->wss_wait)
		collector_close_finish(d->col);
}

/* The syscall part a worker drained (NULL: no memory) into the waiting
 * window. */
static void
sc_finish(struct vitalsd *d, struct window_syscalls *p)
{
	struct window *w = collector_pending(d->col);

	if (w == NULL) {
		sc_collect_part_free(p);
		return;
	}
	if (p == NULL) {
		log_warnx("syscalls: window %llu: %s",
		    (unsigned long long)w->seq, strerror(ENOMEM));
	} else {
		sc_collect_part_free(w->part[WPART_SYSCALLS]);
		window_part_set(w, WPART_SYSCALLS, p);
		sc_health_add(&d->sch, p);
	}
	pending_finish(d);
}

static void
sc_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;
	struct window_syscalls *p;
	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	if (sc_async_done(d->sca, false, &p) > 0)
		sc_finish(d, p);
	loopstat_end("sc drain done", t0);
}

/* Waits for a syscall drain still running and gives its part over. */
static void
sc_settle(struct vitalsd *d)
{
	struct window_syscalls *p;

	if (sc_async_busy(d->sca) && sc_async_done(d->sca, true, &p) > 0)
		sc_finish(d, p);
}

/* The syscall drain's worker, made at the first close (privileges final,
 * as the sched drain's). */
static bool
sc_async_ready(struct vitalsd *d)
{
	int r;

	if (d->sca)
		return true;
	if (d->sca_off || d->stopping)
		return false;
	if ((r = sc_async_new(d->sc, &d->sca)) < 0 ||
	    (d->sca_ev = event_new(d->base, sc_async_fd(d->sca),
		 EV_READ | EV_PERSIST, sc_done_cb, d)) == NULL ||
	    event_add(d->sca_ev, NULL) < 0) {
		log_warnx("syscalls: the drain stays on the loop: %s",
		    strerror(r < 0 ? -r : ENOMEM));
		if (d->sca_ev)
			event_free(d->sca_ev);
		d->sca_ev = NULL;
		d->sca = sc_async_free(d->sca);
		d->sca_off = true;
		return false;
	}
	return true;
}

/* Before d->sc changes or goes: its drain settled, its worker gone. */
void
sc_async_stop(struct vitalsd *d)
{
	sc_settle(d);
	if (d->sca_ev)
		event_free(d->sca_ev);
	d->sca_ev = NULL;
	d->sca = sc_async_free(d->sca);
}

static void
sched_drain_failed(struct vitalsd *d, int r)
{
	if (!d->bpf_warned)
		log_warnx("bpf: drain failed: %s (counted per window)",
		    strerror(-r));
	d->bpf_warned = true;
}

/*
 * The drain a close left to the other thread has ended (r: its result):
 * the waiting window gets its sched and wcpu parts and is handed out.
 */
static void
sched_finish(struct vitalsd *d, int r)
{
	struct window *w = collector_pending(d->col);
	struct window_bpf *b;
	struct window_wcpu *p;

	/* reduced and weighed on the drain's thread (sched_after_drain),
	 * out of the window meanwhile */
	if ((b = d->bsa_part) != NULL) {
		p = d->bsa_wcpu;
		d->bsa_part = NULL;
		d->bsa_wcpu = NULL;
		if (w == NULL) {
			window_bpf_release(b);
			free(b);
			window_wcpu_free(p);
			return;
		}
		window_part_set(w, WPART_SCHED, b);
		if (r < 0)
			sched_drain_failed(d, r);
		wcpu_set(w, p, d->bsa_wcpu_err);
		pending_finish(d);
		return;
	}
	if (w == NULL)
		return;
	if (window_sched(w) != NULL && r < 0)
		sched_drain_failed(d, r);
	wcpu_close(d, w);
	bpf_sched_batch_trim(d->bs);
	pending_finish(d);
}

static void
sched_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;
	int r;

	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	if (bpf_sched_async_done(d->bsa, false, &r) > 0)
		sched_finish(d, r);
	loopstat_end("sched drain done", t0);
}

/* Waits for a drain still running and hands its window out. */
void
sched_settle(struct vitalsd *d)
{
	int r;

	if (bpf_sched_async_busy(d->bsa) &&
	    bpf_sched_async_done(d->bsa, true, &r) > 0)
		sched_finish(d, r);
	sc_settle(d);
	/* a window waiting for a pass: its end fills the part (passes with
	 * no window waiting are not waited for) */
	if (d->wss_wait)
		wss_settle(d->wss);
}

/* The drain's thread, made at the first close (privileges final). */
static bool
sched_async_ready(struct vitalsd *d)
{
	int r;

	if (d->bsa)
		return true;
	if (d->bsa_off || d->stopping)
		return false;
	if ((r = bpf_sched_async_new(d->bs, &d->bsa)) < 0 ||
	    (r = bpf_sched_async_after(d->bsa, sched_after_drain, d)) < 0 ||
	    (d->bsa_ev = event_new(d->base, bpf_sched_async_fd(d->bsa),
		 EV_READ | EV_PERSIST, sched_done_cb, d)) == NULL ||
	    event_add(d->bsa_ev, NULL) < 0) {
		log_warnx("bpf: the drain stays on the loop: %s",
		    strerror(r < 0 ? -r : ENOMEM));
		if (d->bsa_ev)
			event_free(d->bsa_ev);
		d->bsa_ev = NULL;
		d->bsa = bpf_sched_async_free(d->bsa);
		d->bsa_off = true;
		return false;
	}
	return true;
}

/*
 * The sched part: the state always (the head alone when BPF is off), then
 * what the kernel counted since the last window. The flip is the window's
 * edge, here; the grace period after it and the reads go to the drain's
 * thread (1: the window waits for them), except when the loop is over.
 */
static int
sched_close(struct vitalsd *d, struct window *w)
{
	struct window_bpf *b;
	int r;

	if ((b = window_sched_make(w, d->bs != NULL)) == NULL) {
		log_warnx("bpf: window %llu: %s", (unsigned long long)w->seq,
		    strerror(ENOMEM));
		return 0;
	}
	b->state = d->bpf_state;
	b->err = d->bpf_err;
	b->max_procs = d->bpf_procs;
	b->max_threads = d->bpf_threads;
	if (d->bs == NULL)
		return 0;
	/* read-only pins: the snapshot is the edge, taken here */
	if (!d->stopping && bpf_sched_needs_grace(d->bs) &&
	    sched_async_ready(d)) {
		/* the reduce too, off the loop (sched_async.c) */
		if ((r = bpf_sched_async_reduce_into(d->bsa, b, w->hz)) == 0 &&
		    (r = bpf_sched_async_start(d->bsa)) == 0) {
			window_part_set(w, WPART_SCHED, NULL);
			d->bsa_part = b;
			return 1;
		}
		(void)bpf_sched_async_reduce_into(d->bsa, NULL, 0);
		/* the flip failed: nothing drained, as on the loop */
		b->drain_fail++;
		sched_drain_failed(d, r);
		return 0;
	}
	if ((r = bpf_sched_window(d->bs, b, w->hz)) < 0)
		sched_drain_failed(d, r);
	return 0;
}

/* The working-set targets' part (wss_window.c); 1 while a pass runs on
 * its worker: filled between two passes (wss_idle_cb), the window waits. */
static int
wss_close(struct vitalsd *d, struct window *w)
{
	if (d->wss == NULL)
		return 0;
	if (!d->stopping && wss_busy(d->wss)) {
		d->wss_wait = true;
		return 1;
	}
	if (wss_window_fill(d->wss, w) < 0)
		log_warnx("wss: window %llu: out of memory",
		    (unsigned long long)w->seq);
	return 0;
}

void
wss_idle_cb(void *arg)
{
	struct vitalsd *d = arg;
	struct window *w = collector_pending(d->col);

	if (!d->wss_wait)
		return;
	d->wss_wait = false;
	if (w && wss_window_fill(d->wss, w) < 0)
		log_warnx("wss: window %llu: out of memory",
		    (unsigned long long)w->seq);
	pending_finish(d);
}

/*
 * What fills each part of a closing window, one line per part, in this
 * order: ftrace first, its drain hands gpu_mem events to the GpuMem
 * window before that closes.
 */

/* The cgroup walk, once per window; a change of state is logged once. */
static void
cgroup_close(struct vitalsd *d, struct window *w)
{
	unsigned st;
	int r, err;

	if (d->cg == NULL)
		return;
	if ((r = cgroup_window(d->cg, w)) < 0)
		log_warnx("cgroup: window %llu: %s", (unsigned long long)w->seq,
		    strerror(-r));
	st = cgroup_state(d->cg, &err);
	if (st == d->cg_state)
		return;
	d->cg_state = st;
	log_info("cgroup: %s%s%s%s%s", cg_state_name(st),
	    st == CG_STATE_OK ? " at " : "",
	    st == CG_STATE_OK ? cgroup_root(d->cg) : "", err ? ": " : "",
	    err ? strerror(-err) : "");
}

/*
 * Capacity-weighted CPU, the kernel's weighting: the BPF rows of the last
 * drain's batch b, kept to those of the window's sched part sb (both from
 * the same drains). On the drain's thread after its reduce
 * (sched_after_drain), or on the loop (wcpu_close); the loop touches
 * neither the batch nor the wcpu_* bases while a drain runs. A batch is
 * weighed once: a window whose sched_close did not drain (no memory for
 * its part) finds the last window's batch here. NULL: no memory for the
 * part; *ret_err < 0: none for its rows (the part keeps the
 * approximation).
 */
static struct window_wcpu *
wcpu_make(struct vitalsd *d, const struct bpf_sched_batch *b, unsigned hz,
    const struct window_bpf *sb, int *ret_err)
{
	struct window_wcpu *p;
	uint64_t nocap = 0, nofreq = 0;

	*ret_err = 0;
	if ((p = window_wcpu_new()) == NULL)
		return NULL;
	if (b == NULL || b->diff || (d->wcpu_have_gen && b->gen == d->wcpu_gen))
		return p;
	d->wcpu_gen = b->gen;
	d->wcpu_have_gen = true;
	if (d->wcpu_have_tot) {
		nocap = b->tot[VBPF_TOT_WTD_NOCAP] - d->wcpu_tot[0];
		nofreq = b->tot[VBPF_TOT_WTD_NOFREQ] - d->wcpu_tot[1];
	}
	d->wcpu_tot[0] = b->tot[VBPF_TOT_WTD_NOCAP];
	d->wcpu_tot[1] = b->tot[VBPF_TOT_WTD_NOFREQ];
	d->wcpu_have_tot = true;
	if ((*ret_err = wcpu_bpf_add(p, b, hz, nocap, nofreq)) == 0)
		wcpu_keep_bpf_rows(p, sb);
	return p;
}

/* p into w as its wcpu part, with the approximation from w's CPUs (the
 * loop's figures); p NULL: no memory, no part. err: wcpu_make's. */
static void
wcpu_set(struct window *w, struct window_wcpu *p, int err)
{
	if (p == NULL || err < 0)
		log_warnx("wcpu: window %llu: %s", (unsigned long long)w->seq,
		    strerror(p == NULL ? ENOMEM : -err));
	if (p == NULL)
		return;
	wcpu_approx_add(p, w);
	window_wcpu_free(window_wcpu(w));
	window_part_set(w, WPART_WCPU, p);
}

/* The wcpu part on the loop: the approximation, and the kernel's
 * weighting from the drain sched_close just made (so it comes after
 * sched_close in parts_close_cb). */
static void
wcpu_close(struct vitalsd *d, struct window *w)
{
	struct window_wcpu *p;
	int err;

	p = wcpu_make(d, bpf_sched_last_batch(d->bs), w->hz, window_sched(w),
	    &err);
	wcpu_set(w, p, err);
}

/*
 * On the drain's thread after its reduce into the waiting window's sched
 * part wb: the kernel's weighting (wcpu_make: the batch's rows sorted,
 * folded and kept to wb's, the larger share of what the drain's end cost
 * the loop) and the batch's rows freed (~1 MiB at 2,100 tasks). The loop
 * takes the part at sched_finish.
 */
static void
sched_after_drain(void *arg, struct bpf_sched *bs, struct window_bpf *wb,
    unsigned hz)
{
	struct vitalsd *d = arg;

	d->bsa_wcpu = wcpu_make(d, bpf_sched_last_batch(bs), hz, wb,
	    &d->bsa_wcpu_err);
	bpf_sched_batch_trim(bs);
}

/* DMA-BUF: a pass when one is due (dmabuf_interval_s), given to w */
static void
dmabuf_close(struct vitalsd *d, struct window *w)
{
	int r;

	if (d->db && (r = dmabuf_window(d->db, w, w->mono_end_ns)) < 0)
		log_warnx("dmabuf: window %llu: %s", (unsigned long long)w->seq,
		    strerror(-r));
}

/* GPU frequency: the devices' figures since the last close, given to w */
static void
gpufreq_close(struct vitalsd *d, struct window *w)
{
	int r;

	if (d->gf && (r = gpufreq_window(d->gf, w)) < 0)
		log_warnx("gpufreq: window %llu: %s",
		    (unsigned long long)w->seq, strerror(-r));
}

/* Syscall latency: the drained part, or one saying why there is none;
 * off: no part at all. The flip here, the rest on the worker (1: the
 * window waits for it), except when the loop is over. */
static int
syscalls_close(struct vitalsd *d, struct window *w)
{
	struct window_syscalls *p;
	int r;

	if (d->sc != NULL && !d->stopping && sc_async_ready(d)) {
		if ((r = sc_async_start(d->sca)) == 0)
			return 1;
		/* -EBUSY: never, sched_settle took the last one */
		log_warnx("syscalls: window %llu: %s",
		    (unsigned long long)w->seq, strerror(-r));
		return 0;
	}
	if (d->sc != NULL) {
		if ((r = sc_window(d->sc, w)) < 0)
			log_warnx("syscalls: window %llu: %s",
			    (unsigned long long)w->seq, strerror(-r));
		else
			sc_health_add(&d->sch, w->part[WPART_SYSCALLS]);
		return 0;
	}
	if (d->sc_state == SC_OFF || w->part[WPART_SYSCALLS] != NULL)
		return 0;
	if ((p = sc_state_part(d->sc_state, d->sc_err)) != NULL)
		window_part_set(w, WPART_SYSCALLS, p);
	return 0;
}

static void (*const part_close[])(struct vitalsd *, struct window *) = {
	ftrace_close,
	gpumem_close,
	cgroup_close,
	dmabuf_close,
	gpufreq_close,
};

/*
 * The closing window gets what each signal counted since the last one;
 * then the syscall part and the sched part, and the capacity-weighted CPU
 * that needs the sched drain (1 when a drain runs on: the window waits
 * for sc_finish and sched_finish, pending_finish hands it out).
 */
int
parts_close_cb(struct window *w, void *arg)
{
	struct vitalsd *d = arg;
	struct loopstat ls;
	size_t i;
	int later;

	/* the loop's longest callback since the last close */
	loopstat_take(&ls);
	w->health.loop_cb_ns_max = ls.max_ns;
	memcpy(w->health.loop_cb_what, ls.what, sizeof(ls.what));
	w->health.loop_cb_over_1ms = ls.over;
	w->health.loop_cb_cpu_ns = ls.cpu_ns;
	for (i = 0; i < sizeof(part_close) / sizeof(part_close[0]); i++)
		part_close[i](d, w);
	later = wss_close(d, w);
	later |= syscalls_close(d, w);
	if (sched_close(d, w) > 0)
		return 1;
	wcpu_close(d, w);
	bpf_sched_batch_trim(d->bs);
	return later;
}
