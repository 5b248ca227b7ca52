/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU memory against real kernel maps (root). This kernel has no
 * gpu_mem/gpu_mem_total tracepoint, so the test is the driver: it creates
 * a HASH map with AOSP's exact layout (u64 key, u64 value, 1024 entries),
 * pins it in a private bpffs directory and writes and deletes entries with
 * bpf() as GpuService's program would. Then the reader, a walk under a
 * concurrent writer, vitalsd's own program, and the daemon end to end
 * through `vitals gpumem`.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
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

#include <sqlite3.h>

#include "client_run.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define KEY(gpu, pid) (((uint64_t)(gpu) << 32) | (uint32_t)(pid))
#define CAP 1024

static char daemon_path[PATH_MAX];
static char bpfdir[64]; /* private, under /sys/fs/bpf */

/* ------------------------------------------------------------ the driver */

static int
sys_bpf(int cmd, union bpf_attr *a)
{
	long r = syscall(__NR_bpf, cmd, a, sizeof(*a));

	return r < 0 ? -errno : (int)r;
}

static int
map_create(uint32_t type, uint32_t ksz, uint32_t vsz, uint32_t max,
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
	fd = sys_bpf(BPF_MAP_CREATE, &a);
	ck_assert_msg(fd >= 0, "BPF_MAP_CREATE: %s", strerror(-fd));
	return fd;
}

/* AOSP's map: HASH, u64 → u64, 1024 entries. */
static int
aosp_map(void)
{
	return map_create(BPF_MAP_TYPE_HASH, 8, 8, CAP, 0);
}

static void
pin(int fd, const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.bpf_fd = (uint32_t)fd;
	a.pathname = (uint64_t)(uintptr_t)path;
	ck_assert_int_eq(sys_bpf(BPF_OBJ_PIN, &a), 0);
}

/* What the tracepoint program does: size 0 deletes, else insert. */
static int
drv(int fd, uint32_t gpu, int32_t pid, uint64_t size)
{
	uint64_t k = KEY(gpu, pid);
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&k;
	if (size == 0)
		return sys_bpf(BPF_MAP_DELETE_ELEM, &a);
	a.value = (uint64_t)(uintptr_t)&size;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

static int
drv_key(int fd, uint64_t k, uint64_t size)
{
	return drv(fd, (uint32_t)(k >> 32), (int32_t)(uint32_t)k, size);
}

static void
map_path(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/%s", bpfdir, name);
}

/*
 * Make the kernel refuse every get-next-key of this process (and what it
 * execs): seccomp answers EPERM, as an LSM refusing the walk would. The
 * map stays readable by lookup and writable, so only the walk fails.
 */
static void
refuse_walks(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_MAP_GET_NEXT_KEY, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		_exit(126);
}

/* ------------------------------------------------------------- processes */

static int
proc_lookup(void *arg, int32_t pid, uint64_t *ret_starttime, char *ret_name,
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
	if (n <= 0 || pidstat_parse(buf, (size_t)n, &st) < 0 ||
	    st.state == 'Z')
		return -ESRCH;
	*ret_starttime = st.starttime;
	snprintf(ret_name, namesz, "%s", st.comm);
	return 0;
}

static uint64_t
starttime_of(pid_t pid)
{
	uint64_t st = 0;
	char name[32];

	ck_assert_int_eq(proc_lookup(NULL, pid, &st, name, sizeof(name)), 0);
	return st;
}

/* A child that waits to be killed; want > 0: with exactly that pid. */
static pid_t
child(pid_t want)
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

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---------------------------------------------------------------- reader */

static struct gpumem *
reader(const char *path, unsigned load)
{
	struct gpumem_opts o = { .map_path = path, .load = load,
		.bpffs = bpfdir, .attach_s = 2 };
	struct gpumem *g = NULL;

	ck_assert_int_eq(gpumem_new(&o, &g), 0);
	gpumem_set_lookup(g, proc_lookup, NULL);
	return g;
}

static struct window *
close_window(struct gpumem *g, uint64_t seq)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	w->mono_end_ns = clock_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(gpumem_window(g, w), 0);
	return w;
}

