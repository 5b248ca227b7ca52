/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dumpsys-style text. Every percentage comes from doc/metrics.md's formula
 * over the raw deltas in the message (figures.c); a zero denominator or a
 * missing reading prints "n/a", never 0 %. Pure functions: the caller passes
 * "now" and the page size, so tests check exact strings.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ------------------------------------------------------------ health */

static void
put_counters(struct sbuf *o, const char *label, Vitals__Counter *const *v,
    size_t n)
{
	size_t i;

	sbuf_printf(o, "  %s:", label);
	if (n == 0)
		sbuf_puts(o, " none");
	for (i = 0; i < n; i++)
		sbuf_printf(o, " %s %llu", v[i]->name, ULL(v[i]->value));
	sbuf_putc(o, '\n');
}

static void
health_window(struct sbuf *o, const Vitals__Window *w)
{
	const Vitals__WindowHealth *h = w->health;
	int64_t span_ns = w->mono_end_ns - w->mono_start_ns;
	char span[16], pct[16];
	size_t i;

	duration_format(span, sizeof(span), span_ns);
	sbuf_printf(o, "Last window %llu: %s, samples %u, valid %u\n",
	    ULL(w->seq), span, w->samples, w->samples_valid);
	put_counters(o, "invalid samples", w->invalid_samples,
	    w->n_invalid_samples);
	put_counters(o, "dropped deltas", w->invalid_deltas,
	    w->n_invalid_deltas);
	if (h == NULL) {
		sbuf_puts(o, "  collector: n/a\n");
		return;
	}
	fmt_pct(pct, sizeof(pct), fig_self_core_equiv(h, span_ns));
	sbuf_printf(o,
	    "  own cpu: %s of a core (user %llu us + sys %llu us "
	    "over %s)\n",
	    pct, ULL(h->self_utime_us), ULL(h->self_stime_us), span);
	sbuf_puts(o, "  cost per sample, avg/max us:");
	for (i = 0; i < h->n_coll_ns_sum; i++) {
		const Vitals__Counter *mx = fig_counter(h->coll_ns_max,
		    h->n_coll_ns_max, h->coll_ns_sum[i]->name);

		sbuf_printf(o, " %s ", h->coll_ns_sum[i]->name);
		if (w->samples)
			sbuf_printf(o, "%llu",
			    ULL(h->coll_ns_sum[i]->value / w->samples / 1000));
		else
			sbuf_puts(o, "n/a");
		if (mx)
			sbuf_printf(o, "/%llu", ULL(mx->value / 1000));
		else
			sbuf_puts(o, "/n/a");
	}
	sbuf_puts(o, "; whole sample ");
	if (w->samples)
		sbuf_printf(o, "%llu",
		    ULL(h->sample_ns_sum / w->samples / 1000));
	else
		sbuf_puts(o, "n/a");
	sbuf_printf(o, "/%llu\n", ULL(h->sample_ns_max / 1000));
	if (h->tick_late_ns_max || h->tick_late_ns_sum) {
		sbuf_puts(o, "  timer lateness avg/max us: ");
		if (w->samples)
			sbuf_printf(o, "%llu",
			    ULL(h->tick_late_ns_sum / w->samples / 1000));
		else
			sbuf_puts(o, "n/a");
		sbuf_printf(o, "/%llu", ULL(h->tick_late_ns_max / 1000));
		if (h->n_tick_late_hist)
			sbuf_printf(o, ", p99 <= %llu",
			    ULL(h->tick_late_ns_p99 / 1000));
		sbuf_puts(o, "\n");
	}
	if (h->loop_cb_ns_max)
		sbuf_printf(o,
		    "  loop callbacks: longest %llu us (%s, %llu us CPU), %u "
		    "over 1 ms\n",
		    ULL(h->loop_cb_ns_max / 1000),
		    h->loop_cb_what && *h->loop_cb_what ? h->loop_cb_what : "?",
		    ULL(h->loop_cb_cpu_ns / 1000), h->loop_cb_over_1ms);
	sbuf_printf(o,
	    "  late ticks %u, burst samples %u; scanned %u procs "
	    "%u threads; exited %u procs %u threads; cpu lines dropped %u\n",
	    h->late_ticks, h->burst_samples, h->procs_scanned,
	    h->threads_scanned, h->procs_exited, h->threads_exited,
	    h->cpu_dropped);
	if (h->stat_fds || h->stat_fd_reads || h->stat_opens)
		sbuf_printf(o,
		    "  procfs stat files: %u kept open; %llu reads through "
		    "them, %llu opens, %llu not kept (bound)\n",
		    h->stat_fds, ULL(h->stat_fd_reads), ULL(h->stat_opens),
		    ULL(h->stat_fd_full));
	if (h->samples_full || h->samples_partial) {
		bool off = h->partial_why && strcmp(h->partial_why, "none");

		sbuf_printf(o,
		    "  process samples: %u full walks, %u partial (last read "
		    "%u tasks), %u partial reads replaced; partial %s%s",
		    h->samples_full, h->samples_partial, h->partial_records,
		    h->partial_doubts, off ? "off: " : "on",
		    off ? h->partial_why : "");
		if (off && h->partial_err)
			sbuf_printf(o, " (errno %u)", h->partial_err);
		sbuf_puts(o, "\n");
	}
	if (h->bpf) {
		const Vitals__BpfHealth *b = h->bpf;

		sbuf_printf(o, "  bpf: %s", b->state ? b->state : "?");
		if (b->err)
			sbuf_printf(o, " (errno %d)", -b->err);
		sbuf_printf(o,
		    "; drains %u (failed %u), switches %llu, no "
		    "slice %llu, lost %.3f ms, counter regressions %u\n",
		    b->drains, b->drain_fail, ULL(b->switches),
		    ULL(b->no_slice), (double)b->lost_ns / 1e6,
		    b->counter_regressions);
		sbuf_printf(o,
		    "  bpf on-CPU %.3f ms attributed to uids; waits with "
		    "no process %llu; before this start %.3f ms\n",
		    (double)b->oncpu_ns / 1e6, ULL(b->no_storage),
		    (double)b->pre_ns / 1e6);
		sbuf_printf(o,
		    "  bpf kernel: accounted %.3f ms, wakeups %llu, waits "
		    "measured %llu (in process rows %llu, no thread entry "
		    "%llu), map full: tid %llu proc %llu uid %llu; exited: "
		    "%llu threads, %llu procs\n",
		    (double)b->oncpu_total_ns / 1e6, ULL(b->wakeups),
		    ULL(b->rq_samples), ULL(b->rq_count), ULL(b->rq_notid),
		    ULL(b->full_tid), ULL(b->full_proc), ULL(b->full_uid),
		    ULL(b->thr_exited), ULL(b->procs_exited));
		if (b->procs_other || b->threads_other || b->uids_other)
			sbuf_printf(o,
			    "  bpf rows folded into \"other\": %u procs, %u "
			    "threads, %u uids\n",
			    b->procs_other, b->threads_other, b->uids_other);
		if (b->diff_drains)
			sbuf_printf(o,
			    "  bpf read-only: %u snapshot diffs, "
			    "unattributed %.3f ms, evicted %llu, recreated "
			    "%llu, retired %llu\n",
			    b->diff_drains, (double)b->unattributed_ns / 1e6,
			    ULL(b->evicted), ULL(b->recreated),
			    ULL(b->retired));
	}
}

