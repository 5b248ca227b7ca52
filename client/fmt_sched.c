/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF sched rows as text: `vitals top --source bpf`, `vitals sched`
 * (processes, threads, or uids summed over windows) and the BPF lines of
 * `vitals proc`. Quantiles are the daemon's (the upper edge of the log2
 * slot holding them, doc/metrics.md "BPF").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define P_OPEN UINT64_MAX  /* a quantile in the open last slot */
#define VITALS_RQ_SLOTS 24 /* = VITALS_BPF_RQ_SLOTS (daemon/sched/sched.h) */

static const char *
sched_metric_name(unsigned m)
{
	switch (m) {
	case VITALS__SCHED_METRIC__SCHED_RQ_DELAY:
		return "run-queue delay";
	case VITALS__SCHED_METRIC__SCHED_RQ_P99:
		return "run-queue p99";
	default:
		return "on-CPU time";
	}
}

/* "<=2ms", ">8388ms", "-" (no waits) */
static void
quantile_cell(struct table *tb, uint64_t ns, bool any)
{
	if (!any)
		table_cell(tb, "-");
	else if (ns == P_OPEN)
		table_cell(tb, ">8388ms");
	else if (ns >= 1000000)
		table_cell(tb, "<=%llums", (unsigned long long)(ns / 1000000));
	else
		table_cell(tb, "<=%lluus", (unsigned long long)(ns / 1000));
}

static void
row(struct table *tb, const Vitals__SchedTask *t, bool thread)
{
	table_cell(tb, "%c", t->exited ? '-' : ' ');
	table_cell(tb, "%d", t->id);
	if (thread) {
		table_cell(tb, "%d", t->tgid);
		table_cell(tb, "%u", t->uid);
	}
	table_cell(tb, "%.3f", (double)t->oncpu_ns / 1e6);
	table_cell(tb, "%llu", (unsigned long long)t->rq_count);
	table_cell(tb, "%.3f", (double)t->rq_ns / 1e6);
	table_cell(tb, "%.3f",
	    t->rq_count ? (double)t->rq_ns / (double)t->rq_count / 1e3 : 0.0);
	/* a count without slots: windows stored before threads had
	 * histograms */
	quantile_cell(tb, t->rq_p50_ns, t->n_rq_hist > 0);
	quantile_cell(tb, t->rq_p99_ns, t->n_rq_hist > 0);
	table_label(tb, t->name && *t->name ? t->name : "?");
}

static struct table *
header(bool thread)
{
	struct table *tb = table_new();

	if (tb == NULL)
		return NULL;
	table_col(tb, "", 1, 0, TABLE_LEFT);
	table_col(tb, thread ? "tid" : "pid", 0, 1, 0);
	if (thread) {
		table_col(tb, "tgid", 0, 1, 0);
		table_col(tb, "uid", 0, 1, 0);
	}
	table_col(tb, "oncpu_ms", 0, 1, 0);
	table_col(tb, "rq_waits", 0, 1, 0);
	table_col(tb, "rq_ms", 0, 1, 0);
	table_col(tb, "rq_mean_us", 0, 1, 0);
	table_col(tb, "rq_p50", 0, 1, 0);
	table_col(tb, "rq_p99", 0, 1, 0);
	table_col(tb, "name", 0, 2, TABLE_LEFT | TABLE_FLEX);
	return tb;
}

static const char *
sched_metric_key(unsigned m)
{
	switch (m) {
	case VITALS__SCHED_METRIC__SCHED_RQ_DELAY:
		return "rq_ms";
	case VITALS__SCHED_METRIC__SCHED_RQ_P99:
		return "rq_p99";
	default:
		return "oncpu_ms";
	}
}

static unsigned rank_metric;

static uint64_t
rank_of(const Vitals__SchedTask *t)
{
	switch (rank_metric) {
	case VITALS__SCHED_METRIC__SCHED_RQ_DELAY:
		return t->rq_ns;
	case VITALS__SCHED_METRIC__SCHED_RQ_P99:
		return t->n_rq_hist ? t->rq_p99_ns : 0;
	default:
		return t->oncpu_ns;
	}
}

