/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity-weighted CPU as plain arithmetic (no I/O): the approximation
 * from a window's per-CPU figures, the reduction of a BPF drain into rows
 * per process and per thread, roll-up merges, and one task's figure.
 * doc/metrics.md, "Capacity-weighted CPU", has the formulas.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "wcpu/wcpu.h"
#include "window/window.h"

static const char *const src_names[WCPU_SRC__MAX] = { "", "bpf", "approx" };

const char *
wcpu_src_name(unsigned src)
{
	return src < WCPU_SRC__MAX ? src_names[src] : "?";
}

/* cur/max × 1024, rounded down, as the kernel's arch_freq_scale is made
 * from a cpufreq policy (arch_topology.c). */
uint32_t
wcpu_fscale(double cur_khz, int64_t max_khz)
{
	double v;

	if (max_khz <= 0 || !(cur_khz >= 0))
		return WCPU_SCALE;
	v = cur_khz * WCPU_SCALE / (double)max_khz;
	/* a current above the maximum (a bogus or turbo-less max) reads as
	 * the maximum: the products in the kernel and the roll-ups stay far
	 * from 2^64 */
	return v >= (double)WCPU_SCALE ? WCPU_SCALE : (uint32_t)v;
}

/*
 * Each CPU's busy ticks over the window, weighted by its capacity and its
 * mean frequency scale over the window's samples. A CPU without
 * cpu_capacity counts as 1024, one without a current or maximum frequency
 * at scale 1024; both are counted, not hidden.
 */
void
wcpu_approx_add(struct window_wcpu *p, const struct window *w)
{
	unsigned i;

	for (i = 0; i < w->cpu_span; i++) {
		const struct window_cpu *c = &w->cpu[i];
		uint64_t busy = cpu_times_busy(&c->d), cap, fs;

		if (busy == 0)
			continue;
		cap = c->capacity >= 0 ? (uint64_t)c->capacity : WCPU_SCALE;
		if (c->capacity < 0)
			p->nocap_ticks += busy;
		if (c->cur_khz.n && c->max_khz > 0) {
			fs = wcpu_fscale(gauge_avg(&c->cur_khz), c->max_khz);
		} else {
			fs = WCPU_SCALE;
			p->nofreq_ticks += busy;
		}
		p->busy_ticks += busy;
		p->wbusy += busy * cap * fs;
	}
	p->windows++;
}

/*
 * Each CPU's scales as the window last read them, for the kernel's
 * weighting (sched_scale): capacity, and the last frequency over the
 * maximum × 1024; 0 where unknown. Returns the CPUs filled.
 */
unsigned
wcpu_scales(const struct window *w, uint32_t *ret_cap, uint32_t *ret_freq,
    unsigned max)
{
	unsigned i;

	for (i = 0; i < w->cpu_span && i < max; i++) {
		const struct window_cpu *c = &w->cpu[i];

		ret_cap[i] = c->capacity > 0 ? (uint32_t)c->capacity : 0;
		ret_freq[i] = c->cur_khz.n && c->max_khz > 0 ?
		    wcpu_fscale(c->cur_khz.last, c->max_khz) :
		    0;
	}
	return i;
}

/* Σ busy × capacity × fscale / (Σ busy × 2^20); 1 when nothing was busy. */
double
wcpu_approx_factor(const struct window_wcpu *p)
{
	if (p == NULL || p->busy_ticks == 0)
		return 1.0;
	return (double)p->wbusy / ((double)p->busy_ticks * WCPU_ONE);
}

static int
row_cmp(const void *a, const void *b)
{
	const struct wcpu_row *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->starttime != y->starttime)
		return x->starttime < y->starttime ? -1 : 1;
	return 0;
}

static int
row_busier(const void *a, const void *b)
{
	const struct wcpu_row *x = a, *y = b;

	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return row_cmp(a, b);
}

/*
 * rows[0..n) ∪ add[0..nadd) into *rows: one row per (id, starttime),
 * sums added, at most max kept (by on-CPU time; the others counted in
 * *cut, their time stays in the part's totals), sorted by key.
 */
