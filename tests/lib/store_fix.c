/* SPDX-License-Identifier: Apache-2.0 */
/* A store in a temporary directory, hand-made windows, and field-by-field
 * comparison of windows, for the check_store* suites (store_fix.h). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_fix.h"
#include "testutil.h"

char *sf_dir;
char sf_path[PATH_MAX];

void
sf_setup(void)
{
	sf_dir = tu_mkdtemp_db("store", sf_path, sizeof(sf_path));
}

void
sf_teardown(void)
{
	tu_rmtree(sf_dir);
	free(sf_dir);
}

struct store *
sf_open_opts(const struct store_opts *o)
{
	struct store *s = NULL;
	int r = store_open(sf_path, o, &s);

	ck_assert_msg(r == 0, "store_open: %d", r);
	ck_assert_ptr_nonnull(s);
	return s;
}

struct store *
sf_open_default(void)
{
	struct store_opts o;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	return sf_open_opts(&o);
}

struct store *
sf_open_spool(const char *p, const char *spool, unsigned commit_s)
{
	struct store_opts o;
	struct store *s = NULL;
	int r;

	store_opts_default(&o);
	if (spool) {
		o.spool_path = spool;
		o.commit_s = commit_s;
	}
	r = store_open(p, &o, &s);
	ck_assert_msg(r == 0, "store_open %s: %d", p, r);
	ck_assert_ptr_nonnull(s);
	return s;
}

struct store *
sf_open_path(const char *p)
{
	return sf_open_spool(p, NULL, 0);
}

long long
sf_q_int(struct store *s, const char *sql)
{
	char buf[64];
	int r = store_exec(s, sql, buf, sizeof(buf));

	ck_assert_msg(r == 0, "%s: %d", sql, r);
	return strtoll(buf, NULL, 10);
}

void
sf_assert_intact(struct store *s)
{
	char ok[64];

	ck_assert_int_eq(store_exec(s, "PRAGMA integrity_check", ok,
			     sizeof(ok)),
	    0);
	ck_assert_str_eq(ok, "ok");
}

uint64_t
sf_fsize(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

bool
sf_exists(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0;
}

struct window_task
sf_mktask(int32_t id, uint64_t starttime, uint64_t ut, uint64_t st)
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
struct window *
sf_mkwin(uint64_t seq, int64_t wall_start_ns)
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

struct window *
sf_mkwin_boot(uint64_t seq, const char *boot)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", boot);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + w->mono_start_ns;
	w->wall_end_ns = T0 + w->mono_end_ns;
	w->samples = w->samples_valid = 10;
	return w;
}

void
sf_add_task(struct window *w, bool thread, struct window_task t)
{
	ck_assert_int_eq(window_add_task(w, thread, &t), 0);
}

/* Every field set, every storage rule exercised. */
struct window *
sf_full_window(uint64_t seq, int64_t wall, unsigned nprocs, unsigned nthreads)
{
	struct window *w = sf_mkwin(seq, wall);
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
		struct window_task t = sf_mktask(100 + (int32_t)i, 5000 + i,
		    i % 7, i % 3);

		t.born = i % 5 == 0;
		t.exited = i % 11 == 0;
		t.rss_pages_max = (uint64_t)1 << 40;
		sf_add_task(w, false, t);
	}
	for (i = 0; i < nthreads; i++) {
		struct window_task t = sf_mktask(100000 + (int32_t)i, 6000 + i,
		    i % 4, 1);

		t.tgid = 100 + (int32_t)(i % 10);
		window_task_set_name(&t, t.comm); /* stored as NULL */
		sf_add_task(w, true, t);
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

void
sf_eq_cpu(const struct window_cpu *a, const struct window_cpu *b, int cpu)
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

const struct window_task *
sf_find_task(const struct window *w, bool thread, int32_t id, uint64_t st)
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
		const struct window_task *o = sf_find_task(b, thread, arr[i].id,
		    arr[i].starttime);

		ck_assert_msg(o != NULL, "task %d missing", arr[i].id);
		tu_task_eq(&arr[i], o);
	}
}

