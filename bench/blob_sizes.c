/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a window's parts take in the schema-v7 tables and in the compact
 * encoding (doc/storage.md, "Blobs"), measured on a v7 database:
 *
 *   blob_sizes [-l LEVEL] [-n ITER] DB
 *
 * opens DB read-only, reads every window's rows, encodes each part
 * (store_tasks.c, store_kv.c, store_sys.c, store_bpfrows.c), checks that
 * the payload decodes to the rows read, and prints per window the median
 * and p90 bytes of each part: v7 (dbstat: a table's pages apportioned to
 * windows by their rows), framed raw, framed zstd at levels 1, 3 and 6,
 * zstd 3 with a dictionary trained on the even windows (measured on the
 * odd ones), and encode / decode µs of the frame at zstd LEVEL (3).
 *
 * Ids as the compact store would give them: an instance id per (thread,
 * id, starttime) by first appearance, a key id per (table, kind, key).
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zdict.h>
#include <zstd.h>

#include "store/store_bpfrows.h"
#include "store/store_codec.h"
#include "store/store_kv.h"
#include "store/store_sys.h"
#include "store/store_tasks.h"
#include "window/window.h"

enum part { P_TASKS, P_KV, P_SYS, P_BPF, P_WINDOWS, P_ALL, P__MAX };
static const char *const part_name[P__MAX] = { "tasks", "kv", "sys", "bpfrows",
	"windows (v7 row)", "the four parts" };
/* the v7 tables of each part */
static const char *const part_tables[P__MAX][3] = {
	[P_TASKS] = { "window_task" },
	[P_KV] = { "window_count", "window_gauge" },
	[P_SYS] = { "window_cpu", "window_psi" },
	[P_BPF] = { "window_bpf_uid", "window_bpf_proc" },
	[P_WINDOWS] = { "windows", "windows_wall",
	    "sqlite_autoindex_windows_1" },
	[P_ALL] = { NULL },
};

enum col { C_V7, C_RAW, C_Z1, C_Z3, C_Z6, C_DICT, C_ENC, C_DEC, C__MAX };
static const char *const col_name[C__MAX] = { "v7", "raw", "zstd-1", "zstd-3",
	"zstd-6", "zstd-3+dict", "enc µs", "dec µs" };

struct series {
	double *v;
	size_t n, cap;
};

static struct series stat[P__MAX][C__MAX];
static struct series fresh; /* instances first seen, per window */
static sqlite3 *db;
static int iters = 50;
static int level = 3; /* the level timed */

static void
die(const char *what)
{
	fprintf(stderr, "blob_sizes: %s: %s\n", what,
	    db ? sqlite3_errmsg(db) : "");
	exit(1);
}

static void
add(enum part p, enum col c, double v)
{
	struct series *s = &stat[p][c];

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		if ((s->v = realloc(s->v, s->cap * sizeof(*s->v))) == NULL)
			die("out of memory");
	}
	s->v[s->n++] = v;
}

static void
fresh_add(double v)
{
	struct series *s = &fresh;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		if ((s->v = realloc(s->v, s->cap * sizeof(*s->v))) == NULL)
			die("out of memory");
	}
	s->v[s->n++] = v;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
quantile(struct series *s, double q)
{
	size_t i;

	if (s->n == 0)
		return NAN;
	qsort(s->v, s->n, sizeof(*s->v), cmp_d);
	i = (size_t)ceil(q * (double)s->n);
	return s->v[i ? i - 1 : 0];
}

