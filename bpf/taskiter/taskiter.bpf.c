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
#include "../sched/sched.bpf.h"

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

/* One task's record, as /proc/<pid>/task/<tid>/stat's fields and, for a
 * leader, the group's (TASKITER_F_LEADER). */
static __always_inline void
fill_rec(struct task_struct *task, struct taskiter_rec *r)
{
	struct signal_struct *sig;
	struct mm_struct *mm;

	r->magic = TASKITER_MAGIC;
	r->tgid = task->tgid;
	r->tid = task->pid;
	r->uid = task->real_cred->uid.val;
	__builtin_memcpy(r->comm, task->comm, sizeof(r->comm));
	r->start_ns = task->start_boottime;
	r->start_ticks = r->start_ns * ticks_mul / ticks_div;
	r->utime_ns = task->utime;
	r->stime_ns = task->stime;
	r->runtime_ns = task->se.sum_exec_runtime;
	r->min_flt = task->min_flt;
	r->maj_flt = task->maj_flt;
	if (task->flags & PF_KTHREAD)
		r->flags |= TASKITER_F_KTHREAD;
	/* Without prev_cputime (VIRT_CPU_ACCOUNTING_NATIVE) /proc does not
	 * scale: the raw figures are already precise. */
	if (bpf_core_field_exists(task->prev_cputime)) {
		r->flags |= TASKITER_F_ADJUST;
		r->prev_utime_ns = task->prev_cputime.utime;
		r->prev_stime_ns = task->prev_cputime.stime;
	}

	if (r->tid == r->tgid) {
		r->flags |= TASKITER_F_LEADER;
		mm = task->mm;
		if (mm != NULL) {
			r->flags |= TASKITER_F_MM;
			r->rss_pages = mm_rss(mm, &r->flags);
		}
		sig = task->signal;
		if (sig != NULL) {
			r->sig_utime_ns = sig->utime;
			r->sig_stime_ns = sig->stime;
			r->sig_runtime_ns = sig->sum_sched_runtime;
			r->sig_min_flt = sig->min_flt;
			r->sig_maj_flt = sig->maj_flt;
			if (bpf_core_field_exists(sig->prev_cputime)) {
				r->sig_prev_utime_ns = sig->prev_cputime.utime;
				r->sig_prev_stime_ns = sig->prev_cputime.stime;
			}
		}
	}
}

SEC("iter/task")
int
taskiter_dump(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct taskiter_rec r = {};

	if (task == NULL) {
		/* The walk is complete: the end record tells a reader the
		 * stream is whole. */
		r.magic = TASKITER_MAGIC_END;
		r.tid = (__s32)ctx->meta->seq_num;
		bpf_seq_write(seq, &r, sizeof(r));
		return 0;
	}
	fill_rec(task, &r);
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}

/*
 * ---------------------------------------------------------------------
 * Partial samples (doc/bpf.md, "Event-driven samples"): the thread groups
 * the sched accounting saw run or lose a thread since the window's flip,
 * each whole, read from the group itself. A BPF_PROG_TYPE_SYSCALL program
 * the reader runs (BPF_PROG_TEST_RUN): it walks the live side's process
 * and thread maps (bpf_for_each_map_elem) and writes the same records as
 * the walk into taskiter_out, which the reader maps. (An iter/bpf_map_elem
 * program would have streamed them, but kernels refuse to load one here.)
 * Loaded only with that accounting's maps (every sched_* map here reuses
 * its fd), on kernels with the task kfuncs (6.7: the open-coded thread
 * iterator in a sleepable program).
 */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;
extern void bpf_rcu_read_lock(void) __ksym __weak;
extern void bpf_rcu_read_unlock(void) __ksym __weak;
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
    unsigned int flags) __ksym __weak;
extern struct task_struct *bpf_iter_task_next(
    struct bpf_iter_task *it) __ksym __weak;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym __weak;

/* CPUs whose sched_tot slots are summed (libbpf_num_possible_cpus()) */
const volatile __u32 ncpu = 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_ctl);
} sched_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TOT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} sched_tot SEC(".maps");

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

TID_MAP(sched_tid0);
TID_MAP(sched_tid1);
PROC_MAP(sched_proc0);
PROC_MAP(sched_proc1);

/* layout 11: the threads' array slots and their counts per side */
SCHED_SLOT_MAPS; /* sched.bpf.h */

