/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store under the real daemon: SIGKILL at random moments, a corrupt
 * database at start, and a full disk (a small tmpfs, root only). The daemon
 * binary is the one meson built; the database is read back with the store's
 * own reader and checked with SQLite's integrity_check. Each window is
 * its own commit into vitals.db here (--store-commit-s 0): the spool's
 * batches have their own test, check_spool_daemon.
 *
 * Isolated from other daemons: each run of this program gives its daemons
 * their own state directories, sockets (in the state directory), BPF pin
 * directory (/sys/fs/bpf/vitals_sd_<pid>) and ftrace instance
 * (vitals_sd_<pid>), removed at its end, and changes no sysctl or global
 * mount (its tmpfs mounts are on its own directories). So meson runs its
 * test cases as separate tests side by side (CK_RUN_CASE, one case each,
 * tests/meson.build): they mostly wait on 1 s windows.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "vitalsd.h"

#define TRACEFS "/sys/kernel/tracing"

/* this process's pin directory, ftrace instance, and the configuration
 * file naming the instance (there is no flag for it) */
static char bpffs[64], instance[64], conf[PATH_MAX];

static int64_t
now_wall(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Start vitalsd on dir with 100 ms samples and 1 s windows; a spool in
 * spool_dir moving every commit_s (NULL: each window committed alone). */
static pid_t
start_daemon_spool(const char *dir, const char *extra, const char *spool_dir,
    const char *commit_s)
{
	const char *argv[] = { "vitalsd", "-f", "-c", conf, "--bpffs", bpffs,
		"--state-dir", dir, "--store-commit-s",
		spool_dir ? commit_s : "0", "--interval-ms", "100",
		"--window-s", "1", "--threads", extra ? extra : "none",
		spool_dir ? "--store-spool-dir" : NULL, spool_dir, NULL };
	char log[PATH_MAX];

	snprintf(log, sizeof(log), "%s.log", dir);
	return td_exec(log, TD_LOG_APPEND, argv, NULL, NULL);
}

static pid_t
start_daemon(const char *dir, const char *extra)
{
	return start_daemon_spool(dir, extra, NULL, NULL);
}

/* A passing test's directory and the daemon's log beside it go (a
 * failing one leaves both: ck_assert ends the test before this). */
static void
dir_done(const char *dir)
{
	char log[PATH_MAX];

	snprintf(log, sizeof(log), "%s.log", dir);
	unlink(log);
	tu_rmtree(dir);
}

/* Until the daemon of dir logged its window n (30 s at most): a loaded
 * machine may take longer to start than a fixed sleep allows. */
static void
wait_window(const char *dir, unsigned n)
{
	char log[PATH_MAX], want[32];

	snprintf(log, sizeof(log), "%s.log", dir);
	snprintf(want, sizeof(want), "window %u:", n);
	ck_assert_msg(td_log_until(0, log, want, 300, 100), "no \"%s\" in %s",
	    want, log);
}

static void
assert_integrity(const char *db)
{
	sqlite3 *h;
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1,
			     &st, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(h);
}

struct daemon_run {
	int64_t start_ns, stop_ns;
	int64_t up_ns; /* its first sample's (its log), 0: none */
};

/* The wall time of the first line of a daemon's log, from byte off on,
 * that holds needle ("vitalsd[<s>.<ms>] ..."): 0 when none does. */
static int64_t
logged_at(const char *log, long off, const char *needle)
{
	FILE *f = fopen(log, "r");
	char line[4096];
	int64_t ns = 0;

	if (f == NULL)
		return 0;
	if (fseek(f, off, SEEK_SET) == 0)
		while (ns == 0 && fgets(line, sizeof(line), f))
			if (strstr(line, needle) &&
			    strncmp(line, "vitalsd[", 8) == 0)
				ns = (int64_t)(strtod(line + 8, NULL) * 1e9);
	fclose(f);
	return ns;
}

/* All level-0 windows, oldest first. */
static struct window **
read_windows(const char *db, size_t *ret_n)
{
	struct store_opts o;
	struct store *s;
	struct window **w = NULL;

	store_opts_default(&o);
	ck_assert_int_eq(store_open(db, &o, &s), 0);
	ck_assert_int_eq(store_windows(s, 0, INT64_MAX, 0, &w, ret_n), 0);
	store_close(s);
	return w;
}

static void
free_windows(struct window **w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		window_free(w[i]);
	free(w);
}

/*
 * Windows of one daemon run follow each other without a gap or overlap:
 * each starts at the sample that closed the one before.
 */
static size_t
check_run(struct window **w, size_t n, const struct daemon_run *r)
{
	const struct window *prev = NULL;
	size_t i, count = 0;

	for (i = 0; i < n; i++) {
		if (w[i]->wall_start_ns < r->start_ns ||
		    w[i]->wall_start_ns > r->stop_ns)
			continue;
		if (prev) {
			ck_assert_str_eq(prev->boot_id, w[i]->boot_id);
			ck_assert_int_eq(w[i]->mono_start_ns,
			    prev->mono_end_ns);
			ck_assert_uint_eq(w[i]->seq, prev->seq + 1);
		}
		prev = w[i];
		count++;
	}
	return count;
}

START_TEST(test_sigkill_20_times)
{
	char *dir = tu_mkdtemp("crash");
	char db[PATH_MAX], log[PATH_MAX];
	struct daemon_run runs[11];
	unsigned k, nruns = 11, ms_of[11];
	size_t n, i, j, total;
	struct window **w;

	/* 22 runs in two halves on two databases, _i 0 and 1 (two cases
	 * side by side), the same draws as one loop of 22 */
	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	snprintf(log, sizeof(log), "%s.log", dir);
	srand(20261130);
	for (k = 0; k < nruns * (unsigned)_i; k++)
		(void)rand();
	for (k = 0; k < nruns; k++) {
		unsigned ms = 300 + (unsigned)(rand() % 2200);
		struct stat st;
		long off = stat(log, &st) == 0 ? (long)st.st_size : 0;
		pid_t pid;
		int status;

		ms_of[k] = ms;
		runs[k].start_ns = now_wall();
		pid = start_daemon(dir, k % 2 ? "changed" : "none");
		/* The kill comes ms after the store's open (its log line),
		 * not after the exec: the start before it (BPF loads, up to
		 * 3 s on a loaded machine, beside the other cases' daemons)
		 * would take the short runs whole and test nothing of the
		 * store. */
		for (i = 0; logged_at(log, off, "] store /") == 0; i++) {
			ck_assert_msg(i < 3000, "no store opened in %s", log);
			tu_sleep_ms(10);
		}
		tu_sleep_ms(ms);
		runs[k].stop_ns = now_wall();
		status = td_kill(pid, SIGKILL);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		runs[k].up_ns = logged_at(log, off, "] sampling every ");
		assert_integrity(db);
	}

	w = read_windows(db, &n);
	ck_assert_uint_gt(n, 0);
	/* No window twice: (boot, start) is unique and windows never
	 * overlap in time. */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			ck_assert(!(strcmp(w[i]->boot_id, w[j]->boot_id) == 0 &&
			    w[i]->mono_start_ns == w[j]->mono_start_ns));
	for (i = 1; i < n; i++)
		ck_assert_int_ge(w[i]->mono_start_ns, w[i - 1]->mono_end_ns);

	total = 0;
	/* a run killed before its first sample is fine (its kill is timed
	 * from the store's open), but not one given 2 s after the open (two
	 * of each half's draws): else nothing below is checked */
	for (k = 0; k < nruns; k++)
		ck_assert_msg(ms_of[k] < 2000 || runs[k].up_ns != 0,
		    "run %u: killed %u ms after the store's open, no sample", k,
		    ms_of[k]);
	for (k = 0; k < nruns; k++) {
		double secs = runs[k].up_ns ?
		    (double)(runs[k].stop_ns - runs[k].up_ns) / NSEC_PER_SEC :
		    0;
		size_t got = check_run(w, n, &runs[k]);

		/*
		 * Only the open window may be lost: a run that sampled for s
		 * seconds closed floor(s − 0.4) windows at least (the first
		 * is partial: windows end on the second). Counted from its
		 * first sample, as its log says, not from its start: a
		 * loaded machine (the other cases' daemons starting beside
		 * it) may take most of a short run to start.
		 */
		if (secs >= 1.5)
			ck_assert_msg(got + 1 >= (size_t)(secs - 0.4),
			    "run %u: %.2f s but %zu windows stored", k, secs,
			    got);
		total += got;
	}
	ck_assert_uint_eq(total, n);
	free_windows(w, n);
	dir_done(dir);
	free(dir);
}
END_TEST

/* In the daemon's child: stderr into the pipe the test reads. */
static void
stderr_to_pipe(void *arg)
{
	const int *pfd = arg;

	dup2(pfd[1], 2);
	close(pfd[0]);
}

/*
 * A window announced as closed (its log line) is in the store: a kill 0.5
 * to 1.5 ms after the announcement must not lose it, only the open one.
 */
START_TEST(test_kill_after_close)
{
	char *dir = tu_mkdtemp("killclose");
	char db[PATH_MAX];
	unsigned k, lost = 0, runs = 6;

	/* 12 kills in two halves, _i 0 and 1 (two cases side by side: 50 s
	 * one after the other), the same draws as one loop of 12 */
	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	srand(20261201);
	for (k = 0; k < runs * (unsigned)_i; k++) {
		(void)rand();
		(void)rand();
	}
	for (k = 0; k < runs; k++) {
		unsigned long long seq = 0, want = 2 + (unsigned)(rand() % 2);
		const char *argv[] = { "vitalsd", "-f", "-c", conf, "--bpffs",
			bpffs, "--state-dir", dir, "--store-commit-s", "0",
			"--interval-ms", "100", "--window-s", "1", "--threads",
			"all", NULL };
		char line[4096], *p;
		int pfd[2], status;
		size_t n, i;
		struct window **w;
		bool found = false;
		FILE *f;
		pid_t pid;

		ck_assert_int_eq(pipe(pfd), 0);
		pid = td_exec(NULL, TD_LOG_APPEND, argv, stderr_to_pipe, pfd);
		close(pfd[1]);
		f = fdopen(pfd[0], "r");
		ck_assert_ptr_nonnull(f);
		while (fgets(line, sizeof(line), f) != NULL) {
			if ((p = strstr(line, "] window ")) == NULL)
				continue;
			seq = strtoull(p + 9, NULL, 10);
			if (seq >= want)
				break;
		}
		/* 0.5 .. 1.5 ms after the window was said to be closed */
		{
			struct timespec ts = { 0,
				500000 + (long)(rand() % 1000) * 1000 };

			nanosleep(&ts, NULL);
		}
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		fclose(f);
		ck_assert_uint_ge(seq, want);
		assert_integrity(db);
		w = read_windows(db, &n);
		for (i = 0; i < n; i++)
			if (w[i]->seq == seq)
				found = true;
		if (!found)
			lost++;
		free_windows(w, n);
		unlink(db);
		/* the log beside it goes on over the runs */
		tu_rmtree(dir);
		ck_assert_int_eq(mkdir(dir, 0700), 0);
	}
	ck_assert_msg(lost == 0, "%u of %u closed windows lost to a kill", lost,
	    runs);
	dir_done(dir);
	free(dir);
}
END_TEST

static bool
has_corrupt_copy(const char *dir, char *ret, size_t retsz)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool found = false;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "vitals.db.corrupt-", 18) == 0 &&
		    strchr(de->d_name + 18, '-') == NULL) {
			snprintf(ret, retsz, "%s/%s", dir, de->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

static void
corrupt_case(const char *garbage, size_t len)
{
	char *dir = tu_mkdtemp("corrupt");
	char db[PATH_MAX], moved[PATH_MAX], log[PATH_MAX];
	struct window **w;
	struct stat st;
	size_t n;
	pid_t pid;
	int status;

	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	snprintf(log, sizeof(log), "%s.log", dir);
	ck_assert_int_eq(tu_write(db, garbage, len), 0);
	pid = start_daemon(dir, NULL);
	wait_window(dir, 2);
	status = td_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* Kept for forensics, byte for byte. */
	ck_assert(has_corrupt_copy(dir, moved, sizeof(moved)));
	ck_assert_int_eq(stat(moved, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)len);
	assert_integrity(db);
	w = read_windows(db, &n);
	ck_assert_uint_ge(n, 2);
	free_windows(w, n);
	{
		FILE *f = fopen(log, "r");
		char line[1024];
		bool said = false;

		ck_assert_ptr_nonnull(f);
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "corrupt"))
				said = true;
		fclose(f);
		ck_assert_msg(said, "the log does not report the corruption");
	}
	dir_done(dir);
	free(dir);
}

