/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF task iterator as the process scan's source (taskiter.c).
 */
#ifndef VITALSD_TASKITER_H
#define VITALSD_TASKITER_H

#include "core/util.h"

/* ------------------------------------------------------------- taskiter.c */

/* Config `scanner`: where the process scan reads its tasks from. */
enum scanner_mode {
	SCANNER_PROCFS, /* /proc only (the zero value, for fixture roots) */
	SCANNER_AUTO,	/* the BPF task iterator where it works, else /proc */
	SCANNER_BPF,	/* the iterator; the daemon does not start without */
};

/* Why the iterator is not the source (window_health.scanner_why). */
enum scanner_why {
	SCANNER_WHY_NONE,      /* it is */
	SCANNER_WHY_CONFIG,    /* scanner = procfs */
	SCANNER_WHY_BUILD,     /* built without BPF */
	SCANNER_WHY_ROOT,      /* proc_root is not this pid namespace's /proc */
	SCANNER_WHY_PIDNS,     /* not the initial pid namespace */
	SCANNER_WHY_NO_BTF,    /* no /sys/kernel/btf/vmlinux */
	SCANNER_WHY_PRIVILEGE, /* EPERM: no CAP_BPF + CAP_PERFMON */
	SCANNER_WHY_VERIFIER,  /* open or load failed: verifier, CO-RE */
	SCANNER_WHY_ATTACH,    /* the iterator link was not created */
	SCANNER_WHY_READ,      /* reads failed: at setup, or repeatedly */
	SCANNER_WHY__MAX
};

/*
 * Why a sample is not partial (doc/bpf.md, "Event-driven samples"): the
 * first three are per scan (the partial path is off), the rest per
 * sample (a full walk stands in).
 */
enum partial_why {
	PARTIAL_WHY_NONE,     /* partial samples are on */
	PARTIAL_WHY_NO_SCHED, /* the sched accounting is not ours (off, or
			       * read-only pins) */
	PARTIAL_WHY_LOAD,     /* its programs did not load (kfuncs, 6.7) */
	PARTIAL_WHY_SCANNER,  /* the task iterator is not the source */
	PARTIAL_WHY_READ,     /* its reads failed */
	PARTIAL_WHY__MAX
};

/* The sched accounting's maps a partial sample reads (daemon/sched): dups
 * the loader may keep; -1 where there is none. */
struct taskiter_events {
	int ctl_fd, tot_fd;
	int tid_fd[2], proc_fd[2];
	int slot_fd[2], nslot_fd; /* layout 11: the array slots */
	/* their capacity per side (bpf_sched_slot_cap): a side whose slot
	 * count is at most this sent no thread to its hash, which a read
	 * then skips; 0: unknown, the hash is walked at every read */
	uint32_t slot_cap;
};

/* What a partial read's end records said. */
struct taskiter_end {
	uint64_t gen;	  /* sched_ctl's generation at the end */
	uint64_t doubt;	  /* Σ the sched doubt counters, all CPUs */
	uint64_t nostore; /* groups not marked written (cumulative) */
	/* thread hashes walked, and skipped (the slot count at most the
	 * capacity), by this reader's reads (cumulative) */
	uint64_t hash_walks, hash_skips;
	/* process maps walked (cumulative; layout 12: when a change no
	 * slot names came, or at the first read after a walk) */
	uint64_t proc_walks;
	uint32_t nrecs; /* task records read */
};

/* A utime/stime split of precise runtime, ns (kernel: struct prev_cputime). */
struct cputime_split {
	uint64_t utime, stime;
};

/*
 * One task (or, aggregated, one thread group) as the iterator saw it. CPU
 * figures are raw kernel nanoseconds; for a process they are the group's:
 * signal_struct's exited-thread share plus every live thread's own.
 */
struct iter_task {
	int32_t tgid, tid; /* process: tid == tgid */
	uint32_t uid;	   /* real uid */
	uint32_t flags;	   /* TASKITER_F_* (bpf/taskiter/taskiter.bpf.h) */
	char comm[VITALS_COMM_LEN];
	uint64_t starttime;	     /* ticks since boot, as /proc field 22 */
	uint64_t start_ns;	     /* start_boottime */
	uint64_t utime_ns, stime_ns; /* tick-sampled */
	uint64_t runtime_ns;	     /* sum_exec_runtime */
	struct cputime_split prev;   /* the kernel's last /proc split */
	uint64_t minflt, majflt;
	uint64_t rss_pages;	  /* the group's mm, for threads too */
	uint32_t first, nthreads; /* process: its threads in snap->threads */
	bool leader;		  /* process: its leader was seen */
};

