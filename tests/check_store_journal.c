/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The main file's journal (store.c, db_journal; doc/storage.md, "The main
 * file's journal"): with a spool the main file takes a rollback journal
 * (PERSIST), the spool and a store without one stay in WAL, a WAL file
 * changes over at open. A daemon killed at any write of a move leaves a
 * journal the next open rolls back: no window lost, none twice. Readers
 * keep answering while moves commit: a busy main file is waited for,
 * never an error.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store_int.h"
#include "store_fix.h"
#include "testutil.h"
#include "vfs_powercut.h"
#include "vitalsd.h"

#define NTASK 40

static char *dir;
static char path[PATH_MAX], spool[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("journal", path, sizeof(path));
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_opts(const char *sp, enum store_journal j)
{
	struct store_opts o;
	struct store *s;

	store_opts_default(&o);
	o.spool_path = sp;
	o.commit_s = 3600;
	o.journal = j;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	return s;
}

/* A 10 s window of NTASK processes; seq places it in the boot. */
static struct window *
mkwin(uint64_t seq)
{
	struct window *w = sf_mkwin_boot(seq, "boot-j");
	struct window_task t;
	int i;

	w->d_ctxt = 1000 + seq;
	for (i = 0; i < NTASK; i++) {
		memset(&t, 0, sizeof(t));
		t.id = t.tgid = 100 + i;
		t.starttime = 5000 + (uint64_t)i;
		snprintf(t.comm, sizeof(t.comm), "p%d", i);
		window_task_set_namef(&t, "com.example.journal%d", i);
		t.d_utime = (uint64_t)(i + 1) * 3 + seq * 7 % 13;
		t.d_stime = seq;
		t.samples = 10;
		t.wall_ns = 10 * SEC;
		t.total_ticks = 2000;
		t.norm_ticks = 1000;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	return w;
}

static void
put(struct store *s, uint64_t seq)
{
	struct window *w = mkwin(seq);

	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

/* Rows of `sql` in the file at p, read by a connection of its own. */
static long long
count_in(const char *p, const char *sql)
{
	sqlite3_stmt *st;
	sqlite3 *db;
	long long n = -1;

	ck_assert_int_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	/* window_tasks and window_parts as readers see them: the main
	 * tables and level 0's span tables (store_span.c) */
	ck_assert_int_eq(store_span_views(db, false), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* The file format's write version (header byte 18): 1 rollback, 2 WAL. */
static int
format_of(const char *p)
{
	unsigned char h[20];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	ck_assert_int_eq(n, (ssize_t)sizeof(h));
	return h[18];
}

static bool
exists(const char *p, const char *suffix)
{
	char f[PATH_MAX + 16];

	snprintf(f, sizeof(f), "%s%s", p, suffix);
	return access(f, F_OK) == 0;
}

/* First byte of the journal: 0 (or none) when no rollback is owed. */
static int
journal_hot(const char *p)
{
	char f[PATH_MAX + 16];
	unsigned char b = 0;
	int fd;

	snprintf(f, sizeof(f), "%s-journal", p);
	if ((fd = open(f, O_RDONLY)) < 0)
		return 0;
	if (pread(fd, &b, 1, 0) != 1)
		b = 0;
	close(fd);
	return b != 0;
}

START_TEST(test_modes)
{
	struct store *s = open_opts(spool, STORE_JOURNAL_PERSIST);

	put(s, 1);
	put(s, 2);
	ck_assert_int_eq(store_flush(s), 0);
	put(s, 3);
	/* the main file: rollback journal, kept (PERSIST) and not hot */
	ck_assert_int_eq(format_of(path), 1);
	ck_assert(!exists(path, "-wal"));
	ck_assert(exists(path, "-journal"));
	ck_assert_int_eq(journal_hot(path), 0);
	/* the spool: WAL */
	ck_assert_int_eq(format_of(spool), 2);
	ck_assert(exists(spool, "-wal"));
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"), 3);

	/* TRUNCATE leaves no journal bytes between moves */
	s = open_opts(spool, STORE_JOURNAL_TRUNCATE);
	put(s, 4);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(format_of(path), 1);
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"), 4);

	/* no spool: every window its own commit, in WAL */
	s = open_opts(NULL, STORE_JOURNAL_PERSIST);
	ck_assert_int_eq(format_of(path), 2);
	put(s, 5);
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"), 5);
}
END_TEST

/* A file made in WAL mode (an older daemon) changes over at open. */
START_TEST(test_wal_changes_over)
{
	struct store *s = open_opts(spool, STORE_JOURNAL_WAL);
	sqlite3 *h;

	put(s, 1);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(format_of(path), 2);
	store_close(s);
	s = open_opts(spool, STORE_JOURNAL_PERSIST);
	ck_assert_int_eq(format_of(path), 1);
	ck_assert(!exists(path, "-wal"));
	put(s, 2);
	ck_assert_int_eq(store_flush(s), 0);
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"), 2);

	/* held open by another connection (in WAL): it stays WAL, and works */
	s = open_opts(spool, STORE_JOURNAL_WAL);
	store_close(s);
	ck_assert_int_eq(format_of(path), 2);
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "SELECT count(*) FROM windows", NULL,
			     NULL, NULL),
	    SQLITE_OK);
	s = open_opts(spool, STORE_JOURNAL_PERSIST);
	put(s, 3);
	ck_assert_int_eq(store_flush(s), 0);
	store_close(s);
	sqlite3_close(h);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"), 3);
}
END_TEST

static void
copy_file(const char *from, const char *to)
{
	(void)unlink(to);
	ck_assert_int_eq(store_heal_copy_file(from, to), 0);
}

static void
copy_set(const char *from_dir, const char *to_dir)
{
	static const char *const f[] = { "vitals.db", "vitals.db-journal",
		"spool.db", "spool.db-wal" };
	char a[PATH_MAX + 32], b[PATH_MAX + 32];
	unsigned i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(a, sizeof(a), "%s/%s", from_dir, f[i]);
		snprintf(b, sizeof(b), "%s/%s", to_dir, f[i]);
		(void)unlink(b);
		if (access(a, F_OK) == 0)
			copy_file(a, b);
	}
	snprintf(b, sizeof(b), "%s/spool.db-shm", to_dir);
	(void)unlink(b);
}

#define BEFORE 6  /* windows moved before the killed move */
#define PENDING 8 /* windows in the spool it moves */

/*
 * The move killed at each of its writes (and syncs, truncations): the
 * open of a store whose spool holds windows moves them, and the VFS fails
 * every write-path call from call k of that open on, so the files hold
 * what they held when call k was made, as after a SIGKILL there, and the
 * child dies by SIGKILL. The next open rolls back what the journal holds
 * (hot at some of the k) and moves the spool: every window once, every
 * instance once, the file intact; none was moved aside.
 */
START_TEST(test_kill_mid_move)
{
	char base[PATH_MAX + 8];
	uint64_t span = 0, k;
	unsigned hot = 0, both = 0;
	struct store_stats st;
	struct store *s;
	int status;
	pid_t pid;

	/* the state before the move, kept aside */
	s = open_opts(spool, STORE_JOURNAL_PERSIST);
	for (k = 1; k <= BEFORE; k++)
		put(s, k);
	ck_assert_int_eq(store_flush(s), 0);
	for (; k <= BEFORE + PENDING; k++)
		put(s, k);
	ck_assert_int_eq(store_exec(s->spool, "PRAGMA wal_checkpoint(TRUNCATE)",
			     NULL, 0),
	    0);
	snprintf(base, sizeof(base), "%s/base", dir);
	ck_assert_int_eq(mkdir(base, 0700), 0);
	copy_set(dir, base);
	store_close(s);

	/* how many write-path calls the open makes: it moves what the
	 * spool holds (a daemon that died left it) */
	ck_assert_int_eq(pc_register(), 0);
	copy_set(base, dir);
	pc_reset(1);
	s = open_opts(spool, STORE_JOURNAL_PERSIST);
	span = pc_calls();
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"),
	    BEFORE + PENDING);
	ck_assert_uint_gt(span, 4);

	for (k = 1; k <= span; k++) {
		copy_set(base, dir);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct store_opts o;

			pc_reset(k);
			pc_arm_cut(k);
			store_opts_default(&o);
			o.spool_path = spool;
			o.commit_s = 3600;
			if (store_open(path, &o, &s) == 0)
				(void)store_flush(s);
			raise(SIGKILL);
			_exit(1);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* a hot journal is for the writer to roll back: a read-only
		 * connection could not, so the main file is read only
		 * without one */
		if (journal_hot(path))
			hot++;
		else if (count_in(path, "SELECT count(*) FROM windows") >
			BEFORE &&
		    count_in(spool, "SELECT count(*) FROM windows") > 0)
			both++; /* committed, the spool not yet emptied */
		s = open_opts(spool, STORE_JOURNAL_PERSIST);
		sf_assert_intact(s);
		store_get_stats(s, &st);
		ck_assert_uint_eq(st.corrupt_moved, 0);
		store_close(s);
		ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"),
		    BEFORE + PENDING);
		ck_assert_int_eq(count_in(path,
				     "SELECT count(DISTINCT mono_start_ns)"
				     " FROM windows"),
		    BEFORE + PENDING);
		ck_assert_int_eq(count_in(path,
				     "SELECT count(*) FROM window_tasks"),
		    BEFORE + PENDING);
		ck_assert_int_eq(count_in(path,
				     "SELECT count(*) FROM instance"),
		    NTASK);
		ck_assert_int_eq(count_in(path,
				     "SELECT sum(d_ctxt) FROM windows"),
		    (BEFORE + PENDING) * 1000 +
			(BEFORE + PENDING) * (BEFORE + PENDING + 1) / 2);
	}
	/* the sweep reached a rolled-back journal and a committed move */
	ck_assert_uint_gt(hot, 0);
	ck_assert_uint_gt(both, 0);
}
END_TEST

