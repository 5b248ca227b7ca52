/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the ATrace tracker (atrace.c: records in; atrace_tab.c: its
 * hash tables; atrace_window.c: the figures at a window's close): the
 * tracker's state and the tables it keeps them in.
 */
#ifndef VITALSD_ATRACE_INT_H
#define VITALSD_ATRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/*
 * Open addressing with linear probing; every entry begins with its hash
 * (0: empty). Deletion shifts the run back, so no tombstones.
 */
struct tab {
	char *e;
	size_t esz, cap, n, max;
};

typedef bool (*tab_eq)(const void *e, const void *key);

/* atrace_tab.c */
uint64_t atab_key(int32_t a, int32_t b, int64_t c, const char *name);
void *atab_at(const struct tab *t, size_t i);
uint64_t atab_hash(const struct tab *t, size_t i);
void *atab_get(struct tab *t, uint64_t h, tab_eq eq, const void *key, bool add,
    bool *ret_new);
void atab_del(struct tab *t, void *e);
void atab_clear(struct tab *t);
void atab_release(struct tab *t);

/* The tracker's entries: each begins with its hash. */
struct open_slice {
	uint64_t ts;
	int32_t tgid;
	char name[VITALS_TRACE_NAME];
};

struct thread_ent {
	uint64_t h;
	int32_t tid;
	uint32_t depth; /* open B slices, also those beyond the kept stack */
	uint32_t stack_cap; /* entries stack has room for */
	uint64_t wake_ts;   /* runnable since (wakeup, preemption); 0 none */
	struct open_slice *stack; /* VITALS_TRACE_DEPTH entries, lazily */
};

struct async_ent {
	uint64_t h;
	int32_t tgid;
	uint8_t kind; /* TRACE_ASYNC or TRACE_TRACK */
	int64_t cookie;
	char key[VITALS_TRACE_NAME]; /* name (S/F) or track (G/H) */
	char name[VITALS_TRACE_NAME];
	uint64_t ts;
	int32_t tid;
};

struct slice_ent {
	uint64_t h;
	struct window_trace_slice s;
};

struct counter_ent {
	uint64_t h;
	struct window_trace_counter c;
};

struct binder_ent {
	uint64_t h;
	struct window_trace_binder b;
};

struct rq_ent {
	uint64_t h;
	struct window_trace_rq r;
};

struct gpu_ent {
	uint64_t h;
	struct window_trace_gpu g;
};

/* CPUs whose running thread the run-queue tracker follows (more: a
 * wakeup of a thread running there is not recognised as such, and only
 * its switch-out, which restarts or clears its wait, puts it right). */
#define ATRACE_CPUS 256

struct atrace {
	struct tab threads, async, slices, counters, binder, rq, gpu;
	/* the thread each CPU runs, as its last sched_switch said; −1:
	 * not known (no switch seen since the start or a loss) */
	int32_t cur[ATRACE_CPUS];
	unsigned ncur; /* CPUs seen: cur[0 .. ncur) */
	/* scalar figures of the open window: a head-only part
	 * (WINDOW_TRACE_HEAD bytes), as ftrace's acc */
	struct window_trace *w;
	int32_t (*tgid_fn)(int32_t tid, void *arg);
	void *tgid_arg;
	ftrace_gpu_mem_fn gpu_fn;
	void *gpu_arg;
	struct binder *bl; /* transaction pairing (binder.c) */
	struct phase *ph;  /* fault phases (phase.c); NULL: off */
};

/* atrace.c: a thread's entry and its stack gone */
void atrace_thread_forget(struct atrace *at, struct thread_ent *t);

#endif /* VITALSD_ATRACE_INT_H */
