/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall numbers of the families the tracer may follow, per ABI. The
 * figures are the kernel's uapi numbering (x86_64: asm/unistd_64.h;
 * aarch64: the generic table, asm-generic/unistd.h with 64-bit longs);
 * -1 where the ABI has no such call. Sorted by name.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "core/sysnames.h"

struct sysname {
	const char *name;
	int nr[SYSNAMES__MAX];
};

static const struct sysname sysnames[] = {
	{ "accept", { 43, 202 } },
	{ "accept4", { 288, 242 } },
	{ "access", { 21, -1 } },
	{ "bind", { 49, 200 } },
	{ "brk", { 12, 214 } },
	{ "clock_gettime", { 228, 113 } },
	{ "clock_nanosleep", { 230, 115 } },
	{ "clone", { 56, 220 } },
	{ "clone3", { 435, 435 } },
	{ "close", { 3, 57 } },
	{ "close_range", { 436, 436 } },
	{ "connect", { 42, 203 } },
	{ "dup", { 32, 23 } },
	{ "dup3", { 292, 24 } },
	{ "epoll_create1", { 291, 20 } },
	{ "epoll_ctl", { 233, 21 } },
	{ "epoll_pwait", { 281, 22 } },
	{ "epoll_pwait2", { 441, 441 } },
	{ "epoll_wait", { 232, -1 } },
	{ "eventfd2", { 290, 19 } },
	{ "execve", { 59, 221 } },
	{ "execveat", { 322, 281 } },
	{ "exit", { 60, 93 } },
	{ "exit_group", { 231, 94 } },
	{ "faccessat", { 269, 48 } },
	{ "fallocate", { 285, 47 } },
	{ "fanotify_mark", { 301, 263 } },
	{ "fcntl", { 72, 25 } },
	{ "fdatasync", { 75, 83 } },
	{ "flock", { 73, 32 } },
	{ "fork", { 57, -1 } },
	{ "fstat", { 5, 80 } },
	{ "fsync", { 74, 82 } },
	{ "ftruncate", { 77, 46 } },
	{ "futex", { 202, 98 } },
	{ "futex_waitv", { 449, 449 } },
	{ "getdents64", { 217, 61 } },
	{ "getpid", { 39, 172 } },
	{ "getrandom", { 318, 278 } },
	{ "getsockopt", { 55, 209 } },
	{ "gettid", { 186, 178 } },
	{ "inotify_add_watch", { 254, 27 } },
	{ "io_getevents", { 208, 4 } },
	{ "io_setup", { 206, 0 } },
	{ "io_submit", { 209, 2 } },
	{ "io_uring_enter", { 426, 426 } },
	{ "io_uring_setup", { 425, 425 } },
	{ "ioctl", { 16, 29 } },
	{ "kill", { 62, 129 } },
	{ "listen", { 50, 201 } },
	{ "lseek", { 8, 62 } },
	{ "lstat", { 6, -1 } },
	{ "madvise", { 28, 233 } },
	{ "membarrier", { 324, 283 } },
	{ "memfd_create", { 319, 279 } },
	{ "mkdir", { 83, -1 } },
	{ "mkdirat", { 258, 34 } },
	{ "mlock", { 149, 228 } },
	{ "mmap", { 9, 222 } },
	{ "mount", { 165, 40 } },
	{ "mprotect", { 10, 226 } },
	{ "mremap", { 25, 216 } },
	{ "msync", { 26, 227 } },
	{ "munlock", { 150, 229 } },
	{ "munmap", { 11, 215 } },
	{ "nanosleep", { 35, 101 } },
	{ "newfstatat", { 262, 79 } },
	{ "open", { 2, -1 } },
	{ "openat", { 257, 56 } },
	{ "openat2", { 437, 437 } },
	{ "pipe", { 22, -1 } },
	{ "pipe2", { 293, 59 } },
	{ "poll", { 7, -1 } },
	{ "ppoll", { 271, 73 } },
	{ "prctl", { 157, 167 } },
	{ "pread64", { 17, 67 } },
	{ "preadv", { 295, 69 } },
	{ "preadv2", { 327, 286 } },
	{ "process_vm_readv", { 310, 270 } },
	{ "process_vm_writev", { 311, 271 } },
	{ "pselect6", { 270, 72 } },
	{ "pwrite64", { 18, 68 } },
	{ "pwritev", { 296, 70 } },
	{ "pwritev2", { 328, 287 } },
	{ "read", { 0, 63 } },
	{ "readlink", { 89, -1 } },
	{ "readlinkat", { 267, 78 } },
	{ "readv", { 19, 65 } },
	{ "recvfrom", { 45, 207 } },
	{ "recvmmsg", { 299, 243 } },
	{ "recvmsg", { 47, 212 } },
	{ "rename", { 82, -1 } },
	{ "renameat", { 264, 38 } },
	{ "renameat2", { 316, 276 } },
	{ "rmdir", { 84, -1 } },
	{ "rt_sigtimedwait", { 128, 137 } },
	{ "sched_yield", { 24, 124 } },
	{ "select", { 23, -1 } },
	{ "sendfile", { 40, 71 } },
	{ "sendmmsg", { 307, 269 } },
	{ "sendmsg", { 46, 211 } },
	{ "sendto", { 44, 206 } },
	{ "setns", { 308, 268 } },
	{ "setsockopt", { 54, 208 } },
	{ "shutdown", { 48, 210 } },
	{ "signalfd4", { 289, 74 } },
	{ "socket", { 41, 198 } },
	{ "splice", { 275, 76 } },
	{ "stat", { 4, -1 } },
	{ "statx", { 332, 291 } },
	{ "sync", { 162, 81 } },
	{ "sync_file_range", { 277, 84 } },
	{ "syncfs", { 306, 267 } },
	{ "tgkill", { 234, 131 } },
	{ "timerfd_settime", { 286, 86 } },
	{ "truncate", { 76, 45 } },
	{ "umount2", { 166, 39 } },
	{ "unlink", { 87, -1 } },
	{ "unlinkat", { 263, 35 } },
	{ "unshare", { 272, 97 } },
	{ "vfork", { 58, -1 } },
	{ "wait4", { 61, 260 } },
	{ "waitid", { 247, 95 } },
	{ "write", { 1, 64 } },
	{ "writev", { 20, 66 } },
};

