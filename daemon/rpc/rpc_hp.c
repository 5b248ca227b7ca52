/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The heapprofd operations of the control plane: start (trusted
 * only, with a dry run), list, cancel (trusted only), and the heapprofd
 * part of Health. Refusals are answers with a reason, not errors; a caller
 * without the trusted role gets PERMISSION_DENIED, counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "core/util.h"
#include "hp/hp.h"
#include "rpc/rpc.h"
#include "rpc_int.h"

#define HP_LIST_DEFAULT 50
#define HP_LIST_MAX 1000

_Static_assert((int)HP_REFUSE_NOT_ELIGIBLE ==
	(int)VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_NOT_ELIGIBLE,
    "refusal");
_Static_assert((int)HP_REFUSE_RATE_PROCESS ==
	(int)VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_RATE_LIMITED_PROCESS,
    "refusal");
_Static_assert((int)HP_REFUSE_RATE_SYSTEM ==
	(int)VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_RATE_LIMITED_SYSTEM,
    "refusal");
_Static_assert((int)HP_REFUSE_IN_PROGRESS ==
	(int)VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_IN_PROGRESS,
    "refusal");
_Static_assert((int)HP_REFUSE_INVALID ==
	(int)VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_INVALID_REQUEST,
    "refusal");
_Static_assert((int)HP_REFUSE_UNAVAILABLE ==
	(int)VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_UNAVAILABLE,
    "refusal");

static int
error(struct rpc_result *res, uint64_t id, enum rpc_status st, const char *msg)
{
	if (st == RPC_PERMISSION_DENIED)
		res->denied = true;
	return rpc_error_frame(id, st, msg, &res->frame, &res->len);
}

static int
pack(const struct rpc_ctx *ctx, Vitals__Response *resp, struct rpc_result *res)
{
	resp->version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	if (vitals__response__get_packed_size(resp) > ctx->max_frame)
		return error(res, resp->id, RPC_TOO_LARGE,
		    "answer exceeds "
		    "the frame limit: ask for fewer sessions");
	return frame_pack_response(resp, &res->frame, &res->len);
}

static int
answer_start(const struct rpc_ctx *ctx, struct heapprofd *hp, uint64_t id,
    const Vitals__HeapprofdStartRequest *sr, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__HeapprofdStarted st = VITALS__HEAPPROFD_STARTED__INIT;
	struct hp_request rq;
	struct hp_answer a;
	size_t i;
	int r;

	memset(&rq, 0, sizeof(rq));
	rq.caller_uid = ctx->peer_uid;
	rq.pid = sr->pid;
	if (sr->name && *sr->name) {
		if (strlen(sr->name) >= sizeof(rq.names[0]))
			return error(res, id, RPC_BAD_REQUEST, "name too long");
		snprintf(rq.names[rq.nnames++], sizeof(rq.names[0]), "%s",
		    sr->name);
	}
	for (i = 0; i < sr->n_names; i++) {
		if (rq.nnames >= HP_PIDS_MAX)
			return error(res, id, RPC_BAD_REQUEST,
			    "more than 16 names");
		if (strlen(sr->names[i]) >= sizeof(rq.names[0]) ||
		    sr->names[i][0] == '\0')
			return error(res, id, RPC_BAD_REQUEST,
			    "a name is empty or too long");
		snprintf(rq.names[rq.nnames++], sizeof(rq.names[0]), "%s",
		    sr->names[i]);
	}
	if (sr->pid < 0)
		return error(res, id, RPC_BAD_REQUEST, "negative pid");
	rq.duration_ms = sr->duration_ms;
	rq.sampling_interval_bytes = sr->sampling_interval_bytes;
	rq.dump_interval_ms = sr->dump_interval_ms;
	rq.shmem_size_bytes = sr->shmem_size_bytes;
	rq.block_client = sr->block_client;
	rq.max_heapprofd_memory_kb = sr->max_heapprofd_memory_kb;
	rq.max_heapprofd_cpu_secs = sr->max_heapprofd_cpu_secs;
	rq.dry_run = sr->dry_run;
	if ((r = heapprofd_start(hp, &rq, &a)) < 0) {
		vbuf_release(&a.text);
		return error(res, id, RPC_ERROR, strerror(-r));
	}
	st.refusal = (Vitals__HeapprofdRefusal)a.refusal;
	st.message = a.message;
	st.session_id = a.id;
	st.config_text = a.text.p ? a.text.p : (char *)"";
	st.output_path = a.output_path;
	st.dry_run = sr->dry_run;
	resp.id = id;
	resp.result_case = VITALS__RESPONSE__RESULT_HEAPPROFD_START;
	resp.heapprofd_start = &st;
	r = pack(ctx, &resp, res);
	vbuf_release(&a.text);
	return r;
}

