/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the exporter's pure parts (export_state.c, export_text.c,
 * config_export.c): the page for a fixture state, byte for byte, in both
 * formats; label escaping; the "other" remainder, whose increments with
 * the process series' add up to the total's at every sample however
 * processes enter and leave the top N; a process's identity (pid and
 * start) across a pid reuse; the metrics_* keys and addresses. OTLP
 * (otlp_encode.c): the fixture's request unpacked again, its Sums, starts
 * and attributes; the otlp_* keys and URLs.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/otlp.h"
#include "otlp_metrics.pb-c.h"
#include "testutil.h"
#include "vitalsd.h"

#define HZ 100
#define TICK_NS (NSEC_PER_SEC / HZ)

/* ------------------------------------------------------------- escaping */

START_TEST(label_escape)
{
	struct vbuf b = { 0 };

	ck_assert_int_eq(export_label_escape(&b, "a\\b\"c\nd"), 0);
	ck_assert_str_eq(b.p, "a\\\\b\\\"c\\nd");
	vbuf_reset(&b);
	ck_assert_int_eq(export_label_escape(&b, "plain (x) {y}=z,"), 0);
	ck_assert_str_eq(b.p, "plain (x) {y}=z,");
	vbuf_reset(&b);
	/* UTF-8 kept; what is not UTF-8 (a stray byte, a character cut in
	 * two, an overlong form, a surrogate) becomes U+FFFD */
	ck_assert_int_eq(
	    export_label_escape(&b,
		"caf\xc3\xa9 \xff|\xe2\x82|\xc0\xaf|\xed\xa0\x80|\xf0\x9f\x98\x80"),
	    0);
	ck_assert_str_eq(b.p,
	    "caf\xc3\xa9 \xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|"
	    "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
	    "\xf0\x9f\x98\x80");
	vbuf_release(&b);
}
END_TEST

START_TEST(accept_header)
{
	ck_assert_int_eq(export_accept(NULL), EXPORT_PROMETHEUS);
	ck_assert_int_eq(export_accept("text/plain;version=0.0.4"),
	    EXPORT_PROMETHEUS);
	/* what Prometheus 2.x sends */
	ck_assert_int_eq(export_accept("application/openmetrics-text;"
				       "version=1.0.0,application/"
				       "openmetrics-text;version=0.0.1;q=0.75,"
				       "text/plain;version=0.0.4;q=0.5,*/"
				       "*;q=0.1"),
	    EXPORT_OPENMETRICS);
	ck_assert_str_eq(export_content_type(EXPORT_OPENMETRICS),
	    "application/openmetrics-text; version=1.0.0; charset=utf-8");
	ck_assert_str_eq(export_content_type(EXPORT_PROMETHEUS),
	    "text/plain; version=0.0.4; charset=utf-8");
}
END_TEST

/* ---------------------------------------------------------------- fixture */

static struct procscan_proc
proc(int32_t pid, uint64_t start, const char *comm, uint64_t ut, uint64_t st,
    uint64_t minf, uint64_t majf, uint64_t rss)
{
	struct procscan_proc p = { pid, start, comm, ut, st, minf, majf, rss };

	return p;
}

