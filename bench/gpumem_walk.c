/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GpuMem traversal against the walk `dumpsys gpu --gpumem` does
 * (GpuService: first key, then read value / next key until either fails),
 * on a real kernel map with AOSP's layout (root). Two figures per map size:
 * the cost of one walk, and — with a writer thread deleting and inserting
 * pairs meanwhile, as the driver does — how many pairs each walk reports
 * twice and how many untouched pairs it misses.
 *
 *   gpumem_walk [ENTRIES [WALKS]]    (defaults 1024 and 200)
 */
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vitalsd.h"

#define STABLE_GPU 7

static int
sys_bpf(int cmd, union bpf_attr *a)
{
	long r = syscall(__NR_bpf, cmd, a, sizeof(*a));

	return r < 0 ? -errno : (int)r;
}

static int
put(int fd, uint64_t k, uint64_t v)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&k;
	if (v == 0)
		return sys_bpf(BPF_MAP_DELETE_ELEM, &a);
	a.value = (uint64_t)(uintptr_t)&v;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/* GpuService's loop: stops at the first failed read or next key; a
 * deleted cursor makes the kernel start over, and the loop reports the
 * keys again. Returns the keys reported (may repeat), at most cap. */
static size_t
aosp_walk(int fd, uint64_t *out, size_t cap)
{
	union bpf_attr a;
	uint64_t key, next, val;
	size_t n = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.next_key = (uint64_t)(uintptr_t)&key;
	if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) < 0)
		return 0;
	while (n < cap) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&val;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0)
			break;
		out[n++] = key;
		a.value = 0;
		a.next_key = (uint64_t)(uintptr_t)&next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) < 0)
			break;
		key = next;
	}
	return n;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* repeats in keys[0..n), and stable keys absent */
static void
score(uint64_t *keys, size_t n, unsigned stable, uint64_t *dup,
    uint64_t *missed)
{
	unsigned seen = 0;
	size_t i;

	qsort(keys, n, sizeof(*keys), u64_cmp);
	for (i = 0; i < n; i++) {
		if (i && keys[i] == keys[i - 1]) {
			(*dup)++;
			continue;
		}
		seen += (keys[i] >> 32) == STABLE_GPU;
	}
	*missed += stable - seen;
}

static int map_fd;
static unsigned churn;
static atomic_bool stop;

static void *
writer(void *arg)
{
	uint32_t x = 1;

	(void)arg;
	while (!atomic_load(&stop)) {
		x = x * 1103515245u + 12345u;
		(void)put(map_fd,
		    ((uint64_t)(x % 3) << 32) | (100000 + (x >> 8) % churn),
		    (x >> 4) & 1 ? 0 : x >> 12);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	unsigned entries = argc > 1 ? (unsigned)atoi(argv[1]) : 1024;
	unsigned walks = argc > 2 ? (unsigned)atoi(argv[2]) : 200;
	unsigned stable = entries / 4, i, pass;
	struct gpumem_walk wk[2] = { { 0 }, { .no_batch = true } };
	static const char *const name[3] = { "dumpsys", "batch", "next-key" };
	union bpf_attr a;
	uint64_t *keys;
	size_t cap;

	if (entries < 8 || entries > 1024 || walks == 0) {
		fprintf(stderr, "usage: gpumem_walk [8..1024 [WALKS]]\n");
		return 2;
	}
	churn = entries;
	cap = 16 * 1024;
	keys = malloc(cap * sizeof(*keys));
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = a.value_size = 8;
	a.max_entries = 1024;
	if (keys == NULL || (map_fd = sys_bpf(BPF_MAP_CREATE, &a)) < 0) {
		fprintf(stderr, "gpumem_walk: map: %s (root?)\n",
		    strerror(-map_fd));
		return 1;
	}
	for (i = 0; i < entries; i++)
		(void)put(map_fd,
		    i < stable ? ((uint64_t)STABLE_GPU << 32) | i :
				 ((uint64_t)(i % 3) << 32) | (100000 + i),
		    1 + i);

	printf("entries %u, %u walks each\n", entries, walks);
	printf("%-8s %-10s %12s %12s %12s\n", "writer", "walk", "us/walk",
	    "repeats", "missed");
	for (pass = 0; pass < 2; pass++) {
		uint64_t dup[3] = { 0 }, missed[3] = { 0 };
		int64_t ns[3] = { 0 };
		pthread_t th;
		int w;

		atomic_store(&stop, false);
		if (pass && pthread_create(&th, NULL, writer, NULL) != 0)
			return 1;
		for (i = 0; i < walks; i++) {
			for (w = 0; w < 3; w++) {
				int64_t t0 = clock_ns(CLOCK_MONOTONIC);
				size_t n;

				if (w == 0) {
					n = aosp_walk(map_fd, keys, cap);
				} else {
					struct gpumem_walk *k = &wk[w - 1];

					if (gpumem_map_walk(map_fd, 1024, k) <
					    0)
						return 1;
					n = k->n;
					memcpy(keys, k->key, n * sizeof(*keys));
				}
				ns[w] += clock_ns(CLOCK_MONOTONIC) - t0;
				score(keys, n, stable, &dup[w], &missed[w]);
			}
		}
		if (pass) {
			atomic_store(&stop, true);
			pthread_join(th, NULL);
		}
		for (w = 0; w < 3; w++)
			printf("%-8s %-10s %12.1f %12.2f %12.2f\n",
			    pass ? "on" : "off", name[w],
			    (double)ns[w] / walks / 1000.0,
			    (double)dup[w] / walks, (double)missed[w] / walks);
	}
	gpumem_walk_release(&wk[0]);
	gpumem_walk_release(&wk[1]);
	free(keys);
	close(map_fd);
	return 0;
}
