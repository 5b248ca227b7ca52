/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control plane's store reads themselves (query.c runs them on its
 * pool of read threads): one request resolved into the store calls that
 * answer it and the answer frame, within the frame and memory budgets,
 * and when two requests are the same question (one answer serves both).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "control/control.h"
#include "core/compat.h"
#include "core/util.h"
#include "gpumem/gpumem.h"
#include "hp/hp.h"
#include "proc/proc.h"
#include "rpc/rpc.h"
#include "store/store.h"
#include "window/window.h"

static int64_t
absdiff(int64_t a, int64_t b)
{
	return a > b ? a - b : b - a;
}

/* One answer serves both: the same question over the same range (ranges
 * ending "now" may have been resolved up to QUERY_JOIN_SLACK_NS apart). */
bool
query_same(const struct rpc_query *a, const struct rpc_query *b)
{
	if (a->op != b->op || a->relative != b->relative || a->hz != b->hz)
		return false;
	switch (a->op) {
	case RPC_Q_WINDOWS:
		if (a->granularity_s != b->granularity_s ||
		    a->max_windows != b->max_windows || a->top_n != b->top_n ||
		    a->with_tasks != b->with_tasks)
			return false;
		break;
	case RPC_Q_TOP:
		if (a->metric != b->metric || a->weighted != b->weighted ||
		    a->threads != b->threads || a->n != b->n ||
		    a->state != b->state || a->bpf != b->bpf ||
		    a->sched_metric != b->sched_metric)
			return false;
		break;
	case RPC_Q_PROCESS:
		if (a->pid != b->pid || a->starttime != b->starttime ||
		    a->threads != b->threads || a->state != b->state)
			return false;
		break;
	case RPC_Q_GPUMEM:
	case RPC_Q_DMABUF:
	case RPC_Q_GPUFREQ:
		break;
	case RPC_Q_SYSCALLS:
		if (a->pid != b->pid || strcmp(a->process, b->process) != 0)
			return false;
		break;
	case RPC_Q_HP_LIST:
		/* records change on the loop, not with time: never shared */
		return false;
	case RPC_Q_TRACE:
		if (a->pid != b->pid || a->max_windows != b->max_windows ||
		    strcmp(a->process, b->process) != 0)
			return false;
		break;
	case RPC_Q_EXPORT:
		if (a->pid != b->pid || a->max_windows != b->max_windows ||
		    a->format != b->format)
			return false;
		break;
	}
	if (!a->relative)
		return a->from_wall_ns == b->from_wall_ns &&
		    a->to_wall_ns == b->to_wall_ns;
	return absdiff(a->from_wall_ns, b->from_wall_ns) <=
	    QUERY_JOIN_SLACK_NS &&
	    absdiff(a->to_wall_ns, b->to_wall_ns) <= QUERY_JOIN_SLACK_NS;
}

/* A store error as an answer; the frame is the caller's. */
int
query_store_error(const struct rpc_query *rq, struct store *s, int err,
    uint8_t **ret, size_t *ret_len)
{
	struct store_stats st;
	char msg[256];

	if (err == -EBADF)
		return rpc_error_frame(rq->id, RPC_UNAVAILABLE,
		    "the window store is not open", ret, ret_len);
	if (err == -EINVAL)
		return rpc_error_frame(rq->id, RPC_BAD_REQUEST,
		    "invalid range or metric", ret, ret_len);
	store_get_stats(s, &st);
	snprintf(msg, sizeof(msg), "store read failed: %s%s%s", strerror(-err),
	    st.last_errmsg[0] ? ": " : "", st.last_errmsg);
	return rpc_error_frame(rq->id, RPC_ERROR, msg, ret, ret_len);
}

/* The newest max_windows of a range as read within the budget: w[skip..n)
 * answer; trunc and bytes as store_windows_budget says. */
struct newest_read {
	struct window **w;
	size_t n, skip, bytes;
	bool trunc;
};

/*
 * Too many: only the newest max_windows are loaded (never the whole
 * range), and loading stops at the memory budget; ask again with an
 * earlier `to`. 0 is "no limit" to the store: a cap of 0 (rpc.c never
 * sends one) asks for one and answers none, truncated if anything
 * matched. ret_cut is set when the budget cut the read.
 */
static int
read_newest(struct store *s, const struct rpc_query *rq, unsigned granularity_s,
    size_t budget, bool *ret_cut, struct newest_read *ret)
{
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = store_windows_budget(s, rq->from_wall_ns, rq->to_wall_ns,
		 granularity_s, rq->max_windows ? rq->max_windows : 1, budget,
		 &ret->w, &ret->n, &ret->trunc, &ret->bytes)) < 0)
		return r;
	if (ret->n > rq->max_windows)
		ret->skip = ret->n - rq->max_windows;
	if (ret->bytes)
		*ret_cut = true;
	return 0;
}

