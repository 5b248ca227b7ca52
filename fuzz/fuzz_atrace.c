/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what applications and the kernel hand the ftrace
 * reader: ATrace marker payloads (any process may write trace_marker) go
 * through atrace_parse() and the slice trackers, and raw ring-buffer
 * pages through fdec_page() with the fixture event formats. The first
 * byte picks the path (bit 0), a lost-events mark (bit 1), the reader's
 * stop (bit 2) and whether windows also close while the records come
 * (bit 3: after the 1st, 2nd, 4th, 8th... record, so that slices and
 * async spans stay open across windows; a window per record made one
 * long input cost thousands of window closes) rather than once at the
 * end.
 *
 * Fault phases (phase.c) ride along: every tracker has one, whose names
 * match most markers, and the input is also parsed as /proc/<pid>/maps
 * (phase_maps.c), the ranges checked for the order lookups rely on.
 *
 * Every input gets a tracker of its own, so that a crash reproduces from
 * its input alone. A tracker kept across inputs only grew: its hash
 * tables keep their largest capacity (up to 16 k entries), every window
 * walks them, and a run slowed from ~37,000 to a few thousand exec/s
 * under ASan without reaching paths a fresh one does not.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/phase.h"
#include "vitalsd.h"

static struct fdec *dec;
static struct atrace *at;
static struct window_trace wt;
static bool each; /* windows close while the records come */
static unsigned nrec;

/* Close a window as ftrace.c does (a fresh window_trace each time). */
static void
window(void)
{
	memset(&wt, 0, sizeof(wt));
	atrace_window(at, &wt);
	if (wt.nslices > VITALS_TRACE_SLICES ||
	    wt.ncounters > VITALS_TRACE_COUNTERS ||
	    wt.nbinder > VITALS_TRACE_BINDER || wt.nrq > VITALS_TRACE_RQ ||
	    wt.ngpu > VITALS_TRACE_GPU || wt.nbtxn > VITALS_TRACE_BTXN ||
	    wt.nphase > VITALS_TRACE_PHASES)
		abort();
}

/* threads 1..3 (markers) and whatever the pages say: their own process */
static int32_t
tgid_self(int32_t tid, void *arg)
{
	(void)arg;
	return tid > 0 ? tid % 7 + 1 : -1;
}

/* The input as a maps file: ranges ascending and not overlapping. */
static void
maps(const uint8_t *data, size_t size)
{
	static struct phase_range r[64];
	uint64_t bad = 0, cut = 0;
	size_t i, n = 0;

	phase_maps_parse((const char *)data, size, r, 64, &n, &bad, &cut);
	if (n > 64)
		abort();
	for (i = 0; i < n; i++) {
		if (r[i].end <= r[i].start || r[i].cls >= PCLASS__MAX ||
		    (i && r[i].start < r[i - 1].end))
			abort();
		if (phase_maps_class_addr(r, n, r[i].start) != r[i].cls)
			abort();
	}
	(void)phase_maps_class_file(r, n, r[0].dev, n ? r[0].ino : 0);
}

static void
to_atrace(const struct ftrace_rec *r, void *arg)
{
	(void)arg;
	atrace_record(at, r);
	nrec++;
	if (each && (nrec & (nrec - 1)) == 0)
		window();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ftrace_rec r;
	const char *p, *end;
	uint64_t ts = 0;
	int64_t missed;

	if (dec == NULL &&
	    fdec_new(getenv("FUZZ_EVENTS") ? getenv("FUZZ_EVENTS") :
					     "../tests/fixtures/ftrace/events",
		&dec) < 0)
		abort();
	if (size < 1)
		return 0;
	if (atrace_new(&at) < 0)
		abort();
	{
		struct phase *ph;

		if (phase_new("a*,b*,c*,d*,e*,f*,phase", 4, -1, &ph) < 0)
			abort();
		phase_set_tgid_fn(ph, tgid_self, NULL);
		atrace_set_phase(at, ph);
		atrace_phase_events(at, (1u << FEV__MAX) - 1);
	}
	maps(data, size);
	each = data[0] & 8;
	nrec = 0;
	if (data[0] & 1) {
		/* a page: at most one sub-buffer */
		uint8_t page[4096];
		size_t n = size - 1 > sizeof(page) ? sizeof(page) : size - 1;

		/* the rest zeroed: a run repeats (kbuffer reads the whole
		 * page whatever the length says) */
		memset(page, 0, sizeof(page));
		memcpy(page, data + 1, n);
		fdec_page(dec, page, n, 0, to_atrace, NULL, &missed);
	} else {
		/* markers, one per line, from alternating threads */
		p = (const char *)data + 1;
		end = (const char *)data + size;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = (size_t)((nl ? nl : end) - p);

			memset(&r, 0, sizeof(r));
			r.ts = ts += 1000;
			r.tid = (int32_t)(ts / 1000 % 3) + 1;
			r.ev = FEV_PRINT;
			r.u.print.buf = p;
			r.u.print.len = len;
			to_atrace(&r, NULL);
			p += len + 1;
		}
		if (data[0] & 2)
			atrace_lost(at);
	}
	if (data[0] & 4)
		atrace_finish(at);
	window();
	at = atrace_free(at);
	return 0;
}
