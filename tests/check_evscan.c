/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event-driven process samples (doc/bpf.md, "Event-driven samples")
 * against the running kernel: the sched accounting loaded on a pin
 * directory of the test's own, one scan with partial samples and one
 * that walks every task every sample, side by side on the same ticks,
 * over a population the test drives (processes of four threads; a tenth
 * of them work each sample; threads and processes are made and end
 * between samples). Every window's rows of the population are the same
 * in both: ticks, faults, samples, wall, total and normalised ticks, born
 * and exited. And an idle population costs a partial read nothing: only
 * the groups that ran are read, each whole.
 *
 * The population is quiescent while the two scans read (each command is
 * acknowledged, then the test waits), so the two reads see the same
 * counters. Needs root (BPF, bpffs).
 */
#include <bpf/bpf.h>
#include <check.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/bpf_common.h"
#include "harness.h"
#include "proc/proc.h"
#include "sched/sched.h"
#include "taskiter/taskiter.h"
#include "bpf_sched_fix.h"
#include "testutil.h"
#include "vitalsd.h"
#include "../bpf/taskiter/taskiter.bpf.h"
#include "../bpf/sched/sched.bpf.h"

#define MAXP 256

static char *bpffs;
static int dir_seq;

/* ------------------------------------------------------------ population */

struct member {
	pid_t pid;
	int cmd;    /* write end of its command pipe; -1: gone */
	bool execd; /* a shell now: takes no command but its end */
};

static struct member pop[MAXP];
static int npop;
static int ack_r = -1, ack_w = -1;
/* every tgid the population ever had (rows are compared for these) */
static pid_t ever[4 * MAXP];
static int never;

static int child_cmd = -1; /* in a member: its command pipe */
static int child_x[2];	   /* in a member: wakes its extra threads */

static void
burn_cpu_ms(unsigned ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ull +
		(uint64_t)t.tv_nsec - (uint64_t)t0.tv_nsec <
	    (uint64_t)ms * 1000000ull);
}

static void
fault_pages(unsigned n)
{
	size_t len = (size_t)n * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		return;
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	munmap(p, len);
}

static void
ack(void)
{
	char c = 'a';

	(void)!write(ack_w, &c, 1);
}

/* An extra thread: works, then waits to be told to end. */
static void *
extra_main(void *arg)
{
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "evs_extra");
	burn_cpu_ms(3);
	(void)!read(child_x[0], &c, 1);
	fault_pages(8);
	return NULL;
}

/* A short-lived thread: born and gone between two samples. */
static void *
brief_main(void *arg)
{
	(void)arg;
	burn_cpu_ms(4);
	fault_pages(4);
	return NULL;
}

/*
 * Every thread of a member reads commands off the one pipe (one reader
 * woken per byte): w work, s a thread that ends at once, S a thread that
 * stays, x end one that stayed, q the process ends. Each is acknowledged
 * once done (q: by the exit the test reaps).
 */
static void *
member_thread(void *arg)
{
	static pthread_t extra[64];
	static int nextra;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	char c;

	(void)arg;
	for (;;) {
		if (read(child_cmd, &c, 1) != 1)
			_exit(1);
		switch (c) {
		case 'w':
			burn_cpu_ms(2 + (unsigned)(rand() % 5));
			fault_pages(16);
			break;
		case 's': {
			pthread_t t;

			if (pthread_create(&t, NULL, brief_main, NULL) == 0)
				pthread_join(t, NULL);
			break;
		}
		case 'S':
			pthread_mutex_lock(&mu);
			if (nextra < 64 &&
			    pthread_create(&extra[nextra], NULL, extra_main,
				NULL) == 0)
				nextra++;
			pthread_mutex_unlock(&mu);
			/* its first slice done before the ack */
			tu_sleep_ms(20);
			break;
		case 'x':
			pthread_mutex_lock(&mu);
			if (nextra > 0) {
				(void)!write(child_x[1], "x", 1);
				pthread_join(extra[--nextra], NULL);
			}
			pthread_mutex_unlock(&mu);
			break;
		case 'n': {
			/* renames itself: this thread, and the leader when
			 * another thread reads the command */
			char name[16];

			snprintf(name, sizeof(name), "evs_rn%d", rand() % 1000);
			prctl(PR_SET_NAME, name);
			if (gettid() != getpid()) {
				int fd = open("/proc/self/comm", O_WRONLY);

				if (fd >= 0) {
					(void)!write(fd, name, strlen(name));
					close(fd);
				}
			}
			break;
		}
		case 'e': {
			/* execs a shell that works a little, acknowledges,
			 * then waits for the end of its command pipe */
			/* dash takes single-digit fds: 8 and 9 */
			static const char script[] =
			    "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; "
			    "printf e >&8; read x <&9; exit 0";
			int afd = fcntl(ack_w, F_DUPFD, 10),
			    cfd = fcntl(child_cmd, F_DUPFD, 10);

			if (afd < 0 || cfd < 0 || dup2(afd, 8) < 0 ||
			    dup2(cfd, 9) < 0)
				_exit(1);
			execl("/bin/sh", "sh", "-c", script, (char *)NULL);
			_exit(1);
		}
		case 'q':
			_exit(0);
		}
		ack();
	}
	return NULL;
}

