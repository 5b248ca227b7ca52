/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control plane's connections and their roles, on the socket that
 * control_sock.c provides.
 *
 * Every connection is a non-blocking bufferevent on the daemon's one loop,
 * at the lowest event priority, so the sampling timer always runs first.
 * Bounds, each with what happens at it:
 *  - input: one frame (header + max_frame); a header announcing 0 or more
 *    than max_frame closes the connection before anything is allocated;
 *  - pipelining: CONTROL_PIPELINE requests not yet answered; reading stops
 *    until the oldest is answered. Answers leave in request order;
 *  - output: max_output queued bytes; a client that lets more pile up is
 *    closed (overflow_closed), as is one that takes no bytes for
 *    idle_timeout_ms (the write timeout);
 *  - idle: no request for idle_timeout_ms closes (idle_closed);
 *  - a frame begun must end within min(idle_timeout_ms, CONTROL_FRAME_MS)
 *    of its first byte, however steadily its bytes trickle in (the idle
 *    timer restarts at each byte): closed (idle_closed);
 *  - connections: max_conns, cut at start to what RLIMIT_NOFILE leaves
 *    after CONTROL_FD_RESERVE; accept pauses at the cap and on
 *    EMFILE/ENFILE and resumes when a connection closes (and on a timer
 *    after EMFILE);
 *  - per uid: max_conns / 2 (at least 1) for any uid but the trusted ones;
 *    one more is answered BUSY and closed (cap_refused);
 *  - trusted callers together: trusted_max (trusted_max_connections,
 *    default max_conns - max_conns / 4, at most max_conns - 1); one more
 *    is answered BUSY and closed, so that the rest of the slots stay a
 *    reserve for readers: a trusted caller holding idle connections does
 *    not shut them out until its idle timeout;
 *  - no role: answered PERMISSION_DENIED at once, never read, closed.
 *    Refused connections leave their slot as soon as the answer is out;
 *    up to CONTROL_LINGER_MAX of them keep their descriptor, write side
 *    shut, for CONTROL_LINGER_MS (or until the client goes), so a client
 *    that sends its request after the answer reads the answer, not EPIPE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "core/loopstat.h"
#include "frame.h"
#include "config/config.h"
#include "control/control.h"
#include "core/log.h"
#include "core/util.h"
#include "rpc/rpc.h"

/* config.c requires max_output_bytes >= CONTROL_PIPELINE * (max_frame
 * + 4) with its own copy (CONFIG_PIPELINE): keep the two equal. */
#define CONTROL_PIPELINE 4	/* requests per connection not yet answered */
#define CONTROL_BUDGET 4	/* requests handled per connection per turn */
#define CONTROL_ACCEPT_BURST 32 /* accepts per wake-up */
#define CONTROL_RETRY_MS 1000	/* accept retry after EMFILE / ENFILE */
#define CONTROL_FRAME_MS 5000	/* a frame begun must end within this */
#define CONTROL_FD_RESERVE 128	/* fds for sysfiles, scans, BPF, SQLite */
#define CONTROL_LINGER_MS 1000	/* a refused connection, half closed */
#define CONTROL_LINGER_MAX 16	/* refused connections lingering at once */

struct slot {
	uint8_t *frame; /* NULL when ready: the answer failed, close */
	size_t len;
	bool ready;
	bool close_after;
};

struct conn {
	TAILQ_ENTRY(conn) entry;
	struct control *ctl;
	struct bufferevent *bev;
	uint64_t id;
	uint32_t uid, gid;
	pid_t pid;
	enum control_role role;
	struct slot slot[CONTROL_PIPELINE];
	uint32_t head_tag; /* tag of the oldest unanswered request */
	uint32_t nslots;   /* requests not yet answered */
	bool closing;	   /* read no more: flush the answers, then close */
	bool eof;	   /* the client has sent all it will send */
	bool refused;	   /* answered at accept, never read: then close */
	bool linger;	   /* refused, answered, write side shut: not counted */
	struct event *frame_ev; /* the frame begun must end by then */
};

