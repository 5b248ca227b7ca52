/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The privileged helper: a small process forked before the drop that keeps
 * the few privileges later features need, and does exactly three things
 * for the daemon over a socketpair (doc/privileges.md):
 *
 *   PH_OPEN     open one file of /proc/<pid> (maps, smaps, pagemap,
 *               clear_refs) and pass the fd back, after checking the
 *               process is still the instance asked for (starttime);
 *   PH_IDLE     open the page_idle bitmap and pass the fd back;
 *   PH_RMDIR    remove one tracefs instance whose name starts "vitals".
 *
 * Passing fds, not data, is what makes this narrow: the kernel checks
 * ptrace access (maps, smaps, pagemap), CAP_SYS_ADMIN for PFNs (pagemap)
 * and DAC (clear_refs, page_idle) when a file is opened, with the opener's
 * credentials, and not again on read or write. The daemon reads and writes
 * with its own fds; the helper never sees the data.
 *
 * Messages are fixed-size structs on a SOCK_SEQPACKET pair; a request of
 * any other length, version, op, or with a bad field is answered with
 * EINVAL and nothing else happens. Every request carries a sequence number
 * the answer echoes: the caller discards (and closes the fd of) an answer
 * to an earlier request, and a channel that timed out or broke the
 * protocol is closed for good, never reused out of step. The helper runs as root with only
 * CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH,
 * no_new_privs and a seccomp filter of its own; it dies with the daemon
 * (PR_SET_PDEATHSIG) and exits when its socket closes. It is forked while
 * the daemon still has one thread, and does not allocate.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/log.h"
#include "core/util.h"
#include "privs/privs.h"

#define PH_MAGIC 0x56504831u /* "VPH1" */
#define PH_VERSION 2
#define PH_TIMEOUT_MS 5000

enum ph_op { PH_OPEN = 1, PH_IDLE = 2, PH_RMDIR = 3 };

struct ph_req {
	uint32_t magic;
	uint16_t version;
	uint16_t op;	    /* enum ph_op */
	int32_t pid;	    /* PH_OPEN */
	uint32_t which;	    /* PH_OPEN: enum privhelper_file */
	uint64_t starttime; /* PH_OPEN: 0, or the instance's field 22 */
	uint64_t seq;	    /* the caller's; echoed in the answer */
	char name[64];	    /* PH_RMDIR: the instance, NUL-terminated */
};

struct ph_resp {
	uint32_t magic;
	int32_t err;  /* 0 or -errno; on 0 an fd rides along for OPEN, IDLE */
	uint64_t seq; /* the request's (0: the ready message, or a request
		       * too short to carry one) */
};

/* the layouts doc/privileges.md gives: no padding, no surprises */
_Static_assert(sizeof(struct ph_req) == 96, "ph_req layout");
_Static_assert(sizeof(struct ph_resp) == 16, "ph_resp layout");

struct privhelper {
	int fd;		      /* our end of the pair; -1 once dead */
	pid_t pid;	      /* the helper */
	pthread_mutex_t lock; /* one request at a time */
	uint64_t seq;	      /* the last request's */
	int timeout_ms;	      /* per call */
	struct privhelper_stats st;
};

/* The helper's side: fixed at fork, never changed. */
struct ph_ctx {
	int fd;
	int procfd;
	int tracefd; /* <tracefs>/instances, or -1 */
	char idle_path[512];
};

static const char *const ph_files[] = {
	[PH_FILE_MAPS] = "maps",
	[PH_FILE_SMAPS] = "smaps",
	[PH_FILE_PAGEMAP] = "pagemap",
	[PH_FILE_CLEAR_REFS] = "clear_refs",
};

/* ------------------------------------------------------ helper process */

