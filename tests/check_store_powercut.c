/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store proven the way SQLite proves itself: power cuts at random
 * points of the write path and an I/O error at every write call, through
 * the test VFS of vfs_powercut.c, with the store's own code on both sides.
 *
 * One script: open a v1 database (so the migrations run), put level-0
 * windows into a store small enough that every put trims by size and
 * checkpoints, and run roll-ups every few windows. A cut stops the script
 * where it is; the files are turned into what the disk could hold and
 * opened again with store_open. Then: the database is not corrupt (not
 * moved aside, integrity_check ok) and every window whose put returned 0
 * is still there (or was trimmed by size, oldest first, or folded into a
 * roll-up). The window in flight at the cut may be lost: that is the
 * "at most one" of the contract.
 *
 * VITALS_PC_SEED=N reruns one seed; VITALS_PC_CUTS=N sets the number of
 * cut points (default 1000).
 *
 * VITALS_TEST_SCALE=S (CI's sanitizer build, .ci/run) divides both loops
 * by S: 1000/S random cut points (at least 50), and an I/O error at every
 * S-th write call (S made prime to 3, so the three errors and counts
 * still alternate), starting at a call drawn from the seed, so that runs
 * cover different calls. A run's 1263 write calls come in 36 puts of ~30
 * calls each, 6 maintenance passes and the migrating open, each far
 * longer than S calls: every phase of the write path still fails at
 * several points. The plain build runs the full counts.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "vfs_powercut.h"
#include "vitalsd.h"

#define T0 (1699999800LL * NSEC_PER_SEC)
#define SEC NSEC_PER_SEC
#define NWIN 36
#define BOOT "5e0c1b7a-powercut"

static char dir[256], path[PATH_MAX];
static bool acked[NWIN];

static const char v1_row[] =
    "INSERT INTO windows (id, level, boot_id, seq, mono_start_ns,"
    " mono_end_ns, boot_start_ns, boot_end_ns, wall_start_ns, wall_end_ns,"
    " duration_ns, hz, interval_ms, cpu_span, samples, samples_valid,"
    " d_ctxt, d_processes, vm_samples, self_utime_us, self_stime_us,"
    " sample_ns_sum, sample_ns_max, late_ticks, burst_samples,"
    " procs_scanned, threads_scanned, procs_exited, threads_exited,"
    " cpu_dropped) VALUES (1, 0, 'b1', 9, 90000000000, 100000000000,"
    " 90000000007, 100000000007, 1699999700000000000,"
    " 1699999710000000000, 10000000000, 100, 1000, 1, 10, 9, 5555, 3, 9,"
    " 111, 22, 3000000, 400000, 1, 0, 321, 1234, 2, 5, 0);";

static struct window *
mkwin(unsigned i)
{
	struct window *w = window_new(i + 1, 0);
	unsigned k;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", BOOT);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)i * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + (int64_t)i * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	for (k = 0; k < 30; k++) {
		struct window_task t;

		memset(&t, 0, sizeof(t));
		t.id = t.tgid = (int32_t)(100 + k);
		t.starttime = 1000 + k;
		snprintf(t.comm, sizeof(t.comm), "task%u", k);
		window_task_set_namef(&t, "com.example.powercut%u", k);
		t.d_utime = i + k;
		t.samples = 10;
		t.wall_ns = 10 * SEC;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	return w;
}

static void
store_o(struct store_opts *o)
{
	store_opts_default(o);
	o->max_bytes = 192 << 10; /* every put trims and checkpoints */
	o->rollup1_after_s = 60;
	o->rollup1_s = 60;
	o->rollup2_after_s = 240;
	o->rollup2_s = 600;
	o->retain_s = 100LL * 365 * 24 * 3600;
}

/*
 * The write path once. retry: an operation that fails is tried again (as
 * the writer does, store_recover on -EUCLEAN), otherwise the script stops
 * at the first failure (the machine is off). Returns the windows put.
 */
static unsigned
script(bool retry, unsigned *ret_recovered)
{
	struct store_opts o;
	struct store *s = NULL;
	unsigned i, tries, done = 0;
	int r;

	store_o(&o);
	for (tries = 0; (r = store_open(path, &o, &s)) < 0; tries++)
		if (!retry || tries > 8)
			return 0;
	for (i = 0; i < NWIN; i++) {
		struct window *w = mkwin(i);

		for (tries = 0; (r = store_put(s, w)) < 0; tries++) {
			if (!retry || tries > 8)
				break;
			if (r == -EUCLEAN || r == -EBADF) {
				(void)store_recover(s);
				(*ret_recovered)++;
			}
		}
		window_free(w);
		if (r < 0)
			break;
		acked[i] = true;
		done++;
		if (i % 6 == 5) {
			r = store_maintain(s, T0 + (int64_t)(i + 1) * 10 * SEC);
			if (r < 0 && !retry)
				break;
		}
	}
	store_close(s);
	return done;
}

static long long
q_int(struct store *s, const char *sql)
{
	char buf[64];

	ck_assert_int_eq(store_exec(s, sql, buf, sizeof(buf)), 0);
	return strtoll(buf, NULL, 10);
}

struct verdict {
	bool corrupt;
	bool wal_said; /* the open reported a damaged WAL */
	unsigned lost; /* acknowledged windows missing */
};

/* Open what the disk holds with the real store code and judge it. */
static struct verdict
verify(const char *label, uint64_t seed)
{
	struct verdict v = { 0 };
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	char buf[256], sql[256];
	long long oldest;
	unsigned i;
	int r;

	store_o(&o);
	r = store_open(path, &o, &s);
	ck_assert_msg(r == 0, "%s seed %" PRIu64 ": reopen %d", label, seed, r);
	store_get_stats(s, &st);
	v.wal_said = st.wal_damaged > 0;
	ck_assert_int_eq(store_exec(s, "PRAGMA integrity_check", buf,
			     sizeof(buf)),
	    0);
	if (st.corrupt_moved || strcmp(buf, "ok") != 0) {
		fprintf(stderr, "%s seed %" PRIu64 ": corrupt (%s; %s)\n",
		    label, seed, buf, st.last_errmsg);
		v.corrupt = true;
	}
	oldest = q_int(s,
	    "SELECT coalesce(min(wall_start_ns), 0) FROM"
	    " windows");
	for (i = 0; i < NWIN; i++) {
		int64_t m = (int64_t)i * 10 * SEC;

		if (!acked[i] || T0 + m < oldest)
			continue; /* never acknowledged, or trimmed by size */
		snprintf(sql, sizeof(sql),
		    "SELECT count(*) FROM windows WHERE"
		    " boot = boot_key('%s') AND mono_start_ns <= %lld"
		    " AND mono_end_ns >= %lld",
		    BOOT, (long long)m, (long long)(m + 10 * SEC));
		if (q_int(s, sql) == 0) {
			v.lost++;
			fprintf(stderr, "%s seed %" PRIu64 ": window %u lost\n",
			    label, seed, i);
		}
	}
	/* And it takes writes again. */
	{
		struct window *w = mkwin(NWIN + 5);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	store_close(s);
	return v;
}

static void
fresh_dir(void)
{
	if (dir[0])
		tu_rmtree(dir);
	snprintf(dir, sizeof(dir), "/dev/shm/vitals-pc-XXXXXX");
	if (access("/dev/shm", W_OK) != 0)
		snprintf(dir, sizeof(dir), "/tmp/vitals-pc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	memset(acked, 0, sizeof(acked));
	pc_reset(0);
	/* A database of the first schema: opening it migrates. */
	ck_assert_int_eq(store_create_version(path, 1, v1_row), 0);
	pc_reset(0);
}

static uint64_t
env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* Write-path calls of one whole run: the range cut points are drawn in. */
static uint64_t
calibrate(void)
{
	unsigned rec = 0;
	uint64_t n;

	fresh_dir();
	ck_assert_uint_eq(script(false, &rec), NWIN);
	n = pc_calls();
	ck_assert_uint_gt(n, 100);
	return n;
}

START_TEST(test_power_cut)
{
	uint64_t seed0 = env_u64("VITALS_PC_SEED", (uint64_t)time(NULL));
	uint64_t cuts = env_u64("VITALS_PC_CUTS", tu_scaled(1000, 50)), k,
		 total;
	unsigned corrupt = 0, max_lost = 0, wal_said = 0;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);

	ck_assert_int_eq(pc_register(), 0);
	total = calibrate();
	fprintf(stderr,
	    "power cut: seed %" PRIu64 " (VITALS_PC_SEED), %" PRIu64
	    " write calls per run\n",
	    seed0, total);
	for (k = 0; k < cuts; k++) {
		uint64_t seed = seed0 + k, at;
		unsigned rec = 0, put;
		struct verdict v;

		fresh_dir();
		pc_reset(seed * 2654435761ULL + 1);
		at = 1 + (seed * 2654435761ULL >> 7) % total;
		pc_arm_cut(at);
		put = script(false, &rec);
		ck_assert_int_eq(pc_apply_cut(), 0);
		v = verify("power cut", seed);
		if (v.corrupt)
			corrupt++;
		if (v.lost > max_lost)
			max_lost = v.lost;
		wal_said += v.wal_said;
		(void)put;
	}
	fprintf(stderr,
	    "power cut: %" PRIu64 " cut points in %.1f s, %u "
	    "corrupt, at most %u acknowledged windows lost per cut; %u opens "
	    "reported the in-flight commit dropped from a torn WAL\n",
	    cuts, (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e9, corrupt,
	    max_lost, wal_said);
	ck_assert_uint_eq(corrupt, 0);
	ck_assert_uint_eq(max_lost, 0);
	tu_rmtree(dir);
	dir[0] = '\0';
}
END_TEST

START_TEST(test_io_error_every_call)
{
	static const int rcs[] = { SQLITE_IOERR_WRITE, SQLITE_FULL,
		SQLITE_IOERR_FSYNC };
	unsigned corrupt = 0, lost = 0, recovered = 0;
	uint64_t total, k, errs = 0, points = 0, first, stride;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);

	stride = tu_test_scale();
	if (stride % 3 == 0)
		stride++;
	first = 1 + env_u64("VITALS_PC_SEED", (uint64_t)time(NULL)) % stride;
	ck_assert_int_eq(pc_register(), 0);
	total = calibrate();
	for (k = first; k <= total; k += stride, points++) {
		struct verdict v;
		unsigned rec = 0;

		fresh_dir();
		pc_arm_errors(k, 1 + (unsigned)(k % 3), rcs[k % 3]);
		ck_assert_uint_eq(script(true, &rec), NWIN);
		errs += pc_errors();
		recovered += rec;
		pc_reset(0);
		v = verify("i/o error", k);
		corrupt += v.corrupt;
		lost += v.lost;
	}
	fprintf(stderr,
	    "i/o errors: %" PRIu64 " error points of %" PRIu64
	    " (every %" PRIu64 " from %" PRIu64 "; %" PRIu64
	    " calls failed) in %.1f s, %u corrupt, %u windows lost, %u "
	    "recoveries\n",
	    points, total, stride, first, errs,
	    (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e9, corrupt, lost,
	    recovered);
	/* errors were injected, at least one per point */
	ck_assert_uint_ge(errs, points);
	ck_assert_uint_eq(corrupt, 0);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(recovered, 0);
	tu_rmtree(dir);
	dir[0] = '\0';
}
END_TEST

/*
 * The writer thread under failing writes: windows keep being queued while
 * every write call fails, and once the errors stop it catches up; nothing
 * already stored is lost.
 */
START_TEST(test_writer_catches_up)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	struct writer *wr;
	unsigned queued, i;
	uint64_t dropped;

	ck_assert_int_eq(pc_register(), 0);
	fresh_dir();
	store_o(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	ck_assert_int_eq(writer_start(s, 64, &wr), 0);
	for (i = 0; i < 4; i++) {
		struct window *w = mkwin(i);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		ck_assert_int_eq(writer_wait(wr, 5000), 0);
		window_free(w);
		acked[i] = true;
	}
	/* Every write call fails from now on, for a while. */
	pc_arm_errors(pc_calls() + 1, 1000000, SQLITE_IOERR_WRITE);
	for (; i < 10; i++) {
		struct window *w = mkwin(i);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		window_free(w);
		acked[i] = true;
	}
	tu_sleep_ms(1200);
	writer_get(wr, &st, &queued, &dropped);
	ck_assert_int_eq(st.state, STORE_IO_ERROR);
	ck_assert_uint_eq(queued, 6);
	ck_assert_uint_gt(pc_errors(), 0);
	pc_arm_errors(0, 0, 0);
	wr = writer_stop(wr, 20000);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(st.last_err, 0);
	store_close(s);
	pc_reset(0);
	{
		struct verdict v = verify("writer", 0);

		ck_assert(!v.corrupt);
		ck_assert_uint_eq(v.lost, 0);
	}
	tu_rmtree(dir);
	dir[0] = '\0';
}
END_TEST

/*
 * Three cases, each a test of its own to meson (tu_cases_ok): the cuts'
 * and the errors' loops take CPU and no clock (CI runs them at nice 19
 * beside the kernel suites: tests/meson.build); the writer's waits for
 * its thread (1.2 s) run with the other unit suites.
 */
int
main(void)
{
	static const char *const names[] = { "cut", "ioerr", "writer", NULL };
	Suite *s = suite_create("store_powercut");
	TCase *tc[3];
	size_t i;

	if (!tu_cases_ok(names))
		return 1;
	for (i = 0; i < 3; i++) {
		tc[i] = tcase_create(names[i]);
		tcase_set_timeout(tc[i], 280);
		suite_add_tcase(s, tc[i]);
	}
	tcase_add_test(tc[0], test_power_cut);
	tcase_add_test(tc[1], test_io_error_every_call);
	tcase_add_test(tc[2], test_writer_catches_up);
	return tu_run(s);
}
