/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dmabuf_pass: what one DMA-BUF pass (dmabuf_pass(), the default
 * configuration) costs over this machine's /proc, run N times in a row:
 * wall and thread-CPU time per pass (median, min), with the pass's own
 * counts. Run it beside a population (bench/spawn_tasks) to compare two
 * builds in the same minute. -P: dmabuf_iter = off, every pass walks /proc
 * (the kernel's list, iter/dmabuf, is read first otherwise): the A/B pair
 * of one build.
 *
 * usage: dmabuf_pass [-P] [-n passes] [proc_root [sys_root]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vitalsd.h"

static int64_t
ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct dmabuf_opts o = { .proc_root = "/proc", .sys_root = "/sys" };
	struct dmabuf_config cfg;
	struct window_dmabuf *p = NULL;
	int64_t *wall, *cpu;
	struct dmabuf *db;
	int c, i, n = 20, r;

	dmabuf_config_init(&cfg);
	o.cfg = &cfg;
	while ((c = getopt(argc, argv, "Pn:")) != -1) {
		if (c == 'P') {
			cfg.iter = false;
			continue;
		}
		if (c != 'n') {
			fprintf(stderr,
			    "usage: dmabuf_pass [-P] [-n passes] "
			    "[proc_root [sys_root]]\n");
			return 2;
		}
		n = atoi(optarg);
	}
	if (n < 1)
		n = 1;
	if (optind < argc)
		o.proc_root = argv[optind++];
	if (optind < argc)
		o.sys_root = argv[optind++];
	if ((r = dmabuf_new(&o, &db)) < 0) {
		fprintf(stderr, "dmabuf_new: %s\n", strerror(-r));
		return 1;
	}
	wall = calloc((size_t)n, sizeof(*wall));
	cpu = calloc((size_t)n, sizeof(*cpu));
	if (wall == NULL || cpu == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		int64_t w0 = ns_of(CLOCK_MONOTONIC);
		int64_t c0 = ns_of(CLOCK_THREAD_CPUTIME_ID);

		window_dmabuf_free(p);
		p = NULL;
		if ((r = dmabuf_pass(db, 0, &p)) < 0) {
			fprintf(stderr, "dmabuf_pass: %s\n", strerror(-r));
			return 1;
		}
		cpu[i] = ns_of(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall[i] = ns_of(CLOCK_MONOTONIC) - w0;
	}
	qsort(wall, (size_t)n, sizeof(*wall), cmp_i64);
	qsort(cpu, (size_t)n, sizeof(*cpu), cmp_i64);
	printf("dmabuf_pass: %d passes, %u processes, %llu fds (%llu DMA-BUF); "
	       "kernel list %s: %u passes read it, %u without a buffer, "
	       "%u buffers %llu B\n",
	    n, (unsigned)p->procs_scanned, (unsigned long long)p->fds_read,
	    (unsigned long long)p->fds_dmabuf,
	    dmabuf_iter_why_name(dmabuf_iter_state(db)), p->kernel_passes,
	    p->passes_no_buffer, p->kernel_buffers,
	    (unsigned long long)p->kernel_bytes);
	printf("RESULT wall_ms_median=%.3f wall_ms_min=%.3f cpu_ms_median=%.3f "
	       "cpu_ms_min=%.3f\n",
	    wall[n / 2] / 1e6, wall[0] / 1e6, cpu[n / 2] / 1e6, cpu[0] / 1e6);
	window_dmabuf_free(p);
	dmabuf_free(db);
	free(wall);
	free(cpu);
	return 0;
}
