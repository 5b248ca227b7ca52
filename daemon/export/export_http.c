/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The /metrics endpoint: one GET per connection, the page, close.
 *
 * A minimal HTTP/1.x server on libevent bufferevents rather than evhttp:
 * libevent 2.1's evhttp answers an oversized or slow request itself and
 * has no hook that says so, nor a connection cap (both came with 2.2), so
 * the refusals a scraper causes could not be counted. Here every one is.
 *
 * The limits are those of the control socket (control.c), for the same
 * reasons:
 *  - connections: metrics_max_connections at once; one more is answered
 *    503 and closed at accept (cap_refused);
 *  - a whole request (line and headers) within metrics_max_request bytes,
 *    or 431 and close (bad_requests); a malformed one 400 (bad_requests);
 *  - the whole exchange, request in and page out, within
 *    metrics_timeout_ms from accept, or the connection is closed
 *    (timed_out): a client that trickles its request or never reads the
 *    page holds a slot that long at most;
 *  - everything runs at the lowest event priority, after the sampling
 *    tick; a page is built from the latest sample (export.c), so a scrape
 *    never waits for, nor delays, a sample.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "config/config.h"
#include "core/log.h"
#include "core/loopstat.h"
#include "export/export.h"

struct hconn {
	struct export_http *h;
	struct bufferevent *bev;
	struct event *deadline;
	bool answered; /* the answer is queued: close once it is written */
	struct hconn *next, **prevp;
};

struct export_http {
	struct event_base *base;
	int fd;
	char *unix_path; /* the socket file made here; NULL: none */
	struct event *listen_ev;
	struct event *retry_ev; /* accept again after EMFILE */
	struct export_opts o;
	export_page_fn page;
	void *arg;
	struct export_stats *st;
	struct hconn *conns;
};

static void
conn_free(struct hconn *c)
{
	if (c == NULL)
		return;
	if (c->prevp) {
		*c->prevp = c->next;
		if (c->next)
			c->next->prevp = c->prevp;
		c->h->st->connections--;
	}
	if (c->deadline)
		event_free(c->deadline);
	if (c->bev)
		bufferevent_free(c->bev);
	free(c);
}

/* Queue an answer; the connection closes once it is written. */
static void
conn_answer(struct hconn *c, int code, const char *reason, const char *ctype,
    const char *body, size_t len, bool head)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n",
	    code, reason, ctype, len);
	if (!head && len)
		evbuffer_add(out, body, len);
	c->answered = true;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_enable(c->bev, EV_WRITE);
}

static void
conn_error(struct hconn *c, int code, const char *reason)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%d %s\n", code, reason);

	conn_answer(c, code, reason, "text/plain; charset=utf-8", body,
	    (size_t)n, false);
}

/* The value of header name in the request's header lines, cut at CR. */
static bool
header_value(const char *req, const char *name, char *ret, size_t retsz)
{
	size_t n = strlen(name);
	const char *l = strchr(req, '\n');

	for (; l && l[1]; l = strchr(l + 1, '\n')) {
		const char *v = l + 1, *e;
		size_t len;

		if (strncasecmp(v, name, n) != 0 || v[n] != ':')
			continue;
		v += n + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		for (e = v; *e && *e != '\r' && *e != '\n'; e++)
			;
		len = (size_t)(e - v) < retsz - 1 ? (size_t)(e - v) : retsz - 1;
		memcpy(ret, v, len);
		ret[len] = '\0';
		return true;
	}
	return false;
}

static void
conn_request(struct hconn *c, const char *req)
{
	struct export_http *h = c->h;
	char method[16], target[256], version[16], accept[512];
	enum export_format fmt;
	const struct vbuf *page;
	bool head;
	char *q;

	if (sscanf(req, "%15s %255s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0) {
		h->st->bad_requests++;
		conn_error(c, 400, "Bad Request");
		return;
	}
	head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET") != 0) {
		h->st->bad_method++;
		conn_error(c, 405, "Method Not Allowed");
		return;
	}
	if ((q = strchr(target, '?')) != NULL)
		*q = '\0';
	if (strcmp(target, "/metrics") != 0) {
		h->st->not_found++;
		conn_error(c, 404, "Not Found");
		return;
	}
	fmt = export_accept(
	    header_value(req, "Accept", accept, sizeof(accept)) ? accept :
								  NULL);
	if (h->page(h->arg, fmt, &page) < 0 || page == NULL) {
		conn_error(c, 503, "Service Unavailable");
		return;
	}
	h->st->scrapes++;
	conn_answer(c, 200, "OK", export_content_type(fmt),
	    page->p ? page->p : "", page->len, head);
}

static void
conn_read_cb_run(struct bufferevent *bev, void *arg)
{
	struct hconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in);
	struct evbuffer_ptr end;
	char *req;

	if (c->answered)
		return;
	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos < 0)
		end = evbuffer_search(in, "\n\n", 2, NULL);
	if (end.pos < 0) {
		if (len > c->h->o.max_request) {
			c->h->st->bad_requests++;
			conn_error(c, 431, "Request Header Fields Too Large");
		}
		return;
	}
	if ((size_t)end.pos > c->h->o.max_request) {
		c->h->st->bad_requests++;
		conn_error(c, 431, "Request Header Fields Too Large");
		return;
	}
	if ((req = malloc((size_t)end.pos + 1)) == NULL) {
		conn_free(c);
		return;
	}
	evbuffer_copyout(in, req, (size_t)end.pos);
	req[end.pos] = '\0';
	conn_request(c, req);
	free(req);
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	int64_t t0 = loopstat_begin();

	conn_read_cb_run(bev, arg);
	loopstat_end("metrics scrape", t0);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct hconn *c = arg;

	if (c->answered &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_free(c);
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct hconn *c = arg;

	(void)bev;
	/* EOF before a whole request, or an error: nothing to answer */
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(c);
}