static void
newest_free(struct newest_read *nr)
{
	size_t i;

	for (i = 0; i < nr->n; i++)
		window_free(nr->w[i]);
	free(nr->w);
}

static int
run_windows(struct store *s, const struct rpc_query *rq, uint32_t max,
    size_t budget, bool *ret_cut, uint8_t **ret, size_t *ret_len)
{
	struct newest_read nr;
	int r;

	if ((r = read_newest(s, rq, rq->granularity_s, budget, ret_cut, &nr)) <
	    0)
		return query_store_error(rq, s, r, ret, ret_len);
	r = rpc_answer_windows_cut(rq, nr.w + nr.skip, nr.n - nr.skip,
	    nr.trunc || nr.skip > 0, budget, nr.bytes, max, ret, ret_len);
	newest_free(&nr);
	return r;
}

static int
run_top(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_task *t = NULL;
	size_t n = 0;
	int r;

	if (rq->state)
		return query_fgbg_top(s, rq, max, ret, ret_len);
	if (rq->weighted) {
		r = query_wcpu_top(s, rq, max, ret, ret_len);
		return r < 0 ? query_store_error(rq, s, r, ret, ret_len) : r;
	}
	if ((r = store_top(s, rq->from_wall_ns, rq->to_wall_ns, rq->threads,
		 rq->metric, rq->n, &t, &n)) < 0)
		return query_store_error(rq, s, r, ret, ret_len);
	r = rpc_answer_top(rq, t, n, max, ret, ret_len);
	free(t);
	return r;
}

/*
 * The instance of pid that lived through [from, to] without a row there
 * (it used no CPU): live now in /proc and started before `to`, or one the
 * store holds rows of before and after the range (on one boot, the earlier
 * ones not ending in its exit). Its identity goes to ret (activity zero)
 * and its source to ret_src; -ENOENT: none.
 */
static int
quiet_instance(struct store *s, const char *proc_root,
    const struct rpc_query *rq, struct window_task *ret,
    enum rpc_ident_src *ret_src)
{
	struct store_hist *before = NULL, *after = NULL;
	size_t nb = 0, na = 0, i, k;
	int64_t start_wall;
	struct window_task t;
	int r;

	if (proc_root &&
	    proc_identity(proc_root, rq->pid,
		rq->hz ? rq->hz : (unsigned)sysconf(_SC_CLK_TCK), &t,
		&start_wall) == 0 &&
	    start_wall <= rq->to_wall_ns &&
	    (rq->starttime == 0 || rq->starttime == t.starttime)) {
		*ret = t;
		*ret_src = RPC_IDENT_PROC;
		return 0;
	}
	/* a range from the beginning or to the end has no side to look at */
	if (rq->from_wall_ns <= VITALS_WALL_MIN ||
	    rq->to_wall_ns == INT64_MAX) {
		r = -ENOENT;
		goto out;
	}
	if ((r = store_history(s, false, rq->pid, rq->starttime,
		 VITALS_WALL_MIN, rq->from_wall_ns, &before, &nb)) < 0)
		goto out;
	if (nb == 0) {
		r = -ENOENT;
		goto out;
	}
	if ((r = store_history(s, false, rq->pid, rq->starttime, rq->to_wall_ns,
		 INT64_MAX, &after, &na)) < 0)
		goto out;
	r = -ENOENT;
	/* the newest instance first: a pid reused later is the one meant */
	for (i = nb; i-- > 0 && r == -ENOENT;) {
		const struct store_hist *b = &before[i];

		/* its last row before the range; one that exited is gone */
		if (b->t.exited ||
		    (i + 1 < nb &&
			before[i + 1].t.starttime == b->t.starttime &&
			strcmp(before[i + 1].boot_id, b->boot_id) == 0))
			continue;
		for (k = 0; k < na; k++)
			if (after[k].t.starttime == b->t.starttime &&
			    strcmp(after[k].boot_id, b->boot_id) == 0)
				break;
		if (k == na)
			continue;
		memset(ret, 0, sizeof(*ret));
		ret->id = b->t.id;
		ret->tgid = b->t.tgid;
		ret->starttime = b->t.starttime;
		ret->uid = b->t.uid;
		memcpy(ret->comm, b->t.comm, sizeof(ret->comm));
		window_task_set_name(ret, window_task_name(&b->t));
		*ret_src = RPC_IDENT_STORE;
		r = 0;
	}
out:
	free(before);
	free(after);
	return r;
}

/* The cgroup v2 path of instance (pid, starttime) if it is alive, into
 * buf; false otherwise (gone, its pid reused, no v2 hierarchy). */
