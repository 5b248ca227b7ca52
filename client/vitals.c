/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitals: the dumpsys-style shell client of vitalsd. Parse options, build
 * one request, send it, render the answer as text or JSON, exit with a code
 * that says what went wrong (doc/vitals.1.md).
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

/* Options, and which commands accept them. */
enum {
	O_SORT = 1 << 0,
	O_SINCE = 1 << 1,
	O_THREADS = 1 << 2,
	O_N = 1 << 3,
	O_INTERVAL = 1 << 4,
	O_COUNT = 1 << 5,
	O_STARTTIME = 1 << 6,
	/* heapprofd start, wss start */
	O_PID = 1 << 7,
	O_NAME = 1 << 8,
	O_DURATION = 1 << 9,
	O_DRY_RUN = 1 << 10,
	O_MODE = 1 << 11,
	O_METHOD = 1 << 12,
	/* trace */
	O_PROCESS = 1 << 13,
	/* gpumem: more than dumpsys prints */
	O_VERBOSE = 1 << 14,
	/* top, proc: one foreground/background dataset */
	O_STATE = 1 << 15,
	/* top --source, --by; sched --uids */
	O_SOURCE = 1 << 16,
	O_BY = 1 << 17,
	O_UIDS = 1 << 18,
	/* summary, watch: only what dumpsys cpuinfo prints */
	O_DUMPSYS = 1 << 19,
	/* export --perfetto FILE */
	O_PERFETTO = 1 << 20,
	O__COUNT = 21, /* bits above */
};

struct opts {
	const char *socket;
	bool json;
	int timeout_ms;
	unsigned given; /* O_* seen */
	Vitals__Metric sort;
	int64_t since_ns;
	bool threads;
	uint32_t n;
	int64_t interval_ns;
	uint64_t count;
	uint64_t starttime;
	int32_t pid;	   /* proc */
	uint32_t burst_ms; /* burst: asked, 0 for the default */
	/* wss start */
	int32_t wss_pid;
	const char *wss_mode, *wss_name, *wss_method;
	const char *process; /* trace: --process NAME|PID */
	bool verbose;	     /* gpumem: state, names, stale marks */
	const char *state;   /* top, proc: --state */
	char **args;	     /* operands after the command */
	int nargs;
	struct fmt_ctx fc;
	/* heapprofd start */
	int32_t hp_pid;
	const char *hp_name;
	int64_t hp_duration_ns;
	bool hp_dry_run;
	bool bpf;		     /* top --source bpf */
	unsigned sched_by;	     /* Vitals__SchedMetric */
	bool uids;		     /* sched --uids */
	const struct cmd *watch_sub; /* watch COMMAND */
	const char *perfetto;	     /* export: --perfetto FILE, "-" stdout */
};

struct cmd {
	const char *name;
	int (*fn)(struct opts *o);
	unsigned allowed;
	int min_args, max_args;
};

