/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reads of the window store for the control plane and for roll-ups: whole
 * windows (the window row here, its parts' blobs by store_wparts.c, its
 * tasks by store_taskread.c) and windows of a range
 * at a granularity; tasks, top-N and history are in store_taskread.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store/store_kv.h"
#include "store/store_sys.h"
#include "window/window.h"
#include "store_int.h"

#define ROWS_MAX 65536 /* entries of one blob's list; more is refused */

static void
bind_range(struct store *s, sqlite3_stmt *st, int64_t from, int64_t to)
{
	store_bind_named(st, ":from", from);
	store_bind_named(st, ":to", to);
	store_bind_named(st, ":span", s->max_span_ns);
}

int
store_read_prepare(struct store *s)
{
	unsigned i;
	int rc;

	for (i = 0; i < RS__MAX; i++)
		if ((rc = sqlite3_prepare_v3(s->db, store_rs_sql[i], -1,
			 SQLITE_PREPARE_PERSISTENT, &s->rs[i], NULL)) !=
		    SQLITE_OK)
			return rc;
	if ((rc = store_dict_load(s)) != SQLITE_OK)
		return rc;
	return store_sum_prepare(s);
}

void
store_read_finalize(struct store *s)
{
	unsigned i;

	store_sum_finalize(s);
	for (i = 0; i < RS__MAX; i++) {
		sqlite3_finalize(s->rs[i]);
		s->rs[i] = NULL;
	}
	store_rcache_free(s);
	store_wcache_free(s);
	store_aggs_free(&s->top_aggs);
	store_knames_free(s);
	/* reads prepare them too: every close path finalizes them here */
	store_prov_finalize(s);
}

/* ------------------------------------------------------------ columns */

static uint64_t
col_u64(sqlite3_stmt *st, int i)
{
	return (uint64_t)sqlite3_column_int64(st, i);
}

static void
col_text(sqlite3_stmt *st, int i, char *buf, size_t sz)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	snprintf(buf, sz, "%s", t ? t : "");
}

static void
col_window(sqlite3_stmt *st, struct window *w)
{
	struct window_health *h = &w->health;

	w->level = (uint32_t)sqlite3_column_int64(st, WC_LEVEL);
	col_text(st, WC_BOOT_ID, w->boot_id, sizeof(w->boot_id));
	w->seq = col_u64(st, WC_SEQ);
	w->mono_start_ns = sqlite3_column_int64(st, WC_MONO_START);
	w->mono_end_ns = sqlite3_column_int64(st, WC_MONO_END);
	w->boot_start_ns = sqlite3_column_int64(st, WC_BOOT_START);
	w->boot_end_ns = sqlite3_column_int64(st, WC_BOOT_END);
	w->wall_start_ns = sqlite3_column_int64(st, WC_WALL_START);
	w->wall_end_ns = sqlite3_column_int64(st, WC_WALL_END);
	w->hz = (uint32_t)sqlite3_column_int64(st, WC_HZ);
	w->interval_ms = (uint32_t)sqlite3_column_int64(st, WC_INTERVAL);
	w->samples = (uint32_t)sqlite3_column_int64(st, WC_SAMPLES);
	w->samples_valid = (uint32_t)sqlite3_column_int64(st, WC_SAMPLES_VALID);
	w->d_ctxt = col_u64(st, WC_D_CTXT);
	w->d_processes = col_u64(st, WC_D_PROCESSES);
	w->vm_samples = (uint32_t)sqlite3_column_int64(st, WC_VM_SAMPLES);
	h->self_utime_us = col_u64(st, WC_SELF_UTIME);
	h->self_stime_us = col_u64(st, WC_SELF_STIME);
	h->sample_ns_sum = col_u64(st, WC_SAMPLE_NS_SUM);
	h->sample_ns_max = col_u64(st, WC_SAMPLE_NS_MAX);
	h->late_ticks = (uint32_t)sqlite3_column_int64(st, WC_LATE);
	h->burst_samples = (uint32_t)sqlite3_column_int64(st, WC_BURST);
	h->procs_scanned = (uint32_t)sqlite3_column_int64(st, WC_PROCS_SCANNED);
	h->threads_scanned = (uint32_t)sqlite3_column_int64(st,
	    WC_THREADS_SCANNED);
	h->procs_exited = (uint32_t)sqlite3_column_int64(st, WC_PROCS_EXITED);
	h->threads_exited = (uint32_t)sqlite3_column_int64(st,
	    WC_THREADS_EXITED);
	h->cpu_dropped = (uint32_t)sqlite3_column_int64(st, WC_CPU_DROPPED);
	/* NULL before schema v2: read as 0, the struct has no "unknown". */
	h->store_state = (uint32_t)sqlite3_column_int64(st, WC_STORE_STATE);
	h->store_queued = (uint32_t)sqlite3_column_int64(st, WC_STORE_QUEUED);
	h->store_dropped = (uint32_t)sqlite3_column_int64(st, WC_STORE_DROPPED);
}

