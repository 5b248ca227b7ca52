/* SPDX-License-Identifier: Apache-2.0 */
/* What the kernel says of a process (taskstat.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "taskstat.h"
#include "vitalsd.h"

int
ts_read_stat(pid_t pid, char *ret_state, uint64_t *ret_ticks,
    uint64_t *ret_start)
{
	char path[64], buf[1024];
	struct pid_stat ps;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || pidstat_parse(buf, (size_t)n, &ps) < 0)
		return -EIO;
	*ret_state = ps.state;
	*ret_ticks = ps.utime + ps.stime;
	*ret_start = ps.starttime;
	return 0;
}

double
ts_rel_diff(double a, double b)
{
	double d = a > b ? a - b : b - a;

	return b > 0 ? d / b : 1.0;
}
