/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Working-set monitor on fixtures: the pure parsers (maps, smaps, pagemap
 * entries, the adaptive interval) and Method A end to end on a
 * --proc-root/--sys-root tree whose pagemap is a synthesised file of
 * 8-byte entries at vaddr / 4096 * 8 and whose page_idle bitmap is a
 * plain file: the test plays the kernel, clearing the idle bits of the
 * pages "accessed" between the two halves of a pass.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "testutil.h"
#include "vitalsd.h"

#define PID 4242
#define PG 4096ULL

static char *root;
static char proc[512], sys[512];

/* ------------------------------------------------------------ pure */

START_TEST(test_pm_decode)
{
	struct wss_pm pm;

	wss_pm_decode(WSS_PM_PRESENT | WSS_PM_EXCLUSIVE | 0x1234, &pm);
	ck_assert(pm.present && pm.exclusive && !pm.swapped && !pm.soft_dirty);
	ck_assert_uint_eq(pm.pfn, 0x1234);
	/* PFN bits 0-54 only: 55 (soft-dirty) and up are flags */
	wss_pm_decode(WSS_PM_PRESENT | WSS_PM_SOFT_DIRTY | WSS_PM_FILE |
		WSS_PM_PFN_MASK,
	    &pm);
	ck_assert(pm.soft_dirty && pm.file);
	ck_assert_uint_eq(pm.pfn, (1ULL << 55) - 1);
	/* swapped: the low bits are a swap entry, never a PFN */
	wss_pm_decode(WSS_PM_SWAPPED | 0x77, &pm);
	ck_assert(!pm.present && pm.swapped);
	ck_assert_uint_eq(pm.pfn, 0);
	wss_pm_decode(0, &pm);
	ck_assert(!pm.present && pm.pfn == 0);
}
END_TEST

START_TEST(test_maps_line)
{
	struct wss_map m;
	const char *l =
	    "7f0bd0e17000-7f0bd0e1a000 r-xp 00002000 fd:01 "
	    "131090                     /data/app/x/lib/libdemo_so.so\n";

	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), 0);
	ck_assert_uint_eq(m.start, 0x7f0bd0e17000ULL);
	ck_assert_uint_eq(m.end, 0x7f0bd0e1a000ULL);
	ck_assert_str_eq(m.perms, "r-xp");
	ck_assert_uint_eq(m.offset, 0x2000);
	ck_assert_uint_eq(m.inode, 131090);
	ck_assert_str_eq(m.path, "/data/app/x/lib/libdemo_so.so");
	l = "55d0c000-55d2d000 rw-p 00000000 00:00 0                  [heap]";
	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), 0);
	ck_assert_str_eq(m.path, "[heap]");
	ck_assert(wss_map_selected(&m, WSS_MODE_HEAP, NULL, false));
	l = "7ff0000-7ff1000 rw-p 00000000 00:00 0";
	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), 0);
	ck_assert_str_eq(m.path, "");
	ck_assert(wss_map_selected(&m, WSS_MODE_HEAP, NULL, false));
	l = "7ff0000-7ff1000 rw-p 00000000 00:00 0    [stack]";
	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), 0);
	ck_assert(!wss_map_selected(&m, WSS_MODE_HEAP, NULL, false));
	l = "7ff0000-7ff1000 ---p 00000000 00:00 0";
	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), 0);
	ck_assert(!wss_map_selected(&m, WSS_MODE_HEAP, NULL, false));
	/* malformed: end before start, bad perms, no inode */
	l = "2000-1000 r-xp 00000000 00:00 0";
	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), -EINVAL);
	l = "1000-2000 r-x 00000000 00:00 0";
	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), -EINVAL);
	l = "1000-2000 rwxq 00000000 00:00 0";
	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), -EINVAL);
	ck_assert_int_eq(wss_maps_line("1000-2000 \0-xp 0 0:0 0", 22, &m),
	    -EINVAL);
	l = "1000-2000 r-xp 00000000 00:00";
	ck_assert_int_lt(wss_maps_line(l, strlen(l), &m), 0);
	l = "Rss:                   4 kB";
	ck_assert_int_lt(wss_maps_line(l, strlen(l), &m), 0);
}
END_TEST