static int
ph_send(int fd, int err, uint64_t seq, int pass_fd)
{
	struct ph_resp resp = { PH_MAGIC, err, seq };
	struct iovec iov = { &resp, sizeof(resp) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (pass_fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(resp) ? 0 :
									 -errno;
}

/* "vitals" (ftrace_instance's default; "vitalsd..." too) followed by
 * letters, digits, '_', '-' only (no "..", no '/'), NUL-terminated inside
 * the field. */
static bool
ph_name_ok(const char name[64])
{
	size_t n = strnlen(name, 64), i;

	if (n == 64 || n < 6 || strncmp(name, "vitals", 6) != 0)
		return false;
	for (i = 6; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* field 22 of <pid>/stat, parsed after the last ')'; no allocation */
static int
ph_starttime(int procfd, int32_t pid, uint64_t *ret)
{
	char path[32], buf[1024], *p;
	unsigned field = 2;
	uint64_t v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/stat", pid);
	if ((fd = openat(procfd, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -EBADMSG;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (field != 22)
		return -EBADMSG;
	*ret = v;
	return 0;
}

static int
ph_open(const struct ph_ctx *x, const struct ph_req *rq, int *ret_fd)
{
	static const int flags[] = {
		[PH_FILE_MAPS] = O_RDONLY,
		[PH_FILE_SMAPS] = O_RDONLY,
		[PH_FILE_PAGEMAP] = O_RDONLY,
		[PH_FILE_CLEAR_REFS] = O_WRONLY,
	};
	char path[48];
	uint64_t st = 0;
	int fd, r;

	if (rq->pid <= 0 || rq->which >= PH_FILE__MAX)
		return -EINVAL;
	snprintf(path, sizeof(path), "%d/%s", rq->pid, ph_files[rq->which]);
	fd = openat(x->procfd, path, flags[rq->which] | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	/* The pid may have been reused between the caller's read and the
	 * open: the fd must belong to the instance asked for. */
	if (rq->starttime &&
	    ((r = ph_starttime(x->procfd, rq->pid, &st)) < 0 ||
		st != rq->starttime)) {
		close(fd);
		return -ESRCH;
	}
	*ret_fd = fd;
	return 0;
}

static void
ph_serve(const struct ph_ctx *x)
{
	for (;;) {
		struct ph_req rq;
		uint64_t seq;
		ssize_t n;
		int fd = -1, r;

		n = recv(x->fd, &rq, sizeof(rq), MSG_TRUNC);
		if (n == 0)
			return; /* the daemon is gone */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		/* echo the sequence whenever the request reaches that far */
		seq = (size_t)n >=
			offsetof(struct ph_req, seq) + sizeof(rq.seq) ?
		    rq.seq :
		    0;
		/* exactly one request, exactly this layout */
		if ((size_t)n != sizeof(rq) || rq.magic != PH_MAGIC ||
		    rq.version != PH_VERSION) {
			r = -EINVAL;
		} else if (rq.op == PH_OPEN) {
			r = ph_open(x, &rq, &fd);
		} else if (rq.op == PH_IDLE) {
			fd = open(x->idle_path,
			    O_RDWR | O_CLOEXEC | O_NOFOLLOW);
			r = fd < 0 ? -errno : 0;
		} else if (rq.op == PH_RMDIR) {
			if (x->tracefd < 0)
				r = -ENOENT;
			else if (!ph_name_ok(rq.name))
				r = -EINVAL;
			else
				r = unlinkat(x->tracefd, rq.name,
					AT_REMOVEDIR) < 0 ?
				    -errno :
				    0;
		} else {
			r = -EINVAL;
		}
		(void)ph_send(x->fd, r, seq, r == 0 ? fd : -1);
		if (fd >= 0)
			close(fd);
	}
}

/* Only what serving needs; anything else fails with EPERM. */
static int
ph_filter(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	static const long nrs[] = {
		__NR_recvfrom,
		__NR_recvmsg,
		__NR_sendmsg,
		__NR_openat,
		__NR_read,
		__NR_close,
		__NR_unlinkat,
		__NR_exit,
		__NR_exit_group,
		__NR_rt_sigreturn,
		__NR_restart_syscall,
	};
	struct sock_filter f[4 + 2 * (sizeof(nrs) / sizeof(nrs[0])) + 1];
	struct sock_fprog prog = { 0, f };
	size_t i, n = 0;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, arch));
#ifdef __x86_64__
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	    AUDIT_ARCH_X86_64, 1, 0);
#else
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	    AUDIT_ARCH_AARCH64, 1, 0);
#endif
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	    SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, nr));
	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		    (uint32_t)nrs[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		    SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	    SECCOMP_RET_ERRNO | EPERM);
	prog.len = (unsigned short)n;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ?
	    -errno :
	    0;
#else
	return 0;
#endif
}

/* In the forked child: shed everything the three operations do not need. */
static int
ph_confine(void)
{
	const uint64_t keep = (1ull << CAP_SYS_ADMIN) |
	    (1ull << CAP_SYS_PTRACE) | (1ull << CAP_DAC_OVERRIDE) |
	    (1ull << CAP_DAC_READ_SEARCH);
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2];
	unsigned cap;

	for (cap = 0; cap < CAPS_MAX; cap++)
		if (!(keep & (1ull << cap)) &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	memset(c, 0, sizeof(c));
	if (syscall(SYS_capget, &h, c) < 0)
		return -errno;
	c[0].effective &= (uint32_t)keep;
	c[0].permitted &= (uint32_t)keep;
	c[0].inheritable = 0;
	c[1].effective &= (uint32_t)(keep >> 32);
	c[1].permitted &= (uint32_t)(keep >> 32);
	c[1].inheritable = 0;
	if (syscall(SYS_capset, &h, c) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return ph_filter();
}

/* ------------------------------------------------------- daemon side */

static int64_t
ph_deadline(const struct privhelper *ph)
{
	return clock_ns(CLOCK_MONOTONIC) + (int64_t)ph->timeout_ms * 1000000;
}

/*
 * The answer to request `want`, before `deadline` (CLOCK_MONOTONIC ns):
 * 0 and the helper's answer in *ret_err (its fd in *ret_fd when asked for
 * and answered 0), or -errno when the channel failed: -ETIMEDOUT, -EPIPE
 * (the helper is gone), -EPROTO (a malformed answer, a truncated control
 * message, one from the future). Signals do not end the wait. An answer to
 * an earlier request (its caller gave up) is discarded, its fd closed.
 */
static int
ph_recv(struct privhelper *ph, uint64_t want, int64_t deadline, int *ret_err,
    int *ret_fd)
{
	for (;;) {
		struct ph_resp resp;
		struct iovec iov = { &resp, sizeof(resp) };
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = u.buf,
			.msg_controllen = sizeof(u.buf),
		};
		struct pollfd pfd = { ph->fd, POLLIN, 0 };
		struct cmsghdr *c;
		int64_t left = deadline - clock_ns(CLOCK_MONOTONIC);
		int fd = -1, nfd = 0, r;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		left = (left + 999999) / 1000000;
		r = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r < 0)
			ph->st.interrupted++;
		if (r <= 0)
			continue; /* interrupted, or the time is re-checked */
		memset(&u, 0, sizeof(u));
		n = recvmsg(ph->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		/* every fd that came is ours to close, whatever the rest */
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t i, k;

			if (c->cmsg_level != SOL_SOCKET ||
			    c->cmsg_type != SCM_RIGHTS ||
			    c->cmsg_len < CMSG_LEN(0))
				continue;
			k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < k; i++, nfd++) {
				int f;

				memcpy(&f, CMSG_DATA(c) + i * sizeof(int),
				    sizeof(int));
				if (fd < 0)
					fd = f;
				else
					close(f);
			}
		}
		r = 0;
		if ((mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || nfd > 1 ||
		    n != (ssize_t)sizeof(resp) || resp.magic != PH_MAGIC ||
		    resp.err > 0 || resp.seq > want)
			r = -EPROTO;
		else if (resp.seq < want)
			ph->st.stale++;
		if (r < 0 || resp.seq < want) {
			if (fd >= 0)
				close(fd);
			if (r < 0)
				return r;
			continue;
		}
		*ret_err = resp.err;
		if (resp.err == 0 && ret_fd) {
			if (fd < 0)
				return -EPROTO;
			*ret_fd = fd;
		} else if (fd >= 0) {
			close(fd);
		}
		return 0;
	}
}

/* The channel is out of step or gone: close it, for good. Once. */
static int
ph_dead(struct privhelper *ph, int r, const char *what)
{
	if (ph->fd < 0)
		return r;
	log_warnx("privileged helper (pid %d): %s: %s; its channel is closed, "
		  "later requests fail (EPIPE)",
	    (int)ph->pid, what, strerror(-r));
	close(ph->fd);
	ph->fd = -1;
	ph->st.dead = r;
	return r;
}

/* The helper's first message: confined (0) or why not. */
static int
ph_ready(struct privhelper *ph)
{
	int err = 0, r;

	if ((r = ph_recv(ph, 0, ph_deadline(ph), &err, NULL)) < 0)
		return r;
	return err;
}

struct privhelper *privhelper_stop(struct privhelper *ph);

/*
 * Fork the helper. Call while the daemon has one thread and still has its
 * privileges (before vitalsd_setup). proc_root: where PH_OPEN opens;
 * sys_root: the page_idle bitmap; tracefs: the tracefs root whose
 * instances/ PH_RMDIR may touch (NULL: none).
 */
int
privhelper_start(const char *proc_root, const char *sys_root,
    const char *tracefs, struct privhelper **ret)
{
	struct ph_ctx x = { .fd = -1, .procfd = -1, .tracefd = -1 };
	struct privhelper *ph;
	char path[4096];
	int sv[2], r;
	pid_t parent = getpid(), pid;

	if ((ph = calloc(1, sizeof(*ph))) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&ph->lock, NULL);
	ph->timeout_ms = PH_TIMEOUT_MS;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		free(ph);
		return r;
	}
	x.procfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tracefs &&
	    snprintf(path, sizeof(path), "%s/instances", tracefs) <
		(int)sizeof(path))
		x.tracefd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(x.idle_path, sizeof(x.idle_path),
	    "%s/kernel/mm/page_idle/bitmap", sys_root);
	if (x.procfd < 0) {
		r = -errno;
		goto fail;
	}
	if ((pid = fork()) < 0) {
		r = -errno;
		goto fail;
	}
	if (pid == 0) {
		int fd;

		/* Only the pair's end and the two roots stay open. */
		for (fd = 3; fd < 1024; fd++)
			if (fd != sv[1] && fd != x.procfd && fd != x.tracefd)
				close(fd);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
		    getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, "vitalsd-helper", 0, 0, 0);
		signal(SIGINT, SIG_IGN); /* a terminal's ^C is the daemon's */
		/* confined, or not at all: the first answer says which */
		r = ph_confine();
		(void)ph_send(sv[1], r, 0, -1);
		if (r < 0)
			_exit(2);
		x.fd = sv[1];
		ph_serve(&x);
		_exit(0);
	}
	close(sv[1]);
	sv[1] = -1;
	close(x.procfd);
	x.procfd = -1;
	if (x.tracefd >= 0)
		close(x.tracefd);
	x.tracefd = -1;
	ph->fd = sv[0];
	ph->pid = pid;
	if ((r = ph_ready(ph)) < 0) {
		privhelper_stop(ph);
		return r;
	}
	*ret = ph;
	return 0;
