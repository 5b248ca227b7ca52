/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the window store (store.c, store_maint.c, store_read.c):
 * schema and migration, field-by-field round trips, idempotent replays,
 * roll-ups, retention by age and by size, top-N and history reads, the
 * handling of corrupt, truncated and foreign files, and the mapping of
 * SQLite's failures (full, busy) to -errno and store states.
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

#include "testutil.h"
#include "vitalsd.h"

/* A wall-clock origin aligned on 600 s, so roll-up buckets are exact. */
#define T0 (1699999800LL * NSEC_PER_SEC)
#define SEC NSEC_PER_SEC

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("store", path, sizeof(path));
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

/* ---------------------------------------------------------------- helpers */

static struct store *
open_opts(const struct store_opts *o)
{
	struct store *s = NULL;
	int r = store_open(path, o, &s);

	ck_assert_msg(r == 0, "store_open: %d", r);
	ck_assert_ptr_nonnull(s);
	return s;
}

static struct store *
open_default(void)
{
	struct store_opts o;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	return open_opts(&o);
}

static long long
q_int(struct store *s, const char *sql)
{
	char buf[64];
	int r = store_exec(s, sql, buf, sizeof(buf));

	ck_assert_msg(r == 0, "%s: %d", sql, r);
	return strtoll(buf, NULL, 10);
}

static uint64_t
fsize(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static bool
exists(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0;
}

static struct window_task
mktask(int32_t id, uint64_t starttime, uint64_t ut, uint64_t st)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.tgid = id;
	t.starttime = starttime;
	t.uid = 10000 + (uint32_t)id;
	snprintf(t.comm, sizeof(t.comm), "c%d", id);
	window_task_set_namef(&t, "com.example.app%d", id);
	t.d_utime = ut;
	t.d_stime = st;
	t.d_minflt = 3 * ut;
	t.d_majflt = st / 2;
	t.samples = 10;
	t.wall_ns = 10 * SEC;
	t.total_ticks = 8000;
	t.norm_ticks = 1000.25;
	t.rss_pages_max = 1000 + (uint64_t)id;
	t.rss_pages_last = 900 + (uint64_t)id;
	return t;
}

/* A 10 s level-0 window; seq fixes its monotonic place in the boot. */
static struct window *
mkwin(uint64_t seq, int64_t wall_start_ns)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id),
	    "8c1e7a6c-3f9b-4c2e-9a47-0d5f1e2b3c4d");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns + 7;
	w->boot_end_ns = w->mono_end_ns + 7;
	w->wall_start_ns = wall_start_ns;
	w->wall_end_ns = wall_start_ns + 10 * SEC;
	w->samples = 10;
	w->samples_valid = 10;
	return w;
}

static void
add_task(struct window *w, bool thread, struct window_task t)
{
	ck_assert_int_eq(window_add_task(w, thread, &t), 0);
}

/* Every field set, every storage rule exercised. */
static struct window *
full_window(uint64_t seq, int64_t wall, unsigned nprocs, unsigned nthreads)
{
	struct window *w = mkwin(seq, wall);
	unsigned i;

	w->interval_ms = 250;
	w->samples = 41;
	w->samples_valid = 37;
	for (i = 0; i < INV__MAX; i++) {
		w->inv_samples[i] = i + 1;
		w->inv_deltas[i] = 10 * i + 3;
	}
	w->all.d = (struct cpu_times){ 101, 102, 103, 104, 105, 106, 107, 108,
		109, 110 };
	w->all.samples = 37;
	w->all.wall_ns = 9999999937;
	ck_assert_int_eq(window_grow_cpus(w, 4), 0);
	for (i = 0; i < 4; i++) {
		struct window_cpu *c = &w->cpu[i];

		if (i == 2)
			continue; /* offline and unknown: not stored */
		c->d = (struct cpu_times){ i, 2 * i, 3, 4, 5, 6, 7, 8, 0, 1 };
		c->samples = 30 + i;
		c->wall_ns = 3 * SEC + i;
		c->online_end = i != 3;
		if (i != 1) {
			gauge_add(&c->cur_khz, 300000.0 + i);
			gauge_add(&c->cur_khz, 1800000.0);
			c->max_khz = 2000000;
			gauge_add(&c->freq_ratio, (300000.0 + i) / 2e6);
			gauge_add(&c->freq_ratio, 0.9);
		}
		c->capacity = i == 3 ? -1 : 1024 - (int32_t)i;
	}
	gauge_add(&w->online_cpus, 3);
	gauge_add(&w->online_cpus, 2);
	w->d_ctxt = 123456789;
	w->d_processes = 77;
	gauge_add(&w->procs_running, 2);
	gauge_add(&w->procs_running, 7);
	gauge_add(&w->procs_blocked, 0);
	gauge_add(&w->load1, 0.27);
	gauge_add(&w->load5, 0.13);
	gauge_add(&w->load15, 0.05);
	gauge_add(&w->load_runnable, 1);
	gauge_add(&w->load_threads, 1234);
	w->psi[PSI_CPU].available = true;
	w->psi[PSI_CPU].samples = 36;
	w->psi[PSI_CPU].d_some_us = 12345;
	gauge_add(&w->psi[PSI_CPU].some_avg10, 1.5);
	w->psi[PSI_MEMORY].available = true;
	w->psi[PSI_MEMORY].have_full = true;
	w->psi[PSI_MEMORY].samples = 36;
	w->psi[PSI_MEMORY].d_some_us = 500;
	w->psi[PSI_MEMORY].d_full_us = 200;
	gauge_add(&w->psi[PSI_MEMORY].some_avg10, 0.25);
	gauge_add(&w->psi[PSI_MEMORY].full_avg10, 0.125);
	/* PSI_IO unavailable: nothing stored, nothing invented */
	for (i = 0; i < VM__MAX; i++)
		if (i != VM_OOM_KILL)
			w->vm_have |= 1u << i;
	w->d_vm[VM_PGFAULT] = 0xfffffffffffffff0ULL; /* above INT64_MAX */
	w->d_vm[VM_PGMAJFAULT] = 12;
	w->d_vm[VM_PSWPIN] = 0; /* present, zero: still a row */
	w->vm_samples = 36;
	for (i = 0; i < MI__MAX; i++) {
		if (i == MI_SWAPCACHED)
			continue;
		w->mem_have |= 1u << i;
		gauge_add(&w->mem_kb[i], 1000.0 * (i + 1));
		gauge_add(&w->mem_kb[i], 1000.0 * (i + 1) + 4);
	}
	for (i = 0; i < nprocs; i++) {
		struct window_task t = mktask(100 + (int32_t)i, 5000 + i, i % 7,
		    i % 3);

		t.born = i % 5 == 0;
		t.exited = i % 11 == 0;
		t.rss_pages_max = (uint64_t)1 << 40;
		add_task(w, false, t);
	}
	for (i = 0; i < nthreads; i++) {
		struct window_task t = mktask(100000 + (int32_t)i, 6000 + i,
		    i % 4, 1);

		t.tgid = 100 + (int32_t)(i % 10);
		window_task_set_name(&t, t.comm); /* stored as NULL */
		add_task(w, true, t);
	}
	w->health.self_utime_us = 1234;
	w->health.self_stime_us = 567;
	for (i = 0; i < COLL__MAX; i++) {
		w->health.coll_ns_sum[i] = 100000 * (i + 1);
		w->health.coll_ns_max[i] = 20000 * (i + 1);
	}
	w->health.sample_ns_sum = 5000000;
	w->health.sample_ns_max = 900000;
	w->health.late_ticks = 2;
	w->health.burst_samples = 30;
	w->health.procs_scanned = 512;
	w->health.threads_scanned = 4096;
	w->health.procs_exited = 3;
	w->health.threads_exited = 17;
	w->health.cpu_dropped = 1;
	w->health.store_state = STORE_FULL;
	w->health.store_queued = 4;
	w->health.store_dropped = 9;
	return w;
}

