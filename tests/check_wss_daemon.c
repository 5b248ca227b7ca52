/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor through the daemon and the client: `vitals wss
 * start/PID/stop` and --json against a real vitalsd and a real target, the
 * roles (a reader may look, not start or stop), a config rule that finds
 * its process by exact name, and the Health part.
 *
 * And the monitor after the privilege drop (doc/privileges.md): a daemon
 * dropped to uid 2000 with the privileged helper monitors a root-owned
 * process (its files opened by the helper, PFNs readable); without the
 * helper the same start is refused with the reason, Health.wss.access
 * says what is lost, the refusals are counted, and a target of the
 * daemon's own uid runs region-level with its PFNs read as 0.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "client_run.h"
#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"

static struct run
vitals(const struct td *d, int uid, const char *a0, const char *a1,
    const char *a2, const char *a3, const char *a4, const char *a5,
    const char *a6)
{
	const char *argv[] = { "vitals", "--socket", d->sock, "--timeout",
		"10000", a0, a1, a2, a3, a4, a5, a6, NULL };

	return run_client_as(uid, argv);
}

/* 200 ms samples, 1 s windows; the socket open to all once it answers. */
static void
daemon_start(struct td *d, const char *conf)
{
	static const char *const args[] = { "--interval-ms", "200",
		"--window-s", "1", NULL };

	td_prepare(d, "wss-daemon", conf);
	/* the client runs as uid 2000 too: it must reach the socket */
	chmod(d->dir, 0755);
	td_spawn(d, args, NULL, NULL);
	td_wait(d, 10000, NULL, NULL);
	/* 0660: open it to all so the daemon's roles decide */
	ck_assert_int_eq(chmod(d->sock, 0666), 0);
}

/* /proc/<pid>/maps names a mapping with needle in it. */
static bool
maps_have(pid_t pid, const char *needle)
{
	char path[64], line[512];
	bool have = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	while (!have && fgets(line, sizeof(line), f))
		have = strstr(line, needle) != NULL;
	fclose(f);
	return have;
}

/* A target: sleep(1) under a name of its own (a symlink), so a rule
 * matches it and nothing else on the machine. */
static pid_t
target(const char *dir, char *name, size_t namesz)
{
	char link[PATH_MAX];
	pid_t pid;

	snprintf(name, namesz, "wsssleep-%d", (int)getpid());
	snprintf(link, sizeof(link), "%s/%s", dir, name);
	ck_assert_int_eq(symlink("/bin/sleep", link), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(link, link, "60", (char *)NULL);
		_exit(127);
	}
	/* exec done (its cmdline is the link's), and libc mapped: polled */
	for (int i = 0; i < 500; i++) {
		char path[64], buf[4096] = "";
		FILE *f;
		size_t n = 0;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((f = fopen(path, "r")) != NULL) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		if (strstr(buf, name) != NULL && maps_have(pid, "libc"))
			return pid;
		tu_sleep_ms(20);
	}
	ck_abort_msg("target %d never ran as %s", (int)pid, name);
	return pid;
}

static void
reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static const struct jm *
first_target(const struct jm *j, const char *op)
{
	char path[64];
	const struct jm *a;

	snprintf(path, sizeof(path), "%s.targets", op);
	a = jm_path(j, path);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->t, JM_ARR);
	ck_assert_uint_ge(a->n, 1);
	return &a->v[0];
}

static long long
num(const struct jm *o, const char *key)
{
	const struct jm *v = jm_path(o, key);

	ck_assert_msg(jm_is_num(v), "no number %s", key);
	return v->ll;
}

