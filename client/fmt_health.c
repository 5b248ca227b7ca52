/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dumpsys-style text of `vitals health`: the last window's own figures,
 * the store, privileges, provenance, configuration and each signal's
 * health (its fmt_*_health in the signal's file). Pure functions, as in
 * format.c.
 */
#include <stdio.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

/* ------------------------------------------------------------ health */

static void
put_counters(struct sbuf *o, const char *label, Vitals__Counter *const *v,
    size_t n)
{
	size_t i;

	sbuf_printf(o, "  %s:", label);
	if (n == 0)
		sbuf_puts(o, " none");
	for (i = 0; i < n; i++)
		sbuf_printf(o, " %s %llu", v[i]->name, ULL(v[i]->value));
	sbuf_putc(o, '\n');
}

static void
health_window(struct sbuf *o, const Vitals__Window *w)
{
	const Vitals__WindowHealth *h = w->health;
	int64_t span_ns = w->mono_end_ns - w->mono_start_ns;
	char span[16], pct[16];
	size_t i;

	duration_format(span, sizeof(span), span_ns);
	sbuf_printf(o, "Last window %llu: %s, samples %u, valid %u\n",
	    ULL(w->seq), span, w->samples, w->samples_valid);
	put_counters(o, "invalid samples", w->invalid_samples,
	    w->n_invalid_samples);
	put_counters(o, "dropped deltas", w->invalid_deltas,
	    w->n_invalid_deltas);
	if (h == NULL) {
		sbuf_puts(o, "  collector: n/a\n");
		return;
	}
	fmt_pct(pct, sizeof(pct), fig_self_core_equiv(h, span_ns));
	sbuf_printf(o,
	    "  own cpu: %s of a core (user %llu us + sys %llu us "
	    "over %s)\n",
	    pct, ULL(h->self_utime_us), ULL(h->self_stime_us), span);
	sbuf_puts(o, "  cost per sample, avg/max us:");
	for (i = 0; i < h->n_coll_ns_sum; i++) {
		const Vitals__Counter *mx = fig_counter(h->coll_ns_max,
		    h->n_coll_ns_max, h->coll_ns_sum[i]->name);

		sbuf_printf(o, " %s ", h->coll_ns_sum[i]->name);
		if (w->samples)
			sbuf_printf(o, "%llu",
			    ULL(h->coll_ns_sum[i]->value / w->samples / 1000));
		else
			sbuf_puts(o, "n/a");
		if (mx)
			sbuf_printf(o, "/%llu", ULL(mx->value / 1000));
		else
			sbuf_puts(o, "/n/a");
	}
	sbuf_puts(o, "; whole sample ");
	if (w->samples)
		sbuf_printf(o, "%llu",
		    ULL(h->sample_ns_sum / w->samples / 1000));
	else
		sbuf_puts(o, "n/a");
	sbuf_printf(o, "/%llu\n", ULL(h->sample_ns_max / 1000));
	if (h->tick_late_ns_max || h->tick_late_ns_sum) {
		sbuf_puts(o, "  timer lateness avg/max us: ");
		if (w->samples)
			sbuf_printf(o, "%llu",
			    ULL(h->tick_late_ns_sum / w->samples / 1000));
		else
			sbuf_puts(o, "n/a");
		sbuf_printf(o, "/%llu", ULL(h->tick_late_ns_max / 1000));
		if (h->n_tick_late_hist)
			sbuf_printf(o, ", p99 <= %llu",
			    ULL(h->tick_late_ns_p99 / 1000));
		sbuf_puts(o, "\n");
		/* where the lateness went (doc/metrics.md, "Timer lateness") */
		if (h->tick_late_runq_absent)
			sbuf_printf(o,
			    "  of it, us: held by a callback %llu, waiting for "
			    "a CPU unknown (no schedstat); latest tick %llu\n",
			    ULL(h->tick_late_held_ns_sum / 1000),
			    ULL(h->tick_late_max_held_ns / 1000));
		else
			sbuf_printf(o,
			    "  of it, us: held by a callback %llu, waiting for "
			    "a CPU %llu (sum); latest tick %llu + %llu\n",
			    ULL(h->tick_late_held_ns_sum / 1000),
			    ULL(h->tick_late_runq_ns_sum / 1000),
			    ULL(h->tick_late_max_held_ns / 1000),
			    ULL(h->tick_late_max_runq_ns / 1000));
	}
	if (h->loop_cb_ns_max)
		sbuf_printf(o,
		    "  loop callbacks: longest %llu us (%s, %llu us CPU), %u "
		    "over 1 ms\n",
		    ULL(h->loop_cb_ns_max / 1000),
		    h->loop_cb_what && *h->loop_cb_what ? h->loop_cb_what : "?",
		    ULL(h->loop_cb_cpu_ns / 1000), h->loop_cb_over_1ms);
	sbuf_printf(o,
	    "  late ticks %u, burst samples %u; scanned %u procs "
	    "%u threads; exited %u procs %u threads; cpu lines dropped %u\n",
	    h->late_ticks, h->burst_samples, h->procs_scanned,
	    h->threads_scanned, h->procs_exited, h->threads_exited,
	    h->cpu_dropped);
	if (h->stat_fds || h->stat_fd_reads || h->stat_opens)
		sbuf_printf(o,
		    "  procfs stat files: %u kept open; %llu reads through "
		    "them, %llu opens, %llu not kept (bound)\n",
		    h->stat_fds, ULL(h->stat_fd_reads), ULL(h->stat_opens),
		    ULL(h->stat_fd_full));
	if (h->lists_read || h->lists_skipped)
		sbuf_printf(o,
		    "  procfs listings: %u read, %u skipped (no fork since "
		    "the last)\n",
		    h->lists_read, h->lists_skipped);
	if (h->ident_queued || h->ident_done || h->ident_loop ||
	    h->ident_full || h->ident_pending)
		sbuf_printf(o,
		    "  identities: %llu queued to the worker, %llu answered "
		    "(%llu stale: instance gone), %llu refused (queue full), "
		    "%u pending; %llu read on the loop\n",
		    ULL(h->ident_queued), ULL(h->ident_done),
		    ULL(h->ident_stale), ULL(h->ident_full), h->ident_pending,
		    ULL(h->ident_loop));
	if (h->samples_full || h->samples_partial) {
		bool off = h->partial_why && strcmp(h->partial_why, "none");

		sbuf_printf(o,
		    "  process samples: %u full walks, %u partial (last read "
		    "%u tasks), %u partial reads replaced, %u gone never "
		    "seen; partial %s%s",
		    h->samples_full, h->samples_partial, h->partial_records,
		    h->partial_doubts, h->partial_gone_unknown,
		    off ? "off: " : "on", off ? h->partial_why : "");
		if (off && h->partial_err)
			sbuf_printf(o, " (errno %u)", h->partial_err);
		sbuf_puts(o, "\n");
	}
	if (h->walks_off_loop || h->walks_dropped)
		sbuf_printf(o,
		    "  full walks read off the loop: %u, %u dropped (walked "
		    "on the loop); longest wait for one %.3f ms\n",
		    h->walks_off_loop, h->walks_dropped,
		    (double)h->walk_wait_ns_max / 1e6);
	if (h->bpf) {
		const Vitals__BpfHealth *b = h->bpf;

		sbuf_printf(o, "  bpf: %s", b->state ? b->state : "?");
		if (b->err)
			sbuf_printf(o, " (errno %d)", -b->err);
		sbuf_printf(o,
		    "; drains %u (failed %u), switches %llu, no "
		    "slice %llu, lost %.3f ms, counter regressions %u\n",
		    b->drains, b->drain_fail, ULL(b->switches),
		    ULL(b->no_slice), (double)b->lost_ns / 1e6,
		    b->counter_regressions);
		sbuf_printf(o,
		    "  bpf on-CPU %.3f ms attributed to uids; waits with "
		    "no process %llu; before this start %.3f ms\n",
		    (double)b->oncpu_ns / 1e6, ULL(b->no_storage),
		    (double)b->pre_ns / 1e6);
		sbuf_printf(o,
		    "  bpf kernel: accounted %.3f ms, wakeups %llu, waits "
		    "measured %llu%s%s (in process rows %llu, no thread "
		    "entry %llu), map full: tid %llu proc %llu uid %llu; "
		    "exited: %llu threads, %llu procs\n",
		    (double)b->oncpu_total_ns / 1e6, ULL(b->wakeups),
		    ULL(b->rq_samples),
		    b->rq_source && *b->rq_source ? " from " : "",
		    b->rq_source && *b->rq_source ? b->rq_source : "",
		    ULL(b->rq_count), ULL(b->rq_notid), ULL(b->full_tid),
		    ULL(b->full_proc), ULL(b->full_uid), ULL(b->thr_exited),
		    ULL(b->procs_exited));
		if (b->slot_cap)
			sbuf_printf(o,
			    "  bpf slots: %llu thread rows from slots, %llu "
			    "from the hash; slots taken %llu (capacity %u a "
			    "side), %u drains full, %llu threads overflowed\n",
			    ULL(b->slot_rows), ULL(b->slot_hash_rows),
			    ULL(b->slots_taken), b->slot_cap,
			    b->slot_full_drains, ULL(b->slot_overflow));
		if (b->procs_other || b->threads_other || b->uids_other)
			sbuf_printf(o,
			    "  bpf rows folded into \"other\": %u procs, %u "
			    "threads, %u uids\n",
			    b->procs_other, b->threads_other, b->uids_other);
		if (b->diff_drains)
			sbuf_printf(o,
			    "  bpf read-only: %u snapshot diffs, "
			    "unattributed %.3f ms, evicted %llu, recreated "
			    "%llu, retired %llu\n",
			    b->diff_drains, (double)b->unattributed_ns / 1e6,
			    ULL(b->evicted), ULL(b->recreated),
			    ULL(b->retired));
	}
}

/* Batched commits (doc/storage.md, "Batched commits"). */
static void
health_store_spool(struct sbuf *o, const Vitals__StoreHealth *s)
{
	if (s->spool_on) {
		sbuf_printf(o,
		    "  spool %s: %llu windows waiting; %llu batches moved "
		    "%llu windows (failed %llu), last/max ms %.3f/%.3f\n",
		    s->spool_path && *s->spool_path ? s->spool_path : "?",
		    ULL(s->spool_pending), ULL(s->spool_flushes),
		    ULL(s->spool_moved), ULL(s->spool_failures),
		    (double)s->flush_ns_last / 1e6,
		    (double)s->flush_ns_max / 1e6);
		return;
	}
	sbuf_puts(o, "  spool off, each window is its own commit");
	if (s->spool_note && *s->spool_note)
		sbuf_printf(o, ": %s", s->spool_note);
	else if (s->spool_err)
		sbuf_printf(o, ": %s (errno %d)", strerror(-s->spool_err),
		    -s->spool_err);
	sbuf_puts(o, "\n");
}

/* The writer's longest put or pass and where it went (doc/storage.md,
 * "What delays the writer"); nothing from an older daemon. */
static void
health_store_times(struct sbuf *o, const char *what,
    const Vitals__StoreOpTimes *t)
{
	const Vitals__StoreOpTime *w = t ? t->worst : NULL;

	if (w == NULL || t->n == 0)
		return;
	sbuf_printf(o,
	    "  writer %s: %llu, longest %.3f ms (cpu %.3f, waiting for a CPU "
	    "%.3f%s, reader locks %.3f, checkpoint %.3f, other %.3f); reader "
	    "lock wait max %.3f ms, %llu over 1 ms\n",
	    what, ULL(t->n), (double)w->wall_ns / 1e6, (double)w->cpu_ns / 1e6,
	    (double)w->runq_ns / 1e6, w->runq_known ? "" : " unknown",
	    (double)w->lock_ns / 1e6, (double)w->ckpt_ns / 1e6,
	    (double)w->other_ns / 1e6, (double)t->lock_max_ns / 1e6,
	    ULL(t->lock_over_1ms));
}

/* Lock waits on the main file (doc/storage.md, "The main file's journal"). */
static void
health_store_waits(struct sbuf *o, const Vitals__StoreHealth *s)
{
	const Vitals__StoreWaits *m = s->move_waits, *r = s->read_waits;

	/* the WAL's truncation after a write (storage.md, "What delays
	 * the writer"); no line while it never found a reader */
	if (s->wal_busy || s->wal_waited)
		sbuf_printf(o,
		    "  WAL truncation: %llu found a reader, %llu ran waiting for "
		    "readers\n",
		    ULL(s->wal_busy), ULL(s->wal_waited));
	if (m == NULL || r == NULL)
		return; /* an older daemon */
	sbuf_printf(o,
	    "  lock waits: %llu moves, %llu waited for readers (max %.3f ms, "
	    "p99 %.3f ms); %llu reads, %llu waited for a move (max %.3f ms, "
	    "p99 %.3f ms)\n",
	    ULL(m->n), ULL(m->waited), (double)m->max_ns / 1e6,
	    (double)m->p99_ns / 1e6, ULL(r->n), ULL(r->waited),
	    (double)r->max_ns / 1e6, (double)r->p99_ns / 1e6);
	if (m->lent || m->lend_denied)
		sbuf_printf(o,
		    "  readers lent the writer's priority: %llu times "
		    "(%llu refused by the kernel)\n",
		    ULL(m->lent), ULL(m->lend_denied));
	health_store_times(o, "puts", s->put_times);
	health_store_times(o, "passes", s->pass_times);
}

/*
 * What the store costs the flash and what it holds (doc/storage.md,
 * "Usage"). Nothing until the first maintenance pass has run.
 */
static void
health_store_usage(struct sbuf *o, const Vitals__StoreHealth *s)
{
	char span[32], hist[32], holds[32];

	if (s->io_err)
		sbuf_printf(o, "  written by the daemon: unknown (errno %d)\n",
		    -s->io_err);
	else if (s->io_span_ns > 0) {
		duration_format(span, sizeof(span), s->io_span_ns);
		sbuf_printf(o,
		    "  written by the daemon %.1f MiB per day (over the "
		    "last %s), %.1f MiB since the store opened\n",
		    (double)s->io_bytes_per_day / 1048576.0, span,
		    (double)s->io_written_bytes / 1048576.0);
	}
	health_store_spool(o, s);
	health_store_waits(o, s);
	if (s->history_windows == 0)
		return;
	duration_format(hist, sizeof(hist), s->history_ns);
	sbuf_printf(o, "  history %s in %llu windows", hist,
	    ULL(s->history_windows));
	if (s->bound_holds_ns > 0) {
		duration_format(holds, sizeof(holds), s->bound_holds_ns);
		sbuf_printf(o,
		    "; the size bound holds about %s at this density", holds);
	}
	sbuf_puts(o, "\n");
}

/* What the daemon runs with (doc/privileges.md) and what it cannot see. */
static void
health_privileges(struct sbuf *o, const Vitals__Privileges *p)
{
	size_t i;

	if (p->dropped)
		sbuf_printf(o, "Privileges: user %s (uid %u gid %u), groups",
		    p->user && *p->user ? p->user : "?", p->uid, p->gid);
	else
		sbuf_printf(o,
		    "Privileges: not dropped (uid %u gid %u), "
		    "groups",
		    p->uid, p->gid);
	if (p->n_groups == 0)
		sbuf_puts(o, " none");
	for (i = 0; i < p->n_groups; i++)
		sbuf_printf(o, "%s%u", i ? "," : " ", p->groups[i]);
	sbuf_puts(o, "; capabilities");
	if (p->n_capabilities == 0)
		sbuf_puts(o, " none");
	for (i = 0; i < p->n_capabilities; i++)
		sbuf_printf(o, "%s%s", i ? "," : " ", p->capabilities[i]);
	sbuf_printf(o, "; no_new_privs %s; seccomp %s%s\n",
	    p->no_new_privs ? "on" : "off", p->seccomp ? p->seccomp : "n/a",
	    p->verified ? "; verified" : "");
	if (p->unseen_state && !strcmp(p->unseen_state, "counted"))
		sbuf_printf(o,
		    "  processes hidden from the scan (hidepid): "
		    "%u\n",
		    p->procs_unseen);
	else if (p->unseen_state && !strcmp(p->unseen_state, "unknown"))
		sbuf_puts(o,
		    "  processes hidden from the scan (hidepid): "
		    "unknown (no cgroup list to count by)\n");
}

/* What makes the windows (doc/protocol.md, "Provenance"). */
static void
health_provenance(struct sbuf *o, const Vitals__Provenance *p)
{
	char booted[40];
	const char *src = p->fingerprint_source ? p->fingerprint_source : "";

	fmt_time(booted, sizeof(booted), p->btime_s * VITALS_NSEC_PER_SEC);
	sbuf_printf(o,
	    "Provenance: vitalsd %s; kernel %s; boot %s, booted %s "
	    "(btime %lld)\n  build fingerprint: ",
	    p->vitalsd_version && *p->vitalsd_version ? p->vitalsd_version :
							"?",
	    p->kernel_release && *p->kernel_release ? p->kernel_release : "?",
	    p->boot_id && *p->boot_id ? p->boot_id : "?", booted,
	    (long long)p->btime_s);
	if (!strcmp(src, "property"))
		sbuf_printf(o, "%s\n", p->build_fingerprint);
	else if (!strcmp(src, "none"))
		sbuf_puts(o, "none (no system properties: not Android)\n");
	else if (!strcmp(src, "unset"))
		sbuf_puts(o, "none (ro.build.fingerprint not set)\n");
	else
		sbuf_printf(o, "unknown (%s)\n", *src ? src : "not reported");
}

/* SIGHUP's rereads (doc/vitalsd.8.md, "Reload"). */
static void
health_config(struct sbuf *o, const Vitals__ConfigHealth *c)
{
	char when[40];

	sbuf_printf(o,
	    "  config: %u reloads (%u failed), %u keys applied, %u need a "
	    "restart",
	    c->reloads, c->failed, c->applied, c->refused);
	if (c->reloads) {
		fmt_time(when, sizeof(when), c->last_wall_ns);
		sbuf_printf(o, "; last %s: %s", when,
		    c->last && *c->last ? c->last : "?");
	}
	sbuf_putc(o, '\n');
}

void
fmt_health(struct sbuf *o, const Vitals__Health *h, const struct fmt_ctx *c)
{
	char up[16], left[16];

	duration_format(up, sizeof(up), (int64_t)h->uptime_ns);
	sbuf_printf(o, "vitalsd up %s, sampling every %u ms", up,
	    h->interval_ms);
	if (h->burst_until_mono_ns > c->now_mono_ns) {
		duration_format(left, sizeof(left),
		    h->burst_until_mono_ns - c->now_mono_ns);
		sbuf_printf(o, " (burst, %s left)", left);
	}
	sbuf_putc(o, '\n');
	if (h->provenance)
		health_provenance(o, h->provenance);
	if (h->config)
		health_config(o, h->config);
	if (h->last)
		health_window(o, h->last);
	else
		sbuf_puts(o, "Last window: none closed yet\n");
	if (h->last)
		fmt_fgbg_health(o, h->last);
	if (h->store) {
		const Vitals__StoreHealth *s = h->store;

		sbuf_printf(o,
		    "Store: %s, %llu bytes; windows written %llu, "
		    "write failures %llu, rolled up %llu, deleted by age %llu "
		    "by size %llu; rebuilt %llu; corrupt moved aside %llu",
		    s->state && *s->state ? s->state : "n/a", ULL(s->db_bytes),
		    ULL(s->windows_written), ULL(s->write_failures),
		    ULL(s->windows_rolled), ULL(s->deleted_age),
		    ULL(s->deleted_size), ULL(s->rebuilds),
		    ULL(s->corrupt_moved));
		if (s->corrupt_path && *s->corrupt_path)
			sbuf_printf(o, " (%s)", s->corrupt_path);
		sbuf_printf(o,
		    "\n  commit last %.3f ms max %.3f ms; queued "
		    "%u, dropped %llu\n",
		    (double)s->commit_ns_last / 1e6,
		    (double)s->commit_ns_max / 1e6, s->queued, ULL(s->dropped));
		if (s->last_err || (s->last_errmsg && *s->last_errmsg))
			sbuf_printf(o, "  last error %d: %s\n", s->last_err,
			    s->last_errmsg ? s->last_errmsg : "");
		if (s->open_retries || s->next_retry_ms)
			sbuf_printf(o,
			    "  open retried %llu times; next try in "
			    "%.1f s\n",
			    ULL(s->open_retries),
			    (double)s->next_retry_ms / 1e3);
		if (s->windows_salvaged || s->wal_damaged || s->shm_faults)
			sbuf_printf(o,
			    "  salvaged windows %llu, damaged WAL "
			    "%llu, -shm faults repaired %llu\n",
			    ULL(s->windows_salvaged), ULL(s->wal_damaged),
			    ULL(s->shm_faults));
		if (s->blob_errors)
			sbuf_printf(o,
			    "  task blobs refused by reads %llu (their rows "
			    "skipped, the rest of each window read)\n",
			    ULL(s->blob_errors));
		if (s->clock_suspect && !s->clock_confirmed)
			sbuf_printf(o,
			    "  wall clock %.1f h ahead of the stored "
			    "windows, not confirmed: deletions by wall time "
			    "wait (%llu windows held)\n",
			    (double)s->clock_ahead_ns / 3.6e12,
			    ULL(s->clock_held));
		if (s->clock_deferred)
			sbuf_printf(o,
			    "  maintenance passes that waited for "
			    "the wall clock %llu\n",
			    ULL(s->clock_deferred));
		health_store_usage(o, s);
	} else {
		sbuf_puts(o, "Store: n/a\n");
	}
	if (h->control) {
		const Vitals__ControlHealth *k = h->control;

		sbuf_printf(o,
		    "Control: %u connections; accepted %llu, "
		    "requests %llu, denied %llu, bad frames %llu, idle closed "
		    "%llu, overflow closed %llu, accept paused %llu, busy "
		    "%llu, refused at a cap %llu\n  store queries %llu "
		    "(slowest %.3f ms), queued %u\n",
		    k->connections, ULL(k->accepted), ULL(k->requests),
		    ULL(k->denied), ULL(k->bad_frames), ULL(k->idle_closed),
		    ULL(k->overflow_closed), ULL(k->accept_paused),
		    ULL(k->queries_busy), ULL(k->cap_refused), ULL(k->queries),
		    (double)k->query_ns_max / 1e6, k->queries_queued);
		if (k->query_threads)
			sbuf_printf(o,
			    "  read pool %u threads, connections open %u; "
			    "answers cut at the memory budget %llu; "
			    "connections released idle %llu, opened %llu; "
			    "warmed at start %llu (%.3f ms)\n",
			    k->query_threads, k->readers_open,
			    ULL(k->queries_budget_cut),
			    ULL(k->readers_idle_closed), ULL(k->readers_opened),
			    ULL(k->readers_warmed),
			    (double)k->readers_warm_ns / 1e6);
		if (k->query_threads) {
			uint64_t n = k->read_cache_hits + k->read_cache_misses;

			sbuf_printf(o,
			    "  read caches: windows %llu reused, %llu decoded "
			    "(%.1f %% reused); whole reads from a memo %llu, "
			    "kept as memos %llu; held %.1f KiB\n",
			    ULL(k->read_cache_hits), ULL(k->read_cache_misses),
			    n ? 100.0 * (double)k->read_cache_hits / (double)n :
				0.0,
			    ULL(k->read_memo_hits), ULL(k->read_memo_saved),
			    (double)k->read_cache_bytes / 1024.0);
		}
	} else {
		sbuf_puts(o, "Control: n/a\n");
	}
	if (h->metrics) {
		const Vitals__MetricsHealth *x = h->metrics;

		sbuf_printf(o,
		    "Metrics: /metrics on %s: %u connections; accepted %llu, "
		    "scrapes %llu; refused: at the cap %llu, timed out %llu, "
		    "bad requests %llu, not found %llu, bad method %llu\n"
		    "  last page %llu bytes in %.3f ms (slowest %.3f ms)\n",
		    x->listen, x->connections, ULL(x->accepted),
		    ULL(x->scrapes), ULL(x->cap_refused), ULL(x->timed_out),
		    ULL(x->bad_requests), ULL(x->not_found), ULL(x->bad_method),
		    ULL(x->page_bytes), (double)x->render_ns_last / 1e6,
		    (double)x->render_ns_max / 1e6);
		if (x->accept_paused)
			sbuf_printf(o,
			    "  accept paused %llu times (no file "
			    "descriptors)\n",
			    ULL(x->accept_paused));
	}
	fmt_memory_health(o, h->memory);
	if (h->otlp) {
		const Vitals__OtlpHealth *x = h->otlp;
		char st[16];

		if (x->last_status > 0)
			snprintf(st, sizeof(st), "%d", x->last_status);
		else
			snprintf(st, sizeof(st), "%s",
			    x->last_status < 0 ? "no answer" : "none");
		sbuf_printf(o,
		    "OTLP: push to %s: queued %llu, sent %llu (%llu bytes), "
		    "waiting %u; failed %llu, retries %llu; dropped: queue "
		    "full %llu, refused %llu; rejected points %llu\n"
		    "  last status %s%s%s; last batch %llu points\n",
		    x->endpoint, ULL(x->queued), ULL(x->sent),
		    ULL(x->bytes_sent), x->queue_depth, ULL(x->failed),
		    ULL(x->retries), ULL(x->dropped_full),
		    ULL(x->dropped_rejected), ULL(x->rejected_points), st,
		    *x->last_error ? ": " : "", x->last_error,
		    ULL(x->points_last));
	}
	if (h->gpu_mem)
		fmt_gpumem_health(o, h->gpu_mem);
	if (h->gpu_freq)
		fmt_gpufreq_health(o, h->gpu_freq);
	if (h->syscalls)
		fmt_syscall_health(o, h->syscalls);
	fmt_trace_health(o, h->trace); /* ftrace, ATrace categories */
	fmt_hp_health(o, h->heapprofd);
	if (h->privileges)
		health_privileges(o, h->privileges);
	if (h->wss)
		fmt_wss_health(o, h->wss);
	if (h->bursts)
		fmt_burst_health(o, h->bursts);
}
