/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Trained zstd dictionaries (schema v16, table blob_dict; doc/storage.md
 * "Dictionaries"). A window's blobs are a few hundred bytes each: zstd
 * alone finds little to share inside one, while the next window repeats
 * the same structure (key ids, CPU layout, flags, the shared sample
 * tuple). A dictionary trained on a store's own level-0 payloads gives
 * zstd that structure: on store_bench a fifth less per window.
 *
 * One dictionary per slot (a list a window is written with: processes,
 * threads, counters and gauges, CPU and PSI; since v21 the task lists
 * and counters have slots of their payload version 2, the version-1
 * slots being read, no longer trained; since task rows version 3 the
 * lists have slots 8 and 9, 5 and 6 being read, no longer trained; the
 * BPF rows of version 4 have slot 10),
 * trained once per file by a
 * maintenance pass when the slot has none and the file's newest hour of
 * level-0 windows is of the slot's version; written in the pass's transaction and used by the
 * writer only after that commits (a blob never names a dictionary the
 * file may not have). A dictionary's id is the CRC-32C of its bytes
 * (store_codec.c registers it under that id for the process): a row whose
 * bytes do not match its id is counted; its bytes are registered under
 * their own CRC, so a damaged dictionary matches no frame (those blobs
 * read as damaged, counted, the rest reads) and one whose id alone was
 * changed still serves the frames that name it.
 *
 * Dictionaries are never deleted: a few KiB each, one per slot, and any
 * blob of any age may name one. A blob written before its slot had one is
 * a plain zstd frame and stays so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "store/store.h"
#include "store/store_bpfrows.h"
#include "store/store_codec.h"
#include "store_int.h"

#define DICT_BYTES 4096	  /* a dictionary's size at most */
#define DICT_SAMPLES 1000 /* the newest level-0 payloads trained on */
/* and of the BPF rows at most this many bytes: a payload of 2,000 tasks
 * is ~8 KB, and zstd's trainer holds the samples and 6 MiB or more of its
 * own tables while it works (the writer's peak memory); the other slots'
 * payloads are a tenth of that */
#define DICT_BPF_BYTES (1u << 20)
#define DICT_MIN 360 /* fewer payloads: not yet (an hour) */
/* passes before a failed training is tried again (a pass per move: at
 * store_commit_s 900, 15 h) */
#define DICT_RETRY 60

/* The newest level-0 payloads of a slot, newest first: a correlated
 * lookup by window id, as the tables are views of the span tables
 * (store_span.c), which a join would read whole. */
#define SLOT_SQL(col, tab)                                                  \
	"SELECT (SELECT x." col " FROM " tab " x WHERE x.window_id = w.id)" \
	" AS b FROM main.windows w WHERE w.level = 0 AND b IS NOT NULL"     \
	" ORDER BY w.id DESC LIMIT ?1"
static const char *const slot_sql[DSLOT__MAX] = {
	[DSLOT_PROCS] = SLOT_SQL("procs", "window_tasks"),
	[DSLOT_THREADS] = SLOT_SQL("threads", "window_tasks"),
	[DSLOT_KV] = SLOT_SQL("kv", "window_parts"),
	[DSLOT_SYS] = SLOT_SQL("sys", "window_parts"),
	[DSLOT_PROCS2] = SLOT_SQL("procs", "window_tasks"),
	[DSLOT_THREADS2] = SLOT_SQL("threads", "window_tasks"),
	[DSLOT_KV2] = SLOT_SQL("kv", "window_parts"),
	[DSLOT_PROCS3] = SLOT_SQL("procs", "window_tasks"),
	[DSLOT_THREADS3] = SLOT_SQL("threads", "window_tasks"),
	[DSLOT_BPF4] = SLOT_SQL("bpf", "window_parts"),
};

/* The part version a slot is trained on (0: any), and whether it is
 * still trained: the version-1 slots are read, not made. */
static const unsigned slot_version[DSLOT__MAX] = {
	[DSLOT_PROCS] = 1,
	[DSLOT_THREADS] = 1,
	[DSLOT_KV] = 1,
	[DSLOT_PROCS2] = 2,
	[DSLOT_THREADS2] = 2,
	[DSLOT_KV2] = 2,
	[DSLOT_PROCS3] = 3,
	[DSLOT_THREADS3] = 3,
	[DSLOT_BPF4] = STORE_BPFROWS_V4,
};
static const bool slot_retired[DSLOT__MAX] = {
	[DSLOT_NONE] = true,
	[DSLOT_PROCS] = true,
	[DSLOT_THREADS] = true,
	[DSLOT_KV] = true,
	[DSLOT_PROCS2] = true,
	[DSLOT_THREADS2] = true,
};