static void
eq_gauge(const struct gauge *a, const struct gauge *b, const char *what)
{
	ck_assert_msg(a->n == b->n, "%s.n %u != %u", what, a->n, b->n);
	ck_assert_msg(a->min == b->min, "%s.min", what);
	ck_assert_msg(a->max == b->max, "%s.max", what);
	ck_assert_msg(a->sum == b->sum, "%s.sum", what);
	ck_assert_msg(a->last == b->last, "%s.last", what);
}

static void
eq_cpu(const struct window_cpu *a, const struct window_cpu *b, int cpu)
{
	char what[32];

	snprintf(what, sizeof(what), "cpu%d", cpu);
	ck_assert_msg(memcmp(&a->d, &b->d, sizeof(a->d)) == 0, "%s.d", what);
	ck_assert_msg(a->samples == b->samples, "%s.samples", what);
	ck_assert_msg(a->wall_ns == b->wall_ns, "%s.wall_ns", what);
	ck_assert_msg(a->online_end == b->online_end, "%s.online", what);
	eq_gauge(&a->cur_khz, &b->cur_khz, what);
	ck_assert_msg(a->max_khz == b->max_khz, "%s.max_khz", what);
	ck_assert_msg(a->capacity == b->capacity, "%s.capacity", what);
	eq_gauge(&a->freq_ratio, &b->freq_ratio, what);
}

static const struct window_task *
find_task(const struct window *w, bool thread, int32_t id, uint64_t st)
{
	const struct window_task *arr = thread ? w->threads : w->procs;
	size_t n = thread ? w->nthreads : w->nprocs, i;

	for (i = 0; i < n; i++)
		if (arr[i].id == id && arr[i].starttime == st)
			return &arr[i];
	return NULL;
}

static void
eq_tasks(const struct window *a, const struct window *b, bool thread)
{
	const struct window_task *arr = thread ? a->threads : a->procs;
	size_t n = thread ? a->nthreads : a->nprocs, i;

	ck_assert_uint_eq(n, thread ? b->nthreads : b->nprocs);
	for (i = 0; i < n; i++) {
		const struct window_task *o = find_task(b, thread, arr[i].id,
		    arr[i].starttime);

		ck_assert_msg(o != NULL, "task %d missing", arr[i].id);
		tu_task_eq(&arr[i], o);
	}
}

/* Field by field, so a failure names the field. */
static void
eq_window(const struct window *a, const struct window *b)
{
	const struct window_health *x = &a->health, *y = &b->health;
	char what[32];
	unsigned i;

	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_str_eq(a->boot_id, b->boot_id);
	ck_assert_uint_eq(a->level, b->level);
	ck_assert_int_eq(a->mono_start_ns, b->mono_start_ns);
	ck_assert_int_eq(a->mono_end_ns, b->mono_end_ns);
	ck_assert_int_eq(a->boot_start_ns, b->boot_start_ns);
	ck_assert_int_eq(a->boot_end_ns, b->boot_end_ns);
	ck_assert_int_eq(a->wall_start_ns, b->wall_start_ns);
	ck_assert_int_eq(a->wall_end_ns, b->wall_end_ns);
	ck_assert_uint_eq(a->hz, b->hz);
	ck_assert_uint_eq(a->interval_ms, b->interval_ms);
	ck_assert_uint_eq(a->samples, b->samples);
	ck_assert_uint_eq(a->samples_valid, b->samples_valid);
	for (i = 0; i < INV__MAX; i++) {
		ck_assert_uint_eq(a->inv_samples[i], b->inv_samples[i]);
		ck_assert_uint_eq(a->inv_deltas[i], b->inv_deltas[i]);
	}
	eq_cpu(&a->all, &b->all, -1);
	ck_assert_uint_eq(a->cpu_span, b->cpu_span);
	for (i = 0; i < a->cpu_span; i++)
		eq_cpu(&a->cpu[i], &b->cpu[i], (int)i);
	eq_gauge(&a->online_cpus, &b->online_cpus, "online_cpus");
	ck_assert_uint_eq(a->d_ctxt, b->d_ctxt);
	ck_assert_uint_eq(a->d_processes, b->d_processes);
	eq_gauge(&a->procs_running, &b->procs_running, "procs_running");
	eq_gauge(&a->procs_blocked, &b->procs_blocked, "procs_blocked");
	eq_gauge(&a->load1, &b->load1, "load1");
	eq_gauge(&a->load5, &b->load5, "load5");
	eq_gauge(&a->load15, &b->load15, "load15");
	eq_gauge(&a->load_runnable, &b->load_runnable, "load_runnable");
	eq_gauge(&a->load_threads, &b->load_threads, "load_threads");
	for (i = 0; i < PSI__MAX; i++) {
		const struct window_psi *p = &a->psi[i], *q = &b->psi[i];

		snprintf(what, sizeof(what), "psi%u", i);
		ck_assert_msg(p->available == q->available, "%s", what);
		ck_assert_msg(p->have_full == q->have_full, "%s", what);
		ck_assert_uint_eq(p->d_some_us, q->d_some_us);
		ck_assert_uint_eq(p->d_full_us, q->d_full_us);
		ck_assert_uint_eq(p->samples, q->samples);
		eq_gauge(&p->some_avg10, &q->some_avg10, what);
		eq_gauge(&p->full_avg10, &q->full_avg10, what);
	}
	for (i = 0; i < VM__MAX; i++)
		ck_assert_uint_eq(a->d_vm[i], b->d_vm[i]);
	ck_assert_uint_eq(a->vm_samples, b->vm_samples);
	ck_assert_uint_eq(a->vm_have, b->vm_have);
	for (i = 0; i < MI__MAX; i++) {
		snprintf(what, sizeof(what), "mem%u", i);
		eq_gauge(&a->mem_kb[i], &b->mem_kb[i], what);
	}
	ck_assert_uint_eq(a->mem_have, b->mem_have);
	eq_tasks(a, b, false);
	eq_tasks(a, b, true);
	ck_assert_uint_eq(x->self_utime_us, y->self_utime_us);
	ck_assert_uint_eq(x->self_stime_us, y->self_stime_us);
	for (i = 0; i < COLL__MAX; i++) {
		ck_assert_uint_eq(x->coll_ns_sum[i], y->coll_ns_sum[i]);
		ck_assert_uint_eq(x->coll_ns_max[i], y->coll_ns_max[i]);
	}
	ck_assert_uint_eq(x->sample_ns_sum, y->sample_ns_sum);
	ck_assert_uint_eq(x->sample_ns_max, y->sample_ns_max);
	ck_assert_uint_eq(x->late_ticks, y->late_ticks);
	ck_assert_uint_eq(x->burst_samples, y->burst_samples);
	ck_assert_uint_eq(x->procs_scanned, y->procs_scanned);
	ck_assert_uint_eq(x->threads_scanned, y->threads_scanned);
	ck_assert_uint_eq(x->procs_exited, y->procs_exited);
	ck_assert_uint_eq(x->threads_exited, y->threads_exited);
	ck_assert_uint_eq(x->cpu_dropped, y->cpu_dropped);
	ck_assert_uint_eq(x->store_state, y->store_state);
	ck_assert_uint_eq(x->store_queued, y->store_queued);
	ck_assert_uint_eq(x->store_dropped, y->store_dropped);
}

