/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitalsd private header: every type shared between the daemon's files and
 * the prototypes of each file's exported functions, grouped by file.
 *
 * Conventions: functions return 0 or -errno; out-parameters are named ret_*
 * and are left untouched on failure; x_free() accepts NULL.
 */
#ifndef VITALSD_H
#define VITALSD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define VITALS_CPU_MAX 512	/* cpuN lines above this are counted, not kept */
#define VITALS_COMM_LEN 16	/* TASK_COMM_LEN, including the NUL */
#define VITALS_NAME_LEN 128	/* process name from cmdline, cut */
#define VITALS_SLEEP_NS 50000000LL /* Δboot − Δmono above this: slept */
#define VITALS_INTERVAL_MIN_MS 100
/* The earliest wall time a range reaches (-2^62 ns, year 1823): far
 * before any clock, far enough from INT64_MIN that range arithmetic
 * (from − span) cannot overflow. */
#define VITALS_WALL_MIN (-(INT64_C(1) << 62))

/* The span-aligned bucket of wall time t (span > 0): floor(t / span), so
 * that a bucket before 1970 is as wide as any other. */
static inline int64_t
wall_bucket(int64_t t, int64_t span)
{
	return t / span - (t % span < 0);
}
#define VITALS_BURST_INTERVAL_MS 100
#define VITALS_BURST_MAX_MS 10000

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL
#define NSEC_PER_USEC 1000LL

/*
 * Why a sample or a delta was dropped. Each is counted per window; a dropped
 * delta is never replaced by 0, −1 or a guess.
 */
enum vitals_invalid {
	INV_SLEPT,	 /* Δboottime − Δmonotonic > 50 ms: device suspended */
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
	unsigned cpu_dropped;		/* cpuN lines with N >= VITALS_CPU_MAX */
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
	int32_t pid;			/* 1 */
	char comm[VITALS_COMM_LEN];	/* 2, a label only: never a key */
	char state;			/* 3 */
	int32_t ppid;			/* 4 */
	uint64_t minflt;		/* 10 */
	uint64_t majflt;		/* 12 */
	uint64_t utime;			/* 14, ticks */
	uint64_t stime;			/* 15, ticks */
	int32_t num_threads;		/* 20 */
	uint64_t starttime;		/* 22, ticks since boot */
	uint64_t vsize;			/* 23, bytes */
	uint64_t rss_pages;		/* 24 */
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

/* --------------------------------------------------------------- metrics.c */

uint64_t cpu_times_total(const struct cpu_times *t);
uint64_t cpu_times_busy(const struct cpu_times *t);
int cpu_times_delta(const struct cpu_times *prev, const struct cpu_times *cur,
    struct cpu_times *ret);
void cpu_times_add(struct cpu_times *acc, const struct cpu_times *d);
double metric_core_equiv(uint64_t cpu_ticks, uint64_t wall_ns, unsigned hz);
double metric_machine_share(uint64_t cpu_ticks, uint64_t total_ticks);
double metric_normalised(uint64_t cpu_ticks, double norm_ticks);

/* ----------------------------------------------------------------- windows */

/* A gauge over a window: avg = sum / n. n == 0 means "no valid reading". */
struct gauge {
	double min, max, sum, last;
	uint32_t n;
};

/* Σ of valid per-sample deltas of one CPU (or of the aggregate line). */
struct window_cpu {
	struct cpu_times d; /* raw Σ deltas, ticks */
	uint32_t samples;   /* deltas summed into d */
	uint64_t wall_ns;   /* Σ Δmonotonic of those samples */
	bool online_end;    /* line present in the window's last sample */
	/* frequency, kHz; cur_khz.n == 0 when unknown */
	struct gauge cur_khz;
	int64_t max_khz;  /* cpuinfo_max_freq, −1 unknown */
	int32_t capacity; /* cpu_capacity, −1 unknown */
	struct gauge freq_ratio; /* cur/max per sample, when both known */
};

/* Per process (or per thread) activity inside one window. */
struct window_task {
	int32_t id;   /* pid, or tid for threads */
	int32_t tgid; /* owning process */
	uint64_t starttime;
	uint32_t uid;
	char comm[VITALS_COMM_LEN];
	char name[VITALS_NAME_LEN]; /* process name; comm for threads */
	uint64_t d_utime, d_stime;   /* ticks */
	uint64_t d_minflt, d_majflt; /* counts, never bytes */
	uint32_t samples;	     /* valid deltas summed */
	uint64_t wall_ns;	     /* Σ Δmonotonic over those samples */
	uint64_t total_ticks;	     /* Σ system Δtotal over those samples */
	double norm_ticks;	     /* Σ Δtotal/online_cpus over them */
	uint64_t rss_pages_max;	     /* stat field 24, highest seen */
	uint64_t rss_pages_last;
	bool born;   /* started inside the window: counters are the delta */
	bool exited; /* gone before the window closed */
};

struct window_psi {
	bool available; /* file present and parsed at least once */
	bool have_full;
	uint64_t d_some_us, d_full_us; /* Σ valid deltas of total= */
	uint32_t samples;
	struct gauge some_avg10, full_avg10;
};

/* Tick lateness histogram: upper bounds in ms; the last bucket is open. */
#define VITALS_LATE_BUCKETS 8
#define VITALS_LATE_BOUNDS_MS { 1, 2, 5, 10, 20, 50, 100, 0 }

struct window_health {
	uint64_t self_utime_us, self_stime_us; /* getrusage delta */
	uint64_t coll_ns_sum[COLL__MAX], coll_ns_max[COLL__MAX];
	uint64_t sample_ns_sum, sample_ns_max; /* whole sample */
	uint32_t late_ticks;	/* timer fired over half an interval late */
	uint32_t burst_samples; /* samples taken in burst mode */
	uint32_t procs_scanned, threads_scanned; /* in the last sample */
	uint32_t procs_exited, threads_exited;	 /* instances that ended */
	uint32_t cpu_dropped; /* cpuN lines beyond VITALS_CPU_MAX */
	/* the store as seen when this window closed (enum store_state) */
	uint32_t store_state;
	uint32_t store_queued;	/* windows waiting to be written */
	uint32_t store_dropped; /* windows lost to a full queue, cumulative */
	/* sampling timer lateness: fire time − grid time (control plane);
	 * kept in memory only, not in the store */
	uint64_t tick_late_ns_max, tick_late_ns_sum;
	/* ticks by lateness, under VITALS_LATE_BOUNDS_MS (the last: more) */
	uint32_t tick_late_hist[VITALS_LATE_BUCKETS];
	/* the process scan's source in the last sample (bpf_iter.c) */
	uint32_t scanner;     /* enum scanner_mode: SCANNER_PROCFS or _BPF */
	uint32_t scanner_why; /* enum scanner_why: why not BPF, 0 when it is */
	uint32_t scanner_err; /* errno behind scanner_why or the last failure */
	uint32_t iter_failed; /* iterator reads that failed; /proc stood in */
	/* processes a hiding procfs kept from the last scan (proc_hidden.c);
	 * in memory only, not in the store (Health.privileges) */
	uint32_t unseen_state; /* enum unseen_state */
	uint32_t procs_unseen; /* valid when unseen_state is UNSEEN_COUNTED */
};

/*
 * BPF sched_switch accounting of one window (bpf_sched.c drains it,
 * bpf_window.c reduces and merges it). Fixed arrays: the window stays one
 * allocation and a copy is a struct copy. What does not fit is summed into
 * the *_other entries, so totals stay whole.
 */
#define VITALS_BPF_UIDS 64  /* uids kept by on-CPU time */
#define VITALS_BPF_PROCS 32 /* processes kept: half by CPU, half by wait */
#define VITALS_BPF_RQ_SLOTS 24 /* = VITALS_SCHED_RQ_SLOTS (bpf/sched.h) */
#define VITALS_BPF_PROGS 4

/* Where BPF accounting stands; stored, so values never change meaning. */
enum vbpf_state {
	VBPF_UNKNOWN,	     /* not reported (older window, no BPF part) */
	VBPF_ON_LOADED,	     /* programs loaded and pinned by vitalsd */
	VBPF_ON_REUSED,	     /* pins of an earlier start reused */
	VBPF_ON_PINNED,	     /* pins of the platform loader opened */
	VBPF_OFF_DISABLED,   /* bpf_load = off */
	VBPF_OFF_UNSUPPORTED, /* built without BPF */
	VBPF_OFF_NO_BTF,     /* no kernel BTF */
	VBPF_OFF_NO_BPFFS,   /* the pin directory is not on a bpffs */
	VBPF_OFF_NO_PRIV,    /* no CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN) */
	VBPF_OFF_VERIFIER,   /* the verifier refused a program */
	VBPF_OFF_NO_PINS,    /* pinned-only: pins missing or of another layout */
	VBPF_OFF_ERROR,	     /* anything else: see err */
	VBPF_OFF_BUSY,	     /* another vitalsd drains these pins */
	VBPF__MAX
};

struct window_bpf_uid {
	uint32_t uid;
	uint32_t pad;
	uint64_t oncpu_ns;     /* every task of the uid */
	uint64_t exited_ns;    /* part of oncpu_ns from threads that exited */
	uint64_t exited_tasks; /* threads folded at exit */
};

struct window_bpf_proc {
	int32_t tgid;	    /* −1: the "other" entry */
	uint32_t pad;
	uint64_t starttime; /* ticks, as /proc/<pid>/stat field 22 */
	uint64_t oncpu_ns;  /* its threads, the exited ones included */
	uint64_t rq_ns, rq_count; /* run-queue delay: Σ and number */
	uint32_t rq_hist[VITALS_BPF_RQ_SLOTS]; /* slot k: [2^k, 2^(k+1)) µs */
};

struct window_bpf {
	uint32_t state;	     /* enum vbpf_state at close */
	int32_t err;	     /* −errno behind an OFF state, 0 none */
	uint32_t drains;     /* drains summed into this window */
	uint32_t drain_fail; /* drains that did not complete */
	uint32_t counter_regressions; /* kernel totals that went backwards */
	uint64_t drain_ns;   /* time spent draining (flip, wait, read) */
	uint64_t entries;    /* map entries read */
	/* Σ over every uid (on-CPU) and every process (run queue) */
	uint64_t oncpu_ns, exited_ns, exited_tasks, rq_ns, rq_count;
	uint64_t pre_ns; /* on-CPU ns accounted before the daemon started */
	/* Δ of the kernel's cumulative counters over the window */
	uint64_t switches, no_slice, wakeups;
	uint64_t lost_ns; /* ns no uid entry could take (map full) */
	uint64_t full_tid, full_proc, full_uid; /* failed inserts per map */
	uint64_t no_storage;
	/* read-only drains (the platform loader's pins, bpf_ldr.c): the
	 * window is a difference of two snapshots of running totals */
	uint32_t diff_drains;	 /* drains made that way */
	int64_t unattributed_ns; /* Δ on-CPU total − Σ attributed Δ */
	uint64_t evicted;   /* live entries the kernel evicted (LRU) */
	uint64_t recreated; /* entries made anew or counters gone backwards:
			     * the new value taken as the delta */
	uint64_t retired;   /* dead entries aged out (nothing lost) */
	bool stats; /* prog_* are valid (bpf_stats = on) */
	uint64_t prog_runs[VITALS_BPF_PROGS], prog_ns[VITALS_BPF_PROGS];
	uint32_t nuids, uids_other; /* kept; folded into uid_other */
	struct window_bpf_uid uid[VITALS_BPF_UIDS];
	struct window_bpf_uid uid_other; /* uid UINT32_MAX */
	uint32_t nprocs, procs_other;
	struct window_bpf_proc proc[VITALS_BPF_PROCS];
	struct window_bpf_proc proc_other;
};

/*
 * GPU memory of one (gpu, pid) pair as the driver last reported it through
 * gpu_mem/gpu_mem_total (doc/gpumem.md). pid 0 is that GPU's global total.
 */
struct window_gpu_proc {
	uint32_t gpu_id;
	int32_t pid;	    /* 0: that GPU's global total */
	uint64_t starttime; /* process instance; 0 when stale/unknown */
	uint64_t bytes;	    /* at window end */
	uint64_t min_bytes, max_bytes; /* within the window */
	uint64_t imported_bytes; /* of bytes, imported (window_gpumem.imported
				  * maps only; not stored) */
	bool stale;
	char name[VITALS_NAME_LEN]; /* process name when attributed, else "" */
};

/* Where the GpuMem map stands (window_gpumem.state); stored as numbers. */
enum gpumem_state {
	GPUMEM_UNKNOWN,	 /* not reported (older window, no GpuMem part) */
	GPUMEM_NOT_INIT, /* no map to read: why says which */
	GPUMEM_EMPTY,	 /* the map is read and holds no entry */
	GPUMEM_ERROR,	 /* open, layout check or traversal failed: err */
	GPUMEM_OK,	 /* the map is read and holds entries */
	GPUMEM__MAX
};

enum gpumem_why {
	GPUMEM_WHY_NONE,
	GPUMEM_WHY_DISABLED,  /* gpumem = off */
	GPUMEM_WHY_NO_MAP,    /* no map at the path, no own program to load */
	GPUMEM_WHY_WAITING,   /* own program loaded; tracepoint not there yet */
	GPUMEM_WHY_TP_ABSENT, /* own program: no tracepoint in the retry time */
	GPUMEM_WHY_LOAD,      /* own program did not load (err) */
	GPUMEM_WHY_OPEN,      /* the map could not be opened (err) */
	GPUMEM_WHY_LAYOUT,    /* the map is not AOSP's layout */
	GPUMEM_WHY_TRAVERSE,  /* the last traversal failed (err) */
	GPUMEM_WHY__MAX
};

enum gpumem_source {
	GPUMEM_SRC_NONE,
	GPUMEM_SRC_PINNED, /* a platform loader's pinned map (gpumem_map) */
	GPUMEM_SRC_OWN,	   /* vitalsd's own gpu_mem program */
};

/* A window's view of the map and of its reading. */
struct window_gpumem {
	uint32_t state;	   /* enum gpumem_state at close */
	uint32_t why;	   /* enum gpumem_why */
	int32_t err;	   /* −errno behind why, 0 none */
	uint32_t source;   /* enum gpumem_source */
	uint32_t capacity; /* max_entries of the map; 0 unknown */
	uint32_t entries;  /* keys in the last traversal, globals included */
	bool saturated;	   /* a traversal found it within 1/64 of capacity */
	uint32_t traversals, traversal_fail;
	uint32_t restarts;   /* cursor key deleted: the kernel began anew */
	uint32_t vanished;   /* keys gone between get-next-key and lookup */
	uint32_t duplicates; /* keys seen again after a restart, skipped */
	uint32_t truncated;  /* walks stopped at the step bound */
	uint32_t stale;	     /* entries marked stale at window end */
	uint64_t events;     /* gpumem_note_event() calls (ftrace) */
	uint64_t events_late; /* of them, stamped before the window began */
	uint64_t traverse_ns, traverse_ns_max;
	uint64_t tp_events;   /* own program: tracepoint hits, Δ */
	uint64_t insert_fail; /* own program: inserts the full map refused, Δ */
	bool imported;	      /* the map's values carry an imported size
			       * (16-byte values; not stored) */
};
struct window_wss; /* wss.c's part of a window, defined with wss.c */
/* ------------------------------------------ ftrace figures of a window */

#define VITALS_TRACE_NAME 128	  /* ATrace names kept: 127 bytes + NUL */
#define VITALS_TRACE_SLICES 128	  /* slice rows a window keeps */
#define VITALS_TRACE_COUNTERS 32  /* counter rows a window keeps */
#define VITALS_TRACE_BINDER 32	  /* caller → target pairs kept */
#define VITALS_TRACE_RQ 32	  /* threads kept by run-queue delay */
#define VITALS_TRACE_GPU 16	  /* (gpu, pid) gpu_mem_total entries kept */
#define VITALS_TRACE_DEPTH 64	  /* open B slices kept per thread */

/* Where ftrace capture stands; stored, so values never change meaning. */
enum ftrace_state {
	FTRACE_UNKNOWN,	     /* not reported (older window, no ftrace part) */
	FTRACE_ON,	     /* instance made, events enabled, reading */
	FTRACE_OFF_CONFIG,   /* ftrace = off */
	FTRACE_OFF_NO_TRACEFS, /* tracefs not mounted or not reachable */
	FTRACE_OFF_NO_PRIV,  /* instance not creatable (EACCES/EPERM) */
	FTRACE_OFF_ERROR,    /* anything else: see err */
	FTRACE__MAX
};

/* ftrace_sched: sched_switch/sched_waking in the instance. */
enum ftrace_sched {
	FTRACE_SCHED_AUTO, /* on unless BPF sched accounting is active */
	FTRACE_SCHED_ON,
	FTRACE_SCHED_OFF,
};

/* Events vitalsd may enable (bit k of window_trace.enabled / missing). */
enum ftrace_ev {
	FEV_PRINT,	  /* ftrace/print: trace_marker writes (ATrace) */
	FEV_SCHED_SWITCH,
	FEV_SCHED_WAKING,
	FEV_PROCESS_EXIT, /* sched/sched_process_exit: closes open slices */
	FEV_BINDER_TXN,	  /* binder/binder_transaction */
	FEV_BINDER_RECV,  /* binder/binder_transaction_received */
	FEV_GPU_MEM,	  /* gpu_mem/gpu_mem_total */
	FEV__MAX
};

/* What a window row of slices is (window_trace_slice.kind). */
enum trace_kind {
	TRACE_SYNC,	/* B/E, paired per thread stack */
	TRACE_ASYNC,	/* S/F, paired by (pid, name, cookie) */
	TRACE_TRACK,	/* G/H, paired by (pid, track, cookie) */
	TRACE_INSTANT,	/* I and N: counted, no duration */
	TRACE__MAX
};

/*
 * One slice name of one thread at one depth over a window. Complete slices
 * carry their durations; incomplete ones (begin or end lost) are only
 * counted: no duration is invented for them. An end whose begin was never
 * seen has an empty name.
 */
struct window_trace_slice {
	int32_t tgid; /* the pid field of the marker; −1 unknown */
	int32_t tid;  /* the thread that began it (ended it, for orphans) */
	uint16_t depth; /* B/E nesting, 0 outermost */
	uint8_t kind;	/* enum trace_kind */
	uint8_t pad;
	uint32_t count;	     /* complete slices (instants: events) */
	uint32_t incomplete; /* slices whose begin or end was lost */
	uint64_t total_ns, max_ns; /* complete slices only */
	char name[VITALS_TRACE_NAME];
};

/* An ATrace counter (C) over a window. */
struct window_trace_counter {
	int32_t tgid;
	uint32_t n; /* values seen */
	int64_t last, min, max;
	char name[VITALS_TRACE_NAME];
};

/* binder_transaction per (caller process → target process). */
struct window_trace_binder {
	int32_t from_pid; /* the caller thread's process; its tid if unknown */
	int32_t to_pid;	  /* to_proc of the event */
	uint32_t calls, oneway, replies;
	uint32_t pad;
};

/* Run-queue delay of one thread from sched_waking → sched_switch. */
struct window_trace_rq {
	int32_t tid;
	uint32_t pad;
	uint64_t count, total_ns, max_ns;
};

/* gpu_mem_total events of one (gpu, pid); pid 0 is the GPU's total. */
struct window_trace_gpu {
	uint32_t gpu_id;
	int32_t pid;
	uint64_t events;
	uint64_t last_size; /* bytes, the last event's value */
};

struct window_trace {
	uint32_t state;	  /* enum ftrace_state at close */
	int32_t err;	  /* −errno behind an OFF state */
	uint32_t enabled; /* bit FEV_*: enabled in the instance */
	uint32_t missing; /* bit FEV_*: wanted, absent from available_events */
	bool atrace;	  /* copy_trace_marker on: ATrace is captured */
	/* loss: Δ of the kernel's per-CPU stats over the window, Σ CPUs */
	uint64_t overrun, dropped, commit_overrun;
	uint64_t pages_lost; /* pages whose header flagged lost events */
	uint64_t missed;     /* events those headers counted, when stored */
	uint32_t stats_fail; /* per-CPU stats reads that failed */
	uint32_t backlog;    /* reads that left pages for the next tick */
	uint64_t entries;    /* Δ "read events" of the stats: Σ CPUs */
	uint64_t events, pages, bytes; /* read and decoded here */
	uint64_t read_ns;    /* time spent reading and decoding */
	uint64_t bad_markers;	 /* print payloads not in the ATrace protocol */
	uint64_t names_cut;	 /* names longer than 127 bytes, cut */
	uint64_t unknown_events; /* records of an id this build does not use */
	uint64_t bad_pages;	 /* pages whose header did not fit: skipped */
	uint64_t buffered;	 /* Σ "entries" at close: not yet read */
	uint64_t slices, incomplete, orphan_ends; /* Σ over all rows */
	uint64_t sched_switch, sched_waking, binder_received;
	uint64_t gpu_events;
	/* ATrace categories (atrace_cat.c): state at close, counts Δ */
	uint32_t cat_state;  /* enum atcat_state (atrace_cat.h) */
	int32_t cat_err;     /* −errno behind error / unavailable */
	uint64_t cat_tags;   /* the ATRACE_TAG_* bits configured */
	uint64_t cat_flags;  /* the tags property as last read: vitalsd's
			      * when on, the other tracer's when skipped */
	uint32_t cat_checks, cat_foreign; /* checks; those another owned */
	uint32_t cat_takeovers, cat_yields, cat_restores;
	uint32_t cat_set_fail, cat_read_fail;
	uint32_t nslices, slices_other; /* kept; folded into slice_other */
	struct window_trace_slice slice[VITALS_TRACE_SLICES];
	struct window_trace_slice slice_other;
	uint32_t ncounters, counters_other;
	struct window_trace_counter counter[VITALS_TRACE_COUNTERS];
	uint32_t nbinder, binder_other;
	struct window_trace_binder binder[VITALS_TRACE_BINDER];
	struct window_trace_binder binder_total; /* Σ of every pair */
	uint32_t nrq, rq_other;
	struct window_trace_rq rq[VITALS_TRACE_RQ];
	struct window_trace_rq rq_total;
	uint32_t ngpu, gpu_other;
	struct window_trace_gpu gpu[VITALS_TRACE_GPU];
};

/* Loss of a window: anything the kernel or a page header said was lost. */
bool window_trace_lossy(const struct window_trace *t);
uint64_t window_trace_lost(const struct window_trace *t);

struct window {
	uint64_t seq;
	char boot_id[40];  /* /proc/sys/kernel/random/boot_id, "" unknown */
	uint32_t level;	   /* 0: as sampled; 1, 2: roll-ups */
	int64_t mono_start_ns, mono_end_ns;
	int64_t boot_start_ns, boot_end_ns;
	int64_t wall_start_ns, wall_end_ns; /* CLOCK_REALTIME, for display */
	uint32_t hz;			    /* USER_HZ of the ticks below */
	uint32_t interval_ms;		    /* nominal cadence at close */

