/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's task rows as one compact payload (doc/storage.md, "Blobs"):
 * the rows' figures in order of their instance ids, which the instance
 * table maps to (id, starttime, tgid, uid, comm, name). The encoding is
 * lossless: every figure, norm_ticks bit for bit, reads back as stored.
 *
 * Version 1 (written up to schema v20, still read), row after row:
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
 * Version 2 (written since v21): the same fields, column after column
 * (every row's iid step, then every d_utime, …), the tuples of the rows
 * with flag 4 in row order after the flags; zstd then meets runs of
 * alike bytes (small steps, zeros, flags), a tenth smaller with the
 * dictionary on store_bench.
 *
 * Version 3 (written since; 1 and 2 still read): version 2's columns up
 * to the tuples, then the RSS columns as
 *   u   r: the rows whose rss_pages_last refers back (0: no column)
 *   if r > 0: n × u k (0: a value of its own; k ≥ 1: the k-th newest
 *       of the values met so far in row order)
 *   u   rss_pages_last of each row with k = 0, in row order
 *   n × s rss_pages_max − rss_pages_last
 * The threads of one process report its RSS (stat field 24 is the memory
 * map's): in a threads blob two rows in three carried a value an earlier
 * row had (store_bench -F drifting), 15 % of the blob. The encoder writes
 * the column only when it saves bytes.
 *
 * Every window decodes on its own: no figure is a delta against another
 * window (version 3 refers only to earlier rows of the same blob), so
 * retention and roll-ups may delete any window.
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
store_tasks_put_v1(struct store_enc *e, const struct window_task *t,
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

static unsigned
row_flags(const struct window_task *t, const struct tuple *m)
{
	struct tuple x = tuple_of(t);

	return (t->born ? TF_BORN : 0) | (t->exited ? TF_EXITED : 0) |
	    (tuple_eq(&x, m) ? 0 : TF_SAMPLES);
}

/*
 * Version 3's RSS reference: the position, counted back from the newest,
 * of t's rss_pages_last among the distinct values met before it in row
 * order (1: the newest), or 0 for a value not met yet. An open-addressed
 * table of value → position (a slot holds position + 1).
 */
struct rss_refs {
	uint64_t *key;
	size_t *pos, mask, count;
};

static int
rss_refs_init(struct rss_refs *r, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	r->key = calloc(cap, sizeof(*r->key));
	r->pos = calloc(cap, sizeof(*r->pos));
	r->mask = cap - 1;
	r->count = 0;
	if (r->key == NULL || r->pos == NULL) {
		free(r->key);
		free(r->pos);
		return -ENOMEM;
	}
	return 0;
}

/* The reference for v (0: new, and remembered). */
static uint64_t
rss_ref(struct rss_refs *r, uint64_t v)
{
	size_t h = (size_t)((v * 0x9E3779B97F4A7C15ull) >> 20) & r->mask;

	for (; r->pos[h]; h = (h + 1) & r->mask)
		if (r->key[h] == v)
			return r->count - (r->pos[h] - 1);
	r->key[h] = v;
	r->pos[h] = ++r->count;
	return 0;
}

/* The bytes of v as `u`. */
static int64_t
u_len(uint64_t v)
{
	int64_t k = 1;

	while (v >= 0x80) {
		v >>= 7;
		k++;
	}
	return k;
}

/* Versions 2 and 3 up to the RSS columns, which differ. */
static int
put_columns(struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n, unsigned version)
{
	struct tuple m = tuple_mode(t, n);
	struct rss_refs rr = { 0 };
	uint64_t *ref = NULL;
	int64_t gain = 0;
	size_t i;

	for (i = 1; i < n; i++)
		if (iid[i] <= iid[i - 1])
			return -EINVAL; /* ascending, no repeats */
	store_enc_u(e, n);
	store_enc_u(e, m.samples);
	store_enc_u(e, m.wall_ns);
	store_enc_u(e, m.total_ticks);
	store_enc_f64(e, m.norm_ticks);
	for (i = 0; i < n; i++)
		store_enc_u(e, iid[i] - (i ? iid[i - 1] : 0));
	for (i = 0; i < n; i++)
		store_enc_u(e, t[i].d_utime);
	for (i = 0; i < n; i++)
		store_enc_u(e, t[i].d_stime);
	for (i = 0; i < n; i++)
		store_enc_u(e, t[i].d_minflt);
	for (i = 0; i < n; i++)
		store_enc_u(e, t[i].d_majflt);
	for (i = 0; i < n; i++)
		store_enc_u(e, row_flags(&t[i], &m));
	for (i = 0; i < n; i++)
		if (row_flags(&t[i], &m) & TF_SAMPLES) {
			store_enc_u(e, t[i].samples);
			store_enc_u(e, t[i].wall_ns);
			store_enc_u(e, t[i].total_ticks);
			store_enc_f64(e, t[i].norm_ticks);
		}
	if (version == 2) {
		for (i = 0; i < n; i++)
			store_enc_u(e, t[i].rss_pages_max);
		for (i = 0; i < n; i++)
			store_enc_s(e,
			    (int64_t)(t[i].rss_pages_last -
				t[i].rss_pages_max));
		return e->err;
	}
	/* version 3: each last value once (the first row that has it),
	 * the others refer back to it; max as its difference from last */
	if (n &&
	    ((ref = calloc(n, sizeof(*ref))) == NULL ||
		rss_refs_init(&rr, n) < 0)) {
		free(ref);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		ref[i] = rss_ref(&rr, t[i].rss_pages_last);
		/* what the column costs against what it saves */
		if (ref[i])
			gain += u_len(t[i].rss_pages_last);
		gain -= u_len(ref[i]);
	}
	if (gain <= 0 && n > 0) /* no column: every row its own value */
		memset(ref, 0, n * sizeof(*ref));
	store_enc_u(e, gain > 0 ? n - rr.count : 0); /* rows that refer back */
	for (i = 0; i < n && gain > 0; i++)
		store_enc_u(e, ref[i]);
	for (i = 0; i < n; i++)
		if (ref[i] == 0)
			store_enc_u(e, t[i].rss_pages_last);
	for (i = 0; i < n; i++)
		store_enc_s(e,
		    (int64_t)(t[i].rss_pages_max - t[i].rss_pages_last));
	if (n) {
		free(rr.key);
		free(rr.pos);
	}
	free(ref);
	return e->err;
}

int
store_tasks_put_v2(struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n)
{
	return put_columns(e, t, iid, n, 2);
}

int
store_tasks_put(struct store_enc *e, const struct window_task *t,
    const uint64_t *iid, size_t n)
{
	return put_columns(e, t, iid, n, 3);
}

/* One row after prev (its iid); false when malformed. */
static bool
row_get(struct store_dec *d, const struct tuple *m, bool first, uint64_t *prev,
    struct window_task *t, uint64_t *ret_iid)
{
	uint64_t step = store_dec_u(d);
	unsigned f;

	if (!first && step == 0)
		return false; /* not ascending */
	if (step > UINT64_MAX - *prev)
		return false;
	*ret_iid = *prev += step;
	t->d_utime = store_dec_u(d);
	t->d_stime = store_dec_u(d);
	t->d_minflt = store_dec_u(d);
	t->d_majflt = store_dec_u(d);
	f = (unsigned)store_dec_u_max(d, TF__ALL);
	t->born = f & TF_BORN;
	t->exited = f & TF_EXITED;
	if (f & TF_SAMPLES) {
		t->samples = (uint32_t)store_dec_u_max(d, UINT32_MAX);
		t->wall_ns = store_dec_u(d);
		t->total_ticks = store_dec_u(d);
		t->norm_ticks = store_dec_f64(d);
	} else {
		t->samples = m->samples;
		t->wall_ns = m->wall_ns;
		t->total_ticks = m->total_ticks;
		t->norm_ticks = m->norm_ticks;
	}
	t->rss_pages_max = store_dec_u(d);
	t->rss_pages_last = t->rss_pages_max + (uint64_t)store_dec_s(d);
	return !d->err;
}

/* The row count and the shared tuple; -EBADMSG past max or the bytes. */
static int
head_get(struct store_dec *d, size_t len, size_t max, struct tuple *m,
    size_t *ret_n)
{
	size_t n = (size_t)store_dec_u_max(d, max);

	m->samples = (uint32_t)store_dec_u_max(d, UINT32_MAX);
	m->wall_ns = store_dec_u(d);
	m->total_ticks = store_dec_u(d);
	m->norm_ticks = store_dec_f64(d);
	if (d->err)
		return d->err;
	/* each row takes at least 8 bytes: a count past that is a lie */
	if (n > len / 8)
		return -EBADMSG;
	*ret_n = n;
	return 0;
}

static int
get_v1(const void *p, size_t len, size_t max, struct window_task **ret,
    uint64_t **ret_iid, size_t *ret_n)
{
	struct store_dec d;
	struct window_task *t = NULL;
	uint64_t *iid = NULL, prev = 0;
	struct tuple m;
	size_t n, i;
	int r;

	store_dec_init(&d, p, len);
	if ((r = head_get(&d, len, max, &m, &n)) < 0)
		return r;
	if (n &&
	    ((t = calloc(n, sizeof(*t))) == NULL ||
		(iid = calloc(n, sizeof(*iid))) == NULL)) {
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (!row_get(&d, &m, i == 0, &prev, &t[i], &iid[i]))
			break;
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

static int
find_v1(const void *p, size_t len, size_t max, const uint64_t *want,
    size_t nwant, struct window_task **ret, uint64_t **ret_iid, size_t *ret_n)
{
	struct store_dec d;
	struct window_task *t = NULL, row, *nt;
	uint64_t *iid = NULL, prev = 0, id, *ni;
	struct tuple m;
	size_t n, i, k = 0, w = 0, cap = 0;
	int r;

	store_dec_init(&d, p, len);
	if ((r = head_get(&d, len, max, &m, &n)) < 0)
		return r;
	for (i = 0; i < n && w < nwant; i++) {
		memset(&row, 0, sizeof(row));
		if (!row_get(&d, &m, i == 0, &prev, &row, &id)) {
			r = -EBADMSG;
			break;
		}
		while (w < nwant && want[w] < id)
			w++;
		if (w == nwant || want[w] != id)
			continue;
		if (k == cap) {
			cap = cap ? cap * 2 : 4;
			if ((nt = realloc(t, cap * sizeof(*t))) == NULL ||
			    (t = nt,
				(ni = realloc(iid, cap * sizeof(*iid))) ==
				    NULL)) {
				r = -ENOMEM;
				break;
			}
			iid = ni;
		}
		t[k] = row;
		iid[k++] = id;
	}
	if (r < 0) {
		free(t);
		free(iid);
		return r;
	}
	*ret = t;
	*ret_iid = iid;
	*ret_n = k;
	return 0;
}

/* Version 3's RSS columns into t[0..n): 0, -EBADMSG when malformed (a
 * reference past the values met so far, a count of references that the
 * column does not hold), -ENOMEM. */
static int
rss_get_v3(struct store_dec *d, struct window_task *t, size_t n)
{
	size_t *newrow = NULL, count = 0, nref, i;
	uint64_t k;

	nref = (size_t)store_dec_u_max(d, n);
	if (d->err)
		return -EBADMSG;
	if (n && (newrow = calloc(n, sizeof(*newrow))) == NULL)
		return -ENOMEM;
	/* the references (none when nref is 0), kept in rss_pages_max
	 * until the values are read */
	for (i = 0; i < n && !d->err; i++) {
		k = nref ? store_dec_u_max(d, count) : 0;
		if (k == 0)
			newrow[count++] = i;
		t[i].rss_pages_max = k;
	}
	if (n - count != nref)
		store_dec_fail(d);
	for (i = 0; i < count && !d->err; i++)
		t[newrow[i]].rss_pages_last = store_dec_u(d);
	for (i = 0, count = 0; i < n && !d->err; i++) {
		k = t[i].rss_pages_max;
		if (k == 0)
			count++;
		else
			t[i].rss_pages_last =
			    t[newrow[count - k]].rss_pages_last;
		t[i].rss_pages_max = t[i].rss_pages_last +
		    (uint64_t)store_dec_s(d);
	}
	free(newrow);
	return d->err ? -EBADMSG : 0;
}

/* Every column in turn; the rows' tuples after the flags (versions 2 and
 * 3, which differ in the RSS columns alone). */
static int
get_cols(const void *p, size_t len, size_t max, unsigned version,
    struct window_task **ret, uint64_t **ret_iid, size_t *ret_n)
{
	struct store_dec d;
	struct window_task *t = NULL;
	uint64_t *iid = NULL, step;
	struct tuple m;
	size_t n, i;
	unsigned f;
	int r;

	store_dec_init(&d, p, len);
	if ((r = head_get(&d, len, max, &m, &n)) < 0)
		return r;
	if (n &&
	    ((t = calloc(n, sizeof(*t))) == NULL ||
		(iid = calloc(n, sizeof(*iid))) == NULL)) {
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < n && !d.err; i++) {
		step = store_dec_u(&d);
		if ((i > 0 && step == 0) ||
		    (i > 0 && step > UINT64_MAX - iid[i - 1]))
			store_dec_fail(&d); /* not ascending */
		iid[i] = (i ? iid[i - 1] : 0) + step;
	}
	for (i = 0; i < n; i++)
		t[i].d_utime = store_dec_u(&d);
	for (i = 0; i < n; i++)
		t[i].d_stime = store_dec_u(&d);
	for (i = 0; i < n; i++)
		t[i].d_minflt = store_dec_u(&d);
	for (i = 0; i < n; i++)
		t[i].d_majflt = store_dec_u(&d);
	for (i = 0; i < n; i++) {
		f = (unsigned)store_dec_u_max(&d, TF__ALL);
		t[i].born = f & TF_BORN;
		t[i].exited = f & TF_EXITED;
		/* TF_SAMPLES kept in samples' place until the tuples */
		t[i].samples = f & TF_SAMPLES;
	}
	for (i = 0; i < n && !d.err; i++) {
		if (t[i].samples) {
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
	}
	if (version == 2) {
		for (i = 0; i < n; i++)
			t[i].rss_pages_max = store_dec_u(&d);
		for (i = 0; i < n; i++)
			t[i].rss_pages_last = t[i].rss_pages_max +
			    (uint64_t)store_dec_s(&d);
	} else if (!d.err && (r = rss_get_v3(&d, t, n)) < 0) {
		free(t);
		free(iid);
		return r;
	}
	if ((r = store_dec_end(&d)) < 0) {
		free(t);
		free(iid);
		return -EBADMSG;
	}
	*ret = t;
	*ret_iid = iid;
	*ret_n = n;
	return 0;
}

int
store_tasks_get(const void *p, size_t len, unsigned version, size_t max,
    struct window_task **ret, uint64_t **ret_iid, size_t *ret_n)
{
	if (version == 1)
		return get_v1(p, len, max, ret, ret_iid, ret_n);
	if (version == 2 || version == 3)
		return get_cols(p, len, max, version, ret, ret_iid, ret_n);
	return -EBADMSG;
}

/*
 * Version 2's rows of want[] alone: the iid column and the flags read
 * whole, every other figure of the other rows read past (each varint
 * still checked: a blob that get_v2 refuses is refused here too), and
 * only the rows asked for kept.
 */
static int
find_v2(const void *p, size_t len, size_t max, const uint64_t *want,
    size_t nwant, struct window_task **ret, uint64_t **ret_iid, size_t *ret_n)
{
	struct store_dec d;
	struct window_task *t = NULL;
	uint64_t *iid = NULL, *oid = NULL, step, v;
	uint8_t *fl = NULL;
	size_t n, i, j, k = 0, w = 0, *at = NULL;
	struct tuple m;
	int r;

	store_dec_init(&d, p, len);
	if ((r = head_get(&d, len, max, &m, &n)) < 0)
		return r;
	if (n &&
	    ((iid = calloc(n, sizeof(*iid))) == NULL ||
		(fl = calloc(n, 1)) == NULL)) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n && !d.err; i++) {
		step = store_dec_u(&d);
		if ((i > 0 && step == 0) ||
		    (i > 0 && step > UINT64_MAX - iid[i - 1]))
			store_dec_fail(&d); /* not ascending */
		iid[i] = (i ? iid[i - 1] : 0) + step;
	}
	for (i = 0; i < n && w < nwant; i++) {
		while (w < nwant && want[w] < iid[i])
			w++;
		k += w < nwant && want[w] == iid[i];
	}
	if (k &&
	    ((t = calloc(k, sizeof(*t))) == NULL ||
		(oid = calloc(k, sizeof(*oid))) == NULL ||
		(at = calloc(k, sizeof(*at))) == NULL)) {
		r = -ENOMEM;
		goto out;
	}
	for (i = j = w = 0; i < n && j < k; i++) {
		while (w < nwant && want[w] < iid[i])
			w++;
		if (w < nwant && want[w] == iid[i]) {
			oid[j] = iid[i];
			at[j++] = i;
		}
	}
	/* a figure of every row in turn, kept for the rows asked for */
#define COLUMN(set)                        \
	for (i = j = 0; i < n; i++) {      \
		v = store_dec_u(&d);       \
		if (j < k && at[j] == i) { \
			set;               \
			j++;               \
		}                          \
	}
	COLUMN(t[j].d_utime = v)
	COLUMN(t[j].d_stime = v)
	COLUMN(t[j].d_minflt = v)
	COLUMN(t[j].d_majflt = v)
	for (i = j = 0; i < n; i++) {
		fl[i] = (uint8_t)store_dec_u_max(&d, TF__ALL);
		if (j < k && at[j] == i) {
			t[j].born = fl[i] & TF_BORN;
			t[j].exited = fl[i] & TF_EXITED;
			t[j].samples = m.samples;
			t[j].wall_ns = m.wall_ns;
			t[j].total_ticks = m.total_ticks;
			t[j].norm_ticks = m.norm_ticks;
			j++;
		}
	}
	for (i = j = 0; i < n && !d.err; i++) {
		struct tuple x;

		while (j < k && at[j] < i)
			j++;
		if (!(fl[i] & TF_SAMPLES))
			continue;
		x.samples = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
		x.wall_ns = store_dec_u(&d);
		x.total_ticks = store_dec_u(&d);
		x.norm_ticks = store_dec_f64(&d);
		if (j < k && at[j] == i) {
			t[j].samples = x.samples;
			t[j].wall_ns = x.wall_ns;
			t[j].total_ticks = x.total_ticks;
			t[j].norm_ticks = x.norm_ticks;
		}
	}
	COLUMN(t[j].rss_pages_max = v)
	for (i = j = 0; i < n; i++) {
		int64_t dl = store_dec_s(&d);

		if (j < k && at[j] == i) {
			t[j].rss_pages_last = t[j].rss_pages_max + (uint64_t)dl;
			j++;
		}
	}
#undef COLUMN
	r = store_dec_end(&d) < 0 ? -EBADMSG : 0;
out:
	free(iid);
	free(fl);
	free(at);
	if (r < 0 || k == 0) {
		free(t);
		free(oid);
		t = NULL;
		oid = NULL;
	}
	if (r < 0)
		return r;
	*ret = t;
	*ret_iid = oid;
	*ret_n = k;
	return 0;
}

/*
 * Version 3's rows of want[] alone: the whole payload decoded (a row's
 * RSS may refer to any earlier row's), the rows asked for kept.
 */
static int
find_v3(const void *p, size_t len, size_t max, const uint64_t *want,
    size_t nwant, struct window_task **ret, uint64_t **ret_iid, size_t *ret_n)
{
	struct window_task *t;
	uint64_t *iid;
	size_t n, i, k = 0, w = 0;
	int r;

	if ((r = get_cols(p, len, max, 3, &t, &iid, &n)) < 0)
		return r;
	for (i = 0; i < n && w < nwant; i++) {
		while (w < nwant && want[w] < iid[i])
			w++;
		if (w < nwant && want[w] == iid[i]) {
			t[k] = t[i];
			iid[k++] = iid[i];
		}
	}
	if (k == 0) {
		free(t);
		free(iid);
		t = NULL;
		iid = NULL;
	}
	*ret = t;
	*ret_iid = iid;
	*ret_n = k;
	return 0;
}

int
store_tasks_find(const void *p, size_t len, unsigned version, size_t max,
    const uint64_t *want, size_t nwant, struct window_task **ret,
    uint64_t **ret_iid, size_t *ret_n)
{
	if (version == 1)
		return find_v1(p, len, max, want, nwant, ret, ret_iid, ret_n);
	if (version == 2)
		return find_v2(p, len, max, want, nwant, ret, ret_iid, ret_n);
	if (version == 3)
		return find_v3(p, len, max, want, nwant, ret, ret_iid, ret_n);
	return -EBADMSG;
}