static bool
live_cgroup(const char *proc_root, int32_t pid, uint64_t starttime, char *buf,
    size_t sz)
{
	struct window_task t;
	int64_t wall;

	if (proc_root == NULL || pid <= 0 ||
	    proc_identity(proc_root, pid, (unsigned)sysconf(_SC_CLK_TCK), &t,
		&wall) < 0 ||
	    (starttime && t.starttime != starttime))
		return false;
	return cgroup_of_pid(proc_root, pid, buf, sz) == 0;
}

/*
 * A process over a range: its rows, or, when it used no CPU there, its
 * identity with zero activity; NOT_FOUND only when no instance of it
 * lived in the range. proc_root NULL: the store alone.
 */
#define PROC_SCHED_BUDGET (64u << 20) /* windows read for BPF rows */
static int
run_process(struct store *s, const char *proc_root, const struct rpc_query *rq,
    uint32_t max, uint8_t **ret, size_t *ret_len)
{
	struct store_hist *h = NULL, *th = NULL;
	struct window_task ident;
	enum rpc_ident_src src = RPC_IDENT_NONE;
	struct window **w = NULL;
	size_t n = 0, nth = 0, nw = 0, i, bytes = 0;
	char msg[96], cg[CG_PATH_LEN * 2];
	bool have_cg, trunc = false;
	int r;

	if (rq->state)
		return query_fgbg_process(s, rq, max, ret, ret_len);
	if ((r = store_history(s, false, rq->pid, rq->starttime,
		 rq->from_wall_ns, rq->to_wall_ns, &h, &n)) < 0)
		return query_store_error(rq, s, r, ret, ret_len);
	if (n == 0) {
		r = quiet_instance(s, proc_root, rq, &ident, &src);
		if (r == -ENOENT) {
			snprintf(msg, sizeof(msg), "no process %d in the range",
			    rq->pid);
			return rpc_error_frame(rq->id, RPC_NOT_FOUND, msg, ret,
			    ret_len);
		}
		if (r < 0)
			return query_store_error(rq, s, r, ret, ret_len);
	}
	if (rq->threads &&
	    (r = store_thread_history(s, rq->pid, rq->starttime,
		 rq->from_wall_ns, rq->to_wall_ns, &th, &nth)) < 0) {
		free(h);
		return query_store_error(rq, s, r, ret, ret_len);
	}
	/* a figure that cannot be read leaves the points without one */
	(void)query_wcpu_history(s, rq->from_wall_ns, rq->to_wall_ns, false, h,
	    n);
	if (rq->threads)
		(void)query_wcpu_history(s, rq->from_wall_ns, rq->to_wall_ns,
		    true, th, nth);
	have_cg = live_cgroup(proc_root, rq->pid,
	    n			      ? h[n - 1].t.starttime :
		src != RPC_IDENT_NONE ? ident.starttime :
					rq->starttime,
	    cg, sizeof(cg));
	/* the windows of its history hold its BPF rows (their loss is not
	 * the answer's: without them it goes out without BPF figures) */
	if (n &&
	    store_windows_budget(s, h[0].wall_start_ns, h[n - 1].wall_end_ns, 0,
		(unsigned)n + 16, PROC_SCHED_BUDGET, &w, &nw, &trunc,
		&bytes) < 0) {
		w = NULL;
		nw = 0;
	}
	r = rpc_answer_process(rq, h, n, th, nth,
	    src != RPC_IDENT_NONE ? &ident : NULL, src, have_cg ? cg : NULL, w,
	    nw, max, ret, ret_len);
	for (i = 0; i < nw; i++)
		window_free(w[i]);
	free(w);
	free(h);
	free(th);
	return r;
}

/* GpuMem over a span of stored windows (store_gpumem.c). */
static int
run_gpumem(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_gpumem st = { 0 };
	struct gpumem_series ser;
	struct gpumem_span *sp = NULL;
	size_t n = 0;
	int r;

	/* a value takes at most 12 bytes on the wire (a 10-byte varint and
	 * a point index < 240): the series take at most 3/8 of the frame,
	 * the rest (~80 bytes an instance) holds what a span answered
	 * before it had series: some 8,000 instances */
	if ((r = store_gpumem_span_series(s, rq->from_wall_ns, rq->to_wall_ns,
		 (size_t)max / 32, &sp, &n, &st, &ser)) < 0)
		return query_store_error(rq, s, r, ret, ret_len);
	r = rpc_answer_gpumem_span(rq, sp, n, &st, &ser, max, ret, ret_len);
	store_gpumem_series_free(&ser);
	free(sp);
	return r;
}

/* How a run of stored windows is answered (rpc_trace.c, rpc_export.c). */
typedef int (*windows_answer_fn)(const struct rpc_query *q,
    struct window *const *w, size_t n, bool truncated, uint32_t max,
    uint8_t **ret, size_t *ret_len);

