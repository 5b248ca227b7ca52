/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall latency on the wire (op 32): without a range, the last closed
 * window's part (loop thread, nothing stored is read); with one, the
 * stored windows of the range folded on a query thread
 * (store_syscalls_range, then rpc_answer_syscalls). Names come from the
 * part's arch (core/sysnames.c), percentiles from its histograms
 * (sc_hist.c). A pid or comm filter keeps that process's rows and slow
 * calls and leaves out the "other" row (it mixes every process).
 */
#include <errno.h>
#include <string.h>

#include "core/sysnames.h"
#include "rpc/rpc.h"
#include "rpc_int.h"
#include "syscalls/sc_window.h"
#include "window/window.h"

static bool
wanted(const struct rpc_query *q, int32_t tgid, const char *comm)
{
	if (q->pid > 0)
		return tgid == q->pid;
	if (q->process[0] != '\0')
		return strncmp(comm, q->process, SC_COMM_LEN) == 0;
	return true;
}

static char *
sc_name(struct rpc_arena *a, uint32_t arch, uint32_t nr)
{
	const char *n = arch < SYSNAMES__MAX ? sysnames_name(arch, nr) : NULL;

	return rpc_pb_str(a, n ? n : "", 64);
}

static Vitals__SyscallRow *
pb_row(struct rpc_arena *a, const struct window_syscalls *p,
    const struct sc_row *r, uint64_t rows)
{
	Vitals__SyscallRow *m;
	unsigned lo = 0, hi = SC_HIST_N, i;

	NEW(a, m, vitals__syscall_row__init);
	m->tgid = r->tgid;
	m->start_ns = r->start_ns;
	TRY(m->comm = rpc_pb_str(a, r->comm, sizeof(r->comm)));
	m->nr = r->nr;
	TRY(m->name = r->tgid < 0 ? rpc_pb_str(a, "", 1) :
				    sc_name(a, p->arch, r->nr));
	m->count = r->count;
	m->errors = sc_row_errors(r);
	m->eagain = r->errors[SC_ERR_EAGAIN];
	m->eintr = r->errors[SC_ERR_EINTR];
	m->etimedout = r->errors[SC_ERR_ETIMEDOUT];
	m->other_errors = r->errors[SC_ERR_OTHER];
	m->sum_ns = r->sum_ns;
	m->max_ns = r->max_ns;
	m->fast = r->fast;
	m->mean_ns = r->count ? r->sum_ns / r->count : 0;
	m->p50_ns = sc_hist_quantile(r->hist, r->fast, p->floor_ns, r->max_ns,
	    0.50);
	m->p90_ns = sc_hist_quantile(r->hist, r->fast, p->floor_ns, r->max_ns,
	    0.90);
	m->p99_ns = sc_hist_quantile(r->hist, r->fast, p->floor_ns, r->max_ns,
	    0.99);
	while (lo < SC_HIST_N && r->hist[lo] == 0)
		lo++;
	while (hi > lo && r->hist[hi - 1] == 0)
		hi--;
	m->hist_first = lo < SC_HIST_N ? lo : 0;
	ARRAY(a, m->hist, hi - lo);
	for (i = lo; i < hi; i++)
		m->hist[i - lo] = r->hist[i];
	m->n_hist = hi - lo;
	m->rows = rows;
	return m;
}

static Vitals__SyscallSlow *
pb_slow(struct rpc_arena *a, const struct window_syscalls *p,
    const struct sc_slow *s)
{
	Vitals__SyscallSlow *m;

	NEW(a, m, vitals__syscall_slow__init);
	m->tid = s->tid;
	m->tgid = s->tgid;
	m->start_ns = s->start_ns;
	TRY(m->comm = rpc_pb_str(a, s->comm, sizeof(s->comm)));
	m->nr = s->nr;
	TRY(m->name = sc_name(a, p->arch, s->nr));
	m->ret = s->ret;
	m->boot_enter_ns = s->boot_enter_ns;
	m->lat_ns = s->lat_ns;
	return m;
}

static Vitals__SyscallCounters *
pb_counters(struct rpc_arena *a, const struct sc_counters *c)
{
	Vitals__SyscallCounters *m;

	NEW(a, m, vitals__syscall_counters__init);
	m->missing_enter = c->missing_enter;
	m->mismatch = c->mismatch;
	m->map_full = c->map_full;
	m->rb_full = c->rb_full;
	m->slow_dropped = c->slow_dropped;
	m->compat = c->compat;
	m->drain_errors = c->drain_errors;
	return m;
}

Vitals__SyscallHealth *
rpc_pb_syscall_health(struct rpc_arena *a, const struct sc_health *h)
{
	Vitals__SyscallHealth *m;

	NEW(a, m, vitals__syscall_health__init);
	TRY(m->state = rpc_pb_str(a, sc_state_name(h->state), 16));
	m->err = h->err;
	m->programs = h->progs;
	m->traced = h->traced;
	m->windows = h->windows;
	m->have_prog_stats = (h->have & SC_HAVE_PROG_STATS) != 0;
	m->prog_run_ns = h->prog_run_ns;
	m->prog_run_cnt = h->prog_run_cnt;
	TRY(m->counters = pb_counters(a, &h->ctr));
	m->ring_bytes = h->ring.size;
	m->ring_wake_bytes = h->ring.wake_bytes;
	m->ring_wakeups = h->ring.wakeups;
	m->ring_reads = h->ring.reads;
	m->ring_records = h->ring.records;
	return m;
}

