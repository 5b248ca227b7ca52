/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitalsd's GPU frequency end to end through its socket. One daemon's
 * sys_root is a copy of both fixture trees (an Adreno's kgsl, a Mali's
 * devfreq; the Mali's min_freq removed); once a window has read the
 * files, trans_stat advances by known ms per frequency and gpubusy halves:
 * `vitals --json gpu --since` sums exactly those ms, the live answer gives
 * the exact busy share, absent figures are null, `vitals gpu` fits 80
 * columns, health counts the devices. Another daemon on the real /sys (no
 * GPU on a CI VM) answers with no device and health says 0.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jsonmini.h"
#include "testutil.h"

#define CONF_BASE          \
	"bpf_load = off\n" \
	"ftrace = off\n"   \
	"gpumem_load = off\n"

static const char *const args[] = { "--interval-ms", "100", "--window-s", "1",
	"--scanner", "procfs", "--store-commit-s", "0", NULL };

static char root[PATH_MAX - 256];

static void
put(const char *rel, const char *text)
{
	char p[PATH_MAX], t[PATH_MAX + 8];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(t, sizeof(t), "%s.new", p);
	ck_assert_int_eq(tu_writes(t, text), 0);
	ck_assert_int_eq(rename(t, p), 0);
}

static void
tree(void)
{
	const char *src = getenv("VITALS_SRCDIR");
	char *d = tu_mkdtemp("gpufreq-daemon"), cmd[3 * PATH_MAX];

	ck_assert_ptr_nonnull(src);
	snprintf(root, sizeof(root), "%s", d);
	free(d);
	snprintf(cmd, sizeof(cmd),
	    "cp -a '%s/tests/fixtures/gpufreq/adreno/.' '%s/' && "
	    "cp -a '%s/tests/fixtures/gpufreq/mali/.' '%s/' && "
	    "rm '%s/class/devfreq/1c500000.mali/min_freq'",
	    src, root, src, root, root);
	ck_assert_int_eq(system(cmd), 0);
}

/* the fixture's kgsl table, 1000 ms more at 257 MHz, 250 at 585 MHz */
static const char kgsl_ts[] =
    "     From  :   To\n"
    "           : 257000000 345000000 427000000 499200000 585000000"
    "   time(ms)\n"
    "  257000000:         0         3         1         0         0"
    "     121400\n"
    "  345000000:         2         0         4         1         0"
    "      53210\n"
    "* 427000000:         1         3         0         2         1"
    "      20115\n"
    "  499200000:         0         1         2         0         1"
    "       8120\n"
    "  585000000:         0         0         0         1         0"
    "       2900\n"
    "Total transition : 23\n";

/* the Mali's, 400 ms more at 471 MHz */
static const char mali_ts[] =
    "     From  :   To\n"
    "           : 151000000 302000000 471000000 572000000 762000000"
    " 848000000   time(ms)\n"
    "  151000000:         0         2         0         0         0"
    "         0    300210\n"
    "  302000000:         2         0         2         0         0"
    "         0     81000\n"
    "* 471000000:         0         2         0         2         0"
    "         0     40900\n"
    "  572000000:         0         0         2         0         2"
    "         0      9000\n"
    "  762000000:         0         0         0         2         0"
    "         2      2210\n"
    "  848000000:         0         0         0         0         2"
    "         0      1090\n"
    "Total transition : 20\n";

static struct jm *
json(const struct td *d, const char *a0, const char *a1, const char *a2)
{
	const char *argv[] = { "--json", a0, a1, a2, NULL };
	struct run r = td_vitals(d, -1, argv);
	struct jm *j;

	ck_assert_msg(r.code == 0, "vitals --json %s: exit %d: %s", a0, r.code,
	    r.err);
	j = jm_parse(r.out, strlen(r.out));
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	run_free(&r);
	return j;
}

static const struct jm *
device(const struct jm *j, const char *name)
{
	const struct jm *a = jm_path(j, "gpu_freq.devices");

	if (a == NULL || a->t != JM_ARR)
		return NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct jm *n = jm_get(&a->v[i], "name");

		if (n && n->t == JM_STR && !strcmp(n->str, name))
			return &a->v[i];
	}
	return NULL;
}

static long long
ll(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	ck_assert_msg(v && jm_is_int(v), "%s: not an integer", key);
	return v->ll;
}

static bool
is_null(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	return v && v->t == JM_NULL;
}

