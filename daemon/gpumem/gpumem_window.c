/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GpuMem's part of a window as plain arithmetic: the map's state and, per
 * (gpu, pid), the bytes at the window's end with their range inside it
 * (gpumem.c fills it when a window closes); the names of states, the
 * order of pairs, and the part's operations (free, copy, merge for
 * roll-ups, dump text). No I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gpumem/gpumem.h"
#include "window/window.h"

static const char *const state_names[GPUMEM__MAX] = {
	"unknown",
	"not initialised",
	"empty",
	"traversal error",
	"ok",
};

static const char *const why_names[GPUMEM_WHY__MAX] = {
	"",
	"disabled",
	"no map",
	"waiting for the tracepoint",
	"tracepoint absent",
	"own program did not load",
	"open failed",
	"not AOSP's layout",
	"traversal failed",
};

const char *
gpumem_state_name(unsigned st)
{
	return st < GPUMEM__MAX ? state_names[st] : "?";
}

const char *
gpumem_why_name(unsigned why)
{
	return why < GPUMEM_WHY__MAX ? why_names[why] : "?";
}

const char *
gpumem_source_name(unsigned src)
{
	switch (src) {
	case GPUMEM_SRC_PINNED:
		return "pinned";
	case GPUMEM_SRC_OWN:
		return "own";
	default:
		return "none";
	}
}

/* Pairs in (gpu, pid, starttime) order. */
int
gpumem_proc_cmp(const struct window_gpu_proc *a,
    const struct window_gpu_proc *b)
{
	/* the store returns rows in this order too */
	if (a->gpu_id != b->gpu_id)
		return a->gpu_id < b->gpu_id ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->starttime != b->starttime)
		return a->starttime < b->starttime ? -1 : 1;
	return 0;
}

int
gpumem_proc_qcmp(const void *a, const void *b)
{
	return gpumem_proc_cmp(a, b);
}

struct window_gpumem_part *
window_gpumem_make(struct window *w)
{
	struct window_gpumem_part *p = window_gpumem(w);

	if (p == NULL && (p = calloc(1, sizeof(*p))) != NULL)
		window_part_set(w, WPART_GPUMEM, p);
	return p;
}

/* ------------------------------------------------------- roll-ups, dump */

static int
part_merge(struct window_gpumem_part *acc, const struct window_gpumem_part *src)
{
	struct window_gpu_proc *m;
	size_t i, j, k;

	if (src->st.state != GPUMEM_UNKNOWN) {
		struct window_gpumem a = acc->st;
		const struct window_gpumem *s = &src->st;

		acc->st = *s;
		acc->st.saturated = a.saturated || s->saturated;
		acc->st.traversals = a.traversals + s->traversals;
		acc->st.traversal_fail = a.traversal_fail + s->traversal_fail;
		acc->st.restarts = a.restarts + s->restarts;
		acc->st.vanished = a.vanished + s->vanished;
		acc->st.duplicates = a.duplicates + s->duplicates;
		acc->st.truncated = a.truncated + s->truncated;
		acc->st.batch_walks = a.batch_walks + s->batch_walks;
		acc->st.recovered = a.recovered + s->recovered;
		acc->st.events = a.events + s->events;
		acc->st.events_late = a.events_late + s->events_late;
		acc->st.traverse_ns = a.traverse_ns + s->traverse_ns;
		if (a.traverse_ns_max > s->traverse_ns_max)
			acc->st.traverse_ns_max = a.traverse_ns_max;
		acc->st.tp_events = a.tp_events + s->tp_events;
		acc->st.insert_fail = a.insert_fail + s->insert_fail;
	}
	if (src->n_gpu == 0)
		return 0;
	if ((m = calloc(acc->n_gpu + src->n_gpu, sizeof(*m))) == NULL)
		return -ENOMEM;
	/* both sides are in (gpu, pid, starttime) order */
	for (i = j = k = 0; i < acc->n_gpu || j < src->n_gpu;) {
		int c = i == acc->n_gpu ?
		    1 :
		    j == src->n_gpu ?
		    -1 :
		    gpumem_proc_cmp(&acc->gpu[i], &src->gpu[j]);

		if (c < 0) {
			i++; /* gone before src: not at the end */
			continue;
		}
		m[k] = src->gpu[j];
		if (c == 0) {
			if (acc->gpu[i].min_bytes < m[k].min_bytes)
				m[k].min_bytes = acc->gpu[i].min_bytes;
			if (acc->gpu[i].max_bytes > m[k].max_bytes)
				m[k].max_bytes = acc->gpu[i].max_bytes;
			i++;
		}
		j++;
		k++;
	}
	free(acc->gpu);
	acc->gpu = m;
	acc->n_gpu = k;
	return 0;
}

