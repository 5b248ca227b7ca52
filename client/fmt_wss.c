/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor's answers as text: one block per target, one
 * line per region (doc/wss.md says what each figure means).
 */
#include <stdio.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

static void
fmt_region(struct sbuf *o, const Vitals__WssRegion *g)
{
	char acc[16];

	fmt_pct(acc, sizeof(acc), fig_ratio(g->accessed, g->resident));
	sbuf_printf(o, "  %12llx-%-12llx %-28s %7u %8u %8u %7u %7u %7s",
	    ULL(g->start), ULL(g->end), g->label, g->pages, g->resident,
	    g->accessed, g->idle, g->not_resident,
	    g->gone || !g->sampled ? "n/a" : acc);
	if (g->cut)
		sbuf_printf(o, "  (%u pages over the limit)", g->cut);
	if (g->gone)
		sbuf_puts(o, "  (unmapped in the pass)");
	else if (!g->sampled)
		sbuf_puts(o, "  (no pass yet)");
	sbuf_putc(o, '\n');
}

void
fmt_wss_target(struct sbuf *o, const Vitals__WssTarget *t)
{
	uint64_t acc = 0, res = 0, pages = 0, nres = 0;
	char pct[16];
	size_t i;

	sbuf_printf(o, "pid %d (%s) mode %s%s%s%s: ", t->pid, t->name, t->mode,
	    *t->library ? " " : "", t->library,
	    t->apk_fallback ? " (found as base.apk)" : "");
	if (t->ended)
		sbuf_printf(o, "ended: %s\n", t->end_reason);
	else if (t->opening)
		sbuf_puts(o,
		    "starting: the privileged helper is opening its "
		    "files\n");
	else
		sbuf_printf(o, "every %u ms [%u..%u]\n", t->interval_ms,
		    t->interval_min_ms, t->interval_max_ms);
	sbuf_printf(o, "  method %s (%s)%s%s\n", t->method,
	    t->passes == 0			? "no pass yet" :
		!strcmp(t->method, "page_idle") ? "page level" :
						  "region level",
	    *t->note ? ": " : "", t->note);
	if (t->files && *t->files)
		sbuf_printf(o, "  files opened: %s\n", t->files);
	sbuf_printf(o,
	    "  passes %llu, cost per pass %.3f ms last, %.3f ms "
	    "max, %.3f ms CPU avg; maps changes %llu, read errors %llu\n",
	    ULL(t->passes), (double)t->pass_ns_last / 1e6,
	    (double)t->pass_ns_max / 1e6,
	    t->passes ? (double)t->pass_cpu_ns_sum / 1e6 / (double)t->passes :
			0.0,
	    ULL(t->maps_changes), ULL(t->read_errors));
	if (t->pfn_zeroed)
		sbuf_printf(o,
		    "  page level unavailable in %llu passes: "
		    "needs CAP_SYS_ADMIN\n",
		    ULL(t->pfn_zeroed));
	if (t->regions_over)
		sbuf_printf(o, "  %llu regions over the per-target cap\n",
		    ULL(t->regions_over));
	sbuf_printf(o, "  %-25s %-28s %7s %8s %8s %7s %7s %7s\n", "region",
	    "label", "pages", "resident", "accessed", "idle", "notres", "acc%");
	for (i = 0; i < t->n_regions; i++) {
		const Vitals__WssRegion *g = t->regions[i];

		fmt_region(o, g);
		if (g->gone || !g->sampled)
			continue;
		pages += g->pages;
		res += g->resident;
		acc += g->accessed;
		nres += g->not_resident;
	}
	fmt_pct(pct, sizeof(pct), fig_ratio(acc, res));
	sbuf_printf(o, "  %-25s %-28s %7llu %8llu %8llu %7llu %7llu %7s\n",
	    "total", "", ULL(pages), ULL(res), ULL(acc), ULL(res - acc),
	    ULL(nres), res ? pct : "n/a");
}

void
fmt_wss_health(struct sbuf *o, const Vitals__WssHealth *h)
{
	sbuf_printf(o,
	    "Working set: %u targets (max %u), %u of %u pages; "
	    "page_idle %s; DAMON %s\n",
	    h->targets, h->max_targets, h->pages, h->max_pages,
	    h->page_idle ? "present (page level)" :
			   "absent (clear_refs, region level)",
	    h->damon ? h->damon_note : "absent");
	if (h->access && *h->access)
		sbuf_printf(o, "  files: %s; %llu opens refused\n", h->access,
		    ULL(h->access_denied));
	if (h->helper_errors)
		sbuf_printf(o,
		    "  %llu target files the privileged helper did not "
		    "open (opened directly instead)\n",
		    ULL(h->helper_errors));
}

void
fmt_wss(struct sbuf *o, const Vitals__WssList *l)
{
	size_t i;

	if (l->n_targets == 0)
		sbuf_puts(o, "no working-set targets\n");
	for (i = 0; i < l->n_targets; i++)
		fmt_wss_target(o, l->targets[i]);
}
