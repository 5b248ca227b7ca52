/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The task iterator's records grouped per thread group (taskiter.h,
 * taskiter_parse): the pure half of taskiter.c, built with or without BPF,
 * and the scratch tables it reuses from read to read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "taskiter/taskiter.h"
#include "../../bpf/taskiter/taskiter.bpf.h"

/* the scratch tables are cut back when a read needs under a quarter of
 * them (a partial read after a full walk), not below this many tasks */
#define TASKITER_SNAP_MIN 256

void
taskiter_snap_release(struct taskiter_snap *s)
{
	free(s->procs);
	free(s->threads);
	free(s->hash);
	free(s->next);
	free(s->gone);
	memset(s, 0, sizeof(*s));
}

static int
snap_reserve(struct taskiter_snap *s, size_t n)
{
	size_t hcap = 64;
	void *p;

	if (n <= s->cap)
		goto hash;
	n += n / 4;
	if ((p = realloc(s->threads, n * sizeof(*s->threads))) == NULL)
		return -ENOMEM;
	s->threads = p;
	if ((p = realloc(s->next, n * sizeof(*s->next))) == NULL)
		return -ENOMEM;
	s->next = p;
	s->cap = n;
hash:
	/* open addressing at most half full */
	while (hcap < 2 * n)
		hcap *= 2;
	if (hcap > s->hcap) {
		if ((p = realloc(s->hash, hcap * sizeof(*s->hash))) == NULL)
			return -ENOMEM;
		s->hash = p;
		s->hcap = hcap;
	}
	return 0;
}

/*
 * Cut the scratch tables back to n tasks (and their hash) when they hold
 * over four times that: a full walk's peak is not kept through the
 * partial reads after it. Failure keeps the larger tables.
 */
void
taskiter_snap_fit(struct taskiter_snap *s, size_t n)
{
	size_t keep = n + n / 4, hcap = 64;
	void *p;

	if (keep < TASKITER_SNAP_MIN)
		keep = TASKITER_SNAP_MIN;
	if (s->cap > 4 * keep) {
		if ((p = realloc(s->threads, keep * sizeof(*s->threads))) !=
		    NULL)
			s->threads = p;
		if ((p = realloc(s->next, keep * sizeof(*s->next))) != NULL)
			s->next = p;
		/* cap is the smaller of the two: one that failed to shrink
		 * is larger, still valid */
		s->cap = keep;
		while (hcap < 2 * keep)
			hcap *= 2;
		if (s->hcap > hcap &&
		    (p = realloc(s->hash, hcap * sizeof(*s->hash))) != NULL) {
			s->hash = p;
			s->hcap = hcap;
		}
	}
	/* processes: doubled from 64 as they come (snap_group) */
	if (s->pcap > 4 * keep &&
	    (p = realloc(s->procs, keep * sizeof(*s->procs))) != NULL) {
		s->procs = p;
		s->pcap = keep;
	}
}

/* Index of tgid's process in s->procs, adding it when new; UINT32_MAX: no
 * memory. */
static uint32_t
snap_group(struct taskiter_snap *s, int32_t tgid)
{
	size_t mask = s->hcap - 1;
	size_t i = ((uint32_t)tgid * 2654435769u) & mask;
	struct iter_task *p;

	for (;; i = (i + 1) & mask) {
		uint32_t k = s->hash[i];

		if (k == UINT32_MAX)
			break;
		if (s->procs[k].tgid == tgid)
			return k;
	}
	/* processes are a fraction of the tasks (500 of 2,100 in the
	 * benchmark): their table grows by doubling, not sized for all */
	if (s->nprocs == s->pcap) {
		size_t nc = s->pcap ? s->pcap * 2 : 64;

		if ((p = realloc(s->procs, nc * sizeof(*p))) == NULL)
			return UINT32_MAX;
		s->procs = p;
		s->pcap = nc;
	}
	p = &s->procs[s->nprocs];
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	p->tid = tgid;
	p->first = UINT32_MAX; /* head of its thread chain, see next[] */
	s->hash[i] = (uint32_t)s->nprocs;
	return (uint32_t)s->nprocs++;
}

