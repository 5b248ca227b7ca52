/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A job thread for work that waits in the kernel (an RCU grace period, a
 * walk of bpf() calls): the loop hands one job over, goes on serving
 * ticks and clients, and learns of its end from an eventfd. One job at a
 * time keeps the ownership simple: while busy, what the job touches is
 * the thread's; after worker_done it is the loop's again.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "core/worker.h"

struct worker {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int efd;
	worker_fn fn;
	void *arg;
	bool job;      /* given, not yet taken by the thread */
	bool finished; /* its result is in r */
	bool busy;     /* started, not yet taken by the loop (loop only) */
	bool quit;
	int r;
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct sched_param sp = { .sched_priority = 0 };
	uint64_t one = 1;
	worker_fn fn;
	void *fa;
	int r;

	/* a batch thread: its wake-up does not preempt the loop's thread on
	 * a busy CPU (the loop would wait out the job's first slice); the
	 * policy needs no privilege, a refusal leaves the thread as it is */
	(void)sched_setscheduler(0, SCHED_BATCH, &sp);
	(void)prctl(PR_SET_NAME, "vitalsd-worker", 0, 0, 0);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->job && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->quit)
			break;
		w->job = false;
		fn = w->fn;
		fa = w->arg;
		pthread_mutex_unlock(&w->mu);
		r = fn(fa);
		pthread_mutex_lock(&w->mu);
		w->r = r;
		w->finished = true;
		pthread_cond_broadcast(&w->cv);
		/* one write per job: the counter never fills */
		(void)!write(w->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int
worker_new(struct worker **ret)
{
	struct worker *w;
	int r;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	if ((w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		r = -errno;
		free(w);
		return r;
	}
	pthread_mutex_init(&w->mu, NULL);
	/* worker_free_within's deadline: a wall clock step does not move
	 * it */
	(void)cond_init_monotonic(&w->cv);
	r = thread_start_quiet(&w->th, worker_main, w);
	if (r < 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		close(w->efd);
		free(w);
		return r;
	}
	*ret = w;
	return 0;
}

struct worker *
worker_free(struct worker *w)
{
	if (w == NULL)
		return NULL;
	pthread_mutex_lock(&w->mu);
	/* a job given but not begun is dropped; one running ends first */
	w->quit = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	close(w->efd);
	free(w);
	return NULL;
}

bool
worker_free_within(struct worker *w, unsigned timeout_ms)
{
	struct timespec dl;
	bool running;

	if (w == NULL)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_broadcast(&w->cv);
	/* running: started (busy), begun (job taken), not finished */
	while ((running = w->busy && !w->job && !w->finished) &&
	    pthread_cond_timedwait(&w->cv, &w->mu, &dl) == 0)
		;
	running = w->busy && !w->job && !w->finished;
	pthread_mutex_unlock(&w->mu);
	if (running) {
		pthread_detach(w->th);
		return false;
	}
	(void)worker_free(w);
	return true;
}

int
worker_fd(const struct worker *w)
{
	return w->efd;
}

bool
worker_busy(const struct worker *w)
{
	return w != NULL && w->busy;
}

int
worker_start(struct worker *w, worker_fn fn, void *arg)
{
	if (w->busy)
		return -EBUSY;
	pthread_mutex_lock(&w->mu);
	w->fn = fn;
	w->arg = arg;
	w->job = true;
	w->finished = false;
	w->busy = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

int
worker_done(struct worker *w, bool wait, int *ret_r)
{
	uint64_t n;

	if (!w->busy)
		return -EALREADY;
	pthread_mutex_lock(&w->mu);
	while (wait && !w->finished)
		pthread_cond_wait(&w->cv, &w->mu);
	if (!w->finished) {
		pthread_mutex_unlock(&w->mu);
		return 0;
	}
	w->finished = false;
	w->busy = false;
	*ret_r = w->r;
	pthread_mutex_unlock(&w->mu);
	(void)!read(w->efd, &n, sizeof(n));
	return 1;
}

int
thread_start_quiet(pthread_t *ret, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(ret, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -r;
}

int
cond_init_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	int r, rc;

	if ((r = pthread_condattr_init(&ca)) != 0)
		return -r;
	/* without the clock (never on Linux) the default one, as before */
	r = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
	return -(rc ? rc : r);
}