/* One CPU, CPU pressure without a full line, memory, faults. */
static void
fixture_sys(struct sys_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->stat.cpu_span = 1;
	s->stat.ncpu_online = 1;
	s->stat.online[0] = 1;
	s->stat.cpu[0] = (struct cpu_times){ .user = 12345,
		.nice = 6,
		.system = 789,
		.idle = 100000,
		.iowait = 12,
		.irq = 3,
		.softirq = 45,
		.steal = 0 };
	s->stat.all = s->stat.cpu[0];
	s->psi_err[PSI_CPU] = 0;
	s->psi[PSI_CPU].some = (struct psi_line){ .avg10 = 1.5,
		.avg60 = 0.25,
		.total_us = 1234567 };
	s->psi_err[PSI_MEMORY] = -ENOENT;
	s->psi_err[PSI_IO] = -ENOENT;
	s->mem.kb[MI_MEMTOTAL] = 1000;
	s->mem.kb[MI_MEMFREE] = 400;
	s->mem.kb[MI_BUFFERS] = 50;
	s->mem.kb[MI_CACHED] = 150;
	s->mem.kb[MI_MEMAVAILABLE] = 550;
	s->mem.have = 1u << MI_MEMTOTAL | 1u << MI_MEMFREE | 1u << MI_BUFFERS |
	    1u << MI_CACHED | 1u << MI_MEMAVAILABLE;
	s->vm.v[VM_PGFAULT] = 1000;
	s->vm.v[VM_PGMAJFAULT] = 7;
	s->vm.v[VM_OOM_KILL] = 1;
	s->vm.have = 1u << VM_PGFAULT | 1u << VM_PGMAJFAULT | 1u << VM_OOM_KILL;
}

/* Two samples of three processes, top 1: "b\"z" burns, the others
 * idle; "late" is born between the samples. */
static void
fixture_state(struct export_state *st)
{
	struct procscan_proc p;

	ck_assert_int_eq(export_state_init(st, 1, HZ, 4096), 0);
	export_state_begin(st, 1000 * TICK_NS);
	p = proc(10, 5, "init", 100, 50, 1000, 10, 100);
	ck_assert_int_eq(export_state_add(st, &p), 0);
	p = proc(20, 900, "b\"z", 200, 0, 10, 0, 50);
	ck_assert_int_eq(export_state_add(st, &p), 0);
	ck_assert_int_eq(export_state_end(st), 0);

	export_state_begin(st, 1100 * TICK_NS);
	p = proc(10, 5, "init", 101, 50, 1003, 10, 100);
	ck_assert_int_eq(export_state_add(st, &p), 0);
	p = proc(20, 900, "b\"z", 290, 5, 12, 1, 60);
	ck_assert_int_eq(export_state_add(st, &p), 0);
	p = proc(30, 1050, "late", 4, 2, 30, 0, 10);
	ck_assert_int_eq(export_state_add(st, &p), 0);
	ck_assert_int_eq(export_state_end(st), 0);
}

/* Two closed windows of three groups, top 1: "a/b" (depth 2) is busy;
 * "a" (depth 1) holds it; "c" (depth 1) idles and is gone from the
 * second walk. */
