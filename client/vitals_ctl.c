/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The commands that run or steer something: watch (a frame per
 * interval), heapprofd and wss (their sessions started, listed, ended).
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

struct watch_arg {
	struct opts *o;
	const struct cmd *sub; /* NULL: the live window, top-like */
};

/* One frame: the command's text (or JSON) for width columns. */
static int
watch_frame(struct sbuf *b, size_t width, void *arg)
{
	struct watch_arg *a = arg;
	struct opts *o = a->o;
	Vitals__Response *r;
	struct sbuf t;
	int x;

	o->fc.width = width;
	o->fc.now_mono_ns = clock_now_ns(CLOCK_MONOTONIC);
	if (a->sub) {
		capture = b;
		x = a->sub->fn(o);
		capture = NULL;
		return x;
	}
	x = snapshot(o, &r);
	if (x == VX_UNAVAILABLE)
		sbuf_puts(b, "no window closed yet\n");
	if (x != VX_OK)
		return x;
	sbuf_init(&t);
	if (o->json)
		json_response(b, r);
	else if (r->snapshot->window == NULL)
		sbuf_puts(&t, "no window\n");
	else if (o->fc.dumpsys_only)
		fmt_summary(&t, r->snapshot->window, &o->fc);
	else
		fmt_watch_top(&t, r->snapshot->window, &o->fc);
	if (o->json)
		;
	else if (o->fc.dumpsys_only)
		sbuf_puts(b, sbuf_str(&t)); /* dumpsys's lines as they are */
	else
		text_fit(b, sbuf_str(&t), width);
	if (t.err)
		b->err = t.err;
	sbuf_free(&t);
	vitals__response__free_unpacked(r, NULL);
	return x;
}

/*
 * `vitals watch [COMMAND ARGS]`: the live window as a top-like view, or
 * the command's text, refreshed every interval (watch.c draws). Piped or
 * with --json, one block per frame; "no window yet" is shown and waited
 * out, other failures end the watch with their exit code.
 */
int
cmd_watch(struct opts *o)
{
	struct watch w;
	struct watch_arg a = { o, o->watch_sub };

	memset(&w, 0, sizeof(w));
	w.interval_ns = o->interval_ns;
	w.count = o->count;
	w.json = o->json;
	w.tty = !o->json && isatty(STDOUT_FILENO);
	return watch_run(&w, watch_frame, &a);
}

/* ------------------------------------------------ heapprofd */

static void
text_hp_start(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_hp_started(b, r->heapprofd_start);
}

static void
text_hp_list(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_hp_list(b, r->heapprofd_list);
}

static void
text_hp_cancel(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_hp_cancelled(b, r->heapprofd_cancel);
}

static int
hp_start(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HeapprofdStartRequest sr =
	    VITALS__HEAPPROFD_START_REQUEST__INIT;
	Vitals__Response *r;
	char *names = NULL, *more[16], *c;
	size_t nmore = 0;
	bool refused;
	int x;

	if (!(o->given & O_PID) == !(o->given & O_NAME))
		usage_err("heapprofd start: give --pid PID or --name NAME");
	sr.pid = o->hp_pid;
	sr.name = (char *)(o->hp_name ? o->hp_name : "");
	/* --name com.app,com.app:remote: one session over both (a
	 * process name has no comma) */
	if (o->hp_name && strchr(o->hp_name, ',')) {
		if ((names = strdup(o->hp_name)) == NULL)
			return VX_PROTOCOL;
		sr.name = names;
		for (c = strchr(names, ','); c; c = strchr(c, ',')) {
			*c++ = '\0';
			if (nmore == sizeof(more) / sizeof(more[0]))
				usage_err("heapprofd start: at most 16 names");
			more[nmore++] = c;
		}
		sr.n_names = nmore;
		sr.names = more;
	}
	sr.duration_ms = (uint32_t)(o->hp_duration_ns / 1000000);
	sr.dry_run = o->hp_dry_run;
	req.op_case = VITALS__REQUEST__OP_HEAPPROFD_START;
	req.heapprofd_start = &sr;
	x = call(o, &req, &r);
	free(names);
	if (x != VX_OK)
		return x;
	refused = r->heapprofd_start->refusal !=
	    VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_OK;
	/* the refusal's message goes to stderr in --json mode too */
	if (refused)
		fprintf(stderr, "vitals: heapprofd session refused: %s: %s\n",
		    fmt_hp_refusal(r->heapprofd_start->refusal),
		    r->heapprofd_start->message);
	if (refused && !o->json) {
		vitals__response__free_unpacked(r, NULL);
		return VX_REFUSED;
	}
	x = render(o, r, text_hp_start);
	return x == VX_OK && refused ? VX_REFUSED : x;
}

