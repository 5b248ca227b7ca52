/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Health message's assembly: the control socket's counters, the
 * store's (waits, commit times), the daemon's memory and every part's
 * own section. Answered by rpc.c's answer_health.
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
#include "store/store_codec.h"
#include "trace/trace.h"
#include "sched/sched.h"
#include "window/window.h"
#include "config/config_reload.h"
#include "rpc_int.h"

static Vitals__StoreWaits *
pb_store_waits(struct rpc_arena *a, const struct store_wait *w)
{
	Vitals__StoreWaits *m;

	NEW(a, m, vitals__store_waits__init);
	m->n = w->n;
	m->waited = w->waited;
	m->sum_ns = w->sum_ns;
	m->max_ns = w->max_ns;
	m->p99_ns = w->p99_ns;
	return m;
}

static Vitals__StoreOpTime *
pb_op_time(struct rpc_arena *a, const struct store_commit_split *t)
{
	Vitals__StoreOpTime *m;

	NEW(a, m, vitals__store_op_time__init);
	m->wall_ns = t->wall_ns;
	m->cpu_ns = t->cpu_ns;
	m->runq_ns = t->runq_ns;
	m->lock_ns = t->lock_ns;
	m->ckpt_ns = t->ckpt_ns;
	m->other_ns = t->other_ns;
	m->runq_known = t->runq_known;
	return m;
}

static Vitals__StoreOpTimes *
pb_op_times(struct rpc_arena *a, const struct store_commit_stats *c)
{
	Vitals__StoreOpTimes *m;

	NEW(a, m, vitals__store_op_times__init);
	m->n = c->n;
	TRY(m->last = pb_op_time(a, &c->last));
	TRY(m->worst = pb_op_time(a, &c->worst));
	m->lock_max_ns = c->lock_max_ns;
	m->lock_sum_ns = c->lock_sum_ns;
	m->runq_max_ns = c->runq_max_ns;
	m->lock_over_1ms = c->lock_over;
	return m;
}

static Vitals__StoreHealth *
pb_store(struct rpc_arena *a, const struct vitalsd_info *info)
{
	const struct store_stats *s = &info->store;
	struct store_wait mv, rd;
	Vitals__StoreHealth *m;

	NEW(a, m, vitals__store_health__init);
	m->state = (char *)store_state_name(
	    info->have_store ? s->state : STORE_CLOSED);
	m->last_err = s->last_err;
	TRY(m->last_errmsg = rpc_pb_str(a, s->last_errmsg,
		sizeof(s->last_errmsg)));
	m->windows_written = s->windows_written;
	m->write_failures = s->write_failures;
	m->windows_rolled = s->windows_rolled;
	m->deleted_age = s->deleted_age;
	m->deleted_size = s->deleted_size;
	m->rebuilds = s->rebuilds;
	m->corrupt_moved = s->corrupt_moved;
	TRY(m->corrupt_path = rpc_pb_str(a, s->corrupt_path,
		sizeof(s->corrupt_path)));
	m->db_bytes = s->db_bytes;
	m->commit_ns_last = s->commit_ns_last;
	m->commit_ns_max = s->commit_ns_max;
	m->queued = info->store_queued;
	m->dropped = info->store_dropped;
	m->open_retries = s->open_retries;
	if (s->retry_at_mono_ns && s->state != STORE_OK) {
		int64_t left = s->retry_at_mono_ns - clock_ns(CLOCK_MONOTONIC);

		m->next_retry_ms = left > 0 ? (uint32_t)(left / NSEC_PER_MSEC) :
					      0;
	}
	m->windows_salvaged = s->windows_salvaged;
	m->wal_damaged = s->wal_damaged;
	m->shm_faults = s->shm_faults;
	m->clock_suspect = s->clock_suspect;
	m->clock_confirmed = s->clock_confirmed;
	m->clock_ahead_ns = s->clock_ahead_ns;
	m->clock_deferred = s->clock_deferred;
	m->clock_held = s->clock_held;
	m->io_written_bytes = s->io_written;
	m->io_bytes_per_day = s->io_per_day;
	m->io_span_ns = s->io_span_ns;
	m->io_err = s->io_err;
	m->history_ns = s->history_ns;
	m->history_windows = s->history_windows;
	m->history_wall_first_ns = s->history_wall_first_ns;
	m->history_wall_last_ns = s->history_wall_last_ns;
	m->bound_holds_ns = s->bound_holds_ns;
	m->blob_errors = s->blob_errors;
	m->spool_on = s->spool_on;
	m->spool_err = s->spool_err;
	m->spool_pending = s->spool_pending;
	m->spool_flushes = s->spool_flushes;
	m->spool_moved = s->spool_moved;
	m->spool_failures = s->spool_failures;
	m->flush_ns_last = s->flush_ns_last;
	m->flush_ns_max = s->flush_ns_max;
	m->wal_busy = s->wal_busy;
	m->wal_waited = s->wal_waited;
	if (info->spool_path)
		TRY(m->spool_path = rpc_pb_str(a, info->spool_path, 4096));
	if (info->spool_note)
		TRY(m->spool_note = rpc_pb_str(a, info->spool_note, 256));
	store_busy_stats(&mv, &rd);
	TRY(m->move_waits = pb_store_waits(a, &mv));
	store_busy_lend_stats(&m->move_waits->lent,
	    &m->move_waits->lend_denied);
	TRY(m->read_waits = pb_store_waits(a, &rd));
	TRY(m->put_times = pb_op_times(a, &s->puts));
	TRY(m->pass_times = pb_op_times(a, &s->passes));
	return m;
}

