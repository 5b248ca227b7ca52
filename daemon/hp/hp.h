/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd triggers: eligibility (hp_elig.c), budgets (hp_budget.c), the
 * Perfetto config (hp_config.c), rules (hp_rules.c), sessions (hp.c,
 * hp_session.c).
 */
#ifndef VITALSD_HP_H
#define VITALSD_HP_H

#include "core/util.h"

struct config;
struct event_base;
struct privs_helpers;
struct store;
struct window;
struct writer;

/* -------------------------------------------------- heapprofd triggers */

#define HP_NAME_MAX 256 /* a normalised process name, package, installer */
#define HP_RULE_NAME_MAX 64
#define HP_PIDS_MAX 16 /* pids of one session */
#define HP_INSTALLERS_MAX 8

/* Why a session was not started; the wire enum (HeapprofdRefusal) and the
 * store use the same numbers. */
enum hp_refusal {
	HP_OK,
	HP_REFUSE_NOT_ELIGIBLE, /* the platform's profiling rules say no */
	HP_REFUSE_RATE_PROCESS, /* the target's budget or cooldown */
	HP_REFUSE_RATE_SYSTEM,	/* the system-wide budget */
	HP_REFUSE_IN_PROGRESS,	/* one session at a time */
	HP_REFUSE_INVALID,	/* bad parameters, no such target */
	HP_REFUSE_UNAVAILABLE,	/* no perfetto binary, no store */
	HP_REFUSE__MAX
};

/* Who Perfetto will say started the session (DataSourceConfig). */
enum hp_initiator {
	HP_INIT_UNSPECIFIED,	/* shell-like: profileable_from_shell */
	HP_INIT_TRUSTED_SYSTEM, /* statsd-originated sessions only */
};

enum hp_build { HP_BUILD_USER, HP_BUILD_USERDEBUG, HP_BUILD_ENG };

/* How a session's perfetto is started (Health.heapprofd.spawn). */
enum hp_spawn_state {
	HP_SPAWN_NONE,	  /* no perfetto binary configured */
	HP_SPAWN_DIRECT,  /* the daemon forks it (seccomp off or log) */
	HP_SPAWN_HELPER,  /* the privileged helper's spawner runs it */
	HP_SPAWN_BLOCKED, /* seccomp on and no helper: refused */
	HP_SPAWN_FAILED,  /* the spawner did not start: refused */
	HP_SPAWN_LOST,	  /* the spawner's channel closed: refused */
};

/* No packages.list (not Android): what eligibility answers. */
enum hp_host { HP_HOST_REFUSE, HP_HOST_ALLOW };

/* Why eligibility answered as it did. */
enum hp_elig_why {
	HP_ELIG_OK,		  /* the package allows this initiator */
	HP_ELIG_DEBUG_BUILD,	  /* userdebug / eng: everything */
	HP_ELIG_HOST_ALLOW,	  /* no packages.list; host policy allows */
	HP_ELIG_PLATFORM_TRUSTED, /* platform uid, trusted-system */
	HP_ELIG_ISOLATED_TRUSTED, /* isolated uid, every package allows */
	/* refusals from here */
	HP_ELIG_HOST_REFUSE,	 /* no packages.list; host policy refuses */
	HP_ELIG_PLATFORM_UID,	 /* < 10000 and not trusted-system */
	HP_ELIG_ISOLATED_UID,	 /* isolated and not (trusted + all) */
	HP_ELIG_OTHER_UID,	 /* outside every range that may be profiled */
	HP_ELIG_NO_PACKAGE,	 /* the uid has no packages.list line */
	HP_ELIG_INSTALLER,	 /* installed by none of target_installed_by */
	HP_ELIG_NOT_PROFILEABLE, /* the flags this initiator needs are off */
	HP_ELIG_MALFORMED,	 /* packages.list has malformed lines */
	HP_ELIG__MAX
};

