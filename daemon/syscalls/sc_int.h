/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the syscall collector: syscalls.c (load, ring buffer) and
 * sc_drain.c (the window's part). */
#ifndef VITALSD_SC_INT_H
#define VITALSD_SC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/sysnames.h"
#include "syscalls/sc_collect.h"

#define SC_NPROG 2

struct vitals_syscalls;
struct event;
struct ring_buffer;

struct sc_collector {
	struct vitals_syscalls *skel;
	struct ring_buffer *rb;
	struct event *ev;
	struct sc_config cfg;
	enum sysnames_arch arch;
	uint64_t gen; /* sc_ctl.gen in force */
	int ctl_fd, barrier_fd, agg_fd[2], stats_fd, traced_fd;
	int prog_fd[SC_NPROG];
	int ncpu;
	/* the open window's slow calls */
	struct sc_slow *slow;
	size_t nslow, slow_cap;
	uint64_t slow_dropped;
	/* previous cumulative readings, for deltas */
	uint64_t stats_prev[8];
	uint64_t run_ns_prev, run_cnt_prev;
};

int sc_write_ctl(struct sc_collector *sc);

#endif
