// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vitalsd's sched_switch accounting in the format of Android's platform
 * BPF loader (bpfloader.h): plain tracepoint programs and "maps"-section
 * maps, no BTF, no CO-RE, no task storage. Installed as
 * /system/etc/bpf/vitalsd.o, the loader pins
 *   /sys/fs/bpf/map_vitalsd_<map>   and
 *   /sys/fs/bpf/prog_vitalsd_tracepoint_sched_<event>
 * and vitalsd opens those pins and attaches the programs itself
 * (daemon/sched/sched.c; doc/bpf.md says why each choice).
 *
 * Without BTF a program sees only what the tracepoint's record holds (the
 * pids, the previous task's state) and what helpers say about the current
 * task, which in sched_switch is the task leaving the CPU. So on-CPU time
 * is measured, not read: each CPU keeps the time of its last switch, and
 * a switch charges the time since then to the task leaving. Nothing is
 * lost when a switch goes unreported: the next one seen charges the whole
 * interval to whoever leaves then. Run-queue delay is wakeup (or
 * preemption) to switch-in, as in the CO-RE program.
 *
 * The maps the daemon drains have the CO-RE program's layouts
 * (../sched.h), so one drain protocol reads both; the keys carry no start
 * time (a BTF-less program cannot read it), userspace fills it from
 * /proc at the drain.
 */
#include "bpfloader.h"
#include "../sched/sched.bpf.h"

/* Pins: root-owned, the daemon's group may read and write. AID 2901 is the
 * OEM AID init/vitalsd.rc runs the daemon as; an OEM with another one
 * changes it here. */
#define VITALSD_GID 2901
#define OWNER 0

/* tracefs events/sched/<event>/format, stable since Linux 4.14 (the
 * common header is 8 bytes) */
struct sched_switch_args {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	__s64 prev_state;
	char next_comm[16];
	__s32 next_pid;
	__s32 next_prio;
};

struct sched_wakeup_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	__s32 target_cpu;
};

struct sched_process_exit_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
};

/* prev_state of a task preempted while runnable: TASK_REPORT_MAX */
#define STATE_PREEMPTED 0x100

VLDR_MAP(sched_ctl, ARRAY, __u32, struct sched_ctl, 1, OWNER, VITALSD_GID,
    0660);
VLDR_MAP(sched_tot, PERCPU_ARRAY, __u32, __u64, TOT__MAX, OWNER, VITALSD_GID,
    0660);
VLDR_MAP(sched_cpu, PERCPU_ARRAY, __u32, struct sched_cpu, 1, OWNER,
    VITALSD_GID, 0660);
VLDR_MAP(sched_wake, HASH, __u32, struct sched_wake, VITALS_SCHED_TIDS, OWNER,
    VITALSD_GID, 0660);
VLDR_MAP(sched_tid0, HASH, struct sched_tid_key, struct sched_tid,
    VITALS_SCHED_TIDS, OWNER, VITALSD_GID, 0660);
VLDR_MAP(sched_tid1, HASH, struct sched_tid_key, struct sched_tid,
    VITALS_SCHED_TIDS, OWNER, VITALSD_GID, 0660);
VLDR_MAP(sched_proc0, HASH, struct sched_proc_key, struct sched_proc,
    VITALS_SCHED_PROCS, OWNER, VITALSD_GID, 0660);
VLDR_MAP(sched_proc1, HASH, struct sched_proc_key, struct sched_proc,
    VITALS_SCHED_PROCS, OWNER, VITALSD_GID, 0660);
VLDR_MAP(sched_uid0, HASH, __u32, struct sched_uid, VITALS_SCHED_UIDS, OWNER,
    VITALSD_GID, 0660);
VLDR_MAP(sched_uid1, HASH, __u32, struct sched_uid, VITALS_SCHED_UIDS, OWNER,
    VITALSD_GID, 0660);

static __always_inline void
tot_add(__u32 idx, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&sched_tot, &idx);

	/* atomic: a wakeup in a hard interrupt may nest over another one */
	if (p)
		__sync_fetch_and_add(p, v);
}

static __always_inline __u32
current_side(void)
{
	__u32 zero = 0;
	struct sched_ctl *ctl = bpf_map_lookup_elem(&sched_ctl, &zero);

	return ctl ? (__u32)(ctl->gen & 1) : 0;
}

