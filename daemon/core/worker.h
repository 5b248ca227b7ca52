/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One job at a time on a thread of its own, its end told to the loop
 * through an eventfd (worker.c). The pattern of sched_async.c, made
 * generic for the other drains that must not block the loop: the loop
 * starts a job, touches nothing the job owns until it took the result
 * (worker_done), and may wait for it (shutdown, reload).
 */
#ifndef VITALSD_WORKER_H
#define VITALSD_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct worker;
typedef int (*worker_fn)(void *arg);

/* The thread blocks every signal (they are the loop's) and keeps the
 * capabilities of its creator at this moment: made after the privileges
 * are final. -errno. */
int worker_new(struct worker **ret);
/* Waits for a running job (its result dropped, arg stays the caller's). */
struct worker *worker_free(struct worker *w);
/* The same, waiting timeout_ms at most for a running job: true, freed;
 * false, the job still ran then and the thread is left to it, detached
 * (the worker and whatever the job touches stay allocated for good: a
 * read that never returns, at shutdown). */
bool worker_free_within(struct worker *w, unsigned timeout_ms);
/* Readable when a job has finished (EV_READ | EV_PERSIST on the loop). */
int worker_fd(const struct worker *w);
/* A job started and its result not yet taken. */
bool worker_busy(const struct worker *w);
/* fn(arg) on the thread. -EBUSY: the last result was not taken. */
int worker_start(struct worker *w, worker_fn fn, void *arg);
/* 1 and fn's return in ret_r once it finished (wait: until it does), 0
 * while it runs, -EALREADY when nothing was started. */
int worker_done(struct worker *w, bool wait, int *ret_r);

/* A thread of the daemon's own that takes no signal (they are the
 * loop's): made with every signal blocked. -errno. */
int thread_start_quiet(pthread_t *ret, void *(*fn)(void *), void *arg);
/* A condition variable whose timed waits run on CLOCK_MONOTONIC: a
 * wall-clock step moves no deadline. -errno. */
int cond_init_monotonic(pthread_cond_t *cv);

#endif
