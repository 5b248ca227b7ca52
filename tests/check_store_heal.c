/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Self-healing of the store (store_heal.c): a store that cannot open is
 * kept closed and opened again; a write that stores nothing (a trigger, a
 * schema not ours) is an error, not a silent success; damage in the WAL or
 * the main file is found at open, counted, kept aside and the rest
 * salvaged; a -shm cut under the running store does not kill it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "vitalsd.h"

#define T0 (1699999800LL * NSEC_PER_SEC)
#define SEC NSEC_PER_SEC
#define BOOT "0d5f1e2b-heal"

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("heal", path, sizeof(path));
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct window *
mkwin(unsigned i, unsigned ntasks)
{
	struct window *w = window_new(i + 1, 0);
	unsigned k;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", BOOT);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)i * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + (int64_t)i * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	for (k = 0; k < ntasks; k++) {
		struct window_task t;

		memset(&t, 0, sizeof(t));
		t.id = t.tgid = (int32_t)(200 + k);
		t.starttime = 77 + k;
		snprintf(t.comm, sizeof(t.comm), "t%u", k);
		window_task_set_namef(&t, "com.example.heal%u", k);
		t.d_utime = i + k;
		t.samples = 10;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	return w;
}

static struct store *
open_ok(void)
{
	struct store *s = NULL;

	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	return s;
}

static void
put_n(struct store *s, unsigned from, unsigned n, unsigned ntasks)
{
	unsigned i;

	for (i = from; i < from + n; i++) {
		struct window *w = mkwin(i, ntasks);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
}

static long long
q_int(struct store *s, const char *sql)
{
	char buf[64];

	ck_assert_int_eq(store_exec(s, sql, buf, sizeof(buf)), 0);
	return strtoll(buf, NULL, 10);
}

/* ------------------------------------------------- writes that store nothing */

static const char *const swallow[] = {
	/* the window row is swallowed */
	"CREATE TRIGGER eat BEFORE INSERT ON windows BEGIN"
	" SELECT RAISE(IGNORE); END",
	/* the window row is stored, its tasks are not (a level-0
	 * window's go to its span's table, store_span.c: %lld) */
	"CREATE TABLE IF NOT EXISTS l0_tasks_%lld (window_id INTEGER"
	" PRIMARY KEY, procs BLOB, threads BLOB);"
	"CREATE TRIGGER eat BEFORE INSERT ON l0_tasks_%lld BEGIN"
	" SELECT RAISE(IGNORE); END",
	/* every insert is refused */
	"CREATE TRIGGER eat BEFORE INSERT ON windows BEGIN"
	" SELECT RAISE(ABORT, 'no'); END",
};

/*
 * A trigger put into the file while it is open turns a put into nothing:
 * that is an error in health (not "ok"), and the writer's recovery moves
 * the file aside and stores the window in a fresh one.
 */
START_TEST(trigger_write_is_error)
{
	struct store *s = open_ok();
	struct store_stats st;
	struct window *w = mkwin(5, 3);
	/* the hour of w's wall start (T0 is after 1970) */
	long long span = (long long)(w->wall_start_ns / (3600 * SEC));
	char sql[512];

	put_n(s, 0, 2, 3);
	snprintf(sql, sizeof(sql), swallow[_i], span, span, span);
	ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
	ck_assert_int_eq(store_put(s, w), -EUCLEAN);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_IO_ERROR);
	ck_assert_int_eq(st.last_err, -EUCLEAN);
	ck_assert_msg(strstr(st.last_errmsg, "stored nothing") != NULL, "%s",
	    st.last_errmsg);
	ck_assert_int_eq(store_recover(s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	/* the two windows before the trigger came along, then this one */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_tasks"), 3);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert_uint_eq(st.windows_salvaged, 2);
	window_free(w);
	store_close(s);
}
END_TEST

/* A file that has a trigger or a view is not ours: moved aside at open. */
START_TEST(trigger_at_open_is_foreign)
{
	struct store *s = open_ok();
	struct store_stats st;

	put_n(s, 0, 2, 1);
	ck_assert_int_eq(store_exec(s,
			     _i ? "CREATE VIEW v AS SELECT 1" : swallow[0],
			     NULL, 0),
	    0);
	store_close(s);
	s = open_ok();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert_msg(strstr(st.last_errmsg, "not our schema") != NULL, "%s",
	    st.last_errmsg);
	ck_assert_uint_eq(st.windows_salvaged, 2);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM sqlite_schema WHERE"
			     " type IN ('trigger', 'view')"),
	    0);
	put_n(s, 3, 1, 1);
	store_close(s);
}
END_TEST