TAILQ_HEAD(conn_list, conn);

struct control {
	struct event_base *base;
	struct control_hooks hooks;
	struct query *q;
	struct config roles; /* the role keys only */
	bool roles_set;	     /* platform_roles ran: the socket is known */
	unsigned max_conns;
	unsigned uid_cap;     /* connections per uid, trusted uids aside */
	unsigned trusted_max; /* trusted connections together */
	unsigned lingering;
	uint32_t max_frame, max_output;
	struct timeval idle, frame_tv;
	int pri;
	struct control_sock sock;
	struct event *listen_ev, *retry_ev;
	bool paused, stopping;
	struct conn_list conns;
	uint64_t next_id;
	struct control_stats st;
	struct control_stats snap; /* what the current answer sees */
	struct rpc_cache cache;
};

static int conn_process(struct conn *c);

/* ------------------------------------------------------------- roles */

static bool
id_in(const struct id_list *l, uint32_t id)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (l->id[i] == id)
			return true;
	return false;
}

/*
 * Root, the system uid (Android's AID_SYSTEM: system_server) and the
 * trusted lists are trusted; the daemon's own uid, the shell uid and the
 * reader lists read. Trusted implies reader. gid is the
 * peer's primary group as SO_PEERCRED reports it.
 */
enum control_role
control_role(const struct config *cfg, uint32_t uid, uint32_t gid,
    uint32_t own_uid)
{
	if (uid == 0 ||
	    (cfg->system_uid != VITALS_NO_UID && uid == cfg->system_uid) ||
	    id_in(&cfg->trusted_uids, uid) || id_in(&cfg->trusted_gids, gid))
		return ROLE_TRUSTED;
	if (uid == own_uid ||
	    (cfg->shell_uid != VITALS_NO_UID && uid == cfg->shell_uid) ||
	    id_in(&cfg->reader_uids, uid) || id_in(&cfg->reader_gids, gid))
		return ROLE_READER;
	return ROLE_NONE;
}

/*
 * Android's AIDs (system 1000, shell 2000) are default roles only on
 * Android: an Android build, or a socket handed over by Android init. On a
 * host those uids are login users, so unless the configuration names
 * them they get no role there.
 */
static void
platform_roles(struct control *ctl, const struct config *cfg)
{
#ifdef __ANDROID__
	bool android = true;
#else
	bool android = ctl->sock.android_init;
#endif

	if (!android && !cfg->system_uid_set)
		ctl->roles.system_uid = VITALS_NO_UID;
	if (!android && !cfg->shell_uid_set)
		ctl->roles.shell_uid = VITALS_NO_UID;
	if (ctl->roles.system_uid == VITALS_NO_UID)
		log_info("roles: no system uid%s",
		    android || cfg->system_uid_set ?
			"" :
			" (not on Android; system_uid names one)");
	else
		log_info("roles: system uid %u trusted", ctl->roles.system_uid);
	if (ctl->roles.shell_uid == VITALS_NO_UID)
		log_info("roles: no shell uid%s",
		    android || cfg->shell_uid_set ?
			"" :
			" (not on Android; shell_uid names one)");
	else
		log_info("roles: shell uid %u reads", ctl->roles.shell_uid);
}

/* The roles of cfg; connections accepted from now on get them, those
 * open keep the role they were given at accept. */
static void
roles_of(struct control *ctl, const struct config *cfg)
{
	ctl->roles.trusted_uids = cfg->trusted_uids;
	ctl->roles.trusted_gids = cfg->trusted_gids;
	ctl->roles.reader_uids = cfg->reader_uids;
	ctl->roles.reader_gids = cfg->reader_gids;
	ctl->roles.shell_uid = cfg->shell_uid;
	ctl->roles.system_uid = cfg->system_uid;
}

