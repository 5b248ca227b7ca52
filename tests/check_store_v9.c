/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Schema v9 (doc/storage.md, "Schema v9"): a window's counters and
 * gauges, CPU and PSI rows and BPF rows as three blobs in window_parts,
 * keys in the key dictionary window_key.
 *
 *  - tests/fixtures/store-v8/vitals.db.gz was written by the v8 code from
 *    fix_window(0 .. FIX_N - 1); opened here it migrates, and every figure
 *    of every window reads back as the generator made it;
 *  - roll-ups re-encode the merged parts with exact sums;
 *  - a damaged part (bad zstd frame, truncated varints, another part
 *    version) is refused and counted, and the window's other parts read;
 *  - the spool moves the new tables, and its keys keep their ids.
 *
 * VITALS_MAKE_V8_FIXTURE=PATH check_store_v9 writes the fixture's windows
 * into PATH with whatever schema the build has (how the fixture was made,
 * by the v8 build) and exits.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store_codec.h"
#include "store/store_int.h"
#include "store/store_bpfrows.h"
#include "store/store_kv.h"
#include "store/store_sys.h"
#include "store_fix.h"
#include "testutil.h"
#include "vitalsd.h"

#define FIX_N 12

static char *dir;
static char path[PATH_MAX], spool[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("v9", path, sizeof(path));
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct store *
open_at(const char *p, const char *sp)
{
	struct store_opts o;
	struct store *s = NULL;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.spool_path = sp;
	/* without a spool the tests edit parts rows in place by their
	 * table's name: level 0 in the main tables (store_span.c) */
	o.no_spans = sp == NULL;
	ck_assert_int_eq(store_open(p, &o, &s), 0);
	return s;
}

static long long
q_int(struct store *s, const char *sql)
{
	char buf[64];
	int r = store_exec(s, sql, buf, sizeof(buf));

	ck_assert_msg(r == 0, "%s: %d", sql, r);
	return strtoll(buf, NULL, 10);
}

/* ------------------------------------------------------------ windows */

/* Windows of every shape the parts take: i picks CPUs, gauges that are
 * whole, two-decimal or neither, a BPF part with rows or the head alone,
 * "other" rows, PSI with and without full, unknown CPUs. */
static struct window *
fix_window(unsigned i)
{
	struct window *w = window_new(i, 0);
	struct window_bpf *b;
	unsigned k, ncpu = 2 + i % 5;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "boot-v8");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)i * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns + 3;
	w->boot_end_ns = w->mono_end_ns + 3;
	w->wall_start_ns = T0 + w->mono_start_ns;
	w->wall_end_ns = T0 + w->mono_end_ns;
	w->samples = 10;
	w->samples_valid = 9 + (i & 1);
	w->d_ctxt = 100000 + 7 * i;
	w->d_processes = i;
	for (k = 0; k < INV__MAX; k++)
		if ((k + i) % 3)
			w->inv_samples[k] = k + i;
	w->inv_deltas[i % INV__MAX] = 5 + i;
	w->all.d = (struct cpu_times){ 1000 + i, i, 300, 9000, 4, 5, 6, 7, 0,
		i % 2 };
	w->all.samples = w->samples_valid;
	w->all.wall_ns = 10 * SEC - i;
	w->all.online_end = true;
	gauge_add(&w->all.cur_khz, 1234567.0 + i);
	w->all.max_khz = -1;
	w->all.capacity = -1;
	ck_assert_int_eq(window_grow_cpus(w, ncpu), 0);
	for (k = 0; k < ncpu; k++) {
		struct window_cpu *c = &w->cpu[k];

		if (k == 1 && i % 4 == 0)
			continue; /* unknown: no row */
		c->d = (struct cpu_times){ 100 * k + i, k, 30, 900, 1, 0, 2, 0,
			0, 0 };
		c->samples = k == 2 ? 3 : w->samples_valid;
		c->wall_ns = k == 2 ? 3 * SEC : 10 * SEC - i;
		c->online_end = k != 3;
		gauge_add(&c->cur_khz, 300000.0 + 1000 * k);
		gauge_add(&c->cur_khz, 1800000.0);
		c->max_khz = k == 0 ? -1 : 2000000;
		gauge_add(&c->freq_ratio, (300000.0 + 1000 * k) / 2e6);
		c->capacity = k == 0 ? -1 : 1024 - (int32_t)k;
	}
	gauge_add(&w->online_cpus, ncpu);
	gauge_add(&w->procs_running, 2 + i);
	gauge_add(&w->procs_running, 1);
	gauge_add(&w->load1, 0.27 + i / 100.0);
	gauge_add(&w->load1, 1.0 / 3); /* neither whole nor hundredths */
	gauge_add(&w->load5, 0.13);
	gauge_add(&w->load_threads, 1234 + i);
	for (k = 0; k < PSI__MAX; k++) {
		struct window_psi *p = &w->psi[k];

		if (k == PSI_IO && i % 2)
			continue; /* unavailable: no row */
		p->available = true;
		p->have_full = k != PSI_CPU;
		p->samples = 9;
		p->d_some_us = 1000 * k + i;
		p->d_full_us = p->have_full ? 10 * k + i : 0;
		gauge_add(&p->some_avg10, 0.25 * k + i / 100.0);
		if (p->have_full)
			gauge_add(&p->full_avg10, 0.01 * k);
	}
	for (k = 0; k < VM__MAX; k++)
		if ((k + i) % 4) {
			w->vm_have |= 1u << k;
			w->d_vm[k] = k == 0 ? 0xfffffffffffffff0ULL : k * i;
		}
	w->vm_samples = 9;
	for (k = 0; k < MI__MAX; k++) {
		if ((k + i) % 5 == 0)
			continue;
		w->mem_have |= 1u << k;
		gauge_add(&w->mem_kb[k], 1000.0 * (k + 1) + i);
		gauge_add(&w->mem_kb[k], 1000.0 * (k + 1) + 4);
	}
	for (k = 0; k < COLL__MAX; k++) {
		w->health.coll_ns_sum[k] = 100000 * (k + 1) + i;
		if (k % 2)
			w->health.coll_ns_max[k] = 20000 * (k + 1);
	}
	w->health.procs_scanned = 500 + i;
	if (i % 3 == 2)
		return w; /* no BPF part */
	b = window_sched_make(w, i % 3 == 0);
	ck_assert_ptr_nonnull(b);
	b->state = i % 3 == 0 ? VBPF_ON_LOADED : VBPF_OFF_ERROR;
	if (b->state != VBPF_ON_LOADED) {
		b->err = -EPERM;
		return w;
	}
	b->drains = 10;
	b->drain_ns = 123456 + i;
	b->entries = 40;
	b->switches = 99999 + i;
	b->wakeups = 5000;
	b->lost_ns = i;
	b->stats = true;
	for (k = 0; k < VITALS_BPF_PROGS; k++) {
		b->prog_runs[k] = 1000 * (k + 1) + i;
		b->prog_ns[k] = 77777 * (k + 1);
	}
	ck_assert_int_eq(window_bpf_reserve(b, 3, 4, 0), 0);
	b->nuids = 3;
	for (k = 0; k < b->nuids; k++) {
		b->uid[k].uid = k == 0 ? 0 : 10000 + k * 7 + i;
		b->uid[k].oncpu_ns = 1000000 * (k + 1) + i;
		b->uid[k].exited_ns = k == 1 ? 500 : 0;
		b->uid[k].exited_tasks = k == 1 ? 2 : 0;
		b->oncpu_ns += b->uid[k].oncpu_ns;
	}
	b->uids_other = 4;
	b->uid_other.uid = UINT32_MAX;
	b->uid_other.oncpu_ns = 42 + i;
	b->oncpu_ns += b->uid_other.oncpu_ns;
	b->nprocs = 4;
	for (k = 0; k < b->nprocs; k++) {
		struct window_bpf_proc *p = &b->proc[k];
		unsigned s;

		p->tgid = 100 + (int32_t)(k * 13 + i);
		p->starttime = 5000 + k * 3;
		p->oncpu_ns = 300000 * (k + 1);
		for (s = 0; s < 3 + k; s++)
			p->rq_hist[s] = s + k;
		for (s = 0; s < VITALS_BPF_RQ_SLOTS; s++)
			p->rq_count += p->rq_hist[s];
		if (k == 2)
			p->rq_count += 3; /* not the histogram's sum */
		p->rq_ns = 1000 * p->rq_count;
		b->rq_ns += p->rq_ns;
		b->rq_count += p->rq_count;
	}
	b->procs_other = 7;
	b->proc_other.tgid = -1;
	b->proc_other.oncpu_ns = 1234;
	b->proc_other.rq_count = 1;
	b->proc_other.rq_hist[0] = 1;
	return w;
}