START_TEST(test_labels)
{
	struct wss_map m;
	char label[WSS_LABEL_LEN];
	const char *l = "1000-3000 rw-p 00000000 fd:01 9 /system/lib/libfoo.so";
	const char *apk =
	    "1000-3000 r-xp 00000000 fd:01 9 /data/app/y/base.apk";

	ck_assert_int_eq(wss_maps_line(l, strlen(l), &m), 0);
	ck_assert(wss_map_selected(&m, WSS_MODE_LIBRARY, "libfoo.so", false));
	ck_assert(!wss_map_selected(&m, WSS_MODE_LIBRARY, "libfo", false));
	ck_assert(!wss_map_selected(&m, WSS_MODE_HEAP, NULL, false));
	wss_map_label(&m, WSS_MODE_LIBRARY, label, sizeof(label));
	ck_assert_str_eq(label, "rw-p(libfoo.so)");
	wss_map_label(&m, WSS_MODE_HEAP, label, sizeof(label));
	ck_assert_str_eq(label, "heap");
	ck_assert_int_eq(wss_maps_line(apk, strlen(apk), &m), 0);
	ck_assert(!wss_map_selected(&m, WSS_MODE_LIBRARY, "libdemo.so", false));
	ck_assert(wss_map_selected(&m, WSS_MODE_LIBRARY, "libdemo.so", true));
	wss_map_label(&m, WSS_MODE_LIBRARY, label, sizeof(label));
	ck_assert_str_eq(label, "r-xp(base.apk)");
}
END_TEST

START_TEST(test_smaps_parse)
{
	static const char txt[] =
	    "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/dbus\n"
	    "Size:                328 kB\n"
	    "Rss:                 236 kB\n"
	    "Referenced:          120 kB\n"
	    "Anonymous:             0 kB\n"
	    "AnonHugePages:         0 kB\n"
	    "Swap:                  8 kB\n"
	    "VmFlags: rd ex mr mw me dw\n"
	    "7f0000000000-7f0000004000 rw-p 00000000 00:00 0\n"
	    "Rss:                  16 kB\n"
	    "Referenced:            4 kB\n"
	    "Anonymous:            16 kB\n";
	struct wss_smaps *s;
	size_t n;

	ck_assert_int_eq(wss_smaps_parse(txt, strlen(txt), &s, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(s[0].start, 0x400000);
	ck_assert_uint_eq(s[0].rss_kb, 236);
	ck_assert_uint_eq(s[0].referenced_kb, 120);
	ck_assert_uint_eq(s[0].swap_kb, 8);
	ck_assert_uint_eq(s[1].end, 0x7f0000004000ULL);
	ck_assert_uint_eq(s[1].referenced_kb, 4);
	ck_assert_uint_eq(s[1].anon_kb, 16);
	free(s);
	ck_assert_int_eq(wss_smaps_parse("garbage\n", 8, &s, &n), -EBADMSG);
	ck_assert_int_eq(wss_smaps_parse("Rss: 4 kB\n", 10, &s, &n), -EBADMSG);
}
END_TEST

START_TEST(test_adapt)
{
	/* tiny fraction: doubles, capped at max */
	ck_assert_uint_eq(wss_adapt_interval(1000, 0, 1000, 100, 10000), 2000);
	ck_assert_uint_eq(wss_adapt_interval(8000, 5, 1000, 100, 10000), 10000);
	/* large fraction: halves, floored at min */
	ck_assert_uint_eq(wss_adapt_interval(1000, 500, 1000, 100, 10000), 500);
	ck_assert_uint_eq(wss_adapt_interval(150, 900, 1000, 100, 10000), 100);
	/* in between (1 %..10 %), or nothing resident: unchanged */
	ck_assert_uint_eq(wss_adapt_interval(1000, 50, 1000, 100, 10000), 1000);
	ck_assert_uint_eq(wss_adapt_interval(1000, 0, 0, 100, 10000), 1000);
}
END_TEST

/* ---------------------------------------------------- fixture tree */

static void
put(const char *rel, const char *text)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_int_eq(tu_writes(path, text), 0);
}

static void
pm_set(uint64_t vaddr, uint64_t entry)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/pagemap", proc, PID);
	ck_assert_int_ge(fd = open(path, O_RDWR | O_CREAT, 0644), 0);
	ck_assert_int_eq(pwrite(fd, &entry, 8, (off_t)(vaddr / PG * 8)), 8);
	close(fd);
}

static int
bm_open(void)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/kernel/mm/page_idle/bitmap", sys);
	ck_assert_int_ge(fd = open(path, O_RDWR), 0);
	return fd;
}

static uint64_t
bm_word(uint64_t w)
{
	uint64_t v = 0;
	int fd = bm_open();

	ck_assert_int_eq(pread(fd, &v, 8, (off_t)(w * 8)), 8);
	close(fd);
	return v;
}

/* "The kernel saw an access": the PFN's idle bit is cleared. */
static void
bm_access(uint64_t pfn)
{
	uint64_t v = bm_word(pfn / 64);
	int fd = bm_open();

	v &= ~(1ULL << (pfn % 64));
	ck_assert_int_eq(pwrite(fd, &v, 8, (off_t)(pfn / 64 * 8)), 8);
	close(fd);
}

