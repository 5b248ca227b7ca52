/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF sched_switch accounting: its part of a window and its pure
 * arithmetic (sched_window.c), the loader and the drain (sched.c,
 * sched_drain.c, sched_ldr.c).
 */
#ifndef VITALSD_SCHED_H
#define VITALSD_SCHED_H

#include <stddef.h>

#include "core/util.h"
#include "window/window.h"

/*
 * BPF sched_switch accounting of one window (sched.c drains it,
 * sched_window.c reduces and merges it). The rows are arrays of the part,
 * bounded per window (bpf_procs, bpf_threads); what does not fit is summed
 * into the *_other entries, so totals stay whole.
 */
#define VITALS_BPF_PROCS_DEF 512    /* bpf_procs: processes and uids kept */
#define VITALS_BPF_THREADS_DEF 2048 /* bpf_threads: threads kept */
#define VITALS_BPF_ROWS_MAX 65536   /* either bound's ceiling */
#define VITALS_BPF_RQ_SLOTS \
	24 /* = VITALS_SCHED_RQ_SLOTS (bpf/sched/sched.bpf.h) */
#define VITALS_BPF_PROGS 4

/* Where BPF accounting stands; stored, so values never change meaning. */
enum vbpf_state {
	VBPF_UNKNOWN, /* not reported (older window, no BPF part, counters lost) */
	VBPF_ON_LOADED,	      /* programs loaded and pinned by vitalsd */
	VBPF_ON_REUSED,	      /* pins of an earlier start reused */
	VBPF_ON_PINNED,	      /* pins of the platform loader opened */
	VBPF_OFF_DISABLED,    /* bpf_load = off */
	VBPF_OFF_UNSUPPORTED, /* built without BPF */
	VBPF_OFF_NO_BTF,      /* no kernel BTF */
	VBPF_OFF_NO_BPFFS,    /* the pin directory is not on a bpffs */
	VBPF_OFF_NO_PRIV,     /* no CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN) */
	VBPF_OFF_VERIFIER,    /* the verifier refused a program */
	VBPF_OFF_NO_PINS, /* pinned-only: pins missing or of another layout */
	VBPF_OFF_ERROR,	  /* anything else: see err */
	VBPF_OFF_BUSY,	  /* another vitalsd drains these pins */
	VBPF__MAX
};

struct window_bpf_uid {
	uint32_t uid;
	uint32_t pad;
	uint64_t oncpu_ns;     /* every task of the uid */
	uint64_t exited_ns;    /* part of oncpu_ns from threads that exited */
	uint64_t exited_tasks; /* threads folded at exit */
	/* run-queue delay of its threads (live ones' entries plus what the
	 * exited ones left in the uid's): Σ, number, log2 histogram */
	uint64_t rq_ns, rq_count;
	uint32_t rq_hist[VITALS_BPF_RQ_SLOTS];
};

#define WBPF_PROC_EXITED 1u /* its last task was freed in the window */

struct window_bpf_proc {
	int32_t tgid;		  /* −1: the "other" entry */
	uint32_t flags;		  /* WBPF_PROC_* */
	uint64_t starttime;	  /* ticks, as /proc/<pid>/stat field 22 */
	uint64_t oncpu_ns;	  /* its threads, the exited ones included */
	uint64_t rq_ns, rq_count; /* run-queue delay: Σ and number */
	uint32_t rq_hist[VITALS_BPF_RQ_SLOTS]; /* slot k: [2^k, 2^(k+1)) µs */
};

/* A thread: its own on-CPU time and run-queue waits. */
struct window_bpf_thread {
	int32_t tid;  /* −1: the "other" entry */
	int32_t tgid; /* its process */
	uint32_t uid; /* the uid it last ran as */
	uint32_t pad;
	uint64_t starttime; /* the thread's, ticks as /proc/<pid>/task/<tid> */
	uint64_t oncpu_ns;
	uint64_t rq_ns, rq_count;
	uint32_t rq_hist[VITALS_BPF_RQ_SLOTS]; /* as window_bpf_proc's */
};

