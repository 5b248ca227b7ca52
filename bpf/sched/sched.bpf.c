// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Exact per-task CPU attribution on sched_switch, and run-queue delay.
 *
 * Every switch-out adds the task's CPU time since its previous switch-out
 * (the growth of the scheduler's own sum_exec_runtime, baseline in task
 * storage) to the thread's entry, keyed by (tid, uid, start), in the
 * maps of the side the generation in sched_ctl selects: since layout 11
 * an array slot the thread owns for the window (its index in its task
 * storage), or, past the slots' capacity, its sched_tid hash entry; the
 * only map write on the hot path besides the tasks' own storage. The entry carries
 * the thread's process, so userspace sums per process and per uid.
 * Userspace flips the generation, waits for programs still writing the old
 * side (an RCU grace period, see doc/bpf.md), then drains that side alone:
 * nothing is read while it changes, nothing written after it was read.
 *
 * A wakeup stamps the task (task storage); its next switch-in measures the
 * wait and keeps it there, and the switch-out that ends the slice adds it
 * to the thread's entry with the slice's CPU time: one hash update per
 * switch (the drain adds a thread's waits to its process). A thread that
 * exits (sched_process_free: after its last switch) folds its time into
 * its uid's and its process's "exited" figures and leaves the map; a
 * process whose last task is freed is marked exited and stays for the
 * drain.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sched.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Settings, fixed at load (skel->rodata). */
const volatile bool rq_enabled = true; /* measure run-queue delay */
/*
 * The waits from the kernel's own per-task counters (sched_info: every
 * switch-in after a queued stamp adds the wait to run_delay and one to
 * pcount), read at the switch-out: no stamp at wakeups, nothing at
 * switch-ins. The daemon sets it with `bpf_rq_source = sched_info` where
 * the kernel keeps them (CONFIG_SCHED_INFO, /proc/<pid>/schedstat); off
 * (the default), the programs stamp wakeups and measure at switch-ins.
 */
const volatile bool rq_sched_info = false;
/* Tests only: a path the verifier must refuse, to prove degradation. */
const volatile bool test_reject = false;
/* Array slots used per side (tests make it tiny to force the hash). */
const volatile __u32 slot_cap = VITALS_SCHED_SLOTS;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_ctl);
} sched_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_meta);
} sched_meta SEC(".maps");

/*
 * Never read by a program: userspace stores sched_ctl's fd into it after a
 * flip, because the kernel answers a map-in-map update only after
 * synchronize_rcu(), i.e. once every program that could have read the old
 * generation has returned.
 */
struct ctl_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_ctl);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ctl_inner);
} sched_barrier SEC(".maps");

/* Written by the daemon from sysfs (doc/bpf.md, "Capacity-weighted CPU"):
 * the kernel's own cpu_scale and arch_freq_scale are per-CPU variables a
 * program reaches only through kallsyms (CONFIG_KALLSYMS_ALL). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VITALS_SCHED_CPUS);
	__type(key, __u32);
	__type(value, struct sched_scale);
} sched_scale SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sched_task);
} sched_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TOT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} sched_tot SEC(".maps");

/*
 * The double-buffered maps, preallocated: an insert in sched_switch never
 * waits on an allocator (non-preallocated maps refill from irq_work, and
 * failed inserts under fork bursts). A preallocated element is reused as
 * soon as it is deleted, so a delete is only ever made where no CPU can
 * be writing that key (see vitals_free). Plain hashes: a thread's entry
 * has a single writer (the thread, at its switch-out); process and uid
 * entries take atomic adds on rare paths. Per-CPU copies would cost
 * entries x CPUs for nothing.
 */
#define TID_MAP(name)                                   \
	struct {                                        \
		__uint(type, BPF_MAP_TYPE_HASH);        \
		__uint(max_entries, VITALS_SCHED_TIDS); \
		__type(key, struct sched_tid_key);      \
		__type(value, struct sched_tid);        \
	} name SEC(".maps")
#define PROC_MAP(name)                                   \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_HASH);         \
		__uint(max_entries, VITALS_SCHED_PROCS); \
		__type(key, struct sched_proc_key);      \
		__type(value, struct sched_proc);        \
	} name SEC(".maps")
#define UID_MAP(name)                                   \
	struct {                                        \
		__uint(type, BPF_MAP_TYPE_HASH);        \
		__uint(max_entries, VITALS_SCHED_UIDS); \
		__type(key, __u32);                     \
		__type(value, struct sched_uid);        \
	} name SEC(".maps")

