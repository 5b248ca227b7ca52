/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Binder transaction latency: binder/binder_transaction and
 * binder/binder_transaction_received records paired into latencies per
 * (caller process, callee process, code). No I/O: atrace.c hands the
 * records over in timestamp order.
 *
 * The kernel's semantics (drivers/android/binder.c, binder_trace.h):
 * every transaction, call or reply, has a debug_id of its own, traced by
 * binder_transaction in the sending thread and by
 * binder_transaction_received in the thread that reads it. A reply is a
 * binder_transaction with reply = 1 sent by the callee thread; the driver
 * takes the call it answers from the top of that thread's transaction
 * stack and sends the reply to the call's sending thread, which the record
 * names as to_thread (and its process as to_proc). So:
 *   send → received  pairs by debug_id (calls, two-way and one-way);
 *   call → reply     pairs a reply with the newest open two-way call of
 *                    the thread named by its to_thread, per thread stack.
 * A thread waiting for a reply only takes work from its own queue: the
 * calls it receives then are nested ones (a callee calling back), which it
 * serves and answers before its own reply can come. A new call from a
 * thread whose newest open call is not serving one means that call ended
 * without a reply record (a dead or failed reply): it is given up on
 * (abandoned). binder_command / binder_return are not used: they would
 * tell BR_DEAD_REPLY at once, but fire for every command and return word
 * (BR_NOOP, BR_TRANSACTION_COMPLETE, ...), several times the event rate
 * of the transactions themselves, for what the rule above finds at the
 * thread's next call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "trace/atrace_int.h"

#define BINDER_TF_ONE_WAY 0x01 /* uapi/linux/android/binder.h */
#define SENT_MAX 16384	       /* transactions sent, not yet received */
#define WAITS_MAX 4096	       /* threads waiting for a reply */
#define ROWS_MAX 4096	       /* (caller, callee, code) per window */
#define DEPTH 16	       /* open two-way calls per thread */
#define EXPIRE_NS (60ULL * 1000000000ULL)

struct bkey {
	int32_t from, to;
	uint32_t code;
};

struct sent_ent {
	uint64_t h;
	int32_t debug_id;
	bool reply, twoway;
	uint64_t ts;
	struct bkey key;
};

struct call {
	uint64_t ts;
	struct bkey key;
	uint32_t serving; /* nested calls received, not yet answered */
};

struct wait_ent {
	uint64_t h;
	int32_t tid;
	uint32_t depth;
	struct call stack[DEPTH];
};

struct row_ent {
	uint64_t h;
	struct window_trace_btxn r;
};

struct binder {
	struct tab sent, waits, rows;
	/* transactions whose key found the row table full: summed here,
	 * in btxn_rest's counts; btxn_other counts rows, not these */
	struct window_trace_btxn rest;
	uint64_t last_ts;
	/* the window's scalar figures, as in struct window_trace */
	uint64_t orphan_replies, orphan_recv, lost, exit, stale, abandoned,
	    expired, full;
};

int
binder_new(struct binder **ret)
{
	struct binder *b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -ENOMEM;
	b->sent.esz = sizeof(struct sent_ent);
	b->sent.max = SENT_MAX;
	b->waits.esz = sizeof(struct wait_ent);
	b->waits.max = WAITS_MAX;
	b->rows.esz = sizeof(struct row_ent);
	b->rows.max = ROWS_MAX;
	*ret = b;
	return 0;
}

struct binder *
binder_free(struct binder *b)
{
	if (b == NULL)
		return NULL;
	atab_release(&b->sent);
	atab_release(&b->waits);
	atab_release(&b->rows);
	free(b);
	return NULL;
}

/* ---------------------------------------------------------- the tables */

static bool
row_eq(const void *e, const void *key)
{
	const struct window_trace_btxn *a = &((const struct row_ent *)e)->r;
	const struct bkey *k = key;

	return a->from_pid == k->from && a->to_pid == k->to &&
	    a->code == k->code;
}

static struct window_trace_btxn *
row_get(struct binder *b, const struct bkey *k)
{
	struct row_ent *e;
	bool fresh;

	e = atab_get(&b->rows,
	    atab_key(k->from, k->to, 4 + (int64_t)k->code, NULL), row_eq, k,
	    true, &fresh);
	if (e == NULL)
		return &b->rest;
	if (fresh) {
		e->r.from_pid = k->from;
		e->r.to_pid = k->to;
		e->r.code = k->code;
	}
	return &e->r;
}

static bool
sent_eq(const void *e, const void *key)
{
	return ((const struct sent_ent *)e)->debug_id == *(const int32_t *)key;
}

static struct sent_ent *
sent_get(struct binder *b, int32_t debug_id, bool add, bool *ret_new)
{
	return atab_get(&b->sent, atab_key(debug_id, 0, 5, NULL), sent_eq,
	    &debug_id, add, ret_new);
}

