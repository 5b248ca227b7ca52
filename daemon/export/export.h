/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Export to a fleet engine (doc/export.md): the OpenMetrics / Prometheus
 * text endpoint. export_state.c keeps what a page needs between samples
 * (the processes' cumulative counters, the top N and the "other"
 * remainder, sums over closed windows) and is pure; export_text.c renders
 * a page from it (pure); export.c feeds it from the collector after each
 * sample and each closed window; export_http.c serves the page over
 * libevent bufferevents under the limits socket clients have.
 */
#ifndef VITALSD_EXPORT_EXPORT_H
#define VITALSD_EXPORT_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/util.h"
#include "gpufreq/gpufreq.h"
#include "proc/proc.h"
#include "syscalls/syscalls.h"

struct window;

#define EXPORT_TOP_N_DEFAULT 50
#define EXPORT_TOP_N_MAX 1000
#define EXPORT_PORT_DEFAULT 9437

/* ------------------------------------------------------ export_state.c */

/* One exported process: its identity and its kernel counters as of the
 * latest sample (cumulative since it started). */
struct export_proc {
	int32_t pid;
	uint64_t starttime; /* ticks after boot: with pid, the identity */
	char comm[VITALS_COMM_LEN];
	uint64_t utime, stime, minflt, majflt; /* ticks, counts */
	uint64_t rss_pages;
	double score; /* recent CPU ticks, halved each sample: the rank */
	bool member;  /* one of the top N at the latest sample */
};

/* One exported cgroup: the sums of its window deltas since vitalsd first
 * saw it (cgroup.c reads once per window), its memory as last read. */
struct export_cg {
	uint64_t id; /* its directory's inode: with path, the identity */
	char path[256];
	uint32_t depth;
	uint64_t user_us, system_us, pgfault, pgmajfault;
	uint64_t mem_bytes;
	bool have_mem;
	double score; /* usage µs, halved each window: the rank */
	bool member;
	int64_t first_boot_ns; /* the window it was first seen in began */
};

/* One GPU device (gpufreq.c): the last closed window's figures, and its
 * time in state summed over every window since the exporter saw it. */
struct export_gpu {
	char name[GPUFREQ_NAME_LEN];
	struct gpufreq_win last; /* the last closed window's */
	bool in_last;		 /* in the last closed window's part */
	uint32_t nstates;
	uint64_t hz[GPUFREQ_MAX_STATES];
	uint64_t ms[GPUFREQ_MAX_STATES]; /* Σ window Δ, ms: a counter */
	int64_t first_boot_ns;		 /* the window it was first seen in */
};

#define EXPORT_CG_DEPTHS 17 /* CG_DEPTH_MAX + 1: "other" per depth */

/* Syscall latency (issue 22) summed over closed windows since the
 * exporter started (export_sc.c): one series per (process, syscall) up
 * to EXPORT_SC_SERIES, the rest in "other"; one histogram per syscall up
 * to EXPORT_SC_HISTS, the rest in "other". Σ series + other = every call
 * the windows counted. */
#define EXPORT_SC_SERIES 64
#define EXPORT_SC_HISTS 32
#define EXPORT_SC_OTHER UINT32_MAX /* nr of the "other" histogram */
struct export_sc_series {
	int32_t tgid; /* -1: other */
	uint64_t start_ns;
	uint32_t nr;
	char comm[SC_COMM_LEN];
	uint64_t count, errors[SC_ERR__MAX], sum_ns;
};
struct export_sc_hist {
	uint32_t nr; /* EXPORT_SC_OTHER: other */
	uint64_t count, sum_ns;
	/* hist[] with the calls under the floor in the floor's bucket */
	uint64_t b[SC_HIST_N];
};
struct export_sc {
	uint32_t arch; /* enum sysnames_arch of the last window */
	size_t nseries, nhists;
	struct export_sc_series series[EXPORT_SC_SERIES], other;
	struct export_sc_hist hists[EXPORT_SC_HISTS + 1];
	struct sc_counters ctr;
	bool have_prog; /* a window had BPF stats */
	uint64_t prog_run_ns, prog_run_cnt;
};
/* w's part folded into *scp (made at the first part that is on);
 * -ENOMEM leaves it as it was before that row */
