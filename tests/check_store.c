/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the window store (store.c, store_read.c): schema and
 * migration, field-by-field round trips, idempotent replays, top-N and
 * history reads, and the commit time of a large window. Roll-ups and
 * retention are in check_store_maint.c; corrupt files and SQLite's
 * failures in check_store_fail.c; the shared fixture in tests/lib/store_fix.c.
 *
 * Every test works in its own temporary directory. SQL that inspects the
 * file goes through store_exec(); the tests never call SQLite themselves.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_fix.h"
#include "testutil.h"
#include "vitalsd.h"

/* ----------------------------------------------------------------- schema */

/* A file keeps the auto_vacuum it was made with (a change would rewrite
 * it whole); FULL, which the store never makes, is fixed to the setting. */
START_TEST(auto_vacuum_kept)
{
	struct store_opts o;
	struct store *s;

	store_opts_default(&o);
	o.vacuum = STORE_VACUUM_INCREMENTAL;
	s = sf_open_opts(&o);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"), 2);
	sf_put(s, sf_full_window(1, T0, 3, 2));
	store_close(s);
	s = sf_open_default(); /* store_vacuum none */
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"), 2);
	ck_assert_int_eq(store_exec(s, "PRAGMA auto_vacuum = FULL", NULL, 0),
	    0);
	ck_assert_int_eq(store_exec(s, "VACUUM", NULL, 0), 0);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"), 1);
	store_close(s);
	s = sf_open_default();
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"), 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 1);
	store_close(s);
}
END_TEST

START_TEST(schema_created)
{
	struct store *s = sf_open_default();
	struct store_stats st;

	ck_assert_int_eq(sf_q_int(s, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA application_id"),
	    STORE_APPLICATION_ID);
	ck_assert_int_eq(sf_q_int(s, "PRAGMA auto_vacuum"),
	    0); /* none (store_vacuum): no pointer-map pages */
	ck_assert_int_eq(sf_q_int(s, "PRAGMA foreign_keys"), 1);
	/* FULL: an acknowledged commit survives a power cut */
	ck_assert_int_eq(sf_q_int(s, "PRAGMA synchronous"), 2);
	{
		char mode[16];

		ck_assert_int_eq(store_exec(s, "PRAGMA journal_mode", mode,
				     sizeof(mode)),
		    0);
		ck_assert_str_eq(mode, "wal");
	}
	ck_assert_int_eq(
	    sf_q_int(s,
		"SELECT count(*) FROM sqlite_schema WHERE"
		" type = 'table' AND name IN ('windows', 'window_parts',"
		" 'window_key', 'window_tasks', 'instance',"
		" 'window_task_ident')"),
	    6);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM sqlite_schema WHERE"
			     " type = 'index' AND name = 'windows_wall'"),
	    1);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_uint_gt(st.db_bytes, 0);
	store_close(s);
	ck_assert_ptr_null(store_close(NULL));
}
END_TEST

START_TEST(opts_defaults)
{
	struct store_opts o;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	ck_assert_int_eq(o.rollup1_after_s, 6 * 3600);
	ck_assert_uint_eq(o.rollup1_s, 60);
	ck_assert_int_eq(o.rollup2_after_s, 24 * 3600);
	ck_assert_uint_eq(o.rollup2_s, 600);
	ck_assert_int_eq(o.retain_s, 7 * 24 * 3600);
	ck_assert_uint_eq(o.max_bytes, 32u << 20);
	ck_assert_int_eq(o.busy_timeout_ms, 2000);
	ck_assert_str_eq(store_state_name(STORE_OK), "ok");
	ck_assert_str_eq(store_state_name(STORE_FULL), "full");
	ck_assert_str_eq(store_state_name(STORE_IO_ERROR), "io_error");
	ck_assert_str_eq(store_state_name(STORE_CLOSED), "closed");
}
END_TEST

/* ------------------------------------------------------------- round trip */

