/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vitalsd's own gpu_mem/gpu_mem_total program (gpumem.bpf.c) and its
 * reader (daemon/gpumem*.c) agree on these. The total map has AOSP's
 * layout exactly (GpuService's gpuMem program): a platform loader's map and
 * ours are read by the same code.
 */
#ifndef VITALS_GPUMEM_H
#define VITALS_GPUMEM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* key (gpu_id << 32) | pid, value total bytes; pid 0: the GPU's total */
#define GPUMEM_MAP_ENTRIES 1024

/* gpu_mem_stats slots: per-CPU counters, summed by the reader */
enum gpumem_stat {
	GPUMEM_STAT_EVENTS,	 /* tracepoint hits */
	GPUMEM_STAT_DELETES,	 /* size 0: the key was deleted */
	GPUMEM_STAT_INSERT_FAIL, /* update failed: map full (AOSP ignores) */
	GPUMEM_STAT__MAX
};

/*
 * The tracepoint's record as the kernel lays it out
 * (events/gpu_mem/gpu_mem_total/format): the 8-byte common header, then
 * gpu_id, pid, size.
 */
struct vitals_gpu_mem_total_args {
	__u64 common;
	__u32 gpu_id;
	__u32 pid;
	__u64 size;
};

#endif /* VITALS_GPUMEM_H */
