/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The task iterator's record: one per task, fixed width, written with
 * bpf_seq_write() by taskiter.bpf.c and parsed by daemon/taskiter/taskiter.c. Every
 * field is naturally aligned and the size is a multiple of 8, so the layout
 * is the same on both sides of the read(2) without packing.
 *
 * The stream is N task records followed by one end record. The kernel runs
 * the program with no task only once the walk is complete, so a stream that
 * does not end in that record was cut short.
 *
 * A partial sample (doc/bpf.md, "Event-driven samples") is the same
 * records, whole thread groups only, written by taskiter_partial into
 * the array taskiter_out: first the groups that lost a thread since the
 * window's flip (and TASKITER_MAGIC_GONE for those wholly gone), then the
 * groups with a thread that ran, each at most once, then an end record
 * carrying the sched accounting's generation (start_ns), the sum over
 * CPUs of its "doubt" counters (utime_ns; taskiter.bpf.c, doubt_cpu) and
 * the groups left out for want of room (stime_ns, cumulative), and the
 * thread hashes walked and skipped (runtime_ns, min_flt) and process maps
 * walked (maj_flt), cumulative.
 */
#ifndef VITALS_TASKITER_H
#define VITALS_TASKITER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TASKITER_MAGIC 0x56544931u     /* "VTI1": a task record, version 1 */
#define TASKITER_MAGIC_END 0x56544945u /* "VTIE": the end record */
/* partial samples (taskiter_partial, taskiter_gone): a process whose last
 * task was freed since the window's flip; tgid and start_* are its
 * leader's, nothing else is set */
#define TASKITER_MAGIC_GONE 0x56544947u /* "VTIG" */

/* taskiter_rec.flags */
#define TASKITER_F_LEADER (1u << 0)  /* tid == tgid: group fields are set */
#define TASKITER_F_KTHREAD (1u << 1) /* PF_KTHREAD */
#define TASKITER_F_MM (1u << 2)	     /* task has an mm: rss_pages is read */
#define TASKITER_F_ADJUST (1u << 3)  /* prev_cputime exists: /proc scales */
#define TASKITER_F_RSS_OLD (1u << 4) /* pre-6.2 atomic rss counters */

/* taskiter_partial's argument flags (struct taskiter_args.flags) */
#define TASKITER_ARG_BOTH (1u << 0)    /* walk both sides' maps */
#define TASKITER_ARG_NO_MAPS (1u << 1) /* tests: the maps left out */
#define TASKITER_ARG_NO_CPUS (1u << 2) /* tests: the CPUs' curr left out */

#define TASKITER_COMM_LEN 16

/* taskiter_out's records per partial read (the end record after them) */
#define TASKITER_OUT_MAX 8192

struct taskiter_rec {
	__u32 magic; /* TASKITER_MAGIC, or TASKITER_MAGIC_END */
	__u32 flags; /* TASKITER_F_* */
	__s32 tgid;  /* end record: 0 */
	__s32 tid;   /* end record: the kernel's meta->seq_num, diagnostics */
	__u32 uid;   /* real uid (real_cred->uid), as /proc/<pid>/status */
	__u32 pad;
	char comm[TASKITER_COMM_LEN]; /* task->comm, NUL-terminated */
	__u64 start_ticks; /* start_boottime as /proc field 22 (USER_HZ) */
	__u64 start_ns;	   /* start_boottime, ns since boot */
	/* This task alone (a thread's /proc/<pid>/task/<tid>/stat). */
	__u64 utime_ns, stime_ns; /* raw, tick-sampled task->utime/stime */
	__u64 runtime_ns;	  /* se.sum_exec_runtime: precise on-CPU */
	__u64 min_flt, maj_flt;
	__u64 prev_utime_ns, prev_stime_ns; /* task->prev_cputime */
	/*
	 * Leaders only (TASKITER_F_LEADER), else 0: what the group's exited
	 * threads left in signal_struct, and the mm's resident pages. The
	 * process figure is these plus every live thread's own.
	 */
	__u64 rss_pages; /* file + anon + shmem, as /proc field 24 */
	__u64 sig_utime_ns, sig_stime_ns, sig_runtime_ns;
	__u64 sig_min_flt, sig_maj_flt;
	__u64 sig_prev_utime_ns, sig_prev_stime_ns; /* signal->prev_cputime */
};

#endif /* VITALS_TASKITER_H */
