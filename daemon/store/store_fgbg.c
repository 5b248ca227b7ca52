/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The foreground/background part of a window in the store: one blob per
 * window in window_fgbg (doc/storage.md, "Foreground and background"),
 * framed and compressed as the task blobs are (store_codec.c). A blob
 * that does not decode is counted (blob_errors) and the window reads
 * without its part; the rest of it is untouched.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fgbg/fgbg.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store_int.h"

#define FG_PART 9 /* the frame's part number */
#define FG_PART_VERSION 1

enum { FS_INS, FS_SEL, FS_RANGE };

static const char *const fs_sql[] = {
	[FS_INS] = "INSERT INTO main.window_fgbg (window_id, blob)"
		   " VALUES (?, ?)",
	[FS_SEL] = STORE_FOLD_SEL("window_fgbg", "fgbg"),
	/* a correlated lookup, not a join (store_read.c says why) */
	[FS_RANGE] =
	    "SELECT " STORE_FOLD_BLOB("w", "window_fgbg", "fgbg") " AS b, " STORE_BOOT_TEXT(
		"w.") ", w.level, w.hz,"
		      " w.mono_start_ns, w.mono_end_ns,"
		      " w.wall_start_ns, w.wall_end_ns"
		      " FROM windows w"
		      " WHERE w.wall_start_ns <= ?2 AND w.wall_start_ns > ?1 - ?3"
		      " AND w.wall_end_ns > ?1 AND w.wall_end_ns <= ?2"
		      " ORDER BY w.wall_end_ns, w.id",
};

/* The payload, field by field as doc/storage.md lists it. */
static void
fgbg_encode(struct store_enc *e, const struct window_fgbg *p)
{
	size_t i;
	unsigned k;

	store_enc_u(e, p->status);
	store_enc_str(e, p->cpuset);
	store_enc_u(e, p->scans);
	store_enc_u(e, p->reads);
	for (k = 0; k < FG_SRC__MAX; k++)
		store_enc_u(e, p->by_src[k]);
	store_enc_u(e, p->read_errors);
	store_enc_u(e, p->ents_cut);
	store_enc_u(e, p->n);
	for (i = 0; i < p->n; i++) {
		const struct window_fgbg_ent *x = &p->e[i];

		store_enc_s(e, x->pid);
		store_enc_u(e, x->starttime);
		store_enc_u(e, x->uid);
		store_enc_u(e, x->state);
		store_enc_str(e, x->name);
		store_enc_u(e, x->d_utime);
		store_enc_u(e, x->d_stime);
		store_enc_u(e, x->d_minflt);
		store_enc_u(e, x->d_majflt);
		store_enc_u(e, x->samples);
	}
}

