/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keeping the store bounded: roll-ups of old windows into coarser ones,
 * retention by age, and the size bound (checked in every write transaction
 * and again here), with incremental vacuum so the file really shrinks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/*
 * Keep the main file within its budget inside the current transaction, so
 * the bound holds at every commit: drop the oldest windows (never `keep`,
 * the one being written) and hand the freed pages back to the file system.
 * Once over the bound it makes room down to a low-water mark, 1/64 below,
 * so that the next puts do not each pay for a delete and a vacuum.
 * -EFBIG: even alone, `keep` does not fit.
 */
int
store_enforce_size(struct store *s, int64_t keep)
{
	int64_t psz = s->page_size, pages, nfree, nwin, k, excess, per;
	int64_t limit = (int64_t)s->budget;
	int64_t low = limit - limit / 64;
	int rc;

	for (;;) {
		rc = store_run_int(s->ws[WS_PAGE_COUNT], &pages);
		if (rc == SQLITE_OK)
			rc = store_run_int(s->ws[WS_FREELIST], &nfree);
		if (rc != SQLITE_OK)
			return store_fail(s, rc, "page count");
		if (pages * psz <= limit)
			return 0;
		/* Free pages alone are enough: give them back. */
		if (nfree > 0 && (pages - nfree) * psz <= limit) {
			if ((rc = store_run(s->ws[WS_VACUUM])) != SQLITE_OK)
				return store_fail(s, rc, "incremental_vacuum");
			continue;
		}
		if ((rc = store_run_int(s->ws[WS_COUNT], &nwin)) != SQLITE_OK)
			return store_fail(s, rc, "count");
		if (nwin <= (keep ? 1 : 0)) {
			if (pages * psz <= (int64_t)s->budget)
				return 0; /* fits, just not with headroom */
			return store_fail_errno(s, -EFBIG,
			    "store: one window exceeds max_bytes");
		}
		limit = low;
		/* Guess from the average window, then let the loop correct. */
		excess = (pages - nfree) * psz - limit;
		per = (pages - nfree) * psz / nwin;
		k = (per > 0 ? excess / per : 0) + 1;
		sqlite3_bind_int64(s->ws[WS_DEL_OLDEST], 1, keep);
		sqlite3_bind_int64(s->ws[WS_DEL_OLDEST], 2, k);
		if ((rc = store_run(s->ws[WS_DEL_OLDEST])) != SQLITE_OK)
			return store_fail(s, rc, "delete oldest");
		s->st.deleted_size += (uint64_t)sqlite3_changes(s->db);
		if ((rc = store_run(s->ws[WS_VACUUM])) != SQLITE_OK)
			return store_fail(s, rc, "incremental_vacuum");
	}
}

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
 * One bucket, one transaction: the level-`from` windows `src`, plus any
 * level-`from`+1 window already holding this bucket (a late arrival rolled
 * after its neighbours), become one window; the sources go.
 */