static void
eq_uid(const struct window_bpf_uid *a, const struct window_bpf_uid *b)
{
	ck_assert_uint_eq(a->uid, b->uid);
	ck_assert_uint_eq(a->oncpu_ns, b->oncpu_ns);
	ck_assert_uint_eq(a->exited_ns, b->exited_ns);
	ck_assert_uint_eq(a->exited_tasks, b->exited_tasks);
}

static void
eq_proc(const struct window_bpf_proc *a, const struct window_bpf_proc *b)
{
	ck_assert_int_eq(a->tgid, b->tgid);
	ck_assert_uint_eq(a->starttime, b->starttime);
	ck_assert_uint_eq(a->oncpu_ns, b->oncpu_ns);
	ck_assert_uint_eq(a->rq_ns, b->rq_ns);
	ck_assert_uint_eq(a->rq_count, b->rq_count);
	ck_assert(memcmp(a->rq_hist, b->rq_hist, sizeof(a->rq_hist)) == 0);
}

/* The window-level BPF figures, every one the store keeps. */
#define BPF_EQ(f)                                           \
	ck_assert_msg(a->f == b->f, "bpf." #f " %llu %llu", \
	    (unsigned long long)a->f, (unsigned long long)b->f)

static void
eq_bpf(const struct window_bpf *a, const struct window_bpf *b)
{
	unsigned k;

	ck_assert((a == NULL) == (b == NULL));
	if (a == NULL)
		return;
	BPF_EQ(state);
	BPF_EQ(err);
	BPF_EQ(drains);
	BPF_EQ(drain_fail);
	BPF_EQ(counter_regressions);
	BPF_EQ(drain_ns);
	BPF_EQ(entries);
	BPF_EQ(oncpu_ns);
	BPF_EQ(exited_ns);
	BPF_EQ(exited_tasks);
	BPF_EQ(rq_ns);
	BPF_EQ(rq_count);
	BPF_EQ(pre_ns);
	BPF_EQ(switches);
	BPF_EQ(no_slice);
	BPF_EQ(wakeups);
	BPF_EQ(lost_ns);
	BPF_EQ(full_tid);
	BPF_EQ(full_proc);
	BPF_EQ(full_uid);
	BPF_EQ(no_storage);
	BPF_EQ(diff_drains);
	BPF_EQ(unattributed_ns);
	BPF_EQ(evicted);
	BPF_EQ(recreated);
	BPF_EQ(retired);
	BPF_EQ(stats);
	BPF_EQ(uids_other);
	BPF_EQ(procs_other);
	for (k = 0; k < VITALS_BPF_PROGS; k++) {
		ck_assert_uint_eq(a->prog_runs[k], b->prog_runs[k]);
		ck_assert_uint_eq(a->prog_ns[k], b->prog_ns[k]);
	}
	BPF_EQ(nuids);
	BPF_EQ(nprocs);
	eq_uid(&a->uid_other, &b->uid_other);
	eq_proc(&a->proc_other, &b->proc_other);
	/* rows come back ordered by uid and by (tgid, starttime), as fix_window
	 * makes them */
	for (k = 0; k < a->nuids; k++)
		eq_uid(&a->uid[k], &b->uid[k]);
	for (k = 0; k < a->nprocs; k++)
		eq_proc(&a->proc[k], &b->proc[k]);
}

