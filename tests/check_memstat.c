/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's own memory (core/memstat.c, Health.memory): status lines
 * parsed from text, garbage left out rather than read as 0, and the
 * kernel's two views of this process's peak agreeing.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/memstat.h"
#include "core/pageout.h"
#include "core/util.h"
#include "testutil.h"

/* a status file's memory part as Linux 6.x prints it */
static const char status[] = "Name:\tvitalsd\n"
			     "VmPeak:\t   40000 kB\n"
			     "VmHWM:\t   15848 kB\n"
			     "VmRSS:\t    8364 kB\n"
			     "RssAnon:\t    2924 kB\n"
			     "RssFile:\t    5440 kB\n"
			     "RssShmem:\t       0 kB\n"
			     "Threads:\t4\n"
			     "SigQ:\t0/94811\n";

START_TEST(test_parse)
{
	struct memstat m;

	ck_assert_int_eq(memstat_parse(status, strlen(status), &m), 0);
	ck_assert_uint_eq(m.hwm, 15848ULL * 1024);
	ck_assert_uint_eq(m.rss, 8364ULL * 1024);
	ck_assert_uint_eq(m.anon, 2924ULL * 1024);
	ck_assert_uint_eq(m.file, 5440ULL * 1024);
	ck_assert_uint_eq(m.shmem, 0);
	ck_assert_uint_eq(m.threads, 4);
	ck_assert_uint_eq(m.have,
	    MEMSTAT_RSS | MEMSTAT_HWM | MEMSTAT_ANON | MEMSTAT_FILE |
		MEMSTAT_SHMEM | MEMSTAT_THREADS);
	/* anon + file + shmem is the RSS, as the kernel sums it */
	ck_assert_uint_eq(m.anon + m.file + m.shmem, m.rss);
}
END_TEST

START_TEST(test_garbage)
{
	static const char *const bad[] = {
		"VmRSS:\t    83x4 kB\nThreads:\t2\n", /* not a number */
		"VmRSS:\t    8364 MB\nThreads:\t2\n", /* not kB */
		"VmRSS:\t\nThreads:\t2\n",	      /* empty */
		"VmRSS:\t99999999999999999999 kB\nThreads:\t2\n", /* overflow */
		"VmRSS:\t18014398509481984 kB\nThreads:\t2\n",	  /* × 1024 */
		"VmRSS:\t    8364 kB trailing\nThreads:\t2\n",
	};
	struct memstat m;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&m, 0xa5, sizeof(m));
		ck_assert_int_eq(memstat_parse(bad[i], strlen(bad[i]), &m), 0);
		/* the bad line is absent, the good one read */
		ck_assert_msg(!(m.have & MEMSTAT_RSS), "case %zu", i);
		ck_assert_uint_eq(m.rss, 0);
		ck_assert_uint_eq(m.have, MEMSTAT_THREADS);
		ck_assert_uint_eq(m.threads, 2);
	}
	/* nothing known: an error, ret untouched */
	memset(&m, 0xa5, sizeof(m));
	ck_assert_int_eq(memstat_parse("Name:\tx\n", 8, &m), -EINVAL);
	ck_assert_uint_eq(m.threads, 0xa5a5a5a5u);
	ck_assert_int_eq(memstat_parse("", 0, &m), -EINVAL);
	/* a cut line (no newline at the end) still parses */
	ck_assert_int_eq(memstat_parse("VmRSS:\t 12 kB", 13, &m), 0);
	ck_assert_uint_eq(m.rss, 12 * 1024);
}
END_TEST

/* smaps: the program's mappings (relocated data among them), libraries,
 * and what is neither (heap, anonymous, a database's shared file); their
 * Pss lines (libc's shared: 14 of 1400 kB), beside lines that only begin
 * like one (Pss_Dirty, SwapPss) */
