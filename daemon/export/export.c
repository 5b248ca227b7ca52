/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The exporter: fed by the daemon after every sample (the processes'
 * counters) and every closed window (sums), it keeps the page of the
 * latest sample and hands it to the endpoint (export_http.c). A page is
 * built at most once per sample and format, on the first scrape that
 * wants it: the sampling path pays only the walk of the process table.
 * The OTLP push (otlp_push.c), when on, asks for a batch every
 * otlp_interval_s: the same figures, encoded by otlp_encode.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export/export.h"
#include "export/otlp.h"
#include "window/collector.h"

struct export
{
	const struct collector *col;
	struct export_state st;
	struct export_stats stats;
	struct export_http *http;
	struct otlp_push *otlp;
	int64_t boot_wall_ns; /* Unix time of boot, fixed at start */
	char host[256];	      /* host.name */
	uint64_t gen;	      /* bumped by every sample and window */
	struct vbuf page[2];
	uint64_t page_gen[2]; /* gen + 1 of the page held; 0: none */
	int feed_err;
};

static void
add_proc(const struct procscan_proc *p, void *arg)
{
	struct export *ex = arg;
	int r;

	if ((r = export_state_add(&ex->st, p)) < 0)
		ex->feed_err = r;
}

int
export_sample(struct export *ex)
{
	struct clocks clk;

	if (collector_last_sys(ex->col, &clk) == NULL)
		return 0;
	ex->feed_err = 0;
	export_state_begin(&ex->st, clk.boot_ns);
	collector_each_proc(ex->col, add_proc, ex);
	if (ex->feed_err < 0) {
		ex->st.nin = 0;
		return ex->feed_err;
	}
	ex->gen++;
	return export_state_end(&ex->st);
}

void
export_window(struct export *ex, const struct window *w)
{
	export_state_window(&ex->st, w);
	ex->gen++;
}

static int
build(struct export *ex, enum export_format fmt)
{
	struct export_page pg = { 0 };
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), dt;
	int r;

	pg.st = &ex->st;
	pg.sys = collector_last_sys(ex->col, NULL);
	pg.open = collector_open(ex->col);
	pg.stats = &ex->stats;
	if ((r = export_render(&pg, fmt, &ex->page[fmt])) < 0)
		return r;
	dt = clock_ns(CLOCK_MONOTONIC) - t0;
	ex->stats.render_ns_last = (uint64_t)dt;
	if ((uint64_t)dt > ex->stats.render_ns_max)
		ex->stats.render_ns_max = (uint64_t)dt;
	ex->stats.page_bytes_last = ex->page[fmt].len;
	ex->page_gen[fmt] = ex->gen + 1;
	return 0;
}

static int
page_cb(void *arg, enum export_format fmt, const struct vbuf **ret)
{
	struct export *ex = arg;
	int r;

	if (ex->page_gen[fmt] != ex->gen + 1 && (r = build(ex, fmt)) < 0)
		return r;
	*ret = &ex->page[fmt];
	return 0;
}

int
export_page_now(struct export *ex, enum export_format fmt, struct vbuf *out)
{
	const struct vbuf *p;
	int r;

	if ((r = page_cb(ex, fmt, &p)) < 0)
		return r;
	vbuf_reset(out);
	return vbuf_printf(out, "%s", p->p ? p->p : "");
}

int
export_otlp_now(struct export *ex, struct vbuf *out, size_t *ret_points)
{
	struct export_page pg = { 0 };
	struct otlp_resource res = { VITALS_VERSION, ex->host };
	struct otlp_times t;
	struct clocks clk;

	pg.st = &ex->st;
	if ((pg.sys = collector_last_sys(ex->col, &clk)) == NULL) {
		vbuf_reset(out);
		*ret_points = 0;
		return 0;
	}
	pg.open = collector_open(ex->col);
	t.now_wall_ns = ex->boot_wall_ns + clk.boot_ns;
	t.boot_wall_ns = ex->boot_wall_ns;
	t.boot_ns = clk.boot_ns;
	return otlp_encode(&pg, &res, &t, out, ret_points);
}

static int
batch_cb(void *arg, struct vbuf *out, size_t *ret_points)
{
	return export_otlp_now(arg, out, ret_points);
}

int
export_new(struct event_base *base, const struct export_opts *o,
    const struct collector *col, struct export **ret)
{
	struct export *ex;
	long pg = sysconf(_SC_PAGESIZE);
	int r;

	if ((ex = calloc(1, sizeof(*ex))) == NULL)
		return -ENOMEM;
	ex->col = col;
	if ((r = export_state_init(&ex->st, o->top_n, collector_hz(col),
		 pg > 0 ? (uint64_t)pg : 4096)) < 0)
		goto fail;
	/* points are stamped boot + CLOCK_BOOTTIME: a series' start and the
	 * times of one run never move with a wall-clock step */
	ex->boot_wall_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	if (gethostname(ex->host, sizeof(ex->host) - 1) < 0)
		ex->host[0] = '\0';
	ex->stats.on = o->listen != NULL;
	if (o->listen)
		snprintf(ex->stats.listen, sizeof(ex->stats.listen), "%s",
		    o->listen);
	if (base && o->listen &&
	    (r = export_http_new(base, o, page_cb, ex, &ex->stats, &ex->http)) <
		0)
		goto fail;
	if (base && o->otlp &&
	    (r = otlp_push_new(base, o->otlp, batch_cb, ex, &ex->otlp)) < 0)
		goto fail;
	*ret = ex;
	return 0;
fail:
	export_free(ex);
	return r;
}

struct export *
export_free(struct export *ex)
{
	if (ex == NULL)
		return NULL;
	otlp_push_free(ex->otlp);
	export_http_free(ex->http);
	export_state_release(&ex->st);
	vbuf_release(&ex->page[0]);
	vbuf_release(&ex->page[1]);
	free(ex);
	return NULL;
}

void
export_get_stats(const struct export *ex, struct export_stats *ret)
{
	*ret = ex->stats;
}

bool
export_get_otlp(const struct export *ex, struct otlp_stats *ret)
{
	if (ex->otlp == NULL)
		return false;
	otlp_push_get_stats(ex->otlp, ret);
	return true;
}
