/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall latency in the exports (export_sc.c, export_text.c): windows
 * with a synthetic syscall part folded into sums that only grow, the
 * series past the bound in "other" with every call accounted, the
 * histogram valid (cumulative buckets, +Inf = _count, calls under the
 * floor in the floor's bucket), and the page accepted by promtool where
 * it is installed.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sysnames.h"
#include "export/otlp.h"
#include "otlp_metrics.pb-c.h"
#include "testutil.h"
#include "vitalsd.h"

/* A window whose part has n rows of pid base+i (read, 10 calls of 3 µs,
 * one EAGAIN), f fast calls in the first row, and an other row of 4. */
static struct window *
sc_win(uint64_t seq, int32_t base, size_t n, uint64_t f, uint64_t floor_ns)
{
	struct window *w = window_new(seq, 1);
	struct window_syscalls *p = window_syscalls_new();
	size_t i;

	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(p);
	p->state = SC_ON;
	p->arch = SYSNAMES_X86_64;
	p->have = SC_HAVE_PROG_STATS;
	p->floor_ns = floor_ns;
	p->prog_run_ns = 1500000000;
	p->prog_run_cnt = 3;
	p->ctr.rb_full = 1;
	ck_assert_ptr_nonnull(p->rows = calloc(n, sizeof(*p->rows)));
	p->nrows = n;
	for (i = 0; i < n; i++) {
		struct sc_row *r = &p->rows[i];

		r->tgid = base + (int32_t)i;
		r->start_ns = 1000 + i;
		snprintf(r->comm, sizeof(r->comm), "p%u",
		    (unsigned)(i % 100000));
		r->nr = i % 2 ? 1 : 0; /* write, read */
		r->count = 10;
		r->errors[SC_ERR_EAGAIN] = 1;
		r->sum_ns = 30000;
		r->max_ns = 3000;
		r->hist[11] = 10; /* [2048, 4096) */
	}
	p->rows[0].fast = f;
	p->rows[0].count += f;
	p->rows[0].sum_ns += f * 10;
	p->other.tgid = -1;
	p->other.count = 4;
	p->other.sum_ns = 4000000;
	p->other.hist[19] = 4;
	p->other_rows = 2;
	window_part_set(w, WPART_SYSCALLS, p);
	return w;
}

/* the value of the first line starting with prefix, or -1 */
static double
value_of(const char *page, const char *prefix)
{
	const char *l = page;
	size_t n = strlen(prefix);

	while (l && *l) {
		if (strncmp(l, prefix, n) == 0)
			return strtod(strchr(l + n, ' ') + 1, NULL);
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return -1;
}

/* Σ of every line starting with prefix */
static double
sum_of(const char *page, const char *prefix)
{
	const char *l = page;
	size_t n = strlen(prefix);
	double s = 0;

	while (l && *l) {
		if (strncmp(l, prefix, n) == 0)
			s += strtod(strchr(strchr(l, '}'), ' ') + 1, NULL);
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return s;
}

START_TEST(test_page)
{
	struct export_state st;
	struct export_page pg = { 0 };
	struct vbuf b = { 0 };
	struct window *w;
	double prev = -1, v;

	ck_assert_int_eq(export_state_init(&st, 5, 100, 4096), 0);
	/* off: nothing on the page */
	w = window_new(1, 1);
	window_part_set(w, WPART_SYSCALLS, window_syscalls_new());
	export_state_window(&st, w);
	window_free(w);
	ck_assert_ptr_null(st.sc);
	/* 40 processes, then 40 others: 64 series, 16 rows to other */
	w = sc_win(2, 100, 40, 5, 1000);
	export_state_window(&st, w);
	window_free(w);
	w = sc_win(3, 100, 20, 0, 1000); /* the same 20 again */
	export_state_window(&st, w);
	window_free(w);
	w = sc_win(4, 500, 40, 0, 1000);
	export_state_window(&st, w);
	window_free(w);
	ck_assert_ptr_nonnull(st.sc);
	ck_assert_uint_eq(st.sc->nseries, EXPORT_SC_SERIES);
	pg.st = &st;
	ck_assert_int_eq(export_render(&pg, EXPORT_OPENMETRICS, &b), 0);
	/* every call: 100 rows of 10, 5 fast, 3 other rows of 4 */
	v = sum_of(b.p, "vitals_syscall_calls_total{");
	ck_assert_msg(v == 100 * 10 + 5 + 3 * 4, "calls %f", v);
	ck_assert(value_of(b.p,
		      "vitals_syscall_calls_total{pid=\"100\","
		      "comm=\"p0\",syscall=\"read\"}") == 25);
	ck_assert(value_of(b.p, "vitals_syscall_calls_total{pid=\"other\"") ==
	    16 * 10 + 12);
	ck_assert(value_of(b.p,
		      "vitals_syscall_errors_total{pid=\"101\","
		      "comm=\"p1\",syscall=\"write\","
		      "class=\"eagain\"}") == 2);
	/* the read histogram: 5 fast in the floor's bucket (le 1024 ns) */
	ck_assert(value_of(b.p,
		      "vitals_syscall_latency_seconds_bucket{"
		      "syscall=\"read\",le=\"0.000001024\"}") == 5);
	/* cumulative, and +Inf = _count = Σ read calls */
	{
		const char *l = b.p;
		const char *pre = "vitals_syscall_latency_seconds_bucket{"
				  "syscall=\"read\"";

		while ((l = strstr(l, pre)) != NULL) {
			v = strtod(strchr(l, ' ') + 1, NULL);
			ck_assert(v >= prev);
			prev = v;
			l++;
		}
	}
	v = value_of(b.p,
	    "vitals_syscall_latency_seconds_count{syscall=\""
	    "read\"}");
	/* +Inf (the last bucket read) = _count = every read call: 20 + 10
	 * + 20 rows of 10, and the 5 under the floor */
	ck_assert(v == prev);
	ck_assert_msg(v == 505, "read count %f", v);
	ck_assert(value_of(b.p,
		      "vitals_syscall_latency_seconds_count{"
		      "syscall=\"other\"}") == 12);
	ck_assert(
	    value_of(b.p, "vitals_syscall_prog_run_seconds_total") == 4.5);
	ck_assert(value_of(b.p,
		      "vitals_syscall_lost_total{reason=\"rb_full\"}") == 3);
	ck_assert_ptr_nonnull(
	    strstr(b.p, "# TYPE vitals_syscall_latency_seconds histogram\n"));
	ck_assert_ptr_nonnull(strstr(b.p, "# EOF\n"));

	/* promtool, where installed, on the Prometheus text format */
	if (access("/usr/bin/promtool", X_OK) == 0) {
		char path[] = "/tmp/vitals-sc-XXXXXX";
		char cmd[256];
		int fd = mkstemp(path);
		FILE *f;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(export_render(&pg, EXPORT_PROMETHEUS, &b), 0);
		ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
		fputs(b.p, f);
		fclose(f);
		snprintf(cmd, sizeof(cmd),
		    "/usr/bin/promtool check metrics < %s 2>&1", path);
		ck_assert_msg(system(cmd) == 0, "promtool refused %s", path);
		unlink(path);
	}
	vbuf_release(&b);
	export_state_release(&st);
}
END_TEST

#define PB(x) Opentelemetry__Proto__Collector__Metrics__V1__##x

static const PB(Metric) *
    metric_of(const PB(ScopeMetrics) * sm, const char *name)
{
	size_t i;

	for (i = 0; i < sm->n_metrics; i++)
		if (strcmp(sm->metrics[i]->name, name) == 0)
			return sm->metrics[i];
	return NULL;
}

/* The same sums in the OTLP request: Σ points = every call. */
START_TEST(test_otlp)
{
	struct otlp_times t = { .boot_wall_ns = 1700000000LL * 1000000000LL,
		.now_wall_ns = 1700000100LL * 1000000000LL };
	struct export_state st;
	struct export_page pg = { 0 };
	struct vbuf b = { 0 };
	PB(ExportMetricsServiceRequest) * req;
	const PB(ScopeMetrics) * sm;
	const PB(Metric) * m;
	struct window *w;
	size_t points = 0, i;
	int64_t n = 0;

	ck_assert_int_eq(export_state_init(&st, 5, 100, 4096), 0);
	w = sc_win(2, 100, 70, 5, 1000); /* 6 past the series bound */
	export_state_window(&st, w);
	window_free(w);
	pg.st = &st;
	ck_assert_int_eq(otlp_encode(&pg, NULL, &t, &b, &points), 0);
	req =
	    opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(
		NULL, b.len, (const uint8_t *)b.p);
	ck_assert_ptr_nonnull(req);
	sm = req->resource_metrics[0]->scope_metrics[0];
	ck_assert_ptr_nonnull(m = metric_of(sm, "vitals.syscall.calls"));
	ck_assert_uint_eq(m->sum->n_data_points, EXPORT_SC_SERIES + 1);
	for (i = 0; i < m->sum->n_data_points; i++)
		n += m->sum->data_points[i]->as_int;
	ck_assert_int_eq(n, 70 * 10 + 5 + 4);
	ck_assert_ptr_nonnull(m = metric_of(sm, "vitals.syscall.errors"));
	ck_assert_uint_eq(m->sum->n_data_points,
	    (EXPORT_SC_SERIES + 1) * SC_ERR__MAX);
	ck_assert_ptr_nonnull(m = metric_of(sm, "vitals.syscall.time"));
	ck_assert_str_eq(m->unit, "s");
	ck_assert_ptr_nonnull(m = metric_of(sm, "vitals.syscall.lost"));
	/* the histograms: read, write, other; Σ buckets = count */
	ck_assert_ptr_nonnull(m = metric_of(sm, "vitals.syscall.latency"));
	ck_assert_ptr_nonnull(m->histogram);
	ck_assert_uint_eq(m->histogram->n_data_points, 3);
	n = 0;
	for (i = 0; i < m->histogram->n_data_points; i++) {
		const PB(HistogramDataPoint) *h = m->histogram->data_points[i];
		uint64_t s = 0;
		size_t k;

		ck_assert_uint_eq(h->n_bucket_counts, h->n_explicit_bounds + 1);
		for (k = 0; k < h->n_bucket_counts; k++)
			s += h->bucket_counts[k];
		ck_assert_uint_eq(s, h->count);
		for (k = 1; k < h->n_explicit_bounds; k++)
			ck_assert(
			    h->explicit_bounds[k] > h->explicit_bounds[k - 1]);
		n += (int64_t)h->count;
		if (strcmp(h->attributes[0]->value->string_value, "read") == 0)
			/* 35 rows of 10, 5 under the floor: bound 1.024 µs */
			ck_assert_uint_eq(h->bucket_counts[9], 5);
	}
	ck_assert_int_eq(n, 70 * 10 + 5 + 4);
	ck_assert_ptr_nonnull(
	    m = metric_of(sm, "vitals.syscall.prog.run.time"));
	ck_assert(m->sum->data_points[0]->as_double == 1.5);
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(
	    req, NULL);
	vbuf_release(&b);
	export_state_release(&st);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("export_sc");
	TCase *tc = tcase_create("sc");

	tcase_add_test(tc, test_page);
	tcase_add_test(tc, test_otlp);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
