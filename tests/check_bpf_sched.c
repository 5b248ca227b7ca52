/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched_switch accounting against the running kernel: the programs
 * load, attach and pin under the expected names; a second loader (a
 * restart) reuses them and the counters go on; pins of another layout are
 * replaced; a child's CPU time agrees between BPF, /proc and the child's
 * own getrusage; the drain protocol neither loses nor double-counts under
 * thousands of short-lived threads; and every way BPF can be unavailable
 * ends in procfs-only operation with the reason named, in the library and
 * in the real daemon's log and store (check_bpf_sched_off.c has the
 * ways other than the verifier's, and the daemon).
 *
 * Needs root (CAP_BPF, CAP_PERFMON, bpffs): exits 77 only when not root.
 * Every test pins under its own directory below /sys/fs/bpf and removes it.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "taskstat.h"
#include "bpf_sched_fix.h"
#include "testutil.h"
#include "vitalsd.h"

#ifdef HAVE_BPF
#include <linux/capability.h>

#include <bpf/bpf.h>

#include "../bpf/sched/sched.bpf.h"
#endif

#ifdef HAVE_BPF

static const char *const map_pins[] = {
	"sched_ctl",
	"sched_meta",
	"sched_barrier",
	"sched_task",
	"sched_tot",
	"sched_tid0",
	"sched_tid1",
	"sched_proc0",
	"sched_proc1",
	"sched_uid0",
	"sched_uid1",
	"sched_slot0",
	"sched_slot1",
	"sched_nslot",
};
static const char *const prog_pins[] = {
	"tp_btf_sched_switch",
	"tp_btf_sched_wakeup",
	"tp_btf_sched_wakeup_new",
	"tp_btf_sched_process_free",
};

static int
pinned_fd(const char *kind, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s_vitals_%s", bsf_bpffs, kind, name);
	return bpf_obj_get(path);
}

static struct bpf_map_info
map_info(int fd)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	ck_assert_int_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	return info;
}

/* A few hundred context switches, whatever the machine does. */
static void
switch_some(void)
{
	unsigned i;

	for (i = 0; i < 200; i++)
		usleep(100);
}

static uint64_t
oncpu_total(const uint64_t *tot)
{
	return tot[TOT_ONCPU_S0] + tot[TOT_ONCPU_S1];
}

/* -------------------------------------------------------- load, pin */

START_TEST(test_load_attach_pin)
{
	struct bpf_sched_opts o = bsf_opts();
	struct vbpf_prog_stat ps[VITALS_BPF_PROGS];
	uint64_t t0[VITALS_BPF_TOT], t1[VITALS_BPF_TOT];
	struct bpf_sched *bs;
	struct stat sb;
	unsigned i;

	/* the directory does not exist yet: the loader makes it */
	ck_assert_int_eq(lstat(bsf_bpffs, &sb), -1);
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	ck_assert_int_eq(bpf_check_bpffs(bsf_bpffs), 0);
	for (i = 0; i < sizeof(map_pins) / sizeof(map_pins[0]); i++)
		ck_assert_msg(bsf_exists("map", map_pins[i]), "map_vitals_%s",
		    map_pins[i]);
	for (i = 0; i < sizeof(prog_pins) / sizeof(prog_pins[0]); i++) {
		ck_assert_msg(bsf_exists("prog", prog_pins[i]),
		    "prog_vitals_%s", prog_pins[i]);
		ck_assert_msg(bsf_exists("link", prog_pins[i]),
		    "link_vitals_%s", prog_pins[i]);
	}
	ck_assert_int_eq(bpf_sched_prog_stats(bs, ps), 0);
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		ck_assert_uint_gt(ps[i].id, 0);

	/* attached: the kernel counts while we sleep */
	ck_assert_int_eq(bpf_sched_totals(bs, t0), 0);
	switch_some();
	ck_assert_int_eq(bpf_sched_totals(bs, t1), 0);
	ck_assert_uint_gt(t1[TOT_SWITCHES], t0[TOT_SWITCHES]);
	ck_assert_uint_gt(t1[TOT_WAKEUPS], t0[TOT_WAKEUPS]);
	ck_assert_uint_gt(oncpu_total(t1), oncpu_total(t0));
	bpf_sched_free(bs);

	/* closing the loader does not detach: the pins hold the links */
	bs = bsf_open_expect(&o, VBPF_ON_REUSED, NULL, 0);
	bpf_sched_free(bs);
	ck_assert_int_eq(bpf_sched_unpin(bsf_bpffs), 0);
	for (i = 0; i < sizeof(map_pins) / sizeof(map_pins[0]); i++)
		ck_assert(!bsf_exists("map", map_pins[i]));
}
END_TEST