/* One iterator read, grouped. Arrays are reused from read to read. */
struct taskiter_snap {
	struct iter_task *procs, *threads;
	size_t nprocs, nthreads;
	size_t cap, hcap;      /* scratch sizes (threads, next; hash) */
	size_t pcap;	       /* procs' size */
	uint32_t *hash, *next; /* scratch: tgid index, thread chains */
	/* partial reads: processes wholly gone (TASKITER_MAGIC_GONE) */
	struct iter_gone {
		int32_t tgid;
		uint64_t starttime;
	} * gone;
	size_t ngone, gcap;
	bool ended; /* a stream parsed in parts: its end record met */
};

struct taskiter;

const char *scanner_name(enum scanner_mode m);
const char *scanner_why_name(enum scanner_why why);
const char *partial_why_name(enum partial_why why);
void taskiter_cputime_adjust(struct cputime_split *prev, uint64_t utime,
    uint64_t stime, uint64_t rtime);
bool taskiter_cputime_kept(const struct iter_task *t,
    const struct cputime_split *prev);
void taskiter_cputime_ticks(const struct iter_task *t,
    struct cputime_split *prev, unsigned hz, uint64_t *ret_utime,
    uint64_t *ret_stime);
int taskiter_parse(const void *buf, size_t len, struct taskiter_snap *s);
/* the same, a stream fed in parts as it is read (taskiter_parse.c) */
struct taskiter_rec;
int taskiter_parse_begin(struct taskiter_snap *s, size_t hint);
int taskiter_parse_feed(struct taskiter_snap *s,
    const struct taskiter_rec *recs, size_t n);
int taskiter_parse_end(struct taskiter_snap *s);
/* cut s's scratch tables back to n tasks when they hold over four times
 * that (taskiter_parse.c) */
void taskiter_snap_fit(struct taskiter_snap *s, size_t n);
void taskiter_snap_release(struct taskiter_snap *s);
enum scanner_why taskiter_usable(int procfd);
int taskiter_open(unsigned hz, const char *sys_root, struct taskiter **ret,
    enum scanner_why *ret_why);
/* taskiter_open with the partial programs on ev's maps (NULL: none);
 * *ret_pwhy says why they are off, with its errno in *ret_perr */
int taskiter_open_ev(unsigned hz, const char *sys_root,
    const struct taskiter_events *ev, struct taskiter **ret,
    enum scanner_why *ret_why, enum partial_why *ret_pwhy, int *ret_perr);
/* whether partial reads are possible */
bool taskiter_partial_on(const struct taskiter *ti);
/* the sched accounting's generation and doubt counters now (before a full
 * walk: the baseline of the partial samples after it) */
int taskiter_ev_state(struct taskiter *ti, uint64_t *ret_gen,
    uint64_t *ret_doubt);
/* the sched accounting's generation now */
int taskiter_ev_gen(struct taskiter *ti, uint64_t *ret_gen);
/* a partial read's flags (taskiter.bpf.h, TASKITER_ARG_*) */
#define TASKITER_READ_BOTH 1u	 /* both sides: a close read after the flip */
#define TASKITER_READ_NO_MAPS 2u /* tests: the running tasks alone */
#define TASKITER_READ_NO_CPUS 4u /* tests: the maps alone (doubtful) */
/* tests, benchmarks: the process map walked whatever the counters say */
#define TASKITER_READ_PROCS 8u
/* a partial read of side's maps (and the other side's, READ_BOTH): whole
 * groups, and the gone */
int taskiter_read_partial(struct taskiter *ti, unsigned side, unsigned flags,
    const struct taskiter_snap **ret, struct taskiter_end *ret_end);
struct taskiter *taskiter_free(struct taskiter *ti);
int taskiter_read(struct taskiter *ti, const struct taskiter_snap **ret);
/* bytes of the partial reads' output array mapped (resident in RssFile,
 * not heap; Health.memory.taskiter_out_bytes) */
size_t taskiter_out_bytes(const struct taskiter *ti);
/* bytes of heap the reader holds (its buffers; Health.memory) */
size_t taskiter_bytes(const struct taskiter *ti);

#endif /* VITALSD_TASKITER_H */
