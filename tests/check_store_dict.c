/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Trained dictionaries on real files (store_dict.c, schema v16): a
 * maintenance pass trains one per list once the file holds an hour of
 * level-0 windows; the windows written after it are frames of codec 2 and
 * read back exactly, whether the dictionaries come from this process or
 * from the file; sums over them are exact; a damaged or missing
 * dictionary, or a frame naming one the file has not got, loses the blobs
 * made with it alone (counted), never the rest of a window or any older
 * blob.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "store/store_codec.h"
#include "store/store_int.h"
#include "store/store_tasks.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define T0 (1699999800LL * NSEC_PER_SEC)
#define BOOT "2b9e1c7a-5d3f-4e21-8c6b-7a0f9e1d2c3b"
#define NTRAIN 400 /* windows before the first pass: over an hour */

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("dict", path, sizeof(path));
	store_zdict_reset();
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
	store_zdict_reset();
}

static struct store *
open_default(void)
{
	struct store_opts o;
	struct store *s = NULL;
	int r;

	store_opts_default(&o);
	/* rows edited in place by their table's name: level 0 in the
	 * main tables, not in tables per span (store_span.c) */
	o.no_spans = true;
	r = store_open(path, &o, &s);
	ck_assert_msg(r == 0, "store_open: %d", r);
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

static uint64_t
blob_errors(struct store *s)
{
	struct store_stats st;

	store_get_stats(s, &st);
	return st.blob_errors;
}

static struct window_task
mktask(int32_t id, int32_t tgid, uint64_t k)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.tgid = tgid;
	t.starttime = 1000 + (uint64_t)id;
	t.uid = 10000 + (uint32_t)tgid;
	snprintf(t.comm, sizeof(t.comm), "c%d", id);
	if (id == tgid)
		window_task_set_namef(&t, "com.example.app%d", id);
	else
		window_task_set_name(&t, t.comm);
	t.d_utime = (7 * k + (uint64_t)id) % 97;
	t.d_stime = (3 * k) % 41;
	t.d_minflt = (11 * k + 1) % 1000;
	t.d_majflt = k % 3;
	t.samples = 10;
	t.wall_ns = 10 * SEC;
	t.total_ticks = 2000;
	t.norm_ticks = 1000.125 + (double)(k % 5);
	t.rss_pages_max = 5000 + (13 * k) % 700 + (uint64_t)id;
	t.rss_pages_last = t.rss_pages_max - k % 17;
	return t;
}

/* Window k's BPF rows: one uid, the 12 processes (each the sum of its
 * threads, as the encoder derives them) and their 36 threads, each with
 * a run-queue histogram of 4 to 8 slots. */
static void
mkbpf(struct window *w, unsigned k)
{
	struct window_bpf *b = window_sched_make(w, true);
	unsigned i, j, sl;

	ck_assert_ptr_nonnull(b);
	b->state = VBPF_ON_LOADED;
	ck_assert_int_eq(window_bpf_reserve(b, 1, 12, 36), 0);
	b->nuids = 1;
	b->uid[0].uid = 10000;
	for (i = 0; i < 12; i++) {
		struct window_bpf_proc *p = &b->proc[b->nprocs++];

		p->tgid = 100 + 10 * (int32_t)i;
		p->starttime = 1000 + (uint64_t)p->tgid;
		for (j = 1; j <= 3; j++) {
			struct window_bpf_thread *t = &b->thread[b->nthreads++];

			t->tid = p->tgid + (int32_t)j;
			t->tgid = p->tgid;
			t->uid = 10000;
			t->starttime = 1000 + (uint64_t)t->tid;
			t->oncpu_ns = 1000000ull * (j + 1) +
			    977ull * ((k + i * j) % 101);
			for (sl = 0; sl < 4 + (k + j) % 5; sl++) {
				t->rq_hist[sl] = (k * (sl + 1) + i + j) % 23 +
				    1;
				t->rq_count += t->rq_hist[sl];
				p->rq_hist[sl] += t->rq_hist[sl];
			}
			t->rq_ns = 1500 * t->rq_count + k % 1000;
			p->oncpu_ns += t->oncpu_ns;
			p->rq_ns += t->rq_ns;
			p->rq_count += t->rq_count;
		}
		b->uid[0].oncpu_ns += p->oncpu_ns;
		b->oncpu_ns += p->oncpu_ns;
		b->rq_ns += p->rq_ns;
		b->rq_count += p->rq_count;
	}
}

