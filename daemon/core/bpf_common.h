/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every BPF feature shares (bpf_common.c): pin names, the bpffs
 * check, libbpf's log, the run-time statistics switch, whether the kernel
 * keeps sched_info.
 */
#ifndef VITALSD_CORE_BPF_COMMON_H
#define VITALSD_CORE_BPF_COMMON_H

#include <stdbool.h>
#include <stddef.h>

/* ----------------------------------------------------------- bpf_common.c */

int bpf_pin_path(const char *bpffs, const char *kind, const char *name,
    char *ret, size_t retsz);
int bpf_check_bpffs(const char *dir);
void bpf_common_init(void);
int bpf_stats_enable(void);
bool bpf_sched_info_kept(void);

#endif /* VITALSD_CORE_BPF_COMMON_H */
