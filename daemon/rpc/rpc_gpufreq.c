/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU frequency on the wire (op 31): without a range, the last closed
 * window's part (loop thread, nothing stored is read); with one, the
 * stored windows of the range folded on a query thread
 * (store_gpufreq_range, then rpc_answer_gpufreq). Health's GpuFreqHealth.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpufreq/gpufreq.h"
#include "rpc/rpc.h"
#include "rpc_int.h"

static int
cmp_state(const void *a, const void *b)
{
	const Vitals__GpuFreqState *const *x = a, *const *y = b;

	return (*x)->hz < (*y)->hz ? -1 : (*x)->hz > (*y)->hz;
}

static Vitals__GpuFreqDevice *
pb_dev(struct rpc_arena *a, const struct gpufreq_wdev *d)
{
	const struct gpufreq_win *w = &d->w;
	Vitals__GpuFreqDevice *m;
	uint32_t i, n;

	NEW(a, m, vitals__gpu_freq_device__init);
	TRY(m->name = rpc_pb_str(a, d->name, sizeof(d->name)));
	TRY(m->kind = rpc_pb_str(a, gpufreq_kind_name(d->kind), 16));
	m->have = w->have;
	m->reads = w->reads;
	m->errors = w->errors;
	if (w->have & GPUFREQ_HAVE_CUR) {
		m->cur_min_hz = w->cur_min_hz;
		m->cur_max_hz = w->cur_max_hz;
		m->cur_sum_hz = w->cur_sum_hz;
		m->cur_n = w->cur_n;
	}
	if (w->have & GPUFREQ_HAVE_MIN)
		m->min_hz = w->min_hz;
	if (w->have & GPUFREQ_HAVE_MAX)
		m->max_hz = w->max_hz;
	if (w->have & GPUFREQ_HAVE_BUSY) {
		m->busy_us = w->busy_us;
		m->total_us = w->total_us;
	}
	if (w->have & GPUFREQ_HAVE_BUSY_PCT) {
		m->busy_pct_sum = w->busy_pct_sum;
		m->busy_pct_n = w->busy_pct_n;
	}
	(void)gpufreq_busy_ppm(w, &m->busy_ppm);
	n = (w->have & GPUFREQ_HAVE_TIS) ? w->tis_n : 0;
	if (n > GPUFREQ_MAX_STATES)
		n = GPUFREQ_MAX_STATES;
	ARRAY(a, m->states, n);
	for (i = 0; i < n; i++) {
		NEW(a, m->states[i], vitals__gpu_freq_state__init);
		m->states[i]->hz = w->tis_hz[i];
		m->states[i]->ms = w->tis_ms[i];
	}
	m->n_states = n;
	if (n > 1)
		qsort(m->states, n, sizeof(*m->states), cmp_state);
	return m;
}

static Vitals__GpuFreq *
pb_gpufreq(struct rpc_arena *a, const struct window_gpufreq *p, bool stored)
{
	Vitals__GpuFreq *m;
	uint32_t i;

	NEW(a, m, vitals__gpu_freq__init);
	m->stored = stored;
	if (p == NULL)
		return m;
	m->on = true;
	m->windows = p->windows;
	m->found = p->found;
	m->skipped = p->skipped;
	m->reads = p->reads;
	m->read_ns = p->read_ns;
	m->read_ns_max = p->read_ns_max;
	m->errors = p->errors;
	ARRAY(a, m->devices, p->ndev);
	for (i = 0; i < p->ndev; i++)
		TRY(m->devices[i] = pb_dev(a, &p->dev[i]));
	m->n_devices = p->ndev;
	return m;
}

Vitals__GpuFreqHealth *
rpc_pb_gpufreq_health(struct rpc_arena *a, const struct gpufreq *g)
{
	Vitals__GpuFreqHealth *m;

	NEW(a, m, vitals__gpu_freq_health__init);
	m->devices = g->ndev;
	m->errors = g->errors;
	m->skipped = g->skipped;
	return m;
}

static int
answer(uint64_t id, const struct window_gpufreq *p, bool stored, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	struct rpc_arena a = { 0 };
	int r;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = id;
	resp.result_case = VITALS__RESPONSE__RESULT_GPU_FREQ;
	if ((resp.gpu_freq = pb_gpufreq(&a, p, stored)) == NULL)
		r = -ENOMEM;
	else if (vitals__response__get_packed_size(&resp) > max)
		r = rpc_error_frame(id, RPC_TOO_LARGE,
		    "answer exceeds the frame limit", ret, ret_len);
	else
		r = frame_pack_response(&resp, ret, ret_len);
	rpc_arena_release(&a);
	return r;
}

int
rpc_answer_gpufreq(const struct rpc_query *q, const struct window_gpufreq *p,
    uint32_t max, uint8_t **ret, size_t *ret_len)
{
	return answer(q->id, p, true, max, ret, ret_len);
}

int
rpc_gpufreq(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res)
{
	const Vitals__TimeRange *tr = req->gpu_freq->range;
	struct rpc_query *q = &res->query;
	const struct window_gpufreq *p = NULL;
	const char *why;

	if (tr == NULL ||
	    (tr->since_ns == 0 && tr->from_wall_ns == 0 &&
		tr->to_wall_ns == 0)) {
		if (ctx->info->gpufreq && ctx->info->last)
			p = window_gpufreq(ctx->info->last);
		return answer(req->id, p, false, ctx->max_frame, &res->frame,
		    &res->len);
	}
	memset(q, 0, sizeof(*q));
	q->op = RPC_Q_GPUFREQ;
	q->id = req->id;
	q->hz = ctx->info->hz;
	if ((why = rpc_resolve_range(tr, ctx->now_wall_ns, &q->from_wall_ns,
		 &q->to_wall_ns, &q->relative)) != NULL)
		return rpc_error_frame(req->id, RPC_BAD_REQUEST, why,
		    &res->frame, &res->len);
	res->verdict = RPC_QUERY;
	return 0;
}