/* A replay of a stored window is still a success that writes nothing. */
START_TEST(replay_still_succeeds)
{
	struct store *s = open_ok();

	put_n(s, 0, 2, 2);
	put_n(s, 0, 2, 2);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------- open retry */

/* vitals.db is a directory: closed, says why, opens once it is gone. */
START_TEST(open_retry_until_fixed)
{
	struct store *s = NULL;
	struct store_stats st;

	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_lt(store_open(path, NULL, &s), 0);
	ck_assert_int_eq(store_open_retry(path, NULL, &s), 0);
	ck_assert(!store_is_open(s));
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_CLOSED);
	ck_assert_int_lt(st.last_err, 0);
	ck_assert_msg(st.last_errmsg[0] != '\0', "no reason");
	{
		struct window *w = mkwin(0, 1);

		ck_assert_int_eq(store_put(s, w), -EBADF);
		window_free(w);
	}
	ck_assert_int_lt(store_reopen(s), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.open_retries, 1);
	ck_assert_int_eq(st.state, STORE_CLOSED);
	ck_assert_int_eq(rmdir(path), 0);
	ck_assert_int_eq(store_reopen(s), 0);
	ck_assert(store_is_open(s));
	put_n(s, 0, 2, 1);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(st.last_err, 0);
	ck_assert_uint_eq(st.open_retries, 2);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	store_close(s);
}
END_TEST

/* The writer opens a closed store by itself; windows wait meanwhile. */
START_TEST(writer_opens_closed_store)
{
	struct store *s = NULL;
	struct store_stats st;
	struct writer *wr;
	unsigned queued, i;
	uint64_t dropped;

	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(store_open_retry(path, NULL, &s), 0);
	ck_assert_int_eq(writer_start(s, 8, &wr), 0);
	for (i = 0; i < 3; i++) {
		struct window *w = mkwin(i, 1);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		window_free(w);
	}
	tu_sleep_ms(300);
	writer_get(wr, &st, &queued, &dropped);
	ck_assert_int_eq(st.state, STORE_CLOSED);
	ck_assert_uint_eq(queued, 3);
	ck_assert_uint_ge(st.open_retries, 1);
	ck_assert_int_gt(st.retry_at_mono_ns, clock_ns(CLOCK_MONOTONIC));
	ck_assert_int_eq(rmdir(path), 0);
	wr = writer_stop(wr, 5000);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.windows_written, 3);
	store_close(s);
}
END_TEST

/* ---------------------------------------------------- damage found at open */

static void
copy_to(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY), out;
	ssize_t n;

	ck_assert_int_ge(in, 0);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

/*
 * n windows, then the files as a crash would leave them (main file and
 * WAL copied while the store is open, nothing checkpointed) at path.
 */
static void
crash_snapshot(unsigned n)
{
	char src[PATH_MAX], a[PATH_MAX + 16], b[PATH_MAX + 16];
	struct store_opts o;
	struct store *s = NULL;

	store_opts_default(&o);
	o.max_bytes = 0; /* no size checkpoints: the WAL keeps it all */
	snprintf(src, sizeof(src), "%s/live.db", dir);
	ck_assert_int_eq(store_open(src, &o, &s), 0);
	{
		unsigned i;

		for (i = 0; i < n; i++) {
			struct window *w = mkwin(i, 4);

			ck_assert_int_eq(store_put(s, w), 0);
			window_free(w);
		}
	}
	copy_to(src, path);
	snprintf(a, sizeof(a), "%s-wal", src);
	snprintf(b, sizeof(b), "%s-wal", path);
	copy_to(a, b);
	store_close(s);
}

static bool
kept_copy(const char *tag)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "ls %s | grep -q '^vitals.db.%s-'", dir,
	    tag);
	return system(cmd) == 0;
}

/*
 * A byte flipped in the middle of the WAL: SQLite keeps the frames before
 * it and drops every later commit without a word. Now it is counted,
 * explained, and the files are kept as found.
 */
START_TEST(wal_damage_counted)
{
	char wal[PATH_MAX + 8];
	struct store_stats st;
	struct store *s;
	struct stat sb;
	long long n;
	int fd;
	unsigned char c;

	crash_snapshot(12);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	ck_assert_int_eq(stat(wal, &sb), 0);
	fd = open(wal, O_RDWR);
	ck_assert_int_ge(fd, 0);
	/* a page byte at about 40 % of the WAL */
	ck_assert_int_eq(pread(fd, &c, 1, sb.st_size * 2 / 5), 1);
	c ^= 0x5a;
	ck_assert_int_eq(pwrite(fd, &c, 1, sb.st_size * 2 / 5), 1);
	close(fd);
	s = open_ok();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.wal_damaged, 1);
	ck_assert_msg(strstr(st.last_errmsg, "WAL damaged") != NULL, "%s",
	    st.last_errmsg);
	ck_assert(kept_copy("wal-damaged"));
	n = q_int(s, "SELECT count(*) FROM windows");
	ck_assert_int_lt(n, 12);
	put_n(s, 20, 1, 1);
	store_close(s);
}
END_TEST

