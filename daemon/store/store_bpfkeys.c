/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The keys of a window's BPF rows alone: what a wcpu part names by
 * reference (store_wcpu.c), each process's and thread's key, tgid and
 * on-CPU time, for the span read of `top --weighted` and `proc`, which
 * has no use for the run-queue columns (doc/storage.md, "window_wcpu").
 *
 * Version 4 (store_bpfrows4.c) is read through without keeping its
 * run-queue figures and histograms: their bytes are still checked as
 * the full decoder checks them, and a derived process's sums still
 * checked for overflow (on-CPU, run-queue time and count exactly; the
 * slots through their total: past 2³² − 1 the full decoder decides), so
 * that a payload is refused here exactly when store_bpfrows_get_v
 * refuses it. Older versions are decoded whole and their keys copied.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_bpfrows.h"
#include "store/store_bpfrows_int.h"
#include "store/store_codec.h"

/* The sums of the thread rows of a tgid that a derived process has, as
 * store_bpfrows4.c sums them; over when one overflows (refused there).
 * A slot's sum is not kept: slots, the sum of them all, bounds each. */
struct kgroup {
	int32_t tgid;
	bool threads, over;
	uint64_t oncpu_ns, rq_ns, rq_count, slots;
};

/* The decoder and its scratch (freed at the end, whatever the result). */
struct kdec {
	struct store_dec d;
	size_t max;
	uint32_t *ix; /* a histogram's rows, then their words (wcap each) */
	size_t wcap;
	uint8_t *der;	    /* a process row is derived */
	int32_t *g;	    /* a thread row's group, −1: none */
	struct kgroup *grp; /* by tgid */
	size_t ngrp;
	uint64_t *hsum; /* per thread row: rq_ns, slots summed, rq_count */
};

static void
kdec_release(struct kdec *k)
{
	free(k->ix);
	free(k->der);
	free(k->g);
	free(k->grp);
	free(k->hsum);
}

/* An N column of m rows (store_bpfrows_nums), its bytes checked the same
 * way, nothing kept. */
static int
skip_nums(struct store_dec *d, size_t m)
{
	const uint8_t *len = store_dec_bytes(d, m), *pl;
	size_t k, n0 = 0, total = 0;

	if (len == NULL)
		return -EBADMSG;
	for (k = 0; k < m; k++) {
		if (len[k] > BYTES_MAX)
			return -EBADMSG;
		n0 += len[k] != 0;
		total += len[k];
	}
	/* plane 0 comes first: a figure's top byte, never 0 */
	pl = store_dec_bytes(d, total);
	return pl == NULL || memchr(pl, 0, n0) != NULL ? -EBADMSG : 0;
}

/* A varint of at most max (store_dec_u_max, its rules), one of one or
 * two bytes read inline: most of a histogram's counts are. */
static inline uint64_t
dec_u(struct store_dec *d, uint64_t max)
{
	const uint8_t *p = d->p;
	uint64_t v;

	if (d->err || p == d->end ||
	    (p[0] >= 0x80 && (d->end - p < 2 || p[1] >= 0x80)))
		return store_dec_u_max(d, max);
	if (p[0] < 0x80) {
		v = p[0];
		d->p = p + 1;
	} else {
		v = (p[0] & 0x7f) | (uint64_t)p[1] << 7;
		d->p = p + 2;
	}
	if (v > max) {
		store_dec_fail(d);
		return 0;
	}
	return v;
}

/*
 * A histogram column set of m rows (store_bpfrows4.c's get_hist4) read
 * through, in its order and checked as it checks it; nothing kept but,
 * when hsum is not NULL (2m zeroed), row i's slots summed in hsum[i] and
 * its rq_count in hsum[m + i].
 */
