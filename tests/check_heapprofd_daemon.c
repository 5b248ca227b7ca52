/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd sessions against the real daemon, the real socket and the
 * vitals client, with a stand-in perfetto (fake_perfetto.c) that records
 * its argv and stdin: a rule fires on a real process whose RSS grows (a
 * child running as an app uid listed in a packages.list), the session runs
 * once and the next firing is rate-limited; refusals carry their reasons;
 * a caller switched to an unprivileged uid is refused; cancellation kills
 * the child; a child that hangs is killed at the timeout; a daemon killed
 * mid-session records the outcome honestly when it starts again, and its
 * budgets survive.
 */
#include <check.h>
#include <dirent.h>
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

#include <sys/socket.h>

#include <sqlite3.h>

#include "client.h"
#include "client_run.h"
#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

#define APP_UID 10123
#define READER_UID 65534

static const char *fake_perfetto;

struct daemon {
	struct td td;
	char fp[1024];
	const char *xargs[12]; /* more flags (the drop, seccomp, the helper) */
};

/* The service user of the dropped daemon (no passwd entry needed). */
static uint32_t svc_uid;
static char svc_uid_s[16];

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct run
vitals(const struct daemon *d, int uid, const char *a0, const char *a1,
    const char *a2, const char *a3, const char *a4, const char *a5)
{
	const char *argv[] = { "vitals", "--socket", d->td.sock, "--timeout",
		"10000", a0, a1, a2, a3, a4, a5, NULL };

	return run_client_as(uid, argv);
}

static struct jm *
json_of(struct run *r)
{
	struct jm *j = jm_parse(r->out, strlen(r->out));

	ck_assert_msg(j != NULL, "not JSON: %s (stderr %s)", r->out, r->err);
	return j;
}

static long long
num(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	return jm_is_int(v) ? v->ll : 0;
}

static const char *
str(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	return v && v->t == JM_STR ? v->str : "";
}

static bool
flag(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	return v && v->t == JM_BOOL && v->b;
}

static void
set_mode(const struct daemon *d, const char *mode)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/mode", d->fp);
	ck_assert_int_eq(tu_writes(p, mode), 0);
}

static void
perfetto_dir(void *arg)
{
	setenv("VITALS_FAKE_PERFETTO_DIR", arg, 1);
}

static void
daemon_exec(struct daemon *d)
{
	const char *argv[20] = { "--interval-ms", "100", "--window-s", "1",
		"--threads", "none", "--perfetto", fake_perfetto };
	int n = 8, i;

	for (i = 0; d->xargs[i]; i++)
		argv[n++] = d->xargs[i];
	argv[n] = NULL;
	td_spawn(&d->td, argv, perfetto_dir, d->fp);
}

static void
daemon_wait_up(struct daemon *d)
{
	td_wait(&d->td, 10000, NULL, NULL);
}

/* A daemon on a fresh state directory; extra config lines appended;
 * xargs: more flags, NULL-terminated (NULL: none). */
static void
daemon_start_args(struct daemon *d, const char *extra, const char *const *xargs)
{
	char pl[1024], calls[PATH_MAX], conf[8192];
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; xargs && xargs[i] && i < 11; i++)
		d->xargs[i] = xargs[i];
	td_prepare(&d->td, "hp-daemon", NULL);
	snprintf(d->fp, sizeof(d->fp), "%s/fp", d->td.dir);
	snprintf(calls, sizeof(calls), "%s/calls/.keep", d->fp);
	ck_assert_int_eq(tu_writes(calls, ""), 0);
	/* perfetto may run as the service user: it records its calls here */
	calls[strlen(calls) - strlen("/.keep")] = '\0';
	ck_assert_int_eq(chmod(d->fp, 0777), 0);
	ck_assert_int_eq(chmod(calls, 0777), 0);
	set_mode(d, "exit 0 200\n");
	snprintf(pl, sizeof(pl), "%s/packages.list", d->td.dir);
	/* the app: profileable from shell, as an unspecified initiator
	 * needs; installed by the store */
	ck_assert_int_eq(
	    tu_writes(pl,
		"vitals.test.app 10123 0 "
		"/data/user/0/vitals.test.app default:targetSdkVersion=34 3003 1 "
		"1 1 com.android.vending\n"),
	    0);
	snprintf(conf, sizeof(conf),
	    "heapprofd_packages_list = %s\n"
	    "heapprofd_grace_ms = 300\n"
	    "heapprofd_kill_after_ms = 500\n"
	    "heapprofd_cooldown_s = 0\n"
	    "reader_uids = %d\n"
	    "%s",
	    pl, READER_UID, extra ? extra : "");
	ck_assert_int_eq(tu_writes(d->td.conf, conf), 0);
	daemon_exec(d);
	daemon_wait_up(d);
}

static void
daemon_start(struct daemon *d, const char *extra)
{
	daemon_start_args(d, extra, NULL);
}

static void
daemon_stop(struct daemon *d)
{
	td_stop(&d->td);
}

/*
 * A process running as uid (APP_UID: the listed app). grow_mb > 0: it
 * grows its RSS by 2 MiB every 100 ms (pages touched) up to grow_mb,
 * then holds. It dies with the test.
 */
