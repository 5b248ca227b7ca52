/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The commands that ask for figures: summary, cpu, top, sched, proc,
 * health, burst(s), dump, dmabuf, gpu, syscalls, gpumem, trace, binder,
 * cgroups and export; each builds one request and renders its answer.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "vitals.h"

/* text_gpumem's GPU frequency section (--verbose or a span) */
static const Vitals__GpuFreq *gpumem_freq;

int
cmd_summary(struct opts *o)
{
	Vitals__Response *r;
	int x;

	if ((x = snapshot(o, &r)) != VX_OK)
		return x;
	return render(o, r, text_summary);
}

static void
text_cpu(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	if (r->snapshot->window)
		fmt_cpu(b, r->snapshot->window);
	else
		sbuf_puts(b, "no window\n");
}

/* cpu --since: the newest window's tables, then each figure over the
 * range as a sparkline */
static void
text_cpu_since(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	Vitals__Window **w = r->windows->windows;
	size_t i, n = r->windows->n_windows, last = 0;

	if (n == 0) {
		sbuf_puts(b, "no window in the range\n");
		return;
	}
	for (i = 1; i < n; i++)
		if (w[i]->wall_end_ns > w[last]->wall_end_ns)
			last = i;
	fmt_cpu(b, w[last]);
	fmt_cpu_spark(b, w, n, &o->fc);
}

int
cmd_cpu(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__WindowsRequest wr = VITALS__WINDOWS_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	int x;

	if (!(o->given & O_SINCE)) {
		if ((x = snapshot(o, &r)) != VX_OK)
			return x;
		return render(o, r, text_cpu);
	}
	range_since(&tr, o->since_ns);
	wr.range = &tr;
	req.op_case = VITALS__REQUEST__OP_WINDOWS;
	req.windows = &wr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_cpu_since);
}

static void
text_top(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	if (r->top->source == VITALS__TOP_SOURCE__TOP_SOURCE_BPF)
		fmt_sched_top(b, r->top);
	else
		fmt_top(b, r->top, &o->fc);
}

int
cmd_top(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__TopRequest tr = VITALS__TOP_REQUEST__INIT;
	Vitals__TimeRange range = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	int x;

	range_since(&range, o->since_ns);
	tr.range = &range;
	tr.metric = o->sort;
	tr.threads = o->threads;
	tr.n = o->n;
	tr.state = (char *)(o->state ? o->state : "");
	if (o->bpf) {
		tr.source = VITALS__TOP_SOURCE__TOP_SOURCE_BPF;
		tr.sched_metric = (Vitals__SchedMetric)o->sched_by;
	} else if (o->given & O_BY) {
		usage_err("top: --by needs --source bpf");
	}
	req.op_case = VITALS__REQUEST__OP_TOP;
	req.top = &tr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_top);
}

/* `vitals proc`'s fault phases: the trace answer for the pid, asked
 * after the process's; in JSON the answer's TraceList as "trace" (null:
 * no trace answer) */
static Vitals__Response *proc_trace;

static void
text_proc(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	fmt_process(b, r->process, o->pid, &o->fc);
	fmt_sched_proc(b, r->process);
	if (proc_trace &&
	    proc_trace->result_case == VITALS__RESPONSE__RESULT_TRACE &&
	    proc_trace->trace)
		fmt_phase_proc(b, proc_trace->trace, o->pid);
}

static void
text_sched_uids(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	fmt_sched_uids(b, r->windows->windows, r->windows->n_windows, o->n);
}

/*
 * `vitals sched`: processes (or threads) by on-CPU time from the BPF rows
 * of the range, the top of them; --uids: every uid's on-CPU time summed
 * over the range's windows (sent with their rows).
 */
int
cmd_sched(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__WindowsRequest wr = VITALS__WINDOWS_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	int x;

	if (!o->uids) {
		o->bpf = true;
		return cmd_top(o);
	}
	if (o->threads)
		usage_err("sched: --threads and --uids exclude each other");
	range_since(&tr, o->since_ns);
	wr.range = &tr;
	wr.with_tasks = true;
	wr.top_n = 1; /* the rows come with tasks; one task is enough */
	req.op_case = VITALS__REQUEST__OP_WINDOWS;
	req.windows = &wr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_sched_uids);
}