TID_MAP(sched_tid0);
TID_MAP(sched_tid1);

/*
 * Layout 11: the threads' figures in array slots first (doc/bpf.md,
 * "Array slots"): an array lookup the verifier inlines as an index
 * computation, where the hash hashes a 16-byte key and walks a bucket.
 * The hash takes the threads past the capacity.
 */
SCHED_SLOT_MAPS; /* sched.bpf.h */
PROC_MAP(sched_proc0);
PROC_MAP(sched_proc1);
UID_MAP(sched_uid0);
UID_MAP(sched_uid1);

/* Before 5.14 the field was "state". */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long
task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

static __always_inline void
tot_add(__u32 idx, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&sched_tot, &idx);

	/* atomic: a wakeup in a hard interrupt may nest over a free */
	if (p)
		__sync_fetch_and_add(p, v);
}

/*
 * sched_switch runs with interrupts off and never inside another program
 * of ours on its CPU, so its own read-modify-write of a per-CPU counter
 * cannot interleave with another one: a plain add is enough there.
 */
static __always_inline void
tot_add_switch(__u32 idx, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&sched_tot, &idx);

	if (p)
		*p += v;
}

/* The generation (its low bit is the side). */
static __always_inline __u64
current_gen(void)
{
	__u32 zero = 0;
	struct sched_ctl *ctl = bpf_map_lookup_elem(&sched_ctl, &zero);

	return ctl ? ctl->gen : 0;
}

static __always_inline void *
slot_map(__u32 side)
{
	return side ? (void *)&sched_slot1 : (void *)&sched_slot0;
}

static __always_inline void *
tid_map(__u32 side)
{
	return side ? (void *)&sched_tid1 : (void *)&sched_tid0;
}

static __always_inline void *
proc_map(__u32 side)
{
	return side ? (void *)&sched_proc1 : (void *)&sched_proc0;
}

static __always_inline void *
uid_map(__u32 side)
{
	return side ? (void *)&sched_uid1 : (void *)&sched_uid0;
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

/*
 * The uid's entry, created if missing; NULL when the map is full. An
 * insert that fails with -EEXIST (another CPU was first) is fine: the
 * lookup after it finds the entry.
 */
static __always_inline struct sched_uid *
uid_entry(void *map, __u32 uid)
{
	struct sched_uid *u = bpf_map_lookup_elem(map, &uid);
	struct sched_uid zero = {};

	if (u)
		return u;
	bpf_map_update_elem(map, &uid, &zero, BPF_NOEXIST);
	u = bpf_map_lookup_elem(map, &uid);
	if (!u)
		tot_add(TOT_UID_FULL, 1);
	return u;
}

static __always_inline struct sched_proc *
proc_entry(void *map, struct sched_proc_key *key)
{
	struct sched_proc *p = bpf_map_lookup_elem(map, key);
	struct sched_proc zero = {};

	if (p)
		return p;
	bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
	p = bpf_map_lookup_elem(map, key);
	if (!p)
		tot_add(TOT_PROC_FULL, 1);
	return p;
}

/* delta × capacity/1024 × frequency/1024 of this CPU: the CPU t ran on
 * (sched_switch runs there, before the next task's first instruction). */
static __always_inline __u64
weighted(__u64 delta)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sched_scale *s = bpf_map_lookup_elem(&sched_scale, &cpu);
	__u64 cap = 1024, freq = 1024;

	if (s && s->cap)
		cap = s->cap;
	else
		tot_add_switch(TOT_WTD_NOCAP, delta);
	if (s && s->freq)
		freq = s->freq;
	else
		tot_add_switch(TOT_WTD_NOFREQ, delta);
	return ((delta * cap) >> 10) * freq >> 10;
}

/* An exiting thread's waits into its uid or process (sched_process_free
 * only; the two have the same layout of these figures). */
#define FOLD_RQ(dst, ns, count, hist, v)                               \
	do {                                                           \
		__u32 i_;                                              \
		__sync_fetch_and_add(&(dst)->ns, (v)->rq_ns);          \
		__sync_fetch_and_add(&(dst)->count, (v)->rq_count);    \
		for (i_ = 0; i_ < VITALS_SCHED_RQ_SLOTS; i_++)         \
			if ((v)->rq_hist[i_])                          \
				__sync_fetch_and_add(&(dst)->hist[i_], \
				    (v)->rq_hist[i_]);                 \
	} while (0)

/* A process-map change no slot of the side's window names (struct
 * sched_nslot, proc_other): the partial read walks that map for it. */
