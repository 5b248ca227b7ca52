/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instances and the task blobs (schema v8, doc/storage.md "Instances"): a
 * window's processes and threads are two framed store_tasks payloads keyed
 * by instance ids, and the instance table maps an id to (thread, id,
 * starttime) and the identity it was first written with (tgid, uid, comm,
 * name). A window whose task carries another identity (exec() renamed it)
 * keeps that one in window_task_ident, so every window reads back with the
 * names it was written with.
 *
 * Ids are allocated here, not by SQLite, from a cache of the instances
 * in the writer's handle: windows may be written elsewhere and moved
 * over, and an id must not change on the way. The cache only ever holds
 * rows that are committed or in the open transaction; a rollback empties
 * it (store_inst_forget) and its ids are not handed out again. Since v25
 * the table has no index on the identity: the cache is loaded whole by a
 * scan (icache_load), so a miss is a new instance.
 *
 * Retention: every window referring to an instance ends at or before its
 * until_ns (raised, on a day grid, by each write that needs it, and for
 * the instances of a day's last hour all at once: icache_raise), so an
 * instance whose until_ns is below the
 * first window's start is referred to by no window and is deleted by the
 * maintenance pass (store_inst_prune). An id is not handed out again
 * while the handle is open; after a reopen the ids go on from the largest
 * left, so one pruned above it may come back: safe, since no window
 * refers to it any more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store/store_tasks.h"
#include "window/window.h"
#include "store_int.h"

#define UNTIL_GRID_NS (86400 * NSEC_PER_SEC)
/* raised with the first past a day's end: those met in the day that
 * ended (up to 4 Dec 2026 its last hour only: those met earlier in the
 * day that came back after its end, ~860 a day on store_bench, were
 * raised one by one, a leaf of instance rewritten and journaled each) */
#define RAISE_RECENT_NS UNTIL_GRID_NS
/* entries; past it the cache starts empty and stops being whole: a miss
 * is then looked up by a scan of the table (no identity index since v25).
 * ~72 bytes an entry with its slots: 18 MiB at the most. A variable for
 * the tests. */
size_t store_inst_cache_max = 262144;

struct icache_ent {
	int64_t iid, until_ns;
	/* wall_end_ns of the latest window this handle wrote it in (0:
	 * none yet): what says it lived to a day's end, not only that its
	 * row was raised with the others */
	int64_t seen_ns;
	uint64_t starttime;
	int32_t id, tgid;
	uint32_t uid;
	bool thread;
	char comm[VITALS_COMM_LEN];
	/* the name where it is not the comm (a process's cmdline name),
	 * owned; NULL: the comm, as for every thread. Not 128 bytes an entry:
	 * the cache holds every instance the writer saw (~0.75 MiB at 2,800
	 * tasks with the names inline) */
	char *name;
	bool in_spool; /* its row is in the spool too (store_spool.c) */
};

static const char *
ent_name(const struct icache_ent *e)
{
	return e->name != NULL ? e->name : e->comm;
}

/* e->name for name: NULL when it is e's comm; -ENOMEM */
static int
ent_set_name(struct icache_ent *e, const char *name)
{
	e->name = NULL;
	if (strncmp(name, e->comm, VITALS_NAME_LEN) == 0)
		return 0;
	if ((e->name = strndup(name, VITALS_NAME_LEN - 1)) == NULL)
		return -ENOMEM;
	return 0;
}

/* Open addressing over entry indices; a slot holds index + 1. */
struct store_icache {
	struct icache_ent *e;
	size_t n, cap;
	uint32_t *slot;
	size_t mask;
	int64_t next_iid; /* 0: read max(iid) first */
	/* every row of the main file's instance table is in it (loaded by a
	 * scan, kept by every write since): a miss is a new instance */
	bool whole;
	bool too_big;	    /* it outgrew ICACHE_MAX: never whole again */
	bool stale_on_move; /* the next move brings rows it never saw */
	int64_t raised;	    /* the last day's end icache_raise went past */
};

enum {
	IW_FIND,
	IW_INS,
	IW_UNTIL,
	IW_IDENT,
	IW_PUT,
	IW_MAX_IID,
	IW_ALL,
	IW_RAISE,
	IW__MAX
};

/*
 * A spool (store_spool.c) writes its windows' instances with the main
 * store's cache and counter, so an instance has one id in both files: one
 * the main file has is found there and written to the spool only when its
 * row must change (until_ns), to be merged at the next move.
 */
struct store_iw {
	sqlite3 *db;
	sqlite3_stmt *st[IW__MAX];
	struct store_icache c;
	struct store_icache *cp; /* &c, or the main store's */
	struct store_iw *main;	 /* the main store's, when this is a spool */
	uint32_t dict[2];	 /* processes', threads' dictionary (0: none) */
};

static const char *const iw_sql[IW__MAX] = {
	[IW_FIND] = "SELECT iid, tgid, uid, comm, name, until_ns FROM instance"
		    " WHERE thread = ?1 AND id = ?2 AND starttime = ?3",
	/* a row the spool has already (the cache was loaded from the main
	 * file meanwhile) only lives longer */
	[IW_INS] = "INSERT INTO instance (iid, thread, id, starttime, tgid,"
		   " uid, comm, name, until_ns) VALUES"
		   " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
		   " ON CONFLICT (iid) DO UPDATE SET until_ns ="
		   " max(until_ns, excluded.until_ns)",
	[IW_UNTIL] = "UPDATE instance SET until_ns = ?2 WHERE iid = ?1",
	[IW_IDENT] = "INSERT INTO window_task_ident (window_id, iid, tgid,"
		     " uid, comm, name) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[IW_PUT] = "INSERT INTO main.window_tasks (window_id, procs, threads)"
		   " VALUES (?1, ?2, ?3)",
	[IW_MAX_IID] = "SELECT coalesce(max(iid), 0) FROM instance",
	[IW_ALL] = "SELECT iid, thread, id, starttime, tgid, uid, comm, name,"
		   " until_ns FROM instance",
	[IW_RAISE] = "UPDATE instance SET until_ns = ?2 WHERE iid = ?1",
};

/* ---------------------------------------------------------------- cache */

static size_t
ihash(bool thread, int32_t id, uint64_t starttime)
{
	uint64_t h = ((uint64_t)(uint32_t)id << 33) ^ ((uint64_t)thread << 32) ^
	    starttime;

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h;
}

/* Forget every entry; ids go on from where they were (a gap after a
 * rollback is harmless, a reuse across the spool and the main file not). */
static void
icache_clear(struct store_icache *c)
{
	int64_t next = c->next_iid;
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->e[i].name);
	free(c->e);
	free(c->slot);
	bool big = c->too_big, stale = c->stale_on_move;
	int64_t raised = c->raised;

	memset(c, 0, sizeof(*c));
	c->next_iid = next;
	c->too_big = big;
	c->stale_on_move = stale;
	c->raised = raised;
}

