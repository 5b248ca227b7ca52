/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of config.c (defaults, config_set, config_parse_file,
 * config_check) and of the way the real vitalsd binary applies them: a
 * configuration that the library refuses must also stop the daemon, with a
 * message that says where.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "vitalsd.h"

static char *tmpdir;

static void
setup(void)
{
	tmpdir = tu_mkdtemp("config");
	ck_assert_ptr_nonnull(tmpdir);
}

static void
teardown(void)
{
	tu_rmtree(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
}

/* Write text to <tmpdir>/name and return the path (static buffer). */
static const char *
conf_file(const char *name, const char *text)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	ck_assert_int_eq(tu_writes(path, text), 0);
	return path;
}

/* ------------------------------------------------------------- defaults */

START_TEST(init_defaults)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_uint_eq(cfg.interval_ms, 1000);
	ck_assert_uint_eq(cfg.window_s, 10);
	/* the newest closed window alone: nothing reads an older one from
	 * memory (the store answers for them) */
	ck_assert_uint_eq(cfg.ring, 1);
	ck_assert_int_eq(cfg.threads, THREADS_CHANGED);
	ck_assert_str_eq(cfg.proc_root, "/proc");
	ck_assert_str_eq(cfg.sys_root, "/sys");
	ck_assert_ptr_nonnull(cfg.state_dir);
	ck_assert_ptr_null(cfg.socket_path);
	/* the defaults on their own form a valid configuration */
	{
		char err[128] = "";

		ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	}
	config_release(&cfg);
	/* release leaves nothing dangling; a second release is harmless */
	ck_assert_ptr_null(cfg.state_dir);
	config_release(&cfg);
}
END_TEST

/* ------------------------------------------------------------ config_set */

START_TEST(set_strings)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "state_dir", "/data/vitals"), 0);
	ck_assert_str_eq(cfg.state_dir, "/data/vitals");
	ck_assert_int_eq(config_set(&cfg, "socket", "/dev/socket/vitals"), 0);
	ck_assert_str_eq(cfg.socket_path, "/dev/socket/vitals");
	ck_assert_int_eq(config_set(&cfg, "proc_root", "/tmp/p"), 0);
	ck_assert_str_eq(cfg.proc_root, "/tmp/p");
	ck_assert_int_eq(config_set(&cfg, "sys_root", "/tmp/s"), 0);
	ck_assert_str_eq(cfg.sys_root, "/tmp/s");
	/* set twice: the second wins (and the first is freed: ASan) */
	ck_assert_int_eq(config_set(&cfg, "state_dir", "/x"), 0);
	ck_assert_str_eq(cfg.state_dir, "/x");
	/* an empty path is a mistake, not "current directory"; old kept */
	ck_assert_int_eq(config_set(&cfg, "state_dir", ""), -EINVAL);
	ck_assert_str_eq(cfg.state_dir, "/x");
	ck_assert_int_eq(config_set(&cfg, "socket", ""), -EINVAL);
	ck_assert_str_eq(cfg.socket_path, "/dev/socket/vitals");
	config_release(&cfg);
}
END_TEST

START_TEST(set_interval)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "interval_ms", "250"), 0);
	ck_assert_uint_eq(cfg.interval_ms, 250);
	/* 100 ms is the floor the brief sets: allowed, 99 is not */
	ck_assert_int_eq(config_set(&cfg, "interval_ms", "100"), 0);
	ck_assert_uint_eq(cfg.interval_ms, 100);
	ck_assert_int_eq(config_set(&cfg, "interval_ms", "99"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "interval_ms", "50"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "interval_ms", "0"), -ERANGE);
	ck_assert_uint_eq(cfg.interval_ms, 100); /* untouched on failure */
	ck_assert_int_eq(config_set(&cfg, "interval_ms", "3600000"), 0);
	ck_assert_int_eq(config_set(&cfg, "interval_ms", "3600001"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "interval_ms",
			     "99999999999999999999999"),
	    -ERANGE);
	ck_assert_uint_eq(cfg.interval_ms, 3600000);
	config_release(&cfg);
}
END_TEST

/* full_walk_s: 60 s unless set, 0 (every close) to a day */
START_TEST(set_full_walk)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_uint_eq(cfg.full_walk_s, VITALS_FULL_WALK_S_DEF);
	ck_assert_uint_eq(cfg.full_walk_s, 60);
	ck_assert_int_eq(config_set(&cfg, "full_walk_s", "0"), 0);
	ck_assert_uint_eq(cfg.full_walk_s, 0);
	ck_assert_int_eq(config_set(&cfg, "full_walk_s", "86400"), 0);
	ck_assert_int_eq(config_set(&cfg, "full_walk_s", "86401"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "full_walk_s", "-1"), -EINVAL);
	ck_assert_uint_eq(cfg.full_walk_s, 86400);
	config_release(&cfg);
}
END_TEST

/* bpf_rq_source: wakeup stamps unless set; only the two words */
START_TEST(set_rq_source)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_uint_eq(cfg.bpf_rq_source, VBPF_RQ_WAKEUP);
	ck_assert_int_eq(config_set(&cfg, "bpf_rq_source", "sched_info"), 0);
	ck_assert_uint_eq(cfg.bpf_rq_source, VBPF_RQ_SCHED_INFO);
	ck_assert_int_eq(config_set(&cfg, "bpf_rq_source", "auto"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "bpf_rq_source", ""), -EINVAL);
	ck_assert_uint_eq(cfg.bpf_rq_source, VBPF_RQ_SCHED_INFO);
	ck_assert_int_eq(config_set(&cfg, "bpf_rq_source", "wakeup"), 0);
	ck_assert_uint_eq(cfg.bpf_rq_source, VBPF_RQ_WAKEUP);
	config_release(&cfg);
}
END_TEST

