/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The key dictionary (schema v9, doc/storage.md "window_key"): every
 * (kind, key) a window's counters and gauges are named by gets a small id
 * once, and a window's kv blob names them by id.
 *
 * Writers hold a cache of the ids (kind, key → id), so a put looks up no
 * row: a key is read or written only the first time the handle meets it.
 * As with instances (store_inst.c), ids are handed out here, from one
 * counter for the main file and its spool: a spool writes its keys with
 * the main store's cache and counter, a key the main file has is found
 * there and not written again, and a new one goes into the spool and
 * moves with its windows (store_spool.c). The cache only holds keys that
 * are committed or in the open transaction; a rollback empties it.
 *
 * Readers map ids back to names through a cache of their own, filled one
 * id at a time from the table (RS_KEY). Keys are never deleted: the set
 * is the build's names (a few hundred), not the data's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"

#define KEYS_MAX 65536 /* ids a handle caches; past it the cache starts empty */

struct kent {
	char *kind, *key; /* one allocation: kind\0key\0 */
	uint32_t id;
};

struct kcache {
	struct kent *e;
	size_t n, cap;
	uint32_t *slot; /* index + 1; at most half full */
	size_t mask;
	int64_t next_id; /* 0: read max(id) first */
};

enum { KW_FIND, KW_INS, KW_MAX, KW__MAX };

struct store_kw {
	sqlite3_stmt *st[KW__MAX];
	struct kcache c;
};

static const char *const kw_sql[KW__MAX] = {
	[KW_FIND] = "SELECT id FROM window_key WHERE kind = ?1 AND key = ?2",
	[KW_INS] = "INSERT INTO window_key (id, kind, key) VALUES (?1, ?2, ?3)",
	[KW_MAX] = "SELECT coalesce(max(id), 0) FROM window_key",
};

/* Names by id, for reads. */
struct store_knames {
	char **kk; /* kind\0key\0, or NULL: not read yet */
	size_t n;
};

static size_t
khash(const char *kind, const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *kind; kind++)
		h = (h ^ (uint8_t)*kind) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (; *key; key++)
		h = (h ^ (uint8_t)*key) * 0x100000001b3ULL;
	return (size_t)(h ^ (h >> 29));
}

static void
kcache_clear(struct kcache *c)
{
	int64_t next = c->next_id;
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->e[i].kind);
	free(c->e);
	free(c->slot);
	memset(c, 0, sizeof(*c));
	c->next_id = next;
}

