/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vitals binary's own declarations: its options, its command table's
 * entry, and what its files call of each other (vitals.c: usage and main;
 * vitals_call.c: the call and the rendering; vitals_cmd.c: the commands that
 * ask for figures; vitals_ctl.c: watch and the profiling sessions).
 */
#ifndef VITALS_CLI_H
#define VITALS_CLI_H

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

/* vitals.c */
void __attribute__((noreturn, format(printf, 1, 2)))
usage_err(const char *fmt, ...);

/* vitals_call.c */
extern struct sbuf *capture;
int put_out(const struct sbuf *b);
void range_since(Vitals__TimeRange *r, int64_t since_ns);
int call(const struct opts *o, Vitals__Request *req, Vitals__Response **ret);
int call_quiet(const struct opts *o, Vitals__Request *req,
    Vitals__Response **ret);
extern const char *json_extra_key;
extern const ProtobufCMessage *json_extra;
int render(const struct opts *o, Vitals__Response *resp,
    void (*text)(struct sbuf *, const Vitals__Response *, const struct opts *));
void text_summary(struct sbuf *b, const Vitals__Response *r,
    const struct opts *o);
int snapshot(const struct opts *o, Vitals__Response **ret);

/* vitals_cmd.c */
int cmd_summary(struct opts *o);
int cmd_cpu(struct opts *o);
int cmd_top(struct opts *o);
int cmd_sched(struct opts *o);
int cmd_proc(struct opts *o);
int cmd_health(struct opts *o);
int cmd_burst(struct opts *o);
int cmd_bursts(struct opts *o);
int cmd_dump(struct opts *o);
void text_gpumem(struct sbuf *b, const Vitals__Response *r,
    const struct opts *o);
int cmd_dmabuf(struct opts *o);
int cmd_gpu(struct opts *o);
int cmd_syscalls(struct opts *o);
int cmd_gpumem(struct opts *o);
int cmd_trace(struct opts *o);
int cmd_binder(struct opts *o);
int cmd_cgroups(struct opts *o);
int cmd_export(struct opts *o);

/* vitals_ctl.c */
int cmd_watch(struct opts *o);
int cmd_heapprofd(struct opts *o);
int cmd_wss(struct opts *o);

#endif /* VITALS_CLI_H */
