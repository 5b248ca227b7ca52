/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process's identity read now, outside the scan: for an answer about a
 * process no stored window holds because it used no CPU in the range
 * (control/query.c). The same files and rules as the scan's identity
 * (proc_scan.c): stat for comm and starttime, status for uid and tgid,
 * cmdline for the name (comm when empty).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc.h"
#include "window/window.h"

/*
 * pid's identity under proc_root, activity zero, and when it started on
 * the wall clock (btime + starttime / hz). -ESRCH: no such process (a
 * thread's id is not a process), or gone meanwhile; other −errno: a file
 * unreadable or unparsable.
 */
int
proc_identity(const char *proc_root, int32_t pid, unsigned hz,
    struct window_task *ret, int64_t *ret_start_wall_ns)
{
	struct window_task t = { .id = pid, .uid = UINT32_MAX };
	struct vbuf b = { 0 };
	struct pid_status status;
	struct procstat *ps = NULL;
	struct pid_stat st;
	char path[64], name[VITALS_NAME_LEN];
	int dfd, r;

	if (pid <= 0 || hz == 0)
		return -EINVAL;
	if ((dfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	if ((r = read_at(dfd, path, &b)) < 0 || b.len == 0) {
		r = r == -ENOENT || r == 0 ? -ESRCH : r;
		goto out;
	}
	if (pidstat_parse(b.p, b.len, &st) < 0) {
		r = -EBADMSG;
		goto out;
	}
	snprintf(path, sizeof(path), "%d/status", (int)pid);
	if ((r = read_at(dfd, path, &b)) < 0) {
		r = r == -ENOENT ? -ESRCH : r;
		goto out;
	}
	if (pidstatus_parse(b.p, b.len, &status) < 0) {
		r = -EBADMSG;
		goto out;
	}
	if (status.tgid != pid) {
		r = -ESRCH; /* a thread of another process */
		goto out;
	}
	t.tgid = status.tgid;
	t.uid = status.uid;
	t.starttime = st.starttime;
	memcpy(t.comm, st.comm, sizeof(t.comm));
	snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
	if (read_at(dfd, path, &b) < 0 ||
	    cmdline_name(b.p, b.len, name, sizeof(name)) < 0)
		window_task_set_name(&t, t.comm);
	else
		window_task_set_name(&t, name);
	/* struct procstat is large (every CPU's line): not on the stack */
	if ((ps = calloc(1, sizeof(*ps))) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = read_at(dfd, "stat", &b)) < 0)
		goto out;
	if (procstat_parse(b.p, b.len, ps) < 0 ||
	    !(ps->have & PROCSTAT_HAVE_BTIME)) {
		r = -EBADMSG;
		goto out;
	}
	*ret_start_wall_ns = (int64_t)ps->btime * NSEC_PER_SEC +
	    (int64_t)(t.starttime / hz) * NSEC_PER_SEC +
	    (int64_t)(t.starttime % hz) * NSEC_PER_SEC / (int64_t)hz;
	*ret = t;
	r = 0;
out:
	free(ps);
	vbuf_release(&b);
	close(dfd);
	return r;
}