/* clang-format off */
static void __attribute__((noreturn))
usage(int status)
/* clang-format on */
{
	fprintf(status ? stderr : stdout,
	    "usage: vitals [--socket PATH] [--json] [--timeout MS] [COMMAND]\n"
	    "commands:\n"
	    "  (none) | summary [-n N] [--dumpsys]\n"
	    "                              the last window as dumpsys cpuinfo\n"
	    "                              prints it, then vitals' figures\n"
	    "  cpu                         system and per-CPU figures\n"
	    "  top [--sort cpu|minflt|majflt|rss|weighted] [--weighted]\n"
	    "      [--since DURATION] [--threads] [-n N]\n"
	    "                              top processes or threads\n"
	    "      [--state STATE]         in one Android state: top-app,\n"
	    "                              foreground, background, system\n"
	    "  top --source bpf [--by oncpu|rq|rq-p99] [--since D] [--threads]\n"
	    "      [-n N]                  the same from BPF sched accounting\n"
	    "  sched [--since D] [-n N] [--threads|--uids]\n"
	    "                              BPF on-CPU time and run-queue delay\n"
	    "  proc PID [--threads] [--since DURATION] [--starttime T]\n"
	    "      [--state STATE]         one process, window by window\n"
	    "  health                      collector, store, control health\n"
	    "  burst [SECONDS]             sample every 100 ms (trusted)\n"
	    "  bursts [-n N]               burst triggers: counts, firings\n"
	    "  watch [--interval S] [--count N] [-n N] [--dumpsys]\n"
	    "                              refreshing summary\n"
	    "  dump [-n N]                 the daemon's own text dump\n"
	    "  gpumem [--verbose] [--since DURATION]\n"
	    "                              GPU memory per process, as dumpsys gpu\n"
	    "                              --gpumem prints it (-v: and more)\n"
	    "  gpu [--since DURATION]      GPU frequency and busy share per GPU\n"
	    "                              device (last window, or stored)\n"
	    "  dmabuf [--since DURATION]   DMA-BUF per process and exporter,\n"
	    "                              each buffer counted once\n"
	    "  syscalls [--since DURATION] [--process NAME|PID]\n"
	    "                              syscall latency per process\n"
	    "  heapprofd start (--pid PID | --name NAME[,NAME...])\n"
	    "      [--duration D] [--dry-run]  heap profile session (trusted)\n"
	    "  heapprofd list [-n N]       session records, newest first\n"
	    "  heapprofd cancel ID         stop a running session (trusted)\n"
	    "  wss [PID]                   working-set targets (all, or one)\n"
	    "  wss start --pid PID|--name NAME --mode heap|library LIB\n"
	    "      [--method auto|page_idle|clear_refs]\n"
	    "                              monitor idle pages (trusted)\n"
	    "  export --perfetto FILE [--since DURATION] [--pid PID]\n"
	    "                              stored windows as a Perfetto trace\n"
	    "                              (FILE - : stdout)\n"
	    "  wss stop PID                end a target (trusted)\n"
	    "  trace [--since DURATION] [--process NAME|PID]\n"
	    "                              ATrace slices and ftrace loss\n"
	    "  binder [--since DURATION] [--process NAME|PID]\n"
	    "                              binder transaction latency\n"
	    "  cgroups [--since DURATION] [-n N]\n"
	    "                              cgroup v2 groups: CPU, memory, "
	    "pressure\n"
	    "DURATION: 30s, 5m, 2h, 1d, 250ms, 1h30m (a bare number is "
	    "seconds)\n"
	    "socket: $VITALS_SOCKET, else %s if it exists, else %s\n",
	    VITALS_SOCKET_ANDROID, VITALS_SOCKET_LINUX);
	exit(status);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_err(const char *fmt, ...)
{
	va_list ap;

	fputs("vitals: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (vitals --help)\n", stderr);
	exit(VX_USAGE);
}

/* watch: a frame's text goes here instead of stdout */
static struct sbuf *capture;

static int
put_out(const struct sbuf *b)
{
	if (b->err) {
		fprintf(stderr, "vitals: out of memory\n");
		return VX_PROTOCOL;
	}
	if (capture) {
		sbuf_put(capture, sbuf_str(b), b->len);
		return capture->err ? VX_PROTOCOL : VX_OK;
	}
	fwrite(sbuf_str(b), 1, b->len, stdout);
	return fflush(stdout) == 0 ? VX_OK : VX_PROTOCOL;
}

static void
range_since(Vitals__TimeRange *r, int64_t since_ns)
{
	r->since_ns = since_ns;
}

/*
 * Send req, return the answer or an exit code. A daemon refusal is printed
 * on stderr, and with --json the daemon's answer goes to stdout as well.
 */
static int
call(const struct opts *o, Vitals__Request *req, Vitals__Response **ret)
{
	struct sbuf msg;
	int x;

	req->version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	req->id = ((uint64_t)getpid() << 32) ^
	    (uint64_t)clock_now_ns(CLOCK_MONOTONIC);
	if (req->id == 0)
		req->id = 1;
	sbuf_init(&msg);
	x = conn_call(o->socket, o->timeout_ms, req, ret, &msg);
	if (x != VX_OK) {
		if (x == VX_UNAVAILABLE && !strstr(sbuf_str(&msg), "try again"))
			sbuf_puts(&msg, " — try again in a few seconds");
		fprintf(stderr, "vitals: %s\n", sbuf_str(&msg));
		if (o->json && *ret) {
			struct sbuf b;

			sbuf_init(&b);
			json_response(&b, *ret);
			put_out(&b);
			sbuf_free(&b);
		}
		if (*ret)
			vitals__response__free_unpacked(*ret, NULL);
		*ret = NULL;
	}
	sbuf_free(&msg);
	return x;
}

/* A call whose failure is no error of the command (nothing printed). */
static int
call_quiet(const struct opts *o, Vitals__Request *req, Vitals__Response **ret)
{
	struct sbuf msg;
	int x;

	req->version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	req->id = ((uint64_t)getpid() << 32) ^
	    (uint64_t)clock_now_ns(CLOCK_MONOTONIC) ^ 1;
	if (req->id == 0)
		req->id = 1;
	sbuf_init(&msg);
	*ret = NULL;
	x = conn_call(o->socket, o->timeout_ms, req, ret, &msg);
	if (x != VX_OK && *ret) {
		vitals__response__free_unpacked(*ret, NULL);
		*ret = NULL;
	}
	sbuf_free(&msg);
	return x;
}

static void text_summary(struct sbuf *b, const Vitals__Response *r,
    const struct opts *o);
static void text_gpumem(struct sbuf *b, const Vitals__Response *r,
    const struct opts *o);

/*
 * Prose wider than the terminal is wrapped at spaces (tables fit by
 * themselves, table.c). Not the summary and plain gpumem: they are
 * dumpsys's text line for line, which parsers read.
 */
static bool
fit_text(const struct opts *o,
    void (*text)(struct sbuf *, const Vitals__Response *, const struct opts *))
{
	if (text == text_summary)
		return false;
	if (text == text_gpumem)
		return o->verbose || (o->given & O_SINCE);
	return true;
}

/* The common tail: JSON of the whole answer, or the command's text. */
/* One more member of the top JSON object (cmd_proc's trace), or none. */
static const char *json_extra_key;
static const ProtobufCMessage *json_extra;
/* text_gpumem's GPU frequency section (--verbose or a span) */
static const Vitals__GpuFreq *gpumem_freq;

static int
render(const struct opts *o, Vitals__Response *resp,
    void (*text)(struct sbuf *, const Vitals__Response *, const struct opts *))
{
	struct sbuf b;
	int x;

	sbuf_init(&b);
	if (o->json && json_extra_key)
		json_response_with(&b, resp, json_extra_key, json_extra);
	else if (o->json)
		json_response(&b, resp);
	else
		text(&b, resp, o);
	if (!o->json && fit_text(o, text)) {
		struct sbuf f;

		sbuf_init(&f);
		text_fit(&f, sbuf_str(&b), o->fc.width);
		if (b.err)
			f.err = b.err;
		sbuf_free(&b);
		b = f;
	}
	x = put_out(&b);
	sbuf_free(&b);
	vitals__response__free_unpacked(resp, NULL);
	return x;
}

static void
text_summary(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	if (r->snapshot->window)
		fmt_summary(b, r->snapshot->window, &o->fc);
	else
		sbuf_puts(b, "no window\n");
}

static int
snapshot(const struct opts *o, Vitals__Response **ret)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__SnapshotRequest sr = VITALS__SNAPSHOT_REQUEST__INIT;

	sr.top_n = o->n;
	req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
	req.snapshot = &sr;
	return call(o, &req, ret);
}