static void
free_windows(struct window **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
}

static void
put(struct store *s, struct window *w)
{
	int r = store_put(s, w);

	ck_assert_msg(r == 0, "store_put: %d", r);
	window_free(w);
}

/* ----------------------------------------------------------------- schema */

START_TEST(schema_created)
{
	struct store *s = open_default();
	struct store_stats st;

	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ck_assert_int_eq(q_int(s, "PRAGMA application_id"),
	    STORE_APPLICATION_ID);
	ck_assert_int_eq(q_int(s, "PRAGMA auto_vacuum"), 2); /* incremental */
	ck_assert_int_eq(q_int(s, "PRAGMA foreign_keys"), 1);
	/* FULL: an acknowledged commit survives a power cut */
	ck_assert_int_eq(q_int(s, "PRAGMA synchronous"), 2);
	{
		char mode[16];

		ck_assert_int_eq(store_exec(s, "PRAGMA journal_mode", mode,
				     sizeof(mode)),
		    0);
		ck_assert_str_eq(mode, "wal");
	}
	ck_assert_int_eq(
	    q_int(s,
		"SELECT count(*) FROM sqlite_schema WHERE"
		" type = 'table' AND name IN ('windows', 'window_parts',"
		" 'window_key', 'window_tasks', 'instance',"
		" 'window_task_ident')"),
	    6);
	ck_assert_int_eq(q_int(s,
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
	struct store *s = open_default();
	struct window *w = full_window(42, T0, 60, 40);
	struct window **v;
	size_t n;

	ck_assert_int_eq(store_put(s, w), 0);
	store_close(s);
	s = open_default(); /* through the file, not a cache */
	ck_assert_int_eq(store_windows(s, T0, T0 + 10 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	eq_window(w, v[0]);
	/* the store keeps thread names as NULL when they equal comm */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM instance"
			     " WHERE thread = 1 AND name IS NULL"),
	    40);
	/* the offline CPU without data is not stored but reads back
	 * unknown */
	ck_assert_int_eq(v[0]->cpu[2].max_khz, -1);
	free_windows(v, n);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(round_trip_empty_window)
{
	struct store *s = open_default();
	struct window *w = mkwin(1, T0);
	struct window **v;
	size_t n;

	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 1, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	eq_window(w, v[0]);
	/* no counter, gauge or BPF row: no kv or BPF blob; the aggregate
	 * CPU line is always there */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM window_parts WHERE kv IS"
			     " NULL AND bpf IS NULL AND sys IS NOT NULL"),
	    1);
	free_windows(v, n);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(duplicate_put_idempotent)
{
	struct store *s = open_default();
	struct window *w = full_window(5, T0, 20, 5), *o;
	struct store_stats st;

	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_tasks"), 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM instance"), 25);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_written, 1);
	ck_assert_uint_eq(st.write_failures, 0);
	/* same start in another boot is another window */
	o = full_window(5, T0 + 3600 * SEC, 1, 0);
	snprintf(o->boot_id, sizeof(o->boot_id), "another-boot");
	ck_assert_int_eq(store_put(s, o), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2);
	window_free(o);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(reopen_keeps_data)
{
	struct store *s = open_default();
	struct window **v;
	size_t n;
	int i;

	for (i = 0; i < 5; i++)
		put(s, full_window(i, T0 + i * 10 * SEC, 3, 1));
	store_close(s);
	s = open_default();
	ck_assert_int_eq(store_windows(s, T0, T0 + 3600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(v[0]->seq, 0);
	ck_assert_uint_eq(v[4]->seq, 4);
	ck_assert_uint_eq(v[4]->nprocs, 3);
	free_windows(v, n);
	/* after close, no WAL is left behind */
	store_close(s);
	{
		char wal[PATH_MAX + 8];

		snprintf(wal, sizeof(wal), "%s-wal", path);
		ck_assert(!exists(wal));
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

	ck_assert_int_eq(store_create_version(path, 1, v1_rows), 0);
	s = open_default();
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM sqlite_schema WHERE"
			     " name = 'windows_wall'"),
	    1);
	/* the added health columns say "not recorded", not "ok" */
	ck_assert_int_eq(q_int(s,
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
	free_windows(v, n);
	/* and the migrated file takes new windows */
	put(s, full_window(100, T0 + 60 * SEC, 2, 0));
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
	ck_assert_int_eq(store_create_version(path, 0, NULL), -EINVAL);
	ck_assert_int_eq(store_create_version(path, STORE_SCHEMA_VERSION + 1,
			     NULL),
	    -EINVAL);
	ck_assert_int_eq(store_create_version(path, 1, NULL), 0);
	ck_assert_int_eq(store_create_version(path, 1, NULL), -EEXIST);
}
END_TEST

/* --------------------------------------------------------------- roll-ups */

/* Six 10 s windows per minute with figures that are easy to sum. */
static struct window *
roll_window(unsigned k, int64_t wall)
{
	struct window *w = mkwin(1000 + k, wall);

	w->d_ctxt = 100 + k;
	w->all.d.user = k;
	w->all.d.idle = 1000;
	w->all.samples = 10;
	w->all.wall_ns = 10 * SEC;
	w->inv_samples[INV_SLEPT] = k % 2;
	gauge_add(&w->load1, (double)k);
	gauge_add(&w->mem_kb[MI_MEMFREE], 1000.0 * k);
	w->mem_have = 1u << MI_MEMFREE;
	w->d_vm[VM_PGMAJFAULT] = k;
	w->vm_have = 1u << VM_PGMAJFAULT;
	w->health.sample_ns_max = 1000 * k;
	add_task(w, false, mktask(42, 4200, 1, k));
	if (k % 2)
		add_task(w, false, mktask(43, 4300, 2, 0));
	add_task(w, true, mktask(4242, 4200, 1, 1));
	return w;
}

/* rollup_batch_s: nothing rolls until a window is an hour past its age,
 * then every window of age does, in the same pass, sums intact */
START_TEST(rollup_in_batches)
{
	int64_t t1 = T0 + (6 * 3600 + 1800) * SEC;
	int64_t t2 = T0 + (7 * 3600 + 120) * SEC;
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	struct window **v;
	size_t n;
	unsigned k;

	store_opts_default(&o);
	ck_assert_int_eq(o.rollup_batch_s, 3600);
	s = open_opts(&o);
	for (k = 0; k < 12; k++)
		put(s, roll_window(k, T0 + k * 10 * SEC));
	put(s, roll_window(50, T0 + 2400 * SEC)); /* of age, not yet due */
	put(s, roll_window(99, t2 - 60 * SEC));	  /* too young at t2 */
	/* of age (6 h) but not an hour past it: nothing rolls */
	ck_assert_int_eq(store_maintain(s, t1), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 1"),
	    0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 0);
	/* the first buckets are an hour past: all of age roll at once */
	ck_assert_int_eq(store_maintain(s, t2), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 1"),
	    3);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 0"),
	    1);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 13);
	ck_assert_int_eq(store_windows(s, T0, T0 + 60 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	ck_assert_uint_eq(v[0]->samples, 60);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 6 + 15);
	free_windows(v, n);
	store_close(s);
}
END_TEST

static uint64_t disk_bytes(void);

/* The size bound rolls before it deletes: windows of age but not yet due
 * in their batch roll when the file is near its bound, where the bound
 * would have deleted the oldest of them */
START_TEST(size_bound_rolls_first)
{
	int64_t t1 = T0 + (6 * 3600 + 1800) * SEC;
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	long long used;
	unsigned k;

	store_opts_default(&o);
	ck_assert_int_gt(o.rollup_batch_s, 1800);
	o.max_bytes = 8u << 20;
	s = open_opts(&o);
	for (k = 0; k < 240; k++)
		put(s, roll_window(k, T0 + k * 10 * SEC));
	used = q_int(s,
	    "SELECT (p.page_count - f.freelist_count) * z.page_size FROM "
	    "pragma_page_count p, pragma_freelist_count f, "
	    "pragma_page_size z");
	store_close(s);
	/* the main file's budget (7/8 of max_bytes) 3% under what is
	 * stored: the bound must make room at the next pass */
	o.max_bytes = (uint64_t)used * 97 / 100 * 8 / 7;
	s = open_opts(&o);
	ck_assert_int_eq(store_maintain(s, t1), 0);
	store_get_stats(s, &st);
	ck_assert_uint_gt(st.windows_rolled, 0);
	ck_assert_uint_eq(st.deleted_size, 0);
	/* the oldest window is kept, rolled */
	ck_assert_int_eq(q_int(s, "SELECT min(wall_start_ns) FROM windows"),
	    T0);
	ck_assert_int_eq(q_int(s,
			     "SELECT level FROM windows ORDER BY wall_start_ns "
			     "LIMIT 1"),
	    1);
	store_close(s);
	ck_assert_uint_le(disk_bytes(), o.max_bytes);
}
END_TEST

START_TEST(rollup_through_store)
{
	int64_t now = T0 + 7 * 3600 * SEC;
	struct store *s = open_default();
	struct store_stats st;
	struct window **v, *w;
	const struct window_task *t;
	size_t n;
	unsigned k;

	for (k = 0; k < 12; k++)
		put(s, roll_window(k, T0 + k * 10 * SEC));
	put(s, roll_window(99, now - 60 * SEC)); /* too young to roll */
	ck_assert_int_eq(store_maintain(s, now), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 1"),
	    2);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 0"),
	    1);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 12);
	/* the children of the merged windows went with them */
	ck_assert_int_eq(
	    q_int(s,
		"SELECT count(*) FROM window_tasks t WHERE"
		" NOT EXISTS (SELECT 1 FROM windows w WHERE w.id = t.window_id)"),
	    0);

	ck_assert_int_eq(store_windows(s, T0, T0 + 60 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	w = v[0];
	ck_assert_uint_eq(w->level, 1);
	ck_assert_uint_eq(w->seq, 1000);
	ck_assert_int_eq(w->wall_start_ns, T0);
	ck_assert_int_eq(w->wall_end_ns, T0 + 60 * SEC);
	ck_assert_int_eq(w->mono_start_ns, 1000 * 10 * SEC);
	ck_assert_int_eq(w->mono_end_ns, 1006 * 10 * SEC);
	ck_assert_uint_eq(w->samples, 60);
	ck_assert_uint_eq(w->d_ctxt, 100 * 6 + 15);
	ck_assert_uint_eq(w->all.d.user, 15);
	ck_assert_uint_eq(w->all.d.idle, 6000);
	ck_assert_uint_eq(w->all.wall_ns, 60 * SEC);
	ck_assert_uint_eq(w->inv_samples[INV_SLEPT], 3);
	ck_assert_uint_eq(w->d_vm[VM_PGMAJFAULT], 15);
	ck_assert_uint_eq(w->load1.n, 6);
	ck_assert_double_eq(w->load1.min, 0);
	ck_assert_double_eq(w->load1.max, 5);
	ck_assert_double_eq(gauge_avg(&w->load1), 2.5);
	ck_assert_double_eq(w->load1.last, 5);
	ck_assert_double_eq(w->mem_kb[MI_MEMFREE].max, 5000);
	ck_assert_uint_eq(w->health.sample_ns_max, 5000);
	ck_assert_uint_eq(w->nprocs, 2);
	ck_assert_ptr_nonnull(t = find_task(w, false, 42, 4200));
	ck_assert_uint_eq(t->d_utime, 6);
	ck_assert_uint_eq(t->d_stime, 15);
	ck_assert_uint_eq(t->samples, 60);
	ck_assert_ptr_nonnull(t = find_task(w, false, 43, 4300));
	ck_assert_uint_eq(t->d_utime, 6);
	ck_assert_uint_eq(t->samples, 30);
	ck_assert_ptr_nonnull(t = find_task(w, true, 4242, 4200));
	ck_assert_uint_eq(t->d_stime, 6);
	free_windows(v, n);

	/* a day later both minutes fold into one 10-minute window */
	now = T0 + 25 * 3600 * SEC;
	ck_assert_int_eq(store_maintain(s, now), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 2"),
	    1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	w = v[0];
	ck_assert_uint_eq(w->level, 2);
	ck_assert_uint_eq(w->samples, 120);
	ck_assert_uint_eq(w->d_ctxt, 100 * 12 + 66);
	ck_assert_uint_eq(w->load1.n, 12);
	ck_assert_double_eq(w->load1.min, 0);
	ck_assert_double_eq(w->load1.max, 11);
	ck_assert_double_eq(gauge_avg(&w->load1), 5.5);
	ck_assert_int_eq(w->wall_end_ns, T0 + 120 * SEC);
	ck_assert_ptr_nonnull(t = find_task(w, false, 42, 4200));
	ck_assert_uint_eq(t->d_stime, 66);
	ck_assert_uint_eq(t->samples, 120);
	ck_assert_ptr_nonnull(t = find_task(w, false, 43, 4300));
	ck_assert_uint_eq(t->d_utime, 12);
	ck_assert_uint_eq(t->samples, 60);
	/* level 2 keeps processes only: the thread's figures are in 42's */
	ck_assert_uint_eq(w->nthreads, 0);
	ck_assert_ptr_null(find_task(w, true, 4242, 4200));
	free_windows(v, n);
	ck_assert_int_eq(
	    q_int(s,
		"SELECT count(*) FROM window_tasks t JOIN windows w"
		" ON w.id = t.window_id WHERE w.level = 2 AND"
		" t.threads IS NOT NULL"),
	    0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.windows_rolled, 12 + 2 + 1);

	/* a replay of a window already rolled up is not counted twice */
	{
		struct window *r = roll_window(3, T0 + 30 * SEC);

		ck_assert_int_eq(store_put(s, r), 0);
		window_free(r);
	}
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE wall_start_ns < "
			     "1700000400000000000"),
	    1);
	store_close(s);
}
END_TEST

/* rollup2_threads on: level 2 keeps the thread rows, summed exactly. */
START_TEST(rollup2_keeps_threads_when_asked)
{
	struct store_opts o;
	struct store *s;
	struct window **v;
	const struct window_task *t;
	size_t n;
	unsigned k;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.rollup2_threads = true;
	s = open_opts(&o);
	for (k = 0; k < 12; k++)
		put(s, roll_window(k, T0 + k * 10 * SEC));
	ck_assert_int_eq(store_maintain(s, T0 + 7 * 3600 * SEC), 0);
	ck_assert_int_eq(store_maintain(s, T0 + 25 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 2);
	ck_assert_uint_eq(v[0]->nthreads, 1);
	ck_assert_ptr_nonnull(t = find_task(v[0], true, 4242, 4200));
	ck_assert_uint_eq(t->d_stime, 12);
	ck_assert_uint_eq(t->samples, 120);
	free_windows(v, n);
	store_close(s);
}
END_TEST

/* A window that arrives after its minute was rolled joins that minute. */
START_TEST(rollup_late_arrival_joins_bucket)
{
	int64_t now = T0 + 7 * 3600 * SEC;
	struct store *s = open_default();
	struct window **v;
	size_t n;
	unsigned k;

	for (k = 0; k < 3; k++)
		put(s, roll_window(k, T0 + k * 10 * SEC));
	ck_assert_int_eq(store_maintain(s, now), 0);
	put(s, roll_window(4, T0 + 40 * SEC)); /* not covered: new data */
	ck_assert_int_eq(store_maintain(s, now), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 60 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 + 101 + 102 + 104);
	ck_assert_uint_eq(v[0]->load1.n, 4);
	free_windows(v, n);
	store_close(s);
}
END_TEST

/*
 * Windows sampled in a burst stay at full resolution (level 0) for
 * burst_keep_s, while their neighbours roll up; then they join their
 * buckets' windows as late arrivals, and the sums are whole. With 0 they
 * roll as any other.
 */
START_TEST(rollup_keeps_burst_windows)
{
	struct store_opts o;
	struct store *s;
	struct window **v, *w;
	size_t n;
	unsigned k;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	ck_assert_int_eq(o.burst_keep_s, 24 * 3600);
	s = open_opts(&o);
	for (k = 0; k < 12; k++) {
		w = roll_window(k, T0 + k * 10 * SEC);
		if (k == 3 || k == 8)
			w->health.burst_samples = 5;
		put(s, w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 7 * 3600 * SEC), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows WHERE level = 0"
			     " AND burst_samples = 5"),
	    2);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 1"),
	    2);
	ck_assert_int_eq(q_int(s,
			     "SELECT d_ctxt FROM windows WHERE level = 1"
			     " ORDER BY wall_start_ns LIMIT 1"),
	    100 * 5 + 0 + 1 + 2 + 4 + 5);
	/* a day on: they roll too, level 1 then level 2, nothing lost */
	ck_assert_int_eq(store_maintain(s, T0 + 25 * 3600 * SEC), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	ck_assert_int_eq(store_windows(s, T0, T0 + 600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 2);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 12 + 66);
	ck_assert_uint_eq(v[0]->samples, 120);
	ck_assert_uint_eq(v[0]->health.burst_samples, 10);
	free_windows(v, n);
	store_close(s);

	/* burst_keep_s 0: no exception (a new database) */
	teardown();
	setup();
	o.burst_keep_s = 0;
	s = open_opts(&o);
	for (k = 0; k < 12; k++) {
		w = roll_window(k, T0 + k * 10 * SEC);
		w->health.burst_samples = k == 3 ? 5 : 0;
		put(s, w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 7 * 3600 * SEC), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM windows"
			     " WHERE level = 0"),
	    0);
	store_close(s);
}
END_TEST

