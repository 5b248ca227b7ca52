/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitalsd private header: every type shared between the daemon's files and
 * the prototypes of each file's exported functions, grouped by file.
 *
 * Conventions: functions return 0 or -errno; out-parameters are named ret_*
 * and are left untouched on failure; x_free() accepts NULL.
 */
#ifndef VITALSD_H
#define VITALSD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define VITALS_CPU_MAX 512	/* cpuN lines above this are counted, not kept */
#define VITALS_COMM_LEN 16	/* TASK_COMM_LEN, including the NUL */
#define VITALS_NAME_LEN 128	/* process name from cmdline, cut */
#define VITALS_SLEEP_NS 50000000LL /* Δboot − Δmono above this: slept */
#define VITALS_INTERVAL_MIN_MS 100
#define VITALS_BURST_INTERVAL_MS 100
#define VITALS_BURST_MAX_MS 10000

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL
#define NSEC_PER_USEC 1000LL

/*
 * Why a sample or a delta was dropped. Each is counted per window; a dropped
 * delta is never replaced by 0, −1 or a guess.
 */
enum vitals_invalid {
	INV_SLEPT,	 /* Δboottime − Δmonotonic > 50 ms: device suspended */
	INV_NO_ADVANCE,	 /* monotonic time did not advance between reads */
	INV_REGRESSION,	 /* a cumulative counter went backwards */
	INV_READ_FAILED, /* open/read failed for another reason than exit */
	INV_PARSE,	 /* the text did not parse */
	INV_VANISHED,	 /* the task went away between readdir and read */
	INV_IDENTITY,	 /* starttime changed: the id was reused */
	INV_HOTPLUG,	 /* a cpuN line appeared or disappeared */
	INV__MAX
};

/* Collectors whose cost is measured separately. */
enum vitals_coll {
	COLL_STAT,
	COLL_LOADAVG,
	COLL_PSI,
	COLL_VMSTAT,
	COLL_MEMINFO,
	COLL_CPUFREQ,
	COLL_PROCS,
	COLL__MAX
};

/* ---------------------------------------------------------------- parsers */

/* One cpu line of /proc/stat, in USER_HZ ticks. */
struct cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	uint64_t guest, guest_nice; /* already inside user/nice */
};

#define PROCSTAT_HAVE_CTXT (1u << 0)
#define PROCSTAT_HAVE_BTIME (1u << 1)
#define PROCSTAT_HAVE_PROCESSES (1u << 2)
#define PROCSTAT_HAVE_RUNNING (1u << 3)
#define PROCSTAT_HAVE_BLOCKED (1u << 4)

/* /proc/stat. cpu[i] is meaningful only where online[i] is set. */
struct procstat {
	struct cpu_times all;
	struct cpu_times cpu[VITALS_CPU_MAX];
	uint8_t online[VITALS_CPU_MAX]; /* a cpuN line was present */
	unsigned ncpu_online;		/* number of cpuN lines kept */
	unsigned cpu_span;		/* highest N + 1 among kept lines */
	unsigned cpu_dropped;		/* cpuN lines with N >= VITALS_CPU_MAX */
	uint64_t ctxt, btime, processes, procs_running, procs_blocked;
	unsigned have; /* PROCSTAT_HAVE_* */
};

/* /proc/loadavg: "0.27 0.13 0.05 1/77 2234". runnable/threads count threads. */
struct loadavg {
	double avg1, avg5, avg15;
	uint32_t runnable, threads;
	uint32_t last_pid;
};

/* One /proc/pressure/<res> line: "some avg10=.. avg60=.. avg300=.. total=..". */
struct psi_line {
	double avg10, avg60, avg300; /* percent */
	uint64_t total_us;	     /* cumulative stall time */
};

struct psi {
	struct psi_line some, full;
	bool have_full; /* cpu "full" exists only on newer kernels */
};

enum psi_res { PSI_CPU, PSI_MEMORY, PSI_IO, PSI__MAX };

/* /proc/vmstat keys vitalsd keeps (all cumulative counters). */
enum vmstat_key {
	VM_PGFAULT,
	VM_PGMAJFAULT,
	VM_PSWPIN,
	VM_PSWPOUT,
	VM_PGPGIN,
	VM_PGPGOUT,
	VM_PGSCAN_KSWAPD,
	VM_PGSCAN_DIRECT,
	VM_PGSTEAL_KSWAPD,
	VM_PGSTEAL_DIRECT,
	VM_WORKINGSET_REFAULT_ANON,
	VM_WORKINGSET_REFAULT_FILE,
	VM_OOM_KILL,
	VM__MAX
};

