/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phases as text (`vitals trace`, `vitals proc PID`): per window a
 * table of (process, phase name) rows — phases ended, their time, the
 * faults, file faults, majors and pages read between their B and E —
 * and under it each row's faults and majors by mapping class, reclaim
 * and block figures. A figure whose events were not enabled prints "?",
 * never 0. JSON is the TraceList itself (json.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

static const char *const class_names[] = { "dex", "so", "res", "file", "anon",
	"stack", "other", "unknown" };

static void
put_clean(struct sbuf *o, const char *s)
{
	for (; s && *s; s++)
		sbuf_putc(o,
		    ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s);
}

static void
cell_value(struct table *tb, const Vitals__TracePhaseValue *v)
{
	if (v == NULL)
		table_cell(tb, "?");
	else
		table_cell(tb, "%llu", (unsigned long long)v->value);
}

/* "dex 120/3 so 40/0 anon 900": faults/major of the classes that had a
 * fault (major only when known). */
static void
put_classes(struct sbuf *o, const Vitals__TracePhase *p)
{
	const Vitals__TracePhaseValue *f = p->faults, *m = p->major;
	size_t k, n = sizeof(class_names) / sizeof(class_names[0]);
	bool any = false;

	if (f == NULL && m == NULL)
		return;
	sbuf_puts(o, "      by class:");
	for (k = 0; k < n; k++) {
		uint64_t fv = f && k < f->n_by_class ? f->by_class[k] : 0;
		uint64_t mv = m && k < m->n_by_class ? m->by_class[k] : 0;

		if (fv == 0 && mv == 0)
			continue;
		any = true;
		if (f && m)
			sbuf_printf(o, " %s %llu/%llu", class_names[k],
			    (unsigned long long)fv, (unsigned long long)mv);
		else
			sbuf_printf(o, " %s %llu", class_names[k],
			    (unsigned long long)(f ? fv : mv));
	}
	if (!any)
		sbuf_puts(o, " none");
	sbuf_printf(o, " (%s)\n",
	    f && m ? "faults/major" :
		f  ? "faults" :
		     "major");
}

static void
put_extra(struct sbuf *o, const Vitals__TracePhase *p)
{
	sbuf_puts(o, "      reclaim ");
	if (p->reclaim)
		sbuf_printf(o, "%llu (%.3f ms)",
		    (unsigned long long)p->reclaim->value,
		    (double)p->reclaim->total / 1e6);
	else
		sbuf_puts(o, "?");
	sbuf_puts(o, ", block ");
	if (p->block)
		sbuf_printf(o, "%llu (%llu KiB)",
		    (unsigned long long)p->block->value,
		    (unsigned long long)(p->block->total / 1024));
	else
		sbuf_puts(o, "?");
	sbuf_printf(o, ", incomplete %u, open %u\n", p->incomplete, p->open);
}

static void
put_row(struct table *tb, const Vitals__TracePhase *p, bool rest)
{
	struct sbuf nm;

	if (rest) {
		table_cell(tb, "-");
		table_cell(tb, "(other rows)");
		table_cell(tb, "%s", "");
	} else {
		table_cell(tb, "%d", p->pid);
		sbuf_init(&nm);
		put_clean(&nm, p->comm);
		table_cell(tb, "%s", sbuf_str(&nm));
		sbuf_free(&nm);
		sbuf_init(&nm);
		put_clean(&nm, p->name);
		table_cell(tb, "%s", sbuf_str(&nm));
		sbuf_free(&nm);
	}
	table_cell(tb, "%u", p->count);
	table_cell(tb, "%.1f", (double)p->total_ns / 1e6);
	table_cell(tb, "%.1f", (double)p->max_ns / 1e6);
	cell_value(tb, p->faults);
	cell_value(tb, p->file_faults);
	cell_value(tb, p->major);
	cell_value(tb, p->pages_read);
}

static bool
wanted(const Vitals__TracePhase *p, int32_t pid)
{
	return pid <= 0 || p->pid == pid;
}

/* The table of w's phase rows (pid > 0: that process's only); false:
 * none to print. */
bool
fmt_phases(struct sbuf *o, const Vitals__TraceWindow *w, int32_t pid)
{
	struct table *tb;
	size_t i, n = 0;

	for (i = 0; i < w->n_phase; i++)
		n += wanted(w->phase[i], pid);
	if (n == 0 && (pid > 0 || w->phase_rest == NULL))
		return false;
	if ((tb = table_new()) == NULL) {
		o->err = -1;
		return false;
	}
	table_col(tb, "pid", 0, 2, 0);
	table_col(tb, "comm", 0, 1, TABLE_LEFT);
	table_col(tb, "phase", 0, 1, TABLE_LEFT | TABLE_FLEX);
	table_col(tb, "n", 0, 1, 0);
	table_col(tb, "total_ms", 0, 1, 0);
	table_col(tb, "max_ms", 0, 1, 0);
	table_col(tb, "faults", 0, 1, 0);
	table_col(tb, "file", 0, 1, 0);
	table_col(tb, "major", 0, 1, 0);
	table_col(tb, "read", 0, 1, 0);
	for (i = 0; i < w->n_phase; i++)
		if (wanted(w->phase[i], pid))
			put_row(tb, w->phase[i], false);
	if (pid <= 0 && w->phase_rest)
		put_row(tb, w->phase_rest, true);
	sbuf_printf(o,
	    "  fault phases%s (deltas between B and E; ? unknown):\n",
	    w->lossy ? ", LOSSY window" : "");
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
	for (i = 0; i < w->n_phase; i++) {
		const Vitals__TracePhase *p = w->phase[i];

		if (!wanted(p, pid))
			continue;
		sbuf_printf(o, "    %d ", p->pid);
		put_clean(o, p->name);
		sbuf_putc(o, '\n');
		put_classes(o, p);
		put_extra(o, p);
	}
	if (pid <= 0 && w->phase_rows_other)
		sbuf_printf(o, "    %u rows beyond the kept ones\n",
		    w->phase_rows_other);
	sbuf_printf(o,
	    "    %llu phase events, %llu open, %llu incomplete, %llu "
	    "untracked;\n    maps: %llu reads, %llu over budget, %llu failed, "
	    "%llu bad lines,\n    %llu ranges cut; %llu faults unclassed\n",
	    (unsigned long long)w->phase_events,
	    (unsigned long long)w->phase_open,
	    (unsigned long long)w->phase_incomplete,
	    (unsigned long long)w->phase_untracked,
	    (unsigned long long)w->maps_reads,
	    (unsigned long long)w->maps_skipped,
	    (unsigned long long)w->maps_fail,
	    (unsigned long long)w->maps_bad_lines,
	    (unsigned long long)w->maps_cut,
	    (unsigned long long)w->fault_unknown);
	return true;
}

/* `vitals proc PID`: the process's phases in the range's windows. */
void
fmt_phase_proc(struct sbuf *o, const Vitals__TraceList *tl, int32_t pid)
{
	char from[40];
	size_t i, n = 0;

	for (i = 0; i < tl->n_windows; i++) {
		const Vitals__TraceWindow *w = tl->windows[i];
		size_t k, rows = 0;

		for (k = 0; k < w->n_phase; k++)
			rows += w->phase[k]->pid == pid;
		if (rows == 0)
			continue;
		if (n++ == 0)
			sbuf_puts(o, "\nFault phases:\n");
		fmt_time(from, sizeof(from), w->wall_start_ns);
		sbuf_printf(o, " window from %s\n", from);
		fmt_phases(o, w, pid);
	}
}
