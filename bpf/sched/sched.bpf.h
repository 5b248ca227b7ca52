/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shared by bpf/sched/sched.bpf.c and daemon/sched/sched.c: the layout of every
 * map the sched_switch accounting pins. Fixed-width types only; the kernel
 * and the daemon must agree byte for byte, and a pinned map written by an
 * older build must never be read with a newer layout (VITALS_SCHED_LAYOUT).
 */
#ifndef VITALS_BPF_SCHED_H
#define VITALS_BPF_SCHED_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/*
 * Bump whenever a map's key, value, type or meaning changes, or a program
 * changes what it writes: pins carrying another number are replaced at the
 * next start, never read with this build's structs.
 */
#define VITALS_SCHED_LAYOUT 14
#define VITALS_SCHED_MAGIC 0x56534348u /* "VSCH" */

/* Run-queue delay histogram: slot k counts delays d with
 * floor(log2(d in µs)) == k (slot 0 also takes d < 1 µs); the last slot
 * takes everything longer (>= 2^(SLOTS-1) µs, about 8.4 s). */
#define VITALS_SCHED_RQ_SLOTS 24

/* Default capacities (set before load, checked against pins). */
#define VITALS_SCHED_TIDS 8192
#define VITALS_SCHED_PROCS 4096
#define VITALS_SCHED_UIDS 1024
/* layout 11: array slots per side (sched_slot<side>); threads past them
 * go to sched_tid<side> for the rest of the window */
#define VITALS_SCHED_SLOTS 4096

/*
 * sched_scale[cpu]: each CPU's capacity (sysfs cpu_capacity) and frequency
 * scale (scaling_cur_freq × 1024 / cpuinfo_max_freq), 1024 = 1, written
 * by the daemon after each sample; 0: unknown, weighted as 1024 and
 * counted (TOT_WTD_NOCAP, TOT_WTD_NOFREQ).
 */
#define VITALS_SCHED_CPUS 1024
struct sched_scale {
	__u32 cap;
	__u32 freq;
};

/* sched_ctl[0]: the generation; programs write side gen & 1. */
struct sched_ctl {
	__u64 gen;
};

/* sched_meta[0]: what the pinned set is. Written once by the loader. */
struct sched_meta {
	__u32 magic;	 /* VITALS_SCHED_MAGIC */
	__u32 layout;	 /* VITALS_SCHED_LAYOUT */
	__u64 build;	 /* hash of the object and its settings */
	__u64 loaded_ns; /* CLOCK_REALTIME of the load */
	/* layout 13: SCHED_META_* of the programs loaded (a daemon that
	 * opens pins without loading learns from it what they do) */
	__u32 flags;
	__u32 pad;
};

/* The programs take run-queue waits from sched_info (rq_sched_info). */
#define SCHED_META_RQ_SI 1u

/*
 * sched_task, task storage: per task, the scheduler's own CPU time
 * (task->se.sum_exec_runtime, what getrusage() and /proc charge: steal
 * time and, with IRQ time accounting, interrupts left out) as of its last
 * switch-out, and its enqueue stamp. A switch-out accounts the growth
 * since the previous one: exact, and immune to a switch the tracepoint
 * never reported (the next one seen takes the whole growth).
 */
struct sched_task {
	__u64 sum_ns;  /* se.sum_exec_runtime already accounted */
	__u64 wake_ns; /* bpf_ktime_get_ns() when enqueued; 0 none (kept 0
			* with rq_sched_info: its switch-outs clear it) */
	__u8 valid;    /* sum_ns is a baseline (0: first seen) */
	/* layout 13: with rq_sched_info, si_delay and the low 16 bits of
	 * si_count are the task's sched_info.run_delay and .pcount already
	 * accounted: baselines, as sum_ns is (0 for a task first met at its
	 * wakeup_new, whose sched_info fork zeroed), valid while si_base is
	 * 1 (programs without rq_sched_info clear it: pins kept across a
	 * restart may hold storage the other way wrote) */
	__u8 si_base;
	__u16 si_count;
	/* layout 9: the wait measured at its last switch-in, added to its
	 * thread entry at the switch-out that ends the slice, with the CPU
	 * time (one hash update per switch); layout 13: rq_n waits in it
	 * (1 with the stamps) */
	__u16 rq_slot; /* its histogram slot + 1; 0: none pending */
	__u16 rq_n;
	__u64 rq_ns;
	/* layout 11: the array slot it owns in the window of generation
	 * slot_gen − 1 (0: none yet); slot_idx SCHED_SLOT_HASH: its figures
	 * are in sched_tid<side> (no slot was left) for the rest of that
	 * window. Layout 14: the generation's low 32 bits (a wrap takes
	 * 2^32 windows), and instead of the slot's real uid the address of
	 * the struct cred it was taken under (task->real_cred), compared
	 * without reading the cred (doc/bpf.md, "Array slots") */
	__u32 slot_gen;
	__u32 slot_idx;
	__u64 slot_cred;
	__u64 si_delay;
	/* 56 bytes: with the local-storage header's 8 (its data is
	 * cache-line aligned), one line of 64 */
};

