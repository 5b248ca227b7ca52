/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Binder transaction pairing (binder.c) fed records as ftrace_events.c
 * decodes them: send → received and call → reply latencies per (caller,
 * callee, code), and every way a pair can fail to complete (a reply to no
 * call, lost events mid-transaction, the caller's exit, a reused tid, a
 * call abandoned without a reply record, expiry, a full table). Then the
 * rows through roll-up merge, the store and back.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

#define US 1000ULL
#define MS 1000000ULL
#define S 1000000000ULL

/* threads 100..199 are process 1000's, 200..299 process 2000's, 300..399
 * process 3000's; others unknown */
static int32_t
tgid_of(int32_t tid, void *arg)
{
	(void)arg;
	if (tid >= 100 && tid < 400)
		return tid / 100 * 1000;
	return -1;
}

static struct atrace *
tracker(void)
{
	struct atrace *at = NULL;

	ck_assert_int_eq(atrace_new(&at), 0);
	atrace_set_tgid_fn(at, tgid_of, NULL);
	return at;
}

static void
txn(struct atrace *at, uint64_t ts, int32_t tid, int32_t id, int32_t to_proc,
    int32_t to_thread, int reply, uint32_t flags, uint32_t code)
{
	struct ftrace_rec r;

	memset(&r, 0, sizeof(r));
	r.ts = ts;
	r.tid = tid;
	r.ev = FEV_BINDER_TXN;
	r.u.txn.debug_id = id;
	r.u.txn.to_proc = to_proc;
	r.u.txn.to_thread = to_thread;
	r.u.txn.reply = reply;
	r.u.txn.flags = flags;
	r.u.txn.code = code;
	atrace_record(at, &r);
}

static void
rcv(struct atrace *at, uint64_t ts, int32_t tid, int32_t id)
{
	struct ftrace_rec r;

	memset(&r, 0, sizeof(r));
	r.ts = ts;
	r.tid = tid;
	r.ev = FEV_BINDER_RECV;
	r.u.recv.debug_id = id;
	atrace_record(at, &r);
}

static void
proc_exit(struct atrace *at, uint64_t ts, int32_t tid)
{
	struct ftrace_rec r;

	memset(&r, 0, sizeof(r));
	r.ts = ts;
	r.tid = tid;
	r.ev = FEV_PROCESS_EXIT;
	r.u.exit.tid = tid;
	atrace_record(at, &r);
}

static const struct window_trace_btxn *
row(const struct window_trace *t, int32_t from, int32_t to, uint32_t code)
{
	unsigned i;

	for (i = 0; i < t->nbtxn; i++)
		if (t->btxn[i].from_pid == from && t->btxn[i].to_pid == to &&
		    t->btxn[i].code == code)
			return &t->btxn[i];
	return NULL;
}

static unsigned
slot_of(const uint32_t *h)
{
	unsigned k, found = 99, n = 0;

	for (k = 0; k < VITALS_TRACE_BTXN_SLOTS; k++)
		if (h[k]) {
			found = k;
			n += h[k];
		}
	ck_assert_uint_eq(n, 1);
	return found;
}

static struct window_trace *
close_window(struct atrace *at)
{
	struct window_trace *t = window_trace_new(true);

	ck_assert_ptr_nonnull(t);
	atrace_window(at, t);
	return t;
}

/* A two-way call: send, received 30 µs later, reply 2 ms after the send,
 * the reply received; and a one-way call received 5 µs after. */