static int
skip_hist(struct kdec *k, size_t m, uint64_t *hsum)
{
	const unsigned last = VITALS_BPF_RQ_SLOTS - 1;
	struct store_dec *d = &k->d;
	size_t i, x, nx = 0, keep;
	uint32_t *ix, v;
	unsigned j;
	uint8_t *w;
	uint64_t c;

	if (m == 0)
		return d->err ? -EBADMSG : 0;
	if (m > k->wcap) {
		free(k->ix);
		/* a row index and a word a row */
		if ((k->ix = malloc(m * (sizeof(*ix) + 1))) == NULL) {
			k->wcap = 0;
			return -ENOMEM;
		}
		k->wcap = m;
	}
	ix = k->ix;
	w = (uint8_t *)(ix + k->wcap);
	for (i = 0; i < m; i++) {
		w[i] = (uint8_t)dec_u(d, VITALS_BPF_RQ_SLOTS << 1 | 1);
		if (w[i] >> 1)
			ix[nx++] = (uint32_t)i;
	}
	for (i = 0; i < m; i++)
		if (!(w[i] & 1)) {
			c = dec_u(d, UINT64_MAX);
			if (hsum != NULL)
				hsum[m + i] = c;
		}
	/* slot j of the rows that have it (ix: those, in row order), the
	 * 24th of each row last; a row's last slot is never 0 */
	for (j = 0; j < last && nx && !d->err; j++, nx = keep)
		for (x = 0, keep = 0; x < nx; x++) {
			i = ix[x];
			v = (uint32_t)dec_u(d, UINT32_MAX);
			if (w[i] >> 1 > j + 1)
				ix[keep++] = (uint32_t)i;
			else if (v == 0)
				store_dec_fail(d);
			if (hsum != NULL)
				hsum[i] += v;
		}
	for (x = 0; x < nx && !d->err; x++) {
		i = ix[x];
		if ((v = (uint32_t)dec_u(d, UINT32_MAX)) == 0)
			store_dec_fail(d);
		if (hsum != NULL)
			hsum[i] += v;
	}
	for (i = 0; hsum != NULL && i < m; i++)
		if (w[i] & 1)
			hsum[m + i] = hsum[i];
	return d->err ? -EBADMSG : 0;
}

