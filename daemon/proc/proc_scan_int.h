/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process scan's state (proc_scan.c), shared with what reads it
 * without scanning (proc_scan_view.c). Private to daemon/proc/.
 */
#ifndef VITALSD_PROC_SCAN_INT_H
#define VITALSD_PROC_SCAN_INT_H

#include <dirent.h>

#include "core/util.h"
#include "proc/proc.h"
#include "taskiter/taskiter.h"
#include "window/window.h"

/*
 * A task's struct window_task without its name (128 bytes a thread would
 * hold only to repeat its comm; a process's is kept apart, struct task's
 * name): the identity and this window's accumulators, the same fields
 * under the same names. task_row() makes the window's row of it: a field
 * added to one is added to the other and copied there.
 */
struct task_wt {
	int32_t id;
	int32_t tgid;
	uint64_t starttime;
	uint32_t uid;
	uint32_t samples; /* beside uid: no padding */
	char comm[VITALS_COMM_LEN];
	uint64_t d_utime, d_stime;
	uint64_t d_minflt, d_majflt;
	uint64_t wall_ns;
	uint64_t total_ticks;
	double norm_ticks;
	uint64_t rss_pages_max;
	uint64_t rss_pages_last;
	bool born;
	bool exited;
};

/*
 * What every scan touches comes first, together (64 bytes): with thousands
 * of tasks the scan's cost is mostly cache misses on these structs.
 */
struct task {
	struct task *hnext;		       /* hash chain */
	uint64_t utime, stime, minflt, majflt; /* last read: the baseline */
	uint32_t seen_gen;
	/* its identity asked for this many times: an answer to an older
	 * ask (a read before an exec the scan saw since) is stale */
	uint32_t ident_gen;
	bool is_thread;
	bool stale;   /* a read failed: the next read is a baseline */
	bool cpu_set; /* cpu holds this instance's iterator split */
	/* its identity's request was refused (the queue full): asked again
	 * at a later scan, when there is room, for the uid too when the
	 * refused one asked for it */
	bool ident_retry, ident_retry_uid;
	bool tasks_listed;   /* process: task/ listed whole at list_epoch */
	uint16_t list_epoch; /* (in the padding: no byte more per task) */
	struct cputime_split cpu; /* iterator: last utime/stime split, ns */
	struct task_wt wt;	  /* identity + this window's accumulators */
	/* the window's samples [0, mark) are in wt's per-sample sums; the
	 * rest are settled lazily (task_settle, doc/bpf.md) */
	uint32_t mark;
	int stat_fd; /* its stat file kept open (proc_statfd.c); -1 none */
	struct task *threads; /* process: its known threads */
	struct task *tnext;   /* thread: next sibling */
	struct task *proc;    /* thread: owner */
	/* a process's name (cmdline) where it is not its comm; NULL: the
	 * comm, as for every thread (task_name) */
	char *name;
};

/* The name a window row gives t. */
static inline const char *
task_name(const struct task *t)
{
	return t->name != NULL ? t->name : t->wt.comm;
}

/* t as a window's row (struct window_task), its name filled in. */
void task_row(const struct task *t, struct window_task *ret);

struct htab {
	struct task **b;
	size_t nb, n;
};

/* sample times kept for born_since (more: the older half goes) */
#define VITALS_SBOOT_MAX 128