/* One packages.list line. */
struct hp_package {
	char name[HP_NAME_MAX];
	uint64_t uid;
	bool debuggable, profileable_from_shell, profileable;
	int64_t version_code;
	char installer[HP_NAME_MAX]; /* "" when the line has none */
};

struct hp_packages {
	struct hp_package *p;
	size_t n, cap;
	unsigned malformed; /* lines that did not parse: counted, skipped */
	unsigned first_bad_line; /* 1-based; 0 none */
};

struct hp_elig_policy {
	enum hp_initiator initiator;
	enum hp_build build;
	enum hp_host host;
	unsigned ninstalled_by;
	char installed_by[HP_INSTALLERS_MAX][HP_NAME_MAX];
};

/* hp_elig.c: pure */
int hp_normalize(const char *cmdline, size_t len, char *ret, size_t retsz);
int hp_packages_parse(const char *buf, size_t len, struct hp_packages *ret);
void hp_packages_release(struct hp_packages *pk);
bool hp_eligible(const struct hp_elig_policy *pol, const struct hp_packages *pk,
    uint32_t uid, enum hp_elig_why *ret_why);
const char *hp_elig_why_name(enum hp_elig_why why);
const char *hp_refusal_name(enum hp_refusal r);
const char *hp_initiator_name(enum hp_initiator i);
int hp_build_parse(const char *value, enum hp_build *ret);
const char *hp_build_name(enum hp_build b);
const char *hp_spawn_state_name(enum hp_spawn_state s);

/* Budgets: 0 in a limit means "no limit". */
struct hp_limits {
	unsigned proc_hour, proc_day, proc_week;
	unsigned sys_hour, sys_day, sys_week;
	unsigned cooldown_s; /* per target, from one start to the next */
};

/* One started session, as budgets see it. */
struct hp_budget_rec {
	int64_t start_wall_ns;
	char target[HP_NAME_MAX]; /* the budget key: normalised name */
};

#define HP_WEEK_NS (7LL * 86400 * NSEC_PER_SEC)

/* hp_budget.c: pure; now from the caller (an injectable clock) */
enum hp_refusal hp_budget_check(const struct hp_limits *l,
    const struct hp_budget_rec *recs, size_t n, const char *target,
    int64_t now_wall_ns, int64_t *ret_retry_ns, char *why, size_t whysz);

/* What one session asks Perfetto for. */
struct hp_params {
	unsigned npids;
	int32_t pids[HP_PIDS_MAX];
	unsigned nnames;
	char names[HP_PIDS_MAX][HP_NAME_MAX]; /* normalised process_cmdline */
	uint32_t duration_ms;
	uint64_t sampling_interval_bytes;
	uint64_t shmem_size_bytes;
	uint32_t dump_interval_ms; /* continuous dumps; 0: from dumps */
	uint32_t dumps;		   /* dump_interval_ms 0: duration / dumps */
	bool block_client;
	bool no_startup; /* processes that start during the session: no */
	bool no_running; /* processes already running: no */
	uint64_t adaptive_shmem_threshold; /* 0: not set */
	uint64_t adaptive_max_interval;	   /* 0: not set */
	uint32_t max_heapprofd_memory_kb;  /* 0: not set */
	uint64_t max_heapprofd_cpu_secs;   /* 0: not set */
	unsigned ninstalled_by;
	char installed_by[HP_INSTALLERS_MAX][HP_NAME_MAX];
	uint32_t buffer_kb;
	uint32_t proc_stats_poll_ms;
};

#define HP_SHMEM_MIN 8192ULL
#define HP_SHMEM_MAX (500ULL << 20)
#define HP_DURATION_MAX_MS (24u * 3600 * 1000)

/* hp_config.c: parameters checked, the Perfetto config as bytes and text */
void hp_params_default(struct hp_params *p);
int hp_params_check(const struct hp_params *p, char *why, size_t whysz);
int hp_config_encode(const struct hp_params *p, uint8_t **ret, size_t *ret_len);
int hp_config_text(const struct hp_params *p, struct vbuf *out);
void hp_params_dumps(struct hp_params *p);

