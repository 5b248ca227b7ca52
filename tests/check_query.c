/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The read pool (query.c, store_conn.c) on a real store file: a windows
 * read over a long range stops at its memory budget while it loads (peak
 * RSS measured) and gives the memory back; a flood of reads from one uid
 * gets STATUS_BUSY and does not hold up another uid's `top`; a write
 * transaction in progress on the writer's connection (a roll-up pass,
 * with the writer's lock held) does not block a read.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "frame.h"
#include "store/store_int.h"
#include "testutil.h"
#include "vitalsd.h"

#ifdef __SANITIZE_ADDRESS__
/* compiler-rt's allocator interface (sanitizer/allocator_interface.h,
 * which GCC does not install): release free and quarantined memory */
void __sanitizer_purge_allocator(void);
const char *__asan_default_options(void);

/* This suite measures the query's memory by RSS: with ASan's quarantine
 * of freed blocks RSS would measure ASan. Other suites keep it. */
const char *
__asan_default_options(void)
{
	return "quarantine_size_mb=0";
}
#endif

#define SEC NSEC_PER_SEC
#define MIB (1u << 20)
#define NWIN 1000 /* windows in the store */
#define NTASK 150 /* processes per window (and as many threads) */
#define FRAME_MAX (1u << 20)
#define BUDGET (4u * MIB) /* the default: max_output_bytes */

static char *dir;
static char db[PATH_MAX];
static int64_t t_first, t_last; /* wall starts of the oldest, newest */

/* ------------------------------------------------------------- the store */

static struct window *
mkwin(uint64_t seq, int64_t wall)
{
	struct window *w = window_new(seq, 0);
	struct window_task t;
	unsigned i;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id),
	    "8c1e7a6c-3f9b-4c2e-9a47-0d5f1e2b3c4d");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)(seq + 1) * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + 10 * SEC;
	w->samples = w->samples_valid = 10;
	for (i = 0; i < 2 * NTASK; i++) {
		memset(&t, 0, sizeof(t));
		t.id = 100 + (int32_t)(i % NTASK);
		t.tgid = t.id;
		t.starttime = 5;
		t.uid = 10000 + (uint32_t)t.id;
		snprintf(t.comm, sizeof(t.comm), "c%d", t.id);
		window_task_set_namef(&t, "com.example.app%d", t.id);
		t.d_utime = 1 + (seq * 7 + i) % 50;
		t.d_stime = 1 + i % 3;
		t.samples = 10;
		t.wall_ns = 10 * SEC;
		t.rss_pages_max = 1000 + i;
		ck_assert_int_eq(window_add_task(w, i >= NTASK, &t), 0);
	}
	return w;
}

static struct store *
make_store(unsigned nwin)
{
	struct store_opts o;
	struct store *s;
	unsigned k;

	store_opts_default(&o);
	o.max_bytes = 512ull * MIB;
	/* rows edited in place by their table's name: level 0 in the
	 * main tables, not in tables per span (store_span.c) */
	o.no_spans = true;
	ck_assert_int_eq(store_open(db, &o, &s), 0);
	t_last = (clock_ns(CLOCK_REALTIME) / SEC - 60) * SEC;
	t_first = t_last - (int64_t)(nwin - 1) * 10 * SEC;
	for (k = 0; k < nwin; k++) {
		struct window *w = mkwin(k, t_first + (int64_t)k * 10 * SEC);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	return s;
}

static void
setup(void)
{
	dir = tu_mkdtemp_db("query", db, sizeof(db));
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

/* ------------------------------------------------------------ memory */

static long
status_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0) {
			v = strtol(line + strlen(key) + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The peak RSS from now on (VmHWM restarts at the current RSS). */
static void
reset_peak(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "5", 1), 1);
	close(fd);
}

/* ------------------------------------------------------------ the pool */

struct answer {
	uint64_t conn_id;
	int status;
	int64_t at_ns;
	Vitals__Response *resp; /* kept when keep is set */
};

struct harness {
	struct event_base *base;
	struct query *q;
	struct answer a[4096];
	unsigned na;
	bool keep;
};

static void
done_cb(uint64_t conn_id, uint32_t tag, uint8_t *frame, size_t len, void *arg)
{
	struct harness *h = arg;
	struct answer *a = &h->a[h->na % 4096];
	Vitals__Response *r = NULL;
	uint32_t plen;

	(void)tag;
	ck_assert_ptr_nonnull(frame);
	ck_assert_int_eq(frame_header(frame, FRAME_MAX + 64, &plen), 0);
	ck_assert_uint_eq(plen + 4, len);
	r = frame_unpack_response(frame + 4, plen);
	ck_assert_ptr_nonnull(r);
	free(frame);
	a->conn_id = conn_id;
	a->status = r->status;
	a->at_ns = clock_ns(CLOCK_MONOTONIC);
	if (h->keep) {
		a->resp = r;
	} else {
		a->resp = NULL;
		vitals__response__free_unpacked(r, NULL);
	}
	h->na++;
}

/* The stats once every thread has made its warm read (10 s at most). */
static void
warmed_stats(struct query *q, unsigned n, struct control_stats *st)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) + 10 * SEC;

	for (;;) {
		memset(st, 0, sizeof(*st));
		query_get_stats(q, st);
		if (st->readers_warmed >= n || clock_ns(CLOCK_MONOTONIC) > end)
			break;
		tu_sleep_ms(5);
	}
}