static pid_t
app(int uid, unsigned grow_mb)
{
	int pfd[2];
	pid_t pid;
	char c;

	/* returns once the child runs as uid: the daemon must judge it as
	 * that uid however slowly a loaded machine schedules it */
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned mb = 0;

		close(pfd[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setgroups(0, NULL) < 0 || setgid((gid_t)uid) < 0 ||
		    setuid((uid_t)uid) < 0)
			_exit(126);
		if (write(pfd[1], "u", 1) != 1)
			_exit(125);
		close(pfd[1]);
		for (;;) {
			if (mb < grow_mb) {
				char *p = mmap(NULL, 2u << 20,
				    PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

				if (p != MAP_FAILED)
					memset(p, 0x5a, 2u << 20);
				mb += 2;
			}
			tu_sleep_ms(100);
		}
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The session records, newest first (the caller frees the jm). */
static struct jm *
list(const struct daemon *d, const struct jm **ret_sessions)
{
	struct run r = vitals(d, -1, "--json", "heapprofd", "list", NULL, NULL,
	    NULL);
	struct jm *j;

	ck_assert_msg(r.code == 0, "heapprofd list: exit %d: %s", r.code,
	    r.err);
	j = json_of(&r);
	run_free(&r);
	*ret_sessions = jm_path(j, "heapprofd_list.sessions");
	return j;
}

/* Poll the records until session id has an outcome other than running. */
static struct jm *
wait_outcome(const struct daemon *d, long long id, const char *outcome,
    unsigned ms, const struct jm **ret_s)
{
	int64_t until = mono_ms() + ms;

	for (;;) {
		const struct jm *ss;
		struct jm *j = list(d, &ss);
		size_t i;

		for (i = 0; ss && i < ss->n; i++) {
			if (num(&ss->v[i], "id") != id)
				continue;
			if (!strcmp(str(&ss->v[i], "outcome"), outcome)) {
				*ret_s = &ss->v[i];
				return j;
			}
		}
		jm_free(j);
		ck_assert_msg(mono_ms() < until,
		    "session %lld not %s within "
		    "%u ms",
		    id, outcome, ms);
		tu_sleep_ms(100);
	}
}

/*
 * The record of session id as `heapprofd list` reads it, once the
 * daemon's writer thread has committed it (the start answer does not wait
 * for that): polled until it is listed with want (NULL: any outcome) and,
 * for a running one, its perfetto's pid. The caller frees the jm.
 */
static struct jm *
wait_listed(const struct daemon *d, long long id, const char *want,
    const struct jm **ret_s)
{
	int64_t until = mono_ms() + 5000;

	for (;;) {
		const struct jm *ss;
		struct jm *j = list(d, &ss);
		size_t i;

		for (i = 0; ss && i < ss->n; i++) {
			const char *o = str(&ss->v[i], "outcome");

			if (num(&ss->v[i], "id") != id ||
			    (want && strcmp(o, want)) ||
			    (!strcmp(o, "running") &&
				num(&ss->v[i], "child_pid") <= 0))
				continue;
			*ret_s = &ss->v[i];
			return j;
		}
		jm_free(j);
		ck_assert_msg(mono_ms() < until,
		    "session %lld not listed "
		    "within 5 s (log %s)",
		    id, d->td.log);
		tu_sleep_ms(20);
	}
}

/* Start a session on pid as root; its id (the answer must be a start). */
static long long
start_pid(const struct daemon *d, pid_t pid, const char *duration)
{
	char p[16];
	struct run r;
	struct jm *j;
	long long id;

	snprintf(p, sizeof(p), "%d", (int)pid);
	r = vitals(d, -1, "--json", "heapprofd", "start", "--pid", p,
	    duration ? duration : "--duration=60s");
	ck_assert_msg(r.code == 0, "start: exit %d: %s %s", r.code, r.out,
	    r.err);
	j = json_of(&r);
	id = num(jm_path(j, "heapprofd_start"), "session_id");
	ck_assert_int_gt(id, 0);
	jm_free(j);
	run_free(&r);
	return id;
}

static unsigned
count_calls(const struct daemon *d, char *ret_stdin, size_t sz)
{
	char p[1100];
	struct dirent *de;
	unsigned n = 0;
	DIR *dir;

	snprintf(p, sizeof(p), "%s/calls", d->fp);
	dir = opendir(p);
	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)) != NULL) {
		if (strstr(de->d_name, ".argv"))
			n++;
		if (ret_stdin && strstr(de->d_name, ".stdin"))
			snprintf(ret_stdin, sz, "%s/%s", p, de->d_name);
	}
	closedir(dir);
	return n;
}

static char *
slurp(const char *path)
{
	char *buf = malloc(65536);
	size_t n = 0;
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* What the record says it wrote is what the file holds. */
static void
assert_output(const struct jm *s)
{
	struct stat sb;

	ck_assert_int_eq(stat(str(s, "output_path"), &sb), 0);
	ck_assert_int_gt(num(s, "output_bytes"), 0);
	ck_assert_int_eq(num(s, "output_bytes"), (long long)sb.st_size);
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
}

static bool
alive(pid_t pid)
{
	char p[64], *s;
	bool r;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	if (access(p, F_OK) != 0)
		return false;
	s = slurp(p);
	r = strstr(s, ") Z ") == NULL; /* a zombie has ended */
	free(s);
	return r;
}

START_TEST(test_rule_fires_once_then_rate_limited)
{
	const struct jm *ss, *s = NULL, *refused = NULL, *h;
	char in[PATH_MAX] = "", cmd[PATH_MAX * 2], want[64], *dec;
	struct daemon d;
	struct run r;
	struct jm *j;
	int64_t until;
	unsigned started = 0;
	size_t i;
	pid_t a;
	FILE *f;

	daemon_start(&d,
	    "heapprofd_max_per_hour = 1\n"
	    "heapprofd_rule = grow when=rss_growth:8M:2s match=uid:10123 "
	    "target=matched duration=1s\n");
	a = app(APP_UID, 120);
	until = mono_ms() + 20000;
	for (;;) {
		j = list(&d, &ss);
		started = 0;
		refused = NULL;
		for (i = 0; ss && i < ss->n; i++) {
			const char *why;

			if (flag(&ss->v[i], "started")) {
				started++, s = &ss->v[i];
				continue;
			}
			if (strcmp(str(&ss->v[i], "rule"), "grow") != 0)
				continue;
			/* held again while its session ran: refused for
			 * that (a window closes inside a session) */
			why = str(&ss->v[i], "refusal");
			if (strcmp(why, "HEAPPROFD_IN_PROGRESS") != 0)
				refused = &ss->v[i];
		}
		if (refused && s && strcmp(str(s, "outcome"), "running"))
			break;
		jm_free(j);
		ck_assert_msg(mono_ms() < until,
		    "no session then refusal "
		    "within 20 s (log %s)",
		    d.td.log);
		tu_sleep_ms(200);
	}
	/* once: one started session, by the rule, on the process */
	ck_assert_uint_eq(started, 1);
	ck_assert(flag(s, "by_rule"));
	ck_assert_str_eq(str(s, "rule"), "grow");
	snprintf(want, sizeof(want), "pid %d", (int)a);
	ck_assert_str_eq(str(s, "target"), want);
	ck_assert_str_eq(str(s, "outcome"), "completed");
	ck_assert_int_eq(num(s, "exit_status"), 0);
	assert_output(s);
	/* then rate-limited, with the right reason */
	ck_assert_str_eq(str(refused, "refusal"),
	    "HEAPPROFD_RATE_LIMITED_PROCESS");
	ck_assert_ptr_nonnull(strstr(str(refused, "message"), "last hour"));
	jm_free(j);

	/* perfetto ran once, with the config on stdin */
	ck_assert_uint_eq(count_calls(&d, in, sizeof(in)), 1);
	snprintf(cmd, sizeof(cmd),
	    "protoc --decode=perfetto.protos.TraceConfig"
	    " -I %s/proto %s/proto/perfetto_config.proto < %s",
	    getenv("VITALS_SRCDIR"), getenv("VITALS_SRCDIR"), in);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	dec = malloc(65536);
	dec[fread(dec, 1, 65535, f)] = '\0';
	ck_assert_int_eq(pclose(f), 0);
	snprintf(want, sizeof(want), "      pid: %d\n", (int)a);
	ck_assert_ptr_nonnull(strstr(dec, want));
	ck_assert_ptr_nonnull(strstr(dec, "\nduration_ms: 1000\n"));
	ck_assert_ptr_nonnull(strstr(dec, "name: \"android.heapprofd\""));
	free(dec);

	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	j = json_of(&r);
	h = jm_path(j, "health.heapprofd");
	ck_assert_ptr_nonnull(h);
	ck_assert_int_ge(num(h, "rules_fired"), 2);
	ck_assert_int_eq(num(h, "started"), 1);
	ck_assert_int_eq(num(h, "completed"), 1);
	jm_free(j);
	run_free(&r);
	reap(a);
	daemon_stop(&d);
}
END_TEST

START_TEST(test_refusals_and_roles)
{
	const struct jm *h, *st;
	char p[16], q[16];
	struct daemon d;
	struct run r;
	struct jm *j;
	pid_t a, root;
	size_t i;

	daemon_start(&d, NULL);
	a = app(APP_UID, 0);
	root = app(0, 0);
	tu_sleep_ms(200);
	snprintf(p, sizeof(p), "%d", (int)a);
	snprintf(q, sizeof(q), "%d", (int)root);

	/* the socket is 0660: open it to nobody so the daemon decides */
	ck_assert_int_eq(chmod(d.td.dir, 0755), 0);
	ck_assert_int_eq(chmod(d.td.sock, 0666), 0);
	/* a caller switched to an unprivileged uid: refused, counted */
	r = vitals(&d, READER_UID, "heapprofd", "start", "--pid", p, NULL,
	    NULL);
	ck_assert_msg(r.code == VX_DENIED, "reader start: exit %d", r.code);
	ck_assert_ptr_nonnull(strstr(r.err, "permission denied by vitalsd: "));
	ck_assert_msg(strstr(r.err, "trusted role") != NULL, "%s", r.err);
	run_free(&r);
	r = vitals(&d, READER_UID, "heapprofd", "cancel", "1", NULL, NULL,
	    NULL);
	ck_assert_int_eq(r.code, VX_DENIED);
	run_free(&r);
	r = vitals(&d, READER_UID, "heapprofd", "list", NULL, NULL, NULL, NULL);
	ck_assert_msg(r.code == 0, "reader list: exit %d: %s", r.code, r.err);
	run_free(&r);

	/* a platform uid, not trusted-system: not eligible */
	r = vitals(&d, -1, "heapprofd", "start", "--pid", q, NULL, NULL);
	ck_assert_int_eq(r.code, VX_REFUSED);
	ck_assert_ptr_nonnull(strstr(r.err, "not eligible"));
	ck_assert_ptr_nonnull(strstr(r.err, "platform uid"));
	run_free(&r);
	/* never a glob, never an unnormalised name */
	r = vitals(&d, -1, "heapprofd", "start", "--name", "vitals.*", NULL,
	    NULL);
	ck_assert_int_eq(r.code, VX_REFUSED);
	ck_assert_ptr_nonnull(strstr(r.err, "invalid request"));
	run_free(&r);
	/* the dry run: the config, nothing started */
	r = vitals(&d, -1, "heapprofd", "start", "--pid", p, "--dry-run", NULL);
	ck_assert_msg(r.code == 0, "dry run: %d %s", r.code, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "name: \"android.heapprofd\""));
	ck_assert_ptr_nonnull(strstr(r.out, "sampling_interval_bytes: 4096"));
	ck_assert_ptr_nonnull(strstr(r.out, "shmem_size_bytes: 8388608"));
	ck_assert_ptr_nonnull(strstr(r.out, "block_client: false"));
	run_free(&r);
	ck_assert_uint_eq(count_calls(&d, NULL, 0), 0);

	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL);
	j = json_of(&r);
	h = jm_path(j, "health.heapprofd");
	ck_assert_int_eq(num(h, "denied"), 2);
	ck_assert_int_eq(num(h, "dry_runs"), 1);
	ck_assert_int_eq(num(h, "started"), 0);
	ck_assert_str_eq(str(h, "initiator"), "unspecified");
	st = jm_get(h, "refused");
	for (i = 0; st && i < st->n; i++) {
		const char *n = str(&st->v[i], "name");

		if (!strcmp(n, "not_eligible") || !strcmp(n, "invalid_request"))
			ck_assert_int_eq(num(&st->v[i], "value"), 1);
	}
	jm_free(j);
	run_free(&r);
	reap(a);
	reap(root);
	daemon_stop(&d);
}
END_TEST

