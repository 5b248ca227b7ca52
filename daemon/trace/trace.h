/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace and ATrace: the trace part of a window (ftrace_window.c), the
 * marker protocol and trackers (atrace.c), ring-buffer pages into records
 * (ftrace_events.c) and the instance reader (ftrace.c). ATrace categories
 * have their own header, atrace_cat.h.
 */
#ifndef VITALSD_TRACE_H
#define VITALSD_TRACE_H

#include "core/util.h"
#include "window/window.h"

struct event_base;

/* ------------------------------------------ ftrace figures of a window */

/*
 * ATrace names are kept up to the platform's limit, 127 UTF-16 code units
 * (android.os.Trace's sectionName): at most 3 UTF-8 bytes a unit, 381
 * bytes + NUL.
 */
#define VITALS_TRACE_NAME_UNITS 127
#define VITALS_TRACE_NAME 384
#define VITALS_TRACE_SLICES 128	 /* slice rows a window keeps */
#define VITALS_TRACE_COUNTERS 32 /* counter rows a window keeps */
#define VITALS_TRACE_BINDER 32	 /* caller → target pairs kept */
#define VITALS_TRACE_RQ 32	 /* threads kept by run-queue delay */
#define VITALS_TRACE_GPU 16	 /* (gpu, pid) gpu_mem_total entries kept */
#define VITALS_TRACE_DEPTH 64	 /* open B slices kept per thread */
#define VITALS_TRACE_BTXN 32	 /* (caller, callee, code) latency rows kept */
#define VITALS_TRACE_BTXN_SLOTS 24 /* log2 µs slots, as the run-queue's */
#define VITALS_TRACE_PHASES 32	   /* fault phase rows a window keeps */

/* Where ftrace capture stands; stored, so values never change meaning. */
enum ftrace_state {
	FTRACE_UNKNOWN,	       /* not reported (older window, no ftrace part) */
	FTRACE_ON,	       /* instance made, events enabled, reading */
	FTRACE_OFF_CONFIG,     /* ftrace = off */
	FTRACE_OFF_NO_TRACEFS, /* tracefs not mounted or not reachable */
	FTRACE_OFF_NO_PRIV,    /* instance not creatable (EACCES/EPERM) */
	FTRACE_OFF_ERROR,      /* anything else: see err */
	FTRACE__MAX
};

/* ftrace_sched: sched_switch, sched_wakeup(_new) in the instance. */
enum ftrace_sched {
	FTRACE_SCHED_AUTO, /* on unless BPF sched accounting is active */
	FTRACE_SCHED_ON,
	FTRACE_SCHED_OFF,
};

/* Events vitalsd may enable (bit k of window_trace.enabled / missing). */
enum ftrace_ev {
	FEV_PRINT, /* ftrace/print: trace_marker writes (ATrace) */
	FEV_SCHED_SWITCH,
	FEV_SCHED_WAKING, /* no longer enabled: a bit older windows hold */
	FEV_PROCESS_EXIT, /* sched/sched_process_exit: closes open slices */
	FEV_BINDER_TXN,	  /* binder/binder_transaction */
	FEV_BINDER_RECV,  /* binder/binder_transaction_received */
	FEV_GPU_MEM,	  /* gpu_mem/gpu_mem_total */
	FEV_SCHED_WAKEUP, /* run-queue delay starts (doc/metrics.md) */
	FEV_SCHED_WAKEUP_NEW,
	/* fault phases (phase.c): enabled only when fault_phases is set */
	FEV_PAGE_FAULT,	   /* exceptions/page_fault_user */
	FEV_FILEMAP_FAULT, /* filemap/mm_filemap_fault */
	FEV_FILEMAP_ADD,   /* filemap/mm_filemap_add_to_page_cache */
	FEV_RECLAIM_BEGIN, /* vmscan/mm_vmscan_direct_reclaim_begin */
	FEV_RECLAIM_END,   /* vmscan/mm_vmscan_direct_reclaim_end */
	FEV_BLOCK_ISSUE,   /* block/block_rq_issue */
	FEV__MAX
};

/* The events of fault phases, as FEV_* bits. */
#define FEV_PHASE_MASK                                        \
	(1u << FEV_PAGE_FAULT | 1u << FEV_FILEMAP_FAULT |     \
	    1u << FEV_FILEMAP_ADD | 1u << FEV_RECLAIM_BEGIN | \
	    1u << FEV_RECLAIM_END | 1u << FEV_BLOCK_ISSUE)

