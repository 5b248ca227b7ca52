/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity-weighted CPU: CPU time weighted by the capacity and the
 * frequency of the CPU it ran on, so that the same work reads the same on
 * a little and on a big core (doc/metrics.md, "Capacity-weighted CPU").
 * Two sources: the BPF sched_switch accounting weighs every slice in the
 * kernel (bpf/sched, doc/bpf.md); without it, an approximation from the
 * per-CPU gauges of the window (busy ticks, cpu_capacity, cur/max).
 * wcpu.c is pure arithmetic; its part of a window lives in wcpu_window.c.
 */
#ifndef VITALSD_WCPU_H
#define VITALSD_WCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "core/util.h"
#include "window/window.h"

#define WCPU_SCALE 1024u    /* capacity and frequency scales: 1024 = 1 */
#define WCPU_ONE (1u << 20) /* capacity × frequency scale of a 1.0 CPU */
#define WCPU_PROCS_MAX 1024 /* BPF rows kept per window, by on-CPU time */
#define WCPU_THREADS_MAX 2048

/* Where a task's weighted figure comes from; stored, never renumbered. */
enum wcpu_src {
	WCPU_SRC_NONE,	 /* no figure (a window without the part) */
	WCPU_SRC_BPF,	 /* its own slices, weighted by the kernel */
	WCPU_SRC_APPROX, /* the window's busy-weighted scale (no BPF row) */
	WCPU_SRC__MAX
};

/* One task's BPF figures in a window: a process (its threads, the exited
 * ones included) or a thread. */
struct wcpu_row {
	int32_t id; /* pid or tid */
	int32_t tgid;
	uint64_t starttime; /* ticks, as /proc/<pid>/stat field 22 */
	uint64_t oncpu_ns;
	uint64_t wtd_ns; /* Σ slice × capacity/1024 × frequency/1024 */
};

/* The part (window_parts[WPART_WCPU]). */
struct window_wcpu {
	/* the approximation, from the window's per-CPU figures */
	uint64_t busy_ticks; /* Σ_cpu busy ticks */
	uint64_t wbusy; /* Σ_cpu busy × capacity × fscale (WCPU_ONE = 1) */
	uint64_t nocap_ticks;  /* busy ticks of CPUs without cpu_capacity */
	uint64_t nofreq_ticks; /* busy ticks of CPUs without cur or max */
	uint32_t windows;      /* level-0 windows summed (a roll-up's count) */
	/* the kernel's weighting (BPF); drains 0: none */
	uint32_t drains;
	uint64_t oncpu_ns, wtd_ns;	 /* Σ over every thread drained */
	uint64_t nocap_ns, nofreq_ns;	 /* ns weighted as 1024 (no ksym) */
	uint32_t procs_cut, threads_cut; /* rows past the bounds */
	size_t nprocs, nthreads;	 /* sorted by (id, starttime) */
	struct wcpu_row *procs, *threads;
};

static inline struct window_wcpu *
window_wcpu(const struct window *w)
{
	return (struct window_wcpu *)window_part(w, WPART_WCPU);
}

struct bpf_sched_batch;
struct window_bpf;

/* wcpu.c: pure */
const char *wcpu_src_name(unsigned src);
uint32_t wcpu_fscale(double cur_khz, int64_t max_khz);
void wcpu_approx_add(struct window_wcpu *p, const struct window *w);
unsigned wcpu_scales(const struct window *w, uint32_t *ret_cap,
    uint32_t *ret_freq, unsigned max);
double wcpu_approx_factor(const struct window_wcpu *p);
int wcpu_bpf_add(struct window_wcpu *p, const struct bpf_sched_batch *b,
    unsigned hz, uint64_t nocap_ns, uint64_t nofreq_ns);
const struct wcpu_row *wcpu_find(const struct window_wcpu *p, bool thread,
    int32_t id, uint64_t starttime);
double wcpu_task(const struct window_wcpu *p, bool thread, int32_t id,
    uint64_t starttime, uint64_t ticks, unsigned *ret_src);
int wcpu_merge_into(struct window_wcpu *acc, const struct window_wcpu *src);
void wcpu_keep_bpf_rows(struct window_wcpu *p, const struct window_bpf *b);

/* wcpu_window.c: the part */
struct window_wcpu *window_wcpu_new(void);
void window_wcpu_free(struct window_wcpu *p);
struct window_wcpu *window_wcpu_dup(const struct window_wcpu *p);
extern const struct window_part_ops wcpu_window_part;

#endif /* VITALSD_WCPU_H */
