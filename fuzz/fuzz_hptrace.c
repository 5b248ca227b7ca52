/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the heapprofd trace check (hp_trace.c): the input
 * is a trace file as perfetto left it, checked against two target pids;
 * its verdict summarised as the daemon would record it. Seeds in
 * fuzz/corpus/hptrace/ are traces of each kind the stand-in perfetto
 * writes (tests/fake_perfetto.c).
 */
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int32_t pids[] = { 4242, 4243 };
	struct hp_trace_verdict v;
	char line[256];

	hp_trace_check(data, size, pids, 2, &v);
	if ((unsigned)v.outcome >= HP_PROF__MAX)
		abort();
	hp_trace_summary(&v, line, sizeof(line));
	(void)hp_profile_name(v.outcome);
	return 0;
}