START_TEST(windows_at_granularity)
{
	struct store *s = open_default();
	struct window **v;
	size_t n;
	unsigned k;

	for (k = 0; k < 12; k++)
		put(s, roll_window(k, T0 + k * 10 * SEC));
	ck_assert_int_eq(store_windows(s, T0, T0 + 120 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 12);
	free_windows(v, n);
	ck_assert_int_eq(store_windows(s, T0, T0 + 120 * SEC, 60, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0]->d_ctxt, 615);
	ck_assert_uint_eq(v[1]->d_ctxt, 100 * 6 + 6 + 7 + 8 + 9 + 10 + 11);
	ck_assert_uint_eq(v[1]->load1.n, 6);
	ck_assert_double_eq(v[1]->load1.min, 6);
	free_windows(v, n);
	/* a range that cuts windows takes every window it overlaps */
	ck_assert_int_eq(store_windows(s, T0 + 15 * SEC, T0 + 21 * SEC, 0, &v,
			     &n),
	    0);
	ck_assert_uint_eq(n, 2);
	free_windows(v, n);
	ck_assert_int_eq(store_windows(s, T0 + 500 * SEC, T0 + 600 * SEC, 0, &v,
			     &n),
	    0);
	ck_assert_uint_eq(n, 0);
	free(v);
	ck_assert_int_eq(store_windows(s, T0, T0, 0, &v, &n), -EINVAL);
	store_close(s);
}
END_TEST

/* A capped read loads only the newest windows (buckets), oldest first. */
START_TEST(windows_newest_max)
{
	struct store *s = open_default();
	struct window **v;
	bool trunc;
	size_t n;
	unsigned k;

	for (k = 0; k < 12; k++)
		put(s, roll_window(k, T0 + k * 10 * SEC));
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 3, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert(trunc);
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(v[k]->wall_start_ns, T0 + (9 + k) * 10 * SEC);
		ck_assert_uint_eq(v[k]->d_ctxt, 100 + 9 + k);
		ck_assert_uint_eq(v[k]->nprocs, (9 + k) % 2 ? 2 : 1);
		ck_assert_uint_eq(v[k]->nthreads, 1);
	}
	free_windows(v, n);
	/* exactly as many as match, or more room: not truncated */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 12, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 12);
	ck_assert(!trunc);
	ck_assert_int_eq(v[0]->wall_start_ns, T0);
	free_windows(v, n);
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 100, &v,
			     &n, &trunc),
	    0);
	ck_assert_uint_eq(n, 12);
	ck_assert(!trunc);
	free_windows(v, n);
	/* 0: no limit */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 0, 0, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 12);
	ck_assert(!trunc);
	free_windows(v, n);
	/* a range cut inside: the newest of that range */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 45 * SEC, 0, 2, &v, &n,
			     NULL),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0]->wall_start_ns, T0 + 30 * SEC);
	ck_assert_int_eq(v[1]->wall_start_ns, T0 + 40 * SEC);
	free_windows(v, n);

	/* at a granularity the cap counts buckets, each merged whole */
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 60, 1, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert(trunc);
	ck_assert_int_eq(v[0]->wall_start_ns, T0 + 60 * SEC);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 6 + 6 + 7 + 8 + 9 + 10 + 11);
	ck_assert_uint_eq(v[0]->load1.n, 6);
	free_windows(v, n);
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 60, 2, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert(!trunc);
	ck_assert_uint_eq(v[0]->d_ctxt, 615);
	free_windows(v, n);
	ck_assert_int_eq(store_windows_max(s, T0, T0 + 120 * SEC, 30, 3, &v, &n,
			     &trunc),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert(trunc);
	ck_assert_int_eq(v[0]->wall_start_ns, T0 + 30 * SEC);
	ck_assert_uint_eq(v[0]->d_ctxt, 100 * 3 + 3 + 4 + 5);
	ck_assert_int_eq(v[2]->wall_start_ns, T0 + 90 * SEC);
	ck_assert_uint_eq(v[2]->d_ctxt, 100 * 3 + 9 + 10 + 11);
	free_windows(v, n);
	store_close(s);
}
END_TEST

