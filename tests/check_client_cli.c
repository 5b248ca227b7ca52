/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The built vitals binary against fake servers: every exit code, the
 * message that goes with it, the request each command sends, text and JSON
 * of an answer, and watch. The servers are forked children on a real UNIX
 * socket that answer one connection as told (a Response, raw bytes, a
 * close, silence).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "client_fixture.h"
#include "client_run.h"
#include "frame.h"
#include "jsonmini.h"
#include "testutil.h"

static double
num(const struct jm *o, const char *path)
{
	const struct jm *v = jm_path(o, path);

	ck_assert_msg(v != NULL, "no %s", path);
	ck_assert_msg(jm_is_num(v), "%s is not a number", path);
	return v->num;
}

enum fake_mode {
	FAKE_REPLY,  /* a Response built from the fields below */
	FAKE_RAW,    /* these bytes, as they are */
	FAKE_CLOSE,  /* read the request, close */
	FAKE_SILENT, /* read the request, never answer */
};

struct fake {
	enum fake_mode mode;
	Vitals__Status status;
	const char *error;
	Vitals__Response__ResultCase result;
	bool wrong_id, zero_id;
	const uint8_t *raw;
	size_t rawlen;
	/* the request must satisfy this, or the server exits 3 */
	bool (*check)(const Vitals__Request *req);
	unsigned serve; /* connections answered, one each; 0: one */
};

static Vitals__TaskList empty_tl = VITALS__TASK_LIST__INIT;
static Vitals__ProcessInfo empty_pi = VITALS__PROCESS_INFO__INIT;
static Vitals__Health empty_health = VITALS__HEALTH__INIT;
static Vitals__BurstAck ack = VITALS__BURST_ACK__INIT;
static Vitals__Dump dump = VITALS__DUMP__INIT;
static Vitals__HeapprofdStarted hp_refused = VITALS__HEAPPROFD_STARTED__INIT;
static Vitals__SyscallsAnswer sc_unsup = VITALS__SYSCALLS_ANSWER__INIT;

static void
fake_fill(Vitals__Response *r, Vitals__Response__ResultCase rc)
{
	r->result_case = rc;
	switch (rc) {
	case VITALS__RESPONSE__RESULT_SNAPSHOT:
		r->snapshot = &snap;
		break;
	case VITALS__RESPONSE__RESULT_TOP:
		r->top = &empty_tl;
		break;
	case VITALS__RESPONSE__RESULT_PROCESS:
		r->process = &empty_pi;
		break;
	case VITALS__RESPONSE__RESULT_HEALTH:
		r->health = &empty_health;
		break;
	case VITALS__RESPONSE__RESULT_BURST:
		ack.duration_ms = 5000;
		ack.interval_ms = 100;
		r->burst = &ack;
		break;
	case VITALS__RESPONSE__RESULT_DUMP:
		dump.text = "Window 1: daemon dump\n";
		r->dump = &dump;
		break;
	case VITALS__RESPONSE__RESULT_HEAPPROFD_START:
		hp_refused.refusal =
		    VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_RATE_LIMITED_PROCESS;
		hp_refused.message = "one session per target in the last hour";
		r->heapprofd_start = &hp_refused;
		break;
	case VITALS__RESPONSE__RESULT_SYSCALLS:
		sc_unsup.state = "unsupported";
		sc_unsup.err = 95; /* EOPNOTSUPP */
		r->syscalls = &sc_unsup;
		break;
	default:
		r->result_case = VITALS__RESPONSE__RESULT__NOT_SET;
		break;
	}
}

static void fake_child(int lfd, const struct fake *f) __attribute__((noreturn));

