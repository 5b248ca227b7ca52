/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The partial read's running-task path on the running kernel (doc/bpf.md,
 * "Event-driven samples"): each CPU's curr, reached through the reader's
 * task group (tg->cfs_rq[cpu]->rq->curr), found alone with the maps left
 * out of the read by a test switch; and a stale early flip. Needs root
 * (BPF, bpffs) and two CPUs.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/bpf_common.h"
#include "sched/sched.h"
#include "taskiter/taskiter.h"
#include "bpf_sched_fix.h"
#include "testutil.h"
#include "vitalsd.h"

static char *bpffs;

static void
setup(void)
{
	if (asprintf(&bpffs, "/sys/fs/bpf/vitals-test-curr-%d", (int)getpid()) <
	    0)
		ck_abort();
	bpf_common_init();
}

static void
teardown(void)
{
	tu_rmtree(bpffs);
	free(bpffs);
}

/* Whether a partial read's groups hold tgid. */
static bool
snap_has(const struct taskiter_snap *s, pid_t tgid)
{
	size_t j;

	for (j = 0; j < s->nprocs; j++)
		if (s->procs[j].tgid == tgid)
			return true;
	return false;
}

/*
 * The running-task path alone (tg->cfs_rq[cpu]->rq->curr, doc/bpf.md):
 * with the maps left out of the read (a test switch), a child spinning
 * on a CPU of its own is still written, found as its CPU's curr; with
 * the CPUs left out too it is not, and the read says it is doubtful. So
 * this fails when that path breaks, whatever the maps hold.
 */
START_TEST(running_task_path)
{
	struct bpf_sched *bs = bsf_sched_open(bpffs);
	struct taskiter_events ev;
	struct taskiter *ti;
	enum scanner_why why;
	enum partial_why pwhy;
	const struct taskiter_snap *snap;
	struct taskiter_end end;
	uint64_t gen, doubt, nostore;
	cpu_set_t set;
	bool found = false;
	pid_t child;
	int i, perr, st;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "running_task_path: one CPU, nothing to pin\n");
		bpf_sched_free(bs);
		return;
	}
	bsf_events_of(bs, &ev);
	ck_assert_int_eq(taskiter_open_ev((unsigned)sysconf(_SC_CLK_TCK),
			     "/sys", &ev, &ti, &why, &pwhy, &perr),
	    0);
	ck_assert_msg(pwhy == PARTIAL_WHY_NONE, "partial: %s (%s)",
	    partial_why_name(pwhy), strerror(perr));
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		volatile unsigned long n = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CPU_ZERO(&set);
		CPU_SET(1, &set);
		(void)sched_setaffinity(0, sizeof(set), &set);
		(void)setpriority(PRIO_PROCESS, 0, -20);
		for (;;)
			n++;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	tu_sleep_ms(100);
	/* on a shared machine the child is not always its CPU's curr at
	 * the read: a few tries */
	for (i = 0; i < 50 && !found; i++) {
		ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
		ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1),
				     TASKITER_READ_NO_MAPS, &snap, &end),
		    0);
		found = snap_has(snap, child);
		if (!found)
			tu_sleep_ms(20);
	}
	ck_assert_msg(found,
	    "the spinning child %d was not read from its "
	    "CPU in %d reads",
	    (int)child, i);
	fprintf(stderr, "running task path: child read at try %d\n", i);
	/* neither path: the child is not written, the read is doubtful */
	for (i = 0; i < 10; i++) {
		nostore = end.nostore;
		ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1),
				     TASKITER_READ_NO_MAPS |
					 TASKITER_READ_NO_CPUS,
				     &snap, &end),
		    0);
		ck_assert(!snap_has(snap, child));
		ck_assert_uint_eq(snap->nprocs, 0);
		ck_assert_uint_gt(end.nostore, nostore);
	}
	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	CPU_ZERO(&set);
	for (i = 0; i < (int)sysconf(_SC_NPROCESSORS_ONLN) && i < CPU_SETSIZE;
	     i++)
		CPU_SET(i, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
	taskiter_free(ti);
	bpf_sched_free(bs);
}
END_TEST

/*
 * An early flip a close never consumed (the close failed before its sched
 * part) is stale: the next close's early flip flips again, so its drain
 * reads that window's side, not the one before; the close's own flip is
 * then that one.
 */
START_TEST(stale_early_flip)
{
	struct bpf_sched *bs = bsf_sched_open(bpffs);
	struct taskiter_events ev;
	struct taskiter *ti;
	enum scanner_why why;
	enum partial_why pwhy;
	uint64_t g0, g;
	int perr;

	bsf_events_of(bs, &ev);
	ck_assert_int_eq(taskiter_open_ev((unsigned)sysconf(_SC_CLK_TCK),
			     "/sys", &ev, &ti, &why, &pwhy, &perr),
	    0);
	ck_assert_int_eq(taskiter_ev_gen(ti, &g0), 0);
	ck_assert_int_eq(bpf_sched_flip_early(bs), 0);
	ck_assert_int_eq(taskiter_ev_gen(ti, &g), 0);
	ck_assert_uint_eq(g, g0 + 1);
	/* that close failed: no bpf_sched_flip; the next close's */
	ck_assert_int_eq(bpf_sched_flip_early(bs), 0);
	ck_assert_int_eq(taskiter_ev_gen(ti, &g), 0);
	ck_assert_uint_eq(g, g0 + 2);
	ck_assert_int_eq(bpf_sched_flip(bs), 0);
	ck_assert_int_eq(taskiter_ev_gen(ti, &g), 0);
	ck_assert_uint_eq(g, g0 + 2);
	/* consumed: the flip after it flips */
	ck_assert_int_eq(bpf_sched_flip(bs), 0);
	ck_assert_int_eq(taskiter_ev_gen(ti, &g), 0);
	ck_assert_uint_eq(g, g0 + 3);
	taskiter_free(ti);
	bpf_sched_free(bs);
}
END_TEST

static Suite *
evscan_curr_suite(void)
{
	Suite *s = suite_create("evscan_curr");
	TCase *tc = tcase_create("kernel");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, running_task_path);
	tcase_add_test(tc, stale_early_flip);
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
	return tu_run(evscan_curr_suite());
}
