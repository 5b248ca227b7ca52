/* SPDX-License-Identifier: Apache-2.0 */
/* The suites' vitalsd harness (harness.h). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"

#define TD_MAXARGS 50

const char *
td_vitalsd(void)
{
	static char path[PATH_MAX];
	const char *b = getenv("VITALS_BUILDDIR");

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "%s/daemon/vitalsd", b ? b : ".");
	return path;
}

void
td_pass_socket(enum td_inherit how, int fd)
{
	char v[32];

	if (how == TD_INHERIT_ANDROID) {
		snprintf(v, sizeof(v), "%d", fd);
		setenv("ANDROID_SOCKET_vitalsd", v, 1);
	} else if (how == TD_INHERIT_SYSTEMD) {
		if (fd != 3) {
			dup2(fd, 3);
			close(fd);
		}
		snprintf(v, sizeof(v), "%d", (int)getpid());
		setenv("LISTEN_PID", v, 1);
		setenv("LISTEN_FDS", "1", 1);
	}
}

/*
 * argv with "--store-spool-dir off" first: a daemon started here without
 * a spool directory of its own (td_prepare's, or the test's, both later
 * on the line and so winning) commits each window into vitals.db and
 * leaves nothing in the shared default (/run/vitalsd, /dev/shm/vitalsd).
 */
static const char *const *
spool_off(const char *const *argv, const char **av)
{
	size_t i;

	av[0] = argv[0];
	av[1] = "--store-spool-dir";
	av[2] = "off";
	for (i = 1; argv[i]; i++)
		av[i + 2] = argv[i];
	av[i + 2] = NULL;
	return av;
}

pid_t
td_exec(const char *log, enum td_log how, const char *const *argv,
    td_child_fn child, void *arg)
{
	size_t n = 0;
	int p[2];
	pid_t pid;
	char c;

	while (argv[n])
		n++;
	const char *av[n + 3];

	/* returns once the child has exec'd (as posix_spawn does): its log
	 * exists then, and a test may read it at once */
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = log ?
		    open(log,
			O_WRONLY | O_CREAT |
			    (how == TD_LOG_TRUNC ? O_TRUNC : O_APPEND),
			0644) :
		    open("/dev/null", O_WRONLY);

		close(p[0]);
		if (fd >= 0 && fd != 2) {
			dup2(fd, 2);
			close(fd);
		}
		if (child)
			child(arg);
		execv(td_vitalsd(), (char *const *)spool_off(argv, av));
		_exit(127);
	}
	close(p[1]);
	while (read(p[0], &c, 1) < 0 && errno == EINTR)
		;
	close(p[0]);
	return pid;
}

