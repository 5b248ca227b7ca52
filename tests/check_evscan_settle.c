/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lazy settling of the event-driven scan (doc/bpf.md, "Event-driven
 * samples") on made-up iterator reads: a scan fed a full walk every
 * sample and one fed full walks at the window's edges and, between them,
 * only the groups that changed (and a process's end) give the same rows —
 * the per-sample sums (samples, wall, total and normalised ticks) of the
 * tasks partial samples skipped included, bit for bit, an invalid sample
 * left out of both. No kernel: taskiter_parse and procscan_run_snap.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bpf/taskiter/taskiter.bpf.h"
#include "proc/proc.h"
#include "taskiter/taskiter.h"
#include "testutil.h"
#include "vitalsd.h"

#define HZ 100
#define NUNKNOWN 150 /* never-held processes gone from sample 4 */
#define TICK_NS (NSEC_PER_SEC / HZ)
#define NS 7

/* One task as the iterator writes it: native accounting (no split). */
struct fake {
	int32_t tgid, tid;
	uint64_t start_ticks;
	uint64_t utime_ns[NS], minflt[NS]; /* per sample */
	int from, to;			   /* alive in samples [from, to) */
};

/*
 * 100: leader 100, threads 101, 102, and 103 born at sample 4; 101 runs
 * at samples 1 and 5. 200: leader and 201, which runs at sample 3 only.
 * 300: ends before sample 3 (its last run at sample 1). 400: never runs.
 */
static struct fake pop[] = {
	{ 100, 100, 1, { 0 }, { 5, 5, 5, 5, 5, 5, 5 }, 0, NS },
	{ 100, 101, 1, { 1, 3, 3, 3, 3, 9, 9 }, { 1, 4, 4, 4, 4, 8, 8 }, 0,
	    NS },
	{ 100, 102, 1, { 0 }, { 0 }, 0, NS },
	{ 100, 103, 450, { 0, 0, 0, 0, 2, 2, 2 }, { 0, 0, 0, 0, 6, 6, 6 }, 4,
	    NS },
	{ 200, 200, 2, { 0 }, { 2, 2, 2, 2, 2, 2, 2 }, 0, NS },
	{ 200, 201, 2, { 0, 0, 0, 4, 4, 4, 4 }, { 0, 0, 0, 3, 3, 3, 3 }, 0,
	    NS },
	{ 300, 300, 3, { 1, 2, 2, 2, 2, 2, 2 }, { 1, 2, 2, 2, 2, 2, 2 }, 0, 3 },
	{ 400, 400, 4, { 0 }, { 9, 9, 9, 9, 9, 9, 9 }, 0, NS },
};
#define NPOP (sizeof(pop) / sizeof(pop[0]))

static void
put(struct taskiter_rec *r, const struct fake *f, int k)
{
	memset(r, 0, sizeof(*r));
	r->magic = TASKITER_MAGIC;
	r->tgid = f->tgid;
	r->tid = f->tid;
	snprintf(r->comm, sizeof(r->comm), "f%d", f->tid);
	r->start_ticks = f->start_ticks;
	r->start_ns = f->start_ticks * TICK_NS;
	/* whole ticks: ns_to_clock_t is exact */
	r->utime_ns = f->utime_ns[k] * TICK_NS;
	r->runtime_ns = r->utime_ns;
	r->min_flt = f->minflt[k];
	if (f->tid == f->tgid)
		r->flags = TASKITER_F_LEADER;
}

/* Whether group tgid changed between samples k-1 and k (what the sched
 * accounting would have seen run). */
static bool
group_moved(int32_t tgid, int k)
{
	size_t i;

	for (i = 0; i < NPOP; i++) {
		const struct fake *f = &pop[i];

		if (f->tgid != tgid || k == 0)
			continue;
		if (f->from == k && k > 0)
			return true; /* a thread born: its creator ran */
		if (f->utime_ns[k] != f->utime_ns[k - 1] ||
		    f->minflt[k] != f->minflt[k - 1])
			return true;
	}
	return false;
}

/* Sample k's read: every live task (full), or the groups that moved and a
 * GONE record for 300 once it ended (partial), at every read as the
 * process map holds it until the drain; and from sample 4 one for 500,
 * which the scan never held (born and gone between two reads). */
static void
make_snap(int k, bool partial, struct taskiter_snap *s)
{
	struct taskiter_rec recs[NPOP + 3 + NUNKNOWN];
	size_t i, n = 0;

	for (i = 0; i < NPOP; i++) {
		const struct fake *f = &pop[i];

		if (k < f->from || k >= f->to)
			continue;
		if (partial && !group_moved(f->tgid, k))
			continue;
		put(&recs[n++], f, k);
	}
	if (partial && k >= 3) {
		memset(&recs[n], 0, sizeof(recs[n]));
		recs[n].magic = TASKITER_MAGIC_GONE;
		recs[n].tgid = recs[n].tid = 300;
		recs[n].start_ticks = 3;
		n++;
	}
	if (partial && k >= 4) {
		memset(&recs[n], 0, sizeof(recs[n]));
		recs[n].magic = TASKITER_MAGIC_GONE;
		recs[n].tgid = recs[n].tid = 500;
		recs[n].start_ticks = 420;
		n++;
		/* more never held than the first 64 slots of the scan's
		 * memory of them: it grows and re-indexes in the middle */
		for (i = 0; i < NUNKNOWN; i++, n++) {
			memset(&recs[n], 0, sizeof(recs[n]));
			recs[n].magic = TASKITER_MAGIC_GONE;
			recs[n].tgid = recs[n].tid = 600 + (int32_t)i;
			recs[n].start_ticks = 430 + i % 7;
		}
	}
	memset(&recs[n], 0, sizeof(recs[n]));
	recs[n].magic = TASKITER_MAGIC_END;
	n++;
	ck_assert_int_eq(taskiter_parse(recs, n * sizeof(recs[0]), s), 0);
}

static struct procscan *
scan_new(int fd, enum threads_mode mode)
{
	struct procscan *ps;

	ck_assert_int_eq(procscan_new(fd, HZ, mode, &ps), 0);
	return ps;
}

static const struct window_task *
find(const struct window_task *a, size_t n, int32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].id == id)
			return &a[i];
	return NULL;
}