static void
member_main(int cmd)
{
	pthread_t t[3];
	int i;

	child_cmd = cmd;
	if (pipe(child_x) < 0)
		_exit(1);
	prctl(PR_SET_NAME, "evs_member");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	srand((unsigned)getpid());
	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, member_thread, NULL) != 0)
			_exit(1);
	member_thread(NULL);
}

static void
spawn_member(void)
{
	int p[2];
	pid_t pid;

	ck_assert_int_lt(npop, MAXP);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[1]);
		close(ack_r);
		member_main(p[0]);
	}
	close(p[0]);
	pop[npop].pid = pid;
	pop[npop].cmd = p[1];
	pop[npop].execd = false;
	npop++;
	ck_assert_int_lt(never, 4 * MAXP);
	ever[never++] = pid;
}

static void
wait_acks(int n)
{
	char buf[64];

	while (n > 0) {
		ssize_t k = read(ack_r, buf, n < 64 ? (size_t)n : 64);

		ck_assert_int_gt(k, 0);
		n -= (int)k;
	}
}

static void
send_cmd(struct member *m, char c)
{
	ck_assert_int_eq(write(m->cmd, &c, 1), 1);
}

static void
end_member(struct member *m)
{
	int st;

	send_cmd(m, 'q');
	/* a shell's read ends at a newline (members forked later hold the
	 * pipe too: its end never comes) */
	if (m->execd)
		send_cmd(m, '\n');
	close(m->cmd);
	ck_assert_int_eq(waitpid(m->pid, &st, 0), m->pid);
	m->cmd = -1;
	m->execd = false;
}

static void
pop_start(int n)
{
	int p[2];

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ack_r = p[0];
	ack_w = p[1];
	npop = never = 0;
	while (npop < n)
		spawn_member();
	/* every thread blocked on its pipe */
	tu_sleep_ms(300);
}

static void
pop_stop(void)
{
	int i;

	for (i = 0; i < npop; i++)
		if (pop[i].cmd >= 0)
			end_member(&pop[i]);
	close(ack_r);
	close(ack_w);
	ack_r = ack_w = -1;
}

static bool
in_pop(int32_t tgid)
{
	int i;

	for (i = 0; i < never; i++)
		if (ever[i] == tgid)
			return true;
	return false;
}

/* ------------------------------------------------------------ the scans */

static struct procscan *
scan_new(int procfd, const struct taskiter_events *ev, enum threads_mode mode)
{
	struct procscan *ps;

	ck_assert_int_eq(procscan_new(procfd, (unsigned)sysconf(_SC_CLK_TCK),
			     mode, &ps),
	    0);
	if (ev != NULL)
		ck_assert_int_eq(procscan_set_events(ps, ev, "/sys"), 0);
	else
		procscan_force_full(ps, true);
	ck_assert_int_eq(procscan_set_scanner(ps, SCANNER_BPF, "/sys"), 0);
	return ps;
}

static const struct window_task *
row_find(const struct window_task *a, size_t n, const struct window_task *t)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].id == t->id && a[i].starttime == t->starttime)
			return &a[i];
	return NULL;
}

/* The population's rows of two windows, both ways: the same rows with the
 * same figures. Returns how many were compared. */