START_TEST(test_call_reply_oneway)
{
	struct atrace *at = tracker();
	struct window_trace *t;
	const struct window_trace_btxn *b;

	txn(at, 1 * S, 101, 7, 2000, 0, 0, 0, 3);
	rcv(at, 1 * S + 30 * US, 201, 7);
	txn(at, 1 * S + 2 * MS, 201, 8, 1000, 101, 1, 0, 0);
	rcv(at, 1 * S + 2 * MS + 9 * US, 101, 8);
	txn(at, 2 * S, 102, 9, 2000, 0, 0, 0x01, 5);
	rcv(at, 2 * S + 5 * US, 202, 9);
	t = close_window(at);
	ck_assert_uint_eq(t->nbtxn, 2);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 3));
	ck_assert_uint_eq(b->twoway, 1);
	ck_assert_uint_eq(b->oneway, 0);
	ck_assert_uint_eq(b->received, 1);
	ck_assert_uint_eq(b->recv_sum_ns, 30 * US);
	ck_assert_uint_eq(b->recv_max_ns, 30 * US);
	ck_assert_uint_eq(slot_of(b->recv_hist), 4); /* 16 ≤ 30 < 32 µs */
	ck_assert_uint_eq(b->replied, 1);
	ck_assert_uint_eq(b->reply_sum_ns, 2 * MS);
	ck_assert_uint_eq(slot_of(b->reply_hist), 10); /* 1024 ≤ 2000 µs */
	ck_assert_uint_eq(b->unreplied + b->unreceived, 0);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 5));
	ck_assert_uint_eq(b->oneway, 1);
	ck_assert_uint_eq(b->twoway, 0);
	ck_assert_uint_eq(b->received, 1);
	ck_assert_uint_eq(slot_of(b->recv_hist), 2);
	ck_assert_uint_eq(b->replied, 0);
	/* nothing unpaired: the reply's received was known too */
	ck_assert_uint_eq(t->btxn_orphan_replies, 0);
	ck_assert_uint_eq(t->btxn_orphan_recv, 0);
	ck_assert_uint_eq(t->btxn_open, 0);
	/* the old per-pair counts still add up */
	ck_assert_uint_eq(t->binder_total.calls, 1);
	ck_assert_uint_eq(t->binder_total.oneway, 1);
	ck_assert_uint_eq(t->binder_total.replies, 1);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

/* A reply to no call, a received of no send: counted, no latency. */
START_TEST(test_orphans)
{
	struct atrace *at = tracker();
	struct window_trace *t;

	txn(at, 1 * S, 201, 8, 1000, 101, 1, 0, 0);
	rcv(at, 1 * S + 10 * US, 101, 8); /* the reply's: known, not orphan */
	rcv(at, 1 * S + 20 * US, 101, 99);
	t = close_window(at);
	ck_assert_uint_eq(t->btxn_orphan_replies, 1);
	ck_assert_uint_eq(t->btxn_orphan_recv, 1);
	ck_assert_uint_eq(t->nbtxn, 0);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

/* Events lost between call and reply: the call is given up on, and the
 * reply that follows pairs with nothing (no invented latency). */
START_TEST(test_lost_mid_transaction)
{
	struct atrace *at = tracker();
	struct window_trace *t;
	const struct window_trace_btxn *b;

	txn(at, 1 * S, 101, 7, 2000, 0, 0, 0, 3);
	txn(at, 1 * S + 1 * US, 102, 17, 2000, 0, 0, 0, 3);
	rcv(at, 1 * S + 2 * US, 202, 17);
	atrace_lost(at);
	rcv(at, 1 * S + 30 * US, 201, 7);
	txn(at, 1 * S + 2 * MS, 201, 8, 1000, 101, 1, 0, 0);
	t = close_window(at);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 3));
	ck_assert_uint_eq(b->twoway, 2);
	ck_assert_uint_eq(b->received, 1); /* 17 only */
	ck_assert_uint_eq(b->unreceived, 1);
	ck_assert_uint_eq(b->replied, 0);
	ck_assert_uint_eq(b->unreplied, 2);
	ck_assert_uint_eq(t->btxn_lost, 3); /* two calls open, one unread */
	ck_assert_uint_eq(t->btxn_orphan_recv, 1);
	ck_assert_uint_eq(t->btxn_orphan_replies, 1);
	ck_assert_uint_eq(t->btxn_open, 0);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

/*
 * Nested: 101 calls 2000; its thread 201 calls back into 1000 (the driver
 * sends it to 101, the waiting thread), 101 serves it, calls 3000 from
 * inside, gets that reply, answers 201, and 201 answers 101.
 */
START_TEST(test_nested)
{
	struct atrace *at = tracker();
	struct window_trace *t;
	const struct window_trace_btxn *b;

	txn(at, 1 * S, 101, 1, 2000, 0, 0, 0, 10);
	rcv(at, 1 * S + 10 * US, 201, 1);
	txn(at, 1 * S + 100 * US, 201, 2, 1000, 101, 0, 0, 20);
	rcv(at, 1 * S + 110 * US, 101, 2);
	txn(at, 1 * S + 200 * US, 101, 3, 3000, 0, 0, 0, 30);
	rcv(at, 1 * S + 210 * US, 301, 3);
	txn(at, 1 * S + 400 * US, 301, 4, 1000, 101, 1, 0, 0);
	rcv(at, 1 * S + 410 * US, 101, 4);
	txn(at, 1 * S + 800 * US, 101, 5, 2000, 201, 1, 0, 0);
	rcv(at, 1 * S + 810 * US, 201, 5);
	txn(at, 1 * S + 4 * MS, 201, 6, 1000, 101, 1, 0, 0);
	rcv(at, 1 * S + 4 * MS + 10 * US, 101, 6);
	t = close_window(at);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 10));
	ck_assert_uint_eq(b->replied, 1);
	ck_assert_uint_eq(b->reply_sum_ns, 4 * MS);
	ck_assert_ptr_nonnull(b = row(t, 2000, 1000, 20));
	ck_assert_uint_eq(b->replied, 1);
	ck_assert_uint_eq(b->reply_sum_ns, 700 * US);
	ck_assert_ptr_nonnull(b = row(t, 1000, 3000, 30));
	ck_assert_uint_eq(b->replied, 1);
	ck_assert_uint_eq(b->reply_sum_ns, 200 * US);
	ck_assert_uint_eq(t->btxn_abandoned + t->btxn_stale, 0);
	ck_assert_uint_eq(t->btxn_orphan_replies + t->btxn_orphan_recv, 0);
	ck_assert_uint_eq(t->btxn_open, 0);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