static int
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

static int
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

static int
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
static int
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

static int
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

static int
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

static int
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

static int
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

static int
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

static void
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
static int
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

static int
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
static int
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
static int
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

struct watch_arg {
	struct opts *o;
	const struct cmd *sub; /* NULL: the live window, top-like */
};

/* One frame: the command's text (or JSON) for width columns. */
static int
watch_frame(struct sbuf *b, size_t width, void *arg)
{
	struct watch_arg *a = arg;
	struct opts *o = a->o;
	Vitals__Response *r;
	struct sbuf t;
	int x;

	o->fc.width = width;
	o->fc.now_mono_ns = clock_now_ns(CLOCK_MONOTONIC);
	if (a->sub) {
		capture = b;
		x = a->sub->fn(o);
		capture = NULL;
		return x;
	}
	x = snapshot(o, &r);
	if (x == VX_UNAVAILABLE)
		sbuf_puts(b, "no window closed yet\n");
	if (x != VX_OK)
		return x;
	sbuf_init(&t);
	if (o->json)
		json_response(b, r);
	else if (r->snapshot->window == NULL)
		sbuf_puts(&t, "no window\n");
	else if (o->fc.dumpsys_only)
		fmt_summary(&t, r->snapshot->window, &o->fc);
	else
		fmt_watch_top(&t, r->snapshot->window, &o->fc);
	if (o->json)
		;
	else if (o->fc.dumpsys_only)
		sbuf_puts(b, sbuf_str(&t)); /* dumpsys's lines as they are */
	else
		text_fit(b, sbuf_str(&t), width);
	if (t.err)
		b->err = t.err;
	sbuf_free(&t);
	vitals__response__free_unpacked(r, NULL);
	return x;
}