static unsigned
rows_same(const struct window_task *a, size_t na, const struct window_task *b,
    size_t nb, const char *what)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < nb; i++) {
		const struct window_task *x = &b[i], *y;

		if (!in_pop(x->tgid))
			continue;
		y = row_find(a, na, x);
		ck_assert_msg(y != NULL,
		    "%s %d (tgid %d): only in the full walk", what, x->id,
		    x->tgid);
		ck_assert_msg(x->d_utime == y->d_utime &&
			x->d_stime == y->d_stime,
		    "%s %d: ticks %llu+%llu full, %llu+%llu partial", what,
		    x->id, (unsigned long long)x->d_utime,
		    (unsigned long long)x->d_stime,
		    (unsigned long long)y->d_utime,
		    (unsigned long long)y->d_stime);
		ck_assert_msg(x->d_minflt == y->d_minflt &&
			x->d_majflt == y->d_majflt,
		    "%s %d: faults %llu full, %llu partial", what, x->id,
		    (unsigned long long)x->d_minflt,
		    (unsigned long long)y->d_minflt);
		ck_assert_msg(x->samples == y->samples,
		    "%s %d: samples %u full, %u partial", what, x->id,
		    x->samples, y->samples);
		ck_assert_uint_eq(x->wall_ns, y->wall_ns);
		ck_assert_uint_eq(x->total_ticks, y->total_ticks);
		/* the same additions in the same order: bit for bit */
		ck_assert_msg(x->norm_ticks == y->norm_ticks,
		    "%s %d: norm %.17g full, %.17g partial", what, x->id,
		    x->norm_ticks, y->norm_ticks);
		ck_assert_msg(strcmp(x->comm, y->comm) == 0 &&
			strcmp(window_task_name(x), window_task_name(y)) == 0,
		    "%s %d: name %s (%s) full, %s (%s) partial", what, x->id,
		    window_task_name(x), x->comm, window_task_name(y), y->comm);
		ck_assert_msg(x->born == y->born && x->exited == y->exited,
		    "%s %d: born/exited %d/%d full, %d/%d partial", what, x->id,
		    x->born, x->exited, y->born, y->exited);
		n++;
	}
	for (i = 0; i < na; i++)
		if (in_pop(a[i].tgid))
			ck_assert_msg(row_find(b, nb, &a[i]) != NULL,
			    "%s %d (tgid %d, %s): only in the partial scan: "
			    "%llu+%llu ticks, %llu faults, %u samples, "
			    "born %d exited %d",
			    what, a[i].id, a[i].tgid, a[i].comm,
			    (unsigned long long)a[i].d_utime,
			    (unsigned long long)a[i].d_stime,
			    (unsigned long long)a[i].d_minflt, a[i].samples,
			    a[i].born, a[i].exited);
	return n;
}

/* same_windows: renames and an exec in the windows between full walks */
static bool identity_rounds;

/* The first live member (not a shell) at index i % 5 == at, or -1. */
static int
member_at(int at)
{
	int i;

	for (i = 0; i < npop; i++)
		if (pop[i].cmd >= 0 && !pop[i].execd && i % 5 == at)
			return i;
	return -1;
}

/* Identity changes of some rounds: a process renames itself (rounds 9,
 * 13, 20, 27), one execs (round 15), one execs and is ended later. */
static void
identity_change(unsigned round)
{
	int i;

	if (!identity_rounds)
		return;
	if ((round == 9 || round == 13 || round == 20 || round == 27) &&
	    (i = member_at(3)) >= 0) {
		send_cmd(&pop[i], 'n');
		wait_acks(1);
	}
	if ((round == 15 || round == 22) && (i = member_at(2)) >= 0) {
		send_cmd(&pop[i], 'e');
		pop[i].execd = true;
		wait_acks(1); /* the shell's, after its work */
	}
}

/* One round of activity between two samples, acknowledged. */
static void
activity(unsigned round)
{
	int i, acks = 0, live = 0;

	identity_change(round);

	for (i = 0; i < npop; i++) {
		struct member *m = &pop[i];

		if (m->cmd < 0 || m->execd)
			continue;
		live++;
		/* a tenth work; some make or end threads */
		if ((unsigned)(i * 7 + round * 3) % 10 == 0) {
			send_cmd(m, 'w');
			acks++;
		}
		if ((unsigned)(i + round) % 17 == 0) {
			send_cmd(m, 's');
			acks++;
		}
		if ((unsigned)(i + round) % 13 == 0) {
			send_cmd(m, 'S');
			acks++;
		} else if ((unsigned)(i + round) % 13 == 5) {
			send_cmd(m, 'x');
			acks++;
		}
	}
	wait_acks(acks);
	/* a process ends, another starts, now and then */
	if (round % 3 == 1 && live > 4) {
		for (i = 0; i < npop; i++)
			if (pop[i].cmd >= 0 && !pop[i].execd &&
			    (unsigned)i % 5 == round % 5) {
				end_member(&pop[i]);
				break;
			}
	}
	if (round % 4 == 2 && npop < MAXP) {
		spawn_member();
		send_cmd(&pop[npop - 1], 'w');
		wait_acks(1);
	}
	/* threads back in read(); freed tasks through their grace period */
	tu_sleep_ms(120);
}

