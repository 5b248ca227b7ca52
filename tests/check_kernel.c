/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The collector and the daemon against the running kernel: real /proc and
 * /sys, real clocks, a real child process whose CPU use the test knows
 * from the child's own account. These catch what fixtures cannot: a field
 * the kernel prints differently, a clock that means something else, USER_HZ
 * taken from the wrong place.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "vitalsd.h"

#define CHILD_COMM "bu) (rn x"
#define CHILD_CPU_NS (2 * NSEC_PER_SEC)

static int64_t
cputime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* What the child reports about itself. */
struct child_report {
	uint64_t ticks;	  /* utime + stime from times(), USER_HZ */
	int64_t start_ns; /* CLOCK_MONOTONIC as it began */
	int64_t end_ns;	  /* and when it had burnt its CPU */
};

/*
 * The child: a comm made to trip a parser that looks for the first ')',
 * about 2 s of CPU, then its own count of it (times(): utime + stime in
 * USER_HZ, the same accounting as /proc/<pid>/stat) into the pipe.
 */
static void child_burn(int wfd, pid_t parent) __attribute__((noreturn));

static void
child_burn(int wfd, pid_t parent)
{
	struct child_report rep = { 0, clock_ns(CLOCK_MONOTONIC), 0 };
	volatile uint64_t spin = 0;
	struct tms t;

	/* never outlive a test that failed */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	prctl(PR_SET_NAME, CHILD_COMM);
	/*
	 * Other work on the machine must not stretch the 2 s of CPU over much
	 * more wall time. Root may raise priority; elsewhere this quietly
	 * fails, and the test sees it in the report.
	 */
	(void)setpriority(PRIO_PROCESS, 0, -19);
	while (cputime_ns() < CHILD_CPU_NS)
		spin++;
	times(&t);
	rep.ticks = (uint64_t)t.tms_utime + (uint64_t)t.tms_stime;
	rep.end_ns = clock_ns(CLOCK_MONOTONIC);
	if (write(wfd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(1);
	for (;;)
		pause();
}

static const struct window_task *
find_id(const struct window_task *a, size_t n, int32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].id == id)
			return &a[i];
	return NULL;
}

/*
 * One run: baseline, fork the child, sample every 250 ms until it reports,
 * sample once more, close the window. Everything that follows from the
 * child's own report is asserted here; the core-equivalent is returned
 * with the share of a core the child really got, which depends on how
 * busy the machine is.
 */
static void
burn_once(double *ret_core, double *ret_own)
{
	struct collector_opts o = {
		.proc_root = "/proc",
		.sys_root = "/sys",
		.hz = 0,
		.interval_ms = 250,
		.window_s = 60,
		.ring = 2,
		.threads = THREADS_CHANGED,
	};
	struct child_report rep = { 0 };
	const struct window_task *p, *t;
	const struct window *w;
	struct collector *c;
	struct clocks now;
	int64_t base_ns;
	uint64_t dp, dt;
	long hz = sysconf(_SC_CLK_TCK);
	unsigned i, nsamples = 1;
	double core, truth;
	int pfd[2], st;
	pid_t pid;

	ck_assert_int_gt(hz, 0);
	ck_assert_int_eq(collector_new(&o, &c), 0);
	ck_assert_uint_eq(collector_hz(c), (unsigned)hz);
	collector_clocks(&now);
	base_ns = now.mono_ns;
	ck_assert_int_eq(collector_sample(c, &now, false), 0);
	tu_sleep_ms(50);

	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		child_burn(pfd[1], getppid());
	}
	close(pfd[1]);

	/* sample every 250 ms while it burns; at most 20 s */
	for (i = 0; i < 80; i++) {
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		int n = poll(&pf, 1, 250);

		ck_assert_int_ge(n, 0);
		collector_clocks(&now);
		ck_assert_int_eq(collector_sample(c, &now, false), 0);
		nsamples++;
		if (n > 0) {
			ck_assert_int_eq(read(pfd[0], &rep, sizeof(rep)),
			    sizeof(rep));
			break;
		}
	}
	ck_assert_msg(rep.ticks > 0, "the child never reported");
	/* one more, after its counters stopped */
	collector_clocks(&now);
	ck_assert_int_eq(collector_sample(c, &now, false), 0);
	nsamples++;
	ck_assert_int_eq(collector_close_window(c, &now), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(pfd[0]);

	w = collector_window(c, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->samples, nsamples);
	ck_assert_uint_eq(w->samples_valid, nsamples - 1);
	p = find_id(w->procs, w->nprocs, pid);
	ck_assert_msg(p != NULL, "child %d not among %zu processes", pid,
	    w->nprocs);
	ck_assert_str_eq(p->comm, CHILD_COMM);
	ck_assert(p->born);
	ck_assert(!p->exited);
	ck_assert_uint_eq(p->uid, getuid());
	/* born after the baseline: every sample since is its denominator */
	ck_assert_uint_eq(p->samples, nsamples - 1);
	ck_assert_uint_eq(p->wall_ns, (uint64_t)(now.mono_ns - base_ns));
	dp = p->d_utime + p->d_stime;
	/* 2 s of CPU is 200 ticks at 100 Hz: the child's own figure, within
	 * 2 ticks for the rounding of two separate reads */
	ck_assert_msg(dp + 2 >= rep.ticks && dp <= rep.ticks + 2,
	    "Δ(utime+stime) %llu, child counted %llu", (unsigned long long)dp,
	    (unsigned long long)rep.ticks);
	ck_assert_uint_ge(rep.ticks, (uint64_t)(2 * hz) - 2);
	/* the figure is the child's CPU over the same span, to a tick or two */
	core = metric_core_equiv(dp, p->wall_ns, w->hz);
	truth = ((double)rep.ticks / (double)hz) /
	    ((double)(now.mono_ns - base_ns) / NSEC_PER_SEC);
	ck_assert_double_eq_tol(core, truth,
	    2.0 / (double)hz / ((double)p->wall_ns / NSEC_PER_SEC));
	/* machine share: a single task on n CPUs cannot exceed 1/n much */
	ck_assert_double_le(metric_machine_share(dp, p->total_ticks),
	    1.15 / (double)sysconf(_SC_NPROCESSORS_ONLN));

	t = find_id(w->threads, w->nthreads, pid);
	ck_assert_msg(t != NULL, "thread %d not among %zu threads", pid,
	    w->nthreads);
	ck_assert_int_eq(t->tgid, pid);
	ck_assert_str_eq(t->comm, CHILD_COMM);
	ck_assert(t->born);
	dt = t->d_utime + t->d_stime;
	ck_assert_msg(dt + 2 >= rep.ticks && dt <= rep.ticks + 2,
	    "thread Δ %llu, child counted %llu", (unsigned long long)dt,
	    (unsigned long long)rep.ticks);
	ck_assert_uint_eq(t->wall_ns, p->wall_ns);
	collector_free(c);

	*ret_core = core;
	*ret_own = ((double)rep.ticks / (double)hz) /
	    ((double)(rep.end_ns - rep.start_ns) / NSEC_PER_SEC);
}

