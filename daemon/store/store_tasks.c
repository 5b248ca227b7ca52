/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's task rows as one compact payload (doc/storage.md, "Blobs"):
 * the rows' figures in order of their instance ids, which the instance
 * table maps to (id, starttime, tgid, uid, comm, name). The encoding is
 * lossless: every figure, norm_ticks bit for bit, reads back as stored.
 *
 *   u   rows
 *   u   mode.samples, mode.wall_ns, mode.total_ticks; f64 mode.norm_ticks
 *       (the tuple most rows share: a task present in every valid sample)
 *   per row, instance ids ascending:
 *     u  iid − previous iid (the first: iid)
 *     u  d_utime, d_stime, d_minflt, d_majflt
 *     u  flags: 1 born, 2 exited, 4 its sample tuple differs from the mode
 *     if 4: u samples, wall_ns, total_ticks; f64 norm_ticks
 *     u  rss_pages_max; s rss_pages_last − rss_pages_max
 *
 * Every window decodes on its own: no figure is a delta against another
 * window, so retention and roll-ups may delete any window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_codec.h"
#include "store/store_tasks.h"

enum {
	TF_BORN = 1,
	TF_EXITED = 2,
	TF_SAMPLES = 4,
	TF__ALL = 7,
};

struct tuple {
	uint32_t samples;
	uint64_t wall_ns, total_ticks;
	double norm_ticks;
};

static struct tuple
tuple_of(const struct window_task *t)
{
	return (struct tuple){ t->samples, t->wall_ns, t->total_ticks,
		t->norm_ticks };
}

static bool
tuple_eq(const struct tuple *a, const struct tuple *b)
{
	/* bitwise for the double: a NaN or −0 must not be folded */
	return a->samples == b->samples && a->wall_ns == b->wall_ns &&
	    a->total_ticks == b->total_ticks &&
	    memcmp(&a->norm_ticks, &b->norm_ticks, sizeof(double)) == 0;
}

/* The tuple most rows share (Boyer–Moore: the majority when there is
 * one). Any choice decodes exactly; a good one only makes rows smaller. */
static struct tuple
tuple_mode(const struct window_task *t, size_t n)
{
	struct tuple cand = { 0 }, x;
	size_t i, votes = 0;

	for (i = 0; i < n; i++) {
		x = tuple_of(&t[i]);
		if (votes == 0) {
			cand = x;
			votes = 1;
		} else if (tuple_eq(&cand, &x))
			votes++;
		else
			votes--;
	}
	return n ? cand : (struct tuple){ 0 };
}

int
store_tasks_put(struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n)
{
	struct tuple m = tuple_mode(t, n), x;
	uint64_t prev = 0;
	unsigned f;
	size_t i;

	store_enc_u(e, n);
	store_enc_u(e, m.samples);
	store_enc_u(e, m.wall_ns);
	store_enc_u(e, m.total_ticks);
	store_enc_f64(e, m.norm_ticks);
	for (i = 0; i < n; i++) {
		if (i && iid[i] <= prev)
			return -EINVAL; /* ascending, no repeats */
		store_enc_u(e, iid[i] - prev);
		prev = iid[i];
		store_enc_u(e, t[i].d_utime);
		store_enc_u(e, t[i].d_stime);
		store_enc_u(e, t[i].d_minflt);
		store_enc_u(e, t[i].d_majflt);
		x = tuple_of(&t[i]);
		f = (t[i].born ? TF_BORN : 0) | (t[i].exited ? TF_EXITED : 0) |
		    (tuple_eq(&x, &m) ? 0 : TF_SAMPLES);
		store_enc_u(e, f);
		if (f & TF_SAMPLES) {
			store_enc_u(e, x.samples);
			store_enc_u(e, x.wall_ns);
			store_enc_u(e, x.total_ticks);
			store_enc_f64(e, x.norm_ticks);
		}
		store_enc_u(e, t[i].rss_pages_max);
		store_enc_s(e,
		    (int64_t)(t[i].rss_pages_last - t[i].rss_pages_max));
	}
	return e->err;
}

int
store_tasks_get(const void *p, size_t len, size_t max, struct window_task **ret,
    uint64_t **ret_iid, size_t *ret_n)
{
	struct store_dec d;
	struct window_task *t = NULL;
	uint64_t *iid = NULL, prev = 0, step;
	struct tuple m;
	unsigned f;
	size_t n, i;
	int r;

	store_dec_init(&d, p, len);
	n = (size_t)store_dec_u_max(&d, max);
	m.samples = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	m.wall_ns = store_dec_u(&d);
	m.total_ticks = store_dec_u(&d);
	m.norm_ticks = store_dec_f64(&d);
	if (d.err)
		return d.err;
	/* each row takes at least 8 bytes: a count past that is a lie */
	if (n > len / 8)
		return -EBADMSG;
	if (n &&
	    ((t = calloc(n, sizeof(*t))) == NULL ||
		(iid = calloc(n, sizeof(*iid))) == NULL)) {
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < n && !d.err; i++) {
		step = store_dec_u(&d);
		if (i && step == 0)
			break; /* not ascending */
		if (step > UINT64_MAX - prev)
			break;
		iid[i] = prev += step;
		t[i].d_utime = store_dec_u(&d);
		t[i].d_stime = store_dec_u(&d);
		t[i].d_minflt = store_dec_u(&d);
		t[i].d_majflt = store_dec_u(&d);
		f = (unsigned)store_dec_u_max(&d, TF__ALL);
		t[i].born = f & TF_BORN;
		t[i].exited = f & TF_EXITED;
		if (f & TF_SAMPLES) {
			t[i].samples = (uint32_t)store_dec_u_max(&d,
			    UINT32_MAX);
			t[i].wall_ns = store_dec_u(&d);
			t[i].total_ticks = store_dec_u(&d);
			t[i].norm_ticks = store_dec_f64(&d);
		} else {
			t[i].samples = m.samples;
			t[i].wall_ns = m.wall_ns;
			t[i].total_ticks = m.total_ticks;
			t[i].norm_ticks = m.norm_ticks;
		}
		t[i].rss_pages_max = store_dec_u(&d);
		t[i].rss_pages_last = t[i].rss_pages_max +
		    (uint64_t)store_dec_s(&d);
	}
	if (i < n || (r = store_dec_end(&d)) < 0) {
		free(t);
		free(iid);
		return -EBADMSG;
	}
	*ret = t;
	*ret_iid = iid;
	*ret_n = n;
	return 0;
}
