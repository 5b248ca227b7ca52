/* SPDX-License-Identifier: Apache-2.0 */
/*
 * evscan_cost: CPU per process sample of the event-driven scan (doc/bpf.md,
 * "Event-driven samples") against a full walk every sample, on the live
 * machine, in the same run. The sched accounting is loaded on a pin
 * directory of its own; three of the daemon's scanners (threads =
 * changed, the default) sample side by side, rotating which goes first:
 * "event" reads partially between full walks at most -f seconds apart
 * (full_walk_s: a window close reads partially after the flip, doc/bpf.md
 * "Full walks"), "close" walks at every window close (full_walk_s = 0, the
 * scan before it), "full" walks every task every sample. The CPU is this
 * thread's (CLOCK_THREAD_CPUTIME_ID) around procscan_run: the iterator's
 * program and the partial program run inside our syscalls, so their time
 * is in it. Windows close as the daemon's do: the flip before the close's
 * last sample, the scans' flush, then the drain (not counted: the scans
 * share it).
 *
 * usage: evscan_cost [-n samples] [-w samples_per_window] [-s sleep_ms]
 *                    [-f full_walk_s]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/bpf_common.h"
#include "proc/proc.h"
#include "sched/sched.h"
#include "taskiter/taskiter.h"
#include "vitalsd.h"

static int64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

struct side {
	const char *name;
	struct procscan *ps;
	struct window *w;
	uint64_t ns[4], n[4]; /* all, full, partial, window closes */
	uint64_t recs, tasks;
};

static void
sample(struct side *s, const struct scan_ctx *ctx)
{
	uint32_t part = s->w->health.samples_partial;
	int64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), d;

	if (procscan_run(s->ps, ctx, s->w) < 0) {
		fprintf(stderr, "%s: scan failed\n", s->name);
		exit(1);
	}
	d = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	s->ns[0] += (uint64_t)d;
	s->n[0]++;
	if (ctx->full) {
		s->ns[3] += (uint64_t)d;
		s->n[3]++;
	}
	if (s->w->health.samples_partial != part) {
		s->ns[2] += (uint64_t)d;
		s->n[2]++;
		s->recs += s->w->health.partial_records;
	} else {
		s->ns[1] += (uint64_t)d;
		s->n[1]++;
		s->tasks += s->w->health.threads_scanned;
	}
}

/* The kernel's run time of this process's programs named name (BPF stats
 * on): the partial program's, or the walks' (both scanners'). */
static void
prog_time(const char *name, uint64_t *ret_ns, uint64_t *ret_cnt)
{
	uint32_t id = 0;

	*ret_ns = *ret_cnt = 0;
	while (bpf_prog_get_next_id(id, &id) == 0) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
		    strcmp(info.name, name) == 0 && info.run_cnt > 0) {
			*ret_ns += info.run_time_ns;
			*ret_cnt += info.run_cnt;
		}
		close(fd);
	}
}

static double
avg_us(uint64_t ns, uint64_t n)
{
	return n ? (double)ns / (double)n / 1000.0 : 0.0;
}

