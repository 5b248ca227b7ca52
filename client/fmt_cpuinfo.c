/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The summary (`vitals` with no command): first what `dumpsys cpuinfo`
 * prints (AOSP's ProcessCpuTracker: printCurrentLoad, then
 * printCurrentState), line for line and with its arithmetic, so parsers
 * of that text read vitals' too; then, after one blank line, what vitals
 * knows beyond it. doc/vitals.1.md states the format's rules and
 * doc/metrics.md its formulas. Where AOSP would print a number for
 * something unknown (no denominator, no reading), this prints "n/a".
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

/*
 * AOSP's printRatio: the whole per mille truncated, its tens printed; a
 * tenth digit only below 10 and only when not 0 ("0.5", "5", "9.9",
 * "10", "150"). Truncation, never rounding.
 */
void
fmt_aosp_ratio(char *buf, size_t len, uint64_t num, uint64_t den)
{
	uint64_t thousands, hundreds, rem;

	if (den == 0) {
		snprintf(buf, len, "n/a");
		return;
	}
	/* 128 bits: num × 1000 does not wrap for any 64-bit count */
	thousands = (uint64_t)((unsigned __int128)num * 1000 / den);
	hundreds = thousands / 10;
	rem = thousands - hundreds * 10;
	if (hundreds < 10 && rem != 0)
		snprintf(buf, len, "%llu.%llu", ULL(hundreds), ULL(rem));
	else
		snprintf(buf, len, "%llu", ULL(hundreds));
}

/*
 * Java's Float.toString for a load average (printCurrentLoad prints
 * floats): the fewest decimals that read back as the same float, at
 * least one ("0.0", "1.5", "12.34"). Loads live in [0.001, 10⁷), where
 * Java prints no exponent.
 */
void
fmt_java_float(char *buf, size_t len, double v)
{
	float f = (float)v;
	int d;

	if (!isfinite(v)) {
		snprintf(buf, len, "n/a");
		return;
	}
	for (d = 1; d < 9; d++) {
		snprintf(buf, len, "%.*f", d, (double)f);
		if ((float)strtod(buf, NULL) == f)
			return;
	}
	snprintf(buf, len, "%.9f", (double)f);
}

/*
 * AOSP's order (sLoadComparator): CPU time descending; on a tie, new
 * processes first, then gone ones; then its list's own order, by pid.
 */
static int
cmp_aosp(const void *a, const void *b)
{
	const Vitals__Task *x = *(const Vitals__Task *const *)a;
	const Vitals__Task *y = *(const Vitals__Task *const *)b;
	uint64_t cx = x->d_utime + x->d_stime, cy = y->d_utime + y->d_stime;

	if (cx != cy)
		return cx < cy ? 1 : -1;
	if (x->born != y->born)
		return x->born ? -1 : 1;
	if (x->exited != y->exited)
		return x->exited ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* A sorted copy of the pointer array (the message stays untouched). */
static Vitals__Task **
tasks_sorted(Vitals__Task *const *v, size_t n)
{
	Vitals__Task **s;

	if (n == 0 || (s = calloc(n, sizeof(*s))) == NULL)
		return NULL;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_aosp);
	return s;
}

/* printCurrentLoad: "Load: 1.5 / 0.75 / 0.6". */
static void
cpuinfo_load(struct sbuf *o, const Vitals__Window *w)
{
	const Vitals__Gauge *g[3] = { w->load1, w->load5, w->load15 };
	char b[32];
	int i;

	sbuf_puts(o, "Load:");
	for (i = 0; i < 3; i++) {
		if (g[i] && g[i]->n)
			fmt_java_float(b, sizeof(b), g[i]->last);
		else
			snprintf(b, sizeof(b), "n/a");
		sbuf_printf(o, "%s %s", i ? " /" : "", b);
	}
	sbuf_putc(o, '\n');
}

/*
 * "CPU usage from Xms to Yms ago (START to END)[ with P% awake]:" — X and
 * Y from the uptime clock in whole ms (AOSP subtracts ms readings), the
 * parentheses hold exactly the two local times. P: the share of the span
 * the device was awake (uptime over boot time, AOSP's integer division),
 * printed when it is not 100; left out when the window has no boot-time
 * span (unknown, where AOSP would print 0).
 */
static void
cpuinfo_header(struct sbuf *o, const Vitals__Window *w, const struct fmt_ctx *c)
{
	long long now = c->now_mono_ns / 1000000;
	long long last = w->mono_start_ns / 1000000;
	long long cur = w->mono_end_ns / 1000000;
	long long boot = w->boot_end_ns / 1000000 - w->boot_start_ns / 1000000;
	char from[40], to[40];

	if (now > last)
		sbuf_printf(o, "CPU usage from %lldms to %lldms ago",
		    now - last, now - cur);
	else
		sbuf_printf(o, "CPU usage from %lldms to %lldms later",
		    last - now, cur - now);
	fmt_time(from, sizeof(from), w->wall_start_ns);
	fmt_time(to, sizeof(to), w->wall_end_ns);
	sbuf_printf(o, " (%s to %s)", from, to);
	if (w->boot_start_ns > 0 && boot > 0) {
		long long awake = (cur - last) * 100 / boot;

		if (awake != 100)
			sbuf_printf(o, " with %lld%% awake", awake);
	}
	sbuf_puts(o, ":\n");
}