/* Every figure the parts of schema v9 hold, and the window row's. */
static void
eq_window(const struct window *a, const struct window *b)
{
	unsigned i;

	ck_assert_str_eq(a->boot_id, b->boot_id);
	ck_assert_uint_eq(a->level, b->level);
	ck_assert_int_eq(a->mono_start_ns, b->mono_start_ns);
	ck_assert_int_eq(a->wall_end_ns, b->wall_end_ns);
	ck_assert_uint_eq(a->samples_valid, b->samples_valid);
	sf_eq_sys(a, b);
	for (i = 0; i < COLL__MAX; i++) {
		ck_assert_uint_eq(a->health.coll_ns_sum[i],
		    b->health.coll_ns_sum[i]);
		ck_assert_uint_eq(a->health.coll_ns_max[i],
		    b->health.coll_ns_max[i]);
	}
	eq_bpf(window_sched(a), window_sched(b));
}

static void
put_fix(struct store *s, unsigned i)
{
	struct window *w = fix_window(i);

	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
}

static void
load_all(struct store *s, struct window ***ret, size_t *ret_n)
{
	ck_assert_int_eq(store_windows(s, T0 - 3600 * SEC, T0 + 3600 * SEC, 0,
			     ret, ret_n),
	    0);
}

static void
free_windows(struct window **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
}

