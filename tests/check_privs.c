/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The privilege drop, the seccomp filter and hidepid, on the real kernel
 * (root: CI runs as root, the suite exits 77 only when it is not).
 *
 * - the drop in a process of its own: what it keeps (a BPF map fd opened
 *   before, every process's /proc files) and what it lost (a root-owned
 *   file, loading a BPF program, opening a pin, root itself);
 * - the real daemon started as root with --user/--group: kernel-reported
 *   credentials, it still samples root's and another user's processes,
 *   still drains its pinned BPF maps, still serves its socket (made by
 *   itself, or handed over by Android init or systemd);
 * - the seccomp filter: allowed calls work, others fail with EPERM;
 * - hidepid: a private mount namespace with a procfs mounted
 *   hidepid=2,gid=G, the daemon's collector run in it as a dropped uid with
 *   and without G: all processes against only its own, and the hidden
 *   ones counted.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <linux/bpf.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "harness.h"
#include "testutil.h"
#include "vitalsd.h"

#define RECV_MAX (64u << 20)

/* Test ids: no passwd entry is needed for them. */
static uint32_t test_uid, test_gid, other_uid;
static char *tmp;
static char bpffs[256];

static void
setup(void)
{
	uint32_t base = 61000 + (uint32_t)(getpid() % 1000);

	test_uid = base;
	test_gid = base + 1000;
	other_uid = base + 2000;
	ck_assert_ptr_nonnull(tmp = tu_mkdtemp("privs"));
	/* the dropped daemon must reach its state directory below */
	ck_assert_int_eq(chmod(tmp, 0755), 0);
	bpffs[0] = '\0';
}

static void
teardown(void)
{
	if (bpffs[0]) {
		tu_rmtree(bpffs);
		rmdir(bpffs);
	}
	tu_rmtree(tmp);
	free(tmp);
}

/* A private pin directory on a bpffs; "" when there is no bpffs. */
static void
make_bpffs(void)
{
	char p[] = "/sys/fs/bpf/vitals-privs-XXXXXX";

	if (access("/sys/fs/bpf", F_OK) != 0)
		mkdir("/sys/fs/bpf", 0755);
	if (mkdtemp(p) == NULL) {
		(void)mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
		ck_assert_ptr_nonnull(mkdtemp(p));
	}
	snprintf(bpffs, sizeof(bpffs), "%s", p);
}

static long
sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* A busy process; uid != 0: it runs as that uid. Killed by the caller. */
static pid_t
burner(uint32_t uid)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		volatile uint64_t x = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (uid &&
		    (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
			setresuid(uid, uid, uid) < 0))
			_exit(1);
		for (;;)
			x++;
	}
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Run fn in a child; its failure message (or "") comes back. */
static void
in_child(void (*fn)(int wfd, void *arg), void *arg, char *msg, size_t msgsz)
{
	int p[2], status;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		fn(p[1], arg);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], msg, msgsz - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		msg[0] == '\0',
	    "child: %s (status %d)", msg, status);
}

#define CHILD_CHECK(wfd, cond, ...)                  \
	do {                                         \
		if (!(cond)) {                       \
			dprintf((wfd), __VA_ARGS__); \
			_exit(1);                    \
		}                                    \
	} while (0)

/* ------------------------------------------------------------- pure */

