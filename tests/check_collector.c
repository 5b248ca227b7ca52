/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of collector.c (with sysfiles.c and proc_scan.c under it) over a
 * synthetic proc/sys tree written from C strings and driven by synthetic
 * clocks at HZ 100, so every expected figure follows from the counters the
 * test wrote.
 *
 * The tree is a small model: three CPUs, a few processes with threads. Each
 * test changes the model, writes it out and takes a sample. The collector
 * keeps /proc/stat and friends open and re-reads them at offset 0, so every
 * write goes through tu_write, which truncates in place.
 */
#include <check.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <signal.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "vitalsd.h"

/* snprintf that fails the test instead of cutting a path short */
#define xsnprintf(buf, sz, ...) \
	ck_assert_int_lt(snprintf(buf, sz, __VA_ARGS__), (int)(sz))

#define HZ 100
#define TICK_NS (NSEC_PER_SEC / HZ)
#define NCPU 3
#define NPROC 8
#define NTHR 4

/*
 * What one online CPU does in one second at HZ 100: 100 ticks in all.
 * guest and guest_nice are inside user and nice, as the kernel counts them.
 */
static const struct cpu_times per_sec = {
	.user = 40,
	.nice = 5,
	.system = 15,
	.idle = 30,
	.iowait = 4,
	.irq = 2,
	.softirq = 3,
	.steal = 1,
	.guest = 10,
	.guest_nice = 1,
};
#define TOTAL_PER_CPU_SEC 100

/* System-wide counters per second. */
#define CTXT_PER_SEC 1000
#define FORKS_PER_SEC 5
#define PGFAULT_PER_SEC 300
#define PSI_SOME_PER_SEC 20000
#define PSI_FULL_PER_SEC 7000

struct fthread {
	int tid;
	bool present, written;
	bool garbage;
	char comm[32];
	uint64_t starttime, utime, stime, minflt, majflt;
};

struct fproc {
	int pid;
	bool present, written;
	bool garbage; /* stat holds text that is not a stat line */
	char comm[32];
	const char *cmdline; /* NUL-separated, ends with "\0" */
	size_t cmdline_len;
	uint32_t uid;
	uint64_t starttime, utime, stime, minflt, majflt, rss;
	unsigned nthr;
	struct fthread thr[NTHR];
};

static struct fx {
	char *root;
	char proc[PATH_MAX], sys[PATH_MAX];
	struct collector *c;
	struct clocks clk;

	bool online[NCPU];
	struct cpu_times cpu[NCPU];
	struct cpu_times all;
	uint64_t ctxt, forks, pgfault;
	bool forks_frozen; /* no fork: "processes" stays (advance) */
	int64_t cur_khz0;  /* cpu0 scaling_cur_freq */
	bool stat_garbage;
	bool psi;
	uint64_t psi_some[PSI__MAX], psi_full[PSI__MAX];

	struct fproc procs[NPROC];
	unsigned nprocs;

	/* the window callback's record */
	unsigned ncb;
	uint64_t cb_seq[64];
	size_t cb_nprocs[64];
	uint64_t cb_sf_utime[64]; /* sf's d_utime in that window, or 0 */
	uint32_t cb_sf_samples[64];
} fx;

/* ------------------------------------------------------------- the model */

static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX];

	xsnprintf(path, sizeof(path), "%s/%s", fx.root, rel);
	ck_assert_int_eq(tu_writes(path, text), 0);
}

