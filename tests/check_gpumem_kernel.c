/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU memory against real kernel maps (root). This kernel has no
 * gpu_mem/gpu_mem_total tracepoint, so the test is the driver
 * (gpumem_driver.h): it creates a HASH map with AOSP's exact layout (u64
 * key, u64 value, 1024 entries), pins it in a private bpffs directory and
 * writes and deletes entries with bpf() as GpuService's program would.
 * Then the reader's states, attribution, capacity, a walk under a
 * concurrent writer, and vitalsd's own program. check_gpumem_daemon runs
 * the daemon and the client against such maps.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpumem_driver.h"
#include "testutil.h"
#include "vitalsd.h"

/* ---------------------------------------------------------------- reader */

static struct gpumem *
reader(const char *path, unsigned load)
{
	struct gpumem_opts o = { .map_path = path,
		.load = load,
		.bpffs = gd_bpfdir,
		.attach_s = 2 };
	struct gpumem *g = NULL;

	ck_assert_int_eq(gpumem_new(&o, &g), 0);
	gpumem_set_lookup(g, gd_proc_lookup, NULL);
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
	const struct window_gpumem_part *g = window_gpumem(w);
	size_t i;

	for (i = 0; g && i < g->n_gpu; i++)
		if (g->gpu[i].gpu_id == gpu && g->gpu[i].pid == pid)
			return &g->gpu[i];
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

	gd_map_path(absent, sizeof(absent), "map_gpuMem_absent");
	gd_map_path(arr, sizeof(arr), "map_gpuMem_array");
	gd_map_path(wo, sizeof(wo), "map_gpuMem_wronly");
	gd_map_path(ok, sizeof(ok), "map_gpuMem_gpu_mem_total_map");

	/* nothing pinned: not initialised, until the loader pins it */
	g = reader(ok, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_NO_MAP);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, NULL, NULL), GPUMEM_NOT_INIT);
	fd = gd_aosp_map();
	gd_pin(fd, ok);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_EMPTY);
	ck_assert_uint_eq(why, GPUMEM_WHY_NONE);
	ck_assert_int_eq(gd_drv(fd, 0, 0, 4096), 0);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, NULL, NULL), GPUMEM_OK);
	ck_assert_int_eq(gd_drv(fd, 0, 0, 0), 0);
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
	fd = gd_map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0);
	gd_pin(fd, arr);
	close(fd);
	g = reader(arr, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_uint_eq(gpumem_state(g, &why, &err), GPUMEM_ERROR);
	ck_assert_uint_eq(why, GPUMEM_WHY_LAYOUT);
	gpumem_free(g);

	/* the layout is right but the kernel refuses the walk: a
	 * traversal error, with its errno (this test's process only) */
	fd = gd_aosp_map();
	ck_assert_int_eq(gd_drv(fd, 0, 0, 1), 0);
	gd_pin(fd, wo);
	close(fd);
	g = reader(wo, GPUMEM_LOAD_MAP_ONLY);
	gd_refuse_walks();
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

	gd_map_path(path, sizeof(path), "map_gpuMem_entries");
	fd = gd_aosp_map();
	gd_pin(fd, path);
	a = gd_child(0);
	dead = gd_child(0);
	gd_reap(dead);
	st_a = gd_starttime_of(a);
	tu_sleep_ms(30); /* reports come after a's start, in a later tick */

	ck_assert_int_eq(gd_drv(fd, 0, 0, 1000000), 0);
	ck_assert_int_eq(gd_drv(fd, 1, 0, 2000000), 0);
	ck_assert_int_eq(gd_drv(fd, 0, a, 4096), 0);
	ck_assert_int_eq(gd_drv(fd, 1, a, 8192), 0);
	ck_assert_int_eq(gd_drv(fd, 0, dead, 777), 0);
	ck_assert_int_eq(gd_drv(fd, 0, getpid(), 12345), 0);
	g = reader(path, GPUMEM_LOAD_MAP_ONLY);
	tick(g);
	ck_assert_int_eq(gd_drv(fd, 0, a, 65536), 0);
	tick(g);
	ck_assert_int_eq(gd_drv(fd, 0, a, 16384), 0);
	tick(g);
	w = close_window(g, 1);
	ck_assert_uint_eq(window_gpumem(w)->st.state, GPUMEM_OK);
	ck_assert_uint_eq(window_gpumem(w)->st.entries, 6);
	ck_assert_uint_eq(window_gpumem(w)->st.traversals, 3);
	ck_assert(!window_gpumem(w)->st.saturated);
	ck_assert_uint_eq(window_gpumem(w)->n_gpu, 6);
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
	ck_assert_uint_eq(window_gpumem(w)->st.stale, 1);
	window_free(w);

	/* size 0 deletes: 0 at this window's end, gone from the next */
	ck_assert_int_eq(gd_drv(fd, 0, getpid(), 0), 0);
	tick(g);
	w = close_window(g, 2);
	p = find(w, 0, getpid());
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->bytes, 0);
	ck_assert_uint_eq(p->max_bytes, 12345);
	ck_assert_uint_eq(window_gpumem(w)->st.entries, 5);
	window_free(w);
	tick(g);
	w = close_window(g, 3);
	ck_assert_ptr_null(find(w, 0, getpid()));
	window_free(w);

	/* a's pid reused by b: a's totals are not b's */
	gd_reap(a);
	tu_sleep_ms(30);
	b = gd_child(a);
	ck_assert_int_eq(b, a);
	ck_assert_uint_ne(gd_starttime_of(b), st_a);
	tick(g);
	w = close_window(g, 4);
	ck_assert(find(w, 0, a)->stale);
	ck_assert(find(w, 1, a)->stale);
	ck_assert_uint_eq(find(w, 1, a)->starttime, 0);
	window_free(w);
	/* b reports on GPU 1: that pair is b's; GPU 0's stays stale */
	tu_sleep_ms(20);
	ck_assert_int_eq(gd_drv(fd, 1, b, 9000), 0);
	tick(g);
	w = close_window(g, 5);
	p = find(w, 1, b);
	ck_assert(!p->stale);
	ck_assert_uint_eq(p->starttime, gd_starttime_of(b));
	ck_assert_uint_eq(p->bytes, 9000);
	ck_assert_uint_eq(p->min_bytes, 9000);
	ck_assert(find(w, 0, b)->stale);
	window_free(w);
	gd_reap(b);
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

	gd_map_path(path, sizeof(path), "map_gpuMem_full");
	fd = gd_aosp_map();
	gd_pin(fd, path);
	g = reader(path, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_int_eq(gd_drv(fd, 0, 0, 1), 0);
	ck_assert_int_eq(gd_drv(fd, 1, 0, 1), 0);
	for (i = 1; i <= 1000; i++)
		ck_assert_int_eq(gd_drv(fd, i % 2, 400000 + (int32_t)i, i), 0);
	tick(g);
	w = close_window(g, 1);
	ck_assert_uint_eq(window_gpumem(w)->st.entries, 1002);
	ck_assert(!window_gpumem(w)->st.saturated);
	window_free(w);
	for (i = 1001; i <= CAP - 2; i++)
		ck_assert_int_eq(gd_drv(fd, i % 2, 400000 + (int32_t)i, i), 0);
	/* AOSP's program would ignore this failure */
	ck_assert_int_eq(gd_drv(fd, 0, 999999, 1), -E2BIG);
	tick(g);
	w = close_window(g, 2);
	ck_assert_uint_eq(window_gpumem(w)->st.entries, CAP);
	ck_assert_uint_eq(window_gpumem(w)->n_gpu, CAP);
	ck_assert(window_gpumem(w)->st.saturated);
	ck_assert_ptr_null(find(w, 0, 999999));
	window_free(w);
	gpumem_free(g);
	close(fd);
	unlink(path);
}
END_TEST

