/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store_* settings' defaults (doc/vitalsd.8.md): in config's layer,
 * so config calls nothing above it; the store and its tests start from
 * the same values.
 */
#include "store/store.h"

void
store_opts_default(struct store_opts *o)
{
	o->rollup1_after_s = 6 * 3600;
	o->rollup1_s = 60;
	o->rollup2_after_s = 24 * 3600;
	o->rollup2_s = 600;
	o->rollup2_threads = false; /* level 2 keeps processes only */
	o->burst_keep_s = 24 * 3600;
	o->rollup_batch_s = 3600; /* roll an hour at once (store_maint.c) */
	o->retain_s = 7 * 24 * 3600;
	o->max_bytes = 32ULL << 20;
	o->busy_timeout_ms = 2000;
	o->clock_jump_s = STORE_CLOCK_JUMP_S;
	o->clock_stable_s = STORE_CLOCK_STABLE_S;
	o->io_path = NULL;    /* /proc/self/io */
	o->spool_path = NULL; /* window by window commits */
	o->commit_s = 900; /* a power cut loses at most this (doc/storage.md) */
	o->vacuum = STORE_VACUUM_NONE; /* no pointer maps (store.c) */
	o->no_spans = false; /* level 0 in tables per span (store_span.c) */
}
