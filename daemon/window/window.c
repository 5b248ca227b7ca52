/* SPDX-License-Identifier: Apache-2.0 */
/* Window objects: allocation, task lists, gauges and the names of enums. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"
#include "window/window.h"

struct window *
window_new(uint64_t seq, unsigned cpu_span)
{
	struct window *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->seq = seq;
	if (window_grow_cpus(w, cpu_span) < 0) {
		free(w);
		return NULL;
	}
	return w;
}

struct window *
window_free(struct window *w)
{
	unsigned i, more;

	if (w == NULL)
		return NULL;
	/* another owner left: its reads end before its window_free (the
	 * release), the last one's free after them (the acquire) */
	more = atomic_load_explicit(&w->owners_more, memory_order_acquire);
	while (more > 0)
		if (atomic_compare_exchange_weak_explicit(&w->owners_more,
			&more, more - 1, memory_order_acq_rel,
			memory_order_acquire))
			return NULL;
	free(w->cpu);
	free(w->procs);
	free(w->threads);
	for (i = 0; i < WPART__MAX; i++)
		if (w->part[i] != NULL)
			window_parts[i]->free(w->part[i]);
	free(w);
	return NULL;
}

struct window *
window_share(const struct window *w)
{
	struct window *s = (struct window *)w;

	if (s != NULL)
		atomic_fetch_add_explicit(&s->owners_more, 1,
		    memory_order_relaxed);
	return s;
}

/* A deep copy, owned alone. */
struct window *
window_dup(const struct window *w)
{
	struct window *c;
	unsigned i;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	*c = *w;
	atomic_init(&c->owners_more, 0);
	c->cpu = NULL;
	c->procs = NULL;
	c->threads = NULL;
	c->procs_cap = w->nprocs;
	c->threads_cap = w->nthreads;
	memset(c->part, 0, sizeof(c->part));
	if (w->cpu_span &&
	    (c->cpu = malloc(w->cpu_span * sizeof(*c->cpu))) == NULL)
		goto fail;
	if (w->nprocs &&
	    (c->procs = malloc(w->nprocs * sizeof(*c->procs))) == NULL)
		goto fail;
	if (w->nthreads &&
	    (c->threads = malloc(w->nthreads * sizeof(*c->threads))) == NULL)
		goto fail;
	if (w->cpu_span)
		memcpy(c->cpu, w->cpu, w->cpu_span * sizeof(*c->cpu));
	if (w->nprocs)
		memcpy(c->procs, w->procs, w->nprocs * sizeof(*c->procs));
	if (w->nthreads)
		memcpy(c->threads, w->threads,
		    w->nthreads * sizeof(*c->threads));
	for (i = 0; i < WPART__MAX; i++)
		if (w->part[i] != NULL &&
		    (c->part[i] = window_parts[i]->dup(w->part[i])) == NULL)
			goto fail;
	return c;
fail:
	return window_free(c);
}

/* Heap bytes w holds: the struct, its arrays and its parts. */
size_t
window_bytes(const struct window *w)
{
	size_t n = sizeof(*w) + (size_t)w->cpu_span * sizeof(*w->cpu) +
	    w->procs_cap * sizeof(*w->procs) +
	    w->threads_cap * sizeof(*w->threads);
	unsigned i;

	for (i = 0; i < WPART__MAX; i++)
		if (w->part[i] != NULL)
			n += window_parts[i]->bytes(w->part[i]);
	return n;
}

/*
 * w's bytes as the query budget counts them: window_bytes() with each row
 * still charged its name inline (VITALS_NAME_LEN, as before the names
 * left the row). A row carries its name into an answer, so a budget's
 * page of windows, and what its answer costs, stay what they were while
 * a loaded window holds less.
 */
size_t
window_budget_bytes(const struct window *w)
{
	return window_bytes(w) +
	    (w->procs_cap + w->threads_cap) *
	    (VITALS_NAME_LEN - sizeof(((struct window_task *)0)->name_));
}

/* New CPUs start as "unknown": max_khz and capacity −1 until read. */
int
window_grow_cpus(struct window *w, unsigned cpu_span)
{
	struct window_cpu *c;
	unsigned i;

	if (cpu_span <= w->cpu_span)
		return 0;
	if (cpu_span > VITALS_CPU_MAX)
		return -E2BIG;
	c = realloc(w->cpu, cpu_span * sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	for (i = w->cpu_span; i < cpu_span; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].max_khz = -1;
		c[i].capacity = -1;
	}
	w->cpu = c;
	w->cpu_span = cpu_span;
	return 0;
}

int
window_add_task(struct window *w, bool thread, const struct window_task *t)
{
	struct window_task **arr = thread ? &w->threads : &w->procs;
	size_t *n = thread ? &w->nthreads : &w->nprocs;
	size_t *cap = thread ? &w->threads_cap : &w->procs_cap;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct window_task *p = realloc(*arr, ncap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		*arr = p;
		*cap = ncap;
	}
	(*arr)[(*n)++] = *t;
	return 0;
}

/*
 * A closed window's task arrays cut to what they hold: they grew by
 * doubling while it was open (a quarter spare on average) and it stays in
 * the ring for ring × window_s. A failed realloc keeps the larger array.
 */
void
window_shrink(struct window *w)
{
	struct window_task *p;

	if (w->nprocs < w->procs_cap && w->nprocs > 0 &&
	    (p = realloc(w->procs, w->nprocs * sizeof(*p))) != NULL) {
		w->procs = p;
		w->procs_cap = w->nprocs;
	}
	if (w->nthreads < w->threads_cap && w->nthreads > 0 &&
	    (p = realloc(w->threads, w->nthreads * sizeof(*p))) != NULL) {
		w->threads = p;
		w->threads_cap = w->nthreads;
	}
}

const char *
invalid_name(enum vitals_invalid r)
{
	static const char *const names[INV__MAX] = {
		[INV_SLEPT] = "slept",
		[INV_NO_ADVANCE] = "no_advance",
		[INV_REGRESSION] = "regression",
		[INV_READ_FAILED] = "read_failed",
		[INV_PARSE] = "parse",
		[INV_VANISHED] = "vanished",
		[INV_IDENTITY] = "identity",
		[INV_HOTPLUG] = "hotplug",
	};

	return (unsigned)r < INV__MAX ? names[r] : "?";
}

const char *
coll_name(enum vitals_coll c)
{
	static const char *const names[COLL__MAX] = {
		[COLL_STAT] = "stat",
		[COLL_LOADAVG] = "loadavg",
		[COLL_PSI] = "psi",
		[COLL_VMSTAT] = "vmstat",
		[COLL_MEMINFO] = "meminfo",
		[COLL_CPUFREQ] = "cpufreq",
		[COLL_PROCS] = "procs",
	};

	return (unsigned)c < COLL__MAX ? names[c] : "?";
}

const char *
psi_res_name(enum psi_res r)
{
	static const char *const names[PSI__MAX] = {
		[PSI_CPU] = "cpu",
		[PSI_MEMORY] = "memory",
		[PSI_IO] = "io",
	};

	return (unsigned)r < PSI__MAX ? names[r] : "?";
}
