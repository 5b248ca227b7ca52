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
 * FILE is a trace as heapprofd would leave it, for the targets of the
 * config on stdin (its pids, or the processes its process_cmdline names
 * match now), of the kind $VITALS_FAKE_PERFETTO_DIR/trace says (default
 * "good"; a number after the kind is the dumps per target, default 2):
 *   good            a dump of every target, no error flag
 *   rejected        the first target rejected (a concurrent session)
 *   overran         the first target disconnected, buffer_overran
 *   timeout-error   the first target with client_error HIT_TIMEOUT
 *   corrupted       the first target disconnected, buffer_corrupted
 *   guardrail       the first target disconnected, hit_guardrail
 *   disconnected    the first target disconnected
 *   nodump          packets, but no heap dump
 *   missing         no dump of the last target (the others good)
 *   truncated       a good trace cut 7 bytes short
 *   garbage         1000 bytes that are not a trace
 *   empty           0 bytes
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
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

#include "perfetto_config.pb-c.h"
#include "perfetto_trace.pb-c.h"

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

#define TARGETS_MAX 64

struct targets {
	uint64_t pid[TARGETS_MAX];
	unsigned n;
};

/* heapprofd's name of a process: cmdline to its first NUL, cut at '@',
 * after the last '/' */
static int
proc_name(long pid, char *buf, size_t sz)
{
	char path[64], raw[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -1;
	n = read(fd, raw, sizeof(raw) - 1);
	close(fd);
	if (n <= 0 || memchr(raw, 0, (size_t)n) == NULL)
		return -1;
	raw[n] = '\0';
	if ((p = strchr(raw, '@')) != NULL)
		*p = '\0';
	p = strrchr(raw, '/');
	snprintf(buf, sz, "%s", p ? p + 1 : raw);
	return 0;
}

static void
targets_of(const uint8_t *cfg, size_t len, struct targets *t)
{
	Perfetto__Protos__TraceConfig *tc;
	size_t i, k;

	t->n = 0;
	if ((tc = perfetto__protos__trace_config__unpack(NULL, len, cfg)) ==
	    NULL)
		return;
	for (i = 0; i < tc->n_data_sources; i++) {
		Perfetto__Protos__DataSourceConfig *c =
		    tc->data_sources[i]->config;
		Perfetto__Protos__HeapprofdConfig *h = c ? c->heapprofd_config :
							   NULL;

		if (h == NULL)
			continue;
		for (k = 0; k < h->n_pid && t->n < TARGETS_MAX; k++)
			t->pid[t->n++] = h->pid[k];
		for (k = 0; k < h->n_process_cmdline; k++) {
			DIR *d = opendir("/proc");
			struct dirent *de;
			char name[4096];

			while (d && (de = readdir(d)) != NULL &&
			    t->n < TARGETS_MAX) {
				long pid = atol(de->d_name);

				if (pid > 0 &&
				    proc_name(pid, name, sizeof(name)) == 0 &&
				    !strcmp(name, h->process_cmdline[k]))
					t->pid[t->n++] = (uint64_t)pid;
			}
			if (d)
				closedir(d);
		}
	}
	perfetto__protos__trace_config__free_unpacked(tc, NULL);
}

/* The trace of kind as bytes (malloc'd). */
static uint8_t *
make_trace(const char *kind, unsigned ndumps, const struct targets *t,
    size_t *ret_len)
{
	Perfetto__Protos__Trace tr = PERFETTO__PROTOS__TRACE__INIT;
	Perfetto__Protos__TracePacket pk[9], *pks[9];
	Perfetto__Protos__ProfilePacket pp[8];
	Perfetto__Protos__ProfilePacket__ProcessHeapSamples hs[8][TARGETS_MAX],
	    *hsp[8][TARGETS_MAX];
	Perfetto__Protos__ProfilePacket__HeapSample smp[3], *smps[3];
	Perfetto__Protos__ClockSnapshot cs =
	    PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	unsigned i, k, nt = t->n;
	bool bad = strcmp(kind, "good") && strcmp(kind, "missing") &&
	    strcmp(kind, "nodump");
	uint8_t *out;
	size_t n;

	if (ndumps > 8)
		ndumps = 8;
	if (!strcmp(kind, "nodump"))
		ndumps = 0;
	if (!strcmp(kind, "missing") && nt > 0)
		nt--;
	for (i = 0; i < 3; i++) {
		perfetto__protos__profile_packet__heap_sample__init(&smp[i]);
		smp[i].has_callstack_id = smp[i].has_self_allocated = true;
		smp[i].callstack_id = i + 1;
		smp[i].self_allocated = 4096 * (i + 1);
		smps[i] = &smp[i];
	}
	perfetto__protos__trace_packet__init(&pk[0]);
	pk[0].clock_snapshot = &cs;
	pks[0] = &pk[0];
	for (i = 0; i < ndumps; i++) {
		perfetto__protos__trace_packet__init(&pk[i + 1]);
		perfetto__protos__profile_packet__init(&pp[i]);
		pp[i].has_index = true;
		pp[i].index = i;
		for (k = 0; k < nt; k++) {
			Perfetto__Protos__ProfilePacket__ProcessHeapSamples *h =
			    &hs[i][k];

			perfetto__protos__profile_packet__process_heap_samples__init(
			    h);
			h->has_pid = true;
			h->pid = t->pid[k];
			h->heap_name = (char *)"libc.malloc";
			h->n_samples = 3;
			h->samples = smps;
			/* the error shows in the last dump of the first */
			if (bad && k == 0 && i + 1 == ndumps) {
				if (!strcmp(kind, "rejected")) {
					h->has_rejected_concurrent = true;
					h->rejected_concurrent = true;
					h->n_samples = 0;
				} else if (!strcmp(kind, "timeout-error")) {
					h->has_client_error = true;
					h->client_error = 1;
				} else if (strcmp(kind, "truncated")) {
					h->has_disconnected = true;
					h->disconnected = true;
				}
				if (!strcmp(kind, "overran")) {
					h->has_buffer_overran = true;
					h->buffer_overran = true;
				} else if (!strcmp(kind, "corrupted")) {
					h->has_buffer_corrupted = true;
					h->buffer_corrupted = true;
				} else if (!strcmp(kind, "guardrail")) {
					h->has_hit_guardrail = true;
					h->hit_guardrail = true;
				}
			}
			hsp[i][k] = h;
		}
		pp[i].n_process_dumps = nt;
		pp[i].process_dumps = hsp[i];
		pk[i + 1].profile_packet = &pp[i];
		pks[i + 1] = &pk[i + 1];
	}
	tr.n_packet = ndumps + 1;
	tr.packet = pks;
	n = perfetto__protos__trace__get_packed_size(&tr);
	if ((out = malloc(n)) == NULL)
		return NULL;
	perfetto__protos__trace__pack(&tr, out);
	if (!strcmp(kind, "truncated"))
		n = n > 7 ? n - 7 : 0;
	*ret_len = n;
	return out;
}

static void
write_trace(const char *path, const char *dir, const uint8_t *cfg,
    size_t cfglen)
{
	char kind[64] = "good", tp[4096];
	uint8_t garbage[1000], *buf = garbage;
	struct targets t;
	unsigned ndumps = 2;
	size_t len = sizeof(garbage);
	FILE *f;
	int fd;

	if (path == NULL)
		return;
	snprintf(tp, sizeof(tp), "%s/trace", dir);
	if ((f = fopen(tp, "r")) != NULL) {
		if (fscanf(f, "%63s %u", kind, &ndumps) < 1)
			strcpy(kind, "good");
		fclose(f);
	}
	memset(garbage, 0x0a, sizeof(garbage));
	targets_of(cfg, cfglen, &t);
	if (!strcmp(kind, "empty"))
		len = 0;
	else if (strcmp(kind, "garbage") &&
	    (buf = make_trace(kind, ndumps, &t, &len)) == NULL)
		return;
	if (!strcmp(path, "-")) {
		fd = 1;
	} else if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640)) < 0) {
		goto out;
	}
	if (len)
		(void)!write(fd, buf, len);
	if (fd != 1)
		close(fd);
out:
	if (buf != garbage)
		free(buf);
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
		write_trace(out, dir, (const uint8_t *)in, n);
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
		write_trace(out, dir, (const uint8_t *)in, n);
		return 0;
	}
	if (!strncmp(mode, "ignore-term", 11)) {
		signal(SIGTERM, SIG_IGN);
		for (;;)
			pause();
	}
	return 3;
}
