/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loop's longest callback (issue 20: no work over 1 ms on the loop).
 * The daemon's callbacks that can take long report their run time here;
 * each window takes the longest since the last one (WindowHealth
 * loop_cb_ns_max, loop_cb_what, loop_cb_over_1ms). Loop thread only.
 */
#ifndef VITALSD_LOOPSTAT_H
#define VITALSD_LOOPSTAT_H

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

#endif