	uint32_t samples;	/* taken (each with a timestamp) */
	uint32_t samples_valid; /* system deltas accepted */
	uint32_t inv_samples[INV__MAX]; /* whole samples dropped, by reason */
	uint32_t inv_deltas[INV__MAX];	/* single deltas dropped, by reason */

	struct window_cpu all;
	unsigned cpu_span;	/* entries in cpu[] */
	struct window_cpu *cpu; /* indexed by CPU number */
	struct gauge online_cpus;

	uint64_t d_ctxt, d_processes; /* Σ valid deltas */
	struct gauge procs_running, procs_blocked;
	struct gauge load1, load5, load15, load_runnable, load_threads;
	struct window_psi psi[PSI__MAX];
	uint64_t d_vm[VM__MAX]; /* Σ valid deltas */
	uint32_t vm_samples;
	uint32_t vm_have;
	struct gauge mem_kb[MI__MAX];
	uint32_t mem_have;

	size_t nprocs, procs_cap;
	struct window_task *procs;
	size_t nthreads, threads_cap;
	struct window_task *threads;

	struct window_health health;
	struct window_bpf bpf; /* sched_switch accounting (bpf_sched.c) */
	/* GPU memory (gpumem.c): the map's state and, per (gpu, pid), the
	 * bytes at window end with their range inside the window */
	struct window_gpumem gpumem;
	struct window_gpu_proc *gpu;
	size_t n_gpu;
	struct window_wss *wss; /* working-set targets (wss.c); owned */
	size_t nwss;
	struct window_trace trace; /* ftrace figures (ftrace.c, atrace.c) */
};

/* window.c */
struct window *window_new(uint64_t seq, unsigned cpu_span);
struct window *window_free(struct window *w);
struct window *window_dup(const struct window *w);
int window_add_task(struct window *w, bool thread, const struct window_task *t);
int window_grow_cpus(struct window *w, unsigned cpu_span);
void gauge_add(struct gauge *g, double v);
double gauge_avg(const struct gauge *g);
void gauge_merge(struct gauge *acc, const struct gauge *g);
const char *invalid_name(enum vitals_invalid r);
const char *coll_name(enum vitals_coll c);
const char *psi_res_name(enum psi_res r);

/* --------------------------------------------------------------- rollup.c */

/* Fold src (a later window) into acc: deltas and counts sum, gauges merge,
 * tasks merge by identity. acc keeps its start, takes src's end. */
int window_merge(struct window *acc, const struct window *src);

/* ---------------------------------------------------------------- store.c */

enum store_state {
	STORE_OK,
	STORE_FULL,	/* SQLITE_FULL / ENOSPC: writes wait and retry */
	STORE_IO_ERROR, /* other write failures: wait and retry */
	STORE_CLOSED,	/* not open (no database) */
};

struct store_opts {
	int64_t rollup1_after_s; /* level-0 windows older than this ... */
	unsigned rollup1_s;	 /* ... merge into windows of this span */
	int64_t rollup2_after_s;
	unsigned rollup2_s;
	int64_t retain_s;   /* nothing older than this is kept */
	uint64_t max_bytes; /* database size bound */
	int busy_timeout_ms;
	/* Wall-clock trust (store_maint.c): a clock more than clock_jump_s
	 * ahead of what the stored windows vouch for is suspect until the
	 * kernel says it is synchronised or it has run in step with
	 * CLOCK_BOOTTIME for clock_stable_s. 0: the defaults below. */
	int64_t clock_jump_s;
	int64_t clock_stable_s;
};

#define STORE_CLOCK_JUMP_S (24 * 3600)
#define STORE_CLOCK_STABLE_S (24 * 3600)

struct store_stats {
	enum store_state state;
	int last_err; /* -errno of the last failed operation, 0 none */
	char last_errmsg[128];
	uint64_t windows_written, write_failures;
	uint64_t windows_rolled, deleted_age, deleted_size;
	uint64_t corrupt_moved; /* databases moved aside at open */
	char corrupt_path[256];
	uint64_t db_bytes;
	uint64_t commit_ns_last, commit_ns_max;
	/* self-healing (store_heal.c) */
	uint64_t open_retries;	   /* opens of a closed store tried again */
	int64_t retry_at_mono_ns;  /* the writer tries again then; 0 none */
	uint64_t windows_salvaged; /* copied out of a damaged file */
	uint64_t wal_damaged;	   /* WAL files found damaged at open */
	uint64_t shm_faults;	   /* faults on a cut -shm, repaired */
	/* the wall clock as the last maintenance pass judged it */
	bool clock_suspect;	 /* ahead by more than clock_jump_s */
	bool clock_confirmed;	 /* kernel-synchronised, or stable long enough */
	int64_t clock_ahead_ns;	 /* how far ahead of the stored windows */
	uint64_t clock_deferred; /* passes whose wall-clock deletions waited */
	uint64_t clock_held;	 /* windows the last such pass kept */
};

/* Metrics for top-N queries. */
enum store_metric { METRIC_CPU, METRIC_MINFLT, METRIC_MAJFLT, METRIC_RSS };

struct store;

void store_opts_default(struct store_opts *o);
int store_open(const char *path, const struct store_opts *o,
    struct store **ret);
struct store *store_close(struct store *s);
int store_put(struct store *s, const struct window *w);
int store_maintain(struct store *s, int64_t now_wall_ns);

/* "Now" for maintenance: the three clocks it judges ages with. */
struct store_now {
	int64_t wall_ns;  /* CLOCK_REALTIME */
	int64_t boot_ns;  /* CLOCK_BOOTTIME */
	char boot_id[40]; /* this boot, as windows carry it; "": unknown */
	int wall_sync;	  /* kernel time status: 1 synchronised, 0 not,
			   * < 0 unknown */
};

int store_maintain_at(struct store *s, const struct store_now *now);
void store_get_stats(const struct store *s, struct store_stats *ret);
int store_windows(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, struct window ***ret, size_t *ret_n);
/* At most max windows (buckets at a granularity), the newest of the range,
 * returned oldest first; only those are loaded. *ret_truncated (may be
 * NULL): older ones matched too. max 0: no limit (internal callers). */
int store_windows_max(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, unsigned granularity_s, size_t max,
    struct window ***ret, size_t *ret_n, bool *ret_truncated);
int store_windows_budget(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, unsigned granularity_s, size_t max, size_t budget,
    struct window ***ret, size_t *ret_n, bool *ret_truncated,
    size_t *ret_bytes);
size_t store_window_bytes(const struct window *w);
/* After -EUCLEAN (corrupt while open): move the file aside as store_open
 * does and start a fresh database in the same handle. */
int store_recover(struct store *s);
/* store_heal.c: a store that cannot open now is returned closed and
 * reopened later (the writer does, with backoff). */
int store_open_retry(const char *path, const struct store_opts *o,
    struct store **ret);
bool store_is_open(struct store *s);
int store_reopen(struct store *s);
int store_heal_sigbus_install(void);
int store_top(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, enum store_metric m, unsigned n,
    struct window_task **ret, size_t *ret_n);
int store_process(struct store *s, int32_t pid, uint64_t starttime,
    int64_t from_wall_ns, int64_t to_wall_ns, struct window_task **ret,
    size_t *ret_n);
const char *store_state_name(enum store_state st);

/* Added with the store: the schema a new database gets, and its mark. */
#define STORE_SCHEMA_VERSION 7
#define STORE_APPLICATION_ID 0x56544c53 /* "VTLS" */

/* One window of a task's history, with the window it came from. */
struct store_hist {
	char boot_id[40];
	uint32_t level;
	uint32_t hz;
	int64_t mono_start_ns, mono_end_ns;
	int64_t wall_start_ns, wall_end_ns;
	struct window_task t;
};

int store_history(struct store *s, bool threads, int32_t id,
    uint64_t starttime, int64_t from_wall_ns, int64_t to_wall_ns,
    struct store_hist **ret, size_t *ret_n);
/* Tests and tools only: run SQL, return the first column of the first row. */
int store_exec(struct store *s, const char *sql, char *ret, size_t retsz);
/* Tests only: a new database at an older schema version, plus some SQL. */
int store_create_version(const char *path, unsigned version, const char *sql);

/* --------------------------------------------------------------- writer.c */

struct writer;

int writer_start(struct store *store, unsigned queue_max,
    struct writer **ret);
int writer_submit(struct writer *wr, const struct window *w);
int writer_wait(struct writer *wr, unsigned ms);
#define WRITER_WAIT_MS 50 /* the loop waits this long for a commit */
void writer_get(struct writer *wr, struct store_stats *ret_stats,
    unsigned *ret_queued, uint64_t *ret_dropped);
struct writer *writer_stop(struct writer *wr, unsigned flush_ms);

/* ----------------------------------------------------------- bpf_common.c */

int bpf_pin_path(const char *bpffs, const char *kind, const char *name,
    char *ret, size_t retsz);
int bpf_check_bpffs(const char *dir);
void bpf_common_init(void);
int bpf_stats_enable(void);

/* ---------------------------------------------------------------- util.c */

/* A growable byte buffer used for reads and text output. */
struct vbuf {
	char *p;
	size_t len, cap;
};

int vbuf_reserve(struct vbuf *b, size_t extra);
int vbuf_printf(struct vbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vbuf_reset(struct vbuf *b);
void vbuf_release(struct vbuf *b);
int read_fd_all(int fd, struct vbuf *b);
int read_at(int dirfd, const char *path, struct vbuf *b);
int64_t clock_ns(int clockid);
int parse_uint(const char *s, uint64_t max, uint64_t *ret);
int parse_u32_range(const char *s, uint64_t min, uint64_t max,
    uint32_t *ret);
size_t name_clean(char *dst, const char *src, size_t n);

/* ----------------------------------------------------------------- log.c */

void log_init(bool foreground, int verbosity, const char *ident);
void log_setverbose(int verbosity);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

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

/* What one process scan needs to know about the sample it belongs to. */
struct scan_ctx {
	bool valid;	       /* false: refresh baselines, add nothing */
	bool have_prev;	       /* a previous sample exists */
	int64_t prev_boot_ns;  /* CLOCK_BOOTTIME of the previous sample */
	uint64_t wall_ns;      /* Δmonotonic of this sample */
	uint64_t total_ticks;  /* system Δtotal of this sample */
	double norm_ticks;     /* Δtotal / online CPUs */
};

struct procscan;

int procscan_new(int procfd, unsigned hz, enum threads_mode mode,
    struct procscan **ret);
struct procscan *procscan_free(struct procscan *ps);
void procscan_set_mode(struct procscan *ps, enum threads_mode mode);
int procscan_run(struct procscan *ps, const struct scan_ctx *ctx,
    struct window *w);
int procscan_flush(struct procscan *ps, struct window *w);
size_t procscan_nprocs(const struct procscan *ps);
size_t procscan_nthreads(const struct procscan *ps);

/* ------------------------------------------------------------ collector.c */

struct clocks {
	int64_t mono_ns, boot_ns, wall_ns;
};

struct collector_opts {
	const char *proc_root;
	const char *sys_root;
	unsigned hz;		/* 0: sysconf(_SC_CLK_TCK) */
	unsigned interval_ms;	/* nominal cadence, for window alignment */
	unsigned window_s;
	unsigned ring;		/* closed windows kept in memory */
	enum threads_mode threads;
	unsigned scanner;	/* enum scanner_mode; 0: procfs */
};

typedef void (*window_cb)(const struct window *w, void *arg);

struct collector;

int collector_new(const struct collector_opts *o, struct collector **ret);
struct collector *collector_free(struct collector *c);
void collector_clocks(struct clocks *ret);
int collector_sample(struct collector *c, const struct clocks *now,
    bool burst);
int collector_close_window(struct collector *c, const struct clocks *now);
void collector_set_interval(struct collector *c, unsigned interval_ms);
void collector_note_late(struct collector *c);
void collector_note_tick(struct collector *c, int64_t late_ns);
void collector_set_window_cb(struct collector *c, window_cb cb, void *arg);
const struct window *collector_window(const struct collector *c,
    unsigned back);
const struct window *collector_open(const struct collector *c);
unsigned collector_hz(const struct collector *c);

/* ----------------------------------------------------------------- dump.c */

int dump_window(const struct window *w, unsigned topn, struct vbuf *out);
void dump_summary_line(const struct window *w, struct vbuf *out);

/* --------------------------------------------------------------- config.c */

/* Working-set monitor settings (wss.c), here because struct config holds
 * them; the monitor's section is at the end of this file. */
#define WSS_NAME_LEN 64
#define WSS_RULES_MAX 8

/* A config rule: processes named name get a target. */
struct wss_rule {
	char name[WSS_NAME_LEN];
	unsigned mode;
	char lib[WSS_NAME_LEN];
};

struct wss_config {
	unsigned interval_ms, interval_min_ms, interval_max_ms;
	unsigned max_targets, max_pages; /* pages: Σ over every target */
	unsigned method;		 /* enum wss_method */
	char *log_dir;			 /* page-level log export; NULL off */
	unsigned nrules;
	struct wss_rule rule[WSS_RULES_MAX];
};

#define VITALS_IDLIST_MAX 64
#define VITALS_NO_UID UINT32_MAX

/* A configured list of numeric uids or gids. */
struct id_list {
	unsigned n;
	uint32_t id[VITALS_IDLIST_MAX];
};

struct config {
	char *state_dir;
	char *socket_path;
	char *proc_root;
	char *sys_root;
	unsigned interval_ms;
	unsigned window_s;
	unsigned ring;
	enum threads_mode threads;
	int verbose;
	struct store_opts store;
	unsigned write_queue; /* closed windows waiting for the store */
	/* control plane (control.c); roles in doc/protocol.md */
	struct id_list trusted_uids, trusted_gids, reader_uids, reader_gids;
	uint32_t shell_uid;	  /* a reader; VITALS_NO_UID: none */
	uint32_t system_uid;	  /* trusted; VITALS_NO_UID: none */
	unsigned max_conns;	  /* accept pauses at this many connections */
	unsigned trusted_max_conns; /* trusted callers together; 0: default */
	unsigned idle_timeout_ms; /* no request, no progress: close */
	uint32_t max_frame;	  /* frame payload limit, both directions */
	uint32_t max_output;	  /* queued answer bytes per connection */
	unsigned query_queue;	  /* store reads waiting for the query thread */
	unsigned query_threads;	  /* read pool: threads, one connection each */
	unsigned query_uid_queue; /* reads one uid may have queued */
	uint64_t query_budget;	  /* bytes one read may load; 0: from output */
	unsigned scanner;	  /* enum scanner_mode (bpf_iter.c) */
	char *bpffs;		  /* pin directory (bpf_sched.c) */
	unsigned bpf_load;	  /* enum vbpf_load */
	bool bpf_stats;		  /* kernel BPF run-time statistics */
	char *gpumem_map;	  /* GpuMem total map pin (gpumem.c) */
	unsigned gpumem_load;	  /* enum gpumem_load */
	unsigned gpumem_attach_s; /* own program: attach retry time */
	/* heapprofd triggers (issue 8): allocated by config_init */
	struct hp_settings *hp;
	/* privileges after setup (privs.c, doc/privileges.md) */
	char *user;		  /* service user; NULL: no drop */
	char *groups;		  /* its supplementary groups */
	uint64_t keep_caps;	  /* capabilities kept (bit = CAP_*) */
	unsigned seccomp;	  /* enum privs_seccomp */
	bool privhelper;	  /* fork the privileged helper */
	struct wss_config wss;	  /* working-set monitor (wss.c) */
	/* ftrace (ftrace.c) */
	bool ftrace;		  /* read ftrace at all */
	char *ftrace_instance;	  /* instances/<name> */
	char *tracefs;		  /* NULL: libtracefs finds the mount */
	unsigned ftrace_buffer_kb; /* per CPU */
	unsigned ftrace_sched;	  /* enum ftrace_sched */
	unsigned ftrace_tick_ms;
	unsigned ftrace_max_pages;
	unsigned ftrace_wake_percent;
	/* system properties (sysprop.c), ATrace categories (atrace_cat.c) */
	char *prop_root;	  /* double's directory; NULL: platform/none */
	uint64_t atrace_tags;	  /* atrace_categories as ATRACE_TAG_* bits */
	char *atrace_apps;	  /* normalised app list; NULL: none */
};

void config_init(struct config *cfg);
/* Keyword values of an enum-like key; tables end with a NULL name. */
struct config_word {
	const char *name;
	int value;
};

int config_word_value(const char *value, const struct config_word *w);
void config_release(struct config *cfg);
int config_set(struct config *cfg, const char *key, const char *value);
int config_parse_file(struct config *cfg, const char *path,
    char *err, size_t errsz);
int config_check(const struct config *cfg, char *err, size_t errsz);
const char *threads_mode_name(enum threads_mode m);

/* --------------------------------------------------------------- daemon.c */

struct vitalsd;

int vitalsd_setup(const struct config *cfg, bool foreground,
    struct vitalsd **ret);
int vitalsd_run(struct vitalsd *d);
struct vitalsd *vitalsd_free(struct vitalsd *d);
void vitalsd_burst(struct vitalsd *d, unsigned duration_ms);

/* ---------------------------------------------------------- control plane */

struct event_base;

enum control_role {
	ROLE_NONE,    /* every request refused: "reader role required" */
	ROLE_READER,  /* queries */
	ROLE_TRUSTED, /* queries and changes (burst); implies reader */
};

/* Control-plane counters, cumulative since start (ControlHealth). */
struct control_stats {
	uint32_t connections;
	uint64_t accepted, requests, denied, bad_frames;
	uint64_t idle_closed, overflow_closed, accept_paused, queries_busy;
	uint64_t queries, query_ns_max; /* store reads run, slowest */
	uint32_t queries_queued;
	uint64_t queries_shared; /* answered by another request's read */
	uint64_t cap_refused;	 /* answered BUSY at a uid or trusted cap */
	uint32_t query_threads;	 /* the read pool */
	uint64_t queries_budget_cut; /* answers cut at the memory budget */
};

/* What one answer reads of the daemon (loop thread; daemon.c fills it). */
struct vitalsd_info {
	const struct window *last; /* last closed window; NULL: none yet */
	unsigned hz;
	unsigned interval_ms;	/* cadence now: 100 during a burst */
	int64_t burst_until_ns; /* CLOCK_MONOTONIC; 0: no burst */
	int64_t uptime_ns;
	bool have_store;
	struct store_stats store; /* as the writer last saw it */
	unsigned store_queued;
	uint64_t store_dropped;
	struct gpumem *gpumem; /* NULL: no GPU memory reader */
};

/* Wire status codes (vitals.proto Status), kept equal by rpc.c. */
enum rpc_status {
	RPC_OK,
	RPC_ERROR,
	RPC_BAD_REQUEST,
	RPC_PERMISSION_DENIED,
	RPC_UNSUPPORTED_VERSION,
	RPC_NOT_FOUND,
	RPC_UNAVAILABLE,
	RPC_BUSY,
	RPC_TOO_LARGE,
};

/* A store read for the query thread: the request, validated and resolved. */
enum rpc_qop { RPC_Q_WINDOWS, RPC_Q_TOP, RPC_Q_PROCESS, RPC_Q_GPUMEM,
	RPC_Q_TRACE, RPC_Q_HP_LIST /* heapprofd session records: n */ };

struct rpc_query {
	enum rpc_qop op;
	uint64_t id; /* request id, echoed */
	int64_t from_wall_ns, to_wall_ns;
	bool relative; /* the range ends "now": since_ns, or no to */
	unsigned hz;
	unsigned granularity_s, max_windows, top_n; /* windows */
	bool with_tasks;
	enum store_metric metric; /* top */
	bool threads;		  /* top, process */
	unsigned n;
	int32_t pid; /* process; trace: 0 any */
	uint64_t starttime;
	char process[VITALS_NAME_LEN]; /* trace: a process name, "" any */
};

/* Packed snapshots reused while their window is the last (rpc.c). */
#define RPC_CACHE_SLOTS 4
struct rpc_cache {
	uint64_t seq; /* the window every slot holds */
	unsigned next;
	struct {
		unsigned top_n;
		uint8_t *body; /* Response without version and id */
		size_t len;
	} e[RPC_CACHE_SLOTS];
};

struct rpc_ctx {
	const struct vitalsd_info *info;
	const struct control_stats *stats;
	struct vitalsd *d;	 /* burst target; NULL: acknowledge only */
	struct rpc_cache *cache; /* NULL: no caching */
	uint32_t max_frame;
	int64_t now_wall_ns;
	uint32_t peer_uid; /* the caller (heapprofd session records) */
};

enum rpc_verdict {
	RPC_ANSWER,	  /* frame holds the answer */
	RPC_ANSWER_CLOSE, /* answer, then close the connection */
	RPC_QUERY,	  /* query is for the query thread */
};

struct rpc_result {
	enum rpc_verdict verdict;
	bool denied;	/* a PERMISSION_DENIED answer */
	bool bad_frame; /* the payload did not decode */
	uint8_t *frame; /* header + payload, malloc'd */
	size_t len;
	struct rpc_query query;
};

/* rpc.c (with rpc_pb.c, the only code that knows protobuf): requests in,
 * frames out. */
int rpc_frame_next(const uint8_t *hdr, size_t avail, uint32_t max,
    uint32_t *ret_len);
int rpc_handle(const struct rpc_ctx *ctx, enum control_role role,
    const uint8_t *payload, size_t len, struct rpc_result *ret);
int rpc_error_frame(uint64_t id, enum rpc_status st, const char *msg,
    uint8_t **ret, size_t *ret_len);
int rpc_answer_windows(const struct rpc_query *q, struct window *const *w,
    size_t n, bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len);
struct hp_record;
int rpc_answer_windows_cut(const struct rpc_query *q,
    struct window *const *w, size_t n, bool truncated, uint64_t budget,
    size_t loaded_bytes, uint32_t max, uint8_t **ret, size_t *ret_len);
int rpc_answer_hp_list(const struct rpc_query *q, const struct hp_record *v,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len);
int rpc_answer_top(const struct rpc_query *q, const struct window_task *t,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len);
int rpc_answer_process(const struct rpc_query *q, const struct store_hist *h,
    size_t n, const struct store_hist *th, size_t nth, uint32_t max,
    uint8_t **ret, size_t *ret_len);
void rpc_cache_release(struct rpc_cache *c);
int rpc_frame_reid(const uint8_t *frame, size_t len, uint64_t id,
    uint8_t **ret, size_t *ret_len);

/* query.c: store reads on a thread of their own, answers back to the loop. */
struct query;

/* Called on the loop thread; frame ownership passes to the callee. */
typedef void (*query_done_fn)(uint64_t conn_id, uint32_t tag,
    uint8_t *frame, size_t len, void *arg);

struct query_opts {
	unsigned threads;   /* 0: 2 */
	unsigned queue_max; /* all uids; 0: 64 */
	unsigned uid_queue; /* one uid; 0: 16 */
	uint32_t max_frame;
	size_t budget;	    /* bytes one read may load; 0: none */
};

int query_new(struct event_base *base, struct store *store,
    unsigned queue_max, uint32_t max_frame, int priority,
    query_done_fn done, void *arg, struct query **ret);
int query_new_pool(struct event_base *base, struct store *store,
    const struct query_opts *o, int priority, query_done_fn done, void *arg,
    struct query **ret);
struct query *query_free(struct query *q);
int query_submit(struct query *q, uint64_t conn_id, uint32_t tag,
    const struct rpc_query *rq);
int query_submit_uid(struct query *q, uint64_t conn_id, uint32_t uid,
    uint32_t tag, const struct rpc_query *rq);
void query_cancel(struct query *q, uint64_t conn_id);
void query_hold(struct query *q, bool hold);
int query_cached(struct query *q, const struct rpc_query *rq,
    uint8_t **ret, size_t *ret_len);
void query_get_stats(struct query *q, struct control_stats *ret);
int query_run(struct store *s, const struct rpc_query *rq, uint32_t max_frame,
    uint8_t **ret, size_t *ret_len);

/* control_sock.c: the listening socket, inherited or made. */
struct control_sock {
	int fd;
	char *path; /* the socket file made here; NULL: inherited */
	dev_t dev;
	ino_t ino;
};

int control_sock_open(const struct config *cfg, struct control_sock *ret);
void control_sock_close(struct control_sock *cs);

/* control.c: connections, their roles and limits. */
struct control;

enum control_role control_role(const struct config *cfg, uint32_t uid,
    uint32_t gid, uint32_t own_uid);
int control_new(struct event_base *base, const struct config *cfg,
    struct vitalsd *d, struct store *store, struct control **ret);
struct control *control_free(struct control *ctl);
void control_get_stats(struct control *ctl, struct control_stats *ret);

/* daemon.c, for the control plane */
void vitalsd_get_info(struct vitalsd *d, struct vitalsd_info *ret);

/* store_read.c: every thread of process tgid (starttime >= since, when set) */
int store_thread_history(struct store *s, int32_t tgid, uint64_t since,
    int64_t from_wall_ns, int64_t to_wall_ns, struct store_hist **ret,
    size_t *ret_n);

/* ------------------------------------------------------------- bpf_iter.c */

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
	uint32_t flags;	   /* TASKITER_F_* (bpf/taskiter.h) */
	char comm[VITALS_COMM_LEN];
	uint64_t starttime;	    /* ticks since boot, as /proc field 22 */
	uint64_t start_ns;	    /* start_boottime */
	uint64_t utime_ns, stime_ns; /* tick-sampled */
	uint64_t runtime_ns;	    /* sum_exec_runtime */
	struct cputime_split prev;  /* the kernel's last /proc split */
	uint64_t minflt, majflt;
	uint64_t rss_pages; /* the group's mm, for threads too */
	uint32_t first, nthreads; /* process: its threads in snap->threads */
	bool leader;		  /* process: its leader was seen */
};

/* One iterator read, grouped. Arrays are reused from read to read. */
struct taskiter_snap {
	struct iter_task *procs, *threads;
	size_t nprocs, nthreads;
	size_t cap, hcap;	  /* scratch sizes */
	uint32_t *hash, *next; /* scratch: tgid index, thread chains */
};

struct taskiter;

const char *scanner_name(enum scanner_mode m);
const char *scanner_why_name(enum scanner_why why);
uint64_t taskiter_ns_to_ticks(uint64_t ns, unsigned hz);
void taskiter_cputime_adjust(struct cputime_split *prev, uint64_t utime,
    uint64_t stime, uint64_t rtime);
bool taskiter_cputime_kept(const struct iter_task *t,
    const struct cputime_split *prev);
void taskiter_cputime_ticks(const struct iter_task *t,
    struct cputime_split *prev, unsigned hz, uint64_t *ret_utime,
    uint64_t *ret_stime);
int taskiter_parse(const void *buf, size_t len, struct taskiter_snap *s);
void taskiter_snap_release(struct taskiter_snap *s);
enum scanner_why taskiter_usable(int procfd);
int taskiter_open(unsigned hz, const char *sys_root, struct taskiter **ret,
    enum scanner_why *ret_why);
struct taskiter *taskiter_free(struct taskiter *ti);
int taskiter_read(struct taskiter *ti, const struct taskiter_snap **ret);

/* proc_scan.c: the scan's source */
int procscan_set_scanner(struct procscan *ps, enum scanner_mode mode,
    const char *sys_root);
void procscan_scanner(const struct procscan *ps, enum scanner_mode *ret_kind,
    enum scanner_why *ret_why, int *ret_err);
void procscan_fail_iter_reads(struct procscan *ps, unsigned n); /* tests */
/* collector.c: the same, for the daemon's log */
void collector_scanner(const struct collector *c,
    enum scanner_mode *ret_kind, enum scanner_why *ret_why, int *ret_err);

/* ------------------------------------------------- bpf_window.c, bpf_sched.c */

#define VITALS_BPF_TOT 14 /* = TOT__MAX of bpf/sched.h */

/* bpf_load: who loads the programs. */
enum vbpf_load {
	VBPF_LOAD_AUTO,	       /* reuse matching pins, else load and pin */
	VBPF_LOAD_PINNED_ONLY, /* open pins only (Android's bpfloader) */
	VBPF_LOAD_OFF,	       /* procfs only */
};

/* One drained side's entries (bpf/sched.h says what each holds). */
struct vbpf_tid {
	int32_t tid, tgid;
	uint32_t uid, pad;  /* the uid it ran as */
	uint64_t start_ns;  /* task->start_boottime */
	uint64_t leader_ns; /* its group leader's */
	uint64_t oncpu_ns;
};

struct vbpf_proc {
	int32_t tgid;
	uint32_t pad;
	uint64_t start_ns;  /* the group leader's start_boottime */
	uint64_t exited_ns; /* of its threads that exited */
	uint64_t rq_ns, rq_count;
	uint32_t rq_hist[VITALS_BPF_RQ_SLOTS];
};

struct vbpf_uid {
	uint32_t uid, pad;
	uint64_t exited_ns, exited_tasks;
	uint64_t overflow_ns; /* slices no thread entry could take */
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
	/* a read-only drain (bpf_ldr.c): what the diff could not attribute */
	bool diff;
	int64_t unattributed_ns;
	uint64_t evicted, recreated, retired;
};

struct bpf_sched_opts {
	const char *bpffs;    /* pin directory, created if missing */
	const char *sys_root; /* <sys_root>/kernel/btf/vmlinux */
	unsigned load;	      /* enum vbpf_load */
	bool rq;	      /* measure run-queue delay */
	bool test_reject;     /* tests: make the verifier refuse a program */
	/* pinned-only with the platform loader's pins (bpf_ldr.c): */
	const char *tracefs;   /* tracepoint ids; NULL: the usual mounts */
	const char *proc_root; /* processes' start times; NULL: /proc */
	const char *instance;  /* tracefs instance to read tracepoint ids in */
};

struct vbpf_prog_stat {
	uint32_t id; /* 0: no program fd (pins of another loader) */
	uint64_t run_cnt, run_ns, misses;
};

struct bpf_sched;

/* bpf_window.c: pure */
const char *vbpf_state_name(unsigned st);
bool vbpf_state_on(unsigned st);
const char *vbpf_prog_name(unsigned i);
uint64_t vbpf_ns_to_ticks(uint64_t ns, unsigned hz);
int window_bpf_add(struct window_bpf *wb, const struct bpf_sched_batch *b,
    unsigned hz);
void window_bpf_merge(struct window_bpf *acc, const struct window_bpf *src);
uint64_t window_bpf_rq_quantile_ns(const uint32_t hist[VITALS_BPF_RQ_SLOTS],
    double q);
void dump_window_bpf(const struct window *w, unsigned topn,
    struct vbuf *out);

/* bpf_sched.c: the loader and the drain; -EOPNOTSUPP without BPF */
int bpf_sched_open(const struct bpf_sched_opts *o, struct bpf_sched **ret,
    unsigned *ret_state, char *why, size_t whysz);
struct bpf_sched *bpf_sched_free(struct bpf_sched *bs);
unsigned bpf_sched_state(const struct bpf_sched *bs);
void bpf_sched_set_stats(struct bpf_sched *bs, bool on);
int bpf_sched_drain(struct bpf_sched *bs, struct bpf_sched_batch *b);
void bpf_sched_batch_release(struct bpf_sched_batch *b);
int bpf_sched_window(struct bpf_sched *bs, struct window_bpf *wb,
    unsigned hz);
int bpf_sched_prog_stats(struct bpf_sched *bs,
    struct vbpf_prog_stat ret[VITALS_BPF_PROGS]);
int bpf_sched_totals(struct bpf_sched *bs, uint64_t ret[VITALS_BPF_TOT]);
int bpf_sched_unpin(const char *bpffs);

/* collector.c: a hook on the closing window, before anyone sees it */
typedef void (*window_close_hook)(struct window *w, void *arg);
void collector_set_close_hook(struct collector *c, window_close_hook fn,
    void *arg);

/* ------------------------------------------- gpumem.c, gpumem_bpf.c */

/*
 * The platform's pins, tried in order (a ':'-separated list): AOSP main's
 * gpu_mem.o pins map_gpu_mem_gpu_mem_total_map; Android 15 and older
 * (gpuMem.o) pin map_gpuMem_gpu_mem_total_map.
 */
#define VITALS_GPUMEM_MAP_MAIN "/sys/fs/bpf/map_gpu_mem_gpu_mem_total_map"
#define VITALS_GPUMEM_MAP_OLD "/sys/fs/bpf/map_gpuMem_gpu_mem_total_map"
#define VITALS_GPUMEM_MAP VITALS_GPUMEM_MAP_MAIN ":" VITALS_GPUMEM_MAP_OLD
#define VITALS_GPUMEM_ATTACH_S 30 /* own program: attach retry time */

/* Config `gpumem_load`: may vitalsd load its own program. */
enum gpumem_load {
	GPUMEM_LOAD_AUTO,     /* own program when no map is at gpumem_map */
	GPUMEM_LOAD_MAP_ONLY, /* read gpumem_map only (Android) */
	GPUMEM_LOAD_OFF,      /* no GPU memory at all */
};

/* The scanner's answer for a pid: 0 and its live instance, or -ESRCH. */
typedef int (*gpumem_lookup_fn)(void *arg, int32_t pid,
    uint64_t *ret_starttime, char *ret_name, size_t namesz);

struct gpumem_opts {
	const char *map_path; /* the platform map, or ':'-separated maps tried
			       * in order; NULL: VITALS_GPUMEM_MAP */
	const char *bpffs;    /* own program's pins; NULL: not pinned */
	unsigned load;	      /* enum gpumem_load */
	unsigned attach_s;    /* own program: retry attaching this long */
	const char *tracefs;  /* where the tracepoint is looked up; NULL:
			       * /sys/kernel/tracing, then debug/tracing */
};

/* The live answer (GpuMem without a span). */
struct gpumem_view {
	struct window_gpumem st; /* counters: of the open window so far */
	int64_t at_mono_ns;	 /* last traversal, 0 none */
	struct window_gpu_proc *procs; /* gpu, then pid order */
	size_t n;
};

/* One instance over a span of stored windows (store_gpumem.c). */
struct gpumem_span {
	struct window_gpu_proc p; /* bytes: at the last window's end */
	uint64_t first_bytes;	  /* at the first window's end */
	int64_t first_wall_ns, last_wall_ns; /* those windows' ends */
	uint32_t windows;	  /* windows it appears in */
};

struct gpumem;
struct gpumem_bpf;

/* proc_scan.c, collector.c: the live instance of pid, for attribution */
int procscan_lookup(const struct procscan *ps, int32_t pid,
    uint64_t *ret_starttime, char *ret_name, size_t namesz);
int collector_proc_lookup(const struct collector *c, int32_t pid,
    uint64_t *ret_starttime, char *ret_name, size_t namesz);

/* gpumem.c */
const char *gpumem_state_name(unsigned st);
const char *gpumem_why_name(unsigned why);
const char *gpumem_source_name(unsigned src);
bool gpumem_saturated(uint32_t entries, uint32_t capacity);
int gpumem_new(const struct gpumem_opts *o, struct gpumem **ret);
struct gpumem *gpumem_free(struct gpumem *g);
void gpumem_set_lookup(struct gpumem *g, gpumem_lookup_fn fn, void *arg);
int gpumem_tick(struct gpumem *g, int64_t mono_ns);
/* The own program's first attach attempt, at setup while privileged. */
void gpumem_attach_now(struct gpumem *g, int64_t mono_ns);
bool gpumem_uses_bpf(const struct gpumem *g);
/* One gpu_mem/gpu_mem_total event (the ftrace reader): the pair's new
 * total (0: deleted), stamped on CLOCK_MONOTONIC. Loop thread only. */
void gpumem_note_event(struct gpumem *g, uint32_t gpu_id, int32_t pid,
    uint64_t size, int64_t mono_ns);
int gpumem_window(struct gpumem *g, struct window *w);
int gpumem_view(const struct gpumem *g, struct gpumem_view *ret);
void gpumem_view_release(struct gpumem_view *v);
unsigned gpumem_state(const struct gpumem *g, unsigned *ret_why,
    int *ret_err);
/* The pin read now, or the one whose open failed; "" none (own map). */
const char *gpumem_map_used(const struct gpumem *g);
void dump_window_gpumem(const struct window *w, struct vbuf *out);
int window_gpu_merge(struct window *acc, const struct window *src);

/* gpumem_map.c: one read of a map with AOSP's layout, bpf() calls only */
#define GPUMEM_VAL_TOTAL 8     /* value: u64 total bytes (AOSP) */
#define GPUMEM_VAL_IMPORTED 16 /* value: u64 total, u64 imported of it */
struct gpumem_walk {
	uint32_t value_size; /* GPUMEM_VAL_*; 0: GPUMEM_VAL_TOTAL */
	uint64_t *key, *val; /* n pairs, each key once */
	uint64_t *imp;	     /* imported bytes; NULL unless value_size 16 */
	size_t n, cap;
	uint32_t restarts, vanished, duplicates;
	bool truncated;
};

int gpumem_map_open(const char *path, int *ret_fd, uint32_t *ret_capacity,
    uint32_t *ret_value_size);
int gpumem_map_check(int fd, uint32_t *ret_capacity);
int gpumem_map_layout(int fd, uint32_t *ret_capacity,
    uint32_t *ret_value_size);
int gpumem_map_walk(int fd, uint32_t capacity, struct gpumem_walk *ret);
void gpumem_walk_release(struct gpumem_walk *wk);

/* gpumem_bpf.c: the own program; -EOPNOTSUPP without BPF */
int gpumem_bpf_load(const char *bpffs, struct gpumem_bpf **ret,
    int *ret_map_fd);
int gpumem_bpf_attach(struct gpumem_bpf *gb, const char *tracefs);
int gpumem_bpf_stats(struct gpumem_bpf *gb, uint64_t *ret_events,
    uint64_t *ret_insert_fail);
struct gpumem_bpf *gpumem_bpf_free(struct gpumem_bpf *gb);

void gpumem_get_state(const struct gpumem *g, struct window_gpumem *ret);

/* rpc.c */
struct rpc_query;
int rpc_answer_gpumem_span(const struct rpc_query *q,
    const struct gpumem_span *sp, size_t n, const struct window_gpumem *st,
    uint32_t max, uint8_t **ret, size_t *ret_len);

/* store_gpumem.c: spans of stored windows (store lock taken). ret_state
 * (may be NULL): the newest window's, saturated if any window was. */
struct store;
int store_gpumem_span(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, struct gpumem_span **ret, size_t *ret_n,
    struct window_gpumem *ret_state);
int store_gpumem_growth(struct store *s, uint32_t gpu_id, int32_t pid,
    uint64_t starttime, int64_t from_wall_ns, int64_t to_wall_ns,
    struct gpumem_span *ret);
/* ------------------------------------------- wss*.c: working-set monitor */

/* /proc/<pid>/pagemap entry bits (Documentation/admin-guide/mm/pagemap). */
#define WSS_PM_PRESENT (1ULL << 63)
#define WSS_PM_SWAPPED (1ULL << 62)
#define WSS_PM_FILE (1ULL << 61)
#define WSS_PM_EXCLUSIVE (1ULL << 56)
#define WSS_PM_SOFT_DIRTY (1ULL << 55)
#define WSS_PM_PFN_MASK ((1ULL << 55) - 1)

#define WSS_REGIONS_MAX 256 /* regions kept per target; more are counted */
#define WSS_LABEL_LEN 80

/* One decoded pagemap entry. pfn is 0 when not present, and also when the
 * reader lacks CAP_SYS_ADMIN (the kernel zeroes it). */
struct wss_pm {
	uint64_t pfn;
	bool present, swapped, file, exclusive, soft_dirty;
};

/* Syscalls and bytes of one pass's pagemap and bitmap I/O. */
struct wss_io {
	uint64_t pm_reads, bm_reads, bm_writes;
	uint64_t bytes;
};

/* The page_idle bitmap words one pass touches: word[i] (= pfn / 64) in
 * increasing order, mask[i] the PFNs of ours in it, bits[i] as read back. */
struct wss_idle {
	uint64_t *word, *mask, *bits;
	size_t n, cap;
};

/* wss_pagemap.c: pagemap entries and page_idle words; fds in, no paths. */
void wss_pm_decode(uint64_t raw, struct wss_pm *ret);
int wss_pm_read(int fd, uint64_t vaddr, size_t npages, unsigned page_size,
    uint64_t *ret, struct wss_io *io);
int wss_idle_build(struct wss_idle *b, const uint64_t *pfn, size_t n);
int wss_idle_mark(int fd, const struct wss_idle *b, struct wss_io *io);
int wss_idle_read(int fd, struct wss_idle *b, struct wss_io *io);
int wss_idle_state(const struct wss_idle *b, uint64_t pfn);
void wss_idle_release(struct wss_idle *b);

/* One line of /proc/<pid>/maps. */
struct wss_map {
	uint64_t start, end, offset, inode;
	char perms[5];
	char path[256]; /* "" anonymous; cut at 255 bytes */
};

/* One region of /proc/<pid>/smaps with the fields Method B reads. */
struct wss_smaps {
	uint64_t start, end;
	uint64_t rss_kb, referenced_kb, anon_kb, swap_kb;
};

enum wss_mode { WSS_MODE_HEAP, WSS_MODE_LIBRARY };
enum wss_method {
	WSS_METHOD_AUTO,       /* page_idle where it works, else clear_refs */
	WSS_METHOD_PAGE_IDLE,  /* A: page-level, needs CAP_SYS_ADMIN */
	WSS_METHOD_CLEAR_REFS, /* B: region-level Referenced */
};

/* wss_maps.c: pure */
int wss_maps_line(const char *line, size_t len, struct wss_map *ret);
bool wss_map_selected(const struct wss_map *m, enum wss_mode mode,
    const char *lib, bool apk_fallback);
void wss_map_label(const struct wss_map *m, enum wss_mode mode, char *ret,
    size_t retsz);
uint64_t wss_hash(const void *p, size_t n);
unsigned wss_adapt_interval(unsigned cur_ms, uint64_t accessed,
    uint64_t resident, unsigned min_ms, unsigned max_ms);
const char *wss_mode_name(unsigned mode);
const char *wss_method_name(unsigned method);

/* wss_refs.c: Method B */
int wss_smaps_parse(const char *buf, size_t len, struct wss_smaps **ret,
    size_t *ret_n);
int wss_refs_clear(int procfd, int32_t pid);
int wss_refs_write(int fd);

/* A target process's region as last sampled. */
struct wss_region {
	uint64_t start, end;
	char perms[5];
	char label[WSS_LABEL_LEN];
	uint32_t pages;	  /* sampled: (end − start) / page, after any cut */
	uint32_t cut;	  /* pages beyond the page limit, not sampled */
	uint32_t resident, accessed, idle, not_resident;
	uint32_t moved;	  /* A: PFN changed inside the pass */
	uint64_t rss_kb, referenced_kb; /* B: smaps figures */
	bool gone;	  /* unmapped inside the pass: accessed unknown */
	bool done;	  /* a pass has completed on it */
};

/* What the API shows of one target (wss.c keeps the rest). */
struct wss_status {
	int32_t pid;
	uint64_t starttime; /* identity with pid */
	char name[WSS_NAME_LEN];
	unsigned mode;	    /* enum wss_mode */
	char lib[WSS_NAME_LEN];
	unsigned method;    /* method of the last pass (enum wss_method) */
	char note[128];	    /* why that method; "" when asked for */
	bool apk_fallback;  /* library found only as base.apk mappings */
	bool ended;
	char end_reason[64];
	unsigned interval_ms, interval_min_ms, interval_max_ms;
	uint64_t seq;	    /* passes completed */
	int64_t last_mono_ns;
	uint64_t pass_ns_last, pass_ns_max, pass_ns_sum; /* wall on the loop */
	uint64_t pass_cpu_ns_sum; /* thread CPU time of those passes */
	uint64_t maps_changes, read_errors, pfn_zeroed, regions_over;
	uint64_t refs_over; /* B: Referenced above resident, clamped */
	uint64_t log_lines, log_errors;
	struct wss_io io; /* cumulative */
	size_t nregions;
	struct wss_region *regions;
	char files[64];	    /* how its /proc files were last opened:
			     * "privileged helper", "direct" (wss_open.c) */
};

struct wss_opts {
	const char *proc_root, *sys_root;
	const struct wss_config *cfg;
	const char *user;   /* the service user the daemon drops to; NULL:
			     * it keeps its credentials */
	uint64_t keep_caps; /* capabilities it keeps after the drop */
};

struct wss;

/* wss.c */
void wss_config_init(struct wss_config *c);
void wss_config_release(struct wss_config *c);
int wss_config_set(struct wss_config *c, const char *key, const char *value);
int wss_new(struct event_base *base, const struct wss_opts *o,
    struct wss **ret);
struct wss *wss_free(struct wss *w);
int wss_start(struct wss *w, int32_t pid, unsigned mode, const char *lib,
    unsigned method, char *err, size_t errsz);
int wss_stop(struct wss *w, int32_t pid);
int wss_find_name(struct wss *w, const char *name, int32_t *ret_pid);
const struct wss_status *wss_get(struct wss *w, int32_t pid);
size_t wss_list(struct wss *w, const struct wss_status **ret, size_t max);
int wss_pass_begin(struct wss *w, int32_t pid);
int wss_pass_end(struct wss *w, int32_t pid);
int wss_rules_scan(struct wss *w);
bool wss_page_idle(const struct wss *w);
bool wss_damon(const struct wss *w, char *note, size_t notesz);
unsigned wss_npages(const struct wss *w);
/* wss_open.c: how target files are opened (privileged helper or direct),
 * and how many opens the daemon's credentials refused */
const char *wss_access(const struct wss *w, uint64_t *ret_denied);
void wss_limits(const struct wss *w, uint32_t *ret_targets,
    uint32_t *ret_pages);
/* daemon.c */
struct wss *vitalsd_wss(struct vitalsd *d);

/* A target's region in a window: its last completed pass there. */
struct window_wss_region {
	uint64_t start, end;
	char label[WSS_LABEL_LEN];
	uint32_t pages, resident, accessed, idle, not_resident;
	bool gone;
};

/* A target in a window: passes completed inside it and their cost. */
struct window_wss {
	int32_t pid;
	uint64_t starttime;
	char name[WSS_NAME_LEN];
	char lib[WSS_NAME_LEN];
	uint32_t mode, method;	  /* method of the last pass */
	uint32_t interval_ms;	  /* at close */
	uint32_t passes;	  /* completed in the window */
	uint64_t pass_ns_sum, pass_ns_max, pass_cpu_ns;
	uint32_t maps_changes, read_errors, pfn_zeroed; /* in the window */
	bool ended;		  /* ended in the window */
	uint32_t nregions;	  /* of the last pass; 0: no pass yet */
	struct window_wss_region *regions;
};

/* wss.c: the closing window gets every target's part (window.c copies
 * and frees it with the window) */
int wss_window_fill(struct wss *w, struct window *win);
void window_wss_free(struct window_wss *v, size_t n);
int window_wss_dup(const struct window_wss *v, size_t n,
    struct window_wss **ret);
/* wss_maps.c: the window's targets in the dump text */
void dump_window_wss(const struct window *w, struct vbuf *out);

/* ------------------------------------------- heapprofd triggers (issue 8) */

#define HP_NAME_MAX 256	  /* a normalised process name, package, installer */
#define HP_RULE_NAME_MAX 64
#define HP_PIDS_MAX 16	  /* pids of one session */
#define HP_INSTALLERS_MAX 8

/* Why a session was not started; the wire enum (HeapprofdRefusal) and the
 * store use the same numbers. */
enum hp_refusal {
	HP_OK,
	HP_REFUSE_NOT_ELIGIBLE,	 /* the platform's profiling rules say no */
	HP_REFUSE_RATE_PROCESS,	 /* the target's budget or cooldown */
	HP_REFUSE_RATE_SYSTEM,	 /* the system-wide budget */
	HP_REFUSE_IN_PROGRESS,	 /* one session at a time */
	HP_REFUSE_INVALID,	 /* bad parameters, no such target */
	HP_REFUSE_UNAVAILABLE,	 /* no perfetto binary, no store */
	HP_REFUSE__MAX
};

/* Who Perfetto will say started the session (DataSourceConfig). */
enum hp_initiator {
	HP_INIT_UNSPECIFIED,	/* shell-like: profileable_from_shell */
	HP_INIT_TRUSTED_SYSTEM, /* statsd-originated sessions only */
};

enum hp_build { HP_BUILD_USER, HP_BUILD_USERDEBUG, HP_BUILD_ENG };

/* How a session's perfetto is started (Health.heapprofd.spawn). */
enum hp_spawn_state {
	HP_SPAWN_NONE,	  /* no perfetto binary configured */
	HP_SPAWN_DIRECT,  /* the daemon forks it (seccomp off or log) */
	HP_SPAWN_HELPER,  /* the privileged helper's spawner runs it */
	HP_SPAWN_BLOCKED, /* seccomp on and no helper: refused */
	HP_SPAWN_FAILED,  /* the spawner did not start: refused */
	HP_SPAWN_LOST,	  /* the spawner's channel closed: refused */
};

/* No packages.list (not Android): what eligibility answers. */
enum hp_host { HP_HOST_REFUSE, HP_HOST_ALLOW };

/* Why eligibility answered as it did. */
enum hp_elig_why {
	HP_ELIG_OK,		/* the package allows this initiator */
	HP_ELIG_DEBUG_BUILD,	/* userdebug / eng: everything */
	HP_ELIG_HOST_ALLOW,	/* no packages.list; host policy allows */
	HP_ELIG_PLATFORM_TRUSTED, /* platform uid, trusted-system */
	HP_ELIG_ISOLATED_TRUSTED, /* isolated uid, every package allows */
	/* refusals from here */
	HP_ELIG_HOST_REFUSE,	/* no packages.list; host policy refuses */
	HP_ELIG_PLATFORM_UID,	/* < 10000 and not trusted-system */
	HP_ELIG_ISOLATED_UID,	/* isolated and not (trusted + all) */
	HP_ELIG_OTHER_UID,	/* outside every range that may be profiled */
	HP_ELIG_NO_PACKAGE,	/* the uid has no packages.list line */
	HP_ELIG_INSTALLER,	/* installed by none of target_installed_by */
	HP_ELIG_NOT_PROFILEABLE, /* the flags this initiator needs are off */
	HP_ELIG_MALFORMED,	/* packages.list has malformed lines */
	HP_ELIG__MAX
};

/* One packages.list line. */
struct hp_package {
	char name[HP_NAME_MAX];
	uint64_t uid;
	bool debuggable, profileable_from_shell, profileable;
	int64_t version_code;
	char installer[HP_NAME_MAX]; /* "" when the line has none */
};

struct hp_packages {
	struct hp_package *p;
	size_t n, cap;
	unsigned malformed;	 /* lines that did not parse: counted, skipped */
	unsigned first_bad_line; /* 1-based; 0 none */
};

struct hp_elig_policy {
	enum hp_initiator initiator;
	enum hp_build build;
	enum hp_host host;
	unsigned ninstalled_by;
	char installed_by[HP_INSTALLERS_MAX][HP_NAME_MAX];
};

/* hp_elig.c: pure */
int hp_normalize(const char *cmdline, size_t len, char *ret, size_t retsz);
int hp_packages_parse(const char *buf, size_t len, struct hp_packages *ret);
void hp_packages_release(struct hp_packages *pk);
bool hp_eligible(const struct hp_elig_policy *pol,
    const struct hp_packages *pk, uint32_t uid, enum hp_elig_why *ret_why);
const char *hp_elig_why_name(enum hp_elig_why why);
const char *hp_refusal_name(enum hp_refusal r);
const char *hp_initiator_name(enum hp_initiator i);
int hp_build_parse(const char *value, enum hp_build *ret);
const char *hp_build_name(enum hp_build b);
const char *hp_spawn_state_name(enum hp_spawn_state s);

/* Budgets: 0 in a limit means "no limit". */
struct hp_limits {
	unsigned proc_hour, proc_day, proc_week;
	unsigned sys_hour, sys_day, sys_week;
	unsigned cooldown_s; /* per target, from one start to the next */
};

/* One started session, as budgets see it. */
struct hp_budget_rec {
	int64_t start_wall_ns;
	char target[HP_NAME_MAX]; /* the budget key: normalised name */
};

#define HP_WEEK_NS (7LL * 86400 * NSEC_PER_SEC)

/* hp_budget.c: pure; now from the caller (an injectable clock) */
enum hp_refusal hp_budget_check(const struct hp_limits *l,
    const struct hp_budget_rec *recs, size_t n, const char *target,
    int64_t now_wall_ns, int64_t *ret_retry_ns, char *why, size_t whysz);

/* What one session asks Perfetto for. */
struct hp_params {
	unsigned npids;
	int32_t pids[HP_PIDS_MAX];
	unsigned nnames;
	char names[HP_PIDS_MAX][HP_NAME_MAX]; /* normalised process_cmdline */
	uint32_t duration_ms;
	uint64_t sampling_interval_bytes;
	uint64_t shmem_size_bytes;
	uint32_t dump_interval_ms; /* continuous dumps; 0: only at the end */
	bool block_client;
	uint32_t max_heapprofd_memory_kb; /* 0: not set */
	uint64_t max_heapprofd_cpu_secs;  /* 0: not set */
	unsigned ninstalled_by;
	char installed_by[HP_INSTALLERS_MAX][HP_NAME_MAX];
	uint32_t buffer_kb;
	uint32_t proc_stats_poll_ms;
};

#define HP_SHMEM_MIN 8192ULL
#define HP_SHMEM_MAX (500ULL << 20)
#define HP_DURATION_MAX_MS (24u * 3600 * 1000)

/* hp_config.c: parameters checked, the Perfetto config as bytes and text */
void hp_params_default(struct hp_params *p);
int hp_params_check(const struct hp_params *p, char *why, size_t whysz);
int hp_config_encode(const struct hp_params *p, uint8_t **ret,
    size_t *ret_len);
int hp_config_text(const struct hp_params *p, struct vbuf *out);

/* A rule: a condition over windows, which processes it watches, what is
 * profiled when it holds, and the session's parameters. */
enum hp_cond {
	HP_COND_RSS_GROWTH,  /* RSS grew by bytes within span */
	HP_COND_ANON_GROWTH, /* RssAnon grew by bytes within span */
	HP_COND_GPU_GROWTH,  /* GPU memory grew by bytes within span */
	HP_COND_MAJFLT_RATE, /* major faults per second over a window */
	HP_COND_PSI_MEMORY,  /* memory PSI some avg10 (%) in a window */
};

enum hp_sel { HP_SEL_ANY, HP_SEL_NAME, HP_SEL_UID };
enum hp_tgt { HP_TGT_MATCHED, HP_TGT_NAME, HP_TGT_UID };

struct hp_rule {
	char name[HP_RULE_NAME_MAX];
	enum hp_cond cond;
	uint64_t bytes;	 /* growth conditions */
	int64_t span_ns; /* growth conditions */
	double level;	 /* rate (per s) or PSI percent */
	enum hp_sel sel;
	char sel_name[HP_NAME_MAX];
	uint32_t sel_uid;
	enum hp_tgt tgt;
	char tgt_name[HP_NAME_MAX];
	uint32_t tgt_uid;
	/* overrides of the configured defaults; 0: the default */
	uint32_t duration_ms;
	uint64_t sampling_interval_bytes;
	uint64_t shmem_size_bytes;
	uint32_t dump_interval_ms;
};

/* What a rule evaluation may ask of the daemon. */
struct hp_eval_ctx {
	/* heapprofd's normalised name of a process (hp_normalize) */
	int (*name)(void *arg, int32_t pid, char *buf, size_t sz);
	/* RssAnon, kB */
	int (*anon_kb)(void *arg, int32_t pid, uint64_t starttime,
	    uint64_t *kb);
	/* GPU memory of a process (GpuMem); NULL or -ENOENT: unknown */
	int (*gpu_bytes)(void *arg, const struct window *w, int32_t pid,
	    uint64_t starttime, uint64_t *bytes);
	void *arg;
	unsigned page_size;
};

/* A rule that held. */
struct hp_fire {
	unsigned rule; /* index */
	int32_t pid;   /* the process that matched; 0 system conditions */
	uint64_t starttime;
	uint32_t uid;
	char name[HP_NAME_MAX]; /* its normalised name, "" unknown */
	char why[160];
};

struct hp_rule_stats {
	uint64_t evaluations, fired;
	uint64_t gpu_unavailable; /* GPU growth asked, no GpuMem figure */
	uint64_t name_failed, anon_failed; /* reads that failed */
	uint64_t tracked_dropped; /* processes beyond the tracking cap */
};

struct hp_rules;

/* hp_rules.c */
int hp_rule_parse(const char *s, struct hp_rule *ret, char *err,
    size_t errsz);
const char *hp_cond_name(enum hp_cond c);
int hp_rules_new(const struct hp_rule *rules, unsigned n,
    struct hp_rules **ret);
struct hp_rules *hp_rules_free(struct hp_rules *hr);
int hp_rules_eval(struct hp_rules *hr, const struct window *w,
    const struct hp_eval_ctx *ctx, struct hp_fire *ret, size_t max,
    size_t *ret_n);
void hp_rules_stats(const struct hp_rules *hr, struct hp_rule_stats *ret);

/* Configuration of the heapprofd triggers (struct config.hp). */
struct hp_settings {
	char *perfetto;	     /* the perfetto binary; NULL: none */
	char *packages_list; /* /data/system/packages.list */
	struct hp_elig_policy policy;
	struct hp_limits limits;
	struct hp_params defaults; /* no targets: parameters only */
	uint32_t grace_ms;	   /* timeout = duration + grace */
	uint32_t kill_after_ms;	   /* SIGTERM, then SIGKILL after this */
	unsigned nrules;
	struct hp_rule *rules;
};

void hp_settings_init(struct hp_settings *hs);
void hp_settings_release(struct hp_settings *hs);
int hp_settings_set(struct hp_settings *hs, const char *key,
    const char *value);

/* One session record (store_heapprofd.c, heapprofd.c). */
struct hp_record {
	int64_t id;
	int64_t created_wall_ns;
	bool by_rule;		    /* else a caller */
	char rule[HP_RULE_NAME_MAX]; /* by_rule */
	uint32_t caller_uid;	    /* !by_rule */
	char target[HP_NAME_MAX];   /* "pid 123" or the name asked for */
	char target_key[HP_NAME_MAX]; /* budget key: normalised name */
	char params[512];	    /* one-line summary of hp_params */
	bool started;		    /* a child ran: counts for budgets */
	int64_t start_wall_ns, end_wall_ns; /* 0: not yet */
	int32_t child_pid;
	uint64_t child_starttime;
	char outcome[32];	 /* running, completed, failed, ... */
	unsigned refusal;	 /* enum hp_refusal */
	char message[256];
	int32_t exit_status;	 /* −1: none */
	int32_t term_signal;	 /* 0: none */
	char output_path[512];
	int64_t output_bytes;	 /* −1: no file */
};

/* store_heapprofd.c (loop thread; the store's lock is taken) */
int store_hp_insert(struct store *s, struct hp_record *r);
int store_hp_update(struct store *s, const struct hp_record *r);
int store_hp_budget(struct store *s, int64_t since_wall_ns,
    struct hp_budget_rec **ret, size_t *ret_n);
int store_hp_list(struct store *s, unsigned limit, struct hp_record **ret,
    size_t *ret_n);
int store_hp_running(struct store *s, struct hp_record **ret,
    size_t *ret_n);
int store_hp_get(struct store *s, int64_t id, struct hp_record *ret);

/* A start request, from a caller or a rule. */
struct hp_request {
	bool by_rule;
	const struct hp_rule *rule; /* by_rule */
	uint32_t caller_uid;
	int32_t pid;		    /* target: pid, or */
	char name[HP_NAME_MAX];	    /* target: exact name, or */
	bool by_uid;		    /* target: every process of uid */
	uint32_t uid;
	uint32_t duration_ms;	    /* 0: the defaults' ... */
	uint64_t sampling_interval_bytes;
	uint64_t shmem_size_bytes;
	uint32_t dump_interval_ms;
	bool block_client;
	uint32_t max_heapprofd_memory_kb;
	uint64_t max_heapprofd_cpu_secs;
	bool dry_run;
};

struct hp_answer {
	enum hp_refusal refusal;
	char message[256];
	int64_t id;	   /* session record; 0: dry run */
	struct vbuf text;  /* dry run: the config as text; caller releases */
	char output_path[512];
};

struct hp_stats {
	uint64_t requests, started, dry_runs, denied;
	uint64_t refused[HP_REFUSE__MAX];
	uint64_t completed, failed, timeouts, cancelled, spawn_failed;
	uint64_t restarted_closed; /* found running at start, closed */
	uint64_t store_errors;
	bool running;
	int64_t running_id;
	unsigned rules;
	struct hp_rule_stats rs;
	unsigned last_refusal; /* enum hp_refusal; 0 none */
	char last_message[256];
	unsigned initiator; /* enum hp_initiator in force */
	unsigned spawn;	    /* enum hp_spawn_state */
	char spawn_detail[160];
	unsigned build;	    /* enum hp_build in force */
	char build_source[64]; /* "ro.build.type" or the config key */
};

struct heapprofd;

/* heapprofd.c: sessions, their child process on the loop, the rules */
int heapprofd_new(struct event_base *base, const struct config *cfg,
    struct store *store, struct heapprofd **ret);
struct heapprofd *heapprofd_free(struct heapprofd *hp);
int heapprofd_start(struct heapprofd *hp, const struct hp_request *rq,
    struct hp_answer *ret);
int heapprofd_cancel(struct heapprofd *hp, int64_t id, char *msg,
    size_t msgsz);
int heapprofd_list(struct heapprofd *hp, unsigned limit,
    struct hp_record **ret, size_t *ret_n);
void heapprofd_window(struct heapprofd *hp, const struct window *w);
void heapprofd_get_stats(struct heapprofd *hp, struct hp_stats *ret);
void heapprofd_note_denied(struct heapprofd *hp);
void heapprofd_set_gpu(struct heapprofd *hp,
    int (*gpu_bytes)(void *arg, const struct window *w, int32_t pid,
	uint64_t starttime, uint64_t *bytes), void *arg);

/* daemon.c, for the control plane; NULL: none */
struct heapprofd *vitalsd_heapprofd(struct vitalsd *d);
/* ---------------------------------------------------------------- privs.c */

#define VITALS_PRIVS_GROUPS 16 /* supplementary groups of the service user */
#define VITALS_CAP_MAX 64      /* capability numbers fit a uint64_t mask */

/* What the privilege drop is asked to do (config keys user, group,
 * capabilities, seccomp), with names resolved by privs_resolve(). */
struct privs_req {
	bool drop;		/* a user is configured */
	uint32_t uid, gid;	/* the user's, and its primary group */
	uint32_t ngroups;
	uint32_t groups[VITALS_PRIVS_GROUPS]; /* supplementary */
	uint64_t keep;		/* capabilities to keep (bit = CAP_*) */
	unsigned seccomp;	/* enum privs_seccomp */
	bool need_bpf;		/* BPF fds are in use after the drop */
	char user[64];		/* for the log: the name given */
};

enum privs_seccomp {
	PRIVS_SECCOMP_OFF,
	PRIVS_SECCOMP_ON,  /* any other syscall fails with EPERM */
	PRIVS_SECCOMP_LOG, /* any other syscall is allowed and logged */
};

/* The privileges the daemon runs with, as verified after the drop
 * (Health.privileges). */
struct privs_state {
	bool dropped;	   /* the drop ran (a user is configured) */
	bool verified;	   /* every check after it held */
	uint32_t uid, gid; /* real = effective = saved */
	uint32_t ngroups;
	uint32_t groups[VITALS_PRIVS_GROUPS];
	uint64_t cap_eff, cap_prm, cap_inh, cap_bnd, cap_amb;
	uint64_t cap_auto; /* kept because the kernel needs it (bpf()) */
	bool no_new_privs;
	unsigned seccomp;  /* enum privs_seccomp in force */
	uint32_t seccomp_rules; /* syscalls the filter allows */
	char user[64];
};

int privs_cap_parse(const char *s, uint64_t *ret);
const char *privs_cap_name(unsigned cap);
int privs_cap_format(uint64_t mask, char *buf, size_t bufsz);
const char *privs_seccomp_name(unsigned mode);
int privs_resolve(const char *user, const char *groups, uint64_t keep,
    unsigned seccomp, struct privs_req *ret, char *err, size_t errsz);
/* statedir.c: the state directory as the service user reaches it */
struct stat;
void statedir_set_owner(const struct privs_req *req);
uint32_t statedir_owner_uid(void);
int statedir_fs_enter(void);
void statedir_fs_leave(void);
int statedir_open(const char *path, int *ret_fd, char *err, size_t errsz);
int statedir_check_file(int dirfd, const char *name, uint32_t want_uid,
    char *err, size_t errsz);
int statedir_check_stat(const struct stat *st, const char *name,
    uint32_t want_uid, char *err, size_t errsz);
int privs_drop(const struct privs_req *req, struct privs_state *ret);
int privs_read(struct privs_state *ret);
void privs_get(struct privs_state *ret);
void privs_log(const struct privs_state *st);
/* daemon.c, for the drop */
bool vitalsd_uses_bpf(struct vitalsd *d);

/* seccomp.c: the daemon's syscall allowlist (classic BPF) */
int seccomp_install(unsigned mode, uint32_t *ret_rules);
size_t seccomp_syscalls(const char *const **ret_names);

/* privhelper.c: the privileged helper (doc/privileges.md) */
enum privhelper_file {
	PH_FILE_MAPS,	    /* /proc/<pid>/maps, read */
	PH_FILE_SMAPS,	    /* /proc/<pid>/smaps, read */
	PH_FILE_PAGEMAP,    /* /proc/<pid>/pagemap, read, with PFNs */
	PH_FILE_CLEAR_REFS, /* /proc/<pid>/clear_refs, write */
	PH_FILE__MAX
};

struct privhelper;

int privhelper_start(const char *proc_root, const char *sys_root,
    const char *tracefs, struct privhelper **ret);
struct privhelper *privhelper_stop(struct privhelper *ph);
pid_t privhelper_pid(const struct privhelper *ph);
int privhelper_open(struct privhelper *ph, int32_t pid, uint64_t starttime,
    enum privhelper_file which, int *ret_fd);
int privhelper_page_idle(struct privhelper *ph, int *ret_fd);
int privhelper_rmdir_instance(struct privhelper *ph, const char *name);
void privhelper_set(struct privhelper *ph);
struct privhelper *privhelper_get(void);
int privhelper_raw(struct privhelper *ph, const void *buf, size_t len);
size_t privhelper_req_size(void);

/* privhelper.c: the channel's health and the test hooks */
struct privhelper_stats {
	uint64_t calls;	  /* requests made */
	uint64_t stale;	  /* answers to earlier requests discarded */
	uint64_t refused; /* calls failed EPIPE: the channel is closed */
	int dead;	  /* 0, or the -errno that closed the channel */
	uint64_t interrupted; /* waits a signal cut short, resumed */
};

void privhelper_stats(struct privhelper *ph, struct privhelper_stats *ret);
void privhelper_set_timeout(struct privhelper *ph, int ms);
int privhelper_send_stale(struct privhelper *ph, int32_t pid,
    enum privhelper_file which);

/* privhelper_spawn.c: the helper's spawner, which runs perfetto for
 * heapprofd sessions outside the daemon's seccomp filter */
struct ph_spawner;

enum ph_spawn_kind {
	PH_SPAWN_STARTED, /* a spawn's answer: err, or the child's pid */
	PH_SPAWN_EXITED,  /* a session's child ended: its wait status */
	PH_SPAWN_ANSWER,  /* a signal request's answer: err */
};

#define PH_SPAWN_BACKSTOP 1u /* EXITED: the spawner killed it at the
			      * request's timeout */

struct ph_spawn_event {
	enum ph_spawn_kind kind;
	uint64_t seq; /* the request's; EXITED: the session's */
	int err;      /* 0 or -errno */
	int32_t pid;
	int status;
	uint32_t flags;
};

int privhelper_spawn_start(const char *perfetto, const struct privs_req *who,
    struct ph_spawner **ret);
struct ph_spawner *privhelper_spawn_stop(struct ph_spawner *sp);
pid_t privhelper_spawn_pid(const struct ph_spawner *sp);
int privhelper_spawn_fd(const struct ph_spawner *sp);
int privhelper_spawn_request(struct ph_spawner *sp, int fd_in, int fd_out,
    int fd_err, uint32_t timeout_ms, uint64_t *ret_session);
int privhelper_spawn_signal(struct ph_spawner *sp, uint64_t session,
    int sig);
int privhelper_spawn_read(struct ph_spawner *sp, struct ph_spawn_event *ret);
int privhelper_spawn_wait(struct ph_spawner *sp, int ms,
    struct ph_spawn_event *ret);
int privhelper_spawn_close(struct ph_spawner *sp, int why);
int privhelper_spawn_dead(const struct ph_spawner *sp);
void privhelper_spawn_set(struct ph_spawner *sp, int start_err);
struct ph_spawner *privhelper_spawn_get(int *ret_start_err);
size_t privhelper_spawn_denied(const long **ret);
/* tests */
int privhelper_spawn_raw(struct ph_spawner *sp, const void *buf, size_t len,
    const int *fds, unsigned nfds);
size_t privhelper_spawn_req(void *buf, size_t sz, unsigned op, uint64_t seq,
    uint64_t session, int sig, uint32_t timeout_ms);
uint64_t privhelper_spawn_seq(const struct ph_spawner *sp);

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
int prochidden_count(int cgfd, int procfd,
    bool (*seen)(int32_t pid, void *arg), void *arg, uint32_t *ret_unseen);
/* proc_scan.c: count at every window close when the mount hides */
int procscan_watch_hidden(struct procscan *ps, const char *sys_root);
/* --------------------------------------------- ftrace: the rest of it */

/* One ATrace marker, parsed (atrace.c). Strings point into the payload. */
struct atrace_msg {
	char type; /* 'B','E','C','S','F','G','H','I','N' */
	bool have_pid;
	int32_t pid;
	const char *name, *track;
	size_t name_len, track_len;
	int64_t value;	/* C */
	int64_t cookie; /* S, F, G, H */
};

/* A decoded record the trackers consume (ftrace_events.c fills it). */
struct ftrace_rec {
	uint64_t ts; /* trace clock ns (the instance's "mono" clock) */
	int32_t cpu;
	int32_t tid; /* common_pid */
	unsigned ev; /* enum ftrace_ev */
	union {
		struct {
			const char *buf;
			size_t len;
		} print;
		struct {
			int32_t prev_tid, next_tid;
			int64_t prev_state;
		} sw;
		struct {
			int32_t tid;
		} waking, exit;
		struct {
			int32_t debug_id, to_proc, to_thread;
			int32_t reply;
			uint32_t code, flags;
		} txn;
		struct {
			int32_t debug_id;
		} recv;
		struct {
			uint32_t gpu_id, pid;
			uint64_t size;
		} gpu;
	} u;
};

/* gpu_mem_total as delivered to the GPU memory timeline (issue 6). */
struct ftrace_gpu_mem {
	uint32_t gpu_id;
	int32_t pid;
	uint64_t size;
	int64_t mono_ns;
};
typedef void (*ftrace_gpu_mem_fn)(const struct ftrace_gpu_mem *e, void *arg);

/* atrace.c: the marker protocol and the slice, counter and sched trackers */
struct atrace;

int atrace_parse(const char *buf, size_t len, struct atrace_msg *ret);
int atrace_new(struct atrace **ret);
struct atrace *atrace_free(struct atrace *at);
void atrace_set_tgid_fn(struct atrace *at, int32_t (*fn)(int32_t, void *),
    void *arg);
void atrace_set_gpu_mem_cb(struct atrace *at, ftrace_gpu_mem_fn fn,
    void *arg);
void atrace_record(struct atrace *at, const struct ftrace_rec *r);
void atrace_lost(struct atrace *at);
void atrace_finish(struct atrace *at);
void atrace_window(struct atrace *at, struct window_trace *wt);
void window_trace_keep_slices(struct window_trace *wt,
    struct window_trace_slice *s, size_t n, uint32_t other_rows);
size_t atrace_open_slices(const struct atrace *at);

/* ftrace_window.c: merge for roll-ups, names, dump text */
const char *ftrace_state_name(unsigned st);
const char *ftrace_ev_name(unsigned ev);
const char *trace_kind_name(unsigned k);
void window_trace_merge(struct window_trace *acc,
    const struct window_trace *src);
void dump_window_trace(const struct window *w, unsigned topn,
    struct vbuf *out);

/* ftrace_events.c: raw ring-buffer pages → records (libtraceevent) */
struct fdec;

int fdec_new(const char *events_dir, struct fdec **ret);
struct fdec *fdec_free(struct fdec *fd);
bool fdec_has(const struct fdec *fd, unsigned ev);
typedef void (*fdec_fn)(const struct ftrace_rec *r, void *arg);
int fdec_page(struct fdec *fd, const void *page, size_t len, int cpu,
    fdec_fn fn, void *arg, int64_t *ret_missed);

/* ftrace.c: the instance, its per-CPU readers on the loop */
struct ftrace_opts {
	const char *tracefs;  /* NULL: libtracefs finds the mount */
	const char *instance; /* instance name */
	unsigned buffer_kb;   /* per CPU */
	bool sched;	      /* sched_switch and sched_waking */
	unsigned tick_ms;     /* drain period */
	unsigned max_pages;   /* per CPU per tick */
	unsigned wake_percent; /* buffer_percent: readiness at this fill */
};

struct ftrace;

int ftrace_open(struct event_base *base, const struct ftrace_opts *o,
    struct ftrace **ret, unsigned *ret_state, char *why, size_t whysz);
struct ftrace *ftrace_free(struct ftrace *ft);
int ftrace_tracing_dir(const char *tracefs, const char *sys_root, char *buf,
    size_t sz);
/* rpc_trace.c: the trace answer (op 18) */
int rpc_answer_trace(const struct rpc_query *q, struct window *const *w,
    size_t n, bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len);
bool rpc_trace_match(const struct rpc_query *q, const struct window *w,
    int32_t tgid);

void ftrace_set_gpu_mem_cb(struct ftrace *ft, ftrace_gpu_mem_fn fn,
    void *arg);
int ftrace_drain(struct ftrace *ft);
int ftrace_window(struct ftrace *ft, struct window_trace *wt);
void ftrace_finish(struct ftrace *ft);
int ftrace_instance_remove(const char *tracefs, const char *name);
bool ftrace_captures_atrace(const struct ftrace *ft);

#endif /* VITALSD_H */
