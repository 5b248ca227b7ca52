/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF part of a window, as plain arithmetic: a drained side reduced to
 * the uids and processes a window keeps (the rest summed into "other"
 * entries, so no total shrinks), two windows' parts merged for roll-ups,
 * run-queue quantiles from the log2 histogram, and the dump text. No I/O:
 * sched.c drains the kernel, this file only counts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "sched/sched.h"
#include "window/window.h"

const char *
vbpf_state_name(unsigned st)
{
	static const char *const names[VBPF__MAX] = {
		[VBPF_UNKNOWN] = "unknown",
		[VBPF_ON_LOADED] = "loaded",
		[VBPF_ON_REUSED] = "reused",
		[VBPF_ON_PINNED] = "pinned",
		[VBPF_OFF_DISABLED] = "off_disabled",
		[VBPF_OFF_UNSUPPORTED] = "off_unsupported",
		[VBPF_OFF_NO_BTF] = "off_no_btf",
		[VBPF_OFF_NO_BPFFS] = "off_no_bpffs",
		[VBPF_OFF_NO_PRIV] = "off_no_priv",
		[VBPF_OFF_VERIFIER] = "off_verifier",
		[VBPF_OFF_NO_PINS] = "off_no_pins",
		[VBPF_OFF_ERROR] = "off_error",
		[VBPF_OFF_BUSY] = "off_busy",
	};

	return st < VBPF__MAX ? names[st] : "?";
}

const char *
vbpf_rq_name(unsigned rq)
{
	static const char *const names[] = {
		[VBPF_RQ_UNKNOWN] = "",
		[VBPF_RQ_WAKEUP] = "wakeup",
		[VBPF_RQ_SCHED_INFO] = "sched_info",
		[VBPF_RQ_MIXED] = "mixed",
	};

	return rq < sizeof(names) / sizeof(names[0]) ? names[rq] : "?";
}

/* rq_source of two windows' drains together: a part with no drain says
 * nothing; one whose drains' rule is not known makes the sum's unknown */
static uint32_t
rq_join(uint32_t a, uint32_t adrains, uint32_t b, uint32_t bdrains)
{
	if (bdrains == 0 || a == b)
		return a;
	if (adrains == 0)
		return b;
	if (a == VBPF_RQ_UNKNOWN || b == VBPF_RQ_UNKNOWN)
		return VBPF_RQ_UNKNOWN;
	return VBPF_RQ_MIXED;
}

bool
vbpf_state_on(unsigned st)
{
	return st == VBPF_ON_LOADED || st == VBPF_ON_REUSED ||
	    st == VBPF_ON_PINNED;
}

/* Index i of window_bpf.prog_*: the programs of bpf/sched/sched.bpf.c. */
const char *
vbpf_prog_name(unsigned i)
{
	static const char *const names[VITALS_BPF_PROGS] = {
		"sched_switch",
		"sched_wakeup",
		"sched_wakeup_new",
		"sched_process_free",
	};

	return i < VITALS_BPF_PROGS ? names[i] : "?";
}

/* ---------------------------------------------------------------- rows */

/* qsort for arrays that may be empty, and then NULL (qsort's base must
 * not be, whatever the count) */
