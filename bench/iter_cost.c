/* SPDX-License-Identifier: Apache-2.0 */
/*
 * iter_cost: CPU that one full process + thread scan costs with each source
 * of procscan_run(): the BPF task iterator and /proc. Both run the daemon's
 * own scanner (threads = all, every sample valid, so the whole per-task
 * update runs) over the live machine. The CPU is this process's
 * (CLOCK_PROCESS_CPUTIME_ID): the iterator program runs inside our read(2),
 * as /proc's formatting does; wall time is beside it.
 *
 * The sources alternate in short rounds so both see the same population
 * and the same background load; the ratio is taken per round and the median
 * reported, since a shared machine's load moves between rounds. Scans are
 * -s ms apart, as the daemon's are a cadence apart: what runs in between
 * (the population, the other source) leaves the caches as a sampling
 * daemon finds them, instead of one scan warming them for the next.
 *
 * With BPF it also splits the iterator's cost, in the same rounds: "walk" is
 * the kernel's iter/task walk alone (taskiter_walk: a program that reads
 * nothing), "read" adds taskiter_dump's records and their parsing
 * (taskiter_read), the "bpf" scan adds the scanner's per-task update.
 *
 * usage: iter_cost [-n scans_per_round] [-r rounds] [-s sleep_ms]
 *                  [-o procfs|bpf]   (-o: that source only, for a profiler)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vitalsd.h"

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "taskiter.skel.h"
#endif

#define ROUNDS_MAX 1000

enum kind { K_SCAN, K_READ, K_WALK };

struct mode {
	const char *name;
	enum kind kind;
	enum scanner_mode scanner;
	struct taskiter *ti; /* K_READ */
	int link_fd;	     /* K_WALK */
	struct vbuf buf;     /* K_WALK */
	struct procscan *ps;
	struct window *w;
	uint64_t cpu_ns, wall_ns, scans, tasks; /* totals */
	double round_ns[ROUNDS_MAX];		/* CPU ns per task, per round */
};

static int64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned sleep_ms = 200;

/* One scan, read or walk; returns the tasks it saw. */
static uint64_t
step(struct mode *m, struct scan_ctx *ctx)
{
	const struct taskiter_snap *snap;
	int r = 0;

	switch (m->kind) {
	case K_SCAN:
		if ((r = procscan_run(m->ps, ctx, m->w)) < 0)
			break;
		return m->w->health.procs_scanned +
		    m->w->health.threads_scanned;
	case K_READ:
		if ((r = taskiter_read(m->ti, &snap)) < 0)
			break;
		return snap->nprocs + snap->nthreads;
	case K_WALK:
#ifdef HAVE_BPF
	{
		int fd = bpf_iter_create(m->link_fd);
		ssize_t k;

		if (fd < 0) {
			r = -errno;
			break;
		}
		m->buf.len = 0;
		for (;;) {
			if (vbuf_reserve(&m->buf, 256 * 1024) < 0)
				exit(1);
			k = read(fd, m->buf.p + m->buf.len,
			    m->buf.cap - m->buf.len - 1);
			if (k <= 0)
				break;
			m->buf.len += (size_t)k;
		}
		r = k < 0 ? -errno : 0;
		close(fd);
		if (r == 0)
			return m->buf.len / sizeof(uint32_t);
	}
#endif
	break;
	}
	fprintf(stderr, "iter_cost: %s: %s\n", m->name, strerror(-r));
	exit(1);
}

/* n scans; returns this run's CPU ns per task. */
static double
scan(struct mode *m, struct scan_ctx *ctx, unsigned n, bool measure)
{
	uint64_t cpu = 0, wall = 0, tasks = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct timespec ts = { sleep_ms / 1000,
			(long)(sleep_ms % 1000) * NSEC_PER_MSEC };
		int64_t c0, w0;

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		ctx->prev_boot_ns = now_ns(CLOCK_BOOTTIME);
		c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
		w0 = now_ns(CLOCK_MONOTONIC);
		tasks += step(m, ctx);
		cpu += (uint64_t)(now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0);
		wall += (uint64_t)(now_ns(CLOCK_MONOTONIC) - w0);
	}
	if (measure) {
		m->cpu_ns += cpu;
		m->wall_ns += wall;
		m->scans += n;
		m->tasks += tasks;
	}
	return tasks ? (double)cpu / (double)tasks : 0.0;
}

#ifdef HAVE_BPF
static struct vitals_taskiter *walk_skel;
static struct bpf_link *walk_link;
#endif

static int
setup(struct mode *m, int procfd, unsigned hz)
{
	enum scanner_mode kind;
	enum scanner_why why = SCANNER_WHY_NONE;
	int r = -EINVAL, err;

	switch (m->kind) {
	case K_SCAN:
		if ((r = procscan_new(procfd, hz, THREADS_ALL, &m->ps)) < 0)
			return r;
		if ((r = procscan_set_scanner(m->ps, m->scanner, "/sys")) < 0) {
			procscan_scanner(m->ps, &kind, &why, &err);
			break;
		}
		return (m->w = window_new(1, 0)) == NULL ? -ENOMEM : 0;
	case K_READ:
		if ((r = taskiter_open(hz, "/sys", &m->ti, &why)) < 0)
			break;
		return 0;
	case K_WALK:
#ifdef HAVE_BPF
		if ((walk_skel = vitals_taskiter__open()) == NULL)
			return -errno;
		bpf_program__set_autoload(walk_skel->progs.taskiter_dump,
		    false);
		if ((r = vitals_taskiter__load(walk_skel)) < 0)
			break;
		walk_link =
		    bpf_program__attach_iter(walk_skel->progs.taskiter_walk,
			NULL);
		if (walk_link == NULL) {
			r = -errno;
			break;
		}
		m->link_fd = bpf_link__fd(walk_link);
		return 0;
#else
		r = -EOPNOTSUPP;
		break;
#endif
	}
	fprintf(stderr, "iter_cost: %s: %s (%s)\n", m->name, strerror(-r),
	    scanner_why_name(why));
	return r;
}