START_TEST(test_cap_names)
{
	uint64_t m;
	char buf[256];

	ck_assert_int_eq(caps_parse("sys_ptrace, CAP_DAC_READ_SEARCH "
				    "BPF",
			     &m),
	    0);
	ck_assert_uint_eq(m, (1ull << 19) | (1ull << 2) | (1ull << 39));
	ck_assert_int_eq(caps_format(m, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "dac_read_search,sys_ptrace,bpf");
	ck_assert_int_eq(caps_parse("none", &m), 0);
	ck_assert_uint_eq(m, 0);
	ck_assert_int_eq(caps_parse("", &m), 0);
	ck_assert_uint_eq(m, 0);
	ck_assert_int_eq(caps_parse("sys_ptrace,nonsense", &m), -EINVAL);
	ck_assert_int_eq(caps_parse("64", &m), -ERANGE);
	ck_assert_int_eq(caps_format(0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "none");
	ck_assert_int_eq(caps_format(m | 3, buf, 8), -ENOSPC);
}
END_TEST

START_TEST(test_resolve)
{
	struct privs_req rq;
	char err[256];

	ck_assert_int_eq(privs_resolve(NULL, NULL, 0, 0, &rq, err, sizeof(err)),
	    0);
	ck_assert(!rq.drop);
	ck_assert_int_eq(privs_resolve("nobody", "nogroup,4242", 1u << 2,
			     PRIVS_SECCOMP_ON, &rq, err, sizeof(err)),
	    0);
	ck_assert(rq.drop);
	ck_assert_uint_eq(rq.uid, 65534);
	ck_assert_uint_eq(rq.gid, 65534); /* nobody's primary group */
	ck_assert_uint_eq(rq.ngroups, 2);
	ck_assert_uint_eq(rq.groups[1], 4242);
	ck_assert_uint_eq(rq.keep, 1u << 2);
	/* a number without a passwd entry: its group is the same number
	 * (Android's AIDs), the groups given are supplementary */
	ck_assert_int_eq(privs_resolve("61234", "61235", 0, 0, &rq, err,
			     sizeof(err)),
	    0);
	ck_assert_uint_eq(rq.uid, 61234);
	ck_assert_uint_eq(rq.gid, 61234);
	ck_assert_uint_eq(rq.ngroups, 1);
	ck_assert_uint_eq(rq.groups[0], 61235);
	ck_assert_int_eq(privs_resolve("61234", NULL, 0, 0, &rq, err,
			     sizeof(err)),
	    0);
	ck_assert_uint_eq(rq.gid, 61234);
	/* refused: root, unknown names, groups without a user */
	ck_assert_int_lt(privs_resolve("root", NULL, 0, 0, &rq, err,
			     sizeof(err)),
	    0);
	ck_assert_ptr_nonnull(strstr(err, "root"));
	ck_assert_int_lt(privs_resolve("0", NULL, 0, 0, &rq, err, sizeof(err)),
	    0);
	ck_assert_int_lt(privs_resolve("no-such-user-vitals", NULL, 0, 0, &rq,
			     err, sizeof(err)),
	    0);
	ck_assert_ptr_nonnull(strstr(err, "no-such-user-vitals"));
	ck_assert_int_lt(privs_resolve("nobody", "no-such-group-vitals", 0, 0,
			     &rq, err, sizeof(err)),
	    0);
	ck_assert_ptr_nonnull(strstr(err, "no-such-group-vitals"));
	ck_assert_int_eq(privs_resolve(NULL, "nogroup", 0, 0, &rq, err,
			     sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(privs_resolve("nobody", "nogroup,root", 0, 0, &rq, err,
			     sizeof(err)),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "root"));
}
END_TEST

/* Config keys and flags reach the request. */
START_TEST(test_config_keys)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_ptr_null(cfg.user);
	ck_assert_uint_eq(cfg.seccomp, PRIVS_SECCOMP_OFF);
	ck_assert_int_eq(config_set(&cfg, "user", "vitalsd"), 0);
	ck_assert_int_eq(config_set(&cfg, "group", "readproc,readtracefs"), 0);
	ck_assert_int_eq(config_set(&cfg, "capabilities", "sys_ptrace"), 0);
	ck_assert_int_eq(config_set(&cfg, "seccomp", "on"), 0);
	ck_assert_str_eq(cfg.user, "vitalsd");
	ck_assert_str_eq(cfg.groups, "readproc,readtracefs");
	ck_assert_uint_eq(cfg.keep_caps, 1ull << 19);
	ck_assert_uint_eq(cfg.seccomp, PRIVS_SECCOMP_ON);
	ck_assert_int_eq(config_set(&cfg, "seccomp", "maybe"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "capabilities", "sys_pwn"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "user", "none"), 0);
	ck_assert_ptr_null(cfg.user);
	config_release(&cfg);
}
END_TEST

/* -------------------------------------------------- the drop in-process */

struct drop_arg {
	int map_fd;
	const char *pin;
	const char *rootfile;
	pid_t other; /* a process of another uid */
};

static volatile pid_t held_tid;

/* A thread that exists before the drop and waits. */
static void *
hold_fn(void *arg)
{
	char c;

	held_tid = (pid_t)syscall(SYS_gettid);
	while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void
drop_child(int wfd, void *arg)
{
	struct drop_arg *a = arg;
	struct privs_req rq;
	struct privs_state st;
	union bpf_attr at;
	struct bpf_insn prog[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct pid_stat ps;
	struct vbuf b = { 0 };
	uint32_t key = 0;
	uint64_t val = 0;
	char user[16], grp[16], path[64];
	int fd, procfd, hold[2];
	pthread_t th;

	snprintf(user, sizeof(user), "%u", test_uid);
	snprintf(grp, sizeof(grp), "%u", test_gid);
	CHILD_CHECK(wfd,
	    privs_resolve(user, grp, 0, PRIVS_SECCOMP_OFF, &rq, path,
		sizeof(path)) == 0,
	    "resolve: %s", path);
	rq.need_bpf = true;
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* a thread from before the drop, as setup's writer and query */
	CHILD_CHECK(wfd,
	    pipe(hold) == 0 &&
		pthread_create(&th, NULL, hold_fn, &hold[0]) == 0,
	    "thread");
	tu_sleep_ms(20);
	CHILD_CHECK(wfd, privs_drop(&rq, &st) == 0, "privs_drop failed");
	{
		/* it lost everything too, per-thread state included */
		uint64_t tid = 0;
		char tpath[64], line[256], wuid[64], wgid[64], wgrp[32];
		FILE *tf;
		bool bnd0 = false, eff0 = false, nnp = false;
		bool uid = false, gid = false, grp_ok = false;

		/* its own ids too: bionic's setresuid changes only the
		 * caller's, so each thread switches itself (compat.h) */
		snprintf(wuid, sizeof(wuid), "Uid:\t%u\t%u\t%u\t%u\n", test_uid,
		    test_uid, test_uid, test_uid);
		snprintf(wgid, sizeof(wgid), "Gid:\t%u\t%u\t%u\t%u\n", test_uid,
		    test_uid, test_uid, test_uid);
		snprintf(wgrp, sizeof(wgrp), "Groups:\t%u \n", test_gid);
		tid = (uint64_t)held_tid;
		snprintf(tpath, sizeof(tpath), "/proc/self/task/%llu/status",
		    (unsigned long long)tid);
		CHILD_CHECK(wfd, (tf = fopen(tpath, "r")) != NULL, "%s", tpath);
		while (fgets(line, sizeof(line), tf)) {
			bnd0 |= !strcmp(line, "CapBnd:\t0000000000000000\n");
			eff0 |= !strcmp(line, "CapEff:\t0000000000000000\n");
			nnp |= !strcmp(line, "NoNewPrivs:\t1\n");
			uid |= !strcmp(line, wuid);
			gid |= !strcmp(line, wgid);
			grp_ok |= !strcmp(line, wgrp);
		}
		fclose(tf);
		CHILD_CHECK(wfd, uid && gid && grp_ok,
		    "the other thread's ids: "
		    "uid %d gid %d groups %d",
		    uid, gid, grp_ok);
		CHILD_CHECK(wfd, bnd0 && eff0 && nnp,
		    "the other thread kept "
		    "bounding %d effective %d nnp %d",
		    !bnd0, !eff0, !nnp);
	}

	/* what the kernel says now */
	CHILD_CHECK(wfd, getuid() == test_uid && geteuid() == test_uid,
	    "uid %u", getuid());
	CHILD_CHECK(wfd, getgid() == test_uid, "gid %u", getgid());
	{
		gid_t g[4];

		CHILD_CHECK(wfd, getgroups(4, g) == 1 && g[0] == test_gid,
		    "supplementary groups");
	}
	CHILD_CHECK(wfd, st.verified && st.dropped, "not verified");
	CHILD_CHECK(wfd,
	    st.cap_eff == st.cap_auto && st.cap_prm == st.cap_auto &&
		st.cap_inh == 0 && st.cap_amb == 0 &&
		(st.cap_bnd & ~st.cap_auto) == 0,
	    "capabilities left: eff %llx "
	    "bnd %llx",
	    (unsigned long long)st.cap_eff, (unsigned long long)st.cap_bnd);
	CHILD_CHECK(wfd, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1,
	    "no_new_privs not set");

	/* kept: the map fd opened before the drop reads */
	memset(&at, 0, sizeof(at));
	at.map_fd = (uint32_t)a->map_fd;
	at.key = (uint64_t)(uintptr_t)&key;
	at.value = (uint64_t)(uintptr_t)&val;
	CHILD_CHECK(wfd, sys_bpf(BPF_MAP_LOOKUP_ELEM, &at) == 0 && val == 42,
	    "pinned map read after the drop: %s (value %llu)", strerror(errno),
	    (unsigned long long)val);
	/* kept: every process's /proc files, root's and another user's */
	CHILD_CHECK(wfd,
	    read_at(procfd, "1/stat", &b) == 0 &&
		pidstat_parse(b.p, b.len, &ps) == 0 && ps.pid == 1,
	    "/proc/1/stat after the drop: %s", strerror(errno));
	snprintf(path, sizeof(path), "%d/stat", (int)a->other);
	CHILD_CHECK(wfd,
	    read_at(procfd, path, &b) == 0 &&
		pidstat_parse(b.p, b.len, &ps) == 0 && ps.pid == a->other,
	    "another user's stat after the drop");
	snprintf(path, sizeof(path), "%d/status", (int)a->other);
	CHILD_CHECK(wfd, read_at(procfd, path, &b) == 0,
	    "another user's status after the drop");
	snprintf(path, sizeof(path), "%d/cmdline", (int)a->other);
	CHILD_CHECK(wfd, read_at(procfd, path, &b) == 0,
	    "another user's cmdline after the drop");
	vbuf_release(&b);

	/* lost: writing a root-owned file */
	fd = open(a->rootfile, O_WRONLY | O_CLOEXEC);
	CHILD_CHECK(wfd, fd < 0 && errno == EACCES,
	    "root-owned file opened for writing (%s)", strerror(errno));
	/* lost: loading a BPF program, opening a pin, making a map */
	memset(&at, 0, sizeof(at));
	at.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	at.insns = (uint64_t)(uintptr_t)prog;
	at.insn_cnt = 2;
	at.license = (uint64_t)(uintptr_t) "GPL";
	fd = (int)sys_bpf(BPF_PROG_LOAD, &at);
	CHILD_CHECK(wfd, fd < 0 && errno == EPERM,
	    "BPF program loaded after the drop (%s)", strerror(errno));
	memset(&at, 0, sizeof(at));
	at.pathname = (uint64_t)(uintptr_t)a->pin;
	fd = (int)sys_bpf(BPF_OBJ_GET, &at);
	CHILD_CHECK(wfd, fd < 0 && (errno == EACCES || errno == EPERM),
	    "root's pin opened after the drop (%s)", strerror(errno));
	/* lost: root, for good */
	CHILD_CHECK(wfd, setuid(0) < 0 && errno == EPERM, "setuid(0) worked");
	CHILD_CHECK(wfd, setresuid(0, 0, 0) < 0, "setresuid(0) worked");
	CHILD_CHECK(wfd, setgroups(0, NULL) < 0 && errno == EPERM,
	    "setgroups worked");
	/* a signal to another user's process: no CAP_KILL */
	CHILD_CHECK(wfd, kill(a->other, SIGSTOP) < 0 && errno == EPERM,
	    "signalled another user's process");
	_exit(0);
}

START_TEST(test_drop_in_process)
{
	struct drop_arg a = { 0 };
	union bpf_attr at;
	uint32_t key = 0;
	uint64_t val = 42;
	char pin[PATH_MAX], rootfile[PATH_MAX], msg[512];

	make_bpffs();
	memset(&at, 0, sizeof(at));
	at.map_type = BPF_MAP_TYPE_ARRAY;
	at.key_size = 4;
	at.value_size = 8;
	at.max_entries = 1;
	a.map_fd = (int)sys_bpf(BPF_MAP_CREATE, &at);
	ck_assert_msg(a.map_fd >= 0, "map: %s", strerror(errno));
	memset(&at, 0, sizeof(at));
	at.map_fd = (uint32_t)a.map_fd;
	at.key = (uint64_t)(uintptr_t)&key;
	at.value = (uint64_t)(uintptr_t)&val;
	ck_assert_int_eq(sys_bpf(BPF_MAP_UPDATE_ELEM, &at), 0);
	snprintf(pin, sizeof(pin), "%s/map_privs_test", bpffs);
	memset(&at, 0, sizeof(at));
	at.pathname = (uint64_t)(uintptr_t)pin;
	at.bpf_fd = (uint32_t)a.map_fd;
	ck_assert_int_eq(sys_bpf(BPF_OBJ_PIN, &at), 0);
	a.pin = pin;
	snprintf(rootfile, sizeof(rootfile), "%s/root-owned", tmp);
	ck_assert_int_eq(tu_writes(rootfile, "root's\n"), 0);
	ck_assert_int_eq(chmod(rootfile, 0644), 0);
	a.rootfile = rootfile;
	a.other = burner(other_uid);

	in_child(drop_child, &a, msg, sizeof(msg));
	/* the file is as it was */
	{
		char buf[16] = { 0 };
		int fd = open(rootfile, O_RDONLY);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(read(fd, buf, sizeof(buf)), 7);
		close(fd);
		ck_assert_str_eq(buf, "root's\n");
	}
	reap(a.other);
	close(a.map_fd);
	unlink(pin);
}
END_TEST

/* A configured capability stays, in every set that matters, and only it. */
static void
keep_child(int wfd, void *arg)
{
	struct privs_req rq;
	struct privs_state st;
	char user[16], err[128];

	(void)arg;
	snprintf(user, sizeof(user), "%u", test_uid);
	CHILD_CHECK(wfd,
	    privs_resolve(user, NULL, 1ull << 2 /* dac_read_search */,
		PRIVS_SECCOMP_OFF, &rq, err, sizeof(err)) == 0,
	    "%s", err);
	CHILD_CHECK(wfd, privs_drop(&rq, &st) == 0, "privs_drop failed");
	CHILD_CHECK(wfd,
	    st.cap_eff == (1ull << 2) && st.cap_prm == (1ull << 2) &&
		st.cap_bnd == (1ull << 2) && st.cap_amb == 0,
	    "eff %llx prm %llx bnd %llx", (unsigned long long)st.cap_eff,
	    (unsigned long long)st.cap_prm, (unsigned long long)st.cap_bnd);
	/* dac_read_search: a 0600 root file reads, still does not write */
	CHILD_CHECK(wfd, open("/etc/shadow", O_RDONLY) >= 0,
	    "kept dac_read_search does not read: %s", strerror(errno));
	CHILD_CHECK(wfd, open("/etc/shadow", O_WRONLY) < 0,
	    "dac_read_search wrote");
	_exit(0);
}

START_TEST(test_drop_keeps_configured)
{
	char msg[512];

	in_child(keep_child, NULL, msg, sizeof(msg));
}
END_TEST

/* Not started as root but asked to drop: refused, nothing runs. */
static void
notroot_child(int wfd, void *arg)
{
	struct privs_req rq;
	char err[128];

	(void)arg;
	CHILD_CHECK(wfd, setresuid(other_uid, other_uid, other_uid) == 0,
	    "setresuid");
	CHILD_CHECK(wfd,
	    privs_resolve("nobody", NULL, 0, 0, &rq, err, sizeof(err)) == 0,
	    "%s", err);
	CHILD_CHECK(wfd, privs_drop(&rq, NULL) == -EPERM,
	    "a drop without root did not fail");
	_exit(0);
}

START_TEST(test_drop_needs_root)
{
	char msg[512];

	in_child(notroot_child, NULL, msg, sizeof(msg));
}
END_TEST

/* ----------------------------------------------------------- seccomp */

static int t_ok;

static void *
thread_fn(void *arg)
{
	(void)arg;
	return &t_ok;
}

static void
seccomp_child(int wfd, void *arg)
{
	uint32_t rules = 0;
	char *const argv[] = { "true", NULL };
	int fd, r;

	(void)arg;
	signal(SIGUSR1, SIG_IGN);
	CHILD_CHECK(wfd, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
	CHILD_CHECK(wfd,
	    (r = seccomp_install(PRIVS_SECCOMP_ON, false, &rules)) == 0,
	    "install: %s", strerror(-r));
	CHILD_CHECK(wfd, rules > 50, "%u rules", rules);
	/* allowed: what the daemon does */
	CHILD_CHECK(wfd, getpid() > 0, "getpid");
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(wfd, fd >= 0, "open: %s", strerror(errno));
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(wfd, fd >= 0, "AF_UNIX socket: %s", strerror(errno));
	close(fd);
	CHILD_CHECK(wfd, kill(getpid(), 0) == 0, "kill(self, 0)");
	/* threads start (clone3 refused with ENOSYS, clone with
	 * CLONE_THREAD allowed) and run */
	{
		pthread_t t;
		void *ret = NULL;

		CHILD_CHECK(wfd,
		    (r = pthread_create(&t, NULL, thread_fn, NULL)) == 0,
		    "pthread_create: %s", strerror(r));
		CHILD_CHECK(wfd, pthread_join(t, &ret) == 0 && ret == &t_ok,
		    "thread did not run");
	}
	/* refused with EPERM: all else, and allowed calls with other args */
	CHILD_CHECK(wfd, execv("/bin/true", argv) < 0 && errno == EPERM,
	    "execve: %s", strerror(errno));
	CHILD_CHECK(wfd, socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM,
	    "AF_INET socket: %s", strerror(errno));
	CHILD_CHECK(wfd, kill(getpid(), SIGUSR1) < 0 && errno == EPERM,
	    "kill(SIGUSR1): %s", strerror(errno));
	CHILD_CHECK(wfd,
	    ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0 && errno == EPERM,
	    "ptrace: %s", strerror(errno));
	CHILD_CHECK(wfd,
	    mkdir("/tmp/vitals-seccomp-never", 0700) < 0 && errno == EPERM,
	    "mkdir: %s", strerror(errno));
	CHILD_CHECK(wfd, fork() < 0 && errno == EPERM, "fork: %s",
	    strerror(errno));
	_exit(0);
}

/* With an OTLP endpoint (inet): TCP sockets too, each family checked
 * after the AF_UNIX rule for the same call; other families still EPERM
 * (without inet AF_INET is refused: seccomp_child). */
static void
seccomp_inet_child(int wfd, void *arg)
{
	uint32_t rules = 0;
	int fd, r;

	(void)arg;
	CHILD_CHECK(wfd, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
	CHILD_CHECK(wfd,
	    (r = seccomp_install(PRIVS_SECCOMP_ON, true, &rules)) == 0,
	    "install: %s", strerror(-r));
	CHILD_CHECK(wfd, rules > 50, "%u rules", rules);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(wfd, fd >= 0, "AF_UNIX socket: %s", strerror(errno));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(wfd, fd >= 0, "AF_INET socket: %s", strerror(errno));
	close(fd);
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(wfd, fd >= 0 || errno == EAFNOSUPPORT,
	    "AF_INET6 socket: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	CHILD_CHECK(wfd, socket(AF_NETLINK, SOCK_RAW, 0) < 0 && errno == EPERM,
	    "AF_NETLINK socket: %s", strerror(errno));
	CHILD_CHECK(wfd, fork() < 0 && errno == EPERM, "fork: %s",
	    strerror(errno));
	_exit(0);
}

START_TEST(test_seccomp_inet)
{
	char msg[512];

	in_child(seccomp_inet_child, NULL, msg, sizeof(msg));
}
END_TEST

START_TEST(test_seccomp_refuses)
{
	char msg[512];
	const char *const *names;
	size_t n, i;
	bool bpf = false, kill0 = false;

	in_child(seccomp_child, NULL, msg, sizeof(msg));
	/* the documented list has what the daemon needs */
	n = seccomp_syscalls(&names);
	for (i = 0; i < n; i++) {
		bpf |= !strcmp(names[i], "bpf");
		kill0 |= !strcmp(names[i], "kill(sig 0)");
	}
	ck_assert(bpf && kill0);
	ck_assert_int_eq(access("/tmp/vitals-seccomp-never", F_OK), -1);
}
END_TEST

/* ------------------------------------------------- privileged helper */

struct ph_arg {
	pid_t other;
	uint64_t other_start;
	const char *instance; /* a tracefs instance name to remove */
};

/* "Key:\t<hex>" of /proc/<pid>/status as a number */
static uint64_t
status_hex(pid_t pid, const char *key)
{
	char path[64], line[256];
	uint64_t v = UINT64_MAX;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return v;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) &&
		    line[strlen(key)] == ':')
			v = strtoull(line + strlen(key) + 1, NULL, 16);
	fclose(f);
	return v;
}

static void
helper_child(int wfd, void *arg)
{
	struct ph_arg *a = arg;
	struct privhelper *ph;
	struct privs_req rq;
	char user[16], path[64], buf[4096], raw[512];
	uint64_t ent, pfn = 0;
	unsigned long lo = 0, hi = 0;
	int fd, mfd, r;
	ssize_t n;
	FILE *f;

	CHILD_CHECK(wfd,
	    (r = privhelper_start("/proc", "/sys", "/sys/kernel/tracing",
		 &ph)) == 0,
	    "start: %s", strerror(-r));
	snprintf(user, sizeof(user), "%u", test_uid);
	CHILD_CHECK(wfd,
	    privs_resolve(user, NULL, 0, PRIVS_SECCOMP_ON, &rq, buf,
		sizeof(buf)) == 0,
	    "%s", buf);
	CHILD_CHECK(wfd, privs_drop(&rq, NULL) == 0, "drop");

	/* the helper: root with four capabilities, confined */
	CHILD_CHECK(wfd,
	    status_hex(privhelper_pid(ph), "CapEff") ==
		((1ull << 21) | (1ull << 19) | (1ull << 1) | (1ull << 2)),
	    "helper CapEff %llx",
	    (unsigned long long)status_hex(privhelper_pid(ph), "CapEff"));
	CHILD_CHECK(wfd,
	    status_hex(privhelper_pid(ph), "CapBnd") ==
		((1ull << 21) | (1ull << 19) | (1ull << 1) | (1ull << 2)),
	    "helper CapBnd");
	CHILD_CHECK(wfd, status_hex(privhelper_pid(ph), "Seccomp") == 2,
	    "helper without seccomp");
	CHILD_CHECK(wfd, status_hex(privhelper_pid(ph), "NoNewPrivs") == 1,
	    "helper without no_new_privs");

	/* alone, the dropped process cannot open another user's pagemap */
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)a->other);
	fd = open(path, O_RDONLY);
	CHILD_CHECK(wfd, fd < 0 && (errno == EACCES || errno == EPERM),
	    "pagemap opened without the helper");
	/* through the helper: maps, and pagemap with PFNs */
	CHILD_CHECK(wfd,
	    (r = privhelper_open(ph, a->other, a->other_start, PH_FILE_MAPS,
		 &mfd)) == 0,
	    "maps: %s", strerror(-r));
	CHILD_CHECK(wfd, (f = fdopen(mfd, "r")) != NULL, "fdopen");
	while (fgets(buf, sizeof(buf), f))
		if (strstr(buf, " r-xp ") &&
		    sscanf(buf, "%lx-%lx", &lo, &hi) == 2)
			break;
	fclose(f);
	CHILD_CHECK(wfd, hi > lo, "no text mapping in maps");
	CHILD_CHECK(wfd,
	    (r = privhelper_open(ph, a->other, a->other_start, PH_FILE_PAGEMAP,
		 &fd)) == 0,
	    "pagemap: %s", strerror(-r));
	for (; lo < hi && pfn == 0; lo += 4096) {
		n = pread(fd, &ent, sizeof(ent), (off_t)(lo / 4096 * 8));
		CHILD_CHECK(wfd, n == sizeof(ent), "pagemap read: %s",
		    strerror(errno));
		if (ent >> 63)
			pfn = ent & ((1ull << 55) - 1);
	}
	close(fd);
	CHILD_CHECK(wfd, pfn != 0, "no PFN through the helper's pagemap fd");
	/* clear_refs: written through the fd */
	CHILD_CHECK(wfd,
	    (r = privhelper_open(ph, a->other, 0, PH_FILE_CLEAR_REFS, &fd)) ==
		0,
	    "clear_refs: %s", strerror(-r));
	CHILD_CHECK(wfd, write(fd, "1", 1) == 1, "clear_refs write: %s",
	    strerror(errno));
	close(fd);
	/* another instance than the one asked for: refused */
	CHILD_CHECK(wfd,
	    privhelper_open(ph, a->other, a->other_start + 1, PH_FILE_PAGEMAP,
		&fd) == -ESRCH,
	    "a reused pid was not caught");
	CHILD_CHECK(wfd,
	    privhelper_open(ph, 0, 0, PH_FILE_MAPS, &fd) == -EINVAL, "pid 0");
	CHILD_CHECK(wfd,
	    privhelper_open(ph, a->other, 0, PH_FILE__MAX, &fd) == -EINVAL,
	    "file out of range");
	/* page_idle: here or not, the helper says which */
	r = privhelper_page_idle(ph, &fd);
	CHILD_CHECK(wfd,
	    r == 0 ||
		(r == -ENOENT &&
		    access("/sys/kernel/mm/page_idle/bitmap", F_OK) < 0),
	    "page_idle: %s", strerror(-r));
	if (r == 0)
		close(fd);
	/* tracefs: only a "vitals..." instance, one path component */
	CHILD_CHECK(wfd, privhelper_rmdir_instance(ph, "../events") == -EINVAL,
	    "../events accepted");
	CHILD_CHECK(wfd,
	    privhelper_rmdir_instance(ph, "vitalsd/../x") == -EINVAL,
	    "a path accepted");
	CHILD_CHECK(wfd, privhelper_rmdir_instance(ph, "other") == -EINVAL,
	    "a foreign instance accepted");
	CHILD_CHECK(wfd, privhelper_rmdir_instance(ph, "vital") == -EINVAL,
	    "a shorter prefix accepted");
	CHILD_CHECK(wfd, (r = privhelper_rmdir_instance(ph, a->instance)) == 0,
	    "rmdir %s: %s", a->instance, strerror(-r));
	/* malformed requests: answered EINVAL, nothing done */
	memset(raw, 0, sizeof(raw));
	CHILD_CHECK(wfd, privhelper_raw(ph, raw, 7) == -EINVAL, "short");
	CHILD_CHECK(wfd,
	    privhelper_raw(ph, raw, privhelper_req_size() + 1) == -EINVAL,
	    "long");
	CHILD_CHECK(wfd,
	    privhelper_raw(ph, raw, privhelper_req_size()) == -EINVAL,
	    "no magic");
	/* still serving after all that */
	CHILD_CHECK(wfd,
	    privhelper_open(ph, a->other, 0, PH_FILE_MAPS, &fd) == 0,
	    "helper stopped serving");
	close(fd);
	r = privhelper_pid(ph);
	privhelper_stop(ph);
	CHILD_CHECK(wfd, kill(r, 0) < 0 && errno == ESRCH,
	    "helper still there after stop");
	_exit(0);
}

START_TEST(test_privhelper)
{
	struct ph_arg a = { 0 };
	char inst[PATH_MAX], name[64], msg[512];
	struct vbuf b = { 0 };
	struct pid_stat st;
	int procfd;

	if (access("/sys/kernel/tracing/instances", F_OK) != 0)
		(void)mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	snprintf(name, sizeof(name), "vitalsd-privs-%d", (int)getpid());
	snprintf(inst, sizeof(inst), "/sys/kernel/tracing/instances/%s", name);
	ck_assert_msg(mkdir(inst, 0750) == 0, "%s: %s", inst, strerror(errno));
	a.instance = name;
	a.other = burner(other_uid);
	tu_sleep_ms(50);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY);
	snprintf(msg, sizeof(msg), "%d/stat", (int)a.other);
	ck_assert_int_eq(read_at(procfd, msg, &b), 0);
	ck_assert_int_eq(pidstat_parse(b.p, b.len, &st), 0);
	a.other_start = st.starttime;
	vbuf_release(&b);
	close(procfd);

	in_child(helper_child, &a, msg, sizeof(msg));
	reap(a.other);
	if (access(inst, F_OK) == 0) {
		rmdir(inst);
		ck_abort_msg("the instance is still there");
	}
}
END_TEST

/* The fd is an open of exactly this path (its /proc/self/fd link). */
static bool
fd_is(int fd, const char *want, char *got, size_t gotsz)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, got, gotsz - 1);
	got[n > 0 ? n : 0] = '\0';
	return n > 0 && strcmp(got, want) == 0;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void
