/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU frequency from the collector to its users, on a writable copy of
 * both fixture trees (an Adreno's kgsl and a Mali's devfreq) whose
 * trans_stat and gpubusy are rewritten between readings: the window part
 * (exact Δ ms per frequency, busy share), its merge for roll-ups and
 * ranges, the store's round trip and range fold, and the OpenMetrics page
 * and OTLP request with the values the files imply (the page passes
 * promtool's check when promtool is installed, as in CI).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/otlp.h"
#include "otlp_metrics.pb-c.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC 1000000000LL
#define WALL 1700000000LL * SEC

static char root[PATH_MAX - 256];

/* both trees in one root: two GPUs, the kgsl one also under devfreq */
static void
tree(void)
{
	const char *src = getenv("VITALS_SRCDIR");
	char *d = tu_mkdtemp("gpufreq-wire"), cmd[3 * PATH_MAX];

	ck_assert_ptr_nonnull(src);
	snprintf(root, sizeof(root), "%s", d);
	free(d);
	snprintf(cmd, sizeof(cmd),
	    "cp -a '%s/tests/fixtures/gpufreq/adreno/.' '%s/' && "
	    "cp -a '%s/tests/fixtures/gpufreq/mali/.' '%s/'",
	    src, root, src, root);
	ck_assert_int_eq(system(cmd), 0);
}

static void
put(const char *rel, const char *text)
{
	char p[PATH_MAX], t[PATH_MAX + 8];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(t, sizeof(t), "%s.new", p);
	ck_assert_int_eq(tu_writes(t, text), 0);
	ck_assert_int_eq(rename(t, p), 0);
}

#define KGSL_TS "class/kgsl/kgsl-3d0/devfreq/trans_stat"
#define MALI_TS "class/devfreq/1c500000.mali/trans_stat"

/* the fixtures' tables with ms added to the named rows */
static void
kgsl_ts(unsigned add257, unsigned add585)
{
	char b[1024];

	snprintf(b, sizeof(b),
	    "     From  :   To\n"
	    "           : 257000000 345000000 427000000 499200000 585000000"
	    "   time(ms)\n"
	    "  257000000:         0         3         1         0         0"
	    " %10u\n"
	    "  345000000:         2         0         4         1         0"
	    "      53210\n"
	    "* 427000000:         1         3         0         2         1"
	    "      20115\n"
	    "  499200000:         0         1         2         0         1"
	    "       8120\n"
	    "  585000000:         0         0         0         1         0"
	    " %10u\n"
	    "Total transition : 23\n",
	    120400 + add257, 2650 + add585);
	put(KGSL_TS, b);
}

static void
mali_ts(unsigned add471)
{
	char b[1024];

	snprintf(b, sizeof(b),
	    "     From  :   To\n"
	    "           : 151000000 302000000 471000000 572000000 762000000"
	    " 848000000   time(ms)\n"
	    "  151000000:         0         2         0         0         0"
	    "         0    300210\n"
	    "  302000000:         2         0         2         0         0"
	    "         0     81000\n"
	    "* 471000000:         0         2         0         2         0"
	    "         0 %9u\n"
	    "  572000000:         0         0         2         0         2"
	    "         0      9000\n"
	    "  762000000:         0         0         0         2         0"
	    "         2      2210\n"
	    "  848000000:         0         0         0         0         2"
	    "         0      1090\n"
	    "Total transition : 20\n",
	    40500 + add471);
	put(MALI_TS, b);
}

static struct window *
mkwin(uint64_t seq)
{
	struct window *w = window_new(seq, 2);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b0075e7e-0000-4000-8000-9");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = WALL + (int64_t)seq * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	return w;
}

static const struct gpufreq_wdev *
dev(const struct window_gpufreq *p, const char *name)
{
	for (uint32_t i = 0; i < p->ndev; i++)
		if (!strcmp(p->dev[i].name, name))
			return &p->dev[i];
	ck_abort_msg("no device %s", name);
	return NULL;
}

static uint64_t
ms_at(const struct gpufreq_win *w, uint64_t hz)
{
	for (uint32_t i = 0; i < w->tis_n; i++)
		if (w->tis_hz[i] == hz)
			return w->tis_ms[i];
	ck_abort_msg("no state %llu", (unsigned long long)hz);
	return 0;
}

static uint64_t
ms_sum(const struct gpufreq_win *w)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i < w->tis_n; i++)
		s += w->tis_ms[i];
	return s;
}