/* Window k: 12 processes with 3 threads each, 4 CPUs, a few counters
 * and gauges and BPF rows, so that every list has payloads to train
 * on. */
static struct window *
mkwin(unsigned k)
{
	struct window *w = window_new(k, 4);
	struct window_task t;
	unsigned i, j, c;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), BOOT);
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)k * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = T0 + (int64_t)k * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	w->all.d.user = 400 + k % 50;
	w->all.d.idle = 3600 - k % 50;
	w->all.samples = 10;
	w->all.wall_ns = 10 * SEC;
	for (c = 0; c < 4; c++) {
		w->cpu[c].d.user = 100 + (k + c) % 13;
		w->cpu[c].d.idle = 900 - (k + c) % 13;
		w->cpu[c].samples = 10;
		w->cpu[c].wall_ns = 10 * SEC;
		w->cpu[c].online_end = true;
		w->cpu[c].max_khz = 2000000;
		w->cpu[c].capacity = c < 2 ? 512 : 1024;
		gauge_add(&w->cpu[c].cur_khz, 1000000.0 + 1000.0 * (k % 7));
	}
	w->d_ctxt = 5000 + k;
	w->d_vm[VM_PGFAULT] = 100 + k % 10;
	w->vm_have = 1u << VM_PGFAULT;
	gauge_add(&w->mem_kb[MI_MEMFREE], 100000.0 + (double)(k % 100));
	gauge_add(&w->mem_kb[MI_MEMAVAILABLE], 200000.0 - (double)(k % 90));
	w->mem_have = 1u << MI_MEMFREE | 1u << MI_MEMAVAILABLE;
	gauge_add(&w->load1, 1.25);
	for (i = 0; i < 12; i++) {
		int32_t pid = 100 + 10 * (int32_t)i;

		t = mktask(pid, pid, k + i);
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
		for (j = 1; j <= 3; j++) {
			t = mktask(pid + (int32_t)j, pid, 2 * k + i + j);
			ck_assert_int_eq(window_add_task(w, true, &t), 0);
		}
	}
	mkbpf(w, k);
	return w;
}

static void
put_n(struct store *s, unsigned from, unsigned to)
{
	unsigned k;

	for (k = from; k < to; k++) {
		struct window *w = mkwin(k);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
}

/* The codec of window seq's blob in table.col (-1: NULL). */
static int
codec_of(struct store *s, const char *table, const char *col, unsigned seq)
{
	char sql[200];
	sqlite3_stmt *st;
	struct store_frame f;
	int c = -1;

	snprintf(sql, sizeof(sql),
	    "SELECT x.%s FROM %s x JOIN windows w ON w.id = x.window_id"
	    " WHERE w.seq = %u",
	    col, table, seq);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	if (sqlite3_column_type(st, 0) != SQLITE_NULL &&
	    store_frame_get(sqlite3_column_blob(st, 0),
		(size_t)sqlite3_column_bytes(st, 0), &f) == 0) {
		c = (int)f.codec;
		store_frame_release(&f);
	}
	sqlite3_finalize(st);
	return c;
}

/* An hour and more of windows, a pass (the dictionaries), then more. */
static struct store *
fill(unsigned after)
{
	struct store *s = open_default();

	put_n(s, 0, NTRAIN);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM blob_dict"), 0);
	ck_assert_int_eq(store_maintain(s, T0 + (NTRAIN + 6) * 10 * SEC), 0);
	/* CPU (4), the counters of version 2 (7), the task lists of
	 * version 3 (8, 9) and the BPF rows of version 4 (10); the slots of
	 * version 1 (1, 2, 3) and of task rows version 2 (5, 6) are no
	 * longer trained */
	ck_assert_int_eq(q_int(s,
			     "SELECT count(DISTINCT slot) FROM"
			     " blob_dict WHERE slot IN (4, 7, 8, 9, 10)"),
	    5);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM blob_dict WHERE slot"
			     " NOT IN (4, 7, 8, 9, 10)"),
	    0);
	put_n(s, NTRAIN, NTRAIN + after);
	return s;
}

