/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What both syscall drains share (sc_drain.c: our object's double buffer;
 * sc_ldr.c: the platform loader's running totals): the part's memory, the
 * top rows and their `other`, the counters' and the programs' deltas.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sysnames.h"
#include "sc_int.h"
#include "syscalls/sc_collect.h"

void
sc_collect_part_free(struct window_syscalls *p)
{
	if (p == NULL)
		return;
	free(p->rows);
	free(p->slow);
	free(p);
}

struct window_syscalls *
sc_state_part(uint32_t state, int err)
{
	struct window_syscalls *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->state = state;
	p->err = err;
	p->arch = sysnames_native();
	p->other.tgid = -1;
	return p;
}

static int
by_sum(const void *a, const void *b)
{
	const struct sc_row *x = a, *y = b;

	if (x->sum_ns != y->sum_ns)
		return x->sum_ns < y->sum_ns ? 1 : -1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static void
fold(struct sc_row *o, const struct sc_row *r)
{
	int i;

	o->count += r->count;
	for (i = 0; i < SC_ERR__MAX; i++)
		o->errors[i] += r->errors[i];
	o->sum_ns += r->sum_ns;
	if (r->max_ns > o->max_ns)
		o->max_ns = r->max_ns;
	o->fast += r->fast;
	for (i = 0; i < SC_HIST_N; i++)
		o->hist[i] += r->hist[i];
}

void
sc_rows_keep(struct sc_collector *sc, struct window_syscalls *p,
    struct sc_row *rows, size_t n)
{
	size_t i;

	if (n > 1)
		qsort(rows, n, sizeof(*rows), by_sum);
	for (i = sc->cfg.top; i < n; i++) {
		fold(&p->other, &rows[i]);
		p->other_rows++;
	}
	p->nrows = n < sc->cfg.top ? n : sc->cfg.top;
	p->rows = rows;
	p->top_max = sc->cfg.top;
	p->slow_max = sc->cfg.slow_max;
	if (p->nrows == 0) {
		free(rows);
		p->rows = NULL;
	} else if (p->nrows < n) {
		/* the window keeps its top rows only: the drained array is
		 * cut to them (it may hold every entry of the map) */
		struct sc_row *c = realloc(rows, p->nrows * sizeof(*rows));

		if (c != NULL)
			p->rows = c;
	}
}

void
sc_health_add(struct sc_health *h, const struct window_syscalls *p)
{
	const struct sc_counters *c = &p->ctr;

	h->windows++;
	h->have = p->have;
	h->prog_run_ns = p->prog_run_ns;
	h->prog_run_cnt = p->prog_run_cnt;
	h->ctr.missing_enter += c->missing_enter;
	h->ctr.mismatch += c->mismatch;
	h->ctr.map_full += c->map_full;
	h->ctr.rb_full += c->rb_full;
	h->ctr.slow_dropped += c->slow_dropped;
	h->ctr.compat += c->compat;
	h->ctr.drain_errors += c->drain_errors;
}

unsigned
sc_traced(const struct sc_collector *sc)
{
	return sc_config_count(&sc->cfg);
}

#ifdef HAVE_BPF
#include <bpf/bpf.h>

void
sc_read_stats(struct sc_collector *sc, struct window_syscalls *p)
{
	uint64_t *v = calloc((size_t)sc->ncpu, sizeof(*v));
	uint64_t now[SC_S__MAX] = { 0 };
	uint32_t i;
	int c;

	if (v == NULL) {
		p->ctr.drain_errors++;
		return;
	}
	for (i = 0; i < SC_S__MAX; i++) {
		if (bpf_map_lookup_elem(sc->stats_fd, &i, v) < 0) {
			p->ctr.drain_errors++;
			now[i] = sc->stats_prev[i];
			continue;
		}
		for (c = 0; c < sc->ncpu; c++)
			now[i] += v[c];
	}
	free(v);
#define D(i) (now[i] - sc->stats_prev[i])
	p->ctr.missing_enter = D(SC_S_MISSING_ENTER);
	p->ctr.mismatch = D(SC_S_MISMATCH);
	p->ctr.map_full = D(SC_S_MAP_FULL);
	p->ctr.rb_full = D(SC_S_RB_FULL);
	p->ctr.compat = D(SC_S_COMPAT);
	/* a call whose thread got no storage at its enter is not timed: its
	 * exit finds nothing pending and counts MISSING_ENTER itself, so
	 * NO_STORAGE is not added again */
#undef D
	memcpy(sc->stats_prev, now, sizeof(now));
}

void
sc_read_progs(struct sc_collector *sc, struct window_syscalls *p)
{
	struct bpf_prog_info info;
	uint64_t ns = 0, cnt = 0;
	uint32_t len;
	int i;

	for (i = 0; i < SC_NPROG; i++) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(sc->prog_fd[i], &info, &len) < 0) {
			p->ctr.drain_errors++;
			return;
		}
		ns += info.run_time_ns;
		cnt += info.run_cnt;
	}
	/* statistics off: both stay 0 (and were 0 before) */
	if (cnt > 0 || ns > 0)
		p->have |= SC_HAVE_PROG_STATS;
	p->prog_run_ns = ns - sc->run_ns_prev;
	p->prog_run_cnt = cnt - sc->run_cnt_prev;
	sc->run_ns_prev = ns;
	sc->run_cnt_prev = cnt;
}
#endif