/* A restart: the second loader reuses everything and counting goes on. */
START_TEST(test_restart_reuses)
{
	struct bpf_sched_opts o = bsf_opts();
	struct vbpf_prog_stat a[VITALS_BPF_PROGS], b[VITALS_BPF_PROGS];
	uint64_t t1[VITALS_BPF_TOT], t2[VITALS_BPF_TOT], t3[VITALS_BPF_TOT];
	struct window_bpf wb;
	struct bpf_sched *bs;
	char why[512];
	unsigned i;

	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	switch_some();
	memset(&wb, 0, sizeof(wb));
	ck_assert_int_eq(bpf_sched_window(bs, &wb, 100), 0);
	ck_assert_uint_gt(wb.oncpu_ns, 0);
	ck_assert_uint_gt(wb.nuids, 0);
	ck_assert_int_eq(bpf_sched_prog_stats(bs, a), 0);
	ck_assert_int_eq(bpf_sched_totals(bs, t1), 0);
	bpf_sched_free(bs);

	switch_some(); /* the daemon is "down": the kernel goes on */
	bs = bsf_open_expect(&o, VBPF_ON_REUSED, why, sizeof(why));
	ck_assert_ptr_nonnull(strstr(why, "reused"));
	ck_assert_int_eq(bpf_sched_prog_stats(bs, b), 0);
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		ck_assert_uint_eq(a[i].id, b[i].id); /* not reloaded */
	ck_assert_int_eq(bpf_sched_totals(bs, t2), 0);
	ck_assert_uint_gt(t2[TOT_SWITCHES], t1[TOT_SWITCHES]);
	ck_assert_uint_gt(oncpu_total(t2), oncpu_total(t1));
	/* what ran while it was down is reported, not put in a window */
	memset(&wb, 0, sizeof(wb));
	ck_assert_int_eq(bpf_sched_window(bs, &wb, 100), 0);
	ck_assert_uint_gt(wb.pre_ns, 0);
	switch_some();
	ck_assert_int_eq(bpf_sched_totals(bs, t3), 0);
	ck_assert_uint_gt(oncpu_total(t3), oncpu_total(t2));
	bpf_sched_free(bs);

	/* other programs (a new build, other settings): maps are kept */
	o.rq = false;
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, why, sizeof(why));
	ck_assert_msg(strstr(why, "maps kept") != NULL, "%s", why);
	ck_assert_int_eq(bpf_sched_prog_stats(bs, b), 0);
	ck_assert_uint_ne(a[0].id, b[0].id);
	ck_assert_int_eq(bpf_sched_totals(bs, t2), 0);
	ck_assert_uint_ge(oncpu_total(t2), oncpu_total(t3));
	bpf_sched_free(bs);
}
END_TEST

/* A map of another shape at a pin path is replaced, never read. */
START_TEST(test_layout_mismatch_replaced)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_map_info info;
	struct sched_meta meta;
	struct bpf_sched *bs;
	uint32_t zero = 0, old_id;
	char path[PATH_MAX], why[512];
	int fd;

	ck_assert_int_eq(mkdir(bsf_bpffs, 0750), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "sched_uid0", 4, 8, 16,
	    NULL);
	ck_assert_int_ge(fd, 0);
	snprintf(path, sizeof(path), "%s/map_vitals_sched_uid0", bsf_bpffs);
	ck_assert_int_eq(bpf_obj_pin(fd, path), 0);
	close(fd);

	bs = bsf_open_expect(&o, VBPF_ON_LOADED, why, sizeof(why));
	ck_assert_msg(strstr(why, "replaced") != NULL, "%s", why);
	fd = pinned_fd("map", "sched_uid0");
	ck_assert_int_ge(fd, 0);
	info = map_info(fd);
	ck_assert_uint_eq(info.value_size, sizeof(struct sched_uid));
	close(fd);
	bpf_sched_free(bs);

	/* right shapes, another layout number: replaced as well */
	fd = pinned_fd("map", "sched_meta");
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bpf_map_lookup_elem(fd, &zero, &meta), 0);
	meta.layout = VITALS_SCHED_LAYOUT + 1;
	ck_assert_int_eq(bpf_map_update_elem(fd, &zero, &meta, BPF_ANY), 0);
	old_id = map_info(fd).id;
	close(fd);
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, why, sizeof(why));
	ck_assert_msg(strstr(why, "layout") != NULL, "%s", why);
	fd = pinned_fd("map", "sched_meta");
	ck_assert_uint_ne(map_info(fd).id, old_id);
	ck_assert_int_eq(bpf_map_lookup_elem(fd, &zero, &meta), 0);
	ck_assert_uint_eq(meta.layout, VITALS_SCHED_LAYOUT);
	close(fd);
	bpf_sched_free(bs);

	/* a partial set (a map pin removed by hand): replaced */
	snprintf(path, sizeof(path), "%s/map_vitals_sched_tid1", bsf_bpffs);
	ck_assert_int_eq(unlink(path), 0);
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, why, sizeof(why));
	ck_assert_msg(strstr(why, "missing") != NULL, "%s", why);
	ck_assert(bsf_exists("map", "sched_tid1"));
	bpf_sched_free(bs);
}
END_TEST

