/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall names and numbers (core/sysnames.c): on x86_64 every entry
 * against this system's uapi header (a name the header lacks must not
 * resolve); aarch64 against the generic table's numbers for the calls the
 * tracer follows by default; names back from numbers; and the native
 * numbers live: syscall(nr("getpid")) is getpid().
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "core/sysnames.h"

struct expect {
	const char *name;
	int nr; /* -1: not on this ABI */
};

#if defined(__x86_64__)
#include <asm/unistd_64.h>
#define E(n)                 \
	{                    \
#n, __NR_##n \
	}
#define NO(n)          \
	{              \
#n, -1 \
	}
static const struct expect x86[] = {
#ifdef __NR_read
	E(read),
#else
	NO(read),
#endif
#ifdef __NR_write
	E(write),
#else
	NO(write),
#endif
#ifdef __NR_open
	E(open),
#else
	NO(open),
#endif
#ifdef __NR_close
	E(close),
#else
	NO(close),
#endif
#ifdef __NR_stat
	E(stat),
#else
	NO(stat),
#endif
#ifdef __NR_fstat
	E(fstat),
#else
	NO(fstat),
#endif
#ifdef __NR_lstat
	E(lstat),
#else
	NO(lstat),
#endif
#ifdef __NR_newfstatat
	E(newfstatat),
#else
	NO(newfstatat),
#endif
#ifdef __NR_poll
	E(poll),
#else
	NO(poll),
#endif
#ifdef __NR_ppoll
	E(ppoll),
#else
	NO(ppoll),
#endif
#ifdef __NR_select
	E(select),
#else
	NO(select),
#endif
#ifdef __NR_pselect6
	E(pselect6),
#else
	NO(pselect6),
#endif
#ifdef __NR_lseek
	E(lseek),
#else
	NO(lseek),
#endif
#ifdef __NR_mmap
	E(mmap),
#else
	NO(mmap),
#endif
#ifdef __NR_mprotect
	E(mprotect),
#else
	NO(mprotect),
#endif
#ifdef __NR_munmap
	E(munmap),
#else
	NO(munmap),
#endif
#ifdef __NR_brk
	E(brk),
#else
	NO(brk),
#endif
#ifdef __NR_mremap
	E(mremap),
#else
	NO(mremap),
#endif
#ifdef __NR_msync
	E(msync),
#else
	NO(msync),
#endif
#ifdef __NR_madvise
	E(madvise),
#else
	NO(madvise),
#endif
#ifdef __NR_ioctl
	E(ioctl),
#else
	NO(ioctl),
#endif
#ifdef __NR_pread64
	E(pread64),
#else
	NO(pread64),
#endif
#ifdef __NR_pwrite64
	E(pwrite64),
#else
	NO(pwrite64),
#endif
#ifdef __NR_readv
	E(readv),
#else
	NO(readv),
#endif
#ifdef __NR_writev
	E(writev),
#else
	NO(writev),
#endif
#ifdef __NR_preadv
	E(preadv),
#else
	NO(preadv),
#endif
#ifdef __NR_pwritev
	E(pwritev),
#else
	NO(pwritev),
#endif
#ifdef __NR_preadv2
	E(preadv2),
#else
	NO(preadv2),
#endif
#ifdef __NR_pwritev2
	E(pwritev2),
#else
	NO(pwritev2),
#endif
#ifdef __NR_sendfile
	E(sendfile),
#else
	NO(sendfile),
#endif
#ifdef __NR_splice
	E(splice),
#else
	NO(splice),
#endif
#ifdef __NR_access
	E(access),
#else
	NO(access),
#endif
#ifdef __NR_faccessat
	E(faccessat),
#else
	NO(faccessat),
#endif
#ifdef __NR_pipe
	E(pipe),
#else
	NO(pipe),
#endif
#ifdef __NR_pipe2
	E(pipe2),
#else
	NO(pipe2),
#endif
#ifdef __NR_dup
	E(dup),
#else
	NO(dup),
#endif
#ifdef __NR_dup3
	E(dup3),
#else
	NO(dup3),
#endif
#ifdef __NR_fcntl
	E(fcntl),
#else
	NO(fcntl),
#endif
#ifdef __NR_flock
	E(flock),
#else
	NO(flock),
#endif
#ifdef __NR_fsync
	E(fsync),
#else
	NO(fsync),
#endif
#ifdef __NR_fdatasync
	E(fdatasync),
#else
	NO(fdatasync),
#endif
#ifdef __NR_sync
	E(sync),
#else
	NO(sync),
#endif
#ifdef __NR_syncfs
	E(syncfs),
#else
	NO(syncfs),
#endif
#ifdef __NR_sync_file_range
	E(sync_file_range),
#else
	NO(sync_file_range),
#endif
#ifdef __NR_fallocate
	E(fallocate),
#else
	NO(fallocate),
#endif
#ifdef __NR_truncate
	E(truncate),
#else
	NO(truncate),
#endif
#ifdef __NR_ftruncate
	E(ftruncate),
#else
	NO(ftruncate),
#endif
#ifdef __NR_getdents64
	E(getdents64),
#else
	NO(getdents64),
#endif
#ifdef __NR_rename
	E(rename),
#else
	NO(rename),
#endif
#ifdef __NR_renameat
	E(renameat),
#else
	NO(renameat),
#endif
#ifdef __NR_renameat2
	E(renameat2),
#else
	NO(renameat2),
#endif
#ifdef __NR_mkdir
	E(mkdir),
#else
	NO(mkdir),
#endif
#ifdef __NR_mkdirat
	E(mkdirat),
#else
	NO(mkdirat),
#endif
#ifdef __NR_rmdir
	E(rmdir),
#else
	NO(rmdir),
#endif
#ifdef __NR_unlink
	E(unlink),
#else
	NO(unlink),
#endif
#ifdef __NR_unlinkat
	E(unlinkat),
#else
	NO(unlinkat),
#endif
#ifdef __NR_readlink
	E(readlink),
#else
	NO(readlink),
#endif
#ifdef __NR_readlinkat
	E(readlinkat),
#else
	NO(readlinkat),
#endif
#ifdef __NR_statx
	E(statx),
#else
	NO(statx),
#endif
#ifdef __NR_openat
	E(openat),
#else
	NO(openat),
#endif
#ifdef __NR_openat2
	E(openat2),
#else
	NO(openat2),
#endif
#ifdef __NR_close_range
	E(close_range),
#else
	NO(close_range),
#endif
#ifdef __NR_socket
	E(socket),
#else
	NO(socket),
#endif
#ifdef __NR_connect
	E(connect),
#else
	NO(connect),
#endif
#ifdef __NR_accept
	E(accept),
#else
	NO(accept),
#endif
#ifdef __NR_accept4
	E(accept4),
#else
	NO(accept4),
#endif
#ifdef __NR_sendto
	E(sendto),
#else
	NO(sendto),
#endif
#ifdef __NR_recvfrom
	E(recvfrom),
#else
	NO(recvfrom),
#endif
#ifdef __NR_sendmsg
	E(sendmsg),
#else
	NO(sendmsg),
#endif
#ifdef __NR_recvmsg
	E(recvmsg),
#else
	NO(recvmsg),
#endif
#ifdef __NR_sendmmsg
	E(sendmmsg),
#else
	NO(sendmmsg),
#endif
#ifdef __NR_recvmmsg
	E(recvmmsg),
#else
	NO(recvmmsg),
#endif
#ifdef __NR_shutdown
	E(shutdown),
#else
	NO(shutdown),
#endif
#ifdef __NR_bind
	E(bind),
#else
	NO(bind),
#endif
#ifdef __NR_listen
	E(listen),
#else
	NO(listen),
#endif
#ifdef __NR_getsockopt
	E(getsockopt),
#else
	NO(getsockopt),
#endif
#ifdef __NR_setsockopt
	E(setsockopt),
#else
	NO(setsockopt),
#endif
#ifdef __NR_clone
	E(clone),
#else
	NO(clone),
#endif
#ifdef __NR_clone3
	E(clone3),
#else
	NO(clone3),
#endif
#ifdef __NR_fork
	E(fork),
#else
	NO(fork),
#endif
#ifdef __NR_vfork
	E(vfork),
#else
	NO(vfork),
#endif
#ifdef __NR_execve
	E(execve),
#else
	NO(execve),
#endif
#ifdef __NR_execveat
	E(execveat),
#else
	NO(execveat),
#endif
#ifdef __NR_exit
	E(exit),
#else
	NO(exit),
#endif
#ifdef __NR_exit_group
	E(exit_group),
#else
	NO(exit_group),
#endif
#ifdef __NR_wait4
	E(wait4),
#else
	NO(wait4),
#endif
#ifdef __NR_waitid
	E(waitid),
#else
	NO(waitid),
#endif
#ifdef __NR_kill
	E(kill),
#else
	NO(kill),
#endif
#ifdef __NR_tgkill
	E(tgkill),
#else
	NO(tgkill),
#endif
#ifdef __NR_nanosleep
	E(nanosleep),
#else
	NO(nanosleep),
#endif
#ifdef __NR_clock_nanosleep
	E(clock_nanosleep),
#else
	NO(clock_nanosleep),
#endif
#ifdef __NR_clock_gettime
	E(clock_gettime),
#else
	NO(clock_gettime),
#endif
#ifdef __NR_sched_yield
	E(sched_yield),
#else
	NO(sched_yield),
#endif
#ifdef __NR_futex
	E(futex),
#else
	NO(futex),
#endif
#ifdef __NR_futex_waitv
	E(futex_waitv),
#else
	NO(futex_waitv),
#endif
#ifdef __NR_epoll_create1
	E(epoll_create1),
#else
	NO(epoll_create1),
#endif
#ifdef __NR_epoll_ctl
	E(epoll_ctl),
#else
	NO(epoll_ctl),
#endif
#ifdef __NR_epoll_wait
	E(epoll_wait),
#else
	NO(epoll_wait),
#endif
#ifdef __NR_epoll_pwait
	E(epoll_pwait),
#else
	NO(epoll_pwait),
#endif
#ifdef __NR_epoll_pwait2
	E(epoll_pwait2),
#else
	NO(epoll_pwait2),
#endif
#ifdef __NR_eventfd2
	E(eventfd2),
#else
	NO(eventfd2),
#endif
#ifdef __NR_timerfd_settime
	E(timerfd_settime),
#else
	NO(timerfd_settime),
#endif
#ifdef __NR_signalfd4
	E(signalfd4),
#else
	NO(signalfd4),
#endif
#ifdef __NR_rt_sigtimedwait
	E(rt_sigtimedwait),
#else
	NO(rt_sigtimedwait),
#endif
#ifdef __NR_io_setup
	E(io_setup),
#else
	NO(io_setup),
#endif
#ifdef __NR_io_submit
	E(io_submit),
#else
	NO(io_submit),
#endif
#ifdef __NR_io_getevents
	E(io_getevents),
#else
	NO(io_getevents),
#endif
#ifdef __NR_io_uring_enter
	E(io_uring_enter),
#else
	NO(io_uring_enter),
#endif
#ifdef __NR_io_uring_setup
	E(io_uring_setup),
#else
	NO(io_uring_setup),
#endif
#ifdef __NR_getrandom
	E(getrandom),
#else
	NO(getrandom),
#endif
#ifdef __NR_membarrier
	E(membarrier),
#else
	NO(membarrier),
#endif
#ifdef __NR_process_vm_readv
	E(process_vm_readv),
#else
	NO(process_vm_readv),
#endif
#ifdef __NR_process_vm_writev
	E(process_vm_writev),
#else
	NO(process_vm_writev),
#endif
#ifdef __NR_memfd_create
	E(memfd_create),
#else
	NO(memfd_create),
#endif
#ifdef __NR_mlock
	E(mlock),
#else
	NO(mlock),
#endif
#ifdef __NR_munlock
	E(munlock),
#else
	NO(munlock),
#endif
#ifdef __NR_inotify_add_watch
	E(inotify_add_watch),
#else
	NO(inotify_add_watch),
#endif
#ifdef __NR_fanotify_mark
	E(fanotify_mark),
#else
	NO(fanotify_mark),
#endif
#ifdef __NR_mount
	E(mount),
#else
	NO(mount),
#endif
#ifdef __NR_umount2
	E(umount2),
#else
	NO(umount2),
#endif
#ifdef __NR_setns
	E(setns),
#else
	NO(setns),
#endif
#ifdef __NR_unshare
	E(unshare),
#else
	NO(unshare),
#endif
#ifdef __NR_prctl
	E(prctl),
#else
	NO(prctl),
#endif
#ifdef __NR_getpid
	E(getpid),
#else
	NO(getpid),
#endif
#ifdef __NR_gettid
	E(gettid),
#else
	NO(gettid),
#endif
};
#endif

