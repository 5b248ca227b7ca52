/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Requests in, frames out: splitting the stream into frames, decoding and
 * validating a Request, the role check, the answers that need only memory
 * (snapshot, health — its message assembled in rpc_health.c —, burst,
 * dump), the store requests resolved for the query thread, and the frames
 * of its answers. With rpc_pb.c, the only code of the daemon that knows the
 * wire format.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/control.h"
#include "core/memstat.h"
#include "core/util.h"
#include "gpumem/gpumem.h"
#include "rpc/rpc.h"
#include "store/store.h"
#include "trace/trace.h"
#include "sched/sched.h"
#include "window/window.h"
#include "config/config_reload.h"
#include "rpc_int.h"

#define SNAPSHOT_TOP_DEFAULT 10
#define DUMP_TOP_DEFAULT 20
#define TOP_N_DEFAULT 20
#define TOP_N_MAX 1000
#define TASKS_TOP_MAX 100000
/* cache keys: top_n (<= TOP_N_MAX) for a snapshot, this bit | top_n for a
 * dump */
#define RPC_CACHE_DUMP 0x80000000u
#define WINDOWS_DEFAULT 360
#define WINDOWS_MAX 100000
/* A trace query loads whole windows (38 KiB each, tasks aside) on the
 * query thread: a reader may ask for this many at most. */
#define TRACE_WINDOWS_MAX 720
#define GRANULARITY_MAX_S (366u * 86400u)

_Static_assert((int)RPC_OK == (int)VITALS__STATUS__STATUS_OK, "status");
_Static_assert((int)RPC_ERROR == (int)VITALS__STATUS__STATUS_ERROR, "status");
_Static_assert((int)RPC_BAD_REQUEST == (int)VITALS__STATUS__STATUS_BAD_REQUEST,
    "status");
_Static_assert((int)RPC_PERMISSION_DENIED ==
	(int)VITALS__STATUS__STATUS_PERMISSION_DENIED,
    "status");
_Static_assert((int)RPC_UNSUPPORTED_VERSION ==
	(int)VITALS__STATUS__STATUS_UNSUPPORTED_VERSION,
    "status");
_Static_assert((int)RPC_NOT_FOUND == (int)VITALS__STATUS__STATUS_NOT_FOUND,
    "status");
_Static_assert((int)RPC_UNAVAILABLE == (int)VITALS__STATUS__STATUS_UNAVAILABLE,
    "status");
_Static_assert((int)RPC_BUSY == (int)VITALS__STATUS__STATUS_BUSY, "status");
_Static_assert((int)RPC_ABSENT == (int)VITALS__STATUS__STATUS_ABSENT, "status");
_Static_assert((int)RPC_TOO_LARGE == (int)VITALS__STATUS__STATUS_TOO_LARGE,
    "status");
_Static_assert((int)METRIC_RSS == (int)VITALS__METRIC__METRIC_RSS, "metric");

/* ------------------------------------------------------------ frames */

int
rpc_frame_next(const uint8_t *hdr, size_t avail, uint32_t max,
    uint32_t *ret_len)
{
	uint32_t len;
	int r;

	if (avail < VITALS_FRAME_HDR)
		return -EAGAIN;
	/* The length is checked before anything is sized by it. */
	if ((r = frame_header(hdr, max, &len)) < 0)
		return r;
	if (avail - VITALS_FRAME_HDR < len)
		return -EAGAIN;
	*ret_len = len;
	return 0;
}

/* Pack an answer; one above the frame limit becomes TOO_LARGE. */
static int
pack_answer(Vitals__Response *resp, uint32_t max, uint8_t **ret,
    size_t *ret_len)
{
	size_t n = vitals__response__get_packed_size(resp);
	char msg[160];

	if (n > max) {
		snprintf(msg, sizeof(msg),
		    "answer of %zu bytes exceeds the "
		    "%u-byte frame limit: ask for a shorter range or fewer "
		    "tasks",
		    n, max);
		return rpc_error_frame(resp->id, RPC_TOO_LARGE, msg, ret,
		    ret_len);
	}
	return frame_pack_response(resp, ret, ret_len);
}

static size_t
put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/*
 * A frame from a body packed without version and id (a cached answer):
 * protobuf fields may come in any order, so the two are prepended.
 */
