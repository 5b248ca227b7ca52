/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OTLP request's building blocks: an arena that all its protobuf-c
 * structs live in and die with, and the builder that appends a metric,
 * its points and their attributes (otlp_series.c writes the series with
 * it, otlp_encode.c the request). Pure.
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

/* ------------------------------------------------------------------ arena */

void *
otlp_ar_alloc(struct arena *a, size_t n)
{
	struct chunk *c = a->head;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		if ((c = malloc(sizeof(*c) + cap)) == NULL)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

void
otlp_ar_release(struct arena *a)
{
	struct chunk *c, *n;

	for (c = a->head; c; c = n) {
		n = c->next;
		free(c);
	}
	a->head = NULL;
}

/* ---------------------------------------------------------------- builder */

/* Doubles an array of pointers in the arena (the old one is left). */
int
otlp_grow(struct enc *e, void ***arr, size_t n, size_t *cap)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void **p;

	if (n < *cap)
		return 0;
	if ((p = otlp_ar_alloc(&e->ar, ncap * sizeof(*p))) == NULL)
		return -ENOMEM;
	if (n)
		memcpy(p, *arr, n * sizeof(*p));
	*arr = p;
	*cap = ncap;
	return 0;
}

static char *
ar_strdup(struct enc *e, const char *s)
{
	size_t n = strlen(s);
	char *p = otlp_ar_alloc(&e->ar, n + 1);

	if (p)
		memcpy(p, s, n + 1);
	return p;
}

/* The points of the metric being written go into it. */
void
otlp_metric_end(struct enc *e)
{
	PB(Metric) * m;

	if (e->nmetrics == 0)
		return;
	m = e->metrics[e->nmetrics - 1];
	if (m->data_case == PBE(METRIC__DATA_HISTOGRAM))
		return; /* its points were set whole (enc_sc_hist) */
	if (m->data_case == PBE(METRIC__DATA_SUM)) {
		m->sum->n_data_points = e->npts;
		m->sum->data_points = e->pts;
	} else {
		m->gauge->n_data_points = e->npts;
		m->gauge->data_points = e->pts;
	}
	e->pts = NULL;
	e->npts = e->cappts = 0;
}

/* A metric; its points follow. name, unit and desc are static. */
void
otlp_metric(struct enc *e, const char *name, enum kind k, const char *unit,
    const char *desc)
{
	PB(Metric) * m;

	if (e->err)
		return;
	otlp_metric_end(e);
	if (otlp_grow(e, (void ***)&e->metrics, e->nmetrics, &e->capmetrics) <
		0 ||
	    (m = otlp_ar_alloc(&e->ar, sizeof(*m))) == NULL) {
		e->err = -ENOMEM;
		return;
	}
	PBI(metric__init)(m);
	m->name = (char *)name;
	m->unit = (char *)unit;
	m->description = (char *)desc;
	if (k == SUM_D || k == SUM_I) {
		PB(Sum) *s = otlp_ar_alloc(&e->ar, sizeof(*s));

		if (s == NULL) {
			e->err = -ENOMEM;
			return;
		}
		PBI(sum__init)(s);
		s->aggregation_temporality = PBE(
		    AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE);
		s->is_monotonic = true;
		m->data_case = PBE(METRIC__DATA_SUM);
		m->sum = s;
	} else {
		PB(Gauge) *g = otlp_ar_alloc(&e->ar, sizeof(*g));

		if (g == NULL) {
			e->err = -ENOMEM;
			return;
		}
		PBI(gauge__init)(g);
		m->data_case = PBE(METRIC__DATA_GAUGE);
		m->gauge = g;
	}
	e->metrics[e->nmetrics++] = m;
	e->kind = k;
	e->nattrs = 0;
}

PB(KeyValue) * otlp_kv_new(struct enc *e, const char *key)
{
	PB(KeyValue) *kv = otlp_ar_alloc(&e->ar, sizeof(*kv));
	PB(AnyValue) *v = otlp_ar_alloc(&e->ar, sizeof(*v));

	if (kv == NULL || v == NULL) {
		e->err = -ENOMEM;
		return NULL;
	}
	PBI(key_value__init)(kv);
	PBI(any_value__init)(v);
	kv->key = (char *)key;
	kv->value = v;
	return kv;
}

