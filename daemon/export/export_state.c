/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a page needs between samples (doc/export.md, "Processes").
 *
 * A process series carries the kernel's counters of one instance (pid and
 * starttime) as of the latest sample: cumulative since it started, so a
 * scraper's rate() needs nothing from vitalsd's windows. Only the top N
 * processes get series; the rest is one "other" series per figure, a sum
 * kept here that only grows: a sample's delta of a process goes to it
 * unless the process had a series at both the previous sample and this
 * one (then its own series moved by exactly that delta). So at every
 * sample Σ increments of the process series + the increment of "other" ==
 * the increment of the total, which is exported as well; a process
 * entering or leaving the top N moves nothing twice.
 *
 * Pure: the collector's walk feeds it (export.c), tests feed fixtures.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "export/export.h"
#include "sched/sched.h"
#include "window/window.h"

int
export_state_init(struct export_state *st, unsigned top_n, unsigned hz,
    uint64_t page_bytes)
{
	memset(st, 0, sizeof(*st));
	if (hz == 0 || top_n > EXPORT_TOP_N_MAX)
		return -EINVAL;
	st->top_n = top_n;
	st->hz = hz;
	st->page_bytes = page_bytes;
	if (top_n &&
	    ((st->top = calloc(top_n, sizeof(*st->top))) == NULL ||
		(st->cgtop = calloc(top_n, sizeof(*st->cgtop))) == NULL)) {
		free(st->top);
		st->top = NULL;
		return -ENOMEM;
	}
	return 0;
}

void
export_state_release(struct export_state *st)
{
	free(st->procs);
	free(st->in);
	free(st->top);
	free(st->cgs);
	free(st->cgtop);
	free(st->sc);
	memset(st, 0, sizeof(*st));
}

void
export_state_begin(struct export_state *st, int64_t boot_ns)
{
	st->nin = 0;
	st->in_boot_ns = boot_ns;
}

int
export_state_add(struct export_state *st, const struct procscan_proc *p)
{
	struct export_proc *e;

	if (st->nin == st->incap) {
		size_t cap = st->incap ? st->incap * 2 : 256;
		struct export_proc *n = realloc(st->in, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		st->in = n;
		st->incap = cap;
	}
	e = &st->in[st->nin++];
	memset(e, 0, sizeof(*e));
	e->pid = p->pid;
	e->starttime = p->starttime;
	snprintf(e->comm, sizeof(e->comm), "%s", p->comm ? p->comm : "");
	e->utime = p->utime;
	e->stime = p->stime;
	e->minflt = p->minflt;
	e->majflt = p->majflt;
	e->rss_pages = p->rss_pages;
	return 0;
}

static int
proc_cmp(const void *a, const void *b)
{
	const struct export_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->starttime != y->starttime)
		return x->starttime < y->starttime ? -1 : 1;
	return 0;
}

/* A process's or a group's place in the rank (qsort_r is not in every
 * libc the daemon builds for: the keys are copied beside the index). */
struct rank {
	double score;
	bool member;
	uint64_t cum;	  /* CPU since it started (or was first seen) */
	uint64_t id, sub; /* identity: pid and start, or id and path order */
	uint32_t idx;
};

/* Higher score first; at a tie one that had a series keeps it, then more
 * CPU since it started, then identity order. */
static int
rank_cmp(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->member != y->member)
		return x->member ? -1 : 1;
	if (x->cum != y->cum)
		return x->cum > y->cum ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->sub != y->sub)
		return x->sub < y->sub ? -1 : 1;
	return 0;
}

/* The sample's delta of c (its predecessor p, NULL: none): a process born
 * since the previous sample brings all of it, one there before vitalsd
 * looked brings none (a baseline); a counter gone back starts again. */
static void
proc_delta(const struct export_state *st, const struct export_proc *c,
    const struct export_proc *p, uint64_t ret[4])
{
	uint64_t tick_ns = (uint64_t)NSEC_PER_SEC / st->hz;

	if (p) {
		ret[0] = c->utime >= p->utime ? c->utime - p->utime : 0;
		ret[1] = c->stime >= p->stime ? c->stime - p->stime : 0;
		ret[2] = c->minflt >= p->minflt ? c->minflt - p->minflt : 0;
		ret[3] = c->majflt >= p->majflt ? c->majflt - p->majflt : 0;
	} else if (st->samples > 0 && st->prev_boot_ns > 0 &&
	    c->starttime * tick_ns >= (uint64_t)st->prev_boot_ns) {
		ret[0] = c->utime;
		ret[1] = c->stime;
		ret[2] = c->minflt;
		ret[3] = c->majflt;
	} else {
		ret[0] = ret[1] = ret[2] = ret[3] = 0;
	}
}

