/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dumpsys-style text. Every percentage comes from doc/metrics.md's formula
 * over the raw deltas in the message (figures.c); a zero denominator or a
 * missing reading prints "n/a", never 0 %. Pure functions: the caller passes
 * "now" and the page size, so tests check exact strings.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

/* '+' born in the range, '-' exited, as dumpsys cpuinfo marks them. */
static char
task_mark(const Vitals__Task *t)
{
	return t->born ? '+' : t->exited ? '-' : ' ';
}

/* ------------------------------------------------------------ cpu */

/* Each buffer len bytes; unknown values are "n/a", never 0. */
static void
put_freq(const Vitals__Cpu *c, char *cur, char *max, char *ratio, char *cap,
    size_t len)
{
	if (c->cur_khz && c->cur_khz->n)
		snprintf(cur, len, "%.0f", fig_gauge_avg(c->cur_khz));
	else
		snprintf(cur, len, "n/a");
	if (c->max_khz > 0)
		snprintf(max, len, "%lld", (long long)c->max_khz);
	else
		snprintf(max, len, "n/a");
	if (c->freq_ratio && c->freq_ratio->n)
		snprintf(ratio, len, "%.2f", fig_gauge_avg(c->freq_ratio));
	else
		snprintf(ratio, len, "n/a");
	if (c->capacity >= 0)
		snprintf(cap, len, "%d", c->capacity);
	else
		snprintf(cap, len, "n/a");
}

/* One CPU line's shares and frequency (the first table). */
static void
cpu_row(struct sbuf *o, const char *label, const char *state,
    const Vitals__Cpu *c)
{
	const Vitals__CpuTimes *d = c->d;
	uint64_t total = fig_cpu_total(d), busy = fig_cpu_busy(d);
	char b[16], io[16], st[16], cur[24], max[24], ratio[24], cap[24];

	fmt_pct(b, sizeof(b), fig_ratio(busy, total));
	fmt_pct(io, sizeof(io), fig_ratio(d ? d->iowait : 0, total));
	fmt_pct(st, sizeof(st), fig_ratio(d ? d->steal : 0, total));
	if (c->cpu < 0) {
		/* the aggregate line has no frequency or capacity of its own */
		snprintf(cur, sizeof(cur), "-");
		snprintf(max, sizeof(max), "-");
		snprintf(ratio, sizeof(ratio), "-");
		snprintf(cap, sizeof(cap), "-");
	} else {
		put_freq(c, cur, max, ratio, cap, sizeof(cur));
	}
	sbuf_printf(o, "  %-6s %-7s %6s %6s %6s %8s %8s %5s %4s\n", label,
	    state, b, io, st, cur, max, ratio, cap);
}

/* The ticks the shares came from (the second table); "n/a" without. */
static void
cpu_ticks_row(struct sbuf *o, const char *label, const Vitals__Cpu *c)
{
	const Vitals__CpuTimes *d = c->d;

	if (d == NULL) {
		sbuf_printf(o, "  %-6s %9s %9s %9s %9s\n", label, "n/a", "n/a",
		    "n/a", "n/a");
		return;
	}
	sbuf_printf(o, "  %-6s %9llu %9llu %9llu %9llu\n", label,
	    ULL(fig_cpu_busy(d)), ULL(d->iowait), ULL(d->steal),
	    ULL(fig_cpu_total(d)));
}

/* Two tables that each fit 80 columns: shares and frequency, then the
 * ticks behind the shares. */
