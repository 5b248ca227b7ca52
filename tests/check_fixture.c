/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The real collector over tests/fixtures/phone, an 8-CPU big.LITTLE Android
 * phone (see its README.md). Every expected figure is worked out by hand in a
 * comment from the numbers in the fixture files ("t1 − t0" of the field
 * named), never taken from the code under test: if the daemon and this file
 * disagree, one of them is wrong about the kernel, and the fixture says which.
 *
 * Clocks are synthetic: t0 is mono 5000 s / boot 5230 s, each later snapshot
 * one second on. USER_HZ is fixed at 100, so 100 ticks are one CPU-second and
 * a process started after t0 has a starttime above 523000 ticks.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "vitalsd.h"

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

#define HZ 100
#define TOL 1e-12
#define SEC(s) ((int64_t)(s)*NSEC_PER_SEC)

/* Clocks of the snapshots, in seconds (README.md, "Clocks"). */
#define T0_MONO 5000
#define T0_BOOT 5230

/* ---------------------------------------------------------------- harness */

struct fx {
	char *root;
	char proc[PATH_MAX], sys[PATH_MAX];
	struct collector *c;
};

/*
 * Remove from dst whatever src does not have: process and task directories
 * of tasks that exited. Everything else is overwritten in place afterwards,
 * so the files the collector keeps open are never replaced.
 */
static void
fx_prune(const char *src, const char *dst)
{
	DIR *d = opendir(dst);
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		char s[PATH_MAX], t[PATH_MAX];
		struct stat ss, ts;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(s, sizeof(s), "%s/%s", src, de->d_name);
		snprintf(t, sizeof(t), "%s/%s", dst, de->d_name);
		ck_assert_int_eq(lstat(t, &ts), 0);
		if (lstat(s, &ss) < 0) {
			ck_assert_int_eq(errno, ENOENT);
			ck_assert_int_eq(tu_rmtree(t), 0);
		} else if (S_ISDIR(ss.st_mode) && S_ISDIR(ts.st_mode)) {
			fx_prune(s, t);
		}
	}
	closedir(d);
}

/* Make the temporary tree look like snapshot rel ("t1", "k5.10/t0"). */
static void
fx_state(struct fx *f, const char *rel, bool overlay)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "fixtures/phone/%s", rel);
	if (!overlay)
		fx_prune(tu_srcpath(path), f->root);
	ck_assert_int_eq(tu_copytree(tu_srcpath(path), f->root), 0);
}

static void
fx_open(struct fx *f, enum threads_mode mode)
{
	struct collector_opts o = { 0 };

	memset(f, 0, sizeof(*f));
	f->root = tu_mkdtemp("fixture");
	ck_assert_ptr_nonnull(f->root);
	fx_state(f, "t0", false);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	o.proc_root = f->proc;
	o.sys_root = f->sys;
	o.hz = HZ;
	o.interval_ms = 1000;
	o.window_s = 60; /* every sample of a scenario lands in one window */
	o.ring = 4;
	o.threads = mode;
	ck_assert_int_eq(collector_new(&o, &f->c), 0);
}

static void
fx_done(struct fx *f)
{
	collector_free(f->c);
	if (f->root != NULL)
		tu_rmtree(f->root);
	free(f->root);
}

static struct clocks
fx_clocks(int64_t mono_s, int64_t boot_s)
{
	/* Realtime only labels the window; any value will do. */
	struct clocks k = { SEC(mono_s), SEC(boot_s),
		SEC(1732867000 + mono_s) };

	return k;
}

static void
fx_sample(struct fx *f, int64_t mono_s, int64_t boot_s)
{
	struct clocks k = fx_clocks(mono_s, boot_s);

	ck_assert_int_eq(collector_sample(f->c, &k, false), 0);
}

