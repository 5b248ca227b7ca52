/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Burst triggers: evaluation, budgets and the record (doc/bursts.md).
 * Pressure rules are evaluated at every sample, over the kernel's
 * cumulative stall time since the previous evaluation (at least 1 s);
 * the others at every window close, over the closed window's figures.
 * A rule that holds asks for a burst; the budgets decide, in this order:
 * a burst already running (not extended), the rule's cooldown, the gap
 * since the last rule-started burst, the bursts of the last hour.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burst/burst.h"
#include "core/log.h"
#include "core/util.h"
#include "sched/sched.h"
#include "trace/trace.h"
#include "window/window.h"

#define PSI_MIN_SPAN_NS NSEC_PER_SEC
#define HOUR_NS (3600 * NSEC_PER_SEC)

struct burst {
	struct burst_settings s;
	struct burst_hooks h;
	struct burst_stats st;
	struct burst_fire log[BURST_LOG_MAX]; /* a ring, oldest at head */
	size_t nlog, head;
	int64_t rule_start_ns[BURST_RULES_MAX]; /* its last burst; 0 never */
	enum burst_outcome rule_logged[BURST_RULES_MAX];
	bool rule_ever[BURST_RULES_MAX];
	int64_t until_ns; /* the last rule-started burst ends */
	int64_t *starts;  /* rule-started bursts of the last hour, a ring */
	size_t nstarts, starts_head;
	/* pressure: the previous evaluation's cumulative stall, per resource */
	bool psi_have[PSI__MAX];
	uint64_t psi_us[PSI__MAX];
	int64_t psi_ns[PSI__MAX];
};

int
burst_new(const struct burst_settings *bs, const struct burst_hooks *h,
    struct burst **ret)
{
	struct burst *b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -ENOMEM;
	b->s = *bs;
	b->h = *h;
	if (bs->max_per_hour &&
	    (b->starts = calloc(bs->max_per_hour, sizeof(*b->starts))) ==
		NULL) {
		free(b);
		return -ENOMEM;
	}
	*ret = b;
	return 0;
}

struct burst *
burst_free(struct burst *b)
{
	if (b) {
		free(b->starts);
		free(b);
	}
	return NULL;
}

const struct burst_settings *
burst_settings(const struct burst *b)
{
	return &b->s;
}

void
burst_stats(const struct burst *b, struct burst_stats *ret)
{
	*ret = b->st;
}

/* The record, oldest first. */
size_t
burst_log(const struct burst *b, struct burst_fire *ret, size_t max)
{
	size_t i, n = b->nlog < max ? b->nlog : max;
	size_t skip = b->nlog - n;

	for (i = 0; i < n; i++)
		ret[i] = b->log[(b->head + skip + i) % BURST_LOG_MAX];
	return n;
}

static void
log_put(struct burst *b, const struct burst_fire *f)
{
	b->log[(b->head + b->nlog) % BURST_LOG_MAX] = *f;
	if (b->nlog < BURST_LOG_MAX)
		b->nlog++;
	else
		b->head = (b->head + 1) % BURST_LOG_MAX;
	b->st.logged++;
}

/* Rule-started bursts within the hour before now. */
static size_t
starts_in_hour(struct burst *b, int64_t now)
{
	while (b->nstarts && now - b->starts[b->starts_head] >= HOUR_NS) {
		b->starts_head = (b->starts_head + 1) % b->s.max_per_hour;
		b->nstarts--;
	}
	return b->nstarts;
}

static enum burst_outcome
decide(struct burst *b, unsigned ri, int64_t now)
{
	const struct burst_rule *r = &b->s.rule[ri];
	uint32_t cool = r->have_cooldown ? r->cooldown_ms : b->s.cooldown_ms;
	int64_t last_any = 0;
	size_t i;

	if (now < b->until_ns || (b->h.until && now < b->h.until(b->h.arg)))
		return BURST_DURING_BURST;
	if (b->rule_start_ns[ri] &&
	    now - b->rule_start_ns[ri] < (int64_t)cool * NSEC_PER_MSEC)
		return BURST_COOLDOWN;
	for (i = 0; i < b->s.nrules; i++)
		if (b->rule_start_ns[i] > last_any)
			last_any = b->rule_start_ns[i];
	if (last_any &&
	    now - last_any < (int64_t)b->s.min_gap_ms * NSEC_PER_MSEC)
		return BURST_GAP;
	if (starts_in_hour(b, now) >= b->s.max_per_hour)
		return BURST_HOURLY;
	return BURST_STARTED;
}

/*
 * Rule ri held (value against threshold, for pid): decide, start, record.
 * Every holding is counted; a started one is always recorded, a refused
 * one when the rule's previous record was not refused for the same
 * reason (a condition that holds for minutes is one line, not hundreds).
 */