struct procscan {
	int procfd;
	DIR *dir;
	unsigned hz;
	uint64_t tick_ns;
	enum threads_mode mode;
	struct htab procs, threads;
	uint32_t gen;
	uint32_t nscanned_procs, nscanned_threads;
	struct statfd sf; /* kept-open stat files: count and bound */
	struct vbuf buf;
	struct taskiter *ti;  /* NULL: /proc is the source */
	enum scanner_why why; /* why ti is NULL */
	int err;	      /* errno behind why, or of the last failed read */
	unsigned ti_fails;    /* iterator reads failed in a row */
	enum scanner_mode last; /* source of the previous scan */
	bool have_last;
	unsigned fail_reads; /* tests: iterator reads to fail */
	bool hiding;	     /* the procfs hides processes (hidepid) */
	int cgfd;	     /* cgroup root to count them by; -1: none */
	int cg_err;	     /* why cgfd is -1 */
	/*
	 * Event-driven samples (doc/bpf.md): the window's valid samples'
	 * denominators in order, so a task a partial sample skipped is
	 * settled with the very sums a full walk would have added.
	 */
	struct sample_acc {
		uint64_t wall_ns, total_ticks;
		double norm_ticks;
	} * hist;
	uint32_t nhist, hcap;
	uint32_t nprev;	       /* nhist before this sample */
	enum partial_why pwhy; /* why partial samples are off */
	int perr;
	bool want_events;	   /* procscan_set_events gave maps */
	struct taskiter_events ev; /* those maps (dups), -1 none */
	bool partial;		   /* this sample is partial */
	bool need_full;		   /* the next sample walks in full */
	bool last_full;		   /* the previous sample walked in full */
	uint64_t ev_gen, ev_doubt, ev_nostore; /* as of the last full walk */
	/* CLOCK_BOOTTIME of the samples since the last full walk, it first */
	int64_t sboot[VITALS_SBOOT_MAX];
	uint32_t nsboot;
	bool force_full;	/* tests, the benchmark: never partial */
	unsigned partial_fails; /* partial reads failed in a row */
	unsigned doubt_row;	/* partial reads doubtful in a row */
	/* full walks at window closes: at most walk_period_ns apart (0:
	 * every close), the last at walk_boot_ns (have_walk) */
	uint64_t walk_period_ns;
	int64_t walk_boot_ns;
	bool have_walk;
	unsigned test_flags; /* tests: TASKITER_READ_NO_* on every read */
	/*
	 * Processes whose GONE record needs no count (partial_gone_unknown):
	 * retired by a walk or a partial sample, or counted once, at ev_gen
	 * gen. A record stays on its side until the drain after the next
	 * flip, so each is kept until ev_gen is two on.
	 */
	struct gone_seen {
		int32_t tgid;
		uint64_t starttime, gen;
	} * gseen;
	size_t ngseen, gseencap;
	/* open addressing over gseen (a slot holds an index + 1, 0 empty),
	 * twice gseencap slots: a record's lookup costs the same whatever
	 * the churn */
	uint32_t *gidx;
	/* identities read on a worker (proc_ident_async.c); NULL: on the
	 * loop, in the scan. Counts since the last flush: requests queued,
	 * answers taken, requests refused (queue full), answers of an
	 * instance gone or replaced, reads made on the loop. */
	struct ident_async *ia;
	uint64_t id_queued, id_done, id_full, id_stale, id_loop;
	/* full walks read on a worker (proc_walk_async.c); NULL: on the
	 * loop, in the sample */
	struct walk_async *wa;
	unsigned walk_delay_ms; /* tests: each walk sleeps this long first */
	/* Listings skipped (proc_scan.c, listing_current): the fork count the
	 * last /proc sample read (have_forks), and an epoch that moves with
	 * it; /proc listed whole in epoch list_epoch (have_listed) */
	uint64_t forks;
	bool have_forks;
	uint16_t fork_epoch, list_epoch;
	bool have_listed;
	/* tasks a listing named that were unreadable and are in no table:
	 * a listing that met one is not whole (the next lists again) */
	uint32_t unread_procs, unread_threads;
	/* the ids a sample reads without listing (processes, a process's
	 * threads), taken out of the tables before any read changes them */
	struct vbuf known_pids, known_tids;
};

static inline size_t
ht_slot(const struct htab *h, int32_t id)
{
	/*
	 * ids are handed out sequentially and both scanners visit them in
	 * ascending order: the id itself spreads them evenly, and neighbours
	 * land in neighbouring buckets, so a scan walks the table in order
	 * instead of missing the cache on every lookup.
	 */
	return (size_t)((uint32_t)id & (h->nb - 1));
}