START_TEST(test_cancel_kills_child)
{
	const struct jm *s;
	char p[16], id_s[24];
	struct daemon d;
	struct run r;
	struct jm *j;
	long long id;
	pid_t a, child;

	daemon_start(&d, NULL);
	set_mode(&d, "term\n");
	a = app(APP_UID, 0);
	tu_sleep_ms(200);
	id = start_pid(&d, a, "--duration=60s");
	j = wait_listed(&d, id, "running", &s);
	child = (pid_t)num(s, "child_pid");
	jm_free(j);
	ck_assert_int_gt(child, 0);
	ck_assert(alive(child));

	/* one at a time */
	snprintf(p, sizeof(p), "%d", (int)a);
	r = vitals(&d, -1, "heapprofd", "start", "--pid", p, NULL, NULL);
	ck_assert_int_eq(r.code, VX_REFUSED);
	ck_assert_ptr_nonnull(strstr(r.err, "another session in progress"));
	run_free(&r);

	snprintf(id_s, sizeof(id_s), "%lld", id);
	r = vitals(&d, -1, "heapprofd", "cancel", id_s, NULL, NULL, NULL);
	ck_assert_msg(r.code == 0, "cancel: %d %s", r.code, r.err);
	run_free(&r);
	j = wait_outcome(&d, id, "cancelled", 5000, &s);
	ck_assert_int_eq(num(s, "exit_status"), 0); /* it stopped cleanly */
	assert_output(s);
	ck_assert_int_gt(num(s, "end_wall_ns"), num(s, "start_wall_ns"));
	jm_free(j);
	ck_assert(!alive(child));
	/* cancelling again: not running */
	r = vitals(&d, -1, "heapprofd", "cancel", id_s, NULL, NULL, NULL);
	ck_assert_int_ne(r.code, 0);
	run_free(&r);
	reap(a);
	daemon_stop(&d);
}
END_TEST

START_TEST(test_hang_killed_at_timeout)
{
	const struct jm *s;
	struct daemon d;
	struct jm *j;
	long long id;
	int64_t t0;
	pid_t a, child;

	daemon_start(&d, NULL);
	set_mode(&d, "ignore-term\n");
	a = app(APP_UID, 0);
	tu_sleep_ms(200);
	t0 = mono_ms();
	id = start_pid(&d, a, "--duration=300ms");
	j = wait_listed(&d, id, NULL, &s);
	child = (pid_t)num(s, "child_pid");
	jm_free(j);
	/* 300 ms + 300 ms grace: SIGTERM, ignored; 500 ms on: SIGKILL */
	j = wait_outcome(&d, id, "timeout", 8000, &s);
	ck_assert_int_ge(mono_ms() - t0, 1000);
	ck_assert_int_eq(num(s, "term_signal"), SIGKILL);
	/* no exit status (killed): null, not -1 */
	ck_assert_int_eq(jm_get(s, "exit_status")->t, JM_NULL);
	jm_free(j);
	ck_assert(!alive(child));
	reap(a);
	daemon_stop(&d);
}
END_TEST