struct vmstat {
	uint64_t v[VM__MAX];
	uint32_t have; /* bit k set: key k was present */
};

/* /proc/meminfo keys vitalsd keeps (gauges, kB). */
enum meminfo_key {
	MI_MEMTOTAL,
	MI_MEMFREE,
	MI_MEMAVAILABLE,
	MI_BUFFERS,
	MI_CACHED,
	MI_SWAPCACHED,
	MI_ACTIVE,
	MI_INACTIVE,
	MI_SWAPTOTAL,
	MI_SWAPFREE,
	MI_DIRTY,
	MI_ANONPAGES,
	MI_MAPPED,
	MI_SHMEM,
	MI_SRECLAIMABLE,
	MI_SUNRECLAIM,
	MI_KERNELSTACK,
	MI_PAGETABLES,
	MI__MAX
};

struct meminfo {
	uint64_t kb[MI__MAX];
	uint32_t have; /* bit k set: key k was present */
};

/* /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat, fields 1-based. */
struct pid_stat {
	int32_t pid;			/* 1 */
	char comm[VITALS_COMM_LEN];	/* 2, a label only: never a key */
	char state;			/* 3 */
	int32_t ppid;			/* 4 */
	uint64_t minflt;		/* 10 */
	uint64_t majflt;		/* 12 */
	uint64_t utime;			/* 14, ticks */
	uint64_t stime;			/* 15, ticks */
	int32_t num_threads;		/* 20 */
	uint64_t starttime;		/* 22, ticks since boot */
	uint64_t vsize;			/* 23, bytes */
	uint64_t rss_pages;		/* 24 */
};

/* The parts of /proc/<pid>/status vitalsd keeps. */
struct pid_status {
	uint32_t uid;  /* real uid, first of the Uid: line */
	uint32_t euid; /* effective uid */
	uint32_t gid;  /* real gid */
	int32_t tgid;
	int64_t vm_rss_kb; /* −1: line absent (kernel thread) */
	int64_t rss_anon_kb;
	int64_t rss_file_kb;
	int64_t rss_shmem_kb;
	int64_t vm_swap_kb;
};

/* proc_stat.c: pure parsers of system files; bytes in, struct out. */
int procstat_parse(const char *buf, size_t len, struct procstat *ret);
int loadavg_parse(const char *buf, size_t len, struct loadavg *ret);
int psi_parse(const char *buf, size_t len, struct psi *ret);
int vmstat_parse(const char *buf, size_t len, struct vmstat *ret);
int meminfo_parse(const char *buf, size_t len, struct meminfo *ret);
int parse_u64_text(const char *buf, size_t len, uint64_t *ret);
const char *vmstat_key_name(enum vmstat_key k);
const char *meminfo_key_name(enum meminfo_key k);

/* proc_pid.c: pure parsers of per-task files. */
int pidstat_parse(const char *buf, size_t len, struct pid_stat *ret);
int pidstatus_parse(const char *buf, size_t len, struct pid_status *ret);
int cmdline_name(const char *buf, size_t len, char *ret, size_t retsz);

/* --------------------------------------------------------------- metrics.c */

uint64_t cpu_times_total(const struct cpu_times *t);
uint64_t cpu_times_busy(const struct cpu_times *t);
int cpu_times_delta(const struct cpu_times *prev, const struct cpu_times *cur,
    struct cpu_times *ret);
void cpu_times_add(struct cpu_times *acc, const struct cpu_times *d);
double metric_core_equiv(uint64_t cpu_ticks, uint64_t wall_ns, unsigned hz);
double metric_machine_share(uint64_t cpu_ticks, uint64_t total_ticks);
double metric_normalised(uint64_t cpu_ticks, double norm_ticks);

/* ----------------------------------------------------------------- windows */

/* A gauge over a window: avg = sum / n. n == 0 means "no valid reading". */
struct gauge {
	double min, max, sum, last;
	uint32_t n;
};

/* Σ of valid per-sample deltas of one CPU (or of the aggregate line). */
struct window_cpu {
	struct cpu_times d; /* raw Σ deltas, ticks */
	uint32_t samples;   /* deltas summed into d */
	uint64_t wall_ns;   /* Σ Δmonotonic of those samples */
	bool online_end;    /* line present in the window's last sample */
	/* frequency, kHz; cur_khz.n == 0 when unknown */
	struct gauge cur_khz;
	int64_t max_khz;  /* cpuinfo_max_freq, −1 unknown */
	int32_t capacity; /* cpu_capacity, −1 unknown */
	struct gauge freq_ratio; /* cur/max per sample, when both known */
};

