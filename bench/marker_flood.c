/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace marker flood for bench/ftrace_flood.sh: THREADS threads write
 * B/E pairs to the top-level trace_marker at RATE markers per second in
 * total (0: as fast as they can) for SECONDS, then print how many were
 * written. Each write is one ftrace print event.
 *
 *   marker_flood RATE SECONDS THREADS [TRACEFS]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fd;
static double rate; /* per thread */
static int64_t end_ns;

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *
flood(void *arg)
{
	uint64_t *written = arg, n = 0;
	int64_t start = now_ns(), t;
	char b[64], e[32];
	int lb, le;

	lb = snprintf(b, sizeof(b), "B|%d|bench slice", (int)getpid());
	le = snprintf(e, sizeof(e), "E|%d", (int)getpid());
	while ((t = now_ns()) < end_ns) {
		unsigned i;

		/* a batch, then wait for the schedule when rate-limited */
		for (i = 0; i < 50; i++) {
			if (write(fd, b, (size_t)lb) == lb)
				n++;
			if (write(fd, e, (size_t)le) == le)
				n++;
		}
		if (rate > 0) {
			int64_t due = start + (int64_t)((double)n / rate * 1e9);

			if (due > t) {
				struct timespec ts = { (due - t) / 1000000000LL,
					(long)((due - t) % 1000000000LL) };

				nanosleep(&ts, NULL);
			}
		}
	}
	*written = n;
	return NULL;
}

int
main(int argc, char *argv[])
{
	const char *tracefs = argc > 4 ? argv[4] : "/sys/kernel/tracing";
	uint64_t total = 0, *written;
	pthread_t *th;
	char path[512];
	double secs;
	int i, n;

	if (argc < 4) {
		fprintf(stderr,
		    "usage: marker_flood RATE SECONDS THREADS "
		    "[TRACEFS]\n");
		return 1;
	}
	rate = atof(argv[1]);
	secs = atof(argv[2]);
	n = atoi(argv[3]);
	if (n < 1 || secs <= 0)
		return 1;
	rate /= n;
	snprintf(path, sizeof(path), "%s/trace_marker", tracefs);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	th = calloc((size_t)n, sizeof(*th));
	written = calloc((size_t)n, sizeof(*written));
	end_ns = now_ns() + (int64_t)(secs * 1e9);
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, flood, &written[i]);
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += written[i];
	}
	printf("%llu\n", (unsigned long long)total);
	return 0;
}
