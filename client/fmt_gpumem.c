/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals gpumem`: GPU memory in the layout of `dumpsys gpu --gpumem`
 * ("Memory snapshot for GPU N:", "Global total: BYTES" or "N/A",
 * "Proc PID total: BYTES" by pid), so scripts that parse that keep
 * working, plus what dumpsys leaves out: the map's state, process names,
 * stale pairs, saturation and, over a span, min, max and growth.
 */
#include <inttypes.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

static void
state_line(struct sbuf *o, const Vitals__GpuMemState *s)
{
	sbuf_printf(o, "GPU memory: %s", s->state ? s->state : "unknown");
	if (s->why && *s->why)
		sbuf_printf(o, " (%s%s%s)", s->why, s->err ? ": " : "",
		    s->err ? strerror(s->err) : "");
	sbuf_printf(o, "; %s map, %u of %u entries\n",
	    s->source ? s->source : "none", s->entries, s->capacity);
	if (s->saturated)
		sbuf_printf(o, "Warning: map saturated (%u of %u entries): "
		    "GPU memory of further (gpu, pid) pairs is not recorded\n",
		    s->entries, s->capacity);
	if (s->insert_fail)
		sbuf_printf(o, "Warning: %llu inserts refused by the full "
		    "map\n", ULL(s->insert_fail));
	if (s->restarts || s->vanished || s->truncated)
		sbuf_printf(o, "Note: entries changed during the walk "
		    "(restarts %u, vanished %u, truncated %u)\n", s->restarts,
		    s->vanished, s->truncated);
}

static void
proc_line(struct sbuf *o, const Vitals__GpuProc *p, bool span)
{
	sbuf_printf(o, "Proc %u total: %llu", (unsigned)p->pid,
	    ULL(p->bytes));
	if (p->stale)
		sbuf_puts(o, " [stale]");
	else if (p->name && *p->name)
		sbuf_printf(o, " %s", p->name);
	if (span)
		sbuf_printf(o, " (min %llu, max %llu, growth %+lld)",
		    ULL(p->min_bytes), ULL(p->max_bytes),
		    (long long)(p->bytes - p->first_bytes));
	sbuf_putc(o, '\n');
}

void
fmt_gpumem(struct sbuf *o, const Vitals__GpuMem *g)
{
	bool span = g->since_ns > 0;
	size_t i, j;

	if (g->state)
		state_line(o, g->state);
	if (span) {
		char d[16];

		duration_format(d, sizeof(d), g->since_ns);
		sbuf_printf(o, "Over the last %s\n", d);
	}
	/* procs come by gpu, then pid: one section per GPU */
	for (i = 0; i < g->n_procs; i = j) {
		uint32_t gpu = g->procs[i]->gpu_id;

		sbuf_printf(o, "Memory snapshot for GPU %u:\n", gpu);
		if (g->procs[i]->pid == 0) {
			const Vitals__GpuProc *p = g->procs[i];

			sbuf_printf(o, "Global total: %llu", ULL(p->bytes));
			if (span)
				sbuf_printf(o, " (min %llu, max %llu, growth "
				    "%+lld)", ULL(p->min_bytes),
				    ULL(p->max_bytes),
				    (long long)(p->bytes - p->first_bytes));
			sbuf_putc(o, '\n');
			j = i + 1;
		} else {
			sbuf_puts(o, "Global total: N/A\n");
			j = i;
		}
		for (; j < g->n_procs && g->procs[j]->gpu_id == gpu; j++)
			proc_line(o, g->procs[j], span);
	}
}
