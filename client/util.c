/* SPDX-License-Identifier: Apache-2.0 */
/* Strings, numbers and durations for the client. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"

void
sbuf_init(struct sbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void
sbuf_free(struct sbuf *b)
{
	if (b == NULL)
		return;
	free(b->buf);
	sbuf_init(b);
}

void
sbuf_reset(struct sbuf *b)
{
	b->len = 0;
	if (b->buf)
		b->buf[0] = '\0';
}

static int
sbuf_grow(struct sbuf *b, size_t extra)
{
	size_t cap;
	char *p;

	if (b->err)
		return -1;
	if (b->len + extra + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	if ((p = realloc(b->buf, cap)) == NULL) {
		b->err = -ENOMEM;
		return -1;
	}
	b->buf = p;
	b->cap = cap;
	return 0;
}

void
sbuf_put(struct sbuf *b, const char *s, size_t n)
{
	if (sbuf_grow(b, n) < 0)
		return;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void
sbuf_puts(struct sbuf *b, const char *s)
{
	sbuf_put(b, s, strlen(s));
}

void
sbuf_putc(struct sbuf *b, char c)
{
	sbuf_put(b, &c, 1);
}

void
sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || sbuf_grow(b, (size_t)n) < 0)
		return;
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *
sbuf_str(const struct sbuf *b)
{
	return b->buf ? b->buf : "";
}

/* A decimal without sign, whitespace or trailing bytes, at most max. */
int
uint_parse(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		unsigned d;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static int64_t
unit_ns(const char *u, size_t n)
{
	static const struct {
		const char *name;
		int64_t ns;
	} units[] = {
		{ "ms", 1000000LL },
		{ "s", VITALS_NSEC_PER_SEC },
		{ "m", 60 * VITALS_NSEC_PER_SEC },
		{ "h", 3600 * VITALS_NSEC_PER_SEC },
		{ "d", 86400 * VITALS_NSEC_PER_SEC },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == n &&
		    memcmp(units[i].name, u, n) == 0)
			return units[i].ns;
	return 0;
}

/*
 * "30s", "5m", "2h", "1d", "250ms", "1.5h", "1h30m"; a bare number is
 * seconds. Each term is digits with an optional fraction and a unit; terms
 * add up. No sign, no spaces; -EINVAL on syntax, -ERANGE beyond int64 ns.
 */
int
duration_parse(const char *s, int64_t *ret_ns)
{
	int64_t total = 0;
	bool bare_ok;
	const char *p = s;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	bare_ok = true;
	while (*p) {
		uint64_t ip = 0, frac = 0, fdiv = 1;
		const char *u;
		int64_t unit, term;
		bool digits = false;

		for (; isdigit((unsigned char)*p); p++, digits = true) {
			if (ip > (UINT64_MAX - 9) / 10)
				return -ERANGE;
			ip = ip * 10 + (uint64_t)(*p - '0');
		}
		if (*p == '.') {
			p++;
			for (; isdigit((unsigned char)*p); p++, digits = true)
				if (fdiv < 1000000000ULL) {
					frac = frac * 10 + (uint64_t)(*p - '0');
					fdiv *= 10;
				}
		}
		if (!digits)
			return -EINVAL;
		for (u = p; isalpha((unsigned char)*p); p++)
			;
		if (u == p) {
			/* only the whole string may be a bare number */
			if (!bare_ok || *p != '\0')
				return -EINVAL;
			unit = VITALS_NSEC_PER_SEC;
		} else if ((unit = unit_ns(u, (size_t)(p - u))) == 0) {
			return -EINVAL;
		}
		bare_ok = false;
		if (ip > (uint64_t)INT64_MAX / (uint64_t)unit)
			return -ERANGE;
		term = (int64_t)ip * unit;
		/* frac < fdiv ≤ 10⁹, unit ≤ 86400·10⁹: split as
		 * frac·(unit / fdiv) + frac·(unit % fdiv) / fdiv, neither
		 * product overflows */
		term += (int64_t)(frac * (uint64_t)(unit / (int64_t)fdiv)) +
		    (int64_t)(frac * (uint64_t)(unit % (int64_t)fdiv) / fdiv);
		if (term < 0 || total > INT64_MAX - term)
			return -ERANGE;
		total += term;
	}
	*ret_ns = total;
	return 0;
}

/* "850ms", "10.0s", "5m00s", "2h05m", "3d04h": compact, for labels. */
void
duration_format(char *buf, size_t len, int64_t ns)
{
	int64_t s;

	if (ns < 0) {
		snprintf(buf, len, "n/a");
		return;
	}
	if (ns < VITALS_NSEC_PER_SEC) {
		snprintf(buf, len, "%lldms", (long long)(ns / 1000000));
		return;
	}
	if (ns < 60 * VITALS_NSEC_PER_SEC) {
		snprintf(buf, len, "%.1fs", (double)ns / VITALS_NSEC_PER_SEC);
		return;
	}
	s = ns / VITALS_NSEC_PER_SEC;
	if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(s / 60),
		    (long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600),
		    (long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%lldd%02lldh", (long long)(s / 86400),
		    (long long)(s % 86400 / 3600));
}

/* "12.3%", or "n/a" for an unknown ratio (1.0 = 100 %). */
void
fmt_pct(char *buf, size_t len, double ratio)
{
	if (!isfinite(ratio))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f%%", ratio * 100.0);
}

/* Local time with milliseconds; "n/a" for a missing stamp. */
void
fmt_time(char *buf, size_t len, int64_t wall_ns)
{
	time_t t = (time_t)(wall_ns / VITALS_NSEC_PER_SEC);
	struct tm tm;
	char s[32];

	if (wall_ns <= 0 || localtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "n/a");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03d", s,
	    (int)(wall_ns % VITALS_NSEC_PER_SEC / 1000000));
}

int64_t
clock_now_ns(int clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * VITALS_NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * A process-supplied label (comm, cmdline) for a terminal: control bytes
 * become '?', so a process cannot send escape sequences to the reader's
 * terminal through its name.
 */
void
fmt_label(struct sbuf *o, const char *s)
{
	if (s == NULL || *s == '\0') {
		sbuf_puts(o, "?");
		return;
	}
	for (; *s; s++)
		sbuf_putc(o,
		    ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s);
}

/* The process name (cmdline), else comm. */
const char *
fmt_task_label(const Vitals__Task *t)
{
	return t->name && *t->name ? t->name : t->comm;
}
