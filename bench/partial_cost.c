/* SPDX-License-Identifier: Apache-2.0 */
/*
 * partial_cost: the kernel's run time of taskiter_partial (doc/bpf.md,
 * "Event-driven samples") by part, on the live machine. The sched
 * accounting is loaded on a pin directory of its own; every sample runs
 * one partial read, its kind rotating, and takes the program's run time
 * from the kernel's BPF stats (run_time_ns, run_cnt) around that read:
 *   side   a sample's read (the live side; the process map when threads
 *          were freed since the last read, as the daemon's)
 *   procs  the same with the process map walked whatever the counters say
 *   cpus   the CPUs' running tasks alone (the maps left out)
 *   maps   the maps alone (the CPUs left out)
 * and at each window close (every -w samples: the flip, then a read of
 * both sides, then the drain, as the daemon's close) "close".
 *
 * usage: partial_cost [-n samples] [-w samples_per_window] [-s sleep_ms]
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
#include "sched/sched.h"
#include "taskiter/taskiter.h"
#include "vitalsd.h"

/* The kernel's run time of this machine's programs named name. */
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
		    strcmp(info.name, name) == 0) {
			*ret_ns += info.run_time_ns;
			*ret_cnt += info.run_cnt;
		}
		close(fd);
	}
}

enum { K_SIDE, K_PROCS, K_CPUS, K_MAPS, K_CLOSE, K__MAX };
static const char *const kind_name[K__MAX] = { "side", "procs", "cpus", "maps",
	"close" };
static const unsigned kind_flags[K__MAX] = { 0, TASKITER_READ_PROCS,
	TASKITER_READ_NO_MAPS, TASKITER_READ_NO_CPUS, TASKITER_READ_BOTH };

struct tally {
	uint64_t ns, n, recs;
};

/* the last read's end record: the thread hashes walked and skipped */
static struct taskiter_end last;

static int
one_read(struct taskiter *ti, unsigned side, unsigned kind, struct tally *t)
{
	const struct taskiter_snap *snap;
	struct taskiter_end end;
	uint64_t ns0, c0, ns1, c1;
	int r;

	prog_time("taskiter_partia", &ns0, &c0);
	r = taskiter_read_partial(ti, side, kind_flags[kind], &snap, &end);
	prog_time("taskiter_partia", &ns1, &c1);
	if (r < 0) {
		fprintf(stderr, "partial read: %s\n", strerror(-r));
		return r;
	}
	if (c1 != c0 + 1)
		return 0; /* another run came between: not counted */
	t[kind].ns += ns1 - ns0;
	t[kind].n++;
	t[kind].recs += end.nrecs;
	last = end;
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned nsamples = 60, per = 10, sleep_ms = 1000, k, st, kind;
	struct bpf_sched_opts o = { .sys_root = "/sys",
		.load = VBPF_LOAD_AUTO,
		.rq = true };
	struct bpf_sched_batch batch = { 0 };
	struct tally t[K__MAX] = { { 0 } };
	enum scanner_why why_s;
	enum partial_why pwhy;
	struct taskiter_events ev;
	struct bpf_sched *bs = NULL;
	struct taskiter *ti = NULL;
	char dir[128], why[512];
	int ch, stats_fd, perr, ret = 1;
	uint64_t gen;

	while ((ch = getopt(argc, argv, "n:w:s:")) != -1) {
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
		default:
			fprintf(stderr,
			    "usage: partial_cost [-n samples] "
			    "[-w per_window] [-s sleep_ms]\n");
			return 2;
		}
	}
	if (per == 0 || nsamples == 0)
		return 2;
	bpf_common_init();
	if ((stats_fd = bpf_stats_enable()) < 0) {
		fprintf(stderr, "BPF stats: %s\n", strerror(-stats_fd));
		return 1;
	}
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/vitals-pcost-%d",
	    (int)getpid());
	o.bpffs = dir;
	if (bpf_sched_open(&o, &bs, &st, why, sizeof(why)) < 0) {
		fprintf(stderr, "sched accounting: %s\n", why);
		return 1;
	}
	ev.slot_cap = bpf_sched_slot_cap(bs);
	if (bpf_sched_event_fds(bs, &ev.ctl_fd, &ev.tot_fd, ev.tid_fd,
		ev.proc_fd, ev.slot_fd, &ev.nslot_fd) < 0)
		goto out;
	if (taskiter_open_ev((unsigned)sysconf(_SC_CLK_TCK), "/sys", &ev, &ti,
		&why_s, &pwhy, &perr) < 0 ||
	    !taskiter_partial_on(ti)) {
		fprintf(stderr, "partial reads off: %s\n",
		    partial_why_name(pwhy));
		goto out;
	}
	for (k = 0; k < nsamples; k++) {
		usleep(sleep_ms * 1000u);
		if (taskiter_ev_gen(ti, &gen) < 0)
			goto out;
		if ((k + 1) % per == 0) {
			/* the daemon's close: flip, read both sides, drain */
			if (bpf_sched_flip_early(bs) < 0 ||
			    taskiter_ev_gen(ti, &gen) < 0)
				goto out;
			if (one_read(ti, (unsigned)(gen & 1), K_CLOSE, t) < 0)
				goto out;
			if (bpf_sched_flip(bs) < 0 ||
			    bpf_sched_collect(bs, &batch) < 0)
				fprintf(stderr, "drain failed\n");
			continue;
		}
		kind = k % K_CLOSE;
		if (one_read(ti, (unsigned)(gen & 1), kind, t) < 0)
			goto out;
	}
	printf("samples %u, %u per window, %u ms apart\n", nsamples, per,
	    sleep_ms);
	for (kind = 0; kind < K__MAX; kind++)
		printf("%-6s %8.1f us per run  (%llu runs, %llu records avg)\n",
		    kind_name[kind],
		    t[kind].n ?
			(double)t[kind].ns / (double)t[kind].n / 1000.0 :
			0.0,
		    (unsigned long long)t[kind].n,
		    (unsigned long long)(t[kind].n ? t[kind].recs / t[kind].n :
						     0));
	printf("thread hashes walked %llu, skipped %llu; process maps walked "
	       "%llu\n",
	    (unsigned long long)last.hash_walks,
	    (unsigned long long)last.hash_skips,
	    (unsigned long long)last.proc_walks);
	ret = 0;
out:
	taskiter_free(ti);
	bpf_sched_batch_release(&batch);
	bpf_sched_free(bs);
	(void)bpf_sched_unpin(dir);
	rmdir(dir);
	close(stats_fd);
	return ret;
}