static void
held(struct burst *b, unsigned ri, int64_t mono, int64_t wall, double value,
    double threshold, int32_t pid, const char *why)
{
	const struct burst_rule *r = &b->s.rule[ri];
	struct burst_fire f;
	enum burst_outcome o = decide(b, ri, mono);

	b->st.held++;
	b->st.outcome[o]++;
	memset(&f, 0, sizeof(f));
	f.wall_ns = wall;
	f.mono_ns = mono;
	f.rule = ri;
	snprintf(f.rule_name, sizeof(f.rule_name), "%s", r->name);
	f.cond = r->cond;
	f.outcome = o;
	f.value = value;
	f.threshold = threshold;
	f.pid = pid;
	f.duration_ms = r->duration_ms ? r->duration_ms : b->s.duration_ms;
	snprintf(f.why, sizeof(f.why), "%s", why);
	if (o == BURST_STARTED) {
		b->rule_start_ns[ri] = mono;
		b->until_ns = mono + (int64_t)f.duration_ms * NSEC_PER_MSEC;
		if (b->s.max_per_hour) {
			b->starts[(b->starts_head + b->nstarts) %
			    b->s.max_per_hour] = mono;
			b->nstarts++;
		}
		if (b->h.start)
			b->h.start(b->h.arg, f.duration_ms);
		log_info("burst: rule %s: %s", r->name, why);
	} else if (b->rule_ever[ri] && b->rule_logged[ri] == o) {
		return;
	}
	b->rule_ever[ri] = true;
	b->rule_logged[ri] = o;
	log_put(b, &f);
}

/* ------------------------------------------------------------ pressure */

/* Which resources some pressure rule watches. */
static unsigned
psi_watched(const struct burst *b)
{
	unsigned ri, m = 0;

	for (ri = 0; ri < b->s.nrules; ri++)
		if (b->s.rule[ri].cond == BURST_PSI_SOME)
			m |= 1u << b->s.rule[ri].res;
	return m;
}

void
burst_sample(struct burst *b, const struct sys_sample *s, int64_t mono,
    int64_t wall)
{
	unsigned m, ri, res;
	bool ready[PSI__MAX] = { false }, avail[PSI__MAX] = { false };
	double pct[PSI__MAX] = { 0 }, secs[PSI__MAX] = { 0 };

	if (b == NULL || s == NULL || (m = psi_watched(b)) == 0)
		return;
	for (res = 0; res < PSI__MAX; res++) {
		uint64_t us;
		int64_t span;

		if (!(m & 1u << res))
			continue;
		if (s->psi_err[res]) {
			b->psi_have[res] = false;
			continue;
		}
		avail[res] = true;
		us = s->psi[res].some.total_us;
		if (!b->psi_have[res] || us < b->psi_us[res] ||
		    mono <= b->psi_ns[res]) {
			/* a first reading, or the counter went back */
			b->psi_have[res] = true;
			b->psi_us[res] = us;
			b->psi_ns[res] = mono;
			continue;
		}
		if ((span = mono - b->psi_ns[res]) < PSI_MIN_SPAN_NS)
			continue;
		ready[res] = true;
		pct[res] = (double)(us - b->psi_us[res]) * NSEC_PER_USEC *
		    100.0 / (double)span;
		secs[res] = (double)span / 1e9;
		b->psi_us[res] = us;
		b->psi_ns[res] = mono;
	}
	for (ri = 0; ri < b->s.nrules; ri++) {
		const struct burst_rule *r = &b->s.rule[ri];
		char why[BURST_WHY_MAX];

		if (r->cond != BURST_PSI_SOME)
			continue;
		res = r->res;
		if (!avail[res]) {
			b->st.evaluations++;
			b->st.unavailable++;
			continue;
		}
		if (!ready[res])
			continue;
		b->st.evaluations++;
		if (pct[res] < r->level)
			continue;
		snprintf(why, sizeof(why),
		    "%s pressure: stalled (some) %.1f%% of the last %.1f s "
		    "(>= %g%%)",
		    psi_res_name(r->res), pct[res], secs[res], r->level);
		held(b, ri, mono, wall, pct[res], r->level, 0, why);
	}
}

/* ------------------------------------------------------- window close */

/* Bytes of s to print within max, cut between two UTF-8 characters. */
static int
cut8(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == max)
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	return (int)n;
}

static const struct window_task *
proc_of(const struct window *w, int32_t pid)
{
	size_t i;

	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].id == pid)
			return &w->procs[i];
	return NULL;
}

static bool
selected(const struct burst_rule *r, const struct window_task *t)
{
	switch (r->sel) {
	case BURST_SEL_ANY:
		return true;
	case BURST_SEL_NAME:
		return t &&
		    (strcmp(window_task_name(t), r->sel_name) == 0 ||
			strcmp(t->comm, r->sel_name) == 0);
	case BURST_SEL_UID:
		return t && t->uid == r->sel_uid;
	}
	return false;
}