static void
fake_child(int lfd, const struct fake *f)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__Request *req;
	uint8_t *buf, *out;
	size_t len, outlen;
	int c, rc = 0;
	unsigned n;
	char x;

	for (n = 0; n < (f->serve ? f->serve : 1); n++) {
		if (poll(&p, 1, 10000) != 1 ||
		    (c = accept(lfd, NULL, NULL)) < 0)
			_exit(2);
		if (frame_recv(c, VITALS_FRAME_MAX_DEFAULT, 5000, &buf, &len) <
			0 ||
		    (req = frame_unpack_request(buf, len)) == NULL)
			_exit(4);
		if (req->version != 1 || (f->check && !f->check(req)))
			rc = 3;
		switch (f->mode) {
		case FAKE_RAW:
			if (write(c, f->raw, f->rawlen) != (ssize_t)f->rawlen)
				rc = 5;
			break;
		case FAKE_CLOSE:
			break;
		case FAKE_SILENT:
			/* until the client gives up and closes */
			while (read(c, &x, 1) > 0)
				;
			break;
		case FAKE_REPLY:
			resp.version = 1;
			resp.id = f->wrong_id ? req->id + 1 :
			    f->zero_id	      ? 0 :
						req->id;
			resp.status = f->status;
			resp.error = (char *)(f->error ? f->error : "");
			fake_fill(&resp, f->result);
			if (frame_pack_response(&resp, &out, &outlen) < 0 ||
			    write(c, out, outlen) != (ssize_t)outlen)
				rc = 5;
			break;
		}
		close(c);
	}
	_exit(rc);
}

struct server {
	char *dir;
	char path[PATH_MAX];
	pid_t pid;
};

static void
server_start(struct server *s, const struct fake *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd;

	s->dir = tu_mkdtemp("client");
	ck_assert_ptr_nonnull(s->dir);
	chmod(s->dir, 0755);
	snprintf(s->path, sizeof(s->path), "%s/s", s->dir);
	ck_assert_uint_lt(strlen(s->path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0)
		fake_child(lfd, f);
	close(lfd);
}

/* The fake server's verdict on the request: 0 when it was as expected. */
static int
server_stop(struct server *s)
{
	int status, i;

	for (i = 0; i < 500; i++) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid)
			break;
		usleep(10000);
	}
	if (i == 500) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &status, 0);
	}
	tu_rmtree(s->dir);
	free(s->dir);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run the client against a fake server; returns the run. */
static struct run
against(const struct fake *f, const char *const *args)
{
	const char *argv[16];
	struct server s;
	struct run r;
	int i = 0, k;

	build_window();
	server_start(&s, f);
	argv[i++] = "vitals";
	argv[i++] = "--socket";
	argv[i++] = s.path;
	for (k = 0; args[k] && i < 15; k++)
		argv[i++] = args[k];
	argv[i] = NULL;
	r = run_client(argv);
	k = server_stop(&s);
	ck_assert_msg(k == 0,
	    "fake server: request not as expected (%d); "
	    "client %s exited %d: %s%s",
	    k, args[0] ? args[0] : "", r.code, r.err, r.out);
	return r;
}

START_TEST(test_exit_not_running)
{
	const char *argv[] = { "vitals", "--socket", "/nonexistent/vitals.sock",
		"health", NULL };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *dir = tu_mkdtemp("client");
	struct run r;
	int fd;

	r = run_client(argv);
	ck_assert_int_eq(r.code, VX_NOT_RUNNING);
	ck_assert_ptr_nonnull(strstr(r.err, "not running"));
	ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/vitals.sock"));
	ck_assert_str_eq(r.out, "");
	run_free(&r);

	/* a socket file left behind, nobody listening: ECONNREFUSED */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dead.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	argv[2] = sa.sun_path;
	r = run_client(argv);
	ck_assert_int_eq(r.code, VX_NOT_RUNNING);
	ck_assert_ptr_nonnull(strstr(r.err, "nothing listens on"));
	ck_assert_ptr_nonnull(strstr(r.err, sa.sun_path));
	run_free(&r);

	/* the default path from the environment */
	setenv("VITALS_SOCKET", sa.sun_path, 1);
	ck_assert_str_eq(conn_default_socket(), sa.sun_path);
	unsetenv("VITALS_SOCKET");
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_exit_eacces)
{
	struct fake f = { .mode = FAKE_CLOSE };
	const char *argv[] = { "vitals", "--socket", NULL, "health", NULL };
	struct server s;
	struct run r;

	/* A listening socket the caller may not write: EACCES on connect.
	 * Root ignores file modes, so run the client as nobody then. */
	server_start(&s, &f);
	ck_assert_int_eq(chmod(s.path, 0), 0);
	argv[2] = s.path;
	r = run_client_as(geteuid() == 0 ? 65534 : -1, argv);
	ck_assert_int_eq(r.code, VX_DENIED);
	ck_assert_ptr_nonnull(strstr(r.err, "permission denied connecting to"));
	ck_assert_ptr_nonnull(strstr(r.err, s.path));
	run_free(&r);
	kill(s.pid, SIGKILL);
	server_stop(&s);
}
END_TEST

