/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF part of a window in the store (doc/storage.md): per-uid and
 * per-process rows as the window's BPF blob (schema v9; the tables
 * window_bpf_uid and window_bpf_proc before), and the window-level
 * figures as named counters of its kv blob (kinds "bpf", "bpf_prog_runs",
 * "bpf_prog_ns"), so a new counter needs no migration.
 * Called by store.c and store_read.c inside their transaction and lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "store/store_bpfrows.h"
#include "window/window.h"
#include "store_int.h"

/* ------------------------------------------------------------ counters */

/* Window-level figures by name; the order is the order they are written. */
#define BPF_U64(f) STORE_FIELD(struct window_bpf, f)
#define BPF_U32(f) STORE_FIELD(struct window_bpf, f)

static const struct store_field counters[] = {
	BPF_U32(state), BPF_U32(drains), BPF_U32(drain_fail),
	BPF_U32(counter_regressions), BPF_U64(drain_ns), BPF_U64(entries),
	BPF_U64(oncpu_ns), BPF_U64(exited_ns), BPF_U64(exited_tasks),
	BPF_U64(rq_ns), BPF_U64(rq_count), BPF_U64(pre_ns), BPF_U64(switches),
	BPF_U64(no_slice), BPF_U64(wakeups), BPF_U64(lost_ns),
	BPF_U64(full_tid), BPF_U64(full_proc), BPF_U64(full_uid),
	BPF_U64(no_storage), BPF_U32(uids_other), BPF_U32(procs_other),
	BPF_U32(diff_drains), BPF_U64(unattributed_ns), BPF_U64(evicted),
	BPF_U64(recreated), BPF_U64(retired), BPF_U64(rq_samples),
	BPF_U64(thr_exited), BPF_U64(procs_exited), BPF_U64(oncpu_total),
	BPF_U32(threads_other), BPF_U64(rq_notid), BPF_U64(slot_rows),
	BPF_U64(slots_taken), BPF_U64(slot_hash_rows), BPF_U64(slot_overflow),
	BPF_U32(slot_full_drains), BPF_U32(slot_cap),
	BPF_U32(rq_source), /* enum vbpf_rq; 0 (not written): not known */
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
cmp_uid(const void *a, const void *b)
{
	const struct window_bpf_uid *x = a, *y = b;

	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static int
cmp_proc(const void *a, const void *b)
{
	const struct window_bpf_proc *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

static int
cmp_thread(const void *a, const void *b)
{
	const struct window_bpf_thread *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

static bool
uid_empty(const struct window_bpf_uid *u)
{
	return !u->oncpu_ns && !u->exited_ns && !u->exited_tasks &&
	    !u->rq_count;
}

/*
 * The rows as the BPF blob (store_wparts.c): the "other" entries first
 * (uid −1, tgid −1, tid −1), then by uid, by (tgid, starttime) and by
 * (tid, starttime), whose steps the encoding keeps to a byte or two.
 */
static int
put_rows(struct store *s, const struct window_bpf *b)
{
	struct store_bpfrows r = { 0 };
	size_t i, o;
	int rc = SQLITE_NOMEM;

	r.uid = malloc((b->nuids + 1) * sizeof(*r.uid));
	r.proc = malloc((b->nprocs + 1) * sizeof(*r.proc));
	r.thread = malloc((b->nthreads + 1) * sizeof(*r.thread));
	if (r.uid == NULL || r.proc == NULL || r.thread == NULL)
		goto out;
	if (!uid_empty(&b->uid_other)) {
		r.uid[r.nuid] = b->uid_other;
		r.uid[r.nuid++].uid = UINT32_MAX;
	}
	o = r.nuid;
	for (i = 0; i < b->nuids; i++)
		r.uid[r.nuid++] = b->uid[i];
	qsort(r.uid + o, r.nuid - o, sizeof(*r.uid), cmp_uid);
	if (b->proc_other.oncpu_ns || b->proc_other.rq_count) {
		r.proc[r.nproc] = b->proc_other;
		r.proc[r.nproc++].tgid = -1;
	}
	o = r.nproc;
	for (i = 0; i < b->nprocs; i++)
		r.proc[r.nproc++] = b->proc[i];
	qsort(r.proc + o, r.nproc - o, sizeof(*r.proc), cmp_proc);
	if (b->thread_other.oncpu_ns || b->thread_other.rq_count) {
		r.thread[r.nthread] = b->thread_other;
		r.thread[r.nthread].tid = r.thread[r.nthread].tgid = -1;
		r.thread[r.nthread++].uid = UINT32_MAX;
	}
	o = r.nthread;
	for (i = 0; i < b->nthreads; i++)
		r.thread[r.nthread++] = b->thread[i];
	qsort(r.thread + o, r.nthread - o, sizeof(*r.thread), cmp_thread);
	rc = store_put_bpfrows(s, &r);
out:
	free(r.uid);
	free(r.proc);
	free(r.thread);
	return rc;
}

/* Everything BPF of window id; nothing when the window has no BPF part.
 * A part of unknown state (loaded from a window whose counters were lost:
 * store_bpf_load) keeps its rows alone. */
static int
store_bpf_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_bpf *b = window_sched(w);
	int rc = SQLITE_OK;
	unsigned i;

	if (b == NULL)
		return SQLITE_OK;
	if (b->state == VBPF_UNKNOWN)
		return put_rows(s, b); /* none: no blob */
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
	if (rc == SQLITE_OK)
		rc = put_rows(s, b);
	return rc;
}

/*
 * Rows of the window being loaded into its sched part (the BPF blob,
 * store_wparts.c); its counters came with the kv blob and made the part.
 * A window stored without one has neither. Rows whose counters were lost
 * (a damaged kv blob) still load, into a part of state VBPF_UNKNOWN
 * with no window-level figures.
 */
static int
store_bpf_load(struct store *s, int64_t id, struct window *w)
{
	struct store_bpfrows rows;
	struct window_bpf *b;
	size_t i;
	int r;

	(void)id; /* the window store_load holds (RS_PARTS) */
	if ((r = store_get_bpfrows(s, &rows)) == -ENOENT)
		goto out;
	if (r < 0)
		return r;
	/* without a part (its counters' blob did not decode, counted there)
	 * the one made here is of state 0, VBPF_UNKNOWN: the rows still
	 * read, under a state nobody reported */
	if ((b = window_sched_make(w, true)) == NULL ||
	    window_bpf_reserve(b, rows.nuid, rows.nproc, rows.nthread) < 0) {
		store_bpfrows_release(&rows);
		return -ENOMEM;
	}
	for (i = 0; i < rows.nuid; i++) {
		rows.uid[i].pad = 0;
		if (rows.uid[i].uid == UINT32_MAX)
			b->uid_other = rows.uid[i];
		else
			b->uid[b->nuids++] = rows.uid[i];
	}
	for (i = 0; i < rows.nproc; i++) {
		if (rows.proc[i].tgid == -1)
			b->proc_other = rows.proc[i];
		else
			b->proc[b->nprocs++] = rows.proc[i];
	}
	for (i = 0; i < rows.nthread; i++) {
		rows.thread[i].pad = 0;
		if (rows.thread[i].tid == -1)
			b->thread_other = rows.thread[i];
		else
			b->thread[b->nthreads++] = rows.thread[i];
	}
	store_bpfrows_release(&rows);
out:
	window_sched_trim(w);
	return 0;
}

const struct store_part store_sched_part = {
	.put = store_bpf_put,
	.load = store_bpf_load,
	.count_kind = "bpf",
	.count = store_bpf_count,
};