static sqlite3_stmt *
prep(const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die(sql);
	return st;
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ------------------------------------------------------------ ids */

struct inst {
	int thread, id;
	uint64_t starttime, iid;
};
static struct inst *inst;
static size_t ninst, instcap; /* open addressing, cap a power of two */
static uint64_t next_iid = 1;

static size_t
inst_hash(int thread, int id, uint64_t st)
{
	uint64_t h = ((uint64_t)(uint32_t)id << 1 | (unsigned)thread) ^
	    (st * 0x9e3779b97f4a7c15ull);

	return (size_t)(h ^ (h >> 29));
}

static uint64_t
inst_id(int thread, int id, uint64_t st)
{
	size_t i, k;

	if (2 * (ninst + 1) > instcap) {
		struct inst *old = inst;
		size_t oldcap = instcap;

		instcap = instcap ? 2 * instcap : 1024;
		if ((inst = calloc(instcap, sizeof(*inst))) == NULL)
			die("out of memory");
		for (k = 0; k < oldcap; k++) {
			if (!old[k].iid)
				continue;
			for (i = inst_hash(old[k].thread, old[k].id,
				     old[k].starttime) &
				 (instcap - 1);
			     inst[i].iid; i = (i + 1) & (instcap - 1))
				;
			inst[i] = old[k];
		}
		free(old);
	}
	for (i = inst_hash(thread, id, st) & (instcap - 1); inst[i].iid;
	     i = (i + 1) & (instcap - 1))
		if (inst[i].thread == thread && inst[i].id == id &&
		    inst[i].starttime == st)
			return inst[i].iid;
	inst[i] = (struct inst){ thread, id, st, next_iid++ };
	ninst++;
	return inst[i].iid;
}

static char keys[1024][80];
static size_t nkeys;

static uint32_t
key_id(const char *table, const char *kind, const char *key)
{
	char k[80];
	size_t i;

	snprintf(k, sizeof(k), "%s/%s/%s", table, kind, key);
	for (i = 0; i < nkeys; i++)
		if (strcmp(keys[i], k) == 0)
			return (uint32_t)i + 1;
	if (nkeys == sizeof(keys) / sizeof(keys[0]))
		die("too many keys");
	snprintf(keys[nkeys++], sizeof(keys[0]), "%s", k);
	return (uint32_t)nkeys;
}

/* ------------------------------------------------------------ rows */

static void
col_gauge(sqlite3_stmt *st, int i, struct gauge *g)
{
	g->n = (uint32_t)sqlite3_column_int64(st, i);
	g->min = sqlite3_column_double(st, i + 1);
	g->max = sqlite3_column_double(st, i + 2);
	g->sum = sqlite3_column_double(st, i + 3);
	g->last = sqlite3_column_double(st, i + 4);
}

struct trow {
	uint64_t iid;
	struct window_task t;
};

static int
cmp_trow(const void *a, const void *b)
{
	uint64_t x = ((const struct trow *)a)->iid,
		 y = ((const struct trow *)b)->iid;

	return x < y ? -1 : x > y;
}

/* The window's task rows as the tasks part: figures by instance id. */
static void
enc_tasks(int64_t wid, struct store_enc *e, size_t *ret_rows)
{
	static sqlite3_stmt *st;
	struct trow *r = NULL;
	struct window_task *t, *back;
	uint64_t *iid, *biid;
	size_t n = 0, cap = 0, i, bn;

	if (st == NULL)
		st = prep("SELECT thread, id, starttime, d_utime, d_stime,"
			  " d_minflt, d_majflt, samples, wall_ns,"
			  " total_ticks, norm_ticks, rss_pages_max,"
			  " rss_pages_last, born, exited FROM window_task"
			  " WHERE window_id = ?");
	sqlite3_bind_int64(st, 1, wid);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct window_task *x;

		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			if ((r = realloc(r, cap * sizeof(*r))) == NULL)
				die("out of memory");
		}
		memset(&r[n], 0, sizeof(r[n]));
		x = &r[n].t;
		r[n].iid = inst_id(sqlite3_column_int(st, 0),
		    sqlite3_column_int(st, 1),
		    (uint64_t)sqlite3_column_int64(st, 2));
		x->d_utime = (uint64_t)sqlite3_column_int64(st, 3);
		x->d_stime = (uint64_t)sqlite3_column_int64(st, 4);
		x->d_minflt = (uint64_t)sqlite3_column_int64(st, 5);
		x->d_majflt = (uint64_t)sqlite3_column_int64(st, 6);
		x->samples = (uint32_t)sqlite3_column_int64(st, 7);
		x->wall_ns = (uint64_t)sqlite3_column_int64(st, 8);
		x->total_ticks = (uint64_t)sqlite3_column_int64(st, 9);
		x->norm_ticks = sqlite3_column_double(st, 10);
		x->rss_pages_max = (uint64_t)sqlite3_column_int64(st, 11);
		x->rss_pages_last = (uint64_t)sqlite3_column_int64(st, 12);
		x->born = sqlite3_column_int(st, 13) != 0;
		x->exited = sqlite3_column_int(st, 14) != 0;
		n++;
	}
	sqlite3_reset(st);
	qsort(r, n, sizeof(*r), cmp_trow);
	if ((t = calloc(n + 1, sizeof(*t))) == NULL ||
	    (iid = calloc(n + 1, sizeof(*iid))) == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		t[i] = r[i].t;
		iid[i] = r[i].iid;
	}
	if (store_tasks_put(e, t, iid, n) < 0)
		die("store_tasks_put");
	if (store_tasks_get(e->b.p, e->b.len, STORE_TASKS_VERSION, n, &back,
		&biid, &bn) < 0 ||
	    bn != n ||
	    (n &&
		(memcmp(back, t, n * sizeof(*t)) != 0 ||
		    memcmp(biid, iid, n * sizeof(*iid)) != 0)))
		die("tasks do not read back");
	free(back);
	free(biid);
	free(t);
	free(iid);
	free(r);
	*ret_rows = n;
}

