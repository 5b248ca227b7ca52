/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procfs and sysfs: why samples are dropped, the pure parsers of system
 * and per-task files (proc_stat.c, proc_pid.c), the system files kept open
 * (sysfiles.c), the process scan (proc_scan.c) and what a hiding procfs
 * kept from it (proc_hidden.c).
 */
#ifndef VITALSD_PROC_H
#define VITALSD_PROC_H

#include "core/util.h"
#include "taskiter/taskiter.h"

struct window;

/*
 * Why a sample or a delta was dropped. Each is counted per window; a dropped
 * delta is never replaced by 0, −1 or a guess.
 */
enum vitals_invalid {
	INV_SLEPT, /* Δboottime − Δmonotonic > 50 ms: device suspended */
	INV_NO_ADVANCE,	 /* monotonic time did not advance between reads */
	INV_REGRESSION,	 /* a cumulative counter went backwards */
	INV_READ_FAILED, /* open/read failed for another reason than exit */
	INV_PARSE,	 /* the text did not parse */
	INV_VANISHED,	 /* the task went away between readdir and read */
	INV_IDENTITY,	 /* starttime changed: the id was reused */
	INV_HOTPLUG,	 /* a cpuN line appeared or disappeared */
	INV__MAX
};

/* Collectors whose cost is measured separately. */
enum vitals_coll {
	COLL_STAT,
	COLL_LOADAVG,
	COLL_PSI,
	COLL_VMSTAT,
	COLL_MEMINFO,
	COLL_CPUFREQ,
	COLL_PROCS,
	COLL__MAX
};

/* ---------------------------------------------------------------- parsers */

/* One cpu line of /proc/stat, in USER_HZ ticks. */
struct cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	uint64_t guest, guest_nice; /* already inside user/nice */
};

#define PROCSTAT_HAVE_CTXT (1u << 0)
#define PROCSTAT_HAVE_BTIME (1u << 1)
#define PROCSTAT_HAVE_PROCESSES (1u << 2)
#define PROCSTAT_HAVE_RUNNING (1u << 3)
#define PROCSTAT_HAVE_BLOCKED (1u << 4)

/* /proc/stat. cpu[i] is meaningful only where online[i] is set. */
struct procstat {
	struct cpu_times all;
	struct cpu_times cpu[VITALS_CPU_MAX];
	uint8_t online[VITALS_CPU_MAX]; /* a cpuN line was present */
	unsigned ncpu_online;		/* number of cpuN lines kept */
	unsigned cpu_span;		/* highest N + 1 among kept lines */
	unsigned cpu_dropped; /* cpuN lines with N >= VITALS_CPU_MAX */
	uint64_t ctxt, btime, processes, procs_running, procs_blocked;
	unsigned have; /* PROCSTAT_HAVE_* */
};

/* /proc/loadavg: "0.27 0.13 0.05 1/77 2234". runnable/threads count threads. */
struct loadavg {
	double avg1, avg5, avg15;
	uint32_t runnable, threads;
	uint32_t last_pid;
};

/* One /proc/pressure/<res> line: "some avg10=.. avg60=.. avg300=.. total=..". */
struct psi_line {
	double avg10, avg60, avg300; /* percent */
	uint64_t total_us;	     /* cumulative stall time */
};

struct psi {
	struct psi_line some, full;
	bool have_full; /* cpu "full" exists only on newer kernels */
};

enum psi_res { PSI_CPU, PSI_MEMORY, PSI_IO, PSI__MAX };

/* /proc/vmstat keys vitalsd keeps (all cumulative counters). */
enum vmstat_key {
	VM_PGFAULT,
	VM_PGMAJFAULT,
	VM_PSWPIN,
	VM_PSWPOUT,
	VM_PGPGIN,
	VM_PGPGOUT,
	VM_PGSCAN_KSWAPD,
	VM_PGSCAN_DIRECT,
	VM_PGSTEAL_KSWAPD,
	VM_PGSTEAL_DIRECT,
	VM_WORKINGSET_REFAULT_ANON,
	VM_WORKINGSET_REFAULT_FILE,
	VM_OOM_KILL,
	VM__MAX
};

struct vmstat {
	uint64_t v[VM__MAX];
	uint32_t have; /* bit k set: key k was present */
};