/*
 * printProcessCPU for a process: "  P% PID/NAME: U% user + S% kernel"
 * and " / faults: N minor M major" (each part only when not 0). The
 * denominator is the process's own sampled time (AOSP: its uptime between
 * two reads of its stat), the numerator its ticks in ms, so 100 % is one
 * core. The mark is AOSP's two-character prefix: " +" new, " -" gone.
 */
static void
cpuinfo_task(struct sbuf *o, const Vitals__Task *t, uint32_t hz)
{
	uint64_t jiffy_ms = hz && hz <= 1000 ? 1000 / hz : 0;
	uint64_t den = jiffy_ms ? t->wall_ns / 1000000 : 0;
	char p[32], u[32], k[32];

	fmt_aosp_ratio(p, sizeof(p), (t->d_utime + t->d_stime) * jiffy_ms, den);
	fmt_aosp_ratio(u, sizeof(u), t->d_utime * jiffy_ms, den);
	fmt_aosp_ratio(k, sizeof(k), t->d_stime * jiffy_ms, den);
	sbuf_printf(o, "%s%s%s %d/",
	    t->born	  ? " +" :
		t->exited ? " -" :
			    "  ",
	    p, den ? "%" : "", t->id);
	fmt_label(o, fmt_task_label(t));
	sbuf_printf(o, ": %s%s user + %s%s kernel", u, den ? "%" : "", k,
	    den ? "%" : "");
	if (t->d_minflt || t->d_majflt) {
		sbuf_puts(o, " / faults:");
		if (t->d_minflt)
			sbuf_printf(o, " %llu minor", ULL(t->d_minflt));
		if (t->d_majflt)
			sbuf_printf(o, " %llu major", ULL(t->d_majflt));
	}
	sbuf_putc(o, '\n');
}

static void
put_part(struct sbuf *o, const char *sep, uint64_t v, uint64_t den,
    const char *what)
{
	char b[32];

	fmt_aosp_ratio(b, sizeof(b), v, den);
	sbuf_printf(o, "%s%s%s %s", sep, b, den ? "%" : "", what);
}

/*
 * printProcessCPU for TOTAL: no prefix; of the aggregate line's user +
 * nice, system, iowait, irq, softirq and idle (AOSP reads those seven
 * fields: steal is in neither the numerator nor the denominator, guest is
 * inside user). P% counts iowait, irq and softirq as used; each of those
 * three is printed only when not 0.
 */
static void
cpuinfo_total(struct sbuf *o, const Vitals__Cpu *all)
{
	const Vitals__CpuTimes *d = all ? all->d : NULL;
	uint64_t used = 0, total = 0;

	if (d) {
		used = d->user + d->nice + d->system + d->iowait + d->irq +
		    d->softirq;
		total = used + d->idle;
	}
	put_part(o, "", used, total, "TOTAL:");
	put_part(o, " ", d ? d->user + d->nice : 0, total, "user");
	put_part(o, " + ", d ? d->system : 0, total, "kernel");
	if (d && d->iowait)
		put_part(o, " + ", d->iowait, total, "iowait");
	if (d && d->irq)
		put_part(o, " + ", d->irq, total, "irq");
	if (d && d->softirq)
		put_part(o, " + ", d->softirq, total, "softirq");
	sbuf_putc(o, '\n');
}

/* ------------------------------------------------ vitals' own section */

static void
put_gauge_last(struct sbuf *o, const Vitals__Gauge *g, const char *fmt)
{
	if (g == NULL || g->n == 0)
		sbuf_puts(o, "n/a");
	else
		sbuf_printf(o, fmt, g->last);
}

/* One process with vitals' decimals: core-equivalent, machine share. */
static void
extra_task(struct sbuf *o, const Vitals__Task *t, uint32_t hz)
{
	uint64_t cpu = t->d_utime + t->d_stime;
	char ce[16], ms[16];

	fmt_pct(ce, sizeof(ce), fig_core_equiv(cpu, t->wall_ns, hz));
	fmt_pct(ms, sizeof(ms), fig_machine_share(cpu, t->total_ticks));
	sbuf_printf(o, "  %c %7d %7s %6s %7llu %7llu  ",
	    t->born	  ? '+' :
		t->exited ? '-' :
			    ' ',
	    t->id, ce, ms, ULL(t->d_utime), ULL(t->d_stime));
	/* the columns before the name take 44 */
	text_label(o, fmt_task_label(t), TEXT_WIDTH - 44);
	sbuf_putc(o, '\n');
}

/* The aggregate line as vitals counts it: busy excludes iowait, the
 * total includes steal. */