static __always_inline void
proc_other(__u32 side)
{
	struct sched_nslot *ns = bpf_map_lookup_elem(&sched_nslot, &side);

	if (ns)
		__sync_fetch_and_add(&ns->proc_other, 1);
}

/*
 * A wait no thread entry could take (the tid map full): to its process
 * only, counted (RQ_NOTID).
 */
static __always_inline void
rq_to_proc(__u32 side, struct task_struct *t, __u64 delay, __u64 slot, __u32 nw)
{
	struct sched_proc_key key = {
		.tgid = t->tgid,
		.start_ns = t->group_leader->start_boottime,
	};
	struct sched_proc *p;

	tot_add_switch(TOT_RQ_NOTID, nw);
	proc_other(side);
	if ((p = proc_entry(proc_map(side), &key)) != NULL) {
		__sync_fetch_and_add(&p->rq_ns, delay);
		__sync_fetch_and_add(&p->rq_count, nw);
		__sync_fetch_and_add(&p->rq_hist[slot], nw);
	}
}

/*
 * Whether st names a slot of generation gen taken under the credentials
 * cr (layout 14: by address, without reading the cred; slot_gen is the
 * generation + 1, so a new task's zeroed storage names none).
 */
static __always_inline bool
slot_owned(const struct sched_task *st, __u64 gen, const struct cred *cr)
{
	return st->slot_gen == (__u32)(gen + 1) && st->slot_cred == (__u64)cr;
}

/*
 * What t did since its last switch-out, to its thread entry in one
 * update: its CPU time (delta, may be 0) and the wait its slice began
 * with, if one is pending in st. Only t itself writes its entry — at its
 * switch-out, or at a switch-in whose switch-out was never seen
 * (flush_rq) — and it runs on one CPU at a time: no other CPU races.
 */
static __always_inline void
account_side(void *m, void *sm, __u32 side, __u64 gen, struct task_struct *t,
    __u64 delta, struct sched_task *st)
{
	/* Only the pointer: a task's credentials are a new object at every
	 * change (commit_creds()), so the same object is the same real uid,
	 * and the cred's own line is read only when the task takes a slot
	 * (layout 14; doc/bpf.md, "Array slots") */
	const struct cred *cr = t->real_cred;
	struct sched_tid_key key;
	struct sched_nslot *ns;
	struct sched_slot *sl;
	__u32 idx, side_key = side;
	__u32 pending = st->rq_slot, nw = st->rq_n;
	__u64 slot = 0; /* 64-bit: no zero-extension between clamp and use */
	__u64 delay = st->rq_ns, wtd = 0;
	struct sched_tid *v;
	struct sched_uid *u;
	bool mine;

	st->rq_slot = 0;
	if (delta) {
		wtd = weighted(delta);
		tot_add_switch(side ? TOT_ONCPU_S1 : TOT_ONCPU_S0, delta);
	}
	if (pending) {
		slot = pending - 1;
		tot_add_switch(TOT_RQ_SAMPLES, nw);
	}
	/* clamped where it is used: a clamp the compiler moves away from
	 * the access leaves the verifier an unbounded index */
	barrier_var(slot);
	if (slot >= VITALS_SCHED_RQ_SLOTS)
		slot = VITALS_SCHED_RQ_SLOTS - 1;
	/* its slot of this window, under these credentials */
	mine = slot_owned(st, gen, cr);
	if (mine) {
		idx = st->slot_idx;
		if (idx != SCHED_SLOT_HASH) {
			sl = bpf_map_lookup_elem(sm, &idx);
			if (sl) {
				sl->v.oncpu_ns += delta;
				sl->v.wtd_ns += wtd;
				if (pending) {
					sl->v.rq_ns += delay;
					sl->v.rq_count += nw;
					sl->v.rq_hist[slot] += nw;
				}
				return;
			}
		}
	}
	key.tid = t->pid;
	key.uid = cr->uid.val;
	key.start_ns = t->start_boottime;
	if (!mine) {
		/* first accounted switch-out of the window (or under new
		 * credentials): a slot of its own, written whole, or the
		 * hash */
		ns = bpf_map_lookup_elem(&sched_nslot, &side_key);
		idx = ns ? __sync_fetch_and_add(&ns->count, 1) :
			   SCHED_SLOT_HASH;
		sl = NULL;
		if (idx < slot_cap)
			sl = bpf_map_lookup_elem(sm, &idx);
		st->slot_gen = (__u32)(gen + 1);
		st->slot_cred = (__u64)cr;
		st->slot_idx = SCHED_SLOT_HASH;
		if (sl) {
			__builtin_memset(&sl->v, 0, sizeof(sl->v));
			sl->v.oncpu_ns = delta;
			sl->v.wtd_ns = wtd;
			sl->v.tgid = t->tgid;
			sl->v.leader_ns = t->group_leader->start_boottime;
			if (pending) {
				sl->v.rq_ns = delay;
				sl->v.rq_count = nw;
				sl->v.rq_hist[slot] = nw;
			}
			sl->key = key;
			sl->flags = 0;
			/* last, after the rest in program order (the
			 * compiler may not move stores past it; x86 makes
			 * stores visible in order): a live-side reader
			 * trusts a slot whose ready is its side's
			 * generation + 1 (doc/bpf.md, "Array slots") */
			barrier();
			sl->ready = gen + 1;
			st->slot_idx = idx;
			return;
		}
	}
	v = bpf_map_lookup_elem(m, &key);
	if (v) {
		v->oncpu_ns += delta;
		v->wtd_ns += wtd;
		if (pending) {
			v->rq_ns += delay;
			v->rq_count += nw;
			v->rq_hist[slot] += nw;
		}
		return;
	}
	{
		struct sched_tid nv = {
			.oncpu_ns = delta,
			.leader_ns = t->group_leader->start_boottime,
			.tgid = t->tgid,
			.wtd_ns = wtd,
		};

		if (pending) {
			nv.rq_ns = delay;
			nv.rq_count = nw;
			nv.rq_hist[slot] = nw;
		}
		if (bpf_map_update_elem(m, &key, &nv, BPF_NOEXIST) == 0)
			return;
	}
	/* full: the uid keeps the time at least, the process the wait */
	tot_add(TOT_TID_FULL, 1);
	if (delta) {
		if ((u = uid_entry(uid_map(side), key.uid)) != NULL)
			__sync_fetch_and_add(&u->overflow_ns, delta);
		else
			tot_add(side ? TOT_LOST_S1 : TOT_LOST_S0, delta);
	}
	if (pending)
		rq_to_proc(side, t, delay, slot, nw);
}