static const char maps_txt[] =
    "10000000-10008000 rw-p 00000000 00:00 0\n"
    "20000000-20004000 r-xp 00000000 fd:01 1234 /system/lib64/libfoo.so\n"
    "20004000-20006000 rw-p 00004000 fd:01 1234 /system/lib64/libfoo.so\n"
    "30000000-30001000 ---p 00000000 00:00 0\n"
    "7ffff000-80000000 rw-p 00000000 00:00 0    [stack]\n";

static void
setup(void)
{
	char rel[256];
	static const char zero[8 * 128];

	root = tu_mkdtemp("wss");
	ck_assert_ptr_nonnull(root);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(rel, sizeof(rel), "proc/%d/stat", PID);
	put(rel,
	    "4242 (fixt app) S 1 4242 4242 0 -1 4194304 10 0 0 0 5 3 0 0 "
	    "20 0 1 0 12345 1000000 100 18446744073709551615 1 1 0 0 0 0 0 "
	    "0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", PID);
	put(rel, "com.example.fixt\0");
	snprintf(rel, sizeof(rel), "proc/%d/maps", PID);
	put(rel, maps_txt);
	snprintf(rel, sizeof(rel), "proc/%d/clear_refs", PID);
	put(rel, "");
	snprintf(rel, sizeof(rel), "proc/%d/pagemap", PID);
	put(rel, "");
	snprintf(rel, sizeof(rel), "%s/sys/kernel/mm/page_idle/bitmap", root);
	ck_assert_int_eq(tu_write(rel, zero, sizeof(zero)), 0);
}

static void
teardown(void)
{
	tu_rmtree(root);
	free(root);
}

/* A monitor on the fixture roots; helper: its files through it (no
 * loop: the helper's opens are made on the spot) */
static struct wss *
monitor_on(struct event_base *base, struct wss_config *c,
    struct privhelper *helper)
{
	struct wss_opts o = {
		.proc_root = proc,
		.sys_root = sys,
		.cfg = c,
		.helper = helper,
	};
	struct wss *w;

	ck_assert_int_eq(wss_new(base, &o, &w), 0);
	ck_assert(wss_page_idle(w));
	return w;
}

static struct wss *
monitor(struct wss_config *c)
{
	return monitor_on(NULL, c, NULL);
}

/* Read the log file into a static buffer. */
static const char *
slurp(const char *path)
{
	static char buf[8192];
	ssize_t n;
	int fd;

	ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	return buf;
}