void
control_set_roles(struct control *ctl, const struct config *cfg)
{
	roles_of(ctl, cfg);
	if (ctl->roles_set)
		platform_roles(ctl, cfg);
}

static const char *
role_name(enum control_role r)
{
	switch (r) {
	case ROLE_TRUSTED:
		return "trusted";
	case ROLE_READER:
		return "reader";
	case ROLE_NONE:
		break;
	}
	return "none";
}

/* ------------------------------------------------------------ accept */

static void
accept_pause(struct control *ctl, bool retry)
{
	if (!ctl->paused) {
		event_del(ctl->listen_ev);
		ctl->paused = true;
		ctl->st.accept_paused++;
	}
	if (retry) {
		struct timeval tv = { CONTROL_RETRY_MS / 1000,
			(CONTROL_RETRY_MS % 1000) * 1000 };

		evtimer_add(ctl->retry_ev, &tv);
	}
}

static void
accept_resume(struct control *ctl)
{
	if (!ctl->paused || ctl->stopping ||
	    ctl->st.connections >= ctl->max_conns)
		return;
	evtimer_del(ctl->retry_ev);
	event_add(ctl->listen_ev, NULL);
	ctl->paused = false;
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control *ctl = arg;

	(void)fd;
	(void)what;
	accept_resume(ctl);
}

/* ------------------------------------------------------- connections */

static void
frame_cleanup(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)data);
}

static void
conn_free(struct conn *c)
{
	struct control *ctl = c->ctl;
	unsigned i;

	if (ctl->q)
		query_cancel(ctl->q, c->id);
	for (i = 0; i < CONTROL_PIPELINE; i++)
		free(c->slot[i].frame);
	if (c->frame_ev)
		event_free(c->frame_ev);
	bufferevent_free(c->bev);
	TAILQ_REMOVE(&ctl->conns, c, entry);
	if (c->linger)
		ctl->lingering--;
	else
		ctl->st.connections--;
	free(c);
	accept_resume(ctl);
}

static struct conn *
conn_find(struct control *ctl, uint64_t id)
{
	struct conn *c;

	TAILQ_FOREACH(c, &ctl->conns, entry)
		if (c->id == id)
			return c;
	return NULL;
}

/*
 * Everything answered and written on a closing connection: close it. A
 * refused one lingers instead, when there is room: out of the count
 * (its slot free again), write side shut (the client reads its answer,
 * then EOF), whatever it sends discarded, until it goes or
 * CONTROL_LINGER_MS. 0: lingering; -1: freed.
 */
static int
conn_done(struct conn *c)
{
	struct control *ctl = c->ctl;
	struct timeval tv = { CONTROL_LINGER_MS / 1000,
		(CONTROL_LINGER_MS % 1000) * 1000 };

	if (!c->refused || c->linger || ctl->stopping ||
	    ctl->lingering >= CONTROL_LINGER_MAX ||
	    shutdown(bufferevent_getfd(c->bev), SHUT_WR) < 0) {
		conn_free(c);
		return -1;
	}
	c->linger = true;
	ctl->lingering++;
	ctl->st.connections--;
	bufferevent_set_timeouts(c->bev, &tv, &tv);
	bufferevent_enable(c->bev, EV_READ);
	accept_resume(ctl);
	return 0;
}

/* Stop reading while the pipeline is full or the connection is closing. */
static void
conn_update_read(struct conn *c)
{
	if (c->closing || c->eof || c->nslots >= CONTROL_PIPELINE)
		bufferevent_disable(c->bev, EV_READ);
	else
		bufferevent_enable(c->bev, EV_READ);
}