/*
 * A call whose reply never comes (dead reply): the thread's next call,
 * serving nothing, gives it up as abandoned; the next reply pairs with
 * the new call, not the old one.
 */
START_TEST(test_abandoned)
{
	struct atrace *at = tracker();
	struct window_trace *t;
	const struct window_trace_btxn *b;

	txn(at, 1 * S, 101, 1, 2000, 0, 0, 0, 1);
	rcv(at, 1 * S + 10 * US, 201, 1);
	txn(at, 2 * S, 101, 2, 2000, 0, 0, 0, 2);
	rcv(at, 2 * S + 10 * US, 202, 2);
	txn(at, 2 * S + 50 * US, 202, 3, 1000, 101, 1, 0, 0);
	t = close_window(at);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 1));
	ck_assert_uint_eq(b->unreplied, 1);
	ck_assert_uint_eq(b->replied, 0);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 2));
	ck_assert_uint_eq(b->replied, 1);
	ck_assert_uint_eq(b->reply_sum_ns, 50 * US);
	ck_assert_uint_eq(t->btxn_abandoned, 1);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

/*
 * tid reuse: thread 150 of process 1000 calls and exits unseen; the tid
 * comes back in an unknown process (its tid stands in) and calls: the old
 * call is given up as stale. A caller whose exit is seen is given up at
 * once.
 */
static int32_t reused_tgid = 1000;

static int32_t
tgid_reuse(int32_t tid, void *arg)
{
	(void)arg;
	if (tid == 150)
		return reused_tgid;
	return tgid_of(tid, NULL);
}

START_TEST(test_tid_reuse_and_exit)
{
	struct atrace *at = tracker();
	struct window_trace *t;
	const struct window_trace_btxn *b;

	atrace_set_tgid_fn(at, tgid_reuse, NULL);
	reused_tgid = 1000;
	txn(at, 1 * S, 150, 1, 2000, 0, 0, 0, 1);
	rcv(at, 1 * S + 10 * US, 201, 1);
	reused_tgid = 3000;
	txn(at, 2 * S, 150, 2, 2000, 0, 0, 0, 1);
	rcv(at, 2 * S + 10 * US, 202, 2);
	txn(at, 2 * S + 70 * US, 202, 3, 3000, 150, 1, 0, 0);
	/* an exit seen: its open call is given up at once */
	txn(at, 3 * S, 103, 4, 2000, 0, 0, 0, 1);
	proc_exit(at, 3 * S + 1 * MS, 103);
	t = close_window(at);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 1));
	ck_assert_uint_eq(b->twoway, 2);
	ck_assert_uint_eq(b->unreplied, 2);
	ck_assert_uint_eq(b->replied, 0);
	ck_assert_ptr_nonnull(b = row(t, 3000, 2000, 1));
	ck_assert_uint_eq(b->replied, 1);
	ck_assert_uint_eq(b->reply_sum_ns, 70 * US);
	ck_assert_uint_eq(t->btxn_stale, 1);
	ck_assert_uint_eq(t->btxn_exit, 1);
	ck_assert_uint_eq(t->btxn_open, 0);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

/* A call open across windows: counted in the first as open, its latency
 * in the second; one open for 60 s expires. */