START_TEST(test_corrupt_garbage)
{
	char junk[8192];
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	corrupt_case(junk, sizeof(junk));
}
END_TEST

START_TEST(test_corrupt_truncated)
{
	char *dir = tu_mkdtemp("trunc");
	char db[PATH_MAX];
	FILE *f;
	char *buf;
	long len;
	pid_t pid;

	/* A real database of ours, then cut in half. */
	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	pid = start_daemon(dir, "all");
	wait_window(dir, 2);
	td_kill(pid, SIGTERM);
	f = fopen(db, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	ck_assert_int_gt(len, 8192);
	rewind(f);
	buf = malloc((size_t)len);
	ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	corrupt_case(buf, (size_t)len / 2);
	free(buf);
	dir_done(dir);
	free(dir);
}
END_TEST

START_TEST(test_not_sqlite)
{
	const char *text = "this is a configuration file, not a database\n";

	corrupt_case(text, strlen(text));
}
END_TEST

static long
fill_disk(const char *path)
{
	static char block[65536];
	long total = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	memset(block, 0x5a, sizeof(block));
	for (;;) {
		ssize_t n = write(fd, block, sizeof(block));

		if (n <= 0)
			break;
		total += n;
	}
	/* Smaller writes take the last pages too. */
	for (;;) {
		ssize_t n = write(fd, block, 512);

		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	return total;
}

START_TEST(test_full_disk)
{
	char *dir = tu_mkdtemp("full");
	char db[PATH_MAX], filler[PATH_MAX], log[PATH_MAX];
	struct window **w;
	struct daemon_run run;
	size_t n, i, got, full_seen = 0;
	pid_t pid;
	int status;

	/* a state directory writable by others is refused: not 1777 */
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", 0, "size=3m,mode=0750"),
	    0);
	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	snprintf(log, sizeof(log), "%s.log", dir);

	run.start_ns = now_wall();
	pid = start_daemon(dir, "none");
	wait_window(dir, 2);
	ck_assert_int_gt(fill_disk(filler), 0);
	/* Full for a while: sampling goes on, windows queue. */
	tu_sleep_ms(5000);
	ck_assert_int_eq(kill(pid, 0), 0);
	unlink(filler);
	tu_sleep_ms(3000);
	run.stop_ns = now_wall();
	status = td_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_integrity(db);

	w = read_windows(db, &n);
	got = check_run(w, n, &run);
	/* 10.5 s of sampling in 1 s windows, none lost to the full disk. */
	ck_assert_msg(got >= 9, "only %zu windows stored", got);
	for (i = 0; i < n; i++)
		if (w[i]->health.store_state == STORE_FULL)
			full_seen++;
	ck_assert_msg(full_seen >= 2,
	    "windows do not record the full store (%zu)", full_seen);
	free_windows(w, n);
	ck_assert_int_eq(umount(dir), 0);
	unlink(log);
	rmdir(dir);
	free(dir);
}
END_TEST

/* `vitals --json health` of the daemon on dir, into buf. */
static void
health_json(const char *dir, char *buf, size_t len)
{
	char cmd[PATH_MAX * 2];
	const char *b = getenv("VITALS_BUILDDIR");
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd),
	    "%s/client/vitals --socket %s/vitalsd.sock"
	    " --json health 2>&1",
	    b ? b : ".", dir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	pclose(f);
}