/* Answers that are ready, in request order, to the output. -1: freed. */
static int
conn_flush(struct conn *c)
{
	struct control *ctl = c->ctl;
	struct evbuffer *out = bufferevent_get_output(c->bev);

	while (c->nslots > 0) {
		struct slot *s = &c->slot[c->head_tag % CONTROL_PIPELINE];
		bool close_after = s->close_after;

		if (!s->ready)
			break;
		if (s->frame == NULL ||
		    evbuffer_add_reference(out, s->frame, s->len, frame_cleanup,
			NULL) < 0) {
			conn_free(c);
			return -1;
		}
		memset(s, 0, sizeof(*s));
		c->head_tag++;
		c->nslots--;
		if (close_after) {
			c->closing = true;
			break;
		}
	}
	if (evbuffer_get_length(out) > ctl->max_output) {
		/* The client sends and does not read: its answers pile up. */
		ctl->st.overflow_closed++;
		log_debug("control: pid %d uid %u closed: %zu answer bytes "
			  "not read",
		    (int)c->pid, c->uid, evbuffer_get_length(out));
		conn_free(c);
		return -1;
	}
	if (c->closing && c->nslots == 0 && evbuffer_get_length(out) == 0)
		return conn_done(c);
	return 0;
}

static void
fill_ctx(struct control *ctl, struct vitalsd_info *info, struct rpc_ctx *ctx)
{
	memset(info, 0, sizeof(*info));
	if (ctl->hooks.get_info)
		ctl->hooks.get_info(ctl->hooks.info_arg, info);
	control_get_stats(ctl, &ctl->snap);
	ctx->info = info;
	ctx->stats = &ctl->snap;
	ctx->mod = ctl->hooks.mod;
	ctx->cache = &ctl->cache;
	ctx->max_frame = ctl->max_frame;
	ctx->now_wall_ns = clock_ns(CLOCK_REALTIME);
}

/* Handle one request of len payload bytes at the input's head. 0, or -1
 * when the connection was freed. */
static int
conn_request(struct conn *c, uint32_t len)
{
	struct control *ctl = c->ctl;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	uint32_t tag = c->head_tag + c->nslots;
	struct slot *s = &c->slot[tag % CONTROL_PIPELINE];
	struct vitalsd_info info;
	struct rpc_result res;
	struct rpc_ctx ctx;
	uint8_t *p;
	int r;

	if ((p = evbuffer_pullup(in, VITALS_FRAME_HDR + (ssize_t)len)) ==
	    NULL) {
		conn_free(c);
		return -1;
	}
	ctl->st.requests++;
	fill_ctx(ctl, &info, &ctx);
	ctx.peer_uid = c->uid; /* heapprofd session records */
	r = rpc_handle(&ctx, c->role, p + VITALS_FRAME_HDR, len, &res);
	evbuffer_drain(in, VITALS_FRAME_HDR + (size_t)len);
	if (r < 0) {
		log_warnx("control: answer to pid %d: %s", (int)c->pid,
		    strerror(-r));
		conn_free(c);
		return -1;
	}
	if (res.denied)
		ctl->st.denied++;
	if (res.bad_frame)
		ctl->st.bad_frames++;
	c->nslots++;
	memset(s, 0, sizeof(*s));
	if (res.verdict == RPC_QUERY && ctl->q &&
	    query_cached(ctl->q, &res.query, &res.frame, &res.len) > 0) {
		res.verdict = RPC_ANSWER; /* the same read, under 1 s ago */
	} else if (res.verdict == RPC_QUERY) {
		r = ctl->q ?
		    query_submit_uid(ctl->q, c->id, c->uid, tag, &res.query) :
		    -ENODEV;
		if (r == 0)
			return 0; /* the answer comes from the query thread */
		if (r == -EBUSY)
			ctl->st.queries_busy++;
		r = rpc_error_frame(res.query.id,
		    r == -EBUSY	     ? RPC_BUSY :
			r == -ENODEV ? RPC_UNAVAILABLE :
				       RPC_ERROR,
		    r == -EBUSY	     ? "too many queries queued: retry later" :
			r == -ENODEV ? "no window store: windows are kept in "
				       "memory only" :
				       "query not queued",
		    &res.frame, &res.len);
		if (r < 0)
			res.frame = NULL;
	}
	s->frame = res.frame;
	s->len = res.len;
	s->ready = true;
	s->close_after = res.verdict == RPC_ANSWER_CLOSE;
	return conn_flush(c);
}