int
main(int argc, char **argv)
{
	unsigned nsamples = 60, per = 10, sleep_ms = 1000, walk_s = 60, k;
	struct bpf_sched_opts o = { .sys_root = "/sys",
		.load = VBPF_LOAD_AUTO,
		.rq = true };
	struct bpf_sched_batch batch = { 0 };
	struct taskiter_events ev;
	struct bpf_sched *bs = NULL;
	enum { NS = 3 };
	struct side s[NS] = { { .name = "event" }, { .name = "close" },
		{ .name = "full" } };
	char dir[128], why[512];
	int64_t prev;
	uint64_t pns, pcnt;
	unsigned st;
	int ch, procfd, i, stats_fd;

	while ((ch = getopt(argc, argv, "n:w:s:f:")) != -1) {
		switch (ch) {
		case 'n':
			nsamples = (unsigned)atoi(optarg);
			break;
		case 'w':
			per = (unsigned)atoi(optarg);
			break;
		case 's':
			sleep_ms = (unsigned)atoi(optarg);
			break;
		case 'f':
			walk_s = (unsigned)atoi(optarg);
			break;
		default:
			fprintf(stderr,
			    "usage: evscan_cost [-n samples] "
			    "[-w per_window] [-s sleep_ms] [-f full_walk_s]\n");
			return 2;
		}
	}
	if (per == 0 || nsamples == 0)
		return 2;
	bpf_common_init();
	stats_fd = bpf_stats_enable();
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/vitals-bench-%d",
	    (int)getpid());
	o.bpffs = dir;
	if (bpf_sched_open(&o, &bs, &st, why, sizeof(why)) < 0) {
		fprintf(stderr, "sched accounting: %s\n", why);
		return 1;
	}
	ev.slot_cap = bpf_sched_slot_cap(bs);
	if (bpf_sched_event_fds(bs, &ev.ctl_fd, &ev.tot_fd, ev.tid_fd,
		ev.proc_fd, ev.slot_fd, &ev.nslot_fd) < 0)
		return 1;
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < NS; i++) {
		if (procscan_new(procfd, (unsigned)sysconf(_SC_CLK_TCK),
			THREADS_CHANGED, &s[i].ps) < 0)
			return 1;
		if (i < 2) {
			procscan_set_events(s[i].ps, &ev, "/sys");
			procscan_set_walk_period(s[i].ps,
			    i == 0 ? (uint64_t)walk_s * NSEC_PER_SEC : 0);
		} else {
			procscan_force_full(s[i].ps, true);
		}
		if (procscan_set_scanner(s[i].ps, SCANNER_BPF, "/sys") < 0) {
			fprintf(stderr, "task iterator did not load\n");
			return 1;
		}
		s[i].w = window_new(1, 0);
	}
	prev = now_ns(CLOCK_BOOTTIME) - NSEC_PER_SEC;
	for (k = 0; k < nsamples; k++) {
		struct scan_ctx ctx = {
			.valid = true,
			.have_prev = true,
			.prev_boot_ns = prev,
			.wall_ns = (uint64_t)sleep_ms * 1000000u,
			.total_ticks = 100,
			.norm_ticks = 50.0,
			.full = (k + 1) % per == 0,
		};

		usleep(sleep_ms * 1000u);
		/* the daemon's close: the flip before its last sample */
		if (ctx.full)
			ctx.flipped = bpf_sched_flip_early(bs) == 0;
		prev = ctx.boot_ns = now_ns(CLOCK_BOOTTIME);
		/* who goes first rotates: the later ones find caches warm */
		for (i = 0; i < NS; i++)
			sample(&s[(k + (unsigned)i) % NS], &ctx);
		if (!ctx.full)
			continue;
		for (i = 0; i < NS; i++) {
			if (s[i].w->health.partial_why != PARTIAL_WHY_NONE &&
			    i == 0)
				fprintf(stderr, "partial off: %s\n",
				    partial_why_name(
					s[i].w->health.partial_why));
			procscan_flush(s[i].ps, s[i].w);
			window_free(s[i].w);
			s[i].w = window_new(k + 2, 0);
		}
		if (bpf_sched_flip(bs) < 0 || bpf_sched_collect(bs, &batch) < 0)
			fprintf(stderr, "drain failed\n");
	}
	printf("samples %u, %u per window, %u ms apart\n", nsamples, per,
	    sleep_ms);
	printf("event: full walks at most %u s apart\n", walk_s);
	for (i = 0; i < NS; i++)
		printf(
		    "%-5s  all %8.1f us/sample (%llu)  close %8.1f us (%llu)  "
		    "full %8.1f us (%llu, %llu tasks avg)  partial %8.1f us "
		    "(%llu, %llu records avg)\n",
		    s[i].name, avg_us(s[i].ns[0], s[i].n[0]),
		    (unsigned long long)s[i].n[0],
		    avg_us(s[i].ns[3], s[i].n[3]),
		    (unsigned long long)s[i].n[3],
		    avg_us(s[i].ns[1], s[i].n[1]),
		    (unsigned long long)s[i].n[1],
		    (unsigned long long)(s[i].n[1] ? s[i].tasks / s[i].n[1] :
						     0),
		    avg_us(s[i].ns[2], s[i].n[2]),
		    (unsigned long long)s[i].n[2],
		    (unsigned long long)(s[i].n[2] ? s[i].recs / s[i].n[2] :
						     0));
	/* inside the figures above: the programs' share */
	prog_time("taskiter_partia", &pns, &pcnt);
	if (stats_fd >= 0 && pcnt)
		printf("bpf    taskiter_partial %.1f us per run (%llu runs)\n",
		    (double)pns / (double)pcnt / 1000.0,
		    (unsigned long long)pcnt);
	/* over one period in steady state: one walk, the rest partial */
	if (walk_s > 0 && s[0].n[1] && s[0].n[2]) {
		double per_s = (double)walk_s * 1000.0 / sleep_ms;

		printf("event  over a %u s period: %.1f us/sample (one walk "
		       "and %.0f partial reads)\n",
		    walk_s,
		    (avg_us(s[0].ns[1], s[0].n[1]) +
			(per_s - 1) * avg_us(s[0].ns[2], s[0].n[2])) /
			per_s,
		    per_s - 1);
	}
	printf("RATIO all_event/all_full=%.3f all_close/all_full=%.3f\n",
	    s[2].ns[0] ? (double)s[0].ns[0] / (double)s[2].ns[0] : 0.0,
	    s[2].ns[0] ? (double)s[1].ns[0] / (double)s[2].ns[0] : 0.0);
	for (i = 0; i < NS; i++) {
		window_free(s[i].w);
		procscan_free(s[i].ps);
	}
	bpf_sched_batch_release(&batch);
	bpf_sched_free(bs);
	(void)bpf_sched_unpin(dir);
	rmdir(dir);
	close(procfd);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