ph_timer(long usec)
{
	struct itimerval it = { { 0, usec }, { 0, usec } };

	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * The channel never goes out of step: calls cut short by signals are
 * resumed and get their own answer; an answer to an earlier request is
 * discarded with its fd; a timed-out channel is closed for good.
 */
static void
desync_child(int wfd, void *arg)
{
	struct privhelper *ph;
	struct privhelper_stats st;
	struct sigaction sa;
	char want[2][64], got[256];
	int32_t pids[2] = { 0, (int32_t)getpid() };
	int64_t t0, ms;
	int i, fd, n0, r;
	pid_t hp;

	(void)arg;
	if ((pids[0] = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	CHILD_CHECK(wfd, pids[0] > 0, "fork: %s", strerror(errno));
	CHILD_CHECK(wfd,
	    (r = privhelper_start("/proc", "/sys", NULL, &ph)) == 0,
	    "start: %s", strerror(-r));
	for (i = 0; i < 2; i++)
		snprintf(want[i], sizeof(want[i]), "/proc/%d/maps",
		    (int)pids[i]);
	/* a no-op SIGALRM without SA_RESTART, every 50 us: polls fail EINTR */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	CHILD_CHECK(wfd, sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");
	ph_timer(50);
	for (i = 0; i < 3000; i++) {
		r = privhelper_open(ph, pids[i & 1], 0, PH_FILE_MAPS, &fd);
		CHILD_CHECK(wfd, r == 0, "call %d: %s", i, strerror(-r));
		CHILD_CHECK(wfd, fd_is(fd, want[i & 1], got, sizeof(got)),
		    "call %d asked for %s, got %s", i, want[i & 1], got);
		close(fd);
	}
	ph_timer(0);
	privhelper_stats(ph, &st);
	CHILD_CHECK(wfd, alarms > 0, "no signal came");
	CHILD_CHECK(wfd, st.interrupted > 0,
	    "no wait was interrupted "
	    "(%d signals)",
	    (int)alarms);
	CHILD_CHECK(wfd, st.calls == 3000 && st.stale == 0 && st.dead == 0,
	    "calls %llu stale %llu dead %d", (unsigned long long)st.calls,
	    (unsigned long long)st.stale, st.dead);

	/* an answer left queued by a caller that gave up: discarded, its fd
	 * closed, and the next call gets its own */
	n0 = count_fds();
	CHILD_CHECK(wfd, privhelper_send_stale(ph, pids[0], PH_FILE_MAPS) == 0,
	    "send_stale");
	CHILD_CHECK(wfd,
	    (r = privhelper_open(ph, pids[1], 0, PH_FILE_MAPS, &fd)) == 0,
	    "after a stale answer: %s", strerror(-r));
	CHILD_CHECK(wfd, fd_is(fd, want[1], got, sizeof(got)),
	    "after a stale answer: asked for %s, got %s", want[1], got);
	close(fd);
	CHILD_CHECK(wfd, count_fds() == n0,
	    "the stale answer's fd leaked "
	    "(%d fds, were %d)",
	    count_fds(), n0);
	privhelper_stats(ph, &st);
	CHILD_CHECK(wfd, st.stale == 1 && st.dead == 0, "stale %llu dead %d",
	    (unsigned long long)st.stale, st.dead);

	/* a helper that does not answer in time (stopped): the call fails
	 * ETIMEDOUT on time despite signals, the channel is closed, later
	 * calls fail EPIPE and are counted, even once it could answer */
	hp = privhelper_pid(ph);
	privhelper_set_timeout(ph, 200);
	CHILD_CHECK(wfd, kill(hp, SIGSTOP) == 0, "SIGSTOP");
	ph_timer(1000);
	t0 = clock_ns(CLOCK_MONOTONIC);
	r = privhelper_open(ph, pids[0], 0, PH_FILE_MAPS, &fd);
	ms = (clock_ns(CLOCK_MONOTONIC) - t0) / 1000000;
	ph_timer(0);
	CHILD_CHECK(wfd, r == -ETIMEDOUT, "stopped helper: %s", strerror(-r));
	CHILD_CHECK(wfd, ms >= 190 && ms < 10000, "timed out after %lld ms",
	    (long long)ms);
	CHILD_CHECK(wfd, kill(hp, SIGCONT) == 0, "SIGCONT");
	tu_sleep_ms(50);
	for (i = 0; i < 3; i++) {
		r = privhelper_open(ph, pids[i & 1], 0, PH_FILE_MAPS, &fd);
		CHILD_CHECK(wfd, r == -EPIPE, "call %d after the timeout: %s",
		    i, strerror(-r));
	}
	CHILD_CHECK(wfd, privhelper_page_idle(ph, &fd) == -EPIPE, "idle");
	privhelper_stats(ph, &st);
	CHILD_CHECK(wfd, st.dead == -ETIMEDOUT && st.refused == 4,
	    "dead %d refused %llu", st.dead, (unsigned long long)st.refused);
	privhelper_stop(ph);
	CHILD_CHECK(wfd, kill(hp, 0) < 0 && errno == ESRCH,
	    "helper still there after stop");
	kill(pids[0], SIGKILL);
	waitpid(pids[0], NULL, 0);
	_exit(0);
}

START_TEST(test_privhelper_desync)
{
	char msg[512];

	in_child(desync_child, NULL, msg, sizeof(msg));
}
END_TEST

/* ------------------------------------------------------------ hidepid */

struct scan_result {
	uint32_t scanned, unseen, state;
	int err;
	bool saw_self, saw_init;
};

struct hp_arg {
	const char *mnt;
	bool with_group;
};

/* As the daemon would run: a dropped uid, the collector on the mount. */
static void
hidden_scan(int wfd, void *arg)
{
	struct hp_arg *a = arg;
	struct collector_opts o = {
		.proc_root = a->mnt,
		.sys_root = "/sys",
		.interval_ms = 100,
		.window_s = 3600,
		.ring = 2,
		.threads = THREADS_NONE,
		.scanner = SCANNER_PROCFS,
	};
	struct scan_result res = { 0 };
	const struct window *w;
	struct collector *c;
	struct clocks now;
	gid_t g = (gid_t)test_gid;
	char self[16];
	int procfd;

	if (setgroups(a->with_group ? 1 : 0, &g) < 0 ||
	    setresgid(test_uid, test_uid, test_uid) < 0 ||
	    setresuid(test_uid, test_uid, test_uid) < 0)
		_exit(2);
	if ((res.err = collector_new(&o, &c)) == 0) {
		collector_clocks(&now);
		res.err = collector_sample(c, &now, false);
		tu_sleep_ms(150);
		collector_clocks(&now);
		if (res.err == 0)
			res.err = collector_sample(c, &now, false);
		collector_clocks(&now);
		if (res.err == 0)
			res.err = collector_close_window(c, &now);
		if (res.err == 0 && (w = collector_window(c, 0)) != NULL) {
			res.scanned = w->health.procs_scanned;
			res.unseen = w->health.procs_unseen;
			res.state = w->health.unseen_state;
		}
		collector_free(c);
	}
	procfd = open(a->mnt, O_RDONLY | O_DIRECTORY);
	snprintf(self, sizeof(self), "%d", (int)getpid());
	res.saw_self = faccessat(procfd, self, F_OK, 0) == 0;
	res.saw_init = faccessat(procfd, "1", F_OK, 0) == 0;
	if (write(wfd, &res, sizeof(res)) != sizeof(res))
		_exit(3);
	_exit(0);
}

static int
count_pids(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] >= '1' && de->d_name[0] <= '9';
	closedir(d);
	return n;
}

struct hp_out {
	int err;
	int root_count;
	struct scan_result with, without;
};

static void
run_scan(const char *mnt, bool with_group, struct scan_result *ret)
{
	struct hp_arg a = { mnt, with_group };
	int p[2], status;
	pid_t pid;

	memset(ret, 0, sizeof(*ret));
	ret->err = -EIO;
	if (pipe(p) < 0)
		return;
	if ((pid = fork()) == 0) {
		close(p[0]);
		hidden_scan(p[1], &a);
	}
	close(p[1]);
	if (read(p[0], ret, sizeof(*ret)) != sizeof(*ret))
		ret->err = -EPIPE;
	close(p[0]);
	waitpid(pid, &status, 0);
}

/* In a mount namespace of its own: the hiding procfs, two scans. */
static void
hidepid_ns(int wfd, const char *mnt)
{
	struct hp_out out = { 0 };
	char opts[64];

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		out.err = -errno;
		goto done;
	}
	snprintf(opts, sizeof(opts), "hidepid=2,gid=%u", test_gid);
	if (mount("proc", mnt, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) <
	    0) {
		out.err = -errno;
		goto done;
	}
	out.root_count = count_pids(mnt);
	run_scan(mnt, true, &out.with);
	run_scan(mnt, false, &out.without);
	umount2(mnt, MNT_DETACH);
done:
	if (write(wfd, &out, sizeof(out)) != sizeof(out))
		_exit(3);
	_exit(0);
}

START_TEST(test_hidepid)
{
	struct hp_out out;
	char mnt[PATH_MAX];
	int p[2], status;
	pid_t pid, other;
	bool hiding = true;
	int procfd;

	snprintf(mnt, sizeof(mnt), "%s/proc", tmp);
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	other = burner(other_uid); /* one more process that is not ours */
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		hidepid_ns(p[1], mnt);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &out, sizeof(out)), sizeof(out));
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	reap(other);
	ck_assert_msg(out.err == 0, "mount namespace: %s", strerror(-out.err));
	ck_assert_int_gt(out.root_count, 10);

	/* in the group: every process, none hidden */
	ck_assert_int_eq(out.with.err, 0);
	ck_assert(out.with.saw_self && out.with.saw_init);
	ck_assert_uint_eq(out.with.state, UNSEEN_COUNTED);
	ck_assert_uint_eq(out.with.unseen, 0);
	/* the machine's own churn aside, what root saw */
	ck_assert_msg(out.with.scanned * 10 >= (uint32_t)out.root_count * 9,
	    "scanned %u of %d", out.with.scanned, out.root_count);

	/* without: only itself, and the rest counted as hidden */
	ck_assert_int_eq(out.without.err, 0);
	ck_assert(out.without.saw_self && !out.without.saw_init);
	ck_assert_uint_eq(out.without.scanned, 1);
	ck_assert_uint_eq(out.without.state, UNSEEN_COUNTED);
	ck_assert_msg(out.without.unseen * 10 >= (uint32_t)out.root_count * 8 &&
		out.without.unseen <= (uint32_t)out.root_count * 2,
	    "unseen %u, root saw %d", out.without.unseen, out.root_count);

	/* the host's own /proc hides nothing */
	procfd = open("/proc", O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(prochidden_detect(procfd, &hiding), 0);
	ck_assert(!hiding);
	close(procfd);
	/* a fixture tree is no procfs: nothing hidden either */
	procfd = open(tmp, O_RDONLY | O_DIRECTORY);
	hiding = true;
	ck_assert_int_eq(prochidden_detect(procfd, &hiding), 0);
	ck_assert(!hiding);
	close(procfd);
}
END_TEST

/* ------------------------------------------------------- the daemon */

static char sock[108];

static int
cl_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, sock, sizeof(sa.sun_path));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* One request, one answer; NULL when the daemon does not answer. */
static Vitals__Response *
ask(Vitals__Request__OpCase op, uint32_t top_n)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HealthRequest hr = VITALS__HEALTH_REQUEST__INIT;
	Vitals__SnapshotRequest sr = VITALS__SNAPSHOT_REQUEST__INIT;
	Vitals__Response *resp = NULL;
	uint8_t *buf;
	size_t len;
	int fd;

	req.version = 1;
	req.id = 7;
	req.op_case = op;
	if (op == VITALS__REQUEST__OP_HEALTH) {
		req.health = &hr;
	} else {
		sr.top_n = top_n;
		req.snapshot = &sr;
	}
	if ((fd = cl_connect()) < 0)
		return NULL;
	if (frame_pack_request(&req, &buf, &len) == 0) {
		if (frame_send(fd, buf, len, 10000) == 0) {
			free(buf);
			if (frame_recv(fd, RECV_MAX, 10000, &buf, &len) == 0) {
				resp = frame_unpack_response(buf, len);
				free(buf);
			}
		} else {
			free(buf);
		}
	}
	close(fd);
	return resp;
}