/* `vitals heapprofd start --pid <the test> --dry-run` on dir: its
 * output and errors into buf. */
static void
hp_dry_run(const char *dir, char *buf, size_t len)
{
	char cmd[PATH_MAX * 2];
	const char *b = getenv("VITALS_BUILDDIR");
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd),
	    "%s/client/vitals --socket %s/vitalsd.sock"
	    " heapprofd start --pid %d --dry-run 2>&1",
	    b ? b : ".", dir, (int)getpid());
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	pclose(f);
}

/* The integer after "key": in a JSON text (0 if absent). */
static long long
json_int(const char *j, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	if ((p = strstr(j, k)) == NULL)
		return 0;
	p += strlen(k);
	while (*p == ' ' || *p == '"')
		p++;
	return strtoll(p, NULL, 10);
}

/*
 * Health says what the store holds and what the daemon wrote: after a
 * restart on a store with windows, at once (the writer reads them before
 * its first maintenance pass), from the real /proc/self/io.
 */
START_TEST(test_usage_in_health)
{
	char *dir = tu_mkdtemp("usage");
	char j[16384];
	long long hist, nwin, holds;
	unsigned i;
	pid_t pid;
	int status;

	pid = start_daemon(dir, "none");
	wait_window(dir, 3);
	status = td_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pid = start_daemon(dir, "none");
	/* until the socket answers: well before the first maintenance */
	for (i = 0; i < 100; i++) {
		tu_sleep_ms(100);
		health_json(dir, j, sizeof(j));
		if (json_int(j, "history_windows") > 0)
			break;
	}
	nwin = json_int(j, "history_windows");
	hist = json_int(j, "history_ns");
	holds = json_int(j, "bound_holds_ns");
	ck_assert_msg(nwin >= 2, "%s", j);
	/* 1 s windows, aligned on the second: a run's first is partial */
	ck_assert_msg(hist >= (nwin - 1) * 900000000LL &&
		hist <= nwin * 1100000000LL,
	    "%lld ns in %lld windows", hist, nwin);
	/* 32 MiB at some KiB per second of history: far more than held */
	ck_assert_msg(holds > 100 * hist, "%s", j);
	ck_assert_msg(json_int(j, "io_err") == 0, "%s", j);
	ck_assert_msg(json_int(j, "history_wall_last_ns") >
		json_int(j, "history_wall_first_ns"),
	    "%s", j);
	status = td_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	dir_done(dir);
	free(dir);
}
END_TEST

