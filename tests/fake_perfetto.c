/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the perfetto binary (tests only): it takes the arguments
 * vitalsd gives the real one (-c - -o -: the trace to stdout, or -o FILE),
 * reads the config from stdin
 * and records argv and stdin under $VITALS_FAKE_PERFETTO_DIR/calls/, then
 * behaves as the file $VITALS_FAKE_PERFETTO_DIR/mode says:
 *   exit CODE MS    write FILE, wait MS, exit CODE
 *   term            run until SIGTERM, then write FILE and exit 0 (as
 *                   perfetto does when a session is stopped); once the
 *                   handler is in place, calls/<pid>.ready exists
 *   ignore-term     ignore SIGTERM: only SIGKILL ends it
 *   probe           try what the spawn helper's filter refuses (ptrace,
 *                   unshare, execve by path) and what perfetto needs (an
 *                   AF_UNIX socket, a thread-less fork), record each
 *                   result in calls/<pid>.probe, then as "exit 0 0"
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void
write_trace(const char *path)
{
	char buf[1000];
	int fd;

	if (path == NULL)
		return;
	memset(buf, 0x0a, sizeof(buf));
	if (!strcmp(path, "-")) {
		(void)!write(1, buf, sizeof(buf));
		return;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640)) < 0)
		return;
	(void)!write(fd, buf, sizeof(buf));
	close(fd);
}

static const char *
result(int r)
{
	return r < 0 ? strerror(errno) : "ok";
}

/* One line per call; the seccomp mode and no_new_privs as the kernel says. */
static void
probe(const char *dir)
{
	char path[4096], line[256];
	char *const av[] = { "true", NULL };
	FILE *f, *st;
	pid_t pid;
	int r;

	snprintf(path, sizeof(path), "%s/calls/%ld.probe", dir, (long)getpid());
	if ((f = fopen(path, "w")) == NULL)
		return;
	errno = 0;
	r = (int)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	fprintf(f, "ptrace %s\n", result(r));
	r = unshare(CLONE_NEWUSER);
	fprintf(f, "unshare %s\n", result(r));
	r = execv("/bin/true", av);
	fprintf(f, "execve %s\n", result(r));
	r = socket(AF_UNIX, SOCK_STREAM, 0);
	fprintf(f, "socket %s\n", result(r));
	if (r >= 0)
		close(r);
	if ((pid = fork()) == 0)
		_exit(0);
	fprintf(f, "fork %s\n", pid < 0 ? strerror(errno) : "ok");
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if ((st = fopen("/proc/self/status", "r")) != NULL) {
		while (fgets(line, sizeof(line), st))
			if (!strncmp(line, "Seccomp:", 8) ||
			    !strncmp(line, "NoNewPrivs:", 11) ||
			    !strncmp(line, "Uid:", 4) ||
			    !strncmp(line, "CapEff:", 7) ||
			    !strncmp(line, "CapBnd:", 7))
				fputs(line, f);
		fclose(st);
	}
	fclose(f);
}

int
main(int argc, char *argv[])
{
	const char *dir = getenv("VITALS_FAKE_PERFETTO_DIR"), *out = NULL;
	char path[4096], mode[64] = "exit 0 0", in[65536];
	size_t n = 0;
	ssize_t r;
	FILE *f;
	int i, code = 0, ms = 0;

	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-o"))
			out = argv[i + 1];
	while (n < sizeof(in) && (r = read(0, in + n, sizeof(in) - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	if (dir == NULL)
		return 2;
	snprintf(path, sizeof(path), "%s/calls/%ld.argv", dir, (long)getpid());
	if ((f = fopen(path, "w")) != NULL) {
		for (i = 0; i < argc; i++)
			fprintf(f, "%s\n", argv[i]);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/calls/%ld.stdin", dir, (long)getpid());
	if ((f = fopen(path, "w")) != NULL) {
		fwrite(in, 1, n, f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/mode", dir);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(mode, sizeof(mode), f) == NULL)
			strcpy(mode, "exit 0 0");
		fclose(f);
	}
	if (!strncmp(mode, "probe", 5)) {
		probe(dir);
		strcpy(mode, "exit 0 0");
	}
	if (sscanf(mode, "exit %d %d", &code, &ms) == 2) {
		write_trace(out);
		usleep((useconds_t)ms * 1000);
		return code;
	}
	if (!strncmp(mode, "term", 4)) {
		signal(SIGTERM, on_term);
		/* the handler is in place: a test may stop it now */
		snprintf(path, sizeof(path), "%s/calls/%ld.ready", dir,
		    (long)getpid());
		if ((f = fopen(path, "w")) != NULL)
			fclose(f);
		while (!stop)
			pause();
		write_trace(out);
		return 0;
	}
	if (!strncmp(mode, "ignore-term", 11)) {
		signal(SIGTERM, SIG_IGN);
		for (;;)
			pause();
	}
	return 3;
}