static void putf(const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
putf(const char *rel, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ck_assert_int_lt(n, (int)sizeof(buf));
	put(rel, buf);
}

static void
rmrel(const char *rel)
{
	char path[PATH_MAX];

	xsnprintf(path, sizeof(path), "%s/%s", fx.root, rel);
	tu_rmtree(path);
}

static struct fproc *
proc_add(int pid, const char *comm, const char *cmdline, size_t cmdline_len,
    uint32_t uid, uint64_t starttime)
{
	struct fproc *p;

	ck_assert_uint_lt(fx.nprocs, NPROC);
	p = &fx.procs[fx.nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->present = true;
	xsnprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->cmdline = cmdline;
	p->cmdline_len = cmdline_len;
	p->uid = uid;
	p->starttime = starttime;
	p->rss = 1000;
	return p;
}

static struct fthread *
thr_add(struct fproc *p, int tid, const char *comm, uint64_t starttime)
{
	struct fthread *t;

	ck_assert_uint_lt(p->nthr, NTHR);
	t = &p->thr[p->nthr++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->present = true;
	xsnprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->starttime = starttime;
	return t;
}

static struct fproc *
proc_get(int pid)
{
	unsigned i;

	for (i = 0; i < fx.nprocs; i++)
		if (fx.procs[i].pid == pid)
			return &fx.procs[i];
	ck_abort_msg("no fixture process %d", pid);
	return NULL;
}

static struct fthread *
thr_get(struct fproc *p, int tid)
{
	unsigned i;

	for (i = 0; i < p->nthr; i++)
		if (p->thr[i].tid == tid)
			return &p->thr[i];
	ck_abort_msg("no fixture thread %d", tid);
	return NULL;
}

/*
 * The pid is reused: a new instance with its own starttime and counters,
 * one thread (tid == pid), none of the old task directories left.
 */
static struct fproc *
reincarnate(int pid, uint64_t starttime, uint64_t utime, uint64_t stime,
    uint64_t minflt, uint64_t majflt)
{
	struct fproc *p = proc_get(pid);
	struct fthread *t;
	char rel[64], comm[32];

	xsnprintf(rel, sizeof(rel), "proc/%d/task", pid);
	rmrel(rel);
	p->nthr = 0;
	p->starttime = starttime;
	p->utime = utime;
	p->stime = stime;
	p->minflt = minflt;
	p->majflt = majflt;
	memcpy(comm, p->comm, sizeof(comm));
	t = thr_add(p, pid, comm, starttime);
	t->utime = utime;
	t->stime = stime;
	t->minflt = minflt;
	t->majflt = majflt;
	return p;
}

/* CPU time a thread used: its process's counters include it. */
static void
burn(int pid, int tid, uint64_t utime, uint64_t stime, uint64_t minflt)
{
	struct fproc *p = proc_get(pid);
	struct fthread *t = thr_get(p, tid);

	t->utime += utime;
	t->stime += stime;
	t->minflt += minflt;
	p->utime += utime;
	p->stime += stime;
	p->minflt += minflt;
}

/* Let secs of wall time pass for the system counters. */
static void
advance(unsigned secs)
{
	unsigned i, k;

	for (i = 0; i < NCPU; i++) {
		struct cpu_times d = per_sec;
		uint64_t *f = (uint64_t *)&d;

		if (!fx.online[i])
			continue; /* an offline CPU's counters stand still */
		for (k = 0; k < sizeof(d) / sizeof(uint64_t); k++)
			f[k] *= secs;
		cpu_times_add(&fx.cpu[i], &d);
		cpu_times_add(&fx.all, &d);
	}
	fx.ctxt += CTXT_PER_SEC * secs;
	if (!fx.forks_frozen)
		fx.forks += FORKS_PER_SEC * secs;
	fx.pgfault += PGFAULT_PER_SEC * secs;
	for (i = 0; i < PSI__MAX; i++) {
		fx.psi_some[i] += PSI_SOME_PER_SEC * secs;
		fx.psi_full[i] += PSI_FULL_PER_SEC * secs;
	}
}

static int
fmt_cpu(char *buf, size_t sz, const char *name, const struct cpu_times *t)
{
	return snprintf(buf, sz,
	    "%s %llu %llu %llu %llu %llu %llu %llu %llu "
	    "%llu %llu\n",
	    name, (unsigned long long)t->user, (unsigned long long)t->nice,
	    (unsigned long long)t->system, (unsigned long long)t->idle,
	    (unsigned long long)t->iowait, (unsigned long long)t->irq,
	    (unsigned long long)t->softirq, (unsigned long long)t->steal,
	    (unsigned long long)t->guest, (unsigned long long)t->guest_nice);
}

static void
write_stat(void)
{
	char buf[4096], name[16];
	size_t off = 0;
	unsigned i;

	if (fx.stat_garbage) {
		put("proc/stat", "this is not /proc/stat\n");
		return;
	}
	/* the aggregate line has two spaces after "cpu", like the kernel */
	off += (size_t)fmt_cpu(buf + off, sizeof(buf) - off, "cpu ", &fx.all);
	for (i = 0; i < NCPU; i++) {
		if (!fx.online[i])
			continue;
		xsnprintf(name, sizeof(name), "cpu%u", i);
		off += (size_t)fmt_cpu(buf + off, sizeof(buf) - off, name,
		    &fx.cpu[i]);
	}
	off += (size_t)snprintf(buf + off, sizeof(buf) - off,
	    "intr 12345 0 0 0 0\nctxt %llu\nbtime 1700000000\n"
	    "processes %llu\nprocs_running 3\nprocs_blocked 1\n"
	    "softirq 999 0 0 0 0 0 0 0 0 0 0\n",
	    (unsigned long long)fx.ctxt, (unsigned long long)fx.forks);
	ck_assert_uint_lt(off, sizeof(buf));
	put("proc/stat", buf);
}

static void
write_system(void)
{
	static const char *const psi_file[PSI__MAX] = {
		[PSI_CPU] = "proc/pressure/cpu",
		[PSI_MEMORY] = "proc/pressure/memory",
		[PSI_IO] = "proc/pressure/io",
	};
	unsigned i;

	write_stat();
	put("proc/loadavg", "1.50 0.75 0.25 3/412 4321\n");
	putf("proc/vmstat",
	    "nr_free_pages 1000\npgfault %llu\npgmajfault 7\n"
	    "pswpin 0\npswpout 0\n",
	    (unsigned long long)fx.pgfault);
	put("proc/meminfo",
	    "MemTotal:        3900000 kB\n"
	    "MemFree:          500000 kB\nMemAvailable:    1500000 kB\n");
	if (fx.cur_khz0 >= 0)
		putf("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
		    "%lld\n", (long long)fx.cur_khz0);
	if (!fx.psi)
		return;
	for (i = 0; i < PSI__MAX; i++) {
		/* cpu has no "full" line on kernels before 5.13 */
		if (i == PSI_CPU)
			putf(psi_file[i],
			    "some avg10=1.50 avg60=0.50 "
			    "avg300=0.10 total=%llu\n",
			    (unsigned long long)fx.psi_some[i]);
		else
			putf(psi_file[i],
			    "some avg10=2.00 avg60=0.50 "
			    "avg300=0.10 total=%llu\nfull avg10=0.75 "
			    "avg60=0.25 avg300=0.05 total=%llu\n",
			    (unsigned long long)fx.psi_some[i],
			    (unsigned long long)fx.psi_full[i]);
	}
}

static void
fmt_task_stat(char *buf, size_t sz, int id, const char *comm, int ppid,
    uint64_t minflt, uint64_t majflt, uint64_t utime, uint64_t stime,
    unsigned nthr, uint64_t starttime, uint64_t rss)
{
	/* fields 1..24 as the kernel prints them, then the tail */
	int n = snprintf(buf, sz,
	    "%d (%s) S %d %d %d 0 -1 4194560 %llu 0 "
	    "%llu 0 %llu %llu 0 0 20 0 %u 0 %llu 123456789 %llu "
	    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
	    id, comm, ppid, id, id, (unsigned long long)minflt,
	    (unsigned long long)majflt, (unsigned long long)utime,
	    (unsigned long long)stime, nthr, (unsigned long long)starttime,
	    (unsigned long long)rss);

	ck_assert_int_lt(n, (int)sz);
}

/*
 * A task ends: as the kernel's, a stat file kept open for it reads no
 * more (the kernel answers ESRCH; here the file is emptied before it is
 * unlinked, and a kept file reading nothing is given up). tid 0: the
 * process's own.
 */
static void
ended(int pid, int tid)
{
	char rel[PATH_MAX];

	if (tid == 0)
		xsnprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	else
		xsnprintf(rel, sizeof(rel), "proc/%d/task/%d/stat", pid, tid);
	put(rel, "");
}

static void
write_procs(void)
{
	char rel[PATH_MAX], buf[1024];
	unsigned i, j;

	for (i = 0; i < fx.nprocs; i++) {
		struct fproc *p = &fx.procs[i];

		xsnprintf(rel, sizeof(rel), "proc/%d", p->pid);
		if (!p->present) {
			if (p->written) {
				for (j = 0; j < p->nthr; j++)
					if (p->thr[j].written)
						ended(p->pid, p->thr[j].tid);
				ended(p->pid, 0);
				rmrel(rel);
			}
			p->written = false;
			continue;
		}
		p->written = true;
		xsnprintf(rel, sizeof(rel), "proc/%d/stat", p->pid);
		if (p->garbage) {
			put(rel, "garbage\n");
		} else {
			fmt_task_stat(buf, sizeof(buf), p->pid, p->comm, 1,
			    p->minflt, p->majflt, p->utime, p->stime, p->nthr,
			    p->starttime, p->rss);
			put(rel, buf);
		}
		xsnprintf(rel, sizeof(rel), "proc/%d/status", p->pid);
		putf(rel,
		    "Name:\t%s\nUmask:\t0077\nState:\tS (sleeping)\n"
		    "Tgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t1\nTracerPid:\t0\n"
		    "Uid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n"
		    "VmRSS:\t    4000 kB\n",
		    p->comm, p->pid, p->pid, p->uid, p->uid, p->uid, p->uid,
		    p->uid, p->uid, p->uid, p->uid);
		xsnprintf(rel, sizeof(rel), "%s/proc/%d/cmdline", fx.root,
		    p->pid);
		ck_assert_int_eq(tu_write(rel, p->cmdline, p->cmdline_len), 0);
		for (j = 0; j < p->nthr; j++) {
			struct fthread *t = &p->thr[j];

			xsnprintf(rel, sizeof(rel), "proc/%d/task/%d", p->pid,
			    t->tid);
			if (!t->present) {
				if (t->written) {
					ended(p->pid, t->tid);
					rmrel(rel);
				}
				t->written = false;
				continue;
			}
			t->written = true;
			xsnprintf(rel, sizeof(rel), "proc/%d/task/%d/stat",
			    p->pid, t->tid);
			fmt_task_stat(buf, sizeof(buf), t->tid, t->comm, 1,
			    t->minflt, t->majflt, t->utime, t->stime, p->nthr,
			    t->starttime, p->rss);
			put(rel, t->garbage ? "42 (x) S 1\n" : buf);
		}
	}
}

static void
window_cb_rec(const struct window *w, void *arg)
{
	size_t i;

	ck_assert_ptr_eq(arg, &fx);
	ck_assert_uint_lt(fx.ncb, 64);
	fx.cb_seq[fx.ncb] = w->seq;
	fx.cb_nprocs[fx.ncb] = w->nprocs;
	for (i = 0; i < w->nprocs; i++) {
		if (w->procs[i].id == 612) {
			fx.cb_sf_utime[fx.ncb] = w->procs[i].d_utime;
			fx.cb_sf_samples[fx.ncb] = w->procs[i].samples;
		}
	}
	fx.ncb++;
}

#define CMD(lit) lit, sizeof(lit) - 1

static void
setup(void)
{
	struct fproc *p;
	unsigned i;

	memset(&fx, 0, sizeof(fx));
	fx.root = tu_mkdtemp("collector");
	ck_assert_ptr_nonnull(fx.root);
	xsnprintf(fx.proc, sizeof(fx.proc), "%s/proc", fx.root);
	xsnprintf(fx.sys, sizeof(fx.sys), "%s/sys", fx.root);
	ck_assert_int_eq(mkdir(fx.proc, 0755), 0);

	/* An uptime of 1000 s monotonic, 1007 s boottime (it slept 7 s). */
	fx.clk.mono_ns = 1000 * NSEC_PER_SEC;
	fx.clk.boot_ns = 1007 * NSEC_PER_SEC;
	fx.clk.wall_ns = 1700000000 * NSEC_PER_SEC;

	for (i = 0; i < NCPU; i++) {
		fx.online[i] = true;
		/* some history since boot, different per CPU */
		fx.cpu[i].user = 10000 * (i + 1);
		fx.cpu[i].idle = 90000;
		fx.cpu[i].iowait = 500;
		cpu_times_add(&fx.all, &fx.cpu[i]);
	}
	fx.ctxt = 5000000;
	fx.forks = 4000;
	fx.pgfault = 1000000;
	fx.cur_khz0 = 1000000;

	/*
	 * cpu0 has cpufreq and a capacity, cpu1 only a capacity (no cpufreq
	 * driver), cpu2 nothing: the last two must read as unknown, not 0.
	 */
	put("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
	    "2000000\n");
	put("sys/devices/system/cpu/cpu0/cpu_capacity", "1024\n");
	put("sys/devices/system/cpu/cpu1/cpu_capacity", "512\n");
	put("proc/sys/kernel/random/boot_id",
	    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");

	p = proc_add(1, "init", CMD("/system/bin/init\0second_stage\0"), 0, 0);
	thr_add(p, 1, "init", 0);
	p = proc_add(612, "surfaceflinger", CMD("/system/bin/surfaceflinger\0"),
	    1000, 2468);
	thr_add(p, 612, "surfaceflinger", 2468);
	thr_add(p, 640, "RenderEngine", 2470);
	thr_add(p, 641, "binder:612_1", 2471);
	p = proc_add(4200, "com.android.sys", CMD("com.android.systemui\0"),
	    10050, 90000);
	thr_add(p, 4200, "com.android.sys", 90000);
	thr_add(p, 4230, "RenderThread", 90010);
}

static void
teardown(void)
{
	collector_free(fx.c);
	tu_rmtree(fx.root);
	free(fx.root);
	fx.root = NULL;
}

static void
start(enum threads_mode mode, unsigned interval_ms, unsigned window_s,
    unsigned ring)
{
	struct collector_opts o = {
		.proc_root = fx.proc,
		.sys_root = fx.sys,
		.hz = HZ,
		.interval_ms = interval_ms,
		.window_s = window_s,
		.ring = ring,
		.threads = mode,
	};
	const char *fds = getenv("VITALS_TEST_STAT_FDS");

	/* check_collector_statfd: every answer the same with stat files
	 * kept open */
	o.stat_fds = fds ? (unsigned)atoi(fds) : 0;
	ck_assert_int_eq(collector_new(&o, &fx.c), 0);
	collector_set_window_cb(fx.c, window_cb_rec, &fx);
}

/* Write the model out and sample after dmono of monotonic time, of which
 * the boottime clock saw extra_boot more (time spent suspended). */
static void
sample_at(int64_t dmono, int64_t extra_boot)
{
	fx.clk.mono_ns += dmono;
	fx.clk.boot_ns += dmono + extra_boot;
	fx.clk.wall_ns += dmono + extra_boot;
	write_system();
	write_procs();
	ck_assert_int_eq(collector_sample(fx.c, &fx.clk, false), 0);
}

/* The first read: a baseline only. */
static void
first(void)
{
	sample_at(0, 0);
}

/* One ordinary second. */
static void
step(void)
{
	advance(1);
	sample_at(NSEC_PER_SEC, 0);
}

/* Close the open window now and return it. */
static const struct window *
close_now(void)
{
	const struct window *w;

	ck_assert_int_eq(collector_close_window(fx.c, &fx.clk), 0);
	w = collector_window(fx.c, 0);
	ck_assert_ptr_nonnull(w);
	return w;
}

static const struct window_task *
find_task(const struct window *w, bool thread, int id, uint64_t starttime)
{
	const struct window_task *a = thread ? w->threads : w->procs;
	size_t n = thread ? w->nthreads : w->nprocs, i;

	for (i = 0; i < n; i++)
		if (a[i].id == id && a[i].starttime == starttime)
			return &a[i];
	return NULL;
}

static unsigned
count_id(const struct window *w, bool thread, int id)
{
	const struct window_task *a = thread ? w->threads : w->procs;
	size_t n = thread ? w->nthreads : w->nprocs, i;
	unsigned k = 0;

	for (i = 0; i < n; i++)
		k += a[i].id == id;
	return k;
}

static unsigned
inv_sum(const uint32_t *inv)
{
	unsigned i, s = 0;

	for (i = 0; i < INV__MAX; i++)
		s += inv[i];
	return s;
}

/* Σ of per_sec over secs seconds and ncpu CPUs, field by field. */
static void
assert_cpu_sum(const struct cpu_times *got, uint64_t cpu_secs)
{
	ck_assert_uint_eq(got->user, per_sec.user * cpu_secs);
	ck_assert_uint_eq(got->nice, per_sec.nice * cpu_secs);
	ck_assert_uint_eq(got->system, per_sec.system * cpu_secs);
	ck_assert_uint_eq(got->idle, per_sec.idle * cpu_secs);
	ck_assert_uint_eq(got->iowait, per_sec.iowait * cpu_secs);
	ck_assert_uint_eq(got->irq, per_sec.irq * cpu_secs);
	ck_assert_uint_eq(got->softirq, per_sec.softirq * cpu_secs);
	ck_assert_uint_eq(got->steal, per_sec.steal * cpu_secs);
	ck_assert_uint_eq(got->guest, per_sec.guest * cpu_secs);
	ck_assert_uint_eq(got->guest_nice, per_sec.guest_nice * cpu_secs);
	ck_assert_uint_eq(cpu_times_total(got), TOTAL_PER_CPU_SEC * cpu_secs);
}

/* ------------------------------------------------------------ the basics */

START_TEST(baseline_then_valid)
{
	static const int64_t khz[] = { 1000000, 1500000, 2000000, 500000 };
	const struct window_task *sf, *rt;
	const struct window *w;
	unsigned i;

	start(THREADS_ALL, 1000, 10, 4);
	fx.psi = true;
	fx.cur_khz0 = khz[0];
	first();
	ck_assert_ptr_null(collector_window(fx.c, 0));
	ck_assert_uint_eq(collector_open(fx.c)->samples, 1);
	ck_assert_uint_eq(collector_open(fx.c)->samples_valid, 0);
	for (i = 1; i < 4; i++) {
		burn(612, 640, 5, 2, 10);
		fx.cur_khz0 = khz[i];
		step();
	}
	w = close_now();

	ck_assert_uint_eq(w->seq, 1);
	ck_assert_uint_eq(w->hz, HZ);
	ck_assert_str_eq(w->boot_id, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
	ck_assert_uint_eq(w->samples, 4);
	ck_assert_uint_eq(w->samples_valid, 3);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 0);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 0);
	ck_assert_int_eq(w->mono_start_ns, 1000 * NSEC_PER_SEC);
	ck_assert_int_eq(w->mono_end_ns, 1003 * NSEC_PER_SEC);

	/* system CPU: 3 valid seconds on 3 CPUs */
	assert_cpu_sum(&w->all.d, 3 * NCPU);
	ck_assert_uint_eq(w->all.samples, 3);
	ck_assert_uint_eq(w->all.wall_ns, 3 * NSEC_PER_SEC);
	ck_assert_uint_eq(cpu_times_busy(&w->all.d),
	    (40 + 5 + 15 + 2 + 3) * 3 * NCPU);
	ck_assert_uint_ge(w->cpu_span, NCPU);
	for (i = 0; i < NCPU; i++) {
		assert_cpu_sum(&w->cpu[i].d, 3);
		ck_assert_uint_eq(w->cpu[i].samples, 3);
		ck_assert_uint_eq(w->cpu[i].wall_ns, 3 * NSEC_PER_SEC);
		ck_assert(w->cpu[i].online_end);
	}
	ck_assert_uint_eq(w->online_cpus.n, 4);
	ck_assert_double_eq(w->online_cpus.min, NCPU);
	ck_assert_double_eq(w->online_cpus.max, NCPU);
	ck_assert_uint_eq(w->d_ctxt, 3 * CTXT_PER_SEC);
	ck_assert_uint_eq(w->d_processes, 3 * FORKS_PER_SEC);
	ck_assert_double_eq(w->procs_running.last, 3);
	ck_assert_double_eq(w->procs_blocked.last, 1);

	/* frequency: every sample's reading, the baseline's too */
	ck_assert_uint_eq(w->cpu[0].cur_khz.n, 4);
	ck_assert_double_eq(w->cpu[0].cur_khz.min, 500000);
	ck_assert_double_eq(w->cpu[0].cur_khz.max, 2000000);
	ck_assert_double_eq(gauge_avg(&w->cpu[0].cur_khz), 1250000);
	ck_assert_int_eq(w->cpu[0].max_khz, 2000000);
	ck_assert_int_eq(w->cpu[0].capacity, 1024);
	ck_assert_uint_eq(w->cpu[0].freq_ratio.n, 4);
	ck_assert_double_eq(gauge_avg(&w->cpu[0].freq_ratio), 0.625);
	ck_assert_double_eq(w->cpu[0].freq_ratio.max, 1.0);
	/* absent files: unknown, never 0 */
	ck_assert_uint_eq(w->cpu[1].cur_khz.n, 0);
	ck_assert_uint_eq(w->cpu[1].freq_ratio.n, 0);
	ck_assert_int_eq(w->cpu[1].max_khz, -1);
	ck_assert_int_eq(w->cpu[1].capacity, 512);
	ck_assert_uint_eq(w->cpu[2].cur_khz.n, 0);
	ck_assert_int_eq(w->cpu[2].max_khz, -1);
	ck_assert_int_eq(w->cpu[2].capacity, -1);

	/* loadavg, vmstat, meminfo */
	ck_assert_uint_eq(w->load1.n, 4);
	ck_assert_double_eq(w->load1.last, 1.5);
	ck_assert_double_eq(w->load15.last, 0.25);
	ck_assert_double_eq(w->load_runnable.last, 3);
	ck_assert_double_eq(w->load_threads.last, 412);
	ck_assert_uint_eq(w->vm_samples, 3);
	ck_assert_uint_eq(w->d_vm[VM_PGFAULT], 3 * PGFAULT_PER_SEC);
	ck_assert_uint_eq(w->d_vm[VM_PGMAJFAULT], 0);
	ck_assert(w->vm_have & (1u << VM_PGFAULT));
	ck_assert(!(w->vm_have & (1u << VM_OOM_KILL)));
	ck_assert(w->mem_have & (1u << MI_MEMTOTAL));
	ck_assert(!(w->mem_have & (1u << MI_SWAPTOTAL)));
	ck_assert_uint_eq(w->mem_kb[MI_MEMTOTAL].n, 4);
	ck_assert_double_eq(w->mem_kb[MI_MEMAVAILABLE].last, 1500000);

	/* PSI: cpu has no full line here */
	ck_assert(w->psi[PSI_CPU].available);
	ck_assert(!w->psi[PSI_CPU].have_full);
	ck_assert_uint_eq(w->psi[PSI_CPU].samples, 3);
	ck_assert_uint_eq(w->psi[PSI_CPU].d_some_us, 3 * PSI_SOME_PER_SEC);
	ck_assert_uint_eq(w->psi[PSI_CPU].d_full_us, 0);
	ck_assert_double_eq(w->psi[PSI_CPU].some_avg10.last, 1.5);
	ck_assert(w->psi[PSI_MEMORY].have_full);
	ck_assert_uint_eq(w->psi[PSI_MEMORY].d_full_us, 3 * PSI_FULL_PER_SEC);
	ck_assert_uint_eq(w->psi[PSI_IO].d_some_us, 3 * PSI_SOME_PER_SEC);
	ck_assert_double_eq(w->psi[PSI_IO].full_avg10.max, 0.75);

	/* only tasks with activity are kept */
	ck_assert_uint_eq(w->nprocs, 1);
	ck_assert_uint_eq(w->nthreads, 1);
	sf = find_task(w, false, 612, 2468);
	ck_assert_ptr_nonnull(sf);
	ck_assert_uint_eq(sf->d_utime, 15);
	ck_assert_uint_eq(sf->d_stime, 6);
	ck_assert_uint_eq(sf->d_minflt, 30);
	ck_assert_uint_eq(sf->d_majflt, 0);
	ck_assert_uint_eq(sf->samples, 3);
	ck_assert_uint_eq(sf->wall_ns, 3 * NSEC_PER_SEC);
	ck_assert_uint_eq(sf->total_ticks, 3 * NCPU * TOTAL_PER_CPU_SEC);
	ck_assert_double_eq(sf->norm_ticks, 3.0 * TOTAL_PER_CPU_SEC);
	ck_assert_uint_eq(sf->uid, 1000);
	ck_assert_int_eq(sf->tgid, 612);
	ck_assert_str_eq(window_task_name(sf), "surfaceflinger");
	ck_assert_str_eq(sf->comm, "surfaceflinger");
	ck_assert_uint_eq(sf->rss_pages_last, 1000);
	ck_assert(!sf->born);
	ck_assert(!sf->exited);
	/* 21 ticks of CPU in 3 s: 7 % of one core */
	ck_assert_double_eq_tol(metric_core_equiv(sf->d_utime + sf->d_stime,
				    sf->wall_ns, w->hz),
	    0.07, 1e-12);
	rt = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(rt);
	ck_assert_int_eq(rt->tgid, 612);
	ck_assert_uint_eq(rt->uid, 1000);
	ck_assert_str_eq(rt->comm, "RenderEngine");
	ck_assert_str_eq(window_task_name(rt), "RenderEngine");
	ck_assert_uint_eq(rt->d_utime, 15);
	ck_assert_uint_eq(rt->d_stime, 6);
	ck_assert_uint_eq(rt->d_minflt, 30);
	ck_assert_uint_eq(rt->samples, 3);

	ck_assert_uint_eq(w->health.procs_scanned, 3);
	ck_assert_uint_eq(w->health.threads_scanned, 6);
	ck_assert_uint_eq(w->health.procs_exited, 0);
	ck_assert_uint_eq(fx.ncb, 1);
	ck_assert_uint_eq(fx.cb_seq[0], 1);
}
END_TEST

START_TEST(names_and_uids)
{
	const struct window *w;
	const struct window_task *t;
	struct fproc *p;

	p = proc_add(1234, "android.hardwar",
	    CMD("/vendor/bin/hw/android.hardware.power@1.0-service\0"), 1000,
	    500);
	thr_add(p, 1234, "android.hardwar", 500);
	/* an empty cmdline (kernel thread): the name falls back to comm */
	p = proc_add(57, "kworker/u16:2", CMD(""), 0, 97);
	thr_add(p, 57, "kworker/u16:2", 97);
	start(THREADS_NONE, 1000, 10, 4);
	first();
	burn(4200, 4230, 3, 1, 0);
	burn(1234, 1234, 1, 0, 0);
	burn(57, 57, 0, 2, 0);
	step();
	w = close_now();
	t = find_task(w, false, 4200, 90000);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(window_task_name(t), "com.android.systemui");
	ck_assert_str_eq(t->comm, "com.android.sys");
	ck_assert_uint_eq(t->uid, 10050);
	t = find_task(w, false, 1234, 500);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(window_task_name(t), "android.hardware.power");
	t = find_task(w, false, 57, 97);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(window_task_name(t), "kworker/u16:2");
	ck_assert_uint_eq(t->uid, 0);
	ck_assert_uint_eq(t->d_stime, 2);
}
END_TEST

/* -------------------------------------------------------- sample validity */

START_TEST(sleep_gap)
{
	const struct window_task *sf, *rt;
	const struct window *w;

	start(THREADS_ALL, 1000, 10, 4);
	first();
	burn(612, 640, 5, 0, 0);
	step();
	/* 1 s monotonic, but boottime moved 50 ms + 1 ns more: suspended */
	burn(612, 640, 70, 30, 0);
	advance(2);
	sample_at(NSEC_PER_SEC, VITALS_SLEEP_NS + 1);
	ck_assert_uint_eq(collector_open(fx.c)->inv_samples[INV_SLEPT], 1);
	/* the next sample is valid again, against the slept one's reading */
	burn(612, 640, 5, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->samples, 4);
	ck_assert_uint_eq(w->samples_valid, 2);
	ck_assert_uint_eq(w->inv_samples[INV_SLEPT], 1);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 1);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 0);
	/* nothing of the slept sample is summed */
	assert_cpu_sum(&w->all.d, 2 * NCPU);
	ck_assert_uint_eq(w->all.wall_ns, 2 * NSEC_PER_SEC);
	ck_assert_uint_eq(w->cpu[1].samples, 2);
	assert_cpu_sum(&w->cpu[1].d, 2);
	ck_assert_uint_eq(w->d_ctxt, 2 * CTXT_PER_SEC);
	ck_assert_uint_eq(w->d_vm[VM_PGFAULT], 2 * PGFAULT_PER_SEC);
	sf = find_task(w, false, 612, 2468);
	ck_assert_ptr_nonnull(sf);
	ck_assert_uint_eq(sf->d_utime, 10);
	ck_assert_uint_eq(sf->d_stime, 0);
	ck_assert_uint_eq(sf->samples, 2);
	ck_assert_uint_eq(sf->wall_ns, 2 * NSEC_PER_SEC);
	rt = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(rt);
	ck_assert_uint_eq(rt->d_utime, 10);
	ck_assert_uint_eq(rt->d_stime, 0);
}
END_TEST

START_TEST(sleep_boundary_not_slept)
{
	const struct window *w;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	/* exactly 50 ms more on boottime: within tolerance, not slept */
	advance(1);
	sample_at(NSEC_PER_SEC, VITALS_SLEEP_NS);
	w = close_now();
	ck_assert_uint_eq(w->samples_valid, 1);
	ck_assert_uint_eq(w->inv_samples[INV_SLEPT], 0);
	/* the wall is monotonic time: suspend is never in a denominator */
	ck_assert_uint_eq(w->all.wall_ns, NSEC_PER_SEC);
	assert_cpu_sum(&w->all.d, NCPU);
}
END_TEST

START_TEST(no_advance)
{
	const struct window *w;

	start(THREADS_ALL, 1000, 10, 4);
	first();
	burn(612, 640, 5, 0, 0);
	step();
	/* monotonic stands still while counters moved */
	burn(612, 640, 9, 0, 0);
	advance(1);
	sample_at(0, 0);
	/* and goes backwards (a broken clock source) */
	advance(1);
	sample_at(-NSEC_PER_MSEC, 0);
	burn(612, 640, 5, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->samples, 5);
	ck_assert_uint_eq(w->inv_samples[INV_NO_ADVANCE], 2);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 2);
	ck_assert_uint_eq(w->samples_valid, 2);
	assert_cpu_sum(&w->all.d, 2 * NCPU);
	ck_assert_uint_eq(find_task(w, false, 612, 2468)->d_utime, 10);
	ck_assert_uint_eq(find_task(w, true, 640, 2470)->d_utime, 10);
}
END_TEST