static struct icache_ent *
icache_get(struct store_icache *c, bool thread, const struct window_task *t)
{
	size_t h;

	if (c->slot == NULL)
		return NULL;
	h = ihash(thread, t->id, t->starttime) & c->mask;
	for (; c->slot[h] != 0; h = (h + 1) & c->mask) {
		struct icache_ent *e = &c->e[c->slot[h] - 1];

		if (e->id == t->id && e->starttime == t->starttime &&
		    e->thread == thread)
			return e;
	}
	return NULL;
}

static void
icache_index(struct store_icache *c, size_t i)
{
	size_t h = ihash(c->e[i].thread, c->e[i].id, c->e[i].starttime) &
	    c->mask;

	while (c->slot[h] != 0)
		h = (h + 1) & c->mask;
	c->slot[h] = (uint32_t)(i + 1);
}

static struct icache_ent *
icache_add(struct store_icache *c, const struct icache_ent *ent)
{
	size_t i;

	if (c->n >= store_inst_cache_max) {
		c->too_big = true;
		icache_clear(c);
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 1024;
		struct icache_ent *p = realloc(c->e, nc * sizeof(*p));
		uint32_t *sl;

		if (p == NULL)
			return NULL;
		c->e = p;
		/* slots at most half full */
		if ((sl = calloc(2 * nc, sizeof(*sl))) == NULL)
			return NULL;
		free(c->slot);
		c->slot = sl;
		c->mask = 2 * nc - 1;
		c->cap = nc;
		for (i = 0; i < c->n; i++)
			icache_index(c, i);
	}
	c->e[c->n] = *ent;
	icache_index(c, c->n);
	return &c->e[c->n++];
}

/* --------------------------------------------------------------- writes */

static void
bind_text_n(sqlite3_stmt *st, int i, const char *s, size_t sz)
{
	sqlite3_bind_text(st, i, s, (int)strnlen(s, sz), SQLITE_TRANSIENT);
}

/* A thread's name is its comm: NULL saves the copy. */
static void
bind_ident(sqlite3_stmt *st, int i, const struct window_task *t)
{
	size_t cl = strnlen(t->comm, sizeof(t->comm));
	size_t nl = strnlen(window_task_name(t), VITALS_NAME_LEN);

	sqlite3_bind_int(st, i, t->tgid);
	sqlite3_bind_int64(st, i + 1, t->uid);
	bind_text_n(st, i + 2, t->comm, sizeof(t->comm));
	if (nl == cl && memcmp(window_task_name(t), t->comm, cl) == 0)
		sqlite3_bind_null(st, i + 3);
	else
		bind_text_n(st, i + 3, window_task_name(t), VITALS_NAME_LEN);
}

