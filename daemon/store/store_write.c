/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rows of one window inside the caller's transaction: the window row
 * and its counters and gauges here (encoded with its CPU lines and PSI by
 * store_wparts.c), the tasks through store_inst.c, each signal's through
 * its store_<signal>.c. Used by store.c (a window
 * per transaction) and by store_maint.c and store_salvage.c (windows
 * written again).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "store/store.h"
#include "window/window.h"
#include "store_int.h"

static int
put_window_row(struct store *s, const struct window *w, int64_t *ret_id)
{
	sqlite3_stmt *st = store_ws(s, WS_INS_WINDOW);
	const struct window_health *h = &w->health;
	int64_t v[WC__MAX];
	int i, rc;

	v[WC_LEVEL] = w->level;
	v[WC_SEQ] = (int64_t)w->seq;
	v[WC_MONO_START] = w->mono_start_ns;
	v[WC_MONO_END] = w->mono_end_ns;
	v[WC_BOOT_START] = w->boot_start_ns;
	v[WC_BOOT_END] = w->boot_end_ns;
	v[WC_WALL_START] = w->wall_start_ns;
	v[WC_WALL_END] = w->wall_end_ns;
	v[WC_DURATION] = w->mono_end_ns - w->mono_start_ns;
	v[WC_HZ] = w->hz;
	v[WC_INTERVAL] = w->interval_ms;
	v[WC_CPU_SPAN] = w->cpu_span;
	v[WC_SAMPLES] = w->samples;
	v[WC_SAMPLES_VALID] = w->samples_valid;
	v[WC_D_CTXT] = (int64_t)w->d_ctxt;
	v[WC_D_PROCESSES] = (int64_t)w->d_processes;
	v[WC_VM_SAMPLES] = w->vm_samples;
	v[WC_SELF_UTIME] = (int64_t)h->self_utime_us;
	v[WC_SELF_STIME] = (int64_t)h->self_stime_us;
	v[WC_SAMPLE_NS_SUM] = (int64_t)h->sample_ns_sum;
	v[WC_SAMPLE_NS_MAX] = (int64_t)h->sample_ns_max;
	v[WC_LATE] = h->late_ticks;
	v[WC_BURST] = h->burst_samples;
	v[WC_PROCS_SCANNED] = h->procs_scanned;
	v[WC_THREADS_SCANNED] = h->threads_scanned;
	v[WC_PROCS_EXITED] = h->procs_exited;
	v[WC_THREADS_EXITED] = h->threads_exited;
	v[WC_CPU_DROPPED] = h->cpu_dropped;
	v[WC_STORE_STATE] = h->store_state;
	v[WC_STORE_QUEUED] = h->store_queued;
	v[WC_STORE_DROPPED] = h->store_dropped;
	for (i = 0; i < WC__MAX; i++) {
		if (i == WC_BOOT_ID)
			sqlite3_bind_text(st, i + 1, w->boot_id,
			    (int)strnlen(w->boot_id, sizeof(w->boot_id)),
			    SQLITE_TRANSIENT);
		else
			sqlite3_bind_int64(st, i + 1, v[i]);
	}
	/* Range reads rely on no window being longer than this. */
	if (v[WC_WALL_END] - v[WC_WALL_START] > s->max_span_ns)
		__atomic_store_n(&s->max_span_ns,
		    v[WC_WALL_END] - v[WC_WALL_START],
		    __ATOMIC_RELEASE); /* store_conn.c */
	/* ids handed out by the store (store_spool.c), else SQLite's */
	if (s->id_hwm != NULL)
		sqlite3_bind_int64(st, WC__MAX + 1, *s->id_hwm + 1);
	else
		sqlite3_bind_null(st, WC__MAX + 1);
	*ret_id = 0;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*ret_id = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st);
	}
	sqlite3_reset(st);
	if (s->id_hwm != NULL && *ret_id > *s->id_hwm)
		*s->id_hwm = *ret_id;
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Counters keyed by name, so a new reason or key needs no migration. */
static int
put_counts(struct store *s, int64_t id, const struct window *w)
{
	const struct window_health *h = &w->health;
	int rc = SQLITE_OK;
	unsigned i;

	for (i = 0; i < INV__MAX && rc == SQLITE_OK; i++) {
		if (w->inv_samples[i])
			rc = store_put_count(s, id, "inv_sample",
			    invalid_name(i), w->inv_samples[i]);
		if (rc == SQLITE_OK && w->inv_deltas[i])
			rc = store_put_count(s, id, "inv_delta",
			    invalid_name(i), w->inv_deltas[i]);
	}
	for (i = 0; i < COLL__MAX && rc == SQLITE_OK; i++) {
		if (h->coll_ns_sum[i])
			rc = store_put_count(s, id, "coll_ns_sum", coll_name(i),
			    h->coll_ns_sum[i]);
		if (rc == SQLITE_OK && h->coll_ns_max[i])
			rc = store_put_count(s, id, "coll_ns_max", coll_name(i),
			    h->coll_ns_max[i]);
	}
	/* A row per key the kernel has, even at 0: "have" is the row. */
	for (i = 0; i < VM__MAX && rc == SQLITE_OK; i++)
		if ((w->vm_have & (1u << i)) || w->d_vm[i])
			rc = store_put_count(s, id, "vmstat",
			    vmstat_key_name(i), w->d_vm[i]);
	return rc;
}

