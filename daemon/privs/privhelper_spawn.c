/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The privileged helper's spawner: the process that runs perfetto for
 * heapprofd sessions while the daemon itself runs under a seccomp filter
 * that allows neither fork nor execve (doc/privileges.md, doc/heapprofd.md).
 *
 * It is forked from the daemon before setup, while the daemon has one
 * thread and its privileges, and then:
 *   - opens the perfetto binary once (O_PATH): the only program it will
 *     ever run; no message carries a path;
 *   - takes the service user's uid, gid and groups (what perfetto ran
 *     with when the daemon forked it itself), empties its bounding,
 *     permitted, effective and ambient capability sets, sets no_new_privs;
 *   - installs the spawn filter (below), which perfetto inherits;
 *   - serves two requests over a SOCK_SEQPACKET pair:
 *       SP_SPAWN   three fds (config pipe for stdin, trace file for
 *                  stdout, log file for stderr) and a backstop timeout:
 *                  fork, `perfetto -c - -o -` by execveat() of the fd
 *                  opened at start; answered SP_STARTED with the pid;
 *       SP_SIGNAL  SIGTERM or SIGKILL to a child it spawned and has not
 *                  reaped (so the pid cannot have been reused);
 *     and reports each child's end (SP_EXITED, the wait status).
 *
 * Requests are fixed-size, numbered one more than the last, with zeroed
 * reserved bytes and exactly the fds their op takes (checked by type and
 * access mode). Anything else is hostile: answered EINVAL, the children
 * killed, the channel closed and the spawner gone; the daemon then reports
 * the spawn state "helper lost". The daemon side checks the answers the
 * same way and watches the channel on its event loop (no blocking wait).
 *
 * The spawn filter cannot be an allowlist: seccomp filters are inherited
 * across fork and execve and never removed, so perfetto runs under it. It
 * refuses (EPERM) what neither the spawner nor perfetto needs — the kernel
 * surfaces the daemon's own filter also closes (ptrace, bpf,
 * perf_event_open, userfaultfd, io_uring, keyrings, mounts and namespaces,
 * modules, kexec, identity changes) — and execve by path: execveat() is
 * allowed only on the perfetto fd with AT_EMPTY_PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/util.h"
#include "privs/privs.h"

static int privhelper_spawn_close(struct ph_spawner *sp, int why);

#define SP_MAGIC 0x56505331u /* "VPS1" */
#define SP_VERSION 1
#define SP_READY_MS 5000
#define SP_CHILDREN 2
/* the longest session (24 h) with room for grace and kill delays */
#define SP_TIMEOUT_MAX_MS (25u * 3600 * 1000)

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

enum sp_op { SP_SPAWN = 1, SP_SIGNAL = 2 };
enum sp_kind { SP_READY = 0, SP_STARTED = 1, SP_EXITED = 2, SP_ANSWER = 3 };

struct sp_req {
	uint32_t magic;
	uint16_t version;
	uint16_t op;	     /* enum sp_op */
	uint64_t seq;	     /* exactly one more than the last request's */
	uint64_t session;    /* SP_SIGNAL: the seq of its SP_SPAWN */
	int32_t sig;	     /* SP_SIGNAL: SIGTERM or SIGKILL */
	uint32_t timeout_ms; /* SP_SPAWN: SIGKILL from the spawner after */
	uint8_t zero[32];    /* reserved: zero */
};

struct sp_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t kind;	/* enum sp_kind */
	uint64_t seq;	/* the request's; SP_EXITED: the session's */
	int32_t err;	/* 0 or -errno */
	int32_t pid;	/* SP_STARTED */
	int32_t status; /* SP_EXITED: the wait status */
	uint32_t flags; /* SP_EXITED: PH_SPAWN_BACKSTOP */
};

_Static_assert(sizeof(struct sp_req) == 64, "sp_req layout");
_Static_assert(sizeof(struct sp_msg) == 32, "sp_msg layout");

