/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace categories through the real vitalsd on this kernel (root), with
 * the property double standing in for the device's properties: with its
 * ftrace instance on, the daemon sets the tags and the app list in the
 * double's directory, and puts the old values back at a clean stop; a
 * start that fails leaves them untouched; a value another tracer set
 * before the start is left alone (counted, and shown by `vitals health
 * --json` and in the stored windows) until that tracer clears it, then
 * vitalsd takes over; a tracer that appears later makes it step back, and
 * its values survive vitalsd's stop.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/atrace_cat.h"
#include "harness.h"
#include "testutil.h"
#include "vitalsd.h"

#include "client_run.h"
#include "jsonmini.h"

#define TRACEFS "/sys/kernel/tracing"

/* Every window the store holds, as stored (oldest first). */
static size_t
stored_windows(struct store *s, struct window ***ret)
{
	size_t n = 0;

	ck_assert_int_eq(store_windows(s, 0, INT64_MAX / 2, 0, ret, &n), 0);
	return n;
}

static void
free_stored(struct window **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
}

static char *tmpdir;
static char props[PATH_MAX];
static char inst[64];

static void
setup(void)
{
	static unsigned n;
	struct stat st;

	if (stat(TRACEFS "/instances", &st) < 0)
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	ck_assert_int_eq(stat(TRACEFS "/instances", &st), 0);
	snprintf(inst, sizeof(inst), "vitals_atcat_%d_%u", (int)getpid(), n++);
	tmpdir = tu_mkdtemp("atcat_daemon");
	ck_assert_ptr_nonnull(tmpdir);
	snprintf(props, sizeof(props), "%s/props", tmpdir);
	ck_assert_int_eq(mkdir(props, 0755), 0);
}

static void
teardown(void)
{
	tu_rmtree(tmpdir);
	free(tmpdir);
}

/* A property of the double, or "(unset)". */
static const char *
prop(const char *name)
{
	static char v[4][SYSPROP_VALUE_MAX];
	static unsigned k;
	char *b = v[k++ % 4];
	int r = sysprop_read(props, name, b, SYSPROP_VALUE_MAX);

	if (r == -ENOENT)
		return "(unset)";
	ck_assert_int_eq(r, 0);
	return b;
}

static void
prop_set(const char *name, const char *value)
{
	struct sysprop *sp;

	ck_assert_int_eq(sysprop_open(props, &sp), 0);
	ck_assert_int_eq(sysprop_set(sp, name, value), 0);
	sysprop_free(sp);
}

/* Wait (up to 5 s) for a property to read want. */
static bool
prop_wait(const char *name, const char *want)
{
	unsigned i;

	for (i = 0; i < 100; i++) {
		if (strcmp(prop(name), want) == 0)
			return true;
		tu_sleep_ms(50);
	}
	return false;
}

/* vitalsd with the double and categories gfx input, apps com.example.a
 * and "*"; sock NULL: <state>.sock. */
static pid_t
start_daemon(const char *log, const char *state, const char *sock_path)
{
	char conf[PATH_MAX], text[1024], sock[PATH_MAX];

	snprintf(conf, sizeof(conf), "%s.conf", state);
	snprintf(sock, sizeof(sock), "%s.sock", state);
	snprintf(text, sizeof(text),
	    "ftrace_instance = %s\nbpf_load = off\n"
	    "scanner = procfs\nftrace_sched = off\nftrace_tick_ms = 100\n"
	    "atrace_categories = gfx input\n"
	    "atrace_apps = com.example.a, *\n",
	    inst);
	ck_assert_int_eq(tu_writes(conf, text), 0);
	{
		const char *argv[] = { "vitalsd", "-f", "-c", conf,
			"--state-dir", state, "--socket",
			sock_path ? sock_path : sock, "--interval-ms", "100",
			"--window-s", "1", "--prop-root", props, NULL };

		return td_exec(log, TD_LOG_TRUNC, argv, NULL, NULL);
	}
}

static void
wait_atrace(pid_t pid, const char *log)
{
	td_log_until(pid, log, "ftrace: instance", 200, 50);
	ck_assert_msg(td_file_has(log, "ATrace on"), "no ATrace: see %s", log);
}