static bool
is_burst_5s(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_BURST &&
	    q->burst->duration_ms == 5000;
}

START_TEST(test_exit_permission_denied)
{
	struct fake f = { .mode = FAKE_REPLY,
		.status = VITALS__STATUS__STATUS_PERMISSION_DENIED,
		.error = "burst needs the trusted role (uid 2000 is a reader)",
		.check = is_burst_5s };
	const char *args[] = { "burst", "5", NULL };
	const char *jargs[] = { "--json", "burst", "5s", NULL };
	struct run r;
	struct jm *j;

	r = against(&f, args);
	ck_assert_int_eq(r.code, VX_DENIED);
	ck_assert_ptr_nonnull(strstr(r.err,
	    "permission denied by vitalsd: "
	    "burst needs the trusted role (uid 2000 is a reader)"));
	ck_assert_str_eq(r.out, "");
	run_free(&r);

	/* --json: the daemon's answer on stdout too, the message on stderr */
	r = against(&f, jargs);
	ck_assert_int_eq(r.code, VX_DENIED);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	ck_assert_str_eq(jm_get(j, "status")->str, "STATUS_PERMISSION_DENIED");
	ck_assert_ptr_nonnull(strstr(r.err,
	    "permission denied by vitalsd: "
	    "burst needs the trusted role (uid 2000 is a reader)"));
	jm_free(j);
	run_free(&r);

	/* a refusal before the request was read may carry id 0 */
	f.zero_id = true;
	r = against(&f, args);
	ck_assert_int_eq(r.code, VX_DENIED);
	run_free(&r);
}
END_TEST

START_TEST(test_exit_unavailable)
{
	struct fake f = { .mode = FAKE_REPLY,
		.status = VITALS__STATUS__STATUS_UNAVAILABLE,
		.error = "no window closed yet" };
	const char *args[] = { NULL };
	struct run r;

	r = against(&f, args);
	ck_assert_int_eq(r.code, VX_UNAVAILABLE);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "no window closed yet — try again"));
	run_free(&r);
}
END_TEST