/* -------------------------------------------------------------- parts */

/* Keys are stored by name; an unknown name (a newer build's) is skipped. */
enum key_kind { K_INV, K_COLL, K_VM, K_MEM };

static int
key_index(enum key_kind kind, const char *name)
{
	static const unsigned n[] = {
		[K_INV] = INV__MAX,
		[K_COLL] = COLL__MAX,
		[K_VM] = VM__MAX,
		[K_MEM] = MI__MAX,
	};
	const char *k;
	unsigned i;

	for (i = 0; i < n[kind]; i++) {
		switch (kind) {
		case K_INV:
			k = invalid_name(i);
			break;
		case K_COLL:
			k = coll_name(i);
			break;
		case K_VM:
			k = vmstat_key_name(i);
			break;
		default:
			k = meminfo_key_name(i);
			break;
		}
		if (strcmp(k, name) == 0)
			return (int)i;
	}
	return -1;
}

/* The part whose counter kinds start like kind, or -1. */
static int
part_of_kind(const char *kind)
{
	unsigned i;

	for (i = 0; i < WPART__MAX; i++) {
		const struct store_part *p = store_parts[i];

		if (p->count != NULL &&
		    strncmp(kind, p->count_kind, strlen(p->count_kind)) == 0)
			return (int)i;
	}
	return -1;
}

static void
set_count(struct window *w, const char *kind, const char *key, uint64_t v)
{
	int i;

	if (strncmp(kind, "inv_", 4) == 0) {
		if ((i = key_index(K_INV, key)) < 0)
			return;
		if (strcmp(kind, "inv_sample") == 0)
			w->inv_samples[i] = (uint32_t)v;
		else if (strcmp(kind, "inv_delta") == 0)
			w->inv_deltas[i] = (uint32_t)v;
	} else if (strncmp(kind, "coll_ns_", 8) == 0) {
		if ((i = key_index(K_COLL, key)) < 0)
			return;
		if (strcmp(kind, "coll_ns_sum") == 0)
			w->health.coll_ns_sum[i] = v;
		else if (strcmp(kind, "coll_ns_max") == 0)
			w->health.coll_ns_max[i] = v;
	} else if ((i = part_of_kind(kind)) >= 0) {
		store_parts[i]->count(w, kind, key, v);
	} else if (strcmp(kind, "vmstat") == 0) {
		if ((i = key_index(K_VM, key)) < 0)
			return;
		w->d_vm[i] = v;
		w->vm_have |= 1u << i;
	}
}

static void
set_gauge(struct window *w, const char *kind, const char *key,
    const struct gauge *g)
{
	struct gauge *sys[] = {
		&w->online_cpus,
		&w->procs_running,
		&w->procs_blocked,
		&w->load1,
		&w->load5,
		&w->load15,
		&w->load_runnable,
		&w->load_threads,
	};
	static const char *const sysname[] = {
		"online_cpus",
		"procs_running",
		"procs_blocked",
		"load1",
		"load5",
		"load15",
		"load_runnable",
		"load_threads",
	};
	unsigned j;
	int i;

	if (strcmp(kind, "meminfo") == 0 && (i = key_index(K_MEM, key)) >= 0) {
		w->mem_kb[i] = *g;
		w->mem_have |= 1u << i;
		return;
	}
	if (strcmp(kind, "sys") != 0)
		return;
	for (j = 0; j < sizeof(sys) / sizeof(sys[0]); j++)
		if (strcmp(key, sysname[j]) == 0)
			*sys[j] = *g;
}