/*
 * One copy of account_side() per side, each naming its map as a constant:
 * the verifier inlines a hash lookup (a direct call of the hash table's
 * own lookup) only at a call site that always sees the same map; a site
 * fed either side goes through the generic helper and the map's ops, an
 * indirect call (a retpoline on this VM). The empty asm keeps the
 * compiler from merging the two copies back into one call site.
 */
static __always_inline void
account(__u64 gen, struct task_struct *t, __u64 delta, struct sched_task *st)
{
	if (gen & 1) {
		asm volatile("" ::: "memory");
		account_side(&sched_tid1, &sched_slot1, 1, gen, t, delta, st);
	} else {
		account_side(&sched_tid0, &sched_slot0, 0, gen, t, delta, st);
	}
}

/*
 * rq_sched_info: the waits t's sched_info counted since its last
 * switch-out, pending in st for account_side. The kernel adds a wait at
 * the switch-in that ends it (sched_info_arrive, from
 * prepare_task_switch: after this tracepoint for next, long before the
 * switch-out for t), and a part of one cut by a migration's dequeue
 * (sched_info_dequeue) without a count: that part waits in run_delay
 * for the count of the switch-in that ends the wait. So only a count
 * moves the baselines. first: st holds no baseline yet (a task running
 * before the programs were attached): take one, measure nothing.
 */
static __always_inline void
si_pending(struct task_struct *t, struct sched_task *st, bool first)
{
	__u64 delay;
	__u16 count, n;

	if (!bpf_core_field_exists(t->sched_info.run_delay))
		return;
	/* the count's low 16 bits: a difference mod 2^16 is exact below
	 * 65,536 waits between two switch-outs of one task */
	count = (__u16)t->sched_info.pcount;
	delay = t->sched_info.run_delay;
	if (first || !st->si_base) {
		st->si_count = count;
		st->si_delay = delay;
		st->si_base = 1;
		return;
	}
	n = (__u16)(count - st->si_count);
	if (n == 0)
		return;
	st->rq_ns = delay - st->si_delay;
	st->rq_n = n;
	st->rq_slot = log2_u64((n == 1 ? st->rq_ns : st->rq_ns / n) / 1000) + 1;
	st->si_count = count;
	st->si_delay = delay;
}