struct ph_spawner {
	int fd;	   /* our end; -1 once closed */
	pid_t pid; /* the spawner */
	uint64_t seq;
	int dead; /* 0, or why the channel closed */
};

/* ----------------------------------------------------- spawner process */

struct sp_child {
	uint64_t session; /* 0: free */
	pid_t pid;
	int pidfd;
	int64_t deadline; /* CLOCK_MONOTONIC ns: the backstop */
	bool backstop;	  /* the spawner killed it at the deadline */
};

struct sp_ctx {
	int fd;
	int exefd;
	uint64_t seq; /* the last request's */
	struct sp_child ch[SP_CHILDREN];
	char *const *envp;
};

static int
sp_send(int fd, uint16_t kind, uint64_t seq, int err, int pid, int status,
    uint32_t flags)
{
	struct sp_msg m = { SP_MAGIC, SP_VERSION, kind, seq, err, pid, status,
		flags };

	return send(fd, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ?
	    0 :
	    -errno;
}

static bool
sp_fd_is(int fd, mode_t type, bool write)
{
	struct stat sb;
	int fl;

	if (fstat(fd, &sb) < 0 || (sb.st_mode & S_IFMT) != type ||
	    (fl = fcntl(fd, F_GETFL)) < 0)
		return false;
	fl &= O_ACCMODE;
	return write ? fl == O_WRONLY || fl == O_RDWR :
		       fl == O_RDONLY || fl == O_RDWR;
}

static bool
sp_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The child between fork and exec: its stdio, then perfetto. */
static void __attribute__((noreturn))
sp_exec(const struct sp_ctx *x, const int fds[3])
{
	static char *const argv[] = { "perfetto", "-c", "-", "-o", "-", NULL };
	sigset_t none;
	int i;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* the received fds are above 2 (0-2 stay open here): dup3 onto
	 * 0-2 clears close-on-exec there; everything else closes on exec */
	for (i = 0; i < 3; i++)
		if (dup3(fds[i], i, 0) < 0)
			_exit(126);
	syscall(SYS_execveat, x->exefd, "", argv, x->envp, AT_EMPTY_PATH);
	_exit(127);
}

static int
sp_spawn(struct sp_ctx *x, const struct sp_req *rq, const int fds[3],
    pid_t *ret_pid)
{
	struct sp_child *c = NULL;
	pid_t pid;
	int pidfd, i;

	for (i = 0; i < SP_CHILDREN; i++)
		if (x->ch[i].session == 0 && c == NULL)
			c = &x->ch[i];
	if (c == NULL)
		return -EBUSY;
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0)
		sp_exec(x, fds);
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		int e = -errno;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return e;
	}
	c->session = rq->seq;
	c->pid = pid;
	c->pidfd = pidfd;
	c->deadline = clock_ns(CLOCK_MONOTONIC) +
	    (int64_t)rq->timeout_ms * 1000000;
	c->backstop = false;
	*ret_pid = pid;
	return 0;
}

static int
sp_signal(struct sp_ctx *x, const struct sp_req *rq)
{
	int i;

	for (i = 0; i < SP_CHILDREN; i++)
		if (x->ch[i].session && x->ch[i].session == rq->session)
			return kill(x->ch[i].pid, rq->sig) < 0 ? -errno : 0;
	return -ESRCH; /* ended (its SP_EXITED is on the way) or never was */
}

/*
 * One request. 1: served; 0: the daemon closed the channel; -1: hostile
 * (answered EINVAL; the caller ends everything).
 */
