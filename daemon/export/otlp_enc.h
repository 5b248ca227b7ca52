/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OTLP encoder's own declarations, shared by its three files:
 * otlp_build.c (the arena; the builder of metrics, points and attributes),
 * otlp_series.c (each family's series) and otlp_encode.c (the request).
 * Not for the rest of the daemon: otlp.h is the encoder's interface.
 */
#ifndef VITALSD_EXPORT_OTLP_ENC_H
#define VITALSD_EXPORT_OTLP_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "export/otlp.h"
#include "otlp_metrics.pb-c.h"

struct export_page;
struct export_state;
struct sys_sample;

#define PB(x) Opentelemetry__Proto__Collector__Metrics__V1__##x
#define PBI(x) opentelemetry__proto__collector__metrics__v1__##x
#define PBE(x) OPENTELEMETRY__PROTO__COLLECTOR__METRICS__V1__##x

struct chunk {
	struct chunk *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct chunk *head;
};

enum kind { SUM_D, SUM_I, GAUGE_D, GAUGE_I };

#define ATTR_MAX 8

struct enc {
	struct arena ar;
	const struct otlp_times *t;
	/* the metrics, an array doubled in the arena as it fills */
	PB(Metric) * *metrics;
	size_t nmetrics, capmetrics;
	/* the metric being written and its points */
	enum kind kind;
	PB(NumberDataPoint) * *pts;
	size_t npts, cappts;
	/* the next point's attributes and start */
	PB(KeyValue) * attrs[ATTR_MAX];
	size_t nattrs;
	int64_t start_ns;
	size_t points;
	int err;
};

/* otlp_build.c */
void *otlp_ar_alloc(struct arena *a, size_t n);
void otlp_ar_release(struct arena *a);
int otlp_grow(struct enc *e, void ***arr, size_t n, size_t *cap);
void otlp_metric_end(struct enc *e);
void otlp_metric(struct enc *e, const char *name, enum kind k, const char *unit,
    const char *desc);
PB(KeyValue) * otlp_kv_new(struct enc *e, const char *key);
char *otlp_ar_utf8(struct enc *e, const char *s);
void otlp_attr_s(struct enc *e, const char *key, const char *s);
void otlp_attr_i(struct enc *e, const char *key, int64_t v);
void otlp_point_i(struct enc *e, uint64_t v);
void otlp_point_d(struct enc *e, double v);
void otlp_point_ratio(struct enc *e, uint64_t num, uint64_t den);
int64_t otlp_wall_of(const struct enc *e, int64_t boot_ns);

/* otlp_series.c */
void otlp_enc_cpu(struct enc *e, const struct sys_sample *s, unsigned hz);
void otlp_enc_psi(struct enc *e, const struct sys_sample *s);
void otlp_enc_mem(struct enc *e, const struct sys_sample *s);
void otlp_enc_vm(struct enc *e, const struct sys_sample *s);
void otlp_enc_procs(struct enc *e, const struct export_state *st);
void otlp_enc_cgroups(struct enc *e, const struct export_state *st);
void otlp_enc_bpf(struct enc *e, const struct export_state *st);
void otlp_enc_gpu(struct enc *e, const struct export_state *st);
void otlp_enc_syscalls(struct enc *e, const struct export_state *st);
void otlp_enc_health(struct enc *e, const struct export_page *pg);

#endif /* VITALSD_EXPORT_OTLP_ENC_H */
