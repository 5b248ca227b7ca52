/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tracker's figures at a window's close: its tables sorted and cut to
 * the window's bounds (the heaviest slices, the busiest counters, binder
 * pairs, run-queue threads, GPU entries) into the ftrace part, then
 * cleared for the next window.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "trace/atrace_int.h"
#include "trace/phase.h"

static int
slice_by_weight(const void *a, const void *b)
{
	const struct window_trace_slice *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->count + x->incomplete != y->count + y->incomplete)
		return x->count + x->incomplete < y->count + y->incomplete ? 1 :
									     -1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void
slice_fold(struct window_trace_slice *o, const struct window_trace_slice *s)
{
	o->count += s->count;
	o->incomplete += s->incomplete;
	o->total_ns += s->total_ns;
	if (s->max_ns > o->max_ns)
		o->max_ns = s->max_ns;
}

/* Keep the heaviest VITALS_TRACE_SLICES rows, fold the rest into other. */
void
window_trace_keep_slices(struct window_trace *wt, struct window_trace_slice *s,
    size_t n, uint32_t other_rows)
{
	size_t i;

	qsort(s, n, sizeof(*s), slice_by_weight);
	wt->nslices = 0;
	for (i = 0; i < n; i++) {
		if (i < VITALS_TRACE_SLICES) {
			wt->slice[wt->nslices++] = s[i];
			continue;
		}
		wt->slice_other.tgid = wt->slice_other.tid = -1;
		slice_fold(&wt->slice_other, &s[i]);
		other_rows++;
	}
	wt->slices_other = other_rows;
}

static int
counter_by_n(const void *a, const void *b)
{
	const struct window_trace_counter *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
binder_by_n(const void *a, const void *b)
{
	const struct window_trace_binder *x = a, *y = b;
	uint64_t nx = (uint64_t)x->calls + x->oneway + x->replies;
	uint64_t ny = (uint64_t)y->calls + y->oneway + y->replies;

	if (nx != ny)
		return nx < ny ? 1 : -1;
	if (x->from_pid != y->from_pid)
		return x->from_pid < y->from_pid ? -1 : 1;
	return x->to_pid < y->to_pid ? -1 : x->to_pid > y->to_pid;
}

static int
rq_by_total(const void *a, const void *b)
{
	const struct window_trace_rq *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int
gpu_by_key(const void *a, const void *b)
{
	const struct window_trace_gpu *x = a, *y = b;

	if (x->gpu_id != y->gpu_id)
		return x->gpu_id < y->gpu_id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Entries of a table (after their hash) packed into one array. */
static void *
tab_pack(const struct tab *t, size_t off, size_t sz)
{
	char *out = malloc((t->n ? t->n : 1) * sz);
	size_t i, k = 0;

	if (out == NULL)
		return NULL;
	for (i = 0; i < t->cap; i++)
		if (atab_hash(t, i))
			memcpy(out + sz * k++, (char *)atab_at(t, i) + off, sz);
	return out;
}

/*
 * A table's entries sorted by cmp, the first cap of them into dst (*ret_n
 * of them), the rest counted on top of other into *ret_other. Out of
 * memory: nothing kept, dst untouched.
 */
static void
keep_top(const struct tab *t, size_t off, size_t sz,
    int (*cmp)(const void *, const void *), void *dst, size_t cap,
    uint32_t *ret_n, uint32_t *ret_other, uint32_t other)
{
	size_t n = t->n, k = n < cap ? n : cap;
	void *p;

	if ((p = tab_pack(t, off, sz)) == NULL)
		return;
	qsort(p, n, sz, cmp);
	memcpy(dst, p, k * sz);
	*ret_n = (uint32_t)k;
	*ret_other = other + (uint32_t)(n - k);
	free(p);
}

/*
 * The figures since the last call go into wt (its ftrace part but the
 * loss and state fields, which ftrace.c owns); open slices stay open.
 */
void
atrace_window(struct atrace *at, struct window_trace *wt)
{
	struct window_trace *w = at->w;
	size_t i, n;
	void *p;

	wt->events += w->events;
	wt->bad_markers += w->bad_markers;
	wt->names_cut += w->names_cut;
	wt->unknown_events += w->unknown_events;
	wt->slices += w->slices;
	wt->incomplete += w->incomplete;
	wt->orphan_ends += w->orphan_ends;
	wt->sched_switch += w->sched_switch;
	wt->sched_waking += w->sched_waking;
	wt->binder_received += w->binder_received;
	wt->gpu_events += w->gpu_events;
	wt->slice_other = w->slice_other;
	wt->binder_total = w->binder_total;
	wt->rq_total = w->rq_total;

	n = at->slices.n;
	if ((p = tab_pack(&at->slices, offsetof(struct slice_ent, s),
		 sizeof(struct window_trace_slice))) != NULL) {
		window_trace_keep_slices(wt, p, n, w->slices_other);
		free(p);
	}
	keep_top(&at->counters, offsetof(struct counter_ent, c),
	    sizeof(struct window_trace_counter), counter_by_n, wt->counter,
	    VITALS_TRACE_COUNTERS, &wt->ncounters, &wt->counters_other,
	    w->counters_other);
	keep_top(&at->binder, offsetof(struct binder_ent, b),
	    sizeof(struct window_trace_binder), binder_by_n, wt->binder,
	    VITALS_TRACE_BINDER, &wt->nbinder, &wt->binder_other,
	    w->binder_other);
	keep_top(&at->rq, offsetof(struct rq_ent, r),
	    sizeof(struct window_trace_rq), rq_by_total, wt->rq,
	    VITALS_TRACE_RQ, &wt->nrq, &wt->rq_other, w->rq_other);
	keep_top(&at->gpu, offsetof(struct gpu_ent, g),
	    sizeof(struct window_trace_gpu), gpu_by_key, wt->gpu,
	    VITALS_TRACE_GPU, &wt->ngpu, &wt->gpu_other, w->gpu_other);
	/* threads with nothing open are forgotten once a window: a thread
	 * whose exit was not seen cannot hold a slot for ever */
	i = 0;
	while (i < at->threads.cap) {
		struct thread_ent *th = atab_at(&at->threads, i);

		if (th->h && th->depth == 0 && th->wake_ts == 0) {
			atrace_thread_forget(at, th);
			continue;
		}
		i++;
	}
	binder_window(at->bl, wt);
	if (at->ph)
		phase_window(at->ph, wt);
	atab_clear(&at->slices);
	atab_clear(&at->counters);
	atab_clear(&at->binder);
	atab_clear(&at->rq);
	atab_clear(&at->gpu);
	memset(w, 0, WINDOW_TRACE_HEAD);
}
