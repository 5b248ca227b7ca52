/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Run times of the loop's callbacks, the longest kept per window. One
 * loop, one thread: a file-scope record, no lock (doc/metrics.md,
 * "Loop callbacks").
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/loopstat.h"
#include "core/util.h"

static struct loopstat cur;
/* the thread's CPU clock at the outermost begin (callbacks do not nest;
 * should one, the inner one's CPU time counts from the outer's start) */
static int64_t cpu0;
static unsigned depth;

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
	int64_t d = clock_ns(CLOCK_MONOTONIC) - start_ns;

	if (depth > 0)
		depth--;
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
