/* SPDX-License-Identifier: Apache-2.0 */
/* Run the built vitals binary and capture what it says (client tests). */
#ifndef VITALS_CLIENT_RUN_H
#define VITALS_CLIENT_RUN_H

#include <check.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"

/* $VITALS_BUILDDIR/client/vitals, set by main() */
static char client_path[PATH_MAX];

struct run {
	int code; /* exit status, or 128 + signal */
	char *out, *err;
};

static inline char *
slurp_fd(int fd)
{
	struct sbuf b;
	char buf[4096];
	ssize_t n;

	sbuf_init(&b);
	sbuf_puts(&b, "");
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sbuf_put(&b, buf, (size_t)n);
	close(fd);
	return b.buf;
}

/* Run the client with argv (NULL-terminated), as uid when uid >= 0. */
static inline struct run
run_client_as(int uid, const char *const *argv)
{
	char o[] = "/tmp/vitals-out-XXXXXX", e[] = "/tmp/vitals-err-XXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e), status;
	struct run r;
	pid_t pid;

	ck_assert(fo >= 0 && fe >= 0);
	unlink(o);
	unlink(e);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		unsetenv("VITALS_SOCKET");
		if (uid >= 0 && (setgroups(0, NULL) < 0 ||
		    setgid((gid_t)uid) < 0 || setuid((uid_t)uid) < 0))
			_exit(126);
		execv(client_path, (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r.code = WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
	r.out = slurp_fd(fo);
	r.err = slurp_fd(fe);
	return r;
}

static inline struct run
run_client(const char *const *argv)
{
	return run_client_as(-1, argv);
}

static inline void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

#endif
