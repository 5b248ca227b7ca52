/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Version 4 of a window's BPF rows payload and the reader of every
 * version (store_bpfrows.c has versions 1 to 3; doc/storage.md, "BPF
 * rows, version 4"). Calls go one way: this file to store_bpfrows.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_bpfrows.h"
#include "store/store_bpfrows_int.h"
#include "store/store_codec.h"

/*
 * Version 4 (doc/storage.md, "BPF rows, version 4") stores what version 3
 * does in fewer bytes: a process whose figures are the sum of its thread
 * rows (same tgid, same blob) is flagged and its figures are not written;
 * large figures are a length column and byte planes; histograms go slot
 * after slot; a thread's rq_count is left out when its histogram sums to
 * it; a thread's tgid is a small code.
 */

/* struct rows4, ROWS4, BYTES_MAX, P4_DERIVED: store_bpfrows_int.h */

static bool
r4_on(const struct rows4 *r, size_t i)
{
	return r->skip == NULL || !r->skip[i];
}

static uint64_t *
r4_u64(const struct rows4 *r, size_t i, size_t off)
{
	return (uint64_t *)(r->base + i * r->stride + off);
}

static uint32_t *
r4_hist(const struct rows4 *r, size_t i, size_t off)
{
	return (uint32_t *)(r->base + i * r->stride + off);
}

static unsigned
bytes_of(uint64_t v)
{
	unsigned n = 0;

	for (; v; v >>= 8)
		n++;
	return n;
}

/* The u64 at off of every row written: their lengths in bytes, one byte
 * each, then the byte planes, most significant first: plane j holds byte
 * j (from the top) of every row longer than j. zstd meets alike bytes
 * together, where a varint mixes a value's high and low bits. */
static void
put_nums(struct store_enc *e, const struct rows4 *r, size_t off)
{
	unsigned j, len;
	uint64_t v;
	size_t i;
	uint8_t b;

	for (i = 0; i < r->n; i++)
		if (r4_on(r, i)) {
			b = (uint8_t)bytes_of(*r4_u64(r, i, off));
			store_enc_bytes(e, &b, 1);
		}
	for (j = 0; j < BYTES_MAX; j++)
		for (i = 0; i < r->n; i++) {
			if (!r4_on(r, i))
				continue;
			v = *r4_u64(r, i, off);
			if ((len = bytes_of(v)) <= j)
				continue;
			b = (uint8_t)(v >> 8 * (len - 1 - j));
			store_enc_bytes(e, &b, 1);
		}
}

/* What put_nums wrote, into the rows' u64 at off (zeroed): 0 or
 * -EBADMSG (a length past 8, a leading zero byte, a byte short). Row by
 * row, a cursor in each plane: each byte is visited once. */
int
store_bpfrows_nums(struct store_dec *d, const struct rows4 *r, size_t m,
    size_t off)
{
	const uint8_t *len = store_dec_bytes(d, m), *pl[BYTES_MAX];
	size_t cnt[BYTES_MAX + 1] = { 0 }, i, k, n;
	unsigned j;
	uint64_t *v;

	if (len == NULL)
		return -EBADMSG;
	for (k = 0; k < m; k++) {
		if (len[k] > BYTES_MAX)
			return -EBADMSG;
		cnt[len[k]]++;
	}
	/* plane j: a byte of each row longer than j */
	for (j = BYTES_MAX, n = 0; j-- > 0;)
		n += cnt[j + 1] * (j + 1);
	if ((pl[0] = store_dec_bytes(d, n)) == NULL)
		return -EBADMSG;
	for (j = 1, n = m - cnt[0]; j < BYTES_MAX; j++) {
		pl[j] = pl[j - 1] + n;
		n -= cnt[j];
	}
	for (i = 0, k = 0; i < r->n; i++) {
		if (!r4_on(r, i) || len[k++] == 0)
			continue;
		if (*pl[0] == 0)
			return -EBADMSG; /* not the shortest form */
		v = r4_u64(r, i, off);
		for (j = 0; j < len[k - 1]; j++)
			*v = *v << 8 | *pl[j]++;
	}
	return 0;
}

/* The histogram columns of the rows written: a word each (the length,
 * trailing empty slots left out, << 1 | 1 when rq_count is the sum), the
 * counts that are not the sum, then slot 0 of every row that has it,
 * slot 1, … */
static void
put_hist4(struct store_enc *e, const struct rows4 *r, size_t hoff, size_t coff)
{
	uint8_t *len = r->n ? malloc(r->n) : NULL;
	unsigned k;
	uint64_t sum;
	size_t i;

	if (r->n && len == NULL) {
		e->err = e->err ? e->err : -ENOMEM;
		return;
	}
	for (i = 0; i < r->n; i++)
		if (r4_on(r, i)) {
			len[i] = (uint8_t)store_bpfrows_slots(r4_hist(r, i,
								  hoff),
			    &sum);
			store_enc_u(e,
			    (unsigned)len[i] << 1 |
				(sum == *r4_u64(r, i, coff)));
		}
	for (i = 0; i < r->n; i++)
		if (r4_on(r, i)) {
			store_bpfrows_slots(r4_hist(r, i, hoff), &sum);
			if (sum != *r4_u64(r, i, coff))
				store_enc_u(e, *r4_u64(r, i, coff));
		}
	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		for (i = 0; i < r->n; i++)
			if (r4_on(r, i) && len[i] > k)
				store_enc_u(e, r4_hist(r, i, hoff)[k]);
	free(len);
}

/* What put_hist4 wrote, into zeroed rows: 0 or -EBADMSG. Each word is
 * parked in its row's last slot, read last. */
static int
get_hist4(struct store_dec *d, const struct rows4 *r, size_t hoff, size_t coff)
{
	const unsigned last = VITALS_BPF_RQ_SLOTS - 1;
	unsigned k, word;
	uint32_t *h;
	uint64_t sum;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r4_on(r, i))
			r4_hist(r, i, hoff)[last] = (uint32_t)store_dec_u_max(d,
			    VITALS_BPF_RQ_SLOTS << 1 | 1);
	for (i = 0; i < r->n; i++)
		if (r4_on(r, i) && !(r4_hist(r, i, hoff)[last] & 1))
			*r4_u64(r, i, coff) = store_dec_u(d);
	for (k = 0; k < last && !d->err; k++)
		for (i = 0; i < r->n; i++)
			if (r4_on(r, i) && r4_hist(r, i, hoff)[last] >> 1 > k)
				r4_hist(r, i, hoff)[k] =
				    (uint32_t)store_dec_u_max(d, UINT32_MAX);
	for (i = 0; i < r->n && !d->err; i++) {
		if (!r4_on(r, i))
			continue;
		h = r4_hist(r, i, hoff);
		word = h[last];
		h[last] = word >> 1 > last ?
		    (uint32_t)store_dec_u_max(d, UINT32_MAX) :
		    0;
		/* the encoder leaves trailing empty slots out */
		if (word >> 1 && h[(word >> 1) - 1] == 0)
			return -EBADMSG;
		for (k = 0, sum = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			sum += h[k];
		if (word & 1)
			*r4_u64(r, i, coff) = sum;
	}
	return d->err ? -EBADMSG : 0;
}

/* A thread row's tgid and index, sorted by tgid: a process's thread rows
 * found by a binary search. */
struct tg_ix {
	int32_t tgid;
	uint32_t i;
};

static int
cmp_tg_ix(const void *a, const void *b)
{
	const struct tg_ix *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The thread rows by tgid (NULL when there are none): free it. */
static struct tg_ix *
tg_index(const struct window_bpf_thread *t, size_t nt, int *ret_err)
{
	struct tg_ix *ix;
	size_t i;

	*ret_err = 0;
	if (nt == 0)
		return NULL;
	if ((ix = malloc(nt * sizeof(*ix))) == NULL) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < nt; i++) {
		ix[i].tgid = t[i].tgid;
		ix[i].i = (uint32_t)i;
	}
	qsort(ix, nt, sizeof(*ix), cmp_tg_ix);
	return ix;
}

static bool
add_u64(uint64_t *a, uint64_t b)
{
	return !__builtin_add_overflow(*a, b, a);
}

/*
 * The run-queue and on-CPU figures of tgid's thread rows summed into *ret
 * (zeroed first; its key fields untouched): 1 when it has thread rows and
 * no sum overflows, 0 when it has none, -1 when a sum overflows.
 */
static int
thread_sum(const struct window_bpf_thread *t, const struct tg_ix *ix, size_t nt,
    int32_t tgid, struct window_bpf_proc *ret)
{
	size_t lo = 0, hi = nt, j;
	unsigned k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nt || ix[lo].tgid != tgid)
		return 0;
	ret->oncpu_ns = ret->rq_ns = ret->rq_count = 0;
	memset(ret->rq_hist, 0, sizeof(ret->rq_hist));
	for (j = lo; j < nt && ix[j].tgid == tgid; j++) {
		const struct window_bpf_thread *r = &t[ix[j].i];

		if (!add_u64(&ret->oncpu_ns, r->oncpu_ns) ||
		    !add_u64(&ret->rq_ns, r->rq_ns) ||
		    !add_u64(&ret->rq_count, r->rq_count))
			return -1;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			if (__builtin_add_overflow(ret->rq_hist[k],
				r->rq_hist[k], &ret->rq_hist[k]))
				return -1;
	}
	return 1;
}

