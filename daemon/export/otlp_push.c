/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OTLP/HTTP push: every otlp_interval_s a batch (the exporter's figures as
 * of the latest sample, otlp_encode.c) joins a bounded queue, and the
 * queue's head is POSTed to <endpoint>/v1/metrics, one request at a time.
 *
 * On the daemon's loop, with libevent's evhttp client: connect, write and
 * read are non-blocking, every attempt has otlp_timeout_ms, and the timer
 * runs at the lowest event priority, below the sampling tick. Making a
 * batch is an encode of what the last sample left (no reads); the one
 * thing that could block, resolving the collector's name, is done once,
 * in otlp_push_new() before the loop runs (doc/export.md says so).
 *
 * The OTLP/HTTP rules: 2xx is sent (a partial_success in the body counts
 * its rejected points); 429, 502, 503, 504 and no answer at all (refused,
 * reset, timed out) are retried, after the Retry-After seconds when the
 * collector gives them, else after an exponential backoff with jitter
 * (1 s doubling to 30 s, each drawn between half and all of it); any other
 * status drops the batch (dropped_rejected). While a retry waits, new
 * batches queue; a full queue drops its oldest waiting batch
 * (dropped_full). Sampling never waits for any of this.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "config/config.h"
#include "core/log.h"
#include "core/loopstat.h"
#include "export/otlp.h"
#include "otlp_metrics.pb-c.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 30000
#define RETRY_AFTER_MAX_S 300	    /* a longer Retry-After is held to it */
#define ANSWER_MAX_BYTES (1u << 20) /* a response body, headers apart */

struct batch {
	uint8_t *p;
	size_t n;
};

struct otlp_push {
	struct event_base *base;
	struct otlp_opts o;
	otlp_batch_fn make;
	void *arg;
	char host[256];	   /* for the Host header: as configured */
	char addr[64];	   /* numeric, resolved once */
	char uri[300];	   /* PREFIX/v1/metrics */
	char hosthdr[300]; /* host[:port] */
	uint16_t port;
	struct evhttp_connection *conn;
	struct event *tick;  /* make a batch */
	struct event *retry; /* the backoff's wait */
	/* the queue: a ring of queue_max batches; the head is sent */
	struct batch *q;
	size_t head, depth;
	bool inflight; /* the head is being sent */
	bool waiting;  /* retry is armed */
	bool closing;
	bool failing;	     /* the last attempt failed (logged once) */
	bool answered;	     /* done_cb ran for the attempt being made */
	unsigned backoff_ms; /* the next wait without Retry-After */
	int req_error;	     /* the error callback's, for the done one */
	int64_t sent_ns;     /* CLOCK_MONOTONIC of the attempt */
	struct vbuf scratch;
	struct otlp_stats st;
};

static void send_head(struct otlp_push *p);

static void
set_error(struct otlp_push *p, const char *fmt, const char *arg)
{
	snprintf(p->st.last_error, sizeof(p->st.last_error), fmt, arg);
}

static void
pop_head(struct otlp_push *p)
{
	struct batch *b = &p->q[p->head];

	free(b->p);
	b->p = NULL;
	b->n = 0;
	p->head = (p->head + 1) % p->o.queue_max;
	p->depth--;
	p->st.depth = (uint32_t)p->depth;
}

static void
kick(struct otlp_push *p)
{
	if (!p->inflight && !p->waiting && p->depth > 0 && !p->closing)
		send_head(p);
}

/* The wait before the next attempt: Retry-After when given (capped),
 * else the backoff, drawn in [half, all] and doubled for next time. */
