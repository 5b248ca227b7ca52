/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phases (phase.c, phase_maps.c, phase_window.c) fed raw ring-buffer
 * pages built byte by byte in the layouts of this kernel's format files
 * (copied under tests/fixtures/ftrace/events: exceptions/page_fault_user,
 * filemap/mm_filemap_fault and _add_to_page_cache, vmscan direct reclaim,
 * block/block_rq_issue), decoded by ftrace_events.c and handed to the
 * ATrace tracker as ftrace.c would. A fixture /proc holds the processes'
 * stat and maps. Then: nesting, two threads of one process, tid reuse,
 * lost events, the maps budget, garbage maps lines, class lookup, the
 * row bound, roll-up merge, the store and back, and the config key.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "config/config.h"
#include "trace/phase.h"
#include "vitalsd.h"

#define PAGE 4096
/* event ids of the fixture formats (this kernel's) */
#define ID_PRINT 5
#define ID_FAULT 190
#define ID_FMAP_FAULT 597
#define ID_FMAP_ADD 600
#define ID_RECLAIM_END 634
#define ID_RECLAIM_BEGIN 637
#define ID_BLOCK 2104

#define DEV_FD00 (253u << 20) /* fd:00 as the kernel's dev_t */
#define ALL_EVENTS (FEV_PHASE_MASK | 1u << FEV_PRINT)

/* ------------------------------------------------------ page building */

struct page {
	unsigned char b[PAGE];
	size_t len;
	uint64_t t0, last;
};

static struct page pg;
static struct fdec *dec;
static struct atrace *at;
static struct phase *ph;
static char *procdir;
static int procfd = -1;

static void
page_start(uint64_t ts)
{
	memset(&pg, 0, sizeof(pg));
	memcpy(pg.b, &ts, 8);
	pg.t0 = pg.last = ts;
}

/* One event at absolute time ts (after the page's last). */
static void
put(uint64_t ts, const void *data, size_t len)
{
	size_t words = (len + 3) / 4;
	uint32_t hdr, delta;

	ck_assert_uint_ge(ts, pg.last);
	ck_assert_uint_lt(ts - pg.last, 1u << 27);
	ck_assert_uint_le(words, 28);
	ck_assert_uint_le(16 + pg.len + 4 + words * 4, PAGE);
	delta = (uint32_t)(ts - pg.last);
	hdr = (uint32_t)words | delta << 5;
	memcpy(pg.b + 16 + pg.len, &hdr, 4);
	memcpy(pg.b + 16 + pg.len + 4, data, len);
	pg.len += 4 + words * 4;
	pg.last = ts;
}

static void
to_atrace(const struct ftrace_rec *r, void *arg)
{
	atrace_record(arg, r);
}

/* Seal and decode the page into the tracker; a new page starts after. */
static void
flush(void)
{
	uint64_t commit = pg.len;
	int64_t missed = 0;
	uint64_t last = pg.last;

	memcpy(pg.b + 8, &commit, 8);
	ck_assert_int_ge(fdec_page(dec, pg.b, PAGE, 0, to_atrace, at, &missed),
	    1);
	ck_assert_int_eq(missed, 0);
	page_start(last);
}

static void
common(unsigned char *d, uint16_t id, int32_t tid)
{
	memcpy(d, &id, 2);
	d[2] = d[3] = 0;
	memcpy(d + 4, &tid, 4);
}

static void
ev_print(uint64_t ts, int32_t tid, const char *text)
{
	unsigned char d[112] = { 0 };
	uint64_t ip = 0xffffffff81000000ULL;
	size_t n = strlen(text) + 1;

	common(d, ID_PRINT, tid);
	memcpy(d + 8, &ip, 8);
	memcpy(d + 16, text, n);
	put(ts, d, 16 + n);
}

static void
begin(uint64_t ts, int32_t tid, int32_t pid, const char *name)
{
	char b[96];

	snprintf(b, sizeof(b), "B|%d|%s", pid, name);
	ev_print(ts, tid, b);
}

static void
end(uint64_t ts, int32_t tid, int32_t pid)
{
	char b[32];

	snprintf(b, sizeof(b), "E|%d", pid);
	ev_print(ts, tid, b);
}

/* address @8, ip @16, error_code @24 */
static void
ev_fault(uint64_t ts, int32_t tid, uint64_t addr)
{
	unsigned char d[32] = { 0 };
	uint64_t ip = 0x400100, err = 6;

	common(d, ID_FAULT, tid);
	memcpy(d + 8, &addr, 8);
	memcpy(d + 16, &ip, 8);
	memcpy(d + 24, &err, 8);
	put(ts, d, sizeof(d));
}

/* i_ino @8, s_dev @16, index @24 */
static void
ev_fmap_fault(uint64_t ts, int32_t tid, uint64_t ino, uint64_t index)
{
	unsigned char d[32] = { 0 };
	uint32_t dev = DEV_FD00;

	common(d, ID_FMAP_FAULT, tid);
	memcpy(d + 8, &ino, 8);
	memcpy(d + 16, &dev, 4);
	memcpy(d + 24, &index, 8);
	put(ts, d, sizeof(d));
}