static int
rows_fold(struct wcpu_row **rows, size_t *n, const struct wcpu_row *add,
    size_t nadd, size_t max, uint32_t *cut)
{
	struct wcpu_row *v;
	size_t i, k, tot = *n + nadd;

	if (nadd == 0)
		return 0;
	if ((v = realloc(*rows, tot * sizeof(*v))) == NULL)
		return -ENOMEM;
	memcpy(v + *n, add, nadd * sizeof(*v));
	qsort(v, tot, sizeof(*v), row_cmp);
	for (i = 0, k = 0; i < tot; i++) {
		if (k && row_cmp(&v[k - 1], &v[i]) == 0) {
			v[k - 1].oncpu_ns += v[i].oncpu_ns;
			v[k - 1].wtd_ns += v[i].wtd_ns;
		} else {
			v[k++] = v[i];
		}
	}
	if (k > max) {
		qsort(v, k, sizeof(*v), row_busier);
		*cut += (uint32_t)(k - max);
		k = max;
		qsort(v, k, sizeof(*v), row_cmp);
	}
	*rows = v;
	*n = k;
	return 0;
}

/*
 * One drain into p: a thread row per (tid, start), a process row per
 * (tgid, leader start) with its exited threads' time. The platform
 * loader's read-only object (bpf/aosp) weighs nothing: its drains add no
 * rows, so its windows use the approximation. nocap_ns and nofreq_ns are
 * this drain's Δ of the kernel's counters.
 */
int
wcpu_bpf_add(struct window_wcpu *p, const struct bpf_sched_batch *b,
    unsigned hz, uint64_t nocap_ns, uint64_t nofreq_ns)
{
	struct wcpu_row *pr = NULL, *tr = NULL;
	size_t i, np = 0;
	int r = -ENOMEM;

	if (b == NULL || b->diff)
		return 0;
	if ((b->ntids + b->nprocs &&
		(pr = calloc(b->ntids + b->nprocs, sizeof(*pr))) == NULL) ||
	    (b->ntids && (tr = calloc(b->ntids, sizeof(*tr))) == NULL))
		goto out;
	for (i = 0; i < b->ntids; i++) {
		const struct vbpf_tid *t = &b->tids[i];

		tr[i] = (struct wcpu_row){ .id = t->tid,
			.tgid = t->tgid,
			.starttime = ns_to_clock_t(t->start_ns, hz),
			.oncpu_ns = t->oncpu_ns,
			.wtd_ns = t->wtd_ns };
		pr[np++] = (struct wcpu_row){ .id = t->tgid,
			.tgid = t->tgid,
			.starttime = ns_to_clock_t(t->leader_ns, hz),
			.oncpu_ns = t->oncpu_ns,
			.wtd_ns = t->wtd_ns };
		p->oncpu_ns += t->oncpu_ns;
		p->wtd_ns += t->wtd_ns;
	}
	for (i = 0; i < b->nprocs; i++) {
		const struct vbpf_proc *q = &b->procs[i];

		if (q->exited_ns == 0 && q->exited_wtd_ns == 0)
			continue;
		pr[np++] = (struct wcpu_row){ .id = q->tgid,
			.tgid = q->tgid,
			.starttime = ns_to_clock_t(q->start_ns, hz),
			.oncpu_ns = q->exited_ns,
			.wtd_ns = q->exited_wtd_ns };
		p->oncpu_ns += q->exited_ns;
		p->wtd_ns += q->exited_wtd_ns;
	}
	if ((r = rows_fold(&p->procs, &p->nprocs, pr, np, WCPU_PROCS_MAX,
		 &p->procs_cut)) < 0 ||
	    (r = rows_fold(&p->threads, &p->nthreads, tr, b->ntids,
		 WCPU_THREADS_MAX, &p->threads_cut)) < 0)
		goto out;
	p->nocap_ns += nocap_ns;
	p->nofreq_ns += nofreq_ns;
	p->drains++;
out:
	free(pr);
	free(tr);
	return r;
}

const struct wcpu_row *
wcpu_find(const struct window_wcpu *p, bool thread, int32_t id,
    uint64_t starttime)
{
	struct wcpu_row key = { .id = id, .starttime = starttime };
	size_t n;

	if (p == NULL || (n = thread ? p->nthreads : p->nprocs) == 0)
		return NULL; /* an empty list may have no array at all */
	return bsearch(&key, thread ? p->threads : p->procs, n, sizeof(key),
	    row_cmp);
}

/*
 * A task's ticks in a window, weighted: by its own BPF ratio (Σ weighted
 * ns / Σ ns of its slices) when the window has its row, else by the
 * window's busy-weighted scale. *ret_src says which (WCPU_SRC_NONE and
 * 0 without the part).
 */
