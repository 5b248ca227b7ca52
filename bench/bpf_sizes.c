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
 * Then a dictionary of the store's size (4 KiB) trained on the even
 * windows' version-4 payloads and the odd ones framed with it and without
 * (held out, so the figure is not the dictionary meeting its own
 * samples; the store trains on the newest level-0 ones, at most 1 MiB).
 * Last, what else could come off, each measured the same way (its own
 * dictionary on the even windows, the odd ones framed): zstd levels with
 * the dictionary, and payloads that keep less (doc/storage.md, "What
 * the BPF rows could still give up"): threads' ns figures in µs,
 * threads without histograms, fewer thread rows (bpf_threads).
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
#define MAX_WIN 4096 /* windows measured */
static struct store_enc pay[MAX_WIN];
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

/* ------------------------------------------------------------ options */

/*
 * Payloads that keep less, built from each window's rows and encoded as
 * version 4 (plus, where a version 5 would need one, a column appended):
 *   O_US      threads' oncpu_ns and rq_ns floored to µs; a process with
 *             thread rows keeps its exact figures as the sum of its
 *             threads' µs (so it stays derived) and two columns of the
 *             remainders in ns (N, as version 4's numbers)
 *   O_NOH     threads without histograms (their rq_count kept): version 4
 *             as it is, so processes are no longer derived
 *   O_NOH5    the same, processes' histograms in a column of their own
 *             (H, over every process) and their sums still derived
 *   O_BOTH    O_US and O_NOH5
 *   O_T64/32  bpf_threads 64 / 32: the daemon's choice (half of the bound
 *             by on-CPU time, then the longest waiters), the rest folded
 *             into the "other" thread row
 */
enum { O_US, O_NOH, O_NOH5, O_BOTH, O_T64, O_T32, O__MAX };
static const char *const o_name[O__MAX] = {
	"threads' ns in µs (process remainders kept)",
	"threads without histograms (version 4)",
	"threads without histograms (process column)",
	"both (µs, process column)",
	"bpf_threads 64",
	"bpf_threads 32",
};
static struct store_enc opay[O__MAX][MAX_WIN];

static void
rows_copy(const struct store_bpfrows *b, struct store_bpfrows *c)
{
	*c = *b;
	c->proc = malloc((b->nproc + 1) * sizeof(*c->proc));
	c->thread = malloc((b->nthread + 1) * sizeof(*c->thread));
	if (c->proc == NULL || c->thread == NULL)
		die("out of memory");
	memcpy(c->proc, b->proc, b->nproc * sizeof(*c->proc));
	memcpy(c->thread, b->thread, b->nthread * sizeof(*c->thread));
}

static void
opt_us(struct store_bpfrows *c, struct store_enc *tail)
{
	uint64_t *r1 = calloc(c->nproc + 1, sizeof(*r1));
	uint64_t *r2 = calloc(c->nproc + 1, sizeof(*r2));
	size_t i, j;

	if (r1 == NULL || r2 == NULL)
		die("out of memory");
	for (i = 0; i < c->nproc; i++) {
		uint64_t so = 0, sr = 0;
		bool any = false;

		for (j = 0; j < c->nthread; j++)
			if (c->thread[j].tgid == c->proc[i].tgid) {
				any = true;
				so += c->thread[j].oncpu_ns / 1000;
				sr += c->thread[j].rq_ns / 1000;
			}
		if (!any || so * 1000 > c->proc[i].oncpu_ns ||
		    sr * 1000 > c->proc[i].rq_ns)
			continue;
		r1[i] = c->proc[i].oncpu_ns - so * 1000;
		r2[i] = c->proc[i].rq_ns - sr * 1000;
		c->proc[i].oncpu_ns = so;
		c->proc[i].rq_ns = sr;
	}
	for (j = 0; j < c->nthread; j++) {
		c->thread[j].oncpu_ns /= 1000;
		c->thread[j].rq_ns /= 1000;
	}
	planes(tail, r1, c->nproc);
	planes(tail, r2, c->nproc);
	free(r1);
	free(r2);
}

static void
opt_nohist(struct store_bpfrows *c, struct store_enc *tail)
{
	size_t i;

	if (tail != NULL) {
		uint32_t **h = malloc((c->nproc + 1) * sizeof(*h));
		uint64_t *n = malloc((c->nproc + 1) * sizeof(*n));

		if (h == NULL || n == NULL)
			die("out of memory");
		for (i = 0; i < c->nproc; i++) {
			h[i] = c->proc[i].rq_hist;
			n[i] = c->proc[i].rq_count;
		}
		hists(tail, h, n, c->nproc, 1);
		free(h);
		free(n);
		for (i = 0; i < c->nproc; i++)
			memset(c->proc[i].rq_hist, 0,
			    sizeof(c->proc[i].rq_hist));
	}
	for (i = 0; i < c->nthread; i++)
		memset(c->thread[i].rq_hist, 0, sizeof(c->thread[i].rq_hist));
}

static const struct window_bpf_thread *cmp_rows;

static int
by_oncpu(const void *a, const void *b)
{
	uint64_t x = cmp_rows[*(const size_t *)a].oncpu_ns;
	uint64_t y = cmp_rows[*(const size_t *)b].oncpu_ns;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int
by_rq(const void *a, const void *b)
{
	uint64_t x = cmp_rows[*(const size_t *)a].rq_ns;
	uint64_t y = cmp_rows[*(const size_t *)b].rq_ns;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The first k/2 threads by on-CPU time, then the longest waiters, kept in
 * their order; the rest summed into the "other" row, first (none when
 * nothing folds into it, as the store writes it). The daemon's choice is
 * threads_settle() (daemon/sched/sched_window.c), which also breaks ties
 * by key: keep the two alike. */
static void
opt_bound(struct store_bpfrows *c, size_t k)
{
	struct window_bpf_thread *t = c->thread,
				 o = { .tid = -1,
					 .tgid = -1,
					 .uid = UINT32_MAX };
	size_t *ix = malloc((c->nthread + 1) * sizeof(*ix)), i, n = 0, s;
	uint8_t *keep = calloc(c->nthread + 1, 1);
	unsigned h;

	if (ix == NULL || keep == NULL)
		die("out of memory");
	for (i = 0; i < c->nthread; i++)
		if (t[i].tid != -1)
			ix[n++] = i;
	cmp_rows = t;
	qsort(ix, n, sizeof(*ix), by_oncpu);
	s = n < k / 2 ? n : k / 2;
	qsort(ix + s, n - s, sizeof(*ix), by_rq);
	for (i = 0; i < n && i < k; i++)
		keep[ix[i]] = 1;
	for (i = n = 0; i < c->nthread; i++) {
		if (keep[i]) {
			ix[n++] = i;
			continue;
		}
		o.oncpu_ns += t[i].oncpu_ns;
		o.rq_ns += t[i].rq_ns;
		o.rq_count += t[i].rq_count;
		for (h = 0; h < VITALS_BPF_RQ_SLOTS; h++)
			o.rq_hist[h] += t[i].rq_hist[h];
	}
	{
		struct window_bpf_thread *nt = malloc((n + 2) * sizeof(*nt));
		size_t m = 0;

		if (nt == NULL)
			die("out of memory");
		if (o.oncpu_ns || o.rq_count)
			nt[m++] = o;
		for (i = 0; i < n; i++)
			nt[m++] = t[ix[i]];
		free(c->thread);
		c->thread = nt;
		c->nthread = m;
	}
	free(ix);
	free(keep);
}

/* Window w's payload in each option. */
static void
options(const struct store_bpfrows *b, size_t w)
{
	int o;

	for (o = 0; o < O__MAX; o++) {
		struct store_bpfrows c;
		struct store_enc tail = { 0 }, *e = &opay[o][w];

		rows_copy(b, &c);
		if (o == O_NOH)
			opt_nohist(&c, NULL);
		if (o == O_NOH5 || o == O_BOTH)
			opt_nohist(&c, &tail);
		if (o == O_US || o == O_BOTH)
			opt_us(&c, &tail);
		if (o == O_T64 || o == O_T32)
			opt_bound(&c, o == O_T64 ? 64 : 32);
		memset(e, 0, sizeof(*e));
		if (store_bpfrows_put4(e, &c) < 0 || tail.err)
			die("out of memory");
		store_enc_bytes(e, tail.b.p, tail.b.len);
		store_enc_release(&tail);
		free(c.proc);
		free(c.thread);
	}
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
		options(&b, npay);
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

/* Payloads p[0..n) held out: a dictionary of the store's size (4 KiB)
 * trained on the even ones, the odd ones framed with it and without. */
struct held {
	double raw, without, with, nodd;
	void *dict; /* the caller frees it */
	size_t dn, ntrain;
};

static int
held_out(struct store_enc *p, size_t n, struct held *h)
{
	struct store_enc b = { 0 };
	size_t *len = calloc(n + 1, sizeof(*len)), i;
	uint32_t id;

	memset(h, 0, sizeof(*h));
	if (len == NULL)
		die("out of memory");
	for (i = 0; i < n; i += 2) {
		store_enc_bytes(&b, p[i].b.p, p[i].b.len);
		len[h->ntrain++] = p[i].b.len;
	}
	if (b.err ||
	    store_zdict_train(b.b.p, len, (unsigned)h->ntrain, 4096, &h->dict,
		&h->dn) < 0 ||
	    store_zdict_add(h->dict, h->dn, &id) < 0) {
		free(h->dict);
		h->dict = NULL;
		free(len);
		store_enc_release(&b);
		return -1;
	}
	for (i = 1; i < n; i += 2) {
		struct store_enc e = { 0 }, z = { 0 };
		struct store_frame f;

		if (store_frame_put_zdict(&e, STORE_BPFROWS_PART,
			STORE_BPFROWS_VERSION, p[i].b.p, p[i].b.len, id) < 0 ||
		    store_frame_put_zstd(&z, STORE_BPFROWS_PART,
			STORE_BPFROWS_VERSION, p[i].b.p, p[i].b.len,
			STORE_ZSTD_LEVEL) < 0)
			die("frame");
		if (store_frame_get(e.b.p, e.b.len, &f) < 0 ||
		    f.len != p[i].b.len ||
		    memcmp(f.payload, p[i].b.p, f.len) != 0)
			die("a dictionary frame does not read back");
		store_frame_release(&f);
		h->raw += p[i].b.len;
		h->with += e.b.len;
		h->without += z.b.len;
		h->nodd++;
		store_enc_release(&e);
		store_enc_release(&z);
	}
	free(len);
	store_enc_release(&b);
	return 0;
}

/* The odd payloads compressed with dictionary h at zstd level lv as the
 * store's codec 2 does (the dictionary digested once at that level and
 * referenced per blob; no checksum, no dictionary id, content size
 * stated): mean bytes of the zstd stream alone (no frame) and µs. */
static void
at_level(const struct held *h, int lv, double *ret_b, double *ret_us)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_CDict *cd = ZSTD_createCDict(h->dict, h->dn, lv);
	size_t i, cap = 0, r;
	void *out = NULL;
	double t0, bytes = 0, us = 0, n = 0;

	if (c == NULL || cd == NULL ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_dictIDFlag, 0)))
		die("zstd");
	for (i = 1; i < npay; i += 2) {
		if (ZSTD_compressBound(pay[i].b.len) > cap) {
			cap = ZSTD_compressBound(pay[i].b.len);
			free(out);
			if ((out = malloc(cap)) == NULL)
				die("out of memory");
		}
		t0 = now_us();
		if (ZSTD_isError(ZSTD_CCtx_refCDict(c, cd)))
			die("zstd");
		r = ZSTD_compress2(c, out, cap, pay[i].b.p, pay[i].b.len);
		us += now_us() - t0;
		if (ZSTD_isError(r))
			die("zstd");
		bytes += r;
		n++;
	}
	ZSTD_freeCCtx(c);
	ZSTD_freeCDict(cd);
	free(out);
	*ret_b = bytes / n;
	*ret_us = us / n;
}

/*
 * The version-4 payloads as the store would frame them with a dictionary,
 * then at other zstd levels and the options' payloads, each held out the
 * same way; per window, on the odd windows.
 */
static void
dictionary(void)
{
	static const int lv[] = { 1, 3, 6, 9, 12, 19 };
	struct held h, oh;
	double b3 = 0, us3 = 0, bl, usl;
	size_t i;
	int o, k;

	if (held_out(pay, npay, &h) < 0) {
		printf("\ndictionary: zstd could not train on %zu payloads\n",
		    (npay + 1) / 2);
		goto out;
	}
	printf("\ndictionary (%zu B, trained on %zu even windows), the %.0f "
	       "odd windows, version 4 framed:\n"
	       "  zstd 3 %.0f B, with the dictionary %.0f B (%.3f)\n",
	    h.dn, h.ntrain, h.nodd, h.without / h.nodd, h.with / h.nodd,
	    h.with / h.without);

	printf("\nzstd levels with that dictionary (the compressed stream "
	       "alone, odd windows):\n%-8s %8s %8s %8s\n",
	    "level", "B", "vs 3", "µs");
	at_level(&h, STORE_ZSTD_LEVEL, &b3, &us3);
	for (k = 0; k < (int)(sizeof(lv) / sizeof(lv[0])); k++) {
		at_level(&h, lv[k], &bl, &usl);
		printf("%-8d %8.0f %8.3f %8.0f\n", lv[k], bl, bl / b3, usl);
	}

	printf("\nwhat else could come off (each with its own dictionary, "
	       "held out as above;\nvs: against version 4 with its "
	       "dictionary, %.0f B):\n%-44s %8s %8s %8s %8s\n",
	    h.with / h.nodd, "payload", "raw B", "zstd 3", "+dict", "vs");
	for (o = 0; o < O__MAX; o++) {
		if (held_out(opay[o], npay, &oh) < 0) {
			printf("%-44s zstd could not train\n", o_name[o]);
			continue;
		}
		printf("%-44s %8.0f %8.0f %8.0f %8.3f\n", o_name[o],
		    oh.raw / oh.nodd, oh.without / oh.nodd, oh.with / oh.nodd,
		    oh.with / h.with);
		free(oh.dict);
	}
	free(h.dict);
out:
	for (i = 0; i < npay; i++) {
		store_enc_release(&pay[i]);
		for (o = 0; o < O__MAX; o++)
			store_enc_release(&opay[o][i]);
	}
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