struct window_bpf {
	uint32_t state;		      /* enum vbpf_state at close */
	int32_t err;		      /* −errno behind an OFF state, 0 none */
	uint32_t drains;	      /* drains summed into this window */
	uint32_t drain_fail;	      /* drains that did not complete */
	uint32_t counter_regressions; /* kernel totals that went backwards */
	uint64_t drain_ns; /* time spent draining (flip, wait, read) */
	uint64_t entries;  /* map entries read */
	/* Σ over every uid (on-CPU) and every process (run queue) */
	uint64_t oncpu_ns, exited_ns, exited_tasks, rq_ns, rq_count;
	uint64_t pre_ns; /* on-CPU ns accounted before the daemon started */
	/* Δ of the kernel's cumulative counters over the window */
	uint64_t switches, no_slice, wakeups;
	uint64_t lost_ns; /* ns no uid entry could take (map full) */
	uint64_t full_tid, full_proc, full_uid; /* failed inserts per map */
	uint64_t no_storage;
	/* read-only drains (the platform loader's pins, sched_ldr.c): the
	 * window is a difference of two snapshots of running totals */
	uint32_t diff_drains;	 /* drains made that way */
	int64_t unattributed_ns; /* Δ on-CPU total − Σ attributed Δ */
	uint64_t evicted;	 /* live entries the kernel evicted (LRU) */
	uint64_t recreated; /* entries made anew or counters gone backwards:
			     * the new value taken as the delta */
	uint64_t retired;   /* dead entries aged out (nothing lost) */
	bool stats;	    /* prog_* are valid (bpf_stats = on) */
	uint64_t prog_runs[VITALS_BPF_PROGS], prog_ns[VITALS_BPF_PROGS];
	uint32_t nuids, uids_other;	 /* kept; folded into uid_other */
	struct window_bpf_uid uid_other; /* uid UINT32_MAX */
	uint32_t nprocs, procs_other;
	struct window_bpf_proc proc_other;
	/* Kernel loss and event counters, Δ over the window (TOT_*) */
	uint64_t rq_samples;   /* waits measured (the drained sides' rq_count
				* plus those full_proc dropped) */
	uint64_t thr_exited;   /* thread entries folded at free */
	uint64_t procs_exited; /* processes whose last task was freed */
	uint64_t oncpu_total;  /* ns accounted (Σ sides): the exactness
				* check's right-hand side */
	/* bounds: rows kept (0: VITALS_BPF_*_DEF), from bpf_procs and
	 * bpf_threads; a merge keeps the larger */
	uint32_t max_procs, max_threads;
	uint32_t nthreads, threads_other;
	struct window_bpf_thread thread_other;
	uint64_t rq_notid; /* waits no thread entry took (TOT_RQ_NOTID, Δ):
			    * in the processes' figures, not the threads' or
			    * uids' */
	/* layout 11's array slots (doc/bpf.md "Array slots"), Σ over the
	 * window's drains: thread rows read from slots, slots the drained
	 * sides took (their counts, up to the capacity), thread rows read
	 * from the sched_tid hash, threads that went to the hash because
	 * their side's slots were all taken (count − capacity), drains whose
	 * side was full (count ≥ capacity: no kernel counter, derived), and
	 * the capacity per side (0: no slots, e.g. read-only drains) */
	uint64_t slot_rows, slots_taken, slot_hash_rows, slot_overflow;
	uint32_t slot_full_drains, slot_cap;
	/* where the drains' run-queue waits came from (enum vbpf_rq;
	 * VBPF_RQ_UNKNOWN in a window stored before it was kept) */
	uint32_t rq_source;
	/* The rows: arrays of nuids, nprocs, nthreads (NULL when 0), owned
	 * by the part. head_only: a part that never held rows (BPF off). */
	bool head_only;
	struct window_bpf_uid *uid;
	struct window_bpf_proc *proc;
	struct window_bpf_thread *thread;
};

#define WINDOW_BPF_HEAD sizeof(struct window_bpf)

/* The sched part of w (window_parts[WPART_SCHED]), NULL: none (the window
 * has no BPF state: VBPF_UNKNOWN). */
static inline struct window_bpf *
window_sched(const struct window *w)
{
	return (struct window_bpf *)window_part(w, WPART_SCHED);
}

/* ------------------------------------------------- sched_window.c, sched.c */

#define VITALS_BPF_TOT 17 /* = TOT__MAX of bpf/sched/sched.bpf.h */
/* = TOT_WTD_NOCAP, TOT_WTD_NOFREQ: ns weighted as 1024 (wcpu/wcpu.h) */
#define VBPF_TOT_WTD_NOCAP 14
#define VBPF_TOT_WTD_NOFREQ 15
#define VBPF_TOT_RQ_NOTID 16 /* = TOT_RQ_NOTID */

/* bpf_load: who loads the programs. */
enum vbpf_load {
	VBPF_LOAD_AUTO,	       /* reuse matching pins, else load and pin */
	VBPF_LOAD_PINNED_ONLY, /* open pins only (Android's bpfloader) */
	VBPF_LOAD_OFF,	       /* procfs only */
};

/* One drained side's entries (bpf/sched/sched.bpf.h says what each holds). */
struct vbpf_tid {
	int32_t tid, tgid;
	uint32_t uid, pad;  /* the uid it ran as */
	uint64_t start_ns;  /* task->start_boottime */
	uint64_t leader_ns; /* its group leader's */
	uint64_t oncpu_ns;
	uint64_t rq_ns, rq_count; /* its own waits (0: not measured) */
	uint64_t wtd_ns;	  /* capacity-weighted oncpu_ns (wcpu/wcpu.h) */
	uint32_t rq_hist[VITALS_BPF_RQ_SLOTS];
};

