/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The series of the OTLP request, one function a family (system, processes,
 * cgroups, BPF, GPU, syscalls, health), written with otlp_build.c's
 * builder. Pure, like it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sysnames.h"
#include "export/export.h"
#include "export/otlp.h"
#include "otlp_metrics.pb-c.h"
#include "window/window.h"
#include "otlp_enc.h"

/* ---------------------------------------------------------------- system */

void
otlp_enc_cpu(struct enc *e, const struct sys_sample *s, unsigned hz)
{
	uint64_t v[EXPORT_CPU_MODES];
	unsigned i, m;

	if (s->stat_err)
		return;
	e->start_ns = otlp_wall_of(e, 0);
	otlp_metric(e, "system.cpu.time", SUM_D, "s",
	    "Seconds each logical CPU spent in each mode (/proc/stat cpuN).");
	for (i = 0; i < s->stat.cpu_span && i < VITALS_CPU_MAX; i++) {
		if (!s->stat.online[i])
			continue;
		export_cpu_fields(&s->stat.cpu[i], v);
		for (m = 0; m < EXPORT_CPU_MODES; m++) {
			otlp_attr_i(e, "cpu.logical_number", i);
			otlp_attr_s(e, "cpu.mode", export_cpu_modes[m]);
			otlp_point_ratio(e, v[m], hz);
		}
	}
	otlp_metric(e, "vitals.cpu.time", SUM_D, "s",
	    "CPU seconds of all CPUs by mode (/proc/stat's cpu line).");
	export_cpu_fields(&s->stat.all, v);
	for (m = 0; m < EXPORT_CPU_MODES; m++) {
		otlp_attr_s(e, "cpu.mode", export_cpu_modes[m]);
		otlp_point_ratio(e, v[m], hz);
	}
	otlp_metric(e, "vitals.cpus.online", GAUGE_I, "{cpu}",
	    "Logical CPUs online (cpuN lines in /proc/stat).");
	otlp_point_i(e, s->stat.ncpu_online);
}

void
otlp_enc_psi(struct enc *e, const struct sys_sample *s)
{
	static const char *const res[PSI__MAX] = { "cpu", "memory", "io" };
	static const char *const win[3] = { "10s", "60s", "300s" };
	unsigned i, k, a;
	bool any = false;

	for (i = 0; i < PSI__MAX; i++)
		any |= s->psi_err[i] == 0;
	if (!any)
		return;
	e->start_ns = otlp_wall_of(e, 0);
	otlp_metric(e, "vitals.pressure.stall.time", SUM_D, "s",
	    "Time some or all tasks stalled on a resource (PSI total=).");
	for (i = 0; i < PSI__MAX; i++)
		for (k = 0; k < 2 && !s->psi_err[i]; k++) {
			if (k && !s->psi[i].have_full)
				continue;
			otlp_attr_s(e, "resource", res[i]);
			otlp_attr_s(e, "kind", k ? "full" : "some");
			otlp_point_ratio(e,
			    k ? s->psi[i].full.total_us :
				s->psi[i].some.total_us,
			    1000000);
		}
	otlp_metric(e, "vitals.pressure.ratio", GAUGE_D, "1",
	    "Share of time stalled, the kernel's running averages (PSI avg).");
	for (i = 0; i < PSI__MAX; i++)
		for (k = 0; k < 2 && !s->psi_err[i]; k++) {
			const struct psi_line *l = k ? &s->psi[i].full :
						       &s->psi[i].some;
			const double avg[3] = { l->avg10, l->avg60, l->avg300 };

			if (k && !s->psi[i].have_full)
				continue;
			for (a = 0; a < 3; a++) {
				otlp_attr_s(e, "resource", res[i]);
				otlp_attr_s(e, "kind", k ? "full" : "some");
				otlp_attr_s(e, "window", win[a]);
				otlp_point_d(e, avg[a] / 100.0);
			}
		}
}