void
fmt_cpu(struct sbuf *o, const Vitals__Window *w)
{
	const Vitals__CpuTimes *d = w->all ? w->all->d : NULL;
	char span[16], online[16], label[16];
	size_t i;

	duration_format(span, sizeof(span), w->mono_end_ns - w->mono_start_ns);
	if (w->online_cpus && w->online_cpus->n)
		snprintf(online, sizeof(online), "%.0f", w->online_cpus->last);
	else
		snprintf(online, sizeof(online), "n/a");
	sbuf_printf(o, "CPU window %llu: %s, USER_HZ %u, %s CPUs online\n",
	    ULL(w->seq), span, w->hz, online);
	sbuf_printf(o, "  %-6s %-7s %6s %6s %6s %8s %8s %5s %4s\n", "cpu",
	    "state", "busy", "iowait", "steal", "cur_kHz", "max_kHz", "ratio",
	    "cap");
	if (w->all)
		cpu_row(o, "all", "-", w->all);
	for (i = 0; i < w->n_cpus; i++) {
		const Vitals__Cpu *c = w->cpus[i];

		snprintf(label, sizeof(label), "cpu%d", c->cpu);
		cpu_row(o, label, c->online ? "online" : "offline", c);
	}
	sbuf_printf(o, "  %-6s %9s %9s %9s %9s\n", "ticks", "busy", "iowait",
	    "steal", "total");
	if (w->all)
		cpu_ticks_row(o, "all", w->all);
	for (i = 0; i < w->n_cpus; i++) {
		snprintf(label, sizeof(label), "cpu%d", w->cpus[i]->cpu);
		cpu_ticks_row(o, label, w->cpus[i]);
	}
	if (d)
		sbuf_printf(o,
		    "  all ticks: user %llu nice %llu system %llu idle %llu\n"
		    "    iowait %llu irq %llu softirq %llu steal %llu\n"
		    "    (guest %llu, guest_nice %llu: inside user, nice); "
		    "%u samples\n",
		    ULL(d->user), ULL(d->nice), ULL(d->system), ULL(d->idle),
		    ULL(d->iowait), ULL(d->irq), ULL(d->softirq), ULL(d->steal),
		    ULL(d->guest), ULL(d->guest_nice), w->all->samples);
	sbuf_puts(o,
	    "  busy = user+nice+system+irq+softirq over total;\n"
	    "  cur_kHz and ratio are window averages\n");
}

/* ------------------------------------------------------------ top */

static const char *
metric_name(Vitals__Metric m)
{
	switch (m) {
	case VITALS__METRIC__METRIC_CPU:
		return "cpu";
	case VITALS__METRIC__METRIC_MINFLT:
		return "minflt";
	case VITALS__METRIC__METRIC_MAJFLT:
		return "majflt";
	case VITALS__METRIC__METRIC_RSS:
		return "rss";
	case VITALS__METRIC__METRIC_WEIGHTED:
		return "capacity-weighted cpu";
	default:
		return "?";
	}
}

/* The figures' columns: sized by their data (numbers are never cut). */
static void
figures_cols(struct table *t)
{
	static const char *const h[] = { "core", "share", "norm", "utime",
		"stime", "minflt", "majflt", "rss_kB" };
	size_t i;

	for (i = 0; i < sizeof(h) / sizeof(h[0]); i++)
		table_col(t, h[i], 0, 1, 0);
}

/* ce: core-equivalent ratio (NAN unknown); the rest from t. */
static void
figures_cells(struct table *tb, const Vitals__Task *t, double ce,
    unsigned page_kb)
{
	uint64_t cpu = t->d_utime + t->d_stime;
	char buf[16];

	fmt_pct(buf, sizeof(buf), ce);
	table_cell(tb, "%s", buf);
	fmt_pct(buf, sizeof(buf), fig_machine_share(cpu, t->total_ticks));
	table_cell(tb, "%s", buf);
	fmt_pct(buf, sizeof(buf), fig_normalised(cpu, t->norm_ticks));
	table_cell(tb, "%s", buf);
	table_cell(tb, "%llu", ULL(t->d_utime));
	table_cell(tb, "%llu", ULL(t->d_stime));
	table_cell(tb, "%llu", ULL(t->d_minflt));
	table_cell(tb, "%llu", ULL(t->d_majflt));
	table_cell(tb, "%llu", ULL(t->rss_pages_max * page_kb));
}

static void
task_figures(struct table *tb, const Vitals__Task *t, uint32_t hz,
    unsigned page_kb)
{
	figures_cells(tb, t,
	    fig_core_equiv(t->d_utime + t->d_stime, t->wall_ns, hz), page_kb);
}

