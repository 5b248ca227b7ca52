/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process scan's sample: its source chosen, and the iterator source
 * (proc_scan.c has the per-instance logic and /proc): full walks, and the
 * partial samples of the event-driven scan (doc/bpf.md, "Event-driven samples") — whole thread
 * groups that ran or lost a thread since the window's flip, the others
 * settled lazily from the window's sample history.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"
#include "taskiter/taskiter.h"
#include "window/window.h"
#include "proc_scan_int.h"

/* Iterator reads failing this many scans in a row retire it for /proc. */
#define TASKITER_MAX_FAILS 3

/*
 * The sched accounting's maps (ev, NULL: none of ours): partial samples
 * read them. With the iterator already the source it is loaded again,
 * with its partial programs; the maps are only used during that load.
 */
int
procscan_set_events(struct procscan *ps, const struct taskiter_events *ev,
    const char *sys_root)
{
	enum scanner_why why;
	enum partial_why pwhy;
	struct taskiter *ti;
	int r, perr;

	ps->want_events = ev != NULL;
	if (ev != NULL)
		ps->ev = *ev;
	if (ps->ti == NULL)
		return 0;
	/* a walk under way reads through the one replaced below */
	procscan_walk_cancel(ps);
	/* the running one stays unless the new one loads */
	if ((r = taskiter_open_ev(ps->hz, sys_root, ev, &ti, &why, &pwhy,
		 &perr)) < 0)
		return r;
	taskiter_free(ps->ti);
	ps->ti = ti;
	ps->pwhy = pwhy;
	ps->perr = perr;
	ps->need_full = true;
	return 0;
}

void
procscan_set_walk_period(struct procscan *ps, uint64_t period_ns)
{
	ps->walk_period_ns = period_ns;
}

/* Tests only: the partial reads' paths left out (TASKITER_READ_NO_*). */
void
procscan_partial_test(struct procscan *ps, unsigned flags)
{
	ps->test_flags = flags &
	    (TASKITER_READ_NO_MAPS | TASKITER_READ_NO_CPUS);
}

/*
 * Whether a window close may read partially instead of walking
 * (doc/bpf.md, "Full walks"): the sched accounting flipped right before
 * it (so the read takes the window up to the flip and what ran since),
 * and the last full walk is less than the period ago — within half a
 * sample, so that a period of whole windows walks at the close that ends
 * it, not one window later. A boot time of 0 (unknown) says nothing of
 * when the last walk was: the close walks.
 */
static bool
close_may_skip_walk(const struct procscan *ps, const struct scan_ctx *ctx)
{
	int64_t since, half = 0;

	if (!ctx->flipped || ps->walk_period_ns == 0 || !ps->have_walk ||
	    ctx->boot_ns == 0 || ps->walk_boot_ns == 0)
		return false;
	since = ctx->boot_ns - ps->walk_boot_ns;
	if (ctx->have_prev && ctx->boot_ns > ctx->prev_boot_ns)
		half = (ctx->boot_ns - ctx->prev_boot_ns) / 2;
	return since >= 0 && (uint64_t)(since + half) < ps->walk_period_ns;
}

/* Tests, the benchmark: every sample a full walk (on), or as chosen. */
void
procscan_force_full(struct procscan *ps, bool on)
{
	ps->force_full = on;
}

/*
 * An iterator task as /proc would print it: the same fields, CPU split and
 * converted to ticks the way do_task_stat() does (see doc/metrics.md).
 * known is the instance this read continues, NULL for a new one: its own
 * split is the starting point, else the kernel's. ret_cpu: the new split.
 */
static void
iter_to_stat(const struct procscan *ps, const struct iter_task *it,
    const struct task *known, struct cputime_split *ret_cpu,
    struct pid_stat *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->pid = it->tid;
	memcpy(ret->comm, it->comm, sizeof(ret->comm));
	ret->minflt = it->minflt;
	ret->majflt = it->majflt;
	ret->starttime = it->starttime;
	ret->start_ns = it->start_ns;
	ret->rss_pages = it->rss_pages;
	*ret_cpu = known ? known->cpu : it->prev;
	if (known && taskiter_cputime_kept(it, ret_cpu)) {
		/* no new runtime: the split, so the ticks, are the last ones */
		ret->utime = known->utime;
		ret->stime = known->stime;
		return;
	}
	taskiter_cputime_ticks(it, ret_cpu, ps->hz, &ret->utime, &ret->stime);
}

