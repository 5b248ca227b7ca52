/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service conventions on a real daemon: systemd's readiness protocol
 * (NOTIFY_SOCKET: READY=1 once it serves, RELOADING=1 and READY=1 around
 * a reload, STOPPING=1 at a stop, each from the daemon's own pid) and
 * SIGHUP's reread of the configuration: a reader uid added to the file
 * is let in without a restart, a changed key the running daemon cannot
 * take is refused and named, a key the command line set stays the
 * command line's, and a file that does not parse changes nothing. Root:
 * the client runs as other uids.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"

static char nsock[108];

static void
child_env(void *arg)
{
	setenv("NOTIFY_SOCKET", arg, 1);
}

/* The next datagram on fd within ms, its sender's pid in *pid. */
static char *
notify_recv(int fd, unsigned ms, pid_t *pid)
{
	static char buf[512];
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf) };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;

	ck_assert_msg(poll(&p, 1, (int)ms) == 1, "no notification in %u ms",
	    ms);
	n = recvmsg(fd, &mh, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	*pid = 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred u;

			memcpy(&u, CMSG_DATA(c), sizeof(u));
			*pid = u.pid;
		}
	return buf;
}

static long long
cfg_num(const char *json, const char *key)
{
	struct jm *j = jm_parse(json, strlen(json));
	const struct jm *c, *v;
	long long r;

	ck_assert_ptr_nonnull(j);
	c = jm_path(j, "health.config");
	ck_assert_msg(c != NULL && c->t == JM_OBJ, "no health.config: %s",
	    json);
	v = jm_get(c, key);
	r = v == NULL ? 0 : v->t == JM_STR ? atoll(v->str) : v->ll;
	jm_free(j);
	return r;
}

START_TEST(test_sighup_and_notify)
{
	/* as the service user under its filter, as a unit runs it: the
	 * reread must pass both */
	static const char *const args[] = { "--interval-ms", "200", "--user",
		"nobody", "--seccomp", "on", NULL };
	static const char *const health[] = { "health", NULL };
	static const char *const jhealth[] = { "--json", "health", NULL };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int one = 1, fd;
	struct run r;
	struct td d;
	pid_t from;
	char *m;

	snprintf(nsock, sizeof(nsock), "/tmp/vitals-notify-%d", (int)getpid());
	(void)unlink(nsock);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", nsock);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one,
			     sizeof(one)),
	    0);

	td_prepare(&d, "reload",
	    "reader_uids = 4300\nbpf_procs = 100\ninterval_ms = 1000\n");
	td_spawn(&d, args, child_env, nsock);
	m = notify_recv(fd, 20000, &from);
	ck_assert_str_eq(m, "READY=1\nSTATUS=sampling");
	ck_assert_int_eq(from, d.pid);
	/* it serves once it says so */
	r = td_vitals(&d, -1, health);
	ck_assert_int_eq(r.code, 0);
	run_free(&r);

	/* uid 4301 is no reader yet */
	ck_assert_int_eq(chmod(d.dir, 0711), 0);
	ck_assert_int_eq(chmod(d.sock, 0666), 0);
	r = td_vitals(&d, 4301, health);
	ck_assert_msg(r.code == 3, "uid 4301 before the reload: exit %d %s",
	    r.code, r.err);
	run_free(&r);

	/* the file gains the reader, a window size and another cadence
	 * (the command line's --interval-ms stays) */
	ck_assert_int_eq(tu_writes(d.conf,
			     "reader_uids = 4300, 4301\nbpf_procs = 100\n"
			     "interval_ms = 500\nwindow_s = 5\n"),
	    0);
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	m = notify_recv(fd, 5000, &from);
	ck_assert_str_eq(m, "RELOADING=1");
	m = notify_recv(fd, 5000, &from);
	ck_assert_str_eq(m, "READY=1");
	ck_assert_int_eq(from, d.pid);
	ck_assert(td_log_until(d.pid, d.log,
	    "reload: 1 changed keys applied, 1 need a restart", 50, 100));
	ck_assert(td_file_has(d.log,
	    "reload: reader_uids = 4300, 4301 (was "
	    "4300)"));
	ck_assert(td_file_has(d.log,
	    "reload: window_s = 5 needs a restart; still (default)"));
	ck_assert(!td_file_has(d.log, "reload: interval_ms"));
	r = td_vitals(&d, 4301, health);
	ck_assert_msg(r.code == 0, "uid 4301 after the reload: exit %d %s",
	    r.code, r.err);
	ck_assert_msg(strstr(r.out,
			  "config: 1 reloads (0 failed), 1 keys "
			  "applied, 1 need a restart") != NULL,
	    "%s", r.out);
	run_free(&r);
	r = td_vitals(&d, -1, jhealth);
	ck_assert_int_eq(r.code, 0);
	ck_assert_int_eq(cfg_num(r.out, "reloads"), 1);
	ck_assert_int_eq(cfg_num(r.out, "applied"), 1);
	ck_assert_int_eq(cfg_num(r.out, "refused"), 1);
	ck_assert_int_eq(cfg_num(r.out, "failed"), 0);
	run_free(&r);

	/* a file that does not parse changes nothing: the reader stays,
	 * the daemon runs on */
	ck_assert_int_eq(tu_writes(d.conf,
			     "reader_uids = 4300\nno_such_key = 1\n"),
	    0);
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	m = notify_recv(fd, 5000, &from);
	ck_assert_str_eq(m, "RELOADING=1");
	m = notify_recv(fd, 5000, &from);
	ck_assert_str_eq(m, "READY=1");
	ck_assert(
	    td_log_until(d.pid, d.log, "configuration unchanged", 50, 100));
	r = td_vitals(&d, 4301, jhealth);
	ck_assert_int_eq(r.code, 0);
	ck_assert_int_eq(cfg_num(r.out, "reloads"), 2);
	ck_assert_int_eq(cfg_num(r.out, "failed"), 1);
	run_free(&r);

	td_stop_only(&d);
	m = notify_recv(fd, 5000, &from);
	ck_assert_str_eq(m, "STOPPING=1");
	close(fd);
	(void)unlink(nsock);
	td_cleanup(&d);
}
END_TEST

int
main(void)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int nf;

	if (!tu_need_root("the client runs as other uids"))
		return 77;
	s = suite_create("reload");
	tc = tcase_create("daemon");
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_sighup_and_notify);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