#define MI(k) ((s->mem.have & (1u << (k))) != 0)

void
otlp_enc_mem(struct enc *e, const struct sys_sample *s)
{
	const uint64_t *kb = s->mem.kb;

	if (s->mem_err || !MI(MI_MEMTOTAL) || !MI(MI_MEMFREE))
		return;
	otlp_metric(e, "system.memory.limit", GAUGE_I, "By",
	    "Memory the kernel manages (MemTotal).");
	otlp_point_i(e, kb[MI_MEMTOTAL] * 1024);
	if (MI(MI_BUFFERS) && MI(MI_CACHED)) {
		uint64_t rest = kb[MI_MEMFREE] + kb[MI_BUFFERS] + kb[MI_CACHED];

		otlp_metric(e, "system.memory.usage", GAUGE_I, "By",
		    "Memory by state; used = MemTotal - MemFree - Buffers - "
		    "Cached.");
		otlp_attr_s(e, "system.memory.state", "used");
		otlp_point_i(e,
		    (kb[MI_MEMTOTAL] > rest ? kb[MI_MEMTOTAL] - rest : 0) *
			1024);
		otlp_attr_s(e, "system.memory.state", "free");
		otlp_point_i(e, kb[MI_MEMFREE] * 1024);
		otlp_attr_s(e, "system.memory.state", "buffers");
		otlp_point_i(e, kb[MI_BUFFERS] * 1024);
		otlp_attr_s(e, "system.memory.state", "cached");
		otlp_point_i(e, kb[MI_CACHED] * 1024);
	}
	if (MI(MI_MEMAVAILABLE)) {
		otlp_metric(e, "vitals.memory.available", GAUGE_I, "By",
		    "The kernel's estimate of memory available without "
		    "swapping (MemAvailable).");
		otlp_point_i(e, kb[MI_MEMAVAILABLE] * 1024);
	}
	if (MI(MI_SWAPTOTAL) && MI(MI_SWAPFREE)) {
		uint64_t t = kb[MI_SWAPTOTAL], f = kb[MI_SWAPFREE];

		otlp_metric(e, "system.paging.usage", GAUGE_I, "By",
		    "Swap space by state (SwapTotal, SwapFree).");
		otlp_attr_s(e, "system.paging.state", "used");
		otlp_point_i(e, (t > f ? t - f : 0) * 1024);
		otlp_attr_s(e, "system.paging.state", "free");
		otlp_point_i(e, f * 1024);
	}
}

#define VM(k) ((s->vm.have & (1u << (k))) != 0)

void
otlp_enc_vm(struct enc *e, const struct sys_sample *s)
{
	unsigned i;

	if (s->vm_err)
		return;
	e->start_ns = otlp_wall_of(e, 0);
	if (VM(VM_PGFAULT) && VM(VM_PGMAJFAULT)) {
		uint64_t all = s->vm.v[VM_PGFAULT],
			 maj = s->vm.v[VM_PGMAJFAULT];

		otlp_metric(e, "system.paging.faults", SUM_I, "{fault}",
		    "Page faults; minor = pgfault - pgmajfault (/proc/vmstat).");
		otlp_attr_s(e, "system.paging.fault.type", "minor");
		otlp_point_i(e, all > maj ? all - maj : 0);
		otlp_attr_s(e, "system.paging.fault.type", "major");
		otlp_point_i(e, maj);
	}
	otlp_metric(e, "vitals.vmstat.events", SUM_I, "{event}",
	    "Other /proc/vmstat counters vitalsd keeps, by key.");
	for (i = 0; i < VM__MAX; i++) {
		if (i == VM_PGFAULT || i == VM_PGMAJFAULT || !VM(i))
			continue;
		otlp_attr_s(e, "event", vmstat_key_name(i));
		otlp_point_i(e, s->vm.v[i]);
	}
}

/* ------------------------------------------------------------- processes */

