/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control plane's store queries (query.c) against a real database of
 * synthetic windows (tests/lib/rpc_fix.c), both synchronously and through
 * the query thread and an event loop. check_rpc.c has the roles, request
 * validation and in-memory answers.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "frame.h"
#include "rpc/rpc_int.h"
#include "rpc_fix.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define MAXF VITALS_FRAME_MAX_DEFAULT

/* ---------------------------------------------------------- queries */

static char *qdir;
static struct store *qstore;
static const int64_t T0 = 1700000010LL * SEC; /* a multiple of 30 s */

static void
q_setup(void)
{
	struct store_opts o;
	char path[PATH_MAX];
	uint64_t i;

	qdir = tu_mkdtemp("rpc");
	snprintf(path, sizeof(path), "%s/vitals.db", qdir);
	store_opts_default(&o);
	o.retain_s = INT64_MAX / NSEC_PER_SEC / 2;
	ck_assert_int_eq(store_open(path, &o, &qstore), 0);
	/* six 10 s windows from T0 */
	for (i = 0; i < 6; i++) {
		struct window *w = rpcfix_window(i + 1,
		    T0 + (int64_t)i * 10 * SEC);

		ck_assert_int_eq(store_put(qstore, w), 0);
		window_free(w);
	}
}

static void
q_teardown(void)
{
	store_close(qstore);
	tu_rmtree(qdir);
	free(qdir);
}

static Vitals__Response *
run_query(const struct rpc_query *q)
{
	uint8_t *frame;
	size_t len;
	uint32_t plen;
	Vitals__Response *resp;

	ck_assert_int_eq(query_run(qstore, q, MAXF, &frame, &len), 0);
	ck_assert_int_eq(frame_header(frame, MAXF, &plen), 0);
	resp = frame_unpack_response(frame + VITALS_FRAME_HDR, plen);
	ck_assert_ptr_nonnull(resp);
	free(frame);
	ck_assert_uint_eq(resp->id, q->id);
	return resp;
}

/*
 * A process with no row in the range: from the store, when rows of the same
 * instance lie before and after it (it lived through, idle), its identity
 * and zeros; NOT_FOUND when the earlier rows end in its exit, or when only
 * one side has rows. (The daemon looks in /proc first: check_client_daemon.)
 */
START_TEST(test_query_quiet_process)
{
	struct rpc_query q = { .id = 22,
		.op = RPC_Q_PROCESS,
		.pid = 7,
		.from_wall_ns = T0 + 110 * SEC,
		.to_wall_ns = T0 + 120 * SEC,
		.hz = 100 };
	const Vitals__Task *t;
	Vitals__Response *resp;
	struct window *w;
	size_t i;

	/* windows at +100 s and +130 s: nothing between +110 and +130 */
	w = rpcfix_window(7, T0 + 100 * SEC);
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);
	w = rpcfix_window(8, T0 + 130 * SEC);
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);

	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->process->n_history, 0);
	ck_assert_ptr_nonnull(t = resp->process->identity);
	ck_assert_str_eq(resp->process->identity_source, "store");
	ck_assert_int_eq(t->id, 7);
	ck_assert_int_eq(t->tgid, 7);
	ck_assert_uint_eq(t->starttime, 5007);
	ck_assert_uint_eq(t->uid, 10007);
	ck_assert_str_eq(t->comm, "proc7");
	ck_assert_uint_eq(t->d_utime + t->d_stime + t->d_minflt + t->d_majflt,
	    0);
	ck_assert_uint_eq(t->samples, 0);
	vitals__response__free_unpacked(resp, NULL);

	/* another instance of the pid is not it */
	q.starttime = 5008;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);
	q.starttime = 0;

	/* after the last row: only one side */
	q.from_wall_ns = T0 + 150 * SEC;
	q.to_wall_ns = T0 + 160 * SEC;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);

	/* its last row before the gap says it exited */
	w = rpcfix_window(9, T0 + 200 * SEC);
	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].id == 7)
			w->procs[i].exited = true;
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);
	w = rpcfix_window(10, T0 + 230 * SEC);
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);
	q.from_wall_ns = T0 + 210 * SEC;
	q.to_wall_ns = T0 + 220 * SEC;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

