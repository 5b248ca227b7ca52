// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * iter/task: one fixed-width record per task (bpf/taskiter/taskiter.bpf.h), so one read
 * of an iterator instance replaces opening and formatting two files per
 * task under /proc. Nothing here aggregates a thread group: the process
 * figures are built in userspace from the leader's signal_struct fields and
 * its live threads, exactly as thread_group_cputime() does.
 *
 * Fields are read through the BTF-typed task pointer (no helper call per
 * field); CO-RE relocations keep the offsets right on other kernels.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "taskiter.bpf.h"

#define PF_KTHREAD 0x00200000

/* mm counters (include/linux/mm_types_task.h), stable since 4.5. */
#define MM_FILEPAGES 0
#define MM_ANONPAGES 1
#define MM_SHMEMPAGES 3

/*
 * nsec_to_clock_t(): ns × mul / div, set by the loader from USER_HZ
 * (mul 1, div NSEC_PER_SEC / USER_HZ when that divides evenly).
 */
const volatile __u64 ticks_mul = 1;
const volatile __u64 ticks_div = 10000000;

/* Before 6.2: struct mm_rss_stat { atomic_long_t count[NR_MM_COUNTERS]; } */
struct mm_rss_stat___old {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

/* 6.2 and later: struct percpu_counter rss_stat[NR_MM_COUNTERS]. */
struct percpu_counter___new {
	s64 count;
} __attribute__((preserve_access_index));

struct mm_struct___new {
	struct percpu_counter___new rss_stat[4];
} __attribute__((preserve_access_index));

static __always_inline __u64
positive(s64 v)
{
	return v > 0 ? (__u64)v : 0;
}

/*
 * get_mm_rss(): each counter clamped at 0 as get_mm_counter() does. The
 * percpu_counter's `count` is the folded value without the per-CPU
 * deltas, which is what percpu_counter_read_positive() and so /proc/<pid>/stat
 * report too: an approximation by up to the batch size per CPU.
 */
static __always_inline __u64
mm_rss(struct mm_struct *mm, __u32 *flags)
{
	if (bpf_core_type_exists(struct mm_rss_stat___old)) {
		struct mm_struct___old *o = (void *)mm;

		*flags |= TASKITER_F_RSS_OLD;
		return positive(BPF_CORE_READ(o,
			   rss_stat.count[MM_FILEPAGES].counter)) +
		    positive(BPF_CORE_READ(o,
			rss_stat.count[MM_ANONPAGES].counter)) +
		    positive(BPF_CORE_READ(o,
			rss_stat.count[MM_SHMEMPAGES].counter));
	} else {
		struct mm_struct___new *n = (void *)mm;

		return positive(n->rss_stat[MM_FILEPAGES].count) +
		    positive(n->rss_stat[MM_ANONPAGES].count) +
		    positive(n->rss_stat[MM_SHMEMPAGES].count);
	}
}

SEC("iter/task")
int
taskiter_dump(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct taskiter_rec r = {};
	struct signal_struct *sig;
	struct mm_struct *mm;

	if (task == NULL) {
		/* The walk is complete: the end record tells a reader the
		 * stream is whole. */
		r.magic = TASKITER_MAGIC_END;
		r.tid = (__s32)ctx->meta->seq_num;
		bpf_seq_write(seq, &r, sizeof(r));
		return 0;
	}

	r.magic = TASKITER_MAGIC;
	r.tgid = task->tgid;
	r.tid = task->pid;
	r.uid = task->real_cred->uid.val;
	__builtin_memcpy(r.comm, task->comm, sizeof(r.comm));
	r.start_ns = task->start_boottime;
	r.start_ticks = r.start_ns * ticks_mul / ticks_div;
	r.utime_ns = task->utime;
	r.stime_ns = task->stime;
	r.runtime_ns = task->se.sum_exec_runtime;
	r.min_flt = task->min_flt;
	r.maj_flt = task->maj_flt;
	if (task->flags & PF_KTHREAD)
		r.flags |= TASKITER_F_KTHREAD;
	/* Without prev_cputime (VIRT_CPU_ACCOUNTING_NATIVE) /proc does not
	 * scale: the raw figures are already precise. */
	if (bpf_core_field_exists(task->prev_cputime)) {
		r.flags |= TASKITER_F_ADJUST;
		r.prev_utime_ns = task->prev_cputime.utime;
		r.prev_stime_ns = task->prev_cputime.stime;
	}

	if (r.tid == r.tgid) {
		r.flags |= TASKITER_F_LEADER;
		mm = task->mm;
		if (mm != NULL) {
			r.flags |= TASKITER_F_MM;
			r.rss_pages = mm_rss(mm, &r.flags);
		}
		sig = task->signal;
		if (sig != NULL) {
			r.sig_utime_ns = sig->utime;
			r.sig_stime_ns = sig->stime;
			r.sig_runtime_ns = sig->sum_sched_runtime;
			r.sig_min_flt = sig->min_flt;
			r.sig_maj_flt = sig->maj_flt;
			if (bpf_core_field_exists(sig->prev_cputime)) {
				r.sig_prev_utime_ns = sig->prev_cputime.utime;
				r.sig_prev_stime_ns = sig->prev_cputime.stime;
			}
		}
	}
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}

/*
 * The kernel's walk alone: a record of 4 bytes per task and nothing read
 * from it. Never loaded by the daemon (autoload off); bench/iter_cost
 * measures with it what iter/task costs before taskiter_dump reads a field.
 */
SEC("iter/task")
int
taskiter_walk(struct bpf_iter__task *ctx)
{
	__u32 one = 1;

	if (ctx->task != NULL)
		bpf_seq_write(ctx->meta->seq, &one, sizeof(one));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
