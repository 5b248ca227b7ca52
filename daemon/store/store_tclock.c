/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a writer's commit goes (doc/storage.md, "What delays the
 * writer"), by the writing thread's own clocks: the wall time of the
 * operation; the thread's CPU time (CLOCK_THREAD_CPUTIME_ID); the time it
 * was runnable but waiting for a CPU (the second field of
 * /proc/thread-self/schedstat, the scheduler's run_delay); the time it
 * slept in the busy handler for another connection's lock (a reader's
 * snapshot or SHARED lock: store_busy.c); the time spent in the WAL
 * checkpoint after the commit (store_after_write). What remains of the
 * wall time is blocked in the kernel: fsync, other I/O, page faults.
 * The lock wait and the checkpoint are counted per thread, so readers'
 * threads never add to the writer's figures.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "store/store.h"

static __thread uint64_t tl_lock_ns, tl_ckpt_ns;

void
store_tclock_add_lock(uint64_t ns)
{
	tl_lock_ns += ns;
}

void
store_tclock_add_ckpt(uint64_t ns)
{
	tl_ckpt_ns += ns;
}

/* The thread's run_delay in ns; -1 when the kernel keeps none. */
static int64_t
runq_ns(void)
{
	char buf[96], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	if ((fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) <
	    0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	(void)strtoull(buf, &end, 10); /* on a CPU: the thread clock has it */
	if (end == buf)
		return -1;
	v = strtoull(end, &end, 10);
	return (int64_t)v;
}

void
store_tclock_start(struct store_tclock *t)
{
	t->wall = clock_ns(CLOCK_MONOTONIC);
	t->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t->runq = runq_ns();
	t->lock = tl_lock_ns;
	t->ckpt = tl_ckpt_ns;
}

static uint64_t
since(int64_t now, int64_t then)
{
	return now > then ? (uint64_t)(now - then) : 0;
}

void
store_tclock_stop(const struct store_tclock *t, struct store_commit_split *ret)
{
	int64_t rq = t->runq >= 0 ? runq_ns() : -1;
	uint64_t used;

	memset(ret, 0, sizeof(*ret));
	ret->wall_ns = since(clock_ns(CLOCK_MONOTONIC), t->wall);
	ret->cpu_ns = since(clock_ns(CLOCK_THREAD_CPUTIME_ID), t->cpu);
	ret->runq_known = rq >= 0;
	ret->runq_ns = rq >= 0 ? since(rq, t->runq) : 0;
	ret->lock_ns = tl_lock_ns - t->lock;
	ret->ckpt_ns = tl_ckpt_ns - t->ckpt;
	/* the clocks are read apart: the parts may pass the whole by a few
	 * µs, and a busy sleep's wake-up delay is in runq as well */
	used = ret->cpu_ns + ret->runq_ns + ret->lock_ns;
	ret->other_ns = ret->wall_ns > used ? ret->wall_ns - used : 0;
}

/* Fold one operation into the writer's figures. */
void
store_tclock_note(struct store_commit_stats *c,
    const struct store_commit_split *s)
{
	c->n++;
	c->last = *s;
	if (s->wall_ns >= c->worst.wall_ns)
		c->worst = *s;
	if (s->lock_ns > c->lock_max_ns)
		c->lock_max_ns = s->lock_ns;
	if (s->runq_ns > c->runq_max_ns)
		c->runq_max_ns = s->runq_ns;
	c->lock_sum_ns += s->lock_ns;
	if (s->lock_ns > STORE_READER_DELAY_NS)
		c->lock_over++;
}
