/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall part of a closing window (doc/bpf.md, "Syscall latency"):
 * flip sc_ctl.gen so programs add to the other side, wait one RCU grace
 * period (storing sc_ctl's fd into sc_barrier returns after
 * synchronize_rcu(), and each program runs inside an RCU read-side
 * section), then read and delete the old side, which nothing writes any
 * more: no call is lost between a read and a delete. Rows are kept by
 * sum_ns (the top syscall_top), the rest folded into `other`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sysnames.h"
#include "syscalls/sc_collect.h"
#include "window/window.h"

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

#if defined(HAVE_BPF) && defined(HAVE_BPF_CORE)
#include <bpf/bpf.h>

#include "syscalls/syscalls.bpf.h"
#include "sc_int.h"

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

static int
by_enter(const void *a, const void *b)
{
	const struct sc_slow *x = a, *y = b;

	return x->boot_enter_ns < y->boot_enter_ns ?
	    -1 :
	    x->boot_enter_ns > y->boot_enter_ns;
}

static void
row_from(struct sc_row *r, const struct sc_key *k, const struct sc_val *v)
{
	memset(r, 0, sizeof(*r));
	r->tgid = k->tgid;
	r->start_ns = k->start_ns;
	r->nr = k->nr;
	memcpy(r->comm, v->comm, SC_COMM_LEN);
	r->comm[SC_COMM_LEN - 1] = '\0';
	r->count = v->count;
	memcpy(r->errors, v->errors, sizeof(r->errors));
	r->sum_ns = v->sum_ns;
	r->max_ns = v->max_ns;
	r->fast = v->fast;
	memcpy(r->hist, v->hist, sizeof(r->hist));
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

/* Every entry of the drained side, then each deleted. */
static int
read_side(struct sc_collector *sc, int fd, struct window_syscalls *p)
{
	struct sc_key cur, next, *keys = NULL;
	struct sc_val val;
	size_t n = 0, cap = 0, i;
	struct sc_row *rows = NULL;
	void *prev = NULL;
	int r = 0;

	while (n <= VITALS_SC_ENTRIES &&
	    bpf_map_get_next_key(fd, prev, &next) == 0) {
		cur = next;
		prev = &cur;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			void *k = realloc(keys, c * sizeof(*keys));
			void *w = k ? realloc(rows, c * sizeof(*rows)) : NULL;

			if (k)
				keys = k;
			if (w == NULL) {
				r = -ENOMEM;
				break;
			}
			rows = w;
			cap = c;
		}
		if (bpf_map_lookup_elem(fd, &cur, &val) < 0) {
			p->ctr.drain_errors++;
			continue;
		}
		keys[n] = cur;
		row_from(&rows[n++], &cur, &val);
	}
	for (i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, &keys[i]) < 0)
			p->ctr.drain_errors++;
	free(keys);
	if (r < 0) {
		free(rows);
		return r;
	}
	qsort(rows, n, sizeof(*rows), by_sum);
	for (i = sc->cfg.top; i < n; i++) {
		fold(&p->other, &rows[i]);
		p->other_rows++;
	}
	p->nrows = n < sc->cfg.top ? n : sc->cfg.top;
	p->rows = rows;
	if (p->nrows == 0) {
		free(rows);
		p->rows = NULL;
	}
	return 0;
}

static void
read_stats(struct sc_collector *sc, struct window_syscalls *p)
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
	/* a call whose thread got no storage was not timed: a missing enter
	 * in the contract's terms */
	p->ctr.missing_enter += D(SC_S_NO_STORAGE);
#undef D
	memcpy(sc->stats_prev, now, sizeof(now));
}

static void
read_progs(struct sc_collector *sc, struct window_syscalls *p)
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

struct window_syscalls *
sc_drain(struct sc_collector *sc)
{
	struct window_syscalls *p = sc_state_part(SC_ON, 0);
	unsigned side = (unsigned)(sc->gen & 1);
	uint32_t zero = 0;
	int fd, r;

	if (p == NULL)
		return NULL;
	p->arch = sc->arch;
	p->floor_ns = (uint64_t)sc->cfg.floor_us * 1000;
	p->slow_ns = (uint64_t)sc->cfg.slow_ms * 1000000;
	/* the slow calls that ended before the flip */
	(void)sc_poll(sc);
	sc->gen++;
	if ((r = sc_write_ctl(sc)) < 0) {
		sc->gen--;
		p->ctr.drain_errors++;
	} else {
		fd = sc->ctl_fd;
		if (bpf_map_update_elem(sc->barrier_fd, &zero, &fd, BPF_ANY) <
		    0) {
			/* not drained now: it is the active side again after
			 * the next flip, drained one flip later */
			p->ctr.drain_errors++;
		} else if (read_side(sc, sc->agg_fd[side], p) < 0) {
			p->ctr.drain_errors++;
		}
	}
	read_stats(sc, p);
	read_progs(sc, p);
	(void)sc_poll(sc);
	if (sc->nslow > 1)
		qsort(sc->slow, sc->nslow, sizeof(*sc->slow), by_enter);
	p->slow = sc->slow;
	p->nslow = sc->nslow;
	p->ctr.slow_dropped = sc->slow_dropped;
	sc->slow = NULL;
	sc->nslow = sc->slow_cap = 0;
	sc->slow_dropped = 0;
	return p;
}

int
sc_window(struct sc_collector *sc, struct window *w)
{
	struct window_syscalls *p = sc_drain(sc);

	if (p == NULL)
		return -ENOMEM;
	/* a part already there is ours (a state part): replaced */
	sc_collect_part_free(w->part[WPART_SYSCALLS]);
	window_part_set(w, WPART_SYSCALLS, p);
	return 0;
}
#else
struct window_syscalls *
sc_drain(struct sc_collector *sc)
{
	(void)sc;
	return NULL;
}

int
sc_window(struct sc_collector *sc, struct window *w)
{
	(void)sc;
	(void)w;
	return -EOPNOTSUPP;
}
#endif
