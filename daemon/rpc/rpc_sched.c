/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched part on the wire: Window.health.bpf (doc/bpf.md), the rows as
 * Window.sched when the window goes out with its tasks, and the BPF top
 * (TopRequest.source BPF): the rows of a range summed by identity and
 * ranked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "store/store.h"
#include "window/window.h"
#include "rpc_int.h"

static Vitals__BpfHealth *
pb_bpf(struct rpc_arena *a, const struct window_bpf *b)
{
	Vitals__BpfHealth *m;

	NEW(a, m, vitals__bpf_health__init);
	m->state = (char *)vbpf_state_name(b->state);
	m->err = b->err;
	m->drains = b->drains;
	m->drain_fail = b->drain_fail;
	m->counter_regressions = b->counter_regressions;
	m->oncpu_ns = b->oncpu_ns;
	m->switches = b->switches;
	m->no_slice = b->no_slice;
	m->lost_ns = b->lost_ns;
	m->no_storage = b->no_storage;
	m->pre_ns = b->pre_ns;
	m->diff_drains = b->diff_drains;
	m->unattributed_ns = b->unattributed_ns;
	m->evicted = b->evicted;
	m->recreated = b->recreated;
	m->retired = b->retired;
	m->wakeups = b->wakeups;
	m->rq_samples = b->rq_samples;
	m->rq_count = b->rq_count;
	m->full_tid = b->full_tid;
	m->full_proc = b->full_proc;
	m->full_uid = b->full_uid;
	m->thr_exited = b->thr_exited;
	m->procs_exited = b->procs_exited;
	m->oncpu_total_ns = b->oncpu_total;
	m->exited_ns = b->exited_ns;
	m->exited_tasks = b->exited_tasks;
	m->rq_ns = b->rq_ns;
	m->entries = b->entries;
	m->drain_ns = b->drain_ns;
	m->procs_other = b->procs_other;
	m->threads_other = b->threads_other;
	m->uids_other = b->uids_other;
	m->rq_notid = b->rq_notid;
	m->slot_rows = b->slot_rows;
	m->slots_taken = b->slots_taken;
	m->slot_hash_rows = b->slot_hash_rows;
	m->slot_overflow = b->slot_overflow;
	m->slot_full_drains = b->slot_full_drains;
	m->slot_cap = b->slot_cap;
	m->rq_source = (char *)vbpf_rq_name(b->rq_source);
	return m;
}

/* ---------------------------------------------------------------- rows */

static const char *
proc_name(const struct window *w, int32_t id, uint64_t st)
{
	size_t i;

	for (i = 0; w && i < w->nprocs; i++)
		if (w->procs[i].id == id && w->procs[i].starttime == st)
			return window_task_name(&w->procs[i]);
	return "";
}

static const char *
thread_name(const struct window *w, int32_t id, uint64_t st)
{
	size_t i;

	for (i = 0; w && i < w->nthreads; i++)
		if (w->threads[i].id == id && w->threads[i].starttime == st)
			return w->threads[i].comm;
	return "";
}

/* A histogram without its trailing empty slots, and its quantiles. */
static int
pb_hist(struct rpc_arena *a, const uint32_t hist[VITALS_BPF_RQ_SLOTS],
    uint32_t **ret, size_t *ret_n, uint64_t *p50, uint64_t *p99)
{
	unsigned k, slots;

	for (slots = VITALS_BPF_RQ_SLOTS; slots && !hist[slots - 1]; slots--)
		;
	if (slots) {
		if ((*ret = rpc_arena_alloc(a, slots * sizeof(**ret))) == NULL)
			return -ENOMEM;
		for (k = 0; k < slots; k++)
			(*ret)[k] = hist[k];
	}
	*ret_n = slots;
	*p50 = window_bpf_rq_quantile_ns(hist, 0.50);
	*p99 = window_bpf_rq_quantile_ns(hist, 0.99);
	return 0;
}