START_TEST(test_restart_mid_session)
{
	const struct jm *s, *h;
	char p[16];
	struct daemon d;
	struct run r;
	struct jm *j;
	long long id;
	int64_t until;
	pid_t a, child;
	int status;

	daemon_start(&d, "heapprofd_max_per_hour = 1\n");
	set_mode(&d, "term\n");
	a = app(APP_UID, 0);
	tu_sleep_ms(200);
	id = start_pid(&d, a, "--duration=60s");
	j = wait_listed(&d, id, "running", &s);
	child = (pid_t)num(s, "child_pid");
	jm_free(j);
	ck_assert(alive(child));

	/* the daemon dies mid-session; perfetto is orphaned, still running */
	kill(d.td.pid, SIGKILL);
	ck_assert_int_eq(waitpid(d.td.pid, &status, 0), d.td.pid);
	ck_assert(alive(child));
	daemon_exec(&d);
	daemon_wait_up(&d);

	j = wait_outcome(&d, id, "daemon restarted", 5000, &s);
	ck_assert_ptr_nonnull(strstr(str(s, "message"), "still running"));
	ck_assert_int_gt(num(s, "end_wall_ns"), 0);
	jm_free(j);
	/* the orphan got SIGTERM and ended */
	until = mono_ms() + 5000;
	while (alive(child) && mono_ms() < until)
		tu_sleep_ms(50);
	ck_assert(!alive(child));

	/* the budget was not reset by the restart */
	snprintf(p, sizeof(p), "%d", (int)a);
	r = vitals(&d, -1, "heapprofd", "start", "--pid", p, NULL, NULL);
	ck_assert_int_eq(r.code, VX_REFUSED);
	ck_assert_ptr_nonnull(strstr(r.err, "rate limited (process)"));
	run_free(&r);
	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL);
	j = json_of(&r);
	h = jm_path(j, "health.heapprofd");
	ck_assert_int_eq(num(h, "restarted_closed"), 1);
	jm_free(j);
	run_free(&r);
	reap(a);
	daemon_stop(&d);
}
END_TEST

/* ----------------------------------- a held store does not hold the loop */

/* What `vitals --json health` says of the last window and the records. */
struct hnow {
	long long seq, late_ns, rec_queued, rec_written;
};

static struct hnow
health_now(const struct daemon *d)
{
	struct run r = vitals(d, -1, "--json", "health", NULL, NULL, NULL,
	    NULL);
	struct hnow h;
	struct jm *j;

	ck_assert_msg(r.code == 0, "health: exit %d: %s", r.code, r.err);
	j = json_of(&r);
	h.seq = num(jm_path(j, "health.last"), "seq");
	h.late_ns = num(jm_path(j, "health.last.health"), "tick_late_ns_max");
	h.rec_queued = num(jm_path(j, "health.heapprofd"), "records_queued");
	h.rec_written = num(jm_path(j, "health.heapprofd"), "records_written");
	jm_free(j);
	run_free(&r);
	return h;
}

/* The largest timer lateness of the windows health showed (each once). */
static void
note_late(const struct hnow *h, long long *seen_seq, long long *late_max)
{
	if (h->seq == *seen_seq)
		return;
	*seen_seq = h->seq;
	if (h->late_ns > *late_max)
		*late_max = h->late_ns;
}

/* The database's write lock, taken from a second connection as another
 * writer would: the daemon's writer thread waits for it (busy_timeout). */
/*
 * The store's writer held (another connection has the write lock, the
 * writer thread waits for it inside its busy timeout of 2 s): the daemon
 * goes on sampling on schedule and answers a heapprofd start at once; the
 * session's record waits in the writer's queue (health says so, the list
 * does not show it yet) and is listed once the lock goes; the window that
 * closed meanwhile is announced only when it is committed.
 */
START_TEST(test_held_store_loop_free)
{
	long long seen = 0, late_max = 0, id, w;
	const struct jm *s;
	char want[32], dbpath[PATH_MAX];
	struct hnow h;
	struct daemon d;
	struct jm *j;
	int64_t t0, t_start, t_lock, until;
	sqlite3 *db;
	pid_t a;

	/* each window its own commit into vitals.db: the lock held is on
	 * that file (with the spool a window would wait only for a move) */
	daemon_start_args(&d, NULL,
	    (const char *const[]){ "--store-commit-s", "0", NULL });
	a = app(APP_UID, 0);
	/* a window stored: the database and its tables exist */
	ck_assert(td_log_until(d.td.pid, d.td.log, "window 2:", 300, 50));
	h = health_now(&d);
	snprintf(dbpath, sizeof(dbpath), "%s/vitals.db", d.td.dir);
	db = tu_db_hold(dbpath);
	t_lock = mono_ms();
	/* the next window closes: the writer now waits on the lock */
	until = t_lock + 5000;
	for (w = h.seq; w == h.seq;) {
		h = health_now(&d);
		note_late(&h, &seen, &late_max);
		ck_assert_msg(mono_ms() < until, "no window closed");
		if (h.seq == w)
			tu_sleep_ms(50);
	}
	w = h.seq;
	/* still held: its line has not come */
	snprintf(want, sizeof(want), "window %lld:", w);
	ck_assert_msg(!td_file_has(d.td.log, want), "%s announced uncommitted",
	    want);

	t0 = mono_ms();
	id = start_pid(&d, a, "--duration=60s");
	t_start = mono_ms() - t0;
	/* the record waits for the writer: queued, not listed */
	h = health_now(&d);
	note_late(&h, &seen, &late_max);
	ck_assert_int_ge(h.rec_queued, 1);
	{
		const struct jm *ss;
		size_t i;

		j = list(&d, &ss);
		for (i = 0; ss && i < ss->n; i++)
			ck_assert_int_ne(num(&ss->v[i], "id"), id);
		jm_free(j);
	}
	ck_assert_msg(!td_file_has(d.td.log, want), "%s announced uncommitted",
	    want);
	/* sampling goes on: every window health shows meanwhile */
	while (mono_ms() - t_lock < 1500) {
		h = health_now(&d);
		note_late(&h, &seen, &late_max);
		tu_sleep_ms(100);
	}
	ck_assert_msg(!td_file_has(d.td.log, want), "%s announced uncommitted",
	    want);
	tu_db_release(db);
	t0 = mono_ms();
	j = wait_listed(&d, id, NULL, &s);
	jm_free(j);
	fprintf(stderr,
	    "held store: start answered in %lld ms, timer late by at most "
	    "%lld us in the windows meanwhile; record listed %lld ms after "
	    "the lock went\n",
	    (long long)t_start, late_max / 1000, (long long)(mono_ms() - t0));
	ck_assert(td_log_until(d.td.pid, d.td.log, want, 100, 50));
	h = health_now(&d);
	ck_assert_int_eq(h.rec_queued, 0);
	ck_assert_int_ge(h.rec_written, 1);
	/* the loop never waited for the held store */
	ck_assert_msg(t_start < 1000, "start answered in %lld ms",
	    (long long)t_start);
	ck_assert_msg(late_max < 500 * 1000000LL, "timer late by %lld ms",
	    late_max / 1000000);
	reap(a);
	daemon_stop(&d);
}
END_TEST

/* ------------------------------------------- seccomp on: the spawner */

/* "Key:\tvalue" of /proc/<pid>/status, blanks trimmed; "" if none. */
static const char *
status_of(pid_t pid, const char *key, char *buf, size_t sz)
{
	char path[64], line[512];
	size_t kl = strlen(key);
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *v = line + kl + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(buf, sz, "%s", v);
			break;
		}
	}
	fclose(f);
	return buf;
}

/* The child of ppid whose comm is comm; 0 if none. */
static pid_t
child_named(pid_t ppid, const char *comm)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *d = opendir("/proc");

	ck_assert_ptr_nonnull(d);
	while (found == 0 && (de = readdir(d)) != NULL) {
		char v[64], c[64];
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0)
			continue;
		if (atoi(status_of(pid, "PPid", v, sizeof(v))) == ppid &&
		    !strcmp(status_of(pid, "Name", c, sizeof(c)), comm))
			found = pid;
	}
	closedir(d);
	return found;
}

/* Confined as the spawner and perfetto are: the service uid, nothing in
 * any capability set, no_new_privs, a seccomp filter. */