static void
sort_n(void *base, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static size_t
bound(uint32_t v, uint32_t def)
{
	return v ? v : def;
}

/* One set of run-queue figures into another. */
static void
hist_add(uint64_t *ns, uint64_t *count, uint32_t hist[VITALS_BPF_RQ_SLOTS],
    uint64_t sns, uint64_t scount, const uint32_t shist[VITALS_BPF_RQ_SLOTS])
{
	unsigned k;

	*ns += sns;
	*count += scount;
	/* saturated, never wrapped: a long range of a busy uid can pass
	 * 2^32 waits in a slot (its count, 64-bit, stays exact) */
	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		hist[k] = shist[k] > UINT32_MAX - hist[k] ? UINT32_MAX :
							    hist[k] + shist[k];
}

static void
uid_add(struct window_bpf_uid *a, const struct window_bpf_uid *s)
{
	a->oncpu_ns += s->oncpu_ns;
	a->exited_ns += s->exited_ns;
	a->exited_tasks += s->exited_tasks;
	hist_add(&a->rq_ns, &a->rq_count, a->rq_hist, s->rq_ns, s->rq_count,
	    s->rq_hist);
}

static int
uid_by_key(const void *a, const void *b)
{
	const struct window_bpf_uid *x = a, *y = b;

	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static int
uid_by_cpu(const void *a, const void *b)
{
	const struct window_bpf_uid *x = a, *y = b;

	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return uid_by_key(a, b);
}

/*
 * The kept rows' array cut to their count: it was allocated with room for
 * every drained entry (a uid row per thread, 2,100 at 2,100 tasks) and
 * settles to far fewer, then stays in the window (and the ring) for its
 * life. A failed realloc keeps the larger array.
 */
static void *
rows_fit(void *arr, size_t keep, size_t sz)
{
	void *p = realloc(arr, keep * sz);

	return p ? p : arr;
}

/*
 * Sum duplicates in arr[0..n) (arr: malloc()ed, handed over), keep the
 * biggest up to the bound, the rest into wb->uid_other; arr becomes wb's
 * rows, sorted by uid (the order carries no meaning). Cannot fail.
 */
static void
uids_settle(struct window_bpf *wb, struct window_bpf_uid *arr, size_t n,
    uint32_t folded)
{
	size_t i, m = 0, keep = bound(wb->max_procs, VITALS_BPF_PROCS_DEF);

	sort_n(arr, n, sizeof(*arr), uid_by_key);
	for (i = 0; i < n; i++) {
		if (m > 0 && arr[m - 1].uid == arr[i].uid)
			uid_add(&arr[m - 1], &arr[i]);
		else
			arr[m++] = arr[i];
	}
	if (m > keep)
		sort_n(arr, m, sizeof(*arr), uid_by_cpu);
	else
		keep = m;
	wb->uids_other += folded;
	for (i = keep; i < m; i++) {
		uid_add(&wb->uid_other, &arr[i]);
		wb->uids_other++;
	}
	wb->uid_other.uid = UINT32_MAX; /* (uid_t)-1: never a uid */
	sort_n(arr, keep, sizeof(*arr), uid_by_key);
	free(wb->uid);
	wb->uid = keep ? rows_fit(arr, keep, sizeof(*arr)) : NULL;
	wb->nuids = (uint32_t)keep;
	if (!keep)
		free(arr);
}

static void
proc_add(struct window_bpf_proc *a, const struct window_bpf_proc *s)
{
	a->flags |= s->flags;
	a->oncpu_ns += s->oncpu_ns;
	hist_add(&a->rq_ns, &a->rq_count, a->rq_hist, s->rq_ns, s->rq_count,
	    s->rq_hist);
}

static int
proc_by_key(const void *a, const void *b)
{
	const struct window_bpf_proc *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

static int
proc_by_cpu(const void *a, const void *b)
{
	const struct window_bpf_proc *x = a, *y = b;

	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return proc_by_key(a, b);
}

static int
proc_by_wait(const void *a, const void *b)
{
	const struct window_bpf_proc *x = a, *y = b;

	if (x->rq_ns != y->rq_ns)
		return x->rq_ns > y->rq_ns ? -1 : 1;
	return proc_by_key(a, b);
}

/*
 * Every process while they fit the bound; past it, the busiest half by
 * on-CPU time, then the longest waiters among the rest, so a process
 * starved on the run queue shows up even when it hardly ran. arr as for
 * uids_settle.
 */
static void
procs_settle(struct window_bpf *wb, struct window_bpf_proc *arr, size_t n,
    uint32_t folded)
{
	size_t i, m = 0, keep = bound(wb->max_procs, VITALS_BPF_PROCS_DEF);

	sort_n(arr, n, sizeof(*arr), proc_by_key);
	for (i = 0; i < n; i++) {
		if (m > 0 && proc_by_key(&arr[m - 1], &arr[i]) == 0)
			proc_add(&arr[m - 1], &arr[i]);
		else
			arr[m++] = arr[i];
	}
	if (m > keep) {
		sort_n(arr, m, sizeof(*arr), proc_by_cpu);
		sort_n(arr + keep / 2, m - keep / 2, sizeof(*arr),
		    proc_by_wait);
	} else {
		keep = m;
	}
	wb->procs_other += folded;
	for (i = keep; i < m; i++) {
		proc_add(&wb->proc_other, &arr[i]);
		wb->procs_other++;
	}
	wb->proc_other.tgid = -1;
	wb->proc_other.flags = 0;
	sort_n(arr, keep, sizeof(*arr), proc_by_key);
	free(wb->proc);
	wb->proc = keep ? rows_fit(arr, keep, sizeof(*arr)) : NULL;
	wb->nprocs = (uint32_t)keep;
	if (!keep)
		free(arr);
}

static void
thread_add(struct window_bpf_thread *a, const struct window_bpf_thread *s)
{
	a->oncpu_ns += s->oncpu_ns;
	hist_add(&a->rq_ns, &a->rq_count, a->rq_hist, s->rq_ns, s->rq_count,
	    s->rq_hist);
	if (s->uid != UINT32_MAX)
		a->uid = s->uid; /* the later one */
}

static int
thread_by_key(const void *a, const void *b)
{
	const struct window_bpf_thread *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

static int
thread_by_cpu(const void *a, const void *b)
{
	const struct window_bpf_thread *x = a, *y = b;

	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	return thread_by_key(a, b);
}

static int
thread_by_wait(const void *a, const void *b)
{
	const struct window_bpf_thread *x = a, *y = b;

	if (x->rq_ns != y->rq_ns)
		return x->rq_ns > y->rq_ns ? -1 : 1;
	return thread_by_key(a, b);
}

/* The "other" thread row's key (its figures are left as they are). */
static void
other_thread_key(struct window_bpf_thread *t)
{
	t->tid = t->tgid = -1;
	t->uid = UINT32_MAX;
}

/* As procs_settle, for threads (a thread entry per uid it ran as is one
 * row: the uid it ran as last). */
static void
threads_settle(struct window_bpf *wb, struct window_bpf_thread *arr, size_t n,
    uint32_t folded)
{
	size_t i, m = 0, keep = bound(wb->max_threads, VITALS_BPF_THREADS_DEF);

	sort_n(arr, n, sizeof(*arr), thread_by_key);
	for (i = 0; i < n; i++) {
		if (m > 0 && thread_by_key(&arr[m - 1], &arr[i]) == 0)
			thread_add(&arr[m - 1], &arr[i]);
		else
			arr[m++] = arr[i];
	}
	if (m > keep) {
		sort_n(arr, m, sizeof(*arr), thread_by_cpu);
		sort_n(arr + keep / 2, m - keep / 2, sizeof(*arr),
		    thread_by_wait);
	} else {
		keep = m;
	}
	wb->threads_other += folded;
	for (i = keep; i < m; i++) {
		thread_add(&wb->thread_other, &arr[i]);
		wb->threads_other++;
	}
	other_thread_key(&wb->thread_other);
	sort_n(arr, keep, sizeof(*arr), thread_by_key);
	free(wb->thread);
	wb->thread = keep ? rows_fit(arr, keep, sizeof(*arr)) : NULL;
	wb->nthreads = (uint32_t)keep;
	if (!keep)
		free(arr);
}

/* Scratch for settling: the kept rows and room for more. */
struct rows {
	struct window_bpf_uid *u;
	struct window_bpf_proc *p;
	struct window_bpf_thread *t;
	size_t nu, np, nt;
};

static int
rows_start(struct rows *r, const struct window_bpf *wb, size_t mu, size_t mp,
    size_t mt)
{
	memset(r, 0, sizeof(*r));
	r->u = malloc((wb->nuids + mu + 1) * sizeof(*r->u));
	r->p = malloc((wb->nprocs + mp + 1) * sizeof(*r->p));
	r->t = malloc((wb->nthreads + mt + 1) * sizeof(*r->t));
	if (r->u == NULL || r->p == NULL || r->t == NULL) {
		free(r->u);
		free(r->p);
		free(r->t);
		return -ENOMEM;
	}
	if (wb->nuids)
		memcpy(r->u, wb->uid, wb->nuids * sizeof(*r->u));
	if (wb->nprocs)
		memcpy(r->p, wb->proc, wb->nprocs * sizeof(*r->p));
	if (wb->nthreads)
		memcpy(r->t, wb->thread, wb->nthreads * sizeof(*r->t));
	r->nu = wb->nuids;
	r->np = wb->nprocs;
	r->nt = wb->nthreads;
	return 0;
}

/* ------------------------------------------------------------- public */

/*
 * Add one drained side to wb: per uid, the time of its thread entries
 * plus what its exited threads and overflows left in its uid entry; per
 * process, the time of its threads' entries plus its exited threads' and
 * its run-queue figures; per thread, its entry. On -ENOMEM wb is
 * unchanged (the caller counts the drain as failed).
 */
int
window_bpf_add(struct window_bpf *wb, const struct bpf_sched_batch *b,
    unsigned hz)
{
	struct rows r;
	size_t i;

	if (wb->head_only)
		return -EINVAL; /* no room for rows: window_sched_make() */
	if (rows_start(&r, wb, b->nuids + b->ntids, b->nprocs + b->ntids,
		b->ntids) < 0)
		return -ENOMEM;
	for (i = 0; i < b->nuids; i++) {
		const struct vbpf_uid *u = &b->uids[i];
		struct window_bpf_uid *w = &r.u[r.nu++];

		memset(w, 0, sizeof(*w));
		w->uid = u->uid;
		w->oncpu_ns = u->exited_ns + u->overflow_ns;
		w->exited_ns = u->exited_ns;
		w->exited_tasks = u->exited_tasks;
		w->rq_ns = u->exited_rq_ns;
		w->rq_count = u->exited_rq_count;
		memcpy(w->rq_hist, u->exited_rq_hist, sizeof(w->rq_hist));
		wb->oncpu_ns += w->oncpu_ns;
		wb->exited_ns += w->exited_ns;
		wb->exited_tasks += w->exited_tasks;
	}
	for (i = 0; i < b->nprocs; i++) {
		const struct vbpf_proc *p = &b->procs[i];
		struct window_bpf_proc *w = &r.p[r.np++];

		memset(w, 0, sizeof(*w));
		w->tgid = p->tgid;
		w->flags = p->flags & WBPF_PROC_EXITED;
		w->starttime = ns_to_clock_t(p->start_ns, hz);
		w->oncpu_ns = p->exited_ns;
		w->rq_ns = p->rq_ns;
		w->rq_count = p->rq_count;
		memcpy(w->rq_hist, p->rq_hist, sizeof(w->rq_hist));
		wb->rq_ns += p->rq_ns;
		wb->rq_count += p->rq_count;
	}
	for (i = 0; i < b->ntids; i++) {
		const struct vbpf_tid *t = &b->tids[i];
		struct window_bpf_uid *u = &r.u[r.nu++];
		struct window_bpf_proc *p = &r.p[r.np++];
		struct window_bpf_thread *h = &r.t[r.nt++];

		memset(u, 0, sizeof(*u));
		u->uid = t->uid;
		u->oncpu_ns = t->oncpu_ns;
		u->rq_ns = t->rq_ns;
		u->rq_count = t->rq_count;
		memcpy(u->rq_hist, t->rq_hist, sizeof(u->rq_hist));
		memset(p, 0, sizeof(*p));
		p->tgid = t->tgid;
		p->starttime = ns_to_clock_t(t->leader_ns, hz);
		p->oncpu_ns = t->oncpu_ns;
		memset(h, 0, sizeof(*h));
		h->tid = t->tid;
		h->tgid = t->tgid;
		h->uid = t->uid;
		h->starttime = ns_to_clock_t(t->start_ns, hz);
		h->oncpu_ns = t->oncpu_ns;
		h->rq_ns = t->rq_ns;
		h->rq_count = t->rq_count;
		memcpy(h->rq_hist, t->rq_hist, sizeof(h->rq_hist));
		wb->oncpu_ns += t->oncpu_ns;
	}
	uids_settle(wb, r.u, r.nu, 0);
	procs_settle(wb, r.p, r.np, 0);
	threads_settle(wb, r.t, r.nt, 0);
	return 0;
}

/*
 * The array slots' figures of one drain into wb (layout 11): the side's
 * count past cap is the number of threads the full side sent to the hash
 * (sched.bpf.c counts on after the last slot).
 */
void
window_bpf_slots(struct window_bpf *wb, const struct bpf_sched_batch *b,
    uint32_t cap)
{
	if (cap == 0)
		return;
	wb->slot_cap = cap;
	wb->slot_rows += b->slots;
	wb->slots_taken += b->slot_count < cap ? b->slot_count : cap;
	wb->slot_hash_rows += b->ntids - b->slots;
	if (b->slot_count >= cap) {
		wb->slot_full_drains++;
		wb->slot_overflow += b->slot_count - cap;
	}
}

/*
 * Fold src (the later window) into acc. Counters add; the state is the
 * later one's (a window that did not report keeps the earlier state). On
 * -ENOMEM acc is unchanged: the rows' room is taken before any figure
 * changes.
 */
int
window_bpf_merge(struct window_bpf *acc, const struct window_bpf *src)
{
	struct rows r;
	unsigned i;

	if (rows_start(&r, acc, src->nuids, src->nprocs, src->nthreads) < 0)
		return -ENOMEM;
	if (src->nuids)
		memcpy(r.u + r.nu, src->uid, src->nuids * sizeof(*r.u));
	if (src->nprocs)
		memcpy(r.p + r.np, src->proc, src->nprocs * sizeof(*r.p));
	if (src->nthreads)
		memcpy(r.t + r.nt, src->thread, src->nthreads * sizeof(*r.t));
	r.nu += src->nuids;
	r.np += src->nprocs;
	r.nt += src->nthreads;
	if (src->state != VBPF_UNKNOWN) {
		acc->state = src->state;
		acc->err = src->err;
	}
	acc->rq_source = rq_join(acc->rq_source, acc->drains, src->rq_source,
	    src->drains);
	acc->drains += src->drains;
	acc->drain_fail += src->drain_fail;
	acc->counter_regressions += src->counter_regressions;
	acc->drain_ns += src->drain_ns;
	acc->entries += src->entries;
	acc->oncpu_ns += src->oncpu_ns;
	acc->exited_ns += src->exited_ns;
	acc->exited_tasks += src->exited_tasks;
	acc->rq_ns += src->rq_ns;
	acc->rq_count += src->rq_count;
	acc->pre_ns += src->pre_ns;
	acc->switches += src->switches;
	acc->no_slice += src->no_slice;
	acc->wakeups += src->wakeups;
	acc->lost_ns += src->lost_ns;
	acc->full_tid += src->full_tid;
	acc->full_proc += src->full_proc;
	acc->full_uid += src->full_uid;
	acc->no_storage += src->no_storage;
	acc->diff_drains += src->diff_drains;
	acc->unattributed_ns += src->unattributed_ns;
	acc->evicted += src->evicted;
	acc->recreated += src->recreated;
	acc->retired += src->retired;
	acc->rq_samples += src->rq_samples;
	acc->thr_exited += src->thr_exited;
	acc->procs_exited += src->procs_exited;
	acc->oncpu_total += src->oncpu_total;
	acc->rq_notid += src->rq_notid;
	acc->slot_rows += src->slot_rows;
	acc->slots_taken += src->slots_taken;
	acc->slot_hash_rows += src->slot_hash_rows;
	acc->slot_overflow += src->slot_overflow;
	acc->slot_full_drains += src->slot_full_drains;
	if (src->slot_cap > acc->slot_cap)
		acc->slot_cap = src->slot_cap;

	if (src->max_procs > acc->max_procs)
		acc->max_procs = src->max_procs;
	if (src->max_threads > acc->max_threads)
		acc->max_threads = src->max_threads;
	/* run counts of a part without stats are unknown, not zero */
	acc->stats = acc->stats && src->stats;
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		acc->prog_runs[i] += src->prog_runs[i];
		acc->prog_ns[i] += src->prog_ns[i];
	}
	uid_add(&acc->uid_other, &src->uid_other);
	uids_settle(acc, r.u, r.nu, src->uids_other);
	proc_add(&acc->proc_other, &src->proc_other);
	procs_settle(acc, r.p, r.np, src->procs_other);
	thread_add(&acc->thread_other, &src->thread_other);
	threads_settle(acc, r.t, r.nt, src->threads_other);
	return 0;
}

void
window_bpf_release(struct window_bpf *wb)
{
	free(wb->uid);
	free(wb->proc);
	free(wb->thread);
	wb->uid = NULL;
	wb->proc = NULL;
	wb->thread = NULL;
	wb->nuids = wb->nprocs = wb->nthreads = 0;
}

/* Room for more rows, zeroed, for a reader that fills them
 * (store_sched.c). */
int
window_bpf_reserve(struct window_bpf *wb, size_t nu, size_t np, size_t nt)
{
	void *q;

	if (nu) {
		if ((q = realloc(wb->uid,
			 (wb->nuids + nu) * sizeof(*wb->uid))) == NULL)
			return -ENOMEM;
		wb->uid = q;
		memset(wb->uid + wb->nuids, 0, nu * sizeof(*wb->uid));
	}
	if (np) {
		if ((q = realloc(wb->proc,
			 (wb->nprocs + np) * sizeof(*wb->proc))) == NULL)
			return -ENOMEM;
		wb->proc = q;
		memset(wb->proc + wb->nprocs, 0, np * sizeof(*wb->proc));
	}
	if (nt) {
		if ((q = realloc(wb->thread,
			 (wb->nthreads + nt) * sizeof(*wb->thread))) == NULL)
			return -ENOMEM;
		wb->thread = q;
		memset(wb->thread + wb->nthreads, 0, nt * sizeof(*wb->thread));
	}
	return 0;
}

/*
 * The upper edge, in ns, of the histogram slot holding quantile q (0..1]
 * of the waits: "p99 ≤ this". 0 without waits; UINT64_MAX when the
 * quantile falls in the open last slot.
 */
uint64_t
window_bpf_rq_quantile_ns(const uint32_t hist[VITALS_BPF_RQ_SLOTS], double q)
{
	uint64_t total = 0, acc = 0, want;
	unsigned k;

	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		total += hist[k];
	if (total == 0)
		return 0;
	want = (uint64_t)(q * (double)total + 0.999999);
	if (want == 0)
		want = 1;
	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++) {
		acc += hist[k];
		if (acc >= want)
			break;
	}
	if (k >= VITALS_BPF_RQ_SLOTS - 1)
		return UINT64_MAX;
	return (2ULL << k) * NSEC_PER_USEC;
}

/* ---------------------------------------------------------------- dump */

static double
ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void
dump_quantile(struct vbuf *out, const char *label, uint64_t ns)
{
	if (ns == UINT64_MAX)
		vbuf_printf(out, " %s > %llu ms", label,
		    (unsigned long long)((1ULL << (VITALS_BPF_RQ_SLOTS - 1)) /
			1000));
	else if (ns >= NSEC_PER_MSEC)
		vbuf_printf(out, " %s <= %llu ms", label,
		    (unsigned long long)(ns / NSEC_PER_MSEC));
	else
		vbuf_printf(out, " %s <= %llu us", label,
		    (unsigned long long)(ns / NSEC_PER_USEC));
}

static const char *
proc_label(const struct window *w, const struct window_bpf_proc *p)
{
	size_t i;

	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].id == p->tgid &&
		    w->procs[i].starttime == p->starttime)
			return window_task_name(&w->procs[i]);
	return "";
}

