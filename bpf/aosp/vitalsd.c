// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vitalsd's sched_switch accounting in the format of Android's platform
 * BPF loader (bpfloader.h): plain tracepoint programs and "maps"-section
 * maps, no BTF, no CO-RE, no task storage. Installed as
 * /system/etc/bpf/vitalsd.o, the loader pins
 *   /sys/fs/bpf/map_vitalsd_<map>   and
 *   /sys/fs/bpf/prog_vitalsd_tracepoint_sched_<event>
 * and vitalsd opens those pins read-only and attaches the programs itself
 * (daemon/sched/sched_ldr.c; doc/bpf.md says why each choice).
 *
 * Without BTF a program sees only what the tracepoint's record holds (the
 * pids, the previous task's state) and what helpers say about the current
 * task, which in sched_switch is the task leaving the CPU. So on-CPU time
 * is measured, not read: each CPU keeps the time of its last switch and
 * who switched in then, and a switch charges the time since then to the
 * task leaving, if it is that task (a missed switch, or a stamp left from
 * before the daemon last attached, measures nothing: no_slice). Run-queue
 * delay is wakeup (or preemption) to switch-in, as in the CO-RE program.
 *
 * The daemon may only read these maps (on Android no domain but a fixed
 * list may open a pin read-write), so nothing here is ever cleared from
 * userspace: every figure is a running total, there is one side only, and
 * the maps are LRU hashes, bounded by the kernel evicting the least
 * recently used entry. The program marks what it knows is dead (a
 * thread's entry at its final switch-out, a process's when its leader
 * exits) and drops a thread's wait stamp at its final switch-out; a
 * reused tid makes a new key (the thread's birth stamp is part of it).
 * The daemon diffs snapshots. The keys carry no start time (a BTF-less
 * program cannot read it): the daemon fills it from /proc.
 */
#include "bpfloader.h"
#include "../sched/sched.bpf.h"

/* Pins: root-owned, 0440: the daemon's group may read them, and nobody
 * without CAP_DAC_OVERRIDE may open them read-write; the daemon never
 * needs to (BPF_F_RDONLY). AID 2901 is the OEM AID init/vitalsd.rc runs
 * the daemon as; an OEM with another one changes it here. */
#define VITALSD_GID 2901
#define OWNER 0
#define MODE 0440

/* Capacities; a test build makes them small to force eviction. */
#ifndef VITALS_LDR_TIDS
#define VITALS_LDR_TIDS VITALS_SCHED_TIDS
#endif
#ifndef VITALS_LDR_PROCS
#define VITALS_LDR_PROCS VITALS_SCHED_PROCS
#endif
#ifndef VITALS_LDR_UIDS
#define VITALS_LDR_UIDS VITALS_SCHED_UIDS
#endif
#ifndef VITALS_LDR_WAKE
#define VITALS_LDR_WAKE VITALS_SCHED_TIDS
#endif

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
/* prev_state of a task's final switch-out: its exit_state, EXIT_DEAD
 * (0x10) or EXIT_ZOMBIE (0x20), reported as 1 << (state index - 1) */
#define STATE_EXITED 0x30

VLDR_MAP(sched_tot, PERCPU_ARRAY, __u32, __u64, TOT__MAX, OWNER, VITALSD_GID,
    MODE);
VLDR_MAP(sched_cpu, PERCPU_ARRAY, __u32, struct sched_cpu, 1, OWNER,
    VITALSD_GID, MODE);
VLDR_MAP(sched_wake, LRU_HASH, __u32, struct sched_wake, VITALS_LDR_WAKE, OWNER,
    VITALSD_GID, MODE);
VLDR_MAP(sched_tid, LRU_HASH, struct sched_tid_key, struct sched_ltid,
    VITALS_LDR_TIDS, OWNER, VITALSD_GID, MODE);
VLDR_MAP(sched_proc, LRU_HASH, struct sched_proc_key, struct sched_lproc,
    VITALS_LDR_PROCS, OWNER, VITALSD_GID, MODE);
VLDR_MAP(sched_uid, LRU_HASH, __u32, struct sched_uid, VITALS_LDR_UIDS, OWNER,
    VITALSD_GID, MODE);

static __always_inline void
tot_add(__u32 idx, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&sched_tot, &idx);

	/* atomic: a wakeup in a hard interrupt may nest over another one */
	if (p)
		__sync_fetch_and_add(p, v);
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
uid_entry(__u32 uid)
{
	struct sched_uid *u = bpf_map_lookup_elem(&sched_uid, &uid);
	struct sched_uid zero = {};

	if (u)
		return u;
	bpf_map_update_elem(&sched_uid, &uid, &zero, BPF_NOEXIST);
	u = bpf_map_lookup_elem(&sched_uid, &uid);
	if (!u)
		tot_add(TOT_UID_FULL, 1);
	return u;
}

/* A process's entry; one whose leader exited is made anew (the tgid is
 * another process's now, or what is left of the group). */
static __always_inline struct sched_lproc *
proc_entry(__u32 tgid, __u64 now)
{
	struct sched_proc_key key = { .tgid = tgid };
	struct sched_lproc *p = bpf_map_lookup_elem(&sched_proc, &key);
	struct sched_lproc nv = { .made_ns = now };

	if (p && !(p->flags & SCHED_LDR_DEAD))
		return p;
	bpf_map_update_elem(&sched_proc, &key, &nv, p ? BPF_ANY : BPF_NOEXIST);
	p = bpf_map_lookup_elem(&sched_proc, &key);
	if (!p)
		tot_add(TOT_PROC_FULL, 1);
	return p;
}

/*
 * delta ns on a CPU to the current task (the one switching out): to its
 * thread entry, made if missing (or if the entry under its key is a dead
 * thread's); if none can be made, to its uid's overflow; if that fails
 * too, to the lost counter. dead: this is its final switch-out.
 */
static __always_inline void
account(struct sched_tid_key *key, __u32 tgid, __u64 delta, __u64 now, int dead)
{
	struct sched_ltid *v;
	struct sched_uid *u;

	tot_add(TOT_ONCPU_S0, delta);
	/* only the thread itself (switching out) writes its entry */
	v = bpf_map_lookup_elem(&sched_tid, key);
	if (v && !(v->flags & SCHED_LDR_DEAD)) {
		v->oncpu_ns += delta;
		if (dead)
			v->flags |= SCHED_LDR_DEAD;
		return;
	}
	{
		struct sched_ltid nv = {
			.oncpu_ns = delta,
			.made_ns = now,
			.tgid = tgid,
			.flags = dead ? SCHED_LDR_DEAD : 0,
		};

		if (bpf_map_update_elem(&sched_tid, key, &nv,
			v ? BPF_ANY : BPF_NOEXIST) == 0)
			return;
	}
	tot_add(TOT_TID_FULL, 1);
	if ((u = uid_entry(key->uid)) != 0)
		__sync_fetch_and_add(&u->overflow_ns, delta);
	else
		tot_add(TOT_LOST_S0, delta);
}

static __always_inline void
account_rq(__u32 tgid, __u64 delay, __u64 now)
{
	__u32 slot = log2_u64(delay / 1000);
	struct sched_lproc *p;

	if (slot >= VITALS_SCHED_RQ_SLOTS)
		slot = VITALS_SCHED_RQ_SLOTS - 1;
	tot_add(TOT_RQ_SAMPLES, 1);
	if ((p = proc_entry(tgid, now)) != 0) {
		__sync_fetch_and_add(&p->rq_ns, delay);
		__sync_fetch_and_add(&p->rq_count, 1);
		__sync_fetch_and_add(&p->rq_hist[slot], 1);
	}
}

/*
 * epoch: when the daemon attached this program (its attach cookie,
 * bpf_ktime_get_ns() clock), 0 where the kernel has no cookies. A stamp
 * older than that was left from before: from a switch-in seen by an
 * earlier attachment, and the task may have left and come back unseen.
 */
static __always_inline int
on_switch(struct sched_switch_args *ctx, __u64 epoch)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 zero = 0;
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
		int dead = state != STATE_PREEMPTED &&
		    (state & STATE_EXITED) != 0;
		struct sched_tid_key key = {
			.tid = prev,
			.uid = (__u32)bpf_get_current_uid_gid(),
		};

		w = bpf_map_lookup_elem(&sched_wake, &prev);
		if (w)
			key.start_ns = w->birth_ns;
		/*
		 * The slice is this task's only if the CPU's stamp says it
		 * switched in, since this attachment: a switch the program
		 * missed, or a stamp from before the daemon attached,
		 * measures nothing.
		 */
		if (c->ns == 0 || c->tid != prev || c->ns < epoch) {
			tot_add(TOT_NO_SLICE, 1);
			if (dead) {
				struct sched_ltid *v =
				    bpf_map_lookup_elem(&sched_tid, &key);

				if (v)
					v->flags |= SCHED_LDR_DEAD;
			}
		} else if (now > c->ns) {
			account(&key, tgid, now - c->ns, now, dead);
			tot_add(TOT_SWITCHES, 1);
		}
		if (dead) {
			/* its last switch-out: the wait stamp goes */
			if (w)
				bpf_map_delete_elem(&sched_wake, &prev);
		} else if (w) {
			/* its process, learnt while it runs, for its next
			 * wait; a task preempted while runnable is queued
			 * from now */
			w->tgid = tgid;
			if (state == 0 || state == STATE_PREEMPTED)
				w->wake_ns = now;
			else /* asleep: a stamp left while it ran goes */
				w->wake_ns = 0;
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
				account_rq(w->tgid, now - w->wake_ns, now);
			else
				/* a new task's first wait: process unknown */
				tot_add(TOT_NO_STORAGE, 1);
		}
		w->wake_ns = 0;
	}
	return 0;
}

