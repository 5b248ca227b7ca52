/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd triggers, the pure parts and the records: heapprofd's name
 * normalisation, packages.list parsing (malformed lines too), every
 * eligibility branch, budget arithmetic on an injected clock and across a
 * store reopen, parameter validation, the binary Perfetto config decoded
 * back by protoc (against the project's .proto subset, and raw against
 * Perfetto's public field numbers), rule parsing and evaluation on built
 * windows with fake callbacks.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "vitalsd.h"

#define S NSEC_PER_SEC
#define HOUR (3600 * S)
#define DAY (24 * HOUR)

/* ------------------------------------------------------ normalisation */

static const char *
norm(const char *buf, size_t len, int *ret_r)
{
	static char out[HP_NAME_MAX];

	*ret_r = hp_normalize(buf, len, out, sizeof(out));
	return *ret_r == 0 ? out : "";
}

START_TEST(test_normalize)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
		int r;
	} c[] = {
		{ "/system/bin/surfaceflinger@1.0", 31, "surfaceflinger", 0 },
		{ "com.example.app", 16, "com.example.app", 0 },
		{ "com.example.app:remote\0--x", 27, "com.example.app:remote",
		    0 },
		/* the '@' cut comes before the basename */
		{ "/vendor/a@b/c", 14, "a", 0 },
		{ "/data/app/x/base.apk@classes.dex", 33, "base.apk", 0 },
		/* only the first argument; spaces are part of the name */
		{ "sshd: root@pts/0", 17, "sshd: root", 0 },
		{ "/bin/sh\0/usr/lib/foo/bar", 25, "sh", 0 },
		{ "a/b/", 5, "", -ENODATA },
		{ "@x", 3, "", -ENODATA },
		/* no NUL: heapprofd refuses such a cmdline */
		{ "no-terminator", 13, "", -EOVERFLOW },
	};
	unsigned i;
	int r;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *o = norm(c[i].in, c[i].len, &r);

		ck_assert_msg(r == c[i].r && !strcmp(o, c[i].out),
		    "case %u: '%s' -> '%s' (%d), want '%s' (%d)", i, c[i].in, o,
		    r, c[i].out, c[i].r);
	}
}
END_TEST

/* ------------------------------------------------------ packages.list */

static const char pkgs[] =
    "com.shell 10100 0 /data/user/0/com.shell default:targetSdkVersion=34 "
    "3003 1 34 1 com.android.vending\n"
    "com.profileable 10101 0 /data/user/0/com.profileable default 3003 0 "
    "7 1 @system\n"
    "com.debug 10102 1 /data/user/0/com.debug default none 0 1 0 @null\n"
    "com.closed 10103 0 /data/user/0/com.closed default none 0 1 0 "
    "com.android.vending\n"
    "\n"
    "com.short 10104 1\n";

START_TEST(test_packages_parse)
{
	struct hp_packages pk;

	ck_assert_int_eq(hp_packages_parse(pkgs, strlen(pkgs), &pk), 0);
	ck_assert_uint_eq(pk.n, 5);
	ck_assert_uint_eq(pk.malformed, 0);
	ck_assert_str_eq(pk.p[0].name, "com.shell");
	ck_assert_uint_eq(pk.p[0].uid, 10100);
	ck_assert(!pk.p[0].debuggable && pk.p[0].profileable_from_shell &&
	    pk.p[0].profileable);
	ck_assert_int_eq(pk.p[0].version_code, 34);
	ck_assert_str_eq(pk.p[0].installer, "com.android.vending");
	ck_assert(pk.p[1].profileable && !pk.p[1].profileable_from_shell);
	ck_assert_str_eq(pk.p[1].installer, "@system");
	ck_assert(pk.p[2].debuggable);
	/* a short line keeps the defaults of the fields it lacks */
	ck_assert_str_eq(pk.p[4].name, "com.short");
	ck_assert(pk.p[4].debuggable && !pk.p[4].profileable);
	ck_assert_str_eq(pk.p[4].installer, "");
	hp_packages_release(&pk);
}
END_TEST

START_TEST(test_packages_malformed)
{
	static const char bad[] =
	    "com.ok 10100 0 /d default none 1 1 1 @system\n"
	    "com.baduid ten 0 /d default none 1 1 1 @system\n"
	    "com.badflag 10102 yes /d default none 1 1 1 @system\n"
	    "lonely\n"
	    "com.badprof 10103 0 /d default none 1 1 x @system\n"
	    "com.ok2 10104 0 /d default none 0 1 1 @product\r\n";
	struct hp_packages pk;

	ck_assert_int_eq(hp_packages_parse(bad, strlen(bad), &pk), 0);
	ck_assert_uint_eq(pk.n, 2);
	ck_assert_uint_eq(pk.malformed, 4);
	ck_assert_uint_eq(pk.first_bad_line, 2);
	ck_assert_str_eq(pk.p[1].name, "com.ok2");
	ck_assert_str_eq(pk.p[1].installer, "@product"); /* CR dropped */
	hp_packages_release(&pk);
}
END_TEST

/* ------------------------------------------------------ eligibility */

static bool
elig(enum hp_initiator in, enum hp_build b, const struct hp_packages *pk,
    uint32_t uid, const char *installer, enum hp_elig_why *why)
{
	struct hp_elig_policy pol = { .initiator = in,
		.build = b,
		.host = HP_HOST_REFUSE };

	if (installer) {
		pol.ninstalled_by = 1;
		snprintf(pol.installed_by[0], HP_NAME_MAX, "%s", installer);
	}
	return hp_eligible(&pol, pk, uid, why);
}

#define U HP_INIT_UNSPECIFIED
#define T HP_INIT_TRUSTED_SYSTEM
#define USER HP_BUILD_USER

