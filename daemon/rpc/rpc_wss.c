/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor on the wire: wss_start (trusted), wss_get
 * (reader), wss_stop (trusted) and the Health part. With rpc.c, rpc_pb.c,
 * the only code that knows the protocol.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "rpc/rpc.h"
#include "wss/wss.h"
#include "rpc_int.h"

#define WSS_LIST_MAX 128

static int
wss_error(struct rpc_result *res, uint64_t id, enum rpc_status st,
    const char *msg)
{
	if (st == RPC_PERMISSION_DENIED)
		res->denied = true;
	return rpc_error_frame(id, st, msg, &res->frame, &res->len);
}

static Vitals__WssRegion *
pb_region(struct rpc_arena *a, const struct wss_region *g)
{
	Vitals__WssRegion *m;

	NEW(a, m, vitals__wss_region__init);
	m->start = g->start;
	m->end = g->end;
	TRY(m->label = rpc_pb_str(a, g->label, sizeof(g->label)));
	m->pages = g->pages;
	m->cut = g->cut;
	m->resident = g->resident;
	m->accessed = g->accessed;
	m->idle = g->idle;
	m->not_resident = g->not_resident;
	m->moved = g->moved;
	m->rss_kb = g->rss_kb;
	m->referenced_kb = g->referenced_kb;
	m->gone = g->gone;
	m->sampled = g->done;
	return m;
}

static Vitals__WssTarget *
pb_target(struct rpc_arena *a, const struct wss_status *s)
{
	Vitals__WssTarget *m;
	size_t i;

	NEW(a, m, vitals__wss_target__init);
	m->pid = s->pid;
	m->starttime = s->starttime;
	TRY(m->name = rpc_pb_str(a, s->name, sizeof(s->name)));
	m->mode = (char *)wss_mode_name(s->mode);
	TRY(m->library = rpc_pb_str(a, s->lib, sizeof(s->lib)));
	m->method = (char *)wss_method_name(s->method);
	TRY(m->note = rpc_pb_str(a, s->note, sizeof(s->note)));
	TRY(m->files = rpc_pb_str(a, s->files, sizeof(s->files)));
	m->apk_fallback = s->apk_fallback;
	m->ended = s->ended;
	m->opening = s->opening;
	TRY(m->end_reason = rpc_pb_str(a, s->end_reason,
		sizeof(s->end_reason)));
	m->interval_ms = s->interval_ms;
	m->interval_min_ms = s->interval_min_ms;
	m->interval_max_ms = s->interval_max_ms;
	m->passes = s->seq;
	m->last_mono_ns = s->last_mono_ns;
	m->pass_ns_last = s->pass_ns_last;
	m->pass_ns_max = s->pass_ns_max;
	m->pass_ns_sum = s->pass_ns_sum;
	m->pass_cpu_ns_sum = s->pass_cpu_ns_sum;
	m->maps_changes = s->maps_changes;
	m->read_errors = s->read_errors;
	m->pfn_zeroed = s->pfn_zeroed;
	m->regions_over = s->regions_over;
	m->refs_over = s->refs_over;
	m->log_lines = s->log_lines;
	m->log_errors = s->log_errors;
	m->pagemap_reads = s->io.pm_reads;
	m->bitmap_reads = s->io.bm_reads;
	m->bitmap_writes = s->io.bm_writes;
	m->io_bytes = s->io.bytes;
	ARRAY(a, m->regions, s->nregions);
	for (i = 0; i < s->nregions; i++)
		TRY(m->regions[i] = pb_region(a, &s->regions[i]));
	m->n_regions = s->nregions;
	return m;
}

Vitals__WssHealth *
rpc_pb_wss_health(struct rpc_arena *a, struct wss *w)
{
	Vitals__WssHealth *m;
	char note[160];

	NEW(a, m, vitals__wss_health__init);
	/* no wait for a pass running on the worker */
	wss_counts(w, &m->targets, &m->pages);
	wss_limits(w, &m->max_targets, &m->max_pages);
	m->page_idle = wss_page_idle(w);
	m->damon = wss_damon(w, note, sizeof(note));
	TRY(m->damon_note = rpc_pb_str(a, note, sizeof(note)));
	/* privileges: how files are opened (wss_open.c) */
	m->access = (char *)wss_access(w, &m->access_denied);
	m->helper_errors = wss_helper_errors(w);
	return m;
}

/* A WssList of the targets in v as the answer to req's op. */
static int
answer_list(const struct rpc_ctx *ctx, const Vitals__Request *req,
    const struct wss_status *const *v, size_t n, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__WssList list = VITALS__WSS_LIST__INIT;
	struct rpc_arena a = { 0 };
	size_t i, len;
	char msg[160];
	int r = -ENOMEM;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = req->id;
	if (n &&
	    (list.targets = rpc_arena_alloc(&a, n * sizeof(*list.targets))) ==
		NULL)
		goto out;
	for (i = 0; i < n; i++)
		if ((list.targets[i] = pb_target(&a, v[i])) == NULL)
			goto out;
	list.n_targets = n;
	if (req->op_case == VITALS__REQUEST__OP_WSS_START) {
		resp.result_case = VITALS__RESPONSE__RESULT_WSS_START;
		resp.wss_start = &list;
	} else {
		resp.result_case = VITALS__RESPONSE__RESULT_WSS_GET;
		resp.wss_get = &list;
	}
	if ((len = vitals__response__get_packed_size(&resp)) > ctx->max_frame) {
		snprintf(msg, sizeof(msg),
		    "answer of %zu bytes exceeds the "
		    "%u-byte frame limit: ask for one pid",
		    len, ctx->max_frame);
		r = wss_error(res, req->id, RPC_TOO_LARGE, msg);
		goto out;
	}
	r = frame_pack_response(&resp, &res->frame, &res->len);
out:
	rpc_arena_release(&a);
	return r;
}