/* Handle the whole requests buffered, within the budget. 0, or -1 when
 * the connection was freed. */
static int
conn_process(struct conn *c)
{
	struct control *ctl = c->ctl;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	unsigned budget = CONTROL_BUDGET;
	uint8_t hdr[VITALS_FRAME_HDR];
	bool more = false, partial = false;
	uint32_t len;
	size_t avail;
	int r;

	while (!c->closing && c->nslots < CONTROL_PIPELINE) {
		avail = evbuffer_get_length(in);
		if (avail >= VITALS_FRAME_HDR)
			evbuffer_copyout(in, hdr, sizeof(hdr));
		if ((r = rpc_frame_next(hdr, avail, ctl->max_frame, &len)) ==
		    -EAGAIN) {
			partial = avail > 0;
			break;
		}
		if (r < 0) {
			/* Length 0 or above the limit: no way to resync. */
			ctl->st.bad_frames++;
			log_debug("control: pid %d uid %u closed: bad frame "
				  "header (%s)",
			    (int)c->pid, c->uid, strerror(-r));
			conn_free(c);
			return -1;
		}
		if (budget-- == 0) {
			/* Others' turn: continue from the loop, later. */
			bufferevent_trigger(c->bev, EV_READ,
			    BEV_TRIG_IGNORE_WATERMARKS |
				BEV_TRIG_DEFER_CALLBACKS);
			more = true;
			break;
		}
		/* A whole frame: the deadline starts again at the next. */
		evtimer_del(c->frame_ev);
		if (conn_request(c, len) < 0)
			return -1;
	}
	/* Bytes of a frame begun, and room to read the rest: the client's
	 * to finish in time, however slowly they trickle. */
	if (partial && !c->closing && !c->eof) {
		if (!evtimer_pending(c->frame_ev, NULL))
			evtimer_add(c->frame_ev, &ctl->frame_tv);
	} else {
		evtimer_del(c->frame_ev);
	}
	if (c->eof && !c->closing && !more && c->nslots < CONTROL_PIPELINE) {
		/* Nothing more will come: what is left is a frame cut short.
		 * Answer what was asked, then close. */
		if (evbuffer_get_length(in) > 0)
			ctl->st.bad_frames++;
		c->closing = true;
	}
	conn_update_read(c);
	if (c->closing && c->nslots == 0 &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		return conn_done(c);
	return 0;
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	int64_t t0;

	if (c->refused) {
		/* Lingering: what it sends is not read, only dropped. */
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	t0 = loopstat_begin();
	(void)conn_process(c);
	loopstat_end("request", t0);
}

static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->closing && c->nslots == 0 &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		(void)conn_done(c);
}

/* The frame begun did not end in time: a client trickling its bytes. */
static void
frame_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	c->ctl->st.idle_closed++;
	log_debug("control: pid %d uid %u closed: frame not completed in "
		  "%ld ms",
	    (int)c->pid, c->uid,
	    (long)(c->ctl->frame_tv.tv_sec * 1000 +
		c->ctl->frame_tv.tv_usec / 1000));
	conn_free(c);
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct control *ctl = c->ctl;

	if (c->refused) {
		/* It went, or its answer or its linger timed out. */
		conn_free(c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		if ((what & BEV_EVENT_READING) && c->nslots > 0) {
			/* Quiet because it waits for the query thread. */
			bufferevent_enable(bev, EV_READ);
			return;
		}
		if (what & BEV_EVENT_WRITING)
			ctl->st.overflow_closed++;
		else
			ctl->st.idle_closed++;
		log_debug("control: pid %d uid %u closed: %s", (int)c->pid,
		    c->uid,
		    what & BEV_EVENT_WRITING ? "answers not read" : "idle");
		conn_free(c);
		return;
	}
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
		/* A client may shut down its side and still read. */
		c->eof = true;
		(void)conn_process(c);
		return;
	}
	conn_free(c);
}