static const struct window *
fx_close(struct fx *f, int64_t mono_s, int64_t boot_s)
{
	struct clocks k = fx_clocks(mono_s, boot_s);
	const struct window *w;

	ck_assert_int_eq(collector_close_window(f->c, &k), 0);
	w = collector_window(f->c, 0);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* Scenario A: t0 then t1, one valid sample of one second. */
static const struct window *
scenario_a(struct fx *f, enum threads_mode mode)
{
	fx_open(f, mode);
	fx_sample(f, T0_MONO, T0_BOOT);
	fx_state(f, "t1", false);
	fx_sample(f, T0_MONO + 1, T0_BOOT + 1);
	return fx_close(f, T0_MONO + 1, T0_BOOT + 1);
}

/* Scenario B: t0, t1, t2 in one window; cpu5 comes back online at t2. */
static const struct window *
scenario_hotplug(struct fx *f, enum threads_mode mode)
{
	fx_open(f, mode);
	fx_sample(f, T0_MONO, T0_BOOT);
	fx_state(f, "t1", false);
	fx_sample(f, T0_MONO + 1, T0_BOOT + 1);
	fx_state(f, "t2", false);
	fx_sample(f, T0_MONO + 2, T0_BOOT + 2);
	return fx_close(f, T0_MONO + 2, T0_BOOT + 2);
}

/*
 * Scenario C: the same files, but the phone suspended for 5 s inside the
 * t0→t1 sample (boottime +6 s, monotonic +1 s). t2 is one plain second later.
 */
static const struct window *
scenario_sleep(struct fx *f, enum threads_mode mode)
{
	fx_open(f, mode);
	fx_sample(f, T0_MONO, T0_BOOT);
	fx_state(f, "t1", false);
	fx_sample(f, T0_MONO + 1, T0_BOOT + 6);
	fx_state(f, "t2", false);
	fx_sample(f, T0_MONO + 2, T0_BOOT + 7);
	return fx_close(f, T0_MONO + 2, T0_BOOT + 7);
}

/* The one record of id in the window, or NULL; an id twice is a bug. */
static const struct window_task *
task_find(const struct window *w, bool thread, int32_t id)
{
	const struct window_task *arr = thread ? w->threads : w->procs;
	size_t i, n = thread ? w->nthreads : w->nprocs;
	const struct window_task *hit = NULL;

	for (i = 0; i < n; i++) {
		if (arr[i].id != id)
			continue;
		ck_assert_msg(hit == NULL, "%s %d recorded twice",
		    thread ? "thread" : "process", id);
		hit = &arr[i];
	}
	return hit;
}

static const struct window_task *
task_get(const struct window *w, bool thread, int32_t id)
{
	const struct window_task *t = task_find(w, thread, id);

	ck_assert_msg(t != NULL, "%s %d missing from the window",
	    thread ? "thread" : "process", id);
	return t;
}

static void
assert_counts(const struct window_task *t, uint64_t u, uint64_t s,
    uint64_t minflt, uint64_t majflt)
{
	ck_assert_msg(t->d_utime == u && t->d_stime == s &&
		t->d_minflt == minflt && t->d_majflt == majflt,
	    "task %d: utime/stime/minflt/majflt %" PRIu64 "/%" PRIu64
	    "/%" PRIu64 "/%" PRIu64 ", want %" PRIu64 "/%" PRIu64 "/%" PRIu64
	    "/%" PRIu64,
	    t->id, t->d_utime, t->d_stime, t->d_minflt, t->d_majflt, u, s,
	    minflt, majflt);
}

/* The denominators a task's figures are divided by. */
static void
assert_denoms(const struct window_task *t, uint32_t samples, uint64_t wall_ns,
    uint64_t total_ticks, double norm_ticks)
{
	ck_assert_msg(t->samples == samples, "task %d: samples %u, want %u",
	    t->id, t->samples, samples);
	ck_assert_msg(t->wall_ns == wall_ns,
	    "task %d: wall_ns %" PRIu64 ", want %" PRIu64, t->id, t->wall_ns,
	    wall_ns);
	ck_assert_msg(t->total_ticks == total_ticks,
	    "task %d: total_ticks %" PRIu64 ", want %" PRIu64, t->id,
	    t->total_ticks, total_ticks);
	ck_assert_msg(fabs(t->norm_ticks - norm_ticks) < TOL,
	    "task %d: norm_ticks %.17g, want %.17g", t->id, t->norm_ticks,
	    norm_ticks);
}

static void
assert_times(const struct cpu_times *got, const struct cpu_times *want,
    const char *what)
{
#define F(x)                             \
	ck_assert_msg(got->x == want->x, \
	    "%s " #x " %" PRIu64 ", want %" PRIu64, what, got->x, want->x)
	F(user);
	F(nice);
	F(system);
	F(idle);
	F(iowait);
	F(irq);
	F(softirq);
	F(steal);
	F(guest);
	F(guest_nice);
#undef F
}

static void
assert_invalid(const uint32_t got[INV__MAX], const uint32_t want[INV__MAX],
    const char *what)
{
	unsigned i;

	for (i = 0; i < INV__MAX; i++)
		ck_assert_msg(got[i] == want[i], "%s[%s] = %u, want %u", what,
		    invalid_name(i), got[i], want[i]);
}

static void
assert_gauge(const struct gauge *g, uint32_t n, double min, double max,
    double sum, double last, const char *what)
{
	ck_assert_msg(g->n == n, "%s: n %u, want %u", what, g->n, n);
	ck_assert_msg(fabs(g->min - min) < TOL && fabs(g->max - max) < TOL &&
		fabs(g->sum - sum) < TOL && fabs(g->last - last) < TOL,
	    "%s: min/max/sum/last %.17g/%.17g/%.17g/%.17g, want "
	    "%.17g/%.17g/%.17g/%.17g",
	    what, g->min, g->max, g->sum, g->last, min, max, sum, last);
}

/* ------------------------------------------------- scenario A: system CPU */

/*
 * Per-CPU Δ of scenario A, t1 − t0 of each cpuN line. Columns: user nice
 * system idle iowait irq softirq steal guest guest_nice.
 */
static const struct cpu_times a_cpu[8] = {
	/* t0 61234 1203 40112 386120 3120 5012 2471 0 0 0
	 * t1 61252 1204 40121 386186 3122 5014 2473 0 0 0 */
	[0] = { 18, 1, 9, 66, 2, 2, 2, 0, 0, 0 },
	/* t0 52871 987 35410 401320 2211 1805 1042 0 0 0
	 * t1 52883 987 35417 401399 2212 1806 1043 0 0 0 */
	[1] = { 12, 0, 7, 79, 1, 1, 1, 0, 0, 0 },
	/* t0 49120 902 33876 409231 2034 1422 908 0 0 0
	 * t1 49129 902 33882 409314 2034 1423 909 0 0 0 */
	[2] = { 9, 0, 6, 83, 0, 1, 1, 0, 0, 0 },
	/* t0 47811 911 32970 411003 1987 1380 873 0 0 0
	 * t1 47822 913 32978 411079 1988 1381 874 0 0 0 */
	[3] = { 11, 2, 8, 76, 1, 1, 1, 0, 0, 0 },
	/* t0 118765 402 51234 321870 812 1102 3520 0 1520 0
	 * t1 118822 402 51248 321897 812 1103 3521 0 1523 0 */
	[4] = { 57, 0, 14, 27, 0, 1, 1, 0, 3, 0 },
	/* offline in t0 and t1: no line, nothing summed */
	[5] = { 0 },
	/* t0 104420 377 47018 339671 701 1011 3107 0 0 0
	 * t1 104451 377 47028 339727 701 1012 3108 0 0 0 */
	[6] = { 31, 0, 10, 56, 0, 1, 1, 0, 0, 0 },
	/* t0 87310 290 39875 365480 655 998 2893 0 0 0
	 * t1 87354 290 39887 365521 656 999 2894 0 0 0 */
	[7] = { 44, 0, 12, 41, 1, 1, 1, 0, 0, 0 },
};

/*
 * total = user+nice+system+idle+iowait+irq+softirq+steal (guest is inside
 * user already); busy = user+nice+system+irq+softirq.
 *   cpu0 18+1+9+66+2+2+2 = 100   busy 18+1+9+2+2 = 32
 *   cpu1 12+0+7+79+1+1+1 = 101   busy 21
 *   cpu2  9+0+6+83+0+1+1 = 100   busy 17
 *   cpu3 11+2+8+76+1+1+1 = 100   busy 23
 *   cpu4 57+0+14+27+0+1+1 = 100  busy 73 (103 if guest were added again)
 *   cpu6 31+0+10+56+0+1+1 = 99   busy 43
 *   cpu7 44+0+12+41+1+1+1 = 100  busy 58
 */
static const uint64_t a_total[8] = { 100, 101, 100, 100, 100, 0, 99, 100 };
static const uint64_t a_busy[8] = { 32, 21, 17, 23, 73, 0, 43, 58 };

START_TEST(system_cpu)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	/*
	 * Aggregate "cpu" line, which holds offline cpu5's frozen counters too:
	 * t0 592734 5283 310607 2822899 11923 13341 16234 0 1520 0
	 * t1 592916 5286 310673 2823327 11928 13349 16242 0 1523 0
	 */
	const struct cpu_times all = { 182, 3, 66, 428, 5, 8, 8, 0, 3, 0 };
	const uint32_t none[INV__MAX] = { 0 };
	uint32_t inv[INV__MAX] = { 0 };
	unsigned i;

	ck_assert_uint_eq(w->hz, HZ);
	ck_assert_int_eq(w->mono_start_ns, SEC(T0_MONO));
	ck_assert_int_eq(w->mono_end_ns, SEC(T0_MONO + 1));
	ck_assert_int_eq(w->boot_start_ns, SEC(T0_BOOT));
	ck_assert_int_eq(w->boot_end_ns, SEC(T0_BOOT + 1));
	/* t0 is a baseline, not a failure: taken, not valid, not counted */
	ck_assert_uint_eq(w->samples, 2);
	ck_assert_uint_eq(w->samples_valid, 1);
	assert_invalid(w->inv_samples, none, "inv_samples");
	/* the only dropped delta is the reused pid 4321 */
	inv[INV_IDENTITY] = 1;
	assert_invalid(w->inv_deltas, inv, "inv_deltas");

	assert_times(&w->all.d, &all, "all");
	ck_assert_uint_eq(w->all.samples, 1);
	ck_assert_uint_eq(w->all.wall_ns, SEC(1));
	/* 182+3+66+428+5+8+8+0: guest (3) is not added a second time */
	ck_assert_uint_eq(cpu_times_total(&w->all.d), 700);
	/* 182+3+66+8+8 */
	ck_assert_uint_eq(cpu_times_busy(&w->all.d), 267);

	/* the highest cpuN line is cpu7 */
	ck_assert_uint_eq(w->cpu_span, 8);
	for (i = 0; i < 8; i++) {
		const struct window_cpu *wc = &w->cpu[i];
		char what[16];

		snprintf(what, sizeof(what), "cpu%u", i);
		assert_times(&wc->d, &a_cpu[i], what);
		ck_assert_uint_eq(cpu_times_total(&wc->d), a_total[i]);
		ck_assert_uint_eq(cpu_times_busy(&wc->d), a_busy[i]);
		ck_assert_uint_eq(wc->samples, i == 5 ? 0 : 1);
		ck_assert_uint_eq(wc->wall_ns, i == 5 ? 0 : SEC(1));
		ck_assert(wc->online_end == (i != 5));
	}
	/* offline cpu5's counters are frozen: the aggregate's Δ is exactly
	 * the online lines' Δ, 100+101+100+100+100+99+100 */
	ck_assert_uint_eq(a_total[0] + a_total[1] + a_total[2] + a_total[3] +
		a_total[4] + a_total[6] + a_total[7],
	    cpu_times_total(&w->all.d));
	/* seven cpuN lines in both reads */
	assert_gauge(&w->online_cpus, 2, 7, 7, 14, 7, "online_cpus");
	fx_done(&f);
}
END_TEST

START_TEST(cpu_freq_capacity)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	/* policy0/cpuinfo_max_freq 1804800; scaling_cur_freq t0 1171200, t1
	 * 691200. policy4: max 2419200; cur t0 1996800, t1 2419200. */
	const double r0_t0 = 1171200.0 / 1804800.0;
	const double r0_t1 = 691200.0 / 1804800.0;
	const double r4_t0 = 1996800.0 / 2419200.0, r4_t1 = 1.0;
	unsigned i;

	for (i = 0; i < 4; i++) {
		const struct window_cpu *wc = &w->cpu[i];

		ck_assert_int_eq(wc->capacity, 325);
		ck_assert_int_eq(wc->max_khz, 1804800);
		assert_gauge(&wc->cur_khz, 2, 691200, 1171200,
		    1171200.0 + 691200.0, 691200, "little cur_khz");
		assert_gauge(&wc->freq_ratio, 2, r0_t1, r0_t0, r0_t0 + r0_t1,
		    r0_t1, "little freq_ratio");
	}
	for (i = 4; i < 7; i++) {
		const struct window_cpu *wc = &w->cpu[i];

		if (i == 5)
			continue;
		ck_assert_int_eq(wc->capacity, 828);
		ck_assert_int_eq(wc->max_khz, 2419200);
		assert_gauge(&wc->cur_khz, 2, 1996800, 2419200,
		    1996800.0 + 2419200.0, 2419200, "big cur_khz");
		/* running at its maximum in t1: exactly 1 */
		assert_gauge(&wc->freq_ratio, 2, r4_t0, r4_t1, r4_t0 + r4_t1,
		    r4_t1, "big freq_ratio");
	}
	/*
	 * cpu7: policy7 has cpuinfo_max_freq 2841600 and cpu_capacity 1024
	 * but no scaling_cur_freq. The current frequency is unknown, never 0,
	 * and so is the ratio.
	 */
	ck_assert_int_eq(w->cpu[7].capacity, 1024);
	ck_assert_int_eq(w->cpu[7].max_khz, 2841600);
	ck_assert_uint_eq(w->cpu[7].cur_khz.n, 0);
	ck_assert_uint_eq(w->cpu[7].freq_ratio.n, 0);
	ck_assert(isnan(gauge_avg(&w->cpu[7].cur_khz)));
	ck_assert(w->cpu[7].online_end);
	/* cpu5 is offline: policy4 is readable through its symlink, but an
	 * offline CPU has no frequency */
	ck_assert_uint_eq(w->cpu[5].cur_khz.n, 0);
	ck_assert_uint_eq(w->cpu[5].freq_ratio.n, 0);
	ck_assert(!w->cpu[5].online_end);
	fx_done(&f);
}
END_TEST