static void
setup(void)
{
	if (asprintf(&bpffs, "/sys/fs/bpf/vitals-test-%d-%d", (int)getpid(),
		dir_seq++) < 0)
		ck_abort();
	bpf_common_init();
}

static void
teardown(void)
{
	tu_rmtree(bpffs);
	free(bpffs);
}

/*
 * Partial samples and a full walk per sample over the same windows give
 * the same rows, in each threads mode. walk_s 0: the close walks in full,
 * then flips (the order without a flip hook); else the daemon's: the flip
 * before the close's last sample, whose scan reads partially until a
 * full walk is walk_s old — here never after the first sample, so every
 * close but none reads partially, with processes renaming themselves and
 * execing between (doc/bpf.md, "Full walks").
 */
static void
same_windows(enum threads_mode mode, unsigned walk_s)
{
	enum { WINDOWS = 5, PER = 6 };
	struct bpf_sched *bs = bsf_sched_open(bpffs);
	struct taskiter_events ev;
	struct procscan *a, *b;
	struct bpf_sched_batch batch = { 0 };
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int64_t prev = clock_ns(CLOCK_BOOTTIME) - NSEC_PER_SEC;
	unsigned round = 0, partial = 0, full = 0, compared = 0, nowalk = 0;
	int win, k;

	ck_assert_int_ge(procfd, 0);
	bsf_events_of(bs, &ev);
	a = scan_new(procfd, &ev, mode);
	b = scan_new(procfd, NULL, mode);
	procscan_set_walk_period(a, (uint64_t)walk_s * NSEC_PER_SEC);
	identity_rounds = true;
	pop_start(30);
	for (win = 0; win < WINDOWS; win++) {
		struct window *wa = window_new((uint64_t)win + 1, 0);
		struct window *wb = window_new((uint64_t)win + 1, 0);

		ck_assert_ptr_nonnull(wa);
		ck_assert_ptr_nonnull(wb);
		for (k = 0; k < PER; k++) {
			struct scan_ctx ctx = {
				.valid = k != 2 || win != 1, /* one invalid */
				.have_prev = true,
				.prev_boot_ns = prev,
				.full = k == PER - 1,
			};

			activity(round++);
			if (ctx.valid) {
				ctx.wall_ns = NSEC_PER_SEC + (uint64_t)k * 7;
				ctx.total_ticks = 200 + (uint64_t)round;
				ctx.norm_ticks = 100.0 / 3.0 * (k + 1) + 0.1;
			}
			if (ctx.full && walk_s > 0) {
				ck_assert_int_eq(bpf_sched_flip_early(bs), 0);
				ctx.flipped = true;
			}
			prev = ctx.boot_ns = clock_ns(CLOCK_BOOTTIME);
			ck_assert_int_eq(procscan_run(a, &ctx, wa), 0);
			ck_assert_int_eq(procscan_run(b, &ctx, wb), 0);
			ck_assert_uint_eq(wa->health.scanner, SCANNER_BPF);
			ck_assert_msg(wa->health.partial_why ==
				PARTIAL_WHY_NONE,
			    "partial off: %s (%s)",
			    partial_why_name(wa->health.partial_why),
			    strerror((int)wa->health.partial_err));
		}
		/* a close: flush, then the flip (made early: this one is
		 * that one) */
		ck_assert_int_eq(procscan_flush(a, wa), 0);
		ck_assert_int_eq(procscan_flush(b, wb), 0);
		ck_assert_int_eq(bpf_sched_flip(bs), 0);
		ck_assert_int_eq(bpf_sched_collect(bs, &batch), 0);
		partial += wa->health.samples_partial;
		full += wa->health.samples_full;
		if (wa->health.samples_full == 0)
			nowalk++;
		ck_assert_uint_eq(wb->health.samples_partial, 0);
		ck_assert_uint_eq(wb->health.samples_full, PER);
		compared += rows_same(wa->procs, wa->nprocs, wb->procs,
		    wb->nprocs, "process");
		compared += rows_same(wa->threads, wa->nthreads, wb->threads,
		    wb->nthreads, "thread");
		window_free(wa);
		window_free(wb);
	}
	pop_stop();
	identity_rounds = false;
	/* most samples were partial: the first sample and (walk_s 0) each
	 * window's last walk in full (the flip right after a walk is taken),
	 * a doubt now and then */
	fprintf(stderr,
	    "same windows (walk_s %u): %u partial, %u full samples, %u "
	    "windows without a walk, %u rows compared\n",
	    walk_s, partial, full, nowalk, compared);
	ck_assert_msg(partial >= (unsigned)(WINDOWS * (PER - 1)) - 3,
	    "partial samples %u, full %u", partial, full);
	if (walk_s > 0)
		ck_assert_msg(nowalk >= 2, "windows without a full walk: %u",
		    nowalk);
	else
		ck_assert_uint_eq(nowalk, 0);
	ck_assert_uint_gt(compared, 100);
	procscan_free(a);
	procscan_free(b);
	bpf_sched_batch_release(&batch);
	bpf_sched_free(bs);
	close(procfd);
}

