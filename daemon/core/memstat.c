/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/<pid>/status's memory lines ("VmRSS:\t    8364 kB"), parsed from
 * text so a test can feed it any; a line that does not parse is left out
 * (its bit stays clear in have), never taken as 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/memstat.h"
#include "core/util.h"

int
memstat_field_value(const char *p, const char *end, bool kb, uint64_t *ret)
{
	uint64_t v = 0;
	bool digits = false;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
		digits = true;
	}
	if (!digits)
		return -EINVAL;
	if (kb) {
		if (end - p < 3 || memcmp(p, " kB", 3) != 0)
			return -EINVAL;
		if (v > UINT64_MAX / 1024)
			return -ERANGE;
		v *= 1024;
		p += 3;
	}
	if (p != end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int
memstat_parse(const char *buf, size_t len, struct memstat *ret)
{
	static const struct {
		const char *key;
		uint32_t bit;
		bool kb;
	} keys[] = {
		{ "VmRSS:", MEMSTAT_RSS, true },
		{ "VmHWM:", MEMSTAT_HWM, true },
		{ "RssAnon:", MEMSTAT_ANON, true },
		{ "RssFile:", MEMSTAT_FILE, true },
		{ "RssShmem:", MEMSTAT_SHMEM, true },
		{ "Threads:", MEMSTAT_THREADS, false },
	};
	const char *p = buf, *end = buf + len;
	struct memstat m = { 0 };

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		size_t i;

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t k = strlen(keys[i].key);
			uint64_t v;

			if ((size_t)(eol - p) < k || memcmp(p, keys[i].key, k))
				continue;
			if (memstat_field_value(p + k, eol, keys[i].kb, &v) < 0)
				break;
			switch (keys[i].bit) {
			case MEMSTAT_RSS:
				m.rss = v;
				break;
			case MEMSTAT_HWM:
				m.hwm = v;
				break;
			case MEMSTAT_ANON:
				m.anon = v;
				break;
			case MEMSTAT_FILE:
				m.file = v;
				break;
			case MEMSTAT_SHMEM:
				m.shmem = v;
				break;
			default:
				if (v > UINT32_MAX)
					goto next;
				m.threads = (uint32_t)v;
				break;
			}
			m.have |= keys[i].bit;
			break;
		}
next:
		p = nl ? nl + 1 : end;
	}
	if (m.have == 0)
		return -EINVAL;
	*ret = m;
	return 0;
}