static int
put_gauges(struct store *s, const struct window *w)
{
	const struct {
		const char *key;
		const struct gauge *g;
	} sys[] = {
		{ "online_cpus", &w->online_cpus },
		{ "procs_running", &w->procs_running },
		{ "procs_blocked", &w->procs_blocked },
		{ "load1", &w->load1 },
		{ "load5", &w->load5 },
		{ "load15", &w->load15 },
		{ "load_runnable", &w->load_runnable },
		{ "load_threads", &w->load_threads },
	};
	int rc = SQLITE_OK;
	unsigned i;

	for (i = 0; i < sizeof(sys) / sizeof(sys[0]) && rc == SQLITE_OK; i++)
		if (sys[i].g->n)
			rc = store_put_gauge(s, "sys", sys[i].key, sys[i].g);
	for (i = 0; i < MI__MAX && rc == SQLITE_OK; i++)
		if ((w->mem_have & (1u << i)) || w->mem_kb[i].n)
			rc = store_put_gauge(s, "meminfo", meminfo_key_name(i),
			    &w->mem_kb[i]);
	return rc;
}

/*
 * All rows of one window, inside the caller's transaction. *ret_id is 0
 * when the window is already stored (a replay): nothing is written then.
 */
int
store_write_window(struct store *s, const struct window *w, int64_t *ret_id)
{
	sqlite3_stmt *st;
	int64_t id, covered = 0;
	unsigned i;
	int rc;

	*ret_id = 0;
	if (w->level == 0 && w->boot_id[0] != '\0') {
		sqlite3_stmt *st = store_ws(s, WS_COVERED);

		sqlite3_bind_text(st, 1, w->boot_id,
		    (int)strnlen(w->boot_id, sizeof(w->boot_id)),
		    SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, w->mono_start_ns);
		sqlite3_bind_int64(st, 3, w->mono_end_ns);
		if ((rc = store_run_int(st, &covered)) != SQLITE_OK || covered)
			return rc;
	}
	/* a replay: the same boot, level and start (v26: found by its
	 * wall start, windows having no UNIQUE key) */
	st = store_ws(s, WS_HAVE_WINDOW);
	sqlite3_bind_text(st, 1, w->boot_id,
	    (int)strnlen(w->boot_id, sizeof(w->boot_id)), SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, w->level);
	sqlite3_bind_int64(st, 3, w->mono_start_ns);
	sqlite3_bind_int64(st, 4, w->wall_start_ns);
	if ((rc = store_run_int(st, &covered)) != SQLITE_OK || covered)
		return rc;
	/* its boot, once per file (v24: the row holds the boot's id) */
	st = store_ws(s, WS_INS_BOOT);
	sqlite3_bind_text(st, 1, w->boot_id,
	    (int)strnlen(w->boot_id, sizeof(w->boot_id)), SQLITE_TRANSIENT);
	if ((rc = store_run(st)) != SQLITE_OK)
		return rc;
	if ((rc = put_window_row(s, w, &id)) != SQLITE_OK)
		return rc;
	if (id == 0) /* a replay, or nothing stored */
		return store_heal_check_replay(s, w);
	/* counters and gauges collect until every part has put its own;
	 * then the kv, sys and BPF blobs (store_wparts.c) */
	/* its spans' summaries no longer hold all their windows (a
	 * roll-up's: only those up to its bucket's span, store_maint.c) */
	if ((st = store_sum_forget_stmt(s, SUMF_ID)) != NULL) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2,
		    s->roll_span_ns > 0 ? s->roll_span_ns : INT64_MAX);
		if ((rc = store_sum_forget_run(s, st)) != SQLITE_OK)
			return rc;
	}
	store_wparts_begin(s);
	rc = put_counts(s, id, w);
	if (rc == SQLITE_OK)
		rc = put_gauges(s, w);
	/* the tasks as two blobs and their instances (store_inst.c) */
	if (rc == SQLITE_OK)
		rc = store_inst_put(s, id, w);
	/* each part's tables (store_parts[]) */
	for (i = 0; i < WPART__MAX && rc == SQLITE_OK; i++)
		if (store_parts[i]->put != NULL)
			rc = store_parts[i]->put(s, id, w);
	if (rc == SQLITE_OK)
		rc = store_wparts_put(s, id, w);
	if (rc == SQLITE_OK)
		*ret_id = id;
	return rc;
}