static int
cmp_count(const void *a, const void *b)
{
	uint32_t x = ((const struct store_kv_count *)a)->key,
		 y = ((const struct store_kv_count *)b)->key;

	return x < y ? -1 : x > y;
}

static int
cmp_gauge(const void *a, const void *b)
{
	uint32_t x = ((const struct store_kv_gauge *)a)->key,
		 y = ((const struct store_kv_gauge *)b)->key;

	return x < y ? -1 : x > y;
}

static void
enc_kv(int64_t wid, struct store_enc *e, size_t *ret_rows)
{
	static sqlite3_stmt *sc, *sg;
	struct store_kv_count c[512];
	struct store_kv_gauge g[512];
	struct store_kv back;
	size_t nc = 0, ng = 0, i;

	if (sc == NULL) {
		sc = prep("SELECT kind, key, value FROM window_count"
			  " WHERE window_id = ?");
		sg = prep("SELECT kind, key, n, min, max, sum, last"
			  " FROM window_gauge WHERE window_id = ?");
	}
	sqlite3_bind_int64(sc, 1, wid);
	while (sqlite3_step(sc) == SQLITE_ROW && nc < 512) {
		memset(&c[nc], 0, sizeof(c[nc])); /* the pad is compared */
		c[nc].key = key_id("count",
		    (const char *)sqlite3_column_text(sc, 0),
		    (const char *)sqlite3_column_text(sc, 1));
		c[nc++].value = (uint64_t)sqlite3_column_int64(sc, 2);
	}
	sqlite3_reset(sc);
	sqlite3_bind_int64(sg, 1, wid);
	while (sqlite3_step(sg) == SQLITE_ROW && ng < 512) {
		memset(&g[ng], 0, sizeof(g[ng]));
		g[ng].key = key_id("gauge",
		    (const char *)sqlite3_column_text(sg, 0),
		    (const char *)sqlite3_column_text(sg, 1));
		col_gauge(sg, 2, &g[ng++].g);
	}
	sqlite3_reset(sg);
	qsort(c, nc, sizeof(*c), cmp_count);
	qsort(g, ng, sizeof(*g), cmp_gauge);
	if (store_kv_put(e, c, nc, g, ng) < 0)
		die("store_kv_put");
	if (store_kv_get(e->b.p, e->b.len, STORE_KV_VERSION, 512, &back) < 0 ||
	    back.ncount != nc || back.ngauge != ng ||
	    (nc && memcmp(back.count, c, nc * sizeof(*c)) != 0))
		die("kv does not read back");
	for (i = 0; i < ng; i++)
		if (memcmp(&back.gauge[i], &g[i], sizeof(g[i])) != 0)
			die("a gauge does not read back");
	store_kv_release(&back);
	*ret_rows = nc + ng;
}

