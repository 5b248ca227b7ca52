/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ftrace part of a window as plain arithmetic: loss, roll-up merge and
 * dump text. No I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "atrace_cat.h"
#include "core/util.h"
#include "trace/atrace_cat.h"
#include "trace/trace.h"
#include "window/window.h"

const char *
trace_kind_name(unsigned k)
{
	static const char *const names[TRACE__MAX] = {
		[TRACE_SYNC] = "slice",
		[TRACE_ASYNC] = "async",
		[TRACE_TRACK] = "track",
		[TRACE_INSTANT] = "instant",
	};

	return k < TRACE__MAX ? names[k] : "?";
}

/* Events the kernel or a page header said were lost in the window. */
uint64_t
window_trace_lost(const struct window_trace *t)
{
	return t->overrun + t->dropped + t->commit_overrun;
}

bool
window_trace_lossy(const struct window_trace *t)
{
	return window_trace_lost(t) > 0 || t->pages_lost > 0 || t->missed > 0 ||
	    t->stats_fail > 0 || t->bad_pages > 0;
}

struct window_trace *
window_trace_new(bool rows)
{
	struct window_trace *t;

	if ((t = calloc(1, rows ? sizeof(*t) : WINDOW_TRACE_HEAD)) == NULL)
		return NULL;
	t->head_only = !rows;
	return t;
}

struct window_trace *
window_trace_make(struct window *w, bool rows)
{
	struct window_trace *t = window_trace(w);

	if (t == NULL && (t = window_trace_new(rows)) != NULL)
		window_part_set(w, WPART_TRACE, t);
	return t;
}

struct window_trace *
window_trace_free(struct window_trace *t)
{
	free(t);
	return NULL;
}

struct window_trace *
window_trace_dup(const struct window_trace *t)
{
	size_t sz = t->head_only ? WINDOW_TRACE_HEAD : sizeof(*t);
	struct window_trace *c;

	if ((c = malloc(sz)) == NULL)
		return NULL;
	memcpy(c, t, sz);
	return c;
}

/* Room for rows: a head alone grows to the whole part, rows empty. */
int
window_trace_rows(struct window_trace **tp)
{
	struct window_trace *t = *tp;

	if (!t->head_only)
		return 0;
	if ((t = realloc(t, sizeof(*t))) == NULL)
		return -ENOMEM;
	memset((char *)t + WINDOW_TRACE_HEAD, 0,
	    sizeof(*t) - WINDOW_TRACE_HEAD);
	t->head_only = false;
	*tp = t;
	return 0;
}

/* A part that kept no rows gives their room back. */
void
window_trace_trim(struct window_trace **tp)
{
	struct window_trace *t = *tp;

	if (t->head_only || t->nslices || t->ncounters || t->nbinder ||
	    t->nrq || t->ngpu || t->nbtxn || t->nphase || window_phase_rest(t))
		return;
	t->head_only = true;
	if ((t = realloc(t, WINDOW_TRACE_HEAD)) != NULL)
		*tp = t; /* else the whole part stays: still valid */
}

static bool
slice_same(const struct window_trace_slice *a,
    const struct window_trace_slice *b)
{
	return a->tgid == b->tgid && a->tid == b->tid && a->depth == b->depth &&
	    a->kind == b->kind && strcmp(a->name, b->name) == 0;
}

static void
merge_slices(struct window_trace *acc, const struct window_trace *src)
{
	struct window_trace_slice *all;
	size_t n = acc->nslices, i, k;

	all = malloc((acc->nslices + src->nslices + 1) * sizeof(*all));
	if (all == NULL)
		return;
	if (acc->nslices)
		memcpy(all, acc->slice, acc->nslices * sizeof(*all));
	for (i = 0; i < src->nslices; i++) {
		const struct window_trace_slice *s = &src->slice[i];

		for (k = 0; k < n; k++)
			if (slice_same(&all[k], s))
				break;
		if (k == n) {
			all[n++] = *s;
			continue;
		}
		all[k].count += s->count;
		all[k].incomplete += s->incomplete;
		all[k].total_ns += s->total_ns;
		if (s->max_ns > all[k].max_ns)
			all[k].max_ns = s->max_ns;
	}
	acc->slice_other.count += src->slice_other.count;
	acc->slice_other.incomplete += src->slice_other.incomplete;
	acc->slice_other.total_ns += src->slice_other.total_ns;
	if (src->slice_other.max_ns > acc->slice_other.max_ns)
		acc->slice_other.max_ns = src->slice_other.max_ns;
	window_trace_keep_slices(acc, all, n,
	    acc->slices_other + src->slices_other);
	free(all);
}