static void
col_text(sqlite3_stmt *st, int i, char *buf, size_t sz)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	snprintf(buf, sz, "%s", t ? t : "");
}

/* comm at i, name (NULL: the comm) at i + 1 */
static void
col_names(sqlite3_stmt *st, int i, char *comm, char *name)
{
	col_text(st, i, comm, VITALS_COMM_LEN);
	if (sqlite3_column_type(st, i + 1) == SQLITE_NULL)
		memcpy(name, comm, VITALS_COMM_LEN);
	else
		col_text(st, i + 1, name, VITALS_NAME_LEN);
}

static bool
same_ident(const struct icache_ent *e, const struct window_task *t)
{
	return e->tgid == t->tgid && e->uid == t->uid &&
	    strncmp(e->comm, t->comm, sizeof(e->comm)) == 0 &&
	    strncmp(ent_name(e), window_task_name(t), VITALS_NAME_LEN) == 0;
}

static int64_t
until_of(int64_t wall_end_ns)
{
	if (wall_end_ns > INT64_MAX - UNTIL_GRID_NS)
		return INT64_MAX;
	return (wall_end_ns / UNTIL_GRID_NS + 1) * UNTIL_GRID_NS;
}

/* The row of (thread, t's id, starttime) by st (IW_FIND of some file) into
 * e: SQLITE_ROW found, SQLITE_DONE not there, else an error. */
/* finds run (scans of a table without the identity index): tests */
static uint64_t inst_finds;

static int
inst_find(sqlite3_stmt *st, bool thread, const struct window_task *t,
    struct icache_ent *e)
{
	char name[VITALS_NAME_LEN];
	int rc;

	__atomic_add_fetch(&inst_finds, 1, __ATOMIC_RELAXED);
	sqlite3_bind_int(st, 1, thread);
	sqlite3_bind_int(st, 2, t->id);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)t->starttime);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		e->iid = sqlite3_column_int64(st, 0);
		e->tgid = sqlite3_column_int(st, 1);
		e->uid = (uint32_t)sqlite3_column_int64(st, 2);
		col_names(st, 3, e->comm, name);
		free(e->name); /* a spool's find after the main file's */
		if (ent_set_name(e, name) < 0)
			rc = SQLITE_NOMEM;
		e->until_ns = sqlite3_column_int64(st, 5);
	}
	sqlite3_reset(st);
	return rc;
}

/* e's row, as first written, with until_ns, by st (IW_INS). */
static int
inst_copy(sqlite3_stmt *st, const struct icache_ent *e, int64_t until_ns)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.tgid = e->tgid;
	t.uid = e->uid;
	memcpy(t.comm, e->comm, sizeof(t.comm));
	window_task_set_name(&t, ent_name(e));
	sqlite3_bind_int64(st, 1, e->iid);
	sqlite3_bind_int(st, 2, e->thread);
	sqlite3_bind_int(st, 3, e->id);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)e->starttime);
	bind_ident(st, 5, &t);
	sqlite3_bind_int64(st, 9, until_ns);
	return store_run(st);
}

/*
 * Every row of the main file's instance table into c (emptied first), by
 * st (its IW_ALL): the cache is then whole, and a task it has not got is
 * a new instance without a lookup (schema v25 keeps no index on the
 * identity: its leaves took a random insert per new instance, a quarter
 * of the pages a move rewrote). Rows of a spool are not in it; a spool's
 * writer still looks its own file up first (a small table in RAM).
 */
static int
icache_load(struct store_icache *c, sqlite3_stmt *st)
{
	struct icache_ent ne;
	char name[VITALS_NAME_LEN];
	int rc;

	icache_clear(c);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&ne, 0, sizeof(ne));
		ne.iid = sqlite3_column_int64(st, 0);
		ne.thread = sqlite3_column_int(st, 1) != 0;
		ne.id = sqlite3_column_int(st, 2);
		ne.starttime = (uint64_t)sqlite3_column_int64(st, 3);
		ne.tgid = sqlite3_column_int(st, 4);
		ne.uid = (uint32_t)sqlite3_column_int64(st, 5);
		col_names(st, 6, ne.comm, name);
		ne.until_ns = sqlite3_column_int64(st, 8);
		if (ent_set_name(&ne, name) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		if (icache_add(c, &ne) == NULL) {
			free(ne.name);
			rc = SQLITE_NOMEM;
			break;
		}
		if (c->too_big)
			break; /* it started over: lookups from now on */
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		icache_clear(c);
		return rc;
	}
	c->whole = !c->too_big;
	return SQLITE_OK;
}