int
cmd_proc(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__ProcessRequest pr = VITALS__PROCESS_REQUEST__INIT;
	Vitals__TimeRange range = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	uint64_t pid;
	int x;

	if (uint_parse(o->args[0], INT32_MAX, &pid) < 0 || pid == 0)
		usage_err("proc: bad PID '%s'", o->args[0]);
	o->pid = (int32_t)pid;
	range_since(&range, o->since_ns);
	pr.pid = o->pid;
	pr.starttime = o->starttime;
	pr.threads = o->threads;
	pr.range = &range;
	pr.state = (char *)(o->state ? o->state : "");
	req.op_case = VITALS__REQUEST__OP_PROCESS;
	req.process = &pr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	{
		Vitals__Request treq = VITALS__REQUEST__INIT;
		Vitals__TraceRequest tr = VITALS__TRACE_REQUEST__INIT;

		tr.range = &range;
		tr.pid = o->pid;
		treq.op_case = VITALS__REQUEST__OP_TRACE;
		treq.trace = &tr;
		/* no trace answer (an older daemon, ftrace off): no phases */
		if (call_quiet(o, &treq, &proc_trace) != VX_OK)
			proc_trace = NULL;
	}
	json_extra_key = "trace";
	json_extra = proc_trace &&
		proc_trace->result_case == VITALS__RESPONSE__RESULT_TRACE ?
	    (const ProtobufCMessage *)proc_trace->trace :
	    NULL;
	x = render(o, r, text_proc);
	json_extra_key = NULL;
	json_extra = NULL;
	if (proc_trace)
		vitals__response__free_unpacked(proc_trace, NULL);
	proc_trace = NULL;
	return x;
}

static void
text_health(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	fmt_health(b, r->health, &o->fc);
}

int
cmd_health(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HealthRequest hr = VITALS__HEALTH_REQUEST__INIT;
	Vitals__Response *r;
	int x;

	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &hr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_health);
}

static void
text_burst(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	fmt_burst(b, r->burst, o->burst_ms);
}

int
cmd_burst(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__BurstRequest br = VITALS__BURST_REQUEST__INIT;
	Vitals__Response *r;
	int64_t ns = 0;
	int x;

	if (o->nargs == 1) {
		if (duration_parse(o->args[0], &ns) < 0 || ns < 1000000 ||
		    ns > 3600 * VITALS_NSEC_PER_SEC)
			usage_err("burst: bad duration '%s'", o->args[0]);
	}
	o->burst_ms = (uint32_t)(ns / 1000000);
	br.duration_ms = o->burst_ms;
	req.op_case = VITALS__REQUEST__OP_BURST;
	req.burst = &br;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_burst);
}

static void
text_bursts(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_bursts(b, r->bursts);
}

int
cmd_bursts(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__BurstListRequest br = VITALS__BURST_LIST_REQUEST__INIT;
	Vitals__Response *r;
	int x;

	if (o->given & O_N)
		br.limit = o->n;
	req.op_case = VITALS__REQUEST__OP_BURSTS;
	req.bursts = &br;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_bursts);
}

static void
text_dump(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	const char *t = r->dump->text ? r->dump->text : "";

	(void)o;
	sbuf_puts(b, t);
	if (*t && t[strlen(t) - 1] != '\n')
		sbuf_putc(b, '\n');
}

int
cmd_dump(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__DumpRequest dr = VITALS__DUMP_REQUEST__INIT;
	Vitals__Response *r;
	int x;

	dr.top_n = o->n;
	req.op_case = VITALS__REQUEST__OP_DUMP;
	req.dump = &dr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_dump);
}

void
text_gpumem(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	fmt_gpumem(b, r->gpu_mem, o->verbose);
	fmt_gpumem_spark(b, r->gpu_mem, &o->fc);
	/* not in the dumpsys form, which parsers read line for line; and
	 * only for a machine with a GPU device the collector reads */
	if (gpumem_freq && gpumem_freq->n_devices > 0 &&
	    (o->verbose || (r->gpu_mem && r->gpu_mem->since_ns > 0)))
		fmt_gpufreq_short(b, gpumem_freq);
}

static void
text_dmabuf(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_dmabuf(b, r->dmabuf);
}

