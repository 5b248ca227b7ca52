/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF part of a window without a kernel: reducing a drained side to
 * what a window keeps (totals never shrink), merging for roll-ups,
 * run-queue quantiles, the dump text, the store (schema v3) round trip
 * and migration, and the configuration keys.
 */
#include <check.h>
#include <malloc.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC

/* A drained side made of arrays, as bpf_sched_drain would hand it. */
static int
add(struct window_bpf *wb, struct vbpf_tid *t, size_t nt, struct vbpf_uid *u,
    size_t nu, struct vbpf_proc *p, size_t np)
{
	struct bpf_sched_batch b;

	memset(&b, 0, sizeof(b));
	b.tids = t;
	b.ntids = nt;
	b.uids = u;
	b.nuids = nu;
	b.procs = p;
	b.nprocs = np;
	return window_bpf_add(wb, &b, 100);
}

/* Leader start in ns that reads back as tgid ticks at 100 Hz. */
static uint64_t
leader_ns(int32_t tgid)
{
	return (uint64_t)tgid * 10000000ULL + 1234;
}

static struct vbpf_tid
mktid(int32_t tid, int32_t tgid, uint32_t uid, uint64_t ns)
{
	struct vbpf_tid t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	t.tgid = tgid;
	t.uid = uid;
	t.start_ns = leader_ns(tid);
	t.leader_ns = leader_ns(tgid);
	t.oncpu_ns = ns;
	return t;
}

static struct vbpf_uid
mkuid(uint32_t uid, uint64_t exited, uint64_t overflow)
{
	struct vbpf_uid u;

	memset(&u, 0, sizeof(u));
	u.uid = uid;
	u.exited_ns = exited;
	u.exited_tasks = exited ? 2 : 0;
	u.overflow_ns = overflow;
	return u;
}

static struct vbpf_proc
mkproc(int32_t tgid, uint64_t exited_ns, uint64_t wait_ns)
{
	struct vbpf_proc p;

	memset(&p, 0, sizeof(p));
	p.tgid = tgid;
	p.start_ns = leader_ns(tgid);
	p.exited_ns = exited_ns;
	p.rq_ns = wait_ns;
	p.rq_count = 4;
	p.rq_hist[1] = 1;
	p.rq_hist[3] = 2;
	p.rq_hist[10] = 1;
	return p;
}

static uint64_t
uid_sum(const struct window_bpf *b)
{
	uint64_t s = b->uid_other.oncpu_ns;
	unsigned i;

	for (i = 0; i < b->nuids; i++)
		s += b->uid[i].oncpu_ns;
	return s;
}

static uint64_t
proc_sum(const struct window_bpf *b, bool wait)
{
	uint64_t s = wait ? b->proc_other.rq_ns : b->proc_other.oncpu_ns;
	unsigned i;

	for (i = 0; i < b->nprocs; i++)
		s += wait ? b->proc[i].rq_ns : b->proc[i].oncpu_ns;
	return s;
}

static const struct window_bpf_proc *
find_proc(const struct window_bpf *b, int32_t tgid)
{
	unsigned i;

	for (i = 0; i < b->nprocs; i++)
		if (b->proc[i].tgid == tgid)
			return &b->proc[i];
	return NULL;
}

/* ------------------------------------------------------------- pure */

START_TEST(test_quantile)
{
	uint32_t h[VITALS_BPF_RQ_SLOTS] = { 0 };

	ck_assert_uint_eq(window_bpf_rq_quantile_ns(h, 0.5), 0);
	h[0] = 50; /* < 2 µs */
	h[4] = 49; /* 16..32 µs */
	h[9] = 1;  /* 512..1024 µs */
	ck_assert_uint_eq(window_bpf_rq_quantile_ns(h, 0.50), 2000);
	ck_assert_uint_eq(window_bpf_rq_quantile_ns(h, 0.51), 32000);
	ck_assert_uint_eq(window_bpf_rq_quantile_ns(h, 0.99), 32000);
	ck_assert_uint_eq(window_bpf_rq_quantile_ns(h, 1.0), 1024000);
	h[VITALS_BPF_RQ_SLOTS - 1] = 100; /* the open last slot */
	ck_assert_uint_eq(window_bpf_rq_quantile_ns(h, 0.99), UINT64_MAX);
}
END_TEST

/*
 * ns_to_clock_t() is the kernel's nsec_to_clock_t(): floored at every
 * edge, in each of its three formulas. The values are the kernel's own
 * arithmetic worked by hand.
 */