static int
frame_with_id(const uint8_t *body, size_t blen, uint64_t id, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	uint8_t pre[2 + 1 + 10], *buf;
	size_t n = 0;

	pre[n++] = 1 << 3; /* field 1, varint */
	pre[n++] = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	if (id) {
		pre[n++] = 2 << 3;
		n += put_varint(pre + n, id);
	}
	/* Bodies are cached only when they fit (answer_cached): a guard. */
	if (n + blen > max)
		return rpc_error_frame(id, RPC_TOO_LARGE,
		    "answer exceeds the "
		    "frame limit: ask for fewer tasks",
		    ret, ret_len);
	if ((buf = malloc(VITALS_FRAME_HDR + n + blen)) == NULL)
		return -ENOMEM;
	frame_put_header(buf, (uint32_t)(n + blen));
	memcpy(buf + VITALS_FRAME_HDR, pre, n);
	memcpy(buf + VITALS_FRAME_HDR + n, body, blen);
	*ret = buf;
	*ret_len = VITALS_FRAME_HDR + n + blen;
	return 0;
}

/*
 * The same answer for another request: a frame packed with id 0 starts
 * its payload with the version (field 1) and has no field 2, so the id
 * goes right after the version. -EINVAL for any other frame.
 */
int
rpc_frame_reid(const uint8_t *frame, size_t len, uint64_t id, uint8_t **ret,
    size_t *ret_len)
{
	const size_t head = VITALS_FRAME_HDR + 2;
	uint8_t idf[1 + 10], *buf;
	size_t n = 0, plen;

	if (len < head || frame[VITALS_FRAME_HDR] != 1 << 3 ||
	    frame[VITALS_FRAME_HDR + 1] !=
		VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1 ||
	    (len > head && frame[head] == 2 << 3))
		return -EINVAL;
	if (id) {
		idf[n++] = 2 << 3;
		n += put_varint(idf + n, id);
	}
	plen = len - VITALS_FRAME_HDR + n;
	if (plen > UINT32_MAX ||
	    (buf = malloc(VITALS_FRAME_HDR + plen)) == NULL)
		return -ENOMEM;
	frame_put_header(buf, (uint32_t)plen);
	memcpy(buf + VITALS_FRAME_HDR, frame + VITALS_FRAME_HDR, 2);
	memcpy(buf + head, idf, n);
	memcpy(buf + head + n, frame + head, len - head);
	*ret = buf;
	*ret_len = VITALS_FRAME_HDR + plen;
	return 0;
}

void
rpc_cache_release(struct rpc_cache *c)
{
	unsigned i;

	for (i = 0; i < RPC_CACHE_SLOTS; i++)
		free(c->e[i].body);
	memset(c, 0, sizeof(*c));
}

/* The cached body for (window, key), or NULL. A new window empties the
 * cache: every slot holds the same window. */
static const uint8_t *
cache_get(struct rpc_cache *c, uint64_t seq, unsigned key, size_t *ret_len)
{
	unsigned i;

	if (c->seq != seq) {
		rpc_cache_release(c);
		c->seq = seq;
		return NULL;
	}
	for (i = 0; i < RPC_CACHE_SLOTS; i++)
		if (c->e[i].body && c->e[i].top_n == key) {
			*ret_len = c->e[i].len;
			return c->e[i].body;
		}
	return NULL;
}

/* Keep body (ours from now on), replacing the oldest slot. */
static void
cache_put(struct rpc_cache *c, unsigned key, uint8_t *body, size_t len)
{
	unsigned i = c->next++ % RPC_CACHE_SLOTS;

	free(c->e[i].body);
	c->e[i].top_n = key;
	c->e[i].body = body;
	c->e[i].len = len;
}

/*
 * The tasks an answer about w can list: asking for more than that (or
 * than TOP_N_MAX) gives the same answer, so top_n is cut to it before the
 * cache is asked — 500 and 600 are one entry, not two.
 */
unsigned
rpc_top_clamp(const struct window *w, unsigned top_n, bool dump)
{
	size_t most = w->nprocs > w->nthreads ? w->nprocs : w->nthreads;
	const struct window_bpf *b = window_sched(w);

	if (dump && b != NULL) {
		/* the dump's BPF lists are cut to the same top_n */
		if (b->nprocs > most)
			most = b->nprocs;
		if (b->nuids > most)
			most = b->nuids;
	}
	if (most > TOP_N_MAX)
		most = TOP_N_MAX;
	return top_n > most ? (unsigned)most : top_n;
}