static const char smaps_head[] =
    "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234        "
    "/usr/sbin/vitalsd\n"
    "Size:                132 kB\n"
    "Rss:                 120 kB\n"
    "Pss:                  60 kB\n"
    "Pss_Dirty:             0 kB\n"
    "Private_Dirty:         0 kB\n"
    "55d0c0b40000-55d0c0b60000 rw-p 00140000 08:01 1234        "
    "/usr/sbin/vitalsd\n"
    "Rss:                 128 kB\n"
    "Pss:                 126 kB\n"
    "Pss_Dirty:           124 kB\n"
    "Private_Dirty:       124 kB\n"
    "55d0c1000000-55d0c1800000 rw-p 00000000 00:00 0           [heap]\n"
    "Rss:                6000 kB\n"
    "Pss:                6000 kB\n"
    "Private_Dirty:      6000 kB\n"
    "SwapPss:             512 kB\n"
    "7f0000000000-7f0000100000 r-xp 00028000 08:01 99          "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "Rss:                1400 kB\n"
    "Pss:                  14 kB\n"
    "Private_Dirty:        16 kB\n"
    "7f0000200000-7f0000210000 r-xp 00000000 08:01 98          "
    "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6\n"
    "Rss:                1180 kB\n"
    "Pss:                1180 kB\n"
    "7f0000300000-7f0000308000 rw-s 00000000 08:01 97          "
    "/var/lib/vitals/vitals.db-shm\n"
    "Rss:                  32 kB\n"
    "Pss:                  16 kB\n"
    "7f0000400000-7f0000401000 rw-p 00000000 00:00 0 \n"
    "Rss:                   4 kB\n"
    "Pss:                   4 kB\n";

START_TEST(test_maps)
{
	const char *exe = "/usr/sbin/vitalsd";
	struct memstat_maps m, m2;
	char more[sizeof(smaps_head) + 256];

	ck_assert_int_eq(memstat_maps_parse(smaps_head, strlen(smaps_head), exe,
			     &m),
	    0);
	ck_assert_uint_eq(m.program, (120ULL + 128) * 1024);
	ck_assert_uint_eq(m.program_dirty, 124ULL * 1024);
	ck_assert_uint_eq(m.libs, (1400ULL + 1180) * 1024);
	/* every mapping's Pss, the libraries' apart; no Pss_Dirty, SwapPss */
	ck_assert_uint_eq(m.pss,
	    (60ULL + 126 + 6000 + 14 + 1180 + 16 + 4) * 1024);
	ck_assert_uint_eq(m.libs_pss, (14ULL + 1180) * 1024);
	ck_assert_uint_eq(m.have, MEMSTAT_PROGRAM | MEMSTAT_LIBS | MEMSTAT_PSS);
	/* one more page of the program resident: the figure moves */
	snprintf(more, sizeof(more), "%s%s", smaps_head,
	    "55d0c0c00000-55d0c0c10000 r-xp 00021000 08:01 1234        "
	    "/usr/sbin/vitalsd\nRss:                   4 kB\n");
	ck_assert_int_eq(memstat_maps_parse(more, strlen(more), exe, &m2), 0);
	ck_assert_uint_eq(m2.program, m.program + 4096);
	ck_assert_uint_eq(m2.libs, m.libs);
	ck_assert_uint_eq(m2.pss, m.pss); /* the new mapping has no Pss */
	/* another program's name: its mappings are neither */
	ck_assert_int_eq(memstat_maps_parse(smaps_head, strlen(smaps_head),
			     "/usr/bin/other", &m2),
	    0);
	ck_assert_uint_eq(m2.have, MEMSTAT_LIBS | MEMSTAT_PSS);
	ck_assert_uint_eq(m2.program, 0);
	ck_assert_uint_eq(m2.pss, m.pss);
	/* no mapping of either kind: an error, ret untouched */
	memset(&m2, 0xa5, sizeof(m2));
	ck_assert_int_eq(memstat_maps_parse("Rss: 4 kB\n", 10, exe, &m2),
	    -EINVAL);
	ck_assert_uint_eq(m2.have, 0xa5a5a5a5u);
}
END_TEST

/* The kernel's own sum of the Pss lines (smaps_rollup), bytes; 0 none. */
static uint64_t
rollup_pss(void)
{
	char buf[4096], *p;
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	if (f == NULL)
		return 0;
	while (fgets(buf, sizeof(buf), f) != NULL)
		if (strncmp(buf, "Pss:", 4) == 0) {
			kb = strtoull(buf + 4, &p, 10);
			break;
		}
	fclose(f);
	return kb * 1024;
}

/* this test's own process: its program and libc are mapped and resident;
 * its PSS, summed over smaps's mappings, agrees with the kernel's sum */