static int
roll_bucket(struct store *s, const struct roll_src *src, size_t n,
    unsigned from, int64_t span_ns)
{
	sqlite3_stmt *ex = s->ws[WS_ROLL_EXIST];
	struct window **w = NULL;
	int64_t *ids = NULL, new_id;
	size_t nids = 0, cap = 0, i;
	int rc, r = 0;

	if ((rc = store_run(s->ws[WS_BEGIN])) != SQLITE_OK)
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
	qsort(w, nids, sizeof(*w), cmp_mono);
	for (i = 1; i < nids && r == 0; i++)
		r = window_merge(w[0], w[i]);
	if (r < 0) {
		store_fail_errno(s, r, "roll-up: merge failed");
		goto out;
	}
	w[0]->level = from + 1;
	for (i = 0; i < nids && r == 0; i++) {
		sqlite3_bind_int64(s->ws[WS_DEL_WINDOW], 1, ids[i]);
		if ((rc = store_run(s->ws[WS_DEL_WINDOW])) != SQLITE_OK)
			r = store_fail(s, rc, "roll-up delete");
	}
	if (r == 0 && (rc = store_write_window(s, w[0], &new_id)) != SQLITE_OK)
		r = store_fail(s, rc, "roll-up insert");
	/* Every window of this bucket was just deleted: a clash is a bug,
	 * and deleting the sources anyway would lose them. */
	if (r == 0 && new_id == 0)
		r = store_fail_errno(s, -EEXIST, "roll-up: target exists");
	if (r == 0 && (rc = store_run(s->ws[WS_COMMIT])) != SQLITE_OK)
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

/* Windows of level `from` starting before `cutoff` → span-aligned buckets. */
static int
roll_level(struct store *s, unsigned from, int64_t cutoff, unsigned span_s)
{
	sqlite3_stmt *st = s->ws[WS_ROLL_SRC];
	int64_t span_ns = (int64_t)span_s * NSEC_PER_SEC;
	struct roll_src *src = NULL, *p;
	size_t n = 0, cap = 0, i, j;
	const char *b;
	int rc, r = 0;

	/* Whole buckets only: the last one may still be filling. */
	cutoff -= cutoff % span_ns;
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, cutoff);
	sqlite3_bind_int64(st, 3, span_ns);
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
		p->bucket = sqlite3_column_int64(st, 2) / span_ns;
	}
	sqlite3_reset(st);
	if (r == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = store_fail(s, rc, "roll-up scan");
	for (i = 0; i < n && r == 0; i = j) {
		for (j = i + 1; j < n && src[j].bucket == src[i].bucket &&
		    strcmp(src[j].boot_id, src[i].boot_id) == 0; j++)
			;
		r = roll_bucket(s, &src[i], j - i, from, span_ns);
		store_after_write(s);
		/* Windows that cannot merge (USER_HZ differs) stay as they
		 * are rather than stall every later bucket. */
		if (r == -EINVAL)
			r = 0;
	}
	free(src);
	return r;
}

static int
delete_age(struct store *s, int64_t before)
{
	uint64_t n;
	int rc;

	if ((rc = store_run(s->ws[WS_BEGIN])) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	sqlite3_bind_int64(s->ws[WS_DEL_AGE], 1, before);
	if ((rc = store_run(s->ws[WS_DEL_AGE])) != SQLITE_OK) {
		int r = store_fail(s, rc, "retention");

		store_rollback(s);
		return r;
	}
	n = (uint64_t)sqlite3_changes(s->db);
	if ((rc = store_run(s->ws[WS_VACUUM])) == SQLITE_OK)
		rc = store_run(s->ws[WS_COMMIT]);
	if (rc != SQLITE_OK) {
		int r = store_fail(s, rc, "retention commit");

		store_rollback(s);
		return r;
	}
	s->st.deleted_age += n;
	return 0;
}

static int
shrink(struct store *s)
{
	uint64_t del0 = s->st.deleted_size;
	int rc, r;

	if ((rc = store_run(s->ws[WS_BEGIN])) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	if (s->o.max_bytes == 0 || (r = store_enforce_size(s, 0)) == 0) {
		r = 0;
		if ((rc = store_run(s->ws[WS_VACUUM])) == SQLITE_OK)
			rc = store_run(s->ws[WS_COMMIT]);
		if (rc != SQLITE_OK)
			r = store_fail(s, rc, "size commit");
	}
	if (r < 0) {
		store_rollback(s);
		s->st.deleted_size = del0;
	}
	return r;
}

static int
maintain_locked(struct store *s, int64_t now_wall_ns)
{
	const struct store_opts *o;
	int r;

	if (s == NULL || s->db == NULL)
		return -EBADF;
	o = &s->o;
	if (o->retain_s > 0 &&
	    (r = delete_age(s, now_wall_ns - o->retain_s * NSEC_PER_SEC)) < 0)
		goto fail;
	if (o->rollup1_s > 0 && (r = roll_level(s, 0, now_wall_ns -
	    o->rollup1_after_s * NSEC_PER_SEC, o->rollup1_s)) < 0)
		goto fail;
	if (o->rollup2_s > 0 && (r = roll_level(s, 1, now_wall_ns -
	    o->rollup2_after_s * NSEC_PER_SEC, o->rollup2_s)) < 0)
		goto fail;
	if ((r = shrink(s)) < 0)
		goto fail;
	store_after_write(s);
	return 0;
fail:
	store_note_write_error(s, r);
	store_after_write(s);
	return r;
}

int
store_maintain(struct store *s, int64_t now_wall_ns)
{
	int r;

	if (s == NULL || s->db == NULL)
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = maintain_locked(s, now_wall_ns);
	pthread_mutex_unlock(&s->lock);
	return r;
}