static void
merge_counters(struct window_trace *acc, const struct window_trace *src)
{
	unsigned i, k;

	acc->counters_other += src->counters_other;
	for (i = 0; i < src->ncounters; i++) {
		const struct window_trace_counter *s = &src->counter[i];

		for (k = 0; k < acc->ncounters; k++)
			if (acc->counter[k].tgid == s->tgid &&
			    strcmp(acc->counter[k].name, s->name) == 0)
				break;
		if (k == acc->ncounters) {
			if (k == VITALS_TRACE_COUNTERS) {
				acc->counters_other++;
				continue;
			}
			acc->counter[acc->ncounters++] = *s;
			continue;
		}
		if (s->min < acc->counter[k].min)
			acc->counter[k].min = s->min;
		if (s->max > acc->counter[k].max)
			acc->counter[k].max = s->max;
		acc->counter[k].last = s->last;
		acc->counter[k].n += s->n;
	}
}

static void
merge_binder(struct window_trace *acc, const struct window_trace *src)
{
	unsigned i, k;

	acc->binder_other += src->binder_other;
	acc->binder_total.calls += src->binder_total.calls;
	acc->binder_total.oneway += src->binder_total.oneway;
	acc->binder_total.replies += src->binder_total.replies;
	for (i = 0; i < src->nbinder; i++) {
		const struct window_trace_binder *s = &src->binder[i];

		for (k = 0; k < acc->nbinder; k++)
			if (acc->binder[k].from_pid == s->from_pid &&
			    acc->binder[k].to_pid == s->to_pid)
				break;
		if (k == acc->nbinder) {
			if (k == VITALS_TRACE_BINDER) {
				acc->binder_other++;
				continue;
			}
			acc->binder[acc->nbinder++] = *s;
			continue;
		}
		acc->binder[k].calls += s->calls;
		acc->binder[k].oneway += s->oneway;
		acc->binder[k].replies += s->replies;
	}
}

static void
merge_rq(struct window_trace *acc, const struct window_trace *src)
{
	unsigned i, k;

	acc->rq_other += src->rq_other;
	acc->rq_total.count += src->rq_total.count;
	acc->rq_total.total_ns += src->rq_total.total_ns;
	if (src->rq_total.max_ns > acc->rq_total.max_ns)
		acc->rq_total.max_ns = src->rq_total.max_ns;
	for (i = 0; i < src->nrq; i++) {
		const struct window_trace_rq *s = &src->rq[i];

		for (k = 0; k < acc->nrq; k++)
			if (acc->rq[k].tid == s->tid)
				break;
		if (k == acc->nrq) {
			if (k == VITALS_TRACE_RQ) {
				acc->rq_other++;
				continue;
			}
			acc->rq[acc->nrq++] = *s;
			continue;
		}
		acc->rq[k].count += s->count;
		acc->rq[k].total_ns += s->total_ns;
		if (s->max_ns > acc->rq[k].max_ns)
			acc->rq[k].max_ns = s->max_ns;
	}
}

static void
merge_gpu(struct window_trace *acc, const struct window_trace *src)
{
	unsigned i, k;

	acc->gpu_other += src->gpu_other;
	for (i = 0; i < src->ngpu; i++) {
		const struct window_trace_gpu *s = &src->gpu[i];

		for (k = 0; k < acc->ngpu; k++)
			if (acc->gpu[k].gpu_id == s->gpu_id &&
			    acc->gpu[k].pid == s->pid)
				break;
		if (k == acc->ngpu) {
			if (k == VITALS_TRACE_GPU) {
				acc->gpu_other++;
				continue;
			}
			acc->gpu[acc->ngpu++] = *s;
			continue;
		}
		acc->gpu[k].events += s->events;
		acc->gpu[k].last_size = s->last_size;
	}
}

/*
 * Fold src (the later window) into *accp, for roll-ups. Either may have no
 * part (NULL): a missing one folds as zeros, as it did when every window
 * held one.
 */
int
window_trace_merge(struct window_trace **accp, const struct window_trace *src)
{
	static const struct window_trace zero;
	struct window_trace *acc;

	if (*accp == NULL && src == NULL)
		return 0;
	if (*accp == NULL && (*accp = window_trace_new(false)) == NULL)
		return -ENOMEM;
	if (src == NULL)
		src = &zero;
	if ((src->nslices || src->ncounters || src->nbinder || src->nrq ||
		src->ngpu || src->nbtxn || src->nphase ||
		window_phase_rest(src)) &&
	    window_trace_rows(accp) < 0)
		return -ENOMEM;
	acc = *accp;
	if (src->state != FTRACE_UNKNOWN) {
		acc->state = src->state;
		acc->err = src->err;
		acc->enabled = src->enabled;
		acc->missing = src->missing;
		acc->atrace = src->atrace;
	}
	acc->overrun += src->overrun;
	acc->dropped += src->dropped;
	acc->commit_overrun += src->commit_overrun;
	acc->pages_lost += src->pages_lost;
	acc->missed += src->missed;
	acc->stats_fail += src->stats_fail;
	acc->backlog += src->backlog;
	acc->entries += src->entries;
	acc->events += src->events;
	acc->pages += src->pages;
	acc->bytes += src->bytes;
	acc->read_ns += src->read_ns;
	acc->bad_markers += src->bad_markers;
	acc->names_cut += src->names_cut;
	acc->unknown_events += src->unknown_events;
	acc->bad_pages += src->bad_pages;
	acc->buffered = src->buffered; /* a gauge: the later close */
	acc->slices += src->slices;
	acc->incomplete += src->incomplete;
	acc->orphan_ends += src->orphan_ends;
	acc->sched_switch += src->sched_switch;
	acc->sched_waking += src->sched_waking;
	acc->binder_received += src->binder_received;
	acc->gpu_events += src->gpu_events;
	/* ATrace categories: the later state, counts summed */
	if (src->cat_state != 0) {
		acc->cat_state = src->cat_state;
		acc->cat_err = src->cat_err;
		acc->cat_tags = src->cat_tags;
		acc->cat_flags = src->cat_flags;
	}
	acc->cat_checks += src->cat_checks;
	acc->cat_foreign += src->cat_foreign;
	acc->cat_takeovers += src->cat_takeovers;
	acc->cat_yields += src->cat_yields;
	acc->cat_restores += src->cat_restores;
	acc->cat_set_fail += src->cat_set_fail;
	acc->cat_read_fail += src->cat_read_fail;
	/* these fold the totals too; rows only where src has some, and
	 * then acc has room for them */
	merge_slices(acc, src);
	merge_counters(acc, src);
	merge_binder(acc, src);
	merge_rq(acc, src);
	merge_gpu(acc, src);
	window_btxn_merge(acc, src);
	window_phase_merge(acc, src);
	return 0;
}

