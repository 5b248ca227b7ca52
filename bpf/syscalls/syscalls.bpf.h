/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shared by bpf/syscalls/syscalls.bpf.c (and its bpfloader twin in
 * bpf/aosp/) and daemon/syscalls/syscalls.c: the layout of the syscall
 * latency maps and ring buffer records. Fixed-width types only.
 */
#ifndef VITALS_BPF_SYSCALLS_H
#define VITALS_BPF_SYSCALLS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Traced set: sc_traced[nr] != 0; nr >= VITALS_SC_NR_MAX is never traced
 * (x32's numbers, with bit 30 set, included). */
#define VITALS_SC_NR_MAX 1024
/* (process, syscall) entries per side of the aggregate */
#define VITALS_SC_ENTRIES 8192
#define VITALS_SC_HIST_N 32 /* = SC_HIST_N (daemon/syscalls/syscalls.h) */
#define VITALS_SC_COMM_LEN 16
#define VITALS_SC_RB_KIB 64 /* default ring buffer size */

/* sc_ctl[0], written by the daemon only: the side programs add to, and
 * the thresholds. */
struct sc_ctl {
	__u64 gen;	/* side = gen & 1 */
	__u64 floor_ns; /* calls under it: count, errors, sum only */
	__u64 slow_ns;	/* calls at or over it: a ring buffer record;
			 * 0: none */
	/* a record wakes the reader only once the ring holds at least
	 * this many bytes (it included); below, the reader takes it at its
	 * next tick. 0: every record may wake it (the kernel's own rule) */
	__u64 wake_bytes;
};

/* pending call of one thread (task storage) */
struct sc_pend {
	__u32 nr;
	__u32 busy;    /* 1: an enter waits for its exit */
	__u64 t_enter; /* bpf_ktime_get_boot_ns() */
};

struct sc_key {
	__s32 tgid;
	__u32 nr;
	__u64 start_ns; /* the leader's start_boottime */
};

enum { SC_E_EAGAIN, SC_E_EINTR, SC_E_ETIMEDOUT, SC_E_OTHER, SC_E__MAX };

struct sc_val {
	__u64 count;
	__u64 errors[SC_E__MAX];
	__u64 sum_ns;
	__u64 max_ns;
	__u64 fast;
	__u64 hist[VITALS_SC_HIST_N];
	char comm[VITALS_SC_COMM_LEN]; /* the leader's, at insert */
};

/* ring buffer record of a slow call */
struct sc_rec {
	__s32 tid, tgid;
	__u64 start_ns;
	char comm[VITALS_SC_COMM_LEN]; /* the thread's, at exit */
	__u32 nr, pad;
	__s64 ret;
	__u64 t_enter; /* CLOCK_BOOTTIME ns */
	__u64 lat_ns;
};

/* sc_stats (per-CPU array) indexes: cumulative counters */
enum {
	SC_S_MISSING_ENTER,
	SC_S_MISMATCH,
	SC_S_MAP_FULL,
	SC_S_RB_FULL,
	SC_S_COMPAT,
	SC_S_NO_STORAGE, /* task storage not created: the call not timed */
	SC_S__MAX
};

#endif
