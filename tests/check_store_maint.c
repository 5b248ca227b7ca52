/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the window store's maintenance (store_maint.c): roll-ups
 * in batches and through the store, late arrivals, burst windows, reads at
 * each granularity, retention by age and by size.
 *
 * Every test works in its own temporary directory (tests/lib/store_fix.c).
 */
#include <check.h>
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_fix.h"
#include "testutil.h"
#include "vitalsd.h"

/* --------------------------------------------------------------- roll-ups */

/* Six 10 s windows per minute with figures that are easy to sum. */
static struct window *
roll_window(unsigned k, int64_t wall)
{
	struct window *w = sf_mkwin(1000 + k, wall);

	w->d_ctxt = 100 + k;
	w->all.d.user = k;
	w->all.d.idle = 1000;
	w->all.samples = 10;
	w->all.wall_ns = 10 * SEC;
	w->inv_samples[INV_SLEPT] = k % 2;
	gauge_add(&w->load1, (double)k);
	gauge_add(&w->mem_kb[MI_MEMFREE], 1000.0 * k);
	w->mem_have = 1u << MI_MEMFREE;
	w->d_vm[VM_PGMAJFAULT] = k;
	w->vm_have = 1u << VM_PGMAJFAULT;
	w->health.sample_ns_max = 1000 * k;
	sf_add_task(w, false, sf_mktask(42, 4200, 1, k));
	if (k % 2)
		sf_add_task(w, false, sf_mktask(43, 4300, 2, 0));
	sf_add_task(w, true, sf_mktask(4242, 4200, 1, 1));
	return w;
}

/* rollup_batch_s: nothing rolls until a window is an hour past its age,
 * then every window of age does, in the same pass, sums intact */
START_TEST(rollup_in_batches)
{
	int64_t t1 = T0 + (6 * 3600 + 1800) * SEC;
	int64_t t2 = T0 + (7 * 3600 + 120) * SEC;
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	struct window **v;
	size_t n;
	unsigned k;

	store_opts_default(&o);
	ck_assert_int_eq(o.rollup_batch_s, 3600);
	s = sf_open_opts(&o);
	for (k = 0; k < 12; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	sf_put(s, roll_window(50, T0 + 2400 * SEC)); /* of age, not yet due */
	sf_put(s, roll_window(99, t2 - 60 * SEC));   /* too young at t2 */
	/* of age (6 h) but not an hour past it: nothing rolls */
	ck_assert_int_eq(store_maintain(s, t1), 0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 1"),
	    0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 0);
	/* the first buckets are an hour past: all of age roll at once */
	ck_assert_int_eq(store_maintain(s, t2), 0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 1"),
	    3);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 0"),
	    1);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 13);
	ck_assert_int_eq(store_windows(s, T0, T0 + 60 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	ck_assert_uint_eq(v[0]->samples, 60);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 6 + 15);
	sf_free_windows(v, n);
	store_close(s);
}
END_TEST

/* store_span.c: tests only, a roll-up committed without its sweep */
extern bool store_span_nosweep;

/* The sum of pid 42's d_utime over [T0, to) by a top-N read. */
static uint64_t
top_utime(struct store *s, int64_t to)
{
	struct window_task *t;
	uint64_t sum = 0;
	size_t n, i;

	ck_assert_int_eq(store_top(s, T0, to, false, METRIC_CPU, 10, &t, &n),
	    0);
	for (i = 0; i < n; i++)
		if (t[i].id == 42)
			sum += t[i].d_utime;
	free(t);
	return sum;
}

#define SPAN_TABLES(s, k)                                      \
	sf_q_int((s),                                          \
	    "SELECT count(*) FROM sqlite_schema WHERE name IN" \
	    " ('l0_tasks_" #k "', 'l0_parts_" #k "')")

/* Level 0 in tables per hour (v27): a roll-up of a whole hour drops its
 * tables, and reads answer as before (T0 is in hour 472222; t2's young
 * window in hour 472229) */
START_TEST(rollup_drops_span_tables)
{
	int64_t t2 = T0 + (7 * 3600 + 120) * SEC;
	struct store_opts o;
	struct store *s;
	uint64_t before;
	unsigned k;

	store_opts_default(&o);
	s = sf_open_opts(&o);
	for (k = 0; k < 12; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	sf_put(s, roll_window(99, t2 - 60 * SEC));
	ck_assert_int_eq(SPAN_TABLES(s, 472222), 2);
	ck_assert_int_eq(SPAN_TABLES(s, 472229), 2);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM l0_tasks_472222"),
	    12);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM main.window_tasks"),
	    0);
	before = top_utime(s, t2);
	ck_assert_int_eq(store_maintain(s, t2), 0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 1"),
	    2);
	/* the rolled hour's tables went whole, the young one's stayed */
	ck_assert_int_eq(SPAN_TABLES(s, 472222), 0);
	ck_assert_int_eq(SPAN_TABLES(s, 472229), 2);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM main.window_tasks"),
	    2);
	ck_assert_uint_eq(top_utime(s, t2), before);
	store_close(s);
}
END_TEST