static int
by_rank(const void *a, const void *b)
{
	const Vitals__SchedTask *x = *(Vitals__SchedTask *const *)a;
	const Vitals__SchedTask *y = *(Vitals__SchedTask *const *)b;
	uint64_t rx = rank_of(x), ry = rank_of(y);

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

void
fmt_sched_top(struct sbuf *o, const Vitals__TaskList *tl)
{
	const Vitals__SchedTask **v;
	struct table *tb;
	size_t i;

	sbuf_printf(o, "Top %zu %s by %s (sorted by %s),\n", tl->n_sched,
	    tl->threads ? "threads" : "processes",
	    sched_metric_name(tl->sched_metric),
	    sched_metric_key(tl->sched_metric));
	sbuf_printf(o, "  BPF sched_switch accounting over %.0f s:\n",
	    (double)(tl->to_wall_ns - tl->from_wall_ns) / 1e9);
	if (tl->n_sched == 0) {
		sbuf_puts(o,
		    "  (no BPF rows in the range: BPF off, or no "
		    "window stored yet)\n");
		return;
	}
	v = malloc(tl->n_sched * sizeof(*v));
	if (v == NULL || (tb = header(tl->threads)) == NULL) {
		free(v);
		o->err = -1;
		return;
	}
	/* in the order of the figure printed, whatever order came */
	for (i = 0; i < tl->n_sched; i++)
		v[i] = tl->sched[i];
	rank_metric = tl->sched_metric;
	if (tl->n_sched > 1)
		qsort(v, tl->n_sched, sizeof(*v), by_rank);
	for (i = 0; i < tl->n_sched; i++)
		row(tb, v[i], tl->threads);
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
	free(v);
	sbuf_puts(o, "('-' before a pid: the process ended in the range)\n");
}

struct uid_sum {
	uint32_t uid;
	uint64_t oncpu, exited, tasks, rq_count, rq_ns;
	uint64_t hist[VITALS_RQ_SLOTS];
};

/*
 * The daemon's rule (window_bpf_rq_quantile_ns, doc/metrics.md "BPF"):
 * the upper edge of the log2 slot holding the q-th wait, P_OPEN in the
 * open last slot, 0 without waits.
 */
static uint64_t
quantile(const uint64_t *hist, double q)
{
	uint64_t total = 0, acc = 0, want;
	unsigned k;

	for (k = 0; k < VITALS_RQ_SLOTS; k++)
		total += hist[k];
	if (total == 0)
		return 0;
	want = (uint64_t)(q * (double)total + 0.999999);
	if (want == 0)
		want = 1;
	for (k = 0; k < VITALS_RQ_SLOTS; k++) {
		acc += hist[k];
		if (acc >= want)
			break;
	}
	if (k >= VITALS_RQ_SLOTS - 1)
		return P_OPEN;
	return (2ULL << k) * 1000;
}

static int
by_cpu(const void *a, const void *b)
{
	const struct uid_sum *x = a, *y = b;

	if (x->oncpu != y->oncpu)
		return x->oncpu > y->oncpu ? -1 : 1;
	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static void
uid_put(struct uid_sum *s, size_t *n, const Vitals__SchedUid *u)
{
	size_t i, k;

	for (i = 0; i < *n && s[i].uid != u->uid; i++)
		;
	if (i == *n) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].uid = u->uid;
		(*n)++;
	}
	s[i].oncpu += u->oncpu_ns;
	s[i].exited += u->exited_ns;
	s[i].tasks += u->exited_tasks;
	s[i].rq_count += u->rq_count;
	s[i].rq_ns += u->rq_ns;
	for (k = 0; k < u->n_rq_hist && k < VITALS_RQ_SLOTS; k++)
		s[i].hist[k] += u->rq_hist[k];
}

void
fmt_sched_uids(struct sbuf *o, Vitals__Window **w, size_t nw, unsigned top_n)
{
	struct uid_sum *s;
	struct table *tb;
	size_t i, k, n = 0, cap = 1;

	for (i = 0; i < nw; i++)
		if (w[i]->sched)
			cap += w[i]->sched->n_uids + 1;
	if ((s = calloc(cap, sizeof(*s))) == NULL) {
		sbuf_puts(o, "out of memory\n");
		return;
	}
	for (i = 0; i < nw; i++) {
		if (!w[i]->sched)
			continue;
		for (k = 0; k < w[i]->sched->n_uids; k++)
			uid_put(s, &n, w[i]->sched->uids[k]);
		if (w[i]->sched->uid_other &&
		    (w[i]->sched->uid_other->oncpu_ns ||
			w[i]->sched->uid_other->rq_count))
			uid_put(s, &n, w[i]->sched->uid_other);
	}
	if (n > 1)
		qsort(s, n, sizeof(*s), by_cpu);
	sbuf_printf(o,
	    "BPF on-CPU time and run-queue delay per uid, %zu windows\n"
	    "  (sorted by oncpu_ms):\n",
	    nw);
	if ((tb = table_new()) == NULL) {
		free(s);
		o->err = -1;
		return;
	}
	table_col(tb, "uid", 10, 2, 0);
	table_col(tb, "oncpu_ms", 0, 1, 0);
	table_col(tb, "exited_ms", 0, 1, 0);
	table_col(tb, "exited", 0, 1, 0);
	table_col(tb, "rq_waits", 0, 1, 0);
	table_col(tb, "rq_ms", 0, 1, 0);
	table_col(tb, "rq_p50", 0, 1, 0);
	table_col(tb, "rq_p99", 0, 1, 0);
	for (i = 0; i < n && (top_n == 0 || i < top_n); i++) {
		if (s[i].uid == UINT32_MAX)
			table_cell(tb, "other");
		else
			table_cell(tb, "%u", s[i].uid);
		table_cell(tb, "%.3f", (double)s[i].oncpu / 1e6);
		table_cell(tb, "%.3f", (double)s[i].exited / 1e6);
		table_cell(tb, "%llu", (unsigned long long)s[i].tasks);
		table_cell(tb, "%llu", (unsigned long long)s[i].rq_count);
		table_cell(tb, "%.3f", (double)s[i].rq_ns / 1e6);
		quantile_cell(tb, quantile(s[i].hist, 0.50), s[i].rq_count > 0);
		quantile_cell(tb, quantile(s[i].hist, 0.99), s[i].rq_count > 0);
	}
	/* a leading indent of two: the first column's gap */
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
	free(s);
}