START_TEST(aggregate_regression)
{
	const struct window *w;

	start(THREADS_ALL, 1000, 10, 4);
	fx.psi = true;
	first();
	burn(612, 640, 5, 0, 0);
	step();
	/* iowait of the first line reads one tick lower than before */
	burn(612, 640, 9, 0, 0);
	advance(1);
	fx.all.iowait -= NCPU * per_sec.iowait + 1;
	sample_at(NSEC_PER_SEC, 0);
	ck_assert_uint_eq(collector_open(fx.c)->inv_samples[INV_REGRESSION], 1);
	burn(612, 640, 5, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->samples, 4);
	ck_assert_uint_eq(w->samples_valid, 2);
	ck_assert_uint_eq(w->inv_samples[INV_REGRESSION], 1);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 1);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 0);
	/* the whole sample is dropped: no CPU line, no counter, no task */
	assert_cpu_sum(&w->all.d, 2 * NCPU);
	assert_cpu_sum(&w->cpu[0].d, 2);
	ck_assert_uint_eq(w->cpu[0].samples, 2);
	ck_assert_uint_eq(w->d_ctxt, 2 * CTXT_PER_SEC);
	ck_assert_uint_eq(w->psi[PSI_CPU].samples, 2);
	ck_assert_uint_eq(w->psi[PSI_CPU].d_some_us, 2 * PSI_SOME_PER_SEC);
	ck_assert_uint_eq(w->vm_samples, 2);
	ck_assert_uint_eq(find_task(w, false, 612, 2468)->d_utime, 10);
	ck_assert_uint_eq(find_task(w, true, 640, 2470)->d_utime, 10);
}
END_TEST

