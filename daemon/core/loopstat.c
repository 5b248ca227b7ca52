/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Run times of the loop's callbacks, the longest kept per window. One
 * loop, one thread: a file-scope record, no lock (doc/metrics.md,
 * "Loop callbacks").
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/loopstat.h"
#include "core/util.h"

static struct loopstat cur;
/* the thread's CPU clock at the outermost begin (callbacks do not nest;
 * should one, the inner one's CPU time counts from the outer's start) */
static int64_t cpu0;
static unsigned depth;
/* the last callback's end (CLOCK_MONOTONIC); the thread's run_delay at the
 * last tick's end (loopstat_tick_end: read at ticks only, two preads a
 * sample, not at every callback); the loop thread's schedstat, kept open
 * (-2: not opened yet, -1: the kernel keeps none) */
static int64_t last_end_ns;
static int64_t tick_end_runq = -1;
static int sfd = -2;

/* The loop thread's run_delay (ns: runnable, waiting for a CPU); -1 when
 * the kernel keeps none. One pread on a kept file. */
static int64_t
runq_now(void)
{
	char buf[96], *end;
	unsigned long long v;
	ssize_t n;

	if (sfd == -2)
		sfd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		return -1;
	if ((n = pread(sfd, buf, sizeof(buf) - 1, 0)) <= 0)
		return -1;
	buf[n] = '\0';
	(void)strtoull(buf, &end, 10); /* time on a CPU */
	if (end == buf)
		return -1;
	v = strtoull(end, &end, 10);
	return (int64_t)v;
}

int64_t
loopstat_begin(void)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);

	/* the CPU clock read inside the wall interval, at both ends */
	if (depth++ == 0)
		cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return now;
}

void
loopstat_end(const char *what, int64_t start_ns)
{
	int64_t c = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	int64_t d = now - start_ns;

	if (depth > 0)
		depth--;
	if (depth == 0)
		last_end_ns = now;
	if (d <= 0)
		return;
	if ((uint64_t)d > LOOPSTAT_SLOW_NS)
		cur.over++;
	if ((uint64_t)d <= cur.max_ns)
		return;
	cur.max_ns = (uint64_t)d;
	/* never above the wall time (the clocks' granularity) */
	cur.cpu_ns = c <= 0 ? 0 : c > d ? (uint64_t)d : (uint64_t)c;
	snprintf(cur.what, sizeof(cur.what), "%s", what);
}

void
loopstat_take(struct loopstat *ret)
{
	*ret = cur;
	memset(&cur, 0, sizeof(cur));
}

bool
loopstat_late(int64_t due_ns, int64_t now_ns, uint64_t *held_ns,
    uint64_t *runq_ns)
{
	uint64_t late = now_ns > due_ns ? (uint64_t)(now_ns - due_ns) : 0;
	uint64_t held = 0, rq = 0;
	int64_t r;

	if (last_end_ns > due_ns)
		held = (uint64_t)(last_end_ns - due_ns);
	if (held > late)
		held = late;
	r = runq_now();
	if (r >= 0 && tick_end_runq >= 0 && r > tick_end_runq)
		rq = (uint64_t)(r - tick_end_runq);
	/* a wait before the timer fell due is no part of its lateness */
	if (rq > late - held)
		rq = late - held;
	*held_ns = held;
	*runq_ns = rq;
	return r >= 0;
}

void
loopstat_tick_end(void)
{
	tick_end_runq = runq_now();
}
