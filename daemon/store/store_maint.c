/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keeping the store bounded: roll-ups of old windows into coarser ones,
 * retention by age, and the size bound (checked in every write transaction
 * and again here), with incremental vacuum so the file really shrinks.
 *
 * Ages come from the clock that cannot jump where it can: a window of the
 * current boot is as old as CLOCK_BOOTTIME says; only windows of earlier
 * boots need the wall clock, and a wall clock that ran far ahead of what
 * the stored windows vouch for deletes nothing until it is confirmed
 * (doc/storage.md, "Time").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "sched/sched.h"
#include "store/store.h"
#include "wcpu/wcpu.h"
#include "window/window.h"
#include "store_int.h"

/* ----------------------------------------------------------- roll-ups */

struct roll_src {
	int64_t id;
	int64_t bucket;
	char boot_id[40];
};

static int
cmp_mono(const void *a, const void *b)
{
	const struct window *x = *(struct window *const *)a;
	const struct window *y = *(struct window *const *)b;

	if (x->mono_start_ns != y->mono_start_ns)
		return x->mono_start_ns < y->mono_start_ns ? -1 : 1;
	return x->level < y->level ? -1 : x->level > y->level;
}

static int
add_id(int64_t **ids, size_t *n, size_t *cap, int64_t id)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		int64_t *p = realloc(*ids, nc * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		*ids = p;
		*cap = nc;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

/*
 * One bucket, one savepoint: the level-`from` windows `src`, plus any
 * level-`from`+1 window already holding this bucket (a late arrival rolled
 * after its neighbours), become one window; the sources go. The merged
 * window starts where its first source did, in the same bucket, and its
 * sums are theirs: the summaries of spans longer than the bucket and
 * whole multiples of it (wall-aligned, as the buckets) hold the same
 * figures after it and stay (a bucket that crossed a span's edge would
 * move figures across it: with rollup1_s = 90 those are forgotten);
 * the shorter ones are wrong now and the bucket's own is the window
 * itself: those are forgotten (store_tasksum.c).
 */
static int
roll_bucket(struct store *s, const struct roll_src *src, size_t n,
    unsigned from, int64_t span_ns)
{
	sqlite3_stmt *ex = store_ws(s, WS_ROLL_EXIST);
	struct window **w = NULL;
	int64_t *ids = NULL, new_id, forget_ns = span_ns;
	size_t nids = 0, cap = 0, i;
	int rc, r = 0;

	if ((rc = store_txn_begin(s)) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	for (i = 0; i < n && r == 0; i++)
		r = add_id(&ids, &nids, &cap, src[i].id);
	sqlite3_bind_text(ex, 1, src[0].boot_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(ex, 2, from + 1);
	sqlite3_bind_int64(ex, 3, src[0].bucket * span_ns);
	sqlite3_bind_int64(ex, 4, (src[0].bucket + 1) * span_ns);
	while (r == 0 && (rc = sqlite3_step(ex)) == SQLITE_ROW)
		r = add_id(&ids, &nids, &cap, sqlite3_column_int64(ex, 0));
	sqlite3_reset(ex);
	if (r == 0 && rc != SQLITE_DONE)
		r = store_fail(s, rc, "roll-up bucket");
	if (r == 0 && (w = calloc(nids, sizeof(*w))) == NULL)
		r = -ENOMEM;
	for (i = 0; i < nids && r == 0; i++)
		r = store_load(s, ids[i], &w[i]);
	if (r < 0)
		goto out;
	/* Level 2 keeps processes only (unless asked): a process's row
	 * already sums its threads, so its figures stay exact, and the
	 * threads were three quarters of a level-2 window. The parts'
	 * thread rows go too (BPF, wcpu: window_drop_threads). The longer
	 * spans' summaries (task rows only) then no longer hold these
	 * windows' sums when task thread rows went: they are forgotten
	 * too. */
	for (i = 0; from + 1 >= 2 && !s->o.rollup2_threads && i < nids; i++) {
		if (w[i]->nthreads)
			forget_ns = INT64_MAX;
		window_drop_threads(w[i]);
	}
	qsort(w, nids, sizeof(*w), cmp_mono);
	for (i = 1; i < nids && r == 0; i++)
		r = window_merge(w[0], w[i]);
	if (r < 0) {
		store_fail_errno(s, r, "roll-up: merge failed");
		goto out;
	}
	w[0]->level = from + 1;
	/* the merged BPF rows are bounded again (bpf_procs, bpf_threads)
	 * and the wcpu rows by their own bounds: keep the wcpu part to the
	 * BPF part's tasks, as each window's close did */
	wcpu_keep_bpf_rows(window_wcpu(w[0]), window_sched(w[0]));
	for (i = 0; i < nids && r == 0; i++) {
		sqlite3_stmt *f = store_sum_forget_stmt(s, SUMF_ID);

		if (f != NULL) {
			sqlite3_bind_int64(f, 1, ids[i]);
			sqlite3_bind_int64(f, 2, forget_ns);
			if ((rc = store_sum_forget_run(s, f)) != SQLITE_OK) {
				r = store_fail(s, rc, "roll-up summaries");
				break;
			}
		}
		sqlite3_bind_int64(store_ws(s, WS_DEL_WINDOW), 1, ids[i]);
		if ((rc = store_run(store_ws(s, WS_DEL_WINDOW))) != SQLITE_OK)
			r = store_fail(s, rc, "roll-up delete");
	}
	s->roll_span_ns = forget_ns;
	if (r == 0 && (rc = store_write_window(s, w[0], &new_id)) != SQLITE_OK)
		r = store_fail(s, rc, "roll-up insert");
	s->roll_span_ns = 0;
	/* Every window of this bucket was just deleted: a clash is a bug,
	 * and deleting the sources anyway would lose them. */
	if (r == 0 && new_id == 0)
		r = store_fail_errno(s, -EEXIST, "roll-up: target exists");
	if (r == 0 && (rc = store_txn_commit(s)) != SQLITE_OK)
		r = store_fail(s, rc, "commit");
	if (r == 0)
		s->st.windows_rolled += n;
out:
	if (r < 0)
		store_rollback(s);
	for (i = 0; w && i < nids; i++)
		window_free(w[i]);
	free(w);
	free(ids);
	return r;
}

/* floor(wall_start_ns / ?3): the span-aligned bucket, also before 1970 */
#define SQL_BUCKET_OF(p) \
	"((wall_start_ns - ((wall_start_ns % " p ") + " p ") % " p ") / " p ")"
#define SQL_BUCKET SQL_BUCKET_OF("?3")

/*
 * Roll-up sources of level ?1: windows of the current boot (?4, when
 * known) whose bucket ended at least `after` ago by CLOCK_BOOTTIME (?5:
 * now_boot - after; the bucket's end is carried from wall to boot time by
 * the window's own offset), and, when ?6 allows the wall clock, windows of
 * other boots starting before the aligned wall cutoff ?2 — but not a
 * window sampled in a burst that ended after ?7 (store_opts.burst_keep_s).
 */
/* clang-format off */
#define ROLL_SRC_SQL(x) \
    "SELECT id, " STORE_BOOT_TEXT("windows.") ", wall_start_ns" \
    " FROM windows WHERE level = ?1 AND (" \
    "(?4 != '' AND boot = boot_key(?4) AND boot_start_ns - wall_start_ns + (" \
    SQL_BUCKET_OF("?8") " + 1) * ?8 <= ?5) OR " \
    "(?6 AND (?4 = '' OR boot != boot_key(?4)) AND wall_start_ns < ?2))" \
    " AND NOT (burst_samples > 0 AND wall_end_ns > ?7)" x \
    " ORDER BY boot, " SQL_BUCKET ", mono_start_ns"
/*
 * Windows the pass's move just brought over stay out of its roll-ups and
 * retention: until the commit lets the spool go, readers also see their
 * spool copies, which would then be counted beside a roll-up or come back
 * after retention. The next pass takes them.
 */
#define NOT_MOVED " AND id NOT IN (SELECT id FROM temp.spool_ids)"
static const char roll_src_sql[] = ROLL_SRC_SQL("");
static const char roll_src_spool_sql[] = ROLL_SRC_SQL(NOT_MOVED);
/* clang-format on */

/* What one pass decided about "now" (maintain_locked). */
struct maint_now {
	const struct store_now *now;
	bool wall_ok; /* the wall clock may judge windows of other boots */
	/* the main file within a 16th of its bound: roll what is of age
	 * now, batch or not (size_pressed) */
	bool pressed;
};

static int
prepare(struct store *s, const char *sql, sqlite3_stmt **ret)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, ret, NULL);

	return rc == SQLITE_OK ? 0 : store_fail(s, rc, "prepare");
}

/*
 * Level 0 in batches, with its rows in tables per span (store_span.c):
 * a window is of age when its whole span (STORE_SPAN_NS, not its
 * bucket) is, so a roll-up takes every level-0 window of a span at once
 * and the sweep drops the span's tables whole instead of deleting their
 * rows one by one. 0: by bucket.
 */
static int64_t
roll_span(const struct store *s, unsigned from, const struct maint_now *mn)
{
	return from == 0 && store_span_on(s) && s->o.rollup_batch_s > 0 &&
		!mn->pressed ?
	    STORE_SPAN_NS :
	    0;
}

/* The roll-up source query of level `from` for windows older than
 * after_ns, its parameters bound. */
static int
roll_src_stmt(struct store *s, unsigned from, const struct maint_now *mn,
    int64_t after_ns, int64_t span_ns, sqlite3_stmt **ret)
{
	int64_t cutoff = mn->now->wall_ns - after_ns;
	int64_t age_ns = roll_span(s, from, mn) ? roll_span(s, from, mn) :
						  span_ns;
	sqlite3_stmt *st;
	int r;

	if ((r = prepare(s,
		 s->spool_attached ? roll_src_spool_sql : roll_src_sql, &st)) <
	    0)
		return r;
	/* Whole buckets only: the last one may still be filling. */
	cutoff = wall_bucket(cutoff, age_ns) * age_ns;
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, cutoff);
	sqlite3_bind_int64(st, 3, span_ns);
	sqlite3_bind_int64(st, 8, age_ns);
	sqlite3_bind_text(st, 4, mn->now->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, mn->now->boot_ns - after_ns);
	sqlite3_bind_int(st, 6, mn->wall_ok);
	/* burst windows younger than burst_keep_s stay at level 0 (a later
	 * pass rolls them into their bucket's window, a late arrival) */
	sqlite3_bind_int64(st, 7,
	    from == 0 && s->o.burst_keep_s > 0 ?
		mn->now->wall_ns - s->o.burst_keep_s * NSEC_PER_SEC :
		INT64_MAX);
	*ret = st;
	return 0;
}