/* Values that are not plain decimal numbers. */
static const char *const garbage[] = {
	"",
	"abc",
	"1x",
	"x1",
	"-5",
	"+5",
	" 5",
	"5 ",
	"0x10",
	"1e3",
	"1.5",
	"5ms",
};

START_TEST(set_uint_garbage)
{
	static const char *const keys[] = { "interval_ms", "window_s", "ring" };
	struct config cfg;
	unsigned k;

	config_init(&cfg);
	for (k = 0; k < 3; k++) {
		int r = config_set(&cfg, keys[k], garbage[_i]);

		ck_assert_msg(r == -EINVAL, "%s = \"%s\": %d", keys[k],
		    garbage[_i], r);
	}
	ck_assert_uint_eq(cfg.interval_ms, 1000);
	ck_assert_uint_eq(cfg.window_s, 10);
	config_release(&cfg);
}
END_TEST

START_TEST(set_window_ring)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "window_s", "60"), 0);
	ck_assert_uint_eq(cfg.window_s, 60);
	ck_assert_int_eq(config_set(&cfg, "window_s", "0"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "window_s", "86400"), 0);
	ck_assert_int_eq(config_set(&cfg, "window_s", "86401"), -ERANGE);
	ck_assert_uint_eq(cfg.window_s, 86400);
	ck_assert_int_eq(config_set(&cfg, "ring", "1"), 0);
	ck_assert_uint_eq(cfg.ring, 1);
	ck_assert_int_eq(config_set(&cfg, "ring", "0"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "ring", "1024"), 0);
	ck_assert_int_eq(config_set(&cfg, "ring", "1025"), -ERANGE);
	ck_assert_uint_eq(cfg.ring, 1024);
	config_release(&cfg);
}
END_TEST

START_TEST(set_threads)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "threads", "none"), 0);
	ck_assert_int_eq(cfg.threads, THREADS_NONE);
	ck_assert_int_eq(config_set(&cfg, "threads", "all"), 0);
	ck_assert_int_eq(cfg.threads, THREADS_ALL);
	ck_assert_int_eq(config_set(&cfg, "threads", "changed"), 0);
	ck_assert_int_eq(cfg.threads, THREADS_CHANGED);
	ck_assert_int_eq(config_set(&cfg, "threads", "ALL"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "threads", "some"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "threads", ""), -EINVAL);
	ck_assert_int_eq(cfg.threads, THREADS_CHANGED);
	/* the names round-trip through config_set */
	ck_assert_int_eq(config_set(&cfg, "threads",
			     threads_mode_name(THREADS_NONE)),
	    0);
	ck_assert_int_eq(cfg.threads, THREADS_NONE);
	ck_assert_str_eq(threads_mode_name(THREADS_ALL), "all");
	ck_assert_str_eq(threads_mode_name(THREADS_CHANGED), "changed");
	ck_assert_str_eq(threads_mode_name(THREADS_NONE), "none");
	config_release(&cfg);
}
END_TEST

/* The read threads' nice value: 0-19, the default 10, bad input kept out;
 * their warm read at start: 0 or 1, the default 1. */
START_TEST(set_query_nice)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_uint_eq(cfg.query_nice, 10);
	ck_assert_int_eq(config_set(&cfg, "query_nice", "0"), 0);
	ck_assert_uint_eq(cfg.query_nice, 0);
	ck_assert_int_eq(config_set(&cfg, "query_nice", "19"), 0);
	ck_assert_uint_eq(cfg.query_nice, 19);
	ck_assert_uint_eq(cfg.query_warm, 0); /* opened on demand */
	ck_assert_int_eq(config_set(&cfg, "query_warm", "1"), 0);
	ck_assert_uint_eq(cfg.query_warm, 1);
	ck_assert_int_lt(config_set(&cfg, "query_warm", "2"), 0);
	ck_assert_uint_eq(cfg.query_warm, 1);
	ck_assert_uint_eq(cfg.query_idle_s, 30);
	ck_assert_int_eq(config_set(&cfg, "query_idle_s", "600"), 0);
	ck_assert_uint_eq(cfg.query_idle_s, 600);
	ck_assert_int_lt(config_set(&cfg, "query_idle_s", "0"), 0);
	ck_assert_int_lt(config_set(&cfg, "query_idle_s", "86401"), 0);
	/* the start-up pageout: random by default; off, on, random */
	ck_assert_uint_eq(cfg.startup_pageout, 2);
	ck_assert_int_eq(config_set(&cfg, "startup_pageout", "off"), 0);
	ck_assert_uint_eq(cfg.startup_pageout, 0);
	ck_assert_int_eq(config_set(&cfg, "startup_pageout", "random"), 0);
	ck_assert_uint_eq(cfg.startup_pageout, 2);
	ck_assert_int_lt(config_set(&cfg, "startup_pageout", "1"), 0);
	ck_assert_int_lt(config_set(&cfg, "startup_pageout", "yes"), 0);
	ck_assert_uint_eq(cfg.startup_pageout, 2);
	ck_assert_int_eq(config_set(&cfg, "startup_pageout", "on"), 0);
	ck_assert_uint_eq(cfg.startup_pageout, 1);
	ck_assert_uint_eq(cfg.query_idle_s, 600);
	ck_assert_int_lt(config_set(&cfg, "query_nice", "20"), 0);
	ck_assert_int_lt(config_set(&cfg, "query_nice", "-1"), 0);
	ck_assert_int_lt(config_set(&cfg, "query_nice", "x"), 0);
	ck_assert_uint_eq(cfg.query_nice, 19);
	config_release(&cfg);
}
END_TEST