int
cmd_heapprofd(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HeapprofdListRequest lr = VITALS__HEAPPROFD_LIST_REQUEST__INIT;
	Vitals__HeapprofdCancelRequest cr =
	    VITALS__HEAPPROFD_CANCEL_REQUEST__INIT;
	const char *sub = o->args[0];
	unsigned start_only = O_PID | O_NAME | O_DURATION | O_DRY_RUN;
	Vitals__Response *r;
	uint64_t id;
	int x;

	if (strcmp(sub, "start") == 0) {
		if (o->nargs != 1 || (o->given & O_N))
			usage_err("heapprofd start: no operand, no -n");
		return hp_start(o);
	}
	if (o->given & start_only)
		usage_err("heapprofd %s: --pid, --name, --duration and "
			  "--dry-run belong to start",
		    sub);
	if (strcmp(sub, "list") == 0) {
		if (o->nargs != 1)
			usage_err("heapprofd list: no operand");
		lr.limit = o->n;
		req.op_case = VITALS__REQUEST__OP_HEAPPROFD_LIST;
		req.heapprofd_list = &lr;
		if ((x = call(o, &req, &r)) != VX_OK)
			return x;
		return render(o, r, text_hp_list);
	}
	if (strcmp(sub, "cancel") == 0) {
		if (o->nargs != 2 || (o->given & O_N) ||
		    uint_parse(o->args[1], INT64_MAX, &id) < 0 || id == 0)
			usage_err("heapprofd cancel: expected a session ID");
		cr.session_id = (int64_t)id;
		req.op_case = VITALS__REQUEST__OP_HEAPPROFD_CANCEL;
		req.heapprofd_cancel = &cr;
		if ((x = call(o, &req, &r)) != VX_OK)
			return x;
		return render(o, r, text_hp_cancel);
	}
	usage_err("heapprofd: expected start, list or cancel, not '%s'", sub);
}

/* ---------------------------------------------------------------- wss */

static void
text_wss(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	if (r->result_case == VITALS__RESPONSE__RESULT_WSS_STOP)
		sbuf_printf(b, "wss: pid %d no longer a target\n",
		    r->wss_stop->pid);
	else
		fmt_wss(b,
		    r->result_case == VITALS__RESPONSE__RESULT_WSS_START ?
			r->wss_start :
			r->wss_get);
}

static int32_t
wss_pid_arg(const char *s)
{
	uint64_t v;

	if (uint_parse(s, INT32_MAX, &v) < 0 || v == 0)
		usage_err("wss: bad PID '%s'", s);
	return (int32_t)v;
}

int
cmd_wss(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__WssStartRequest sr = VITALS__WSS_START_REQUEST__INIT;
	Vitals__WssGetRequest gr = VITALS__WSS_GET_REQUEST__INIT;
	Vitals__WssStopRequest xr = VITALS__WSS_STOP_REQUEST__INIT;
	const char *sub = o->nargs ? o->args[0] : "";
	bool start = !strcmp(sub, "start");
	Vitals__Response *r;
	int x;

	if (!start && (o->given & (O_PID | O_MODE | O_NAME | O_METHOD)))
		usage_err("wss: --pid, --name, --mode and --method go with "
			  "'wss start'");
	if (start) {
		if (!(o->given & O_MODE))
			usage_err("wss start: --mode heap|library is needed");
		if (!(o->given & O_PID) == !(o->given & O_NAME))
			usage_err("wss start: give --pid or --name");
		sr.pid = o->wss_pid;
		sr.name = (char *)(o->wss_name ? o->wss_name : "");
		sr.mode = (char *)o->wss_mode;
		if (!strcmp(o->wss_mode, "library")) {
			if (o->nargs != 2)
				usage_err("wss start: --mode library needs the "
					  "library's file name");
			sr.library = o->args[1];
		} else if (strcmp(o->wss_mode, "heap") != 0) {
			usage_err("wss start: --mode is heap or library");
		} else if (o->nargs != 1) {
			usage_err("wss start: --mode heap takes no operand");
		}
		sr.method = (char *)(o->wss_method ? o->wss_method : "");
		req.op_case = VITALS__REQUEST__OP_WSS_START;
		req.wss_start = &sr;
	} else if (!strcmp(sub, "stop")) {
		if (o->nargs != 2)
			usage_err("wss stop: expected a PID");
		xr.pid = wss_pid_arg(o->args[1]);
		req.op_case = VITALS__REQUEST__OP_WSS_STOP;
		req.wss_stop = &xr;
	} else {
		if (o->nargs > 1)
			usage_err("wss: expected at most a PID");
		gr.pid = o->nargs ? wss_pid_arg(sub) : 0;
		req.op_case = VITALS__REQUEST__OP_WSS_GET;
		req.wss_get = &gr;
	}
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_wss);
}