START_TEST(test_query_run)
{
	struct rpc_query q = { .id = 21,
		.from_wall_ns = T0,
		.to_wall_ns = T0 + 60 * SEC,
		.hz = 100 };
	Vitals__Response *resp;
	size_t i;

	q.op = RPC_Q_TOP;
	q.metric = METRIC_CPU;
	q.n = 5;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->top->n_tasks, 5);
	ck_assert_uint_eq(resp->top->hz, 100);
	ck_assert_int_eq(resp->top->from_wall_ns, T0);
	/* pid 30: (87 + 43) ticks in each of 6 windows */
	ck_assert_int_eq(resp->top->tasks[0]->id, 30);
	ck_assert_uint_eq(resp->top->tasks[0]->d_utime, 6 * 87);
	ck_assert_uint_eq(resp->top->tasks[0]->d_stime, 6 * 43);
	ck_assert_str_eq(resp->top->tasks[0]->comm, "proc30");
	vitals__response__free_unpacked(resp, NULL);

	q.threads = true;
	q.metric = METRIC_MINFLT;
	resp = run_query(&q);
	ck_assert_int_eq(resp->top->tasks[0]->id, 1059);
	ck_assert_int_eq(resp->top->tasks[0]->tgid, 30);
	vitals__response__free_unpacked(resp, NULL);

	q.op = RPC_Q_PROCESS;
	q.pid = 7;
	q.threads = true;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->process->n_history, 6);
	ck_assert_uint_eq(resp->process->n_threads, 12);
	for (i = 0; i < resp->process->n_threads; i++)
		ck_assert_int_eq(resp->process->threads[i]->task->tgid, 7);
	ck_assert_int_eq(resp->process->history[5]->wall_start_ns,
	    T0 + 50 * SEC);
	vitals__response__free_unpacked(resp, NULL);
	q.threads = false;
	resp = run_query(&q);
	ck_assert_uint_eq(resp->process->n_threads, 0);
	vitals__response__free_unpacked(resp, NULL);

	q.pid = 31337;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);

	q.op = RPC_Q_WINDOWS;
	q.max_windows = 4;
	q.with_tasks = true;
	q.top_n = 3;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	/* the newest four; more matched */
	ck_assert_uint_eq(resp->windows->n_windows, 4);
	ck_assert(resp->windows->truncated);
	ck_assert_int_eq(resp->windows->windows[3]->wall_start_ns,
	    T0 + 50 * SEC);
	ck_assert_uint_eq(resp->windows->windows[0]->n_procs, 3);
	ck_assert_uint_eq(resp->windows->windows[0]->nprocs_total, 31);
	vitals__response__free_unpacked(resp, NULL);
	/* granularity 30 s: two merged buckets */
	q.granularity_s = 30;
	q.with_tasks = false;
	resp = run_query(&q);
	ck_assert_uint_eq(resp->windows->n_windows, 2);
	ck_assert(!resp->windows->truncated);
	ck_assert_uint_eq(resp->windows->windows[0]->samples, 30);
	ck_assert_uint_eq(resp->windows->windows[0]->n_procs, 0);
	vitals__response__free_unpacked(resp, NULL);

	/* too much for the frame limit: the newest windows that fit, cut
	 * and said so; not even the newest: TOO_LARGE */
	q.granularity_s = 0;
	q.with_tasks = true;
	q.top_n = 0;
	{
		uint8_t *frame;
		size_t len;
		uint32_t plen;

		ck_assert_int_eq(query_run(qstore, &q, 8192, &frame, &len), 0);
		ck_assert_int_eq(frame_header(frame, 8192, &plen), 0);
		resp = frame_unpack_response(frame + 4, plen);
		free(frame);
		ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
		ck_assert_uint_ge(resp->windows->n_windows, 1);
		ck_assert_uint_lt(resp->windows->n_windows, 4);
		ck_assert(resp->windows->truncated);
		ck_assert(resp->windows->budget_exhausted);
		ck_assert_uint_eq(resp->windows->budget_bytes, 0);
		ck_assert_int_eq(resp->windows
				     ->windows[resp->windows->n_windows - 1]
				     ->wall_start_ns,
		    T0 + 50 * SEC);
		vitals__response__free_unpacked(resp, NULL);

		ck_assert_int_eq(query_run(qstore, &q, 600, &frame, &len), 0);
		ck_assert_int_eq(frame_header(frame, 600, &plen), 0);
		resp = frame_unpack_response(frame + 4, plen);
		free(frame);
		ck_assert_int_eq(resp->status,
		    VITALS__STATUS__STATUS_TOO_LARGE);
		vitals__response__free_unpacked(resp, NULL);
	}
}
END_TEST