START_TEST(test_exit_protocol)
{
	static const uint8_t garbage[] = { 0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[] = { 0, 0, 0, 0 };
	static const uint8_t huge[] = { 0x7f, 0xff, 0xff, 0xff, 1, 2, 3 };
	static const uint8_t truncated[] = { 0, 0, 0, 100, 8, 1 };
	static const uint8_t text[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
	const struct {
		struct fake f;
		const char *want;
	} cases[] = {
		{ { .mode = FAKE_RAW,
		      .raw = garbage,
		      .rawlen = sizeof(garbage) },
		    "malformed answer" },
		{ { .mode = FAKE_RAW, .raw = zero, .rawlen = sizeof(zero) },
		    "length 0" },
		{ { .mode = FAKE_RAW, .raw = huge, .rawlen = sizeof(huge) },
		    "length above" },
		{ { .mode = FAKE_RAW,
		      .raw = truncated,
		      .rawlen = sizeof(truncated) },
		    "closed the connection" },
		{ { .mode = FAKE_RAW, .raw = text, .rawlen = sizeof(text) - 1 },
		    "length above" },
		{ { .mode = FAKE_CLOSE }, "closed the connection" },
		{ { .mode = FAKE_SILENT }, "did not answer within 300 ms" },
		{ { .mode = FAKE_REPLY,
		      .status = VITALS__STATUS__STATUS_ERROR,
		      .error = "store read failed" },
		    "vitalsd answered STATUS_ERROR: store read failed" },
		{ { .mode = FAKE_REPLY, .status = VITALS__STATUS__STATUS_BUSY },
		    "vitalsd answered STATUS_BUSY" },
		{ { .mode = FAKE_REPLY, .status = (Vitals__Status)42 },
		    "vitalsd answered STATUS_UNKNOWN" },
		{ { .mode = FAKE_REPLY,
		      .result = VITALS__RESPONSE__RESULT_SNAPSHOT,
		      .wrong_id = true },
		    "expected" },
		{ { .mode = FAKE_REPLY,
		      .result = VITALS__RESPONSE__RESULT_DUMP },
		    "answered with result 16 to operation 14" },
		{ { .mode = FAKE_REPLY }, "answered with result 0" },
	};
	const char *args[] = { "--timeout", "300", "health", NULL };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r = against(&cases[i].f, args);

		ck_assert_msg(r.code == VX_PROTOCOL, "case %zu: exit %d (%s)",
		    i, r.code, r.err);
		ck_assert_msg(strstr(r.err, cases[i].want) != NULL,
		    "case %zu: '%s' lacks '%s'", i, r.err, cases[i].want);
		run_free(&r);
	}
}
END_TEST

START_TEST(test_exit_usage)
{
	static const char *const bad[][6] = {
		{ "vitals", "frobnicate", NULL },
		{ "vitals", "top", "--sort", "size", NULL },
		{ "vitals", "top", "--since", "5 minutes", NULL },
		{ "vitals", "top", "--since", "0s", NULL },
		{ "vitals", "top", "-n", "0", NULL },
		{ "vitals", "proc", NULL },
		{ "vitals", "proc", "12x", NULL },
		{ "vitals", "proc", "1", "2", NULL },
		{ "vitals", "cpu", "--threads", NULL },
		{ "vitals", "health", "extra", NULL },
		{ "vitals", "burst", "forever", NULL },
		{ "vitals", "watch", "--interval", "10ms", NULL },
		{ "vitals", "--timeout", "0", NULL },
		{ "vitals", "--bogus", NULL },
	};
	const char *help[] = { "vitals", "--help", NULL };
	size_t i;
	struct run r;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run_client((const char *const *)bad[i]);
		ck_assert_msg(r.code == VX_USAGE, "%s %s: exit %d", bad[i][1],
		    bad[i][2] ? bad[i][2] : "", r.code);
		ck_assert(strlen(r.err) > 0);
		run_free(&r);
	}
	r = run_client(help);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: vitals"));
	run_free(&r);
}
END_TEST

/* The requests each command sends. */
static bool
chk_summary(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_SNAPSHOT &&
	    q->snapshot->top_n == 4 && q->id != 0;
}

static bool
chk_top(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_TOP &&
	    q->top->metric == VITALS__METRIC__METRIC_MAJFLT &&
	    q->top->threads && q->top->n == 7 && q->top->range &&
	    q->top->range->since_ns == 300 * NS;
}

static bool
chk_top_default(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_TOP &&
	    q->top->metric == VITALS__METRIC__METRIC_CPU && !q->top->threads &&
	    q->top->n == 0 && q->top->range &&
	    q->top->range->since_ns == 60 * NS;
}

static bool
chk_proc(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_PROCESS &&
	    q->process->pid == 4321 && q->process->threads &&
	    q->process->starttime == 99 && q->process->range &&
	    q->process->range->since_ns == 300 * NS;
}

static bool
chk_proc_since(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_PROCESS &&
	    q->process->pid == 1 && !q->process->threads &&
	    q->process->range->since_ns == 7200 * NS;
}

static bool
chk_health(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_HEALTH;
}

static bool
chk_dump(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_DUMP && q->dump->top_n == 3;
}

static bool
chk_burst_default(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_BURST &&
	    q->burst->duration_ms == 0;
}