/*
 * Capacity-weighted CPU (doc/metrics.md) on scenario A, exactly. Busy
 * ticks (a_busy): little cpu0-3 32+21+17+23 = 93, big cpu4 and cpu6
 * 73+43 = 116, prime cpu7 58; 267 in all.
 * Mean frequency scale over the window's two readings, ⌊cur×1024/max⌋:
 *   little (1171200+691200)/2 = 931200 of 1804800 → 528
 *   big (1996800+2419200)/2 = 2208000 of 2419200 → 934
 *   prime: no scaling_cur_freq → 1024, its 58 ticks counted
 * Σ busy × capacity × scale:
 *   93 × 325 × 528 = 15958800
 *   116 × 828 × 934 = 89708832
 *   58 × 1024 × 1024 = 60817408      Σ 166485040
 * factor 166485040 / (267 × 2^20) = 0.59465…; surfaceflinger's 38+14
 * ticks weigh 52 × that.
 */
START_TEST(capacity_weighted)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	struct window_wcpu *p = window_wcpu_new();
	const struct window_task *sf = task_find(w, false, 640);
	uint32_t cap[8], freq[8];
	double factor = 166485040.0 / (267.0 * 1048576.0), v;
	unsigned src, i;

	ck_assert_ptr_nonnull(p);
	wcpu_approx_add(p, w);
	ck_assert_uint_eq(p->busy_ticks, 267);
	ck_assert_uint_eq(p->wbusy, 166485040);
	ck_assert_uint_eq(p->nocap_ticks, 0);
	ck_assert_uint_eq(p->nofreq_ticks, 58);
	ck_assert_uint_eq(p->windows, 1);
	ck_assert_double_eq(wcpu_approx_factor(p), factor);
	ck_assert_ptr_nonnull(sf);
	v = wcpu_task(p, false, 640, sf->starttime, sf->d_utime + sf->d_stime,
	    &src);
	ck_assert_uint_eq(src, WCPU_SRC_APPROX);
	ck_assert_double_eq(v, 52.0 * factor);

	/*
	 * What the daemon hands the kernel after t1 (sched_scale): little
	 * 325 at ⌊691200×1024/1804800⌋ = 392, big 828 at its maximum 1024,
	 * offline cpu5 and cpu7 without a frequency (0: weighed as 1024).
	 */
	ck_assert_uint_eq(wcpu_scales(w, cap, freq, 8), 8);
	for (i = 0; i < 4; i++) {
		ck_assert_uint_eq(cap[i], 325);
		ck_assert_uint_eq(freq[i], 392);
	}
	ck_assert_uint_eq(cap[4], 828);
	ck_assert_uint_eq(freq[4], 1024);
	ck_assert_uint_eq(cap[6], 828);
	ck_assert_uint_eq(freq[6], 1024);
	ck_assert_uint_eq(freq[5], 0);
	ck_assert_uint_eq(cap[7], 1024);
	ck_assert_uint_eq(freq[7], 0);
	/*
	 * The kernel's weighting of a 100 ms slice with those scales, as
	 * sched.bpf.c makes it, ((ns × cap) >> 10) × freq >> 10: the same
	 * slice is worth 12.1 ms on a little core at 392, 80.9 ms on a big
	 * one at its maximum, 100 ms on the prime core.
	 */
	ck_assert_uint_eq(((100000000ULL * cap[0]) >> 10) * freq[0] >> 10,
	    12149810);
	ck_assert_uint_eq(((100000000ULL * cap[4]) >> 10) * freq[4] >> 10,
	    80859375);
	window_wcpu_free(p);
	fx_done(&f);
}
END_TEST

/* ------------------------------------------ scenario A: other system files */

START_TEST(system_counters)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	/*
	 * vmstat, t1 − t0:
	 *   pgfault 184407237 − 184403110 = 4127
	 *   pgmajfault 1012242 − 1012231 = 11
	 *   pswpin 1830225 − 1830211 = 14, pswpout 4120368 − 4120331 = 37
	 *   pgpgin 28120632 − 28120344 = 288, pgpgout 9123972 − 9123876 = 96
	 *   pgscan_kswapd 30124388 − 30123876 = 512, pgscan_direct 0
	 *   (401276 both; pgscan_direct_throttle must not be taken for it)
	 *   pgsteal_kswapd 18123710 − 18123409 = 301, pgsteal_direct 0
	 *   workingset_refault_anon 1830228 − 1830214 = 14
	 *   workingset_refault_file 9120528 − 9120487 = 41, oom_kill 0
	 */
	const uint64_t vm[VM__MAX] = {
		[VM_PGFAULT] = 4127,
		[VM_PGMAJFAULT] = 11,
		[VM_PSWPIN] = 14,
		[VM_PSWPOUT] = 37,
		[VM_PGPGIN] = 288,
		[VM_PGPGOUT] = 96,
		[VM_PGSCAN_KSWAPD] = 512,
		[VM_PGSCAN_DIRECT] = 0,
		[VM_PGSTEAL_KSWAPD] = 301,
		[VM_PGSTEAL_DIRECT] = 0,
		[VM_WORKINGSET_REFAULT_ANON] = 14,
		[VM_WORKINGSET_REFAULT_FILE] = 41,
		[VM_OOM_KILL] = 0,
	};
	unsigned i;

	/* ctxt 148216475 − 148201937 */
	ck_assert_uint_eq(w->d_ctxt, 14538);
	/* processes 61881 − 61877: forks of 4318, 4319, 4320 and 4321 */
	ck_assert_uint_eq(w->d_processes, 4);
	/* procs_running 3 then 2, procs_blocked 0 then 1 */
	assert_gauge(&w->procs_running, 2, 2, 3, 5, 2, "procs_running");
	assert_gauge(&w->procs_blocked, 2, 0, 1, 1, 1, "procs_blocked");

	/* loadavg "5.12 4.87 4.55 3/2790 4317",
	 * then    "5.07 4.86 4.55 2/2791 4321" */
	assert_gauge(&w->load1, 2, 5.07, 5.12, 5.12 + 5.07, 5.07, "load1");
	assert_gauge(&w->load5, 2, 4.86, 4.87, 4.87 + 4.86, 4.86, "load5");
	assert_gauge(&w->load15, 2, 4.55, 4.55, 4.55 + 4.55, 4.55, "load15");
	assert_gauge(&w->load_runnable, 2, 2, 3, 5, 2, "load_runnable");
	assert_gauge(&w->load_threads, 2, 2790, 2791, 5581, 2791,
	    "load_threads");

	/* all 13 kept keys are in this kernel's vmstat */
	ck_assert_uint_eq(w->vm_have, (1u << VM__MAX) - 1);
	ck_assert_uint_eq(w->vm_samples, 1);
	for (i = 0; i < VM__MAX; i++)
		ck_assert_msg(w->d_vm[i] == vm[i],
		    "vmstat %s: %" PRIu64 ", want %" PRIu64, vmstat_key_name(i),
		    w->d_vm[i], vm[i]);

	/* meminfo: gauges of the two reads, kB */
	ck_assert_uint_eq(w->mem_have, (1u << MI__MAX) - 1);
	/* MemTotal 7645248 both */
	assert_gauge(&w->mem_kb[MI_MEMTOTAL], 2, 7645248, 7645248,
	    2 * 7645248.0, 7645248, "MemTotal");
	/* MemFree 312544 then 309120 */
	assert_gauge(&w->mem_kb[MI_MEMFREE], 2, 309120, 312544,
	    312544.0 + 309120.0, 309120, "MemFree");
	/* MemAvailable 3012876 then 3008412 */
	assert_gauge(&w->mem_kb[MI_MEMAVAILABLE], 2, 3008412, 3012876,
	    3012876.0 + 3008412.0, 3008412, "MemAvailable");
	/* Active 2411288 then 2413104: not Active(anon) 902112/903928 */
	ck_assert_double_eq(w->mem_kb[MI_ACTIVE].last, 2413104);
	/* Inactive 2287404 both: not Inactive(anon) or (file) */
	ck_assert_double_eq(w->mem_kb[MI_INACTIVE].last, 2287404);
	ck_assert_double_eq(w->mem_kb[MI_CACHED].last, 2876044);
	ck_assert_double_eq(w->mem_kb[MI_SWAPCACHED].last, 61248);
	ck_assert_double_eq(w->mem_kb[MI_SWAPTOTAL].last, 4194300);
	/* SwapFree 2398112 then 2398020 */
	ck_assert_double_eq(w->mem_kb[MI_SWAPFREE].min, 2398020);
	ck_assert_double_eq(w->mem_kb[MI_SWAPFREE].last, 2398020);
	ck_assert_double_eq(w->mem_kb[MI_DIRTY].last, 1304);
	ck_assert_double_eq(w->mem_kb[MI_ANONPAGES].last, 2001284);
	ck_assert_double_eq(w->mem_kb[MI_MAPPED].last, 1254812);
	ck_assert_double_eq(w->mem_kb[MI_SHMEM].last, 34812);
	ck_assert_double_eq(w->mem_kb[MI_BUFFERS].last, 8812);
	/* not KReclaimable 381240 */
	ck_assert_double_eq(w->mem_kb[MI_SRECLAIMABLE].last, 176220);
	ck_assert_double_eq(w->mem_kb[MI_SUNRECLAIM].last, 512792);
	ck_assert_double_eq(w->mem_kb[MI_KERNELSTACK].last, 95184);
	/* not SecPageTables 0 */
	ck_assert_double_eq(w->mem_kb[MI_PAGETABLES].last, 177260);
	fx_done(&f);
}
END_TEST

