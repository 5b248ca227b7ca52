/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitalsd and `vitals gpumem` end to end against AOSP-layout maps the test
 * writes as the driver would (gpumem_driver.h; root): the states as the
 * client prints them, exact text and JSON for globals, two GPUs, live and
 * dead pids, growth over stored windows, and what the store holds.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "client_run.h"
#include "harness.h"
#include "gpumem_driver.h"
#include "gpumem_dumpsys.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

static struct run
vitals(const struct td *d, const char *a0, const char *a1, const char *a2,
    const char *a3)
{
	const char *argv[] = { "vitals", "--socket", d->sock, a0, a1, a2, a3,
		NULL };

	return run_client(argv);
}

static void
refuse_walks(void *arg)
{
	(void)arg;
	gd_refuse_walks();
}

/* 100 ms samples, 1 s windows, the procfs scanner, each window its own
 * commit (the stored rows are read from vitals.db beside the daemon); up
 * when `vitals gpumem` answers. refuse: the kernel refuses the daemon's
 * map walks. */
static void
daemon_start_opt(struct td *d, const char *conf, bool refuse)
{
	static const char *const args[] = { "--interval-ms", "100",
		"--window-s", "1", "--scanner", "procfs", "--store-commit-s",
		"0", NULL };
	static const char *const gpumem[] = { "gpumem", NULL };

	td_prepare(d, "gpumem-daemon", conf);
	td_spawn(d, args, refuse ? refuse_walks : NULL, NULL);
	td_wait(d, 10000, gpumem, NULL);
}

static void
daemon_start(struct td *d, const char *conf)
{
	daemon_start_opt(d, conf, false);
}

/* `vitals gpumem` until it prints want (20 s: a loaded machine), then
 * exactly want. */
static void
expect_text(const struct td *d, const char *want, const char *a1,
    const char *a2)
{
	struct run r = { 0 };
	struct sbuf fit;
	int i;

	/* --verbose is prose: wrapped at 80 columns as vitals does */
	sbuf_init(&fit);
	if (a1)
		text_fit(&fit, want, TEXT_WIDTH);
	else
		sbuf_puts(&fit, want);
	want = sbuf_str(&fit);
	for (i = 0; i < 200; i++) {
		if (i)
			run_free(&r);
		r = vitals(d, "gpumem", a1, a2, NULL);
		if (r.code == 0 && strcmp(r.out, want) == 0)
			break;
		tu_sleep_ms(100);
	}
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.out, want);
	run_free(&r);
	sbuf_free(&fit);
}

/* window_gpu rows of the newest stored window, "gpu pid start bytes
 * stale name|" each, by gpu and pid; malloc'd. */
static char *
stored_rows(const struct td *d)
{
	char db[PATH_MAX], *out = malloc(4096);
	sqlite3_stmt *st;
	sqlite3 *h;
	size_t len = 0;

	ck_assert_ptr_nonnull(out);
	out[0] = '\0';
	snprintf(db, sizeof(db), "%s/vitals.db", d->dir);
	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	sqlite3_busy_timeout(h, 2000);
	ck_assert_int_eq(
	    sqlite3_prepare_v2(h,
		"SELECT gpu_id, pid, starttime,"
		" bytes, stale, name FROM window_gpu WHERE window_id ="
		" (SELECT max(window_id) FROM window_gpu) ORDER BY gpu_id, pid",
		-1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && len < 4000)
		len += (size_t)snprintf(out + len, 4096 - len,
		    "%lld %lld %lld %lld %d %s|", sqlite3_column_int64(st, 0),
		    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
		    sqlite3_column_int64(st, 3), sqlite3_column_int(st, 4),
		    (const char *)sqlite3_column_text(st, 5));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return out;
}

/* A child that is a named process: exec'd sleep. */
static pid_t
sleeper(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execlp("sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	/* exec'd: its comm says so (polled, 10 s at most) */
	for (int i = 0; i < 500; i++) {
		char path[64], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(comm, sizeof(comm), f) == NULL)
				comm[0] = '\0';
			fclose(f);
		}
		if (strcmp(comm, "sleep\n") == 0)
			return pid;
		tu_sleep_ms(20);
	}
	ck_abort_msg("%d never ran sleep", (int)pid);
	return pid;
}