static Vitals__SchedTask *
pb_proc(struct rpc_arena *a, const struct window_bpf_proc *p, const char *name)
{
	Vitals__SchedTask *m;

	NEW(a, m, vitals__sched_task__init);
	m->id = p->tgid;
	m->tgid = p->tgid;
	m->starttime = p->starttime;
	m->uid = UINT32_MAX;
	if ((m->name = rpc_pb_str(a, name, VITALS_NAME_LEN)) == NULL)
		return NULL;
	m->oncpu_ns = p->oncpu_ns;
	m->rq_count = p->rq_count;
	m->rq_ns = p->rq_ns;
	if (pb_hist(a, p->rq_hist, &m->rq_hist, &m->n_rq_hist, &m->rq_p50_ns,
		&m->rq_p99_ns) < 0)
		return NULL;
	m->exited = (p->flags & WBPF_PROC_EXITED) != 0;
	return m;
}

static Vitals__SchedTask *
pb_thread(struct rpc_arena *a, const struct window_bpf_thread *t,
    const char *name)
{
	Vitals__SchedTask *m;

	NEW(a, m, vitals__sched_task__init);
	m->id = t->tid;
	m->tgid = t->tgid;
	m->starttime = t->starttime;
	m->uid = t->uid;
	if ((m->name = rpc_pb_str(a, name, VITALS_NAME_LEN)) == NULL)
		return NULL;
	m->oncpu_ns = t->oncpu_ns;
	m->rq_count = t->rq_count;
	m->rq_ns = t->rq_ns;
	if (pb_hist(a, t->rq_hist, &m->rq_hist, &m->n_rq_hist, &m->rq_p50_ns,
		&m->rq_p99_ns) < 0)
		return NULL;
	return m;
}

static Vitals__SchedUid *
pb_uid(struct rpc_arena *a, const struct window_bpf_uid *u)
{
	Vitals__SchedUid *m;

	NEW(a, m, vitals__sched_uid__init);
	m->uid = u->uid;
	m->oncpu_ns = u->oncpu_ns;
	m->exited_ns = u->exited_ns;
	m->exited_tasks = u->exited_tasks;
	m->rq_count = u->rq_count;
	m->rq_ns = u->rq_ns;
	if (pb_hist(a, u->rq_hist, &m->rq_hist, &m->n_rq_hist, &m->rq_p50_ns,
		&m->rq_p99_ns) < 0)
		return NULL;
	return m;
}

static Vitals__SchedWindow *
pb_rows(struct rpc_arena *a, const struct window_bpf *b, const struct window *w)
{
	Vitals__SchedWindow *m;
	size_t i;

	NEW(a, m, vitals__sched_window__init);
	if (b->nprocs) {
		ARRAY(a, m->procs, b->nprocs);
		for (i = 0; i < b->nprocs; i++)
			TRY(m->procs[i] = pb_proc(a, &b->proc[i],
				proc_name(w, b->proc[i].tgid,
				    b->proc[i].starttime)));
	}
	m->n_procs = b->nprocs;
	if (b->nthreads) {
		ARRAY(a, m->threads, b->nthreads);
		for (i = 0; i < b->nthreads; i++)
			TRY(m->threads[i] = pb_thread(a, &b->thread[i],
				thread_name(w, b->thread[i].tid,
				    b->thread[i].starttime)));
	}
	m->n_threads = b->nthreads;
	if (b->nuids) {
		ARRAY(a, m->uids, b->nuids);
		for (i = 0; i < b->nuids; i++)
			TRY(m->uids[i] = pb_uid(a, &b->uid[i]));
	}
	m->n_uids = b->nuids;
	TRY(m->proc_other = pb_proc(a, &b->proc_other, ""));
	TRY(m->thread_other = pb_thread(a, &b->thread_other, ""));
	TRY(m->uid_other = pb_uid(a, &b->uid_other));
	m->procs_other = b->procs_other;
	m->threads_other = b->threads_other;
	m->uids_other = b->uids_other;
	return m;
}