START_TEST(test_method_a)
{
	const uint64_t H = 0x10000000, P = WSS_PM_PRESENT;
	const struct wss_status *st;
	const struct wss_region *g;
	struct wss_config c;
	char err[160], logdir[600], logpath[700], *line, *save = NULL;
	const char *want[8] = {
		",0,0x10000000,100,0,(heap)",
		",0,0x10001000,101,1,(heap)",
		",0,0x10002000,130,0,(heap)",
		",0,0x10003000,1000,1,(heap)",
		",0,0x10004000,0,-1,(heap)",
		",0,0x10005000,0,-1,(heap)",
		",0,0x10006000,0,-1,(heap)",
		",0,0x10007000,7000,1,(heap)",
	};
	struct wss *w;
	unsigned i = 0;
	char *txt;

	snprintf(logdir, sizeof(logdir), "%s/log", root);
	ck_assert_int_eq(mkdir(logdir, 0755), 0);
	wss_config_init(&c);
	ck_assert_int_eq(wss_config_set(&c, "wss_log_dir", logdir), 0);
	w = monitor(&c);
	/* pages: 0-1 in word 1, 2 in word 2, 3 in word 15, 4 absent,
	 * 5 swapped out, 6 in word 78, 7 absent until the pass ends */
	pm_set(H + 0 * PG, P | WSS_PM_EXCLUSIVE | 100);
	pm_set(H + 1 * PG, P | 101);
	pm_set(H + 2 * PG, P | WSS_PM_SOFT_DIRTY | 130);
	pm_set(H + 3 * PG, P | 1000);
	pm_set(H + 4 * PG, 0);
	pm_set(H + 5 * PG, WSS_PM_SWAPPED | 0x55);
	pm_set(H + 6 * PG, P | 5000);
	pm_set(H + 7 * PG, 0);
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			     err, sizeof(err)),
	    0);
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	st = wss_get(w, PID);
	ck_assert_ptr_nonnull(st);
	ck_assert_str_eq(st->name, "com.example.fixt");
	ck_assert_uint_eq(st->starttime, 12345);
	/* one region: the anonymous mapping; not the stack, not ---p */
	ck_assert_uint_eq(st->nregions, 1);
	ck_assert_uint_eq(st->regions[0].pages, 8);
	/* word batching: words 1, 2, 15, 78 in three runs */
	ck_assert_uint_eq(st->io.bm_writes, 3);
	ck_assert_uint_eq(st->io.pm_reads, 1);
	ck_assert_uint_eq(bm_word(1), (1ULL << 36) | (1ULL << 37));
	ck_assert_uint_eq(bm_word(2), 1ULL << 2);
	ck_assert_uint_eq(bm_word(15), 1ULL << 40);
	ck_assert_uint_eq(bm_word(78), 1ULL << 8);
	ck_assert_uint_eq(bm_word(0) | bm_word(3) | bm_word(14), 0);
	/* the kernel's part: accesses to 101 and 1000, page 7 faulted in,
	 * page 6 reclaimed */
	bm_access(101);
	bm_access(1000);
	pm_set(H + 7 * PG, P | 7000);
	pm_set(H + 6 * PG, 0);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);
	st = wss_get(w, PID);
	g = &st->regions[0];
	ck_assert_uint_eq(st->method, WSS_METHOD_PAGE_IDLE);
	ck_assert_str_eq(g->label, "heap");
	ck_assert_uint_eq(g->resident, 5);
	ck_assert_uint_eq(g->accessed, 3);
	ck_assert_uint_eq(g->idle, 2);
	ck_assert_uint_eq(g->not_resident, 3);
	ck_assert_uint_eq(g->moved, 0);
	ck_assert_uint_eq(st->io.bm_reads, 3);
	ck_assert_uint_eq(st->io.bm_writes, 3);
	ck_assert_uint_eq(st->io.pm_reads, 2);
	ck_assert_uint_eq(st->seq, 1);
	ck_assert_uint_eq(st->pfn_zeroed, 0);
	ck_assert(st->pass_ns_last > 0);
	/* the log: timestamp_us,sequence,vaddr,pfn,accessed,(label) */
	snprintf(logpath, sizeof(logpath), "%s/wss-%d.log", logdir, PID);
	txt = strdup(slurp(logpath));
	for (line = strtok_r(txt, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		char *comma = strchr(line, ',');

		ck_assert_ptr_nonnull(comma);
		ck_assert_msg(i < 8 && strcmp(comma, want[i]) == 0,
		    "line %u: %s", i, line);
		ck_assert_uint_gt(strtoull(line, NULL, 10), 0);
	}
	ck_assert_uint_eq(i, 8);
	free(txt);
	ck_assert_uint_eq(st->log_lines, 8);

	/* second pass: a PFN that changes inside the pass is a new page */
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	pm_set(H + 0 * PG, P | 9000);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);
	g = &wss_get(w, PID)->regions[0];
	ck_assert_uint_eq(g->moved, 1);
	ck_assert_uint_eq(g->accessed, 1);
	ck_assert_uint_eq(g->idle, 4);
	ck_assert_uint_eq(wss_get(w, PID)->seq, 2);
	wss_free(w);
	wss_config_release(&c);
}
END_TEST

/* PFNs read as 0 with the present bit set: what an unprivileged reader
 * sees. Page level is unavailable, said and counted; clear_refs stands in. */
START_TEST(test_pfn_zeroed)
{
	const uint64_t H = 0x10000000, P = WSS_PM_PRESENT;
	const struct wss_status *st;
	const struct wss_region *g;
	struct wss_config c;
	char err[160], rel[768];
	struct wss *w;
	unsigned i;

	for (i = 0; i < 6; i++)
		pm_set(H + i * PG, P);
	snprintf(rel, sizeof(rel), "proc/%d/smaps", PID);
	put(rel,
	    "10000000-10008000 rw-p 00000000 00:00 0\n"
	    "Rss:                  24 kB\nReferenced:            8 kB\n");
	wss_config_init(&c);
	w = monitor(&c);
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			     err, sizeof(err)),
	    0);
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);
	st = wss_get(w, PID);
	ck_assert_uint_eq(st->pfn_zeroed, 1);
	ck_assert_ptr_nonnull(strstr(st->note, "needs CAP_SYS_ADMIN"));
	ck_assert_uint_eq(st->method, WSS_METHOD_CLEAR_REFS);
	ck_assert_uint_eq(st->io.bm_writes, 0);
	snprintf(rel, sizeof(rel), "%s/%d/clear_refs", proc, PID);
	ck_assert_str_eq(slurp(rel), "1");
	g = &st->regions[0];
	ck_assert_uint_eq(g->resident, 6);
	ck_assert_uint_eq(g->accessed, 2);
	ck_assert_uint_eq(g->idle, 4);
	ck_assert_uint_eq(g->not_resident, 2);
	ck_assert_uint_eq(g->referenced_kb, 8);
	wss_free(w);
}
END_TEST

