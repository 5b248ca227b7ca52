/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phases against the real kernel: a daemon with its own ftrace
 * instance and fault_phases set; a child writes ATrace B/E markers to
 * trace_marker around (a) touching N fresh anonymous pages, (b) reading
 * M pages of a file on a disk file system, mmapped MADV_RANDOM after
 * fsync and posix_fadvise(DONTNEED) (every page a page-cache miss), (c)
 * the same sequentially with the kernel's readahead, and measures its
 * own getrusage(RUSAGE_SELF) deltas inside each. The daemon's figures
 * must agree: faults with minflt + majflt, major with majflt, the
 * classes with the mappings touched. The events the daemon enabled are
 * those the kernel has (health). Built with the ftrace reader only.
 */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_run.h"
#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"
#include "trace/trace.h"

#define TRACEFS "/sys/kernel/tracing"
#define PG 4096
#define N_ANON 512
#define M_FILE 256
#define M_SEQ 4096
/* the disk file system the file lives on (not tmpfs: its pages would
 * never leave the cache) */
#define FILE_DIR "/var/tmp"

/* what the child measured inside its slices */
struct child_res {
	long minflt[3], majflt[3];
	long resident[3]; /* file pages in the cache before the slice */
};

static void
mark(int fd, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(fd, buf, (size_t)n) != n)
		_exit(3);
}

static long
resident(void *p, size_t pages)
{
	unsigned char *v = malloc(pages);
	long n = 0;
	size_t i;

	if (v == NULL || mincore(p, pages * PG, v) < 0)
		_exit(4);
	for (i = 0; i < pages; i++)
		n += v[i] & 1;
	free(v);
	return n;
}