/*
 * A packed Response body (no version, no id) of n bytes that would not
 * fit max once framed: replaced, in place, by the body of its TOO_LARGE
 * answer — small, and what is cached instead, so the next ask neither
 * rebuilds the window nor keeps megabytes for an answer never sent.
 */
static int
body_too_large(uint8_t **body, size_t *n, uint32_t max)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	char msg[160];
	uint8_t *b;
	size_t len;

	snprintf(msg, sizeof(msg),
	    "answer of %zu bytes exceeds the %u-byte "
	    "frame limit: ask for a shorter range or fewer tasks",
	    *n, max);
	resp.status = VITALS__STATUS__STATUS_TOO_LARGE;
	resp.error = msg;
	len = vitals__response__get_packed_size(&resp);
	if ((b = malloc(len)) == NULL)
		return -ENOMEM;
	vitals__response__pack(&resp, b);
	free(*body);
	*body = b;
	*n = len;
	return 0;
}

/*
 * Answer with body (ours), keeping it in the cache under key when there
 * is one. A body that would not fit the frame limit answers TOO_LARGE,
 * and that is what is kept. Version and id (13 bytes at most) are added
 * by frame_with_id.
 */
static int
answer_cached(const struct rpc_ctx *ctx, uint64_t id, unsigned key,
    uint8_t *body, size_t n, struct rpc_result *res)
{
	int r;

	if (n + 2 + 1 + 10 > ctx->max_frame &&
	    (r = body_too_large(&body, &n, ctx->max_frame)) < 0) {
		free(body);
		return r;
	}
	r = frame_with_id(body, n, id, ctx->max_frame, &res->frame, &res->len);
	if (ctx->cache && r == 0)
		cache_put(ctx->cache, key, body, n);
	else
		free(body);
	return r;
}

/* ----------------------------------------------------- local answers */

static int
answer_error(struct rpc_result *res, uint64_t id, enum rpc_status st,
    const char *msg)
{
	if (st == RPC_PERMISSION_DENIED)
		res->denied = true;
	return rpc_error_frame(id, st, msg, &res->frame, &res->len);
}