static void
fixture_cgroups(struct export_state *st)
{
	static const struct {
		uint64_t id;
		const char *path;
		uint32_t depth;
		uint64_t du[2], ds[2], fault[2], maj[2], mem;
	} g[] = {
		{ 7, "a", 1, { 0, 3000 }, { 0, 1000 }, { 0, 9 }, { 0, 1 },
		    800 },
		{ 8, "a/b", 2, { 0, 2500 }, { 0, 500 }, { 0, 5 }, { 0, 0 },
		    500 },
		{ 9, "c", 1, { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, 100 },
	};
	unsigned k, i;

	for (k = 0; k < 2; k++) {
		struct window *w = window_new(10 + k, 1);
		struct window_cgroup *cg = window_cgroup_new();

		ck_assert_ptr_nonnull(w);
		ck_assert_ptr_nonnull(cg);
		cg->state = CG_STATE_OK;
		for (i = 0; i < 3; i++) {
			struct window_cgroup_grp *x;

			if (k == 1 && g[i].id == 9)
				continue;
			ck_assert_ptr_nonnull(x = window_cgroup_add(cg));
			x->id = g[i].id;
			snprintf(x->path, sizeof(x->path), "%s", g[i].path);
			x->depth = g[i].depth;
			x->d_user_us = g[i].du[k];
			x->d_system_us = g[i].ds[k];
			x->d_usage_us = g[i].du[k] + g[i].ds[k];
			x->d_pgfault = g[i].fault[k];
			x->d_pgmajfault = g[i].maj[k];
			gauge_add(&x->mem_current, (double)g[i].mem);
		}
		window_part_set(w, WPART_CGROUP, cg);
		export_state_window(st, w);
		window_free(w);
	}
}

static const char expect_om[] =
#include "export_fixture_om.inc"
    ;

static const char expect_prom[] =
#include "export_fixture_prom.inc"
    ;

static void
render_fixture(enum export_format fmt, struct vbuf *out)
{
	struct export_stats stats = { .on = true,
		.scrapes = 3,
		.cap_refused = 1,
		.timed_out = 2,
		.bad_requests = 4,
		.not_found = 5 };
	struct export_state st;
	struct sys_sample sys;
	struct window *w = window_new(1, 1);
	struct export_page pg = { 0 };

	ck_assert_ptr_nonnull(w);
	w->samples = 2;
	w->samples_valid = 1;
	w->inv_deltas[INV_VANISHED] = 1;
	fixture_sys(&sys);
	fixture_state(&st);
	fixture_cgroups(&st);
	pg.st = &st;
	pg.sys = &sys;
	pg.open = w;
	pg.stats = &stats;
	ck_assert_int_eq(export_render(&pg, fmt, out), 0);
	/* the expected pages were written this way once and read line by
	 * line against the fixture before they were committed */
	if (getenv("EXPORT_FIXTURE_DIR")) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.txt",
		    getenv("EXPORT_FIXTURE_DIR"),
		    fmt == EXPORT_OPENMETRICS ? "om" : "prom");
		if ((f = fopen(path, "w")) != NULL) {
			fputs(out->p, f);
			fclose(f);
		}
	}
	export_state_release(&st);
	window_free(w);
}

START_TEST(page_openmetrics)
{
	struct vbuf b = { 0 };

	render_fixture(EXPORT_OPENMETRICS, &b);
	ck_assert_str_eq(b.p, expect_om);
	vbuf_release(&b);
}
END_TEST

START_TEST(page_prometheus)
{
	struct vbuf b = { 0 };

	render_fixture(EXPORT_PROMETHEUS, &b);
	ck_assert_str_eq(b.p, expect_prom);
	vbuf_release(&b);
}
END_TEST

/* ------------------------------------------------------------------ OTLP */

#define PB(x) Opentelemetry__Proto__Collector__Metrics__V1__##x
#define PBE(x) OPENTELEMETRY__PROTO__COLLECTOR__METRICS__V1__##x
#define BOOT_WALL 1700000000000000000LL

static const PB(Metric) *
    find_metric(const PB(ScopeMetrics) * sm, const char *name)
{
	size_t i;

	for (i = 0; i < sm->n_metrics; i++)
		if (!strcmp(sm->metrics[i]->name, name))
			return sm->metrics[i];
	ck_abort_msg("no metric %s", name);
	return NULL;
}

static const PB(AnyValue) *
    find_attr(const PB(NumberDataPoint) * p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n_attributes; i++)
		if (!strcmp(p->attributes[i]->key, key))
			return p->attributes[i]->value;
	return NULL;
}

/* The point whose attribute key is the string v (or int iv when v is
 * NULL) and whose cpu.mode is mode (NULL: any). */
static const PB(NumberDataPoint) *
    find_point(const PB(Metric) * m, const char *key, const char *v, int64_t iv,
	const char *mode)
{
	size_t n = m->sum ? m->sum->n_data_points : m->gauge->n_data_points, i;
	PB(NumberDataPoint) **pts = m->sum ? m->sum->data_points :
					     m->gauge->data_points;

	for (i = 0; i < n; i++) {
		const PB(AnyValue) *a = find_attr(pts[i], key);
		const PB(AnyValue) *md = find_attr(pts[i], "cpu.mode");

		if (a == NULL ||
		    (v ? a->value_case != PBE(ANY_VALUE__VALUE_STRING_VALUE) ||
				strcmp(a->string_value, v) :
			 a->value_case != PBE(ANY_VALUE__VALUE_INT_VALUE) ||
				a->int_value != iv))
			continue;
		if (mode && (md == NULL || strcmp(md->string_value, mode)))
			continue;
		return pts[i];
	}
	ck_abort_msg("no point %s", key);
	return NULL;
}