/* Capacity-weighted CPU (doc/metrics.md): core-equivalent % of the
 * weighted ticks, and where they come from. */
static void
task_wtd(struct table *tb, const Vitals__Task *t, uint32_t hz)
{
	char wc[16];

	if (t->wtd_source == NULL || t->wtd_source[0] == '\0') {
		table_cell(tb, "-");
		table_cell(tb, "-");
		return;
	}
	fmt_pct(wc, sizeof(wc),
	    t->wall_ns && hz ? (t->wtd_ticks / hz) /
		    ((double)t->wall_ns / VITALS_NSEC_PER_SEC) :
			       NAN);
	table_cell(tb, "%s", wc);
	table_cell(tb, "%s", t->wtd_source);
}

static void
wtd_cols(struct table *t)
{
	table_col(t, "wcore", 0, 1, 0);
	table_col(t, "source", 6, 1, TABLE_LEFT);
}

/* What the daemon ranked by, as the columns print it. */
static const char *
metric_key(Vitals__Metric m)
{
	switch (m) {
	case VITALS__METRIC__METRIC_MINFLT:
		return "minflt";
	case VITALS__METRIC__METRIC_MAJFLT:
		return "majflt";
	case VITALS__METRIC__METRIC_RSS:
		return "rss_kB";
	case VITALS__METRIC__METRIC_WEIGHTED:
		return "wcore";
	default:
		return "utime+stime";
	}
}

/* The figure a top list is ranked by, as its columns print it. */
static double
rank_of(const Vitals__Task *t, Vitals__Metric m)
{
	switch (m) {
	case VITALS__METRIC__METRIC_MINFLT:
		return (double)t->d_minflt;
	case VITALS__METRIC__METRIC_MAJFLT:
		return (double)t->d_majflt;
	case VITALS__METRIC__METRIC_RSS:
		return (double)t->rss_pages_max;
	case VITALS__METRIC__METRIC_WEIGHTED:
		return t->wtd_ticks;
	default:
		return (double)(t->d_utime + t->d_stime);
	}
}

static Vitals__Metric rank_metric;

