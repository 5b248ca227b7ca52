/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF part of a window in the store (schema v3, doc/storage.md):
 * per-uid and per-process rows in window_bpf_uid and window_bpf_proc, and
 * the window-level figures as named counters in window_count (kinds "bpf",
 * "bpf_prog_runs", "bpf_prog_ns"), so a new counter needs no migration.
 * Called by store.c and store_read.c inside their transaction and lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "window/window.h"
#include "store_int.h"

enum {
	BS_INS_UID,
	BS_INS_PROC,
	BS_SEL_UID,
	BS_SEL_PROC,
};

static const char *const bs_sql[] = {
	[BS_INS_UID] = "INSERT INTO window_bpf_uid (window_id, uid, oncpu_ns,"
		       " exited_ns, exited_tasks) VALUES (?, ?, ?, ?, ?)",
	[BS_INS_PROC] = "INSERT INTO window_bpf_proc (window_id, tgid,"
			" starttime, oncpu_ns, rq_ns, rq_count, rq_hist)"
			" VALUES (?, ?, ?, ?, ?, ?, ?)",
	[BS_SEL_UID] = "SELECT uid, oncpu_ns, exited_ns, exited_tasks"
		       " FROM window_bpf_uid WHERE window_id = ?",
	[BS_SEL_PROC] = "SELECT tgid, starttime, oncpu_ns, rq_ns, rq_count,"
			" rq_hist FROM window_bpf_proc WHERE window_id = ?",
};

/* ------------------------------------------------------------ counters */

/* Window-level figures by name; the order is the order they are written. */
#define BPF_U64(f) STORE_FIELD(struct window_bpf, f)
#define BPF_U32(f) STORE_FIELD(struct window_bpf, f)

static const struct store_field counters[] = {
	BPF_U32(state),
	BPF_U32(drains),
	BPF_U32(drain_fail),
	BPF_U32(counter_regressions),
	BPF_U64(drain_ns),
	BPF_U64(entries),
	BPF_U64(oncpu_ns),
	BPF_U64(exited_ns),
	BPF_U64(exited_tasks),
	BPF_U64(rq_ns),
	BPF_U64(rq_count),
	BPF_U64(pre_ns),
	BPF_U64(switches),
	BPF_U64(no_slice),
	BPF_U64(wakeups),
	BPF_U64(lost_ns),
	BPF_U64(full_tid),
	BPF_U64(full_proc),
	BPF_U64(full_uid),
	BPF_U64(no_storage),
	BPF_U32(uids_other),
	BPF_U32(procs_other),
	BPF_U32(diff_drains),
	BPF_U64(unattributed_ns),
	BPF_U64(evicted),
	BPF_U64(recreated),
	BPF_U64(retired),
};

/* A window_count row of kind "bpf*" (store_read.c hands them over). */
static void
store_bpf_count(struct window *w, const char *kind, const char *key, uint64_t v)
{
	struct window_bpf *b;
	unsigned i;

	/* the first row makes the part */
	if ((b = window_sched_make(w, false)) == NULL)
		return; /* short of memory: read without its sched part */
	if (strcmp(kind, "bpf") == 0) {
		if (strcmp(key, "errno") == 0) {
			b->err = -(int32_t)v;
			return;
		}
		if (strcmp(key, "stats") == 0) {
			b->stats = v != 0;
			return;
		}
		for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
			if (strcmp(key, counters[i].key) == 0)
				store_field_set(b, &counters[i], v);
		return;
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		if (strcmp(key, vbpf_prog_name(i)) != 0)
			continue;
		if (strcmp(kind, "bpf_prog_runs") == 0)
			b->prog_runs[i] = v;
		else if (strcmp(kind, "bpf_prog_ns") == 0)
			b->prog_ns[i] = v;
	}
}

/* ---------------------------------------------------------------- rows */

static int
put_uid(struct store *s, int64_t id, int64_t uid,
    const struct window_bpf_uid *u)
{
	sqlite3_stmt *st = s->part_st[WPART_SCHED][BS_INS_UID];

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, uid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)u->oncpu_ns);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)u->exited_ns);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)u->exited_tasks);
	return store_run(st);
}

/* "3,0,12": counts per slot, trailing empty slots left out. */
static void
hist_text(const uint32_t *h, char *buf, size_t sz)
{
	unsigned k, n = VITALS_BPF_RQ_SLOTS;
	size_t len = 0;

	while (n > 0 && h[n - 1] == 0)
		n--;
	buf[0] = '\0';
	for (k = 0; k < n && len < sz; k++)
		len += (size_t)snprintf(buf + len, sz - len, "%s%u",
		    k ? "," : "", h[k]);
}

static void
hist_parse(const char *t, uint32_t *h)
{
	unsigned k = 0;
	char *end;

	memset(h, 0, VITALS_BPF_RQ_SLOTS * sizeof(*h));
	while (t && *t && k < VITALS_BPF_RQ_SLOTS) {
		unsigned long v = strtoul(t, &end, 10);

		if (end == t)
			break;
		h[k++] = (uint32_t)v;
		t = *end == ',' ? end + 1 : end;
	}
}