static int
answer_snapshot(const struct rpc_ctx *ctx, uint64_t id,
    const Vitals__SnapshotRequest *sr, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__Snapshot *snap;
	const struct window *w = ctx->info->last;
	struct rpc_cache *c = ctx->cache;
	unsigned top_n = sr->top_n ? sr->top_n : SNAPSHOT_TOP_DEFAULT;
	struct rpc_arena a = { 0 };
	const uint8_t *hit;
	uint8_t *body;
	size_t n;
	int r;

	if (w == NULL)
		return answer_error(res, id, RPC_UNAVAILABLE,
		    "no closed window yet");
	top_n = rpc_top_clamp(w, top_n, false);
	if (c && (hit = cache_get(c, w->seq, top_n, &n)) != NULL)
		return frame_with_id(hit, n, id, ctx->max_frame, &res->frame,
		    &res->len);
	if ((snap = rpc_arena_alloc(&a, sizeof(*snap))) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	vitals__snapshot__init(snap);
	/* top_n 0 (no task in w): "all", which is none */
	if ((snap->window = rpc_pb_window(&a, w, true, top_n)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	resp.result_case = VITALS__RESPONSE__RESULT_SNAPSHOT;
	resp.snapshot = snap;
	n = vitals__response__get_packed_size(&resp);
	if ((body = malloc(n ? n : 1)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	vitals__response__pack(&resp, body);
	r = answer_cached(ctx, id, top_n, body, n, res);
out:
	rpc_arena_release(&a);
	return r;
}

static int
answer_health(const struct rpc_ctx *ctx, uint64_t id, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	struct rpc_arena a = { 0 };
	int r = -ENOMEM;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = id;
	resp.result_case = VITALS__RESPONSE__RESULT_HEALTH;
	if ((resp.health = rpc_pb_health(&a, ctx)) != NULL)
		r = pack_answer(&resp, ctx->max_frame, &res->frame, &res->len);
	rpc_arena_release(&a);
	return r;
}

static int
answer_burst(const struct rpc_ctx *ctx, uint64_t id,
    const Vitals__BurstRequest *br, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__BurstAck ack = VITALS__BURST_ACK__INIT;
	unsigned ms = br->duration_ms;

	if (ms == 0 || ms > VITALS_BURST_MAX_MS)
		ms = VITALS_BURST_MAX_MS;
	if (ctx->mod.burst)
		ctx->mod.burst(ctx->mod.burst_arg, ms);
	ack.duration_ms = ms;
	ack.interval_ms = VITALS_BURST_INTERVAL_MS;
	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = id;
	resp.result_case = VITALS__RESPONSE__RESULT_BURST;
	resp.burst = &ack;
	return pack_answer(&resp, ctx->max_frame, &res->frame, &res->len);
}

static int
answer_dump(const struct rpc_ctx *ctx, uint64_t id,
    const Vitals__DumpRequest *dr, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__Dump dump = VITALS__DUMP__INIT;
	const struct window *w = ctx->info->last;
	struct rpc_cache *c = ctx->cache;
	unsigned top_n = dr->top_n ? dr->top_n : DUMP_TOP_DEFAULT;
	struct vbuf b = { 0 };
	const uint8_t *hit;
	uint8_t *body;
	size_t n;
	int r;

	if (w == NULL)
		return answer_error(res, id, RPC_UNAVAILABLE,
		    "no closed window yet");
	top_n = rpc_top_clamp(w, top_n, true);
	if (c &&
	    (hit = cache_get(c, w->seq, RPC_CACHE_DUMP | top_n, &n)) != NULL)
		return frame_with_id(hit, n, id, ctx->max_frame, &res->frame,
		    &res->len);
	if ((r = dump_window(w, top_n, &b)) < 0)
		goto out;
	if (b.p)
		rpc_utf8_clean(b.p, b.len);
	dump.text = b.p ? b.p : (char *)"";
	resp.result_case = VITALS__RESPONSE__RESULT_DUMP;
	resp.dump = &dump;
	n = vitals__response__get_packed_size(&resp);
	if ((body = malloc(n ? n : 1)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	vitals__response__pack(&resp, body);
	r = answer_cached(ctx, id, RPC_CACHE_DUMP | top_n, body, n, res);
out:
	vbuf_release(&b);
	return r;
}

/* ------------------------------------------------------ store queries */

/* Validate a store request into res->query; an error answers it. */
static int
prepare_query(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res)
{
	struct rpc_query *q = &res->query;
	const Vitals__TimeRange *tr = NULL;
	const char *why;

	memset(q, 0, sizeof(*q));
	q->id = req->id;
	q->hz = ctx->info->hz;
	switch (req->op_case) {
	case VITALS__REQUEST__OP_WINDOWS:
		q->op = RPC_Q_WINDOWS;
		tr = req->windows->range;
		if (req->windows->granularity_s > GRANULARITY_MAX_S)
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "granularity above 366 days");
		q->granularity_s = req->windows->granularity_s;
		q->max_windows = req->windows->max_windows ?
		    req->windows->max_windows :
		    WINDOWS_DEFAULT;
		if (q->max_windows > WINDOWS_MAX)
			q->max_windows = WINDOWS_MAX;
		q->with_tasks = req->windows->with_tasks;
		q->top_n = req->windows->top_n > TASKS_TOP_MAX ?
		    TASKS_TOP_MAX :
		    req->windows->top_n;
		break;
	case VITALS__REQUEST__OP_TOP:
		q->op = RPC_Q_TOP;
		tr = req->top->range;
		q->weighted = req->top->metric ==
		    VITALS__METRIC__METRIC_WEIGHTED;
		if ((unsigned)req->top->metric > (unsigned)METRIC_RSS &&
		    !q->weighted)
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "unknown metric");
		if ((unsigned)req->top->source >
			(unsigned)VITALS__TOP_SOURCE__TOP_SOURCE_BPF ||
		    (unsigned)req->top->sched_metric >
			(unsigned)VITALS__SCHED_METRIC__SCHED_RQ_P99)
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "unknown source or sched metric");
		q->bpf = req->top->source == VITALS__TOP_SOURCE__TOP_SOURCE_BPF;
		q->sched_metric = (unsigned)req->top->sched_metric;
		q->metric = q->weighted ? METRIC_CPU :
					  (enum store_metric)req->top->metric;
		q->threads = req->top->threads;
		q->n = req->top->n ? req->top->n : TOP_N_DEFAULT;
		if (q->n > TOP_N_MAX)
			q->n = TOP_N_MAX;
		if (rpc_fgbg_state(req->top->state, &q->state) < 0 ||
		    (q->state && (q->threads || q->metric == METRIC_RSS)))
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "state: top-app, foreground, background, system or "
			    "unknown; processes by cpu, minflt or majflt");
		/* one dataset and one ranking per answer: none is dropped
		 * without a word */
		if (q->state && q->weighted)
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "state and weighted: one at a time");
		if (q->bpf &&
		    (q->state || q->weighted || q->metric != METRIC_CPU))
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "source bpf ranks by sched_metric alone: no state, "
			    "weighted or metric");
		break;
	case VITALS__REQUEST__OP_PROCESS:
		q->op = RPC_Q_PROCESS;
		tr = req->process->range;
		if (req->process->pid <= 0)
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "pid must be positive");
		q->pid = req->process->pid;
		q->starttime = req->process->starttime;
		q->threads = req->process->threads;
		if (rpc_fgbg_state(req->process->state, &q->state) < 0 ||
		    (q->state && q->threads))
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "state: top-app, foreground, background, system or "
			    "unknown; without threads");
		break;
	case VITALS__REQUEST__OP_TRACE:
		q->op = RPC_Q_TRACE;
		tr = req->trace->range;
		if (req->trace->pid < 0)
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "pid must not be negative");
		q->pid = req->trace->pid;
		if (req->trace->process &&
		    strlen(req->trace->process) >= sizeof(q->process))
			return answer_error(res, q->id, RPC_BAD_REQUEST,
			    "process name too long");
		if (req->trace->process)
			snprintf(q->process, sizeof(q->process), "%s",
			    req->trace->process);
		q->max_windows = req->trace->max_windows ?
		    req->trace->max_windows :
		    WINDOWS_DEFAULT;
		if (q->max_windows > TRACE_WINDOWS_MAX)
			q->max_windows = TRACE_WINDOWS_MAX;
		break;
	case VITALS__REQUEST__OP_EXPORT:
		tr = req->export->range;
		if ((why = rpc_export_query(req->export, q)) != NULL)
			return answer_error(res, q->id, RPC_BAD_REQUEST, why);
		break;
	default:
		return -EINVAL;
	}
	if ((why = rpc_resolve_range(tr, ctx->now_wall_ns, &q->from_wall_ns,
		 &q->to_wall_ns, &q->relative)) != NULL)
		return answer_error(res, q->id, RPC_BAD_REQUEST, why);
	res->verdict = RPC_QUERY;
	return 0;
}