fail:
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (x.procfd >= 0)
		close(x.procfd);
	if (x.tracefd >= 0)
		close(x.tracefd);
	free(ph);
	return r;
}

/* Close the pair (the helper exits on it) and reap it. */
struct privhelper *
privhelper_stop(struct privhelper *ph)
{
	int i;

	if (ph == NULL)
		return NULL;
	if (ph->fd >= 0)
		close(ph->fd);
	/* it exits on the closed pair; give it a moment, then insist */
	for (i = 0; i < 100; i++) {
		if (waitpid(ph->pid, NULL, WNOHANG) != 0)
			break;
		usleep(10000);
	}
	if (i == 100) {
		kill(ph->pid, SIGKILL);
		waitpid(ph->pid, NULL, 0);
	}
	pthread_mutex_destroy(&ph->lock);
	free(ph);
	return NULL;
}

pid_t
privhelper_pid(const struct privhelper *ph)
{
	return ph ? ph->pid : -1;
}

/* Send a whole message; the channel dies if it cannot. */
static int
ph_put(struct privhelper *ph, const void *buf, size_t len)
{
	ssize_t n;

	for (;;) {
		n = send(ph->fd, buf, len, MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		return ph_dead(ph, n < 0 ? -errno : -EPROTO, "send");
	}
}

/* One request, its answer and maybe an fd; -errno. */
static int
ph_call(struct privhelper *ph, const struct ph_req *rq, int *ret_fd)
{
	struct ph_req q = *rq;
	int64_t deadline;
	int err = 0, r;

	if (ph == NULL)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&ph->lock);
	ph->st.calls++;
	if (ph->fd < 0) {
		ph->st.refused++;
		r = -EPIPE;
		goto out;
	}
	q.seq = ++ph->seq;
	deadline = ph_deadline(ph);
	if ((r = ph_put(ph, &q, sizeof(q))) < 0)
		goto out;
	if ((r = ph_recv(ph, q.seq, deadline, &err, ret_fd)) < 0)
		r = ph_dead(ph, r,
		    r == -ETIMEDOUT ? "no answer in time" : "answer");
	else
		r = err;
out:
	pthread_mutex_unlock(&ph->lock);
	return r;
}