/* The same WAL unharmed: nothing to say. */
START_TEST(wal_intact_quiet)
{
	struct store_stats st;
	struct store *s;

	crash_snapshot(12);
	s = open_ok();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.wal_damaged, 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 12);
	ck_assert(!kept_copy("wal-damaged"));
	store_close(s);
}
END_TEST

/* A main file cut to 0 bytes beside its WAL: SQLite would discard the
 * WAL; its windows are rebuilt from it instead. */
START_TEST(empty_main_keeps_wal)
{
	struct store_stats st;
	struct store *s;

	crash_snapshot(12);
	ck_assert_int_eq(truncate(path, 0), 0);
	s = open_ok();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.wal_damaged, 1);
	ck_assert_msg(strstr(st.last_errmsg, "rebuilt") != NULL, "%s",
	    st.last_errmsg);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 12);
	ck_assert(kept_copy("wal-damaged"));
	store_close(s);
}
END_TEST

/*
 * An index that no longer matches its table passes quick_check and is
 * then used (reads miss rows); the open's check finds it, the file is
 * moved aside and its windows salvaged into a fresh one.
 */
START_TEST(index_damage_found)
{
	struct store_stats st;
	struct store *s = open_ok();

	put_n(s, 0, 10, 2);
	/* the index now describes another column than it holds */
	ck_assert_int_eq(
	    store_exec(s,
		"PRAGMA writable_schema = ON;"
		" UPDATE sqlite_schema SET sql = 'CREATE INDEX windows_wall ON"
		" windows (seq)' WHERE name = 'windows_wall';"
		" PRAGMA writable_schema = OFF",
		NULL, 0),
	    0);
	store_close(s);
	s = open_ok();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert_uint_eq(st.windows_salvaged, 10);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 10);
	store_close(s);
}
END_TEST

/* Every window of s as one text (the fields a flip would change). */
static char *
dump_all(struct store *s)
{
	struct window **v = NULL;
	size_t n = 0, i, len = 0;
	char *out = NULL;
	FILE *f;

	if (store_windows(s, 0, INT64_MAX, 0, &v, &n) < 0)
		return strdup("(unreadable)");
	f = open_memstream(&out, &len);
	for (i = 0; i < n; i++) {
		size_t k;

		fprintf(f, "%llu %lld %lld %zu|", (unsigned long long)v[i]->seq,
		    (long long)v[i]->mono_start_ns,
		    (long long)v[i]->wall_start_ns, v[i]->nprocs);
		for (k = 0; k < v[i]->nprocs; k++)
			fprintf(f, "%d %llu %s,", v[i]->procs[k].id,
			    (unsigned long long)v[i]->procs[k].d_utime,
			    window_task_name(&v[i]->procs[k]));
		window_free(v[i]);
	}
	free(v);
	fclose(f);
	return out;
}

/*
 * Random byte flips in the main file: never a crash or an unusable store.
 * Each flip is found at open (moved aside, windows salvaged), harmless
 * (the same windows read back), or changes a value silently (no page
 * checksums: the limit doc/storage.md names). The figures are printed.
 */
START_TEST(random_flips)
{
	unsigned found = 0, harmless = 0, silent = 0, k;

	srand(20261201);
	for (k = 0; k < 40; k++) {
		struct store_stats st;
		struct store *s = open_ok();
		struct stat sb;
		char *before, *after;
		unsigned char c;
		off_t off;
		int fd;

		put_n(s, 0, 12, 6);
		before = dump_all(s);
		store_close(s);
		ck_assert_int_eq(stat(path, &sb), 0);
		off = (off_t)((unsigned long)rand() %
		    (unsigned long)sb.st_size);
		fd = open(path, O_RDWR);
		ck_assert_int_eq(pread(fd, &c, 1, off), 1);
		c ^= (unsigned char)(1u << (rand() % 8));
		ck_assert_int_eq(pwrite(fd, &c, 1, off), 1);
		close(fd);
		s = open_ok();
		store_get_stats(s, &st);
		after = dump_all(s);
		if (st.corrupt_moved)
			found++;
		else if (strcmp(before, after) == 0)
			harmless++;
		else
			silent++;
		put_n(s, 30, 1, 1); /* usable either way */
		free(before);
		free(after);
		store_close(s);
		tu_rmtree(dir);
		ck_assert_int_eq(mkdir(dir, 0700), 0);
	}
	fprintf(stderr,
	    "random flips: 40, found at open %u, harmless %u, "
	    "silent value changes %u\n",
	    found, harmless, silent);
}
END_TEST

/* -------------------------------------------------------------- -shm cut */

