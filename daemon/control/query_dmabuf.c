/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA-BUF over a range, on a query thread: the stored parts folded into
 * one (store_dmabuf.c), answered by rpc_dmabuf.c.
 */
#include <stdlib.h>

#include "control/control.h"
#include "dmabuf/dmabuf.h"
#include "rpc/rpc.h"
#include "store/store.h"

int
query_dmabuf(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_dmabuf *p = NULL;
	uint32_t nw = 0;
	int r;

	if ((r = store_dmabuf_range(s, rq->from_wall_ns, rq->to_wall_ns, &p,
		 &nw)) < 0)
		return r;
	r = rpc_answer_dmabuf(rq, p, nw, max, ret, ret_len);
	window_dmabuf_free(p);
	return r;
}