struct pass {
	enum td_inherit how;
	int sfd;
};

static void
pass_socket(void *arg)
{
	const struct pass *p = arg;

	td_pass_socket(p->how, p->sfd);
}

static pid_t
start_daemon(const char *state, const char *log, enum td_inherit how, int sfd,
    const char *seccomp, const char *bpf_dir)
{
	char user[16], grp[16];
	struct pass p = { how, sfd };
	const char *argv[] = { "vitalsd", "-f", "-v", "--state-dir", state,
		"--socket", sock, "--interval-ms", "200", "--window-s", "1",
		"--user", user, "--group", grp, "--seccomp", seccomp, "--bpffs",
		bpf_dir[0] ? bpf_dir : "/nonexistent", "--bpf-load",
		bpf_dir[0] ? "auto" : "off", "--privhelper", "on", NULL };
	pid_t pid;
	int i;

	snprintf(user, sizeof(user), "%u", test_uid);
	snprintf(grp, sizeof(grp), "%u", test_gid);
	pid = td_exec(log, TD_LOG_APPEND, argv, pass_socket, &p);
	for (i = 0; i < 150; i++) {
		Vitals__Response *r = ask(VITALS__REQUEST__OP_HEALTH, 0);
		bool up = r && r->health && r->health->last;

		if (r)
			vitals__response__free_unpacked(r, NULL);
		if (up)
			return pid;
		ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0);
		tu_sleep_ms(100);
	}
	ck_abort_msg("daemon did not come up (log %s)", log);
	return -1;
}