/*
 * Mapping classes of fault phases, from the path of a /proc/<pid>/maps
 * line (phase_maps.c; doc/metrics.md). Stored: values never change.
 */
enum phase_class {
	PCLASS_DEX,	/* .dex .odex .vdex .oat .art, .jar, .apk executable */
	PCLASS_SO,	/* .so, .so.N */
	PCLASS_RES,	/* .apk non-executable, .arsc, fonts */
	PCLASS_FILE,	/* any other file */
	PCLASS_ANON,	/* no path, [heap], [anon:...], memfd, ashmem */
	PCLASS_STACK,	/* [stack] */
	PCLASS_OTHER,	/* [vdso], [vvar], ... */
	PCLASS_UNKNOWN, /* address or file not in the maps read */
	PCLASS__MAX
};

/* Figures a phase row has (window_trace_phase.have): the events behind
 * them were enabled. A figure without its bit is unknown, never 0. */
enum phase_have {
	PHAVE_FAULTS,  /* faults, faults_by (page_fault_user) */
	PHAVE_FILE,    /* file_faults (mm_filemap_fault) */
	PHAVE_READ,    /* pages_read (mm_filemap_add_to_page_cache) */
	PHAVE_MAJOR,   /* major, major_by: both filemap events */
	PHAVE_RECLAIM, /* reclaim, reclaim_ns: both vmscan events */
	PHAVE_BLOCK,   /* blk, blk_bytes (block_rq_issue) */
	PHAVE__MAX
};

/* What a window row of slices is (window_trace_slice.kind). */
enum trace_kind {
	TRACE_SYNC,    /* B/E, paired per thread stack */
	TRACE_ASYNC,   /* S/F, paired by (pid, name, cookie) */
	TRACE_TRACK,   /* G/H, paired by (pid, track, cookie) */
	TRACE_INSTANT, /* I and N: counted, no duration */
	TRACE__MAX
};

/*
 * One slice name of one thread at one depth over a window. Complete slices
 * carry their durations; incomplete ones (begin or end lost) are only
 * counted: no duration is invented for them. An end whose begin was never
 * seen has an empty name.
 */
