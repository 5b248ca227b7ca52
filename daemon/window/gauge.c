/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Gauges over a window (window.h): one reading in, two folded together.
 * A leaf: every part's arithmetic uses it, it uses nothing.
 */
#include <math.h>

#include "window/window.h"

void
gauge_add(struct gauge *g, double v)
{
	if (g->n == 0 || v < g->min)
		g->min = v;
	if (g->n == 0 || v > g->max)
		g->max = v;
	g->sum += v;
	g->last = v;
	g->n++;
}

double
gauge_avg(const struct gauge *g)
{
	return g->n ? g->sum / g->n : NAN; /* no reading is not zero */
}

/* Fold g (the later one) into acc: used by roll-ups. */
void
gauge_merge(struct gauge *acc, const struct gauge *g)
{
	if (g->n == 0)
		return;
	if (acc->n == 0 || g->min < acc->min)
		acc->min = g->min;
	if (acc->n == 0 || g->max > acc->max)
		acc->max = g->max;
	acc->sum += g->sum;
	acc->n += g->n;
	acc->last = g->last;
}
