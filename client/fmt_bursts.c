/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals bursts` and the bursts line of `vitals health`: the burst
 * triggers' budgets, counts and firings (doc/bursts.md).
 */
#include <stdio.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

void
fmt_burst_health(struct sbuf *o, const Vitals__BurstHealth *h)
{
	sbuf_printf(o,
	    "Bursts: %u rules; held %llu of %llu evaluations: started %llu, "
	    "refused %llu (burst running %llu, cooldown %llu, min gap "
	    "%llu, hourly limit %llu); figure absent %llu\n"
	    "  a burst %.1f s; cooldown %.0f s, min gap %.0f s, at most %u "
	    "an hour; %llu firings recorded\n",
	    h->rules, ULL(h->held), ULL(h->evaluations), ULL(h->started),
	    ULL(h->during_burst + h->cooldown + h->min_gap + h->max_per_hour),
	    ULL(h->during_burst), ULL(h->cooldown), ULL(h->min_gap),
	    ULL(h->max_per_hour), ULL(h->unavailable), h->duration_ms / 1000.0,
	    h->cooldown_ms / 1000.0, h->min_gap_ms / 1000.0,
	    h->max_per_hour_limit, ULL(h->logged));
}

void
fmt_bursts(struct sbuf *o, const Vitals__BurstList *l)
{
	char t[32];
	size_t i;

	if (l->health)
		fmt_burst_health(o, l->health);
	if (l->n_firings == 0) {
		sbuf_puts(o, "no rule has held yet\n");
		return;
	}
	sbuf_printf(o, "%-23s  %-12s  %-11s  %-12s  %s\n", "TIME", "RULE",
	    "CONDITION", "OUTCOME", "WHY");
	for (i = 0; i < l->n_firings; i++) {
		const Vitals__BurstFiring *f = l->firings[i];

		fmt_time(t, sizeof(t), f->wall_ns);
		sbuf_printf(o, "%-23s  %-12s  %-11s  %-12s  %s", t, f->rule,
		    f->cond, f->outcome, f->why);
		if (strcmp(f->outcome, "started") == 0)
			sbuf_printf(o, " -> %.1f s burst",
			    f->duration_ms / 1000.0);
		sbuf_putc(o, '\n');
	}
}