/* /proc/meminfo keys vitalsd keeps (gauges, kB). */
enum meminfo_key {
	MI_MEMTOTAL,
	MI_MEMFREE,
	MI_MEMAVAILABLE,
	MI_BUFFERS,
	MI_CACHED,
	MI_SWAPCACHED,
	MI_ACTIVE,
	MI_INACTIVE,
	MI_SWAPTOTAL,
	MI_SWAPFREE,
	MI_DIRTY,
	MI_ANONPAGES,
	MI_MAPPED,
	MI_SHMEM,
	MI_SRECLAIMABLE,
	MI_SUNRECLAIM,
	MI_KERNELSTACK,
	MI_PAGETABLES,
	MI__MAX
};

struct meminfo {
	uint64_t kb[MI__MAX];
	uint32_t have; /* bit k set: key k was present */
};

/* /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat, fields 1-based. */
struct pid_stat {
	int32_t pid;		    /* 1 */
	char comm[VITALS_COMM_LEN]; /* 2, a label only: never a key */
	char state;		    /* 3 */
	int32_t ppid;		    /* 4 */
	uint64_t minflt;	    /* 10 */
	uint64_t majflt;	    /* 12 */
	uint64_t utime;		    /* 14, ticks */
	uint64_t stime;		    /* 15, ticks */
	int32_t num_threads;	    /* 20 */
	uint64_t starttime;	    /* 22, ticks since boot */
	uint64_t start_ns;	    /* start_boottime (BPF); 0: unknown */
	uint64_t vsize;		    /* 23, bytes */
	uint64_t rss_pages;	    /* 24 */
};

/* The parts of /proc/<pid>/status vitalsd keeps. */
struct pid_status {
	uint32_t uid;  /* real uid, first of the Uid: line */
	uint32_t euid; /* effective uid */
	uint32_t gid;  /* real gid */
	int32_t tgid;
	int64_t vm_rss_kb; /* −1: line absent (kernel thread) */
	int64_t rss_anon_kb;
	int64_t rss_file_kb;
	int64_t rss_shmem_kb;
	int64_t vm_swap_kb;
};

/* proc_stat.c: pure parsers of system files; bytes in, struct out. */
int procstat_parse(const char *buf, size_t len, struct procstat *ret);
int loadavg_parse(const char *buf, size_t len, struct loadavg *ret);
int psi_parse(const char *buf, size_t len, struct psi *ret);
int vmstat_parse(const char *buf, size_t len, struct vmstat *ret);
int meminfo_parse(const char *buf, size_t len, struct meminfo *ret);
int parse_u64_text(const char *buf, size_t len, uint64_t *ret);
const char *vmstat_key_name(enum vmstat_key k);
const char *meminfo_key_name(enum meminfo_key k);

/* proc_pid.c: pure parsers of per-task files. */
int pidstat_parse(const char *buf, size_t len, struct pid_stat *ret);
int pidstatus_parse(const char *buf, size_t len, struct pid_status *ret);
int cmdline_name(const char *buf, size_t len, char *ret, size_t retsz);

/* proc_ident.c: a process's identity read now (answers about a process
 * that used no CPU in a range) */
struct window_task;
struct vbuf;
int proc_cmdline_name(int dirfd, int32_t pid, struct vbuf *b, char *ret,
    size_t retsz);
int proc_cmdline_name_at(int dirfd, const char *path, struct vbuf *b, char *ret,
    size_t retsz);
int proc_identity(const char *proc_root, int32_t pid, unsigned hz,
    struct window_task *ret, int64_t *ret_start_wall_ns);

/* ------------------------------------------------------------- sysfiles.c */

/* One read of every system file. *_err: 0, or -errno (-ENOENT: absent). */
struct sys_sample {
	int stat_err;
	struct procstat stat;
	int loadavg_err;
	struct loadavg loadavg;
	int psi_err[PSI__MAX];
	struct psi psi[PSI__MAX];
	int vm_err;
	struct vmstat vm;
	int mem_err;
	struct meminfo mem;
	int64_t cur_khz[VITALS_CPU_MAX]; /* −1: unknown */
	uint64_t coll_ns[COLL__MAX];
};

struct sysfiles;

int sysfiles_open(const char *proc_root, const char *sys_root,
    struct sysfiles **ret);
