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
 * What every scan touches comes first, together (64 bytes): with thousands
 * of tasks the scan's cost is mostly cache misses on these structs.
 */
struct task {
	struct task *hnext;		       /* hash chain */
	uint64_t utime, stime, minflt, majflt; /* last read: the baseline */
	uint32_t seen_gen;
	bool is_thread;
	bool stale;   /* a read failed: the next read is a baseline */
	bool cpu_set; /* cpu holds this instance's iterator split */
	struct cputime_split cpu; /* iterator: last utime/stime split, ns */
	struct window_task wt;	  /* identity + this window's accumulators */
	struct task *threads;	  /* process: its known threads */
	struct task *tnext;	  /* thread: next sibling */
	struct task *proc;	  /* thread: owner */
	int stat_fd; /* its stat file kept open (proc_statfd.c); -1 none */
};

struct htab {
	struct task **b;
	size_t nb, n;
};

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

/* proc_scan_view.c: at window close, the processes a hiding procfs kept
 * from the scan (into w's health) */
void procscan_count_hidden(struct procscan *ps, struct window *w);

#endif /* VITALSD_PROC_SCAN_INT_H */