/* The records of one partial read, then its end record; the reader maps
 * it (taskiter.bpf.h: TASKITER_OUT_MAX). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TASKITER_OUT_MAX + 1);
	__type(key, __u32);
	__type(value, struct taskiter_rec);
} taskiter_out SEC(".maps");

/*
 * The groups this read wrote: an open-addressing table of tgids tagged
 * with the read's number (serial), so nothing is cleared between reads.
 * At most TASKITER_OUT_MAX groups per read fill it half at most; a group
 * whose probes all find other groups of this read is left out (nostore).
 */
#define SEEN_SLOTS (2 * TASKITER_OUT_MAX)
#define SEEN_PROBES 16
__u32 seen_tgid[SEEN_SLOTS];
__u32 seen_serial[SEEN_SLOTS];

/* The read's number; records written; groups left out (no room, no mark:
 * the reader treats the read as doubtful). */
__u32 serial;
__u32 nout;
__u64 nostore;

/* 1: tgid already written by this read; 0: not, *slot is where to mark
 * it; -1: no slot left. */
static __always_inline int
seen_probe(__u32 tgid, __u32 *slot)
{
	__u32 h = (tgid * 2654435761u) >> 18, i, k;

	for (i = 0; i < SEEN_PROBES; i++) {
		k = (h + i) & (SEEN_SLOTS - 1);
		if (seen_serial[k] != serial) {
			*slot = k;
			return 0;
		}
		if (seen_tgid[k] == tgid)
			return 1;
	}
	return -1;
}

/* The next free slot of taskiter_out, zeroed; NULL: full. */
static __always_inline struct taskiter_rec *
out_slot(void)
{
	struct taskiter_rec *r;
	__u32 i = nout;

	if (i >= TASKITER_OUT_MAX)
		return NULL;
	r = bpf_map_lookup_elem(&taskiter_out, &i);
	if (r != NULL) {
		__builtin_memset(r, 0, sizeof(*r));
		nout = i + 1;
	}
	return r;
}

/* A process instance (tgid, its leader's start) wholly gone. */
static __always_inline void
emit_gone(__u32 tgid, __u64 leader_ns)
{
	struct taskiter_rec *r = out_slot();

	if (r == NULL) {
		nostore++;
		return;
	}
	r->magic = TASKITER_MAGIC_GONE;
	r->tgid = (__s32)tgid;
	r->tid = (__s32)tgid;
	r->start_ns = leader_ns;
	r->start_ticks = leader_ns * ticks_mul / ticks_div;
}

/*
 * Write tgid's group unless this read already did; leader_ns tells a
 * reused tgid from the group the entry was made by. No such leader: the
 * instance is gone (a group's leader stays, a zombie, while any thread of
 * it lives; an exec by another thread hands over its start), said so when
 * gone is set (a map entry's instance), else left to the maps (a task seen
 * on a CPU a moment before).
 */
static __always_inline void
emit_group(__u32 tgid, __u64 leader_ns, bool gone)
{
	struct task_struct *leader, *t;
	struct bpf_iter_task it;
	__u32 slot = 0;
	int seen;

	if ((seen = seen_probe(tgid, &slot)) > 0)
		return;
	if (seen < 0) {
		nostore++;
		return;
	}
	leader = bpf_task_from_pid((s32)tgid);
	if (leader == NULL) {
		if (gone)
			emit_gone(tgid, leader_ns);
		return;
	}
	if (leader->start_boottime != leader_ns ||
	    leader->pid != leader->tgid) {
		if (gone)
			emit_gone(tgid, leader_ns);
		goto out;
	}
	/* marked once written: a gone instance's tgid may be a live one's */
	slot &= SEEN_SLOTS - 1;
	seen_serial[slot] = serial;
	seen_tgid[slot] = tgid;
	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, leader, BPF_TASK_ITER_PROC_THREADS);
	while ((t = bpf_iter_task_next(&it)) != NULL) {
		struct taskiter_rec *r = out_slot();

		if (r == NULL) {
			nostore++;
			break;
		}
		fill_rec(t, r);
	}
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
out:
	bpf_task_release(leader);
}

/* Over sched_tid<side>: the groups with a thread that ran. */
static long
tid_cb(void *map, struct sched_tid_key *k, struct sched_tid *v, void *arg)
{
	(void)map;
	(void)k;
	(void)arg;
	emit_group(v->tgid, v->leader_ns, true);
	return 0;
}

