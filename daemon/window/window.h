/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The window: what one interval of sampling holds (window.c), roll-ups
 * (rollup.c), its dump text (dump.c) and the CPU arithmetic (metrics.c).
 */
#ifndef VITALSD_WINDOW_H
#define VITALSD_WINDOW_H

#include <stdatomic.h>

#include "core/loopstat.h"
#include "core/provenance.h"
#include "core/util.h"
#include "proc/proc.h"

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
	int64_t max_khz;	 /* cpuinfo_max_freq, −1 unknown */
	int32_t capacity;	 /* cpu_capacity, −1 unknown */
	struct gauge freq_ratio; /* cur/max per sample, when both known */
};

/* Per process (or per thread) activity inside one window. */
struct window_task {
	int32_t id;   /* pid, or tid for threads */
	int32_t tgid; /* owning process */
	uint64_t starttime;
	uint32_t uid;
	uint32_t samples; /* valid deltas summed (beside uid: no padding) */
	char comm[VITALS_COMM_LEN];
	/* process name; comm for threads: read through window_task_name(),
	 * written through window_task_set_name() (window_name.c): NULL "",
	 * window_task_name_comm_ the comm, else an interned string that is
	 * never freed (a row copied by value outlives its window safely) */
	const char *name_;
	uint64_t d_utime, d_stime;   /* ticks */
	uint64_t d_minflt, d_majflt; /* counts, never bytes */
	uint64_t wall_ns;	     /* Σ Δmonotonic over those samples */
	uint64_t total_ticks;	     /* Σ system Δtotal over those samples */
	double norm_ticks;	     /* Σ Δtotal/online_cpus over them */
	uint64_t rss_pages_max;	     /* stat field 24, highest seen */
	uint64_t rss_pages_last;
	bool born;   /* started inside the window: counters are the delta */
	bool exited; /* gone before the window closed */
};

extern const char window_task_name_comm_[1];

/* t's name: the process name, the comm for a thread; "" none. A name set
 * equal to the comm is read from the comm (it follows a later change of
 * the comm: set the comm first). */
static inline const char *
window_task_name(const struct window_task *t)
{
	if (t->name_ == window_task_name_comm_)
		return t->comm;
	return t->name_ != NULL ? t->name_ : "";
}

/* Set t's name to s, cut to VITALS_NAME_LEN − 1 bytes; s is copied. */
void window_task_set_name(struct window_task *t, const char *s);