START_TEST(test_maps_self)
{
	struct memstat_maps m;
	struct memstat st;
	uint64_t r0, r1;

	r0 = rollup_pss();
	ck_assert_int_eq(memstat_maps_read(NULL, &m), 0);
	r1 = rollup_pss();
	ck_assert_int_eq(memstat_read(NULL, &st), 0);
	ck_assert_uint_eq(m.have, MEMSTAT_PROGRAM | MEMSTAT_LIBS | MEMSTAT_PSS);
	/* two sources of one figure, read just before and after: within
	 * what the read's own buffer (≤ 4 MiB, a few pages here) moved */
	ck_assert_uint_gt(r0, 0);
	ck_assert_uint_le(m.pss, (r0 > r1 ? r0 : r1) + 256 * 1024);
	ck_assert_uint_ge(m.pss + 256 * 1024, r0 < r1 ? r0 : r1);
	ck_assert(st.have & MEMSTAT_HWM);
	ck_assert_uint_le(m.pss, st.hwm); /* a page counts at most whole */
	ck_assert_uint_gt(m.libs_pss, 0);
	ck_assert_uint_le(m.libs_pss, m.libs);
	ck_assert_uint_gt(m.program, 0);
	ck_assert_uint_gt(m.libs, 0);
	ck_assert_uint_le(m.program_dirty, m.program);
	ck_assert_uint_le(m.program + m.libs, st.rss + 64 * 1024);
	ck_assert_int_eq(memstat_maps_read("/nonexistent", &m), -ENOENT);
}
END_TEST

/* the cached read: kept while younger than max_age, read again once
 * older; a library-like mapping made in between shows only in the fresh
 * read; a failed read is kept as well while young */
START_TEST(test_maps_cached)
{
	const int64_t hour = 3600 * NSEC_PER_SEC;
	const size_t sz = 1 << 20;
	struct memstat_maps a, b, c, d, e;
	char *dir, path[PATH_MAX];
	int64_t age = -1;
	volatile char sum = 0;
	char *p;
	size_t i;
	int fd;

	ck_assert_int_eq(memstat_maps_cached(NULL, 0, &a, &age), 0);
	ck_assert_int_eq(age, 0);
	ck_assert(a.have & MEMSTAT_LIBS);
	/* 1 MiB of a "*.so" file mapped and every page read: resident */
	ck_assert_ptr_nonnull(dir = tu_mkdtemp("memstat"));
	snprintf(path, sizeof(path), "%s/libcached.so", dir);
	ck_assert_int_ge(fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600),
	    0);
	ck_assert_int_eq(ftruncate(fd, (off_t)sz), 0);
	p = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	for (i = 0; i < sz; i += 4096)
		sum += p[i];
	/* younger than an hour: the first read's figures, its age */
	ck_assert_int_eq(memstat_maps_cached(NULL, hour, &b, &age), 0);
	ck_assert_uint_eq(b.libs, a.libs);
	ck_assert_uint_eq(b.program, a.program);
	ck_assert_int_ge(age, 0);
	ck_assert_int_lt(age, hour);
	/* 2 ms later the read is older than 1 ms: read again, the
	 * mapping in it */
	tu_sleep_ms(2);
	ck_assert_int_eq(memstat_maps_cached(NULL, NSEC_PER_MSEC, &c, &age), 0);
	ck_assert_int_eq(age, 0);
	ck_assert_uint_ge(c.libs, a.libs + sz / 2);
	/* and that read is the one kept now (a NULL age is fine) */
	ck_assert_int_eq(memstat_maps_cached(NULL, hour, &d, NULL), 0);
	ck_assert_uint_eq(d.libs, c.libs);
	/* a failed read is kept while young: its error, ret untouched */
	ck_assert_int_eq(memstat_maps_cached("/nonexistent", 0, &d, NULL),
	    -ENOENT);
	memset(&e, 0xa5, sizeof(e));
	ck_assert_int_eq(memstat_maps_cached(NULL, hour, &e, NULL), -ENOENT);
	ck_assert_uint_eq(e.have, 0xa5a5a5a5u);
	ck_assert_int_eq(memstat_maps_cached(NULL, 0, &e, NULL), 0);
	ck_assert_uint_eq(e.have, c.have);
	munmap(p, sz);
	close(fd);
	tu_rmtree(dir);
	free(dir);
	(void)sum;
}
END_TEST