/*
 * The pins are tried in order: AOSP main's name first, the older one as
 * the fallback; the one read is reported. A pin that exists but is not a
 * GpuMem map is an error, not a reason to read the next.
 */
START_TEST(test_fallback_order)
{
	char main_p[PATH_MAX], old_p[PATH_MAX], list[2 * PATH_MAX + 2];
	struct gpumem *g;
	unsigned why;
	int fd_old, fd_main, fd;

	/* the default: main's name, then the older one */
	ck_assert_str_eq(VITALS_GPUMEM_MAP,
	    "/sys/fs/bpf/map_gpu_mem_gpu_mem_total_map:"
	    "/sys/fs/bpf/map_gpuMem_gpu_mem_total_map");
	gd_map_path(main_p, sizeof(main_p), "map_gpu_mem_gpu_mem_total_map");
	gd_map_path(old_p, sizeof(old_p), "map_gpuMem_gpu_mem_total_map");
	snprintf(list, sizeof(list), "%s:%s", main_p, old_p);

	/* neither: not initialised, no path */
	g = reader(list, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_NO_MAP);
	ck_assert_str_eq(gpumem_map_used(g), "");

	/* only the old name (Android 15 and older): read, and said so */
	fd_old = gd_aosp_map();
	ck_assert_int_eq(gd_drv(fd_old, 0, 0, 111), 0);
	gd_pin(fd_old, old_p);
	tick(g);
	ck_assert_uint_eq(gpumem_state(g, NULL, NULL), GPUMEM_OK);
	ck_assert_str_eq(gpumem_map_used(g), old_p);
	gpumem_free(g);

	/* both: main's wins */
	fd_main = gd_aosp_map();
	ck_assert_int_eq(gd_drv(fd_main, 0, 0, 222), 0);
	gd_pin(fd_main, main_p);
	g = reader(list, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_str_eq(gpumem_map_used(g), main_p);
	tick(g);
	{
		struct gpumem_view v;

		ck_assert_int_eq(gpumem_view(g, &v), 0);
		ck_assert_uint_eq(v.n, 1);
		ck_assert_uint_eq(v.procs[0].bytes, 222);
		gpumem_view_release(&v);
	}
	gpumem_free(g);
	close(fd_main);
	unlink(main_p);

	/* main's name holds something else: an error naming it */
	fd = gd_map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0);
	gd_pin(fd, main_p);
	close(fd);
	g = reader(list, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_ERROR);
	ck_assert_uint_eq(why, GPUMEM_WHY_LAYOUT);
	ck_assert_str_eq(gpumem_map_used(g), main_p);
	gpumem_free(g);
	unlink(main_p);
	close(fd_old);
	unlink(old_p);
}
END_TEST