static void
extra_cpu(struct sbuf *o, const Vitals__Cpu *all)
{
	const Vitals__CpuTimes *d = all ? all->d : NULL;
	uint64_t total = fig_cpu_total(d);
	char b[16], u[16], k[16], q[16], s[16], io[16], st[16], id[16];

	fmt_pct(b, sizeof(b), fig_ratio(fig_cpu_busy(d), total));
	fmt_pct(u, sizeof(u), fig_ratio(d ? d->user + d->nice : 0, total));
	fmt_pct(k, sizeof(k), fig_ratio(d ? d->system : 0, total));
	fmt_pct(q, sizeof(q), fig_ratio(d ? d->irq : 0, total));
	fmt_pct(s, sizeof(s), fig_ratio(d ? d->softirq : 0, total));
	fmt_pct(io, sizeof(io), fig_ratio(d ? d->iowait : 0, total));
	fmt_pct(st, sizeof(st), fig_ratio(d ? d->steal : 0, total));
	fmt_pct(id, sizeof(id), fig_ratio(d ? d->idle : 0, total));
	sbuf_printf(o,
	    "CPU busy %s = user %s + kernel %s + irq %s + softirq %s\n"
	    "  iowait %s, steal %s, idle %s; of %llu ticks, all CPUs\n",
	    b, u, k, q, s, io, st, id, ULL(total));
}

static void
extra_pressure(struct sbuf *o, const Vitals__Window *w)
{
	uint64_t wall = w->all ? w->all->wall_ns : 0;
	char span[16], s[16], f[16];
	size_t i;

	if (w->n_psi == 0) {
		sbuf_puts(o, "Pressure: n/a\n");
		return;
	}
	duration_format(span, sizeof(span), (int64_t)wall);
	sbuf_printf(o, "Pressure (stalled share of %s):", span);
	for (i = 0; i < w->n_psi; i++) {
		const Vitals__Psi *p = w->psi[i];

		sbuf_printf(o, "%s%s %s", i ? "," : "", i ? "\n " : "",
		    p->resource);
		if (!p->available) {
			sbuf_puts(o, " unavailable");
			continue;
		}
		fmt_pct(s, sizeof(s), fig_psi_share(p->d_some_us, wall));
		fmt_pct(f, sizeof(f),
		    p->have_full ? fig_psi_share(p->d_full_us, wall) : NAN);
		sbuf_printf(o, " some %s full %s", s, f);
	}
	sbuf_putc(o, '\n');
}

static void
extra_memory(struct sbuf *o, const Vitals__Window *w)
{
	static const char *const mem[] = { "MemTotal", "MemAvailable",
		"SwapTotal", "SwapFree" };
	static const char *const vm[] = { "pgfault", "pgmajfault", "pswpin",
		"pswpout" };
	size_t i;

	sbuf_puts(o, "Memory (kB, last):");
	for (i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
		const Vitals__NamedGauge *g = fig_meminfo(w, mem[i]);

		sbuf_printf(o, "%s %s ",
		    i == 2 ? ",\n " :
			i  ? "," :
			     "",
		    mem[i]);
		put_gauge_last(o, g ? g->gauge : NULL, "%.0f");
	}
	sbuf_puts(o, "\nvmstat (window deltas):");
	for (i = 0; i < sizeof(vm) / sizeof(vm[0]); i++) {
		const Vitals__Counter *c = fig_counter(w->vmstat, w->n_vmstat,
		    vm[i]);

		if (c)
			sbuf_printf(o, "%s %s %llu", i ? "," : "", vm[i],
			    ULL(c->value));
		else
			sbuf_printf(o, "%s %s n/a", i ? "," : "", vm[i]);
	}
	sbuf_putc(o, '\n');
}

static void
cpuinfo_extra(struct sbuf *o, const Vitals__Window *w, Vitals__Task **s)
{
	size_t i;

	sbuf_printf(o,
	    "vitals: window %llu (level %u), %u/%u samples valid, "
	    "USER_HZ %u\n",
	    ULL(w->seq), w->level, w->samples_valid, w->samples, w->hz);
	sbuf_puts(o,
	    "  (core: 100% = one core, as above; share: of all "
	    "CPUs' time)\n");
	sbuf_printf(o, "  %c %7s %7s %6s %7s %7s  %s\n", ' ', "pid", "core",
	    "share", "utime", "stime", "name");
	for (i = 0; s && i < w->n_procs; i++)
		extra_task(o, s[i], w->hz);
	if (w->nprocs_total > w->n_procs)
		sbuf_printf(o, "  (%llu more processes with activity)\n",
		    ULL(w->nprocs_total - w->n_procs));
	extra_cpu(o, w->all);
	extra_pressure(o, w);
	extra_memory(o, w);
}

void
fmt_summary(struct sbuf *o, const Vitals__Window *w, const struct fmt_ctx *c)
{
	Vitals__Task **s;
	size_t i;

	cpuinfo_load(o, w);
	cpuinfo_header(o, w, c);
	s = tasks_sorted(w->procs, w->n_procs);
	for (i = 0; s && i < w->n_procs; i++)
		cpuinfo_task(o, s[i], w->hz);
	cpuinfo_total(o, w->all);
	if (!c->dumpsys_only) {
		sbuf_putc(o, '\n');
		cpuinfo_extra(o, w, s);
	}
	free(s);
}