static void
assert_confined(pid_t pid, const char *what)
{
	char v[128], want[64];

	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", svc_uid, svc_uid,
	    svc_uid, svc_uid);
	ck_assert_msg(!strcmp(status_of(pid, "Uid", v, sizeof(v)), want),
	    "%s (pid %d) Uid %s", what, (int)pid, v);
	ck_assert_str_eq(status_of(pid, "CapEff", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_of(pid, "CapPrm", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_of(pid, "CapBnd", v, sizeof(v)),
	    "0000000000000000");
	ck_assert_str_eq(status_of(pid, "NoNewPrivs", v, sizeof(v)), "1");
	ck_assert_msg(!strcmp(status_of(pid, "Seccomp", v, sizeof(v)), "2"),
	    "%s (pid %d) Seccomp %s", what, (int)pid, v);
}

/* Every thread of the daemon under its filter. */
static void
assert_daemon_filtered(pid_t pid)
{
	char path[64], v[32];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		ck_assert_msg(!strcmp(status_of((pid_t)atoi(de->d_name),
					  "Seccomp", v, sizeof(v)),
				  "2"),
		    "daemon thread %s: "
		    "Seccomp %s",
		    de->d_name, v);
		n++;
	}
	closedir(d);
	ck_assert_uint_ge(n, 1);
}

static const char *const spawn_args[] = { "--user", svc_uid_s, "--group",
	svc_uid_s, "--seccomp", "on", "--privhelper", "on", NULL };

/* The running session's perfetto pid, once the spawner has answered. */
static pid_t
wait_child(const struct daemon *d, long long id)
{
	int64_t until = mono_ms() + 5000;

	for (;;) {
		const struct jm *ss;
		struct jm *j = list(d, &ss);
		pid_t child = 0;
		size_t i;

		for (i = 0; ss && i < ss->n; i++)
			if (num(&ss->v[i], "id") == id)
				child = (pid_t)num(&ss->v[i], "child_pid");
		jm_free(j);
		if (child > 0)
			return child;
		ck_assert_msg(mono_ms() < until,
		    "session %lld: no child pid "
		    "within 5 s (log %s)",
		    id, d->td.log);
		tu_sleep_ms(50);
	}
}

/* The stand-in perfetto (mode "term") has its SIGTERM handler in place. */
static void
wait_ready(const struct daemon *d, pid_t child)
{
	int64_t until = mono_ms() + 5000;
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/calls/%d.ready", d->fp, (int)child);
	while (access(p, F_OK) != 0) {
		ck_assert_msg(mono_ms() < until, "perfetto %d not ready",
		    (int)child);
		tu_sleep_ms(20);
	}
}

static char *
run_out(const char *cmd, int *ret_status)
{
	char *buf = malloc(65536);
	size_t n;
	FILE *f = popen(cmd, "r");

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	*ret_status = pclose(f);
	return buf;
}

/*
 * seccomp on, the helper on, a dropped daemon: a session runs the stand-in
 * perfetto through the spawner and completes; the config it got is byte
 * for byte what the dry run shows; the spawner and perfetto are confined
 * (the spawn filter refuses ptrace, unshare and execve in perfetto too);
 * the daemon, the helper and the spawner all run under seccomp filters.
 */
START_TEST(test_spawn_seccomp_completes)
{
	const struct jm *s, *h;
	char p[16], in[PATH_MAX] = "", cmd[PATH_MAX * 3], probe[PATH_MAX + 16];
	char *dec, *dry, *got, *enc, *pr, v[64];
	struct daemon d;
	struct run r;
	struct jm *j;
	long long id;
	pid_t a, spawner, helper, child;
	int st;
	size_t n;
	FILE *f;

	daemon_start_args(&d, NULL, spawn_args);
	assert_daemon_filtered(d.td.pid);
	spawner = child_named(d.td.pid, "vitalsd-spawn");
	helper = child_named(d.td.pid, "vitalsd-helper");
	ck_assert_int_gt(spawner, 0);
	ck_assert_int_gt(helper, 0);
	assert_confined(spawner, "spawner");
	ck_assert_str_eq(status_of(helper, "Seccomp", v, sizeof(v)), "2");

	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL);
	j = json_of(&r);
	h = jm_path(j, "health.heapprofd");
	ck_assert_str_eq(str(h, "spawn"), "helper");
	ck_assert_str_eq(str(h, "build_type"), "user");
	ck_assert_str_eq(str(h, "build_type_source"), "heapprofd_build_type");
	jm_free(j);
	run_free(&r);

	/* a session: perfetto records what it was given, then exits 0 */
	set_mode(&d, "probe\n");
	a = app(APP_UID, 0);
	tu_sleep_ms(200);
	snprintf(p, sizeof(p), "%d", (int)a);
	r = vitals(&d, -1, "heapprofd", "start", "--pid", p, "--dry-run", NULL);
	ck_assert_msg(r.code == 0, "dry run: %d %s", r.code, r.err);
	dry = strdup(r.out);
	run_free(&r);
	id = start_pid(&d, a, "--duration=60s");
	j = wait_outcome(&d, id, "completed", 8000, &s);
	ck_assert_int_eq(num(s, "exit_status"), 0);
	assert_output(s);
	child = (pid_t)num(s, "child_pid");
	ck_assert_int_gt(child, 0);
	jm_free(j);

	/* byte for byte: decoded as the dry run shows it, and protoc's own
	 * encoding of that text is the same bytes */
	ck_assert_uint_eq(count_calls(&d, in, sizeof(in)), 1);
	snprintf(cmd, sizeof(cmd),
	    "protoc --decode=perfetto.protos.TraceConfig"
	    " -I %s/proto %s/proto/perfetto_config.proto < %s",
	    getenv("VITALS_SRCDIR"), getenv("VITALS_SRCDIR"), in);
	dec = run_out(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_str_eq(dec,
	    strstr(dry, "buffers {") ? strstr(dry, "buffers {") : dry);
	snprintf(cmd, sizeof(cmd),
	    "protoc --encode=perfetto.protos.TraceConfig"
	    " -I %s/proto %s/proto/perfetto_config.proto < %s.dec",
	    getenv("VITALS_SRCDIR"), getenv("VITALS_SRCDIR"), in);
	snprintf(probe, sizeof(probe), "%s.dec", in);
	ck_assert_int_eq(tu_writes(probe, dec), 0);
	enc = run_out(cmd, &st);
	ck_assert_int_eq(st, 0);
	got = slurp(in);
	f = fopen(in, "r");
	fseek(f, 0, SEEK_END);
	n = (size_t)ftell(f);
	fclose(f);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(memcmp(got, enc, n), 0);
	free(got);
	free(enc);
	free(dec);
	free(dry);

	/* perfetto: the service user, no capability, the spawn filter */
	snprintf(probe, sizeof(probe), "%s/calls/%d.probe", d.fp, (int)child);
	pr = slurp(probe);
	ck_assert_msg(strstr(pr, "ptrace Operation not permitted\n") &&
		strstr(pr, "unshare Operation not permitted\n") &&
		strstr(pr, "execve Operation not permitted\n") &&
		strstr(pr, "socket ok\n") && strstr(pr, "fork ok\n") &&
		strstr(pr, "Seccomp:\t2\n") && strstr(pr, "NoNewPrivs:\t1\n") &&
		strstr(pr, "CapEff:\t0000000000000000\n") &&
		strstr(pr, "CapBnd:\t0000000000000000\n"),
	    "probe: %s", pr);
	snprintf(v, sizeof(v), "Uid:\t%u\t%u\t%u\t%u\n", svc_uid, svc_uid,
	    svc_uid, svc_uid);
	ck_assert_msg(strstr(pr, v) != NULL, "probe: %s", pr);
	free(pr);
	/* still filtered after the session */
	assert_daemon_filtered(d.td.pid);
	reap(a);
	daemon_stop(&d);
}
END_TEST

