/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to sched.c (the loader) and sched_drain.c (the drain):
 * the loader handle and the maps of bpf/sched/sched.bpf.c by index. Only built
 * with BPF.
 */
#ifndef VITALSD_BPF_SCHED_INT_H
#define VITALSD_BPF_SCHED_INT_H

#include "sched/sched.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/sched/sched.bpf.h"

_Static_assert(VITALS_SCHED_RQ_SLOTS == VITALS_BPF_RQ_SLOTS, "rq slots");
/* layout 13 on: one cache line with the local storage's 8-byte header */
_Static_assert(sizeof(struct sched_task) == 56, "sched_task size");
_Static_assert(sizeof(struct sched_meta) == 32, "sched_meta size");
_Static_assert(TOT__MAX == VITALS_BPF_TOT, "cumulative counters");
_Static_assert(TOT_WTD_NOCAP == VBPF_TOT_WTD_NOCAP &&
	TOT_WTD_NOFREQ == VBPF_TOT_WTD_NOFREQ,
    "weighting counters");

/* Every map of the object, in pin-name order. */
enum sched_map {
	SM_CTL,
	SM_META,
	SM_BARRIER,
	SM_TASK,
	SM_TOT,
	SM_TID0,
	SM_TID1,
	SM_PROC0,
	SM_PROC1,
	SM_UID0,
	SM_UID1,
	SM_SCALE,
	SM_SLOT0, /* layout 11 */
	SM_SLOT1,
	SM_NSLOT,
	SM__MAX
};

struct ldr_snap;

struct bpf_sched {
	char *bpffs;
	int dirfd; /* the pin directory, flock()ed: one drainer only */
	unsigned state;
	int map_fd[SM__MAX];
	int prog_fd[VITALS_BPF_PROGS];
	unsigned ncpu;
	uint64_t gen;
	/* flipped ahead of the window's close (bpf_sched_flip_early): the
	 * close's own flip is that one */
	bool early;
	bool stats;
	uint64_t pre_ns; /* drained at open, reported with the first window */
	uint64_t tot[TOT__MAX]; /* at the last window */
	struct vbpf_prog_stat prog[VITALS_BPF_PROGS];
	struct bpf_sched_batch batch;
	void *kbuf, *vbuf;	  /* drain scratch */
	struct sched_slot *slots; /* the slots' drain scratch */
	size_t slots_cap;	  /* bytes */
	/* Per side: the lowest ready tag not drained yet (a side whose
	 * drain was skipped keeps its slots: the next drain takes both
	 * generations), slots [0, put) an earlier drain already put (it
	 * failed half-way, the count was not reset), the capacity. */
	uint64_t slot_tag[2];
	uint32_t slot_put[2];
	uint32_t slot_cap;
	/* SCHED_META_* of the programs this build loads, of those pinned
	 * (examine) and, once open, of those running */
	uint32_t meta_flags, pinned_flags;
	size_t kcap, vcap;
	bool no_batch; /* the kernel lacks batch ops: per-key reads */
	/* pins of the platform loader's object (sched_ldr.c) */
	bool ldr;
	int perf_fd[VITALS_BPF_PROGS]; /* the attachments: closing detaches */
	int link_fd[VITALS_BPF_PROGS];
	char *proc_root; /* where drained processes' start times are read */
	char *tracefs;	 /* NULL: the usual mounts */
	char *instance;	 /* vitalsd's tracefs instance, for the ids */
	/* its maps' last snapshot and the scratch for the next one: read
	 * only, the drain is their difference (sched_ldr.c) */
	struct ldr_snap *lsnap[2];
	/* sched_scale as last written; scale_valid false: write all */
	struct sched_scale scale[VITALS_SCHED_CPUS];
	bool scale_valid;
};

/* sched_ldr.c: the bpfloader-format object's pins (bpf/aosp/vitalsd.c) */
#define VITALS_LDR_OBJ "vitalsd"
int bpf_ldr_open(struct bpf_sched *bs, char *why, size_t whysz);
void bpf_ldr_close(struct bpf_sched *bs);
void bpf_ldr_release(struct bpf_sched *bs);
size_t bpf_ldr_bytes(const struct bpf_sched *bs);
int bpf_ldr_drain(struct bpf_sched *bs, struct bpf_sched_batch *b);
int bpf_sched_grow(void **p, size_t *cap, size_t want);
int bpf_sched_grow_arr(void **arr, size_t *cap, size_t elem);

#endif /* VITALSD_BPF_SCHED_INT_H */
