/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF sched rows end to end, on this kernel: a child burns CPU and
 * exits inside a window; the daemon's BPF rows hold its on-CPU time
 * (within 5 % + 20 ms of its own utime + stime), flagged exited; `vitals
 * top --source bpf` lists it; `vitals health` shows every kernel loss
 * counter. Root: the daemon loads the programs (a pin directory of its
 * own).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "core/bpf_common.h"
#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

/* Some line of s holds a, and b after it. */
static bool
line_has(const char *s, const char *a, const char *b)
{
	const char *p, *e, *q;

	for (p = s; (p = strstr(p, a)) != NULL; p++) {
		e = strchr(p, '\n');
		q = strstr(p, b);
		if (q && (e == NULL || q < e))
			return true;
	}
	return false;
}

/* A line whose first three blank-separated fields are a, b and c. */
static bool
line_fields(const char *s, const char *a, const char *b, const char *c)
{
	const char *want[3] = { a, b, c };
	const char *p, *e;
	size_t n, i;

	for (p = s; *p; p = *e ? e + 1 : e) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		for (i = 0; i < 3; i++) {
			while (p < e && *p == ' ')
				p++;
			n = strlen(want[i]);
			if ((size_t)(e - p) < n ||
			    strncmp(p, want[i], n) != 0 ||
			    (p + n < e && p[n] != ' '))
				break;
			p += n;
		}
		if (i == 3)
			return true;
	}
	return false;
}

static char pins[128];

static unsigned long long
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	    (unsigned long long)ts.tv_nsec;
}

/* A child that burns ms of CPU, says its utime + stime (ticks), ends. */
static pid_t
burner(unsigned ms, uint64_t *ret_ticks)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tms t;
		uint64_t ticks;

		close(p[0]);
		tu_burn_ms(ms);
		times(&t);
		ticks = (uint64_t)t.tms_utime + (uint64_t)t.tms_stime;
		if (write(p[1], &ticks, sizeof(ticks)) != sizeof(ticks))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], ret_ticks, sizeof(*ret_ticks)),
	    sizeof(*ret_ticks));
	close(p[0]);
	return pid;
}

/* A counter of the JSON, a number or (proto3 JSON's 64-bit form) a
 * string of digits; 0 when absent or null (unknown). */
static unsigned long long
u64(const struct jm *o, const char *key)
{
	const struct jm *v = o ? jm_get(o, key) : NULL;

	if (v == NULL)
		return 0;
	if (v->t == JM_STR)
		return strtoull(v->str, NULL, 10);
	return v->t == JM_NUM ? (unsigned long long)v->ll : 0;
}

/* The client prints every bool: true, not merely present. */
static bool
is_true(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	return v != NULL && v->t == JM_BOOL && v->b;
}

static unsigned long long
hist_sum(const struct jm *row)
{
	const struct jm *h = jm_get(row, "rq_hist");
	unsigned long long sum = 0;
	size_t k;

	for (k = 0; h && h->t == JM_ARR && k < h->n; k++)
		sum += h->v[k].t == JM_STR ? strtoull(h->v[k].str, NULL, 10) :
					     (unsigned long long)h->v[k].ll;
	return sum;
}

static struct jm *
json_of(struct td *d, const char *const *args)
{
	struct run r = td_vitals(d, -1, args);
	struct jm *j;

	ck_assert_msg(r.code == 0, "vitals %s: %d %s", args[1], r.code, r.err);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	run_free(&r);
	return j;
}