/* floor(log2(v)) for v > 0, 0 for v == 0, without a loop. */
static __always_inline __u32
log2_u64(__u64 v)
{
	__u32 r = 0, s;

	/* clang-format off */
	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffffULL) << 4; v >>= s; r |= s;
	s = (v > 0xffULL) << 3; v >>= s; r |= s;
	s = (v > 0xfULL) << 2; v >>= s; r |= s;
	s = (v > 0x3ULL) << 1; v >>= s; r |= s;
	/* clang-format on */
	r |= (v >> 1);
	return r;
}

static __always_inline struct sched_uid *
uid_entry(__u32 side, __u32 uid)
{
	const void *m = side ? &sched_uid1 : &sched_uid0;
	struct sched_uid *u = bpf_map_lookup_elem(m, &uid);
	struct sched_uid zero = {};

	if (u)
		return u;
	bpf_map_update_elem(m, &uid, &zero, BPF_NOEXIST);
	u = bpf_map_lookup_elem(m, &uid);
	if (!u)
		tot_add(TOT_UID_FULL, 1);
	return u;
}

static __always_inline struct sched_proc *
proc_entry(__u32 side, __u32 tgid)
{
	const void *m = side ? &sched_proc1 : &sched_proc0;
	struct sched_proc_key key = { .tgid = tgid };
	struct sched_proc *p = bpf_map_lookup_elem(m, &key);
	struct sched_proc zero = {};

	if (p)
		return p;
	bpf_map_update_elem(m, &key, &zero, BPF_NOEXIST);
	p = bpf_map_lookup_elem(m, &key);
	if (!p)
		tot_add(TOT_PROC_FULL, 1);
	return p;
}

/*
 * delta ns on a CPU to the current task (the one switching out): to its
 * thread entry, created if missing; if the map is full, to its uid's
 * overflow; if that is full too, to the lost counter.
 */
static __always_inline void
account(__u32 side, __u32 tid, __u32 tgid, __u32 uid, __u64 delta)
{
	const void *m = side ? &sched_tid1 : &sched_tid0;
	struct sched_tid_key key = { .tid = tid, .uid = uid };
	struct sched_tid *v;
	struct sched_uid *u;

	tot_add(side ? TOT_ONCPU_S1 : TOT_ONCPU_S0, delta);
	/* only the thread itself (switching out) writes its entry */
	v = bpf_map_lookup_elem(m, &key);
	if (v) {
		v->oncpu_ns += delta;
		return;
	}
	{
		struct sched_tid nv = { .oncpu_ns = delta, .tgid = tgid };

		if (bpf_map_update_elem(m, &key, &nv, BPF_NOEXIST) == 0)
			return;
	}
	tot_add(TOT_TID_FULL, 1);
	if ((u = uid_entry(side, uid)) != 0)
		__sync_fetch_and_add(&u->overflow_ns, delta);
	else
		tot_add(side ? TOT_LOST_S1 : TOT_LOST_S0, delta);
}

static __always_inline void
account_rq(__u32 side, __u32 tgid, __u64 delay)
{
	__u32 slot = log2_u64(delay / 1000);
	struct sched_proc *p;

	if (slot >= VITALS_SCHED_RQ_SLOTS)
		slot = VITALS_SCHED_RQ_SLOTS - 1;
	tot_add(TOT_RQ_SAMPLES, 1);
	if ((p = proc_entry(side, tgid)) != 0) {
		__sync_fetch_and_add(&p->rq_ns, delay);
		__sync_fetch_and_add(&p->rq_count, 1);
		__sync_fetch_and_add(&p->rq_hist[slot], 1);
	}
}