/*
 * A process series: pid, its creation time (process.creation.time, ISO
 * 8601 as the conventions say, from the fixed boot time, so a series'
 * attributes never change) and its exact start in ticks after boot
 * (vitals.process.start_ticks: the identity with the pid, exact across
 * daemon restarts), comm. The Sum starts at the process's start.
 */
static void
attr_proc(struct enc *e, const struct export_state *st,
    const struct export_proc *p)
{
	int64_t ns = otlp_wall_of(e,
	    (int64_t)(p->starttime * NSEC_PER_SEC / (st->hz ? st->hz : 100)));
	time_t sec = (time_t)(ns / NSEC_PER_SEC);
	char iso[48], frac[16];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(frac, sizeof(frac), ".%09lldZ",
	    (long long)(ns % NSEC_PER_SEC));
	strncat(iso, frac, sizeof(iso) - strlen(iso) - 1);
	otlp_attr_i(e, "process.pid", p->pid);
	otlp_attr_s(e, "process.creation.time", iso);
	otlp_attr_i(e, "vitals.process.start_ticks", (int64_t)p->starttime);
	otlp_attr_s(e, "process.executable.name", p->comm);
	e->start_ns = ns;
}

void
otlp_enc_procs(struct enc *e, const struct export_state *st)
{
	const struct export_sums *u = &st->sum;
	int64_t since = otlp_wall_of(e, st->first_boot_ns);
	unsigned i, k;

	if (st->samples == 0)
		return;
	otlp_metric(e, "process.cpu.time", SUM_D, "s",
	    "CPU seconds of a process since it started (utime, stime); the "
	    "top N, then the rest since vitalsd started.");
	for (i = 0; i < st->ntop; i++) {
		const struct export_proc *p = &st->procs[st->top[i]];

		for (k = 0; k < 2; k++) {
			attr_proc(e, st, p);
			otlp_attr_s(e, "cpu.mode", k ? "system" : "user");
			otlp_point_ratio(e, k ? p->stime : p->utime, st->hz);
		}
	}
	e->start_ns = since;
	for (k = 0; k < 2; k++) {
		otlp_attr_s(e, "process.executable.name", "other");
		otlp_attr_s(e, "cpu.mode", k ? "system" : "user");
		otlp_point_ratio(e, k ? u->o_stime : u->o_utime, st->hz);
	}

	otlp_metric(e, "process.paging.faults", SUM_I, "{fault}",
	    "Page faults of a process since it started; the top N, then the "
	    "rest since vitalsd started.");
	for (i = 0; i < st->ntop; i++) {
		const struct export_proc *p = &st->procs[st->top[i]];

		for (k = 0; k < 2; k++) {
			attr_proc(e, st, p);
			otlp_attr_s(e, "process.paging.fault_type",
			    k ? "major" : "minor");
			otlp_point_i(e, k ? p->majflt : p->minflt);
		}
	}
	e->start_ns = since;
	for (k = 0; k < 2; k++) {
		otlp_attr_s(e, "process.executable.name", "other");
		otlp_attr_s(e, "process.paging.fault_type",
		    k ? "major" : "minor");
		otlp_point_i(e, k ? u->o_majflt : u->o_minflt);
	}

	otlp_metric(e, "process.memory.usage", GAUGE_I, "By",
	    "Resident memory of a process (stat field 24); the top N, then "
	    "the other live processes together.");
	for (i = 0; i < st->ntop; i++) {
		const struct export_proc *p = &st->procs[st->top[i]];

		attr_proc(e, st, p);
		otlp_point_i(e, p->rss_pages * st->page_bytes);
	}
	otlp_attr_s(e, "process.executable.name", "other");
	otlp_point_i(e, st->o_rss_pages * st->page_bytes);

	e->start_ns = since;
	otlp_metric(e, "vitals.processes.cpu.time", SUM_D, "s",
	    "CPU seconds of every process seen since vitalsd started: the "
	    "total the process series and other add up to.");
	otlp_attr_s(e, "cpu.mode", "user");
	otlp_point_ratio(e, u->utime, st->hz);
	otlp_attr_s(e, "cpu.mode", "system");
	otlp_point_ratio(e, u->stime, st->hz);
	otlp_metric(e, "vitals.processes.paging.faults", SUM_I, "{fault}",
	    "Page faults of every process seen since vitalsd started.");
	otlp_attr_s(e, "process.paging.fault_type", "minor");
	otlp_point_i(e, u->minflt);
	otlp_attr_s(e, "process.paging.fault_type", "major");
	otlp_point_i(e, u->majflt);
	otlp_metric(e, "vitals.processes", GAUGE_I, "{process}",
	    "Live processes in the latest sample, and those with series.");
	otlp_attr_s(e, "set", "live");
	otlp_point_i(e, st->nprocs);
	otlp_attr_s(e, "set", "top");
	otlp_point_i(e, st->ntop);
}

