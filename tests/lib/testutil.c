/* SPDX-License-Identifier: Apache-2.0 */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "window/window.h"

#include "testutil.h"

const char *
tu_srcpath(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int slot;
	const char *src = getenv("VITALS_SRCDIR");
	char *p = buf[slot++ % 4];

	snprintf(p, PATH_MAX, "%s/tests/%s", src ? src : "..", rel);
	return p;
}

char *
tu_mkdtemp(const char *tag)
{
	char *p;

	if (asprintf(&p, "/tmp/vitals-%s-XXXXXX", tag) < 0)
		return NULL;
	if (mkdtemp(p) == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

char *
tu_mkdtemp_db(const char *tag, char *db, size_t dbsz)
{
	char *dir = tu_mkdtemp(tag);

	ck_assert_ptr_nonnull(dir);
	snprintf(db, dbsz, "%s/vitals.db", dir);
	return dir;
}

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int
tu_rmtree(const char *path)
{
	return nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static int
mkparents(const char *path)
{
	char tmp[PATH_MAX];
	char *s;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

int
tu_write(const char *path, const char *data, size_t len)
{
	int fd, r;

	if ((r = mkparents(path)) < 0)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		data += n;
		len -= (size_t)n;
	}
	close(fd);
	return 0;
}

int
tu_writes(const char *path, const char *text)
{
	return tu_write(path, text, strlen(text));
}

int
tu_copytree(const char *src, const char *dst)
{
	DIR *d = opendir(src);
	struct dirent *de;
	int r = 0;

	if (d == NULL)
		return -errno;
	if (mkdir(dst, 0755) < 0 && errno != EEXIST) {
		closedir(d);
		return -errno;
	}
	while ((de = readdir(d)) != NULL && r == 0) {
		char s[PATH_MAX], t[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(s, sizeof(s), "%s/%s", src, de->d_name);
		snprintf(t, sizeof(t), "%s/%s", dst, de->d_name);
		if (lstat(s, &st) < 0) {
			r = -errno;
		} else if (S_ISLNK(st.st_mode)) {
			char l[PATH_MAX];
			ssize_t n = readlink(s, l, sizeof(l) - 1);

			if (n < 0) {
				r = -errno;
			} else {
				l[n] = '\0';
				unlink(t);
				if (symlink(l, t) < 0)
					r = -errno;
			}
		} else if (S_ISDIR(st.st_mode)) {
			r = tu_copytree(s, t);
		} else {
			FILE *f = fopen(s, "rb");
			char *buf = NULL;
			size_t n;

			if (f == NULL) {
				r = -errno;
				continue;
			}
			buf = malloc((size_t)st.st_size + 1);
			n = fread(buf, 1, (size_t)st.st_size, f);
			fclose(f);
			r = tu_write(t, buf, n);
			free(buf);
		}
	}
	closedir(d);
	return r;
}

int
tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}

bool
tu_cases_ok(const char *const *names)
{
	const char *run = getenv("CK_RUN_CASE"),
		   *list = getenv("VITALS_TEST_CASES");
	char *copy, *name, *save = NULL;
	size_t i, n = 0;
	bool ok = true, *seen;

	for (n = 0; names[n]; n++)
		;
	if (run) {
		for (i = 0; i < n && strcmp(run, names[i]) != 0; i++)
			;
		if (i == n) {
			fprintf(stderr, "CK_RUN_CASE: no case %s\n", run);
			ok = false;
		}
	}
	if (list == NULL)
		return ok;
	/* a flag per case: a program may have any number of them */
	if ((seen = calloc(n + 1, sizeof(*seen))) == NULL)
		return false;
	if ((copy = strdup(list)) == NULL) {
		free(seen);
		return false;
	}
	for (name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n && strcmp(name, names[i]) != 0; i++)
			;
		if (i == n) {
			fprintf(stderr, "VITALS_TEST_CASES: no case %s\n",
			    name);
			ok = false;
		} else
			seen[i] = true;
	}
	free(copy);
	for (i = 0; i < n; i++)
		if (!seen[i]) {
			fprintf(stderr, "case %s is not in VITALS_TEST_CASES\n",
			    names[i]);
			ok = false;
		}
	free(seen);
	return ok;
}

bool
tu_root(void)
{
	return geteuid() == 0;
}

bool
tu_need_root(const char *why)
{
	if (tu_root())
		return true;
	fprintf(stderr, "%s: needs root (%s); skipped\n",
	    program_invocation_short_name, why);
	return false;
}

unsigned
tu_test_scale(void)
{
	const char *v = getenv("VITALS_TEST_SCALE");
	unsigned long n;
	char *end;

	if (v == NULL || *v == '\0')
		return 1;
	errno = 0;
	n = strtoul(v, &end, 10);
	/* a typo must not shrink a suite to nothing unnoticed */
	ck_assert_msg(errno == 0 && *end == '\0' && n >= 1 && n <= 1000,
	    "VITALS_TEST_SCALE=%s: not an integer in 1..1000", v);
	return (unsigned)n;
}

unsigned long long
tu_scaled(unsigned long long n, unsigned long long min)
{
	unsigned long long m = n / tu_test_scale();

	if (m < min)
		m = min;
	return m < n ? m : n;
}

int
tu_run_root(Suite *s)
{
	int r = tu_run(s);

	if (r != 0 || tu_root())
		return r;
	fprintf(stderr,
	    "not root: the tests that need root did not run; "
	    "skipped\n");
	return 77;
}

static unsigned long long
tu_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	    (unsigned long long)ts.tv_nsec;
}

unsigned long long
tu_burn_ms(unsigned ms)
{
	unsigned long long cpu0 = tu_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	unsigned long long wall0 = tu_clock_ns(CLOCK_MONOTONIC);
	unsigned long long want = (unsigned long long)ms * 1000000ULL;
	volatile unsigned long long sink = 0;
	unsigned long long spent;

	do {
		for (unsigned i = 0; i < 10000; i++)
			sink += i;
		spent = tu_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	} while (
	    spent < want && tu_clock_ns(CLOCK_MONOTONIC) - wall0 < 20 * want);
	return spent;
}

unsigned long long
tu_burn_sliced_ms(unsigned ms, unsigned slice_ms)
{
	struct timespec nap = { 0, 200000L };
	unsigned long long want = (unsigned long long)ms * 1000000ULL;
	unsigned long long spent = 0, left_ms;

	while (spent < want) {
		left_ms = (want - spent + 999999ULL) / 1000000ULL;
		if (left_ms > slice_ms)
			left_ms = slice_ms;
		spent += tu_burn_ms((unsigned)left_ms);
		nanosleep(&nap, NULL);
	}
	return spent;
}

int
tu_burner_start(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "tu_burner");
		for (;;)
			tu_burn_ms(1000);
	}
	return (int)pid;
}