static void inst_unbound(struct store *s);
static int inst_copy(sqlite3_stmt *st, const struct icache_ent *e,
    int64_t until_ns);

/*
 * The first instance met past a day's end (old, its until_ns; nu = old +
 * a day): every other instance written in the day that ended goes on
 * with it now, in this transaction, so each leaf of the table is
 * rewritten once a day, not once for each move its instances come back
 * in over the next hours. The main file's rows by IW_RAISE; with a
 * spool, by a copy in the spool that the move merges (store_spool.c). An
 * instance that ended in that day keeps its row a day longer; one not
 * met in it (or not by this handle: seen_ns is in RAM) is left alone
 * (raised when it comes back, pruned if it does not).
 */
static int
icache_raise(struct store_iw *iw, struct store_icache *c, int64_t old,
    int64_t nu)
{
	sqlite3_stmt *st;
	size_t i;
	int rc = SQLITE_OK;

	for (i = 0; i < c->n && rc == SQLITE_OK; i++) {
		struct icache_ent *e = &c->e[i];

		if (e->until_ns != old || e->seen_ns > old ||
		    e->seen_ns <= old - RAISE_RECENT_NS)
			continue;
		if (iw->main != NULL && !e->in_spool) {
			if ((rc = inst_copy(iw->st[IW_INS], e, nu)) !=
			    SQLITE_OK)
				break;
			e->in_spool = true;
		} else {
			/* the main file's row, or the spool's copy */
			st = iw->st[IW_RAISE];
			sqlite3_bind_int64(st, 1, e->iid);
			sqlite3_bind_int64(st, 2, nu);
			if ((rc = store_run(st)) != SQLITE_OK)
				break;
		}
		e->until_ns = nu;
	}
	return rc;
}

/* The instance of t (found, or written now) in *ret_iid. */
static int
inst_get(struct store_iw *iw, int64_t wid, int64_t wall_end_ns, bool thread,
    const struct window_task *t, int64_t *ret_iid)
{
	struct store_icache *c = iw->cp;
	struct icache_ent *e, ne;
	sqlite3_stmt *st;
	int rc;

	if ((e = icache_get(c, thread, t)) == NULL && !c->whole &&
	    !c->too_big) {
		st = (iw->main != NULL ? iw->main : iw)->st[IW_ALL];
		if ((rc = icache_load(c, st)) != SQLITE_OK)
			return rc;
		e = icache_get(c, thread, t);
	}
	if (e == NULL) {
		memset(&ne, 0, sizeof(ne));
		ne.thread = thread;
		ne.id = t->id;
		ne.starttime = t->starttime;
		/* this file's row; a spool's next, the main file's (neither
		 * is asked for what a whole cache says the main file has
		 * not got). A whole cache holds every row this handle wrote
		 * to the spool as well: the spool (no identity index since
		 * v25, so a find is a scan of it) is asked only while rows
		 * no cache saw may wait there (stale_on_move: a leftover
		 * spool, a rollback) */
		rc = SQLITE_DONE;
		if (!c->whole || (iw->main != NULL && c->stale_on_move))
			rc = inst_find(iw->st[IW_FIND], thread, t, &ne);
		ne.in_spool = iw->main != NULL && rc == SQLITE_ROW;
		if (rc == SQLITE_DONE && iw->main != NULL && !c->whole)
			rc = inst_find(iw->main->st[IW_FIND], thread, t, &ne);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			free(ne.name);
			return rc;
		}
		if (rc == SQLITE_DONE) {
			ne.in_spool = iw->main != NULL;
			if (c->next_iid == 0) {
				if ((rc = store_run_int(iw->st[IW_MAX_IID],
					 &c->next_iid)) != SQLITE_OK)
					return rc;
				c->next_iid++;
			}
			ne.iid = c->next_iid;
			ne.tgid = t->tgid;
			ne.uid = t->uid;
			memcpy(ne.comm, t->comm, sizeof(ne.comm));
			ne.comm[sizeof(ne.comm) - 1] = '\0';
			if (ent_set_name(&ne, window_task_name(t)) < 0)
				return SQLITE_NOMEM;
			ne.until_ns = until_of(wall_end_ns);
			st = iw->st[IW_INS];
			sqlite3_bind_int64(st, 1, ne.iid);
			sqlite3_bind_int(st, 2, thread);
			sqlite3_bind_int(st, 3, t->id);
			sqlite3_bind_int64(st, 4, (sqlite3_int64)t->starttime);
			bind_ident(st, 5, t);
			sqlite3_bind_int64(st, 9, ne.until_ns);
			if ((rc = store_run(st)) != SQLITE_OK) {
				free(ne.name);
				return rc;
			}
			c->next_iid++;
		}
		if ((e = icache_add(c, &ne)) == NULL) {
			free(ne.name);
			return SQLITE_NOMEM;
		}
	}
	if (wall_end_ns > e->until_ns && e->until_ns > c->raised &&
	    e->until_ns <= INT64_MAX - UNTIL_GRID_NS &&
	    until_of(wall_end_ns) == e->until_ns + UNTIL_GRID_NS) {
		/* the first met past a day's end raises that day's last
		 * hour with it (once per day's end). The day's end is
		 * kept before the raise: e may be one it raised, and its
		 * new until_ns as c->raised kept every later day's end
		 * from raising its last hour together (each instance of it
		 * then rewrote its leaf as it came back) */
		int64_t day_end = e->until_ns;

		if ((rc = icache_raise(iw, c, day_end,
			 day_end + UNTIL_GRID_NS)) != SQLITE_OK)
			return rc;
		c->raised = day_end;
	}
	if (wall_end_ns > e->until_ns && iw->main != NULL && !e->in_spool) {
		/* a row of the main file's that must change: the spool gets
		 * the changed copy, the next move merges it */
		if ((rc = inst_copy(iw->st[IW_INS], e,
			 until_of(wall_end_ns))) != SQLITE_OK)
			return rc;
		e->until_ns = until_of(wall_end_ns);
		e->in_spool = true;
	} else if (wall_end_ns > e->until_ns) {
		st = iw->st[IW_UNTIL];
		sqlite3_bind_int64(st, 1, e->iid);
		sqlite3_bind_int64(st, 2, until_of(wall_end_ns));
		if ((rc = store_run(st)) != SQLITE_OK)
			return rc;
		e->until_ns = until_of(wall_end_ns);
	}
	if (wall_end_ns > e->seen_ns)
		e->seen_ns = wall_end_ns;
	if (!same_ident(e, t)) {
		st = iw->st[IW_IDENT];
		sqlite3_bind_int64(st, 1, wid);
		sqlite3_bind_int64(st, 2, e->iid);
		bind_ident(st, 3, t);
		if ((rc = store_run(st)) != SQLITE_OK)
			return rc;
	}
	*ret_iid = e->iid;
	return SQLITE_OK;
}