START_TEST(test_across_windows_and_expiry)
{
	struct atrace *at = tracker();
	struct window_trace *t;
	const struct window_trace_btxn *b;

	txn(at, 1 * S, 101, 1, 2000, 0, 0, 0, 1);
	txn(at, 1 * S, 102, 2, 2000, 0, 0, 0, 1);
	t = close_window(at);
	ck_assert_uint_eq(t->btxn_open, 2);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 1));
	ck_assert_uint_eq(b->twoway, 2);
	ck_assert_uint_eq(b->replied, 0);
	window_trace_free(t);
	rcv(at, 1 * S + 5 * MS, 201, 1);
	txn(at, 11 * S, 201, 3, 1000, 101, 1, 0, 0);
	t = close_window(at);
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 1));
	ck_assert_uint_eq(b->twoway, 0);
	ck_assert_uint_eq(b->replied, 1);
	ck_assert_uint_eq(b->reply_max_ns, 10 * S);
	ck_assert_uint_eq(slot_of(b->reply_hist), 23); /* the open slot */
	ck_assert_uint_eq(t->btxn_open, 1);
	window_trace_free(t);
	/* 102's call, never received nor replied, ages out */
	txn(at, 70 * S, 105, 4, 2000, 0, 0, 0x01, 9);
	t = close_window(at);
	ck_assert_uint_eq(t->btxn_expired, 2); /* its reply and received */
	ck_assert_ptr_nonnull(b = row(t, 1000, 2000, 1));
	ck_assert_uint_eq(b->unreplied, 1);
	ck_assert_uint_eq(b->unreceived, 1);
	ck_assert_uint_eq(t->btxn_open, 0);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

/* More keys than rows kept: the rest summed in btxn_rest, counted. */
START_TEST(test_rows_bounded)
{
	struct atrace *at = tracker();
	struct window_trace *t;
	uint64_t twoway = 0;
	unsigned i;

	for (i = 0; i < VITALS_TRACE_BTXN + 8; i++) {
		unsigned k;

		/* code i called i + 1 times (the heaviest kept) */
		for (k = 0; k <= i; k++)
			txn(at, 1 * S + (i * 100 + k) * US, 101,
			    (int32_t)(i * 100 + k + 1), 2000, 0, 0, 0x01, i);
	}
	t = close_window(at);
	ck_assert_uint_eq(t->nbtxn, VITALS_TRACE_BTXN);
	ck_assert_uint_eq(t->btxn_other, 8);
	ck_assert_ptr_null(row(t, 1000, 2000, 0));
	ck_assert_ptr_nonnull(row(t, 1000, 2000, VITALS_TRACE_BTXN + 7));
	ck_assert_uint_eq(t->btxn_rest.oneway, 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8);
	for (i = 0; i < t->nbtxn; i++)
		twoway += t->btxn[i].oneway;
	ck_assert_uint_eq(twoway + t->btxn_rest.oneway,
	    (VITALS_TRACE_BTXN + 8) * (VITALS_TRACE_BTXN + 9) / 2);
	window_trace_free(t);
	atrace_free(at);
}
END_TEST

static struct window_trace_btxn
mk(int32_t from, int32_t to, uint32_t code, uint32_t n, uint64_t ns)
{
	struct window_trace_btxn b;
	uint32_t i;

	memset(&b, 0, sizeof(b));
	b.from_pid = from;
	b.to_pid = to;
	b.code = code;
	b.twoway = n;
	b.replied = n;
	for (i = 0; i < n; i++) {
		window_btxn_hist_add(b.reply_hist, ns);
		b.reply_sum_ns += ns;
	}
	b.reply_max_ns = ns;
	return b;
}

/* Roll-ups: same keys add slot by slot, maxima kept, counts summed. */
START_TEST(test_merge)
{
	struct window_trace *a = window_trace_new(true);
	struct window_trace *b = window_trace_new(true);
	struct window_trace *acc = NULL;
	const struct window_trace_btxn *r;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	a->nbtxn = 1;
	a->btxn[0] = mk(1, 2, 3, 4, 100 * US);
	a->btxn_lost = 2;
	a->btxn_open = 5;
	b->nbtxn = 2;
	b->btxn[0] = mk(1, 2, 3, 1, 9 * MS);
	b->btxn[1] = mk(7, 8, 9, 2, 3 * US);
	b->btxn_rest = mk(0, 0, 0, 3, 1 * US);
	b->btxn_other = 4;
	b->btxn_lost = 1;
	b->btxn_open = 1;
	ck_assert_int_eq(window_trace_merge(&acc, a), 0);
	ck_assert_int_eq(window_trace_merge(&acc, b), 0);
	ck_assert_uint_eq(acc->nbtxn, 2);
	ck_assert_ptr_nonnull(r = row(acc, 1, 2, 3));
	ck_assert_uint_eq(r->replied, 5);
	ck_assert_uint_eq(r->reply_sum_ns, 400 * US + 9 * MS);
	ck_assert_uint_eq(r->reply_max_ns, 9 * MS);
	ck_assert_uint_eq(r->reply_hist[6], 4);	 /* 64 ≤ 100 µs */
	ck_assert_uint_eq(r->reply_hist[13], 1); /* 8192 ≤ 9000 µs */
	ck_assert_uint_eq(window_btxn_quantile_ns(r->reply_hist, 0.5),
	    128 * US);
	ck_assert_uint_eq(window_btxn_quantile_ns(r->reply_hist, 0.99),
	    16384 * US);
	ck_assert_uint_eq(acc->btxn_rest.replied, 3);
	ck_assert_uint_eq(acc->btxn_other, 4);
	ck_assert_uint_eq(acc->btxn_lost, 3);
	ck_assert_uint_eq(acc->btxn_open, 1); /* the later close's */
	window_trace_free(acc);
	window_trace_free(a);
	window_trace_free(b);
}
END_TEST

