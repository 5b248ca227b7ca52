/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU driver as the GpuMem tests play it (check_gpumem_kernel,
 * check_gpumem_daemon): AOSP-layout maps made and pinned with bpf(), the
 * tracepoint program's writes, processes with chosen pids, and a seccomp
 * filter that makes the kernel refuse map walks. Root only.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpumem_driver.h"
#include "testutil.h"
#include "vitalsd.h"

char gd_bpfdir[64]; /* private, under /sys/fs/bpf */

/* ------------------------------------------------------------ the driver */

int
gd_sys_bpf(int cmd, union bpf_attr *a)
{
	long r = syscall(__NR_bpf, cmd, a, sizeof(*a));

	return r < 0 ? -errno : (int)r;
}

int
gd_map_create(uint32_t type, uint32_t ksz, uint32_t vsz, uint32_t max,
    uint32_t flags)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ksz;
	a.value_size = vsz;
	a.max_entries = max;
	a.map_flags = flags;
	fd = gd_sys_bpf(BPF_MAP_CREATE, &a);
	ck_assert_msg(fd >= 0, "BPF_MAP_CREATE: %s", strerror(-fd));
	return fd;
}

/* AOSP's map: HASH, u64 → u64, 1024 entries. */
int
gd_aosp_map(void)
{
	return gd_map_create(BPF_MAP_TYPE_HASH, 8, 8, CAP, 0);
}

void
gd_pin(int fd, const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.bpf_fd = (uint32_t)fd;
	a.pathname = (uint64_t)(uintptr_t)path;
	ck_assert_int_eq(gd_sys_bpf(BPF_OBJ_PIN, &a), 0);
}

/* What the tracepoint program does: size 0 deletes, else insert. */
int
gd_drv(int fd, uint32_t gpu, int32_t pid, uint64_t size)
{
	uint64_t k = KEY(gpu, pid);
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&k;
	if (size == 0)
		return gd_sys_bpf(BPF_MAP_DELETE_ELEM, &a);
	a.value = (uint64_t)(uintptr_t)&size;
	a.flags = BPF_ANY;
	return gd_sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/* A map whose values carry the imported size: {u64 total, u64 imported},
 * the gpu_mem_total tracepoint's size and imported_size in order. */
int
gd_imported_map(void)
{
	return gd_map_create(BPF_MAP_TYPE_HASH, 8, 16, CAP, 0);
}

int
gd_drv_imported(int fd, uint32_t gpu, int32_t pid, uint64_t size,
    uint64_t imported)
{
	uint64_t k = KEY(gpu, pid), v[2] = { size, imported };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&k;
	if (size == 0)
		return gd_sys_bpf(BPF_MAP_DELETE_ELEM, &a);
	a.value = (uint64_t)(uintptr_t)v;
	a.flags = BPF_ANY;
	return gd_sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

int
gd_drv_key(int fd, uint64_t k, uint64_t size)
{
	return gd_drv(fd, (uint32_t)(k >> 32), (int32_t)(uint32_t)k, size);
}

void
gd_map_path(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/%s", gd_bpfdir, name);
}

/*
 * Make the kernel refuse every get-next-key and batch lookup of this
 * process (and what it execs): seccomp answers EPERM, as an LSM refusing
 * the walk would. The
 * map stays readable by lookup and writable, so only the walk fails.
 */
void
gd_refuse_walks(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_MAP_GET_NEXT_KEY, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_MAP_LOOKUP_BATCH, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		_exit(126);
}

/* ------------------------------------------------------------- processes */

int
gd_proc_lookup(void *arg, int32_t pid, uint64_t *ret_starttime, char *ret_name,
    size_t namesz)
{
	struct pid_stat st;
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || pidstat_parse(buf, (size_t)n, &st) < 0 || st.state == 'Z')
		return -ESRCH;
	*ret_starttime = st.starttime;
	snprintf(ret_name, namesz, "%s", st.comm);
	return 0;
}

uint64_t
gd_starttime_of(pid_t pid)
{
	uint64_t st = 0;
	char name[32];

	ck_assert_int_eq(gd_proc_lookup(NULL, pid, &st, name, sizeof(name)), 0);
	return st;
}

/* A child that waits to be killed; want > 0: with exactly that pid. */
pid_t
gd_child(pid_t want)
{
	pid_t pid;

	if (want > 0) {
		struct clone_args ca;

		memset(&ca, 0, sizeof(ca));
		ca.exit_signal = SIGCHLD;
		ca.set_tid = (uint64_t)(uintptr_t)&want;
		ca.set_tid_size = 1;
		pid = (pid_t)syscall(__NR_clone3, &ca, sizeof(ca));
	} else {
		pid = fork();
	}
	ck_assert_msg(pid >= 0, "fork/clone3: %s", strerror(errno));
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

void
gd_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

bool
gd_tracepoint_exists(void)
{
	struct stat sb;

	return stat("/sys/kernel/tracing/events/gpu_mem/gpu_mem_total", &sb) ==
	    0 ||
	    stat("/sys/kernel/debug/tracing/events/gpu_mem/gpu_mem_total",
		&sb) == 0;
}

void
gpumem_setup_bpffs(void)
{
	struct statfs sf;

	if (statfs("/sys/fs/bpf", &sf) < 0 ||
	    (unsigned long)sf.f_type != 0xcafe4a11UL)
		ck_assert_int_eq(mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL),
		    0);
	snprintf(gd_bpfdir, sizeof(gd_bpfdir),
	    "/sys/fs/bpf/vitals-gpumem-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(gd_bpfdir));
}

void
gpumem_teardown_bpffs(void)
{
	tu_rmtree(gd_bpfdir);
}