/* Batched commits (doc/storage.md, "Batched commits"). */
static void
health_store_spool(struct sbuf *o, const Vitals__StoreHealth *s)
{
	if (s->spool_on) {
		sbuf_printf(o,
		    "  spool %s: %llu windows waiting; %llu batches moved "
		    "%llu windows (failed %llu), last/max ms %.3f/%.3f\n",
		    s->spool_path && *s->spool_path ? s->spool_path : "?",
		    ULL(s->spool_pending), ULL(s->spool_flushes),
		    ULL(s->spool_moved), ULL(s->spool_failures),
		    (double)s->flush_ns_last / 1e6,
		    (double)s->flush_ns_max / 1e6);
		return;
	}
	sbuf_puts(o, "  spool off, each window is its own commit");
	if (s->spool_note && *s->spool_note)
		sbuf_printf(o, ": %s", s->spool_note);
	else if (s->spool_err)
		sbuf_printf(o, ": %s (errno %d)", strerror(-s->spool_err),
		    -s->spool_err);
	sbuf_puts(o, "\n");
}

/* The writer's longest put or pass and where it went (doc/storage.md,
 * "What delays the writer"); nothing from an older daemon. */
static void
health_store_times(struct sbuf *o, const char *what,
    const Vitals__StoreOpTimes *t)
{
	const Vitals__StoreOpTime *w = t ? t->worst : NULL;

	if (w == NULL || t->n == 0)
		return;
	sbuf_printf(o,
	    "  writer %s: %llu, longest %.3f ms (cpu %.3f, waiting for a CPU "
	    "%.3f%s, reader locks %.3f, checkpoint %.3f, other %.3f); reader "
	    "lock wait max %.3f ms, %llu over 1 ms\n",
	    what, ULL(t->n), (double)w->wall_ns / 1e6, (double)w->cpu_ns / 1e6,
	    (double)w->runq_ns / 1e6, w->runq_known ? "" : " unknown",
	    (double)w->lock_ns / 1e6, (double)w->ckpt_ns / 1e6,
	    (double)w->other_ns / 1e6, (double)t->lock_max_ns / 1e6,
	    ULL(t->lock_over_1ms));
}