static const struct window_gpu_proc *
find(const struct window *w, uint32_t gpu, int32_t pid)
{
	size_t i;

	for (i = 0; i < w->n_gpu; i++)
		if (w->gpu[i].gpu_id == gpu && w->gpu[i].pid == pid)
			return &w->gpu[i];
	return NULL;
}

static void
tick(struct gpumem *g)
{
	ck_assert_int_eq(gpumem_tick(g, clock_ns(CLOCK_MONOTONIC)), 0);
}

/* Not initialised, empty and traversal error, each from a real map. */
START_TEST(test_three_states)
{
	char absent[PATH_MAX], arr[PATH_MAX], wo[PATH_MAX], ok[PATH_MAX];
	struct gpumem *g;
	struct gpumem_view v;
	unsigned why;
	int err, fd;

	map_path(absent, sizeof(absent), "map_gpuMem_absent");
	map_path(arr, sizeof(arr), "map_gpuMem_array");
	map_path(wo, sizeof(wo), "map_gpuMem_wronly");
	map_path(ok, sizeof(ok), "map_gpuMem_gpu_mem_total_map");

	/* nothing pinned: not initialised, until the loader pins it */
	g = reader(ok, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_NO_MAP);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, NULL, NULL), GPUMEM_NOT_INIT);
	fd = aosp_map();
	pin(fd, ok);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_EMPTY);
	ck_assert_uint_eq(why, GPUMEM_WHY_NONE);
	ck_assert_int_eq(drv(fd, 0, 0, 4096), 0);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, NULL, NULL), GPUMEM_OK);
	ck_assert_int_eq(drv(fd, 0, 0, 0), 0);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, NULL, NULL), GPUMEM_EMPTY);
	ck_assert_int_eq(gpumem_view(g, &v), 0);
	ck_assert_uint_eq(v.st.state, GPUMEM_EMPTY);
	ck_assert_uint_eq(v.st.capacity, CAP);
	ck_assert_uint_eq(v.st.source, GPUMEM_SRC_PINNED);
	ck_assert_uint_eq(v.n, 0);
	gpumem_view_release(&v);
	gpumem_free(g);
	close(fd);

	/* a map of another layout: an error, never read */
	fd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0);
	pin(fd, arr);
	close(fd);
	g = reader(arr, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_uint_eq(gpumem_state(g, &why, &err), GPUMEM_ERROR);
	ck_assert_uint_eq(why, GPUMEM_WHY_LAYOUT);
	gpumem_free(g);

	/* the layout is right but the kernel refuses the walk: a
	 * traversal error, with its errno (this test's process only) */
	fd = aosp_map();
	ck_assert_int_eq(drv(fd, 0, 0, 1), 0);
	pin(fd, wo);
	close(fd);
	g = reader(wo, GPUMEM_LOAD_MAP_ONLY);
	refuse_walks();
	ck_assert_int_eq(gpumem_tick(g, clock_ns(CLOCK_MONOTONIC)), -EPERM);
	ck_assert_uint_eq(gpumem_state(g, &why, &err), GPUMEM_ERROR);
	ck_assert_uint_eq(why, GPUMEM_WHY_TRAVERSE);
	ck_assert_int_eq(err, -EPERM);
	ck_assert_int_eq(gpumem_view(g, &v), 0);
	ck_assert_uint_eq(v.st.traversal_fail, 1);
	ck_assert_uint_eq(v.st.state, GPUMEM_ERROR);
	gpumem_view_release(&v);
	gpumem_free(g);
	unlink(arr);
	unlink(wo);
	unlink(ok);
}
END_TEST