/* ---------------------------------------------------------------- cgroups */

static void
attr_cg(struct enc *e, const struct export_cg *g)
{
	otlp_attr_i(e, "cgroup.id", (int64_t)g->id);
	otlp_attr_s(e, "cgroup.path", g->path[0] ? g->path : "/");
	otlp_attr_i(e, "cgroup.depth", g->depth);
	e->start_ns = otlp_wall_of(e, g->first_boot_ns);
}

static void
attr_cg_other(struct enc *e, const struct export_state *st, unsigned depth)
{
	otlp_attr_s(e, "cgroup.path", "other");
	otlp_attr_i(e, "cgroup.depth", depth);
	e->start_ns = otlp_wall_of(e, st->first_boot_ns);
}

void
otlp_enc_cgroups(struct enc *e, const struct export_state *st)
{
	unsigned i, d, k;

	if (st->cg_depths == 0)
		return;
	otlp_metric(e, "vitals.cgroup.cpu.time", SUM_D, "s",
	    "CPU seconds of a cgroup (cpu.stat) since vitalsd first saw it; "
	    "the top N, then the rest per depth.");
	for (i = 0; i < st->ncgtop; i++) {
		const struct export_cg *g = &st->cgs[st->cgtop[i]];

		for (k = 0; k < 2; k++) {
			attr_cg(e, g);
			otlp_attr_s(e, "cpu.mode", k ? "system" : "user");
			otlp_point_ratio(e, k ? g->system_us : g->user_us,
			    1000000);
		}
	}
	for (d = 0; d < EXPORT_CG_DEPTHS; d++)
		for (k = 0; k < 2 && (st->cg_depths & (1u << d)); k++) {
			attr_cg_other(e, st, d);
			otlp_attr_s(e, "cpu.mode", k ? "system" : "user");
			otlp_point_ratio(e,
			    k ? st->cg_o_system_us[d] : st->cg_o_user_us[d],
			    1000000);
		}
	otlp_metric(e, "vitals.cgroup.paging.faults", SUM_I, "{fault}",
	    "Page faults in a cgroup (memory.stat) since vitalsd first saw "
	    "it; the top N, then the rest per depth.");
	for (i = 0; i < st->ncgtop; i++) {
		const struct export_cg *g = &st->cgs[st->cgtop[i]];
		uint64_t all = g->pgfault, maj = g->pgmajfault;

		for (k = 0; k < 2; k++) {
			attr_cg(e, g);
			otlp_attr_s(e, "fault_type", k ? "major" : "minor");
			otlp_point_i(e, k ? maj : all > maj ? all - maj : 0);
		}
	}
	for (d = 0; d < EXPORT_CG_DEPTHS; d++)
		for (k = 0; k < 2 && (st->cg_depths & (1u << d)); k++) {
			uint64_t all = st->cg_o_pgfault[d];
			uint64_t maj = st->cg_o_pgmajfault[d];

			attr_cg_other(e, st, d);
			otlp_attr_s(e, "fault_type", k ? "major" : "minor");
			otlp_point_i(e, k ? maj : all > maj ? all - maj : 0);
		}
	otlp_metric(e, "vitals.cgroup.memory.usage", GAUGE_I, "By",
	    "A cgroup's memory.current; the top N, then the rest per depth.");
	for (i = 0; i < st->ncgtop; i++) {
		const struct export_cg *g = &st->cgs[st->cgtop[i]];

		if (!g->have_mem)
			continue;
		attr_cg(e, g);
		otlp_point_i(e, g->mem_bytes);
	}
	for (d = 0; d < EXPORT_CG_DEPTHS; d++) {
		if (!(st->cg_depths & (1u << d)))
			continue;
		attr_cg_other(e, st, d);
		otlp_point_i(e, st->cg_o_mem[d]);
	}
}