/* Lock waits on the main file (doc/storage.md, "The main file's journal"). */
static void
health_store_waits(struct sbuf *o, const Vitals__StoreHealth *s)
{
	const Vitals__StoreWaits *m = s->move_waits, *r = s->read_waits;

	if (m == NULL || r == NULL)
		return; /* an older daemon */
	sbuf_printf(o,
	    "  lock waits: %llu moves, %llu waited for readers (max %.3f ms, "
	    "p99 %.3f ms); %llu reads, %llu waited for a move (max %.3f ms, "
	    "p99 %.3f ms)\n",
	    ULL(m->n), ULL(m->waited), (double)m->max_ns / 1e6,
	    (double)m->p99_ns / 1e6, ULL(r->n), ULL(r->waited),
	    (double)r->max_ns / 1e6, (double)r->p99_ns / 1e6);
	health_store_times(o, "puts", s->put_times);
	health_store_times(o, "passes", s->pass_times);
}

/*
 * What the store costs the flash and what it holds (doc/storage.md,
 * "Usage"). Nothing until the first maintenance pass has run.
 */
static void
health_store_usage(struct sbuf *o, const Vitals__StoreHealth *s)
{
	char span[32], hist[32], holds[32];

	if (s->io_err)
		sbuf_printf(o, "  written by the daemon: unknown (errno %d)\n",
		    -s->io_err);
	else if (s->io_span_ns > 0) {
		duration_format(span, sizeof(span), s->io_span_ns);
		sbuf_printf(o,
		    "  written by the daemon %.1f MiB per day (over the "
		    "last %s), %.1f MiB since the store opened\n",
		    (double)s->io_bytes_per_day / 1048576.0, span,
		    (double)s->io_written_bytes / 1048576.0);
	}
	health_store_spool(o, s);
	health_store_waits(o, s);
	if (s->history_windows == 0)
		return;
	duration_format(hist, sizeof(hist), s->history_ns);
	sbuf_printf(o, "  history %s in %llu windows", hist,
	    ULL(s->history_windows));
	if (s->bound_holds_ns > 0) {
		duration_format(holds, sizeof(holds), s->bound_holds_ns);
		sbuf_printf(o,
		    "; the size bound holds about %s at this density", holds);
	}
	sbuf_puts(o, "\n");
}

/* What the daemon runs with (doc/privileges.md) and what it cannot see. */
static void
health_privileges(struct sbuf *o, const Vitals__Privileges *p)
{
	size_t i;

	if (p->dropped)
		sbuf_printf(o, "Privileges: user %s (uid %u gid %u), groups",
		    p->user && *p->user ? p->user : "?", p->uid, p->gid);
	else
		sbuf_printf(o,
		    "Privileges: not dropped (uid %u gid %u), "
		    "groups",
		    p->uid, p->gid);
	if (p->n_groups == 0)
		sbuf_puts(o, " none");
	for (i = 0; i < p->n_groups; i++)
		sbuf_printf(o, "%s%u", i ? "," : " ", p->groups[i]);
	sbuf_puts(o, "; capabilities");
	if (p->n_capabilities == 0)
		sbuf_puts(o, " none");
	for (i = 0; i < p->n_capabilities; i++)
		sbuf_printf(o, "%s%s", i ? "," : " ", p->capabilities[i]);
	sbuf_printf(o, "; no_new_privs %s; seccomp %s%s\n",
	    p->no_new_privs ? "on" : "off", p->seccomp ? p->seccomp : "n/a",
	    p->verified ? "; verified" : "");
	if (p->unseen_state && !strcmp(p->unseen_state, "counted"))
		sbuf_printf(o,
		    "  processes hidden from the scan (hidepid): "
		    "%u\n",
		    p->procs_unseen);
	else if (p->unseen_state && !strcmp(p->unseen_state, "unknown"))
		sbuf_puts(o,
		    "  processes hidden from the scan (hidepid): "
		    "unknown (no cgroup list to count by)\n");
}