START_TEST(test_second_drainer_refused)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched *a, *b;

	a = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	b = bsf_open_expect(&o, VBPF_OFF_BUSY, NULL, 0);
	(void)b;
	bpf_sched_free(a);
	a = bsf_open_expect(&o, VBPF_ON_REUSED, NULL, 0);
	bpf_sched_free(a);
}
END_TEST

START_TEST(test_pinned_only)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched *bs;
	struct window_bpf wb;

	o.load = VBPF_LOAD_PINNED_ONLY;
	ck_assert_int_eq(mkdir(bsf_bpffs, 0750), 0);
	bsf_open_expect(&o, VBPF_OFF_NO_PINS, NULL, 0);
	o.load = VBPF_LOAD_AUTO; /* the "platform loader" */
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	bpf_sched_free(bs);
	o.load = VBPF_LOAD_PINNED_ONLY;
	bs = bsf_open_expect(&o, VBPF_ON_PINNED, NULL, 0);
	switch_some();
	memset(&wb, 0, sizeof(wb));
	ck_assert_int_eq(bpf_sched_window(bs, &wb, 100), 0);
	ck_assert_uint_gt(wb.oncpu_ns, 0);
	bpf_sched_free(bs);
}
END_TEST

/* --------------------------------------------------- a child burning */

/* The child's thread: its tid is its own while it lives; the identity
 * BPF keys it by must be the one /proc gives (starttime, in ticks). */
static uint64_t
tid_ns(const struct bpf_sched_batch *b, pid_t tid, uint64_t start_ticks)
{
	unsigned hz = (unsigned)sysconf(_SC_CLK_TCK);
	uint64_t ns = 0;
	size_t i;

	for (i = 0; i < b->ntids; i++) {
		if (b->tids[i].tid != tid)
			continue;
		ck_assert_uint_eq(ns_to_clock_t(b->tids[i].start_ns, hz),
		    start_ticks);
		ns += b->tids[i].oncpu_ns;
	}
	return ns;
}

/* The process's on-CPU time as a window reports it (window_bpf_add). */
static uint64_t
proc_ns(const struct bpf_sched_batch *b, pid_t tgid)
{
	struct window_bpf *wb = calloc(1, sizeof(*wb));
	uint64_t ns = 0;
	unsigned i;

	ck_assert_ptr_nonnull(wb);
	ck_assert_int_eq(window_bpf_add(wb, b, (unsigned)sysconf(_SC_CLK_TCK)),
	    0);
	for (i = 0; i < wb->nprocs; i++)
		if (wb->proc[i].tgid == tgid)
			ns += wb->proc[i].oncpu_ns;
	free(wb);
	return ns;
}

static void *
start_thread(void *arg)
{
	int fd = *(int *)arg;
	char c;

	tu_burn_ms(5);
	(void)!read(fd, &c, 1); /* alive until the test has read /proc */
	return NULL;
}

/*
 * ns_to_clock_t() of the start the kernel keys an entry by is the
 * starttime /proc shows (field 22), for every live thread and every
 * thread's group leader the drain met: one conversion, the kernel's.
 * Eight threads of ours, born over a few ticks, make sure there are some.
 */