/* ---------------------------------------------------------- BPF, health */

void
otlp_enc_bpf(struct enc *e, const struct export_state *st)
{
	const struct export_sums *u = &st->sum;

	if (!u->bpf)
		return;
	e->start_ns = otlp_wall_of(e, st->first_boot_ns);
	otlp_metric(e, "vitals.sched.oncpu.time", SUM_D, "s",
	    "On-CPU time the sched_switch accounting attributed (closed "
	    "windows).");
	otlp_point_ratio(e, u->bpf_oncpu_ns, NSEC_PER_SEC);
	otlp_metric(e, "vitals.sched.runqueue.wait.time", SUM_D, "s",
	    "Time runnable tasks waited for a CPU (closed windows).");
	otlp_point_ratio(e, u->bpf_rq_ns, NSEC_PER_SEC);
	otlp_metric(e, "vitals.sched.runqueue.waits", SUM_I, "{wait}",
	    "Run-queue waits measured (closed windows).");
	otlp_point_i(e, u->bpf_rq_count);
	otlp_metric(e, "vitals.sched.switches", SUM_I, "{switch}",
	    "Context switches seen by the BPF program (closed windows).");
	otlp_point_i(e, u->bpf_switches);
	otlp_metric(e, "vitals.sched.wakeups", SUM_I, "{wakeup}",
	    "Wakeups seen by the BPF program (closed windows).");
	otlp_point_i(e, u->bpf_wakeups);
	otlp_metric(e, "vitals.sched.lost.time", SUM_D, "s",
	    "On-CPU time no map entry could take (closed windows).");
	otlp_point_ratio(e, u->bpf_lost_ns, NSEC_PER_SEC);
}