/*
 * A store that cannot be opened at start (vitals.db is a directory, the
 * disk is full) is retried: health says closed, why, how often tried and
 * when next; once the cause is gone the queued windows are written.
 */
static void
open_retry_case(const char *dir, bool full)
{
	char db[PATH_MAX], filler[PATH_MAX], j[16384];
	struct window **w;
	struct daemon_run run;
	size_t n, got;
	pid_t pid;
	int status;

	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	if (full)
		ck_assert_int_gt(fill_disk(filler), 0);
	else
		ck_assert_int_eq(mkdir(db, 0700), 0);
	run.start_ns = now_wall();
	pid = start_daemon(dir, "none");
	/* two windows queued, 3.5 s at least after the start (a loaded
	 * machine may take longer to start than that allows) */
	wait_window(dir, 2);
	if (now_wall() - run.start_ns < 3500 * NSEC_PER_MSEC)
		tu_sleep_ms((unsigned)((3500 * NSEC_PER_MSEC -
					   (now_wall() - run.start_ns)) /
		    NSEC_PER_MSEC));
	health_json(dir, j, sizeof(j));
	ck_assert_msg(strstr(j, "\"state\": \"closed\"") ||
		strstr(j, "\"state\":\"closed\""),
	    "%s", j);
	ck_assert_msg(json_int(j, "last_err") < 0, "%s", j);
	ck_assert_msg(json_int(j, "open_retries") >= 1, "%s", j);
	ck_assert_msg(json_int(j, "next_retry_ms") > 0, "%s", j);
	ck_assert_msg(json_int(j, "queued") >= 2, "%s", j);
	/* heapprofd could not read its session records: no session */
	hp_dry_run(dir, j, sizeof(j));
	ck_assert_msg(strstr(j, "session records not read yet"), "%s", j);
	/* The cause goes away. */
	if (full)
		unlink(filler);
	else
		ck_assert_int_eq(rmdir(db), 0);
	tu_sleep_ms(12000);
	health_json(dir, j, sizeof(j));
	ck_assert_msg(strstr(j, "\"state\": \"ok\"") ||
		strstr(j, "\"state\":\"ok\""),
	    "%s", j);
	ck_assert_msg(json_int(j, "last_err") == 0, "%s", j);
	ck_assert_msg(json_int(j, "windows_written") >= 12, "%s", j);
	/* the writer thread read them once the store opened */
	hp_dry_run(dir, j, sizeof(j));
	ck_assert_msg(!strstr(j, "session records not read"), "%s", j);
	run.stop_ns = now_wall();
	status = td_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_integrity(db);
	w = read_windows(db, &n);
	got = check_run(w, n, &run);
	/* ~15.5 s in 1 s windows: none lost while the store was shut. */
	ck_assert_msg(got >= 14, "only %zu windows stored", got);
	free_windows(w, n);
}