/* Set t's name from a format, cut as window_task_set_name() cuts. */
void window_task_set_namef(struct window_task *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* dst's name as src's (dst's comm set first); no copy of the string. */
void window_task_copy_name(struct window_task *dst,
    const struct window_task *src);

/* The names interned since the start (window_name.c), for health. */
struct window_names_stats {
	uint64_t names;	     /* distinct names held */
	uint64_t str_bytes;  /* their bytes, NULs included */
	uint64_t heap_bytes; /* the table's heap: string blocks and slots */
	uint64_t full;	     /* names refused at the bound: read as comm */
};
void window_names_stats(struct window_names_stats *ret);

struct window_psi {
	bool available; /* file present and parsed at least once */
	bool have_full;
	uint64_t d_some_us, d_full_us; /* Σ valid deltas of total= */
	uint32_t samples;
	struct gauge some_avg10, full_avg10;
};

/* Tick lateness histogram: upper bounds in ms; the last bucket is open. */
#define VITALS_LATE_BUCKETS 8
#define VITALS_LATE_BOUNDS_MS               \
	{                                   \
		1, 2, 5, 10, 20, 50, 100, 0 \
	}

struct window_health {
	uint64_t self_utime_us, self_stime_us; /* getrusage delta */
	uint64_t coll_ns_sum[COLL__MAX], coll_ns_max[COLL__MAX];
	uint64_t sample_ns_sum, sample_ns_max; /* whole sample */
	uint32_t late_ticks;	/* timer fired over half an interval late */
	uint32_t burst_samples; /* samples taken in burst mode */
	uint32_t procs_scanned, threads_scanned; /* in the last sample */
	/* the procfs scan's kept stat files (proc_statfd.c): open after the
	 * last sample; reads through one, opens, opens not kept (bound),
	 * over the window. In memory only, as the tick lateness. */
	uint32_t stat_fds;
	uint64_t stat_fd_reads, stat_opens, stat_fd_full;
	/* the procfs scan's directory listings (/proc, a process's task/)
	 * read, and skipped while no fork since made them stale, over the
	 * window (doc/metrics.md, "Listings skipped"). In memory only. */
	uint32_t lists_read, lists_skipped;
	uint32_t procs_exited, threads_exited; /* instances that ended */
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
	/* of that lateness (core/loopstat.c): the loop still in an earlier
	 * callback, and its thread runnable but waiting for a CPU; summed
	 * over the window's ticks and those of the latest tick. In memory
	 * only, as the lateness. */
	uint64_t tick_late_held_ns_sum, tick_late_runq_ns_sum;
	uint64_t tick_late_max_held_ns, tick_late_max_runq_ns;
	bool tick_late_runq_absent; /* a tick had no schedstat to read */
	/* the loop's longest callback that ended in the window, its name
	 * and the callbacks over 1 ms (core/loopstat.c); in memory only */
	uint64_t loop_cb_ns_max;
	char loop_cb_what[LOOPSTAT_WHAT_LEN];
	uint32_t loop_cb_over_1ms;
	uint64_t loop_cb_cpu_ns; /* the longest one's thread CPU time */
	/* the process scan's source in the last sample (taskiter.c) */
	uint32_t scanner;     /* enum scanner_mode: SCANNER_PROCFS or _BPF */
	uint32_t scanner_why; /* enum scanner_why: why not BPF, 0 when it is */
	uint32_t scanner_err; /* errno behind scanner_why or the last failure */
	uint32_t iter_failed; /* iterator reads that failed; /proc stood in */
	/* event-driven samples (doc/bpf.md): iterator samples by kind over
	 * the window, task records the last partial one read, and why
	 * partial samples are off (enum partial_why, 0: on). In memory
	 * only, as the tick lateness. */
	uint32_t samples_full, samples_partial;
	uint32_t partial_records;
	uint32_t partial_doubts; /* partial reads a full walk replaced */
	uint32_t partial_why;
	uint32_t partial_err; /* errno behind partial_why */
	/* gone records of processes the scan never held (started and ended
	 * between two reads without running at one) */
	uint32_t partial_gone_unknown;
	/* full walks read on the walk's worker (proc_walk_async.c) and
	 * taken by their sample, read there and dropped (another sample
	 * came first: a close, a reload), and the longest time from a
	 * walk's start to its sample (the loop served others meanwhile) */
	uint32_t walks_off_loop, walks_dropped;
	uint64_t walk_wait_ns_max;
	/* processes a hiding procfs kept from the last scan (proc_hidden.c);
	 * in memory only, not in the store (Health.privileges) */
	uint32_t unseen_state; /* enum unseen_state */
	uint32_t procs_unseen; /* valid when unseen_state is UNSEEN_COUNTED */
	/* process identities (cmdline, status) over the window
	 * (proc_ident_async.c): asked of the worker, answers taken, refused
	 * (queue full: the comm stands), answers of an instance gone or
	 * replaced (no name set), read on the loop (no worker); waiting or
	 * in flight at the close. In memory only, as the tick lateness. */
	uint64_t ident_queued, ident_done, ident_full, ident_stale;
	uint64_t ident_loop;
	uint32_t ident_pending;
};

/* ------------------------------------------------------------------ parts */

/*
 * What a signal adds to a window is a part allocated on its own, NULL when
 * the window has none (the signal does not report, or the window was stored
 * before it existed): such a signal costs the pointer; one that reports an
 * off state keeps its part's small head. The core never reads a part's
 * fields: it frees, copies, merges
 * and dumps parts through window_parts[] (window_part.c). A part's type, its
 * operations and its typed accessor (window_<signal>()) live in the
 * signal's folder; the store and rpc have a table of their own.
 */
enum window_part_id {
	WPART_SCHED,   /* struct window_bpf (sched/sched.h) */
	WPART_GPUMEM,  /* struct window_gpumem_part (gpumem/gpumem.h) */
	WPART_WSS,     /* struct window_wss_part (wss/wss.h) */
	WPART_TRACE,   /* struct window_trace (trace/trace.h) */
	WPART_CGROUP,  /* struct window_cgroup (cgroup/cgroup.h) */
	WPART_FGBG,    /* struct window_fgbg (fgbg/fgbg.h) */
	WPART_WCPU,    /* struct window_wcpu (wcpu/wcpu.h) */
	WPART_DMABUF,  /* struct window_dmabuf (dmabuf/dmabuf.h) */
	WPART_GPUFREQ, /* struct window_gpufreq (gpufreq/gpufreq.h) */
	/* struct window_syscalls (syscalls/syscalls.h, sc_window.h) */
	WPART_SYSCALLS,
	WPART__MAX
};

struct window_part_ops {
	const char *name;
	void (*free)(void *part);
	void *(*dup)(const void *part); /* a deep copy; NULL: no memory */
	/* Fold src (the later window's part) into *accp, for roll-ups;
	 * either may be NULL. On failure *accp is still a valid part. */
	int (*merge)(void **accp, const void *src);
	/* its lines of dump_window(), called when the window has the part */
	void (*dump)(const struct window *w, unsigned topn, struct vbuf *out);
	/* its words on dump_summary_line(); NULL: none */
	void (*summary)(const struct window *w, struct vbuf *out);
	size_t (*bytes)(const void *part); /* heap bytes it holds */
	/* Drop its per-thread rows and their counts (a roll-up into level
	 * 2 without rollup2_threads): its process, uid and window figures
	 * stay as they are. NULL: it keeps no thread rows of that weight
	 * (a few bounded ones, as trace's, stay) */
	void (*drop_threads)(void *part);
};

/* window_part.c: one line per part, indexed by enum window_part_id */
extern const struct window_part_ops *const window_parts[WPART__MAX];

struct window {
	uint64_t seq;
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id, "" unknown */
	/* what made it (provenance.h); version "" unknown (stored before
	 * provenance was kept) */
	struct provenance prov;
	uint32_t level; /* 0: as sampled; 1, 2: roll-ups */
	int64_t mono_start_ns, mono_end_ns;
	int64_t boot_start_ns, boot_end_ns;
	int64_t wall_start_ns, wall_end_ns; /* CLOCK_REALTIME, for display */
	uint32_t hz;			    /* USER_HZ of the ticks below */
	uint32_t interval_ms;		    /* nominal cadence at close */

	uint32_t samples;		/* taken (each with a timestamp) */
	uint32_t samples_valid;		/* system deltas accepted */
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
	/* each signal's part (enum window_part_id); owned, NULL: none */
	void *part[WPART__MAX];
	/* owners beside the first (window_share): a closed window is read,
	 * never written, by the ring and the writer's queue at once, and
	 * the last window_free frees it */
	_Atomic unsigned owners_more;
};

/* A part of w, NULL when w has none; the typed accessors beside each
 * part's type (window_trace(), ...) are what readers use. */
static inline void *
window_part(const struct window *w, enum window_part_id id)
{
	return w->part[id];
}

/* Hand w a part; the one it replaces, if any, is the caller's. */
static inline void
window_part_set(struct window *w, enum window_part_id id, void *part)
{
	w->part[id] = part;
}

/* window.c (window_task_set_name[f](): window_name.c) */
struct window *window_new(uint64_t seq, unsigned cpu_span);
/* One owner fewer; the last frees w. NULL. */
struct window *window_free(struct window *w);
/* One owner more of a window no one writes any longer (a closed one, as
 * the ring holds it): each owner reads it from its own thread and gives
 * it up with window_free. w itself, or NULL for NULL. */
struct window *window_share(const struct window *w);
struct window *window_dup(const struct window *w);
int window_add_task(struct window *w, bool thread, const struct window_task *t);
void window_shrink(struct window *w);
int window_grow_cpus(struct window *w, unsigned cpu_span);
void gauge_add(struct gauge *g, double v);
double gauge_avg(const struct gauge *g);
void gauge_merge(struct gauge *acc, const struct gauge *g);
const char *invalid_name(enum vitals_invalid r);
const char *coll_name(enum vitals_coll c);
const char *psi_res_name(enum psi_res r);
size_t window_bytes(const struct window *w);
size_t window_budget_bytes(const struct window *w);

/* --------------------------------------------------------------- rollup.c */

/* Fold src (a later window) into acc: deltas and counts sum, gauges merge,
 * tasks merge by identity. acc keeps its start, takes src's end. */
int window_merge(struct window *acc, const struct window *src);
/* Drop w's thread rows, its tasks' and its parts' (drop_threads): what a
 * roll-up into level 2 keeps without rollup2_threads. */
void window_drop_threads(struct window *w);

/* ----------------------------------------------------------------- dump.c */

int dump_window(const struct window *w, unsigned topn, struct vbuf *out);
void dump_summary_line(const struct window *w, struct vbuf *out);

#endif /* VITALSD_WINDOW_H */