START_TEST(cpu_line_regression)
{
	const struct window *w;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	step();
	/* only cpu1's iowait goes back; the first line is fine */
	advance(1);
	fx.cpu[1].iowait -= per_sec.iowait + 1;
	sample_at(NSEC_PER_SEC, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->samples_valid, 3);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 0);
	ck_assert_uint_eq(w->inv_deltas[INV_REGRESSION], 1);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 1);
	assert_cpu_sum(&w->all.d, 3 * NCPU);
	ck_assert_uint_eq(w->cpu[0].samples, 3);
	assert_cpu_sum(&w->cpu[0].d, 3);
	ck_assert_uint_eq(w->cpu[2].samples, 3);
	assert_cpu_sum(&w->cpu[2].d, 3);
	/* cpu1 lost that one delta, no field of it summed */
	ck_assert_uint_eq(w->cpu[1].samples, 2);
	ck_assert_uint_eq(w->cpu[1].wall_ns, 2 * NSEC_PER_SEC);
	assert_cpu_sum(&w->cpu[1].d, 2);
}
END_TEST

START_TEST(hotplug)
{
	const struct window_task *sf;
	const struct window *w;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	burn(612, 640, 1, 0, 0);
	step(); /* S1: 3 CPUs */
	fx.online[2] = false;
	burn(612, 640, 1, 0, 0);
	step(); /* S2: cpu2 gone */
	ck_assert_uint_eq(collector_open(fx.c)->inv_deltas[INV_HOTPLUG], 1);
	burn(612, 640, 1, 0, 0);
	step(); /* S3: still gone: nothing to count */
	ck_assert_uint_eq(collector_open(fx.c)->inv_deltas[INV_HOTPLUG], 1);
	fx.online[2] = true;
	burn(612, 640, 1, 0, 0);
	step(); /* S4: back */
	burn(612, 640, 1, 0, 0);
	step(); /* S5: 3 CPUs */
	w = close_now();

	ck_assert_uint_eq(w->samples_valid, 5);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 0);
	ck_assert_uint_eq(w->inv_deltas[INV_HOTPLUG], 2);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 2);
	ck_assert_uint_eq(w->cpu[0].samples, 5);
	ck_assert_uint_eq(w->cpu[1].samples, 5);
	assert_cpu_sum(&w->cpu[1].d, 5);
	/* cpu2: S1 and S5 only; S4 spans its offline time */
	ck_assert_uint_eq(w->cpu[2].samples, 2);
	assert_cpu_sum(&w->cpu[2].d, 2);
	ck_assert(w->cpu[2].online_end);
	/* the first line sums what really ran: 3 + 2 + 2 + 3 + 3 CPU-s */
	assert_cpu_sum(&w->all.d, 13);
	ck_assert_uint_eq(w->online_cpus.n, 6);
	ck_assert_double_eq(w->online_cpus.min, 2);
	ck_assert_double_eq(w->online_cpus.max, 3);
	/* normalised: Σ Δtotal/online = 100 per sample whatever was online */
	sf = find_task(w, false, 612, 2468);
	ck_assert_ptr_nonnull(sf);
	ck_assert_uint_eq(sf->total_ticks, 1300);
	ck_assert_double_eq(sf->norm_ticks, 500.0);
	ck_assert_double_eq(metric_normalised(sf->d_utime, sf->norm_ticks),
	    0.01);
}
END_TEST