static void
enc_sys(int64_t wid, struct store_enc *e, size_t *ret_rows)
{
	static sqlite3_stmt *sc, *sp;
	struct store_sys_cpu c[VITALS_CPU_MAX + 1];
	struct store_sys_psi p[PSI__MAX];
	struct store_sys back;
	size_t nc = 0, np = 0, i;
	const char *res;
	unsigned k;

	if (sc == NULL) {
		sc = prep("SELECT cpu, user, nice, system, idle, iowait, irq,"
			  " softirq, steal, guest, guest_nice, samples,"
			  " wall_ns, online_end, khz_n, khz_min, khz_max,"
			  " khz_sum, khz_last, max_khz, capacity, ratio_n,"
			  " ratio_min, ratio_max, ratio_sum, ratio_last"
			  " FROM window_cpu WHERE window_id = ?");
		sp = prep("SELECT resource, available, have_full, samples,"
			  " d_some_us, d_full_us, some_n, some_min, some_max,"
			  " some_sum, some_last, full_n, full_min, full_max,"
			  " full_sum, full_last FROM window_psi"
			  " WHERE window_id = ?");
	}
	sqlite3_bind_int64(sc, 1, wid);
	while (sqlite3_step(sc) == SQLITE_ROW && nc < VITALS_CPU_MAX + 1) {
		struct window_cpu *x = &c[nc].c;

		memset(&c[nc], 0, sizeof(c[nc]));
		c[nc].cpu = sqlite3_column_int(sc, 0);
		x->d.user = (uint64_t)sqlite3_column_int64(sc, 1);
		x->d.nice = (uint64_t)sqlite3_column_int64(sc, 2);
		x->d.system = (uint64_t)sqlite3_column_int64(sc, 3);
		x->d.idle = (uint64_t)sqlite3_column_int64(sc, 4);
		x->d.iowait = (uint64_t)sqlite3_column_int64(sc, 5);
		x->d.irq = (uint64_t)sqlite3_column_int64(sc, 6);
		x->d.softirq = (uint64_t)sqlite3_column_int64(sc, 7);
		x->d.steal = (uint64_t)sqlite3_column_int64(sc, 8);
		x->d.guest = (uint64_t)sqlite3_column_int64(sc, 9);
		x->d.guest_nice = (uint64_t)sqlite3_column_int64(sc, 10);
		x->samples = (uint32_t)sqlite3_column_int64(sc, 11);
		x->wall_ns = (uint64_t)sqlite3_column_int64(sc, 12);
		x->online_end = sqlite3_column_int(sc, 13) != 0;
		col_gauge(sc, 14, &x->cur_khz);
		x->max_khz = sqlite3_column_type(sc, 19) == SQLITE_NULL ?
		    -1 :
		    sqlite3_column_int64(sc, 19);
		x->capacity = sqlite3_column_type(sc, 20) == SQLITE_NULL ?
		    -1 :
		    sqlite3_column_int(sc, 20);
		col_gauge(sc, 21, &x->freq_ratio);
		nc++;
	}
	sqlite3_reset(sc);
	sqlite3_bind_int64(sp, 1, wid);
	while (sqlite3_step(sp) == SQLITE_ROW && np < PSI__MAX) {
		struct window_psi *x = &p[np].p;

		memset(&p[np], 0, sizeof(p[np]));
		res = (const char *)sqlite3_column_text(sp, 0);
		for (k = 0; k < PSI__MAX; k++)
			if (res && strcmp(res, psi_res_name(k)) == 0)
				break;
		p[np].res = k;
		x->available = sqlite3_column_int(sp, 1) != 0;
		x->have_full = sqlite3_column_int(sp, 2) != 0;
		x->samples = (uint32_t)sqlite3_column_int64(sp, 3);
		x->d_some_us = (uint64_t)sqlite3_column_int64(sp, 4);
		x->d_full_us = (uint64_t)sqlite3_column_int64(sp, 5);
		col_gauge(sp, 6, &x->some_avg10);
		col_gauge(sp, 11, &x->full_avg10);
		np++;
	}
	sqlite3_reset(sp);
	if (store_sys_put(e, c, nc, p, np) < 0)
		die("store_sys_put");
	if (store_sys_get(e->b.p, e->b.len, VITALS_CPU_MAX + 1, &back) < 0 ||
	    back.ncpu != nc || back.npsi != np)
		die("sys does not read back");
	for (i = 0; i < nc; i++)
		if (memcmp(&back.cpu[i], &c[i], sizeof(c[i])) != 0)
			die("a CPU row does not read back");
	for (i = 0; i < np; i++)
		if (memcmp(&back.psi[i], &p[i], sizeof(p[i])) != 0)
			die("a PSI row does not read back");
	store_sys_release(&back);
	*ret_rows = nc + np;
}

