/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a database's BPF rows blobs take in each version of the payload
 * (store_bpfrows.c; doc/storage.md, "BPF rows, version 4"):
 *
 *   bpf_sizes DB
 *
 * opens DB (schema v27 or later) read-only, decodes the `bpf` blob of
 * every window in every l<level>_parts_<k> table, encodes its rows again
 * as version 3 and version 4, frames each at zstd 3 as the store does,
 * checks that version 4 reads back to the same rows bit for bit, and
 * prints the mean bytes per window (payload raw, framed) of the blob as
 * stored, of version 3 and of version 4 with the µs to encode and frame
 * and to check and decode (mean of 20 runs), and then per column (each column
 * compressed alone at zstd 3) the columns that version 4 changed. "As
 * stored" may be codec 2 (the file's dictionaries are registered first).
 * Last, a dictionary of the store's size (4 KiB) trained on the even
 * windows' version-4 payloads and the odd ones framed with it and without
 * (held out, so the figure is not the dictionary meeting its own
 * samples; the store trains on the newest level-0 ones, at most 1 MiB).
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "store/store_bpfrows.h"
#include "store/store_codec.h"

enum { V_STORED, V_3, V_4, V__MAX };
static const char *const v_name[V__MAX] = { "as stored", "version 3",
	"version 4" };
static double raw[V__MAX], framed[V__MAX], nwin, rows[3], derived;
static double enc_us[V__MAX], dec_us[V__MAX];
/* every window's version-4 payload, for the dictionary's figures */
static struct store_enc pay[4096];
static size_t npay;
#define ITER 20 /* runs timed per window and version */
static sqlite3 *db;

static void
die(const char *what)
{
	fprintf(stderr, "bpf_sizes: %s: %s\n", what,
	    db ? sqlite3_errmsg(db) : "");
	exit(1);
}

/* ------------------------------------------------------------ columns */

#define NCOL 16
static const char *col_name[NCOL];
static double col_z[NCOL][2]; /* [column][0: v3, 1: v4] */

static size_t
zsize(const struct store_enc *e)
{
	size_t cap = ZSTD_compressBound(e->b.len), n;
	void *out = malloc(cap);

	if (out == NULL)
		die("out of memory");
	n = ZSTD_compress(out, cap, e->b.p, e->b.len, STORE_ZSTD_LEVEL);
	free(out);
	if (ZSTD_isError(n))
		die("zstd");
	return n < e->b.len ? n : e->b.len;
}

static void
col(int c, const char *name, int v, struct store_enc *e)
{
	if (e->err)
		die("out of memory");
	col_name[c] = name;
	col_z[c][v] += zsize(e);
	store_enc_release(e);
	memset(e, 0, sizeof(*e));
}

static unsigned
hlen(const uint32_t *h)
{
	unsigned k, n = 0;

	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		if (h[k])
			n = k + 1;
	return n;
}

static uint64_t
hsum(const uint32_t *h)
{
	uint64_t s = 0;
	unsigned k;

	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		s += h[k];
	return s;
}

/* v4's numbers: lengths, then byte planes most significant first */
static void
planes(struct store_enc *e, const uint64_t *v, size_t n)
{
	unsigned j, len;
	uint8_t b;
	size_t i;

	for (i = 0; i < n; i++) {
		for (b = 0; b < 8 && v[i] >> 8 * b; b++)
			;
		store_enc_bytes(e, &b, 1);
	}
	for (j = 0; j < 8; j++)
		for (i = 0; i < n; i++) {
			for (len = 0; len < 8 && v[i] >> 8 * len; len++)
				;
			if (len > j) {
				b = (uint8_t)(v[i] >> 8 * (len - 1 - j));
				store_enc_bytes(e, &b, 1);
			}
		}
}

/* Histogram rows (h[i], count c[i]): v3 row after row with its words and
 * counts, v4 slot after slot. */
static void
hists(struct store_enc *e, uint32_t *const *h, const uint64_t *c, size_t n,
    int v4)
{
	unsigned k;
	size_t i;

	for (i = 0; i < n; i++)
		store_enc_u(e, hlen(h[i]) << 1 | (hsum(h[i]) == c[i]));
	for (i = 0; i < n; i++)
		if (hsum(h[i]) != c[i])
			store_enc_u(e, c[i]);
	if (!v4) {
		for (i = 0; i < n; i++)
			for (k = 0; k < hlen(h[i]); k++)
				store_enc_u(e, h[i][k]);
		return;
	}
	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		for (i = 0; i < n; i++)
			if (hlen(h[i]) > k)
				store_enc_u(e, h[i][k]);
}

