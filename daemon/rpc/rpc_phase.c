/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phase rows of a window's ftrace part on the wire (TraceWindow
 * fields 65-77, TracePhase): a figure whose events were not enabled is
 * left absent, never sent as 0.
 */
#include <errno.h>
#include <string.h>

#include "rpc/rpc.h"
#include "trace/trace.h"
#include "rpc_int.h"

static Vitals__TracePhaseValue *
pb_value(struct rpc_arena *a, uint64_t value, uint64_t total,
    const uint64_t *by_class)
{
	Vitals__TracePhaseValue *m;

	NEW(a, m, vitals__trace_phase_value__init);
	m->value = value;
	m->total = total;
	if (by_class) {
		ARRAY(a, m->by_class, PCLASS__MAX);
		memcpy(m->by_class, by_class, PCLASS__MAX * sizeof(uint64_t));
		m->n_by_class = PCLASS__MAX;
	}
	return m;
}

#define HAVE(p, bit) (((p)->have >> (bit)) & 1)

Vitals__TracePhase *
rpc_pb_phase(struct rpc_arena *a, const struct window_trace_phase *p, bool rest)
{
	Vitals__TracePhase *m;

	NEW(a, m, vitals__trace_phase__init);
	m->pid = rest ? -1 : p->pid;
	m->start_ticks = rest ? 0 : p->start_ticks;
	TRY(m->comm = rpc_pb_str(a, rest ? "" : p->comm, sizeof(p->comm)));
	TRY(m->name = rpc_pb_str(a, rest ? "" : p->name, sizeof(p->name)));
	m->count = p->count;
	m->incomplete = p->incomplete;
	m->open = p->open;
	m->total_ns = p->total_ns;
	m->max_ns = p->max_ns;
	if (HAVE(p, PHAVE_FAULTS))
		TRY(m->faults = pb_value(a, p->faults, 0, p->faults_by));
	if (HAVE(p, PHAVE_FILE))
		TRY(m->file_faults = pb_value(a, p->file_faults, 0, NULL));
	if (HAVE(p, PHAVE_MAJOR))
		TRY(m->major = pb_value(a, p->major, 0, p->major_by));
	if (HAVE(p, PHAVE_READ))
		TRY(m->pages_read = pb_value(a, p->pages_read, 0, NULL));
	if (HAVE(p, PHAVE_RECLAIM))
		TRY(m->reclaim = pb_value(a, p->reclaim, p->reclaim_ns, NULL));
	if (HAVE(p, PHAVE_BLOCK))
		TRY(m->block = pb_value(a, p->blk, p->blk_bytes, NULL));
	return m;
}

/* The window-level phase fields of m, and its rest row: 0 or -ENOMEM.
 * The rows, filtered by the request, are rpc_trace.c's. */
int
rpc_phase_fill(struct rpc_arena *a, Vitals__TraceWindow *m,
    const struct window_trace *t)
{
	const struct window_trace_phase *r = window_phase_rest(t);

	m->phase_rows_other = t->phase_other;
	m->phase_events = t->phase_events;
	m->phase_open = t->phase_open;
	m->phase_incomplete = t->phase_incomplete;
	m->phase_untracked = t->phase_untracked;
	m->maps_reads = t->maps_reads;
	m->maps_skipped = t->maps_skipped;
	m->maps_fail = t->maps_fail;
	m->maps_bad_lines = t->maps_bad_lines;
	m->maps_cut = t->maps_cut;
	m->fault_unknown = t->fault_unknown;
	if (r && (m->phase_rest = rpc_pb_phase(a, r, true)) == NULL)
		return -ENOMEM;
	return 0;
}