int
memstat_read(const char *proc_root, struct memstat *ret)
{
	char path[PATH_MAX], buf[4096];
	ssize_t n = 0;
	size_t len = 0;
	int fd, r;

	snprintf(path, sizeof(path), "%s/self/status",
	    proc_root ? proc_root : "/proc");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while (len < sizeof(buf) &&
	    (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	r = n < 0 && len == 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	return memstat_parse(buf, len, ret);
}

/*
 * smaps: a mapping's header ("start-end perms offset dev inode   path"),
 * then its "Key:   N kB" lines. A header starts with a lowercase hex
 * digit, a key with a capital.
 */
static bool
maps_header(const char *p, const char *eol, const char **ret_path,
    size_t *ret_len)
{
	const char *q = p;
	unsigned field = 0;

	if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
		return false;
	/* five fields, then the path (may hold blanks), or none */
	while (q < eol && field < 5) {
		while (q < eol && *q != ' ')
			q++;
		while (q < eol && *q == ' ')
			q++;
		field++;
	}
	*ret_path = q;
	*ret_len = (size_t)(eol - q);
	return true;
}

static bool
has_so(const char *path, size_t len)
{
	size_t i;

	for (i = 0; i + 3 <= len; i++)
		if (memcmp(path + i, ".so", 3) == 0 &&
		    (i + 3 == len || path[i + 3] == '.'))
			return true;
	return false;
}

int
memstat_maps_parse(const char *buf, size_t len, const char *exe,
    struct memstat_maps *ret)
{
	const char *p = buf, *end = buf + len;
	struct memstat_maps m = { 0 };
	size_t exe_len = exe ? strlen(exe) : 0;
	enum { OTHER, PROGRAM, LIB } kind = OTHER;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *path;
		size_t plen;
		uint64_t v;

		if (maps_header(p, eol, &path, &plen)) {
			kind = OTHER;
			if (plen && exe_len == plen &&
			    memcmp(path, exe, plen) == 0)
				kind = PROGRAM;
			else if (plen && *path == '/' && has_so(path, plen))
				kind = LIB;
			if (kind == PROGRAM)
				m.have |= MEMSTAT_PROGRAM;
			else if (kind == LIB)
				m.have |= MEMSTAT_LIBS;
		} else if (kind != OTHER && (size_t)(eol - p) > 4 &&
		    memcmp(p, "Rss:", 4) == 0 &&
		    memstat_field_value(p + 4, eol, true, &v) == 0) {
			if (kind == PROGRAM)
				m.program += v;
			else
				m.libs += v;
		} else if ((size_t)(eol - p) > 4 && memcmp(p, "Pss:", 4) == 0 &&
		    memstat_field_value(p + 4, eol, true, &v) == 0) {
			/* "Pss:" alone: not Pss_Dirty, Pss_Anon, … */
			m.pss += v;
			if (kind == LIB)
				m.libs_pss += v;
			m.have |= MEMSTAT_PSS;
		} else if (kind == PROGRAM && (size_t)(eol - p) > 14 &&
		    memcmp(p, "Private_Dirty:", 14) == 0 &&
		    memstat_field_value(p + 14, eol, true, &v) == 0) {
			m.program_dirty += v;
		}
		p = nl ? nl + 1 : end;
	}
	if (m.have == 0)
		return -EINVAL;
	*ret = m;
	return 0;
}

int
memstat_maps_read(const char *proc_root, struct memstat_maps *ret)
{
	const char *root = proc_root ? proc_root : "/proc";
	char path[PATH_MAX], exe[PATH_MAX];
	size_t len = 0, cap = 64 * 1024;
	char *buf = NULL;
	ssize_t n = 0;
	int fd, r;

	snprintf(path, sizeof(path), "%s/self/exe", root);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) < 0)
		return -errno;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/self/smaps", root);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	/* at most 4 MiB of text: ~4,000 mappings */
	for (;;) {
		if (len == cap || buf == NULL) {
			char *nb;

			if (buf && cap >= 4u << 20)
				break;
			cap = buf ? cap * 2 : cap;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		if ((n = read(fd, buf + len, cap - len)) <= 0)
			break;
		len += (size_t)n;
	}
	r = n < 0 && len == 0 ? -errno : 0;
	close(fd);
	if (r == 0)
		r = memstat_maps_parse(buf, len, exe, ret);
	free(buf);
	return r;
}

/*
 * mallinfo2 (glibc 2.33) sums every arena under its lock; the older
 * mallinfo's int fields wrap at 2 GiB. bionic's mallinfo has size_t
 * fields (and no mallinfo2 before API 34).
 */
int
memstat_heap(struct memstat_heap *ret)
{
#if defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();
#elif defined(__BIONIC__)
	struct mallinfo mi = mallinfo();
#else
	(void)ret;
	return -ENOTSUP;
#endif
#if defined(__GLIBC__) || defined(__BIONIC__)
	/* A malloc put in place of the C library's (ASan's, a preloaded
	 * one) leaves the library's account empty, though this process has
	 * allocated: no account rather than a heap of 0 bytes. */
	if (mi.arena == 0 && mi.hblkhd == 0)
		return -ENOTSUP;
	ret->in_use = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
	ret->free = (uint64_t)mi.fordblks;
	ret->mmap = (uint64_t)mi.hblkhd;
	return 0;
#endif
}

int
memstat_maps_cached(const char *proc_root, int64_t max_age_ns,
    struct memstat_maps *ret, int64_t *ret_age_ns)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static struct memstat_maps last;
	static int64_t last_ns;
	static bool have;
	static int last_r;
	int64_t now;
	int r;

	pthread_mutex_lock(&mu);
	now = clock_ns(CLOCK_MONOTONIC);
	if (!have || max_age_ns <= 0 || now - last_ns >= max_age_ns) {
		last_r = memstat_maps_read(proc_root, &last);
		last_ns = now;
		have = true;
	}
	if ((r = last_r) == 0) {
		*ret = last;
		if (ret_age_ns != NULL)
			*ret_age_ns = now - last_ns;
	}
	pthread_mutex_unlock(&mu);
	return r;
}
