/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals cgroups` as text: the walk's state and what it could not read,
 * then one line per group, summed over the windows given, sorted by the
 * CPU share it prints (doc/metrics.md, "cgroups"). A figure whose file
 * the group lacks prints "-", never 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

struct cg_sum {
	const Vitals__Cgroup *last; /* its latest window's message */
	uint64_t usage, user, system, throttled_us;
	uint64_t span_us; /* Σ spans of the windows with valid deltas */
	uint64_t psi_some_us[3];
	bool have_cpu, have_throttle, have_psi[3];
};

static int
cmp_cpu(const void *a, const void *b)
{
	const struct cg_sum *x = a, *y = b;
	double fx = x->span_us ? (double)x->usage / (double)x->span_us : -1;
	double fy = y->span_us ? (double)y->usage / (double)y->span_us : -1;

	if (fx != fy)
		return fx < fy ? 1 : -1;
	return strcmp(x->last->path, y->last->path);
}

static bool
has(const Vitals__Cgroup *g, const char *src)
{
	size_t i;

	for (i = 0; i < g->n_sources; i++)
		if (!strcmp(g->sources[i], src))
			return true;
	return false;
}

static struct cg_sum *
find(struct cg_sum *v, size_t n, const Vitals__Cgroup *g)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].last->id == g->id && !strcmp(v[i].last->path, g->path))
			return &v[i];
	return NULL;
}

static void
put_share(struct sbuf *o, bool have, uint64_t us, uint64_t span_us)
{
	if (!have || span_us == 0)
		sbuf_printf(o, " %6s", "-");
	else
		sbuf_printf(o, " %5.1f%%",
		    100.0 * (double)us / (double)span_us);
}

static void
put_path(struct sbuf *o, const char *p, size_t room)
{
	size_t n = strlen(p) + 1;

	sbuf_putc(o, ' ');
	if (n <= room) {
		sbuf_putc(o, '/');
		for (; *p; p++)
			sbuf_putc(o,
			    ((unsigned char)*p < 0x20 || *p == 0x7f) ? '?' :
								       *p);
		return;
	}
	/* the end says which group: keep it, cut the front */
	sbuf_puts(o, "...");
	for (p += n - room + 3; *p; p++)
		sbuf_putc(o,
		    ((unsigned char)*p < 0x20 || *p == 0x7f) ? '?' : *p);
}

void
fmt_cgroups(struct sbuf *o, Vitals__Window **w, size_t nw, unsigned top_n)
{
	const Vitals__CgroupWindow *head = NULL;
	struct cg_sum *v = NULL, *s;
	size_t n = 0, cap = 0, i, j;
	uint64_t walks = 0, errs = 0, recreated = 0, gone = 0, dropped = 0;
	int64_t span_ns = 0;
	unsigned k;

	for (i = 0; i < nw; i++) {
		const Vitals__CgroupWindow *c = w[i]->cgroup;
		uint64_t wspan;

		if (c == NULL)
			continue;
		head = c;
		walks += c->walks;
		errs += c->read_errors;
		recreated += c->recreated;
		gone += c->gone;
		dropped += c->dropped_deltas;
		wspan = (uint64_t)(w[i]->mono_end_ns - w[i]->mono_start_ns) /
		    1000;
		span_ns += w[i]->mono_end_ns - w[i]->mono_start_ns;
		for (j = 0; j < c->n_groups; j++) {
			const Vitals__Cgroup *g = c->groups[j];

			if ((s = find(v, n, g)) == NULL) {
				if (n == cap) {
					cap = cap ? cap * 2 : 32;
					s = realloc(v, cap * sizeof(*v));
					if (s == NULL) {
						sbuf_puts(o, "out of memory\n");
						free(v);
						return;
					}
					v = s;
				}
				s = &v[n++];
				memset(s, 0, sizeof(*s));
			}
			s->last = g;
			if (g->deltas == 0)
				continue; /* levels only: first seen */
			s->usage += g->d_usage_us;
			s->user += g->d_user_us;
			s->system += g->d_system_us;
			s->throttled_us += g->d_throttled_us;
			/* a roll-up's deltas span its walks */
			s->span_us += wspan * g->deltas /
			    (c->walks ? c->walks : 1);
			s->have_cpu |= has(g, "cpu.stat");
			s->have_throttle |= has(g, "cpu.stat throttling");
			for (k = 0; k < g->n_pressure && k < 3; k++) {
				const Vitals__CgroupPressure *p =
				    g->pressure[k];
				unsigned r = !strcmp(p->resource, "cpu") ? 0 :
				    !strcmp(p->resource, "memory")	 ? 1 :
									   2;

				s->psi_some_us[r] += p->d_some_us;
				s->have_psi[r] = true;
			}
		}
	}
	if (head == NULL) {
		sbuf_puts(o,
		    "cgroups: no window has them (cgroup = off, or "
		    "none stored in the range)\n");
		return;
	}
	sbuf_printf(o, "cgroups: %s%s%s over %.1fs (%llu walks): %zu groups",
	    head->state, *head->root ? " at " : "", head->root,
	    (double)span_ns / 1e9, (unsigned long long)walks, n);
	if (head->groups_cut)
		sbuf_printf(o, ", %u not read (cgroup_max)", head->groups_cut);
	sbuf_printf(o,
	    "\n  read errors %llu, recreated %llu, gone %llu, dropped "
	    "deltas %llu\n",
	    (unsigned long long)errs, (unsigned long long)recreated,
	    (unsigned long long)gone, (unsigned long long)dropped);
	if (n == 0) {
		free(v);
		return;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_cpu);
	sbuf_puts(o,
	    "   CPU%  USER%   SYS%  THRTL  MEM MiB  PSI cpu/mem/io ms"
	    "  GROUP\n");
	for (i = 0; i < n && (top_n == 0 || i < top_n); i++) {
		const Vitals__Cgroup *g = v[i].last;
		char psi[72], mem[16];
		int len = 0;

		s = &v[i];
		put_share(o, s->have_cpu, s->usage, s->span_us);
		put_share(o, s->have_cpu, s->user, s->span_us);
		put_share(o, s->have_cpu, s->system, s->span_us);
		put_share(o, s->have_throttle, s->throttled_us, s->span_us);
		if (g->memory_current && g->memory_current->n)
			snprintf(mem, sizeof(mem), "%.1f",
			    g->memory_current->last / 1048576.0);
		else
			snprintf(mem, sizeof(mem), "-");
		sbuf_printf(o, " %8s", mem);
		for (k = 0; k < 3; k++) {
			char one[24];

			if (s->have_psi[k])
				snprintf(one, sizeof(one), "%llu",
				    (unsigned long long)(s->psi_some_us[k] /
					1000));
			else
				snprintf(one, sizeof(one), "-");
			len += snprintf(psi + len, sizeof(psi) - (size_t)len,
			    "%s%s", k ? "/" : "", one);
		}
		sbuf_printf(o, " %17s", psi);
		/* 80 columns: 55 so far, the path gets the rest */
		put_path(o, g->path, 24);
		sbuf_putc(o, '\n');
	}
	if (top_n && n > top_n)
		sbuf_printf(o, "  ... %zu more (-n 0 for all)\n", n - top_n);
	free(v);
}