struct keyed {
	int64_t iid;
	const struct window_task *t;
};

static int
keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->iid < y->iid ? -1 : x->iid > y->iid;
}

/* One list's blob into fe (left empty for an empty list). */
static int
encode_list(struct store_iw *iw, int64_t wid, int64_t wall_end_ns, bool thread,
    const struct window_task *t, size_t n, struct store_enc *fe)
{
	struct store_enc pe = { 0 };
	struct window_task *rows = NULL;
	uint64_t *iids = NULL;
	struct keyed *k = NULL;
	size_t i;
	int rc = SQLITE_OK, r;

	if (n == 0)
		return SQLITE_OK;
	if ((k = calloc(n, sizeof(*k))) == NULL ||
	    (rows = calloc(n, sizeof(*rows))) == NULL ||
	    (iids = calloc(n, sizeof(*iids))) == NULL) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	for (i = 0; i < n && rc == SQLITE_OK; i++) {
		k[i].t = &t[i];
		rc = inst_get(iw, wid, wall_end_ns, thread, &t[i], &k[i].iid);
	}
	if (rc != SQLITE_OK)
		goto out;
	if (n > 1)
		qsort(k, n, sizeof(*k), keyed_cmp);
	for (i = 0; i < n; i++) {
		rows[i] = *k[i].t;
		iids[i] = (uint64_t)k[i].iid;
	}
	/* the same task twice in a list: as the v7 key refused it */
	if ((r = store_tasks_put(&pe, rows, iids, n)) == -EINVAL)
		rc = SQLITE_CONSTRAINT;
	else if (r < 0 ||
	    store_frame_put_zdict(fe, STORE_TASKS_PART, STORE_TASKS_VERSION,
		pe.b.p, pe.b.len, iw->dict[thread]) < 0)
		rc = SQLITE_NOMEM;
out:
	store_enc_release(&pe);
	free(k);
	free(rows);
	free(iids);
	return rc;
}

static int
iw_put(struct store_iw *iw, sqlite3_stmt *st, int64_t wid, int64_t wall_end_ns,
    const struct window_task *procs, size_t np,
    const struct window_task *threads, size_t nt)
{
	struct store_enc pf = { 0 }, tf = { 0 };
	int rc;

	if (np == 0 && nt == 0)
		return SQLITE_OK;
	rc = encode_list(iw, wid, wall_end_ns, false, procs, np, &pf);
	if (rc == SQLITE_OK)
		rc = encode_list(iw, wid, wall_end_ns, true, threads, nt, &tf);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, wid);
		if (np)
			sqlite3_bind_blob(st, 2, pf.b.p, (int)pf.b.len,
			    SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 2);
		if (nt)
			sqlite3_bind_blob(st, 3, tf.b.p, (int)tf.b.len,
			    SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 3);
		rc = store_run(st);
		sqlite3_clear_bindings(st);
	}
	store_enc_release(&pf);
	store_enc_release(&tf);
	return rc;
}

