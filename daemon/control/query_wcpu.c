/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity-weighted CPU in answers (doc/metrics.md, "Capacity-weighted
 * CPU"): `top --weighted` over a range and a process's history, from the
 * store's task rows and the wcpu parts of the same windows. Runs on a
 * query thread, as query.c does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "rpc/rpc.h"
#include "store/store.h"
#include "wcpu/wcpu.h"

/* The span's window h came from (same boot, same wall bounds), NULL:
 * none. v is ordered by wall_start_ns. */
static const struct store_wcpu_win *
span_of(const struct store_wcpu_win *v, size_t n, const struct store_hist *h)
{
	size_t lo = 0, hi = n, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].wall_start_ns < h->wall_start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < n && v[i].wall_start_ns == h->wall_start_ns; i++)
		if (v[i].wall_end_ns == h->wall_end_ns &&
		    strcmp(v[i].boot_id, h->boot_id) == 0)
			return &v[i];
	return NULL;
}

/* Each point of a history gets its window's weighted ticks. */
int
query_wcpu_history(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, struct store_hist *h, size_t n)
{
	struct store_wcpu_win *v = NULL;
	size_t nv = 0, i;
	int r;

	if (n == 0)
		return 0;
	if ((r = store_wcpu_span(s, from_wall_ns, to_wall_ns, &v, &nv)) < 0)
		return r;
	for (i = 0; i < n; i++) {
		const struct store_wcpu_win *w = span_of(v, nv, &h[i]);
		unsigned src;

		if (w == NULL || w->p == NULL)
			continue;
		h[i].wtd_ticks = wcpu_task(w->p, threads, h[i].t.id,
		    h[i].t.starttime, h[i].t.d_utime + h[i].t.d_stime, &src);
		h[i].wtd_src = src;
	}
	store_wcpu_span_free(v, nv);
	return 0;
}

/*
 * Every task of the range, weighted: by its own BPF rows of the range
 * (Σ weighted ns / Σ ns, applied to its ticks) where it has any, else
 * by the range's busy-weighted scale; no figure (0, source "") when no
 * window of the range has the part. Sorted and cut by the answer.
 */
int
query_wcpu_top(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_task *t = NULL;
	struct store_wcpu_win *v = NULL;
	struct rpc_wcpu_task *o = NULL;
	struct window_wcpu range = { 0 };
	size_t n = 0, nv = 0, i, k, parts = 0;
	int r;

	if ((r = store_top(s, rq->from_wall_ns, rq->to_wall_ns, rq->threads,
		 METRIC_CPU, 0, &t, &n)) < 0)
		return r;
	if ((r = store_wcpu_span(s, rq->from_wall_ns, rq->to_wall_ns, &v,
		 &nv)) < 0)
		goto out;
	for (k = 0; k < nv; k++)
		if (v[k].p) {
			range.busy_ticks += v[k].p->busy_ticks;
			range.wbusy += v[k].p->wbusy;
			parts++;
		}
	if (n && (o = calloc(n, sizeof(*o))) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		uint64_t ticks = t[i].d_utime + t[i].d_stime, on = 0, wtd = 0;

		for (k = 0; k < nv; k++) {
			const struct wcpu_row *row = wcpu_find(v[k].p,
			    rq->threads, t[i].id, t[i].starttime);

			if (row) {
				on += row->oncpu_ns;
				wtd += row->wtd_ns;
			}
		}
		o[i].t = t[i];
		if (parts == 0) {
			/* windows stored before the figure existed */
			o[i].src = WCPU_SRC_NONE;
		} else if (on) {
			o[i].src = WCPU_SRC_BPF;
			o[i].wtd_ticks = (double)ticks * (double)wtd /
			    (double)on;
		} else {
			o[i].src = WCPU_SRC_APPROX;
			o[i].wtd_ticks = (double)ticks *
			    wcpu_approx_factor(&range);
		}
	}
	r = rpc_answer_top_wcpu(rq, o, n, max, ret, ret_len);
out:
	store_wcpu_span_free(v, nv);
	free(o);
	free(t);
	return r;
}