int export_sc_window(struct export_sc **scp, const struct window *w);

/* Sums that only grow, since the exporter started. */
struct export_sums {
	/* every process's CPU ticks and faults observed in a sample's delta */
	uint64_t utime, stime, minflt, majflt;
	/* the part of those no process series carries ("other") */
	uint64_t o_utime, o_stime, o_minflt, o_majflt;
	/* closed windows: collector health */
	uint64_t samples, samples_valid, late_ticks;
	uint64_t inv_samples[INV__MAX], inv_deltas[INV__MAX];
	/* closed windows: the BPF sched accounting, ns and counts */
	bool bpf;
	uint64_t bpf_oncpu_ns, bpf_rq_ns, bpf_rq_count, bpf_switches;
	uint64_t bpf_wakeups, bpf_lost_ns;
};

struct export_state {
	unsigned top_n;
	unsigned hz;
	uint64_t page_bytes;
	uint64_t samples; /* samples fed */
	int64_t prev_boot_ns;
	int64_t first_boot_ns; /* the first sample's: where sums since start
				  begin */
	/* every live process by (pid, starttime), and the top N (indexes
	 * into procs, by rank) */
	size_t nprocs, cap;
	struct export_proc *procs;
	size_t ntop;
	uint32_t *top;
	uint64_t o_rss_pages; /* Σ RSS of the live processes not in top */
	struct export_sums sum;
	uint32_t store_dropped; /* the last closed window's */
	struct export_sc *sc;	/* syscall latency; NULL: no part on yet */
	/* cgroups of the last closed window (sorted by id, path), the top N
	 * of them, and per depth the rest: window deltas no series carries,
	 * memory of the groups without a series */
	size_t ncgs;
	struct export_cg *cgs;
	size_t ncgtop;
	uint32_t *cgtop;
	uint64_t cg_o_user_us[EXPORT_CG_DEPTHS],
	    cg_o_system_us[EXPORT_CG_DEPTHS];
	uint64_t cg_o_pgfault[EXPORT_CG_DEPTHS],
	    cg_o_pgmajfault[EXPORT_CG_DEPTHS];
	uint64_t cg_o_mem[EXPORT_CG_DEPTHS];
	uint32_t cg_depths; /* bit d: a group of depth d was seen */
	/* GPU devices (the gpufreq part); gpu_on: a window had the part */
	bool gpu_on;
	uint32_t ngpu;
	struct export_gpu gpu[GPUFREQ_MAX_DEV];
	/* the sample being fed */
	size_t nin, incap;
	struct export_proc *in;
	int64_t in_boot_ns;
};

int export_state_init(struct export_state *st, unsigned top_n, unsigned hz,
    uint64_t page_bytes);
void export_state_release(struct export_state *st);
/* A sample: begin, add each live process, end. */
void export_state_begin(struct export_state *st, int64_t boot_ns);
int export_state_add(struct export_state *st, const struct procscan_proc *p);
int export_state_end(struct export_state *st);
/* A closed window: its health and BPF sums. */
void export_state_window(struct export_state *st, const struct window *w);

/* ------------------------------------------------------- export_text.c */

/* Scrape and refusal counters, cumulative since start (MetricsHealth). */
struct export_stats {
	bool on;
	char listen[128]; /* as configured */
	uint32_t connections;
	uint64_t accepted, scrapes, not_found, bad_method;
	uint64_t cap_refused;  /* over metrics_max_connections */
	uint64_t timed_out;    /* no whole request, or answer unread, in time */
	uint64_t bad_requests; /* malformed or oversized */
	uint64_t accept_paused;	  /* accept stopped a second (EMFILE) */
	uint64_t page_bytes_last; /* the last page's size */
	uint64_t render_ns_last, render_ns_max;
};