static int
scan_iter_threads(struct procscan *ps, struct task *p,
    const struct taskiter_snap *snap, const struct iter_task *pi,
    const struct scan_ctx *ctx, struct window *w)
{
	uint32_t i;
	int r;

	for (i = pi->first; i < pi->first + pi->nthreads; i++) {
		const struct iter_task *it = &snap->threads[i];
		struct cputime_split cpu;
		struct pid_stat st;
		struct task *t;

		t = ht_get(&ps->threads, it->tid);
		iter_to_stat(ps, it,
		    t && t->cpu_set && t->proc == p &&
			    t->wt.starttime == it->starttime ?
			t :
			NULL,
		    &cpu, &st);
		if ((r = thread_observe(ps, p, it->tid, t, &st, ctx, w, &t)) <
		    0)
			return r;
		t->cpu = cpu;
		t->cpu_set = true;
	}
	threads_retire_unseen(ps, p, w);
	return 0;
}

int
scan_iter(struct procscan *ps, const struct taskiter_snap *snap,
    const struct scan_ctx *ctx, struct window *w)
{
	size_t i;
	int r;

	for (i = 0; i < snap->nprocs; i++) {
		const struct iter_task *pi = &snap->procs[i];
		struct cputime_split cpu;
		struct pid_stat st;
		struct task *p;
		bool moved;

		/*
		 * Threads without their leader: the group was being torn
		 * down (or exec'd) while the iterator walked it. /proc would
		 * not have listed it either.
		 */
		if (!pi->leader) {
			w->inv_deltas[INV_VANISHED]++;
			continue;
		}
		p = ht_get(&ps->procs, pi->tgid);
		/* a group a partial read wrote twice (its marks are an LRU)
		 * counts once */
		if (p != NULL && p->seen_gen == ps->gen &&
		    p->wt.starttime == pi->starttime)
			continue;
		iter_to_stat(ps, pi,
		    p && p->cpu_set && p->wt.starttime == pi->starttime ? p :
									  NULL,
		    &cpu, &st);
		if ((r = proc_observe(ps, pi->tgid, p, &st, true, pi->uid, ctx,
			 w, &p, &moved)) < 0)
			return r;
		p->cpu = cpu;
		p->cpu_set = true;
		if (threads_wanted(ps, moved)) {
			if ((r = scan_iter_threads(ps, p, snap, pi, ctx, w)) <
			    0)
				return r;
		} else if (ps->mode == THREADS_CHANGED && ctx->valid) {
			threads_unmoved(ps, p);
		}
	}
	return 0;
}

/*
 * A partial sample, when it may be one (doc/bpf.md, "Event-driven
 * samples"): the previous sample walked or read partially with the
 * iterator, nothing asks for a full walk, and the read itself says the
 * live side is whole: the generation of the last full walk (no flip
 * since), the doubt counters unchanged. 0: *ret_snap is partial; else a
 * full walk stands in.
 */
int
try_partial(struct procscan *ps, const struct scan_ctx *ctx, struct window *w,
    const struct taskiter_snap **ret_snap)
{
	struct taskiter_end end;
	uint64_t nostore, expect;
	unsigned flags = ps->test_flags;
	int r;

	if (ctx->full)
		ps->doubt_row = 0;
	if (ps->doubt_row >= PARTIAL_MAX_DOUBTS)
		return 1;
	if (!taskiter_partial_on(ps->ti) || ps->pwhy != PARTIAL_WHY_NONE ||
	    ps->need_full || ps->force_full || !ps->have_last ||
	    ps->last != SCANNER_BPF)
		return 1;
	if (ctx->full && !close_may_skip_walk(ps, ctx))
		return 1;
	/* a close after the flip: both sides, the generation one on */
	if (ctx->full)
		flags |= TASKITER_READ_BOTH;
	/*
	 * A flip after the last full walk without one before this sample
	 * (a close that walked, then flipped: a test's order, or a window
	 * closed between samples): the new side holds all since the flip,
	 * and what ran between the walk and the flip shows at the next full
	 * walk (doc/bpf.md).
	 */
	if (ps->last_full && !ctx->full) {
		uint64_t gen;

		if ((r = taskiter_ev_gen(ps->ti, &gen)) < 0) {
			ps->perr = -r;
			return 1;
		}
		if (gen == ps->ev_gen + 1)
			ps->ev_gen = gen;
	}
	expect = ps->ev_gen + (ctx->full ? 1 : 0);
	if ((r = taskiter_read_partial(ps->ti, (unsigned)(ps->ev_gen & 1),
		 flags, ret_snap, &end)) < 0) {
		ps->perr = -r;
		if (++ps->partial_fails >= PARTIAL_MAX_FAILS)
			ps->pwhy = PARTIAL_WHY_READ;
		return 1;
	}
	ps->partial_fails = 0;
	nostore = ps->ev_nostore;
	ps->ev_nostore = end.nostore;
	if (end.gen != expect || end.doubt != ps->ev_doubt ||
	    end.nostore != nostore) {
		w->health.partial_doubts++;
		ps->doubt_row++;
		return 1;
	}
	ps->ev_gen = expect;
	ps->doubt_row = 0;
	w->health.partial_records = end.nrecs;
	return 0;
}

