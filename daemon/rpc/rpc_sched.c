/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched part on the wire: Window.health.bpf (doc/bpf.md). The rows
 * (uids, processes) are not sent; `vitals dump` prints them.
 */
#include <errno.h>

#include "sched/sched.h"
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
	return m;
}

static int
rpc_sched_window(struct rpc_arena *a, Vitals__Window *m, const struct window *w)
{
	const struct window_bpf *b = window_sched(w);

	if (b->state == VBPF_UNKNOWN)
		return 0;
	if ((m->health->bpf = pb_bpf(a, b)) == NULL)
		return -ENOMEM;
	return 0;
}

const struct rpc_part rpc_sched_part = {
	.window = rpc_sched_window,
};