/* The daemon's own memory; the kernel's lines it could not read absent. */
static Vitals__MemoryHealth *
pb_memory(struct rpc_arena *a, const struct vitalsd_info *info)
{
	Vitals__MemoryHealth *m;
	struct memstat_heap h;
	struct memstat ms;
	struct memstat_maps mm;
	struct window_names_stats ns;
	struct vitalsd_memory parts = { 0 };

	NEW(a, m, vitals__memory_health__init);
	if (info->memory != NULL)
		info->memory(info->memory_arg, &parts);
	if (memstat_read(NULL, &ms) == 0) {
		m->rss_bytes = ms.rss;
		m->peak_rss_bytes = ms.hwm;
		m->anon_bytes = ms.anon;
		m->file_bytes = ms.file;
		m->shmem_bytes = ms.shmem;
		m->threads = ms.threads;
		m->have_status = ms.have;
	}
	/* an smaps walk (0.2-1 ms) at most once a second on the loop,
	 * however many health requests come */
	if (memstat_maps_cached(NULL, NSEC_PER_SEC, &mm, NULL) == 0) {
		m->program_bytes = mm.program;
		m->program_dirty_bytes = mm.program_dirty;
		m->libraries_bytes = mm.libs;
		m->pss_bytes = mm.pss;
		m->libraries_pss_bytes = mm.libs_pss;
		m->have_status |= mm.have;
	}
	store_sqlite_memory(&m->sqlite_bytes, &m->sqlite_peak_bytes);
	m->windows_bytes = parts.ring_bytes;
	m->windows = parts.ring_windows;
	if (memstat_heap(&h) == 0) {
		m->heap_in_use_bytes = h.in_use;
		m->heap_free_bytes = h.free;
		m->heap_mmap_bytes = h.mmap;
		m->have_heap = true;
	}
	m->sqlite_cache_bytes = store_sqlite_cache();
	m->tasks_bytes = parts.tasks_bytes;
	m->tasks = parts.tasks;
	m->ftrace_bytes = parts.ftrace_bytes;
	m->bpf_bytes = parts.bpf_bytes;
	m->taskiter_out_bytes = parts.taskiter_out_bytes;
	m->ftrace_buffer_bytes = parts.ftrace_buffer_bytes;
	m->trimmed_bytes = info->trimmed_bytes;
	m->trims = info->trims;
	m->pageout_mode = (uint32_t)info->pageout_mode;
	if (info->pageout_rc < 0) {
		m->pageout_state = 2;
		m->pageout_errno = (uint32_t)-info->pageout_rc;
	} else if (info->pageout_rc > 0) {
		const struct pageout_stats *po = &info->pageout;

		m->pageout_state = 1;
		m->pageout_file_before_bytes = po->before;
		m->pageout_file_after_bytes = po->after;
		m->pageout_advised_bytes = po->advised;
		m->pageout_ranges = po->ranges;
		m->pageout_failed = po->failed;
		m->pageout_errno = (uint32_t)-po->err;
		m->pageout_ns = (uint64_t)po->ns;
		m->pageout_passes = po->passes;
		m->pageout_given_bytes = po->given;
		m->pageout_unmapped_bytes = po->unmapped;
		m->pageout_kept_ranges = po->kept;
	}
	m->settle_passes = info->settle.passes;
	m->settle_given_bytes = info->settle.given;
	m->settle_ns = (uint64_t)info->settle.ns;
	m->settle_failed = info->settle.failed;
	window_names_stats(&ns);
	m->names_bytes = ns.heap_bytes;
	m->names = (uint32_t)ns.names;
	m->names_full = ns.full;
	m->zstd_bytes = store_codec_bytes();
	return m;
}