static void
schedule_retry(struct otlp_push *p, long retry_after_s)
{
	struct timeval tv;
	unsigned ms, j = 0;

	if (retry_after_s >= 0) {
		if (retry_after_s > RETRY_AFTER_MAX_S)
			retry_after_s = RETRY_AFTER_MAX_S;
		ms = (unsigned)retry_after_s * 1000;
		/* "Retry-After: 0" again and again: not a tight loop */
		if (ms < 1000)
			ms = 1000;
	} else {
		ms = p->backoff_ms;
		if (getrandom(&j, sizeof(j), GRND_NONBLOCK) != sizeof(j))
			j = (unsigned)p->st.retries * 2654435761u;
		ms = ms / 2 + j % (ms / 2 + 1);
		p->backoff_ms = p->backoff_ms * 2 > BACKOFF_MAX_MS ?
		    BACKOFF_MAX_MS :
		    p->backoff_ms * 2;
	}
	p->st.retries++;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	/* a timer not armed would leave the push waiting for good */
	p->waiting = evtimer_add(p->retry, &tv) == 0;
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct otlp_push *p = arg;

	(void)fd;
	(void)what;
	p->waiting = false;
	kick(p);
}

/* Retry-After as delta-seconds; -1: absent or an HTTP date (the backoff
 * then decides, for a date needs a trusted clock to mean anything). */
static long
retry_after(struct evhttp_request *req)
{
	const char *v = evhttp_find_header(evhttp_request_get_input_headers(
					       req),
	    "Retry-After");
	char *end;
	long s;

	if (v == NULL)
		return -1;
	errno = 0;
	s = strtol(v, &end, 10);
	if (end == v || *end != '\0' || errno || s < 0)
		return -1;
	return s;
}

/* A 2xx's body: an ExportMetricsServiceResponse, maybe partial. */
static void
read_answer(struct otlp_push *p, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceResponse
	    *resp;
	size_t n = in ? evbuffer_get_length(in) : 0;
	const uint8_t *b;

	if (n == 0 || n > ANSWER_MAX_BYTES ||
	    (b = evbuffer_pullup(in, (ssize_t)n)) == NULL)
		return;
	resp =
	    opentelemetry__proto__collector__metrics__v1__export_metrics_service_response__unpack(
		NULL, n, b);
	if (resp == NULL)
		return;
	if (resp->partial_success) {
		const char *msg = resp->partial_success->error_message;

		if (resp->partial_success->rejected_data_points > 0)
			p->st.rejected_points += (uint64_t)resp->partial_success
						     ->rejected_data_points;
		if (msg && *msg)
			set_error(p, "partial success: %s", msg);
	}
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_response__free_unpacked(
	    resp, NULL);
}

/* libevent 2.1 reports a refused connect as a timeout, or not at all: an
 * attempt that ended well before its timeout was a failed connection. */
static const char *
req_error_name(const struct otlp_push *p, int e)
{
	int64_t took = clock_ns(CLOCK_MONOTONIC) - p->sent_ns;

	switch (e) {
	case EVREQ_HTTP_TIMEOUT:
		if (took < (int64_t)p->o.timeout_ms * NSEC_PER_MSEC * 9 / 10)
			return "connection failed";
		return "timed out";
	case EVREQ_HTTP_EOF:
		return "connection closed";
	case EVREQ_HTTP_INVALID_HEADER:
		return "invalid answer";
	case EVREQ_HTTP_BUFFER_ERROR:
		return "connection failed";
	case EVREQ_HTTP_DATA_TOO_LONG:
		return "answer too long";
	default:
		return "connection failed";
	}
}

static void
error_cb(enum evhttp_request_error e, void *arg)
{
	struct otlp_push *p = arg;

	p->req_error = (int)e;
}

