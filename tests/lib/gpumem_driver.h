/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU driver as the GpuMem tests play it (gpumem_driver.c): AOSP-layout
 * maps made and pinned with bpf(), the tracepoint program's writes,
 * processes with chosen pids, a seccomp filter that makes the kernel refuse
 * map walks. Root only.
 */
#ifndef VITALS_GPUMEM_DRIVER_H
#define VITALS_GPUMEM_DRIVER_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SEC NSEC_PER_SEC
#define KEY(gpu, pid) (((uint64_t)(gpu) << 32) | (uint32_t)(pid))
#define CAP 1024

/* The private directory under /sys/fs/bpf the maps are pinned in. */
extern char gd_bpfdir[64];

int gd_sys_bpf(int cmd, union bpf_attr *a);
/* A map, or the test fails. */
int gd_map_create(uint32_t type, uint32_t ksz, uint32_t vsz, uint32_t max,
    uint32_t flags);
/* AOSP's map: HASH, u64 → u64, 1024 entries. */
int gd_aosp_map(void);
void gd_pin(int fd, const char *path);
/* What the tracepoint program does: size 0 deletes, else insert. */
int gd_drv(int fd, uint32_t gpu, int32_t pid, uint64_t size);
/* A map whose values carry the imported size: {u64 total, u64 imported}. */
int gd_imported_map(void);
int gd_drv_imported(int fd, uint32_t gpu, int32_t pid, uint64_t size,
    uint64_t imported);
int gd_drv_key(int fd, uint64_t k, uint64_t size);
/* gd_bpfdir/name */
void gd_map_path(char *buf, size_t sz, const char *name);
/* The kernel refuses every get-next-key of this process (a child's). */
void gd_refuse_walks(void);

/* /proc/pid/stat's start time and comm, as the daemon's lookup returns. */
int gd_proc_lookup(void *arg, int32_t pid, uint64_t *ret_starttime,
    char *ret_name, size_t namesz);
uint64_t gd_starttime_of(pid_t pid);
/* A child that waits to be killed; want > 0: with exactly that pid. */
pid_t gd_child(pid_t want);
void gd_reap(pid_t pid);
bool gd_tracepoint_exists(void);

/* bpffs mounted, gd_bpfdir made; and removed. */
void gpumem_setup_bpffs(void);
void gpumem_teardown_bpffs(void);

#endif
