/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitals, the shell client of vitalsd's control socket. Rendering and
 * parsing are pure functions over protobuf-c messages and strings, so the
 * tests feed them hand-built messages without a socket.
 */
#ifndef VITALS_CLIENT_H
#define VITALS_CLIENT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vitals.pb-c.h"

/* Exit codes, documented in doc/vitals.1.md. */
enum vitals_exit {
	VX_OK = 0,
	VX_USAGE = 1,
	VX_NOT_RUNNING = 2, /* ENOENT / ECONNREFUSED on connect */
	VX_DENIED = 3,	    /* EACCES on connect, PERMISSION_DENIED */
	VX_PROTOCOL = 4,    /* bad answer, timeout, other status */
	VX_UNAVAILABLE = 5, /* STATUS_UNAVAILABLE: retry later */
	VX_REFUSED = 6,	    /* heapprofd refused the session */
	VX_NOT_FOUND = 7,   /* STATUS_NOT_FOUND: no such process, target, id */
	VX_ABSENT = 8,	    /* STATUS_ABSENT: no such figure here (fgbg) */
};

#define VITALS_SOCKET_ANDROID \
	"/dev/socket/vitalsd" /* created by init (vitalsd.rc) */
#define VITALS_SOCKET_LINUX "/var/lib/vitalsd/vitalsd.sock"
#define VITALS_TIMEOUT_MS 5000
#define VITALS_NSEC_PER_SEC 1000000000LL
#define VITALS_UID_UNKNOWN 4294967295u

/* util.c: a growing string; a failed allocation sticks in err. */
struct sbuf {
	char *buf;
	size_t len, cap;
	int err;
};

void sbuf_init(struct sbuf *b);
void sbuf_free(struct sbuf *b);
void sbuf_reset(struct sbuf *b);
void sbuf_put(struct sbuf *b, const char *s, size_t n);
void sbuf_puts(struct sbuf *b, const char *s);
void sbuf_putc(struct sbuf *b, char c);
void sbuf_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* The text so far, never NULL. */
const char *sbuf_str(const struct sbuf *b);

int duration_parse(const char *s, int64_t *ret_ns);
int uint_parse(const char *s, uint64_t max, uint64_t *ret);
void duration_format(char *buf, size_t len, int64_t ns);
/* shared by format.c and every fmt_<signal>.c */
void fmt_pct(char *buf, size_t len, double ratio);
void fmt_time(char *buf, size_t len, int64_t wall_ns);
void fmt_label(struct sbuf *o, const char *s);
const char *fmt_task_label(const Vitals__Task *t);
int64_t clock_now_ns(int clk);

/* figures.c: doc/metrics.md's formulas over protocol messages; NAN when
 * the denominator is zero (unknown, printed "n/a" or null). */
uint64_t fig_cpu_total(const Vitals__CpuTimes *t);
uint64_t fig_cpu_busy(const Vitals__CpuTimes *t);
double fig_ratio(uint64_t num, uint64_t den);
double fig_core_equiv(uint64_t ticks, uint64_t wall_ns, uint32_t hz);
double fig_machine_share(uint64_t ticks, uint64_t total_ticks);
double fig_normalised(uint64_t ticks, double norm_ticks);
double fig_gauge_avg(const Vitals__Gauge *g);
double fig_psi_share(uint64_t stall_us, uint64_t wall_ns);
double fig_self_core_equiv(const Vitals__WindowHealth *h, int64_t span_ns);
const Vitals__NamedGauge *fig_meminfo(const Vitals__Window *w,
    const char *name);
const Vitals__Counter *fig_counter(Vitals__Counter *const *v, size_t n,
    const char *name);

/* json.c: a small JSON emitter, and protocol messages as JSON with the
 * derived figures of doc/metrics.md beside the raw fields. json_u64 and
 * json_i64 write strings (proto3's canonical JSON), json_i32 a number. */
struct json {
	struct sbuf *o;
	unsigned depth;
	bool comma[64];
	/* json_response_with: one more member of the top object */
	const char *extra_key;
	const ProtobufCMessage *extra;
};