START_TEST(hotplug_offline_at_close)
{
	const struct window *w;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	step();
	fx.online[2] = false;
	step();
	w = close_now();
	ck_assert(!w->cpu[2].online_end);
	ck_assert(w->cpu[1].online_end);
	ck_assert_uint_eq(w->cpu[2].samples, 1);
	ck_assert_uint_eq(w->inv_deltas[INV_HOTPLUG], 1);
	/* the next window knows CPU 2 exists and keeps it offline */
	step();
	w = close_now();
	ck_assert_uint_ge(w->cpu_span, 2);
	if (w->cpu_span > 2) {
		ck_assert(!w->cpu[2].online_end);
		ck_assert_uint_eq(w->cpu[2].samples, 0);
	}
	ck_assert_uint_eq(w->inv_deltas[INV_HOTPLUG], 0);
}
END_TEST

/* --------------------------------------------------- the /proc/stat file */

START_TEST(stat_garbage)
{
	const struct window *w;

	start(THREADS_ALL, 1000, 10, 4);
	first();
	burn(612, 640, 5, 0, 0);
	step();
	fx.stat_garbage = true;
	burn(612, 640, 11, 0, 0);
	step(); /* INV_PARSE */
	fx.stat_garbage = false;
	burn(612, 640, 13, 0, 0);
	step(); /* a new baseline: nothing to diff */
	burn(612, 640, 5, 0, 0);
	step(); /* valid */
	w = close_now();

	ck_assert_uint_eq(w->samples, 5);
	ck_assert_uint_eq(w->inv_samples[INV_PARSE], 1);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 1);
	ck_assert_uint_eq(w->samples_valid, 2);
	assert_cpu_sum(&w->all.d, 2 * NCPU);
	/* no gauge from a file that did not parse */
	ck_assert_uint_eq(w->online_cpus.n, 4);
	ck_assert_uint_eq(find_task(w, false, 612, 2468)->d_utime, 10);
	ck_assert_uint_eq(find_task(w, true, 640, 2470)->d_utime, 10);
}
END_TEST

START_TEST(stat_unreadable)
{
	char path[PATH_MAX];
	const struct window *w;

	xsnprintf(path, sizeof(path), "%s/stat", fx.proc);
	start(THREADS_NONE, 1000, 10, 4);
	/* S0: absent. write_system would create it: sample by hand. */
	write_procs();
	ck_assert_int_eq(collector_sample(fx.c, &fx.clk, false), 0);
	ck_assert_uint_eq(collector_open(fx.c)->inv_samples[INV_READ_FAILED],
	    1);
	/* S1: a directory opens but does not read (EISDIR) */
	ck_assert_int_eq(mkdir(path, 0755), 0);
	advance(1);
	fx.clk.mono_ns += NSEC_PER_SEC;
	fx.clk.boot_ns += NSEC_PER_SEC;
	ck_assert_int_eq(collector_sample(fx.c, &fx.clk, false), 0);
	ck_assert_uint_eq(collector_open(fx.c)->inv_samples[INV_READ_FAILED],
	    2);
	/* S2: readable again, and reopened: a baseline. S3: valid. */
	ck_assert_int_eq(rmdir(path), 0);
	step();
	step();
	w = close_now();
	ck_assert_uint_eq(w->samples, 4);
	ck_assert_uint_eq(w->inv_samples[INV_READ_FAILED], 2);
	ck_assert_uint_eq(inv_sum(w->inv_samples), 2);
	ck_assert_uint_eq(w->samples_valid, 1);
	assert_cpu_sum(&w->all.d, NCPU);
}
END_TEST

/* ------------------------------------------------------------------- PSI */

START_TEST(psi_absent_then_present)
{
	const struct window *w;
	unsigned i;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	step();
	step();
	w = close_now();
	/* a kernel without PSI: unavailable, and that is no error */
	for (i = 0; i < PSI__MAX; i++) {
		ck_assert(!w->psi[i].available);
		ck_assert_uint_eq(w->psi[i].samples, 0);
		ck_assert_uint_eq(w->psi[i].some_avg10.n, 0);
	}
	ck_assert_uint_eq(inv_sum(w->inv_samples), 0);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 0);
	ck_assert_uint_eq(w->samples_valid, 2);

	/* the files appear: the first read is their baseline */
	fx.psi = true;
	step();
	step();
	step();
	w = close_now();
	for (i = 0; i < PSI__MAX; i++) {
		ck_assert(w->psi[i].available);
		ck_assert_uint_eq(w->psi[i].samples, 2);
		ck_assert_uint_eq(w->psi[i].d_some_us, 2 * PSI_SOME_PER_SEC);
		ck_assert_uint_eq(w->psi[i].some_avg10.n, 3);
	}
	ck_assert_uint_eq(w->psi[PSI_MEMORY].d_full_us, 2 * PSI_FULL_PER_SEC);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 0);
}
END_TEST

START_TEST(psi_broken_is_counted)
{
	const struct window *w;

	start(THREADS_NONE, 1000, 10, 4);
	fx.psi = true;
	first();
	step();
	/* present but not a pressure file: an error, unlike absence */
	advance(1);
	fx.clk.mono_ns += NSEC_PER_SEC;
	fx.clk.boot_ns += NSEC_PER_SEC;
	write_system();
	write_procs();
	put("proc/pressure/io", "some avg10=x avg60=0.00\n");
	ck_assert_int_eq(collector_sample(fx.c, &fx.clk, false), 0);
	w = close_now();
	ck_assert_uint_eq(w->inv_deltas[INV_PARSE], 1);
	ck_assert_uint_eq(w->psi[PSI_IO].samples, 1);
	ck_assert_uint_eq(w->psi[PSI_CPU].samples, 2);
	ck_assert_uint_eq(w->samples_valid, 2);
}
END_TEST

/* ----------------------------------------------------- process lifetimes */

/* The pid is reused by an instance that started before the last sample. */
START_TEST(pid_reuse_baseline)
{
	const struct window_task *old, *new;
	const struct window *w;
	uint64_t prev_boot_ticks;

	start(THREADS_ALL, 1000, 10, 4);
	first();
	burn(4200, 4230, 8, 2, 0);
	step();
	prev_boot_ticks = (uint64_t)fx.clk.boot_ns / TICK_NS;
	/* same pid, new starttime, one tick before the previous sample */
	reincarnate(4200, prev_boot_ticks - 1, 50, 20, 300, 0);
	step();
	ck_assert_uint_eq(collector_open(fx.c)->inv_deltas[INV_IDENTITY], 1);
	burn(4200, 4200, 3, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->inv_deltas[INV_IDENTITY], 1);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 1);
	ck_assert_uint_eq(count_id(w, false, 4200), 2);
	/* the old instance ended unseen: its activity kept, marked exited */
	old = find_task(w, false, 4200, 90000);
	ck_assert_ptr_nonnull(old);
	ck_assert(old->exited);
	ck_assert_uint_eq(old->d_utime, 8);
	ck_assert_uint_eq(old->d_stime, 2);
	ck_assert_ptr_nonnull(find_task(w, true, 4230, 90010));
	ck_assert(find_task(w, true, 4230, 90010)->exited);
	ck_assert_uint_eq(w->health.procs_exited, 1);
	ck_assert_uint_eq(w->health.threads_exited, 2);
	/* the new one is a baseline first: only the later 3 ticks count */
	new = find_task(w, false, 4200, prev_boot_ticks - 1);
	ck_assert_ptr_nonnull(new);
	ck_assert(!new->born);
	ck_assert(!new->exited);
	ck_assert_uint_eq(new->d_utime, 3);
	ck_assert_uint_eq(new->d_stime, 0);
	ck_assert_uint_eq(new->d_minflt, 0);
	ck_assert_uint_eq(new->samples, 1);
	new = find_task(w, true, 4200, prev_boot_ticks - 1);
	ck_assert_ptr_nonnull(new);
	ck_assert_uint_eq(new->d_utime, 3);
}
END_TEST

/* The pid is reused by an instance born after the last sample. */
START_TEST(pid_reuse_born)
{
	const struct window_task *new;
	const struct window *w;
	uint64_t prev_boot_ticks;

	start(THREADS_ALL, 1000, 10, 4);
	first();
	burn(4200, 4230, 8, 2, 0);
	step();
	prev_boot_ticks = (uint64_t)fx.clk.boot_ns / TICK_NS;
	/* started in the very tick of the previous sample: born since */
	reincarnate(4200, prev_boot_ticks, 50, 20, 300, 4);
	step();
	burn(4200, 4200, 3, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->inv_deltas[INV_IDENTITY], 1);
	ck_assert_uint_eq(count_id(w, false, 4200), 2);
	ck_assert(find_task(w, false, 4200, 90000)->exited);
	/* all it ever used happened inside this window */
	new = find_task(w, false, 4200, prev_boot_ticks);
	ck_assert_ptr_nonnull(new);
	ck_assert(new->born);
	ck_assert(!new->exited);
	ck_assert_uint_eq(new->d_utime, 53);
	ck_assert_uint_eq(new->d_stime, 20);
	ck_assert_uint_eq(new->d_minflt, 300);
	ck_assert_uint_eq(new->d_majflt, 4);
	ck_assert_uint_eq(new->samples, 2);
	ck_assert_uint_eq(new->wall_ns, 2 * NSEC_PER_SEC);
	new = find_task(w, true, 4200, prev_boot_ticks);
	ck_assert_ptr_nonnull(new);
	ck_assert(new->born);
	ck_assert_uint_eq(new->d_utime, 53);
	ck_assert_uint_eq(new->d_majflt, 4);
}
END_TEST

/* New pids: counted in full only when born after the previous sample. */
START_TEST(new_process_born)
{
	const struct window_task *t;
	const struct window *w;
	struct fproc *p;
	uint64_t prev_boot_ticks;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	step();
	prev_boot_ticks = (uint64_t)fx.clk.boot_ns / TICK_NS;
	p = proc_add(5000, "fresh", CMD("/system/bin/fresh\0"), 2000,
	    prev_boot_ticks + 30);
	thr_add(p, 5000, "fresh", p->starttime);
	burn(5000, 5000, 40, 10, 100);
	p = proc_add(5001, "early", CMD("/system/bin/early\0"), 2000,
	    prev_boot_ticks - 1);
	thr_add(p, 5001, "early", p->starttime);
	burn(5001, 5001, 40, 10, 100);
	step();
	w = close_now();

	t = find_task(w, false, 5000, prev_boot_ticks + 30);
	ck_assert_ptr_nonnull(t);
	ck_assert(t->born);
	ck_assert_uint_eq(t->d_utime, 40);
	ck_assert_uint_eq(t->d_stime, 10);
	ck_assert_uint_eq(t->d_minflt, 100);
	ck_assert_uint_eq(t->wall_ns, NSEC_PER_SEC);
	/* 5001 ran before the previous sample, unseen: those 50 ticks are
	 * not this window's, and nothing else moved */
	ck_assert_uint_eq(count_id(w, false, 5001), 0);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 0);
}
END_TEST