/* A crash between a roll-up's commit and its tables' drop (the sweep
 * skipped, the handle closed without it): the next open drops them, and
 * nothing is read twice meanwhile or after */
START_TEST(crash_between_rollup_and_drop)
{
	int64_t t2 = T0 + (7 * 3600 + 120) * SEC;
	struct store_opts o;
	struct store *s;
	uint64_t before;
	unsigned k;

	store_opts_default(&o);
	s = sf_open_opts(&o);
	for (k = 0; k < 12; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	sf_put(s, roll_window(99, t2 - 60 * SEC));
	before = top_utime(s, t2);
	store_span_nosweep = true;
	ck_assert_int_eq(store_maintain(s, t2), 0);
	store_close(s);
	/* as the crash left it: the level-0 rows of windows rolled */
	s = NULL;
	{
		sqlite3 *db;
		sqlite3_stmt *st;

		ck_assert_int_eq(sqlite3_open(sf_path, &db), SQLITE_OK);
		ck_assert_int_eq(sqlite3_prepare_v2(db,
				     "SELECT count(*) FROM l0_tasks_472222"
				     " WHERE window_id NOT IN (SELECT id FROM"
				     " windows)",
				     -1, &st, NULL),
		    SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		ck_assert_int_eq(sqlite3_column_int(st, 0), 12);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	store_span_nosweep = false;
	s = sf_open_opts(&o);
	ck_assert_int_eq(SPAN_TABLES(s, 472222), 0);
	ck_assert_int_eq(SPAN_TABLES(s, 472229), 2);
	ck_assert_uint_eq(top_utime(s, t2), before);
	/* and a window put after takes a new id, no leftover row */
	sf_put(s, roll_window(100, t2 - 50 * SEC));
	ck_assert_uint_eq(top_utime(s, t2), before + 1); /* its 1 tick */
	store_close(s);
}
END_TEST

static uint64_t disk_bytes(void);

/* The size bound rolls before it deletes: windows of age but not yet due
 * in their batch roll when the file is near its bound, where the bound
 * would have deleted the oldest of them */
START_TEST(size_bound_rolls_first)
{
	int64_t t1 = T0 + (6 * 3600 + 1800) * SEC;
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	long long used;
	unsigned k;

	store_opts_default(&o);
	ck_assert_int_gt(o.rollup_batch_s, 1800);
	o.max_bytes = 8u << 20;
	s = sf_open_opts(&o);
	for (k = 0; k < 240; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	used = sf_q_int(s,
	    "SELECT (p.page_count - f.freelist_count) * z.page_size FROM "
	    "pragma_page_count p, pragma_freelist_count f, "
	    "pragma_page_size z");
	store_close(s);
	/* the main file's budget (7/8 of max_bytes) 3% under what is
	 * stored: the bound must make room at the next pass */
	o.max_bytes = (uint64_t)used * 97 / 100 * 8 / 7;
	s = sf_open_opts(&o);
	ck_assert_int_eq(store_maintain(s, t1), 0);
	store_get_stats(s, &st);
	ck_assert_uint_gt(st.windows_rolled, 0);
	ck_assert_uint_eq(st.deleted_size, 0);
	/* the oldest window is kept, rolled */
	ck_assert_int_eq(sf_q_int(s, "SELECT min(wall_start_ns) FROM windows"),
	    T0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT level FROM windows ORDER BY wall_start_ns "
			     "LIMIT 1"),
	    1);
	store_close(s);
	ck_assert_uint_le(disk_bytes(), o.max_bytes);
}
END_TEST

START_TEST(rollup_through_store)
{
	int64_t now = T0 + 7 * 3600 * SEC;
	struct store *s = sf_open_default();
	struct store_stats st;
	struct window **v, *w;
	const struct window_task *t;
	size_t n;
	unsigned k;

	for (k = 0; k < 12; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	sf_put(s, roll_window(99, now - 60 * SEC)); /* too young to roll */
	ck_assert_int_eq(store_maintain(s, now), 0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 1"),
	    2);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 0"),
	    1);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 12);
	/* the children of the merged windows went with them */
	ck_assert_int_eq(
	    sf_q_int(s,
		"SELECT count(*) FROM window_tasks t WHERE"
		" NOT EXISTS (SELECT 1 FROM windows w WHERE w.id = t.window_id)"),
	    0);

	ck_assert_int_eq(store_windows(s, T0, T0 + 60 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	w = v[0];
	ck_assert_uint_eq(w->level, 1);
	ck_assert_uint_eq(w->seq, 1000);
	ck_assert_int_eq(w->wall_start_ns, T0);
	ck_assert_int_eq(w->wall_end_ns, T0 + 60 * SEC);
	ck_assert_int_eq(w->mono_start_ns, 1000 * 10 * SEC);
	ck_assert_int_eq(w->mono_end_ns, 1006 * 10 * SEC);
	ck_assert_uint_eq(w->samples, 60);
	ck_assert_uint_eq(w->d_ctxt, 100 * 6 + 15);
	ck_assert_uint_eq(w->all.d.user, 15);
	ck_assert_uint_eq(w->all.d.idle, 6000);
	ck_assert_uint_eq(w->all.wall_ns, 60 * SEC);
	ck_assert_uint_eq(w->inv_samples[INV_SLEPT], 3);
	ck_assert_uint_eq(w->d_vm[VM_PGMAJFAULT], 15);
	ck_assert_uint_eq(w->load1.n, 6);
	ck_assert_double_eq(w->load1.min, 0);
	ck_assert_double_eq(w->load1.max, 5);
	ck_assert_double_eq(gauge_avg(&w->load1), 2.5);
	ck_assert_double_eq(w->load1.last, 5);
	ck_assert_double_eq(w->mem_kb[MI_MEMFREE].max, 5000);
	ck_assert_uint_eq(w->health.sample_ns_max, 5000);
	ck_assert_uint_eq(w->nprocs, 2);
	ck_assert_ptr_nonnull(t = sf_find_task(w, false, 42, 4200));
	ck_assert_uint_eq(t->d_utime, 6);
	ck_assert_uint_eq(t->d_stime, 15);
	ck_assert_uint_eq(t->samples, 60);
	ck_assert_ptr_nonnull(t = sf_find_task(w, false, 43, 4300));
	ck_assert_uint_eq(t->d_utime, 6);
	ck_assert_uint_eq(t->samples, 30);
	ck_assert_ptr_nonnull(t = sf_find_task(w, true, 4242, 4200));
	ck_assert_uint_eq(t->d_stime, 6);
	sf_free_windows(v, n);

	/* a day later both minutes fold into one 10-minute window */
	now = T0 + 25 * 3600 * SEC;
	ck_assert_int_eq(store_maintain(s, now), 0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 2"),
	    1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	w = v[0];
	ck_assert_uint_eq(w->level, 2);
	ck_assert_uint_eq(w->samples, 120);
	ck_assert_uint_eq(w->d_ctxt, 100 * 12 + 66);
	ck_assert_uint_eq(w->load1.n, 12);
	ck_assert_double_eq(w->load1.min, 0);
	ck_assert_double_eq(w->load1.max, 11);
	ck_assert_double_eq(gauge_avg(&w->load1), 5.5);
	ck_assert_int_eq(w->wall_end_ns, T0 + 120 * SEC);
	ck_assert_ptr_nonnull(t = sf_find_task(w, false, 42, 4200));
	ck_assert_uint_eq(t->d_stime, 66);
	ck_assert_uint_eq(t->samples, 120);
	ck_assert_ptr_nonnull(t = sf_find_task(w, false, 43, 4300));
	ck_assert_uint_eq(t->d_utime, 12);
	ck_assert_uint_eq(t->samples, 60);
	/* level 2 keeps processes only: the thread's figures are in 42's */
	ck_assert_uint_eq(w->nthreads, 0);
	ck_assert_ptr_null(sf_find_task(w, true, 4242, 4200));
	sf_free_windows(v, n);
	ck_assert_int_eq(
	    sf_q_int(s,
		"SELECT count(*) FROM window_tasks t JOIN windows w"
		" ON w.id = t.window_id WHERE w.level = 2 AND"
		" t.threads IS NOT NULL"),
	    0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 12 + 2 + 1);

	/* a replay of a window already rolled up is not counted twice */
	{
		struct window *r = roll_window(3, T0 + 30 * SEC);

		ck_assert_int_eq(store_put(s, r), 0);
		window_free(r);
	}
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE wall_start_ns < "
			     "1700000400000000000"),
	    1);
	store_close(s);
}
END_TEST

/* A store rolling at every pass (rollup2_threads as keep) holding two
 * minutes of mk's windows. */
static struct store *
roll_store(bool keep, struct window *(*mk)(unsigned, int64_t))
{
	struct store_opts o;
	struct store *s;
	unsigned k;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.rollup2_threads = keep;
	s = sf_open_opts(&o);
	for (k = 0; k < 12; k++)
		sf_put(s, mk(k, T0 + k * 10 * SEC));
	return s;
}

/* rollup2_threads on: level 2 keeps the thread rows, summed exactly. */
START_TEST(rollup2_keeps_threads_when_asked)
{
	struct store *s = roll_store(true, roll_window);
	struct window **v;
	const struct window_task *t;
	size_t n;

	ck_assert_int_eq(store_maintain(s, T0 + 7 * 3600 * SEC), 0);
	ck_assert_int_eq(store_maintain(s, T0 + 25 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 2);
	ck_assert_uint_eq(v[0]->nthreads, 1);
	ck_assert_ptr_nonnull(t = sf_find_task(v[0], true, 4242, 4200));
	ck_assert_uint_eq(t->d_stime, 12);
	ck_assert_uint_eq(t->samples, 120);
	sf_free_windows(v, n);
	store_close(s);
}
END_TEST

/*
 * roll_window() with a BPF part (a uid, process 42 with two thread rows, an
 * exited thread's 100 ns only in the process's and uid's figures, a thread
 * "other" row) and a wcpu part with process and thread rows: the BPF
 * part's two, and 4244, which the BPF part does not have (a roll-up cuts
 * it, as a close would have), one more already cut.
 */
/* A thread row of process 42 (uid 10000): its on-CPU time and `count`
 * waits of rq_ns in all, every one in histogram slot `slot`. */
static void
bpf_thread(struct window_bpf *b, int32_t tid, uint64_t starttime,
    uint64_t oncpu_ns, unsigned slot, uint32_t count, uint64_t rq_ns)
{
	struct window_bpf_thread *t = &b->thread[b->nthreads++];

	t->tid = tid;
	t->tgid = 42;
	t->uid = 10000;
	t->starttime = starttime;
	t->oncpu_ns = oncpu_ns;
	t->rq_hist[slot] = count;
	t->rq_count = count;
	t->rq_ns = rq_ns;
}

static struct window *
roll_window_bpf(unsigned k, int64_t wall)
{
	struct window *w = roll_window(k, wall);
	struct window_bpf *b = window_sched_make(w, true);
	struct window_wcpu *wc = window_wcpu_new();
	struct window_bpf_proc *p;

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(wc);
	b->state = VBPF_ON_LOADED;
	b->drains = 1;
	ck_assert_int_eq(window_bpf_reserve(b, 1, 1, 2), 0);
	p = &b->proc[b->nprocs++];
	p->tgid = 42;
	p->starttime = 4200;
	bpf_thread(b, 4242, 4200, 1000 + k, 1, 2, 5000);
	bpf_thread(b, 4243, 4201, 500, 3, 1, 9000);
	p->oncpu_ns = 1000 + k + 500 + 100;
	p->rq_ns = 14000;
	p->rq_count = 3;
	p->rq_hist[1] = 2;
	p->rq_hist[3] = 1;
	b->threads_other = 1;
	b->thread_other.tid = -1;
	b->thread_other.tgid = -1;
	b->thread_other.uid = UINT32_MAX;
	b->thread_other.oncpu_ns = 7;
	b->nuids = 1;
	b->uid[0].uid = 10000;
	b->uid[0].oncpu_ns = p->oncpu_ns + 7;
	b->uid[0].exited_ns = 100;
	b->uid[0].exited_tasks = 1;
	b->oncpu_ns = b->uid[0].oncpu_ns;

	wc->drains = 1;
	wc->oncpu_ns = wc->wtd_ns = p->oncpu_ns;
	wc->procs = calloc(1, sizeof(*wc->procs));
	wc->threads = calloc(3, sizeof(*wc->threads));
	ck_assert(wc->procs && wc->threads);
	wc->procs[0] = (struct wcpu_row){ 42, 42, 4200, p->oncpu_ns,
		p->oncpu_ns };
	wc->threads[0] = (struct wcpu_row){ 4242, 42, 4200, 1000 + k,
		1000 + k };
	wc->threads[1] = (struct wcpu_row){ 4243, 42, 4201, 500, 500 };
	wc->threads[2] = (struct wcpu_row){ 4244, 42, 4202, 3, 3 };
	wc->nprocs = 1;
	wc->nthreads = 3;
	wc->threads_cut = 1;
	window_part_set(w, WPART_WCPU, wc);
	return w;
}

/*
 * Level 2 drops the parts' thread rows with the tasks' (rollup2_threads
 * off, the default: _i 0): the BPF thread rows, the "other" thread row and
 * the wcpu thread rows; the process's and uid's BPF figures and the wcpu
 * process row stay summed exactly. Level 1 keeps them all, and so does
 * level 2 with rollup2_threads on (_i 1). Each roll-up keeps the wcpu
 * part to the BPF part's tasks (wcpu_keep_bpf_rows).
 */
START_TEST(rollup2_drops_part_threads)
{
	bool keep = _i == 1;
	struct store *s = roll_store(keep, roll_window_bpf);
	const struct window_bpf *b;
	const struct window_wcpu *wc;
	struct window **v;
	size_t n;

	/* level 1: two minutes, every thread row the BPF part has kept;
	 * 4244 cut (6 cuts summed, 1 at the roll-up) */
	ck_assert_int_eq(store_maintain(s, T0 + 7 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 60 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	ck_assert_ptr_nonnull(b = window_sched(v[0]));
	ck_assert_uint_eq(b->nthreads, 2);
	ck_assert_uint_eq(b->thread_other.oncpu_ns, 6 * 7);
	ck_assert_ptr_nonnull(wc = window_wcpu(v[0]));
	ck_assert_uint_eq(wc->nthreads, 2);
	ck_assert_uint_eq(wc->threads_cut, 7);
	ck_assert_ptr_null(wcpu_find(wc, true, 4244, 4202));
	sf_free_windows(v, n);

	/* level 2: one ten-minute window */
	ck_assert_int_eq(store_maintain(s, T0 + 25 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 2);
	ck_assert_ptr_nonnull(b = window_sched(v[0]));
	ck_assert_uint_eq(b->nprocs, 1);
	ck_assert_int_eq(b->proc[0].tgid, 42);
	/* Σ (1,000 + k + 600) over k = 0..11 */
	ck_assert_uint_eq(b->proc[0].oncpu_ns, 12 * 1600 + 66);
	ck_assert_uint_eq(b->proc[0].rq_count, 36);
	ck_assert_uint_eq(b->proc[0].rq_ns, 12 * 14000);
	ck_assert_uint_eq(b->proc[0].rq_hist[1], 24);
	ck_assert_uint_eq(b->proc[0].rq_hist[3], 12);
	ck_assert_uint_eq(b->nuids, 1);
	ck_assert_uint_eq(b->uid[0].oncpu_ns, 12 * 1607 + 66);
	ck_assert_uint_eq(b->uid[0].exited_ns, 1200);
	ck_assert_ptr_nonnull(wc = window_wcpu(v[0]));
	ck_assert_uint_eq(wc->nprocs, 1);
	ck_assert_uint_eq(wc->procs[0].oncpu_ns, 12 * 1600 + 66);
	if (keep) {
		ck_assert_uint_eq(b->nthreads, 2);
		ck_assert_int_eq(b->thread[0].tid, 4242);
		ck_assert_uint_eq(b->thread[0].oncpu_ns, 12 * 1000 + 66);
		ck_assert_uint_eq(b->thread[0].rq_hist[1], 24);
		ck_assert_uint_eq(b->threads_other, 12);
		ck_assert_uint_eq(b->thread_other.oncpu_ns, 12 * 7);
		ck_assert_uint_eq(wc->nthreads, 2);
		ck_assert_uint_eq(wc->threads[0].oncpu_ns, 12 * 1000 + 66);
		ck_assert_uint_eq(wc->threads_cut, 14);
		ck_assert_uint_eq(v[0]->nthreads, 1);
	} else {
		ck_assert_uint_eq(b->nthreads, 0);
		ck_assert_ptr_null(b->thread);
		ck_assert_uint_eq(b->threads_other, 0);
		ck_assert_uint_eq(b->thread_other.oncpu_ns, 0);
		ck_assert_uint_eq(b->thread_other.rq_count, 0);
		ck_assert_int_eq(b->thread_other.tid, -1);
		ck_assert_int_eq(b->thread_other.tgid, -1);
		ck_assert_uint_eq(b->thread_other.uid, UINT32_MAX);
		ck_assert_uint_eq(wc->nthreads, 0);
		ck_assert_uint_eq(wc->threads_cut, 0);
		ck_assert_uint_eq(v[0]->nthreads, 0);
	}
	sf_free_windows(v, n);
	store_close(s);
}
END_TEST

/* A window that arrives after its minute was rolled joins that minute. */
START_TEST(rollup_late_arrival_joins_bucket)
{
	int64_t now = T0 + 7 * 3600 * SEC;
	struct store *s = sf_open_default();
	struct window **v;
	size_t n;
	unsigned k;

	for (k = 0; k < 3; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	ck_assert_int_eq(store_maintain(s, now), 0);
	sf_put(s, roll_window(4, T0 + 40 * SEC)); /* not covered: new data */
	ck_assert_int_eq(store_maintain(s, now), 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 60 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 + 101 + 102 + 104);
	ck_assert_uint_eq(v[0]->load1.n, 4);
	sf_free_windows(v, n);
	store_close(s);
}
END_TEST

/*
 * Windows sampled in a burst stay at full resolution (level 0) for
 * burst_keep_s, while their neighbours roll up; then they join their
 * buckets' windows as late arrivals, and the sums are whole. With 0 they
 * roll as any other.
 */
START_TEST(rollup_keeps_burst_windows)
{
	struct store_opts o;
	struct store *s;
	struct window **v, *w;
	size_t n;
	unsigned k;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	ck_assert_int_eq(o.burst_keep_s, 24 * 3600);
	s = sf_open_opts(&o);
	for (k = 0; k < 12; k++) {
		w = roll_window(k, T0 + k * 10 * SEC);
		if (k == 3 || k == 8)
			w->health.burst_samples = 5;
		sf_put(s, w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 7 * 3600 * SEC), 0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 0"
			     " AND burst_samples = 5"),
	    2);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 1"),
	    2);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT d_ctxt FROM windows WHERE level = 1"
			     " ORDER BY wall_start_ns LIMIT 1"),
	    100 * 5 + 0 + 1 + 2 + 4 + 5);
	/* a day on: they roll too, level 1 then level 2, nothing lost */
	ck_assert_int_eq(store_maintain(s, T0 + 25 * 3600 * SEC), 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 2);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 12 + 66);
	ck_assert_uint_eq(v[0]->samples, 120);
	ck_assert_uint_eq(v[0]->health.burst_samples, 10);
	sf_free_windows(v, n);
	store_close(s);

	/* burst_keep_s 0: no exception (a new database) */
	sf_teardown();
	sf_setup();
	o.burst_keep_s = 0;
	s = sf_open_opts(&o);
	for (k = 0; k < 12; k++) {
		w = roll_window(k, T0 + k * 10 * SEC);
		w->health.burst_samples = k == 3 ? 5 : 0;
		sf_put(s, w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 7 * 3600 * SEC), 0);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 0"),
	    0);
	store_close(s);
}
END_TEST

START_TEST(windows_at_granularity)
{
	struct store *s = sf_open_default();
	struct window **v;
	size_t n;
	unsigned k;

	for (k = 0; k < 12; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	ck_assert_int_eq(store_windows(s, T0, T0 + 120 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 12);
	sf_free_windows(v, n);
	ck_assert_int_eq(store_windows(s, T0, T0 + 120 * SEC, 60, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0]->d_ctxt, 615);
	ck_assert_uint_eq(v[1]->d_ctxt, 100 * 6 + 6 + 7 + 8 + 9 + 10 + 11);
	ck_assert_uint_eq(v[1]->load1.n, 6);
	ck_assert_double_eq(v[1]->load1.min, 6);
	sf_free_windows(v, n);
	/* a range that cuts windows takes every window it overlaps */
	ck_assert_int_eq(store_windows(s, T0 + 15 * SEC, T0 + 21 * SEC, 0, &v,
			     &n),
	    0);
	ck_assert_uint_eq(n, 2);
	sf_free_windows(v, n);
	ck_assert_int_eq(store_windows(s, T0 + 500 * SEC, T0 + 600 * SEC, 0, &v,
			     &n),
	    0);
	ck_assert_uint_eq(n, 0);
	free(v);
	ck_assert_int_eq(store_windows(s, T0, T0, 0, &v, &n), -EINVAL);
	store_close(s);
}
END_TEST

/* A capped read loads only the newest windows (buckets), oldest first. */
START_TEST(windows_newest_max)
{
	struct store *s = sf_open_default();
	struct window **v;
	bool trunc;
	size_t n;
	unsigned k;

	for (k = 0; k < 12; k++)
		sf_put(s, roll_window(k, T0 + k * 10 * SEC));
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 3, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert(trunc);
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(v[k]->wall_start_ns, T0 + (9 + k) * 10 * SEC);
		ck_assert_uint_eq(v[k]->d_ctxt, 100 + 9 + k);
		ck_assert_uint_eq(v[k]->nprocs, (9 + k) % 2 ? 2 : 1);
		ck_assert_uint_eq(v[k]->nthreads, 1);
	}
	sf_free_windows(v, n);
	/* exactly as many as match, or more room: not truncated */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 12, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 12);
	ck_assert(!trunc);
	ck_assert_int_eq(v[0]->wall_start_ns, T0);
	sf_free_windows(v, n);
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 100, &v,
			     &n, &trunc),
	    0);
	ck_assert_uint_eq(n, 12);
	ck_assert(!trunc);
	sf_free_windows(v, n);
	/* 0: no limit */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 0, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 12);
	ck_assert(!trunc);
	sf_free_windows(v, n);
	/* a range cut inside: the newest of that range */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 45 * SEC, 0, 2, &v, &n,
			     NULL),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0]->wall_start_ns, T0 + 30 * SEC);
	ck_assert_int_eq(v[1]->wall_start_ns, T0 + 40 * SEC);
	sf_free_windows(v, n);

	/* at a granularity the cap counts buckets, each merged whole */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 60, 1, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert(trunc);
	ck_assert_int_eq(v[0]->wall_start_ns, T0 + 60 * SEC);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 6 + 6 + 7 + 8 + 9 + 10 + 11);
	ck_assert_uint_eq(v[0]->load1.n, 6);
	sf_free_windows(v, n);
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 60, 2, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert(!trunc);
	ck_assert_uint_eq(v[0]->d_ctxt, 615);
	sf_free_windows(v, n);
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 30, 3, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert(trunc);
	ck_assert_int_eq(v[0]->wall_start_ns, T0 + 30 * SEC);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 3 + 3 + 4 + 5);
	ck_assert_int_eq(v[2]->wall_start_ns, T0 + 90 * SEC);
	ck_assert_uint_eq(v[2]->d_ctxt, 100 * 3 + 9 + 10 + 11);
	sf_free_windows(v, n);
	store_close(s);
}
END_TEST