/* ------------------------------------------------------------- GpuMem */

/*
 * GpuMem: without a span, the pairs as the last traversal found them
 * (loop thread, nothing stored is read); with since_ns, the stored windows
 * of that span on the query thread (rpc_answer_gpumem_span).
 */
static int
answer_gpumem(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res)
{
	const Vitals__GpuMemRequest *gr = req->gpu_mem;
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__GpuMem gm = VITALS__GPU_MEM__INIT;
	struct rpc_arena a = { 0 };
	struct gpumem_view v;
	struct rpc_query *q;
	size_t i;
	int r;

	if (gr->since_ns < 0)
		return answer_error(res, req->id, RPC_BAD_REQUEST,
		    "negative since_ns");
	if (gr->since_ns > 0) {
		q = &res->query;
		memset(q, 0, sizeof(*q));
		q->op = RPC_Q_GPUMEM;
		q->id = req->id;
		q->hz = ctx->info->hz;
		q->relative = true;
		q->to_wall_ns = ctx->now_wall_ns;
		q->from_wall_ns = rpc_since_from(ctx->now_wall_ns,
		    gr->since_ns);
		res->verdict = RPC_QUERY;
		return 0;
	}
	if (ctx->info->gpumem == NULL)
		return answer_error(res, req->id, RPC_UNAVAILABLE,
		    "no GPU memory reader in this daemon");
	if ((r = gpumem_view(ctx->info->gpumem, &v)) < 0)
		return r;
	r = -ENOMEM;
	if ((gm.state = rpc_pb_gpumem_state(&a, &v.st)) == NULL ||
	    (gm.state->map_path = rpc_pb_str(&a,
		 gpumem_map_used(ctx->info->gpumem), PATH_MAX)) == NULL)
		goto out;
	if (v.n &&
	    (gm.procs = rpc_arena_alloc(&a, v.n * sizeof(*gm.procs))) == NULL)
		goto out;
	for (i = 0; i < v.n; i++)
		if ((gm.procs[i] = rpc_pb_gpu_proc(&a, &v.procs[i], NULL)) ==
		    NULL)
			goto out;
	gm.n_procs = v.n;
	if (v.at_mono_ns)
		gm.age_ns = (uint64_t)(clock_ns(CLOCK_MONOTONIC) -
		    v.at_mono_ns);
	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = req->id;
	resp.result_case = VITALS__RESPONSE__RESULT_GPU_MEM;
	resp.gpu_mem = &gm;
	r = pack_answer(&resp, ctx->max_frame, &res->frame, &res->len);
out:
	rpc_arena_release(&a);
	gpumem_view_release(&v);
	return r;
}