START_TEST(test_starttime_is_procs)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	unsigned hz = (unsigned)sysconf(_SC_CLK_TCK);
	unsigned same = 0, leaders = 0, k;
	struct bpf_sched *bs;
	pthread_t th[8];
	int p[2];
	size_t i;

	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	ck_assert_int_eq(pipe(p), 0);
	for (k = 0; k < 8; k++) {
		ck_assert_int_eq(pthread_create(&th[k], NULL, start_thread,
				     &p[0]),
		    0);
		tu_sleep_ms(7);
	}
	switch_some();
	tu_sleep_ms(100); /* kernel threads and daemons switch too */
	ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
	for (i = 0; i < b.ntids; i++) {
		const struct vbpf_tid *t = &b.tids[i];
		uint64_t ticks, start, lstart;
		char state;

		if (ts_read_stat(t->tid, &state, &ticks, &start) < 0)
			continue; /* gone since */
		/* a tid reused in between is another task: its start is
		 * later than the entry's by a tick at least */
		if (start > ns_to_clock_t(t->start_ns, hz) + 1)
			continue;
		ck_assert_msg(ns_to_clock_t(t->start_ns, hz) == start,
		    "tid %d: %llu ns -> %llu ticks, /proc %llu", t->tid,
		    (unsigned long long)t->start_ns,
		    (unsigned long long)ns_to_clock_t(t->start_ns, hz),
		    (unsigned long long)start);
		same++;
		if (ts_read_stat(t->tgid, &state, &ticks, &lstart) == 0 &&
		    lstart <= ns_to_clock_t(t->leader_ns, hz) + 1) {
			ck_assert_uint_eq(ns_to_clock_t(t->leader_ns, hz),
			    lstart);
			leaders++;
		}
	}
	fprintf(stderr, "starttime: %u threads, %u leaders as /proc says\n",
	    same, leaders);
	ck_assert_uint_ge(same, 8);
	ck_assert_uint_ge(leaders, 8);
	ck_assert_int_eq(write(p[1], "xxxxxxxx", 8), 8);
	for (k = 0; k < 8; k++)
		pthread_join(th[k], NULL);
	close(p[0]);
	close(p[1]);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