/*
 * The pageout's ranges: the read-only private mappings of files that
 * also have an executable mapping; not a data file's (the store's), not
 * a writable or shared one, not anonymous or special mappings.
 */
START_TEST(test_pageout_parse)
{
	static const char maps[] =
	    "55d0a0000000-55d0a0010000 r--p 00000000 fe:00 101 /usr/bin/vitalsd\n"
	    "55d0a0010000-55d0a0090000 r-xp 00010000 fe:00 101 /usr/bin/vitalsd\n"
	    "55d0a0090000-55d0a00a0000 r--p 00090000 fe:00 101 /usr/bin/vitalsd\n"
	    "55d0a00a0000-55d0a00a2000 rw-p 000a0000 fe:00 101 /usr/bin/vitalsd\n"
	    "55d0a1000000-55d0a1400000 rw-p 00000000 00:00 0 [heap]\n"
	    "7f0000000000-7f0000100000 r--s 00000000 fe:00 202 /data/vitals/vitals.db\n"
	    "7f0000100000-7f0000200000 r--p 00000000 fe:00 203 /data/vitals/trace.bin\n"
	    "7f0000200000-7f0000228000 r--p 00000000 fe:00 303 /lib/libc.so.6\n"
	    "7f0000228000-7f00003bd000 r-xp 00028000 fe:00 303 /lib/libc.so.6\n"
	    "7f00003bd000-7f0000415000 r--p 001bd000 fe:00 303 /lib/libc.so.6\n"
	    "7f0000415000-7f0000419000 r--p 00214000 fe:00 303 /lib/libc.so.6\n"
	    "7f0000419000-7f000041b000 rw-p 00218000 fe:00 303 /lib/libc.so.6\n"
	    "7f0000500000-7f0000501000 r-xs 00000000 00:05 9 /dev/shm/x (deleted)\n"
	    "7f0000600000-7f0000610000 r--p 00000000 00:0f 44 anon_inode:bpf-map\n"
	    "7f0000610000-7f0000620000 r-xp 00000000 fe:00 55 /old/lib.so (deleted)\n"
	    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
	    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
	static const uintptr_t want[][2] = {
		{ 0x55d0a0000000, 0x55d0a0010000 },
		{ 0x55d0a0010000, 0x55d0a0090000 },
		{ 0x55d0a0090000, 0x55d0a00a0000 },
		{ 0x7f0000200000, 0x7f0000228000 },
		{ 0x7f0000228000, 0x7f00003bd000 },
		{ 0x7f00003bd000, 0x7f0000415000 },
		{ 0x7f0000415000, 0x7f0000419000 },
		{ 0x7f0000610000, 0x7f0000620000 },
	};
	struct pageout_range r[16];
	size_t n = 99, i;

	ck_assert_int_eq(pageout_parse(maps, strlen(maps), r, 16, &n), 0);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(r[i].start, want[i][0]);
		ck_assert_uint_eq(r[i].end, want[i][1]);
		/* maps says nothing of a range's own pages: none is clean */
		ck_assert(!r[i].clean);
	}
	/* more than fit: the count says so, only max stored */
	memset(r, 0, sizeof(r));
	ck_assert_int_eq(pageout_parse(maps, strlen(maps), r, 2, &n), 0);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	ck_assert_uint_eq(r[1].end, want[1][1]);
	ck_assert_uint_eq(r[2].start, 0);
	/* nothing mapped: nothing to advise */
	ck_assert_int_eq(pageout_parse("", 0, r, 16, &n), 0);
	ck_assert_uint_eq(n, 0);
	/* garbage is refused, not half read */
	ck_assert_int_eq(pageout_parse("zz-10 r-xp 0 fe:00 1 /x\n", 24, r, 16,
			     &n),
	    -EINVAL);
	ck_assert_int_eq(pageout_parse("20-10 r-xp 0 fe:00 1 /x\n", 24, r, 16,
			     &n),
	    -EINVAL);
	ck_assert_int_eq(pageout_parse("10-20 r-x\n", 10, r, 16, &n), -EINVAL);
	ck_assert_int_eq(pageout_parse("10-20 r-xp 0 fe:00\n", 19, r, 16, &n),
	    -EINVAL);
}
END_TEST

