/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arithmetic behind every CPU figure. doc/metrics.md states the same
 * formulas; keep the two in step.
 */
#include <errno.h>
#include <math.h>

#include "core/util.h"
#include "proc/proc.h"
#include "window/window.h"

/* guest and guest_nice are already inside user and nice: never added. */
uint64_t
cpu_times_total(const struct cpu_times *t)
{
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq +
	    t->softirq + t->steal;
}

/* iowait is idle time with I/O outstanding: not busy. steal is apart. */
uint64_t
cpu_times_busy(const struct cpu_times *t)
{
	return t->user + t->nice + t->system + t->irq + t->softirq;
}

/*
 * Δ of two reads. Any field that went backwards (iowait can, on NO_HZ
 * kernels) invalidates the whole delta: -ERANGE, ret untouched.
 */
int
cpu_times_delta(const struct cpu_times *prev, const struct cpu_times *cur,
    struct cpu_times *ret)
{
	const uint64_t *p = (const uint64_t *)prev;
	const uint64_t *c = (const uint64_t *)cur;
	struct cpu_times d;
	uint64_t *o = (uint64_t *)&d;
	size_t i, n = sizeof(d) / sizeof(uint64_t);

	for (i = 0; i < n; i++) {
		if (c[i] < p[i])
			return -ERANGE;
		o[i] = c[i] - p[i];
	}
	*ret = d;
	return 0;
}

void
cpu_times_add(struct cpu_times *acc, const struct cpu_times *d)
{
	uint64_t *a = (uint64_t *)acc;
	const uint64_t *b = (const uint64_t *)d;
	size_t i, n = sizeof(*acc) / sizeof(uint64_t);

	for (i = 0; i < n; i++)
		a[i] += b[i];
}

/* Δcpu / Δwall: 1.0 is one core busy; can exceed 1.0 (what top shows). */
double
metric_core_equiv(uint64_t cpu_ticks, uint64_t wall_ns, unsigned hz)
{
	if (wall_ns == 0 || hz == 0)
		return NAN; /* undefined: no denominator */
	return ((double)cpu_ticks / hz) / ((double)wall_ns / NSEC_PER_SEC);
}

/* Δcpu / Δtotal: the share of all CPU time the machine had. */
double
metric_machine_share(uint64_t cpu_ticks, uint64_t total_ticks)
{
	if (total_ticks == 0)
		return NAN; /* undefined: no denominator */
	return (double)cpu_ticks / (double)total_ticks;
}

/*
 * Δcpu / Δtotal × online_cpus, summed per sample as Δtotal_i / online_i so a
 * hotplug inside a window does not skew it.
 */
double
metric_normalised(uint64_t cpu_ticks, double norm_ticks)
{
	if (norm_ticks <= 0.0)
		return NAN; /* undefined: no denominator */
	return (double)cpu_ticks / norm_ticks;
}
