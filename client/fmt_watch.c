/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals watch`'s own view: the live window as top prints a screen — the
 * machine in two lines, then the processes by CPU ticks (utime+stime) in
 * a table that fits the terminal (table.c). The window is the snapshot's;
 * its processes are the daemon's top N by CPU.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

static int
by_ticks(const void *a, const void *b)
{
	const Vitals__Task *x = *(Vitals__Task *const *)a;
	const Vitals__Task *y = *(Vitals__Task *const *)b;
	uint64_t cx = x->d_utime + x->d_stime, cy = y->d_utime + y->d_stime;

	if (cx != cy)
		return cx > cy ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static void
machine(struct sbuf *o, const Vitals__Window *w)
{
	const Vitals__CpuTimes *d = w->all ? w->all->d : NULL;
	const Vitals__NamedGauge *tot = fig_meminfo(w, "MemTotal");
	const Vitals__NamedGauge *av = fig_meminfo(w, "MemAvailable");
	uint64_t total = fig_cpu_total(d);
	char span[16], b[16], io[16], st[16];

	duration_format(span, sizeof(span), w->mono_end_ns - w->mono_start_ns);
	fmt_pct(b, sizeof(b), fig_ratio(fig_cpu_busy(d), total));
	fmt_pct(io, sizeof(io), fig_ratio(d ? d->iowait : 0, total));
	fmt_pct(st, sizeof(st), fig_ratio(d ? d->steal : 0, total));
	sbuf_printf(o,
	    "window %llu (%s): CPU busy %s, iowait %s, steal %s of all "
	    "CPUs\n",
	    ULL(w->seq), span, b, io, st);
	sbuf_puts(o, "  load");
	if (w->load1 && w->load1->n)
		sbuf_printf(o, " %.2f", w->load1->last);
	else
		sbuf_puts(o, " n/a");
	if (tot && tot->gauge && tot->gauge->n && av && av->gauge &&
	    av->gauge->n)
		sbuf_printf(o, "; memory available %.0f of %.0f kB",
		    av->gauge->last, tot->gauge->last);
	sbuf_printf(o, "; %u processes active\n",
	    w->nprocs_total ? w->nprocs_total : (unsigned)w->n_procs);
}

void
fmt_watch_top(struct sbuf *o, const Vitals__Window *w, const struct fmt_ctx *c)
{
	const Vitals__Task **v = NULL;
	struct table *tb;
	size_t i;

	machine(o, w);
	if (w->n_procs && (v = malloc(w->n_procs * sizeof(*v))) == NULL) {
		o->err = -1;
		return;
	}
	for (i = 0; i < w->n_procs; i++)
		v[i] = w->procs[i];
	if (w->n_procs > 1)
		qsort(v, w->n_procs, sizeof(*v), by_ticks);
	if ((tb = table_new()) == NULL) {
		free(v);
		o->err = -1;
		return;
	}
	table_col(tb, "", 1, 0, TABLE_LEFT);
	table_col(tb, "pid", 0, 1, 0);
	table_col(tb, "uid", 0, 1, 0);
	table_col(tb, "core", 0, 1, 0);
	table_col(tb, "share", 0, 1, 0);
	table_col(tb, "utime", 0, 1, 0);
	table_col(tb, "stime", 0, 1, 0);
	table_col(tb, "minflt", 0, 1, 0);
	table_col(tb, "majflt", 0, 1, 0);
	table_col(tb, "rss_kB", 0, 1, 0);
	table_col(tb, "name (by utime+stime)", 0, 2, TABLE_LEFT | TABLE_FLEX);
	for (i = 0; i < w->n_procs; i++) {
		const Vitals__Task *t = v[i];
		uint64_t cpu = t->d_utime + t->d_stime;
		char pct[16];

		table_cell(tb, "%c", t->born ? '+' : t->exited ? '-' : ' ');
		table_cell(tb, "%d", t->id);
		if (t->uid == VITALS_UID_UNKNOWN)
			table_cell(tb, "?");
		else
			table_cell(tb, "%u", t->uid);
		fmt_pct(pct, sizeof(pct),
		    fig_core_equiv(cpu, t->wall_ns, w->hz));
		table_cell(tb, "%s", pct);
		fmt_pct(pct, sizeof(pct),
		    fig_machine_share(cpu, t->total_ticks));
		table_cell(tb, "%s", pct);
		table_cell(tb, "%llu", ULL(t->d_utime));
		table_cell(tb, "%llu", ULL(t->d_stime));
		table_cell(tb, "%llu", ULL(t->d_minflt));
		table_cell(tb, "%llu", ULL(t->d_majflt));
		table_cell(tb, "%llu", ULL(t->rss_pages_max * c->page_kb));
		table_label(tb, fmt_task_label(t));
	}
	if (w->n_procs == 0)
		sbuf_puts(o, "  (no process active in the window)\n");
	else
		table_render(tb, o, c->width ? c->width : TEXT_WIDTH);
	table_free(tb);
	free(v);
}
