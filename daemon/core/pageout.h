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
 *
 * The pageout also skips every page another process maps too: the C
 * library's text, mapped by most of the system, stays in the daemon's
 * page tables as the start left it (1.2 of its 1.4 MiB). So a range with
 * no page of the daemon's own (smaps' Anonymous 0: nothing relocated or
 * otherwise written into it) is then dropped from the page tables whole,
 * madvise(MADV_DONTNEED): the pages stay in the page cache for the other
 * processes, and what the daemon runs afterwards maps back from there
 * (a minor fault per 64 KiB block). A range that holds written pages
 * (RELRO after relocation) is only paged out: dropping it would lose
 * them; and a range is dropped only inside a loaded object's segment
 * that its ELF says is never written (pageout.c says why). Set-up runs a
 * pass at each of its phases (daemon.c), so its peak holds only a
 * phase's pages, not the whole start's.
 */
#ifndef VITALSD_PAGEOUT_H
#define VITALSD_PAGEOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pageout_range {
	uintptr_t start, end;
	/* no page of this process's own in it (smaps' Anonymous 0): may be
	 * dropped whole; false when not known (a maps text) */
	bool clean;
};

/* What a pageout did (Health.memory). before and after are RssFile
 * around it; the difference is what it gave back. Summed over passes
 * (pageout_add): passes, given, failed and ns over all of them, the rest
 * the last pass's. */
struct pageout_stats {
	uint64_t before, after; /* RssFile, bytes */
	uint64_t advised;	/* bytes of the ranges advised */
	uint64_t unmapped;	/* of advised: ranges dropped whole */
	uint64_t given;		/* RssFile given back: before - after, summed */
	uint32_t ranges;	/* ranges advised */
	uint32_t kept;	 /* ranges with pages of its own: paged out only */
	uint32_t failed; /* ranges the kernel refused */
	uint32_t passes; /* pageouts run */
	int err;	 /* the first refusal's -errno; 0 none */
	int64_t ns;	 /* its time, CLOCK_MONOTONIC */
};

/* One more pass into sum (zeroed before the first). */
void pageout_add(struct pageout_stats *sum, const struct pageout_stats *pass);

/*
 * The ranges of a maps or smaps text (/proc/<pid>/maps, smaps) to give
 * back: every mapping, not writable and private, of a file that also has
 * an executable mapping (a loaded program or library; data files, the
 * store's included, and anonymous or special mappings are left alone).
 * From smaps a range is clean when its Anonymous line says 0 kB; from
 * maps (no such line) none is. At most max into r; *ret_n the number
 * found (may exceed max: only max stored). -EINVAL: a line that is
 * neither a maps line nor, after one, an smaps field ("Name: ...").
 */
int pageout_parse(const char *buf, size_t len, struct pageout_range *r,
    size_t max, size_t *ret_n);

/* The calling process's ranges, from /proc/self/smaps, advised
 * MADV_PAGEOUT, then the clean ones MADV_DONTNEED; random: MADV_RANDOM
 * first (a refault reads its page alone, no read-ahead around it). 0, or
 * -errno when smaps could not be read; per-range refusals are counted in
 * ret->failed. */
int pageout_self(bool random, struct pageout_stats *ret);
/* The same; reclaim false: no MADV_PAGEOUT (nor MADV_RANDOM), only the
 * clean ranges dropped from the page tables, their pages left cached. */
int pageout_pass(bool reclaim, bool random, struct pageout_stats *ret);

/*
 * Settling passes, once the daemon runs: its first windows run code no
 * later window does (each statement's first prepare, the first encodes,
 * the first maintenance), and those pages stay mapped though nothing
 * runs them again. A thread of its own (signals blocked) sleeps and runs
 * a pass without reclaim (pageout_pass) at 1.5, 3 and 6.5 windows of
 * window_s after the start, then ends: only the clean ranges are dropped,
 * their pages stay cached, so what the loop runs again maps back with a
 * minor fault, never a read (with MADV_PAGEOUT, a root daemon's loop
 * stalled 56 ms in check_loop_offload re-reading its code). A pass costs
 * ~10 ms of that thread's CPU. 0 or -errno (the
 * thread not made: no pass, said by pageout_settle_get).
 */
int pageout_settle_start(unsigned window_s);
/* Wakes and joins the thread if it still runs (a pass in progress ends
 * first); safe when none was started. */
void pageout_settle_stop(void);
/* The settling passes so far, summed as pageout_add sums (passes 0:
 * none yet). */
void pageout_settle_get(struct pageout_stats *ret);

#endif /* VITALSD_PAGEOUT_H */