START_TEST(otlp_fixture)
{
	struct otlp_resource res = { "9.9", "host\xff" };
	struct otlp_times t = { .boot_wall_ns = BOOT_WALL,
		.boot_ns = 1100 * TICK_NS,
		.now_wall_ns = BOOT_WALL + 1100 * TICK_NS };
	struct export_state st;
	struct sys_sample sys;
	struct window *w = window_new(1, 1);
	struct export_page pg = { 0 };
	struct vbuf b = { 0 };
	PB(ExportMetricsServiceRequest) * req;
	const PB(ScopeMetrics) * sm;
	const PB(Resource) * r;
	const PB(Metric) * m;
	const PB(NumberDataPoint) * p;
	size_t points = 0, n = 0, i, j;

	ck_assert_ptr_nonnull(w);
	w->samples = 2;
	fixture_sys(&sys);
	fixture_state(&st);
	fixture_cgroups(&st);
	pg.st = &st;
	pg.sys = &sys;
	pg.open = w;
	ck_assert_int_eq(otlp_encode(&pg, &res, &t, &b, &points), 0);
	req =
	    opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(
		NULL, b.len, (const uint8_t *)b.p);
	ck_assert_ptr_nonnull(req);
	ck_assert_uint_eq(req->n_resource_metrics, 1);
	r = req->resource_metrics[0]->resource;
	ck_assert_uint_eq(r->n_attributes, 4);
	ck_assert_str_eq(r->attributes[0]->key, "service.name");
	ck_assert_str_eq(r->attributes[0]->value->string_value, "vitalsd");
	ck_assert_str_eq(r->attributes[1]->value->string_value, "9.9");
	/* a host name that is not UTF-8 travels with U+FFFD */
	ck_assert_str_eq(r->attributes[2]->value->string_value,
	    "host\xef\xbf\xbd");
	ck_assert_str_eq(r->attributes[3]->key, "os.type");
	ck_assert_str_eq(r->attributes[3]->value->string_value, "linux");
	ck_assert_uint_eq(req->resource_metrics[0]->n_scope_metrics, 1);
	sm = req->resource_metrics[0]->scope_metrics[0];
	ck_assert_str_eq(sm->scope->name, "vitalsd");

	/* every Sum cumulative and monotonic, with a start; no Gauge has
	 * one; every point at the sample's time; the count returned */
	for (i = 0; i < sm->n_metrics; i++) {
		m = sm->metrics[i];
		if (m->data_case == PBE(METRIC__DATA_SUM)) {
			ck_assert_int_eq(m->sum->aggregation_temporality,
			    PBE(AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE));
			ck_assert(m->sum->is_monotonic);
			for (j = 0; j < m->sum->n_data_points; j++) {
				p = m->sum->data_points[j];
				ck_assert_uint_ge(p->start_time_unix_nano,
				    BOOT_WALL);
				ck_assert_uint_le(p->start_time_unix_nano,
				    p->time_unix_nano);
				ck_assert_uint_eq(p->time_unix_nano,
				    t.now_wall_ns);
			}
			n += m->sum->n_data_points;
		} else {
			ck_assert_int_eq(m->data_case, PBE(METRIC__DATA_GAUGE));
			for (j = 0; j < m->gauge->n_data_points; j++)
				ck_assert_uint_eq(m->gauge->data_points[j]
						      ->start_time_unix_nano,
				    0);
			n += m->gauge->n_data_points;
		}
	}
	ck_assert_uint_eq(n, points);

	/* the system's counters start at boot */
	m = find_metric(sm, "system.cpu.time");
	ck_assert_str_eq(m->unit, "s");
	p = find_point(m, "cpu.mode", "user", 0, NULL);
	ck_assert_uint_eq(p->start_time_unix_nano, BOOT_WALL);
	ck_assert_double_eq_tol(p->as_double, 123.45, 1e-9);
	/* a process's at its start; pid, creation time, exact ticks; comm
	 * unescaped */
	m = find_metric(sm, "process.cpu.time");
	p = find_point(m, "process.pid", NULL, 20, "user");
	ck_assert_uint_eq(p->start_time_unix_nano, BOOT_WALL + 900 * TICK_NS);
	ck_assert_double_eq_tol(p->as_double, 2.9, 1e-9);
	ck_assert_int_eq(find_attr(p, "vitals.process.start_ticks")->int_value,
	    900);
	ck_assert_str_eq(find_attr(p, "process.creation.time")->string_value,
	    "2023-11-14T22:13:29.000000000Z");
	ck_assert_str_eq(find_attr(p, "process.executable.name")->string_value,
	    "b\"z");
	/* other: since the first sample */
	p = find_point(m, "process.executable.name", "other", 0, "user");
	ck_assert_uint_eq(p->start_time_unix_nano, BOOT_WALL + 1000 * TICK_NS);
	ck_assert_ptr_null(find_attr(p, "process.pid"));
	/* a fault count is an integer */
	m = find_metric(sm, "system.paging.faults");
	p = find_point(m, "system.paging.fault.type", "major", 0, NULL);
	ck_assert_int_eq(p->value_case, PBE(NUMBER_DATA_POINT__VALUE_AS_INT));
	ck_assert_int_eq(p->as_int, 7);
	m = find_metric(sm, "system.memory.usage");
	ck_assert_int_eq(m->data_case, PBE(METRIC__DATA_GAUGE));
	ck_assert_str_eq(m->unit, "By");
	p = find_point(m, "system.memory.state", "used", 0, NULL);
	ck_assert_int_eq(p->as_int, (1000 - 400 - 50 - 150) * 1024);
	/* a cgroup's since the window it was first seen in */
	m = find_metric(sm, "vitals.cgroup.cpu.time");
	p = find_point(m, "cgroup.path", "a", 0, "user");
	ck_assert_double_eq_tol(p->as_double, 0.003, 1e-12);
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(
	    req, NULL);
	vbuf_release(&b);
	export_state_release(&st);
	window_free(w);
}
END_TEST