static void
hist_parse(const char *t, uint32_t *h)
{
	unsigned k = 0;
	char *end;

	while (t && *t && k < VITALS_BPF_RQ_SLOTS) {
		unsigned long v = strtoul(t, &end, 10);

		if (end == t)
			break;
		h[k++] = (uint32_t)v;
		t = *end == ',' ? end + 1 : end;
	}
}

static void
enc_bpf(int64_t wid, struct store_enc *e, size_t *ret_rows)
{
	static sqlite3_stmt *su, *sp;
	static struct window_bpf_uid u[1024];
	static struct window_bpf_proc p[1024];
	struct store_bpfrows back;
	size_t nu = 0, np = 0;

	if (su == NULL) {
		su = prep("SELECT uid, oncpu_ns, exited_ns, exited_tasks"
			  " FROM window_bpf_uid WHERE window_id = ?");
		sp = prep("SELECT tgid, starttime, oncpu_ns, rq_ns, rq_count,"
			  " rq_hist FROM window_bpf_proc WHERE window_id = ?");
	}
	sqlite3_bind_int64(su, 1, wid);
	while (sqlite3_step(su) == SQLITE_ROW && nu < 1024) {
		memset(&u[nu], 0, sizeof(u[nu]));
		u[nu].uid = (uint32_t)sqlite3_column_int64(su, 0);
		u[nu].oncpu_ns = (uint64_t)sqlite3_column_int64(su, 1);
		u[nu].exited_ns = (uint64_t)sqlite3_column_int64(su, 2);
		u[nu++].exited_tasks = (uint64_t)sqlite3_column_int64(su, 3);
	}
	sqlite3_reset(su);
	sqlite3_bind_int64(sp, 1, wid);
	while (sqlite3_step(sp) == SQLITE_ROW && np < 1024) {
		memset(&p[np], 0, sizeof(p[np]));
		p[np].tgid = sqlite3_column_int(sp, 0);
		p[np].starttime = (uint64_t)sqlite3_column_int64(sp, 1);
		p[np].oncpu_ns = (uint64_t)sqlite3_column_int64(sp, 2);
		p[np].rq_ns = (uint64_t)sqlite3_column_int64(sp, 3);
		p[np].rq_count = (uint64_t)sqlite3_column_int64(sp, 4);
		hist_parse((const char *)sqlite3_column_text(sp, 5),
		    p[np++].rq_hist);
	}
	sqlite3_reset(sp);
	if (store_bpfrows_put(e, u, nu, p, np) < 0)
		die("store_bpfrows_put");
	if (store_bpfrows_get(e->b.p, e->b.len, 1024, &back) < 0 ||
	    back.nuid != nu || back.nproc != np ||
	    (nu && memcmp(back.uid, u, nu * sizeof(*u)) != 0) ||
	    (np && memcmp(back.proc, p, np * sizeof(*p)) != 0))
		die("bpf rows do not read back");
	store_bpfrows_release(&back);
	*ret_rows = nu + np;
}