/* Whether p's figures are those of its thread rows. */
static bool
proc_derived(const struct window_bpf_proc *p, const struct window_bpf_thread *t,
    const struct tg_ix *ix, size_t nt)
{
	struct window_bpf_proc s;

	return thread_sum(t, ix, nt, p->tgid, &s) == 1 &&
	    s.oncpu_ns == p->oncpu_ns && s.rq_ns == p->rq_ns &&
	    s.rq_count == p->rq_count &&
	    memcmp(s.rq_hist, p->rq_hist, sizeof(s.rq_hist)) == 0;
}

/* A thread's tgid: 0 its tid, 1 the previous thread row's tgid (before
 * the first: 0), else 2 + zigzag(tid − tgid). */
static uint64_t
tgid_code(const struct window_bpf_thread *r, int32_t prev)
{
	int64_t off = (int64_t)r->tid - r->tgid;

	if (r->tgid == r->tid)
		return 0;
	if (r->tgid == prev)
		return 1;
	return 2 + ((uint64_t)off << 1 ^ (uint64_t)(off >> 63));
}

int
store_bpfrows_put4(struct store_enc *e, const struct store_bpfrows *b)
{
	const struct window_bpf_uid *u = b->uid;
	const struct window_bpf_proc *p = b->proc;
	const struct window_bpf_thread *t = b->thread;
	struct tg_ix *ix;
	uint8_t *der = NULL;
	uint64_t prev;
	int64_t prevs;
	int32_t tg;
	size_t i;
	int r;

	ix = tg_index(t, b->nthread, &r);
	if (r < 0 || (b->nproc && (der = calloc(b->nproc, 1)) == NULL)) {
		free(ix);
		return -ENOMEM;
	}
	for (i = 0; i < b->nproc && ix != NULL; i++)
		der[i] = proc_derived(&p[i], t, ix, b->nthread);
	free(ix);

	store_enc_u(e, b->nuid);
	for (i = 0; i < b->nuid; i++)
		store_enc_u(e, (uint32_t)(u[i].uid + 1));
	put_nums(e, &ROWS4(u, b->nuid, NULL),
	    offsetof(struct window_bpf_uid, oncpu_ns));
	put_nums(e, &ROWS4(u, b->nuid, NULL),
	    offsetof(struct window_bpf_uid, exited_ns));
	for (i = 0; i < b->nuid; i++)
		store_enc_u(e, u[i].exited_tasks);
	put_nums(e, &ROWS4(u, b->nuid, NULL),
	    offsetof(struct window_bpf_uid, rq_ns));
	put_hist4(e, &ROWS4(u, b->nuid, NULL),
	    offsetof(struct window_bpf_uid, rq_hist),
	    offsetof(struct window_bpf_uid, rq_count));

	store_enc_u(e, b->nproc);
	for (i = 0, prevs = 0; i < b->nproc; prevs = p[i++].tgid)
		store_enc_s(e, p[i].tgid - prevs);
	for (i = 0, prev = 0; i < b->nproc; prev = p[i++].starttime)
		store_enc_s(e, (int64_t)(p[i].starttime - prev));
	for (i = 0; i < b->nproc; i++)
		store_enc_u(e, (uint64_t)p[i].flags << 1 | der[i]);
	put_nums(e, &ROWS4(p, b->nproc, der),
	    offsetof(struct window_bpf_proc, oncpu_ns));
	put_nums(e, &ROWS4(p, b->nproc, der),
	    offsetof(struct window_bpf_proc, rq_ns));
	put_hist4(e, &ROWS4(p, b->nproc, der),
	    offsetof(struct window_bpf_proc, rq_hist),
	    offsetof(struct window_bpf_proc, rq_count));
	free(der);

	store_enc_u(e, b->nthread);
	for (i = 0, prevs = 0; i < b->nthread; prevs = t[i++].tid)
		store_enc_s(e, t[i].tid - prevs);
	for (i = 0, tg = 0; i < b->nthread; tg = t[i++].tgid)
		store_enc_u(e, tgid_code(&t[i], tg));
	for (i = 0, prevs = 0; i < b->nthread; prevs = t[i++].uid)
		store_enc_s(e, (int64_t)t[i].uid - prevs);
	for (i = 0, prev = 0; i < b->nthread; prev = t[i++].starttime)
		store_enc_s(e, (int64_t)(t[i].starttime - prev));
	put_nums(e, &ROWS4(t, b->nthread, NULL),
	    offsetof(struct window_bpf_thread, oncpu_ns));
	put_nums(e, &ROWS4(t, b->nthread, NULL),
	    offsetof(struct window_bpf_thread, rq_ns));
	put_hist4(e, &ROWS4(t, b->nthread, NULL),
	    offsetof(struct window_bpf_thread, rq_hist),
	    offsetof(struct window_bpf_thread, rq_count));
	return e->err;
}

