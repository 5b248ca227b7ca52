/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Binder latency rows of a window as plain arithmetic: histogram slots,
 * the kept rows and the rest, roll-up merge, quantiles. No I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "trace/trace.h"

/* Slot k: floor(log2(µs)) = k; slot 0 also < 1 µs; the last one open. */
void
window_btxn_hist_add(uint32_t hist[VITALS_TRACE_BTXN_SLOTS], uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned k = 0;

	while (us > 1 && k < VITALS_TRACE_BTXN_SLOTS - 1) {
		us >>= 1;
		k++;
	}
	if (hist[k] < UINT32_MAX)
		hist[k]++;
}

static uint32_t
sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* src's counts, sums, maxima and slots into acc (its key stays). */
void
window_btxn_add(struct window_trace_btxn *acc,
    const struct window_trace_btxn *src)
{
	unsigned k;

	acc->twoway = sat_add(acc->twoway, src->twoway);
	acc->oneway = sat_add(acc->oneway, src->oneway);
	acc->received = sat_add(acc->received, src->received);
	acc->replied = sat_add(acc->replied, src->replied);
	acc->unreceived = sat_add(acc->unreceived, src->unreceived);
	acc->unreplied = sat_add(acc->unreplied, src->unreplied);
	acc->recv_sum_ns += src->recv_sum_ns;
	acc->reply_sum_ns += src->reply_sum_ns;
	if (src->recv_max_ns > acc->recv_max_ns)
		acc->recv_max_ns = src->recv_max_ns;
	if (src->reply_max_ns > acc->reply_max_ns)
		acc->reply_max_ns = src->reply_max_ns;
	for (k = 0; k < VITALS_TRACE_BTXN_SLOTS; k++) {
		acc->recv_hist[k] = sat_add(acc->recv_hist[k],
		    src->recv_hist[k]);
		acc->reply_hist[k] = sat_add(acc->reply_hist[k],
		    src->reply_hist[k]);
	}
}

static int
btxn_by_n(const void *a, const void *b)
{
	const struct window_trace_btxn *x = a, *y = b;
	uint64_t nx = (uint64_t)x->twoway + x->oneway + x->replied;
	uint64_t ny = (uint64_t)y->twoway + y->oneway + y->replied;

	if (nx != ny)
		return nx < ny ? 1 : -1;
	if (x->from_pid != y->from_pid)
		return x->from_pid < y->from_pid ? -1 : 1;
	if (x->to_pid != y->to_pid)
		return x->to_pid < y->to_pid ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

/*
 * rows[0..n) sorted by transactions, the first VITALS_TRACE_BTXN kept in
 * wt, the others added to wt->btxn_rest and counted on top of other_rows
 * in wt->btxn_other. rows is reordered.
 */
void
window_btxn_keep(struct window_trace *wt, struct window_trace_btxn *rows,
    size_t n, uint32_t other_rows)
{
	size_t i, k = n < VITALS_TRACE_BTXN ? n : VITALS_TRACE_BTXN;

	if (n > 1)
		qsort(rows, n, sizeof(*rows), btxn_by_n);
	if (k)
		memcpy(wt->btxn, rows, k * sizeof(*rows));
	wt->nbtxn = (uint32_t)k;
	for (i = k; i < n; i++)
		window_btxn_add(&wt->btxn_rest, &rows[i]);
	wt->btxn_other = other_rows + (uint32_t)(n - k);
}

/* Roll-ups: rows of the same key add up; the kept ones are chosen again. */
void
window_btxn_merge(struct window_trace *acc, const struct window_trace *src)
{
	struct window_trace_btxn *all;
	size_t n = acc->nbtxn, i, k;

	acc->btxn_orphan_replies += src->btxn_orphan_replies;
	acc->btxn_orphan_recv += src->btxn_orphan_recv;
	acc->btxn_lost += src->btxn_lost;
	acc->btxn_exit += src->btxn_exit;
	acc->btxn_stale += src->btxn_stale;
	acc->btxn_abandoned += src->btxn_abandoned;
	acc->btxn_expired += src->btxn_expired;
	acc->btxn_full += src->btxn_full;
	acc->btxn_open = src->btxn_open; /* a gauge: the later close */
	window_btxn_add(&acc->btxn_rest, &src->btxn_rest);
	if (src->nbtxn == 0) {
		acc->btxn_other += src->btxn_other;
		return;
	}
	if ((all = malloc((acc->nbtxn + src->nbtxn) * sizeof(*all))) == NULL) {
		/* out of memory: src's rows into the rest, counted */
		for (i = 0; i < src->nbtxn; i++)
			window_btxn_add(&acc->btxn_rest, &src->btxn[i]);
		acc->btxn_other += src->btxn_other + src->nbtxn;
		return;
	}
	if (n)
		memcpy(all, acc->btxn, n * sizeof(*all));
	for (i = 0; i < src->nbtxn; i++) {
		const struct window_trace_btxn *s = &src->btxn[i];

		for (k = 0; k < n; k++)
			if (all[k].from_pid == s->from_pid &&
			    all[k].to_pid == s->to_pid &&
			    all[k].code == s->code)
				break;
		if (k == n)
			all[n++] = *s;
		else
			window_btxn_add(&all[k], s);
	}
	window_btxn_keep(acc, all, n, acc->btxn_other + src->btxn_other);
	free(all);
}

/*
 * The upper edge of the slot holding the q-quantile, ns (the run-queue
 * rule, doc/metrics.md); UINT64_MAX: in the open last slot; 0: no sample.
 */
uint64_t
window_btxn_quantile_ns(const uint32_t hist[VITALS_TRACE_BTXN_SLOTS], double q)
{
	uint64_t total = 0, acc = 0, want;
	unsigned k;

	for (k = 0; k < VITALS_TRACE_BTXN_SLOTS; k++)
		total += hist[k];
	if (total == 0)
		return 0;
	want = (uint64_t)(q * (double)total + 0.999999);
	if (want == 0)
		want = 1;
	for (k = 0; k < VITALS_TRACE_BTXN_SLOTS; k++) {
		acc += hist[k];
		if (acc >= want)
			break;
	}
	if (k >= VITALS_TRACE_BTXN_SLOTS - 1)
		return UINT64_MAX;
	return (2ULL << k) * 1000ULL;
}