START_TEST(test_open_retry_directory)
{
	char *dir = tu_mkdtemp("isdir");

	open_retry_case(dir, false);
	dir_done(dir);
	free(dir);
}
END_TEST

/* The tmpfs is 0750: a world-writable state directory is refused. */
START_TEST(test_open_retry_full)
{
	char *dir = tu_mkdtemp("fullstart");

	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", 0, "size=2m,mode=0750"),
	    0);
	open_retry_case(dir, true);
	ck_assert_int_eq(umount(dir), 0);
	dir_done(dir);
	free(dir);
}
END_TEST

/*
 * The -shm truncated (and made unwritable) under the running daemon, again
 * and again: it used to die of SIGBUS (exit 135). It goes on writing,
 * counts the repairs in health, and stops cleanly.
 */
/* The last "store: N windows written, M write failures" line of the
 * daemon's log (at its exit): N, and M in *ret_failures. */
static unsigned long long
log_written(const char *dir, unsigned long long *ret_failures)
{
	char log[PATH_MAX], line[512];
	unsigned long long n = 0, f = 0, a, b;
	bool found = false;
	FILE *fp;

	snprintf(log, sizeof(log), "%s.log", dir);
	ck_assert_ptr_nonnull(fp = fopen(log, "r"));
	while (fgets(line, sizeof(line), fp)) {
		const char *p = strstr(line, "store: ");

		if (p &&
		    sscanf(p, "store: %llu windows written, %llu write", &a,
			&b) == 2) {
			n = a;
			f = b;
			found = true;
		}
	}
	fclose(fp);
	ck_assert_msg(found, "no \"windows written\" line in %s", log);
	*ret_failures = f;
	return n;
}

