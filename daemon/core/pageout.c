/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Start-up code given back: pageout.h says why. The maps text is parsed
 * in two passes over the same lines: the first names the files with an
 * executable mapping, the second takes their read-only private ranges.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/memstat.h"
#include "core/pageout.h"
#include "core/util.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21 /* Linux 5.4 */
#endif

#define PAGEOUT_MAPS_MAX (1u << 20) /* bytes of maps text read */
#define PAGEOUT_RANGES_MAX 512

struct maps_line {
	uintptr_t start, end;
	char perms[4];
	const char *path; /* in the text; NULL: none */
	size_t plen;
};

static int
hex_field(const char **pp, const char *eol, char stop, uintptr_t *ret)
{
	const char *p = *pp;
	uintptr_t v = 0;
	bool digits = false;

	for (; p < eol && *p != stop; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else
			return -EINVAL;
		if (v > (UINTPTR_MAX >> 4))
			return -ERANGE;
		v = (v << 4) | d;
		digits = true;
	}
	if (!digits || p == eol)
		return -EINVAL;
	*ret = v;
	*pp = p + 1;
	return 0;
}

/* "start-end perms offset dev inode [path]" */
static int
line_parse(const char *p, const char *eol, struct maps_line *ret)
{
	unsigned field;

	if (hex_field(&p, eol, '-', &ret->start) < 0 ||
	    hex_field(&p, eol, ' ', &ret->end) < 0 || ret->end <= ret->start)
		return -EINVAL;
	if (eol - p < 5 || p[4] != ' ')
		return -EINVAL;
	memcpy(ret->perms, p, 4);
	p += 5;
	/* offset, dev, inode */
	for (field = 0; field < 3; field++) {
		const char *s = p;

		while (p < eol && *p != ' ')
			p++;
		if (p == s)
			return -EINVAL;
		while (p < eol && *p == ' ')
			p++;
	}
	ret->path = p < eol ? p : NULL;
	ret->plen = (size_t)(eol - p);
	return 0;
}

static bool
same_path(const struct maps_line *a, const struct maps_line *b)
{
	return a->plen == b->plen && memcmp(a->path, b->path, a->plen) == 0;
}

int
pageout_parse(const char *buf, size_t len, struct pageout_range *r, size_t max,
    size_t *ret_n)
{
	const char *end = buf + len, *p;
	struct maps_line *l = NULL;
	size_t nl = 0, cap = 0, i, j, n = 0;
	int ret = 0;

	for (p = buf; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		const char *eol = e ? e : end;

		if (eol > p) {
			if (nl == cap) {
				struct maps_line *nb;

				cap = cap ? cap * 2 : 64;
				if ((nb = realloc(l, cap * sizeof(*l))) ==
				    NULL) {
					ret = -ENOMEM;
					goto out;
				}
				l = nb;
			}
			if (line_parse(p, eol, &l[nl]) < 0) {
				ret = -EINVAL;
				goto out;
			}
			nl++;
		}
		p = e ? e + 1 : end;
	}
	for (i = 0; i < nl; i++) {
		bool exec_file = false;

		/* a file's path, private, not writable */
		if (l[i].path == NULL || l[i].path[0] != '/' ||
		    l[i].perms[1] == 'w' || l[i].perms[3] != 'p')
			continue;
		for (j = 0; j < nl && !exec_file; j++)
			exec_file = l[j].perms[2] == 'x' && l[j].path &&
			    same_path(&l[i], &l[j]);
		if (!exec_file)
			continue;
		if (n < max) {
			r[n].start = l[i].start;
			r[n].end = l[i].end;
		}
		n++;
	}
	*ret_n = n;
out:
	free(l);
	return ret;
}

static int
read_maps(char **ret_buf, size_t *ret_len)
{
	size_t len = 0, cap = 64 * 1024;
	char *buf = NULL;
	ssize_t n = 0;
	int fd;

	if ((fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	for (;;) {
		if (buf == NULL || len == cap) {
			char *nb;

			if (buf && cap >= PAGEOUT_MAPS_MAX)
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
	if (n < 0 && len == 0) {
		n = -errno;
		free(buf);
		close(fd);
		return (int)n;
	}
	close(fd);
	/* cut at the bound: the whole lines before it */
	if (n > 0)
		while (len > 0 && buf[len - 1] != '\n')
			len--;
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

int
pageout_self(bool random, struct pageout_stats *ret)
{
	struct pageout_range r[PAGEOUT_RANGES_MAX];
	struct pageout_stats st = { 0 };
	struct memstat m;
	size_t len = 0, n, i;
	char *buf = NULL;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int rc;

	if ((rc = read_maps(&buf, &len)) < 0)
		return rc;
	rc = pageout_parse(buf, len, r, PAGEOUT_RANGES_MAX, &n);
	free(buf);
	if (rc < 0)
		return rc;
	if (n > PAGEOUT_RANGES_MAX)
		n = PAGEOUT_RANGES_MAX;
	if (memstat_read(NULL, &m) == 0 && (m.have & MEMSTAT_FILE))
		st.before = m.file;
	for (i = 0; i < n; i++) {
		void *a = (void *)r[i].start;
		size_t sz = r[i].end - r[i].start;

		if ((random && madvise(a, sz, MADV_RANDOM) < 0) ||
		    madvise(a, sz, MADV_PAGEOUT) < 0) {
			if (st.failed++ == 0)
				st.err = -errno;
			continue;
		}
		st.ranges++;
		st.advised += sz;
	}
	if (memstat_read(NULL, &m) == 0 && (m.have & MEMSTAT_FILE))
		st.after = m.file;
	st.ns = clock_ns(CLOCK_MONOTONIC) - t0;
	*ret = st;
	return 0;
}
