/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The summary is `dumpsys cpuinfo`'s text (AOSP ProcessCpuTracker's
 * printCurrentLoad and printCurrentState): golden files under
 * tests/fixtures/dumpsys/, worked out from AOSP's format rules, for
 * fixture windows; AOSP's ratio and float printing at their edges; and
 * every golden read back by tests/dumpsys_parse.py, a parser written from
 * the bugreport tool's CpuUsageParser and printCurrentState's rules,
 * which must find every field of every line equal to what the same
 * answer's JSON says. VITALS_GOLDEN_WRITE=1 rewrites the goldens.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "client.h"
#include "client_fixture.h"
#include "testutil.h"

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

/* The first line where a and b differ, for the failure message. */
static int
first_diff_line(const char *a, const char *b)
{
	int line = 1;

	for (; *a && *a == *b; a++, b++)
		if (*a == '\n')
			line++;
	return line;
}

/*
 * Render w at c, compare with the golden NAME.txt, then hand the text and
 * the JSON of the same answer to the parser.
 */
static void
golden(const char *name, Vitals__Window *w, const struct fmt_ctx *c)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	Vitals__Snapshot sn = VITALS__SNAPSHOT__INIT;
	char rel[128], cmd[1024], *want;
	const char *path;
	struct sbuf t, j;
	char *dir;
	int rc;

	sbuf_init(&t);
	sbuf_init(&j);
	fmt_summary(&t, w, c);
	snprintf(rel, sizeof(rel), "fixtures/dumpsys/%s.txt", name);
	path = tu_srcpath(rel);
	if (getenv("VITALS_GOLDEN_WRITE"))
		ck_assert_int_eq(tu_writes(path, sbuf_str(&t)), 0);
	want = slurp(path);
	ck_assert_msg(want != NULL, "no golden %s", path);
	ck_assert_msg(strcmp(want, sbuf_str(&t)) == 0,
	    "%s: differs from the golden at line %d:\n%s", name,
	    first_diff_line(want, sbuf_str(&t)), sbuf_str(&t));
	free(want);

	sn.window = w;
	r.version = 1;
	r.id = 1;
	r.result_case = VITALS__RESPONSE__RESULT_SNAPSHOT;
	r.snapshot = &sn;
	json_response(&j, &r);
	dir = tu_mkdtemp("dumpsys");
	snprintf(cmd, sizeof(cmd), "%s/out.txt", dir);
	ck_assert_int_eq(tu_writes(cmd, sbuf_str(&t)), 0);
	snprintf(cmd, sizeof(cmd), "%s/out.json", dir);
	ck_assert_int_eq(tu_writes(cmd, sbuf_str(&j)), 0);
	snprintf(cmd, sizeof(cmd), "python3 %s %s/out.txt %s/out.json %lld %s",
	    tu_srcpath("dumpsys_parse.py"), dir, dir,
	    (long long)(c->now_mono_ns / 1000000),
	    c->dumpsys_only ? "dumpsys" : "full");
	rc = system(cmd);
	ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
	    "%s: the parser disagrees (exit %d)", name,
	    WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
	/* the parser read the golden itself too: same bytes */
	tu_rmtree(dir);
	free(dir);
	sbuf_free(&t);
	sbuf_free(&j);
}

START_TEST(test_aosp_ratio)
{
	static const struct {
		uint64_t num, den;
		const char *want;
	} v[] = {
		{ 0, 100, "0" }, { 1, 1000, "0.1" },
		{ 4, 10000, "0" }, /* 0.04 %: truncated, no decimal 0 */
		{ 5, 1000, "0.5" }, { 99, 1000, "9.9" },
		{ 999, 10000, "9.9" }, /* 9.99: truncated, never rounded */
		{ 100, 1000, "10" },
		{ 105, 1000, "10" }, /* no decimal from 10 up */
		{ 9999, 10000, "99" }, { 1, 1, "100" }, { 35, 10, "350" },
		{ 50, 1000, "5" }, /* 5.0: no ".0" */
		{ 1, 0, "n/a" },
		{ UINT64_MAX / 2, UINT64_MAX / 2, "100" }, /* no wrap */
	};
	char b[32];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		fmt_aosp_ratio(b, sizeof(b), v[i].num, v[i].den);
		ck_assert_msg(strcmp(b, v[i].want) == 0,
		    "%llu/%llu: %s, not %s", (unsigned long long)v[i].num,
		    (unsigned long long)v[i].den, b, v[i].want);
	}
}
END_TEST