/*
 * Values of 16 bytes: the total and its imported part, read as such; any
 * other value size is refused from the kernel's record of the map, so a
 * lookup never writes past what the reader holds.
 */
START_TEST(test_imported_layout)
{
	char path[PATH_MAX], odd[PATH_MAX];
	const struct window_gpu_proc *p;
	struct gpumem_walk wk = { 0 };
	uint32_t cap = 0, vsz = 0;
	struct gpumem *g;
	struct window *w;
	unsigned why;
	int fd;

	gd_map_path(path, sizeof(path), "map_gpu_mem_gpu_mem_total_map");
	fd = gd_imported_map();
	ck_assert_int_eq(gpumem_map_layout(fd, &cap, &vsz), 0);
	ck_assert_uint_eq(vsz, GPUMEM_VAL_IMPORTED);
	/* the own program's check wants a plain total */
	ck_assert_int_eq(gpumem_map_check(fd, &cap), -EPROTOTYPE);
	ck_assert_int_eq(gd_drv_imported(fd, 0, 0, 5000000, 1000000), 0);
	ck_assert_int_eq(gd_drv_imported(fd, 0, getpid(), 65536, 4096), 0);
	ck_assert_int_eq(gd_drv_imported(fd, 2, getpid(), 8192, 0), 0);
	wk.value_size = GPUMEM_VAL_IMPORTED;
	ck_assert_int_eq(gpumem_map_walk(fd, CAP, &wk), 0);
	ck_assert_uint_eq(wk.n, 3);
	ck_assert_ptr_nonnull(wk.imp);
	gpumem_walk_release(&wk);
	gd_pin(fd, path);

	g = reader(path, GPUMEM_LOAD_MAP_ONLY);
	tick(g);
	ck_assert_int_eq(gd_drv_imported(fd, 0, getpid(), 131072, 8192), 0);
	tick(g);
	w = close_window(g, 1);
	ck_assert_uint_eq(window_gpumem(w)->st.state, GPUMEM_OK);
	ck_assert(window_gpumem(w)->st.imported);
	p = find(w, 0, 0);
	ck_assert_uint_eq(p->bytes, 5000000);
	ck_assert_uint_eq(p->imported_bytes, 1000000);
	p = find(w, 0, getpid());
	ck_assert_uint_eq(p->bytes, 131072);
	ck_assert_uint_eq(p->min_bytes, 65536);
	ck_assert_uint_eq(p->imported_bytes, 8192);
	ck_assert_uint_eq(find(w, 2, getpid())->imported_bytes, 0);
	window_free(w);
	/* deleted: 0 and 0 */
	ck_assert_int_eq(gd_drv_imported(fd, 0, getpid(), 0, 0), 0);
	tick(g);
	w = close_window(g, 2);
	ck_assert_uint_eq(find(w, 0, getpid())->bytes, 0);
	ck_assert_uint_eq(find(w, 0, getpid())->imported_bytes, 0);
	window_free(w);
	gpumem_free(g);
	close(fd);
	unlink(path);

	/* a plain AOSP map: no imported figure claimed */
	fd = gd_aosp_map();
	gd_pin(fd, path);
	ck_assert_int_eq(gd_drv(fd, 0, 0, 1), 0);
	g = reader(path, GPUMEM_LOAD_MAP_ONLY);
	tick(g);
	w = close_window(g, 1);
	ck_assert(!window_gpumem(w)->st.imported);
	ck_assert_uint_eq(find(w, 0, 0)->imported_bytes, 0);
	window_free(w);
	gpumem_free(g);
	close(fd);
	unlink(path);

	/* 12- and 24-byte values: not a layout we know, never read */
	gd_map_path(odd, sizeof(odd), "map_gpuMem_odd");
	fd = gd_map_create(BPF_MAP_TYPE_HASH, 8, 24, CAP, 0);
	ck_assert_int_eq(gpumem_map_layout(fd, &cap, &vsz), -EPROTOTYPE);
	gd_pin(fd, odd);
	close(fd);
	g = reader(odd, GPUMEM_LOAD_MAP_ONLY);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_ERROR);
	ck_assert_uint_eq(why, GPUMEM_WHY_LAYOUT);
	gpumem_free(g);
	unlink(odd);
	fd = gd_map_create(BPF_MAP_TYPE_HASH, 8, 12, CAP, 0);
	ck_assert_int_eq(gpumem_map_layout(fd, &cap, &vsz), -EPROTOTYPE);
	close(fd);
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
			(void)gd_drv_key(fd, k, 0);
		else
			(void)gd_drv_key(fd, k, 1 + (x >> 12));
	}
	return NULL;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Walks under a writer that deletes and inserts keys nonstop (200 stable
 * keys never touched). _i 0: the batch walk, which must read every stable
 * key every time. _i 1: the get-next-key walk, which may skip keys that
 * stayed (doc/gpumem.md), so it is held to what it promises: no key
 * twice, right values, the writer's work seen in its counters.
 */