static Vitals__HeapprofdSession *
pb_session(struct rpc_arena *a, const struct hp_record *r)
{
	Vitals__HeapprofdSession *m;

	NEW(a, m, vitals__heapprofd_session__init);
	m->id = r->id;
	m->created_wall_ns = r->created_wall_ns;
	m->by_rule = r->by_rule;
	TRY(m->rule = rpc_pb_str(a, r->rule, sizeof(r->rule)));
	m->caller_uid = r->caller_uid;
	TRY(m->target = rpc_pb_str(a, r->target, sizeof(r->target)));
	TRY(m->target_key = rpc_pb_str(a, r->target_key,
		sizeof(r->target_key)));
	TRY(m->params = rpc_pb_str(a, r->params, sizeof(r->params)));
	m->started = r->started;
	m->start_wall_ns = r->start_wall_ns;
	m->end_wall_ns = r->end_wall_ns;
	m->child_pid = r->child_pid;
	TRY(m->outcome = rpc_pb_str(a, r->outcome, sizeof(r->outcome)));
	m->refusal = (Vitals__HeapprofdRefusal)r->refusal;
	TRY(m->message = rpc_pb_str(a, r->message, sizeof(r->message)));
	m->exit_status = r->exit_status;
	m->term_signal = r->term_signal;
	TRY(m->output_path = rpc_pb_str(a, r->output_path,
		sizeof(r->output_path)));
	m->output_bytes = r->output_bytes;
	return m;
}

/* The list reads the store: it runs on a query thread (RPC_Q_HP_LIST),
 * never on the loop. */
static int
answer_list(const struct rpc_ctx *ctx, uint64_t id,
    const Vitals__HeapprofdListRequest *lr, struct rpc_result *res)
{
	unsigned limit = lr->limit ? lr->limit : HP_LIST_DEFAULT;
	struct rpc_query *q = &res->query;

	if (!ctx->info->have_store)
		return error(res, id, RPC_UNAVAILABLE,
		    "no store: no session records");
	if (limit > HP_LIST_MAX)
		limit = HP_LIST_MAX;
	memset(q, 0, sizeof(*q));
	q->op = RPC_Q_HP_LIST;
	q->id = id;
	q->n = limit;
	res->verdict = RPC_QUERY;
	return 0;
}

int
rpc_answer_hp_list(const struct rpc_query *q, const struct hp_record *v,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__HeapprofdList list = VITALS__HEAPPROFD_LIST__INIT;
	struct rpc_arena a = { 0 };
	size_t i;
	int r = -ENOMEM;

	if (n &&
	    (list.sessions = rpc_arena_alloc(&a, n * sizeof(*list.sessions))) ==
		NULL)
		goto out;
	for (i = 0; i < n; i++)
		if ((list.sessions[i] = pb_session(&a, &v[i])) == NULL)
			goto out;
	list.n_sessions = n;
	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = q->id;
	resp.result_case = VITALS__RESPONSE__RESULT_HEAPPROFD_LIST;
	resp.heapprofd_list = &list;
	if (vitals__response__get_packed_size(&resp) > max)
		r = rpc_error_frame(q->id, RPC_TOO_LARGE,
		    "answer exceeds "
		    "the frame limit: ask for fewer sessions",
		    ret, ret_len);
	else
		r = frame_pack_response(&resp, ret, ret_len);
out:
	rpc_arena_release(&a);
	return r;
}

static int
answer_cancel(const struct rpc_ctx *ctx, struct heapprofd *hp, uint64_t id,
    const Vitals__HeapprofdCancelRequest *cr, struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__HeapprofdCancelled c = VITALS__HEAPPROFD_CANCELLED__INIT;
	char msg[200];
	int r;

	r = heapprofd_cancel(hp, cr->session_id, msg, sizeof(msg));
	if (r == -ENOENT)
		return error(res, id, RPC_NOT_FOUND, msg);
	if (r == -EALREADY)
		return error(res, id, RPC_BAD_REQUEST, msg);
	if (r < 0)
		return error(res, id, RPC_ERROR, strerror(-r));
	c.session_id = cr->session_id;
	c.message = msg;
	resp.id = id;
	resp.result_case = VITALS__RESPONSE__RESULT_HEAPPROFD_CANCEL;
	resp.heapprofd_cancel = &c;
	return pack(ctx, &resp, res);
}

