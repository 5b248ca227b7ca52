/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall latency programs' cost (bench/syscalls.sh):
 *
 *   sc_bench loop N [RATE]   N write()s of one byte to /dev/null, paced at
 *                            RATE calls/s (0: flat out); prints ns a call
 *   sc_bench collect SECS    the collector (daemon/syscalls/) loaded with
 *                            syscalls = write and BPF statistics on, a
 *                            window drained every second for SECS s; prints
 *                            the programs' runs and ns, and this process's
 *                            CPU (the daemon's side: drains, ring buffer)
 *   sc_bench objcost OBJ SECS
 *                            one build of bpf/syscalls/syscalls.bpf.c (the
 *                            daemon's, or a variant: raw_tp, per-CPU) loaded
 *                            as is, write traced, for SECS s: its runs, ns
 *                            and the write() calls its aggregate counted
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/bpf_common.h"
#include "syscalls/syscalls.bpf.h"
#include "syscalls/sc_collect.h"

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
loop(long n, long rate)
{
	int fd = open("/dev/null", O_WRONLY);
	int64_t t0 = now_ns(), t;
	long i;

	if (fd < 0)
		return 1;
	for (i = 0; i < n; i++) {
		if (write(fd, "x", 1) != 1)
			return 1;
		/* paced in steps of 1000 calls */
		if (rate > 0 && i % 1000 == 999) {
			int64_t due = t0 + (int64_t)((i + 1) * 1e9 / rate);

			while ((t = now_ns()) < due) {
				struct timespec ts = { 0, due - t };

				nanosleep(&ts, NULL);
			}
		}
	}
	t = now_ns() - t0;
	printf("calls %ld ns %lld ns_per_call %.1f rate %.0f\n", n,
	    (long long)t, (double)t / (double)n, (double)n * 1e9 / (double)t);
	return 0;
}

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int
collect(int secs)
{
	struct sc_opts o = { 0 };
	struct sc_config c;
	struct sc_collector *sc;
	struct window_syscalls *p;
	uint64_t runs = 0, ns = 0, calls = 0, slow = 0;
	double c0;
	int i, r, sfd;
	size_t k;

	bpf_common_init();
	sc_config_init(&c);
	c.on = true;
	if (sc_config_set(&c, "syscalls", "write") < 0)
		return 1;
	if ((sfd = bpf_stats_enable()) < 0) {
		fprintf(stderr, "BPF statistics: %s\n", strerror(-sfd));
		return 1;
	}
	o.cfg = &c;
	o.base = NULL;
	if ((r = sc_new(&o, &sc)) < 0) {
		fprintf(stderr, "sc_new: %s\n", strerror(-r));
		return 1;
	}
	sc_collect_part_free(sc_drain(sc));
	printf("ready\n");
	fflush(stdout);
	c0 = cpu_s();
	for (i = 0; i < secs; i++) {
		sleep(1);
		if ((p = sc_drain(sc)) == NULL)
			return 1;
		runs += p->prog_run_cnt;
		ns += p->prog_run_ns;
		slow += p->nslow;
		for (k = 0; k < p->nrows; k++)
			calls += p->rows[k].count;
		calls += p->other.count;
		sc_collect_part_free(p);
	}
	printf("runs %llu run_ns %llu ns_per_run %.1f calls %llu "
	       "ns_per_call %.1f slow %llu cpu_s %.4f\n",
	    (unsigned long long)runs, (unsigned long long)ns,
	    runs ? (double)ns / (double)runs : 0.0, (unsigned long long)calls,
	    calls ? (double)ns / (double)calls : 0.0, (unsigned long long)slow,
	    cpu_s() - c0);
	sc_free(sc);
	close(sfd);
	return 0;
}

static int
objcost(const char *path, int secs)
{
	struct sc_ctl ctl = { .gen = 0, .slow_ns = 50000000 };
	struct bpf_object *obj;
	struct bpf_program *pr;
	struct bpf_map *agg;
	uint64_t ns = 0, runs = 0, calls = 0;
	struct sc_key k, nk, *prev = NULL;
	int ncpu = libbpf_num_possible_cpus(), sfd, n, c, percpu;
	uint32_t zero = 0, nr = 1; /* write on x86_64 */
	uint8_t on = 1;
	struct sc_val *v;

#ifdef __aarch64__
	nr = 64;
#endif
	if ((sfd = bpf_stats_enable()) < 0)
		return 1;
	obj = bpf_object__open_file(path, NULL);
	if (obj == NULL || bpf_object__load(obj) < 0) {
		fprintf(stderr, "%s: load failed\n", path);
		return 1;
	}
	if (bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj,
				    "sc_traced"),
		&nr, &on, BPF_ANY) < 0 ||
	    bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj, "sc_ctl"),
		&zero, &ctl, BPF_ANY) < 0)
		return 1;
	bpf_object__for_each_program(pr, obj) if (!bpf_program__attach(pr))
	{
		fprintf(stderr, "attach %s failed\n", bpf_program__name(pr));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)secs);
	bpf_object__for_each_program(pr, obj)
	{
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(pr), &info, &len) ==
		    0) {
			ns += info.run_time_ns;
			runs += info.run_cnt;
		}
	}
	agg = bpf_object__find_map_by_name(obj, "sc_agg0");
	percpu = bpf_map__type(agg) == BPF_MAP_TYPE_PERCPU_HASH;
	n = percpu ? ncpu : 1;
	v = calloc((size_t)n, sizeof(*v));
	while (v && bpf_map_get_next_key(bpf_map__fd(agg), prev, &nk) == 0) {
		k = nk;
		prev = &k;
		if (bpf_map_lookup_elem(bpf_map__fd(agg), &k, v) < 0)
			continue;
		for (c = 0; c < n; c++)
			calls += v[c].count;
	}
	printf("runs %llu run_ns %llu ns_per_run %.1f calls %llu "
	       "ns_per_call %.1f\n",
	    (unsigned long long)runs, (unsigned long long)ns,
	    runs ? (double)ns / (double)runs : 0.0, (unsigned long long)calls,
	    calls ? (double)ns / (double)calls : 0.0);
	free(v);
	bpf_object__close(obj);
	close(sfd);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "loop"))
		return loop(atol(argv[2]), argc > 3 ? atol(argv[3]) : 0);
	if (argc == 4 && !strcmp(argv[1], "objcost"))
		return objcost(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "collect"))
		return collect(atoi(argv[2]));
	fprintf(stderr,
	    "usage: sc_bench loop N [RATE] | collect SECS | "
	    "objcost OBJ SECS\n");
	return 2;
}
