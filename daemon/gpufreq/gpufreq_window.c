/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU frequency part of a window as plain arithmetic (no I/O): the
 * collector's devices taken at close, free, copy, merge for roll-ups and
 * ranges, and the dump text. In a merge devices fold by name: counts and
 * sums add (reads, errors, cur Σ and n, busy µs, busy % Σ and n, time in
 * state per frequency), the cur minimum and maximum take the smaller and
 * larger, the devfreq floor and ceiling (min_hz, max_hz) are the later
 * window's when it has them; have bits are or-ed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "gpufreq/gpufreq.h"
#include "window/window.h"

struct window_gpufreq *
window_gpufreq_new(uint32_t ndev)
{
	struct window_gpufreq *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	if (ndev && (p->dev = calloc(ndev, sizeof(*p->dev))) == NULL) {
		free(p);
		return NULL;
	}
	p->ndev = ndev;
	p->windows = 1;
	return p;
}

void
window_gpufreq_free(struct window_gpufreq *p)
{
	if (p == NULL)
		return;
	free(p->dev);
	free(p);
}

struct window_gpufreq *
window_gpufreq_dup(const struct window_gpufreq *p)
{
	struct window_gpufreq *c;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	*c = *p;
	c->dev = NULL;
	if (p->ndev) {
		if ((c->dev = malloc(p->ndev * sizeof(*c->dev))) == NULL) {
			free(c);
			return NULL;
		}
		memcpy(c->dev, p->dev, p->ndev * sizeof(*c->dev));
	}
	return c;
}

void
gpufreq_tick(struct gpufreq *g)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), dt;

	gpufreq_read(g);
	dt = clock_ns(CLOCK_MONOTONIC) - t0;
	if (dt < 0)
		dt = 0;
	g->win_reads++;
	g->win_read_ns += (uint64_t)dt;
	if ((uint64_t)dt > g->win_read_ns_max)
		g->win_read_ns_max = (uint64_t)dt;
}

int
gpufreq_window(struct gpufreq *g, struct window *w)
{
	struct window_gpufreq *p;

	if ((p = window_gpufreq_new(g->ndev)) == NULL)
		return -ENOMEM;
	p->found = g->ndev;
	p->skipped = g->skipped > UINT32_MAX ? UINT32_MAX :
					       (uint32_t)g->skipped;
	p->reads = g->win_reads;
	p->read_ns = g->win_read_ns;
	p->read_ns_max = g->win_read_ns_max;
	g->win_reads = 0;
	g->win_read_ns = g->win_read_ns_max = 0;
	for (uint32_t i = 0; i < g->ndev; i++) {
		struct gpufreq_wdev *d = &p->dev[i];

		memcpy(d->name, g->dev[i].name, sizeof(d->name));
		d->kind = g->dev[i].kind;
		gpufreq_take(g, i, &d->w);
		p->errors += d->w.errors;
	}
	window_gpufreq_free(window_gpufreq(w));
	window_part_set(w, WPART_GPUFREQ, p);
	return 0;
}

bool
gpufreq_busy_ppm(const struct gpufreq_win *w, uint64_t *ret)
{
	if ((w->have & GPUFREQ_HAVE_BUSY) && w->total_us) {
		*ret = w->busy_us * 1000000 / w->total_us;
		return true;
	}
	if ((w->have & GPUFREQ_HAVE_BUSY_PCT) && w->busy_pct_n) {
		*ret = w->busy_pct_sum * 10000 / w->busy_pct_n;
		return true;
	}
	return false;
}

/* time in state by frequency: a state acc lacks is added while there is
 * room, else counted as an error */
static void
tis_merge(struct gpufreq_win *acc, const struct gpufreq_win *src)
{
	for (uint32_t i = 0; i < src->tis_n; i++) {
		uint32_t k;

		for (k = 0; k < acc->tis_n; k++)
			if (acc->tis_hz[k] == src->tis_hz[i])
				break;
		if (k == acc->tis_n) {
			if (acc->tis_n >= GPUFREQ_MAX_STATES) {
				acc->errors++;
				continue;
			}
			acc->tis_hz[k] = src->tis_hz[i];
			acc->tis_ms[k] = 0;
			acc->tis_n++;
		}
		acc->tis_ms[k] += src->tis_ms[i];
	}
}