static void
same_rows(const struct window_task *a, size_t na, const struct window_task *b,
    size_t nb)
{
	size_t i;

	ck_assert_uint_eq(na, nb);
	for (i = 0; i < nb; i++) {
		const struct window_task *y = find(a, na, b[i].id);

		ck_assert_msg(y != NULL, "%d: only in the full scan", b[i].id);
		ck_assert_uint_eq(y->d_utime, b[i].d_utime);
		ck_assert_uint_eq(y->d_minflt, b[i].d_minflt);
		ck_assert_msg(y->samples == b[i].samples, "%d: samples %u/%u",
		    b[i].id, y->samples, b[i].samples);
		ck_assert_uint_eq(y->wall_ns, b[i].wall_ns);
		ck_assert_uint_eq(y->total_ticks, b[i].total_ticks);
		ck_assert(y->norm_ticks == b[i].norm_ticks);
		ck_assert_int_eq(y->born, b[i].born);
		ck_assert_int_eq(y->exited, b[i].exited);
	}
}

static void
run(enum threads_mode mode)
{
	char *dir = tu_mkdtemp("evsettle");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct procscan *full = scan_new(fd, mode), *part = scan_new(fd, mode);
	struct window *wf = window_new(1, 0), *wp = window_new(1, 0);
	struct taskiter_snap s = { 0 };
	int k;

	for (k = 0; k < NS; k++) {
		struct scan_ctx ctx = {
			.valid = k != 2, /* one sample left out */
			.have_prev = true,
			.prev_boot_ns = (int64_t)k * NSEC_PER_SEC,
			.wall_ns = NSEC_PER_SEC + (uint64_t)k,
			.total_ticks = 200 + (uint64_t)k * 3,
			.norm_ticks = 100.0 / 3.0 + k * 0.1,
		};
		bool partial = k > 0 && k < NS - 1;

		make_snap(k, false, &s);
		ck_assert_int_eq(procscan_run_snap(full, &s, false, &ctx, wf),
		    0);
		make_snap(k, partial, &s);
		ck_assert_int_eq(procscan_run_snap(part, &s, partial, &ctx, wp),
		    0);
		ck_assert_uint_eq(wp->health.samples_partial, partial ? 1 : 0);
		wp->health.samples_partial = 0;
	}
	ck_assert_int_eq(procscan_flush(full, wf), 0);
	ck_assert_int_eq(procscan_flush(part, wp), 0);
	same_rows(wp->procs, wp->nprocs, wf->procs, wf->nprocs);
	same_rows(wp->threads, wp->nthreads, wf->threads, wf->nthreads);
	/* the skipped ones were settled: 200 ran only at sample 3, yet has
	 * the 6 valid samples; 300 ended before sample 3: 2 valid samples
	 * (0 and 1), exited; 103 born at 4 */
	ck_assert_uint_eq(find(wp->procs, wp->nprocs, 200)->samples, NS - 1);
	ck_assert_uint_eq(find(wp->procs, wp->nprocs, 300)->samples, 2);
	ck_assert(find(wp->procs, wp->nprocs, 300)->exited);
	/* 300, retired at sample 3, named again at 4 and 5: not unknown;
	 * 500 and 600.., never held, named at 4 and 5: counted once each */
	ck_assert_uint_eq(wp->health.partial_gone_unknown, 1 + NUNKNOWN);
	ck_assert_uint_eq(wf->health.partial_gone_unknown, 0);
	if (mode == THREADS_ALL) {
		ck_assert(find(wp->threads, wp->nthreads, 103)->born);
		ck_assert_uint_eq(find(wp->threads, wp->nthreads, 101)->samples,
		    NS - 1);
	}
	taskiter_snap_release(&s);
	window_free(wf);
	window_free(wp);
	procscan_free(full);
	procscan_free(part);
	close(fd);
	tu_rmtree(dir);
	free(dir);
}

START_TEST(settle_changed)
{
	run(THREADS_CHANGED);
}
END_TEST

START_TEST(settle_all)
{
	run(THREADS_ALL);
}
END_TEST

START_TEST(settle_none)
{
	run(THREADS_NONE);
}
END_TEST

static Suite *
settle_suite(void)
{
	Suite *s = suite_create("evscan_settle");
	TCase *tc = tcase_create("settle");

	tcase_add_test(tc, settle_changed);
	tcase_add_test(tc, settle_all);
	tcase_add_test(tc, settle_none);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(settle_suite());
}
