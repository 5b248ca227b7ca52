/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity-weighted CPU on the wire: a window's head (Window.wcpu), each
 * Task's weighted ticks in a window, and the answers of `top --weighted`
 * (a TaskList by weighted ticks). With rpc.c and rpc_pb.c the only code
 * that knows protobuf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "store/store.h"
#include "wcpu/wcpu.h"
#include "window/window.h"
#include "rpc_int.h"

/* The window's tasks on the wire get their weighted ticks. */
static void
pb_tasks_wtd(const struct window_wcpu *p, bool thread, Vitals__Task **t,
    size_t n)
{
	unsigned src;
	size_t i;

	for (i = 0; i < n; i++) {
		t[i]->wtd_ticks = wcpu_task(p, thread, t[i]->id,
		    t[i]->starttime, t[i]->d_utime + t[i]->d_stime, &src);
		t[i]->wtd_source = (char *)wcpu_src_name(src);
	}
}

static int
rpc_wcpu_window(struct rpc_arena *a, Vitals__Window *wm, const struct window *w)
{
	const struct window_wcpu *p = window_wcpu(w);
	Vitals__WcpuWindow *m;

	if ((m = rpc_arena_alloc(a, sizeof(*m))) == NULL)
		return -ENOMEM;
	vitals__wcpu_window__init(m);
	m->approx_factor = wcpu_approx_factor(p);
	m->busy_ticks = p->busy_ticks;
	m->nocap_ticks = p->nocap_ticks;
	m->nofreq_ticks = p->nofreq_ticks;
	m->drains = p->drains;
	m->bpf_oncpu_ns = p->oncpu_ns;
	m->bpf_wtd_ns = p->wtd_ns;
	m->bpf_nocap_ns = p->nocap_ns;
	m->bpf_nofreq_ns = p->nofreq_ns;
	m->bpf_procs = (uint32_t)p->nprocs;
	m->bpf_threads = (uint32_t)p->nthreads;
	m->bpf_procs_cut = p->procs_cut;
	m->bpf_threads_cut = p->threads_cut;
	wm->wcpu = m;
	pb_tasks_wtd(p, false, wm->procs, wm->n_procs);
	pb_tasks_wtd(p, true, wm->threads, wm->n_threads);
	return 0;
}

const struct rpc_part rpc_wcpu_part = {
	.window = rpc_wcpu_window,
};

/* Busiest weighted first; ties by identity. */
static int
wtd_cmp(const void *a, const void *b)
{
	const struct rpc_wcpu_task *x = a, *y = b;

	if (x->wtd_ticks != y->wtd_ticks)
		return x->wtd_ticks > y->wtd_ticks ? -1 : 1;
	if (x->t.id != y->t.id)
		return x->t.id < y->t.id ? -1 : 1;
	return x->t.starttime < y->t.starttime ? -1 :
	    x->t.starttime > y->t.starttime    ? 1 :
						 0;
}

int
rpc_answer_top_wcpu(const struct rpc_query *q, struct rpc_wcpu_task *t,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__TaskList list = VITALS__TASK_LIST__INIT;
	struct rpc_arena a = { 0 };
	size_t i;
	int r = -ENOMEM;

	qsort(t, n, sizeof(*t), wtd_cmp);
	if (n > q->n)
		n = q->n;
	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = q->id;
	list.metric = VITALS__METRIC__METRIC_WEIGHTED;
	list.threads = q->threads;
	list.from_wall_ns = q->from_wall_ns;
	list.to_wall_ns = q->to_wall_ns;
	list.hz = q->hz;
	if (n &&
	    (list.tasks = rpc_arena_alloc(&a, n * sizeof(*list.tasks))) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if ((list.tasks[i] = rpc_pb_task(&a, &t[i].t)) == NULL)
			goto out;
		list.tasks[i]->wtd_ticks = t[i].wtd_ticks;
		list.tasks[i]->wtd_source = (char *)wcpu_src_name(t[i].src);
	}
	list.n_tasks = n;
	resp.result_case = VITALS__RESPONSE__RESULT_TOP;
	resp.top = &list;
	if (vitals__response__get_packed_size(&resp) > max)
		r = rpc_error_frame(q->id, RPC_TOO_LARGE,
		    "answer exceeds the frame limit: ask for fewer tasks", ret,
		    ret_len);
	else
		r = frame_pack_response(&resp, ret, ret_len);
out:
	rpc_arena_release(&a);
	return r;
}