START_TEST(test_ns_to_ticks)
{
	uint64_t mul, div;

	/* USER_HZ 100: floor(ns / 10^7), the edge on either side */
	ck_assert_uint_eq(ns_to_clock_t(0, 100), 0);
	ck_assert_uint_eq(ns_to_clock_t(9999999, 100), 0);
	ck_assert_uint_eq(ns_to_clock_t(10000000, 100), 1);
	ck_assert_uint_eq(ns_to_clock_t(19999999, 100), 1);
	ck_assert_uint_eq(ns_to_clock_t(123456789012ULL, 100), 12345);
	ck_assert_uint_eq(ns_to_clock_t(UINT64_MAX, 100),
	    UINT64_MAX / 10000000);
	/* never rounded up: 0.5 tick and 0.999999999 tick are 0 */
	ck_assert_uint_eq(ns_to_clock_t(5000000, 100), 0);
	/* 250 and 1000 divide 10^9 too */
	ck_assert_uint_eq(ns_to_clock_t(3999999, 250), 0);
	ck_assert_uint_eq(ns_to_clock_t(4000000, 250), 1);
	ck_assert_uint_eq(ns_to_clock_t(123456789012ULL, 250), 30864);
	ck_assert_uint_eq(ns_to_clock_t(999999, 1000), 0);
	ck_assert_uint_eq(ns_to_clock_t(1000000, 1000), 1);
	/* 1024: through 512, exact (x·1024/512)/(10^9/512) */
	ck_assert_uint_eq(ns_to_clock_t(3 * SEC + SEC / 2, 1024), 3584);
	ck_assert_uint_eq(ns_to_clock_t(SEC, 1024), 1024);
	ck_assert_uint_eq(ns_to_clock_t(976562, 1024), 0);
	ck_assert_uint_eq(ns_to_clock_t(976563, 1024), 1);
	/* 60: ×9 over (9·10^9 + 30) / 60 = 150000000 */
	ck_assert_uint_eq(ns_to_clock_t(16666666, 60), 0);
	ck_assert_uint_eq(ns_to_clock_t(16666667, 60), 1);
	ck_assert_uint_eq(ns_to_clock_t(SEC, 60), 60);
	/* unknown hz */
	ck_assert_uint_eq(ns_to_clock_t(5, 0), 0);
	/* the factors a BPF program gets say the same */
	clock_t_factors(100, &mul, &div);
	ck_assert_uint_eq(mul, 1);
	ck_assert_uint_eq(div, 10000000);
	clock_t_factors(1024, &mul, &div);
	ck_assert_uint_eq(123456789012ULL * mul / div,
	    ns_to_clock_t(123456789012ULL, 1024));
}
END_TEST

/* More uids and processes than a window keeps: nothing is lost. */
START_TEST(test_add_folds_and_keeps_totals)
{
	struct vbpf_tid tids[200];
	struct vbpf_uid uids[2];
	struct vbpf_proc procs[100];
	struct window_bpf wb;
	uint64_t total = 0, wait = 0;
	unsigned i;

	memset(&wb, 0, sizeof(wb));
	wb.max_procs = 32; /* bpf_procs: processes and uids kept */
	/* 200 threads of 100 processes, one uid each: 1..200 ms */
	for (i = 0; i < 200; i++) {
		tids[i] = mktid(5000 + (int32_t)i, 1000 + (int32_t)(i % 100),
		    10000 + i, (i + 1) * 1000000ULL);
		total += tids[i].oncpu_ns;
	}
	/* exited threads and an overflow add to their uids */
	uids[0] = mkuid(10199, 7000000, 0);
	uids[1] = mkuid(20000, 0, 5000000);
	total += 12000000;
	/* the five longest waiters hardly ran; 1099 also lost a thread */
	for (i = 0; i < 100; i++) {
		procs[i] = mkproc(1000 + (int32_t)i, i == 99 ? 7000000 : 0,
		    i < 5 ? 900000000ULL : 1000);
		wait += procs[i].rq_ns;
	}
	ck_assert_int_eq(add(&wb, tids, 200, uids, 2, procs, 100), 0);
	ck_assert_uint_eq(wb.oncpu_ns, total);
	ck_assert_uint_eq(wb.exited_ns, 7000000);
	ck_assert_uint_eq(wb.exited_tasks, 2);
	ck_assert_uint_eq(wb.rq_ns, wait);
	ck_assert_uint_eq(wb.nuids, 32);
	ck_assert_uint_eq(wb.uids_other, 201 - 32);
	ck_assert_uint_eq(uid_sum(&wb), total);
	ck_assert_uint_eq(wb.uid_other.uid, UINT32_MAX);
	/* the biggest are the ones kept, in uid order */
	ck_assert_uint_eq(wb.uid[wb.nuids - 1].uid, 10199);
	ck_assert_uint_eq(wb.uid[wb.nuids - 1].oncpu_ns, 207000000);
	ck_assert_uint_eq(wb.uid[wb.nuids - 1].exited_ns, 7000000);
	for (i = 1; i < wb.nuids; i++)
		ck_assert_uint_lt(wb.uid[i - 1].uid, wb.uid[i].uid);

	ck_assert_uint_eq(wb.nprocs, 32);
	ck_assert_uint_eq(wb.procs_other, 100 - 32);
	ck_assert_int_eq(wb.proc_other.tgid, -1);
	ck_assert_uint_eq(proc_sum(&wb, false), total - 12000000 + 7000000);
	ck_assert_uint_eq(proc_sum(&wb, true), wait);
	ck_assert_ptr_nonnull(find_proc(&wb, 1099)); /* busiest */
	ck_assert_ptr_nonnull(find_proc(&wb, 1000)); /* starved waiters */
	ck_assert_ptr_nonnull(find_proc(&wb, 1004));
	/* its two threads and the one that exited, joined by identity */
	ck_assert_uint_eq(find_proc(&wb, 1099)->oncpu_ns, 307000000);
	ck_assert_uint_eq(find_proc(&wb, 1099)->starttime, 1099);
	ck_assert_uint_eq(find_proc(&wb, 1099)->rq_hist[3], 2);

	/* a second drain into the same window adds up by key */
	ck_assert_int_eq(add(&wb, tids + 199, 1, NULL, 0, procs + 99, 1), 0);
	ck_assert_uint_eq(uid_sum(&wb), total + tids[199].oncpu_ns);
	ck_assert_uint_eq(find_proc(&wb, 1099)->oncpu_ns, 514000000);
	ck_assert_uint_eq(find_proc(&wb, 1099)->rq_hist[3], 4);
	window_bpf_release(&wb);
}
END_TEST