START_TEST(test_requests)
{
	const struct {
		bool (*check)(const Vitals__Request *);
		Vitals__Response__ResultCase rc;
		const char *args[10];
		const char *want;
	} cases[] = {
		{ chk_summary, VITALS__RESPONSE__RESULT_SNAPSHOT,
		    { "summary", "-n", "4" },
		    "  100% 1234/burner: 95% user + 5% kernel" },
		{ chk_top, VITALS__RESPONSE__RESULT_TOP,
		    { "top", "--sort", "majflt", "--since", "5m", "--threads",
			"-n", "7" },
		    "(no activity in the range)" },
		{ chk_top_default, VITALS__RESPONSE__RESULT_TOP, { "top" },
		    "Top 0 processes by cpu" },
		{ chk_proc, VITALS__RESPONSE__RESULT_PROCESS,
		    { "proc", "4321", "--threads", "--starttime", "99" },
		    "Process 4321: 0 windows" },
		{ chk_proc_since, VITALS__RESPONSE__RESULT_PROCESS,
		    { "proc", "--since", "2h", "1" }, "Process 1:" },
		{ chk_health, VITALS__RESPONSE__RESULT_HEALTH, { "health" },
		    "Last window: none closed yet" },
		{ chk_dump, VITALS__RESPONSE__RESULT_DUMP,
		    { "dump", "-n", "3" }, "Window 1: daemon dump\n" },
		{ chk_burst_default, VITALS__RESPONSE__RESULT_BURST,
		    { "burst" }, "burst: sampling every 100 ms for 5.0 s\n" },
		{ chk_summary, VITALS__RESPONSE__RESULT_SNAPSHOT,
		    { "-n", "4", "cpu" }, NULL }, /* -n is not for cpu */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f = { .mode = FAKE_REPLY,
			.result = cases[i].rc,
			.check = cases[i].check };
		struct run r;

		if (cases[i].want == NULL) {
			r = run_client(
			    (const char *const[]){ "vitals", "--socket",
				"/nonexistent", "-n", "4", "cpu", NULL });
			ck_assert_int_eq(r.code, VX_USAGE);
			run_free(&r);
			continue;
		}
		r = against(&f, cases[i].args);
		ck_assert_msg(r.code == 0, "case %zu: exit %d: %s", i, r.code,
		    r.err);
		ck_assert_msg(strstr(r.out, cases[i].want) != NULL,
		    "case %zu: output lacks '%s':\n%s", i, cases[i].want,
		    r.out);
		run_free(&r);
	}
}
END_TEST

START_TEST(test_client_json_and_text)
{
	struct fake f = { .mode = FAKE_REPLY,
		.result = VITALS__RESPONSE__RESULT_SNAPSHOT };
	const char *jargs[] = { "--json", NULL };
	const char *targs[] = { NULL };
	const char *dargs[] = { "--dumpsys", NULL };
	const char *cargs[] = { "cpu", "--json", NULL };
	struct run r;
	struct jm *j;
	const char *body;

	/* the text summary, past its "ago" header, is summary_text */
	r = against(&f, targs);
	ck_assert_int_eq(r.code, 0);
	body = strstr(r.out, "22:13:30.000):\n");
	ck_assert_ptr_nonnull(body);
	ck_assert_str_eq(body, strstr(summary_text, "22:13:30.000):\n"));
	run_free(&r);

	/* --dumpsys: the same, ending at TOTAL */
	r = against(&f, dargs);
	ck_assert_int_eq(r.code, 0);
	body = strstr(r.out, "22:13:30.000):\n");
	ck_assert_ptr_nonnull(body);
	ck_assert_int_eq(strncmp(body, strstr(summary_text, "22:13:30.000):\n"),
			     strlen(body)),
	    0);
	ck_assert_ptr_nonnull(strstr(body, "% softirq\n"));
	ck_assert_str_eq(strstr(body, "% softirq\n"), "% softirq\n");
	run_free(&r);

	r = against(&f, jargs);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	ck_assert(num(&jm_path(j, "snapshot.window.procs")->v[1],
		      "core_equiv") == 1.0);
	jm_free(j);
	run_free(&r);

	/* options after the command */
	r = against(&f, cargs);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	jm_free(j);
	run_free(&r);
}
END_TEST