#define SCHED_SLOT_HASH 0xffffffffu

/*
 * sched_tid<side>: a thread's on-CPU time in the window, under the uid it
 * ran as (a setuid() mid-window makes a second entry, so per-uid sums stay
 * exact). start_ns is task->start_boottime, the figure /proc/<pid>/stat
 * field 22 is made of: a reused tid is another key and never mixes.
 * The only map sched_switch writes; per-process and per-uid sums are
 * made from it by userspace.
 */
struct sched_tid_key {
	__u32 tid;
	__u32 uid; /* real uid */
	__u64 start_ns;
};

struct sched_tid {
	/*
	 * layout 10: ordered by when a switch-out touches them. A hash
	 * element is its header (48 bytes), the key (16), then this value,
	 * so the value's first bytes share the key's cache line or the
	 * next one: every switch-out writes oncpu_ns and wtd_ns, one that
	 * ends a wait rq_ns, rq_count and a histogram slot; tgid and
	 * leader_ns are written once, at the insert. No padding: the
	 * element is 200 bytes (208 before), so what a switch-out without
	 * a wait touches, element bytes [0, 80), spans two lines for 7 of
	 * its 8 alignments in the preallocated area (layout 9: [0, 112),
	 * two lines for 2 of 4, three for the others).
	 */
	__u64 oncpu_ns;
	/* Σ slice × capacity/1024 × frequency/1024 of the CPU it ran on
	 * (doc/bpf.md, "Capacity-weighted CPU") */
	__u64 wtd_ns;
	/* the thread's own run-queue waits (its switch-ins, the same
	 * samples as its process's histogram) */
	__u64 rq_ns;
	__u32 rq_count;
	__u32 tgid;
	__u64 leader_ns; /* the group leader's start_boottime */
	/* the thread's waits as a histogram (slots as rq_hist of
	 * sched_proc) */
	__u32 rq_hist[VITALS_SCHED_RQ_SLOTS];
};

/*
 * sched_slot<side> (layout 11), an ARRAY of VITALS_SCHED_SLOTS: a thread's
 * figures for the window as in sched_tid, in the slot its task storage
 * names (slot_idx), allocated at its first accounted switch-out of the
 * window from sched_nslot[side] and written whole then, its identity
 * (the hash's key) included; `ready` last, the generation it was made
 * in, so a reader of the live side skips a slot still being filled.
 * Folded at the thread's free (SCHED_SLOT_FOLDED), never deleted: the
 * drain reads slots [0, count) whose ready is the drained generation,
 * then sets the count back to 0. Three cache lines: the figures a
 * switch-out writes, [0, 40), share the first.
 */
struct sched_slot {
	struct sched_tid v;
	struct sched_tid_key key;
	__u64 ready; /* the generation of the window that made it */
	__u32 flags; /* SCHED_SLOT_FOLDED */
	__u32 pad;
	__u64 pad2[2];
};

#define SCHED_SLOT_FOLDED 1u

/* sched_nslot[side]: slots allocated on that side since its last drain
 * (may pass the capacity: those threads went to the hash). */
struct sched_nslot {
	__u32 count;
	/* layout 12: process-map changes on that side that no slot of its
	 * window names (a thread folded from the hash, a process marked
	 * exited whose leader has no slot there, a wait no thread entry
	 * took); never reset, only grows (wraps): a partial read walks the
	 * process map only when it moved (doc/bpf.md, "Event-driven
	 * samples") */
	__u32 proc_other;
};

#ifdef __bpf__
/* The slot maps, declared alike in both objects that use them (sched.bpf.c
 * writes them; taskiter.bpf.c reads the live side), so the two definitions
 * the pins are checked against (check_bpf_layout) are one text. */
#define SCHED_SLOT_MAP(name)                             \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_ARRAY);        \
		__uint(max_entries, VITALS_SCHED_SLOTS); \
		__type(key, __u32);                      \
		__type(value, struct sched_slot);        \
	} name SEC(".maps")

#define SCHED_SLOT_MAPS                            \
	SCHED_SLOT_MAP(sched_slot0);               \
	SCHED_SLOT_MAP(sched_slot1);               \
	struct {                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);  \
		__uint(max_entries, 2);            \
		__type(key, __u32);                \
		__type(value, struct sched_nslot); \
	} sched_nslot SEC(".maps")
#endif

/* sched_proc<side>, key (tgid, leader start): what a process's tid
 * entries cannot say. */
struct sched_proc_key {
	__u32 tgid;
	__u32 pad;
	__u64 start_ns; /* the group leader's start_boottime */
};