/*
 * Two windows: the first reads the files as they are twice (no Δ), the
 * second after 1000 ms at 257 MHz and 250 ms at 585 MHz (kgsl), 400 ms at
 * 471 MHz (Mali) and gpubusy at half. Returns them.
 */
static void
two_windows(struct gpufreq *g, struct window **w1, struct window **w2)
{
	*w1 = mkwin(1);
	gpufreq_tick(g);
	gpufreq_tick(g);
	ck_assert_int_eq(gpufreq_window(g, *w1), 0);
	*w2 = mkwin(2);
	kgsl_ts(1000, 250);
	mali_ts(400);
	put("class/kgsl/kgsl-3d0/gpubusy", "  50000  100000\n");
	gpufreq_tick(g);
	kgsl_ts(1000, 250); /* no change: no more Δ */
	gpufreq_tick(g);
	ck_assert_int_eq(gpufreq_window(g, *w2), 0);
}

START_TEST(part_and_merge)
{
	struct gpufreq *g = NULL;
	struct window *w1, *w2;
	const struct window_gpufreq *p;
	const struct gpufreq_wdev *k, *m;
	struct window_gpufreq *acc = NULL;
	uint64_t ppm;

	tree();
	/* Mali without min_freq: its floor is unknown */
	{
		char p2[PATH_MAX];

		snprintf(p2, sizeof(p2),
		    "%s/class/devfreq/1c500000.mali/"
		    "min_freq",
		    root);
		ck_assert_int_eq(unlink(p2), 0);
	}
	ck_assert_int_eq(gpufreq_new(root, &g), 0);
	ck_assert_uint_eq(g->ndev, 2);
	two_windows(g, &w1, &w2);

	p = window_gpufreq(w1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->found, 2);
	ck_assert_uint_eq(p->reads, 2);
	ck_assert_uint_gt(p->read_ns, 0);
	k = dev(p, "kgsl-3d0");
	ck_assert(k->w.have & GPUFREQ_HAVE_TIS);
	ck_assert_uint_eq(ms_sum(&k->w), 0);
	/* gpubusy 41234 of 100000, twice */
	ck_assert_uint_eq(k->w.busy_us, 2 * 41234);
	ck_assert_uint_eq(k->w.total_us, 2 * 100000);
	ck_assert(gpufreq_busy_ppm(&k->w, &ppm));
	ck_assert_uint_eq(ppm, 412340);

	p = window_gpufreq(w2);
	k = dev(p, "kgsl-3d0");
	m = dev(p, "1c500000.mali");
	ck_assert_str_eq(gpufreq_kind_name(k->kind), "kgsl");
	ck_assert_str_eq(gpufreq_kind_name(m->kind), "mali");
	ck_assert_uint_eq(ms_at(&k->w, 257000000), 1000);
	ck_assert_uint_eq(ms_at(&k->w, 585000000), 250);
	ck_assert_uint_eq(ms_at(&k->w, 345000000), 0);
	ck_assert_uint_eq(ms_sum(&k->w), 1250);
	ck_assert_uint_eq(ms_at(&m->w, 471000000), 400);
	ck_assert_uint_eq(ms_sum(&m->w), 400);
	ck_assert(gpufreq_busy_ppm(&k->w, &ppm));
	ck_assert_uint_eq(ppm, 500000);
	/* Mali: utilisation 37, no gpubusy, no floor */
	ck_assert(!(m->w.have & GPUFREQ_HAVE_BUSY));
	ck_assert(!(m->w.have & GPUFREQ_HAVE_MIN));
	ck_assert(m->w.have & GPUFREQ_HAVE_MAX);
	ck_assert(gpufreq_busy_ppm(&m->w, &ppm));
	ck_assert_uint_eq(ppm, 370000);
	ck_assert_uint_eq(m->w.cur_min_hz, 471000000);
	ck_assert_uint_eq(m->w.cur_sum_hz, 2ULL * 471000000);

	/* a roll-up of the two: Δs and busy periods add, devices by name */
	ck_assert_int_eq(window_gpufreq_merge(&acc, window_gpufreq(w1)), 0);
	ck_assert_int_eq(window_gpufreq_merge(&acc, window_gpufreq(w2)), 0);
	ck_assert_uint_eq(acc->ndev, 2);
	ck_assert_uint_eq(acc->windows, 2);
	ck_assert_uint_eq(acc->reads, 4);
	k = dev(acc, "kgsl-3d0");
	ck_assert_uint_eq(ms_at(&k->w, 257000000), 1000);
	ck_assert_uint_eq(ms_sum(&k->w), 1250);
	ck_assert_uint_eq(k->w.busy_us, 2 * 41234 + 2 * 50000);
	ck_assert_uint_eq(k->w.total_us, 4 * 100000);
	ck_assert_uint_eq(k->w.reads, 4);
	ck_assert_uint_eq(k->w.cur_n, 4);
	window_gpufreq_free(acc);

	window_free(w1);
	window_free(w2);
	gpufreq_free(g);
	tu_rmtree(root);
}
END_TEST