/* This sample's denominators, when valid, at the end of the window's. */
int
hist_push(struct procscan *ps, const struct scan_ctx *ctx)
{
	struct sample_acc *a;

	ps->nprev = ps->nhist;
	if (!ctx->valid)
		return 0;
	if (ps->nhist == ps->hcap) {
		uint32_t nc = ps->hcap ? ps->hcap * 2 : 64;

		if ((a = realloc(ps->hist, nc * sizeof(*a))) == NULL)
			return -ENOMEM;
		ps->hist = a;
		ps->hcap = nc;
	}
	a = &ps->hist[ps->nhist++];
	a->wall_ns = ctx->wall_ns;
	a->total_ticks = ctx->total_ticks;
	a->norm_ticks = ctx->norm_ticks;
	return 0;
}

#define GSEEN_MAX 65536u /* past it a record may count twice */

static size_t
gone_slot(const struct procscan *ps, int32_t tgid, uint64_t starttime)
{
	uint64_t h = (uint64_t)(uint32_t)tgid * 0x9e3779b97f4a7c15ull ^
	    starttime * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ h >> 29) & (2 * ps->gseencap - 1);
}

static void
gone_index(struct procscan *ps, size_t i)
{
	size_t k = gone_slot(ps, ps->gseen[i].tgid, ps->gseen[i].starttime);

	while (ps->gidx[k])
		k = (k + 1) & (2 * ps->gseencap - 1);
	ps->gidx[k] = (uint32_t)i + 1;
}

static void
gone_reindex(struct procscan *ps)
{
	size_t i;

	if (ps->gidx == NULL)
		return;
	memset(ps->gidx, 0, 2 * ps->gseencap * sizeof(*ps->gidx));
	for (i = 0; i < ps->ngseen; i++)
		gone_index(ps, i);
}

/* Drops those whose records have been drained (two flips on). */
static void
gone_prune(struct procscan *ps)
{
	size_t i, n = 0;

	for (i = 0; i < ps->ngseen; i++)
		if (ps->gseen[i].gen + 1 >= ps->ev_gen)
			ps->gseen[n++] = ps->gseen[i];
	if (n != ps->ngseen) {
		ps->ngseen = n;
		gone_reindex(ps);
	}
}

/* Instance (tgid, starttime) retired or counted now: its GONE records
 * until the drain count no more. Without memory it may count again. */
void
gone_note(struct procscan *ps, int32_t tgid, uint64_t starttime)
{
	struct gone_seen *a;
	uint32_t *x;

	if (ps->ngseen == ps->gseencap) {
		size_t nc = ps->gseencap ? ps->gseencap * 2 : 64;

		if (nc > GSEEN_MAX)
			return;
		if ((x = calloc(2 * nc, sizeof(*x))) == NULL)
			return;
		if ((a = realloc(ps->gseen, nc * sizeof(*a))) == NULL) {
			free(x);
			return;
		}
		free(ps->gidx);
		ps->gidx = x;
		ps->gseen = a;
		ps->gseencap = nc;
		gone_reindex(ps);
	}
	a = &ps->gseen[ps->ngseen];
	a->tgid = tgid;
	a->starttime = starttime;
	a->gen = ps->ev_gen;
	gone_index(ps, ps->ngseen++);
}

static bool
gone_known(const struct procscan *ps, int32_t tgid, uint64_t starttime)
{
	size_t k;

	if (ps->gidx == NULL)
		return false;
	for (k = gone_slot(ps, tgid, starttime); ps->gidx[k];
	     k = (k + 1) & (2 * ps->gseencap - 1)) {
		const struct gone_seen *g = &ps->gseen[ps->gidx[k] - 1];

		if (g->tgid == tgid && g->starttime == starttime)
			return true;
	}
	return false;
}

