/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ftrace figures on the wire (op 18, Health.trace): stored windows'
 * ftrace parts as TraceWindow messages, per-process rows filtered by the
 * request's pid or process name. With rpc.c and rpc_pb.c the only code
 * that knows protobuf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "trace/atrace_cat.h"
#include "trace/trace.h"
#include "window/window.h"
#include "rpc_int.h"

/*
 * A row of process tgid is wanted: no filter, the pid, or a process of
 * that name active in the window (name or comm of its task entry).
 */
bool
rpc_trace_match(const struct rpc_query *q, const struct window *w, int32_t tgid)
{
	size_t i;

	if (q->pid > 0)
		return tgid == q->pid;
	if (q->process[0] == '\0')
		return true;
	for (i = 0; i < w->nprocs; i++) {
		const struct window_task *t = &w->procs[i];

		if (t->tgid == tgid &&
		    (strcmp(window_task_name(t), q->process) == 0 ||
			strcmp(t->comm, q->process) == 0))
			return true;
	}
	return false;
}

static char **
pb_events(struct rpc_arena *a, uint32_t bits, size_t *ret_n)
{
	size_t n = 0;
	unsigned i;
	char **v;

	for (i = 0; i < FEV__MAX; i++)
		n += (bits >> i) & 1;
	*ret_n = n;
	ARRAY(a, v, n);
	n = 0;
	for (i = 0; i < FEV__MAX; i++)
		if ((bits >> i) & 1)
			v[n++] = (char *)ftrace_ev_name(i);
	return v;
}

/* The ATrace categories' fields, the same in TraceWindow and
 * TraceHealth: a macro over the two message types. */
#define PB_ATCAT(a, m, t)                                               \
	do {                                                            \
		char names_[512];                                       \
                                                                        \
		(m)->atrace_categories = (char *)atcat_state_name(      \
		    (t)->cat_state);                                    \
		(m)->atrace_categories_err = (t)->cat_err;              \
		(m)->atrace_tags = (t)->cat_tags;                       \
		atcat_tag_names((t)->cat_tags, names_, sizeof(names_)); \
		if (((m)->atrace_tag_names = rpc_pb_str((a), names_,    \
			 sizeof(names_))) == NULL)                      \
			return NULL;                                    \
		(m)->atrace_flags = (t)->cat_flags;                     \
		(m)->atrace_checks = (t)->cat_checks;                   \
		(m)->atrace_foreign = (t)->cat_foreign;                 \
		(m)->atrace_takeovers = (t)->cat_takeovers;             \
		(m)->atrace_yields = (t)->cat_yields;                   \
		(m)->atrace_restores = (t)->cat_restores;               \
		(m)->atrace_set_fail = (t)->cat_set_fail;               \
		(m)->atrace_read_fail = (t)->cat_read_fail;             \
	} while (0)

static Vitals__TraceSlice *
pb_slice(struct rpc_arena *a, const struct window_trace_slice *s)
{
	Vitals__TraceSlice *m;

	NEW(a, m, vitals__trace_slice__init);
	m->kind = (char *)trace_kind_name(s->kind);
	m->pid = s->tgid;
	m->tid = s->tid;
	m->depth = s->depth;
	TRY(m->name = rpc_pb_str(a, s->name, sizeof(s->name)));
	m->count = s->count;
	m->incomplete = s->incomplete;
	m->total_ns = s->total_ns;
	m->max_ns = s->max_ns;
	return m;
}

static Vitals__TraceBinder *
pb_binder(struct rpc_arena *a, const struct window_trace_binder *b)
{
	Vitals__TraceBinder *m;

	NEW(a, m, vitals__trace_binder__init);
	m->from_pid = b->from_pid;
	m->to_pid = b->to_pid;
	m->calls = b->calls;
	m->oneway = b->oneway;
	m->replies = b->replies;
	return m;
}

/* Slots up to the last non-zero one (none: NULL, 0). */
static uint32_t *
pb_hist(struct rpc_arena *a, const uint32_t *hist, size_t *ret_n)
{
	size_t n = VITALS_TRACE_BTXN_SLOTS;
	uint32_t *v;

	while (n > 0 && hist[n - 1] == 0)
		n--;
	*ret_n = n;
	ARRAY(a, v, n);
	if (n)
		memcpy(v, hist, n * sizeof(*v));
	return v;
}