/*
 * Windows as stored, the newest max_windows of the range within the read
 * budget: a trace (tasks come along: --process resolves names there) or an
 * export. An export's answer says it was cut when the budget cut it too;
 * a trace's says so through ret_cut alone.
 */
static int
run_as_stored(struct store *s, const struct rpc_query *rq, uint32_t max,
    size_t budget, windows_answer_fn answer, bool budget_truncates,
    bool *ret_cut, uint8_t **ret, size_t *ret_len)
{
	struct newest_read nr;
	int r;

	if ((r = read_newest(s, rq, 0, budget, ret_cut, &nr)) < 0)
		return query_store_error(rq, s, r, ret, ret_len);
	r = answer(rq, nr.w + nr.skip, nr.n - nr.skip,
	    nr.trunc || nr.skip > 0 || (budget_truncates && nr.bytes > 0), max,
	    ret, ret_len);
	newest_free(&nr);
	return r;
}

/*
 * The BPF top: the range's windows as stored (a roll-up holds its
 * windows' rows merged), their sched rows summed by identity. The newest
 * windows first when the budget cuts the range (ret_cut says so).
 */
#define TOP_SCHED_WINDOWS 20000
static int
run_top_sched(struct store *s, const struct rpc_query *rq, uint32_t max,
    size_t budget, bool *ret_cut, uint8_t **ret, size_t *ret_len)
{
	struct window **w = NULL;
	size_t n = 0, i, bytes = 0;
	bool trunc = false;
	int r;

	if ((r = store_windows_budget(s, rq->from_wall_ns, rq->to_wall_ns, 0,
		 TOP_SCHED_WINDOWS, budget, &w, &n, &trunc, &bytes)) < 0)
		return query_store_error(rq, s, r, ret, ret_len);
	if (bytes || trunc)
		*ret_cut = true;
	r = rpc_answer_top_sched(rq, w, n, max, ret, ret_len);
	for (i = 0; i < n; i++)
		window_free(w[i]);
	free(w);
	return r;
}

/* heapprofd session records, newest first (store_hp.c). */
static int
run_hp_list(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct hp_record *v = NULL;
	size_t n = 0;
	int r;

	if ((r = store_hp_list(s, rq->n, &v, &n)) < 0)
		return query_store_error(rq, s, r, ret, ret_len);
	r = rpc_answer_hp_list(rq, v, n, max, ret, ret_len);
	free(v);
	return r;
}

int
query_run_budget(struct store *s, const char *proc_root,
    const struct rpc_query *rq, uint32_t max_frame, size_t budget,
    bool *ret_cut, uint8_t **ret, size_t *ret_len)
{
	*ret_cut = false;
	switch (rq->op) {
	case RPC_Q_WINDOWS:
		return run_windows(s, rq, max_frame, budget, ret_cut, ret,
		    ret_len);
	case RPC_Q_TOP:
		if (rq->bpf)
			return run_top_sched(s, rq, max_frame, budget, ret_cut,
			    ret, ret_len);
		return run_top(s, rq, max_frame, ret, ret_len);
	case RPC_Q_PROCESS:
		return run_process(s, proc_root, rq, max_frame, ret, ret_len);
	case RPC_Q_GPUMEM:
		return run_gpumem(s, rq, max_frame, ret, ret_len);
	case RPC_Q_TRACE:
		return run_as_stored(s, rq, max_frame, budget, rpc_answer_trace,
		    false, ret_cut, ret, ret_len);
	case RPC_Q_HP_LIST:
		return run_hp_list(s, rq, max_frame, ret, ret_len);
	case RPC_Q_EXPORT:
		return run_as_stored(s, rq, max_frame, budget,
		    rpc_answer_export, true, ret_cut, ret, ret_len);
	case RPC_Q_DMABUF: {
		int r = query_dmabuf(s, rq, max_frame, ret, ret_len);

		return r < 0 ? query_store_error(rq, s, r, ret, ret_len) : r;
	}
	case RPC_Q_GPUFREQ: {
		int r = query_gpufreq(s, rq, max_frame, ret, ret_len);

		return r < 0 ? query_store_error(rq, s, r, ret, ret_len) : r;
	}
	case RPC_Q_SYSCALLS: {
		int r = query_syscalls(s, rq, max_frame, ret, ret_len);

		return r < 0 ? query_store_error(rq, s, r, ret, ret_len) : r;
	}
	}
	return -EINVAL;
}

int
query_run(struct store *s, const struct rpc_query *rq, uint32_t max_frame,
    uint8_t **ret, size_t *ret_len)
{
	bool cut;

	return query_run_budget(s, NULL, rq, max_frame, 0, &cut, ret, ret_len);
}