/* An fd of /proc/<pid>/<which> opened by the helper; starttime 0: any. */
int
privhelper_open(struct privhelper *ph, int32_t pid, uint64_t starttime,
    enum privhelper_file which, int *ret_fd)
{
	struct ph_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.magic = PH_MAGIC;
	rq.version = PH_VERSION;
	rq.op = PH_OPEN;
	rq.pid = pid;
	rq.which = (uint32_t)which;
	rq.starttime = starttime;
	return ph_call(ph, &rq, ret_fd);
}

/* <sys_root>/kernel/mm/page_idle/bitmap, read-write. */
int
privhelper_page_idle(struct privhelper *ph, int *ret_fd)
{
	struct ph_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.magic = PH_MAGIC;
	rq.version = PH_VERSION;
	rq.op = PH_IDLE;
	return ph_call(ph, &rq, ret_fd);
}

/* rmdir <tracefs>/instances/<name>; name must start with "vitals". */
int
privhelper_rmdir_instance(struct privhelper *ph, const char *name)
{
	struct ph_req rq;

	memset(&rq, 0, sizeof(rq));
	if (strlen(name) >= sizeof(rq.name))
		return -ENAMETOOLONG;
	rq.magic = PH_MAGIC;
	rq.version = PH_VERSION;
	rq.op = PH_RMDIR;
	strcpy(rq.name, name);
	return ph_call(ph, &rq, NULL);
}

