/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF rows a version-2 wcpu payload may name (store_wcpu.c), shared by
 * fuzz_store_blob (it decodes every part 12 frame against them) and
 * gen_store_blob (its seeds name them): two processes, three threads and
 * the "other" rows, which no payload names.
 */
#ifndef VITALSD_FUZZ_WCPU_REF_H
#define VITALSD_FUZZ_WCPU_REF_H

#include "sched/sched.h"
#include "store/store.h"

static const struct window_bpf_proc wcpu_procs[] = {
	{ .tgid = -1, .oncpu_ns = 9 },
	{ .tgid = 100, .starttime = 100, .oncpu_ns = 440000000 },
	{ .tgid = 200, .starttime = 300, .oncpu_ns = 50000000 },
};
static const struct window_bpf_thread wcpu_threads[] = {
	{ .tid = 100, .tgid = 100, .starttime = 100, .oncpu_ns = 300000000 },
	{ .tid = -1, .tgid = -1, .oncpu_ns = 9 },
	{ .tid = 101, .tgid = 100, .starttime = 200, .oncpu_ns = 100000000 },
	{ .tid = 200, .tgid = 200, .starttime = 300, .oncpu_ns = 50000000 },
};
static const struct store_wcpu_ref wcpu_ref = { wcpu_procs, 3, wcpu_threads, 4,
	NULL };

#endif /* VITALSD_FUZZ_WCPU_REF_H */