/* Counters and gauges by key id; an id the dictionary does not have
 * loses its entry alone (counted). */
static int
load_kv(struct store *s, const void *blob, size_t n, struct window *w)
{
	const char *kind, *key;
	struct store_frame f;
	struct store_kv kv;
	size_t i;
	int r;

	if ((r = store_unframe(blob, n, STORE_KV_PART, STORE_KV_VERSION, &f)) <
	    0)
		return r;
	r = store_kv_get(f.payload, f.len, f.version, ROWS_MAX, &kv);
	store_frame_release(&f);
	if (r < 0)
		return r;
	/* an unknown key id is the blob's fault (counted, the rest read);
	 * any other failure is the read's */
	for (i = 0; i < kv.ncount && (r == 0 || r == -ENOENT); i++) {
		if ((r = store_key_name(s, kv.count[i].key, &kind, &key)) == 0)
			set_count(w, kind, key, kv.count[i].value);
		else if (r == -ENOENT)
			store_blob_error(s);
	}
	for (i = 0; i < kv.ngauge && (r == 0 || r == -ENOENT); i++) {
		if ((r = store_key_name(s, kv.gauge[i].key, &kind, &key)) == 0)
			set_gauge(w, kind, key, &kv.gauge[i].g);
		else if (r == -ENOENT)
			store_blob_error(s);
	}
	store_kv_release(&kv);
	return r == -ENOENT ? 0 : r;
}

static int
load_sys(const void *blob, size_t n, struct window *w)
{
	struct store_frame f;
	struct store_sys sy;
	size_t i;
	int r;

	if ((r = store_unframe(blob, n, STORE_SYS_PART, STORE_SYS_VERSION,
		 &f)) < 0)
		return r;
	r = store_sys_get(f.payload, f.len, ROWS_MAX, &sy);
	store_frame_release(&f);
	if (r < 0)
		return r;
	for (i = 0; i < sy.ncpu; i++) {
		int32_t cpu = sy.cpu[i].cpu;

		if (cpu == -1)
			w->all = sy.cpu[i].c;
		else if (cpu >= 0 && (unsigned)cpu < w->cpu_span)
			w->cpu[cpu] = sy.cpu[i].c;
	}
	for (i = 0; i < sy.npsi; i++)
		if (sy.psi[i].res < PSI__MAX)
			w->psi[sy.psi[i].res] = sy.psi[i].p;
	store_sys_release(&sy);
	return 0;
}

/* Column i of the parts row (kv or sys); a bad blob counted, 0. */
static int
load_col(struct store *s, sqlite3_stmt *st, int i, struct window *w, bool kv)
{
	const void *b;
	int n, r;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	b = sqlite3_column_blob(st, i);
	n = sqlite3_column_bytes(st, i);
	r = kv ? load_kv(s, b, (size_t)n, w) : load_sys(b, (size_t)n, w);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		store_blob_error(s);
	return 0;
}

/*
 * The kv and sys parts of window id into w (store_wparts.c wrote them);
 * the parts row stays with RS_PARTS for the sched part's load
 * (store_get_bpfrows) until store_wparts_done. A window without a row
 * (none of its parts) reads as nothing.
 */
static int
wparts_load(struct store *s, int64_t id, struct window *w)
{
	sqlite3_stmt *st = store_rs(s, RS_PARTS);
	int rc, r;

	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_DONE) {
		sqlite3_reset(st);
		return 0;
	}
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		return store_fail(s, rc, "read window parts");
	}
	if ((r = load_col(s, st, 1, w, false)) < 0 ||
	    (r = load_col(s, st, 0, w, true)) < 0) {
		sqlite3_reset(st);
		return r;
	}
	s->ld_parts = true;
	return 0;
}

void
store_wparts_done(struct store *s)
{
	if (s->ld_parts)
		sqlite3_reset(s->rs[RS_PARTS]);
	s->ld_parts = false;
	s->ld_active = false;
}