START_TEST(test_library_and_limits)
{
	const struct wss_status *st;
	struct wss_config c;
	char err[160], rel[768];
	struct wss *w;

	wss_config_init(&c);
	c.max_pages = 5;
	w = monitor(&c);
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_LIBRARY, "libfoo.so",
			     WSS_METHOD_PAGE_IDLE, err, sizeof(err)),
	    0);
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			     err, sizeof(err)),
	    -EEXIST);
	ck_assert_int_eq(wss_start(w, 1 << 30, WSS_MODE_HEAP, NULL,
			     WSS_METHOD_AUTO, err, sizeof(err)),
	    -ESRCH);
	ck_assert_int_eq(wss_start(w, PID + 1, WSS_MODE_LIBRARY, "a/b",
			     WSS_METHOD_AUTO, err, sizeof(err)),
	    -EINVAL);
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	st = wss_get(w, PID);
	ck_assert_uint_eq(st->nregions, 2);
	ck_assert_str_eq(st->regions[0].label, "r-xp(libfoo.so)");
	ck_assert_str_eq(st->regions[1].label, "rw-p(libfoo.so)");
	/* 4 + 2 pages against a limit of 5: the rest is cut, and said */
	ck_assert_uint_eq(st->regions[0].pages, 4);
	ck_assert_uint_eq(st->regions[1].pages, 1);
	ck_assert_uint_eq(st->regions[1].cut, 1);
	ck_assert_uint_eq(wss_npages(w), 5);
	ck_assert(!st->apk_fallback);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);

	/* the maps change: the library is gone, base.apk is there */
	snprintf(rel, sizeof(rel), "proc/%d/maps", PID);
	put(rel,
	    "40000000-40002000 r--p 00000000 fd:01 7 /data/app/z/base.apk\n"
	    "40002000-40003000 r-xp 00002000 fd:01 7 /data/app/z/base.apk\n"
	    "40003000-40004000 rw-p 00003000 fd:01 7 /data/app/z/base.apk\n");
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	st = wss_get(w, PID);
	ck_assert_uint_eq(st->maps_changes, 1);
	ck_assert(st->apk_fallback);
	ck_assert_uint_eq(wss_npages(w), 2);
	/* inside the pass, what is shown is still the last completed one's
	 * regions, sampled, with their figures (a query or a window closing
	 * now found none sampled: CI's check_wss_daemon saw resident 0) */
	ck_assert_uint_eq(st->seq, 1);
	ck_assert_uint_eq(st->nregions, 2);
	ck_assert_str_eq(st->regions[0].label, "r-xp(libfoo.so)");
	ck_assert(st->regions[0].done && st->regions[1].done);
	ck_assert_uint_eq(st->regions[0].pages, 4);
	ck_assert_uint_eq(st->regions[0].resident + st->regions[0].not_resident,
	    4);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);
	st = wss_get(w, PID);
	ck_assert_uint_eq(st->seq, 2);
	ck_assert_uint_eq(st->nregions, 2);
	ck_assert_str_eq(st->regions[0].label, "r-xp(base.apk)");
	ck_assert_str_eq(st->regions[1].label, "rw-p(base.apk)");
	ck_assert(st->regions[0].done && st->regions[1].done);
	/* the process goes: the target ends, its pages are released */
	snprintf(rel, sizeof(rel), "%s/%d", proc, PID);
	ck_assert_int_eq(tu_rmtree(rel), 0);
	ck_assert_int_eq(wss_pass_begin(w, PID), -ESRCH);
	st = wss_get(w, PID);
	ck_assert(st->ended);
	ck_assert_str_eq(st->end_reason, "process exited");
	ck_assert_uint_eq(wss_npages(w), 0);
	ck_assert_int_eq(wss_stop(w, PID), 0);
	ck_assert_ptr_null(wss_get(w, PID));
	ck_assert_int_eq(wss_stop(w, PID), -ENOENT);
	wss_free(w);
}
END_TEST

START_TEST(test_config)
{
	struct wss_config c;

	wss_config_init(&c);
	ck_assert_int_eq(wss_config_set(&c, "wss_rule",
			     "com.example.app library libdemo_so.so"),
	    0);
	ck_assert_int_eq(wss_config_set(&c, "wss_rule", "surfaceflinger heap"),
	    0);
	ck_assert_uint_eq(c.nrules, 2);
	ck_assert_str_eq(c.rule[0].lib, "libdemo_so.so");
	ck_assert_uint_eq(c.rule[1].mode, WSS_MODE_HEAP);
	ck_assert_int_eq(wss_config_set(&c, "wss_rule", "x library"), -EINVAL);
	ck_assert_int_eq(wss_config_set(&c, "wss_rule", "x heap y"), -EINVAL);
	ck_assert_int_eq(wss_config_set(&c, "wss_rule", "x library a/b"),
	    -EINVAL);
	ck_assert_int_eq(wss_config_set(&c, "wss_method", "clear_refs"), 0);
	ck_assert_uint_eq(c.method, WSS_METHOD_CLEAR_REFS);
	ck_assert_int_eq(wss_config_set(&c, "wss_method", "damon"), -EINVAL);
	ck_assert_int_eq(wss_config_set(&c, "wss_interval_min_ms", "50"),
	    -ERANGE);
	ck_assert_int_eq(wss_config_set(&c, "wss_nope", "1"), -ENOENT);
	wss_config_release(&c);
}