START_TEST(psi)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	const struct window_psi *cpu = &w->psi[PSI_CPU];
	const struct window_psi *mem = &w->psi[PSI_MEMORY];
	const struct window_psi *io = &w->psi[PSI_IO];

	/* cpu some total 87344912 − 87321456; 6.1 prints the system-wide
	 * cpu full line with zeros */
	ck_assert(cpu->available && cpu->have_full);
	ck_assert_uint_eq(cpu->samples, 1);
	ck_assert_uint_eq(cpu->d_some_us, 23456);
	ck_assert_uint_eq(cpu->d_full_us, 0);
	assert_gauge(&cpu->some_avg10, 2, 2.31, 2.35, 2.31 + 2.35, 2.35,
	    "cpu some avg10");
	assert_gauge(&cpu->full_avg10, 2, 0, 0, 0, 0, "cpu full avg10");
	/* memory some 2114660 − 2113457, full 801647 − 801235 */
	ck_assert(mem->available && mem->have_full);
	ck_assert_uint_eq(mem->d_some_us, 1203);
	ck_assert_uint_eq(mem->d_full_us, 412);
	assert_gauge(&mem->full_avg10, 2, 0.03, 0.04, 0.03 + 0.04, 0.04,
	    "memory full avg10");
	/* io some 9917655 − 9912345, full 4104395 − 4102387 */
	ck_assert(io->available && io->have_full);
	ck_assert_uint_eq(io->d_some_us, 5310);
	ck_assert_uint_eq(io->d_full_us, 2008);
	ck_assert_uint_eq(io->samples, 1);
	fx_done(&f);
}
END_TEST

/* The same phone's cpu pressure as android12-5.10 prints it: "some" only. */
START_TEST(psi_no_full_line)
{
	struct fx f;
	const struct window *w;
	const struct window_psi *cpu;

	fx_open(&f, THREADS_CHANGED);
	fx_state(&f, "k5.10/t0", true);
	fx_sample(&f, T0_MONO, T0_BOOT);
	fx_state(&f, "t1", false);
	fx_state(&f, "k5.10/t1", true);
	fx_sample(&f, T0_MONO + 1, T0_BOOT + 1);
	w = fx_close(&f, T0_MONO + 1, T0_BOOT + 1);
	cpu = &w->psi[PSI_CPU];

	ck_assert(cpu->available);
	ck_assert(!cpu->have_full);
	/* some total 87344912 − 87321456, as in the 6.1 file */
	ck_assert_uint_eq(cpu->d_some_us, 23456);
	ck_assert_uint_eq(cpu->samples, 1);
	/* no full line: no full figure at all, rather than a 0 */
	ck_assert_uint_eq(cpu->d_full_us, 0);
	ck_assert_uint_eq(cpu->full_avg10.n, 0);
	ck_assert_uint_eq(cpu->some_avg10.n, 2);
	/* the other resources still have theirs */
	ck_assert(w->psi[PSI_IO].have_full);
	ck_assert_uint_eq(w->psi[PSI_IO].d_full_us, 2008);
	fx_done(&f);
}
END_TEST

/* --------------------------------------------- scenario A: the processes */

struct want_proc {
	int32_t pid;
	uint32_t uid;
	const char *name, *comm;
	uint64_t starttime;
	uint64_t u, s, minflt, majflt;
	bool born;
};

/*
 * Process Δ of scenario A, from <pid>/stat, t1 − t0 of utime (field 14),
 * stime (15), minflt (10) and majflt (12). uid from status, name from
 * cmdline.
 */
static const struct want_proc a_procs[] = {
	/* stime 1873 → 1874; "/system/bin/init\0second_stage\0" */
	{ 1, 0, "init", "init", 41, 0, 1, 0, 0, false },
	/* utime 2160 → 2166, stime 1650 → 1655, minflt 13330 → 13342;
	 * basename of argv[0] cut at '@' */
	{ 571, 1000, "android.hardware.graphics.composer", "android.hardwar",
	    356, 6, 5, 12, 0, false },
	/* utime 45774 → 45812, stime 19718 → 19732, minflt 96350 → 96490 */
	{ 640, 1000, "surfaceflinger", "surfaceflinger", 381, 38, 14, 140, 0,
	    false },
	/* utime 112153 → 112214, stime 33847 → 33864,
	 * minflt 1071628 → 1072238, majflt 6202 → 6204 */
	{ 1234, 1000, "system_server", "system_server", 1962, 61, 17, 610, 2,
	    false },
	/* utime 44380 → 44424, stime 9100 → 9109, minflt 432640 → 433028,
	 * majflt 2244 → 2245; stat reads "2051 (ui) (thread) S ..." */
	{ 2051, 10123, "com.android.systemui", "ui) (thread", 2843, 44, 9, 388,
	    1, false },
	/* stime 2453 → 2456; empty cmdline: the name is the comm, which stat
	 * prints as "kworker/u16:5-events_unbound" and is cut to 15 bytes */
	{ 8412, 0, "kworker/u16:5-e", "kworker/u16:5-e", 9876, 0, 3, 0, 0,
	    false },
	/* starttime 523042 ≥ 523000 (t0 boottime in ticks): born after t0,
	 * so its whole counters are the delta: 21 7 1650 5 */
	{ 4318, 10167, "com.google.android.apps.messaging", ".apps.messaging",
	    523042, 21, 7, 1650, 5, true },
	/* the new instance of pid 4321, starttime 523071: 3 2 850 1. The old
	 * one (sh, utime 500, minflt 9000) must not be subtracted. */
	{ 4321, 2000, "cmd", "cmd", 523071, 3, 2, 850, 1, true },
};

START_TEST(processes)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	const struct window_task *t;
	size_t i;

	/* only instances with activity: kthreadd (2) and vold (498) were
	 * idle, photos (3877) and sh (old 4321) never had a valid delta */
	ck_assert_uint_eq(w->nprocs, nitems(a_procs));
	ck_assert_ptr_null(task_find(w, false, 2));
	ck_assert_ptr_null(task_find(w, false, 498));
	ck_assert_ptr_null(task_find(w, false, 3877));
	for (i = 0; i < nitems(a_procs); i++) {
		const struct want_proc *p = &a_procs[i];

		t = task_get(w, false, p->pid);
		assert_counts(t, p->u, p->s, p->minflt, p->majflt);
		ck_assert_int_eq(t->tgid, p->pid);
		ck_assert_uint_eq(t->uid, p->uid);
		ck_assert_str_eq(window_task_name(t), p->name);
		ck_assert_str_eq(t->comm, p->comm);
		ck_assert_uint_eq(t->starttime, p->starttime);
		ck_assert(t->born == p->born);
		ck_assert(!t->exited);
		/* one valid sample: 1 s, Δtotal 700, 7 CPUs online: 700/7 */
		assert_denoms(t, 1, SEC(1), 700, 100.0);
	}
	ck_assert_uint_eq(w->health.procs_scanned, 10);
	fx_done(&f);
}
END_TEST