static bool
wait_eq(const void *e, const void *key)
{
	return ((const struct wait_ent *)e)->tid == *(const int32_t *)key;
}

static struct wait_ent *
wait_get(struct binder *b, int32_t tid, bool add)
{
	bool fresh;
	struct wait_ent *w;

	w = atab_get(&b->waits, atab_key(tid, 0, 6, NULL), wait_eq, &tid, add,
	    &fresh);
	if (w && fresh)
		w->tid = tid;
	return w;
}

static void
hist_note(uint32_t hist[VITALS_TRACE_BTXN_SLOTS], uint64_t *sum, uint64_t *max,
    uint64_t ns)
{
	window_btxn_hist_add(hist, ns);
	*sum += ns;
	if (ns > *max)
		*max = ns;
}

/* A two-way call given up on: its row says so, *reason why. */
static void
give_up(struct binder *b, const struct call *c, uint64_t *reason)
{
	row_get(b, &c->key)->unreplied++;
	(*reason)++;
}

/* ------------------------------------------------------------- records */

void
binder_txn(struct binder *b, const struct ftrace_rec *r, int32_t tgid)
{
	struct window_trace_btxn *row;
	struct sent_ent *s;
	struct wait_ent *w;
	struct bkey key;
	bool fresh, oneway;

	if (r->ts > b->last_ts)
		b->last_ts = r->ts;
	if (r->u.txn.reply) {
		uint32_t i;

		/* for its received: known, not an orphan */
		if ((s = sent_get(b, r->u.txn.debug_id, true, &fresh)) !=
		    NULL) {
			memset(&s->key, 0, sizeof(s->key));
			s->debug_id = r->u.txn.debug_id;
			s->reply = true;
			s->twoway = false;
			s->ts = r->ts;
		}
		/* the replying thread has answered a nested call it served */
		if ((w = wait_get(b, r->tid, false)) != NULL && w->depth &&
		    w->stack[w->depth - 1].serving)
			w->stack[w->depth - 1].serving--;
		w = wait_get(b, r->u.txn.to_thread, false);
		/* the newest open call made to the replier's process */
		for (i = w ? w->depth : 0; i > 0; i--)
			if (tgid <= 0 || w->stack[i - 1].key.to == tgid)
				break;
		if (i == 0) {
			b->orphan_replies++;
			return;
		}
		/* calls above it are a reused tid's, or lost their reply */
		while (w->depth > i)
			give_up(b, &w->stack[--w->depth], &b->stale);
		w->depth--;
		row = row_get(b, &w->stack[w->depth].key);
		row->replied++;
		hist_note(row->reply_hist, &row->reply_sum_ns,
		    &row->reply_max_ns,
		    r->ts >= w->stack[w->depth].ts ?
			r->ts - w->stack[w->depth].ts :
			0);
		if (w->depth == 0)
			atab_del(&b->waits, w);
		return;
	}

	key.from = tgid > 0 ? tgid : r->tid;
	key.to = r->u.txn.to_proc;
	key.code = r->u.txn.code;
	oneway = (r->u.txn.flags & BINDER_TF_ONE_WAY) != 0;
	row = row_get(b, &key);
	if (oneway)
		row->oneway++;
	else
		row->twoway++;
	if ((s = sent_get(b, r->u.txn.debug_id, true, &fresh)) == NULL) {
		row->unreceived++;
		b->full++;
	} else {
		if (!fresh && !s->reply) { /* its received never came */
			row_get(b, &s->key)->unreceived++;
			b->orphan_recv++;
		}
		s->debug_id = r->u.txn.debug_id;
		s->reply = false;
		s->twoway = !oneway;
		s->ts = r->ts;
		s->key = key;
	}
	if (oneway)
		return;
	if ((w = wait_get(b, r->tid, true)) == NULL) {
		row_get(b, &key)->unreplied++;
		b->full++;
		return;
	}
	/* open calls of another process: the tid was reused */
	while (w->depth && w->stack[w->depth - 1].key.from != key.from)
		give_up(b, &w->stack[--w->depth], &b->stale);
	/* a call not serving a nested one ended without a reply record */
	if (w->depth && w->stack[w->depth - 1].serving == 0)
		give_up(b, &w->stack[--w->depth], &b->abandoned);
	if (w->depth == DEPTH) {
		row_get(b, &key)->unreplied++;
		b->full++;
		return;
	}
	w->stack[w->depth].ts = r->ts;
	w->stack[w->depth].key = key;
	w->stack[w->depth].serving = 0;
	w->depth++;
}

