/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a GpuMem total map: open a pin read-only, check it has AOSP's
 * layout (or the same with an imported size beside the total), and walk
 * it. Only bpf() system calls, so the reader works in a build without
 * libbpf too.
 *
 * The walk reads the map a bucket range at a time with
 * BPF_MAP_LOOKUP_BATCH (Linux 5.6): the kernel copies whole buckets under
 * their lock and its cursor is a bucket index, so a key present for the
 * whole walk is always read, whatever a writer does meanwhile, and the
 * walk costs a few system calls instead of two per key. A key deleted from
 * one bucket and added to a later one may come twice: each key is taken
 * once (a set of those seen) and the second counted as a duplicate.
 *
 * A kernel without batch operations (EINVAL) gets the get-next-key walk,
 * a best-effort snapshot. A hash map's get-next-key starts
 * over from the first bucket when the cursor key has been deleted, so a
 * writer deleting entries under the walk makes keys come back: each key is
 * taken once (a set of those seen), a key returned again is counted, and
 * the walk is bounded in steps so a writer that never stops cannot keep
 * it going forever. A key that vanishes between get-next-key and the
 * lookup is counted and skipped. Worse, it can skip keys that stayed: an
 * element freed and reused in another bucket while the kernel reads its
 * next pointer sends the cursor into that bucket's chain, past the
 * buckets in between. The caller (gpumem.c) therefore looks up each key
 * it knew that a walk did not return before calling it deleted.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpumem/gpumem.h"

static int
sys_bpf(int cmd, union bpf_attr *attr)
{
	long r = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return r < 0 ? -errno : (int)r;
}

/*
 * 0 and the pair's value, -ENOENT when the key is gone. The kernel copies
 * value_size bytes (8 or 16, checked at open): ret always has room for 16.
 */
static int
map_lookup(int fd, uint64_t key, uint64_t ret[2])
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)ret;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
}

int
gpumem_map_lookup(int fd, uint64_t key, uint64_t ret[2])
{
	return map_lookup(fd, key, ret);
}

/* prev NULL: the first key. -ENOENT: no further key. */
static int
map_next(int fd, const uint64_t *prev, uint64_t *ret)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)prev;
	a.next_key = (uint64_t)(uintptr_t)ret;
	return sys_bpf(BPF_MAP_GET_NEXT_KEY, &a);
}

/*
 * 0 when fd is a HASH map with a u64 key and a value of GPUMEM_VAL_TOTAL
 * (AOSP's u64 total) or GPUMEM_VAL_IMPORTED bytes ({u64 total, u64
 * imported}: the gpu_mem_total tracepoint's size and imported_size, in the
 * event's order); -EPROTOTYPE for any other layout. The size comes from the
 * kernel's own record of the map, never guessed from the data.
 */
int
gpumem_map_layout(int fd, uint32_t *ret_capacity, uint32_t *ret_value_size)
{
	struct bpf_map_info info;
	union bpf_attr a;
	int r;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if ((r = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a)) < 0)
		return r;
	if (info.type != BPF_MAP_TYPE_HASH || info.key_size != 8 ||
	    (info.value_size != GPUMEM_VAL_TOTAL &&
		info.value_size != GPUMEM_VAL_IMPORTED) ||
	    info.max_entries == 0)
		return -EPROTOTYPE;
	*ret_capacity = info.max_entries;
	*ret_value_size = info.value_size;
	return 0;
}

/* 0 when fd is a HASH map of u64 → u64 (what the own program writes);
 * -EPROTOTYPE otherwise. */
int
gpumem_map_check(int fd, uint32_t *ret_capacity)
{
	uint32_t cap, vsz;
	int r;

	if ((r = gpumem_map_layout(fd, &cap, &vsz)) < 0)
		return r;
	if (vsz != GPUMEM_VAL_TOTAL)
		return -EPROTOTYPE;
	*ret_capacity = cap;
	return 0;
}