/* pfn @8, i_ino @16, index @24, s_dev @32, order @36 */
static void
ev_fmap_add(uint64_t ts, int32_t tid, uint64_t ino, uint64_t index,
    uint8_t order)
{
	unsigned char d[40] = { 0 };
	uint64_t pfn = 0x12345;
	uint32_t dev = DEV_FD00;

	common(d, ID_FMAP_ADD, tid);
	memcpy(d + 8, &pfn, 8);
	memcpy(d + 16, &ino, 8);
	memcpy(d + 24, &index, 8);
	memcpy(d + 32, &dev, 4);
	d[36] = order;
	put(ts, d, sizeof(d));
}

/* begin: order @8, gfp_flags @16; end: nr_reclaimed @8 */
static void
ev_reclaim(uint64_t ts, int32_t tid, bool is_end)
{
	unsigned char d[24] = { 0 };
	uint64_t v = is_end ? 32 : 0xcc0;
	int32_t order = 0;

	common(d, is_end ? ID_RECLAIM_END : ID_RECLAIM_BEGIN, tid);
	if (is_end) {
		memcpy(d + 8, &v, 8);
		put(ts, d, 16);
		return;
	}
	memcpy(d + 8, &order, 4);
	memcpy(d + 16, &v, 8);
	put(ts, d, sizeof(d));
}

/* dev @8, sector @16, nr_sector @24, bytes @28, ioprio @32, rwbs @34,
 * comm @44, cmd (__data_loc) @60, its string after */
static void
ev_block(uint64_t ts, int32_t tid, uint32_t bytes)
{
	unsigned char d[68] = { 0 };
	uint32_t dev = DEV_FD00, nr = bytes / 512, loc = 1u << 16 | 64;
	uint64_t sector = 2048;

	common(d, ID_BLOCK, tid);
	memcpy(d + 8, &dev, 4);
	memcpy(d + 16, &sector, 8);
	memcpy(d + 24, &nr, 4);
	memcpy(d + 28, &bytes, 4);
	memcpy(d + 34, "R", 2);
	memcpy(d + 44, "app", 4);
	memcpy(d + 60, &loc, 4);
	put(ts, d, 65);
}

static void
ev_exit(uint64_t ts, int32_t tid)
{
	struct ftrace_rec r;

	flush();
	memset(&r, 0, sizeof(r));
	r.ts = ts;
	r.tid = tid;
	r.ev = FEV_PROCESS_EXIT;
	r.u.exit.tid = tid;
	atrace_record(at, &r);
	page_start(ts);
}

/* -------------------------------------------------------- the fixture */

/* threads 100..199: process 1000, 200..299: 2000; tid 150 is moved
 * by the tid reuse test */
static int32_t moved_150 = 1000;

static int32_t
tgid_of(int32_t tid, void *arg)
{
	(void)arg;
	if (tid == 150)
		return moved_150;
	if (tid >= 100 && tid < 300)
		return tid / 100 * 1000;
	return -1;
}

static const char maps_1000[] =
    "00400000-00452000 r-xp 00000000 fd:00 1001     "
    "/system/bin/app_process64\n"
    "70000000-70100000 r--p 00000000 fd:00 2002 "
    "/system/framework/arm64/boot.art\n"
    "71000000-71200000 r-xp 00000000 fd:00 2003 /data/app/x/base.apk\n"
    "72000000-72100000 r--p 00200000 fd:00 2003 /data/app/x/base.apk\n"
    "73000000-73100000 r-xp 00000000 fd:00 2004 /system/lib64/libc.so\n"
    "74000000-74100000 rw-p 00000000 00:00 0 [anon:dalvik-main space]\n"
    "75000000-75100000 rw-p 00000000 00:00 0 \n"
    "76000000-76100000 r--p 00000000 fd:00 2005 /system/fonts/Roboto.ttf\n"
    "this line is not a mapping\n"
    "77000000-77100000 r--p 00000000 fd:00 2006 /data/misc/x.db\n"
    "7ffc0000-7ffe0000 rw-p 00000000 00:00 0                          "
    "[stack]\n"
    "7fff0000-7fff2000 r-xp 00000000 00:00 0 [vdso]\n";

static const char maps_2000[] =
    "74000000-74100000 rw-p 00000000 00:00 0 [heap]\n";

