/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: defaults, files and command-line overrides (config.c).
 */
#ifndef VITALSD_CONFIG_H
#define VITALSD_CONFIG_H

#include <sys/socket.h>

#include "proc/proc.h"
#include "store/store.h"
#include "burst/burst.h"
#include "cgroup/cgroup.h"
#include "dmabuf/dmabuf.h"
#include "syscalls/sc_collect.h"
#include "fgbg/fgbg.h"
#include "wss/wss.h"

struct hp_settings;
struct config_src;

#define VITALS_IDLIST_MAX 64
#define VITALS_NO_UID UINT32_MAX

/* A configured list of numeric uids or gids. */
struct id_list {
	unsigned n;
	uint32_t id[VITALS_IDLIST_MAX];
};

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
	/* batched commits: the spool's directory on a RAM file system;
	 * NULL: the default (daemon.c), "": off. store.commit_s 0: off */
	char *store_spool_dir;
	unsigned write_queue; /* closed windows waiting for the store */
	/* control plane (control.c); roles in doc/protocol.md */
	struct id_list trusted_uids, trusted_gids, reader_uids, reader_gids;
	uint32_t shell_uid;  /* a reader; VITALS_NO_UID: none */
	uint32_t system_uid; /* trusted; VITALS_NO_UID: none */
	/* shell_uid/system_uid came from the configuration; otherwise they
	 * are Android's AIDs, kept only on Android (control.c) */
	bool shell_uid_set, system_uid_set;
	unsigned max_conns;	    /* accept pauses at this many connections */
	unsigned trusted_max_conns; /* trusted callers together; 0: default */
	unsigned idle_timeout_ms;   /* no request, no progress: close */
	uint32_t max_frame;	    /* frame payload limit, both directions */
	uint32_t max_output;	    /* queued answer bytes per connection */
	unsigned query_queue;	  /* store reads waiting for the query thread */
	unsigned query_threads;	  /* read pool: threads, one connection each */
	unsigned query_uid_queue; /* reads one uid may have queued */
	unsigned query_nice;	  /* the read threads' nice value (0-19) */
	unsigned query_warm;	  /* 1: each read thread opens and warms its
				   * connection at start; 0: opened at need */
	unsigned query_idle_s;	  /* a read thread's memory released after */
	uint64_t query_budget;	  /* bytes one read may load; 0: from output */
	unsigned scanner;	  /* enum scanner_mode (taskiter.c) */
	unsigned proc_stat_fds;	  /* procfs scan: stat files kept open */
	/* event-driven samples: a full task walk at a window close at least
	 * this often (s; 0: every close; doc/bpf.md "Full walks") */
	unsigned full_walk_s;
	/* the start-up pageout before the first sample: 0 off, 1 on, 2 with
	 * MADV_RANDOM first (core/pageout.h) */
	unsigned startup_pageout;
	char *bpffs;		  /* pin directory (sched.c) */
	unsigned bpf_load;	  /* enum vbpf_load */
	bool bpf_stats;		  /* kernel BPF run-time statistics */
	unsigned bpf_rq_source;	  /* enum vbpf_rq: WAKEUP or SCHED_INFO */
	unsigned bpf_procs;	  /* BPF rows per window: processes, uids */
	unsigned bpf_threads;	  /* BPF rows per window: threads */
	char *gpumem_map;	  /* GpuMem total map pin (gpumem.c) */
	unsigned gpumem_load;	  /* enum gpumem_load */
	unsigned gpumem_attach_s; /* own program: attach retry time */
	/* heapprofd triggers (hp/hp.h): allocated by config_init */
	struct hp_settings *hp;
	/* privileges after setup (privs.c, doc/privileges.md) */
	char *user;		     /* service user; NULL: no drop */
	char *groups;		     /* its supplementary groups */
	uint64_t keep_caps;	     /* capabilities kept (bit = CAP_*) */
	unsigned seccomp;	     /* enum privs_seccomp */
	bool privhelper;	     /* fork the privileged helper */
	struct wss_config wss;	     /* working-set monitor (wss.c) */
	struct cgroup_config cgroup; /* cgroup v2 groups (cgroup.c) */
	struct fgbg_config fgbg;     /* foreground/background (fgbg.c) */
	struct burst_settings burst; /* burst triggers (burst/) */
	struct dmabuf_config dmabuf; /* DMA-BUF per process (dmabuf.c) */
	bool gpufreq;		     /* GPU frequency per device (gpufreq.c) */
	struct sc_config syscalls;   /* syscall latency (syscalls/) */
	/* ftrace (ftrace.c) */
	bool ftrace;		   /* read ftrace at all */
	char *ftrace_instance;	   /* instances/<name> */
	char *tracefs;		   /* NULL: libtracefs finds the mount */
	unsigned ftrace_buffer_kb; /* per CPU */
	unsigned ftrace_sched;	   /* enum ftrace_sched */
	unsigned ftrace_tick_ms;
	unsigned ftrace_max_pages;
	unsigned ftrace_wake_percent;
	/* fault phases (trace/phase.c, config_phase.c) */
	char *fault_phases;	   /* normalised names; NULL: off */
	unsigned fault_maps_reads; /* maps reads per window */
	/* system properties (sysprop.c), ATrace categories (atrace_cat.c) */
	char *prop_root;      /* double's directory; NULL: platform/none */
	uint64_t atrace_tags; /* atrace_categories as ATRACE_TAG_* bits */
	char *atrace_apps;    /* normalised app list; NULL: none */
	/* the file and each setting as given, for a reload
	 * (config_reload.c); NULL: none noted */
	struct config_src *src;
	/* the OpenMetrics endpoint (export/, config_export.c) */
	char *metrics_listen;	      /* NULL: off */
	unsigned metrics_top_n;	      /* processes with series of their own */
	unsigned metrics_max_conns;   /* connections at once */
	unsigned metrics_timeout_ms;  /* request in and page out, from accept */
	unsigned metrics_max_request; /* request line + headers, bytes */
	/* OTLP push (export/otlp_push.c, config_export.c) */
	char *otlp_endpoint;	  /* http://HOST[:PORT][/PREFIX]; NULL: off */
	unsigned otlp_interval_s; /* a batch every interval */
	unsigned otlp_queue_max;  /* batches kept while the collector is away */
	unsigned otlp_timeout_ms; /* connect, send and answer of one attempt */
};

