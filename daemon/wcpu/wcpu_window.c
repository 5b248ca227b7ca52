/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The capacity-weighted CPU part of a window: new, free, copy, merge for
 * roll-ups, dump text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "wcpu/wcpu.h"
#include "window/window.h"

struct window_wcpu *
window_wcpu_new(void)
{
	return calloc(1, sizeof(struct window_wcpu));
}

void
window_wcpu_free(struct window_wcpu *p)
{
	if (p == NULL)
		return;
	free(p->procs);
	free(p->threads);
	free(p);
}

static int
rows_dup(struct wcpu_row **ret, const struct wcpu_row *v, size_t n)
{
	*ret = NULL;
	if (n == 0)
		return 0;
	if ((*ret = malloc(n * sizeof(*v))) == NULL)
		return -ENOMEM;
	memcpy(*ret, v, n * sizeof(*v));
	return 0;
}

struct window_wcpu *
window_wcpu_dup(const struct window_wcpu *p)
{
	struct window_wcpu *c;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	*c = *p;
	if (rows_dup(&c->procs, p->procs, p->nprocs) < 0) {
		c->threads = NULL;
		window_wcpu_free(c);
		return NULL;
	}
	if (rows_dup(&c->threads, p->threads, p->nthreads) < 0) {
		window_wcpu_free(c);
		return NULL;
	}
	return c;
}

static void
part_free(void *part)
{
	window_wcpu_free(part);
}

static void *
part_dup(const void *part)
{
	return window_wcpu_dup(part);
}

static int
part_merge(void **accp, const void *src)
{
	if (src == NULL)
		return 0;
	if (*accp == NULL)
		return (*accp = window_wcpu_dup(src)) ? 0 : -ENOMEM;
	return wcpu_merge_into(*accp, src);
}

static void
part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_wcpu *p = window_wcpu(w);

	(void)topn;
	vbuf_printf(out,
	    "wcpu: approx factor %.4f (busy %llu ticks, no capacity %llu,"
	    " no frequency %llu)",
	    wcpu_approx_factor(p), (unsigned long long)p->busy_ticks,
	    (unsigned long long)p->nocap_ticks,
	    (unsigned long long)p->nofreq_ticks);
	if (p->drains)
		vbuf_printf(out,
		    "; bpf %llu ns weighted %llu ns (no capacity %llu ns,"
		    " no frequency %llu ns), %zu procs %zu threads"
		    " (%u, %u cut)",
		    (unsigned long long)p->oncpu_ns,
		    (unsigned long long)p->wtd_ns,
		    (unsigned long long)p->nocap_ns,
		    (unsigned long long)p->nofreq_ns, p->nprocs, p->nthreads,
		    p->procs_cut, p->threads_cut);
	vbuf_printf(out, "\n");
}

static size_t
part_bytes(const void *part)
{
	const struct window_wcpu *p = part;

	return p ?
	    sizeof(*p) + (p->nprocs + p->nthreads) * sizeof(struct wcpu_row) :
	    0;
}

/* Level 2 without rollup2_threads: the thread rows go with the BPF
 * thread rows they are named among, and threads_cut with them; the rest
 * of the head and the process rows stay. */
static void
part_drop_threads(void *part)
{
	struct window_wcpu *p = part;

	free(p->threads);
	p->threads = NULL;
	p->nthreads = 0;
	p->threads_cut = 0;
}

const struct window_part_ops wcpu_window_part = {
	.name = "wcpu",
	.free = part_free,
	.dup = part_dup,
	.merge = part_merge,
	.dump = part_dump,
	.bytes = part_bytes,
	.drop_threads = part_drop_threads,
};