/* Connections of uid now open (lingering ones aside). */
static unsigned
uid_conns(struct control *ctl, uint32_t uid)
{
	struct conn *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &ctl->conns, entry)
		if (c->uid == uid && !c->linger)
			n++;
	return n;
}

/* Trusted connections now open, refused ones aside. */
static unsigned
trusted_conns(struct control *ctl)
{
	struct conn *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &ctl->conns, entry)
		if (c->role == ROLE_TRUSTED && !c->linger && !c->refused)
			n++;
	return n;
}

/* Answer c at once, id 0, and close it once that is written: nothing it
 * sends is read. */
static void
conn_refuse(struct conn *c, enum rpc_status st, const char *msg)
{
	struct slot *s = &c->slot[0];

	c->refused = true;
	bufferevent_disable(c->bev, EV_READ);
	if (rpc_error_frame(0, st, msg, &s->frame, &s->len) < 0)
		s->frame = NULL; /* conn_flush closes it */
	s->ready = true;
	s->close_after = true;
	c->head_tag = 0;
	c->nslots = 1;
	(void)conn_flush(c);
}

static void
conn_new(struct control *ctl, int fd)
{
	struct ucred cr = { .pid = 0,
		.uid = VITALS_NO_UID,
		.gid = VITALS_NO_UID };
	socklen_t l = sizeof(cr);
	struct conn *c;
	char msg[96];
	unsigned n;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->ctl = ctl;
	c->id = ++ctl->next_id;
	/* No credentials, no role: the answer will say so. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0)
		c->role = control_role(&ctl->roles, cr.uid, cr.gid, geteuid());
	c->uid = cr.uid;
	c->gid = cr.gid;
	c->pid = cr.pid;
	c->bev = bufferevent_socket_new(ctl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		close(fd);
		free(c);
		return;
	}
	if ((c->frame_ev = evtimer_new(ctl->base, frame_cb, c)) == NULL ||
	    event_priority_set(c->frame_ev, ctl->pri) < 0) {
		if (c->frame_ev)
			event_free(c->frame_ev);
		bufferevent_free(c->bev);
		free(c);
		return;
	}
	bufferevent_priority_set(c->bev, ctl->pri);
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0,
	    VITALS_FRAME_HDR + (size_t)ctl->max_frame);
	bufferevent_set_timeouts(c->bev, &ctl->idle, &ctl->idle);
	TAILQ_INSERT_TAIL(&ctl->conns, c, entry);
	ctl->st.connections++;
	ctl->st.accepted++;
	log_debug("control: connection %llu from pid %d uid %u gid %u: %s",
	    (unsigned long long)c->id, (int)c->pid, c->uid, c->gid,
	    role_name(c->role));
	if (c->role == ROLE_NONE) {
		/* Nothing more for a stranger: the answer, then close. It
		 * holds no slot while it sends, or does not. */
		ctl->st.denied++;
		bufferevent_enable(c->bev, EV_WRITE);
		conn_refuse(c, RPC_PERMISSION_DENIED, "reader role required");
		return;
	}
	if (c->role != ROLE_TRUSTED &&
	    (n = uid_conns(ctl, c->uid)) > ctl->uid_cap) {
		/* One uid does not take every slot from the others. */
		log_debug("control: pid %d uid %u refused: %u connections "
			  "of that uid",
		    (int)c->pid, c->uid, n - 1);
		snprintf(msg, sizeof(msg),
		    "too many connections from uid %u "
		    "(at most %u): retry later",
		    c->uid, ctl->uid_cap);
		ctl->st.cap_refused++;
		bufferevent_enable(c->bev, EV_WRITE);
		conn_refuse(c, RPC_BUSY, msg);
		return;
	}
	if (c->role == ROLE_TRUSTED &&
	    (n = trusted_conns(ctl)) > ctl->trusted_max) {
		/* Trusted, not unbounded: the reserve stays for readers. */
		log_debug("control: pid %d uid %u refused: %u trusted "
			  "connections",
		    (int)c->pid, c->uid, n - 1);
		snprintf(msg, sizeof(msg),
		    "too many trusted connections (at "
		    "most %u): retry later",
		    ctl->trusted_max);
		ctl->st.cap_refused++;
		bufferevent_enable(c->bev, EV_WRITE);
		conn_refuse(c, RPC_BUSY, msg);
		return;
	}
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/* max_conns within RLIMIT_NOFILE, CONTROL_FD_RESERVE kept for the rest of
 * the daemon (half the limit when it is that small). Logged when cut. */
