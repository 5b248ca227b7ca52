/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup part of a window on the wire (Window.cgroup). With rpc.c and
 * rpc_pb.c the only code that knows protobuf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "window/window.h"
#include "rpc_int.h"

static const char *const psi_names[CG_PSI__MAX] = { "cpu", "memory", "io" };

static char **
pb_sources(struct rpc_arena *a, uint32_t have, size_t *ret_n)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} src[] = {
		{ CG_HAVE_CPU, "cpu.stat" },
		{ CG_HAVE_THROTTLE, "cpu.stat throttling" },
		{ CG_HAVE_MEM, "memory.current" },
		{ CG_HAVE_MEMSTAT, "memory.stat" },
		{ CG_HAVE_EVENTS, "memory.events" },
		{ CG_HAVE_PSI(0), "cpu.pressure" },
		{ CG_HAVE_PSI(1), "memory.pressure" },
		{ CG_HAVE_PSI(2), "io.pressure" },
	};
	size_t i, n = 0;
	char **v;

	for (i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		n += (have & src[i].bit) != 0;
	*ret_n = n;
	ARRAY(a, v, n);
	n = 0;
	for (i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		if (have & src[i].bit)
			v[n++] = (char *)src[i].name;
	return v;
}

static Vitals__Cgroup *
pb_group(struct rpc_arena *a, const struct window_cgroup_grp *g)
{
	Vitals__Cgroup *m;
	unsigned k, n;

	NEW(a, m, vitals__cgroup__init);
	m->id = g->id;
	TRY(m->path = rpc_pb_str(a, g->path, sizeof(g->path)));
	m->depth = g->depth;
	m->uid = g->uid;
	m->pid = g->pid;
	m->sources = pb_sources(a, g->have, &m->n_sources);
	if (m->n_sources && m->sources == NULL)
		return NULL;
	m->deltas = g->deltas;
	m->born = g->born;
	m->d_usage_us = g->d_usage_us;
	m->d_user_us = g->d_user_us;
	m->d_system_us = g->d_system_us;
	m->d_nr_periods = g->d_nr_periods;
	m->d_nr_throttled = g->d_nr_throttled;
	m->d_throttled_us = g->d_throttled_us;
	if (g->have & CG_HAVE_MEM)
		TRY(m->memory_current = rpc_pb_gauge(a, &g->mem_current));
	if (g->have & CG_HAVE_MEMSTAT) {
		ARRAY(a, m->memory, CG_MEM__MAX);
		for (k = 0; k < CG_MEM__MAX; k++) {
			Vitals__NamedGauge *ng;

			NEW(a, ng, vitals__named_gauge__init);
			ng->name = (char *)cg_mem_name(k);
			TRY(ng->gauge = rpc_pb_gauge(a, &g->mem[k]));
			m->memory[k] = ng;
		}
		m->n_memory = CG_MEM__MAX;
		m->d_pgfault = g->d_pgfault;
		m->d_pgmajfault = g->d_pgmajfault;
	}
	if (g->have & CG_HAVE_EVENTS) {
		ARRAY(a, m->events, CG_EV__MAX);
		for (k = 0; k < CG_EV__MAX; k++) {
			Vitals__Counter *c;

			NEW(a, c, vitals__counter__init);
			c->name = (char *)cg_ev_name(k);
			c->value = g->d_events[k];
			m->events[k] = c;
		}
		m->n_events = CG_EV__MAX;
	}
	for (k = 0, n = 0; k < CG_PSI__MAX; k++)
		n += (g->have & CG_HAVE_PSI(k)) != 0;
	ARRAY(a, m->pressure, n);
	for (k = 0, n = 0; k < CG_PSI__MAX; k++) {
		Vitals__CgroupPressure *p;

		if (!(g->have & CG_HAVE_PSI(k)))
			continue;
		NEW(a, p, vitals__cgroup_pressure__init);
		p->resource = (char *)psi_names[k];
		p->d_some_us = g->d_psi_some_us[k];
		p->have_full = (g->have & CG_HAVE_PSI_FULL(k)) != 0;
		p->d_full_us = g->d_psi_full_us[k];
		TRY(p->some_avg10 = rpc_pb_gauge(a, &g->psi_some_avg10[k]));
		m->pressure[n++] = p;
	}
	m->n_pressure = n;
	return m;
}

static int
rpc_cgroup_window(struct rpc_arena *a, Vitals__Window *wm,
    const struct window *w)
{
	const struct window_cgroup *p = window_cgroup(w);
	Vitals__CgroupWindow *m;
	size_t i;

	if ((m = rpc_arena_alloc(a, sizeof(*m))) == NULL)
		return -ENOMEM;
	vitals__cgroup_window__init(m);
	m->state = (char *)cg_state_name(p->state);
	m->err = p->err;
	if ((m->root = rpc_pb_str(a, p->root, sizeof(p->root))) == NULL)
		return -ENOMEM;
	m->walks = p->walks;
	m->groups_seen = p->groups_seen;
	m->groups_cut = p->groups_cut;
	m->read_errors = p->read_errors;
	m->recreated = p->recreated;
	m->gone = p->gone;
	m->dropped_deltas = p->inv_deltas;
	m->paths_cut = p->path_cut;
	m->walk_ns_sum = p->walk_ns_sum;
	m->walk_ns_max = p->walk_ns_max;
	if (p->n) {
		if ((m->groups = rpc_arena_alloc(a,
			 p->n * sizeof(*m->groups))) == NULL)
			return -ENOMEM;
		for (i = 0; i < p->n; i++)
			if ((m->groups[i] = pb_group(a, &p->g[i])) == NULL)
				return -ENOMEM;
	}
	m->n_groups = p->n;
	wm->cgroup = m;
	return 0;
}

const struct rpc_part rpc_cgroup_part = {
	.window = rpc_cgroup_window,
};