/*
 * Roll-ups in batches (store_opts.rollup_batch_s): a level is rolled
 * only once a source window is rollup_batch_s past its age, and then
 * every window of age. A pass that rolls pays for the b-tree pages its
 * deletions and inserts dirty (interior pages, the edges of the deleted
 * run, free-list trunks and pointer maps, the summaries forgotten and
 * built), each written twice with a rollback journal, whatever it rolls:
 * rolling an hour at once pays that once an hour instead of at every
 * pass (doc/storage.md, "Where a day's writes go").
 */
static int
roll_due(struct store *s, unsigned from, const struct maint_now *mn,
    int64_t after_ns, int64_t span_ns, bool *ret)
{
	sqlite3_stmt *st;
	int rc, r;

	*ret = true;
	if (s->o.rollup_batch_s <= 0 || mn->pressed)
		return 0;
	/* by whole spans: the span is the batch (roll_span) */
	if (roll_span(s, from, mn))
		return 0;
	if (s->o.rollup_batch_s > (INT64_MAX - after_ns) / NSEC_PER_SEC)
		return 0; /* past any clock: at every pass */
	if ((r = roll_src_stmt(s, from, mn,
		 after_ns + s->o.rollup_batch_s * NSEC_PER_SEC, span_ns, &st)) <
	    0)
		return r;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(s, rc, "roll-up scan");
	*ret = rc == SQLITE_ROW;
	return 0;
}

