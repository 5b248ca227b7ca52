/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two threads pinned to one CPU hand a byte back and forth over two pipes
 * for N seconds: every hop is a wakeup and a context switch. Prints the
 * round trips per second. Used by bench/bpf_sched.sh.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static volatile int stop;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *
echo(void *arg)
{
	char c;

	pin(*(int *)arg);
	while (read(ab[0], &c, 1) == 1 && c)
		if (write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, t0, end;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	unsigned long long n = 0;
	pthread_t t;
	char c = 1;

	if (pipe(ab) < 0 || pipe(ba) < 0)
		return 1;
	pin(cpu);
	if (pthread_create(&t, NULL, echo, &cpu) != 0)
		return 1;
	t0 = now();
	end = t0 + secs;
	while (now() < end) {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
		n++;
	}
	c = 0;
	(void)!write(ab[1], &c, 1);
	pthread_join(t, NULL);
	printf("%llu %.0f\n", n, (double)n / (now() - t0));
	return 0;
}