static int
cmp_proc_cpu_ptr(const void *a, const void *b)
{
	return proc_by_cpu(*(const struct window_bpf_proc *const *)a,
	    *(const struct window_bpf_proc *const *)b);
}

static int
cmp_uid_cpu_ptr(const void *a, const void *b)
{
	return uid_by_cpu(*(const struct window_bpf_uid *const *)a,
	    *(const struct window_bpf_uid *const *)b);
}

/* The BPF lines of a window dump (dump.c). */
static void
sched_part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_bpf *b = window_sched(w);
	const struct window_bpf_proc **pp = NULL;
	const struct window_bpf_uid **up = NULL;
	unsigned i, n;

	if (b->state == VBPF_UNKNOWN)
		return;
	vbuf_printf(out, "bpf: %s", vbpf_state_name(b->state));
	if (b->err)
		vbuf_printf(out, " (%s)", strerror(-b->err));
	if (!vbpf_state_on(b->state) && b->drains == 0) {
		vbuf_printf(out, ", procfs only\n");
		return;
	}
	vbuf_printf(out,
	    "; on-CPU %.1f ms (exited threads %.1f ms, %llu "
	    "threads); run-queue %llu waits, %.1f ms\n",
	    ms(b->oncpu_ns), ms(b->exited_ns),
	    (unsigned long long)b->exited_tasks,
	    (unsigned long long)b->rq_count, ms(b->rq_ns));
	vbuf_printf(out,
	    "bpf health: %u drains (%u failed, %.2f ms), %u "
	    "counter regressions, %llu entries; switches %llu, no slice %llu, wakeups %llu; map full: "
	    "tid %llu proc %llu uid %llu, lost %.3f ms, no storage %llu",
	    b->drains, b->drain_fail, ms(b->drain_ns), b->counter_regressions,
	    (unsigned long long)b->entries, (unsigned long long)b->switches,
	    (unsigned long long)b->no_slice, (unsigned long long)b->wakeups,
	    (unsigned long long)b->full_tid, (unsigned long long)b->full_proc,
	    (unsigned long long)b->full_uid, ms(b->lost_ns),
	    (unsigned long long)b->no_storage);
	if (b->pre_ns)
		vbuf_printf(out, "; before start %.1f ms", ms(b->pre_ns));
	vbuf_printf(out, "\n");
	if (b->diff_drains)
		vbuf_printf(out,
		    "bpf read-only: %u snapshot diffs; "
		    "unattributed %.3f ms, evicted %llu, recreated %llu, "
		    "retired %llu\n",
		    b->diff_drains, (double)b->unattributed_ns / 1e6,
		    (unsigned long long)b->evicted,
		    (unsigned long long)b->recreated,
		    (unsigned long long)b->retired);
	for (i = 0; b->stats && i < VITALS_BPF_PROGS; i++)
		vbuf_printf(out, "bpf prog %-18s %10llu runs %8.0f ns/run\n",
		    vbpf_prog_name(i), (unsigned long long)b->prog_runs[i],
		    b->prog_runs[i] ?
			(double)b->prog_ns[i] / (double)b->prog_runs[i] :
			0.0);

	pp = malloc((b->nprocs + 1) * sizeof(*pp));
	up = malloc((b->nuids + 1) * sizeof(*up));
	if (pp == NULL || up == NULL) {
		vbuf_printf(out, "bpf rows: out of memory\n");
		goto out;
	}
	for (i = 0; i < b->nuids; i++)
		up[i] = &b->uid[i];
	sort_n(up, b->nuids, sizeof(up[0]), cmp_uid_cpu_ptr);
	n = b->nuids < topn ? b->nuids : topn;
	for (i = 0; i < n; i++) {
		vbuf_printf(out,
		    "bpf uid %-8u on-CPU %9.1f ms (exited %.1f "
		    "ms, %llu threads)  run-queue %llu waits %.1f ms",
		    up[i]->uid, ms(up[i]->oncpu_ns), ms(up[i]->exited_ns),
		    (unsigned long long)up[i]->exited_tasks,
		    (unsigned long long)up[i]->rq_count, ms(up[i]->rq_ns));
		if (up[i]->rq_count)
			dump_quantile(out, "p99",
			    window_bpf_rq_quantile_ns(up[i]->rq_hist, 0.99));
		vbuf_printf(out, "\n");
	}
	if (b->uids_other)
		vbuf_printf(out, "bpf uid (%u others) on-CPU %.1f ms\n",
		    b->uids_other, ms(b->uid_other.oncpu_ns));

	for (i = 0; i < b->nprocs; i++)
		pp[i] = &b->proc[i];
	sort_n(pp, b->nprocs, sizeof(pp[0]), cmp_proc_cpu_ptr);
	n = b->nprocs < topn ? b->nprocs : topn;
	for (i = 0; i < n; i++) {
		vbuf_printf(out,
		    "bpf proc %7d %-16.16s on-CPU %9.1f ms  "
		    "run-queue %llu waits %.1f ms",
		    pp[i]->tgid, proc_label(w, pp[i]), ms(pp[i]->oncpu_ns),
		    (unsigned long long)pp[i]->rq_count, ms(pp[i]->rq_ns));
		if (pp[i]->rq_count) {
			dump_quantile(out, "p50",
			    window_bpf_rq_quantile_ns(pp[i]->rq_hist, 0.50));
			dump_quantile(out, "p99",
			    window_bpf_rq_quantile_ns(pp[i]->rq_hist, 0.99));
		}
		vbuf_printf(out, "\n");
	}
	if (b->procs_other)
		vbuf_printf(out,
		    "bpf proc (%u others) on-CPU %.1f ms, "
		    "run-queue %llu waits %.1f ms\n",
		    b->procs_other, ms(b->proc_other.oncpu_ns),
		    (unsigned long long)b->proc_other.rq_count,
		    ms(b->proc_other.rq_ns));
