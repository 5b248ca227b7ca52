/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Start-up code given back (pageout.c): once the daemon has run its
 * start-up, the pages of its program and libraries that only the start
 * touched (the configuration's parse, the BPF set-up, the schema's checks)
 * stay resident for good though nothing reads them again. One
 * madvise(MADV_PAGEOUT) over the read-only file mappings of the loaded
 * objects reclaims those of them that no other process maps; what runs
 * afterwards faults its pages back in, once. Android's own
 * CachedAppOptimizer reclaims the same way (process_madvise). The
 * kernel skips a private file mapping's file pages unless the caller
 * owns the file or may write it: the daemon runs it before it drops to
 * its service user (main.c), as root, the files' owner.
 */
#ifndef VITALSD_PAGEOUT_H
#define VITALSD_PAGEOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pageout_range {
	uintptr_t start, end;
};

/* What one pageout did (Health.memory). before and after are RssFile
 * around it; the difference is what it gave back. */
struct pageout_stats {
	uint64_t before, after; /* RssFile, bytes */
	uint64_t advised;	/* bytes of the ranges advised */
	uint32_t ranges;	/* ranges advised */
	uint32_t failed;	/* ranges the kernel refused */
	int err;		/* the first refusal's -errno; 0 none */
	int64_t ns;		/* its time, CLOCK_MONOTONIC */
};

/*
 * The ranges of a maps text (/proc/<pid>/maps) to give back: every
 * mapping, not writable and private, of a file that also has an
 * executable mapping (a loaded program or library; data files, the
 * store's included, and anonymous or special mappings are left alone).
 * At most max into r; *ret_n the number found (may exceed max: only max
 * stored). -EINVAL: a line that is not a maps line.
 */
int pageout_parse(const char *buf, size_t len, struct pageout_range *r,
    size_t max, size_t *ret_n);

/* The calling process's ranges, from /proc/self/maps, advised
 * MADV_PAGEOUT; random: MADV_RANDOM first (a refault reads its page
 * alone, no read-ahead around it). 0, or -errno when the maps could not
 * be read; per-range refusals are counted in ret->failed. */
int pageout_self(bool random, struct pageout_stats *ret);

#endif /* VITALSD_PAGEOUT_H */