/*
 * The hole issue 20's check_client_daemon failure found: a child born
 * after a full walk that burns CPU without ever switching out (pinned
 * alone on another CPU) and ends before the next walk has no thread-map
 * entry until its last switch; partial samples see it only as a CPU's
 * running task. Its ticks match the full-walk-per-sample scan's (the two
 * read it running, one after the other: within a tick) and it is retired
 * as exited in both.
 */
/* Whether tid has an entry on either side of the thread map (the key's
 * first field is the tid: bpf/sched/sched.bpf.h struct sched_tid_key),
 * or an array slot there (layout 11: struct sched_slot, its key after
 * the figures; a slot of an older window counts too, as it may). */
static bool
tid_has_entry(const struct taskiter_events *ev, pid_t tid)
{
	struct sched_slot sl;
	uint32_t i, n[2] = { 0, 0 };
	struct {
		uint32_t tid, uid;
		uint64_t start_ns;
	} k, nk;
	int side;

	for (side = 0; side < 2; side++) {
		uint32_t key = (uint32_t)side;

		if (bpf_map_lookup_elem(ev->nslot_fd, &key, &n[side]) < 0)
			n[side] = 0;
		for (i = 0; i < n[side] && i < VITALS_SCHED_SLOTS; i++)
			if (bpf_map_lookup_elem(ev->slot_fd[side], &i, &sl) ==
				0 &&
			    sl.ready != 0 && (pid_t)sl.key.tid == tid)
				return true;
	}
	for (side = 0; side < 2; side++) {
		void *prev = NULL;

		while (bpf_map_get_next_key(ev->tid_fd[side], prev, &nk) == 0) {
			if ((pid_t)nk.tid == tid)
				return true;
			k = nk;
			prev = &k;
		}
	}
	return false;
}

/* Held across a sample's two scans: a child reaped between them would
 * have the first's reading in one and the sample before's in the other. */
static pthread_mutex_t scans_mu = PTHREAD_MUTEX_INITIALIZER;

/* Reaps the child the moment it ends, but not inside a sample's pair of
 * scans: no zombie for a sample to read but one both read alike. */
static void *
reap_main(void *arg)
{
	pid_t *pid = arg;
	siginfo_t si;
	int st;

	if (waitid(P_PID, (id_t)*pid, &si, WEXITED | WNOWAIT) < 0) {
		*pid = -1;
		return NULL;
	}
	pthread_mutex_lock(&scans_mu);
	if (waitpid(*pid, &st, 0) != *pid)
		*pid = -1;
	pthread_mutex_unlock(&scans_mu);
	return NULL;
}

