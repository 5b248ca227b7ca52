/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kept-open stat files for the procfs scan. Opening, reading and closing
 * /proc/<pid>/stat for every task every second is most of the scan's
 * cost; a kept descriptor read again at offset 0 gives the same text for
 * a fraction of it. A descriptor stays bound to the task it was opened
 * for: once that task is gone every read of it fails with ESRCH, even
 * when its pid has been given to another process, so a kept descriptor
 * never reads a stranger. The caller then opens by path again, which
 * finds the new owner of the pid (a new starttime: a new instance).
 * How many stay open is bounded (proc_stat_fds, and what RLIMIT_NOFILE
 * leaves); past the bound a task's file is opened, read and closed, as
 * before.
 */
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/util.h"
#include "proc/proc.h"
#include "window/window.h"

/* Descriptors left for everything else: sockets, the store, maps. */
#define STATFD_RESERVE 512

unsigned
statfd_limit(unsigned want)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)want + STATFD_RESERVE;

	if (want == 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	/* raise the soft limit toward the hard one: no privilege needed */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		struct rlimit nl = rl;

		nl.rlim_cur = rl.rlim_max == RLIM_INFINITY ||
			rl.rlim_max > need ?
		    need :
		    rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nl) == 0)
			rl = nl;
	}
	if (rl.rlim_cur == RLIM_INFINITY)
		return want;
	if (rl.rlim_cur <= STATFD_RESERVE)
		return 0;
	return rl.rlim_cur - STATFD_RESERVE < want ?
	    (unsigned)(rl.rlim_cur - STATFD_RESERVE) :
	    want;
}

/* The whole (short) file from offset 0 of fd into b. */
static int
pread_all(int fd, struct vbuf *b)
{
	size_t cap = 1024;
	ssize_t n;

	b->len = 0;
	for (;;) {
		if (vbuf_reserve(b, cap) < 0)
			return -ENOMEM;
		n = pread(fd, b->p, cap, 0);
		if (n < 0)
			return errno == EINTR ? -EAGAIN : -errno;
		if ((size_t)n < cap)
			break;
		cap *= 2; /* it did not fit: read it whole again */
		if (cap > 1 << 20)
			return -EFBIG;
	}
	b->len = (size_t)n;
	b->p[n] = '\0';
	return 0;
}

void
statfd_close(struct statfd *sf, int *fdp)
{
	if (*fdp < 0)
		return;
	close(*fdp);
	*fdp = -1;
	sf->open--;
}

int
statfd_read(struct statfd *sf, int *fdp, int dirfd, const char *path,
    struct vbuf *b, struct window_health *h)
{
	int fd, r;

	if (*fdp >= 0) {
		if ((r = pread_all(*fdp, b)) == 0 && b->len > 0) {
			h->stat_fd_reads++;
			return 0;
		}
		/* its task is gone (ESRCH), or the read failed: the path
		 * may name another task now */
		statfd_close(sf, fdp);
	}
	h->stat_opens++;
	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if ((r = pread_all(fd, b)) < 0) {
		close(fd);
		return r;
	}
	if (sf->open < sf->max) {
		*fdp = fd;
		sf->open++;
	} else {
		if (sf->max)
			h->stat_fd_full++;
		close(fd);
	}
	return 0;
}