/* -------------------------------------------------------------- retention */

static void
retention_by_age_in(enum store_vacuum v)
{
	int64_t now = T0 + 30LL * 86400 * SEC;
	struct store_opts o;
	struct store *s;
	struct store_stats st;
	uint64_t before;
	unsigned k;

	store_opts_default(&o);
	o.vacuum = v;
	s = sf_open_opts(&o);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"),
	    v == STORE_VACUUM_INCREMENTAL ? 2 : 0);

	for (k = 0; k < 50; k++)
		sf_put(s,
		    sf_full_window(k, now - 8LL * 86400 * SEC + k * 10 * SEC,
			100, 20));
	sf_put(s, sf_full_window(100, now - 6LL * 86400 * SEC, 1, 0));
	sf_put(s, sf_full_window(101, now - 60 * SEC, 1, 0));
	store_close(s);
	s = sf_open_opts(&o);
	store_get_stats(s, &st);
	before = st.db_bytes;
	ck_assert_int_eq(store_maintain(s, now), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.deleted_age, 50);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 2);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM window_tasks"), 2);
	/* the 6-day-old window was rolled up, the fresh one kept as is */
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT level FROM windows WHERE seq = 100"),
	    2);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT level FROM windows WHERE seq = 101"),
	    0);
	if (v == STORE_VACUUM_INCREMENTAL)
		/* incremental vacuum handed the pages back, past the
		 * reserve the next writes reuse (budget / 32: 896 KiB at
		 * the default bound) */
		ck_assert_int_le(sf_q_int(s, "PRAGMA freelist_count") *
			sf_q_int(s, "PRAGMA page_size"),
		    ((32LL << 20) - (4LL << 20)) / 32);
	else {
		/* NONE: the pages stay free in the file, for the next
		 * writes, and are taken before the file grows */
		long long nfree = sf_q_int(s, "PRAGMA freelist_count");
		long long pages = sf_q_int(s, "PRAGMA page_count");

		ck_assert_int_gt(nfree, 0);
		for (k = 0; k < 10; k++)
			sf_put(s,
			    sf_full_window(200 + k, now - 50 * SEC + k * SEC, 1,
				0));
		ck_assert_int_lt(sf_q_int(s, "PRAGMA freelist_count"), nfree);
		ck_assert_int_eq(sf_q_int(s, "PRAGMA page_count"), pages);
	}
	store_close(s);
	ck_assert_msg(sf_fsize(sf_path) <= before, "file %llu before %llu",
	    (unsigned long long)sf_fsize(sf_path), (unsigned long long)before);
}