out:
	free(pp);
	free(up);
}

/* Its words on the summary line (dump_summary_line()). */
static void
sched_part_summary(const struct window *w, struct vbuf *out)
{
	const struct window_bpf *b = window_sched(w);

	if (b->state != VBPF_UNKNOWN && b->drains)
		vbuf_printf(out, ", bpf %s %.1f ms on-CPU",
		    vbpf_state_name(b->state), (double)b->oncpu_ns / 1e6);
	else if (b->state != VBPF_UNKNOWN)
		vbuf_printf(out, ", bpf %s", vbpf_state_name(b->state));
}

/* ------------------------------------------------------ the part's ops */

static struct window_bpf *
part_new(bool rows)
{
	struct window_bpf *b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->head_only = !rows;
	/* the "other" rows' keys, whether or not anything folds into them */
	b->uid_other.uid = UINT32_MAX;
	b->proc_other.tgid = -1;
	other_thread_key(&b->thread_other);
	return b;
}

struct window_bpf *
window_sched_make(struct window *w, bool rows)
{
	struct window_bpf *b = window_sched(w);

	if (b == NULL) {
		if ((b = part_new(rows)) != NULL)
			window_part_set(w, WPART_SCHED, b);
		return b;
	}
	if (rows)
		b->head_only = false;
	return b;
}