/* p99 of every process's waits in the window (BPF histograms). */
static void
eval_rq(struct burst *b, unsigned ri, const struct window *w, int64_t mono,
    int64_t wall)
{
	const struct burst_rule *r = &b->s.rule[ri];
	const struct window_bpf *wb = window_sched(w);
	uint32_t hist[VITALS_BPF_RQ_SLOTS] = { 0 };
	uint64_t p99;
	size_t i;
	unsigned k;
	char why[BURST_WHY_MAX];

	if (wb == NULL || wb->state < VBPF_ON_LOADED ||
	    wb->state > VBPF_ON_PINNED) {
		b->st.unavailable++;
		return;
	}
	for (i = 0; i < wb->nprocs; i++)
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			hist[k] += wb->proc[i].rq_hist[k];
	for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
		hist[k] += wb->proc_other.rq_hist[k];
	if ((p99 = window_bpf_rq_quantile_ns(hist, 0.99)) == 0 ||
	    p99 < (uint64_t)r->bound_ns)
		return;
	if (p99 == UINT64_MAX)
		snprintf(why, sizeof(why),
		    "run-queue delay p99 in the open top slot over %lld ms",
		    (long long)(r->bound_ns / NSEC_PER_MSEC));
	else
		snprintf(why, sizeof(why),
		    "run-queue delay p99 < %.3f ms (slot bound) over %.3f ms",
		    (double)p99 / 1e6, (double)r->bound_ns / 1e6);
	held(b, ri, mono, wall, p99 == UINT64_MAX ? -1 : (double)p99 / 1e6,
	    (double)r->bound_ns / 1e6, 0, why);
}

/* The longest complete slice of a matching name. */
static void
eval_slice(struct burst *b, unsigned ri, const struct window *w, int64_t mono,
    int64_t wall)
{
	const struct burst_rule *r = &b->s.rule[ri];
	const struct window_trace *t = window_trace(w);
	const struct window_trace_slice *best = NULL;
	unsigned i;
	char why[BURST_WHY_MAX];

	if (t == NULL || t->state != FTRACE_ON) {
		b->st.unavailable++;
		return;
	}
	for (i = 0; i < t->nslices; i++) {
		const struct window_trace_slice *s = &t->slice[i];

		if (s->count == 0 || s->max_ns < (uint64_t)r->bound_ns ||
		    (best && s->max_ns <= best->max_ns) ||
		    fnmatch(r->pattern, s->name, 0) != 0 ||
		    !selected(r,
			r->sel == BURST_SEL_ANY ? NULL : proc_of(w, s->tgid)))
			continue;
		best = s;
	}
	if (best == NULL)
		return;
	snprintf(why, sizeof(why),
	    "slice '%.*s' of pid %d took %.1f ms (>= %.1f ms)",
	    cut8(best->name, 60), best->name, (int)best->tgid,
	    (double)best->max_ns / 1e6, (double)r->bound_ns / 1e6);
	held(b, ri, mono, wall, (double)best->max_ns / 1e6,
	    (double)r->bound_ns / 1e6, best->tgid, why);
}

/* The process with the highest major-fault rate. */
static void
eval_majflt(struct burst *b, unsigned ri, const struct window *w, int64_t mono,
    int64_t wall)
{
	const struct burst_rule *r = &b->s.rule[ri];
	const struct window_task *best = NULL;
	double rate, best_rate = 0;
	size_t i;
	char why[BURST_WHY_MAX];

	for (i = 0; i < w->nprocs; i++) {
		const struct window_task *t = &w->procs[i];

		if (t->wall_ns == 0 || t->d_majflt == 0 || !selected(r, t))
			continue;
		rate = (double)t->d_majflt * 1e9 / (double)t->wall_ns;
		if (rate >= r->level && rate > best_rate) {
			best = t;
			best_rate = rate;
		}
	}
	if (best == NULL)
		return;
	snprintf(why, sizeof(why),
	    "%.*s (pid %d): %.1f major faults/s over %.1f s (>= %g)",
	    cut8(window_task_name(best), 40), window_task_name(best),
	    (int)best->id, best_rate, (double)best->wall_ns / 1e9, r->level);
	held(b, ri, mono, wall, best_rate, r->level, best->id, why);
}

void
burst_window(struct burst *b, const struct window *w, int64_t mono,
    int64_t wall)
{
	unsigned ri;

	if (b == NULL || w == NULL)
		return;
	for (ri = 0; ri < b->s.nrules; ri++) {
		switch (b->s.rule[ri].cond) {
		case BURST_PSI_SOME:
			continue; /* at every sample */
		case BURST_RQ_P99:
			b->st.evaluations++;
			eval_rq(b, ri, w, mono, wall);
			break;
		case BURST_SLICE:
			b->st.evaluations++;
			eval_slice(b, ri, w, mono, wall);
			break;
		case BURST_MAJFLT_RATE:
			b->st.evaluations++;
			eval_majflt(b, ri, w, mono, wall);
			break;
		case BURST_COND__MAX:
			break;
		}
	}
}