/* ----------------------------------------------------------- migration */

START_TEST(migrate_v8_exact)
{
	char cmd[PATH_MAX * 2 + 64];
	struct window **v;
	struct store *s;
	size_t n, i;

	snprintf(cmd, sizeof(cmd),
	    "gzip -dc '%s/tests/fixtures/store-v8/vitals.db.gz' > '%s'",
	    getenv("VITALS_SRCDIR") ? getenv("VITALS_SRCDIR") : ".", path);
	ck_assert_int_eq(system(cmd), 0);
	s = open_at(path, NULL);
	ck_assert_int_eq(q_int(s, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM sqlite_schema WHERE name IN"
			     " ('window_count', 'window_gauge', 'window_cpu',"
			     " 'window_psi', 'window_bpf_uid',"
			     " 'window_bpf_proc')"),
	    0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_parts"), FIX_N);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, FIX_N);
	for (i = 0; i < n; i++) {
		struct window *w = fix_window((unsigned)i);

		eq_window(w, v[i]);
		window_free(w);
	}
	free_windows(v, n);
	/* written again the same way: nothing differs but the encoding */
	put_fix(s, FIX_N);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, FIX_N + 1);
	{
		struct window *w = fix_window(FIX_N);

		eq_window(w, v[FIX_N]);
		window_free(w);
	}
	free_windows(v, n);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------ roll-ups */

START_TEST(rollup_sums_exact)
{
	struct store_opts o;
	struct window **v, *sum = NULL;
	struct store *s;
	size_t n;
	unsigned i;

	store_opts_default(&o);
	o.rollup_batch_s = 0; /* roll at every pass */
	o.rollup1_s = 60;
	o.rollup1_after_s = 1;
	o.rollup2_s = 0;
	o.spool_path = NULL;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	/* six 10 s windows of one minute, all with BPF rows */
	for (i = 0; i < 6; i++) {
		struct window *w = fix_window(3 * i);

		w->seq = i;
		w->mono_start_ns = (int64_t)i * 10 * SEC;
		w->mono_end_ns = w->mono_start_ns + 10 * SEC;
		w->boot_start_ns = w->mono_start_ns;
		w->boot_end_ns = w->mono_end_ns;
		w->wall_start_ns = T0 + w->mono_start_ns;
		w->wall_end_ns = T0 + w->mono_end_ns;
		if (sum == NULL)
			ck_assert_ptr_nonnull(sum = window_dup(w));
		else
			ck_assert_int_eq(window_merge(sum, w), 0);
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(store_maintain(s, T0 + 3600 * SEC), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM windows"), 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_parts"), 1);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, 1);
	sum->level = 1;
	eq_window(sum, v[0]);
	/* the sums themselves, not only the merge's answer */
	ck_assert_uint_eq(v[0]->all.d.user, 6 * 1000 + 0 + 3 + 6 + 9 + 12 + 15);
	ck_assert_uint_eq(v[0]->psi[PSI_MEMORY].d_some_us,
	    6 * 1000 + (0 + 3 + 6 + 9 + 12 + 15));
	ck_assert_uint_eq(window_sched(v[0])->switches,
	    6 * 99999 + (0 + 3 + 6 + 9 + 12 + 15));
	ck_assert_uint_eq(v[0]->health.coll_ns_sum[0],
	    6 * 100000 + (0 + 3 + 6 + 9 + 12 + 15));
	ck_assert_uint_eq(v[0]->mem_kb[1].n, sum->mem_kb[1].n);
	free_windows(v, n);
	window_free(sum);
	store_close(s);
}
END_TEST