/* A refusal inside an OK answer (heapprofd start): its message on stderr
 * with --json as without, the answer as JSON on stdout, exit 6. */
START_TEST(test_json_refusal_stderr)
{
	struct fake f = { .mode = FAKE_REPLY,
		.result = VITALS__RESPONSE__RESULT_HEAPPROFD_START };
	const char *targs[] = { "heapprofd", "start", "--pid", "42", NULL };
	const char *jargs[] = { "--json", "heapprofd", "start", "--pid", "42",
		NULL };
	const char *want = "heapprofd session refused: ";
	struct run r;
	struct jm *j;

	r = against(&f, targs);
	ck_assert_int_eq(r.code, VX_REFUSED);
	ck_assert_ptr_nonnull(strstr(r.err, want));
	ck_assert_ptr_nonnull(
	    strstr(r.err, "one session per target in the last hour"));
	run_free(&r);

	r = against(&f, jargs);
	ck_assert_int_eq(r.code, VX_REFUSED);
	ck_assert_ptr_nonnull(strstr(r.err, want));
	ck_assert_ptr_nonnull(
	    strstr(r.err, "one session per target in the last hour"));
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	ck_assert_str_eq(jm_path(j, "heapprofd_start.refusal")->str,
	    "HEAPPROFD_RATE_LIMITED_PROCESS");
	jm_free(j);
	run_free(&r);
}
END_TEST

START_TEST(test_watch)
{
	struct fake f = { .mode = FAKE_REPLY,
		.result = VITALS__RESPONSE__RESULT_SNAPSHOT };
	const char *once[] = { "watch", "--count", "1", NULL };
	char o[] = "/tmp/vitals-watch-XXXXXX";
	struct server s;
	struct run r;
	struct stat st;
	int fo, status, i;
	int64_t t0;
	pid_t pid;

	/* piped: a timestamped block, no escape sequence; the top-like
	 * view by utime+stime */
	r = against(&f, once);
	ck_assert_int_eq(r.code, 0);
	ck_assert_int_eq(strncmp(r.out, "--- ", 4), 0);
	ck_assert_ptr_null(strchr(r.out, '\033'));
	ck_assert_ptr_nonnull(strstr(r.out, "CPU busy 24.0%"));
	ck_assert_ptr_nonnull(strstr(r.out, " 1234 "));
	ck_assert_ptr_nonnull(strstr(r.out, "  burner\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "sysd"));
	ck_assert(strstr(r.out, "burner") < strstr(r.out, "sysd"));
	run_free(&r);
	/* --dumpsys: the summary's lines as they are */
	{
		const char *ds[] = { "watch", "--count", "1", "--dumpsys",
			NULL };

		r = against(&f, ds);
		ck_assert_int_eq(r.code, 0);
		ck_assert_ptr_nonnull(strstr(r.out, "  100% 1234/burner"));
		run_free(&r);
	}

	/* SIGINT while it waits for the next frame: a prompt, clean exit */
	build_window();
	server_start(&s, &f);
	fo = mkstemp(o);
	ck_assert_int_ge(fo, 0);
	unlink(o);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fo, 1);
		execl(client_path, "vitals", "--socket", s.path, "watch",
		    "--interval", "1m", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 500 && fstat(fo, &st) == 0 && st.st_size == 0; i++)
		usleep(10000);
	ck_assert_int_gt(st.st_size, 0);
	usleep(50000);
	t0 = clock_now_ns(CLOCK_MONOTONIC);
	kill(pid, SIGINT);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	/* promptly, not after the 1 min interval (a loaded machine may take
	 * a while to schedule the exit) */
	ck_assert(clock_now_ns(CLOCK_MONOTONIC) - t0 < 20 * NS);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fo);
	ck_assert_int_eq(server_stop(&s), 0);
}
END_TEST

