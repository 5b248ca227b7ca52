/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Requests in, frames out: the only code that knows protobuf (rpc.c,
 * rpc_pb.c and the rpc_<signal>.c answers).
 */
#ifndef VITALSD_RPC_H
#define VITALSD_RPC_H

#include "core/pageout.h"
#include "export/export.h"
#include "export/otlp.h"
#include "store/store.h"
#include "syscalls/syscalls.h"

struct control_stats;
struct gpumem;
struct gpumem_span;
struct gpumem_series;
struct heapprofd;
struct hp_record;
struct wss;
struct window_dmabuf;
struct window_syscalls;
struct vitalsd_reload;

/* ---------------------------------------------------------- control plane */

struct event_base;

enum control_role {
	ROLE_NONE,    /* every request refused: "reader role required" */
	ROLE_READER,  /* queries */
	ROLE_TRUSTED, /* queries and changes (burst); implies reader */
};

/* The bytes the daemon's parts hold (Health.memory): walked for a health
 * answer alone (vitalsd_info.memory), not for every request. */
struct vitalsd_memory {
	/* the windows kept in memory: bytes and count */
	uint64_t ring_bytes;
	unsigned ring_windows;
	/* heap the daemon's parts hold */
	uint64_t tasks_bytes, ftrace_bytes, bpf_bytes;
	uint32_t tasks;
	/* mappings of its own, not heap: the iterator's output array, the
	 * ftrace drain buffer's resident pages */
	uint64_t taskiter_out_bytes, ftrace_buffer_bytes;
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
	/* batched commits: the spool file ("" none) and why it is off */
	const char *spool_path, *spool_note;
	struct gpumem *gpumem; /* NULL: no GPU memory reader */
	/* the last DMA-BUF pass (dmabuf.c); NULL: none yet, or off */
	const struct window_dmabuf *dmabuf;
	/* GPU frequency collector (gpufreq.c); NULL: gpufreq = off */
	const struct gpufreq *gpufreq;
	const struct provenance *prov;	     /* this daemon's; NULL: unknown */
	const struct vitalsd_reload *reload; /* SIGHUPs; NULL: none kept */
	struct export_stats metrics; /* the OpenMetrics endpoint (on: on) */
	/* the parts' bytes, asked by a health answer (NULL: all 0) */
	void (*memory)(void *arg, struct vitalsd_memory *ret);
	void *memory_arg;
	/* malloc_trim after window close: runs and RSS given back */
	uint64_t trimmed_bytes;
	uint32_t trims;
	/* the start-up pageout (daemon.c): the mode configured (0 off, 1
	 * on, 2 random), 1 ran, 0 not run, -errno failed; its figures */
	unsigned pageout_mode;
	int pageout_rc;
	struct pageout_stats pageout;
	struct pageout_stats settle; /* the settling passes so far */
	struct sc_health syscalls;   /* the syscall tracer (Health.syscalls) */
	bool have_otlp;		     /* OTLP push on */
	struct otlp_stats otlp;
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
	RPC_ABSENT, /* the figure does not exist here (fgbg on a host) */
};

/* A store read for the query thread: the request, validated and resolved. */
enum rpc_qop {
	RPC_Q_WINDOWS,
	RPC_Q_TOP,
	RPC_Q_PROCESS,
	RPC_Q_GPUMEM,
	RPC_Q_TRACE,
	RPC_Q_HP_LIST,	/* heapprofd session records: n */
	RPC_Q_EXPORT,	/* windows as another tool's file (rpc_export.c) */
	RPC_Q_DMABUF,	/* DMA-BUF parts of a range folded (rpc_dmabuf.c) */
	RPC_Q_GPUFREQ,	/* GPU frequency parts of a range (rpc_gpufreq.c) */
	RPC_Q_SYSCALLS, /* syscall parts of a range folded (rpc_syscalls.c) */
};