/*
 * Over the slots [0, count) of a side (layout 11): the groups with a
 * thread that ran, as tid_cb for the hash. A slot counts only when its
 * ready word is the side's generation + 1 (one being filled, or left from
 * an older window of the side, is not). A folded one's thread was freed:
 * its group is written whole (the thread it lost) or, gone, said so, as
 * proc_cb does for the process entry the fold made — since layout 12 the
 * slot names it, and the process map is walked only for what no slot
 * names (sched_nslot.proc_other).
 */
struct slot_ctx {
	__u32 side;
	__u64 tag;
};

static long
slot_cb(__u32 i, void *arg)
{
	struct slot_ctx *c = arg;
	struct sched_slot *sl;

	if (c->side)
		sl = bpf_map_lookup_elem(&sched_slot1, &i);
	else
		sl = bpf_map_lookup_elem(&sched_slot0, &i);
	if (sl == NULL)
		return 1;
	if (sl->ready != c->tag)
		return 0;
	barrier(); /* the identity read after ready */
	emit_group(sl->v.tgid, sl->v.leader_ns, true);
	return 0;
}

/* The side's slot count now (0: none to read). */
static __always_inline __u32
slot_count(__u32 side)
{
	struct sched_nslot *ns = bpf_map_lookup_elem(&sched_nslot, &side);

	return ns ? ns->count : 0;
}

/* The side's process-map changes no slot names, so far (layout 12). */
static __always_inline __u32
proc_other_now(__u32 side)
{
	struct sched_nslot *ns = bpf_map_lookup_elem(&sched_nslot, &side);

	return ns ? ns->proc_other : 0;
}

/* The side's slots [0, min(n, capacity)) of its latest generation. */
static __always_inline void
walk_slots(__u32 side, __u32 n)
{
	struct slot_ctx c = { .side = side };
	struct sched_ctl *ctl;
	__u32 zero = 0;
	__u64 gen;

	ctl = bpf_map_lookup_elem(&sched_ctl, &zero);
	if (ctl == NULL)
		return;
	gen = ctl->gen;
	/* the side's latest generation: the live one, or the one before */
	if ((gen & 1) != side) {
		if (gen == 0)
			return; /* never live yet */
		gen--;
	}
	c.tag = gen + 1;
	if (n > VITALS_SCHED_SLOTS)
		n = VITALS_SCHED_SLOTS;
	bpf_loop(n, slot_cb, &c, 0);
}

/* Over sched_proc<side>: a process marked exited is gone (its record says
 * which instance); any other entry was made by a thread of it that was
 * freed, so its group is written whole (the threads it lost), or is gone. */
static long
proc_cb(void *map, struct sched_proc_key *k, struct sched_proc *v, void *arg)
{
	(void)map;
	(void)arg;
	if (v->flags & SCHED_PROC_EXITED)
		emit_gone(k->tgid, k->start_ns);
	else
		emit_group(k->tgid, k->start_ns, true);
	return 0;
}

/*
 * Over every CPU: the group of the task running there now. A task that
 * has run since the flip without switching out (a CPU-bound task alone on
 * its CPU) has no thread-map entry yet, yet it is its runqueue's curr; so
 * every task that ran since the flip is in the thread map or on a CPU
 * (doc/bpf.md). The per-CPU `runqueues` is a data symbol, which a kernel
 * without CONFIG_KALLSYMS_ALL cannot resolve for BPF; each CPU's rq is
 * reached instead through a task group's per-CPU queues (the reader's:
 * tg->cfs_rq[cpu]->rq, CONFIG_FAIR_GROUP_SCHED), read with probe reads
 * under the RCU read lock (a group and rq->curr are freed only after a
 * grace period: sched_free_group_rcu, put_task_struct_rcu_user). Only the
 * identity (tgid, leader start) is kept; the group is taken again by pid.
 * Returns the CPUs read, or -1 when no CPU's queue can be reached.
 */
#define CURR_CPUS 1024
__u32 curr_tgid[CURR_CPUS];
__u64 curr_leader_ns[CURR_CPUS];
__u64 curr_groups; /* groups named by a CPU's curr, over all reads */