/* Per process (or per thread) activity inside one window. */
struct window_task {
	int32_t id;   /* pid, or tid for threads */
	int32_t tgid; /* owning process */
	uint64_t starttime;
	uint32_t uid;
	char comm[VITALS_COMM_LEN];
	char name[VITALS_NAME_LEN]; /* process name; comm for threads */
	uint64_t d_utime, d_stime;   /* ticks */
	uint64_t d_minflt, d_majflt; /* counts, never bytes */
	uint32_t samples;	     /* valid deltas summed */
	uint64_t wall_ns;	     /* Σ Δmonotonic over those samples */
	uint64_t total_ticks;	     /* Σ system Δtotal over those samples */
	double norm_ticks;	     /* Σ Δtotal/online_cpus over them */
	uint64_t rss_pages_max;	     /* stat field 24, highest seen */
	uint64_t rss_pages_last;
	bool born;   /* started inside the window: counters are the delta */
	bool exited; /* gone before the window closed */
};

struct window_psi {
	bool available; /* file present and parsed at least once */
	bool have_full;
	uint64_t d_some_us, d_full_us; /* Σ valid deltas of total= */
	uint32_t samples;
	struct gauge some_avg10, full_avg10;
};

struct window_health {
	uint64_t self_utime_us, self_stime_us; /* getrusage delta */
	uint64_t coll_ns_sum[COLL__MAX], coll_ns_max[COLL__MAX];
	uint64_t sample_ns_sum, sample_ns_max; /* whole sample */
	uint32_t late_ticks;	/* timer fired over half an interval late */
	uint32_t burst_samples; /* samples taken in burst mode */
	uint32_t procs_scanned, threads_scanned; /* in the last sample */
	uint32_t procs_exited, threads_exited;	 /* instances that ended */
	uint32_t cpu_dropped; /* cpuN lines beyond VITALS_CPU_MAX */
	/* the store as seen when this window closed (enum store_state) */
	uint32_t store_state;
	uint32_t store_queued;	/* windows waiting to be written */
	uint32_t store_dropped; /* windows lost to a full queue, cumulative */
};

struct window {
	uint64_t seq;
	char boot_id[40];  /* /proc/sys/kernel/random/boot_id, "" unknown */
	uint32_t level;	   /* 0: as sampled; 1, 2: roll-ups */
	int64_t mono_start_ns, mono_end_ns;
	int64_t boot_start_ns, boot_end_ns;
	int64_t wall_start_ns, wall_end_ns; /* CLOCK_REALTIME, for display */
	uint32_t hz;			    /* USER_HZ of the ticks below */
	uint32_t interval_ms;		    /* nominal cadence at close */

	uint32_t samples;	/* taken (each with a timestamp) */
	uint32_t samples_valid; /* system deltas accepted */
	uint32_t inv_samples[INV__MAX]; /* whole samples dropped, by reason */
	uint32_t inv_deltas[INV__MAX];	/* single deltas dropped, by reason */

	struct window_cpu all;
	unsigned cpu_span;	/* entries in cpu[] */
	struct window_cpu *cpu; /* indexed by CPU number */
	struct gauge online_cpus;

	uint64_t d_ctxt, d_processes; /* Σ valid deltas */
	struct gauge procs_running, procs_blocked;
	struct gauge load1, load5, load15, load_runnable, load_threads;
	struct window_psi psi[PSI__MAX];
	uint64_t d_vm[VM__MAX]; /* Σ valid deltas */
	uint32_t vm_samples;
	uint32_t vm_have;
	struct gauge mem_kb[MI__MAX];
	uint32_t mem_have;

	size_t nprocs, procs_cap;
	struct window_task *procs;
	size_t nthreads, threads_cap;
	struct window_task *threads;

	struct window_health health;
};

/* window.c */
struct window *window_new(uint64_t seq, unsigned cpu_span);
struct window *window_free(struct window *w);
struct window *window_dup(const struct window *w);
int window_add_task(struct window *w, bool thread, const struct window_task *t);
int window_grow_cpus(struct window *w, unsigned cpu_span);
void gauge_add(struct gauge *g, double v);
double gauge_avg(const struct gauge *g);
void gauge_merge(struct gauge *acc, const struct gauge *g);
const char *invalid_name(enum vitals_invalid r);
const char *coll_name(enum vitals_coll c);
const char *psi_res_name(enum psi_res r);

/* --------------------------------------------------------------- rollup.c */

/* Fold src (a later window) into acc: deltas and counts sum, gauges merge,
 * tasks merge by identity. acc keeps its start, takes src's end. */
int window_merge(struct window *acc, const struct window *src);