Vitals__Health *
rpc_pb_health(struct rpc_arena *a, const struct rpc_ctx *ctx)
{
	const struct control_stats *s = ctx->stats;
	const struct vitalsd_info *info = ctx->info;
	Vitals__ControlHealth *c;
	Vitals__Health *m;
	unsigned i;

	NEW(a, m, vitals__health__init);
	if (info->last)
		TRY(m->last = rpc_pb_window(a, info->last, false, 0));
	TRY(m->store = pb_store(a, info));
	NEW(a, c, vitals__control_health__init);
	if (s) {
		c->connections = s->connections;
		c->accepted = s->accepted;
		c->requests = s->requests;
		c->denied = s->denied;
		c->bad_frames = s->bad_frames;
		c->idle_closed = s->idle_closed;
		c->overflow_closed = s->overflow_closed;
		c->accept_paused = s->accept_paused;
		c->queries_busy = s->queries_busy;
		c->queries = s->queries;
		c->query_ns_max = s->query_ns_max;
		c->queries_queued = s->queries_queued;
		c->queries_shared = s->queries_shared;
		c->cap_refused = s->cap_refused;
		c->query_threads = s->query_threads;
		c->queries_budget_cut = s->queries_budget_cut;
		c->readers_idle_closed = s->readers_idle_closed;
		c->readers_opened = s->readers_opened;
		c->readers_open = s->readers_open;
		c->readers_warmed = s->readers_warmed;
		c->readers_warm_ns = s->readers_warm_ns;
		c->read_cache_hits = s->rc_hits;
		c->read_cache_misses = s->rc_misses;
		c->read_memo_hits = s->rc_memo_hits;
		c->read_memo_saved = s->rc_memo_saved;
		c->read_cache_bytes = s->rc_bytes;
	}
	m->control = c;
	m->interval_ms = info->interval_ms;
	m->burst_until_mono_ns = info->burst_until_ns;
	m->uptime_ns = (uint64_t)(info->uptime_ns > 0 ? info->uptime_ns : 0);
	if (info->gpumem) {
		struct window_gpumem gs;

		gpumem_get_state(info->gpumem, &gs);
		TRY(m->gpu_mem = rpc_pb_gpumem_state(a, &gs));
		TRY(m->gpu_mem->map_path = rpc_pb_str(a,
			gpumem_map_used(info->gpumem), PATH_MAX));
	}
	/* heapprofd: NULL without a daemon (unit tests) */
	m->heapprofd = rpc_pb_hp_health(a, ctx);
	TRY(m->privileges = rpc_pb_privileges(a, info->last));
	if (ctx->mod.wss)
		TRY(m->wss = rpc_pb_wss_health(a, ctx->mod.wss));
	if (info->prov)
		TRY(m->provenance = rpc_pb_provenance(a, info->prov));
	if (info->reload) {
		const struct vitalsd_reload *rl = info->reload;

		NEW(a, m->config, vitals__config_health__init);
		m->config->reloads = rl->reloads;
		m->config->failed = rl->failed;
		m->config->applied = rl->applied;
		m->config->refused = rl->refused;
		m->config->last_wall_ns = rl->last_wall_ns;
		TRY(m->config->last = rpc_pb_str(a, rl->last,
			sizeof(rl->last)));
	}
	if (info->metrics.on) {
		const struct export_stats *x = &info->metrics;
		Vitals__MetricsHealth *mh;

		NEW(a, mh, vitals__metrics_health__init);
		TRY(mh->listen = rpc_pb_str(a, x->listen, sizeof(x->listen)));
		mh->connections = x->connections;
		mh->accepted = x->accepted;
		mh->scrapes = x->scrapes;
		mh->cap_refused = x->cap_refused;
		mh->timed_out = x->timed_out;
		mh->bad_requests = x->bad_requests;
		mh->not_found = x->not_found;
		mh->bad_method = x->bad_method;
		mh->page_bytes = x->page_bytes_last;
		mh->render_ns_last = x->render_ns_last;
		mh->render_ns_max = x->render_ns_max;
		mh->accept_paused = x->accept_paused;
		m->metrics = mh;
	}
	TRY(m->memory = pb_memory(a, info));
	if (s) /* a part of the heap in use, as the others */
		m->memory->read_cache_bytes = s->rc_bytes;
	if (ctx->mod.bursts)
		TRY(m->bursts = rpc_pb_burst_health(a, ctx->mod.bursts));
	if (info->gpufreq)
		TRY(m->gpu_freq = rpc_pb_gpufreq_health(a, info->gpufreq));
	TRY(m->syscalls = rpc_pb_syscall_health(a, &info->syscalls));
	if (info->have_otlp) {
		const struct otlp_stats *x = &info->otlp;
		Vitals__OtlpHealth *oh;

		NEW(a, oh, vitals__otlp_health__init);
		oh->queued = x->queued;
		oh->sent = x->sent;
		oh->failed = x->failed;
		oh->dropped_full = x->dropped_full;
		oh->dropped_rejected = x->dropped_rejected;
		oh->retries = x->retries;
		oh->last_status = x->last_status;
		TRY(oh->last_error = rpc_pb_str(a, x->last_error,
			sizeof(x->last_error)));
		oh->rejected_points = x->rejected_points;
		oh->bytes_sent = x->bytes_sent;
		oh->queue_depth = x->depth;
		TRY(oh->endpoint = rpc_pb_str(a, x->endpoint,
			sizeof(x->endpoint)));
		oh->points_last = x->points_last;
		m->otlp = oh;
	}
	/* each part's Health fields from the last closed window */
	for (i = 0; info->last && i < WPART__MAX; i++)
		if (info->last->part[i] != NULL &&
		    rpc_parts[i]->health != NULL &&
		    rpc_parts[i]->health(a, m, info->last) < 0)
			return NULL;
	return m;
}