START_TEST(test_client_roundtrip)
{
	struct td d;
	char name[64], pidtxt[16], *tmp = tu_mkdtemp("wss-bin");
	const struct jm *t, *regs;
	struct jm *j;
	struct run r;
	pid_t pid;
	int i;

	ck_assert_ptr_nonnull(tmp);
	pid = target(tmp, name, sizeof(name));
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)pid);
	/* uid 2000 reads as the shell uid: on a host only when named */
	daemon_start(&d,
	    "wss_interval_ms = 200\nwss_interval_min_ms = 100\n"
	    "wss_interval_max_ms = 400\nshell_uid = 2000\n");

	/* a reader may not start one; nothing is a target yet */
	r = vitals(&d, 2000, "wss", "start", "--pid", pidtxt, "--mode", "heap",
	    NULL);
	ck_assert_msg(r.code == VX_DENIED, "exit %d: %s", r.code, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "trusted"));
	run_free(&r);
	r = vitals(&d, -1, "wss", pidtxt, NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_ne(r.code, 0);
	run_free(&r);
	/* usage errors are the client's */
	r = vitals(&d, -1, "wss", "start", "--pid", pidtxt, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, VX_USAGE);
	run_free(&r);

	r = vitals(&d, -1, "wss", "start", "--pid", pidtxt, "--mode", "heap",
	    NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "mode heap"));
	run_free(&r);
	/* twice: refused */
	r = vitals(&d, -1, "wss", "start", "--pid", pidtxt, "--mode", "heap",
	    NULL);
	ck_assert_int_ne(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "already"));
	run_free(&r);

	/* passes run on the daemon's loop: wait for two */
	for (i = 0; i < 50; i++) {
		tu_sleep_ms(100);
		r = vitals(&d, 2000, "--json", "wss", pidtxt, NULL, NULL, NULL,
		    NULL);
		ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
		j = jm_parse(r.out, strlen(r.out));
		ck_assert_ptr_nonnull(j);
		run_free(&r);
		t = first_target(j, "wss_get");
		if (num(t, "passes") >= 2)
			break;
		jm_free(j);
		j = NULL;
	}
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(num(t, "pid"), pid);
	ck_assert_str_eq(jm_path(t, "name")->str, name);
	ck_assert_str_eq(jm_path(t, "mode")->str, "heap");
	ck_assert_ptr_nonnull(jm_path(t, "method")->str);
	ck_assert_int_gt(num(t, "pass_ns_max"), 0);
	ck_assert_int_ge(num(t, "interval_ms"), 100);
	ck_assert_int_le(num(t, "interval_ms"), 400);
	regs = jm_path(t, "regions");
	ck_assert_ptr_nonnull(regs);
	ck_assert_int_eq(regs->t, JM_ARR);
	ck_assert_uint_ge(regs->n, 1);
	ck_assert_str_eq(jm_path(&regs->v[0], "label")->str, "heap");
	ck_assert_int_eq(num(&regs->v[0], "idle") +
		num(&regs->v[0], "accessed"),
	    num(&regs->v[0], "resident"));
	jm_free(j);

	/* text, and the Health part */
	r = vitals(&d, -1, "wss", pidtxt, NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "resident"));
	ck_assert_ptr_nonnull(strstr(r.out, "total"));
	run_free(&r);
	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(num(j, "health.wss.targets"), 1);
	ck_assert_int_gt(num(j, "health.wss.pages"), 0);
	jm_free(j);
	run_free(&r);

	/* a reader may not stop it; trusted may */
	r = vitals(&d, 2000, "wss", "stop", pidtxt, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, VX_DENIED);
	run_free(&r);
	r = vitals(&d, -1, "wss", "stop", pidtxt, NULL, NULL, NULL, NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	run_free(&r);
	r = vitals(&d, -1, "--json", "wss", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_null(strstr(r.out, "\"pid\""));
	run_free(&r);

	/* by name, then the process exits: the target ends cleanly */
	r = vitals(&d, -1, "wss", "start", "--name", name, "--mode", "heap",
	    NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	run_free(&r);
	reap(pid);
	for (i = 0; i < 30; i++) {
		tu_sleep_ms(100);
		r = vitals(&d, -1, "wss", pidtxt, NULL, NULL, NULL, NULL, NULL);
		if (strstr(r.out, "ended: process exited")) {
			run_free(&r);
			break;
		}
		run_free(&r);
	}
	ck_assert_int_lt(i, 30);
	td_stop(&d);
	tu_rmtree(tmp);
	free(tmp);
}
END_TEST

/* wss_rule: the process is found by its exact name and monitored. */
START_TEST(test_rule)
{
	struct td d;
	char name[64], conf[256], pidtxt[16], *tmp = tu_mkdtemp("wss-bin");
	const struct jm *t;
	struct jm *j;
	struct run r;
	pid_t pid;

	ck_assert_ptr_nonnull(tmp);
	pid = target(tmp, name, sizeof(name));
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)pid);
	snprintf(conf, sizeof(conf), "wss_rule = %s library libc.so.6\n", name);
	daemon_start(&d, conf);
	/* the rule's first pass has regions: asked until it has (10 s) */
	for (int i = 0; i < 100; i++) {
		const struct jm *regs;

		tu_sleep_ms(100);
		r = vitals(&d, -1, "--json", "wss", pidtxt, NULL, NULL, NULL,
		    NULL);
		ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
		j = jm_parse(r.out, strlen(r.out));
		ck_assert_ptr_nonnull(j);
		run_free(&r);
		regs = jm_path(j, "wss_get.targets");
		t = regs && regs->t == JM_ARR && regs->n >= 1 ? &regs->v[0] :
								NULL;
		regs = t ? jm_path(t, "regions") : NULL;
		if (regs && regs->t == JM_ARR && regs->n >= 2)
			break;
		jm_free(j);
		j = NULL;
	}
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(jm_path(t, "mode")->str, "library");
	ck_assert_str_eq(jm_path(t, "library")->str, "libc.so.6");
	ck_assert_uint_ge(jm_path(t, "regions")->n, 2);
	ck_assert_ptr_nonnull(
	    strstr(jm_path(&jm_path(t, "regions")->v[0], "label")->str,
		"(libc.so.6)"));
	jm_free(j);
	reap(pid);
	td_stop(&d);
	tu_rmtree(tmp);
	free(tmp);
}
END_TEST