SEC("tp_btf/sched_switch")
int
BPF_PROG(vitals_switch, bool preempt, struct task_struct *prev,
    struct task_struct *next)
{
	__u64 gen = current_gen();
	struct sched_task *st;
	__u64 now = 0;

	if (test_reject) {
		/* unbounded read: the verifier refuses the program */
		__u64 *bad = (__u64 *)(long)next->se.sum_exec_runtime;

		return (int)*bad;
	}
	/* The idle task (pid 0) is never accounted: it is not on-CPU work. */
	if (prev->pid != 0) {
		/* up to date: put_prev_task() ran update_curr() before this */
		__u64 sum = prev->se.sum_exec_runtime;

		st = bpf_task_storage_get(&sched_task, prev, 0,
		    BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			tot_add(TOT_NO_STORAGE, 1);
		} else {
			if (rq_sched_info && rq_enabled)
				si_pending(prev, st, !st->valid);
			if (!st->valid) {
				/* running since before we were attached (with
				 * rq_sched_info: met first here, not at a
				 * switch-in) */
				tot_add_switch(TOT_NO_SLICE, 1);
			} else {
				__u64 d = sum > st->sum_ns ? sum - st->sum_ns :
							     0;

				if (d || st->rq_slot)
					account(gen, prev, d, st);
				tot_add_switch(TOT_SWITCHES, 1);
			}
			st->sum_ns = sum;
			st->valid = 1;
			/*
			 * Preempted (whatever its state: it stays queued) or
			 * yielding while runnable: it waits from now. A task
			 * that blocks needs a wakeup to run again; a stamp a
			 * wakeup left while it ran goes with it. (With
			 * rq_sched_info the kernel stamps it.)
			 */
			if (rq_sched_info) {
				/* no stamp; one a wakeup-stamping program
				 * left (pins kept across a restart that
				 * changed the setting) goes: the stamping
				 * programs, back, would measure from it */
				st->wake_ns = 0;
			} else if (rq_enabled &&
			    (preempt || task_state(prev) == 0)) {
				now = bpf_ktime_get_ns();
				st->wake_ns = now;
				st->si_base = 0;
			} else {
				st->wake_ns = 0;
				st->si_base = 0;
			}
		}
	}
	/* rq_sched_info: nothing to do for next; its switch-out measures */
	if (rq_sched_info || next->pid == 0)
		return 0;
	st = bpf_task_storage_get(&sched_task, next, 0,
	    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		tot_add(TOT_NO_STORAGE, 1);
		return 0;
	}
	/* first seen: its time so far is before our time */
	if (!st->valid) {
		st->sum_ns = next->se.sum_exec_runtime;
		st->valid = 1;
	}
	if (st->wake_ns != 0) {
		if (now == 0)
			now = bpf_ktime_get_ns();
		if (rq_enabled && now > st->wake_ns) {
			/* a wait whose slice's switch-out was never seen
			 * goes to its entry first */
			if (st->rq_slot)
				account(gen, next, 0, st);
			st->rq_ns = now - st->wake_ns;
			st->rq_n = 1;
			st->rq_slot = log2_u64(st->rq_ns / 1000) + 1;
		}
		st->wake_ns = 0;
	}
	return 0;
}

/*
 * Runnable: stamp it, unless it already waits (preempted, then woken) —
 * its wait began then. A wakeup of a running task leaves a stamp its
 * switch-out replaces or clears. A task first seen here is not running,
 * so its CPU time is final: a baseline (0 for a new task: all its time
 * counts).
 */
static __always_inline int
enqueued(struct task_struct *t, bool new_task)
{
	struct sched_task *st;

	if (t->pid == 0)
		return 0;
	/*
	 * rq_sched_info: the kernel stamps the wait; a wakeup only counts.
	 * A new task still gets its storage here, with the baselines its
	 * fork set (CPU time so far, sched_info zeroed), so its first slice
	 * and first wait count.
	 */
	if (rq_sched_info && !new_task) {
		if (rq_enabled)
			tot_add(TOT_WAKEUPS, 1);
		return 0;
	}
	st = bpf_task_storage_get(&sched_task, t, 0,
	    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		tot_add(TOT_NO_STORAGE, 1);
		return 0;
	}
	if (!st->valid) {
		st->sum_ns = t->se.sum_exec_runtime;
		st->valid = 1;
		/* a new task's sched_info: zeroed by its fork */
		st->si_base = rq_sched_info;
	}
	if (rq_enabled) {
		tot_add(TOT_WAKEUPS, 1);
		if (!rq_sched_info && st->wake_ns == 0)
			st->wake_ns = bpf_ktime_get_ns();
	}
	return 0;
}

