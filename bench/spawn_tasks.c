/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn_tasks: a synthetic task population for measuring the cost of
 * scanning /proc.
 *
 * Forks P processes with T threads each (the main thread counts). A fraction
 * of the processes is "busy": every thread of a busy process wakes every
 * period and burns a fixed amount of its own CPU time, so a sampler that only
 * rereads tasks whose counters moved ("changed" scans) has real work to do.
 * The others block forever. "ready" goes to stdout once every task exists.
 *
 * Children never outlive the parent: they share one process group that the
 * parent kills on the way out, and PR_SET_PDEATHSIG covers a parent that is
 * itself killed. The parent exits on SIGTERM/SIGINT/SIGHUP or when its stdin
 * reaches EOF (unless -S), so a benchmark script only has to close a pipe.
 */
#define _GNU_SOURCE

#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_USEC 1000LL
#define NSEC_PER_MSEC 1000000LL
#define THREAD_STACK (64 * 1024)

#ifndef __dead
#define __dead __attribute__((__noreturn__))
#endif

struct spawn_conf {
	int procs;	     /* -p */
	int threads;	     /* -t, per process, main included */
	int busy_pct;	     /* -b */
	long long period_ns; /* -i */
	long long burn_ns;   /* -c */
	int idle_sched;	     /* -I: run the population at SCHED_IDLE */
	int watch_stdin;     /* cleared by -S */
};

static struct spawn_conf conf = {
	.procs = 500,
	.threads = 4,
	.busy_pct = 10,
	.period_ns = 100 * NSEC_PER_MSEC,
	.burn_ns = 1 * NSEC_PER_MSEC,
	.idle_sched = 0,
	.watch_stdin = 1,
};

static volatile uint64_t burn_sink;

static void __dead
usage(void)
{
	fprintf(stderr,
	    "usage: spawn_tasks [-IS] [-b busy_percent] "
	    "[-c burn_us] [-i period_ms]\n"
	    "                   [-p procs] [-t threads_per_proc]\n");
	exit(2);
}

static long long
num(const char *s, long long min, long long max, const char *what)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < min || v > max)
		errx(2, "%s: %s: expected %lld..%lld", what, s, min, max);
	return v;
}

static long long
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Spend burn_ns of this thread's own CPU time, however long that takes. */
static void
burn(long long burn_ns)
{
	long long start = now_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t x = burn_sink;
	int i;

	do {
		for (i = 0; i < 20000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		burn_sink = x;
	} while (now_ns(CLOCK_THREAD_CPUTIME_ID) - start < burn_ns);
}

static void
busy_loop(void)
{
	struct timespec ts;
	long long next, t;

	next = now_ns(CLOCK_MONOTONIC);
	for (;;) {
		next += conf.period_ns;
		ts.tv_sec = next / NSEC_PER_SEC;
		ts.tv_nsec = next % NSEC_PER_SEC;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
			   NULL) == EINTR)
			;
		burn(conf.burn_ns);
		/* Starved for a whole period: skip, do not catch up. */
		t = now_ns(CLOCK_MONOTONIC);
		if (t - next > conf.period_ns)
			next = t;
	}
}

static void
idle_loop(void)
{
	for (;;)
		pause();
}

static void *
thread_main(void *arg)
{
	if (arg != NULL)
		busy_loop();
	idle_loop();
	return NULL;
}

/*
 * Child body: never returns. Announces itself by writing one byte to
 * readyfd once all of its threads exist.
 */
static void __dead
child_main(int idx, int busy, pid_t parent, pid_t pgid, int readyfd)
{
	struct sched_param sp = { .sched_priority = 0 };
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t set;
	char name[32]; /* the kernel keeps 15 bytes */
	int fd, i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		_exit(1);
	/* The parent died before prctl took effect. */
	if (getppid() != parent)
		_exit(1);
	/* Both sides call setpgid: whichever runs first wins the race. */
	setpgid(0, pgid);

	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);

	/* Hold neither the control pipe nor the "ready" reader open. */
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}

	snprintf(name, sizeof(name), "bench-p%d", idx);
	prctl(PR_SET_NAME, name);
	if (conf.idle_sched && sched_setscheduler(0, SCHED_IDLE, &sp) == -1)
		_exit(1);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	for (i = 1; i < conf.threads; i++) {
		if (pthread_create(&tid, &attr, thread_main,
			busy ? &conf : NULL) != 0)
			_exit(1);
	}
	pthread_attr_destroy(&attr);

	if (write(readyfd, "r", 1) != 1)
		_exit(1);
	close(readyfd);

	thread_main(busy ? &conf : NULL);
	_exit(0);
}

