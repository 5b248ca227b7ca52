/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall drain off the loop (doc/bpf.md, "Syscall latency"): the
 * loop takes the slow calls and flips the generation (sc_drain_begin, a
 * map update); a worker thread (core/worker.c) then waits out the grace
 * period the barrier takes (5-30 ms) and reads and deletes the old side
 * (two bpf() calls per entry), and the loop gets the part back through
 * the worker's eventfd. One drain at a time; while one runs, the loop
 * polls the ring buffer into the next window's list and nothing else.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/worker.h"
#include "syscalls/sc_collect.h"

struct sc_async {
	struct sc_collector *sc;
	struct worker *w;
	struct window_syscalls *p; /* the drain's part, the thread's while
				    * busy */
};

static int
sc_async_job(void *arg)
{
	struct sc_async *a = arg;

	a->p = sc_drain_end(a->sc, a->p);
	return a->p ? 0 : -ENOMEM;
}

int
sc_async_new(struct sc_collector *sc, struct sc_async **ret)
{
	struct sc_async *a;
	int r;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -ENOMEM;
	a->sc = sc;
	if ((r = worker_new(&a->w)) < 0) {
		free(a);
		return r;
	}
	*ret = a;
	return 0;
}

/* Waits for a running drain; its part is dropped. */
struct sc_async *
sc_async_free(struct sc_async *a)
{
	if (a == NULL)
		return NULL;
	a->w = worker_free(a->w);
	sc_collect_part_free(a->p);
	free(a);
	return NULL;
}

int
sc_async_fd(const struct sc_async *a)
{
	return worker_fd(a->w);
}

bool
sc_async_busy(const struct sc_async *a)
{
	return a != NULL && worker_busy(a->w);
}

int
sc_async_start(struct sc_async *a)
{
	if (worker_busy(a->w))
		return -EBUSY;
	a->p = sc_drain_begin(a->sc);
	return worker_start(a->w, sc_async_job, a);
}

int
sc_async_done(struct sc_async *a, bool wait, struct window_syscalls **ret_p)
{
	int r, jr;

	if ((r = worker_done(a->w, wait, &jr)) <= 0)
		return r;
	*ret_p = a->p;
	a->p = NULL;
	return 1;
}