START_TEST(proc_regression)
{
	const struct window_task *t;
	const struct window *w;
	struct fproc *p;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	burn(612, 640, 5, 1, 0);
	step();
	/* utime reads 3 lower while stime moved on: the delta is dropped */
	p = proc_get(612);
	p->utime -= 3;
	p->stime += 7;
	step();
	ck_assert_uint_eq(collector_open(fx.c)->inv_deltas[INV_REGRESSION], 1);
	/* the baseline was refreshed to the lower reading */
	burn(612, 640, 4, 2, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->inv_deltas[INV_REGRESSION], 1);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 1);
	ck_assert_uint_eq(w->samples_valid, 3);
	t = find_task(w, false, 612, 2468);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 9);
	ck_assert_uint_eq(t->d_stime, 3);
	ck_assert_uint_eq(t->samples, 2);
	ck_assert_uint_eq(t->wall_ns, 2 * NSEC_PER_SEC);
}
END_TEST

START_TEST(proc_vanish)
{
	char path[PATH_MAX];
	const struct window_task *t;
	const struct window *w;

	start(THREADS_ALL, 1000, 10, 4);
	first();
	burn(4200, 4230, 6, 3, 40);
	step();
	/* 4200 ends with activity, init ends idle, one sf thread ends */
	proc_get(4200)->present = false;
	proc_get(1)->present = false;
	thr_get(proc_get(612), 641)->present = false;
	/* and a pid listed whose files are already gone */
	xsnprintf(path, sizeof(path), "%s/777", fx.proc);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->health.procs_exited, 2);
	ck_assert_uint_eq(w->health.threads_exited, 1 + 2 + 1);
	t = find_task(w, false, 4200, 90000);
	ck_assert_ptr_nonnull(t);
	ck_assert(t->exited);
	ck_assert_uint_eq(t->d_utime, 6);
	ck_assert_uint_eq(t->d_stime, 3);
	ck_assert_uint_eq(t->d_minflt, 40);
	t = find_task(w, true, 4230, 90010);
	ck_assert_ptr_nonnull(t);
	ck_assert(t->exited);
	ck_assert_uint_eq(t->d_utime, 6);
	/* idle ones end without a record */
	ck_assert_uint_eq(count_id(w, false, 1), 0);
	ck_assert_uint_eq(count_id(w, true, 641), 0);
	ck_assert_uint_eq(count_id(w, true, 4200), 0);
	ck_assert_uint_eq(w->nprocs, 1);
	ck_assert_uint_eq(w->inv_deltas[INV_VANISHED], 1);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 1);
	/* the scan of the last sample saw sf and the empty 777 dir only */
	ck_assert_uint_eq(w->health.procs_scanned, 1);
}
END_TEST

/*
 * On the real /proc: a kept stat file of a process that ended fails its
 * next read (the kernel answers ESRCH), is dropped, and the path read
 * anew finds nothing; a live one reads again through the same file.
 */
START_TEST(stat_fd_real_proc)
{
	struct statfd sf = { .max = 2 };
	struct window_health h = { 0 };
	struct vbuf b = { 0 };
	char path[32];
	int procfd, fd = -1, status, kept;
	pid_t pid;

	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	ck_assert_int_eq(statfd_read(&sf, &fd, procfd, path, &b, &h), 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(sf.open, 1);
	ck_assert_uint_eq(h.stat_opens, 1);
	kept = fd;
	ck_assert_int_eq(statfd_read(&sf, &fd, procfd, path, &b, &h), 0);
	ck_assert_int_eq(fd, kept);
	ck_assert_uint_eq(h.stat_fd_reads, 1);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(statfd_read(&sf, &fd, procfd, path, &b, &h), -ENOENT);
	ck_assert_int_eq(fd, -1);
	ck_assert_uint_eq(sf.open, 0);
	ck_assert_uint_eq(h.stat_opens, 2);
	vbuf_release(&b);
	close(procfd);
}
END_TEST

/*
 * The procfs scan's kept stat files: after the first sample the reads go
 * through them (no open), up to the bound (here 4 of the fixture's
 * tasks: the rest opened and closed each time, counted); a task that
 * ends gives its file back, and the figures are the same as without.
 */
START_TEST(stat_fds_kept)
{
	struct collector_opts o = {
		.proc_root = fx.proc,
		.sys_root = fx.sys,
		.hz = HZ,
		.interval_ms = 1000,
		.window_s = 10,
		.ring = 4,
		.threads = THREADS_ALL,
		.stat_fds = 4,
	};
	const struct window *w;
	const struct window_task *t;

	ck_assert_int_eq(collector_new(&o, &fx.c), 0);
	collector_set_window_cb(fx.c, window_cb_rec, &fx);
	first();
	burn(4200, 4230, 6, 3, 40);
	step();
	w = collector_open(fx.c);
	ck_assert_uint_eq(w->health.stat_fds, 4);
	ck_assert_uint_gt(w->health.stat_fd_reads, 0);
	ck_assert_uint_gt(w->health.stat_fd_full, 0);
	ck_assert_uint_gt(w->health.stat_opens, 0);
	burn(4200, 4230, 2, 1, 0);
	step();
	w = close_now();
	t = find_task(w, false, 4200, 90000);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 8);
	ck_assert_uint_eq(t->d_stime, 4);
	ck_assert_uint_eq(w->health.stat_fds, 4);
	/* every task ends: every kept file is given back */
	proc_get(4200)->present = false;
	proc_get(1)->present = false;
	proc_get(612)->present = false;
	step();
	w = collector_open(fx.c);
	ck_assert_uint_eq(w->health.stat_fds, 0);
}
END_TEST

/*
 * One unreadable read of a live process is a dropped delta: the process
 * did not exit, and it keeps one record in the window.
 */
START_TEST(proc_stat_garbage)
{
	const struct window_task *t;
	const struct window *w;
	enum threads_mode mode = _i == 0 ? THREADS_NONE : THREADS_ALL;

	start(mode, 1000, 10, 4);
	first();
	burn(612, 640, 5, 0, 0);
	step();
	proc_get(612)->garbage = true;
	burn(612, 640, 7, 0, 0);
	step();
	ck_assert_uint_eq(collector_open(fx.c)->inv_deltas[INV_PARSE], 1);
	proc_get(612)->garbage = false;
	burn(612, 640, 4, 0, 0);
	step();
	burn(612, 640, 6, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->inv_deltas[INV_PARSE], 1);
	ck_assert_uint_eq(w->health.procs_exited, 0);
	ck_assert_uint_eq(count_id(w, false, 612), 1);
	t = find_task(w, false, 612, 2468);
	ck_assert_ptr_nonnull(t);
	ck_assert(!t->exited);
	ck_assert(!t->born);
	/* the 7 + 4 across the unreadable sample are dropped, not smeared
	 * over one interval's wall time */
	ck_assert_uint_eq(t->d_utime, 5 + 6);
	ck_assert_uint_eq(t->samples, 2);
	ck_assert_uint_eq(t->wall_ns, 2 * NSEC_PER_SEC);
	if (mode == THREADS_NONE)
		return;
	/* its threads were not read either: dropped the same way */
	ck_assert_uint_eq(w->health.threads_exited, 0);
	ck_assert_uint_eq(count_id(w, true, 640), 1);
	t = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(t);
	ck_assert(!t->exited);
	ck_assert_uint_eq(t->d_utime, 5 + 6);
	ck_assert_uint_eq(t->samples, 2);
}
END_TEST

/* The same for one thread's stat: the other threads carry on. */
START_TEST(thread_stat_garbage)
{
	const struct window_task *t;
	const struct window *w;

	start(THREADS_ALL, 1000, 10, 4);
	first();
	burn(612, 640, 5, 0, 0);
	burn(612, 641, 1, 0, 0);
	step();
	thr_get(proc_get(612), 640)->garbage = true;
	burn(612, 640, 7, 0, 0);
	burn(612, 641, 1, 0, 0);
	step();
	ck_assert_uint_eq(collector_open(fx.c)->inv_deltas[INV_PARSE], 1);
	thr_get(proc_get(612), 640)->garbage = false;
	burn(612, 640, 4, 0, 0);
	burn(612, 641, 1, 0, 0);
	step();
	burn(612, 640, 6, 0, 0);
	burn(612, 641, 1, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->inv_deltas[INV_PARSE], 1);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 1);
	ck_assert_uint_eq(w->health.threads_exited, 0);
	ck_assert_uint_eq(count_id(w, true, 640), 1);
	t = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(t);
	ck_assert(!t->exited);
	ck_assert_uint_eq(t->d_utime, 5 + 6);
	ck_assert_uint_eq(t->samples, 2);
	t = find_task(w, true, 641, 2471);
	ck_assert_uint_eq(t->d_utime, 4);
	ck_assert_uint_eq(t->samples, 4);
	/* the process itself read fine every time */
	ck_assert_uint_eq(find_task(w, false, 612, 2468)->d_utime,
	    5 + 7 + 4 + 6 + 4);
}
END_TEST

/* ---------------------------------------------------------------- windows */

