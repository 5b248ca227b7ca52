/* SPDX-License-Identifier: Apache-2.0 */
/*
 * History as sparklines (spark.c): `vitals proc PID`, `vitals cpu --since
 * D` and `vitals gpumem --since D` draw each figure over the windows of
 * the range after their table. Points are laid on the windows' own time
 * line: where the range has no window for a stretch (the daemon was down,
 * the process had no row), the stretch is unknown and drawn as gaps, never
 * as zero.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define HIST_POINTS_MAX 4096 /* points plus gaps; beyond: gaps shortened */

struct hist_point {
	int64_t start, end; /* wall ns */
	const double *v;    /* one per figure */
};

static int
cmp_len(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The typical window length: the median of the points' lengths. */
static int64_t
median_len(const struct hist_point *p, size_t n)
{
	int64_t *l, m;
	size_t i;

	if (n == 0 || (l = malloc(n * sizeof(*l))) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		l[i] = p[i].end - p[i].start;
	qsort(l, n, sizeof(*l), cmp_len);
	m = l[n / 2];
	free(l);
	return m;
}

/*
 * The series of figure f with a NAN for every missing window between two
 * points (points in time order): a hole of k window lengths is k gaps.
 */
static size_t
hist_series(const struct hist_point *p, size_t n, size_t f, double *out)
{
	int64_t len = median_len(p, n);
	size_t i, k = 0;

	for (i = 0; i < n && k < HIST_POINTS_MAX; i++) {
		if (i > 0 && len > 0 && p[i].start - p[i - 1].end > len / 2) {
			int64_t miss = (p[i].start - p[i - 1].end + len / 2) /
			    len;

			while (miss-- > 0 && k < HIST_POINTS_MAX - 1)
				out[k++] = NAN;
		}
		out[k++] = p[i].v[f];
	}
	return k;
}

static int
cmp_start(const void *a, const void *b)
{
	const struct hist_point *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

typedef void (*hist_fmt)(char *buf, size_t len, double v);

static void
put_pct(char *buf, size_t len, double v)
{
	fmt_pct(buf, len, v);
}

static void
put_count(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.0f", v);
}

/*
 * One row per figure; "n/a" where a figure is never known. label_cols:
 * the labels' column; step: windows per point (the daemon's buckets).
 */
static void
hist_draw(struct sbuf *o, struct hist_point *p, size_t n,
    const char *const *label, const hist_fmt *fmt, size_t nf, size_t label_cols,
    unsigned step, size_t width)
{
	double *s, lo, hi;
	char a[32], b[32];
	size_t f, k, rc = 0;

	if (n < 2)
		return;
	qsort(p, n, sizeof(*p), cmp_start);
	if ((s = calloc(HIST_POINTS_MAX, sizeof(*s))) == NULL) {
		o->err = -1;
		return;
	}
	if (step > 1)
		sbuf_printf(o,
		    "History, oldest left: %zu points of %u windows (a "
		    "column: their max; blank: none)\n",
		    n, step);
	else
		sbuf_printf(o,
		    "History, oldest left: %zu windows (a column: their max; "
		    "blank: none)\n",
		    n);
	/* the widest "min…max" aligns every row's series */
	for (f = 0; f < nf; f++) {
		k = hist_series(p, n, f, s);
		if (!spark_range(s, k, &lo, &hi))
			continue;
		fmt[f](a, sizeof(a), lo);
		fmt[f](b, sizeof(b), hi);
		if (text_cols(a) + text_cols(b) + text_cols(spark_dots()) > rc)
			rc = text_cols(a) + text_cols(b) +
			    text_cols(spark_dots());
	}
	for (f = 0; f < nf; f++) {
		k = hist_series(p, n, f, s);
		if (!spark_range(s, k, &lo, &hi)) {
			sbuf_puts(o, "  ");
			text_abbrev(o, label[f], label_cols);
			for (k = text_cols(label[f]); k < label_cols; k++)
				sbuf_putc(o, ' ');
			sbuf_puts(o, " n/a\n");
			continue;
		}
		fmt[f](a, sizeof(a), lo);
		fmt[f](b, sizeof(b), hi);
		spark_row(o, label[f], label_cols, a, b, rc, s, k, width);
	}
	free(s);
}

void
fmt_process_spark(struct sbuf *o, const Vitals__ProcessInfo *pi,
    const struct fmt_ctx *c)
{
	static const char *const label[] = { "core", "minflt", "majflt",
		"rss_kB" };
	static const hist_fmt fmt[] = { put_pct, put_count, put_count,
		put_count };
	struct hist_point *p;
	double *v;
	size_t i, n = 0;

	if (pi->n_history < 2)
		return;
	p = calloc(pi->n_history, sizeof(*p));
	v = calloc(pi->n_history * 4, sizeof(*v));
	if (p == NULL || v == NULL) {
		free(p);
		free(v);
		o->err = -1;
		return;
	}
	for (i = 0; i < pi->n_history; i++) {
		const Vitals__HistoryPoint *h = pi->history[i];
		const Vitals__Task *t = h->task;

		if (t == NULL)
			continue;
		p[n].start = h->wall_start_ns;
		p[n].end = h->wall_end_ns;
		p[n].v = v + n * 4;
		v[n * 4] = fig_core_equiv(t->d_utime + t->d_stime, t->wall_ns,
		    h->hz);
		v[n * 4 + 1] = (double)t->d_minflt;
		v[n * 4 + 2] = (double)t->d_majflt;
		v[n * 4 + 3] = (double)(t->rss_pages_max * c->page_kb);
		n++;
	}
	hist_draw(o, p, n, label, fmt, 4, 10, 1,
	    c->width ? c->width : TEXT_WIDTH);
	free(p);
	free(v);
}

/* busy, iowait and steal of the whole machine, then each CPU's busy. */
void
fmt_cpu_spark(struct sbuf *o, Vitals__Window **w, size_t nw,
    const struct fmt_ctx *c)
{
	const char *label[HIST_FIGS_MAX];
	hist_fmt fmt[HIST_FIGS_MAX];
	char names[HIST_FIGS_MAX][16];
	struct hist_point *p;
	double *v, *pv;
	size_t i, k, nf = 3, n = 0;

	if (nw < 2)
		return;
	p = calloc(nw, sizeof(*p));
	v = calloc(nw * HIST_FIGS_MAX, sizeof(*v));
	if (p == NULL || v == NULL) {
		free(p);
		free(v);
		o->err = -1;
		return;
	}
	label[0] = "busy";
	label[1] = "iowait";
	label[2] = "steal";
	/* the CPUs of the newest window name the rows */
	for (k = 0; k < w[nw - 1]->n_cpus && nf < HIST_FIGS_MAX; k++) {
		snprintf(names[nf], sizeof(names[nf]), "cpu%d",
		    w[nw - 1]->cpus[k]->cpu);
		label[nf] = names[nf];
		nf++;
	}
	for (k = 0; k < nf; k++)
		fmt[k] = put_pct;
	for (i = 0; i < nw; i++) {
		const Vitals__CpuTimes *d = w[i]->all ? w[i]->all->d : NULL;
		uint64_t total = fig_cpu_total(d);

		p[n].start = w[i]->wall_start_ns;
		p[n].end = w[i]->wall_end_ns;
		p[n].v = pv = v + n * HIST_FIGS_MAX;
		pv[0] = fig_ratio(fig_cpu_busy(d), total);
		pv[1] = fig_ratio(d ? d->iowait : 0, total);
		pv[2] = fig_ratio(d ? d->steal : 0, total);
		for (k = 3; k < nf; k++) {
			const char *want = names[k] + 3;
			size_t j;

			pv[k] = NAN;
			for (j = 0; j < w[i]->n_cpus; j++) {
				const Vitals__Cpu *cp = w[i]->cpus[j];
				char id[16];

				snprintf(id, sizeof(id), "%d", cp->cpu);
				if (strcmp(id, want) == 0 && cp->d)
					pv[k] = fig_ratio(fig_cpu_busy(cp->d),
					    fig_cpu_total(cp->d));
			}
		}
		n++;
	}
	hist_draw(o, p, n, label, fmt, nf, 10, 1,
	    c->width ? c->width : TEXT_WIDTH);
	free(p);
	free(v);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Counts over points known by their ends alone (gpumem --since): each
 * point is taken to span the median step between ends, so a longer step
 * (the daemon was down) leaves gaps as a missing window does in proc's
 * history. v[i * nf + f]: figure f at point i, NAN where unknown.
 */
void
fmt_hist_ends(struct sbuf *o, const int64_t *end, size_t n, const double *v,
    size_t nf, const char *const *label, size_t label_cols, unsigned step,
    const struct fmt_ctx *c)
{
	struct hist_point *p;
	hist_fmt *fmt;
	int64_t *d, len;
	size_t i;

	if (n < 2 || nf == 0)
		return;
	p = calloc(n, sizeof(*p));
	d = calloc(n - 1, sizeof(*d));
	fmt = calloc(nf, sizeof(*fmt));
	if (p == NULL || d == NULL || fmt == NULL) {
		o->err = -1;
		goto out;
	}
	for (i = 1; i < n; i++)
		d[i - 1] = end[i] - end[i - 1];
	qsort(d, n - 1, sizeof(*d), cmp_i64);
	len = d[(n - 1) / 2] > 0 ? d[(n - 1) / 2] : 0;
	for (i = 0; i < n; i++) {
		p[i].start = end[i] - len;
		p[i].end = end[i];
		p[i].v = v + i * nf;
	}
	for (i = 0; i < nf; i++)
		fmt[i] = put_count;
	hist_draw(o, p, n, label, fmt, nf, label_cols, step,
	    c->width ? c->width : TEXT_WIDTH);
out:
	free(p);
	free(d);
	free(fmt);
}
