/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What is read of the process scan without scanning: the processes a
 * hiding procfs kept from it (counted at window close), and the live
 * instances the last scan knew (attribution, the exporter).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc.h"
#include "proc_scan_int.h"

/*
 * Hidden processes (proc_hidden.c). The mount is looked at once, in the
 * setup phase, and the cgroup root opened then; the count itself runs at
 * window close against the last scan, and only when the mount hides.
 */
int
procscan_watch_hidden(struct procscan *ps, const char *sys_root)
{
	int r;

	if ((r = prochidden_detect(ps->procfd, &ps->hiding)) < 0)
		return r;
	if (!ps->hiding)
		return 0;
	if ((ps->cgfd = prochidden_cgroup_open(sys_root)) < 0) {
		ps->cg_err = -ps->cgfd;
		ps->cgfd = -1;
	}
	return 0;
}

static bool
scan_saw(int32_t pid, void *arg)
{
	struct procscan *ps = arg;
	struct task *p = ht_get(&ps->procs, pid);

	return p != NULL && p->seen_gen == ps->gen;
}

void
procscan_count_hidden(struct procscan *ps, struct window *w)
{
	uint32_t n;

	w->health.procs_unseen = 0;
	if (!ps->hiding || (ps->have_last && ps->last == SCANNER_BPF)) {
		w->health.unseen_state = UNSEEN_NONE_HIDDEN;
		return;
	}
	if (ps->cgfd < 0 ||
	    prochidden_count(ps->cgfd, ps->procfd, scan_saw, ps, &n) < 0) {
		w->health.unseen_state = UNSEEN_UNKNOWN;
		return;
	}
	w->health.unseen_state = UNSEEN_COUNTED;
	w->health.procs_unseen = n;
}

/*
 * The process instance the last scan knew as pid (GPU memory attribution):
 * 0 with its starttime and name, -ESRCH when there is none. A process that
 * ended since that scan is still returned; the next scan retires it.
 */
int
procscan_lookup(const struct procscan *ps, int32_t pid, uint64_t *ret_starttime,
    char *ret_name, size_t namesz)
{
	const struct task *t = ht_get(&ps->procs, pid);

	if (t == NULL)
		return -ESRCH;
	*ret_starttime = t->wt.starttime;
	if (namesz)
		snprintf(ret_name, namesz, "%s",
		    task_name(t)[0] ? task_name(t) : t->wt.comm);
	return 0;
}

void
procscan_each(const struct procscan *ps, procscan_each_fn fn, void *arg)
{
	struct procscan_proc p;
	const struct task *t;
	size_t i;

	for (i = 0; i < ps->procs.nb; i++) {
		for (t = ps->procs.b[i]; t; t = t->hnext) {
			p.pid = t->wt.id;
			p.starttime = t->wt.starttime;
			p.comm = t->wt.comm;
			p.utime = t->utime;
			p.stime = t->stime;
			p.minflt = t->minflt;
			p.majflt = t->majflt;
			p.rss_pages = t->wt.rss_pages_last;
			fn(&p, arg);
		}
	}
}

uint64_t
procscan_out_bytes(const struct procscan *ps)
{
	return ps != NULL ? taskiter_out_bytes(ps->ti) : 0;
}

/*
 * The task table's heap: a record per known task, the hash buckets, the
 * read buffer and the iterator's (Health.memory). Counted from the sizes
 * the scan allocated, so it is what it holds, not what malloc rounded to.
 */
uint64_t
procscan_bytes(const struct procscan *ps, uint32_t *ret_tasks)
{
	const struct task *t;
	size_t n, i, names = 0;
	uint64_t ti_bytes;

	if (ps == NULL) {
		*ret_tasks = 0;
		return 0;
	}
	n = ps->procs.n + ps->threads.n;
	*ret_tasks = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	/* the processes' names kept apart (struct task, name) */
	for (i = 0; i < ps->procs.nb; i++)
		for (t = ps->procs.b[i]; t; t = t->hnext)
			if (t->name != NULL)
				names += strlen(t->name) + 1;
	/* a walk on the worker owns the iterator's buffers: their size
	 * when it started */
	if (!walk_async_bytes(ps, &ti_bytes))
		ti_bytes = taskiter_bytes(ps->ti);
	return sizeof(*ps) + n * sizeof(struct task) + names +
	    (ps->procs.nb + ps->threads.nb) * sizeof(struct task *) +
	    ps->buf.cap + ti_bytes;
}