START_TEST(cpu_bound_child)
{
	enum { SAMPLES = 12 };
	struct bpf_sched *bs = bsf_sched_open(bpffs);
	struct taskiter_events ev;
	struct procscan *a, *b;
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int64_t prev = clock_ns(CLOCK_BOOTTIME) - NSEC_PER_SEC;
	struct window *wa = window_new(1, 0), *wb = window_new(1, 0);
	const struct window_task *ra = NULL, *rb = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t mine, other;
	pid_t child = -1, reaped = -1;
	pthread_t reaper;
	bool fifo_ok = false;
	unsigned unmapped = 0; /* samples the child ran with no entry */
	int rc_a, rc_b;
	size_t i;
	int k;

	ck_assert_int_ge(procfd, 0);
	ck_assert_ptr_nonnull(wa);
	ck_assert_ptr_nonnull(wb);
	CPU_ZERO(&mine);
	CPU_ZERO(&other);
	CPU_SET(0, &mine);
	CPU_SET(ncpu > 1 ? 1 : 0, &other);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(mine), &mine), 0);
	bsf_events_of(bs, &ev);
	a = scan_new(procfd, &ev, THREADS_CHANGED);
	b = scan_new(procfd, NULL, THREADS_CHANGED);
	for (k = 0; k < SAMPLES; k++) {
		struct scan_ctx ctx = {
			.valid = true,
			.have_prev = true,
			.prev_boot_ns = prev,
			.full = k == SAMPLES - 1,
			.wall_ns = NSEC_PER_SEC / 10,
			.total_ticks = 20,
			.norm_ticks = 10.0,
		};

		if (k == 1) { /* after the first (full) sample */
			/* born on the other CPU (no migration) and FIFO
			 * there (no CFS task preempts it): no switch-out,
			 * so no thread-map entry, until it ends */
			struct sched_param fifo = { .sched_priority = 1 },
					   norm = { .sched_priority = 0 };

			ck_assert_int_eq(sched_setaffinity(0, sizeof(other),
					     &other),
			    0);
			fifo_ok = sched_setscheduler(0, SCHED_FIFO, &fifo) == 0;
			child = fork();
			ck_assert_int_ge(child, 0);
			if (child == 0) {
				prctl(PR_SET_NAME, "evs_cpubound");
				burn_cpu_ms(700);
				_exit(0);
			}
			/* off the child's CPU while still FIFO: back to
			 * SCHED_OTHER first, the FIFO child would preempt us
			 * there and keep us off every CPU until the balancer
			 * pulled us away, so the child could end and be
			 * reaped before any sample saw it (a CI flake) */
			ck_assert_int_eq(sched_setaffinity(0, sizeof(mine),
					     &mine),
			    0);
			if (fifo_ok)
				ck_assert_int_eq(sched_setscheduler(0,
						     SCHED_OTHER, &norm),
				    0);
			reaped = child;
			ck_assert_int_eq(pthread_create(&reaper, NULL,
					     reap_main, &reaped),
			    0);
		}
		if (k == SAMPLES - 2) {
			ck_assert_int_eq(pthread_join(reaper, NULL), 0);
			ck_assert_int_eq(reaped, child);
		}
		if (k > 1 && k < SAMPLES - 2 && reaped == child &&
		    !tid_has_entry(&ev, child))
			unmapped++;
		prev = clock_ns(CLOCK_BOOTTIME);
		pthread_mutex_lock(&scans_mu);
		rc_a = procscan_run(a, &ctx, wa);
		rc_b = procscan_run(b, &ctx, wb);
		pthread_mutex_unlock(&scans_mu);
		ck_assert_int_eq(rc_a, 0);
		ck_assert_int_eq(rc_b, 0);
		tu_sleep_ms(100);
	}
	ck_assert_int_eq(procscan_flush(a, wa), 0);
	ck_assert_int_eq(procscan_flush(b, wb), 0);
	ck_assert_uint_ge(wa->health.samples_partial, SAMPLES - 4);
	for (i = 0; i < wa->nprocs; i++)
		if (wa->procs[i].tgid == child)
			ra = &wa->procs[i];
	for (i = 0; i < wb->nprocs; i++)
		if (wb->procs[i].tgid == child)
			rb = &wb->procs[i];
	ck_assert_msg(rb != NULL, "the full scan has no row of the child");
	ck_assert_msg(ra != NULL, "the partial scan has no row of the child");
	fprintf(stderr,
	    "cpu-bound child: %llu+%llu ticks full, %llu+%llu "
	    "partial, exited %d/%d%s; samples with no thread-map entry "
	    "for it: %u; partial samples %u, doubts %u\n",
	    (unsigned long long)rb->d_utime, (unsigned long long)rb->d_stime,
	    (unsigned long long)ra->d_utime, (unsigned long long)ra->d_stime,
	    rb->exited, ra->exited, fifo_ok ? "" : " (not FIFO)", unmapped,
	    wa->health.samples_partial, wa->health.partial_doubts);
	ck_assert_uint_ge(rb->d_utime + rb->d_stime, 30);
	/* Without the CPUs' running tasks the partial scan has no row; with
	 * a birth taken for a baseline it lacks the ticks up to its first
	 * partial read (a sample's worth). Its last reading is its zombie's
	 * in both, or, when it ends later, the two reads one after the
	 * other: within a tick. */
	ck_assert_msg(ra->d_utime + ra->d_stime + 1 >=
		    rb->d_utime + rb->d_stime &&
		ra->d_utime + ra->d_stime <= rb->d_utime + rb->d_stime + 1,
	    "ticks %llu partial, %llu full",
	    (unsigned long long)(ra->d_utime + ra->d_stime),
	    (unsigned long long)(rb->d_utime + rb->d_stime));
	ck_assert_int_eq(ra->born, rb->born);
	ck_assert(rb->exited);
	ck_assert(ra->exited);
	window_free(wa);
	window_free(wb);
	procscan_free(a);
	procscan_free(b);
	bpf_sched_free(bs);
	close(procfd);
	CPU_ZERO(&mine);
	for (k = 0; k < ncpu && k < CPU_SETSIZE; k++)
		CPU_SET(k, &mine);
	(void)sched_setaffinity(0, sizeof(mine), &mine);
}
END_TEST

