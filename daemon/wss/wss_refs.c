/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Method B, for kernels without page_idle: writing "1" to
 * /proc/<pid>/clear_refs clears the referenced bits of every page the
 * process maps (PTE young bit and the page's referenced flag); after the
 * interval, "Referenced:" of each region in /proc/<pid>/smaps is what was
 * touched since. Region-level: smaps sums, it does not say which pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wss/wss.h"

static bool
key_kb(const char *p, const char *e, const char *key, uint64_t *ret)
{
	size_t n = strlen(key);
	uint64_t v = 0;

	if ((size_t)(e - p) <= n || memcmp(p, key, n) != 0 || p[n] != ':')
		return false;
	p += n + 1;
	while (p < e && *p == ' ')
		p++;
	if (p == e || *p < '0' || *p > '9')
		return false;
	while (p < e && *p >= '0' && *p <= '9') {
		if (v > UINT64_MAX / 10)
			return false;
		v = v * 10 + (uint64_t)(*p++ - '0');
	}
	*ret = v;
	return true;
}

/* Every region of an smaps text, in file order; a field a kernel lacks
 * stays 0. -EBADMSG: a line that is neither a header nor "Key: value". */
int
wss_smaps_parse(const char *buf, size_t len, struct wss_smaps **ret,
    size_t *ret_n)
{
	const char *p = buf, *e = buf + len, *nl;
	struct wss_smaps *v = NULL, *cur = NULL;
	size_t n = 0, cap = 0;
	struct wss_map m;

	while (p < e) {
		nl = memchr(p, '\n', (size_t)(e - p));
		if (nl == NULL)
			nl = e;
		if (nl == p) {
			p++;
			continue;
		}
		if (wss_maps_line(p, (size_t)(nl - p), &m) == 0) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct wss_smaps *t = realloc(v,
				    nc * sizeof(*t));

				if (t == NULL) {
					free(v);
					return -ENOMEM;
				}
				v = t;
				cap = nc;
			}
			cur = &v[n++];
			memset(cur, 0, sizeof(*cur));
			cur->start = m.start;
			cur->end = m.end;
		} else if (cur == NULL ||
		    memchr(p, ':', (size_t)(nl - p)) == NULL) {
			free(v);
			return -EBADMSG;
		} else if (!key_kb(p, nl, "Rss", &cur->rss_kb) &&
		    !key_kb(p, nl, "Referenced", &cur->referenced_kb) &&
		    !key_kb(p, nl, "Anonymous", &cur->anon_kb)) {
			key_kb(p, nl, "Swap", &cur->swap_kb);
		}
		p = nl + 1;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* "1": referenced bits only; soft-dirty ("4") and others are untouched.
 * fd: the process's clear_refs, open for writing (wss_open.c). */
int
wss_refs_write(int fd)
{
	ssize_t w;

	do
		w = write(fd, "1", 1);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return w == 1 ? 0 : -EIO;
}
