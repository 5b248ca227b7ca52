/* SPDX-License-Identifier: Apache-2.0 */
/* One line of a maps file: maps.h. */
#include "core/maps.h"

/* Hex digits up to a stop character; false: none, too many, or not it. */
static bool
hex_to(const char **pp, const char *end, char stop, uint64_t *ret)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned n = 0;

	while (p < end && *p != stop) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else
			return false;
		if (++n > 16)
			return false;
		v = v << 4 | d;
		p++;
	}
	if (n == 0 || p == end)
		return false;
	*pp = p + 1;
	*ret = v;
	return true;
}

bool
maps_line_parse(const char *p, const char *end, struct maps_line *ret)
{
	uint64_t start, stop, off, maj, min, ino = 0;
	const char *perm;
	unsigned n = 0;

	if (!hex_to(&p, end, '-', &start) || !hex_to(&p, end, ' ', &stop) ||
	    stop <= start || end - p < 5)
		return false;
	perm = p;
	if ((perm[0] != 'r' && perm[0] != '-') ||
	    (perm[1] != 'w' && perm[1] != '-') ||
	    (perm[2] != 'x' && perm[2] != '-') ||
	    (perm[3] != 'p' && perm[3] != 's') || perm[4] != ' ')
		return false;
	p += 5;
	if (!hex_to(&p, end, ' ', &off) || !hex_to(&p, end, ':', &maj) ||
	    !hex_to(&p, end, ' ', &min) || maj > 0xfff || min > 0xfffff)
		return false;
	while (p < end && *p >= '0' && *p <= '9') {
		if (++n > 20)
			return false;
		ino = ino * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (n == 0 || (p < end && *p != ' '))
		return false;
	while (p < end && *p == ' ')
		p++;
	ret->start = start;
	ret->end = stop;
	ret->off = off;
	ret->ino = ino;
	ret->dev = (uint32_t)(maj << 20 | min);
	ret->perms[0] = perm[0];
	ret->perms[1] = perm[1];
	ret->perms[2] = perm[2];
	ret->perms[3] = perm[3];
	ret->path = p;
	ret->plen = (size_t)(end - p);
	return true;
}
