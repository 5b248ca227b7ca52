/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's parts as blobs (schema v9, doc/storage.md "window_parts"):
 * its counters and gauges (store_kv.c, named by key ids: store_keys.c),
 * its CPU and PSI rows (store_sys.c) and its BPF rows (store_bpfrows.c),
 * each framed and compressed (store_codec.c), in one row per window.
 *
 * Writing: while store_write.c and each part's put run, counters and
 * gauges collect here (store_put_count, store_put_gauge) and the sched
 * part leaves its rows (store_put_bpfrows); store_wparts_put then encodes
 * the three and inserts the row. Reading: store_read.c decodes the kv and
 * sys blobs into the window and holds the parts row while the sched
 * part's load reads its BPF rows (store_get_bpfrows).
 *
 * A blob that does not decode (frame, checksum, part, version or bytes)
 * is skipped and counted (blob_errors), as is a key id the dictionary
 * does not have; the rest of the window reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"
#include "store/store.h"
#include "store/store_bpfrows.h"
#include "store/store_codec.h"
#include "store/store_kv.h"
#include "store/store_sys.h"
#include "window/window.h"
#include "store_int.h"

/* entries of one blob's list, more refused: the largest bound
 * (bpf_procs, bpf_threads) and the "other" row put_rows adds */
#define ROWS_MAX (VITALS_BPF_ROWS_MAX + 1)

/* ----------------------------------------------------------- writing */

void
store_wacc_reset(struct store_wacc *a)
{
	a->nc = a->ng = 0;
	store_enc_release(&a->bpf);
}

void
store_wacc_release(struct store_wacc *a)
{
	free(a->c);
	free(a->g);
	store_enc_release(&a->bpf);
	memset(a, 0, sizeof(*a));
}

int
store_wacc_count(struct store_wacc *a, uint32_t key, uint64_t v)
{
	if (a->nc == a->capc) {
		size_t nc = a->capc ? a->capc * 2 : 128;
		struct store_kv_count *p = realloc(a->c, nc * sizeof(*p));

		if (p == NULL)
			return SQLITE_NOMEM;
		a->c = p;
		a->capc = nc;
	}
	a->c[a->nc].key = key;
	a->c[a->nc++].value = v;
	return SQLITE_OK;
}

int
store_wacc_gauge(struct store_wacc *a, uint32_t key, const struct gauge *g)
{
	if (a->ng == a->capg) {
		size_t nc = a->capg ? a->capg * 2 : 64;
		struct store_kv_gauge *p = realloc(a->g, nc * sizeof(*p));

		if (p == NULL)
			return SQLITE_NOMEM;
		a->g = p;
		a->capg = nc;
	}
	a->g[a->ng].key = key;
	a->g[a->ng++].g = *g;
	return SQLITE_OK;
}

static struct store_wacc *
wacc(struct store *s)
{
	if (s->wacc == NULL)
		s->wacc = calloc(1, sizeof(*s->wacc));
	return s->wacc;
}

/* One named counter of the window being written (its part's kinds too:
 * store_sched.c, store_trace.c). */
int
store_put_count(struct store *s, int64_t id, const char *kind, const char *key,
    uint64_t v)
{
	struct store_wacc *a = wacc(s);
	uint32_t k;
	int rc;

	(void)id; /* the window being written */
	if (a == NULL)
		return SQLITE_NOMEM;
	if ((rc = store_key_id(s, kind, key, &k)) != SQLITE_OK)
		return rc;
	return store_wacc_count(a, k, v);
}

int
store_put_gauge(struct store *s, const char *kind, const char *key,
    const struct gauge *g)
{
	struct store_wacc *a = wacc(s);
	uint32_t k;
	int rc;

	if (a == NULL)
		return SQLITE_NOMEM;
	if ((rc = store_key_id(s, kind, key, &k)) != SQLITE_OK)
		return rc;
	return store_wacc_gauge(a, k, g);
}

/* With dictionary dict (0: plain zstd). */
static int
frame_d(struct store_enc *out, unsigned part, unsigned version,
    const struct store_enc *pl, uint32_t dict)
{
	if (pl->err)
		return SQLITE_NOMEM;
	return store_frame_put_zdict(out, part, version, pl->b.p, pl->b.len,
		   dict) < 0 ?
	    SQLITE_NOMEM :
	    SQLITE_OK;
}