struct vbpf_proc {
	int32_t tgid;
	uint32_t flags;	    /* WBPF_PROC_EXITED */
	uint64_t start_ns;  /* the group leader's start_boottime */
	uint64_t exited_ns; /* of its threads that exited */
	uint64_t rq_ns, rq_count;
	uint32_t rq_hist[VITALS_BPF_RQ_SLOTS];
	uint64_t exited_wtd_ns; /* capacity-weighted exited_ns */
};

struct vbpf_uid {
	uint32_t uid, pad;
	uint64_t exited_ns, exited_tasks;
	uint64_t overflow_ns; /* slices no thread entry could take */
	uint64_t exited_rq_ns, exited_rq_count; /* its exited threads' waits */
	uint32_t exited_rq_hist[VITALS_BPF_RQ_SLOTS];
};

/* What one drain read: the arrays are reused from drain to drain. */
struct bpf_sched_batch {
	uint64_t gen;	 /* the generation that was drained */
	unsigned side;	 /* gen & 1 */
	bool incomplete; /* a map read failed half-way: the rest stays in
			  * the kernel and comes with a later drain */
	size_t ntids, nprocs, nuids;
	size_t tids_cap, procs_cap, uids_cap;
	struct vbpf_tid *tids;
	struct vbpf_proc *procs;
	struct vbpf_uid *uids;
	uint64_t tot[VITALS_BPF_TOT]; /* cumulative counters, Σ CPUs */
	uint64_t drain_ns;
	/* layout 11: thread rows read from array slots (the rest from the
	 * hash), and the side's allocation count (past the capacity: that
	 * many threads went to the hash) */
	uint32_t slots, slot_count;
	/* a read-only drain (sched_ldr.c): what the diff could not attribute */
	bool diff;
	int64_t unattributed_ns;
	uint64_t evicted, recreated, retired;
};

/* Where a window's run-queue waits came from (doc/bpf.md "Run-queue
 * waits"). */
enum vbpf_rq {
	VBPF_RQ_UNKNOWN,    /* no drain said (a stored window, BPF off) */
	VBPF_RQ_WAKEUP,	    /* stamps at wakeups, measured at switch-ins */
	VBPF_RQ_SCHED_INFO, /* the kernel's sched_info, at switch-outs */
	VBPF_RQ_MIXED,	    /* drains of both (a roll-up across restarts) */
};
const char *vbpf_rq_name(unsigned rq);

struct bpf_sched_opts {
	const char *bpffs;    /* pin directory, created if missing */
	const char *sys_root; /* <sys_root>/kernel/btf/vmlinux */
	unsigned load;	      /* enum vbpf_load */
	bool rq;	      /* measure run-queue delay */
	unsigned rq_source;   /* enum vbpf_rq: VBPF_RQ_SCHED_INFO, the
			       * kernel's sched_info where it keeps it
			       * (sched.bpf.c rq_sched_info); else the
			       * wakeup stamps */
	bool test_reject;     /* tests: make the verifier refuse a program */
	unsigned slot_cap;    /* tests: array slots used per side (0: all) */
	/* pinned-only with the platform loader's pins (sched_ldr.c): */
	const char *tracefs;   /* tracepoint ids; NULL: the usual mounts */
	const char *proc_root; /* processes' start times; NULL: /proc */
	const char *instance;  /* tracefs instance to read tracepoint ids in */
};

struct vbpf_prog_stat {
	uint32_t id; /* 0: no program fd (pins of another loader) */
	uint64_t run_cnt, run_ns, misses;
};

struct bpf_sched;

/* sched_window.c: pure */
const char *vbpf_state_name(unsigned st);
bool vbpf_state_on(unsigned st);
const char *vbpf_prog_name(unsigned i);
int window_bpf_add(struct window_bpf *wb, const struct bpf_sched_batch *b,
    unsigned hz);
int window_bpf_merge(struct window_bpf *acc, const struct window_bpf *src);
/* one drain's array-slot figures into wb; cap: slots a side (0: none) */
void window_bpf_slots(struct window_bpf *wb, const struct bpf_sched_batch *b,
    uint32_t cap);
/* Free wb's rows (a part on the stack, tests); wb stays a head. */
void window_bpf_release(struct window_bpf *wb);
/* Room for n more rows of each kind; 0 or -ENOMEM. */
int window_bpf_reserve(struct window_bpf *wb, size_t nu, size_t np, size_t nt);
uint64_t window_bpf_rq_quantile_ns(const uint32_t hist[VITALS_BPF_RQ_SLOTS],
    double q);
/* w's sched part, made when it has none; rows: with room for rows (a head
 * grows). NULL: no memory. */
