/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Foreground and background as text: `vitals top --state S` and `vitals
 * proc PID --state S` (one dataset: the sample intervals that ended with
 * the process in state S; doc/metrics.md, "Foreground and background"),
 * and the signal's line in `vitals health`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

/* A process-supplied name, control bytes as '?' (as format.c does). */
static void
label(struct sbuf *o, const Vitals__Task *t)
{
	const char *s = t->name && *t->name ? t->name : t->comm;

	if (s == NULL || *s == '\0') {
		sbuf_puts(o, "?");
		return;
	}
	for (; *s; s++)
		sbuf_putc(o,
		    ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s);
}

static void
figures(struct sbuf *o, const Vitals__Task *t, uint32_t hz)
{
	double ms = hz ? (double)(t->d_utime + t->d_stime) * 1e3 / hz : 0;

	sbuf_printf(o, " %10.0f %8llu %8llu %9llu %7llu %7u", ms,
	    ULL(t->d_utime), ULL(t->d_stime), ULL(t->d_minflt),
	    ULL(t->d_majflt), t->samples);
}

static const char *
metric_word(Vitals__Metric m)
{
	switch (m) {
	case VITALS__METRIC__METRIC_MINFLT:
		return "minflt";
	case VITALS__METRIC__METRIC_MAJFLT:
		return "majflt";
	default:
		return "cpu";
	}
}

void
fmt_top_state(struct sbuf *o, const Vitals__TaskList *tl)
{
	char from[40], to[40];
	size_t i;

	fmt_time(from, sizeof(from), tl->from_wall_ns);
	fmt_time(to, sizeof(to), tl->to_wall_ns);
	sbuf_printf(o,
	    "Top %zu processes in state %s by %s, %s to %s, USER_HZ %u "
	    "(only the intervals they spent %s):\n",
	    tl->n_tasks, tl->state, metric_word(tl->metric), from, to, tl->hz,
	    tl->state);
	sbuf_printf(o, "  %7s %10s %10s %8s %8s %9s %7s %7s  name\n", "pid",
	    "uid", "cpu_ms", "utime", "stime", "minflt", "majflt", "samples");
	for (i = 0; i < tl->n_tasks; i++) {
		const Vitals__Task *t = tl->tasks[i];

		sbuf_printf(o, "  %7d", t->id);
		if (t->uid == VITALS_UID_UNKNOWN)
			sbuf_printf(o, " %10s", "?");
		else
			sbuf_printf(o, " %10u", t->uid);
		figures(o, t, tl->hz);
		sbuf_puts(o, "  ");
		label(o, t);
		sbuf_putc(o, '\n');
	}
	if (tl->n_tasks == 0)
		sbuf_printf(o, "  (no process was active in state %s)\n",
		    tl->state);
}

void
fmt_process_state(struct sbuf *o, const Vitals__ProcessInfo *pi, int32_t pid)
{
	char when[40], span[16];
	uint64_t ut = 0, st = 0, mn = 0, mj = 0;
	size_t i;

	sbuf_printf(o, "Process %d in state %s: %zu windows\n", pid, pi->state,
	    pi->n_history);
	sbuf_printf(o, "  %-23s %6s %10s %8s %8s %9s %7s %7s\n", "window start",
	    "len", "cpu_ms", "utime", "stime", "minflt", "majflt", "samples");
	for (i = 0; i < pi->n_history; i++) {
		const Vitals__HistoryPoint *h = pi->history[i];

		if (h->task == NULL)
			continue;
		fmt_time(when, sizeof(when), h->wall_start_ns);
		duration_format(span, sizeof(span),
		    h->wall_end_ns - h->wall_start_ns);
		sbuf_printf(o, "  %-23s %6s", when, span);
		figures(o, h->task, h->hz);
		if (h->level)
			sbuf_printf(o, "  (roll-up level %u)", h->level);
		sbuf_putc(o, '\n');
		ut += h->task->d_utime;
		st += h->task->d_stime;
		mn += h->task->d_minflt;
		mj += h->task->d_majflt;
	}
	if (pi->n_history == 0)
		sbuf_printf(o, "  (no activity in state %s in the range)\n",
		    pi->state);
	else
		sbuf_printf(o,
		    "  Σ utime %llu stime %llu minflt %llu majflt %llu\n",
		    ULL(ut), ULL(st), ULL(mn), ULL(mj));
}

/* The signal's state as the last window carries it. */
void
fmt_fgbg_health(struct sbuf *o, const Vitals__Window *last)
{
	const Vitals__FgbgWindow *f = last ? last->fgbg : NULL;
	size_t i;

	if (f == NULL) {
		sbuf_puts(o,
		    "Foreground/background: off (fgbg = off), or not "
		    "reported\n");
		return;
	}
	if (f->status && !strcmp(f->status, "absent")) {
		sbuf_puts(o,
		    "Foreground/background: absent (not Android, no Android "
		    "cpusets; fgbg = auto)\n");
		return;
	}
	sbuf_printf(o, "Foreground/background: %s",
	    f->status ? f->status : "?");
	if (f->cpuset && *f->cpuset)
		sbuf_printf(o, ", cpusets at %s", f->cpuset);
	sbuf_printf(o, "; %u states read in the last window (", f->reads);
	for (i = 0; i < f->n_sources; i++)
		sbuf_printf(o, "%s%s %llu", i ? ", " : "", f->sources[i]->name,
		    ULL(f->sources[i]->value));
	sbuf_printf(o, "), read errors %u\n", f->read_errors);
}