/* Every -shm in dir cut to 0 bytes; every third round (k % 3 == 2) also
 * made read-only. How many were cut. */
static unsigned
cut_shms(const char *dir, unsigned k)
{
	char p[PATH_MAX];
	struct dirent *e;
	unsigned n = 0;
	size_t l;
	DIR *d;

	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((e = readdir(d)) != NULL) {
		l = strlen(e->d_name);
		if (l < 4 || strcmp(e->d_name + l - 4, "-shm") != 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (truncate(p, 0) == 0)
			n++;
		if (k % 3 == 2)
			(void)chmod(p, 0400);
	}
	closedir(d);
	return n;
}

/*
 * The -shm files cut (and made read-only) every period_ms for rounds
 * rounds under a daemon on dir (the spool in spool_dir, NULL: none):
 * it must not die, must count the repairs, must stop cleanly, and every
 * window it says it wrote must be in the file, one after the other. A
 * commit after a fault writes a valid header over an index whose earlier
 * entries are zeros: a connection trusting it, or a checkpoint through
 * it, lost committed windows with the file intact (before 53b097c the
 * writer's store; before the next commit the main store's connection,
 * which maps the spool's index through its attachment and never healed
 * when the spool took the puts).
 */
static void
shm_cut_case(const char *dir, const char *spool_dir, unsigned rounds,
    unsigned period_ms)
{
	char db[PATH_MAX], j[16384];
	unsigned long long written, failures;
	struct window **w;
	struct daemon_run run;
	size_t n, got;
	unsigned k, cut = 0;
	pid_t pid;
	int status;

	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	run.start_ns = now_wall();
	pid = start_daemon_spool(dir, "changed", spool_dir, "2");
	wait_window(dir, 1);
	for (k = 0; k < rounds; k++) {
		cut += cut_shms(dir, k);
		if (spool_dir)
			cut += cut_shms(spool_dir, k);
		tu_sleep_ms(period_ms);
		ck_assert_msg(kill(pid, 0) == 0, "the daemon died");
	}
	ck_assert_msg(cut >= rounds / 2, "only %u -shm files cut", cut);
	health_json(dir, j, sizeof(j));
	ck_assert_msg(json_int(j, "shm_faults") >= 3, "%.2000s",
	    strstr(j, "\"store\"") ? strstr(j, "\"store\"") : j);
	if (spool_dir) /* the spool took the puts, moves ran */
		ck_assert_msg(strstr(j, "\"spool_on\":true") &&
			json_int(j, "spool_flushes") >= 2,
		    "%.2000s",
		    strstr(j, "\"store\"") ? strstr(j, "\"store\"") : j);
	ck_assert_msg(strstr(j, "\"state\": \"ok\"") ||
		strstr(j, "\"state\":\"ok\""),
	    "%s", j);
	run.stop_ns = now_wall();
	status = td_kill(pid, SIGTERM);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "status %d", status);
	assert_integrity(db);
	written = log_written(dir, &failures);
	w = read_windows(db, &n);
	got = check_run(w, n, &run);
	ck_assert_msg(written >= rounds * period_ms / 2000,
	    "only %llu windows written", written);
	ck_assert_msg(got == written,
	    "%zu windows stored of %llu written (%llu write failures)", got,
	    written, failures);
	free_windows(w, n);
}