/*
 * `vitals watch [COMMAND ARGS]`: the live window as a top-like view, or
 * the command's text, refreshed every interval (watch.c draws). Piped or
 * with --json, one block per frame; "no window yet" is shown and waited
 * out, other failures end the watch with their exit code.
 */
static int
cmd_watch(struct opts *o)
{
	struct watch w;
	struct watch_arg a = { o, o->watch_sub };

	memset(&w, 0, sizeof(w));
	w.interval_ns = o->interval_ns;
	w.count = o->count;
	w.json = o->json;
	w.tty = !o->json && isatty(STDOUT_FILENO);
	return watch_run(&w, watch_frame, &a);
}

/* ------------------------------------------------ heapprofd */

static void
text_hp_start(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_hp_started(b, r->heapprofd_start);
}

static void
text_hp_list(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_hp_list(b, r->heapprofd_list);
}

static void
text_hp_cancel(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	fmt_hp_cancelled(b, r->heapprofd_cancel);
}

static int
hp_start(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HeapprofdStartRequest sr =
	    VITALS__HEAPPROFD_START_REQUEST__INIT;
	Vitals__Response *r;
	char *names = NULL, *more[16], *c;
	size_t nmore = 0;
	bool refused;
	int x;

	if (!(o->given & O_PID) == !(o->given & O_NAME))
		usage_err("heapprofd start: give --pid PID or --name NAME");
	sr.pid = o->hp_pid;
	sr.name = (char *)(o->hp_name ? o->hp_name : "");
	/* --name com.app,com.app:remote: one session over both (a
	 * process name has no comma) */
	if (o->hp_name && strchr(o->hp_name, ',')) {
		if ((names = strdup(o->hp_name)) == NULL)
			return VX_PROTOCOL;
		sr.name = names;
		for (c = strchr(names, ','); c; c = strchr(c, ',')) {
			*c++ = '\0';
			if (nmore == sizeof(more) / sizeof(more[0]))
				usage_err("heapprofd start: at most 16 names");
			more[nmore++] = c;
		}
		sr.n_names = nmore;
		sr.names = more;
	}
	sr.duration_ms = (uint32_t)(o->hp_duration_ns / 1000000);
	sr.dry_run = o->hp_dry_run;
	req.op_case = VITALS__REQUEST__OP_HEAPPROFD_START;
	req.heapprofd_start = &sr;
	x = call(o, &req, &r);
	free(names);
	if (x != VX_OK)
		return x;
	refused = r->heapprofd_start->refusal !=
	    VITALS__HEAPPROFD_REFUSAL__HEAPPROFD_OK;
	/* the refusal's message goes to stderr in --json mode too */
	if (refused)
		fprintf(stderr, "vitals: heapprofd session refused: %s: %s\n",
		    fmt_hp_refusal(r->heapprofd_start->refusal),
		    r->heapprofd_start->message);
	if (refused && !o->json) {
		vitals__response__free_unpacked(r, NULL);
		return VX_REFUSED;
	}
	x = render(o, r, text_hp_start);
	return x == VX_OK && refused ? VX_REFUSED : x;
}

static int
cmd_heapprofd(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HeapprofdListRequest lr = VITALS__HEAPPROFD_LIST_REQUEST__INIT;
	Vitals__HeapprofdCancelRequest cr =
	    VITALS__HEAPPROFD_CANCEL_REQUEST__INIT;
	const char *sub = o->args[0];
	unsigned start_only = O_PID | O_NAME | O_DURATION | O_DRY_RUN;
	Vitals__Response *r;
	uint64_t id;
	int x;

	if (strcmp(sub, "start") == 0) {
		if (o->nargs != 1 || (o->given & O_N))
			usage_err("heapprofd start: no operand, no -n");
		return hp_start(o);
	}
	if (o->given & start_only)
		usage_err("heapprofd %s: --pid, --name, --duration and "
			  "--dry-run belong to start",
		    sub);
	if (strcmp(sub, "list") == 0) {
		if (o->nargs != 1)
			usage_err("heapprofd list: no operand");
		lr.limit = o->n;
		req.op_case = VITALS__REQUEST__OP_HEAPPROFD_LIST;
		req.heapprofd_list = &lr;
		if ((x = call(o, &req, &r)) != VX_OK)
			return x;
		return render(o, r, text_hp_list);
	}
	if (strcmp(sub, "cancel") == 0) {
		if (o->nargs != 2 || (o->given & O_N) ||
		    uint_parse(o->args[1], INT64_MAX, &id) < 0 || id == 0)
			usage_err("heapprofd cancel: expected a session ID");
		cr.session_id = (int64_t)id;
		req.op_case = VITALS__REQUEST__OP_HEAPPROFD_CANCEL;
		req.heapprofd_cancel = &cr;
		if ((x = call(o, &req, &r)) != VX_OK)
			return x;
		return render(o, r, text_hp_cancel);
	}
	usage_err("heapprofd: expected start, list or cancel, not '%s'", sub);
}

