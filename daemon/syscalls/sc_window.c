/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall part of a window as plain arithmetic (no I/O): free, copy,
 * the roll-up merge and the dump text. A merge keeps sums exact: rows of
 * the same (tgid, start_ns, nr) add (counts, errors, sums, fast calls,
 * histograms; maxima take the larger), the top rows by Σ latency are kept
 * and the rest fold into "other"; slow calls join by time up to the bound,
 * the rest counted in slow_dropped; counters and the programs' run time
 * add; the state, thresholds and bounds are the later window's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sysnames.h"
#include "core/util.h"
#include "syscalls/sc_window.h"

struct window_syscalls *
window_syscalls_new(void)
{
	struct window_syscalls *p = calloc(1, sizeof(*p));

	if (p)
		p->other.tgid = -1;
	return p;
}

void
window_syscalls_free(struct window_syscalls *p)
{
	if (p == NULL)
		return;
	free(p->rows);
	free(p->slow);
	free(p);
}

struct window_syscalls *
window_syscalls_dup(const struct window_syscalls *p)
{
	struct window_syscalls *c;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	*c = *p;
	c->rows = NULL;
	c->slow = NULL;
	if (p->nrows && (c->rows = malloc(p->nrows * sizeof(*p->rows))) == NULL)
		goto fail;
	if (p->nslow && (c->slow = malloc(p->nslow * sizeof(*p->slow))) == NULL)
		goto fail;
	if (p->nrows)
		memcpy(c->rows, p->rows, p->nrows * sizeof(*p->rows));
	if (p->nslow)
		memcpy(c->slow, p->slow, p->nslow * sizeof(*p->slow));
	return c;
fail:
	window_syscalls_free(c);
	return NULL;
}

