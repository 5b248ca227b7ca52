/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel types vitalsd's CO-RE programs use, and only the fields they
 * read: the build does not depend on the build host's kernel. Every record
 * carries preserve_access_index, so libbpf relocates each field access to
 * the running kernel's BTF at load time; a field's offset and the other
 * fields here do not matter, its name and type do. A program that reads a
 * new kernel field adds it here (name and type as the kernel declares it);
 * fields that moved or were renamed across kernels are read through
 * ___flavour records in the program itself (sched.bpf.c, taskiter.bpf.c).
 * The uapi constants are the values of include/uapi/linux/bpf.h, which
 * never change.
 */
/* the guard bpftool's vmlinux.h has: the .bpf.h layouts test it */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;

typedef _Bool bool;
enum {
	false = 0,
	true = 1,
};

typedef int pid_t;
typedef unsigned int uid_t;

/* include/uapi/linux/bpf.h: the map types and flags the programs name */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_LRU_HASH = 9,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_NO_PREALLOC = 1,
	BPF_F_MMAPABLE = 1024,
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	s64 counter;
} atomic64_t;

typedef atomic64_t atomic_long_t;

struct refcount_struct {
	atomic_t refs;
} __attribute__((preserve_access_index));

typedef struct refcount_struct refcount_t;

typedef struct {
	uid_t val;
} kuid_t;

struct seq_file;
struct mm_struct;

struct cred {
	kuid_t uid;
} __attribute__((preserve_access_index));

/* utime/stime as /proc last reported them (VIRT_CPU_ACCOUNTING off) */
struct prev_cputime {
	u64 utime;
	u64 stime;
} __attribute__((preserve_access_index));

struct cfs_rq;

struct sched_entity {
	u64 sum_exec_runtime;
	struct cfs_rq *cfs_rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

struct signal_struct {
	refcount_t sigcnt;
	u64 utime;
	u64 stime;
	unsigned long min_flt;
	unsigned long maj_flt;
	unsigned long long sum_sched_runtime;
	struct prev_cputime prev_cputime;
} __attribute__((preserve_access_index));

/* CONFIG_SCHED_INFO (without it the struct is empty: check the field) */
struct sched_info {
	unsigned long pcount;	      /* waits ended by a switch-in */
	unsigned long long run_delay; /* their sum, ns (rq clock) */
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int __state; /* "state" (a long) before 5.14 */
	unsigned int flags;
	struct sched_entity se;
	struct sched_info sched_info;
	struct mm_struct *mm;
	pid_t pid;
	pid_t tgid;
	struct task_struct *group_leader;
	u64 utime;
	u64 stime;
	struct prev_cputime prev_cputime;
	u64 start_boottime;
	unsigned long min_flt;
	unsigned long maj_flt;
	const struct cred *real_cred;
	char comm[16];
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/* A CPU's runqueue: only the task on it (a union with `donor` since 6.16). */
struct rq {
	struct task_struct *curr;
} __attribute__((preserve_access_index));

/* CONFIG_FAIR_GROUP_SCHED: a group's per-CPU queues, each on its CPU's rq */
struct cfs_rq {
	struct rq *rq;
	struct task_group *tg;
} __attribute__((preserve_access_index));

struct task_group {
	struct cfs_rq **cfs_rq;
} __attribute__((preserve_access_index));

/* the context of an "iter/" program (kernel/bpf/bpf_iter.c) */
struct bpf_iter_meta {
	union {
		struct seq_file *seq;
	};
	u64 session_id;
	u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	union {
		struct bpf_iter_meta *meta;
	};
	union {
		struct task_struct *task;
	};
} __attribute__((preserve_access_index));

/* kernel/bpf/task_iter.c: the open-coded task iterator's state (its size
 * is checked by the verifier) and kinds (6.7) */
struct bpf_iter_task {
	u64 __opaque[3];
} __attribute__((aligned(8)));

enum bpf_iter_task_type {
	BPF_TASK_ITER_ALL_PROCS = 0,
	BPF_TASK_ITER_ALL_THREADS = 1,
	BPF_TASK_ITER_PROC_THREADS = 2,
};

/* iter/dmabuf (kernel/bpf/dmabuf_iter.c, 6.16): the kernel's list of every
 * DMA-BUF; the fields the DMA-BUF pass reads (bpf/dmabuf) */
struct super_block {
	unsigned long s_magic;
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct dma_buf {
	unsigned long size; /* size_t */
	struct file *file;
} __attribute__((preserve_access_index));

struct bpf_iter__dmabuf {
	union {
		struct bpf_iter_meta *meta;
	};
	union {
		struct dma_buf *dmabuf;
	};
} __attribute__((preserve_access_index));

#endif