/* The trace's own verdict on a session (hp_trace.c): what heapprofd wrote
 * about each target. Ordered by severity: the outcome is the largest. */
enum hp_profile {
	HP_PROF_COMPLETED,	  /* a dump of every target, no error flag */
	HP_PROF_DISCONNECTED,	  /* a target disconnected during the session */
	HP_PROF_BUFFER_OVERRAN,	  /* the shared buffer overran */
	HP_PROF_BUFFER_CORRUPTED, /* the shared buffer was corrupted */
	HP_PROF_GUARDRAIL,     /* heapprofd hit its memory or CPU guardrail */
	HP_PROF_REJECTED,      /* a concurrent session had the target */
	HP_PROF_NO_PROFILE,    /* a target (or every one) has no dump */
	HP_PROF_TRACE_CORRUPT, /* the file does not parse */
	HP_PROF__MAX
};

struct hp_trace_flags {
	bool rejected, disconnected, overran, corrupted, guardrail;
};

struct hp_trace_pid {
	int32_t pid;
	uint32_t dumps;
	bool rejected, disconnected, overran, corrupted, guardrail;
};

struct hp_trace_verdict {
	enum hp_profile outcome;
	uint64_t bytes, packets, profile_packets;
	uint64_t dumps;		     /* ProcessHeapSamples, every pid */
	uint64_t other_dumps;	     /* of pids not among the targets */
	struct hp_trace_flags flags; /* over every dump */
	unsigned npids;
	struct hp_trace_pid pid[HP_PIDS_MAX];
	uint64_t bad_offset; /* trace_corrupt: where, and why */
	char why[64];
};

/* One session's files under <state_dir>/heapprofd (trace and log). */
struct hp_trace_file {
	int64_t id;
	int64_t mtime_ns; /* the newer of the two */
	uint64_t bytes;	  /* both */
	unsigned nfiles;
};

enum hp_expire_why { HP_EXPIRE_KEEP, HP_EXPIRE_AGE, HP_EXPIRE_SIZE };

/* hp_expire.c: which sessions' files go; f is sorted by id (oldest
 * first) and ret_why[i] filled for each */
void hp_expire_plan(struct hp_trace_file *f, size_t n, int64_t now_wall_ns,
    uint32_t max_age_s, uint64_t max_bytes, int64_t keep_id,
    enum hp_expire_why *ret_why);

/* hp_trace.c: pure but for pread */
const char *hp_profile_name(enum hp_profile p);
void hp_trace_check(const uint8_t *buf, size_t len, const int32_t *pids,
    unsigned npids, struct hp_trace_verdict *ret);
int hp_trace_check_fd(int fd, const int32_t *pids, unsigned npids,
    struct hp_trace_verdict *ret);
void hp_trace_summary(const struct hp_trace_verdict *v, char *buf, size_t sz);

/* A rule: a condition over windows, which processes it watches, what is
 * profiled when it holds, and the session's parameters. */
enum hp_cond {
	HP_COND_RSS_GROWTH,  /* RSS grew by bytes within span */
	HP_COND_ANON_GROWTH, /* RssAnon grew by bytes within span */
	HP_COND_GPU_GROWTH,  /* GPU memory grew by bytes within span */
	HP_COND_MAJFLT_RATE, /* major faults per second over a window */
	HP_COND_PSI_MEMORY,  /* memory PSI some avg10 (%) in a window */
};

enum hp_sel { HP_SEL_ANY, HP_SEL_NAME, HP_SEL_UID };
enum hp_tgt { HP_TGT_MATCHED, HP_TGT_NAME, HP_TGT_UID };