/* --------------------------------------------------------------- load */

int
store_load(struct store *s, int64_t id, struct window **ret)
{
	sqlite3_stmt *st = store_rs(s, RS_WINDOW);
	struct window *w = NULL;
	int64_t span;
	unsigned i;
	int rc, r = 0;

	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		span = sqlite3_column_int64(st, WC_CPU_SPAN);
		if (span < 0 || span > VITALS_CPU_MAX)
			span = 0;
		if ((w = window_new(0, (unsigned)span)) == NULL)
			r = -ENOMEM;
		else
			col_window(st, w);
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = store_fail(s, rc, "read window");
	}
	sqlite3_reset(st);
	/* the kv and sys blobs (store_wparts.c); the BPF one and the folded
	 * parts' wait for the parts' loads below (store_fold_step) */
	s->ld_active = true;
	s->ld_id = id;
	if (r == 0)
		r = wparts_load(s, id, w);
	if (r == 0)
		r = store_load_tasks(s, id, w);
	if (r == 0)
		r = store_prov_load(s, w);
	/* each part's rows (store_parts[]); its counters came above */
	for (i = 0; i < WPART__MAX && r == 0; i++)
		if (store_parts[i]->load != NULL)
			r = store_parts[i]->load(s, id, w);
	store_wparts_done(s);
	if (r < 0) {
		window_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

/* -------------------------------------------------------------- reads */

static int
push_window(struct window ***arr, size_t *n, size_t *cap, struct window *w)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct window **p = realloc(*arr, nc * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		*arr = p;
		*cap = nc;
	}
	(*arr)[(*n)++] = w;
	return 0;
}

/*
 * Windows overlapping [from, to). Roll-ups delete what they merge, so the
 * stored windows already are the finest level available for each instant;
 * a coarser granularity merges them here into buckets aligned on the wall
 * clock (per boot). Stored windows coarser than asked are returned whole.
 *
 * At most `max` windows (buckets), the newest, are loaded (0: no limit);
 * *ret_trunc says that older ones matched too. Rows come newest first:
 * at granularity 0 the SQL stops at max + 1; at a coarser one the rows are
 * counted into buckets as the merge below will form them, and the scan
 * stops at the first row of bucket max + 1. Only the ids kept are loaded,
 * oldest first.
 */
/* Heap bytes a loaded window holds (the struct, its arrays and parts),
 * its rows charged their names inline (window_budget_bytes()). */
size_t
store_window_bytes(const struct window *w)
{
	return window_budget_bytes(w);
}