/* Globals, two GPUs, live and dead pids, a reused pid, size-0 deletes. */
START_TEST(test_entries_and_attribution)
{
	const struct window_gpu_proc *p;
	char path[PATH_MAX];
	struct gpumem *g;
	struct window *w;
	pid_t a, dead, b;
	uint64_t st_a;
	int fd;

	map_path(path, sizeof(path), "map_gpuMem_entries");
	fd = aosp_map();
	pin(fd, path);
	a = child(0);
	dead = child(0);
	reap(dead);
	st_a = starttime_of(a);
	sleep_ms(30); /* reports come after a's start, in a later tick */

	ck_assert_int_eq(drv(fd, 0, 0, 1000000), 0);
	ck_assert_int_eq(drv(fd, 1, 0, 2000000), 0);
	ck_assert_int_eq(drv(fd, 0, a, 4096), 0);
	ck_assert_int_eq(drv(fd, 1, a, 8192), 0);
	ck_assert_int_eq(drv(fd, 0, dead, 777), 0);
	ck_assert_int_eq(drv(fd, 0, getpid(), 12345), 0);
	g = reader(path, GPUMEM_LOAD_MAP_ONLY);
	tick(g);
	ck_assert_int_eq(drv(fd, 0, a, 65536), 0);
	tick(g);
	ck_assert_int_eq(drv(fd, 0, a, 16384), 0);
	tick(g);
	w = close_window(g, 1);
	ck_assert_uint_eq(w->gpumem.state, GPUMEM_OK);
	ck_assert_uint_eq(w->gpumem.entries, 6);
	ck_assert_uint_eq(w->gpumem.traversals, 3);
	ck_assert(!w->gpumem.saturated);
	ck_assert_uint_eq(w->n_gpu, 6);
	p = find(w, 0, 0);
	ck_assert_uint_eq(p->bytes, 1000000);
	ck_assert(!p->stale);
	ck_assert_uint_eq(find(w, 1, 0)->bytes, 2000000);
	p = find(w, 0, a);
	ck_assert_uint_eq(p->bytes, 16384);
	ck_assert_uint_eq(p->min_bytes, 4096);
	ck_assert_uint_eq(p->max_bytes, 65536);
	ck_assert_uint_eq(p->starttime, st_a);
	ck_assert(!p->stale);
	ck_assert_uint_eq(find(w, 1, a)->bytes, 8192);
	p = find(w, 0, dead);
	ck_assert(p->stale);
	ck_assert_uint_eq(p->starttime, 0);
	ck_assert_uint_eq(p->bytes, 777);
	ck_assert(!find(w, 0, getpid())->stale);
	ck_assert_uint_eq(w->gpumem.stale, 1);
	window_free(w);

	/* size 0 deletes: 0 at this window's end, gone from the next */
	ck_assert_int_eq(drv(fd, 0, getpid(), 0), 0);
	tick(g);
	w = close_window(g, 2);
	p = find(w, 0, getpid());
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->bytes, 0);
	ck_assert_uint_eq(p->max_bytes, 12345);
	ck_assert_uint_eq(w->gpumem.entries, 5);
	window_free(w);
	tick(g);
	w = close_window(g, 3);
	ck_assert_ptr_null(find(w, 0, getpid()));
	window_free(w);

	/* a's pid reused by b: a's totals are not b's */
	reap(a);
	sleep_ms(30);
	b = child(a);
	ck_assert_int_eq(b, a);
	ck_assert_uint_ne(starttime_of(b), st_a);
	tick(g);
	w = close_window(g, 4);
	ck_assert(find(w, 0, a)->stale);
	ck_assert(find(w, 1, a)->stale);
	ck_assert_uint_eq(find(w, 1, a)->starttime, 0);
	window_free(w);
	/* b reports on GPU 1: that pair is b's; GPU 0's stays stale */
	sleep_ms(20);
	ck_assert_int_eq(drv(fd, 1, b, 9000), 0);
	tick(g);
	w = close_window(g, 5);
	p = find(w, 1, b);
	ck_assert(!p->stale);
	ck_assert_uint_eq(p->starttime, starttime_of(b));
	ck_assert_uint_eq(p->bytes, 9000);
	ck_assert_uint_eq(p->min_bytes, 9000);
	ck_assert(find(w, 0, b)->stale);
	window_free(w);
	reap(b);
	gpumem_free(g);
	close(fd);
	unlink(path);
}
END_TEST