static void
gpumem_part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_gpumem_part *part = window_gpumem(w);
	const struct window_gpumem *g = &part->st;
	size_t i;

	(void)topn; /* every pair: a window holds one per (gpu, process) */
	if (g->state == GPUMEM_UNKNOWN)
		return;
	vbuf_printf(out,
	    "gpu memory: %s%s%s (%s map, %u of %u entries%s%s)"
	    "\n",
	    gpumem_state_name(g->state), g->why ? ": " : "",
	    gpumem_why_name(g->why), gpumem_source_name(g->source), g->entries,
	    g->capacity, g->saturated ? ", saturated" : "",
	    g->imported ? ", imported sizes" : "");
	for (i = 0; i < part->n_gpu; i++) {
		const struct window_gpu_proc *p = &part->gpu[i];

		vbuf_printf(out,
		    "  gpu %u pid %d %s%s bytes %llu"
		    " (min %llu max %llu)",
		    p->gpu_id, p->pid, p->pid == 0 ? "global" : p->name,
		    p->stale ? " [stale]" : "", (unsigned long long)p->bytes,
		    (unsigned long long)p->min_bytes,
		    (unsigned long long)p->max_bytes);
		if (g->imported)
			vbuf_printf(out, " imported %llu",
			    (unsigned long long)p->imported_bytes);
		vbuf_printf(out, "\n");
	}
}

/* ------------------------------------------------------ the part's ops */

static void
gpumem_part_free(void *part)
{
	struct window_gpumem_part *p = part;

	free(p->gpu);
	free(p);
}

static void *
gpumem_part_dup(const void *part)
{
	const struct window_gpumem_part *p = part;
	struct window_gpumem_part *c;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	*c = *p;
	c->gpu = NULL;
	if (p->n_gpu && (c->gpu = malloc(p->n_gpu * sizeof(*c->gpu))) == NULL) {
		free(c);
		return NULL;
	}
	if (p->n_gpu)
		memcpy(c->gpu, p->gpu, p->n_gpu * sizeof(*c->gpu));
	return c;
}

/* A missing side folds as a part that reported nothing, as it did when
 * every window held one by value. */
static int
gpumem_part_merge(void **accp, const void *srcp)
{
	static const struct window_gpumem_part zero;
	const struct window_gpumem_part *src = srcp ? srcp : &zero;
	struct window_gpumem_part *acc = *accp;

	if (acc == NULL) {
		if ((acc = calloc(1, sizeof(*acc))) == NULL)
			return -ENOMEM;
		*accp = acc;
	}
	return part_merge(acc, src);
}

static size_t
gpumem_part_bytes(const void *part)
{
	const struct window_gpumem_part *p = part;

	return sizeof(*p) + p->n_gpu * sizeof(*p->gpu);
}

const struct window_part_ops gpumem_window_part = {
	.name = "gpumem",
	.free = gpumem_part_free,
	.dup = gpumem_part_dup,
	.merge = gpumem_part_merge,
	.dump = gpumem_part_dump,
	.bytes = gpumem_part_bytes,
};
