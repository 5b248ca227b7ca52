/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running daemon's syscall allowlist, a classic BPF seccomp filter
 * built here (no libseccomp: one table, one loop). doc/privileges.md lists
 * the syscalls with who needs them; a feature that needs another adds it to
 * the table below with its reason.
 *
 * Anything else fails with EPERM (seccomp = on): a refused call surfaces as
 * an error the daemon already handles and counts, never a silent kill in
 * the middle of a window. seccomp = log allows it and has the kernel log it
 * (to find what a new feature needs). A syscall of another ABI (x32, ia32
 * through int 0x80) kills the process: it is never the daemon's own.
 *
 * The filter, like no_new_privs, is inherited across fork and execve: a
 * child the daemon runs is held to the same list (doc/privileges.md says
 * how a spawning feature is served).
 */
#include <errno.h>
#include <sched.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/compat.h"
#include "privs/privs.h"

#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG 0x7ffc0000U
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

/* Syscalls allowed whatever their arguments. */
/* clang-format off */
#define SC(name) { #name, __NR_##name }
/* clang-format on */
static const struct {
	const char *name;
	long nr;
} allowed[] = {
	/* files: /proc and /sys reads, SQLite, the pinned-map directory */
	SC(read),
	SC(write),
	SC(readv),
	SC(writev),
	SC(pread64),
	SC(pwrite64),
	SC(openat),
	SC(close),
	SC(fstat),
	SC(newfstatat),
	SC(statx),
	SC(lseek),
	SC(getdents64),
	SC(fcntl),
	SC(fsync),
	SC(fdatasync),
	SC(ftruncate),
	SC(fallocate),
	SC(unlinkat),
	SC(renameat),
	SC(renameat2),
	SC(faccessat),
	SC(readlinkat),
	SC(fchmod),
	SC(fchown),
	SC(flock),
	SC(dup),
	SC(dup3),
	SC(statfs),
	SC(fstatfs),
	SC(getcwd),
	SC(umask),
#ifdef __NR_open
	SC(open),
	SC(stat),
	SC(lstat),
	SC(access),
	SC(unlink),
	SC(rename),
	SC(readlink),
	SC(dup2),
#endif
#ifdef __NR_faccessat2
	SC(faccessat2),
#endif
	/* memory: malloc, SQLite's page cache, thread stacks */
	SC(mmap),
	SC(munmap),
	SC(mremap),
	SC(mprotect),
	SC(madvise),
	SC(brk),
	/* threads (store writer, query thread) and their locks; clone
	 * itself is in allowed_if: threads only */
	SC(futex),
	SC(set_robust_list),
	SC(get_robust_list),
	SC(set_tid_address),
	SC(sched_yield),
	SC(exit),
	SC(exit_group),
	SC(gettid),
	SC(tgkill),
	SC(sched_getaffinity),
	SC(membarrier),
	/* reaping the privileged helper (privhelper.c) */
	SC(wait4),
	SC(waitid),
#ifdef __NR_rseq
	SC(rseq),
#endif
#ifdef __NR_futex_waitv
	SC(futex_waitv),
#endif
	/* signals: libevent's signal pipe, abort() */
	SC(rt_sigaction),
	SC(rt_sigprocmask),
	SC(rt_sigreturn),
	SC(sigaltstack),
	SC(restart_syscall),
	/* the event loop: epoll, timerfd (precise timers), eventfd, pipes */
	SC(epoll_create1),
	SC(epoll_ctl),
	SC(epoll_pwait),
	SC(timerfd_create),
	SC(timerfd_settime),
	SC(timerfd_gettime),
	SC(eventfd2),
	SC(pipe2),
	SC(ppoll),
	SC(pselect6),
#ifdef __NR_epoll_wait
	SC(epoll_wait),
	SC(poll),
	SC(select),
	SC(pipe),
#endif
#ifdef __NR_epoll_pwait2
	SC(epoll_pwait2),
#endif
	/* the control socket: accept, peer credentials, answers; syslog */
	SC(accept4),
	SC(accept),
	SC(getsockopt),
	SC(setsockopt),
	SC(getsockname),
	SC(getpeername),
	SC(recvfrom),
	SC(recvmsg),
	SC(sendto),
	SC(sendmsg),
	SC(shutdown),
	SC(connect),
	SC(socketpair),
	/* clocks, usage, identity */
	SC(clock_gettime),
	SC(clock_getres),
	SC(clock_nanosleep),
	SC(nanosleep),
	SC(gettimeofday),
	SC(getrusage),
	SC(times),
	SC(getpid),
	SC(getppid),
	SC(getuid),
	SC(geteuid),
	SC(getgid),
	SC(getegid),
	SC(getresuid),
	SC(getresgid),
	SC(getgroups),
	SC(uname),
	SC(sysinfo),
	SC(getrandom),
	SC(prlimit64),
	SC(getpriority),
	/* the kernel's time-sync status (writer.c): without CAP_SYS_TIME
	 * these can only read it */
	SC(adjtimex),
	SC(clock_adjtime),
#ifdef __NR_getrlimit
	SC(getrlimit),
#endif
	/* pinned BPF maps and the task iterator, by the fds from setup */
	SC(bpf),
	/* thread names, dumpable, no_new_privs reads */
	SC(prctl),
};
#undef SC