/* A partial read's process wholly gone. */
static int
snap_gone(struct taskiter_snap *s, const struct taskiter_rec *rec)
{
	void *p;

	if (s->ngone == s->gcap) {
		size_t nc = s->gcap ? s->gcap * 2 : 16;

		if ((p = realloc(s->gone, nc * sizeof(*s->gone))) == NULL)
			return -ENOMEM;
		s->gone = p;
		s->gcap = nc;
	}
	s->gone[s->ngone].tgid = rec->tgid;
	s->gone[s->ngone].starttime = rec->start_ticks;
	s->ngone++;
	return 0;
}

static void
rec_to_task(const struct taskiter_rec *r, struct iter_task *t)
{
	memset(t, 0, sizeof(*t)); /* whole: comm's tail, the padding */
	t->tgid = r->tgid;
	t->tid = r->tid;
	t->uid = r->uid;
	t->flags = r->flags;
	/* The task's own bytes: the same rule as a name read from /proc. */
	(void)name_clean(t->comm, r->comm,
	    strnlen(r->comm, sizeof(t->comm) - 1));
	t->starttime = r->start_ticks;
	t->start_ns = r->start_ns;
	t->utime_ns = r->utime_ns;
	t->stime_ns = r->stime_ns;
	t->runtime_ns = r->runtime_ns;
	t->prev.utime = r->prev_utime_ns;
	t->prev.stime = r->prev_stime_ns;
	t->minflt = r->min_flt;
	t->majflt = r->maj_flt;
	t->rss_pages = r->rss_pages;
	t->leader = r->tid == r->tgid;
}

/* Room for n threads in the middle of a stream: the tables grown, the
 * hash rebuilt from the processes met so far. */
static int
snap_grow(struct taskiter_snap *s, size_t n)
{
	size_t k, mask;

	if (n <= s->cap)
		return 0;
	if (snap_reserve(s, n) < 0)
		return -ENOMEM;
	mask = s->hcap - 1;
	memset(s->hash, 0xff, s->hcap * sizeof(*s->hash));
	for (k = 0; k < s->nprocs; k++) {
		size_t i = ((uint32_t)s->procs[k].tgid * 2654435769u) & mask;

		while (s->hash[i] != UINT32_MAX)
			i = (i + 1) & mask;
		s->hash[i] = (uint32_t)k;
	}
	return 0;
}

/*
 * A stream parsed as it is read (taskiter.c reads a full walk a chunk at a
 * time, so the stream is never whole in memory beside these tables):
 * begin, feed its records in order (a record cut by a chunk's end comes
 * whole in the next feed), end. hint: the records expected (tables sized
 * once; more grow them). The stream must be whole records ending in the
 * end record; anything else is -EBADMSG.
 */
int
taskiter_parse_begin(struct taskiter_snap *s, size_t hint)
{
	int r;

	s->nprocs = s->nthreads = s->ngone = 0;
	s->ended = false;
	if ((r = snap_reserve(s, hint ? hint : 1)) < 0)
		return r;
	memset(s->hash, 0xff, s->hcap * sizeof(*s->hash));
	return 0;
}

/*
 * Pass 1, record by record: groups and their sums, and each thread copied
 * in stream order with its group (in first) and its rank in the group (in
 * next); pass 2 (taskiter_parse_end) puts them side by side. The group's
 * counters are what thread_group_cputime() and do_task_stat() add up: the
 * exited threads' share kept in signal_struct plus every live thread's own.
 */
