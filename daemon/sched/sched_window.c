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

/* /proc's starttime: the kernel's nsec_to_clock_t of start_boottime. */
uint64_t
vbpf_ns_to_ticks(uint64_t ns, unsigned hz)
{
	if (hz == 0)
		return 0;
	if (NSEC_PER_SEC % hz == 0)
		return ns / (NSEC_PER_SEC / hz);
	return ns / NSEC_PER_SEC * hz + ns % NSEC_PER_SEC * hz / NSEC_PER_SEC;
}

/* ---------------------------------------------------------------- uids */

static void
uid_add(struct window_bpf_uid *a, const struct window_bpf_uid *s)
{
	a->oncpu_ns += s->oncpu_ns;
	a->exited_ns += s->exited_ns;
	a->exited_tasks += s->exited_tasks;
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
 * Sum duplicates in arr[0..n) (sorted by key first), keep the biggest
 * VITALS_BPF_UIDS in wb, the rest into wb->uid_other. arr is scratch.
 */
static void
uids_settle(struct window_bpf *wb, struct window_bpf_uid *arr, size_t n,
    uint32_t folded)
{
	size_t i, m = 0;

	qsort(arr, n, sizeof(*arr), uid_by_key);
	for (i = 0; i < n; i++) {
		if (m > 0 && arr[m - 1].uid == arr[i].uid)
			uid_add(&arr[m - 1], &arr[i]);
		else
			arr[m++] = arr[i];
	}
	qsort(arr, m, sizeof(*arr), uid_by_cpu);
	wb->nuids = m < VITALS_BPF_UIDS ? (uint32_t)m : VITALS_BPF_UIDS;
	if (wb->nuids) /* else wb may be a head without rows */
		memcpy(wb->uid, arr, wb->nuids * sizeof(*arr));
	wb->uids_other += folded;
	for (i = wb->nuids; i < m; i++) {
		uid_add(&wb->uid_other, &arr[i]);
		wb->uids_other++;
	}
	wb->uid_other.uid = UINT32_MAX; /* (uid_t)-1: never a uid */
	/* sorted by uid for readers: the order carries no meaning */
	if (wb->nuids)
		qsort(wb->uid, wb->nuids, sizeof(*wb->uid), uid_by_key);
}

/* ----------------------------------------------------------- processes */

static void
proc_add(struct window_bpf_proc *a, const struct window_bpf_proc *s)
{
	unsigned k;

	a->oncpu_ns += s->oncpu_ns;
	a->rq_ns += s->rq_ns;
	a->rq_count += s->rq_count;
	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		a->rq_hist[k] += s->rq_hist[k];
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
 * Kept: the busiest half by on-CPU time, then the longest waiters among
 * the rest, so a process starved on the run queue shows up even when it
 * hardly ran.
 */
static void
procs_settle(struct window_bpf *wb, struct window_bpf_proc *arr, size_t n,
    uint32_t folded)
{
	size_t i, m = 0, half;

	qsort(arr, n, sizeof(*arr), proc_by_key);
	for (i = 0; i < n; i++) {
		if (m > 0 && proc_by_key(&arr[m - 1], &arr[i]) == 0)
			proc_add(&arr[m - 1], &arr[i]);
		else
			arr[m++] = arr[i];
	}
	qsort(arr, m, sizeof(*arr), proc_by_cpu);
	half = VITALS_BPF_PROCS / 2;
	if (m > half)
		qsort(arr + half, m - half, sizeof(*arr), proc_by_wait);
	wb->nprocs = m < VITALS_BPF_PROCS ? (uint32_t)m : VITALS_BPF_PROCS;
	if (wb->nprocs)
		memcpy(wb->proc, arr, wb->nprocs * sizeof(*arr));
	wb->procs_other += folded;
	for (i = wb->nprocs; i < m; i++) {
		proc_add(&wb->proc_other, &arr[i]);
		wb->procs_other++;
	}
	wb->proc_other.tgid = -1;
	if (wb->nprocs)
		qsort(wb->proc, wb->nprocs, sizeof(*wb->proc), proc_by_key);
}

/* ------------------------------------------------------------- public */

/*
 * Add one drained side to wb: per uid, the time of its thread entries
 * plus what its exited threads and overflows left in its uid entry; per
 * process, the time of its threads' entries plus its exited threads' and
 * its run-queue figures. On -ENOMEM wb is unchanged (the caller counts
 * the drain as failed).
 */
int
window_bpf_add(struct window_bpf *wb, const struct bpf_sched_batch *b,
    unsigned hz)
{
	size_t nu = wb->nuids, np = wb->nprocs, i;
	struct window_bpf_uid *ua;
	struct window_bpf_proc *pa;

	if (wb->head_only)
		return -EINVAL; /* no room for rows: window_sched_make() */
	ua = malloc((nu + b->nuids + b->ntids + 1) * sizeof(*ua));
	pa = malloc((np + b->nprocs + b->ntids + 1) * sizeof(*pa));
	if (ua == NULL || pa == NULL) {
		free(ua);
		free(pa);
		return -ENOMEM;
	}
	memcpy(ua, wb->uid, nu * sizeof(*ua));
	memcpy(pa, wb->proc, np * sizeof(*pa));
	for (i = 0; i < b->nuids; i++) {
		const struct vbpf_uid *u = &b->uids[i];
		struct window_bpf_uid *w = &ua[nu++];

		memset(w, 0, sizeof(*w));
		w->uid = u->uid;
		w->oncpu_ns = u->exited_ns + u->overflow_ns;
		w->exited_ns = u->exited_ns;
		w->exited_tasks = u->exited_tasks;
		wb->oncpu_ns += w->oncpu_ns;
		wb->exited_ns += w->exited_ns;
		wb->exited_tasks += w->exited_tasks;
	}
	for (i = 0; i < b->nprocs; i++) {
		const struct vbpf_proc *p = &b->procs[i];
		struct window_bpf_proc *w = &pa[np++];

		memset(w, 0, sizeof(*w));
		w->tgid = p->tgid;
		w->starttime = vbpf_ns_to_ticks(p->start_ns, hz);
		w->oncpu_ns = p->exited_ns;
		w->rq_ns = p->rq_ns;
		w->rq_count = p->rq_count;
		memcpy(w->rq_hist, p->rq_hist, sizeof(w->rq_hist));
		wb->rq_ns += p->rq_ns;
		wb->rq_count += p->rq_count;
	}
	for (i = 0; i < b->ntids; i++) {
		const struct vbpf_tid *t = &b->tids[i];
		struct window_bpf_uid *u = &ua[nu++];
		struct window_bpf_proc *p = &pa[np++];

		memset(u, 0, sizeof(*u));
		u->uid = t->uid;
		u->oncpu_ns = t->oncpu_ns;
		memset(p, 0, sizeof(*p));
		p->tgid = t->tgid;
		p->starttime = vbpf_ns_to_ticks(t->leader_ns, hz);
		p->oncpu_ns = t->oncpu_ns;
		wb->oncpu_ns += t->oncpu_ns;
	}
	uids_settle(wb, ua, nu, 0);
	procs_settle(wb, pa, np, 0);
	free(ua);
	free(pa);
	return 0;
}

/*
 * Fold src (the later window) into acc. Counters add; rows need room in
 * acc when either side has some (a head alone has none, sched_part_merge). the state is the
 * later one's (a window that did not report keeps the earlier state).
 * Cannot fail: roll-ups call it after the first figure changed.
 */
void
window_bpf_merge(struct window_bpf *acc, const struct window_bpf *src)
{
	struct window_bpf_uid ua[2 * VITALS_BPF_UIDS];
	struct window_bpf_proc pa[2 * VITALS_BPF_PROCS];
	unsigned i;

	if (src->state != VBPF_UNKNOWN) {
		acc->state = src->state;
		acc->err = src->err;
	}
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
	/* run counts of a part without stats are unknown, not zero */
	acc->stats = acc->stats && src->stats;
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		acc->prog_runs[i] += src->prog_runs[i];
		acc->prog_ns[i] += src->prog_ns[i];
	}

	if (acc->nuids)
		memcpy(ua, acc->uid, acc->nuids * sizeof(*ua));
	if (src->nuids)
		memcpy(ua + acc->nuids, src->uid, src->nuids * sizeof(*ua));
	uid_add(&acc->uid_other, &src->uid_other);
	uids_settle(acc, ua, acc->nuids + src->nuids, src->uids_other);

	if (acc->nprocs)
		memcpy(pa, acc->proc, acc->nprocs * sizeof(*pa));
	if (src->nprocs)
		memcpy(pa + acc->nprocs, src->proc, src->nprocs * sizeof(*pa));
	proc_add(&acc->proc_other, &src->proc_other);
	procs_settle(acc, pa, acc->nprocs + src->nprocs, src->procs_other);
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
			return w->procs[i].name;
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
	const struct window_bpf_proc *pp[VITALS_BPF_PROCS];
	const struct window_bpf_uid *up[VITALS_BPF_UIDS];
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

	for (i = 0; i < b->nuids; i++)
		up[i] = &b->uid[i];
	qsort(up, b->nuids, sizeof(up[0]), cmp_uid_cpu_ptr);
	n = b->nuids < topn ? b->nuids : topn;
	for (i = 0; i < n; i++)
		vbuf_printf(out,
		    "bpf uid %-8u on-CPU %9.1f ms (exited %.1f "
		    "ms, %llu threads)\n",
		    up[i]->uid, ms(up[i]->oncpu_ns), ms(up[i]->exited_ns),
		    (unsigned long long)up[i]->exited_tasks);
	if (b->uids_other)
		vbuf_printf(out, "bpf uid (%u others) on-CPU %.1f ms\n",
		    b->uids_other, ms(b->uid_other.oncpu_ns));

	for (i = 0; i < b->nprocs; i++)
		pp[i] = &b->proc[i];
	qsort(pp, b->nprocs, sizeof(pp[0]), cmp_proc_cpu_ptr);
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

	if ((b = calloc(1, rows ? sizeof(*b) : WINDOW_BPF_HEAD)) == NULL)
		return NULL;
	b->head_only = !rows;
	return b;
}

/* Room for rows: a head alone grows to the whole part, rows empty. */
static int
part_rows(struct window_bpf **bp)
{
	struct window_bpf *b = *bp;

	if (!b->head_only)
		return 0;
	if ((b = realloc(b, sizeof(*b))) == NULL)
		return -ENOMEM;
	memset((char *)b + WINDOW_BPF_HEAD, 0, sizeof(*b) - WINDOW_BPF_HEAD);
	b->head_only = false;
	*bp = b;
	return 0;
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
	if (rows && part_rows(&b) < 0)
		return NULL; /* the head stays w's */
	window_part_set(w, WPART_SCHED, b);
	return b;
}

void
window_sched_trim(struct window *w)
{
	struct window_bpf *b = window_sched(w);

	if (b == NULL || b->head_only || b->nuids || b->nprocs)
		return;
	b->head_only = true;
	if ((b = realloc(b, WINDOW_BPF_HEAD)) != NULL)
		window_part_set(w, WPART_SCHED, b); /* else the whole stays */
}

static void
sched_part_free(void *part)
{
	free(part);
}

static void *
sched_part_dup(const void *part)
{
	const struct window_bpf *b = part;
	size_t sz = b->head_only ? WINDOW_BPF_HEAD : sizeof(*b);
	struct window_bpf *c;

	if ((c = malloc(sz)) == NULL)
		return NULL;
	memcpy(c, b, sz);
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
	bool rows = src->nuids || src->nprocs;

	if (acc == NULL) {
		if ((acc = part_new(rows)) == NULL)
			return -ENOMEM;
		*accp = acc;
	}
	if (rows && part_rows(&acc) < 0)
		return -ENOMEM;
	*accp = acc;
	window_bpf_merge(acc, src);
	return 0;
}

static size_t
sched_part_bytes(const void *part)
{
	const struct window_bpf *b = part;

	return b->head_only ? WINDOW_BPF_HEAD : sizeof(*b);
}

const struct window_part_ops sched_window_part = {
	.name = "sched",
	.free = sched_part_free,
	.dup = sched_part_dup,
	.merge = sched_part_merge,
	.dump = sched_part_dump,
	.summary = sched_part_summary,
	.bytes = sched_part_bytes,
};
