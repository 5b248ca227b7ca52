/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OTLP/HTTP push (doc/export.md, "OTLP push"): the exporter's figures
 * (export_state.c, the same set the OpenMetrics page has) encoded as an
 * OpenTelemetry ExportMetricsServiceRequest (otlp_encode.c, pure) and
 * POSTed to a collector's /v1/metrics from a bounded queue with retries
 * (otlp_push.c, on the daemon's loop).
 */
#ifndef VITALSD_EXPORT_OTLP_H
#define VITALSD_EXPORT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

struct export_page;

#define OTLP_INTERVAL_DEFAULT_S 10
#define OTLP_QUEUE_DEFAULT 60
#define OTLP_TIMEOUT_DEFAULT_MS 10000

/* ------------------------------------------------------ otlp_encode.c */

/* The Resource's attributes besides service.name and os.type. */
struct otlp_resource {
	const char *version; /* service.version */
	const char *host;    /* host.name */
};

struct otlp_times {
	int64_t now_wall_ns;  /* the sample's time: every point's time */
	int64_t boot_wall_ns; /* boot, fixed at the exporter's start */
	int64_t boot_ns;      /* the sample's CLOCK_BOOTTIME */
};

/* The request for one page's figures; ret_points: data points in it. */
int otlp_encode(const struct export_page *pg, const struct otlp_resource *res,
    const struct otlp_times *t, struct vbuf *out, size_t *ret_points);

/* ------------------------------------------------------- otlp_push.c */

struct event_base;

struct otlp_opts {
	const char *endpoint; /* http://HOST[:PORT][/PREFIX] */
	unsigned interval_s;  /* a batch every interval */
	unsigned queue_max;   /* batches waiting, the one being sent included */
	unsigned timeout_ms;  /* connect, send, answer */
	int priority;	      /* event priority: below the sampling tick */
};

/* What the push did, cumulative since start (Health.otlp). */
struct otlp_stats {
	char endpoint[256];	   /* as configured */
	uint64_t queued;	   /* batches made and queued */
	uint64_t sent;		   /* answered 2xx */
	uint64_t failed;	   /* attempts not answered 2xx */
	uint64_t dropped_full;	   /* oldest waiting batch, queue full */
	uint64_t dropped_rejected; /* a non-retryable answer */
	uint64_t retries;	   /* attempts after a retryable failure */
	int32_t last_status;	   /* HTTP status; 0: none, -1: no answer */
	char last_error[128];	   /* "" none */
	uint64_t rejected_points;  /* partial_success.rejected_data_points */
	uint64_t bytes_sent;	   /* request bodies answered 2xx */
	uint32_t depth;		   /* batches waiting now */
	uint64_t points_last;	   /* data points in the last batch made */
};

/* Make the next batch into out (its data points: ret_points). */
typedef int (*otlp_batch_fn)(void *arg, struct vbuf *out, size_t *ret_points);

struct otlp_push;

/* Parses the endpoint (and resolves its host, once: before the loop). */
int otlp_push_new(struct event_base *base, const struct otlp_opts *o,
    otlp_batch_fn batch, void *arg, struct otlp_push **ret);
struct otlp_push *otlp_push_free(struct otlp_push *p);
void otlp_push_get_stats(const struct otlp_push *p, struct otlp_stats *ret);

#endif /* VITALSD_EXPORT_OTLP_H */
