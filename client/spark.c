/* SPDX-License-Identifier: Apache-2.0 */
/*
 * History as a picture: a series drawn in 8 levels between its own min
 * and max. An unknown point (NAN: no window, or no reading) is a space,
 * never the lowest level, which is why the ASCII levels start at '_'
 * rather than a space. A series longer than the width is cut into equal
 * buckets and each column shows its bucket's max (a one-window spike stays
 * visible); a bucket with no known point is a gap.
 */
#include <math.h>
#include <string.h>

#include "client.h"

static const char *const blocks[8] = {
	"\xe2\x96\x81",
	"\xe2\x96\x82",
	"\xe2\x96\x83",
	"\xe2\x96\x84",
	"\xe2\x96\x85",
	"\xe2\x96\x86",
	"\xe2\x96\x87",
	"\xe2\x96\x88",
};
static const char ascii[] = "_.:-=+*#";

/* between a row's min and max */
const char *
spark_dots(void)
{
	return text_utf8() ? "\xe2\x80\xa6" : "..";
}

bool
spark_range(const double *v, size_t n, double *ret_lo, double *ret_hi)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (lo > hi)
		return false;
	*ret_lo = lo;
	*ret_hi = hi;
	return true;
}

/* The max of the known points in [from, to), NAN when none is known. */
static double
bucket_max(const double *v, size_t from, size_t to)
{
	double m = NAN;

	for (; from < to; from++)
		if (isfinite(v[from]) && (!isfinite(m) || v[from] > m))
			m = v[from];
	return m;
}

void
spark_line(struct sbuf *o, const double *v, size_t n, size_t width)
{
	double lo, hi, x;
	size_t cols = n < width ? n : width, k;
	bool utf8 = text_utf8();

	if (cols == 0)
		return;
	if (!spark_range(v, n, &lo, &hi))
		lo = hi = 0;
	for (k = 0; k < cols; k++) {
		unsigned level;

		/* bucket k holds points [k·n/cols, (k+1)·n/cols) */
		x = bucket_max(v, k * n / cols, (k + 1) * n / cols);
		if (!isfinite(x)) {
			sbuf_putc(o, ' ');
			continue;
		}
		/* a flat series sits on the lowest level */
		level = hi > lo ? (unsigned)lround((x - lo) / (hi - lo) * 7) :
				  0;
		if (level > 7)
			level = 7;
		if (utf8)
			sbuf_puts(o, blocks[level]);
		else
			sbuf_putc(o, ascii[level]);
	}
}

/*
 * "  label      lo…hi  ▁▂▅█" in width columns: the label abbreviated to
 * label_cols, the series after range_cols columns of range (rows align);
 * the series takes what the label and range leave, and goes to its own
 * indented line when that is less than a quarter of the width.
 */
void
spark_row(struct sbuf *o, const char *label, size_t label_cols, const char *lo,
    const char *hi, size_t range_cols, const double *v, size_t n, size_t width)
{
	size_t cols, lc = text_cols(label);
	const char *dots = spark_dots();

	sbuf_puts(o, "  ");
	text_abbrev(o, label, label_cols);
	cols = 2 + (lc < label_cols ? lc : label_cols);
	for (; cols < 3 + label_cols; cols++)
		sbuf_putc(o, ' ');
	sbuf_printf(o, "%s%s%s  ", lo, dots, hi);
	cols += text_cols(lo) + text_cols(dots) + text_cols(hi) + 2;
	/* the series of every row start in one column */
	for (; cols < 3 + label_cols + range_cols + 2; cols++)
		sbuf_putc(o, ' ');
	if (cols + width / 4 > width) {
		sbuf_puts(o, "\n    ");
		cols = 4;
	}
	spark_line(o, v, n, width - cols);
	sbuf_putc(o, '\n');
}
