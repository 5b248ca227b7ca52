/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall latency per process (issue 22, source 002): what the BPF pair
 * of raw_syscalls sys_enter/sys_exit programs (bpf/syscalls/) counts per
 * (process, syscall) in its maps and reports of slow calls through a ring
 * buffer, as one window's part (WPART_SYSCALLS).
 *
 * This header is the contract between the collector (syscalls.c: loader,
 * drain, ring buffer, which fills a struct window_syscalls at window
 * close) and everything downstream of the part (sc_window.c: part ops and
 * roll-up merge; the store, rpc, client and exports). Fields may be added;
 * none may change meaning.
 */
#ifndef VITALSD_SYSCALLS_H
#define VITALSD_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>

/* Latency histogram: bucket b counts calls with latency in [2^b, 2^(b+1))
 * ns; bucket 0 also takes 0 and 1 ns, the last bucket everything from
 * 2^(SC_HIST_N-1) ns (~2.1 s) up. */
#define SC_HIST_N 32
#define SC_COMM_LEN 16
#define SC_TOP_DEFAULT 32
#define SC_SLOW_DEFAULT 64

/* Negative returns by class (errno = -ret). */
enum sc_err {
	SC_ERR_EAGAIN,	  /* EAGAIN (= EWOULDBLOCK) */
	SC_ERR_EINTR,	  /* EINTR and the kernel's restart codes seen at
			   * exit (ERESTARTSYS 512 ... ERESTART_RESTARTBLOCK 516) */
	SC_ERR_ETIMEDOUT, /* ETIMEDOUT */
	SC_ERR_OTHER,	  /* any other -4095 <= ret < 0 */
	SC_ERR__MAX
};

enum sc_state {
	SC_OFF, /* not configured (syscall_trace = off): nothing attached */
	SC_ON,	/* attached, figures below */
	SC_UNSUPPORTED, /* the build or kernel cannot (no BPF, no tracepoint) */
	SC_FAILED,	/* configured, but loading or attaching failed: err */
};

/* One process's calls of one syscall over the window. The process is the
 * identity (tgid, start_ns), start_ns being the leader's start_boottime in
 * ns (as the sched accounting keys processes; /proc/<pid>/stat field 22 ×
 * 10^9 / USER_HZ). */
struct sc_row {
	int32_t tgid;	   /* -1 in the "other" row */
	uint64_t start_ns; /* 0 in the "other" row */
	char comm[SC_COMM_LEN];
	uint32_t nr;	/* syscall number in the window's arch numbering */
	uint64_t count; /* calls that returned in the window (paired) */
	uint64_t errors[SC_ERR__MAX];
	uint64_t sum_ns; /* Σ latency of all `count` calls */
	uint64_t max_ns;
	/* calls under the latency floor: in count, errors and sum_ns, not in
	 * max_ns or hist[] (so Σ hist = count − fast) */
	uint64_t fast;
	uint64_t hist[SC_HIST_N];
};

/* A call over the slow threshold, from the ring buffer. */
struct sc_slow {
	int32_t tid, tgid;
	uint64_t start_ns;	/* the process's identity, as in sc_row */
	char comm[SC_COMM_LEN]; /* the thread's comm at exit */
	uint32_t nr;
	int64_t ret;
	int64_t boot_enter_ns; /* CLOCK_BOOTTIME at sys_enter */
	uint64_t lat_ns;
};

/* Counted failures and losses over the window (deltas). */
struct sc_counters {
	uint64_t missing_enter; /* an exit with no pending enter (attached
				 * mid-call, or the enter was lost) */
	uint64_t mismatch;	/* an exit whose nr is not the pending one:
				 * the pending enter is dropped, partial */
	uint64_t map_full;	/* a (process, syscall) entry not inserted */
	uint64_t rb_full;      /* slow calls whose ring buffer reserve failed */
	uint64_t slow_dropped; /* slow calls read but over the window's list
				 * bound (kept in rows; not in slow[]) */
	uint64_t compat;       /* calls of 32-bit (compat) tasks skipped */
	uint64_t drain_errors; /* map reads or deletes that failed */
};

#define SC_HAVE_PROG_STATS (1u << 0) /* prog_run_* valid (BPF stats on) */

struct window_syscalls {
	uint32_t state; /* enum sc_state */
	int32_t err;	/* errno behind SC_FAILED / SC_UNSUPPORTED */
	uint32_t arch;	/* enum sysnames_arch (core/sysnames.h) of nr */
	uint32_t have;	/* SC_HAVE_* */
	uint64_t floor_ns, slow_ns; /* the thresholds in force at close */
	/* the bounds in force at close (syscall_top, syscall_slow_max): what
	 * a roll-up keeps; 0: not given, the defaults (SC_TOP_DEFAULT,
	 * SC_SLOW_DEFAULT) stand in */
	uint32_t top_max, slow_max;
	struct sc_counters ctr;
	/* both programs' run time and runs over the window (Δ of the
	 * kernel's bpf_prog_info run_time_ns / run_cnt) */
	uint64_t prog_run_ns, prog_run_cnt;
	/* rows: the top processes by sum_ns (bounded); the rest in other */
	size_t nrows;
	struct sc_row *rows;
	struct sc_row other; /* tgid -1: Σ of the rows not kept */
	uint64_t other_rows; /* (process, syscall) pairs folded into other */
	size_t nslow;
	struct sc_slow *slow; /* by boot_enter_ns; bounded */
};

/* The tracer's state for Health.syscalls (daemon.c keeps it, rpc.c
 * sends it): what is attached now, the last drained window's programs'
 * run time, the counters summed over every window since the start. */
/* The slow calls' ring buffer: its size, the fill at which a record wakes
 * the loop, and since the start: the loop woken by it (its fd ready), the
 * ticks' and drains' reads, the records read (kept or not). All 0 without
 * a ring (the platform loader's pins). */
struct sc_ring_stats {
	uint32_t size, wake_bytes;
	uint64_t wakeups, reads, records;
};

struct sc_health {
	uint32_t state;	  /* enum sc_state */
	int32_t err;	  /* errno behind SC_FAILED / SC_UNSUPPORTED */
	uint32_t progs;	  /* programs attached now */
	uint32_t traced;  /* syscalls in the traced set */
	uint64_t windows; /* windows drained since the start */
	uint32_t have;	  /* the last window's SC_HAVE_* */
	uint64_t prog_run_ns, prog_run_cnt; /* the last window's */
	struct sc_counters ctr;		    /* Σ since the start */
	struct sc_ring_stats ring;	    /* read live (daemon_info) */
};

/* A drained window's part p into h (sc_common.c). */
void sc_health_add(struct sc_health *h, const struct window_syscalls *p);

#endif
