/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tables that fit a width. Columns are as wide as their widest cell, at
 * least their minimum (the old fixed widths, so narrow data prints as it
 * always did). When a row is wider than the width, the one flexible
 * column (a name) gives up columns down to TABLE_FLEX_MIN, its cells
 * abbreviated (text_abbrev); when that is not enough the columns wrap:
 * every row, and the header, takes the same two or more lines, the later
 * ones indented, so a row is never cut and numbers are never shortened.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define TABLE_FLEX_MIN 12
#define TABLE_WRAP_INDENT 4

struct table_col {
	const char *head;
	size_t min, gap, w;
	unsigned flags;
	size_t line; /* which line of a wrapped row */
};

struct table {
	struct table_col col[TABLE_COLS_MAX];
	size_t ncols;
	char **cell; /* row-major, ncols per row */
	size_t ncells, cap;
	int err;
};

struct table *
table_new(void)
{
	return calloc(1, sizeof(struct table));
}

struct table *
table_free(struct table *t)
{
	size_t i;

	if (t == NULL)
		return NULL;
	for (i = 0; i < t->ncells; i++)
		free(t->cell[i]);
	free(t->cell);
	free(t);
	return NULL;
}

void
table_col(struct table *t, const char *head, size_t min, size_t gap,
    unsigned flags)
{
	struct table_col *c;

	if (t->ncols == TABLE_COLS_MAX) {
		t->err = -1;
		return;
	}
	c = &t->col[t->ncols++];
	c->head = head;
	c->min = min;
	c->gap = gap; /* of the first column: the rows' indent */
	c->flags = flags;
}

static void
table_push(struct table *t, char *s)
{
	char **p;

	if (s == NULL) {
		t->err = -1;
		return;
	}
	if (t->ncells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;

		if ((p = realloc(t->cell, cap * sizeof(*p))) == NULL) {
			free(s);
			t->err = -1;
			return;
		}
		t->cell = p;
		t->cap = cap;
	}
	t->cell[t->ncells++] = s;
}

void
table_cell(struct table *t, const char *fmt, ...)
{
	struct sbuf b;
	va_list ap;

	sbuf_init(&b);
	va_start(ap, fmt);
	sbuf_vprintf(&b, fmt, ap);
	va_end(ap);
	table_push(t, b.err ? NULL : strdup(sbuf_str(&b)));
	sbuf_free(&b);
}

/* A process-supplied name: control bytes shown as '?' (fmt_label). */
void
table_label(struct table *t, const char *s)
{
	struct sbuf b;

	sbuf_init(&b);
	fmt_label(&b, s);
	table_push(t, b.err ? NULL : strdup(sbuf_str(&b)));
	sbuf_free(&b);
}

static void
pad(struct sbuf *o, size_t n)
{
	while (n-- > 0)
		sbuf_putc(o, ' ');
}

/* One cell in its column; the last cell of a line is not padded. */
static void
put_cell(struct sbuf *o, const struct table_col *c, const char *s, bool last)
{
	size_t cols = text_cols(s);

	pad(o, c->gap);
	/* only text columns are ever narrower than a cell (layout) */
	if (cols > c->w) {
		text_abbrev(o, s, c->w);
		cols = c->w;
		if (!last)
			pad(o, c->w - cols);
		return;
	}
	if (!(c->flags & TABLE_LEFT))
		pad(o, c->w > cols ? c->w - cols : 0);
	sbuf_puts(o, s);
	if ((c->flags & TABLE_LEFT) && !last)
		pad(o, c->w > cols ? c->w - cols : 0);
}

/* Columns to lines: everything on line 0 when it fits, else the flexible
 * column shrinks, else greedy packing with indented continuations.
 * Returns the number of lines. */
static size_t
layout(struct table *t, size_t width)
{
	size_t i, r, total = 0, flex = SIZE_MAX, line, used;
	bool empty;

	for (i = 0; i < t->ncols; i++) {
		struct table_col *c = &t->col[i];
		size_t w = text_cols(c->head);

		if (w < c->min)
			w = c->min;
		for (r = i; r < t->ncells; r += t->ncols) {
			size_t cw = text_cols(t->cell[r]);

			if (cw > w)
				w = cw;
		}
		c->w = w;
		c->line = 0;
		total += c->gap + w;
		if (c->flags & TABLE_FLEX)
			flex = i;
	}
	if (total <= width)
		return 1;
	if (flex != SIZE_MAX &&
	    total - t->col[flex].w + TABLE_FLEX_MIN <= width) {
		t->col[flex].w = width - (total - t->col[flex].w);
		return 1;
	}
	line = 0;
	used = 0;
	empty = true;
	for (i = 0; i < t->ncols; i++) {
		struct table_col *c = &t->col[i];

		/* a text column wider than a continuation line gives way */
		if (c->flags & TABLE_LEFT && c->w + TABLE_WRAP_INDENT > width &&
		    width > TABLE_WRAP_INDENT + TABLE_FLEX_MIN)
			c->w = width - TABLE_WRAP_INDENT;
	}
	for (i = 0; i < t->ncols; i++) {
		struct table_col *c = &t->col[i];
		size_t gap = empty && line > 0 ? 0 : c->gap, w = c->w;

		if (c->flags & TABLE_FLEX && w > TABLE_FLEX_MIN)
			w = TABLE_FLEX_MIN;
		if (!empty && used + gap + w > width) {
			line++;
			used = TABLE_WRAP_INDENT;
			gap = 0;
		}
		c->line = line;
		if (c->flags & TABLE_FLEX && used + gap + c->w > width)
			c->w = width > used + gap + w ? width - used - gap : w;
		used += gap + c->w;
		empty = false;
	}
	return line + 1;
}

static void
put_row(struct sbuf *o, const struct table *t, const char *const *cells,
    size_t lines)
{
	size_t l, i;

	for (l = 0; l < lines; l++) {
		bool first = true;
		size_t last = 0, start = o->len;

		for (i = 0; i < t->ncols; i++)
			if (t->col[i].line == l)
				last = i;
		for (i = 0; i < t->ncols; i++) {
			struct table_col c = t->col[i];

			if (c.line != l)
				continue;
			if (first && l > 0) {
				pad(o, TABLE_WRAP_INDENT);
				c.gap = 0;
			}
			first = false;
			put_cell(o, &c, cells[i], i == last);
		}
		/* an empty last cell leaves its gap behind */
		while (!o->err && o->len > start && o->buf[o->len - 1] == ' ')
			o->buf[--o->len] = '\0';
		sbuf_putc(o, '\n');
	}
}

/* The header and every row in width columns (0: no limit). */
void
table_render(struct table *t, struct sbuf *o, size_t width)
{
	const char *head[TABLE_COLS_MAX];
	size_t lines, i, r;

	if (t->err || t->ncells % (t->ncols ? t->ncols : 1)) {
		sbuf_puts(o, "out of memory\n");
		return;
	}
	lines = layout(t, width ? width : SIZE_MAX / 4);
	for (i = 0; i < t->ncols; i++)
		head[i] = t->col[i].head;
	put_row(o, t, head, lines);
	for (r = 0; t->ncols && r < t->ncells; r += t->ncols)
		put_row(o, t, (const char *const *)&t->cell[r], lines);
}

size_t
table_rows(const struct table *t)
{
	return t->ncols ? t->ncells / t->ncols : 0;
}
