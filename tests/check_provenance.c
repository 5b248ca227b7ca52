/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provenance (core/provenance.c, store/store_prov.c): what the daemon
 * reads of its boot, kernel and builds, each source's absence said apart
 * from its failure; and what a stored window reads back of it — the
 * daemon start that made it, through the spool and after it moved,
 * nothing for a window stored before provenance was kept, rows of boots
 * no window is left of pruned.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/provenance.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define T0 (1699999800LL * NSEC_PER_SEC)

static char *dir;
static char path[4096], spool[4096], proc[4096], props[4096];

static void
setup(void)
{
	char f[4200];

	dir = tu_mkdtemp_db("prov", path, sizeof(path));
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(props, sizeof(props), "%s/props", dir);
	snprintf(f, sizeof(f), "%s/stat", proc);
	ck_assert_int_eq(tu_writes(f,
			     "cpu  1 2 3 4 5 6 7 0 0 0\nintr 5\nctxt 9\n"
			     "btime 1732861770\nprocesses 40\n"),
	    0);
	snprintf(f, sizeof(f), "%s/sys/kernel/random/boot_id", proc);
	ck_assert_int_eq(tu_writes(f, "6b1c2a57-0c1d-4b57-9a39-7f7f2f1d6e01\n"),
	    0);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

START_TEST(test_btime_parse)
{
	static const char ok[] = "cpu 1 2\nbtime 1732861770\nprocesses 3\n";
	static const char last[] = "ctxt 5\nbtime 42";
	static const char none[] = "cpu 1 2\nbtimes 5\n";
	static const char junk[] = "btime 12x\n";
	static const char huge[] = "btime 99999999999999999999999\n";

	ck_assert_int_eq(provenance_parse_btime(ok, strlen(ok)), 1732861770);
	ck_assert_int_eq(provenance_parse_btime(last, strlen(last)), 42);
	ck_assert_int_eq(provenance_parse_btime(none, strlen(none)), 0);
	ck_assert_int_eq(provenance_parse_btime(junk, strlen(junk)), 0);
	ck_assert_int_eq(provenance_parse_btime(huge, strlen(huge)), 0);
	ck_assert_int_eq(provenance_parse_btime("", 0), 0);
}
END_TEST

/* A host: no properties, so no fingerprint and a source that says why. */
START_TEST(test_read_host)
{
	struct provenance p;
	struct utsname u;

	ck_assert_int_eq(provenance_read(proc, NULL, "9.9.9", &p), 0);
	ck_assert_str_eq(p.boot_id, "6b1c2a57-0c1d-4b57-9a39-7f7f2f1d6e01");
	ck_assert_int_eq(p.btime_s, 1732861770);
	ck_assert_str_eq(p.version, "9.9.9");
	ck_assert_int_eq(uname(&u), 0);
	ck_assert_str_eq(p.kernel, u.release);
	ck_assert_str_eq(p.fingerprint, "");
	ck_assert_uint_eq(p.fp_source, PROV_FP_NONE);
	ck_assert_str_eq(provenance_fp_source_name(p.fp_source), "none");
	ck_assert_int_gt(p.since_mono_ns, 0);
	ck_assert_int_eq(provenance_read(NULL, NULL, "1", &p), -EINVAL);
}
END_TEST

/* Properties (the host double): set, unset, and a hostile value cut. */
START_TEST(test_read_fingerprint)
{
	static const char fp[] =
	    "google/oriole/oriole:14/UQ1A.240105.004/11206848:user/"
	    "release-keys";
	struct provenance p, q;
	char f[4200];

	ck_assert_int_eq(tu_writes(props, ""), 0); /* a file, not a dir */
	unlink(props);
	snprintf(f, sizeof(f), "%s/ro.build.type", props);
	ck_assert_int_eq(tu_writes(f, "user"), 0);
	ck_assert_int_eq(provenance_read(proc, props, "1", &p), 0);
	ck_assert_uint_eq(p.fp_source, PROV_FP_UNSET);
	ck_assert_str_eq(p.fingerprint, "");

	snprintf(f, sizeof(f), "%s/ro.build.fingerprint", props);
	ck_assert_int_eq(tu_writes(f, fp), 0);
	ck_assert_int_eq(provenance_read(proc, props, "1", &p), 0);
	ck_assert_uint_eq(p.fp_source, PROV_FP_PROPERTY);
	ck_assert_str_eq(p.fingerprint, fp);
	ck_assert_str_eq(provenance_fp_source_name(p.fp_source), "property");

	/* the same start read twice is the same provenance */
	ck_assert_int_eq(provenance_read(proc, props, "1", &q), 0);
	ck_assert(provenance_same(&p, &q));
	q.btime_s++;
	ck_assert(!provenance_same(&p, &q));

	/* a newline and what follows are not part of a fingerprint */
	ck_assert_int_eq(tu_writes(f, "abc\ninjected: 1"), 0);
	ck_assert_int_eq(provenance_read(proc, props, "1", &p), 0);
	ck_assert_str_eq(p.fingerprint, "abc");

	/* no proc: what it would say stays empty, the rest is read */
	ck_assert_int_eq(provenance_read("/nonexistent", props, "2", &p), 0);
	ck_assert_str_eq(p.boot_id, "");
	ck_assert_int_eq(p.btime_s, 0);
	ck_assert_str_eq(p.version, "2");
}
END_TEST

/* ------------------------------------------------------------ the store */

static struct provenance prov_a, prov_b;

static void
provs(void)
{
	memset(&prov_a, 0, sizeof(prov_a));
	snprintf(prov_a.boot_id, sizeof(prov_a.boot_id), "boot-a");
	snprintf(prov_a.kernel, sizeof(prov_a.kernel), "5.10.198-android13");
	snprintf(prov_a.version, sizeof(prov_a.version), "0.1.0");
	snprintf(prov_a.fingerprint, sizeof(prov_a.fingerprint), "fp/a");
	prov_a.fp_source = PROV_FP_PROPERTY;
	prov_a.btime_s = 1732861770;
	prov_a.since_mono_ns = 5 * SEC;
	/* the same boot, a daemon upgraded and restarted at 100 s */
	prov_b = prov_a;
	snprintf(prov_b.version, sizeof(prov_b.version), "0.2.0");
	prov_b.since_mono_ns = 100 * SEC;
}

static struct window *
mkwin(const char *boot, int64_t mono_s, const struct provenance *p)
{
	struct window *w = window_new((uint64_t)mono_s, 0);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", boot);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = mono_s * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + w->mono_start_ns;
	w->wall_end_ns = T0 + w->mono_end_ns;
	w->samples = w->samples_valid = 10;
	if (p)
		w->prov = *p;
	return w;
}

static void
put(struct store *s, const char *boot, int64_t mono_s,
    const struct provenance *p)
{
	struct window *w = mkwin(boot, mono_s, p);

	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

static struct store *
open_store(bool spooled)
{
	struct store_opts o;
	struct store *s;

	store_opts_default(&o);
	if (spooled) {
		o.spool_path = spool;
		o.commit_s = 3600;
	}
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	return s;
}

/* The version each stored window reads back with, oldest first, as a
 * reader connection sees them: "a,a,b,-". */
static void
versions(struct store *s, char *buf, size_t sz)
{
	struct window **v;
	struct store *rc;
	size_t n, i, len = 0;

	buf[0] = '\0';
	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_windows(rc, T0, T0 + 86400 * SEC, 0, &v, &n), 0);
	for (i = 0; i < n; i++) {
		const struct provenance *p = &v[i]->prov;
		const char *tag = !p->version[0] ? "-" :
		    !strcmp(p->version, "0.1.0") ? "a" :
		    !strcmp(p->version, "0.2.0") ? "b" :
						   "?";

		if (p->version[0]) {
			ck_assert_str_eq(p->boot_id, v[i]->boot_id);
			ck_assert_str_eq(p->kernel, "5.10.198-android13");
			ck_assert_int_eq(p->btime_s, 1732861770);
			ck_assert_uint_eq(p->fp_source, PROV_FP_PROPERTY);
			ck_assert_int_le(p->since_mono_ns, v[i]->mono_start_ns);
		}
		len += (size_t)snprintf(buf + len, sz - len, "%s%s",
		    len ? "," : "", tag);
		window_free(v[i]);
	}
	free(v);
	store_conn_end(rc);
	store_conn_close(rc);
}

static long long
rows(struct store *s, const char *sql)
{
	char v[32];

	ck_assert_int_eq(store_exec(s, sql, v, sizeof(v)), 0);
	return atoll(v);
}

static void
two_starts(bool spooled)
{
	struct store *s;
	char got[64];

	provs();
	s = open_store(spooled);
	/* a window of an older daemon that kept no provenance */
	put(s, "boot-a", 0, NULL);
	put(s, "boot-a", 10, &prov_a);
	put(s, "boot-a", 20, &prov_a);
	store_close(s);
	/* the next start (a new handle: it has written nothing yet) */
	s = open_store(spooled);
	put(s, "boot-a", 100, &prov_b);
	put(s, "boot-a", 110, &prov_b);
	versions(s, got, sizeof(got));
	ck_assert_str_eq(got, "-,a,a,b,b");
	/* one row per daemon start, whichever file it waits in */
	ck_assert_int_eq(rows(s, "SELECT count(*) FROM main.provenance"),
	    spooled ? 1 : 2);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(rows(s, "SELECT count(*) FROM main.provenance"), 2);
	versions(s, got, sizeof(got));
	ck_assert_str_eq(got, "-,a,a,b,b");
	store_close(s);
}

START_TEST(test_store_two_starts)
{
	two_starts(false);
}
END_TEST

START_TEST(test_store_two_starts_spool)
{
	two_starts(true);
}
END_TEST

/* Rows of a boot no window is left of go with the instance prune; the
 * rows of boots with windows stay. */
START_TEST(test_store_prune)
{
	struct provenance old;
	struct store *s;
	char got[64];

	provs();
	old = prov_a;
	snprintf(old.boot_id, sizeof(old.boot_id), "boot-old");
	s = open_store(false);
	put(s, "boot-old", 10, &old);
	store_close(s);
	s = open_store(false);
	put(s, "boot-a", 10, &prov_a);
	ck_assert_int_eq(rows(s, "SELECT count(*) FROM provenance"), 2);
	ck_assert_int_eq(
	    store_exec(s,
		"DELETE FROM windows WHERE boot = boot_key('boot-old')", NULL,
		0),
	    0);
	ck_assert_int_eq(store_maintain(s, T0 + 100 * SEC), 0);
	ck_assert_int_eq(rows(s,
			     "SELECT count(*) FROM provenance WHERE"
			     " boot_id = 'boot-old'"),
	    0);
	ck_assert_int_eq(rows(s,
			     "SELECT count(*) FROM provenance WHERE"
			     " boot_id = 'boot-a'"),
	    1);
	/* the boot rows (v24) go with the last window of their boot */
	ck_assert_int_eq(rows(s,
			     "SELECT count(*) FROM boot WHERE"
			     " boot_id = 'boot-a'"),
	    1);
	ck_assert_int_eq(rows(s, "SELECT count(*) FROM boot"), 1);
	put(s, "boot-a", 20, &prov_a);
	versions(s, got, sizeof(got));
	ck_assert_str_eq(got, "a,a");
	store_close(s);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("provenance");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_btime_parse);
	tcase_add_test(tc, test_read_host);
	tcase_add_test(tc, test_read_fingerprint);
	suite_add_tcase(s, tc);
	tc = tcase_create("store");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store_two_starts);
	tcase_add_test(tc, test_store_two_starts_spool);
	tcase_add_test(tc, test_store_prune);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(suite());
}
