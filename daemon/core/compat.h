/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where glibc and bionic differ in what a call does, not only in whether
 * it exists (doc/android-bionic.md). scripts/bionic/check.sh catches calls
 * bionic lacks; this header holds the calls whose behaviour we must pin
 * down ourselves, the same on both.
 */
#ifndef VITALS_COMPAT_H
#define VITALS_COMPAT_H

#include <errno.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Credentials of the calling thread only. glibc's setresuid, setresgid
 * and setgroups signal every thread of the process to make the same call
 * (POSIX semantics); bionic's are the bare system calls, so they change
 * the calling thread alone. Using the system calls everywhere gives one
 * behaviour: each thread that must change does it itself (privs.c). On
 * 32-bit ABIs the 32-bit-id variants are the right calls.
 */
#if defined(__NR_setresuid32)
#define COMPAT_NR_SETRESUID __NR_setresuid32
#define COMPAT_NR_SETRESGID __NR_setresgid32
#define COMPAT_NR_SETGROUPS __NR_setgroups32
#else
#define COMPAT_NR_SETRESUID __NR_setresuid
#define COMPAT_NR_SETRESGID __NR_setresgid
#define COMPAT_NR_SETGROUPS __NR_setgroups
#endif

/* Async-signal-safe: the privilege drop calls these from a handler. */
static inline int
compat_thread_setids(uid_t uid, gid_t gid, size_t ngroups, const gid_t *groups)
{
	if (syscall(COMPAT_NR_SETGROUPS, ngroups, groups) < 0 ||
	    syscall(COMPAT_NR_SETRESGID, gid, gid, gid) < 0 ||
	    syscall(COMPAT_NR_SETRESUID, uid, uid, uid) < 0)
		return -errno;
	return 0;
}

/*
 * Close every fd from lowfd up, in a child between fork and exec (async-
 * signal-safe: no allocation). close_range(2) is bionic's from API 34 and
 * glibc's from 2.34, and the kernel's from 5.9: older kernels still run
 * Android 14 on upgraded devices, so on ENOSYS the fds are closed one by
 * one up to the descriptor limit.
 */
static inline void
compat_close_from(int lowfd)
{
	struct rlimit rl;
	long fd, max = 65536;

#ifdef __NR_close_range
	if (syscall(__NR_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max)
		max = (long)rl.rlim_cur;
	for (fd = lowfd; fd < max; fd++)
		(void)close((int)fd);
}

/*
 * Give freed heap pages back to the kernel after a large answer. glibc
 * keeps them in the thread's arena until malloc_trim; bionic's allocator
 * (scudo, or jemalloc before it) releases them on mallopt(M_PURGE, 0),
 * API 28. malloc_trim is host-only: scripts/bionic/host-only.txt.
 */
static inline void
compat_heap_release(void)
{
#ifdef __BIONIC__
	(void)mallopt(M_PURGE, 0);
#else
	(void)malloc_trim(0);
#endif
}

/*
 * One malloc arena for every thread, fixed mmap and trim thresholds.
 * glibc gives each thread that
 * allocates while another holds the lock an arena of its own (the store
 * writer, each query thread, the drain's), and a freed chunk goes back to
 * its arena only: freed memory then sits in several heaps at once, each
 * with its own partly used pages malloc_trim cannot give back. Measured at
 * 2,100 tasks over 150 s: free-but-kept heap 2.4-3.8 -> 1.2 MiB, VmRSS
 * -1 to -2 MiB (bench/README.md, "Memory"). The threads allocate little
 * and rarely at once, so the one lock costs nothing measurable. bionic's
 * allocators have no such knob (scudo's are per-thread caches of bounded
 * size).
 *
 * And fixed thresholds: a block of 16 KiB or more that the heap's free
 * top cannot hold is mapped on its own (rather than grow the heap) and
 * unmapped at its free; the heap's top goes back past 256 KiB free.
 * glibc starts at 128 KiB, but the first such block freed raises both
 * (up to 32 and 64 MiB), after which a window's large buffers came from
 * the heap and stayed in it, freed, until the writer's next trim (once a
 * minute). Measured at 2,100 tasks (bench/README.md, rss9): the minute's
 * peak VmHWM -0.81 and -0.57 MiB, free-but-kept heap 1.1-1.4 -> 0.6-0.7
 * MiB, about one mmap and munmap a window at 128 KiB. At 16 KiB the
 * blocks of 16-128 KiB a window or a pass makes and frees (row arrays,
 * encode and read buffers) no longer grow the heap and leave holes in it
 * that the minute's later allocations touch: free-but-kept 0.73-0.88 ->
 * 0.39-0.42 MiB, the minute's highest VmRSS 0.95x, for ~0.8 mmap and
 * munmap pairs a second (bench/README.md, "A 16 KiB mmap threshold").
 */
static inline void
compat_heap_setup(void)
{
#if defined(M_ARENA_MAX) && !defined(__BIONIC__)
	(void)mallopt(M_ARENA_MAX, 1);
	(void)mallopt(M_MMAP_THRESHOLD, 16 * 1024);
	(void)mallopt(M_TRIM_THRESHOLD, 256 * 1024);
#endif
}

#endif