START_TEST(same_windows_changed)
{
	same_windows(THREADS_CHANGED, 3600);
}
END_TEST

START_TEST(same_windows_all)
{
	same_windows(THREADS_ALL, 3600);
}
END_TEST

START_TEST(same_windows_every_close)
{
	same_windows(THREADS_CHANGED, 0);
}
END_TEST

/*
 * An idle population costs a partial read nothing: of 200 processes of 4
 * threads, only the 20 that worked are read, each with its 4 threads.
 */
START_TEST(idle_costs_nothing)
{
	struct bpf_sched *bs = bsf_sched_open(bpffs);
	struct taskiter_events ev;
	struct taskiter *ti;
	enum scanner_why why;
	enum partial_why pwhy;
	const struct taskiter_snap *snap;
	struct taskiter_end end;
	struct bpf_sched_batch batch = { 0 };
	uint64_t gen, doubt;
	unsigned worked = 0, idle_read = 0, full_tasks;
	size_t out0, out_peak = 0;
	int i, perr;
	size_t j;

	bsf_events_of(bs, &ev);
	ck_assert_int_eq(taskiter_open_ev((unsigned)sysconf(_SC_CLK_TCK),
			     "/sys", &ev, &ti, &why, &pwhy, &perr),
	    0);
	ck_assert_msg(pwhy == PARTIAL_WHY_NONE, "partial: %s (%s)",
	    partial_why_name(pwhy), strerror(perr));
	/* a prefix of the output array is mapped, sized to the reads */
	out0 = taskiter_out_bytes(ti);
	ck_assert_uint_gt(out0, 0);
	ck_assert_uint_lt(out0,
	    (size_t)(TASKITER_OUT_MAX + 1) * sizeof(struct taskiter_rec));
	pop_start(200);
	ck_assert_int_eq(taskiter_read(ti, &snap), 0);
	full_tasks = (unsigned)snap->nthreads;
	/* a window begins: what ran before it is on the other side; on a
	 * loaded machine the last threads may still be starting: until a
	 * window of 300 ms has none of ours */
	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(bpf_sched_flip(bs), 0);
		/* the old side drained, as the daemon does: empty when it
		 * is the live one again */
		ck_assert_int_eq(bpf_sched_collect(bs, &batch), 0);
		tu_sleep_ms(300);
		ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
		ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1),
				     0, &snap, &end),
		    0);
		/* the mapping holds what the read wrote */
		ck_assert_uint_ge(taskiter_out_bytes(ti),
		    (end.nrecs + 1) * sizeof(struct taskiter_rec));
		for (j = 0; j < snap->nprocs; j++)
			if (in_pop(snap->procs[j].tgid))
				break;
		if (j == snap->nprocs)
			break;
	}
	ck_assert_int_eq(bpf_sched_flip(bs), 0);
	ck_assert_int_eq(bpf_sched_collect(bs, &batch), 0);
	ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
	for (i = 0; i < npop; i++)
		if (i % 10 == 3) {
			send_cmd(&pop[i], 'w');
			worked++;
		}
	wait_acks((int)worked);
	tu_sleep_ms(50);
	ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1), 0,
			     &snap, &end),
	    0);
	ck_assert_uint_eq(end.gen, gen);
	for (j = 0; j < snap->nprocs; j++) {
		const struct iter_task *p = &snap->procs[j];
		int m;

		for (m = 0; m < npop; m++)
			if (pop[m].pid == p->tgid)
				break;
		if (m == npop)
			continue;
		if (m % 10 != 3) {
			idle_read++;
			continue;
		}
		/* whole: the leader and its three threads */
		ck_assert(p->leader);
		ck_assert_uint_eq(p->nthreads, 4);
	}
	/* each worker's group once, no idle one (but a stray wakeup) */
	for (i = 0; i < npop; i++) {
		bool seen = false;

		if (i % 10 != 3)
			continue;
		for (j = 0; j < snap->nprocs; j++)
			if (snap->procs[j].tgid == pop[i].pid) {
				ck_assert(!seen);
				seen = true;
			}
		ck_assert_msg(seen, "worker %d not read", pop[i].pid);
	}
	ck_assert_uint_le(idle_read, 2);
	fprintf(stderr,
	    "idle: full walk %u tasks; partial %u records (%u groups, "
	    "%u of ours worked)\n",
	    full_tasks, end.nrecs, (unsigned)snap->nprocs, worked);
	ck_assert_uint_lt(end.nrecs, full_tasks / 2);
	/* every member works: a read of all their groups maps more of the
	 * output array (Health.memory's taskiter_out_bytes moves with it),
	 * and an idle read after it cuts the mapping back */
	ck_assert_int_eq(bpf_sched_flip(bs), 0);
	ck_assert_int_eq(bpf_sched_collect(bs, &batch), 0);
	ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
	for (i = 0; i < npop; i++)
		send_cmd(&pop[i], 'w');
	wait_acks(npop);
	tu_sleep_ms(50);
	ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1), 0,
			     &snap, &end),
	    0);
	out_peak = taskiter_out_bytes(ti);
	ck_assert_uint_ge(end.nrecs, (unsigned)npop);
	ck_assert_uint_ge(out_peak,
	    (end.nrecs + 1) * sizeof(struct taskiter_rec));
	ck_assert_uint_gt(out_peak, out0);
	ck_assert_int_eq(bpf_sched_flip(bs), 0);
	ck_assert_int_eq(bpf_sched_collect(bs, &batch), 0);
	tu_sleep_ms(300);
	ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
	ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1), 0,
			     &snap, &end),
	    0);
	fprintf(stderr,
	    "taskiter_out mapped: %zu at open, %zu for %u records, %zu for "
	    "%u\n",
	    out0, out_peak, (unsigned)npop * 4, taskiter_out_bytes(ti),
	    end.nrecs);
	if (4 * (end.nrecs + 1) * sizeof(struct taskiter_rec) < out_peak)
		ck_assert_uint_lt(taskiter_out_bytes(ti), out_peak);
	pop_stop();
	taskiter_free(ti);
	bpf_sched_batch_release(&batch);
	bpf_sched_free(bs);
}
END_TEST