void
sf_eq_sys(const struct window *a, const struct window *b)
{
	char what[32];
	unsigned i;

	for (i = 0; i < INV__MAX; i++) {
		ck_assert_uint_eq(a->inv_samples[i], b->inv_samples[i]);
		ck_assert_uint_eq(a->inv_deltas[i], b->inv_deltas[i]);
	}
	sf_eq_cpu(&a->all, &b->all, -1);
	ck_assert_uint_eq(a->cpu_span, b->cpu_span);
	for (i = 0; i < a->cpu_span; i++)
		sf_eq_cpu(&a->cpu[i], &b->cpu[i], (int)i);
	eq_gauge(&a->online_cpus, &b->online_cpus, "online_cpus");
	ck_assert_uint_eq(a->d_ctxt, b->d_ctxt);
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
	ck_assert_uint_eq(a->vm_have, b->vm_have);
	for (i = 0; i < MI__MAX; i++) {
		snprintf(what, sizeof(what), "mem%u", i);
		eq_gauge(&a->mem_kb[i], &b->mem_kb[i], what);
	}
	ck_assert_uint_eq(a->mem_have, b->mem_have);
}

/* Field by field, so a failure names the field. */
void
sf_eq_window(const struct window *a, const struct window *b)
{
	const struct window_health *x = &a->health, *y = &b->health;
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
	sf_eq_sys(a, b);
	ck_assert_uint_eq(a->d_processes, b->d_processes);
	ck_assert_uint_eq(a->vm_samples, b->vm_samples);
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

void
sf_free_windows(struct window **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
}

void
sf_put(struct store *s, struct window *w)
{
	int r = store_put(s, w);

	ck_assert_msg(r == 0, "store_put: %d", r);
	window_free(w);
}

void
sf_exec_raw(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int r = sqlite3_exec(db, sql, NULL, NULL, &err);

	ck_assert_msg(r == SQLITE_OK, "%s: %s", sql, err ? err : "");
	sqlite3_free(err);
}

/* A parts row into an older file: its first four columns, and the
 * blobs of the parts v28 folds into it into their own tables. */
static void
parts_to_version(sqlite3 *db, const char *t)
{
	static const char *const fold[][2] = { { "cgroup", "window_cgroup" },
		{ "wcpu", "window_wcpu" }, { "fgbg", "window_fgbg" },
		{ "dmabuf", "window_dmabuf" }, { "gpufreq", "window_gpufreq" },
		{ "syscalls", "window_syscalls" } };
	char sql[512];
	sqlite3_stmt *st;
	size_t i;
	bool any;

	snprintf(sql, sizeof(sql),
	    "INSERT INTO old.window_parts SELECT window_id, kv, sys, bpf FROM"
	    " main.\"%s\" WHERE kv IS NOT NULL OR sys IS NOT NULL OR bpf IS"
	    " NOT NULL",
	    t);
	sf_exec_raw(db, sql);
	for (i = 0; i < sizeof(fold) / sizeof(fold[0]); i++) {
		snprintf(sql, sizeof(sql),
		    "SELECT 1 FROM main.\"%s\" WHERE %s IS NOT NULL", t,
		    fold[i][0]);
		ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
		    SQLITE_OK);
		any = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (!any)
			continue;
		snprintf(sql, sizeof(sql),
		    "INSERT INTO old.%s (window_id, blob) SELECT window_id, %s"
		    " FROM main.\"%s\" WHERE %s IS NOT NULL",
		    fold[i][1], fold[i][0], t, fold[i][0]);
		sf_exec_raw(db, sql);
	}
}

void
sf_copy_to_version(const char *from, const char *to, unsigned version,
    const char *first, const char *skip)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char sql[PATH_MAX + 256];

	ck_assert_int_eq(store_create_version(to, version, NULL), 0);
	ck_assert_int_eq(sqlite3_open(from, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "ATTACH '%s' AS old", to);
	sf_exec_raw(db, sql);
	sf_exec_raw(db, "BEGIN");
	if (first)
		sf_exec_raw(db, first);
	snprintf(sql, sizeof(sql),
	    "SELECT name FROM main.sqlite_schema WHERE type = 'table'"
	    " AND name NOT LIKE 'sqlite_%%'%s%s",
	    skip ? " AND name NOT IN " : "", skip ? skip : "");
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		bool parts = strncmp(t, "l0_parts_", 9) == 0 ||
		    strcmp(t, "window_parts") == 0;

		/* level 0's span tables (v27, store_span.c): an older file
		 * holds their rows in the main tables */
		if (parts)
			parts_to_version(db, t);
		else {
			snprintf(sql, sizeof(sql),
			    "INSERT INTO old.\"%s\" SELECT * FROM"
			    " main.\"%s\"",
			    strncmp(t, "l0_tasks_", 9) == 0 ? "window_tasks" :
							      t,
			    t);
			sf_exec_raw(db, sql);
		}
	}
	sqlite3_finalize(st);
	sf_exec_raw(db, "COMMIT");
	sqlite3_close(db);
}