struct window_bpf *window_sched_make(struct window *w, bool rows);
/* A part that kept no rows gives their room back. */
void window_sched_trim(struct window *w);
/* its operations for window.c, rollup.c and dump.c */
extern const struct window_part_ops sched_window_part;

/* sched.c (the loader), sched_drain.c (the drain); -EOPNOTSUPP without
 * BPF */
int bpf_sched_open(const struct bpf_sched_opts *o, struct bpf_sched **ret,
    unsigned *ret_state, char *why, size_t whysz);
struct bpf_sched *bpf_sched_free(struct bpf_sched *bs);
/* heap bytes the reader holds between drains (Health.memory) */
uint64_t bpf_sched_bytes(const struct bpf_sched *bs);
/* the maps partial process samples read; -EOPNOTSUPP: none of ours */
int bpf_sched_event_fds(const struct bpf_sched *bs, int *ret_ctl, int *ret_tot,
    int ret_tid[2], int ret_proc[2], int ret_slot[2], int *ret_nslot);
/* the array slots per side the programs use (0: none, or not ours) */
unsigned bpf_sched_slot_cap(const struct bpf_sched *bs);
/* enum vbpf_rq of the programs running (VBPF_RQ_UNKNOWN: none) */
unsigned bpf_sched_rq(const struct bpf_sched *bs);
void bpf_sched_set_stats(struct bpf_sched *bs, bool on);
int bpf_sched_drain(struct bpf_sched *bs, struct bpf_sched_batch *b);
void bpf_sched_batch_release(struct bpf_sched_batch *b);
int bpf_sched_window(struct bpf_sched *bs, struct window_bpf *wb, unsigned hz);
/* bpf_sched_drain in two: the flip (the window's edge, on the loop), then
 * the grace period and the reads (any one thread); bpf_sched_window in two:
 * that drain, then the reduction into wb on the loop. */
int bpf_sched_flip(struct bpf_sched *bs);
/* The flip made ahead of a window's close, right before its last sample's
 * process scan (doc/bpf.md, "Full walks"): the close's bpf_sched_flip is
 * then that one, not another. 0 once flipped (or already); -EOPNOTSUPP:
 * read-only pins, no sides. */
int bpf_sched_flip_early(struct bpf_sched *bs);
int bpf_sched_collect(struct bpf_sched *bs, struct bpf_sched_batch *b);
int bpf_sched_window_reduce(struct bpf_sched *bs, struct window_bpf *wb,
    unsigned hz, int drained);
/* sched_async.c: bpf_sched_collect on a thread of its own, its end told
 * through an eventfd the loop watches */
struct bpf_sched_async;
int bpf_sched_async_new(struct bpf_sched *bs, struct bpf_sched_async **ret);
struct bpf_sched_async *bpf_sched_async_free(struct bpf_sched_async *a);
int bpf_sched_async_fd(const struct bpf_sched_async *a);
struct window_bpf;
int bpf_sched_async_reduce_into(struct bpf_sched_async *a,
    struct window_bpf *wb, unsigned hz);
typedef void (*bpf_sched_after_fn)(void *arg, struct bpf_sched *bs,
    struct window_bpf *wb, unsigned hz);
int bpf_sched_async_after(struct bpf_sched_async *a, bpf_sched_after_fn fn,
    void *arg);
int bpf_sched_async_start(struct bpf_sched_async *a);
bool bpf_sched_async_busy(const struct bpf_sched_async *a);
int bpf_sched_async_done(struct bpf_sched_async *a, bool wait, int *ret_r);
int bpf_sched_prog_stats(struct bpf_sched *bs,
    struct vbpf_prog_stat ret[VITALS_BPF_PROGS]);
int bpf_sched_totals(struct bpf_sched *bs, uint64_t ret[VITALS_BPF_TOT]);
int bpf_sched_unpin(const char *bpffs);
/* Each CPU's capacity and frequency scale (1024 = 1, 0 unknown) into the
 * kernel's weighting (sched_scale); -EOPNOTSUPP: read-only pins or no
 * BPF. */
int bpf_sched_set_scale(struct bpf_sched *bs, const uint32_t *cap,
    const uint32_t *freq, unsigned n);
/* What the last drain read (valid until the next one), NULL without BPF. */
const struct bpf_sched_batch *bpf_sched_last_batch(const struct bpf_sched *bs);
/* the last batch's rows freed after the window took them */
void bpf_sched_batch_trim(struct bpf_sched *bs);
/* The batch drains fill (bpf_sched_collect's b on another thread). */
struct bpf_sched_batch *bpf_sched_batch_of(struct bpf_sched *bs);
/* The drain waits for a grace period (own maps); false for the platform
 * loader's read-only pins, whose snapshot is the window's edge itself. */
bool bpf_sched_needs_grace(const struct bpf_sched *bs);

#endif /* VITALSD_SCHED_H */