/* A window whose health has partial samples (vitals --json health). */
static bool
has_partial(const struct run *r)
{
	const char *p = strstr(r->out, "\"samples_partial\":");

	return td_has_window(r) && p != NULL && atoi(p + 18) > 0;
}

/* A window closed without a full walk: partial samples only (the
 * daemon's flip before the close, full_walk_s 60 by default). */
static bool
closed_without_walk(const struct run *r)
{
	return has_partial(r) && strstr(r->out, "\"samples_full\":0,") != NULL;
}

/*
 * The daemon with its sched accounting takes partial samples and says so
 * in its health, text and JSON, and closes windows without a full walk
 * (the flip hook: doc/bpf.md, "Full walks"); with scanner = procfs it
 * says why not.
 */
START_TEST(daemon_says_partial)
{
	static const char *const health[] = { "--json", "health", NULL };
	static const char *const text[] = { "health", NULL };
	const char *args[] = { "--interval-ms", "200", "--window-s", "2",
		"--bpffs", bpffs, NULL, NULL, NULL };
	struct run r;
	struct td d;

	td_start(&d, "evscan", NULL, args);
	td_wait(&d, 15000, health, has_partial);
	r = td_vitals(&d, -1, health);
	ck_assert_msg(strstr(r.out, "\"partial_why\":\"none\"") != NULL, "%s",
	    r.out);
	ck_assert_msg(strstr(r.out, "\"partial_gone_unknown\":") != NULL, "%s",
	    r.out);
	run_free(&r);
	td_wait(&d, 15000, health, closed_without_walk);
	r = td_vitals(&d, -1, text);
	ck_assert_msg(strstr(r.out, "partial on") != NULL &&
		strstr(r.out, "gone never seen") != NULL,
	    "%s", r.out);
	run_free(&r);
	td_stop(&d);

	args[6] = "--scanner";
	args[7] = "procfs";
	td_start(&d, "evscan", NULL, args);
	td_wait(&d, 15000, health, td_has_window);
	r = td_vitals(&d, -1, health);
	ck_assert_msg(strstr(r.out, "\"samples_partial\":0") != NULL &&
		strstr(r.out, "\"partial_why\":\"scanner\"") != NULL,
	    "%s", r.out);
	run_free(&r);
	td_stop(&d);
}
END_TEST

static Suite *
evscan_suite(void)
{
	Suite *s = suite_create("evscan");
	TCase *tc = tcase_create("kernel");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, same_windows_changed);
	tcase_add_test(tc, same_windows_all);
	tcase_add_test(tc, same_windows_every_close);
	tcase_add_test(tc, idle_costs_nothing);
	tcase_add_test(tc, cpu_bound_child);
	tcase_add_test(tc, daemon_says_partial);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("bpffs and BPF loading"))
		return 77;
	if (bpf_check_bpffs("/sys/fs/bpf") < 0)
		(void)mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
	return tu_run(evscan_suite());
}