START_TEST(test_exited_child_on_the_wire)
{
	static const char *const args[] = { "--interval-ms", "200",
		"--window-s", "1", NULL };
	static const char *const health[] = { "--json", "health", NULL };
	static const char *const health_text[] = { "health", NULL };
	static const char *const top[] = { "--json", "top", "--source", "bpf",
		"--since", "1m", "-n", "100000", NULL };
	static const char *const top_text[] = { "top", "--source", "bpf",
		"--since", "1m", "-n", "100000", NULL };
	static const char *const top_procfs[] = { "--json", "top", "--since",
		"1m", "-n", "100000", NULL };
	static const char *const top_rq[] = { "--json", "top", "--source",
		"bpf", "--by", "rq-p99", "--since", "1m", NULL };
	long hz = sysconf(_SC_CLK_TCK);
	const struct jm *row = NULL, *b;
	uint64_t ticks = 0;
	double bpf_ms = 0, proc_ms;
	char conf[256], pidtxt[16];
	struct jm *j = NULL;
	struct run r;
	struct td d;
	int status, i, tries;
	pid_t pid = -1;

	snprintf(conf, sizeof(conf), "bpffs = %s\n", pins);
	td_start(&d, "schedwire", conf, args);
	td_wait(&d, 15000, health, td_has_window);

	/* A child whose sched_process_free the kernel holds back (doc/bpf.md,
	 * "A free that does not come") is never marked exited: another one,
	 * three at most. */
	for (tries = 0; tries < 3 && row == NULL; tries++) {
		if (tries)
			fprintf(stderr, "pid %d never marked exited: again\n",
			    (int)pid);
		pid = burner(400, &ticks);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		proc_ms = (double)ticks * 1000.0 / (double)hz;
		snprintf(pidtxt, sizeof(pidtxt), "%d", (int)pid);

		/* the window it ended in closes within a second or two */
		for (i = 0; i < 50 && row == NULL; i++) {
			tu_sleep_ms(200);
			r = td_vitals(&d, -1, top);
			ck_assert_msg(r.code == 0, "vitals top: %d %s", r.code,
			    r.err);
			jm_free(j);
			ck_assert_ptr_nonnull(
			    j = jm_parse(r.out, strlen(r.out)));
			run_free(&r);
			if ((b = jm_path(j, "top.sched")) != NULL)
				row = jm_find_id(b, pid);
			if (row && !is_true(row, "exited"))
				row = NULL; /* its last window not in yet */
		}
	}
	ck_assert_msg(row != NULL, "pid %d not in the BPF top", (int)pid);
	ck_assert(is_true(row, "exited"));
	bpf_ms = jm_get(row, "oncpu_ns")->num / 1e6;
	fprintf(stderr, "exited child: bpf %.1f ms, procfs %.1f ms\n", bpf_ms,
	    proc_ms);
	ck_assert_msg(fabs(bpf_ms - proc_ms) <= 0.05 * proc_ms + 20.0,
	    "bpf %.1f ms vs procfs %.1f ms", bpf_ms, proc_ms);
	ck_assert_double_ge(proc_ms, 300.0);
	jm_free(j);
	j = NULL;

	/* the text view lists it too */
	r = td_vitals(&d, -1, top_text);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, "BPF sched_switch accounting over ") !=
		NULL,
	    "%s", r.out);
	ck_assert_msg(strstr(r.out, pidtxt) != NULL, "%s", r.out);
	run_free(&r);
	/* `vitals proc` of the ended child: its BPF block, summed and per
	 * window, marked ended */
	{
		const char *proc_text[] = { "proc", pidtxt, "--since", "1m",
			NULL };
		char want[64];

		r = td_vitals(&d, -1, proc_text);
		ck_assert_msg(r.code == 0, "vitals proc: %d %s", r.code, r.err);
		/* columns as wide as their data (80 columns) */
		ck_assert_msg(strstr(r.out,
				  "BPF sched_switch accounting over the "
				  "range:\n") != NULL &&
			strstr(r.out, " oncpu_ms rq_waits ") != NULL,
		    "%s", r.out);
		snprintf(want, sizeof(want), "\n- %d ", (int)pid);
		ck_assert_msg(strstr(r.out, want) != NULL, "%s", r.out);
		ck_assert_msg(strstr(r.out, ", exited\n") != NULL, "%s", r.out);
		ck_assert_msg(strstr(r.out, "  window ") != NULL &&
			strstr(r.out, ": on-CPU ") != NULL,
		    "%s", r.out);
		run_free(&r);
	}
	/* a procfs top asked just before is not the answer to a BPF one:
	 * the daemon's shared answers tell the two apart */
	r = td_vitals(&d, -1, top_procfs);
	ck_assert_int_eq(r.code, 0);
	run_free(&r);
	r = td_vitals(&d, -1, top);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_msg(jm_path(j, "top.sched") != NULL, "%s", r.out);
	jm_free(j);
	j = NULL;
	run_free(&r);
	/* another metric answers */
	r = td_vitals(&d, -1, top_rq);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\"sched_metric\""));
	run_free(&r);

	/* every loss counter in health, text and JSON */
	r = td_vitals(&d, -1, health);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(j = jm_parse(r.out, strlen(r.out)));
	ck_assert_ptr_nonnull(b = jm_path(j, "health.last.health.bpf"));
	ck_assert_ptr_nonnull(jm_get(b, "rq_samples"));
	ck_assert_ptr_nonnull(jm_get(b, "procs_exited"));
	ck_assert_ptr_nonnull(jm_get(b, "thr_exited"));
	ck_assert_ptr_nonnull(jm_get(b, "full_proc"));
	ck_assert_ptr_nonnull(jm_get(b, "oncpu_total_ns"));
	ck_assert_ptr_nonnull(jm_get(b, "lost_ns"));
	ck_assert_double_gt(jm_get(b, "oncpu_total_ns")->num, 0);
	jm_free(j);
	run_free(&r);
	r = td_vitals(&d, -1, health_text);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, "  bpf kernel: accounted ") != NULL, "%s",
	    r.out);
	run_free(&r);
	td_stop(&d);
}
END_TEST