static void *
map_file(const char *path, size_t pages, int advice)
{
	char *buf = malloc(PG);
	void *p;
	size_t i;
	int fd;

	if (buf == NULL ||
	    (fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		_exit(5);
	memset(buf, 0x5a, PG);
	for (i = 0; i < pages; i++)
		if (write(fd, buf, PG) != PG)
			_exit(5);
	free(buf);
	if (fsync(fd) < 0)
		_exit(5);
	if ((p = mmap(NULL, pages * PG, PROT_READ, MAP_SHARED, fd, 0)) ==
	    MAP_FAILED)
		_exit(5);
	if (madvise(p, pages * PG, advice) < 0 ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		_exit(5);
	close(fd);
	return p;
}

static long
tv(const struct rusage *a, const struct rusage *b, bool maj)
{
	return maj ? b->ru_majflt - a->ru_majflt : b->ru_minflt - a->ru_minflt;
}

/* The child: slices around its faults, figures through wfd. */
static void
child(int wfd, const char *f1, const char *f2)
{
	struct child_res res = { 0 };
	volatile unsigned char sink = 0;
	struct rusage r0, r1;
	unsigned char *anon, *warm, *file, *seq;
	int mfd = open(TRACEFS "/trace_marker", O_WRONLY | O_CLOEXEC);
	int pid = (int)getpid();
	size_t i;

	if (mfd < 0)
		_exit(2);
	file = map_file(f1, M_FILE, MADV_RANDOM);
	seq = map_file(f2, M_SEQ, MADV_NORMAL);
	anon = mmap(NULL, N_ANON * PG, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	warm = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED || warm == MAP_FAILED)
		_exit(6);
	/* one page one fault: no huge pages */
	madvise(anon, N_ANON * PG, MADV_NOHUGEPAGE);
	/* the loops' code and the rusage and marker paths, faulted in */
	for (i = 0; i < 4; i++)
		warm[i * PG] = 1;
	getrusage(RUSAGE_SELF, &r0);
	mark(mfd, "B|%d|phk warm", pid);
	mark(mfd, "E|%d", pid);
	getrusage(RUSAGE_SELF, &r1);

	res.resident[0] = 0;
	getrusage(RUSAGE_SELF, &r0);
	mark(mfd, "B|%d|phk anon", pid);
	for (i = 0; i < N_ANON; i++)
		anon[i * PG] = (unsigned char)i;
	mark(mfd, "E|%d", pid);
	getrusage(RUSAGE_SELF, &r1);
	res.minflt[0] = tv(&r0, &r1, false);
	res.majflt[0] = tv(&r0, &r1, true);

	res.resident[1] = resident(file, M_FILE);
	getrusage(RUSAGE_SELF, &r0);
	mark(mfd, "B|%d|phk file random", pid);
	for (i = 0; i < M_FILE; i++)
		sink += file[i * PG];
	mark(mfd, "E|%d", pid);
	getrusage(RUSAGE_SELF, &r1);
	res.minflt[1] = tv(&r0, &r1, false);
	res.majflt[1] = tv(&r0, &r1, true);

	res.resident[2] = resident(seq, M_SEQ);
	getrusage(RUSAGE_SELF, &r0);
	mark(mfd, "B|%d|phk file seq", pid);
	for (i = 0; i < M_SEQ; i++)
		sink += seq[i * PG];
	mark(mfd, "E|%d", pid);
	getrusage(RUSAGE_SELF, &r1);
	res.minflt[2] = tv(&r0, &r1, false);
	res.majflt[2] = tv(&r0, &r1, true);
	(void)sink;
	if (write(wfd, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(7);
	close(wfd);
	/* alive (and mapped) until the daemon has read its records: its
	 * threads' process and its maps come from /proc */
	sleep(4);
	_exit(0);
}

static long long
num(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	if (v == NULL || v->t == JM_NULL)
		return 0;
	ck_assert_msg(jm_is_int(v), "%s: not an integer", key);
	return v->ll;
}

/* value of a TracePhaseValue member; -1: absent (unknown) */
static long long
pv(const struct jm *row, const char *key)
{
	const struct jm *v = jm_get(row, key);

	if (v == NULL || v->t == JM_NULL)
		return -1;
	return num(v, "value");
}

/* by_class[k] of a TracePhaseValue member */
static long long
pclass(const struct jm *row, const char *key, unsigned k)
{
	const struct jm *v = jm_get(row, key), *b;

	if (v == NULL || v->t == JM_NULL ||
	    (b = jm_get(v, "by_class")) == NULL || b->t != JM_ARR || k >= b->n)
		return -1;
	ck_assert(jm_is_int(&b->v[k]));
	return b->v[k].ll;
}

enum { C_DEX, C_SO, C_RES, C_FILE, C_ANON, C_STACK, C_OTHER, C_UNKNOWN };

static const struct jm *
find_row(const struct jm *wins, const char *name)
{
	size_t i, k;

	for (i = 0; wins && i < wins->n; i++) {
		const struct jm *ph = jm_get(&wins->v[i], "phase");

		for (k = 0; ph && ph->t == JM_ARR && k < ph->n; k++)
			if (strcmp(jm_get(&ph->v[k], "name")->str, name) == 0 &&
			    num(&ph->v[k], "count") >= 1)
				return &ph->v[k];
	}
	return NULL;
}

static bool
has_event(const char *sys, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), TRACEFS "/events/%s/%s/format", sys, name);
	return access(p, R_OK) == 0;
}

static bool
in_list(const struct jm *l, const char *s)
{
	size_t i;

	for (i = 0; l && l->t == JM_ARR && i < l->n; i++)
		if (strcmp(l->v[i].str, s) == 0)
			return true;
	return false;
}

START_TEST(phases_agree_with_rusage)
{
	static const char *const evs[][2] = {
		{ "exceptions", "page_fault_user" },
		{ "filemap", "mm_filemap_fault" },
		{ "filemap", "mm_filemap_add_to_page_cache" },
		{ "vmscan", "mm_vmscan_direct_reclaim_begin" },
		{ "vmscan", "mm_vmscan_direct_reclaim_end" },
		{ "block", "block_rq_issue" },
	};
	char conf[512], inst[64], cpid_s[16], f1[128], f2[128];
	const struct jm *wins, *a, *b, *c, *tr;
	struct child_res res;
	struct jm *j = NULL;
	struct stat st;
	struct run r;
	struct td d;
	int pfd[2], tries, status, pid = (int)getpid();
	long long ev = 0, span_ns = 0, read_ns = 0, slack;
	pid_t cpid;
	size_t i;

	if (stat(TRACEFS "/instances", &st) < 0)
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	ck_assert_int_eq(stat(TRACEFS "/instances", &st), 0);
	snprintf(inst, sizeof(inst), "vitals_ph_%d", pid);
	snprintf(conf, sizeof(conf),
	    "ftrace_instance = %s\nbpf_load = off\nscanner = procfs\n"
	    "ftrace_sched = off\nftrace_tick_ms = 100\n"
	    "fault_phases = phk anon, phk file*\n",
	    inst);
	{
		static const char *const args[] = { "--interval-ms", "100",
			"--window-s", "1", NULL };

		td_start(&d, "phase-kernel", conf, args);
	}
	ck_assert_msg(td_log_until(d.pid, d.log, "ftrace: instance", 200, 50),
	    "no ftrace instance: see %s", d.log);
	ck_assert_msg(td_file_has(d.log, "ATrace on"), "no ATrace: see %s",
	    d.log);
	/* health: each event enabled exactly when the kernel has it */
	for (tries = 0; tries < 100; tries++) {
		const char *argv[] = { "vitals", "--socket", d.sock, "--json",
			"health", NULL };

		r = run_client_as(-1, argv);
		ck_assert_int_eq(r.code, 0);
		j = jm_parse(r.out, strlen(r.out));
		run_free(&r);
		ck_assert_ptr_nonnull(j);
		if ((tr = jm_path(j, "health.trace")) != NULL &&
		    tr->t != JM_NULL)
			break;
		jm_free(j);
		j = NULL;
		tu_sleep_ms(100);
	}
	ck_assert_ptr_nonnull(j);
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		char full[128];
		bool have = has_event(evs[i][0], evs[i][1]);

		snprintf(full, sizeof(full), "%s/%s", evs[i][0], evs[i][1]);
		ck_assert_msg(in_list(jm_get(tr, "enabled"), full) == have,
		    "%s: enabled %d, in the kernel %d", full, !have, have);
		ck_assert_msg(in_list(jm_get(tr, "missing"), full) == !have,
		    "%s: missing wrong", full);
	}
	jm_free(j);
	j = NULL;
	ck_assert_msg(td_file_has(d.log, "fault phases: "), "see %s", d.log);
	ck_assert_msg(has_event("exceptions", "page_fault_user") &&
		has_event("filemap", "mm_filemap_fault") &&
		has_event("filemap", "mm_filemap_add_to_page_cache"),
	    "this test needs the fault and filemap events");

	snprintf(f1, sizeof(f1), FILE_DIR "/vitals-phk-%d-r", pid);
	snprintf(f2, sizeof(f2), FILE_DIR "/vitals-phk-%d-s", pid);
	ck_assert_int_eq(pipe(pfd), 0);
	if ((cpid = fork()) == 0) {
		close(pfd[0]);
		child(pfd[1], f1, f2);
	}
	ck_assert_int_gt(cpid, 0);
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &res, sizeof(res)), (ssize_t)sizeof(res));
	close(pfd[0]);
	snprintf(cpid_s, sizeof(cpid_s), "%d", (int)cpid);
	for (tries = 0; tries < 60; tries++) {
		const char *argv[] = { "vitals", "--socket", d.sock, "--json",
			"trace", "--since", "1h", "--process", cpid_s, NULL };

		tu_sleep_ms(250);
		r = run_client_as(-1, argv);
		ck_assert_msg(r.code == 0, "trace: %d %s", r.code, r.err);
		j = jm_parse(r.out, strlen(r.out));
		run_free(&r);
		ck_assert_ptr_nonnull(j);
		wins = jm_path(j, "trace.windows");
		if (find_row(wins, "phk anon") &&
		    find_row(wins, "phk file random") &&
		    find_row(wins, "phk file seq"))
			break;
		jm_free(j);
		j = NULL;
	}
	ck_assert_msg(j != NULL, "the phases never reached the store: see %s",
	    d.log);
	/* the text of `vitals proc` and `vitals trace` shows them too */
	{
		const char *pa[] = { "vitals", "--socket", d.sock, "proc",
			cpid_s, "--since", "1h", NULL };
		const char *ta[] = { "vitals", "--socket", d.sock, "trace",
			"--since", "1h", "--process", cpid_s, NULL };

		r = run_client_as(-1, pa);
		ck_assert_msg(r.code == 0, "proc: %d %s", r.code, r.err);
		if (getenv("VITALS_SHOW"))
			fputs(r.out, stderr);
		ck_assert_msg(strstr(r.out, "Fault phases:") &&
			strstr(r.out, "phk file random") &&
			strstr(r.out, "by class:"),
		    "proc: %s", r.out);
		run_free(&r);
		r = run_client_as(-1, ta);
		ck_assert_msg(r.code == 0, "trace: %d %s", r.code, r.err);
		ck_assert_msg(strstr(r.out, "fault phases") &&
			strstr(r.out, "phk anon"),
		    "trace: %s", r.out);
		run_free(&r);
	}
	/* `vitals --json proc` carries the trace answer for the pid: the
	 * same phase rows as `vitals --json trace --process` */
	{
		const char *pa[] = { "vitals", "--socket", d.sock, "--json",
			"proc", cpid_s, "--since", "1h", NULL };
		const struct jm *pw, *pr, *tr_row;
		struct jm *pj;

		r = run_client_as(-1, pa);
		ck_assert_msg(r.code == 0, "proc --json: %d %s", r.code, r.err);
		pj = jm_parse(r.out, strlen(r.out));
		ck_assert_msg(pj != NULL, "proc --json: %s", r.out);
		run_free(&r);
		ck_assert_ptr_nonnull(jm_get(pj, "process"));
		pw = jm_path(pj, "trace.windows");
		ck_assert_msg(pw != NULL && pw->t == JM_ARR,
		    "proc --json: no trace.windows");
		pr = find_row(pw, "phk anon");
		tr_row = find_row(jm_path(j, "trace.windows"), "phk anon");
		ck_assert_ptr_nonnull(pr);
		ck_assert_ptr_nonnull(tr_row);
		ck_assert_int_eq(num(pr, "count"), num(tr_row, "count"));
		ck_assert_int_eq(pv(pr, "faults"), pv(tr_row, "faults"));
		jm_free(pj);
	}
	ck_assert_int_eq(waitpid(cpid, &status, 0), cpid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "child status %d", status);
	unlink(f1);
	unlink(f2);
	wins = jm_path(j, "trace.windows");
	ck_assert_ptr_null(find_row(wins, "phk warm")); /* not configured */
	a = find_row(wins, "phk anon");
	b = find_row(wins, "phk file random");
	c = find_row(wins, "phk file seq");
	for (i = 0; i < wins->n; i++) {
		ev += num(&wins->v[i], "phase_events");
		read_ns += num(&wins->v[i], "read_ns");
		span_ns += num(&wins->v[i], "wall_end_ns") -
		    num(&wins->v[i], "wall_start_ns");
	}
	fprintf(stderr,
	    "phase_kernel: anon  child minflt %ld majflt %ld | daemon faults "
	    "%lld anon %lld major %lld\n",
	    res.minflt[0], res.majflt[0], pv(a, "faults"),
	    pclass(a, "faults", C_ANON), pv(a, "major"));
	fprintf(stderr,
	    "phase_kernel: file random (%ld of %d resident) child minflt %ld "
	    "majflt %ld | daemon faults %lld file %lld file_faults %lld "
	    "major %lld (file %lld) pages_read %lld block %lld\n",
	    res.resident[1], M_FILE, res.minflt[1], res.majflt[1],
	    pv(b, "faults"), pclass(b, "faults", C_FILE), pv(b, "file_faults"),
	    pv(b, "major"), pclass(b, "major", C_FILE), pv(b, "pages_read"),
	    pv(b, "block"));
	fprintf(stderr,
	    "phase_kernel: file seq (%ld of %d resident) child minflt %ld "
	    "majflt %ld | daemon faults %lld file_faults %lld major %lld "
	    "pages_read %lld\n",
	    res.resident[2], M_SEQ, res.minflt[2], res.majflt[2],
	    pv(c, "faults"), pv(c, "file_faults"), pv(c, "major"),
	    pv(c, "pages_read"));
	fprintf(stderr,
	    "phase_kernel: %lld phase events over %.1f s of windows: %.0f/s;"
	    " reading and decoding all events %.1f ms/s\n",
	    ev, (double)span_ns / 1e9,
	    span_ns ? (double)ev * 1e9 / (double)span_ns : 0.0,
	    span_ns ? (double)read_ns * 1e3 / (double)span_ns : 0.0);

	/*
	 * Tolerance: rusage counts a fault when it completes, the daemon
	 * when the exception is taken; both see every fault the loop takes.
	 * What may differ is a handful around the edges: the marker write
	 * and getrusage themselves (their stack and code faulted in by the
	 * warm-up), so 4 either way; and rusage also counts faults the
	 * kernel takes on user memory inside system calls, none here.
	 */
	slack = 4;
	ck_assert_int_eq(res.majflt[0], 0);
	ck_assert_int_ge(res.minflt[0], N_ANON);
	ck_assert_int_le(llabs(pv(a, "faults") - res.minflt[0]), slack);
	ck_assert_int_ge(pclass(a, "faults", C_ANON), N_ANON);
	ck_assert_int_eq(pv(a, "major"), 0);
	/* (b): every page a miss (checked: none resident), one fault each */
	ck_assert_int_eq(res.resident[1], 0);
	ck_assert_int_le(llabs(
			     pv(b, "faults") - (res.minflt[1] + res.majflt[1])),
	    slack);
	ck_assert_int_ge(pclass(b, "faults", C_FILE), M_FILE - slack);
	ck_assert_int_le(llabs(pv(b, "major") - res.majflt[1]), slack);
	ck_assert_int_ge(pclass(b, "major", C_FILE), M_FILE - slack);
	ck_assert_int_ge(pv(b, "pages_read"), M_FILE);
	/* (c): readahead and fault-around: fewer faults than pages, some
	 * of them major; the daemon's figures bounded by the child's */
	ck_assert_int_le(llabs(
			     pv(c, "faults") - (res.minflt[2] + res.majflt[2])),
	    slack);
	ck_assert_int_ge(pv(c, "major"), 1);
	ck_assert_int_le(pv(c, "major"), res.majflt[2] + slack);
	ck_assert_int_ge(pv(c, "pages_read"), M_SEQ - slack);
	ck_assert_int_gt(ev, 0);
	jm_free(j);
	td_stop(&d);
	ftrace_instance_remove(NULL, inst);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("phase_kernel");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, phases_agree_with_rusage);
	suite_add_tcase(s, tc);
	return tu_run_root(s);
}