/* The rows go with the tasks: a window sent without tasks (Health.last,
 * windows lists) stays small. */
static int
rpc_sched_window(struct rpc_arena *a, Vitals__Window *m, const struct window *w)
{
	const struct window_bpf *b = window_sched(w);

	if (b->state == VBPF_UNKNOWN)
		return 0;
	if ((m->health->bpf = pb_bpf(a, b)) == NULL)
		return -ENOMEM;
	if ((m->n_procs || m->n_threads) &&
	    (b->nprocs || b->nthreads || b->nuids) &&
	    (m->sched = pb_rows(a, b, w)) == NULL)
		return -ENOMEM;
	return 0;
}

static const struct window_bpf_thread *
thread_row(const struct window *w, int32_t tid, uint64_t starttime)
{
	const struct window_bpf *b = window_sched(w);
	size_t i;

	for (i = 0; b && i < b->nthreads; i++)
		if (b->thread[i].tid == tid &&
		    b->thread[i].starttime == starttime)
			return &b->thread[i];
	return NULL;
}

/* The window of a history point: the same start, level and boot. */
static const struct window *
window_of(const struct store_hist *h, struct window *const *w, size_t nw)
{
	size_t j;

	for (j = 0; j < nw; j++)
		if (w[j]->wall_start_ns == h->wall_start_ns &&
		    w[j]->level == h->level &&
		    strcmp(w[j]->boot_id, h->boot_id) == 0)
			return w[j];
	return NULL;
}

static const struct window_bpf_proc *
proc_row(const struct window *w, int32_t pid, uint64_t starttime)
{
	const struct window_bpf *b = window_sched(w);
	size_t i;

	for (i = 0; b && i < b->nprocs; i++)
		if (b->proc[i].tgid == pid && b->proc[i].starttime == starttime)
			return &b->proc[i];
	return NULL;
}

/*
 * A history point and a window are the same when they start together on
 * one boot at one level; the point's task says which row (pid,
 * starttime) is the process's. The sum is of the newest instance's rows
 * alone (the history's last point): a pid reused within the range is
 * another process, and each point keeps its own row.
 */
int
rpc_sched_process(struct rpc_arena *a, Vitals__ProcessInfo *info,
    const struct store_hist *h, size_t n, const struct store_hist *th,
    size_t nth, struct window *const *w, size_t nw)
{
	struct window_bpf_proc sum;
	const struct window_bpf_proc *p;
	const struct window_bpf_thread *t;
	const struct window *win;
	const char *name = "";
	size_t i, found = 0;
	uint64_t want = n ? h[n - 1].t.starttime : 0;
	unsigned k;

	/* each thread point its thread's row in that window */
	for (i = 0; i < nth; i++) {
		if ((win = window_of(&th[i], w, nw)) == NULL ||
		    (t = thread_row(win, th[i].t.id, th[i].t.starttime)) ==
			NULL)
			continue;
		if ((info->threads[i]->sched = pb_thread(a, t, th[i].t.comm)) ==
		    NULL)
			return -ENOMEM;
	}
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < n; i++) {
		if ((win = window_of(&h[i], w, nw)) == NULL ||
		    (p = proc_row(win, h[i].t.id, h[i].t.starttime)) == NULL)
			continue;
		if ((info->history[i]->sched = pb_proc(a, p,
			 window_task_name(&h[i].t))) == NULL)
			return -ENOMEM;
		if (h[i].t.starttime != want)
			continue;
		if (found++ == 0) {
			sum.tgid = p->tgid;
			sum.starttime = p->starttime;
		}
		name = window_task_name(&h[i].t);
		sum.flags |= p->flags;
		sum.oncpu_ns += p->oncpu_ns;
		sum.rq_ns += p->rq_ns;
		sum.rq_count += p->rq_count;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			sum.rq_hist[k] += p->rq_hist[k];
	}
	if (found) {
		if ((info->sched = pb_proc(a, &sum, name)) == NULL)
			return -ENOMEM;
		info->sched->windows = (uint32_t)found;
	}
	return 0;
}