/* 1024 entries, globals included: full, and the next pair refused. */
START_TEST(test_capacity)
{
	char path[PATH_MAX];
	struct gpumem *g;
	struct window *w;
	uint32_t i;
	int fd;

	map_path(path, sizeof(path), "map_gpuMem_full");
	fd = aosp_map();
	pin(fd, path);
	g = reader(path, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_int_eq(drv(fd, 0, 0, 1), 0);
	ck_assert_int_eq(drv(fd, 1, 0, 1), 0);
	for (i = 1; i <= 1000; i++)
		ck_assert_int_eq(drv(fd, i % 2, 400000 + (int32_t)i, i), 0);
	tick(g);
	w = close_window(g, 1);
	ck_assert_uint_eq(w->gpumem.entries, 1002);
	ck_assert(!w->gpumem.saturated);
	window_free(w);
	for (i = 1001; i <= CAP - 2; i++)
		ck_assert_int_eq(drv(fd, i % 2, 400000 + (int32_t)i, i), 0);
	/* AOSP's program would ignore this failure */
	ck_assert_int_eq(drv(fd, 0, 999999, 1), -E2BIG);
	tick(g);
	w = close_window(g, 2);
	ck_assert_uint_eq(w->gpumem.entries, CAP);
	ck_assert_uint_eq(w->n_gpu, CAP);
	ck_assert(w->gpumem.saturated);
	ck_assert_ptr_null(find(w, 0, 999999));
	window_free(w);
	gpumem_free(g);
	close(fd);
	unlink(path);
}
END_TEST

/* --------------------------------------------------- concurrent writer */

#define STABLE 200
#define CHURN 700

static atomic_bool stop;

static void *
writer_main(void *arg)
{
	int fd = *(int *)arg;
	uint32_t x = 12345;

	while (!atomic_load(&stop)) {
		uint64_t k;

		x = x * 1103515245u + 12345u;
		k = KEY(x % 3, 100000 + (x >> 8) % CHURN);
		if ((x >> 4) & 1)
			(void)drv_key(fd, k, 0);
		else
			(void)drv_key(fd, k, 1 + (x >> 12));
	}
	return NULL;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_concurrent_writer)
{
	static uint64_t keys[STABLE + 3 * CHURN];
	struct gpumem_walk wk = { 0 };
	uint32_t restarts = 0, vanished = 0, truncated = 0;
	pthread_t th;
	int fd, i;
	size_t j;

	fd = aosp_map();
	for (i = 0; i < STABLE; i++)
		ck_assert_int_eq(drv(fd, 7, 1 + i, 1000 + (uint64_t)i), 0);
	atomic_store(&stop, false);
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &fd), 0);
	for (i = 0; i < 200; i++) {
		unsigned seen_stable = 0;
		int64_t t0 = clock_ns(CLOCK_MONOTONIC);

		ck_assert_int_eq(gpumem_map_walk(fd, CAP, &wk), 0);
		ck_assert_msg(clock_ns(CLOCK_MONOTONIC) - t0 < 2 * SEC,
		    "a walk took over 2 s");
		ck_assert_uint_le(wk.n, STABLE + 3 * CHURN);
		/* never an entry twice (sorted copy: neighbours differ);
		 * plain ifs: a Check assertion costs a write each */
		memcpy(keys, wk.key, wk.n * sizeof(*keys));
		qsort(keys, wk.n, sizeof(*keys), u64_cmp);
		for (j = 1; j < wk.n; j++)
			if (keys[j] == keys[j - 1])
				ck_abort_msg("key %llx twice in one walk",
				    (unsigned long long)keys[j]);
		for (j = 0; j < wk.n; j++) {
			if ((wk.key[j] >> 32) != 7)
				continue;
			if (wk.val[j] != 1000 + (uint32_t)wk.key[j] - 1)
				ck_abort_msg("stable key %llx: %llu",
				    (unsigned long long)wk.key[j],
				    (unsigned long long)wk.val[j]);
			seen_stable++;
		}
		/* an untouched entry is found unless the walk was cut */
		if (!wk.truncated)
			ck_assert_uint_eq(seen_stable, STABLE);
		restarts += wk.restarts;
		vanished += wk.vanished;
		truncated += wk.truncated;
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	gpumem_walk_release(&wk);
	/* the writer did delete keys under the cursor */
	ck_assert_uint_gt(restarts + vanished, 0);
	ck_assert_uint_lt(truncated, 200);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------ own program */

static bool
tracepoint_exists(void)
{
	struct stat sb;

	return stat("/sys/kernel/tracing/events/gpu_mem/gpu_mem_total", &sb) ==
	    0 || stat("/sys/kernel/debug/tracing/events/gpu_mem/gpu_mem_total",
	    &sb) == 0;
}

START_TEST(test_own_program)
{
	char absent[PATH_MAX], pinp[PATH_MAX];
	struct gpumem *g;
	unsigned why;
	int err;
#ifdef HAVE_BPF
	struct gpumem_bpf *gb = NULL, *gb2 = NULL;
	uint64_t ev = 1, fail = 1, k = KEY(3, 33), v = 0;
	uint32_t cap = 0;
	union bpf_attr a;
	int fd = -1, fd2 = -1, r;
	int64_t t;
#endif

	map_path(absent, sizeof(absent), "map_gpuMem_none");
	map_path(pinp, sizeof(pinp), "map_vitals_gpu_mem_total_map");
#ifdef HAVE_BPF
	/* loads: the verifier accepted it */
	r = gpumem_bpf_load(bpfdir, &gb, &fd);
	ck_assert_msg(r == 0, "gpumem_bpf_load: %s", strerror(-r));
	ck_assert_int_eq(gpumem_map_check(fd, &cap), 0);
	ck_assert_uint_eq(cap, CAP);
	ck_assert_int_eq(access(pinp, F_OK), 0);
	ck_assert_int_eq(gpumem_bpf_stats(gb, &ev, &fail), 0);
	ck_assert_uint_eq(ev, 0);
	ck_assert_uint_eq(fail, 0);
	r = gpumem_bpf_attach(gb);
	if (tracepoint_exists())
		ck_assert_int_eq(r, 0);
	else
		ck_assert_int_eq(r, -ENOENT);
	/* a second start reuses the pinned map: totals survive */
	ck_assert_int_eq(drv(fd, 3, 33, 4242), 0);
	ck_assert_int_eq(gpumem_bpf_load(bpfdir, &gb2, &fd2), 0);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd2;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&v;
	ck_assert_int_eq(sys_bpf(BPF_MAP_LOOKUP_ELEM, &a), 0);
	ck_assert_uint_eq(v, 4242);
	gpumem_bpf_free(gb2);
	gpumem_bpf_free(gb);
	close(fd);
	close(fd2);
	unlink(pinp);

	if (tracepoint_exists())
		return;
	/* the reader with its own program: waits, retrying each second,
	 * then says the tracepoint is absent (attach_s = 2) */
	g = reader(absent, GPUMEM_LOAD_AUTO);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_WAITING);
	t = clock_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(gpumem_tick(g, t), 0);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_WAITING);
	ck_assert_int_eq(gpumem_tick(g, t + 1 * SEC), 0);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_WAITING);
	ck_assert_int_eq(gpumem_tick(g, t + 2 * SEC), 0);
	ck_assert_uint_eq(gpumem_state(g, &why, &err), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_TP_ABSENT);
	ck_assert_int_eq(err, -ENOENT);
	gpumem_free(g);
	unlink(pinp);
