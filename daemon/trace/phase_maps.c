/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/<pid>/maps for fault phases: lines parsed strictly into ranges
 * with a mapping class, and the two lookups (an address, a file by device
 * and inode). No I/O: phase.c reads the file and hands the bytes over.
 *
 * A line (fs/proc/task_mmu.c show_map_vma):
 *   start-end perms offset major:minor inode [spaces path]
 * start, end, offset, major and minor in hex, the inode in decimal, the
 * path (or [heap], [stack], [anon:name], ...) to the end of the line.
 */
#include <errno.h>
#include <string.h>

#include "core/maps.h"
#include "trace/phase.h"

const char *
phase_class_name(unsigned c)
{
	static const char *const names[PCLASS__MAX] = {
		[PCLASS_DEX] = "dex",
		[PCLASS_SO] = "so",
		[PCLASS_RES] = "res",
		[PCLASS_FILE] = "file",
		[PCLASS_ANON] = "anon",
		[PCLASS_STACK] = "stack",
		[PCLASS_OTHER] = "other",
		[PCLASS_UNKNOWN] = "unknown",
	};

	return c < PCLASS__MAX ? names[c] : "?";
}

static bool
ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static bool
starts_with(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);

	return n >= k && memcmp(s, pre, k) == 0;
}

/* ".so" at the end or ".so." before a version: libc.so.6 */
static bool
is_so(const char *s, size_t n)
{
	size_t i;

	if (ends_with(s, n, ".so"))
		return true;
	for (i = 0; i + 4 <= n; i++)
		if (memcmp(s + i, ".so.", 4) == 0 &&
		    memchr(s + i, '/', n - i) == NULL)
			return true;
	return false;
}

/*
 * The class of a mapping by its path (len bytes, not NUL-terminated; 0:
 * none). exec: the mapping is executable. Decided (doc/metrics.md): a
 * .jar is code whatever its permissions (it holds dex), an .apk is code
 * when mapped executable and resources otherwise.
 */
unsigned
phase_class_of_path(const char *p, size_t n, bool exec)
{
	static const char *const dex[] = { ".dex", ".odex", ".vdex", ".oat",
		".art", ".jar" };
	static const char *const res[] = { ".arsc", ".ttf", ".otf", ".ttc",
		".idmap" };
	size_t i;

	if (ends_with(p, n, " (deleted)"))
		n -= strlen(" (deleted)");
	if (n == 0 || starts_with(p, n, "[heap]") ||
	    starts_with(p, n, "[anon:") || starts_with(p, n, "[anon_shmem:") ||
	    starts_with(p, n, "/memfd:") || starts_with(p, n, "/dev/ashmem") ||
	    starts_with(p, n, "/dev/zero") || starts_with(p, n, "/SYSV"))
		return PCLASS_ANON;
	if (starts_with(p, n, "[stack"))
		return PCLASS_STACK;
	if (p[0] == '[')
		return PCLASS_OTHER;
	for (i = 0; i < sizeof(dex) / sizeof(dex[0]); i++)
		if (ends_with(p, n, dex[i]))
			return PCLASS_DEX;
	if (ends_with(p, n, ".apk"))
		return exec ? PCLASS_DEX : PCLASS_RES;
	if (is_so(p, n))
		return PCLASS_SO;
	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		if (ends_with(p, n, res[i]))
			return PCLASS_RES;
	if (starts_with(p, n, "/system/fonts/") ||
	    starts_with(p, n, "/product/fonts/"))
		return PCLASS_RES;
	return PCLASS_FILE;
}

static bool
parse_line(const char *p, const char *end, struct phase_range *ret)
{
	struct maps_line l;

	if (!maps_line_parse(p, end, &l))
		return false;
	ret->start = l.start;
	ret->end = l.end;
	ret->ino = l.ino;
	ret->dev = l.dev;
	ret->cls = (uint8_t)phase_class_of_path(l.path, l.plen,
	    l.perms[2] == 'x');
	/* a file mapping names a file: a path with a device of none is
	 * anonymous whatever it is called ([anon:...], memfd keep theirs) */
	if (l.ino == 0 && ret->cls == PCLASS_FILE)
		ret->cls = PCLASS_ANON;
	return true;
}

/*
 * The ranges of a maps file, in its order (ascending addresses), at most
 * max; the lines beyond are counted in *ret_cut, lines not in the format
 * (or out of order) in *ret_bad, and skipped. -EINVAL: no line at all
 * parsed from a non-empty buffer.
 */
int
phase_maps_parse(const char *buf, size_t len, struct phase_range *out,
    size_t max, size_t *ret_n, uint64_t *ret_bad, uint64_t *ret_cut)
{
	const char *p = buf, *end = buf + len;
	uint64_t bad = 0, cut = 0;
	size_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct phase_range r;

		if (le > p && parse_line(p, le, &r)) {
			if (n > 0 && r.start < out[n - 1].end)
				bad++;
			else if (n == max)
				cut++;
			else
				out[n++] = r;
		} else if (le > p) {
			bad++;
		}
		p = nl ? nl + 1 : end;
	}
	*ret_n = n;
	*ret_bad += bad;
	*ret_cut += cut;
	return n == 0 && bad > 0 ? -EINVAL : 0;
}

/* The class of the range holding addr (binary search). */
unsigned
phase_maps_class_addr(const struct phase_range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < r[mid].start)
			hi = mid;
		else if (addr >= r[mid].end)
			lo = mid + 1;
		else
			return r[mid].cls;
	}
	return PCLASS_UNKNOWN;
}

/* The class of a mapping of file (dev, ino); the executable one wins for
 * an .apk mapped both ways (its code faults are the ones that matter). */
unsigned
phase_maps_class_file(const struct phase_range *r, size_t n, uint32_t dev,
    uint64_t ino)
{
	unsigned cls = PCLASS_UNKNOWN;
	size_t i;

	if (ino == 0)
		return PCLASS_UNKNOWN;
	for (i = 0; i < n; i++) {
		if (r[i].ino != ino || r[i].dev != dev)
			continue;
		if (r[i].cls == PCLASS_DEX)
			return PCLASS_DEX;
		cls = r[i].cls;
	}
	return cls;
}
