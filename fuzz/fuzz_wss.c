/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the working-set monitor's parsers of what another
 * process controls: /proc/<pid>/maps lines (a mapping's path is any name
 * the process chose), /proc/<pid>/smaps text, and pagemap entries, which
 * go through the page_idle word batching. Each result is checked for the
 * invariants the monitor relies on.
 */
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *e = p + size, *nl;
	struct wss_smaps *sm = NULL;
	struct wss_idle b = { 0 };
	char label[WSS_LABEL_LEN];
	uint64_t pfn[64];
	struct wss_map m;
	size_t i, n = 0, k;

	for (; p < e; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(e - p))) == NULL)
			nl = e;
		if (wss_maps_line(p, (size_t)(nl - p), &m) < 0)
			continue;
		if (m.end <= m.start || strlen(m.perms) != 4 ||
		    strlen(m.path) >= sizeof(m.path))
			abort();
		(void)wss_map_selected(&m, WSS_MODE_HEAP, NULL, false);
		(void)wss_map_selected(&m, WSS_MODE_LIBRARY, "libc.so", true);
		wss_map_label(&m, WSS_MODE_LIBRARY, label, sizeof(label));
	}
	if (wss_smaps_parse((const char *)data, size, &sm, &n) == 0) {
		for (i = 0; i < n; i++)
			if (sm[i].end <= sm[i].start)
				abort();
		free(sm);
	}
	/* the input's words as pagemap entries: decode and batch */
	k = size / 8 < 64 ? size / 8 : 64;
	for (i = 0; i < k; i++) {
		struct wss_pm pm;
		uint64_t raw;

		memcpy(&raw, data + i * 8, 8);
		wss_pm_decode(raw, &pm);
		if (!pm.present && pm.pfn)
			abort();
		pfn[i] = pm.pfn;
	}
	if (wss_idle_build(&b, pfn, k) == 0) {
		for (i = 1; i < b.n; i++)
			if (b.word[i] <= b.word[i - 1])
				abort();
		for (i = 0; i < k; i++)
			if (pfn[i] && wss_idle_state(&b, pfn[i]) != 1)
				abort(); /* bits[] are 0: every PFN "accessed" */
	}
	wss_idle_release(&b);
	return 0;
}
