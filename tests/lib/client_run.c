/* SPDX-License-Identifier: Apache-2.0 */
/* Run the built vitals binary and capture what it says (client tests). */
#include <check.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_run.h"

char client_path[PATH_MAX];

char *
slurp_fd(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap + 1);
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
	}
	buf[len] = '\0';
	close(fd);
	return buf;
}

/* Run the client with argv (NULL-terminated), as uid when uid >= 0. */
struct run
run_client_as(int uid, const char *const *argv)
{
	char o[] = "/tmp/vitals-out-XXXXXX", e[] = "/tmp/vitals-err-XXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e), status;
	struct run r;
	pid_t pid;

	if (client_path[0] == '\0') {
		const char *b = getenv("VITALS_BUILDDIR");

		snprintf(client_path, sizeof(client_path), "%s/client/vitals",
		    b ? b : ".");
	}
	ck_assert(fo >= 0 && fe >= 0);
	unlink(o);
	unlink(e);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		unsetenv("VITALS_SOCKET");
		if (uid >= 0 &&
		    (setgroups(0, NULL) < 0 || setgid((gid_t)uid) < 0 ||
			setuid((uid_t)uid) < 0))
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

struct run
run_client(const char *const *argv)
{
	return run_client_as(-1, argv);
}

void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}
