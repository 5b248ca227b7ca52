/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA-BUF on the wire (op 29): without a range, the last pass as the
 * daemon holds it (loop thread, nothing stored is read); with one, the
 * stored windows of the range folded on a query thread
 * (store_dmabuf_range, then rpc_answer_dmabuf).
 */
#include <errno.h>
#include <string.h>

#include "dmabuf/dmabuf.h"
#include "rpc/rpc.h"
#include "rpc_int.h"

static Vitals__DmabufProc *
pb_proc(struct rpc_arena *a, const struct dmabuf_proc *p)
{
	Vitals__DmabufProc *m;

	NEW(a, m, vitals__dmabuf_proc__init);
	m->pid = p->pid;
	TRY(m->name = rpc_pb_str(a, p->name, sizeof(p->name)));
	m->bytes = p->bytes;
	m->bytes_max = p->bytes_max;
	m->buffers = p->buffers;
	m->fds = p->fds;
	m->shared_bytes = p->shared_bytes;
	m->pss_bytes = p->pss_bytes;
	m->passes = p->passes;
	m->procs = p->procs;
	return m;
}

static Vitals__DmabufExporter *
pb_exp(struct rpc_arena *a, const struct dmabuf_exp *e)
{
	Vitals__DmabufExporter *m;

	NEW(a, m, vitals__dmabuf_exporter__init);
	TRY(m->name = rpc_pb_str(a, e->name, sizeof(e->name)));
	m->other = e->other;
	m->bytes = e->bytes;
	m->bytes_max = e->bytes_max;
	m->buffers = e->buffers;
	m->passes = e->passes;
	return m;
}

static Vitals__DmabufShared *
pb_shared(struct rpc_arena *a, const struct dmabuf_shared *s)
{
	Vitals__DmabufShared *m;
	size_t k;

	NEW(a, m, vitals__dmabuf_shared__init);
	m->inode = s->ino;
	m->size = s->size;
	TRY(m->exporter = rpc_pb_str(a, s->exp, sizeof(s->exp)));
	m->sharers = s->sharers;
	ARRAY(a, m->pids, s->npids);
	for (k = 0; k < s->npids && k < DMABUF_SHARERS_MAX; k++)
		m->pids[k] = s->pids[k];
	m->n_pids = k;
	return m;
}

static Vitals__Dmabuf *
pb_dmabuf(struct rpc_arena *a, const struct window_dmabuf *p, uint32_t windows,
    bool stored)
{
	Vitals__Dmabuf *m;
	size_t i;

	NEW(a, m, vitals__dmabuf__init);
	m->stored = stored;
	m->windows = windows;
	if (p == NULL)
		return m;
	m->on = true;
	m->passes = p->passes;
	m->pass_wall_ns = p->pass_wall_ns;
	m->total_bytes = p->total_bytes;
	m->buffers = p->buffers;
	m->shared_bytes = p->shared_bytes;
	m->shared_buffers = p->shared_buffers;
	m->total_bytes_max = p->total_bytes_max;
	m->procs_scanned = p->procs_scanned;
	m->procs_skipped = p->procs_skipped;
	m->procs_unreadable = p->procs_unreadable;
	m->procs_gone = p->procs_gone;
	m->fds_read = p->fds_read;
	m->fds_dmabuf = p->fds_dmabuf;
	m->fdinfo_invalid = p->fdinfo_invalid;
	m->sysfs_found = p->sysfs_found;
	m->size_mismatch = p->size_mismatch;
	m->procs_cut = p->procs_cut;
	m->exporters_cut = p->exps_cut;
	m->shared_cut = p->shared_cut;
	m->pass_ns_sum = p->pass_ns_sum;
	m->pass_ns_max = p->pass_ns_max;
	m->passes_overlapped = p->passes_overlapped;
	m->kernel_passes = p->kernel_passes;
	m->passes_no_buffer = p->passes_no_buffer;
	m->iter_errors = p->iter_errors;
	m->kernel_buffers = p->kernel_buffers;
	m->kernel_bytes = p->kernel_bytes;
	m->iter_why = (char *)dmabuf_iter_why_name(
	    (enum dmabuf_iter_why)p->iter_why);
	ARRAY(a, m->procs, p->nprocs);
	for (i = 0; i < p->nprocs; i++)
		TRY(m->procs[i] = pb_proc(a, &p->procs[i]));
	m->n_procs = p->nprocs;
	ARRAY(a, m->exporters, p->nexps);
	for (i = 0; i < p->nexps; i++)
		TRY(m->exporters[i] = pb_exp(a, &p->exps[i]));
	m->n_exporters = p->nexps;
	ARRAY(a, m->shared, p->nshared);
	for (i = 0; i < p->nshared; i++)
		TRY(m->shared[i] = pb_shared(a, &p->shared[i]));
	m->n_shared = p->nshared;
	return m;
}

static int
answer(uint64_t id, const struct window_dmabuf *p, uint32_t windows,
    bool stored, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	struct rpc_arena a = { 0 };
	int r;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = id;
	resp.result_case = VITALS__RESPONSE__RESULT_DMABUF;
	if ((resp.dmabuf = pb_dmabuf(&a, p, windows, stored)) == NULL)
		r = -ENOMEM;
	else if (vitals__response__get_packed_size(&resp) > max)
		r = rpc_error_frame(id, RPC_TOO_LARGE,
		    "answer exceeds the frame limit: lower dmabuf_procs", ret,
		    ret_len);
	else
		r = frame_pack_response(&resp, ret, ret_len);
	rpc_arena_release(&a);
	return r;
}

int
rpc_answer_dmabuf(const struct rpc_query *q, const struct window_dmabuf *p,
    uint32_t windows, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	return answer(q->id, p, windows, true, max, ret, ret_len);
}

int
rpc_dmabuf(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res)
{
	const Vitals__TimeRange *tr = req->dmabuf->range;
	struct rpc_query *q = &res->query;
	const char *why;

	if (tr == NULL ||
	    (tr->since_ns == 0 && tr->from_wall_ns == 0 && tr->to_wall_ns == 0))
		return answer(req->id, ctx->info->dmabuf, 0, false,
		    ctx->max_frame, &res->frame, &res->len);
	memset(q, 0, sizeof(*q));
	q->op = RPC_Q_DMABUF;
	q->id = req->id;
	q->hz = ctx->info->hz;
	if ((why = rpc_resolve_range(tr, ctx->now_wall_ns, &q->from_wall_ns,
		 &q->to_wall_ns, &q->relative)) != NULL)
		return rpc_error_frame(req->id, RPC_BAD_REQUEST, why,
		    &res->frame, &res->len);
	res->verdict = RPC_QUERY;
	return 0;
}