/* config.c */
void config_init(struct config *cfg);
void config_release(struct config *cfg);
int config_set(struct config *cfg, const char *key, const char *value);
int config_parse_file(struct config *cfg, const char *path, char *err,
    size_t errsz);
int config_check(const struct config *cfg, char *err, size_t errsz);
const char *threads_mode_name(enum threads_mode m);

/* config_phase.c: fault_phases, fault_maps_reads (-ENOENT: not one) */
#define FAULT_PHASES_MAX 16
#define FAULT_PHASE_NAME_MAX 381 /* 127 UTF-16 units, 3 bytes each */
#define FAULT_MAPS_READS_DEFAULT 16
int config_parse_fault_phases(const char *v, char *ret, size_t retsz);
int config_set_phase(struct config *cfg, const char *key, const char *value);

/* config_export.c: the metrics_* keys (-ENOENT: not one) */
struct sockaddr_storage;
void config_metrics_init(struct config *cfg);
int config_metrics_set(struct config *cfg, const char *key, const char *value);
/* the otlp_* keys (-ENOENT: not one) */
int config_otlp_set(struct config *cfg, const char *key, const char *value);
/* http://HOST[:PORT][/PREFIX] into its parts (port 4318 by default,
 * the path without a trailing /); -EINVAL bad */
int config_parse_url(const char *url, char *ret_host, size_t hostsz,
    uint16_t *ret_port, char *ret_path, size_t pathsz);
/* "127.0.0.1:9437", "[::1]:9437" or "unix:PATH"; -EINVAL bad */
int config_parse_listen(const char *s, struct sockaddr_storage *ret,
    socklen_t *ret_len);

#endif /* VITALSD_CONFIG_H */