/* Whether blob[0..n) is a frame of the slot's payload version, read from
 * its header alone (magic, part, version; nothing decoded). */
static bool
slot_blob(enum store_dslot slot, const void *blob, size_t n)
{
	struct store_dec d;
	unsigned version;

	if (slot_version[slot] == 0)
		return true;
	store_dec_init(&d, blob, n);
	if (n == 0 || *(const uint8_t *)blob != STORE_FRAME_MAGIC)
		return false;
	store_dec_bytes(&d, 1);
	store_dec_u(&d); /* part: the slot's query names the column */
	version = (unsigned)store_dec_u_max(&d, 255);
	return !d.err && version == slot_version[slot];
}

uint32_t
store_dict_cur(const struct store *s, enum store_dslot slot)
{
	/* a spool writes with the dictionaries of the store it feeds */
	const struct store *m = s->inst_main != NULL ? s->inst_main : s;

	return slot > DSLOT_NONE && slot < DSLOT__MAX ? m->dict_cur[slot] : 0;
}

void
store_dict_bpf_written(struct store *s)
{
	/* the store a spool feeds trains for it, under the same lock */
	(s->inst_main != NULL ? s->inst_main : s)->bpf_written = true;
}

/*
 * Every dictionary of the file registered (store_codec.c), the newest of
 * each slot the writer's. A row that does not check (its bytes against
 * its id) or that zstd refuses is left out and counted; a file without
 * the table (a schema before v16 being read) has none.
 */
