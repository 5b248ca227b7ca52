/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What both hp.c (requests, records) and hp_session.c (the running
 * perfetto) read of the system: a process's start time, a file's size,
 * the wall clock. Below both, so neither calls the other for them.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "core/util.h"
#include "proc/proc.h"
#include "hp_int.h"

int64_t
hp_wall_now(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int
hp_proc_starttime(struct heapprofd *hp, int32_t pid, uint64_t *ret)
{
	struct vbuf b = { 0 };
	struct pid_stat ps;
	char path[32];
	int r;

	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	if ((r = read_at(hp->procfd, path, &b)) == 0 &&
	    (r = pidstat_parse(b.p, b.len, &ps)) == 0)
		*ret = ps.starttime;
	vbuf_release(&b);
	return r;
}

void
hp_file_size(const char *path, int64_t *ret)
{
	struct stat sb;

	*ret = stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}