/* -------------------------------------------------------------- retention */

START_TEST(retention_by_age)
{
	int64_t now = T0 + 30LL * 86400 * SEC;
	struct store *s = open_default();
	struct store_stats st;
	uint64_t before;
	unsigned k;

	for (k = 0; k < 50; k++)
		put(s,
		    full_window(k, now - 8LL * 86400 * SEC + k * 10 * SEC, 100,
			20));
	put(s, full_window(100, now - 6LL * 86400 * SEC, 1, 0));
	put(s, full_window(101, now - 60 * SEC, 1, 0));
	store_close(s);
	s = open_default();
	store_get_stats(s, &st);
	before = st.db_bytes;
	ck_assert_int_eq(store_maintain(s, now), 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.deleted_age, 50);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 2);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_tasks"), 2);
	/* the 6-day-old window was rolled up, the fresh one kept as is */
	ck_assert_int_eq(q_int(s, "SELECT level FROM windows WHERE seq = 100"),
	    2);
	ck_assert_int_eq(q_int(s, "SELECT level FROM windows WHERE seq = 101"),
	    0);
	/* incremental vacuum handed the pages back, past the reserve the
	 * next writes reuse (budget / 32: 896 KiB at the default bound) */
	ck_assert_int_le(q_int(s, "PRAGMA freelist_count") *
		q_int(s, "PRAGMA page_size"),
	    ((32LL << 20) - (4LL << 20)) / 32);
	store_close(s);
	ck_assert_msg(fsize(path) <= before, "file %llu before %llu",
	    (unsigned long long)fsize(path), (unsigned long long)before);
}
END_TEST

