/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals gpu` as text: per GPU device its current frequency over the
 * readings (min, mean, max), the devfreq floor and ceiling, the busy
 * share and the frequencies it spent most time at (doc/metrics.md, "GPU
 * frequency"). Frequencies in MHz; a figure the device does not give is
 * "-", never 0. The short form is `vitals gpumem`'s section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define HAVE_CUR 1u
#define HAVE_MIN 2u
#define HAVE_MAX 4u
#define HAVE_BUSY 8u
#define HAVE_BUSY_PCT 16u
#define HAVE_TIS 32u
#define TOP_STATES 4

static void
mhz(char *buf, size_t len, uint64_t hz, bool known)
{
	if (!known)
		snprintf(buf, len, "-");
	else if (hz % 1000000 == 0)
		snprintf(buf, len, "%llu", (unsigned long long)(hz / 1000000));
	else
		snprintf(buf, len, "%.1f", (double)hz / 1e6);
}

static bool
busy_known(const Vitals__GpuFreqDevice *d)
{
	return ((d->have & HAVE_BUSY) && d->total_us) ||
	    ((d->have & HAVE_BUSY_PCT) && d->busy_pct_n);
}

static void
busy(char *buf, size_t len, const Vitals__GpuFreqDevice *d)
{
	if (busy_known(d))
		snprintf(buf, len, "%.1f", (double)d->busy_ppm / 1e4);
	else
		snprintf(buf, len, "-");
}

static int
cmp_ms(const void *a, const void *b)
{
	const Vitals__GpuFreqState *x = *(const Vitals__GpuFreqState *const *)a;
	const Vitals__GpuFreqState *y = *(const Vitals__GpuFreqState *const *)b;

	if (x->ms != y->ms)
		return x->ms > y->ms ? -1 : 1;
	return x->hz > y->hz ? -1 : x->hz < y->hz;
}

/* "states: 585 MHz 61.2%, 427 MHz 30.0%, ..." by time, largest first */
static void
states(struct sbuf *o, const Vitals__GpuFreqDevice *d)
{
	const Vitals__GpuFreqState **v;
	uint64_t total = 0;
	char f[32];
	size_t i;

	if (!(d->have & HAVE_TIS)) {
		sbuf_puts(o, "  time in state: unknown (no trans_stat)\n");
		return;
	}
	if ((v = malloc((d->n_states + 1) * sizeof(*v))) == NULL)
		return;
	for (i = 0; i < d->n_states; i++) {
		v[i] = d->states[i];
		total += d->states[i]->ms;
	}
	qsort(v, d->n_states, sizeof(*v), cmp_ms);
	sbuf_printf(o, "  time in state (%llu ms):", (unsigned long long)total);
	for (i = 0; i < d->n_states && i < TOP_STATES; i++) {
		if (v[i]->ms == 0)
			break;
		mhz(f, sizeof(f), v[i]->hz, true);
		sbuf_printf(o, "%s %s MHz %.1f%%", i ? "," : "", f,
		    100.0 * (double)v[i]->ms / (double)total);
	}
	if (i == 0)
		sbuf_puts(o, " none");
	sbuf_putc(o, '\n');
	free(v);
}

static void
head(struct sbuf *o, const Vitals__GpuFreq *g)
{
	if (g->stored)
		sbuf_printf(o,
		    "GPU frequency over %u stored windows: ", g->windows);
	else
		sbuf_puts(o, "GPU frequency, last window: ");
	sbuf_printf(o, "%u GPU devices, %u readings of %.0f us", g->found,
	    g->reads, g->reads ? (double)g->read_ns / g->reads / 1e3 : 0.0);
	if (g->errors)
		sbuf_printf(o, ", %u files did not parse", g->errors);
	if (g->skipped)
		sbuf_printf(o, ", %u more not read", g->skipped);
	sbuf_putc(o, '\n');
}

static bool
off(struct sbuf *o, const Vitals__GpuFreq *g)
{
	if (g != NULL && g->on)
		return false;
	if (g && g->stored)
		sbuf_puts(o,
		    "GPU frequency: no GPU device in the stored "
		    "windows of the range\n");
	else
		sbuf_puts(o,
		    "GPU frequency: none (gpufreq = off, or no "
		    "window has closed)\n");
	return true;
}

void
fmt_gpufreq(struct sbuf *o, const Vitals__GpuFreq *g)
{
	struct table *tb;
	char a[32], b[32], c[32], e[32], f[32], p[32];
	size_t i;

	if (off(o, g))
		return;
	head(o, g);
	if (g->n_devices == 0 || (tb = table_new()) == NULL)
		return;
	table_col(tb, "device", 0, 0, TABLE_LEFT | TABLE_FLEX);
	table_col(tb, "kind", 0, 2, TABLE_LEFT);
	table_col(tb, "cur_min", 0, 2, 0);
	table_col(tb, "mean", 0, 1, 0);
	table_col(tb, "max", 0, 1, 0);
	table_col(tb, "floor", 0, 2, 0);
	table_col(tb, "ceil", 0, 1, 0);
	table_col(tb, "busy%", 0, 2, 0);
	for (i = 0; i < g->n_devices; i++) {
		const Vitals__GpuFreqDevice *d = g->devices[i];
		bool cur = (d->have & HAVE_CUR) && d->cur_n;

		table_label(tb, d->name);
		table_label(tb, d->kind);
		mhz(a, sizeof(a), d->cur_min_hz, cur);
		mhz(b, sizeof(b), cur ? d->cur_sum_hz / d->cur_n : 0, cur);
		mhz(c, sizeof(c), d->cur_max_hz, cur);
		mhz(e, sizeof(e), d->min_hz, d->have & HAVE_MIN);
		mhz(f, sizeof(f), d->max_hz, d->have & HAVE_MAX);
		busy(p, sizeof(p), d);
		table_cell(tb, "%s", a);
		table_cell(tb, "%s", b);
		table_cell(tb, "%s", c);
		table_cell(tb, "%s", e);
		table_cell(tb, "%s", f);
		table_cell(tb, "%s", p);
	}
	sbuf_puts(o,
	    "\nMHz: cur over the readings, floor/ceil the devfreq "
	    "limits; - unknown\n");
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
	for (i = 0; i < g->n_devices; i++) {
		const Vitals__GpuFreqDevice *d = g->devices[i];

		sbuf_printf(o, "%s:", d->name);
		if (d->errors)
			sbuf_printf(o, " %u files did not parse;", d->errors);
		sbuf_putc(o, '\n');
		states(o, d);
	}
}

void
fmt_gpufreq_short(struct sbuf *o, const Vitals__GpuFreq *g)
{
	char b[32], c[32], p[32];
	size_t i;

	sbuf_putc(o, '\n');
	if (off(o, g))
		return;
	head(o, g);
	for (i = 0; i < g->n_devices; i++) {
		const Vitals__GpuFreqDevice *d = g->devices[i];
		bool cur = (d->have & HAVE_CUR) && d->cur_n;

		mhz(b, sizeof(b), cur ? d->cur_sum_hz / d->cur_n : 0, cur);
		mhz(c, sizeof(c), d->cur_max_hz, cur);
		busy(p, sizeof(p), d);
		sbuf_printf(o,
		    "  %s (%s): mean %s MHz, max %s MHz, busy %s%%\n", d->name,
		    d->kind, b, c, p);
	}
}

void
fmt_gpufreq_health(struct sbuf *o, const Vitals__GpuFreqHealth *h)
{
	sbuf_printf(o,
	    "GPU frequency: %u GPU devices, %llu files did not "
	    "parse",
	    h->devices, (unsigned long long)h->errors);
	if (h->skipped)
		sbuf_printf(o, ", %llu more devices not read",
		    (unsigned long long)h->skipped);
	sbuf_putc(o, '\n');
}