START_TEST(test_child_cpu_agrees)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	uint64_t bpf_ns = 0, bpf_proc_ns = 0, ticks = 0, start = 0, rusage_us;
	long hz = sysconf(_SC_CLK_TCK);
	int rep[2], go[2], status;
	struct bpf_sched *bs;
	char state = '?';
	unsigned i;
	pid_t pid;

	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	ck_assert_int_eq(pipe(rep), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct timespec ts;
		struct rusage ru;
		uint64_t us;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setpriority(PRIO_PROCESS, 0, -15); /* root: less waiting */
		do {
			for (volatile unsigned k = 0; k < 100000; k++)
				;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		} while (ts.tv_sec < 3);
		getrusage(RUSAGE_SELF, &ru);
		us = (uint64_t)ru.ru_utime.tv_sec * 1000000 +
		    (uint64_t)ru.ru_utime.tv_usec +
		    (uint64_t)ru.ru_stime.tv_sec * 1000000 +
		    (uint64_t)ru.ru_stime.tv_usec;
		if (write(rep[1], &us, sizeof(us)) != sizeof(us))
			_exit(1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(rep[1]);
	close(go[0]);
	ck_assert_int_eq(ts_read_stat(pid, &state, &ticks, &start), 0);

	/* drain while it burns, as the daemon does at window closes */
	for (;;) {
		struct timespec to = { 0, 300 * NSEC_PER_MSEC };
		fd_set rfds;

		FD_ZERO(&rfds);
		FD_SET(rep[0], &rfds);
		if (pselect(rep[0] + 1, &rfds, NULL, NULL, &to, NULL) > 0)
			break;
		ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
		bpf_ns += tid_ns(&b, pid, start);
		bpf_proc_ns += proc_ns(&b, pid);
	}
	ck_assert_int_eq(read(rep[0], &rusage_us, sizeof(rusage_us)),
	    sizeof(rusage_us));
	/* its last slice ends when it blocks: wait for that */
	for (i = 0; i < 500; i++) {
		ck_assert_int_eq(ts_read_stat(pid, &state, &ticks, &start), 0);
		if (state == 'S')
			break;
		tu_sleep_ms(2);
	}
	ck_assert_int_eq(state, 'S');
	for (i = 0; i < 2; i++) { /* both sides */
		ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
		bpf_ns += tid_ns(&b, pid, start);
		bpf_proc_ns += proc_ns(&b, pid);
	}
	(void)!write(go[1], "x", 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	fprintf(stderr,
	    "child cpu: bpf %.4f s (process %.4f s), getrusage "
	    "%.4f s, /proc %.2f s\n",
	    bpf_ns / 1e9, bpf_proc_ns / 1e9, rusage_us / 1e6,
	    (double)ticks / (double)hz);
	ck_assert_uint_ge(rusage_us, 3000000);
	ck_assert_msg(ts_rel_diff(bpf_ns / 1e9, rusage_us / 1e6) < 0.05,
	    "bpf %.4f s vs getrusage %.4f s", bpf_ns / 1e9, rusage_us / 1e6);
	ck_assert_msg(ts_rel_diff(bpf_ns / 1e9, (double)ticks / (double)hz) <
		0.05,
	    "bpf %.4f s vs /proc %.2f s", bpf_ns / 1e9,
	    (double)ticks / (double)hz);
	/* one thread: the process entry holds the same time */
	ck_assert_msg(ts_rel_diff(bpf_proc_ns, bpf_ns) < 0.001,
	    "process %llu ns, thread %llu ns", (unsigned long long)bpf_proc_ns,
	    (unsigned long long)bpf_ns);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/* ------------------------------------------------------ drain protocol */

static void *
short_thread(void *arg)
{
	volatile unsigned k;

	(void)arg;
	for (k = 0; k < 20000; k++)
		;
	return NULL;
}

/* Thousands of threads (and some processes) that live a few µs each. */
static void churn(unsigned seconds, int wfd) __attribute__((noreturn));

static void
churn(unsigned seconds, int wfd)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) + seconds * NSEC_PER_SEC;
	uint64_t threads = 0, procs = 0;
	pthread_t t[8];
	unsigned i, round = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (clock_ns(CLOCK_MONOTONIC) < end) {
		for (i = 0; i < 8; i++)
			if (pthread_create(&t[i], NULL, short_thread, NULL) ==
			    0)
				threads++;
			else
				t[i] = 0;
		for (i = 0; i < 8; i++)
			if (t[i])
				pthread_join(t[i], NULL);
		if (++round % 16 == 0) {
			pid_t p = fork();

			if (p == 0)
				_exit(0);
			if (p > 0) {
				waitpid(p, NULL, 0);
				procs++;
			}
		}
	}
	(void)!write(wfd, &threads, sizeof(threads));
	(void)!write(wfd, &procs, sizeof(procs));
	_exit(0);
}

struct side_sums {
	uint64_t base_oncpu, base_lost; /* when the test began */
	uint64_t drained;		/* since then */
};

static void
check_side(struct side_sums *s, const struct bpf_sched_batch *b,
    uint64_t *exited_tasks)
{
	unsigned side = b->side;
	uint64_t oncpu = b->tot[side ? TOT_ONCPU_S1 : TOT_ONCPU_S0];
	uint64_t lost = b->tot[side ? TOT_LOST_S1 : TOT_LOST_S0];
	struct window_bpf *wb = calloc(1, sizeof(*wb));
	uint64_t sum = 0, kept = 0;
	size_t i;

	ck_assert(!b->incomplete);
	for (i = 0; i < b->nuids; i++) {
		sum += b->uids[i].exited_ns + b->uids[i].overflow_ns;
		*exited_tasks += b->uids[i].exited_tasks;
	}
	for (i = 0; i < b->ntids; i++)
		sum += b->tids[i].oncpu_ns;
	s->drained += sum;
	/* exact: every ns the kernel counted for this side, read once */
	ck_assert_msg(s->drained + (lost - s->base_lost) ==
		oncpu - s->base_oncpu,
	    "side %u: drained %llu + lost %llu, "
	    "kernel %llu",
	    side, (unsigned long long)s->drained,
	    (unsigned long long)(lost - s->base_lost),
	    (unsigned long long)(oncpu - s->base_oncpu));
	/*
	 * Every live thread's waits are in its process's figures (layout
	 * 9: the kernel keeps them in the thread entry alone, the drain
	 * adds them to the process): per process, its threads' waits are at
	 * most its own (which add its exited threads' and RQ_NOTID's).
	 */
	for (i = 0; i < b->nprocs; i++) {
		const struct vbpf_proc *p = &b->procs[i];
		uint64_t n = 0, ns = 0;
		size_t k;

		for (k = 0; k < b->ntids; k++)
			if (b->tids[k].tgid == p->tgid &&
			    b->tids[k].leader_ns == p->start_ns) {
				n += b->tids[k].rq_count;
				ns += b->tids[k].rq_ns;
			}
		ck_assert_uint_le(n, p->rq_count);
		ck_assert_uint_le(ns, p->rq_ns);
	}
	for (i = 0; i < b->ntids; i++) {
		size_t k;

		if (b->tids[i].rq_count == 0)
			continue;
		for (k = 0; k < b->nprocs; k++)
			if (b->procs[k].tgid == b->tids[i].tgid &&
			    b->procs[k].start_ns == b->tids[i].leader_ns)
				break;
		ck_assert_msg(k < b->nprocs, "tid %d waited, no process row",
		    (int)b->tids[i].tid);
	}
	/* and the window's per-uid view holds all of it */
	ck_assert_ptr_nonnull(wb);
	ck_assert_int_eq(window_bpf_add(wb, b, 100), 0);
	ck_assert_uint_eq(wb->oncpu_ns, sum);
	for (i = 0; i < wb->nuids; i++)
		kept += wb->uid[i].oncpu_ns;
	ck_assert_uint_eq(kept + wb->uid_other.oncpu_ns, sum);
	free(wb);
}

/*
 * One drain: _i 0 on this thread; _i 1 as the daemon does it, the flip
 * here and the grace period and reads on the drain's thread. Its batch;
 * loop_ns and thread_ns add the time each side spent.
 */
static const struct bpf_sched_batch *
drain_one(struct bpf_sched *bs, struct bpf_sched_batch *b,
    struct bpf_sched_async *a, uint64_t *loop_ns, uint64_t *thread_ns)
{
	const struct bpf_sched_batch *got;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int r = -1;

	if (a == NULL) {
		ck_assert_int_eq(bpf_sched_drain(bs, b), 0);
		return b;
	}
	ck_assert_int_eq(bpf_sched_async_start(a), 0);
	*loop_ns += (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
	/* one job at a time */
	ck_assert_int_eq(bpf_sched_async_start(a), -EBUSY);
	ck_assert_int_eq(bpf_sched_async_done(a, true, &r), 1);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(bpf_sched_async_done(a, false, &r), -EALREADY);
	got = bpf_sched_last_batch(bs);
	*thread_ns += got->drain_ns;
	return got;
}

START_TEST(test_drain_exact_under_churn)
{
	struct bpf_sched_async *a = NULL;
	const struct bpf_sched_batch *pb;
	uint64_t loop_ns = 0, thread_ns = 0;
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct side_sums side[2] = { { 0 } };
	uint64_t exited = 0, threads = 0, procs = 0, tot0[VITALS_BPF_TOT];
	uint64_t tot1[VITALS_BPF_TOT], drained_total = 0;
	unsigned i, drains = 0;
	struct bpf_sched *bs;
	int p[2], status;
	pid_t pid;

	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	if (_i == 1)
		ck_assert_int_eq(bpf_sched_async_new(bs, &a), 0);
	/* a base per side, taken when that side is quiescent */
	for (i = 0; i < 2; i++) {
		pb = drain_one(bs, &b, a, &loop_ns, &thread_ns);
		side[pb->side].base_oncpu =
		    pb->tot[pb->side ? TOT_ONCPU_S1 : TOT_ONCPU_S0];
		side[pb->side].base_lost =
		    pb->tot[pb->side ? TOT_LOST_S1 : TOT_LOST_S0];
	}
	memcpy(tot0, pb->tot, sizeof(tot0));
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		churn(4, p[1]);
	close(p[1]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		tu_sleep_ms(50);
		pb = drain_one(bs, &b, a, &loop_ns, &thread_ns);
		check_side(&side[pb->side], pb, &exited);
		drains++;
	}
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(read(p[0], &threads, sizeof(threads)),
	    sizeof(threads));
	ck_assert_int_eq(read(p[0], &procs, sizeof(procs)), sizeof(procs));
	close(p[0]);
	for (i = 0; i < 2; i++) {
		pb = drain_one(bs, &b, a, &loop_ns, &thread_ns);
		check_side(&side[pb->side], pb, &exited);
	}
	memcpy(tot1, pb->tot, sizeof(tot1));
	drained_total = side[0].drained + side[1].drained;
	fprintf(stderr,
	    "churn: %llu threads, %llu processes, %u drains, "
	    "%llu threads folded at exit, %.3f s on-CPU drained, "
	    "map full %llu/%llu/%llu\n",
	    (unsigned long long)threads, (unsigned long long)procs, drains,
	    (unsigned long long)exited, drained_total / 1e9,
	    (unsigned long long)(tot1[TOT_TID_FULL] - tot0[TOT_TID_FULL]),
	    (unsigned long long)(tot1[TOT_PROC_FULL] - tot0[TOT_PROC_FULL]),
	    (unsigned long long)(tot1[TOT_UID_FULL] - tot0[TOT_UID_FULL]));
	ck_assert_uint_ge(drains, 20);
	ck_assert_uint_ge(threads, 1000);
	/* most threads exited inside the side they ran in: folded there */
	ck_assert_uint_ge(exited, threads / 2);
	ck_assert_uint_ge(tot1[TOT_EXITED] - tot0[TOT_EXITED], threads / 2);
	ck_assert_uint_ge(tot1[TOT_PROC_EXITED] - tot0[TOT_PROC_EXITED],
	    procs / 2);
	if (a) {
		/* the loop's share is the flip; the grace period is the
		 * thread's */
		fprintf(stderr,
		    "drain off the loop: %.3f ms per drain on the loop, "
		    "%.3f ms on the drain's thread\n",
		    loop_ns / 1e6 / (drains + 4),
		    thread_ns / 1e6 / (drains + 4));
		ck_assert_uint_lt(loop_ns, thread_ns);
		a = bpf_sched_async_free(a);
	}
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/*
 * The reduce on the drain's thread (bpf_sched_async_reduce_into): the part
 * it was given holds the drain the loop would have reduced (one drain, its
 * entries, the switches counted), the loop's reduce is not needed; a job
 * without a part leaves it alone; the part is not changed while a job is
 * out.
 */
START_TEST(test_async_reduces)
{
	struct bpf_sched_opts o = bsf_opts();
	const struct bpf_sched_batch *pb;
	struct bpf_sched_async *a = NULL;
	struct window_bpf *wb = calloc(1, sizeof(*wb));
	struct bpf_sched *bs;
	uint64_t entries;
	int r = -1;

	ck_assert_ptr_nonnull(wb);
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	ck_assert_int_eq(bpf_sched_async_new(bs, &a), 0);
	tu_burn_ms(30);
	tu_sleep_ms(20);
	ck_assert_int_eq(bpf_sched_async_reduce_into(a, wb, 100), 0);
	ck_assert_int_eq(bpf_sched_async_start(a), 0);
	ck_assert_int_eq(bpf_sched_async_reduce_into(a, NULL, 0), -EBUSY);
	ck_assert_int_eq(bpf_sched_async_done(a, true, &r), 1);
	ck_assert_int_eq(r, 0);
	pb = bpf_sched_last_batch(bs);
	entries = pb->ntids + pb->nprocs + pb->nuids;
	ck_assert_uint_eq(wb->drains, 1);
	ck_assert_uint_gt(entries, 0);
	ck_assert_uint_eq(wb->entries, entries);
	ck_assert_uint_gt(wb->switches, 0);
	/* a job without a part: the loop reduces, the part is untouched */
	ck_assert_int_eq(bpf_sched_async_reduce_into(a, NULL, 0), 0);
	ck_assert_int_eq(bpf_sched_async_start(a), 0);
	ck_assert_int_eq(bpf_sched_async_done(a, true, &r), 1);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(wb->drains, 1);
	ck_assert_uint_eq(wb->entries, entries);
	a = bpf_sched_async_free(a);
	window_bpf_release(wb);
	free(wb);
	bpf_sched_free(bs);
}
END_TEST

/* What test_async_after's hook saw, on which thread. */
struct after_seen {
	unsigned calls;
	pid_t tid;
	struct window_bpf *wb;
	unsigned hz;
	uint64_t drains, ntids; /* the part's drains, the batch's rows */
};

static void
after_record(void *arg, struct bpf_sched *bs, struct window_bpf *wb,
    unsigned hz)
{
	struct after_seen *s = arg;

	s->calls++;
	s->tid = gettid();
	s->wb = wb;
	s->hz = hz;
	s->drains = wb->drains;
	s->ntids = bpf_sched_last_batch(bs)->ntids;
	/* as the daemon's: the batch's rows freed on the drain's thread */
	bpf_sched_batch_trim(bs);
}

/*
 * The after-hook (bpf_sched_async_after): it runs on the drain's thread,
 * once per job that reduces into a part, after the reduce (the part holds
 * the drain, the batch its rows) and before the loop hears of the end
 * (what it did is there when bpf_sched_async_done returns); a job without
 * a part does not run it; it cannot change while a job is out.
 */
START_TEST(test_async_after)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_async *a = NULL;
	struct window_bpf *wb = calloc(1, sizeof(*wb));
	struct after_seen seen = { 0 };
	struct bpf_sched *bs;
	int r = -1;

	ck_assert_ptr_nonnull(wb);
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	ck_assert_int_eq(bpf_sched_async_new(bs, &a), 0);
	ck_assert_int_eq(bpf_sched_async_after(a, after_record, &seen), 0);
	tu_burn_ms(30);
	tu_sleep_ms(20);
	ck_assert_int_eq(bpf_sched_async_reduce_into(a, wb, 100), 0);
	ck_assert_int_eq(bpf_sched_async_start(a), 0);
	ck_assert_int_eq(bpf_sched_async_after(a, NULL, NULL), -EBUSY);
	ck_assert_int_eq(bpf_sched_async_done(a, true, &r), 1);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(seen.calls, 1);
	ck_assert_int_ne(seen.tid, gettid());
	ck_assert_ptr_eq(seen.wb, wb);
	ck_assert_uint_eq(seen.hz, 100);
	ck_assert_uint_eq(seen.drains, 1);
	ck_assert_uint_gt(seen.ntids, 0);
	ck_assert_uint_eq(bpf_sched_last_batch(bs)->ntids, 0);
	ck_assert_uint_eq(wb->drains, 1);
	/* a job without a part: no hook */
	ck_assert_int_eq(bpf_sched_async_reduce_into(a, NULL, 0), 0);
	ck_assert_int_eq(bpf_sched_async_start(a), 0);
	ck_assert_int_eq(bpf_sched_async_done(a, true, &r), 1);
	ck_assert_uint_eq(seen.calls, 1);
	a = bpf_sched_async_free(a);
	window_bpf_release(wb);
	free(wb);
	bpf_sched_free(bs);
}
END_TEST

/* ------------------------------------------------------- degradation */

START_TEST(test_off_verifier)
{
	struct bpf_sched_opts o = bsf_opts();
	char why[512];
	unsigned i;

	o.test_reject = true;
	bsf_open_expect(&o, VBPF_OFF_VERIFIER, why, sizeof(why));
	fprintf(stderr, "verifier: %s\n", why);
	/* nothing half-made is left to be mistaken for a working set */
	for (i = 0; i < sizeof(map_pins) / sizeof(map_pins[0]); i++)
		ck_assert(!bsf_exists("map", map_pins[i]));
}
END_TEST

#else /* !HAVE_BPF */

START_TEST(test_stub)
{
	struct bpf_sched_opts o = bsf_opts();

	bsf_open_expect(&o, VBPF_OFF_UNSUPPORTED, NULL, 0);
	o.load = VBPF_LOAD_OFF;
	bsf_open_expect(&o, VBPF_OFF_DISABLED, NULL, 0);
}
END_TEST

#endif /* HAVE_BPF */

static Suite *
bpf_sched_suite(void)
{
	Suite *s = suite_create("bpf_sched");
	TCase *tc = tcase_create("kernel");

	tcase_add_checked_fixture(tc, bsf_setup, bsf_teardown);
	tcase_set_timeout(tc, 240);
#ifdef HAVE_BPF
	tcase_add_test(tc, test_load_attach_pin);
	tcase_add_test(tc, test_restart_reuses);
	tcase_add_test(tc, test_layout_mismatch_replaced);
	tcase_add_test(tc, test_second_drainer_refused);
	tcase_add_test(tc, test_pinned_only);
	tcase_add_test(tc, test_child_cpu_agrees);
	tcase_add_test(tc, test_starttime_is_procs);
	tcase_add_loop_test(tc, test_drain_exact_under_churn, 0, 2);
	tcase_add_test(tc, test_async_reduces);
	tcase_add_test(tc, test_async_after);
	tcase_add_test(tc, test_off_verifier);
#else
	tcase_add_test(tc, test_stub);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("bpffs and BPF loading"))
		return 77;
#ifdef HAVE_BPF
	/* scripts/test.sh mounts it; a bare run may need it too */
	if (bpf_check_bpffs("/sys/fs/bpf") < 0)
		(void)mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
	bsf_sweep_stale();
#endif
	return tu_run(bpf_sched_suite());
}