/*
 * Run-queue delay per uid and per thread. Three processes of uid 4242
 * burn 2.5 s each on this 2-CPU VM at once, so they wait for each other;
 * their parent (the test's child) took the uid before forking them.
 * uid 4242's waits are its threads' (the exited ones folded at free):
 * at least the three burners' process figures and at most those plus
 * their parent's (whose first waits, before its setuid(), were uid 0's).
 * Every burner thread's histogram sums to its count, and ranking threads
 * by p99 orders them by their histograms' p99.
 */
START_TEST(test_rq_by_uid_and_thread)
{
	static const char *const args[] = { "--interval-ms", "200",
		"--window-s", "1", NULL };
	static const char *const health[] = { "--json", "health", NULL };
	static const char *const top[] = { "--json", "top", "--source", "bpf",
		"--since", "1m", "-n", "100000", NULL };
	static const char *const threads[] = { "--json", "top", "--source",
		"bpf", "--threads", "--since", "1m", "-n", "100000", NULL };
	static const char *const by_p99[] = { "--json", "top", "--source",
		"bpf", "--threads", "--by", "rq-p99", "--since", "1m", "-n",
		"20", NULL };
	static const char *const uids[] = { "--json", "sched", "--uids",
		"--since", "1m", NULL };
	static const char *const uids_text[] = { "sched", "--uids", "--since",
		"1m", NULL };
	unsigned long long burners_rq = 0, parent_rq = 0, uid_rq = 0;
	unsigned long long burners_ns = 0, parent_ns = 0, uid_ns = 0;
	const struct jm *a, *row, *w;
	pid_t parent, kids[3];
	int p[2], status, i, k, ended;
	unsigned long long t0;
	char conf[256], seen[160];
	struct jm *j;
	struct td d;
	size_t n;

	/* both sources of the waits (_i: bpf_rq_source = sched_info) */
	snprintf(conf, sizeof(conf), "bpffs = %s\n%s", pins,
	    _i ? "bpf_rq_source = sched_info\n" : "");
	td_start(&d, "schedrq", conf, args);
	td_wait(&d, 15000, health, td_has_window);
	j = json_of(&d, health);
	w = jm_path(j, "health.last.health.bpf");
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(jm_get(w, "rq_source"));
	ck_assert_str_eq(jm_get(w, "rq_source")->str,
	    _i && bpf_sched_info_kept() ? "sched_info" : "wakeup");
	jm_free(j);

	ck_assert_int_eq(pipe(p), 0);
	parent = fork();
	ck_assert_int_ge(parent, 0);
	if (parent == 0) {
		close(p[0]);
		if (setresgid(4242, 4242, 4242) < 0 ||
		    setresuid(4242, 4242, 4242) < 0)
			_exit(2);
		for (i = 0; i < 3; i++) {
			if ((kids[i] = fork()) < 0)
				_exit(3);
			if (kids[i] == 0) {
				tu_burn_ms(2500);
				_exit(0);
			}
		}
		if (write(p[1], kids, sizeof(kids)) != sizeof(kids))
			_exit(4);
		for (i = 0; i < 3; i++)
			if (waitpid(kids[i], &status, 0) != kids[i] ||
			    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				_exit(5);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], kids, sizeof(kids)), sizeof(kids));
	close(p[0]);
	ck_assert_int_eq(waitpid(parent, &status, 0), parent);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* until the windows they ended in are stored: all four marked (up
	 * to 60 s of wall time whatever a query costs: CI's loaded README
	 * stage once saw 2 of 4 after 10 s); what is seen is said every 5 s */
	t0 = mono_ns();
	for (i = 0, ended = 0; ended < 4 && mono_ns() - t0 < 60ull * 1000000000;
	     i++) {
		tu_sleep_ms(200);
		if (i % 25 == 24)
			fprintf(stderr, "after %.1f s:%s\n",
			    (double)(mono_ns() - t0) / 1e9, seen);
		j = json_of(&d, top);
		a = jm_path(j, "top.sched");
		ended = 0;
		seen[0] = '\0';
		for (k = -1; k < 3; k++) {
			row = jm_find_id(a, k < 0 ? parent : kids[k]);
			ended += row && is_true(row, "exited") ? 1 : 0;
			snprintf(seen + strlen(seen),
			    sizeof(seen) - strlen(seen), " %d:%s",
			    (int)(k < 0 ? parent : kids[k]),
			    row == NULL		       ? "no row" :
				is_true(row, "exited") ? "exited" :
							 "running");
		}
		if (ended < 4) {
			jm_free(j);
			continue;
		}
		for (k = -1; k < 3; k++) {
			row = jm_find_id(a, k < 0 ? parent : kids[k]);
			if (k < 0) {
				parent_rq = u64(row, "rq_count");
				parent_ns = u64(row, "rq_ns");
			} else {
				burners_rq += u64(row, "rq_count");
				burners_ns += u64(row, "rq_ns");
			}
		}
		jm_free(j);
	}
	ck_assert_msg(ended == 4,
	    "only %d of 4 processes ended in the rows (parent, then the "
	    "burners:%s)",
	    ended, seen);
	ck_assert_msg(burners_rq >= 3, "the burners waited %llu times",
	    burners_rq);

	/* uid 4242 over the same windows */
	j = json_of(&d, uids);
	a = jm_path(j, "windows.windows");
	ck_assert_ptr_nonnull(a);
	for (n = 0; n < a->n; n++) {
		const struct jm *u = jm_path(&a->v[n], "sched.uids");
		size_t m;

		for (m = 0; u && m < u->n; m++) {
			if (u64(&u->v[m], "uid") != 4242)
				continue;
			uid_rq += u64(&u->v[m], "rq_count");
			uid_ns += u64(&u->v[m], "rq_ns");
			ck_assert_uint_eq(hist_sum(&u->v[m]),
			    u64(&u->v[m], "rq_count"));
		}
		/* no wait went without a thread entry */
		w = jm_path(&a->v[n], "health.bpf");
		ck_assert_uint_eq(u64(w, "rq_notid"), 0);
	}
	jm_free(j);
	fprintf(stderr,
	    "uid 4242: %llu waits %.3f ms; burners %llu waits %.3f ms, "
	    "their parent %llu waits %.3f ms\n",
	    uid_rq, (double)uid_ns / 1e6, burners_rq, (double)burners_ns / 1e6,
	    parent_rq, (double)parent_ns / 1e6);
	ck_assert_uint_ge(uid_rq, burners_rq);
	ck_assert_uint_le(uid_rq, burners_rq + parent_rq);
	ck_assert_uint_ge(uid_ns, burners_ns);
	ck_assert_uint_le(uid_ns, burners_ns + parent_ns);

	/* the burners' threads: histograms that sum to their counts */
	j = json_of(&d, threads);
	a = jm_path(j, "top.sched");
	for (k = 0, n = 0; k < 3; k++) {
		row = jm_find_id(a, kids[k]);
		if (row == NULL)
			continue; /* every window of it was its last */
		ck_assert_uint_eq(u64(row, "uid"), 4242);
		ck_assert_uint_eq(hist_sum(row), u64(row, "rq_count"));
		if (u64(row, "rq_count")) {
			ck_assert_uint_gt(u64(row, "rq_p99_ns"), 0);
			ck_assert_uint_ge(u64(row, "rq_p99_ns"),
			    u64(row, "rq_p50_ns"));
			n++;
		}
	}
	ck_assert_msg(n >= 1, "no burner thread with waits in the rows");
	jm_free(j);

	/* by p99: in order of it */
	j = json_of(&d, by_p99);
	a = jm_path(j, "top.sched");
	ck_assert_ptr_nonnull(a);
	for (n = 1; n < a->n; n++)
		ck_assert_uint_ge(u64(&a->v[n - 1], "rq_p99_ns"),
		    u64(&a->v[n], "rq_p99_ns"));
	jm_free(j);

	/* proc --threads: each thread point carries its row; the text sums
	 * them per thread */
	{
		char kid[16];
		const char *pj[] = { "--json", "proc", kid, "--threads",
			"--since", "1m", NULL };
		const char *pt[] = { "proc", kid, "--threads", "--since", "1m",
			NULL };
		unsigned long long rq = 0, slots = 0;
		struct run r;
		char want[64];

		for (k = 0; k < 3; k++) {
			snprintf(kid, sizeof(kid), "%d", (int)kids[k]);
			j = json_of(&d, pj);
			a = jm_path(j, "process.threads");
			for (n = 0; a && n < a->n; n++) {
				/* an absent message is null */
				row = jm_get(&a->v[n], "sched");
				if (row == NULL || row->t != JM_OBJ)
					continue;
				ck_assert_uint_eq(u64(row, "id"), kids[k]);
				rq += u64(row, "rq_count");
				slots += hist_sum(row);
			}
			jm_free(j);
			if (rq)
				break;
		}
		ck_assert_msg(rq > 0, "no thread point of a burner has waits");
		ck_assert_uint_eq(slots, rq);
		r = td_vitals(&d, -1, pt);
		ck_assert_int_eq(r.code, 0);
		snprintf(want, sizeof(want),
		    "BPF per thread over the range (sorted by oncpu_ms):\n");
		ck_assert_msg(strstr(r.out, want) != NULL, "%s", r.out);
		/* tid, tgid, then uid 4242 on the thread's line; a column is
		 * as wide as its data or its header ("tgid": a pid under 1,000,
		 * as after pid_max wrapped, is padded to 4) */
		snprintf(want, sizeof(want), "%d", (int)kids[k]);
		if (!line_fields(r.out, want, want, "4242"))
			fprintf(stderr, "%s", r.out); /* check keeps one line */
		ck_assert_msg(line_fields(r.out, want, want, "4242"), "%s",
		    r.out);
		run_free(&r);
	}

	/* the text: uid 4242's line with its waits */
	{
		struct run r = td_vitals(&d, -1, uids_text);
		char want[96];

		ck_assert_int_eq(r.code, 0);
		ck_assert_msg(line_has(r.out, " rq_waits ", " rq_p99"), "%s",
		    r.out);
		snprintf(want, sizeof(want), "\n        4242 ");
		ck_assert_msg(strstr(r.out, want) != NULL, "%s", r.out);
		run_free(&r);
	}
	td_stop(&d);
}
END_TEST

int
main(void)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int nf;

	if (!tu_need_root("the daemon loads BPF programs"))
		return 77;
	snprintf(pins, sizeof(pins), "/sys/fs/bpf/vitals-wire-%d",
	    (int)getpid());
	s = suite_create("sched_wire");
	tc = tcase_create("kernel");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_exited_child_on_the_wire);
	tcase_add_loop_test(tc, test_rq_by_uid_and_thread, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* the daemon's other programs pin there too: empty it, then go */
	(void)bpf_sched_unpin(pins);
	{
		DIR *dir = opendir(pins);
		struct dirent *e;

		while (dir && (e = readdir(dir)) != NULL)
			if (e->d_name[0] != '.')
				(void)unlinkat(dirfd(dir), e->d_name, 0);
		if (dir)
			closedir(dir);
		(void)rmdir(pins);
	}
	return nf == 0 ? 0 : 1;
}
