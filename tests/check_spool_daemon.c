/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Batched commits under the real daemon (doc/storage.md, "Batched
 * commits"): windows wait in a spool on a RAM file system, readers see
 * them through the daemon while vitals.db has none, a SIGKILL leaves them
 * for the next start, which moves each once; a spool directory on disk is
 * refused and every window is committed on its own.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"

static const char *const health_json[] = { "--json", "health", NULL };

/* An integer of health.store, -1 when absent. */
static long long
store_num(const struct run *r, const char *key)
{
	struct jm *j = jm_parse(r->out, strlen(r->out));
	const struct jm *st = jm_path(j, "health.store");
	const struct jm *v = st ? jm_get(st, key) : NULL;
	long long n = -1;

	if (jm_is_int(v))
		n = v->ll;
	else if (v && v->t == JM_STR)
		n = atoll(v->str); /* 64-bit figures as strings */
	jm_free(j);
	return n;
}

/* An integer of health.store.<which> (a StoreWaits), -1 when absent. */
static long long
waits_num(const struct run *r, const char *which, const char *key)
{
	struct jm *j = jm_parse(r->out, strlen(r->out));
	const struct jm *st = jm_path(j, "health.store");
	const struct jm *w = st ? jm_get(st, which) : NULL;
	const struct jm *v = w ? jm_get(w, key) : NULL;
	long long n = -1;

	if (jm_is_int(v))
		n = v->ll;
	else if (v && v->t == JM_STR)
		n = atoll(v->str);
	jm_free(j);
	return n;
}

static bool
two_pending(const struct run *r)
{
	return store_num(r, "spool_pending") >= 2;
}

static bool
two_written(const struct run *r)
{
	return store_num(r, "windows_written") >= 2;
}

/* One integer from SQL on db, opened read-only beside the daemon. */
static long long
db_int(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	long long v;

	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	sqlite3_busy_timeout(h, 5000);
	ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(h));
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

static struct run
health(const struct td *d)
{
	return td_vitals(d, -1, health_json);
}

START_TEST(test_spool_daemon)
{
	const char *args[] = { "--store-spool-dir", NULL, "--store-commit-s",
		"3600", "--interval-ms", "100", "--window-s", "1", "--threads",
		"none", NULL };
	char db[PATH_MAX], spool[PATH_MAX], pid[16], sql[PATH_MAX + 128];
	const char *proc[] = { "--json", "proc", pid, "--since", "1h", NULL };
	struct jm *j;
	const struct jm *v, *hist;
	struct run r;
	long long pending, in_spool, ids_sum;
	struct td d;

	td_prepare(&d, "spoold", NULL);
	ck_assert_msg(d.spool[0], "no spool directory under /dev/shm");
	args[1] = d.spool;
	snprintf(db, sizeof(db), "%s/vitals.db", d.dir);
	td_spawn(&d, args, NULL, NULL);
	td_wait(&d, 30000, health_json, two_pending);

	/* on, with its path and the windows waiting */
	r = health(&d);
	j = jm_parse(r.out, strlen(r.out));
	v = jm_path(j, "health.store.spool_on");
	ck_assert_msg(v && v->t == JM_BOOL && v->b, "spool off: %s", r.out);
	v = jm_path(j, "health.store.spool_path");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->t, JM_STR);
	snprintf(spool, sizeof(spool), "%s", v->str);
	ck_assert_msg(strncmp(spool, d.spool, strlen(d.spool)) == 0 &&
		strlen(spool) ==
		    strlen(d.spool) + strlen("/spool-") + 16 + strlen(".db") &&
		strncmp(spool + strlen(d.spool), "/spool-", 7) == 0,
	    "spool path %s", spool);
	jm_free(j);
	pending = store_num(&r, "spool_pending");
	ck_assert_int_ge(pending, 2);
	ck_assert_int_eq(store_num(&r, "spool_flushes"), 0);
	run_free(&r);
	ck_assert_int_eq(access(spool, F_OK), 0);

	/* the daemon's readers see the spool's windows; vitals.db has
	 * none of them */
	snprintf(pid, sizeof(pid), "%d", (int)d.pid);
	r = td_vitals(&d, -1, proc);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	hist = jm_path(j, "process.history");
	ck_assert_msg(hist && hist->t == JM_ARR && hist->n >= 2,
	    "windows through the daemon: %s", r.out);
	jm_free(j);
	run_free(&r);
	ck_assert_int_eq(db_int(db, "SELECT count(*) FROM windows"), 0);

	/* that read took a snapshot of the main file: counted as a read
	 * wait (of 0 ns when nothing had to wait), shown as text too */
	r = health(&d);
	ck_assert_msg(waits_num(&r, "read_waits", "n") >= 1, "%s", r.out);
	ck_assert_int_le(waits_num(&r, "read_waits", "waited"),
	    waits_num(&r, "read_waits", "n"));
	ck_assert_int_le(waits_num(&r, "read_waits", "p99_ns"),
	    waits_num(&r, "read_waits", "max_ns"));
	ck_assert_int_eq(waits_num(&r, "move_waits", "n"), 0);
	/* the writer timed its puts into the spool by its own clocks; no
	 * reader held a lock against them */
	ck_assert_msg(waits_num(&r, "put_times", "n") >= 1, "%s", r.out);
	ck_assert_int_eq(waits_num(&r, "put_times", "lock_over_1ms"), 0);
	ck_assert_int_le(waits_num(&r, "put_times", "lock_max_ns"), 1000000);
	run_free(&r);
	r = td_vitals(&d, -1, (const char *const[]){ "health", NULL });
	ck_assert_msg(strstr(r.out, "lock waits: 0 moves") &&
		strstr(r.out, "waited for a move"),
	    "%s", r.out);
	ck_assert_msg(strstr(r.out, "writer puts: ") &&
		strstr(r.out, "waiting for a CPU"),
	    "%s", r.out);
	run_free(&r);

	/* killed: the spool stays, holding what was committed */
	td_kill(d.pid, SIGKILL);
	d.pid = 0;
	in_spool = db_int(spool, "SELECT count(*) FROM windows");
	ids_sum = db_int(spool, "SELECT total(id) FROM windows");
	ck_assert_int_ge(in_spool, pending);
	ck_assert_int_eq(db_int(db, "SELECT count(*) FROM windows"), 0);

	/* the next start moves them, each once */
	td_spawn(&d, args, NULL, NULL);
	td_wait(&d, 30000, health_json, NULL);
	ck_assert_int_ge(db_int(db, "SELECT count(*) FROM windows"), in_spool);
	ck_assert_int_eq(db_int(db,
			     "SELECT count(*) FROM (SELECT boot, level, "
			     "mono_start_ns FROM windows GROUP BY 1, 2, 3 "
			     "HAVING count(*) > 1)"),
	    0);
	ck_assert_int_eq(db_int(db,
			     "SELECT count(*) - count(DISTINCT id) FROM "
			     "windows"),
	    0);
	/* the killed run's windows, by id: the sum of the smallest
	 * in_spool ids is theirs (the new run's ids come after) */
	snprintf(sql, sizeof(sql),
	    "SELECT total(id) FROM (SELECT id FROM windows ORDER BY id "
	    "LIMIT %lld)",
	    in_spool);
	ck_assert_int_eq(db_int(db, sql), ids_sum);
	/* that move is counted among the move waits */
	r = health(&d);
	ck_assert_msg(waits_num(&r, "move_waits", "n") >= 1, "%s", r.out);
	run_free(&r);
	td_stop(&d);
}
END_TEST

