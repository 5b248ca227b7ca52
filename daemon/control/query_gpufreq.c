/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU frequency over a range, on a query thread: the stored parts folded
 * into one (store_gpufreq.c), answered by rpc_gpufreq.c.
 */
#include <stdlib.h>

#include "control/control.h"
#include "gpufreq/gpufreq.h"
#include "rpc/rpc.h"
#include "store/store.h"

int
query_gpufreq(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_gpufreq *p = NULL;
	int r;

	if ((r = store_gpufreq_range(s, rq->from_wall_ns, rq->to_wall_ns, &p)) <
	    0)
		return r;
	r = rpc_answer_gpufreq(rq, p, max, ret, ret_len);
	window_gpufreq_free(p);
	return r;
}