static void
conn_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hconn *c = arg;

	(void)fd;
	(void)what;
	c->h->st->timed_out++;
	conn_free(c);
}

static void
refuse(int fd)
{
	static const char busy[] =
	    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n";

	/* non-blocking: a client that does not read loses the answer */
	(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct export_http *h = arg;

	(void)fd;
	(void)what;
	event_add(h->listen_ev, NULL);
}

static void
listen_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct export_http *h = arg;
	struct timeval tv;
	struct hconn *c;
	int fd, i;

	(void)what;
	/* a few per wakeup: the loop's other events go first */
	for (i = 0; i < 16; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 &&
		    (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			errno == ENOMEM)) {
			/* the connection stays queued: listening again at
			 * once would spin; a second's pause, counted */
			struct timeval sec = { 1, 0 };

			h->st->accept_paused++;
			event_del(h->listen_ev);
			evtimer_add(h->retry_ev, &sec);
			return;
		}
		if (fd < 0)
			return;
		h->st->accepted++;
		if (h->st->connections >= h->o.max_conns) {
			h->st->cap_refused++;
			refuse(fd);
			continue;
		}
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			close(fd);
			continue;
		}
		c->h = h;
		c->bev = bufferevent_socket_new(h->base, fd,
		    BEV_OPT_CLOSE_ON_FREE);
		c->deadline = evtimer_new(h->base, conn_deadline_cb, c);
		if (c->bev == NULL || c->deadline == NULL) {
			if (c->bev == NULL)
				close(fd);
			conn_free(c);
			continue;
		}
		c->next = h->conns;
		if (h->conns)
			h->conns->prevp = &c->next;
		c->prevp = &h->conns;
		h->conns = c;
		h->st->connections++;
		bufferevent_priority_set(c->bev, h->o.priority);
		event_priority_set(c->deadline, h->o.priority);
		tv.tv_sec = h->o.timeout_ms / 1000;
		tv.tv_usec = (h->o.timeout_ms % 1000) * 1000;
		evtimer_add(c->deadline, &tv);
		/* a request bigger than the limit is refused, not buffered */
		bufferevent_setwatermark(c->bev, EV_READ, 0,
		    h->o.max_request + 4);
		bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb,
		    conn_event_cb, c);
		bufferevent_enable(c->bev, EV_READ);
	}
}

int
export_http_new(struct event_base *base, const struct export_opts *o,
    export_page_fn page, void *arg, struct export_stats *stats,
    struct export_http **ret)
{
	struct sockaddr_storage ss;
	struct export_http *h;
	socklen_t sl;
	int one = 1, r;

	if ((r = config_parse_listen(o->listen, &ss, &sl)) < 0)
		return r;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return -ENOMEM;
	h->base = base;
	h->o = *o;
	h->page = page;
	h->arg = arg;
	h->st = stats;
	h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (h->fd < 0) {
		r = -errno;
		goto fail;
	}
	if (ss.ss_family == AF_UNIX) {
		const char *path = ((struct sockaddr_un *)&ss)->sun_path;
		struct stat sb;

		/* a socket file left by an earlier run, never another file,
		 * nor a socket something still listens on (the control
		 * socket, another daemon's) */
		if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode)) {
			int p = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			bool live = p >= 0 &&
			    connect(p, (struct sockaddr *)&ss, sl) == 0;

			if (p >= 0)
				close(p);
			if (live) {
				r = -EADDRINUSE;
				goto fail;
			}
			unlink(path);
		}
		if ((h->unix_path = strdup(path)) == NULL) {
			r = -ENOMEM;
			goto fail;
		}
	} else {
		setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	if (bind(h->fd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(h->fd, 16) < 0) {
		r = -errno;
		free(h->unix_path);
		h->unix_path = NULL;
		goto fail;
	}
	h->listen_ev = event_new(base, h->fd, EV_READ | EV_PERSIST, listen_cb,
	    h);
	h->retry_ev = evtimer_new(base, retry_cb, h);
	if (h->listen_ev == NULL || h->retry_ev == NULL ||
	    event_priority_set(h->listen_ev, o->priority) < 0 ||
	    event_priority_set(h->retry_ev, o->priority) < 0 ||
	    event_add(h->listen_ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = h;
	return 0;
fail:
	export_http_free(h);
	return r;
}

struct export_http *
export_http_free(struct export_http *h)
{
	if (h == NULL)
		return NULL;
	while (h->conns)
		conn_free(h->conns);
	if (h->listen_ev)
		event_free(h->listen_ev);
	if (h->retry_ev)
		event_free(h->retry_ev);
	if (h->fd >= 0)
		close(h->fd);
	if (h->unix_path) {
		unlink(h->unix_path);
		free(h->unix_path);
	}
	free(h);
	return NULL;
}
