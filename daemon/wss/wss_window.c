/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor's part of a window: each target's passes
 * completed in it and the regions of the last one, copied and freed with
 * the window (window.c), written by store_wss.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window/window.h"
#include "wss/wss.h"
#include "wss_int.h"

void
window_wss_free(struct window_wss *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].regions);
	free(v);
}

int
window_wss_dup(const struct window_wss *v, size_t n, struct window_wss **ret)
{
	struct window_wss *c;
	size_t i;

	if ((c = calloc(n, sizeof(*c))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		c[i] = v[i];
		c[i].regions = NULL;
		if (v[i].nregions == 0)
			continue;
		if ((c[i].regions = malloc(
			 v[i].nregions * sizeof(*c[i].regions))) == NULL) {
			window_wss_free(c, i + 1);
			return -ENOMEM;
		}
		memcpy(c[i].regions, v[i].regions,
		    v[i].nregions * sizeof(*c[i].regions));
	}
	*ret = c;
	return 0;
}

static int
fill_one(struct target *t, struct window_wss *ww)
{
	const struct wss_status *st = &t->st;
	size_t i, n = 0;

	ww->pid = st->pid;
	ww->starttime = st->starttime;
	memcpy(ww->name, st->name, sizeof(ww->name));
	memcpy(ww->lib, st->lib, sizeof(ww->lib));
	ww->mode = st->mode;
	ww->method = st->method;
	ww->interval_ms = st->interval_ms;
	ww->passes = t->win_passes;
	ww->pass_ns_sum = t->win_ns_sum;
	ww->pass_ns_max = t->win_ns_max;
	ww->pass_cpu_ns = t->win_cpu_ns;
	ww->maps_changes = (uint32_t)(st->maps_changes - t->win_maps0);
	ww->read_errors = (uint32_t)(st->read_errors - t->win_err0);
	ww->pfn_zeroed = (uint32_t)(st->pfn_zeroed - t->win_zero0);
	ww->ended = st->ended;
	for (i = 0; i < st->nregions; i++)
		n += st->regions[i].done;
	if (n && (ww->regions = calloc(n, sizeof(*ww->regions))) == NULL)
		return -ENOMEM;
	for (i = 0; i < st->nregions; i++) {
		const struct wss_region *g = &st->regions[i];
		struct window_wss_region *r;

		if (!g->done)
			continue;
		r = &ww->regions[ww->nregions++];
		r->start = g->start;
		r->end = g->end;
		memcpy(r->label, g->label, sizeof(r->label));
		r->pages = g->pages;
		r->resident = g->resident;
		r->accessed = g->accessed;
		r->idle = g->idle;
		r->not_resident = g->not_resident;
		r->gone = g->gone;
	}
	t->win_passes = 0;
	t->win_ns_sum = t->win_ns_max = t->win_cpu_ns = 0;
	t->win_maps0 = st->maps_changes;
	t->win_err0 = st->read_errors;
	t->win_zero0 = st->pfn_zeroed;
	t->win_ended_told = st->ended;
	return 0;
}

/* Every live target, and those that ended since the last window. */
int
wss_window_fill(struct wss *w, struct window *win)
{
	struct window_wss *v;
	size_t i, n = 0;
	int r;

	for (i = 0; i < w->nt; i++)
		n += !w->t[i]->win_ended_told;
	if (n == 0)
		return 0;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = n = 0; i < w->nt; i++) {
		if (w->t[i]->win_ended_told)
			continue;
		if ((r = fill_one(w->t[i], &v[n++])) < 0) {
			window_wss_free(v, n);
			return r;
		}
	}
	window_wss_free(win->wss, win->nwss);
	win->wss = v;
	win->nwss = n;
	return 0;
}