/*
 * From smaps, a range is clean (dropped whole after the pageout) only
 * when its Anonymous line says 0 kB: a relocated range (RELRO) or one
 * without the line keeps its mapping.
 */
START_TEST(test_pageout_parse_smaps)
{
	static const char smaps[] =
	    "55d0a0000000-55d0a0010000 r--p 00000000 fe:00 101 /usr/bin/vitalsd\n"
	    "Size:                 64 kB\n"
	    "Rss:                  64 kB\n"
	    "Anonymous:             0 kB\n"
	    "VmFlags: rd mr mw me dw sd\n"
	    "55d0a0010000-55d0a0090000 r-xp 00010000 fe:00 101 /usr/bin/vitalsd\n"
	    "Anonymous:             0 kB\n"
	    "55d0a0090000-55d0a00a0000 r--p 00090000 fe:00 101 /usr/bin/vitalsd\n"
	    "Anonymous:            12 kB\n"
	    "55d0a00a0000-55d0a00a2000 rw-p 000a0000 fe:00 101 /usr/bin/vitalsd\n"
	    "Anonymous:             8 kB\n"
	    "7f0000200000-7f0000228000 r--p 00000000 fe:00 303 /lib/libc.so.6\n"
	    "Rss:                  16 kB\n"
	    "7f0000228000-7f00003bd000 r-xp 00028000 fe:00 303 /lib/libc.so.6\n"
	    "Anonymous:             0 kB\n"
	    "THPeligible:    0\n";
	static const struct {
		uintptr_t start;
		bool clean;
	} want[] = {
		{ 0x55d0a0000000, true },
		{ 0x55d0a0010000, true },
		{ 0x55d0a0090000, false }, /* 12 kB of its own */
		{ 0x7f0000200000, false }, /* no Anonymous line */
		{ 0x7f0000228000, true },
	};
	static const char *const bad[] = {
		/* a field before any mapping */
		"Anonymous:             0 kB\n",
		/* not kB, not a number, no unit */
		"10-20 r-xp 0 fe:00 1 /x\nAnonymous:             0 MB\n",
		"10-20 r-xp 0 fe:00 1 /x\nAnonymous:          4x kB\n",
		"10-20 r-xp 0 fe:00 1 /x\nAnonymous:             4\n",
		/* neither a mapping nor a field */
		"10-20 r-xp 0 fe:00 1 /x\nnot a field\n",
	};
	struct pageout_range r[16];
	size_t n = 99, i;

	ck_assert_int_eq(pageout_parse(smaps, strlen(smaps), r, 16, &n), 0);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(r[i].start, want[i].start);
		ck_assert_msg(r[i].clean == want[i].clean, "range %zu", i);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(pageout_parse(bad[i], strlen(bad[i]), r, 16,
				  &n) == -EINVAL,
		    "case %zu", i);
}
END_TEST

/* Pages of n from p mapped in this process's page tables (pagemap's
 * bit 63: present; a page still in the page cache but unmapped is not
 * in RssFile and not counted here). */
static size_t
resident(const char *p, size_t n)
{
	uint64_t v[512];
	size_t i, in = 0;
	int fd;

	ck_assert_uint_le(n, sizeof(v) / sizeof(v[0]));
	ck_assert_int_ge(fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC),
	    0);
	ck_assert_int_eq(pread(fd, v, n * 8, (off_t)((uintptr_t)p / 4096 * 8)),
	    (ssize_t)(n * 8));
	close(fd);
	for (i = 0; i < n; i++)
		in += (size_t)(v[i] >> 63);
	return in;
}

/* A file of sz bytes, byte i (i * mul + 1), written and synced: clean
 * pages, which reclaim may drop. Its descriptor. */
static int
patterned_file(const char *path, size_t sz, unsigned mul, mode_t mode)
{
	char *buf;
	size_t i;
	int fd;

	ck_assert_ptr_nonnull(buf = malloc(sz));
	for (i = 0; i < sz; i++)
		buf[i] = (char)(i * mul + 1);
	ck_assert_int_ge(fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode),
	    0);
	ck_assert_int_eq(write(fd, buf, sz), (ssize_t)sz);
	ck_assert_int_eq(fsync(fd), 0);
	free(buf);
	return fd;
}

