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
 *
 * Version 2 writes the same figures column after column (all of one
 * field, then the next), so that zstd finds the runs of small steps and
 * zeros, and adds a process's flags and the threads:
 *
 *   u  uid rows;     columns: uid + 1, oncpu_ns, exited_ns, exited_tasks
 *   u  process rows; columns: s tgid step, s starttime step, u flags,
 *        u oncpu_ns, u rq_ns, u histogram word (as above), u rq_count of
 *        the rows whose word says it is not the sum, then each row's
 *        slots in row order
 *   u  thread rows;  columns: s tid step, s tid − tgid, s uid step,
 *        s starttime step, u oncpu_ns, u rq_ns, u rq_count
 *
 * Version 3 is version 2 followed by the run-queue figures of uids and
 * the histograms of threads, in the same row orders (no counts again):
 *
 *   uids:    columns u rq_ns, u histogram word (as a process's), u rq_count
 *            of the rows whose word says it is not the sum, the slots
 *   threads: columns u slots (the histogram's length), the slots; a
 *            thread's rq_count is version 2's column (a roll-up of windows
 *            stored before version 3 has counts without slots)
 *
 * Version 4 (written now) holds version 3's figures in fewer bytes: a
 * process whose figures are the sum of the thread rows of its tgid is
 * flagged and not written (derived when read), large figures are a length
 * column and byte planes, histograms go slot after slot, a thread's
 * rq_count is left out when its histogram sums to it and its tgid is a
 * small code (store_bpfrows4.c; doc/storage.md).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_bpfrows.h"
#include "store/store_bpfrows_int.h"
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
	free(b->thread);
	memset(b, 0, sizeof(*b));
}

/* ----------------------------------------------------------- version 2 */

/* The length of a histogram, trailing empty slots left out, and its sum. */
unsigned
store_bpfrows_slots(const uint32_t h[VITALS_BPF_RQ_SLOTS], uint64_t *ret_sum)
{
	unsigned k, slots;
	uint64_t sum = 0;

	for (slots = VITALS_BPF_RQ_SLOTS; slots > 0 && h[slots - 1] == 0;
	     slots--)
		;
	for (k = 0; k < slots; k++)
		sum += h[k];
	*ret_sum = sum;
	return slots;
}

/*
 * The run-queue columns of n rows of one kind (row i at base + i * stride,
 * its histogram at hoff, its rq_count at coff): processes in version 2,
 * uids in version 3, written and read by one pair of functions.
 */
struct hcols {
	char *base;
	size_t n, stride, hoff, coff;
};

#define HCOLS(arr, cnt, type)                                \
	((struct hcols){ (char *)(arr), (cnt), sizeof(type), \
	    offsetof(type, rq_hist), offsetof(type, rq_count) })

static uint32_t *
hc_hist(const struct hcols *c, size_t i)
{
	return (uint32_t *)(c->base + i * c->stride + c->hoff);
}

static uint64_t *
hc_count(const struct hcols *c, size_t i)
{
	return (uint64_t *)(c->base + i * c->stride + c->coff);
}

/* The histogram words (slots << 1 | 1 when rq_count is their sum), the
 * counts that are not the sum, then every row's slots. */
static void
put_hcols(struct store_enc *e, const struct hcols *c)
{
	unsigned k, slots;
	uint64_t sum;
	size_t i;

	for (i = 0; i < c->n; i++) {
		slots = store_bpfrows_slots(hc_hist(c, i), &sum);
		store_enc_u(e, slots << 1 | (sum == *hc_count(c, i)));
	}
	for (i = 0; i < c->n; i++) {
		store_bpfrows_slots(hc_hist(c, i), &sum);
		if (sum != *hc_count(c, i))
			store_enc_u(e, *hc_count(c, i));
	}
	for (i = 0; i < c->n; i++) {
		slots = store_bpfrows_slots(hc_hist(c, i), &sum);
		for (k = 0; k < slots; k++)
			store_enc_u(e, hc_hist(c, i)[k]);
	}
}

/* slots histogram counts into h; false when the last is empty (the
 * encoder leaves trailing empty slots out) or a byte is bad. */
static bool
get_slots(struct store_dec *d, unsigned slots, uint32_t h[VITALS_BPF_RQ_SLOTS],
    uint64_t *ret_sum)
{
	uint64_t sum = 0;
	unsigned k;

	for (k = 0; k < slots; k++)
		sum += h[k] = (uint32_t)store_dec_u_max(d, UINT32_MAX);
	*ret_sum = sum;
	return !d->err && !(slots && h[slots - 1] == 0);
}

/* What put_hcols wrote, into zeroed rows: 0 or -EBADMSG. */
static int
get_hcols(struct store_dec *d, const struct hcols *c)
{
	uint64_t sum;
	size_t i;

	/* each word parked in its row's rq_hist[0] until its slots come */
	for (i = 0; i < c->n; i++)
		hc_hist(c, i)[0] = (uint32_t)store_dec_u_max(d,
		    VITALS_BPF_RQ_SLOTS << 1 | 1);
	for (i = 0; i < c->n; i++)
		if (!(hc_hist(c, i)[0] & 1))
			*hc_count(c, i) = store_dec_u(d);
	for (i = 0; i < c->n && !d->err; i++) {
		unsigned word = hc_hist(c, i)[0];

		hc_hist(c, i)[0] = 0;
		if (!get_slots(d, word >> 1, hc_hist(c, i), &sum))
			return -EBADMSG;
		if (word & 1)
			*hc_count(c, i) = sum;
	}
	return d->err ? -EBADMSG : 0;
}

int
store_bpfrows_put2(struct store_enc *e, const struct store_bpfrows *b)
{
	const struct window_bpf_uid *u = b->uid;
	const struct window_bpf_proc *p = b->proc;
	const struct window_bpf_thread *t = b->thread;
	uint64_t prev;
	int64_t prevs;
	size_t i;

	store_enc_u(e, b->nuid);
	for (i = 0; i < b->nuid; i++)
		store_enc_u(e, (uint32_t)(u[i].uid + 1));
	for (i = 0; i < b->nuid; i++)
		store_enc_u(e, u[i].oncpu_ns);
	for (i = 0; i < b->nuid; i++)
		store_enc_u(e, u[i].exited_ns);
	for (i = 0; i < b->nuid; i++)
		store_enc_u(e, u[i].exited_tasks);

	store_enc_u(e, b->nproc);
	for (i = 0, prevs = 0; i < b->nproc; prevs = p[i++].tgid)
		store_enc_s(e, p[i].tgid - prevs);
	for (i = 0, prev = 0; i < b->nproc; prev = p[i++].starttime)
		store_enc_s(e, (int64_t)(p[i].starttime - prev));
	for (i = 0; i < b->nproc; i++)
		store_enc_u(e, p[i].flags);
	for (i = 0; i < b->nproc; i++)
		store_enc_u(e, p[i].oncpu_ns);
	for (i = 0; i < b->nproc; i++)
		store_enc_u(e, p[i].rq_ns);
	put_hcols(e, &HCOLS(p, b->nproc, struct window_bpf_proc));

	store_enc_u(e, b->nthread);
	for (i = 0, prevs = 0; i < b->nthread; prevs = t[i++].tid)
		store_enc_s(e, t[i].tid - prevs);
	for (i = 0; i < b->nthread; i++)
		store_enc_s(e, (int64_t)t[i].tid - t[i].tgid);
	for (i = 0, prevs = 0; i < b->nthread; prevs = t[i++].uid)
		store_enc_s(e, (int64_t)t[i].uid - prevs);
	for (i = 0, prev = 0; i < b->nthread; prev = t[i++].starttime)
		store_enc_s(e, (int64_t)(t[i].starttime - prev));
	for (i = 0; i < b->nthread; i++)
		store_enc_u(e, t[i].oncpu_ns);
	for (i = 0; i < b->nthread; i++)
		store_enc_u(e, t[i].rq_ns);
	for (i = 0; i < b->nthread; i++)
		store_enc_u(e, t[i].rq_count);
	return e->err;
}

/* ----------------------------------------------------------- version 3 */

int
store_bpfrows_put3(struct store_enc *e, const struct store_bpfrows *b)
{
	const struct window_bpf_uid *u = b->uid;
	const struct window_bpf_thread *t = b->thread;
	unsigned k, slots;
	uint64_t sum;
	size_t i;
	int r;

	if ((r = store_bpfrows_put2(e, b)) < 0)
		return r;
	for (i = 0; i < b->nuid; i++)
		store_enc_u(e, u[i].rq_ns);
	put_hcols(e, &HCOLS(u, b->nuid, struct window_bpf_uid));
	for (i = 0; i < b->nthread; i++)
		store_enc_u(e, store_bpfrows_slots(t[i].rq_hist, &sum));
	for (i = 0; i < b->nthread; i++) {
		slots = store_bpfrows_slots(t[i].rq_hist, &sum);
		for (k = 0; k < slots; k++)
			store_enc_u(e, t[i].rq_hist[k]);
	}
	return e->err;
}

/* Version 3's tail, after store_bpfrows_get2 read b's rows. */
int
store_bpfrows_get3_tail(struct store_dec *d, struct store_bpfrows *b)
{
	size_t i;
	uint64_t sum;

	for (i = 0; i < b->nuid; i++)
		b->uid[i].rq_ns = store_dec_u(d);
	if (get_hcols(d, &HCOLS(b->uid, b->nuid, struct window_bpf_uid)) < 0)
		return -EBADMSG;
	/* the thread's length parked in rq_hist[0] too */
	for (i = 0; i < b->nthread; i++)
		b->thread[i].rq_hist[0] = (uint32_t)store_dec_u_max(d,
		    VITALS_BPF_RQ_SLOTS);
	for (i = 0; i < b->nthread && !d->err; i++) {
		struct window_bpf_thread *r = &b->thread[i];
		unsigned slots = r->rq_hist[0];

		r->rq_hist[0] = 0;
		if (!get_slots(d, slots, r->rq_hist, &sum))
			return -EBADMSG;
	}
	return d->err ? -EBADMSG : 0;
}

/* An int32 from a running sum of steps; false when it leaves the range. */
bool
store_bpfrows_step32(struct store_dec *d, int64_t *acc, int32_t *ret)
{
	int64_t step = store_dec_s(d);

	if (step < -((int64_t)1 << 32) || step > ((int64_t)1 << 32) ||
	    *acc + step < INT32_MIN || *acc + step > INT32_MAX)
		return false;
	*acc += step;
	*ret = (int32_t)*acc;
	return true;
}

/* A thread's tgid from its tid and tid − tgid; false when either leaves
 * the int32 range (checked before any arithmetic that could overflow). */
bool
store_bpfrows_tgid(int32_t tid, int64_t off, int32_t *ret)
{
	int64_t tgid;

	if (off < -((int64_t)1 << 32) || off > ((int64_t)1 << 32))
		return false;
	tgid = (int64_t)tid - off;
	if (tgid < INT32_MIN || tgid > INT32_MAX)
		return false;
	*ret = (int32_t)tgid;
	return true;
}

/* A uid from a running sum of steps; false when it leaves 32 bits. */
bool
store_bpfrows_uid_step(struct store_dec *d, int64_t *acc, uint32_t *ret)
{
	int64_t step = store_dec_s(d);

	if (step < -((int64_t)1 << 32) || step > ((int64_t)1 << 32) ||
	    *acc + step < 0 || *acc + step > UINT32_MAX)
		return false;
	*acc += step;
	*ret = (uint32_t)*acc;
	return true;
}

int
store_bpfrows_get2(struct store_dec *d, size_t len, size_t max,
    struct store_bpfrows *b)
{
	int64_t acc;
	uint64_t st;
	size_t i, n;

	/* each row takes at least one byte per column */
	n = (size_t)store_dec_u_max(d, max < len / 4 ? max : len / 4);
	if (d->err)
		return -EBADMSG;
	if (n && (b->uid = calloc(n, sizeof(*b->uid))) == NULL)
		return -ENOMEM;
	b->nuid = n;
	for (i = 0; i < n; i++)
		b->uid[i].uid = (uint32_t)store_dec_u_max(d, UINT32_MAX) - 1;
	for (i = 0; i < n; i++)
		b->uid[i].oncpu_ns = store_dec_u(d);
	for (i = 0; i < n; i++)
		b->uid[i].exited_ns = store_dec_u(d);
	for (i = 0; i < n; i++)
		b->uid[i].exited_tasks = store_dec_u(d);

	n = (size_t)store_dec_u_max(d, max < len / 6 ? max : len / 6);
	if (d->err)
		return -EBADMSG;
	if (n && (b->proc = calloc(n, sizeof(*b->proc))) == NULL)
		return -ENOMEM;
	b->nproc = n;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_step32(d, &acc, &b->proc[i].tgid))
			return -EBADMSG;
	for (i = 0, st = 0; i < n; i++)
		b->proc[i].starttime = st += (uint64_t)store_dec_s(d);
	for (i = 0; i < n; i++)
		b->proc[i].flags = (uint32_t)store_dec_u_max(d,
		    WBPF_PROC_EXITED);
	for (i = 0; i < n; i++)
		b->proc[i].oncpu_ns = store_dec_u(d);
	for (i = 0; i < n; i++)
		b->proc[i].rq_ns = store_dec_u(d);
	if (get_hcols(d, &HCOLS(b->proc, n, struct window_bpf_proc)) < 0)
		return -EBADMSG;

	n = (size_t)store_dec_u_max(d, max < len / 7 ? max : len / 7);
	if (d->err)
		return -EBADMSG;
	if (n && (b->thread = calloc(n, sizeof(*b->thread))) == NULL)
		return -ENOMEM;
	b->nthread = n;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_step32(d, &acc, &b->thread[i].tid))
			return -EBADMSG;
	for (i = 0; i < n; i++)
		if (!store_bpfrows_tgid(b->thread[i].tid, store_dec_s(d),
			&b->thread[i].tgid))
			return -EBADMSG;
	for (i = 0, acc = 0; i < n; i++)
		if (!store_bpfrows_uid_step(d, &acc, &b->thread[i].uid))
			return -EBADMSG;
	for (i = 0, st = 0; i < n; i++)
		b->thread[i].starttime = st += (uint64_t)store_dec_s(d);
	for (i = 0; i < n; i++)
		b->thread[i].oncpu_ns = store_dec_u(d);
	for (i = 0; i < n; i++)
		b->thread[i].rq_ns = store_dec_u(d);
	for (i = 0; i < n; i++)
		b->thread[i].rq_count = store_dec_u(d);
	return d->err ? -EBADMSG : 0;
}
