/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What each window part adds to the messages, one line each: rpc_window.c
 * (a Window) and rpc.c (Health from the last closed window) iterate it.
 * A part's converters live in its rpc_<signal>.c.
 */
#include "window/window.h"
#include "rpc_int.h"

/* A part that adds nothing to a Window or to Health. */
const struct rpc_part rpc_part_none = { 0 };

const struct rpc_part *const rpc_parts[WPART__MAX] = {
	[WPART_SCHED] = &rpc_sched_part,
	/* on the wire from the live reader (Health.gpu_mem, op GpuMem) */
	[WPART_GPUMEM] = &rpc_part_none,
	/* on the wire from the live monitor (Health.wss, wss_get) */
	[WPART_WSS] = &rpc_part_none,
	[WPART_TRACE] = &rpc_trace_part,
	[WPART_CGROUP] = &rpc_cgroup_part,
	[WPART_FGBG] = &rpc_fgbg_part,
	[WPART_WCPU] = &rpc_wcpu_part,
	[WPART_DMABUF] = &rpc_part_none,
	[WPART_SYSCALLS] = &rpc_part_none,
};