START_TEST(test_concurrent_writer)
{
	static uint64_t keys[STABLE + 3 * CHURN];
	struct gpumem_walk wk = { .no_batch = _i == 1 };
	uint32_t restarts = 0, vanished = 0, truncated = 0, missed = 0;
	pthread_t th;
	int fd, i;
	size_t j;

	fd = gd_aosp_map();
	for (i = 0; i < STABLE; i++)
		ck_assert_int_eq(gd_drv(fd, 7, 1 + i, 1000 + (uint64_t)i), 0);
	/* quiet, twice (the second over the first's buffers): exactly the
	 * keys there, none twice, nothing left over from an earlier read */
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(gpumem_map_walk(fd, CAP, &wk), 0);
		ck_assert_uint_eq(wk.n, STABLE);
		ck_assert_uint_eq(wk.duplicates, 0);
		ck_assert(!wk.truncated);
	}
	atomic_store(&stop, false);
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &fd), 0);
	for (i = 0; i < 200; i++) {
		unsigned seen_stable = 0;
		int64_t t0 = clock_ns(CLOCK_MONOTONIC);

		ck_assert_int_eq(gpumem_map_walk(fd, CAP, &wk), 0);
		ck_assert_msg(clock_ns(CLOCK_MONOTONIC) - t0 < 2 * SEC,
		    "a walk took over 2 s");
		ck_assert(wk.batch == (_i == 0));
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
		/* the batch walk finds every untouched entry */
		if (_i == 0)
			ck_assert_uint_eq(seen_stable, STABLE);
		missed += STABLE - seen_stable;
		restarts += wk.restarts;
		vanished += wk.vanished;
		truncated += wk.truncated;
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	gpumem_walk_release(&wk);
	if (_i == 0) {
		/* a bucket cursor: nothing to restart, nothing cut */
		ck_assert_uint_eq(restarts, 0);
		ck_assert_uint_eq(truncated, 0);
	} else {
		/* the writer did delete keys under the cursor */
		ck_assert_uint_gt(restarts + vanished, 0);
		ck_assert_uint_lt(truncated, 200);
	}
	fprintf(stderr, "%s walk: %u stable keys missed in 200 walks\n",
	    _i ? "get-next-key" : "batch", missed);
	close(fd);
}
END_TEST

/*
 * The reader under the same writer, both walks: a stable pair's total is
 * never taken for 0 (its minimum in every window is its value), because a
 * pair the walk did not return is looked up before it is called deleted;
 * the lookups that found one are counted (recovered).
 */
