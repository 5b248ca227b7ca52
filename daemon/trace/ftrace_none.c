/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ftrace built out: what ftrace.c and ftrace_events.c export, for a build
 * without libtracefs and libtraceevent (Android.bp by default: AOSP's
 * external/libtracefs restricts its visibility, doc/android-bionic.md).
 * ftrace_open always fails with FTRACE_OFF_NO_TRACEFS, so every window
 * says ftrace is off and why; nothing else changes. The names must match
 * ftrace.c's and ftrace_events.c's: they are protocol strings.
 */
#include <errno.h>
#include <stdio.h>

#include "trace/trace.h"

bool
ftrace_built(void)
{
	return false;
}

uint64_t
ftrace_bytes(const struct ftrace *ft)
{
	(void)ft;
	return 0;
}

uint64_t
ftrace_buffer_bytes(const struct ftrace *ft)
{
	(void)ft;
	return 0;
}

const char *
ftrace_state_name(unsigned st)
{
	static const char *const names[FTRACE__MAX] = {
		[FTRACE_UNKNOWN] = "unknown",
		[FTRACE_ON] = "on",
		[FTRACE_OFF_CONFIG] = "off_config",
		[FTRACE_OFF_NO_TRACEFS] = "off_no_tracefs",
		[FTRACE_OFF_NO_PRIV] = "off_no_priv",
		[FTRACE_OFF_ERROR] = "off_error",
	};

	return st < FTRACE__MAX && names[st] ? names[st] : "?";
}

const char *
ftrace_ev_name(unsigned ev)
{
	static const char *const names[FEV__MAX] = {
		[FEV_PRINT] = "ftrace/print",
		[FEV_SCHED_SWITCH] = "sched/sched_switch",
		[FEV_SCHED_WAKING] = "sched/sched_waking",
		[FEV_PROCESS_EXIT] = "sched/sched_process_exit",
		[FEV_BINDER_TXN] = "binder/binder_transaction",
		[FEV_BINDER_RECV] = "binder/binder_transaction_received",
		[FEV_GPU_MEM] = "gpu_mem/gpu_mem_total",
		[FEV_SCHED_WAKEUP] = "sched/sched_wakeup",
		[FEV_SCHED_WAKEUP_NEW] = "sched/sched_wakeup_new",
		[FEV_PAGE_FAULT] = "exceptions/page_fault_user",
		[FEV_FILEMAP_FAULT] = "filemap/mm_filemap_fault",
		[FEV_FILEMAP_ADD] = "filemap/mm_filemap_add_to_page_cache",
		[FEV_RECLAIM_BEGIN] = "vmscan/mm_vmscan_direct_reclaim_begin",
		[FEV_RECLAIM_END] = "vmscan/mm_vmscan_direct_reclaim_end",
		[FEV_BLOCK_ISSUE] = "block/block_rq_issue",
	};

	return ev < FEV__MAX && names[ev] ? names[ev] : "?";
}

int
ftrace_open(struct event_base *base, const struct ftrace_opts *o,
    struct ftrace **ret, unsigned *ret_state, char *why, size_t whysz)
{
	(void)base;
	(void)o;
	*ret = NULL;
	*ret_state = FTRACE_OFF_NO_TRACEFS;
	snprintf(why, whysz, "built without libtracefs");
	return -EOPNOTSUPP;
}

/* The privileged helper names instances under this directory. */
int
ftrace_tracing_dir(const char *tracefs, const char *sys_root, char *buf,
    size_t sz)
{
	int n;

	if (tracefs)
		n = snprintf(buf, sz, "%s", tracefs);
	else
		n = snprintf(buf, sz, "%s/kernel/tracing", sys_root);
	return n < 0 || (size_t)n >= sz ? -ENAMETOOLONG : 0;
}

/* No reader is ever opened: these see only NULL. */
struct ftrace *
ftrace_free(struct ftrace *ft)
{
	(void)ft;
	return NULL;
}

void
ftrace_after_sample(struct ftrace *ft)
{
	(void)ft;
}

void
ftrace_finish(struct ftrace *ft)
{
	(void)ft;
}

int
ftrace_drain(struct ftrace *ft)
{
	(void)ft;
	return 0;
}

int
ftrace_window(struct ftrace *ft, struct window_trace *wt)
{
	(void)ft;
	wt->state = FTRACE_OFF_NO_TRACEFS;
	return 0;
}

void
ftrace_set_gpu_mem_cb(struct ftrace *ft, ftrace_gpu_mem_fn fn, void *arg)
{
	(void)ft;
	(void)fn;
	(void)arg;
}

int
ftrace_instance_remove(const char *tracefs, const char *name)
{
	(void)tracefs;
	(void)name;
	return -EOPNOTSUPP;
}

/* No instance: no ATrace markers reach one. */
bool
ftrace_captures_atrace(const struct ftrace *ft)
{
	(void)ft;
	return false;
}