/*
 * The three CPU figures, by hand. Δwall is 1 s, Δtotal 700 ticks, and 7 CPUs
 * are online, so the normalised denominator is 700/7 = 100 ticks.
 */
START_TEST(cpu_figures)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	const struct window_task *t;
	uint64_t cpu;

	/* systemui: 44 + 9 = 53 ticks, 0.53 s of CPU in 1 s */
	t = task_get(w, false, 2051);
	cpu = t->d_utime + t->d_stime;
	ck_assert_uint_eq(cpu, 53);
	ck_assert_double_eq_tol(metric_core_equiv(cpu, t->wall_ns, w->hz), 0.53,
	    TOL);
	ck_assert_double_eq_tol(metric_machine_share(cpu, t->total_ticks),
	    53.0 / 700.0, TOL);
	ck_assert_double_eq_tol(metric_normalised(cpu, t->norm_ticks), 0.53,
	    TOL);

	/* system_server: 61 + 17 = 78 ticks */
	t = task_get(w, false, 1234);
	cpu = t->d_utime + t->d_stime;
	ck_assert_uint_eq(cpu, 78);
	ck_assert_double_eq_tol(metric_core_equiv(cpu, t->wall_ns, w->hz), 0.78,
	    TOL);
	ck_assert_double_eq_tol(metric_machine_share(cpu, t->total_ticks),
	    78.0 / 700.0, TOL);
	ck_assert_double_eq_tol(metric_normalised(cpu, t->norm_ticks), 0.78,
	    TOL);

	/* the messaging app was born 0.58 s before t1: 21 + 7 = 28 ticks,
	 * divided by the sample's whole second like any other */
	t = task_get(w, false, 4318);
	cpu = t->d_utime + t->d_stime;
	ck_assert_uint_eq(cpu, 28);
	ck_assert_double_eq_tol(metric_core_equiv(cpu, t->wall_ns, w->hz), 0.28,
	    TOL);
	ck_assert_double_eq_tol(metric_machine_share(cpu, t->total_ticks),
	    28.0 / 700.0, TOL);

	/* kworker: 3 ticks of stime */
	t = task_get(w, false, 8412);
	ck_assert_double_eq_tol(metric_core_equiv(3, t->wall_ns, w->hz), 0.03,
	    TOL);
	ck_assert_double_eq_tol(metric_normalised(3, t->norm_ticks), 0.03, TOL);
	fx_done(&f);
}
END_TEST

START_TEST(reuse_exit_birth)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);
	const struct window_task *t;

	/*
	 * pid 4321: sh (starttime 4512, utime 500) in t0, cmd (starttime
	 * 523071, utime 3) in t1. One identity change, and the new instance
	 * holds only its own counters: 3 − 500 would wrap around.
	 */
	ck_assert_uint_eq(w->inv_deltas[INV_IDENTITY], 1);
	t = task_get(w, false, 4321);
	ck_assert_uint_eq(t->starttime, 523071);
	ck_assert_str_eq(t->comm, "cmd");
	ck_assert(t->born);
	assert_counts(t, 3, 2, 850, 1);

	/*
	 * Instances that ended: photos (3877) exited, and the old sh ended
	 * unseen when its pid was reused: 2 processes. Their threads: 3877,
	 * 3890 and the old 4321: 3. Neither had a valid delta, so neither is
	 * recorded.
	 */
	ck_assert_uint_eq(w->health.procs_exited, 2);
	ck_assert_uint_eq(w->health.threads_exited, 3);
	ck_assert_ptr_null(task_find(w, false, 3877));
	ck_assert_ptr_null(task_find(w, true, 3890));

	/* born: starttime 523042 × 10 ms ≥ t0's boottime 5230 s */
	t = task_get(w, false, 4318);
	ck_assert(t->born);
	fx_done(&f);
}
END_TEST

/* ----------------------------------------------- scenario A: the threads */

struct want_thread {
	int32_t tid, tgid;
	uint32_t uid;
	const char *comm;
	uint64_t u, s, minflt, majflt;
	bool born;
};

/* task/<tid>/stat, t1 − t0 of utime, stime, minflt, majflt. */
static const struct want_thread a_threads[] = {
	/* stime 373 → 374 */
	{ 1, 1, 0, "init", 0, 1, 0, 0, false },
	/* 210 → 211, 160 → 161 */
	{ 571, 571, 1000, "android.hardwar", 1, 1, 0, 0, false },
	/* 1830 → 1835, 1410 → 1414, 2210 → 2222 */
	{ 590, 571, 1000, "HwBinder:571_1", 5, 4, 12, 0, false },
	/* 25110 → 25132, 9820 → 9826, 61200 → 61290 */
	{ 640, 640, 1000, "surfaceflinger", 22, 6, 90, 0, false },
	/* 3120 → 3124, 2410 → 2413, 3300 → 3310 */
	{ 702, 640, 1000, "binder:640_1", 4, 3, 10, 0, false },
	/* 14230 → 14242, 3910 → 3914, 22100 → 22140 */
	{ 733, 640, 1000, "RenderEngine", 12, 4, 40, 0, false },
	/* stime 2290 → 2291 */
	{ 740, 640, 1000, "TimerDispatch", 0, 1, 0, 0, false },
	/* 31240 → 31249, 6110 → 6113, 402100 → 402140 */
	{ 1234, 1234, 1000, "system_server", 9, 3, 40, 0, false },
	/* 12870 → 12884, 1920 → 1922, 188300 → 188600 */
	{ 1240, 1234, 1000, "HeapTaskDaemon", 14, 2, 300, 0, false },
	/* 9411 → 9418, 5330 → 5334, 41230 → 41290 */
	{ 1251, 1234, 1000, "Binder:1234_1", 7, 4, 60, 0, false },
	/* 9102 → 9120, 5187 → 5192, 39876 → 40026, majflt 91 → 92 */
	{ 1252, 1234, 1000, "Binder:1234_2", 18, 5, 150, 1, false },
	/* 6120 → 6133, 2310 → 2313, 30110 → 30170, majflt 40 → 41 */
	{ 1290, 1234, 1000, "ActivityManager", 13, 3, 60, 1, false },
	/* 18230 → 18250, 3320 → 3324, 210400 → 210600 */
	{ 2051, 2051, 10123, "ui) (thread", 20, 4, 200, 0, false },
	/* 15110 → 15129, 2870 → 2873, 90210 → 90360, majflt 120 → 121 */
	{ 2077, 2051, 10123, "RenderThread", 19, 3, 150, 1, false },
	/* 1240 → 1245, 810 → 812, 12030 → 12068 */
	{ 2090, 2051, 10123, "binder:2051_1", 5, 2, 38, 0, false },
	/* stime 2453 → 2456 */
	{ 8412, 8412, 0, "kworker/u16:5-e", 0, 3, 0, 0, false },
	/* born after t0 (starttime 523042, 523048, 523049): whole counters */
	{ 4318, 4318, 10167, ".apps.messaging", 15, 5, 1200, 4, true },
	{ 4319, 4318, 10167, "Jit thread pool", 5, 1, 300, 1, true },
	{ 4320, 4318, 10167, "HeapTaskDaemon", 1, 1, 150, 0, true },
	/* the new 4321's only thread, starttime 523071 */
	{ 4321, 4321, 2000, "cmd", 3, 2, 850, 1, true },
};

/*
 * Threads with no Δ: kthreadd's (2), all of idle vold's (498 503 506 517),
 * and the idle threads of busy processes (SurfaceFlinger's HwBinder:640_1
 * 741, system_server's android.bg 1301).
 */
static const int32_t a_threads_idle[] = { 2, 498, 503, 506, 517, 741, 1301 };