static int
sp_request(struct sp_ctx *x)
{
	struct sp_req rq;
	char buf[sizeof(rq) + 64];
	struct iovec iov = { buf, sizeof(buf) };
	union {
		char b[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.b,
		.msg_controllen = sizeof(u.b) };
	struct cmsghdr *c;
	int fds[4] = { -1, -1, -1, -1 }, nfd = 0, r = 0, i;
	bool ok;
	uint64_t seq = 0;
	pid_t pid = 0;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	n = recvmsg(x->fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		for (k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     k++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + k * sizeof(int), sizeof(f));
			if (nfd < 4)
				fds[nfd] = f;
			else
				close(f);
			nfd++;
		}
	}
	memset(&rq, 0, sizeof(rq));
	memcpy(&rq, buf, (size_t)n < sizeof(rq) ? (size_t)n : sizeof(rq));
	if ((size_t)n >= offsetof(struct sp_req, seq) + sizeof(rq.seq))
		seq = rq.seq;
	/* exactly this layout, the next number, nothing in reserve */
	ok = !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
	    (size_t)n == sizeof(rq) && rq.magic == SP_MAGIC &&
	    rq.version == SP_VERSION && rq.seq == x->seq + 1 &&
	    sp_zero(rq.zero, sizeof(rq.zero));
	if (ok && rq.op == SP_SPAWN)
		ok = nfd == 3 && rq.session == 0 && rq.sig == 0 &&
		    rq.timeout_ms > 0 && rq.timeout_ms <= SP_TIMEOUT_MAX_MS &&
		    sp_fd_is(fds[0], S_IFIFO, false) &&
		    sp_fd_is(fds[1], S_IFREG, true) &&
		    sp_fd_is(fds[2], S_IFREG, true);
	else if (ok && rq.op == SP_SIGNAL)
		ok = nfd == 0 && rq.timeout_ms == 0 && rq.session > 0 &&
		    rq.session <= x->seq &&
		    (rq.sig == SIGTERM || rq.sig == SIGKILL);
	else
		ok = false;
	if (ok) {
		x->seq = rq.seq;
		if (rq.op == SP_SPAWN) {
			r = sp_spawn(x, &rq, fds, &pid);
			(void)sp_send(x->fd, SP_STARTED, seq, r, (int)pid, 0,
			    0);
		} else {
			r = sp_signal(x, &rq);
			(void)sp_send(x->fd, SP_ANSWER, seq, r, 0, 0, 0);
		}
	} else {
		(void)sp_send(x->fd, SP_ANSWER, seq, -EINVAL, 0, 0, 0);
	}
	for (i = 0; i < nfd && i < 4; i++)
		close(fds[i]);
	return ok ? 1 : -1;
}

/* Reap what ended; SIGKILL what outlived its backstop. */
static void
sp_children(struct sp_ctx *x, const struct pollfd *p)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	int i, status;

	for (i = 0; i < SP_CHILDREN; i++) {
		struct sp_child *c = &x->ch[i];

		if (c->session == 0)
			continue;
		if (!c->backstop && now >= c->deadline) {
			c->backstop = true;
			kill(c->pid, SIGKILL);
		}
		if (!(p[1 + i].revents & (POLLIN | POLLHUP)))
			continue;
		if (waitpid(c->pid, &status, WNOHANG) != c->pid)
			continue;
		(void)sp_send(x->fd, SP_EXITED, c->session, 0, (int)c->pid,
		    status, c->backstop ? PH_SPAWN_BACKSTOP : 0);
		close(c->pidfd);
		c->session = 0;
	}
}