/* `vitals health --json`'s health.trace, once a window has closed with
 * the ATrace categories state `want` (up to 5 s); NULL if it never did.
 * *ret_j owns it. */
static const struct jm *
health_trace(const char *state, const char *want, struct jm **ret_j)
{
	char sock[PATH_MAX];
	const char *argv[] = { "vitals", "--socket", sock, "health", "--json",
		NULL };
	unsigned i;

	snprintf(sock, sizeof(sock), "%s.sock", state);
	for (i = 0; i < 50; i++) {
		struct run r = run_client(argv);
		const struct jm *t, *s;
		struct jm *j;

		if (r.code == 0 &&
		    (j = jm_parse(r.out, strlen(r.out))) != NULL) {
			t = jm_path(j, "health.trace");
			s = t ? jm_get(t, "atrace_categories") : NULL;
			if (s && s->t == JM_STR && strcmp(s->str, want) == 0) {
				run_free(&r);
				*ret_j = j;
				return t;
			}
			jm_free(j);
		}
		run_free(&r);
		tu_sleep_ms(100);
	}
	*ret_j = NULL;
	return NULL;
}

/* An integer field; absent (a zero the emitter left out) is 0. */
static long long
jint0(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);

	if (v == NULL)
		return 0;
	ck_assert_msg(jm_is_int(v), "%s not an integer", key);
	return v->ll;
}

/* Free properties (atrace's leftovers: tags "0", app_0 of an old run):
 * set while the daemon runs, put back exactly at its stop. */
START_TEST(test_set_and_restore)
{
	char log[PATH_MAX], state[PATH_MAX];
	const struct jm *t;
	struct jm *j;
	pid_t pid;

	prop_set(ATCAT_TAGS_PROP, "0");
	prop_set("debug.atrace.app_0", "old.app");
	snprintf(log, sizeof(log), "%s/s.log", tmpdir);
	snprintf(state, sizeof(state), "%s/s", tmpdir);
	pid = start_daemon(log, state, NULL);
	wait_atrace(pid, log);
	ck_assert_msg(prop_wait(ATCAT_TAGS_PROP, "0x6"), "tags %s; see %s",
	    prop(ATCAT_TAGS_PROP), log);
	ck_assert_str_eq(prop(ATCAT_APP_NUMBER_PROP), "2");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "com.example.a");
	ck_assert_str_eq(prop("debug.atrace.app_1"), "*");
	t = health_trace(state, "on", &j);
	ck_assert_msg(t != NULL, "health never said on; see %s", log);
	ck_assert_int_eq(jint0(t, "atrace_tags"), 0x6);
	ck_assert_int_eq(jint0(t, "atrace_flags"), 0x6);
	ck_assert_int_eq(jint0(t, "atrace_foreign"), 0);
	ck_assert_str_eq(jm_get(t, "atrace_tag_names")->str, "gfx input");
	jm_free(j);
	td_term(pid, NULL);
	ck_assert_str_eq(prop(ATCAT_TAGS_PROP), "0");
	ck_assert_str_eq(prop(ATCAT_APP_NUMBER_PROP), "(unset)");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "old.app");
	ck_assert_str_eq(prop("debug.atrace.app_1"), "(unset)");
	ck_assert(td_file_has(log, "atrace categories: restored"));
}
END_TEST

/* A start that fails (its socket cannot be made) never touches them. */
START_TEST(test_failed_start)
{
	char log[PATH_MAX], state[PATH_MAX], sock[PATH_MAX];
	int status;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/f.log", tmpdir);
	snprintf(state, sizeof(state), "%s/f", tmpdir);
	snprintf(sock, sizeof(sock), "%s/no/such/dir/x.sock", tmpdir);
	pid = start_daemon(log, state, sock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 0,
	    "vitalsd status %#x; see %s", status, log);
	ck_assert_str_eq(prop(ATCAT_TAGS_PROP), "(unset)");
	ck_assert_str_eq(prop(ATCAT_APP_NUMBER_PROP), "(unset)");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "(unset)");
}
END_TEST

/*
 * Another tracer's tags before the start: left alone and counted while
 * they stay (health and the stored windows say so); cleared, vitalsd
 * takes over; a tracer that comes later makes it step back, and what that
 * tracer set survives vitalsd's stop.
 */