int
main(int argc, char *argv[])
{
	struct mode modes[] = {
		{ .name = "procfs", .kind = K_SCAN, .scanner = SCANNER_PROCFS },
		{ .name = "bpf", .kind = K_SCAN, .scanner = SCANNER_BPF },
		{ .name = "read", .kind = K_READ },
		{ .name = "walk", .kind = K_WALK },
	};
	static double ratio[ROUNDS_MAX];
	struct scan_ctx ctx = { 0 };
	unsigned per_round = 3, rounds = 10, j, k, k0 = 0, k1 = 4;
	long hz = sysconf(_SC_CLK_TCK);
	double bpf_tasks;
	int procfd, ch;

	while ((ch = getopt(argc, argv, "n:r:s:o:")) != -1) {
		switch (ch) {
		case 'n':
			per_round = (unsigned)atoi(optarg);
			break;
		case 'r':
			rounds = (unsigned)atoi(optarg);
			break;
		case 's':
			sleep_ms = (unsigned)atoi(optarg);
			break;
		case 'o':
			k0 = strcmp(optarg, "bpf") == 0;
			k1 = k0 + 1;
			break;
		default:
			fprintf(stderr,
			    "usage: iter_cost [-n scans] [-r rounds] "
			    "[-s sleep_ms] [-o procfs|bpf]\n");
			return 2;
		}
	}
	if (per_round == 0 || rounds == 0 || rounds > ROUNDS_MAX || hz <= 0)
		return 2;
	log_init(true, 0, "iter_cost");
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0) {
		perror("iter_cost: /proc");
		return 1;
	}
	for (k = k0; k < k1; k++)
		if (setup(&modes[k], procfd, (unsigned)hz) < 0)
			return 1;

	ctx.valid = true;
	ctx.have_prev = true;
	ctx.wall_ns = NSEC_PER_SEC;
	ctx.total_ticks = (uint64_t)hz;
	ctx.norm_ticks = (double)hz;
	/* Warm-up: first sightings read status and cmdline once each. */
	for (k = k0; k < k1; k++)
		scan(&modes[k], &ctx, 2, false);
	for (j = 0; j < rounds; j++) {
		for (k = k0; k < k1; k++)
			modes[k].round_ns[j] = scan(&modes[k], &ctx, per_round,
			    true);
		if (k0 == 0 && k1 >= 2)
			ratio[j] = modes[0].round_ns[j] / modes[1].round_ns[j];
	}

	for (k = k0; k < k1 && k < 2; k++) {
		struct mode *m = &modes[k];

		printf("RESULT scanner=%s scans=%llu tasks_per_scan=%.0f "
		       "cpu_us_per_scan=%.1f wall_us_per_scan=%.1f "
		       "cpu_ns_per_task=%.1f median_cpu_ns_per_task=%.1f\n",
		    m->name, (unsigned long long)m->scans,
		    (double)m->tasks / (double)m->scans,
		    (double)m->cpu_ns / (double)m->scans / 1e3,
		    (double)m->wall_ns / (double)m->scans / 1e3,
		    (double)m->cpu_ns / (double)m->tasks,
		    median(m->round_ns, rounds));
	}
	/* The iterator's parts, per task of the bpf scan's count. */
	bpf_tasks = modes[1].scans ?
	    (double)modes[1].tasks / (double)modes[1].scans :
	    0.0;
	for (k = 2; k < k1 && bpf_tasks > 0; k++) {
		struct mode *m = &modes[k];
		double us = (double)m->cpu_ns / (double)m->scans / 1e3;

		printf(
		    "PART stage=%s cpu_us_per_scan=%.1f cpu_ns_per_task=%.1f "
		    "(%s)\n",
		    m->name, us, us * 1e3 / bpf_tasks,
		    m->kind == K_WALK ?
			"iter/task walking every task, reading nothing" :
			"+ taskiter_dump's records, read(2) and parsed");
	}
	if (k0 == 0 && k1 >= 2)
		printf("RATIO procfs/bpf cpu_per_task=%.1fx "
		       "median_of_rounds=%.1fx wall_per_scan=%.1fx\n",
		    ((double)modes[0].cpu_ns / (double)modes[0].tasks) /
			((double)modes[1].cpu_ns / (double)modes[1].tasks),
		    median(ratio, rounds),
		    ((double)modes[0].wall_ns / (double)modes[0].scans) /
			((double)modes[1].wall_ns / (double)modes[1].scans));
	for (k = k0; k < k1; k++) {
		window_free(modes[k].w);
		procscan_free(modes[k].ps);
		taskiter_free(modes[k].ti);
		vbuf_release(&modes[k].buf);
	}
#ifdef HAVE_BPF
	bpf_link__destroy(walk_link);
	vitals_taskiter__destroy(walk_skel);
#endif
	close(procfd);
	return 0;
}
