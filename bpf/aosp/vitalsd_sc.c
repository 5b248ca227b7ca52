// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Syscall latency in the format of Android's platform BPF loader
 * (bpfloader.h), the twin of bpf/syscalls/syscalls.bpf.c for devices:
 * tracepoint programs on raw_syscalls sys_enter/sys_exit, "maps"-section
 * maps, no BTF, no task storage (Linux 5.11+, newer than Android 12's
 * 5.4/5.10 kernels). Installed as /system/etc/bpf/vitalsd_sc.o, pinned as
 *   /sys/fs/bpf/map_vitalsd_sc_<map>
 *   /sys/fs/bpf/prog_vitalsd_sc_tracepoint_raw_syscalls_sys_{enter,exit}
 * (doc/bpf.md, "Syscall latency", Android).
 *
 * The daemon may only read pins there, so nothing is cleared or
 * configured from user space: the traced set is every nr below
 * VITALS_SC_NR_MAX (the daemon keeps its configured ones), the entries
 * are running totals in an LRU hash the daemon diffs, and there are no
 * slow-call records.
 *
 * Pairing: a HASH keyed by tid holds the pending call. A tid's entry is
 * deleted when the thread exits (sched_process_exit, whose pid is the
 * tid), so a reused tid never finds its predecessor's pending call; one
 * left from before the program was attached is replaced at the tid's next
 * enter. The clock is bpf_ktime_get_ns() (CLOCK_MONOTONIC: boot time needs
 * 5.8): a call spanning a suspend is short by the time suspended.
 */
#include "bpfloader.h"
#include "../syscalls/syscalls.bpf.h"

#define VITALSD_GID 2901
#define OWNER 0
#define MODE 0440

#ifndef VITALS_LDR_SC_PEND
#define VITALS_LDR_SC_PEND 16384
#endif

static long (*bpf_get_current_comm)(void *buf, __u32 size) = (void *)16;

/* tracefs events/raw_syscalls/<event>/format (8-byte common header) */
struct sys_enter_args {
	__u64 common;
	__s64 id;
	__u64 args[6];
};

struct sys_exit_args {
	__u64 common;
	__s64 id;
	__s64 ret;
};

struct sched_process_exit_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
};

struct sc_ldr_key {
	__s32 tgid;
	__u32 nr;
};

VLDR_LICENSE("Dual BSD/GPL");

VLDR_MAP(sc_pend, LRU_HASH, __u32, struct sc_pend, VITALS_LDR_SC_PEND, OWNER,
    VITALSD_GID, MODE);
/* running totals per (tgid, nr); comm the caller's at insert; start_ns
 * filled by the daemon from /proc */
VLDR_MAP(sc_tot, LRU_HASH, struct sc_ldr_key, struct sc_val, VITALS_SC_ENTRIES,
    OWNER, VITALSD_GID, MODE);
VLDR_MAP(sc_stats, PERCPU_ARRAY, __u32, __u64, SC_S__MAX, OWNER, VITALSD_GID,
    MODE);

static __always_inline void
stat_inc(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&sc_stats, &i);

	if (v)
		*v += 1;
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

VLDR_PROG("tracepoint/raw_syscalls/sys_enter", OWNER, VITALSD_GID, tp_sys_enter,
    struct sys_enter_args)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sc_pend p = { 0 };

	if (ctx->id < 0 || ctx->id >= VITALS_SC_NR_MAX)
		return 0;
	p.nr = (__u32)ctx->id;
	p.busy = 1;
	p.t_enter = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&sc_pend, &tid, &p, BPF_ANY))
		stat_inc(SC_S_NO_STORAGE);
	return 0;
}

VLDR_PROG("tracepoint/raw_syscalls/sys_exit", OWNER, VITALSD_GID, tp_sys_exit,
    struct sys_exit_args)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, b;
	struct sc_ldr_key key = { .tgid = (__s32)(id >> 32) };
	struct sc_val *v, init = { 0 };
	struct sc_pend *p;
	__u64 lat;
	__s64 ret = ctx->ret;

	if (ctx->id < 0 || ctx->id >= VITALS_SC_NR_MAX)
		return 0;
	p = bpf_map_lookup_elem(&sc_pend, &tid);
	if (!p || !p->busy) {
		stat_inc(SC_S_MISSING_ENTER);
		return 0;
	}
	p->busy = 0;
	if (p->nr != (__u32)ctx->id) {
		stat_inc(SC_S_MISMATCH);
		return 0;
	}
	lat = now > p->t_enter ? now - p->t_enter : 0;
	key.nr = (__u32)ctx->id;
	v = bpf_map_lookup_elem(&sc_tot, &key);
	if (!v) {
		bpf_get_current_comm(init.comm, sizeof(init.comm));
		bpf_map_update_elem(&sc_tot, &key, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sc_tot, &key);
		if (!v) {
			stat_inc(SC_S_MAP_FULL);
			return 0;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->sum_ns, lat);
	if (ret < 0 && ret >= -4095) {
		if (ret == -11)
			__sync_fetch_and_add(&v->errors[SC_E_EAGAIN], 1);
		else if (ret == -4 || (ret <= -512 && ret >= -516))
			__sync_fetch_and_add(&v->errors[SC_E_EINTR], 1);
		else if (ret == -110)
			__sync_fetch_and_add(&v->errors[SC_E_ETIMEDOUT], 1);
		else
			__sync_fetch_and_add(&v->errors[SC_E_OTHER], 1);
	}
	b = log2_64(lat);
	if (b >= VITALS_SC_HIST_N)
		b = VITALS_SC_HIST_N - 1;
	__sync_fetch_and_add(&v->hist[b], 1);
	/* a running maximum over the entry's life (not per window) */
	if (lat > v->max_ns)
		v->max_ns = lat;
	return 0;
}

VLDR_PROG("tracepoint/sched/sched_process_exit", OWNER, VITALSD_GID, tp_sc_exit,
    struct sched_process_exit_args)
{
	__u32 tid = (__u32)ctx->pid;

	bpf_map_delete_elem(&sc_pend, &tid);
	return 0;
}