static void
done_cb(struct evhttp_request *req, void *arg)
{
	struct otlp_push *p = arg;
	int code = req ? evhttp_request_get_response_code(req) : 0;

	p->inflight = false;
	p->answered = true;
	if (p->closing)
		return;
	/* one log line when pushing starts failing, one when it recovers */
	if (code >= 200 && code < 300 && p->failing) {
		log_info("otlp: %s answers again", p->st.endpoint);
		p->failing = false;
	} else if ((code < 200 || code >= 300) && !p->failing) {
		log_warnx("otlp: %s: %s%d; retrying or dropping as the "
			  "status says (vitals health)",
		    p->st.endpoint, code ? "HTTP " : "no answer, ",
		    code ? code : p->req_error);
		p->failing = true;
	}
	if (code >= 200 && code < 300) {
		p->st.sent++;
		p->st.bytes_sent += p->q[p->head].n;
		p->st.last_status = code;
		p->st.last_error[0] = '\0';
		read_answer(p, req);
		pop_head(p);
		p->backoff_ms = BACKOFF_MIN_MS;
		kick(p);
		return;
	}
	p->st.failed++;
	if (code == 0) {
		p->st.last_status = -1;
		set_error(p, "%s", req_error_name(p, p->req_error));
		schedule_retry(p, -1);
		return;
	}
	p->st.last_status = code;
	if (code == 429 || code == 502 || code == 503 || code == 504) {
		char s[16];

		snprintf(s, sizeof(s), "%d", code);
		set_error(p, "HTTP %s: retried", s);
		schedule_retry(p, retry_after(req));
		return;
	}
	{
		char s[16];

		snprintf(s, sizeof(s), "%d", code);
		set_error(p, "HTTP %s: batch dropped", s);
	}
	p->st.dropped_rejected++;
	pop_head(p);
	kick(p);
}

static void
send_head(struct otlp_push *p)
{
	const struct batch *b = &p->q[p->head];
	struct evhttp_request *req;
	struct evkeyvalq *h;

	if ((req = evhttp_request_new(done_cb, p)) == NULL)
		goto fail;
	evhttp_request_set_error_cb(req, error_cb);
	h = evhttp_request_get_output_headers(req);
	if (evhttp_add_header(h, "Host", p->hosthdr) < 0 ||
	    evhttp_add_header(h, "Content-Type", "application/x-protobuf") <
		0 ||
	    evhttp_add_header(h, "User-Agent", "vitalsd/" VITALS_VERSION) < 0 ||
	    evbuffer_add(evhttp_request_get_output_buffer(req), b->p, b->n) <
		0) {
		evhttp_request_free(req);
		goto fail;
	}
	p->req_error = -1;
	p->sent_ns = clock_ns(CLOCK_MONOTONIC);
	p->inflight = true;
	p->answered = false;
	/* A connect that fails at once (socket() refused: seccomp, the
	 * unit's RestrictAddressFamilies, EMFILE) runs done_cb inside this
	 * call, which counts it; on -1 evhttp has freed req. */
	if (evhttp_make_request(p->conn, req, EVHTTP_REQ_POST, p->uri) < 0) {
		p->inflight = false;
		if (p->answered)
			return;
		goto fail;
	}
	return;
fail:
	p->st.failed++;
	p->st.last_status = -1;
	set_error(p, "%s", "request not made (memory)");
	schedule_retry(p, -1);
}

/* A batch into the queue; a full queue gives up its oldest waiting one. */
static void
enqueue(struct otlp_push *p, const uint8_t *data, size_t n)
{
	struct batch *b;
	uint8_t *copy;
	size_t tail;

	if ((copy = malloc(n ? n : 1)) == NULL) {
		p->st.dropped_full++;
		return;
	}
	if (n)
		memcpy(copy, data, n);
	if (p->depth == p->o.queue_max) {
		/* the oldest not on the wire: the head's successor while
		 * the head is being sent, or the new one when none waits */
		size_t drop = p->inflight ? 1 : 0, i;

		p->st.dropped_full++;
		if (drop == p->depth) {
			free(copy);
			return;
		}
		i = (p->head + drop) % p->o.queue_max;
		free(p->q[i].p);
		/* close the gap: shift the younger ones down one */
		for (; drop + 1 < p->depth; drop++) {
			size_t a = (p->head + drop) % p->o.queue_max;
			size_t c = (p->head + drop + 1) % p->o.queue_max;

			p->q[a] = p->q[c];
		}
		p->depth--;
	}
	tail = (p->head + p->depth) % p->o.queue_max;
	b = &p->q[tail];
	b->p = copy;
	b->n = n;
	p->depth++;
	p->st.queued++;
	p->st.depth = (uint32_t)p->depth;
}

