/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client's rendering of working-set answers, from hand-built messages:
 * per-region lines and the total (gone and unsampled regions left out of
 * it, their share "n/a"), the notes that must be shown (page level
 * unavailable, regions over the cap), and the JSON form.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "jsonmini.h"
#include "testutil.h"

static Vitals__WssRegion
region(uint64_t start, const char *label, uint32_t pages, uint32_t res,
    uint32_t acc, bool gone)
{
	Vitals__WssRegion g = VITALS__WSS_REGION__INIT;

	g.start = start;
	g.end = start + (uint64_t)pages * 4096;
	g.label = (char *)label;
	g.pages = pages;
	g.resident = res;
	g.accessed = acc;
	g.idle = res - acc;
	g.not_resident = pages - res;
	g.gone = gone;
	g.sampled = true;
	return g;
}

START_TEST(test_text)
{
	Vitals__WssRegion a = region(0x7f0000000000ULL, "r-xp(libfoo.so)", 10,
	    8, 2, false);
	Vitals__WssRegion b = region(0x7f0000100000ULL, "rw-p(libfoo.so)", 4, 4,
	    4, false);
	Vitals__WssRegion c = region(0x7f0000200000ULL, "rw-p(libfoo.so)", 6, 0,
	    0, true);
	Vitals__WssRegion *regs[] = { &a, &b, &c };
	Vitals__WssTarget t = VITALS__WSS_TARGET__INIT;
	Vitals__WssTarget *tv[] = { &t };
	Vitals__WssList l = VITALS__WSS_LIST__INIT;
	struct sbuf o;
	const char *s;

	t.pid = 1234;
	t.name = "com.example";
	t.mode = "library";
	t.library = "libfoo.so";
	t.method = "clear_refs";
	t.note = "page-level unavailable: needs CAP_SYS_ADMIN (PFNs read as 0)";
	t.end_reason = "";
	t.interval_ms = 2000;
	t.interval_min_ms = 100;
	t.interval_max_ms = 10000;
	t.passes = 3;
	t.pfn_zeroed = 3;
	t.regions_over = 2;
	t.regions = regs;
	t.n_regions = 3;
	l.targets = tv;
	l.n_targets = 1;
	sbuf_init(&o);
	fmt_wss(&o, &l);
	s = sbuf_str(&o);
	ck_assert_ptr_nonnull(strstr(s,
	    "pid 1234 (com.example) mode library "
	    "libfoo.so: every 2000 ms [100..10000]"));
	ck_assert_ptr_nonnull(strstr(s,
	    "method clear_refs (region level): "
	    "page-level unavailable: needs CAP_SYS_ADMIN"));
	ck_assert_ptr_nonnull(strstr(s, "page level unavailable in 3 passes"));
	ck_assert_ptr_nonnull(strstr(s, "2 regions over the per-target cap"));
	ck_assert_ptr_nonnull(strstr(s, "r-xp(libfoo.so)"));
	ck_assert_ptr_nonnull(strstr(s, "25.0%"));
	ck_assert_ptr_nonnull(strstr(s, "100.0%"));
	ck_assert_ptr_nonnull(strstr(s, "(unmapped in the pass)"));
	/* total: the gone region is not in it: 14 pages, 12 res, 6 acc */
	ck_assert_msg(strstr(s, "total") &&
		strstr(strstr(s, "total"),
		    "14       12        6       6       2   50.0%"),
	    "%s", s);
	sbuf_free(&o);

	t.ended = true;
	t.end_reason = "process exited";
	t.n_regions = 0;
	sbuf_init(&o);
	fmt_wss(&o, &l);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "ended: process exited"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "n/a"));
	sbuf_free(&o);
	/* files still on their way from the privileged helper */
	t.ended = false;
	t.opening = true;
	t.passes = 0;
	sbuf_init(&o);
	fmt_wss(&o, &l);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o),
	    "libfoo.so: starting: the privileged helper is opening its files"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "(no pass yet)"));
	sbuf_free(&o);
	l.n_targets = 0;
	sbuf_init(&o);
	fmt_wss(&o, &l);
	ck_assert_str_eq(sbuf_str(&o), "no working-set targets\n");
	sbuf_free(&o);
}
END_TEST

START_TEST(test_json)
{
	Vitals__WssRegion a = region(0x1000, "heap", 8, 5, 3, false);
	Vitals__WssRegion *regs[] = { &a };
	Vitals__WssTarget t = VITALS__WSS_TARGET__INIT;
	Vitals__WssTarget *tv[] = { &t };
	Vitals__WssList l = VITALS__WSS_LIST__INIT;
	Vitals__Response r = VITALS__RESPONSE__INIT;
	const struct jm *g;
	struct sbuf o;
	struct jm *j;

	t.pid = 77;
	t.mode = "heap";
	t.method = "page_idle";
	t.regions = regs;
	t.n_regions = 1;
	l.targets = tv;
	l.n_targets = 1;
	r.version = 1;
	r.result_case = VITALS__RESPONSE__RESULT_WSS_GET;
	r.wss_get = &l;
	sbuf_init(&o);
	json_response(&o, &r);
	j = jm_parse(sbuf_str(&o), o.len);
	ck_assert_ptr_nonnull(j);
	g = jm_path(j, "wss_get.targets");
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->n, 1);
	ck_assert_int_eq(jm_path(&g->v[0], "pid")->ll, 77);
	ck_assert_str_eq(jm_path(&g->v[0], "method")->str, "page_idle");
	g = jm_path(&g->v[0], "regions");
	ck_assert_int_eq(jm_path(&g->v[0], "not_resident")->ll, 3);
	ck_assert_int_eq(jm_path(&g->v[0], "accessed")->ll, 3);
	jm_free(j);
	sbuf_free(&o);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("client_wss");
	TCase *tc = tcase_create("render");

	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_json);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