int
export_state_end(struct export_state *st)
{
	struct export_proc *cur = st->in, *prev = st->procs;
	size_t i, j = 0, n = st->nin, cap;
	uint64_t(*d)[4] = NULL;
	struct rank *idx = NULL;
	bool *top_now = NULL;

	if (n &&
	    ((d = calloc(n, sizeof(*d))) == NULL ||
		(idx = calloc(n, sizeof(*idx))) == NULL ||
		(top_now = calloc(n, sizeof(*top_now))) == NULL)) {
		free(d);
		free(idx);
		return -ENOMEM;
	}
	qsort(cur, n, sizeof(*cur), proc_cmp);
	for (i = 0; i < n; i++) {
		struct export_proc *c = &cur[i];
		const struct export_proc *p = NULL;

		while (j < st->nprocs && proc_cmp(&prev[j], c) < 0)
			j++;
		if (j < st->nprocs && proc_cmp(&prev[j], c) == 0)
			p = &prev[j];
		proc_delta(st, c, p, d[i]);
		/* it kept its series only if its counters went on */
		c->member = p && p->member && c->utime >= p->utime &&
		    c->stime >= p->stime && c->minflt >= p->minflt &&
		    c->majflt >= p->majflt;
		c->score = (p ? p->score / 2 : 0) + (double)(d[i][0] + d[i][1]);
		st->sum.utime += d[i][0];
		st->sum.stime += d[i][1];
		st->sum.minflt += d[i][2];
		st->sum.majflt += d[i][3];
		idx[i] = (struct rank){ c->score, c->member,
			c->utime + c->stime, (uint64_t)(uint32_t)c->pid,
			c->starttime, (uint32_t)i };
	}

	/* the top N of this sample */
	st->ntop = n < st->top_n ? n : st->top_n;
	if (n)
		qsort(idx, n, sizeof(*idx), rank_cmp);
	for (i = 0; i < st->ntop; i++) {
		top_now[idx[i].idx] = true;
		st->top[i] = idx[i].idx;
	}

	/* "other": the deltas no series carries (see the top of the file),
	 * and the RSS of the processes without a series */
	st->o_rss_pages = 0;
	for (i = 0; i < n; i++) {
		struct export_proc *c = &cur[i];

		if (!(top_now[i] && c->member)) {
			st->sum.o_utime += d[i][0];
			st->sum.o_stime += d[i][1];
			st->sum.o_minflt += d[i][2];
			st->sum.o_majflt += d[i][3];
		}
		c->member = top_now[i];
		if (!top_now[i])
			st->o_rss_pages += c->rss_pages;
	}
	free(d);
	free(idx);
	free(top_now);

	/* this sample is the next one's baseline */
	st->procs = cur;
	st->in = prev;
	cap = st->cap;
	st->cap = st->incap;
	st->incap = cap;
	st->nprocs = n;
	st->nin = 0;
	st->prev_boot_ns = st->in_boot_ns;
	if (st->samples == 0)
		st->first_boot_ns = st->in_boot_ns;
	st->samples++;
	return 0;
}

static int
cg_cmp(const void *a, const void *b)
{
	const struct export_cg *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return strcmp(x->path, y->path);
}

/*
 * A closed window's groups: the same rules as processes (the top of the
 * file), per window instead of per sample, and "other" per depth, since a
 * group holds its children (summing across depths counts twice).
 */
static int
cg_window(struct export_state *st, const struct window_cgroup *cg,
    int64_t boot_ns)
{
	size_t i, j = 0, n = cg->n;
	struct export_cg *cur, *prev = st->cgs;
	struct rank *idx = NULL;
	bool *top_now = NULL;

	if ((cur = calloc(n ? n : 1, sizeof(*cur))) == NULL ||
	    (n &&
		((idx = calloc(n, sizeof(*idx))) == NULL ||
		    (top_now = calloc(n, sizeof(*top_now))) == NULL))) {
		free(cur);
		free(idx);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct window_cgroup_grp *g = &cg->g[i];

		cur[i].id = g->id;
		snprintf(cur[i].path, sizeof(cur[i].path), "%s", g->path);
		cur[i].depth = g->depth < EXPORT_CG_DEPTHS ?
		    g->depth :
		    EXPORT_CG_DEPTHS - 1;
		/* the deltas of this window, for now */
		cur[i].user_us = g->d_user_us;
		cur[i].system_us = g->d_system_us;
		cur[i].pgfault = g->d_pgfault;
		cur[i].pgmajfault = g->d_pgmajfault;
		cur[i].have_mem = g->mem_current.n > 0;
		cur[i].mem_bytes = (uint64_t)g->mem_current.last;
	}
	qsort(cur, n, sizeof(*cur), cg_cmp);
	for (i = 0; i < n; i++) {
		struct export_cg *c = &cur[i];
		const struct export_cg *p = NULL;
		uint64_t d = c->user_us + c->system_us;

		while (j < st->ncgs && cg_cmp(&prev[j], c) < 0)
			j++;
		if (j < st->ncgs && cg_cmp(&prev[j], c) == 0)
			p = &prev[j];
		c->score = (p ? p->score / 2 : 0) + (double)d;
		c->member = p && p->member;
		/* cur is sorted by (id, path): i is the path's order */
		idx[i] = (struct rank){ c->score, c->member,
			p ? p->user_us + p->system_us : 0, c->id, i,
			(uint32_t)i };
	}
	st->ncgtop = n < st->top_n ? n : st->top_n;
	if (n)
		qsort(idx, n, sizeof(*idx), rank_cmp);
	for (i = 0; i < st->ncgtop; i++) {
		top_now[idx[i].idx] = true;
		st->cgtop[i] = idx[i].idx;
	}
	memset(st->cg_o_mem, 0, sizeof(st->cg_o_mem));
	j = 0;
	for (i = 0; i < n; i++) {
		struct export_cg *c = &cur[i];
		const struct export_cg *p = NULL;
		unsigned dp = c->depth;

		while (j < st->ncgs && cg_cmp(&prev[j], c) < 0)
			j++;
		if (j < st->ncgs && cg_cmp(&prev[j], c) == 0)
			p = &prev[j];
		st->cg_depths |= 1u << dp;
		if (!(top_now[i] && c->member)) {
			st->cg_o_user_us[dp] += c->user_us;
			st->cg_o_system_us[dp] += c->system_us;
			st->cg_o_pgfault[dp] += c->pgfault;
			st->cg_o_pgmajfault[dp] += c->pgmajfault;
		}
		if (!top_now[i] && c->have_mem)
			st->cg_o_mem[dp] += c->mem_bytes;
		/* deltas into the sums since first seen */
		c->first_boot_ns = p ? p->first_boot_ns : boot_ns;
		if (p) {
			c->user_us += p->user_us;
			c->system_us += p->system_us;
			c->pgfault += p->pgfault;
			c->pgmajfault += p->pgmajfault;
		}
		c->member = top_now[i];
	}
	free(idx);
	free(top_now);
	free(st->cgs);
	st->cgs = cur;
	st->ncgs = n;
	return 0;
}

