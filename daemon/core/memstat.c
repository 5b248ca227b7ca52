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
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/memstat.h"

/* "<spaces>N kB" (or "<spaces>N" for counts): 0 and the value. */
static int
field_value(const char *p, const char *end, bool kb, uint64_t *ret)
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
			if (field_value(p + k, eol, keys[i].kb, &v) < 0)
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