static PB(KeyValue) * next_attr(struct enc *e, const char *key)
{
	PB(KeyValue) * kv;

	if (e->err)
		return NULL;
	if (e->nattrs == ATTR_MAX) {
		e->err = -E2BIG;
		return NULL;
	}
	if ((kv = otlp_kv_new(e, key)) == NULL)
		return NULL;
	e->attrs[e->nattrs++] = kv;
	return kv;
}

/* s as valid UTF-8 in the arena (a comm, a cgroup's or a host's name is
 * any bytes; proto3 strings must be UTF-8). */
char *
otlp_ar_utf8(struct enc *e, const char *s)
{
	struct vbuf b = { 0 };
	char *p;

	if (export_utf8(&b, s) < 0) {
		e->err = -ENOMEM;
		return NULL;
	}
	if ((p = ar_strdup(e, b.p ? b.p : "")) == NULL)
		e->err = -ENOMEM;
	vbuf_release(&b);
	return p;
}

void
otlp_attr_s(struct enc *e, const char *key, const char *s)
{
	PB(KeyValue) *kv = next_attr(e, key);

	if (kv == NULL)
		return;
	kv->value->value_case = PBE(ANY_VALUE__VALUE_STRING_VALUE);
	kv->value->string_value = otlp_ar_utf8(e, s);
}

void
otlp_attr_i(struct enc *e, const char *key, int64_t v)
{
	PB(KeyValue) *kv = next_attr(e, key);

	if (kv == NULL)
		return;
	kv->value->value_case = PBE(ANY_VALUE__VALUE_INT_VALUE);
	kv->value->int_value = v;
}

static PB(NumberDataPoint) * point(struct enc *e)
{
	PB(NumberDataPoint) * p;
	PB(KeyValue) **kv = NULL;

	if (e->err)
		return NULL;
	if (otlp_grow(e, (void ***)&e->pts, e->npts, &e->cappts) < 0 ||
	    (p = otlp_ar_alloc(&e->ar, sizeof(*p))) == NULL ||
	    (e->nattrs &&
		(kv = otlp_ar_alloc(&e->ar, e->nattrs * sizeof(*kv))) ==
		    NULL)) {
		e->err = -ENOMEM;
		return NULL;
	}
	PBI(number_data_point__init)(p);
	if (e->nattrs)
		memcpy(kv, e->attrs, e->nattrs * sizeof(*kv));
	p->attributes = kv;
	p->n_attributes = e->nattrs;
	p->time_unix_nano = (uint64_t)e->t->now_wall_ns;
	/* a gauge has no start; a sum's is where its count began */
	if (e->kind == SUM_D || e->kind == SUM_I)
		p->start_time_unix_nano = (uint64_t)e->start_ns;
	e->pts[e->npts++] = p;
	e->nattrs = 0;
	e->points++;
	return p;
}

void
otlp_point_i(struct enc *e, uint64_t v)
{
	PB(NumberDataPoint) *p = point(e);

	if (p == NULL)
		return;
	if (e->kind == SUM_D || e->kind == GAUGE_D) {
		p->value_case = PBE(NUMBER_DATA_POINT__VALUE_AS_DOUBLE);
		p->as_double = (double)v;
	} else {
		p->value_case = PBE(NUMBER_DATA_POINT__VALUE_AS_INT);
		p->as_int = v > INT64_MAX ? INT64_MAX : (int64_t)v;
	}
}

void
otlp_point_d(struct enc *e, double v)
{
	PB(NumberDataPoint) *p = point(e);

	if (p == NULL)
		return;
	p->value_case = PBE(NUMBER_DATA_POINT__VALUE_AS_DOUBLE);
	p->as_double = v;
}

/* num / den as seconds (ticks, µs, ns) */
void
otlp_point_ratio(struct enc *e, uint64_t num, uint64_t den)
{
	otlp_point_d(e, den ? (double)num / (double)den : 0.0);
}

/* A time after boot (ns) as a Unix time. */
int64_t
otlp_wall_of(const struct enc *e, int64_t boot_ns)
{
	return e->t->boot_wall_ns + boot_ns;
}