START_TEST(set_unknown_key)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "interval", "1000"), -ENOENT);
	ck_assert_int_eq(config_set(&cfg, "Interval_ms", "1000"), -ENOENT);
	ck_assert_int_eq(config_set(&cfg, "", "1"), -ENOENT);
	ck_assert_int_eq(config_set(&cfg, "interval_ms ", "1000"), -ENOENT);
	config_release(&cfg);
}
END_TEST

/* The store's keys: a floor each, plain decimal only. */
static const struct store_key {
	const char *key;
	const char *below; /* one under the floor */
	const char *floor;
	const char *ok;
	uint64_t want;
} store_keys[] = {
	{ "write_queue", "0", "1", "128", 128 },
	/* less than a minute of history, or a database smaller than a few
	 * windows, is a typo rather than a policy */
	{ "retention_s", "59", "60", "86400", 86400 },
	{ "db_max_bytes", "65535", "65536", "1048576", 1048576 },
	{ "rollup1_after_s", "0", "1", "3600", 3600 },
	{ "rollup1_s", "0", "1", "300", 300 },
	{ "rollup2_after_s", "0", "1", "172800", 172800 },
	{ "rollup2_s", "0", "1", "3600", 3600 },
};

static uint64_t
store_key_get(const struct config *cfg, const char *key)
{
	if (!strcmp(key, "write_queue"))
		return cfg->write_queue;
	if (!strcmp(key, "retention_s"))
		return (uint64_t)cfg->store.retain_s;
	if (!strcmp(key, "db_max_bytes"))
		return cfg->store.max_bytes;
	if (!strcmp(key, "rollup1_after_s"))
		return (uint64_t)cfg->store.rollup1_after_s;
	if (!strcmp(key, "rollup1_s"))
		return cfg->store.rollup1_s;
	if (!strcmp(key, "rollup2_after_s"))
		return (uint64_t)cfg->store.rollup2_after_s;
	if (!strcmp(key, "rollup2_s"))
		return cfg->store.rollup2_s;
	ck_abort_msg("no such key %s", key);
	return 0;
}

/* rollup_batch_s: an hour by default, 0 allowed (every pass) */
START_TEST(set_rollup_batch)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_int_eq(cfg.store.rollup_batch_s, 3600);
	ck_assert_int_eq(config_set(&cfg, "rollup_batch_s", "7200"), 0);
	ck_assert_int_eq(cfg.store.rollup_batch_s, 7200);
	ck_assert_int_eq(config_set(&cfg, "rollup_batch_s", "0"), 0);
	ck_assert_int_eq(cfg.store.rollup_batch_s, 0);
	ck_assert_int_lt(config_set(&cfg, "rollup_batch_s", "-1"), 0);
	ck_assert_int_lt(config_set(&cfg, "rollup_batch_s", "1h"), 0);
	ck_assert_int_eq(cfg.store.rollup_batch_s, 0);
	config_release(&cfg);
}
END_TEST

START_TEST(set_store_keys)
{
	const struct store_key *k = &store_keys[_i];
	struct config cfg;
	uint64_t before;
	unsigned g;

	config_init(&cfg);
	before = store_key_get(&cfg, k->key);
	ck_assert_int_eq(config_set(&cfg, k->key, k->below), -ERANGE);
	ck_assert_uint_eq(store_key_get(&cfg, k->key), before);
	for (g = 0; g < sizeof(garbage) / sizeof(garbage[0]); g++)
		ck_assert_int_eq(config_set(&cfg, k->key, garbage[g]), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, k->key, "99999999999999999999999"),
	    -ERANGE);
	ck_assert_uint_eq(store_key_get(&cfg, k->key), before);
	ck_assert_int_eq(config_set(&cfg, k->key, k->floor), 0);
	ck_assert_int_eq(config_set(&cfg, k->key, k->ok), 0);
	ck_assert_uint_eq(store_key_get(&cfg, k->key), k->want);
	config_release(&cfg);
}
END_TEST

/* Batched commits: the spool's directory (absolute, "" or "off") and
 * the batch period (0 turns the spool off). */
