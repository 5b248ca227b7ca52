/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dumpsys-style text of a window. Every percentage is printed beside the
 * raw deltas and the denominator it came from; unknown values print "n/a".
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"
#include "taskiter/taskiter.h"
#include "window/window.h"

static double
pct(uint64_t num, uint64_t den)
{
	return den ? 100.0 * (double)num / (double)den : NAN;
}

static void
put_pct(struct vbuf *o, double v)
{
	if (isnan(v))
		vbuf_printf(o, "   n/a");
	else
		vbuf_printf(o, "%5.1f%%", v);
}

static void
dump_cpu_line(struct vbuf *o, const char *label, const struct window_cpu *c)
{
	uint64_t total = cpu_times_total(&c->d), busy = cpu_times_busy(&c->d);

	vbuf_printf(o, "  %-5s busy ", label);
	put_pct(o, pct(busy, total));
	vbuf_printf(o, " iowait ");
	put_pct(o, pct(c->d.iowait, total));
	vbuf_printf(o, " steal ");
	put_pct(o, pct(c->d.steal, total));
	vbuf_printf(o,
	    "  (busy %llu / total %llu ticks; user %llu nice %llu "
	    "sys %llu idle %llu iowait %llu irq %llu softirq %llu steal %llu; "
	    "%u samples)",
	    (unsigned long long)busy, (unsigned long long)total,
	    (unsigned long long)c->d.user, (unsigned long long)c->d.nice,
	    (unsigned long long)c->d.system, (unsigned long long)c->d.idle,
	    (unsigned long long)c->d.iowait, (unsigned long long)c->d.irq,
	    (unsigned long long)c->d.softirq, (unsigned long long)c->d.steal,
	    c->samples);
}

static void
dump_cpus(const struct window *w, struct vbuf *o)
{
	unsigned i;

	vbuf_printf(o, "CPU (USER_HZ %u):\n", w->hz);
	dump_cpu_line(o, "all", &w->all);
	vbuf_printf(o, "\n");
	for (i = 0; i < w->cpu_span; i++) {
		const struct window_cpu *c = &w->cpu[i];
		char label[16];

		snprintf(label, sizeof(label), "cpu%u", i);
		if (c->samples == 0 && !c->online_end) {
			vbuf_printf(o, "  %-5s offline\n", label);
			continue;
		}
		dump_cpu_line(o, label, c);
		if (c->cur_khz.n)
			vbuf_printf(o, " freq %.0f/%.0f/%.0f kHz (min/avg/max)",
			    c->cur_khz.min, gauge_avg(&c->cur_khz),
			    c->cur_khz.max);
		else
			vbuf_printf(o, " freq n/a");
		if (c->freq_ratio.n)
			vbuf_printf(o, " ratio %.2f",
			    gauge_avg(&c->freq_ratio));
		if (c->max_khz > 0)
			vbuf_printf(o, " max %lld kHz", (long long)c->max_khz);
		if (c->capacity >= 0)
			vbuf_printf(o, " capacity %d", c->capacity);
		vbuf_printf(o, "\n");
	}
}

static void
dump_system(const struct window *w, struct vbuf *o)
{
	unsigned i;

	vbuf_printf(o, "Context switches: %llu, forks: %llu\n",
	    (unsigned long long)w->d_ctxt, (unsigned long long)w->d_processes);
	if (w->load1.n)
		vbuf_printf(o,
		    "Load: %.2f %.2f %.2f (last), runnable %.0f "
		    "of %.0f threads\n",
		    w->load1.last, w->load5.last, w->load15.last,
		    w->load_runnable.last, w->load_threads.last);
	else
		vbuf_printf(o, "Load: n/a\n");
	for (i = 0; i < PSI__MAX; i++) {
		const struct window_psi *p = &w->psi[i];

		if (!p->available) {
			vbuf_printf(o, "PSI %-6s unavailable\n",
			    psi_res_name(i));
			continue;
		}
		vbuf_printf(o, "PSI %-6s some stalled %llu us", psi_res_name(i),
		    (unsigned long long)p->d_some_us);
		if (p->have_full)
			vbuf_printf(o, ", full %llu us",
			    (unsigned long long)p->d_full_us);
		vbuf_printf(o, " over %.3f s; some avg10 max %.2f%%\n",
		    (double)w->all.wall_ns / NSEC_PER_SEC, p->some_avg10.max);
	}
	vbuf_printf(o, "vmstat deltas:");
	for (i = 0; i < VM__MAX; i++)
		if (w->vm_have & (1u << i))
			vbuf_printf(o, " %s %llu", vmstat_key_name(i),
			    (unsigned long long)w->d_vm[i]);
	vbuf_printf(o, "\nmeminfo (kB, last):");
	for (i = 0; i < MI__MAX; i++)
		if (w->mem_have & (1u << i))
			vbuf_printf(o, " %s %.0f", meminfo_key_name(i),
			    w->mem_kb[i].last);
	vbuf_printf(o, "\n");
}