START_TEST(otlp_keys)
{
	struct config cfg;
	char host[64], path[64];
	uint16_t port;

	config_init(&cfg);
	ck_assert_ptr_null(cfg.otlp_endpoint);
	ck_assert_uint_eq(cfg.otlp_interval_s, 10);
	ck_assert_uint_eq(cfg.otlp_queue_max, 60);
	ck_assert_uint_eq(cfg.otlp_timeout_ms, 10000);
	ck_assert_int_eq(config_set(&cfg, "otlp_endpoint",
			     "http://collector.example:4318"),
	    0);
	ck_assert_str_eq(cfg.otlp_endpoint, "http://collector.example:4318");
	ck_assert_int_eq(config_set(&cfg, "otlp_endpoint", "off"), 0);
	ck_assert_ptr_null(cfg.otlp_endpoint);
	ck_assert_int_lt(config_set(&cfg, "otlp_endpoint", "https://c:4318"),
	    0);
	ck_assert_int_lt(config_set(&cfg, "otlp_endpoint", "http://:4318"), 0);
	ck_assert_int_lt(config_set(&cfg, "otlp_endpoint", "http://c:0"), 0);
	ck_assert_int_lt(config_set(&cfg, "otlp_endpoint", "http://c:65536"),
	    0);
	ck_assert_int_lt(config_set(&cfg, "otlp_endpoint", "http://u@c/"), 0);
	ck_assert_int_lt(config_set(&cfg, "otlp_endpoint", "http://c/?q"), 0);
	ck_assert_int_eq(config_set(&cfg, "otlp_interval_s", "1"), 0);
	ck_assert_int_lt(config_set(&cfg, "otlp_interval_s", "0"), 0);
	ck_assert_int_eq(config_set(&cfg, "otlp_queue_max", "1"), 0);
	ck_assert_int_lt(config_set(&cfg, "otlp_queue_max", "0"), 0);
	ck_assert_int_eq(config_set(&cfg, "otlp_timeout_ms", "100"), 0);
	ck_assert_int_lt(config_set(&cfg, "otlp_timeout_ms", "99"), 0);
	ck_assert_int_eq(config_set(&cfg, "otlp_nonesuch", "1"), -ENOENT);
	config_release(&cfg);

	ck_assert_int_eq(config_parse_url("http://127.0.0.1", host,
			     sizeof(host), &port, path, sizeof(path)),
	    0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_uint_eq(port, 4318);
	ck_assert_str_eq(path, "");
	ck_assert_int_eq(config_parse_url("http://[::1]:9/otlp/", host,
			     sizeof(host), &port, path, sizeof(path)),
	    0);
	ck_assert_str_eq(host, "::1");
	ck_assert_uint_eq(port, 9);
	ck_assert_str_eq(path, "/otlp");
	ck_assert_int_lt(config_parse_url("http://[::1]x/", host, sizeof(host),
			     &port, path, sizeof(path)),
	    0);
}
END_TEST

/* No sample yet: an OpenMetrics page is "# EOF" alone, a valid page. */
START_TEST(page_empty)
{
	struct export_page pg = { 0 };
	struct vbuf b = { 0 };

	ck_assert_int_eq(export_render(&pg, EXPORT_OPENMETRICS, &b), 0);
	ck_assert_str_eq(b.p, "# EOF\n");
	ck_assert_int_eq(export_render(&pg, EXPORT_PROMETHEUS, &b), 0);
	ck_assert_uint_eq(b.len, 0);
	vbuf_release(&b);
}
END_TEST

/* ------------------------------------------------------- other and total */

#define NP 12

struct model {
	uint64_t ut[NP], st[NP], minf[NP], majf[NP];
	uint64_t start[NP];
	bool alive[NP];
};

/* What the page says about the process series: per (pid, start) its
 * utime, for the members; the sums. */
struct seen {
	bool has[NP];
	uint64_t ut[NP], st[NP], minf[NP];
	uint64_t o_ut, o_st, o_minf, t_ut, t_st, t_minf;
};

static void
observe(const struct export_state *st, struct seen *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < st->ntop; i++) {
		const struct export_proc *p = &st->procs[st->top[i]];
		unsigned k = (unsigned)p->pid - 1;

		ck_assert_uint_lt(k, NP);
		s->has[k] = true;
		s->ut[k] = p->utime;
		s->st[k] = p->stime;
		s->minf[k] = p->minflt;
	}
	s->o_ut = st->sum.o_utime;
	s->o_st = st->sum.o_stime;
	s->o_minf = st->sum.o_minflt;
	s->t_ut = st->sum.utime;
	s->t_st = st->sum.stime;
	s->t_minf = st->sum.minflt;
}

