/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doc/metrics.md's formulas, computed by the client from the raw deltas and
 * denominators the daemon sends. A zero denominator is "unknown" (NAN),
 * never 0 %. Keep in step with daemon/window/metrics.c and doc/metrics.md.
 */
#include <math.h>
#include <string.h>

#include "client.h"

/* guest and guest_nice are already inside user and nice: never added. */
uint64_t
fig_cpu_total(const Vitals__CpuTimes *t)
{
	if (t == NULL)
		return 0;
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq +
	    t->softirq + t->steal;
}

/* iowait counts as not busy; steal is reported on its own. */
uint64_t
fig_cpu_busy(const Vitals__CpuTimes *t)
{
	if (t == NULL)
		return 0;
	return t->user + t->nice + t->system + t->irq + t->softirq;
}

double
fig_ratio(uint64_t num, uint64_t den)
{
	return den ? (double)num / (double)den : NAN;
}

/* (cpu / hz) / (wall_ns / 10⁹): 1.0 is one core busy. */
double
fig_core_equiv(uint64_t ticks, uint64_t wall_ns, uint32_t hz)
{
	if (wall_ns == 0 || hz == 0)
		return NAN;
	return ((double)ticks / hz) / ((double)wall_ns / VITALS_NSEC_PER_SEC);
}

double
fig_machine_share(uint64_t ticks, uint64_t total_ticks)
{
	return fig_ratio(ticks, total_ticks);
}

double
fig_normalised(uint64_t ticks, double norm_ticks)
{
	if (!(norm_ticks > 0.0))
		return NAN;
	return (double)ticks / norm_ticks;
}

double
fig_gauge_avg(const Vitals__Gauge *g)
{
	if (g == NULL || g->n == 0)
		return NAN;
	return g->sum / g->n;
}

/* Stall share of the window: d_us × 1000 / Σ_v Δmono (ns/ns). */
double
fig_psi_share(uint64_t stall_us, uint64_t wall_ns)
{
	if (wall_ns == 0)
		return NAN;
	return (double)stall_us * 1000.0 / (double)wall_ns;
}

/* The collector's own CPU as a core-equivalent over the window's span. */
double
fig_self_core_equiv(const Vitals__WindowHealth *h, int64_t span_ns)
{
	if (h == NULL || span_ns <= 0)
		return NAN;
	return (double)(h->self_utime_us + h->self_stime_us) * 1000.0 /
	    (double)span_ns;
}

const Vitals__NamedGauge *
fig_meminfo(const Vitals__Window *w, const char *name)
{
	size_t i;

	for (i = 0; w && i < w->n_meminfo; i++)
		if (w->meminfo[i]->name &&
		    strcmp(w->meminfo[i]->name, name) == 0)
			return w->meminfo[i];
	return NULL;
}

const Vitals__Counter *
fig_counter(Vitals__Counter *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i]->name && strcmp(v[i]->name, name) == 0)
			return v[i];
	return NULL;
}
