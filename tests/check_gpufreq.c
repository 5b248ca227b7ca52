/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU frequency and busy time (daemon/gpufreq): the parsers on the
 * drivers' shapes and on garbage; an Adreno (kgsl) and a Mali (devfreq)
 * fixture tree, byte for byte what the drivers print; absent files left
 * unknown, bad ones counted; files that change between readings giving
 * exact Δ time in state, busy and frequency gauges; and this machine's
 * /sys, which has no GPU: no device, no error.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpufreq/gpufreq.h"

static char tmp[PATH_MAX - 256];

static void
fixture(const char *name, char *ret, size_t cap)
{
	const char *src = getenv("VITALS_SRCDIR");

	ck_assert_ptr_nonnull(src);
	snprintf(ret, cap, "%s/tests/fixtures/gpufreq/%s", src, name);
}

/* A writable copy of a fixture tree in tmp. */
static void
copy(const char *name)
{
	char src[PATH_MAX], cmd[3 * PATH_MAX];

	fixture(name, src, sizeof(src));
	snprintf(tmp, sizeof(tmp), "/tmp/check_gpufreq.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", src, tmp);
	ck_assert_int_eq(system(cmd), 0);
}

static void
rmtmp(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

static void
put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void
del(const char *rel)
{
	char cmd[2 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", tmp, rel);
	ck_assert_int_eq(system(cmd), 0);
}

/* A trans_stat as devfreq prints it ("%10lu" fields, no separator). */
static void
trans_stat(char *buf, size_t cap, const uint64_t *hz, const uint64_t *ms,
    uint32_t n, uint64_t cur)
{
	size_t l = 0;

	l += (size_t)snprintf(buf + l, cap - l, "     From  :   To\n");
	l += (size_t)snprintf(buf + l, cap - l, "           :");
	for (uint32_t i = 0; i < n; i++)
		l += (size_t)snprintf(buf + l, cap - l, "%10lu",
		    (unsigned long)hz[i]);
	l += (size_t)snprintf(buf + l, cap - l, "   time(ms)\n");
	for (uint32_t i = 0; i < n; i++) {
		l += (size_t)snprintf(buf + l, cap - l,
		    "%s%10lu:", hz[i] == cur ? "*" : " ", (unsigned long)hz[i]);
		for (uint32_t j = 0; j < n; j++)
			l += (size_t)snprintf(buf + l, cap - l, "%10u",
			    i == j ? 0u : 1u);
		l += (size_t)snprintf(buf + l, cap - l, "%10llu\n",
		    (unsigned long long)ms[i]);
	}
	snprintf(buf + l, cap - l, "Total transition : %u\n", n * (n - 1));
}

#define S(x) x, sizeof(x) - 1

START_TEST(test_parse_good)
{
	uint64_t v, busy, total;
	uint32_t pct;
	struct gpufreq_tis t;
	uint64_t hz[3] = { 585000000, 1000000000, 1300000000 };
	uint64_t ms[3] = { 7, 12345678901ULL, 0 };
	char buf[1024];

	ck_assert_int_eq(gpufreq_parse_u64(S("427000000\n"), &v), 0);
	ck_assert_uint_eq(v, 427000000);
	ck_assert_int_eq(gpufreq_parse_gpubusy(S("  41234  100000\n"), &busy,
			     &total),
	    0);
	ck_assert_uint_eq(busy, 41234);
	ck_assert_uint_eq(total, 100000);
	ck_assert_int_eq(gpufreq_parse_gpubusy(S("      0       0\n"), &busy,
			     &total),
	    0);
	ck_assert_uint_eq(total, 0);
	ck_assert_int_eq(gpufreq_parse_pct(S("41 %\n"), &pct), 0);
	ck_assert_uint_eq(pct, 41);
	ck_assert_int_eq(gpufreq_parse_pct(S("37\n"), &pct), 0);
	ck_assert_uint_eq(pct, 37);
	/* 10-digit frequencies touch their neighbours: only width splits */
	trans_stat(buf, sizeof(buf), hz, ms, 3, hz[1]);
	ck_assert_int_eq(gpufreq_parse_trans_stat(buf, strlen(buf), &t), 0);
	ck_assert_uint_eq(t.n, 3);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(t.hz[i], hz[i]);
		ck_assert_uint_eq(t.ms[i], ms[i]);
	}
	ck_assert_uint_eq(t.total_trans, 6);
	ck_assert_int_eq(gpufreq_parse_trans_stat(S("Not Supported.\n"), &t),
	    -ENOTSUP);
}
END_TEST

START_TEST(test_parse_garbage)
{
	static const char *const bad_u64[] = {
		"",
		"\n",
		"abc\n",
		"12",
		"-5\n",
		"12 \n",
		"1 2\n",
		"0x10\n",
		"12\n\n",
		"99999999999999999999\n",
	};
	static const char *const bad_busy[] = {
		"",
		"  41234\n",
		"  41234  100000",
		"5 4\n",
		"1 2 3\n",
		"a b\n",
		"  41234x 100000\n",
	};
	static const char *const bad_pct[] = { "101\n", "41%\n", "41 %",
		"41 % \n", "-1\n", "\n" };
	uint64_t hz[2] = { 1, 2 }, ms[2] = { 3, 4 };
	uint64_t v, b, t;
	uint32_t p;
	struct gpufreq_tis tis = { .n = 99 };
	char good[512], cut[512];

	for (size_t i = 0; i < sizeof(bad_u64) / sizeof(*bad_u64); i++)
		ck_assert_msg(gpufreq_parse_u64(bad_u64[i], strlen(bad_u64[i]),
				  &v) == -EINVAL,
		    "u64 %zu", i);
	for (size_t i = 0; i < sizeof(bad_busy) / sizeof(*bad_busy); i++)
		ck_assert_msg(gpufreq_parse_gpubusy(bad_busy[i],
				  strlen(bad_busy[i]), &b, &t) == -EINVAL,
		    "gpubusy %zu", i);
	for (size_t i = 0; i < sizeof(bad_pct) / sizeof(*bad_pct); i++)
		ck_assert_msg(gpufreq_parse_pct(bad_pct[i], strlen(bad_pct[i]),
				  &p) == -EINVAL,
		    "pct %zu", i);
	/* every cut of a good trans_stat is refused, the result untouched */
	trans_stat(good, sizeof(good), hz, ms, 2, 1);
	for (size_t n = 0; n < strlen(good); n++) {
		memcpy(cut, good, n);
		ck_assert_msg(gpufreq_parse_trans_stat(cut, n, &tis) == -EINVAL,
		    "cut at %zu", n);
	}
	ck_assert_uint_eq(tis.n, 99);
	/* a row whose frequency is not the header's */
	memcpy(cut, good, strlen(good) + 1);
	strstr(cut, "         2:")[9] = '3';
	ck_assert_int_eq(gpufreq_parse_trans_stat(cut, strlen(cut), &tis),
	    -EINVAL);
}
END_TEST

START_TEST(test_adreno)
{
	char root[PATH_MAX];
	struct gpufreq *g;
	struct gpufreq_sample s;
	uint32_t errs = 99;

	fixture("adreno", root, sizeof(root));
	ck_assert_int_eq(gpufreq_new(root, &g), 0);
	/* the bus's devfreq node is no GPU; the kgsl devfreq node is the
	 * Adreno already listed */
	ck_assert_uint_eq(g->ndev, 1);
	ck_assert_str_eq(g->dev[0].name, "kgsl-3d0");
	ck_assert_str_eq(gpufreq_kind_name(g->dev[0].kind), "kgsl");
	ck_assert_int_eq(gpufreq_sample_dev(&g->dev[0], &s, &errs), 0);
	ck_assert_uint_eq(errs, 0);
	ck_assert_uint_eq(s.have,
	    GPUFREQ_HAVE_CUR | GPUFREQ_HAVE_MIN | GPUFREQ_HAVE_MAX |
		GPUFREQ_HAVE_BUSY | GPUFREQ_HAVE_BUSY_PCT | GPUFREQ_HAVE_TIS);
	ck_assert_uint_eq(s.cur_hz, 427000000);
	ck_assert_uint_eq(s.min_hz, 257000000);
	ck_assert_uint_eq(s.max_hz, 585000000);
	ck_assert_uint_eq(s.busy_us, 41234);
	ck_assert_uint_eq(s.total_us, 100000);
	ck_assert_uint_eq(s.busy_pct, 41);
	ck_assert_uint_eq(s.tis.n, 5);
	ck_assert_uint_eq(s.tis.hz[0], 257000000);
	ck_assert_uint_eq(s.tis.ms[0], 120400);
	ck_assert_uint_eq(s.tis.ms[4], 2650);
	ck_assert_uint_eq(s.tis.total_trans, 23);
	gpufreq_free(g);
}
END_TEST

START_TEST(test_mali)
{
	char root[PATH_MAX];
	struct gpufreq *g;
	struct gpufreq_sample s;
	uint32_t errs = 99;

	fixture("mali", root, sizeof(root));
	ck_assert_int_eq(gpufreq_new(root, &g), 0);
	ck_assert_uint_eq(g->ndev, 1);
	ck_assert_str_eq(g->dev[0].name, "1c500000.mali");
	ck_assert_str_eq(gpufreq_kind_name(g->dev[0].kind), "mali");
	ck_assert_int_eq(gpufreq_sample_dev(&g->dev[0], &s, &errs), 0);
	ck_assert_uint_eq(errs, 0);
	/* no gpubusy on a Mali: busy time unknown, the percentage known */
	ck_assert_uint_eq(s.have & GPUFREQ_HAVE_BUSY, 0);
	ck_assert_uint_ne(s.have & GPUFREQ_HAVE_BUSY_PCT, 0);
	ck_assert_uint_eq(s.busy_pct, 37);
	ck_assert_uint_eq(s.cur_hz, 471000000);
	ck_assert_uint_eq(s.min_hz, 151000000);
	ck_assert_uint_eq(s.max_hz, 848000000);
	ck_assert_uint_eq(s.tis.n, 6);
	ck_assert_uint_eq(s.tis.ms[2], 40500);
	gpufreq_free(g);
}
END_TEST

/* Absent files stay unknown (no have bit, no error); bad ones count. */
START_TEST(test_absent_and_garbage)
{
	struct gpufreq *g;
	struct gpufreq_sample s;
	struct gpufreq_win w;
	uint32_t errs;

	copy("adreno");
	del("class/kgsl/kgsl-3d0/devfreq");
	del("class/kgsl/kgsl-3d0/gpubusy");
	del("class/kgsl/kgsl-3d0/max_gpuclk");
	ck_assert_int_eq(gpufreq_new(tmp, &g), 0);
	ck_assert_uint_eq(g->ndev, 1);
	ck_assert_int_eq(gpufreq_sample_dev(&g->dev[0], &s, &errs), 0);
	ck_assert_uint_eq(errs, 0);
	ck_assert_uint_eq(s.have, GPUFREQ_HAVE_CUR | GPUFREQ_HAVE_BUSY_PCT);
	put("class/kgsl/kgsl-3d0/gpuclk", "garbage\n");
	put("class/kgsl/kgsl-3d0/gpu_busy_percentage", "141 %\n");
	gpufreq_read(g);
	gpufreq_take(g, 0, &w);
	ck_assert_uint_eq(w.reads, 1);
	ck_assert_uint_eq(w.errors, 2);
	ck_assert_uint_eq(g->errors, 2);
	ck_assert_uint_eq(w.have, 0);
	ck_assert_uint_eq(w.cur_n, 0);
	gpufreq_free(g);
	rmtmp();
}
END_TEST

/* Files that move between readings: exact Δs and gauges. */
START_TEST(test_changes_between_reads)
{
	static const uint64_t hz[6] = { 151000000, 302000000, 471000000,
		572000000, 762000000, 848000000 };
	uint64_t ms0[6] = { 300210, 81000, 40500, 9000, 2210, 1090 };
	uint64_t add1[6] = { 100, 0, 250, 400, 0, 250 };
	uint64_t add2[6] = { 0, 500, 0, 0, 0, 0 };
	uint64_t ms[6];
	char buf[2048];
	struct gpufreq *g;
	struct gpufreq_win w;

	copy("mali");
	ck_assert_int_eq(gpufreq_new(tmp, &g), 0);
	ck_assert_uint_eq(g->ndev, 1);
	gpufreq_read(g); /* 471 MHz, 37 % */
	for (int i = 0; i < 6; i++)
		ms[i] = ms0[i] + add1[i];
	trans_stat(buf, sizeof(buf), hz, ms, 6, hz[5]);
	put("class/devfreq/1c500000.mali/trans_stat", buf);
	put("class/devfreq/1c500000.mali/cur_freq", "848000000\n");
	put("devices/platform/1c500000.mali/utilisation", "91\n");
	gpufreq_read(g);
	for (int i = 0; i < 6; i++)
		ms[i] += add2[i];
	trans_stat(buf, sizeof(buf), hz, ms, 6, hz[1]);
	put("class/devfreq/1c500000.mali/trans_stat", buf);
	put("class/devfreq/1c500000.mali/cur_freq", "302000000\n");
	put("devices/platform/1c500000.mali/utilisation", "5\n");
	gpufreq_read(g);
	gpufreq_take(g, 0, &w);
	ck_assert_uint_eq(w.reads, 3);
	ck_assert_uint_eq(w.errors, 0);
	ck_assert_uint_eq(w.cur_n, 3);
	ck_assert_uint_eq(w.cur_min_hz, 302000000);
	ck_assert_uint_eq(w.cur_max_hz, 848000000);
	ck_assert_uint_eq(w.cur_sum_hz, 471000000 + 848000000 + 302000000);
	ck_assert_uint_eq(w.busy_pct_n, 3);
	ck_assert_uint_eq(w.busy_pct_sum, 37 + 91 + 5);
	ck_assert_uint_ne(w.have & GPUFREQ_HAVE_TIS, 0);
	ck_assert_uint_eq(w.tis_n, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert_uint_eq(w.tis_hz[i], hz[i]);
		ck_assert_uint_eq(w.tis_ms[i], add1[i] + add2[i]);
	}
	/* the next window starts from the last reading: Δ 0, then a
	 * counter that went back is an error, not a huge Δ */
	gpufreq_read(g);
	gpufreq_take(g, 0, &w);
	ck_assert_uint_eq(w.reads, 1);
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(w.tis_ms[i], 0);
	trans_stat(buf, sizeof(buf), hz, ms0, 6, hz[1]);
	put("class/devfreq/1c500000.mali/trans_stat", buf);
	gpufreq_read(g);
	gpufreq_take(g, 0, &w);
	ck_assert_uint_eq(w.errors, 1);
	ck_assert_uint_eq(w.have & GPUFREQ_HAVE_TIS, 0);
	gpufreq_free(g);
	rmtmp();

	/* Adreno: gpubusy is the driver's last period, summed per reading */
	copy("adreno");
	ck_assert_int_eq(gpufreq_new(tmp, &g), 0);
	gpufreq_read(g);
	put("class/kgsl/kgsl-3d0/gpubusy", "  20000  100000\n");
	gpufreq_read(g);
	gpufreq_take(g, 0, &w);
	ck_assert_uint_eq(w.busy_us, 41234 + 20000);
	ck_assert_uint_eq(w.total_us, 200000);
	ck_assert_uint_eq(w.busy_pct_sum, 82);
	gpufreq_free(g);
	rmtmp();
}
END_TEST

START_TEST(test_no_gpu)
{
	struct gpufreq *g;

	/* this VM: no kgsl, no GPU devfreq node */
	ck_assert_int_eq(gpufreq_new("/sys", &g), 0);
	ck_assert_uint_eq(g->ndev, 0);
	gpufreq_read(g);
	ck_assert_uint_eq(g->errors, 0);
	gpufreq_free(g);
	ck_assert_int_eq(gpufreq_new("/nonexistent/sys", &g), 0);
	ck_assert_uint_eq(g->ndev, 0);
	gpufreq_free(g);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gpufreq");
	TCase *tc = tcase_create("gpufreq");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_parse_garbage);
	tcase_add_test(tc, test_adreno);
	tcase_add_test(tc, test_mali);
	tcase_add_test(tc, test_absent_and_garbage);
	tcase_add_test(tc, test_changes_between_reads);
	tcase_add_test(tc, test_no_gpu);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