/* A pool on s, its threads' warm reads done (as a daemon's pool is by
 * the time callers come): what a test measures is its own reads. */
static void
pool_new(struct harness *h, struct store *s, const struct query_opts *o)
{
	unsigned n = o->no_warm ? 0 : o->threads ? o->threads : 2;
	struct control_stats st;

	memset(h, 0, sizeof(*h));
	ck_assert_ptr_nonnull(h->base = event_base_new());
	event_base_priority_init(h->base, 2);
	ck_assert_int_eq(query_new_pool(h->base, s, o, 1, done_cb, h, &h->q),
	    0);
	warmed_stats(h->q, n, &st);
	ck_assert_uint_eq(st.readers_warmed, n);
}

static void
pool_free(struct harness *h)
{
	unsigned i;

	h->q = query_free(h->q);
	event_base_free(h->base);
	for (i = 0; i < h->na && i < 4096; i++)
		if (h->a[i].resp)
			vitals__response__free_unpacked(h->a[i].resp, NULL);
}

/* Run the loop until n answers came (or 30 s passed). */
static void
wait_answers(struct harness *h, unsigned n)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) + 30 * SEC;

	while (h->na < n && clock_ns(CLOCK_MONOTONIC) < end)
		event_base_loop(h->base, EVLOOP_ONCE);
	ck_assert_uint_ge(h->na, n);
}

static struct rpc_query
windows_query(int64_t from, int64_t to, unsigned max)
{
	struct rpc_query rq = { .op = RPC_Q_WINDOWS, .hz = 100 };

	rq.from_wall_ns = from;
	rq.to_wall_ns = to;
	rq.max_windows = max;
	rq.with_tasks = true;
	return rq;
}

static struct rpc_query
top_query(void)
{
	struct rpc_query rq = { .op = RPC_Q_TOP, .hz = 100, .n = 20 };

	rq.to_wall_ns = t_last + 10 * SEC;
	rq.from_wall_ns = rq.to_wall_ns - 600 * SEC;
	rq.metric = METRIC_CPU;
	return rq;
}

/*
 * The attack: every window of a long range with its tasks, max_windows
 * 100000. Without a budget all of them load before the answer is found
 * too large; with one the read stops loading at the budget and answers
 * the newest windows that fit, saying it was cut and how far it got.
 */
