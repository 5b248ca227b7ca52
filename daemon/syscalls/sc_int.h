/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the syscall collector: syscalls.c (load, ring buffer) and
 * sc_drain.c (the window's part). */
#ifndef VITALSD_SC_INT_H
#define VITALSD_SC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sysnames.h"
#include "syscalls/sc_collect.h"
#include "syscalls/syscalls.bpf.h"

#define SC_NPROG 2
#define SC_LDR_PROGS 3 /* sys_enter, sys_exit, sched_process_exit */

/* one sc_tot entry at the previous drain (sc_ldr.c), sorted by key */
struct sc_snap {
	int32_t tgid;
	uint32_t nr;
	struct sc_val v;
	uint64_t start_ns; /* the process's start, read at first sight (pins
			    * reader: kept so one process keeps one identity
			    * for the entry's life); 0 gone before it */
};

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
	/* between sc_drain_begin and sc_drain_end: the side to read, and
	 * whether the flip took (else nothing is read) */
	unsigned side;
	bool flipped;
	unsigned test_delay_ms; /* sc_test_delay */
	int ctl_fd, barrier_fd, agg_fd[2], stats_fd, traced_fd;
	int prog_fd[SC_NPROG];
	int ncpu;
	/* the open window's slow calls */
	struct sc_slow *slow;
	size_t nslow, slow_cap;
	uint64_t slow_dropped;
	/* the ring buffer: its bytes, and its reads (sc_ring_stats) */
	uint32_t rb_size;
	uint64_t rb_wakeups, rb_reads, rb_records;
	/* previous cumulative readings, for deltas */
	uint64_t stats_prev[8];
	uint64_t run_ns_prev, run_cnt_prev;
	/* the platform loader's pins (sc_ldr.c) instead of our object */
	bool ldr;
	char proc_root[256];
	char instance[64]; /* the daemon's tracefs instance, "" none */
	int tot_fd;
	int perf_fd[SC_LDR_PROGS], ldr_prog_fd[SC_LDR_PROGS];
	struct sc_snap *snap;
	size_t nsnap;
};

int sc_write_ctl(struct sc_collector *sc);
/* sc_drain.c: rows (taken) sorted, the top kept, the rest in other; the
 * counters' and the programs' deltas */
void sc_rows_keep(struct sc_collector *sc, struct window_syscalls *p,
    struct sc_row *rows, size_t n);
void sc_read_stats(struct sc_collector *sc, struct window_syscalls *p);
void sc_read_progs(struct sc_collector *sc, struct window_syscalls *p);
/* sc_ldr.c */
int sc_ldr_new(const struct sc_opts *o, struct sc_collector **ret);
struct window_syscalls *sc_ldr_drain(struct sc_collector *sc);
void sc_ldr_free(struct sc_collector *sc);

#endif