/* Window k's BPF rows as mkbpf made them, or none (their blob lost);
 * its window-level figures, or none (the counters' blob lost: the rows
 * then load under an unknown state). */
static void
same_bpf(const struct window *got, unsigned k, bool rows, bool counters)
{
	struct window *want = mkwin(k);
	const struct window_bpf *a = window_sched(got), *b = window_sched(want);
	size_t i;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->state, counters ? b->state : VBPF_UNKNOWN);
	ck_assert_uint_eq(a->oncpu_ns, counters ? b->oncpu_ns : 0);
	ck_assert_uint_eq(a->nthreads, rows ? b->nthreads : 0);
	ck_assert_uint_eq(a->nprocs, rows ? b->nprocs : 0);
	for (i = 0; i < a->nthreads; i++)
		ck_assert(memcmp(&a->thread[i], &b->thread[i],
			      sizeof(a->thread[i])) == 0);
	for (i = 0; i < a->nprocs; i++) {
		ck_assert_int_eq(a->proc[i].tgid, b->proc[i].tgid);
		ck_assert_uint_eq(a->proc[i].oncpu_ns, b->proc[i].oncpu_ns);
		ck_assert_uint_eq(a->proc[i].rq_ns, b->proc[i].rq_ns);
		ck_assert(memcmp(a->proc[i].rq_hist, b->proc[i].rq_hist,
			      sizeof(a->proc[i].rq_hist)) == 0);
	}
	window_free(want);
}

static void
same_window(const struct window *got, unsigned k, bool procs, bool threads)
{
	struct window *want = mkwin(k);
	size_t i;

	ck_assert_uint_eq(got->all.d.user, want->all.d.user);
	ck_assert_uint_eq(got->all.d.idle, want->all.d.idle);
	for (i = 0; i < 4; i++) {
		ck_assert_uint_eq(got->cpu[i].d.user, want->cpu[i].d.user);
		ck_assert_int_eq(got->cpu[i].capacity, want->cpu[i].capacity);
		ck_assert_double_eq(got->cpu[i].cur_khz.sum,
		    want->cpu[i].cur_khz.sum);
	}
	ck_assert_uint_eq(got->d_vm[VM_PGFAULT], want->d_vm[VM_PGFAULT]);
	ck_assert_double_eq(got->mem_kb[MI_MEMFREE].last,
	    want->mem_kb[MI_MEMFREE].last);
	ck_assert_double_eq(got->load1.sum, want->load1.sum);
	ck_assert_uint_eq(got->nprocs, procs ? want->nprocs : 0);
	ck_assert_uint_eq(got->nthreads, threads ? want->nthreads : 0);
	for (i = 0; i < got->nprocs; i++)
		tu_task_eq(&got->procs[i], &want->procs[i]);
	for (i = 0; i < got->nthreads; i++)
		tu_task_eq(&got->threads[i], &want->threads[i]);
	same_bpf(got, k, true, true);
	window_free(want);
}

/*
 * The dictionaries are trained once, used by every list after, and the
 * windows read back exactly: with them in the process and from the file.
 */