/* payload into a new part; -EBADMSG for anything malformed. */
static int
fgbg_decode(const void *payload, size_t len, struct window_fgbg **ret)
{
	struct window_fgbg *p;
	struct store_dec d;
	uint64_t n, i;
	unsigned k;

	if ((p = window_fgbg_new()) == NULL)
		return -ENOMEM;
	store_dec_init(&d, payload, len);
	p->status = (uint32_t)store_dec_u_max(&d, FGBG__MAX - 1);
	store_dec_str(&d, p->cpuset, sizeof(p->cpuset));
	p->scans = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->reads = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	for (k = 0; k < FG_SRC__MAX; k++)
		p->by_src[k] = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->read_errors = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->ents_cut = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	/* an entry takes at least 11 bytes: a count the payload cannot
	 * hold is refused before anything is allocated */
	n = store_dec_u_max(&d, FG_ENTS_MAX);
	if (n > len / 11)
		store_dec_fail(&d);
	for (i = 0; i < n && d.err == 0; i++) {
		struct window_fgbg_ent *x = window_fgbg_add(p);

		if (x == NULL) {
			window_fgbg_free(p);
			return -ENOMEM;
		}
		x->pid = (int32_t)store_dec_s(&d);
		x->starttime = store_dec_u(&d);
		x->uid = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
		x->state = (uint32_t)store_dec_u_max(&d, FG__MAX - 1);
		store_dec_str(&d, x->name, sizeof(x->name));
		x->d_utime = store_dec_u(&d);
		x->d_stime = store_dec_u(&d);
		x->d_minflt = store_dec_u(&d);
		x->d_majflt = store_dec_u(&d);
		x->samples = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	}
	if (store_dec_end(&d) < 0) {
		window_fgbg_free(p);
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static int
fgbg_dec(const void *payload, size_t len, void **ret)
{
	struct window_fgbg *p = NULL;
	int r = fgbg_decode(payload, len, &p);

	*ret = p;
	return r;
}

/* A framed blob into a part: -EBADMSG (counted by the caller) when it is
 * not one. */
static int
fgbg_unframe(const void *b, size_t n, struct window_fgbg **ret)
{
	void *p;
	int r = store_blob_unframe(b, n, FG_PART, FG_PART_VERSION, fgbg_dec,
	    &p);

	*ret = p;
	return r;
}

/* Tests and fuzzers: a part as the store writes it (frame included). */
int
store_fgbg_blob(const struct window_fgbg *p, uint8_t **ret, size_t *ret_len)
{
	struct store_enc pl = { 0 }, fr = { 0 };
	int r = -ENOMEM;

	fgbg_encode(&pl, p);
	if (pl.err == 0 &&
	    store_frame_put_zstd(&fr, FG_PART, FG_PART_VERSION, pl.b.p,
		pl.b.len, STORE_ZSTD_LEVEL) == 0 &&
	    fr.err == 0 && (*ret = malloc(fr.b.len)) != NULL) {
		memcpy(*ret, fr.b.p, fr.b.len);
		*ret_len = fr.b.len;
		r = 0;
	}
	store_enc_release(&pl);
	store_enc_release(&fr);
	return r;
}

int
store_fgbg_unblob(const void *b, size_t n, struct window_fgbg **ret)
{
	return fgbg_unframe(b, n, ret);
}

static int
store_fgbg_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_fgbg *p = window_fgbg(w);
	struct store_enc pl = { 0 };
	int rc;

	if (p == NULL)
		return SQLITE_OK;
	fgbg_encode(&pl, p);
	rc = store_blob_put(store_stmt(s, &s->part_st[WPART_FGBG][FS_INS],
				fs_sql[FS_INS]),
	    id, FG_PART, FG_PART_VERSION, &pl);
	store_enc_release(&pl);
	return rc;
}

static int
store_fgbg_load(struct store *s, int64_t id, struct window *w)
{
	void *p;
	int r;

	r = store_blob_load(s,
	    store_stmt(s, &s->part_st[WPART_FGBG][FS_SEL], fs_sql[FS_SEL]),
	    STORE_FOLD_FGBG, id, FG_PART, FG_PART_VERSION, fgbg_dec, &p,
	    "read fgbg");
	if (r < 0)
		return r;
	if (p) {
		window_fgbg_free(window_fgbg(w));
		window_part_set(w, WPART_FGBG, p);
	}
	return 0;
}

void
store_fgbg_range_free(struct window_fgbg **p, struct store_hist *w, size_t n)
{
	size_t i;

	for (i = 0; p && i < n; i++)
		window_fgbg_free(p[i]);
	free(p);
	free(w);
}

static int
range_locked(struct store *s, int64_t from, int64_t to,
    struct window_fgbg ***ret_p, struct store_hist **ret_w, size_t *ret_n)
{
	sqlite3_stmt *st = store_stmt(s, &s->part_st[WPART_FGBG][FS_RANGE],
	    fs_sql[FS_RANGE]);
	struct window_fgbg **p = NULL, **np, *part;
	struct store_hist *w = NULL, *nw;
	size_t n = 0, cap = 0;
	int rc, r = 0;

	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, to);
	sqlite3_bind_int64(st, 3, s->max_span_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_hist *h;
		const char *boot;

		part = NULL;
		/* a window without the part (STORE_FOLD_BLOB: NULL) */
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		r = fgbg_unframe(sqlite3_column_blob(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0), &part);
		if (r == -EBADMSG) {
			store_blob_error(s);
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((np = realloc(p, cap * sizeof(*p))) != NULL)
				p = np;
			if (np == NULL ||
			    (nw = realloc(w, cap * sizeof(*w))) == NULL) {
				window_fgbg_free(part);
				r = -ENOMEM;
				break;
			}
			w = nw;
		}
		h = &w[n];
		memset(h, 0, sizeof(*h));
		boot = (const char *)sqlite3_column_text(st, 1);
		snprintf(h->boot_id, sizeof(h->boot_id), "%s",
		    boot ? boot : "");
		h->level = (uint32_t)sqlite3_column_int(st, 2);
		h->hz = (uint32_t)sqlite3_column_int(st, 3);
		h->mono_start_ns = sqlite3_column_int64(st, 4);
		h->mono_end_ns = sqlite3_column_int64(st, 5);
		h->wall_start_ns = sqlite3_column_int64(st, 6);
		h->wall_end_ns = sqlite3_column_int64(st, 7);
		p[n++] = part;
	}
	if (r == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = store_fail(s, rc, "read fgbg range");
	sqlite3_reset(st);
	if (r < 0) {
		store_fgbg_range_free(p, w, n);
		return r;
	}
	*ret_p = p;
	*ret_w = w;
	*ret_n = n;
	return 0;
}

int
store_fgbg_range(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct window_fgbg ***ret_p, struct store_hist **ret_w, size_t *ret_n)
{
	int r;

	if (s == NULL)
		return -EBADF;
	if (from_wall_ns >= to_wall_ns)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	r = s->db == NULL ?
	    -EBADF :
	    range_locked(s, from_wall_ns, to_wall_ns, ret_p, ret_w, ret_n);
	pthread_mutex_unlock(&s->lock);
	return r;
}

const struct store_part store_fgbg_part = {
	.sql = fs_sql,
	.nsql = sizeof(fs_sql) / sizeof(fs_sql[0]),
	.put = store_fgbg_put,
	.load = store_fgbg_load,
};
