/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's own memory (core/memstat.c, Health.memory): status lines
 * parsed from text, garbage left out rather than read as 0, and the
 * kernel's two views of this process's peak agreeing.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/memstat.h"
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
 * and what is neither (heap, anonymous, a database's shared file) */
static const char smaps_head[] =
    "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234        "
    "/usr/sbin/vitalsd\n"
    "Size:                132 kB\n"
    "Rss:                 120 kB\n"
    "Private_Dirty:         0 kB\n"
    "55d0c0b40000-55d0c0b60000 rw-p 00140000 08:01 1234        "
    "/usr/sbin/vitalsd\n"
    "Rss:                 128 kB\n"
    "Private_Dirty:       124 kB\n"
    "55d0c1000000-55d0c1800000 rw-p 00000000 00:00 0           [heap]\n"
    "Rss:                6000 kB\n"
    "Private_Dirty:      6000 kB\n"
    "7f0000000000-7f0000100000 r-xp 00028000 08:01 99          "
    "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "Rss:                1400 kB\n"
    "Private_Dirty:        16 kB\n"
    "7f0000200000-7f0000210000 r-xp 00000000 08:01 98          "
    "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6\n"
    "Rss:                1180 kB\n"
    "7f0000300000-7f0000308000 rw-s 00000000 08:01 97          "
    "/var/lib/vitals/vitals.db-shm\n"
    "Rss:                  32 kB\n"
    "7f0000400000-7f0000401000 rw-p 00000000 00:00 0 \n"
    "Rss:                   4 kB\n";

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
	ck_assert_uint_eq(m.have, MEMSTAT_PROGRAM | MEMSTAT_LIBS);
	/* one more page of the program resident: the figure moves */
	snprintf(more, sizeof(more), "%s%s", smaps_head,
	    "55d0c0c00000-55d0c0c10000 r-xp 00021000 08:01 1234        "
	    "/usr/sbin/vitalsd\nRss:                   4 kB\n");
	ck_assert_int_eq(memstat_maps_parse(more, strlen(more), exe, &m2), 0);
	ck_assert_uint_eq(m2.program, m.program + 4096);
	ck_assert_uint_eq(m2.libs, m.libs);
	/* another program's name: its mappings are neither */
	ck_assert_int_eq(memstat_maps_parse(smaps_head, strlen(smaps_head),
			     "/usr/bin/other", &m2),
	    0);
	ck_assert_uint_eq(m2.have, MEMSTAT_LIBS);
	ck_assert_uint_eq(m2.program, 0);
	/* no mapping of either kind: an error, ret untouched */
	memset(&m2, 0xa5, sizeof(m2));
	ck_assert_int_eq(memstat_maps_parse("Rss: 4 kB\n", 10, exe, &m2),
	    -EINVAL);
	ck_assert_uint_eq(m2.have, 0xa5a5a5a5u);
}
END_TEST

/* this test's own process: its program and libc are mapped and resident */
START_TEST(test_maps_self)
{
	struct memstat_maps m;
	struct memstat st;

	ck_assert_int_eq(memstat_maps_read(NULL, &m), 0);
	ck_assert_int_eq(memstat_read(NULL, &st), 0);
	ck_assert_uint_eq(m.have, MEMSTAT_PROGRAM | MEMSTAT_LIBS);
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
 * and go back at their free. With glibc's own rule the first free raises
 * the mmap threshold to the block's size, and the next comes from the
 * heap and stays there, freed (kept: fordblks), until a trim.
 */
START_TEST(test_heap_thresholds)
{
	struct memstat_heap h0, h1, h2;
	char *volatile p;
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