/* ------------------------------------------------------------ v7 */

static double table_bytes[P__MAX][3];
static double table_rows[P__MAX][3];

static void
v7_tables(void)
{
	sqlite3_stmt *st;
	char sql[256];
	unsigned p, k;

	st = prep("SELECT SUM(pgsize) FROM dbstat WHERE name = ?");
	for (p = 0; p < P__MAX; p++)
		for (k = 0; k < 3 && part_tables[p][k]; k++) {
			sqlite3_bind_text(st, 1, part_tables[p][k], -1,
			    SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW)
				table_bytes[p][k] = sqlite3_column_double(st,
				    0);
			sqlite3_reset(st);
		}
	sqlite3_finalize(st);
	for (p = 0; p < P__MAX; p++)
		for (k = 0; k < 3 && part_tables[p][k]; k++) {
			if (strncmp(part_tables[p][k], "window", 6) != 0 ||
			    strcmp(part_tables[p][k], "windows_wall") == 0)
				continue;
			snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s",
			    part_tables[p][k]);
			st = prep(sql);
			if (sqlite3_step(st) == SQLITE_ROW)
				table_rows[p][k] = sqlite3_column_double(st, 0);
			sqlite3_finalize(st);
		}
}

/* A window's share of its part's v7 pages, by the rows it has there. */
static double
v7_window(enum part p, int64_t wid)
{
	sqlite3_stmt *st;
	char sql[256];
	double b = 0, rows;
	unsigned k;

	if (p == P_WINDOWS) {
		for (k = 0; k < 3; k++)
			b += table_bytes[p][k];
		return b / table_rows[p][0];
	}
	for (k = 0; k < 3 && part_tables[p][k]; k++) {
		if (table_rows[p][k] == 0)
			continue;
		snprintf(sql, sizeof(sql),
		    "SELECT COUNT(*) FROM %s WHERE window_id = %lld",
		    part_tables[p][k], (long long)wid);
		st = prep(sql);
		rows = sqlite3_step(st) == SQLITE_ROW ?
		    sqlite3_column_double(st, 0) :
		    0;
		sqlite3_finalize(st);
		b += table_bytes[p][k] * rows / table_rows[p][k];
	}
	return b;
}

/* ------------------------------------------------------------ frames */

static size_t
frame_len(const struct store_enc *pl, enum part p, int level)
{
	struct store_enc e = { 0 };
	size_t n;

	if ((level ? store_frame_put_zstd(&e, p, 1, pl->b.p, pl->b.len, level) :
		     store_frame_put(&e, p, 1, pl->b.p, pl->b.len)) < 0)
		die("frame");
	n = e.b.len;
	store_enc_release(&e);
	return n;
}

typedef void (*enc_fn)(int64_t, struct store_enc *, size_t *);
static const enc_fn encoders[P_WINDOWS] = { enc_tasks, enc_kv, enc_sys,
	enc_bpf };