static void
assert_a_threads(const struct window *w)
{
	size_t i;

	ck_assert_uint_eq(w->nthreads, nitems(a_threads));
	for (i = 0; i < nitems(a_threads); i++) {
		const struct want_thread *p = &a_threads[i];
		const struct window_task *t = task_get(w, true, p->tid);

		assert_counts(t, p->u, p->s, p->minflt, p->majflt);
		ck_assert_int_eq(t->tgid, p->tgid);
		ck_assert_uint_eq(t->uid, p->uid);
		ck_assert_str_eq(t->comm, p->comm);
		/* a thread's name is its own comm, not the process name */
		ck_assert_str_eq(window_task_name(t), p->comm);
		ck_assert(t->born == p->born);
		assert_denoms(t, 1, SEC(1), 700, 100.0);
	}
	for (i = 0; i < nitems(a_threads_idle); i++)
		ck_assert_ptr_null(task_find(w, true, a_threads_idle[i]));
}

START_TEST(threads_changed)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_CHANGED);

	assert_a_threads(w);
	/*
	 * Read at t1: the threads of processes whose counters moved. init 1,
	 * composer 2, SurfaceFlinger 5, system_server 6, systemui 3,
	 * kworker 1, messaging 3, cmd 1 = 22. kthreadd's 1 and vold's 4 are
	 * skipped.
	 */
	ck_assert_uint_eq(w->health.threads_scanned, 22);
	fx_done(&f);
}
END_TEST