/* ------------------------------------------------------------- damage */

/* A frame of part/version around payload p as hex for SQL. */
static void
hex_frame(unsigned part, unsigned version, const void *p, size_t n, bool zstd,
    char *out, size_t outsz)
{
	struct store_enc e = { 0 };
	size_t i;

	if (zstd)
		ck_assert_int_eq(store_frame_put_zstd(&e, part, version, p, n,
				     3),
		    0);
	else
		ck_assert_int_eq(store_frame_put(&e, part, version, p, n), 0);
	ck_assert_uint_lt(2 * e.b.len + 1, outsz);
	for (i = 0; i < e.b.len; i++)
		snprintf(out + 2 * i, 3, "%02x", ((const uint8_t *)e.b.p)[i]);
	store_enc_release(&e);
}

static void
set_blob(struct store *s, const char *col, const char *hex)
{
	char sql[8192];

	snprintf(sql, sizeof(sql), "UPDATE window_parts SET %s = x'%s'", col,
	    hex);
	ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
}

static uint64_t
blob_errors(struct store *s)
{
	struct store_stats st;

	store_get_stats(s, &st);
	return st.blob_errors;
}

START_TEST(corrupt_parts)
{
	struct window **v, *w = fix_window(0);
	uint8_t trunc[] = { 0x05, 0x81 }; /* 5 counters, a cut varint */
	char hex[4096];
	struct store *s = open_at(path, NULL);
	uint64_t e0;
	size_t n;

	ck_assert_int_eq(store_put(s, w), 0);
	/* a zstd frame (codec 1) whose stream is damaged, its length kept:
	 * the kv part goes */
	{
		size_t len, mid;

		ck_assert_int_eq(store_exec(s,
				     "SELECT hex(kv) FROM window_parts", hex,
				     sizeof(hex)),
		    0);
		len = strlen(hex);
		ck_assert_uint_gt(len, 32);
		/* magic, part 2, version 2 (written since v21), codec 1 */
		ck_assert(strncmp(hex, "B7020201", 8) == 0);
		mid = (len / 4) * 2; /* a byte in the middle of the stream */
		hex[mid] = hex[mid] == '0' ? 'F' : '0';
		set_blob(s, "kv", hex);
		ck_assert_int_eq(q_int(s,
				     "SELECT length(kv) FROM window_parts"),
		    (long long)len / 2);
	}
	e0 = blob_errors(s);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(blob_errors(s), e0 + 1);
	ck_assert_uint_eq(v[0]->inv_samples[1], 0); /* kv gone */
	/* the BPF part's figures were counters: its rows still read, under
	 * a state nobody reported */
	ck_assert_ptr_nonnull(window_sched(v[0]));
	ck_assert_uint_eq(window_sched(v[0])->state, VBPF_UNKNOWN);
	ck_assert_uint_eq(window_sched(v[0])->switches, 0);
	ck_assert_uint_eq(window_sched(v[0])->nuids, window_sched(w)->nuids);
	ck_assert_uint_eq(window_sched(v[0])->nprocs, window_sched(w)->nprocs);
	eq_proc(&window_sched(v[0])->proc[1], &window_sched(w)->proc[1]);
	{
		/* written again (as salvage does): its rows, no counters,
		 * so it reads back the same */
		char p2[PATH_MAX + 8];
		struct store *s2;
		struct window **v2;
		size_t n2;

		snprintf(p2, sizeof(p2), "%s.again", path);
		s2 = open_at(p2, NULL);
		ck_assert_int_eq(store_put(s2, v[0]), 0);
		load_all(s2, &v2, &n2);
		ck_assert_uint_eq(n2, 1);
		ck_assert_ptr_nonnull(window_sched(v2[0]));
		ck_assert_uint_eq(window_sched(v2[0])->state, VBPF_UNKNOWN);
		ck_assert_uint_eq(window_sched(v2[0])->nprocs,
		    window_sched(w)->nprocs);
		eq_proc(&window_sched(v2[0])->proc[2],
		    &window_sched(w)->proc[2]);
		ck_assert_uint_eq(blob_errors(s2), 0);
		free_windows(v2, n2);
		store_close(s2);
	}
	sf_eq_cpu(&w->all, &v[0]->all, -1); /* sys read */
	ck_assert_uint_eq(v[0]->psi[PSI_MEMORY].d_some_us,
	    w->psi[PSI_MEMORY].d_some_us);
	free_windows(v, n);

	/* truncated varints in a well-framed payload, each part */
	hex_frame(STORE_SYS_PART, STORE_SYS_VERSION, trunc, sizeof(trunc),
	    false, hex, sizeof(hex));
	set_blob(s, "sys", hex);
	hex_frame(STORE_BPFROWS_PART, STORE_BPFROWS_VERSION, trunc,
	    sizeof(trunc), true, hex, sizeof(hex));
	set_blob(s, "bpf", hex);
	e0 = blob_errors(s);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, 1);
	/* kv (still damaged), sys and bpf: the BPF rows are read without
	 * the counters too */
	ck_assert_uint_eq(blob_errors(s), e0 + 3);
	ck_assert_ptr_null(window_sched(v[0]));
	ck_assert_uint_eq(v[0]->all.d.user, 0);	    /* sys gone */
	ck_assert_uint_eq(v[0]->d_ctxt, w->d_ctxt); /* the window row reads */
	free_windows(v, n);

	/* another part's frame where kv belongs */
	ck_assert_int_eq(store_exec(s, "DELETE FROM windows", NULL, 0), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_exec(s, "UPDATE window_parts SET kv = sys", NULL,
			     0),
	    0);
	e0 = blob_errors(s);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(blob_errors(s), e0 + 1);
	sf_eq_cpu(&w->all, &v[0]->all, -1);
	ck_assert_uint_eq(v[0]->inv_samples[1], 0);
	free_windows(v, n);

	/* a later version of the BPF rows: the counters read, no rows */
	ck_assert_int_eq(store_exec(s, "DELETE FROM windows", NULL, 0), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	hex_frame(STORE_BPFROWS_PART, STORE_BPFROWS_VERSION + 1, "\0\0", 2,
	    false, hex, sizeof(hex));
	set_blob(s, "bpf", hex);
	e0 = blob_errors(s);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(blob_errors(s), e0 + 1);
	ck_assert_ptr_nonnull(window_sched(v[0]));
	ck_assert_uint_eq(window_sched(v[0])->switches,
	    window_sched(w)->switches);
	ck_assert_uint_eq(window_sched(v[0])->nuids, 0);
	ck_assert_uint_eq(v[0]->inv_samples[1], w->inv_samples[1]);
	free_windows(v, n);

	/* a key id the dictionary does not have: that entry alone goes */
	ck_assert_int_eq(store_exec(s, "DELETE FROM windows", NULL, 0), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	{
		char sql[128];

		snprintf(sql, sizeof(sql),
		    "UPDATE window_key SET id = id + 100000 WHERE kind = 'vmstat'");
		ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
	}
	store_close(s); /* its reader's names are cached: a new handle */
	s = open_at(path, NULL);
	e0 = blob_errors(s);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_gt(blob_errors(s), e0);
	ck_assert_uint_eq(v[0]->vm_have, 0);
	ck_assert_uint_eq(v[0]->inv_samples[1], w->inv_samples[1]);
	free_windows(v, n);
	window_free(w);
	store_close(s);
}
END_TEST

/* --------------------------------------------------------------- spool */

/* A reader (both files through its views) reads fix_window(0 .. n - 1). */
static void
reader_check(struct store *s, size_t want)
{
	struct window **v;
	struct store *rc;
	size_t n, i;

	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	load_all(rc, &v, &n);
	store_conn_end(rc);
	ck_assert_uint_eq(n, want);
	for (i = 0; i < n; i++) {
		struct window *w = fix_window((unsigned)i);

		eq_window(w, v[i]);
		window_free(w);
	}
	free_windows(v, n);
	store_conn_close(rc);
}

START_TEST(spool_moves_parts)
{
	struct store *s = open_at(path, spool);
	struct window **v;
	size_t n, i;

	for (i = 0; i < 4; i++)
		put_fix(s, (unsigned)i);
	/* waiting in the spool: its parts and keys there, readable */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_parts"), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM spool.window_parts"),
	    4);
	ck_assert_int_gt(q_int(s, "SELECT count(*) FROM spool.window_key"), 50);
	reader_check(s, 4);
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM spool.window_parts"),
	    0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM spool.window_key"), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM window_parts"), 4);
	/* one id per key in both files: the next windows write only keys
	 * the main file has not got, with ids it has not used */
	for (i = 4; i < 8; i++)
		put_fix(s, (unsigned)i);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM spool.window_key s,"
			     " main.window_key m WHERE m.id = s.id OR"
			     " (m.kind = s.kind AND m.key = s.key)"),
	    0);
	reader_check(s, 8);
	ck_assert_int_eq(store_flush(s), 0);
	load_all(s, &v, &n);
	ck_assert_uint_eq(n, 8);
	for (i = 0; i < n; i++) {
		struct window *w = fix_window((unsigned)i);

		eq_window(w, v[i]);
		window_free(w);
	}
	free_windows(v, n);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM (SELECT kind, key FROM"
			     " main.window_key GROUP BY kind, key"
			     " HAVING count(*) > 1)"),
	    0);
	store_close(s);
}
END_TEST

/* ----------------------------------------------------------------- main */

/* Asserts only inside a test: the fixture is made by one. */
START_TEST(make_fixture)
{
	const char *p = getenv("VITALS_MAKE_V8_FIXTURE");
	struct store *s = open_at(p, NULL);
	unsigned i;

	for (i = 0; i < FIX_N; i++) {
		struct window *w = fix_window(i);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	store_close(s);
}
END_TEST

int
main(void)
{
	const char *fix = getenv("VITALS_MAKE_V8_FIXTURE");
	Suite *su = suite_create("store_v9");
	TCase *tc = tcase_create("v9");
	SRunner *sr;
	int nf;

	if (fix != NULL) {
		tcase_add_test(tc, make_fixture);
		goto run;
	}
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, migrate_v8_exact);
	tcase_add_test(tc, rollup_sums_exact);
	tcase_add_test(tc, corrupt_parts);
	tcase_add_test(tc, spool_moves_parts);
run:
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