static int
cmp_cpu_desc(const void *a, const void *b)
{
	const struct window_task *x = *(const struct window_task *const *)a;
	const struct window_task *y = *(const struct window_task *const *)b;
	uint64_t cx = x->d_utime + x->d_stime, cy = y->d_utime + y->d_stime;

	if (cx != cy)
		return cx < cy ? 1 : -1;
	if (x->d_majflt != y->d_majflt)
		return x->d_majflt < y->d_majflt ? 1 : -1;
	return x->id - y->id;
}

static void
put_figure(struct vbuf *o, double v)
{
	if (isnan(v))
		vbuf_printf(o, "    n/a");
	else
		vbuf_printf(o, " %5.1f%%", 100.0 * v);
}

static int
dump_tasks(const struct window *w, bool threads, unsigned topn, struct vbuf *o)
{
	const struct window_task *arr = threads ? w->threads : w->procs;
	size_t n = threads ? w->nthreads : w->nprocs, i;
	const struct window_task **v;

	vbuf_printf(o, "%s with activity: %zu (top %u by CPU)\n",
	    threads ? "Threads" : "Processes", n, topn);
	if (n == 0)
		return 0;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = &arr[i];
	qsort(v, n, sizeof(*v), cmp_cpu_desc);
	vbuf_printf(o, "  %7s %7s %6s  %7s %7s %7s  %6s %6s %8s %6s  %s\n",
	    threads ? "tid" : "pid", "tgid", "uid", "core", "share", "norm",
	    "utime", "stime", "minflt", "majflt", "name");
	for (i = 0; i < n && i < topn; i++) {
		const struct window_task *t = v[i];
		uint64_t cpu = t->d_utime + t->d_stime;

		vbuf_printf(o, "  %7d %7d %6u ", t->id, t->tgid, t->uid);
		put_figure(o, metric_core_equiv(cpu, t->wall_ns, w->hz));
		put_figure(o, metric_machine_share(cpu, t->total_ticks));
		put_figure(o, metric_normalised(cpu, t->norm_ticks));
		vbuf_printf(o, "  %6llu %6llu %8llu %6llu  %s%s%s\n",
		    (unsigned long long)t->d_utime,
		    (unsigned long long)t->d_stime,
		    (unsigned long long)t->d_minflt,
		    (unsigned long long)t->d_majflt, window_task_name(t),
		    t->born ? " [new]" : "", t->exited ? " [exited]" : "");
	}
	free(v);
	return 0;
}