START_TEST(window_boundary)
{
	const struct window *w;
	unsigned i;

	start(THREADS_NONE, 1000, 10, 2);
	first();
	for (i = 1; i <= 9; i++)
		step();
	ck_assert_ptr_null(collector_window(fx.c, 0));
	ck_assert_uint_eq(fx.ncb, 0);
	step(); /* T0 + 10 s: the nominal end of window 1 */
	ck_assert_uint_eq(fx.ncb, 1);
	w = collector_window(fx.c, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->seq, 1);
	/* the baseline and 10 valid deltas */
	ck_assert_uint_eq(w->samples, 11);
	ck_assert_uint_eq(w->samples_valid, 10);
	ck_assert_uint_eq(w->all.wall_ns, 10 * NSEC_PER_SEC);
	ck_assert_int_eq(w->mono_end_ns - w->mono_start_ns, 10 * NSEC_PER_SEC);
	ck_assert_uint_eq(w->interval_ms, 1000);
	for (i = 11; i <= 30; i++)
		step();
	ck_assert_uint_eq(fx.ncb, 3);
	ck_assert_uint_eq(fx.cb_seq[1], 2);
	ck_assert_uint_eq(fx.cb_seq[2], 3);
	w = collector_window(fx.c, 0);
	ck_assert_uint_eq(w->seq, 3);
	/* every delta is in exactly one window */
	ck_assert_uint_eq(w->samples, 10);
	ck_assert_uint_eq(w->samples_valid, 10);
	assert_cpu_sum(&w->all.d, 10 * NCPU);
	ck_assert_int_eq(w->mono_start_ns, 1020 * NSEC_PER_SEC);
	ck_assert_int_eq(w->mono_end_ns, 1030 * NSEC_PER_SEC);
	w = collector_window(fx.c, 1);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->seq, 2);
	ck_assert_uint_eq(w->samples_valid, 10);
	ck_assert_int_eq(w->mono_start_ns, 1010 * NSEC_PER_SEC);
	/* the ring keeps 2 */
	ck_assert_ptr_null(collector_window(fx.c, 2));
	/* the open window is the next one, empty */
	ck_assert_uint_eq(collector_open(fx.c)->seq, 4);
	ck_assert_uint_eq(collector_open(fx.c)->samples, 0);
}
END_TEST

START_TEST(window_boundary_jitter)
{
	unsigned i;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	for (i = 1; i <= 9; i++)
		step();
	/* 9.4 s: the sample nearest 10 s is still to come */
	advance(1);
	sample_at(400 * NSEC_PER_MSEC, 0);
	ck_assert_ptr_null(collector_window(fx.c, 0));
	/* 9.5 s: half an interval before the boundary closes it */
	sample_at(100 * NSEC_PER_MSEC, 0);
	ck_assert_ptr_nonnull(collector_window(fx.c, 0));
	ck_assert_uint_eq(collector_window(fx.c, 0)->samples_valid, 11);
	/* the grid holds: the next closes at 20 s, not 19.5 s */
	sample_at(500 * NSEC_PER_MSEC, 0);
	for (i = 11; i <= 19; i++)
		sample_at(NSEC_PER_SEC, 0);
	ck_assert_uint_eq(fx.ncb, 1);
	sample_at(NSEC_PER_SEC, 0);
	ck_assert_uint_eq(fx.ncb, 2);
	ck_assert_int_eq(collector_window(fx.c, 0)->mono_end_ns,
	    1020 * NSEC_PER_SEC);
}
END_TEST

START_TEST(window_burst_cadence)
{
	const struct window *w;
	unsigned i;

	/* 100 ms samples: 100 deltas per 10 s window */
	start(THREADS_NONE, 100, 10, 4);
	first();
	for (i = 1; i <= 100; i++)
		sample_at(100 * NSEC_PER_MSEC, 0);
	ck_assert_uint_eq(fx.ncb, 1);
	w = collector_window(fx.c, 0);
	ck_assert_uint_eq(w->samples_valid, 100);
	ck_assert_uint_eq(w->all.wall_ns, 10 * NSEC_PER_SEC);
}
END_TEST

/*
 * A window closed early (daemon shutdown, a flush on request) must not
 * make the next one longer than a window.
 */
START_TEST(window_explicit_close)
{
	const struct window *w;
	unsigned i;

	start(THREADS_NONE, 1000, 10, 4);
	first();
	for (i = 1; i <= 3; i++)
		step();
	w = close_now();
	ck_assert_uint_eq(fx.ncb, 1);
	ck_assert_uint_eq(w->seq, 1);
	ck_assert_uint_eq(w->samples_valid, 3);
	for (i = 4; i <= 30 && fx.ncb < 2; i++)
		step();
	ck_assert_uint_eq(fx.ncb, 2);
	w = collector_window(fx.c, 0);
	ck_assert_uint_eq(w->seq, 2);
	ck_assert_int_le(w->mono_end_ns - w->mono_start_ns, 10 * NSEC_PER_SEC);
	ck_assert_uint_le(w->samples_valid, 10);
}
END_TEST

START_TEST(window_cb_once_per_close)
{
	unsigned i;

	start(THREADS_NONE, 1000, 1, 8);
	first();
	for (i = 1; i <= 5; i++) {
		burn(612, 640, i, 0, 0);
		step();
		ck_assert_uint_eq(fx.ncb, i);
		ck_assert_uint_eq(fx.cb_seq[i - 1], i);
		/* the callback sees the window's task records, each holding
		 * its own window's deltas only */
		ck_assert_uint_eq(fx.cb_nprocs[i - 1], 1);
		ck_assert_uint_eq(fx.cb_sf_utime[i - 1], i);
		ck_assert_uint_eq(fx.cb_sf_samples[i - 1], 1);
	}
	ck_assert_uint_eq(collector_window(fx.c, 0)->seq, 5);
	ck_assert_uint_eq(collector_window(fx.c, 4)->seq, 1);
	ck_assert_ptr_null(collector_window(fx.c, 5));
}
END_TEST

/* ---------------------------------------------------------- thread modes */

/*
 * sf's thread 640 works in S1, nothing moves in S2, 641 works in S3.
 * What each mode scans and records differs; the process totals do not.
 */
static void
thread_scenario(unsigned scanned[4])
{
	first();
	scanned[0] = collector_open(fx.c)->health.threads_scanned;
	burn(612, 640, 5, 1, 0);
	step();
	scanned[1] = collector_open(fx.c)->health.threads_scanned;
	step();
	scanned[2] = collector_open(fx.c)->health.threads_scanned;
	burn(612, 641, 2, 3, 0);
	step();
	scanned[3] = collector_open(fx.c)->health.threads_scanned;
}

static void
assert_sf_proc(const struct window *w)
{
	const struct window_task *t = find_task(w, false, 612, 2468);

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 7);
	ck_assert_uint_eq(t->d_stime, 4);
	ck_assert_uint_eq(w->nprocs, 1);
}

START_TEST(threads_none)
{
	unsigned scanned[4], i;
	const struct window *w;

	start(THREADS_NONE, 1000, 10, 4);
	thread_scenario(scanned);
	w = close_now();
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(scanned[i], 0);
	ck_assert_uint_eq(w->nthreads, 0);
	assert_sf_proc(w);
}
END_TEST

START_TEST(threads_all)
{
	unsigned scanned[4], i;
	const struct window *w;
	const struct window_task *t;

	start(THREADS_ALL, 1000, 10, 4);
	thread_scenario(scanned);
	w = close_now();
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(scanned[i], 1 + 3 + 2);
	assert_sf_proc(w);
	ck_assert_uint_eq(w->nthreads, 2);
	t = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 5);
	ck_assert_uint_eq(t->d_stime, 1);
	ck_assert_uint_eq(t->samples, 3);
	t = find_task(w, true, 641, 2471);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 2);
	ck_assert_uint_eq(t->d_stime, 3);
}
END_TEST

START_TEST(threads_changed)
{
	unsigned scanned[4];
	const struct window *w;
	const struct window_task *t;

	start(THREADS_CHANGED, 1000, 10, 4);
	thread_scenario(scanned);
	w = close_now();
	/* new processes are read whole once, then only sf when it moved */
	ck_assert_uint_eq(scanned[0], 1 + 3 + 2);
	ck_assert_uint_eq(scanned[1], 3);
	ck_assert_uint_eq(scanned[2], 0);
	ck_assert_uint_eq(scanned[3], 3);
	assert_sf_proc(w);
	ck_assert_uint_eq(w->nthreads, 2);
	t = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 5);
	ck_assert_uint_eq(t->d_stime, 1);
	t = find_task(w, true, 641, 2471);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 2);
	ck_assert_uint_eq(t->d_stime, 3);
}
END_TEST

/*
 * THREADS_CHANGED across a dropped sample: the threads' baselines must be
 * refreshed with the process's, or the CPU used while the device slept
 * lands in the threads' next delta while the process correctly drops it.
 */
START_TEST(threads_changed_after_sleep)
{
	const struct window_task *p, *t;
	const struct window *w;
	enum threads_mode mode = _i == 0 ? THREADS_CHANGED : THREADS_ALL;

	start(mode, 1000, 10, 4);
	first();
	burn(612, 640, 5, 0, 0);
	step();
	burn(612, 640, 50, 20, 0);
	advance(1);
	sample_at(NSEC_PER_SEC, 10 * NSEC_PER_SEC); /* slept 10 s */
	burn(612, 640, 5, 0, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->inv_samples[INV_SLEPT], 1);
	p = find_task(w, false, 612, 2468);
	t = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(p->d_utime, 10);
	ck_assert_uint_eq(p->d_stime, 0);
	/* the thread's Σ is its process's: its only busy thread */
	ck_assert_uint_eq(t->d_utime, p->d_utime);
	ck_assert_uint_eq(t->d_stime, p->d_stime);
}
END_TEST

/*
 * A thread's denominators cover the same samples in every mode: which
 * threads get read is a cost choice, not a change of what a figure means.
 */
START_TEST(threads_changed_denominators)
{
	const struct window_task *p, *t;
	const struct window *w;
	enum threads_mode mode = _i == 0 ? THREADS_CHANGED : THREADS_ALL;
	unsigned i;

	start(mode, 1000, 10, 4);
	first();
	burn(612, 640, 5, 0, 0);
	step();
	for (i = 0; i < 3; i++)
		step(); /* sf idle: CHANGED reads no thread of it */
	w = close_now();
	p = find_task(w, false, 612, 2468);
	t = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(p->samples, 4);
	ck_assert_uint_eq(p->wall_ns, 4 * NSEC_PER_SEC);
	ck_assert_uint_eq(t->d_utime, 5);
	ck_assert_uint_eq(t->samples, 4);
	ck_assert_uint_eq(t->wall_ns, 4 * NSEC_PER_SEC);
	ck_assert_uint_eq(t->total_ticks, 4 * NCPU * TOTAL_PER_CPU_SEC);
	ck_assert_double_eq(t->norm_ticks, 4.0 * TOTAL_PER_CPU_SEC);
	/* 5 ticks over 4 s at 100 Hz: 1.25 % of a core, as for sf */
	ck_assert_double_eq(metric_core_equiv(t->d_utime, t->wall_ns, w->hz),
	    metric_core_equiv(p->d_utime, p->wall_ns, w->hz));
}
END_TEST