/* seccomp on, the helper on: cancel and the timeout reach perfetto through
 * the spawner, which is its parent. */
START_TEST(test_spawn_seccomp_cancel_timeout)
{
	const struct jm *s;
	char id_s[24], v[32];
	struct daemon d;
	struct run r;
	struct jm *j;
	long long id;
	int64_t t0;
	pid_t a, child, spawner;

	daemon_start_args(&d,
	    "heapprofd_max_per_hour = 0\n"
	    "heapprofd_max_per_day = 0\nheapprofd_max_per_week = 0\n"
	    "heapprofd_system_max_per_hour = 0\n"
	    "heapprofd_system_max_per_day = 0\n"
	    "heapprofd_system_max_per_week = 0\n",
	    spawn_args);
	spawner = child_named(d.td.pid, "vitalsd-spawn");
	ck_assert_int_gt(spawner, 0);
	a = app(APP_UID, 0);
	tu_sleep_ms(200);

	/* cancel: SIGTERM, perfetto writes its file and exits 0 */
	set_mode(&d, "term\n");
	id = start_pid(&d, a, "--duration=60s");
	child = wait_child(&d, id);
	ck_assert(alive(child));
	ck_assert_int_eq(atoi(status_of(child, "PPid", v, sizeof(v))), spawner);
	assert_confined(child, "perfetto");
	wait_ready(&d, child);
	snprintf(id_s, sizeof(id_s), "%lld", id);
	r = vitals(&d, -1, "heapprofd", "cancel", id_s, NULL, NULL, NULL);
	ck_assert_msg(r.code == 0, "cancel: %d %s", r.code, r.err);
	run_free(&r);
	j = wait_outcome(&d, id, "cancelled", 5000, &s);
	ck_assert_int_eq(num(s, "exit_status"), 0);
	assert_output(s);
	jm_free(j);
	ck_assert(!alive(child));

	/* timeout: SIGTERM ignored, SIGKILL */
	set_mode(&d, "ignore-term\n");
	t0 = mono_ms();
	id = start_pid(&d, a, "--duration=300ms");
	child = wait_child(&d, id);
	j = wait_outcome(&d, id, "timeout", 8000, &s);
	ck_assert_int_ge(mono_ms() - t0, 1000);
	ck_assert_int_eq(num(s, "term_signal"), SIGKILL);
	/* no exit status (killed): null, not -1 */
	ck_assert_int_eq(jm_get(s, "exit_status")->t, JM_NULL);
	jm_free(j);
	ck_assert(!alive(child));

	/* a session running when the daemon stops is stopped with it */
	set_mode(&d, "term\n");
	id = start_pid(&d, a, "--duration=60s");
	child = wait_child(&d, id);
	ck_assert(alive(child));
	wait_ready(&d, child);
	assert_daemon_filtered(d.td.pid);
	td_stop_only(&d.td);
	ck_assert(!alive(child));
	ck_assert(!alive(spawner));
	daemon_exec(&d);
	daemon_wait_up(&d);
	j = wait_outcome(&d, id, "daemon stopped", 5000, &s);
	ck_assert_int_eq(num(s, "exit_status"), 0);
	jm_free(j);
	reap(a);
	daemon_stop(&d);
}
END_TEST

/* seccomp on, no helper: the daemon runs, sessions are refused with the
 * state named in health and in the client's answer. */
/*
 * The build type comes from ro.build.type through the property backend
 * (here the host double under prop_root), not from the config key, once
 * the property says something; an unknown value means user rules.
 */
START_TEST(test_build_type_from_property)
{
	static const struct {
		const char *value, *type, *source;
	} cases[] = {
		{ "userdebug\n", "userdebug", "ro.build.type" },
		{ "weird", "user",
		    "ro.build.type (unknown value: user rules)" },
	};
	char props[PATH_MAX], file[PATH_MAX + 32], extra[PATH_MAX + 64];
	const struct jm *h;
	struct daemon d;
	struct run r;
	struct jm *j;
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir = tu_mkdtemp("hp-props");

		ck_assert_ptr_nonnull(dir);
		snprintf(props, sizeof(props), "%s", dir);
		snprintf(file, sizeof(file), "%s/ro.build.type", props);
		ck_assert_int_eq(tu_writes(file, cases[i].value), 0);
		snprintf(extra, sizeof(extra),
		    "prop_root = %s\nheapprofd_build_type = user\n", props);
		daemon_start_args(&d, extra, NULL);
		r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL);
		j = json_of(&r);
		h = jm_path(j, "health.heapprofd");
		ck_assert_str_eq(str(h, "build_type"), cases[i].type);
		ck_assert_str_eq(str(h, "build_type_source"), cases[i].source);
		jm_free(j);
		run_free(&r);
		daemon_stop(&d);
		tu_rmtree(dir);
		free(dir);
	}
}
END_TEST

START_TEST(test_spawn_blocked_without_helper)
{
	static const char *const args[] = { "--user", svc_uid_s, "--group",
		svc_uid_s, "--seccomp", "on", NULL };
	const struct jm *h;
	char p[16];
	struct daemon d;
	struct run r;
	struct jm *j;
	pid_t a;

	daemon_start_args(&d, NULL, args);
	assert_daemon_filtered(d.td.pid);
	ck_assert_int_eq(child_named(d.td.pid, "vitalsd-spawn"), 0);
	a = app(APP_UID, 0);
	tu_sleep_ms(200);
	snprintf(p, sizeof(p), "%d", (int)a);
	r = vitals(&d, -1, "heapprofd", "start", "--pid", p, NULL, NULL);
	ck_assert_int_eq(r.code, VX_REFUSED);
	ck_assert_msg(strstr(r.err, "unavailable") &&
		strstr(r.err, "blocked by seccomp") &&
		strstr(r.err, "--privhelper on"),
	    "%s", r.err);
	run_free(&r);
	/* a dry run still shows the config */
	r = vitals(&d, -1, "heapprofd", "start", "--pid", p, "--dry-run", NULL);
	ck_assert_int_eq(r.code, 0);
	run_free(&r);
	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL);
	j = json_of(&r);
	h = jm_path(j, "health.heapprofd");
	ck_assert_str_eq(str(h, "spawn"), "blocked by seccomp");
	ck_assert_str_eq(str(h, "last_refusal"), "HEAPPROFD_UNAVAILABLE");
	jm_free(j);
	run_free(&r);
	r = vitals(&d, -1, "health", NULL, NULL, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(r.out, "perfetto: blocked by seccomp ("));
	run_free(&r);
	ck_assert_uint_eq(count_calls(&d, NULL, 0), 0);
	reap(a);
	daemon_stop(&d);
}
END_TEST

/* ------------------------------------- the spawner's protocol, directly */

