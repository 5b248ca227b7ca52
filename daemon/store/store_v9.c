/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8 → v9, the C half of the step (store.c's migrations[]): every
 * window's rows of window_count, window_gauge, window_cpu, window_psi,
 * window_bpf_uid and window_bpf_proc become its window_parts row (keys
 * into window_key), read as the v8 code read them, so every figure reads
 * back the same; then the six tables go. Inside the step's transaction:
 * any failure rolls it all back, the file stays v8 and the next open
 * tries again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc.h"
#include "sched/sched.h"
#include "store/store_bpfrows.h"
#include "store/store_sys.h"
#include "window/window.h"
#include "store_int.h"

enum { M_WINS, M_COUNT, M_GAUGE, M_CPU, M_PSI, M_UID, M_PROC, M_INS, M__MAX };

static const char *const m_sql[M__MAX] = {
	[M_WINS] = "SELECT id FROM windows ORDER BY id",
	[M_COUNT] = "SELECT kind, key, value FROM window_count"
		    " WHERE window_id = ?",
	[M_GAUGE] = "SELECT kind, key, n, min, max, sum, last"
		    " FROM window_gauge WHERE window_id = ?",
	[M_CPU] = "SELECT " STORE_CPU_COLS " FROM window_cpu"
		  " WHERE window_id = ? ORDER BY cpu",
	[M_PSI] = "SELECT " STORE_PSI_COLS " FROM window_psi"
		  " WHERE window_id = ? ORDER BY resource",
	[M_UID] = "SELECT uid, oncpu_ns, exited_ns, exited_tasks"
		  " FROM window_bpf_uid WHERE window_id = ? ORDER BY uid",
	[M_PROC] = "SELECT tgid, starttime, oncpu_ns, rq_ns, rq_count,"
		   " rq_hist FROM window_bpf_proc WHERE window_id = ?"
		   " ORDER BY tgid, starttime",
	[M_INS] = "INSERT INTO window_parts (window_id, kv, sys, bpf)"
		  " VALUES (?1, ?2, ?3, ?4)",
};

static const char drop_sql[] = "DROP TABLE window_count;"
			       "DROP TABLE window_gauge;"
			       "DROP TABLE window_cpu;"
			       "DROP TABLE window_psi;"
			       "DROP TABLE window_bpf_uid;"
			       "DROP TABLE window_bpf_proc;";

/* A growing array of rows of one kind. */
struct arr {
	void *p;
	size_t n, cap, sz;
};

static void *
arr_push(struct arr *a)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		void *p = realloc(a->p, nc * a->sz);

		if (p == NULL)
			return NULL;
		a->p = p;
		a->cap = nc;
	}
	memset((char *)a->p + a->n * a->sz, 0, a->sz);
	return (char *)a->p + a->n++ * a->sz;
}

static uint64_t
col_u64(sqlite3_stmt *st, int i)
{
	return (uint64_t)sqlite3_column_int64(st, i);
}

/* NULL (an empty gauge) reads as 0, as v8's reader read it. */
static void
col_gauge(sqlite3_stmt *st, int i, struct gauge *g)
{
	g->n = (uint32_t)sqlite3_column_int64(st, i);
	g->min = sqlite3_column_double(st, i + 1);
	g->max = sqlite3_column_double(st, i + 2);
	g->sum = sqlite3_column_double(st, i + 3);
	g->last = sqlite3_column_double(st, i + 4);
}

static void
col_cpu(sqlite3_stmt *st, struct store_sys_cpu *r)
{
	struct window_cpu *c = &r->c;
	uint64_t *d = (uint64_t *)&c->d;
	int i;

	r->cpu = sqlite3_column_int(st, 0);
	for (i = 0; i < 10; i++) /* user .. guest_nice, in struct order */
		d[i] = col_u64(st, 1 + i);
	c->samples = (uint32_t)sqlite3_column_int64(st, 11);
	c->wall_ns = col_u64(st, 12);
	c->online_end = sqlite3_column_int(st, 13) != 0;
	col_gauge(st, 14, &c->cur_khz);
	c->max_khz = sqlite3_column_type(st, 19) == SQLITE_NULL ?
	    -1 :
	    sqlite3_column_int64(st, 19);
	c->capacity = sqlite3_column_type(st, 20) == SQLITE_NULL ?
	    -1 :
	    sqlite3_column_int(st, 20);
	col_gauge(st, 21, &c->freq_ratio);
}

/* false: a resource this build does not know (v8 skipped it too) */
static bool
col_psi(sqlite3_stmt *st, struct store_sys_psi *r)
{
	const char *res = (const char *)sqlite3_column_text(st, 0);
	struct window_psi *p = &r->p;
	unsigned i;

	for (i = 0; res != NULL && i < PSI__MAX; i++)
		if (strcmp(res, psi_res_name(i)) == 0)
			break;
	if (res == NULL || i == PSI__MAX)
		return false;
	r->res = i;
	p->available = sqlite3_column_int(st, 1) != 0;
	p->have_full = sqlite3_column_int(st, 2) != 0;
	p->samples = (uint32_t)sqlite3_column_int64(st, 3);
	p->d_some_us = col_u64(st, 4);
	p->d_full_us = col_u64(st, 5);
	col_gauge(st, 6, &p->some_avg10);
	col_gauge(st, 11, &p->full_avg10);
	return true;
}

/* v8's text histogram ("3,0,12"). */
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

struct mig {
	sqlite3_stmt *st[M__MAX];
	struct store_kw *kw;
	struct store_wacc acc;
	struct arr cpu, psi, uid, proc;
};