/* What makes the windows (doc/protocol.md, "Provenance"). */
static void
health_provenance(struct sbuf *o, const Vitals__Provenance *p)
{
	char booted[40];
	const char *src = p->fingerprint_source ? p->fingerprint_source : "";

	fmt_time(booted, sizeof(booted), p->btime_s * VITALS_NSEC_PER_SEC);
	sbuf_printf(o,
	    "Provenance: vitalsd %s; kernel %s; boot %s, booted %s "
	    "(btime %lld)\n  build fingerprint: ",
	    p->vitalsd_version && *p->vitalsd_version ? p->vitalsd_version :
							"?",
	    p->kernel_release && *p->kernel_release ? p->kernel_release : "?",
	    p->boot_id && *p->boot_id ? p->boot_id : "?", booted,
	    (long long)p->btime_s);
	if (!strcmp(src, "property"))
		sbuf_printf(o, "%s\n", p->build_fingerprint);
	else if (!strcmp(src, "none"))
		sbuf_puts(o, "none (no system properties: not Android)\n");
	else if (!strcmp(src, "unset"))
		sbuf_puts(o, "none (ro.build.fingerprint not set)\n");
	else
		sbuf_printf(o, "unknown (%s)\n", *src ? src : "not reported");
}

/* SIGHUP's rereads (doc/vitalsd.8.md, "Reload"). */
static void
health_config(struct sbuf *o, const Vitals__ConfigHealth *c)
{
	char when[40];

	sbuf_printf(o,
	    "  config: %u reloads (%u failed), %u keys applied, %u need a "
	    "restart",
	    c->reloads, c->failed, c->applied, c->refused);
	if (c->reloads) {
		fmt_time(when, sizeof(when), c->last_wall_ns);
		sbuf_printf(o, "; last %s: %s", when,
		    c->last && *c->last ? c->last : "?");
	}
	sbuf_putc(o, '\n');
}