START_TEST(dict_trained_used_round_trip)
{
	struct store *s = fill(12);
	struct window **v;
	struct window_task *top;
	size_t n, nt, i;
	unsigned k, pass;

	ck_assert_int_eq(codec_of(s, "window_tasks", "procs", 10),
	    STORE_CODEC_ZSTD);
	ck_assert_int_eq(codec_of(s, "window_tasks", "procs", NTRAIN + 3),
	    STORE_CODEC_ZDICT);
	ck_assert_int_eq(codec_of(s, "window_tasks", "threads", NTRAIN + 3),
	    STORE_CODEC_ZDICT);
	ck_assert_int_eq(codec_of(s, "window_parts", "kv", NTRAIN + 3),
	    STORE_CODEC_ZDICT);
	ck_assert_int_eq(codec_of(s, "window_parts", "sys", NTRAIN + 3),
	    STORE_CODEC_ZDICT);
	ck_assert_int_eq(codec_of(s, "window_parts", "bpf", 10),
	    STORE_CODEC_ZSTD);
	ck_assert_int_eq(codec_of(s, "window_parts", "bpf", NTRAIN + 3),
	    STORE_CODEC_ZDICT);
	/* a second pass trains none again */
	ck_assert_int_eq(store_maintain(s, T0 + (NTRAIN + 20) * 10 * SEC), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM blob_dict"), 5);
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			/* the dictionaries from the file alone */
			store_close(s);
			store_zdict_reset();
			s = open_default();
		}
		ck_assert_int_eq(store_windows(s, T0 + (NTRAIN - 2) * 10 * SEC,
				     T0 + (NTRAIN + 12) * 10 * SEC, 0, &v, &n),
		    0);
		ck_assert_uint_eq(n, 14);
		for (i = 0; i < n; i++)
			same_window(v[i], NTRAIN - 2 + (unsigned)i, true, true);
		for (i = 0; i < n; i++)
			window_free(v[i]);
		free(v);
		/* a top over old and new blobs: exact sums */
		ck_assert_int_eq(store_top(s, T0, T0 + (NTRAIN + 12) * 10 * SEC,
				     true, METRIC_CPU, 0, &top, &nt),
		    0);
		ck_assert_uint_eq(nt, 36);
		for (i = 0; i < nt; i++) {
			uint64_t ut = 0, mf = 0;

			for (k = 0; k < NTRAIN + 12; k++) {
				struct window *w = mkwin(k);
				size_t j;

				for (j = 0; j < w->nthreads; j++)
					if (w->threads[j].id == top[i].id) {
						ut += w->threads[j].d_utime;
						mf += w->threads[j].d_minflt;
					}
				window_free(w);
			}
			ck_assert_uint_eq(top[i].d_utime, ut);
			ck_assert_uint_eq(top[i].d_minflt, mf);
		}
		free(top);
		ck_assert_uint_eq(blob_errors(s), 0);
	}
	store_close(s);
}
END_TEST

/* Windows k0 .. k0 + n − 1 summed as a roll-up must sum them. */
static void
same_sums(const struct window *got, unsigned k0, unsigned n, bool threads)
{
	struct window *acc = mkwin(k0);
	unsigned k;
	size_t i, j;

	for (k = k0 + 1; k < k0 + n; k++) {
		struct window *w = mkwin(k);

		ck_assert_int_eq(window_merge(acc, w), 0);
		window_free(w);
	}
	ck_assert_uint_eq(got->all.d.user, acc->all.d.user);
	ck_assert_uint_eq(got->cpu[3].d.idle, acc->cpu[3].d.idle);
	ck_assert_uint_eq(got->d_vm[VM_PGFAULT], acc->d_vm[VM_PGFAULT]);
	ck_assert_double_eq(got->mem_kb[MI_MEMFREE].sum,
	    acc->mem_kb[MI_MEMFREE].sum);
	ck_assert_uint_eq(got->nprocs, acc->nprocs);
	ck_assert_uint_eq(got->nthreads, threads ? acc->nthreads : 0);
	for (i = 0; i < got->nprocs; i++) {
		for (j = 0; j < acc->nprocs; j++)
			if (acc->procs[j].id == got->procs[i].id)
				break;
		ck_assert_uint_lt(j, acc->nprocs);
		ck_assert_uint_eq(got->procs[i].d_utime, acc->procs[j].d_utime);
		ck_assert_uint_eq(got->procs[i].d_minflt,
		    acc->procs[j].d_minflt);
		ck_assert_uint_eq(got->procs[i].samples, acc->procs[j].samples);
		ck_assert_uint_eq(got->procs[i].rss_pages_max,
		    acc->procs[j].rss_pages_max);
	}
	window_free(acc);
}