#else
	(void)tracepoint_exists;
	(void)pinp;
	/* built without BPF: nothing to load, the map is all there is */
	g = reader(absent, GPUMEM_LOAD_AUTO);
	ck_assert_uint_eq(gpumem_state(g, &why, &err), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_NO_MAP);
	ck_assert_int_eq(err, 0);
	gpumem_free(g);
#endif
}
END_TEST

/* ------------------------------------------------------------- daemon */

struct daemon {
	pid_t pid;
	char *dir;
	char sock[PATH_MAX];
	char log[PATH_MAX];
};

static struct run
vitals(const struct daemon *d, const char *a0, const char *a1,
    const char *a2, const char *a3)
{
	const char *argv[] = { "vitals", "--socket", d->sock, a0, a1, a2, a3,
		NULL };

	return run_client(argv);
}

static void
daemon_start_opt(struct daemon *d, const char *conf, bool refuse)
{
	char cf[PATH_MAX];
	int i;

	d->dir = tu_mkdtemp("gpumem-daemon");
	ck_assert_ptr_nonnull(d->dir);
	snprintf(d->sock, sizeof(d->sock), "%s/vitalsd.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s.log", d->dir);
	snprintf(cf, sizeof(cf), "%s/vitalsd.conf", d->dir);
	ck_assert_int_eq(tu_writes(cf, conf), 0);
	d->pid = fork();
	ck_assert_int_ge(d->pid, 0);
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 2);
		if (refuse)
			refuse_walks();
		execl(daemon_path, "vitalsd", "-f", "-c", cf, "--state-dir",
		    d->dir, "--socket", d->sock, "--interval-ms", "100",
		    "--window-s", "1", "--scanner", "procfs", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100; i++) {
		struct run r;

		sleep_ms(100);
		r = vitals(d, "gpumem", NULL, NULL, NULL);
		run_free(&r);
		if (r.code == 0)
			return;
	}
	ck_abort_msg("vitalsd did not answer within 10 s (log %s)", d->log);
}