struct hp_rule {
	char name[HP_RULE_NAME_MAX];
	enum hp_cond cond;
	uint64_t bytes;	 /* growth conditions */
	int64_t span_ns; /* growth conditions */
	double level;	 /* rate (per s) or PSI percent */
	enum hp_sel sel;
	char sel_name[HP_NAME_MAX];
	uint32_t sel_uid;
	enum hp_tgt tgt;
	char tgt_name[HP_NAME_MAX];
	uint32_t tgt_uid;
	/* overrides of the configured defaults; 0: the default */
	uint32_t duration_ms;
	uint64_t sampling_interval_bytes;
	uint64_t shmem_size_bytes;
	uint32_t dump_interval_ms;
};

/* What a rule evaluation may ask of the daemon. */
struct hp_eval_ctx {
	/* heapprofd's normalised name of a process (hp_normalize) */
	int (*name)(void *arg, int32_t pid, char *buf, size_t sz);
	/* RssAnon, kB */
	int (
	    *anon_kb)(void *arg, int32_t pid, uint64_t starttime, uint64_t *kb);
	/* GPU memory of a process (GpuMem); NULL or -ENOENT: unknown */
	int (*gpu_bytes)(void *arg, const struct window *w, int32_t pid,
	    uint64_t starttime, uint64_t *bytes);
	void *arg;
	unsigned page_size;
};

/* A rule that held. */
struct hp_fire {
	unsigned rule; /* index */
	int32_t pid;   /* the process that matched; 0 system conditions */
	uint64_t starttime;
	uint32_t uid;
	char name[HP_NAME_MAX]; /* its normalised name, "" unknown */
	char why[160];
};

struct hp_rule_stats {
	uint64_t evaluations, fired;
	uint64_t gpu_unavailable; /* GPU growth asked, no GpuMem figure */
	uint64_t name_failed, anon_failed; /* reads that failed */
	uint64_t tracked_dropped; /* processes beyond the tracking cap */
};

struct hp_rules;

/* hp_rules.c */
int hp_rule_parse(const char *s, struct hp_rule *ret, char *err, size_t errsz);
const char *hp_cond_name(enum hp_cond c);
int hp_rules_new(const struct hp_rule *rules, unsigned n,
    struct hp_rules **ret);
struct hp_rules *hp_rules_free(struct hp_rules *hr);
int hp_rules_eval(struct hp_rules *hr, const struct window *w,
    const struct hp_eval_ctx *ctx, struct hp_fire *ret, size_t max,
    size_t *ret_n);
void hp_rules_stats(const struct hp_rules *hr, struct hp_rule_stats *ret);

/* Configuration of the heapprofd triggers (struct config.hp). */
struct hp_settings {
	char *perfetto;	     /* the perfetto binary; NULL: none */
	char *packages_list; /* /data/system/packages.list */
	struct hp_elig_policy policy;
	struct hp_limits limits;
	struct hp_params defaults; /* no targets: parameters only */
	uint32_t grace_ms;	   /* timeout = duration + grace */
	uint32_t kill_after_ms;	   /* SIGTERM, then SIGKILL after this */
	/* trace files under <state_dir>/heapprofd expire (hp_expire.c);
	 * 0: no bound of that kind */
	uint32_t trace_max_age_s;
	uint64_t trace_max_bytes;
	unsigned nrules;
	struct hp_rule *rules;
};

void hp_settings_init(struct hp_settings *hs);
void hp_settings_release(struct hp_settings *hs);
int hp_settings_set(struct hp_settings *hs, const char *key, const char *value);

/* One session record (store_hp.c, hp.c). */
struct hp_record {
	int64_t id;
	int64_t created_wall_ns;
	bool by_rule;		      /* else a caller */
	char rule[HP_RULE_NAME_MAX];  /* by_rule */
	uint32_t caller_uid;	      /* !by_rule */
	char target[HP_NAME_MAX];     /* "pid 123" or the name asked for */
	char target_key[HP_NAME_MAX]; /* budget key: normalised name */
	char params[512];	      /* one-line summary of hp_params */
	bool started;		      /* a child ran: counts for budgets */
	int64_t start_wall_ns, end_wall_ns; /* 0: not yet */
	int32_t child_pid;
	uint64_t child_starttime;
	char outcome[32]; /* running, completed, failed, ... */
	unsigned refusal; /* enum hp_refusal */
	char message[256];
	int32_t exit_status; /* −1: none */
	int32_t term_signal; /* 0: none */
	char output_path[512];
	int64_t output_bytes; /* −1: no file */
};

