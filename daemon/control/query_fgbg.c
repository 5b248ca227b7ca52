/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `top` and `proc` over one foreground/background dataset (doc/metrics.md,
 * "Foreground and background"): the windows' fgbg parts of the range,
 * summed for the state asked. A range with no such data answers ABSENT,
 * naming why (not Android, fgbg off), never an empty list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "fgbg/fgbg.h"
#include "rpc/rpc.h"
#include "store/store.h"
#include "window/window.h"

static int
fail(const struct rpc_query *rq, int err, uint8_t **ret, size_t *ret_len)
{
	char msg[128];

	if (err == -EBADF)
		return rpc_error_frame(rq->id, RPC_UNAVAILABLE,
		    "the window store is not open", ret, ret_len);
	if (err == -EINVAL)
		return rpc_error_frame(rq->id, RPC_BAD_REQUEST, "invalid range",
		    ret, ret_len);
	snprintf(msg, sizeof(msg), "store read failed: %s", strerror(-err));
	return rpc_error_frame(rq->id, RPC_ERROR, msg, ret, ret_len);
}

/* 0 when the range has the datasets, else the ABSENT answer (1). */
static int
absent(const struct rpc_query *rq, struct window_fgbg *const *p, size_t n,
    uint8_t **ret, size_t *ret_len, int *ret_r)
{
	int st = fgbg_range_status(p, n);
	const char *why;

	if (st == FGBG_ON)
		return 0;
	if (st == FGBG_ABSENT)
		why = "foreground/background is absent here: not Android and "
		      "no Android cpusets (fgbg = auto)";
	else if (st == FGBG_OFF)
		why = "foreground/background is off (fgbg = off)";
	else
		why = "foreground/background is absent: no window in the "
		      "range recorded it (fgbg = off, or none closed yet)";
	*ret_r = rpc_error_frame(rq->id, RPC_ABSENT, why, ret, ret_len);
	return 1;
}

static uint64_t
key(const struct window_task *t, enum store_metric m)
{
	switch (m) {
	case METRIC_MINFLT:
		return t->d_minflt;
	case METRIC_MAJFLT:
		return t->d_majflt;
	default:
		return t->d_utime + t->d_stime;
	}
}

/* The top n first, busiest first, ties by identity: a selection, since
 * qsort's comparator takes no metric and the query threads share statics. */
static void
top_n(struct window_task *t, size_t n, size_t want, enum store_metric m)
{
	size_t i, k, best;

	for (i = 0; i < n && i < want; i++) {
		best = i;
		for (k = i + 1; k < n; k++) {
			uint64_t kk = key(&t[k], m), kb = key(&t[best], m);

			if (kk > kb ||
			    (kk == kb &&
				(t[k].id < t[best].id ||
				    (t[k].id == t[best].id &&
					t[k].starttime < t[best].starttime))))
				best = k;
		}
		if (best != i) {
			struct window_task x = t[i];

			t[i] = t[best];
			t[best] = x;
		}
	}
}

int
query_fgbg_top(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_fgbg **p = NULL;
	struct store_hist *w = NULL;
	struct window_task *t = NULL;
	size_t n = 0, nt = 0;
	int r;

	if ((r = store_fgbg_range(s, rq->from_wall_ns, rq->to_wall_ns, &p, &w,
		 &n)) < 0)
		return fail(rq, r, ret, ret_len);
	if (absent(rq, p, n, ret, ret_len, &r))
		goto out;
	if ((r = fgbg_sum(p, n, (enum fg_state)(rq->state - 1), 0, 0, &t,
		 &nt)) < 0)
		goto out;
	top_n(t, nt, rq->n, rq->metric);
	r = rpc_answer_top(rq, t, nt < rq->n ? nt : rq->n, max, ret, ret_len);
out:
	free(t);
	store_fgbg_range_free(p, w, n);
	return r;
}

int
query_fgbg_process(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_fgbg **p = NULL;
	struct store_hist *w = NULL, *h = NULL;
	struct window_task *t = NULL;
	size_t n = 0, nt = 0, nh = 0, i;
	bool known = false;
	char msg[96];
	int r;

	if ((r = store_fgbg_range(s, rq->from_wall_ns, rq->to_wall_ns, &p, &w,
		 &n)) < 0)
		return fail(rq, r, ret, ret_len);
	if (absent(rq, p, n, ret, ret_len, &r))
		goto out;
	if (n && (h = calloc(n, sizeof(*h))) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	/* one point per window with activity in the state */
	for (i = 0; i < n; i++) {
		unsigned st;

		for (st = 0; st < FG__MAX && !known; st++) {
			if ((r = fgbg_sum(&p[i], 1, (enum fg_state)st, rq->pid,
				 rq->starttime, &t, &nt)) < 0)
				goto out;
			known = nt > 0;
			free(t);
			t = NULL;
		}
		if ((r = fgbg_sum(&p[i], 1, (enum fg_state)(rq->state - 1),
			 rq->pid, rq->starttime, &t, &nt)) < 0)
			goto out;
		if (nt) {
			h[nh] = w[i];
			/* the newest instance when starttime was not given */
			h[nh++].t = t[nt - 1];
		}
		free(t);
		t = NULL;
	}
	if (!known) {
		snprintf(msg, sizeof(msg),
		    "no process %d with foreground/background data in the "
		    "range",
		    rq->pid);
		r = rpc_error_frame(rq->id, RPC_NOT_FOUND, msg, ret, ret_len);
		goto out;
	}
	r = rpc_answer_process(rq, h, nh, NULL, 0, NULL, RPC_IDENT_NONE, NULL,
	    NULL, 0, max, ret, ret_len);
out:
	free(t);
	free(h);
	store_fgbg_range_free(p, w, n);
	return r;
}