START_TEST(set_spool_keys)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_ptr_null(cfg.store_spool_dir); /* the daemon's default */
	ck_assert_uint_eq(cfg.store.commit_s, 900);
	ck_assert_int_eq(config_set(&cfg, "store_spool_dir", "/dev/shm/x"), 0);
	ck_assert_str_eq(cfg.store_spool_dir, "/dev/shm/x");
	ck_assert_int_eq(config_set(&cfg, "store_spool_dir", "relative"),
	    -EINVAL);
	ck_assert_str_eq(cfg.store_spool_dir, "/dev/shm/x");
	ck_assert_int_eq(config_set(&cfg, "store_spool_dir", "off"), 0);
	ck_assert_str_eq(cfg.store_spool_dir, "");
	ck_assert_int_eq(config_set(&cfg, "store_spool_dir", "/run/v"), 0);
	ck_assert_int_eq(config_set(&cfg, "store_spool_dir", ""), 0);
	ck_assert_str_eq(cfg.store_spool_dir, "");

	ck_assert_int_eq(config_set(&cfg, "store_commit_s", "0"), 0);
	ck_assert_uint_eq(cfg.store.commit_s, 0);
	ck_assert_int_eq(config_set(&cfg, "store_commit_s", "3600"), 0);
	ck_assert_int_eq(config_set(&cfg, "store_commit_s", "3601"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "store_commit_s", "-1"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "store_commit_s", "1m"), -EINVAL);
	ck_assert_uint_eq(cfg.store.commit_s, 3600);

	/* the main file's journal while the spool is on */
	ck_assert_int_eq(cfg.store.journal, STORE_JOURNAL_PERSIST);
	ck_assert_uint_eq(cfg.store.max_bytes, 32ULL << 20);
	ck_assert_int_eq(config_set(&cfg, "store_journal", "wal"), 0);
	ck_assert_int_eq(cfg.store.journal, STORE_JOURNAL_WAL);
	ck_assert_int_eq(config_set(&cfg, "store_journal", "truncate"), 0);
	ck_assert_int_eq(cfg.store.journal, STORE_JOURNAL_TRUNCATE);
	ck_assert_int_eq(config_set(&cfg, "store_journal", "delete"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "store_journal", "WAL"), -EINVAL);
	ck_assert_int_eq(cfg.store.journal, STORE_JOURNAL_TRUNCATE);
	/* auto_vacuum of a new vitals.db: none by default */
	ck_assert_int_eq(cfg.store.vacuum, STORE_VACUUM_NONE);
	ck_assert_int_eq(config_set(&cfg, "store_auto_vacuum", "incremental"),
	    0);
	ck_assert_int_eq(cfg.store.vacuum, STORE_VACUUM_INCREMENTAL);
	ck_assert_int_eq(config_set(&cfg, "store_auto_vacuum", "full"),
	    -EINVAL);
	ck_assert_int_eq(cfg.store.vacuum, STORE_VACUUM_INCREMENTAL);
	ck_assert_int_eq(config_set(&cfg, "store_auto_vacuum", "none"), 0);
	ck_assert_int_eq(cfg.store.vacuum, STORE_VACUUM_NONE);
	ck_assert_int_eq(config_set(&cfg, "store_journal", "persist"), 0);
	ck_assert_int_eq(cfg.store.journal, STORE_JOURNAL_PERSIST);
	config_release(&cfg);
}
END_TEST

/* ----------------------------------------------------- config_parse_file */