START_TEST(child_cpu_matches_its_own_count)
{
	double core = 0, own = 0;
	unsigned attempt;

	/*
	 * A busy-looping child is one core busy: 0.8..1.15 allows for the
	 * 50 ms before its fork and the last sample's lag. That holds only
	 * if the machine gave it a core; when other load took a share of it
	 * (the child's own CPU/wall says so), measure again.
	 */
	for (attempt = 0; attempt < 4; attempt++) {
		burn_once(&core, &own);
		if (own >= 0.9)
			break;
	}
	/*
	 * Other load can keep the child under a core in every attempt:
	 * CI's README stage builds the later stages at nice 19 beside it
	 * (a clean-clone run on 7 Dec 2026 got 0.89 in all four: what eight
	 * such compilers on its CPU would leave it, 1024 / (1024 + 8 x 15)).
	 * The figure must then be the share the child had: the same bounds,
	 * scaled by it. Under half a core says too little.
	 */
	ck_assert_msg(own >= 0.5,
	    "machine too busy: the child got %.2f of "
	    "a core in each of %u attempts",
	    own, attempt);
	ck_assert_msg(core >= 0.8 * own && core <= 1.15 * own,
	    "core-equivalent %.3f (child had %.3f of a core)", core, own);
}
END_TEST

/* "0-3,5,7-8\n": set online[i] for each listed CPU; return the count. */
static unsigned
parse_online(const char *s, bool *online, unsigned max)
{
	unsigned n = 0;

	while (*s && *s != '\n') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a, i;

		ck_assert_ptr_ne(end, s);
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		ck_assert_uint_le(a, b);
		ck_assert_uint_lt(b, max);
		for (i = a; i <= b; i++) {
			online[i] = true;
			n++;
		}
		s = end;
		if (*s == ',')
			s++;
	}
	return n;
}