static Vitals__TraceBinderTxn *
pb_btxn(struct rpc_arena *a, const struct window_trace_btxn *b, bool rest)
{
	Vitals__TraceBinderTxn *m;

	NEW(a, m, vitals__trace_binder_txn__init);
	m->from_pid = rest ? -1 : b->from_pid;
	m->to_pid = rest ? -1 : b->to_pid;
	m->code = rest ? 0 : b->code;
	m->twoway = b->twoway;
	m->oneway = b->oneway;
	m->received = b->received;
	m->replied = b->replied;
	m->unreceived = b->unreceived;
	m->unreplied = b->unreplied;
	m->recv_sum_ns = b->recv_sum_ns;
	m->recv_max_ns = b->recv_max_ns;
	m->reply_sum_ns = b->reply_sum_ns;
	m->reply_max_ns = b->reply_max_ns;
	m->recv_hist = pb_hist(a, b->recv_hist, &m->n_recv_hist);
	if (m->n_recv_hist && m->recv_hist == NULL)
		return NULL;
	m->reply_hist = pb_hist(a, b->reply_hist, &m->n_reply_hist);
	if (m->n_reply_hist && m->reply_hist == NULL)
		return NULL;
	m->recv_p50_ns = window_btxn_quantile_ns(b->recv_hist, 0.50);
	m->recv_p99_ns = window_btxn_quantile_ns(b->recv_hist, 0.99);
	m->reply_p50_ns = window_btxn_quantile_ns(b->reply_hist, 0.50);
	m->reply_p99_ns = window_btxn_quantile_ns(b->reply_hist, 0.99);
	return m;
}

static Vitals__TraceRunQueue *
pb_rq(struct rpc_arena *a, const struct window_trace_rq *r)
{
	Vitals__TraceRunQueue *m;

	NEW(a, m, vitals__trace_run_queue__init);
	m->tid = r->tid;
	m->count = r->count;
	m->total_ns = r->total_ns;
	m->max_ns = r->max_ns;
	return m;
}