/* fd mapped as a loaded object is: one page executable (*ret_px), all
 * of it read-only (*ret_po) */
static void
map_object(int fd, size_t sz, char **ret_px, char **ret_po)
{
	*ret_px = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(*ret_px, MAP_FAILED);
	*ret_po = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(*ret_po, MAP_FAILED);
}

/*
 * The real thing on this process: a file mapped executable (an object,
 * as a library is) has its pages read in, then given back to the
 * kernel; a data file mapped beside it keeps its own.
 */
START_TEST(test_pageout_self)
{
	const size_t pages = 256, sz = pages * 4096;
	struct pageout_stats st;
	char *dir, obj[PATH_MAX], data[PATH_MAX], *po, *pd, *px;
	volatile char sum = 0;
	int fo, fd;
	size_t i;

	ck_assert_ptr_nonnull(dir = tu_mkdtemp("pageout"));
	snprintf(obj, sizeof(obj), "%s/libobject.so", dir);
	snprintf(data, sizeof(data), "%s/data.db", dir);
	fo = patterned_file(obj, sz, 7, 0700);
	fd = patterned_file(data, sz, 7, 0600);
	map_object(fo, sz, &px, &po);
	pd = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(pd, MAP_FAILED);
	for (i = 0; i < sz; i += 4096)
		sum += po[i] + pd[i];
	ck_assert_uint_eq(resident(po, pages), pages);
	ck_assert_uint_eq(resident(pd, pages), pages);

	ck_assert_int_eq(pageout_self(false, &st), 0);
	/* the object's two mappings at least, this program's and libc's */
	ck_assert_uint_ge(st.ranges, 4);
	ck_assert_uint_ge(st.advised, sz + 4096);
	ck_assert_msg(st.failed == 0, "%u refused, first errno %d", st.failed,
	    -st.err);
	ck_assert_int_ge(st.ns, 0);
	/* mapped by this process alone: unmapped (a page another CPU's
	 * LRU batch still held may stay: most, not all) */
	ck_assert_msg(resident(po, pages) <= pages / 4,
	    "%zu of %zu pages still mapped", resident(po, pages), pages);
	ck_assert_uint_lt(st.after, st.before);
	ck_assert_uint_ge(st.before - st.after, sz / 2);
	/* the data file is not an object: untouched */
	ck_assert_uint_eq(resident(pd, pages), pages);
	/* what is read again comes back */
	for (i = 0; i < sz; i += 4096)
		sum += po[i];
	ck_assert_uint_eq(resident(po, pages), pages);
	munmap(px, 4096);
	munmap(po, sz);
	munmap(pd, sz);
	close(fo);
	close(fd);
	tu_rmtree(dir);
	free(dir);
	(void)sum;
}
END_TEST

/*
 * What the pageout cannot take, the pass drops from the page tables: a
 * loaded object's never-written data that another process maps too
 * stays in the page cache (the other process keeps it) but leaves this
 * one's mappings. Not dropped: a range with a page of this process's own
 * (written, then made read-only, as RELRO is), which keeps it and its
 * contents; and a clean range of a file that is no loaded object (mapped
 * by hand here; a dlopen() mapping over its reservation looks the same),
 * which only the kernel's pageout may take.
 */