/* The daemon's config routes wss_* keys here and checks the bounds. */
START_TEST(test_daemon_config)
{
	struct config cfg;
	char err[160];

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "wss_rule", "app heap"), 0);
	ck_assert_int_eq(config_set(&cfg, "wss_log_dir", "/tmp"), 0);
	ck_assert_uint_eq(cfg.wss.nrules, 1);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&cfg, "wss_interval_min_ms", "20000"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert_ptr_nonnull(strstr(err, "wss"));
	ck_assert_int_eq(config_set(&cfg, "wss_bogus", "1"), -ENOENT);
	config_release(&cfg);
}
END_TEST

/* A rule finds the process by its exact name and starts a target. */
START_TEST(test_rules)
{
	char rel[700], dst[700];
	struct wss_config c;
	struct wss *w;
	int32_t pid;

	wss_config_init(&c);
	ck_assert_int_eq(wss_config_set(&c, "wss_rule",
			     "com.example.fixt library libfoo.so"),
	    0);
	ck_assert_int_eq(wss_config_set(&c, "wss_rule", "com.example heap"), 0);
	w = monitor(&c);
	ck_assert_int_eq(wss_find_name(w, "com.example.fixt", &pid), 0);
	ck_assert_int_eq(pid, PID);
	ck_assert_int_eq(wss_find_name(w, "com.example", &pid), -ESRCH);
	/* a second instance of the same name, and another process */
	snprintf(rel, sizeof(rel), "%s/%d", proc, PID);
	snprintf(dst, sizeof(dst), "%s/%d", proc, PID + 1);
	ck_assert_int_eq(tu_copytree(rel, dst), 0);
	snprintf(dst, sizeof(dst), "%s/%d", proc, PID + 2);
	ck_assert_int_eq(tu_copytree(rel, dst), 0);
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", PID + 2);
	put(rel, "/system/bin/other\0");
	ck_assert_int_eq(wss_rules_scan(w), 2);
	ck_assert_ptr_nonnull(wss_get(w, PID));
	ck_assert_ptr_nonnull(wss_get(w, PID + 1));
	ck_assert_ptr_null(wss_get(w, PID + 2));
	ck_assert_uint_eq(wss_get(w, PID)->mode, WSS_MODE_LIBRARY);
	ck_assert_int_eq(wss_rules_scan(w), 0); /* already targets */
	wss_free(w);
	wss_config_release(&c);
}
END_TEST

/* A window gets the targets' part; copies are deep; the store keeps it. */
START_TEST(test_window_store)
{
	const uint64_t H = 0x10000000, P = WSS_PM_PRESENT;
	struct window *win, *dup;
	struct store_opts so;
	struct wss_config c;
	struct store *st;
	char err[160], path[700], buf[64];
	struct wss *w;
	unsigned i;

	for (i = 0; i < 4; i++)
		pm_set(H + i * PG, P | (200 + i));
	wss_config_init(&c);
	w = monitor(&c);
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			     err, sizeof(err)),
	    0);
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	bm_access(201);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);
	win = window_new(1, 1);
	ck_assert_ptr_nonnull(win);
	ck_assert_int_eq(wss_window_fill(w, win), 0);
	ck_assert_uint_eq(window_wss(win)->ntargets, 1);
	ck_assert_uint_eq(window_wss(win)->target[0].passes, 2);
	ck_assert_uint_eq(window_wss(win)->target[0].nregions, 1);
	ck_assert_uint_eq(window_wss(win)->target[0].regions[0].resident, 4);
	ck_assert_uint_eq(window_wss(win)->target[0].regions[0].accessed, 0);
	ck_assert_uint_gt(window_wss(win)->target[0].pass_ns_sum, 0);
	dup = window_dup(win);
	ck_assert_ptr_nonnull(dup);
	ck_assert_ptr_ne(window_wss(dup), window_wss(win));
	ck_assert_ptr_ne(window_wss(dup)->target[0].regions,
	    window_wss(win)->target[0].regions);
	ck_assert_uint_eq(window_wss(dup)->target[0].regions[0].pages, 8);
	{
		struct vbuf b = { 0 };

		ck_assert_int_eq(dump_window(dup, 20, &b), 0);
		ck_assert_ptr_nonnull(b.p);
		ck_assert_ptr_nonnull(strstr(b.p,
		    "working set: pid 4242 "
		    "(com.example.fixt) heap, page_idle, 2 passes"));
		ck_assert_ptr_nonnull(strstr(b.p,
		    "pages 8 resident 4 "
		    "accessed 0 idle 4 not resident 4"));
		vbuf_release(&b);
	}
	/* the next window counts its own passes only */
	ck_assert_int_eq(wss_window_fill(w, win), 0);
	ck_assert_uint_eq(window_wss(win)->target[0].passes, 0);

	store_opts_default(&so);
	snprintf(path, sizeof(path), "%s/w.db", root);
	ck_assert_int_eq(store_open(path, &so, &st), 0);
	dup->wall_start_ns = 1;
	dup->wall_end_ns = 2;
	ck_assert_int_eq(store_put(st, dup), 0);
	ck_assert_int_eq(store_exec(st,
			     "SELECT passes || ',' || method || "
			     "',' || name FROM window_wss",
			     buf, sizeof(buf)),
	    0);
	ck_assert_str_eq(buf, "2,page_idle,com.example.fixt");
	ck_assert_int_eq(
	    store_exec(st,
		"SELECT label || ',' || pages || ',' "
		"|| resident || ',' || not_resident || ',' || vaddr_start FROM "
		"window_wss_region",
		buf, sizeof(buf)),
	    0);
	ck_assert_str_eq(buf, "heap,8,4,4,268435456");
	store_close(st);
	window_free(dup);
	window_free(win);
	wss_free(w);
}
END_TEST