static unsigned
conns_within_nofile(unsigned max_conns)
{
	struct rlimit rl;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return max_conns;
	room = rl.rlim_cur > 2 * CONTROL_FD_RESERVE ?
	    rl.rlim_cur - CONTROL_FD_RESERVE :
	    rl.rlim_cur / 2;
	if (room < 1)
		room = 1;
	if (max_conns <= room)
		return max_conns;
	log_warnx("control: max_connections %u cut to %llu: RLIMIT_NOFILE "
		  "is %llu, %u descriptors kept for the rest of the daemon",
	    max_conns, (unsigned long long)room,
	    (unsigned long long)rl.rlim_cur,
	    (unsigned)(rl.rlim_cur > 2 * CONTROL_FD_RESERVE ?
		    CONTROL_FD_RESERVE :
		    rl.rlim_cur - room));
	return (unsigned)room;
}

static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct control *ctl = arg;
	unsigned i;
	int fd;

	(void)what;
	for (i = 0; i < CONTROL_ACCEPT_BURST; i++) {
		if (ctl->st.connections >= ctl->max_conns) {
			accept_pause(ctl, false);
			return;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_new(ctl, fd);
			continue;
		}
		switch (errno) {
		case EINTR:
		case ECONNABORTED:
			continue;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			/* Still readable: without a pause, a busy loop. */
			log_warn("control: accept paused");
			accept_pause(ctl, true);
			return;
		default:
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("control: accept");
			return;
		}
	}
}

/* An answer from the query thread; the connection may be gone. */
static void
query_done(uint64_t conn_id, uint32_t tag, uint8_t *frame, size_t len,
    void *arg)
{
	struct control *ctl = arg;
	struct conn *c = conn_find(ctl, conn_id);
	struct slot *s;

	if (c == NULL || tag - c->head_tag >= c->nslots) {
		free(frame);
		return;
	}
	s = &c->slot[tag % CONTROL_PIPELINE];
	s->frame = frame;
	s->len = len;
	s->ready = true;
	if (conn_flush(c) < 0)
		return;
	(void)conn_process(c);
}

/* ------------------------------------------------------------ public */

int
control_new(struct event_base *base, const struct config *cfg,
    const struct control_hooks *hooks, struct store *store,
    struct control **ret)
{
	struct control *ctl;
	int r;