/* The last pass; with --since, the stored windows of that span folded. */
int
cmd_dmabuf(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__DmabufRequest dr = VITALS__DMABUF_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	int x;

	if (o->given & O_SINCE) {
		tr.since_ns = o->since_ns;
		dr.range = &tr;
	}
	req.op_case = VITALS__REQUEST__OP_DMABUF;
	req.dmabuf = &dr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_dmabuf);
}

static void
text_gpu(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_gpufreq(b, r->gpu_freq);
}

/* GpuFreq of the last window, or of --since's stored windows; NULL: none
 * (an older daemon) */
static Vitals__Response *
gpufreq_call(const struct opts *o, bool quiet, int *ret_x)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__GpuFreqRequest gr = VITALS__GPU_FREQ_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r = NULL;

	if (o->given & O_SINCE) {
		tr.since_ns = o->since_ns;
		gr.range = &tr;
	}
	req.op_case = VITALS__REQUEST__OP_GPU_FREQ;
	req.gpu_freq = &gr;
	*ret_x = quiet ? call_quiet(o, &req, &r) : call(o, &req, &r);
	if (*ret_x != VX_OK)
		return NULL;
	if (quiet && r->result_case != VITALS__RESPONSE__RESULT_GPU_FREQ) {
		vitals__response__free_unpacked(r, NULL);
		return NULL;
	}
	return r;
}

int
cmd_gpu(struct opts *o)
{
	Vitals__Response *r;
	int x;

	if ((r = gpufreq_call(o, false, &x)) == NULL)
		return x;
	return render(o, r, text_gpu);
}

static void
text_syscalls(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_syscalls(b, r->syscalls);
}

/* The last window; with --since, the stored windows of that span folded;
 * --process keeps one process's rows. Exit 8 where the tracer cannot run
 * (state "unsupported"), after its text. */
int
cmd_syscalls(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__SyscallsRequest sr = VITALS__SYSCALLS_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	uint64_t pid;
	bool absent;
	int x;

	if (o->given & O_SINCE) {
		tr.since_ns = o->since_ns;
		sr.range = &tr;
	}
	if (o->process && uint_parse(o->process, INT32_MAX, &pid) == 0) {
		if (pid == 0)
			usage_err("syscalls: bad PID '%s'", o->process);
		sr.pid = (int32_t)pid;
	} else if (o->process) {
		if (*o->process == '\0' || strlen(o->process) > 15)
			usage_err("syscalls: bad process name '%s' (a comm: "
				  "1 to 15 bytes)",
			    o->process);
		sr.process = (char *)o->process;
	}
	req.op_case = VITALS__REQUEST__OP_SYSCALLS;
	req.syscalls = &sr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	absent = r->syscalls && r->syscalls->state &&
	    strcmp(r->syscalls->state, "unsupported") == 0;
	x = render(o, r, text_syscalls);
	return x == VX_OK && absent ? VX_ABSENT : x;
}

/* The map now; with --since, the stored windows of that span. */
int
cmd_gpumem(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__GpuMemRequest gr = VITALS__GPU_MEM_REQUEST__INIT;
	Vitals__Response *r, *fr;
	int x;

	if (o->given & O_SINCE)
		gr.since_ns = o->since_ns;
	req.op_case = VITALS__REQUEST__OP_GPU_MEM;
	req.gpu_mem = &gr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	fr = gpufreq_call(o, true, &(int){ 0 });
	gpumem_freq = fr ? fr->gpu_freq : NULL;
	json_extra_key = "gpu_freq";
	json_extra = (const ProtobufCMessage *)gpumem_freq;
	x = render(o, r, text_gpumem);
	json_extra_key = NULL;
	json_extra = NULL;
	gpumem_freq = NULL;
	if (fr)
		vitals__response__free_unpacked(fr, NULL);
	return x;
}

/* ------------------------------------------------------ trace */

static void
text_trace(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_trace(b, r->trace);
}

static void
text_binder(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_binder(b, r->trace);
}