/* Allowed with an argument check on the low 32 bits of one argument:
 * equal to value, or (mask) with every bit of value set. */
static const struct {
	const char *name;
	long nr;
	unsigned arg;
	uint32_t value;
	bool mask;
} allowed_if[] = {
	/* threads, never processes: the daemon does not fork */
	{ "clone(CLONE_THREAD)", __NR_clone, 0, CLONE_THREAD, true },
	/* only signal 0: does a pid exist (the hidden-process count) */
	{ "kill(sig 0)", __NR_kill, 1, 0, false },
	/* only AF_UNIX: syslog reconnects to /dev/log */
	{ "socket(AF_UNIX)", __NR_socket, 0, AF_UNIX, false },
	/* only FIONREAD: libevent sizes its socket reads */
	{ "ioctl(FIONREAD)", __NR_ioctl, 1, FIONREAD, false },
	/* the last two only with an OTLP endpoint (seccomp_install's inet):
	 * each push connects anew when the collector closed the last */
	{ "socket(AF_INET)", __NR_socket, 0, AF_INET, false },
	{ "socket(AF_INET6)", __NR_socket, 0, AF_INET6, false },
};
#define NINET 2 /* the allowed_if entries only inet allows */

#define NALLOWED (sizeof(allowed) / sizeof(allowed[0]))
#define NALLOWED_IF (sizeof(allowed_if) / sizeof(allowed_if[0]))

size_t
seccomp_syscalls(const char *const **ret_names)
{
	static const char *names[NALLOWED + NALLOWED_IF];
	size_t i;

	for (i = 0; i < NALLOWED; i++)
		names[i] = allowed[i].name;
	for (i = 0; i < NALLOWED_IF; i++)
		names[NALLOWED + i] = allowed_if[i].name;
	*ret_names = names;
	return NALLOWED + NALLOWED_IF;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

int
seccomp_install(unsigned mode, bool inet, uint32_t *ret_rules)
{
#ifdef SECCOMP_ARCH
	size_t n = 0, i, cap = 10 + 2 * NALLOWED + 5 * NALLOWED_IF;
	size_t nif = inet ? NALLOWED_IF : NALLOWED_IF - NINET;
	struct sock_filter *f;
	struct sock_fprog prog;
	uint32_t deny;
	int r = 0;

	if (mode == PRIVS_SECCOMP_OFF)
		return 0;
	deny = mode == PRIVS_SECCOMP_LOG ?
	    SECCOMP_RET_LOG :
	    SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
	if ((f = calloc(cap, sizeof(*f))) == NULL)
		return -ENOMEM;
#define EMIT(...) (f[n++] = (struct sock_filter)__VA_ARGS__)
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, arch)));
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH, 1, 0));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, nr)));
#ifdef __x86_64__
	/* x32 numbers share the arch value: refuse them outright */
	EMIT(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
	for (i = 0; i < NALLOWED; i++) {
		EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		    (uint32_t)allowed[i].nr, 0, 1));
		EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	}
	for (i = 0; i < nif; i++) {
		/* nr matches: load the argument and decide; if it does not
		 * allow, load nr again and fall on, for the next entry may
		 * allow the same call with another argument (socket) */
		EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		    (uint32_t)allowed_if[i].nr, 0, 4));
		EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    ARG_LO(allowed_if[i].arg)));
		EMIT(BPF_JUMP(BPF_JMP |
			(allowed_if[i].mask ? BPF_JSET : BPF_JEQ) | BPF_K,
		    allowed_if[i].value, 0, 1));
		EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
		EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)));
	}
#ifdef __NR_clone3
	/* its flags sit behind a pointer the filter cannot read: ENOSYS
	 * makes the C library fall back to clone, which is checked */
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1));
	EMIT(BPF_STMT(BPF_RET | BPF_K,
	    SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
#endif
	EMIT(BPF_STMT(BPF_RET | BPF_K, deny));
#undef EMIT
	prog.len = (unsigned short)n;
	prog.filter = f;
	/* TSYNC: the writer and query threads are running already. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		r = errno ? -errno : -EBUSY;
	free(f);
	if (r == 0 && ret_rules)
		*ret_rules = (uint32_t)(NALLOWED + nif);
	return r;
#else
	(void)inet;
	(void)ret_rules;
	return mode == PRIVS_SECCOMP_OFF ? 0 : -EOPNOTSUPP;
#endif
}