/* A directory for the test off any RAM file system: /var/tmp, /tmp or
 * the working directory, the first that is on disk. */
static char *
disk_dir(void)
{
	static const char *const bases[] = { "/var/tmp", "/tmp", "." };
	struct statfs sf;
	char *p;
	size_t i;

	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (statfs(bases[i], &sf) < 0 || sf.f_type == TMPFS_MAGIC ||
		    sf.f_type == RAMFS_MAGIC)
			continue;
		ck_assert_int_ge(asprintf(&p, "%s/vitals-spooldisk-XXXXXX",
				     bases[i]),
		    0);
		if (mkdtemp(p) != NULL)
			return p;
		free(p);
	}
	ck_abort_msg("no directory on disk for the test");
	return NULL;
}

START_TEST(test_spool_on_disk)
{
	const char *args[] = { "--store-spool-dir", NULL, "--interval-ms",
		"100", "--window-s", "1", "--threads", "none", NULL };
	char db[PATH_MAX];
	char *dir = disk_dir();
	struct jm *j;
	const struct jm *v;
	struct run r;
	struct td d;

	td_prepare(&d, "spooldisk", NULL);
	args[1] = dir;
	snprintf(db, sizeof(db), "%s/vitals.db", d.dir);
	td_spawn(&d, args, NULL, NULL);
	td_wait(&d, 30000, health_json, two_written);

	r = health(&d);
	j = jm_parse(r.out, strlen(r.out));
	v = jm_path(j, "health.store.spool_on");
	ck_assert_msg(v == NULL || (v->t == JM_BOOL && !v->b), "spool on: %s",
	    r.out);
	v = jm_path(j, "health.store.spool_note");
	ck_assert_msg(v && v->t == JM_STR &&
		strstr(v->str, "not on a RAM file system"),
	    "no reason: %s", r.out);
	jm_free(j);
	run_free(&r);
	/* every window its own commit: in vitals.db while the daemon runs */
	ck_assert_int_ge(db_int(db, "SELECT count(*) FROM windows"), 2);
	ck_assert_msg(td_file_has(d.log, "store spool off: "), "log %s", d.log);
	td_stop(&d);
	/* nothing made in the refused directory */
	ck_assert_int_eq(rmdir(dir), 0);
	free(dir);
}
END_TEST

static Suite *
spool_daemon_suite(void)
{
	Suite *s = suite_create("spool_daemon");
	TCase *tc = tcase_create("daemon");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_spool_daemon);
	tcase_add_test(tc, test_spool_on_disk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(spool_daemon_suite());
}
