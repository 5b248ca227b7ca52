/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DMA-BUF part of a window in the store: one blob per window that has
 * the part (a pass ran in it, or a roll-up holds one) in window_dmabuf
 * (doc/storage.md, "DMA-BUF"), framed and compressed as the other parts'
 * blobs are (store_codec.c). A blob that does not decode is counted
 * (blob_errors) and the window reads without the part. store_dmabuf_range()
 * folds the parts of a range into one, for `vitals dmabuf --since`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dmabuf/dmabuf.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store_int.h"

#define DMABUF_PART 20 /* the frame's part number */
#define DMABUF_PART_VERSION 1
#define ROW_MIN 4 /* bytes a row takes at least */

static const char *const ds_sql[] = STORE_BLOBPART_SQL("window_dmabuf",
    "dmabuf");

static int dmabuf_dec(const void *payload, size_t len, void **ret);

static const struct store_blobpart bp = {
	.id = WPART_DMABUF,
	.fold = STORE_FOLD_DMABUF,
	.part = DMABUF_PART,
	.version = DMABUF_PART_VERSION,
	.sql = ds_sql,
	.dec = dmabuf_dec,
	.what = "read dmabuf",
	.range_what = "read dmabuf range",
};

/* The payload, field by field as doc/storage.md lists it. */
void
store_dmabuf_encode(struct store_enc *e, const struct window_dmabuf *p)
{
	size_t i, k;

	store_enc_u(e, p->passes);
	store_enc_s(e, p->pass_wall_ns);
	store_enc_u(e, p->total_bytes);
	store_enc_u(e, p->shared_bytes);
	store_enc_u(e, p->buffers);
	store_enc_u(e, p->shared_buffers);
	store_enc_u(e, p->total_bytes_max);
	store_enc_u(e, p->procs_scanned);
	store_enc_u(e, p->procs_skipped);
	store_enc_u(e, p->procs_unreadable);
	store_enc_u(e, p->procs_gone);
	store_enc_u(e, p->fds_read);
	store_enc_u(e, p->fds_dmabuf);
	store_enc_u(e, p->fdinfo_invalid);
	store_enc_u(e, p->sysfs_found);
	store_enc_u(e, p->size_mismatch);
	store_enc_u(e, p->procs_cut);
	store_enc_u(e, p->exps_cut);
	store_enc_u(e, p->shared_cut);
	store_enc_u(e, p->pass_ns_sum);
	store_enc_u(e, p->pass_ns_max);
	store_enc_u(e, p->nprocs);
	for (i = 0; i < p->nprocs; i++) {
		const struct dmabuf_proc *r = &p->procs[i];

		store_enc_s(e, r->pid);
		store_enc_str(e, r->name);
		store_enc_u(e, r->passes);
		store_enc_u(e, r->fds);
		store_enc_u(e, r->buffers);
		store_enc_u(e, r->bytes);
		store_enc_u(e, r->bytes_max);
		store_enc_u(e, r->shared_bytes);
		store_enc_u(e, r->pss_bytes);
		store_enc_u(e, r->procs);
	}
	store_enc_u(e, p->nexps);
	for (i = 0; i < p->nexps; i++) {
		const struct dmabuf_exp *r = &p->exps[i];

		store_enc_str(e, r->name);
		store_enc_u(e, r->other);
		store_enc_u(e, r->passes);
		store_enc_u(e, r->buffers);
		store_enc_u(e, r->bytes);
		store_enc_u(e, r->bytes_max);
	}
	store_enc_u(e, p->nshared);
	for (i = 0; i < p->nshared; i++) {
		const struct dmabuf_shared *r = &p->shared[i];

		store_enc_u(e, r->ino);
		store_enc_u(e, r->size);
		store_enc_str(e, r->exp);
		store_enc_u(e, r->sharers);
		store_enc_u(e, r->npids);
		for (k = 0; k < r->npids; k++)
			store_enc_s(e, r->pids[k]);
	}
	/* since the pass moved off the loop; older blobs end before it */
	store_enc_u(e, p->passes_overlapped);
	/* since the kernel's list (iter/dmabuf); older blobs end before */
	store_enc_u(e, p->kernel_passes);
	store_enc_u(e, p->passes_no_buffer);
	store_enc_u(e, p->iter_errors);
	store_enc_u(e, p->kernel_buffers);
	store_enc_u(e, p->kernel_bytes);
	store_enc_u(e, p->iter_why);
}

#define U32(d) ((uint32_t)store_dec_u_max((d), UINT32_MAX))

/* A count of rows the payload can hold, at most max; 0 on error. */
static size_t
dec_count(struct store_dec *d, size_t len, size_t max)
{
	uint64_t n = store_dec_u_max(d, max);

	if (n > len / ROW_MIN) {
		store_dec_fail(d);
		return 0;
	}
	return d->err ? 0 : (size_t)n;
}