/* Answers collected on the loop. */
struct done_rec {
	unsigned n;
	uint64_t conn[64];
	uint32_t tag[64];
	uint64_t id[64];
	int status[64];
	struct event_base *base;
	unsigned want;
};

static void
done_fn(uint64_t conn_id, uint32_t tag, uint8_t *frame, size_t len, void *arg)
{
	struct done_rec *d = arg;
	Vitals__Response *resp;

	ck_assert_ptr_nonnull(frame);
	ck_assert_uint_gt(len, 4);
	resp = frame_unpack_response(frame + 4, len - 4);
	ck_assert_ptr_nonnull(resp);
	d->conn[d->n] = conn_id;
	d->tag[d->n] = tag;
	d->id[d->n] = resp->id;
	d->status[d->n] = resp->status;
	d->n++;
	vitals__response__free_unpacked(resp, NULL);
	free(frame);
	if (d->n >= d->want)
		event_base_loopbreak(d->base);
}

/* The pool held (query_hold) stands for a read that takes long. A held
 * thread took the last job submitted off the queue and waits before
 * running it: polled, not a sleep. */
static void
query_dequeued(struct query *qq)
{
	struct control_stats st;
	unsigned i;

	for (i = 0; i < 1000; i++) {
		query_get_stats(qq, &st);
		if (st.queries_queued == 0)
			return;
		tu_sleep_ms(5);
	}
	ck_abort_msg("the query thread never took the job");
}