/* "Key:\tvalue" of /proc/<pid>/status, into buf. */
static const char *
status_field(pid_t pid, const char *key, char *buf, size_t bufsz)
{
	char path[64], line[512];
	size_t kl = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	buf[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *v = line + kl + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			while (*v && (v[strlen(v) - 1] == ' '))
				v[strlen(v) - 1] = '\0';
			snprintf(buf, bufsz, "%s", v);
			break;
		}
	}
	fclose(f);
	return buf;
}

/* The daemon's credentials as the kernel reports them, in every thread. */
static void assert_dropped_task(pid_t pid, bool seccomp);

static void
assert_dropped(pid_t pid, bool seccomp)
{
	char path[64];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		assert_dropped_task((pid_t)atoi(de->d_name), seccomp);
		n++;
	}
	closedir(d);
	/* the loop, the store writer, the query thread */
	ck_assert_uint_ge(n, 3);
}

static void
assert_dropped_task(pid_t pid, bool seccomp)
{
	char v[128], want[128];

	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", test_uid, test_uid,
	    test_uid, test_uid);
	ck_assert_str_eq(status_field(pid, "Uid", v, sizeof(v)), want);
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", test_uid, test_uid,
	    test_uid, test_uid);
	ck_assert_str_eq(status_field(pid, "Gid", v, sizeof(v)), want);
	snprintf(want, sizeof(want), "%u", test_gid);
	ck_assert_str_eq(status_field(pid, "Groups", v, sizeof(v)), want);
	ck_assert_str_eq(status_field(pid, "CapEff", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_field(pid, "CapPrm", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_field(pid, "CapInh", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_field(pid, "CapBnd", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_field(pid, "CapAmb", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_field(pid, "NoNewPrivs", v, sizeof(v)), "1");
	ck_assert_str_eq(status_field(pid, "Seccomp", v, sizeof(v)),
	    seccomp ? "2" : "0");
}

/* Both burners in the last window's processes, under their own uids. */
static void
assert_sees(pid_t root_burner, pid_t other_burner)
{
	bool root_seen = false, other_seen = false;
	int tries;

	for (tries = 0; tries < 60 && !(root_seen && other_seen); tries++) {
		Vitals__Response *r = ask(VITALS__REQUEST__OP_SNAPSHOT, 500);
		size_t i;

		ck_assert_ptr_nonnull(r);
		ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_OK);
		for (i = 0; r->snapshot && r->snapshot->window &&
		     i < r->snapshot->window->n_procs;
		     i++) {
			const Vitals__Task *t = r->snapshot->window->procs[i];

			if (t->id == root_burner && t->uid == 0 &&
			    t->d_utime + t->d_stime > 0)
				root_seen = true;
			if (t->id == other_burner && t->uid == other_uid &&
			    t->d_utime + t->d_stime > 0)
				other_seen = true;
		}
		vitals__response__free_unpacked(r, NULL);
		if (!(root_seen && other_seen))
			tu_sleep_ms(200);
	}
	ck_assert_msg(root_seen, "root's process not sampled after the drop");
	ck_assert_msg(other_seen, "another user's process not sampled");
}

/* The stored windows after the drop: BPF drained, uids 0 and other. */
static void
assert_bpf_read(const char *state)
{
	struct window **ws = NULL;
	struct store *s = NULL;
	char db[PATH_MAX + 16];
	size_t n = 0, i, k;
	bool root_ns = false, other_ns = false;
	uint32_t drains = 0;

	snprintf(db, sizeof(db), "%s/vitals.db", state);
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_windows(s, 0, INT64_MAX, 0, &ws, &n), 0);
	ck_assert_uint_gt(n, 2);
	for (i = 0; i < n; i++) {
		const struct window_bpf *b = window_sched(ws[i]);

		ck_assert_ptr_nonnull(b);
		ck_assert_msg(vbpf_state_on(b->state), "window %zu bpf %s", i,
		    vbpf_state_name(b->state));
		ck_assert_uint_eq(b->drain_fail, 0);
		drains += b->drains;
		for (k = 0; k < b->nuids; k++) {
			root_ns |= b->uid[k].uid == 0 && b->uid[k].oncpu_ns;
			other_ns |= b->uid[k].uid == other_uid &&
			    b->uid[k].oncpu_ns;
		}
		window_free(ws[i]);
	}
	free(ws);
	store_close(s);
	ck_assert_uint_gt(drains, 2);
	ck_assert_msg(root_ns && other_ns,
	    "BPF uids after the drop: root %d "
	    "other %d",
	    root_ns, other_ns);
}

static void
daemon_run(enum td_inherit how, const char *seccomp)
{
	char state[PATH_MAX], log[PATH_MAX + 16];
	Vitals__Response *r;
	struct stat st;
	pid_t pid, rb, ob;
	int sfd = -1;
	bool bpf_built;

#ifdef HAVE_BPF
	bpf_built = true;
	make_bpffs();
#else
	bpf_built = false;
#endif
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(log, sizeof(log), "%s/daemon.log", tmp);
	snprintf(sock, sizeof(sock), "%s/state/vitalsd.sock", tmp);
	if (how != TD_INHERIT_NONE) {
		/* the socket an init made: somewhere the daemon does not own */
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(sock, sizeof(sock), "%s/init.sock", tmp);
		memcpy(sa.sun_path, sock, sizeof(sa.sun_path));
		ck_assert_int_ge(sfd = socket(AF_UNIX, SOCK_STREAM, 0), 0);
		ck_assert_int_eq(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)),
		    0);
		ck_assert_int_eq(chmod(sock, 0666), 0);
		if (how == TD_INHERIT_SYSTEMD)
			ck_assert_int_eq(listen(sfd, 16), 0);
	}
	rb = burner(0);
	ob = burner(other_uid);
	pid = start_daemon(state, log, how, sfd, seccomp, bpffs);
	if (sfd >= 0)
		close(sfd);

	assert_dropped(pid, strcmp(seccomp, "off") != 0);
	ck_assert(td_file_has(log, "privileges: dropped to"));
	ck_assert(td_file_has(log, "; verified"));
	if (how == TD_INHERIT_ANDROID)
		ck_assert(td_file_has(log, "control socket from Android init"));
	if (how == TD_INHERIT_SYSTEMD)
		ck_assert(td_file_has(log, "control socket from systemd"));
	/* still serving, with its privileges in health */
	r = ask(VITALS__REQUEST__OP_HEALTH, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(r->health->privileges);
	ck_assert(r->health->privileges->dropped);
	ck_assert(r->health->privileges->verified);
	ck_assert(r->health->privileges->no_new_privs);
	ck_assert_uint_eq(r->health->privileges->uid, test_uid);
	ck_assert_uint_eq(r->health->privileges->n_capabilities, 0);
	ck_assert_str_eq(r->health->privileges->seccomp, seccomp);
	ck_assert_str_eq(r->health->privileges->unseen_state, "nothing hidden");
	vitals__response__free_unpacked(r, NULL);
	/* still sampling every process */
	assert_sees(rb, ob);
	/* a few windows drained after the drop and stored (assert_bpf_read
	 * wants three): waited for, not slept for */
	for (int i = 0; i < 300; i++) {
		uint64_t written;

		r = ask(VITALS__REQUEST__OP_HEALTH, 0);
		ck_assert_ptr_nonnull(r);
		written = r->health->store ? r->health->store->windows_written :
					     0;
		vitals__response__free_unpacked(r, NULL);
		if (written >= 4)
			break;
		tu_sleep_ms(100);
	}
	{
		/* the helper: up while the daemon is, reaped when it stops */
		char line[512];
		FILE *f = fopen(log, "r");
		int hp = -1;

		ck_assert_ptr_nonnull(f);
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "privileged helper: pid "))
				hp = atoi(strstr(line, "pid ") + 4);
		fclose(f);
		ck_assert_int_gt(hp, 0);
		ck_assert_int_eq(kill(hp, 0), 0);
		td_term(pid, log);
		ck_assert_msg(kill(hp, 0) < 0 && errno == ESRCH,
		    "helper %d left behind", hp);
	}
	reap(rb);
	reap(ob);
	/* the files it made are its own; its socket it removed itself */
	snprintf(log, sizeof(log), "%s/vitals.db", state);
	ck_assert_int_eq(stat(log, &st), 0);
	ck_assert_uint_eq(st.st_uid, test_uid);
	if (how == TD_INHERIT_NONE)
		ck_assert_int_eq(access(sock, F_OK), -1);
	else
		ck_assert_int_eq(unlink(sock), 0); /* the init's, left alone */
	if (bpf_built)
		assert_bpf_read(state);
}