/* An instance's bytes in the stored window ending at end; false: no row. */
static bool
stored_bytes(sqlite3 *h, long long end, long long gpu, long long pid,
    long long start, long long *ret)
{
	sqlite3_stmt *st;
	bool found;

	ck_assert_int_eq(sqlite3_prepare_v2(h,
			     "SELECT g.bytes FROM windows w JOIN window_gpu g"
			     " ON g.window_id = w.id WHERE w.wall_end_ns = ?"
			     " AND g.gpu_id = ? AND g.pid = ?"
			     " AND g.starttime = ?",
			     -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(st, 1, end);
	sqlite3_bind_int64(st, 2, gpu);
	sqlite3_bind_int64(st, 3, pid);
	sqlite3_bind_int64(st, 4, start);
	found = sqlite3_step(st) == SQLITE_ROW;
	if (found)
		*ret = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return found;
}

/*
 * `vitals --json gpumem --since 1h`'s series against vitals.db: its points
 * are the stored windows of the range one by one (fewer than 240), and
 * each instance's value at a point is its row in that window, null where
 * the window has none. pid a's series holds both of its sizes and the
 * gaps of the windows before the test wrote it.
 */
static void
series_check(const struct td *d, pid_t a)
{
	const struct jm *gm, *ends, *procs;
	long long from, last, v;
	bool have4096 = false, have65536 = false, gap = false;
	char db[PATH_MAX];
	sqlite3_stmt *st;
	struct run r;
	struct jm *j;
	sqlite3 *h;
	size_t i, k, n;

	r = vitals(d, "--json", "gpumem", "--since", "1h");
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	gm = jm_get(j, "gpu_mem");
	ends = jm_get(gm, "window_end_wall_ns");
	ck_assert_ptr_nonnull(ends);
	n = ends->n;
	ck_assert_uint_ge(n, 2);
	ck_assert_uint_lt(n, 240);
	ck_assert_int_eq(jm_get(gm, "series_step")->ll, 1);
	ck_assert_int_eq(jm_get(gm, "series_windows")->ll, (long long)n);
	from = jm_get(gm, "from_wall_ns")->ll;
	last = ends->v[n - 1].ll;
	snprintf(db, sizeof(db), "%s/vitals.db", d->dir);
	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	sqlite3_busy_timeout(h, 2000);
	/* the points: every stored window of the range, oldest first */
	ck_assert_int_eq(sqlite3_prepare_v2(h,
			     "SELECT wall_end_ns FROM windows WHERE"
			     " wall_end_ns > ? AND wall_end_ns <= ?"
			     " ORDER BY wall_end_ns, id",
			     -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, last);
	for (i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
		ck_assert_uint_lt(i, n);
		ck_assert_int_eq(ends->v[i].t, JM_STR);
		ck_assert_int_eq(ends->v[i].ll, sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	ck_assert_uint_eq(i, n);
	/* every instance, window by window */
	procs = jm_get(gm, "procs");
	ck_assert_uint_ge(procs->n, 4);
	for (k = 0; k < procs->n; k++) {
		const struct jm *p = &procs->v[k];
		const struct jm *se = jm_get(p, "series");
		long long gpu = jm_get(p, "gpu_id")->ll;
		long long pid = jm_get(p, "pid")->ll;
		long long start = jm_get(p, "starttime")->ll;

		ck_assert_ptr_nonnull(se);
		ck_assert_uint_eq(se->n, n);
		for (i = 0; i < n; i++) {
			if (!stored_bytes(h, ends->v[i].ll, gpu, pid, start,
				&v)) {
				ck_assert_msg(se->v[i].t == JM_NULL,
				    "gpu %lld pid %lld point %zu: no row, "
				    "not null",
				    gpu, pid, i);
				gap |= pid == a && gpu == 0;
				continue;
			}
			ck_assert_int_eq(se->v[i].t, JM_STR);
			ck_assert_int_eq(se->v[i].ll, v);
			if (pid == a && gpu == 0) {
				have4096 |= v == 4096;
				have65536 |= v == 65536;
			}
		}
	}
	ck_assert(have4096 && have65536 && gap);
	sqlite3_close(h);
	jm_free(j);
	run_free(&r);

	/* the text: a sparkline row per GPU total and process, 80 columns */
	r = vitals(d, "gpumem", "--since", "1h", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "History, oldest left: "));
	ck_assert_ptr_nonnull(strstr(r.out, "\n  gpu 0 total "));
	ck_assert_ptr_nonnull(strstr(r.out, "\n  gpu 1 total "));
	{
		char row[64];

		snprintf(row, sizeof(row), "\n  sleep %d ", (int)a);
		ck_assert_ptr_nonnull(strstr(r.out, row));
	}
	for (const char *l = r.out; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);

		ck_assert_uint_le(text_ncols(l, len), TEXT_WIDTH);
		l += len + (nl != NULL);
	}
	run_free(&r);
}

START_TEST(test_daemon_gpumem)
{
	char path[PATH_MAX], conf[PATH_MAX + 128], want[PATH_MAX + 2048];
	const struct jm *procs, *st;
	struct td d;
	long long walks;
	struct run r;
	struct jm *j;
	pid_t a, dead, lo, hi;
	int fd;

	gd_map_path(path, sizeof(path), "map_gpuMem_gpu_mem_total_map");
	snprintf(conf, sizeof(conf),
	    "gpumem_map = %s\n"
	    "gpumem_load = map-only\nbpf_load = off\n",
	    path);
	daemon_start(&d, conf);
	expect_text(&d,
	    "GPU memory: not initialised (no map); none map, "
	    "0 of 0 entries\n",
	    "--verbose", NULL);
	/* by default, what dumpsys gpu --gpumem prints */
	expect_text(&d, "Failed to initialize GPU memory eBPF\n\n", NULL, NULL);

	/* the loader pins it: empty */
	fd = gd_aosp_map();
	gd_pin(fd, path);
	snprintf(want, sizeof(want),
	    "GPU memory: empty; pinned map %s, 0 of "
	    "1024 entries\n",
	    path);
	expect_text(&d, want, "-v", NULL);
	expect_text(&d, "GPU memory total usage map is empty\n\n", NULL, NULL);

	/* a live process, a dead one, two GPUs, one without its global */
	a = sleeper();
	dead = gd_child(0);
	gd_reap(dead);
	tu_sleep_ms(300); /* the daemon's scan has seen a */
	ck_assert_int_eq(gd_drv(fd, 0, 0, 1000000), 0);
	ck_assert_int_eq(gd_drv(fd, 0, a, 4096), 0);
	ck_assert_int_eq(gd_drv(fd, 0, dead, 777), 0);
	ck_assert_int_eq(gd_drv(fd, 1, a, 8192), 0);
	lo = a < dead ? a : dead;
	hi = a < dead ? dead : a;
	snprintf(want, sizeof(want),
	    "GPU memory: ok; pinned map %s, 4 of 1024 entries\n"
	    "Memory snapshot for GPU 0:\n"
	    "Global total: 1000000\n"
	    "Proc %d total: %s\n"
	    "Proc %d total: %s\n"
	    "Memory snapshot for GPU 1:\n"
	    "Global total: N/A\n"
	    "Proc %d total: 8192 sleep\n",
	    path, lo, lo == a ? "4096 sleep" : "777 [stale]", hi,
	    hi == a ? "4096 sleep" : "777 [stale]", a);
	expect_text(&d, want, "--verbose", NULL);
	/* dumpsys's lines, nothing more, and a dumpsys reader reads them */
	snprintf(want, sizeof(want),
	    "Memory snapshot for GPU 0:\n"
	    "Global total: 1000000\n"
	    "Proc %d total: %s\n"
	    "Proc %d total: %s\n"
	    "Memory snapshot for GPU 1:\n"
	    "Global total: N/A\n"
	    "Proc %d total: 8192\n\n",
	    lo, lo == a ? "4096" : "777", hi, hi == a ? "4096" : "777", a);
	expect_text(&d, want, NULL, NULL);
	{
		struct ds_out ds;

		ck_assert_int_eq(ds_parse(want, &ds), 0);
		ck_assert_uint_eq(ds.n, 5);
		ck_assert_uint_eq(ds.row[4].pid, (uint32_t)a);
		ck_assert_uint_eq(ds.row[4].bytes, 8192);
	}

	/* the same as JSON */
	r = vitals(&d, "--json", "gpumem", NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_ptr_nonnull(j);
	st = jm_path(j, "gpu_mem.state");
	ck_assert_ptr_nonnull(st);
	ck_assert_str_eq(jm_get(st, "state")->str, "ok");
	ck_assert_str_eq(jm_get(st, "source")->str, "pinned");
	ck_assert_str_eq(jm_get(st, "map_path")->str, path);
	ck_assert_int_eq(jm_get(st, "capacity")->ll, 1024);
	ck_assert_int_eq(jm_get(st, "entries")->ll, 4);
	procs = jm_path(j, "gpu_mem.procs");
	ck_assert_ptr_nonnull(procs);
	ck_assert_uint_eq(procs->n, 4);
	ck_assert_int_eq(jm_get(&procs->v[0], "bytes")->ll, 1000000);
	ck_assert_int_eq(jm_get(&procs->v[3], "pid")->ll, a);
	ck_assert_int_eq(jm_get(&procs->v[3], "gpu_id")->ll, 1);
	ck_assert_int_eq(jm_get(&procs->v[3], "starttime")->ll,
	    (long long)gd_starttime_of(a));
	ck_assert_str_eq(jm_get(&procs->v[3], "name")->str, "sleep");
	jm_free(j);
	run_free(&r);

	/* growth over stored windows: 4096 at a window end, then 65536;
	 * each waited for in the store (30 s), not slept for */
	snprintf(want, sizeof(want), "Proc %d total: 4096 sleep", a);
	for (int i = 0; i < 300; i++) {
		bool stored;

		r = vitals(&d, "gpumem", "--since", "1h", NULL);
		stored = r.code == 0 && strstr(r.out, want) != NULL;
		run_free(&r);
		if (stored)
			break;
		tu_sleep_ms(100);
	}
	ck_assert_int_eq(gd_drv(fd, 0, a, 65536), 0);
	snprintf(want, sizeof(want),
	    "Proc %d total: 65536 sleep (min 4096, "
	    "max 65536, growth +61440)\n",
	    a);
	for (int i = 0;; i++) {
		r = vitals(&d, "gpumem", "--since", "1h", NULL);
		if ((r.code == 0 && strstr(r.out, want) != NULL) || i == 299)
			break;
		run_free(&r);
		tu_sleep_ms(100);
	}
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, want) != NULL, "no '%s' in:\n%s", want,
	    r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "Over the last 1h00m\n"));
	snprintf(want, sizeof(want),
	    "Proc %d total: 777 [stale] (min 777, "
	    "max 777, growth +0)\n",
	    dead);
	ck_assert_msg(strstr(r.out, want) != NULL, "no '%s' in:\n%s", want,
	    r.out);
	run_free(&r);

	series_check(&d, a);

	/* the newest stored window holds exactly what the map holds */
	{
		char ra[128], rd[64];
		char *rows = stored_rows(&d);

		snprintf(ra, sizeof(ra), "0 %d %llu 65536 0 sleep|", a,
		    (unsigned long long)gd_starttime_of(a));
		snprintf(rd, sizeof(rd), "0 %d 0 777 1 |", dead);
		snprintf(want, sizeof(want),
		    "0 0 0 1000000 0 |%s%s"
		    "1 %d %llu 8192 0 sleep|",
		    a < dead ? ra : rd, a < dead ? rd : ra, a,
		    (unsigned long long)gd_starttime_of(a));
		ck_assert_str_eq(rows, want);
		free(rows);
	}

	/* health and the dump carry the state too. Its counters are the
	 * open window's so far: right after a close (the waits above end
	 * at one) no walk has run yet, so wait for the first (100 ms). */
	for (int i = 0;; i++) {
		r = vitals(&d, "--json", "health", NULL, NULL);
		ck_assert_int_eq(r.code, 0);
		j = jm_parse(r.out, strlen(r.out));
		ck_assert_ptr_nonnull(j);
		walks = jm_path(j, "health.gpu_mem.traversals")->ll;
		if (walks > 0 || i == 50)
			break;
		jm_free(j);
		run_free(&r);
		tu_sleep_ms(20);
	}
	ck_assert_str_eq(jm_path(j, "health.gpu_mem.state")->str, "ok");
	ck_assert_str_eq(jm_path(j, "health.gpu_mem.map_path")->str, path);
	/* this kernel has batch lookups: every walk of the window used one */
	ck_assert_int_gt(walks, 0);
	ck_assert_int_eq(jm_path(j, "health.gpu_mem.batch_walks")->ll, walks);
	jm_free(j);
	run_free(&r);
	r = vitals(&d, "health", NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	snprintf(want, sizeof(want),
	    "GPU memory: ok; pinned map %s, 4 of "
	    "1024 entries\n",
	    path);
	/* health is prose, wrapped at 80 columns as vitals wraps it */
	{
		struct sbuf fit;

		sbuf_init(&fit);
		text_fit(&fit, want, TEXT_WIDTH);
		ck_assert_msg(strstr(r.out, sbuf_str(&fit)) != NULL,
		    "no '%s' in:\n%s", sbuf_str(&fit), r.out);
		sbuf_free(&fit);
	}
	ck_assert_ptr_nonnull(strstr(r.out, " by batch lookup\n"));
	run_free(&r);
	/* and so did the stored windows' (schema v17 columns) */
	{
		char db[PATH_MAX];
		sqlite3_stmt *q;
		sqlite3 *h;

		snprintf(db, sizeof(db), "%s/vitals.db", d.dir);
		ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY,
				     NULL),
		    SQLITE_OK);
		sqlite3_busy_timeout(h, 2000);
		ck_assert_int_eq(sqlite3_prepare_v2(h,
				     "SELECT sum(traversals), sum(batch_walks)"
				     " FROM window_gpumem",
				     -1, &q, NULL),
		    SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
		ck_assert_int_gt(sqlite3_column_int64(q, 0), 0);
		ck_assert_int_eq(sqlite3_column_int64(q, 1),
		    sqlite3_column_int64(q, 0));
		sqlite3_finalize(q);
		sqlite3_close(h);
	}
	r = vitals(&d, "dump", NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out,
	    "gpu memory: ok (pinned map, "
	    "4 of 1024 entries)\n"));
	run_free(&r);

	td_stop(&d);
	gd_reap(a);
	close(fd);
	unlink(path);
}
END_TEST

