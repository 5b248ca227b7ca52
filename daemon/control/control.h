/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control plane: the socket (control_sock.c), connections and roles
 * (control.c), store reads on their own threads (query.c).
 */
#ifndef VITALSD_CONTROL_H
#define VITALSD_CONTROL_H

#include "rpc/rpc.h"

struct config;
struct event_base;
struct store;

/* Control-plane counters, cumulative since start (ControlHealth). */
struct control_stats {
	uint32_t connections;
	uint64_t accepted, requests, denied, bad_frames;
	uint64_t idle_closed, overflow_closed, accept_paused, queries_busy;
	uint64_t queries, query_ns_max; /* store reads run, slowest */
	uint32_t queries_queued;
	uint64_t queries_shared;     /* answered by another request's read */
	uint64_t cap_refused;	     /* answered BUSY at a uid or trusted cap */
	uint32_t query_threads;	     /* the read pool */
	uint64_t queries_budget_cut; /* answers cut at the memory budget */
	/* read connections released when idle (store_conn_idle), and the
	 * times they opened their file */
	uint64_t readers_idle_closed, readers_opened;
	/* read connections with the file open now (released ones too) */
	uint32_t readers_open;
	/* read connections warmed at start (query.c warm()), Σ their time */
	uint64_t readers_warmed, readers_warm_ns;
	/* the read pool's connections' caches (store_wcache.c), Σ over the
	 * threads: counts since start (connections closed idle included),
	 * bytes held now */
	uint64_t rc_hits, rc_misses, rc_memo_hits, rc_memo_saved, rc_bytes;
};

/* query.c: store reads on a thread of their own, answers back to the loop. */
struct query;

/* Called on the loop thread; frame ownership passes to the callee. */
typedef void (*query_done_fn)(uint64_t conn_id, uint32_t tag, uint8_t *frame,
    size_t len, void *arg);

struct query_opts {
	unsigned threads;   /* 0: 2 */
	unsigned queue_max; /* all uids; 0: 64 */
	unsigned uid_queue; /* one uid; 0: 16 */
	uint32_t max_frame;
	size_t budget; /* bytes one read may load; 0: none */
	/* where a process that used no CPU in a range is looked up (kept,
	 * not copied); NULL: the store alone */
	const char *proc_root;
	/* a thread's connection released after this many seconds without
	 * a read (store_conn_idle: its memory given back, its file kept;
	 * query_idle_s); 0: 30 */
	unsigned idle_s;
	/* the read threads' nice value (query_nice, 0-19) when nice_set;
	 * else QUERY_NICE (10) */
	bool nice_set;
	int nice;
	/* no connection opened at start: each thread opens its own at its
	 * first read, a second only when reads overlap, and makes no warm
	 * read (query_warm = 0, the daemon's default) */
	bool no_warm;
};

int query_new(struct event_base *base, struct store *store, unsigned queue_max,
    uint32_t max_frame, int priority, query_done_fn done, void *arg,
    struct query **ret);
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
/* Until the pool's warm reads have ended, at most max_ns (set-up). */
void query_warm_wait(struct query *q, int64_t max_ns);
int query_cached(struct query *q, const struct rpc_query *rq, uint8_t **ret,
    size_t *ret_len);
void query_get_stats(struct query *q, struct control_stats *ret);
/* query_run.c: one request's store reads and answer (on a pool thread) */
#define QUERY_JOIN_SLACK_NS NSEC_PER_SEC /* "now" ranges this close are equal */
int query_run(struct store *s, const struct rpc_query *rq, uint32_t max_frame,
    uint8_t **ret, size_t *ret_len);
int query_run_budget(struct store *s, const char *proc_root,
    const struct rpc_query *rq, uint32_t max_frame, size_t budget,
    bool *ret_cut, uint8_t **ret, size_t *ret_len);
bool query_same(const struct rpc_query *a, const struct rpc_query *b);
int query_store_error(const struct rpc_query *rq, struct store *s, int err,
    uint8_t **ret, size_t *ret_len);
/* query_fgbg.c: top and proc over one foreground/background dataset */
int query_fgbg_top(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len);
int query_fgbg_process(struct store *s, const struct rpc_query *rq,
    uint32_t max, uint8_t **ret, size_t *ret_len);

/* control_sock.c: the listening socket, inherited or made. */
struct control_sock {
	int fd;
	bool android_init; /* handed over by Android init */
	char *path;	   /* the socket file made here; NULL: inherited */
	dev_t dev;
	ino_t ino;
};

int control_sock_open(const struct config *cfg, struct control_sock *ret);
void control_sock_close(struct control_sock *cs);

/* control.c: connections, their roles and limits. */
struct control;

enum control_role control_role(const struct config *cfg, uint32_t uid,
    uint32_t gid, uint32_t own_uid);
/* What the control plane needs of the daemon, filled by daemon.c. */
struct control_hooks {
	struct rpc_modules mod; /* handed to every answer */
	/* the daemon's figures for one answer (loop thread); NULL: none */
	void (*get_info)(void *arg, struct vitalsd_info *ret);
	void *info_arg;
};

int control_new(struct event_base *base, const struct config *cfg,
    const struct control_hooks *hooks, struct store *store,
    struct control **ret);
struct control *control_free(struct control *ctl);
/* Until its read threads' warm reads have ended, at most max_ns. */
void control_warm_wait(struct control *ctl, int64_t max_ns);
/* A reload's roles (trusted_*, reader_*, shell_uid, system_uid): for
 * connections accepted from now on. */
void control_set_roles(struct control *ctl, const struct config *cfg);
void control_get_stats(struct control *ctl, struct control_stats *ret);

/* query_wcpu.c: capacity-weighted CPU in answers, on a query thread */
struct store;
struct store_hist;
struct rpc_query;
/* query_dmabuf.c: the DMA-BUF parts of a range folded into one answer;
 * a store error is returned for the caller to answer */
int query_dmabuf(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len);
/* query_gpufreq.c: the GPU frequency parts of a range folded into one
 * answer */
int query_gpufreq(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len);
/* query_syscalls.c: the syscall parts of a range folded into one answer;
 * a store error is returned for the caller to answer */
int query_syscalls(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len);
int query_wcpu_history(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, bool threads, struct store_hist *h, size_t n);
int query_wcpu_top(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len);

#endif /* VITALSD_CONTROL_H */