static void
sp_serve(struct sp_ctx *x)
{
	int i, r = 1;

	while (r > 0) {
		struct pollfd p[1 + SP_CHILDREN];
		int64_t now = clock_ns(CLOCK_MONOTONIC), wait = -1;

		p[0] = (struct pollfd){ x->fd, POLLIN, 0 };
		for (i = 0; i < SP_CHILDREN; i++) {
			struct sp_child *c = &x->ch[i];
			int64_t left;

			p[1 + i] = (struct pollfd){ c->session ? c->pidfd : -1,
				POLLIN, 0 };
			if (c->session == 0 || c->backstop)
				continue;
			left = (c->deadline - now + 999999) / 1000000;
			if (left < 0)
				left = 0;
			if (wait < 0 || left < wait)
				wait = left;
		}
		if (poll(p, 1 + SP_CHILDREN,
			wait > INT32_MAX ? INT32_MAX : (int)wait) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		sp_children(x, p);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			r = sp_request(x);
	}
	/* Nobody watches the children any more. The daemon closing the
	 * channel lets perfetto stop and write its file; a hostile daemon
	 * gets nothing more out of them. */
	for (i = 0; i < SP_CHILDREN; i++) {
		if (x->ch[i].session == 0)
			continue;
		kill(x->ch[i].pid, r < 0 ? SIGKILL : SIGTERM);
		if (r < 0)
			waitpid(x->ch[i].pid, NULL, 0);
	}
}

#define SP_ALLOW(nr)                                               \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(nr), 0, 1), \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SP_ARG(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define SP_ARG(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

/* Refused whatever the arguments: neither the spawner nor perfetto (a
 * client of traced over a socket) uses them. */
static const long sp_denied[] = {
	__NR_execve,
	__NR_ptrace,
	__NR_process_vm_readv,
	__NR_process_vm_writev,
	__NR_kcmp,
	__NR_bpf,
	__NR_perf_event_open,
	__NR_userfaultfd,
	__NR_keyctl,
	__NR_add_key,
	__NR_request_key,
	__NR_mount,
	__NR_umount2,
	__NR_pivot_root,
	__NR_chroot,
	__NR_setns,
	__NR_unshare,
	__NR_init_module,
	__NR_finit_module,
	__NR_delete_module,
	__NR_kexec_load,
	__NR_reboot,
	__NR_swapon,
	__NR_swapoff,
	__NR_acct,
	__NR_quotactl,
	__NR_open_by_handle_at,
	__NR_name_to_handle_at,
	__NR_settimeofday,
	__NR_clock_settime,
	__NR_clock_adjtime,
	__NR_adjtimex,
	__NR_syslog,
	__NR_vhangup,
	__NR_personality,
	__NR_setuid,
	__NR_setgid,
	__NR_setreuid,
	__NR_setregid,
	__NR_setresuid,
	__NR_setresgid,
	__NR_setgroups,
	__NR_setfsuid,
	__NR_setfsgid,
	__NR_capset,
	__NR_fanotify_init,
#ifdef __NR_kexec_file_load
	__NR_kexec_file_load,
#endif
#ifdef __NR_pidfd_getfd
	__NR_pidfd_getfd,
#endif
#ifdef __NR_io_uring_setup
	__NR_io_uring_setup,
	__NR_io_uring_enter,
	__NR_io_uring_register,
#endif
#ifdef __NR_open_tree
	__NR_open_tree,
	__NR_move_mount,
	__NR_fsopen,
	__NR_fsconfig,
	__NR_fsmount,
	__NR_fspick,
#endif
#ifdef __NR_mount_setattr
	__NR_mount_setattr,
#endif
#ifdef __x86_64__
	__NR_iopl,
	__NR_ioperm,
	__NR_modify_ldt,
	__NR_uselib,
	__NR_ustat,
	__NR_sysfs,
#endif
};

#define SP_NDENIED (sizeof(sp_denied) / sizeof(sp_denied[0]))
#define SP_NS_FLAGS                                                  \
	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	    CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

static int
sp_filter(int exefd)
{
#if defined(__x86_64__) || defined(__aarch64__)
	struct sock_filter f[32 + 2 * SP_NDENIED];
	struct sock_fprog prog = { 0, f };
	size_t n = 0, i;

#define EMIT(...) (f[n++] = (struct sock_filter)__VA_ARGS__)
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, arch)));
#ifdef __x86_64__
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
#else
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0));
#endif
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, nr)));
#ifdef __x86_64__
	EMIT(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
	for (i = 0; i < SP_NDENIED; i++) {
		EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)sp_denied[i],
		    0, 1));
		EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
	}
	/* execveat: the perfetto fd, by itself (AT_EMPTY_PATH), only */
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 0, 5));
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SP_ARG(0)));
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)exefd, 0, 2));
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SP_ARG(4)));
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AT_EMPTY_PATH, 1, 0));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	/* clone: processes and threads, no new namespaces */
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, nr)));
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3));
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SP_ARG(0)));
	EMIT(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SP_NS_FLAGS, 0, 1));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
	/* clone3's flags are behind a pointer: ENOSYS, the C library falls
	 * back to clone */
	EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, nr)));
	EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
	EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
