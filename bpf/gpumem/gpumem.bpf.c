// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gpu_mem/gpu_mem_total: the driver reports a (gpu, pid) pair's new total
 * (pid 0: the whole GPU). The map keeps the last total per pair, as
 * Android's GpuService program does: size 0 deletes the pair, any other
 * size replaces it. Unlike that program a failed insert (map full: a new
 * pair with every slot taken) is counted, so a saturated map is visible.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "gpumem.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GPUMEM_MAP_ENTRIES);
	__type(key, __u64);
	__type(value, __u64);
} gpu_mem_total_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPUMEM_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} gpu_mem_stats SEC(".maps");

static __always_inline void
count(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&gpu_mem_stats, &slot);

	if (v)
		*v += 1;
}

SEC("tracepoint/gpu_mem/gpu_mem_total")
int
vitals_gpu_mem_total(struct vitals_gpu_mem_total_args *args)
{
	__u64 key = ((__u64)args->gpu_id << 32) | args->pid;
	__u64 size = args->size;

	count(GPUMEM_STAT_EVENTS);
	if (size == 0) {
		bpf_map_delete_elem(&gpu_mem_total_map, &key);
		count(GPUMEM_STAT_DELETES);
		return 0;
	}
	if (bpf_map_update_elem(&gpu_mem_total_map, &key, &size, BPF_ANY))
		count(GPUMEM_STAT_INSERT_FAIL);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