static void
trace_part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_trace *t = window_trace(w);
	unsigned i;

	if (t == NULL || t->state == FTRACE_UNKNOWN)
		return;
	vbuf_printf(out,
	    "ftrace %s: %llu events, %llu slices, %llu "
	    "incomplete, lost %llu (overrun %llu dropped %llu, %llu pages "
	    "flagged)%s\n",
	    ftrace_state_name(t->state), (unsigned long long)t->events,
	    (unsigned long long)t->slices, (unsigned long long)t->incomplete,
	    (unsigned long long)window_trace_lost(t),
	    (unsigned long long)t->overrun, (unsigned long long)t->dropped,
	    (unsigned long long)t->pages_lost,
	    window_trace_lossy(t) ? " LOSSY" : "");
	if (t->cat_state != ATCAT_UNKNOWN)
		vbuf_printf(out,
		    "atrace categories %s: tags %#llx, read "
		    "%#llx; checks %u, another owner's %u, taken %u, yielded "
		    "%u, restored %u, write failures %u\n",
		    atcat_state_name(t->cat_state),
		    (unsigned long long)t->cat_tags,
		    (unsigned long long)t->cat_flags, t->cat_checks,
		    t->cat_foreign, t->cat_takeovers, t->cat_yields,
		    t->cat_restores, t->cat_set_fail);
	for (i = 0; i < t->nbtxn && i < topn; i++) {
		const struct window_trace_btxn *b = &t->btxn[i];

		vbuf_printf(out,
		    "  binder %d -> %d code %u: %u two-way, %u one-way, "
		    "%u replied (max %llu ns), %u unreplied\n",
		    b->from_pid, b->to_pid, b->code, b->twoway, b->oneway,
		    b->replied, (unsigned long long)b->reply_max_ns,
		    b->unreplied);
	}
	for (i = 0; i < t->nphase && i < topn; i++) {
		const struct window_trace_phase *p = &t->phase[i];

		vbuf_printf(out,
		    "  phase %d %s %s: %u ended, total %llu ns, %llu faults, "
		    "%llu major, %llu pages read\n",
		    p->pid, p->comm, p->name, p->count,
		    (unsigned long long)p->total_ns,
		    (unsigned long long)p->faults, (unsigned long long)p->major,
		    (unsigned long long)p->pages_read);
	}
	for (i = 0; i < t->nslices && i < topn; i++) {
		const struct window_trace_slice *s = &t->slice[i];

		vbuf_printf(out,
		    "  %-7s pid %d tid %d depth %u %s: %u "
		    "complete, %u incomplete, total %llu ns, max %llu ns\n",
		    trace_kind_name(s->kind), s->tgid, s->tid, s->depth,
		    s->name[0] ? s->name : "(end without begin)", s->count,
		    s->incomplete, (unsigned long long)s->total_ns,
		    (unsigned long long)s->max_ns);
	}
}

/* ------------------------------------------------------ the part's ops */

static void
trace_part_free(void *part)
{
	window_trace_free(part);
}

static void *
trace_part_dup(const void *part)
{
	return window_trace_dup(part);
}

static int
trace_part_merge(void **accp, const void *src)
{
	struct window_trace *acc = *accp;
	int r;

	r = window_trace_merge(&acc, src);
	*accp = acc;
	return r;
}

static size_t
trace_part_bytes(const void *part)
{
	const struct window_trace *t = part;

	return t->head_only ? WINDOW_TRACE_HEAD : sizeof(*t);
}

const struct window_part_ops trace_window_part = {
	.name = "trace",
	.free = trace_part_free,
	.dup = trace_part_dup,
	.merge = trace_part_merge,
	.dump = trace_part_dump,
	.bytes = trace_part_bytes,
};