int
taskiter_parse_feed(struct taskiter_snap *s, const struct taskiter_rec *recs,
    size_t n)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		const struct taskiter_rec *rec = &recs[i];
		struct iter_task *p, *t;
		uint32_t g;

		if (s->ended)
			return -EBADMSG; /* a record after the end */
		if (rec->magic == TASKITER_MAGIC_END) {
			s->ended = true;
			continue;
		}
		if (rec->tid <= 0 || rec->tgid <= 0)
			return -EBADMSG;
		if (rec->magic == TASKITER_MAGIC_GONE) {
			if ((r = snap_gone(s, rec)) < 0)
				return r;
			continue;
		}
		if (rec->magic != TASKITER_MAGIC)
			return -EBADMSG;
		if (s->nthreads >= UINT32_MAX - 1)
			return -E2BIG;
		if ((r = snap_grow(s, s->nthreads + 1)) < 0)
			return r;
		if ((g = snap_group(s, rec->tgid)) == UINT32_MAX)
			return -ENOMEM;
		p = &s->procs[g];
		t = &s->threads[s->nthreads];
		rec_to_task(rec, t);
		t->first = g;
		s->next[s->nthreads++] = p->nthreads++;
		p->utime_ns += rec->utime_ns;
		p->stime_ns += rec->stime_ns;
		p->runtime_ns += rec->runtime_ns;
		p->minflt += rec->min_flt;
		p->majflt += rec->maj_flt;
		if (rec->tid != rec->tgid)
			continue;
		p->leader = true;
		p->flags = rec->flags;
		p->uid = rec->uid;
		(void)name_clean(p->comm, rec->comm,
		    strnlen(rec->comm, sizeof(p->comm) - 1));
		p->starttime = rec->start_ticks;
		p->start_ns = rec->start_ns;
		p->rss_pages = rec->rss_pages;
		p->prev.utime = rec->sig_prev_utime_ns;
		p->prev.stime = rec->sig_prev_stime_ns;
		p->utime_ns += rec->sig_utime_ns;
		p->stime_ns += rec->sig_stime_ns;
		p->runtime_ns += rec->sig_runtime_ns;
		p->minflt += rec->sig_min_flt;
		p->majflt += rec->sig_maj_flt;
	}
	return 0;
}

/* Pass 2: each group's threads side by side, in iteration order (a
 * permutation in place: each swap puts one thread where it belongs), and
 * the group's mm for each (/proc prints its rss for every thread). */
int
taskiter_parse_end(struct taskiter_snap *s)
{
	uint32_t at = 0;
	size_t i;

	if (!s->ended)
		return -EBADMSG;
	for (i = 0; i < s->nprocs; i++) {
		s->procs[i].first = at;
		at += s->procs[i].nthreads;
	}
	for (i = 0; i < s->nthreads; i++)
		s->next[i] += s->procs[s->threads[i].first].first;
	for (i = 0; i < s->nthreads; i++) {
		while (s->next[i] != i) {
			uint32_t d = s->next[i];
			struct iter_task t = s->threads[d];

			s->threads[d] = s->threads[i];
			s->threads[i] = t;
			s->next[i] = s->next[d];
			s->next[d] = d;
		}
	}
	for (i = 0; i < s->nthreads; i++) {
		struct iter_task *t = &s->threads[i];

		t->rss_pages = s->procs[t->first].rss_pages;
		t->first = 0;
	}
	return 0;
}

/*
 * Parse one whole iterator stream into s (the partial reads' taskiter_out,
 * the tests): every task as a thread, and per thread group a process. buf
 * must be aligned for the records (the daemon's buffers are): -EINVAL if
 * it is not.
 */
int
taskiter_parse(const void *buf, size_t len, struct taskiter_snap *s)
{
	const struct taskiter_rec *recs = buf;
	size_t n;
	int r;

	s->nprocs = s->nthreads = s->ngone = 0;
	if ((uintptr_t)buf % _Alignof(struct taskiter_rec) != 0)
		return -EINVAL;
	if (len % sizeof(*recs) != 0 || len == 0)
		return -EBADMSG;
	n = len / sizeof(*recs);
	if (recs[n - 1].magic != TASKITER_MAGIC_END)
		return -EBADMSG;
	if ((r = taskiter_parse_begin(s, n > 1 ? n - 1 : 1)) < 0 ||
	    (r = taskiter_parse_feed(s, recs, n)) < 0)
		return r;
	return taskiter_parse_end(s);
}