static void
dump_health(const struct window *w, struct vbuf *o)
{
	unsigned i;

	vbuf_printf(o, "Collector: samples %u valid %u (burst %u, late %u)\n",
	    w->samples, w->samples_valid, w->health.burst_samples,
	    w->health.late_ticks);
	vbuf_printf(o, "  invalid samples:");
	for (i = 0; i < INV__MAX; i++)
		vbuf_printf(o, " %s %u", invalid_name(i), w->inv_samples[i]);
	vbuf_printf(o, "\n  dropped deltas:");
	for (i = 0; i < INV__MAX; i++)
		vbuf_printf(o, " %s %u", invalid_name(i), w->inv_deltas[i]);
	vbuf_printf(o,
	    "\n  own cpu: user %llu us sys %llu us; scanned %u "
	    "procs %u threads; exited %u procs %u threads\n",
	    (unsigned long long)w->health.self_utime_us,
	    (unsigned long long)w->health.self_stime_us,
	    w->health.procs_scanned, w->health.threads_scanned,
	    w->health.procs_exited, w->health.threads_exited);
	vbuf_printf(o, "  process scan: %s", scanner_name(w->health.scanner));
	if (w->health.scanner_why != SCANNER_WHY_NONE)
		vbuf_printf(o, " (task iterator: %s%s%s)",
		    scanner_why_name(w->health.scanner_why),
		    w->health.scanner_err ? ", " : "",
		    w->health.scanner_err ?
			strerror((int)w->health.scanner_err) :
			"");
	if (w->health.iter_failed)
		vbuf_printf(o, "; %u iterator reads failed, /proc stood in",
		    w->health.iter_failed);
	if (w->health.samples_full || w->health.samples_partial)
		vbuf_printf(o,
		    "\n  process samples: %u full, %u partial (last %u tasks, "
		    "%u replaced, %u gone unknown); partial %s",
		    w->health.samples_full, w->health.samples_partial,
		    w->health.partial_records, w->health.partial_doubts,
		    w->health.partial_gone_unknown,
		    w->health.partial_why == PARTIAL_WHY_NONE ?
			"on" :
			partial_why_name(w->health.partial_why));
	if (w->health.walks_off_loop || w->health.walks_dropped)
		vbuf_printf(o,
		    "\n  full walks off the loop: %u (%u dropped), longest "
		    "wait %.3f ms",
		    w->health.walks_off_loop, w->health.walks_dropped,
		    (double)w->health.walk_wait_ns_max / 1e6);
	vbuf_printf(o, "\n  cost per sample (avg/max us):");
	for (i = 0; i < COLL__MAX; i++)
		vbuf_printf(o, " %s %llu/%llu", coll_name(i),
		    (unsigned long long)(w->samples ?
			    w->health.coll_ns_sum[i] / w->samples / 1000 :
			    0),
		    (unsigned long long)(w->health.coll_ns_max[i] / 1000));
	vbuf_printf(o, "\n");
}

int
dump_window(const struct window *w, unsigned topn, struct vbuf *out)
{
	unsigned i;
	int r;

	vbuf_printf(out,
	    "Window %llu: %.3f s (monotonic %lld..%lld ns, "
	    "boottime %lld..%lld ns, interval %u ms)\n",
	    (unsigned long long)w->seq,
	    (double)(w->mono_end_ns - w->mono_start_ns) / NSEC_PER_SEC,
	    (long long)w->mono_start_ns, (long long)w->mono_end_ns,
	    (long long)w->boot_start_ns, (long long)w->boot_end_ns,
	    w->interval_ms);
	dump_cpus(w, out);
	dump_system(w, out);
	if ((r = dump_tasks(w, false, topn, out)) < 0)
		return r;
	if ((r = dump_tasks(w, true, topn, out)) < 0)
		return r;
	dump_health(w, out);
	for (i = 0; i < WPART__MAX; i++)
		if (w->part[i] != NULL)
			window_parts[i]->dump(w, topn, out);
	return 0;
}

void
dump_summary_line(const struct window *w, struct vbuf *out)
{
	unsigned i;
	uint64_t total = cpu_times_total(&w->all.d);

	vbuf_printf(out, "window %llu: %.2f s, samples %u/%u valid, cpu busy ",
	    (unsigned long long)w->seq,
	    (double)(w->mono_end_ns - w->mono_start_ns) / NSEC_PER_SEC,
	    w->samples_valid, w->samples);
	put_pct(out, pct(cpu_times_busy(&w->all.d), total));
	vbuf_printf(out,
	    " of %llu ticks, %zu procs %zu threads active, "
	    "scanned %u/%u, own cpu %llu us",
	    (unsigned long long)total, w->nprocs, w->nthreads,
	    w->health.procs_scanned, w->health.threads_scanned,
	    (unsigned long long)(w->health.self_utime_us +
		w->health.self_stime_us));
	for (i = 0; i < WPART__MAX; i++)
		if (w->part[i] != NULL && window_parts[i]->summary != NULL)
			window_parts[i]->summary(w, out);
}
