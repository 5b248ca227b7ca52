/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The figures of one control-plane answer (struct vitalsd_info): what
 * Health and the other queries report of the running daemon.
 */
#include <string.h>
#include <time.h>

#include "burst/burst.h"
#include "dmabuf/dmabuf.h"
#include "gpufreq/gpufreq.h"
#include "syscalls/sc_collect.h"
#include "control/control.h"
#include "core/util.h"
#include "daemon.h"
#include "export/export.h"
#include "rpc/rpc.h"
#include "sched/sched.h"
#include "store/store.h"
#include "trace/trace.h"
#include "window/collector.h"
#include "window/window.h"
#include "wss/wss.h"
#include "daemon_int.h"

void
get_info_cb(void *arg, struct vitalsd_info *ret)
{
	vitalsd_get_info(arg, ret);
}

/* The parts' bytes: a walk of the task table's names among them, so for a
 * health answer only. */
static void
memory_cb(void *arg, struct vitalsd_memory *ret)
{
	struct vitalsd *d = arg;

	ret->ring_bytes = collector_ring_bytes(d->col, &ret->ring_windows);
	ret->tasks_bytes = collector_tasks_bytes(d->col, &ret->tasks);
	ret->ftrace_bytes = ftrace_bytes(d->ft);
	ret->ftrace_buffer_bytes = ftrace_buffer_bytes(d->ft);
	ret->taskiter_out_bytes = collector_taskiter_out_bytes(d->col);
	ret->bpf_bytes = bpf_sched_bytes(d->bs);
}

void
vitalsd_get_info(struct vitalsd *d, struct vitalsd_info *ret)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);

	memset(ret, 0, sizeof(*ret));
	ret->last = collector_window(d->col, 0);
	ret->hz = collector_hz(d->col);
	ret->interval_ms = d->burst_until_ns > now ? d->cur_ms : d->interval_ms;
	ret->burst_until_ns = d->burst_until_ns > now ? d->burst_until_ns : 0;
	ret->uptime_ns = d->start_ns ? now - d->start_ns : 0;
	ret->store.state = STORE_CLOSED;
	ret->gpumem = d->gm;
	ret->dmabuf = dmabuf_last(d->db);
	ret->gpufreq = d->gf;
	ret->syscalls = d->sch;
	ret->syscalls.state = d->sc_state;
	ret->syscalls.err = d->sc_err;
	ret->syscalls.progs = d->sc ? sc_attached(d->sc) : 0;
	ret->syscalls.traced = d->sc ? sc_traced(d->sc) : 0;
	sc_ring_stats(d->sc, &ret->syscalls.ring);
	if (d->wr) {
		ret->have_store = true;
		writer_get(d->wr, &ret->store, &ret->store_queued,
		    &ret->store_dropped);
		writer_trims(d->wr, &ret->trims, &ret->trimmed_bytes);
	}
	ret->pageout_mode = d->pageout_mode;
	ret->pageout_rc = d->pageout_rc;
	ret->pageout = d->pageout;
	if (d->settle_on)
		pageout_settle_get(&ret->settle);
	ret->spool_path = d->spool_path;
	ret->spool_note = d->spool_note;
	ret->prov = &d->prov;
	if (d->ex) {
		export_get_stats(d->ex, &ret->metrics);
		ret->have_otlp = export_get_otlp(d->ex, &ret->otlp);
	}
	ret->reload = &d->reload;
	ret->memory = memory_cb;
	ret->memory_arg = d;
}
