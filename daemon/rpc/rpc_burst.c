/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The burst triggers on the wire (doc/bursts.md): the bursts request
 * (reader) and the Health part. With rpc.c, rpc_pb.c, the only code that
 * knows the protocol.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "burst/burst.h"
#include "rpc/rpc.h"
#include "rpc_int.h"

Vitals__BurstHealth *
rpc_pb_burst_health(struct rpc_arena *a, const struct burst *b)
{
	const struct burst_settings *s = burst_settings(b);
	struct burst_stats st;
	Vitals__BurstHealth *m;

	burst_stats(b, &st);
	NEW(a, m, vitals__burst_health__init);
	m->rules = s->nrules;
	m->evaluations = st.evaluations;
	m->held = st.held;
	m->started = st.outcome[BURST_STARTED];
	m->during_burst = st.outcome[BURST_DURING_BURST];
	m->cooldown = st.outcome[BURST_COOLDOWN];
	m->min_gap = st.outcome[BURST_GAP];
	m->max_per_hour = st.outcome[BURST_HOURLY];
	m->unavailable = st.unavailable;
	m->logged = st.logged;
	m->duration_ms = s->duration_ms;
	m->cooldown_ms = s->cooldown_ms;
	m->min_gap_ms = s->min_gap_ms;
	m->max_per_hour_limit = s->max_per_hour;
	return m;
}

static Vitals__BurstFiring *
pb_firing(struct rpc_arena *a, const struct burst_fire *f)
{
	Vitals__BurstFiring *m;

	NEW(a, m, vitals__burst_firing__init);
	m->wall_ns = f->wall_ns;
	m->mono_ns = f->mono_ns;
	TRY(m->rule = rpc_pb_str(a, f->rule_name, sizeof(f->rule_name)));
	m->cond = (char *)burst_cond_name(f->cond);
	m->outcome = (char *)burst_outcome_name(f->outcome);
	m->value = f->value;
	m->threshold = f->threshold;
	m->pid = f->pid;
	m->duration_ms = f->duration_ms;
	TRY(m->why = rpc_pb_str(a, f->why, sizeof(f->why)));
	return m;
}

int
rpc_bursts(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__BurstList list = VITALS__BURST_LIST__INIT;
	struct burst_fire f[BURST_LOG_MAX];
	struct rpc_arena a = { 0 };
	size_t n, i, skip = 0;
	unsigned limit = req->bursts ? req->bursts->limit : 0;
	int r = -ENOMEM;

	if (ctx->mod.bursts == NULL)
		return rpc_error_frame(req->id, RPC_ABSENT,
		    "no burst rules configured (burst_rule)", &res->frame,
		    &res->len);
	n = burst_log(ctx->mod.bursts, f, BURST_LOG_MAX);
	if (limit && limit < n)
		skip = n - limit;
	if ((list.health = rpc_pb_burst_health(&a, ctx->mod.bursts)) == NULL)
		goto out;
	if (n > skip &&
	    (list.firings = rpc_arena_alloc(&a,
		 (n - skip) * sizeof(*list.firings))) == NULL)
		goto out;
	for (i = skip; i < n; i++)
		if ((list.firings[list.n_firings++] = pb_firing(&a, &f[i])) ==
		    NULL)
			goto out;
	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = req->id;
	resp.result_case = VITALS__RESPONSE__RESULT_BURSTS;
	resp.bursts = &list;
	r = frame_pack_response(&resp, &res->frame, &res->len);
out:
	rpc_arena_release(&a);
	return r;
}