enum export_format {
	EXPORT_OPENMETRICS, /* application/openmetrics-text 1.0.0 */
	EXPORT_PROMETHEUS,  /* text/plain 0.0.4 */
};

/* What a page is made of; any pointer may be NULL (not known yet). */
struct export_page {
	const struct export_state *st;
	const struct sys_sample *sys; /* the latest sample's reads */
	const struct window *open;    /* its open window (health so far) */
	const struct export_stats *stats;
};

int export_render(const struct export_page *pg, enum export_format fmt,
    struct vbuf *out);
/* The format an Accept header asks for (NULL: Prometheus text). */
enum export_format export_accept(const char *accept);
const char *export_content_type(enum export_format fmt);
/* A label value as the text formats escape it (\\, \", \n). */
int export_label_escape(struct vbuf *out, const char *s);
/* s as valid UTF-8 (U+FFFD for what is not), nothing escaped. */
int export_utf8(struct vbuf *out, const char *s);

/* ------------------------------------------------------------ export.c */

struct event_base;
struct collector;

struct otlp_opts;
struct otlp_stats;

struct export_opts {
	const char *listen; /* "HOST:PORT", "[V6]:PORT", "unix:PATH"; NULL:
			       no endpoint */
	const struct otlp_opts *otlp; /* NULL: no OTLP push */
	unsigned top_n;
	unsigned max_conns;   /* connections at once; more are closed */
	unsigned timeout_ms;  /* a whole request in, the page out */
	unsigned max_request; /* request line + headers, bytes */
	int priority;	      /* event priority: below the sampling tick */
};

struct export;

int export_new(struct event_base *base, const struct export_opts *o,
    const struct collector *col, struct export **ret);
struct export *export_free(struct export *ex);
/* After each sample and each closed window (loop thread). */
int export_sample(struct export *ex);
void export_window(struct export *ex, const struct window *w);
void export_get_stats(const struct export *ex, struct export_stats *ret);
/* false: no OTLP push */
bool export_get_otlp(const struct export *ex, struct otlp_stats *ret);
/* The OTLP request a push would send now (tests). */
int export_otlp_now(struct export *ex, struct vbuf *out, size_t *ret_points);
/* The page as a scrape would get it now (tests, vitalsd -n). */
int export_page_now(struct export *ex, enum export_format fmt,
    struct vbuf *out);

/* export_http.c: the listening socket and its connections */
struct export_http;

typedef int (*export_page_fn)(void *arg, enum export_format fmt,
    const struct vbuf **ret);

int export_http_new(struct event_base *base, const struct export_opts *o,
    export_page_fn page, void *arg, struct export_stats *stats,
    struct export_http **ret);
struct export_http *export_http_free(struct export_http *h);

/* ------------------------------------------------- export_perfetto.c */

/* Stored windows as a Perfetto trace (doc/export.md, "Perfetto trace"). */
struct export_perfetto_opts {
	int32_t pid;	     /* > 0: that pid's processes and threads only */
	uint64_t page_bytes; /* RSS pages to bytes (the unit multiplier) */
	size_t max_bytes;    /* the trace's bound; 0: none */
};

struct export_perfetto_info {
	size_t first; /* w[first..n) are in the trace, the rest cut */
	uint32_t windows, packets, tracks;
	int64_t first_wall_ns, last_wall_ns; /* 0 when no window */
};

/* w[0..n) oldest first; the trace of the newest windows that fit
 * max_bytes (-EMSGSIZE: not even the newest one does). */
int export_perfetto(struct window *const *w, size_t n,
    const struct export_perfetto_opts *o, uint8_t **ret, size_t *ret_len,
    struct export_perfetto_info *ret_info);

/* export_state.c: the CPU modes of system.cpu.time, shared by the page
 * and the OTLP push */
#define EXPORT_CPU_MODES 8
struct cpu_times;
extern const char *const export_cpu_modes[EXPORT_CPU_MODES];
void export_cpu_fields(const struct cpu_times *t,
    uint64_t ret[EXPORT_CPU_MODES]);

#endif /* VITALSD_EXPORT_EXPORT_H */