/* ------------------------------------------------------------ store */

static char *dir;

static void
setup(void)
{
	dir = tu_mkdtemp("binder");
	ck_assert_ptr_nonnull(dir);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

START_TEST(test_store_round_trip)
{
	int64_t wall = 1700000000LL * NSEC_PER_SEC;
	struct window *w = window_new(1, 0), **ws = NULL;
	struct window_trace *t, *g;
	struct store *s = NULL;
	char path[PATH_MAX], v[64];
	size_t n = 0;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b0075e7e-0000-4000-8000-8");
	w->hz = 100;
	w->mono_end_ns = 10 * NSEC_PER_SEC;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + 10 * NSEC_PER_SEC;
	ck_assert_ptr_nonnull(t = window_trace_make(w, true));
	t->state = FTRACE_ON;
	t->nbtxn = 2;
	t->btxn[0] = mk(1000, 2000, 3, 4, 100 * US);
	t->btxn[0].received = 4;
	window_btxn_hist_add(t->btxn[0].recv_hist, 20 * US);
	t->btxn[0].unreplied = 1;
	t->btxn[1] = mk(1000, 3000, 0xffffffffu, 1, 20 * S);
	t->btxn_rest = mk(0, 0, 0, 2, 1 * US);
	t->btxn_rest.unreceived = 6;
	t->btxn_other = 3;
	t->btxn_orphan_replies = 5;
	t->btxn_stale = 2;
	t->btxn_open = 7;
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_exec(s, "SELECT count(*) FROM window_trace_btxn",
			     v, sizeof(v)),
	    0);
	ck_assert_str_eq(v, "3");
	ck_assert_int_eq(store_windows(s, wall, wall + 20 * NSEC_PER_SEC, 0,
			     &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(g = window_trace(ws[0]));
	ck_assert_uint_eq(g->nbtxn, 2);
	ck_assert_int_eq(memcmp(row(g, 1000, 2000, 3), &t->btxn[0],
			     sizeof(t->btxn[0])),
	    0);
	ck_assert_int_eq(memcmp(row(g, 1000, 3000, 0xffffffffu), &t->btxn[1],
			     sizeof(t->btxn[1])),
	    0);
	ck_assert_uint_eq(g->btxn_rest.unreceived, 6);
	ck_assert_uint_eq(g->btxn_rest.replied, 2);
	ck_assert_uint_eq(g->btxn_rest.reply_hist[0], 2);
	ck_assert_uint_eq(g->btxn_other, 3);
	ck_assert_uint_eq(g->btxn_orphan_replies, 5);
	ck_assert_uint_eq(g->btxn_stale, 2);
	ck_assert_uint_eq(g->btxn_open, 7);
	window_free(ws[0]);
	free(ws);
	store_close(s);
	window_free(w);
}
END_TEST

static Suite *
binder_suite(void)
{
	Suite *s = suite_create("binder");
	TCase *tc = tcase_create("pairing");
	TCase *st = tcase_create("store");

	tcase_add_test(tc, test_call_reply_oneway);
	tcase_add_test(tc, test_orphans);
	tcase_add_test(tc, test_lost_mid_transaction);
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_abandoned);
	tcase_add_test(tc, test_tid_reuse_and_exit);
	tcase_add_test(tc, test_across_windows_and_expiry);
	tcase_add_test(tc, test_rows_bounded);
	tcase_add_test(tc, test_merge);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(st, setup, teardown);
	tcase_add_test(st, test_store_round_trip);
	suite_add_tcase(s, st);
	return s;
}

int
main(void)
{
	return tu_run(binder_suite());
}