static void
proc_fixture(void)
{
	char path[PATH_MAX];
	static const char stat_fmt[] =
	    "%d (%s) S 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 4 0 "
	    "%llu 100000 50 18446744073709551615 1 1 0 0 0 0 0 4096 1 0 0 0 "
	    "17 0 0 0 0 0 0\n";
	char stat[512];

	procdir = tu_mkdtemp("phase");
	ck_assert_ptr_nonnull(procdir);
	snprintf(path, sizeof(path), "%s/1000/maps", procdir);
	ck_assert_int_eq(tu_writes(path, maps_1000), 0);
	snprintf(path, sizeof(path), "%s/1000/stat", procdir);
	snprintf(stat, sizeof(stat), stat_fmt, 1000, "com.example) x", 1000,
	    1000, 4242ULL);
	ck_assert_int_eq(tu_writes(path, stat), 0);
	snprintf(path, sizeof(path), "%s/2000/maps", procdir);
	ck_assert_int_eq(tu_writes(path, maps_2000), 0);
	snprintf(path, sizeof(path), "%s/2000/stat", procdir);
	snprintf(stat, sizeof(stat), stat_fmt, 2000, "other", 2000, 2000,
	    5151ULL);
	ck_assert_int_eq(tu_writes(path, stat), 0);
	procfd = open(procdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
}

static void
tracker(const char *names, unsigned budget, uint32_t enabled)
{
	ck_assert_int_eq(fdec_new(tu_srcpath("fixtures/ftrace/events"), &dec),
	    0);
	ck_assert_int_eq(atrace_new(&at), 0);
	atrace_set_tgid_fn(at, tgid_of, NULL);
	ck_assert_int_eq(phase_new(names, budget, procfd, &ph), 0);
	phase_set_tgid_fn(ph, tgid_of, NULL);
	atrace_set_phase(at, ph);
	atrace_phase_events(at, enabled);
	page_start(1000000000ULL);
}

static void
setup(void)
{
	moved_150 = 1000;
	proc_fixture();
}

static void
teardown(void)
{
	at = atrace_free(at); /* frees ph */
	ph = NULL;
	dec = fdec_free(dec);
	if (procfd >= 0)
		close(procfd);
	procfd = -1;
	tu_rmtree(procdir);
	free(procdir);
}

static struct window_trace *
close_window(void)
{
	struct window_trace *t = window_trace_new(true);

	ck_assert_ptr_nonnull(t);
	flush();
	atrace_window(at, t);
	return t;
}

static const struct window_trace_phase *
row(const struct window_trace *t, int32_t pid, const char *name)
{
	unsigned i;

	for (i = 0; i < t->nphase; i++)
		if (t->phase[i].pid == pid &&
		    strcmp(t->phase[i].name, name) == 0)
			return &t->phase[i];
	return NULL;
}

/* ------------------------------------------------------------- tests */

START_TEST(test_decode_formats)
{
	ck_assert_int_eq(fdec_new(tu_srcpath("fixtures/ftrace/events"), &dec),
	    0);
	ck_assert(fdec_has(dec, FEV_PAGE_FAULT));
	ck_assert(fdec_has(dec, FEV_FILEMAP_FAULT));
	ck_assert(fdec_has(dec, FEV_FILEMAP_ADD));
	ck_assert(fdec_has(dec, FEV_RECLAIM_BEGIN));
	ck_assert(fdec_has(dec, FEV_RECLAIM_END));
	ck_assert(fdec_has(dec, FEV_BLOCK_ISSUE));
	ck_assert_str_eq(ftrace_ev_name(FEV_FILEMAP_ADD),
	    "filemap/mm_filemap_add_to_page_cache");
}
END_TEST

/*
 * One phase of process 1000 on thread 101; thread 102 of the same process
 * faults too (counted), 201 of process 2000 does not. The major rule: a
 * filemap fault whose own page an add_to_page_cache of the same thread
 * brings in before that thread's next fault.
 */
START_TEST(test_deltas)
{
	const struct window_trace_phase *p;
	struct window_trace *t;
	uint64_t b = 1000100000ULL;

	tracker("bindApplication", 16, ALL_EVENTS);
	ev_fault(1000000100ULL, 101, 0x74000100); /* before B: not counted */
	begin(b, 101, 1000, "bindApplication");
	ev_fault(b + 1000, 101, 0x74000200); /* anon */
	ev_fault(b + 2000, 102, 0x73000010); /* so, other thread */
	ev_fault(b + 2500, 201, 0x74000010); /* process 2000 */
	ev_fault(b + 3000, 101, 0x71000100); /* dex: apk exec */
	ev_fmap_fault(b + 3100, 101, 2003, 0x100);
	ev_fmap_add(b + 3200, 101, 2003, 0xf0, 5); /* 0xf0..0x10f: major */
	ev_fault(b + 4000, 102, 0x73000020);	   /* so */
	ev_fmap_fault(b + 4100, 102, 2004, 7);
	ev_fault(b + 4200, 102, 0x73000030);	/* a new fault ends 7's wait */
	ev_fmap_add(b + 4300, 102, 2004, 7, 0); /* read, but not major */
	ev_fmap_fault(b + 4400, 102, 2005, 3);
	ev_fmap_add(b + 4500, 102, 2005, 4, 0); /* another page: not major */
	ev_reclaim(b + 5000, 101, false);
	ev_reclaim(b + 10000, 101, true);
	ev_block(b + 11000, 102, 8192);
	ev_block(b + 11500, 201, 4096); /* process 2000 */
	end(b + 20000, 101, 1000);
	ev_fault(b + 30000, 101, 0x74000300); /* after E: not counted */
	t = close_window();

	ck_assert_uint_eq(t->nphase, 1);
	ck_assert_ptr_nonnull(p = row(t, 1000, "bindApplication"));
	ck_assert_str_eq(p->comm, "com.example) x");
	ck_assert_uint_eq(p->start_ticks, 4242);
	ck_assert_uint_eq(p->count, 1);
	ck_assert_uint_eq(p->total_ns, 20000);
	ck_assert_uint_eq(p->max_ns, 20000);
	ck_assert_uint_eq(p->faults, 5);
	ck_assert_uint_eq(p->faults_by[PCLASS_ANON], 1);
	ck_assert_uint_eq(p->faults_by[PCLASS_SO], 3);
	ck_assert_uint_eq(p->faults_by[PCLASS_DEX], 1);
	ck_assert_uint_eq(p->file_faults, 3);
	ck_assert_uint_eq(p->major, 1);
	ck_assert_uint_eq(p->major_by[PCLASS_DEX], 1);
	ck_assert_uint_eq(p->pages_read, 34);
	ck_assert_uint_eq(p->reclaim, 1);
	ck_assert_uint_eq(p->reclaim_ns, 5000);
	ck_assert_uint_eq(p->blk, 1);
	ck_assert_uint_eq(p->blk_bytes, 8192);
	ck_assert_uint_eq(p->have, (1u << PHAVE__MAX) - 1);
	ck_assert_uint_eq(t->phase_events, 18);
	ck_assert_uint_eq(t->maps_reads, 1);
	ck_assert_uint_eq(t->maps_bad_lines, 1);
	ck_assert_uint_eq(t->fault_unknown, 0);
	ck_assert_uint_eq(t->phase_open, 0);
	ck_assert_uint_eq(t->phase_incomplete, 0);
	free(t);
}
END_TEST

/* Nested and overlapping phases each get their own deltas. */
START_TEST(test_nesting_two_threads)
{
	const struct window_trace_phase *p;
	struct window_trace *t;
	uint64_t b = 1000100000ULL;

	tracker("launch*,inflate", 16, ALL_EVENTS);
	begin(b, 101, 1000, "launch:main");
	ev_fault(b + 10, 101, 0x74000000);
	begin(b + 100, 101, 1000, "inflate");
	ev_fault(b + 110, 101, 0x74000000);
	begin(b + 120, 101, 1000, "measure"); /* not configured */
	ev_fault(b + 130, 101, 0x74000000);
	end(b + 140, 101, 1000);
	end(b + 200, 101, 1000); /* inflate */
	begin(b + 210, 102, 1000, "inflate");
	ev_fault(b + 220, 103, 0x74000000); /* a third thread: both count */
	end(b + 300, 101, 1000);	    /* launch:main */
	ev_fault(b + 310, 103, 0x74000000);
	end(b + 400, 102, 1000); /* inflate on 102 */
	t = close_window();

	ck_assert_ptr_nonnull(p = row(t, 1000, "launch:main"));
	ck_assert_uint_eq(p->count, 1);
	ck_assert_uint_eq(p->total_ns, 300);
	ck_assert_uint_eq(p->faults, 4);
	ck_assert_ptr_nonnull(p = row(t, 1000, "inflate"));
	ck_assert_uint_eq(p->count, 2);
	ck_assert_uint_eq(p->total_ns, 100 + 190);
	ck_assert_uint_eq(p->max_ns, 190);
	ck_assert_uint_eq(p->faults, 2 + 2);
	ck_assert_ptr_null(row(t, 1000, "measure"));
	ck_assert_uint_eq(t->nphase, 2);
	free(t);
}
END_TEST

/* A thread's exit ends its phase unseen; its tid, reused by another
 * process, begins a phase of that process. */
START_TEST(test_tid_reuse)
{
	const struct window_trace_phase *p;
	struct window_trace *t;
	uint64_t b = 1000100000ULL;

	tracker("work", 16, ALL_EVENTS);
	begin(b, 150, 1000, "work");
	ev_fault(b + 10, 150, 0x74000000);
	ev_exit(b + 20, 150);
	moved_150 = 2000;
	begin(b + 30, 150, 2000, "work");
	ev_fault(b + 40, 150, 0x74000000);
	ev_fault(b + 50, 101, 0x74000000); /* process 1000: nothing open */
	end(b + 60, 150, 2000);
	t = close_window();

	ck_assert_ptr_nonnull(p = row(t, 1000, "work"));
	ck_assert_uint_eq(p->count, 0);
	ck_assert_uint_eq(p->incomplete, 1);
	ck_assert_ptr_nonnull(p = row(t, 2000, "work"));
	ck_assert_uint_eq(p->count, 1);
	ck_assert_uint_eq(p->faults, 1);
	ck_assert_uint_eq(p->faults_by[PCLASS_ANON], 1); /* [heap] */
	ck_assert_uint_eq(p->start_ticks, 5151);
	ck_assert_uint_eq(t->phase_incomplete, 1);
	free(t);
}
END_TEST

/* Lost events make open phases incomplete; their E then ends nothing. A
 * phase open at the close is counted open, and ends in the next window
 * with the deltas of both. */
START_TEST(test_lost_and_open)
{
	const struct window_trace_phase *p;
	struct window_trace *t;
	uint64_t b = 1000100000ULL;

	tracker("work", 16, ALL_EVENTS);
	begin(b, 101, 1000, "work");
	ev_fault(b + 10, 101, 0x74000000);
	flush();
	atrace_lost(at);
	end(b + 60, 101, 1000);
	begin(b + 100, 102, 1000, "work");
	ev_fault(b + 110, 102, 0x74000000);
	t = close_window();
	ck_assert_ptr_nonnull(p = row(t, 1000, "work"));
	ck_assert_uint_eq(p->count, 0);
	ck_assert_uint_eq(p->incomplete, 1);
	ck_assert_uint_eq(p->open, 1);
	ck_assert_uint_eq(t->phase_open, 1);
	free(t);

	ev_fault(b + 200, 102, 0x74000000);
	end(b + 300, 102, 1000);
	t = close_window();
	ck_assert_ptr_nonnull(p = row(t, 1000, "work"));
	ck_assert_uint_eq(p->count, 1);
	ck_assert_uint_eq(p->total_ns, 200);
	ck_assert_uint_eq(p->faults, 2);
	ck_assert_uint_eq(p->open, 0);
	ck_assert_uint_eq(t->phase_open, 0);
	free(t);
}
END_TEST

/* fault_maps_reads = 1: the second process's maps wait for the next
 * window; its faults meanwhile are unknown, counted. */
START_TEST(test_maps_budget)
{
	const struct window_trace_phase *p;
	struct window_trace *t;
	uint64_t b = 1000100000ULL;

	tracker("work", 1, ALL_EVENTS);
	begin(b, 101, 1000, "work");
	begin(b + 1, 201, 2000, "work");
	ev_fault(b + 10, 101, 0x74000000);
	ev_fault(b + 20, 201, 0x74000000);
	ev_fault(b + 30, 201, 0x74000000);
	ev_fault(b + 40, 101, 0x10); /* in no range: unknown, read once */
	end(b + 50, 101, 1000);
	end(b + 60, 201, 2000);
	t = close_window();
	ck_assert_uint_eq(t->maps_reads, 1);
	ck_assert_uint_eq(t->maps_skipped, 1); /* one process refused */
	ck_assert_uint_eq(t->fault_unknown, 3);
	ck_assert_ptr_nonnull(p = row(t, 2000, "work"));
	ck_assert_uint_eq(p->faults_by[PCLASS_UNKNOWN], 2);
	ck_assert_ptr_nonnull(p = row(t, 1000, "work"));
	ck_assert_uint_eq(p->faults_by[PCLASS_ANON], 1);
	ck_assert_uint_eq(p->faults_by[PCLASS_UNKNOWN], 1);
	free(t);

	/* a new window, a new budget */
	begin(b + 100, 201, 2000, "work");
	ev_fault(b + 110, 201, 0x74000000);
	end(b + 120, 201, 2000);
	t = close_window();
	ck_assert_uint_eq(t->maps_reads, 1);
	ck_assert_uint_eq(t->maps_skipped, 0);
	ck_assert_ptr_nonnull(p = row(t, 2000, "work"));
	ck_assert_uint_eq(p->faults_by[PCLASS_ANON], 1);
	free(t);
}
END_TEST

/* Without the filemap events, what they give is unknown, not 0. */
START_TEST(test_have_bits)
{
	const struct window_trace_phase *p;
	struct window_trace *t;
	uint64_t b = 1000100000ULL;

	tracker("work", 16, 1u << FEV_PRINT | 1u << FEV_PAGE_FAULT);
	begin(b, 101, 1000, "work");
	ev_fault(b + 10, 101, 0x74000000);
	end(b + 20, 101, 1000);
	t = close_window();
	ck_assert_ptr_nonnull(p = row(t, 1000, "work"));
	ck_assert_uint_eq(p->have, 1u << PHAVE_FAULTS);
	free(t);
}
END_TEST

/* More rows than a window keeps: the heaviest stay, the rest summed. */
START_TEST(test_rows_bounded_and_merge)
{
	struct window_trace *t, *acc = NULL;
	uint64_t b = 1000100000ULL;
	char name[32];
	unsigned i;

	tracker("row*", 16, ALL_EVENTS);
	for (i = 0; i < VITALS_TRACE_PHASES + 8; i++) {
		snprintf(name, sizeof(name), "row%u", i);
		begin(b + i * 1000, 101, 1000, name);
		ev_fault(b + i * 1000 + 10, 101, 0x74000000);
		end(b + i * 1000 + 100 + i, 101, 1000);
		if (i % 16 == 15)
			flush();
	}
	t = close_window();
	ck_assert_uint_eq(t->nphase, VITALS_TRACE_PHASES);
	ck_assert_uint_eq(t->phase_other, 8);
	ck_assert_uint_eq(t->phase_rest.count, 8);
	ck_assert_uint_eq(t->phase_rest.faults, 8);
	/* the longest (row39) first, the shortest eight in the rest */
	ck_assert_str_eq(t->phase[0].name, "row39");
	ck_assert_ptr_null(row(t, 1000, "row0"));
	ck_assert_ptr_nonnull(row(t, 1000, "row8"));

	ck_assert_int_eq(window_trace_merge(&acc, t), 0);
	ck_assert_int_eq(window_trace_merge(&acc, t), 0);
	ck_assert_uint_eq(acc->nphase, VITALS_TRACE_PHASES);
	ck_assert_uint_eq(row(acc, 1000, "row39")->count, 2);
	ck_assert_uint_eq(row(acc, 1000, "row39")->faults, 2);
	ck_assert_uint_eq(acc->phase_rest.count, 16);
	ck_assert_uint_eq(acc->phase_other, 16);
	ck_assert_uint_eq(acc->phase_events, 2 * t->phase_events);
	window_trace_free(acc);
	free(t);
}
END_TEST

/* open is a gauge: a row open at one close and absent from the next
 * window (no rows at all there) is no longer open in the merge */
START_TEST(test_merge_open_gauge)
{
	struct window_trace *t, *e, *acc = NULL;
	uint64_t b = 1000100000ULL;

	tracker("work", 16, ALL_EVENTS);
	begin(b, 101, 1000, "work");
	ev_fault(b + 10, 101, 0x74000000);
	t = close_window();
	ck_assert_ptr_nonnull(row(t, 1000, "work"));
	ck_assert_uint_eq(row(t, 1000, "work")->open, 1);
	ck_assert_ptr_nonnull(e = window_trace_new(true));
	ck_assert_uint_eq(e->nphase, 0);
	ck_assert_int_eq(window_trace_merge(&acc, t), 0);
	ck_assert_uint_eq(row(acc, 1000, "work")->open, 1);
	ck_assert_int_eq(window_trace_merge(&acc, e), 0);
	ck_assert_uint_eq(row(acc, 1000, "work")->open, 0);
	ck_assert_uint_eq(row(acc, 1000, "work")->faults,
	    row(t, 1000, "work")->faults);
	window_trace_free(acc);
	window_trace_free(e);
	free(t);
}
END_TEST

START_TEST(test_maps_parse)
{
	struct phase_range r[16];
	uint64_t bad = 0, cut = 0;
	size_t n = 0;

	ck_assert_int_eq(phase_maps_parse(maps_1000, strlen(maps_1000), r, 16,
			     &n, &bad, &cut),
	    0);
	ck_assert_uint_eq(n, 11);
	ck_assert_uint_eq(bad, 1);
	ck_assert_uint_eq(cut, 0);
	ck_assert_uint_eq(r[0].dev, DEV_FD00);
	ck_assert_uint_eq(r[0].ino, 1001);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x70000010), PCLASS_DEX);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x71000000), PCLASS_DEX);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x720fffff), PCLASS_RES);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x72100000),
	    PCLASS_UNKNOWN);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x73000000), PCLASS_SO);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x74000000), PCLASS_ANON);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x75000000), PCLASS_ANON);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x76000000), PCLASS_RES);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x77000000), PCLASS_FILE);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x7ffc0000),
	    PCLASS_STACK);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x7fff0000),
	    PCLASS_OTHER);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x400000), PCLASS_FILE);
	ck_assert_uint_eq(phase_maps_class_addr(r, n, 0x3fffff),
	    PCLASS_UNKNOWN);
	/* a file by (dev, ino): an .apk mapped both ways is code */
	ck_assert_uint_eq(phase_maps_class_file(r, n, DEV_FD00, 2003),
	    PCLASS_DEX);
	ck_assert_uint_eq(phase_maps_class_file(r, n, DEV_FD00, 2004),
	    PCLASS_SO);
	ck_assert_uint_eq(phase_maps_class_file(r, n, DEV_FD00 + 1, 2004),
	    PCLASS_UNKNOWN);
	ck_assert_uint_eq(phase_maps_class_file(r, n, 0, 0), PCLASS_UNKNOWN);

	/* the bound: ranges beyond it counted */
	bad = cut = 0;
	ck_assert_int_eq(phase_maps_parse(maps_1000, strlen(maps_1000), r, 4,
			     &n, &bad, &cut),
	    0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(cut, 7);
	/* garbage of every kind, and out of order */
	{
		static const char g[] =
		    "zz-10 r--p 0 00:00 0\n"
		    "2000-1000 r--p 00000000 00:00 0\n"
		    "1000-2000 rwzp 00000000 00:00 0\n"
		    "1000-2000 r--p 00000000 0000 0\n"
		    "1000-2000 r--p 00000000 00:00 x\n"
		    "1000-2000 r--p 00000000 00:00 0\n"
		    "1800-3000 r--p 00000000 00:00 0\n"
		    "12345678901234567-2 r--p 0 00:00 0\n"
		    "\n"
		    "3000-4000 r--s 00000000 08:01 77 /a b/c.so.1";

		bad = cut = 0;
		ck_assert_int_eq(phase_maps_parse(g, strlen(g), r, 16, &n, &bad,
				     &cut),
		    0);
		ck_assert_uint_eq(n, 2);
		ck_assert_uint_eq(bad, 7);
		ck_assert_uint_eq(r[1].cls, PCLASS_SO);
		ck_assert_uint_eq(r[1].dev, 8u << 20 | 1);
		bad = 0;
		ck_assert_int_eq(phase_maps_parse("junk\n", 5, r, 16, &n, &bad,
				     &cut),
		    -EINVAL);
		ck_assert_uint_eq(bad, 1);
	}
}
END_TEST

