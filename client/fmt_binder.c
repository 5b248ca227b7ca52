/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals binder` as text: per window the binder transaction latency rows
 * (caller -> callee, code), send -> received and call -> reply, then what
 * could not be paired. A window that lost events says so first: its
 * figures are partial. JSON is the TraceList itself (json.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

/* A quantile as the daemon sends it (the slot's upper edge). */
static void
put_q(struct sbuf *o, const char *label, uint64_t ns, size_t nslots)
{
	if (nslots == 0)
		sbuf_printf(o, " %s -", label);
	else if (ns == UINT64_MAX)
		sbuf_printf(o, " %s >8.4s", label);
	else if (ns >= 1000000)
		sbuf_printf(o, " %s <=%llums", label,
		    (unsigned long long)(ns / 1000000));
	else
		sbuf_printf(o, " %s <=%lluus", label,
		    (unsigned long long)(ns / 1000));
}

static double
mean_ms(uint64_t sum, uint32_t n)
{
	return n ? (double)sum / 1e6 / (double)n : 0;
}

static void
put_row(struct sbuf *o, const Vitals__TraceBinderTxn *b, bool rest)
{
	if (rest)
		sbuf_puts(o, "  (other rows)");
	else
		sbuf_printf(o, "  %d -> %d code %u", b->from_pid, b->to_pid,
		    b->code);
	sbuf_printf(o, ": %u two-way, %u one-way\n", b->twoway, b->oneway);
	if (b->received) {
		sbuf_printf(o,
		    "    send->received %u: mean %.3f ms, max %.3f ms,",
		    b->received, mean_ms(b->recv_sum_ns, b->received),
		    (double)b->recv_max_ns / 1e6);
		put_q(o, "p50", b->recv_p50_ns, b->n_recv_hist);
		put_q(o, "p99", b->recv_p99_ns, b->n_recv_hist);
		sbuf_putc(o, '\n');
	}
	if (b->replied) {
		sbuf_printf(o, "    call->reply %u: mean %.3f ms, max %.3f ms,",
		    b->replied, mean_ms(b->reply_sum_ns, b->replied),
		    (double)b->reply_max_ns / 1e6);
		put_q(o, "p50", b->reply_p50_ns, b->n_reply_hist);
		put_q(o, "p99", b->reply_p99_ns, b->n_reply_hist);
		sbuf_putc(o, '\n');
	}
	if (b->unreceived || b->unreplied)
		sbuf_printf(o,
		    "    incomplete: %u never received, %u never replied\n",
		    b->unreceived, b->unreplied);
}

static void
fmt_binder_window(struct sbuf *o, const Vitals__TraceWindow *w)
{
	char from[40], to[40];
	size_t i;

	fmt_time(from, sizeof(from), w->wall_start_ns);
	fmt_time(to, sizeof(to), w->wall_end_ns);
	sbuf_printf(o, "Window %s .. %s: ftrace %s, %u rows\n", from,
	    strlen(to) > 11 && strncmp(from, to, 11) == 0 ? to + 11 : to,
	    w->state, (unsigned)w->n_binder_txn);
	if (w->lossy)
		sbuf_printf(o,
		    "  LOST EVENTS: %llu: the figures below are partial\n",
		    (unsigned long long)w->lost);
	for (i = 0; i < w->n_binder_txn; i++)
		put_row(o, w->binder_txn[i], false);
	if (w->binder_txn_rest)
		put_row(o, w->binder_txn_rest, true);
	if (w->binder_txn_rows_other)
		sbuf_printf(o, "  %u rows beyond the kept ones\n",
		    w->binder_txn_rows_other);
	sbuf_printf(o,
	    "  unpaired: %llu replies to no known call, %llu received of\n"
	    "    no known send; %llu calls open at the close\n",
	    (unsigned long long)w->binder_orphan_replies,
	    (unsigned long long)w->binder_orphan_received,
	    (unsigned long long)w->binder_open);
	sbuf_printf(o,
	    "  given up: lost %llu, caller exited %llu, tid reused %llu,\n"
	    "    abandoned %llu, expired %llu, table full %llu\n",
	    (unsigned long long)w->binder_gave_up_lost,
	    (unsigned long long)w->binder_gave_up_exit,
	    (unsigned long long)w->binder_gave_up_stale,
	    (unsigned long long)w->binder_gave_up_abandoned,
	    (unsigned long long)w->binder_gave_up_expired,
	    (unsigned long long)w->binder_gave_up_full);
}

static bool
has_binder(const Vitals__TraceWindow *w)
{
	size_t i;

	for (i = 0; i < w->n_enabled; i++)
		if (strcmp(w->enabled[i], "binder/binder_transaction") == 0)
			return true;
	return w->n_binder_txn || w->binder_txn_rest;
}

void
fmt_binder(struct sbuf *o, const Vitals__TraceList *tl)
{
	size_t i, n = 0;

	for (i = 0; i < tl->n_windows; i++) {
		if (!has_binder(tl->windows[i]))
			continue;
		fmt_binder_window(o, tl->windows[i]);
		n++;
	}
	if (n == 0)
		sbuf_puts(o,
		    "no window with binder tracing in the range (binder "
		    "events absent from this kernel, or ftrace off)\n");
	if (tl->truncated)
		sbuf_puts(o,
		    "(older windows left out: ask with a shorter "
		    "--since)\n");
}