static void
iw_finalize(struct store_iw *iw)
{
	unsigned i;

	for (i = 0; i < IW__MAX; i++) {
		sqlite3_finalize(iw->st[i]);
		iw->st[i] = NULL;
	}
	icache_clear(&iw->c);
}

static int
iw_prepare(struct store_iw *iw, sqlite3 *db, unsigned flags)
{
	unsigned i;
	int rc;

	iw->db = db;
	iw->cp = &iw->c;
	for (i = 0; i < IW__MAX; i++)
		if ((rc = sqlite3_prepare_v3(db, iw_sql[i], -1, flags,
			 &iw->st[i], NULL)) != SQLITE_OK)
			return rc;
	return SQLITE_OK;
}

int
store_inst_prepare(struct store *s)
{
	if ((s->iw = calloc(1, sizeof(*s->iw))) == NULL)
		return SQLITE_NOMEM;
	return iw_prepare(s->iw, s->db, SQLITE_PREPARE_PERSISTENT);
}

void
store_inst_finalize(struct store *s)
{
	if (s->iw == NULL)
		return;
	iw_finalize(s->iw);
	free(s->iw);
	s->iw = NULL;
}

void
store_inst_forget(struct store *s)
{
	/* a spool's rollback undid rows the main store's cache knew of */
	if (s->inst_main != NULL && s->inst_main->iw != NULL) {
		icache_clear(&s->inst_main->iw->c);
		/* the spool's committed rows are in no scan of the main
		 * file: the cache reloaded before they move would call a
		 * task they hold new after the move */
		s->inst_main->iw->c.stale_on_move = true;
	}
	if (s->iw != NULL) {
		icache_clear(&s->iw->c);
		/* the same for the main store's own rollback (a failed
		 * move) while its spool holds rows */
		if (s->spool != NULL)
			s->iw->c.stale_on_move = true;
	}
}

/*
 * Undo the open transaction. Here rather than in store_core.c because
 * the instance rows it wrote were undone with it: the cache must forget
 * them (their ids are not handed out again).
 */
void
store_rollback(struct store *s)
{
	/* SQLITE_FULL and some I/O errors already rolled back for us. */
	if (sqlite3_get_autocommit(s->db))
		s->pass_txn = false; /* and the pass's transaction with it */
	else if (s->pass_txn) {
		/* a step of a pass: its savepoint alone (store_txn_begin) */
		(void)store_run(store_ws(s, WS_ROLLBACK_TO));
		(void)store_run(store_ws(s, WS_RELEASE));
	} else
		(void)store_run(store_ws(s, WS_ROLLBACK));
	store_inst_forget(s);
	store_keys_forget(s); /* and the keys it wrote (store_keys.c) */
	store_prov_forget(s);
	store_span_forget(s); /* span tables it made (store_span.c) */
	/* and the dictionaries it trained (store_dict.c) */
	memset(s->dict_new, 0, sizeof(s->dict_new));
}

int
store_inst_put(struct store *s, int64_t id, const struct window *w)
{
	struct store_iw *iw = s->iw;
	sqlite3_stmt *st;
	int rc = SQLITE_OK;

	if (iw == NULL)
		return SQLITE_MISUSE;
	/* level 0 into its span's table (store_span.c) */
	st = w->level == 0 && store_span_on(s) && (w->nprocs || w->nthreads) ?
	    store_span_ins(s, 0, w->wall_start_ns, &rc) :
	    iw->st[IW_PUT];
	if (st == NULL)
		return rc;
	/* a spool: the main store's cache and counter (store_spool.c) */
	iw->main = s->inst_main != NULL ? s->inst_main->iw : NULL;
	iw->cp = iw->main != NULL ? &iw->main->c : &iw->c;
	/* the dictionaries of the store it feeds (store_dict.c) */
	iw->dict[0] =
	    (s->inst_main != NULL ? s->inst_main : s)->dict_cur[DSLOT_PROCS3];
	iw->dict[1] =
	    (s->inst_main != NULL ? s->inst_main : s)->dict_cur[DSLOT_THREADS3];
	return iw_put(iw, st, id, w->wall_end_ns, w->procs, w->nprocs,
	    w->threads, w->nthreads);
}

/*
 * The spool's instance rows moved into the main file (store_spool.c):
 * none is in the spool any more. And the counter past every id either
 * file holds (max), when a spool is attached.
 */