struct window_trace_slice {
	int32_t tgid;	/* the pid field of the marker; −1 unknown */
	int32_t tid;	/* the thread that began it (ended it, for orphans) */
	uint16_t depth; /* B/E nesting, 0 outermost */
	uint8_t kind;	/* enum trace_kind */
	uint8_t pad;
	uint32_t count;		   /* complete slices (instants: events) */
	uint32_t incomplete;	   /* slices whose begin or end was lost */
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

/*
 * Binder transaction latency per (caller process, callee process, code)
 * (binder.c pairs the records; doc/ftrace.md has the rule). Slot k of a
 * histogram counts latencies d with floor(log2(d in µs)) = k; slot 0 also
 * d < 1 µs, the last slot everything above. Only paired transactions
 * carry a latency; those given up on are counted, never timed.
 */
struct window_trace_btxn {
	int32_t from_pid;	 /* the caller's process; its tid if unknown */
	int32_t to_pid;		 /* to_proc of the call */
	uint32_t code;		 /* the transaction code (method number) */
	uint32_t twoway, oneway; /* calls sent */
	uint32_t received;	 /* calls paired with their received */
	uint32_t replied;	 /* two-way calls paired with their reply */
	uint32_t unreceived;	 /* calls given up before a received */
	uint32_t unreplied;	 /* two-way calls given up before a reply */
	uint32_t pad;
	uint64_t recv_sum_ns, recv_max_ns;   /* send → received */
	uint64_t reply_sum_ns, reply_max_ns; /* call → reply */
	uint32_t recv_hist[VITALS_TRACE_BTXN_SLOTS];
	uint32_t reply_hist[VITALS_TRACE_BTXN_SLOTS];
};

/*
 * Fault phases of one (process, slice name) over a window (phase.c,
 * doc/metrics.md): the deltas of the process's counters between each
 * phase's B and E, summed over the phases that ended in the window.
 */
struct window_trace_phase {
	int32_t pid;	      /* −1 in the rest */
	uint32_t have;	      /* bit PHAVE_*: figures known */
	uint64_t start_ticks; /* the process's starttime (stat field 22) */
	char comm[16];
	uint32_t count;	     /* phases ended */
	uint32_t incomplete; /* begun, end lost (loss, exit, stop) */
	uint32_t open;	     /* still open at the window's close */
	uint32_t pad;
	uint64_t total_ns, max_ns; /* of the ended phases */
	uint64_t faults, file_faults, major, pages_read;
	uint64_t reclaim, reclaim_ns, blk, blk_bytes;
	uint64_t faults_by[PCLASS__MAX];
	uint64_t major_by[PCLASS__MAX];
	char name[VITALS_TRACE_NAME];
};

/* Run-queue delay of one thread: runnable (a wakeup or a switch-out that
 * leaves it runnable) → its next switch-in (doc/metrics.md). */
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
	uint64_t read_ns;	       /* time spent reading and decoding */
	uint64_t bad_markers;	 /* print payloads not in the ATrace protocol */
	uint64_t names_cut;	 /* names over 127 UTF-16 units, cut */
	uint64_t unknown_events; /* records of an id this build does not use */
	uint64_t bad_pages;	 /* pages whose header did not fit: skipped */
	uint64_t buffered;	 /* Σ "entries" at close: not yet read */
	uint64_t slices, incomplete, orphan_ends; /* Σ over all rows */
	/* sched_waking: sched_wakeup and sched_wakeup_new records (the name
	 * is the stored column's, from when sched_waking was traced) */
	uint64_t sched_switch, sched_waking, binder_received;
	uint64_t gpu_events;
	/* binder pairing (binder.c): records that found no partner, and
	 * transactions given up on, by reason; btxn_open is a gauge */
	uint64_t btxn_orphan_replies; /* a reply to no call known */
	uint64_t btxn_orphan_recv;    /* a received of no send known */
	uint64_t btxn_lost;	      /* open when events were lost */
	uint64_t btxn_exit;	      /* the caller thread exited */
	uint64_t btxn_stale;	      /* the tid now another process's */
	uint64_t btxn_abandoned; /* the caller called again: no reply came */
	uint64_t btxn_expired;	 /* open longer than BINDER_EXPIRE_S */
	uint64_t btxn_full;	 /* not tracked: a bounded table was full */
	uint64_t btxn_open;	 /* calls awaiting a reply at the close */
	/* fault phases (phase.c): what they cost and what they missed */
	uint64_t phase_events;	   /* records of FEV_PHASE_MASK events */
	uint64_t phase_open;	   /* a gauge: phases open at the close */
	uint64_t phase_incomplete; /* phases whose end was lost */
	uint64_t phase_untracked;  /* begun, not tracked: a table full */
	uint64_t maps_reads;	   /* /proc/<pid>/maps reads */
	uint64_t maps_skipped;	   /* processes the budget refused a read */
	uint64_t maps_fail;	   /* reads that failed */
	uint64_t maps_bad_lines;   /* lines not in the maps format */
	uint64_t maps_cut;	   /* ranges beyond the per-process bound */
	uint64_t fault_unknown;	   /* faults classed unknown */
	/* ATrace categories (atrace_cat.c): state at close, counts Δ */
	uint32_t cat_state; /* enum atcat_state (atrace_cat.h) */
	int32_t cat_err;    /* −errno behind error / unavailable */
	uint64_t cat_tags;  /* the ATRACE_TAG_* bits configured */
	uint64_t cat_flags; /* the tags property as last read: vitalsd's
			      * when on, the other tracer's when skipped */
	uint32_t cat_checks, cat_foreign; /* checks; those another owned */
	uint32_t cat_takeovers, cat_yields, cat_restores;
	uint32_t cat_set_fail, cat_read_fail;
	uint32_t nslices, slices_other; /* kept; folded into slice_other */
	struct window_trace_slice slice_other;
	uint32_t ncounters, counters_other;
	uint32_t nbinder, binder_other;
	struct window_trace_binder binder_total; /* Σ of every pair */
	uint32_t nrq, rq_other;
	struct window_trace_rq rq_total;
	uint32_t ngpu, gpu_other;
	uint32_t nbtxn, btxn_other; /* rows kept; rows folded into btxn_rest */
	struct window_trace_btxn btxn_rest; /* the rows beyond the kept */
	uint32_t nphase, phase_other; /* rows kept; rows folded in the rest */
	/*
	 * The rows, last: a part made without them (head_only) is allocated
	 * only up to slice, WINDOW_TRACE_HEAD bytes, and its five counts
	 * above are zero, so nothing reads past its end. Code that writes
	 * rows makes room first (window_trace_rows()). A zeroed whole
	 * struct is a whole part.
	 */
	bool head_only;
	struct window_trace_slice slice[VITALS_TRACE_SLICES];
	struct window_trace_counter counter[VITALS_TRACE_COUNTERS];
	struct window_trace_binder binder[VITALS_TRACE_BINDER];
	struct window_trace_rq rq[VITALS_TRACE_RQ];
	struct window_trace_gpu gpu[VITALS_TRACE_GPU];
	struct window_trace_btxn btxn[VITALS_TRACE_BTXN];
	/* the fault phase rows beyond the kept ones, summed: with the rows
	 * (window_phase_rest() reads it for any part) */
	struct window_trace_phase phase_rest;
	struct window_trace_phase phase[VITALS_TRACE_PHASES];
};