/* trace and binder: one query (op 18), two renderings */
static int
trace_query(struct opts *o, const char *name,
    void (*text)(struct sbuf *, const Vitals__Response *, const struct opts *))
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__TraceRequest tr = VITALS__TRACE_REQUEST__INIT;
	Vitals__TimeRange range = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	uint64_t pid;
	int x;

	range_since(&range, o->since_ns);
	tr.range = &range;
	if (o->process && uint_parse(o->process, INT32_MAX, &pid) == 0) {
		if (pid == 0)
			usage_err("%s: bad PID '%s'", name, o->process);
		tr.pid = (int32_t)pid;
	} else if (o->process) {
		if (*o->process == '\0' || strlen(o->process) > 127)
			usage_err("%s: bad process name '%s'", name,
			    o->process);
		tr.process = (char *)o->process;
	}
	req.op_case = VITALS__REQUEST__OP_TRACE;
	req.trace = &tr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text);
}

int
cmd_trace(struct opts *o)
{
	return trace_query(o, "trace", text_trace);
}

int
cmd_binder(struct opts *o)
{
	return trace_query(o, "binder", text_binder);
}

static void
text_cgroups(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	Vitals__Window *one[1];

	if (r->result_case == VITALS__RESPONSE__RESULT_WINDOWS) {
		fmt_cgroups(b, r->windows->windows, r->windows->n_windows,
		    o->n);
		if (r->windows->truncated || r->windows->budget_exhausted)
			sbuf_puts(b,
			    "  (the newest windows of the range: the "
			    "daemon cut the answer)\n");
		return;
	}
	if ((one[0] = r->snapshot->window) == NULL) {
		sbuf_puts(b, "no window\n");
		return;
	}
	fmt_cgroups(b, one, 1, o->n);
}

/* The last window's groups, or with --since every stored window's,
 * summed per group by the client. */
int
cmd_cgroups(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__WindowsRequest wr = VITALS__WINDOWS_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	int x;

	if (!(o->given & O_SINCE)) {
		if ((x = snapshot(o, &r)) != VX_OK)
			return x;
		return render(o, r, text_cgroups);
	}
	range_since(&tr, o->since_ns);
	wr.range = &tr;
	req.op_case = VITALS__REQUEST__OP_WINDOWS;
	req.windows = &wr;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_cgroups);
}

/* ------------------------------------------------------ export */

/* The summary (fmt_export.c): on stderr when the trace itself went to
 * stdout. */
static int
export_summary(const struct opts *o, const Vitals__ExportAnswer *ea)
{
	struct sbuf b;
	int x;

	sbuf_init(&b);
	fmt_export(&b, ea, o->perfetto, o->json);
	if (strcmp(o->perfetto, "-") != 0) {
		x = put_out(&b);
		sbuf_free(&b);
		return x;
	}
	x = VX_PROTOCOL;
	if (!b.err) {
		fwrite(sbuf_str(&b), 1, b.len, stderr);
		x = fflush(stderr) == 0 ? VX_OK : VX_PROTOCOL;
	}
	sbuf_free(&b);
	return x;
}

int
cmd_export(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__ExportRequest er = VITALS__EXPORT_REQUEST__INIT;
	Vitals__TimeRange range = VITALS__TIME_RANGE__INIT;
	Vitals__Response *r;
	int x, e;

	if (o->perfetto == NULL)
		usage_err("export: --perfetto FILE is the one format");
	range_since(&range, o->since_ns);
	er.range = &range;
	er.format = VITALS__EXPORT_FORMAT__EXPORT_FORMAT_PERFETTO;
	er.pid = (o->given & O_PID) ? o->hp_pid : 0;
	req.op_case = VITALS__REQUEST__OP_EXPORT;
	req.export = &er;
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	if (r->result_case != VITALS__RESPONSE__RESULT_EXPORT) {
		fprintf(stderr, "vitals: export: not an export answer\n");
		vitals__response__free_unpacked(r, NULL);
		return VX_PROTOCOL;
	}
	if ((e = fmt_export_write(o->perfetto, r->export->data.data,
		 r->export->data.len)) < 0) {
		fprintf(stderr, "vitals: export: %s: %s\n", o->perfetto,
		    strerror(-e));
		vitals__response__free_unpacked(r, NULL);
		return VX_PROTOCOL;
	}
	x = export_summary(o, r->export);
	vitals__response__free_unpacked(r, NULL);
	return x;
}