/*
 * The pin at path, read-only (GpuService opens it the same way). -ENOENT:
 * nothing pinned there; -EPROTOTYPE: a map of another layout.
 */
int
gpumem_map_open(const char *path, int *ret_fd, uint32_t *ret_capacity,
    uint32_t *ret_value_size)
{
	union bpf_attr a;
	uint32_t cap, vsz;
	int fd, r;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.file_flags = BPF_F_RDONLY;
	if ((fd = sys_bpf(BPF_OBJ_GET, &a)) < 0)
		return fd;
	if ((r = gpumem_map_layout(fd, &cap, &vsz)) < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	*ret_capacity = cap;
	*ret_value_size = vsz;
	return 0;
}

/* The keys seen so far: open addressing, a slot per key, own used flag
 * (key 0, GPU 0's global total, is a real key). */
struct seen {
	uint64_t *k;
	uint8_t *used;
	size_t mask, n;
};

static size_t
seen_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

/* true when k was there already; otherwise it is added */
static bool
seen_add(struct seen *s, uint64_t k)
{
	size_t i = seen_hash(k) & s->mask;

	for (; s->used[i]; i = (i + 1) & s->mask)
		if (s->k[i] == k)
			return true;
	s->used[i] = 1;
	s->k[i] = k;
	s->n++;
	return false;
}

static int
walk_push(struct gpumem_walk *wk, uint64_t k, const uint64_t v[2])
{
	bool imp = wk->value_size == GPUMEM_VAL_IMPORTED;

	if (wk->n == wk->cap || (imp && wk->imp == NULL)) {
		size_t cap = wk->n == wk->cap ? (wk->cap ? wk->cap * 2 : 64) :
						wk->cap;
		uint64_t *nk = realloc(wk->key, cap * sizeof(*nk)), *nv, *ni;

		if (nk == NULL)
			return -ENOMEM;
		wk->key = nk;
		if ((nv = realloc(wk->val, cap * sizeof(*nv))) == NULL)
			return -ENOMEM;
		wk->val = nv;
		/* the imported column only for maps that have one */
		if (imp) {
			if ((ni = realloc(wk->imp, cap * sizeof(*ni))) == NULL)
				return -ENOMEM;
			wk->imp = ni;
		}
		wk->cap = cap;
	}
	wk->key[wk->n] = k;
	if (imp)
		wk->imp[wk->n] = v[1];
	wk->val[wk->n++] = v[0];
	return 0;
}

/*
 * The get-next-key walk. At most capacity distinct keys exist at any
 * moment, but a writer may replace them while we walk: the walk stops
 * (truncated) after four times capacity steps, restarts included.
 */
static int
walk_next_key(int fd, size_t max_steps, struct gpumem_walk *wk, struct seen *s)
{
	uint64_t key, next, val[2];
	size_t steps = 0;
	bool again = false;
	int r;

	if ((r = map_next(fd, NULL, &key)) < 0)
		return r == -ENOENT ? 0 : r; /* ENOENT: empty */
	for (;;) {
		if (++steps > max_steps) {
			wk->truncated = true;
			return 0;
		}
		if (seen_add(s, key)) {
			/* Only a restart returns a key twice: the one before
			 * it was deleted under the cursor. */
			if (!again)
				wk->restarts++;
			again = true;
			wk->duplicates++;
		} else if ((r = map_lookup(fd, key, val)) == -ENOENT) {
			wk->vanished++;
		} else if (r < 0) {
			return r;
		} else if ((r = walk_push(wk, key, val)) < 0) {
			return r;
		} else {
			again = false;
		}
		if ((r = map_next(fd, &key, &next)) == -ENOENT)
			return 0;
		if (r < 0)
			return r;
		key = next;
	}
}

/*
 * The batch walk: capacity pairs per call at most, so a bucket (never
 * more than capacity keys) always fits. -EOPNOTSUPP: the kernel has no
 * batch operations for this map (first call only), walk another way.
 */
static int
walk_batch(int fd, uint32_t capacity, size_t max_keys, struct gpumem_walk *wk,
    struct seen *s)
{
	size_t words = wk->value_size == GPUMEM_VAL_IMPORTED ? 2 : 1, i;
	uint64_t token = 0, val[2] = { 0, 0 };
	union bpf_attr a;
	bool first = true;
	int r, rc;

	if (wk->bcap < capacity) {
		uint64_t *k = realloc(wk->bkey, capacity * sizeof(*k)), *v;

		if (k == NULL)
			return -ENOMEM;
		wk->bkey = k;
		v = realloc(wk->bval, capacity * words * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		wk->bval = v;
		wk->bcap = capacity;
	}
	for (;;) {
		memset(&a, 0, sizeof(a));
		a.batch.map_fd = (uint32_t)fd;
		a.batch.in_batch = first ? 0 : (uint64_t)(uintptr_t)&token;
		a.batch.out_batch = (uint64_t)(uintptr_t)&token;
		a.batch.keys = (uint64_t)(uintptr_t)wk->bkey;
		a.batch.values = (uint64_t)(uintptr_t)wk->bval;
		a.batch.count = capacity;
		rc = sys_bpf(BPF_MAP_LOOKUP_BATCH, &a);
		if (rc < 0 && rc != -ENOENT) {
			/* 524: the kernel's ENOTSUPP, never in errno.h */
			if (first &&
			    (rc == -EINVAL || rc == -EOPNOTSUPP || rc == -524 ||
				rc == -ENOSPC))
				return -EOPNOTSUPP;
			return rc;
		}
		for (i = 0; i < a.batch.count && i < capacity; i++) {
			/* keys moving to later buckets under a writer that
			 * never stops: bounded like the other walk */
			if (s->n >= max_keys) {
				wk->truncated = true;
				return 0;
			}
			val[0] = wk->bval[i * words];
			val[1] = words == 2 ? wk->bval[i * words + 1] : 0;
			if (seen_add(s, wk->bkey[i]))
				wk->duplicates++;
			else if ((r = walk_push(wk, wk->bkey[i], val)) < 0)
				return r;
		}
		if (rc == -ENOENT)
			return 0; /* the last buckets */
		first = false;
	}
}

/*
 * One walk, by batch where the kernel has it (wk->no_batch set once it
 * refused), else by get-next-key. wk is reused from walk to walk.
 */
int
gpumem_map_walk(int fd, uint32_t capacity, struct gpumem_walk *wk)
{
	size_t max_steps = 4 * (size_t)capacity + 16, size;
	struct seen s = { 0 };
	int r = -EOPNOTSUPP;

	wk->n = 0;
	wk->restarts = wk->vanished = wk->duplicates = 0;
	wk->truncated = false;
	wk->batch = false;
	/* every step adds at most one key, and a batch walk stops at
	 * max_steps keys: the set never fills */
	for (size = 64; size < 2 * max_steps; size *= 2)
		;
	s.mask = size - 1;
	s.k = malloc(size * sizeof(*s.k));
	s.used = calloc(size, 1);
	if (s.k == NULL || s.used == NULL) {
		r = -ENOMEM;
		goto out;
	}
	if (!wk->no_batch && capacity > 0) {
		r = walk_batch(fd, capacity, max_steps, wk, &s);
		if (r == 0)
			wk->batch = true;
	}
	if (r == -EOPNOTSUPP) {
		wk->no_batch = true;
		wk->n = 0;
		wk->duplicates = 0;
		wk->truncated = false;
		memset(s.used, 0, size);
		s.n = 0;
		r = walk_next_key(fd, max_steps, wk, &s);
	}
out:
	free(s.k);
	free(s.used);
	return r;
}

void
gpumem_walk_release(struct gpumem_walk *wk)
{
	free(wk->key);
	free(wk->val);
	free(wk->imp);
	free(wk->bkey);
	free(wk->bval);
	memset(wk, 0, sizeof(*wk));
}