static void
tick_cb_run(evutil_socket_t fd, short what, void *arg)
{
	struct otlp_push *p = arg;
	size_t points = 0;
	int r;

	(void)fd;
	(void)what;
	if ((r = p->make(p->arg, &p->scratch, &points)) < 0) {
		set_error(p, "batch not made: %s", strerror(-r));
		return;
	}
	if (points == 0)
		return; /* no sample yet */
	p->st.points_last = points;
	enqueue(p, (const uint8_t *)p->scratch.p, p->scratch.len);
	kick(p);
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	tick_cb_run(fd, what, arg);
	loopstat_end("otlp push", t0);
}

/* The host as a numeric address, resolved now (blocking: before the
 * loop runs), so that no connect ever waits for DNS. */
static int
resolve(struct otlp_push *p)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	const void *a;
	int r;

	if ((r = getaddrinfo(p->host, NULL, &hints, &ai)) != 0)
		return r == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	a = ai->ai_family == AF_INET6 ?
	    (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr :
	    (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	r = inet_ntop(ai->ai_family, a, p->addr, sizeof(p->addr)) ? 0 : -EINVAL;
	freeaddrinfo(ai);
	return r;
}

int
otlp_push_new(struct event_base *base, const struct otlp_opts *o,
    otlp_batch_fn make, void *arg, struct otlp_push **ret)
{
	struct timeval tv = { .tv_sec = o->interval_s };
	struct otlp_push *p;
	char prefix[256];
	int r;

	if (o->queue_max == 0 || o->interval_s == 0)
		return -EINVAL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	p->base = base;
	p->o = *o;
	p->make = make;
	p->arg = arg;
	p->backoff_ms = BACKOFF_MIN_MS;
	snprintf(p->st.endpoint, sizeof(p->st.endpoint), "%s", o->endpoint);
	if ((r = config_parse_url(o->endpoint, p->host, sizeof(p->host),
		 &p->port, prefix, sizeof(prefix))) < 0)
		goto fail;
	snprintf(p->uri, sizeof(p->uri), "%s/v1/metrics", prefix);
	snprintf(p->hosthdr, sizeof(p->hosthdr),
	    strchr(p->host, ':') ? "[%s]:%u" : "%s:%u", p->host,
	    (unsigned)p->port);
	if ((r = resolve(p)) < 0)
		goto fail;
	r = -ENOMEM;
	if ((p->q = calloc(o->queue_max, sizeof(*p->q))) == NULL ||
	    (p->conn = evhttp_connection_base_new(base, NULL, p->addr,
		 p->port)) == NULL ||
	    (p->tick = event_new(base, -1, EV_PERSIST, tick_cb, p)) == NULL ||
	    (p->retry = evtimer_new(base, retry_cb, p)) == NULL)
		goto fail;
	{
		struct timeval to = { .tv_sec = o->timeout_ms / 1000,
			.tv_usec = (o->timeout_ms % 1000) * 1000 };

		evhttp_connection_set_timeout_tv(p->conn, &to);
	}
	evhttp_connection_set_retries(p->conn, 0);
	evhttp_connection_set_max_body_size(p->conn, ANSWER_MAX_BYTES);
	evhttp_connection_set_max_headers_size(p->conn, 16384);
	event_priority_set(p->tick, o->priority);
	event_priority_set(p->retry, o->priority);
	if (event_add(p->tick, &tv) < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	otlp_push_free(p);
	return r;
}

struct otlp_push *
otlp_push_free(struct otlp_push *p)
{
	size_t i;

	if (p == NULL)
		return NULL;
	p->closing = true;
	if (p->tick)
		event_free(p->tick);
	if (p->retry)
		event_free(p->retry);
	/* fails a request in flight: done_cb sees closing */
	if (p->conn)
		evhttp_connection_free(p->conn);
	for (i = 0; p->q && i < p->o.queue_max; i++)
		free(p->q[i].p);
	free(p->q);
	vbuf_release(&p->scratch);
	free(p);
	return NULL;
}

void
otlp_push_get_stats(const struct otlp_push *p, struct otlp_stats *ret)
{
	*ret = p->st;
}