static __always_inline int
read_curr(__s32 self)
{
	struct task_struct *me, *c, *lead;
	struct cfs_rq **queues = NULL, *q;
	struct task_group *tg;
	struct rq *rq;
	__u32 cpu, n = ncpu < CURR_CPUS ? ncpu : CURR_CPUS;
	int got = 0;

	if (!bpf_core_field_exists(struct cfs_rq, rq) ||
	    !bpf_core_field_exists(struct sched_entity, cfs_rq))
		return -1;
	if ((me = bpf_task_from_pid(self)) == NULL)
		return -1;
	bpf_rcu_read_lock();
	tg = BPF_CORE_READ(me, se.cfs_rq, tg);
	if (tg != NULL)
		queues = BPF_CORE_READ(tg, cfs_rq);
	for (cpu = 0; cpu < n && queues != NULL; cpu++) {
		curr_tgid[cpu] = 0;
		q = NULL;
		if (bpf_probe_read_kernel(&q, sizeof(q), &queues[cpu]) < 0 ||
		    q == NULL)
			continue;
		rq = BPF_CORE_READ(q, rq);
		c = BPF_CORE_READ(rq, curr);
		if (c == NULL)
			continue;
		got++;
		if (BPF_CORE_READ(c, pid) == 0) /* the idle task */
			continue;
		lead = BPF_CORE_READ(c, group_leader);
		curr_tgid[cpu] = (__u32)BPF_CORE_READ(c, tgid);
		curr_leader_ns[cpu] = BPF_CORE_READ(lead, start_boottime);
	}
	bpf_rcu_read_unlock();
	bpf_task_release(me);
	return got > 0 ? got : -1;
}

static long
curr_cpu(__u32 cpu, void *arg)
{
	(void)arg;
	if (cpu >= CURR_CPUS)
		return 1;
	if (curr_tgid[cpu] != 0) {
		curr_groups++;
		emit_group(curr_tgid[cpu], curr_leader_ns[cpu], false);
	}
	return 0;
}

/* The counters that say an entry may be missing from the live side: the
 * tid or process map full, no task storage, a slice without a baseline,
 * time lost. Their sum only grows; a change since the last full walk
 * makes the reader walk in full. */
struct doubt_ctx {
	__u64 sum;
};

static long
doubt_cpu(__u32 cpu, void *arg)
{
	__u32 idx[] = { TOT_TID_FULL, TOT_PROC_FULL, TOT_NO_STORAGE,
		TOT_NO_SLICE, TOT_LOST_S0, TOT_LOST_S1 };
	struct doubt_ctx *d = arg;
	__u32 i;

	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		__u64 *v = bpf_map_lookup_percpu_elem(&sched_tot, &idx[i], cpu);

		if (v)
			d->sum += *v;
	}
	return 0;
}

/*
 * Threads folded and processes marked exited so far (all CPUs): the
 * process map changes only with them (or when the thread map is full, a
 * doubt), so a read that finds the sum as the last one left it skips that
 * map's walk — a cold walk over its buckets. Read before the walk: a
 * thread freed after it is counted, so walked, next time.
 */
__u64 last_exits;

static long
exits_cpu(__u32 cpu, void *arg)
{
	__u32 idx[] = { TOT_EXITED, TOT_PROC_EXITED };
	struct doubt_ctx *d = arg;
	__u32 i;

	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		__u64 *v = bpf_map_lookup_percpu_elem(&sched_tot, &idx[i], cpu);

		if (v)
			d->sum += *v;
	}
	return 0;
}

/* The reader's argument (BPF_PROG_TEST_RUN's ctx_in). */
struct taskiter_args {
	__u32 side;  /* the live side, as the reader last knew it */
	__u32 procs; /* walk the process map whatever the counters say */
	__s32 self;  /* the reader's thread (alive while this runs) */
	/* TASKITER_ARG_*: both sides (a window close read right after the
	 * flip), and the tests' switches of the two paths */
	__u32 flags;
};

/*
 * The slots a side's threads took (sched_nslot[side].count, the slots'
 * capacity): a thread goes to the hash only after its fetch-add of the
 * count returned the capacity or more, so while the count is at most the
 * capacity no thread of the side's window is in sched_tid<side> (doc/bpf.md,
 * "Event-driven samples": the hash skip). 0: not known, the hash is always
 * walked. Set by the reader from the sched accounting's own setting.
 */
const volatile __u32 slot_cap = 0;

/* Reads that walked a thread hash, and that skipped one (all reads). */
__u64 hash_walks;
__u64 hash_skips;
/* Process maps walked (all reads); each side's proc_other as its last
 * walk read it. */
__u64 proc_walks;
__u32 last_other[2];

static __always_inline void
walk_tid(__u32 side)
{
	hash_walks++;
	if (side)
		bpf_for_each_map_elem(&sched_tid1, tid_cb, NULL, 0);
	else
		bpf_for_each_map_elem(&sched_tid0, tid_cb, NULL, 0);
}