static void
daemon_start(struct daemon *d, const char *conf)
{
	daemon_start_opt(d, conf, false);
}

static void
daemon_stop(struct daemon *d)
{
	int status;

	kill(d->pid, SIGTERM);
	ck_assert_int_eq(waitpid(d->pid, &status, 0), d->pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "vitalsd ended with status 0x%x (log %s)", status, d->log);
	tu_rmtree(d->dir);
	free(d->dir);
	unlink(d->log);
}

/* `vitals gpumem` until it prints want (3 s), then exactly want. */
static void
expect_text(const struct daemon *d, const char *want, const char *a1,
    const char *a2)
{
	struct run r = { 0 };
	int i;

	for (i = 0; i < 30; i++) {
		if (i)
			run_free(&r);
		r = vitals(d, "gpumem", a1, a2, NULL);
		if (r.code == 0 && strcmp(r.out, want) == 0)
			break;
		sleep_ms(100);
	}
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.out, want);
	run_free(&r);
}

/* window_gpu rows of the newest stored window, "gpu pid start bytes
 * stale name|" each, by gpu and pid; malloc'd. */
static char *
stored_rows(const struct daemon *d)
{
	char db[PATH_MAX], *out = malloc(4096);
	sqlite3_stmt *st;
	sqlite3 *h;
	size_t len = 0;

	ck_assert_ptr_nonnull(out);
	out[0] = '\0';
	snprintf(db, sizeof(db), "%s/vitals.db", d->dir);
	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	sqlite3_busy_timeout(h, 2000);
	ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT gpu_id, pid, starttime,"
	    " bytes, stale, name FROM window_gpu WHERE window_id ="
	    " (SELECT max(window_id) FROM window_gpu) ORDER BY gpu_id, pid",
	    -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && len < 4000)
		len += (size_t)snprintf(out + len, 4096 - len,
		    "%lld %lld %lld %lld %d %s|", sqlite3_column_int64(st, 0),
		    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
		    sqlite3_column_int64(st, 3), sqlite3_column_int(st, 4),
		    (const char *)sqlite3_column_text(st, 5));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return out;
}

