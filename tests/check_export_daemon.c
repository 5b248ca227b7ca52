/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals export --perfetto` against the real daemon on the real kernel:
 * a CPU burner runs through several 1 s windows; the exported file,
 * decoded by protoc against proto/perfetto_trace.proto, keeps the
 * sequence rules (pftrace.c: unique uuids, descriptors first, counters on
 * counter tracks, stamps in order per track), holds the burner's process
 * track with its pid and name, and its CPU, faults and RSS equal what
 * `vitals --json proc` answers window by window; the system's CPU by
 * mode, PSI and meminfo equal each window of `vitals --json cgroups
 * --since` (a WindowList). The pid filter, the summary (text, JSON, a
 * trace on stdout) and the exit codes of a bad call.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_run.h"
#include "harness.h"
#include "jsonmini.h"
#include "pftrace.h"
#include "testutil.h"

static struct run
vitals(const struct td *d, const char *a0, const char *a1, const char *a2,
    const char *a3, const char *a4, const char *a5, const char *a6)
{
	const char *argv[] = { "vitals", "--socket", d->sock, "--timeout",
		"10000", a0, a1, a2, a3, a4, a5, a6, NULL };

	return run_client_as(-1, argv);
}

static struct jm *
vitals_json(const struct td *d, const char *a0, const char *a1, const char *a2,
    const char *a3)
{
	struct run r = vitals(d, "--json", a0, a1, a2, a3, NULL, NULL);
	struct jm *j;

	ck_assert_msg(r.code == 0, "vitals --json %s: exit %d: %s", a0, r.code,
	    r.err);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(j != NULL, "vitals --json %s: not JSON: %s", a0, r.out);
	run_free(&r);
	return j;
}

static long long
ll(const struct jm *o, const char *path)
{
	const struct jm *v = jm_path(o, path);

	ck_assert_msg(v && jm_is_int(v), "%s: not an integer", path);
	return v->ll;
}

static void
daemon_start(struct td *d)
{
	static const char *const args[] = { "--interval-ms", "100",
		"--window-s", "1", "--threads", "changed", NULL };
	static const char *const health[] = { "--json", "health", NULL };

	td_start(d, "pf-daemon", NULL, args);
	/* the export reads the store: a window committed, not only closed
	 * (CI's run of 9056af2 asked in between: "no stored window") */
	td_wait(d, 10000, health, td_has_stored_window);
}

/* The export of the last hour into dir/name, decoded and checked. */
static void
export_decode(const struct td *d, const char *dir, const char *name,
    const char *pid, struct pf_trace *t, struct jm **ret_summary)
{
	char path[512], why[512];
	struct run r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	{
		const char *argv[] = { "vitals", "--socket", d->sock,
			"--timeout", "10000", "--json", "export", "--perfetto",
			path, "--since", "1h", pid ? "--pid" : NULL, pid,
			NULL };

		r = run_client_as(-1, argv);
	}
	ck_assert_msg(r.code == 0, "export: exit %d: %s", r.code, r.err);
	*ret_summary = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(*ret_summary != NULL, "summary not JSON: %s", r.out);
	run_free(&r);
	ck_assert_msg(pf_decode(path, t, NULL, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_msg(pf_check(t, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(ll(*ret_summary, "export.packets"),
	    (long long)t->npackets);
	ck_assert_int_eq(ll(*ret_summary, "export.tracks"), (long long)t->nt);
}

static int64_t
at(const struct pf_trace *t, uint64_t parent, const char *name, long long ts)
{
	const struct pf_track *k = pf_child(t, parent, name);
	int64_t v;

	ck_assert_msg(k != NULL, "no track %s", name);
	ck_assert_msg(pf_value(t, k->uuid, (uint64_t)ts, &v) == 1,
	    "track %s: no value at %lld", name, ts);
	return v;
}

START_TEST(burner_and_system)
{
	static const char *const modes[] = { "user", "nice", "system", "idle",
		"iowait", "irq", "softirq", "steal" };
	struct td d;
	char pidstr[16], *dir;
	struct jm *proc = NULL, *sum, *wl;
	const struct jm *hist = NULL, *task = NULL, *wins;
	const struct pf_track *p;
	struct pf_trace t;
	long long last_end, ticks = 0;
	char pname[80];
	size_t i, m, matched = 0, psi_seen = 0, mem_seen = 0, points = 0;
	int pid, tries;

	daemon_start(&d);
	pid = tu_burner_start();
	ck_assert_int_gt(pid, 0);
	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	/* three of its windows stored, then it ends: its rows are final */
	for (tries = 0; tries < 100; tries++) {
		tu_sleep_ms(200);
		proc = vitals_json(&d, "proc", pidstr, "--since", "1h");
		hist = jm_path(proc, "process.history");
		if (hist && hist->n >= 3)
			break;
		jm_free(proc);
		proc = NULL;
	}
	ck_assert_msg(proc != NULL, "the burner never had 3 stored windows");
	jm_free(proc);
	tu_burner_stop(pid);
	for (tries = 0; tries < 50; tries++) {
		tu_sleep_ms(200);
		proc = vitals_json(&d, "proc", pidstr, "--since", "1h");
		hist = jm_path(proc, "process.history");
		task = hist && hist->n ? jm_get(&hist->v[hist->n - 1], "task") :
					 NULL;
		if (task && jm_get(task, "exited") && jm_get(task, "exited")->b)
			break;
		jm_free(proc);
		proc = NULL;
	}
	ck_assert_msg(proc != NULL, "the burner's exit never stored");

	dir = tu_mkdtemp("pf-export");
	export_decode(&d, dir, "all.pftrace", NULL, &t, &sum);
	ck_assert(!jm_get(sum, "export.truncated") ||
	    !jm_path(sum, "export.truncated")->b);
	ck_assert_int_ge(ll(sum, "export.windows"), 3);
	last_end = ll(sum, "export.last_wall_ns");

	/* the burner: its instance's track, name as the daemon knows it */
	{
		const struct jm *nm = jm_get(task, "name");
		const char *want = nm && nm->str && nm->str[0] ?
		    nm->str :
		    jm_get(task, "comm")->str;

		ck_assert_str_eq(jm_get(task, "comm")->str, "tu_burner");
		ck_assert_msg((p = pf_process(&t, pid, want)) != NULL,
		    "no process track (%d, %s)", pid, want);
	}
	for (i = 0; i < hist->n; i++) {
		const struct jm *h = &hist->v[i], *tk = jm_get(h, "task");
		long long s = ll(h, "wall_start_ns"), e = ll(h, "wall_end_ns");

		ck_assert_int_eq(ll(h, "level"), 0);
		ck_assert_int_le(e, last_end);
		ck_assert_int_eq(at(&t, p->uuid, "cpu", s),
		    ll(tk, "d_utime") + ll(tk, "d_stime"));
		ck_assert_int_eq(at(&t, p->uuid, "minflt", s),
		    ll(tk, "d_minflt"));
		ck_assert_int_eq(at(&t, p->uuid, "majflt", s),
		    ll(tk, "d_majflt"));
		ck_assert_int_eq(at(&t, p->uuid, "rss", e),
		    ll(tk, "rss_pages_last"));
		ticks += ll(tk, "d_utime") + ll(tk, "d_stime");
		points++;
	}
	/* one value per window it had a row in, no more */
	ck_assert_uint_eq(pf_count(&t, pf_child(&t, p->uuid, "cpu")->uuid),
	    points);
	ck_assert_int_gt(ticks, 50); /* ≥ 3 windows of a busy loop */
	ck_assert_int_eq(pf_child(&t, p->uuid, "rss")->mult,
	    sysconf(_SC_PAGESIZE));

	/* the system's figures against every window the WindowList holds
	 * up to the export's last one */
	wl = vitals_json(&d, "cgroups", "--since", "1h", NULL);
	ck_assert_ptr_nonnull(wins = jm_path(wl, "windows.windows"));
	for (i = 0; i < wins->n; i++) {
		const struct jm *w = &wins->v[i], *psi, *mem;
		long long s = ll(w, "wall_start_ns"), e = ll(w, "wall_end_ns");
		char name[96];

		if (e > last_end)
			continue;
		for (m = 0; m < 8; m++) {
			char path[32];

			snprintf(name, sizeof(name), "cpu.%s", modes[m]);
			snprintf(path, sizeof(path), "all.d.%s", modes[m]);
			ck_assert_int_eq(at(&t, 0, name, s), ll(w, path));
		}
		psi = jm_get(w, "psi");
		for (m = 0; psi && m < psi->n; m++) {
			const struct jm *x = &psi->v[m];
			const char *res = jm_get(x, "resource")->str;

			if (!jm_get(x, "available")->b || ll(x, "samples") == 0)
				continue;
			snprintf(name, sizeof(name), "psi.%s.some", res);
			ck_assert_int_eq(at(&t, 0, name, s),
			    ll(x, "d_some_us"));
			if (jm_get(x, "have_full")->b) {
				snprintf(name, sizeof(name), "psi.%s.full",
				    res);
				ck_assert_int_eq(at(&t, 0, name, s),
				    ll(x, "d_full_us"));
			}
			psi_seen++;
		}
		mem = jm_get(w, "meminfo");
		for (m = 0; mem && m < mem->n; m++) {
			const struct jm *x = &mem->v[m];
			const struct jm *g = jm_get(x, "gauge");

			if (ll(g, "n") == 0)
				continue;
			snprintf(name, sizeof(name), "meminfo.%s",
			    jm_get(x, "name")->str);
			ck_assert_int_eq(at(&t, 0, name, e),
			    (long long)jm_get(g, "last")->num);
			mem_seen++;
		}
		matched++;
	}
	ck_assert_uint_ge(matched, 3);
	/* every window of the export is one of those */
	ck_assert_uint_eq(pf_count(&t, pf_child(&t, 0, "cpu.user")->uuid),
	    matched);
	ck_assert_uint_ge(psi_seen, matched); /* this kernel has PSI */
	ck_assert_uint_ge(mem_seen, matched);
	ck_assert_int_eq(pf_child(&t, 0, "psi.cpu.some")->mult, 1000);
	snprintf(pname, sizeof(pname), "%s", p->pname);
	jm_free(wl);
	jm_free(sum);
	pf_free(&t);

	/* --pid: its process alone, the system's tracks beside it */
	export_decode(&d, dir, "pid.pftrace", pidstr, &t, &sum);
	for (i = 0; i < t.nt; i++)
		if (t.t[i].process || t.t[i].thread)
			ck_assert_int_eq(t.t[i].pid, pid);
	ck_assert_ptr_nonnull(pf_process(&t, pid, pname));
	ck_assert_ptr_nonnull(pf_child(&t, 0, "cpu.user"));
	jm_free(sum);
	pf_free(&t);
	jm_free(proc);
	tu_rmtree(dir);
	free(dir);
	td_stop(&d);
}
END_TEST

START_TEST(summary_and_errors)
{
	struct td d;
	char path[512], *dir;
	struct stat st;
	struct run r;

	daemon_start(&d);
	dir = tu_mkdtemp("pf-export");
	snprintf(path, sizeof(path), "%s/t.pftrace", dir);
	r = vitals(&d, "export", "--perfetto", path, NULL, NULL, NULL, NULL);
	ck_assert_msg(r.code == 0, "%s", r.err);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_msg(strstr(r.out, path) && strstr(r.out, " bytes, ") &&
		strstr(r.out, " windows ") && strstr(r.out, " tracks"),
	    "%s", r.out);
	{
		char want[64];

		snprintf(want, sizeof(want), "%lld bytes",
		    (long long)st.st_size);
		ck_assert_msg(strstr(r.out, want) != NULL, "%s", r.out);
	}
	run_free(&r);
	/* "-": the trace on stdout, the summary on stderr */
	r = vitals(&d, "export", "--perfetto", "-", "--since", "1m", NULL,
	    NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.err, "-: ") == r.err, "%s", r.err);
	ck_assert(r.out[0] == 0x0a); /* Trace.packet's tag first */
	run_free(&r);
	/* no format: a usage error; a file that cannot be written: 4 */
	r = vitals(&d, "export", NULL, NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 1);
	run_free(&r);
	r = vitals(&d, "export", "--perfetto", "/nonexistent/dir/t", NULL, NULL,
	    NULL, NULL);
	ck_assert_int_eq(r.code, 4);
	ck_assert_msg(strstr(r.err, "/nonexistent/dir/t") != NULL, "%s", r.err);
	run_free(&r);
	/* export's flags stay export's */
	r = vitals(&d, "top", "--perfetto", path, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.code, 1);
	run_free(&r);
	tu_rmtree(dir);
	free(dir);
	td_stop(&d);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("export_daemon");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, burner_and_system);
	tcase_add_test(tc, summary_and_errors);
	suite_add_tcase(s, tc);
	return tu_run_root(s);
}
