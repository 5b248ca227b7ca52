/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parts a window can have, one line each: what window.c (free, copy),
 * rollup.c (merge) and dump.c iterate. A part's type and operations live in
 * its signal's folder; its id in enum window_part_id (window.h).
 */
#include "cgroup/cgroup.h"
#include "dmabuf/dmabuf.h"
#include "fgbg/fgbg.h"
#include "gpumem/gpumem.h"
#include "sched/sched.h"
#include "syscalls/sc_collect.h"
#include "trace/trace.h"
#include "wcpu/wcpu.h"
#include "window/window.h"
#include "wss/wss.h"

const struct window_part_ops *const window_parts[WPART__MAX] = {
	[WPART_SCHED] = &sched_window_part,
	[WPART_GPUMEM] = &gpumem_window_part,
	[WPART_WSS] = &wss_window_part,
	[WPART_TRACE] = &trace_window_part,
	[WPART_CGROUP] = &cgroup_window_part,
	[WPART_FGBG] = &fgbg_window_part,
	[WPART_WCPU] = &wcpu_window_part,
	[WPART_DMABUF] = &dmabuf_window_part,
	[WPART_SYSCALLS] = &sc_window_part,
};