struct sysfiles *sysfiles_free(struct sysfiles *sf);
void sysfiles_read(struct sysfiles *sf, struct sys_sample *ret);
int64_t sysfiles_max_khz(const struct sysfiles *sf, unsigned cpu);
int32_t sysfiles_capacity(const struct sysfiles *sf, unsigned cpu);

/* ------------------------------------------------------------ proc_scan.c */

enum threads_mode {
	THREADS_NONE,	 /* processes only */
	THREADS_CHANGED, /* threads of processes whose counters moved */
	THREADS_ALL,	 /* every thread every sample */
};

struct fgbg;

/* What one process scan needs to know about the sample it belongs to. */
struct scan_ctx {
	bool valid;	      /* false: refresh baselines, add nothing */
	bool have_prev;	      /* a previous sample exists */
	int64_t prev_boot_ns; /* CLOCK_BOOTTIME of the previous sample */
	uint64_t wall_ns;     /* Δmonotonic of this sample */
	uint64_t total_ticks; /* system Δtotal of this sample */
	double norm_ticks;    /* Δtotal / online CPUs */
	bool full;	      /* the window closes on it */
	/* the sched accounting flipped right before this (closing) sample:
	 * a partial read may stand for the close's walk (doc/bpf.md) */
	bool flipped;
	int64_t boot_ns; /* CLOCK_BOOTTIME of this sample; 0: unknown */
	/* each process's deltas also go to its foreground/background state
	 * (fgbg.h); NULL: none */
	struct fgbg *fg;
	/* the kernel's fork count (/proc/stat "processes"), read before the
	 * scan: unmoved since a directory's last listing, that listing still
	 * names every task there is (doc/metrics.md, "Listings skipped") */
	bool have_forks;
	uint64_t forks;
};

struct procscan;

int procscan_new(int procfd, unsigned hz, enum threads_mode mode,
    struct procscan **ret);
struct procscan *procscan_free(struct procscan *ps);
int procscan_run(struct procscan *ps, const struct scan_ctx *ctx,
    struct window *w);
int procscan_flush(struct procscan *ps, struct window *w);

/*
 * proc_ident_async.c: identities (cmdline, and status when the source
 * gives no uid) read on a worker thread, their answers applied on base's
 * loop (issue 20; doc/architecture.md "The loop"). qmax bounds the
 * requests waiting (0: VITALS_IDENT_QUEUE_DEF); a full queue leaves the
 * comm as the name, counted. The worker keeps its creator's privileges:
 * call once they are final. -errno: the reads stay in the scan.
 */
#define VITALS_IDENT_QUEUE_DEF 256
struct event_base;
int procscan_ident_async(struct procscan *ps, struct event_base *base,
    unsigned qmax);
/* The worker's finished batch applied now (wait: until it finishes) and
 * the next one started, as the loop's event does: 1 applied, 0 none.
 * Tests, and nothing on the loop (wait blocks). */
int procscan_ident_settle(struct procscan *ps, bool wait);

/*
 * proc_walk_async.c (procscan_walk_due and procscan_walk_start:
 * proc_scan_iter.c): the iterator's full walks read on a worker thread
 * (issue 20; doc/bpf.md "Full walks"). procscan_walk_start starts the
 * walk of the sample ctx describes when it will walk (procscan_walk_due)
 * and returns 1: the caller then runs that sample from cb, which base's
 * loop calls once the walk has ended (or was cancelled: the sample then
 * walks itself). 0: the sample runs now, as without a worker. The worker
 * keeps its creator's privileges: made once they are final.
 */
int procscan_walk_async(struct procscan *ps, struct event_base *base,
    void (*cb)(void *arg), void *arg);
bool procscan_walk_due(const struct procscan *ps, const struct scan_ctx *ctx);
int procscan_walk_start(struct procscan *ps, const struct scan_ctx *ctx);
/* a walk started whose sample has not run yet */
bool procscan_walk_owed(const struct procscan *ps);
/* a walk under way waited for and its result dropped (its sample, still
 * owed, runs from cb and walks itself): before anything else closes the
 * window or replaces the iterator */
void procscan_walk_cancel(struct procscan *ps);
/* a result its sample did not take (it failed before its scan): dropped */
void procscan_walk_unused(struct procscan *ps);
void procscan_walk_delay_test(struct procscan *ps, unsigned ms); /* tests */
/* tests: the fork epoch set, as after that many samples with a fork */
void procscan_fork_epoch_test(struct procscan *ps, uint16_t epoch);

