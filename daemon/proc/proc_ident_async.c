/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process's identity read off the loop (issue 20): the scan queues the
 * (pid, starttime) of a new or renamed process; a worker thread
 * (core/worker.c) reads its cmdline (and status when the uid is not known)
 * and the answers come back through the worker's eventfd on the loop,
 * which sets a name only on the very instance it was asked for. One read
 * of cmdline can sleep for milliseconds (the target's mmap_lock, held by
 * its fork or exec: bench/README.md "What the tick does at 2,100 tasks")
 * and a file that never answers (a stuck FUSE-like mount, a test's FIFO)
 * would hold the loop for good; here it holds only the worker.
 *
 * Ownership: q[] (waiting) is the loop's; job[] (a batch) is the worker's
 * from worker_start until worker_done, then the loop's again. The worker
 * reads through procfd (the scan's directory fd, not written by either)
 * and its own buffer. A full queue refuses the request, counted
 * (ident_full): the comm stands for the instance (as when a read fails)
 * until a later scan finds room and asks again (task.ident_retry).
 *
 * The answer's instance: the worker opens /proc/<pid> first and reads its
 * stat through that directory; a pid reused meanwhile is another
 * directory on a real procfs (the one opened answers ESRCH for its files),
 * so every file read is of one instance, and a starttime other than the
 * one asked for is no answer. The loop then sets the name only when its
 * table's instance of pid still has that starttime and was not asked
 * about again since (its ident_gen: a rename, an exec the answer may
 * predate), else ident_stale: a name never lands on another instance,
 * nor an old name on a process that exec'd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/loopstat.h"
#include "core/worker.h"
#include "proc/proc.h"
#include "proc_scan_int.h"

/* How long a stop waits for a read under way (ident_async_free). */
#define IDENT_STOP_MS 1000

struct ident_req {
	int32_t pid;
	bool want_uid; /* status read for the uid */
	bool have_uid; /* answer: uid holds it */
	uint64_t starttime;
	uint32_t gen; /* the task's ident_gen when asked */
	uint32_t uid;
	int r; /* answer: 0 name holds it, else −errno */
	char name[VITALS_NAME_LEN];
};

struct ident_async {
	struct procscan *ps;
	struct worker *wk;
	struct event *ev;
	int procfd;
	unsigned cap;
	struct ident_req *q; /* waiting: the loop's */
	unsigned nq;
	struct ident_req *job; /* the batch: the worker's while busy */
	unsigned njob;
	struct vbuf buf;  /* the worker's */
	atomic_bool quit; /* the rest of a batch is not read (free) */
};

/* On the worker: one request's files, through the process's directory. */
static void
ident_read(struct ident_async *ia, struct ident_req *q)
{
	struct pid_status status;
	struct pid_stat st;
	char path[16];
	int dfd;

	snprintf(path, sizeof(path), "%d", (int)q->pid);
	if ((dfd = openat(ia->procfd, path,
		 O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		q->r = errno == ENOENT ? -ESRCH : -errno;
		return;
	}
	if (read_at(dfd, "stat", &ia->buf) < 0 || ia->buf.len == 0 ||
	    pidstat_parse(ia->buf.p, ia->buf.len, &st) < 0 ||
	    st.starttime != q->starttime) {
		q->r = -ESRCH; /* gone, or another instance already */
		goto out;
	}
	if (q->want_uid && read_at(dfd, "status", &ia->buf) == 0 &&
	    pidstatus_parse(ia->buf.p, ia->buf.len, &status) == 0) {
		q->uid = status.uid;
		q->have_uid = true;
	}
	q->r = proc_cmdline_name_at(dfd, "cmdline", &ia->buf, q->name,
	    sizeof(q->name));
out:
	close(dfd);
}

static int
ident_job(void *arg)
{
	struct ident_async *ia = arg;
	unsigned i;

	for (i = 0; i < ia->njob; i++) {
		if (atomic_load(&ia->quit)) {
			ia->job[i].r = -ECANCELED;
			continue;
		}
		ident_read(ia, &ia->job[i]);
	}
	return 0;
}

/* The waiting requests become the worker's batch. */
static void
ident_kick(struct ident_async *ia)
{
	struct ident_req *t;

	if (ia->nq == 0 || worker_busy(ia->wk))
		return;
	t = ia->job;
	ia->job = ia->q;
	ia->q = t;
	ia->njob = ia->nq;
	ia->nq = 0;
	if (worker_start(ia->wk, ident_job, ia) < 0) {
		/* cannot happen while not busy; the batch goes back */
		t = ia->job;
		ia->job = ia->q;
		ia->q = t;
		ia->nq = ia->njob;
		ia->njob = 0;
	}
}

/* On the loop: one answer, to the instance it was asked for or none. */
static void
ident_apply(struct procscan *ps, const struct ident_req *q)
{
	struct task *p = ht_get(&ps->procs, q->pid), *t;

	if (q->r == -ECANCELED)
		return;
	ps->id_done++;
	/* gone, another instance, or asked again since (renamed: an exec
	 * keeps the starttime, and this read may be from before it) */
	if (p == NULL || p->wt.starttime != q->starttime ||
	    p->ident_gen != q->gen || q->r == -ESRCH) {
		ps->id_stale++;
		return;
	}
	if (q->have_uid) {
		p->wt.uid = q->uid;
		for (t = p->threads; t; t = t->tnext)
			t->wt.uid = q->uid;
	}
	free(p->name);
	p->name = NULL;
	/* none, or the comm again: the comm stands for it; ENOMEM too */
	if (q->r == 0 && strcmp(q->name, p->wt.comm) != 0)
		p->name = strdup(q->name);
}

/* The finished batch, applied; the next one started. 1: one was. */
static int
ident_take(struct ident_async *ia, bool wait)
{
	unsigned i;
	int r;

	if (!worker_busy(ia->wk) || worker_done(ia->wk, wait, &r) <= 0)
		return 0;
	for (i = 0; i < ia->njob; i++)
		ident_apply(ia->ps, &ia->job[i]);
	ia->njob = 0;
	ident_kick(ia);
	return 1;
}

static void
ident_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ident_async *ia = arg;
	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	(void)ident_take(ia, false);
	loopstat_end("identities", t0);
}

bool
ident_queue(struct procscan *ps, const struct task *t, bool want_uid)
{
	struct ident_async *ia = ps->ia;
	struct ident_req *q;
	unsigned i;

	/* asked already and not yet read: the read to come answers both */
	for (i = 0; i < ia->nq; i++)
		if (ia->q[i].pid == t->wt.id &&
		    ia->q[i].starttime == t->wt.starttime) {
			ia->q[i].want_uid |= want_uid;
			ia->q[i].gen = t->ident_gen;
			return true;
		}
	if (ia->nq >= ia->cap) {
		ps->id_full++;
		return false;
	}
	q = &ia->q[ia->nq++];
	memset(q, 0, offsetof(struct ident_req, name));
	q->pid = t->wt.id;
	q->starttime = t->wt.starttime;
	q->gen = t->ident_gen;
	q->want_uid = want_uid;
	ps->id_queued++;
	ident_kick(ia);
	return true;
}

bool
ident_room(const struct procscan *ps)
{
	return ps->ia != NULL && ps->ia->nq < ps->ia->cap;
}

uint32_t
ident_pending(const struct procscan *ps)
{
	return ps->ia ? ps->ia->nq + ps->ia->njob : 0;
}

void
ident_async_free(struct procscan *ps)
{
	struct ident_async *ia = ps->ia;

	if (ia == NULL)
		return;
	/* the read under way ends (a file that never answers holds this
	 * as it would have held the loop), the rest of its batch is not
	 * read */
	atomic_store(&ia->quit, true);
	if (ia->ev)
		event_free(ia->ev);
	ia->ev = NULL;
	if (!worker_free_within(ia->wk, IDENT_STOP_MS)) {
		/* one read never came back (a FIFO, a stuck mount): the
		 * thread keeps the batch and the buffer, for good */
		log_warnx("identities: a read still blocked after %u ms at "
			  "stop: left to the thread",
		    IDENT_STOP_MS);
		ps->ia = NULL;
		return;
	}
	ia->wk = NULL;
	vbuf_release(&ia->buf);
	free(ia->q);
	free(ia->job);
	free(ia);
	ps->ia = NULL;
}

int
procscan_ident_async(struct procscan *ps, struct event_base *base,
    unsigned qmax)
{
	struct ident_async *ia;
	int r;

	if (ps->ia != NULL)
		return 0;
	if (base == NULL)
		return -EINVAL;
	if ((ia = calloc(1, sizeof(*ia))) == NULL)
		return -ENOMEM;
	ia->ps = ps;
	ia->procfd = ps->procfd;
	ia->cap = qmax ? qmax : VITALS_IDENT_QUEUE_DEF;
	atomic_init(&ia->quit, false);
	ps->ia = ia;
	if ((ia->q = calloc(ia->cap, sizeof(*ia->q))) == NULL ||
	    (ia->job = calloc(ia->cap, sizeof(*ia->job))) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = worker_new(&ia->wk)) < 0)
		goto fail;
	if ((ia->ev = event_new(base, worker_fd(ia->wk), EV_READ | EV_PERSIST,
		 ident_done_cb, ia)) == NULL ||
	    event_add(ia->ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	return 0;
fail:
	ident_async_free(ps);
	return r;
}

int
procscan_ident_settle(struct procscan *ps, bool wait)
{
	return ps->ia ? ident_take(ps->ia, wait) : 0;
}