VLDR_PROG("tracepoint/sched/sched_switch", OWNER, VITALSD_GID, vitals_switch,
    struct sched_switch_args)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 side = current_side(), zero = 0;
	__u32 prev = (__u32)ctx->prev_pid, next = (__u32)ctx->next_pid;
	struct sched_cpu *c = bpf_map_lookup_elem(&sched_cpu, &zero);
	struct sched_wake *w;
	__s64 state = ctx->prev_state;

	if (!c)
		return 0;
	/* the idle task (pid 0) is never accounted: its time is not work */
	if (prev != 0) {
		/* current is prev here: its tgid and uid come from helpers */
		__u32 tgid = (__u32)(id >> 32);
		__u32 uid = (__u32)bpf_get_current_uid_gid();

		if (c->ns == 0) {
			/* the CPU's first switch since attach */
			tot_add(TOT_NO_SLICE, 1);
		} else if (now > c->ns) {
			account(side, prev, tgid, uid, now - c->ns);
			tot_add(TOT_SWITCHES, 1);
		}
		/* Its process, learnt while it runs, for its next wait; a
		 * task preempted while runnable is queued from now. */
		w = bpf_map_lookup_elem(&sched_wake, &prev);
		if (w) {
			w->tgid = tgid;
			if (state == 0 || state == STATE_PREEMPTED)
				w->wake_ns = now;
		} else if (state == 0 || state == STATE_PREEMPTED) {
			struct sched_wake nw = { .wake_ns = now, .tgid = tgid };

			if (bpf_map_update_elem(&sched_wake, &prev, &nw,
			    BPF_NOEXIST) != 0)
				tot_add(TOT_NO_STORAGE, 1);
		}
	}
	c->ns = now;
	c->tid = next;
	if (next == 0)
		return 0;
	w = bpf_map_lookup_elem(&sched_wake, &next);
	if (w && w->wake_ns != 0) {
		if (now > w->wake_ns) {
			if (w->tgid != 0)
				account_rq(side, w->tgid, now - w->wake_ns);
			else
				/* a new task's first wait: process unknown */
				tot_add(TOT_NO_STORAGE, 1);
		}
		w->wake_ns = 0;
	}
	return 0;
}

/* Enqueued: stamp it (its process stays what it was). */
static __always_inline int
enqueued(__u32 pid)
{
	__u64 now = bpf_ktime_get_ns();
	struct sched_wake *w;

	if (pid == 0)
		return 0;
	tot_add(TOT_WAKEUPS, 1);
	w = bpf_map_lookup_elem(&sched_wake, &pid);
	if (w) {
		w->wake_ns = now;
	} else {
		struct sched_wake nw = { .wake_ns = now };

		if (bpf_map_update_elem(&sched_wake, &pid, &nw, BPF_NOEXIST))
			tot_add(TOT_NO_STORAGE, 1);
	}
	return 0;
}

VLDR_PROG("tracepoint/sched/sched_wakeup", OWNER, VITALSD_GID, vitals_wakeup,
    struct sched_wakeup_args)
{
	return enqueued((__u32)ctx->pid);
}

VLDR_PROG("tracepoint/sched/sched_wakeup_new", OWNER, VITALSD_GID,
    vitals_wakeup_new, struct sched_wakeup_args)
{
	return enqueued((__u32)ctx->pid);
}

/*
 * A thread exits (it is current here, and only it writes its own entry):
 * its time so far moves into its uid's and its process's "exited"
 * figures and its entry goes. Its last slice, after this, makes a new
 * small entry that the next drain takes. Its wait stamp goes too; the
 * final switch-out of a dead task does not make a new one.
 */
VLDR_PROG("tracepoint/sched/sched_process_exit", OWNER, VITALSD_GID,
    vitals_exit, struct sched_process_exit_args)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 side = current_side(), tid = (__u32)id, tgid = (__u32)(id >> 32);
	struct sched_tid_key key = {
		.tid = tid,
		.uid = (__u32)bpf_get_current_uid_gid(),
	};
	const void *m = side ? &sched_tid1 : &sched_tid0;
	struct sched_tid *v;
	struct sched_proc *p;
	struct sched_uid *u;

	bpf_map_delete_elem(&sched_wake, &tid);
	v = bpf_map_lookup_elem(m, &key);
	if (!v)
		return 0;
	{
		__u64 ns = v->oncpu_ns;

		if ((u = uid_entry(side, key.uid)) != 0) {
			__sync_fetch_and_add(&u->exited_ns, ns);
			__sync_fetch_and_add(&u->exited_tasks, 1);
		} else {
			tot_add(side ? TOT_LOST_S1 : TOT_LOST_S0, ns);
		}
		if ((p = proc_entry(side, tgid)) != 0)
			__sync_fetch_and_add(&p->exited_ns, ns);
	}
	bpf_map_delete_elem(m, &key);
	tot_add(TOT_EXITED, 1);
	return 0;
}

VLDR_LICENSE("Dual BSD/GPL");