static int
cmp_row(const void *a, const void *b)
{
	const struct sc_row *x = a, *y = b;

	if (x->sum_ns != y->sum_ns)
		return x->sum_ns > y->sum_ns ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static int
cmp_slow(const void *a, const void *b)
{
	const struct sc_slow *x = a, *y = b;

	if (x->boot_enter_ns != y->boot_enter_ns)
		return x->boot_enter_ns < y->boot_enter_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void
window_syscalls_sort(struct window_syscalls *p)
{
	if (p->nrows > 1)
		qsort(p->rows, p->nrows, sizeof(*p->rows), cmp_row);
	if (p->nslow > 1)
		qsort(p->slow, p->nslow, sizeof(*p->slow), cmp_slow);
}

/* s's figures into a (the same key, or the other row) */
static void
row_add(struct sc_row *a, const struct sc_row *s)
{
	unsigned i;

	a->count += s->count;
	for (i = 0; i < SC_ERR__MAX; i++)
		a->errors[i] += s->errors[i];
	a->sum_ns += s->sum_ns;
	a->fast += s->fast;
	if (s->max_ns > a->max_ns)
		a->max_ns = s->max_ns;
	for (i = 0; i < SC_HIST_N; i++)
		a->hist[i] += s->hist[i];
}

static size_t
top_bound(const struct window_syscalls *p)
{
	return p->top_max ? p->top_max : SC_TOP_DEFAULT;
}

static size_t
slow_bound(const struct window_syscalls *p)
{
	return p->slow_max ? p->slow_max : SC_SLOW_DEFAULT;
}

static int
merge_rows(struct window_syscalls *acc, const struct window_syscalls *src,
    size_t bound)
{
	struct sc_row *v;
	size_t i, k, n = acc->nrows;

	if (src->nrows) {
		if ((v = realloc(acc->rows,
			 (acc->nrows + src->nrows) * sizeof(*v))) == NULL)
			return -ENOMEM;
		acc->rows = v;
		for (i = 0; i < src->nrows; i++) {
			const struct sc_row *s = &src->rows[i];

			for (k = 0; k < n; k++)
				if (v[k].tgid == s->tgid &&
				    v[k].start_ns == s->start_ns &&
				    v[k].nr == s->nr)
					break;
			if (k == n) {
				v[acc->nrows++] = *s;
				continue;
			}
			row_add(&v[k], s);
			memcpy(v[k].comm, s->comm, sizeof(v[k].comm));
		}
	}
	row_add(&acc->other, &src->other);
	acc->other_rows += src->other_rows;
	window_syscalls_sort(acc);
	for (i = bound; i < acc->nrows; i++) {
		row_add(&acc->other, &acc->rows[i]);
		acc->other_rows++;
	}
	if (acc->nrows > bound)
		acc->nrows = bound;
	return 0;
}

static int
merge_slow(struct window_syscalls *acc, const struct window_syscalls *src,
    size_t bound)
{
	struct sc_slow *v;

	if (src->nslow) {
		if ((v = realloc(acc->slow,
			 (acc->nslow + src->nslow) * sizeof(*v))) == NULL)
			return -ENOMEM;
		memcpy(v + acc->nslow, src->slow, src->nslow * sizeof(*v));
		acc->slow = v;
		acc->nslow += src->nslow;
	}
	if (acc->nslow > 1)
		qsort(acc->slow, acc->nslow, sizeof(*acc->slow), cmp_slow);
	if (acc->nslow > bound) {
		acc->ctr.slow_dropped += acc->nslow - bound;
		acc->nslow = bound;
	}
	return 0;
}

static void
ctr_add(struct sc_counters *a, const struct sc_counters *s)
{
	a->missing_enter += s->missing_enter;
	a->mismatch += s->mismatch;
	a->map_full += s->map_full;
	a->rb_full += s->rb_full;
	a->slow_dropped += s->slow_dropped;
	a->compat += s->compat;
	a->drain_errors += s->drain_errors;
}

int
window_syscalls_merge(struct window_syscalls **accp,
    const struct window_syscalls *src)
{
	struct window_syscalls *acc = *accp;
	size_t tb, sb;
	int r;

	if (src == NULL)
		return 0;
	if (acc == NULL) {
		if ((*accp = window_syscalls_dup(src)) == NULL)
			return -ENOMEM;
		return 0;
	}
	/* the larger bounds: a state part (off, failed) carries none, and
	 * must not cut a range's rows to the defaults */
	tb = src->top_max > acc->top_max ? src->top_max : acc->top_max;
	sb = src->slow_max > acc->slow_max ? src->slow_max : acc->slow_max;
	acc->top_max = (uint32_t)tb;
	acc->slow_max = (uint32_t)sb;
	tb = top_bound(acc);
	sb = slow_bound(acc);
	if ((r = merge_rows(acc, src, tb)) < 0 ||
	    (r = merge_slow(acc, src, sb)) < 0)
		return r;
	ctr_add(&acc->ctr, &src->ctr);
	acc->prog_run_ns += src->prog_run_ns;
	acc->prog_run_cnt += src->prog_run_cnt;
	/* a sum over windows is whole only when each had the figures */
	acc->have = (acc->have & src->have & SC_HAVE_PROG_STATS) |
	    (src->have & ~SC_HAVE_PROG_STATS);
	acc->state = src->state;
	acc->err = src->err;
	acc->arch = src->arch;
	acc->floor_ns = src->floor_ns;
	acc->slow_ns = src->slow_ns;
	return 0;
}

const char *
sc_state_name(uint32_t s)
{
	switch (s) {
	case SC_OFF:
		return "off";
	case SC_ON:
		return "on";
	case SC_UNSUPPORTED:
		return "unsupported";
	case SC_FAILED:
		return "failed";
	}
	return "?";
}

static void
part_free(void *part)
{
	window_syscalls_free(part);
}

static void *
part_dup(const void *part)
{
	return window_syscalls_dup(part);
}

static int
part_merge(void **accp, const void *src)
{
	struct window_syscalls *acc = *accp;
	int r = window_syscalls_merge(&acc, src);

	*accp = acc;
	return r;
}

static void
part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_syscalls *p = window_syscalls(w);
	const char *nm;
	char nrb[24];
	size_t i;

	vbuf_printf(out,
	    "syscalls: %s (err %d), %s, floor %" PRIu64 " ns, slow %" PRIu64
	    " ns, %zu rows (+%" PRIu64 " in other), %zu slow, "
	    "missing_enter %" PRIu64 " mismatch %" PRIu64 " map_full %" PRIu64
	    " rb_full %" PRIu64 " slow_dropped %" PRIu64 "\n",
	    sc_state_name(p->state), p->err, sysnames_arch_name(p->arch),
	    p->floor_ns, p->slow_ns, p->nrows, p->other_rows, p->nslow,
	    p->ctr.missing_enter, p->ctr.mismatch, p->ctr.map_full,
	    p->ctr.rb_full, p->ctr.slow_dropped);
	for (i = 0; i < p->nrows && (topn == 0 || i < topn); i++) {
		const struct sc_row *r = &p->rows[i];

		if ((nm = sysnames_name(p->arch, r->nr)) == NULL) {
			snprintf(nrb, sizeof(nrb), "nr%u", r->nr);
			nm = nrb;
		}
		vbuf_printf(out,
		    "  %d %s %s: %" PRIu64 " calls, %" PRIu64
		    " errors, sum %" PRIu64 " ns, max %" PRIu64 " ns\n",
		    r->tgid, r->comm, nm, r->count, sc_row_errors(r), r->sum_ns,
		    r->max_ns);
	}
}

static void
part_summary(const struct window *w, struct vbuf *out)
{
	const struct window_syscalls *p = window_syscalls(w);
	uint64_t n = p->other.count;
	size_t i;

	if (p->state != SC_ON)
		return;
	for (i = 0; i < p->nrows; i++)
		n += p->rows[i].count;
	vbuf_printf(out, " sc=%" PRIu64 "/%zu", n, p->nslow);
}

static size_t
part_bytes(const void *part)
{
	const struct window_syscalls *p = part;

	return p ? sizeof(*p) + p->nrows * sizeof(*p->rows) +
		p->nslow * sizeof(*p->slow) :
		   0;
}

const struct window_part_ops sc_window_part = {
	.name = "syscalls",
	.free = part_free,
	.dup = part_dup,
	.merge = part_merge,
	.dump = part_dump,
	.summary = part_summary,
	.bytes = part_bytes,
};