#define WINDOW_TRACE_HEAD offsetof(struct window_trace, slice)

/* ftrace_window.c: the loss of a window, anything the kernel or a page
 * header said was lost. */
bool window_trace_lossy(const struct window_trace *t);
uint64_t window_trace_lost(const struct window_trace *t);

/*
 * ftrace_window.c: the part's life. A window without an ftrace part has
 * none (NULL); one that only reports a state, or read no rows, has the
 * head alone.
 */
struct window_trace *window_trace_new(bool rows);
struct window_trace *window_trace_free(struct window_trace *t);
struct window_trace *window_trace_dup(const struct window_trace *t);
int window_trace_rows(struct window_trace **tp);
void window_trace_trim(struct window_trace **tp);

/* The trace part of w (window_parts[WPART_TRACE]), NULL: none. */
static inline struct window_trace *
window_trace(const struct window *w)
{
	return (struct window_trace *)window_part(w, WPART_TRACE);
}

/* w's trace part, made (the head alone unless rows) when it has none;
 * NULL: no memory. */
struct window_trace *window_trace_make(struct window *w, bool rows);

/* ftrace_window.c: its operations for window.c, rollup.c and dump.c */
extern const struct window_part_ops trace_window_part;

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
		struct {
			uint64_t addr, error;
		} fault;
		struct { /* mm_filemap_fault, mm_filemap_add_to_page_cache */
			uint64_t ino, index;
			uint32_t dev;	/* the kernel's dev_t: major << 20 */
			uint32_t order; /* pages 1 << order (add only) */
		} fmap;
		struct {
			uint32_t bytes;
		} blk;
	} u;
};

/* gpu_mem_total as delivered to the GPU memory timeline (gpumem.c). */
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
uint64_t atrace_bytes(const struct atrace *at);
void atrace_set_tgid_fn(struct atrace *at, int32_t (*fn)(int32_t, void *),
    void *arg);
void atrace_set_gpu_mem_cb(struct atrace *at, ftrace_gpu_mem_fn fn, void *arg);
struct phase;
void atrace_set_phase(struct atrace *at, struct phase *ph);
void atrace_phase_events(struct atrace *at, uint32_t enabled);
void atrace_record(struct atrace *at, const struct ftrace_rec *r);
void atrace_lost(struct atrace *at);
void atrace_finish(struct atrace *at);
void atrace_window(struct atrace *at, struct window_trace *wt);
void window_trace_keep_slices(struct window_trace *wt,
    struct window_trace_slice *s, size_t n, uint32_t other_rows);
size_t atrace_open_slices(const struct atrace *at);

/* ftrace.c, ftrace_events.c: names */
const char *ftrace_state_name(unsigned st);
const char *ftrace_ev_name(unsigned ev);
/* ftrace_window.c: names, merge for roll-ups, dump text */
const char *trace_kind_name(unsigned k);
int window_trace_merge(struct window_trace **accp,
    const struct window_trace *src);
/* binder_window.c: rows of binder latency, sorted, merged, summed */
void window_btxn_add(struct window_trace_btxn *acc,
    const struct window_trace_btxn *src);
void window_btxn_keep(struct window_trace *wt, struct window_trace_btxn *rows,
    size_t n, uint32_t other_rows);