struct reader_arg {
	struct store *w;
	volatile bool stop;
	unsigned reads, errors;
};

static void *
reader(void *arg)
{
	struct reader_arg *a = arg;
	struct store *rc;

	if (store_conn_open(a->w, &rc) < 0) {
		a->errors++;
		return NULL;
	}
	while (!a->stop) {
		struct window_task *t = NULL;
		size_t n = 0;

		if (store_conn_begin(rc) < 0) {
			a->errors++;
			continue;
		}
		if (store_top(rc, T0, T0 + 86400 * SEC, false, METRIC_CPU, 5,
			&t, &n) < 0 ||
		    n == 0)
			a->errors++;
		free(t);
		store_conn_end(rc);
		a->reads++;
	}
	store_conn_close(rc);
	return NULL;
}

/*
 * Two readers ask all the time while moves commit: no read fails, and
 * the waits on either side are counted (store_busy.c).
 */
START_TEST(test_readers_during_moves)
{
	struct reader_arg a[2] = { 0 };
	struct store_wait mv, rd;
	pthread_t th[2];
	struct store *s = open_opts(spool, STORE_JOURNAL_PERSIST);
	uint64_t seq;
	int i;

	put(s, 1);
	ck_assert_int_eq(store_flush(s), 0);
	store_busy_reset();
	for (i = 0; i < 2; i++) {
		a[i].w = s;
		ck_assert_int_eq(pthread_create(&th[i], NULL, reader, &a[i]),
		    0);
	}
	for (seq = 2; seq < 200; seq++) {
		put(s, seq);
		if (seq % 3 == 0)
			ck_assert_int_eq(store_flush(s), 0);
	}
	for (i = 0; i < 2; i++) {
		a[i].stop = true;
		pthread_join(th[i], NULL);
		ck_assert_uint_eq(a[i].errors, 0);
		ck_assert_uint_gt(a[i].reads, 0);
	}
	store_busy_stats(&mv, &rd);
	ck_assert_uint_ge(mv.n, 66);
	ck_assert_uint_ge(rd.n, a[0].reads + a[1].reads);
	ck_assert_uint_le(mv.p99_ns, mv.max_ns);
	fprintf(stderr,
	    "readers_during_moves: %u reads; moves %llu, waited %llu, "
	    "max %.3f ms; snapshots %llu, waited %llu, max %.3f ms\n",
	    a[0].reads + a[1].reads, (unsigned long long)mv.n,
	    (unsigned long long)mv.waited, (double)mv.max_ns / 1e6,
	    (unsigned long long)rd.n, (unsigned long long)rd.waited,
	    (double)rd.max_ns / 1e6);
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"), 199);
}
END_TEST