void
store_inst_moved(struct store *s)
{
	size_t i;

	if (s->iw == NULL)
		return;
	for (i = 0; i < s->iw->c.n; i++)
		s->iw->c.e[i].in_spool = false;
	/* a leftover spool's rows are in the main file now: loaded again
	 * at the next miss */
	if (s->iw->c.stale_on_move) {
		s->iw->c.stale_on_move = false;
		icache_clear(&s->iw->c);
	}
}

/* A spool attached holding rows no cache of this handle wrote (a killed
 * run's): the cache is not whole after they move. */
void
store_inst_leftover(struct store *s)
{
	if (s->iw != NULL)
		s->iw->c.stale_on_move = true;
}

void
store_inst_seed(struct store *s, int64_t max_iid)
{
	if (s->iw != NULL && s->iw->c.next_iid <= max_iid)
		s->iw->c.next_iid = max_iid + 1;
}

/*
 * The entries of the rows a prune deleted (until_ns below cut[0]; a
 * thread's, below cut[1]; a cut of INT64_MIN: none), out of c, the rest
 * kept with what the writer saw of them (seen_ns: the day's-end raise).
 * The cache's until_ns is never below its row's (it is the spool's copy
 * where one waits), so each deleted row's entry goes; n is how many rows
 * went, and any other count empties the cache (loaded again at the next
 * miss). Reloading after every prune instead lost seen_ns each time.
 */
static void
icache_prune(struct store_icache *c, const int64_t cut[2], uint64_t n)
{
	uint64_t dropped = 0;
	size_t i, k = 0;

	for (i = 0; i < c->n; i++) {
		struct icache_ent *e = &c->e[i];

		if (e->until_ns < cut[0] ||
		    (e->thread && e->until_ns < cut[1])) {
			free(e->name);
			dropped++;
			continue;
		}
		c->e[k++] = *e;
	}
	c->n = k;
	if (c->slot != NULL) {
		memset(c->slot, 0, (c->mask + 1) * sizeof(*c->slot));
		for (i = 0; i < c->n; i++)
			icache_index(c, i);
	}
	if (dropped != n)
		icache_clear(c);
}

/*
 * Instances no window refers to any more (until_ns below the first
 * window's start; a thread's, below the first window holding threads:
 * level 2 keeps none, store_maint.c), in the maintenance pass's own
 * transaction; their entries leave the cache.
 */
int
store_inst_prune(struct store *s, uint64_t *ret_n)
{
	static const char cut_sql[] =
	    "SELECT (SELECT min(wall_start_ns) FROM windows),"
	    " (SELECT w.wall_start_ns FROM windows w WHERE EXISTS"
	    " (SELECT 1 FROM window_tasks t WHERE t.window_id = w.id AND"
	    " t.threads IS NOT NULL) ORDER BY w.wall_start_ns LIMIT 1)";
	static const char del_sql[] = "DELETE FROM instance WHERE until_ns < ?1"
				      " OR (thread = 1 AND until_ns < ?2)";
	int64_t cut[2] = { INT64_MIN, INT64_MIN };
	sqlite3_stmt *st;
	int rc, i;

	*ret_n = 0;
	if ((rc = sqlite3_prepare_v2(s->db, cut_sql, -1, &st, NULL)) !=
	    SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < 2; i++)
			if (sqlite3_column_type(st, i) != SQLITE_NULL)
				cut[i] = sqlite3_column_int64(st, i);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return rc;
	if (cut[0] == INT64_MIN && cut[1] == INT64_MIN)
		return SQLITE_OK; /* no window: nothing to go by */
	if ((rc = sqlite3_prepare_v2(s->db, del_sql, -1, &st, NULL)) !=
	    SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, cut[0]);
	sqlite3_bind_int64(st, 2, cut[1]);
	rc = store_run(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return rc;
	*ret_n = (uint64_t)sqlite3_changes(s->db);
	/* the ids go on from where they were (a rollback of this would
	 * forget them all anyway) */
	if (*ret_n && s->iw != NULL)
		icache_prune(&s->iw->c, cut, *ret_n);
	if (*ret_n && s->iw != NULL && s->iw->c.too_big)
		inst_unbound(s);
	return SQLITE_OK;
}

/* A cache that outgrew its bound can be whole again once prunes leave
 * the table under half of it: else every miss stays a scan of the table
 * for the life of the handle. */
static void
inst_unbound(struct store *s)
{
	sqlite3_stmt *st;
	int64_t rows = -1;

	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM instance", -1, &st,
		NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW)
		rows = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rows >= 0 && (uint64_t)rows < store_inst_cache_max / 2) {
		s->iw->c.too_big = false;
		icache_clear(&s->iw->c); /* loaded whole at the next miss */
	}
}