static uint64_t
disk_bytes(void)
{
	char wal[PATH_MAX + 8];

	snprintf(wal, sizeof(wal), "%s-wal", path);
	return fsize(path) + fsize(wal);
}

START_TEST(retention_by_size)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	long long lo, hi, cnt;
	unsigned k;

	store_opts_default(&o);
	o.rollup_batch_s = 0;	 /* roll at every pass */
	o.max_bytes = 256 << 10; /* a fraction of 150 windows, compressed */
	s = open_opts(&o);
	for (k = 0; k < 150; k++) {
		put(s, full_window(k, T0 + k * 10 * SEC, 150, 50));
		ck_assert_msg(disk_bytes() <= o.max_bytes,
		    "after put %u: %llu bytes on disk", k,
		    (unsigned long long)disk_bytes());
		store_get_stats(s, &st);
		ck_assert_uint_le(st.db_bytes, o.max_bytes);
	}
	store_get_stats(s, &st);
	ck_assert_uint_gt(st.deleted_size, 0);
	ck_assert_int_eq(st.state, STORE_OK);
	/* oldest first: what is left is the newest run, without gaps */
	lo = q_int(s, "SELECT min(seq) FROM windows");
	hi = q_int(s, "SELECT max(seq) FROM windows");
	cnt = q_int(s, "SELECT count(*) FROM windows");
	ck_assert_int_eq(hi, 149);
	ck_assert_int_eq(cnt, hi - lo + 1);
	ck_assert_int_gt(lo, 0);
	ck_assert_uint_eq(st.deleted_size, (uint64_t)lo);
	store_close(s);
	ck_assert_uint_le(disk_bytes(), o.max_bytes);

	/* a lower bound at the next open is enforced by maintenance */
	o.max_bytes = 512 << 10;
	s = open_opts(&o);
	ck_assert_int_eq(store_maintain(s, T0 + 3600 * SEC), 0);
	ck_assert_uint_le(disk_bytes(), o.max_bytes);
	ck_assert_int_eq(q_int(s, "SELECT max(seq) FROM windows"), 149);
	{
		char ok[16];

		ck_assert_int_eq(store_exec(s, "PRAGMA integrity_check", ok,
				     sizeof(ok)),
		    0);
		ck_assert_str_eq(ok, "ok");
	}
	store_close(s);
	ck_assert_uint_le(fsize(path), o.max_bytes);
}
END_TEST

/* A window that cannot fit even alone is refused, not half kept. */
START_TEST(size_window_too_big)
{
	struct store_opts o;
	struct store_stats st;
	struct store *s;
	struct window *w;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	/* an empty v8 store is 32 pages of 4 KiB (its tables and indexes) */
	o.max_bytes = 192 << 10;
	s = open_opts(&o);
	put(s, full_window(1, T0, 2, 0));
	/* its instances alone are more than the bound */
	w = full_window(2, T0 + 10 * SEC, 6000, 0);
	ck_assert_int_eq(store_put(s, w), -EFBIG);
	window_free(w);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.last_err, -EFBIG);
	ck_assert_uint_eq(st.deleted_size, 0);
	/* the earlier window was not sacrificed for it */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	store_close(s);
}
END_TEST

/* ----------------------------------------------------------------- reads */

static void
put_top_fixture(struct store *s)
{
	struct window *w;
	struct window_task t;

	/* window 1: pid 10 busy, pid 20 faulting, pid 30 big */
	w = mkwin(1, T0);
	t = mktask(10, 100, 50, 10);
	t.d_minflt = 5;
	t.d_majflt = 0;
	t.rss_pages_max = 100;
	add_task(w, false, t);
	t = mktask(20, 200, 1, 1);
	t.d_minflt = 9000;
	t.d_majflt = 40;
	t.rss_pages_max = 200;
	add_task(w, false, t);
	t = mktask(30, 300, 3, 0);
	t.d_minflt = 10;
	t.d_majflt = 1;
	t.rss_pages_max = 90000;
	add_task(w, false, t);
	add_task(w, true, mktask(11, 100, 40, 0));
	put(s, w);
	/* window 2: pid 10 again, pid 20 reused by a new instance */
	w = mkwin(2, T0 + 10 * SEC);
	t = mktask(10, 100, 30, 5);
	t.d_minflt = 6;
	t.d_majflt = 0;
	t.rss_pages_max = 150;
	t.rss_pages_last = 140;
	window_task_set_namef(&t, "renamed.by.exec");
	add_task(w, false, t);
	t = mktask(20, 999, 20, 20);
	t.d_minflt = 1;
	t.d_majflt = 50;
	t.rss_pages_max = 10;
	t.born = true;
	add_task(w, false, t);
	add_task(w, true, mktask(12, 100, 1, 0));
	put(s, w);
	/* window 3, outside the queried range */
	w = mkwin(3, T0 + 3600 * SEC);
	t = mktask(30, 300, 10000, 0);
	add_task(w, false, t);
	put(s, w);
}

