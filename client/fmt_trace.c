/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals trace` as text: per window the ftrace state, its loss (a window
 * that lost events says so before any figure), then slices, counters,
 * binder pairs and run-queue delay. Names from processes are printed with
 * control bytes replaced, as everywhere in the client.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

static void
put_name(struct sbuf *o, const char *s)
{
	if (s == NULL || *s == '\0') {
		sbuf_puts(o, "(end without begin)");
		return;
	}
	for (; *s; s++)
		sbuf_putc(o,
		    ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s);
}

static void
put_list(struct sbuf *o, const char *label, char **v, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	sbuf_printf(o, "  %s:", label);
	for (i = 0; i < n; i++)
		sbuf_printf(o, " %s", v[i]);
	sbuf_putc(o, '\n');
}

/* The ATrace categories' line (doc/ftrace.md), for windows and health. */
static void
put_atcat(struct sbuf *o, const char *state, int32_t err, uint64_t tags,
    const char *names, uint64_t flags, uint32_t checks, uint32_t foreign,
    uint32_t takeovers, uint32_t yields, uint32_t restores, uint32_t set_fail)
{
	if (state == NULL || *state == '\0' || !strcmp(state, "unknown"))
		return;
	sbuf_printf(o, "  ATrace categories: %s", state);
	if (tags)
		sbuf_printf(o, " (%s = %#llx)", names && *names ? names : "?",
		    (unsigned long long)tags);
	if (!strcmp(state, "skipped_other_owner"))
		sbuf_printf(o,
		    "; the tags property holds another tracer's "
		    "%#llx",
		    (unsigned long long)flags);
	if (err)
		sbuf_printf(o, "; error %s", strerror(-err));
	sbuf_printf(o,
	    "; checks %u, another owner %u, taken %u, yielded %u,"
	    " restored %u, write failures %u\n",
	    checks, foreign, takeovers, yields, restores, set_fail);
}

/* Health.trace: the ftrace state of the last window. */
void
fmt_trace_health(struct sbuf *o, const Vitals__TraceHealth *h)
{
	if (h == NULL)
		return;
	sbuf_printf(o, "Trace: ftrace %s%s%s, ATrace %s; %s, lost %llu\n",
	    h->state ? h->state : "n/a", h->err ? ": " : "",
	    h->err ? strerror(-h->err) : "",
	    h->atrace ? "captured" : "not captured",
	    h->lossy ? "LOSSY" : "no loss", (unsigned long long)h->lost);
	put_atcat(o, h->atrace_categories, h->atrace_categories_err,
	    h->atrace_tags, h->atrace_tag_names, h->atrace_flags,
	    h->atrace_checks, h->atrace_foreign, h->atrace_takeovers,
	    h->atrace_yields, h->atrace_restores, h->atrace_set_fail);
}

static int
slice_by_total(const void *a, const void *b)
{
	const Vitals__TraceSlice *x = *(Vitals__TraceSlice *const *)a;
	const Vitals__TraceSlice *y = *(Vitals__TraceSlice *const *)b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return (x->count < y->count) - (x->count > y->count);
}

/* The slices by total time, the figure the table leads with. */
static void
put_slices(struct sbuf *o, const Vitals__TraceWindow *w)
{
	Vitals__TraceSlice **v;
	struct table *tb;
	size_t i;

	if (w->n_slice == 0)
		return;
	v = malloc(w->n_slice * sizeof(*v));
	tb = table_new();
	if (v == NULL || tb == NULL) {
		free(v);
		table_free(tb);
		o->err = -1;
		return;
	}
	memcpy(v, w->slice, w->n_slice * sizeof(*v));
	qsort(v, w->n_slice, sizeof(*v), slice_by_total);
	table_col(tb, "kind", 8, 2, TABLE_LEFT);
	table_col(tb, "pid", 0, 1, 0);
	table_col(tb, "tid", 0, 1, 0);
	table_col(tb, "depth", 0, 1, 0);
	table_col(tb, "count", 0, 1, 0);
	table_col(tb, "incompl", 0, 1, 0);
	table_col(tb, "total_ms", 0, 1, 0);
	table_col(tb, "max_ms", 0, 1, 0);
	table_col(tb, "name", 0, 2, TABLE_LEFT | TABLE_FLEX);
	for (i = 0; i < w->n_slice; i++) {
		const Vitals__TraceSlice *s = v[i];
		struct sbuf nm;

		table_cell(tb, "%s", s->kind);
		table_cell(tb, "%d", s->pid);
		table_cell(tb, "%d", s->tid);
		table_cell(tb, "%u", s->depth);
		table_cell(tb, "%u", s->count);
		table_cell(tb, "%u", s->incomplete);
		table_cell(tb, "%.3f", (double)s->total_ns / 1e6);
		table_cell(tb, "%.3f", (double)s->max_ns / 1e6);
		sbuf_init(&nm);
		put_name(&nm, s->name);
		table_cell(tb, "%s", sbuf_str(&nm));
		sbuf_free(&nm);
	}
	sbuf_puts(o, "  slices, sorted by total_ms:\n");
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
	free(v);
}

static void
fmt_trace_window(struct sbuf *o, const Vitals__TraceWindow *w)
{
	char from[40], to[40];
	size_t i;

	fmt_time(from, sizeof(from), w->wall_start_ns);
	fmt_time(to, sizeof(to), w->wall_end_ns);
	/* the end's date is the start's but across midnight */
	sbuf_printf(o,
	    "Window %s .. %s: ftrace %s, %llu events, %llu slices,"
	    " %llu incomplete\n",
	    from, strlen(to) > 11 && strncmp(from, to, 11) == 0 ? to + 11 : to,
	    w->state, (unsigned long long)w->events,
	    (unsigned long long)w->slices, (unsigned long long)w->incomplete);
	if (w->lossy)
		sbuf_printf(o,
		    "  LOST EVENTS: %llu (overrun %llu, dropped "
		    "%llu, commit overrun %llu), %llu pages flagged, %u stats "
		    "reads failed: figures below are partial\n",
		    (unsigned long long)w->lost, (unsigned long long)w->overrun,
		    (unsigned long long)w->dropped,
		    (unsigned long long)w->commit_overrun,
		    (unsigned long long)w->pages_lost, w->stats_fail);
	if (!w->atrace && strcmp(w->state, "on") == 0)
		sbuf_puts(o,
		    "  ATrace capture unavailable (no "
		    "copy_trace_marker option in this kernel)\n");
	put_atcat(o, w->atrace_categories, w->atrace_categories_err,
	    w->atrace_tags, w->atrace_tag_names, w->atrace_flags,
	    w->atrace_checks, w->atrace_foreign, w->atrace_takeovers,
	    w->atrace_yields, w->atrace_restores, w->atrace_set_fail);
	put_list(o, "missing events", w->missing, w->n_missing);
	put_slices(o, w);
	if (w->slice_other)
		sbuf_printf(o,
		    "  (%u more rows: %u complete, %u incomplete, "
		    "%.3f ms)\n",
		    w->slices_other, w->slice_other->count,
		    w->slice_other->incomplete,
		    (double)w->slice_other->total_ns / 1e6);
	for (i = 0; i < w->n_counter; i++) {
		const Vitals__TraceCounter *c = w->counter[i];

		sbuf_printf(o, "  counter pid %d ", c->pid);
		put_name(o, c->name);
		sbuf_printf(o, ": last %lld min %lld max %lld (%u values)\n",
		    (long long)c->last, (long long)c->min, (long long)c->max,
		    c->n);
	}
	for (i = 0; i < w->n_binder; i++)
		sbuf_printf(o,
		    "  binder %d -> %d: %u calls, %u oneway, "
		    "%u replies\n",
		    w->binder[i]->from_pid, w->binder[i]->to_pid,
		    w->binder[i]->calls, w->binder[i]->oneway,
		    w->binder[i]->replies);
	if (w->rq_total && w->rq_total->count)
		sbuf_printf(o,
		    "  run-queue delay: %llu wake-ups, mean %.3f ms,"
		    " max %.3f ms\n",
		    (unsigned long long)w->rq_total->count,
		    (double)w->rq_total->total_ns / 1e6 /
			(double)w->rq_total->count,
		    (double)w->rq_total->max_ns / 1e6);
	for (i = 0; i < w->n_gpu_mem; i++)
		sbuf_printf(o,
		    "  gpu_mem gpu %u pid %d: %llu bytes (%llu "
		    "events)\n",
		    w->gpu_mem[i]->gpu_id, w->gpu_mem[i]->pid,
		    (unsigned long long)w->gpu_mem[i]->last_size,
		    (unsigned long long)w->gpu_mem[i]->events);
	fmt_phases(o, w, 0);
}

void
fmt_trace(struct sbuf *o, const Vitals__TraceList *tl)
{
	size_t i;

	if (tl->n_windows == 0) {
		sbuf_puts(o, "no window with ftrace figures in the range\n");
		return;
	}
	for (i = 0; i < tl->n_windows; i++)
		fmt_trace_window(o, tl->windows[i]);
	if (tl->truncated)
		sbuf_puts(o,
		    "(older windows left out: ask with a shorter "
		    "--since)\n");
}