/* The GPU devices as export_text.c's page_gpu gives them */
void
otlp_enc_gpu(struct enc *e, const struct export_state *st)
{
	static const char *const stat[3] = { "min", "mean", "max" };
	uint32_t i, k;
	uint64_t ppm;

	if (!st->gpu_on)
		return;
	otlp_metric(e, "vitals.gpu.devices", GAUGE_I, "{device}",
	    "GPU devices the frequency collector reads.");
	otlp_point_i(e, st->ngpu);
	if (st->ngpu == 0)
		return;
	otlp_metric(e, "vitals.gpu.freq", GAUGE_I, "Hz",
	    "GPU current frequency over the last closed window's readings.");
	for (i = 0; i < st->ngpu; i++) {
		const struct export_gpu *g = &st->gpu[i];
		const struct gpufreq_win *w = &g->last;
		uint64_t v[3];

		if (!g->in_last || !(w->have & GPUFREQ_HAVE_CUR) || !w->cur_n)
			continue;
		v[0] = w->cur_min_hz;
		v[1] = w->cur_sum_hz / w->cur_n;
		v[2] = w->cur_max_hz;
		for (k = 0; k < 3; k++) {
			otlp_attr_s(e, "device", g->name);
			otlp_attr_s(e, "stat", stat[k]);
			otlp_point_i(e, v[k]);
		}
	}
	otlp_metric(e, "vitals.gpu.freq.limit", GAUGE_I, "Hz",
	    "GPU frequency floor and ceiling (devfreq min_freq, max_freq).");
	for (i = 0; i < st->ngpu; i++) {
		const struct export_gpu *g = &st->gpu[i];

		if (g->in_last && (g->last.have & GPUFREQ_HAVE_MIN)) {
			otlp_attr_s(e, "device", g->name);
			otlp_attr_s(e, "limit", "min");
			otlp_point_i(e, g->last.min_hz);
		}
		if (g->in_last && (g->last.have & GPUFREQ_HAVE_MAX)) {
			otlp_attr_s(e, "device", g->name);
			otlp_attr_s(e, "limit", "max");
			otlp_point_i(e, g->last.max_hz);
		}
	}
	otlp_metric(e, "vitals.gpu.busy", GAUGE_D, "1",
	    "GPU busy share over the last closed window (0-1).");
	for (i = 0; i < st->ngpu; i++)
		if (st->gpu[i].in_last &&
		    gpufreq_busy_ppm(&st->gpu[i].last, &ppm)) {
			otlp_attr_s(e, "device", st->gpu[i].name);
			otlp_point_ratio(e, ppm, 1000000);
		}
	otlp_metric(e, "vitals.gpu.time_in_state", SUM_D, "s",
	    "Time the GPU spent at each frequency (devfreq trans_stat).");
	for (i = 0; i < st->ngpu; i++) {
		e->start_ns = otlp_wall_of(e, st->gpu[i].first_boot_ns);
		for (k = 0; k < st->gpu[i].nstates; k++) {
			otlp_attr_s(e, "device", st->gpu[i].name);
			otlp_attr_i(e, "hz", (int64_t)st->gpu[i].hz[k]);
			otlp_point_ratio(e, st->gpu[i].ms[k], 1000);
		}
	}
}

/* Syscall latency (export_sc.c): the page's sums and, below, its latency
 * histograms. The other series has no process.pid (an int attribute in
 * the conventions), as the processes' other has none. */
static void
attr_sc(struct enc *e, const struct export_sc *sc,
    const struct export_sc_series *s)
{
	const char *n;
	char nm[32];

	if (s->tgid < 0) {
		otlp_attr_s(e, "process.command", "other");
		otlp_attr_s(e, "syscall", "other");
		return;
	}
	otlp_attr_i(e, "process.pid", s->tgid);
	otlp_attr_s(e, "process.command", s->comm);
	n = sc->arch < SYSNAMES__MAX ? sysnames_name(sc->arch, s->nr) : NULL;
	if (n == NULL) {
		snprintf(nm, sizeof(nm), "nr%u", s->nr);
		n = nm;
	}
	otlp_attr_s(e, "syscall", n);
}

/* The latency histograms, one point per syscall: vitalsd's log2 buckets
 * [2^b, 2^(b+1)) ns as explicit bounds 2^(b+1) ns (a latency exactly on a
 * bound is in the bucket above it), calls under the floor in the floor's
 * bucket as on the page. */