START_TEST(test_eligibility)
{
	struct hp_packages pk, allp, bad;
	static const char all[] = "a 10100 0 /d default none 0 1 1 @system\n"
				  "b 10101 1 /d default none 0 1 0 @system\n";
	static const char badf[] = "a 10100 0 /d default none 1 1 1 @s\n"
				   "b x 0\n";
	struct hp_elig_policy host = { .build = USER, .host = HP_HOST_ALLOW };
	enum hp_elig_why w;

	ck_assert_int_eq(hp_packages_parse(pkgs, strlen(pkgs), &pk), 0);
	ck_assert_int_eq(hp_packages_parse(all, strlen(all), &allp), 0);
	ck_assert_int_eq(hp_packages_parse(badf, strlen(badf), &bad), 0);

	/* userdebug and eng: everything */
	ck_assert(elig(U, HP_BUILD_USERDEBUG, &pk, 1000, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_DEBUG_BUILD);
	ck_assert(elig(U, HP_BUILD_ENG, NULL, 0, NULL, &w));
	/* no packages.list: the host policy */
	ck_assert(!elig(U, USER, NULL, 10100, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_HOST_REFUSE);
	ck_assert(hp_eligible(&host, NULL, 0, &w));
	ck_assert_int_eq(w, HP_ELIG_HOST_ALLOW);
	/* platform uids: trusted-system only, any user */
	ck_assert(!elig(U, USER, &pk, 1000, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_PLATFORM_UID);
	ck_assert(elig(T, USER, &pk, 1000, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_PLATFORM_TRUSTED);
	ck_assert(!elig(U, USER, &pk, 1001000, NULL, &w));
	ck_assert(elig(T, USER, &pk, 1001000, NULL, &w));
	/* apps: the flag the initiator needs */
	ck_assert(elig(U, USER, &pk, 10100, NULL, &w)); /* from shell */
	ck_assert_int_eq(w, HP_ELIG_OK);
	ck_assert(!elig(U, USER, &pk, 10101, NULL, &w)); /* profileable */
	ck_assert_int_eq(w, HP_ELIG_NOT_PROFILEABLE);
	ck_assert(elig(T, USER, &pk, 10101, NULL, &w));
	ck_assert(elig(U, USER, &pk, 10102, NULL, &w)); /* debuggable */
	ck_assert(elig(T, USER, &pk, 10102, NULL, &w));
	ck_assert(!elig(U, USER, &pk, 10103, NULL, &w)); /* neither */
	ck_assert(!elig(T, USER, &pk, 10103, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_NOT_PROFILEABLE);
	/* a secondary user's app: the uid without the user offset */
	ck_assert(elig(U, USER, &pk, 1010100, NULL, &w));
	ck_assert(!elig(U, USER, &pk, 10199, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_NO_PACKAGE);
	/* SDK sandbox uids map to their app */
	ck_assert(elig(U, USER, &pk, 20100, NULL, &w));
	ck_assert(!elig(U, USER, &pk, 20101, NULL, &w));
	ck_assert(elig(T, USER, &pk, 20101, NULL, &w));
	/* installer filter narrows, never grants */
	ck_assert(elig(T, USER, &pk, 10101, "@system", &w));
	ck_assert(!elig(T, USER, &pk, 10101, "@product", &w));
	ck_assert_int_eq(w, HP_ELIG_INSTALLER);
	ck_assert(!elig(U, USER, &pk, 10101, "@system", &w));
	ck_assert_int_eq(w, HP_ELIG_NOT_PROFILEABLE);
	ck_assert(!elig(U, USER, &pk, 10104, "@null", &w)); /* none known */
	ck_assert_int_eq(w, HP_ELIG_INSTALLER);
	/* isolated: trusted-system and every package profileable */
	ck_assert(!elig(U, USER, &allp, 90001, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_ISOLATED_UID);
	ck_assert(elig(T, USER, &allp, 90001, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_ISOLATED_TRUSTED);
	ck_assert(!elig(T, USER, &pk, 99999, NULL, &w)); /* com.short etc. */
	ck_assert_int_eq(w, HP_ELIG_ISOLATED_UID);
	/* every other range */
	ck_assert(!elig(T, USER, &pk, 50000, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_OTHER_UID);
	ck_assert(!elig(T, USER, &pk, 30000, NULL, &w));
	/* a file that does not parse answers no */
	ck_assert(!elig(T, USER, &bad, 10100, NULL, &w));
	ck_assert_int_eq(w, HP_ELIG_MALFORMED);
	hp_packages_release(&pk);
	hp_packages_release(&allp);
	hp_packages_release(&bad);
}
END_TEST

/* ------------------------------------------------------ budgets */

static enum hp_refusal
budget(const struct hp_limits *l, const struct hp_budget_rec *r, size_t n,
    const char *target, int64_t now, int64_t *retry)
{
	char why[200];

	*retry = -1;
	return hp_budget_check(l, r, n, target, now, retry, why, sizeof(why));
}

/* ro.build.type's values; anything else is not taken (the caller then
 * applies the strictest rules), nor are near misses. */
START_TEST(test_build_parse)
{
	enum hp_build b = HP_BUILD_ENG;

	ck_assert_int_eq(hp_build_parse("user", &b), 0);
	ck_assert_int_eq(b, HP_BUILD_USER);
	ck_assert_int_eq(hp_build_parse("userdebug", &b), 0);
	ck_assert_int_eq(b, HP_BUILD_USERDEBUG);
	ck_assert_int_eq(hp_build_parse("eng", &b), 0);
	ck_assert_int_eq(b, HP_BUILD_ENG);
	ck_assert_int_eq(hp_build_parse("", &b), -EINVAL);
	ck_assert_int_eq(hp_build_parse("User", &b), -EINVAL);
	ck_assert_int_eq(hp_build_parse("userdebug ", &b), -EINVAL);
	ck_assert_int_eq(b, HP_BUILD_ENG); /* untouched on failure */
	ck_assert_str_eq(hp_build_name(HP_BUILD_USERDEBUG), "userdebug");
	ck_assert_str_eq(hp_spawn_state_name(HP_SPAWN_BLOCKED),
	    "blocked by seccomp");
	ck_assert_str_eq(hp_spawn_state_name(HP_SPAWN_HELPER), "helper");
}
END_TEST

START_TEST(test_budget_windows)
{
	const int64_t t0 = 1700000000LL * S;
	struct hp_limits l = { .proc_hour = 1, .proc_day = 2, .proc_week = 3 };
	struct hp_budget_rec r[8];
	int64_t retry;

	memset(r, 0, sizeof(r));
	snprintf(r[0].target, HP_NAME_MAX, "app");
	r[0].start_wall_ns = t0;
	ck_assert_int_eq(budget(&l, r, 0, "app", t0, &retry), HP_OK);
	/* the hour: one */
	ck_assert_int_eq(budget(&l, r, 1, "app", t0 + 10 * S, &retry),
	    HP_REFUSE_RATE_PROCESS);
	ck_assert_int_eq(retry, HOUR + 1 - 10 * S);
	ck_assert_int_eq(budget(&l, r, 1, "app", t0 + HOUR, &retry),
	    HP_REFUSE_RATE_PROCESS);
	ck_assert_int_eq(budget(&l, r, 1, "app", t0 + HOUR + 1, &retry), HP_OK);
	/* another target has its own budget */
	ck_assert_int_eq(budget(&l, r, 1, "other", t0 + 10 * S, &retry), HP_OK);
	/* the day: two, the second an hour later */
	r[1] = r[0];
	r[1].start_wall_ns = t0 + 2 * HOUR;
	ck_assert_int_eq(budget(&l, r, 2, "app", t0 + 4 * HOUR, &retry),
	    HP_REFUSE_RATE_PROCESS);
	ck_assert_int_eq(retry, t0 + DAY + 1 - (t0 + 4 * HOUR));
	ck_assert_int_eq(budget(&l, r, 2, "app", t0 + DAY + 1, &retry), HP_OK);
	/* the week: three */
	r[2] = r[0];
	r[2].start_wall_ns = t0 + 2 * DAY;
	ck_assert_int_eq(budget(&l, r, 3, "app", t0 + 4 * DAY, &retry),
	    HP_REFUSE_RATE_PROCESS);
	ck_assert_int_eq(retry, HP_WEEK_NS + 1 - 4 * DAY);
	ck_assert_int_eq(budget(&l, r, 3, "app", t0 + HP_WEEK_NS + 1, &retry),
	    HP_OK);
	/* 0 is no limit */
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(budget(&l, r, 3, "app", t0 + 3 * DAY, &retry), HP_OK);
}
END_TEST

START_TEST(test_budget_system_cooldown)
{
	const int64_t t0 = 1700000000LL * S;
	struct hp_limits l = { .sys_hour = 2, .sys_day = 3, .cooldown_s = 600 };
	struct hp_budget_rec r[4];
	int64_t retry;
	unsigned i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < 3; i++) {
		snprintf(r[i].target, HP_NAME_MAX, "app%u", i);
		r[i].start_wall_ns = t0 + (int64_t)i * 20 * 60 * S;
	}
	/* cooldown: per target, from its last start */
	ck_assert_int_eq(budget(&l, r, 1, "app0", t0 + 599 * S, &retry),
	    HP_REFUSE_RATE_PROCESS);
	ck_assert_int_eq(retry, 1 * S);
	ck_assert_int_eq(budget(&l, r, 1, "app0", t0 + 600 * S, &retry), HP_OK);
	/* system-wide: two an hour whatever the target */
	ck_assert_int_eq(budget(&l, r, 2, "app9", t0 + 30 * 60 * S, &retry),
	    HP_REFUSE_RATE_SYSTEM);
	ck_assert_int_eq(retry, HOUR + 1 - 30 * 60 * S);
	ck_assert_int_eq(budget(&l, r, 2, "app9", t0 + HOUR + 1, &retry),
	    HP_OK);
	/* three a day */
	ck_assert_int_eq(budget(&l, r, 3, "app9", t0 + 5 * HOUR, &retry),
	    HP_REFUSE_RATE_SYSTEM);
	ck_assert_int_eq(budget(&l, r, 3, "app9", t0 + DAY + 1, &retry), HP_OK);
	/* starts in the future (clock stepped back) do not count */
	ck_assert_int_eq(budget(&l, r, 3, "app9", t0 - HOUR, &retry), HP_OK);
}
END_TEST

static struct hp_record
record(const char *key, int64_t start, bool started, const char *outcome)
{
	struct hp_record r;

	memset(&r, 0, sizeof(r));
	r.created_wall_ns = start;
	snprintf(r.target, sizeof(r.target), "%s", key);
	snprintf(r.target_key, sizeof(r.target_key), "%s", key);
	snprintf(r.params, sizeof(r.params), "duration_ms=1000");
	r.started = started;
	r.start_wall_ns = started ? start : 0;
	snprintf(r.outcome, sizeof(r.outcome), "%s", outcome);
	r.exit_status = -1;
	r.output_bytes = -1;
	r.caller_uid = 1000;
	return r;
}

/* Budgets survive a restart: they are the store's session rows. */
START_TEST(test_budget_persists)
{
	const int64_t t0 = 1700000000LL * S;
	struct hp_limits l = { .proc_hour = 1 };
	struct store_opts o;
	struct hp_budget_rec *b;
	struct hp_record r, *v, got;
	struct store *s;
	char *dir = tu_mkdtemp("hp-store"), path[PATH_MAX];
	int64_t retry;
	size_t n;

	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	store_opts_default(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	r = record("app", t0, true, "running");
	r.child_pid = 4242;
	r.child_starttime = 77;
	ck_assert_int_eq(store_hp_insert(s, &r), 0);
	ck_assert_int_gt(r.id, 0);
	r = record("app", t0 + S, false, "refused");
	r.refusal = HP_REFUSE_RATE_PROCESS;
	ck_assert_int_eq(store_hp_insert(s, &r), 0);
	s = store_close(s);

	ck_assert_int_eq(store_open(path, &o, &s), 0);
	ck_assert_int_eq(store_hp_budget(s, t0 - HP_WEEK_NS, &b, &n), 0);
	ck_assert_uint_eq(n, 1); /* refusals spend no budget */
	ck_assert_str_eq(b[0].target, "app");
	ck_assert_int_eq(budget(&l, b, n, "app", t0 + 60 * S, &retry),
	    HP_REFUSE_RATE_PROCESS);
	free(b);
	ck_assert_int_eq(store_hp_running(s, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].child_pid, 4242);
	ck_assert_uint_eq(v[0].child_starttime, 77);
	snprintf(v[0].outcome, sizeof(v[0].outcome), "daemon restarted");
	v[0].end_wall_ns = t0 + 5 * S;
	ck_assert_int_eq(store_hp_update(s, &v[0]), 0);
	ck_assert_int_eq(store_hp_get(s, v[0].id, &got), 0);
	ck_assert_str_eq(got.outcome, "daemon restarted");
	ck_assert_int_eq(got.end_wall_ns, t0 + 5 * S);
	ck_assert_int_eq(got.exit_status, -1);
	free(v);
	ck_assert_int_eq(store_hp_running(s, &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(v);
	ck_assert_int_eq(store_hp_list(s, 10, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].outcome, "refused"); /* newest first */
	ck_assert_uint_eq(v[0].refusal, HP_REFUSE_RATE_PROCESS);
	free(v);
	ck_assert_int_eq(store_hp_get(s, 999, &got), -ENOENT);
	store_close(s);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ------------------------------------------------------ parameters */

static int
check(const struct hp_params *p)
{
	char why[200];

	return hp_params_check(p, why, sizeof(why));
}

START_TEST(test_params_check)
{
	struct hp_params p;

	hp_params_default(&p);
	ck_assert_int_eq(check(&p), -EINVAL); /* no target */
	p.pids[p.npids++] = 123;
	ck_assert_int_eq(check(&p), 0);
	ck_assert_uint_eq(p.sampling_interval_bytes, 4096);
	ck_assert_uint_eq(p.shmem_size_bytes, 8u << 20);
	ck_assert(!p.block_client);
	p.sampling_interval_bytes = 0;
	ck_assert_int_eq(check(&p), -EINVAL);
	p.sampling_interval_bytes = 1;
	ck_assert_int_eq(check(&p), 0);
	p.shmem_size_bytes = 3u << 20; /* not a power of two */
	ck_assert_int_eq(check(&p), -EINVAL);
	p.shmem_size_bytes = 4096; /* below 8192 */
	ck_assert_int_eq(check(&p), -EINVAL);
	p.shmem_size_bytes = 8192;
	ck_assert_int_eq(check(&p), 0);
	p.shmem_size_bytes = 256u << 20;
	ck_assert_int_eq(check(&p), 0);
	p.shmem_size_bytes = 512u << 20; /* above 500 MiB */
	ck_assert_int_eq(check(&p), -EINVAL);
	p.shmem_size_bytes = 8u << 20;
	p.duration_ms = 0;
	ck_assert_int_eq(check(&p), -EINVAL);
	p.duration_ms = 1000;
	p.dump_interval_ms = 1000;
	ck_assert_int_eq(check(&p), -EINVAL);
	p.dump_interval_ms = 500;
	ck_assert_int_eq(check(&p), 0);
	p.npids = 0;
	snprintf(p.names[p.nnames++], HP_NAME_MAX, "com.example.*");
	ck_assert_int_eq(check(&p), -EINVAL); /* never a glob */
	snprintf(p.names[0], HP_NAME_MAX, "/system/bin/x");
	ck_assert_int_eq(check(&p), -EINVAL); /* not normalised */
	snprintf(p.names[0], HP_NAME_MAX, "x@1");
	ck_assert_int_eq(check(&p), -EINVAL);
	snprintf(p.names[0], HP_NAME_MAX, "com.example.app:remote");
	ck_assert_int_eq(check(&p), 0);
	p.pids[p.npids++] = -1;
	ck_assert_int_eq(check(&p), -EINVAL);
}
END_TEST

/* ------------------------------------------------------ Perfetto config */

/* Run protoc with args, the bytes on stdin; its stdout. */
static char *
protoc(const char *args, const uint8_t *buf, size_t len)
{
	const char *src = getenv("VITALS_SRCDIR");
	char in[] = "/tmp/hp-cfg-XXXXXX", cmd[1024], *out;
	struct vbuf b = { 0 };
	FILE *f;
	int fd = mkstemp(in), r;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	if (strcmp(args, "--decode_raw") == 0)
		snprintf(cmd, sizeof(cmd), "protoc --decode_raw < %s", in);
	else
		snprintf(cmd, sizeof(cmd),
		    "protoc %s -I %s/proto "
		    "%s/proto/perfetto_config.proto < %s",
		    args, src ? src : "..", src ? src : "..", in);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	for (;;) {
		size_t got;

		ck_assert_int_eq(vbuf_reserve(&b, 4096), 0);
		if ((got = fread(b.p + b.len, 1, 4096, f)) == 0)
			break;
		b.len += got;
	}
	ck_assert_int_eq(vbuf_reserve(&b, 1), 0);
	b.p[b.len] = '\0';
	r = pclose(f);
	unlink(in);
	ck_assert_msg(WIFEXITED(r) && WEXITSTATUS(r) == 0, "%s: %d", cmd, r);
	out = strdup(b.p ? b.p : "");
	vbuf_release(&b);
	return out;
}

static const char expect_decode[] =
    "buffers {\n"
    "  size_kb: 65536\n"
    "  fill_policy: RING_BUFFER\n"
    "}\n"
    "data_sources {\n"
    "  config {\n"
    "    name: \"android.heapprofd\"\n"
    "    target_buffer: 0\n"
    "    heapprofd_config {\n"
    "      sampling_interval_bytes: 8192\n"
    "      process_cmdline: \"com.example.app\"\n"
    "      process_cmdline: \"com.example.app:remote\"\n"
    "      pid: 4321\n"
    "      continuous_dump_config {\n"
    "        dump_phase_ms: 30000\n"
    "        dump_interval_ms: 30000\n"
    "      }\n"
    "      shmem_size_bytes: 16777216\n"
    "      block_client: false\n"
    "      max_heapprofd_memory_kb: 131072\n"
    "      max_heapprofd_cpu_secs: 60\n"
    "      target_installed_by: \"@system\"\n"
    "      target_installed_by: \"com.android.vending\"\n"
    "    }\n"
    "  }\n"
    "}\n"
    "data_sources {\n"
    "  config {\n"
    "    name: \"linux.process_stats\"\n"
    "    target_buffer: 0\n"
    "    process_stats_config {\n"
    "      scan_all_processes_on_start: true\n"
    "      proc_stats_poll_ms: 5000\n"
    "    }\n"
    "  }\n"
    "}\n"
    "duration_ms: 120000\n"
    "write_into_file: true\n"
    "flush_timeout_ms: 30000\n";

START_TEST(test_config_decodes)
{
	struct hp_params p;
	struct vbuf text = { 0 };
	uint8_t *buf;
	size_t len;
	char *dec, *raw;

	hp_params_default(&p);
	p.buffer_kb = 65536;
	p.sampling_interval_bytes = 8192;
	snprintf(p.names[p.nnames++], HP_NAME_MAX, "com.example.app");
	snprintf(p.names[p.nnames++], HP_NAME_MAX, "com.example.app:remote");
	p.pids[p.npids++] = 4321;
	p.dump_interval_ms = 30000;
	p.shmem_size_bytes = 16u << 20;
	p.max_heapprofd_memory_kb = 131072;
	p.max_heapprofd_cpu_secs = 60;
	snprintf(p.installed_by[p.ninstalled_by++], HP_NAME_MAX, "@system");
	snprintf(p.installed_by[p.ninstalled_by++], HP_NAME_MAX,
	    "com.android.vending");
	p.duration_ms = 120000;
	ck_assert_int_eq(hp_params_check(&p, (char[200]){ 0 }, 200), 0);
	ck_assert_int_eq(hp_config_encode(&p, &buf, &len), 0);

	dec = protoc("--decode=perfetto.protos.TraceConfig", buf, len);
	ck_assert_str_eq(dec, expect_decode);
	/* the dry run shows exactly what perfetto is given */
	ck_assert_int_eq(hp_config_text(&p, &text), 0);
	ck_assert_str_eq(text.p, dec);

	/* Perfetto's public field numbers, independently of our .proto:
	 * TraceConfig.buffers 1, data_sources 2, duration_ms 3,
	 * write_into_file 8, flush_timeout_ms 14; DataSource.config 1;
	 * DataSourceConfig name 1, target_buffer 2, process_stats_config
	 * 103, heapprofd_config 105; HeapprofdConfig sampling 1, cmdline 2,
	 * pid 4, continuous_dump_config 6 (phase 5, interval 6), shmem 8,
	 * block_client 9, max memory 16, max cpu 17, installed_by 26;
	 * ProcessStatsConfig scan_all 2, poll 4; BufferConfig size 1,
	 * fill_policy 4 (RING_BUFFER = 1). */
	raw = protoc("--decode_raw", buf, len);
	ck_assert_ptr_nonnull(strstr(raw, "1 {\n  1: 65536\n  4: 1\n}\n"));
	ck_assert_ptr_nonnull(strstr(raw,
	    "2 {\n  1 {\n    1: "
	    "\"android.heapprofd\"\n    2: 0\n    105 {\n      1: 8192\n"
	    "      2: \"com.example.app\"\n      2: \"com.example.app:remote\"\n"
	    "      4: 4321\n      6 {\n        5: 30000\n        6: 30000\n"
	    "      }\n      8: 16777216\n      9: 0\n      16: 131072\n"
	    "      17: 60\n      26: \"@system\"\n"));
	ck_assert_ptr_nonnull(strstr(raw,
	    "    1: \"linux.process_stats\"\n"
	    "    2: 0\n    103 {\n      2: 1\n      4: 5000\n    }\n"));
	ck_assert_ptr_nonnull(strstr(raw, "\n3: 120000\n8: 1\n14: 30000\n"));
	free(dec);
	free(raw);
	free(buf);
	vbuf_release(&text);
}
END_TEST

/* Issue 21: an app and its :remote process in one session; no_startup,
 * adaptive sampling, and two dumps by default (Perfetto's
 * heapprofd_config.proto: no_startup 10, no_running 11,
 * adaptive_sampling_shmem_threshold 24, its max interval 25). */
START_TEST(test_config_issue21)
{
	struct hp_settings hs;
	struct hp_params p;
	struct vbuf text = { 0 };
	char why[200], *dec, *raw;
	uint8_t *buf;
	size_t len;

	hp_settings_init(&hs);
	ck_assert_uint_eq(hs.defaults.dumps, 2);
	ck_assert_int_eq(hp_settings_set(&hs, "heapprofd_no_startup", "on"), 0);
	ck_assert_int_eq(hp_settings_set(&hs,
			     "heapprofd_adaptive_sampling_shmem_threshold",
			     "1M"),
	    0);
	ck_assert_int_eq(hp_settings_set(&hs,
			     "heapprofd_adaptive_sampling_max_interval_bytes",
			     "64K"),
	    0);
	ck_assert_int_eq(hp_settings_set(&hs, "heapprofd_dumps", "0"), -ERANGE);
	ck_assert_int_eq(hp_settings_set(&hs, "heapprofd_no_running", "maybe"),
	    -EINVAL);
	p = hs.defaults;
	snprintf(p.names[p.nnames++], HP_NAME_MAX, "com.app");
	snprintf(p.names[p.nnames++], HP_NAME_MAX, "com.app:remote");
	hp_params_dumps(&p);
	ck_assert_uint_eq(p.dump_interval_ms, 30000); /* 60 s, two dumps */
	ck_assert_int_eq(hp_params_check(&p, why, sizeof(why)), 0);
	ck_assert_int_eq(hp_config_encode(&p, &buf, &len), 0);
	dec = protoc("--decode=perfetto.protos.TraceConfig", buf, len);
	ck_assert_ptr_nonnull(strstr(dec,
	    "      process_cmdline: \"com.app\"\n"
	    "      process_cmdline: \"com.app:remote\"\n"
	    "      continuous_dump_config {\n"
	    "        dump_phase_ms: 30000\n"
	    "        dump_interval_ms: 30000\n"
	    "      }\n"
	    "      shmem_size_bytes: 8388608\n"
	    "      block_client: false\n"
	    "      no_startup: true\n"
	    "      adaptive_sampling_shmem_threshold: 1048576\n"
	    "      adaptive_sampling_max_sampling_interval_bytes: 65536\n"));
	ck_assert_ptr_null(strstr(dec, "no_running"));
	ck_assert_int_eq(hp_config_text(&p, &text), 0);
	ck_assert_str_eq(text.p, dec);
	raw = protoc("--decode_raw", buf, len);
	ck_assert_msg(strstr(raw,
			  "      8: 8388608\n      9: 0\n      10: 1\n"
			  "      24: 1048576\n      25: 65536\n"),
	    "%s", raw);
	free(dec);
	free(raw);
	free(buf);
	vbuf_release(&text);

	/* what would profile nothing, or nothing adaptive, is refused */
	p.no_running = true;
	ck_assert_int_eq(hp_params_check(&p, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "no_startup and no_running"));
	p.no_running = false;
	p.adaptive_shmem_threshold = p.shmem_size_bytes * 2;
	ck_assert_int_eq(hp_params_check(&p, why, sizeof(why)), -EINVAL);
	p.adaptive_shmem_threshold = 0;
	p.adaptive_max_interval = p.sampling_interval_bytes - 1;
	ck_assert_int_eq(hp_params_check(&p, why, sizeof(why)), -EINVAL);

	/* dumps: an interval given wins; one dump is the end's only; a
	 * duration too short for them keeps the end's */
	p = hs.defaults;
	p.dumps = 3;
	p.duration_ms = 90000;
	hp_params_dumps(&p);
	ck_assert_uint_eq(p.dump_interval_ms, 30000);
	p.dump_interval_ms = 7000;
	hp_params_dumps(&p);
	ck_assert_uint_eq(p.dump_interval_ms, 7000);
	p.dump_interval_ms = 0;
	p.dumps = 1;
	hp_params_dumps(&p);
	ck_assert_uint_eq(p.dump_interval_ms, 0);
	p.dumps = 2;
	p.duration_ms = 1;
	hp_params_dumps(&p);
	ck_assert_uint_eq(p.dump_interval_ms, 0);
	hp_settings_release(&hs);
}
END_TEST

/* ------------------------------------------------------ rules */

START_TEST(test_rule_parse)
{
	struct hp_rule r;
	char err[200];

	ck_assert_int_eq(
	    hp_rule_parse(
		"grow when=rss_growth:100M:10m "
		"match=name:com.example.app target=matched duration=30s "
		"sampling=8K shmem=16M dump=10s",
		&r, err, sizeof(err)),
	    0);
	ck_assert_str_eq(r.name, "grow");
	ck_assert_int_eq(r.cond, HP_COND_RSS_GROWTH);
	ck_assert_uint_eq(r.bytes, 100u << 20);
	ck_assert_int_eq(r.span_ns, 600 * S);
	ck_assert_int_eq(r.sel, HP_SEL_NAME);
	ck_assert_str_eq(r.sel_name, "com.example.app");
	ck_assert_int_eq(r.tgt, HP_TGT_MATCHED);
	ck_assert_uint_eq(r.duration_ms, 30000);
	ck_assert_uint_eq(r.sampling_interval_bytes, 8192);
	ck_assert_uint_eq(r.shmem_size_bytes, 16u << 20);
	ck_assert_uint_eq(r.dump_interval_ms, 10000);

	ck_assert_int_eq(hp_rule_parse("p when=psi_memory:12.5 "
				       "target=name:system_server",
			     &r, err, sizeof(err)),
	    0);
	ck_assert_int_eq(r.cond, HP_COND_PSI_MEMORY);
	ck_assert(r.level == 12.5);
	ck_assert_int_eq(hp_rule_parse("f when=majflt_rate:50 match=uid:10100",
			     &r, err, sizeof(err)),
	    0);
	ck_assert_int_eq(r.sel, HP_SEL_UID);
	ck_assert_uint_eq(r.sel_uid, 10100);
	ck_assert_int_eq(hp_rule_parse("g when=gpu_growth:64M:1m", &r, err,
			     sizeof(err)),
	    0);
	ck_assert_int_eq(r.cond, HP_COND_GPU_GROWTH);
	ck_assert_int_eq(r.tgt, HP_TGT_MATCHED);
	ck_assert_int_eq(hp_rule_parse("u when=psi_memory:20 target=uid:1000",
			     &r, err, sizeof(err)),
	    0);
	ck_assert_int_eq(r.tgt, HP_TGT_UID);
	ck_assert_uint_eq(r.tgt_uid, 1000);

	/* refused, each with a reason */
	ck_assert_int_eq(hp_rule_parse("x", &r, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(hp_rule_parse("when=rss_growth:1M:1s", &r, err,
			     sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(hp_rule_parse("x when=rss_growth:1M", &r, err,
			     sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(hp_rule_parse("x when=rss_growth:0:1s", &r, err,
			     sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(hp_rule_parse("x when=cpu:5", &r, err, sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(hp_rule_parse("x when=psi_memory:5", &r, err,
			     sizeof(err)),
	    -EINVAL); /* system-wide: needs a name target */
	ck_assert_ptr_nonnull(strstr(err, "target=name"));
	ck_assert_int_eq(hp_rule_parse("x when=majflt_rate:1 sampling=0", &r,
			     err, sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(hp_rule_parse("x when=majflt_rate:1 bogus=1", &r, err,
			     sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(hp_rule_parse("x when=majflt_rate:1 match=glob:*", &r,
			     err, sizeof(err)),
	    -EINVAL);
}
END_TEST

struct fake {
	unsigned name_calls;
	uint64_t gpu;
	int gpu_err;
	uint64_t anon_kb;
	int anon_err;
};

static int
fake_anon(void *arg, int32_t pid, uint64_t st, uint64_t *kb)
{
	struct fake *f = arg;

	(void)st;
	if (f->anon_err)
		return f->anon_err;
	*kb = pid == 100 ? f->anon_kb : 0;
	return 0;
}

static int
fake_name(void *arg, int32_t pid, char *buf, size_t sz)
{
	struct fake *f = arg;

	f->name_calls++;
	snprintf(buf, sz, "%s", pid == 100 ? "com.grow" : "other");
	return 0;
}

static int
fake_gpu(void *arg, const struct window *w, int32_t pid, uint64_t st,
    uint64_t *bytes)
{
	struct fake *f = arg;

	(void)w;
	(void)st;
	if (f->gpu_err)
		return f->gpu_err;
	*bytes = pid == 100 ? f->gpu : 0;
	return 0;
}

/* A window at second `sec` with two processes: pid 100 (uid 10100) with
 * rss pages `rss`, pid 200 (uid 0) with 1000 pages. */
static struct window *
win(uint64_t seq, int64_t sec, uint64_t rss, uint64_t majflt)
{
	struct window *w = window_new(seq, 1);
	struct window_task t;

	ck_assert_ptr_nonnull(w);
	w->mono_start_ns = (sec - 1) * S;
	w->mono_end_ns = sec * S;
	memset(&t, 0, sizeof(t));
	t.id = t.tgid = 100;
	t.starttime = 5;
	t.uid = 10100;
	window_task_set_namef(&t, "com.grow");
	t.rss_pages_last = rss;
	t.d_majflt = majflt;
	t.wall_ns = S;
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	t.id = t.tgid = 200;
	t.uid = 0;
	window_task_set_namef(&t, "other");
	t.rss_pages_last = 1000;
	t.d_majflt = 0;
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	return w;
}

static size_t
eval(struct hp_rules *hr, struct window *w, struct fake *f,
    struct hp_fire *fires)
{
	struct hp_eval_ctx ctx = { .name = fake_name,
		.gpu_bytes = fake_gpu,
		.anon_kb = fake_anon,
		.arg = f,
		.page_size = 4096 };
	size_t n;

	ck_assert_int_eq(hp_rules_eval(hr, w, &ctx, fires, 8, &n), 0);
	window_free(w);
	return n;
}

START_TEST(test_rule_rss_growth)
{
	struct hp_rule r;
	struct hp_rules *hr;
	struct hp_fire f[8];
	struct fake fk = { 0 };
	struct hp_rule_stats st;
	char err[200];

	/* 4 MiB within 3 s, processes named com.grow */
	ck_assert_int_eq(hp_rule_parse("grow when=rss_growth:4M:3s "
				       "match=name:com.grow",
			     &r, err, sizeof(err)),
	    0);
	ck_assert_int_eq(hp_rules_new(&r, 1, &hr), 0);
	ck_assert_uint_eq(eval(hr, win(1, 1, 1000, 0), &fk, f), 0);
	ck_assert_uint_eq(eval(hr, win(2, 2, 1500, 0), &fk, f), 0); /* 2M */
	ck_assert_uint_eq(eval(hr, win(3, 3, 2000, 0), &fk, f), 0); /* 3.9M */
	ck_assert_uint_eq(eval(hr, win(4, 4, 2100, 0), &fk, f), 1); /* 4.3M */
	ck_assert_int_eq(f[0].pid, 100);
	ck_assert_uint_eq(f[0].uid, 10100);
	ck_assert_str_eq(f[0].name, "com.grow");
	ck_assert_ptr_nonnull(strstr(f[0].why, "RSS grew"));
	/* held once: a new growth of 4 MiB is needed */
	ck_assert_uint_eq(eval(hr, win(5, 5, 2200, 0), &fk, f), 0);
	/* growth older than the span does not count: 5.7 MiB since second
	 * 5, 3.5 MiB within the last 3 s */
	ck_assert_uint_eq(eval(hr, win(6, 8, 2700, 0), &fk, f), 0);
	ck_assert_uint_eq(eval(hr, win(7, 9, 3600, 0), &fk, f), 0);
	ck_assert_uint_eq(eval(hr, win(8, 10, 3800, 0), &fk, f), 1);
	/* names are read once per process, not per window */
	ck_assert_uint_le(fk.name_calls, 2);
	hp_rules_stats(hr, &st);
	ck_assert_uint_eq(st.fired, 2);
	hp_rules_free(hr);
}
END_TEST

START_TEST(test_rule_other_conditions)
{
	struct hp_rule r[3];
	struct hp_rules *hr;
	struct hp_fire f[8];
	struct fake fk = { .gpu = 1u << 20 };
	struct hp_rule_stats st;
	struct window *w;
	char err[200];

	ck_assert_int_eq(hp_rule_parse("flt when=majflt_rate:50 "
				       "match=uid:10100",
			     &r[0], err, sizeof(err)),
	    0);
	ck_assert_int_eq(hp_rule_parse("gpu when=gpu_growth:8M:10s", &r[1], err,
			     sizeof(err)),
	    0);
	ck_assert_int_eq(hp_rule_parse("psi when=psi_memory:10 "
				       "target=name:system_server",
			     &r[2], err, sizeof(err)),
	    0);
	ck_assert_int_eq(hp_rules_new(r, 3, &hr), 0);
	ck_assert_uint_eq(eval(hr, win(1, 1, 1000, 49), &fk, f), 0);
	fk.gpu = 10u << 20;
	w = win(2, 2, 1000, 60);
	w->psi[PSI_MEMORY].available = true;
	gauge_add(&w->psi[PSI_MEMORY].some_avg10, 12.0);
	ck_assert_uint_eq(eval(hr, w, &fk, f), 3);
	ck_assert_uint_eq(f[0].rule, 0);
	ck_assert_int_eq(f[0].pid, 100);
	ck_assert_ptr_nonnull(strstr(f[0].why, "60.0 major faults/s"));
	ck_assert_uint_eq(f[1].rule, 1);
	ck_assert_int_eq(f[1].pid, 100);
	ck_assert_ptr_nonnull(strstr(f[1].why, "GPU memory grew"));
	ck_assert_uint_eq(f[2].rule, 2);
	ck_assert_int_eq(f[2].pid, 0);
	hp_rules_stats(hr, &st);
	ck_assert_uint_eq(st.gpu_unavailable, 0);
	hp_rules_free(hr);

	/* no GpuMem (no callback, or no figure): counted, never fired */
	ck_assert_int_eq(hp_rules_new(&r[1], 1, &hr), 0);
	{
		struct hp_eval_ctx ctx = { .name = fake_name,
			.arg = &fk,
			.page_size = 4096 };
		size_t n;

		w = win(1, 1, 1000, 0);
		ck_assert_int_eq(hp_rules_eval(hr, w, &ctx, f, 8, &n), 0);
		ck_assert_uint_eq(n, 0);
		window_free(w);
	}
	fk.gpu_err = -ENOENT;
	ck_assert_uint_eq(eval(hr, win(2, 2, 1000, 0), &fk, f), 0);
	hp_rules_stats(hr, &st);
	ck_assert_uint_eq(st.gpu_unavailable, 2);
	hp_rules_free(hr);
}
END_TEST

START_TEST(test_rule_anon_growth)
{
	struct hp_rule r;
	struct hp_rules *hr;
	struct hp_fire f[8];
	struct fake fk = { .anon_kb = 10000 };
	struct hp_rule_stats st;
	char err[200];

	/* RssAnon, whatever RSS does */
	ck_assert_int_eq(hp_rule_parse("anon when=anon_growth:10M:5s "
				       "match=uid:10100 target=name:com.grow",
			     &r, err, sizeof(err)),
	    0);
	ck_assert_int_eq(hp_rules_new(&r, 1, &hr), 0);
	ck_assert_uint_eq(eval(hr, win(1, 1, 1000, 0), &fk, f), 0);
	fk.anon_kb = 10000 + 10239;
	ck_assert_uint_eq(eval(hr, win(2, 2, 1000, 0), &fk, f), 0);
	fk.anon_kb = 10000 + 10240;
	ck_assert_uint_eq(eval(hr, win(3, 3, 1000, 0), &fk, f), 1);
	ck_assert_int_eq(f[0].pid, 100);
	ck_assert_ptr_nonnull(strstr(f[0].why, "RssAnon grew 10.0 MiB"));
	/* a failed read: counted, no sample */
	fk.anon_err = -ESRCH;
	ck_assert_uint_eq(eval(hr, win(4, 4, 1000, 0), &fk, f), 0);
	hp_rules_stats(hr, &st);
	ck_assert_uint_eq(st.anon_failed, 1);
	hp_rules_free(hr);
}
END_TEST

START_TEST(test_settings)
{
	struct config cfg;
	char err[200];

	config_init(&cfg);
	ck_assert_ptr_nonnull(cfg.hp);
	ck_assert_int_eq(cfg.hp->policy.initiator, HP_INIT_UNSPECIFIED);
	ck_assert_int_eq(cfg.hp->policy.build, HP_BUILD_USER);
	ck_assert_ptr_null(cfg.hp->perfetto);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_perfetto",
			     "/system/bin/perfetto"),
	    0);
	ck_assert_str_eq(cfg.hp->perfetto, "/system/bin/perfetto");
	ck_assert_int_eq(config_set(&cfg, "heapprofd_initiator",
			     "trusted-system"),
	    0);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_initiator", "statsd"),
	    -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_shmem_size_bytes", "16M"),
	    0);
	ck_assert_uint_eq(cfg.hp->defaults.shmem_size_bytes, 16u << 20);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_shmem_size_bytes", "3M"),
	    -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_sampling_interval_bytes",
			     "0"),
	    -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_target_installed_by",
			     "@system, @product"),
	    0);
	ck_assert_uint_eq(cfg.hp->policy.ninstalled_by, 2);
	ck_assert_str_eq(cfg.hp->policy.installed_by[1], "@product");
	ck_assert_int_eq(config_set(&cfg, "heapprofd_rule",
			     "a when=rss_growth:1M:1s"),
	    0);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_rule",
			     "b when=anon_growth:1M:1s match=uid:10100"),
	    0);
	ck_assert_uint_eq(cfg.hp->nrules, 2);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_rule", "c when=x"),
	    -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_nope", "1"), -ENOENT);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	config_release(&cfg);
}
END_TEST

static Suite *
heapprofd_suite(void)
{
	Suite *s = suite_create("heapprofd");
	TCase *tc = tcase_create("unit");

	tcase_add_test(tc, test_normalize);
	tcase_add_test(tc, test_packages_parse);
	tcase_add_test(tc, test_packages_malformed);
	tcase_add_test(tc, test_eligibility);
	tcase_add_test(tc, test_build_parse);
	tcase_add_test(tc, test_budget_windows);
	tcase_add_test(tc, test_budget_system_cooldown);
	tcase_add_test(tc, test_budget_persists);
	tcase_add_test(tc, test_params_check);
	tcase_add_test(tc, test_config_decodes);
	tcase_add_test(tc, test_config_issue21);
	tcase_add_test(tc, test_rule_parse);
	tcase_add_test(tc, test_rule_rss_growth);
	tcase_add_test(tc, test_rule_other_conditions);
	tcase_add_test(tc, test_rule_anon_growth);
	tcase_add_test(tc, test_settings);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(heapprofd_suite());
}