/*
 * Processes burn in turns, are born and exit, so the top 3 changes at
 * most samples. At every sample, what a scraper sees increase (each
 * series present at both samples, and other) equals what the total
 * increased by; other and total never go back.
 */
START_TEST(other_adds_up)
{
	struct export_state st;
	struct model m = { 0 };
	struct seen a, b;
	unsigned seed = 12345, t, i;
	int64_t boot = 100 * NSEC_PER_SEC;

	ck_assert_int_eq(export_state_init(&st, 3, HZ, 4096), 0);
	for (i = 0; i < NP; i++) {
		m.alive[i] = i < 8;
		m.start[i] = 10 + i;
	}
	memset(&a, 0, sizeof(a));
	for (t = 0; t < 400; i++, t++) {
		uint64_t seen_ut = 0, seen_st = 0, seen_minf = 0;

		boot += 250 * NSEC_PER_MSEC;
		for (i = 0; i < NP; i++) {
			seed = seed * 1103515245u + 12345u;
			if (!m.alive[i]) {
				/* born again later under the same pid */
				if ((seed >> 16) % 40 == 0) {
					m.alive[i] = true;
					m.start[i] = (uint64_t)(boot / TICK_NS);
					m.ut[i] = (seed >> 8) % 5;
					m.st[i] = 0;
					m.minf[i] = 3;
				}
				continue;
			}
			if ((seed >> 16) % 60 == 0) {
				m.alive[i] = false; /* exits */
				continue;
			}
			/* a burner of the moment: i == (t / 25) % NP */
			if (i == (t / 25) % NP)
				m.ut[i] += 20 + (seed >> 20) % 5;
			else
				m.ut[i] += (seed >> 12) % 2;
			m.st[i] += (seed >> 14) % 2;
			m.minf[i] += (seed >> 18) % 3;
		}
		export_state_begin(&st, boot);
		for (i = 0; i < NP; i++) {
			struct procscan_proc p;

			if (!m.alive[i])
				continue;
			p = proc((int32_t)i + 1, m.start[i], "p", m.ut[i],
			    m.st[i], m.minf[i], 0, 1);
			ck_assert_int_eq(export_state_add(&st, &p), 0);
		}
		ck_assert_int_eq(export_state_end(&st), 0);
		observe(&st, &b);
		ck_assert_uint_le(st.ntop, 3);
		/* a series present at both samples moved by its own delta;
		 * the start time is part of the identity (a pid born again
		 * is a new series, not a reset) */
		for (i = 0; i < NP; i++) {
			if (!(a.has[i] && b.has[i]))
				continue;
			ck_assert_uint_ge(b.ut[i], a.ut[i]);
			seen_ut += b.ut[i] - a.ut[i];
			seen_st += b.st[i] - a.st[i];
			seen_minf += b.minf[i] - a.minf[i];
		}
		ck_assert_uint_ge(b.o_ut, a.o_ut);
		ck_assert_uint_ge(b.t_ut, a.t_ut);
		ck_assert_uint_eq(seen_ut + (b.o_ut - a.o_ut), b.t_ut - a.t_ut);
		ck_assert_uint_eq(seen_st + (b.o_st - a.o_st), b.t_st - a.t_st);
		ck_assert_uint_eq(seen_minf + (b.o_minf - a.o_minf),
		    b.t_minf - a.t_minf);
		a = b;
	}
	/* the burners took turns at the top */
	ck_assert_uint_gt(st.sum.utime, st.sum.o_utime);
	ck_assert_uint_gt(st.sum.o_utime, 0);
	export_state_release(&st);
}
END_TEST

