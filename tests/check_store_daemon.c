/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store under the real daemon: SIGKILL at random moments, a corrupt
 * database at start, and a full disk (a small tmpfs, root only). The daemon
 * binary is the one meson built; the database is read back with the store's
 * own reader and checked with SQLite's integrity_check.
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

#include "testutil.h"
#include "vitalsd.h"

static char daemon_path[PATH_MAX];

static int64_t
now_wall(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Start vitalsd on dir with 100 ms samples and 1 s windows. */
static pid_t
start_daemon(const char *dir, const char *extra)
{
	char log[PATH_MAX];
	pid_t pid;

	snprintf(log, sizeof(log), "%s.log", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(fd, 2);
		execl(daemon_path, "vitalsd", "-f", "--state-dir", dir,
		    "--interval-ms", "100", "--window-s", "1", "--threads",
		    extra ? extra : "none", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int
stop_daemon(pid_t pid, int sig)
{
	int status;

	kill(pid, sig);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void
assert_integrity(const char *db)
{
	sqlite3 *h;
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1,
	    &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(h);
}

struct run {
	int64_t start_ns, stop_ns;
};

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
check_run(struct window **w, size_t n, const struct run *r)
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
	char db[PATH_MAX];
	struct run runs[22];
	unsigned k, nruns = 22;
	size_t n, i, j, total;
	struct window **w;

	snprintf(db, sizeof(db), "%s/vitals.db", dir);
	srand(20261130);
	for (k = 0; k < nruns; k++) {
		unsigned ms = 300 + (unsigned)(rand() % 2200);
		pid_t pid;
		int status;

		runs[k].start_ns = now_wall();
		pid = start_daemon(dir, k % 2 ? "changed" : "none");
		tu_sleep_ms(ms);
		runs[k].stop_ns = now_wall();
		status = stop_daemon(pid, SIGKILL);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
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
	for (k = 0; k < nruns; k++) {
		double secs = (double)(runs[k].stop_ns - runs[k].start_ns) /
		    NSEC_PER_SEC;
		size_t got = check_run(w, n, &runs[k]);

		/*
		 * Only the open window may be lost: a run of s seconds closed
		 * floor(s − startup) windows. Startup (exec, first sample,
		 * database open) takes well under 0.4 s here.
		 */
		if (secs >= 1.5)
			ck_assert_msg(got + 1 >= (size_t)(secs - 0.4),
			    "run %u: %.2f s but %zu windows stored", k, secs,
			    got);
		total += got;
	}
	ck_assert_uint_eq(total, n);
	free_windows(w, n);
	tu_rmtree(dir);
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
	tu_sleep_ms(2300);
	status = stop_daemon(pid, SIGTERM);
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
	unlink(log);
	tu_rmtree(dir);
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
	tu_sleep_ms(2300);
	stop_daemon(pid, SIGTERM);
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
	tu_rmtree(dir);
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
	struct run run;
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
	tu_sleep_ms(2500);
	ck_assert_int_gt(fill_disk(filler), 0);
	/* Full for a while: sampling goes on, windows queue. */
	tu_sleep_ms(5000);
	ck_assert_int_eq(kill(pid, 0), 0);
	unlink(filler);
	tu_sleep_ms(3000);
	run.stop_ns = now_wall();
	status = stop_daemon(pid, SIGTERM);
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

int
main(void)
{
	Suite *s = suite_create("store_daemon");
	TCase *tc = tcase_create("daemon");
	const char *b = getenv("VITALS_BUILDDIR");

	if (geteuid() != 0) {
		fprintf(stderr, "needs root (tmpfs mount); skipping\n");
		return 77;
	}
	snprintf(daemon_path, sizeof(daemon_path), "%s/daemon/vitalsd",
	    b ? b : ".");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_sigkill_20_times);
	tcase_add_test(tc, test_corrupt_garbage);
	tcase_add_test(tc, test_corrupt_truncated);
	tcase_add_test(tc, test_not_sqlite);
	tcase_add_test(tc, test_full_disk);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