/* The generic table (asm-generic/unistd.h, 64-bit) for the default set
 * and its neighbours; aarch64 has no open, access, epoll_wait or fork. */
static const struct expect arm64[] = {
	{ "read", 63 },
	{ "write", 64 },
	{ "pread64", 67 },
	{ "pwrite64", 68 },
	{ "fsync", 82 },
	{ "fdatasync", 83 },
	{ "openat", 56 },
	{ "futex", 98 },
	{ "epoll_pwait", 22 },
	{ "ioctl", 29 },
	{ "nanosleep", 101 },
	{ "clock_nanosleep", 115 },
	{ "close", 57 },
	{ "fstat", 80 },
	{ "newfstatat", 79 },
	{ "mmap", 222 },
	{ "fcntl", 25 },
	{ "clone3", 435 },
	{ "io_uring_enter", 426 },
	{ "exit_group", 94 },
	{ "open", -1 },
	{ "access", -1 },
	{ "epoll_wait", -1 },
	{ "fork", -1 },
};

static void
check_table(enum sysnames_arch arch, const struct expect *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = sysnames_nr(arch, e[i].name);

		if (e[i].nr < 0) {
			ck_assert_msg(nr == -ENOENT, "%s %s: %d, want none",
			    sysnames_arch_name(arch), e[i].name, nr);
			continue;
		}
		ck_assert_msg(nr == e[i].nr, "%s %s: %d, want %d",
		    sysnames_arch_name(arch), e[i].name, nr, e[i].nr);
		ck_assert_str_eq(sysnames_name(arch, (uint32_t)nr), e[i].name);
	}
}

