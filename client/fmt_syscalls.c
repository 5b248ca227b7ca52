/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals syscalls` as text: the tracer's state, then the (process,
 * syscall) rows by Σ latency with their percentiles, the calls over the
 * slow threshold, and what the tracer counted as lost or skipped
 * (doc/metrics.md, "Syscall latency"). Latencies in µs, sums in ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

/* ns as µs: one decimal under 100 µs */
static void
us(char *buf, size_t len, uint64_t ns)
{
	if (ns < 100000)
		snprintf(buf, len, "%.1f", (double)ns / 1e3);
	else
		snprintf(buf, len, "%.0f", (double)ns / 1e3);
}

static void
sc_label(char *buf, size_t len, const char *name, uint32_t nr)
{
	if (name && *name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "nr%u", nr);
}

static void
row(struct table *tb, const Vitals__SyscallRow *r)
{
	char a[48];

	if (r->tgid < 0) {
		snprintf(a, sizeof(a), "(other: %llu)",
		    (unsigned long long)r->rows);
		table_label(tb, a);
		table_label(tb, "-");
	} else {
		snprintf(a, sizeof(a), "%s/%d", r->comm, r->tgid);
		table_label(tb, a);
		sc_label(a, sizeof(a), r->name, r->nr);
		table_label(tb, a);
	}
	table_cell(tb, "%llu", (unsigned long long)r->count);
	table_cell(tb, "%llu", (unsigned long long)r->errors);
	table_cell(tb, "%.1f", (double)r->sum_ns / 1e6);
	us(a, sizeof(a), r->mean_ns);
	table_cell(tb, "%s", a);
	us(a, sizeof(a), r->p50_ns);
	table_cell(tb, "%s", a);
	us(a, sizeof(a), r->p99_ns);
	table_cell(tb, "%s", a);
	us(a, sizeof(a), r->max_ns);
	table_cell(tb, "%s", a);
}

static void
rows(struct sbuf *o, const Vitals__SyscallsAnswer *d)
{
	struct table *tb = table_new();
	size_t i;

	if (tb == NULL)
		return;
	table_col(tb, "process", 0, 2, TABLE_LEFT | TABLE_FLEX);
	table_col(tb, "syscall", 0, 1, TABLE_LEFT);
	table_col(tb, "calls", 0, 1, 0);
	table_col(tb, "err", 0, 1, 0);
	table_col(tb, "sum_ms", 0, 1, 0);
	table_col(tb, "mean_us", 0, 1, 0);
	table_col(tb, "p50_us", 0, 1, 0);
	table_col(tb, "p99_us", 0, 1, 0);
	table_col(tb, "max_us", 0, 1, 0);
	for (i = 0; i < d->n_rows; i++)
		row(tb, d->rows[i]);
	if (d->other)
		row(tb, d->other);
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
}

static void
slow(struct sbuf *o, const Vitals__SyscallsAnswer *d)
{
	struct table *tb = table_new();
	char a[48];
	size_t i;

	if (tb == NULL)
		return;
	table_col(tb, "enter_s", 0, 2, 0);
	table_col(tb, "tid", 0, 1, 0);
	table_col(tb, "thread", 0, 1, TABLE_LEFT | TABLE_FLEX);
	table_col(tb, "syscall", 0, 1, TABLE_LEFT);
	table_col(tb, "ret", 0, 1, 0);
	table_col(tb, "lat_ms", 0, 1, 0);
	for (i = 0; i < d->n_slow; i++) {
		const Vitals__SyscallSlow *s = d->slow[i];

		table_cell(tb, "%.3f", (double)s->boot_enter_ns / 1e9);
		table_cell(tb, "%d", s->tid);
		snprintf(a, sizeof(a), "%s/%d", s->comm, s->tgid);
		table_label(tb, a);
		sc_label(a, sizeof(a), s->name, s->nr);
		table_label(tb, a);
		table_cell(tb, "%lld", (long long)s->ret);
		table_cell(tb, "%.1f", (double)s->lat_ns / 1e6);
	}
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
}

static void
counters(struct sbuf *o, const Vitals__SyscallsAnswer *d)
{
	const Vitals__SyscallCounters *c = d->counters;

	if (c)
		sbuf_printf(o,
		    "\nlost or skipped: exit without enter %llu, nr mismatch "
		    "%llu, map full %llu, ring buffer full %llu, slow calls "
		    "not listed %llu, 32-bit calls %llu, drain errors %llu\n",
		    (unsigned long long)c->missing_enter,
		    (unsigned long long)c->mismatch,
		    (unsigned long long)c->map_full,
		    (unsigned long long)c->rb_full,
		    (unsigned long long)c->slow_dropped,
		    (unsigned long long)c->compat,
		    (unsigned long long)c->drain_errors);
	if (d->have_prog_stats)
		sbuf_printf(o,
		    "programs: %.3f ms in %llu runs (%.0f ns a run)\n",
		    (double)d->prog_run_ns / 1e6,
		    (unsigned long long)d->prog_run_cnt,
		    d->prog_run_cnt ?
			(double)d->prog_run_ns / (double)d->prog_run_cnt :
			0.0);
	else
		sbuf_puts(o, "programs: run time unknown (BPF stats off)\n");
}

void
fmt_syscalls(struct sbuf *o, const Vitals__SyscallsAnswer *d)
{
	const char *st = d && d->state ? d->state : "off";
	bool figs = d && (d->n_rows || d->other || d->n_slow);

	/* a range whose last window is off, unsupported or failed may still
	 * hold figures of earlier windows: the state, then those */
	if (figs && strcmp(st, "on") != 0) {
		sbuf_printf(o,
		    "syscalls: %s%s%s at the range's end; figures of the "
		    "windows before:\n",
		    st, d->err ? ": " : "",
		    d->err ? strerror(abs(d->err)) : "");
		st = "on";
	}
	if (d == NULL || strcmp(st, "off") == 0) {
		if (d && d->stored && d->windows == 0)
			sbuf_puts(o,
			    "syscalls: off (no stored window of the range has "
			    "the tracer's figures)\n");
		else
			sbuf_puts(o, "syscalls: off (syscall_trace = off)\n");
		return;
	}
	if (strcmp(st, "unsupported") == 0) {
		sbuf_printf(o, "syscalls: unsupported here (%s)\n",
		    d->err ? strerror(abs(d->err)) : "no BPF or tracepoint");
		return;
	}
	if (strcmp(st, "failed") == 0) {
		sbuf_printf(o, "syscalls: failed: %s\n",
		    d->err ? strerror(abs(d->err)) : "unknown error");
		return;
	}
	sbuf_printf(o,
	    "syscalls: %s, %s, %u window%s%s, floor %.1f us, slow %.1f ms\n",
	    st, d->arch && *d->arch ? d->arch : "unknown ABI", d->windows,
	    d->windows == 1 ? "" : "s", d->stored ? " stored" : "",
	    (double)d->floor_ns / 1e3, (double)d->slow_ns / 1e6);
	if (d->n_rows || d->other) {
		sbuf_puts(o, "\n");
		rows(o, d);
	} else {
		sbuf_puts(o, "no calls\n");
	}
	if (d->n_slow) {
		sbuf_printf(o, "\nslow calls (over %.1f ms)\n",
		    (double)d->slow_ns / 1e6);
		slow(o, d);
	}
	counters(o, d);
}

void
fmt_syscall_health(struct sbuf *o, const Vitals__SyscallHealth *h)
{
	const Vitals__SyscallCounters *c = h->counters;
	const char *st = h->state && *h->state ? h->state : "off";

	if (strcmp(st, "on") != 0) {
		sbuf_printf(o, "Syscalls: %s%s%s\n", st, h->err ? ": " : "",
		    h->err ? strerror(abs(h->err)) : "");
		return;
	}
	sbuf_printf(o,
	    "Syscalls: on, %u programs attached, %u syscalls traced, %llu "
	    "windows\n",
	    h->programs, h->traced, (unsigned long long)h->windows);
	if (h->have_prog_stats)
		sbuf_printf(o, "  programs: last window %llu runs, %.3f ms\n",
		    (unsigned long long)h->prog_run_cnt,
		    (double)h->prog_run_ns / 1e6);
	else
		sbuf_puts(o, "  programs: run time unknown (BPF stats off)\n");
	if (c)
		sbuf_printf(o,
		    "  since start: missing enter %llu, mismatch %llu, map "
		    "full %llu, ring full %llu, compat %llu\n",
		    (unsigned long long)c->missing_enter,
		    (unsigned long long)c->mismatch,
		    (unsigned long long)c->map_full,
		    (unsigned long long)c->rb_full,
		    (unsigned long long)c->compat);
	if (h->ring_bytes)
		sbuf_printf(o,
		    "  slow-call ring: %u B, wakes the loop at %u B; since "
		    "start %llu records read, %llu wake-ups, %llu tick and "
		    "drain reads\n",
		    h->ring_bytes, h->ring_wake_bytes,
		    (unsigned long long)h->ring_records,
		    (unsigned long long)h->ring_wakeups,
		    (unsigned long long)h->ring_reads);
}