static int
pb_rows(struct rpc_arena *a, Vitals__TraceWindow *m, const struct rpc_query *q,
    const struct window *w)
{
	const struct window_trace *t = window_trace(w); /* not NULL here */
	unsigned i;

	if (t->nslices &&
	    (m->slice = rpc_arena_alloc(a, t->nslices * sizeof(*m->slice))) ==
		NULL)
		return -ENOMEM;
	for (i = 0; i < t->nslices; i++) {
		if (!rpc_trace_match(q, w, t->slice[i].tgid))
			continue;
		if ((m->slice[m->n_slice++] = pb_slice(a, &t->slice[i])) ==
		    NULL)
			return -ENOMEM;
	}
	if (t->ncounters &&
	    (m->counter = rpc_arena_alloc(a,
		 t->ncounters * sizeof(*m->counter))) == NULL)
		return -ENOMEM;
	for (i = 0; i < t->ncounters; i++) {
		const struct window_trace_counter *c = &t->counter[i];
		Vitals__TraceCounter *x;

		if (!rpc_trace_match(q, w, c->tgid))
			continue;
		if ((x = rpc_arena_alloc(a, sizeof(*x))) == NULL)
			return -ENOMEM;
		vitals__trace_counter__init(x);
		x->pid = c->tgid;
		if ((x->name = rpc_pb_str(a, c->name, sizeof(c->name))) == NULL)
			return -ENOMEM;
		x->n = c->n;
		x->last = c->last;
		x->min = c->min;
		x->max = c->max;
		m->counter[m->n_counter++] = x;
	}
	if (t->nbinder &&
	    (m->binder = rpc_arena_alloc(a, t->nbinder * sizeof(*m->binder))) ==
		NULL)
		return -ENOMEM;
	for (i = 0; i < t->nbinder; i++) {
		if (!rpc_trace_match(q, w, t->binder[i].from_pid) &&
		    !rpc_trace_match(q, w, t->binder[i].to_pid))
			continue;
		if ((m->binder[m->n_binder++] = pb_binder(a, &t->binder[i])) ==
		    NULL)
			return -ENOMEM;
	}
	if (t->nrq &&
	    (m->rq = rpc_arena_alloc(a, t->nrq * sizeof(*m->rq))) == NULL)
		return -ENOMEM;
	for (i = 0; i < t->nrq; i++)
		if ((m->rq[m->n_rq++] = pb_rq(a, &t->rq[i])) == NULL)
			return -ENOMEM;
	if (t->ngpu &&
	    (m->gpu_mem = rpc_arena_alloc(a, t->ngpu * sizeof(*m->gpu_mem))) ==
		NULL)
		return -ENOMEM;
	for (i = 0; i < t->ngpu; i++) {
		Vitals__TraceGpuMem *g;

		if ((g = rpc_arena_alloc(a, sizeof(*g))) == NULL)
			return -ENOMEM;
		vitals__trace_gpu_mem__init(g);
		g->gpu_id = t->gpu[i].gpu_id;
		g->pid = t->gpu[i].pid;
		g->events = t->gpu[i].events;
		g->last_size = t->gpu[i].last_size;
		m->gpu_mem[m->n_gpu_mem++] = g;
	}
	if (t->nbtxn &&
	    (m->binder_txn = rpc_arena_alloc(a,
		 t->nbtxn * sizeof(*m->binder_txn))) == NULL)
		return -ENOMEM;
	for (i = 0; i < t->nbtxn; i++) {
		if (!rpc_trace_match(q, w, t->btxn[i].from_pid) &&
		    !rpc_trace_match(q, w, t->btxn[i].to_pid))
			continue;
		if ((m->binder_txn[m->n_binder_txn++] = pb_btxn(a, &t->btxn[i],
			 false)) == NULL)
			return -ENOMEM;
	}
	if (t->nphase &&
	    (m->phase = rpc_arena_alloc(a, t->nphase * sizeof(*m->phase))) ==
		NULL)
		return -ENOMEM;
	for (i = 0; i < t->nphase; i++) {
		if (!rpc_trace_match(q, w, t->phase[i].pid))
			continue;
		if ((m->phase[m->n_phase++] = rpc_pb_phase(a, &t->phase[i],
			 false)) == NULL)
			return -ENOMEM;
	}
	return 0;
}

static Vitals__TraceWindow *
pb_trace_window(struct rpc_arena *a, const struct rpc_query *q,
    const struct window *w)
{
	const struct window_trace *t = window_trace(w); /* not NULL here */
	Vitals__TraceWindow *m;

	NEW(a, m, vitals__trace_window__init);
	m->wall_start_ns = w->wall_start_ns;
	m->wall_end_ns = w->wall_end_ns;
	m->level = w->level;
	m->state = (char *)ftrace_state_name(t->state);
	m->err = t->err;
	m->enabled = pb_events(a, t->enabled, &m->n_enabled);
	if (m->n_enabled && m->enabled == NULL)
		return NULL;
	m->missing = pb_events(a, t->missing, &m->n_missing);
	if (m->n_missing && m->missing == NULL)
		return NULL;
	m->atrace = t->atrace;
	m->lossy = window_trace_lossy(t);
	m->lost = window_trace_lost(t);
	m->overrun = t->overrun;
	m->dropped = t->dropped;
	m->commit_overrun = t->commit_overrun;
	m->pages_lost = t->pages_lost;
	m->missed = t->missed;
	m->stats_fail = t->stats_fail;
	m->events = t->events;
	m->slices = t->slices;
	m->incomplete = t->incomplete;
	m->orphan_ends = t->orphan_ends;
	m->bad_markers = t->bad_markers;
	m->names_cut = t->names_cut;
	if (t->slice_other.count || t->slice_other.incomplete)
		TRY(m->slice_other = pb_slice(a, &t->slice_other));
	m->slices_other = t->slices_other;
	TRY(m->binder_total = pb_binder(a, &t->binder_total));
	TRY(m->rq_total = pb_rq(a, &t->rq_total));
	m->read_ns = t->read_ns;
	m->pages = t->pages;
	m->backlog = t->backlog;
	m->sched_switch = t->sched_switch;
	m->binder_received = t->binder_received;
	m->gpu_events = t->gpu_events;
	m->bad_pages = t->bad_pages;
	m->entries = t->entries;
	m->buffered = t->buffered;
	PB_ATCAT(a, m, t);
	if (t->btxn_rest.twoway || t->btxn_rest.oneway ||
	    t->btxn_rest.received || t->btxn_rest.replied ||
	    t->btxn_rest.unreceived || t->btxn_rest.unreplied)
		TRY(m->binder_txn_rest = pb_btxn(a, &t->btxn_rest, true));
	m->binder_txn_rows_other = t->btxn_other;
	m->binder_orphan_replies = t->btxn_orphan_replies;
	m->binder_orphan_received = t->btxn_orphan_recv;
	m->binder_gave_up_lost = t->btxn_lost;
	m->binder_gave_up_exit = t->btxn_exit;
	m->binder_gave_up_stale = t->btxn_stale;
	m->binder_gave_up_abandoned = t->btxn_abandoned;
	m->binder_gave_up_expired = t->btxn_expired;
	m->binder_gave_up_full = t->btxn_full;
	m->binder_open = t->btxn_open;
	if (rpc_phase_fill(a, m, t) < 0)
		return NULL;
	if (pb_rows(a, m, q, w) < 0)
		return NULL;
	return m;
}