#define NSYSNAMES (sizeof(sysnames) / sizeof(sysnames[0]))

enum sysnames_arch
sysnames_native(void)
{
#if defined(__x86_64__)
	return SYSNAMES_X86_64;
#elif defined(__aarch64__)
	return SYSNAMES_ARM64;
#else
	return SYSNAMES__MAX;
#endif
}

const char *
sysnames_arch_name(enum sysnames_arch arch)
{
	switch (arch) {
	case SYSNAMES_X86_64:
		return "x86_64";
	case SYSNAMES_ARM64:
		return "aarch64";
	default:
		return "unknown";
	}
}

int
sysnames_nr(enum sysnames_arch arch, const char *name)
{
	size_t lo = 0, hi = NSYSNAMES;

	if (arch >= SYSNAMES__MAX || name == NULL)
		return -ENOENT;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, sysnames[mid].name);

		if (c == 0)
			return sysnames[mid].nr[arch] < 0 ?
			    -ENOENT :
			    sysnames[mid].nr[arch];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -ENOENT;
}

const char *
sysnames_name(enum sysnames_arch arch, uint32_t nr)
{
	if (arch >= SYSNAMES__MAX)
		return NULL;
	for (size_t i = 0; i < NSYSNAMES; i++)
		if (sysnames[i].nr[arch] >= 0 &&
		    (uint32_t)sysnames[i].nr[arch] == nr)
			return sysnames[i].name;
	return NULL;
}