struct sched_proc {
	__u64 exited_ns; /* on-CPU time of its threads that exited */
	/* layout 9: the waits of its threads that exited (folded from their
	 * entries at sched_process_free) and those no thread entry could
	 * take (RQ_NOTID); a live thread's are in its entry, and the drain
	 * adds them to its process */
	__u64 rq_ns;
	__u32 rq_count; /* delays measured */
	__u32 rq_hist[VITALS_SCHED_RQ_SLOTS];
	__u32 flags;	     /* SCHED_PROC_EXITED (layout 7; was padding) */
	__u64 exited_wtd_ns; /* capacity-weighted exited_ns */
};

/* sched_proc flags: its leader was freed with its last thread, on this
 * side. The entry stays for the drain, which deletes it after reading. */
#define SCHED_PROC_EXITED 1u

/* sched_uid<side>, key uid (real). */
struct sched_uid {
	__u64 exited_ns;    /* on-CPU time of its threads that exited */
	__u64 exited_tasks; /* threads folded at exit */
	__u64 overflow_ns;  /* slices no thread entry could take (full) */
	/* layout 8: the run-queue waits of its threads that exited, folded
	 * from their entries at sched_process_free (a live thread's are in
	 * its entry); the bpfloader program leaves them 0 */
	__u64 exited_rq_ns;
	__u64 exited_rq_count;
	__u32 exited_rq_hist[VITALS_SCHED_RQ_SLOTS];
};

/*
 * The bpfloader-format program (aosp/vitalsd.c) only: without BTF it
 * cannot read a task's CPU time or keep task storage, so each CPU keeps
 * the time of its last switch (sched_cpu, per CPU) and each thread its
 * enqueue stamp, its process and its birth (sched_wake, by tid).
 *
 * Its daemon may only read (Android lets no other domain write a pin):
 * every map is cumulative, one side, bounded by LRU eviction, and the
 * daemon diffs snapshots (daemon/sched/sched_ldr.c, doc/bpf.md). A value says
 * when it was made (made_ns), so an entry evicted and made again between
 * two reads is told from one that only grew.
 */
struct sched_cpu {
	__u64 ns;  /* bpf_ktime_get_ns() of this CPU's last switch; 0 none */
	__u32 tid; /* who switched in then: a slice counts only if it is
		    * the task switching out now */
	__u32 pad;
};

struct sched_wake {
	__u64 wake_ns; /* enqueued at; 0: not waiting */
	__u32 tgid;    /* its process, learnt at its switch-outs; 0 unknown */
	__u32 pad;
	__u64 birth_ns; /* bpf_ktime_get_ns() at sched_wakeup_new; 0 born
			 * before the program saw it */
};

/* sched_tid (LRU), key sched_tid_key with start_ns = the thread's
 * birth_ns: a reused tid is another key. */
#define SCHED_LDR_DEAD 1u /* made or last written by the final switch-out */
struct sched_ltid {
	__u64 oncpu_ns; /* since the entry was made: only grows */
	__u64 made_ns;
	__u32 tgid;
	__u32 flags; /* SCHED_LDR_DEAD */
};

/* sched_proc (LRU), key sched_proc_key with start_ns 0. */
struct sched_lproc {
	__u64 made_ns;
	__u64 rq_ns;
	__u32 rq_count;
	__u32 rq_hist[VITALS_SCHED_RQ_SLOTS];
	__u32 flags; /* SCHED_LDR_DEAD: its leader exited */
};

/* Its sched_uid (LRU) keeps struct sched_uid by uid; exited_ns stays 0
 * there (an exited thread's time is read from its SCHED_LDR_DEAD entry),
 * exited_tasks and overflow_ns only grow. */

/*
 * sched_tot, per CPU, never cleared: cumulative counters. The _S0/_S1
 * pairs are kept per side so that a drained side can be checked against
 * them exactly once it is quiescent:
 *   Σ tid oncpu + Σ uid (exited + overflow) + LOST == ONCPU.
 */
enum sched_tot {
	TOT_ONCPU_S0, /* ns accounted to side 0 (every switch-out) */
	TOT_ONCPU_S1,
	TOT_LOST_S0, /* ns of side 0 no entry could take */
	TOT_LOST_S1,
	TOT_SWITCHES, /* switch-outs accounted */
	TOT_NO_SLICE, /* switch-outs of a task first seen (no baseline) */
	TOT_WAKEUPS,
	TOT_RQ_SAMPLES,
	TOT_TID_FULL, /* failed inserts, per map */
	TOT_PROC_FULL,
	TOT_UID_FULL,
	TOT_NO_STORAGE, /* task storage unavailable */
	TOT_EXITED,	/* threads folded at sched_process_free */
	TOT_PROC_EXITED, /* process entries marked exited at sched_process_free */
	TOT_WTD_NOCAP,	 /* ns weighted without the CPU's capacity (1024) */
	TOT_WTD_NOFREQ, /* ns weighted without its frequency scale (1024) */
	TOT_RQ_NOTID,	/* waits no thread entry could take (tid map full):
			 * in their process's figures, not in a thread's or
			 * its uid's (layout 8) */
	TOT__MAX
};

#endif /* VITALS_BPF_SCHED_H */