static int
dispatch(const struct rpc_ctx *ctx, enum control_role role,
    const Vitals__Request *req, struct rpc_result *res)
{
	char msg[96];

	if (role == ROLE_NONE) {
		/* Nothing more for a stranger: the answer, then close. */
		res->verdict = RPC_ANSWER_CLOSE;
		return answer_error(res, req->id, RPC_PERMISSION_DENIED,
		    "reader role required");
	}
	if (req->version != VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1) {
		snprintf(msg, sizeof(msg),
		    "protocol version %u not supported"
		    " (this daemon speaks version 1)",
		    req->version);
		return answer_error(res, req->id, RPC_UNSUPPORTED_VERSION, msg);
	}
	switch (req->op_case) {
	case VITALS__REQUEST__OP_SNAPSHOT:
		return answer_snapshot(ctx, req->id, req->snapshot, res);
	case VITALS__REQUEST__OP_WINDOWS:
	case VITALS__REQUEST__OP_TOP:
	case VITALS__REQUEST__OP_PROCESS:
	case VITALS__REQUEST__OP_TRACE:
	case VITALS__REQUEST__OP_EXPORT:
		return prepare_query(ctx, req, res);
	case VITALS__REQUEST__OP_HEALTH:
		return answer_health(ctx, req->id, res);
	case VITALS__REQUEST__OP_BURST:
		if (role < ROLE_TRUSTED)
			return answer_error(res, req->id, RPC_PERMISSION_DENIED,
			    "burst requires the trusted role");
		return answer_burst(ctx, req->id, req->burst, res);
	case VITALS__REQUEST__OP_DUMP:
		return answer_dump(ctx, req->id, req->dump, res);
	case VITALS__REQUEST__OP_GPU_MEM:
		return answer_gpumem(ctx, req, res);
	/* heapprofd sessions (rpc_hp.c) */
	case VITALS__REQUEST__OP_HEAPPROFD_START:
	case VITALS__REQUEST__OP_HEAPPROFD_LIST:
	case VITALS__REQUEST__OP_HEAPPROFD_CANCEL:
		return rpc_hp_dispatch(ctx, role, req, res);
	case VITALS__REQUEST__OP_WSS_START:
	case VITALS__REQUEST__OP_WSS_GET:
	case VITALS__REQUEST__OP_WSS_STOP:
		return rpc_wss(ctx, role, req, res); /* rpc_wss.c */
	case VITALS__REQUEST__OP_BURSTS:
		return rpc_bursts(ctx, req, res); /* rpc_burst.c */
	case VITALS__REQUEST__OP_GPU_FREQ:
		return rpc_gpufreq(ctx, req, res); /* rpc_gpufreq.c */
	case VITALS__REQUEST__OP_DMABUF:
		return rpc_dmabuf(ctx, req, res); /* rpc_dmabuf.c */
	case VITALS__REQUEST__OP_SYSCALLS:
		return rpc_syscalls(ctx, req, res); /* rpc_syscalls.c */
	default:
		return answer_error(res, req->id, RPC_BAD_REQUEST,
		    "no operation, or one this daemon does not know");
	}
}