struct lend_arg {
	struct store *w;
	volatile bool begun;
	int nice_before, nice_during;
	bool unlent, unlent_again;
	int err;
};

/* A pool-like reader at nice +10 holding its snapshot until the writer
 * has tried to lend it its priority. */
static void *
lend_reader(void *arg)
{
	struct lend_arg *a = arg;
	uint64_t lent = 0, denied = 0;
	struct store *rc;
	int64_t t0;

	(void)setpriority(PRIO_PROCESS, 0, 10);
	errno = 0;
	a->nice_before = getpriority(PRIO_PROCESS, 0);
	store_busy_reader(true);
	if ((a->err = store_conn_open(a->w, &rc)) < 0)
		goto out;
	if ((a->err = store_conn_begin(rc)) < 0) {
		store_conn_close(rc);
		goto out;
	}
	a->begun = true;
	t0 = clock_ns(CLOCK_MONOTONIC);
	while (lent + denied == 0 &&
	    clock_ns(CLOCK_MONOTONIC) - t0 < 3 * NSEC_PER_SEC) {
		usleep(1000);
		store_busy_lend_stats(&lent, &denied);
	}
	a->nice_during = getpriority(PRIO_PROCESS, 0);
	store_conn_end(rc);
	store_conn_close(rc);
	a->unlent = store_busy_unlend();
	if (a->unlent)
		(void)setpriority(PRIO_PROCESS, 0, 10);
	a->unlent_again = store_busy_unlend();
out:
	store_busy_reader(false);
	a->begun = true;
	return NULL;
}

