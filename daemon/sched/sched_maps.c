/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What both drains of the sched_switch accounting use (the generation
 * flip of sched_drain.c and the read-only snapshot difference of
 * sched_ldr.c): growing the buffers a drain reads into, and the kernel's
 * cumulative counters summed over CPUs. Below both, so neither calls the
 * other's file for them.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/util.h"
#include "sched/sched.h"

#ifdef HAVE_BPF
#include "sched_int.h"

int
bpf_sched_grow(void **p, size_t *cap, size_t want)
{
	void *n;

	if (want <= *cap)
		return 0;
	if ((n = realloc(*p, want)) == NULL)
		return -ENOMEM;
	*p = n;
	*cap = want;
	return 0;
}

int
bpf_sched_grow_arr(void **arr, size_t *cap, size_t elem)
{
	size_t nc = *cap ? *cap * 2 : 256, bytes = *cap * elem;
	int r;

	if ((r = bpf_sched_grow(arr, &bytes, nc * elem)) < 0)
		return r;
	*cap = nc;
	return 0;
}

static int
read_tot(struct bpf_sched *bs, uint64_t ret[TOT__MAX])
{
	uint64_t *v;
	uint32_t i;
	unsigned c;

	if ((v = calloc(bs->ncpu, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < TOT__MAX; i++) {
		if (bpf_map_lookup_elem(bs->map_fd[SM_TOT], &i, v) < 0) {
			int r = -errno;

			free(v);
			return r;
		}
		ret[i] = 0;
		for (c = 0; c < bs->ncpu; c++)
			ret[i] += v[c];
	}
	free(v);
	return 0;
}

int
bpf_sched_totals(struct bpf_sched *bs, uint64_t ret[VITALS_BPF_TOT])
{
	return read_tot(bs, ret);
}

#else /* !HAVE_BPF */

int
bpf_sched_totals(struct bpf_sched *bs, uint64_t ret[VITALS_BPF_TOT])
{
	(void)bs;
	(void)ret;
	return -EOPNOTSUPP;
}

#endif /* HAVE_BPF */