/*
 * The default bound keeps every process, uid and thread of a busy
 * window; a thread's own waits and a process that exited come through;
 * a small bound folds threads as it folds processes, and totals stay.
 */
START_TEST(test_rows_bound_and_threads)
{
	struct vbpf_tid tids[300];
	struct vbpf_proc procs[2];
	struct window_bpf wb, small, acc;
	uint64_t total = 0, t_other;
	unsigned i;

	memset(&wb, 0, sizeof(wb));
	for (i = 0; i < 300; i++) {
		tids[i] = mktid(7000 + (int32_t)i, 7000 + (int32_t)(i / 3 * 3),
		    1000 + i % 7, (i + 1) * 1000ULL);
		tids[i].rq_ns = i * 10ULL;
		tids[i].rq_count = i % 4;
		total += tids[i].oncpu_ns;
	}
	procs[0] = mkproc(7000, 0, 500);
	procs[0].flags = WBPF_PROC_EXITED;
	procs[1] = mkproc(9999, 123, 0); /* ended: only its exited time */
	procs[1].flags = WBPF_PROC_EXITED;
	ck_assert_int_eq(add(&wb, tids, 300, NULL, 0, procs, 2), 0);
	ck_assert_uint_eq(wb.nthreads, 300);
	ck_assert_uint_eq(wb.threads_other, 0);
	ck_assert_uint_eq(wb.nprocs, 101);
	ck_assert_uint_eq(wb.procs_other, 0);
	ck_assert_uint_eq(wb.nuids, 7);
#ifdef __GLIBC__
	/* the 7 uid rows kept are all the window holds: the array made with
	 * room for a row per thread (300) was cut to them (rows_fit) */
	ck_assert_uint_lt(malloc_usable_size(wb.uid), 8 * sizeof(*wb.uid) + 32);
	ck_assert_uint_lt(malloc_usable_size(wb.proc),
	    102 * sizeof(*wb.proc) + 32);
#endif
	ck_assert_uint_eq(wb.thread[5].tid, 7005);
	ck_assert_int_eq(wb.thread[5].tgid, 7003);
	ck_assert_uint_eq(wb.thread[5].starttime, 7005);
	ck_assert_uint_eq(wb.thread[5].rq_ns, 50);
	ck_assert_uint_eq(wb.thread[5].rq_count, 1);
	ck_assert_uint_eq(find_proc(&wb, 7000)->flags, WBPF_PROC_EXITED);
	ck_assert_uint_eq(find_proc(&wb, 7003)->flags, 0);
	ck_assert_uint_eq(find_proc(&wb, 9999)->flags, WBPF_PROC_EXITED);
	ck_assert_uint_eq(find_proc(&wb, 9999)->oncpu_ns, 123);

	/* bounds of 10 threads and 8 processes: the rest folded, counted */
	memset(&small, 0, sizeof(small));
	small.max_threads = 10;
	small.max_procs = 8;
	ck_assert_int_eq(add(&small, tids, 300, NULL, 0, procs, 2), 0);
	ck_assert_uint_eq(small.nthreads, 10);
	ck_assert_uint_eq(small.threads_other, 290);
	ck_assert_uint_eq(small.nprocs, 8);
	ck_assert_uint_eq(small.procs_other, 93);
	ck_assert_int_eq(small.thread_other.tid, -1);
	t_other = small.thread_other.oncpu_ns;
	for (i = 0; i < small.nthreads; i++)
		t_other += small.thread[i].oncpu_ns;
	ck_assert_uint_eq(t_other, total);
	/* the busiest five, then the five longest waiters */
	ck_assert_uint_eq(small.thread[small.nthreads - 1].tid, 7299);

	/* a roll-up of both keeps the larger bound, sums by key */
	memset(&acc, 0, sizeof(acc));
	ck_assert_int_eq(window_bpf_merge(&acc, &small), 0);
	ck_assert_int_eq(window_bpf_merge(&acc, &wb), 0);
	ck_assert_uint_eq(acc.max_threads, 10);
	ck_assert_uint_eq(acc.nthreads, 10);
	t_other = acc.thread_other.oncpu_ns;
	for (i = 0; i < acc.nthreads; i++)
		t_other += acc.thread[i].oncpu_ns;
	ck_assert_uint_eq(t_other, 2 * total);
	window_bpf_release(&wb);
	window_bpf_release(&small);
	window_bpf_release(&acc);
}
END_TEST

/*
 * Run-queue delay per uid and per thread: a uid's is its threads'
 * entries plus what its exited threads left in its uid entry; a thread
 * keeps its histogram; roll-ups and the "other" rows add histograms, so
 * the uids' waits always sum to the threads' plus the exited ones'.
 */