SEC("tp_btf/sched_wakeup")
int
BPF_PROG(vitals_wakeup, struct task_struct *p)
{
	return enqueued(p, false);
}

SEC("tp_btf/sched_wakeup_new")
int
BPF_PROG(vitals_wakeup_new, struct task_struct *p)
{
	return enqueued(p, true);
}

/*
 * Runs after the task's last switch-out (the final put of the task happens
 * in finish_task_switch, after it), so its entry is complete and no CPU
 * writes it any more. Only the active side is touched: the other one may
 * be in userspace's hands.
 */
SEC("tp_btf/sched_process_free")
int
BPF_PROG(vitals_free, struct task_struct *p)
{
	__u64 gen = current_gen();
	__u32 side = (__u32)(gen & 1);
	struct sched_tid_key key = {
		.tid = p->pid,
		.uid = p->real_cred->uid.val,
		.start_ns = p->start_boottime,
	};
	struct sched_proc_key pkey = { .tgid = p->tgid };
	void *m = tid_map(side);
	struct sched_slot *sl = NULL;
	struct sched_task *st;
	struct sched_tid *v;
	struct sched_proc *pr;
	struct sched_uid *u;
	__u32 idx;

	/*
	 * Its slot of this window, if it has one under its credentials
	 * now: the task's storage is still there (sched_process_free runs
	 * before the last reference goes, which frees it). A slot of an
	 * older window stays for its drain; one made under earlier
	 * credentials (setuid, setgid) too, as a hash entry of an earlier
	 * uid does: a thread row, its time counted once.
	 */
	st = bpf_task_storage_get(&sched_task, p, 0, 0);
	if (st && slot_owned(st, gen, p->real_cred) &&
	    (idx = st->slot_idx) != SCHED_SLOT_HASH)
		sl = bpf_map_lookup_elem(slot_map(side), &idx);
	if (sl) {
		if (sl->flags & SCHED_SLOT_FOLDED)
			sl = NULL; /* folded already: nothing twice */
		v = sl ? &sl->v : NULL;
	} else {
		/* an entry under an earlier uid (setuid) stays for the
		 * drain */
		v = bpf_map_lookup_elem(m, &key);
	}
	if (v) {
		__u64 ns = v->oncpu_ns;

		if ((u = uid_entry(uid_map(side), key.uid)) != NULL) {
			__sync_fetch_and_add(&u->exited_ns, ns);
			__sync_fetch_and_add(&u->exited_tasks, 1);
			if (v->rq_count)
				FOLD_RQ(u, exited_rq_ns, exited_rq_count,
				    exited_rq_hist, v);
		} else {
			tot_add(side ? TOT_LOST_S1 : TOT_LOST_S0, ns);
		}
		/* the leader as it was while the thread ran: by now the
		 * leader's task may be gone */
		pkey.start_ns = v->leader_ns;
		if ((pr = proc_entry(proc_map(side), &pkey)) != NULL) {
			__sync_fetch_and_add(&pr->exited_ns, ns);
			__sync_fetch_and_add(&pr->exited_wtd_ns, v->wtd_ns);
			if (v->rq_count)
				FOLD_RQ(pr, rq_ns, rq_count, rq_hist, v);
		}
		/* a slot cannot be deleted: marked, the drain skips it (a
		 * partial read names its group from it) */
		if (sl) {
			sl->flags |= SCHED_SLOT_FOLDED;
		} else {
			bpf_map_delete_elem(m, &key);
			proc_other(side);
		}
		tot_add(TOT_EXITED, 1);
	}
	/*
	 * The process is over with its leader, once no other thread of it
	 * can still be switched out: every thread holds a reference on the
	 * signal struct until its task is freed, so a count of one (the
	 * leader's) means all others are gone. Its entry is marked, not
	 * deleted: the drain reads its figures (its run-queue histogram
	 * too) into the window it exited in, then deletes it.
	 */
	pkey.start_ns = p->start_boottime;
	if (p->pid == p->tgid && p->signal->sigcnt.refs.counter == 1 &&
	    (pr = proc_entry(proc_map(side), &pkey)) != NULL) {
		pr->flags |= SCHED_PROC_EXITED; /* its only writer */
		/* the leader's slot folded above names the gone process to a
		 * partial read; without one only the process map does */
		if (!sl)
			proc_other(side);
		tot_add(TOT_PROC_EXITED, 1);
	}
	return 0;
}