static enum rpc_status
start_status(int r)
{
	switch (r) {
	case -EINVAL:
	case -EEXIST:
		return RPC_BAD_REQUEST;
	case -ESRCH:
		return RPC_NOT_FOUND;
	case -EBUSY:
	case -ENOSPC:
		return RPC_BUSY;
	case -EOPNOTSUPP:
	case -EACCES:
	case -EPERM:
		return RPC_UNAVAILABLE;
	default:
		return RPC_ERROR;
	}
}

static int
wss_start_req(const struct rpc_ctx *ctx, struct wss *w,
    const Vitals__Request *req, struct rpc_result *res)
{
	const Vitals__WssStartRequest *sr = req->wss_start;
	const struct wss_status *st;
	unsigned mode, method;
	char err[160];
	int32_t pid = sr->pid;
	int r;

	if (!strcmp(sr->mode, "heap")) {
		mode = WSS_MODE_HEAP;
	} else if (!strcmp(sr->mode, "library")) {
		mode = WSS_MODE_LIBRARY;
	} else {
		return wss_error(res, req->id, RPC_BAD_REQUEST,
		    "mode must be heap or library");
	}
	if (!*sr->method || !strcmp(sr->method, "auto"))
		method = WSS_METHOD_AUTO;
	else if (!strcmp(sr->method, "page_idle"))
		method = WSS_METHOD_PAGE_IDLE;
	else if (!strcmp(sr->method, "clear_refs"))
		method = WSS_METHOD_CLEAR_REFS;
	else
		return wss_error(res, req->id, RPC_BAD_REQUEST,
		    "method must be auto, page_idle or clear_refs");
	if ((pid > 0) == (*sr->name != '\0'))
		return wss_error(res, req->id, RPC_BAD_REQUEST,
		    "name a process by pid or by name, not both");
	if (pid <= 0 && wss_find_name(w, sr->name, &pid) < 0) {
		snprintf(err, sizeof(err), "no process named '%.64s'",
		    sr->name);
		return wss_error(res, req->id, RPC_NOT_FOUND, err);
	}
	if ((r = wss_start(w, pid, mode, sr->library, method, err,
		 sizeof(err))) < 0)
		return wss_error(res, req->id, start_status(r), err);
	st = wss_get(w, pid);
	return answer_list(ctx, req, &st, 1, res);
}

int
rpc_wss(const struct rpc_ctx *ctx, enum control_role role,
    const Vitals__Request *req, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__WssStopAck ack = VITALS__WSS_STOP_ACK__INIT;
	const struct wss_status *v[WSS_LIST_MAX];
	struct wss *w = ctx->mod.wss;
	bool change = req->op_case != VITALS__REQUEST__OP_WSS_GET;
	int32_t pid;
	size_t n;

	if (change && role < ROLE_TRUSTED)
		return wss_error(res, req->id, RPC_PERMISSION_DENIED,
		    "the working-set monitor's targets require the trusted "
		    "role");
	if (w == NULL)
		return wss_error(res, req->id, RPC_UNAVAILABLE,
		    "working-set monitor not running");
	switch (req->op_case) {
	case VITALS__REQUEST__OP_WSS_START:
		return wss_start_req(ctx, w, req, res);
	case VITALS__REQUEST__OP_WSS_GET:
		if ((pid = req->wss_get->pid) < 0)
			return wss_error(res, req->id, RPC_BAD_REQUEST,
			    "negative pid");
		if (pid == 0) {
			n = wss_list(w, v, WSS_LIST_MAX);
			return answer_list(ctx, req, v,
			    n < WSS_LIST_MAX ? n : WSS_LIST_MAX, res);
		}
		if ((v[0] = wss_get(w, pid)) == NULL)
			return wss_error(res, req->id, RPC_NOT_FOUND,
			    "not a working-set target");
		return answer_list(ctx, req, v, 1, res);
	default:
		if ((pid = req->wss_stop->pid) <= 0)
			return wss_error(res, req->id, RPC_BAD_REQUEST,
			    "pid must be positive");
		if (wss_stop(w, pid) < 0)
			return wss_error(res, req->id, RPC_NOT_FOUND,
			    "not a working-set target");
		ack.pid = pid;
		resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
		resp.id = req->id;
		resp.result_case = VITALS__RESPONSE__RESULT_WSS_STOP;
		resp.wss_stop = &ack;
		return frame_pack_response(&resp, &res->frame, &res->len);
	}
}
