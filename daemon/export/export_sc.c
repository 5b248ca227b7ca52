/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall latency for the exports (doc/export.md, "Syscall latency"):
 * each closed window's part folded into sums that only grow. A (process,
 * syscall) keeps its series once it has one; past EXPORT_SC_SERIES a new
 * one goes to "other", as the window's own "other" row does, so the
 * series and other always add up to every call counted. Histograms are
 * per syscall (a histogram per process would be 33 lines each); a call
 * under the floor (in count, not in hist) is put in the bucket holding
 * the floor, whose upper bound is above its latency: the buckets stay
 * valid upper bounds and +Inf equals the count.
 *
 * Pure: windows in, sums out; export_text.c and otlp_encode.c render.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "syscalls/sc_window.h"

static void
series_add(struct export_sc_series *s, const struct sc_row *r)
{
	unsigned i;

	s->count += r->count;
	for (i = 0; i < SC_ERR__MAX; i++)
		s->errors[i] += r->errors[i];
	s->sum_ns += r->sum_ns;
}

static void
series_row(struct export_sc *sc, const struct sc_row *r)
{
	struct export_sc_series *s;
	size_t i;

	for (i = 0; i < sc->nseries; i++) {
		s = &sc->series[i];
		/* keyed by its labels: two instances of one pid and comm (a
		 * reused pid; the bpfloader reader's start read late) share a
		 * series, which stays monotonic, and no label set repeats */
		if (s->tgid == r->tgid && s->nr == r->nr &&
		    strncmp(s->comm, r->comm, sizeof(s->comm)) == 0) {
			series_add(s, r);
			return;
		}
	}
	if (sc->nseries == EXPORT_SC_SERIES) {
		series_add(&sc->other, r);
		return;
	}
	s = &sc->series[sc->nseries++];
	s->tgid = r->tgid;
	s->start_ns = r->start_ns;
	s->nr = r->nr;
	memcpy(s->comm, r->comm, sizeof(s->comm));
	series_add(s, r);
}

/* the bucket a latency of floor_ns − 1 falls in */
static unsigned
floor_bucket(uint64_t floor_ns)
{
	unsigned b = 0;

	while (b + 1 < SC_HIST_N && ((uint64_t)2 << b) < floor_ns)
		b++;
	return b;
}

static void
hist_row(struct export_sc *sc, const struct sc_row *r, uint32_t nr,
    uint64_t floor_ns)
{
	struct export_sc_hist *h = NULL;
	size_t i;

	for (i = 0; i < sc->nhists; i++)
		if (sc->hists[i].nr == nr) {
			h = &sc->hists[i];
			break;
		}
	if (h == NULL && nr != EXPORT_SC_OTHER &&
	    sc->nhists < EXPORT_SC_HISTS) {
		h = &sc->hists[sc->nhists++];
		h->nr = nr;
	}
	if (h == NULL) /* the last slot is other's */
		h = &sc->hists[EXPORT_SC_HISTS];
	h->nr = h == &sc->hists[EXPORT_SC_HISTS] ? EXPORT_SC_OTHER : nr;
	h->count += r->count;
	h->sum_ns += r->sum_ns;
	for (i = 0; i < SC_HIST_N; i++)
		h->b[i] += r->hist[i];
	h->b[floor_bucket(floor_ns)] += r->fast;
}

int
export_sc_window(struct export_sc **scp, const struct window *w)
{
	const struct window_syscalls *p = window_syscalls(w);
	struct export_sc *sc = *scp;
	size_t i;

	if (p == NULL || p->state != SC_ON)
		return 0;
	if (sc == NULL) {
		if ((sc = calloc(1, sizeof(*sc))) == NULL)
			return -ENOMEM;
		sc->other.tgid = -1;
		sc->other.nr = EXPORT_SC_OTHER;
		sc->hists[EXPORT_SC_HISTS].nr = EXPORT_SC_OTHER;
		*scp = sc;
	}
	sc->arch = p->arch;
	for (i = 0; i < p->nrows; i++) {
		series_row(sc, &p->rows[i]);
		hist_row(sc, &p->rows[i], p->rows[i].nr, p->floor_ns);
	}
	series_add(&sc->other, &p->other);
	hist_row(sc, &p->other, EXPORT_SC_OTHER, p->floor_ns);
	sc->ctr.missing_enter += p->ctr.missing_enter;
	sc->ctr.mismatch += p->ctr.mismatch;
	sc->ctr.map_full += p->ctr.map_full;
	sc->ctr.rb_full += p->ctr.rb_full;
	sc->ctr.slow_dropped += p->ctr.slow_dropped;
	sc->ctr.compat += p->ctr.compat;
	sc->ctr.drain_errors += p->ctr.drain_errors;
	if (p->have & SC_HAVE_PROG_STATS) {
		sc->have_prog = true;
		sc->prog_run_ns += p->prog_run_ns;
		sc->prog_run_cnt += p->prog_run_cnt;
	}
	return 0;
}