static int
frame(struct store_enc *out, unsigned part, unsigned version,
    const struct store_enc *pl)
{
	return frame_d(out, part, version, pl, 0);
}

int
store_wacc_bpfrows(struct store_wacc *a, const struct window_bpf_uid *u,
    size_t nu, const struct window_bpf_proc *p, size_t np)
{
	struct store_enc pl = { 0 };
	int rc;

	store_enc_release(&a->bpf);
	if (nu == 0 && np == 0)
		return SQLITE_OK;
	rc = store_bpfrows_put(&pl, u, nu, p, np) < 0 ?
	    SQLITE_NOMEM :
	    frame(&a->bpf, STORE_BPFROWS_PART, STORE_BPFROWS_V1, &pl);
	store_enc_release(&pl);
	return rc;
}

/* The rows as version 4, with dictionary dict (0: plain zstd); version 1
 * is what a v8 store's migration writes, store_wacc_bpfrows. */
int
store_wacc_bpfrows2(struct store_wacc *a, const struct store_bpfrows *b,
    uint32_t dict)
{
	struct store_enc pl = { 0 };
	int rc;

	store_enc_release(&a->bpf);
	if (b->nuid == 0 && b->nproc == 0 && b->nthread == 0)
		return SQLITE_OK;
	rc = store_bpfrows_put4(&pl, b) < 0 ?
	    SQLITE_NOMEM :
	    frame_d(&a->bpf, STORE_BPFROWS_PART, STORE_BPFROWS_V4, &pl, dict);
	store_enc_release(&pl);
	return rc;
}

int
store_put_bpfrows(struct store *s, const struct store_bpfrows *b)
{
	struct store_wacc *a = wacc(s);
	int rc;

	if (a == NULL)
		return SQLITE_NOMEM;
	/* framed here, with the dictionary of the store it feeds (the kv and
	 * sys blobs are framed at the parts row's insert) */
	rc = store_wacc_bpfrows2(a, b, store_dict_cur(s, DSLOT_BPF4));
	if (rc == SQLITE_OK && a->bpf.b.len)
		store_dict_bpf_written(s);
	return rc;
}

static int
cmp_count(const void *x, const void *y)
{
	const struct store_kv_count *a = x, *b = y;

	return a->key < b->key ? -1 : a->key > b->key;
}

static int
cmp_gauge(const void *x, const void *y)
{
	const struct store_kv_gauge *a = x, *b = y;

	return a->key < b->key ? -1 : a->key > b->key;
}