/* ms at hz in a device's states; -1: no such state */
static long long
ms_at(const struct jm *dev, long long hz)
{
	const struct jm *a = jm_get(dev, "states");

	ck_assert_msg(a && a->t == JM_ARR, "states not an array");
	for (size_t i = 0; i < a->n; i++)
		if (ll(&a->v[i], "hz") == hz)
			return ll(&a->v[i], "ms");
	return -1;
}

static long long
ms_sum(const struct jm *dev)
{
	const struct jm *a = jm_get(dev, "states");
	long long s = 0;

	ck_assert_msg(a && a->t == JM_ARR, "states not an array");
	for (size_t i = 0; i < a->n; i++)
		s += ll(&a->v[i], "ms");
	return s;
}

/* the live answer has both devices, each with a time-in-state reading */
static bool
baseline_read(const struct run *r)
{
	struct jm *j = jm_parse(r->out, strlen(r->out));
	const struct jm *k, *m;
	bool ok;

	if (j == NULL)
		return false;
	k = device(j, "kgsl-3d0");
	m = device(j, "1c500000.mali");
	ok = k && m && !is_null(k, "states") && !is_null(m, "states");
	jm_free(j);
	return ok;
}

START_TEST(fixture_tree)
{
	static const char *const gpu_json[] = { "--json", "gpu", NULL };
	static const char *const gpu_text[] = { "gpu", NULL };
	static const char *const health_text[] = { "health", NULL };
	char conf[PATH_MAX + 128];
	const struct jm *k, *m;
	struct jm *j = NULL;
	struct run r;
	struct td d;
	int tries;

	tree();
	snprintf(conf, sizeof(conf), CONF_BASE "sys_root = %s\n", root);
	td_start(&d, "gpufreq-daemon", conf, args);
	td_wait(&d, 20000, gpu_json, baseline_read);

	/* the files move on: known Δ ms and half busy */
	put("class/kgsl/kgsl-3d0/devfreq/trans_stat", kgsl_ts);
	put("class/devfreq/1c500000.mali/trans_stat", mali_ts);
	put("class/kgsl/kgsl-3d0/gpubusy", "  50000  100000\n");

	/* the stored windows sum exactly the Δs (the baseline before) */
	for (tries = 0; tries < 100; tries++) {
		jm_free(j);
		j = json(&d, "gpu", "--since", "1h");
		k = device(j, "kgsl-3d0");
		m = device(j, "1c500000.mali");
		if (k && m && ms_sum(k) == 1250 && ms_sum(m) == 400)
			break;
		tu_sleep_ms(200);
	}
	ck_assert_msg(tries < 100, "time in state never reached the Δs");
	ck_assert(jm_path(j, "gpu_freq.stored")->b);
	ck_assert_int_ge(ll(jm_get(j, "gpu_freq"), "windows"), 2);
	ck_assert_int_eq(ms_at(k, 257000000), 1000);
	ck_assert_int_eq(ms_at(k, 585000000), 250);
	ck_assert_int_eq(ms_at(k, 345000000), 0);
	ck_assert_int_eq(ms_at(m, 471000000), 400);
	ck_assert_int_eq(ms_at(m, 151000000), 0);
	/* states ascending by hz */
	ck_assert_int_eq(ll(&jm_get(k, "states")->v[0], "hz"), 257000000);
	ck_assert_str_eq(jm_get(k, "kind")->str, "kgsl");
	ck_assert_str_eq(jm_get(m, "kind")->str, "mali");
	/* gpubusy sampled: Σ total is 100000 µs a reading */
	ck_assert_int_eq(ll(k, "total_us"), 100000 * ll(k, "reads"));
	/* what the Mali does not have is null, never 0 */
	ck_assert(is_null(m, "busy_us"));
	ck_assert(is_null(m, "total_us"));
	ck_assert(is_null(m, "min_hz"));
	ck_assert_int_eq(ll(m, "max_hz"), 848000000);
	ck_assert_int_eq(ll(k, "min_hz"), 257000000);
	ck_assert_int_eq(ll(m, "cur_mean_hz"), 471000000);
	ck_assert_int_eq(ll(k, "errors"), 0);
	jm_free(j);
	j = NULL;

	/* the last window, wholly after the change: busy exactly half;
	 * the Mali's utilisation 37 % */
	for (tries = 0; tries < 100; tries++) {
		jm_free(j);
		j = json(&d, "gpu", NULL, NULL);
		k = device(j, "kgsl-3d0");
		if (k && jm_is_int(jm_get(k, "busy_ppm")) &&
		    ll(k, "busy_ppm") == 500000)
			break;
		tu_sleep_ms(200);
	}
	ck_assert_msg(tries < 100, "busy share never 0.5");
	m = device(j, "1c500000.mali");
	ck_assert_int_eq(ll(m, "busy_ppm"), 370000);
	ck_assert_int_eq(ll(k, "busy_us") * 2, ll(k, "total_us"));
	ck_assert_int_eq(ll(jm_get(j, "gpu_freq"), "found"), 2);
	/* 64-bit figures travel as strings */
	ck_assert_int_eq(jm_get(k, "cur_sum_hz")->t, JM_STR);
	jm_free(j);

	/* the text view: both devices, 80 columns at most */
	r = td_vitals(&d, -1, gpu_text);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "kgsl-3d0"));
	ck_assert_ptr_nonnull(strstr(r.out, "2 GPU devices"));
	ck_assert_ptr_nonnull(strstr(r.out, "time in state"));
	for (char *l = r.out, *e; *l; l = e + 1) {
		if ((e = strchr(l, '\n')) == NULL)
			break;
		ck_assert_msg(e - l <= 80, "line over 80 columns: %.*s",
		    (int)(e - l), l);
	}
	run_free(&r);
	/* gpumem's section: verbose text, and JSON beside gpu_mem */
	{
		static const char *const gm[] = { "gpumem", "--verbose", NULL };

		r = td_vitals(&d, -1, gm);
		ck_assert_int_eq(r.code, 0);
		ck_assert_msg(strstr(r.out,
				  "kgsl-3d0 (kgsl): mean 427 MHz, "
				  "max 427 MHz, busy 50.0%") != NULL,
		    "gpumem --verbose: %s", r.out);
		run_free(&r);
		j = json(&d, "gpumem", NULL, NULL);
		ck_assert_ptr_nonnull(jm_path(j, "gpu_freq.devices"));
		jm_free(j);
	}
	r = td_vitals(&d, -1, health_text);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "GPU frequency: 2 GPU devices"));
	run_free(&r);
	td_stop(&d);
	tu_rmtree(root);
}
END_TEST