/*
 * A partial sample's processes wholly gone since the flip: retired now,
 * as the first full walk without them would have. A record stays on its
 * side until the drain, so every read until then names it again: one the
 * scan retired (here or at a walk) is not counted; one it never held (it
 * started and ended between two reads without running at one) once.
 */
void
retire_gone(struct procscan *ps, const struct taskiter_snap *snap,
    struct window *w)
{
	size_t i;

	gone_prune(ps);
	for (i = 0; i < snap->ngone; i++) {
		const struct iter_gone *g = &snap->gone[i];
		struct task *p = ht_get(&ps->procs, g->tgid);

		if (p != NULL && p->wt.starttime == g->starttime) {
			if (p->seen_gen != ps->gen) {
				task_retire(ps, p, w);
				gone_note(ps, g->tgid, g->starttime);
			}
			continue;
		}
		if (gone_known(ps, g->tgid, g->starttime))
			continue;
		w->health.partial_gone_unknown++;
		gone_note(ps, g->tgid, g->starttime);
	}
}

static int sample_begin(struct procscan *ps, const struct scan_ctx *ctx);
static int sample_scan(struct procscan *ps, enum scanner_mode src,
    const struct taskiter_snap *snap, const struct scan_ctx *ctx,
    struct window *w);

/* Whether the walk reads the sched accounting's baseline first: the
 * partial samples after it compare against it. */
bool
walk_wants_state(const struct procscan *ps)
{
	return taskiter_partial_on(ps->ti) && ps->pwhy == PARTIAL_WHY_NONE;
}

/*
 * Whether the sample ctx describes will walk every task with the iterator
 * (choose_source without its reads): no partial read can stand for it.
 * A partial read that is tried and found doubtful also ends in a walk;
 * that one is not known ahead and stays on the loop.
 */
bool
procscan_walk_due(const struct procscan *ps, const struct scan_ctx *ctx)
{
	if (ps->ti == NULL || ps->fail_reads > 0)
		return false;
	if (!ctx->full && ps->doubt_row >= PARTIAL_MAX_DOUBTS)
		return true;
	if (!taskiter_partial_on(ps->ti) || ps->pwhy != PARTIAL_WHY_NONE ||
	    ps->need_full || ps->force_full || !ps->have_last ||
	    ps->last != SCANNER_BPF)
		return true;
	return ctx->full && !close_may_skip_walk(ps, ctx);
}

/* The walk of the sample ctx describes started on the walk's worker when
 * that sample will walk (proc_walk_async.c): 1 it was, 0 not. */
int
procscan_walk_start(struct procscan *ps, const struct scan_ctx *ctx)
{
	if (ps->wa == NULL || !procscan_walk_due(ps, ctx))
		return 0;
	return walk_async_start(ps, walk_wants_state(ps), ctx->full);
}

/*
 * The iterator when it works; a failed read is counted and /proc stands in
 * for that scan, and after TASKITER_MAX_FAILS in a row for good. A walk
 * read off the loop for this sample (proc_walk_async.c) is taken as the
 * walk it stands for.
 */
static enum scanner_mode
choose_source(struct procscan *ps, const struct scan_ctx *ctx, struct window *w,
    const struct taskiter_snap **ret_snap)
{
	const struct walk_result *ahead;
	struct walk_result wr;
	int r;

	ps->partial = false;
	if (ps->ti == NULL)
		return SCANNER_PROCFS;
	if (ps->fail_reads > 0) {
		ps->fail_reads--;
		r = -EIO;
		goto failed;
	}
	if ((ahead = walk_async_take(ps, ctx, w)) != NULL) {
		wr = *ahead;
	} else {
		if (try_partial(ps, ctx, w, ret_snap) == 0) {
			ps->partial = true;
			return SCANNER_BPF;
		}
		wr.want_state = walk_wants_state(ps);
		wr.delay_ms = ps->walk_delay_ms;
		walk_read(ps->ti, &wr);
	}
	/* the partial samples after this walk: what the live side must
	 * still say for them to be whole; read before the walk */
	ps->need_full = false;
	if (wr.want_state && wr.state_r == 0) {
		ps->ev_gen = wr.gen;
		ps->ev_doubt = wr.doubt;
	} else if (wr.want_state) {
		ps->perr = -wr.state_r;
		ps->need_full = true; /* no baseline: walk again */
		if (++ps->partial_fails >= PARTIAL_MAX_FAILS)
			ps->pwhy = PARTIAL_WHY_READ;
	}
	if ((r = wr.read_r) == 0) {
		*ret_snap = wr.snap;
		ps->ti_fails = 0;
		ps->walk_boot_ns = ctx->boot_ns;
		ps->have_walk = true;
		return SCANNER_BPF;
	}
	ps->need_full = true;
failed:
	w->health.iter_failed++;
	ps->err = -r;
	if (++ps->ti_fails >= TASKITER_MAX_FAILS) {
		procscan_walk_cancel(ps);
		ps->ti = taskiter_free(ps->ti);
		ps->why = SCANNER_WHY_READ;
		ps->pwhy = PARTIAL_WHY_SCANNER;
	}
	return SCANNER_PROCFS;
}

