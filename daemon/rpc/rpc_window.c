/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window as a protobuf-c message: the core's figures, tasks cut to the
 * busiest by CPU, and each part's fields through rpc_parts[] (rpc_part.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"
#include "window/window.h"
#include "rpc_int.h"

static Vitals__Counter *
pb_counter(struct rpc_arena *a, const char *name, uint64_t v)
{
	Vitals__Counter *m;

	NEW(a, m, vitals__counter__init);
	m->name = (char *)name; /* static names, never freed */
	m->value = v;
	return m;
}

static Vitals__Cpu *
pb_cpu(struct rpc_arena *a, int cpu, const struct window_cpu *c)
{
	Vitals__CpuTimes *d;
	Vitals__Cpu *m;

	NEW(a, m, vitals__cpu__init);
	NEW(a, d, vitals__cpu_times__init);
	d->user = c->d.user;
	d->nice = c->d.nice;
	d->system = c->d.system;
	d->idle = c->d.idle;
	d->iowait = c->d.iowait;
	d->irq = c->d.irq;
	d->softirq = c->d.softirq;
	d->steal = c->d.steal;
	d->guest = c->d.guest;
	d->guest_nice = c->d.guest_nice;
	m->cpu = cpu;
	m->d = d;
	m->samples = c->samples;
	m->wall_ns = c->wall_ns;
	m->online = c->online_end;
	TRY(m->cur_khz = rpc_pb_gauge(a, &c->cur_khz));
	m->max_khz = c->max_khz;
	m->capacity = c->capacity;
	TRY(m->freq_ratio = rpc_pb_gauge(a, &c->freq_ratio));
	return m;
}

static int
cmp_task_cpu(const void *a, const void *b)
{
	const struct window_task *x = *(const struct window_task *const *)a;
	const struct window_task *y = *(const struct window_task *const *)b;
	uint64_t cx = x->d_utime + x->d_stime, cy = y->d_utime + y->d_stime;

	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->starttime != y->starttime)
		return x->starttime < y->starttime ? -1 : 1;
	return 0;
}

/* Tasks by CPU, cut to top_n (0: all). Returns the array, or NULL on
 * failure; *ret_n is 0 for an empty list (and the array NULL). */
static Vitals__Task **
pb_tasks(struct rpc_arena *a, const struct window_task *t, size_t n,
    unsigned top_n, size_t *ret_n, bool *ret_fail)
{
	const struct window_task **idx;
	Vitals__Task **out;
	size_t k = n, i;

	*ret_n = 0;
	if (n == 0)
		return NULL;
	*ret_fail = true;
	ARRAY(a, idx, n);
	for (i = 0; i < n; i++)
		idx[i] = &t[i];
	qsort(idx, n, sizeof(*idx), cmp_task_cpu);
	if (top_n && top_n < n)
		k = top_n;
	ARRAY(a, out, k);
	for (i = 0; i < k; i++)
		TRY(out[i] = rpc_pb_task(a, idx[i]));
	*ret_fail = false;
	*ret_n = k;
	return out;
}