void
gpufreq_win_merge(struct gpufreq_win *acc, const struct gpufreq_win *src)
{
	acc->reads += src->reads;
	acc->errors += src->errors;
	if (src->have & GPUFREQ_HAVE_CUR) {
		if (!(acc->have & GPUFREQ_HAVE_CUR) || acc->cur_n == 0 ||
		    src->cur_min_hz < acc->cur_min_hz)
			acc->cur_min_hz = src->cur_min_hz;
		if (!(acc->have & GPUFREQ_HAVE_CUR) || acc->cur_n == 0 ||
		    src->cur_max_hz > acc->cur_max_hz)
			acc->cur_max_hz = src->cur_max_hz;
		acc->cur_sum_hz += src->cur_sum_hz;
		acc->cur_n += src->cur_n;
	}
	if (src->have & GPUFREQ_HAVE_MIN)
		acc->min_hz = src->min_hz;
	if (src->have & GPUFREQ_HAVE_MAX)
		acc->max_hz = src->max_hz;
	if (src->have & GPUFREQ_HAVE_BUSY) {
		acc->busy_us += src->busy_us;
		acc->total_us += src->total_us;
	}
	if (src->have & GPUFREQ_HAVE_BUSY_PCT) {
		acc->busy_pct_sum += src->busy_pct_sum;
		acc->busy_pct_n += src->busy_pct_n;
	}
	if (src->have & GPUFREQ_HAVE_TIS) {
		if (!(acc->have & GPUFREQ_HAVE_TIS))
			acc->tis_n = 0;
		tis_merge(acc, src);
	}
	acc->have |= src->have;
}

int
window_gpufreq_merge(struct window_gpufreq **accp,
    const struct window_gpufreq *src)
{
	struct window_gpufreq *acc = *accp;
	struct gpufreq_wdev *v;

	if (src == NULL)
		return 0;
	if (acc == NULL) {
		if ((*accp = window_gpufreq_dup(src)) == NULL)
			return -ENOMEM;
		return 0;
	}
	if (src->ndev) {
		if ((v = realloc(acc->dev,
			 (acc->ndev + src->ndev) * sizeof(*v))) == NULL)
			return -ENOMEM;
		acc->dev = v;
	}
	for (uint32_t i = 0; i < src->ndev; i++) {
		const struct gpufreq_wdev *s = &src->dev[i];
		uint32_t k;

		for (k = 0; k < acc->ndev; k++)
			if (!strcmp(acc->dev[k].name, s->name))
				break;
		if (k == acc->ndev) {
			acc->dev[acc->ndev++] = *s;
			continue;
		}
		acc->dev[k].kind = s->kind;
		gpufreq_win_merge(&acc->dev[k].w, &s->w);
	}
	acc->found = src->found;
	acc->skipped = src->skipped;
	acc->windows += src->windows;
	acc->reads += src->reads;
	acc->read_ns += src->read_ns;
	if (src->read_ns_max > acc->read_ns_max)
		acc->read_ns_max = src->read_ns_max;
	acc->errors += src->errors;
	return 0;
}

static void
part_free(void *part)
{
	window_gpufreq_free(part);
}

static void *
part_dup(const void *part)
{
	return window_gpufreq_dup(part);
}

static int
part_merge(void **accp, const void *src)
{
	struct window_gpufreq *acc = *accp;
	int r = window_gpufreq_merge(&acc, src);

	*accp = acc;
	return r;
}

static void
part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_gpufreq *p = window_gpufreq(w);

	(void)topn;
	vbuf_printf(out, "gpufreq: %u GPU devices, %u readings, %u errors\n",
	    p->ndev, p->reads, p->errors);
	for (uint32_t i = 0; i < p->ndev; i++) {
		const struct gpufreq_wdev *d = &p->dev[i];
		uint64_t ppm;

		vbuf_printf(out, "  %s (%s): cur", d->name,
		    gpufreq_kind_name(d->kind));
		if ((d->w.have & GPUFREQ_HAVE_CUR) && d->w.cur_n)
			vbuf_printf(out, " %llu/%llu/%llu Hz",
			    (unsigned long long)d->w.cur_min_hz,
			    (unsigned long long)(d->w.cur_sum_hz / d->w.cur_n),
			    (unsigned long long)d->w.cur_max_hz);
		else
			vbuf_printf(out, " unknown");
		if (gpufreq_busy_ppm(&d->w, &ppm))
			vbuf_printf(out, ", busy %llu ppm",
			    (unsigned long long)ppm);
		vbuf_printf(out, "\n");
	}
}

static size_t
part_bytes(const void *part)
{
	const struct window_gpufreq *p = part;

	return p ? sizeof(*p) + p->ndev * sizeof(*p->dev) : 0;
}

const struct window_part_ops gpufreq_window_part = {
	.name = "gpufreq",
	.free = part_free,
	.dup = part_dup,
	.merge = part_merge,
	.dump = part_dump,
	.bytes = part_bytes,
};
