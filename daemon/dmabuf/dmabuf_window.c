/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DMA-BUF part of a window as plain arithmetic (no I/O): free, copy,
 * merge for roll-ups and the dump text. In a merge the counters sum, the
 * later pass's totals and shared list win (they are a pass's snapshot),
 * maxima take the larger, and rows fold by key — a process by (pid, name),
 * an exporter by name — keeping the figures of the last pass each was in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "dmabuf/dmabuf.h"
#include "window/window.h"

struct window_dmabuf *
window_dmabuf_new(void)
{
	return calloc(1, sizeof(struct window_dmabuf));
}

void
window_dmabuf_free(struct window_dmabuf *p)
{
	if (p == NULL)
		return;
	free(p->procs);
	free(p->exps);
	free(p->shared);
	free(p);
}

static void *
dup_array(const void *v, size_t n, size_t sz, bool *fail)
{
	void *c;

	if (n == 0)
		return NULL;
	if ((c = malloc(n * sz)) == NULL) {
		*fail = true;
		return NULL;
	}
	memcpy(c, v, n * sz);
	return c;
}

struct window_dmabuf *
window_dmabuf_dup(const struct window_dmabuf *p)
{
	struct window_dmabuf *c;
	bool fail = false;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	*c = *p;
	c->procs = dup_array(p->procs, p->nprocs, sizeof(*p->procs), &fail);
	c->exps = dup_array(p->exps, p->nexps, sizeof(*p->exps), &fail);
	c->shared = dup_array(p->shared, p->nshared, sizeof(*p->shared), &fail);
	if (fail) {
		window_dmabuf_free(c);
		return NULL;
	}
	return c;
}

