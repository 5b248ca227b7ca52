/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall part of a window downstream of the collector: its typed
 * accessor and operations (sc_window.c: free, copy, the roll-up merge,
 * dump) and the percentile estimator over its log2 histogram (sc_hist.c,
 * doc/metrics.md "Syscall latency").
 */
#ifndef VITALSD_SC_WINDOW_H
#define VITALSD_SC_WINDOW_H

#include "syscalls/syscalls.h"
#include "window/window.h"

static inline struct window_syscalls *
window_syscalls(const struct window *w)
{
	return (struct window_syscalls *)window_part(w, WPART_SYSCALLS);
}

extern const struct window_part_ops sc_window_part;

struct window_syscalls *window_syscalls_new(void);
void window_syscalls_free(struct window_syscalls *p);
struct window_syscalls *window_syscalls_dup(const struct window_syscalls *p);
/* Fold src (the later window's part) into *accp (either may be NULL):
 * rows by (tgid, start_ns, nr) add, the top by sum_ns kept and the rest
 * summed into other, slow calls by time up to the bound (the rest
 * counted in ctr.slow_dropped), counters add. *accp stays valid. */
int window_syscalls_merge(struct window_syscalls **accp,
    const struct window_syscalls *src);
/* rows by sum_ns, largest first (ties by tgid, nr); slow by time */
void window_syscalls_sort(struct window_syscalls *p);
/* sc_hist.c: the q-quantile (0 < q <= 1) of a row's latencies, ns: fast
 * calls (under floor_ns, not in hist) taken as spread over [0, floor_ns),
 * the histogram's bucket holding rank ceil(q × n) interpolated linearly,
 * the result clamped to max_ns. 0 when the row has no call. */
uint64_t sc_hist_quantile(const uint64_t hist[SC_HIST_N], uint64_t fast,
    uint64_t floor_ns, uint64_t max_ns, double q);
/* [lo, hi) of bucket b, ns (the last bucket's hi: UINT64_MAX) */
void sc_hist_bounds(unsigned b, uint64_t *lo, uint64_t *hi);
uint64_t sc_row_errors(const struct sc_row *r); /* Σ errors[] */
/* "off", "on", "unsupported", "failed" (enum sc_state) */
const char *sc_state_name(uint32_t state);

#endif
