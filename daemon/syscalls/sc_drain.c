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
#include "sc_int.h"
#include "syscalls/sc_collect.h"
#include "window/window.h"

#ifdef HAVE_BPF
#include <bpf/bpf.h>

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

/* Every entry of the drained side, then each deleted. Out of memory: the
 * entries read so far are the window's and deleted; the rest stay in the
 * side, which is active again after the next flip and drained one flip
 * later, so nothing is lost (counted in drain_errors). */
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
	sc_rows_keep(sc, p, rows, n);
	return r;
}

/*
 * The loop's half: the slow calls that ended before the flip, the flip
 * (a map update). Nothing here waits. The part carries the slow list and
 * the thresholds in force now; the rest is sc_drain_end's, which may run
 * on another thread (the daemon's worker) while the loop goes on polling
 * the ring buffer into the next window's list.
 */
struct window_syscalls *
sc_drain_begin(struct sc_collector *sc)
{
	struct window_syscalls *p = sc_state_part(SC_ON, 0);

	sc->flipped = false;
	if (p == NULL || sc->ldr)
		return p;
	p->arch = sc->arch;
	p->floor_ns = (uint64_t)sc->cfg.floor_us * 1000;
	p->slow_ns = (uint64_t)sc->cfg.slow_ms * 1000000;
	p->top_max = sc->cfg.top;
	p->slow_max = sc->cfg.slow_max;
	/* the slow calls that ended before the flip */
	(void)sc_poll(sc);
	sc->side = (unsigned)(sc->gen & 1);
	sc->gen++;
	if (sc_write_ctl(sc) < 0) {
		sc->gen--;
		p->ctr.drain_errors++;
	} else {
		sc->flipped = true;
	}
	/* no second poll: a slow call that ended after the flip has its row
	 * in the next window, and its record joins that window's list */
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

/*
 * The waiting half, on any one thread at a time: the grace period after
 * the flip, the old side read and deleted, the counters' deltas. It
 * touches no state the loop's half or the ring buffer's reader does (the
 * side, the map fds, the deltas' previous readings). The part back, or a
 * new one (the platform loader's pins), NULL without memory.
 */
struct window_syscalls *
sc_drain_end(struct sc_collector *sc, struct window_syscalls *p)
{
	uint32_t zero = 0;
	int fd;

	if (sc->ldr) {
		sc_collect_part_free(p);
		return sc_ldr_drain(sc);
	}
	if (p == NULL)
		return NULL;
	if (sc->flipped) {
		fd = sc->ctl_fd;
		if (bpf_map_update_elem(sc->barrier_fd, &zero, &fd, BPF_ANY) <
		    0) {
			/* not drained now: it is the active side again after
			 * the next flip, drained one flip later */
			p->ctr.drain_errors++;
		} else {
			/* the test hook: a slow grace period */
			if (sc->test_delay_ms)
				nap_ms(sc->test_delay_ms);
			if (read_side(sc, sc->agg_fd[sc->side], p) < 0)
				p->ctr.drain_errors++;
		}
	}
	sc->flipped = false;
	sc_read_stats(sc, p);
	sc_read_progs(sc, p);
	return p;
}

struct window_syscalls *
sc_drain(struct sc_collector *sc)
{
	return sc_drain_end(sc, sc_drain_begin(sc));
}

void
sc_test_delay(struct sc_collector *sc, unsigned ms)
{
	sc->test_delay_ms = ms;
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
sc_drain_begin(struct sc_collector *sc)
{
	(void)sc;
	return NULL;
}

struct window_syscalls *
sc_drain_end(struct sc_collector *sc, struct window_syscalls *p)
{
	(void)sc;
	sc_collect_part_free(p);
	return NULL;
}

struct window_syscalls *
sc_drain(struct sc_collector *sc)
{
	(void)sc;
	return NULL;
}

void
sc_test_delay(struct sc_collector *sc, unsigned ms)
{
	(void)sc;
	(void)ms;
}

int
sc_window(struct sc_collector *sc, struct window *w)
{
	(void)sc;
	(void)w;
	return -EOPNOTSUPP;
}
#endif
