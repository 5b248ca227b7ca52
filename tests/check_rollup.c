/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of rollup.c: window_merge arithmetic, figure by figure. Every
 * expected value is written out by hand rather than recomputed, so a wrong
 * formula cannot agree with itself.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "vitalsd.h"

static struct window_task
task(int32_t id, uint64_t starttime, uint64_t ut, uint64_t st)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.tgid = id;
	t.starttime = starttime;
	t.uid = 1000;
	snprintf(t.comm, sizeof(t.comm), "comm%d", id);
	window_task_set_namef(&t, "name%d", id);
	t.d_utime = ut;
	t.d_stime = st;
	t.d_minflt = ut * 10;
	t.d_majflt = st;
	t.samples = 10;
	t.wall_ns = 10 * NSEC_PER_SEC;
	t.total_ticks = 8000;
	t.norm_ticks = 1000.0;
	t.rss_pages_max = 100 + (uint64_t)id;
	t.rss_pages_last = 90 + (uint64_t)id;
	return t;
}

static const struct window_task *
find(const struct window *w, bool thread, int32_t id, uint64_t starttime)
{
	const struct window_task *arr = thread ? w->threads : w->procs;
	size_t n = thread ? w->nthreads : w->nprocs, i;

	for (i = 0; i < n; i++)
		if (arr[i].id == id && arr[i].starttime == starttime)
			return &arr[i];
	return NULL;
}

static struct window *
mkwin(uint64_t seq, int64_t start_s, unsigned span)
{
	struct window *w = window_new(seq, span);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "boot-a");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = start_s * NSEC_PER_SEC;
	w->mono_end_ns = (start_s + 10) * NSEC_PER_SEC;
	w->boot_start_ns = w->mono_start_ns + 5;
	w->boot_end_ns = w->mono_end_ns + 5;
	w->wall_start_ns = 1700000000 * NSEC_PER_SEC + w->mono_start_ns;
	w->wall_end_ns = 1700000000 * NSEC_PER_SEC + w->mono_end_ns;
	return w;
}

/* ------------------------------------------------------------ figures */

START_TEST(merge_times_and_counts)
{
	struct window *a = mkwin(7, 100, 0), *b = mkwin(8, 110, 0);
	unsigned i;

	a->level = 1;
	b->level = 0;
	b->interval_ms = 100;
	a->samples = 10;
	a->samples_valid = 9;
	b->samples = 11;
	b->samples_valid = 7;
	for (i = 0; i < INV__MAX; i++) {
		a->inv_samples[i] = i;
		b->inv_samples[i] = 10 * i;
		a->inv_deltas[i] = 100 + i;
		b->inv_deltas[i] = 1000 * i;
	}
	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_uint_eq(a->seq, 7);
	ck_assert_uint_eq(a->level, 1); /* the caller sets it */
	ck_assert_int_eq(a->mono_start_ns, 100 * NSEC_PER_SEC);
	ck_assert_int_eq(a->mono_end_ns, 120 * NSEC_PER_SEC);
	ck_assert_int_eq(a->boot_start_ns, 100 * NSEC_PER_SEC + 5);
	ck_assert_int_eq(a->boot_end_ns, 120 * NSEC_PER_SEC + 5);
	ck_assert_int_eq(a->wall_start_ns, 1700000100 * NSEC_PER_SEC);
	ck_assert_int_eq(a->wall_end_ns, 1700000120 * NSEC_PER_SEC);
	ck_assert_uint_eq(a->interval_ms, 100);
	ck_assert_uint_eq(a->hz, 100);
	ck_assert_uint_eq(a->samples, 21);
	ck_assert_uint_eq(a->samples_valid, 16);
	for (i = 0; i < INV__MAX; i++) {
		ck_assert_uint_eq(a->inv_samples[i], 11 * i);
		ck_assert_uint_eq(a->inv_deltas[i], 100 + 1001 * i);
	}
	window_free(a);
	window_free(b);
}
END_TEST