/* Windows of level `from` old enough → span-aligned buckets, rolled. */
static int
roll_level(struct store *s, unsigned from, const struct maint_now *mn,
    int64_t after_s, unsigned span_s)
{
	int64_t span_ns = (int64_t)span_s * NSEC_PER_SEC;
	int64_t after_ns = after_s * NSEC_PER_SEC;
	struct roll_src *src = NULL, *p;
	size_t n = 0, cap = 0, i, j;
	sqlite3_stmt *st;
	const char *b;
	bool due;
	int rc, r = 0;

	if ((r = roll_due(s, from, mn, after_ns, span_ns, &due)) < 0 || !due)
		return r;
	if ((r = roll_src_stmt(s, from, mn, after_ns, span_ns, &st)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((p = realloc(src, cap * sizeof(*p))) == NULL) {
				r = -ENOMEM;
				break;
			}
			src = p;
		}
		p = &src[n++];
		p->id = sqlite3_column_int64(st, 0);
		b = (const char *)sqlite3_column_text(st, 1);
		snprintf(p->boot_id, sizeof(p->boot_id), "%s", b ? b : "");
		p->bucket = wall_bucket(sqlite3_column_int64(st, 2), span_ns);
	}
	sqlite3_finalize(st);
	if (r == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = store_fail(s, rc, "roll-up scan");
	for (i = 0; i < n && r == 0; i = j) {
		for (j = i + 1; j < n && src[j].bucket == src[i].bucket &&
		     strcmp(src[j].boot_id, src[i].boot_id) == 0;
		     j++)
			;
		r = roll_bucket(s, &src[i], j - i, from, span_ns);
		store_after_write(s);
		/* Windows that cannot merge (USER_HZ differs) stay as they
		 * are rather than stall every later bucket. */
		if (r == -EINVAL)
			r = 0;
	}
	free(src);
	/* the spans rolled whole dropped, the rest's rows of the sources
	 * deleted (store_span.c) */
	/* at every pass, not only one that rolled: a sweep that failed
	 * (a full disk) leaves rows the next pass takes */
	if (r == 0 && from == 0 && store_span_on(s)) {
		if ((rc = store_txn_begin(s)) != SQLITE_OK)
			return store_fail(s, rc, "begin");
		if ((rc = store_span_sweep(s)) == SQLITE_OK)
			rc = store_txn_commit(s);
		if (rc != SQLITE_OK) {
			r = store_fail(s, rc, "roll-up: span sweep");
			store_rollback(s);
		}
	}
	return r;
}

/*
 * Retention: windows of the current boot that ended before ?2 by
 * CLOCK_BOOTTIME, and, when ?4 allows the wall clock, windows of other
 * boots that ended before ?3 by the wall clock.
 */
#define DEL_AGE_SQL(x)                                                        \
	"DELETE FROM windows WHERE ((?1 != '' AND boot = boot_key(?1) AND"    \
	" boot_end_ns < ?2) OR (?4 AND (?1 = '' OR boot != boot_key(?1)) AND" \
	" wall_end_ns < ?3))" x
static const char del_age_sql[] = DEL_AGE_SQL("");
static const char del_age_spool_sql[] = DEL_AGE_SQL(NOT_MOVED);

/* What the wall clock would delete if it were believed. */
static const char held_sql[] =
    "SELECT count(*) FROM windows WHERE (?1 = '' OR boot != boot_key(?1)) AND"
    " wall_end_ns < ?2";

static int
delete_age(struct store *s, const struct maint_now *mn)
{
	int64_t retain_ns = s->o.retain_s * NSEC_PER_SEC;
	sqlite3_stmt *st, *f;
	uint64_t n;
	int rc, r;

	if ((rc = store_txn_begin(s)) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	if ((r = prepare(s, s->spool_attached ? del_age_spool_sql : del_age_sql,
		 &st)) < 0) {
		store_rollback(s);
		return r;
	}
	/* the summaries of the spans it cuts into first (the same rule) */
	if ((f = store_sum_forget_stmt(s, SUMF_AGE)) != NULL) {
		sqlite3_bind_text(f, 1, mn->now->boot_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(f, 2, mn->now->boot_ns - retain_ns);
		sqlite3_bind_int64(f, 3, mn->now->wall_ns - retain_ns);
		sqlite3_bind_int(f, 4, mn->wall_ok);
	}
	sqlite3_bind_text(st, 1, mn->now->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, mn->now->boot_ns - retain_ns);
	sqlite3_bind_int64(st, 3, mn->now->wall_ns - retain_ns);
	sqlite3_bind_int(st, 4, mn->wall_ok);
	if ((rc = store_sum_forget_run(s, f)) == SQLITE_OK)
		rc = store_run(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		r = store_fail(s, rc, "retention");
		store_rollback(s);
		return r;
	}
	n = (uint64_t)sqlite3_changes(s->db);
	rc = SQLITE_OK;
	if (n > 0 && store_span_on(s))
		rc = store_span_sweep(s);
	if (rc == SQLITE_OK && (rc = store_vacuum_excess(s)) == SQLITE_OK)
		rc = store_txn_commit(s);
	if (rc != SQLITE_OK) {
		r = store_fail(s, rc, "retention commit");
		store_rollback(s);
		return r;
	}
	s->st.deleted_age += n;
	return 0;
}

/* One integer from sql with text ?1 and integer ?2 bound; 0 for NULL. */
static int
query_int(struct store *s, const char *sql, const char *t1, int64_t i2,
    int64_t *ret, bool *ret_null)
{
	sqlite3_stmt *st;
	int rc, r;

	if ((r = prepare(s, sql, &st)) < 0)
		return r;
	sqlite3_bind_text(st, 1, t1, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, i2);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*ret_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
		*ret = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : store_fail(s, rc, "clock check");
}

/*
 * What the stored windows vouch for, in one scan: of this boot's (?1)
 * windows the smallest wall − boot offset and the earliest start; of other
 * boots' windows the latest end. NULL: no such window.
 */
static const char clock_ref_sql[] =
    "SELECT min(CASE WHEN ?1 != '' AND boot = boot_key(?1) THEN"
    " wall_end_ns - boot_end_ns END),"
    " min(CASE WHEN ?1 != '' AND boot = boot_key(?1) THEN wall_start_ns END),"
    " max(CASE WHEN ?1 = '' OR boot != boot_key(?1) THEN wall_end_ns END)"
    " FROM windows";

struct clock_ref {
	bool have_cur, have_other;
	int64_t cur_off, cur_first, other_end;
};

static int
clock_ref(struct store *s, const char *boot_id, struct clock_ref *ret)
{
	sqlite3_stmt *st;
	int rc, r;

	memset(ret, 0, sizeof(*ret));
	if ((r = prepare(s, clock_ref_sql, &st)) < 0)
		return r;
	sqlite3_bind_text(st, 1, boot_id, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ret->have_cur = sqlite3_column_type(st, 0) != SQLITE_NULL;
		ret->cur_off = sqlite3_column_int64(st, 0);
		ret->cur_first = sqlite3_column_int64(st, 1);
		ret->have_other = sqlite3_column_type(st, 2) != SQLITE_NULL;
		ret->other_end = sqlite3_column_int64(st, 2);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : store_fail(s, rc, "clock check");
}

/* The step, in ns, beyond which the wall clock moved against boottime. */
#define CLOCK_STEP_NS (2 * NSEC_PER_SEC)

/*
 * How far the wall clock is ahead of what the stored windows vouch for:
 *  - within this boot, the wall clock minus the earliest-looking clock
 *    the boot's windows were stamped with (run forward by boottime): a
 *    forward step since the first of them;
 *  - across boots, the start of this boot's first window (or now, when it
 *    has none yet) minus the end of the newest window of any other boot.
 * Then whether it is confirmed: the kernel says it is synchronised, or it
 * has not moved against CLOCK_BOOTTIME for clock_stable_s.
 */
static int
judge_clock(struct store *s, const struct store_now *now, bool *ret_ok)
{
	int64_t jump = (s->o.clock_jump_s > 0 ? s->o.clock_jump_s :
						STORE_CLOCK_JUMP_S) *
	    NSEC_PER_SEC;
	int64_t stable = (s->o.clock_stable_s > 0 ? s->o.clock_stable_s :
						    STORE_CLOCK_STABLE_S) *
	    NSEC_PER_SEC;
	int64_t off = now->wall_ns - now->boot_ns, ahead = 0, first;
	struct clock_ref ref;
	int r;

	if (!s->clk.init || off - s->clk.off_ns > CLOCK_STEP_NS ||
	    s->clk.off_ns - off > CLOCK_STEP_NS) {
		s->clk.init = true;
		s->clk.stable_since_ns = now->boot_ns;
	}
	s->clk.off_ns = off;
	if ((r = clock_ref(s, now->boot_id, &ref)) < 0)
		return r;
	first = now->wall_ns;
	if (ref.have_cur) {
		ahead = off - ref.cur_off;
		first = ref.cur_first;
	}
	if (ref.have_other && first - ref.other_end > ahead)
		ahead = first - ref.other_end;
	s->st.clock_ahead_ns = ahead > 0 ? ahead : 0;
	s->st.clock_suspect = ahead > jump;
	s->st.clock_confirmed = now->wall_sync == 1 ||
	    now->boot_ns - s->clk.stable_since_ns >= stable;
	*ret_ok = !s->st.clock_suspect || s->st.clock_confirmed;
	return 0;
}

/* The wall clock is not believed: count what it would have deleted. */
static int
note_held(struct store *s, const struct store_now *now)
{
	int64_t n = 0;
	bool null;
	int r;

	s->st.clock_deferred++;
	if (s->o.retain_s <= 0)
		return 0;
	if ((r = query_int(s, held_sql, now->boot_id,
		 now->wall_ns - s->o.retain_s * NSEC_PER_SEC, &n, &null)) < 0)
		return r;
	s->st.clock_held = (uint64_t)n;
	return 0;
}

/* Instances no window refers to any more (store_inst.c), before the
 * vacuum below gives their pages back. */
static int
prune_instances(struct store *s)
{
	uint64_t n = 0;
	int rc, r;

	if ((rc = store_txn_begin(s)) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	if ((rc = store_inst_prune(s, &n)) == SQLITE_OK &&
	    (rc = store_prov_prune(s)) == SQLITE_OK)
		rc = store_txn_commit(s);
	if (rc != SQLITE_OK) {
		r = store_fail(s, rc, "instances");
		store_rollback(s);
		return r;
	}
	s->st.instances_pruned += n;
	return 0;
}

static int
shrink(struct store *s)
{
	uint64_t del0 = s->st.deleted_size;
	int rc, r;

	if ((rc = store_txn_begin(s)) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	if (s->o.max_bytes == 0 || (r = store_enforce_size(s, 0)) == 0) {
		r = 0;
		if ((rc = store_vacuum_excess(s)) == SQLITE_OK)
			rc = store_txn_commit(s);
		if (rc != SQLITE_OK)
			r = store_fail(s, rc, "size commit");
	}
	if (r < 0) {
		store_rollback(s);
		s->st.deleted_size = del0;
	}
	return r;
}

/*
 * A pass is one transaction: the spool's move, then retention, roll-ups,
 * instances, summaries and the size bound, each a savepoint in it
 * (store_txn_begin). Each of them rewrites page 1 and the tail pages of
 * the same b-trees, and with a rollback journal every commit journals and
 * syncs those again: a pass of five roll-up buckets was ten commits
 * (doc/storage.md, "Maintenance"). Readers go on reading through the pass
 * (the writer holds RESERVED) and wait only for its one commit.
 */
static int
pass_begin(struct store *s)
{
	int rc;

	if ((rc = store_run(store_ws(s, WS_BEGIN))) != SQLITE_OK)
		return store_fail(s, rc, "maintenance: begin");
	s->pass_txn = true;
	return 0;
}

/* *ret_done: the pass's changes are in the file (SQLite may have ended
 * the transaction itself on a full disk or an I/O error: then not). */
static int
pass_commit(struct store *s, bool *ret_done)
{
	int rc;

	*ret_done = false;
	s->pass_txn = false;
	if (sqlite3_get_autocommit(s->db)) {
		/* SQLite ended it and the failing step said so; the ids the
		 * pass cached went with it */
		store_rollback(s);
		return 0;
	}
	if ((rc = store_run(store_ws(s, WS_COMMIT))) != SQLITE_OK) {
		rc = store_fail(s, rc, "maintenance: commit");
		store_rollback(s);
		return rc;
	}
	*ret_done = true;
	return 0;
}

/*
 * Whether the size bound is about to delete: the pages in use (free ones
 * are reused first) past budget - budget / 16. The bound deletes the
 * oldest windows once the file passes its budget (at a put, a move or
 * here in shrink); windows waiting for their batch (roll_due) would then
 * go as history while their roll-up would have made the room. So near
 * the bound everything of age rolls at this pass, and shrink deletes
 * only what is still over. The 16th leaves room for the puts or the move
 * before the next pass (a move larger than that still deletes first).
 */
static int
size_pressed(struct store *s, bool *ret)
{
	int64_t pages, nfree, limit = (int64_t)s->budget;
	int rc;

	*ret = false;
	if (s->o.max_bytes == 0)
		return 0;
	if ((rc = store_pages(s, &pages, &nfree)) < 0)
		return rc;
	*ret = (pages - nfree) * s->page_size > limit - limit / 16;
	return 0;
}

/* The steps after the move, each undone alone when it fails; the first
 * failure ends the pass (what came before it still commits). */
static int
pass_steps(struct store *s, struct maint_now *mn)
{
	const struct store_opts *o = &s->o;
	int r;

	if (o->retain_s > 0 && (r = delete_age(s, mn)) < 0)
		return r;
	if ((r = size_pressed(s, &mn->pressed)) < 0)
		return r;
	if (o->rollup1_s > 0 &&
	    (r = roll_level(s, 0, mn, o->rollup1_after_s, o->rollup1_s)) < 0)
		return r;
	if (o->rollup2_s > 0 &&
	    (r = roll_level(s, 1, mn, o->rollup2_after_s, o->rollup2_s)) < 0)
		return r;
	/* summaries of the spans now over or changed (store_tasksum.c) */
	if ((r = prune_instances(s)) < 0 || (r = store_sum_build(s)) < 0)
		return r;
	/* dictionaries for the lists that have none (store_dict.c) */
	if ((r = store_dict_train(s, mn->now->wall_ns)) < 0)
		return r;
	return shrink(s);
}

static int
maintain_locked(struct store *s, const struct store_now *now)
{
	struct maint_now mn = { .now = now };
	struct store_stats was;
	struct store_move mv = { 0 };
	bool done = false;
	int r, rc;

	if (s == NULL || s->db == NULL)
		return -EBADF;
	was = s->st;
	store_spool_attach(s); /* ATTACH cannot run in a transaction */
	if ((r = pass_begin(s)) < 0) {
		if (s->spool_attached) /* nor could the spool move */
			s->st.spool_failures++;
		goto fail;
	}
	/* what waits in the spool first: roll-ups and retention see it
	 * (store_spool.c); while it cannot move, nothing here deletes or
	 * merges (a spool window would then be counted beside its roll-up,
	 * or come back after its retention) */
	if ((r = store_spool_move(s, &mv)) < 0) {
		/* the move is no step of its own: the whole pass goes */
		s->pass_txn = false;
		store_rollback(s);
		(void)store_spool_let_go(s, &mv, false);
		goto fail;
	}
	/* the clock judged against every window, the moved ones too */
	if ((r = judge_clock(s, now, &mn.wall_ok)) == 0 && !mn.wall_ok)
		r = note_held(s, now);
	if (r == 0 && mn.wall_ok)
		s->st.clock_held = 0;
	if (r == 0)
		r = pass_steps(s, &mn);
	mv.busy0 = s->busy_ns; /* the move's wait: the commit's */
	if ((rc = pass_commit(s, &done)) < 0 && r == 0)
		r = rc;
	store_dict_done(s, done);
	if (!done) {
		/* nothing of the pass is in the file: nor are its counts */
		s->st.windows_rolled = was.windows_rolled;
		s->st.deleted_age = was.deleted_age;
		s->st.deleted_size = was.deleted_size;
		s->st.instances_pruned = was.instances_pruned;
	}
	if ((rc = store_spool_let_go(s, &mv, done)) < 0 && r == 0)
		r = rc;
	if (r < 0)
		goto fail;
	/* a file left over the bound by a lower one (auto_vacuum NONE) */
	if ((r = store_vacuum_over(s)) < 0)
		goto fail;
	store_after_write(s);
	/* what it costs and holds now (a failure here loses no window) */
	(void)store_usage_update(s, clock_ns(CLOCK_BOOTTIME));
	return 0;
fail:
	store_note_write_error(s, r);
	store_after_write(s);
	return r;
}

int
store_maintain_at(struct store *s, const struct store_now *now)
{
	int r;

	if (s == NULL || now == NULL)
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	store_heal_reopen(s); /* no pass on an index a -shm fault emptied */
	r = s->db == NULL ? -EBADF : maintain_locked(s, now);
	/* the pass's statements until the next one (store_ws) */
	if (s->db != NULL)
		store_stmts_release(s, false);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * The wall clock alone, vouched for by the caller (tests, tools, a replay
 * of a simulated timeline): every window judged by its wall times.
 */
int
store_maintain(struct store *s, int64_t now_wall_ns)
{
	struct store_now now = { .wall_ns = now_wall_ns, .wall_sync = 1 };

	return store_maintain_at(s, &now);
}