static void
enc_sc_hist(struct enc *e, const struct export_sc *sc)
{
	PB(Metric) * m;
	PB(Histogram) * h;
	PB(HistogramDataPoint) * *pts;
	double *bounds;
	size_t i, np = sc->nhists + 1;
	unsigned b;

	if (e->err)
		return;
	otlp_metric_end(e);
	if (otlp_grow(e, (void ***)&e->metrics, e->nmetrics, &e->capmetrics) <
		0 ||
	    (m = otlp_ar_alloc(&e->ar, sizeof(*m))) == NULL ||
	    (h = otlp_ar_alloc(&e->ar, sizeof(*h))) == NULL ||
	    (pts = otlp_ar_alloc(&e->ar, np * sizeof(*pts))) == NULL ||
	    (bounds = otlp_ar_alloc(&e->ar,
		 (SC_HIST_N - 1) * sizeof(*bounds))) == NULL) {
		e->err = -ENOMEM;
		return;
	}
	PBI(metric__init)(m);
	m->name = (char *)"vitals.syscall.latency";
	m->unit = (char *)"s";
	m->description = (char *)"Syscall latency per syscall, log2 buckets "
				 "(closed windows).";
	PBI(histogram__init)(h);
	h->aggregation_temporality = PBE(
	    AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE);
	m->data_case = PBE(METRIC__DATA_HISTOGRAM);
	m->histogram = h;
	e->metrics[e->nmetrics++] = m;
	e->nattrs = 0;
	for (b = 0; b + 1 < SC_HIST_N; b++)
		bounds[b] = (double)((uint64_t)2 << b) / 1e9;
	for (i = 0; i < np; i++) {
		const struct export_sc_hist *x = i < sc->nhists ?
		    &sc->hists[i] :
		    &sc->hists[EXPORT_SC_HISTS];
		PB(HistogramDataPoint) * p;
		PB(KeyValue) * *kv;
		uint64_t *bc, n = 0;
		const char *nm;
		char nb[32];

		if ((p = otlp_ar_alloc(&e->ar, sizeof(*p))) == NULL ||
		    (bc = otlp_ar_alloc(&e->ar, SC_HIST_N * sizeof(*bc))) ==
			NULL ||
		    (kv = otlp_ar_alloc(&e->ar, sizeof(*kv))) == NULL) {
			e->err = -ENOMEM;
			return;
		}
		PBI(histogram_data_point__init)(p);
		nm = x->nr == EXPORT_SC_OTHER ? "other" :
		    sc->arch < SYSNAMES__MAX  ? sysnames_name(sc->arch, x->nr) :
						NULL;
		if (nm == NULL) {
			snprintf(nb, sizeof(nb), "nr%u", x->nr);
			nm = nb;
		}
		otlp_attr_s(e, "syscall", nm);
		if (e->err || e->nattrs != 1)
			return;
		kv[0] = e->attrs[0];
		e->nattrs = 0;
		p->attributes = kv;
		p->n_attributes = 1;
		p->start_time_unix_nano = (uint64_t)e->start_ns;
		p->time_unix_nano = (uint64_t)e->t->now_wall_ns;
		for (b = 0; b < SC_HIST_N; b++)
			n += bc[b] = x->b[b];
		if (x->count > n) { /* never below the count */
			bc[SC_HIST_N - 1] += x->count - n;
			n = x->count;
		}
		p->count = n;
		p->sum = (double)x->sum_ns / 1e9;
		p->bucket_counts = bc;
		p->n_bucket_counts = SC_HIST_N;
		p->explicit_bounds = bounds;
		p->n_explicit_bounds = SC_HIST_N - 1;
		pts[i] = p;
		e->points++;
	}
	h->data_points = pts;
	h->n_data_points = np;
}