/*
 * A burner that switches out at least every burn_ms: it sleeps 200 us
 * after each burn_ms of CPU. The sched_switch accounting credits a slice
 * at its switch-out (doc/bpf.md, "time is known at switch-out"), and an
 * uncontended spinner can run for seconds without one; tests that compare
 * BPF and /proc window by window need slices shorter than a window.
 */
int
tu_burner_start_switching(unsigned burn_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec nap = { 0, 200000L };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "tu_burner");
		for (;;) {
			tu_burn_ms(burn_ms);
			nanosleep(&nap, NULL);
		}
	}
	return (int)pid;
}

void
tu_burner_stop(int pid)
{
	if (pid <= 0)
		return;
	kill((pid_t)pid, SIGKILL);
	while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void
tu_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int
tu_spawn_gated(const char *const *argv, int *gate)
{
	char go;
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[0]);
	*gate = p[1];
	return pid;
}

sqlite3 *
tu_db_hold(const char *path)
{
	sqlite3 *h;

	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL),
	    SQLITE_OK);
	sqlite3_busy_timeout(h, 5000);
	ck_assert_int_eq(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL),
	    SQLITE_OK);
	return h;
}

void
tu_db_release(sqlite3 *h)
{
	ck_assert_int_eq(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(h);
}

void
tu_task_eq(const struct window_task *a, const struct window_task *b)
{
	ck_assert_int_eq(a->id, b->id);
	ck_assert_int_eq(a->tgid, b->tgid);
	ck_assert_uint_eq(a->starttime, b->starttime);
	ck_assert_uint_eq(a->uid, b->uid);
	ck_assert_str_eq(a->comm, b->comm);
	ck_assert_str_eq(window_task_name(a), window_task_name(b));
	ck_assert_uint_eq(a->d_utime, b->d_utime);
	ck_assert_uint_eq(a->d_stime, b->d_stime);
	ck_assert_uint_eq(a->d_minflt, b->d_minflt);
	ck_assert_uint_eq(a->d_majflt, b->d_majflt);
	ck_assert_uint_eq(a->samples, b->samples);
	ck_assert_uint_eq(a->wall_ns, b->wall_ns);
	ck_assert_uint_eq(a->total_ticks, b->total_ticks);
	ck_assert(memcmp(&a->norm_ticks, &b->norm_ticks, sizeof(double)) == 0);
	ck_assert_uint_eq(a->rss_pages_max, b->rss_pages_max);
	ck_assert_uint_eq(a->rss_pages_last, b->rss_pages_last);
	ck_assert_int_eq(a->born, b->born);
	ck_assert_int_eq(a->exited, b->exited);
}

char *
tu_exact_copy(const char *s, size_t len)
{
	char *b = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(b);
	memcpy(b, s, len);
	return b;
}

void
tu_poison(void *p, size_t n)
{
	memset(p, 0xa5, n);
}

int
tu_is_poisoned(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != 0xa5)
			return 0;
	return 1;
}

bool
tu_kernel_ge(unsigned maj, unsigned min)
{
	struct utsname u;
	unsigned a = 0, b = 0;

	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_ge(sscanf(u.release, "%u.%u", &a, &b), 1);
	return a > maj || (a == maj && b >= min);
}
