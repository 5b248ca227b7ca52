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

#include "core/maps.h"
#include "core/memstat.h"
#include "core/pageout.h"
#include "core/util.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21 /* Linux 5.4 */
#endif

#define PAGEOUT_RANGES_MAX 512

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
			if (!maps_line_parse(p, eol, &l[nl])) {
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
		if (l[i].plen == 0 || l[i].path[0] != '/' ||
		    l[i].perms[1] == 'w' || l[i].perms[3] != 'p')
			continue;
		for (j = 0; j < nl && !exec_file; j++)
			exec_file = l[j].perms[2] == 'x' &&
			    l[j].plen == l[i].plen &&
			    memcmp(l[j].path, l[i].path, l[i].plen) == 0;
		if (!exec_file)
			continue;
		if (n < max) {
			r[n].start = (uintptr_t)l[i].start;
			r[n].end = (uintptr_t)l[i].end;
		}
		n++;
	}
	*ret_n = n;
out:
	free(l);
	return ret;
}

int
pageout_self(bool random, struct pageout_stats *ret)
{
	struct pageout_range r[PAGEOUT_RANGES_MAX];
	struct pageout_stats st = { 0 };
	struct vbuf b = { 0 };
	struct memstat m;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	size_t n, i;
	int rc;

	if ((rc = read_at(AT_FDCWD, "/proc/self/maps", &b)) == 0)
		rc = pageout_parse(b.p, b.len, r, PAGEOUT_RANGES_MAX, &n);
	vbuf_release(&b);
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
