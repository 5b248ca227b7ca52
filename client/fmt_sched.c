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

#define P_OPEN UINT64_MAX /* a quantile in the open last slot */

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

/* "≤ 2 ms", "> 8388 ms", "-" (no waits) in a column of width w */
static void
put_quantile(struct sbuf *o, uint64_t ns, bool any)
{
	char buf[32];

	if (!any)
		snprintf(buf, sizeof(buf), "-");
	else if (ns == P_OPEN)
		snprintf(buf, sizeof(buf), ">8388ms");
	else if (ns >= 1000000)
		snprintf(buf, sizeof(buf), "<=%llums",
		    (unsigned long long)(ns / 1000000));
	else
		snprintf(buf, sizeof(buf), "<=%lluus",
		    (unsigned long long)(ns / 1000));
	sbuf_printf(o, " %9s", buf);
}

static void
row(struct sbuf *o, const Vitals__SchedTask *t, bool thread)
{
	sbuf_printf(o, "%c %7d", t->exited ? '-' : ' ', t->id);
	if (thread)
		sbuf_printf(o, " %7d %10u", t->tgid, t->uid);
	sbuf_printf(o, " %12.3f %9llu %12.3f %10.3f", (double)t->oncpu_ns / 1e6,
	    (unsigned long long)t->rq_count, (double)t->rq_ns / 1e6,
	    t->rq_count ? (double)t->rq_ns / (double)t->rq_count / 1e3 : 0.0);
	if (!thread) {
		put_quantile(o, t->rq_p50_ns, t->rq_count > 0);
		put_quantile(o, t->rq_p99_ns, t->rq_count > 0);
	}
	sbuf_printf(o, "  %s\n", t->name && *t->name ? t->name : "?");
}

static void
header(struct sbuf *o, bool thread)
{
	sbuf_printf(o, "  %7s", thread ? "tid" : "pid");
	if (thread)
		sbuf_printf(o, " %7s %10s", "tgid", "uid");
	sbuf_printf(o, " %12s %9s %12s %10s", "oncpu_ms", "rq_waits", "rq_ms",
	    "rq_mean_us");
	if (!thread)
		sbuf_printf(o, " %9s %9s", "rq_p50", "rq_p99");
	sbuf_puts(o, "  name\n");
}

void
fmt_sched_top(struct sbuf *o, const Vitals__TaskList *tl)
{
	size_t i;

	sbuf_printf(o,
	    "Top %zu %s by %s (BPF sched_switch accounting, %.0f s):\n",
	    tl->n_sched, tl->threads ? "threads" : "processes",
	    sched_metric_name(tl->sched_metric),
	    (double)(tl->to_wall_ns - tl->from_wall_ns) / 1e9);
	if (tl->n_sched == 0) {
		sbuf_puts(o,
		    "  (no BPF rows in the range: BPF off, or no "
		    "window stored yet)\n");
		return;
	}
	header(o, tl->threads);
	for (i = 0; i < tl->n_sched; i++)
		row(o, tl->sched[i], tl->threads);
	sbuf_puts(o, "('-' before a pid: the process ended in the range)\n");
}

struct uid_sum {
	uint32_t uid;
	uint64_t oncpu, exited, tasks;
};

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
	size_t i;

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
}

void
fmt_sched_uids(struct sbuf *o, Vitals__Window **w, size_t nw, unsigned top_n)
{
	struct uid_sum *s;
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
		if (w[i]->sched->uid_other && w[i]->sched->uid_other->oncpu_ns)
			uid_put(s, &n, w[i]->sched->uid_other);
	}
	qsort(s, n, sizeof(*s), by_cpu);
	sbuf_printf(o, "BPF on-CPU time per uid, %zu windows:\n", nw);
	sbuf_printf(o, "  %10s %12s %12s %8s\n", "uid", "oncpu_ms", "exited_ms",
	    "exited");
	for (i = 0; i < n && (top_n == 0 || i < top_n); i++) {
		if (s[i].uid == UINT32_MAX)
			sbuf_printf(o, "  %10s", "other");
		else
			sbuf_printf(o, "  %10u", s[i].uid);
		sbuf_printf(o, " %12.3f %12.3f %8llu\n",
		    (double)s[i].oncpu / 1e6, (double)s[i].exited / 1e6,
		    (unsigned long long)s[i].tasks);
	}
	free(s);
}

void
fmt_sched_proc(struct sbuf *o, const Vitals__ProcessInfo *pi)
{
	size_t i;

	if (pi->sched == NULL)
		return;
	sbuf_puts(o, "BPF sched_switch accounting over the range:\n");
	header(o, false);
	row(o, pi->sched, false);
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