	if ((ctl = calloc(1, sizeof(*ctl))) == NULL)
		return -ENOMEM;
	ctl->sock.fd = -1;
	TAILQ_INIT(&ctl->conns);
	ctl->base = base;
	if (hooks)
		ctl->hooks = *hooks;
	roles_of(ctl, cfg);
	ctl->max_conns = conns_within_nofile(
	    cfg->max_conns ? cfg->max_conns : 64);
	ctl->uid_cap = ctl->max_conns / 2 ? ctl->max_conns / 2 : 1;
	/* Default: a quarter kept for readers; never the last slot (when
	 * RLIMIT_NOFILE cut max_conns below the configured cap too). */
	ctl->trusted_max = cfg->trusted_max_conns ?
	    cfg->trusted_max_conns :
	    ctl->max_conns - ctl->max_conns / 4;
	if (ctl->trusted_max >= ctl->max_conns)
		ctl->trusted_max = ctl->max_conns > 1 ? ctl->max_conns - 1 : 1;
	ctl->max_frame = cfg->max_frame ? cfg->max_frame :
					  VITALS_FRAME_MAX_DEFAULT;
	/* A full pipeline of the largest answers is not an overflow. */
	ctl->max_output = CONTROL_PIPELINE *
	    (ctl->max_frame + VITALS_FRAME_HDR);
	if (cfg->max_output > ctl->max_output)
		ctl->max_output = cfg->max_output;
	ctl->idle.tv_sec = cfg->idle_timeout_ms / 1000;
	ctl->idle.tv_usec = (cfg->idle_timeout_ms % 1000) * 1000;
	if (cfg->idle_timeout_ms == 0)
		ctl->idle.tv_sec = 30;
	ctl->frame_tv = ctl->idle;
	if (ctl->idle.tv_sec * 1000 + ctl->idle.tv_usec / 1000 >
	    CONTROL_FRAME_MS) {
		ctl->frame_tv.tv_sec = CONTROL_FRAME_MS / 1000;
		ctl->frame_tv.tv_usec = (CONTROL_FRAME_MS % 1000) * 1000;
	}
	/* The lowest priority: sampling and the rest of the daemon first. */
	ctl->pri = event_base_get_npriorities(base) - 1;
	if ((r = control_sock_open(cfg, &ctl->sock)) < 0)
		goto fail;
	platform_roles(ctl, cfg);
	ctl->roles_set = true;
	ctl->listen_ev = event_new(base, ctl->sock.fd, EV_READ | EV_PERSIST,
	    accept_cb, ctl);
	ctl->retry_ev = evtimer_new(base, retry_cb, ctl);
	if (ctl->listen_ev == NULL || ctl->retry_ev == NULL ||
	    event_priority_set(ctl->listen_ev, ctl->pri) < 0 ||
	    event_priority_set(ctl->retry_ev, ctl->pri) < 0 ||
	    event_add(ctl->listen_ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if (store &&
	    (r = query_new_pool(base, store,
		 &(struct query_opts){ .threads = cfg->query_threads,
		     .queue_max = cfg->query_queue,
		     .uid_queue = cfg->query_uid_queue,
		     .nice_set = true,
		     .nice = (int)cfg->query_nice,
		     .no_warm = !cfg->query_warm,
		     .idle_s = cfg->query_idle_s,
		     .max_frame = ctl->max_frame,
		     /* a read may hold what a connection's unread answers may */
		     .budget = cfg->query_budget ? cfg->query_budget :
						   ctl->max_output,
		     .proc_root = cfg->proc_root },
		 ctl->pri, query_done, ctl, &ctl->q)) < 0) {
		log_warnx("control: query thread: %s", strerror(-r));
		goto fail;
	}
	*ret = ctl;
	return 0;
fail:
	control_free(ctl);
	return r;
}

void
control_warm_wait(struct control *ctl, int64_t max_ns)
{
	if (ctl != NULL)
		query_warm_wait(ctl->q, max_ns);
}

/* Close every connection, abandon queued queries, remove the socket file
 * if it is still the one made here. */
struct control *
control_free(struct control *ctl)
{
	struct conn *c;

	if (ctl == NULL)
		return NULL;
	ctl->stopping = true;
	while ((c = TAILQ_FIRST(&ctl->conns)) != NULL)
		conn_free(c);
	ctl->q = query_free(ctl->q);
	if (ctl->listen_ev)
		event_free(ctl->listen_ev);
	if (ctl->retry_ev)
		event_free(ctl->retry_ev);
	control_sock_close(&ctl->sock);
	rpc_cache_release(&ctl->cache);
	free(ctl);
	return NULL;
}

void
control_get_stats(struct control *ctl, struct control_stats *ret)
{
	*ret = ctl->st;
	if (ctl->q)
		query_get_stats(ctl->q, ret);
}