/*
 * The helper confines itself by dropping capabilities, which only root
 * may: as a user its start must fail.
 */
START_TEST(test_helper_refused_as_user)
{
	struct privhelper *ph = NULL;

	ck_assert_int_lt(privhelper_start(proc, sys, NULL, &ph), 0);
}
END_TEST

/*
 * Through the privileged helper on the fixture roots (privhelper_start
 * takes them), as root: the target's maps and pagemap come from the
 * helper, opened there and passed back, and Method A runs on them.
 */
START_TEST(test_helper_roots)
{
	const uint64_t H = 0x10000000, P = WSS_PM_PRESENT;
	struct privhelper *ph = NULL;
	const struct wss_status *st;
	const struct wss_region *g;
	struct wss_config c;
	char err[160];
	struct wss *w;
	uint64_t denied = 1;
	int r = privhelper_start(proc, sys, NULL, &ph);

	ck_assert_int_eq(r, 0);
	wss_config_init(&c);
	w = monitor_on(NULL, &c, ph);
	ck_assert_ptr_nonnull(
	    strstr(wss_access(w, &denied), "privileged helper"));
	ck_assert_uint_eq(denied, 0);
	pm_set(H + 0 * PG, P | 100);
	pm_set(H + 1 * PG, P | 101);
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			     err, sizeof(err)),
	    0);
	st = wss_get(w, PID);
	ck_assert_str_eq(st->files, "privileged helper");
	ck_assert_int_eq(wss_pass_begin(w, PID), 0);
	ck_assert_uint_eq(bm_word(1), (1ULL << 36) | (1ULL << 37));
	bm_access(101);
	ck_assert_int_eq(wss_pass_end(w, PID), 0);
	st = wss_get(w, PID);
	g = &st->regions[0];
	ck_assert_uint_eq(st->method, WSS_METHOD_PAGE_IDLE);
	ck_assert_str_eq(st->files, "privileged helper");
	ck_assert_uint_eq(g->resident, 2);
	ck_assert_uint_eq(g->accessed, 1);
	ck_assert_uint_eq(g->idle, 1);
	ck_assert_uint_eq(st->read_errors, 0);
	wss_free(w);
	wss_config_release(&c);
	privhelper_stop(ph);
}
END_TEST

/* A 20 ms timer at the loop's top priority, as the daemon's sampling
 * tick is: its worst lateness is how long the loop was kept from it. */
struct ticker {
	struct event *ev;
	int64_t due_ns, late_max_ns;
	unsigned fired;
};

#define TICK_MS 20

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ticker *k = arg;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	struct timeval tv = { 0, TICK_MS * 1000 };

	(void)fd;
	(void)what;
	if (now - k->due_ns > k->late_max_ns)
		k->late_max_ns = now - k->due_ns;
	k->fired++;
	k->due_ns = now + TICK_MS * 1000000LL;
	event_add(k->ev, &tv);
}