int
store_dict_load(struct store *s)
{
	sqlite3_stmt *st;
	uint32_t id;
	int64_t slot, rid;
	int rc;

	memset(s->dict_cur, 0, sizeof(s->dict_cur));
	if (sqlite3_prepare_v2(s->db,
		"SELECT id, slot, dict FROM main.blob_dict"
		" ORDER BY made_ns, id",
		-1, &st, NULL) != SQLITE_OK)
		return SQLITE_OK; /* no table: no dictionaries */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rid = sqlite3_column_int64(st, 0);
		slot = sqlite3_column_int64(st, 1);
		if (store_zdict_add(sqlite3_column_blob(st, 2),
			(size_t)sqlite3_column_bytes(st, 2), &id) < 0 ||
		    (int64_t)id != rid) {
			store_blob_error(s);
			continue;
		}
		if (slot > DSLOT_NONE && slot < DSLOT__MAX)
			s->dict_cur[slot] = id;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The slot's newest payloads, decoded, laid end to end; *full when the
 * BPF rows' byte cap stopped them. */
static int
samples(struct store *s, enum store_dslot slot, struct vbuf *b, size_t **ret,
    unsigned *ret_n, bool *full)
{
	sqlite3_stmt *st;
	struct store_frame f;
	size_t *len = NULL;
	unsigned n = 0;
	int rc, r = 0;

	if ((rc = sqlite3_prepare_v2(s->db, slot_sql[slot], -1, &st, NULL)) !=
	    SQLITE_OK)
		return store_fail(s, rc, "dictionary: prepare");
	sqlite3_bind_int(st, 1, DICT_SAMPLES);
	if ((len = calloc(DICT_SAMPLES, sizeof(*len))) == NULL)
		r = -ENOMEM;
	while (r == 0 && n < DICT_SAMPLES &&
	    (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!slot_blob(slot, sqlite3_column_blob(st, 0),
			(size_t)sqlite3_column_bytes(st, 0)))
			continue; /* another payload version */
		if (store_frame_get(sqlite3_column_blob(st, 0),
			(size_t)sqlite3_column_bytes(st, 0), &f) < 0)
			continue; /* counted where it is read */
		/* the cap: the first payload always, none past it */
		if (slot == DSLOT_BPF4 && n > 0 &&
		    b->len + f.len > DICT_BPF_BYTES) {
			store_frame_release(&f);
			*full = true;
			break;
		}
		if ((r = vbuf_reserve(b, f.len)) == 0 && f.len > 0) {
			memcpy(b->p + b->len, f.payload, f.len);
			b->len += f.len;
			len[n++] = f.len;
		}
		store_frame_release(&f);
	}
	if (r == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = store_fail(s, rc, "dictionary: samples");
	sqlite3_finalize(st);
	if (r < 0) {
		free(len);
		return r;
	}
	*ret = len;
	*ret_n = n;
	return 0;
}

/* Whether the slot has DICT_MIN payloads to train on (read, not
 * decoded: a young file, or a list this daemon never writes, costs a
 * walk of the newest windows, not a thousand decodes per pass). */
static int
enough(struct store *s, enum store_dslot slot, bool *ret)
{
	sqlite3_stmt *st;
	unsigned n = 0;
	int rc;

	if ((rc = sqlite3_prepare_v2(s->db, slot_sql[slot], -1, &st, NULL)) !=
	    SQLITE_OK)
		return store_fail(s, rc, "dictionary: prepare");
	sqlite3_bind_int(st, 1, DICT_MIN);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		n += slot_blob(slot, sqlite3_column_blob(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_fail(s, rc, "dictionary: samples");
	*ret = n >= DICT_MIN;
	return 0;
}

static int
train_slot(struct store *s, enum store_dslot slot, int64_t now_ns)
{
	struct vbuf b = { 0 };
	sqlite3_stmt *st = NULL;
	size_t *len = NULL, dn;
	void *dict = NULL;
	unsigned n = 0;
	uint32_t id;
	bool ok = false, full = false;
	int rc, r;

	if ((r = enough(s, slot, &ok)) < 0 || !ok)
		return r;
	if ((r = samples(s, slot, &b, &len, &n, &full)) < 0)
		goto out; /* len is NULL, b what it held */
	if (n < DICT_MIN && !full) {
		r = 0; /* not yet */
		goto out;
	}
	if ((r = store_zdict_train(b.p, len, n, DICT_BYTES, &dict, &dn)) < 0 ||
	    (r = store_zdict_add(dict, dn, &id)) < 0) {
		/* too few or too alike to train on: try again later */
		s->dict_wait = DICT_RETRY;
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	if ((rc = sqlite3_prepare_v2(s->db,
		 "INSERT OR IGNORE INTO main.blob_dict (id, slot, made_ns,"
		 " dict) VALUES (?1, ?2, ?3, ?4)",
		 -1, &st, NULL)) != SQLITE_OK) {
		r = store_fail(s, rc, "dictionary: prepare");
		goto out;
	}
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, slot);
	sqlite3_bind_int64(st, 3, now_ns);
	sqlite3_bind_blob(st, 4, dict, (int)dn, SQLITE_STATIC);
	if ((rc = store_run(st)) != SQLITE_OK)
		r = store_fail(s, rc, "dictionary: insert");
	else
		s->dict_new[slot] = id; /* the writer's after the commit */
out:
	sqlite3_finalize(st);
	free(dict);
	free(len);
	vbuf_release(&b);
	return r;
}

/* Whether a pass should train slot: not retired, none yet, and for the
 * BPF rows only once this store has written some. */
static bool
wanted(const struct store *s, unsigned slot)
{
	return !slot_retired[slot] && s->dict_cur[slot] == 0 &&
	    s->dict_new[slot] == 0 && (slot != DSLOT_BPF4 || s->bpf_written);
}

/*
 * A maintenance step: a dictionary for each slot that has none, in a
 * savepoint of the pass. The writer uses them after the pass commits
 * (store_dict_done).
 */
int
store_dict_train(struct store *s, int64_t now_wall_ns)
{
	unsigned slot;
	int rc, r = 0;
	bool need = false;

	for (slot = DSLOT_NONE + 1; slot < DSLOT__MAX; slot++)
		need |= wanted(s, slot);
	if (!need)
		return 0;
	if (s->dict_wait > 0) {
		s->dict_wait--;
		return 0;
	}
	if ((rc = store_txn_begin(s)) != SQLITE_OK)
		return store_fail(s, rc, "begin");
	for (slot = DSLOT_NONE + 1; slot < DSLOT__MAX && r == 0; slot++)
		if (wanted(s, slot))
			r = train_slot(s, slot, now_wall_ns);
	if (r == 0 && (rc = store_txn_commit(s)) != SQLITE_OK)
		r = store_fail(s, rc, "dictionary: commit");
	if (r < 0)
		store_rollback(s);
	return r;
}

/* The pass committed (the new dictionaries are the writer's) or not. */
void
store_dict_done(struct store *s, bool committed)
{
	unsigned slot;

	for (slot = 0; slot < DSLOT__MAX; slot++) {
		if (committed && s->dict_new[slot] != 0)
			s->dict_cur[slot] = s->dict_new[slot];
		s->dict_new[slot] = 0;
	}
}