static Vitals__WindowHealth *
pb_whealth(struct rpc_arena *a, const struct window_health *h)
{
	Vitals__WindowHealth *m;
	unsigned i;

	NEW(a, m, vitals__window_health__init);
	m->self_utime_us = h->self_utime_us;
	m->self_stime_us = h->self_stime_us;
	ARRAY(a, m->coll_ns_sum, COLL__MAX);
	ARRAY(a, m->coll_ns_max, COLL__MAX);
	for (i = 0; i < COLL__MAX; i++) {
		TRY(m->coll_ns_sum[i] = pb_counter(a, coll_name(i),
			h->coll_ns_sum[i]));
		TRY(m->coll_ns_max[i] = pb_counter(a, coll_name(i),
			h->coll_ns_max[i]));
	}
	m->n_coll_ns_sum = m->n_coll_ns_max = COLL__MAX;
	m->sample_ns_sum = h->sample_ns_sum;
	m->sample_ns_max = h->sample_ns_max;
	m->late_ticks = h->late_ticks;
	m->burst_samples = h->burst_samples;
	m->procs_scanned = h->procs_scanned;
	m->threads_scanned = h->threads_scanned;
	m->stat_fds = h->stat_fds;
	m->stat_fd_reads = h->stat_fd_reads;
	m->stat_opens = h->stat_opens;
	m->stat_fd_full = h->stat_fd_full;
	m->lists_read = h->lists_read;
	m->lists_skipped = h->lists_skipped;
	m->samples_full = h->samples_full;
	m->samples_partial = h->samples_partial;
	m->partial_records = h->partial_records;
	m->partial_doubts = h->partial_doubts;
	m->partial_why = (char *)partial_why_name(h->partial_why);
	m->partial_err = h->partial_err;
	m->partial_gone_unknown = h->partial_gone_unknown;
	m->ident_queued = h->ident_queued;
	m->ident_done = h->ident_done;
	m->ident_full = h->ident_full;
	m->ident_stale = h->ident_stale;
	m->ident_loop = h->ident_loop;
	m->ident_pending = h->ident_pending;
	m->walks_off_loop = h->walks_off_loop;
	m->walks_dropped = h->walks_dropped;
	m->walk_wait_ns_max = h->walk_wait_ns_max;
	m->procs_exited = h->procs_exited;
	m->threads_exited = h->threads_exited;
	m->cpu_dropped = h->cpu_dropped;
	m->store_state = (char *)store_state_name(h->store_state);
	m->store_queued = h->store_queued;
	m->store_dropped = h->store_dropped;
	m->tick_late_ns_max = h->tick_late_ns_max;
	m->tick_late_ns_sum = h->tick_late_ns_sum;
	m->tick_late_held_ns_sum = h->tick_late_held_ns_sum;
	m->tick_late_runq_ns_sum = h->tick_late_runq_ns_sum;
	m->tick_late_max_held_ns = h->tick_late_max_held_ns;
	m->tick_late_max_runq_ns = h->tick_late_max_runq_ns;
	m->tick_late_runq_absent = h->tick_late_runq_absent;
	m->loop_cb_ns_max = h->loop_cb_ns_max;
	if (h->loop_cb_what[0] != '\0')
		TRY(m->loop_cb_what = rpc_pb_str(a, h->loop_cb_what,
			sizeof(h->loop_cb_what)));
	m->loop_cb_over_1ms = h->loop_cb_over_1ms;
	m->loop_cb_cpu_ns = h->loop_cb_cpu_ns;
	if ((m->tick_late_hist = rpc_arena_alloc(a,
		 VITALS_LATE_BUCKETS * sizeof(*m->tick_late_hist))) != NULL) {
		static const uint64_t ms[] = VITALS_LATE_BOUNDS_MS;
		uint64_t n = 0, acc = 0;
		unsigned i;

		for (i = 0; i < VITALS_LATE_BUCKETS; i++)
			n += m->tick_late_hist[i] = h->tick_late_hist[i];
		m->n_tick_late_hist = n ? VITALS_LATE_BUCKETS : 0;
		for (i = 0; n && i < VITALS_LATE_BUCKETS; i++)
			if ((acc += h->tick_late_hist[i]) * 100 >= n * 99) {
				m->tick_late_ns_p99 = ms[i] ?
				    ms[i] * NSEC_PER_MSEC :
				    h->tick_late_ns_max;
				break;
			}
	}
	return m;
}

static Vitals__Counter **
pb_invalid(struct rpc_arena *a, const uint32_t *v)
{
	Vitals__Counter **m;
	unsigned i;

	ARRAY(a, m, INV__MAX);
	for (i = 0; i < INV__MAX; i++)
		TRY(m[i] = pb_counter(a, invalid_name(i), v[i]));
	return m;
}

static int
pb_window_system(struct rpc_arena *a, Vitals__Window *m, const struct window *w)
{
	unsigned i, k;

	if ((m->online_cpus = rpc_pb_gauge(a, &w->online_cpus)) == NULL ||
	    (m->procs_running = rpc_pb_gauge(a, &w->procs_running)) == NULL ||
	    (m->procs_blocked = rpc_pb_gauge(a, &w->procs_blocked)) == NULL ||
	    (m->load1 = rpc_pb_gauge(a, &w->load1)) == NULL ||
	    (m->load5 = rpc_pb_gauge(a, &w->load5)) == NULL ||
	    (m->load15 = rpc_pb_gauge(a, &w->load15)) == NULL ||
	    (m->load_runnable = rpc_pb_gauge(a, &w->load_runnable)) == NULL ||
	    (m->load_threads = rpc_pb_gauge(a, &w->load_threads)) == NULL)
		return -ENOMEM;
	m->d_ctxt = w->d_ctxt;
	m->d_processes = w->d_processes;
	if ((m->psi = rpc_arena_alloc(a, PSI__MAX * sizeof(*m->psi))) == NULL)
		return -ENOMEM;
	for (i = 0; i < PSI__MAX; i++) {
		const struct window_psi *p = &w->psi[i];
		Vitals__Psi *q;

		if ((q = rpc_arena_alloc(a, sizeof(*q))) == NULL)
			return -ENOMEM;
		vitals__psi__init(q);
		q->resource = (char *)psi_res_name(i);
		q->available = p->available;
		q->have_full = p->have_full;
		q->d_some_us = p->d_some_us;
		q->d_full_us = p->d_full_us;
		q->samples = p->samples;
		if ((q->some_avg10 = rpc_pb_gauge(a, &p->some_avg10)) == NULL ||
		    (q->full_avg10 = rpc_pb_gauge(a, &p->full_avg10)) == NULL)
			return -ENOMEM;
		m->psi[i] = q;
	}
	m->n_psi = PSI__MAX;
	if ((m->vmstat = rpc_arena_alloc(a, VM__MAX * sizeof(*m->vmstat))) ==
	    NULL)
		return -ENOMEM;
	for (i = k = 0; i < VM__MAX; i++)
		if (w->vm_have & (1u << i) &&
		    (m->vmstat[k++] = pb_counter(a, vmstat_key_name(i),
			 w->d_vm[i])) == NULL)
			return -ENOMEM;
	m->n_vmstat = k;
	if ((m->meminfo = rpc_arena_alloc(a, MI__MAX * sizeof(*m->meminfo))) ==
	    NULL)
		return -ENOMEM;
	for (i = k = 0; i < MI__MAX; i++) {
		Vitals__NamedGauge *g;

		if (!(w->mem_have & (1u << i)))
			continue;
		if ((g = rpc_arena_alloc(a, sizeof(*g))) == NULL)
			return -ENOMEM;
		vitals__named_gauge__init(g);
		g->name = (char *)meminfo_key_name(i);
		if ((g->gauge = rpc_pb_gauge(a, &w->mem_kb[i])) == NULL)
			return -ENOMEM;
		m->meminfo[k++] = g;
	}
	m->n_meminfo = k;
	return 0;
}