/* Linux 5.15 and later: the attach cookie says when the daemon attached. */
VLDR_PROG_KVER("tracepoint/sched/sched_switch$cookie", OWNER, VITALSD_GID,
    vitals_switch_cookie, struct sched_switch_args, VLDR_KVER(5, 15, 0),
    VLDR_KVER_INF)
{
	return on_switch(ctx, bpf_get_attach_cookie(ctx));
}

/* Older kernels: no cookies; a stamp from before a restart is refused
 * only when another task switches out first (doc/bpf.md). */
VLDR_PROG_KVER("tracepoint/sched/sched_switch$plain", OWNER, VITALSD_GID,
    vitals_switch, struct sched_switch_args, 0, VLDR_KVER(5, 15, 0))
{
	return on_switch(ctx, 0);
}

/* Runnable: stamp it (its process and birth stay what they were). */
VLDR_PROG("tracepoint/sched/sched_wakeup", OWNER, VITALSD_GID, vitals_wakeup,
    struct sched_wakeup_args)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 pid = (__u32)ctx->pid;
	struct sched_wake *w;

	if (pid == 0)
		return 0;
	tot_add(TOT_WAKEUPS, 1);
	w = bpf_map_lookup_elem(&sched_wake, &pid);
	if (w) {
		/* already waiting (preempted, then woken): since then */
		if (w->wake_ns == 0)
			w->wake_ns = now;
	} else {
		struct sched_wake nw = { .wake_ns = now };

		if (bpf_map_update_elem(&sched_wake, &pid, &nw, BPF_NOEXIST))
			tot_add(TOT_NO_STORAGE, 1);
	}
	return 0;
}