static inline struct task *
ht_get(const struct htab *h, int32_t id)
{
	struct task *t;

	if (h->nb == 0)
		return NULL;
	for (t = h->b[ht_slot(h, id)]; t; t = t->hnext)
		if (t->wt.id == id)
			return t;
	return NULL;
}

/* proc_scan.c: the per-instance logic both sources feed */
void task_settle(const struct procscan *ps, struct task *t, uint32_t upto);
void task_retire(struct procscan *ps, struct task *t, struct window *w);
int thread_observe(struct procscan *ps, struct task *p, int32_t tid,
    struct task *t, const struct pid_stat *st, const struct scan_ctx *ctx,
    struct window *w, struct task **ret);
void threads_retire_unseen(struct procscan *ps, struct task *p,
    struct window *w);
void threads_unmoved(struct procscan *ps, struct task *p);
bool threads_wanted(const struct procscan *ps, bool moved);
int proc_observe(struct procscan *ps, int32_t pid, struct task *p,
    const struct pid_stat *st, bool uid_known, uint32_t uid,
    const struct scan_ctx *ctx, struct window *w, struct task **ret,
    bool *ret_moved);

void sources_switched(struct procscan *ps);
int scan_procfs(struct procscan *ps, const struct scan_ctx *ctx,
    struct window *w);

/* proc_scan_iter.c: the sample and the iterator source. Partial reads failing this many
 * samples in a row turn them off. */
#define PARTIAL_MAX_FAILS 3
/* doubtful partial reads in a row after which the window's other samples
 * walk without trying one (a kernel whose CPUs the read cannot reach
 * doubts every read: the walk alone is cheaper than both) */
#define PARTIAL_MAX_DOUBTS 3
int scan_iter(struct procscan *ps, const struct taskiter_snap *snap,
    const struct scan_ctx *ctx, struct window *w);
int try_partial(struct procscan *ps, const struct scan_ctx *ctx,
    struct window *w, const struct taskiter_snap **ret_snap);
int hist_push(struct procscan *ps, const struct scan_ctx *ctx);
void gone_note(struct procscan *ps, int32_t tgid, uint64_t starttime);
void retire_gone(struct procscan *ps, const struct taskiter_snap *snap,
    struct window *w);

/* A full walk's reads, the sched accounting's baseline (want_state) then
 * the walk; they touch the taskiter alone. walk_wants_state
 * (proc_scan_iter.c): whether the walk reads the baseline. */
struct walk_result {
	bool want_state;
	unsigned delay_ms;   /* tests: slept first */
	int state_r, read_r; /* 0, or −errno */
	uint64_t gen, doubt;
	const struct taskiter_snap *snap;
};
bool walk_wants_state(const struct procscan *ps);
/* proc_walk_async.c: the walk's reads (on the loop or the worker) */
void walk_read(struct taskiter *ti, struct walk_result *wr);

/* proc_walk_async.c: the walk read off the loop for this sample (NULL:
 * none; one read for another sample is dropped, counted in w), its
 * taskiter's bytes while it runs (false: none runs), and the worker
 * stopped */
const struct walk_result *walk_async_take(struct procscan *ps,
    const struct scan_ctx *ctx, struct window *w);
bool walk_async_bytes(const struct procscan *ps, uint64_t *ret);
/* the walk (want_state: the baseline first) started for a sample that
 * closes the window (full) or not: 1 it was, 0 the worker is not free */
int walk_async_start(struct procscan *ps, bool want_state, bool full);
void walk_async_free(struct procscan *ps);

/* proc_ident_async.c: t's identity asked of the worker (want_uid: status
 * too); false: the queue is full (counted), the comm stands. */
bool ident_queue(struct procscan *ps, const struct task *t, bool want_uid);
uint32_t ident_pending(const struct procscan *ps); /* queued + in flight */
bool ident_room(const struct procscan *ps); /* the queue takes one more */
void ident_async_free(struct procscan *ps);

/* proc_scan_view.c: at window close, the processes a hiding procfs kept
 * from the scan (into w's health) */
void procscan_count_hidden(struct procscan *ps, struct window *w);

#endif /* VITALSD_PROC_SCAN_INT_H */
