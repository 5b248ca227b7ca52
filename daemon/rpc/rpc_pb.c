/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's structs as protobuf-c messages: windows (tasks cut to the
 * busiest by CPU), tasks and history points, all in an arena (rpc_int.h).
 * Strings are made valid UTF-8 on the way, as proto3 requires.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gpumem/gpumem.h"
#include "proc/proc.h"
#include "store/store.h"
#include "sched/sched.h"
#include "window/window.h"
#include "rpc_int.h"

/* ------------------------------------------------------------- frames */

/* Below rpc.c and every rpc_<signal>.c: each answers errors with it. */
int
rpc_error_frame(uint64_t id, enum rpc_status st, const char *msg, uint8_t **ret,
    size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = id;
	resp.status = (Vitals__Status)st;
	resp.error = (char *)msg;
	return frame_pack_response(&resp, ret, ret_len);
}

/* ------------------------------------------------------------- arena */

#define ARENA_CHUNK (64 * 1024)

struct rpc_chunk {
	struct rpc_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

void *
rpc_arena_alloc(struct rpc_arena *a, size_t n)
{
	struct rpc_chunk *c = a->head;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		if ((c = malloc(sizeof(*c) + cap)) == NULL)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

void
rpc_arena_release(struct rpc_arena *a)
{
	struct rpc_chunk *c, *next;

	for (c = a->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

/* ------------------------------------------------------------ strings */

/* Length of the well-formed UTF-8 sequence at s, 0 when there is none. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/*
 * proto3 strings must be UTF-8 and other languages' decoders reject a
 * message that breaks this; a comm is whatever bytes a task chose. Each
 * byte that starts no well-formed sequence becomes '?', in place.
 */
void
rpc_utf8_clean(char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if ((k = utf8_seq((unsigned char *)s + i, n - i)) == 0) {
			s[i++] = '?';
			continue;
		}
		i += k;
	}
}

char *
rpc_pb_str(struct rpc_arena *a, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *p;

	if ((p = rpc_arena_alloc(a, n + 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	rpc_utf8_clean(p, n);
	return p;
}

/* ----------------------------------------------------------- figures */

Vitals__Gauge *
rpc_pb_gauge(struct rpc_arena *a, const struct gauge *g)
{
	Vitals__Gauge *m;

	NEW(a, m, vitals__gauge__init);
	m->min = g->min;
	m->max = g->max;
	m->sum = g->sum;
	m->last = g->last;
	m->n = g->n;
	return m;
}

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

Vitals__Task *
rpc_pb_task(struct rpc_arena *a, const struct window_task *t)
{
	Vitals__Task *m;

	NEW(a, m, vitals__task__init);
	m->id = t->id;
	m->tgid = t->tgid;
	m->starttime = t->starttime;
	m->uid = t->uid;
	TRY(m->comm = rpc_pb_str(a, t->comm, sizeof(t->comm)));
	TRY(m->name = rpc_pb_str(a, t->name, sizeof(t->name)));
	m->d_utime = t->d_utime;
	m->d_stime = t->d_stime;
	m->d_minflt = t->d_minflt;
	m->d_majflt = t->d_majflt;
	m->samples = t->samples;
	m->wall_ns = t->wall_ns;
	m->total_ticks = t->total_ticks;
	m->norm_ticks = t->norm_ticks;
	m->rss_pages_max = t->rss_pages_max;
	m->rss_pages_last = t->rss_pages_last;
	m->born = t->born;
	m->exited = t->exited;
	return m;
}

/* Busiest first; ties by identity so equal windows convert equally. */
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
	m->procs_exited = h->procs_exited;
	m->threads_exited = h->threads_exited;
	m->cpu_dropped = h->cpu_dropped;
	m->store_state = (char *)store_state_name(h->store_state);
	m->store_queued = h->store_queued;
	m->store_dropped = h->store_dropped;
	m->tick_late_ns_max = h->tick_late_ns_max;
	m->tick_late_ns_sum = h->tick_late_ns_sum;
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

static Vitals__BpfHealth *
pb_bpf(struct rpc_arena *a, const struct window_bpf *b)
{
	Vitals__BpfHealth *m;

	NEW(a, m, vitals__bpf_health__init);
	m->state = (char *)vbpf_state_name(b->state);
	m->err = b->err;
	m->drains = b->drains;
	m->drain_fail = b->drain_fail;
	m->counter_regressions = b->counter_regressions;
	m->oncpu_ns = b->oncpu_ns;
	m->switches = b->switches;
	m->no_slice = b->no_slice;
	m->lost_ns = b->lost_ns;
	m->no_storage = b->no_storage;
	m->pre_ns = b->pre_ns;
	m->diff_drains = b->diff_drains;
	m->unattributed_ns = b->unattributed_ns;
	m->evicted = b->evicted;
	m->recreated = b->recreated;
	m->retired = b->retired;
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
	if (window_sched(w) && window_sched(w)->state != VBPF_UNKNOWN)
		TRY(m->health->bpf = pb_bpf(a, window_sched(w)));
	return m;
}

Vitals__HistoryPoint **
rpc_pb_history(struct rpc_arena *a, const struct store_hist *h, size_t n)
{
	Vitals__HistoryPoint **out, *p;
	size_t i;

	ARRAY(a, out, n);
	for (i = 0; i < n; i++) {
		NEW(a, p, vitals__history_point__init);
		p->wall_start_ns = h[i].wall_start_ns;
		p->wall_end_ns = h[i].wall_end_ns;
		p->level = h[i].level;
		p->hz = h[i].hz;
		TRY(p->task = rpc_pb_task(a, &h[i].t));
		out[i] = p;
	}
	return out;
}

/* ------------------------------------------------------------- GpuMem */

Vitals__GpuMemState *
rpc_pb_gpumem_state(struct rpc_arena *a, const struct window_gpumem *g)
{
	Vitals__GpuMemState *m;

	NEW(a, m, vitals__gpu_mem_state__init);
	m->state = (char *)gpumem_state_name(g->state);
	m->why = (char *)gpumem_why_name(g->why);
	m->err = -g->err;
	m->source = (char *)gpumem_source_name(g->source);
	m->capacity = g->capacity;
	m->entries = g->entries;
	m->saturated = g->saturated;
	m->traversals = g->traversals;
	m->traversal_fail = g->traversal_fail;
	m->restarts = g->restarts;
	m->vanished = g->vanished;
	m->duplicates = g->duplicates;
	m->truncated = g->truncated;
	m->stale = g->stale;
	m->events = g->events;
	m->events_late = g->events_late;
	m->traverse_ns = g->traverse_ns;
	m->traverse_ns_max = g->traverse_ns_max;
	m->tp_events = g->tp_events;
	m->insert_fail = g->insert_fail;
	m->imported = g->imported;
	return m;
}

/* One pair; sp (may be NULL) adds a span's first value and extent. */
Vitals__GpuProc *
rpc_pb_gpu_proc(struct rpc_arena *a, const struct window_gpu_proc *p,
    const struct gpumem_span *sp)
{
	Vitals__GpuProc *m;

	NEW(a, m, vitals__gpu_proc__init);
	m->gpu_id = p->gpu_id;
	m->pid = p->pid;
	m->starttime = p->starttime;
	TRY(m->name = rpc_pb_str(a, p->name, sizeof(p->name)));
	m->bytes = p->bytes;
	m->min_bytes = p->min_bytes;
	m->max_bytes = p->max_bytes;
	m->stale = p->stale;
	m->imported_bytes = p->imported_bytes;
	if (sp) {
		m->first_bytes = sp->first_bytes;
		m->windows = sp->windows;
		m->first_wall_ns = sp->first_wall_ns;
		m->last_wall_ns = sp->last_wall_ns;
	}
	return m;
}