START_TEST(parse_good_file)
{
	const char *path = conf_file("good.conf",
	    "# vitalsd test configuration\n"
	    "\n"
	    "   # an indented comment\n"
	    "interval_ms=250\n"
	    "window_s = 30\n"
	    "\tring\t=\t4\t\n"
	    "   \t   \n"
	    "threads   =all\n"
	    "state_dir = /data/misc/vitals test\n"
	    "proc_root = /tmp/fake proc\r\n"
	    "sys_root=/tmp/sys"); /* no final newline */
	struct config cfg;
	char err[256] = "";

	config_init(&cfg);
	ck_assert_int_eq(config_parse_file(&cfg, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.interval_ms, 250);
	ck_assert_uint_eq(cfg.window_s, 30);
	ck_assert_uint_eq(cfg.ring, 4);
	ck_assert_int_eq(cfg.threads, THREADS_ALL);
	/* inner spaces belong to the value; outer blanks and CR do not */
	ck_assert_str_eq(cfg.state_dir, "/data/misc/vitals test");
	ck_assert_str_eq(cfg.proc_root, "/tmp/fake proc");
	ck_assert_str_eq(cfg.sys_root, "/tmp/sys");
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	config_release(&cfg);
}
END_TEST

START_TEST(parse_empty_file)
{
	const char *path = conf_file("empty.conf", "");
	struct config cfg;
	char err[256] = "";

	config_init(&cfg);
	ck_assert_int_eq(config_parse_file(&cfg, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.interval_ms, 1000);
	config_release(&cfg);
}
END_TEST

/* Each bad file: its text, the errno, and what the message must name. */
static const struct bad_conf {
	const char *text;
	int err;
	const char *line; /* ":N:" */
	const char *why;
} bad_confs[] = {
	{ "interval_ms = 500\nwindow_s 10\n", -EINVAL,
	    ":2:", "expected key = value" },
	{ "# c\n\ninterval_ms = 50\n", -ERANGE, ":3:", "interval_ms" },
	{ "interval_ms = fast\n", -EINVAL, ":1:", "interval_ms" },
	{ "\n\n\n\nbogus_key = 1\n", -ENOENT, ":5:", "bogus_key" },
	{ "threads = sometimes\n", -EINVAL, ":1:", "threads" },
	{ "window_s = 0\n", -ERANGE, ":1:", "window_s" },
	{ "state_dir =\n", -EINVAL, ":1:", "state_dir" },
};

START_TEST(parse_bad_line)
{
	const struct bad_conf *b = &bad_confs[_i];
	const char *path = conf_file("bad.conf", b->text);
	char want[PATH_MAX + 16];
	struct config cfg;
	char err[PATH_MAX + 128] = "";

	config_init(&cfg);
	ck_assert_int_eq(config_parse_file(&cfg, path, err, sizeof(err)),
	    b->err);
	/* the message names file:line, so a person can go and fix it */
	snprintf(want, sizeof(want), "%s%s", path, b->line);
	ck_assert_msg(strstr(err, want) != NULL, "\"%s\" lacks \"%s\"", err,
	    want);
	ck_assert_msg(strstr(err, b->why) != NULL, "\"%s\" lacks \"%s\"", err,
	    b->why);
	config_release(&cfg);
}
END_TEST

START_TEST(parse_long_line)
{
	char text[2100], path[PATH_MAX], want[PATH_MAX + 8];
	struct config cfg;
	char err[PATH_MAX + 128] = "";

	/* a 2000-byte path: longer than any line buffer, must not be cut
	 * silently into a different (shorter) value */
	memset(text, 'a', sizeof(text));
	memcpy(text, "# ok\nstate_dir = /", 18);
	text[sizeof(text) - 2] = '\n';
	text[sizeof(text) - 1] = '\0';
	snprintf(path, sizeof(path), "%s", conf_file("long.conf", text));
	config_init(&cfg);
	ck_assert_int_lt(config_parse_file(&cfg, path, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s:2:", path);
	ck_assert_msg(strstr(err, want) != NULL, "\"%s\"", err);
	ck_assert_str_ne(cfg.state_dir, "/");
	ck_assert_uint_lt(strlen(cfg.state_dir), 1000);
	config_release(&cfg);
}
END_TEST

START_TEST(parse_missing_file)
{
	char path[PATH_MAX];
	struct config cfg;
	char err[PATH_MAX + 128] = "";

	snprintf(path, sizeof(path), "%s/nonexistent.conf", tmpdir);
	config_init(&cfg);
	ck_assert_int_eq(config_parse_file(&cfg, path, err, sizeof(err)),
	    -ENOENT);
	ck_assert_msg(strstr(err, path) != NULL, "\"%s\"", err);
	config_release(&cfg);
}
END_TEST

/* ---------------------------------------------------------- config_check */

START_TEST(check_limits)
{
	struct config cfg;
	char err[256];

	config_init(&cfg);
	/* set directly: config_set already refuses these */
	cfg.interval_ms = 99;
	err[0] = '\0';
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert(strstr(err, "interval_ms") != NULL);
	cfg.interval_ms = 100;
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);

	/* a window must hold at least one interval */
	cfg.interval_ms = 5000;
	cfg.window_s = 4;
	err[0] = '\0';
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert(strstr(err, "window_s") != NULL);
	cfg.window_s = 5;
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);

	/* trusted callers never take every slot: readers keep at least one */
	ck_assert_int_eq(config_set(&cfg, "max_connections", "8"), 0);
	ck_assert_int_eq(config_set(&cfg, "trusted_max_connections", "7"), 0);
	ck_assert_uint_eq(cfg.trusted_max_conns, 7);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&cfg, "trusted_max_connections", "8"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert(strstr(err, "trusted_max_connections") != NULL);
	ck_assert_int_eq(config_set(&cfg, "trusted_max_connections", "0"),
	    -ERANGE);
	cfg.trusted_max_conns = 0;

	free(cfg.state_dir);
	cfg.state_dir = NULL;
	err[0] = '\0';
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -EINVAL);
	ck_assert(err[0] != '\0');
	config_release(&cfg);
}
END_TEST

/* Roll-ups get coarser and older, never the other way round. */
/* The daemon's seccomp filter refuses fork and execve; the privileged
 * helper's spawner runs perfetto instead. seccomp on with a perfetto path
 * is a valid configuration with the helper on, and without it too: the
 * daemon then runs and refuses sessions with a named state
 * (check_heapprofd_daemon shows it). */
START_TEST(check_seccomp_perfetto)
{
	struct config cfg;
	char err[256];

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "seccomp", "on"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&cfg, "heapprofd_perfetto",
			     "/system/bin/perfetto"),
	    0);
	ck_assert_int_eq(config_set(&cfg, "privhelper", "on"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&cfg, "privhelper", "off"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&cfg, "seccomp", "log"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	config_release(&cfg);
}
END_TEST

START_TEST(check_rollups)
{
	struct config cfg;
	char err[256];

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "window_s", "10"), 0);
	ck_assert_int_eq(config_set(&cfg, "rollup1_s", "60"), 0);
	ck_assert_int_eq(config_set(&cfg, "rollup2_s", "600"), 0);
	ck_assert_int_eq(config_set(&cfg, "rollup1_after_s", "3600"), 0);
	ck_assert_int_eq(config_set(&cfg, "rollup2_after_s", "86400"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	/* level 2 drops thread rows unless asked to keep them */
	ck_assert(!cfg.store.rollup2_threads);
	ck_assert_int_eq(config_set(&cfg, "rollup2_threads", "on"), 0);
	ck_assert(cfg.store.rollup2_threads);
	ck_assert_int_eq(config_set(&cfg, "rollup2_threads", "maybe"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "rollup2_threads", "off"), 0);
	ck_assert(!cfg.store.rollup2_threads);

	/* a roll-up finer than the windows it merges */
	ck_assert_int_eq(config_set(&cfg, "rollup1_s", "5"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "rollup1_s", "60"), 0);
	/* the second level finer than the first */
	ck_assert_int_eq(config_set(&cfg, "rollup2_s", "30"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "rollup2_s", "600"), 0);
	/* the second level starting before the first */
	ck_assert_int_eq(config_set(&cfg, "rollup2_after_s", "60"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	/* the message names that constraint, not another one */
	ck_assert_msg(strstr(err,
			  "rollup1_after_s (3600) <= "
			  "rollup2_after_s (60)") != NULL,
	    "%s", err);
	ck_assert_msg(strstr(err, "window_s") == NULL, "%s", err);
	ck_assert_int_eq(config_set(&cfg, "rollup2_after_s", "86400"), 0);
	ck_assert_int_eq(config_set(&cfg, "rollup2_s", "30"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert_msg(strstr(err, "rollup1_s (60) <= rollup2_s (30)") != NULL,
	    "%s", err);
	config_release(&cfg);
}
END_TEST

/* ------------------------------------------------------ the real binary */

/*
 * Run the built vitalsd with argv, stdout and stderr into one file; return
 * the wait status. A binary that hangs is killed after 10 s and fails.
 */
static void
stdout_to_stderr(void *arg)
{
	(void)arg;
	dup2(2, 1);
}

static int
run_vitalsd(const char *const *args, const char *outpath)
{
	const char *argv[16];
	pid_t pid;
	int status = 0, i, n;

	ck_assert_msg(getenv("VITALS_BUILDDIR") != NULL,
	    "VITALS_BUILDDIR not set (run via meson)");
	ck_assert_int_eq(access(td_vitalsd(), X_OK), 0);
	argv[0] = "vitalsd";
	for (n = 0; args[n] != NULL; n++) {
		ck_assert_int_lt(n + 2, 16);
		argv[n + 1] = args[n];
	}
	argv[n + 1] = NULL;
	pid = td_exec(outpath, TD_LOG_TRUNC, argv, stdout_to_stderr, NULL);

	for (i = 0; i < 1000; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		struct timespec ts = { 0, 10 * NSEC_PER_MSEC };

		ck_assert_int_ge(r, 0);
		if (r == pid)
			return status;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ck_abort_msg("vitalsd %s did not exit", args[0]);
	return -1;
}

static const char *slurp(const char *path);

/* Under -Db_sanitize a report goes to stderr; the exit status may not
 * show it (UBSan carries on). */
static int
run_clean(const char *const *args, const char *outpath)
{
	int st = run_vitalsd(args, outpath);
	const char *out = slurp(outpath);

	ck_assert_msg(strstr(out, "runtime error") == NULL &&
		strstr(out, "Sanitizer") == NULL,
	    "%s", out);
	return st;
}

/* The whole of a small file as a string (static buffer). */
static const char *
slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(binary_check_good)
{
	char conf[PATH_MAX], out[PATH_MAX];
	const char *args[] = { "-n", "-c", conf, NULL };
	int st;

	snprintf(conf, sizeof(conf), "%s",
	    conf_file("good.conf",
		"# good\ninterval_ms = 500\n"
		"window_s = 20\nthreads = none\n"));
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	st = run_clean(args, out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s",
	    st, slurp(out));
}
END_TEST

START_TEST(binary_check_bad)
{
	char conf[PATH_MAX], out[PATH_MAX], want[PATH_MAX + 8];
	const char *args[] = { "-n", "-c", conf, NULL };
	const char *msg;
	int st;

	snprintf(conf, sizeof(conf), "%s",
	    conf_file("bad.conf", "interval_ms = 500\n\nwindow_s = never\n"));
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	st = run_clean(args, out);
	ck_assert(WIFEXITED(st));
	ck_assert_int_ne(WEXITSTATUS(st), 0);
	msg = slurp(out);
	snprintf(want, sizeof(want), "%s:3:", conf);
	ck_assert_msg(strstr(msg, want) != NULL, "message: \"%s\"", msg);
	ck_assert_msg(strstr(msg, "window_s") != NULL, "message: \"%s\"", msg);
}
END_TEST

START_TEST(binary_check_missing_file)
{
	char conf[PATH_MAX], out[PATH_MAX];
	const char *args[] = { "-n", "-c", conf, NULL };
	const char *msg;
	int st;

	snprintf(conf, sizeof(conf), "%s/absent.conf", tmpdir);
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	st = run_clean(args, out);
	ck_assert(WIFEXITED(st));
	ck_assert_int_ne(WEXITSTATUS(st), 0);
	msg = slurp(out);
	ck_assert_msg(strstr(msg, conf) != NULL, "message: \"%s\"", msg);
}
END_TEST

START_TEST(binary_interval_floor)
{
	char out[PATH_MAX];
	const char *low[] = { "-n", "--interval-ms", "50", NULL };
	const char *ok[] = { "-n", "--interval-ms", "100", NULL };
	const char *msg;
	int st;

	snprintf(out, sizeof(out), "%s/out", tmpdir);
	st = run_clean(low, out);
	ck_assert(WIFEXITED(st));
	ck_assert_int_ne(WEXITSTATUS(st), 0);
	msg = slurp(out);
	ck_assert_msg(strstr(msg, "interval") != NULL, "message: \"%s\"", msg);

	st = run_clean(ok, out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s",
	    st, slurp(out));
}
END_TEST

/* The command line is applied after the file and wins over it. */
START_TEST(binary_flag_overrides_file)
{
	char conf[PATH_MAX], out[PATH_MAX];
	const char *fixed[] = { "-n", "-c", conf, "--interval-ms", "1000",
		NULL };
	const char *plain[] = { "-n", "-c", conf, NULL };
	int st;

	/* interval 5 s in a 2 s window: config_check refuses this file */
	snprintf(conf, sizeof(conf), "%s",
	    conf_file("o.conf", "interval_ms = 5000\nwindow_s = 2\n"));
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	st = run_clean(plain, out);
	ck_assert(WIFEXITED(st));
	ck_assert_int_ne(WEXITSTATUS(st), 0);
	st = run_clean(fixed, out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s",
	    st, slurp(out));
}
END_TEST

/* A directory or a FIFO is not a configuration: refused at once, by -n
 * and by a real start alike (a FIFO with no writer must not block). */
START_TEST(binary_config_not_regular)
{
	char dir[PATH_MAX], fifo[PATH_MAX], out[PATH_MAX], state[PATH_MAX];
	const char *check_dir[] = { "-n", "-c", dir, NULL };
	const char *check_fifo[] = { "-n", "-c", fifo, NULL };
	const char *start_dir[] = { "-f", "-c", dir, "--state-dir", state,
		NULL };
	const char *start_fifo[] = { "-f", "-c", fifo, "--state-dir", state,
		NULL };
	const char *const *runs[] = { check_dir, check_fifo, start_dir,
		start_fifo };
	const char *msg;
	unsigned i;
	int st;

	snprintf(dir, sizeof(dir), "%s/conf.d", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s/conf.fifo", tmpdir);
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		st = run_clean(runs[i], out);
		msg = slurp(out);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0,
		    "run %u: status 0x%x: %s", i, st, msg);
		ck_assert_msg(strstr(msg, "not a regular file") != NULL,
		    "run %u: %s", i, msg);
	}
	/* nothing was started: no state directory made */
	ck_assert_int_ne(access(state, F_OK), 0);
}
END_TEST

/* -n applies every check of a real start: a socket path longer than
 * sun_path is refused by both, with the same message. */
START_TEST(binary_socket_path_long)
{
	char sock[256], out[PATH_MAX], state[PATH_MAX];
	const char *check[] = { "-n", "--socket", sock, NULL };
	const char *start[] = { "-f", "--socket", sock, "--state-dir", state,
		NULL };
	const char *msg;
	int st;

	memset(sock, 'a', 200);
	sock[0] = '/';
	sock[200] = '\0';
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	st = run_clean(check, out);
	msg = slurp(out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0, "-n: 0x%x: %s", st,
	    msg);
	ck_assert_msg(strstr(msg, "socket path too long") != NULL, "%s", msg);
	st = run_clean(start, out);
	msg = slurp(out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0, "start: 0x%x: %s",
	    st, msg);
	ck_assert_msg(strstr(msg, "socket path too long") != NULL, "%s", msg);
	/* a 107-byte path fits sun_path: accepted */
	sock[107] = '\0';
	st = run_clean(check, out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "107: 0x%x: %s",
	    st, slurp(out));
	sock[108] = 'a';
	sock[109] = '\0';
	sock[107] = 'a';
	st = run_clean(check, out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0, "109: 0x%x: %s",
	    st, slurp(out));
}
END_TEST

/* ---------------------------------------------------------------- reload */

/*
 * A reread against the settings the daemon runs with: changed keys named
 * with their old and new text, the reloadable ones marked, a key the
 * command line set unchanged whatever the file says, a key gone from
 * the file reported as back to its default; a file that does not parse
 * is refused; an applied key no longer differs.
 */
START_TEST(reload_changes)
{
	struct config start, again;
	struct config_change ch[CONFIG_CHANGES_MAX];
	struct config_src *run;
	char err[256];
	const char *path;
	size_t n, i;

	path = conf_file("r.conf",
	    "reader_uids = 100\nwindow_s = 10\nring = 32\n"
	    "interval_ms = 1000\n");
	config_init(&start);
	ck_assert_int_eq(config_parse_file(&start, path, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set_cli(&start, "interval_ms", "200"), 0);
	ck_assert_str_eq(config_path(&start), path);
	ck_assert_ptr_nonnull(run = config_src_dup(&start));
	/* nothing changed: nothing to say */
	ck_assert_int_eq(config_reread(&start, &again, err, sizeof(err)), 0);
	ck_assert_uint_eq(config_changes(run, &again, ch, CONFIG_CHANGES_MAX),
	    0);
	ck_assert_uint_eq(again.interval_ms, 200); /* the command line's */
	config_release(&again);

	conf_file("r.conf",
	    "reader_uids = 100,101\nwindow_s = 20\ninterval_ms = 500\n"
	    "bpf_procs = 64\n");
	ck_assert_int_eq(config_reread(&start, &again, err, sizeof(err)), 0);
	ck_assert_uint_eq(again.interval_ms, 200);
	ck_assert_uint_eq(again.reader_uids.n, 2);
	n = config_changes(run, &again, ch, CONFIG_CHANGES_MAX);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(ch[0].key, "reader_uids");
	ck_assert_str_eq(ch[0].was, "100");
	ck_assert_str_eq(ch[0].now, "100,101");
	ck_assert(ch[0].reloadable);
	ck_assert_str_eq(ch[1].key, "window_s");
	ck_assert(!ch[1].reloadable);
	ck_assert_str_eq(ch[2].key, "bpf_procs");
	ck_assert_ptr_null(ch[2].was);
	ck_assert(ch[2].reloadable);
	ck_assert_str_eq(ch[3].key, "ring"); /* gone: its default again */
	ck_assert_str_eq(ch[3].was, "32");
	ck_assert_ptr_null(ch[3].now);
	/* applied ones no longer differ; the refused ones still do */
	for (i = 0; i < n; i++)
		if (ch[i].reloadable)
			ck_assert_int_eq(config_src_take(run, &again,
					     ch[i].key),
			    0);
	n = config_changes(run, &again, ch, CONFIG_CHANGES_MAX);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(ch[0].key, "window_s");
	ck_assert_str_eq(ch[1].key, "ring");
	config_release(&again);

	/* a reloadable key gone from the file: its name is one of run's
	 * own strings, which taking it frees (ASan's stage would see a use
	 * after it) */
	conf_file("r.conf", "reader_uids = 100,101\nwindow_s = 20\n");
	ck_assert_int_eq(config_reread(&start, &again, err, sizeof(err)), 0);
	n = config_changes(run, &again, ch, CONFIG_CHANGES_MAX);
	for (i = 0; i < n && i < CONFIG_CHANGES_MAX; i++)
		if (strcmp(ch[i].key, "bpf_procs") == 0)
			break;
	ck_assert_uint_lt(i, n);
	ck_assert_ptr_null(ch[i].now);
	ck_assert_int_eq(config_src_take(run, &again, ch[i].key), 0);
	n = config_changes(run, &again, ch, CONFIG_CHANGES_MAX);
	for (i = 0; i < n; i++)
		ck_assert_str_ne(ch[i].key, "bpf_procs");
	config_release(&again);

	/* a list key: a change to any entry is a change, not only the
	 * last's; the same entries again are none */
	conf_file("r.conf",
	    "reader_uids = 100,101\nwindow_s = 20\n"
	    "burst_rule = a when=rq_p99:1s\nburst_rule = b when=rq_p99:2s\n");
	ck_assert_int_eq(config_reread(&start, &again, err, sizeof(err)), 0);
	config_src_free(run);
	ck_assert_ptr_nonnull(run = config_src_dup(&again));
	config_release(&again);
	ck_assert_int_eq(config_reread(&start, &again, err, sizeof(err)), 0);
	ck_assert_uint_eq(config_changes(run, &again, ch, CONFIG_CHANGES_MAX),
	    0);
	config_release(&again);
	conf_file("r.conf",
	    "reader_uids = 100,101\nwindow_s = 20\n"
	    "burst_rule = a when=rq_p99:5s\nburst_rule = b when=rq_p99:2s\n");
	ck_assert_int_eq(config_reread(&start, &again, err, sizeof(err)), 0);
	n = config_changes(run, &again, ch, CONFIG_CHANGES_MAX);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(ch[0].key, "burst_rule");
	ck_assert(!ch[0].reloadable);
	config_release(&again);
	/* one entry fewer is a change too */
	conf_file("r.conf",
	    "reader_uids = 100,101\nwindow_s = 20\n"
	    "burst_rule = b when=rq_p99:2s\n");
	ck_assert_int_eq(config_reread(&start, &again, err, sizeof(err)), 0);
	n = config_changes(run, &again, ch, CONFIG_CHANGES_MAX);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(ch[0].key, "burst_rule");
	config_release(&again);

	/* a bad file: refused, said why */
	conf_file("r.conf", "window_s = ten\n");
	ck_assert_int_lt(config_reread(&start, &again, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "window_s"));
	config_release(&again);
	config_src_free(run);
	config_release(&start);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("library");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, init_defaults);
	tcase_add_test(tc, set_strings);
	tcase_add_test(tc, set_interval);
	tcase_add_test(tc, set_full_walk);
	tcase_add_test(tc, set_rq_source);
	tcase_add_loop_test(tc, set_uint_garbage, 0,
	    sizeof(garbage) / sizeof(garbage[0]));
	tcase_add_test(tc, set_window_ring);
	tcase_add_test(tc, set_threads);
	tcase_add_test(tc, set_query_nice);
	tcase_add_test(tc, set_unknown_key);
	tcase_add_test(tc, set_spool_keys);
	tcase_add_loop_test(tc, set_store_keys, 0,
	    sizeof(store_keys) / sizeof(store_keys[0]));
	tcase_add_test(tc, set_rollup_batch);
	tcase_add_test(tc, parse_good_file);
	tcase_add_test(tc, parse_empty_file);
	tcase_add_loop_test(tc, parse_bad_line, 0,
	    sizeof(bad_confs) / sizeof(bad_confs[0]));
	tcase_add_test(tc, parse_long_line);
	tcase_add_test(tc, parse_missing_file);
	tcase_add_test(tc, check_limits);
	tcase_add_test(tc, check_rollups);
	tcase_add_test(tc, check_seccomp_perfetto);
	suite_add_tcase(s, tc);

	tc = tcase_create("binary");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, binary_check_good);
	tcase_add_test(tc, binary_check_bad);
	tcase_add_test(tc, binary_check_missing_file);
	tcase_add_test(tc, binary_interval_floor);
	tcase_add_test(tc, binary_flag_overrides_file);
	tcase_add_test(tc, binary_config_not_regular);
	tcase_add_test(tc, binary_socket_path_long);
	tcase_add_test(tc, reload_changes);
	suite_add_tcase(s, tc);

	return tu_run(s);
}