START_TEST(test_rq_per_uid_and_thread)
{
	struct vbpf_tid t[3] = { mktid(100, 100, 1000, 10),
		mktid(101, 100, 1000, 20), mktid(200, 200, 2000, 30) };
	struct vbpf_uid u = mkuid(1000, 5, 0);
	struct window_bpf wb, acc, small;
	const struct window_bpf_uid *x;
	uint64_t count;
	unsigned i, k;

	t[0].rq_ns = 100;
	t[0].rq_count = 3;
	t[0].rq_hist[2] = 2;
	t[0].rq_hist[5] = 1;
	t[1].rq_ns = 1;
	t[1].rq_count = 1;
	t[1].rq_hist[0] = 1;
	t[2].rq_ns = 70;
	t[2].rq_count = 2;
	t[2].rq_hist[7] = 2;
	u.exited_rq_ns = 40;
	u.exited_rq_count = 4;
	u.exited_rq_hist[3] = 4;
	memset(&wb, 0, sizeof(wb));
	ck_assert_int_eq(add(&wb, t, 3, &u, 1, NULL, 0), 0);
	ck_assert_uint_eq(wb.nuids, 2);
	x = &wb.uid[0];
	ck_assert_uint_eq(x->uid, 1000);
	ck_assert_uint_eq(x->rq_count, 8);
	ck_assert_uint_eq(x->rq_ns, 141);
	ck_assert_uint_eq(x->rq_hist[0], 1);
	ck_assert_uint_eq(x->rq_hist[2], 2);
	ck_assert_uint_eq(x->rq_hist[3], 4);
	ck_assert_uint_eq(x->rq_hist[5], 1);
	/* the 8th of 8 waits is in slot 5: p99 <= 64 us; the 4th, p50, 3 */
	ck_assert_uint_eq(window_bpf_rq_quantile_ns(x->rq_hist, 0.99),
	    64 * NSEC_PER_USEC);
	ck_assert_uint_eq(window_bpf_rq_quantile_ns(x->rq_hist, 0.50),
	    16 * NSEC_PER_USEC);
	ck_assert_uint_eq(wb.uid[1].rq_count, 2);
	ck_assert_uint_eq(wb.uid[1].rq_hist[7], 2);
	/* the threads keep theirs */
	ck_assert_uint_eq(wb.nthreads, 3);
	ck_assert_uint_eq(wb.thread[0].rq_hist[5], 1);
	ck_assert_uint_eq(wb.thread[2].rq_hist[7], 2);

	/* a roll-up adds them */
	memset(&acc, 0, sizeof(acc));
	ck_assert_int_eq(window_bpf_merge(&acc, &wb), 0);
	ck_assert_int_eq(window_bpf_merge(&acc, &wb), 0);
	ck_assert_uint_eq(acc.uid[0].rq_count, 16);
	ck_assert_uint_eq(acc.uid[0].rq_hist[3], 8);
	ck_assert_uint_eq(acc.thread[0].rq_count, 6);
	ck_assert_uint_eq(acc.thread[0].rq_hist[2], 4);

	/* one uid and one thread kept: the rest in "other", sums whole */
	memset(&small, 0, sizeof(small));
	small.max_procs = 1;
	small.max_threads = 1;
	ck_assert_int_eq(window_bpf_merge(&small, &wb), 0);
	ck_assert_uint_eq(small.nuids, 1);
	ck_assert_uint_eq(small.uids_other, 1);
	count = small.uid_other.rq_count;
	for (i = 0; i < small.nuids; i++)
		count += small.uid[i].rq_count;
	ck_assert_uint_eq(count, 10);
	for (k = 0, count = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		count += small.uid_other.rq_hist[k] + small.uid[0].rq_hist[k];
	ck_assert_uint_eq(count, 10);
	for (k = 0, count = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		count += small.thread_other.rq_hist[k] +
		    small.thread[0].rq_hist[k];
	ck_assert_uint_eq(count, 6);
	window_bpf_release(&wb);
	window_bpf_release(&acc);
	window_bpf_release(&small);
}
END_TEST

START_TEST(test_merge)
{
	struct window_bpf a, b;
	struct vbpf_tid ta[2] = { mktid(1, 1, 0, 10), mktid(42, 42, 1000, 20) };
	struct vbpf_tid tb[2] = { mktid(43, 42, 1000, 5),
		mktid(7, 7, 2000, 7) };
	struct vbpf_proc pa = mkproc(42, 100, 10), pb = mkproc(42, 50, 5);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(add(&a, ta, 2, NULL, 0, &pa, 1), 0);
	ck_assert_int_eq(add(&b, tb, 2, NULL, 0, &pb, 1), 0);
	a.state = VBPF_ON_LOADED;
	b.state = VBPF_ON_REUSED;
	a.drains = b.drains = 1;
	a.switches = 100;
	b.switches = 50;
	a.stats = b.stats = true;
	a.prog_runs[0] = 3;
	b.prog_runs[0] = 4;
	window_bpf_merge(&a, &b);
	ck_assert_uint_eq(a.state, VBPF_ON_REUSED);
	ck_assert_uint_eq(a.drains, 2);
	ck_assert_uint_eq(a.switches, 150);
	ck_assert_uint_eq(a.prog_runs[0], 7);
	ck_assert(a.stats);
	ck_assert_uint_eq(a.nuids, 3);
	ck_assert_uint_eq(a.uid[1].uid, 1000);
	ck_assert_uint_eq(a.uid[1].oncpu_ns, 25);
	ck_assert_uint_eq(a.oncpu_ns, 42);
	ck_assert_uint_eq(a.nprocs, 3);
	ck_assert_uint_eq(find_proc(&a, 42)->oncpu_ns, 175);
	ck_assert_uint_eq(find_proc(&a, 42)->rq_hist[10], 2);

	/* a part without statistics makes the sum's unknown */
	b.stats = false;
	window_bpf_merge(&a, &b);
	ck_assert(!a.stats);
	/* a part that did not report keeps the state */
	b.state = VBPF_UNKNOWN;
	window_bpf_merge(&a, &b);
	ck_assert_uint_eq(a.state, VBPF_ON_REUSED);
	/* where the waits came from: a part without drains says nothing,
	 * one rule stays, an unknown one with drains makes the sum's
	 * unknown, two rules are mixed */
	{
		struct window_bpf e;

		memset(&e, 0, sizeof(e));
		b.rq_source = VBPF_RQ_SCHED_INFO;
		window_bpf_merge(&e, &b); /* e had no drain */
		ck_assert_uint_eq(e.rq_source, VBPF_RQ_SCHED_INFO);
		window_bpf_merge(&e, &b);
		ck_assert_uint_eq(e.rq_source, VBPF_RQ_SCHED_INFO);
		b.drains = 0;
		b.rq_source = VBPF_RQ_WAKEUP;
		window_bpf_merge(&e, &b); /* b had no drain */
		ck_assert_uint_eq(e.rq_source, VBPF_RQ_SCHED_INFO);
		b.drains = 1;
		window_bpf_merge(&e, &b);
		ck_assert_uint_eq(e.rq_source, VBPF_RQ_MIXED);
		b.rq_source = VBPF_RQ_UNKNOWN; /* stored before it was kept */
		window_bpf_merge(&e, &b);
		ck_assert_uint_eq(e.rq_source, VBPF_RQ_UNKNOWN);
		window_bpf_release(&e);
	}
	window_bpf_release(&a);
	window_bpf_release(&b);
}
END_TEST

START_TEST(test_names)
{
	unsigned i;

	for (i = 0; i < VBPF__MAX; i++)
		ck_assert_str_ne(vbpf_state_name(i), "?");
	ck_assert_str_eq(vbpf_state_name(VBPF__MAX), "?");
	ck_assert_str_eq(vbpf_state_name(VBPF_OFF_NO_BPFFS), "off_no_bpffs");
	ck_assert(vbpf_state_on(VBPF_ON_PINNED));
	ck_assert(!vbpf_state_on(VBPF_OFF_VERIFIER));
	ck_assert_str_eq(vbpf_prog_name(0), "sched_switch");
	ck_assert_str_eq(vbpf_rq_name(VBPF_RQ_UNKNOWN), "");
	ck_assert_str_eq(vbpf_rq_name(VBPF_RQ_SCHED_INFO), "sched_info");
	ck_assert_str_eq(vbpf_rq_name(VBPF_RQ_MIXED), "mixed");
	ck_assert_str_eq(vbpf_rq_name(VBPF_RQ_MIXED + 1), "?");
	ck_assert_str_eq(vbpf_prog_name(VITALS_BPF_PROGS), "?");
}
END_TEST

/* ------------------------------------------------------ window, store */

static struct window *
mkwin(uint64_t seq, int64_t wall, unsigned nuids)
{
	struct window *w = window_new(seq, 0);
	struct vbpf_tid tids[100];
	struct vbpf_proc procs[40];
	struct window_task t;
	unsigned i;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b0075e7e-0000-4000-8000-1");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + 10 * SEC;
	w->samples = w->samples_valid = 10;
	memset(&t, 0, sizeof(t));
	t.id = t.tgid = 1003;
	t.starttime = 1003;
	snprintf(t.comm, sizeof(t.comm), "busy");
	window_task_set_namef(&t, "com.example.busy");
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	if (nuids == 0)
		return w;
	for (i = 0; i < nuids; i++)
		tids[i] = mktid(2000 + (int32_t)i, 1000 + (int32_t)(i % 40),
		    10000 + i, (i + 1) * 1000ULL);
	for (i = 0; i < 40; i++) {
		procs[i] = mkproc(1000 + (int32_t)i, (i + 1) * 1000ULL, 7 * i);
		procs[i].flags = i % 5 == 0 ? WBPF_PROC_EXITED : 0;
		tids[i].rq_ns = 100 * i;
		tids[i].rq_count = i;
		/* a histogram per thread, so its uid's too (version 3) */
		tids[i].rq_hist[i % VITALS_BPF_RQ_SLOTS] = (uint32_t)i;
	}
	ck_assert_ptr_nonnull(window_sched_make(w, true));
	window_sched(w)->max_procs = 30; /* some fold: "other" rows */
	window_sched(w)->max_threads = 25;
	ck_assert_int_eq(add(window_sched(w), tids, nuids, NULL, 0, procs, 40),
	    0);
	window_sched(w)->state = VBPF_ON_LOADED;
	window_sched(w)->drains = 1;
	window_sched(w)->drain_ns = 1234567;
	window_sched(w)->entries = 321;
	window_sched(w)->switches = 99999;
	window_sched(w)->wakeups = 77777;
	window_sched(w)->pre_ns = 42;
	window_sched(w)->full_proc = 3;
	window_sched(w)->rq_samples = 4242;
	window_sched(w)->procs_exited = 8;
	window_sched(w)->thr_exited = 9;
	window_sched(w)->oncpu_total = 123456789;
	window_sched(w)->rq_notid = 6;
	window_sched(w)->slot_rows = 30;
	window_sched(w)->slots_taken = 31;
	window_sched(w)->slot_hash_rows = 12;
	window_sched(w)->slot_overflow = 7;
	window_sched(w)->slot_full_drains = 1;
	window_sched(w)->slot_cap = 31;
	/* a read-only drain's figures; unattributed may be negative */
	window_sched(w)->diff_drains = 1;
	window_sched(w)->unattributed_ns = -12345;
	window_sched(w)->evicted = 5;
	window_sched(w)->recreated = 2;
	window_sched(w)->retired = 7;
	window_sched(w)->stats = true;
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		window_sched(w)->prog_runs[i] = 1000 + i;
		window_sched(w)->prog_ns[i] = 300000 + i;
	}
	return w;
}

static void
assert_bpf_eq(const struct window_bpf *a, const struct window_bpf *b)
{
	unsigned i;

	ck_assert_uint_eq(a->state, b->state);
	ck_assert_uint_eq(a->rq_source, b->rq_source);
	ck_assert_int_eq(a->err, b->err);
	ck_assert_uint_eq(a->drains, b->drains);
	ck_assert_uint_eq(a->drain_fail, b->drain_fail);
	ck_assert_uint_eq(a->drain_ns, b->drain_ns);
	ck_assert_uint_eq(a->entries, b->entries);
	ck_assert_uint_eq(a->oncpu_ns, b->oncpu_ns);
	ck_assert_uint_eq(a->exited_ns, b->exited_ns);
	ck_assert_uint_eq(a->exited_tasks, b->exited_tasks);
	ck_assert_uint_eq(a->rq_ns, b->rq_ns);
	ck_assert_uint_eq(a->rq_count, b->rq_count);
	ck_assert_uint_eq(a->pre_ns, b->pre_ns);
	ck_assert_uint_eq(a->switches, b->switches);
	ck_assert_uint_eq(a->wakeups, b->wakeups);
	ck_assert_uint_eq(a->full_proc, b->full_proc);
	ck_assert_uint_eq(a->diff_drains, b->diff_drains);
	ck_assert_int_eq(a->unattributed_ns, b->unattributed_ns);
	ck_assert_uint_eq(a->evicted, b->evicted);
	ck_assert_uint_eq(a->recreated, b->recreated);
	ck_assert_uint_eq(a->retired, b->retired);
	ck_assert(a->stats == b->stats);
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		ck_assert_uint_eq(a->prog_runs[i], b->prog_runs[i]);
		ck_assert_uint_eq(a->prog_ns[i], b->prog_ns[i]);
	}
	ck_assert_uint_eq(a->nuids, b->nuids);
	ck_assert_uint_eq(a->uids_other, b->uids_other);
	if (a->nuids) /* none: no array to compare (NULL) */
		ck_assert_mem_eq(a->uid, b->uid, a->nuids * sizeof(a->uid[0]));
	ck_assert_mem_eq(&a->uid_other, &b->uid_other, sizeof(a->uid_other));
	ck_assert_uint_eq(a->nprocs, b->nprocs);
	ck_assert_uint_eq(a->procs_other, b->procs_other);
	if (a->nprocs)
		ck_assert_mem_eq(a->proc, b->proc,
		    a->nprocs * sizeof(a->proc[0]));
	ck_assert_int_eq(a->proc_other.tgid, b->proc_other.tgid);
	ck_assert_uint_eq(a->proc_other.oncpu_ns, b->proc_other.oncpu_ns);
	ck_assert_mem_eq(a->proc_other.rq_hist, b->proc_other.rq_hist,
	    sizeof(a->proc_other.rq_hist));
	ck_assert_uint_eq(a->nthreads, b->nthreads);
	ck_assert_uint_eq(a->threads_other, b->threads_other);
	if (a->nthreads)
		ck_assert_mem_eq(a->thread, b->thread,
		    a->nthreads * sizeof(a->thread[0]));
	ck_assert_mem_eq(&a->thread_other, &b->thread_other,
	    sizeof(a->thread_other));
	ck_assert_uint_eq(a->rq_samples, b->rq_samples);
	ck_assert_uint_eq(a->procs_exited, b->procs_exited);
	ck_assert_uint_eq(a->thr_exited, b->thr_exited);
	ck_assert_uint_eq(a->oncpu_total, b->oncpu_total);
	ck_assert_uint_eq(a->rq_notid, b->rq_notid);
	ck_assert_uint_eq(a->slot_rows, b->slot_rows);
	ck_assert_uint_eq(a->slots_taken, b->slots_taken);
	ck_assert_uint_eq(a->slot_hash_rows, b->slot_hash_rows);
	ck_assert_uint_eq(a->slot_overflow, b->slot_overflow);
	ck_assert_uint_eq(a->slot_full_drains, b->slot_full_drains);
	ck_assert_uint_eq(a->slot_cap, b->slot_cap);
}

