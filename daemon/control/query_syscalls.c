/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall latency over a range, on a query thread: the stored parts
 * folded into one (store_syscalls.c, window_syscalls_merge), answered by
 * rpc_syscalls.c.
 */
#include <stdlib.h>

#include "control/control.h"
#include "rpc/rpc.h"
#include "store/store.h"
#include "syscalls/sc_window.h"

int
query_syscalls(struct store *s, const struct rpc_query *rq, uint32_t max,
    uint8_t **ret, size_t *ret_len)
{
	struct window_syscalls *p = NULL;
	uint32_t nw = 0;
	int r;

	if ((r = store_syscalls_range(s, rq->from_wall_ns, rq->to_wall_ns, &p,
		 &nw)) < 0)
		return r;
	r = rpc_answer_syscalls(rq, p, nw, max, ret, ret_len);
	window_syscalls_free(p);
	return r;
}
