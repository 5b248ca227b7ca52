/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a top-N read costs the store (no daemon, no socket): store_top and
 * store_history straight on a database file.
 *
 *   top_cost fill DB [HOURS [PROCS [THREADS [rollups]]]]
 *	HOURS (24) of 10 s level-0 windows ending now, each with PROCS
 *	(134) processes and THREADS (200) threads active (334 task rows: the
 *	500 x 4 population of store_io.sh), no size bound, no roll-up.
 *
 *	Then maintenance passes (nothing is old enough to roll up or
 *	delete) build the span summaries, as the daemon's would. With
 *	"rollups" after THREADS the default roll-ups are on: the passes
 *	roll the windows past the level-0 age up, as the daemon's would.
 *
 *   top_cost run DB [REPS [all|windows|top|writer|cold [spool]]]
 *	top-20 by CPU of processes and of threads, and one process's
 *	history, over the last hour and the last 24 h, REPS (15) times
 *	each after one warm-up; prints p50 and max in ms. Each read on a
 *	read connection in a snapshot of its own (store_conn_begin/end in
 *	the time), as the daemon's query threads make them. "windows":
 *	summaries left unused (every window read, as before them). "writer":
 *	on the writer's handle, each statement a transaction of its own
 *	(how this tool measured before 5 Dec 2026). "cold": each read
 *	after store_conn_idle, as the read pool's after 30 s without a
 *	read, its open and snapshot timed apart; then SQLite's heap with
 *	the reader idle. "all": every read as
 *	with no mode. "spool": the store opened with a spool beside it
 *	(DB.spool, emptied first: its WAL too), as the daemon's is, so a
 *	read connection's windows are a view over both files
 *	(store_conn.c) and a range's ORDER BY sorts in a temporary b-tree.
 *
 * The same source builds against any schema's store API, so one file
 * measured before and after a change answers "what did it cost".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "vitalsd.h"

extern bool store_sum_off; /* store_tasksum.c */