/* ---------------------------------------------------------------- store.c */

enum store_state {
	STORE_OK,
	STORE_FULL,	/* SQLITE_FULL / ENOSPC: writes wait and retry */
	STORE_IO_ERROR, /* other write failures: wait and retry */
	STORE_CLOSED,	/* not open (no database) */
};

struct store_opts {
	int64_t rollup1_after_s; /* level-0 windows older than this ... */
	unsigned rollup1_s;	 /* ... merge into windows of this span */
	int64_t rollup2_after_s;
	unsigned rollup2_s;
	int64_t retain_s;   /* nothing older than this is kept */
	uint64_t max_bytes; /* database size bound */
	int busy_timeout_ms;
};

struct store_stats {
	enum store_state state;
	int last_err; /* -errno of the last failed operation, 0 none */
	char last_errmsg[128];
	uint64_t windows_written, write_failures;
	uint64_t windows_rolled, deleted_age, deleted_size;
	uint64_t corrupt_moved; /* databases moved aside at open */
	char corrupt_path[256];
	uint64_t db_bytes;
	uint64_t commit_ns_last, commit_ns_max;
};

/* Metrics for top-N queries. */
enum store_metric { METRIC_CPU, METRIC_MINFLT, METRIC_MAJFLT, METRIC_RSS };

struct store;

void store_opts_default(struct store_opts *o);
int store_open(const char *path, const struct store_opts *o,
    struct store **ret);
struct store *store_close(struct store *s);
int store_put(struct store *s, const struct window *w);
int store_maintain(struct store *s, int64_t now_wall_ns);
void store_get_stats(const struct store *s, struct store_stats *ret);
int store_windows(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, struct window ***ret, size_t *ret_n);
int store_top(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, enum store_metric m, unsigned n,
    struct window_task **ret, size_t *ret_n);
int store_process(struct store *s, int32_t pid, uint64_t starttime,
    int64_t from_wall_ns, int64_t to_wall_ns, struct window_task **ret,
    size_t *ret_n);
const char *store_state_name(enum store_state st);

/* Added with the store: the schema a new database gets, and its mark. */
#define STORE_SCHEMA_VERSION 2
#define STORE_APPLICATION_ID 0x56544c53 /* "VTLS" */

/* One window of a task's history, with the window it came from. */
struct store_hist {
	char boot_id[40];
	uint32_t level;
	uint32_t hz;
	int64_t mono_start_ns, mono_end_ns;
	int64_t wall_start_ns, wall_end_ns;
	struct window_task t;
};

int store_history(struct store *s, bool threads, int32_t id,
    uint64_t starttime, int64_t from_wall_ns, int64_t to_wall_ns,
    struct store_hist **ret, size_t *ret_n);
/* Tests and tools only: run SQL, return the first column of the first row. */
int store_exec(struct store *s, const char *sql, char *ret, size_t retsz);
/* Tests only: a new database at an older schema version, plus some SQL. */
int store_create_version(const char *path, unsigned version, const char *sql);

/* --------------------------------------------------------------- writer.c */

struct writer;

int writer_start(struct store *store, unsigned queue_max,
    struct writer **ret);
int writer_submit(struct writer *wr, const struct window *w);
void writer_get(struct writer *wr, struct store_stats *ret_stats,
    unsigned *ret_queued, uint64_t *ret_dropped);
struct writer *writer_stop(struct writer *wr, unsigned flush_ms);

/* ----------------------------------------------------------- bpf_common.c */

int bpf_pin_path(const char *bpffs, const char *kind, const char *name,
    char *ret, size_t retsz);
int bpf_check_bpffs(const char *dir);
void bpf_common_init(void);
int bpf_stats_enable(void);

/* ---------------------------------------------------------------- util.c */

/* A growable byte buffer used for reads and text output. */
struct vbuf {
	char *p;
	size_t len, cap;
};