int
procscan_run(struct procscan *ps, const struct scan_ctx *ctx, struct window *w)
{
	const struct taskiter_snap *snap = NULL;
	enum scanner_mode src;
	int r;

	if ((r = sample_begin(ps, ctx)) < 0)
		return r;
	src = choose_source(ps, ctx, w, &snap);
	return sample_scan(ps, src, snap, ctx, w);
}

/*
 * Tests only: one sample of the iterator source from snap, as a full walk
 * or (partial) as a partial sample whose snap holds the groups that ran.
 */
int
procscan_run_snap(struct procscan *ps, const struct taskiter_snap *snap,
    bool partial, const struct scan_ctx *ctx, struct window *w)
{
	int r;

	if ((r = sample_begin(ps, ctx)) < 0)
		return r;
	ps->partial = partial;
	return sample_scan(ps, SCANNER_BPF, snap, ctx, w);
}

static int
sample_begin(struct procscan *ps, const struct scan_ctx *ctx)
{
	ps->gen++;
	ps->nscanned_procs = ps->nscanned_threads = 0;
	/* the samples' times since the last full walk (born_since) */
	if (ps->last_full)
		ps->nsboot = 0;
	if (ps->nsboot == VITALS_SBOOT_MAX) {
		/* the older half goes: what started then ran since */
		memmove(ps->sboot, ps->sboot + VITALS_SBOOT_MAX / 2,
		    VITALS_SBOOT_MAX / 2 * sizeof(*ps->sboot));
		ps->nsboot = VITALS_SBOOT_MAX / 2;
	}
	if (ctx->have_prev)
		ps->sboot[ps->nsboot++] = ctx->prev_boot_ns;
	return hist_push(ps, ctx);
}

static int
sample_scan(struct procscan *ps, enum scanner_mode src,
    const struct taskiter_snap *snap, const struct scan_ctx *ctx,
    struct window *w)
{
	size_t i;
	bool note;
	int r;

	if (ps->have_last && src != ps->last) {
		sources_switched(ps);
		ps->need_full = true;
	}
	ps->last = src;
	ps->have_last = true;
	ps->last_full = src == SCANNER_BPF && !ps->partial;
	w->health.scanner = src;
	w->health.scanner_why = ps->why;
	w->health.scanner_err = (uint32_t)ps->err;
	w->health.partial_why = ps->pwhy;
	w->health.partial_err = (uint32_t)ps->perr;

	if (src == SCANNER_BPF && ps->partial) {
		w->health.samples_partial++;
		if ((r = scan_iter(ps, snap, ctx, w)) < 0) {
			/* what the read said is not all taken: walk next */
			ps->need_full = true;
			return r;
		}
		/* unseen is not gone: only what the kernel said ended */
		retire_gone(ps, snap, w);
		goto done;
	}
	if (src == SCANNER_BPF) {
		w->health.samples_full++;
		r = scan_iter(ps, snap, ctx, w);
	} else {
		r = scan_procfs(ps, ctx, w);
	}
	if (r < 0) {
		ps->need_full = true;
		return r;
	}
	/* Processes not listed any more have exited; with partial samples
	 * on, their GONE records may follow (retire_gone) */
	note = src == SCANNER_BPF && ps->ti != NULL &&
	    taskiter_partial_on(ps->ti) && ps->pwhy == PARTIAL_WHY_NONE;
	if (note)
		gone_prune(ps);
	for (i = 0; i < ps->procs.nb; i++) {
		struct task *t = ps->procs.b[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->seen_gen != ps->gen) {
				if (note)
					gone_note(ps, t->wt.id,
					    t->wt.starttime);
				task_retire(ps, t, w);
			}
		}
	}
done:
	w->health.procs_scanned = ps->nscanned_procs;
	w->health.threads_scanned = ps->nscanned_threads;
	w->health.stat_fds = ps->sf.open;
	return 0;
}