/* What a reader does: the frame, then the part's rows. */
static void
decode(enum part p, const struct store_enc *blob)
{
	struct store_frame f;
	struct window_task *t;
	uint64_t *iid;
	size_t n;
	int r = -1;

	if (store_frame_get(blob->b.p, blob->b.len, &f) < 0)
		die("frame does not read back");
	switch (p) {
	case P_TASKS:
		if ((r = store_tasks_get(f.payload, f.len, f.version, SIZE_MAX,
			 &t, &iid, &n)) == 0) {
			free(t);
			free(iid);
		}
		break;
	case P_KV: {
		struct store_kv kv;

		if ((r = store_kv_get(f.payload, f.len, f.version, SIZE_MAX,
			 &kv)) == 0)
			store_kv_release(&kv);
		break;
	}
	case P_SYS: {
		struct store_sys s;

		if ((r = store_sys_get(f.payload, f.len, SIZE_MAX, &s)) == 0)
			store_sys_release(&s);
		break;
	}
	default: {
		struct store_bpfrows b;

		if ((r = store_bpfrows_get_v(f.payload, f.len, f.version,
			 SIZE_MAX, &b)) == 0)
			store_bpfrows_release(&b);
		break;
	}
	}
	if (r < 0)
		die("payload does not read back");
	store_frame_release(&f);
}

static void
timing(enum part p, int64_t wid)
{
	struct store_enc pl = { 0 }, blob = { 0 };
	double t0, t1;
	size_t rows;
	int i;

	t0 = now_us();
	for (i = 0; i < iters; i++) {
		store_enc_release(&blob);
		/* the rows are in memory when the writer encodes: time the
		 * payload and the frame, not the SQLite reads */
		if (i == 0)
			encoders[p](wid, &pl, &rows);
		if (store_frame_put_zstd(&blob, p, 1, pl.b.p, pl.b.len, level) <
		    0)
			die("frame");
		if (i == 0)
			t0 = now_us();
	}
	t1 = now_us();
	add(p, C_ENC, iters > 1 ? (t1 - t0) / (iters - 1) : t1 - t0);
	t0 = now_us();
	for (i = 0; i < iters; i++)
		decode(p, &blob);
	add(p, C_DEC, (now_us() - t0) / iters);
	store_enc_release(&pl);
	store_enc_release(&blob);
}

/* zstd 3 with a dictionary trained on the even windows' payloads,
 * measured on the odd ones. */
static void
dict_sizes(enum part p, struct store_enc *pl, size_t n)
{
	size_t *len = calloc(n + 1, sizeof(*len)), total = 0, k = 0, i, dl;
	uint8_t *samples, dict[4096];
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	void *out;

	if (len == NULL || cc == NULL)
		die("out of memory");
	for (i = 0; i < n; i += 2)
		total += pl[i].b.len;
	if ((samples = malloc(total + 1)) == NULL)
		die("out of memory");
	for (i = 0, total = 0; i < n; i += 2) {
		memcpy(samples + total, pl[i].b.p, pl[i].b.len);
		total += pl[i].b.len;
		len[k++] = pl[i].b.len;
	}
	dl = ZDICT_trainFromBuffer(dict, sizeof(dict), samples, len,
	    (unsigned)k);
	if (!ZDICT_isError(dl))
		for (i = 1; i < n; i += 2) {
			size_t cap = ZSTD_compressBound(pl[i].b.len), z;

			if ((out = malloc(cap)) == NULL)
				die("out of memory");
			z = ZSTD_compress_usingDict(cc, out, cap, pl[i].b.p,
			    pl[i].b.len, dict, dl, 3);
			/* as a frame: the same header and CRC, and raw
			 * when the dictionary does not help */
			if (!ZSTD_isError(z))
				add(p, C_DICT,
				    (double)(frame_len(&pl[i], p, 0) -
					pl[i].b.len +
					(z < pl[i].b.len ? z + 3 :
							   pl[i].b.len)));
			free(out);
		}
	else
		fprintf(stderr, "blob_sizes: %s: no dictionary: %s\n",
		    part_name[p], ZDICT_getErrorName(dl));
	ZSTD_freeCCtx(cc);
	free(samples);
	free(len);
}