/* A thread's tgid from its code (tgid_code) and its tid, the previous
 * thread row's tgid prev: false when it leaves 32 bits. */
bool
store_bpfrows_tgid4(uint64_t code, int32_t tid, int32_t prev, int32_t *ret)
{
	if (code < 2) {
		*ret = code == 0 ? tid : prev;
		return true;
	}
	code -= 2;
	return store_bpfrows_tgid(tid,
	    (int64_t)(code >> 1) ^ -(int64_t)(code & 1), ret);
}

/* A count of rows that take at least min bytes each, no more than max
 * and than the bytes left could hold: -EBADMSG past either, before any
 * allocation. */
size_t
store_bpfrows_count4(struct store_dec *d, size_t max, size_t min)
{
	size_t left = (size_t)(d->end - d->p) / min;

	return (size_t)store_dec_u_max(d, max < left ? max : left);
}

static int
get_v4(struct store_dec *d, size_t max, struct store_bpfrows *b, uint8_t **der)
{
	struct window_bpf_uid *u;
	struct window_bpf_proc *p;
	struct window_bpf_thread *t;
	int64_t acc;
	uint64_t st, code;
	int32_t tg;
	size_t i, n, m;

	/* a uid row takes at least 6 bytes (uid, 3 lengths, exited tasks, a
	 * histogram word), a process row 3 (tgid, start, flags), a thread
	 * row 7 (tid, tgid, uid, start, 2 lengths, a histogram word) */
	n = store_bpfrows_count4(d, max, 6);
	if (d->err)
		return -EBADMSG;
	if (n && (b->uid = calloc(n, sizeof(*b->uid))) == NULL)
		return -ENOMEM;
	b->nuid = n;
	u = b->uid;
	for (i = 0; i < n; i++)
		u[i].uid = (uint32_t)store_dec_u_max(d, UINT32_MAX) - 1;
	if (store_bpfrows_nums(d, &ROWS4(u, n, NULL), n,
		offsetof(struct window_bpf_uid, oncpu_ns)) < 0 ||
	    store_bpfrows_nums(d, &ROWS4(u, n, NULL), n,
		offsetof(struct window_bpf_uid, exited_ns)) < 0)
		return -EBADMSG;
	for (i = 0; i < n; i++)
		u[i].exited_tasks = store_dec_u(d);
	if (store_bpfrows_nums(d, &ROWS4(u, n, NULL), n,
		offsetof(struct window_bpf_uid, rq_ns)) < 0 ||
	    get_hist4(d, &ROWS4(u, n, NULL),
		offsetof(struct window_bpf_uid, rq_hist),
		offsetof(struct window_bpf_uid, rq_count)) < 0)
		return -EBADMSG;

	n = store_bpfrows_count4(d, max, 3);
	if (d->err)
		return -EBADMSG;
	if (n &&
	    ((b->proc = calloc(n, sizeof(*b->proc))) == NULL ||
		(*der = calloc(n, 1)) == NULL))
		return -ENOMEM;
	b->nproc = n;
	p = b->proc;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_step32(d, &acc, &p[i].tgid))
			return -EBADMSG;
	for (i = 0, st = 0; i < n; i++)
		p[i].starttime = st += (uint64_t)store_dec_s(d);
	for (i = 0, m = 0; i < n; i++) {
		code = store_dec_u_max(d, WBPF_PROC_EXITED << 1 | P4_DERIVED);
		p[i].flags = (uint32_t)(code >> 1);
		m += !((*der)[i] = code & P4_DERIVED);
	}
	if (d->err ||
	    store_bpfrows_nums(d, &ROWS4(p, n, *der), m,
		offsetof(struct window_bpf_proc, oncpu_ns)) < 0 ||
	    store_bpfrows_nums(d, &ROWS4(p, n, *der), m,
		offsetof(struct window_bpf_proc, rq_ns)) < 0 ||
	    get_hist4(d, &ROWS4(p, n, *der),
		offsetof(struct window_bpf_proc, rq_hist),
		offsetof(struct window_bpf_proc, rq_count)) < 0)
		return -EBADMSG;

	n = store_bpfrows_count4(d, max, 7);
	if (d->err)
		return -EBADMSG;
	if (n && (b->thread = calloc(n, sizeof(*b->thread))) == NULL)
		return -ENOMEM;
	b->nthread = n;
	t = b->thread;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_step32(d, &acc, &t[i].tid))
			return -EBADMSG;
	for (i = 0, tg = 0; i < n; tg = t[i++].tgid)
		if (!store_bpfrows_tgid4(store_dec_u(d), t[i].tid, tg,
			&t[i].tgid))
			return -EBADMSG;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_uid_step(d, &acc, &t[i].uid))
			return -EBADMSG;
	for (i = 0, st = 0; i < n; i++)
		t[i].starttime = st += (uint64_t)store_dec_s(d);
	if (store_bpfrows_nums(d, &ROWS4(t, n, NULL), n,
		offsetof(struct window_bpf_thread, oncpu_ns)) < 0 ||
	    store_bpfrows_nums(d, &ROWS4(t, n, NULL), n,
		offsetof(struct window_bpf_thread, rq_ns)) < 0 ||
	    get_hist4(d, &ROWS4(t, n, NULL),
		offsetof(struct window_bpf_thread, rq_hist),
		offsetof(struct window_bpf_thread, rq_count)) < 0)
		return -EBADMSG;
	return d->err ? -EBADMSG : 0;
}