START_TEST(real_samples_valid_every_cpu)
{
	struct collector_opts o = {
		.proc_root = "/proc",
		.sys_root = "/sys",
		.interval_ms = 100,
		.window_s = 60,
		.threads = THREADS_ALL,
	};
	static bool online[VITALS_CPU_MAX];
	const struct window *w;
	struct collector *c;
	struct clocks now;
	char buf[1024];
	unsigned i, n;
	FILE *f;

	f = fopen("/sys/devices/system/cpu/online", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	n = parse_online(buf, online, VITALS_CPU_MAX);
	ck_assert_uint_gt(n, 0);

	ck_assert_int_eq(collector_new(&o, &c), 0);
	for (i = 0; i < 6; i++) {
		/*
		 * Earn ticks rather than sleep: on a quiet machine a sleeping
		 * test process may get none, and nothing else need run.
		 */
		if (i)
			tu_burn_ms(100);
		collector_clocks(&now);
		ck_assert_int_eq(collector_sample(c, &now, false), 0);
	}
	ck_assert_int_eq(collector_close_window(c, &now), 0);
	w = collector_window(c, 0);
	ck_assert_ptr_nonnull(w);

	ck_assert_uint_eq(w->samples, 6);
	for (i = 0; i < INV__MAX; i++)
		ck_assert_msg(w->inv_samples[i] == 0, "%u samples invalid: %s",
		    w->inv_samples[i], invalid_name(i));
	ck_assert_uint_eq(w->samples_valid, 5);
	/* our parsers accept everything this kernel prints */
	ck_assert_uint_eq(w->inv_deltas[INV_PARSE], 0);
	ck_assert_uint_eq(w->inv_deltas[INV_READ_FAILED], 0);
	ck_assert_uint_eq(w->all.samples, 5);
	ck_assert_uint_gt(cpu_times_total(&w->all.d), 0);
	/* 5 × ~100 ms, and never the boottime delta */
	ck_assert_uint_ge(w->all.wall_ns, 500 * NSEC_PER_MSEC);
	/* (a loaded machine may stretch each 100 ms burn up to 2 s) */
	ck_assert_uint_lt(w->all.wall_ns, 15 * NSEC_PER_SEC);
	ck_assert_double_eq(w->online_cpus.last, n);
	for (i = 0; i < VITALS_CPU_MAX; i++) {
		if (!online[i])
			continue;
		ck_assert_uint_lt(i, w->cpu_span);
		ck_assert_msg(w->cpu[i].samples > 0, "cpu%u has no samples", i);
		ck_assert(w->cpu[i].online_end);
	}
	ck_assert_uint_gt(w->nprocs, 0); /* this test process burnt 500 ms */
	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].id == getpid())
			break;
	ck_assert_msg(i < w->nprocs, "own pid %d not among %zu processes",
	    (int)getpid(), w->nprocs);
	/* 500 ms of CPU at USER_HZ 100 is ~50 ticks; allow scheduler slack */
	ck_assert_uint_ge(w->procs[i].d_utime + w->procs[i].d_stime, 20);
	ck_assert_uint_gt(w->health.procs_scanned, 0);
	ck_assert_uint_ge(w->health.threads_scanned, w->health.procs_scanned);
	collector_free(c);
}
END_TEST

/* ------------------------------------------------------ the real daemon */

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	buf[fread(buf, 1, (size_t)n, f)] = '\0';
	fclose(f);
	return buf;
}

static unsigned
count_str(const char *hay, const char *needle)
{
	unsigned n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Until path holds needle at least n times (30 s at most). */
static bool
wait_log(const char *path, const char *needle, unsigned n)
{
	unsigned i, k;
	char *t;

	for (i = 0; i < 300; i++) {
		t = slurp(path);
		k = count_str(t, needle);
		free(t);
		if (k >= n)
			return true;
		tu_sleep_ms(100);
	}
	return false;
}

START_TEST(daemon_signals)
{
	char state[PATH_MAX], errpath[PATH_MAX];
	const char *argv[] = { "vitalsd", "-f", "--state-dir", state,
		"--interval-ms", "100", "--window-s", "1", NULL };
	char *tmp = tu_mkdtemp("kdaemon"), *err;
	int status = 0, i;
	pid_t pid, r = 0;

	ck_assert_msg(getenv("VITALS_BUILDDIR") != NULL,
	    "VITALS_BUILDDIR not set (run via meson)");
	ck_assert_ptr_nonnull(tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmp);
	pid = td_exec(errpath, TD_LOG_TRUNC, argv, NULL, NULL);

	/* Each step waits for the daemon to say it is done (30 s at most),
	 * not for a guess of how long a loaded machine takes. */
	ck_assert_msg(wait_log(errpath, "] window ", 2), "no two windows");
	ck_assert_int_eq(kill(pid, SIGUSR1), 0); /* burst */
	ck_assert_msg(wait_log(errpath, "burst", 1), "no burst");
	ck_assert_int_eq(kill(pid, SIGUSR2), 0); /* dump */
	ck_assert_msg(wait_log(errpath, "Threads with activity", 1), "no dump");
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	for (i = 0; i < 1000 && r == 0; i++) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == 0)
			tu_sleep_ms(10);
	}
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	err = slurp(errpath);
	ck_assert_msg(r == pid, "vitalsd did not stop on SIGTERM:\n%s", err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "vitalsd status 0x%x:\n%s", status, err);
	/* 1 s windows over ~3 s: at least two closed on their own */
	ck_assert_msg(count_str(err, "] window ") >= 2, "%s", err);
	ck_assert_msg(strstr(err, "burst") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "dump:") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "Processes with activity") != NULL, "%s",
	    err);
	ck_assert_msg(strstr(err, "Threads with activity") != NULL, "%s", err);
	/* under -Db_sanitize: UBSan reports without changing the status */
	ck_assert_msg(strstr(err, "runtime error") == NULL &&
		strstr(err, "Sanitizer") == NULL,
	    "%s", err);
	free(err);
	tu_rmtree(tmp);
	free(tmp);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("kernel");
	TCase *tc;

	tc = tcase_create("collector");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, child_cpu_matches_its_own_count);
	tcase_add_test(tc, real_samples_valid_every_cpu);
	suite_add_tcase(s, tc);

	tc = tcase_create("daemon");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, daemon_signals);
	suite_add_tcase(s, tc);

	return tu_run(s);
}
