/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor's pure half: /proc/<pid>/maps lines, which of
 * them a target samples and under which label, and the adaptive interval.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/maps.h"
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

/*
 * "start-end perms offset major:minor inode   path": the path is the rest
 * of the line after the blanks (it may hold blanks, and " (deleted)");
 * core/maps.c reads the line, this keeps what a pass needs.
 */
int
wss_maps_line(const char *line, size_t len, struct wss_map *ret)
{
	const char *e = line + len;
	struct maps_line l;
	struct wss_map m;
	size_t n;

	while (e > line && (e[-1] == '\n' || e[-1] == '\r'))
		e--;
	if (!maps_line_parse(line, e, &l))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.start = l.start;
	m.end = l.end;
	m.offset = l.off;
	m.inode = l.ino;
	memcpy(m.perms, l.perms, 4);
	n = l.plen < sizeof(m.path) ? l.plen : sizeof(m.path) - 1;
	memcpy(m.path, l.path, n);
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