static size_t
count_of(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)) != NULL; s += strlen(what))
		n++;
	return n;
}

/* `vitals watch --count 2 | cat`: two blocks, each after a timestamp
 * line, apart by a blank line; `watch top` the command's text. */
START_TEST(test_watch_piped)
{
	struct fake f = { .mode = FAKE_REPLY,
		.result = VITALS__RESPONSE__RESULT_SNAPSHOT,
		.serve = 2 };
	const char *two[] = { "watch", "--count", "2", "--interval", "100ms",
		NULL };
	const char *top[] = { "watch", "cpu", "--count", "1", NULL };
	const char *bad[] = { "watch", "burst", "--count", "1", NULL };
	struct run r;

	r = against(&f, two);
	ck_assert_int_eq(r.code, 0);
	ck_assert_int_eq(strncmp(r.out, "--- ", 4), 0);
	ck_assert_uint_eq(count_of(r.out, "--- "), 2);
	ck_assert_uint_eq(count_of(r.out, "\n\n--- "), 1);
	ck_assert_uint_eq(count_of(r.out, "  burner\n"), 2);
	ck_assert_ptr_null(strchr(r.out, '\033'));
	run_free(&r);

	f.serve = 1;
	r = against(&f, top);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "CPU window "));
	run_free(&r);

	/* a command that acts is not watched */
	r = run_client((const char *[]){ "vitals", "--socket", "/nonexistent",
	    bad[0], bad[1], bad[2], bad[3], NULL });
	ck_assert_int_eq(r.code, VX_USAGE);
	run_free(&r);
}
END_TEST

/* Read the pty until it has drawn n frames (or 10 s pass). */
static size_t
pty_frames(int fd, struct sbuf *got, size_t n)
{
	int64_t end = clock_now_ns(CLOCK_MONOTONIC) + 10 * NS;

	while (count_of(sbuf_str(got), "\033[J") < n &&
	    clock_now_ns(CLOCK_MONOTONIC) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[4096];
		ssize_t k;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if ((k = read(fd, buf, sizeof(buf))) <= 0)
			break;
		sbuf_put(got, buf, (size_t)k);
	}
	return count_of(sbuf_str(got), "\033[J");
}

/* On a terminal: redrawn in place (home, clear to the end), sized to the
 * terminal, and 'q' ends it with the cursor shown again. */
START_TEST(test_watch_tty)
{
	struct fake f = { .mode = FAKE_REPLY,
		.result = VITALS__RESPONSE__RESULT_SNAPSHOT,
		.serve = 1000 };
	struct winsize ws = { .ws_row = 12, .ws_col = 60 };
	struct server s;
	struct sbuf got;
	const char *p, *q;
	int fd, status, i;
	pid_t pid;

	build_window();
	server_start(&s, &f);
	pid = forkpty(&fd, NULL, NULL, &ws);
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(client_path, "vitals", "--socket", s.path, "watch",
		    "--interval", "100ms", (char *)NULL);
		_exit(127);
	}
	sbuf_init(&got);
	/* two frames: drawn, then drawn again over it */
	ck_assert_uint_ge(pty_frames(fd, &got, 2), 2);
	p = strstr(sbuf_str(&got), "\033[H");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(strstr(p, "burner"));
	ck_assert_ptr_nonnull(strstr(strstr(p, "\033[J"), "\033[H"));
	/* every drawn line within the terminal's 60 columns, at most its
	 * 12 rows */
	/* each line: an erase, then its text (never an erase after a
	 * full-width line: it would take the last character) */
	for (i = 0, p += 3; (q = strstr(p, "\033[K")) != NULL &&
	     q < strstr(sbuf_str(&got), "\033[J");
	     i++) {
		const char *e;

		q += 3;
		e = q + strcspn(q, "\n\033");
		ck_assert_uint_le(text_ncols(q, (size_t)(e - q)), 60);
		p = e;
	}
	ck_assert_int_gt(i, 3);
	ck_assert_int_le(i, 12);
	ck_assert_int_eq(write(fd, "q", 1), 1);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) != pid; i++) {
		char buf[4096];
		ssize_t k;

		while ((k = read(fd, buf, sizeof(buf))) > 0)
			sbuf_put(&got, buf, (size_t)k);
		usleep(10000);
	}
	ck_assert_int_lt(i, 1000);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the cursor shown again at the end */
	{
		char buf[4096];
		ssize_t k;

		while ((k = read(fd, buf, sizeof(buf))) > 0)
			sbuf_put(&got, buf, (size_t)k);
	}
	ck_assert_ptr_nonnull(strstr(sbuf_str(&got), "\033[?25h"));
	close(fd);
	kill(s.pid, SIGKILL);
	server_stop(&s);
	sbuf_free(&got);
}
END_TEST

