/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text for a terminal: display columns (one per code point: the client
 * prints no wide characters of its own, and a name's wide ones count one,
 * which at worst makes a row a little wider than counted), the
 * abbreviation of names that do not fit, and the wrapping of prose lines.
 * The locale decides once whether the marks are UTF-8 or ASCII.
 */
#include <langinfo.h>
#include <locale.h>
#include <string.h>
#include <strings.h>

#include "client.h"

static bool text_is_utf8;

void
text_set_utf8(bool on)
{
	text_is_utf8 = on;
}

bool
text_utf8(void)
{
	return text_is_utf8;
}

/* LC_CTYPE from the environment; UTF-8 when its codeset says so. */
void
text_locale_init(void)
{
	const char *cs;

	setlocale(LC_CTYPE, "");
	cs = nl_langinfo(CODESET);
	text_is_utf8 = cs &&
	    (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
}

const char *
text_ellipsis(void)
{
	return text_is_utf8 ? "\xe2\x80\xa6" : "~";
}

/* Columns of n bytes of s: every byte that does not continue a UTF-8
 * sequence starts a code point. */
size_t
text_ncols(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

size_t
text_cols(const char *s)
{
	return text_ncols(s, strlen(s));
}

/* Bytes of s that make its first cols code points. */
static size_t
text_prefix(const char *s, size_t len, size_t cols)
{
	size_t i, c = 0;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (c == cols)
				break;
			c++;
		}
	}
	return i;
}

/*
 * s in at most max columns: whole when it fits, else its first max - 1
 * code points and the marker (… in UTF-8, ~ in ASCII). Names only: a
 * number is never passed here.
 */
void
text_abbrev(struct sbuf *o, const char *s, size_t max)
{
	size_t len = strlen(s);

	if (text_ncols(s, len) <= max) {
		sbuf_put(o, s, len);
		return;
	}
	if (max == 0)
		return;
	sbuf_put(o, s, text_prefix(s, len, max - 1));
	sbuf_puts(o, text_ellipsis());
}

/* A process-supplied name (fmt_label: control bytes as '?') in at most
 * max columns. */
void
text_label(struct sbuf *o, const char *s, size_t max)
{
	struct sbuf b;

	sbuf_init(&b);
	fmt_label(&b, s);
	if (b.err)
		o->err = b.err;
	else
		text_abbrev(o, sbuf_str(&b), max);
	sbuf_free(&b);
}

/* One line (without its newline) wrapped at spaces into width columns;
 * continuation lines are indented by four more than the line's own
 * indent. A word longer than a line is cut where the line ends. */
static void
fit_line(struct sbuf *o, const char *s, size_t n, size_t width)
{
	size_t ind = 0, cont, used, i;

	if (width < 16)
		width = 16; /* room for a word and an indent */
	while (ind < n && s[ind] == ' ')
		ind++;
	cont = ind + 4;
	if (cont + 8 > width)
		cont = 2;
	used = 0;
	for (;;) {
		size_t room = width - used, take, brk;

		if (text_ncols(s, n) <= room) {
			sbuf_put(o, s, n);
			sbuf_putc(o, '\n');
			return;
		}
		take = text_prefix(s, n, room);
		/* the last space that leaves something on this line */
		for (brk = take; brk > 0 && s[brk] != ' '; brk--)
			;
		if (brk == 0 || text_ncols(s, brk) <= (used ? 0 : ind))
			brk = take;
		i = brk;
		while (i > 0 && s[i - 1] == ' ')
			i--;
		sbuf_put(o, s, i);
		sbuf_putc(o, '\n');
		while (brk < n && s[brk] == ' ')
			brk++;
		s += brk;
		n -= brk;
		if (n == 0)
			return;
		for (i = 0; i < cont; i++)
			sbuf_putc(o, ' ');
		used = cont;
	}
}

/* Every line of in that is wider than width, wrapped (text_fit_line). */
void
text_fit(struct sbuf *o, const char *in, size_t width)
{
	while (*in) {
		const char *nl = strchr(in, '\n');
		size_t n = nl ? (size_t)(nl - in) : strlen(in);

		fit_line(o, in, n, width);
		in += n + (nl != NULL);
	}
}
