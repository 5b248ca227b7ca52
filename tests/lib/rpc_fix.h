/* SPDX-License-Identifier: Apache-2.0 */
/* A synthetic window for the control plane's tests (check_rpc*). */
#ifndef VITALS_TEST_RPC_FIX_H
#define VITALS_TEST_RPC_FIX_H

#include <stdint.h>

#include "vitalsd.h"

/* Task id of process tgid with cpu ticks of user time (half as much system). */
struct window_task rpcfix_mktask(int32_t id, int32_t tgid, uint64_t cpu,
    const char *comm);
/* 30 processes (pid i + 1 burns 3 * i ticks), each with 2 threads. */
struct window *rpcfix_window(uint64_t seq, int64_t wall_start_ns);

#endif