START_TEST(round_trip_every_field)
{
	struct store *s = sf_open_default();
	struct window *w = sf_full_window(42, T0, 60, 40);
	struct window **v;
	size_t n;

	ck_assert_int_eq(store_put(s, w), 0);
	store_close(s);
	s = sf_open_default(); /* through the file, not a cache */
	ck_assert_int_eq(store_windows(s, T0, T0 + 10 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	sf_eq_window(w, v[0]);
	/* the store keeps thread names as NULL when they equal comm */
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM instance"
			     " WHERE thread = 1 AND name IS NULL"),
	    40);
	/* the offline CPU without data is not stored but reads back
	 * unknown */
	ck_assert_int_eq(v[0]->cpu[2].max_khz, -1);
	sf_free_windows(v, n);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(round_trip_empty_window)
{
	struct store *s = sf_open_default();
	struct window *w = sf_mkwin(1, T0);
	struct window **v;
	size_t n;

	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 1, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	sf_eq_window(w, v[0]);
	/* no counter, gauge or BPF row: no kv or BPF blob; the aggregate
	 * CPU line is always there */
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM window_parts WHERE kv IS"
			     " NULL AND bpf IS NULL AND sys IS NOT NULL"),
	    1);
	sf_free_windows(v, n);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(duplicate_put_idempotent)
{
	struct store *s = sf_open_default();
	struct window *w = sf_full_window(5, T0, 20, 5), *o;
	struct store_stats st;

	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 1);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM window_tasks"), 1);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM instance"), 25);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_written, 1);
	ck_assert_uint_eq(st.write_failures, 0);
	/* same start in another boot is another window */
	o = sf_full_window(5, T0 + 3600 * SEC, 1, 0);
	snprintf(o->boot_id, sizeof(o->boot_id), "another-boot");
	ck_assert_int_eq(store_put(s, o), 0);
	ck_assert_int_eq(sf_q_int(s, "SELECT count(*) FROM windows"), 2);
	window_free(o);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(reopen_keeps_data)
{
	struct store *s = sf_open_default();
	struct window **v;
	size_t n;
	int i;

	for (i = 0; i < 5; i++)
		sf_put(s, sf_full_window(i, T0 + i * 10 * SEC, 3, 1));
	store_close(s);
	s = sf_open_default();
	ck_assert_int_eq(store_windows(s, T0, T0 + 3600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(v[0]->seq, 0);
	ck_assert_uint_eq(v[4]->seq, 4);
	ck_assert_uint_eq(v[4]->nprocs, 3);
	sf_free_windows(v, n);
	/* after close, no WAL is left behind */
	store_close(s);
	{
		char wal[PATH_MAX + 8];

		snprintf(wal, sizeof(wal), "%s-wal", sf_path);
		ck_assert(!sf_exists(wal));
	}
}
END_TEST

/* -------------------------------------------------------------- migration */

/* Rows as the first schema wrote them, in its own column set. */
static const char v1_rows[] =
    "INSERT INTO windows (id, level, boot_id, seq, mono_start_ns,"
    " mono_end_ns, boot_start_ns, boot_end_ns, wall_start_ns, wall_end_ns,"
    " duration_ns, hz, interval_ms, cpu_span, samples, samples_valid,"
    " d_ctxt, d_processes, vm_samples, self_utime_us, self_stime_us,"
    " sample_ns_sum, sample_ns_max, late_ticks, burst_samples,"
    " procs_scanned, threads_scanned, procs_exited, threads_exited,"
    " cpu_dropped) VALUES (1, 0, 'b1', 9, 90000000000, 100000000000,"
    " 90000000007, 100000000007, 1699999800000000000,"
    " 1699999810000000000, 10000000000, 100, 1000, 1, 10, 9, 5555, 3, 9,"
    " 111, 22, 3000000, 400000, 1, 0, 321, 1234, 2, 5, 0);"
    "INSERT INTO window_cpu (window_id, cpu, user, nice, system, idle,"
    " iowait, irq, softirq, steal, guest, guest_nice, samples, wall_ns,"
    " online_end, khz_n, max_khz, capacity, ratio_n) VALUES"
    " (1, -1, 10, 0, 5, 85, 0, 0, 0, 0, 0, 0, 9, 9000000000, 0, 0, NULL,"
    " NULL, 0),"
    " (1, 0, 10, 0, 5, 85, 0, 0, 0, 0, 0, 0, 9, 9000000000, 1, 0, 1800000,"
    " 1024, 0);"
    "INSERT INTO window_count VALUES (1, 'inv_sample', 'slept', 1),"
    " (1, 'vmstat', 'pgfault', 4242);"
    "INSERT INTO window_gauge VALUES (1, 'sys', 'load1', 2, 0.5, 1.5,"
    " 2.0, 1.5), (1, 'meminfo', 'MemFree', 1, 100, 100, 100, 100);"
    "INSERT INTO window_task VALUES (1, 0, 1234, 777, 1234, 10001,"
    " 'surfaceflinger', NULL, 50, 20, 100, 1, 9, 9000000000, 900, 112.5,"
    " 3000, 2900, 0, 0);";

START_TEST(migrate_from_v1)
{
	struct store *s;
	struct window **v, *w;
	struct window_task *t;
	size_t n;

	ck_assert_int_eq(store_create_version(sf_path, 1, v1_rows), 0);
	s = sf_open_default();
	ck_assert_int_eq(sf_q_int(s, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM sqlite_schema WHERE"
			     " name = 'windows_wall'"),
	    1);
	/* the added health columns say "not recorded", not "ok" */
	ck_assert_int_eq(sf_q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE store_state IS NULL"),
	    1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 10 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	w = v[0];
	ck_assert_uint_eq(w->seq, 9);
	ck_assert_str_eq(w->boot_id, "b1");
	ck_assert_int_eq(w->mono_start_ns, 90 * SEC);
	ck_assert_uint_eq(w->cpu_span, 1);
	ck_assert_uint_eq(w->all.d.idle, 85);
	ck_assert_int_eq(w->cpu[0].max_khz, 1800000);
	ck_assert_int_eq(w->all.max_khz, -1);
	ck_assert_uint_eq(w->d_ctxt, 5555);
	ck_assert_uint_eq(w->inv_samples[INV_SLEPT], 1);
	ck_assert_uint_eq(w->d_vm[VM_PGFAULT], 4242);
	ck_assert_uint_eq(w->vm_have, 1u << VM_PGFAULT);
	ck_assert_uint_eq(w->load1.n, 2);
	ck_assert_double_eq(w->load1.max, 1.5);
	ck_assert_uint_eq(w->mem_have, 1u << MI_MEMFREE);
	ck_assert_uint_eq(w->health.procs_scanned, 321);
	ck_assert_uint_eq(w->health.store_state, 0);
	ck_assert_uint_eq(w->nprocs, 1);
	ck_assert_str_eq(window_task_name(&w->procs[0]), "surfaceflinger");
	ck_assert_uint_eq(w->procs[0].d_utime, 50);
	ck_assert(w->procs[0].norm_ticks == 112.5);
	sf_free_windows(v, n);
	/* and the migrated file takes new windows */
	sf_put(s, sf_full_window(100, T0 + 60 * SEC, 2, 0));
	ck_assert_int_eq(store_top(s, T0, T0 + 3600 * SEC, false, METRIC_CPU, 1,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(t[0].id, 1234);
	free(t);
	store_close(s);
}
END_TEST

START_TEST(create_version_rejects)
{
	ck_assert_int_eq(store_create_version(sf_path, 0, NULL), -EINVAL);
	ck_assert_int_eq(store_create_version(sf_path, STORE_SCHEMA_VERSION + 1,
			     NULL),
	    -EINVAL);
	ck_assert_int_eq(store_create_version(sf_path, 1, NULL), 0);
	ck_assert_int_eq(store_create_version(sf_path, 1, NULL), -EEXIST);
}
END_TEST

/* ----------------------------------------------------------------- reads */

static void
put_top_fixture(struct store *s)
{
	struct window *w;
	struct window_task t;

	/* window 1: pid 10 busy, pid 20 faulting, pid 30 big */
	w = sf_mkwin(1, T0);
	t = sf_mktask(10, 100, 50, 10);
	t.d_minflt = 5;
	t.d_majflt = 0;
	t.rss_pages_max = 100;
	sf_add_task(w, false, t);
	t = sf_mktask(20, 200, 1, 1);
	t.d_minflt = 9000;
	t.d_majflt = 40;
	t.rss_pages_max = 200;
	sf_add_task(w, false, t);
	t = sf_mktask(30, 300, 3, 0);
	t.d_minflt = 10;
	t.d_majflt = 1;
	t.rss_pages_max = 90000;
	sf_add_task(w, false, t);
	sf_add_task(w, true, sf_mktask(11, 100, 40, 0));
	sf_put(s, w);
	/* window 2: pid 10 again, pid 20 reused by a new instance */
	w = sf_mkwin(2, T0 + 10 * SEC);
	t = sf_mktask(10, 100, 30, 5);
	t.d_minflt = 6;
	t.d_majflt = 0;
	t.rss_pages_max = 150;
	t.rss_pages_last = 140;
	window_task_set_namef(&t, "renamed.by.exec");
	sf_add_task(w, false, t);
	t = sf_mktask(20, 999, 20, 20);
	t.d_minflt = 1;
	t.d_majflt = 50;
	t.rss_pages_max = 10;
	t.born = true;
	sf_add_task(w, false, t);
	sf_add_task(w, true, sf_mktask(12, 100, 1, 0));
	sf_put(s, w);
	/* window 3, outside the queried range */
	w = sf_mkwin(3, T0 + 3600 * SEC);
	t = sf_mktask(30, 300, 10000, 0);
	sf_add_task(w, false, t);
	sf_put(s, w);
}

START_TEST(top_n_each_metric)
{
	struct store *s = sf_open_default();
	struct window_task *t;
	size_t n;

	put_top_fixture(s);
	ck_assert_int_eq(store_top(s, T0, T0 + 20 * SEC, false, METRIC_CPU, 10,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(t[0].id, 10);
	ck_assert_uint_eq(t[0].d_utime, 80);
	ck_assert_uint_eq(t[0].d_stime, 15);
	ck_assert_uint_eq(t[0].samples, 20);
	ck_assert_uint_eq(t[0].wall_ns, 20 * SEC);
	ck_assert_uint_eq(t[0].total_ticks, 16000);
	ck_assert(t[0].norm_ticks == 2000.5);
	ck_assert_str_eq(window_task_name(&t[0]),
	    "renamed.by.exec"); /* latest window */
	ck_assert_uint_eq(t[0].rss_pages_max, 150);
	ck_assert_uint_eq(t[0].rss_pages_last, 140);
	/* pid 20's two instances stay apart */
	ck_assert_int_eq(t[1].id, 20);
	ck_assert_uint_eq(t[1].starttime, 999);
	ck_assert(t[1].born);
	ck_assert_int_eq(t[2].id, 30);
	ck_assert_int_eq(t[3].id, 20);
	ck_assert_uint_eq(t[3].starttime, 200);
	ck_assert(!t[3].born);
	free(t);

	ck_assert_int_eq(store_top(s, T0, T0 + 20 * SEC, false, METRIC_MINFLT,
			     2, &t, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(t[0].id, 20);
	ck_assert_uint_eq(t[0].d_minflt, 9000);
	ck_assert_int_eq(t[1].id, 10);
	ck_assert_uint_eq(t[1].d_minflt, 11);
	free(t);

	ck_assert_int_eq(store_top(s, T0, T0 + 20 * SEC, false, METRIC_MAJFLT,
			     1, &t, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(t[0].id, 20);
	ck_assert_uint_eq(t[0].starttime, 999);
	ck_assert_uint_eq(t[0].d_majflt, 50);
	free(t);

	ck_assert_int_eq(store_top(s, T0, T0 + 20 * SEC, false, METRIC_RSS, 1,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(t[0].id, 30);
	ck_assert_uint_eq(t[0].rss_pages_max, 90000);
	free(t);

	/* threads are their own list */
	ck_assert_int_eq(store_top(s, T0, T0 + 20 * SEC, true, METRIC_CPU, 10,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(t[0].id, 11);
	ck_assert_int_eq(t[1].id, 12);
	free(t);

	/* the whole hour brings in window 3: pid 30 leads */
	ck_assert_int_eq(store_top(s, T0, T0 + 3601 * SEC, false, METRIC_CPU, 0,
			     &t, &n),
	    0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(t[0].id, 30);
	ck_assert_uint_eq(t[0].d_utime, 10003);
	free(t);

	/* empty range, bad metric */
	ck_assert_int_eq(store_top(s, T0 + 100 * SEC, T0 + 200 * SEC, false,
			     METRIC_CPU, 5, &t, &n),
	    0);
	ck_assert_uint_eq(n, 0);
	free(t);
	ck_assert_int_eq(store_top(s, T0, T0 + SEC, false, (enum store_metric)9,
			     5, &t, &n),
	    -EINVAL);
	store_close(s);
}
END_TEST

START_TEST(process_history)
{
	struct store *s = sf_open_default();
	struct window_task *t;
	struct store_hist *h;
	size_t n;

	put_top_fixture(s);
	ck_assert_int_eq(store_process(s, 10, 0, T0, T0 + 7200 * SEC, &t, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(t[0].d_utime, 50);
	ck_assert_uint_eq(t[1].d_utime, 30);
	ck_assert_str_eq(window_task_name(&t[1]), "renamed.by.exec");
	free(t);
	/* all instances of pid 20, in time order; then just one */
	ck_assert_int_eq(store_process(s, 20, 0, T0, T0 + 7200 * SEC, &t, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(t[0].starttime, 200);
	ck_assert_uint_eq(t[1].starttime, 999);
	free(t);
	ck_assert_int_eq(store_process(s, 20, 999, T0, T0 + 7200 * SEC, &t, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(t[0].d_majflt, 50);
	free(t);
	/* a thread id is not a process */
	ck_assert_int_eq(store_process(s, 11, 0, T0, T0 + 7200 * SEC, &t, &n),
	    0);
	ck_assert_uint_eq(n, 0);
	free(t);
	/* history carries each row's window */
	ck_assert_int_eq(store_history(s, false, 30, 300, T0, T0 + 7200 * SEC,
			     &h, &n),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(h[0].wall_start_ns, T0);
	ck_assert_int_eq(h[1].wall_start_ns, T0 + 3600 * SEC);
	ck_assert_int_eq(h[1].wall_end_ns, T0 + 3610 * SEC);
	ck_assert_uint_eq(h[1].hz, 100);
	ck_assert_uint_eq(h[1].level, 0);
	ck_assert_uint_eq(h[1].t.d_utime, 10000);
	free(h);
	ck_assert_int_eq(store_history(s, true, 12, 100, T0, T0 + 7200 * SEC,
			     &h, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(h[0].t.id, 12);
	free(h);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------- commit time */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The load: 500 processes of which 50 active (a window keeps only
 * active instances), 100 active threads. Reports median and p99 of
 * store_put, printed for the benchmark notes; asserts only sanity.
 */
START_TEST(commit_time_500_procs_50_active)
{
	enum { N = 300 };
	struct store *s = sf_open_default();
	struct store_stats st;
	uint64_t ns[N];
	unsigned k;

	for (k = 0; k < N; k++) {
		struct window *w = sf_full_window(k, T0 + k * 10 * SEC, 50,
		    100);

		w->health.procs_scanned = 500;
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
		store_get_stats(s, &st);
		ns[k] = st.commit_ns_last;
	}
	qsort(ns, N, sizeof(ns[0]), cmp_u64);
	fprintf(stderr,
	    "store_put, 50 procs + 100 threads active: median "
	    "%.3f ms, p99 %.3f ms, max %.3f ms; %.1f KiB per window\n",
	    ns[N / 2] / 1e6, ns[N * 99 / 100] / 1e6, st.commit_ns_max / 1e6,
	    st.db_bytes / 1024.0 / N);
	ck_assert_uint_lt(ns[N / 2], NSEC_PER_SEC);
	store_close(s);
}
END_TEST

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc;

	tc = tcase_create("schema");
	tcase_add_checked_fixture(tc, sf_setup, sf_teardown);
	tcase_add_test(tc, schema_created);
	tcase_add_test(tc, auto_vacuum_kept);
	tcase_add_test(tc, opts_defaults);
	tcase_add_test(tc, round_trip_every_field);
	tcase_add_test(tc, round_trip_empty_window);
	tcase_add_test(tc, duplicate_put_idempotent);
	tcase_add_test(tc, reopen_keeps_data);
	tcase_add_test(tc, migrate_from_v1);
	tcase_add_test(tc, create_version_rejects);
	suite_add_tcase(s, tc);

	tc = tcase_create("reads");
	tcase_add_checked_fixture(tc, sf_setup, sf_teardown);
	tcase_add_test(tc, top_n_each_metric);
	tcase_add_test(tc, process_history);
	suite_add_tcase(s, tc);

	tc = tcase_create("bench");
	tcase_add_checked_fixture(tc, sf_setup, sf_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, commit_time_500_procs_50_active);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(store_suite());
}
