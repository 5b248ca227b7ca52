/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The text of a cgroup v2 group's files (Documentation/admin-guide/
 * cgroup-v2.rst): flat keyed files, one "key value" line each. Pure: bytes
 * in, a struct out. A key the kernel adds later is skipped; a key we keep
 * with a value that is not a number makes the whole file invalid, so a
 * garbled file never reads as zeros.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "core/util.h"

struct key_slot {
	const char *key;
	uint64_t *v;
	uint32_t bit; /* set in *seen when found */
};

/*
 * Each line of buf: "key value". Keys in keys[] get their value; *seen
 * gets the bits of those found. -EINVAL: a kept key without a number, or
 * a line without a space.
 */
static int
parse_flat(const char *buf, size_t len, const struct key_slot *keys,
    size_t nkeys, uint32_t *seen)
{
	const char *p = buf, *end = buf + len;
	char num[24];
	size_t i;

	*seen = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *sp = memchr(p, ' ', (size_t)(le - p));
		size_t kl, vl;

		if (le == p) { /* an empty line */
			p = le + 1;
			continue;
		}
		if (sp == NULL)
			return -EINVAL;
		kl = (size_t)(sp - p);
		vl = (size_t)(le - sp - 1);
		for (i = 0; i < nkeys; i++) {
			if (strlen(keys[i].key) != kl ||
			    memcmp(keys[i].key, p, kl) != 0)
				continue;
			if (vl == 0 || vl >= sizeof(num))
				return -EINVAL;
			memcpy(num, sp + 1, vl);
			num[vl] = '\0';
			if (parse_uint(num, UINT64_MAX, keys[i].v) < 0)
				return -EINVAL;
			*seen |= keys[i].bit;
			break;
		}
		p = le + 1;
	}
	return 0;
}

int
cg_parse_cpu_stat(const char *buf, size_t len, struct cg_read *r)
{
	const struct key_slot keys[] = {
		{ "usage_usec", &r->usage_us, 1 },
		{ "user_usec", &r->user_us, 2 },
		{ "system_usec", &r->system_us, 4 },
		{ "nr_periods", &r->nr_periods, 8 },
		{ "nr_throttled", &r->nr_throttled, 16 },
		{ "throttled_usec", &r->throttled_us, 32 },
	};
	uint32_t seen;
	int e;

	if ((e = parse_flat(buf, len, keys, 6, &seen)) < 0)
		return e;
	if ((seen & 7) != 7)
		return -EINVAL; /* every cgroup v2 group has these three */
	r->have |= CG_HAVE_CPU;
	if ((seen & 56) == 56)
		r->have |= CG_HAVE_THROTTLE;
	return 0;
}

int
cg_parse_memory_stat(const char *buf, size_t len, struct cg_read *r)
{
	uint64_t kstack = 0, slab = 0, percpu = 0;
	const struct key_slot keys[] = {
		{ "anon", &r->mem[CG_MEM_ANON], 1 },
		{ "file", &r->mem[CG_MEM_FILE], 2 },
		{ "kernel", &r->mem[CG_MEM_KERNEL], 4 },
		{ "shmem", &r->mem[CG_MEM_SHMEM], 8 },
		{ "pgfault", &r->pgfault, 16 },
		{ "pgmajfault", &r->pgmajfault, 32 },
		{ "kernel_stack", &kstack, 64 },
		{ "slab", &slab, 128 },
		{ "percpu", &percpu, 256 },
	};
	uint32_t seen;
	int e;

	if ((e = parse_flat(buf, len, keys, 9, &seen)) < 0)
		return e;
	if ((seen & (1 | 2 | 8 | 16 | 32)) != (1 | 2 | 8 | 16 | 32))
		return -EINVAL;
	if (!(seen & 4))
		r->mem[CG_MEM_KERNEL] = kstack + slab + percpu;
	r->have |= CG_HAVE_MEMSTAT;
	return 0;
}

int
cg_parse_memory_events(const char *buf, size_t len, struct cg_read *r)
{
	const struct key_slot keys[] = {
		{ "low", &r->events[CG_EV_LOW], 1 },
		{ "high", &r->events[CG_EV_HIGH], 2 },
		{ "max", &r->events[CG_EV_MAX], 4 },
		{ "oom", &r->events[CG_EV_OOM], 8 },
		{ "oom_kill", &r->events[CG_EV_OOM_KILL], 16 },
	};
	uint32_t seen;
	int e;

	if ((e = parse_flat(buf, len, keys, 5, &seen)) < 0)
		return e;
	if ((seen & 31) != 31)
		return -EINVAL;
	r->have |= CG_HAVE_EVENTS;
	return 0;
}

int64_t
cg_name_id(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	uint64_t v;

	if (strncmp(name, prefix, n) != 0 || name[n] < '0' || name[n] > '9')
		return -1;
	if (parse_uint(name + n, INT32_MAX, &v) < 0)
		return -1;
	return (int64_t)v;
}