static int
dec_rows(struct store_dec *d, size_t len, struct window_dmabuf *p)
{
	size_t i, k;

	p->nprocs = dec_count(d, len, DMABUF_PROCS_MAX + 1);
	if (p->nprocs &&
	    (p->procs = calloc(p->nprocs, sizeof(*p->procs))) == NULL)
		return -ENOMEM;
	for (i = 0; i < p->nprocs; i++) {
		struct dmabuf_proc *r = &p->procs[i];

		r->pid = (int32_t)store_dec_s(d);
		store_dec_str(d, r->name, sizeof(r->name));
		r->passes = U32(d);
		r->fds = U32(d);
		r->buffers = U32(d);
		r->bytes = store_dec_u(d);
		r->bytes_max = store_dec_u(d);
		r->shared_bytes = store_dec_u(d);
		r->pss_bytes = store_dec_u(d);
		r->procs = U32(d);
	}
	p->nexps = dec_count(d, len, DMABUF_PROCS_MAX);
	if (p->nexps && (p->exps = calloc(p->nexps, sizeof(*p->exps))) == NULL)
		return -ENOMEM;
	for (i = 0; i < p->nexps; i++) {
		struct dmabuf_exp *r = &p->exps[i];

		store_dec_str(d, r->name, sizeof(r->name));
		r->other = store_dec_u_max(d, 1) == 1;
		r->passes = U32(d);
		r->buffers = U32(d);
		r->bytes = store_dec_u(d);
		r->bytes_max = store_dec_u(d);
	}
	p->nshared = dec_count(d, len, DMABUF_SHARED_MAX);
	if (p->nshared &&
	    (p->shared = calloc(p->nshared, sizeof(*p->shared))) == NULL)
		return -ENOMEM;
	for (i = 0; i < p->nshared; i++) {
		struct dmabuf_shared *r = &p->shared[i];

		r->ino = store_dec_u(d);
		r->size = store_dec_u(d);
		store_dec_str(d, r->exp, sizeof(r->exp));
		r->sharers = U32(d);
		r->npids = (uint32_t)store_dec_u_max(d, DMABUF_SHARERS_MAX);
		for (k = 0; k < r->npids; k++)
			r->pids[k] = (int32_t)store_dec_s(d);
	}
	return 0;
}

/* payload into a new part; -EBADMSG for anything malformed. */
int
store_dmabuf_decode(const void *payload, size_t len, struct window_dmabuf **ret)
{
	struct window_dmabuf *p;
	struct store_dec d;
	int r;

	if ((p = window_dmabuf_new()) == NULL)
		return -ENOMEM;
	store_dec_init(&d, payload, len);
	p->passes = U32(&d);
	p->pass_wall_ns = store_dec_s(&d);
	p->total_bytes = store_dec_u(&d);
	p->shared_bytes = store_dec_u(&d);
	p->buffers = U32(&d);
	p->shared_buffers = U32(&d);
	p->total_bytes_max = store_dec_u(&d);
	p->procs_scanned = U32(&d);
	p->procs_skipped = U32(&d);
	p->procs_unreadable = U32(&d);
	p->procs_gone = U32(&d);
	p->fds_read = store_dec_u(&d);
	p->fds_dmabuf = U32(&d);
	p->fdinfo_invalid = U32(&d);
	p->sysfs_found = U32(&d);
	p->size_mismatch = U32(&d);
	p->procs_cut = U32(&d);
	p->exps_cut = U32(&d);
	p->shared_cut = U32(&d);
	p->pass_ns_sum = store_dec_u(&d);
	p->pass_ns_max = store_dec_u(&d);
	if ((r = dec_rows(&d, len, p)) < 0) {
		window_dmabuf_free(p);
		return r;
	}
	if (d.p < d.end)
		p->passes_overlapped = U32(&d);
	if (d.p < d.end) {
		p->kernel_passes = U32(&d);
		p->passes_no_buffer = U32(&d);
		p->iter_errors = U32(&d);
		p->kernel_buffers = U32(&d);
		p->kernel_bytes = store_dec_u(&d);
		p->iter_why = (uint32_t)store_dec_u_max(&d,
		    DMABUF_ITER_WHY__MAX - 1);
	}
	if (store_dec_end(&d) < 0) {
		window_dmabuf_free(p);
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static int
dmabuf_dec(const void *payload, size_t len, void **ret)
{
	struct window_dmabuf *p = NULL;
	int r = store_dmabuf_decode(payload, len, &p);

	*ret = p;
	return r;
}

static int
store_dmabuf_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_dmabuf *p = window_dmabuf(w);
	struct store_enc pl = { 0 };
	int rc;

	if (p == NULL)
		return SQLITE_OK;
	store_dmabuf_encode(&pl, p);
	rc = store_blobpart_put(s, &bp, id, &pl);
	store_enc_release(&pl);
	return rc;
}

static int
store_dmabuf_load(struct store *s, int64_t id, struct window *w)
{
	return store_blobpart_load(s, &bp, id, w);
}

/*
 * The parts of the windows that ended in (from, to], oldest first, folded
 * into one (window_dmabuf_merge: the last pass's figures, maxima over all,
 * counters summed); NULL when none has one. ret_windows: parts folded.
 */
int
store_dmabuf_range(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct window_dmabuf **ret, uint32_t *ret_windows)
{
	void *acc = NULL;
	int r = store_blobpart_range(s, &bp, from_wall_ns, to_wall_ns, &acc,
	    ret_windows);

	if (r == 0)
		*ret = acc;
	return r;
}

const struct store_part store_dmabuf_part = {
	.sql = ds_sql,
	.nsql = sizeof(ds_sql) / sizeof(ds_sql[0]),
	.put = store_dmabuf_put,
	.load = store_dmabuf_load,
};