START_TEST(test_reader_under_writer)
{
	uint32_t recovered = 0, batch = 0, walks = 0;
	char path[PATH_MAX];
	struct gpumem *g;
	pthread_t th;
	int fd, i, k;

	gd_map_path(path, sizeof(path), _i ? "map_gpuMem_nk" : "map_gpuMem_b");
	fd = gd_aosp_map();
	gd_pin(fd, path);
	for (i = 0; i < STABLE; i++)
		ck_assert_int_eq(gd_drv(fd, 7, 1 + i, 1000 + (uint64_t)i), 0);
	g = reader(path, GPUMEM_LOAD_MAP_ONLY);
	gpumem_set_walk_batch(g, _i == 0);
	atomic_store(&stop, false);
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &fd), 0);
	for (k = 0; k < 20; k++) {
		struct window *w;

		for (i = 0; i < 10; i++)
			tick(g);
		w = close_window(g, 1 + (uint64_t)k);
		for (i = 0; i < STABLE; i++) {
			const struct window_gpu_proc *p = find(w, 7, 1 + i);

			if (p == NULL || p->min_bytes != 1000 + (uint64_t)i ||
			    p->bytes != 1000 + (uint64_t)i)
				ck_abort_msg("window %d: pair (7, %d) %s %llu",
				    k, 1 + i, p ? "min" : "missing",
				    p ? (unsigned long long)p->min_bytes : 0);
		}
		recovered += window_gpumem(w)->st.recovered;
		batch += window_gpumem(w)->st.batch_walks;
		walks += window_gpumem(w)->st.traversals;
		window_free(w);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	ck_assert_uint_eq(walks, 200);
	ck_assert_uint_eq(batch, _i == 0 ? 200 : 0);
	fprintf(stderr, "%s reader: %u pairs recovered in 200 walks\n",
	    _i ? "get-next-key" : "batch", recovered);
	gpumem_free(g);
	close(fd);
	unlink(path);
}
END_TEST

/* ------------------------------------------------------------ own program */

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

	gd_map_path(absent, sizeof(absent), "map_gpuMem_none");
	gd_map_path(pinp, sizeof(pinp), "map_vitals_gpu_mem_total_map");
#ifdef HAVE_BPF
	/* loads: the verifier accepted it */
	r = gpumem_bpf_load(gd_bpfdir, &gb, &fd);
	ck_assert_msg(r == 0, "gpumem_bpf_load: %s", strerror(-r));
	ck_assert_int_eq(gpumem_map_check(fd, &cap), 0);
	ck_assert_uint_eq(cap, CAP);
	ck_assert_int_eq(access(pinp, F_OK), 0);
	ck_assert_int_eq(gpumem_bpf_stats(gb, &ev, &fail), 0);
	ck_assert_uint_eq(ev, 0);
	ck_assert_uint_eq(fail, 0);
	r = gpumem_bpf_attach(gb, NULL);
	if (gd_tracepoint_exists())
		ck_assert_int_eq(r, 0);
	else
		ck_assert_int_eq(r, -ENOENT);
	/* a second start reuses the pinned map: totals survive */
	ck_assert_int_eq(gd_drv(fd, 3, 33, 4242), 0);
	ck_assert_int_eq(gpumem_bpf_load(gd_bpfdir, &gb2, &fd2), 0);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd2;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&v;
	ck_assert_int_eq(gd_sys_bpf(BPF_MAP_LOOKUP_ELEM, &a), 0);
	ck_assert_uint_eq(v, 4242);
	gpumem_bpf_free(gb2);
	gpumem_bpf_free(gb);
	close(fd);
	close(fd2);
	unlink(pinp);

	if (gd_tracepoint_exists())
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

static Suite *
gpumem_kernel_suite(void)
{
	Suite *s = suite_create("gpumem_kernel");
	TCase *tc = tcase_create("map");

	tcase_add_checked_fixture(tc, gpumem_setup_bpffs,
	    gpumem_teardown_bpffs);
	tcase_add_test(tc, test_three_states);
	tcase_add_test(tc, test_entries_and_attribution);
	tcase_add_test(tc, test_capacity);
	tcase_add_test(tc, test_fallback_order);
	tcase_add_test(tc, test_imported_layout);
	tcase_add_loop_test(tc, test_concurrent_writer, 0, 2);
	tcase_add_loop_test(tc, test_reader_under_writer, 0, 2);
	tcase_add_test(tc, test_own_program);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("BPF maps"))
		return 77;
	return tu_run(gpumem_kernel_suite());
}
