/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenMetrics page's figures as one OTLP ExportMetricsServiceRequest
 * (proto/otlp_metrics.proto, doc/export.md "OTLP push").
 *
 * The same series as export_text.c, under their OpenTelemetry names (dots,
 * the unit in Metric.unit rather than in the name): a counter is a Sum,
 * cumulative and monotonic, whose start_time_unix_nano is where its count
 * began (boot for the kernel's system counters, the process's start for a
 * process, the first sample or window vitalsd saw for its own sums); a
 * level is a Gauge. Every point carries the sample's wall time.
 *
 * Pure: a page and the clocks in, bytes out. The protobuf-c structs live
 * in one arena freed after packing, for a request holds thousands of small
 * objects (a point and its attributes each) that all die together.
 *
 * This file is the request; the arena and the builder are otlp_build.c,
 * each family's series otlp_series.c (otlp_enc.h between them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sysnames.h"
#include "export/export.h"
#include "export/otlp.h"
#include "otlp_metrics.pb-c.h"
#include "window/window.h"
#include "otlp_enc.h"

/* ---------------------------------------------------------------- request */

static int
resource(struct enc *e, const struct otlp_resource *res,
    PB(ResourceMetrics) * rm)
{
	PB(Resource) *r = otlp_ar_alloc(&e->ar, sizeof(*r));
	PB(KeyValue) **kv = otlp_ar_alloc(&e->ar, 4 * sizeof(*kv));
	const char *const key[4] = { "service.name", "service.version",
		"host.name", "os.type" };
	const char *const val[4] = { "vitalsd",
		res && res->version ? res->version : "",
		res && res->host ? res->host : "", "linux" };
	unsigned i;

	if (r == NULL || kv == NULL)
		return -ENOMEM;
	PBI(resource__init)(r);
	for (i = 0; i < 4; i++) {
		if ((kv[i] = otlp_kv_new(e, key[i])) == NULL)
			return -ENOMEM;
		kv[i]->value->value_case = PBE(ANY_VALUE__VALUE_STRING_VALUE);
		if ((kv[i]->value->string_value = otlp_ar_utf8(e, val[i])) ==
		    NULL)
			return -ENOMEM;
	}
	r->attributes = kv;
	r->n_attributes = 4;
	rm->resource = r;
	return 0;
}

int
otlp_encode(const struct export_page *pg, const struct otlp_resource *res,
    const struct otlp_times *t, struct vbuf *out, size_t *ret_points)
{
	struct enc e = { .t = t };
	PB(ExportMetricsServiceRequest) req;
	PB(ResourceMetrics) rm, *rmp = &rm;
	PB(ScopeMetrics) sm, *smp = &sm;
	PB(InstrumentationScope) scope;
	size_t n;
	int r;

	PBI(export_metrics_service_request__init)(&req);
	PBI(resource_metrics__init)(&rm);
	PBI(scope_metrics__init)(&sm);
	PBI(instrumentation_scope__init)(&scope);
	if (pg->sys) {
		unsigned hz = pg->st ? pg->st->hz : 100;

		otlp_enc_cpu(&e, pg->sys, hz);
		otlp_enc_psi(&e, pg->sys);
		otlp_enc_mem(&e, pg->sys);
		otlp_enc_vm(&e, pg->sys);
	}
	if (pg->st) {
		otlp_enc_procs(&e, pg->st);
		otlp_enc_cgroups(&e, pg->st);
		otlp_enc_bpf(&e, pg->st);
		otlp_enc_gpu(&e, pg->st);
		otlp_enc_syscalls(&e, pg->st);
		otlp_enc_health(&e, pg);
	}
	otlp_metric_end(&e);
	if ((r = e.err) < 0 || (r = resource(&e, res, &rm)) < 0)
		goto out;
	scope.name = (char *)"vitalsd";
	scope.version = (char *)(res && res->version ? res->version : "");
	sm.scope = &scope;
	sm.metrics = e.metrics;
	sm.n_metrics = e.nmetrics;
	rm.scope_metrics = &smp;
	rm.n_scope_metrics = 1;
	req.resource_metrics = &rmp;
	req.n_resource_metrics = 1;
	n = PBI(export_metrics_service_request__get_packed_size)(&req);
	vbuf_reset(out);
	if ((r = vbuf_reserve(out, n)) < 0)
		goto out;
	out->len = PBI(
	    export_metrics_service_request__pack)(&req, (uint8_t *)out->p);
	*ret_points = e.points;
out:
	otlp_ar_release(&e.ar);
	return r;
}