/*
 * Listings skipped (doc/metrics.md): the same window whether /proc and
 * the task/ directories are listed every sample (the fork count moves:
 * _i 0) or the known tasks are read without listing (no fork: _i 1). A
 * thread and a process end in the middle; neither way counts them as
 * vanished, and every figure and denominator is the same.
 */
START_TEST(lists_skipped_same_figures)
{
	const struct window_task *t;
	const struct window *w;

	start(THREADS_CHANGED, 1000, 10, 4);
	fx.forks_frozen = _i == 1;
	first();
	burn(612, 640, 5, 1, 10);
	step();
	burn(4200, 4230, 3, 2, 0);
	step();
	thr_get(proc_get(612), 641)->present = false;
	burn(612, 640, 2, 0, 0);
	step();
	proc_get(1)->present = false;
	step();
	burn(612, 612, 1, 1, 0);
	step();
	w = close_now();

	ck_assert_uint_eq(w->health.procs_exited, 1);
	ck_assert_uint_eq(w->health.threads_exited, 2); /* init's, 641 */
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 0);
	ck_assert_uint_eq(w->health.procs_scanned, 2);
	t = find_task(w, false, 612, 2468);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 8);
	ck_assert_uint_eq(t->d_stime, 2);
	ck_assert_uint_eq(t->d_minflt, 10);
	ck_assert_uint_eq(t->samples, 5);
	t = find_task(w, true, 640, 2470);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 7);
	ck_assert_uint_eq(t->d_stime, 1);
	ck_assert_uint_eq(t->samples, 5);
	ck_assert_uint_eq(t->wall_ns, 5 * NSEC_PER_SEC);
	t = find_task(w, true, 612, 2468);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 1);
	t = find_task(w, false, 4200, 90000);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 3);
	ck_assert_uint_eq(t->d_stime, 2);
	t = find_task(w, true, 4230, 90010);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->d_utime, 3);
	ck_assert_uint_eq(count_id(w, true, 641), 0);
	/* the first sample lists /proc and the three processes' task/; then
	 * /proc every sample and the task/ of each process that moved (612
	 * three times, 4200 once), listed or skipped */
	if (_i == 0) {
		ck_assert_uint_eq(w->health.lists_read, 4 + 5 + 4);
		ck_assert_uint_eq(w->health.lists_skipped, 0);
	} else {
		ck_assert_uint_eq(w->health.lists_read, 4);
		ck_assert_uint_eq(w->health.lists_skipped, 5 + 4);
	}
}
END_TEST

/*
 * A task listed but unreadable from its first read has no table entry to
 * be read by without a listing: the directory is listed again every
 * sample while it stays so (here a thread whose stat is not a stat line),
 * and its failed read is counted each sample either way.
 */
START_TEST(lists_unreadable_relisted)
{
	const struct window *w;
	struct fproc *p;

	p = proc_add(5000, "broken", CMD("broken\0"), 10060, 95000);
	thr_add(p, 5000, "broken", 95000);
	thr_add(p, 5001, "bad", 95001)->garbage = true;
	start(THREADS_ALL, 1000, 10, 4);
	fx.forks_frozen = _i == 1;
	first();
	step();
	step();
	w = close_now();
	ck_assert_uint_eq(w->inv_deltas[INV_PARSE], 3);
	ck_assert_uint_eq(inv_sum(w->inv_deltas), 3);
	/* /proc, and four task/ directories, each sample */
	if (_i == 0) {
		ck_assert_uint_eq(w->health.lists_read, 3 * 5);
		ck_assert_uint_eq(w->health.lists_skipped, 0);
	} else {
		/* 5000's task/ every sample; the rest after the first */
		ck_assert_uint_eq(w->health.lists_read, 5 + 1 + 1);
		ck_assert_uint_eq(w->health.lists_skipped, 2 * 4);
	}
}
END_TEST

/*
 * The fork count is kept per task as a 16-bit epoch: at its wrap every
 * stamp is forgotten, so a process whose task/ was last listed 2^16
 * fork-samples ago is listed again, never taken as listed in the same
 * epoch. Here sf's task/ is listed in epoch 1, the epoch is put just
 * before the wrap, and a thread that appears after the wrap (in epoch 1
 * again, without a fork: only a fixture can) is found when sf moves.
 */
START_TEST(lists_epoch_wrap)
{
	const struct window *w;

	start(THREADS_CHANGED, 1000, 10, 4);
	fx.forks_frozen = true;
	first(); /* epoch 1: every task/ listed */
	collector_fork_epoch_test(fx.c, UINT16_MAX);
	fx.forks++;
	step(); /* epoch 0: the wrap */
	fx.forks++;
	step(); /* epoch 1 again */
	thr_add(proc_get(612), 650, "late", 2480);
	burn(612, 612, 1, 0, 0);
	step();
	w = collector_open(fx.c);
	ck_assert_uint_eq(w->health.threads_scanned, 4);
}
END_TEST

/*
 * What the rule rests on: with no fork a listing made earlier still names
 * every task, so a task that appears without one (only a fixture can make
 * one) is first read when the count moves, or at the window's closing
 * sample, which lists whatever the count says.
 */
START_TEST(lists_skipped_until_fork)
{
	const struct window *w;
	struct fproc *p;

	start(THREADS_CHANGED, 1000, 4, 4);
	fx.forks_frozen = true;
	first();
	step();
	p = proc_add(5000, "late", CMD("late\0"), 10060, 95000);
	thr_add(p, 5000, "late", 95000);
	step();
	w = collector_open(fx.c);
	ck_assert_uint_eq(w->health.procs_scanned, 3);
	ck_assert_uint_gt(w->health.lists_skipped, 0);
	step();
	ck_assert_uint_eq(collector_open(fx.c)->health.procs_scanned, 3);
	step(); /* the close */
	w = collector_window(fx.c, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->health.procs_scanned, 4);
	p = proc_add(5100, "later", CMD("later\0"), 10061, 96000);
	thr_add(p, 5100, "later", 96000);
	step();
	ck_assert_uint_eq(collector_open(fx.c)->health.procs_scanned, 4);
	fx.forks++;
	step();
	ck_assert_uint_eq(collector_open(fx.c)->health.procs_scanned, 5);
}
END_TEST

/* The real /proc/stat's "processes" (the kernel's fork count). */
static uint64_t
real_forks(void)
{
	static char buf[1 << 16];
	struct procstat st;
	ssize_t n;
	int fd;

	fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(procstat_parse(buf, (size_t)n, &st), 0);
	ck_assert(st.have & PROCSTAT_HAVE_PROCESSES);
	return st.processes;
}

static void *
idle_thread(void *arg)
{
	return arg;
}

/*
 * The kernel fact listings skipped rest on: a new thread is a fork as a
 * new process is, and moves "processes" (total_forks counts every clone).
 */
START_TEST(forks_count_threads)
{
	pthread_t th;
	uint64_t f0, f1, f2;
	pid_t pid;
	int status;

	f0 = real_forks();
	ck_assert_int_eq(pthread_create(&th, NULL, idle_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	f1 = real_forks();
	ck_assert_uint_gt(f1, f0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	f2 = real_forks();
	ck_assert_uint_gt(f2, f1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("collector");
	TCase *tc;

	tc = tcase_create("basics");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, baseline_then_valid);
	tcase_add_test(tc, names_and_uids);
	suite_add_tcase(s, tc);

	tc = tcase_create("validity");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sleep_gap);
	tcase_add_test(tc, sleep_boundary_not_slept);
	tcase_add_test(tc, no_advance);
	tcase_add_test(tc, aggregate_regression);
	tcase_add_test(tc, cpu_line_regression);
	tcase_add_test(tc, hotplug);
	tcase_add_test(tc, hotplug_offline_at_close);
	tcase_add_test(tc, stat_garbage);
	tcase_add_test(tc, stat_unreadable);
	tcase_add_test(tc, psi_absent_then_present);
	tcase_add_test(tc, psi_broken_is_counted);
	suite_add_tcase(s, tc);

	tc = tcase_create("tasks");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pid_reuse_baseline);
	tcase_add_test(tc, pid_reuse_born);
	tcase_add_test(tc, new_process_born);
	tcase_add_test(tc, proc_regression);
	tcase_add_test(tc, proc_vanish);
	tcase_add_test(tc, stat_fds_kept);
	tcase_add_test(tc, stat_fd_real_proc);
	tcase_add_loop_test(tc, proc_stat_garbage, 0, 2);
	tcase_add_test(tc, thread_stat_garbage);
	suite_add_tcase(s, tc);

	tc = tcase_create("windows");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, window_boundary);
	tcase_add_test(tc, window_boundary_jitter);
	tcase_add_test(tc, window_burst_cadence);
	tcase_add_test(tc, window_explicit_close);
	tcase_add_test(tc, window_cb_once_per_close);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, threads_none);
	tcase_add_test(tc, threads_all);
	tcase_add_test(tc, threads_changed);
	tcase_add_loop_test(tc, threads_changed_after_sleep, 0, 2);
	tcase_add_loop_test(tc, threads_changed_denominators, 0, 2);
	tcase_add_loop_test(tc, lists_skipped_same_figures, 0, 2);
	tcase_add_test(tc, lists_skipped_until_fork);
	tcase_add_loop_test(tc, lists_unreadable_relisted, 0, 2);
	tcase_add_test(tc, lists_epoch_wrap);
	tcase_add_test(tc, forks_count_threads);
	suite_add_tcase(s, tc);

	return tu_run(s);
}