/*
 * A new task's first enqueue: its wait stamp and its birth, which is part
 * of its thread key. Whatever the map held under its tid was an earlier
 * task's whose final switch-out went unseen: replaced.
 */
VLDR_PROG("tracepoint/sched/sched_wakeup_new", OWNER, VITALSD_GID,
    vitals_wakeup_new, struct sched_wakeup_args)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 pid = (__u32)ctx->pid;
	struct sched_wake nw = { .wake_ns = now, .birth_ns = now };

	if (pid == 0)
		return 0;
	tot_add(TOT_WAKEUPS, 1);
	if (bpf_map_update_elem(&sched_wake, &pid, &nw, BPF_ANY))
		tot_add(TOT_NO_STORAGE, 1);
	return 0;
}

/*
 * A thread exits (it is current here): its uid counts one more exited
 * thread. Its time stays in its entry, which its final switch-out marks
 * dead (the daemon takes the last figure from there). A group leader's
 * exit marks its process entry dead: the tgid's next wait makes a new one.
 */
VLDR_PROG("tracepoint/sched/sched_process_exit", OWNER, VITALSD_GID,
    vitals_exit, struct sched_process_exit_args)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = (__u32)(id >> 32);
	struct sched_uid *u = uid_entry((__u32)bpf_get_current_uid_gid());

	if (u)
		__sync_fetch_and_add(&u->exited_tasks, 1);
	tot_add(TOT_EXITED, 1);
	if (tid == tgid) {
		struct sched_proc_key key = { .tgid = tgid };
		struct sched_lproc *p = bpf_map_lookup_elem(&sched_proc, &key);

		if (p)
			p->flags |= SCHED_LDR_DEAD;
		tot_add(TOT_PROC_EXITED, 1);
	}
	return 0;
}

VLDR_LICENSE("Dual BSD/GPL");