START_TEST(test_pageout_shared)
{
	const size_t pages = 64, sz = pages * 4096;
	struct pageout_stats st;
	const unsigned char *lo;
	char *dir, obj[PATH_MAX], lib[PATH_MAX], *po, *pw, *px, c;
	const char *bd = getenv("VITALS_BUILDDIR");
	unsigned char vec[64];
	volatile char sum = 0;
	int fo, ready[2], hold[2], status;
	size_t i;
	void *h;
	pid_t pid;

	snprintf(lib, sizeof(lib), "%s/tests/libpageouttest.so", bd ? bd : ".");
	h = dlopen(lib, RTLD_NOW);
	ck_assert_msg(h != NULL, "%s", dlerror());
	ck_assert_ptr_nonnull(lo = dlsym(h, "pageout_testlib_rodata"));
	ck_assert_ptr_nonnull(dir = tu_mkdtemp("pageout"));
	snprintf(obj, sizeof(obj), "%s/libshared.so", dir);
	fo = patterned_file(obj, sz, 3, 0700);
	map_object(fo, sz, &px, &po);
	/* relocated and sealed: a private copy of its first page */
	pw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fo, sz / 2);
	ck_assert_ptr_ne(pw, MAP_FAILED);
	pw[0] = 0x5a;
	ck_assert_int_eq(mprotect(pw, 4096, PROT_READ), 0);
	for (i = 0; i < sz; i += 4096)
		sum += (char)(po[i] + lo[i]);
	ck_assert_uint_eq(resident(po, pages), pages);
	ck_assert_uint_eq(resident((const char *)lo, pages), pages);
	/* a second process maps every page of both: it reads them */
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(hold), 0);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		volatile char s2 = 0;

		close(ready[0]);
		close(hold[1]);
		for (i = 0; i < sz; i += 4096)
			s2 += (char)(po[i] + lo[i]);
		(void)s2;
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		/* until the parent is done */
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);

	ck_assert_int_eq(pageout_self(false, &st), 0);
	ck_assert_msg(st.failed == 0, "%u refused, first errno %d", st.failed,
	    -st.err);
	ck_assert_uint_eq(st.passes, 1);
	ck_assert_uint_eq(st.given,
	    st.before > st.after ? st.before - st.after : 0);
	/* the loaded object's data is out of this process's page tables,
	 * every page (the pageout skipped them: the other process maps
	 * them) */
	ck_assert_uint_ge(st.unmapped, sz);
	ck_assert_uint_eq(resident((const char *)lo, pages), 0);
	/* and still in the page cache, where the other process has them */
	ck_assert_int_eq(mincore((void *)lo, sz, vec), 0);
	for (i = 0; i < pages; i++)
		ck_assert_msg(vec[i] & 1, "page %zu not cached", i);
	/* the hand-made mapping, no loaded object's, is left mapped */
	ck_assert_uint_eq(resident(po, pages), pages);
	/* the written range kept its own page */
	ck_assert_uint_ge(st.kept, 1);
	ck_assert_int_eq(pw[0], 0x5a);
	ck_assert_int_eq(pw[1], (char)((sz / 2 + 1) * 3 + 1));
	/* what is read again maps back, the file's bytes */
	ck_assert_int_eq(lo[0], 1);
	for (i = 1; i < sz - 1; i++)
		ck_assert_int_eq(lo[i], 0);
	ck_assert_int_eq(lo[256 * 1024 - 1], 2);
	ck_assert_uint_eq(resident((const char *)lo, pages), pages);

	close(hold[1]);
	close(ready[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	munmap(px, 4096);
	munmap(po, sz);
	munmap(pw, 4096);
	close(fo);
	dlclose(h);
	tu_rmtree(dir);
	free(dir);
	(void)sum;
}
END_TEST

/* VmHWM and getrusage's ru_maxrss are one figure (the peak, KiB) */
START_TEST(test_self_agrees)
{
	struct rusage ru;
	struct memstat m;
	char *volatile p = malloc(8 << 20);
	size_t i;

	ck_assert_ptr_nonnull(p);
	/* a peak of at least 8 MiB: every page written (volatile: kept) */
	for (i = 0; i < (8 << 20); i += 512)
		p[i] = 1;
	ck_assert_int_eq(memstat_read(NULL, &m), 0);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	free(p);
	ck_assert(m.have & MEMSTAT_HWM);
	ck_assert_uint_ge(m.hwm, 8ULL << 20);
	/* read a moment apart, from counters the kernel sums lazily: within
	 * 1 MiB of each other, where the peak is 8 MiB or more */
	ck_assert_msg(llabs((long long)(m.hwm / 1024) -
			  (long long)ru.ru_maxrss) <= 1024,
	    "VmHWM %llu KiB, ru_maxrss %ld KiB",
	    (unsigned long long)(m.hwm / 1024), ru.ru_maxrss);
	ck_assert_uint_ge(m.hwm, m.rss);
	ck_assert_uint_ge(m.threads, 1);
	ck_assert_int_eq(memstat_read("/nonexistent", &m), -ENOENT);
}
END_TEST

/* malloc's account follows an allocation: up by it, down when freed */
START_TEST(test_heap_follows)
{
	struct memstat_heap h0, h1, h2;
	char *volatile p;
	size_t i;

#if defined(__SANITIZE_ADDRESS__)
	/* ASan's malloc is not the C library's: its account stays empty,
	 * and memstat_heap says there is none to give */
	ck_assert_int_eq(memstat_heap(&h0), -ENOTSUP);
	return;
#endif
	ck_assert_int_eq(memstat_heap(&h0), 0);
	ck_assert_uint_gt(h0.in_use, 0);
	ck_assert_uint_le(h0.mmap, h0.in_use);
	p = malloc(4 << 20); /* above the mmap threshold: its own mapping */
	ck_assert_ptr_nonnull(p);
	for (i = 0; i < (4 << 20); i += 4096)
		p[i] = 1;
	ck_assert_int_eq(memstat_heap(&h1), 0);
	free(p);
	ck_assert_int_eq(memstat_heap(&h2), 0);
	ck_assert_uint_ge(h1.in_use, h0.in_use + (4 << 20));
	ck_assert_uint_ge(h1.mmap, h0.mmap + (4 << 20));
	ck_assert_uint_le(h2.in_use + (4 << 20), h1.in_use);
}
END_TEST

/*
 * The daemon's heap settings (compat_heap_setup, before any thread): a
 * large block freed, and then one as large again, are each mapped alone
 * and go back at their free; so are blocks of 64 KiB the heap's top
 * cannot hold. With glibc's own rule the first free raises
 * the mmap threshold to the block's size, and the next comes from the
 * heap and stays there, freed (kept: fordblks), until a trim.
 */
START_TEST(test_heap_thresholds)
{
	struct memstat_heap h0, h1, h2;
	char *volatile p;
	char *blk[16];
	size_t i, k, sz = 1 << 20;

#if defined(__SANITIZE_ADDRESS__)
	return; /* ASan's malloc has no thresholds (test_heap_follows) */
#endif
	compat_heap_setup();
	ck_assert_int_eq(memstat_heap(&h0), 0);
	for (k = 0; k < 3; k++) {
		p = malloc(sz);
		ck_assert_ptr_nonnull(p);
		for (i = 0; i < sz; i += 4096)
			p[i] = 1;
		ck_assert_int_eq(memstat_heap(&h1), 0);
		/* its own mapping, every time */
		ck_assert_uint_ge(h1.mmap, h0.mmap + sz);
		free(p);
		ck_assert_int_eq(memstat_heap(&h2), 0);
		ck_assert_uint_lt(h2.free, h0.free + sz / 2);
	}
	/* and blocks of 64 KiB (glibc's own threshold is 128): once the
	 * heap's free top is used up (≤ 256 + 128 KiB: the trim threshold
	 * and glibc's top pad), each is mapped alone rather than grow the
	 * heap, and all go at their free */
	ck_assert_int_eq(memstat_heap(&h0), 0);
	for (k = 0; k < 16; k++) {
		blk[k] = malloc(64 << 10);
		ck_assert_ptr_nonnull(blk[k]);
		blk[k][0] = 1;
	}
	ck_assert_int_eq(memstat_heap(&h1), 0);
	ck_assert_uint_ge(h1.mmap, h0.mmap + 8 * (64 << 10));
	for (k = 0; k < 16; k++)
		free(blk[k]);
	ck_assert_int_eq(memstat_heap(&h2), 0);
	ck_assert_uint_eq(h2.mmap, h0.mmap);
}
END_TEST

static Suite *
memstat_suite(void)
{
	Suite *s = suite_create("memstat");
	TCase *tc = tcase_create("memstat");

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_maps);
	tcase_add_test(tc, test_maps_self);
	tcase_add_test(tc, test_maps_cached);
	tcase_add_test(tc, test_pageout_parse);
	tcase_add_test(tc, test_pageout_parse_smaps);
	tcase_add_test(tc, test_pageout_shared);
	tcase_add_test(tc, test_pageout_self);
	tcase_add_test(tc, test_self_agrees);
	tcase_add_test(tc, test_heap_follows);
	tcase_add_test(tc, test_heap_thresholds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(memstat_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