/* ------------------------------------------------ after the privilege drop */

#define DROP_UID 2000

/* A process touching part of a region of its own over and over, as uid
 * (0: stays root). Its translations are flushed before each round so the
 * accessed bits are set again (doc/wss.md, accuracy). */
static pid_t
toucher(uid_t uid)
{
	pid_t pid;
	int fds[2];
	char c;

	/* Ready means its pages are mapped and touched under its own uid:
	 * a wss pass before that would see no region (a machine this busy
	 * happens). */
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		long pg = sysconf(_SC_PAGESIZE);
		size_t len = 64 * (size_t)pg, i;
		volatile char *p;

		close(fds[0]);
		if (uid &&
		    (setgroups(0, NULL) < 0 || setgid(uid) < 0 ||
			setuid(uid) < 0))
			_exit(1);
		/* setuid cleared it: the owner may read its /proc files */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		/* Between two PROT_NONE guard pages: the mprotects below
		 * would otherwise merge it with an anonymous neighbour and
		 * split it off again, moving its bounds inside a pass, and
		 * a region whose bounds move is gone (its figures void). */
		p = mmap(NULL, len + 2 * (size_t)pg, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		p += pg;
		if (mprotect((void *)p, len, PROT_READ | PROT_WRITE) < 0)
			_exit(1);
		for (i = 0; i < 64; i++)
			p[i * (size_t)pg] = 1;
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		close(fds[1]);
		for (;;) {
			mprotect((void *)p, len, PROT_READ);
			/* read-only a third of the time: a pass's maps
			 * reads often differ from those its list was built
			 * on, and the list is rebuilt. A query inside such a
			 * pass sees the last completed one (before a827309
			 * it saw nothing sampled: resident 0 below, in 3
			 * runs of 3). */
			tu_sleep_ms(10);
			mprotect((void *)p, len, PROT_READ | PROT_WRITE);
			for (i = 0; i < 16; i++)
				p[i * (size_t)pg] += 1;
			tu_sleep_ms(20);
		}
	}
	close(fds[1]);
	ck_assert_msg(read(fds[0], &c, 1) == 1, "toucher %d never ready",
	    (int)pid);
	close(fds[0]);
	return pid;
}