START_TEST(top_n_each_metric)
{
	struct store *s = open_default();
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
	struct store *s = open_default();
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

/* ------------------------------------------------------------- corruption */

enum damage {
	DMG_GARBAGE,	    /* the whole file overwritten with random bytes */
	DMG_TRUNCATED,	    /* cut to half its length */
	DMG_TEXT,	    /* not SQLite at all */
	DMG_PAGES,	    /* valid header, garbage inside the b-trees */
	DMG_FOREIGN_ID,	    /* another application's database */
	DMG_FOREIGN_TABLES, /* SQLite without our mark, with tables */
	DMG_FUTURE,	    /* ours, from a newer schema than this build */
	DMG_OUR_MARK_NO_TABLES, /* our mark but the tables are gone */
	DMG__MAX
};

static void
make_db_with_data(void)
{
	struct store *s = open_default();
	unsigned k;

	for (k = 0; k < 30; k++)
		put(s, full_window(k, T0 + k * 10 * SEC, 40, 10));
	store_close(s);
}

static void
overwrite(off_t off, size_t len, unsigned seed)
{
	int fd = open(path, O_WRONLY);
	char *buf = malloc(len);
	size_t i;

	ck_assert_int_ge(fd, 0);
	srand(seed);
	for (i = 0; i < len; i++)
		buf[i] = (char)rand();
	ck_assert_int_eq(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
	free(buf);
}

static void
damage(enum damage d)
{
	struct store *s;

	switch (d) {
	case DMG_GARBAGE:
		overwrite(0, fsize(path), 1);
		break;
	case DMG_TRUNCATED:
		ck_assert_int_eq(truncate(path, (off_t)fsize(path) / 2), 0);
		break;
	case DMG_TEXT:
		ck_assert_int_eq(tu_writes(path, "not a database\n"), 0);
		break;
	case DMG_PAGES:
		/* keep page 1 (header and schema), wreck the rest */
		overwrite(4096, fsize(path) - 4096, 2);
		break;
	case DMG_FOREIGN_ID:
		s = open_default();
		ck_assert_int_eq(store_exec(s, "PRAGMA application_id = 1234",
				     NULL, 0),
		    0);
		store_close(s);
		break;
	case DMG_FOREIGN_TABLES:
		ck_assert_int_eq(unlink(path), 0);
		ck_assert_int_eq(
		    store_create_version(path, 1,
			"PRAGMA application_id = 0; PRAGMA user_version = 0;"),
		    0);
		break;
	case DMG_FUTURE:
		s = open_default();
		ck_assert_int_eq(store_exec(s, "PRAGMA user_version = 99", NULL,
				     0),
		    0);
		store_close(s);
		break;
	case DMG_OUR_MARK_NO_TABLES:
		s = open_default();
		ck_assert_int_eq(store_exec(s, "DROP TABLE window_tasks", NULL,
				     0),
		    0);
		store_close(s);
		break;
	default:
		ck_abort();
	}
}

START_TEST(corrupt_moved_aside)
{
	enum damage d = (enum damage)_i;
	char wal[PATH_MAX + 8], moved_wal[300];
	struct store_stats st;
	struct store *s;
	struct window **v;
	size_t n;

	make_db_with_data();
	damage(d);
	/* a WAL beside a wrecked file is evidence too */
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (d == DMG_GARBAGE)
		ck_assert_int_eq(tu_writes(wal, "stale wal"), 0);

	s = open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert_msg(strncmp(st.corrupt_path, path, strlen(path)) == 0 &&
		strncmp(st.corrupt_path + strlen(path), ".corrupt-", 9) == 0,
	    "moved to %s", st.corrupt_path);
	ck_assert(exists(st.corrupt_path));
	if (d == DMG_GARBAGE) {
		snprintf(moved_wal, sizeof(moved_wal), "%s-wal",
		    st.corrupt_path);
		ck_assert(exists(moved_wal));
	}
	/* a fresh, working database in its place */
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 0);
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	put(s, full_window(1, T0, 2, 1));
	ck_assert_int_eq(store_windows(s, T0, T0 + SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	free_windows(v, n);
	store_close(s);
	/* and the fresh one is kept on the next open */
	s = open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	store_close(s);
}
END_TEST

/*
 * The file goes bad under an open store: the failure says "corrupt"
 * (-EUCLEAN, not a retryable -EIO), and store_recover moves it aside as
 * store_open would and goes on with a fresh database in the same handle.
 */
START_TEST(corrupt_while_open_recovers)
{
	struct store_stats st;
	struct store *s = open_default();
	struct window **v;
	struct window *w;
	unsigned k;
	size_t n;
	int r = 0;

	for (k = 0; k < 30; k++)
		put(s, full_window(k, T0 + k * 10 * SEC, 40, 10));
	/* everything in the main file, nothing of it in memory */
	ck_assert_int_eq(store_exec(s, "PRAGMA wal_checkpoint(TRUNCATE)", NULL,
			     0),
	    0);
	ck_assert_uint_gt(fsize(path), 8 * 4096);
	overwrite(4096, fsize(path) - 4096, 3);
	ck_assert_int_eq(store_exec(s, "PRAGMA shrink_memory", NULL, 0), 0);
	for (k = 30; k < 40 && r == 0; k++) {
		w = full_window(k, T0 + k * 10 * SEC, 40, 10);
		r = store_put(s, w);
		window_free(w);
	}
	ck_assert_int_eq(r, -EUCLEAN);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.last_err, -EUCLEAN);
	ck_assert_int_eq(st.state, STORE_IO_ERROR);
	ck_assert_uint_eq(st.corrupt_moved, 0);

	ck_assert_int_eq(store_recover(s), 0);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert_msg(strncmp(st.corrupt_path, path, strlen(path)) == 0 &&
		strncmp(st.corrupt_path + strlen(path), ".corrupt-", 9) == 0,
	    "moved to %s", st.corrupt_path);
	ck_assert(exists(st.corrupt_path));
	ck_assert(exists(path));
	/* fresh and ours, and the handle works for writes and reads */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 0);
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	put(s, full_window(100, T0 + 1000 * SEC, 5, 2));
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(store_windows(s, T0, T0 + 2000 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->nprocs, 5);
	free_windows(v, n);
	store_close(s);
	/* the fresh file is kept on the next open */
	s = open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	store_close(s);
}
END_TEST

/* The writer thread recovers on its own and loses no window to it. */
START_TEST(writer_recovers_corrupt_store)
{
	struct store *s = open_default();
	struct store_stats st;
	struct writer *wr;
	uint64_t dropped;
	unsigned k, queued;
	int i;

	for (k = 0; k < 30; k++)
		put(s, full_window(k, T0 + k * 10 * SEC, 40, 10));
	ck_assert_int_eq(store_exec(s, "PRAGMA wal_checkpoint(TRUNCATE)", NULL,
			     0),
	    0);
	overwrite(4096, fsize(path) - 4096, 3);
	ck_assert_int_eq(store_exec(s, "PRAGMA shrink_memory", NULL, 0), 0);
	ck_assert_int_eq(writer_start(s, 16, &wr), 0);
	for (k = 30; k < 35; k++) {
		struct window *w = full_window(k, T0 + k * 10 * SEC, 40, 10);

		ck_assert_int_eq(writer_submit(wr, w), 0);
		window_free(w);
	}
	for (i = 0; i < 1000; i++) {
		writer_get(wr, &st, &queued, &dropped);
		if (queued == 0)
			break;
		usleep(10000);
	}
	writer_stop(wr, 1000);
	ck_assert_uint_eq(queued, 0);
	ck_assert_uint_eq(dropped, 0);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 1);
	ck_assert(exists(st.corrupt_path));
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 5);
	store_close(s);
}
END_TEST