START_TEST(test_x86_64_header)
{
#if defined(__x86_64__)
	check_table(SYSNAMES_X86_64, x86, sizeof(x86) / sizeof(x86[0]));
#endif
}
END_TEST

START_TEST(test_arm64)
{
	check_table(SYSNAMES_ARM64, arm64, sizeof(arm64) / sizeof(arm64[0]));
}
END_TEST

START_TEST(test_unknown)
{
	ck_assert_int_eq(sysnames_nr(SYSNAMES_X86_64, "no_such_call"), -ENOENT);
	ck_assert_int_eq(sysnames_nr(SYSNAMES_X86_64, ""), -ENOENT);
	ck_assert_int_eq(sysnames_nr(SYSNAMES_X86_64, NULL), -ENOENT);
	ck_assert_int_eq(sysnames_nr(SYSNAMES__MAX, "read"), -ENOENT);
	ck_assert_ptr_null(sysnames_name(SYSNAMES_X86_64, 100000));
	ck_assert_ptr_null(sysnames_name(SYSNAMES__MAX, 0));
	ck_assert_str_eq(sysnames_arch_name(SYSNAMES__MAX), "unknown");
}
END_TEST

/* The native numbers are the ones the kernel runs. */
START_TEST(test_native_live)
{
	enum sysnames_arch arch = sysnames_native();
	int nr;

#if defined(__x86_64__) || defined(__aarch64__)
	ck_assert_int_ne(arch, SYSNAMES__MAX);
#endif
	if (arch == SYSNAMES__MAX)
		return;
	nr = sysnames_nr(arch, "getpid");
	ck_assert_int_eq(nr, SYS_getpid);
	ck_assert_int_eq(syscall(nr), getpid());
	ck_assert_int_eq(sysnames_nr(arch, "fsync"), SYS_fsync);
	ck_assert_int_eq(sysnames_nr(arch, "clock_nanosleep"),
	    SYS_clock_nanosleep);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sysnames");
	TCase *tc = tcase_create("all");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_x86_64_header);
	tcase_add_test(tc, test_arm64);
	tcase_add_test(tc, test_unknown);
	tcase_add_test(tc, test_native_live);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
