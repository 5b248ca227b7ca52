/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor's part of a window: each target's passes
 * completed in it and the regions of the last one; its operations (free,
 * copy, merge, dump) for the core; written by store_wss.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window/window.h"
#include "wss/wss.h"
#include "wss_int.h"

static struct window_wss_part *
part_new(size_t n)
{
	struct window_wss_part *p;

	if ((p = calloc(1, sizeof(*p) + n * sizeof(p->target[0]))) == NULL)
		return NULL;
	p->ntargets = n;
	return p;
}

static void
part_free(struct window_wss_part *p)
{
	size_t i;

	for (i = 0; p && i < p->ntargets; i++)
		free(p->target[i].regions);
	free(p);
}

static struct window_wss_part *
part_dup(const struct window_wss_part *v)
{
	struct window_wss_part *c;
	size_t i;

	if ((c = part_new(v->ntargets)) == NULL)
		return NULL;
	for (i = 0; i < v->ntargets; i++) {
		const struct window_wss *t = &v->target[i];

		c->target[i] = *t;
		c->target[i].regions = NULL;
		if (t->nregions == 0)
			continue;
		if ((c->target[i].regions = malloc(
			 t->nregions * sizeof(*t->regions))) == NULL) {
			c->ntargets = i + 1;
			part_free(c);
			return NULL;
		}
		memcpy(c->target[i].regions, t->regions,
		    t->nregions * sizeof(*t->regions));
	}
	return c;
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
	struct window_wss_part *v;
	size_t i, n = 0;
	int r;

	/* the daemon fills between passes (wss_busy, wss_set_idle): no
	 * wait there; any other caller waits for the pass */
	wss_settle(w);
	for (i = 0; i < w->nt; i++)
		n += !w->t[i]->win_ended_told;
	if (n == 0)
		return 0;
	if ((v = part_new(n)) == NULL)
		return -ENOMEM;
	for (i = n = 0; i < w->nt; i++) {
		if (w->t[i]->win_ended_told)
			continue;
		if ((r = fill_one(w->t[i], &v->target[n++])) < 0) {
			part_free(v);
			return r;
		}
	}
	part_free(window_wss(win));
	window_part_set(win, WPART_WSS, v);
	return 0;
}

/* ------------------------------------------------------ the part's ops */

static void
wss_part_free(void *part)
{
	part_free(part);
}

static void *
wss_part_dup(const void *part)
{
	return part_dup(part);
}

/*
 * A roll-up keeps the earliest window's targets and adds none: a target's
 * passes are not summed over windows (stored windows carry none to merge:
 * store_wss.c writes them and nothing reads them back into a window).
 */
static int
wss_part_merge(void **accp, const void *src)
{
	(void)accp;
	(void)src;
	return 0;
}

static size_t
wss_part_bytes(const void *part)
{
	const struct window_wss_part *p = part;
	size_t i, n = sizeof(*p) + p->ntargets * sizeof(p->target[0]);

	for (i = 0; i < p->ntargets; i++)
		n += p->target[i].nregions * sizeof(*p->target[i].regions);
	return n;
}

/* The window's targets in the dump text. */
static void
wss_part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_wss_part *p = window_wss(w);
	size_t i, k;

	(void)topn;
	for (i = 0; i < p->ntargets; i++) {
		const struct window_wss *t = &p->target[i];

		vbuf_printf(out,
		    "working set: pid %d (%s) %s%s%s, %s, %u passes"
		    " (cost %.3f ms, max %.3f ms), interval %u ms%s\n",
		    (int)t->pid, t->name, wss_mode_name(t->mode),
		    t->lib[0] ? " " : "", t->lib, wss_method_name(t->method),
		    t->passes, (double)t->pass_ns_sum / 1e6,
		    (double)t->pass_ns_max / 1e6, t->interval_ms,
		    t->ended ? ", ended" : "");
		for (k = 0; k < t->nregions; k++) {
			const struct window_wss_region *g = &t->regions[k];

			vbuf_printf(out,
			    "  %-28s pages %u resident %u accessed"
			    " %u idle %u not resident %u%s\n",
			    g->label, g->pages, g->resident, g->accessed,
			    g->idle, g->not_resident,
			    g->gone ? " (unmapped)" : "");
		}
	}
}

const struct window_part_ops wss_window_part = {
	.name = "wss",
	.free = wss_part_free,
	.dup = wss_part_dup,
	.merge = wss_part_merge,
	.dump = wss_part_dump,
	.bytes = wss_part_bytes,
};