static char *dir;

static void
setup(void)
{
	dir = tu_mkdtemp("bpfwin");
	ck_assert_ptr_nonnull(dir);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_store(void)
{
	char path[PATH_MAX];
	struct store *s = NULL;

	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	return s;
}

/* The sum of the thread rows of p's tgid in b (their number in *ret_n). */
static struct window_bpf_proc
thread_sum(const struct window_bpf *b, const struct window_bpf_proc *p,
    size_t *ret_n)
{
	struct window_bpf_proc s = *p;
	size_t j, n = 0;
	unsigned k;

	s.oncpu_ns = s.rq_ns = s.rq_count = 0;
	memset(s.rq_hist, 0, sizeof(s.rq_hist));
	for (j = 0; j < b->nthreads; j++) {
		const struct window_bpf_thread *t = &b->thread[j];

		if (t->tgid != p->tgid)
			continue;
		n++;
		s.oncpu_ns += t->oncpu_ns;
		s.rq_ns += t->rq_ns;
		s.rq_count += t->rq_count;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			s.rq_hist[k] += t->rq_hist[k];
	}
	*ret_n = n;
	return s;
}

/* Every other process of b with thread rows made what a process none of
 * whose threads exited is: their sum. */
static void
make_derived(struct window_bpf *b)
{
	size_t i, n;

	for (i = 0; i < b->nprocs; i += 2) {
		struct window_bpf_proc s = thread_sum(b, &b->proc[i], &n);

		if (n)
			b->proc[i] = s;
	}
}

/* Processes of b whose figures are (derived) and are not the sum of the
 * thread rows of their tgid: version 4 writes only the latter's. */
static void
count_derived(const struct window_bpf *b, size_t *ret_yes, size_t *ret_no)
{
	size_t i, n;

	*ret_yes = *ret_no = 0;
	for (i = 0; i < b->nprocs; i++) {
		struct window_bpf_proc s = thread_sum(b, &b->proc[i], &n);

		if (n && s.oncpu_ns == b->proc[i].oncpu_ns &&
		    s.rq_ns == b->proc[i].rq_ns &&
		    s.rq_count == b->proc[i].rq_count &&
		    memcmp(s.rq_hist, b->proc[i].rq_hist, sizeof(s.rq_hist)) ==
			0)
			(*ret_yes)++;
		else
			(*ret_no)++;
	}
}

START_TEST(test_store_round_trip)
{
	int64_t wall = 1700000000LL * SEC;
	struct window *w1 = mkwin(1, wall, 100),
		      *w2 = mkwin(2, wall + 10 * SEC, 0), **ws = NULL;
	struct store *s = open_store();
	char v[64];
	size_t n = 0, i, nd, nn;

	window_sched(w1)->err = -EPERM;
	window_sched(w1)->rq_source = VBPF_RQ_SCHED_INFO; /* kept (114) */
	make_derived(window_sched(w1));
	/* off: a state, no rows (the head alone, as the daemon makes it) */
	ck_assert_ptr_nonnull(window_sched_make(w2, false));
	window_sched(w2)->state = VBPF_OFF_NO_BPFFS;
	window_sched(w2)->err = -EMEDIUMTYPE;
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	/* the rows are w1's BPF blob (schema v9); w2, the head alone, has
	 * none; the figures are named counters under the key dictionary */
	ck_assert_int_eq(store_exec(s,
			     "SELECT count(*) FROM window_parts"
			     " WHERE bpf IS NOT NULL",
			     v, sizeof(v)),
	    0);
	ck_assert_str_eq(v, "1");
	/* as version 4 (frame: magic, part 4, version 4), with processes
	 * derived from their thread rows and processes that are not */
	ck_assert_int_eq(store_exec(s,
			     "SELECT hex(substr(bpf, 1, 3)) FROM window_parts"
			     " WHERE bpf IS NOT NULL",
			     v, sizeof(v)),
	    0);
	ck_assert_str_eq(v, "B70404");
	count_derived(window_sched(w1), &nd, &nn);
	ck_assert_uint_ge(nd, 3);
	ck_assert_uint_ge(nn, 3);
	ck_assert_uint_ge(window_sched(w1)->nthreads, 20);
	ck_assert_int_eq(store_exec(s,
			     "SELECT count(*) FROM window_key"
			     " WHERE kind = 'bpf' AND key = 'state'",
			     v, sizeof(v)),
	    0);
	ck_assert_str_eq(v, "1");

	ck_assert_int_eq(store_windows(s, wall, wall + 20 * SEC, 0, &ws, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	assert_bpf_eq(window_sched(ws[0]), window_sched(w1));
	assert_bpf_eq(window_sched(ws[1]), window_sched(w2));
	for (i = 0; i < n; i++)
		window_free(ws[i]);
	free(ws);

	/* a coarser read merges the two: sums as window_bpf_merge makes */
	ck_assert_int_eq(store_windows(s, wall, wall + 20 * SEC, 60, &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	window_bpf_merge(window_sched(w1), window_sched(w2));
	assert_bpf_eq(window_sched(ws[0]), window_sched(w1));
	window_free(ws[0]);
	free(ws);
	store_close(s);
	window_free(w1);
	window_free(w2);
}
END_TEST

/* The sched part of w, zeros when it has none (what a missing part means). */
static const struct window_bpf *
sched_of(const struct window *w)
{
	static const struct window_bpf none;

	return window_sched(w) ? window_sched(w) : &none;
}

/* A window without a BPF part (an older build's) reads back without one. */
START_TEST(test_store_no_bpf_part)
{
	int64_t wall = 1700000000LL * SEC;
	struct window *w = mkwin(1, wall, 0), **ws = NULL;
	struct store *s = open_store();
	size_t n = 0;

	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_windows(s, wall, wall + 10 * SEC, 0, &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_null(window_sched(ws[0])); /* no part */
	ck_assert_uint_eq(sched_of(ws[0])->state, VBPF_UNKNOWN);
	ck_assert_uint_eq(sched_of(ws[0])->nuids, 0);
	window_free(ws[0]);
	free(ws);
	store_close(s);
	window_free(w);
}
END_TEST

START_TEST(test_store_migrates_v2)
{
	char path[PATH_MAX], v[64];
	struct store *s;

	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	ck_assert_int_eq(store_create_version(path, 2, NULL), 0);
	s = open_store();
	ck_assert_int_eq(store_exec(s, "PRAGMA user_version", v, sizeof(v)), 0);
	ck_assert_int_eq(atoi(v), STORE_SCHEMA_VERSION);
	/* v3's tables, converted to blobs by v9 */
	ck_assert_int_eq(
	    store_exec(s,
		"SELECT count(*) FROM sqlite_schema"
		" WHERE name IN ('window_bpf_uid', 'window_bpf_proc')",
		v, sizeof(v)),
	    0);
	ck_assert_str_eq(v, "0");
	ck_assert_int_eq(store_exec(s,
			     "SELECT count(*) FROM sqlite_schema"
			     " WHERE name = 'window_parts'",
			     v, sizeof(v)),
	    0);
	ck_assert_str_eq(v, "1");
	store_close(s);
}
END_TEST

START_TEST(test_dump)
{
	struct window *w = mkwin(1, 1700000000LL * SEC, 3);
	struct vbuf b = { 0 };

	ck_assert_int_eq(dump_window(w, 5, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "bpf: loaded; on-CPU"));
	ck_assert_ptr_nonnull(strstr(b.p, "bpf prog sched_switch"));
	ck_assert_ptr_nonnull(strstr(b.p, "bpf uid 10002"));
	ck_assert_ptr_nonnull(strstr(b.p, "p99 <= 2 ms"));
	vbuf_reset(&b);
	dump_summary_line(w, &b);
	ck_assert_ptr_nonnull(strstr(b.p, ", bpf loaded "));
	vbuf_release(&b);

	window_sched(w)->state = VBPF_OFF_NO_PRIV;
	window_sched(w)->err = -EPERM;
	window_sched(w)->drains = 0;
	ck_assert_int_eq(dump_window(w, 5, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "bpf: off_no_priv ("));
	ck_assert_ptr_nonnull(strstr(b.p, "procfs only"));
	vbuf_release(&b);
	window_free(w);
}
END_TEST

START_TEST(test_config_keys)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_str_eq(cfg.bpffs, "/sys/fs/bpf/vitals");
	ck_assert_uint_eq(cfg.bpf_load, VBPF_LOAD_AUTO);
	ck_assert(!cfg.bpf_stats);
	ck_assert_int_eq(config_set(&cfg, "bpffs", "/sys/fs/bpf"), 0);
	ck_assert_str_eq(cfg.bpffs, "/sys/fs/bpf");
	ck_assert_int_eq(config_set(&cfg, "bpffs", ""), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "bpf_load", "pinned-only"), 0);
	ck_assert_uint_eq(cfg.bpf_load, VBPF_LOAD_PINNED_ONLY);
	ck_assert_int_eq(config_set(&cfg, "bpf_load", "off"), 0);
	ck_assert_uint_eq(cfg.bpf_load, VBPF_LOAD_OFF);
	ck_assert_int_eq(config_set(&cfg, "bpf_load", "sometimes"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "bpf_stats", "on"), 0);
	ck_assert(cfg.bpf_stats);
	ck_assert_int_eq(config_set(&cfg, "bpf_stats", "1"), -EINVAL);
	config_release(&cfg);
}
END_TEST

static Suite *
bpf_window_suite(void)
{
	Suite *s = suite_create("bpf_window");
	TCase *tc = tcase_create("pure");
	TCase *st = tcase_create("store");

	tcase_add_test(tc, test_quantile);
	tcase_add_test(tc, test_ns_to_ticks);
	tcase_add_test(tc, test_add_folds_and_keeps_totals);
	tcase_add_test(tc, test_rows_bound_and_threads);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_rq_per_uid_and_thread);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_dump);
	tcase_add_test(tc, test_config_keys);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(st, setup, teardown);
	tcase_add_test(st, test_store_round_trip);
	tcase_add_test(st, test_store_no_bpf_part);
	tcase_add_test(st, test_store_migrates_v2);
	suite_add_tcase(s, st);
	return s;
}

int
main(void)
{
	return tu_run(bpf_window_suite());
}