/* Each changed column alone, v3 and v4. */
static void
columns(struct store_bpfrows *b)
{
	struct store_enc e = { 0 };
	size_t np = b->nproc, nt = b->nthread, i, m;
	uint64_t *v = malloc((np + nt + 1) * sizeof(*v));
	uint64_t *c = malloc((np + nt + 1) * sizeof(*c));
	uint32_t **h = malloc((np + nt + 1) * sizeof(*h));
	uint8_t *der = calloc(np + 1, 1);
	struct window_bpf_proc *p = b->proc;
	struct window_bpf_thread *t = b->thread;
	int64_t prev;
	int vv;

	if (v == NULL || c == NULL || h == NULL || der == NULL)
		die("out of memory");
	/* a process is derived when a thread row has its tgid and the
	 * sums match: what store_bpfrows_put4 decides */
	for (i = 0; i < np; i++) {
		struct window_bpf_proc s = { 0 };
		size_t j, n = 0;
		unsigned k;

		for (j = 0; j < nt; j++)
			if (t[j].tgid == p[i].tgid) {
				n++;
				s.oncpu_ns += t[j].oncpu_ns;
				s.rq_ns += t[j].rq_ns;
				s.rq_count += t[j].rq_count;
				for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
					s.rq_hist[k] += t[j].rq_hist[k];
			}
		der[i] = n && s.oncpu_ns == p[i].oncpu_ns &&
		    s.rq_ns == p[i].rq_ns && s.rq_count == p[i].rq_count &&
		    !memcmp(s.rq_hist, p[i].rq_hist, sizeof(s.rq_hist));
		derived += der[i];
	}
	for (vv = 0; vv < 2; vv++) {
		for (i = m = 0; i < np; i++)
			if (!vv || !der[i])
				v[m++] = p[i].oncpu_ns;
		if (vv)
			planes(&e, v, m);
		else
			for (i = 0; i < m; i++)
				store_enc_u(&e, v[i]);
		col(0, "process oncpu_ns", vv, &e);
		for (i = m = 0; i < np; i++)
			if (!vv || !der[i])
				v[m++] = p[i].rq_ns;
		if (vv)
			planes(&e, v, m);
		else
			for (i = 0; i < m; i++)
				store_enc_u(&e, v[i]);
		col(1, "process rq_ns", vv, &e);
		for (i = m = 0; i < np; i++)
			if (!vv || !der[i]) {
				h[m] = p[i].rq_hist;
				c[m++] = p[i].rq_count;
			}
		hists(&e, h, c, m, vv);
		col(2, "process histogram (words, counts, slots)", vv, &e);
		for (i = 0; i < np; i++)
			store_enc_u(&e,
			    vv ? p[i].flags << 1 | der[i] : p[i].flags);
		col(3, "process flags", vv, &e);

		for (i = 0, prev = 0; i < nt; prev = t[i++].tgid)
			if (!vv)
				store_enc_s(&e, (int64_t)t[i].tid - t[i].tgid);
			else if (t[i].tgid == t[i].tid)
				store_enc_u(&e, 0);
			else if (t[i].tgid == prev)
				store_enc_u(&e, 1);
			else
				store_enc_u(&e,
				    2 +
					((uint64_t)((int64_t)t[i].tid -
					     t[i].tgid)
						<< 1 ^
					    (uint64_t)(((int64_t)t[i].tid -
							   t[i].tgid) >>
						63)));
		col(4, "thread tgid", vv, &e);
		for (i = 0; i < nt; i++)
			v[i] = t[i].oncpu_ns;
		if (vv)
			planes(&e, v, nt);
		else
			for (i = 0; i < nt; i++)
				store_enc_u(&e, v[i]);
		col(5, "thread oncpu_ns", vv, &e);
		for (i = 0; i < nt; i++)
			v[i] = t[i].rq_ns;
		if (vv)
			planes(&e, v, nt);
		else
			for (i = 0; i < nt; i++)
				store_enc_u(&e, v[i]);
		col(6, "thread rq_ns", vv, &e);
		/* v3: the length column and rq_count; v4 the words and the
		 * counts that are not the sum */
		for (i = 0; i < nt; i++) {
			h[i] = t[i].rq_hist;
			c[i] = t[i].rq_count;
		}
		if (vv) {
			hists(&e, h, c, nt, 1);
		} else {
			for (i = 0; i < nt; i++)
				store_enc_u(&e, c[i]);
			for (i = 0; i < nt; i++)
				store_enc_u(&e, hlen(h[i]));
			for (i = 0; i < nt; i++) {
				unsigned k;

				for (k = 0; k < hlen(h[i]); k++)
					store_enc_u(&e, h[i][k]);
			}
		}
		col(7, "thread rq_count and histogram", vv, &e);
	}
	free(v);
	free(c);
	free(h);
	free(der);
}

/* ------------------------------------------------------------ windows */