void
fmt_health(struct sbuf *o, const Vitals__Health *h, const struct fmt_ctx *c)
{
	char up[16], left[16];

	duration_format(up, sizeof(up), (int64_t)h->uptime_ns);
	sbuf_printf(o, "vitalsd up %s, sampling every %u ms", up,
	    h->interval_ms);
	if (h->burst_until_mono_ns > c->now_mono_ns) {
		duration_format(left, sizeof(left),
		    h->burst_until_mono_ns - c->now_mono_ns);
		sbuf_printf(o, " (burst, %s left)", left);
	}
	sbuf_putc(o, '\n');
	if (h->provenance)
		health_provenance(o, h->provenance);
	if (h->config)
		health_config(o, h->config);
	if (h->last)
		health_window(o, h->last);
	else
		sbuf_puts(o, "Last window: none closed yet\n");
	if (h->last)
		fmt_fgbg_health(o, h->last);
	if (h->store) {
		const Vitals__StoreHealth *s = h->store;

		sbuf_printf(o,
		    "Store: %s, %llu bytes; windows written %llu, "
		    "write failures %llu, rolled up %llu, deleted by age %llu "
		    "by size %llu; corrupt moved aside %llu",
		    s->state && *s->state ? s->state : "n/a", ULL(s->db_bytes),
		    ULL(s->windows_written), ULL(s->write_failures),
		    ULL(s->windows_rolled), ULL(s->deleted_age),
		    ULL(s->deleted_size), ULL(s->corrupt_moved));
		if (s->corrupt_path && *s->corrupt_path)
			sbuf_printf(o, " (%s)", s->corrupt_path);
		sbuf_printf(o,
		    "\n  commit last %.3f ms max %.3f ms; queued "
		    "%u, dropped %llu\n",
		    (double)s->commit_ns_last / 1e6,
		    (double)s->commit_ns_max / 1e6, s->queued, ULL(s->dropped));
		if (s->last_err || (s->last_errmsg && *s->last_errmsg))
			sbuf_printf(o, "  last error %d: %s\n", s->last_err,
			    s->last_errmsg ? s->last_errmsg : "");
		if (s->open_retries || s->next_retry_ms)
			sbuf_printf(o,
			    "  open retried %llu times; next try in "
			    "%.1f s\n",
			    ULL(s->open_retries),
			    (double)s->next_retry_ms / 1e3);
		if (s->windows_salvaged || s->wal_damaged || s->shm_faults)
			sbuf_printf(o,
			    "  salvaged windows %llu, damaged WAL "
			    "%llu, -shm faults repaired %llu\n",
			    ULL(s->windows_salvaged), ULL(s->wal_damaged),
			    ULL(s->shm_faults));
		if (s->blob_errors)
			sbuf_printf(o,
			    "  task blobs refused by reads %llu (their rows "
			    "skipped, the rest of each window read)\n",
			    ULL(s->blob_errors));
		if (s->clock_suspect && !s->clock_confirmed)
			sbuf_printf(o,
			    "  wall clock %.1f h ahead of the stored "
			    "windows, not confirmed: deletions by wall time "
			    "wait (%llu windows held)\n",
			    (double)s->clock_ahead_ns / 3.6e12,
			    ULL(s->clock_held));
		if (s->clock_deferred)
			sbuf_printf(o,
			    "  maintenance passes that waited for "
			    "the wall clock %llu\n",
			    ULL(s->clock_deferred));
		health_store_usage(o, s);
	} else {
		sbuf_puts(o, "Store: n/a\n");
	}
	if (h->control) {
		const Vitals__ControlHealth *k = h->control;

		sbuf_printf(o,
		    "Control: %u connections; accepted %llu, "
		    "requests %llu, denied %llu, bad frames %llu, idle closed "
		    "%llu, overflow closed %llu, accept paused %llu, busy "
		    "%llu, refused at a cap %llu\n  store queries %llu "
		    "(slowest %.3f ms), queued %u\n",
		    k->connections, ULL(k->accepted), ULL(k->requests),
		    ULL(k->denied), ULL(k->bad_frames), ULL(k->idle_closed),
		    ULL(k->overflow_closed), ULL(k->accept_paused),
		    ULL(k->queries_busy), ULL(k->cap_refused), ULL(k->queries),
		    (double)k->query_ns_max / 1e6, k->queries_queued);
		if (k->query_threads)
			sbuf_printf(o,
			    "  read pool %u threads; answers cut at "
			    "the memory budget %llu; connections closed "
			    "idle %llu\n",
			    k->query_threads, ULL(k->queries_budget_cut),
			    ULL(k->readers_idle_closed));
	} else {
		sbuf_puts(o, "Control: n/a\n");
	}
	if (h->metrics) {
		const Vitals__MetricsHealth *x = h->metrics;

		sbuf_printf(o,
		    "Metrics: /metrics on %s: %u connections; accepted %llu, "
		    "scrapes %llu; refused: at the cap %llu, timed out %llu, "
		    "bad requests %llu, not found %llu, bad method %llu\n"
		    "  last page %llu bytes in %.3f ms (slowest %.3f ms)\n",
		    x->listen, x->connections, ULL(x->accepted),
		    ULL(x->scrapes), ULL(x->cap_refused), ULL(x->timed_out),
		    ULL(x->bad_requests), ULL(x->not_found), ULL(x->bad_method),
		    ULL(x->page_bytes), (double)x->render_ns_last / 1e6,
		    (double)x->render_ns_max / 1e6);
		if (x->accept_paused)
			sbuf_printf(o,
			    "  accept paused %llu times (no file "
			    "descriptors)\n",
			    ULL(x->accept_paused));
	}
	fmt_memory_health(o, h->memory);
	if (h->otlp) {
		const Vitals__OtlpHealth *x = h->otlp;
		char st[16];

		if (x->last_status > 0)
			snprintf(st, sizeof(st), "%d", x->last_status);
		else
			snprintf(st, sizeof(st), "%s",
			    x->last_status < 0 ? "no answer" : "none");
		sbuf_printf(o,
		    "OTLP: push to %s: queued %llu, sent %llu (%llu bytes), "
		    "waiting %u; failed %llu, retries %llu; dropped: queue "
		    "full %llu, refused %llu; rejected points %llu\n"
		    "  last status %s%s%s; last batch %llu points\n",
		    x->endpoint, ULL(x->queued), ULL(x->sent),
		    ULL(x->bytes_sent), x->queue_depth, ULL(x->failed),
		    ULL(x->retries), ULL(x->dropped_full),
		    ULL(x->dropped_rejected), ULL(x->rejected_points), st,
		    *x->last_error ? ": " : "", x->last_error,
		    ULL(x->points_last));
	}
	if (h->gpu_mem)
		fmt_gpumem_health(o, h->gpu_mem);
	if (h->gpu_freq)
		fmt_gpufreq_health(o, h->gpu_freq);
	if (h->syscalls)
		fmt_syscall_health(o, h->syscalls);
	fmt_trace_health(o, h->trace); /* ftrace, ATrace categories */
	fmt_hp_health(o, h->heapprofd);
	if (h->privileges)
		health_privileges(o, h->privileges);
	if (h->wss)
		fmt_wss_health(o, h->wss);
	if (h->bursts)
		fmt_burst_health(o, h->bursts);
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