START_TEST(real_sys)
{
	static const char *const health_json[] = { "--json", "health", NULL };
	char conf[256];
	struct jm *j;
	struct run r;
	struct td d;
	const char *gpu[] = { "gpu", NULL };

	if (access("/sys/class/kgsl", F_OK) == 0)
		return; /* a machine with an Adreno: not this test's */
	snprintf(conf, sizeof(conf), CONF_BASE);
	td_start(&d, "gpufreq-none", conf, args);
	td_wait(&d, 20000, health_json, td_has_window);
	j = json(&d, "gpu", NULL, NULL);
	ck_assert(jm_path(j, "gpu_freq.on")->b);
	ck_assert_int_eq(jm_path(j, "gpu_freq.found")->ll, 0);
	ck_assert(jm_path(j, "gpu_freq.devices") == NULL ||
	    jm_path(j, "gpu_freq.devices")->n == 0);
	jm_free(j);
	j = json(&d, "health", NULL, NULL);
	ck_assert_ptr_nonnull(jm_path(j, "health.gpu_freq"));
	ck_assert_int_eq(jm_path(j, "health.gpu_freq.devices")->ll, 0);
	jm_free(j);
	r = td_vitals(&d, -1, gpu);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "0 GPU devices"));
	run_free(&r);
	td_stop(&d);
}
END_TEST

/* gpufreq = off: no part, no health, `vitals gpu` says so */
START_TEST(off)
{
	static const char *const health_json[] = { "--json", "health", NULL };
	const char *gpu[] = { "gpu", NULL };
	struct jm *j;
	struct run r;
	struct td d;

	td_start(&d, "gpufreq-off", CONF_BASE "gpufreq = off\n", args);
	td_wait(&d, 20000, health_json, td_has_window);
	j = json(&d, "gpu", NULL, NULL);
	ck_assert(!jm_path(j, "gpu_freq.on")->b);
	jm_free(j);
	j = json(&d, "health", NULL, NULL);
	/* an absent message prints null */
	ck_assert(jm_path(j, "health.gpu_freq") == NULL ||
	    jm_path(j, "health.gpu_freq")->t == JM_NULL);
	jm_free(j);
	r = td_vitals(&d, -1, gpu);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "gpufreq = off"));
	run_free(&r);
	td_stop(&d);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gpufreq_daemon");
	TCase *tc = tcase_create("daemon");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fixture_tree);
	tcase_add_test(tc, real_sys);
	tcase_add_test(tc, off);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
