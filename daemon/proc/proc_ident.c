/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process's identity read now, outside the scan: for an answer about a
 * process no stored window holds because it used no CPU in the range
 * (control/query.c). The same files and rules as the scan's identity
 * (proc_scan.c): stat for comm and starttime, status for uid and tgid,
 * cmdline for the name (comm when empty). proc_cmdline_name() is the
 * cmdline read of both.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc.h"
#include "window/window.h"

/* The first read of a cmdline: argv[0] ends in it for all but a path
 * longer than a page (PATH_MAX is 4,096) or a rewritten argv without NUL */
#define CMDLINE_FIRST_READ 4096

/*
 * pid's name from <pid>/cmdline under dirfd, as cmdline_name() makes it of
 * the whole file, into ret; b is scratch. cmdline_name() reads only the
 * bytes before the first NUL, so when the first read holds a NUL it is
 * the whole answer: one read instead of the two a read to EOF takes
 * (this ran on the loop for every process seen for the first time; the
 * second read was a sixth of it, bench/README.md "Loop thread, fifth
 * pass"). Else (no NUL in a full first read, or an empty file) the file
 * is read to its end, as before. −errno: unreadable; −ENODATA: no name.
 */
int
proc_cmdline_name(int dirfd, int32_t pid, struct vbuf *b, char *ret,
    size_t retsz)
{
	char path[32];

	snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
	return proc_cmdline_name_at(dirfd, path, b, ret, retsz);
}

/*
 * The same of the file path under dirfd (the identity worker's "cmdline"
 * under a process's own directory, proc_ident_async.c). The first read is
 * a read(), not a pread() at 0 (the same on a file just opened): a test's
 * cmdline may be a FIFO (check_loop_offload).
 */
int
proc_cmdline_name_at(int dirfd, const char *path, struct vbuf *b, char *ret,
    size_t retsz)
{
	ssize_t n;
	int fd, r;

	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	b->len = 0;
	if ((r = vbuf_reserve(b, CMDLINE_FIRST_READ)) < 0)
		goto out;
	do
		n = read(fd, b->p, CMDLINE_FIRST_READ);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r = -errno;
		goto out;
	}
	b->len = (size_t)n;
	if (n == 0)
		r = -ENODATA; /* a kernel thread, a zombie: at its end */
	else if (memchr(b->p, '\0', b->len) == NULL)
		r = read_fd_all(fd, b);
	if (r == 0)
		r = cmdline_name(b->p, b->len, ret, retsz);
out:
	close(fd);
	return r;
}

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
	if (proc_cmdline_name(dfd, pid, &b, name, sizeof(name)) < 0)
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