START_TEST(retention_by_age)
{
	retention_by_age_in(STORE_VACUUM_NONE);
}
END_TEST

START_TEST(retention_by_age_incremental)
{
	retention_by_age_in(STORE_VACUUM_INCREMENTAL);
}
END_TEST

static uint64_t
disk_bytes(void)
{
	char wal[PATH_MAX + 8];

	snprintf(wal, sizeof(wal), "%s-wal", sf_path);
	return sf_fsize(sf_path) + sf_fsize(wal);
}

START_TEST(retention_by_size)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	long long lo, hi, cnt;
	unsigned k;

	store_opts_default(&o);
	o.rollup_batch_s = 0;	 /* roll at every pass */
	o.max_bytes = 256 << 10; /* a fraction of 150 windows, compressed */
	s = sf_open_opts(&o);
	for (k = 0; k < 150; k++) {
		sf_put(s, sf_full_window(k, T0 + k * 10 * SEC, 150, 50));
		ck_assert_msg(disk_bytes() <= o.max_bytes,
		    "after put %u: %llu bytes on disk", k,
		    (unsigned long long)disk_bytes());
		store_get_stats(s, &st);
		ck_assert_uint_le(st.db_bytes, o.max_bytes);
	}
	store_get_stats(s, &st);
	ck_assert_uint_gt(st.deleted_size, 0);
	ck_assert_int_eq(st.state, STORE_OK);
	/* oldest first: what is left is the newest run, without gaps */
	lo = sf_q_int(s, "SELECT min(seq) FROM windows");
	hi = sf_q_int(s, "SELECT max(seq) FROM windows");
	cnt = sf_q_int(s, "SELECT count(*) FROM windows");
	ck_assert_int_eq(hi, 149);
	ck_assert_int_eq(cnt, hi - lo + 1);
	ck_assert_int_gt(lo, 0);
	ck_assert_uint_eq(st.deleted_size, (uint64_t)lo);
	store_close(s);
	ck_assert_uint_le(disk_bytes(), o.max_bytes);

	/* a lower bound at the next open is enforced by maintenance */
	o.max_bytes = 512 << 10;
	s = sf_open_opts(&o);
	ck_assert_int_eq(store_maintain(s, T0 + 3600 * SEC), 0);
	ck_assert_uint_le(disk_bytes(), o.max_bytes);
	ck_assert_int_eq(sf_q_int(s, "SELECT max(seq) FROM windows"), 149);
	sf_assert_intact(s);
	store_close(s);
	ck_assert_uint_le(sf_fsize(sf_path), o.max_bytes);
}
END_TEST