/* A thread's rows summed over its points (proc --threads). */
struct thread_sum {
	Vitals__SchedTask t;
	uint64_t hist[VITALS_RQ_SLOTS];
	bool slots; /* some point had a histogram */
};

static void
thread_put(struct thread_sum *s, size_t *n, const Vitals__SchedTask *t)
{
	size_t i, k;

	for (i = 0; i < *n; i++)
		if (s[i].t.id == t->id && s[i].t.starttime == t->starttime)
			break;
	if (i == *n) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].t = *t;
		s[i].t.oncpu_ns = s[i].t.rq_count = s[i].t.rq_ns = 0;
		(*n)++;
	}
	s[i].t.oncpu_ns += t->oncpu_ns;
	s[i].t.rq_count += t->rq_count;
	s[i].t.rq_ns += t->rq_ns;
	s[i].t.uid = t->uid; /* the later point's */
	for (k = 0; k < t->n_rq_hist && k < VITALS_RQ_SLOTS; k++)
		s[i].hist[k] += t->rq_hist[k];
	s[i].slots = s[i].slots || t->n_rq_hist > 0;
}

static int
thread_by_cpu(const void *a, const void *b)
{
	const struct thread_sum *x = a, *y = b;

	if (x->t.oncpu_ns != y->t.oncpu_ns)
		return x->t.oncpu_ns > y->t.oncpu_ns ? -1 : 1;
	return x->t.id < y->t.id ? -1 : x->t.id > y->t.id;
}

/* Its threads' BPF rows over the range, by on-CPU time. */
static void
sched_proc_threads(struct sbuf *o, const Vitals__ProcessInfo *pi)
{
	struct thread_sum *s;
	struct table *tb;
	uint32_t hist[VITALS_RQ_SLOTS];
	size_t i, k, n = 0;

	if ((s = calloc(pi->n_threads + 1, sizeof(*s))) == NULL) {
		sbuf_puts(o, "out of memory\n");
		return;
	}
	for (i = 0; i < pi->n_threads; i++)
		if (pi->threads[i]->sched)
			thread_put(s, &n, pi->threads[i]->sched);
	if (n > 1)
		qsort(s, n, sizeof(*s), thread_by_cpu);
	if (n == 0 || (tb = header(true)) == NULL) {
		free(s);
		return;
	}
	sbuf_puts(o, "BPF per thread over the range (sorted by oncpu_ms):\n");
	for (i = 0; i < n; i++) {
		for (k = 0; k < VITALS_RQ_SLOTS; k++)
			hist[k] = (uint32_t)s[i].hist[k];
		s[i].t.rq_hist = hist;
		s[i].t.n_rq_hist = s[i].slots ? VITALS_RQ_SLOTS : 0;
		s[i].t.rq_p50_ns = quantile(s[i].hist, 0.50);
		s[i].t.rq_p99_ns = quantile(s[i].hist, 0.99);
		s[i].t.exited = false;
		row(tb, &s[i].t, true);
	}
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
	free(s);
}

static void
sched_proc_rows(struct sbuf *o, const Vitals__ProcessInfo *pi)
{
	struct table *tb;
	size_t i;

	if (pi->sched == NULL)
		return;
	if ((tb = header(false)) == NULL) {
		o->err = -1;
		return;
	}
	sbuf_puts(o, "BPF sched_switch accounting over the range:\n");
	row(tb, pi->sched, false);
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
	for (i = 0; i < pi->n_history; i++) {
		const Vitals__SchedTask *t = pi->history[i]->sched;

		if (t == NULL)
			continue;
		sbuf_printf(o, "  window %zu:", i);
		sbuf_printf(o, " on-CPU %.3f ms, %llu waits %.3f ms%s\n",
		    (double)t->oncpu_ns / 1e6, (unsigned long long)t->rq_count,
		    (double)t->rq_ns / 1e6, t->exited ? ", exited" : "");
	}
}

void
fmt_sched_proc(struct sbuf *o, const Vitals__ProcessInfo *pi)
{
	sched_proc_rows(o, pi);
	sched_proc_threads(o, pi);
}