/* Kill the whole population and reap it. */
static void
reap_all(pid_t pgid)
{
	if (pgid > 0)
		kill(-pgid, SIGKILL);
	while (wait(NULL) != -1 || errno == EINTR)
		;
}

int
main(int argc, char *argv[])
{
	struct signalfd_siginfo si;
	struct pollfd pfd[2];
	sigset_t set;
	pid_t parent, pid, pgid = 0;
	char buf[512];
	ssize_t n;
	int ch, i, pipefd[2], sfd, busy, nbusy = 0, nready = 0, dead = 0;

	while ((ch = getopt(argc, argv, "b:c:i:Ip:St:")) != -1) {
		switch (ch) {
		case 'b':
			conf.busy_pct = num(optarg, 0, 100, "busy percent");
			break;
		case 'c':
			conf.burn_ns = num(optarg, 0, 10 * 1000 * 1000,
					   "burn us") *
			    NSEC_PER_USEC;
			break;
		case 'i':
			conf.period_ns = num(optarg, 1, 60 * 1000,
					     "period ms") *
			    NSEC_PER_MSEC;
			break;
		case 'I':
			conf.idle_sched = 1;
			break;
		case 'p':
			conf.procs = num(optarg, 1, 100000, "procs");
			break;
		case 'S':
			conf.watch_stdin = 0;
			break;
		case 't':
			conf.threads = num(optarg, 1, 1000, "threads");
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	/* Block before forking so no signal slips in between. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		err(1, "sigprocmask");
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1)
		err(1, "signalfd");
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(pipefd, O_CLOEXEC) == -1)
		err(1, "pipe2");

	parent = getpid();
	for (i = 0; i < conf.procs; i++) {
		/* Spread busy processes evenly over the index range. */
		busy = (i * conf.busy_pct) % 100 < conf.busy_pct;
		switch ((pid = fork())) {
		case -1:
			warn("fork %d", i);
			reap_all(pgid);
			return 1;
		case 0:
			close(pipefd[0]);
			close(sfd);
			child_main(i, busy, parent, pgid ? pgid : getpid(),
			    pipefd[1]);
		default:
			if (pgid == 0)
				pgid = pid;
			setpgid(pid, pgid);
			nbusy += busy;
		}
	}
	close(pipefd[1]);

	/* EOF once every child has written its byte or died trying. */
	while ((n = read(pipefd[0], buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			warn("read ready pipe");
			reap_all(pgid);
			return 1;
		}
		nready += n;
	}
	close(pipefd[0]);
	if (nready != conf.procs) {
		warnx("only %d of %d processes started", nready, conf.procs);
		reap_all(pgid);
		return 1;
	}

	fprintf(stderr,
	    "spawn_tasks: %d processes x %d threads = %d tasks; "
	    "%d busy (%d threads, %lld us every %lld ms: %.2f cores)%s\n",
	    conf.procs, conf.threads, conf.procs * conf.threads, nbusy,
	    nbusy * conf.threads, conf.burn_ns / NSEC_PER_USEC,
	    conf.period_ns / NSEC_PER_MSEC,
	    (double)nbusy * conf.threads * conf.burn_ns / conf.period_ns,
	    conf.idle_sched ? ", SCHED_IDLE" : "");
	printf("ready\n");
	fflush(stdout);

	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = conf.watch_stdin ? STDIN_FILENO : -1;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			warn("poll");
			break;
		}
		if (pfd[1].revents) {
			/* Data is ignored; EOF or an error ends the run. */
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n <= 0 && !(n == -1 && errno == EINTR))
				break;
		}
		if (pfd[0].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo != SIGCHLD)
				break;
			/* A child died under us: the population shrank. */
			while (waitpid(-1, NULL, WNOHANG) > 0)
				dead++;
			if (dead)
				warnx("%d of %d processes died", dead,
				    conf.procs);
		}
	}

	reap_all(pgid);
	return 0;
}