void
window_sched_trim(struct window *w)
{
	struct window_bpf *b = window_sched(w);

	if (b == NULL || b->head_only || b->nuids || b->nprocs || b->nthreads)
		return;
	window_bpf_release(b);
	b->head_only = true;
}

static void
sched_part_free(void *part)
{
	struct window_bpf *b = part;

	if (b == NULL)
		return;
	window_bpf_release(b);
	free(b);
}

static void *
dup_rows(const void *p, size_t n, size_t sz)
{
	void *c;

	if (n == 0 || p == NULL)
		return NULL;
	if ((c = malloc(n * sz)) != NULL)
		memcpy(c, p, n * sz);
	return c;
}

static void *
sched_part_dup(const void *part)
{
	const struct window_bpf *b = part;
	struct window_bpf *c;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	*c = *b;
	c->uid = dup_rows(b->uid, b->nuids, sizeof(*b->uid));
	c->proc = dup_rows(b->proc, b->nprocs, sizeof(*b->proc));
	c->thread = dup_rows(b->thread, b->nthreads, sizeof(*b->thread));
	if ((b->nuids && c->uid == NULL) || (b->nprocs && c->proc == NULL) ||
	    (b->nthreads && c->thread == NULL)) {
		sched_part_free(c);
		return NULL;
	}
	return c;
}

