/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store's writer thread as the loop uses it (writer.c): a window
 * queued with a note is told back (its eventfd, writer_each_done) only
 * once committed, or with why not (a busy database, a full queue);
 * heapprofd's records are written in the order put, a queued put of an id
 * replaced by a newer one, a full queue counted; a call run on the
 * writer's thread until it succeeds. The database is held by a second
 * connection, as another writer would hold it.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_codec.h"
#include "testutil.h"
#include "vitalsd.h"

#define T0 (1699999800LL * NSEC_PER_SEC)
#define SEC NSEC_PER_SEC

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("writer", path, sizeof(path));
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_busy(int busy_ms)
{
	struct store_opts o;
	struct store *s = NULL;

	store_opts_default(&o);
	o.busy_timeout_ms = busy_ms;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	return s;
}

static struct window *
mkwin(uint64_t seq)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id),
	    "8c1e7a6c-3f9b-4c2e-9a47-0d5f1e2b3c4d");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->wall_start_ns = T0 + (int64_t)seq * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	return w;
}

static void
submit(struct writer *wr, uint64_t seq)
{
	struct window *w = mkwin(seq);
	char note[32];

	snprintf(note, sizeof(note), "window %llu", (unsigned long long)seq);
	ck_assert_int_eq(writer_submit_note(wr, w, note), 0);
	window_free(w);
}

