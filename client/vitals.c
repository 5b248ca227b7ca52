/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitals: the dumpsys-style shell client of vitalsd. Parse options, build
 * one request, send it, render the answer as text or JSON, exit with a code
 * that says what went wrong (doc/vitals.1.md). Here: usage, the command
 * table, option parsing and main; the call and rendering are in
 * vitals_call.c, the commands in vitals_cmd.c and vitals_ctl.c.
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

void __attribute__((noreturn, format(printf, 1, 2)))
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