/* A window's GPU devices: the last figures, time in state summed by hz */
static void
gpu_window(struct export_state *st, const struct window_gpufreq *p,
    int64_t boot_ns)
{
	uint32_t i, k, s;

	st->gpu_on = true;
	for (k = 0; k < st->ngpu; k++)
		st->gpu[k].in_last = false;
	for (i = 0; i < p->ndev; i++) {
		const struct gpufreq_wdev *d = &p->dev[i];
		struct export_gpu *g;

		for (k = 0; k < st->ngpu; k++)
			if (!strcmp(st->gpu[k].name, d->name))
				break;
		if (k == st->ngpu) {
			if (st->ngpu >= GPUFREQ_MAX_DEV)
				continue;
			g = &st->gpu[st->ngpu++];
			memset(g, 0, sizeof(*g));
			memcpy(g->name, d->name, sizeof(g->name));
			g->first_boot_ns = boot_ns;
		}
		g = &st->gpu[k];
		g->last = d->w;
		g->in_last = true;
		if (!(d->w.have & GPUFREQ_HAVE_TIS))
			continue;
		for (s = 0; s < d->w.tis_n; s++) {
			uint32_t j;

			for (j = 0; j < g->nstates; j++)
				if (g->hz[j] == d->w.tis_hz[s])
					break;
			if (j == g->nstates) {
				if (g->nstates >= GPUFREQ_MAX_STATES)
					continue;
				g->hz[g->nstates++] = d->w.tis_hz[s];
			}
			g->ms[j] += d->w.tis_ms[s];
		}
	}
}

void
export_state_window(struct export_state *st, const struct window *w)
{
	const struct window_gpufreq *gf = window_gpufreq(w);
	const struct window_cgroup *cg = window_cgroup(w);

	const struct window_bpf *b = window_sched(w);
	unsigned i;

	st->sum.samples += w->samples;
	st->sum.samples_valid += w->samples_valid;
	st->sum.late_ticks += w->health.late_ticks;
	for (i = 0; i < INV__MAX; i++) {
		st->sum.inv_samples[i] += w->inv_samples[i];
		st->sum.inv_deltas[i] += w->inv_deltas[i];
	}
	st->store_dropped = w->health.store_dropped;
	if (cg && cg->state == CG_STATE_OK)
		(void)cg_window(st, cg, w->boot_start_ns);
	if (gf)
		gpu_window(st, gf, w->boot_start_ns);
	(void)export_sc_window(&st->sc, w);
	if (b == NULL || !vbpf_state_on(b->state))
		return;
	st->sum.bpf = true;
	st->sum.bpf_oncpu_ns += b->oncpu_ns;
	st->sum.bpf_rq_ns += b->rq_ns;
	st->sum.bpf_rq_count += b->rq_count;
	st->sum.bpf_switches += b->switches;
	st->sum.bpf_wakeups += b->wakeups;
	st->sum.bpf_lost_ns += b->lost_ns;
}

/* The CPU modes both formats export, in this order (OTel's cpu.mode
 * values), and a sample's ticks for them. */
const char *const export_cpu_modes[EXPORT_CPU_MODES] = { "user", "nice",
	"system", "idle", "iowait", "interrupt", "softirq", "steal" };

void
export_cpu_fields(const struct cpu_times *t, uint64_t ret[EXPORT_CPU_MODES])
{
	ret[0] = t->user;
	ret[1] = t->nice;
	ret[2] = t->system;
	ret[3] = t->idle;
	ret[4] = t->iowait;
	ret[5] = t->irq;
	ret[6] = t->softirq;
	ret[7] = t->steal;
}