/* A start request, from a caller or a rule. */
struct hp_request {
	bool by_rule;
	const struct hp_rule *rule; /* by_rule */
	uint32_t caller_uid;
	int32_t pid;	 /* target: pid, or */
	unsigned nnames; /* target: exact names (one session), or */
	char names[HP_PIDS_MAX][HP_NAME_MAX];
	bool by_uid; /* target: every process of uid */
	uint32_t uid;
	uint32_t duration_ms; /* 0: the defaults' ... */
	uint64_t sampling_interval_bytes;
	uint64_t shmem_size_bytes;
	uint32_t dump_interval_ms;
	bool block_client;
	uint32_t max_heapprofd_memory_kb;
	uint64_t max_heapprofd_cpu_secs;
	bool dry_run;
};

struct hp_answer {
	enum hp_refusal refusal;
	char message[256];
	int64_t id;	  /* session record; 0: dry run */
	struct vbuf text; /* dry run: the config as text; caller releases */
	char output_path[512];
};

struct hp_stats {
	uint64_t requests, started, dry_runs, denied;
	uint64_t refused[HP_REFUSE__MAX];
	uint64_t completed, failed, timeouts, cancelled, spawn_failed;
	/* traces checked after perfetto exited 0, by verdict; the longest
	 * check */
	uint64_t profiles[HP_PROF__MAX];
	int64_t check_ns_max;
	bool checking; /* a trace is being checked (off the loop) */
	/* trace files expired (hp_expire.c) */
	uint64_t expired_age_files, expired_size_files, expired_bytes;
	uint64_t expire_errors;
	unsigned trace_files; /* left after the last pass */
	uint64_t trace_bytes;
	uint64_t restarted_closed; /* found running at start, closed */
	uint64_t store_errors;
	/* records through the writer thread: waiting, written, lost to a
	 * full queue, refused by the store for good */
	unsigned records_queued;
	uint64_t records_written, records_dropped, records_failed;
	bool running;
	int64_t running_id;
	unsigned rules;
	struct hp_rule_stats rs;
	unsigned last_refusal; /* enum hp_refusal; 0 none */
	char last_message[256];
	unsigned initiator; /* enum hp_initiator in force */
	unsigned spawn;	    /* enum hp_spawn_state */
	char spawn_detail[160];
	unsigned build;	       /* enum hp_build in force */
	char build_source[64]; /* "ro.build.type" or the config key */
};

struct heapprofd;

/* hp.c: sessions, their child process on the loop, the rules */
int heapprofd_new(struct event_base *base, const struct config *cfg,
    struct store *store, const struct privs_helpers *helpers,
    struct heapprofd **ret);
struct heapprofd *heapprofd_free(struct heapprofd *hp);
void heapprofd_set_writer(struct heapprofd *hp, struct writer *wr);
void heapprofd_stop(struct heapprofd *hp);
int heapprofd_start(struct heapprofd *hp, const struct hp_request *rq,
    struct hp_answer *ret);
int heapprofd_cancel(struct heapprofd *hp, int64_t id, char *msg, size_t msgsz);
void heapprofd_window(struct heapprofd *hp, const struct window *w);
void heapprofd_get_stats(struct heapprofd *hp, struct hp_stats *ret);
void heapprofd_note_denied(struct heapprofd *hp);
void heapprofd_set_gpu(struct heapprofd *hp,
    int (*gpu_bytes)(void *arg, const struct window *w, int32_t pid,
	uint64_t starttime, uint64_t *bytes),
    void *arg);

#endif /* VITALSD_HP_H */
