/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The window's drain off the loop. The loop flips the generation (the
 * window's edge: a map update, microseconds); this thread then waits out
 * the grace period the barrier takes (synchronize_rcu, 5-30 ms) and reads
 * the old side, and, given the window's part (bpf_sched_async_reduce_into),
 * reduces the batch into it (bpf_sched_window_reduce: the rows summed per
 * uid, the counters' deltas, the programs' statistics; 4-5 % of the loop
 * thread's CPU at 2,100 tasks when it ran there, bench/README.md "Loop
 * thread, fifth pass"), runs the owner's after-hook on it (the daemon's
 * capacity weighting and the batch's free, bpf_sched_async_after), and
 * tells the loop through an eventfd. One job at
 * a time: the loop starts the next only after it took the last one's
 * result, and touches neither bs's batch, its read buffers, its counters'
 * bases nor that part meanwhile.
 *
 * The thread is made on first use, after the daemon's privileges are
 * final (a thread keeps the capabilities of its creator at that moment),
 * and blocks every signal: they are the loop's.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sched/sched.h"

struct bpf_sched_async {
	struct bpf_sched *bs;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int efd;
	bool job;      /* a collect asked for, not yet taken by the thread */
	bool finished; /* its result is in r */
	bool busy;     /* started and not yet taken by the loop */
	bool quit;
	int r;
	/* the window's part the next job reduces into (NULL: none, the
	 * loop reduces), and its clock rate */
	struct window_bpf *wb;
	unsigned hz;
	/* after each reduce into a part, on this thread (set before the
	 * first job: bpf_sched_async_after) */
	bpf_sched_after_fn after;
	void *after_arg;
};

static void *
async_main(void *arg)
{
	struct bpf_sched_async *a = arg;
	struct sched_param sp = { .sched_priority = 0 };
	uint64_t one = 1;
	int r;

	/* as core/worker.c's: its wake-up at a close does not preempt the
	 * loop's thread on a busy CPU */
	(void)sched_setscheduler(0, SCHED_BATCH, &sp);
	(void)prctl(PR_SET_NAME, "vitalsd-drain", 0, 0, 0);
	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct window_bpf *wb;
		unsigned hz;
		bpf_sched_after_fn after;
		void *after_arg;

		while (!a->job && !a->quit)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->quit)
			break;
		a->job = false;
		wb = a->wb;
		hz = a->hz;
		after = a->after;
		after_arg = a->after_arg;
		pthread_mutex_unlock(&a->mu);
		r = bpf_sched_collect(a->bs, bpf_sched_batch_of(a->bs));
		if (wb != NULL) {
			r = bpf_sched_window_reduce(a->bs, wb, hz, r);
			if (after != NULL)
				after(after_arg, a->bs, wb, hz);
		}
		pthread_mutex_lock(&a->mu);
		a->r = r;
		a->finished = true;
		pthread_cond_broadcast(&a->cv);
		/* the loop reads the eventfd to learn it; a full counter
		 * (never at one write per window) only delays the news */
		(void)!write(a->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int
bpf_sched_async_new(struct bpf_sched *bs, struct bpf_sched_async **ret)
{
	struct bpf_sched_async *a;
	sigset_t all, old;
	int r;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -ENOMEM;
	a->bs = bs;
	if ((a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		r = -errno;
		free(a);
		return r;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&a->th, NULL, async_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		close(a->efd);
		free(a);
		return r;
	}
	*ret = a;
	return 0;
}

/* Waits for a running job: its result is dropped, the batch stays in bs. */
struct bpf_sched_async *
bpf_sched_async_free(struct bpf_sched_async *a)
{
	if (a == NULL)
		return NULL;
	pthread_mutex_lock(&a->mu);
	a->quit = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	close(a->efd);
	free(a);
	return NULL;
}

int
bpf_sched_async_fd(const struct bpf_sched_async *a)
{
	return a->efd;
}

bool
bpf_sched_async_busy(const struct bpf_sched_async *a)
{
	return a != NULL && a->busy;
}

/*
 * fn(arg, bs, wb, hz) on the drain's thread after each reduce into a part
 * (bpf_sched_async_reduce_into), before the loop hears of the end: what
 * else the window needs of the batch, while the batch is the thread's.
 * Set before the first job; -EBUSY while one is out.
 */
int
bpf_sched_async_after(struct bpf_sched_async *a, bpf_sched_after_fn fn,
    void *arg)
{
	if (a->busy)
		return -EBUSY;
	pthread_mutex_lock(&a->mu);
	a->after = fn;
	a->after_arg = arg;
	pthread_mutex_unlock(&a->mu);
	return 0;
}

/*
 * The next job (bpf_sched_async_start) reduces its batch into wb on the
 * thread, as bpf_sched_window_reduce(bs, wb, hz, collected) on the loop
 * would; its result is the reduce's. NULL: the job only collects (the
 * caller reduces). -EBUSY while a job is out.
 */
int
bpf_sched_async_reduce_into(struct bpf_sched_async *a, struct window_bpf *wb,
    unsigned hz)
{
	if (a->busy)
		return -EBUSY;
	pthread_mutex_lock(&a->mu);
	a->wb = wb;
	a->hz = hz;
	pthread_mutex_unlock(&a->mu);
	return 0;
}

/*
 * The flip on the caller's thread, then the rest on ours. -EBUSY: the last
 * job's result was not taken; a failed flip starts nothing.
 */
int
bpf_sched_async_start(struct bpf_sched_async *a)
{
	int r;

	if (a->busy)
		return -EBUSY;
	if ((r = bpf_sched_flip(a->bs)) < 0)
		return r;
	pthread_mutex_lock(&a->mu);
	a->job = true;
	a->finished = false;
	a->busy = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return 0;
}

/*
 * 1 and the collect's result in ret_r once it finished (wait: until it
 * does), 0 while it runs, -EALREADY when nothing was started.
 */
int
bpf_sched_async_done(struct bpf_sched_async *a, bool wait, int *ret_r)
{
	uint64_t n;

	if (!a->busy)
		return -EALREADY;
	pthread_mutex_lock(&a->mu);
	while (wait && !a->finished)
		pthread_cond_wait(&a->cv, &a->mu);
	if (!a->finished) {
		pthread_mutex_unlock(&a->mu);
		return 0;
	}
	a->finished = false;
	a->busy = false;
	*ret_r = a->r;
	pthread_mutex_unlock(&a->mu);
	(void)!read(a->efd, &n, sizeof(n));
	return 1;
}