/*
 * One side's maps: the process map when it holds what no slot names,
 * then the thread hash when some thread can be in it, then the slots.
 *
 * The process map: with the slots' capacity known (slot_cap), when the
 * side's proc_other moved since this reader's last walk of that map, or
 * when procs (the first read after a full walk); the counter is read
 * before the walk, so a change after it moves it again for the next read.
 * A thread folded from a slot, and a process whose leader's slot is folded
 * with its exit mark, are named by the slot walk (slot_cb), the rest
 * counted in proc_other by the sched programs. Without slot_cap, when
 * exits (threads folded or processes marked since the last read) or procs.
 *
 * The thread hash: the count is read before the hash and again for the
 * slots: a thread sent to the hash between the two reads is walked too
 * (after the slots), so the hash is skipped only when the count says, at
 * the slots' read, that no thread went there; one sent later switched out
 * after that read, as an insert behind the walk's bucket would be.
 */
static __always_inline void
walk_side(__u32 side, bool procs, bool exits)
{
	__u32 n0, n1, other;
	bool walked;

	side &= 1;
	if (slot_cap != 0) {
		other = proc_other_now(side);
		procs = procs || other != last_other[side];
		if (procs)
			last_other[side] = other;
	} else {
		procs = procs || exits;
	}
	if (procs) {
		proc_walks++;
		if (side)
			bpf_for_each_map_elem(&sched_proc1, proc_cb, NULL, 0);
		else
			bpf_for_each_map_elem(&sched_proc0, proc_cb, NULL, 0);
	}
	n0 = slot_count(side);
	walked = slot_cap == 0 || n0 > slot_cap;
	if (walked)
		walk_tid(side);
	n1 = slot_count(side);
	walk_slots(side, n1);
	if (!walked && n1 > slot_cap)
		walk_tid(side);
	else if (!walked)
		hash_skips++;
}

/*
 * One partial read: the gone and the groups that lost a thread, then the
 * groups that ran, then the end record at taskiter_out[nout]: the
 * generation (start_ns), the doubt counters' sum (utime_ns), groups left
 * out so far (stime_ns), thread hashes walked and skipped so far
 * (runtime_ns, min_flt), process maps walked so far (maj_flt). Returns the records written.
 */
SEC("syscall")
int
taskiter_partial(struct taskiter_args *args)
{
	struct doubt_ctx d = { 0 }, ex = { 0 };
	struct taskiter_rec *end;
	struct sched_ctl *ctl;
	/* the context read once: a pointer into it moved is refused */
	__u32 zero = 0, side = args->side, flags = args->flags, i;
	int ncurr;
	bool procs = args->procs != 0, exits = false;

	serial++;
	nout = 0;
	if (slot_cap == 0) {
		bpf_loop(ncpu, exits_cpu, &ex, 0);
		exits = ex.sum != last_exits;
		last_exits = ex.sum;
	}
	if (!(flags & TASKITER_ARG_NO_MAPS)) {
		walk_side(side, procs, exits);
		/* a close read after the flip: the old side holds the window
		 * up to the flip, the new one what ran since */
		if (flags & TASKITER_ARG_BOTH)
			walk_side(side + 1, procs, exits);
	}
	/* after the maps: a task that switched out meanwhile is in one */
	if (!(flags & TASKITER_ARG_NO_CPUS) &&
	    (ncurr = read_curr(args->self)) > 0)
		bpf_loop(ncpu, curr_cpu, NULL, 0);
	else
		nostore++; /* cannot see what runs: the read is doubtful */
	bpf_loop(ncpu, doubt_cpu, &d, 0);
	i = nout;
	if (i > TASKITER_OUT_MAX)
		return -1;
	end = bpf_map_lookup_elem(&taskiter_out, &i);
	if (end == NULL)
		return -1;
	__builtin_memset(end, 0, sizeof(*end));
	end->magic = TASKITER_MAGIC_END;
	end->tid = (__s32)i;
	end->utime_ns = d.sum;
	end->stime_ns = nostore;
	end->runtime_ns = hash_walks;
	end->min_flt = hash_skips;
	end->maj_flt = proc_walks;
	ctl = bpf_map_lookup_elem(&sched_ctl, &zero);
	end->start_ns = ctl ? ctl->gen : ~0ULL;
	return (int)i;
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