START_TEST(test_java_float)
{
	static const struct {
		double v;
		const char *want;
	} v[] = {
		{ 0, "0.0" },
		{ 1.5, "1.5" },
		{ 0.75, "0.75" },
		{ 12.34, "12.34" },
		{ 3, "3.0" },
		{ 0.1, "0.1" },
		{ 123.45, "123.45" },
	};
	char b[32];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		fmt_java_float(b, sizeof(b), v[i].v);
		ck_assert_str_eq(b, v[i].want);
	}
}
END_TEST

/* The shared client fixture: the summary with vitals' section. */
START_TEST(test_golden_summary)
{
	build_window();
	win.boot_start_ns = 1000 * NS; /* awake all along: no "awake" */
	win.boot_end_ns = 1010 * NS;
	golden("summary", &win, &fctx);
}
END_TEST

/*
 * The rules at their edges, dumpsys part only: ties (new, then gone, then
 * by pid), a 9.9 % and a 350 % process, faults only major, a process with
 * no CPU, one sampled under 1 ms (n/a), a name with ": " in it; a window
 * that was half asleep; "later" (now before the window); TOTAL without
 * iowait, irq and softirq.
 */
static Vitals__Task e_t[8];
static Vitals__Task *e_p[8];
static Vitals__CpuTimes e_d = VITALS__CPU_TIMES__INIT;
static Vitals__Cpu e_all = VITALS__CPU__INIT;

START_TEST(test_golden_edges)
{
	struct fmt_ctx c = { 99 * NS, 4, true, 0, false };
	size_t i;

	build_window();
	e_t[0] = mk_task(300, "app", "app", 99, 0, 10 * NS);
	e_t[1] = mk_task(200, "newbie", "newbie", 60, 39, 10 * NS);
	e_t[1].born = true;
	e_t[2] = mk_task(100, "gone", "gone", 0, 99, 10 * NS);
	e_t[2].exited = true;
	e_t[3] = mk_task(50, "a: b", "a", 98, 1, 10 * NS);
	e_t[4] = mk_task(7, "multi", "multi", 300, 50, 1 * NS);
	e_t[4].d_minflt = 1;
	e_t[5] = mk_task(8, "io", "io", 0, 0, 10 * NS);
	e_t[5].d_majflt = 4;
	e_t[6] = mk_task(9, "", "short", 1, 0, 500000);
	e_t[7] = mk_task(10, "system_server", "system_server", 4, 5,
	    9999 * 1000000LL);
	for (i = 0; i < 8; i++)
		e_p[i] = &e_t[i];
	e_d.user = 300;
	e_d.nice = 50;
	e_d.system = 150;
	e_d.idle = 3500;
	e_d.steal = 1000; /* not AOSP's: left out of TOTAL */
	e_all.cpu = -1;
	e_all.d = &e_d;
	win.all = &e_all;
	win.procs = e_p;
	win.n_procs = 8;
	win.nprocs_total = 8;
	win.boot_start_ns = 1000 * NS;
	win.boot_end_ns = 1020 * NS; /* 10 s of uptime in 20 s */
	g_load15 = mk_gauge(12.34, 12.34, 1);
	golden("edges", &win, &c);
}
END_TEST

/* Nothing known: no aggregate, no hz, no loads, no wall clock. */
START_TEST(test_golden_unknown)
{
	Vitals__Window w = VITALS__WINDOW__INIT;
	Vitals__Task t = mk_task(9, "idle", "idle", 0, 0, 0);
	Vitals__Task *tp = &t;

	w.n_procs = 1;
	w.procs = &tp;
	w.nprocs_total = 1;
	w.mono_start_ns = 100 * NS;
	w.mono_end_ns = 110 * NS;
	golden("unknown", &w, &fctx);
}
END_TEST

static Suite *
dumpsys_suite(void)
{
	Suite *s = suite_create("dumpsys");
	TCase *tc = tcase_create("cpuinfo");

	tcase_add_test(tc, test_aosp_ratio);
	tcase_add_test(tc, test_java_float);
	tcase_add_test(tc, test_golden_summary);
	tcase_add_test(tc, test_golden_edges);
	tcase_add_test(tc, test_golden_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* rendered times are local: pin the zone */
	setenv("TZ", "UTC", 1);
	tzset();
	return tu_run(dumpsys_suite());
}