double
wcpu_task(const struct window_wcpu *p, bool thread, int32_t id,
    uint64_t starttime, uint64_t ticks, unsigned *ret_src)
{
	const struct wcpu_row *r;

	if (p == NULL) {
		*ret_src = WCPU_SRC_NONE;
		return 0;
	}
	if ((r = wcpu_find(p, thread, id, starttime)) != NULL &&
	    r->oncpu_ns > 0) {
		*ret_src = WCPU_SRC_BPF;
		return (double)ticks * (double)r->wtd_ns / (double)r->oncpu_ns;
	}
	*ret_src = WCPU_SRC_APPROX;
	return (double)ticks * wcpu_approx_factor(p);
}

/* Keep the rows of v[0..*n) whose key is marked in keep; the others are
 * counted in *cut (their time stays in the part's totals). */
static void
rows_keep(struct wcpu_row *v, size_t *n, const uint8_t *keep, uint32_t *cut)
{
	size_t i, k;

	for (i = k = 0; i < *n; i++)
		if (keep[i])
			v[k++] = v[i];
	*cut += (uint32_t)(*n - k);
	*n = k;
}

/* Mark in keep p's row (thread or process) of key (id, st), if any. */
static void
row_mark(const struct window_wcpu *p, bool thread, int32_t id, uint64_t st,
    uint8_t *keep)
{
	const struct wcpu_row *r = wcpu_find(p, thread, id, st);

	if (r != NULL)
		keep[r - (thread ? p->threads : p->procs)] = 1;
}

/*
 * The rows of the window's BPF part only (b: its sched part, from the same
 * drains): a task the BPF part folded into its "other" row (bpf_procs,
 * bpf_threads) leaves its wcpu row too, counted in procs_cut / threads_cut,
 * and its ticks are weighted by the approximation. So the part's rows are
 * named among the BPF rows when stored (doc/storage.md, "window_wcpu")
 * whatever the bounds: called at each window's close and again after a
 * roll-up's merges, which bound both parts' rows anew. Without b's rows
 * (BPF off, a part that never held any, a drain whose rows found no
 * memory) or memory, nothing changes; a roll-up that merges such a window
 * with others that drained cuts the rows it kept (counted, weighted by
 * the approximation from then on).
 */
void
wcpu_keep_bpf_rows(struct window_wcpu *p, const struct window_bpf *b)
{
	uint8_t *kp, *kt;
	size_t i;

	if (p == NULL || b == NULL || b->head_only || b->drains == 0 ||
	    p->drains == 0)
		return;
	kp = calloc(p->nprocs + 1, 1);
	kt = calloc(p->nthreads + 1, 1);
	if (kp == NULL || kt == NULL) {
		free(kp);
		free(kt);
		return;
	}
	for (i = 0; i < b->nprocs; i++)
		if (b->proc[i].tgid != -1)
			row_mark(p, false, b->proc[i].tgid,
			    b->proc[i].starttime, kp);
	for (i = 0; i < b->nthreads; i++)
		if (b->thread[i].tid != -1)
			row_mark(p, true, b->thread[i].tid,
			    b->thread[i].starttime, kt);
	rows_keep(p->procs, &p->nprocs, kp, &p->procs_cut);
	rows_keep(p->threads, &p->nthreads, kt, &p->threads_cut);
	free(kp);
	free(kt);
}

/* A roll-up: src (a later window) into acc; sums add, rows by key. */
int
wcpu_merge_into(struct window_wcpu *acc, const struct window_wcpu *src)
{
	int r;

	acc->busy_ticks += src->busy_ticks;
	acc->wbusy += src->wbusy;
	acc->nocap_ticks += src->nocap_ticks;
	acc->nofreq_ticks += src->nofreq_ticks;
	acc->windows += src->windows;
	acc->drains += src->drains;
	acc->oncpu_ns += src->oncpu_ns;
	acc->wtd_ns += src->wtd_ns;
	acc->nocap_ns += src->nocap_ns;
	acc->nofreq_ns += src->nofreq_ns;
	acc->procs_cut += src->procs_cut;
	acc->threads_cut += src->threads_cut;
	if ((r = rows_fold(&acc->procs, &acc->nprocs, src->procs, src->nprocs,
		 WCPU_PROCS_MAX, &acc->procs_cut)) < 0)
		return r;
	return rows_fold(&acc->threads, &acc->nthreads, src->threads,
	    src->nthreads, WCPU_THREADS_MAX, &acc->threads_cut);
}