static int
put_proc(struct store *s, int64_t id, const struct window_bpf_proc *p)
{
	sqlite3_stmt *st = s->part_st[WPART_SCHED][BS_INS_PROC];
	char hist[VITALS_BPF_RQ_SLOTS * 11 + 1];

	hist_text(p->rq_hist, hist, sizeof(hist));
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, p->tgid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)p->starttime);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)p->oncpu_ns);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)p->rq_ns);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)p->rq_count);
	sqlite3_bind_text(st, 7, hist, -1, SQLITE_TRANSIENT);
	return store_run(st);
}

static bool
uid_empty(const struct window_bpf_uid *u)
{
	return !u->oncpu_ns && !u->exited_ns && !u->exited_tasks;
}

/* Everything BPF of window id; nothing when the window has no BPF part. */
static int
store_bpf_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_bpf *b = window_sched(w);
	int rc = SQLITE_OK;
	unsigned i;

	if (b == NULL || b->state == VBPF_UNKNOWN)
		return SQLITE_OK;
	/* state always (its row says "reported"), other counters when set */
	for (i = 0;
	     i < sizeof(counters) / sizeof(counters[0]) && rc == SQLITE_OK; i++)
		if (i == 0 || store_field_get(b, &counters[i]))
			rc = store_put_count(s, id, "bpf", counters[i].key,
			    store_field_get(b, &counters[i]));
	if (rc == SQLITE_OK && b->err)
		rc = store_put_count(s, id, "bpf", "errno", (uint64_t)-b->err);
	if (rc == SQLITE_OK && b->stats)
		rc = store_put_count(s, id, "bpf", "stats", 1);
	for (i = 0; b->stats && i < VITALS_BPF_PROGS && rc == SQLITE_OK; i++) {
		rc = store_put_count(s, id, "bpf_prog_runs", vbpf_prog_name(i),
		    b->prog_runs[i]);
		if (rc == SQLITE_OK)
			rc = store_put_count(s, id, "bpf_prog_ns",
			    vbpf_prog_name(i), b->prog_ns[i]);
	}
	for (i = 0; i < b->nuids && i < VITALS_BPF_UIDS && rc == SQLITE_OK; i++)
		rc = put_uid(s, id, b->uid[i].uid, &b->uid[i]);
	if (rc == SQLITE_OK && !uid_empty(&b->uid_other))
		rc = put_uid(s, id, -1, &b->uid_other);
	for (i = 0; i < b->nprocs && i < VITALS_BPF_PROCS && rc == SQLITE_OK;
	     i++)
		rc = put_proc(s, id, &b->proc[i]);
	if (rc == SQLITE_OK &&
	    (b->proc_other.oncpu_ns || b->proc_other.rq_count))
		rc = put_proc(s, id, &b->proc_other);
	return rc;
}

static void
col_uid(sqlite3_stmt *st, struct window_bpf_uid *u)
{
	memset(u, 0, sizeof(*u));
	u->uid = (uint32_t)sqlite3_column_int64(st, 0);
	u->oncpu_ns = (uint64_t)sqlite3_column_int64(st, 1);
	u->exited_ns = (uint64_t)sqlite3_column_int64(st, 2);
	u->exited_tasks = (uint64_t)sqlite3_column_int64(st, 3);
}

/*
 * Rows of window id into its sched part; its counters came with
 * window_count and made the part. A window stored without one has neither.
 */
static int
store_bpf_load(struct store *s, int64_t id, struct window *w)
{
	struct window_bpf *b;
	sqlite3_stmt *st;
	int rc;

	if (window_sched(w) == NULL)
		return 0;
	if ((b = window_sched_make(w, true)) == NULL)
		return -ENOMEM;

	st = s->part_st[WPART_SCHED][BS_SEL_UID];
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct window_bpf_uid u;

		col_uid(st, &u);
		if (sqlite3_column_int64(st, 0) == -1)
			b->uid_other = u;
		else if (b->nuids < VITALS_BPF_UIDS)
			b->uid[b->nuids++] = u;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read window bpf");
	st = s->part_st[WPART_SCHED][BS_SEL_PROC];
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct window_bpf_proc p;

		memset(&p, 0, sizeof(p));
		p.tgid = sqlite3_column_int(st, 0);
		p.starttime = (uint64_t)sqlite3_column_int64(st, 1);
		p.oncpu_ns = (uint64_t)sqlite3_column_int64(st, 2);
		p.rq_ns = (uint64_t)sqlite3_column_int64(st, 3);
		p.rq_count = (uint64_t)sqlite3_column_int64(st, 4);
		hist_parse((const char *)sqlite3_column_text(st, 5), p.rq_hist);
		if (p.tgid == -1)
			b->proc_other = p;
		else if (b->nprocs < VITALS_BPF_PROCS)
			b->proc[b->nprocs++] = p;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "read window bpf");
	window_sched_trim(w);
	return 0;
}

const struct store_part store_sched_part = {
	.sql = bs_sql,
	.nsql = sizeof(bs_sql) / sizeof(bs_sql[0]),
	.put = store_bpf_put,
	.load = store_bpf_load,
	.count_kind = "bpf",
	.count = store_bpf_count,
};