int
rpc_handle(const struct rpc_ctx *ctx, enum control_role role,
    const uint8_t *payload, size_t len, struct rpc_result *ret)
{
	Vitals__Request *req;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->verdict = RPC_ANSWER;
	if ((req = frame_unpack_request(payload, len)) == NULL) {
		/* The stream may be out of step: answer, then close. */
		ret->verdict = RPC_ANSWER_CLOSE;
		ret->bad_frame = true;
		return rpc_error_frame(0, RPC_BAD_REQUEST,
		    "malformed request: not a vitals.Request message",
		    &ret->frame, &ret->len);
	}
	r = dispatch(ctx, role, req, ret);
	vitals__request__free_unpacked(req, NULL);
	return r;
}

/* ------------------------------------------------ query-thread answers */

static void
answer_head(Vitals__Response *resp, const struct rpc_query *q)
{
	resp->version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp->id = q->id;
}

int
rpc_answer_windows(const struct rpc_query *q, struct window *const *w, size_t n,
    bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	return rpc_answer_windows_cut(q, w, n, truncated, 0, 0, max, ret,
	    ret_len);
}

/*
 * Windows oldest first. A budget cut (loaded_bytes > 0) is said in the
 * answer; windows that would not fit the frame are left out from the
 * oldest on, and said the same way. Only when not even the newest fits
 * is the answer TOO_LARGE. Messages are built newest first and stop at
 * the frame limit, so a long range costs at most a frame of them.
 */
int
rpc_answer_windows_cut(const struct rpc_query *q, struct window *const *w,
    size_t n, bool truncated, uint64_t budget, size_t loaded_bytes,
    uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__WindowList list = VITALS__WINDOW_LIST__INIT;
	struct rpc_arena a = { 0 };
	size_t i, k, sum = 64;
	int r = -ENOMEM;

	answer_head(&resp, q);
	if (n &&
	    (list.windows = rpc_arena_alloc(&a, n * sizeof(*list.windows))) ==
		NULL)
		goto out;
	for (i = n, k = n; i > 0; i--) {
		Vitals__Window *m = rpc_pb_window(&a, w[i - 1], q->with_tasks,
		    q->top_n);

		if (m == NULL)
			goto out;
		sum += vitals__window__get_packed_size(m) + 6;
		if (sum > max && k < n)
			break; /* keep the newest that fit */
		list.windows[--k] = m;
	}
	if (k > 0) {
		memmove(list.windows, list.windows + k,
		    (n - k) * sizeof(*list.windows));
		truncated = true;
		list.budget_exhausted = true;
		if (loaded_bytes == 0)
			budget = 0;
	}
	n -= k;
	if (loaded_bytes) {
		list.budget_exhausted = true;
		list.budget_bytes = budget;
		list.loaded_bytes = loaded_bytes;
	}
	list.n_windows = n;
	list.truncated = truncated;
	resp.result_case = VITALS__RESPONSE__RESULT_WINDOWS;
	resp.windows = &list;
	r = pack_answer(&resp, max, ret, ret_len);
out:
	rpc_arena_release(&a);
	return r;
}

int
rpc_answer_top(const struct rpc_query *q, const struct window_task *t, size_t n,
    uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__TaskList list = VITALS__TASK_LIST__INIT;
	struct rpc_arena a = { 0 };
	size_t i;
	int r = -ENOMEM;

	answer_head(&resp, q);
	list.metric = (Vitals__Metric)q->metric;
	list.threads = q->threads;
	list.from_wall_ns = q->from_wall_ns;
	list.to_wall_ns = q->to_wall_ns;
	list.hz = q->hz;
	list.state = (char *)rpc_fgbg_state_name(q->state);
	if (n &&
	    (list.tasks = rpc_arena_alloc(&a, n * sizeof(*list.tasks))) == NULL)
		goto out;
	/* The store's order: by the metric, busiest first. */
	for (i = 0; i < n; i++)
		if ((list.tasks[i] = rpc_pb_task(&a, &t[i])) == NULL)
			goto out;
	list.n_tasks = n;
	resp.result_case = VITALS__RESPONSE__RESULT_TOP;
	resp.top = &list;
	r = pack_answer(&resp, max, ret, ret_len);
out:
	rpc_arena_release(&a);
	return r;
}