/* proc_statfd.c: kept-open stat files of the procfs scan */
#define VITALS_STAT_FDS_DEF 4096 /* proc_stat_fds */
struct window_health;
struct statfd {
	unsigned open, max; /* kept now; the bound (0: none kept) */
};
/* RLIMIT_NOFILE's soft limit raised toward what want kept files need
 * (never past the hard one): how many may be kept. */
unsigned statfd_limit(unsigned want);
/* dirfd/path whole into b: through *fdp when it is open (dropped when
 * its task is gone), else opened, and kept in *fdp while the bound
 * allows; reads, opens and refusals counted in h. */
int statfd_read(struct statfd *sf, int *fdp, int dirfd, const char *path,
    struct vbuf *b, struct window_health *h);
void statfd_close(struct statfd *sf, int *fdp);
/* proc_scan.c: how many stat files the procfs scan may keep open */
void procscan_set_stat_fds(struct procscan *ps, unsigned max);

/* proc_scan.c: the scan's source */
int procscan_set_scanner(struct procscan *ps, enum scanner_mode mode,
    const char *sys_root);
/* proc_scan.c: event-driven samples (doc/bpf.md) on the sched
 * accounting's maps; NULL: none. ev's fds are used during loads only. */
int procscan_set_events(struct procscan *ps, const struct taskiter_events *ev,
    const char *sys_root);
void procscan_force_full(struct procscan *ps, bool on);
/* proc_scan_iter.c: how often a full walk runs at the latest (ns; 0: at
 * every window close, doc/bpf.md), and the partial reads' test switches
 * (TASKITER_READ_NO_*) */
#define VITALS_FULL_WALK_S_DEF 60 /* full_walk_s */
void procscan_set_walk_period(struct procscan *ps, uint64_t period_ns);
void procscan_partial_test(struct procscan *ps, unsigned flags);
int procscan_run_snap(struct procscan *ps, const struct taskiter_snap *snap,
    bool partial, const struct scan_ctx *ctx, struct window *w);
void procscan_scanner(const struct procscan *ps, enum scanner_mode *ret_kind,
    enum scanner_why *ret_why, int *ret_err);
void procscan_fail_iter_reads(struct procscan *ps, unsigned n); /* tests */

/* proc_scan.c, collector.c: the live instance of pid, for attribution */
int procscan_lookup(const struct procscan *ps, int32_t pid,
    uint64_t *ret_starttime, char *ret_name, size_t namesz);

/* proc_scan.c: each live process's counters as the last scan read them
 * (cumulative since it started), for the exporter (export/) */
struct procscan_proc {
	int32_t pid;
	uint64_t starttime; /* ticks after boot */
	const char *comm;
	uint64_t utime, stime, minflt, majflt, rss_pages;
};
typedef void (*procscan_each_fn)(const struct procscan_proc *p, void *arg);
void procscan_each(const struct procscan *ps, procscan_each_fn fn, void *arg);
/* proc_scan_view.c: heap bytes of the task table (records, buckets,
 * buffers) and the tasks in it */
uint64_t procscan_bytes(const struct procscan *ps, uint32_t *ret_tasks);
/* bytes of the task iterator's output array mapped (taskiter_out_bytes) */
uint64_t procscan_out_bytes(const struct procscan *ps);

/* proc_hidden.c: processes a hidepid procfs kept from the scan */
enum unseen_state {
	UNSEEN_NOT_REPORTED, /* not known (a stored window, no scan) */
	UNSEEN_NONE_HIDDEN,  /* the mount hides nothing, or BPF is the source */
	UNSEEN_COUNTED,	     /* procs_unseen holds the count */
	UNSEEN_UNKNOWN,	     /* the mount hides, no cgroup list to count by */
};

const char *unseen_state_name(unsigned st);
int prochidden_detect(int procfd, bool *ret_hiding);
int prochidden_cgroup_open(const char *sys_root);
int prochidden_count(int cgfd, int procfd, bool (*seen)(int32_t pid, void *arg),
    void *arg, uint32_t *ret_unseen);
/* proc_scan.c: count at every window close when the mount hides */
int procscan_watch_hidden(struct procscan *ps, const char *sys_root);

#endif /* VITALSD_PROC_H */
