/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_sum DB: the ftrace figures a stopped vitalsd stored, summed over
 * every window of DB, read through the store (the counters are named
 * entries of each window's kv blob, not rows SQL can sum): "ENTRIES LOST",
 * LOST being overrun + dropped + commit_overrun. For ftrace_flood.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "vitalsd.h"

int
main(int argc, char **argv)
{
	uint64_t entries = 0, lost = 0;
	struct store_opts o;
	struct window **v;
	struct store *s;
	size_t n = 0, i;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: trace_sum DB\n");
		return 2;
	}
	store_opts_default(&o);
	o.spool_path = NULL;
	if ((r = store_open(argv[1], &o, &s)) < 0 ||
	    (r = store_windows(s, 0, INT64_MAX / 2, 0, &v, &n)) < 0) {
		fprintf(stderr, "trace_sum: %s: error %d\n", argv[1], r);
		return 1;
	}
	for (i = 0; i < n; i++) {
		const struct window_trace *t = window_trace(v[i]);

		if (t != NULL) {
			entries += t->entries;
			lost += t->overrun + t->dropped + t->commit_overrun;
		}
		window_free(v[i]);
	}
	free(v);
	store_close(s);
	printf("%llu %llu\n", (unsigned long long)entries,
	    (unsigned long long)lost);
	return 0;
}