/* Tests: send raw bytes as a request, get the helper's errno back. */
int
privhelper_raw(struct privhelper *ph, const void *buf, size_t len)
{
	const size_t end = offsetof(struct ph_req, seq) + sizeof(uint64_t);
	uint64_t want = 0;
	int err = 0, r;

	if (len >= end)
		memcpy(&want, (const char *)buf + offsetof(struct ph_req, seq),
		    sizeof(want));
	pthread_mutex_lock(&ph->lock);
	if (ph->fd < 0)
		r = -EPIPE;
	else if ((r = ph_put(ph, buf, len)) == 0 &&
	    (r = ph_recv(ph, want, ph_deadline(ph), &err, NULL)) == 0)
		r = err;
	else
		r = ph_dead(ph, r, "raw answer");
	pthread_mutex_unlock(&ph->lock);
	return r;
}

/* Tests: an open whose caller "gave up": its answer (and fd) stays queued,
 * under an earlier sequence number, for the next call to discard. */
int
privhelper_send_stale(struct privhelper *ph, int32_t pid,
    enum privhelper_file which)
{
	struct ph_req rq;
	int r;

	memset(&rq, 0, sizeof(rq));
	rq.magic = PH_MAGIC;
	rq.version = PH_VERSION;
	rq.op = PH_OPEN;
	rq.pid = pid;
	rq.which = (uint32_t)which;
	pthread_mutex_lock(&ph->lock);
	rq.seq = ph->seq; /* already answered: the next call's is higher */
	r = ph->fd < 0 ? -EPIPE : ph_put(ph, &rq, sizeof(rq));
	pthread_mutex_unlock(&ph->lock);
	return r;
}

/* Per-call timeout in ms (default PH_TIMEOUT_MS); tests shorten it. */
void
privhelper_set_timeout(struct privhelper *ph, int ms)
{
	pthread_mutex_lock(&ph->lock);
	ph->timeout_ms = ms > 0 ? ms : PH_TIMEOUT_MS;
	pthread_mutex_unlock(&ph->lock);
}

void
privhelper_stats(struct privhelper *ph, struct privhelper_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (ph == NULL)
		return;
	pthread_mutex_lock(&ph->lock);
	*ret = ph->st;
	pthread_mutex_unlock(&ph->lock);
}

size_t
privhelper_req_size(void)
{
	return sizeof(struct ph_req);
}
