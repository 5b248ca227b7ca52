/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Control-plane query latency (bench/query_latency.sh drives it).
 *
 *   query_latency fill DB [HOURS [PROCS [THREADS]]]
 *	write HOURS (1) of 10 s level-0 windows ending now into the store at
 *	DB, each with PROCS (300) processes and THREADS (200) threads, so a
 *	"top-20 over one hour" reads a full hour of rows.
 *
 *   query_latency run SOCKET [CLIENTS [SECONDS [reconnect] [unshared]]]
 *	CLIENTS (32) threads, each alternating a summary (snapshot, top 10)
 *	and a top-20 by CPU over the last hour, back to back, for SECONDS
 *	(20); one connection per client, or one per request with
 *	"reconnect". "unshared" makes every top request's range differ
 *	from every other's by at least 2 s (an hour and a bit) so no store
 *	read is shared (the daemon shares equal reads less than 1 s apart):
 *	the cost of the reads themselves, queueing included. Meanwhile a
 *	monitor polls health every 250 ms and keeps the sampling timer's
 *	lateness of every window that closes. Prints p50/p90/p99/max per
 *	operation, then the jitter and the control-plane counters.
 *	"paced=HZ": each client instead asks a top-20 and then a summary HZ
 *	times a second, every client on the same ticks (so all arrive at
 *	once, as platform services polling on a timer do); a top's latency
 *	counts from its tick. Paced runs also print the five slowest ticks
 *	("ticks:") and the tops of every tick but the first ("top20-warm"),
 *	the first burst being the one that meets cold read connections.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "vitalsd.h"

#define MAX_SAMPLES (1u << 20)

static const char *sock_path;
static volatile int stop;
static int reconnect, unshared;
static double paced_hz;	 /* > 0: each client asks this often, in step */
static int64_t start_ns; /* the paced clients' common first tick */

struct lat {
	int64_t *ns;
	int32_t *tick; /* paced: the tick each answer counts from */
	size_t n;
	uint64_t errors, busy;
};

struct client {
	pthread_t th;
	unsigned idx;
	struct lat snap, top;
};