#undef EMIT
	prog.len = (unsigned short)n;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ?
	    -errno :
	    0;
#else
	(void)exefd;
	return -EOPNOTSUPP;
#endif
}

/* The service user's identity, no capability anywhere, no_new_privs. */
static int
sp_confine(const struct privs_req *who)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2];
	unsigned cap;

	for (cap = 0; cap < CAPS_MAX; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EINVAL && errno != EPERM)
			return -errno;
	if (who && who->drop) {
		if (setgroups(who->ngroups, (const gid_t *)who->groups) < 0 ||
		    setresgid(who->gid, who->gid, who->gid) < 0 ||
		    setresuid(who->uid, who->uid, who->uid) < 0)
			return -errno;
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(c, 0, sizeof(c));
	if (syscall(SYS_capset, &h, c) < 0)
		return -errno;
	/* an empty bounding set is what makes an exec by uid 0 gain
	 * nothing: check it took */
	for (cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
			return -EPERM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* What the daemon was given for itself stays with it. */
static void
sp_clean_env(void)
{
	static const char *const names[] = { "LISTEN_PID", "LISTEN_FDS",
		"LISTEN_FDNAMES", "NOTIFY_SOCKET", "ANDROID_SOCKET_vitalsd" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unsetenv(names[i]);
}

extern char **environ;

static void __attribute__((noreturn))
sp_main(int fd, const char *perfetto, const struct privs_req *who, pid_t parent)
{
	struct sp_ctx x = { .fd = fd, .exefd = -1 };
	struct stat sb;
	int r = 0, i;

	/* Only the pair's end and stdio stay open. */
	for (i = 3; i < 1024; i++)
		if (i != fd)
			close(i);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    getppid() != parent)
		_exit(1);
	prctl(PR_SET_NAME, "vitalsd-spawn", 0, 0, 0);
	signal(SIGINT, SIG_IGN); /* a terminal's ^C is the daemon's */
	if ((x.exefd = open(perfetto, O_PATH | O_CLOEXEC)) < 0)
		r = -errno;
	else if (fstat(x.exefd, &sb) < 0)
		r = -errno;
	else if (!S_ISREG(sb.st_mode) || !(sb.st_mode & 0111))
		r = -EACCES;
	sp_clean_env();
	x.envp = environ;
	if (r == 0)
		r = sp_confine(who);
	if (r == 0)
		r = sp_filter(x.exefd);
	(void)sp_send(fd, SP_READY, 0, r, 0, 0, 0);
	if (r < 0)
		_exit(2);
	for (i = 0; i < SP_CHILDREN; i++)
		x.ch[i].pidfd = -1;
	sp_serve(&x);
	_exit(0);
}

/* -------------------------------------------------------- daemon side */

/*
 * One message from the spawner, checked: 0 and *ret; -EAGAIN: none now;
 * -EPIPE (closed), -EPROTO (malformed, carries an fd, answers a request
 * never made): the channel is closed, for good.
 */
static int
sp_read(struct ph_spawner *sp, int flags, struct ph_spawn_event *ret)
{
	struct sp_msg m;
	char buf[sizeof(m) + 16];
	struct iovec iov = { buf, sizeof(buf) };
	union {
		char b[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.b,
		.msg_controllen = sizeof(u.b) };
	struct cmsghdr *c;
	bool bad = false;
	ssize_t n;

	if (sp->fd < 0)
		return -EPIPE;
	memset(&u, 0, sizeof(u));
	n = recvmsg(sp->fd, &mh, MSG_CMSG_CLOEXEC | flags);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -EAGAIN;
	if (n < 0)
		return privhelper_spawn_close(sp, -errno);
	if (n == 0)
		return privhelper_spawn_close(sp, -EPIPE);
	/* it never sends fds: any that came are closed, and it was wrong */
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		for (k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     k++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + k * sizeof(int), sizeof(f));
			close(f);
			bad = true;
		}
	}
	memcpy(&m, buf, sizeof(m) < (size_t)n ? sizeof(m) : (size_t)n);
	if (bad || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    n != (ssize_t)sizeof(m) || m.magic != SP_MAGIC ||
	    m.version != SP_VERSION || m.err > 0 || m.seq > sp->seq ||
	    (m.kind != SP_STARTED && m.kind != SP_EXITED &&
		m.kind != SP_ANSWER && !(m.kind == SP_READY && sp->seq == 0)))
		return privhelper_spawn_close(sp, -EPROTO);
	memset(ret, 0, sizeof(*ret));
	ret->kind = m.kind == SP_STARTED ? PH_SPAWN_STARTED :
	    m.kind == SP_EXITED		 ? PH_SPAWN_EXITED :
					   PH_SPAWN_ANSWER;
	ret->seq = m.seq;
	ret->err = m.err;
	ret->pid = m.pid;
	ret->status = m.status;
	ret->flags = m.flags;
	return 0;
}

int
privhelper_spawn_read(struct ph_spawner *sp, struct ph_spawn_event *ret)
{
	return sp_read(sp, MSG_DONTWAIT, ret);
}

/* Wait up to ms for a message (shutdown and tests; never on the loop). */
int
privhelper_spawn_wait(struct ph_spawner *sp, int ms, struct ph_spawn_event *ret)
{
	int64_t until = clock_ns(CLOCK_MONOTONIC) + (int64_t)ms * 1000000;

	for (;;) {
		struct pollfd p;
		int64_t left = (until - clock_ns(CLOCK_MONOTONIC)) / 1000000;
		int r;

		if (sp == NULL || sp->fd < 0)
			return -EPIPE;
		if (left <= 0)
			return -ETIMEDOUT;
		p = (struct pollfd){ sp->fd, POLLIN, 0 };
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		if ((r = sp_read(sp, MSG_DONTWAIT, ret)) != -EAGAIN)
			return r;
	}
}

static int
privhelper_spawn_close(struct ph_spawner *sp, int why)
{
	if (sp->fd >= 0) {
		close(sp->fd);
		sp->fd = -1;
		sp->dead = why;
	}
	return why;
}

static int
sp_put(struct ph_spawner *sp, const void *buf, size_t len, const int *fds,
    unsigned nfds)
{
	struct iovec iov = { (void *)buf, len };
	union {
		char b[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (sp == NULL || sp->fd < 0)
		return -EPIPE;
	if (nfds > 4)
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.b;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	do
		n = sendmsg(sp->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	return privhelper_spawn_close(sp, n < 0 ? -errno : -EPROTO);
}

/*
 * Ask for `perfetto -c - -o -` with these stdin (a pipe holding the
 * config), stdout (the trace file) and stderr (the log): 0 and the
 * session's number (its SP_STARTED and SP_EXITED carry it), or -errno.
 * The answer comes later, through privhelper_spawn_read().
 */
int
privhelper_spawn_request(struct ph_spawner *sp, int fd_in, int fd_out,
    int fd_err, uint32_t timeout_ms, uint64_t *ret_session)
{
	struct sp_req rq;
	int fds[3] = { fd_in, fd_out, fd_err }, r;

	if (sp == NULL)
		return -EOPNOTSUPP;
	memset(&rq, 0, sizeof(rq));
	rq.magic = SP_MAGIC;
	rq.version = SP_VERSION;
	rq.op = SP_SPAWN;
	rq.seq = sp->seq + 1;
	rq.timeout_ms = timeout_ms;
	if ((r = sp_put(sp, &rq, sizeof(rq), fds, 3)) < 0)
		return r;
	sp->seq = rq.seq;
	*ret_session = rq.seq;
	return 0;
}

/* SIGTERM or SIGKILL to a session's perfetto; answered later. */
int
privhelper_spawn_signal(struct ph_spawner *sp, uint64_t session, int sig)
{
	struct sp_req rq;
	int r;

	if (sp == NULL)
		return -EOPNOTSUPP;
	memset(&rq, 0, sizeof(rq));
	rq.magic = SP_MAGIC;
	rq.version = SP_VERSION;
	rq.op = SP_SIGNAL;
	rq.seq = sp->seq + 1;
	rq.session = session;
	rq.sig = sig;
	if ((r = sp_put(sp, &rq, sizeof(rq), NULL, 0)) < 0)
		return r;
	sp->seq = rq.seq;
	return 0;
}

/* Tests: raw bytes (and fds) as a request; the numbering moves on as if
 * it were one. */
int
privhelper_spawn_raw(struct ph_spawner *sp, const void *buf, size_t len,
    const int *fds, unsigned nfds)
{
	int r;

	if ((r = sp_put(sp, buf, len, fds, nfds)) == 0)
		sp->seq++;
	return r;
}

/* Tests: a well-formed request as bytes, to be broken. */
size_t
privhelper_spawn_req(void *buf, size_t sz, unsigned op, uint64_t seq,
    uint64_t session, int sig, uint32_t timeout_ms)
{
	struct sp_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.magic = SP_MAGIC;
	rq.version = SP_VERSION;
	rq.op = (uint16_t)op;
	rq.seq = seq;
	rq.session = session;
	rq.sig = sig;
	rq.timeout_ms = timeout_ms;
	if (sz >= sizeof(rq))
		memcpy(buf, &rq, sizeof(rq));
	return sizeof(rq);
}

int
privhelper_spawn_fd(const struct ph_spawner *sp)
{
	return sp ? sp->fd : -1;
}

pid_t
privhelper_spawn_pid(const struct ph_spawner *sp)
{
	return sp ? sp->pid : -1;
}

struct ph_spawner *
privhelper_spawn_stop(struct ph_spawner *sp)
{
	int i;

	if (sp == NULL)
		return NULL;
	privhelper_spawn_close(sp, -EPIPE);
	for (i = 0; i < 100; i++) {
		if (waitpid(sp->pid, NULL, WNOHANG) != 0)
			break;
		usleep(10000);
	}
	if (i == 100) {
		kill(sp->pid, SIGKILL);
		waitpid(sp->pid, NULL, 0);
	}
	free(sp);
	return NULL;
}

/*
 * Fork the spawner. Call while the daemon has one thread and still has
 * its privileges (before vitalsd_setup): perfetto is the binary it will
 * run, who the identity it runs it with (NULL or !who->drop: the
 * daemon's uid, without capabilities). -errno: the spawner's own
 * reason (the binary missing, the drop refused) or the fork's.
 */
int
privhelper_spawn_start(const char *perfetto, const struct privs_req *who,
    struct ph_spawner **ret)
{
	struct ph_spawn_event ev;
	struct ph_spawner *sp;
	pid_t parent = getpid(), pid;
	int sv[2], r;

	if ((sp = calloc(1, sizeof(*sp))) == NULL)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		free(sp);
		return r;
	}
	if ((pid = fork()) < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		free(sp);
		return r;
	}
	if (pid == 0)
		sp_main(sv[1], perfetto, who, parent);
	close(sv[1]);
	sp->fd = sv[0];
	sp->pid = pid;
	/* the first message: confined and ready (0), or why not */
	if ((r = privhelper_spawn_wait(sp, SP_READY_MS, &ev)) == 0 &&
	    (ev.kind != PH_SPAWN_ANSWER || ev.seq != 0))
		r = -EPROTO;
	if (r == 0)
		r = ev.err;
	if (r < 0) {
		privhelper_spawn_stop(sp);
		return r;
	}
	*ret = sp;
	return 0;
}