static bool
chk_syscalls(const Vitals__Request *q)
{
	return q->op_case == VITALS__REQUEST__OP_SYSCALLS &&
	    q->syscalls->range && q->syscalls->range->since_ns == 300 * NS &&
	    q->syscalls->pid == 0 && q->syscalls->process &&
	    strcmp(q->syscalls->process, "surfaceflinger") == 0;
}

/* vitals syscalls: the request it sends, the state said in words, exit 8
 * where the tracer cannot run, a pid, and a name no comm can have. */
START_TEST(test_syscalls)
{
	struct fake f = { .mode = FAKE_REPLY,
		.result = VITALS__RESPONSE__RESULT_SYSCALLS,
		.check = chk_syscalls };
	const char *args[] = { "syscalls", "--since", "5m", "--process",
		"surfaceflinger", NULL };
	const char *jargs[] = { "syscalls", "--json", "--since", "5m",
		"--process", "surfaceflinger", NULL };
	struct run r;
	struct jm *j;

	r = against(&f, args);
	ck_assert_msg(r.code == VX_ABSENT, "exit %d: %s", r.code, r.err);
	ck_assert_msg(strstr(r.out, "syscalls: unsupported here (") != NULL,
	    "%s", r.out);
	run_free(&r);
	r = against(&f, jargs);
	ck_assert_int_eq(r.code, VX_ABSENT);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_str_eq(jm_path(j, "syscalls.state")->str, "unsupported");
	/* no part: no ABI, no counters */
	ck_assert_int_eq(jm_path(j, "syscalls.arch")->t, JM_NULL);
	ck_assert_int_eq(jm_path(j, "syscalls.counters")->t, JM_NULL);
	jm_free(j);
	run_free(&r);
	r = run_client(
	    (const char *const[]){ "vitals", "--socket", "/nonexistent",
		"syscalls", "--process", "sixteen-bytes-xx", NULL });
	ck_assert_int_eq(r.code, VX_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "bad process name"));
	run_free(&r);
}
END_TEST

static Suite *
client_cli_suite(void)
{
	Suite *s = suite_create("client_cli");
	TCase *tb = tcase_create("binary");

	tcase_add_test(tb, test_exit_not_running);
	tcase_add_test(tb, test_exit_eacces);
	tcase_add_test(tb, test_exit_permission_denied);
	tcase_add_test(tb, test_exit_unavailable);
	tcase_add_test(tb, test_exit_protocol);
	tcase_add_test(tb, test_exit_usage);
	tcase_add_test(tb, test_requests);
	tcase_add_test(tb, test_client_json_and_text);
	tcase_add_test(tb, test_json_refusal_stderr);
	tcase_add_test(tb, test_watch);
	tcase_add_test(tb, test_watch_piped);
	tcase_add_test(tb, test_watch_tty);
	tcase_add_test(tb, test_syscalls);
	tcase_set_timeout(tb, 120);
	suite_add_tcase(s, tb);
	return s;
}

int
main(void)
{
	const char *b = getenv("VITALS_BUILDDIR");

	/* rendered times are local: pin the zone */
	setenv("TZ", "UTC", 1);
	tzset();
	snprintf(client_path, sizeof(client_path), "%s/client/vitals",
	    b ? b : "..");
	return tu_run(client_cli_suite());
}
