/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The call and the rendering: a request sent and its answer or exit code,
 * the JSON or the command's text of an answer, on stdout or into watch's
 * frame.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "vitals.h"

/* watch: a frame's text goes here instead of stdout */
struct sbuf *capture;

int
put_out(const struct sbuf *b)
{
	if (b->err) {
		fprintf(stderr, "vitals: out of memory\n");
		return VX_PROTOCOL;
	}
	if (capture) {
		sbuf_put(capture, sbuf_str(b), b->len);
		return capture->err ? VX_PROTOCOL : VX_OK;
	}
	fwrite(sbuf_str(b), 1, b->len, stdout);
	return fflush(stdout) == 0 ? VX_OK : VX_PROTOCOL;
}

void
range_since(Vitals__TimeRange *r, int64_t since_ns)
{
	r->since_ns = since_ns;
}

/*
 * Send req, return the answer or an exit code. A daemon refusal is printed
 * on stderr, and with --json the daemon's answer goes to stdout as well.
 */
int
call(const struct opts *o, Vitals__Request *req, Vitals__Response **ret)
{
	struct sbuf msg;
	int x;

	req->version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	req->id = ((uint64_t)getpid() << 32) ^
	    (uint64_t)clock_now_ns(CLOCK_MONOTONIC);
	if (req->id == 0)
		req->id = 1;
	sbuf_init(&msg);
	x = conn_call(o->socket, o->timeout_ms, req, ret, &msg);
	if (x != VX_OK) {
		if (x == VX_UNAVAILABLE && !strstr(sbuf_str(&msg), "try again"))
			sbuf_puts(&msg, " — try again in a few seconds");
		fprintf(stderr, "vitals: %s\n", sbuf_str(&msg));
		if (o->json && *ret) {
			struct sbuf b;

			sbuf_init(&b);
			json_response(&b, *ret);
			put_out(&b);
			sbuf_free(&b);
		}
		if (*ret)
			vitals__response__free_unpacked(*ret, NULL);
		*ret = NULL;
	}
	sbuf_free(&msg);
	return x;
}

/* A call whose failure is no error of the command (nothing printed). */
int
call_quiet(const struct opts *o, Vitals__Request *req, Vitals__Response **ret)
{
	struct sbuf msg;
	int x;

	req->version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	req->id = ((uint64_t)getpid() << 32) ^
	    (uint64_t)clock_now_ns(CLOCK_MONOTONIC) ^ 1;
	if (req->id == 0)
		req->id = 1;
	sbuf_init(&msg);
	*ret = NULL;
	x = conn_call(o->socket, o->timeout_ms, req, ret, &msg);
	if (x != VX_OK && *ret) {
		vitals__response__free_unpacked(*ret, NULL);
		*ret = NULL;
	}
	sbuf_free(&msg);
	return x;
}

/*
 * Prose wider than the terminal is wrapped at spaces (tables fit by
 * themselves, table.c). Not the summary and plain gpumem: they are
 * dumpsys's text line for line, which parsers read.
 */
static bool
fit_text(const struct opts *o,
    void (*text)(struct sbuf *, const Vitals__Response *, const struct opts *))
{
	if (text == text_summary)
		return false;
	if (text == text_gpumem)
		return o->verbose || (o->given & O_SINCE);
	return true;
}

/* The common tail: JSON of the whole answer, or the command's text. */
/* One more member of the top JSON object (cmd_proc's trace), or none. */
const char *json_extra_key;
const ProtobufCMessage *json_extra;

int
render(const struct opts *o, Vitals__Response *resp,
    void (*text)(struct sbuf *, const Vitals__Response *, const struct opts *))
{
	struct sbuf b;
	int x;

	sbuf_init(&b);
	if (o->json && json_extra_key)
		json_response_with(&b, resp, json_extra_key, json_extra);
	else if (o->json)
		json_response(&b, resp);
	else
		text(&b, resp, o);
	if (!o->json && fit_text(o, text)) {
		struct sbuf f;

		sbuf_init(&f);
		text_fit(&f, sbuf_str(&b), o->fc.width);
		if (b.err)
			f.err = b.err;
		sbuf_free(&b);
		b = f;
	}
	x = put_out(&b);
	sbuf_free(&b);
	vitals__response__free_unpacked(resp, NULL);
	return x;
}

void
text_summary(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	if (r->snapshot->window)
		fmt_summary(b, r->snapshot->window, &o->fc);
	else
		sbuf_puts(b, "no window\n");
}

int
snapshot(const struct opts *o, Vitals__Response **ret)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__SnapshotRequest sr = VITALS__SNAPSHOT_REQUEST__INIT;

	sr.top_n = o->n;
	req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
	req.snapshot = &sr;
	return call(o, &req, ret);
}