static int
cmd_fill(int argc, char **argv)
{
	double hours = argc > 3 ? atof(argv[3]) : 24.0;
	unsigned nprocs = argc > 4 ? (unsigned)atoi(argv[4]) : 134;
	unsigned nthreads = argc > 5 ? (unsigned)atoi(argv[5]) : 200;
	unsigned nwin = (unsigned)(hours * 360), i, k;
	int64_t wall = clock_ns(CLOCK_REALTIME);
	struct store_opts o;
	struct store *s;
	int r;

	store_opts_default(&o);
	o.max_bytes = 0;
	o.retain_s = 0;
	/* "rollups": the default roll-ups, so the older part of the day is
	 * stored as the daemon would hold it */
	if (argc <= 6 || strcmp(argv[6], "rollups") != 0)
		o.rollup1_s = o.rollup2_s = 0;
	if ((r = store_open(argv[2], &o, &s)) < 0) {
		fprintf(stderr, "fill: %s: %s\n", argv[2], strerror(-r));
		return 1;
	}
	srandom(1);
	for (i = 0; i < nwin; i++) {
		int64_t back = (int64_t)(nwin - i) * 10 * NSEC_PER_SEC;
		struct window *w = window_new(i + 1, 2);

		if (w == NULL)
			return 1;
		snprintf(w->boot_id, sizeof(w->boot_id), "bench-top");
		w->hz = 100;
		w->interval_ms = 1000;
		w->mono_start_ns = (int64_t)i * 10 * NSEC_PER_SEC;
		w->mono_end_ns = w->mono_start_ns + 10 * NSEC_PER_SEC;
		w->boot_start_ns = w->mono_start_ns;
		w->boot_end_ns = w->mono_end_ns;
		w->wall_start_ns = wall - back;
		w->wall_end_ns = w->wall_start_ns + 10 * NSEC_PER_SEC;
		w->samples = w->samples_valid = 10;
		w->all.d.user = 400;
		w->all.d.idle = 1600;
		w->all.samples = 10;
		for (k = 0; k < nprocs + nthreads; k++) {
			struct window_task t = { 0 };
			bool thread = k >= nprocs;

			t.id = (int32_t)(thread ? 100000 + k : 1000 + k);
			t.tgid = thread ? (int32_t)(1000 + k % nprocs) : t.id;
			t.starttime = 500 + k;
			t.uid = 10000 + k % 50;
			snprintf(t.comm, sizeof(t.comm), "%s%u",
			    thread ? "thr" : "proc", k);
			window_task_set_namef(&t, "com.bench.app%u", k);
			/* a 10 % busy population: most rows small */
			t.d_utime = (uint64_t)(random() % 10 == 0 ?
				random() % 200 :
				random() % 3);
			t.d_stime = (uint64_t)(random() % 3);
			t.d_minflt = (uint64_t)(random() % 50);
			t.d_majflt = (uint64_t)(random() % 50 == 0);
			t.samples = 10;
			t.wall_ns = 10 * NSEC_PER_SEC;
			t.total_ticks = 2000;
			t.norm_ticks = 1000;
			t.rss_pages_max = 1000 + 7 * (uint64_t)k +
			    (uint64_t)(random() % 4);
			t.rss_pages_last = t.rss_pages_max - 1;
			if (window_add_task(w, thread, &t) < 0)
				return 1;
		}
		if ((r = store_put(s, w)) < 0) {
			fprintf(stderr, "fill: window %u: %s\n", i,
			    strerror(-r));
			return 1;
		}
		window_free(w);
	}
	for (k = 0; k < 16; k++)
		if ((r = store_maintain(s, wall)) < 0) {
			fprintf(stderr, "fill: maintain: %s\n", strerror(-r));
			return 1;
		}
	store_close(s);
	printf("filled %s: %u windows x (%u procs + %u threads)\n", argv[2],
	    nwin, nprocs, nthreads);
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static bool cold;	 /* each read on a connection released idle first */
static int64_t begin_ns; /* Σ store_conn_begin of the measured reads */

/* what: 0 top procs, 1 top threads, 2 one process's history; on rc in
 * a snapshot a read (NULL: on s alone) */
static int
measure(struct store *s, struct store *rc, int what, int64_t from, int64_t to,
    unsigned reps, int64_t *ret_p50, int64_t *ret_max, size_t *ret_n)
{
	int64_t *ns = calloc(reps, sizeof(*ns)), t0, t1;
	struct window_task *t = NULL;
	struct store_hist *h = NULL;
	unsigned i;
	size_t n = 0;
	int r = 0;

	if (ns == NULL)
		return -ENOMEM;
	for (i = 0; i <= reps && r == 0; i++) {
		if (cold && rc && i > 0)
			store_conn_idle(rc); /* as the pool's, idle */
		t0 = clock_ns(CLOCK_MONOTONIC);
		if (rc && (r = store_conn_begin(rc)) < 0)
			break;
		t1 = clock_ns(CLOCK_MONOTONIC);
		if (i > 0)
			begin_ns += t1 - t0;
		if (what < 2)
			r = store_top(rc ? rc : s, from, to, what == 1,
			    METRIC_CPU, 20, &t, &n);
		else
			r = store_history(rc ? rc : s, false, 1000, 0, from, to,
			    &h, &n);
		if (rc)
			store_conn_end(rc);
		if (i > 0) /* the first warms the page cache */
			ns[i - 1] = clock_ns(CLOCK_MONOTONIC) - t0;
		free(t);
		free(h);
		t = NULL;
		h = NULL;
	}
	qsort(ns, reps, sizeof(*ns), cmp_i64);
	*ret_p50 = ns[reps / 2];
	*ret_max = ns[reps - 1];
	*ret_n = n;
	free(ns);
	return r;
}

static int
cmd_run(int argc, char **argv)
{
	bool only_top, on_writer;
	static const char *const what[] = { "top-20 procs", "top-20 threads",
		"history of one process" };
	static const double hours[] = { 1, 24 };
	unsigned reps = argc > 3 ? (unsigned)atoi(argv[3]) : 15, w, k;
	int64_t now = clock_ns(CLOCK_REALTIME), p50, max;
	struct store_opts o;
	struct store *s, *rc = NULL;
	char spool[4096];
	size_t n;
	int r;

	if (reps == 0)
		reps = 1;
	if (argc > 4 && strcmp(argv[4], "all") != 0 &&
	    strcmp(argv[4], "windows") != 0 && strcmp(argv[4], "top") != 0 &&
	    strcmp(argv[4], "writer") != 0 && strcmp(argv[4], "cold") != 0) {
		fprintf(stderr,
		    "run: mode %s: not all, windows, top, writer, cold\n",
		    argv[4]);
		return 1;
	}
	if (argc > 5 && strcmp(argv[5], "spool") != 0) {
		fprintf(stderr, "run: %s: not spool\n", argv[5]);
		return 1;
	}
	store_sum_off = argc > 4 && strcmp(argv[4], "windows") == 0;
	/* "top": the top-20 of processes over the last hour alone (for a
	 * profiler: REPS of the one read a polling client makes) */
	only_top = argc > 4 && strcmp(argv[4], "top") == 0;
	on_writer = argc > 4 && strcmp(argv[4], "writer") == 0;
	cold = argc > 4 && strcmp(argv[4], "cold") == 0;
	store_opts_default(&o);
	o.max_bytes = 0;
	if (argc > 5) {
		/* emptied: a killed run's WAL would be replayed into it */
		static const char *const sfx[] = { "-wal", "-shm", "" };
		unsigned i;

		for (i = 0; i < 3; i++) {
			if (snprintf(spool, sizeof(spool), "%s.spool%s",
				argv[2], sfx[i]) >= (int)sizeof(spool))
				return 1;
			unlink(spool);
		}
		o.spool_path = spool;
	}
	if ((r = store_open(argv[2], &o, &s)) < 0) {
		fprintf(stderr, "run: %s: %s\n", argv[2], strerror(-r));
		return 1;
	}
	if (!on_writer && (r = store_conn_open(s, &rc)) < 0) {
		fprintf(stderr, "run: read connection: %s\n", strerror(-r));
		store_close(s);
		return 1;
	}
	for (k = 0; k < (only_top ? 1u : 2u); k++)
		for (w = 0; w < (only_top ? 1u : 3u); w++) {
			begin_ns = 0;
			r = measure(s, rc, (int)w,
			    now - (int64_t)(hours[k] * 3600) * NSEC_PER_SEC,
			    now, reps, &p50, &max, &n);
			if (r < 0) {
				fprintf(stderr, "run: %s\n", strerror(-r));
				store_conn_close(rc);
				store_close(s);
				return 1;
			}
			printf("%-24s over %4.0f h: p50 %8.2f ms, max %8.2f ms"
			       " (%zu rows)\n",
			    what[w], hours[k], (double)p50 / 1e6,
			    (double)max / 1e6, n);
			if (cold)
				printf("%24s of which opening and the snapshot:"
				       " mean %.2f ms\n",
				    "", (double)begin_ns / reps / 1e6);
		}
	if (cold) {
		/* what the process's SQLite holds with the reader idle (the
		 * writer's handle's included) */
		store_conn_idle(rc);
		printf("SQLite's heap with the reader idle: %.1f KiB\n",
		    (double)sqlite3_memory_used() / 1024);
	}
	store_conn_close(rc);
	store_close(s);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "fill") == 0)
		return cmd_fill(argc, argv);
	if (argc >= 3 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc, argv);
	fprintf(stderr,
	    "usage: top_cost fill DB [HOURS [PROCS [THREADS [rollups]]]]\n"
	    "       top_cost run DB [REPS [all|windows|top|writer|cold "
	    "[spool]]]\n");
	return 2;
}