struct rpc_query {
	enum rpc_qop op;
	uint64_t id; /* request id, echoed */
	int64_t from_wall_ns, to_wall_ns;
	bool relative; /* the range ends "now": since_ns, or no to */
	unsigned hz;
	unsigned granularity_s, max_windows, top_n; /* windows */
	bool with_tasks;
	enum store_metric metric; /* top */
	bool weighted;		  /* top: by capacity-weighted CPU */
	bool threads;		  /* top, process */
	unsigned n;
	int32_t pid; /* process; trace: 0 any */
	uint64_t starttime;
	char process[VITALS_NAME_LEN]; /* trace: a process name, "" any */
	unsigned state;	       /* top, process: enum fg_state + 1; 0: all */
	bool bpf;	       /* top: the BPF sched rows */
	unsigned sched_metric; /* top, bpf: Vitals__SchedMetric */
	unsigned format;       /* export: Vitals__ExportFormat */
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

/*
 * The modules answers act on, filled by daemon.c (the composition root)
 * and handed on by control: rpc never calls back into the daemon.
 */
struct rpc_modules {
	struct wss *wss;      /* NULL: no working-set monitor */
	struct heapprofd *hp; /* NULL: heapprofd sessions not set up */
	/* a trusted caller's burst; NULL: acknowledged, not started */
	void (*burst)(void *arg, unsigned duration_ms);
	void *burst_arg;
	struct burst *bursts; /* burst triggers; NULL: no rules */
};

struct rpc_ctx {
	const struct vitalsd_info *info;
	const struct control_stats *stats;
	struct rpc_modules mod;
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
int rpc_answer_windows(const struct rpc_query *q, struct window *const *w,
    size_t n, bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len);
int rpc_answer_windows_cut(const struct rpc_query *q, struct window *const *w,
    size_t n, bool truncated, uint64_t budget, size_t loaded_bytes,
    uint32_t max, uint8_t **ret, size_t *ret_len);
/* rpc_wcpu.c: `top --weighted`, a task's range sums and weighted ticks;
 * sorted here, cut to q->n */
struct rpc_wcpu_task {
	struct window_task t;
	double wtd_ticks;
	unsigned src; /* enum wcpu_src */
};
int rpc_answer_top_wcpu(const struct rpc_query *q, struct rpc_wcpu_task *t,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len);
int rpc_answer_top(const struct rpc_query *q, const struct window_task *t,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len);
/* the BPF top over the rows of windows w[0..n) (rpc_sched.c ranks) */
int rpc_answer_top_sched(const struct rpc_query *q, struct window *const *w,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len);
/* Where a process answer's identity comes from (ProcessInfo.identity). */
enum rpc_ident_src {
	RPC_IDENT_NONE,	 /* the rows say it */
	RPC_IDENT_PROC,	 /* /proc at answer time */
	RPC_IDENT_STORE, /* its rows outside the range */
};
/* ident: a process with no rows in the range, NULL otherwise; cgroup:
 * the live instance's cgroup v2 path, NULL unknown. */
int rpc_answer_process(const struct rpc_query *q, const struct store_hist *h,
    size_t n, const struct store_hist *th, size_t nth,
    const struct window_task *ident, enum rpc_ident_src src, const char *cgroup,
    struct window *const *w, size_t nw, uint32_t max, uint8_t **ret,
    size_t *ret_len);
void rpc_cache_release(struct rpc_cache *c);
/* rpc_pb.c */
int rpc_error_frame(uint64_t id, enum rpc_status st, const char *msg,
    uint8_t **ret, size_t *ret_len);
int rpc_frame_reid(const uint8_t *frame, size_t len, uint64_t id, uint8_t **ret,
    size_t *ret_len);

/* rpc_hp.c: heapprofd session records */
int rpc_answer_hp_list(const struct rpc_query *q, const struct hp_record *v,
    size_t n, uint32_t max, uint8_t **ret, size_t *ret_len);

/* rpc.c */
struct rpc_query;
int rpc_answer_gpumem_span(const struct rpc_query *q,
    const struct gpumem_span *sp, size_t n, const struct window_gpumem *st,
    const struct gpumem_series *ser, uint32_t max, uint8_t **ret,
    size_t *ret_len);

/* rpc_trace.c: the trace answer (op 18) */
int rpc_answer_trace(const struct rpc_query *q, struct window *const *w,
    size_t n, bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len);
bool rpc_trace_match(const struct rpc_query *q, const struct window *w,
    int32_t tgid);

/* rpc_export.c: the export answer (op 25), windows oldest first */
int rpc_answer_export(const struct rpc_query *q, struct window *const *w,
    size_t n, bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len);

/* rpc_dmabuf.c: the dmabuf answer (op 29) of part p (NULL: none), folded
 * from windows stored windows (0: the live pass) */
int rpc_answer_dmabuf(const struct rpc_query *q, const struct window_dmabuf *p,
    uint32_t windows, uint32_t max, uint8_t **ret, size_t *ret_len);

/* rpc_gpufreq.c: the GPU frequency answer (op 31) of part p (NULL: none),
 * folded from stored windows */
struct window_gpufreq;
int rpc_answer_gpufreq(const struct rpc_query *q,
    const struct window_gpufreq *p, uint32_t max, uint8_t **ret,
    size_t *ret_len);
/* rpc_syscalls.c: the syscalls answer (op 32) of part p (NULL: none),
 * folded from windows stored windows, filtered by q's pid or process */
int rpc_answer_syscalls(const struct rpc_query *q,
    const struct window_syscalls *p, uint32_t windows, uint32_t max,
    uint8_t **ret, size_t *ret_len);

#endif /* VITALSD_RPC_H */
