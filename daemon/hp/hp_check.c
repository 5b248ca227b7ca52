/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The trace's verdict on a session whose perfetto exited 0 (hp_trace.c
 * decodes), taken off the event loop: a trace is read whole, field by
 * field at its dump level — ~140 ms for 62 MB here — and the loop does no
 * blocking I/O. The file is opened on the loop (an expiry pass may unlink
 * it meanwhile: the open fd keeps it), a thread of its own checks it and
 * says so on an eventfd the loop watches; the record is put then. One
 * check at a time: a session that ends while one runs (a very short one
 * after a very long trace) is checked on the spot. A stopping daemon
 * waits for the running check. doc/heapprofd.md, "Checked profiles".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loopstat.h"
#include "core/util.h"
#include "hp/hp.h"
#include "hp_int.h"

struct hp_check {
	struct heapprofd *hp;
	struct hp_record rec;
	struct hp_want want;
	int fd, efd;
	struct event *ev;
	pthread_t th;
	bool busy; /* a thread runs, or its answer waits for the loop */
	struct hp_trace_verdict v;
	int64_t ns;
};

/* The verdict into the record: outcome, evidence, counters; then it is
 * put, and the directory's expiry pass runs. */
static void
finish(struct heapprofd *hp, struct hp_record *r,
    const struct hp_trace_verdict *v, int64_t ns)
{
	char line[sizeof(r->message)];

	hp->st.profiles[v->outcome]++;
	if (v->outcome == HP_PROF_COMPLETED)
		hp->st.completed++;
	if (ns > hp->st.check_ns_max)
		hp->st.check_ns_max = ns;
	hp_trace_summary(v, line, sizeof(line));
	snprintf(r->outcome, sizeof(r->outcome), "%s",
	    hp_profile_name(v->outcome));
	snprintf(r->message, sizeof(r->message), "%s", line);
	(void)hp_record_put(hp, r, "session end not recorded");
	if (v->outcome != HP_PROF_COMPLETED)
		log_warnx("heapprofd: session %lld: perfetto exited 0 but the "
			  "trace says %s",
		    (long long)r->id, line);
	log_info("heapprofd: session %lld %s (%lld bytes in %s, checked in "
		 "%.1f ms)",
	    (long long)r->id, r->outcome, (long long)r->output_bytes,
	    r->output_path, (double)ns / 1e6);
	hp_expire_run(hp);
}

/* The trace of record r opened for reading, or -errno with the
 * verdict already said (it cannot be read: trace_corrupt). */
static int
open_trace(const struct hp_record *r, const struct hp_want *w,
    struct hp_trace_verdict *v)
{
	int fd, e;

	if ((fd = open(r->output_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0)
		return fd;
	e = -errno;
	hp_trace_check(NULL, 0, w->pids, w->n, v);
	v->outcome = HP_PROF_TRACE_CORRUPT;
	snprintf(v->why, sizeof(v->why), "cannot open: %s", strerror(-e));
	return e;
}

/* On the spot (the loop, or a stopping daemon). */
static void
check_now(struct heapprofd *hp, struct hp_record *r, const struct hp_want *w)
{
	struct hp_trace_verdict v;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int fd;

	if ((fd = open_trace(r, w, &v)) >= 0) {
		(void)hp_trace_check_fd(fd, w->pids, w->n, &v);
		close(fd);
	}
	finish(hp, r, &v, clock_ns(CLOCK_MONOTONIC) - t0);
}

static void *
check_main(void *arg)
{
	struct hp_check *c = arg;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t one = 1;

	(void)prctl(PR_SET_NAME, "vitalsd-hpcheck", 0, 0, 0);
	(void)hp_trace_check_fd(c->fd, c->want.pids, c->want.n, &c->v);
	c->ns = clock_ns(CLOCK_MONOTONIC) - t0;
	while (write(c->efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	return NULL;
}

/* The thread's answer: joined, the record finished. */
static void
collect(struct hp_check *c)
{
	pthread_join(c->th, NULL);
	close(c->fd);
	c->fd = -1;
	c->busy = false;
	c->hp->st.checking = false;
	finish(c->hp, &c->rec, &c->v, c->ns);
}

static void
check_cb_run(evutil_socket_t fd, short what, void *arg)
{
	struct hp_check *c = arg;
	uint64_t n;

	(void)what;
	while (read(fd, &n, sizeof(n)) < 0 && errno == EINTR)
		;
	if (c->busy)
		collect(c);
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
check_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	check_cb_run(fd, what, arg);
	loopstat_end("heapprofd rules", t0);
}

static struct hp_check *
check_new(struct heapprofd *hp)
{
	struct hp_check *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->hp = hp;
	c->fd = -1;
	if ((c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		free(c);
		return NULL;
	}
	c->ev = event_new(hp->base, c->efd, EV_READ | EV_PERSIST, check_cb, c);
	if (c->ev == NULL || event_add(c->ev, NULL) < 0) {
		if (c->ev)
			event_free(c->ev);
		close(c->efd);
		free(c);
		return NULL;
	}
	return c;
}

/*
 * Session r (exited 0 by itself) is checked: on a thread when one can be
 * had, else on the spot. Its record is put when the verdict is known.
 */
void
hp_check_start(struct heapprofd *hp, const struct hp_record *r,
    const struct hp_want *w)
{
	struct hp_check *c = hp->check;
	sigset_t all, old;
	int e;

	if (c == NULL && hp->base && (c = hp->check = check_new(hp)) == NULL)
		log_warnx("heapprofd: no check thread (out of memory): "
			  "traces are checked on the loop");
	if (c == NULL || c->busy) {
		struct hp_record copy = *r;

		check_now(hp, &copy, w);
		return;
	}
	c->rec = *r;
	c->want = *w;
	if ((c->fd = open_trace(&c->rec, &c->want, &c->v)) < 0) {
		c->fd = -1;
		finish(hp, &c->rec, &c->v, 0);
		return;
	}
	/* signals stay the loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&c->th, NULL, check_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		close(c->fd);
		c->fd = -1;
		check_now(hp, &c->rec, &c->want);
		return;
	}
	c->busy = true;
	hp->st.checking = true;
}

/* The daemon stops: a running check is waited for and recorded. */
void
hp_check_stop(struct heapprofd *hp)
{
	struct hp_check *c = hp->check;

	if (c && c->busy)
		collect(c);
}

void
hp_check_free(struct heapprofd *hp)
{
	struct hp_check *c = hp->check;

	if (c == NULL)
		return;
	hp_check_stop(hp);
	event_free(c->ev);
	close(c->efd);
	free(c);
	hp->check = NULL;
}