int
td_exec_wait(const char *const *argv)
{
	pid_t pid = td_exec(NULL, TD_LOG_APPEND, argv, NULL, NULL);
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

int
td_kill(pid_t pid, int sig)
{
	int status;

	ck_assert_int_eq(kill(pid, sig), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

/* td_prepare's count in this process: each td's pin directory apart */
static unsigned td_seq;

void
td_prepare(struct td *d, const char *tag, const char *conf)
{
	memset(d, 0, sizeof(*d));
	/* mkdtemp's 0700: never group- or world-writable, which vitalsd
	 * refuses in a state directory */
	d->dir = tu_mkdtemp(tag);
	ck_assert_ptr_nonnull(d->dir);
	snprintf(d->sock, sizeof(d->sock), "%s/vitalsd.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s.log", d->dir);
	snprintf(d->conf, sizeof(d->conf), "%s/vitalsd.conf", d->dir);
	ck_assert_int_eq(tu_writes(d->conf, conf ? conf : ""), 0);
	/* a spool of its own on a RAM file system: parallel daemons never
	 * share the default /run/vitalsd, and nothing is left behind */
	snprintf(d->spool, sizeof(d->spool), "/dev/shm/vitals-spool-XXXXXX");
	if (mkdtemp(d->spool) == NULL)
		d->spool[0] = '\0';
	/* the daemon makes it (0750) as it makes its default; a restart of
	 * the same td finds its pins and reuses them */
	snprintf(d->bpffs, sizeof(d->bpffs), "/sys/fs/bpf/vitals-td-%d-%u",
	    (int)getpid(), td_seq++);
}

void
td_spawn(struct td *d, const char *const *args, td_child_fn child, void *arg)
{
	const char *argv[TD_MAXARGS] = { "vitalsd", "-f", "-c", d->conf,
		"--state-dir", d->dir, "--socket", d->sock };
	int n = 8, i;

	if (d->bpffs[0]) {
		argv[n++] = "--bpffs";
		argv[n++] = d->bpffs;
	}
	if (d->spool[0]) {
		argv[n++] = "--store-spool-dir";
		argv[n++] = d->spool;
		/* tests wait for moves a minute apart, not the default 15
		 * (a test's own --store-commit-s comes later and wins) */
		argv[n++] = "--store-commit-s";
		argv[n++] = "60";
	}
	for (i = 0; args && args[i]; i++) {
		ck_assert_int_lt(n, TD_MAXARGS - 1);
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	d->pid = td_exec(d->log, TD_LOG_APPEND, argv, child, arg);
}

void
td_start(struct td *d, const char *tag, const char *conf,
    const char *const *args)
{
	td_prepare(d, tag, conf);
	td_spawn(d, args, NULL, NULL);
}

struct run
td_vitals(const struct td *d, int uid, const char *const *args)
{
	const char *argv[20] = { "vitals", "--socket", d->sock };
	int n = 3, i;

	for (i = 0; args && args[i]; i++) {
		ck_assert_int_lt(n, 19);
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	return run_client_as(uid, argv);
}

/* health.last an object, and when stored, health.store.windows_written
 * at least 1 */
static bool
has_window(const struct run *r, bool stored)
{
	struct jm *j = jm_parse(r->out, strlen(r->out));
	const struct jm *last = jm_path(j, "health.last");
	const struct jm *w = jm_path(j, "health.store.windows_written");
	bool up = last && last->t == JM_OBJ &&
	    (!stored || (w && jm_is_int(w) && w->ll >= 1));

	jm_free(j);
	return up;
}

bool
td_has_window(const struct run *r)
{
	return has_window(r, false);
}

bool
td_has_stored_window(const struct run *r)
{
	return has_window(r, true);
}

void
td_wait(const struct td *d, unsigned ms, const char *const *args,
    bool (*ready)(const struct run *r))
{
	const char *probe[20] = { "--timeout", "10000" };
	unsigned waited;
	int n = 2, i;

	for (i = 0; args && args[i]; i++) {
		ck_assert_int_lt(n, 15);
		probe[n++] = args[i];
	}
	if (n == 2)
		probe[n++] = "health";
	probe[n] = NULL;
	for (waited = 0; waited < ms; waited += 100) {
		struct run r;
		bool up;

		tu_sleep_ms(100);
		r = td_vitals(d, -1, probe);
		up = r.code == 0 && (ready == NULL || ready(&r));
		run_free(&r);
		if (up)
			return;
	}
	ck_abort_msg("vitalsd did not answer within %u ms (log %s)", ms,
	    d->log);
}

bool
td_file_has(const char *path, const char *needle)
{
	int fd = open(path, O_RDONLY);
	char *text;
	bool found;

	if (fd < 0)
		return false;
	text = slurp_fd(fd);
	found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

bool
td_log_until(pid_t pid, const char *log, const char *needle, unsigned n,
    unsigned step)
{
	unsigned i;
	int status;

	for (i = 0; i < n; i++) {
		if (td_file_has(log, needle))
			return true;
		if (pid > 0)
			ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0,
			    "vitalsd ended early (log %s)", log);
		tu_sleep_ms(step);
	}
	return td_file_has(log, needle);
}

void
td_term(pid_t pid, const char *log)
{
	int status = td_kill(pid, SIGTERM);

	/* the daemon outlived every query: none of them crashed it */
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "vitalsd ended with status 0x%x (log %s)", status,
	    log ? log : "none");
}

void
td_stop_only(struct td *d)
{
	ck_assert_int_gt(d->pid, 0);
	td_term(d->pid, d->log);
	d->pid = 0;
}

void
td_stop(struct td *d)
{
	td_stop_only(d);
	td_cleanup(d);
}

void
td_cleanup(struct td *d)
{
	if (d->dir == NULL)
		return;
	tu_rmtree(d->dir);
	if (d->spool[0])
		tu_rmtree(d->spool);
	d->spool[0] = '\0';
	/* its pins (and the links in them): the programs detach once the
	 * daemon is gone too */
	if (d->bpffs[0])
		tu_rmtree(d->bpffs);
	d->bpffs[0] = '\0';
	unlink(d->log);
	free(d->dir);
	d->dir = NULL;
}