/* auto_vacuum NONE: a bound lowered between runs leaves the file over
 * it with its free pages; the pass that deletes down to it rebuilds the
 * file (store_vacuum_over), which then fits, every window kept intact. */
START_TEST(retention_lowered_bound_none)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	uint64_t was;
	long long hi;
	unsigned k;

	store_opts_default(&o);
	ck_assert_int_eq(o.vacuum, STORE_VACUUM_NONE);
	o.rollup_batch_s = 0;
	o.max_bytes = 1 << 20;
	s = sf_open_opts(&o);
	for (k = 0; k < 120; k++)
		sf_put(s, sf_full_window(k, T0 + k * 10 * SEC, 150, 50));
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"), 0);
	store_close(s);
	was = disk_bytes();
	ck_assert_uint_gt(was, 300 << 10);

	o.max_bytes = 200 << 10;
	s = sf_open_opts(&o);
	ck_assert_int_eq(store_maintain(s, T0 + 1200 * SEC), 0);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"), 0);
	/* the free pages went with the rebuild */
	ck_assert_int_le(sf_q_int(s, "PRAGMA freelist_count"), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.rebuilds, 1);
	/* the next passes leave it be */
	ck_assert_int_eq(store_maintain(s, T0 + 1210 * SEC), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.rebuilds, 1);
	hi = sf_q_int(s, "SELECT max(seq) FROM windows");
	ck_assert_int_eq(hi, 119);
	ck_assert_int_lt(sf_q_int(s, "SELECT count(*) FROM windows"), 120);
	sf_assert_intact(s);
	store_close(s);
	ck_assert_msg(disk_bytes() <= o.max_bytes, "%llu on disk, was %llu",
	    (unsigned long long)disk_bytes(), (unsigned long long)was);
}
END_TEST