static bool
file_has(const char *path, const char *needle)
{
	char line[2048];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* The target after two passes (its JSON in *ret_j, to free). */
static const struct jm *
two_passes(const struct td *d, const char *pidtxt, struct jm **ret_j)
{
	const struct jm *t = NULL;
	struct jm *j = NULL;
	struct run r;
	int i;

	for (i = 0; i < 80; i++) {
		tu_sleep_ms(100);
		r = vitals(d, -1, "--json", "wss", pidtxt, NULL, NULL, NULL,
		    NULL);
		ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
		j = jm_parse(r.out, strlen(r.out));
		ck_assert_ptr_nonnull(j);
		run_free(&r);
		t = first_target(j, "wss_get");
		if (num(t, "passes") >= 2)
			break;
		jm_free(j);
		j = NULL;
	}
	ck_assert_msg(j != NULL, "no two passes in 8 s");
	*ret_j = j;
	return t;
}

static bool
jbool(const struct jm *o, const char *key)
{
	const struct jm *v = jm_path(o, key);

	ck_assert_msg(v && v->t == JM_BOOL, "no bool %s", key);
	return v->b;
}

static void
sums(const struct jm *t, long long *res, long long *acc)
{
	const struct jm *regs = jm_path(t, "regions");
	size_t i;

	ck_assert_ptr_nonnull(regs);
	*res = *acc = 0;
	for (i = 0; i < regs->n; i++) {
		const struct jm *g = &regs->v[i];

		/* null only where the region has no figures to give */
		if (!jm_is_num(jm_path(g, "resident"))) {
			ck_assert_msg(jbool(g, "gone") || !jbool(g, "sampled"),
			    "a sampled region with no resident figure");
			continue;
		}
		*res += num(&regs->v[i], "resident");
		*acc += num(&regs->v[i], "accessed");
	}
}

/* The regions of a pass, for a failure's message: pages, resident,
 * accessed (-1: null), gone, sampled, one region a line. */
static const char *
regions_text(const struct jm *t, char *buf, size_t sz)
{
	const struct jm *regs = jm_path(t, "regions");
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; regs && i < regs->n && o + 1 < sz; i++) {
		const struct jm *g = &regs->v[i];
		const struct jm *p = jm_path(g, "pages"),
				*rs = jm_path(g, "resident"),
				*ac = jm_path(g, "accessed"),
				*gn = jm_path(g, "gone"),
				*sp = jm_path(g, "sampled");
		int n = snprintf(buf + o, sz - o,
		    "\n  pages %lld resident %lld accessed %lld gone %d "
		    "sampled %d",
		    p && jm_is_int(p) ? p->ll : -1,
		    rs && jm_is_int(rs) ? rs->ll : -1,
		    ac && jm_is_int(ac) ? ac->ll : -1, gn && gn->b,
		    sp && sp->b);

		if (n < 0)
			break;
		o += (size_t)n < sz - o ? (size_t)n : sz - o - 1;
	}
	return regs ? buf : "no regions array";
}

static const char *
str(const struct jm *o, const char *key)
{
	const struct jm *v = jm_path(o, key);

	ck_assert_msg(v && v->t == JM_STR, "no string %s", key);
	return v->str;
}

START_TEST(test_dropped_with_helper)
{
	struct td d;
	const struct jm *t;
	char pidtxt[16], conf[256], why[2048];
	long long res, acc;
	struct jm *j;
	struct run r;
	pid_t pid = toucher(0);

	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)pid);
	snprintf(conf, sizeof(conf),
	    "user = %d\ngroup = %d\n"
	    "privhelper = on\nwss_interval_ms = 200\nwss_interval_min_ms = "
	    "200\nwss_interval_max_ms = 400\n",
	    DROP_UID, DROP_UID);
	daemon_start(&d, conf);
	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	ck_assert_msg(strncmp(str(j, "health.wss.access"), "privileged helper",
			  17) == 0,
	    "access: %s", str(j, "health.wss.access"));
	ck_assert_ptr_nonnull(jm_path(j, "health.privileges.dropped"));
	ck_assert(jm_path(j, "health.privileges.dropped")->b);
	/* the start-up pageout gave pages back: it runs before the drop
	 * (as uid 2000 the kernel skips the file pages of files it does
	 * not own: CI logged "4.32 -> 4.32 MiB" when it ran after) */
	ck_assert_int_eq(num(j, "health.memory.pageout_state"), 1);
	ck_assert_msg(num(j, "health.memory.pageout_file_after_bytes") <
		num(j, "health.memory.pageout_file_before_bytes") - 256 * 1024,
	    "pageout: file pages %lld -> %lld bytes",
	    num(j, "health.memory.pageout_file_before_bytes"),
	    num(j, "health.memory.pageout_file_after_bytes"));
	jm_free(j);
	run_free(&r);

	/* a root-owned process, from a daemon running as uid 2000 */
	r = vitals(&d, -1, "wss", "start", "--pid", pidtxt, "--mode", "heap",
	    NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	run_free(&r);
	t = two_passes(&d, pidtxt, &j);
	ck_assert_str_eq(str(t, "files"), "privileged helper");
	ck_assert_int_eq(num(t, "read_errors"), 0);
	/* PFNs readable: page level possible. Without page_idle (this
	 * kernel) the pass is clear_refs and the note says the PFNs were
	 * there; with it, the pass is page level. */
	ck_assert_int_eq(num(t, "pfn_zeroed"), 0);
	if (strcmp(str(t, "method"), "page_idle") != 0) {
		ck_assert_str_eq(str(t, "method"), "clear_refs");
		ck_assert_msg(strstr(str(t, "note"), "PFNs readable") != NULL,
		    "note: %s", str(t, "note"));
	}
	sums(t, &res, &acc);
	/* its region, at least. CI failed here with 0 (9858c03, 7e91fb6):
	 * a maps read that caught the toucher between its two mprotects
	 * rebuilt the region list, and until the next pass ended wss_get
	 * showed it with nothing sampled; it now shows the last completed
	 * pass (check_wss test_library_and_limits). */
	ck_assert_msg(res >= 64, "resident %lld of passes %lld:%s", res,
	    num(t, "passes"), regions_text(t, why, sizeof(why)));
	ck_assert_int_ge(acc, 16); /* the pages it touches every round */
	ck_assert_int_le(acc, res);
	jm_free(j);
	r = vitals(&d, -1, "wss", pidtxt, NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "files opened: privileged helper"));
	run_free(&r);
	reap(pid);
	td_stop(&d);
}
END_TEST