/* ---------------------------------------------------------------- wss */

static void
text_wss(struct sbuf *b, const Vitals__Response *r, const struct opts *o)
{
	(void)o;
	if (r->result_case == VITALS__RESPONSE__RESULT_WSS_STOP)
		sbuf_printf(b, "wss: pid %d no longer a target\n",
		    r->wss_stop->pid);
	else
		fmt_wss(b,
		    r->result_case == VITALS__RESPONSE__RESULT_WSS_START ?
			r->wss_start :
			r->wss_get);
}

static int32_t
wss_pid_arg(const char *s)
{
	uint64_t v;

	if (uint_parse(s, INT32_MAX, &v) < 0 || v == 0)
		usage_err("wss: bad PID '%s'", s);
	return (int32_t)v;
}

static int
cmd_wss(struct opts *o)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__WssStartRequest sr = VITALS__WSS_START_REQUEST__INIT;
	Vitals__WssGetRequest gr = VITALS__WSS_GET_REQUEST__INIT;
	Vitals__WssStopRequest xr = VITALS__WSS_STOP_REQUEST__INIT;
	const char *sub = o->nargs ? o->args[0] : "";
	bool start = !strcmp(sub, "start");
	Vitals__Response *r;
	int x;

	if (!start && (o->given & (O_PID | O_MODE | O_NAME | O_METHOD)))
		usage_err("wss: --pid, --name, --mode and --method go with "
			  "'wss start'");
	if (start) {
		if (!(o->given & O_MODE))
			usage_err("wss start: --mode heap|library is needed");
		if (!(o->given & O_PID) == !(o->given & O_NAME))
			usage_err("wss start: give --pid or --name");
		sr.pid = o->wss_pid;
		sr.name = (char *)(o->wss_name ? o->wss_name : "");
		sr.mode = (char *)o->wss_mode;
		if (!strcmp(o->wss_mode, "library")) {
			if (o->nargs != 2)
				usage_err("wss start: --mode library needs the "
					  "library's file name");
			sr.library = o->args[1];
		} else if (strcmp(o->wss_mode, "heap") != 0) {
			usage_err("wss start: --mode is heap or library");
		} else if (o->nargs != 1) {
			usage_err("wss start: --mode heap takes no operand");
		}
		sr.method = (char *)(o->wss_method ? o->wss_method : "");
		req.op_case = VITALS__REQUEST__OP_WSS_START;
		req.wss_start = &sr;
	} else if (!strcmp(sub, "stop")) {
		if (o->nargs != 2)
			usage_err("wss stop: expected a PID");
		xr.pid = wss_pid_arg(o->args[1]);
		req.op_case = VITALS__REQUEST__OP_WSS_STOP;
		req.wss_stop = &xr;
	} else {
		if (o->nargs > 1)
			usage_err("wss: expected at most a PID");
		gr.pid = o->nargs ? wss_pid_arg(sub) : 0;
		req.op_case = VITALS__REQUEST__OP_WSS_GET;
		req.wss_get = &gr;
	}
	if ((x = call(o, &req, &r)) != VX_OK)
		return x;
	return render(o, r, text_wss);
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

static int
cmd_trace(struct opts *o)
{
	return trace_query(o, "trace", text_trace);
}

static int
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
static int
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

static int
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