/* A child that is a named process: exec'd sleep. */
static pid_t
sleeper(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execlp("sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	sleep_ms(50); /* exec'd */
	return pid;
}

START_TEST(test_daemon_gpumem)
{
	char path[PATH_MAX], conf[PATH_MAX + 128], want[2048];
	const struct jm *procs, *st;
	struct daemon d;
	struct run r;
	struct jm *j;
	pid_t a, dead, lo, hi;
	int fd;

	map_path(path, sizeof(path), "map_gpuMem_gpu_mem_total_map");
	snprintf(conf, sizeof(conf), "gpumem_map = %s\n"
	    "gpumem_load = map-only\nbpf_load = off\n", path);
	daemon_start(&d, conf);
	expect_text(&d, "GPU memory: not initialised (no map); none map, "
	    "0 of 0 entries\n", NULL, NULL);

	/* the loader pins it: empty */
	fd = aosp_map();
	pin(fd, path);
	expect_text(&d, "GPU memory: empty; pinned map, 0 of 1024 "
	    "entries\n", NULL, NULL);

	/* a live process, a dead one, two GPUs, one without its global */
	a = sleeper();
	dead = child(0);
	reap(dead);
	sleep_ms(300); /* the daemon's scan has seen a */
	ck_assert_int_eq(drv(fd, 0, 0, 1000000), 0);
	ck_assert_int_eq(drv(fd, 0, a, 4096), 0);
	ck_assert_int_eq(drv(fd, 0, dead, 777), 0);
	ck_assert_int_eq(drv(fd, 1, a, 8192), 0);
	lo = a < dead ? a : dead;
	hi = a < dead ? dead : a;
	snprintf(want, sizeof(want),
	    "GPU memory: ok; pinned map, 4 of 1024 entries\n"
	    "Memory snapshot for GPU 0:\n"
	    "Global total: 1000000\n"
	    "Proc %d total: %s\n"
	    "Proc %d total: %s\n"
	    "Memory snapshot for GPU 1:\n"
	    "Global total: N/A\n"
	    "Proc %d total: 8192 sleep\n",
	    lo, lo == a ? "4096 sleep" : "777 [stale]",
	    hi, hi == a ? "4096 sleep" : "777 [stale]", a);
	expect_text(&d, want, NULL, NULL);

	/* the same as JSON */
	r = vitals(&d, "--json", "gpumem", NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	st = jm_path(j, "gpu_mem.state");
	ck_assert_ptr_nonnull(st);
	ck_assert_str_eq(jm_get(st, "state")->str, "ok");
	ck_assert_str_eq(jm_get(st, "source")->str, "pinned");
	ck_assert_int_eq(jm_get(st, "capacity")->ll, 1024);
	ck_assert_int_eq(jm_get(st, "entries")->ll, 4);
	procs = jm_path(j, "gpu_mem.procs");
	ck_assert_ptr_nonnull(procs);
	ck_assert_uint_eq(procs->n, 4);
	ck_assert_int_eq(jm_get(&procs->v[0], "bytes")->ll, 1000000);
	ck_assert_int_eq(jm_get(&procs->v[3], "pid")->ll, a);
	ck_assert_int_eq(jm_get(&procs->v[3], "gpu_id")->ll, 1);
	ck_assert_int_eq(jm_get(&procs->v[3], "starttime")->ll,
	    (long long)starttime_of(a));
	ck_assert_str_eq(jm_get(&procs->v[3], "name")->str, "sleep");
	jm_free(j);
	run_free(&r);

	/* growth over stored windows: 4096 at a window end, then 65536 */
	sleep_ms(1500);
	ck_assert_int_eq(drv(fd, 0, a, 65536), 0);
	sleep_ms(2500);
	r = vitals(&d, "gpumem", "--since", "1h", NULL);
	ck_assert_int_eq(r.code, 0);
	snprintf(want, sizeof(want), "Proc %d total: 65536 sleep (min 4096, "
	    "max 65536, growth +61440)\n", a);
	ck_assert_msg(strstr(r.out, want) != NULL, "no '%s' in:\n%s", want,
	    r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "Over the last 1h00m\n"));
	snprintf(want, sizeof(want), "Proc %d total: 777 [stale] (min 777, "
	    "max 777, growth +0)\n", dead);
	ck_assert_msg(strstr(r.out, want) != NULL, "no '%s' in:\n%s", want,
	    r.out);
	run_free(&r);

	/* the newest stored window holds exactly what the map holds */
	{
		char ra[128], rd[64];
		char *rows = stored_rows(&d);

		snprintf(ra, sizeof(ra), "0 %d %llu 65536 0 sleep|", a,
		    (unsigned long long)starttime_of(a));
		snprintf(rd, sizeof(rd), "0 %d 0 777 1 |", dead);
		snprintf(want, sizeof(want), "0 0 0 1000000 0 |%s%s"
		    "1 %d %llu 8192 0 sleep|", a < dead ? ra : rd,
		    a < dead ? rd : ra, a, (unsigned long long)starttime_of(a));
		ck_assert_str_eq(rows, want);
		free(rows);
	}

	/* health and the dump carry the state too */
	r = vitals(&d, "--json", "health", NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(jm_path(j, "health.gpu_mem.state")->str, "ok");
	jm_free(j);
	run_free(&r);
	r = vitals(&d, "dump", NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "gpu memory: ok (pinned map, "
	    "4 of 1024 entries)\n"));
	run_free(&r);

	daemon_stop(&d);
	reap(a);
	close(fd);
	unlink(path);
}
END_TEST

/* The traversal error state and the own program's absent tracepoint,
 * as the client reports them. */
START_TEST(test_daemon_error_and_own)
{
	char path[PATH_MAX], conf[PATH_MAX * 2 + 128];
	struct daemon d;
	int fd;

	map_path(path, sizeof(path), "map_gpuMem_refused");
	fd = aosp_map();
	pin(fd, path);
	close(fd);
	snprintf(conf, sizeof(conf), "gpumem_map = %s\n"
	    "gpumem_load = map-only\nbpf_load = off\n", path);
	daemon_start_opt(&d, conf, true);
	expect_text(&d, "GPU memory: traversal error (traversal failed: "
	    "Operation not permitted); pinned map, 0 of 1024 entries\n",
	    NULL, NULL);
	daemon_stop(&d);
	unlink(path);

	if (tracepoint_exists())
		return;
	map_path(path, sizeof(path), "map_gpuMem_none");
	snprintf(conf, sizeof(conf), "gpumem_map = %s\nbpffs = %s/own\n"
	    "gpumem_attach_s = 1\n", path, bpfdir);
	daemon_start(&d, conf);
#ifdef HAVE_BPF
	expect_text(&d, "GPU memory: not initialised (tracepoint absent: No "
	    "such file or directory); own map, 0 of 1024 entries\n", NULL,
	    NULL);
#else
	expect_text(&d, "GPU memory: not initialised (no map); none map, "
	    "0 of 0 entries\n", NULL, NULL);
#endif
	daemon_stop(&d);
}
END_TEST

static void
setup(void)
{
	struct statfs sf;

	if (statfs("/sys/fs/bpf", &sf) < 0 ||
	    (unsigned long)sf.f_type != 0xcafe4a11UL)
		ck_assert_int_eq(mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL),
		    0);
	snprintf(bpfdir, sizeof(bpfdir), "/sys/fs/bpf/vitals-gpumem-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(bpfdir));
}

static void
teardown(void)
{
	tu_rmtree(bpfdir);
}

static Suite *
gpumem_kernel_suite(void)
{
	Suite *s = suite_create("gpumem_kernel");
	TCase *tc = tcase_create("map");
	TCase *td = tcase_create("daemon");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_three_states);
	tcase_add_test(tc, test_entries_and_attribution);
	tcase_add_test(tc, test_capacity);
	tcase_add_test(tc, test_concurrent_writer);
	tcase_add_test(tc, test_own_program);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(td, setup, teardown);
	tcase_set_timeout(td, 120);
	tcase_add_test(td, test_daemon_gpumem);
	tcase_add_test(td, test_daemon_error_and_own);
	suite_add_tcase(s, td);
	return s;
}

int
main(void)
{
	const char *b = getenv("VITALS_BUILDDIR");

	if (geteuid() != 0) {
		fprintf(stderr, "check_gpumem_kernel: needs root\n");
		return 77;
	}
	snprintf(daemon_path, sizeof(daemon_path), "%s/daemon/vitalsd",
	    b ? b : ".");
	snprintf(client_path, sizeof(client_path), "%s/client/vitals",
	    b ? b : ".");
	return tu_run(gpumem_kernel_suite());
}