static void
bind_enc(sqlite3_stmt *st, int i, const struct store_enc *e)
{
	if (e->b.len)
		sqlite3_bind_blob(st, i, e->b.p, (int)e->b.len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/*
 * The row of window id by ins (INSERT INTO window_parts): a's counters,
 * gauges and BPF frame, and the CPU and PSI rows c and p. A repeated key
 * is SQLITE_CONSTRAINT (as v8's primary key refused it).
 */
int
store_wacc_insert(sqlite3_stmt *ins, int64_t id, struct store_wacc *a,
    const struct store_sys_cpu *c, size_t nc, const struct store_sys_psi *p,
    size_t np)
{
	struct store_enc kpl = { 0 }, spl = { 0 }, kf = { 0 }, sf = { 0 };
	int rc = SQLITE_OK, r;

	if (a->nc > 1)
		qsort(a->c, a->nc, sizeof(*a->c), cmp_count);
	if (a->ng > 1)
		qsort(a->g, a->ng, sizeof(*a->g), cmp_gauge);
	if (a->nc || a->ng) {
		if ((r = store_kv_put(&kpl, a->c, a->nc, a->g, a->ng)) < 0)
			rc = r == -EINVAL ? SQLITE_CONSTRAINT : SQLITE_NOMEM;
		else
			rc = frame_d(&kf, STORE_KV_PART, STORE_KV_VERSION, &kpl,
			    a->dict_kv);
	}
	if (rc == SQLITE_OK && (nc || np)) {
		if ((r = store_sys_put(&spl, c, nc, p, np)) < 0)
			rc = r == -EINVAL ? SQLITE_CONSTRAINT : SQLITE_NOMEM;
		else
			rc = frame_d(&sf, STORE_SYS_PART, STORE_SYS_VERSION,
			    &spl, a->dict_sys);
	}
	if (rc == SQLITE_OK && (kf.b.len || sf.b.len || a->bpf.b.len)) {
		sqlite3_bind_int64(ins, 1, id);
		bind_enc(ins, 2, &kf);
		bind_enc(ins, 3, &sf);
		bind_enc(ins, 4, &a->bpf);
		rc = store_run(ins);
		sqlite3_clear_bindings(ins);
	}
	store_enc_release(&kpl);
	store_enc_release(&spl);
	store_enc_release(&kf);
	store_enc_release(&sf);
	return rc;
}

static bool
cpu_is_default(const struct window_cpu *c)
{
	static const struct cpu_times zero;

	return c->samples == 0 && !c->online_end && c->cur_khz.n == 0 &&
	    c->freq_ratio.n == 0 && c->max_khz < 0 && c->capacity < 0 &&
	    c->wall_ns == 0 && memcmp(&c->d, &zero, sizeof(zero)) == 0;
}

static bool
psi_is_empty(const struct window_psi *p)
{
	return !p->available && !p->samples && !p->some_avg10.n &&
	    !p->full_avg10.n && !p->d_some_us && !p->d_full_us;
}

/* Before a window's rows: nothing collected yet. */
void
store_wparts_begin(struct store *s)
{
	if (s->wacc != NULL)
		store_wacc_reset(s->wacc);
}

/* After every part's put: the window's blobs (CPU lines and PSI from w). */
int
store_wparts_put(struct store *s, int64_t id, const struct window *w)
{
	struct store_sys_psi p[PSI__MAX];
	struct store_sys_cpu *c;
	struct store_wacc *a = wacc(s);
	size_t nc = 0, np = 0;
	unsigned i;
	int rc;

	if (a == NULL ||
	    (c = calloc((size_t)w->cpu_span + 1, sizeof(*c))) == NULL)
		return SQLITE_NOMEM;
	c[nc].cpu = -1;
	c[nc++].c = w->all;
	for (i = 0; i < w->cpu_span; i++)
		if (!cpu_is_default(&w->cpu[i])) {
			c[nc].cpu = (int32_t)i;
			c[nc++].c = w->cpu[i];
		}
	for (i = 0; i < PSI__MAX; i++)
		if (!psi_is_empty(&w->psi[i])) {
			p[np].res = i;
			p[np++].p = w->psi[i];
		}
	a->dict_kv = store_dict_cur(s, DSLOT_KV2);
	a->dict_sys = store_dict_cur(s, DSLOT_SYS);
	/* level 0 into its span's table (store_span.c) */
	if (w->level == 0 && store_span_on(s)) {
		sqlite3_stmt *ins = store_span_ins(s, 1, w->wall_start_ns, &rc);

		if (ins != NULL)
			rc = store_wacc_insert(ins, id, a, c, nc, p, np);
	} else {
		rc = store_wacc_insert(store_ws(s, WS_INS_PARTS), id, a, c, nc,
		    p, np);
	}
	free(c);
	store_wacc_reset(a);
	return rc;
}

/* ----------------------------------------------------------- reading */

/* The payload of blob[0..n) if it is a frame of part, of a version from
 * 1 to version (the part's decoder takes ret->version). */
int
store_unframe(const void *blob, size_t n, unsigned part, unsigned version,
    struct store_frame *ret)
{
	int r;

	if ((r = store_frame_get(blob, n, ret)) < 0)
		return r;
	if (ret->part != part || ret->version < 1 || ret->version > version) {
		store_frame_release(ret);
		return -EBADMSG;
	}
	return 0;
}

/* The BPF rows of the window being loaded: 0 with *ret (release it),
 * -ENOENT none (or a blob that did not decode: counted), -ENOMEM. */
int
store_get_bpfrows(struct store *s, struct store_bpfrows *ret)
{
	sqlite3_stmt *st = store_rs(s, RS_PARTS);
	struct store_frame f;
	int r;

	if (!s->ld_parts || sqlite3_column_type(st, 2) == SQLITE_NULL)
		return -ENOENT;
	/* either version: a store keeps the blobs of its older windows */
	r = store_frame_get(sqlite3_column_blob(st, 2),
	    (size_t)sqlite3_column_bytes(st, 2), &f);
	if (r == 0) {
		r = f.part != STORE_BPFROWS_PART ?
		    -EBADMSG :
		    store_bpfrows_get_v(f.payload, f.len, f.version, ROWS_MAX,
			ret);
		store_frame_release(&f);
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		store_blob_error(s);
		return -ENOENT;
	}
	return 0;
}
