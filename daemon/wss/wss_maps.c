/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor's pure half: /proc/<pid>/maps lines, which of
 * them a target samples and under which label, and the adaptive interval.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "wss/wss.h"

/* Thresholds of the adaptive interval: accessed / resident. */
#define WSS_FRAC_HIGH 0.10 /* above: sample more often */
#define WSS_FRAC_LOW 0.01  /* below: less often */

const char *
wss_mode_name(unsigned mode)
{
	return mode == WSS_MODE_LIBRARY ? "library" : "heap";
}

const char *
wss_method_name(unsigned method)
{
	switch (method) {
	case WSS_METHOD_PAGE_IDLE:
		return "page_idle";
	case WSS_METHOD_CLEAR_REFS:
		return "clear_refs";
	default:
		return "auto";
	}
}

static int
hex_field(const char **p, const char *e, char stop, uint64_t *ret)
{
	uint64_t v = 0;
	const char *s = *p;
	int c, n = 0;

	while (s < e && *s != stop) {
		c = *s;
		if (c >= '0' && c <= '9')
			c -= '0';
		else if (c >= 'a' && c <= 'f')
			c -= 'a' - 10;
		else if (c >= 'A' && c <= 'F')
			c -= 'A' - 10;
		else
			return -EINVAL;
		if (v >> 60)
			return -ERANGE;
		v = v << 4 | (uint64_t)c;
		s++;
		n++;
	}
	if (n == 0 || s == e)
		return -EINVAL;
	*p = s + 1;
	*ret = v;
	return 0;
}

/*
 * "start-end perms offset major:minor inode   path": the path is the rest
 * of the line after the blanks (it may hold blanks, and " (deleted)").
 */
int
wss_maps_line(const char *line, size_t len, struct wss_map *ret)
{
	const char *p = line, *e = line + len;
	struct wss_map m;
	uint64_t dev;
	size_t n;

	memset(&m, 0, sizeof(m));
	while (e > p && (e[-1] == '\n' || e[-1] == '\r'))
		e--;
	if (hex_field(&p, e, '-', &m.start) < 0 ||
	    hex_field(&p, e, ' ', &m.end) < 0 || m.end <= m.start)
		return -EINVAL;
	/* perms: exactly [r-][w-][x-][ps] */
	if (e - p < 5 || p[4] != ' ' || (p[0] != 'r' && p[0] != '-') ||
	    (p[1] != 'w' && p[1] != '-') || (p[2] != 'x' && p[2] != '-') ||
	    (p[3] != 'p' && p[3] != 's'))
		return -EINVAL;
	memcpy(m.perms, p, 4);
	p += 5;
	if (hex_field(&p, e, ' ', &m.offset) < 0 ||
	    hex_field(&p, e, ':', &dev) < 0 || hex_field(&p, e, ' ', &dev) < 0)
		return -EINVAL;
	/* inode: decimal, then blanks, then the path (or the end) */
	if (p >= e || *p < '0' || *p > '9')
		return -EINVAL;
	while (p < e && *p >= '0' && *p <= '9') {
		if (m.inode > UINT64_MAX / 10)
			return -ERANGE;
		m.inode = m.inode * 10 + (uint64_t)(*p++ - '0');
	}
	if (p < e && *p != ' ')
		return -EINVAL;
	while (p < e && *p == ' ')
		p++;
	n = (size_t)(e - p);
	if (n >= sizeof(m.path))
		n = sizeof(m.path) - 1;
	memcpy(m.path, p, n);
	m.path[n] = '\0';
	*ret = m;
	return 0;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * heap: [heap] and anonymous mappings, Android's named anonymous ones
 * ([anon:libc_malloc], [anon:scudo:...]) included; stacks, the vDSO and
 * inaccessible guard mappings are not heap.
 * library: the mappings of the file whose base name is lib. When the
 * library is nowhere in maps, apk_fallback selects base.apk's r-xp and
 * rw-p mappings: a library loaded straight from the APK shows only that.
 */
bool
wss_map_selected(const struct wss_map *m, enum wss_mode mode, const char *lib,
    bool apk_fallback)
{
	if (m->perms[0] != 'r')
		return false;
	if (mode == WSS_MODE_HEAP) {
		if (m->path[0] == '\0')
			return m->inode == 0;
		return strcmp(m->path, "[heap]") == 0 ||
		    strncmp(m->path, "[anon:", 6) == 0;
	}
	if (m->path[0] != '/')
		return false;
	if (apk_fallback)
		return strcmp(base_name(m->path), "base.apk") == 0 &&
		    (strcmp(m->perms, "r-xp") == 0 ||
			strcmp(m->perms, "rw-p") == 0);
	return lib && strcmp(base_name(m->path), lib) == 0;
}

/* The source document's labels: "heap", or perms(file) for a library. */
void
wss_map_label(const struct wss_map *m, enum wss_mode mode, char *ret,
    size_t retsz)
{
	if (mode == WSS_MODE_HEAP)
		snprintf(ret, retsz, "heap");
	else
		snprintf(ret, retsz, "%s(%s)", m->perms, base_name(m->path));
}

/* FNV-1a: tells whether maps changed since the last read. */
uint64_t
wss_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Lengthen the interval when almost nothing was accessed (the pass saw too
 * little to tell pages apart), shorten it when much was (pages touched
 * more than once look alike), within [min, max]. No resident page: keep.
 */
unsigned
wss_adapt_interval(unsigned cur_ms, uint64_t accessed, uint64_t resident,
    unsigned min_ms, unsigned max_ms)
{
	double f;
	unsigned next = cur_ms;

	if (resident > 0) {
		f = (double)accessed / (double)resident;
		if (f > WSS_FRAC_HIGH)
			next = cur_ms / 2;
		else if (f < WSS_FRAC_LOW)
			next = cur_ms > UINT32_MAX / 2 ? UINT32_MAX :
							 cur_ms * 2;
	}
	if (next < min_ms)
		next = min_ms;
	if (next > max_ms)
		next = max_ms;
	return next;
}
