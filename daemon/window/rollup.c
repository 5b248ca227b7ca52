/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Roll-up arithmetic: folding a later window into an earlier one. A roll-up
 * must stay as honest as the windows it came from, so every figure keeps
 * its kind: deltas and their denominators add, gauges keep min/max and add
 * sum and n (so the average stays the average of all readings), and state
 * taken "at the end" comes from the later window.
 *
 * Tasks are matched by identity with a hash so that rolling a day of
 * windows with thousands of tasks each stays linear.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc.h"
#include "window/window.h"

/* Open addressing over task indices; a slot holds index + 1, 0 is empty. */
struct task_index {
	uint32_t *slot;
	size_t mask;
};

static size_t
task_hash(int32_t id, uint64_t starttime)
{
	uint64_t h = ((uint64_t)(uint32_t)id << 32) ^ starttime;

	/* splitmix64 finaliser: pids are dense, so mix them well */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h;
}

static void
index_put(struct task_index *ix, const struct window_task *arr, size_t i)
{
	size_t h = task_hash(arr[i].id, arr[i].starttime) & ix->mask;

	while (ix->slot[h] != 0)
		h = (h + 1) & ix->mask;
	ix->slot[h] = (uint32_t)(i + 1);
}

static struct window_task *
index_get(const struct task_index *ix, struct window_task *arr,
    const struct window_task *key)
{
	size_t h = task_hash(key->id, key->starttime) & ix->mask;

	for (; ix->slot[h] != 0; h = (h + 1) & ix->mask) {
		struct window_task *t = &arr[ix->slot[h] - 1];

		if (t->id == key->id && t->starttime == key->starttime)
			return t;
	}
	return NULL;
}

static void
task_merge(struct window_task *a, const struct window_task *s)
{
	a->d_utime += s->d_utime;
	a->d_stime += s->d_stime;
	a->d_minflt += s->d_minflt;
	a->d_majflt += s->d_majflt;
	a->samples += s->samples;
	a->wall_ns += s->wall_ns;
	a->total_ticks += s->total_ticks;
	a->norm_ticks += s->norm_ticks;
	if (s->rss_pages_max > a->rss_pages_max)
		a->rss_pages_max = s->rss_pages_max;
	a->rss_pages_last = s->rss_pages_last;
	/* Started inside either part means started inside the whole. */
	a->born = a->born || s->born;
	a->exited = s->exited;
	/* exec() renames a process without changing its identity. */
	a->tgid = s->tgid;
	a->uid = s->uid;
	memcpy(a->comm, s->comm, sizeof(a->comm));
	window_task_copy_name(a, s);
}

/* Capacity only: the logical content of the list does not change. */
static int
tasks_reserve(struct window_task **arr, size_t n, size_t *cap, size_t more)
{
	struct window_task *p;
	size_t want;

	if (more > SIZE_MAX / sizeof(*p) - n)
		return -ENOMEM;
	want = n + more;
	if (want <= *cap)
		return 0;
	if ((p = realloc(*arr, want * sizeof(*p))) == NULL)
		return -ENOMEM;
	*arr = p;
	*cap = want;
	return 0;
}

static void
tasks_merge(struct task_index *ix, struct window_task *arr, size_t *n,
    const struct window_task *src, size_t nsrc)
{
	size_t i;

	memset(ix->slot, 0, (ix->mask + 1) * sizeof(*ix->slot));
	for (i = 0; i < *n; i++)
		index_put(ix, arr, i);
	for (i = 0; i < nsrc; i++) {
		struct window_task *t = index_get(ix, arr, &src[i]);

		if (t != NULL) {
			task_merge(t, &src[i]);
			continue;
		}
		arr[*n] = src[i];
		index_put(ix, arr, (*n)++);
	}
}

static void
cpu_merge(struct window_cpu *a, const struct window_cpu *s)
{
	cpu_times_add(&a->d, &s->d);
	a->samples += s->samples;
	a->wall_ns += s->wall_ns;
	a->online_end = s->online_end;
	gauge_merge(&a->cur_khz, &s->cur_khz);
	gauge_merge(&a->freq_ratio, &s->freq_ratio);
	/* A later "unknown" (cpufreq gone with its CPU) keeps the known. */
	if (s->max_khz >= 0)
		a->max_khz = s->max_khz;
	if (s->capacity >= 0)
		a->capacity = s->capacity;
}