START_TEST(test_query_thread)
{
	struct rpc_query q = { .op = RPC_Q_TOP,
		.from_wall_ns = T0,
		.to_wall_ns = T0 + 60 * SEC,
		.n = 3,
		.hz = 100 };
	struct done_rec d = { 0 };
	struct timeval tv = { 10, 0 };
	struct control_stats st;
	struct query *qq;
	uint8_t *frame;
	size_t len;
	unsigned i, busy = 0;

	d.base = event_base_new();
	ck_assert_ptr_nonnull(d.base);
	ck_assert_int_eq(query_new(d.base, qstore, 4, MAXF, 0, done_fn, &d,
			     &qq),
	    0);

	/* While the store is busy: one runs (blocked), four (different)
	 * wait, the rest are refused; connection 2 closes and loses its
	 * jobs. */
	query_hold(qq, true);
	tu_sleep_ms(100);
	ck_assert_int_eq(query_submit(qq, 1, 0, &q), 0);
	query_dequeued(qq);
	for (i = 1; i < 8; i++) {
		int r;

		q.n = 3 + i;
		q.id = 1000 + i;
		r = query_submit(qq, i % 2 ? 2 : 1, i, &q);

		if (r == -EBUSY)
			busy++;
		else
			ck_assert_int_eq(r, 0);
	}
	ck_assert_uint_eq(busy, 3);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 4);
	query_cancel(qq, 2);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 2);
	d.want = 3;
	query_hold(qq, false);
	event_base_loopexit(d.base, &tv);
	event_base_dispatch(d.base);
	ck_assert_uint_eq(d.n, 3);
	for (i = 0; i < d.n; i++) {
		ck_assert_uint_eq(d.conn[i], 1);
		ck_assert_int_eq(d.status[i], VITALS__STATUS__STATUS_OK);
	}
	/* in submission order, each with its id */
	ck_assert_uint_eq(d.tag[0], 0);
	ck_assert_uint_eq(d.tag[1], 2);
	ck_assert_uint_eq(d.id[1], 1002);
	ck_assert_uint_eq(d.tag[2], 4);
	ck_assert_uint_eq(d.id[2], 1004);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries, 3);
	ck_assert_uint_gt(st.query_ns_max, 0);

	/* Cancelling what is not queued leaves a queue that still works. */
	query_cancel(qq, 1);
	query_cancel(qq, 77);
	ck_assert_int_eq(query_submit(qq, 5, 40, &q), 0);
	d.n = 0;
	d.want = 1;
	event_base_loopexit(d.base, &tv);
	event_base_dispatch(d.base);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_uint_eq(d.conn[0], 5);
	ck_assert_uint_eq(d.tag[0], 40);

	/* The same question joins the queued job: one run, an answer for
	 * each with its own id; a "now" range resolved 0.5 s later is the
	 * same, 2 s later is not; a closed connection leaves its job. */
	query_hold(qq, true);
	tu_sleep_ms(100);
	q.n = 99; /* the blocked one */
	ck_assert_int_eq(query_submit(qq, 10, 0, &q), 0);
	query_dequeued(qq);
	q.n = 5;
	q.relative = true;
	q.id = 111;
	ck_assert_int_eq(query_submit(qq, 11, 1, &q), 0);
	q.id = 112;
	q.from_wall_ns += SEC / 2;
	q.to_wall_ns += SEC / 2;
	ck_assert_int_eq(query_submit(qq, 12, 2, &q), 0);
	q.id = 0;
	ck_assert_int_eq(query_submit(qq, 13, 3, &q), 0);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 1);
	q.id = 114;
	q.from_wall_ns += 2 * SEC;
	q.to_wall_ns += 2 * SEC;
	ck_assert_int_eq(query_submit(qq, 14, 4, &q), 0);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 2);
	query_cancel(qq, 12);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 2);
	query_cancel(qq, 14); /* its job's only waiter: the job goes */
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 1);
	d.n = 0;
	d.want = 3;
	query_hold(qq, false);
	event_base_loopexit(d.base, &tv);
	event_base_dispatch(d.base);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_uint_eq(d.conn[1], 11);
	ck_assert_uint_eq(d.id[1], 111);
	ck_assert_uint_eq(d.tag[1], 1);
	ck_assert_uint_eq(d.conn[2], 13);
	ck_assert_uint_eq(d.id[2], 0);
	ck_assert_int_eq(d.status[2], VITALS__STATUS__STATUS_OK);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries, 6);
	ck_assert_uint_eq(st.queries_shared, 2);

	/* Just answered: an equal request is served from memory, with its
	 * own id; a different one, or after JOIN_SLACK (1 s), is not. */
	q.id = 4242;
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 0); /* +2.5 s */
	q.from_wall_ns -= 2 * SEC;
	q.to_wall_ns -= 2 * SEC;
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 1); /* +0.5 s */
	{
		Vitals__Response *resp = frame_unpack_response(frame + 4,
		    len - 4);

		ck_assert_ptr_nonnull(resp);
		ck_assert_uint_eq(resp->id, 4242);
		ck_assert_uint_eq(resp->top->n_tasks, 5);
		vitals__response__free_unpacked(resp, NULL);
		free(frame);
	}
	q.n = 6;
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 0);
	q.n = 5;
	tu_sleep_ms(1100);
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 0);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_shared, 3);

	/* Stopping with work queued abandons it. */
	query_hold(qq, true);
	tu_sleep_ms(100);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(query_submit(qq, 9, i, &q), 0);
	query_free(qq);
	event_base_free(d.base);
}
END_TEST

static Suite *
rpc_query_suite(void)
{
	Suite *s = suite_create("rpc");
	TCase *tc;

	tc = tcase_create("query");
	tcase_add_checked_fixture(tc, q_setup, q_teardown);
	tcase_set_timeout(tc, 60); /* the store is held busy on purpose */
	tcase_add_test(tc, test_query_run);
	tcase_add_test(tc, test_query_quiet_process);
	tcase_add_test(tc, test_query_thread);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(rpc_query_suite());
}