int
rpc_answer_trace(const struct rpc_query *q, struct window *const *w, size_t n,
    bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__TraceList list = VITALS__TRACE_LIST__INIT;
	struct rpc_arena a = { 0 };
	char msg[160];
	size_t i, len;
	int r = -ENOMEM;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = q->id;
	if (n &&
	    (list.windows = rpc_arena_alloc(&a, n * sizeof(*list.windows))) ==
		NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (window_trace(w[i]) == NULL ||
		    window_trace(w[i])->state == FTRACE_UNKNOWN)
			continue; /* no ftrace part: nothing to say */
		if ((list.windows[list.n_windows++] = pb_trace_window(&a, q,
			 w[i])) == NULL)
			goto out;
	}
	list.truncated = truncated;
	resp.result_case = VITALS__RESPONSE__RESULT_TRACE;
	resp.trace = &list;
	len = vitals__response__get_packed_size(&resp);
	if (len > max) {
		snprintf(msg, sizeof(msg),
		    "answer of %zu bytes exceeds the "
		    "%u-byte frame limit: ask for a shorter range or a "
		    "process",
		    len, max);
		r = rpc_error_frame(q->id, RPC_TOO_LARGE, msg, ret, ret_len);
		goto out;
	}
	r = frame_pack_response(&resp, ret, ret_len);
out:
	rpc_arena_release(&a);
	return r;
}

/* Health.trace: the state as of the last closed window. */
Vitals__TraceHealth *
rpc_pb_trace_health(struct rpc_arena *a, const struct window *last)
{
	const struct window_trace *t;
	Vitals__TraceHealth *m;

	if (last == NULL || (t = window_trace(last)) == NULL ||
	    t->state == FTRACE_UNKNOWN)
		return NULL;
	NEW(a, m, vitals__trace_health__init);
	m->state = (char *)ftrace_state_name(t->state);
	m->err = t->err;
	m->enabled = pb_events(a, t->enabled, &m->n_enabled);
	if (m->n_enabled && m->enabled == NULL)
		return NULL;
	m->missing = pb_events(a, t->missing, &m->n_missing);
	if (m->n_missing && m->missing == NULL)
		return NULL;
	m->atrace = t->atrace;
	m->lossy = window_trace_lossy(t);
	m->lost = window_trace_lost(t);
	PB_ATCAT(a, m, t);
	return m;
}

static int
rpc_trace_health(struct rpc_arena *a, Vitals__Health *m,
    const struct window *last)
{
	const struct window_trace *t = window_trace(last);

	if (t->state == FTRACE_UNKNOWN)
		return 0;
	if ((m->trace = rpc_pb_trace_health(a, last)) == NULL)
		return -ENOMEM;
	return 0;
}

const struct rpc_part rpc_trace_part = {
	.health = rpc_trace_health,
};