/* auto_vacuum NONE at its bound: each crossing deletes down to the
 * low-water mark inside the put, the pages it frees are reused by the
 * next puts, and no pass rebuilds the whole file (a VACUUM at every
 * crossing would write the file twice over each time). The file stays
 * within max_bytes with its WAL after every put. */
START_TEST(size_bound_none_no_rebuild)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	uint64_t fmax = 0;
	unsigned k;

	store_opts_default(&o);
	ck_assert_int_eq(o.vacuum, STORE_VACUUM_NONE);
	o.rollup_batch_s = 0;
	o.max_bytes = 512 << 10;
	s = sf_open_opts(&o);
	for (k = 0; k < 500; k++) {
		sf_put(s, sf_full_window(k, T0 + k * 10 * SEC, 150, 50));
		ck_assert_msg(disk_bytes() <= o.max_bytes,
		    "after put %u: %llu bytes on disk", k,
		    (unsigned long long)disk_bytes());
		if (k % 30 == 29)
			ck_assert_int_eq(store_maintain(s,
					     T0 + (k + 1) * 10 * SEC),
			    0);
		if (sf_fsize(sf_path) > fmax)
			fmax = sf_fsize(sf_path);
	}
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	/* the bound was crossed many times over */
	ck_assert_uint_gt(st.deleted_size, 100);
	ck_assert_uint_eq(st.rebuilds, 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT max(seq) FROM windows"), 499);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"), 0);
	store_close(s);
	/* the file: its budget plus at most what one put appended */
	ck_assert_msg(fmax <= o.max_bytes - o.max_bytes / 8 + (64 << 10),
	    "the file reached %llu", (unsigned long long)fmax);
}
END_TEST