/*
 * Roll-ups of windows written with dictionaries: a minute and then ten
 * minutes sum them exactly (level 2 without the thread rows), and the
 * rolled windows are written with the dictionaries too.
 */
START_TEST(dict_rollup_sums_exact)
{
	struct store *s = fill(20);
	struct window **v;
	size_t n, i;

	/* level 0 older than 6 h: minutes; windows 402 .. 407 are one,
	 * every one of them made with the dictionaries */
	ck_assert_int_eq(store_maintain(s, T0 + 8 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0 + 4020 * SEC, T0 + 4080 * SEC, 0,
			     &v, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	same_sums(v[0], 402, 6, true);
	ck_assert_int_eq(codec_of(s, "window_tasks", "threads", 402),
	    STORE_CODEC_ZDICT);
	window_free(v[0]);
	free(v);
	/* a day later: ten minutes; [3,600, 4,200) s holds the minutes
	 * of windows 360 .. 419, the last 20 made with the dictionaries */
	ck_assert_int_eq(store_maintain(s, T0 + 32 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0 + 3600 * SEC, T0 + 4200 * SEC, 0,
			     &v, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 2);
	same_sums(v[0], 360, NTRAIN + 20 - 360, false);
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	ck_assert_uint_eq(blob_errors(s), 0);
	store_close(s);
}
END_TEST

/* What is done to the file's dictionaries, with the process's gone. */
static const struct dict_damage {
	const char *what;
	const char *sql;
	unsigned slot; /* whose blobs are lost */
	unsigned load_errors;
} dict_damages[] = {
	{ "a byte of the processes' dictionary flipped",
	    "UPDATE blob_dict SET dict = substr(dict, 1, 99) || CASE WHEN"
	    " substr(dict, 100, 1) = x'00' THEN x'01' ELSE x'00' END ||"
	    " substr(dict, 101) WHERE slot = 8",
	    DSLOT_PROCS3, 1 },
	{ "the threads' dictionary deleted",
	    "DELETE FROM blob_dict WHERE slot = 9", DSLOT_THREADS3, 0 },
	{ "a byte of the BPF rows' dictionary flipped",
	    "UPDATE blob_dict SET dict = substr(dict, 1, 199) || CASE WHEN"
	    " substr(dict, 200, 1) = x'00' THEN x'01' ELSE x'00' END ||"
	    " substr(dict, 201) WHERE slot = 10",
	    DSLOT_BPF4, 1 },
	{ "the counters' dictionary cut short",
	    "UPDATE blob_dict SET dict = substr(dict, 1, 64) WHERE slot = 7",
	    DSLOT_KV2, 1 },
	/* the row is counted, but its bytes are what the frames name (by
	 * their CRC): they are registered under that and everything reads */
	{ "the CPU dictionary's id changed",
	    "UPDATE blob_dict SET id = id + 1 WHERE slot = 4", DSLOT_NONE, 1 },
};

/*
 * A damaged or missing dictionary: the blobs made with it are refused
 * and counted, each window's other lists and parts read, and every blob
 * made before it (plain zstd) reads whole.
 */
START_TEST(dict_damage_confined)
{
	const struct dict_damage *d = &dict_damages[_i];
	struct store *s = fill(4);
	struct window **v;
	size_t n, i;

	store_close(s);
	s = open_default();
	ck_assert_msg(store_exec(s, d->sql, NULL, 0) == 0, "%s", d->sql);
	store_close(s);
	store_zdict_reset();
	s = open_default();
	ck_assert_uint_eq(blob_errors(s), d->load_errors);
	ck_assert_int_eq(store_windows(s, T0 + (NTRAIN - 2) * 10 * SEC,
			     T0 + (NTRAIN + 4) * 10 * SEC, 0, &v, &n),
	    0);
	ck_assert_uint_eq(n, 6);
	/* the two windows before: whole */
	same_window(v[0], NTRAIN - 2, true, true);
	same_window(v[1], NTRAIN - 1, true, true);
	for (i = 2; i < n; i++) {
		const struct window *w = v[i];
		struct window *want = mkwin(NTRAIN - 2 + (unsigned)i);

		ck_assert_uint_eq(w->nprocs,
		    d->slot == DSLOT_PROCS3 ? 0 : want->nprocs);
		ck_assert_uint_eq(w->nthreads,
		    d->slot == DSLOT_THREADS3 ? 0 : want->nthreads);
		ck_assert_uint_eq(w->d_vm[VM_PGFAULT],
		    d->slot == DSLOT_KV2 ? 0 : want->d_vm[VM_PGFAULT]);
		ck_assert_uint_eq(w->cpu[2].d.user,
		    d->slot == DSLOT_SYS ? 0 : want->cpu[2].d.user);
		/* the BPF part's window figures are counters: with them
		 * lost its rows still read */
		same_bpf(w, NTRAIN - 2 + (unsigned)i, d->slot != DSLOT_BPF4,
		    d->slot != DSLOT_KV2);
		/* the window row itself always */
		ck_assert_uint_eq(w->d_ctxt, want->d_ctxt);
		window_free(want);
	}
	ck_assert_uint_eq(blob_errors(s),
	    d->load_errors + (d->slot != DSLOT_NONE ? 4 : 0));
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	store_close(s);
}
END_TEST

/* A blob of codec 2 naming a dictionary the file has not got (trained
 * elsewhere): that blob alone is lost, counted. */
START_TEST(dict_unknown_id_refused)
{
	struct store *s = fill(3);
	struct store_enc b = { 0 }, e = { 0 };
	struct window *w = mkwin(NTRAIN + 1);
	size_t len[400], dn;
	struct window **v;
	struct store_frame f;
	sqlite3_stmt *st;
	uint32_t id;
	void *dict;
	size_t n, i;

	/* a dictionary of other payloads, in this process only */
	for (i = 0; i < 400; i++) {
		size_t at = b.b.len;

		store_enc_u(&b, i * 977 % 1000);
		store_enc_str(&b, "another store's payloads");
		store_enc_u(&b, i);
		len[i] = b.b.len - at;
	}
	ck_assert_int_eq(store_zdict_train(b.b.p, len, 400, 1024, &dict, &dn),
	    0);
	ck_assert_int_eq(store_zdict_add(dict, dn, &id), 0);
	/* the window's own threads, framed with that dictionary: they
	 * decode while this process has it */
	ck_assert_int_eq(sqlite3_prepare_v2(s->db,
			     "SELECT threads FROM window_tasks WHERE"
			     " window_id = (SELECT id FROM windows WHERE"
			     " seq = ?1)",
			     -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_int(st, 1, NTRAIN + 1);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(store_frame_get(sqlite3_column_blob(st, 0),
			     (size_t)sqlite3_column_bytes(st, 0), &f),
	    0);
	ck_assert_int_eq(store_frame_put_zdict(&e, STORE_TASKS_PART,
			     STORE_TASKS_VERSION, f.payload, f.len, id),
	    0);
	store_frame_release(&f);
	sqlite3_finalize(st);
	ck_assert_int_eq(store_frame_get(e.b.p, e.b.len, &f), 0);
	ck_assert_uint_eq(f.codec, STORE_CODEC_ZDICT);
	ck_assert_uint_eq(f.dict, id);
	store_frame_release(&f);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db,
			     "UPDATE window_tasks SET threads = ?1 WHERE"
			     " window_id = (SELECT id FROM windows WHERE"
			     " seq = ?2)",
			     -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_blob(st, 1, e.b.p, (int)e.b.len, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, NTRAIN + 1);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	store_close(s);
	store_zdict_reset();
	s = open_default();
	ck_assert_int_eq(store_windows(s, T0 + (NTRAIN + 1) * 10 * SEC,
			     T0 + (NTRAIN + 2) * 10 * SEC, 0, &v, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	same_window(v[0], NTRAIN + 1, true, false);
	ck_assert_uint_eq(blob_errors(s), 1);
	window_free(v[0]);
	free(v);
	window_free(w);
	free(dict);
	store_enc_release(&b);
	store_enc_release(&e);
	store_close(s);
}
END_TEST

/*
 * A file of an older store: task blobs of version 1 made with its
 * version-1 dictionaries (slots 1 and 2), or of version 2 with its
 * version-2 ones (slots 5 and 6). They read as written; the version-3
 * slots are trained only once the newest hour holds version 3 alone, and
 * the old dictionaries stay.
 */
START_TEST(dict_v1_slots_still_read)
{
	unsigned old = (unsigned)_i + 1; /* the payload version made */
	struct store *s = fill(4);
	struct window **v;
	sqlite3_stmt *st, *up;
	uint32_t id;
	size_t n, i;
	unsigned k;

	/* windows NTRAIN .. NTRAIN + 3: their lists as version `old` with
	 * the v3 slots' dictionaries, which then become slots 1 and 2, or 5
	 * and 6 */
	ck_assert_int_eq(sqlite3_prepare_v2(s->db,
			     "SELECT t.window_id, t.procs, t.threads FROM"
			     " window_tasks t JOIN windows w ON w.id ="
			     " t.window_id WHERE w.seq >= ?1",
			     -1, &st, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(s->db,
			     "UPDATE window_tasks SET procs = CASE WHEN ?3"
			     " THEN procs ELSE ?2 END, threads = CASE WHEN ?3"
			     " THEN ?2 ELSE threads END WHERE window_id = ?1",
			     -1, &up, NULL),
	    SQLITE_OK);
	sqlite3_bind_int(st, 1, NTRAIN);
	for (n = 0; sqlite3_step(st) == SQLITE_ROW;)
		for (k = 0; k < 2; k++) {
			struct store_enc pe = { 0 }, fe = { 0 };
			struct store_frame f;
			struct window_task *t;
			uint64_t *iid;
			size_t nt;

			ck_assert_int_eq(
			    store_frame_get(sqlite3_column_blob(st, 1 + (int)k),
				(size_t)sqlite3_column_bytes(st, 1 + (int)k),
				&f),
			    0);
			ck_assert_uint_eq(f.codec, STORE_CODEC_ZDICT);
			ck_assert_uint_eq(f.version, 3);
			id = f.dict;
			ck_assert_int_eq(store_tasks_get(f.payload, f.len, 3,
					     100, &t, &iid, &nt),
			    0);
			store_frame_release(&f);
			ck_assert_int_eq(old == 1 ?
				store_tasks_put_v1(&pe, t, iid, nt) :
				store_tasks_put_v2(&pe, t, iid, nt),
			    0);
			ck_assert_int_eq(store_frame_put_zdict(&fe,
					     STORE_TASKS_PART, old, pe.b.p,
					     pe.b.len, id),
			    0);
			sqlite3_bind_int64(up, 1, sqlite3_column_int64(st, 0));
			sqlite3_bind_blob(up, 2, fe.b.p, (int)fe.b.len,
			    SQLITE_TRANSIENT);
			sqlite3_bind_int(up, 3, (int)k);
			ck_assert_int_eq(sqlite3_step(up), SQLITE_DONE);
			sqlite3_reset(up);
			free(t);
			free(iid);
			store_enc_release(&pe);
			store_enc_release(&fe);
			n++;
		}
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(store_exec(s,
			     old == 1 ? "UPDATE blob_dict SET slot = slot - 7"
					" WHERE slot IN (8, 9)" :
					"UPDATE blob_dict SET slot = slot - 3"
					" WHERE slot IN (8, 9)",
			     NULL, 0),
	    0);
	store_close(s);
	store_zdict_reset();
	s = open_default();
	ck_assert_int_eq(store_windows(s, T0 + (NTRAIN - 2) * 10 * SEC,
			     T0 + (NTRAIN + 4) * 10 * SEC, 0, &v, &n),
	    0);
	ck_assert_uint_eq(n, 6);
	for (i = 0; i < n; i++)
		same_window(v[i], NTRAIN - 2 + (unsigned)i, true, true);
	for (i = 0; i < n; i++)
		window_free(v[i]);
	free(v);
	ck_assert_uint_eq(blob_errors(s), 0);
	/* the newest hour still holds the old version: no v3 dictionary
	 * yet */
	put_n(s, NTRAIN + 4, NTRAIN + 10);
	ck_assert_int_eq(store_maintain(s, T0 + (NTRAIN + 16) * 10 * SEC), 0);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM blob_dict WHERE slot IN"
			     " (8, 9)"),
	    0);
	/* an hour of version 3 on top: trained; the old ones stay */
	put_n(s, NTRAIN + 10, NTRAIN + 10 + 370);
	ck_assert_int_eq(store_maintain(s, T0 + (NTRAIN + 386) * 10 * SEC), 0);
	ck_assert_int_eq(q_int(s,
			     old == 1 ?
				 "SELECT count(DISTINCT slot) FROM"
				 " blob_dict WHERE slot IN (1, 2, 8, 9)" :
				 "SELECT count(DISTINCT slot) FROM"
				 " blob_dict WHERE slot IN (5, 6, 8, 9)"),
	    4);
	ck_assert_uint_eq(blob_errors(s), 0);
	store_close(s);
}
END_TEST

/*
 * A daemon without BPF (its windows' sched part off, no rows) writes no
 * BPF blob, and its store never looks for slot 10's payloads (a walk of
 * every level-0 window at each pass otherwise); the first blob turns
 * that on.
 */
START_TEST(dict_bpf_slot_only_once_written)
{
	struct store *s = open_default();
	struct window *w;
	unsigned k;

	for (k = 0; k < 8; k++) {
		struct window_bpf *b;

		w = mkwin(k);
		b = window_sched(w);
		b->state = VBPF_OFF_DISABLED;
		b->nuids = b->nprocs = b->nthreads = 0;
		b->oncpu_ns = b->rq_ns = b->rq_count = 0;
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert(!s->bpf_written);
	ck_assert_int_eq(q_int(s,
			     "SELECT count(*) FROM window_parts WHERE bpf IS"
			     " NOT NULL"),
	    0);
	w = mkwin(8);
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
	ck_assert(s->bpf_written);
	store_close(s);
}
END_TEST

static Suite *
suite(void)
{
	Suite *su = suite_create("store_dict");
	TCase *tc = tcase_create("dict");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dict_trained_used_round_trip);
	tcase_add_test(tc, dict_rollup_sums_exact);
	tcase_add_loop_test(tc, dict_damage_confined, 0,
	    (int)(sizeof(dict_damages) / sizeof(dict_damages[0])));
	tcase_add_test(tc, dict_unknown_id_refused);
	tcase_add_test(tc, dict_bpf_slot_only_once_written);
	tcase_add_loop_test(tc, dict_v1_slots_still_read, 0, 2);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
