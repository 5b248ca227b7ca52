// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Syscall latency per (process, syscall): raw_syscalls sys_enter stamps
 * the thread's pending call in task storage (so a call is paired with its
 * own thread's exit only, and the stamp dies with the task: a reused tid
 * starts with no storage); sys_exit measures t(exit) - t(enter) on
 * bpf_ktime_get_boot_ns() and adds it to the (tgid, leader start, nr)
 * entry of the side sc_ctl.gen selects. Userspace flips the side, waits a
 * grace period (sc_barrier, as sched does) and drains the old side alone.
 * Calls at or over the slow threshold also go to the ring buffer.
 *
 * An untraced nr costs one array lookup at enter and at exit. execve is
 * not special: its exit (with the new image) carries execve's nr, and a
 * pending call whose exit never comes (exit, exit_group) dies with the
 * task. An exit whose nr differs from the pending one (not seen in
 * practice) counts SC_S_MISMATCH and drops both.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "syscalls.bpf.h"

/* uapi linux/bpf.h's ring buffer flags: a vmlinux.h from a kernel's BTF
 * has no anonymous uapi enums */
#define SC_RB_NO_WAKEUP (1ULL << 0)
#define SC_RB_FORCE_WAKEUP (1ULL << 1)
#define SC_RB_AVAIL_DATA 0

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The registers' syscall number and the task's compat mark, relocated
 * by name ("___sc" is a CO-RE flavour: it matches pt_regs, thread_info). */
#if defined(__TARGET_ARCH_x86)
struct pt_regs___sc {
	unsigned long orig_ax;
} __attribute__((preserve_access_index));
struct thread_info___sc {
	__u32 status; /* TS_COMPAT 0x0002: a 32-bit syscall in progress */
} __attribute__((preserve_access_index));
#define SC_NR(r) ((__u32)BPF_CORE_READ((struct pt_regs___sc *)(r), orig_ax))
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs___sc {
	int syscallno;
} __attribute__((preserve_access_index));
struct thread_info___sc {
	unsigned long flags; /* TIF_32BIT (22): an AArch32 task */
} __attribute__((preserve_access_index));
#define SC_NR(r) ((__u32)BPF_CORE_READ((struct pt_regs___sc *)(r), syscallno))
#else
#error "syscalls.bpf.c: x86 and arm64 only"
#endif

struct task_struct___sc {
	struct thread_info___sc thread_info;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sc_ctl);
} sc_ctl SEC(".maps");

/* Never read by a program: the daemon stores sc_ctl's fd into it after a
 * flip; the update returns after synchronize_rcu() (doc/bpf.md). */
struct sc_ctl_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sc_ctl);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct sc_ctl_inner);
} sc_barrier SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VITALS_SC_NR_MAX);
	__type(key, __u32);
	__type(value, __u8);
} sc_traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sc_pend);
} sc_pend SEC(".maps");

/* Bench variants (bench/syscalls.sh; never loaded by the daemon):
 * SC_RAW_TP attaches as raw_tp instead of tp_btf, SC_PERCPU keeps the
 * aggregate in per-CPU values with plain adds. */
#ifdef SC_PERCPU
#define SC_AGG_TYPE BPF_MAP_TYPE_PERCPU_HASH
#define SC_ADD(p, n) (*(p) += (n))
#else
#define SC_AGG_TYPE BPF_MAP_TYPE_HASH
#define SC_ADD(p, n) __sync_fetch_and_add((p), (n))
#endif
#ifdef SC_RAW_TP
#define SC_ENTER "raw_tp/sys_enter"
#define SC_EXIT "raw_tp/sys_exit"
#else
#define SC_ENTER "tp_btf/sys_enter"
#define SC_EXIT "tp_btf/sys_exit"
#endif

struct sc_agg {
	__uint(type, SC_AGG_TYPE);
	__uint(max_entries, VITALS_SC_ENTRIES);
	__type(key, struct sc_key);
	__type(value, struct sc_val);
};

struct sc_agg sc_agg0 SEC(".maps");
struct sc_agg sc_agg1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VITALS_SC_RB_KIB * 1024);
} sc_rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SC_S__MAX);
	__type(key, __u32);
	__type(value, __u64);
} sc_stats SEC(".maps");

static __always_inline void
stat_inc(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&sc_stats, &i);

	if (v)
		*v += 1;
}

static __always_inline bool
traced(__u32 nr)
{
	__u8 *t;

	if (nr >= VITALS_SC_NR_MAX)
		return false;
	t = bpf_map_lookup_elem(&sc_traced, &nr);
	return t && *t;
}

static __always_inline bool
compat(struct task_struct *task)
{
	struct task_struct___sc *t = (void *)task;

#if defined(__TARGET_ARCH_x86)
	if (bpf_core_field_exists(t->thread_info.status))
		return BPF_CORE_READ(t, thread_info.status) & 0x0002;
#else
	if (bpf_core_field_exists(t->thread_info.flags))
		return BPF_CORE_READ(t, thread_info.flags) & (1UL << 22);
#endif
	return false;
}

static __always_inline __u32
log2_64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