static int
by_rank(const void *a, const void *b)
{
	const Vitals__Task *x = *(Vitals__Task *const *)a;
	const Vitals__Task *y = *(Vitals__Task *const *)b;
	double rx = rank_of(x, rank_metric), ry = rank_of(y, rank_metric);

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

void
fmt_top(struct sbuf *o, const Vitals__TaskList *tl, const struct fmt_ctx *c)
{
	char from[40], to[40], span[16];
	const Vitals__Task **v = NULL;
	struct table *tb;
	size_t i;

	if (tl->state && *tl->state) {
		fmt_top_state(o, tl);
		return;
	}
	fmt_time(from, sizeof(from), tl->from_wall_ns);
	fmt_time(to, sizeof(to), tl->to_wall_ns);
	duration_format(span, sizeof(span), tl->to_wall_ns - tl->from_wall_ns);
	sbuf_printf(o, "Top %zu %s by %s (sorted by %s), USER_HZ %u,\n",
	    tl->n_tasks, tl->threads ? "threads" : "processes",
	    metric_name(tl->metric), metric_key(tl->metric), tl->hz);
	sbuf_printf(o, "  %s to %s (%s):\n", from, to, span);
	if ((tb = table_new()) == NULL) {
		o->err = -1;
		return;
	}
	table_col(tb, "", 1, 0, TABLE_LEFT);
	table_col(tb, tl->threads ? "tid" : "pid", 0, 1, 0);
	if (tl->threads)
		table_col(tb, "tgid", 0, 1, 0);
	table_col(tb, "uid", 0, 1, 0);
	figures_cols(tb);
	if (tl->metric == VITALS__METRIC__METRIC_WEIGHTED)
		wtd_cols(tb);
	table_col(tb, tl->threads ? "comm (name)" : "name", 0, 2,
	    TABLE_LEFT | TABLE_FLEX);
	/* in the order of the figure printed, whatever order came */
	if (tl->n_tasks && (v = malloc(tl->n_tasks * sizeof(*v))) == NULL) {
		table_free(tb);
		o->err = -1;
		return;
	}
	for (i = 0; i < tl->n_tasks; i++)
		v[i] = tl->tasks[i];
	rank_metric = tl->metric;
	if (tl->n_tasks > 1)
		qsort(v, tl->n_tasks, sizeof(*v), by_rank);
	for (i = 0; i < tl->n_tasks; i++) {
		const Vitals__Task *t = v[i];

		table_cell(tb, "%c", task_mark(t));
		table_cell(tb, "%d", t->id);
		if (tl->threads)
			table_cell(tb, "%d", t->tgid);
		if (t->uid == VITALS_UID_UNKNOWN)
			table_cell(tb, "?");
		else
			table_cell(tb, "%u", t->uid);
		task_figures(tb, t, tl->hz, c->page_kb);
		if (tl->metric == VITALS__METRIC__METRIC_WEIGHTED)
			task_wtd(tb, t, tl->hz);
		if (tl->threads) {
			struct sbuf nm;

			sbuf_init(&nm);
			fmt_label(&nm, t->comm);
			sbuf_puts(&nm, " (");
			fmt_label(&nm, t->name);
			sbuf_putc(&nm, ')');
			table_cell(tb, "%s", sbuf_str(&nm));
			sbuf_free(&nm);
		} else {
			table_label(tb, fmt_task_label(t));
		}
	}
	if (tl->n_tasks == 0)
		sbuf_puts(o, "  (no activity in the range)\n");
	else
		table_render(tb, o, c->width ? c->width : TEXT_WIDTH);
	table_free(tb);
	free(v);
}

/* ------------------------------------------------------------ proc */

/* Σ of history points of one instance (id, starttime). */
struct inst {
	Vitals__Task t; /* sums; strings borrowed from the message */
	double cpu_s;	/* Σ ticks / hz, exact across hz changes */
	bool hz_unknown;
	int64_t from, to;
	unsigned windows;
};

static void
inst_add(struct inst *a, const Vitals__HistoryPoint *h)
{
	const Vitals__Task *t = h->task;

	if (a->windows == 0) {
		a->t = *t;
		a->t.d_utime = a->t.d_stime = a->t.d_minflt = 0;
		a->t.d_majflt = a->t.wall_ns = a->t.total_ticks = 0;
		a->t.norm_ticks = 0;
		a->t.samples = 0;
		a->t.rss_pages_max = 0;
		a->from = h->wall_start_ns;
	}
	a->t.d_utime += t->d_utime;
	a->t.d_stime += t->d_stime;
	a->t.d_minflt += t->d_minflt;
	a->t.d_majflt += t->d_majflt;
	a->t.samples += t->samples;
	a->t.wall_ns += t->wall_ns;
	a->t.total_ticks += t->total_ticks;
	a->t.norm_ticks += t->norm_ticks;
	if (t->rss_pages_max > a->t.rss_pages_max)
		a->t.rss_pages_max = t->rss_pages_max;
	a->t.rss_pages_last = t->rss_pages_last;
	a->t.born |= t->born;
	a->t.exited |= t->exited;
	if (h->hz)
		a->cpu_s += (double)(t->d_utime + t->d_stime) / h->hz;
	else
		a->hz_unknown = true;
	if (h->wall_start_ns < a->from)
		a->from = h->wall_start_ns;
	if (h->wall_end_ns > a->to)
		a->to = h->wall_end_ns;
	a->windows++;
}

/* Group points by (id, starttime), in order of first appearance. */
static struct inst *
inst_group(Vitals__HistoryPoint *const *v, size_t n, size_t *ret_n)
{
	struct inst *a;
	size_t i, k, m = 0;

	*ret_n = 0;
	if (n == 0 || (a = calloc(n, sizeof(*a))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		const Vitals__Task *t = v[i]->task;

		if (t == NULL)
			continue;
		for (k = 0; k < m; k++)
			if (a[k].t.id == t->id &&
			    a[k].t.starttime == t->starttime)
				break;
		if (k == m)
			m++;
		inst_add(&a[k], v[i]);
	}
	*ret_n = m;
	return a;
}

static double
inst_core_equiv(const struct inst *a)
{
	if (a->hz_unknown || a->t.wall_ns == 0)
		return NAN;
	return a->cpu_s / ((double)a->t.wall_ns / VITALS_NSEC_PER_SEC);
}

static int
cmp_inst_cpu(const void *a, const void *b)
{
	const struct inst *x = a, *y = b;
	uint64_t cx = x->t.d_utime + x->t.d_stime;
	uint64_t cy = y->t.d_utime + y->t.d_stime;

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return (x->t.id > y->t.id) - (x->t.id < y->t.id);
}

/* "HH:MM:SS" local time, "n/a" for a missing stamp. */
static void
fmt_clock(char *buf, size_t len, int64_t wall_ns)
{
	char full[40];

	fmt_time(full, sizeof(full), wall_ns);
	if (strlen(full) >= 19)
		snprintf(buf, len, "%.8s", full + 11);
	else
		snprintf(buf, len, "%s", full);
}

/* What is left of the width after the line so far (from start). */
static size_t
room(const struct sbuf *o, size_t start, size_t less)
{
	size_t used = text_ncols(sbuf_str(o) + start, o->len - start) + less;

	return used + 8 < TEXT_WIDTH ? TEXT_WIDTH - used : 8;
}

static void
process_head(struct sbuf *o, const Vitals__ProcessInfo *pi, int32_t pid,
    const struct inst *ins, size_t nins)
{
	const Vitals__Task *who = nins > 0 ? &ins[0].t : pi->identity;
	size_t start = o->len;

	sbuf_printf(o, "Process %d: %zu windows", pid, pi->n_history);
	if (who) {
		sbuf_puts(o, " (");
		text_label(o, fmt_task_label(who), room(o, start, 1));
		sbuf_putc(o, ')');
	}
	sbuf_puts(o, "\n");
	if (pi->n_history == 0 && pi->identity) {
		const Vitals__Task *t = pi->identity;

		sbuf_printf(o, "  tgid %d uid ", t->tgid);
		if (t->uid == VITALS_UID_UNKNOWN)
			sbuf_puts(o, "?");
		else
			sbuf_printf(o, "%u", t->uid);
		sbuf_printf(o, " starttime %llu comm ", ULL(t->starttime));
		fmt_label(o, t->comm);
		sbuf_printf(o, " (%s)\n",
		    strcmp(pi->identity_source, "proc") == 0 ? "/proc now" :
			strcmp(pi->identity_source, "store") == 0 ?
							       "stored rows" :
							       "?");
	}
	if (pi->cgroup && *pi->cgroup) {
		start = o->len;
		sbuf_puts(o, "  cgroup ");
		text_label(o, pi->cgroup, room(o, start, 6));
		sbuf_puts(o, " (now)\n");
	}
}

/* Window by window, then one Σ row per instance (id, starttime). */
static void
process_windows(struct sbuf *o, const Vitals__ProcessInfo *pi,
    const struct inst *ins, size_t nins, const struct fmt_ctx *c)
{
	struct table *tb;
	char when[40], span[16];
	bool wtd = false; /* a capacity-weighted column (doc/metrics.md) */
	size_t i;

	for (i = 0; i < pi->n_history && !wtd; i++)
		wtd = pi->history[i]->task &&
		    pi->history[i]->task->wtd_source &&
		    pi->history[i]->task->wtd_source[0];
	if (pi->n_history > 0) {
		fmt_time(when, sizeof(when), pi->history[0]->wall_start_ns);
		sbuf_printf(o, "  windows from %.10s (local time):\n", when);
	}
	if ((tb = table_new()) == NULL) {
		o->err = -1;
		return;
	}
	table_col(tb, "", 1, 0, TABLE_LEFT);
	table_col(tb, "start", 8, 1, TABLE_LEFT);
	table_col(tb, "len", 6, 1, 0);
	figures_cols(tb);
	if (wtd)
		wtd_cols(tb);
	table_col(tb, "", 0, 2, TABLE_LEFT);
	for (i = 0; i < pi->n_history; i++) {
		const Vitals__HistoryPoint *h = pi->history[i];

		if (h->task == NULL)
			continue;
		fmt_clock(when, sizeof(when), h->wall_start_ns);
		duration_format(span, sizeof(span),
		    h->wall_end_ns - h->wall_start_ns);
		table_cell(tb, "%c", task_mark(h->task));
		table_cell(tb, "%s", when);
		table_cell(tb, "%s", span);
		task_figures(tb, h->task, h->hz, c->page_kb);
		if (wtd)
			task_wtd(tb, h->task, h->hz);
		if (h->level)
			table_cell(tb, "(roll-up level %u)", h->level);
		else
			table_cell(tb, "%s", "");
	}
	for (i = 0; i < nins; i++) {
		duration_format(span, sizeof(span), ins[i].to - ins[i].from);
		table_cell(tb, "%s", "");
		table_cell(tb, "\xce\xa3 %llu", ULL(ins[i].t.starttime));
		table_cell(tb, "%s", span);
		figures_cells(tb, &ins[i].t, inst_core_equiv(&ins[i]),
		    c->page_kb);
		if (wtd) {
			table_cell(tb, "%s", "");
			table_cell(tb, "%s", "");
		}
		table_cell(tb, "%u windows", ins[i].windows);
	}
	if (pi->n_history == 0)
		sbuf_puts(o, "  (no activity in the range)\n");
	else
		table_render(tb, o, c->width ? c->width : TEXT_WIDTH);
	table_free(tb);
	if (nins > 0)
		sbuf_puts(o,
		    "  (\xce\xa3 STARTTIME: one instance of the pid over the "
		    "range)\n");
}

void
fmt_process(struct sbuf *o, const Vitals__ProcessInfo *pi, int32_t pid,
    const struct fmt_ctx *c)
{
	struct inst *ins, *th;
	struct table *tb;
	size_t nins, nth, i;

	if (pi->state && *pi->state) {
		fmt_process_state(o, pi, pid);
		return;
	}
	ins = inst_group(pi->history, pi->n_history, &nins);
	process_head(o, pi, pid, ins, nins);
	process_windows(o, pi, ins, nins, c);
	if (c->spark)
		fmt_process_spark(o, pi, c);
	free(ins);

	if (pi->n_threads == 0)
		return;
	th = inst_group(pi->threads, pi->n_threads, &nth);
	if (th)
		qsort(th, nth, sizeof(*th), cmp_inst_cpu);
	sbuf_printf(o,
	    "Threads: %zu (\xce\xa3 over the range, sorted by "
	    "utime+stime)\n",
	    nth);
	if ((tb = table_new()) == NULL) {
		free(th);
		o->err = -1;
		return;
	}
	table_col(tb, "", 1, 0, TABLE_LEFT);
	table_col(tb, "tid", 7, 1, 0);
	figures_cols(tb);
	table_col(tb, "comm", 0, 2, TABLE_LEFT | TABLE_FLEX);
	for (i = 0; i < nth; i++) {
		table_cell(tb, "%c", task_mark(&th[i].t));
		table_cell(tb, "%d", th[i].t.id);
		figures_cells(tb, &th[i].t, inst_core_equiv(&th[i]),
		    c->page_kb);
		table_label(tb, th[i].t.comm);
	}
	table_render(tb, o, c->width ? c->width : TEXT_WIDTH);
	table_free(tb);
	free(th);
}

void
fmt_burst(struct sbuf *o, const Vitals__BurstAck *a, uint32_t asked_ms)
{
	sbuf_printf(o, "burst: sampling every %u ms for %.1f s", a->interval_ms,
	    a->duration_ms / 1000.0);
	if (asked_ms && a->duration_ms < asked_ms)
		sbuf_printf(o, " (asked %.1f s; the daemon caps a burst)",
		    asked_ms / 1000.0);
	sbuf_putc(o, '\n');
}