START_TEST(test_other_owner)
{
	char log[PATH_MAX], state[PATH_MAX], db[PATH_MAX + 16], v[128];
	struct store *s = NULL;
	const struct jm *t;
	struct jm *j;
	pid_t pid;

	prop_set(ATCAT_TAGS_PROP, "0x100");
	snprintf(log, sizeof(log), "%s/o.log", tmpdir);
	snprintf(state, sizeof(state), "%s/o", tmpdir);
	pid = start_daemon(log, state, NULL);
	wait_atrace(pid, log);
	t = health_trace(state, "skipped_other_owner", &j);
	ck_assert_msg(t != NULL, "health never said skipped; see %s", log);
	ck_assert_int_gt(jint0(t, "atrace_foreign"), 0);
	ck_assert_int_eq(jint0(t, "atrace_flags"), 0x100);
	ck_assert_int_eq(jint0(t, "atrace_takeovers"), 0);
	jm_free(j);
	/* a second later it is still the other tracer's */
	tu_sleep_ms(1000);
	ck_assert_str_eq(prop(ATCAT_TAGS_PROP), "0x100");
	ck_assert_str_eq(prop(ATCAT_APP_NUMBER_PROP), "(unset)");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "(unset)");

	/* the other tracer stops as atrace does */
	prop_set(ATCAT_TAGS_PROP, "0");
	ck_assert_msg(prop_wait(ATCAT_TAGS_PROP, "0x6"),
	    "not taken over; "
	    "see %s",
	    log);
	ck_assert_str_eq(prop(ATCAT_APP_NUMBER_PROP), "2");
	t = health_trace(state, "on", &j);
	ck_assert_msg(t != NULL, "health never said on; see %s", log);
	jm_free(j);

	/* a tracer starts while vitalsd holds them: apps, then tags */
	prop_set("debug.atrace.app_0", "com.their");
	prop_set(ATCAT_APP_NUMBER_PROP, "1");
	prop_set(ATCAT_TAGS_PROP, "0x22");
	t = health_trace(state, "skipped_other_owner", &j);
	ck_assert_msg(t != NULL, "did not step back; see %s", log);
	ck_assert_int_eq(jint0(t, "atrace_flags"), 0x22);
	jm_free(j);
	td_term(pid, NULL);
	ck_assert_str_eq(prop(ATCAT_TAGS_PROP), "0x22");
	ck_assert_str_eq(prop(ATCAT_APP_NUMBER_PROP), "1");
	ck_assert_str_eq(prop("debug.atrace.app_0"), "com.their");
	ck_assert_str_eq(prop("debug.atrace.app_1"), "*");

	/* the stored windows: skipped, on, skipped again; one take-over,
	 * one step back, foreign checks counted */
	snprintf(db, sizeof(db), "%s/vitals.db", state);
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	{
		struct window **ws;
		size_t n = stored_windows(s, &ws), i;
		uint64_t take = 0, yield = 0, foreign = 0;
		bool on = false, skipped = false;

		for (i = 0; i < n; i++) {
			const struct window_trace *t = window_trace(ws[i]);

			if (t == NULL)
				continue;
			on |= t->cat_state == ATCAT_ON;
			skipped |= t->cat_state == ATCAT_SKIPPED_OTHER_OWNER;
			take += t->cat_takeovers;
			yield += t->cat_yields;
			foreign += t->cat_foreign;
		}
		free_stored(ws, n);
		ck_assert_msg(on && skipped, "stored states: on %d skipped %d",
		    on, skipped);
		ck_assert_uint_eq(take, 1);
		ck_assert_uint_eq(yield, 1);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)foreign);
	}
	ck_assert_int_ge(atoi(v), 10);
	store_close(s);
}
END_TEST

static Suite *
atcat_daemon_suite(void)
{
	Suite *s = suite_create("atrace_cat_daemon");
	TCase *tc = tcase_create("kernel");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_set_and_restore);
	tcase_add_test(tc, test_failed_start);
	tcase_add_test(tc, test_other_owner);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("the ATrace categories and the daemon"))
		return 77;
	return tu_run(atcat_daemon_suite());
}
