/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU frequency part of a window in the store: one blob per window
 * whose part has at least one device, in window_gpufreq (doc/storage.md,
 * "GPU frequency"), framed and compressed as the other parts' blobs are
 * (store_codec.c). A window with no GPU device writes no row. A blob that
 * does not decode is counted (blob_errors) and the window reads without
 * the part. store_gpufreq_range() folds the parts of a range into one,
 * for `vitals gpu --since`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpufreq/gpufreq.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store_int.h"

#define GPUFREQ_PART 22 /* the frame's part number */
#define GPUFREQ_PART_VERSION 1
#define DEV_MIN 16 /* bytes a device takes at least */

static const char *const gs_sql[] = STORE_BLOBPART_SQL("window_gpufreq",
    "gpufreq");

static int gpufreq_dec(const void *payload, size_t len, void **ret);

static const struct store_blobpart bp = {
	.id = WPART_GPUFREQ,
	.fold = STORE_FOLD_GPUFREQ,
	.part = GPUFREQ_PART,
	.version = GPUFREQ_PART_VERSION,
	.sql = gs_sql,
	.dec = gpufreq_dec,
	.what = "read gpufreq",
	.range_what = "read gpufreq range",
};

/* The payload, field by field as doc/storage.md lists it. */
void
store_gpufreq_encode(struct store_enc *e, const struct window_gpufreq *p)
{
	store_enc_u(e, p->found);
	store_enc_u(e, p->skipped);
	store_enc_u(e, p->windows);
	store_enc_u(e, p->reads);
	store_enc_u(e, p->read_ns);
	store_enc_u(e, p->read_ns_max);
	store_enc_u(e, p->errors);
	store_enc_u(e, p->ndev);
	for (uint32_t i = 0; i < p->ndev; i++) {
		const struct gpufreq_wdev *d = &p->dev[i];
		const struct gpufreq_win *w = &d->w;
		uint32_t n = w->tis_n > GPUFREQ_MAX_STATES ?
		    GPUFREQ_MAX_STATES :
		    w->tis_n;

		store_enc_str(e, d->name);
		store_enc_u(e, d->kind);
		store_enc_u(e, w->have);
		store_enc_u(e, w->reads);
		store_enc_u(e, w->errors);
		store_enc_u(e, w->cur_n);
		store_enc_u(e, w->cur_min_hz);
		store_enc_u(e, w->cur_max_hz);
		store_enc_u(e, w->cur_sum_hz);
		store_enc_u(e, w->min_hz);
		store_enc_u(e, w->max_hz);
		store_enc_u(e, w->busy_us);
		store_enc_u(e, w->total_us);
		store_enc_u(e, w->busy_pct_n);
		store_enc_u(e, w->busy_pct_sum);
		store_enc_u(e, n);
		for (uint32_t k = 0; k < n; k++) {
			store_enc_u(e, w->tis_hz[k]);
			store_enc_u(e, w->tis_ms[k]);
		}
	}
}

#define U32(d) ((uint32_t)store_dec_u_max((d), UINT32_MAX))

static void
dec_dev(struct store_dec *d, struct gpufreq_wdev *v)
{
	struct gpufreq_win *w = &v->w;

	store_dec_str(d, v->name, sizeof(v->name));
	v->kind = (uint32_t)store_dec_u_max(d, GPUFREQ_MALI);
	w->have = (uint32_t)store_dec_u_max(d, 63);
	w->reads = U32(d);
	w->errors = U32(d);
	w->cur_n = U32(d);
	w->cur_min_hz = store_dec_u(d);
	w->cur_max_hz = store_dec_u(d);
	w->cur_sum_hz = store_dec_u(d);
	w->min_hz = store_dec_u(d);
	w->max_hz = store_dec_u(d);
	w->busy_us = store_dec_u(d);
	w->total_us = store_dec_u(d);
	w->busy_pct_n = U32(d);
	w->busy_pct_sum = store_dec_u(d);
	w->tis_n = (uint32_t)store_dec_u_max(d, GPUFREQ_MAX_STATES);
	for (uint32_t k = 0; k < w->tis_n && !d->err; k++) {
		w->tis_hz[k] = store_dec_u(d);
		w->tis_ms[k] = store_dec_u(d);
	}
}

/* payload into a new part; -EBADMSG for anything malformed. */
int
store_gpufreq_decode(const void *payload, size_t len,
    struct window_gpufreq **ret)
{
	struct window_gpufreq *p;
	struct store_dec d;
	uint32_t found, skipped, windows, reads, errors;
	uint64_t read_ns, read_ns_max, n;

	store_dec_init(&d, payload, len);
	found = U32(&d);
	skipped = U32(&d);
	windows = U32(&d);
	reads = U32(&d);
	read_ns = store_dec_u(&d);
	read_ns_max = store_dec_u(&d);
	errors = U32(&d);
	n = store_dec_u_max(&d, 4096);
	if (d.err || n > len / DEV_MIN)
		return -EBADMSG;
	if ((p = window_gpufreq_new((uint32_t)n)) == NULL)
		return -ENOMEM;
	p->found = found;
	p->skipped = skipped;
	p->windows = windows;
	p->reads = reads;
	p->read_ns = read_ns;
	p->read_ns_max = read_ns_max;
	p->errors = errors;
	for (uint32_t i = 0; i < p->ndev && !d.err; i++)
		dec_dev(&d, &p->dev[i]);
	if (store_dec_end(&d) < 0) {
		window_gpufreq_free(p);
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static int
gpufreq_dec(const void *payload, size_t len, void **ret)
{
	struct window_gpufreq *p = NULL;
	int r = store_gpufreq_decode(payload, len, &p);

	*ret = p;
	return r;
}

static int
store_gpufreq_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_gpufreq *p = window_gpufreq(w);
	struct store_enc pl = { 0 };
	int rc;

	if (p == NULL || p->ndev == 0)
		return SQLITE_OK; /* no GPU device: no row */
	store_gpufreq_encode(&pl, p);
	rc = store_blobpart_put(s, &bp, id, &pl);
	store_enc_release(&pl);
	return rc;
}

static int
store_gpufreq_load(struct store *s, int64_t id, struct window *w)
{
	return store_blobpart_load(s, &bp, id, w);
}

/*
 * The parts of the windows that ended in (from, to], oldest first, folded
 * into one (window_gpufreq_merge); NULL when none has one.
 */
int
store_gpufreq_range(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct window_gpufreq **ret)
{
	void *acc = NULL;
	int r = store_blobpart_range(s, &bp, from_wall_ns, to_wall_ns, &acc,
	    NULL);

	if (r == 0)
		*ret = acc;
	return r;
}

const struct store_part store_gpufreq_part = {
	.sql = gs_sql,
	.nsql = sizeof(gs_sql) / sizeof(gs_sql[0]),
	.put = store_gpufreq_put,
	.load = store_gpufreq_load,
};