START_TEST(test_budget_bounds_memory)
{
	struct store *s = make_store(NWIN);
	struct query_opts o = { .threads = 2,
		.max_frame = FRAME_MAX,
		.budget = BUDGET };
	struct rpc_query rq = windows_query(t_first, t_last + 10 * SEC, 100000);
	const Vitals__WindowList *wl;
	struct harness h;
	long base_kb, peak_kb, after_kb, old_peak_kb = 0;
	uint64_t loaded;
	size_t nw;
	int st, p[2];
	pid_t pid;

	/* The unbudgeted read, as it was, in a child: its peak for the
	 * report (and the proof the store reproduces the attack). */
	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		uint8_t *f = NULL;
		size_t len;
		long b;

		b = status_kb("VmRSS:");
		reset_peak();
		if (query_run(s, &rq, FRAME_MAX, &f, &len) < 0)
			_exit(1);
		b = status_kb("VmHWM:") - b;
		(void)!write(p[1], &b, sizeof(b));
		_exit(0);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(read(p[0], &old_peak_kb, sizeof(old_peak_kb)),
	    sizeof(old_peak_kb));
	close(p[0]);
	close(p[1]);

	pool_new(&h, s, &o);
	h.keep = true;
#ifdef __SANITIZE_ADDRESS__
	__sanitizer_purge_allocator(); /* the same footing as "after" */
#endif
	base_kb = status_kb("VmRSS:");
	reset_peak();
	ck_assert_int_eq(query_submit_uid(h.q, 1, 1000, 0, &rq), 0);
	wait_answers(&h, 1);
	peak_kb = status_kb("VmHWM:");
	ck_assert_int_eq(h.a[0].status, VITALS__STATUS__STATUS_OK);
	wl = h.a[0].resp->windows;
	ck_assert_ptr_nonnull(wl);
	ck_assert(wl->truncated);
	ck_assert(wl->budget_exhausted);
	ck_assert_uint_eq(wl->budget_bytes, BUDGET);
	/* loading stopped at the budget: over it by one window at most */
	ck_assert_uint_gt(wl->loaded_bytes, BUDGET);
	ck_assert_uint_lt(wl->loaded_bytes, BUDGET + MIB / 4);
	ck_assert_uint_ge(wl->n_windows, 1);
	ck_assert_uint_lt(wl->n_windows, NWIN);
	/* the newest windows: the next page is asked with an earlier `to` */
	ck_assert_int_eq(wl->windows[wl->n_windows - 1]->wall_start_ns, t_last);
	nw = wl->n_windows;
	loaded = wl->loaded_bytes;
	vitals__response__free_unpacked(h.a[0].resp, NULL);
	h.a[0].resp = NULL;
#ifdef __SANITIZE_ADDRESS__
	/* ASan keeps freed blocks in its quarantine: hand them back first
	 * (as before base_kb), or "given back" measures ASan */
	__sanitizer_purge_allocator();
#endif
	after_kb = status_kb("VmRSS:");
	fprintf(stderr,
	    "windows x%u with tasks, max_windows 100000: "
	    "unbudgeted peak +%ld KiB; budget %u KiB: %zu windows, "
	    "%llu bytes loaded, peak +%ld KiB, after +%ld KiB\n",
	    NWIN, old_peak_kb, BUDGET / 1024, nw, (unsigned long long)loaded,
	    peak_kb - base_kb, after_kb - base_kb);
	/* the reproduction: without a budget the read costs tens of MB */
	ck_assert_int_gt(old_peak_kb, 40 * 1024);
	/* with one: a few budgets at most, and given back */
	ck_assert_int_lt(peak_kb - base_kb, 16 * 1024);
	ck_assert_int_lt(after_kb - base_kb, 8 * 1024);
	pool_free(&h);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------ fairness */

#define FLOOD_UID 1000
#define READER_UID 2000
#define TOPS 40
#define READER_CONN (1ull << 40)

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One uid keeps its queue full of distinct windows reads (each tens of
 * ms); another asks `top` every 20 ms. The flood is refused with BUSY
 * past its queue; the other's answers stay prompt: at most a read in
 * progress ahead of each.
 */
START_TEST(test_flood_does_not_starve)
{
	struct store *s = make_store(300);
	struct query_opts o = { .threads = 2,
		.queue_max = 64,
		.uid_queue = 8,
		.max_frame = FRAME_MAX,
		.budget = BUDGET };
	int64_t t0[TOPS], lat[TOPS], next_top = 0, now, alone;
	struct rpc_query top = top_query();
	unsigned busy = 0, flood = 0, tops = 0, got = 0, seen = 0, i;
	struct harness h;

	pool_new(&h, s, &o);
	/* alone first: what a top costs here */
	for (i = 0; i < 5; i++) {
		top.id = 100 + i;
		t0[i] = clock_ns(CLOCK_MONOTONIC);
		ck_assert_int_eq(query_submit_uid(h.q, 1, READER_UID, 0, &top),
		    0);
		wait_answers(&h, i + 1);
		lat[i] = h.a[i].at_ns - t0[i];
	}
	qsort(lat, 5, sizeof(lat[0]), cmp_i64);
	alone = lat[2];
	seen = h.na;
	got = 0;
	while (got < TOPS) {
		now = clock_ns(CLOCK_MONOTONIC);
		for (;;) { /* keep the flood's queue full */
			struct rpc_query rq = windows_query(t_first +
				(int64_t)(flood % 97) * SEC,
			    t_last, 10 + flood % 30);
			int r = query_submit_uid(h.q, 1 + flood, FLOOD_UID, 0,
			    &rq);

			if (r == -EBUSY) {
				busy++;
				break;
			}
			ck_assert_int_eq(r, 0);
			flood++;
		}
		if (tops < TOPS && tops == got && now >= next_top) {
			top.id = tops;
			t0[tops] = now;
			ck_assert_int_eq(query_submit_uid(h.q,
					     READER_CONN + tops, READER_UID, 0,
					     &top),
			    0);
			tops++;
			next_top = now + 20 * NSEC_PER_MSEC;
		}
		event_base_loop(h.base, EVLOOP_ONCE);
		for (; seen < h.na; seen++) {
			struct answer *a = &h.a[seen % 4096];

			if (a->conn_id < READER_CONN)
				continue;
			ck_assert_int_eq(a->status, VITALS__STATUS__STATUS_OK);
			i = (unsigned)(a->conn_id - READER_CONN);
			lat[i] = a->at_ns - t0[i];
			got++;
		}
	}
	qsort(lat, TOPS, sizeof(lat[0]), cmp_i64);
	fprintf(stderr,
	    "top alone: %.1f ms; flood: %u reads queued, %u BUSY; "
	    "the other uid's top: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
	    alone / 1e6, flood, busy, lat[TOPS / 2] / 1e6,
	    lat[TOPS * 99 / 100] / 1e6, lat[TOPS - 1] / 1e6);
	ck_assert_uint_gt(busy, 0);
	ck_assert_int_lt(lat[TOPS * 99 / 100], 500 * NSEC_PER_MSEC);
	pool_free(&h);
	store_close(s);
}
END_TEST

/* The queued reads, once the pool has taken what it will (<= 15 s: the
 * read threads run at nice 10, and beside CI's parallel ASan suites on two
 * CPUs one took more than 2 s to take its read off the queue). */
static unsigned
queued_settled(struct query *q, unsigned want)
{
	struct control_stats st;
	int64_t end = clock_ns(CLOCK_MONOTONIC) + 15 * SEC;

	do {
		memset(&st, 0, sizeof(st));
		query_get_stats(q, &st);
		if (st.queries_queued == want)
			break;
		usleep(1000);
	} while (clock_ns(CLOCK_MONOTONIC) < end);
	return (unsigned)st.queries_queued;
}

/*
 * One uid alone has the whole pool: its two reads both leave the queue
 * (held before they run); a second uid's read waits for a thread, and the
 * first uid's next read waits behind it; released, every read answers.
 */
START_TEST(test_lone_uid_whole_pool)
{
	struct store *s = make_store(30);
	struct query_opts o = { .threads = 2,
		.queue_max = 64,
		.uid_queue = 8,
		.max_frame = FRAME_MAX,
		.budget = BUDGET };
	struct rpc_query rq;
	struct harness h;
	unsigned i;

	pool_new(&h, s, &o);
	query_hold(h.q, true);
	for (i = 0; i < 2; i++) {
		rq = windows_query(t_first + (int64_t)i * SEC, t_last, 5);
		rq.id = i;
		ck_assert_int_eq(query_submit_uid(h.q, 1 + i, FLOOD_UID, 0,
				     &rq),
		    0);
	}
	ck_assert_uint_eq(queued_settled(h.q, 0), 0);
	rq = windows_query(t_first + 5 * SEC, t_last, 5);
	rq.id = 5;
	ck_assert_int_eq(query_submit_uid(h.q, 5, READER_UID, 0, &rq), 0);
	rq = windows_query(t_first + 3 * SEC, t_last, 5);
	rq.id = 3;
	ck_assert_int_eq(query_submit_uid(h.q, 3, FLOOD_UID, 0, &rq), 0);
	ck_assert_uint_eq(queued_settled(h.q, 2), 2);
	query_hold(h.q, false);
	wait_answers(&h, 4);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(h.a[i].status, VITALS__STATUS__STATUS_OK);
	pool_free(&h);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------ roll-ups */

struct holder {
	struct store *s;
	volatile bool holding;
	int64_t rows_before;
};

/* A roll-up pass as the writer runs one: its lock held, a write
 * transaction open on its connection, rows deleted, for 1.5 s. */
static void *
holder_main(void *arg)
{
	struct holder *hd = arg;

	pthread_mutex_lock(&hd->s->lock);
	ck_assert_int_eq(
	    sqlite3_exec(hd->s->db,
		"BEGIN IMMEDIATE;"
		" DELETE FROM window_tasks WHERE window_id IN"
		" (SELECT id FROM windows ORDER BY id DESC LIMIT 100)",
		NULL, NULL, NULL),
	    SQLITE_OK);
	hd->holding = true;
	tu_sleep_ms(1500);
	sqlite3_exec(hd->s->db, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&hd->s->lock);
	return NULL;
}

START_TEST(test_rollup_does_not_block_reads)
{
	struct store *s = make_store(120);
	struct query_opts o = { .threads = 2,
		.max_frame = FRAME_MAX,
		.budget = BUDGET };
	struct rpc_query top = top_query();
	const Vitals__TaskList *tl;
	struct holder hd = { .s = s };
	struct harness h;
	pthread_t th;
	int64_t t0, ns;

	pool_new(&h, s, &o);
	h.keep = true;
	ck_assert_int_eq(pthread_create(&th, NULL, holder_main, &hd), 0);
	while (!hd.holding)
		tu_sleep_ms(5);
	t0 = clock_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(query_submit_uid(h.q, 1, READER_UID, 0, &top), 0);
	wait_answers(&h, 1);
	ns = h.a[0].at_ns - t0;
	fprintf(stderr, "top during a 1.5 s write transaction: %.1f ms\n",
	    ns / 1e6);
	ck_assert_int_eq(h.a[0].status, VITALS__STATUS__STATUS_OK);
	/* the snapshot before the pass: every task still there */
	tl = h.a[0].resp->top;
	ck_assert_ptr_nonnull(tl);
	ck_assert_uint_eq(tl->n_tasks, 20);
	ck_assert_int_lt(ns, 300 * NSEC_PER_MSEC);
	ck_assert(hd.holding);
	pthread_join(th, NULL);
	pool_free(&h);
	store_close(s);
}
END_TEST

/* A heapprofd list runs on the pool too (never on the loop). */
START_TEST(test_hp_list_on_pool)
{
	struct store *s = make_store(1);
	struct query_opts o = { .threads = 2, .max_frame = FRAME_MAX };
	struct rpc_query rq = { .op = RPC_Q_HP_LIST, .n = 10, .id = 7 };
	struct harness h;

	pool_new(&h, s, &o);
	h.keep = true;
	ck_assert_int_eq(query_submit_uid(h.q, 1, READER_UID, 0, &rq), 0);
	wait_answers(&h, 1);
	ck_assert_int_eq(h.a[0].status, VITALS__STATUS__STATUS_OK);
	ck_assert_int_eq(h.a[0].resp->result_case,
	    VITALS__RESPONSE__RESULT_HEAPPROFD_LIST);
	ck_assert_uint_eq(h.a[0].resp->id, 7);
	pool_free(&h);
	store_close(s);
}
END_TEST

/*
 * An idle thread releases its connection (query_opts.idle_s, 30 s by
 * default): counted, its caches given back, its file kept open; the next
 * read answers as before without opening it again (readers_opened).
 */
START_TEST(test_idle_reader_releases)
{
	struct store *s = make_store(1);
	struct query_opts o = { .threads = 2,
		.max_frame = FRAME_MAX,
		.idle_s = 1 };
	struct rpc_query rq = { .op = RPC_Q_HP_LIST, .n = 10, .id = 7 };
	struct control_stats st;
	struct harness h;
	uint64_t closed;

	pool_new(&h, s, &o);
	h.keep = true;
	memset(&st, 0, sizeof(st));
	query_get_stats(h.q, &st);
	ck_assert_uint_eq(st.readers_idle_closed, 0);
	/* both threads opened theirs at the start: both go */
	usleep(2500 * 1000);
	query_get_stats(h.q, &st);
	ck_assert_uint_eq(st.readers_idle_closed, 2);
	ck_assert_uint_eq(st.readers_opened, 2); /* each once, at start */
	ck_assert_uint_eq(st.rc_bytes, 0);
	closed = st.readers_idle_closed;
	/* a released connection: the read answers on it, opening nothing */
	ck_assert_int_eq(query_submit_uid(h.q, 1, READER_UID, 0, &rq), 0);
	wait_answers(&h, 1);
	ck_assert_int_eq(h.a[0].status, VITALS__STATUS__STATUS_OK);
	ck_assert_int_eq(h.a[0].resp->result_case,
	    VITALS__RESPONSE__RESULT_HEAPPROFD_LIST);
	query_get_stats(h.q, &st);
	ck_assert_uint_eq(st.readers_opened, 2);
	/* and releases it again once idle (only the thread that read) */
	usleep(2500 * 1000);
	query_get_stats(h.q, &st);
	ck_assert_uint_eq(st.readers_idle_closed, closed + 1);
	pool_free(&h);
	store_close(s);
}
END_TEST

/*
 * Each thread warms its connection before its first job: a top-20 of
 * the last hour decodes the windows into the connection's cache, so the
 * first caller's top over the same windows decodes none. Without the
 * warm read (no_warm) that caller's read is the one that decodes them.
 */
START_TEST(test_pool_warmed_at_start)
{
	struct store *s = make_store(60);
	struct query_opts o = { .threads = 2, .max_frame = FRAME_MAX };
	struct rpc_query rq = { .op = RPC_Q_TOP, .hz = 100, .n = 20 };
	struct control_stats st, st2;
	struct harness h;
	unsigned pass;

	rq.to_wall_ns = clock_ns(CLOCK_REALTIME);
	rq.from_wall_ns = rq.to_wall_ns - 3600 * SEC;
	rq.metric = METRIC_CPU;
	for (pass = 0; pass < 2; pass++) {
		o.no_warm = pass == 1;
		pool_new(&h, s, &o); /* its warm reads done, if any */
		h.keep = true;
		memset(&st, 0, sizeof(st));
		query_get_stats(h.q, &st);
		ck_assert_uint_eq(st.queries, 0); /* no caller's read */
		if (!o.no_warm) {
			ck_assert_uint_eq(st.readers_warmed, 2);
			ck_assert_uint_gt(st.readers_warm_ns, 0);
			/* every window decoded by each connection */
			ck_assert_uint_eq(st.rc_misses, 2 * 60);
			ck_assert_uint_gt(st.rc_bytes, 0);
		} else {
			ck_assert_uint_eq(st.readers_warmed, 0);
			ck_assert_uint_eq(st.readers_warm_ns, 0);
			ck_assert_uint_eq(st.rc_misses, 0);
		}
		ck_assert_int_eq(query_submit_uid(h.q, 1, READER_UID, 0, &rq),
		    0);
		wait_answers(&h, 1);
		ck_assert_int_eq(h.a[0].status, VITALS__STATUS__STATUS_OK);
		ck_assert_uint_eq(h.a[0].resp->top->n_tasks, 20);
		memset(&st2, 0, sizeof(st2));
		query_get_stats(h.q, &st2);
		ck_assert_uint_eq(st2.queries, 1);
		ck_assert_uint_eq(st2.readers_warmed, st.readers_warmed);
		if (!o.no_warm) /* a warm connection: nothing decoded */
			ck_assert_uint_eq(st2.rc_misses, st.rc_misses);
		else /* a cold one decodes every window */
			ck_assert_uint_eq(st2.rc_misses, 60);
		pool_free(&h);
	}
	store_close(s);
}
END_TEST

/*
 * Without the warm read (the daemon's default, query_warm = 0) no thread
 * opens the store until a read needs it: none at start; reads one after
 * the other all run on the first thread's connection, the other thread
 * leaving them to it; two reads at once open the second.
 */
START_TEST(test_pool_opens_on_demand)
{
	struct store *s = make_store(30);
	struct query_opts o = { .threads = 2,
		.max_frame = FRAME_MAX,
		.no_warm = true };
	struct rpc_query rq = top_query();
	struct control_stats st;
	struct harness h;
	unsigned i;

	pool_new(&h, s, &o);
	memset(&st, 0, sizeof(st));
	query_get_stats(h.q, &st);
	ck_assert_uint_eq(st.readers_opened, 0);
	for (i = 0; i < 6; i++) {
		rq.n = 10 + i; /* no answer another's */
		rq.id = i;
		ck_assert_int_eq(query_submit_uid(h.q, 1 + i, READER_UID, 0,
				     &rq),
		    0);
		wait_answers(&h, i + 1);
		ck_assert_int_eq(h.a[i].status, VITALS__STATUS__STATUS_OK);
		query_get_stats(h.q, &st);
		ck_assert_uint_eq(st.queries, i + 1);
		ck_assert_uint_eq(st.readers_opened, 1);
	}
	/* two at once: the first thread holds one, the other opens */
	query_hold(h.q, true);
	for (i = 0; i < 2; i++) {
		rq.n = 30 + i;
		rq.id = 10 + i;
		ck_assert_int_eq(query_submit_uid(h.q, 10 + i, READER_UID + i,
				     0, &rq),
		    0);
	}
	ck_assert_uint_eq(queued_settled(h.q, 0), 0);
	query_hold(h.q, false);
	wait_answers(&h, 8);
	for (i = 6; i < 8; i++)
		ck_assert_int_eq(h.a[i].status, VITALS__STATUS__STATUS_OK);
	query_get_stats(h.q, &st);
	ck_assert_uint_eq(st.readers_opened, 2);
	ck_assert_uint_eq(st.readers_warmed, 0);
	pool_free(&h);
	store_close(s);
}
END_TEST

/*
 * query_warm_wait (set-up's last pageout runs after it): it returns once
 * every thread's warm read has ended, so the stats read right after show
 * both, with no polling; with no_warm, or no time to wait, it returns at
 * once.
 */
START_TEST(test_warm_wait)
{
	struct store *s = make_store(60);
	struct query_opts o = { .threads = 2, .max_frame = FRAME_MAX };
	struct control_stats st;
	struct harness h;
	unsigned pass;
	int64_t t0;

	for (pass = 0; pass < 3; pass++) {
		memset(&h, 0, sizeof(h));
		o.no_warm = pass == 1;
		ck_assert_ptr_nonnull(h.base = event_base_new());
		event_base_priority_init(h.base, 2);
		ck_assert_int_eq(query_new_pool(h.base, s, &o, 1, done_cb, &h,
				     &h.q),
		    0);
		t0 = clock_ns(CLOCK_MONOTONIC);
		query_warm_wait(h.q, pass == 2 ? 0 : 30 * SEC);
		memset(&st, 0, sizeof(st));
		query_get_stats(h.q, &st);
		if (pass == 0) {
			ck_assert_uint_eq(st.readers_warmed, 2);
			ck_assert_uint_eq(st.rc_misses, 2 * 60);
		} else {
			/* no warm read, or none waited for: back at once */
			ck_assert_int_lt(clock_ns(CLOCK_MONOTONIC) - t0,
			    100 * (SEC / 1000));
			if (pass == 1)
				ck_assert_uint_eq(st.readers_warmed, 0);
		}
		pool_free(&h);
	}
	store_close(s);
}
END_TEST

static Suite *
query_suite(void)
{
	Suite *su = suite_create("query");
	TCase *tc = tcase_create("pool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_budget_bounds_memory);
	tcase_add_test(tc, test_flood_does_not_starve);
	tcase_add_test(tc, test_lone_uid_whole_pool);
	tcase_add_test(tc, test_rollup_does_not_block_reads);
	tcase_add_test(tc, test_hp_list_on_pool);
	tcase_add_test(tc, test_idle_reader_releases);
	tcase_add_test(tc, test_pool_warmed_at_start);
	tcase_add_test(tc, test_pool_opens_on_demand);
	tcase_add_test(tc, test_warm_wait);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	return tu_run(query_suite());
}