static __always_inline int
err_class(long ret)
{
	if (ret >= 0 || ret < -4095)
		return -1;
	if (ret == -11)
		return SC_E_EAGAIN;
	if (ret == -4 || (ret <= -512 && ret >= -516))
		return SC_E_EINTR;
	if (ret == -110)
		return SC_E_ETIMEDOUT;
	return SC_E_OTHER;
}

SEC(SC_ENTER)
int
BPF_PROG(vitals_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task;
	struct sc_pend *p;

	if (!traced((__u32)id))
		return 0;
	task = bpf_get_current_task_btf();
	if (compat(task)) {
		stat_inc(SC_S_COMPAT);
		return 0;
	}
	p = bpf_task_storage_get(&sc_pend, task, 0,
	    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		stat_inc(SC_S_NO_STORAGE);
		return 0;
	}
	if (p->busy)
		stat_inc(SC_S_MISMATCH); /* an enter never closed */
	p->nr = (__u32)id;
	p->busy = 1;
	p->t_enter = bpf_ktime_get_boot_ns();
	return 0;
}

#ifndef SC_PERCPU
static __always_inline void
add_max(__u64 *m, __u64 v)
{
	__u64 old;
	int i;

	for (i = 0; i < 4; i++) {
		old = *(volatile __u64 *)m;
		if (v <= old)
			return;
		if (__sync_val_compare_and_swap(m, old, v) == old)
			return;
	}
}
#endif

SEC(SC_EXIT)
int
BPF_PROG(vitals_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 now = bpf_ktime_get_boot_ns();
	struct task_struct *task, *leader;
	struct sc_key key = {};
	struct sc_val *v, init = {};
	struct sc_ctl *ctl;
	struct sc_pend *p;
	__u32 nr = SC_NR(regs), zero = 0;
	__u64 lat, wake;
	void *agg;
	int ec;

	if (!traced(nr))
		return 0;
	task = bpf_get_current_task_btf();
	p = bpf_task_storage_get(&sc_pend, task, 0, 0);
	if (!p || !p->busy) {
		if (!compat(task))
			stat_inc(SC_S_MISSING_ENTER);
		return 0;
	}
	p->busy = 0;
	if (p->nr != nr) {
		stat_inc(SC_S_MISMATCH);
		return 0;
	}
	lat = now > p->t_enter ? now - p->t_enter : 0;
	ctl = bpf_map_lookup_elem(&sc_ctl, &zero);
	if (!ctl)
		return 0;
	leader = task->group_leader;
	key.tgid = task->tgid;
	key.nr = nr;
	key.start_ns = leader ? leader->start_boottime : 0;
	agg = (ctl->gen & 1) ? (void *)&sc_agg1 : (void *)&sc_agg0;
	v = bpf_map_lookup_elem(agg, &key);
	if (!v) {
		if (leader)
			bpf_probe_read_kernel_str(init.comm, sizeof(init.comm),
			    leader->comm);
		if (bpf_map_update_elem(agg, &key, &init, BPF_NOEXIST) &&
		    bpf_map_lookup_elem(agg, &key) == NULL) {
			stat_inc(SC_S_MAP_FULL);
			return 0;
		}
		v = bpf_map_lookup_elem(agg, &key);
		if (!v) {
			stat_inc(SC_S_MAP_FULL);
			return 0;
		}
	}
	SC_ADD(&v->count, 1);
	SC_ADD(&v->sum_ns, lat);
	ec = err_class(ret);
	if (ec >= 0 && ec < SC_E__MAX)
		SC_ADD(&v->errors[ec], 1);
	if (lat < ctl->floor_ns) {
		SC_ADD(&v->fast, 1);
	} else {
		__u32 b = log2_64(lat);

		if (b >= VITALS_SC_HIST_N)
			b = VITALS_SC_HIST_N - 1;
		SC_ADD(&v->hist[b], 1);
#ifdef SC_PERCPU
		if (lat > v->max_ns)
			v->max_ns = lat;
#else
		add_max(&v->max_ns, lat);
#endif
	}
	if (ctl->slow_ns && lat >= ctl->slow_ns) {
		struct sc_rec *r = bpf_ringbuf_reserve(&sc_rb, sizeof(*r), 0);

		if (!r) {
			stat_inc(SC_S_RB_FULL);
			return 0;
		}
		r->tid = task->pid;
		r->tgid = task->tgid;
		r->start_ns = key.start_ns;
		bpf_get_current_comm(r->comm, sizeof(r->comm));
		r->nr = nr;
		r->pad = 0;
		r->ret = ret;
		r->t_enter = p->t_enter;
		r->lat_ns = lat;
		/* the adaptive rule (0) wakes the reader for every record
		 * once it has caught up: a wakeup a record at thousands of
		 * slow calls a second */
		wake = 0;
		if (ctl->wake_bytes)
			wake = bpf_ringbuf_query(&sc_rb, SC_RB_AVAIL_DATA) >=
				ctl->wake_bytes ?
			    SC_RB_FORCE_WAKEUP :
			    SC_RB_NO_WAKEUP;
		bpf_ringbuf_submit(r, wake);
	}
	return 0;
}