/* The traversal error state and the own program's absent tracepoint,
 * as the client reports them. */
START_TEST(test_daemon_error_and_own)
{
	char path[PATH_MAX], conf[PATH_MAX * 2 + 256];
	struct td d;
	int fd;

	gd_map_path(path, sizeof(path), "map_gpuMem_refused");
	fd = gd_aosp_map();
	gd_pin(fd, path);
	close(fd);
	snprintf(conf, sizeof(conf),
	    "gpumem_map = %s\n"
	    "gpumem_load = map-only\nbpf_load = off\n",
	    path);
	daemon_start_opt(&d, conf, true);
	snprintf(conf, sizeof(conf),
	    "GPU memory: traversal error (traversal "
	    "failed: Operation not permitted); pinned map %s, 0 of 1024 "
	    "entries\n",
	    path);
	expect_text(&d, conf, "--verbose", NULL);
	/* dumpsys says "empty" when its first get-next-key fails */
	expect_text(&d, "GPU memory total usage map is empty\n\n", NULL, NULL);
	td_stop(&d);
	unlink(path);

	if (gd_tracepoint_exists())
		return;
	gd_map_path(path, sizeof(path), "map_gpuMem_none");
	snprintf(conf, sizeof(conf),
	    "gpumem_map = %s\nbpffs = %s/own\n"
	    "gpumem_attach_s = 1\n",
	    path, gd_bpfdir);
	daemon_start(&d, conf);
#ifdef HAVE_BPF
	expect_text(&d,
	    "GPU memory: not initialised (tracepoint absent: No "
	    "such file or directory); own map, 0 of 1024 entries\n",
	    "-v", NULL);
#else
	expect_text(&d,
	    "GPU memory: not initialised (no map); none map, "
	    "0 of 0 entries\n",
	    "-v", NULL);
#endif
	expect_text(&d, "Failed to initialize GPU memory eBPF\n\n", NULL, NULL);
	td_stop(&d);
}
END_TEST

static Suite *
gpumem_daemon_suite(void)
{
	Suite *s = suite_create("gpumem_daemon");
	TCase *td = tcase_create("daemon");

	tcase_add_checked_fixture(td, gpumem_setup_bpffs,
	    gpumem_teardown_bpffs);
	tcase_set_timeout(td, 120);
	tcase_add_test(td, test_daemon_gpumem);
	tcase_add_test(td, test_daemon_error_and_own);
	suite_add_tcase(s, td);
	return s;
}

int
main(void)
{
	if (!tu_need_root("BPF maps and the daemon"))
		return 77;
	return tu_run(gpumem_daemon_suite());
}