static int
cmp_proc(const void *a, const void *b)
{
	const struct dmabuf_proc *x = a, *y = b;

	/* "other" last, whatever it holds */
	if ((x->pid < 0) != (y->pid < 0))
		return x->pid < 0 ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int
cmp_exp(const void *a, const void *b)
{
	const struct dmabuf_exp *x = a, *y = b;

	if (x->other != y->other)
		return x->other ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
cmp_shared(const void *a, const void *b)
{
	const struct dmabuf_shared *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

void
window_dmabuf_sort(struct window_dmabuf *p)
{
	if (p->nprocs > 1)
		qsort(p->procs, p->nprocs, sizeof(*p->procs), cmp_proc);
	if (p->nexps > 1)
		qsort(p->exps, p->nexps, sizeof(*p->exps), cmp_exp);
	if (p->nshared > 1)
		qsort(p->shared, p->nshared, sizeof(*p->shared), cmp_shared);
}

static int
merge_procs(struct window_dmabuf *acc, const struct window_dmabuf *src)
{
	struct dmabuf_proc *v;
	size_t i, k, n = acc->nprocs;

	if (src->nprocs == 0)
		return 0;
	if ((v = realloc(acc->procs,
		 (acc->nprocs + src->nprocs) * sizeof(*v))) == NULL)
		return -ENOMEM;
	acc->procs = v;
	for (i = 0; i < src->nprocs; i++) {
		const struct dmabuf_proc *s = &src->procs[i];

		for (k = 0; k < n; k++)
			if (v[k].pid == s->pid && !strcmp(v[k].name, s->name))
				break;
		if (k == n) {
			if (acc->nprocs >= DMABUF_PROCS_MAX) {
				acc->procs_cut++;
				continue;
			}
			v[acc->nprocs++] = *s;
			continue;
		}
		v[k].passes += s->passes;
		v[k].fds = s->fds;
		v[k].buffers = s->buffers;
		v[k].bytes = s->bytes;
		v[k].shared_bytes = s->shared_bytes;
		v[k].pss_bytes = s->pss_bytes;
		v[k].procs = s->procs;
		if (s->bytes_max > v[k].bytes_max)
			v[k].bytes_max = s->bytes_max;
	}
	return 0;
}

static int
merge_exps(struct window_dmabuf *acc, const struct window_dmabuf *src)
{
	struct dmabuf_exp *v;
	size_t i, k, n = acc->nexps;

	if (src->nexps == 0)
		return 0;
	if ((v = realloc(acc->exps, (acc->nexps + src->nexps) * sizeof(*v))) ==
	    NULL)
		return -ENOMEM;
	acc->exps = v;
	for (i = 0; i < src->nexps; i++) {
		const struct dmabuf_exp *s = &src->exps[i];

		for (k = 0; k < n; k++)
			if (v[k].other == s->other &&
			    !strcmp(v[k].name, s->name))
				break;
		if (k == n) {
			if (acc->nexps >= DMABUF_PROCS_MAX) {
				acc->exps_cut++;
				continue;
			}
			v[acc->nexps++] = *s;
			continue;
		}
		v[k].passes += s->passes;
		v[k].buffers = s->buffers;
		v[k].bytes = s->bytes;
		if (s->bytes_max > v[k].bytes_max)
			v[k].bytes_max = s->bytes_max;
	}
	return 0;
}

int
window_dmabuf_merge(struct window_dmabuf **accp,
    const struct window_dmabuf *src)
{
	struct window_dmabuf *acc = *accp;
	struct dmabuf_shared *sh = NULL;
	int r;

	if (src == NULL)
		return 0;
	if (acc == NULL) {
		if ((*accp = window_dmabuf_dup(src)) == NULL)
			return -ENOMEM;
		return 0;
	}
	if (src->passes) {
		if (src->nshared &&
		    (sh = dup_array(src->shared, src->nshared, sizeof(*sh),
			 &(bool){ false })) == NULL)
			return -ENOMEM;
		free(acc->shared);
		acc->shared = sh;
		acc->nshared = src->nshared;
		acc->pass_wall_ns = src->pass_wall_ns;
		acc->total_bytes = src->total_bytes;
		acc->shared_bytes = src->shared_bytes;
		acc->buffers = src->buffers;
		acc->shared_buffers = src->shared_buffers;
		acc->iter_why = src->iter_why;
	}
	if (src->kernel_passes) {
		acc->kernel_buffers = src->kernel_buffers;
		acc->kernel_bytes = src->kernel_bytes;
	}
	acc->kernel_passes += src->kernel_passes;
	acc->passes_no_buffer += src->passes_no_buffer;
	acc->iter_errors += src->iter_errors;
	acc->passes += src->passes;
	if (src->total_bytes_max > acc->total_bytes_max)
		acc->total_bytes_max = src->total_bytes_max;
	acc->procs_scanned += src->procs_scanned;
	acc->procs_skipped += src->procs_skipped;
	acc->procs_unreadable += src->procs_unreadable;
	acc->procs_gone += src->procs_gone;
	acc->fds_read += src->fds_read;
	acc->fds_dmabuf += src->fds_dmabuf;
	acc->fdinfo_invalid += src->fdinfo_invalid;
	acc->sysfs_found += src->sysfs_found;
	acc->size_mismatch += src->size_mismatch;
	acc->procs_cut += src->procs_cut;
	acc->exps_cut += src->exps_cut;
	acc->shared_cut += src->shared_cut;
	acc->pass_ns_sum += src->pass_ns_sum;
	if (src->pass_ns_max > acc->pass_ns_max)
		acc->pass_ns_max = src->pass_ns_max;
	acc->passes_overlapped += src->passes_overlapped;
	if ((r = merge_procs(acc, src)) < 0 || (r = merge_exps(acc, src)) < 0)
		return r;
	window_dmabuf_sort(acc);
	return 0;
}

static void
part_free(void *part)
{
	window_dmabuf_free(part);
}

static void *
part_dup(const void *part)
{
	return window_dmabuf_dup(part);
}

static int
part_merge(void **accp, const void *src)
{
	struct window_dmabuf *acc = *accp;
	int r = window_dmabuf_merge(&acc, src);

	*accp = acc;
	return r;
}

static void
part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_dmabuf *p = window_dmabuf(w);
	size_t i;

	vbuf_printf(out,
	    "dmabuf: %u passes, %llu B in %u buffers (shared %llu B in %u), "
	    "procs read %u skipped %u unreadable %u gone %u, "
	    "bad fdinfo %u; kernel list read %u (no buffer %u, failed %u): "
	    "%u buffers %llu B\n",
	    p->passes, (unsigned long long)p->total_bytes, p->buffers,
	    (unsigned long long)p->shared_bytes, p->shared_buffers,
	    p->procs_scanned, p->procs_skipped, p->procs_unreadable,
	    p->procs_gone, p->fdinfo_invalid, p->kernel_passes,
	    p->passes_no_buffer, p->iter_errors, p->kernel_buffers,
	    (unsigned long long)p->kernel_bytes);
	for (i = 0; i < p->nprocs && (topn == 0 || i < topn); i++)
		vbuf_printf(out, "  %d %s: %llu B, %u buffers, shared %llu B\n",
		    p->procs[i].pid, p->procs[i].name,
		    (unsigned long long)p->procs[i].bytes, p->procs[i].buffers,
		    (unsigned long long)p->procs[i].shared_bytes);
}

static size_t
part_bytes(const void *part)
{
	const struct window_dmabuf *p = part;

	return p ? sizeof(*p) + p->nprocs * sizeof(*p->procs) +
		p->nexps * sizeof(*p->exps) + p->nshared * sizeof(*p->shared) :
		   0;
}

const struct window_part_ops dmabuf_window_part = {
	.name = "dmabuf",
	.free = part_free,
	.dup = part_dup,
	.merge = part_merge,
	.dump = part_dump,
	.bytes = part_bytes,
};
