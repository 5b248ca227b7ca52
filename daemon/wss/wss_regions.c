/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A working-set target's regions: the maps text read through the kept
 * descriptor, the regions a mode selects in it under the page budget,
 * their pagemap entries, which of them a changed maps no longer has, and
 * the list shown while a pass runs (the last completed pass's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "privs/privs.h"
#include "wss/wss.h"
#include "wss_int.h"

void
wss_release_pages(struct target *t)
{
	t->w->npages -= t->npages;
	t->npages = 0;
}

int
wss_read_maps(struct target *t, uint64_t *ret_hash)
{
	int r;

	if ((r = wss_read(t, PH_FILE_MAPS, &t->w->buf)) < 0)
		return r;
	*ret_hash = wss_hash(t->w->buf.p, t->w->buf.len);
	return 0;
}

static int
add_region(struct target *t, const struct wss_map *m, size_t *budget)
{
	struct wss_region *g;
	uint64_t pages = (m->end - m->start) / t->w->page_size;

	if (t->nwork == WSS_REGIONS_MAX) {
		t->st.regions_over++;
		return 0;
	}
	if (t->nwork == t->work_cap) {
		size_t nc = t->work_cap ? t->work_cap * 2 : 16;
		struct wss_region *v = realloc(t->work, nc * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		t->work = v;
		t->work_cap = nc;
	}
	g = &t->work[t->nwork++];
	memset(g, 0, sizeof(*g));
	g->start = m->start;
	g->end = m->end;
	memcpy(g->perms, m->perms, sizeof(g->perms));
	wss_map_label(m, t->st.mode, g->label, sizeof(g->label));
	g->pages = (uint32_t)(pages < *budget ? pages : *budget);
	g->cut = (uint32_t)(pages - g->pages);
	*budget -= g->pages;
	t->npages += g->pages;
	return 0;
}

/* Rebuild the region list from the maps text in w->buf. */
int
wss_load_regions(struct target *t)
{
	struct wss *w = t->w;
	const char *p = w->buf.p, *e = w->buf.p + w->buf.len, *nl;
	size_t budget, pass;
	struct wss_map m;
	int r;

	wss_release_pages(t);
	t->nwork = 0;
	budget = w->cfg.max_pages > w->npages ? w->cfg.max_pages - w->npages :
						0;
	/* library: its own file first; base.apk only when it is not there */
	for (pass = 0; pass < 2 && t->nwork == 0; pass++) {
		if (pass == 1 && t->st.mode != WSS_MODE_LIBRARY)
			break;
		t->st.apk_fallback = pass == 1;
		for (p = w->buf.p; p && p < e; p = nl + 1) {
			if ((nl = memchr(p, '\n', (size_t)(e - p))) == NULL)
				nl = e;
			if (wss_maps_line(p, (size_t)(nl - p), &m) < 0 ||
			    !wss_map_selected(&m, t->st.mode, t->st.lib,
				pass == 1))
				continue;
			if ((r = add_region(t, &m, &budget)) < 0)
				return r;
		}
	}
	if (t->nwork == 0)
		t->st.apk_fallback = false;
	w->npages += t->npages;
	if (t->npages > t->raw_cap) {
		uint64_t *a = realloc(t->raw0, t->npages * 8);
		uint64_t *b = a ? realloc(t->raw1, t->npages * 8) : NULL;
		uint64_t *c = b ? realloc(t->pfn, t->npages * 8) : NULL;

		if (a)
			t->raw0 = a;
		if (b)
			t->raw1 = b;
		if (c == NULL)
			return -ENOMEM;
		t->pfn = c;
		t->raw_cap = t->npages;
	}
	return 0;
}

int
wss_read_pagemap(struct target *t, uint64_t *raw)
{
	size_t i, k = 0;
	int fd = -1, r;

	if (t->npages && (r = wss_file(t, PH_FILE_PAGEMAP, &fd)) < 0)
		return r;
	for (i = 0; i < t->nwork; i++) {
		const struct wss_region *g = &t->work[i];

		if ((r = wss_pm_read(fd, g->start, g->pages, t->w->page_size,
			 raw + k, &t->st.io)) < 0)
			return r;
		k += g->pages;
	}
	return 0;
}

/*
 * What wss_get and the window show: the regions of the last completed
 * pass, kept while the next one runs on a list of its own (a query or a
 * window closing inside a pass whose maps changed would otherwise find
 * every region unsampled). Before the first pass completes, the regions
 * it samples, none done.
 */
int
wss_regions_show(struct target *t)
{
	struct wss_status *st = &t->st;

	if (t->nwork > t->shown_cap) {
		struct wss_region *v = realloc(st->regions,
		    t->nwork * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		st->regions = v;
		t->shown_cap = t->nwork;
	}
	if (t->nwork)
		memcpy(st->regions, t->work, t->nwork * sizeof(*t->work));
	st->nregions = t->nwork;
	return 0;
}

/* The maps text in w->buf changed inside a pass: a region it no longer
 * has is gone, its figures void. */
void
wss_regions_gone(struct target *t)
{
	struct wss *w = t->w;
	const char *p, *e = w->buf.p + w->buf.len, *nl;
	struct wss_map m;
	size_t i;

	for (i = 0; i < t->nwork; i++) {
		struct wss_region *g = &t->work[i];
		bool seen = false;

		for (p = w->buf.p; !seen && p < e; p = nl + 1) {
			if ((nl = memchr(p, '\n', (size_t)(e - p))) == NULL)
				nl = e;
			seen = wss_maps_line(p, (size_t)(nl - p), &m) == 0 &&
			    m.start == g->start && m.end == g->end;
		}
		g->gone |= !seen;
	}
}