/* The derived processes' figures from their thread rows: -EBADMSG when
 * one has none or a sum overflows. */
static int
derive4(struct store_bpfrows *b, const uint8_t *der)
{
	struct tg_ix *ix;
	size_t i;
	int r;

	ix = tg_index(b->thread, b->nthread, &r);
	if (r < 0)
		return r;
	for (i = 0; i < b->nproc && r == 0; i++)
		if (der[i] &&
		    thread_sum(b->thread, ix, b->nthread, b->proc[i].tgid,
			&b->proc[i]) != 1)
			r = -EBADMSG;
	free(ix);
	return r;
}

/* Version 4's rows of d's bytes (all of them), the derived processes'
 * figures summed: 0, -EBADMSG or -ENOMEM; b is the caller's to release
 * either way. */
static int
get4(struct store_dec *d, size_t max, struct store_bpfrows *b)
{
	uint8_t *der = NULL;
	int r;

	r = get_v4(d, max, b, &der);
	if (r == 0 && store_dec_end(d) < 0)
		r = -EBADMSG;
	if (r == 0)
		r = derive4(b, der);
	free(der);
	return r;
}

/* Every version's entry (versions 1 to 3 in store_bpfrows.c). */
int
store_bpfrows_get_v(const void *buf, size_t len, unsigned version, size_t max,
    struct store_bpfrows *ret)
{
	struct store_bpfrows b = { 0 };
	struct store_dec d;
	int r;

	if (version == STORE_BPFROWS_V1)
		return store_bpfrows_get(buf, len, max, ret);
	if (version < STORE_BPFROWS_V2 || version > STORE_BPFROWS_VERSION)
		return -EBADMSG;
	store_dec_init(&d, buf, len);
	if (version == STORE_BPFROWS_VERSION) {
		r = get4(&d, max, &b);
	} else {
		r = store_bpfrows_get2(&d, len, max, &b);
		if (r == 0 && version == STORE_BPFROWS_V3)
			r = store_bpfrows_get3_tail(&d, &b);
		if (r == 0 && store_dec_end(&d) < 0)
			r = -EBADMSG;
	}
	if (r < 0) {
		store_bpfrows_release(&b);
		return r;
	}
	*ret = b;
	return 0;
}
