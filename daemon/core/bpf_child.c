/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A BPF load in a child process. A CO-RE load makes libbpf parse the
 * kernel's BTF (/sys/kernel/btf/vmlinux, ~6 MiB here) into some 8 MiB of
 * heap that it frees right after; freed or not, those pages set the
 * daemon's high-water mark (VmHWM) for its whole life, twice what it needs
 * afterwards. Done in a child, the parse is the child's: it loads and
 * attaches, hands the resulting fds back over a socketpair (SCM_RIGHTS)
 * and exits; a link or program fd works in whichever process holds it.
 *
 * The child calls only what fn calls (libbpf, malloc: glibc makes malloc
 * safe after fork) and leaves with _exit(): no atexit handler, no stdio
 * buffer of ours flushed twice.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/bpf_child.h"

/* The child's answer: fn's result, then its out bytes. */
struct child_head {
	int r;
	uint32_t nfds;
};

static void
child_send(int sock, int r, const int *fds, size_t nfds, const void *out,
    size_t outsz)
{
	struct child_head h = { .r = r, .nfds = r < 0 ? 0 : (uint32_t)nfds };
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(sizeof(int) * BPF_CHILD_FDS_MAX)];
	} u;
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)out, outsz } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = outsz ? 2 : 1 };

	memset(&u, 0, sizeof(u));
	if (h.nfds) {
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * h.nfds);
		u.c.cmsg_level = SOL_SOCKET;
		u.c.cmsg_type = SCM_RIGHTS;
		u.c.cmsg_len = CMSG_LEN(sizeof(int) * h.nfds);
		memcpy(CMSG_DATA(&u.c), fds, sizeof(int) * h.nfds);
	}
	while (sendmsg(sock, &m, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

static int
parent_recv(int sock, int *fds, size_t nfds, void *out, size_t outsz)
{
	struct child_head h;
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(sizeof(int) * BPF_CHILD_FDS_MAX)];
	} u;
	struct iovec iov[2] = { { &h, sizeof(h) }, { out, outsz } };
	struct msghdr m = { .msg_iov = iov,
		.msg_iovlen = outsz ? 2 : 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	size_t got = 0, i;
	ssize_t n;

	while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECHILD; /* it died before answering */
	/* take every fd that came, whatever else is wrong */
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		const int *v = (const int *)(void *)CMSG_DATA(c);
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (i = 0; i < k; i++) {
			if (got < nfds)
				fds[got++] = v[i];
			else
				close(v[i]);
		}
	}
	if ((size_t)n != sizeof(h) + outsz || (m.msg_flags & MSG_CTRUNC) ||
	    h.r < 0 || h.nfds != nfds || got != nfds) {
		for (i = 0; i < got; i++) {
			close(fds[i]);
			fds[i] = -1;
		}
		if ((size_t)n == sizeof(h) + outsz && h.r < 0)
			return h.r; /* fn's own failure: its fds are not ours */
		return -EPROTO;
	}
	return h.r;
}

int
bpf_child_run(bpf_child_fn fn, void *arg, int *fds, size_t nfds, void *out,
    size_t outsz)
{
	int sv[2], r, st;
	size_t i;
	pid_t pid;

	if (nfds > BPF_CHILD_FDS_MAX)
		return -EINVAL;
	for (i = 0; i < nfds; i++)
		fds[i] = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	if ((pid = fork()) < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		int cfds[BPF_CHILD_FDS_MAX];

		/* nothing of ours outlives us */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		for (i = 0; i < nfds; i++)
			cfds[i] = -1;
		r = fn(arg, cfds, nfds, out, outsz);
		child_send(sv[1], r, cfds, nfds, out, outsz);
		_exit(0);
	}
	close(sv[1]);
	/* a load takes well under a second; a child stuck for long is
	 * killed, and the start goes on without what it was to make */
	for (;;) {
		struct pollfd pfd = { .fd = sv[0], .events = POLLIN };
		int k = poll(&pfd, 1, BPF_CHILD_TIMEOUT_MS);

		if (k < 0 && errno == EINTR)
			continue;
		r = k > 0  ? parent_recv(sv[0], fds, nfds, out, outsz) :
		    k == 0 ? -ETIMEDOUT :
			     -errno;
		break;
	}
	close(sv[0]);
	if (r == -ETIMEDOUT)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return r;
}