static int
step_rows(struct mig *m, unsigned q, int64_t id,
    int (*fn)(struct mig *m, sqlite3_stmt *st))
{
	sqlite3_stmt *st = m->st[q];
	int rc, r = SQLITE_OK;

	sqlite3_bind_int64(st, 1, id);
	while (r == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = fn(m, st);
	sqlite3_reset(st);
	if (r != SQLITE_OK)
		return r;
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
row_count(struct mig *m, sqlite3_stmt *st)
{
	const char *kind = (const char *)sqlite3_column_text(st, 0);
	const char *key;
	uint32_t k;
	int rc;

	if (kind == NULL)
		return SQLITE_OK;
	kind = strdup(kind); /* the next column may move it */
	key = (const char *)sqlite3_column_text(st, 1);
	if (kind == NULL)
		return SQLITE_NOMEM;
	rc = key == NULL ? SQLITE_OK : store_kw_id(m->kw, NULL, kind, key, &k);
	free((void *)kind);
	if (rc != SQLITE_OK || key == NULL)
		return rc;
	return store_wacc_count(&m->acc, k, col_u64(st, 2));
}

static int
row_gauge(struct mig *m, sqlite3_stmt *st)
{
	const char *kind = (const char *)sqlite3_column_text(st, 0);
	const char *key;
	struct gauge g;
	uint32_t k;
	int rc;

	if (kind == NULL)
		return SQLITE_OK;
	kind = strdup(kind);
	key = (const char *)sqlite3_column_text(st, 1);
	if (kind == NULL)
		return SQLITE_NOMEM;
	rc = key == NULL ? SQLITE_OK : store_kw_id(m->kw, NULL, kind, key, &k);
	free((void *)kind);
	if (rc != SQLITE_OK || key == NULL)
		return rc;
	col_gauge(st, 2, &g);
	return store_wacc_gauge(&m->acc, k, &g);
}

static int
row_cpu(struct mig *m, sqlite3_stmt *st)
{
	struct store_sys_cpu *c = arr_push(&m->cpu);

	if (c == NULL)
		return SQLITE_NOMEM;
	col_cpu(st, c);
	return SQLITE_OK;
}

static int
row_psi(struct mig *m, sqlite3_stmt *st)
{
	struct store_sys_psi *p = arr_push(&m->psi);

	if (p == NULL)
		return SQLITE_NOMEM;
	if (!col_psi(st, p))
		m->psi.n--;
	return SQLITE_OK;
}

static int
row_uid(struct mig *m, sqlite3_stmt *st)
{
	struct window_bpf_uid *u = arr_push(&m->uid);

	if (u == NULL)
		return SQLITE_NOMEM;
	u->uid = (uint32_t)sqlite3_column_int64(st, 0); /* −1: the other */
	u->oncpu_ns = col_u64(st, 1);
	u->exited_ns = col_u64(st, 2);
	u->exited_tasks = col_u64(st, 3);
	return SQLITE_OK;
}

static int
row_proc(struct mig *m, sqlite3_stmt *st)
{
	struct window_bpf_proc *p = arr_push(&m->proc);

	if (p == NULL)
		return SQLITE_NOMEM;
	p->tgid = sqlite3_column_int(st, 0);
	p->starttime = col_u64(st, 1);
	p->oncpu_ns = col_u64(st, 2);
	p->rq_ns = col_u64(st, 3);
	p->rq_count = col_u64(st, 4);
	hist_parse((const char *)sqlite3_column_text(st, 5), p->rq_hist);
	return SQLITE_OK;
}

static int
window(struct mig *m, int64_t id)
{
	int rc;

	store_wacc_reset(&m->acc);
	m->cpu.n = m->psi.n = m->uid.n = m->proc.n = 0;
	if ((rc = step_rows(m, M_COUNT, id, row_count)) != SQLITE_OK ||
	    (rc = step_rows(m, M_GAUGE, id, row_gauge)) != SQLITE_OK ||
	    (rc = step_rows(m, M_CPU, id, row_cpu)) != SQLITE_OK ||
	    (rc = step_rows(m, M_PSI, id, row_psi)) != SQLITE_OK ||
	    (rc = step_rows(m, M_UID, id, row_uid)) != SQLITE_OK ||
	    (rc = step_rows(m, M_PROC, id, row_proc)) != SQLITE_OK)
		return rc;
	if ((rc = store_wacc_bpfrows(&m->acc, m->uid.p, m->uid.n, m->proc.p,
		 m->proc.n)) != SQLITE_OK)
		return rc;
	return store_wacc_insert(m->st[M_INS], id, &m->acc, m->cpu.p, m->cpu.n,
	    m->psi.p, m->psi.n);
}

int
store_migrate_v9(sqlite3 *db)
{
	struct mig m;
	unsigned i;
	int rc = SQLITE_OK;

	memset(&m, 0, sizeof(m));
	m.cpu.sz = sizeof(struct store_sys_cpu);
	m.psi.sz = sizeof(struct store_sys_psi);
	m.uid.sz = sizeof(struct window_bpf_uid);
	m.proc.sz = sizeof(struct window_bpf_proc);
	for (i = 0; i < M__MAX && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v2(db, m_sql[i], -1, &m.st[i], NULL);
	if (rc == SQLITE_OK && (m.kw = store_kw_new(db, 0)) == NULL)
		rc = SQLITE_NOMEM;
	while (
	    rc == SQLITE_OK && (rc = sqlite3_step(m.st[M_WINS])) == SQLITE_ROW)
		rc = window(&m, sqlite3_column_int64(m.st[M_WINS], 0));
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	for (i = 0; i < M__MAX; i++)
		sqlite3_finalize(m.st[i]);
	store_kw_free(m.kw);
	store_wacc_release(&m.acc);
	free(m.cpu.p);
	free(m.psi.p);
	free(m.uid.p);
	free(m.proc.p);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, drop_sql, NULL, NULL, NULL);
	return rc;
}