void window_btxn_merge(struct window_trace *acc,
    const struct window_trace *src);
uint64_t window_btxn_quantile_ns(const uint32_t hist[VITALS_TRACE_BTXN_SLOTS],
    double q);
void window_btxn_hist_add(uint32_t hist[VITALS_TRACE_BTXN_SLOTS], uint64_t ns);

/* phase_window.c: fault phase rows, sorted, merged, summed */
void window_phase_add(struct window_trace_phase *acc,
    const struct window_trace_phase *src);
void window_phase_keep(struct window_trace *wt, struct window_trace_phase *rows,
    size_t n, uint32_t other_rows);
void window_phase_merge(struct window_trace *acc,
    const struct window_trace *src);
const struct window_trace_phase *window_phase_rest(
    const struct window_trace *t);
const char *phase_class_name(unsigned c);

/* binder.c: binder_transaction(_received) pairing (doc/ftrace.md) */
struct binder;

int binder_new(struct binder **ret);
struct binder *binder_free(struct binder *b);
/* tgid: the sending thread's process, −1 when unknown */
void binder_txn(struct binder *b, const struct ftrace_rec *r, int32_t tgid);
void binder_recv(struct binder *b, const struct ftrace_rec *r);
void binder_exit(struct binder *b, int32_t tid);
void binder_lost(struct binder *b);
void binder_window(struct binder *b, struct window_trace *wt);
size_t binder_open_calls(const struct binder *b);

/* ftrace_events.c: raw ring-buffer pages → records (libtraceevent) */
struct fdec;

int fdec_new(const char *events_dir, struct fdec **ret);
struct fdec *fdec_free(struct fdec *fd);
bool fdec_has(const struct fdec *fd, unsigned ev);
typedef void (*fdec_fn)(const struct ftrace_rec *r, void *arg);
int fdec_page(struct fdec *fd, const void *page, size_t len, int cpu,
    fdec_fn fn, void *arg, int64_t *ret_missed);

/* ftrace.c: the instance, its per-CPU readers on the loop */
struct privhelper;

struct ftrace_opts {
	const char *tracefs;   /* NULL: libtracefs finds the mount */
	const char *instance;  /* instance name */
	unsigned buffer_kb;    /* per CPU */
	bool sched;	       /* sched_switch, sched_wakeup(_new) */
	unsigned tick_ms;      /* drain period */
	unsigned max_pages;    /* per CPU per tick */
	unsigned wake_percent; /* buffer_percent: readiness at this fill */
	/* fault phases: normalised names (config_phase.c), NULL: off */
	const char *fault_phases;
	unsigned fault_maps_reads; /* maps reads per window, all processes */
	/* removes the instance at teardown after the drop (NULL: none) */
	struct privhelper *helper;
};

struct ftrace;

int ftrace_open(struct event_base *base, const struct ftrace_opts *o,
    struct ftrace **ret, unsigned *ret_state, char *why, size_t whysz);
struct ftrace *ftrace_free(struct ftrace *ft);
int ftrace_tracing_dir(const char *tracefs, const char *sys_root, char *buf,
    size_t sz);

void ftrace_set_gpu_mem_cb(struct ftrace *ft, ftrace_gpu_mem_fn fn, void *arg);
int ftrace_drain(struct ftrace *ft);
/* After a sample: the timed drain now, when half its period is gone. */
void ftrace_after_sample(struct ftrace *ft);
int ftrace_window(struct ftrace *ft, struct window_trace *wt);
void ftrace_finish(struct ftrace *ft);
int ftrace_instance_remove(const char *tracefs, const char *name);
bool ftrace_captures_atrace(const struct ftrace *ft);
/* heap bytes the reader holds (Health.memory): the held-back records */
uint64_t ftrace_bytes(const struct ftrace *ft);
/* its drain buffer's resident pages, a mapping of its own
 * (Health.memory.ftrace_buffer_bytes) */
uint64_t ftrace_buffer_bytes(const struct ftrace *ft);
/* pages of each CPU's part of the drain buffer kept once a flood ends */
#define FTRACE_KEEP_PAGES 4
/* ftrace.c (true) or ftrace_none.c (false): built with the reader? */
bool ftrace_built(void);

#endif /* VITALSD_TRACE_H */