/* A registered read thread between requests (no snapshot, no lock). */
struct idle_arg {
	volatile bool ready, stop;
	int nice_after;
};

static void *
idle_reader(void *arg)
{
	struct idle_arg *a = arg;

	(void)setpriority(PRIO_PROCESS, 0, 10);
	store_busy_reader(true);
	a->ready = true;
	while (!a->stop)
		usleep(1000);
	errno = 0;
	a->nice_after = getpriority(PRIO_PROCESS, 0);
	store_busy_reader(false);
	return NULL;
}

/*
 * A move's commit that waits for a read thread's SHARED lock lends the
 * reader its own priority (store_busy.c): with the privilege to lower a
 * nice value the reader runs at the writer's for the rest of that read
 * and is told to give it back once; without it the lend is counted as
 * denied and the reader keeps its own. A read thread between requests
 * holds no lock and is lent nothing.
 */
START_TEST(test_reader_lent_priority)
{
	struct lend_arg a = { 0 };
	struct idle_arg ia = { 0 };
	uint64_t lent0, denied0, lent, denied;
	pthread_t ith;
	struct store *s = open_opts(spool, STORE_JOURNAL_PERSIST);
	bool priv = geteuid() == 0;
	int mine;
	pthread_t th;
	uint64_t seq;

	errno = 0;
	mine = getpriority(PRIO_PROCESS, 0);
	ck_assert_int_lt(mine, 10);
	put(s, 1);
	ck_assert_int_eq(store_flush(s), 0);
	store_busy_lend_stats(&lent0, &denied0);
	ck_assert_int_eq(pthread_create(&ith, NULL, idle_reader, &ia), 0);
	while (!ia.ready)
		usleep(1000);
	a.w = s;
	ck_assert_int_eq(pthread_create(&th, NULL, lend_reader, &a), 0);
	while (!a.begun)
		usleep(1000);
	for (seq = 2; seq < 5; seq++)
		put(s, seq);
	/* waits for the reader's SHARED lock: lends, the reader lets go */
	ck_assert_int_eq(store_flush(s), 0);
	pthread_join(th, NULL);
	ia.stop = true;
	pthread_join(ith, NULL);
	ck_assert_int_eq(ia.nice_after, 10); /* idle: nothing lent */
	ck_assert_int_eq(a.err, 0);
	store_busy_lend_stats(&lent, &denied);
	ck_assert_int_eq(a.nice_before, 10);
	ck_assert(!a.unlent_again);
	if (priv) {
		ck_assert_uint_eq(lent, lent0 + 1);
		ck_assert_int_eq(a.nice_during, mine);
		ck_assert(a.unlent);
	} else {
		ck_assert_uint_eq(denied, denied0 + 1);
		ck_assert_int_eq(a.nice_during, 10);
		ck_assert(!a.unlent);
	}
	store_close(s);
	ck_assert_int_eq(count_in(path, "SELECT count(*) FROM windows"), 4);
}
END_TEST

static Suite *
suite(void)
{
	Suite *su = suite_create("store_journal");
	TCase *tc = tcase_create("journal");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_wal_changes_over);
	tcase_add_test(tc, test_kill_mid_move);
	tcase_add_test(tc, test_readers_during_moves);
	tcase_add_test(tc, test_reader_lent_priority);
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