static void
run_loop(struct event_base *base, unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/*
 * With a loop, the helper's opens run on a worker: a start answers at
 * once, the target is "opening" until the files arrive, and its passes
 * then run on them. A stuck helper (stopped; its call times out after
 * 1 s here, 5 s in the daemon) keeps the worker waiting, not the loop: a
 * 20 ms timer stays on time while the start's first call waits out the
 * timeout, then the files are opened directly and the target says why.
 */
START_TEST(test_helper_off_loop)
{
	const uint64_t H = 0x10000000, P = WSS_PM_PRESENT;
	struct privhelper *ph = NULL;
	struct privhelper_stats hs;
	const struct wss_status *st;
	struct ticker k = { 0 };
	struct event_base *base;
	struct wss_config c;
	struct timeval tv = { 0, TICK_MS * 1000 };
	char err[160];
	struct wss *w;
	int64_t t0;

	ck_assert_int_eq(privhelper_start(proc, sys, NULL, &ph), 0);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_int_eq(event_base_priority_init(base, 3), 0);
	wss_config_init(&c);
	c.interval_ms = c.interval_min_ms = c.interval_max_ms = 100;
	w = monitor_on(base, &c, ph);
	pm_set(H + 0 * PG, P | 100);
	pm_set(H + 1 * PG, P | 101);

	/* a helper that answers: opening, then passes on its files */
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			     err, sizeof(err)),
	    0);
	st = wss_get(w, PID);
	ck_assert(st->opening);
	ck_assert_uint_eq(st->seq, 0);
	run_loop(base, 450);
	st = wss_get(w, PID);
	ck_assert(!st->opening);
	ck_assert(!st->ended);
	ck_assert_str_eq(st->files, "privileged helper");
	ck_assert_uint_ge(st->seq, 2);
	ck_assert_uint_eq(st->read_errors, 0);
	ck_assert_uint_eq(wss_helper_errors(w), 0);
	/* four opens for the target's life, none per pass */
	privhelper_stats(ph, &hs);
	ck_assert_uint_eq(hs.calls, 1 + 4); /* the bitmap at setup, then 4 */
	ck_assert_int_eq(wss_stop(w, PID), 0);

	/* a stuck helper */
	privhelper_set_timeout(ph, 1000);
	ck_assert_int_eq(kill(privhelper_pid(ph), SIGSTOP), 0);
	ck_assert_ptr_nonnull(k.ev = event_new(base, -1, 0, tick_cb, &k));
	ck_assert_int_eq(event_priority_set(k.ev, 0), 0);
	k.due_ns = clock_ns(CLOCK_MONOTONIC) + TICK_MS * 1000000LL;
	event_add(k.ev, &tv);
	t0 = clock_ns(CLOCK_MONOTONIC);
	ck_assert_int_eq(wss_start(w, PID, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			     err, sizeof(err)),
	    0);
	ck_assert_int_lt(clock_ns(CLOCK_MONOTONIC) - t0, 100 * 1000000LL);
	ck_assert(wss_get(w, PID)->opening);
	run_loop(base, 1600);
	st = wss_get(w, PID);
	/* on time throughout: a loop that waited on the call would show
	 * a tick 1 s late */
	ck_assert_uint_ge(k.fired, 1600 / TICK_MS / 2);
	ck_assert_msg(k.late_max_ns < 200 * 1000000LL, "a tick %lld ms late",
	    (long long)(k.late_max_ns / 1000000));
	/* the call timed out, the channel closed; opened directly */
	ck_assert(!st->opening);
	ck_assert(!st->ended);
	ck_assert_str_eq(st->files, "direct (helper: Connection timed out)");
	ck_assert_uint_ge(st->seq, 1);
	ck_assert_uint_eq(wss_helper_errors(w), 4);
	privhelper_stats(ph, &hs);
	ck_assert_int_eq(hs.dead, -ETIMEDOUT);
	kill(privhelper_pid(ph), SIGCONT);
	event_free(k.ev);
	wss_free(w);
	wss_config_release(&c);
	privhelper_stop(ph);
	event_base_free(base);
}
END_TEST

static Suite *
wss_suite(void)
{
	Suite *s = suite_create("wss");
	TCase *tc = tcase_create("pure");
	TCase *tf = tcase_create("fixture");

	tcase_add_test(tc, test_pm_decode);
	tcase_add_test(tc, test_maps_line);
	tcase_add_test(tc, test_labels);
	tcase_add_test(tc, test_smaps_parse);
	tcase_add_test(tc, test_adapt);
	tcase_add_test(tc, test_config);
	tcase_add_test(tc, test_daemon_config);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_test(tf, test_method_a);
	tcase_add_test(tf, test_pfn_zeroed);
	tcase_add_test(tf, test_library_and_limits);
	tcase_add_test(tf, test_rules);
	tcase_add_test(tf, test_window_store);
	/* the helper as root (CI); refused as a user, where the root part
	 * is skipped */
	if (tu_root()) {
		tcase_add_test(tf, test_helper_roots);
		tcase_add_test(tf, test_helper_off_loop);
	} else
		tcase_add_test(tf, test_helper_refused_as_user);
	suite_add_tcase(s, tf);
	return s;
}

int
main(void)
{
	return tu_run_root(wss_suite());
}