START_TEST(test_dropped_without_helper)
{
	struct td d;
	const struct jm *t;
	char pidtxt[16], conf[256], why[2048];
	long long res, acc;
	struct jm *j;
	struct run r;
	pid_t root = toucher(0), own = toucher(DROP_UID);

	snprintf(conf, sizeof(conf),
	    "user = %d\ngroup = %d\n"
	    "wss_interval_ms = 200\nwss_interval_min_ms = 200\n"
	    "wss_interval_max_ms = 400\nwss_rule = nosuch-%d heap\n",
	    DROP_UID, DROP_UID, (int)getpid());
	daemon_start(&d, conf);

	/* the root-owned process: refused, and why */
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)root);
	r = vitals(&d, -1, "wss", "start", "--pid", pidtxt, "--mode", "heap",
	    NULL);
	ck_assert_int_ne(r.code, 0);
	ck_assert_msg(strstr(r.err, "Permission denied") &&
		strstr(r.err, "without the privileged helper"),
	    "%s", r.err);
	run_free(&r);

	/* Health says what the drop costs, and counts the refusal */
	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	ck_assert_msg(strstr(str(j, "health.wss.access"),
			  "page-level unavailable") &&
		strstr(str(j, "health.wss.access"),
		    "other users' targets unreadable"),
	    "access: %s", str(j, "health.wss.access"));
	ck_assert_int_ge(num(j, "health.wss.access_denied"), 1);
	jm_free(j);
	run_free(&r);

	/* its own uid's process: region level, PFNs hidden, said so */
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)own);
	r = vitals(&d, -1, "wss", "start", "--pid", pidtxt, "--mode", "heap",
	    NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	run_free(&r);
	t = two_passes(&d, pidtxt, &j);
	ck_assert_str_eq(str(t, "files"), "direct");
	ck_assert_str_eq(str(t, "method"), "clear_refs");
	ck_assert_int_ge(num(t, "pfn_zeroed"), 1);
	ck_assert_msg(strstr(str(t, "note"), "needs CAP_SYS_ADMIN") != NULL,
	    "note: %s", str(t, "note"));
	sums(t, &res, &acc);
	/* presence needs no privilege (CI's run of bd870d8 failed here
	 * once with 0: the message says which regions) */
	ck_assert_msg(res >= 64, "resident %lld of passes %lld:%s", res,
	    num(t, "passes"), regions_text(t, why, sizeof(why)));
	ck_assert_int_ge(acc, 16);
	jm_free(j);

	/* the startup warning: rules configured, nothing to read them with */
	ck_assert_msg(file_has(d.log,
			  "wss: 1 rules configured, but files "
			  "are opened direct as user"),
	    "no warning in %s", d.log);
	reap(root);
	reap(own);
	td_stop(&d);
}
END_TEST

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * A stuck privileged helper (stopped) while a target starts: the daemon
 * answers the start at once, its sampling stays on schedule (no tick
 * late by anything near the helper's 5 s timeout, which the loop waited
 * out before the helper's opens moved to a worker thread), the target is
 * "opening" until the call times out, then says why it could not run:
 * its files opened directly, which a daemon dropped to uid 2000 may not
 * do for a root process. Health counts the files the helper did not open.
 * With seccomp on: the worker thread is made under the filter.
 */
START_TEST(test_stuck_helper)
{
	struct td d;
	const struct jm *t, *a;
	char pidtxt[16], conf[256];
	int64_t t0, start_ms, late_max = 0, mono0;
	long long seen_seq = -1;
	unsigned windows = 0;
	bool ended = false;
	struct jm *j;
	struct run r;
	int helper;
	pid_t pid = toucher(0);

	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)pid);
	snprintf(conf, sizeof(conf),
	    "user = %d\ngroup = %d\nseccomp = on\n"
	    "privhelper = on\nwss_interval_ms = 200\nwss_interval_min_ms = "
	    "200\nwss_interval_max_ms = 400\n",
	    DROP_UID, DROP_UID);
	daemon_start(&d, conf);
	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_msg(sscanf(str(j, "health.wss.access"),
			  "privileged helper (pid %d)", &helper) == 1,
	    "access: %s", str(j, "health.wss.access"));
	jm_free(j);
	run_free(&r);
	ck_assert_int_eq(kill(helper, SIGSTOP), 0);

	mono0 = mono_ns();
	t0 = mono0;
	r = vitals(&d, -1, "wss", "start", "--pid", pidtxt, "--mode", "heap",
	    NULL);
	start_ms = (mono_ns() - t0) / 1000000;
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	run_free(&r);
	r = vitals(&d, -1, "--json", "wss", pidtxt, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	t = first_target(j, "wss_get");
	ck_assert(jbool(t, "opening"));
	ck_assert_int_eq(num(t, "passes"), 0);
	jm_free(j);
	run_free(&r);

	/* the windows while the call waits out its 5 s, and after */
	while (mono_ns() - mono0 < 8000 * 1000000LL) {
		tu_sleep_ms(250);
		r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL,
		    NULL);
		ck_assert_int_eq(r.code, 0);
		ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
		a = jm_path(j, "health.last");
		if (a && a->t == JM_OBJ && num(a, "seq") != seen_seq) {
			seen_seq = num(a, "seq");
			windows++;
			if (num(a, "health.tick_late_ns_max") > late_max)
				late_max = num(a, "health.tick_late_ns_max");
		}
		jm_free(j);
		run_free(&r);
		r = vitals(&d, -1, "--json", "wss", pidtxt, NULL, NULL, NULL,
		    NULL);
		ck_assert_int_eq(r.code, 0);
		ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
		ended = jbool(first_target(j, "wss_get"), "ended");
		jm_free(j);
		run_free(&r);
		if (ended && mono_ns() - mono0 > 6500 * 1000000LL)
			break;
	}
	fprintf(stderr,
	    "stuck helper: wss start answered in %lld ms; worst tick "
	    "lateness %.1f ms over %u windows\n",
	    (long long)start_ms, (double)late_max / 1e6, windows);
	ck_assert_msg(start_ms < 1000, "start answered in %lld ms",
	    (long long)start_ms);
	ck_assert_uint_ge(windows, 5);
	ck_assert_msg(late_max < 1000 * 1000000LL, "a tick %lld ms late",
	    (long long)(late_max / 1000000));

	/* the target says what happened; Health counts it */
	r = vitals(&d, -1, "--json", "wss", pidtxt, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	t = first_target(j, "wss_get");
	ck_assert(jbool(t, "ended"));
	ck_assert(!jbool(t, "opening"));
	ck_assert_msg(strstr(str(t, "end_reason"),
			  "pagemap: Permission denied"),
	    "end: %s", str(t, "end_reason"));
	ck_assert_str_eq(str(t, "files"),
	    "direct (helper: Connection timed out)");
	jm_free(j);
	run_free(&r);
	r = vitals(&d, -1, "wss", pidtxt, NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "helper: Connection timed out"));
	run_free(&r);
	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_int_eq(num(j, "health.wss.helper_errors"), 4);
	ck_assert_int_ge(num(j, "health.wss.access_denied"), 1);
	jm_free(j);
	run_free(&r);
	r = vitals(&d, -1, "health", NULL, NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out,
	    "4 target files the privileged "
	    "helper did not open"));
	run_free(&r);
	kill(helper, SIGCONT);
	reap(pid);
	td_stop(&d);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("wss_daemon");
	TCase *tc = tcase_create("daemon");

	if (!tu_need_root("idle page tracking, other users' processes"))
		return 77;
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_client_roundtrip);
	tcase_add_test(tc, test_rule);
	tcase_add_test(tc, test_dropped_with_helper);
	tcase_add_test(tc, test_dropped_without_helper);
	tcase_add_test(tc, test_stuck_helper);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