/*
 * Either side may be missing: it folds as zeros, as it did when every
 * window held the accounting by value (a part without stats makes the
 * merged run counts unknown).
 */
static int
sched_part_merge(void **accp, const void *srcp)
{
	static const struct window_bpf zero;
	const struct window_bpf *src = srcp ? srcp : &zero;
	struct window_bpf *acc = *accp;
	bool rows = src->nuids || src->nprocs || src->nthreads;
	bool made = false;

	if (acc == NULL) {
		if ((acc = part_new(rows)) == NULL)
			return -ENOMEM;
		made = true;
	}
	if (window_bpf_merge(acc, src) < 0) {
		if (made)
			free(acc);
		return -ENOMEM;
	}
	if (rows)
		acc->head_only = false;
	*accp = acc;
	return 0;
}

static size_t
sched_part_bytes(const void *part)
{
	const struct window_bpf *b = part;

	return sizeof(*b) + b->nuids * sizeof(*b->uid) +
	    b->nprocs * sizeof(*b->proc) + b->nthreads * sizeof(*b->thread);
}

/* Level 2 without rollup2_threads: the thread rows and the "other"
 * thread row go; the processes' and uids' rows keep their own figures
 * (the kernel's per-process and per-uid sums, exited threads included). */
static void
sched_part_drop_threads(void *part)
{
	struct window_bpf *b = part;

	free(b->thread);
	b->thread = NULL;
	b->nthreads = b->threads_other = 0;
	memset(&b->thread_other, 0, sizeof(b->thread_other));
	other_thread_key(&b->thread_other);
}

const struct window_part_ops sched_window_part = {
	.name = "sched",
	.free = sched_part_free,
	.dup = sched_part_dup,
	.merge = sched_part_merge,
	.dump = sched_part_dump,
	.summary = sched_part_summary,
	.bytes = sched_part_bytes,
	.drop_threads = sched_part_drop_threads,
};