/* The BPF top (TopRequest.source BPF): rpc_sched.c ranks, this packs. */
int
rpc_answer_top_sched(const struct rpc_query *q, struct window *const *w,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__TaskList list = VITALS__TASK_LIST__INIT;
	struct rpc_arena a = { 0 };
	int r;

	answer_head(&resp, q);
	list.threads = q->threads;
	list.from_wall_ns = q->from_wall_ns;
	list.to_wall_ns = q->to_wall_ns;
	list.hz = q->hz;
	if ((r = rpc_sched_top(&a, &list, q, w, n)) == 0) {
		resp.result_case = VITALS__RESPONSE__RESULT_TOP;
		resp.top = &list;
		r = pack_answer(&resp, max, ret, ret_len);
	}
	rpc_arena_release(&a);
	return r;
}

int
rpc_answer_process(const struct rpc_query *q, const struct store_hist *h,
    size_t n, const struct store_hist *th, size_t nth,
    const struct window_task *ident, enum rpc_ident_src src, const char *cgroup,
    struct window *const *w, size_t nw, uint32_t max, uint8_t **ret,
    size_t *ret_len)
{
	static const char *const src_name[] = {
		[RPC_IDENT_NONE] = "",
		[RPC_IDENT_PROC] = "proc",
		[RPC_IDENT_STORE] = "store",
	};
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__ProcessInfo info = VITALS__PROCESS_INFO__INIT;
	struct rpc_arena a = { 0 };
	int r = -ENOMEM;

	answer_head(&resp, q);
	if (n && (info.history = rpc_pb_history(&a, h, n)) == NULL)
		goto out;
	if (nth && (info.threads = rpc_pb_history(&a, th, nth)) == NULL)
		goto out;
	info.n_history = n;
	info.n_threads = nth;
	if (ident && (info.identity = rpc_pb_task(&a, ident)) == NULL)
		goto out;
	info.identity_source = (char *)src_name[ident ? src : RPC_IDENT_NONE];
	if (cgroup && (info.cgroup = rpc_pb_str(&a, cgroup, 4096)) == NULL)
		goto out;
	info.state = (char *)rpc_fgbg_state_name(q->state);
	/* its BPF rows: per history point, and summed (rpc_sched.c) */
	if (nw && rpc_sched_process(&a, &info, h, n, th, nth, w, nw) < 0)
		goto out;
	resp.result_case = VITALS__RESPONSE__RESULT_PROCESS;
	resp.process = &info;
	r = pack_answer(&resp, max, ret, ret_len);
out:
	rpc_arena_release(&a);
	return r;
}

/*
 * The GpuMem span answer (query thread); st: the newest window's state;
 * ser (may be NULL: no series): the points and every instance's values,
 * sent as they are (the arrays outlive the packing).
 */
int
rpc_answer_gpumem_span(const struct rpc_query *q, const struct gpumem_span *sp,
    size_t n, const struct window_gpumem *st, const struct gpumem_series *ser,
    uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__GpuMem gm = VITALS__GPU_MEM__INIT;
	struct rpc_arena a = { 0 };
	size_t i;
	int r = -ENOMEM;

	answer_head(&resp, q);
	if ((gm.state = rpc_pb_gpumem_state(&a, st)) == NULL)
		goto out;
	if (n &&
	    (gm.procs = rpc_arena_alloc(&a, n * sizeof(*gm.procs))) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if ((gm.procs[i] = rpc_pb_gpu_proc(&a, &sp[i].p, &sp[i])) ==
		    NULL)
			goto out;
		if (ser && ser->n && sp[i].series_n &&
		    sp[i].series_off + sp[i].series_n <= ser->nvalues) {
			gm.procs[i]->series_bytes = ser->bytes +
			    sp[i].series_off;
			gm.procs[i]->series_index = ser->index +
			    sp[i].series_off;
			gm.procs[i]->n_series_bytes = sp[i].series_n;
			gm.procs[i]->n_series_index = sp[i].series_n;
		}
	}
	gm.n_procs = n;
	if (ser && ser->n) {
		gm.window_end_wall_ns = ser->end_wall_ns;
		gm.n_window_end_wall_ns = ser->n;
		gm.series_step = ser->step;
	}
	if (ser)
		gm.series_windows = ser->windows;
	gm.since_ns = q->to_wall_ns - q->from_wall_ns;
	gm.from_wall_ns = q->from_wall_ns;
	gm.to_wall_ns = q->to_wall_ns;
	resp.result_case = VITALS__RESPONSE__RESULT_GPU_MEM;
	resp.gpu_mem = &gm;
	r = pack_answer(&resp, max, ret, ret_len);
out:
	rpc_arena_release(&a);
	return r;
}
