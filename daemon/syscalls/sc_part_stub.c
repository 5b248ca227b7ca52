/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placeholder ops of WPART_SYSCALLS until the real ones (sc_window.c)
 * are merged: free and copy; a roll-up keeps the later window's part;
 * nothing dumped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls/sc_collect.h"
#include "window/window.h"

static void
stub_free(void *part)
{
	sc_collect_part_free(part);
}

static void *
stub_dup(const void *part)
{
	const struct window_syscalls *s = part;
	struct window_syscalls *d = malloc(sizeof(*d));

	if (d == NULL)
		return NULL;
	*d = *s;
	d->rows = s->nrows ? malloc(s->nrows * sizeof(*d->rows)) : NULL;
	d->slow = s->nslow ? malloc(s->nslow * sizeof(*d->slow)) : NULL;
	if ((s->nrows && !d->rows) || (s->nslow && !d->slow)) {
		sc_collect_part_free(d);
		return NULL;
	}
	if (s->nrows)
		memcpy(d->rows, s->rows, s->nrows * sizeof(*d->rows));
	if (s->nslow)
		memcpy(d->slow, s->slow, s->nslow * sizeof(*d->slow));
	return d;
}

static int
stub_merge(void **accp, const void *src)
{
	void *d;

	if (src == NULL)
		return 0;
	if ((d = stub_dup(src)) == NULL)
		return -ENOMEM;
	sc_collect_part_free(*accp);
	*accp = d;
	return 0;
}

static void
stub_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	(void)w;
	(void)topn;
	(void)out;
}

static size_t
stub_bytes(const void *part)
{
	const struct window_syscalls *s = part;

	if (s == NULL)
		return 0;
	return sizeof(*s) + s->nrows * sizeof(*s->rows) +
	    s->nslow * sizeof(*s->slow);
}

const struct window_part_ops sc_window_part = {
	.name = "syscalls",
	.free = stub_free,
	.dup = stub_dup,
	.merge = stub_merge,
	.dump = stub_dump,
	.bytes = stub_bytes,
};