/* ----------------------------------------------------------------- top */

struct ranked {
	uint64_t key;
	size_t i;
};

static int
by_key_desc(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static uint64_t
proc_metric(const struct window_bpf_proc *p, unsigned metric)
{
	uint64_t q;

	switch (metric) {
	case VITALS__SCHED_METRIC__SCHED_RQ_DELAY:
		return p->rq_ns;
	case VITALS__SCHED_METRIC__SCHED_RQ_P99:
		/* the open last slot ranks first; no waits last */
		q = window_bpf_rq_quantile_ns(p->rq_hist, 0.99);
		return q;
	default:
		return p->oncpu_ns;
	}
}

static uint64_t
thread_metric(const struct window_bpf_thread *t, unsigned metric)
{
	switch (metric) {
	case VITALS__SCHED_METRIC__SCHED_RQ_DELAY:
		return t->rq_ns;
	case VITALS__SCHED_METRIC__SCHED_RQ_P99:
		/* as a process's (windows stored before threads had
		 * histograms add counts without slots) */
		return window_bpf_rq_quantile_ns(t->rq_hist, 0.99);
	default:
		return t->oncpu_ns;
	}
}

/* The newest window holding the task names it. */
static const char *
name_in(struct window *const *w, size_t n, bool thread, int32_t id, uint64_t st)
{
	const char *s;
	size_t i;

	for (i = n; i-- > 0;) {
		s = thread ? thread_name(w[i], id, st) :
			     proc_name(w[i], id, st);
		if (*s)
			return s;
	}
	return "";
}

/*
 * Σ of the rows of w[0..n) by identity (window_bpf_merge, nothing folded
 * beyond what each window folded), ranked by the metric, the first q->n,
 * into list (rpc.c packs it).
 */
int
rpc_sched_top(struct rpc_arena *a, Vitals__TaskList *list,
    const struct rpc_query *q, struct window *const *w, size_t n)
{
	struct window_bpf acc;
	struct ranked *rk = NULL;
	size_t i, nr, k;
	int r = -ENOMEM;

	memset(&acc, 0, sizeof(acc));
	acc.max_procs = acc.max_threads = VITALS_BPF_ROWS_MAX;
	for (i = 0; i < n; i++)
		if (window_sched(w[i]) != NULL &&
		    window_bpf_merge(&acc, window_sched(w[i])) < 0)
			goto out;
	nr = q->threads ? acc.nthreads : acc.nprocs;
	if (nr && (rk = calloc(nr, sizeof(*rk))) == NULL)
		goto out;
	for (i = 0; i < nr; i++) {
		rk[i].i = i;
		rk[i].key = q->threads ?
		    thread_metric(&acc.thread[i], q->sched_metric) :
		    proc_metric(&acc.proc[i], q->sched_metric);
	}
	if (nr)
		qsort(rk, nr, sizeof(*rk), by_key_desc);
	k = nr < q->n ? nr : q->n;
	list->source = VITALS__TOP_SOURCE__TOP_SOURCE_BPF;
	list->sched_metric = (Vitals__SchedMetric)q->sched_metric;
	if (k &&
	    (list->sched = rpc_arena_alloc(a, k * sizeof(*list->sched))) ==
		NULL)
		goto out;
	for (i = 0; i < k; i++) {
		size_t j = rk[i].i;

		if (q->threads)
			list->sched[i] = pb_thread(a, &acc.thread[j],
			    name_in(w, n, true, acc.thread[j].tid,
				acc.thread[j].starttime));
		else
			list->sched[i] = pb_proc(a, &acc.proc[j],
			    name_in(w, n, false, acc.proc[j].tgid,
				acc.proc[j].starttime));
		if (list->sched[i] == NULL)
			goto out;
	}
	list->n_sched = k;
	r = 0;
out:
	free(rk);
	window_bpf_release(&acc);
	return r;
}

const struct rpc_part rpc_sched_part = {
	.window = rpc_sched_window,
};
