/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the rpc files (daemon/rpc/rpc*.c: requests and answers in
 * rpc.c, daemon structs to protobuf-c messages in rpc_pb.c, a file per
 * signal's operations): the arena answers are built in and the converters.
 * No other daemon file includes this file or the generated vitals.pb-c.h,
 * except through frame.h (the client, a program of its own, does).
 */
#ifndef VITALSD_RPC_INT_H
#define VITALSD_RPC_INT_H

#include "frame.h"
#include "control/control.h"
#include "gpumem/gpumem.h"
#include "rpc/rpc.h"
#include "store/store.h"
#include "window/window.h"

struct wss;

/*
 * An answer's messages live in an arena, so one release frees all of them
 * and a failed allocation anywhere unwinds through a single check: every
 * builder returns NULL when it could not allocate.
 */
struct rpc_chunk;

struct rpc_arena {
	struct rpc_chunk *head;
};

/* Allocate and initialise one message, or return NULL from the caller. */
#define NEW(a, var, init)                                                   \
	do {                                                                \
		if (((var) = rpc_arena_alloc((a), sizeof(*(var)))) == NULL) \
			return NULL;                                        \
		init(var);                                                  \
	} while (0)
/* An array of n, or return NULL from the caller; n == 0: NULL. */
#define ARRAY(a, var, n)                                              \
	do {                                                          \
		if ((n) == 0)                                         \
			(var) = NULL;                                 \
		else if (((var) = rpc_arena_alloc((a),                \
			      (size_t)(n) * sizeof(*(var)))) == NULL) \
			return NULL;                                  \
	} while (0)
#define TRY(x)                       \
	do {                         \
		if ((x) == NULL)     \
			return NULL; \
	} while (0)

/* rpc.c: the top_n a snapshot (dump: true, a dump) of w is built and
 * cached with — the same answer as top_n's, the cut at TOP_N_MAX aside */
unsigned rpc_top_clamp(const struct window *w, unsigned top_n, bool dump);

/*
 * What a window part adds to the messages (rpc_<signal>.c), one line each
 * in rpc_part.c: its fields of a Window message (window) and of Health
 * from the last closed window (health); NULL: none. Called only for a
 * window that has the part; -ENOMEM fails the message.
 */
struct rpc_part {
	int (*window)(struct rpc_arena *a, Vitals__Window *m,
	    const struct window *w);
	int (*health)(struct rpc_arena *a, Vitals__Health *m,
	    const struct window *last);
};

/* rpc_part.c: indexed by enum window_part_id; rpc_part_none adds nothing */
extern const struct rpc_part *const rpc_parts[WPART__MAX];
extern const struct rpc_part rpc_part_none;
/* rpc_sched.c, rpc_trace.c */
extern const struct rpc_part rpc_sched_part;
extern const struct rpc_part rpc_trace_part;
extern const struct rpc_part rpc_cgroup_part;
extern const struct rpc_part rpc_fgbg_part;
/* rpc_fgbg.c: a request's state, 0 all, else enum fg_state + 1 */
int rpc_fgbg_state(const char *name, unsigned *ret);
const char *rpc_fgbg_state_name(unsigned st);
extern const struct rpc_part rpc_wcpu_part;

/* rpc_window.c */
Vitals__Window *rpc_pb_window(struct rpc_arena *a, const struct window *w,
    bool tasks, unsigned top_n);
Vitals__Provenance *rpc_pb_provenance(struct rpc_arena *a,
    const struct provenance *p);

/* rpc_pb.c */
void *rpc_arena_alloc(struct rpc_arena *a, size_t n);
void rpc_arena_release(struct rpc_arena *a);
void rpc_utf8_clean(char *s, size_t n);
char *rpc_pb_str(struct rpc_arena *a, const char *s, size_t max);
Vitals__Gauge *rpc_pb_gauge(struct rpc_arena *a, const struct gauge *g);
Vitals__Task *rpc_pb_task(struct rpc_arena *a, const struct window_task *t);
Vitals__HistoryPoint **rpc_pb_history(struct rpc_arena *a,
    const struct store_hist *h, size_t n);

/* rpc_pb.c: GPU memory */
Vitals__GpuMemState *rpc_pb_gpumem_state(struct rpc_arena *a,
    const struct window_gpumem *g);
Vitals__GpuProc *rpc_pb_gpu_proc(struct rpc_arena *a,
    const struct window_gpu_proc *p, const struct gpumem_span *sp);
/* rpc_hp.c: heapprofd operations */
int rpc_hp_dispatch(const struct rpc_ctx *ctx, enum control_role role,
    const Vitals__Request *req, struct rpc_result *res);
Vitals__HeapprofdHealth *rpc_pb_hp_health(struct rpc_arena *a,
    const struct rpc_ctx *ctx);
/* rpc_privs.c: Health.privileges */
Vitals__Privileges *rpc_pb_privileges(struct rpc_arena *a,
    const struct window *last);
/* rpc_wss.c: the working-set monitor's requests and Health part */
int rpc_wss(const struct rpc_ctx *ctx, enum control_role role,
    const Vitals__Request *req, struct rpc_result *res);
Vitals__WssHealth *rpc_pb_wss_health(struct rpc_arena *a, struct wss *w);
/* rpc_burst.c: the burst triggers' firings and Health part */
struct burst;
int rpc_bursts(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res);
Vitals__BurstHealth *rpc_pb_burst_health(struct rpc_arena *a,
    const struct burst *b);
/* rpc_sched.c: the BPF rows of the process of history h[0..n) in the
 * windows w[0..nw): each point's and their sum; and each point's of its
 * threads' history th[0..nth) */
struct store_hist;
int rpc_sched_process(struct rpc_arena *a, Vitals__ProcessInfo *info,
    const struct store_hist *h, size_t n, const struct store_hist *th,
    size_t nth, struct window *const *w, size_t nw);
/* rpc_sched.c: the BPF top of windows w[0..n) into list */
struct rpc_query;
int rpc_sched_top(struct rpc_arena *a, Vitals__TaskList *list,
    const struct rpc_query *q, struct window *const *w, size_t n);
/* rpc_phase.c: the fault phase fields of a TraceWindow */
struct window_trace;
struct window_trace_phase;
int rpc_phase_fill(struct rpc_arena *a, Vitals__TraceWindow *m,
    const struct window_trace *t);
Vitals__TracePhase *rpc_pb_phase(struct rpc_arena *a,
    const struct window_trace_phase *p, bool rest);
/* rpc_trace.c */
Vitals__TraceHealth *rpc_pb_trace_health(struct rpc_arena *a,
    const struct window *last);

/* rpc_pb.c: now − since, never below VITALS_WALL_MIN; a TimeRange as
 * [from, to) in wall ns (NULL: all stored), or why not */
int64_t rpc_since_from(int64_t now, int64_t since);
const char *rpc_resolve_range(const Vitals__TimeRange *tr, int64_t now,
    int64_t *from, int64_t *to, bool *relative);
/* rpc_gpufreq.c: the GPU frequency request (live, or a query of a range)
 * and Health's part */
struct gpufreq;
int rpc_gpufreq(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res);
Vitals__GpuFreqHealth *rpc_pb_gpufreq_health(struct rpc_arena *a,
    const struct gpufreq *g);
/* rpc_syscalls.c: Health.syscalls */
Vitals__SyscallHealth *rpc_pb_syscall_health(struct rpc_arena *a,
    const struct sc_health *h);
/* rpc_dmabuf.c: the dmabuf request (live, or a query of a range) */
int rpc_dmabuf(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res);
/* rpc_syscalls.c: the syscalls request (the last window, or a range) */
int rpc_syscalls(const struct rpc_ctx *ctx, const Vitals__Request *req,
    struct rpc_result *res);

/* rpc_export.c: NULL and q filled but for its range, or why not */
const char *rpc_export_query(const Vitals__ExportRequest *er,
    struct rpc_query *q);

/* rpc_health.c: the Health message, in a */
Vitals__Health *rpc_pb_health(struct rpc_arena *a, const struct rpc_ctx *ctx);

#endif /* VITALSD_RPC_INT_H */