void
otlp_enc_syscalls(struct enc *e, const struct export_state *st)
{
	static const char *const cls[SC_ERR__MAX] = { "eagain", "eintr",
		"etimedout", "other" };
	const struct export_sc *sc = st->sc;
	const struct sc_counters *c;
	size_t i;
	unsigned k;

	if (sc == NULL)
		return;
	c = &sc->ctr;
	e->start_ns = otlp_wall_of(e, st->first_boot_ns);
	otlp_metric(e, "vitals.syscall.calls", SUM_I, "{call}",
	    "Syscalls that returned, per process and syscall (closed "
	    "windows).");
	for (i = 0; i <= sc->nseries; i++) {
		attr_sc(e, sc, i < sc->nseries ? &sc->series[i] : &sc->other);
		otlp_point_i(e,
		    i < sc->nseries ? sc->series[i].count : sc->other.count);
	}
	otlp_metric(e, "vitals.syscall.errors", SUM_I, "{call}",
	    "Syscalls that returned an error, by class.");
	for (i = 0; i <= sc->nseries; i++)
		for (k = 0; k < SC_ERR__MAX; k++) {
			const struct export_sc_series *s = i < sc->nseries ?
			    &sc->series[i] :
			    &sc->other;

			attr_sc(e, sc, s);
			otlp_attr_s(e, "class", cls[k]);
			otlp_point_i(e, s->errors[k]);
		}
	otlp_metric(e, "vitals.syscall.time", SUM_D, "s",
	    "Sum of syscall latencies, per process and syscall.");
	for (i = 0; i <= sc->nseries; i++) {
		attr_sc(e, sc, i < sc->nseries ? &sc->series[i] : &sc->other);
		otlp_point_ratio(e,
		    i < sc->nseries ? sc->series[i].sum_ns : sc->other.sum_ns,
		    NSEC_PER_SEC);
	}
	otlp_metric(e, "vitals.syscall.lost", SUM_I, "{event}",
	    "Syscall tracer losses and skips, by reason.");
	{
		const char *const rn[7] = { "missing_enter", "mismatch",
			"map_full", "rb_full", "slow_dropped", "compat",
			"drain_errors" };
		const uint64_t rv[7] = { c->missing_enter, c->mismatch,
			c->map_full, c->rb_full, c->slow_dropped, c->compat,
			c->drain_errors };

		for (k = 0; k < 7; k++) {
			otlp_attr_s(e, "reason", rn[k]);
			otlp_point_i(e, rv[k]);
		}
	}
	enc_sc_hist(e, sc);
	if (!sc->have_prog)
		return;
	otlp_metric(e, "vitals.syscall.prog.run.time", SUM_D, "s",
	    "Run time of the syscall tracer's BPF programs (BPF stats on).");
	otlp_point_ratio(e, sc->prog_run_ns, NSEC_PER_SEC);
	otlp_metric(e, "vitals.syscall.prog.runs", SUM_I, "{run}",
	    "Runs of the syscall tracer's BPF programs (BPF stats on).");
	otlp_point_i(e, sc->prog_run_cnt);
}

void
otlp_enc_health(struct enc *e, const struct export_page *pg)
{
	const struct export_sums *u = &pg->st->sum;
	const struct window *w = pg->open;
	unsigned i, k;

	e->start_ns = otlp_wall_of(e, pg->st->first_boot_ns);
	otlp_metric(e, "vitals.collector.samples", SUM_I, "{sample}",
	    "Samples taken, and those whose system deltas were valid.");
	otlp_attr_s(e, "set", "taken");
	otlp_point_i(e, u->samples + (w ? w->samples : 0));
	otlp_attr_s(e, "set", "valid");
	otlp_point_i(e, u->samples_valid + (w ? w->samples_valid : 0));
	otlp_metric(e, "vitals.collector.invalid", SUM_I, "{event}",
	    "Whole samples and single deltas dropped, by reason.");
	for (k = 0; k < 2; k++)
		for (i = 0; i < INV__MAX; i++) {
			otlp_attr_s(e, "what", k ? "delta" : "sample");
			otlp_attr_s(e, "reason", invalid_name(i));
			otlp_point_i(e,
			    k ? u->inv_deltas[i] + (w ? w->inv_deltas[i] : 0) :
				u->inv_samples[i] +
				    (w ? w->inv_samples[i] : 0));
		}
	otlp_metric(e, "vitals.collector.late_ticks", SUM_I, "{tick}",
	    "Sampling ticks that fired over half an interval late.");
	otlp_point_i(e, u->late_ticks + (w ? w->health.late_ticks : 0));
	otlp_metric(e, "vitals.store.windows_dropped", SUM_I, "{window}",
	    "Closed windows lost to a full write queue.");
	otlp_point_i(e, pg->st->store_dropped);
}