static size_t
frame(const struct store_enc *pl, unsigned version)
{
	struct store_enc e = { 0 };
	size_t n;

	if (pl->err ||
	    store_frame_put_zstd(&e, STORE_BPFROWS_PART, version, pl->b.p,
		pl->b.len, STORE_ZSTD_LEVEL) < 0)
		die("frame");
	n = e.b.len;
	store_enc_release(&e);
	return n;
}

static void
rows_eq(const struct store_bpfrows *a, const struct store_bpfrows *b)
{
	if (a->nuid != b->nuid || a->nproc != b->nproc ||
	    a->nthread != b->nthread ||
	    (a->nuid && memcmp(a->uid, b->uid, a->nuid * sizeof(*a->uid))) ||
	    (a->nproc &&
		memcmp(a->proc, b->proc, a->nproc * sizeof(*a->proc))) ||
	    (a->nthread &&
		memcmp(a->thread, b->thread, a->nthread * sizeof(*a->thread))))
		die("version 4 does not read back");
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* What the writer and a reader do, ITER times: the rows encoded and
 * framed at zstd 3; the frame checked and the rows decoded. */
static void
timing(int v, const struct store_bpfrows *b)
{
	struct store_enc pl = { 0 }, e = { 0 };
	struct store_bpfrows back;
	struct store_frame f;
	unsigned ver = v == V_3 ? STORE_BPFROWS_V3 : STORE_BPFROWS_VERSION;
	double t0;
	int i;

	t0 = now_us();
	for (i = 0; i < ITER; i++) {
		store_enc_release(&pl);
		store_enc_release(&e);
		memset(&pl, 0, sizeof(pl));
		memset(&e, 0, sizeof(e));
		if ((v == V_3 ? store_bpfrows_put3(&pl, b) :
				store_bpfrows_put4(&pl, b)) < 0 ||
		    store_frame_put_zstd(&e, STORE_BPFROWS_PART, ver, pl.b.p,
			pl.b.len, STORE_ZSTD_LEVEL) < 0)
			die("encode");
	}
	enc_us[v] += (now_us() - t0) / ITER;
	t0 = now_us();
	for (i = 0; i < ITER; i++) {
		if (store_frame_get(e.b.p, e.b.len, &f) < 0 ||
		    store_bpfrows_get_v(f.payload, f.len, f.version, SIZE_MAX,
			&back) < 0)
			die("decode");
		store_bpfrows_release(&back);
		store_frame_release(&f);
	}
	dec_us[v] += (now_us() - t0) / ITER;
	store_enc_release(&pl);
	store_enc_release(&e);
}

static void
window(const void *blob, size_t n)
{
	struct store_enc p3 = { 0 }, p4 = { 0 };
	struct store_bpfrows b, back;
	struct store_frame f;

	if (store_frame_get(blob, n, &f) < 0 ||
	    store_bpfrows_get_v(f.payload, f.len, f.version, SIZE_MAX, &b) < 0)
		die("a stored blob does not decode");
	raw[V_STORED] += f.len;
	framed[V_STORED] += n;
	store_frame_release(&f);
	if (store_bpfrows_put3(&p3, &b) < 0 || store_bpfrows_put4(&p4, &b) < 0)
		die("out of memory");
	raw[V_3] += p3.b.len;
	framed[V_3] += frame(&p3, STORE_BPFROWS_V3);
	raw[V_4] += p4.b.len;
	framed[V_4] += frame(&p4, STORE_BPFROWS_VERSION);
	if (store_bpfrows_get_v(p4.b.p, p4.b.len, STORE_BPFROWS_VERSION,
		SIZE_MAX, &back) < 0)
		die("version 4 does not decode");
	rows_eq(&b, &back);
	if (npay < sizeof(pay) / sizeof(pay[0])) {
		pay[npay++] = p4;
		memset(&p4, 0, sizeof(p4));
	}
	columns(&b);
	timing(V_3, &b);
	timing(V_4, &b);
	rows[0] += b.nuid;
	rows[1] += b.nproc;
	rows[2] += b.nthread;
	nwin++;
	store_bpfrows_release(&back);
	store_bpfrows_release(&b);
	store_enc_release(&p3);
	store_enc_release(&p4);
}

/*
 * A dictionary of the store's size (4 KiB) trained on the even windows'
 * version-4 payloads, as a maintenance pass would on the newest ones;
 * the odd windows framed with it and without (the store's codec 2
 * against codec 1, doc/storage.md "Dictionaries").
 */
static void
dictionary(void)
{
	struct store_enc b = { 0 };
	size_t *len = calloc(npay, sizeof(*len)), dn, i, m = 0;
	double with = 0, without = 0, nodd = 0;
	uint32_t id;
	void *dict = NULL;

	if (len == NULL)
		die("out of memory");
	for (i = 0; i < npay; i += 2) {
		store_enc_bytes(&b, pay[i].b.p, pay[i].b.len);
		len[m++] = pay[i].b.len;
	}
	if (b.err ||
	    store_zdict_train(b.b.p, len, (unsigned)m, 4096, &dict, &dn) < 0 ||
	    store_zdict_add(dict, dn, &id) < 0) {
		printf("\ndictionary: zstd could not train on %zu payloads\n",
		    m);
		goto out;
	}
	for (i = 1; i < npay; i += 2) {
		struct store_enc e = { 0 }, z = { 0 };
		struct store_frame f;

		if (store_frame_put_zdict(&e, STORE_BPFROWS_PART,
			STORE_BPFROWS_VERSION, pay[i].b.p, pay[i].b.len,
			id) < 0 ||
		    store_frame_put_zstd(&z, STORE_BPFROWS_PART,
			STORE_BPFROWS_VERSION, pay[i].b.p, pay[i].b.len,
			STORE_ZSTD_LEVEL) < 0)
			die("frame");
		if (store_frame_get(e.b.p, e.b.len, &f) < 0 ||
		    f.len != pay[i].b.len ||
		    memcmp(f.payload, pay[i].b.p, f.len) != 0)
			die("a dictionary frame does not read back");
		store_frame_release(&f);
		with += e.b.len;
		without += z.b.len;
		nodd++;
		store_enc_release(&e);
		store_enc_release(&z);
	}
	printf("\ndictionary (%zu B, trained on %zu even windows), the %.0f "
	       "odd windows, version 4 framed:\n"
	       "  zstd 3 %.0f B, with the dictionary %.0f B (%.3f)\n",
	    dn, m, nodd, without / nodd, with / nodd, with / without);
out:
	free(dict);
	free(len);
	store_enc_release(&b);
	for (i = 0; i < npay; i++)
		store_enc_release(&pay[i]);
}

int
main(int argc, char **argv)
{
	sqlite3_stmt *st, *q;
	char sql[160];
	int v, c;

	if (argc != 2) {
		fprintf(stderr, "usage: bpf_sizes DB\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		die("open");
	/* the file's dictionaries: its blobs may be codec 2 (slot 10) */
	if (sqlite3_prepare_v2(db, "SELECT dict FROM blob_dict", -1, &st,
		NULL) == SQLITE_OK) {
		uint32_t id;

		while (sqlite3_step(st) == SQLITE_ROW)
			(void)store_zdict_add(sqlite3_column_blob(st, 0),
			    (size_t)sqlite3_column_bytes(st, 0), &id);
		sqlite3_finalize(st);
	}
	if (sqlite3_prepare_v2(db,
		"SELECT name FROM sqlite_schema WHERE type = 'table' AND "
		"name GLOB 'l[0-9]*_parts_[0-9]*' ORDER BY name",
		-1, &st, NULL) != SQLITE_OK)
		die("tables");
	while (sqlite3_step(st) == SQLITE_ROW) {
		snprintf(sql, sizeof(sql),
		    "SELECT bpf FROM \"%s\" WHERE bpf IS NOT NULL",
		    (const char *)sqlite3_column_text(st, 0));
		if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
			die("select");
		while (sqlite3_step(q) == SQLITE_ROW)
			window(sqlite3_column_blob(q, 0),
			    (size_t)sqlite3_column_bytes(q, 0));
		sqlite3_finalize(q);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (nwin == 0) {
		fprintf(stderr, "bpf_sizes: no BPF rows blob\n");
		return 1;
	}
	printf("%.0f windows; per window %.1f uid, %.1f process (%.1f "
	       "derived), %.1f thread rows\n",
	    nwin, rows[0] / nwin, rows[1] / nwin, derived / nwin,
	    rows[2] / nwin);
	printf("%-12s %10s %10s %8s %8s %8s\n", "payload", "raw B", "zstd-3 B",
	    "vs v3", "enc µs", "dec µs");
	for (v = 0; v < V__MAX; v++) {
		printf("%-12s %10.0f %10.0f %8.3f", v_name[v], raw[v] / nwin,
		    framed[v] / nwin, framed[v] / framed[V_3]);
		if (v == V_STORED)
			printf(" %8s %8s\n", "", "");
		else
			printf(" %8.1f %8.1f\n", enc_us[v] / nwin,
			    dec_us[v] / nwin);
	}
	printf("\nper column, each alone at zstd 3 (B per window)\n");
	printf("%-42s %8s %8s\n", "column", "v3", "v4");
	for (c = 0; c < NCOL; c++)
		if (col_name[c])
			printf("%-42s %8.0f %8.0f\n", col_name[c],
			    col_z[c][0] / nwin, col_z[c][1] / nwin);
	dictionary();
	return 0;
}
