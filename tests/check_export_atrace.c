/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace in `vitals export --perfetto` against the real daemon and the
 * real kernel's trace_marker: slices nested on two depths, an instant and
 * a counter written by this process; each window's `atrace.slice NAME
 * count` and `... ns` equal the rows of `vitals --json trace --process
 * PID` summed over threads and depths, `atrace NAME` its counter's last
 * value. Built with the ftrace reader only (ftrace_tests).
 */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_run.h"
#include "harness.h"
#include "jsonmini.h"
#include "pftrace.h"
#include "testutil.h"
#include "trace/trace.h"

#define TRACEFS "/sys/kernel/tracing"

static int marker_fd = -1;

static void
mark(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ck_assert_int_eq(write(marker_fd, buf, (size_t)n), n);
}

static long long
ll(const struct jm *o, const char *path)
{
	const struct jm *v = jm_path(o, path);

	ck_assert_msg(v && jm_is_int(v), "%s: not an integer", path);
	return v->ll;
}

/* The value at ts of the counter track name under any process track of
 * pid: 1 found. */
static int
proc_value(const struct pf_trace *t, int32_t pid, const char *name,
    long long ts, int64_t *ret)
{
	size_t i;

	for (i = 0; i < t->nt; i++) {
		const struct pf_track *k = &t->t[i], *par;

		if (!k->counter || strcmp(k->name, name) != 0 ||
		    (par = pf_track(t, k->parent)) == NULL || !par->process ||
		    par->pid != pid)
			continue;
		if (pf_value(t, k->uuid, (uint64_t)ts, ret))
			return 1;
	}
	return 0;
}

START_TEST(atrace_counters)
{
	char conf[256], inst[64], me[16], path[512], why[512], *dir;
	const struct jm *wins;
	struct jm *j = NULL;
	struct pf_trace t;
	struct stat st;
	struct run r;
	struct td d;
	size_t i, k, seen = 0;
	int tries, pid = (int)getpid();

	if (stat(TRACEFS "/instances", &st) < 0)
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	ck_assert_int_eq(stat(TRACEFS "/instances", &st), 0);
	ck_assert_int_ge(marker_fd = open(TRACEFS "/trace_marker",
			     O_WRONLY | O_CLOEXEC),
	    0);
	snprintf(inst, sizeof(inst), "vitals_pf_%d", pid);
	snprintf(conf, sizeof(conf),
	    "ftrace_instance = %s\nbpf_load = off\nscanner = procfs\n"
	    "ftrace_sched = off\nftrace_tick_ms = 100\n",
	    inst);
	{
		static const char *const args[] = { "--interval-ms", "100",
			"--window-s", "1", NULL };

		td_start(&d, "pf-atrace", conf, args);
	}
	ck_assert_msg(td_log_until(d.pid, d.log, "ftrace: instance", 200, 50),
	    "no ftrace instance: see %s", d.log);
	ck_assert_msg(td_file_has(d.log, "ATrace on"), "no ATrace: see %s",
	    d.log);
	snprintf(me, sizeof(me), "%d", pid);
	/* two windows' worth: a draw with a nested draw, an instant, a
	 * counter whose last value changes */
	for (i = 0; i < 12; i++) {
		mark("B|%d|pf draw", pid);
		mark("B|%d|pf draw", pid);
		tu_sleep_ms(20);
		mark("E|%d", pid);
		tu_sleep_ms(10);
		mark("E|%d", pid);
		mark("I|%d|pf tap", pid);
		mark("C|%d|pf queue|%u", pid, (unsigned)(i * 3 + 1));
		tu_sleep_ms(170);
	}
	/* until the windows of those markers are stored */
	for (tries = 0; tries < 50; tries++) {
		const char *argv[] = { "vitals", "--socket", d.sock, "--json",
			"trace", "--since", "1h", "--process", me, NULL };
		size_t rows = 0;

		tu_sleep_ms(300);
		r = run_client_as(-1, argv);
		ck_assert_msg(r.code == 0, "trace: %d %s", r.code, r.err);
		j = jm_parse(r.out, strlen(r.out));
		run_free(&r);
		ck_assert_ptr_nonnull(j);
		wins = jm_path(j, "trace.windows");
		for (i = 0; wins && i < wins->n; i++) {
			const struct jm *sl = jm_get(&wins->v[i], "slice");

			for (k = 0; sl && k < sl->n; k++)
				rows += (size_t)ll(&sl->v[k], "count");
		}
		if (rows >= 12 * 3)
			break;
		jm_free(j);
		j = NULL;
	}
	ck_assert_msg(j != NULL, "the markers never reached the store");

	dir = tu_mkdtemp("pf-atrace");
	snprintf(path, sizeof(path), "%s/a.pftrace", dir);
	{
		const char *argv[] = { "vitals", "--socket", d.sock, "export",
			"--perfetto", path, "--since", "1h", "--pid", me,
			NULL };

		r = run_client_as(-1, argv);
		ck_assert_msg(r.code == 0, "export: %d %s", r.code, r.err);
		run_free(&r);
	}
	ck_assert_msg(pf_decode(path, &t, NULL, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_msg(pf_check(&t, why, sizeof(why)) == 0, "%s", why);
	wins = jm_path(j, "trace.windows");
	for (i = 0; i < wins->n; i++) {
		const struct jm *w = &wins->v[i];
		const struct jm *sl = jm_get(w, "slice"), *cn;
		long long s = ll(w, "wall_start_ns"), e = ll(w, "wall_end_ns");
		long long n = 0, ns = 0, taps = 0, last = -1;
		int64_t v;

		for (k = 0; sl && k < sl->n; k++) {
			const struct jm *x = &sl->v[k];

			if (strcmp(jm_get(x, "name")->str, "pf draw") == 0 &&
			    strcmp(jm_get(x, "kind")->str, "slice") == 0) {
				n += ll(x, "count");
				ns += ll(x, "total_ns");
			}
			if (strcmp(jm_get(x, "name")->str, "pf tap") == 0)
				taps += ll(x, "count");
		}
		cn = jm_get(w, "counter");
		for (k = 0; cn && k < cn->n; k++)
			if (strcmp(jm_get(&cn->v[k], "name")->str,
				"pf queue") == 0)
				last = ll(&cn->v[k], "last");
		if (n == 0 && taps == 0 && last < 0)
			continue;
		if (n) {
			ck_assert_msg(proc_value(&t, pid,
					  "atrace.slice pf draw count", s, &v),
			    "no draw count at %lld", s);
			ck_assert_int_eq(v, n);
			ck_assert(proc_value(&t, pid, "atrace.slice pf draw ns",
			    s, &v));
			ck_assert_int_eq(v, ns);
			ck_assert_int_ge(ns, n * 10000000LL); /* ≥ 10 ms each */
		}
		if (taps) {
			ck_assert(proc_value(&t, pid,
			    "atrace.instant pf tap count", s, &v));
			ck_assert_int_eq(v, taps);
		}
		if (last >= 0) {
			ck_assert(
			    proc_value(&t, pid, "atrace pf queue", e, &v));
			ck_assert_int_eq(v, last);
		}
		seen++;
	}
	ck_assert_uint_ge(seen, 2);
	pf_free(&t);
	jm_free(j);
	tu_rmtree(dir);
	free(dir);
	td_stop(&d);
	ftrace_instance_remove(NULL, inst);
	close(marker_fd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("export_atrace");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, atrace_counters);
	suite_add_tcase(s, tc);
	return tu_run_root(s);
}