/* s holds want windows and passes its integrity check. */
static void
assert_windows_intact(struct store *s, size_t want)
{
	struct window **v = NULL;
	size_t n = 0, i;
	char buf[64];

	ck_assert_int_eq(store_windows(s, 0, INT64_MAX, 0, &v, &n), 0);
	ck_assert_uint_eq(n, want);
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	ck_assert_int_eq(store_exec(s, "PRAGMA integrity_check", buf,
			     sizeof(buf)),
	    0);
	ck_assert_str_eq(buf, "ok");
}

/*
 * The -shm cut to nothing under an open store: the next put would die of
 * SIGBUS. It goes on, the cut is counted, nothing stored is lost.
 */
START_TEST(shm_cut_under_store)
{
	char shm[PATH_MAX + 8];
	struct store_stats st;
	struct store *s;
	unsigned k;

	if (getenv("VITALS_HEAL_NO_SIGBUS") == NULL)
		ck_assert_int_eq(store_heal_sigbus_install(), 0);
	s = open_ok();
	snprintf(shm, sizeof(shm), "%s-shm", path);
	put_n(s, 0, 3, 5);
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(truncate(shm, 0), 0);
		put_n(s, 3 + 3 * k, 3, 5);
	}
	store_get_stats(s, &st);
	ck_assert_uint_ge(st.shm_faults, 3);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_int_eq(truncate(shm, 0), 0);
	assert_windows_intact(s, 12);
	store_close(s);
}
END_TEST

/*
 * The same with the spool on: both -shm files cut between puts, moves
 * (store_flush) between the cuts. The main store's connection maps the
 * spool's index too (attached): the fault may be taken there, the
 * spool's own connection none the wiser, and the main store's
 * checkpoint names every attached database. Every window put is in the
 * main file at the end, the file intact.
 */
START_TEST(shm_cut_under_spool)
{
	char shm[PATH_MAX + 8], sshm[PATH_MAX + 8];
	char spool[] = "/dev/shm/vitals-healsp-XXXXXX", spath[PATH_MAX];
	struct store_stats st;
	struct store_opts o;
	struct store *s;
	unsigned k;

	if (getenv("VITALS_HEAL_NO_SIGBUS") == NULL)
		ck_assert_int_eq(store_heal_sigbus_install(), 0);
	ck_assert_ptr_nonnull(mkdtemp(spool));
	store_opts_default(&o);
	snprintf(spath, sizeof(spath), "%s/spool.db", spool);
	o.spool_path = spath; /* kept by the store */
	o.commit_s = 3600;    /* moves only by store_flush */
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	snprintf(sshm, sizeof(sshm), "%s/spool.db-shm", spool);
	put_n(s, 0, 3, 5);
	store_get_stats(s, &st);
	ck_assert(st.spool_on);
	for (k = 0; k < 6; k++) {
		/* the spool's, then (k odd) the main file's as well */
		ck_assert_int_eq(truncate(sshm, 0), 0);
		if (k % 2)
			(void)truncate(shm, 0); /* none in PERSIST mode */
		put_n(s, 3 + 4 * k, 2, 5);
		if (k % 2 == 0)
			ck_assert_int_eq(truncate(sshm, 0), 0);
		ck_assert_int_eq(store_flush(s), 0);
		put_n(s, 5 + 4 * k, 2, 5);
	}
	store_get_stats(s, &st);
	ck_assert_uint_ge(st.shm_faults, 3);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_uint_eq(st.windows_written, 27);
	store_close(s);
	/* the main file alone, the spool moved and gone */
	s = open_ok();
	assert_windows_intact(s, 27);
	store_close(s);
	tu_rmtree(spool);
}
END_TEST

static Suite *
heal_suite(void)
{
	Suite *s = suite_create("store_heal");
	TCase *tc;

	tc = tcase_create("nothing_stored");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, trigger_write_is_error, 0,
	    (int)(sizeof(swallow) / sizeof(swallow[0])));
	tcase_add_loop_test(tc, trigger_at_open_is_foreign, 0, 2);
	tcase_add_test(tc, replay_still_succeeds);
	suite_add_tcase(s, tc);

	tc = tcase_create("open_retry");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, open_retry_until_fixed);
	tcase_add_test(tc, writer_opens_closed_store);
	suite_add_tcase(s, tc);

	tc = tcase_create("damage");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, wal_damage_counted);
	tcase_add_test(tc, wal_intact_quiet);
	tcase_add_test(tc, empty_main_keeps_wal);
	tcase_add_test(tc, index_damage_found);
	tcase_add_test(tc, random_flips);
	suite_add_tcase(s, tc);

	tc = tcase_create("shm");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, shm_cut_under_store);
	tcase_add_test(tc, shm_cut_under_spool);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(heal_suite());
}