START_TEST(empty_file_is_initialised)
{
	struct store *s;
	struct store_stats st;

	ck_assert_int_eq(tu_writes(path, ""), 0);
	s = open_default();
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.corrupt_moved, 0);
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	store_close(s);
}
END_TEST

START_TEST(open_errors)
{
	struct store *s = (struct store *)&s; /* must stay untouched */
	struct store_opts o;
	char p[PATH_MAX + 16];

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	snprintf(p, sizeof(p), "%s/missing/vitals.db", dir);
	ck_assert_int_eq(store_open(p, &o, &s), -ENOENT);
	ck_assert_ptr_eq(s, (struct store *)&s);
	/* a directory where the file should be is not "corrupt" */
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_lt(store_open(path, &o, &s), 0);
	ck_assert_ptr_eq(s, (struct store *)&s);
	ck_assert_int_eq(rmdir(path), 0);
	ck_assert_int_eq(store_put(NULL, NULL), -EBADF);
	ck_assert_int_eq(store_maintain(NULL, 0), -EBADF);
}
END_TEST

/* ------------------------------------------------------ failure mapping */

START_TEST(full_maps_to_enospc)
{
	struct store *s = open_default();
	struct store_stats st;
	struct window *w, **v;
	char sql[64];
	size_t n;
	unsigned k;

	for (k = 0; k < 3; k++)
		put(s, full_window(k, T0 + k * 10 * SEC, 5, 0));
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
	    q_int(s, "PRAGMA page_count"));
	ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
	w = full_window(3, T0 + 30 * SEC, 800, 200);
	ck_assert_int_eq(store_put(s, w), -ENOSPC);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_FULL);
	ck_assert_int_eq(st.last_err, -ENOSPC);
	ck_assert_uint_eq(st.write_failures, 1);
	ck_assert_uint_eq(st.windows_written, 3);
	ck_assert_msg(strlen(st.last_errmsg) > 0, "no message");
	/* nothing half-written; the earlier windows are intact */
	ck_assert_int_eq(store_windows(s, T0, T0 + 3600 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(v[2]->nprocs, 5);
	free_windows(v, n);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_tasks"), 3);
	/* space comes back: the same window goes in, state is ok again */
	ck_assert_int_eq(store_exec(s, "PRAGMA max_page_count = 1000000", NULL,
			     0),
	    0);
	ck_assert_int_eq(store_put(s, w), 0);
	store_get_stats(s, &st);
	ck_assert_int_eq(st.state, STORE_OK);
	ck_assert_uint_eq(st.windows_written, 4);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 4);
	window_free(w);
	store_close(s);
}
END_TEST

START_TEST(busy_maps_to_ebusy)
{
	struct store_opts o;
	struct store *a, *b;
	struct store_stats st;
	struct window *w;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.busy_timeout_ms = 50;
	a = open_opts(&o);
	b = open_opts(&o);
	ck_assert_int_eq(store_exec(a, "BEGIN IMMEDIATE", NULL, 0), 0);
	w = full_window(1, T0, 3, 0);
	ck_assert_int_eq(store_put(b, w), -EBUSY);
	store_get_stats(b, &st);
	ck_assert_int_eq(st.state, STORE_OK); /* transient, not an outage */
	ck_assert_int_eq(st.last_err, -EBUSY);
	ck_assert_int_eq(store_exec(a, "ROLLBACK", NULL, 0), 0);
	ck_assert_int_eq(store_put(b, w), 0);
	window_free(w);
	store_close(a);
	store_close(b);
}
END_TEST

/* ----------------------------------------------------------------- threads */

static void *
writer_main(void *arg)
{
	struct store *s = arg;
	unsigned k;

	for (k = 0; k < 60; k++) {
		struct window *w = full_window(k, T0 + k * 10 * SEC, 30, 10);

		if (store_put(s, w) != 0)
			return (void *)1;
		window_free(w);
	}
	return NULL;
}

/* One handle shared by a writer thread and a reader (the daemon's shape). */
START_TEST(shared_handle_two_threads)
{
	struct store *s = open_default();
	struct store_stats st;
	struct window_task *t;
	struct window **v;
	pthread_t th;
	void *res;
	size_t n;
	int i;

	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, s), 0);
	for (i = 0; i < 200; i++) {
		ck_assert_int_eq(store_top(s, T0, T0 + 3600 * SEC, false,
				     METRIC_CPU, 5, &t, &n),
		    0);
		ck_assert_uint_le(n, 5);
		free(t);
		ck_assert_int_eq(store_windows(s, T0, T0 + 3600 * SEC, 60, &v,
				     &n),
		    0);
		ck_assert_uint_le(n, 10);
		free_windows(v, n);
		store_get_stats(s, &st);
	}
	ck_assert_int_eq(pthread_join(th, &res), 0);
	ck_assert_ptr_null(res);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 60);
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
	struct store *s = open_default();
	struct store_stats st;
	uint64_t ns[N];
	unsigned k;

	for (k = 0; k < N; k++) {
		struct window *w = full_window(k, T0 + k * 10 * SEC, 50, 100);

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
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, schema_created);
	tcase_add_test(tc, opts_defaults);
	tcase_add_test(tc, round_trip_every_field);
	tcase_add_test(tc, round_trip_empty_window);
	tcase_add_test(tc, duplicate_put_idempotent);
	tcase_add_test(tc, reopen_keeps_data);
	tcase_add_test(tc, migrate_from_v1);
	tcase_add_test(tc, create_version_rejects);
	suite_add_tcase(s, tc);

	tc = tcase_create("maintenance");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rollup_through_store);
	tcase_add_test(tc, rollup_in_batches);
	tcase_add_test(tc, size_bound_rolls_first);
	tcase_add_test(tc, rollup_late_arrival_joins_bucket);
	tcase_add_test(tc, rollup_keeps_burst_windows);
	tcase_add_test(tc, rollup2_keeps_threads_when_asked);
	tcase_add_test(tc, windows_at_granularity);
	tcase_add_test(tc, windows_newest_max);
	tcase_add_test(tc, retention_by_age);
	tcase_add_test(tc, retention_by_size);
	tcase_add_test(tc, size_window_too_big);
	suite_add_tcase(s, tc);

	tc = tcase_create("reads");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, top_n_each_metric);
	tcase_add_test(tc, process_history);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, corrupt_moved_aside, 0, DMG__MAX);
	tcase_add_test(tc, corrupt_while_open_recovers);
	tcase_add_test(tc, writer_recovers_corrupt_store);
	tcase_add_test(tc, empty_file_is_initialised);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, full_maps_to_enospc);
	tcase_add_test(tc, busy_maps_to_ebusy);
	tcase_add_test(tc, shared_handle_two_threads);
	suite_add_tcase(s, tc);

	tc = tcase_create("bench");
	tcase_add_checked_fixture(tc, setup, teardown);
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