static int64_t
now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int
connect_sock(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* One request, its answer; the status, or -errno. */
static int
roundtrip(int fd, const Vitals__Request *req, Vitals__Response **ret)
{
	Vitals__Response *resp;
	uint8_t *buf;
	size_t len;
	int r;

	if ((r = frame_pack_request(req, &buf, &len)) < 0)
		return r;
	r = frame_send(fd, buf, len, 30000);
	free(buf);
	if (r < 0)
		return r;
	if ((r = frame_recv(fd, 64u << 20, 30000, &buf, &len)) < 0)
		return r;
	resp = frame_unpack_response(buf, len);
	free(buf);
	if (resp == NULL)
		return -EBADMSG;
	r = (int)resp->status;
	if (ret)
		*ret = resp;
	else
		vitals__response__free_unpacked(resp, NULL);
	return r;
}

/* The sample arrays, made before the client's first request (a thread's
 * first allocations make its malloc arena and map these: until 6 Dec 2026
 * 32 clients did that inside the first tick, ~38 ms of CPU on 2 CPUs that
 * the first tick's latencies counted). */
static void
lat_alloc(struct lat *l)
{
	if (l->ns == NULL)
		l->ns = calloc(MAX_SAMPLES, sizeof(*l->ns));
	if (l->tick == NULL)
		l->tick = calloc(MAX_SAMPLES, sizeof(*l->tick));
}

static void
lat_add_tick(struct lat *l, int64_t ns, int status, int32_t tick)
{
	if (status == VITALS__STATUS__STATUS_BUSY)
		l->busy++;
	if (status != VITALS__STATUS__STATUS_OK) {
		l->errors++;
		return;
	}
	lat_alloc(l);
	if (l->ns && l->tick && l->n < MAX_SAMPLES) {
		l->tick[l->n] = tick;
		l->ns[l->n++] = ns;
	}
}

static void *
client_main(void *arg)
{
	struct client *c = arg;
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__SnapshotRequest snap = VITALS__SNAPSHOT_REQUEST__INIT;
	Vitals__TopRequest top = VITALS__TOP_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	uint64_t id = 0;
	int fd = -1, r;
	bool do_top = paced_hz > 0 || c->idx % 2;

	req.version = 1;
	snap.top_n = 10;
	tr.since_ns = 3600 * NSEC_PER_SEC;
	top.range = &tr;
	top.metric = VITALS__METRIC__METRIC_CPU;
	top.n = 20;
	int64_t period = paced_hz > 0 ? (int64_t)(1e9 / paced_hz) : 0;
	int64_t tick = start_ns;
	void *arena;

	lat_alloc(&c->top);
	lat_alloc(&c->snap);
	/* this thread's arena made, and an answer's worth of it mapped */
	if ((arena = malloc(64u << 10)) != NULL)
		memset(arena, 0, 64u << 10);
	free(arena);

	while (!stop) {
		int64_t t0;

		/* paced, one connection kept: connected before the tick, so
		 * a top's latency is the request's alone, as the other modes
		 * measure it (until 6 Dec 2026 the first tick's tops counted
		 * the 32 connects too); with reconnect the connect stays in */
		if (period > 0 && do_top && !reconnect && fd < 0 &&
		    (fd = connect_sock()) < 0) {
			c->top.errors++;
			usleep(10000);
			continue;
		}
		/* paced: a top and then a summary at every tick, every client
		 * on the same ticks (so they all arrive at once); a top's
		 * latency counts from its tick, so a client that fell behind
		 * is charged its lateness too */
		if (period > 0 && do_top) {
			struct timespec ts;

			while (tick + period <= now_ns())
				tick += period; /* missed ticks: skipped */
			ts.tv_sec = tick / NSEC_PER_SEC;
			ts.tv_nsec = tick % NSEC_PER_SEC;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
			    NULL);
			tick += period;
			if (stop)
				break;
		}
		t0 = period > 0 && do_top ? tick - period : now_ns();

		if (fd < 0 && (fd = connect_sock()) < 0) {
			(do_top ? &c->top : &c->snap)->errors++;
			fd = -1;
			usleep(10000);
			continue;
		}
		req.id = ++id;
		if (do_top) {
			/* unshared: an hour and a bit, never the same twice */
			if (unshared)
				tr.since_ns = 3600 * NSEC_PER_SEC +
				    (int64_t)((c->idx * 100000 + id) %
					3000000) *
					2 * NSEC_PER_SEC;
			req.op_case = VITALS__REQUEST__OP_TOP;
			req.top = &top;
		} else {
			req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
			req.snapshot = &snap;
		}
		r = roundtrip(fd, &req, NULL);
		lat_add_tick(do_top ? &c->top : &c->snap, now_ns() - t0, r,
		    period > 0 ? (int32_t)((t0 - start_ns) / period) : -1);
		if (r < 0 || reconnect) {
			close(fd);
			fd = -1;
		}
		do_top = !do_top;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

struct monitor {
	pthread_t th;
	uint64_t last_seq;
	unsigned windows;
	uint64_t late_max_ns, late_sum_ns, ticks;
	uint32_t late_ticks;
	Vitals__Response *last; /* the final health answer */
};

static void *
monitor_main(void *arg)
{
	struct monitor *m = arg;
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HealthRequest h = VITALS__HEALTH_REQUEST__INIT;
	int fd = connect_sock();

	req.version = 1;
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &h;
	while (fd >= 0) {
		Vitals__Response *r = NULL;
		const Vitals__Window *w;
		bool done = stop;

		req.id++;
		if (roundtrip(fd, &req, &r) != VITALS__STATUS__STATUS_OK) {
			if (r)
				vitals__response__free_unpacked(r, NULL);
			break;
		}
		w = r->health->last;
		if (w && w->seq != m->last_seq && w->health) {
			m->last_seq = w->seq;
			m->windows++;
			if (w->health->tick_late_ns_max > m->late_max_ns)
				m->late_max_ns = w->health->tick_late_ns_max;
			m->late_sum_ns += w->health->tick_late_ns_sum;
			m->ticks += w->samples;
			m->late_ticks += w->health->late_ticks;
		}
		if (m->last)
			vitals__response__free_unpacked(m->last, NULL);
		m->last = r;
		if (done)
			break;
		usleep(250000);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *name, struct client *cl, unsigned n, bool top, double secs)
{
	struct lat all = { 0 };
	uint64_t errors = 0, busy = 0;
	unsigned i;
	size_t k = 0;

	for (i = 0; i < n; i++) {
		struct lat *l = top ? &cl[i].top : &cl[i].snap;

		all.n += l->n;
		errors += l->errors;
		busy += l->busy;
	}
	if (all.n == 0) {
		printf("%-8s no answers (%llu errors)\n", name,
		    (unsigned long long)errors);
		return;
	}
	all.ns = malloc(all.n * sizeof(*all.ns));
	for (i = 0; i < n; i++) {
		struct lat *l = top ? &cl[i].top : &cl[i].snap;

		if (l->n)
			memcpy(all.ns + k, l->ns, l->n * sizeof(*l->ns));
		k += l->n;
	}
	qsort(all.ns, all.n, sizeof(*all.ns), cmp_i64);
#define PCT(p) ((double)all.ns[(size_t)((all.n - 1) * (p))] / 1e6)
	printf("%-8s %8zu answers %8.1f/s  p50 %7.2f ms  p90 %7.2f ms  "
	       "p99 %7.2f ms  max %7.2f ms  errors %llu (busy %llu)\n",
	    name, all.n, (double)all.n / secs, PCT(0.50), PCT(0.90), PCT(0.99),
	    (double)all.ns[all.n - 1] / 1e6, (unsigned long long)errors,
	    (unsigned long long)busy);
#undef PCT
	free(all.ns);
}

/* The store writer's own clocks (doc/storage.md, "What delays the
 * writer"): its longest operation and where the time went. */
static void
writer_line(const char *what, const Vitals__StoreOpTimes *t)
{
	const Vitals__StoreOpTime *w = t ? t->worst : NULL;

	if (w == NULL)
		return;
	printf("writer %s: %llu, longest %.3f ms = cpu %.3f + waiting for a "
	       "CPU %.3f + reader locks %.3f + other %.3f (checkpoint "
	       "%.3f); longest reader lock wait %.3f ms, longest CPU wait "
	       "%.3f ms, %llu delayed > 1 ms by a reader\n",
	    what, (unsigned long long)t->n, (double)w->wall_ns / 1e6,
	    (double)w->cpu_ns / 1e6, (double)w->runq_ns / 1e6,
	    (double)w->lock_ns / 1e6, (double)w->other_ns / 1e6,
	    (double)w->ckpt_ns / 1e6, (double)t->lock_max_ns / 1e6,
	    (double)t->runq_max_ns / 1e6, (unsigned long long)t->lock_over_1ms);
}

/*
 * Paced: the tops of every tick but the first, apart. The first burst
 * meets cold read connections (their page caches, decoded windows and
 * heap pages all made afresh: 10.4 and 14.6 ms for a first read against
 * 0.7-1.2 ms after, timed with uprobes on 5 Dec 2026); a
 * caller polling on a timer meets it once, and again after a read
 * connection's idle close (30 s without a read). Its slowest is printed
 * beside.
 */
static void
warm_line(struct client *cl, unsigned n, int64_t first_max)
{
	int64_t *v;
	size_t k = 0, j, tot = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		tot += cl[i].top.n;
	if (tot == 0 || (v = malloc(tot * sizeof(*v))) == NULL)
		return;
	for (i = 0; i < n; i++)
		for (j = 0; j < cl[i].top.n; j++)
			if (cl[i].top.tick[j] >= 1)
				v[k++] = cl[i].top.ns[j];
	if (k > 0) {
		qsort(v, k, sizeof(*v), cmp_i64);
#define PCT(p) ((double)v[(size_t)((k - 1) * (p))] / 1e6)
		printf(
		    "top20-warm (ticks after the first) %zu answers  p50 %.2f ms"
		    "  p90 %.2f ms  p99 %.2f ms  max %.2f ms; the first "
		    "tick's slowest %.2f ms\n",
		    k, PCT(0.50), PCT(0.90), PCT(0.99), (double)v[k - 1] / 1e6,
		    (double)first_max / 1e6);
#undef PCT
	}
	free(v);
}

/* Paced: the ticks whose slowest top took longest (a p99 over 32
 * callers per tick is the slowest burst's), and how many ticks had a top
 * over 20 ms. */
static void
report_ticks(struct client *cl, unsigned n)
{
	int64_t *mx;
	unsigned *over;
	int32_t nt = 0, t, worst[5];
	unsigned i, k, bad = 0;
	size_t j;

	for (i = 0; i < n; i++)
		for (j = 0; j < cl[i].top.n; j++)
			if (cl[i].top.tick[j] >= nt)
				nt = cl[i].top.tick[j] + 1;
	if (nt == 0 || (mx = calloc((size_t)nt, sizeof(*mx))) == NULL)
		return;
	if ((over = calloc((size_t)nt, sizeof(*over))) == NULL) {
		free(mx);
		return;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < cl[i].top.n; j++) {
			t = cl[i].top.tick[j];
			if (t < 0)
				continue;
			if (cl[i].top.ns[j] > mx[t])
				mx[t] = cl[i].top.ns[j];
			if (cl[i].top.ns[j] > 20 * NSEC_PER_MSEC)
				over[t]++;
		}
	for (t = 0; t < nt; t++)
		bad += over[t] > 0;
	printf("ticks: %d, %u with a top over 20 ms; slowest:", nt, bad);
	for (k = 0; k < 5 && k < (unsigned)nt; k++) {
		worst[k] = -1;
		for (t = 0; t < nt; t++) {
			unsigned q;

			for (q = 0; q < k && worst[q] != t; q++)
				;
			if (q == k && (worst[k] < 0 || mx[t] > mx[worst[k]]))
				worst[k] = t;
		}
		printf(" #%d %.1f ms (%u > 20 ms)", worst[k],
		    (double)mx[worst[k]] / 1e6, over[worst[k]]);
	}
	printf("\n");
	if (getenv("QL_TICKS") != NULL) {
		printf("per tick (slowest ms, tops > 20 ms):");
		for (t = 0; t < nt; t++)
			printf(" %d:%.1f/%u", t, (double)mx[t] / 1e6, over[t]);
		printf("\n");
	}
	warm_line(cl, n, mx[0]);
	free(mx);
	free(over);
}

static int
cmd_run(int argc, char **argv)
{
	unsigned nclients = argc > 3 ? (unsigned)atoi(argv[3]) : 32;
	unsigned secs = argc > 4 ? (unsigned)atoi(argv[4]) : 20;
	struct client *cl;
	struct monitor m = { 0 };
	const Vitals__ControlHealth *ch;
	int64_t t0, t1;
	unsigned i;

	sock_path = argv[2];
	for (i = 5; i < (unsigned)argc; i++) {
		if (!strcmp(argv[i], "reconnect"))
			reconnect = 1;
		else if (!strcmp(argv[i], "unshared"))
			unshared = 1;
		else if (!strncmp(argv[i], "paced=", 6))
			paced_hz = atof(argv[i] + 6);
	}
	if (nclients == 0 || secs == 0 ||
	    (cl = calloc(nclients, sizeof(*cl))) == NULL)
		return 2;
	pthread_create(&m.th, NULL, monitor_main, &m);
	t0 = now_ns();
	start_ns = t0 + 100 * NSEC_PER_MSEC; /* every client started by then */
	if (paced_hz > 0) /* for a profile's timestamps (perf -k monotonic) */
		printf("first tick at CLOCK_MONOTONIC %.6f s\n",
		    (double)start_ns / 1e9);
	for (i = 0; i < nclients; i++) {
		cl[i].idx = i;
		pthread_create(&cl[i].th, NULL, client_main, &cl[i]);
	}
	sleep(secs);
	stop = 1;
	for (i = 0; i < nclients; i++)
		pthread_join(cl[i].th, NULL);
	t1 = now_ns();
	pthread_join(m.th, NULL);

	if (paced_hz > 0)
		printf("paced: every client a top-20 then a summary %.2f "
		       "times a second, all on the same ticks\n",
		    paced_hz);
	printf("%u clients, %.1f s, %s, %s\n", nclients,
	    (double)(t1 - t0) / 1e9,
	    reconnect ? "a connection per request" :
			"one connection per client",
	    unshared ? "no read shared between "
		       "clients" :
		       "equal reads shared");
	report("summary", cl, nclients, false, (double)(t1 - t0) / 1e9);
	report("top20-1h", cl, nclients, true, (double)(t1 - t0) / 1e9);
	if (paced_hz > 0)
		report_ticks(cl, nclients);
	printf("sampling: %u windows closed meanwhile, %llu ticks, timer "
	       "lateness max %.3f ms, mean %.3f ms, late ticks %u\n",
	    m.windows, (unsigned long long)m.ticks, (double)m.late_max_ns / 1e6,
	    m.ticks ? (double)m.late_sum_ns / (double)m.ticks / 1e6 : 0.0,
	    m.late_ticks);
	if (m.last && m.last->health && (ch = m.last->health->control)) {
		printf(
		    "control: accepted %llu, requests %llu, store reads "
		    "%llu (slowest %.2f ms), answers shared %llu, busy %llu, "
		    "overflow-closed %llu, accept paused %llu\n",
		    (unsigned long long)ch->accepted,
		    (unsigned long long)ch->requests,
		    (unsigned long long)ch->queries,
		    (double)ch->query_ns_max / 1e6,
		    (unsigned long long)ch->queries_shared,
		    (unsigned long long)ch->queries_busy,
		    (unsigned long long)ch->overflow_closed,
		    (unsigned long long)ch->accept_paused);
		printf("read pool: %u threads, connections open %u (opened "
		       "%llu), warmed at start %llu (%.2f ms), "
		       "windows reused %llu, decoded %llu, memo hits %llu\n",
		    ch->query_threads, ch->readers_open,
		    (unsigned long long)ch->readers_opened,
		    (unsigned long long)ch->readers_warmed,
		    (double)ch->readers_warm_ns / 1e6,
		    (unsigned long long)ch->read_cache_hits,
		    (unsigned long long)ch->read_cache_misses,
		    (unsigned long long)ch->read_memo_hits);
		if (m.last->health->store)
			printf("store: %s, %llu bytes, commit max %.2f ms\n",
			    m.last->health->store->state,
			    (unsigned long long)m.last->health->store->db_bytes,
			    (double)m.last->health->store->commit_ns_max / 1e6);
		if (m.last->health->store) {
			const Vitals__StoreHealth *sh = m.last->health->store;

			writer_line("puts", sh->put_times);
			writer_line("passes", sh->pass_times);
			if (sh->move_waits && sh->read_waits)
				printf("main file locks: %llu moves, %llu "
				       "waited for readers (max %.3f ms); "
				       "%llu reads, %llu waited for a move "
				       "(max %.3f ms); spool %s\n",
				    (unsigned long long)sh->move_waits->n,
				    (unsigned long long)sh->move_waits->waited,
				    (double)sh->move_waits->max_ns / 1e6,
				    (unsigned long long)sh->read_waits->n,
				    (unsigned long long)sh->read_waits->waited,
				    (double)sh->read_waits->max_ns / 1e6,
				    sh->spool_on ? "on" : "off");
		}
	}
	if (m.last)
		vitals__response__free_unpacked(m.last, NULL);
	for (i = 0; i < nclients; i++) {
		free(cl[i].snap.ns);
		free(cl[i].top.ns);
		free(cl[i].snap.tick);
		free(cl[i].top.tick);
	}
	free(cl);
	return 0;
}

static int
cmd_fill(int argc, char **argv)
{
	double hours = argc > 3 ? atof(argv[3]) : 1.0;
	unsigned nprocs = argc > 4 ? (unsigned)atoi(argv[4]) : 300;
	unsigned nthreads = argc > 5 ? (unsigned)atoi(argv[5]) : 200;
	unsigned nwin = (unsigned)(hours * 360), i, k;
	int64_t wall = clock_ns(CLOCK_REALTIME),
		mono = clock_ns(CLOCK_MONOTONIC);
	struct store_opts o;
	struct store *s;
	int r;

	store_opts_default(&o);
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
		snprintf(w->boot_id, sizeof(w->boot_id), "bench-fill");
		w->hz = 100;
		w->interval_ms = 1000;
		w->mono_start_ns = mono - back;
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
			t.d_utime = (uint64_t)(random() % 200);
			t.d_stime = (uint64_t)(random() % 50);
			t.d_minflt = (uint64_t)(random() % 5000);
			t.d_majflt = (uint64_t)(random() % 5);
			t.samples = 10;
			t.wall_ns = 10 * NSEC_PER_SEC;
			t.total_ticks = 2000;
			t.norm_ticks = 1000;
			t.rss_pages_max = t.rss_pages_last = (uint64_t)(1000 +
			    random() % 100000);
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
	/* what the daemon's maintenance would have done by now: the span
	 * summaries a top-N over the hour reads */
	if ((r = store_maintain(s, wall)) < 0) {
		fprintf(stderr, "fill: maintain: %s\n", strerror(-r));
		return 1;
	}
	store_close(s);
	printf("filled %s: %u windows x (%u procs + %u threads)\n", argv[2],
	    nwin, nprocs, nthreads);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "fill"))
		return cmd_fill(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	fprintf(stderr,
	    "usage: query_latency fill DB [HOURS [PROCS "
	    "[THREADS]]]\n"
	    "       query_latency run SOCKET [CLIENTS [SECONDS "
	    "[reconnect] [unshared] [paced=HZ]]]\n");
	return 2;
}
