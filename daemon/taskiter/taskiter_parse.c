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
	t->first = t->nthreads = 0;
	t->leader = r->tid == r->tgid;
}

/*
 * Parse one iterator stream into s: every task as a thread, and per thread
 * group a process whose counters are what thread_group_cputime() and
 * do_task_stat() add up: the exited threads' share kept in signal_struct plus
 * every live thread's own. The stream must be whole records ending in the
 * end record; anything else is -EBADMSG. buf must be aligned for the
 * records (the daemon's read buffer is malloc'd): -EINVAL if it is not.
 */
int
taskiter_parse(const void *buf, size_t len, struct taskiter_snap *s)
{
	const struct taskiter_rec *recs = buf, *end;
	size_t n, i;
	uint32_t at;
	int r;

	s->nprocs = s->nthreads = s->ngone = 0;
	if ((uintptr_t)buf % _Alignof(struct taskiter_rec) != 0)
		return -EINVAL;
	if (len % sizeof(*recs) != 0 || len == 0)
		return -EBADMSG;
	n = len / sizeof(*recs) - 1;
	end = &recs[n];
	if (end->magic != TASKITER_MAGIC_END)
		return -EBADMSG;
	if ((r = snap_reserve(s, n ? n : 1)) < 0)
		return r;
	memset(s->hash, 0xff, s->hcap * sizeof(*s->hash));

	/* Pass 1: groups, chains of their threads, the sums. */
	for (i = 0; i < n; i++) {
		const struct taskiter_rec *rec = &recs[i];
		struct iter_task *p;
		uint32_t g;

		if (rec->tid <= 0 || rec->tgid <= 0)
			return -EBADMSG;
		if (rec->magic == TASKITER_MAGIC_GONE) {
			if ((r = snap_gone(s, rec)) < 0)
				return r;
			s->next[i] = UINT32_MAX;
			continue;
		}
		if (rec->magic != TASKITER_MAGIC)
			return -EBADMSG;
		if ((g = snap_group(s, rec->tgid)) == UINT32_MAX)
			return -ENOMEM;
		p = &s->procs[g];
		s->next[i] = p->first; /* reversed; put right in pass 2 */
		p->first = (uint32_t)i;
		p->nthreads++;
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

	/* Pass 2: each group's threads side by side, in iteration order. */
	at = 0;
	for (i = 0; i < s->nprocs; i++) {
		struct iter_task *p = &s->procs[i];
		uint32_t k = p->first, j = p->nthreads;

		p->first = at;
		at += p->nthreads;
		while (k != UINT32_MAX) {
			struct iter_task *t = &s->threads[p->first + --j];

			rec_to_task(&recs[k], t);
			/* threads share the mm: /proc prints its rss for each
			 */
			t->rss_pages = p->rss_pages;
			k = s->next[k];
		}
	}
	s->nthreads = at;
	return 0;
}