int
main(int argc, char **argv)
{
	sqlite3_stmt *st;
	int64_t *wid = NULL;
	struct store_enc *pl[P_WINDOWS];
	size_t nw = 0, cap = 0, i, rows, allrows[P_WINDOWS] = { 0 };
	char uri[4200];
	unsigned p, c;
	int o;

	while ((o = getopt(argc, argv, "l:n:")) != -1)
		if (o == 'n')
			iters = atoi(optarg) > 0 ? atoi(optarg) : 1;
		else if (o == 'l')
			level = atoi(optarg);
	if (optind + 1 != argc) {
		fprintf(stderr,
		    "usage: blob_sizes [-l LEVEL] [-n ITER] V7_DB\n");
		return 2;
	}
	snprintf(uri, sizeof(uri), "file:%s?mode=ro", argv[optind]);
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
		NULL) != SQLITE_OK)
		die(argv[optind]);
	v7_tables();
	st = prep("SELECT id FROM windows WHERE level = 0 ORDER BY id");
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (nw == cap) {
			cap = cap ? 2 * cap : 64;
			if ((wid = realloc(wid, cap * sizeof(*wid))) == NULL)
				die("out of memory");
		}
		wid[nw++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	for (p = 0; p < P_WINDOWS; p++)
		if ((pl[p] = calloc(nw + 1, sizeof(*pl[p]))) == NULL)
			die("out of memory");
	for (i = 0; i < nw; i++) {
		size_t before = ninst;

		add(P_WINDOWS, C_V7, v7_window(P_WINDOWS, wid[i]));
		for (p = 0; p < P_WINDOWS; p++) {
			add(p, C_V7, v7_window(p, wid[i]));
			encoders[p](wid[i], &pl[p][i], &rows);
			allrows[p] += rows;
			add(p, C_RAW, (double)frame_len(&pl[p][i], p, 0));
			add(p, C_Z1, (double)frame_len(&pl[p][i], p, 1));
			add(p, C_Z3, (double)frame_len(&pl[p][i], p, 3));
			add(p, C_Z6, (double)frame_len(&pl[p][i], p, 6));
			timing(p, wid[i]);
		}
		fresh_add((double)(ninst - before));
		for (c = 0; c < C_DICT; c++) {
			double sum = 0;

			for (p = 0; p < P_WINDOWS; p++)
				sum += stat[p][c].v[stat[p][c].n - 1];
			add(P_ALL, c, sum);
		}
	}
	for (p = 0; p < P_WINDOWS; p++)
		dict_sizes(p, pl[p], nw);
	printf("%zu windows, %zu instances (first seen per window: median"
	       " %.0f, p90 %.0f), %zu keys; bytes per window (median / p90),"
	       " µs per window (median / p90)\n\n",
	    nw, ninst, quantile(&fresh, 0.5), quantile(&fresh, 0.9), nkeys);
	printf("| part | rows/window |");
	for (c = 0; c < C__MAX; c++)
		printf(" %s |", col_name[c]);
	printf("\n|---|---:|");
	for (c = 0; c < C__MAX; c++)
		printf("---:|");
	printf("\n");
	for (p = 0; p < P__MAX; p++) {
		if (p < P_WINDOWS)
			printf("| %s | %.0f |", part_name[p],
			    nw ? (double)allrows[p] / (double)nw : 0);
		else
			printf("| %s | %s |", part_name[p],
			    p == P_WINDOWS ? "1" : "");
		for (c = 0; c < C__MAX; c++) {
			double m = quantile(&stat[p][c], 0.5),
			       q = quantile(&stat[p][c], 0.9);

			if (isnan(m))
				printf(" – |");
			else if (c >= C_ENC)
				printf(" %.1f / %.1f |", m, q);
			else
				printf(" %.0f / %.0f |", m, q);
		}
		printf("\n");
	}
	for (p = 0; p < P_WINDOWS; p++) {
		for (i = 0; i < nw; i++)
			store_enc_release(&pl[p][i]);
		free(pl[p]);
	}
	for (p = 0; p < P__MAX; p++)
		for (c = 0; c < C__MAX; c++)
			free(stat[p][c].v);
	free(fresh.v);
	free(wid);
	free(inst);
	sqlite3_close(db);
	return 0;
}