static void
psi_merge(struct window_psi *a, const struct window_psi *s)
{
	a->available = a->available || s->available;
	a->have_full = a->have_full || s->have_full;
	a->d_some_us += s->d_some_us;
	a->d_full_us += s->d_full_us;
	a->samples += s->samples;
	gauge_merge(&a->some_avg10, &s->some_avg10);
	gauge_merge(&a->full_avg10, &s->full_avg10);
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void
health_merge(struct window_health *a, const struct window_health *s)
{
	unsigned i;

	a->self_utime_us += s->self_utime_us;
	a->self_stime_us += s->self_stime_us;
	for (i = 0; i < COLL__MAX; i++) {
		a->coll_ns_sum[i] += s->coll_ns_sum[i];
		a->coll_ns_max[i] = max_u64(a->coll_ns_max[i],
		    s->coll_ns_max[i]);
	}
	a->sample_ns_sum += s->sample_ns_sum;
	a->sample_ns_max = max_u64(a->sample_ns_max, s->sample_ns_max);
	a->late_ticks += s->late_ticks;
	a->burst_samples += s->burst_samples;
	a->procs_exited += s->procs_exited;
	a->threads_exited += s->threads_exited;
	/* A loss indicator: the worst seen, not the last. */
	if (s->cpu_dropped > a->cpu_dropped)
		a->cpu_dropped = s->cpu_dropped;
	/* Snapshots taken when a window closed: the later one is current. */
	a->procs_scanned = s->procs_scanned;
	a->threads_scanned = s->threads_scanned;
	a->stat_fds = s->stat_fds;
	a->stat_fd_reads += s->stat_fd_reads;
	a->stat_opens += s->stat_opens;
	a->stat_fd_full += s->stat_fd_full;
	a->lists_read += s->lists_read;
	a->lists_skipped += s->lists_skipped;
	if (s->loop_cb_ns_max > a->loop_cb_ns_max) {
		a->loop_cb_ns_max = s->loop_cb_ns_max;
		a->loop_cb_cpu_ns = s->loop_cb_cpu_ns;
		memcpy(a->loop_cb_what, s->loop_cb_what,
		    sizeof(a->loop_cb_what));
	}
	a->loop_cb_over_1ms += s->loop_cb_over_1ms;
	a->store_state = s->store_state;
	a->store_queued = s->store_queued;
	a->store_dropped = s->store_dropped;
	a->scanner = s->scanner;
	a->scanner_why = s->scanner_why;
	a->scanner_err = s->scanner_err;
	a->iter_failed += s->iter_failed;
	a->samples_full += s->samples_full;
	a->samples_partial += s->samples_partial;
	a->partial_records = s->partial_records;
	a->partial_doubts += s->partial_doubts;
	a->partial_why = s->partial_why;
	a->partial_err = s->partial_err;
	a->partial_gone_unknown += s->partial_gone_unknown;
	a->ident_queued += s->ident_queued;
	a->ident_done += s->ident_done;
	a->ident_full += s->ident_full;
	a->ident_stale += s->ident_stale;
	a->ident_loop += s->ident_loop;
	a->ident_pending = s->ident_pending;
	a->walks_off_loop += s->walks_off_loop;
	a->walks_dropped += s->walks_dropped;
	if (s->walk_wait_ns_max > a->walk_wait_ns_max)
		a->walk_wait_ns_max = s->walk_wait_ns_max;
}

static void
system_merge(struct window *acc, const struct window *src)
{
	unsigned i;

	acc->samples += src->samples;
	acc->samples_valid += src->samples_valid;
	for (i = 0; i < INV__MAX; i++) {
		acc->inv_samples[i] += src->inv_samples[i];
		acc->inv_deltas[i] += src->inv_deltas[i];
	}
	cpu_merge(&acc->all, &src->all);
	for (i = 0; i < acc->cpu_span; i++) {
		if (i < src->cpu_span) {
			cpu_merge(&acc->cpu[i], &src->cpu[i]);
		} else {
			/* Not even a line for it in src: offline throughout. */
			acc->cpu[i].online_end = false;
		}
	}
	gauge_merge(&acc->online_cpus, &src->online_cpus);
	acc->d_ctxt += src->d_ctxt;
	acc->d_processes += src->d_processes;
	gauge_merge(&acc->procs_running, &src->procs_running);
	gauge_merge(&acc->procs_blocked, &src->procs_blocked);
	gauge_merge(&acc->load1, &src->load1);
	gauge_merge(&acc->load5, &src->load5);
	gauge_merge(&acc->load15, &src->load15);
	gauge_merge(&acc->load_runnable, &src->load_runnable);
	gauge_merge(&acc->load_threads, &src->load_threads);
	for (i = 0; i < PSI__MAX; i++)
		psi_merge(&acc->psi[i], &src->psi[i]);
	for (i = 0; i < VM__MAX; i++)
		acc->d_vm[i] += src->d_vm[i];
	acc->vm_samples += src->vm_samples;
	acc->vm_have |= src->vm_have;
	for (i = 0; i < MI__MAX; i++)
		gauge_merge(&acc->mem_kb[i], &src->mem_kb[i]);
	acc->mem_have |= src->mem_have;
	health_merge(&acc->health, &src->health);
}

/* Each part folds itself (window_parts[]); a side without it is NULL. */
static int
parts_merge(struct window *acc, const struct window *src)
{
	unsigned i;
	int r;

	for (i = 0; i < WPART__MAX; i++) {
		if (acc->part[i] == NULL && src->part[i] == NULL)
			continue;
		if ((r = window_parts[i]->merge(&acc->part[i], src->part[i])) <
		    0)
			return r;
	}
	return 0;
}

/*
 * The tasks' and CPUs' room is made before the first figure changes; a
 * part that finds no memory for its rows fails the merge after the system
 * figures are folded, so a caller drops acc on any failure.
 */
int
window_merge(struct window *acc, const struct window *src)
{
	struct task_index ix = { 0 };
	size_t most, size;
	int r;

	if (acc->hz && src->hz && acc->hz != src->hz)
		return -EINVAL; /* ticks of different sizes do not add */
	if ((r = tasks_reserve(&acc->procs, acc->nprocs, &acc->procs_cap,
		 src->nprocs)) < 0)
		return r;
	if ((r = tasks_reserve(&acc->threads, acc->nthreads, &acc->threads_cap,
		 src->nthreads)) < 0)
		return r;
	most = acc->nprocs + src->nprocs;
	if (acc->nthreads + src->nthreads > most)
		most = acc->nthreads + src->nthreads;
	if (most >= UINT32_MAX / 2)
		return -E2BIG;
	/* Load factor at most one half keeps probe chains short. */
	for (size = 16; size < 2 * most; size *= 2)
		;
	if ((ix.slot = malloc(size * sizeof(*ix.slot))) == NULL)
		return -ENOMEM;
	ix.mask = size - 1;
	if ((r = window_grow_cpus(acc, src->cpu_span)) < 0) {
		free(ix.slot);
		return r;
	}

	if (acc->hz == 0)
		acc->hz = src->hz;
	acc->interval_ms = src->interval_ms;
	acc->mono_end_ns = src->mono_end_ns;
	acc->boot_end_ns = src->boot_end_ns;
	acc->wall_end_ns = src->wall_end_ns;
	system_merge(acc, src);
	tasks_merge(&ix, acc->procs, &acc->nprocs, src->procs, src->nprocs);
	tasks_merge(&ix, acc->threads, &acc->nthreads, src->threads,
	    src->nthreads);
	free(ix.slot);
	return parts_merge(acc, src);
}

void
window_drop_threads(struct window *w)
{
	unsigned i;

	free(w->threads);
	w->threads = NULL;
	w->nthreads = w->threads_cap = 0;
	for (i = 0; i < WPART__MAX; i++)
		if (w->part[i] != NULL && window_parts[i]->drop_threads)
			window_parts[i]->drop_threads(w->part[i]);
}