int vbuf_reserve(struct vbuf *b, size_t extra);
int vbuf_printf(struct vbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vbuf_reset(struct vbuf *b);
void vbuf_release(struct vbuf *b);
int read_fd_all(int fd, struct vbuf *b);
int read_at(int dirfd, const char *path, struct vbuf *b);
int64_t clock_ns(int clockid);
int parse_uint(const char *s, uint64_t max, uint64_t *ret);

/* ----------------------------------------------------------------- log.c */

void log_init(bool foreground, int verbosity, const char *ident);
void log_setverbose(int verbosity);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* ------------------------------------------------------------- sysfiles.c */

/* One read of every system file. *_err: 0, or -errno (-ENOENT: absent). */
struct sys_sample {
	int stat_err;
	struct procstat stat;
	int loadavg_err;
	struct loadavg loadavg;
	int psi_err[PSI__MAX];
	struct psi psi[PSI__MAX];
	int vm_err;
	struct vmstat vm;
	int mem_err;
	struct meminfo mem;
	int64_t cur_khz[VITALS_CPU_MAX]; /* −1: unknown */
	uint64_t coll_ns[COLL__MAX];
};

struct sysfiles;

int sysfiles_open(const char *proc_root, const char *sys_root,
    struct sysfiles **ret);
struct sysfiles *sysfiles_free(struct sysfiles *sf);
void sysfiles_read(struct sysfiles *sf, struct sys_sample *ret);
int64_t sysfiles_max_khz(const struct sysfiles *sf, unsigned cpu);
int32_t sysfiles_capacity(const struct sysfiles *sf, unsigned cpu);

/* ------------------------------------------------------------ proc_scan.c */

enum threads_mode {
	THREADS_NONE,	 /* processes only */
	THREADS_CHANGED, /* threads of processes whose counters moved */
	THREADS_ALL,	 /* every thread every sample */
};

/* What one process scan needs to know about the sample it belongs to. */
struct scan_ctx {
	bool valid;	       /* false: refresh baselines, add nothing */
	bool have_prev;	       /* a previous sample exists */
	int64_t prev_boot_ns;  /* CLOCK_BOOTTIME of the previous sample */
	uint64_t wall_ns;      /* Δmonotonic of this sample */
	uint64_t total_ticks;  /* system Δtotal of this sample */
	double norm_ticks;     /* Δtotal / online CPUs */
};

struct procscan;

int procscan_new(int procfd, unsigned hz, enum threads_mode mode,
    struct procscan **ret);
struct procscan *procscan_free(struct procscan *ps);
void procscan_set_mode(struct procscan *ps, enum threads_mode mode);
int procscan_run(struct procscan *ps, const struct scan_ctx *ctx,
    struct window *w);
int procscan_flush(struct procscan *ps, struct window *w);
size_t procscan_nprocs(const struct procscan *ps);
size_t procscan_nthreads(const struct procscan *ps);

/* ------------------------------------------------------------ collector.c */

struct clocks {
	int64_t mono_ns, boot_ns, wall_ns;
};

struct collector_opts {
	const char *proc_root;
	const char *sys_root;
	unsigned hz;		/* 0: sysconf(_SC_CLK_TCK) */
	unsigned interval_ms;	/* nominal cadence, for window alignment */
	unsigned window_s;
	unsigned ring;		/* closed windows kept in memory */
	enum threads_mode threads;
};

typedef void (*window_cb)(const struct window *w, void *arg);

struct collector;

int collector_new(const struct collector_opts *o, struct collector **ret);
struct collector *collector_free(struct collector *c);
void collector_clocks(struct clocks *ret);
int collector_sample(struct collector *c, const struct clocks *now,
    bool burst);
int collector_close_window(struct collector *c, const struct clocks *now);
void collector_set_interval(struct collector *c, unsigned interval_ms);
void collector_note_late(struct collector *c);
void collector_set_window_cb(struct collector *c, window_cb cb, void *arg);
const struct window *collector_window(const struct collector *c,
    unsigned back);
const struct window *collector_open(const struct collector *c);
unsigned collector_hz(const struct collector *c);

/* ----------------------------------------------------------------- dump.c */

int dump_window(const struct window *w, unsigned topn, struct vbuf *out);
void dump_summary_line(const struct window *w, struct vbuf *out);

/* --------------------------------------------------------------- config.c */

struct config {
	char *state_dir;
	char *socket_path;
	char *proc_root;
	char *sys_root;
	unsigned interval_ms;
	unsigned window_s;
	unsigned ring;
	enum threads_mode threads;
	int verbose;
	struct store_opts store;
	unsigned write_queue; /* closed windows waiting for the store */
};

void config_init(struct config *cfg);
void config_release(struct config *cfg);
int config_set(struct config *cfg, const char *key, const char *value);
int config_parse_file(struct config *cfg, const char *path,
    char *err, size_t errsz);
int config_check(const struct config *cfg, char *err, size_t errsz);
const char *threads_mode_name(enum threads_mode m);

/* --------------------------------------------------------------- daemon.c */

struct vitalsd;

int vitalsd_setup(const struct config *cfg, bool foreground,
    struct vitalsd **ret);
int vitalsd_run(struct vitalsd *d);
struct vitalsd *vitalsd_free(struct vitalsd *d);
void vitalsd_burst(struct vitalsd *d, unsigned duration_ms);

#endif /* VITALSD_H */
