/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loop's longest callback (issue 20: no work over 1 ms on the loop).
 * The daemon's callbacks that can take long report their run time here;
 * each window takes the longest since the last one (WindowHealth
 * loop_cb_ns_max, loop_cb_what, loop_cb_over_1ms). Loop thread only.
 */
#ifndef VITALSD_LOOPSTAT_H
#define VITALSD_LOOPSTAT_H

#include <stdbool.h>
#include <stdint.h>

#define LOOPSTAT_WHAT_LEN 16
#define LOOPSTAT_SLOW_NS 1000000 /* a callback over this is counted */

struct loopstat {
	uint64_t max_ns;	      /* the longest callback */
	char what[LOOPSTAT_WHAT_LEN]; /* its name, "" none */
	uint32_t over;		      /* callbacks over LOOPSTAT_SLOW_NS */
	uint64_t cpu_ns; /* the longest one's thread CPU time: the rest of
			  * max_ns the thread waited (not scheduled, or in a
			  * blocking call) */
};

/* CLOCK_MONOTONIC now, the start to give loopstat_end */
int64_t loopstat_begin(void);
/* The callback called what (a static name) ran since start_ns. */
void loopstat_end(const char *what, int64_t start_ns);
/* What was reported since the last take, into ret; then reset. */
void loopstat_take(struct loopstat *ret);

/*
 * How a timer due at due_ns and run at now_ns (CLOCK_MONOTONIC) came to be
 * late (doc/metrics.md, "Timer lateness"): *held_ns, the part of the
 * lateness the loop was still in a callback that ended after due_ns;
 * *runq_ns, the time the loop's thread waited for a CPU since the last
 * tick's end (loopstat_tick_end; the scheduler's run_delay,
 * /proc/thread-self/schedstat), within the rest. Both 0 when the timer was
 * on time; *runq_ns 0 when the kernel keeps no schedstat (returns false
 * then). Loop thread only.
 */
bool loopstat_late(int64_t due_ns, int64_t now_ns, uint64_t *held_ns,
    uint64_t *runq_ns);
/* The tick's callback ends: the run_delay the next loopstat_late counts
 * from. */
void loopstat_tick_end(void);

#endif