static int
windows_locked(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, size_t max, size_t budget, struct window ***ret,
    size_t *ret_n, bool *ret_trunc, size_t *ret_bytes)
{
	int64_t g = (int64_t)granularity_s * NSEC_PER_SEC, *ids = NULL;
	int64_t bucket, last_bucket = 0;
	char boot[sizeof(((struct window *)0)->boot_id)];
	char last_boot[sizeof(boot)] = "";
	size_t nids = 0, idcap = 0, nb = 0, n = 0, cap = 0, i;
	struct window **out = NULL, **loaded = NULL, *w;
	size_t nl = 0, lcap = 0, bytes = 0;
	bool trunc = false, over = false;
	sqlite3_stmt *st;
	int rc = SQLITE_DONE, r = 0;

	if (s == NULL || s->db == NULL)
		return -EBADF;
	if (from_wall_ns >= to_wall_ns)
		return -EINVAL;
	store_rcache_reset(s);
	st = store_rs(s, RS_RANGE);
	/* Ids first: loading runs other statements on the connection. */
	bind_range(s, st, from_wall_ns, to_wall_ns);
	store_bind_named(st, ":limit",
	    max && g == 0 && max < (size_t)INT64_MAX ? (int64_t)max + 1 : -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		col_text(st, 1, boot, sizeof(boot));
		bucket = g > 0 ? wall_bucket(sqlite3_column_int64(st, 2), g) :
				 0;
		if (g == 0 || nids == 0 || bucket != last_bucket ||
		    strcmp(boot, last_boot) != 0)
			nb++;
		if (max && nb > max) {
			trunc = true;
			break;
		}
		memcpy(last_boot, boot, sizeof(boot));
		last_bucket = bucket;
		if (nids == idcap) {
			size_t nc = idcap ? idcap * 2 : 64;
			int64_t *p = realloc(ids, nc * sizeof(*p));

			if (p == NULL) {
				r = -ENOMEM;
				break;
			}
			ids = p;
			idcap = nc;
		}
		ids[nids++] = sqlite3_column_int64(st, 0);
	}
	if (r == 0 && !trunc && rc != SQLITE_DONE)
		r = store_fail(s, rc, "windows in range");
	sqlite3_reset(st);

	/*
	 * Newest first, counting the bytes each window holds: at the budget
	 * the loading stops (the oldest bucket, perhaps begun, is dropped)
	 * and the answer is the newest windows that fit, marked truncated.
	 * The merge below then runs oldest first as before.
	 */
	for (i = 0; i < nids && r == 0; i++) {
		if ((r = store_load(s, ids[i], &w)) < 0)
			break;
		bytes += store_window_bytes(w);
		if ((r = push_window(&loaded, &nl, &lcap, w)) < 0) {
			window_free(w);
			break;
		}
		if (budget && bytes > budget && i + 1 < nids) {
			over = true;
			trunc = true;
			break;
		}
	}
	if (over && g > 0) {
		/* the last bucket begun may be missing older parts */
		const struct window *o = loaded[nl - 1];

		while (nl > 0 &&
		    strcmp(loaded[nl - 1]->boot_id, o->boot_id) == 0 &&
		    loaded[nl - 1]->wall_start_ns / g == o->wall_start_ns / g &&
		    nl > 1) {
			bytes -= store_window_bytes(loaded[nl - 1]);
			window_free(loaded[--nl]);
		}
	}
	for (i = nl; i > 0 && r == 0; i--) {
		struct window *last = n ? out[n - 1] : NULL;

		w = loaded[i - 1];
		loaded[i - 1] = NULL;
		if (g > 0 && last != NULL &&
		    strcmp(last->boot_id, w->boot_id) == 0 &&
		    wall_bucket(last->wall_start_ns, g) ==
			wall_bucket(w->wall_start_ns, g)) {
			r = window_merge(last, w);
			/* a bucket is as coarse as its coarsest part */
			if (w->level > last->level)
				last->level = w->level;
			window_free(w);
		} else if ((r = push_window(&out, &n, &cap, w)) < 0) {
			window_free(w);
		}
	}
	free(ids);
	for (i = 0; i < nl; i++)
		window_free(loaded[i]);
	free(loaded);
	if (r < 0) {
		for (i = 0; i < n; i++)
			window_free(out[i]);
		free(out);
		return r;
	}
	*ret = out;
	*ret_n = n;
	if (ret_trunc)
		*ret_trunc = trunc;
	if (ret_bytes)
		*ret_bytes = over ? bytes : 0;
	return 0;
}

int
store_windows_max(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, size_t max, struct window ***ret, size_t *ret_n,
    bool *ret_truncated)
{
	int r;

	if (s == NULL) /* s->db: under the lock (store_recover) */
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = windows_locked(s, from_wall_ns, to_wall_ns, granularity_s, max, 0,
	    ret, ret_n, ret_truncated, NULL);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * As store_windows_max, and loading stops once the windows loaded hold
 * more than budget bytes (0: no budget): *ret_bytes is then what they
 * hold (0 when the budget was not reached) and *ret_truncated is set.
 */
int
store_windows_budget(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, size_t max, size_t budget, struct window ***ret,
    size_t *ret_n, bool *ret_truncated, size_t *ret_bytes)
{
	int r;

	if (s == NULL)
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = windows_locked(s, from_wall_ns, to_wall_ns, granularity_s, max,
	    budget, ret, ret_n, ret_truncated, ret_bytes);
	pthread_mutex_unlock(&s->lock);
	return r;
}

int
store_windows(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, struct window ***ret, size_t *ret_n)
{
	return store_windows_max(s, from_wall_ns, to_wall_ns, granularity_s, 0,
	    ret, ret_n, NULL);
}