struct sp_test {
	struct ph_spawner *sp;
	char *dir;
	int in, out, log; /* valid fds for a spawn */
};

static void
sp_open(struct sp_test *t)
{
	struct privs_req who;
	char path[PATH_MAX];
	int pfd[2];

	memset(&who, 0, sizeof(who));
	who.drop = true;
	who.uid = who.gid = svc_uid;
	t->dir = tu_mkdtemp("hp-spawn");
	ck_assert_ptr_nonnull(t->dir);
	ck_assert_int_eq(chmod(t->dir, 0777), 0);
	snprintf(path, sizeof(path), "%s/calls/.keep", t->dir);
	ck_assert_int_eq(tu_writes(path, ""), 0);
	snprintf(path, sizeof(path), "%s/calls", t->dir);
	ck_assert_int_eq(chmod(path, 0777), 0);
	snprintf(path, sizeof(path), "%s/mode", t->dir);
	ck_assert_int_eq(tu_writes(path, "exit 0 0\n"), 0);
	setenv("VITALS_FAKE_PERFETTO_DIR", t->dir, 1);
	ck_assert_int_eq(privhelper_spawn_start(fake_perfetto, &who, &t->sp),
	    0);
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	ck_assert_int_eq(write(pfd[1], "\x08\x01", 2), 2);
	close(pfd[1]);
	t->in = pfd[0];
	snprintf(path, sizeof(path), "%s/trace", t->dir);
	t->out = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	snprintf(path, sizeof(path), "%s/log", t->dir);
	t->log = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert(t->out >= 0 && t->log >= 0);
}

static void
sp_close(struct sp_test *t)
{
	t->sp = privhelper_spawn_stop(t->sp);
	close(t->in);
	close(t->out);
	close(t->log);
	tu_rmtree(t->dir);
	rmdir(t->dir);
	free(t->dir);
}

/* A hostile request: answered EINVAL (or an echo the daemon side refuses
 * as from the future), then the channel closes and the spawner is gone. */
static void
sp_hostile(struct sp_test *t, const void *buf, size_t len, const int *fds,
    unsigned nfds, const char *what)
{
	struct ph_spawn_event ev;
	pid_t pid = privhelper_spawn_pid(t->sp);
	int64_t until;
	int r;

	ck_assert_int_eq(privhelper_spawn_raw(t->sp, buf, len, fds, nfds), 0);
	r = privhelper_spawn_wait(t->sp, 3000, &ev);
	ck_assert_msg(r == -EPROTO ||
		(r == 0 && ev.kind == PH_SPAWN_ANSWER && ev.err == -EINVAL),
	    "%s: read %d, kind %d, err %d", what, r, r == 0 ? (int)ev.kind : -1,
	    r == 0 ? ev.err : 0);
	if (r == 0) {
		r = privhelper_spawn_wait(t->sp, 3000, &ev);
		ck_assert_msg(r == -EPIPE, "%s: channel still open (%d)", what,
		    r);
	}
	ck_assert_int_lt(privhelper_spawn_request(t->sp, t->in, t->out, t->log,
			     1000, &(uint64_t){ 0 }),
	    0);
	until = mono_ms() + 3000;
	while (waitpid(pid, NULL, WNOHANG) == 0 && mono_ms() < until)
		tu_sleep_ms(20);
	ck_assert_msg(kill(pid, 0) < 0, "%s: spawner %d still there", what,
	    (int)pid);
}

START_TEST(test_spawner_rejects_hostile)
{
	struct ph_spawn_event ev;
	struct sp_test t;
	uint8_t buf[256];
	size_t n;
	uint64_t sess;
	int fds[3], dirfd, sv[2], rdonly;
	char path[PATH_MAX];

	/* well-formed: a spawn, its start and its end, then a signal for
	 * the ended session (ESRCH, not hostile), then another spawn */
	sp_open(&t);
	ck_assert_int_eq(privhelper_spawn_request(t.sp, t.in, t.out, t.log,
			     5000, &sess),
	    0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_STARTED);
	ck_assert_int_eq(ev.err, 0);
	ck_assert_uint_eq(ev.seq, sess);
	ck_assert_int_gt(ev.pid, 0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_EXITED);
	ck_assert(WIFEXITED(ev.status) && WEXITSTATUS(ev.status) == 0);
	ck_assert_int_eq(privhelper_spawn_signal(t.sp, sess, SIGTERM), 0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_ANSWER);
	ck_assert_int_eq(ev.err, -ESRCH);
	ck_assert_int_eq(privhelper_spawn_request(t.sp, t.in, t.out, t.log,
			     5000, &sess),
	    0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.err, 0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_EXITED);
	sp_close(&t);

	/* the backstop: a child that outlives the request's timeout is
	 * killed by the spawner itself */
	sp_open(&t);
	snprintf(path, sizeof(path), "%s/mode", t.dir);
	ck_assert_int_eq(tu_writes(path, "ignore-term\n"), 0);
	ck_assert_int_eq(privhelper_spawn_request(t.sp, t.in, t.out, t.log, 300,
			     &sess),
	    0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_STARTED);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_EXITED);
	ck_assert(WIFSIGNALED(ev.status) && WTERMSIG(ev.status) == SIGKILL);
	ck_assert_uint_eq(ev.flags, PH_SPAWN_BACKSTOP);
	sp_close(&t);

	fds[0] = -1;
	/* short */
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	sp_hostile(&t, buf, 10, NULL, 0, "short");
	sp_close(&t);
	/* a path after the request: longer than the fixed size */
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	memcpy(buf + n, "/bin/sh", 8);
	fds[0] = t.in, fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n + 8, fds, 3, "path appended");
	sp_close(&t);
	/* a path in the reserved bytes */
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	memcpy(buf + n - 32, "/bin/sh", 8);
	fds[0] = t.in, fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "path in reserve");
	sp_close(&t);
	/* a number out of step: skipped ahead */
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 5, 0, 0, 1000);
	fds[0] = t.in, fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "seq skipped");
	sp_close(&t);
	/* a number out of step: replayed */
	sp_open(&t);
	ck_assert_int_eq(privhelper_spawn_request(t.sp, t.in, t.out, t.log,
			     5000, &sess),
	    0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.err, 0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_EXITED);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, sess, 0, 0, 1000);
	fds[0] = t.in, fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "seq replayed");
	sp_close(&t);
	/* wrong magic */
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	buf[0] ^= 0xff;
	fds[0] = t.in, fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "magic");
	sp_close(&t);
	/* two fds for a spawn */
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	fds[0] = t.in, fds[1] = t.out;
	sp_hostile(&t, buf, n, fds, 2, "two fds");
	sp_close(&t);
	/* stdout a directory, stdin a socket, stdout read-only */
	sp_open(&t);
	dirfd = open(t.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	fds[0] = t.in, fds[1] = dirfd, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "stdout a directory");
	close(dirfd);
	sp_close(&t);
	sp_open(&t);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
	    0);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	fds[0] = sv[0], fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "stdin a socket");
	close(sv[0]);
	close(sv[1]);
	sp_close(&t);
	sp_open(&t);
	snprintf(path, sizeof(path), "%s/trace", t.dir);
	rdonly = open(path, O_RDONLY | O_CLOEXEC);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 1000);
	fds[0] = t.in, fds[1] = rdonly, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "stdout read-only");
	close(rdonly);
	sp_close(&t);
	/* a timeout of zero, one beyond any session */
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 0);
	fds[0] = t.in, fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "timeout 0");
	sp_close(&t);
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 1, 1, 0, 0, 0xffffffffu);
	fds[0] = t.in, fds[1] = t.out, fds[2] = t.log;
	sp_hostile(&t, buf, n, fds, 3, "timeout huge");
	sp_close(&t);
	/* a signal other than TERM or KILL; one carrying an fd; an op
	 * that does not exist */
	sp_open(&t);
	ck_assert_int_eq(privhelper_spawn_request(t.sp, t.in, t.out, t.log,
			     5000, &sess),
	    0);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_STARTED);
	ck_assert_int_eq(privhelper_spawn_wait(t.sp, 3000, &ev), 0);
	ck_assert_int_eq(ev.kind, PH_SPAWN_EXITED);
	n = privhelper_spawn_req(buf, sizeof(buf), 2, sess + 1, sess, SIGSEGV,
	    0);
	sp_hostile(&t, buf, n, NULL, 0, "SIGSEGV");
	sp_close(&t);
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 2, 1, 0, SIGTERM, 0);
	sp_hostile(&t, buf, n, NULL, 0, "signal for no session");
	sp_close(&t);
	sp_open(&t);
	n = privhelper_spawn_req(buf, sizeof(buf), 3, 1, 0, 0, 0);
	sp_hostile(&t, buf, n, NULL, 0, "op 3");
	sp_close(&t);
}
END_TEST

