/* SPDX-License-Identifier: Apache-2.0 */
/* Text of the heapprofd answers: start, list, cancel, health. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client.h"

#define ULL(v) ((unsigned long long)(v))

const char *
fmt_hp_refusal(Vitals__HeapprofdRefusal r)
{
	switch (r) {
	case VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_OK:
		return "ok";
	case VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_NOT_ELIGIBLE:
		return "not eligible";
	case VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_RATE_LIMITED_PROCESS:
		return "rate limited (process)";
	case VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_RATE_LIMITED_SYSTEM:
		return "rate limited (system-wide)";
	case VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_IN_PROGRESS:
		return "another session in progress";
	case VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_INVALID_REQUEST:
		return "invalid request";
	case VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_UNAVAILABLE:
		return "unavailable";
	default:
		return "unknown reason";
	}
}

void
fmt_hp_started(struct sbuf *o, const Vitals__HeapprofdStarted *s)
{
	if (s->refusal != VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_OK) {
		sbuf_printf(o, "refused: %s: %s", fmt_hp_refusal(s->refusal),
		    s->message);
		if (s->session_id)
			sbuf_printf(o, " (record %lld)",
			    (long long)s->session_id);
		sbuf_putc(o, '\n');
		return;
	}
	sbuf_printf(o, "%s\n", s->message);
	if (s->dry_run) {
		sbuf_puts(o, s->config_text);
		return;
	}
	if (s->output_path && *s->output_path)
		sbuf_printf(o, "output: %s\n", s->output_path);
}

/* An outcome that is the trace's verdict on a session other than
 * completed (doc/heapprofd.md, "Checked profiles"). */
static bool
verdict(const char *outcome)
{
	static const char *const v[] = { "disconnected", "buffer_overran",
		"buffer_corrupted", "guardrail", "rejected", "no_profile",
		"trace_corrupt", NULL };
	size_t i;

	for (i = 0; v[i]; i++)
		if (outcome && strcmp(outcome, v[i]) == 0)
			return true;
	return false;
}

void
fmt_hp_list(struct sbuf *o, const Vitals__HeapprofdList *l)
{
	char t[32], by[80];
	struct table *tb;
	size_t i;

	if (l->n_sessions == 0) {
		sbuf_puts(o, "no heapprofd sessions recorded\n");
		return;
	}
	if ((tb = table_new()) == NULL) {
		o->err = -1;
		return;
	}
	/* newest first, as the daemon lists them; the target gives way */
	table_col(tb, "ID", 6, 0, 0);
	table_col(tb, "CREATED", 0, 2, TABLE_LEFT);
	table_col(tb, "BY", 0, 2, TABLE_LEFT);
	table_col(tb, "TARGET", 0, 2, TABLE_LEFT | TABLE_FLEX);
	table_col(tb, "OUTCOME", 0, 2, TABLE_LEFT);
	table_col(tb, "DETAIL", 0, 2, TABLE_LEFT);
	for (i = 0; i < l->n_sessions; i++) {
		const Vitals__HeapprofdSession *s = l->sessions[i];
		struct sbuf d;

		fmt_time(t, sizeof(t), s->created_wall_ns);
		if (s->by_rule)
			snprintf(by, sizeof(by), "rule %s", s->rule);
		else
			snprintf(by, sizeof(by), "uid %u", s->caller_uid);
		table_cell(tb, "%lld", (long long)s->id);
		table_cell(tb, "%.19s", t);
		table_label(tb, by);
		table_label(tb, s->target);
		table_label(tb, s->outcome);
		sbuf_init(&d);
		if (!s->started) {
			sbuf_printf(&d, "%s: %s", fmt_hp_refusal(s->refusal),
			    s->message);
		} else if (s->end_wall_ns) {
			/* a trace whose verdict is not completed: why,
			 * first (a narrow table cuts the end) */
			if (verdict(s->outcome) && s->message && s->message[0])
				sbuf_printf(&d, "%s; ", s->message);
			sbuf_printf(&d, "%.1f s, exit %d%s%s, %lld bytes %s",
			    (double)(s->end_wall_ns - s->start_wall_ns) / 1e9,
			    s->exit_status, s->term_signal ? ", signal " : "",
			    s->term_signal ? strsignal(s->term_signal) : "",
			    (long long)s->output_bytes, s->output_path);
		} else {
			sbuf_printf(&d, "perfetto pid %d, %s", s->child_pid,
			    s->output_path);
		}
		table_label(tb, sbuf_str(&d));
		sbuf_free(&d);
	}
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
}

void
fmt_hp_cancelled(struct sbuf *o, const Vitals__HeapprofdCancelled *c)
{
	sbuf_printf(o, "%s\n", c->message);
}

void
fmt_hp_health(struct sbuf *o, const Vitals__HeapprofdHealth *h)
{
	size_t i;

	if (h == NULL)
		return;
	sbuf_printf(o,
	    "heapprofd: %u rule%s, initiator %s, %s\n  requests "
	    "%llu, started %llu, dry runs %llu, denied %llu; completed %llu, "
	    "failed %llu, timeouts %llu, cancelled %llu, spawn failed %llu, "
	    "closed after restart %llu\n  refused:",
	    h->rules, h->rules == 1 ? "" : "s", h->initiator,
	    h->running ? "session running" : "idle", ULL(h->requests),
	    ULL(h->started), ULL(h->dry_runs), ULL(h->denied),
	    ULL(h->completed), ULL(h->failed), ULL(h->timeouts),
	    ULL(h->cancelled), ULL(h->spawn_failed), ULL(h->restarted_closed));
	for (i = 0; i < h->n_refused; i++)
		sbuf_printf(o, " %s %llu", h->refused[i]->name,
		    ULL(h->refused[i]->value));
	sbuf_puts(o, "\n  profiles (trace checked):");
	for (i = 0; i < h->n_profiles; i++)
		sbuf_printf(o, " %s %llu", h->profiles[i]->name,
		    ULL(h->profiles[i]->value));
	sbuf_printf(o, "; longest check %.1f ms%s",
	    (double)h->check_ns_max / 1e6,
	    h->checking ? "; checking a trace now" : "");
	sbuf_printf(o,
	    "\n  traces: %u files, %llu bytes kept; expired %llu by age, "
	    "%llu by size (%llu bytes), errors %llu",
	    h->trace_files, ULL(h->trace_bytes), ULL(h->expired_age_files),
	    ULL(h->expired_size_files), ULL(h->expired_bytes),
	    ULL(h->expire_errors));
	sbuf_printf(o,
	    "\n  rules: evaluated %llu, fired %llu, GPU memory "
	    "not available %llu, name reads failed %llu, anon reads failed "
	    "%llu\n",
	    ULL(h->rule_evaluations), ULL(h->rules_fired),
	    ULL(h->gpu_unavailable), ULL(h->name_failed), ULL(h->anon_failed));
	sbuf_printf(o,
	    "  records: queued %u, written %llu, dropped %llu, failed %llu; "
	    "store errors %llu\n",
	    h->records_queued, ULL(h->records_written), ULL(h->records_dropped),
	    ULL(h->records_failed), ULL(h->store_errors));
	if (h->spawn && h->spawn[0])
		sbuf_printf(o, "  perfetto: %s (%s); build type %s (from %s)\n",
		    h->spawn, h->spawn_detail, h->build_type,
		    h->build_type_source);
	if (h->last_refusal)
		sbuf_printf(o, "  last refusal: %s: %s\n",
		    fmt_hp_refusal(h->last_refusal), h->last_message);
}