/* A pid used again by a later process: two instances, two identities;
 * the new one's counters are its own from its start, not a delta on the
 * old one's. */
START_TEST(pid_reuse_two_instances)
{
	struct export_state st;
	struct procscan_proc p;

	ck_assert_int_eq(export_state_init(&st, 5, HZ, 4096), 0);
	export_state_begin(&st, 1000 * TICK_NS);
	p = proc(42, 500, "old", 300, 0, 0, 0, 1);
	ck_assert_int_eq(export_state_add(&st, &p), 0);
	ck_assert_int_eq(export_state_end(&st), 0);
	ck_assert_uint_eq(st.sum.utime, 0); /* a baseline */

	export_state_begin(&st, 1100 * TICK_NS);
	p = proc(42, 1050, "new", 7, 0, 0, 0, 1);
	ck_assert_int_eq(export_state_add(&st, &p), 0);
	ck_assert_int_eq(export_state_end(&st), 0);
	ck_assert_uint_eq(st.ntop, 1);
	ck_assert_uint_eq(st.procs[st.top[0]].starttime, 1050);
	ck_assert_uint_eq(st.procs[st.top[0]].utime, 7);
	/* born since the last sample: all of it is new, and went to other
	 * (no series carried it before) */
	ck_assert_uint_eq(st.sum.utime, 7);
	ck_assert_uint_eq(st.sum.o_utime, 7);
	export_state_release(&st);
}
END_TEST