static int
cmp_grp(const void *a, const void *b)
{
	const struct kgroup *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* The group of tgid, −1 none. */
static int32_t
grp_find(const struct kdec *k, int32_t tgid)
{
	size_t lo = 0, hi = k->ngrp;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->grp[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->ngrp && k->grp[lo].tgid == tgid ? (int32_t)lo : -1;
}

/* A group for each tgid a derived process has; each thread row's group
 * (k->g) and its on-CPU time added to that group's. */
static int
groups(struct kdec *k, const struct store_bpfkeys *b)
{
	size_t i, n = 0;
	bool sorted = true;
	int32_t j;

	for (i = 0; i < b->nproc; i++)
		n += k->der[i];
	if (n == 0)
		return 0;
	if ((k->grp = calloc(n, sizeof(*k->grp))) == NULL ||
	    (b->nthread && (k->g = malloc(b->nthread * sizeof(*k->g))) == NULL))
		return -ENOMEM;
	for (i = 0, n = 0; i < b->nproc; i++)
		if (k->der[i]) {
			k->grp[n].tgid = b->proc[i].id;
			sorted = sorted &&
			    (n == 0 || k->grp[n - 1].tgid <= k->grp[n].tgid);
			n++;
		}
	if (!sorted)
		qsort(k->grp, n, sizeof(*k->grp), cmp_grp);
	/* each tgid once */
	for (i = 1, k->ngrp = 1; i < n; i++)
		if (k->grp[i].tgid != k->grp[k->ngrp - 1].tgid)
			k->grp[k->ngrp++].tgid = k->grp[i].tgid;
	for (i = 0; i < b->nthread; i++) {
		/* a process's thread rows come together, most often */
		j = i && b->thread[i].tgid == b->thread[i - 1].tgid ?
		    k->g[i - 1] :
		    grp_find(k, b->thread[i].tgid);
		k->g[i] = j;
		if (j < 0)
			continue;
		k->grp[j].threads = true;
		if (__builtin_add_overflow(k->grp[j].oncpu_ns,
			b->thread[i].oncpu_ns, &k->grp[j].oncpu_ns))
			k->grp[j].over = true;
	}
	return 0;
}

/*
 * The threads' run-queue columns (rq_ns, histograms) read through, their
 * rq_ns, rq_count and slots summed into their groups': 0, -EBADMSG,
 * -ENOMEM, or -ERANGE when a group's slots sum past 2³² − 1 (a slot's
 * sum may then have overflowed: the caller decodes the whole payload).
 */
static int
thread_rq(struct kdec *k, size_t n)
{
	struct kgroup *g;
	uint64_t *v;
	size_t i;
	int r;

	if (k->ngrp == 0 || n == 0)
		return skip_nums(&k->d, n) < 0 ? -EBADMSG :
						 skip_hist(k, n, NULL);
	/* rq_ns, then skip_hist's slot sums and counts */
	if ((k->hsum = v = calloc(3 * n, sizeof(*v))) == NULL)
		return -ENOMEM;
	if (store_bpfrows_nums(&k->d, &ROWS4(v, n, NULL), n, 0) < 0)
		return -EBADMSG;
	if ((r = skip_hist(k, n, v + n)) < 0)
		return r;
	for (i = 0; i < n; i++) {
		if (k->g[i] < 0)
			continue;
		g = &k->grp[k->g[i]];
		if (__builtin_add_overflow(g->rq_ns, v[i], &g->rq_ns) ||
		    __builtin_add_overflow(g->rq_count, v[2 * n + i],
			&g->rq_count))
			g->over = true;
		if (__builtin_add_overflow(g->slots, v[n + i], &g->slots))
			g->slots = UINT64_MAX;
	}
	for (i = 0; i < k->ngrp; i++)
		if (k->grp[i].slots > UINT32_MAX)
			return -ERANGE;
	return 0;
}

/* Version 4's keys, its other columns read through (store_bpfrows4.c's
 * get_v4 and get4, column for column): 0, -EBADMSG or -ENOMEM; b is the
 * caller's to release either way. */
static int
keys4(struct kdec *k, struct store_bpfkeys *b)
{
	struct store_dec *d = &k->d;
	struct store_bpfkey *p, *t;
	int64_t acc;
	uint64_t st, code;
	uint32_t uid;
	int32_t tg;
	size_t i, n, m;
	int r;

	/* the uid rows: nothing kept */
	n = store_bpfrows_count4(d, k->max, 6);
	for (i = 0; i < n; i++)
		(void)store_dec_u_max(d, UINT32_MAX);
	if (d->err || skip_nums(d, n) < 0 || skip_nums(d, n) < 0)
		return -EBADMSG;
	for (i = 0; i < n; i++)
		(void)store_dec_u(d);
	if (skip_nums(d, n) < 0 || (r = skip_hist(k, n, NULL)) == -EBADMSG)
		return -EBADMSG;
	if (r < 0)
		return r;

	/* the process rows: keys, flags, the on-CPU time of those not
	 * derived */
	n = store_bpfrows_count4(d, k->max, 3);
	if (d->err)
		return -EBADMSG;
	if (n &&
	    ((b->proc = calloc(n, sizeof(*b->proc))) == NULL ||
		(k->der = calloc(n, 1)) == NULL))
		return -ENOMEM;
	b->nproc = n;
	p = b->proc;
	for (i = 0, acc = 0; i < n; i++) {
		if (!store_bpfrows_step32(d, &acc, &p[i].id))
			return -EBADMSG;
		p[i].tgid = p[i].id;
	}
	for (i = 0, st = 0; i < n; i++)
		p[i].starttime = st += (uint64_t)store_dec_s(d);
	for (i = 0, m = 0; i < n; i++) {
		code = store_dec_u_max(d, WBPF_PROC_EXITED << 1 | P4_DERIVED);
		m += !(k->der[i] = code & P4_DERIVED);
	}
	if (d->err ||
	    store_bpfrows_nums(d, &ROWS4(p, n, k->der), m,
		offsetof(struct store_bpfkey, oncpu_ns)) < 0 ||
	    skip_nums(d, m) < 0 || (r = skip_hist(k, m, NULL)) == -EBADMSG)
		return -EBADMSG;
	if (r < 0)
		return r;

	/* the thread rows: keys, tgids, on-CPU time; the run-queue columns
	 * summed for the derived processes' groups alone */
	n = store_bpfrows_count4(d, k->max, 7);
	if (d->err)
		return -EBADMSG;
	if (n && (b->thread = calloc(n, sizeof(*b->thread))) == NULL)
		return -ENOMEM;
	b->nthread = n;
	t = b->thread;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_step32(d, &acc, &t[i].id))
			return -EBADMSG;
	for (i = 0, tg = 0; i < n; tg = t[i++].tgid)
		if (!store_bpfrows_tgid4(store_dec_u(d), t[i].id, tg,
			&t[i].tgid))
			return -EBADMSG;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_uid_step(d, &acc, &uid))
			return -EBADMSG;
	for (i = 0, st = 0; i < n; i++)
		t[i].starttime = st += (uint64_t)store_dec_s(d);
	if (store_bpfrows_nums(d, &ROWS4(t, n, NULL), n,
		offsetof(struct store_bpfkey, oncpu_ns)) < 0)
		return -EBADMSG;
	if ((r = groups(k, b)) < 0 || (r = thread_rq(k, n)) < 0)
		return r;
	if (store_dec_end(d) < 0)
		return -EBADMSG;

	/* the derived processes' on-CPU time: their threads' sum */
	for (i = 0; i < k->ngrp; i++)
		if (!k->grp[i].threads || k->grp[i].over)
			return -EBADMSG;
	for (i = 0; i < b->nproc; i++)
		if (k->der[i])
			p[i].oncpu_ns = k->grp[grp_find(k, p[i].id)].oncpu_ns;
	return 0;
}