/* A perfetto path that is not there: the spawner does not start, says why. */
START_TEST(test_spawner_missing_binary)
{
	struct ph_spawner *sp = NULL;
	struct privs_req who;

	memset(&who, 0, sizeof(who));
	who.drop = true;
	who.uid = who.gid = svc_uid;
	ck_assert_int_eq(privhelper_spawn_start("/nonexistent/perfetto", &who,
			     &sp),
	    -ENOENT);
	ck_assert_ptr_null(sp);
	ck_assert_int_eq(privhelper_spawn_start("/etc/passwd", &who, &sp),
	    -EACCES);
}
END_TEST

/*
 * Issue 21: the trace's verdict is the outcome through the real daemon,
 * counted in health, in text and JSON: a target refused by a concurrent
 * session, then a trace cut short; the directory 0700.
 */
START_TEST(test_checked_profiles)
{
	const struct jm *s, *h, *c;
	char p[PATH_MAX + 16];
	struct daemon d;
	struct stat sb;
	struct run r;
	struct jm *j;
	long long id;
	pid_t a, b;
	size_t i;
	long long rejected = -1, corrupt = -1, completed = -1;

	/* two processes of one name: one budget key */
	daemon_start(&d,
	    "heapprofd_max_per_hour = 0\n"
	    "heapprofd_max_per_day = 0\n");
	snprintf(p, sizeof(p), "%s/trace", d.fp);
	a = app(APP_UID, 0);
	b = app(APP_UID, 0);
	tu_sleep_ms(200);

	ck_assert_int_eq(tu_writes(p, "rejected 2\n"), 0);
	id = start_pid(&d, a, "--duration=1s");
	j = wait_outcome(&d, id, "rejected", 8000, &s);
	ck_assert_int_eq(num(s, "exit_status"), 0);
	ck_assert_msg(strstr(str(s, "message"), "rejected"), "%s",
	    str(s, "message"));
	assert_output(s);
	jm_free(j);

	ck_assert_int_eq(tu_writes(p, "truncated\n"), 0);
	id = start_pid(&d, b, "--duration=1s");
	j = wait_outcome(&d, id, "trace_corrupt", 8000, &s);
	ck_assert_msg(strstr(str(s, "message"), "trace_corrupt at byte"), "%s",
	    str(s, "message"));
	jm_free(j);

	r = vitals(&d, -1, "--json", "health", NULL, NULL, NULL, NULL);
	j = json_of(&r);
	h = jm_path(j, "health.heapprofd");
	c = jm_get(h, "profiles");
	ck_assert_ptr_nonnull(c);
	for (i = 0; i < c->n; i++) {
		const struct jm *e = &c->v[i];

		if (!strcmp(str(e, "name"), "rejected"))
			rejected = num(e, "value");
		else if (!strcmp(str(e, "name"), "trace_corrupt"))
			corrupt = num(e, "value");
		else if (!strcmp(str(e, "name"), "completed"))
			completed = num(e, "value");
	}
	ck_assert_int_eq(rejected, 1);
	ck_assert_int_eq(corrupt, 1);
	ck_assert_int_eq(completed, 0);
	ck_assert_int_eq(num(h, "completed"), 0);
	ck_assert_int_gt(num(h, "check_ns_max"), 0);
	/* a pass after each session: both sessions' traces and logs */
	ck_assert_int_eq(num(h, "trace_files"), 4);
	ck_assert_int_gt(num(h, "trace_bytes"), 0);
	ck_assert_int_eq(num(h, "expire_errors"), 0);
	jm_free(j);
	run_free(&r);
	/* the list says why, in text */
	r = vitals(&d, -1, "heapprofd", "list", NULL, NULL, NULL, NULL);
	ck_assert_msg(strstr(r.out, "trace_corrupt at byte") &&
		strstr(r.out, "rejected: "),
	    "%s", r.out);
	run_free(&r);
	r = vitals(&d, -1, "health", NULL, NULL, NULL, NULL, NULL);
	ck_assert_msg(strstr(r.out, "profiles (trace checked): completed 0") &&
		strstr(r.out, "rejected 1") && strstr(r.out, "trace_corrupt 1"),
	    "%s", r.out);
	run_free(&r);
	snprintf(p, sizeof(p), "%s/heapprofd", d.td.dir);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0700);
	reap(a);
	reap(b);
	daemon_stop(&d);
}
END_TEST

static Suite *
heapprofd_daemon_suite(void)
{
	Suite *s = suite_create("heapprofd_daemon");
	TCase *tc = tcase_create("daemon");

	tcase_add_test(tc, test_rule_fires_once_then_rate_limited);
	tcase_add_test(tc, test_refusals_and_roles);
	tcase_add_test(tc, test_cancel_kills_child);
	tcase_add_test(tc, test_hang_killed_at_timeout);
	tcase_add_test(tc, test_restart_mid_session);
	tcase_add_test(tc, test_held_store_loop_free);
	tcase_add_test(tc, test_spawn_seccomp_completes);
	tcase_add_test(tc, test_spawn_seccomp_cancel_timeout);
	tcase_add_test(tc, test_spawn_blocked_without_helper);
	tcase_add_test(tc, test_build_type_from_property);
	tcase_add_test(tc, test_spawner_rejects_hostile);
	tcase_add_test(tc, test_spawner_missing_binary);
	tcase_add_test(tc, test_checked_profiles);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("the daemon, the uid switches, the app uid"))
		return 77;
	svc_uid = 62000 + (uint32_t)(getpid() % 1000);
	snprintf(svc_uid_s, sizeof(svc_uid_s), "%u", svc_uid);
	fake_perfetto = getenv("VITALS_FAKE_PERFETTO");
	if (fake_perfetto == NULL)
		fake_perfetto = "../tests/fake_perfetto";
	return tu_run(heapprofd_daemon_suite());
}
