/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what applications and the kernel hand the ftrace
 * reader: ATrace marker payloads (any process may write trace_marker) go
 * through atrace_parse() and the slice trackers, and raw ring-buffer
 * pages through fdec_page() with the fixture event formats. The first
 * byte picks the path.
 */
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

static struct fdec *dec;
static struct atrace *at;
static struct window_trace wt;

static void
to_atrace(const struct ftrace_rec *r, void *arg)
{
	(void)arg;
	atrace_record(at, r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ftrace_rec r;
	const char *p, *end;
	uint64_t ts = 0;
	int64_t missed;

	if (at == NULL && atrace_new(&at) < 0)
		abort();
	if (dec == NULL && fdec_new(getenv("FUZZ_EVENTS") ?
	    getenv("FUZZ_EVENTS") : "../tests/fixtures/ftrace/events",
	    &dec) < 0)
		abort();
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		/* a page: at most one sub-buffer */
		uint8_t page[4096];
		size_t n = size - 1 > sizeof(page) ? sizeof(page) : size - 1;

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
			atrace_record(at, &r);
			p += len + 1;
		}
		if (data[0] & 2)
			atrace_lost(at);
	}
	if (data[0] & 4)
		atrace_finish(at);
	memset(&wt, 0, sizeof(wt));
	atrace_window(at, &wt);
	if (wt.nslices > VITALS_TRACE_SLICES)
		abort();
	return 0;
}
