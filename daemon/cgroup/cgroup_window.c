/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup part of a window as plain arithmetic (no I/O): names, the
 * group list, and the part's operations — free, copy, merge for
 * roll-ups (deltas sum, gauges merge, a group matched by id and path),
 * dump text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "core/util.h"
#include "window/window.h"

static const char *const state_names[CG_STATE__MAX] = {
	"off",
	"no cgroup v2 hierarchy",
	"ok",
};
static const char *const mem_names[CG_MEM__MAX] = { "anon", "file", "kernel",
	"shmem" };
static const char *const ev_names[CG_EV__MAX] = { "low", "high", "max", "oom",
	"oom_kill" };

const char *
cg_state_name(unsigned st)
{
	return st < CG_STATE__MAX ? state_names[st] : "?";
}

const char *
cg_mem_name(unsigned k)
{
	return k < CG_MEM__MAX ? mem_names[k] : "?";
}

const char *
cg_ev_name(unsigned k)
{
	return k < CG_EV__MAX ? ev_names[k] : "?";
}

struct window_cgroup *
window_cgroup_new(void)
{
	return calloc(1, sizeof(struct window_cgroup));
}

void
window_cgroup_free(struct window_cgroup *p)
{
	if (p == NULL)
		return;
	free(p->g);
	free(p);
}

struct window_cgroup_grp *
window_cgroup_add(struct window_cgroup *p)
{
	struct window_cgroup_grp *g;

	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;

		if ((g = realloc(p->g, nc * sizeof(*g))) == NULL)
			return NULL;
		p->g = g;
		p->cap = nc;
	}
	g = &p->g[p->n++];
	memset(g, 0, sizeof(*g));
	g->uid = g->pid = -1;
	return g;
}

const struct window_cgroup_grp *
window_cgroup_find(const struct window_cgroup *p, uint64_t id, const char *path)
{
	size_t i;

	for (i = 0; p && i < p->n; i++)
		if (p->g[i].id == id && strcmp(p->g[i].path, path) == 0)
			return &p->g[i];
	return NULL;
}

static void
part_free(void *part)
{
	window_cgroup_free(part);
}

static void *
part_dup(const void *part)
{
	const struct window_cgroup *p = part;
	struct window_cgroup *c = malloc(sizeof(*c));

	if (c == NULL)
		return NULL;
	*c = *p;
	c->g = NULL;
	c->cap = c->n;
	if (p->n && (c->g = malloc(p->n * sizeof(*c->g))) == NULL) {
		free(c);
		return NULL;
	}
	if (p->n)
		memcpy(c->g, p->g, p->n * sizeof(*c->g));
	return c;
}

static void
grp_fold(struct window_cgroup_grp *a, const struct window_cgroup_grp *b)
{
	unsigned k;

	a->have |= b->have;
	a->deltas += b->deltas;
	a->d_usage_us += b->d_usage_us;
	a->d_user_us += b->d_user_us;
	a->d_system_us += b->d_system_us;
	a->d_nr_periods += b->d_nr_periods;
	a->d_nr_throttled += b->d_nr_throttled;
	a->d_throttled_us += b->d_throttled_us;
	gauge_merge(&a->mem_current, &b->mem_current);
	for (k = 0; k < CG_MEM__MAX; k++)
		gauge_merge(&a->mem[k], &b->mem[k]);
	a->d_pgfault += b->d_pgfault;
	a->d_pgmajfault += b->d_pgmajfault;
	for (k = 0; k < CG_EV__MAX; k++)
		a->d_events[k] += b->d_events[k];
	for (k = 0; k < CG_PSI__MAX; k++) {
		a->d_psi_some_us[k] += b->d_psi_some_us[k];
		a->d_psi_full_us[k] += b->d_psi_full_us[k];
		gauge_merge(&a->psi_some_avg10[k], &b->psi_some_avg10[k]);
	}
}

static int
cmp_path(const void *a, const void *b)
{
	const struct window_cgroup_grp *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* src (the later window) into *accp: counts and deltas sum, the later
 * walk's state and root win, groups fold by (id, path). */
static int
part_merge(void **accp, const void *srcp)
{
	const struct window_cgroup *src = srcp;
	struct window_cgroup *acc = *accp;
	size_t i;

	if (src == NULL)
		return 0;
	if (acc == NULL) {
		if ((*accp = part_dup(src)) == NULL)
			return -ENOMEM;
		return 0;
	}
	acc->state = src->state;
	acc->err = src->err;
	memcpy(acc->root, src->root, sizeof(acc->root));
	acc->walks += src->walks;
	acc->groups_seen = src->groups_seen;
	if (src->groups_cut > acc->groups_cut)
		acc->groups_cut = src->groups_cut;
	acc->read_errors += src->read_errors;
	acc->recreated += src->recreated;
	acc->gone += src->gone;
	acc->inv_deltas += src->inv_deltas;
	acc->path_cut += src->path_cut;
	acc->walk_ns_sum += src->walk_ns_sum;
	if (src->walk_ns_max > acc->walk_ns_max)
		acc->walk_ns_max = src->walk_ns_max;
	for (i = 0; i < src->n; i++) {
		const struct window_cgroup_grp *s = &src->g[i];
		struct window_cgroup_grp *a = (struct window_cgroup_grp *)
		    window_cgroup_find(acc, s->id, s->path);

		if (a == NULL) {
			/* a day of churning pid_ groups: the store's bound
			 * (store_cgroup.c), the rest counted as not kept */
			if (acc->n >= CG_GROUPS_MAX) {
				acc->groups_cut++;
				continue;
			}
			if ((a = window_cgroup_add(acc)) == NULL)
				return -ENOMEM;
			*a = *s;
			continue;
		}
		grp_fold(a, s);
	}
	if (acc->n > 1)
		qsort(acc->g, acc->n, sizeof(*acc->g), cmp_path);
	return 0;
}

static void
part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_cgroup *p = window_cgroup(w);
	size_t i;

	(void)topn;
	vbuf_printf(out,
	    "cgroup: %s%s%s, %zu groups (seen %u, cut %u), read errors %u, "
	    "recreated %u, gone %u, dropped deltas %u\n",
	    cg_state_name(p->state), p->root[0] ? " at " : "", p->root, p->n,
	    p->groups_seen, p->groups_cut, p->read_errors, p->recreated,
	    p->gone, p->inv_deltas);
	for (i = 0; i < p->n; i++) {
		const struct window_cgroup_grp *g = &p->g[i];

		vbuf_printf(out, "  /%s: cpu %llu us (user %llu sys %llu)",
		    g->path, (unsigned long long)g->d_usage_us,
		    (unsigned long long)g->d_user_us,
		    (unsigned long long)g->d_system_us);
		if (g->mem_current.n)
			vbuf_printf(out, ", memory %.0f B",
			    g->mem_current.last);
		vbuf_printf(out, "\n");
	}
}

static size_t
part_bytes(const void *part)
{
	const struct window_cgroup *p = part;

	return p ? sizeof(*p) + p->cap * sizeof(*p->g) : 0;
}

const struct window_part_ops cgroup_window_part = {
	.name = "cgroup",
	.free = part_free,
	.dup = part_dup,
	.merge = part_merge,
	.dump = part_dump,
	.bytes = part_bytes,
};