/*
 * The -shm truncated (and made unwritable) under the running daemon, again
 * and again: it used to die of SIGBUS (exit 135). It goes on writing,
 * counts the repairs in health, stops cleanly and loses no window.
 */
START_TEST(test_shm_cut)
{
	char *dir = tu_mkdtemp("shmcut");

	shm_cut_case(dir, NULL, 12, 500);
	dir_done(dir);
	free(dir);
}
END_TEST

/* The same with the spool (the default): the spool's index and the main
 * store's attachment of it are cut, moves every 2 s. */
START_TEST(test_shm_cut_spool)
{
	char *dir = tu_mkdtemp("shmcutsp");
	char spool[] = "/dev/shm/vitals-shmspool-XXXXXX"; /* a RAM fs */

	ck_assert_ptr_nonnull(mkdtemp(spool));
	shm_cut_case(dir, spool, 40, 150);
	dir_done(dir);
	tu_rmtree(spool);
	free(dir);
}
END_TEST

/* The file from byte off on, NUL-terminated (the caller frees). */
static char *
file_from(const char *path, long off)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = (size_t)(ftell(f) - off);
	buf = malloc(n + 1);
	ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
	buf[fread(buf, 1, n, f)] = '\0';
	fclose(f);
	return buf;
}

static long
file_len(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (long)st.st_size;
}

/* Each window line of text: its seq into seqs (at most max); whether it
 * also holds needle into has. How many. */
static size_t
window_lines(char *text, const char *needle, unsigned long long *seqs,
    bool *has, size_t max)
{
	char *line, *save = NULL, *p;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		if ((p = strstr(line, "] window ")) == NULL)
			continue;
		seqs[n] = strtoull(p + 9, NULL, 10);
		has[n++] = strstr(line, needle) != NULL;
	}
	return n;
}

/*
 * Another connection holds the database's write lock past the writer's
 * busy timeout (2 s). A window's line comes when the writer has committed
 * it, or says why not: during the hold every line says "not committed
 * yet" (none claims a commit), sampling goes on, and once the lock goes
 * every window is written, the ones announced uncommitted included.
 */
START_TEST(test_held_store_lines)
{
	char *dir = tu_mkdtemp("held");
	char db[PATH_MAX], log[PATH_MAX], *text;
	unsigned long long seqs[64], told[64];
	bool has[64], found;
	struct daemon_run run;
	struct window **w;
	size_t n, i, k, nt, got;
	sqlite3 *h;
	long off;
	pid_t pid;
	int status;

	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	snprintf(log, sizeof(log), "%s.log", dir);
	run.start_ns = now_wall();
	pid = start_daemon(dir, "none");
	wait_window(dir, 2);
	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL),
	    SQLITE_OK);
	sqlite3_busy_timeout(h, 5000);
	ck_assert_int_eq(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL),
	    SQLITE_OK);
	off = file_len(log);
	/* a window's line comes after the busy timeout: 3.5 s, or longer
	 * on a loaded machine (12 s at most) */
	tu_sleep_ms(3500);
	for (k = 0;; k++) {
		text = file_from(log, off);
		nt = window_lines(text, "not committed yet", told, has, 64);
		free(text);
		if (nt >= 1 || k == 17)
			break;
		tu_sleep_ms(500);
	}
	ck_assert_msg(nt >= 1, "no window line while the store was held");
	for (i = 0; i < nt; i++)
		ck_assert_msg(has[i],
		    "window %llu announced as committed "
		    "while the store was held",
		    told[i]);
	ck_assert_int_eq(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(h);
	/* the writer's next try (1 s backoff) gets through */
	tu_sleep_ms(3000);
	text = file_from(log, off);
	n = window_lines(text, "store ok (queued", seqs, has, 64);
	free(text);
	found = false;
	for (i = nt; i < n; i++)
		found = found || has[i];
	ck_assert_msg(found, "no window committed after the lock went");
	run.stop_ns = now_wall();
	status = td_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_integrity(db);
	w = read_windows(db, &n);
	/* ~9 s in 1 s windows, one after the other, none lost to the hold */
	got = check_run(w, n, &run);
	ck_assert_msg(got >= 7, "only %zu windows stored", got);
	for (k = 0; k < nt; k++) {
		found = false;
		for (i = 0; i < n; i++)
			found = found || w[i]->seq == told[k];
		ck_assert_msg(found, "window %llu not stored", told[k]);
	}
	free_windows(w, n);
	dir_done(dir);
	free(dir);
}
END_TEST

