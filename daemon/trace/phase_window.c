/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phase rows of a window as plain arithmetic: the kept rows (the
 * heaviest by Σ duration) and the rest, roll-up merge. No I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "trace/trace.h"

static uint32_t
sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/*
 * src's figures into acc (its key stays). A figure is known in the sum
 * only when both had it: have is the intersection, except that an empty
 * acc takes src's.
 */
void
window_phase_add(struct window_trace_phase *acc,
    const struct window_trace_phase *src)
{
	bool empty = !acc->count && !acc->incomplete && !acc->open;
	unsigned k;

	if (!src->count && !src->incomplete && !src->open)
		return;
	acc->have = empty ? src->have : acc->have & src->have;
	acc->count = sat_add(acc->count, src->count);
	acc->incomplete = sat_add(acc->incomplete, src->incomplete);
	acc->open = src->open; /* a gauge: the later close */
	acc->total_ns += src->total_ns;
	if (src->max_ns > acc->max_ns)
		acc->max_ns = src->max_ns;
	acc->faults += src->faults;
	acc->file_faults += src->file_faults;
	acc->major += src->major;
	acc->pages_read += src->pages_read;
	acc->reclaim += src->reclaim;
	acc->reclaim_ns += src->reclaim_ns;
	acc->blk += src->blk;
	acc->blk_bytes += src->blk_bytes;
	for (k = 0; k < PCLASS__MAX; k++) {
		acc->faults_by[k] += src->faults_by[k];
		acc->major_by[k] += src->major_by[k];
	}
}

static int
phase_by_total(const void *a, const void *b)
{
	const struct window_trace_phase *x = a, *y = b;
	int c;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return x->start_ticks < y->start_ticks ?
	    -1 :
	    x->start_ticks > y->start_ticks;
}

/*
 * rows[0..n) sorted by Σ duration, the first VITALS_TRACE_PHASES kept in
 * wt, the others added to wt->phase_rest and counted on top of
 * other_rows in wt->phase_other. rows is reordered.
 */
void
window_phase_keep(struct window_trace *wt, struct window_trace_phase *rows,
    size_t n, uint32_t other_rows)
{
	size_t i, k = n < VITALS_TRACE_PHASES ? n : VITALS_TRACE_PHASES;

	if (n > 1)
		qsort(rows, n, sizeof(*rows), phase_by_total);
	if (k)
		memmove(wt->phase, rows, k * sizeof(*rows));
	wt->nphase = (uint32_t)k;
	for (i = k; i < n; i++) {
		window_phase_add(&wt->phase_rest, &rows[i]);
		wt->phase_rest.pid = -1;
	}
	wt->phase_other = other_rows + (uint32_t)(n - k);
}

static bool
phase_empty(const struct window_trace_phase *p)
{
	return !p->count && !p->incomplete && !p->open;
}

/* t's rest row, NULL when it has none (a head alone has no room for one). */
const struct window_trace_phase *
window_phase_rest(const struct window_trace *t)
{
	if (t == NULL || t->head_only || phase_empty(&t->phase_rest))
		return NULL;
	return &t->phase_rest;
}

static bool
phase_same(const struct window_trace_phase *a,
    const struct window_trace_phase *b)
{
	return a->pid == b->pid && a->start_ticks == b->start_ticks &&
	    strcmp(a->name, b->name) == 0;
}

/*
 * Roll-ups: rows of the same key add up; the kept ones are chosen again.
 * acc has room for rows whenever src has rows or a rest
 * (window_trace_merge makes it).
 */
void
window_phase_merge(struct window_trace *acc, const struct window_trace *src)
{
	const struct window_trace_phase *rest = window_phase_rest(src);
	struct window_trace_phase *all;
	size_t n = acc->nphase, i, k;

	acc->phase_events += src->phase_events;
	acc->phase_open = src->phase_open; /* a gauge: the later close */
	acc->phase_incomplete += src->phase_incomplete;
	acc->phase_untracked += src->phase_untracked;
	acc->maps_reads += src->maps_reads;
	acc->maps_skipped += src->maps_skipped;
	acc->maps_fail += src->maps_fail;
	acc->maps_bad_lines += src->maps_bad_lines;
	acc->maps_cut += src->maps_cut;
	acc->fault_unknown += src->fault_unknown;
	if (rest) {
		window_phase_add(&acc->phase_rest, rest);
		acc->phase_rest.pid = -1;
	}
	/* a row of acc absent from src is no longer open (a gauge: the
	 * later close), also when src has no rows at all */
	for (k = 0; k < n; k++) {
		for (i = 0; i < src->nphase; i++)
			if (phase_same(&acc->phase[k], &src->phase[i]))
				break;
		if (i == src->nphase)
			acc->phase[k].open = 0;
	}
	if (src->nphase == 0) {
		acc->phase_other += src->phase_other;
		return;
	}
	if ((all = malloc((acc->nphase + src->nphase) * sizeof(*all))) ==
	    NULL) {
		for (i = 0; i < src->nphase; i++)
			window_phase_add(&acc->phase_rest, &src->phase[i]);
		acc->phase_rest.pid = -1;
		acc->phase_other += src->phase_other + src->nphase;
		return;
	}
	if (n)
		memcpy(all, acc->phase, n * sizeof(*all));
	for (i = 0; i < src->nphase; i++) {
		const struct window_trace_phase *s = &src->phase[i];

		for (k = 0; k < n; k++)
			if (phase_same(&all[k], s))
				break;
		if (k == n)
			all[n++] = *s;
		else
			window_phase_add(&all[k], s);
	}
	window_phase_keep(acc, all, n, acc->phase_other + src->phase_other);
	free(all);
}