/* ----------------------------------------------------------------- config */

START_TEST(config_keys)
{
	struct sockaddr_storage ss;
	struct config cfg;
	socklen_t sl;

	config_init(&cfg);
	ck_assert_ptr_null(cfg.metrics_listen);
	ck_assert_uint_eq(cfg.metrics_top_n, 50);
	ck_assert_int_eq(config_set(&cfg, "metrics_listen", "127.0.0.1:9437"),
	    0);
	ck_assert_str_eq(cfg.metrics_listen, "127.0.0.1:9437");
	ck_assert_int_eq(config_set(&cfg, "metrics_listen", "[::1]:9437"), 0);
	ck_assert_int_eq(config_set(&cfg, "metrics_listen", "unix:/run/m.s"),
	    0);
	ck_assert_int_eq(config_set(&cfg, "metrics_listen", "off"), 0);
	ck_assert_ptr_null(cfg.metrics_listen);
	ck_assert_int_lt(config_set(&cfg, "metrics_listen", "localhost:9437"),
	    0);
	ck_assert_int_lt(config_set(&cfg, "metrics_listen", "1.2.3.4:0"), 0);
	ck_assert_int_lt(config_set(&cfg, "metrics_listen", "1.2.3.4:65536"),
	    0);
	ck_assert_int_lt(config_set(&cfg, "metrics_listen", "::1:9437"), 0);
	ck_assert_int_lt(config_set(&cfg, "metrics_listen", "[::1]9437"), 0);
	ck_assert_int_lt(config_set(&cfg, "metrics_listen", "unix:"), 0);
	ck_assert_int_eq(config_set(&cfg, "metrics_top_n", "0"), 0);
	ck_assert_int_lt(config_set(&cfg, "metrics_top_n", "1001"), 0);
	ck_assert_int_eq(config_set(&cfg, "metrics_max_connections", "4"), 0);
	ck_assert_uint_eq(cfg.metrics_max_conns, 4);
	ck_assert_int_lt(config_set(&cfg, "metrics_max_connections", "0"), 0);
	ck_assert_int_eq(config_set(&cfg, "metrics_timeout_ms", "1000"), 0);
	ck_assert_int_lt(config_set(&cfg, "metrics_timeout_ms", "10"), 0);
	ck_assert_int_eq(config_set(&cfg, "metrics_max_request", "1024"), 0);
	ck_assert_int_lt(config_set(&cfg, "metrics_max_request", "10"), 0);
	config_release(&cfg);

	ck_assert_int_eq(config_parse_listen("[::1]:80", &ss, &sl), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_int_eq(config_parse_listen("10.0.0.1:80", &ss, &sl), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("export");
	TCase *tc;

	tc = tcase_create("text");
	tcase_add_test(tc, label_escape);
	tcase_add_test(tc, accept_header);
	tcase_add_test(tc, page_openmetrics);
	tcase_add_test(tc, page_prometheus);
	tcase_add_test(tc, page_empty);
	suite_add_tcase(s, tc);

	tc = tcase_create("state");
	tcase_add_test(tc, other_adds_up);
	tcase_add_test(tc, pid_reuse_two_instances);
	suite_add_tcase(s, tc);

	tc = tcase_create("otlp");
	tcase_add_test(tc, otlp_fixture);
	suite_add_tcase(s, tc);

	tc = tcase_create("config");
	tcase_add_test(tc, config_keys);
	tcase_add_test(tc, otlp_keys);
	suite_add_tcase(s, tc);

	return tu_run(s);
}