int
rpc_hp_dispatch(const struct rpc_ctx *ctx, enum control_role role,
    const Vitals__Request *req, struct rpc_result *res)
{
	struct heapprofd *hp = ctx->mod.hp;
	bool list = req->op_case == VITALS__REQUEST__OP_HEAPPROFD_LIST;

	if (!list && role < ROLE_TRUSTED) {
		if (hp)
			heapprofd_note_denied(hp);
		return error(res, req->id, RPC_PERMISSION_DENIED,
		    req->op_case == VITALS__REQUEST__OP_HEAPPROFD_START ?
			"heapprofd start requires the trusted role" :
			"heapprofd cancel requires the trusted role");
	}
	if (hp == NULL)
		return error(res, req->id, RPC_UNAVAILABLE,
		    "heapprofd sessions are not set up");
	switch (req->op_case) {
	case VITALS__REQUEST__OP_HEAPPROFD_START:
		return answer_start(ctx, hp, req->id, req->heapprofd_start,
		    res);
	case VITALS__REQUEST__OP_HEAPPROFD_LIST:
		return answer_list(ctx, req->id, req->heapprofd_list, res);
	default:
		return answer_cancel(ctx, hp, req->id, req->heapprofd_cancel,
		    res);
	}
}

Vitals__HeapprofdHealth *
rpc_pb_hp_health(struct rpc_arena *a, const struct rpc_ctx *ctx)
{
	struct heapprofd *hp = ctx->mod.hp;
	Vitals__HeapprofdHealth *m;
	struct hp_stats st;
	unsigned i, n = 0;

	if (hp == NULL)
		return NULL;
	heapprofd_get_stats(hp, &st);
	NEW(a, m, vitals__heapprofd_health__init);
	m->requests = st.requests;
	m->started = st.started;
	m->dry_runs = st.dry_runs;
	m->denied = st.denied;
	ARRAY(a, m->refused, HP_REFUSE__MAX - 1);
	for (i = 1; i < HP_REFUSE__MAX; i++) {
		Vitals__Counter *c;

		NEW(a, c, vitals__counter__init);
		c->name = (char *)hp_refusal_name(i);
		c->value = st.refused[i];
		m->refused[n++] = c;
	}
	m->n_refused = n;
	ARRAY(a, m->profiles, HP_PROF__MAX);
	for (i = 0; i < HP_PROF__MAX; i++) {
		Vitals__Counter *c;

		NEW(a, c, vitals__counter__init);
		c->name = (char *)hp_profile_name(i);
		c->value = st.profiles[i];
		m->profiles[i] = c;
	}
	m->n_profiles = HP_PROF__MAX;
	m->check_ns_max = st.check_ns_max;
	m->checking = st.checking;
	m->expired_age_files = st.expired_age_files;
	m->expired_size_files = st.expired_size_files;
	m->expired_bytes = st.expired_bytes;
	m->expire_errors = st.expire_errors;
	m->trace_files = st.trace_files;
	m->trace_bytes = st.trace_bytes;
	m->completed = st.completed;
	m->failed = st.failed;
	m->timeouts = st.timeouts;
	m->cancelled = st.cancelled;
	m->spawn_failed = st.spawn_failed;
	m->restarted_closed = st.restarted_closed;
	m->store_errors = st.store_errors;
	m->records_queued = st.records_queued;
	m->records_written = st.records_written;
	m->records_dropped = st.records_dropped;
	m->records_failed = st.records_failed;
	m->running = st.running;
	m->running_id = st.running_id;
	m->rules = st.rules;
	m->rule_evaluations = st.rs.evaluations;
	m->rules_fired = st.rs.fired;
	m->gpu_unavailable = st.rs.gpu_unavailable;
	m->name_failed = st.rs.name_failed;
	m->anon_failed = st.rs.anon_failed;
	m->tracked_dropped = st.rs.tracked_dropped;
	m->last_refusal = (Vitals__HeapprofdRefusal)st.last_refusal;
	TRY(m->last_message = rpc_pb_str(a, st.last_message,
		sizeof(st.last_message)));
	m->initiator = (char *)hp_initiator_name(st.initiator);
	m->spawn = (char *)hp_spawn_state_name(st.spawn);
	TRY(m->spawn_detail = rpc_pb_str(a, st.spawn_detail,
		sizeof(st.spawn_detail)));
	m->build_type = (char *)hp_build_name(st.build);
	TRY(m->build_type_source = rpc_pb_str(a, st.build_source,
		sizeof(st.build_source)));
	return m;
}