void
binder_recv(struct binder *b, const struct ftrace_rec *r)
{
	struct window_trace_btxn *row;
	struct sent_ent *s;
	struct wait_ent *w;

	if (r->ts > b->last_ts)
		b->last_ts = r->ts;
	if ((s = sent_get(b, r->u.recv.debug_id, false, NULL)) == NULL) {
		b->orphan_recv++;
		return;
	}
	if (!s->reply) {
		row = row_get(b, &s->key);
		row->received++;
		hist_note(row->recv_hist, &row->recv_sum_ns, &row->recv_max_ns,
		    r->ts >= s->ts ? r->ts - s->ts : 0);
		/* a waiting thread that receives a call serves a nested one */
		if (s->twoway && (w = wait_get(b, r->tid, false)) != NULL &&
		    w->depth)
			w->stack[w->depth - 1].serving++;
	}
	atab_del(&b->sent, s);
}

/* The thread exited: its open calls will never see their reply. */
void
binder_exit(struct binder *b, int32_t tid)
{
	struct wait_ent *w;

	if ((w = wait_get(b, tid, false)) == NULL)
		return;
	while (w->depth)
		give_up(b, &w->stack[--w->depth], &b->exit);
	atab_del(&b->waits, w);
}

/* Events were lost: any reply or received may be among them. */
void
binder_lost(struct binder *b)
{
	size_t i;

	for (i = 0; i < b->waits.cap; i++) {
		struct wait_ent *w = atab_at(&b->waits, i);

		if (!w->h)
			continue;
		while (w->depth)
			give_up(b, &w->stack[--w->depth], &b->lost);
	}
	for (i = 0; i < b->sent.cap; i++) {
		struct sent_ent *s = atab_at(&b->sent, i);

		if (s->h && !s->reply) {
			row_get(b, &s->key)->unreceived++;
			b->lost++;
		}
	}
	atab_clear(&b->waits);
	atab_clear(&b->sent);
}

size_t
binder_open_calls(const struct binder *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->waits.cap; i++) {
		const struct wait_ent *w = atab_at(&b->waits, i);

		if (w->h)
			n += w->depth;
	}
	return n;
}

/* Open entries older than EXPIRE_NS are given up on. */
static void
expire(struct binder *b)
{
	uint64_t cut;
	size_t i;

	if (b->last_ts <= EXPIRE_NS)
		return;
	cut = b->last_ts - EXPIRE_NS;
	i = 0;
	while (i < b->sent.cap) {
		struct sent_ent *s = atab_at(&b->sent, i);

		if (s->h && s->ts < cut) {
			if (!s->reply) {
				row_get(b, &s->key)->unreceived++;
				b->expired++;
			}
			atab_del(&b->sent, s);
			continue; /* the slot holds another entry now */
		}
		i++;
	}
	i = 0;
	while (i < b->waits.cap) {
		struct wait_ent *w = atab_at(&b->waits, i);
		uint32_t k, n = 0;

		if (!w->h) {
			i++;
			continue;
		}
		for (k = 0; k < w->depth; k++) {
			if (w->stack[k].ts < cut)
				give_up(b, &w->stack[k], &b->expired);
			else
				w->stack[n++] = w->stack[k];
		}
		w->depth = n;
		if (n == 0) {
			atab_del(&b->waits, w);
			continue;
		}
		i++;
	}
}

/*
 * The figures since the last call into wt; open calls stay open (a call
 * is counted in the window that sent it, its latency in the one that
 * paired it).
 */
void
binder_window(struct binder *b, struct window_trace *wt)
{
	struct window_trace_btxn *all;
	size_t i, k = 0;

	expire(b);
	wt->btxn_orphan_replies += b->orphan_replies;
	wt->btxn_orphan_recv += b->orphan_recv;
	wt->btxn_lost += b->lost;
	wt->btxn_exit += b->exit;
	wt->btxn_stale += b->stale;
	wt->btxn_abandoned += b->abandoned;
	wt->btxn_expired += b->expired;
	wt->btxn_full += b->full;
	wt->btxn_open = binder_open_calls(b);
	if ((all = malloc((b->rows.n + 1) * sizeof(*all))) != NULL) {
		for (i = 0; i < b->rows.cap; i++) {
			const struct row_ent *e = atab_at(&b->rows, i);

			if (e->h)
				all[k++] = e->r;
		}
		window_btxn_add(&wt->btxn_rest, &b->rest);
		window_btxn_keep(wt, all, k, wt->btxn_other);
		free(all);
	} else {
		/* out of memory: every row into the rest, counted */
		for (i = 0; i < b->rows.cap; i++) {
			const struct row_ent *e = atab_at(&b->rows, i);

			if (e->h)
				window_btxn_add(&wt->btxn_rest, &e->r);
		}
		window_btxn_add(&wt->btxn_rest, &b->rest);
		wt->btxn_other += (uint32_t)b->rows.n;
	}
	atab_clear(&b->rows);
	memset(&b->rest, 0, sizeof(b->rest));
	b->orphan_replies = b->orphan_recv = b->lost = b->exit = 0;
	b->stale = b->abandoned = b->expired = b->full = 0;
}
