/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ATrace marker protocol: one trace_marker payload parsed into a
 * message (the protocol is described in atrace.c). No state, no I/O.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "trace/trace.h"

static int
parse_i64(const char *p, size_t n, int64_t *ret)
{
	bool neg = false;
	uint64_t v = 0;
	size_t i = 0;

	if (n > 0 && (p[0] == '-' || p[0] == '+')) {
		neg = p[0] == '-';
		i++;
	}
	if (i == n)
		return -EBADMSG;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EBADMSG;
		if (v > (uint64_t)INT64_MAX / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX + neg)
		return -ERANGE;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static const char *
field_end(const char *p, const char *end)
{
	const char *q = memchr(p, '|', (size_t)(end - p));

	return q ? q : end;
}

static const char *
last_bar(const char *p, const char *end)
{
	const char *q;

	for (q = end; q > p; q--)
		if (q[-1] == '|')
			return q - 1;
	return NULL;
}

/*
 * One trace_marker payload. -EINVAL: not an ATrace marker at all (a plain
 * trace_marker write); -EBADMSG: an ATrace type with malformed fields.
 */
int
atrace_parse(const char *buf, size_t len, struct atrace_msg *ret)
{
	struct atrace_msg m = { 0 };
	const char *end, *p, *f, *b;
	int64_t v;

	len = strnlen(buf, len);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
		len--;
	if (len == 0)
		return -EINVAL;
	switch (buf[0]) {
	case 'B':
	case 'E':
	case 'C':
	case 'S':
	case 'F':
	case 'G':
	case 'H':
	case 'I':
	case 'N':
		break;
	default:
		return -EINVAL;
	}
	m.type = buf[0];
	end = buf + len;
	if (len == 1) {
		if (m.type != 'E')
			return -EBADMSG;
		*ret = m;
		return 0;
	}
	if (buf[1] != '|')
		return -EINVAL;
	p = buf + 2;
	f = field_end(p, end);
	if (parse_i64(p, (size_t)(f - p), &v) < 0 || v < INT32_MIN ||
	    v > INT32_MAX)
		return m.type == 'E' && f == p ? -EBADMSG : -EBADMSG;
	m.pid = (int32_t)v;
	m.have_pid = true;
	p = f < end ? f + 1 : end;
	switch (m.type) {
	case 'E':
		break; /* anything after the pid is not used */
	case 'B':
	case 'I':
		if (f == end)
			return -EBADMSG;
		m.name = p;
		m.name_len = (size_t)(end - p);
		break;
	case 'C':
		if (f == end || (f = field_end(p, end)) == end)
			return -EBADMSG;
		m.name = p;
		m.name_len = (size_t)(f - p);
		b = f + 1;
		f = field_end(b, end); /* a category may follow */
		if (parse_i64(b, (size_t)(f - b), &m.value) < 0)
			return -EBADMSG;
		break;
	case 'S':
	case 'F':
		if (f == end || (b = last_bar(p, end)) == NULL || b < p)
			return -EBADMSG;
		m.name = p;
		m.name_len = (size_t)(b - p);
		if (parse_i64(b + 1, (size_t)(end - b - 1), &m.cookie) < 0)
			return -EBADMSG;
		break;
	case 'G':
	case 'H':
	case 'N':
		if (f == end || (f = field_end(p, end)) == end)
			return -EBADMSG;
		m.track = p;
		m.track_len = (size_t)(f - p);
		if (m.type == 'N') {
			m.name = f + 1;
			m.name_len = (size_t)(end - f - 1);
			break;
		}
		b = last_bar(f + 1, end);
		if (m.type == 'G') {
			if (b == NULL || b < f + 1)
				return -EBADMSG;
			m.name = f + 1;
			m.name_len = (size_t)(b - f - 1);
		} else if (b == NULL || b < f + 1) {
			b = f; /* H|pid|track|cookie */
		}
		if (parse_i64(b + 1, (size_t)(end - b - 1), &m.cookie) < 0)
			return -EBADMSG;
		break;
	}
	*ret = m;
	return 0;
}