static struct kent *
kcache_get(const struct kcache *c, const char *kind, const char *key)
{
	size_t h;

	if (c->slot == NULL)
		return NULL;
	for (h = khash(kind, key) & c->mask; c->slot[h] != 0;
	     h = (h + 1) & c->mask) {
		struct kent *e = &c->e[c->slot[h] - 1];

		if (strcmp(e->kind, kind) == 0 && strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

static void
kcache_index(struct kcache *c, size_t i)
{
	size_t h = khash(c->e[i].kind, c->e[i].key) & c->mask;

	while (c->slot[h] != 0)
		h = (h + 1) & c->mask;
	c->slot[h] = (uint32_t)(i + 1);
}

static int
kcache_add(struct kcache *c, const char *kind, const char *key, uint32_t id)
{
	size_t lk = strlen(kind), i;
	char *p;

	if (c->n >= KEYS_MAX)
		kcache_clear(c);
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 256;
		struct kent *ne = realloc(c->e, nc * sizeof(*ne));
		uint32_t *sl;

		if (ne == NULL)
			return -ENOMEM;
		c->e = ne;
		if ((sl = calloc(2 * nc, sizeof(*sl))) == NULL)
			return -ENOMEM;
		free(c->slot);
		c->slot = sl;
		c->mask = 2 * nc - 1;
		c->cap = nc;
		for (i = 0; i < c->n; i++)
			kcache_index(c, i);
	}
	if ((p = malloc(lk + strlen(key) + 2)) == NULL)
		return -ENOMEM;
	memcpy(p, kind, lk + 1);
	strcpy(p + lk + 1, key);
	c->e[c->n].kind = p;
	c->e[c->n].key = p + lk + 1;
	c->e[c->n].id = id;
	kcache_index(c, c->n++);
	return 0;
}

/* ------------------------------------------------------------- writers */

struct store_kw *
store_kw_new(sqlite3 *db, unsigned flags)
{
	struct store_kw *kw = calloc(1, sizeof(*kw));
	unsigned i;

	if (kw == NULL)
		return NULL;
	for (i = 0; i < KW__MAX; i++)
		if (sqlite3_prepare_v3(db, kw_sql[i], -1, flags, &kw->st[i],
			NULL) != SQLITE_OK)
			return store_kw_free(kw);
	return kw;
}

struct store_kw *
store_kw_free(struct store_kw *kw)
{
	unsigned i;

	if (kw == NULL)
		return NULL;
	for (i = 0; i < KW__MAX; i++)
		sqlite3_finalize(kw->st[i]);
	kcache_clear(&kw->c);
	free(kw);
	return NULL;
}

/* The id of (kind, key) in kw's file, SQLITE_ROW, or SQLITE_DONE. */
static int
kw_find(struct store_kw *kw, const char *kind, const char *key, int64_t *ret)
{
	sqlite3_stmt *st = kw->st[KW_FIND];
	int rc;

	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*ret = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc;
}

/*
 * The id of (kind, key), written into kw's file when neither it nor the
 * main file (main: a spool's main store's, or NULL) has it. The cache and
 * the counter are main's when there is one.
 */
int
store_kw_id(struct store_kw *kw, struct store_kw *main, const char *kind,
    const char *key, uint32_t *ret)
{
	struct kcache *c = main ? &main->c : &kw->c;
	struct kent *e;
	sqlite3_stmt *st;
	int64_t id = 0;
	int rc;

	if ((e = kcache_get(c, kind, key)) != NULL) {
		*ret = e->id;
		return SQLITE_OK;
	}
	rc = kw_find(kw, kind, key, &id);
	if (rc == SQLITE_DONE && main != NULL)
		rc = kw_find(main, kind, key, &id);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return rc;
	if (rc == SQLITE_DONE) {
		if (c->next_id == 0) {
			if ((rc = store_run_int(kw->st[KW_MAX], &c->next_id)) !=
			    SQLITE_OK)
				return rc;
			c->next_id++;
		}
		if (c->next_id > UINT32_MAX)
			return SQLITE_FULL;
		id = c->next_id;
		st = kw->st[KW_INS];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, key, -1, SQLITE_STATIC);
		if ((rc = store_run(st)) != SQLITE_OK)
			return rc;
		c->next_id++;
	}
	if (id <= 0 || id > UINT32_MAX)
		return SQLITE_CORRUPT;
	if (kcache_add(c, kind, key, (uint32_t)id) < 0)
		return SQLITE_NOMEM;
	*ret = (uint32_t)id;
	return SQLITE_OK;
}

int
store_keys_prepare(struct store *s)
{
	if ((s->kw = store_kw_new(s->db, SQLITE_PREPARE_PERSISTENT)) == NULL)
		return sqlite3_errcode(s->db) != SQLITE_OK ?
		    sqlite3_errcode(s->db) :
		    SQLITE_NOMEM;
	return SQLITE_OK;
}

void
store_keys_finalize(struct store *s)
{
	s->kw = store_kw_free(s->kw);
}

/* The open transaction was undone: so were the keys it wrote. */
void
store_keys_forget(struct store *s)
{
	if (s->inst_main != NULL && s->inst_main->kw != NULL)
		kcache_clear(&s->inst_main->kw->c);
	if (s->kw != NULL)
		kcache_clear(&s->kw->c);
}

/* The counter past every id either file holds (a spool attached). */
void
store_keys_seed(struct store *s, int64_t max_id)
{
	if (s->kw != NULL && s->kw->c.next_id <= max_id)
		s->kw->c.next_id = max_id + 1;
}

int
store_key_id(struct store *s, const char *kind, const char *key, uint32_t *ret)
{
	if (s->kw == NULL)
		return SQLITE_MISUSE;
	return store_kw_id(s->kw,
	    s->inst_main != NULL ? s->inst_main->kw : NULL, kind, key, ret);
}

/* ------------------------------------------------------------- readers */

void
store_knames_free(struct store *s)
{
	size_t i;

	if (s->kn == NULL)
		return;
	for (i = 0; i < s->kn->n; i++)
		free(s->kn->kk[i]);
	free(s->kn->kk);
	free(s->kn);
	s->kn = NULL;
}

/* The names of key id: 0, -ENOENT (no such key), -ENOMEM or -EIO. */
int
store_key_name(struct store *s, uint32_t id, const char **ret_kind,
    const char **ret_key)
{
	struct store_knames *kn = s->kn;
	sqlite3_stmt *st = store_rs(s, RS_KEY);
	const char *kind, *key;
	size_t lk;
	char *p;
	int rc;

	if (kn == NULL && (kn = s->kn = calloc(1, sizeof(*kn))) == NULL)
		return -ENOMEM;
	if (id < kn->n && kn->kk[id] != NULL)
		goto found;
	if (id >= KEYS_MAX * 16)
		return -ENOENT;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		return rc == SQLITE_DONE ? -ENOENT : store_fail(s, rc, "key");
	}
	kind = (const char *)sqlite3_column_text(st, 0);
	key = (const char *)sqlite3_column_text(st, 1);
	if (kind == NULL || key == NULL) {
		sqlite3_reset(st);
		return -ENOENT;
	}
	lk = strlen(kind);
	if ((p = malloc(lk + strlen(key) + 2)) == NULL) {
		sqlite3_reset(st);
		return -ENOMEM;
	}
	memcpy(p, kind, lk + 1);
	strcpy(p + lk + 1, key);
	sqlite3_reset(st);
	if (id >= kn->n) {
		size_t nn = id + 64;
		char **q = realloc(kn->kk, nn * sizeof(*q));

		if (q == NULL) {
			free(p);
			return -ENOMEM;
		}
		memset(q + kn->n, 0, (nn - kn->n) * sizeof(*q));
		kn->kk = q;
		kn->n = nn;
	}
	kn->kk[id] = p;
found:
	*ret_kind = kn->kk[id];
	*ret_key = kn->kk[id] + strlen(kn->kk[id]) + 1;
	return 0;
}