static Vitals__SyscallsAnswer *
pb_syscalls(struct rpc_arena *a, const struct rpc_query *q,
    const struct window_syscalls *p, uint32_t windows, bool stored)
{
	Vitals__SyscallsAnswer *m;
	bool filtered = q->pid > 0 || q->process[0] != '\0';
	size_t i, n;

	NEW(a, m, vitals__syscalls_answer__init);
	m->stored = stored;
	m->windows = windows;
	if (p == NULL) {
		TRY(m->state = rpc_pb_str(a, "off", 4));
		return m;
	}
	TRY(m->state = rpc_pb_str(a, sc_state_name(p->state), 16));
	m->err = p->err;
	TRY(m->arch = rpc_pb_str(a,
		p->arch < SYSNAMES__MAX ? sysnames_arch_name(p->arch) : "",
		32));
	m->floor_ns = p->floor_ns;
	m->slow_ns = p->slow_ns;
	TRY(m->counters = pb_counters(a, &p->ctr));
	m->have_prog_stats = (p->have & SC_HAVE_PROG_STATS) != 0;
	m->prog_run_ns = p->prog_run_ns;
	m->prog_run_cnt = p->prog_run_cnt;
	ARRAY(a, m->rows, p->nrows);
	for (i = n = 0; i < p->nrows; i++)
		if (wanted(q, p->rows[i].tgid, p->rows[i].comm))
			TRY(m->rows[n++] = pb_row(a, p, &p->rows[i], 0));
	m->n_rows = n;
	if (!filtered && (p->other_rows || p->other.count))
		TRY(m->other = pb_row(a, p, &p->other, p->other_rows));
	ARRAY(a, m->slow, p->nslow);
	for (i = n = 0; i < p->nslow; i++)
		if (wanted(q, p->slow[i].tgid, p->slow[i].comm))
			TRY(m->slow[n++] = pb_slow(a, p, &p->slow[i]));
	m->n_slow = n;
	return m;
}

static int
answer(const struct rpc_query *q, const struct window_syscalls *p,
    uint32_t windows, bool stored, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	struct rpc_arena a = { 0 };
	int r;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = q->id;
	resp.result_case = VITALS__RESPONSE__RESULT_SYSCALLS;
	if ((resp.syscalls = pb_syscalls(&a, q, p, windows, stored)) == NULL)
		r = -ENOMEM;
	else if (vitals__response__get_packed_size(&resp) > max)
		r = rpc_error_frame(q->id, RPC_TOO_LARGE,
		    "answer exceeds the frame limit: lower syscall_top or "
		    "syscall_slow_max",
		    ret, ret_len);
	else
		r = frame_pack_response(&resp, ret, ret_len);
	rpc_arena_release(&a);
	return r;
}

int
rpc_answer_syscalls(const struct rpc_query *q, const struct window_syscalls *p,
    uint32_t windows, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	return answer(q, p, windows, true, max, ret, ret_len);
}

int
rpc_syscalls(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res)
{
	const Vitals__SyscallsRequest *sr = req->syscalls;
	const Vitals__TimeRange *tr = sr->range;
	struct rpc_query *q = &res->query;
	const struct window *w = ctx->info->last;
	const char *why;

	memset(q, 0, sizeof(*q));
	q->op = RPC_Q_SYSCALLS;
	q->id = req->id;
	q->hz = ctx->info->hz;
	if (sr->pid < 0)
		return rpc_error_frame(req->id, RPC_BAD_REQUEST,
		    "pid must be positive", &res->frame, &res->len);
	q->pid = sr->pid;
	if (sr->process && *sr->process) {
		/* a comm: longer matches nothing */
		if (strlen(sr->process) >= SC_COMM_LEN)
			return rpc_error_frame(req->id, RPC_BAD_REQUEST,
			    "process name longer than a comm (15 bytes)",
			    &res->frame, &res->len);
		strcpy(q->process, sr->process);
	}
	if (tr == NULL ||
	    (tr->since_ns == 0 && tr->from_wall_ns == 0 &&
		tr->to_wall_ns == 0)) {
		if (w == NULL)
			return rpc_error_frame(req->id, RPC_UNAVAILABLE,
			    "no window closed yet", &res->frame, &res->len);
		return answer(q, window_syscalls(w), window_syscalls(w) != NULL,
		    false, ctx->max_frame, &res->frame, &res->len);
	}
	if ((why = rpc_resolve_range(tr, ctx->now_wall_ns, &q->from_wall_ns,
		 &q->to_wall_ns, &q->relative)) != NULL)
		return rpc_error_frame(req->id, RPC_BAD_REQUEST, why,
		    &res->frame, &res->len);
	res->verdict = RPC_QUERY;
	return 0;
}