Vitals__Provenance *
rpc_pb_provenance(struct rpc_arena *a, const struct provenance *p)
{
	Vitals__Provenance *m;

	NEW(a, m, vitals__provenance__init);
	TRY(m->boot_id = rpc_pb_str(a, p->boot_id, sizeof(p->boot_id)));
	TRY(m->kernel_release = rpc_pb_str(a, p->kernel, sizeof(p->kernel)));
	TRY(m->vitalsd_version = rpc_pb_str(a, p->version, sizeof(p->version)));
	m->btime_s = p->btime_s;
	TRY(m->build_fingerprint = rpc_pb_str(a, p->fingerprint,
		sizeof(p->fingerprint)));
	TRY(m->fingerprint_source = rpc_pb_str(a,
		provenance_fp_source_name(p->fp_source), 16));
	m->since_mono_ns = p->since_mono_ns;
	return m;
}

/* A window; tasks cut to the top_n by CPU (0: all), or none. */
Vitals__Window *
rpc_pb_window(struct rpc_arena *a, const struct window *w, bool tasks,
    unsigned top_n)
{
	Vitals__Window *m;
	bool fail = false;
	unsigned i;

	NEW(a, m, vitals__window__init);
	m->seq = w->seq;
	TRY(m->boot_id = rpc_pb_str(a, w->boot_id, sizeof(w->boot_id)));
	m->level = w->level;
	m->mono_start_ns = w->mono_start_ns;
	m->mono_end_ns = w->mono_end_ns;
	m->boot_start_ns = w->boot_start_ns;
	m->boot_end_ns = w->boot_end_ns;
	m->wall_start_ns = w->wall_start_ns;
	m->wall_end_ns = w->wall_end_ns;
	m->hz = w->hz;
	m->interval_ms = w->interval_ms;
	m->samples = w->samples;
	m->samples_valid = w->samples_valid;
	TRY(m->invalid_samples = pb_invalid(a, w->inv_samples));
	TRY(m->invalid_deltas = pb_invalid(a, w->inv_deltas));
	m->n_invalid_samples = m->n_invalid_deltas = INV__MAX;
	TRY(m->all = pb_cpu(a, -1, &w->all));
	ARRAY(a, m->cpus, w->cpu_span);
	for (i = 0; i < w->cpu_span; i++)
		TRY(m->cpus[i] = pb_cpu(a, (int)i, &w->cpu[i]));
	m->n_cpus = w->cpu_span;
	if (pb_window_system(a, m, w) < 0)
		return NULL;
	if (tasks) {
		m->procs = pb_tasks(a, w->procs, w->nprocs, top_n, &m->n_procs,
		    &fail);
		if (fail)
			return NULL;
		m->threads = pb_tasks(a, w->threads, w->nthreads, top_n,
		    &m->n_threads, &fail);
		if (fail)
			return NULL;
	}
	m->nprocs_total = (uint32_t)w->nprocs;
	m->nthreads_total = (uint32_t)w->nthreads;
	TRY(m->health = pb_whealth(a, &w->health));
	if (w->prov.version[0])
		TRY(m->provenance = rpc_pb_provenance(a, &w->prov));
	/* each part's fields (rpc_parts[]) */
	for (i = 0; i < WPART__MAX; i++)
		if (w->part[i] != NULL && rpc_parts[i]->window != NULL &&
		    rpc_parts[i]->window(a, m, w) < 0)
			return NULL;
	return m;
}
