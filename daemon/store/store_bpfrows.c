/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's BPF scheduler rows as one payload (doc/storage.md, "Blobs"):
 *
 *   u  uid rows; per row:
 *        u  uid + 1 (mod 2^32: the "other" row, uid UINT32_MAX, is 0)
 *        u  oncpu_ns, exited_ns, exited_tasks
 *   u  process rows; per row:
 *        s  tgid − previous tgid (before the first: 0)
 *        s  starttime − previous starttime (mod 2^64; before the first: 0)
 *        u  oncpu_ns, rq_ns
 *        u  slots << 1 | 1 when rq_count is the histogram's sum: slots is
 *           the histogram's length, trailing empty slots left out
 *           (≤ VITALS_BPF_RQ_SLOTS)
 *        u  rq_count, only when it is not the sum
 *        u  each slot's count
 *
 * Rows keep their order; sorted by tgid (as a table hands them back) the
 * tgid and starttime steps take a byte or two.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_bpfrows.h"
#include "store/store_codec.h"

int
store_bpfrows_put(struct store_enc *e, const struct window_bpf_uid *u,
    size_t nu, const struct window_bpf_proc *p, size_t np)
{
	int64_t tgid = 0;
	uint64_t st = 0, sum;
	unsigned k, slots;
	size_t i;

	store_enc_u(e, nu);
	for (i = 0; i < nu; i++) {
		store_enc_u(e, (uint32_t)(u[i].uid + 1));
		store_enc_u(e, u[i].oncpu_ns);
		store_enc_u(e, u[i].exited_ns);
		store_enc_u(e, u[i].exited_tasks);
	}
	store_enc_u(e, np);
	for (i = 0; i < np; i++) {
		store_enc_s(e, p[i].tgid - tgid);
		tgid = p[i].tgid;
		store_enc_s(e, (int64_t)(p[i].starttime - st));
		st = p[i].starttime;
		store_enc_u(e, p[i].oncpu_ns);
		store_enc_u(e, p[i].rq_ns);
		for (slots = VITALS_BPF_RQ_SLOTS;
		     slots > 0 && p[i].rq_hist[slots - 1] == 0; slots--)
			;
		for (k = 0, sum = 0; k < slots; k++)
			sum += p[i].rq_hist[k];
		store_enc_u(e, slots << 1 | (sum == p[i].rq_count));
		if (sum != p[i].rq_count)
			store_enc_u(e, p[i].rq_count);
		for (k = 0; k < slots; k++)
			store_enc_u(e, p[i].rq_hist[k]);
	}
	return e->err;
}

static bool
proc_get(struct store_dec *d, int64_t *tgid, uint64_t *st,
    struct window_bpf_proc *r)
{
	int64_t step = store_dec_s(d);
	unsigned k, slots, word;
	uint64_t sum;

	/* the difference of two int32: anything wider is a lie */
	if (step < -((int64_t)1 << 32) || step > ((int64_t)1 << 32) ||
	    *tgid + step < INT32_MIN || *tgid + step > INT32_MAX)
		return false;
	*tgid += step;
	r->tgid = (int32_t)*tgid;
	*st += (uint64_t)store_dec_s(d);
	r->starttime = *st;
	r->oncpu_ns = store_dec_u(d);
	r->rq_ns = store_dec_u(d);
	word = (unsigned)store_dec_u_max(d, VITALS_BPF_RQ_SLOTS << 1 | 1);
	slots = word >> 1;
	if (!(word & 1))
		r->rq_count = store_dec_u(d);
	for (k = 0, sum = 0; k < slots; k++)
		sum += r->rq_hist[k] = (uint32_t)store_dec_u_max(d, UINT32_MAX);
	if (word & 1)
		r->rq_count = sum;
	/* the encoder leaves trailing empty slots out */
	if (slots && r->rq_hist[slots - 1] == 0)
		return false;
	return !d->err;
}

int
store_bpfrows_get(const void *buf, size_t len, size_t max,
    struct store_bpfrows *ret)
{
	struct store_dec d;
	struct store_bpfrows b = { 0 };
	int64_t tgid = 0;
	uint64_t st = 0;
	size_t i, n;

	store_dec_init(&d, buf, len);
	/* a uid row takes at least 4 bytes, a process row 5 (its rq_count
	 * the histogram's sum) */
	n = (size_t)store_dec_u_max(&d, max < len / 4 ? max : len / 4);
	if (d.err)
		return -EBADMSG;
	if (n && (b.uid = calloc(n, sizeof(*b.uid))) == NULL)
		return -ENOMEM;
	b.nuid = n;
	for (i = 0; i < n; i++) {
		b.uid[i].uid = (uint32_t)store_dec_u_max(&d, UINT32_MAX) - 1;
		b.uid[i].oncpu_ns = store_dec_u(&d);
		b.uid[i].exited_ns = store_dec_u(&d);
		b.uid[i].exited_tasks = store_dec_u(&d);
	}
	n = (size_t)store_dec_u_max(&d, max < len / 5 ? max : len / 5);
	if (d.err)
		goto bad;
	if (n && (b.proc = calloc(n, sizeof(*b.proc))) == NULL) {
		store_bpfrows_release(&b);
		return -ENOMEM;
	}
	b.nproc = n;
	for (i = 0; i < n; i++)
		if (!proc_get(&d, &tgid, &st, &b.proc[i]))
			goto bad;
	if (store_dec_end(&d) < 0)
		goto bad;
	*ret = b;
	return 0;
bad:
	store_bpfrows_release(&b);
	return -EBADMSG;
}

void
store_bpfrows_release(struct store_bpfrows *b)
{
	free(b->uid);
	free(b->proc);
	memset(b, 0, sizeof(*b));
}
