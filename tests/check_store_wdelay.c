/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader never delays the store writer (doc/storage.md, "What delays
 * the writer"): a read connection holding its snapshot across the WAL
 * checkpoint the writer runs after its commits makes no put wait for its
 * lock (the checkpoint no longer sleeps in the busy handler until the
 * reader ends: it took the whole busy timeout, 2 s, before), the WAL is
 * still truncated once the reader lets go (or, with readers cycling
 * snapshots, once it passes its reserve: the truncation then waits for
 * them), and the writer thread's own clocks reach its statistics.
 */
#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store/store.h"
#include "store_fix.h"
#include "testutil.h"
#include "vitalsd.h"

#define NTASK 200
#define NPUT 40

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("wdelay", path, sizeof(path));
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

/* A 10 s window of NTASK processes with names of their own. */
static struct window *
mkwin(uint64_t seq)
{
	struct window *w = sf_mkwin_boot(seq, "boot-wd");
	struct window_task t;
	int i;

	for (i = 0; i < NTASK; i++) {
		memset(&t, 0, sizeof(t));
		t.id = t.tgid = (int32_t)(seq * NTASK + (uint64_t)i + 100);
		t.starttime = 5000 + seq;
		snprintf(t.comm, sizeof(t.comm), "p%llu_%d",
		    (unsigned long long)seq, i);
		window_task_set_namef(&t, "com.example.wdelay%llu.%d",
		    (unsigned long long)seq, i);
		t.d_utime = (uint64_t)(i * 7 + seq) % 97;
		t.d_stime = seq % 5;
		t.samples = 10;
		t.wall_ns = 10 * SEC;
		t.total_ticks = 2000;
		t.norm_ticks = 1000;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	return w;
}

static uint64_t
wal_bytes(void)
{
	char p[PATH_MAX + 8];
	struct stat sb;

	snprintf(p, sizeof(p), "%s-wal", path);
	return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

START_TEST(test_reader_across_checkpoint)
{
	struct store_stats st;
	struct store_commit_split sp;
	struct store_commit_stats cs;
	struct store_tclock tc;
	struct window **got = NULL;
	struct store_opts o;
	struct store *s, *rc;
	size_t n = 0, i;
	uint64_t ckpt = 0, wal_held, waited0;

	store_opts_default(&o);
	o.max_bytes = 2u << 20; /* WAL reserve 256 KiB: checkpoints at 128 */
	ck_assert_uint_ge(o.busy_timeout_ms, 1000);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	{
		struct window *w = mkwin(1);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	/* a reader takes its snapshot and keeps it through every put */
	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_windows(rc, T0, T0 + 100 * SEC, 0, &got, &n), 0);
	ck_assert_uint_eq(n, 1);
	for (i = 0; i < n; i++)
		window_free(got[i]);
	free(got);

	store_get_stats(s, &st);
	waited0 = st.wal_waited; /* the first put's WAL, with no reader */
	memset(&cs, 0, sizeof(cs));
	for (i = 2; i < 2 + NPUT; i++) {
		struct window *w = mkwin(i);
		uint64_t before = wal_bytes(), after;

		store_tclock_start(&tc);
		ck_assert_int_eq(store_put(s, w), 0);
		store_tclock_stop(&tc, &sp);
		window_free(w);
		store_tclock_note(&cs, &sp);
		ckpt += sp.ckpt_ns;
		/* no wait for the reader's lock, and no put near the busy
		 * timeout a checkpoint waiting for the reader took */
		ck_assert_uint_le(sp.lock_ns, STORE_READER_DELAY_NS);
		ck_assert_uint_lt(sp.wall_ns, 500 * NSEC_PER_MSEC);
		ck_assert_uint_ge(sp.wall_ns, sp.cpu_ns / 2);
		/* the WAL stays under its reserve (256 KiB): past it, the
		 * truncation waits for the readers (the next test) */
		after = wal_bytes();
		if (after > before &&
		    after + (after - before) * 5 / 4 > 256u << 10) {
			i++;
			break;
		}
	}
	/* the checkpoint ran (the path under test) and could not truncate
	 * the WAL past the reader's snapshot */
	ck_assert_uint_gt(ckpt, 0);
	ck_assert_uint_eq(cs.n, i - 2);
	store_get_stats(s, &st);
	ck_assert_uint_gt(st.wal_busy, 0);
	ck_assert_uint_lt(st.wal_busy, STORE_WAL_BUSY_RUN);
	ck_assert_uint_eq(st.wal_waited, waited0);
	ck_assert_uint_eq(cs.lock_over, 0);
	ck_assert_uint_ge(cs.worst.wall_ns, cs.last.wall_ns);
	wal_held = wal_bytes();
	ck_assert_uint_gt(wal_held, 128u << 10);

	/* the reader lets go: the next put's checkpoint truncates */
	store_conn_end(rc);
	rc = store_conn_close(rc);
	{
		struct window *w = mkwin(i);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_uint_lt(wal_bytes(), wal_held);
	ck_assert_uint_le(wal_bytes(), 128u << 10);
	/* and every window is there */
	ck_assert_int_eq(store_windows(s, T0, T0 + 1000 * SEC, 0, &got, &n), 0);
	ck_assert_uint_eq(n, i);
	for (i = 0; i < n; i++)
		window_free(got[i]);
	free(got);
	store_close(s);
}
END_TEST

/* The writer thread times its own puts; health gets them. */
/* A reader taking snapshots one after another, each held 5 ms, 2 ms
 * apart (a request's end and the next one's start): the truncation that
 * waits takes its locks in a gap. */
struct cycler {
	struct store *rc;
	int stop, err;
	unsigned long snaps;
};

static void *
cycle(void *arg)
{
	struct cycler *c = arg;
	struct timespec hold = { 0, 5 * 1000 * 1000 };
	struct timespec gap = { 0, 2 * 1000 * 1000 };

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		struct window **got = NULL;
		size_t n = 0, i;

		if (store_conn_begin(c->rc) != 0 ||
		    store_windows(c->rc, T0, T0 + 20 * SEC, 0, &got, &n) != 0) {
			c->err++;
			store_conn_end(c->rc);
			continue;
		}
		for (i = 0; i < n; i++)
			window_free(got[i]);
		free(got);
		nanosleep(&hold, NULL);
		store_conn_end(c->rc);
		c->snaps++;
		nanosleep(&gap, NULL);
	}
	return NULL;
}

/* Readers whose snapshots follow each other find every truncation that
 * does not wait: once the WAL passes its reserve (or after
 * STORE_WAL_BUSY_RUN such tries) the truncation waits for them, and the
 * WAL never stays past the reserve after a put. */
START_TEST(test_wal_truncated_with_cycling_reader)
{
	struct cycler c = { 0 };
	struct store_stats st;
	struct store_opts o;
	struct store *s;
	pthread_t th;
	uint64_t wal, wal_max = 0;
	size_t i;

	store_opts_default(&o);
	o.max_bytes = 2u << 20; /* WAL reserve 256 KiB: checkpoints at 128 */
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	{
		struct window *w = mkwin(1);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(store_conn_open(s, &c.rc), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, cycle, &c), 0);
	for (i = 2; i < 2 + NPUT; i++) {
		struct window *w = mkwin(i);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
		wal = wal_bytes();
		if (wal > wal_max)
			wal_max = wal;
		ck_assert_msg(wal <= 256u << 10,
		    "put %zu: WAL %llu bytes, past its reserve", i,
		    (unsigned long long)wal);
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	c.rc = store_conn_close(c.rc);
	store_get_stats(s, &st);
	/* the reader was there, and the truncations found it */
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_gt(c.snaps, 0);
	ck_assert_uint_gt(st.wal_busy, 0);
	ck_assert_uint_gt(st.wal_waited, 0);
	ck_assert_uint_gt(wal_max, 0);
	store_close(s);
}
END_TEST

START_TEST(test_writer_times_puts)
{
	struct store_stats st;
	struct store_opts o;
	struct writer *wr;
	struct store *s;
	uint64_t dropped;
	unsigned queued, i;

	store_opts_default(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	ck_assert_int_eq(writer_start(s, 16, &wr), 0);
	for (i = 1; i <= 5; i++) {
		struct window *w = mkwin(i);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(writer_wait(wr, 10000), 0);
	writer_get(wr, &st, &queued, &dropped);
	ck_assert_uint_eq(st.puts.n, 5);
	ck_assert_uint_gt(st.puts.worst.wall_ns, 0);
	ck_assert_uint_gt(st.puts.worst.cpu_ns, 0);
	ck_assert_uint_ge(st.puts.worst.wall_ns, st.puts.last.wall_ns);
	/* the parts add up to the whole, give or take the clocks' reads */
	ck_assert_uint_le(st.puts.worst.cpu_ns + st.puts.worst.lock_ns,
	    st.puts.worst.wall_ns + 1000000);
	ck_assert_uint_eq(st.puts.lock_over, 0);
	writer_stop(wr, 5000);
	store_close(s);
}
END_TEST

static Suite *
suite(void)
{
	Suite *su = suite_create("store_wdelay");
	TCase *tc = tcase_create("wdelay");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_reader_across_checkpoint);
	tcase_add_test(tc, test_writer_times_puts);
	tcase_add_test(tc, test_wal_truncated_with_cycling_reader);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