/* The writer's eventfd is readable within ms. */
static bool
told_within(struct writer *wr, int ms)
{
	struct pollfd p = { .fd = writer_fd(wr), .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* What each_done told, and whether the window was stored by then. */
struct heard {
	struct store *s;
	unsigned n;
	uint64_t seq[16];
	int err[16];
	bool final[16], stored[16];
	char note[16][32];
};

static void
heard_cb(void *arg, const struct writer_done *dn)
{
	struct heard *h = arg;
	char q[96], v[32] = "";

	ck_assert_uint_lt(h->n, 16);
	snprintf(q, sizeof(q), "SELECT count(*) FROM windows WHERE seq = %llu",
	    (unsigned long long)dn->seq);
	ck_assert_int_eq(store_exec(h->s, q, v, sizeof(v)), 0);
	h->seq[h->n] = dn->seq;
	h->err[h->n] = dn->err;
	h->final[h->n] = dn->final;
	h->stored[h->n] = atoi(v) == 1;
	snprintf(h->note[h->n], sizeof(h->note[0]), "%s", dn->note);
	h->n++;
}

/* Told only once committed: nothing while the database is held. */
START_TEST(told_after_commit)
{
	struct store *s = open_busy(5000);
	struct heard h = { .s = s };
	struct writer *wr;
	sqlite3 *db;

	ck_assert_int_eq(writer_start(s, 8, &wr), 0);
	db = tu_db_hold(path);
	submit(wr, 1);
	ck_assert(!told_within(wr, 300));
	writer_each_done(wr, heard_cb, &h);
	ck_assert_uint_eq(h.n, 0);
	tu_db_release(db);
	ck_assert(told_within(wr, 5000));
	writer_each_done(wr, heard_cb, &h);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(h.seq[0], 1);
	ck_assert_int_eq(h.err[0], 0);
	ck_assert(h.stored[0]); /* in the store when told */
	ck_assert_str_eq(h.note[0], "window 1");
	/* a window without a note is written, not told */
	{
		struct window *w = mkwin(2);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(writer_wait(wr, 5000), 0);
	ck_assert(!told_within(wr, 0));
	writer_stop(wr, 1000);
	store_close(s);
}
END_TEST

/*
 * A busy database past the busy timeout: the window in flight is told
 * "not yet" (not final) when its try fails, one queued while the writer
 * waits for its retry at once. A window dropped from a full queue is told
 * so, after its "not yet"; the others are written once the lock goes and
 * told so.
 */
START_TEST(told_failing_and_dropped)
{
	struct store *s = open_busy(200);
	struct heard h = { .s = s };
	struct writer *wr;
	sqlite3 *db;
	unsigned i;

	ck_assert_int_eq(writer_start(s, 2, &wr), 0);
	db = tu_db_hold(path);
	submit(wr, 1);
	ck_assert(told_within(wr, 5000));
	writer_each_done(wr, heard_cb, &h);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(h.seq[0], 1);
	ck_assert_int_eq(h.err[0], -EBUSY);
	ck_assert(!h.final[0]);
	/* queued while the writer waits for its retry: told at once */
	submit(wr, 2);
	ck_assert(told_within(wr, 0));
	writer_each_done(wr, heard_cb, &h);
	ck_assert_uint_eq(h.n, 2);
	ck_assert_uint_eq(h.seq[1], 2);
	ck_assert_int_eq(h.err[1], -EBUSY);
	/* full (2): the oldest not in flight goes, and says so */
	submit(wr, 3);
	for (i = 0; i < 50 && h.n < 3; i++) {
		(void)told_within(wr, 100);
		writer_each_done(wr, heard_cb, &h);
	}
	ck_assert_uint_ge(h.n, 3);
	for (i = 2; i < h.n; i++)
		if (h.err[i] == -ENOBUFS)
			break;
	ck_assert_uint_lt(i, h.n);
	ck_assert(h.final[i]);
	ck_assert(h.seq[i] == 1 || h.seq[i] == 2);
	tu_db_release(db);
	ck_assert_int_eq(writer_wait(wr, 20000), 0);
	ck_assert(told_within(wr, 0));
	writer_each_done(wr, heard_cb, &h);
	/* 1 and 2 said "not yet"; one of them dropped; 3 "not yet"; then
	 * the two written, each in the store when told */
	ck_assert_uint_eq(h.n, 6);
	ck_assert_int_eq(h.err[4], 0);
	ck_assert(h.final[4] && h.stored[4]);
	ck_assert_int_eq(h.err[5], 0);
	ck_assert(h.final[5] && h.stored[5]);
	ck_assert_uint_eq(h.seq[5], 3);
	writer_stop(wr, 1000);
	ck_assert_int_eq(store_exec(s, "SELECT count(*) FROM windows", path,
			     sizeof(path)),
	    0);
	ck_assert_str_eq(path, "2");
	store_close(s);
}
END_TEST

static struct hp_record
record(int64_t id, const char *outcome)
{
	struct hp_record r;

	memset(&r, 0, sizeof(r));
	r.id = id;
	r.created_wall_ns = T0;
	snprintf(r.target, sizeof(r.target), "app");
	snprintf(r.target_key, sizeof(r.target_key), "app");
	snprintf(r.params, sizeof(r.params), "duration_ms=1000");
	r.started = true;
	r.start_wall_ns = T0;
	snprintf(r.outcome, sizeof(r.outcome), "%s", outcome);
	r.exit_status = -1;
	r.output_bytes = -1;
	return r;
}

/*
 * Records: in the order put, per id the newest wins, a queued put of an
 * id replaced (so a started-then-ended session is two writes at most),
 * 256 ids waiting at most (more: -ENOBUFS, counted).
 */
START_TEST(records_ordered_replaced_bounded)
{
	struct store *s = open_busy(5000);
	struct writer_rec_stats rs;
	struct hp_record r, got;
	struct writer *wr;
	sqlite3 *db;
	int64_t id;

	ck_assert_int_eq(writer_start(s, 8, &wr), 0);
	db = tu_db_hold(path);
	r = record(1, "running");
	ck_assert_int_eq(writer_hp_put(wr, &r), 0);
	usleep(200000); /* in flight: the writer waits on the lock */
	r = record(1, "cancelled");
	ck_assert_int_eq(writer_hp_put(wr, &r), 0);
	r = record(2, "running");
	ck_assert_int_eq(writer_hp_put(wr, &r), 0);
	r = record(1, "completed");
	ck_assert_int_eq(writer_hp_put(wr, &r), 0); /* replaces "cancelled" */
	writer_hp_stats(wr, &rs);
	ck_assert_uint_eq(rs.queued, 3);
	/* 256 waiting, the one in flight included */
	for (id = 3; id <= 255; id++) {
		r = record(id, "refused");
		r.started = false;
		ck_assert_int_eq(writer_hp_put(wr, &r), 0);
	}
	r = record(256, "refused");
	ck_assert_int_eq(writer_hp_put(wr, &r), -ENOBUFS);
	writer_hp_stats(wr, &rs);
	ck_assert_uint_eq(rs.queued, 256);
	ck_assert_uint_eq(rs.dropped, 1);
	tu_db_release(db);
	ck_assert_int_eq(writer_wait(wr, 20000), 0);
	writer_hp_stats(wr, &rs);
	ck_assert_uint_eq(rs.queued, 0);
	ck_assert_uint_eq(rs.written, 256);
	ck_assert_uint_eq(rs.failed, 0);
	writer_stop(wr, 1000);
	ck_assert_int_eq(store_hp_get(s, 1, &got), 0);
	ck_assert_str_eq(got.outcome, "completed");
	ck_assert_int_eq(store_hp_get(s, 2, &got), 0);
	ck_assert_str_eq(got.outcome, "running");
	ck_assert_int_eq(store_hp_get(s, 256, &got), -ENOENT);
	/* the largest id, as a restart reads it */
	ck_assert_int_eq(store_hp_max_id(s, &id), 0);
	ck_assert_int_eq(id, 255);
	store_close(s);
}
END_TEST

struct call {
	int fails; /* tries to fail first */
	int tries, done;
	bool open; /* the store was open when it ran */
};

static int
call_fn(struct store *s, void *arg)
{
	struct call *c = arg;

	c->open = store_is_open(s);
	return ++c->tries <= c->fails ? -EBUSY : 0;
}

static void
call_done(void *arg)
{
	((struct call *)arg)->done++;
}

static void
noop_cb(void *arg, const struct writer_done *dn)
{
	(void)arg;
	(void)dn;
}

/* Window seq with n processes: task blobs large enough to compress. */
static struct window *
mkwin_tasks(uint64_t seq, unsigned n)
{
	struct window *w = mkwin(seq);
	struct window_task t;
	unsigned i;

	for (i = 0; i < n; i++) {
		memset(&t, 0, sizeof(t));
		t.id = t.tgid = (int32_t)(100 + i);
		t.starttime = 1000 + i;
		snprintf(t.comm, sizeof(t.comm), "proc%u", i % 37);
		window_task_set_name(&t, t.comm);
		t.d_utime = i % 7 + seq;
		t.d_stime = i % 3;
		t.samples = 10;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	return w;
}

/*
 * The writer's heap trim: at the first drained queue, then at most once
 * a minute (TRIM_EVERY_S), and it keeps the zstd compression context.
 * Windows written one by one, each queue drained: one trim, after the
 * first, and one context made in all (before: a trim per window, and a
 * context made afresh after each, its tables zeroed and faulted in
 * again once the trim gave them back).
 */
START_TEST(trim_keeps_encoder)
{
	struct store *s = open_busy(5000);
	struct writer *wr;
	uint64_t made0;
	uint32_t trims = 0;
	uint64_t bytes;
	unsigned k;
	int i;

	ck_assert_int_eq(writer_start(s, 8, &wr), 0);
	made0 = store_codec_contexts_made(0);
	for (k = 1; k <= 4; k++) {
		struct window *w = mkwin_tasks(k, 400);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		window_free(w);
		ck_assert_int_eq(writer_wait(wr, 5000), 0);
		/* the trim follows the drained queue's wake-up */
		for (i = 0; i < 50; i++) {
			writer_trims(wr, &trims, &bytes);
			if (trims >= k)
				break;
			usleep(10000);
		}
		/* the first window's trim ran before the next is put */
		if (k == 1)
			ck_assert_uint_eq(trims, 1);
	}
	writer_trims(wr, &trims, &bytes);
	ck_assert_uint_eq(trims, 1);
	/* the first window compressed (a context made), the next three
	 * after the trim reused it */
	ck_assert_uint_eq(store_codec_contexts_made(0) - made0, 1);
	writer_stop(wr, 1000);
	store_close(s);
}
END_TEST

/*
 * A call on the writer thread (heapprofd's records read when the store
 * opened late): tried again while it fails, then its done runs once on
 * the caller's side, from writer_each_done; one at a time; a cancelled
 * call never runs its done.
 */
/*
 * A window is queued shared, not copied, and the writer keeps the share
 * of the last one it wrote until it has written the next: the ring drops
 * its own at the next close first, so the free runs on the writer's
 * thread. The ASan stage checks the frees: none early, none missing.
 */
START_TEST(last_written_held)
{
	struct store *s = open_busy(5000);
	struct window *w1 = mkwin(1), *w2 = mkwin(2);
	struct writer *wr;

	ck_assert_int_eq(writer_start(s, 8, &wr), 0);
	ck_assert_int_eq(writer_submit(wr, w1), 0);
	/* the queue's share: the same window */
	ck_assert_uint_eq(atomic_load(&w1->owners_more), 1);
	ck_assert_int_eq(writer_wait(wr, 5000), 0);
	/* written, its share still held */
	ck_assert_uint_eq(atomic_load(&w1->owners_more), 1);
	ck_assert_ptr_null(window_free(w1)); /* the ring's: not the last */
	ck_assert_int_eq(writer_submit(wr, w2), 0);
	ck_assert_int_eq(writer_wait(wr, 5000), 0);
	/* w1 went with w2's write; w2's share held in its place */
	ck_assert_uint_eq(atomic_load(&w2->owners_more), 1);
	window_free(w2);
	writer_stop(wr, 1000); /* frees w2 */
	store_close(s);
}
END_TEST

START_TEST(call_retried_then_done)
{
	struct store *s = open_busy(1000);
	struct call c = { .fails = 2 }, c2 = { 0 };
	struct writer *wr;
	unsigned i;

	ck_assert_int_eq(writer_start(s, 8, &wr), 0);
	ck_assert_int_eq(writer_call(wr, call_fn, call_done, &c), 0);
	ck_assert_int_eq(writer_call(wr, call_fn, call_done, &c2), -EBUSY);
	for (i = 0; i < 100 && c.done == 0; i++) {
		(void)told_within(wr, 100);
		writer_each_done(wr, noop_cb, NULL);
	}
	ck_assert_int_eq(c.done, 1);
	ck_assert_int_eq(c.tries, 3); /* 0.5 s, then 1 s later */
	ck_assert(c.open);
	writer_each_done(wr, noop_cb, NULL);
	ck_assert_int_eq(c.done, 1);
	/* cancelled: never done */
	c2.fails = 1000;
	ck_assert_int_eq(writer_call(wr, call_fn, call_done, &c2), 0);
	usleep(100000);
	writer_call_cancel(wr);
	ck_assert_int_ge(c2.tries, 1);
	i = (unsigned)c2.tries;
	usleep(1200000);
	writer_each_done(wr, noop_cb, NULL);
	ck_assert_int_eq(c2.done, 0);
	ck_assert_int_eq(c2.tries, (int)i);
	writer_stop(wr, 1000);
	store_close(s);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("writer");
	TCase *tc = tcase_create("writer");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, told_after_commit);
	tcase_add_test(tc, told_failing_and_dropped);
	tcase_add_test(tc, records_ordered_replaced_bounded);
	tcase_add_test(tc, call_retried_then_done);
	tcase_add_test(tc, trim_keeps_encoder);
	tcase_add_test(tc, last_written_held);
	suite_add_tcase(su, tc);
	return tu_run(su);
}