START_TEST(threads_all)
{
	struct fx f;
	const struct window *w = scenario_a(&f, THREADS_ALL);

	/* reading every thread changes no figure... */
	assert_a_threads(w);
	/* ...only the work: 22 + kthreadd 1 + vold 4 */
	ck_assert_uint_eq(w->health.threads_scanned, 27);
	ck_assert_uint_eq(w->health.threads_exited, 3);
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------ scenario B: CPU hotplug */

START_TEST(hotplug)
{
	struct fx f;
	const struct window *w = scenario_hotplug(&f, THREADS_CHANGED);
	/*
	 * Two valid samples; Σ of the deltas is t2 − t0. Aggregate:
	 * t0 592734 5283 310607 2822899 11923 13341 16234 0 1520 0
	 * t2 593082 5287 310736 2823819 11930 13356 16249 0 1525 0
	 * It includes cpu5's 38 ticks since it came back (the line sums all
	 * possible CPUs): 700 at t1 + 738 at t2 = 1438.
	 */
	const struct cpu_times all = { 348, 4, 129, 920, 7, 15, 15, 0, 5, 0 };
	/* cpuN, t2 − t0, for the CPUs online in all three reads */
	const struct cpu_times cpu[8] = {
		/* t2 61266 1204 40129 386261 3123 5015 2474 */
		[0] = { 32, 1, 17, 141, 3, 3, 3, 0, 0, 0 },
		/* t2 52893 987 35423 401481 2212 1807 1044 */
		[1] = { 22, 0, 13, 161, 1, 2, 2, 0, 0, 0 },
		/* t2 49137 903 33887 409398 2034 1424 910 */
		[2] = { 17, 1, 11, 167, 0, 2, 2, 0, 0, 0 },
		/* t2 47831 913 32985 411161 1988 1382 875 */
		[3] = { 20, 2, 15, 158, 1, 2, 2, 0, 0, 0 },
		/* t2 118862 402 51260 321943 812 1104 3522 0 1525 */
		[4] = { 97, 0, 26, 73, 0, 2, 2, 0, 5, 0 },
		/* cpu5's line appeared at t2: its delta is not summed */
		[5] = { 0 },
		/* t2 104480 377 47037 339787 701 1013 3109 */
		[6] = { 60, 0, 19, 116, 0, 2, 2, 0, 0, 0 },
		/* t2 87389 290 39897 365573 657 1000 2895 */
		[7] = { 79, 0, 22, 93, 2, 2, 2, 0, 0, 0 },
	};
	/* 200+201+200+200+200+199+200 */
	const uint64_t total[8] = { 200, 201, 200, 200, 200, 0, 199, 200 };
	const uint32_t none[INV__MAX] = { 0 };
	uint32_t inv[INV__MAX] = { 0 };
	const struct window_task *t;
	unsigned i;

	ck_assert_uint_eq(w->samples, 3);
	ck_assert_uint_eq(w->samples_valid, 2);
	assert_invalid(w->inv_samples, none, "inv_samples");
	inv[INV_IDENTITY] = 1; /* pid 4321 at t1 */
	inv[INV_HOTPLUG] = 1;  /* cpu5 at t2 */
	assert_invalid(w->inv_deltas, inv, "inv_deltas");

	assert_times(&w->all.d, &all, "all");
	/* 348+4+129+920+7+15+15 */
	ck_assert_uint_eq(cpu_times_total(&w->all.d), 1438);
	ck_assert_uint_eq(w->all.samples, 2);
	ck_assert_uint_eq(w->all.wall_ns, SEC(2));
	for (i = 0; i < 8; i++) {
		char what[16];

		snprintf(what, sizeof(what), "cpu%u", i);
		assert_times(&w->cpu[i].d, &cpu[i], what);
		ck_assert_uint_eq(cpu_times_total(&w->cpu[i].d), total[i]);
		ck_assert_uint_eq(w->cpu[i].samples, i == 5 ? 0 : 2);
		ck_assert_uint_eq(w->cpu[i].wall_ns, i == 5 ? 0 : SEC(2));
		ck_assert(w->cpu[i].online_end);
	}
	/* back online, cpu5 reads policy4 through its symlink: cur 1766400
	 * of max 2419200, and its capacity 828 */
	ck_assert_int_eq(w->cpu[5].capacity, 828);
	ck_assert_int_eq(w->cpu[5].max_khz, 2419200);
	assert_gauge(&w->cpu[5].cur_khz, 1, 1766400, 1766400, 1766400, 1766400,
	    "cpu5 cur_khz");
	assert_gauge(&w->cpu[5].freq_ratio, 1, 1766400.0 / 2419200.0,
	    1766400.0 / 2419200.0, 1766400.0 / 2419200.0, 1766400.0 / 2419200.0,
	    "cpu5 freq_ratio");
	/* 7, 7, then 8 cpuN lines */
	assert_gauge(&w->online_cpus, 3, 7, 8, 22, 8, "online_cpus");
	/* ctxt 148229577 − 148201937; processes 61881 − 61877 */
	ck_assert_uint_eq(w->d_ctxt, 27640);
	ck_assert_uint_eq(w->d_processes, 4);
	/* pgfault 184408939 − 184403110 */
	ck_assert_uint_eq(w->d_vm[VM_PGFAULT], 5829);
	ck_assert_uint_eq(w->vm_samples, 2);

	/*
	 * systemui, t2 − t0: utime 44461 − 44380 = 81, stime 9116 − 9100 = 16,
	 * minflt 433177 − 432640 = 537, majflt 2245 − 2244 = 1. Its
	 * denominators: 2 s; Δtotal 700 + 738; normalised 700/7 + 738/8,
	 * each sample divided by its own online count.
	 */
	t = task_get(w, false, 2051);
	assert_counts(t, 81, 16, 537, 1);
	assert_denoms(t, 2, SEC(2), 1438, 100.0 + 92.25);
	ck_assert_double_eq_tol(metric_core_equiv(97, t->wall_ns, w->hz), 0.485,
	    TOL);
	ck_assert_double_eq_tol(metric_machine_share(97, t->total_ticks),
	    97.0 / 1438.0, TOL);
	ck_assert_double_eq_tol(metric_normalised(97, t->norm_ticks),
	    97.0 / 192.25, TOL);

	/* init moved at t1 only (stime +1): a zero Δ at t2 is still a sample */
	t = task_get(w, false, 1);
	assert_counts(t, 0, 1, 0, 0);
	assert_denoms(t, 2, SEC(2), 1438, 192.25);

	/* vold idle at t1, busy at t2: utime 214 → 216, stime 388 → 389,
	 * minflt 9812 → 9818 */
	t = task_get(w, false, 498);
	assert_counts(t, 2, 1, 6, 0);
	assert_denoms(t, 2, SEC(2), 1438, 192.25);
	/*
	 * Its thread 506 (binder:498_1): 38 → 40, 72 → 73, 1602 → 1608. It
	 * was not read at t1 (vold had not moved), but its Δ there was 0 all
	 * the same: two samples, like its process, not one.
	 */
	t = task_get(w, true, 506);
	assert_counts(t, 2, 1, 6, 0);
	assert_denoms(t, 2, SEC(2), 1438, 192.25);
	/* init's thread the other way round: read at t1, skipped at t2 */
	t = task_get(w, true, 1);
	assert_counts(t, 0, 1, 0, 0);
	assert_denoms(t, 2, SEC(2), 1438, 192.25);

	/* messaging: born in t1, so t2's counters are all its use: 56 15
	 * 2710 7 */
	t = task_get(w, false, 4318);
	assert_counts(t, 56, 15, 2710, 7);
	ck_assert(t->born && !t->exited);
	assert_denoms(t, 2, SEC(2), 1438, 192.25);

	/* system_server's Binder:1234_2, t2 − t0: 9131 − 9102, 5196 − 5187,
	 * 40051 − 39876, 93 − 91 */
	t = task_get(w, true, 1252);
	assert_counts(t, 29, 9, 175, 2);
	assert_denoms(t, 2, SEC(2), 1438, 192.25);

	/* cmd: born in t1 and gone in t2, so it is kept as an exited
	 * instance with the one sample it had */
	t = task_get(w, false, 4321);
	assert_counts(t, 3, 2, 850, 1);
	ck_assert(t->born && t->exited);
	assert_denoms(t, 1, SEC(1), 700, 100.0);
	t = task_get(w, true, 4321);
	ck_assert(t->born && t->exited);
	/* 3877 and the old sh at t1, cmd at t2; their threads 3 + 1 */
	ck_assert_uint_eq(w->health.procs_exited, 3);
	ck_assert_uint_eq(w->health.threads_exited, 4);
	/*
	 * At t2: 1 2 498 571 640 1234 2051 4318 8412. Threads read are those
	 * of the processes that moved: vold 4, composer 2, SurfaceFlinger 5,
	 * system_server 6, systemui 3, messaging 3, kworker 1.
	 */
	ck_assert_uint_eq(w->health.procs_scanned, 9);
	ck_assert_uint_eq(w->health.threads_scanned, 24);
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------- scenario C: suspended */

/* Run with each threads mode: the figures must not depend on it. */
static const enum threads_mode modes[] = { THREADS_CHANGED, THREADS_ALL };

START_TEST(sleep_gap)
{
	struct fx f;
	const struct window *w = scenario_sleep(&f, modes[_i]);
	/*
	 * t0→t1 has 6 s of boottime against 1 s of monotonic: 5 s asleep,
	 * over the 50 ms limit. Nothing of t1 is summed; t1 becomes the
	 * baseline and t2 is valid again: every Δ is t2 − t1.
	 * Aggregate t1 592916 5286 310673 2823327 11928 13349 16242 0 1523 0
	 *           t2 593082 5287 310736 2823819 11930 13356 16249 0 1525 0
	 */
	const struct cpu_times all = { 166, 1, 63, 492, 2, 7, 7, 0, 2, 0 };
	/* cpu0 t1 61252 1204 40121 386186 3122 5014 2473
	 *      t2 61266 1204 40129 386261 3123 5015 2474 */
	const struct cpu_times cpu0 = { 14, 0, 8, 75, 1, 1, 1, 0, 0, 0 };
	/* cpu4 t1 118822 402 51248 321897 812 1103 3521 0 1523
	 *      t2 118862 402 51260 321943 812 1104 3522 0 1525 */
	const struct cpu_times cpu4 = { 40, 0, 12, 46, 0, 1, 1, 0, 2, 0 };
	uint32_t inv[INV__MAX] = { 0 };
	const struct window_task *t;

	ck_assert_uint_eq(w->samples, 3);
	ck_assert_uint_eq(w->samples_valid, 1);
	inv[INV_SLEPT] = 1;
	assert_invalid(w->inv_samples, inv, "inv_samples");
	memset(inv, 0, sizeof(inv));
	/* the reused pid is seen at t1 even though that sample is dropped;
	 * cpu5 comes back at t2 */
	inv[INV_IDENTITY] = 1;
	inv[INV_HOTPLUG] = 1;
	assert_invalid(w->inv_deltas, inv, "inv_deltas");

	assert_times(&w->all.d, &all, "all");
	/* 166+1+63+492+2+7+7 */
	ck_assert_uint_eq(cpu_times_total(&w->all.d), 738);
	ck_assert_uint_eq(w->all.samples, 1);
	ck_assert_uint_eq(w->all.wall_ns, SEC(1));
	assert_times(&w->cpu[0].d, &cpu0, "cpu0");
	assert_times(&w->cpu[4].d, &cpu4, "cpu4");
	ck_assert_uint_eq(w->cpu[0].samples, 1);
	ck_assert_uint_eq(w->cpu[5].samples, 0);
	/* ctxt 148229577 − 148216475; processes 61881 both */
	ck_assert_uint_eq(w->d_ctxt, 13102);
	ck_assert_uint_eq(w->d_processes, 0);
	/* pgfault 184408939 − 184407237, pswpout 4120368 both */
	ck_assert_uint_eq(w->d_vm[VM_PGFAULT], 1702);
	ck_assert_uint_eq(w->d_vm[VM_PSWPOUT], 0);
	ck_assert_uint_eq(w->vm_samples, 1);
	/* cpu some 87364782 − 87344912; memory 2114660 and 801647 both;
	 * io some 9919865 − 9917655, full 4105275 − 4104395 */
	ck_assert_uint_eq(w->psi[PSI_CPU].d_some_us, 19870);
	ck_assert_uint_eq(w->psi[PSI_MEMORY].d_some_us, 0);
	ck_assert_uint_eq(w->psi[PSI_MEMORY].d_full_us, 0);
	ck_assert_uint_eq(w->psi[PSI_MEMORY].samples, 1);
	ck_assert_uint_eq(w->psi[PSI_IO].d_some_us, 2210);
	ck_assert_uint_eq(w->psi[PSI_IO].d_full_us, 880);
	/* gauges are readings, not deltas: all three count */
	ck_assert_uint_eq(w->load1.n, 3);

	/* init's only activity (stime +1) fell in the slept sample */
	ck_assert_ptr_null(task_find(w, false, 1));
	ck_assert_ptr_null(task_find(w, true, 1));
	/*
	 * messaging started before the suspend, so t1 is its baseline and it
	 * is not "born" in this window: utime 56 − 21, stime 15 − 7,
	 * minflt 2710 − 1650, majflt 7 − 5
	 */
	t = task_get(w, false, 4318);
	assert_counts(t, 35, 8, 1060, 2);
	ck_assert(!t->born);
	/* one sample of 1 s; Δtotal 738 over 8 online CPUs = 92.25 */
	assert_denoms(t, 1, SEC(1), 738, 92.25);
	/* systemui: 44461 − 44424, 9116 − 9109, 433177 − 433028 */
	t = task_get(w, false, 2051);
	assert_counts(t, 37, 7, 149, 0);
	ck_assert_double_eq_tol(metric_core_equiv(44, t->wall_ns, w->hz), 0.44,
	    TOL);
	ck_assert_double_eq_tol(metric_machine_share(44, t->total_ticks),
	    44.0 / 738.0, TOL);
	ck_assert_double_eq_tol(metric_normalised(44, t->norm_ticks),
	    44.0 / 92.25, TOL);
	/* its main thread: 18267 − 18250, 3327 − 3324, 210680 − 210600.
	 * Under THREADS_CHANGED the threads were not read at the slept t1
	 * unless their process moved, which systemui did: its baseline must
	 * still be t1, not t0 (that would give 37 ticks of utime). */
	t = task_get(w, true, 2051);
	assert_counts(t, 17, 3, 80, 0);
	assert_denoms(t, 1, SEC(1), 738, 92.25);
	/* a messaging thread: 39 − 15, 11 − 5, 2100 − 1200, 6 − 4 */
	t = task_get(w, true, 4318);
	assert_counts(t, 24, 6, 900, 2);
	ck_assert(!t->born);
	/* cmd only ever had its slept sample: it ends with no record */
	ck_assert_ptr_null(task_find(w, false, 4321));
	ck_assert_uint_eq(w->health.procs_exited, 3);
	/* vold, composer, SurfaceFlinger, system_server, systemui,
	 * messaging, kworker */
	ck_assert_uint_eq(w->nprocs, 7);
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------------- threads modes */

/*
 * THREADS_CHANGED only decides which threads to read. It must not change a
 * figure of any thread it reports: every thread record must equal the one
 * THREADS_ALL produces over the same snapshots and clocks.
 */
static void
compare_modes(const struct window *(*scenario)(struct fx *, enum threads_mode))
{
	struct fx fa, fc;
	const struct window *wa = scenario(&fa, THREADS_ALL);
	const struct window *wc = scenario(&fc, THREADS_CHANGED);
	size_t i;

	ck_assert_uint_eq(wc->nthreads, wa->nthreads);
	for (i = 0; i < wa->nthreads; i++) {
		const struct window_task *a = &wa->threads[i];
		const struct window_task *c = task_get(wc, true, a->id);

		ck_assert_msg(c->d_utime == a->d_utime &&
			c->d_stime == a->d_stime &&
			c->d_minflt == a->d_minflt &&
			c->d_majflt == a->d_majflt,
		    "thread %d: changed-mode Δutime/Δstime %" PRIu64 "/%" PRIu64
		    ", all-mode %" PRIu64 "/%" PRIu64,
		    a->id, c->d_utime, c->d_stime, a->d_utime, a->d_stime);
		ck_assert_msg(c->samples == a->samples &&
			c->wall_ns == a->wall_ns &&
			c->total_ticks == a->total_ticks,
		    "thread %d: changed-mode samples/wall_ns %u/%" PRIu64
		    ", all-mode %u/%" PRIu64,
		    a->id, c->samples, c->wall_ns, a->samples, a->wall_ns);
	}
	fx_done(&fc);
	fx_done(&fa);
}

/*
 * Hotplug window: vold was idle at t1, so THREADS_CHANGED did not read its
 * threads then, and init was idle at t2. The skipped samples must still
 * count in those threads' denominators: their Δ there is known to be 0.
 */
START_TEST(changed_mode_denominators)
{
	compare_modes(scenario_hotplug);
}
END_TEST

/*
 * Sleep window: the slept t1 only refreshes baselines. Under THREADS_CHANGED
 * the threads' baselines must be refreshed too, or their Δ at t2 would run
 * from t0 and bring back what the slept sample dropped.
 */
START_TEST(changed_mode_slept_sample)
{
	compare_modes(scenario_sleep);
}
END_TEST

/* ------------------------------------------------------------------ main */

/* ------------------------------ scenario B: foreground and background */

/*
 * fixtures/phone/fgbg/tN overlays each snapshot with /proc/<pid>/cgroup
 * (cpuset line, v2 uid_/pid_ line) and oom_score_adj, and the cpuset tree
 * under sys/fs/cgroup/cpuset. Each interval's Δ goes to the state read at
 * its end (t1, t2). From <pid>/stat as above:
 */
struct want_state {
	int32_t pid;
	enum fg_state st;
	uint64_t u, s, minflt, majflt;
	uint32_t samples;
};

static const struct want_state b_states[] = {
	/* cpuset "/": stime 1873 → 1874, then still; t2 not read */
	{ 1, FG_SYSTEM, 0, 1, 0, 0, 1 },
	/* "/foreground": 61 17 610 2, then utime 112214 → 112251, stime
	 * 33864 → 33876, minflt 1072238 → 1072325, majflt 6204 → 6205 */
	{ 1234, FG_FOREGROUND, 98, 29, 697, 3, 2 },
	/* no cpuset line: oom_score_adj −800 (PERSISTENT_PROC_ADJ); 44 9 388
	 * 1, then 44424 → 44461, 9109 → 9116, 433028 → 433177 */
	{ 2051, FG_FOREGROUND, 81, 16, 537, 1, 2 },
	/* born in top-app (its whole counters 21 7 1650 5), in background
	 * at t2: 56 − 21, 15 − 7, 2710 − 1650, 7 − 5 */
	{ 4318, FG_TOP_APP, 21, 7, 1650, 5, 1 },
	{ 4318, FG_BACKGROUND, 35, 8, 1060, 2, 1 },
	/* the new 4321 (cmd), "/system-background", gone at t2 */
	{ 4321, FG_BACKGROUND, 3, 2, 850, 1, 1 },
	/* "/": 6 5 12 0, then 2166 → 2171, 1655 → 1659, 13342 → 13345 */
	{ 571, FG_SYSTEM, 11, 9, 15, 0, 2 },
	/* "/foreground": 38 14 140 0, then 45812 → 45846, 19732 → 19744,
	 * 96490 → 96532 */
	{ 640, FG_FOREGROUND, 72, 26, 182, 0, 2 },
	/* "/": stime 2453 → 2456 → 2458 */
	{ 8412, FG_SYSTEM, 0, 5, 0, 0, 2 },
	/* "/system-background", idle until t2: 214 → 216, 388 → 389,
	 * 9812 → 9818 */
	{ 498, FG_BACKGROUND, 2, 1, 6, 0, 1 },
};

START_TEST(fgbg_states)
{
	struct fgbg_config cfg;
	struct fgbg_opts o = { 0 };
	const struct window_fgbg *p;
	const struct window *w;
	struct fgbg *fg = NULL;
	struct fx f;
	size_t i, k;

	fx_open(&f, THREADS_CHANGED);
	fx_state(&f, "fgbg/t0", true);
	fgbg_config_init(&cfg);
	o.proc_root = f.proc;
	o.sys_root = f.sys;
	o.cfg = &cfg; /* auto: the cpuset tree says Android */
	ck_assert_int_eq(fgbg_new(&o, &fg), 0);
	ck_assert_uint_eq(fgbg_status(fg), FGBG_ON);
	collector_set_fgbg(f.c, fg);
	fx_sample(&f, T0_MONO, T0_BOOT);
	fx_state(&f, "t1", false);
	fx_state(&f, "fgbg/t1", true);
	fx_sample(&f, T0_MONO + 1, T0_BOOT + 1);
	fx_state(&f, "t2", false);
	fx_state(&f, "fgbg/t2", true);
	fx_sample(&f, T0_MONO + 2, T0_BOOT + 2);
	w = fx_close(&f, T0_MONO + 2, T0_BOOT + 2);
	ck_assert_ptr_nonnull(p = window_fgbg(w));
	ck_assert_uint_eq(p->status, FGBG_ON);
	ck_assert_uint_eq(p->scans, 3);
	/* t1: 8 processes moved (not kthreadd, not vold), t2: 7 (not init,
	 * 4321 gone); 2051 by oom_score_adj both times */
	ck_assert_uint_eq(p->reads, 15);
	ck_assert_uint_eq(p->by_src[FG_SRC_CPUSET], 13);
	ck_assert_uint_eq(p->by_src[FG_SRC_ADJ], 2);
	ck_assert_uint_eq(p->read_errors, 0);
	ck_assert_uint_eq(p->n, nitems(b_states));
	for (i = 0; i < nitems(b_states); i++) {
		const struct want_state *x = &b_states[i];

		for (k = 0; k < p->n; k++)
			if (p->e[k].pid == x->pid && p->e[k].state == x->st)
				break;
		ck_assert_msg(k < p->n, "no %d in %s", x->pid,
		    fg_state_name(x->st));
		ck_assert_uint_eq(p->e[k].d_utime, x->u);
		ck_assert_uint_eq(p->e[k].d_stime, x->s);
		ck_assert_uint_eq(p->e[k].d_minflt, x->minflt);
		ck_assert_uint_eq(p->e[k].d_majflt, x->majflt);
		ck_assert_uint_eq(p->e[k].samples, x->samples);
	}
	/* the datasets partition the processes' own figures */
	for (i = 0; i < w->nprocs; i++) {
		uint64_t u = 0, s = 0, mn = 0, mj = 0;

		for (k = 0; k < p->n; k++) {
			if (p->e[k].pid != w->procs[i].id ||
			    p->e[k].starttime != w->procs[i].starttime)
				continue;
			u += p->e[k].d_utime;
			s += p->e[k].d_stime;
			mn += p->e[k].d_minflt;
			mj += p->e[k].d_majflt;
		}
		assert_counts(&w->procs[i], u, s, mn, mj);
	}
	fx_done(&f);
	fgbg_free(fg);
	fgbg_config_release(&cfg);
}
END_TEST

static Suite *
fixture_suite(void)
{
	Suite *s = suite_create("fixture");
	TCase *tc;

	tc = tcase_create("system");
	tcase_add_test(tc, system_cpu);
	tcase_add_test(tc, cpu_freq_capacity);
	tcase_add_test(tc, capacity_weighted);
	tcase_add_test(tc, system_counters);
	tcase_add_test(tc, psi);
	tcase_add_test(tc, psi_no_full_line);
	suite_add_tcase(s, tc);

	tc = tcase_create("processes");
	tcase_add_test(tc, processes);
	tcase_add_test(tc, cpu_figures);
	tcase_add_test(tc, reuse_exit_birth);
	tcase_add_test(tc, threads_changed);
	tcase_add_test(tc, threads_all);
	tcase_add_test(tc, fgbg_states);
	suite_add_tcase(s, tc);

	tc = tcase_create("validity");
	tcase_add_test(tc, hotplug);
	tcase_add_loop_test(tc, sleep_gap, 0, nitems(modes));
	suite_add_tcase(s, tc);

	tc = tcase_create("threads_mode");
	tcase_add_test(tc, changed_mode_denominators);
	tcase_add_test(tc, changed_mode_slept_sample);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(fixture_suite());
}