static const struct cmd cmds[] = {
	{ "summary", cmd_summary, O_N | O_DUMPSYS, 0, 0 },
	{ "cpu", cmd_cpu, O_SINCE, 0, 0 },
	{ "top", cmd_top,
	    O_SORT | O_SINCE | O_THREADS | O_N | O_STATE | O_SOURCE | O_BY, 0,
	    0 },
	{ "sched", cmd_sched, O_SINCE | O_THREADS | O_N | O_UIDS, 0, 0 },
	{ "proc", cmd_proc, O_SINCE | O_THREADS | O_STARTTIME | O_STATE, 1, 1 },
	{ "health", cmd_health, 0, 0, 0 },
	{ "burst", cmd_burst, 0, 0, 1 },
	{ "bursts", cmd_bursts, O_N, 0, 0 },
	{ "watch", cmd_watch, O_INTERVAL | O_COUNT | O_N | O_DUMPSYS, 0, 3 },
	{ "dump", cmd_dump, O_N, 0, 0 },
	{ "gpumem", cmd_gpumem, O_SINCE | O_VERBOSE, 0, 0 },
	{ "dmabuf", cmd_dmabuf, O_SINCE, 0, 0 },
	{ "gpu", cmd_gpu, O_SINCE, 0, 0 },
	{ "syscalls", cmd_syscalls, O_SINCE | O_PROCESS, 0, 0 },
	{ "heapprofd", cmd_heapprofd,
	    O_PID | O_NAME | O_DURATION | O_DRY_RUN | O_N, 1, 2 },
	{ "wss", cmd_wss, O_PID | O_MODE | O_NAME | O_METHOD, 0, 2 },
	{ "trace", cmd_trace, O_SINCE | O_PROCESS, 0, 0 },
	{ "binder", cmd_binder, O_SINCE | O_PROCESS, 0, 0 },
	{ "cgroups", cmd_cgroups, O_SINCE | O_N, 0, 0 },
	{ "export", cmd_export, O_SINCE | O_PERFETTO | O_PID, 0, 0 },
};

static Vitals__Metric
parse_sort(const char *s)
{
	static const struct {
		const char *name;
		Vitals__Metric m;
	} keys[] = {
		{ "cpu", VITALS__METRIC__METRIC_CPU },
		{ "minflt", VITALS__METRIC__METRIC_MINFLT },
		{ "majflt", VITALS__METRIC__METRIC_MAJFLT },
		{ "rss", VITALS__METRIC__METRIC_RSS },
		{ "weighted", VITALS__METRIC__METRIC_WEIGHTED },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(s, keys[i].name) == 0)
			return keys[i].m;
	usage_err("--sort: '%s' is not one of cpu, minflt, majflt, rss, "
		  "weighted",
	    s);
}