START_TEST(test_class_of_path)
{
	static const struct {
		const char *path;
		bool exec;
		unsigned cls;
	} c[] = {
		{ "", false, PCLASS_ANON },
		{ "[heap]", false, PCLASS_ANON },
		{ "[anon:scudo:primary]", false, PCLASS_ANON },
		{ "/memfd:jit-cache (deleted)", true, PCLASS_ANON },
		{ "/dev/ashmem/dalvik (deleted)", false, PCLASS_ANON },
		{ "[stack]", false, PCLASS_STACK },
		{ "[vdso]", true, PCLASS_OTHER },
		{ "/system/framework/oat/arm64/services.odex", true,
		    PCLASS_DEX },
		{ "/data/dalvik-cache/arm64/boot.vdex", false, PCLASS_DEX },
		{ "/apex/com.android.art/javalib/core-oj.jar", false,
		    PCLASS_DEX },
		{ "/system/framework/framework.jar", false, PCLASS_DEX },
		{ "/data/app/x/base.apk", true, PCLASS_DEX },
		{ "/data/app/x/base.apk", false, PCLASS_RES },
		{ "/system/lib64/libart.so", true, PCLASS_SO },
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", true, PCLASS_SO },
		{ "/usr/lib/libc.so.6/notso", false, PCLASS_FILE },
		{ "/system/fonts/NotoSansCJK-Regular.ttc", false, PCLASS_RES },
		{ "/data/resource-cache/x.idmap", false, PCLASS_RES },
		{ "/data/data/x/databases/a.db", false, PCLASS_FILE },
		{ "/data/app/x/lib.so (deleted)", true, PCLASS_SO },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ck_assert_msg(phase_class_of_path(c[i].path, strlen(c[i].path),
				  c[i].exec) == c[i].cls,
		    "%s", c[i].path);
	ck_assert_str_eq(phase_class_name(PCLASS_RES), "res");
	ck_assert_str_eq(phase_class_name(PCLASS__MAX), "?");
}
END_TEST

START_TEST(test_config)
{
	struct config cfg;
	char out[8192];
	char many[256] = "";
	int i;

	ck_assert_int_eq(config_parse_fault_phases(" a , b* ,c", out,
			     sizeof(out)),
	    0);
	ck_assert_str_eq(out, "a,b*,c");
	ck_assert_int_eq(config_parse_fault_phases("off", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(config_parse_fault_phases("", out, sizeof(out)), 0);
	ck_assert_int_eq(config_parse_fault_phases("a|b", out, sizeof(out)),
	    -EINVAL);
	ck_assert_int_eq(config_parse_fault_phases("*", out, sizeof(out)),
	    -EINVAL);
	ck_assert_int_eq(config_parse_fault_phases("a*b", out, sizeof(out)),
	    -EINVAL);
	ck_assert_int_eq(config_parse_fault_phases("a,", out, sizeof(out)),
	    -EINVAL);
	ck_assert_int_eq(config_parse_fault_phases("a,,b", out, sizeof(out)),
	    -EINVAL);
	ck_assert_int_eq(config_parse_fault_phases("a\tb\x01", out,
			     sizeof(out)),
	    -EINVAL);
	for (i = 0; i < 17; i++)
		strcat(many, i ? ",n" : "n");
	ck_assert_int_eq(config_parse_fault_phases(many, out, sizeof(out)),
	    -EINVAL);
	config_init(&cfg);
	ck_assert_ptr_null(cfg.fault_phases);
	ck_assert_uint_eq(cfg.fault_maps_reads, FAULT_MAPS_READS_DEFAULT);
	ck_assert_int_eq(config_set(&cfg, "fault_phases",
			     "bindApplication, activityStart*"),
	    0);
	ck_assert_str_eq(cfg.fault_phases, "bindApplication,activityStart*");
	ck_assert_int_eq(config_set(&cfg, "fault_maps_reads", "4"), 0);
	ck_assert_uint_eq(cfg.fault_maps_reads, 4);
	ck_assert_int_lt(config_set(&cfg, "fault_maps_reads", "99999"), 0);
	ck_assert_int_lt(config_set(&cfg, "fault_phases", "x|y"), 0);
	ck_assert_str_eq(cfg.fault_phases, "bindApplication,activityStart*");
	ck_assert_int_eq(config_set(&cfg, "fault_phases", "off"), 0);
	ck_assert_ptr_null(cfg.fault_phases);
	config_release(&cfg);
	/* the tracker takes the normalised list, and nothing else */
	ck_assert_int_eq(phase_new("a,b*", 1, -1, &ph), 0);
	ck_assert(phase_match(ph, "a"));
	ck_assert(!phase_match(ph, "ab"));
	ck_assert(phase_match(ph, "b"));
	ck_assert(phase_match(ph, "bxyz"));
	ph = phase_free(ph);
	ck_assert_int_eq(phase_new("a,,b", 1, -1, &ph), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------ store */

START_TEST(test_store_round_trip)
{
	int64_t wall = 1700000000LL * NSEC_PER_SEC;
	struct window *w = window_new(1, 0), **ws = NULL;
	struct window_trace *t, *g;
	struct store *s = NULL;
	char path[PATH_MAX], v[64];
	size_t n = 0;
	unsigned k;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b0075e7e-0000-4000-8000-8");
	w->hz = 100;
	w->mono_end_ns = 10 * NSEC_PER_SEC;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + 10 * NSEC_PER_SEC;
	ck_assert_ptr_nonnull(t = window_trace_make(w, true));
	t->state = FTRACE_ON;
	t->nphase = 2;
	for (k = 0; k < 2; k++) {
		struct window_trace_phase *p = &t->phase[k];
		unsigned c;

		p->pid = 1000 + (int32_t)k;
		p->have = k ? 1u << PHAVE_FAULTS : (1u << PHAVE__MAX) - 1;
		p->start_ticks = 4242 + k;
		snprintf(p->comm, sizeof(p->comm), "app%u", k);
		snprintf(p->name, sizeof(p->name), "phase %u", k);
		p->count = 3 + k;
		p->incomplete = 1;
		p->open = k;
		p->total_ns = 5000000000ULL + k;
		p->max_ns = 3000000000ULL;
		p->faults = 1234567;
		p->file_faults = 4567;
		p->major = 89;
		p->pages_read = 1000;
		p->reclaim = 2;
		p->reclaim_ns = 777;
		p->blk = 9;
		p->blk_bytes = 1ULL << 40;
		for (c = 0; c < PCLASS__MAX; c++) {
			p->faults_by[c] = (uint64_t)c * 1000 + k;
			p->major_by[c] = c + 7;
		}
	}
	t->phase_rest = t->phase[1];
	t->phase_rest.pid = -1;
	t->phase_rest.start_ticks = 0;
	memset(t->phase_rest.comm, 0, sizeof(t->phase_rest.comm));
	memset(t->phase_rest.name, 0, sizeof(t->phase_rest.name));
	t->phase_other = 5;
	t->phase_events = 123456;
	t->phase_open = 1;
	t->maps_reads = 7;
	t->maps_skipped = 3;
	t->maps_bad_lines = 2;
	t->fault_unknown = 11;
	snprintf(path, sizeof(path), "%s/vitals.db", procdir);
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_exec(s,
			     "SELECT count(*) FROM window_trace_phase", v,
			     sizeof(v)),
	    0);
	ck_assert_str_eq(v, "3");
	ck_assert_int_eq(store_windows(s, wall, wall + 20 * NSEC_PER_SEC, 0,
			     &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(g = window_trace(ws[0]));
	ck_assert_uint_eq(g->nphase, 2);
	ck_assert_int_eq(memcmp(row(g, 1000, "phase 0"), &t->phase[0],
			     sizeof(t->phase[0])),
	    0);
	ck_assert_int_eq(memcmp(row(g, 1001, "phase 1"), &t->phase[1],
			     sizeof(t->phase[1])),
	    0);
	ck_assert_int_eq(memcmp(&g->phase_rest, &t->phase_rest,
			     sizeof(t->phase_rest)),
	    0);
	ck_assert_uint_eq(g->phase_other, 5);
	ck_assert_uint_eq(g->phase_events, 123456);
	ck_assert_uint_eq(g->phase_open, 1);
	ck_assert_uint_eq(g->maps_reads, 7);
	ck_assert_uint_eq(g->maps_skipped, 3);
	ck_assert_uint_eq(g->maps_bad_lines, 2);
	ck_assert_uint_eq(g->fault_unknown, 11);
	window_free(ws[0]);
	free(ws);
	store_close(s);
	window_free(w);
}
END_TEST

static Suite *
phase_suite(void)
{
	Suite *s = suite_create("phase");
	TCase *tc = tcase_create("tracker");
	TCase *mp = tcase_create("maps");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_decode_formats);
	tcase_add_test(tc, test_deltas);
	tcase_add_test(tc, test_nesting_two_threads);
	tcase_add_test(tc, test_tid_reuse);
	tcase_add_test(tc, test_lost_and_open);
	tcase_add_test(tc, test_maps_budget);
	tcase_add_test(tc, test_have_bits);
	tcase_add_test(tc, test_rows_bounded_and_merge);
	tcase_add_test(tc, test_merge_open_gauge);
	tcase_add_test(tc, test_store_round_trip);
	suite_add_tcase(s, tc);
	tcase_add_test(mp, test_maps_parse);
	tcase_add_test(mp, test_class_of_path);
	tcase_add_test(mp, test_config);
	suite_add_tcase(s, mp);
	return s;
}

int
main(void)
{
	return tu_run(phase_suite());
}