/* A window that cannot fit even alone is refused, not half kept. */
START_TEST(size_window_too_big)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	struct window *w;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	/* an empty v8 store is 32 pages of 4 KiB (its tables and indexes) */
	o.max_bytes = 192 << 10;
	s = sf_open_opts(&o);
	sf_put(s, sf_full_window(1, T0, 2, 0));
	/* its instances alone are more than the bound */
	w = sf_full_window(2, T0 + 10 * SEC, 6000, 0);
	ck_assert_int_eq(store_put(s, w), -EFBIG);
	window_free(w);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.last_err, -EFBIG);
	ck_assert_uint_eq(st.deleted_size, 0);
	/* the earlier window was not sacrificed for it */
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 1);
	store_close(s);
}
END_TEST

static Suite *
store_maint_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc;

	tc = tcase_create("maintenance");
	tcase_add_checked_fixture(tc, sf_setup, sf_teardown);
	tcase_add_test(tc, rollup_through_store);
	tcase_add_test(tc, rollup_in_batches);
	tcase_add_test(tc, rollup_drops_span_tables);
	tcase_add_test(tc, crash_between_rollup_and_drop);
	tcase_add_test(tc, size_bound_rolls_first);
	tcase_add_test(tc, rollup_late_arrival_joins_bucket);
	tcase_add_test(tc, rollup_keeps_burst_windows);
	tcase_add_test(tc, rollup2_keeps_threads_when_asked);
	tcase_add_loop_test(tc, rollup2_drops_part_threads, 0, 2);
	tcase_add_test(tc, windows_at_granularity);
	tcase_add_test(tc, windows_newest_max);
	tcase_add_test(tc, retention_by_age);
	tcase_add_test(tc, retention_by_age_incremental);
	tcase_add_test(tc, retention_by_size);
	tcase_add_test(tc, retention_lowered_bound_none);
	tcase_add_test(tc, size_bound_none_no_rebuild);
	tcase_add_test(tc, size_window_too_big);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(store_maint_suite());
}