static const char *
opt_name(unsigned bit)
{
	switch (bit) {
	case O_SORT:
		return "--sort";
	case O_SINCE:
		return "--since";
	case O_THREADS:
		return "--threads";
	case O_N:
		return "-n";
	case O_INTERVAL:
		return "--interval";
	case O_COUNT:
		return "--count";
	/* heapprofd start */
	case O_PID:
		return "--pid";
	case O_NAME:
		return "--name";
	case O_DURATION:
		return "--duration";
	case O_DRY_RUN:
		return "--dry-run";
	case O_MODE:
		return "--mode";
	case O_METHOD:
		return "--method";
	case O_PROCESS:
		return "--process";
	case O_VERBOSE:
		return "--verbose";
	case O_STATE:
		return "--state";
	case O_SOURCE:
		return "--source";
	case O_BY:
		return "--by";
	case O_UIDS:
		return "--uids";
	case O_DUMPSYS:
		return "--dumpsys";
	case O_PERFETTO:
		return "--perfetto";
	default:
		return "--starttime";
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "sort", required_argument, NULL, 1 },
		{ "since", required_argument, NULL, 2 },
		{ "threads", no_argument, NULL, 3 },
		{ "interval", required_argument, NULL, 4 },
		{ "count", required_argument, NULL, 5 },
		{ "starttime", required_argument, NULL, 6 },
		{ "pid", required_argument, NULL, 7 },
		{ "name", required_argument, NULL, 8 },
		{ "duration", required_argument, NULL, 9 },
		{ "dry-run", no_argument, NULL, 10 },
		{ "mode", required_argument, NULL, 11 },
		{ "method", required_argument, NULL, 12 },
		{ "process", required_argument, NULL, 13 },
		{ "weighted", no_argument, NULL, 40 },
		{ "verbose", no_argument, NULL, 'v' },
		{ "state", required_argument, NULL, 14 },
		{ "source", required_argument, NULL, 17 },
		{ "by", required_argument, NULL, 18 },
		{ "uids", no_argument, NULL, 19 },
		{ "dumpsys", no_argument, NULL, 20 },
		{ "perfetto", required_argument, NULL, 21 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	struct cmd watch_cmd;
	const struct cmd *cmd = &cmds[0];
	const char *name;
	uint64_t v;
	long page;
	size_t i;
	int ch;

	memset(&o, 0, sizeof(o));
	o.timeout_ms = VITALS_TIMEOUT_MS;
	o.interval_ns = 2 * VITALS_NSEC_PER_SEC;
	/* Options may follow the command: "vitals top --json -n 5". */
	while ((ch = getopt_long(argc, argv, "s:jt:hVn:v", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 's':
			o.socket = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 't':
			if (uint_parse(optarg, 3600000, &v) < 0 || v == 0)
				usage_err("--timeout: bad value '%s' (ms, 1 to "
					  "3600000)",
				    optarg);
			o.timeout_ms = (int)v;
			break;
		case 'h':
			usage(VX_OK);
		case 'V':
			printf("vitals %s\n", VITALS_VERSION);
			return VX_OK;
		case 'n':
			if (uint_parse(optarg, 100000, &v) < 0 || v == 0)
				usage_err("-n: bad count '%s'", optarg);
			o.n = (uint32_t)v;
			o.given |= O_N;
			break;
		case 1:
			o.sort = parse_sort(optarg);
			o.given |= O_SORT;
			break;
		case 40: /* --weighted: --sort weighted */
			o.sort = VITALS__METRIC__METRIC_WEIGHTED;
			o.given |= O_SORT;
			break;
		case 2:
			if (duration_parse(optarg, &o.since_ns) < 0 ||
			    o.since_ns <= 0)
				usage_err("--since: bad duration '%s'", optarg);
			o.given |= O_SINCE;
			break;
		case 3:
			o.threads = true;
			o.given |= O_THREADS;
			break;
		case 4:
			if (duration_parse(optarg, &o.interval_ns) < 0 ||
			    o.interval_ns < 100000000 ||
			    o.interval_ns > 86400 * VITALS_NSEC_PER_SEC)
				usage_err(
				    "--interval: bad duration '%s' (100ms "
				    "to 1d)",
				    optarg);
			o.given |= O_INTERVAL;
			break;
		case 5:
			if (uint_parse(optarg, UINT32_MAX, &o.count) < 0 ||
			    o.count == 0)
				usage_err("--count: bad count '%s'", optarg);
			o.given |= O_COUNT;
			break;
		case 6:
			if (uint_parse(optarg, UINT64_MAX, &o.starttime) < 0)
				usage_err("--starttime: bad value '%s'",
				    optarg);
			o.given |= O_STARTTIME;
			break;
		case 7:
			if (uint_parse(optarg, INT32_MAX, &v) < 0 || v == 0)
				usage_err("--pid: bad pid '%s'", optarg);
			o.hp_pid = o.wss_pid = (int32_t)v;
			o.given |= O_PID;
			break;
		case 8:
			if (*optarg == '\0')
				usage_err("--name: empty name");
			o.hp_name = o.wss_name = optarg;
			o.given |= O_NAME;
			break;
		case 9:
			if (duration_parse(optarg, &o.hp_duration_ns) < 0 ||
			    o.hp_duration_ns < 1000000 ||
			    o.hp_duration_ns > 24 * 3600 * VITALS_NSEC_PER_SEC)
				usage_err("--duration: bad duration '%s' (1ms "
					  "to 24h)",
				    optarg);
			o.given |= O_DURATION;
			break;
		case 10:
			o.hp_dry_run = true;
			o.given |= O_DRY_RUN;
			break;
		case 11:
			o.wss_mode = optarg;
			o.given |= O_MODE;
			break;
		case 12:
			o.wss_method = optarg;
			o.given |= O_METHOD;
			break;
		case 13:
			o.process = optarg;
			o.given |= O_PROCESS;
			break;
		case 'v':
			o.verbose = true;
			o.given |= O_VERBOSE;
			break;
		case 14:
			if (strcmp(optarg, "top-app") != 0 &&
			    strcmp(optarg, "foreground") != 0 &&
			    strcmp(optarg, "background") != 0 &&
			    strcmp(optarg, "system") != 0 &&
			    strcmp(optarg, "unknown") != 0)
				usage_err("--state: '%s' is not one of "
					  "top-app, foreground, background, "
					  "system, unknown",
				    optarg);
			o.state = optarg;
			o.given |= O_STATE;
			break;
		case 17:
			if (strcmp(optarg, "bpf") != 0 &&
			    strcmp(optarg, "procfs") != 0)
				usage_err("--source: '%s' is not procfs or bpf",
				    optarg);
			o.bpf = strcmp(optarg, "bpf") == 0;
			o.given |= O_SOURCE;
			break;
		case 18:
			if (strcmp(optarg, "oncpu") == 0)
				o.sched_by = VITALS__SCHED_METRIC__SCHED_ONCPU;
			else if (strcmp(optarg, "rq") == 0)
				o.sched_by =
				    VITALS__SCHED_METRIC__SCHED_RQ_DELAY;
			else if (strcmp(optarg, "rq-p99") == 0)
				o.sched_by = VITALS__SCHED_METRIC__SCHED_RQ_P99;
			else
				usage_err("--by: '%s' is not oncpu, rq or "
					  "rq-p99",
				    optarg);
			o.given |= O_BY;
			break;
		case 19:
			o.uids = true;
			o.given |= O_UIDS;
			break;
		case 20:
			o.fc.dumpsys_only = true;
			o.given |= O_DUMPSYS;
			break;
		case 21:
			if (*optarg == '\0')
				usage_err("--perfetto: empty file name");
			o.perfetto = optarg;
			o.given |= O_PERFETTO;
			break;
		default:
			usage(VX_USAGE);
		}
	}
	if (optind < argc) {
		name = argv[optind++];
		if (strcmp(name, "help") == 0)
			usage(VX_OK);
		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (strcmp(name, cmds[i].name) == 0)
				break;
		if (i == sizeof(cmds) / sizeof(cmds[0]))
			usage_err("unknown command '%s'", name);
		cmd = &cmds[i];
	}
	o.args = argv + optind;
	o.nargs = argc - optind;
	if (cmd->fn == cmd_watch && o.nargs > 0) {
		/* watch COMMAND ARGS: the command's operands and options */
		static const char *const watchable[] = { "summary", "cpu",
			"top", "sched", "proc", "health", "dump", "gpumem",
			"dmabuf", "gpu", "trace", "binder", "cgroups", "wss" };
		const struct cmd *sub = NULL;

		for (i = 0; i < sizeof(watchable) / sizeof(watchable[0]); i++)
			if (strcmp(o.args[0], watchable[i]) == 0)
				break;
		if (i == sizeof(watchable) / sizeof(watchable[0]))
			usage_err("watch: '%s' cannot be watched", o.args[0]);
		/* only reads repeat: a start or stop would run every frame */
		if (strcmp(o.args[0], "wss") == 0 && o.nargs > 1 &&
		    (strcmp(o.args[1], "start") == 0 ||
			strcmp(o.args[1], "stop") == 0))
			usage_err("watch: 'wss %s' cannot be watched",
			    o.args[1]);
		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (strcmp(o.args[0], cmds[i].name) == 0)
				sub = &cmds[i];
		o.watch_sub = sub;
		o.args++;
		o.nargs--;
		if ((o.given & O_DUMPSYS) && !(sub->allowed & O_DUMPSYS))
			usage_err("watch %s: --dumpsys does not apply",
			    sub->name);
		watch_cmd = *cmd;
		watch_cmd.allowed = sub->allowed | O_INTERVAL | O_COUNT;
		watch_cmd.min_args = sub->min_args;
		watch_cmd.max_args = sub->max_args;
		cmd = &watch_cmd;
	}
	if (o.nargs < cmd->min_args || o.nargs > cmd->max_args)
		usage_err("%s: expected %s", cmd->name,
		    cmd->max_args == 0	   ? "no operand" :
			cmd->min_args	   ? "one operand" :
			cmd->max_args == 2 ? "at most two operands" :
					     "at most one operand");
	for (i = 0; i < O__COUNT; i++)
		if ((o.given & (1u << i)) && !(cmd->allowed & (1u << i)))
			usage_err("%s: %s does not apply", cmd->name,
			    opt_name(1u << i));
	/* Ranges: the last minute for top, five for a process, an hour
	 * for an export. */
	if (!(o.given & O_SINCE))
		o.since_ns = (cmd->fn == cmd_proc ||
					 (o.watch_sub &&
					     o.watch_sub->fn == cmd_proc) ?
				     300 :
				     cmd->fn == cmd_export ? 3600 :
							     60) *
		    VITALS_NSEC_PER_SEC;
	if (o.socket == NULL)
		o.socket = conn_default_socket();
	page = sysconf(_SC_PAGESIZE);
	o.fc.page_kb = page > 0 ? (unsigned)(page / 1024) : 4;
	o.fc.now_mono_ns = clock_now_ns(CLOCK_MONOTONIC);
	o.fc.width = TEXT_WIDTH;
	o.fc.spark = true;
	text_locale_init();
	return cmd->fn(&o);
}