uint64_t
store_inst_finds(void)
{
	return __atomic_load_n(&inst_finds, __ATOMIC_RELAXED);
}

bool
store_inst_cache_bounded(const struct store *s)
{
	return s->iw != NULL && s->iw->c.too_big;
}

/* ------------------------------------------------------------ migration */

/* A v7 window_task row (STORE_TASK_COLS). */
static bool
v7_task(sqlite3_stmt *st, struct window_task *t)
{
	char name[VITALS_NAME_LEN];

	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int(st, 1);
	t->starttime = (uint64_t)sqlite3_column_int64(st, 2);
	t->tgid = sqlite3_column_int(st, 3);
	t->uid = (uint32_t)sqlite3_column_int64(st, 4);
	col_names(st, 5, t->comm, name);
	window_task_set_name(t, name);
	t->d_utime = (uint64_t)sqlite3_column_int64(st, 7);
	t->d_stime = (uint64_t)sqlite3_column_int64(st, 8);
	t->d_minflt = (uint64_t)sqlite3_column_int64(st, 9);
	t->d_majflt = (uint64_t)sqlite3_column_int64(st, 10);
	t->samples = (uint32_t)sqlite3_column_int64(st, 11);
	t->wall_ns = (uint64_t)sqlite3_column_int64(st, 12);
	t->total_ticks = (uint64_t)sqlite3_column_int64(st, 13);
	t->norm_ticks = sqlite3_column_double(st, 14);
	t->rss_pages_max = (uint64_t)sqlite3_column_int64(st, 15);
	t->rss_pages_last = (uint64_t)sqlite3_column_int64(st, 16);
	t->born = sqlite3_column_int(st, 17) != 0;
	t->exited = sqlite3_column_int(st, 18) != 0;
	return sqlite3_column_int(st, 0) != 0;
}

struct tlist {
	struct window_task *t;
	size_t n, cap;
};

static int
tlist_push(struct tlist *l, const struct window_task *t)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		struct window_task *p = realloc(l->t, nc * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		l->t = p;
		l->cap = nc;
	}
	l->t[l->n++] = *t;
	return 0;
}

/* tests: called before the n-th window (from 1); non-zero fails the step */
int (*store_inst_migrate_test)(unsigned n);

/*
 * v7 → v8, inside the step's transaction: every window's window_task
 * rows become its two blobs and the instances they name, newest window
 * first, so an instance keeps the identity of its latest window and the
 * older windows that differ keep theirs in window_task_ident. Then
 * window_task goes. Any failure rolls the whole step back: the file stays
 * v7 and the next open migrates it again.
 */
int
store_inst_migrate_v8(sqlite3 *db)
{
	static const char wins_sql[] = "SELECT id, wall_end_ns FROM windows"
				       " ORDER BY wall_start_ns DESC, id DESC";
	static const char rows_sql[] = "SELECT " STORE_TASK_COLS
				       " FROM window_task WHERE window_id = ?"
				       " ORDER BY thread, id, starttime";
	struct store_iw iw = { 0 };
	struct tlist l[2] = { { 0 } };
	sqlite3_stmt *ws = NULL, *rs = NULL;
	struct window_task t;
	int64_t wid, wend;
	unsigned n = 0;
	int rc;

	if ((rc = iw_prepare(&iw, db, 0)) != SQLITE_OK ||
	    (rc = sqlite3_prepare_v2(db, wins_sql, -1, &ws, NULL)) !=
		SQLITE_OK ||
	    (rc = sqlite3_prepare_v2(db, rows_sql, -1, &rs, NULL)) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(ws)) == SQLITE_ROW) {
		wid = sqlite3_column_int64(ws, 0);
		wend = sqlite3_column_int64(ws, 1);
		if (store_inst_migrate_test && store_inst_migrate_test(++n)) {
			rc = SQLITE_IOERR;
			break;
		}
		l[0].n = l[1].n = 0;
		sqlite3_bind_int64(rs, 1, wid);
		while ((rc = sqlite3_step(rs)) == SQLITE_ROW) {
			bool th = v7_task(rs, &t);

			if (tlist_push(&l[th], &t) < 0) {
				rc = SQLITE_NOMEM;
				break;
			}
		}
		sqlite3_reset(rs);
		if (rc != SQLITE_DONE)
			break;
		if ((rc = iw_put(&iw, iw.st[IW_PUT], wid, wend, l[0].t, l[0].n,
			 l[1].t, l[1].n)) != SQLITE_OK)
			break;
	}
	if (rc == SQLITE_DONE)
		rc = sqlite3_exec(db, "DROP TABLE window_task", NULL, NULL,
		    NULL);
out:
	sqlite3_finalize(ws);
	sqlite3_finalize(rs);
	iw_finalize(&iw);
	free(l[0].t);
	free(l[1].t);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}