START_TEST(test_daemon_drops)
{
	daemon_run(TD_INHERIT_NONE, "on");
}
END_TEST

START_TEST(test_daemon_drops_android_socket)
{
	daemon_run(TD_INHERIT_ANDROID, "on");
}
END_TEST

START_TEST(test_daemon_drops_systemd_socket)
{
	daemon_run(TD_INHERIT_SYSTEMD, "off");
}
END_TEST

/* A user that does not exist, or group 0: the daemon does not start. */
START_TEST(test_daemon_refuses_bad_user)
{
	static const char *const bad[][2] = {
		{ "no-such-user-vitals", NULL },
		{ "61999", "0" },
	};
	unsigned i;

	for (i = 0; i < 2; i++) {
		const char *argv[] = { "vitalsd", "-n", "--user", bad[i][0],
			bad[i][1] ? "--group" : NULL, bad[i][1], NULL };
		int status = td_exec_wait(argv);

		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
		    WEXITSTATUS(status) != 127);
	}
}
END_TEST

static Suite *
privs_suite(void)
{
	Suite *s = suite_create("privs");
	TCase *tc = tcase_create("privs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_cap_names);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_config_keys);
	tcase_add_test(tc, test_drop_in_process);
	tcase_add_test(tc, test_drop_keeps_configured);
	tcase_add_test(tc, test_drop_needs_root);
	tcase_add_test(tc, test_seccomp_refuses);
	tcase_add_test(tc, test_seccomp_inet);
	tcase_add_test(tc, test_hidepid);
	tcase_add_test(tc, test_privhelper);
	tcase_add_test(tc, test_privhelper_desync);
	tcase_add_test(tc, test_daemon_drops);
	tcase_add_test(tc, test_daemon_drops_android_socket);
	tcase_add_test(tc, test_daemon_drops_systemd_socket);
	tcase_add_test(tc, test_daemon_refuses_bad_user);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("privilege drops"))
		return 77;
	return tu_run(privs_suite());
}