START_TEST(merge_system_deltas)
{
	struct window *a = mkwin(1, 0, 0), *b = mkwin(2, 10, 0);
	unsigned i;

	a->all.d = (struct cpu_times){ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	b->all.d = (struct cpu_times){ 10, 20, 30, 40, 50, 60, 70, 80, 90,
		100 };
	a->all.samples = 9;
	b->all.samples = 10;
	a->all.wall_ns = 9 * NSEC_PER_SEC;
	b->all.wall_ns = 10 * NSEC_PER_SEC + 3;
	a->d_ctxt = 1000;
	b->d_ctxt = 2500;
	a->d_processes = 4;
	b->d_processes = 6;
	for (i = 0; i < VM__MAX; i++) {
		a->d_vm[i] = i;
		b->d_vm[i] = 100 * i;
	}
	a->vm_samples = 9;
	b->vm_samples = 10;
	a->vm_have = 0x3;
	b->vm_have = 0x5;
	a->mem_have = 0x10;
	b->mem_have = 0x1;
	a->psi[PSI_IO].available = true;
	a->psi[PSI_IO].d_some_us = 500;
	a->psi[PSI_IO].samples = 9;
	b->psi[PSI_IO].available = true;
	b->psi[PSI_IO].have_full = true;
	b->psi[PSI_IO].d_some_us = 700;
	b->psi[PSI_IO].d_full_us = 300;
	b->psi[PSI_IO].samples = 10;
	b->psi[PSI_CPU].available = true; /* appeared in the later window */
	b->psi[PSI_CPU].d_some_us = 42;

	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_uint_eq(a->all.d.user, 11);
	ck_assert_uint_eq(a->all.d.nice, 22);
	ck_assert_uint_eq(a->all.d.system, 33);
	ck_assert_uint_eq(a->all.d.idle, 44);
	ck_assert_uint_eq(a->all.d.iowait, 55);
	ck_assert_uint_eq(a->all.d.irq, 66);
	ck_assert_uint_eq(a->all.d.softirq, 77);
	ck_assert_uint_eq(a->all.d.steal, 88);
	ck_assert_uint_eq(a->all.d.guest, 99);
	ck_assert_uint_eq(a->all.d.guest_nice, 110);
	ck_assert_uint_eq(a->all.samples, 19);
	ck_assert_uint_eq(a->all.wall_ns, 19 * NSEC_PER_SEC + 3);
	ck_assert_uint_eq(a->d_ctxt, 3500);
	ck_assert_uint_eq(a->d_processes, 10);
	for (i = 0; i < VM__MAX; i++)
		ck_assert_uint_eq(a->d_vm[i], 101 * i);
	ck_assert_uint_eq(a->vm_samples, 19);
	ck_assert_uint_eq(a->vm_have, 0x7);
	ck_assert_uint_eq(a->mem_have, 0x11);
	ck_assert(a->psi[PSI_IO].available);
	ck_assert(a->psi[PSI_IO].have_full);
	ck_assert_uint_eq(a->psi[PSI_IO].d_some_us, 1200);
	ck_assert_uint_eq(a->psi[PSI_IO].d_full_us, 300);
	ck_assert_uint_eq(a->psi[PSI_IO].samples, 19);
	ck_assert(a->psi[PSI_CPU].available);
	ck_assert_uint_eq(a->psi[PSI_CPU].d_some_us, 42);
	ck_assert(!a->psi[PSI_MEMORY].available);
	window_free(a);
	window_free(b);
}
END_TEST

/* min/avg/max over the union of readings: avg is Σ/n, not mean of means. */
START_TEST(merge_gauges_min_avg_max)
{
	struct window *a = mkwin(1, 0, 0), *b = mkwin(2, 10, 0);
	struct window *c = mkwin(3, 20, 0);

	gauge_add(&a->load1, 1.0);
	gauge_add(&a->load1, 5.0);
	gauge_add(&b->load1, 3.0);
	gauge_add(&b->load1, 9.0);
	gauge_add(&b->load1, 0.5);
	gauge_add(&c->load1, 2.0);
	/* empty in the middle: "no reading" is not a zero reading */
	gauge_add(&a->mem_kb[MI_MEMFREE], 1000);
	gauge_add(&c->mem_kb[MI_MEMFREE], 4000);
	gauge_add(&c->mem_kb[MI_MEMFREE], 7000);
	/* empty in the first window: the later one's values stand */
	gauge_add(&b->psi[PSI_MEMORY].some_avg10, 12.5);

	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_int_eq(window_merge(a, c), 0);
	ck_assert_uint_eq(a->load1.n, 6);
	ck_assert_double_eq(a->load1.min, 0.5);
	ck_assert_double_eq(a->load1.max, 9.0);
	ck_assert_double_eq(a->load1.sum, 20.5);
	ck_assert_double_eq_tol(gauge_avg(&a->load1), 20.5 / 6, 1e-12);
	ck_assert_double_eq(a->load1.last, 2.0);
	ck_assert_uint_eq(a->mem_kb[MI_MEMFREE].n, 3);
	ck_assert_double_eq(a->mem_kb[MI_MEMFREE].min, 1000);
	ck_assert_double_eq(a->mem_kb[MI_MEMFREE].max, 7000);
	ck_assert_double_eq(gauge_avg(&a->mem_kb[MI_MEMFREE]), 4000);
	ck_assert_double_eq(a->mem_kb[MI_MEMFREE].last, 7000);
	ck_assert_uint_eq(a->psi[PSI_MEMORY].some_avg10.n, 1);
	ck_assert_double_eq(a->psi[PSI_MEMORY].some_avg10.min, 12.5);
	ck_assert_double_eq(a->psi[PSI_MEMORY].some_avg10.max, 12.5);
	ck_assert_uint_eq(a->mem_kb[MI_MEMTOTAL].n, 0);
	ck_assert(isnan(gauge_avg(&a->mem_kb[MI_MEMTOTAL])));
	window_free(a);
	window_free(b);
	window_free(c);
}
END_TEST

START_TEST(merge_cpus)
{
	struct window *a = mkwin(1, 0, 2), *b = mkwin(2, 10, 4);
	struct window *c = mkwin(3, 20, 1);

	a->cpu[0].d.user = 5;
	a->cpu[0].samples = 10;
	a->cpu[0].online_end = true;
	a->cpu[0].max_khz = 2000000;
	a->cpu[0].capacity = 1024;
	gauge_add(&a->cpu[0].cur_khz, 1000000);
	gauge_add(&a->cpu[0].freq_ratio, 0.5);
	a->cpu[1].online_end = true;
	a->cpu[1].max_khz = 1500000;
	b->cpu[0].d.user = 7;
	b->cpu[0].samples = 10;
	b->cpu[0].online_end = false; /* went offline */
	b->cpu[0].max_khz = -1;	      /* cpufreq dir gone with it */
	b->cpu[0].capacity = -1;
	gauge_add(&b->cpu[0].cur_khz, 2000000);
	gauge_add(&b->cpu[0].freq_ratio, 1.0);
	b->cpu[3].d.idle = 99;
	b->cpu[3].samples = 3;
	b->cpu[3].wall_ns = 3 * NSEC_PER_SEC;
	b->cpu[3].online_end = true;
	b->cpu[3].max_khz = 3000000;
	b->cpu[3].capacity = 512;

	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_uint_eq(a->cpu_span, 4);
	ck_assert_uint_eq(a->cpu[0].d.user, 12);
	ck_assert_uint_eq(a->cpu[0].samples, 20);
	ck_assert(!a->cpu[0].online_end);
	ck_assert_int_eq(a->cpu[0].max_khz, 2000000);
	ck_assert_int_eq(a->cpu[0].capacity, 1024);
	ck_assert_uint_eq(a->cpu[0].cur_khz.n, 2);
	ck_assert_double_eq(a->cpu[0].cur_khz.min, 1000000);
	ck_assert_double_eq(a->cpu[0].cur_khz.max, 2000000);
	ck_assert_double_eq(gauge_avg(&a->cpu[0].freq_ratio), 0.75);
	ck_assert_uint_eq(a->cpu[3].d.idle, 99);
	ck_assert_uint_eq(a->cpu[3].samples, 3);
	ck_assert(a->cpu[3].online_end);
	ck_assert_int_eq(a->cpu[3].max_khz, 3000000);
	ck_assert_int_eq(a->cpu[3].capacity, 512);
	/* cpu2: no data anywhere, still unknown */
	ck_assert_int_eq(a->cpu[2].max_khz, -1);
	ck_assert_int_eq(a->cpu[2].capacity, -1);

	/* A later window without a line for cpu1..3: offline at the end. */
	ck_assert_int_eq(window_merge(a, c), 0);
	ck_assert_uint_eq(a->cpu_span, 4);
	ck_assert(!a->cpu[1].online_end);
	ck_assert(!a->cpu[3].online_end);
	ck_assert_int_eq(a->cpu[3].max_khz, 3000000);
	window_free(a);
	window_free(b);
	window_free(c);
}
END_TEST

START_TEST(merge_health)
{
	struct window *a = mkwin(1, 0, 0), *b = mkwin(2, 10, 0);
	unsigned i;

	a->health.self_utime_us = 100;
	b->health.self_utime_us = 50;
	a->health.self_stime_us = 7;
	b->health.self_stime_us = 3;
	for (i = 0; i < COLL__MAX; i++) {
		a->health.coll_ns_sum[i] = 1000 * i;
		b->health.coll_ns_sum[i] = 10 * i;
		a->health.coll_ns_max[i] = i % 2 ? 500 : 5;
		b->health.coll_ns_max[i] = i % 2 ? 50 : 50;
	}
	a->health.sample_ns_sum = 10;
	b->health.sample_ns_sum = 20;
	a->health.sample_ns_max = 9;
	b->health.sample_ns_max = 4;
	a->health.late_ticks = 1;
	b->health.late_ticks = 2;
	a->health.burst_samples = 100;
	b->health.burst_samples = 0;
	a->health.procs_scanned = 500;
	b->health.procs_scanned = 480;
	a->health.threads_scanned = 4000;
	b->health.threads_scanned = 3900;
	a->health.procs_exited = 3;
	b->health.procs_exited = 4;
	a->health.threads_exited = 30;
	b->health.threads_exited = 40;
	a->health.cpu_dropped = 2;
	b->health.cpu_dropped = 0;
	a->health.store_state = STORE_FULL;
	b->health.store_state = STORE_OK;
	a->health.store_queued = 9;
	b->health.store_queued = 1;
	a->health.store_dropped = 5;
	b->health.store_dropped = 6;

	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_uint_eq(a->health.self_utime_us, 150);
	ck_assert_uint_eq(a->health.self_stime_us, 10);
	for (i = 0; i < COLL__MAX; i++) {
		ck_assert_uint_eq(a->health.coll_ns_sum[i], 1010 * i);
		ck_assert_uint_eq(a->health.coll_ns_max[i], i % 2 ? 500 : 50);
	}
	ck_assert_uint_eq(a->health.sample_ns_sum, 30);
	ck_assert_uint_eq(a->health.sample_ns_max, 9);
	ck_assert_uint_eq(a->health.late_ticks, 3);
	ck_assert_uint_eq(a->health.burst_samples, 100);
	ck_assert_uint_eq(a->health.procs_scanned, 480);
	ck_assert_uint_eq(a->health.threads_scanned, 3900);
	ck_assert_uint_eq(a->health.procs_exited, 7);
	ck_assert_uint_eq(a->health.threads_exited, 70);
	ck_assert_uint_eq(a->health.cpu_dropped, 2);
	ck_assert_uint_eq(a->health.store_state, STORE_OK);
	ck_assert_uint_eq(a->health.store_queued, 1);
	ck_assert_uint_eq(a->health.store_dropped, 6);
	window_free(a);
	window_free(b);
}
END_TEST

/* ------------------------------------------------------------- tasks */

START_TEST(merge_tasks_by_identity)
{
	struct window *a = mkwin(1, 0, 0), *b = mkwin(2, 10, 0);
	struct window_task t;
	const struct window_task *p;

	t = task(10, 100, 5, 1);
	ck_assert_int_eq(window_add_task(a, false, &t), 0);
	t = task(20, 200, 3, 0);
	ck_assert_int_eq(window_add_task(a, false, &t), 0);
	/* the same number as a thread id is another namespace */
	t = task(10, 100, 1, 1);
	ck_assert_int_eq(window_add_task(a, true, &t), 0);

	t = task(10, 100, 7, 2);
	ck_assert_int_eq(window_add_task(b, false, &t), 0);
	t = task(20, 999, 4, 4); /* pid 20 reused: another instance */
	ck_assert_int_eq(window_add_task(b, false, &t), 0);
	t = task(30, 300, 1, 0);
	ck_assert_int_eq(window_add_task(b, false, &t), 0);
	t = task(11, 100, 2, 2);
	ck_assert_int_eq(window_add_task(b, true, &t), 0);

	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_uint_eq(a->nprocs, 4);
	ck_assert_uint_eq(a->nthreads, 2);
	ck_assert_ptr_nonnull(p = find(a, false, 10, 100));
	ck_assert_uint_eq(p->d_utime, 12);
	ck_assert_uint_eq(p->d_stime, 3);
	ck_assert_uint_eq(p->d_minflt, 120);
	ck_assert_uint_eq(p->d_majflt, 3);
	ck_assert_uint_eq(p->samples, 20);
	ck_assert_uint_eq(p->wall_ns, 20 * NSEC_PER_SEC);
	ck_assert_uint_eq(p->total_ticks, 16000);
	ck_assert_double_eq(p->norm_ticks, 2000.0);
	ck_assert_ptr_nonnull(p = find(a, false, 20, 200));
	ck_assert_uint_eq(p->d_utime, 3);
	ck_assert_uint_eq(p->samples, 10);
	ck_assert_ptr_nonnull(p = find(a, false, 20, 999));
	ck_assert_uint_eq(p->d_utime, 4);
	ck_assert_uint_eq(p->d_stime, 4);
	ck_assert_ptr_nonnull(p = find(a, false, 30, 300));
	ck_assert_uint_eq(p->d_utime, 1);
	ck_assert_ptr_nonnull(p = find(a, true, 10, 100));
	ck_assert_uint_eq(p->d_utime, 1);
	ck_assert_ptr_nonnull(p = find(a, true, 11, 100));
	ck_assert_uint_eq(p->d_utime, 2);
	window_free(a);
	window_free(b);
}
END_TEST

START_TEST(merge_task_state)
{
	struct window *a = mkwin(1, 0, 0), *b = mkwin(2, 10, 0);
	struct window_task t, u;
	const struct window_task *p;

	/* born in a, renamed by exec in b, exits in b */
	t = task(10, 100, 1, 1);
	t.born = true;
	t.rss_pages_max = 500;
	t.rss_pages_last = 400;
	window_task_set_namef(&t, "zygote");
	ck_assert_int_eq(window_add_task(a, false, &t), 0);
	u = task(10, 100, 1, 1);
	u.uid = 10123;
	u.tgid = 10;
	u.rss_pages_max = 450;
	u.rss_pages_last = 300;
	u.exited = true;
	snprintf(u.comm, sizeof(u.comm), "ndroid.browser");
	window_task_set_namef(&u, "com.android.browser");
	ck_assert_int_eq(window_add_task(b, false, &u), 0);
	/* exited in a, absent from b: stays exited */
	t = task(20, 200, 1, 0);
	t.exited = true;
	ck_assert_int_eq(window_add_task(a, false, &t), 0);
	/* exited flag in a but the instance shows up in b: b decides */
	t = task(30, 300, 1, 0);
	t.exited = true;
	ck_assert_int_eq(window_add_task(a, false, &t), 0);
	u = task(30, 300, 1, 0);
	ck_assert_int_eq(window_add_task(b, false, &u), 0);
	/* born only in b */
	u = task(40, 400, 1, 0);
	u.born = true;
	ck_assert_int_eq(window_add_task(b, false, &u), 0);
	/* present in a, not born, then b (a sampling hiccup) says born */
	t = task(50, 500, 1, 0);
	ck_assert_int_eq(window_add_task(a, false, &t), 0);
	u = task(50, 500, 1, 0);
	u.born = true;
	ck_assert_int_eq(window_add_task(b, false, &u), 0);

	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_ptr_nonnull(p = find(a, false, 10, 100));
	ck_assert(p->born);
	ck_assert(p->exited);
	ck_assert_uint_eq(p->rss_pages_max, 500);
	ck_assert_uint_eq(p->rss_pages_last, 300);
	ck_assert_uint_eq(p->uid, 10123);
	ck_assert_str_eq(p->comm, "ndroid.browser");
	ck_assert_str_eq(window_task_name(p), "com.android.browser");
	ck_assert_ptr_nonnull(p = find(a, false, 20, 200));
	ck_assert(p->exited);
	ck_assert_ptr_nonnull(p = find(a, false, 30, 300));
	ck_assert(!p->exited);
	ck_assert_ptr_nonnull(p = find(a, false, 40, 400));
	ck_assert(p->born);
	ck_assert_ptr_nonnull(p = find(a, false, 50, 500));
	ck_assert(p->born);
	window_free(a);
	window_free(b);
}
END_TEST

START_TEST(merge_empty_sides)
{
	struct window *a = mkwin(1, 0, 0), *b = mkwin(2, 10, 2);
	struct window_task t = task(10, 100, 1, 1);

	ck_assert_int_eq(window_add_task(b, true, &t), 0);
	gauge_add(&b->load5, 3.0);
	ck_assert_int_eq(window_merge(a, b), 0); /* into an empty window */
	ck_assert_uint_eq(a->nthreads, 1);
	ck_assert_uint_eq(a->cpu_span, 2);
	ck_assert_uint_eq(a->load5.n, 1);
	ck_assert_double_eq(a->load5.min, 3.0);
	window_free(b);
	b = mkwin(3, 20, 0);
	ck_assert_int_eq(window_merge(a, b), 0); /* an empty window in */
	ck_assert_uint_eq(a->nthreads, 1);
	ck_assert_uint_eq(a->threads[0].d_utime, 1);
	ck_assert_uint_eq(a->load5.n, 1);
	ck_assert_int_eq(a->mono_end_ns, 30 * NSEC_PER_SEC);
	window_free(a);
	window_free(b);
}
END_TEST

/* Ticks of different USER_HZ do not add; nothing changes on refusal. */
START_TEST(merge_hz_mismatch)
{
	struct window *a = mkwin(1, 0, 1), *b = mkwin(2, 10, 4);
	struct window_task t = task(10, 100, 1, 1);

	ck_assert_int_eq(window_add_task(b, false, &t), 0);
	b->hz = 250;
	b->d_ctxt = 5;
	ck_assert_int_eq(window_merge(a, b), -EINVAL);
	ck_assert_uint_eq(a->cpu_span, 1);
	ck_assert_uint_eq(a->nprocs, 0);
	ck_assert_uint_eq(a->d_ctxt, 0);
	ck_assert_int_eq(a->mono_end_ns, 10 * NSEC_PER_SEC);
	window_free(a);
	window_free(b);
}
END_TEST

START_TEST(merge_too_many_cpus)
{
	struct window *a = mkwin(1, 0, 1), *b = mkwin(2, 10, 1);

	/* a corrupt span from outside: refused before anything changes */
	b->cpu_span = VITALS_CPU_MAX + 1;
	b->d_ctxt = 5;
	ck_assert_int_eq(window_merge(a, b), -E2BIG);
	ck_assert_uint_eq(a->d_ctxt, 0);
	ck_assert_uint_eq(a->cpu_span, 1);
	b->cpu_span = 1;
	window_free(a);
	window_free(b);
}
END_TEST

/* Sums are associative: six windows fold the same left to right. */
START_TEST(merge_chain_matches_total)
{
	struct window *acc = mkwin(1, 0, 0), *w;
	const struct window_task *p;
	unsigned i;

	for (i = 0; i < 6; i++) {
		struct window_task t = task(7, 70, i + 1, 2 * i);

		w = mkwin(2 + i, 10 * (i + 1), 0);
		w->d_ctxt = 100 * (i + 1);
		gauge_add(&w->procs_running, (double)i);
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
		ck_assert_int_eq(window_merge(acc, w), 0);
		window_free(w);
	}
	ck_assert_uint_eq(acc->d_ctxt, 2100);
	ck_assert_uint_eq(acc->procs_running.n, 6);
	ck_assert_double_eq(acc->procs_running.min, 0);
	ck_assert_double_eq(acc->procs_running.max, 5);
	ck_assert_double_eq(gauge_avg(&acc->procs_running), 2.5);
	ck_assert_uint_eq(acc->nprocs, 1);
	ck_assert_ptr_nonnull(p = find(acc, false, 7, 70));
	ck_assert_uint_eq(p->d_utime, 21);
	ck_assert_uint_eq(p->d_stime, 30);
	ck_assert_uint_eq(p->samples, 60);
	ck_assert_int_eq(acc->mono_end_ns, 70 * NSEC_PER_SEC);
	window_free(acc);
}
END_TEST

/*
 * 5000 processes and 5000 threads per window, half of them shared with
 * the accumulated window, folded ten times: linear work finishes in
 * milliseconds, a pairwise search would take seconds.
 */
START_TEST(merge_5000_tasks_fast)
{
	struct window *acc = mkwin(1, 0, 0), *w;
	struct timespec t0, t1;
	const struct window_task *p;
	double ms;
	int i, round;

	for (i = 0; i < 5000; i++) {
		struct window_task t = task(i + 1, 1000, 1, 0);

		ck_assert_int_eq(window_add_task(acc, false, &t), 0);
		ck_assert_int_eq(window_add_task(acc, true, &t), 0);
	}
	/* CPU time, not wall: suites run side by side on a small machine */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (round = 0; round < 10; round++) {
		w = mkwin(2 + round, 10 * (round + 1), 0);
		for (i = 0; i < 5000; i++) {
			/* even ids recur; odd ids are new each round */
			int id = i % 2 ? 100000 * (round + 1) + i : i + 1;
			struct window_task t = task(id, 1000, 1, 1);

			ck_assert_int_eq(window_add_task(w, false, &t), 0);
			ck_assert_int_eq(window_add_task(w, true, &t), 0);
		}
		ck_assert_int_eq(window_merge(acc, w), 0);
		window_free(w);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_uint_eq(acc->nprocs, 5000 + 10 * 2500);
	ck_assert_uint_eq(acc->nthreads, 5000 + 10 * 2500);
	ck_assert_ptr_nonnull(p = find(acc, false, 1, 1000));
	ck_assert_uint_eq(p->d_utime, 11);
	ck_assert_uint_eq(p->d_stime, 10);
	ck_assert_ptr_nonnull(p = find(acc, true, 100000 * 3 + 1, 1000));
	ck_assert_uint_eq(p->d_utime, 1);
	ck_assert_ptr_nonnull(p = find(acc, false, 2, 1000));
	ck_assert_uint_eq(p->d_utime, 1);
	/* building and merging 100,000 rows: under a second of CPU at -O2,
	 * a few under ASan at -O0; quadratic merging would be ~100x that. A
	 * wall-time bound of 1.5 s failed a CI run under ASan with suites
	 * side by side (2.2 s). */
	fprintf(stderr, "10 merges of 10000 tasks: %.1f ms of CPU\n", ms);
	ck_assert_msg(ms < 6000, "10 merges of 10000 tasks took %.1f ms", ms);
	window_free(acc);
}
END_TEST

static Suite *
rollup_suite(void)
{
	Suite *s = suite_create("rollup");
	TCase *tc;

	tc = tcase_create("figures");
	tcase_add_test(tc, merge_times_and_counts);
	tcase_add_test(tc, merge_system_deltas);
	tcase_add_test(tc, merge_gauges_min_avg_max);
	tcase_add_test(tc, merge_cpus);
	tcase_add_test(tc, merge_health);
	tcase_add_test(tc, merge_empty_sides);
	tcase_add_test(tc, merge_hz_mismatch);
	tcase_add_test(tc, merge_too_many_cpus);
	tcase_add_test(tc, merge_chain_matches_total);
	suite_add_tcase(s, tc);

	tc = tcase_create("tasks");
	tcase_add_test(tc, merge_tasks_by_identity);
	tcase_add_test(tc, merge_task_state);
	tcase_add_test(tc, merge_5000_tasks_fast);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(rollup_suite());
}
