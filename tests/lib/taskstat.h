/* SPDX-License-Identifier: Apache-2.0 */
/* What the kernel says of a process, for tests that compare figures. */
#ifndef VITALS_TEST_TASKSTAT_H
#define VITALS_TEST_TASKSTAT_H

#include <stdint.h>
#include <sys/types.h>

/* /proc/<pid>/stat: state, utime + stime (ticks), starttime (ticks);
 * 0 or -errno (-EIO: unreadable). */
int ts_read_stat(pid_t pid, char *ret_state, uint64_t *ret_ticks,
    uint64_t *ret_start);
/* |a - b| / b; 1 when b is not positive. */
double ts_rel_diff(double a, double b);

#endif