void json_escape(struct sbuf *o, const char *s, size_t len);
void json_init(struct json *j, struct sbuf *o);
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_i32(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* A whole response as one line of JSON; page_size in bytes (json_response:
 * this machine's). */
void json_response(struct sbuf *o, const Vitals__Response *resp);
void json_response_page(struct sbuf *o, const Vitals__Response *resp,
    unsigned page_size);
/* json_response with one more member after the response's own: key, its
 * value extra (NULL: null). */
void json_response_with(struct sbuf *o, const Vitals__Response *resp,
    const char *key, const ProtobufCMessage *extra);

/* format.c: dumpsys-style text. now_mono_ns anchors "ago" figures,
 * page_kb converts resident pages; dumpsys_only: the summary without
 * vitals' own section. */
struct fmt_ctx {
	int64_t now_mono_ns;
	unsigned page_kb;
	bool dumpsys_only;
	size_t width; /* columns; 0: TEXT_WIDTH */
	bool spark;   /* proc: sparklines after the table */
};

/* fmt_cpuinfo.c: the summary, `dumpsys cpuinfo` line for line, then what
 * vitals knows beyond it; AOSP's printRatio of num / den ("n/a": den 0) */
void fmt_summary(struct sbuf *o, const Vitals__Window *w,
    const struct fmt_ctx *c);
void fmt_aosp_ratio(char *buf, size_t len, uint64_t num, uint64_t den);
void fmt_java_float(char *buf, size_t len, double v);
void fmt_cpu(struct sbuf *o, const Vitals__Window *w);
void fmt_top(struct sbuf *o, const Vitals__TaskList *tl,
    const struct fmt_ctx *c);
void fmt_process(struct sbuf *o, const Vitals__ProcessInfo *pi, int32_t pid,
    const struct fmt_ctx *c);
void fmt_burst(struct sbuf *o, const Vitals__BurstAck *a, uint32_t asked_ms);
/* fmt_health.c: `vitals health` */
void fmt_health(struct sbuf *o, const Vitals__Health *h,
    const struct fmt_ctx *c);
/* fmt_history.c: figures over the windows as sparklines */
#define HIST_FIGS_MAX 40
void fmt_process_spark(struct sbuf *o, const Vitals__ProcessInfo *pi,
    const struct fmt_ctx *c);
void fmt_cpu_spark(struct sbuf *o, Vitals__Window **w, size_t nw,
    const struct fmt_ctx *c);
void fmt_hist_ends(struct sbuf *o, const int64_t *end, size_t n,
    const double *v, size_t nf, const char *const *label, size_t label_cols,
    unsigned step, const struct fmt_ctx *c);
/* fmt_gpumem.c: dumpsys gpu --gpumem line for line; verbose: and more */
void fmt_gpumem(struct sbuf *o, const Vitals__GpuMem *g, bool verbose);
void fmt_gpumem_health(struct sbuf *o, const Vitals__GpuMemState *s);
/* a span's bytes per GPU total and process as sparklines */
void fmt_gpumem_spark(struct sbuf *o, const Vitals__GpuMem *g,
    const struct fmt_ctx *c);
/* fmt_trace.c: `vitals trace` (ftrace) */
void fmt_trace(struct sbuf *o, const Vitals__TraceList *tl);
void fmt_trace_health(struct sbuf *o, const Vitals__TraceHealth *h);
/* fmt_phase.c: fault phases in `vitals trace` and `vitals proc` */
bool fmt_phases(struct sbuf *o, const Vitals__TraceWindow *w, int32_t pid);
void fmt_phase_proc(struct sbuf *o, const Vitals__TraceList *tl, int32_t pid);

/* fmt_binder.c: `vitals binder` (binder transaction latency) */
void fmt_binder(struct sbuf *o, const Vitals__TraceList *tl);
/* fmt_fgbg.c: top and proc over one foreground/background dataset, and
 * the signal's health line (from the last window) */
void fmt_top_state(struct sbuf *o, const Vitals__TaskList *tl);
void fmt_process_state(struct sbuf *o, const Vitals__ProcessInfo *pi,
    int32_t pid);
void fmt_fgbg_health(struct sbuf *o, const Vitals__Window *last);
/* fmt_gpufreq.c: `vitals gpu`, and its section in `vitals gpumem` */
void fmt_gpufreq(struct sbuf *o, const Vitals__GpuFreq *g);
void fmt_gpufreq_short(struct sbuf *o, const Vitals__GpuFreq *g);
void fmt_gpufreq_health(struct sbuf *o, const Vitals__GpuFreqHealth *h);
/* fmt_dmabuf.c: `vitals dmabuf` */
void fmt_dmabuf(struct sbuf *o, const Vitals__Dmabuf *d);
/* fmt_syscalls.c: `vitals syscalls` */
void fmt_syscalls(struct sbuf *o, const Vitals__SyscallsAnswer *d);
/* Health.syscalls: the tracer's line */
void fmt_syscall_health(struct sbuf *o, const Vitals__SyscallHealth *h);
/* fmt_cgroup.c: `vitals cgroups`, the groups summed over windows w */
void fmt_cgroups(struct sbuf *o, Vitals__Window **w, size_t nw, unsigned top_n);

/* fmt_sched.c: the BPF sched rows (top --source bpf, sched, proc) */
void fmt_sched_top(struct sbuf *o, const Vitals__TaskList *tl);
void fmt_sched_uids(struct sbuf *o, Vitals__Window **w, size_t nw,
    unsigned top_n);
void fmt_sched_proc(struct sbuf *o, const Vitals__ProcessInfo *pi);

/* fmt_memory.c: the daemon's own memory (health) */
void fmt_memory_health(struct sbuf *o, const Vitals__MemoryHealth *m);

/* fmt_bursts.c: the burst triggers (`vitals bursts`, health) */
void fmt_bursts(struct sbuf *o, const Vitals__BurstList *l);
void fmt_burst_health(struct sbuf *o, const Vitals__BurstHealth *h);
/* fmt_wss.c: the working-set monitor's targets */
void fmt_wss(struct sbuf *o, const Vitals__WssList *l);
void fmt_wss_target(struct sbuf *o, const Vitals__WssTarget *t);
void fmt_wss_health(struct sbuf *o, const Vitals__WssHealth *h);

/* text.c: display columns (code points), names abbreviated with a
 * marker (U+2026 in a UTF-8 locale, '~' otherwise), prose wrapped. */
#define TEXT_WIDTH 80
void text_locale_init(void);
void text_set_utf8(bool on);
bool text_utf8(void);
const char *text_ellipsis(void);
size_t text_cols(const char *s);
size_t text_ncols(const char *s, size_t n);
void text_abbrev(struct sbuf *o, const char *s, size_t max);
void text_label(struct sbuf *o, const char *s, size_t max);
void text_fit(struct sbuf *o, const char *in, size_t width);

/* table.c: columns that fit a width (abbreviate the TABLE_FLEX column,
 * then wrap rows onto indented lines; numbers are never cut). */
#define TABLE_COLS_MAX 16
enum { TABLE_LEFT = 1 << 0, TABLE_FLEX = 1 << 1 };
struct table;
struct table *table_new(void);
struct table *table_free(struct table *t);
void table_col(struct table *t, const char *head, size_t min, size_t gap,
    unsigned flags);
void table_cell(struct table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void table_label(struct table *t, const char *s);
size_t table_rows(const struct table *t);
void table_render(struct table *t, struct sbuf *o, size_t width);

/* spark.c: a series as a sparkline of 8 levels (U+2581..U+2588 in UTF-8,
 * "_.:-=+*#" otherwise); NAN is an unknown point, drawn as a space. More
 * points than width: each column is the max of its bucket. */
void spark_line(struct sbuf *o, const double *v, size_t n, size_t width);
bool spark_range(const double *v, size_t n, double *ret_lo, double *ret_hi);
const char *spark_dots(void);
void spark_row(struct sbuf *o, const char *label, size_t label_cols,
    const char *lo, const char *hi, size_t range_cols, const double *v,
    size_t n, size_t width);

/* fmt_watch.c: watch's view of the live window, top-like */
void fmt_watch_top(struct sbuf *o, const Vitals__Window *w,
    const struct fmt_ctx *c);

/* watch.c: a frame per interval, in place on a terminal (tty), else one
 * timestamped block per frame (json: the frames alone). frame fills o
 * for width columns and returns a vitals_exit code; VX_UNAVAILABLE shows
 * what it wrote and goes on, other failures end the watch. */
struct watch {
	int64_t interval_ns;
	uint64_t count; /* 0: until 'q' or a signal */
	bool tty, json;
};
typedef int (*watch_frame_fn)(struct sbuf *o, size_t width, void *arg);
int watch_run(const struct watch *w, watch_frame_fn frame, void *arg);
void watch_screen(struct sbuf *o, const char *text, size_t cols, size_t rows);

/* conn.c: one request, one answer. */
const char *conn_default_socket(void);
/*
 * Connect to path, send req, receive the answer. Returns a vitals_exit
 * code; on VX_OK *ret is the answer (status OK, result of the expected
 * kind), otherwise msg holds a one-line reason and *ret is the daemon's
 * answer when there was one (else NULL).
 */
int conn_call(const char *path, int timeout_ms, const Vitals__Request *req,
    Vitals__Response **ret, struct sbuf *msg);

/* fmt_hp.c: heapprofd answers */
const char *fmt_hp_refusal(Vitals__HeapprofdRefusal r);
void fmt_hp_started(struct sbuf *o, const Vitals__HeapprofdStarted *s);
void fmt_hp_list(struct sbuf *o, const Vitals__HeapprofdList *l);
void fmt_hp_cancelled(struct sbuf *o, const Vitals__HeapprofdCancelled *c);
void fmt_hp_health(struct sbuf *o, const Vitals__HeapprofdHealth *h);

/* fmt_export.c: `export`'s file (FILE, "-" stdout; 0 or -errno) and its
 * summary, one line of text or one JSON object */
int fmt_export_write(const char *path, const uint8_t *p, size_t len);
void fmt_export(struct sbuf *b, const Vitals__ExportAnswer *ea,
    const char *file, bool json);

#endif