/*
 * Before a case (an unchecked fixture: once, in the runner): the BPF
 * programs loaded and pinned under this process's pin directory, by a
 * daemon run to its first window. The cases' daemons then start as they
 * did one suite after another on /sys/fs/bpf/vitals, its pins left by the
 * daemon before: reused. A first load is the verifier's work, seconds
 * beside the other cases' first loads: longer than test_sigkill_20_times'
 * shortest run, test_shm_cut's and the open retries' first waits.
 */
static void
load_pins(void)
{
	char *dir = tu_mkdtemp("sd-pins");
	char log[PATH_MAX];
	pid_t pid;
	int status;

	ck_assert_ptr_nonnull(dir);
	snprintf(log, sizeof(log), "%s.log", dir);
	pid = start_daemon(dir, NULL);
	wait_window(dir, 1);
	status = td_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	dir_done(dir);
	free(dir);
}

/* The test cases, each a test of its own to meson (tu_cases_ok). */
struct tcase_def {
	const char *name;
	const TTest *tests[8];
	int i; /* their _i */
};

#define NCASES 7

int
main(void)
{
	Suite *s = suite_create("store_daemon");
	/* (the TTest pointers are not constants: a table of main's) */
	const struct tcase_def cases[NCASES] = {
		/* 11 runs of 0.3 to 2.5 s after the store's open each */
		{ "kill", { test_sigkill_20_times }, 0 },
		{ "kill2", { test_sigkill_20_times }, 1 },
		/* 6 runs to window 2 or 3 each: ~25 s */
		{ "killclose", { test_kill_after_close }, 0 },
		{ "killclose2", { test_kill_after_close }, 1 },
		/* 15.5 s each */
		{ "retry", { test_open_retry_directory, test_open_retry_full },
		    0 },
		/* 9 + 10.5 + 7.5 + 8 s */
		{ "faults",
		    { test_held_store_lines, test_full_disk, test_shm_cut,
			test_shm_cut_spool },
		    0 },
		/* 3 x 4 + 5 s */
		{ "corrupt",
		    { test_corrupt_garbage, test_corrupt_truncated,
			test_not_sqlite, test_usage_in_health },
		    0 },
	};
	const char *names[NCASES + 1];
	char *confdir, path[PATH_MAX + 32];
	size_t i, j;
	int r;

	if (!tu_need_root("tmpfs mount"))
		return 77;
	for (i = 0; i < NCASES; i++)
		names[i] = cases[i].name;
	names[NCASES] = NULL;
	if (!tu_cases_ok(names))
		return 1;
	snprintf(bpffs, sizeof(bpffs), "/sys/fs/bpf/vitals_sd_%d",
	    (int)getpid());
	snprintf(instance, sizeof(instance), "vitals_sd_%d", (int)getpid());
	if ((confdir = tu_mkdtemp("sd-conf")) == NULL)
		return 1;
	snprintf(conf, sizeof(conf), "%s/vitalsd.conf", confdir);
	snprintf(path, sizeof(path), "ftrace_instance = %s\n", instance);
	if (tu_writes(conf, path) < 0)
		return 1;
	for (i = 0; i < NCASES; i++) {
		TCase *tc = tcase_create(cases[i].name);

		tcase_set_timeout(tc, 240);
		tcase_add_unchecked_fixture(tc, load_pins, NULL);
		for (j = 0; cases[i].tests[j]; j++)
			tcase_add_loop_test(tc, cases[i].tests[j], cases[i].i,
			    cases[i].i + 1);
		suite_add_tcase(s, tc);
	}
	r = tu_run(s);
	/* a daemon killed leaves its pins and instance: ours go */
	tu_rmtree(bpffs);
	snprintf(path, sizeof(path), TRACEFS "/instances/%s", instance);
	if (rmdir(path) < 0 && errno != ENOENT) {
		fprintf(stderr, "rmdir %s: %s\n", path, strerror(errno));
		r = 1;
	}
	tu_rmtree(confdir);
	free(confdir);
	return r;
}