/* Versions 1 to 3 (and any other, refused there): decoded whole, keys
 * copied. */
static int
keys_full(const void *buf, size_t len, unsigned version, size_t max,
    struct store_bpfkeys *ret)
{
	struct store_bpfrows b;
	struct store_bpfkeys k = { 0 };
	size_t i;
	int r;

	if ((r = store_bpfrows_get_v(buf, len, version, max, &b)) < 0)
		return r;
	if ((b.nproc && (k.proc = calloc(b.nproc, sizeof(*k.proc))) == NULL) ||
	    (b.nthread &&
		(k.thread = calloc(b.nthread, sizeof(*k.thread))) == NULL)) {
		store_bpfkeys_release(&k);
		store_bpfrows_release(&b);
		return -ENOMEM;
	}
	for (i = 0; i < b.nproc; i++)
		k.proc[i] = (struct store_bpfkey){ .id = b.proc[i].tgid,
			.tgid = b.proc[i].tgid,
			.starttime = b.proc[i].starttime,
			.oncpu_ns = b.proc[i].oncpu_ns };
	for (i = 0; i < b.nthread; i++)
		k.thread[i] = (struct store_bpfkey){ .id = b.thread[i].tid,
			.tgid = b.thread[i].tgid,
			.starttime = b.thread[i].starttime,
			.oncpu_ns = b.thread[i].oncpu_ns };
	k.nproc = b.nproc;
	k.nthread = b.nthread;
	store_bpfrows_release(&b);
	*ret = k;
	return 0;
}

int
store_bpfrows_keys(const void *buf, size_t len, unsigned version, size_t max,
    struct store_bpfkeys *ret)
{
	struct store_bpfkeys b = { 0 };
	struct kdec k = { .max = max };
	int r;

	if (version != STORE_BPFROWS_VERSION)
		return keys_full(buf, len, version, max, ret);
	store_dec_init(&k.d, buf, len);
	r = keys4(&k, &b);
	kdec_release(&k);
	if (r == -ERANGE) {
		/* a slot's sum to check: the full decoder's */
		store_bpfkeys_release(&b);
		return keys_full(buf, len, version, max, ret);
	}
	if (r < 0) {
		store_bpfkeys_release(&b);
		return r;
	}
	*ret = b;
	return 0;
}

void
store_bpfkeys_release(struct store_bpfkeys *k)
{
	if (k == NULL)
		return;
	free(k->proc);
	free(k->thread);
	memset(k, 0, sizeof(*k));
}