START_TEST(store_round_trip)
{
	struct gpufreq *g = NULL;
	struct window *w1, *w2, *none, **ws = NULL;
	struct window_gpufreq *r = NULL;
	const struct gpufreq_wdev *a, *b;
	struct store *s = NULL;
	char db[PATH_MAX], *dir;
	size_t n = 0;

	tree();
	ck_assert_int_eq(gpufreq_new(root, &g), 0);
	two_windows(g, &w1, &w2);
	/* a window of a machine with no GPU: no row */
	none = mkwin(3);
	window_part_set(none, WPART_GPUFREQ, window_gpufreq_new(0));

	dir = tu_mkdtemp_db("gpufreq-store", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(store_put(s, none), 0);
	ck_assert_int_eq(store_windows(s, WALL, WALL + 100 * SEC, 0, &ws, &n),
	    0);
	ck_assert_uint_eq(n, 3);
	/* each window's part back as it was written, field for field */
	for (size_t i = 0; i < 2; i++) {
		const struct window_gpufreq *x = window_gpufreq(ws[i]);
		const struct window_gpufreq *y = window_gpufreq(i ? w2 : w1);

		ck_assert_ptr_nonnull(x);
		ck_assert_uint_eq(x->ndev, y->ndev);
		ck_assert_uint_eq(x->reads, y->reads);
		ck_assert_uint_eq(x->read_ns, y->read_ns);
		for (uint32_t k = 0; k < x->ndev; k++) {
			a = &x->dev[k];
			b = dev(y, a->name);
			ck_assert_uint_eq(a->kind, b->kind);
			ck_assert_uint_eq(a->w.have, b->w.have);
			ck_assert_uint_eq(a->w.cur_sum_hz, b->w.cur_sum_hz);
			ck_assert_uint_eq(a->w.busy_us, b->w.busy_us);
			ck_assert_uint_eq(a->w.busy_pct_sum, b->w.busy_pct_sum);
			ck_assert_uint_eq(a->w.tis_n, b->w.tis_n);
			ck_assert_mem_eq(a->w.tis_ms, b->w.tis_ms,
			    a->w.tis_n * sizeof(a->w.tis_ms[0]));
		}
	}
	ck_assert_ptr_null(window_gpufreq(ws[2]));
	for (size_t i = 0; i < n; i++)
		window_free(ws[i]);
	free(ws);

	/* --since: the range folded, as the roll-up folds */
	ck_assert_int_eq(store_gpufreq_range(s, WALL, WALL + 100 * SEC, &r), 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->windows, 2);
	a = dev(r, "kgsl-3d0");
	ck_assert_uint_eq(ms_at(&a->w, 585000000), 250);
	ck_assert_uint_eq(a->w.busy_us, 2 * 41234 + 2 * 50000);
	window_gpufreq_free(r);
	r = NULL;
	/* a range with no GPU rows: none */
	ck_assert_int_eq(store_gpufreq_range(s, WALL + 35 * SEC,
			     WALL + 100 * SEC, &r),
	    0);
	ck_assert_ptr_null(r);
	/* a damaged blob: counted, the range reads without it */
	ck_assert_int_eq(store_exec(s,
			     "UPDATE window_gpufreq SET blob = x'b70102' WHERE "
			     "window_id = (SELECT min(window_id) FROM "
			     "window_gpufreq)",
			     NULL, 0),
	    0);
	ck_assert_int_eq(store_gpufreq_range(s, WALL, WALL + 100 * SEC, &r), 0);
	ck_assert_uint_eq(r->windows, 1);
	window_gpufreq_free(r);
	r = NULL;
	store_close(s);
	tu_rmtree(dir);
	free(dir);

	/* the maintenance roll-up (level 1, one minute): one window whose
	 * part sums the Δs of its windows exactly */
	dir = tu_mkdtemp_db("gpufreq-roll", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(store_put(s, none), 0);
	/* level 0 rolls in hourly batches: an hour past its 6 h age */
	ck_assert_int_eq(store_maintain(s, WALL + 8 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, WALL - 60 * SEC, WALL + 100 * SEC, 0,
			     &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ws[0]->level, 1);
	ck_assert_ptr_nonnull(window_gpufreq(ws[0]));
	ck_assert_uint_eq(window_gpufreq(ws[0])->windows, 2);
	ck_assert_uint_eq(window_gpufreq(ws[0])->reads, 4);
	a = dev(window_gpufreq(ws[0]), "kgsl-3d0");
	ck_assert_uint_eq(ms_at(&a->w, 257000000), 1000);
	ck_assert_uint_eq(ms_at(&a->w, 585000000), 250);
	ck_assert_uint_eq(a->w.busy_us, 2 * 41234 + 2 * 50000);
	ck_assert_uint_eq(a->w.total_us, 4 * 100000);
	a = dev(window_gpufreq(ws[0]), "1c500000.mali");
	ck_assert_uint_eq(ms_sum(&a->w), 400);
	ck_assert_uint_eq(a->w.busy_pct_sum, 4 * 37);
	window_free(ws[0]);
	free(ws);
	store_close(s);
	tu_rmtree(dir);
	free(dir);
	window_free(w1);
	window_free(w2);
	window_free(none);
	gpufreq_free(g);
	tu_rmtree(root);
}
END_TEST

/* ------------------------------------------------------------- exports */

#define PB(x) Opentelemetry__Proto__Collector__Metrics__V1__##x
#define PBE(x) OPENTELEMETRY__PROTO__COLLECTOR__METRICS__V1__##x

static const PB(Metric) *
    find_metric(const PB(ScopeMetrics) * sm, const char *name)
{
	for (size_t i = 0; i < sm->n_metrics; i++)
		if (!strcmp(sm->metrics[i]->name, name))
			return sm->metrics[i];
	ck_abort_msg("no metric %s", name);
	return NULL;
}

static const char *
attr(const PB(NumberDataPoint) * p, const char *key, int64_t *iv)
{
	for (size_t i = 0; i < p->n_attributes; i++)
		if (!strcmp(p->attributes[i]->key, key)) {
			if (iv)
				*iv = p->attributes[i]->value->int_value;
			return p->attributes[i]->value->string_value;
		}
	return NULL;
}

/* the point of device dev with attribute key = sv (or = iv) */
static const PB(NumberDataPoint) *
    point_of(const PB(Metric) * m, const char *devname, const char *key,
	const char *sv, int64_t iv)
{
	size_t n = m->sum ? m->sum->n_data_points : m->gauge->n_data_points;
	PB(NumberDataPoint) **pts = m->sum ? m->sum->data_points :
					     m->gauge->data_points;

	for (size_t i = 0; i < n; i++) {
		const char *d = attr(pts[i], "device", NULL);
		int64_t v = 0;
		const char *s;

		if (d == NULL || strcmp(d, devname))
			continue;
		if (key == NULL)
			return pts[i];
		s = attr(pts[i], key, &v);
		if (sv ? (s && !strcmp(s, sv)) : v == iv)
			return pts[i];
	}
	ck_abort_msg("no point %s %s", devname, key ? key : "");
	return NULL;
}

static void
has_line(const char *page, const char *line)
{
	if (strstr(page, line) == NULL)
		fprintf(stderr, "%s", page);
	ck_assert_msg(strstr(page, line) != NULL, "page lacks '%s'", line);
}

START_TEST(exports)
{
	struct otlp_resource res = { "9.9", "host" };
	struct otlp_times t = { .boot_wall_ns = WALL,
		.boot_ns = 30 * SEC,
		.now_wall_ns = WALL + 30 * SEC };
	struct gpufreq *g = NULL;
	struct window *w1, *w2;
	struct export_state st;
	struct export_page pg = { 0 };
	struct vbuf b = { 0 };
	PB(ExportMetricsServiceRequest) * req;
	const PB(ScopeMetrics) * sm;
	const PB(Metric) * m;
	size_t points = 0;
	char path[PATH_MAX + 16];
	FILE *f;

	tree();
	ck_assert_int_eq(gpufreq_new(root, &g), 0);
	two_windows(g, &w1, &w2);
	ck_assert_int_eq(export_state_init(&st, 5, 100, 4096), 0);
	export_state_window(&st, w1);
	export_state_window(&st, w2);
	pg.st = &st;
	ck_assert_int_eq(export_render(&pg, EXPORT_OPENMETRICS, &b), 0);
	has_line(b.p, "# TYPE vitals_gpu_freq_hz gauge\n");
	has_line(b.p, "# UNIT vitals_gpu_freq_hz hz\n");
	has_line(b.p, "vitals_gpu_devices 2\n");
	has_line(b.p,
	    "vitals_gpu_freq_hz{device=\"kgsl-3d0\",stat=\"mean\"} "
	    "427000000\n");
	has_line(b.p,
	    "vitals_gpu_freq_hz{device=\"1c500000.mali\",stat=\"max\"} "
	    "471000000\n");
	has_line(b.p,
	    "vitals_gpu_freq_limit_hz{device=\"kgsl-3d0\",limit=\"min\"} "
	    "257000000\n");
	has_line(b.p, "vitals_gpu_busy_ratio{device=\"kgsl-3d0\"} 0.5\n");
	has_line(b.p, "vitals_gpu_busy_ratio{device=\"1c500000.mali\"} 0.37\n");
	/* time in state summed over both windows, in seconds */
	has_line(b.p,
	    "vitals_gpu_time_in_state_seconds_total{device=\"kgsl-3d0\","
	    "hz=\"257000000\"} 1.0\n");
	has_line(b.p,
	    "vitals_gpu_time_in_state_seconds_total{device=\"kgsl-3d0\","
	    "hz=\"585000000\"} 0.25\n");
	has_line(b.p,
	    "vitals_gpu_time_in_state_seconds_total{device=\"1c500000.mali\","
	    "hz=\"471000000\"} 0.4\n");
	has_line(b.p,
	    "vitals_gpu_time_in_state_seconds_total{device=\"1c500000.mali\","
	    "hz=\"151000000\"} 0.0\n");
	/* promtool's lint, where installed (CI installs it) */
	if (access("/usr/bin/promtool", X_OK) == 0) {
		snprintf(path, sizeof(path), "%s/page.txt", root);
		ck_assert_int_eq(export_render(&pg, EXPORT_PROMETHEUS, &b), 0);
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		fwrite(b.p, 1, b.len, f);
		fclose(f);
		{
			char cmd[PATH_MAX + 64];

			snprintf(cmd, sizeof(cmd),
			    "promtool check metrics < '%s'", path);
			ck_assert_int_eq(system(cmd), 0);
		}
	}

	/* OTLP: the same figures */
	ck_assert_int_eq(otlp_encode(&pg, &res, &t, &b, &points), 0);
	req =
	    opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(
		NULL, b.len, (const uint8_t *)b.p);
	ck_assert_ptr_nonnull(req);
	sm = req->resource_metrics[0]->scope_metrics[0];
	m = find_metric(sm, "vitals.gpu.freq");
	ck_assert_int_eq(point_of(m, "kgsl-3d0", "stat", "min", 0)->as_int,
	    427000000);
	m = find_metric(sm, "vitals.gpu.busy");
	ck_assert_double_eq_tol(
	    point_of(m, "kgsl-3d0", NULL, NULL, 0)->as_double, 0.5, 1e-12);
	ck_assert_double_eq_tol(
	    point_of(m, "1c500000.mali", NULL, NULL, 0)->as_double, 0.37,
	    1e-12);
	m = find_metric(sm, "vitals.gpu.time_in_state");
	ck_assert_int_eq(m->data_case, PBE(METRIC__DATA_SUM));
	ck_assert(m->sum->is_monotonic);
	ck_assert_double_eq_tol(
	    point_of(m, "kgsl-3d0", "hz", NULL, 585000000)->as_double, 0.25,
	    1e-12);
	ck_assert_double_eq_tol(
	    point_of(m, "1c500000.mali", "hz", NULL, 471000000)->as_double, 0.4,
	    1e-12);
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(
	    req, NULL);

	vbuf_release(&b);
	export_state_release(&st);
	window_free(w1);
	window_free(w2);
	gpufreq_free(g);
	tu_rmtree(root);
}
END_TEST

/* no GPU: the part says 0 devices, the page says so, no other series */
START_TEST(no_gpu)
{
	struct gpufreq *g = NULL;
	struct window *w = mkwin(1);
	struct export_state st;
	struct export_page pg = { 0 };
	struct vbuf b = { 0 };
	char *d = tu_mkdtemp("gpufreq-none");

	ck_assert_int_eq(gpufreq_new(d, &g), 0);
	ck_assert_uint_eq(g->ndev, 0);
	gpufreq_tick(g);
	ck_assert_int_eq(gpufreq_window(g, w), 0);
	ck_assert_ptr_nonnull(window_gpufreq(w));
	ck_assert_uint_eq(window_gpufreq(w)->ndev, 0);
	ck_assert_uint_eq(window_gpufreq(w)->errors, 0);
	ck_assert_int_eq(export_state_init(&st, 5, 100, 4096), 0);
	export_state_window(&st, w);
	pg.st = &st;
	ck_assert_int_eq(export_render(&pg, EXPORT_OPENMETRICS, &b), 0);
	has_line(b.p, "vitals_gpu_devices 0\n");
	ck_assert_ptr_null(strstr(b.p, "vitals_gpu_freq_hz"));
	vbuf_release(&b);
	export_state_release(&st);
	window_free(w);
	gpufreq_free(g);
	tu_rmtree(d);
	free(d);
}
END_TEST

/* gpufreq = on|off, on by default; anything else refused */
START_TEST(config_key)
{
	struct config c;

	config_init(&c);
	ck_assert(c.gpufreq);
	ck_assert_int_eq(config_set(&c, "gpufreq", "off"), 0);
	ck_assert(!c.gpufreq);
	ck_assert_int_eq(config_set(&c, "gpufreq", "on"), 0);
	ck_assert(c.gpufreq);
	ck_assert_int_eq(config_set(&c, "gpufreq", "yes"), -EINVAL);
	ck_assert(c.gpufreq);
	config_release(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gpufreq_wire");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, part_and_merge);
	tcase_add_test(tc, store_round_trip);
	tcase_add_test(tc, exports);
	tcase_add_test(tc, no_gpu);
	tcase_add_test(tc, config_key);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
