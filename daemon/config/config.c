/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: defaults, "key = value" files and command-line overrides
 * all go through config_set(), so a key means the same thing everywhere.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "core/sysprop.h"
#include "core/util.h"
#include "gpumem/gpumem.h"
#include "hp/hp.h"
#include "privs/privs.h"
#include "proc/proc.h"
#include "sched/sched.h"
#include "store/store.h"
#include "taskiter/taskiter.h"
#include "config/config_atrace.h"
#include "config/config_reload.h"
#include "trace/trace.h"
#include "wss/wss.h"

/* CONTROL_PIPELINE of control.c: answers one connection may have queued,
 * so max_output_bytes must hold that many frames. Keep the two equal. */
#define CONFIG_PIPELINE 4

void
config_init(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->state_dir = strdup("/data/misc/vitalsd");
	cfg->socket_path = NULL; /* <state_dir>/vitalsd.sock */
	cfg->proc_root = strdup("/proc");
	cfg->sys_root = strdup("/sys");
	cfg->interval_ms = 1000;
	cfg->window_s = 10;
	/* the daemon reads the newest alone (health, snapshot, dump, the
	 * signal's dump); older windows are the store's */
	cfg->ring = 1;
	cfg->threads = THREADS_CHANGED;
	store_opts_default(&cfg->store);
	cfg->write_queue = 64;
	cfg->shell_uid = 2000;	/* AID_SHELL */
	cfg->system_uid = 1000; /* AID_SYSTEM: system_server */
	cfg->max_conns = 64;
	cfg->idle_timeout_ms = 30000;
	cfg->max_frame = 1u << 20;
	cfg->max_output = CONFIG_PIPELINE * ((1u << 20) + 4);
	cfg->query_queue = 64;
	cfg->query_threads = 2;
	cfg->query_uid_queue = 16;
	cfg->query_nice = 10;
	cfg->query_warm = 0;
	cfg->query_idle_s = 30;
	cfg->startup_pageout = 2;
	cfg->scanner = SCANNER_AUTO;
	cfg->proc_stat_fds = VITALS_STAT_FDS_DEF;
	cfg->full_walk_s = VITALS_FULL_WALK_S_DEF;
	cfg->bpffs = strdup("/sys/fs/bpf/vitals");
	cfg->bpf_load = VBPF_LOAD_AUTO;
	cfg->bpf_rq_source = VBPF_RQ_WAKEUP;
	cfg->bpf_procs = 512;	 /* = VITALS_BPF_PROCS_DEF (sched/sched.h) */
	cfg->bpf_threads = 2048; /* = VITALS_BPF_THREADS_DEF */
	cfg->gpumem_map = strdup(VITALS_GPUMEM_MAP);
	cfg->gpumem_load = GPUMEM_LOAD_AUTO;
	cfg->gpumem_attach_s = VITALS_GPUMEM_ATTACH_S;
	/* heapprofd triggers; config_check reports a failure */
	if ((cfg->hp = calloc(1, sizeof(*cfg->hp))) != NULL)
		hp_settings_init(cfg->hp);
	wss_config_init(&cfg->wss);
	cgroup_config_init(&cfg->cgroup);
	fgbg_config_init(&cfg->fgbg);
	burst_settings_init(&cfg->burst);
	dmabuf_config_init(&cfg->dmabuf);
	sc_config_init(&cfg->syscalls);
	config_metrics_init(cfg);
	/* ftrace (ftrace.c) */
	cfg->ftrace = true;
	cfg->gpufreq = true;
	cfg->ftrace_instance = strdup("vitals");
	cfg->ftrace_buffer_kb = 2048;
	cfg->ftrace_sched = FTRACE_SCHED_AUTO;
	/* the sampling period: 250 cost three more loop wake-ups a second */
	cfg->ftrace_tick_ms = 1000;
	cfg->ftrace_max_pages = 64;
	cfg->ftrace_wake_percent = 20;
	cfg->fault_maps_reads = FAULT_MAPS_READS_DEFAULT;
}

void
config_release(struct config *cfg)
{
	free(cfg->state_dir);
	free(cfg->socket_path);
	free(cfg->proc_root);
	free(cfg->sys_root);
	free(cfg->bpffs);
	free(cfg->gpumem_map);
	hp_settings_release(cfg->hp);
	free(cfg->hp);
	free(cfg->user);
	free(cfg->groups);
	wss_config_release(&cfg->wss);
	cgroup_config_release(&cfg->cgroup);
	fgbg_config_release(&cfg->fgbg);
	free(cfg->ftrace_instance);
	free(cfg->tracefs);
	free(cfg->prop_root);
	free(cfg->atrace_apps);
	free(cfg->fault_phases);
	free(cfg->store_spool_dir);
	config_src_free(cfg->src);
	free(cfg->metrics_listen);
	free(cfg->otlp_endpoint);
	memset(cfg, 0, sizeof(*cfg));
}

const char *
threads_mode_name(enum threads_mode m)
{
	switch (m) {
	case THREADS_NONE:
		return "none";
	case THREADS_CHANGED:
		return "changed";
	case THREADS_ALL:
		return "all";
	}
	return "?";
}

static int
set_str(char **dst, const char *value)
{
	char *s;

	if (*value == '\0')
		return -EINVAL;
	if ((s = strdup(value)) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* uint32_t fields (max_frame, max_output) go through set_uint too. */
_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "unsigned is 32-bit");

static int
set_uint(unsigned *dst, const char *value, uint64_t min, uint64_t max)
{
	return parse_u32_range(value, min, max, dst);
}

static int
set_u64(uint64_t *dst, const char *value, uint64_t min)
{
	uint64_t v;
	int r;

	if ((r = parse_uint(value, INT64_MAX, &v)) < 0)
		return r;
	if (v < min)
		return -ERANGE;
	*dst = v;
	return 0;
}

static int
set_i64(int64_t *dst, const char *value, uint64_t min)
{
	uint64_t v;
	int r;

	/* Seconds are later multiplied to ns: keep that inside int64. */
	if ((r = parse_uint(value, INT64_MAX / NSEC_PER_SEC, &v)) < 0)
		return r;
	if (v < min)
		return -ERANGE;
	*dst = (int64_t)v;
	return 0;
}

/* An absolute directory; "" or "off": no spool (kept as ""). */
static int
set_spool_dir(char **dst, const char *value)
{
	char *s;

	if (*value != '\0' && strcmp(value, "off") != 0 && *value != '/')
		return -EINVAL;
	if (strlen(value) >= 4096 - 64)
		return -ERANGE;
	if ((s = strdup(strcmp(value, "off") ? value : "")) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* "0, 1000,2000": numeric ids, commas and blanks between; "" or "none":
 * an empty list. The list is replaced only when the whole value parses. */
/* The main file's journal: persist, truncate or wal. */
static int
set_journal(enum store_journal *dst, const char *value)
{
	static const char *const name[] = {
		[STORE_JOURNAL_PERSIST] = "persist",
		[STORE_JOURNAL_TRUNCATE] = "truncate",
		[STORE_JOURNAL_WAL] = "wal",
	};
	unsigned i;

	for (i = 0; i < sizeof(name) / sizeof(name[0]); i++)
		if (!strcmp(value, name[i])) {
			*dst = (enum store_journal)i;
			return 0;
		}
	return -EINVAL;
}

/* auto_vacuum of a new vitals.db: none or incremental. */
static int
set_vacuum(enum store_vacuum *dst, const char *value)
{
	if (!strcmp(value, "none"))
		*dst = STORE_VACUUM_NONE;
	else if (!strcmp(value, "incremental"))
		*dst = STORE_VACUUM_INCREMENTAL;
	else
		return -EINVAL;
	return 0;
}

/* startup_pageout (core/pageout.h) */
static const struct parse_word pageout_words[] = { { "off", 0 }, { "on", 1 },
	{ "random", 2 }, { NULL, 0 } };

static int
set_idlist(struct id_list *dst, const char *value)
{
	struct id_list l = { 0 };
	char buf[1024], *tok, *save = NULL;
	uint64_t v;
	int r;

	if (strlen(value) >= sizeof(buf))
		return -ERANGE;
	if (strcmp(value, "none") != 0) {
		strcpy(buf, value);
		for (tok = strtok_r(buf, ", \t", &save); tok != NULL;
		     tok = strtok_r(NULL, ", \t", &save)) {
			/* (uid_t)-1 is "no change" to the kernel: never an id */
			if ((r = parse_uint(tok, UINT32_MAX - 1, &v)) < 0)
				return r;
			if (l.n == VITALS_IDLIST_MAX)
				return -ERANGE;
			l.id[l.n++] = (uint32_t)v;
		}
	}
	*dst = l;
	return 0;
}

static int
set_uid(uint32_t *dst, const char *value)
{
	uint64_t v;
	int r;

	if (!strcmp(value, "none")) {
		*dst = VITALS_NO_UID;
		return 0;
	}
	if ((r = parse_uint(value, UINT32_MAX - 1, &v)) < 0)
		return r;
	*dst = (uint32_t)v;
	return 0;
}

/* Keys of the control plane (control.c, doc/protocol.md). */
static int
config_set_control(struct config *cfg, const char *key, const char *value)
{
	if (!strcmp(key, "trusted_uids"))
		return set_idlist(&cfg->trusted_uids, value);
	if (!strcmp(key, "trusted_gids"))
		return set_idlist(&cfg->trusted_gids, value);
	if (!strcmp(key, "reader_uids"))
		return set_idlist(&cfg->reader_uids, value);
	if (!strcmp(key, "reader_gids"))
		return set_idlist(&cfg->reader_gids, value);
	if (!strcmp(key, "shell_uid")) {
		cfg->shell_uid_set = true;
		return set_uid(&cfg->shell_uid, value);
	}
	if (!strcmp(key, "system_uid")) {
		cfg->system_uid_set = true;
		return set_uid(&cfg->system_uid, value);
	}
	if (!strcmp(key, "max_connections"))
		return set_uint(&cfg->max_conns, value, 1, 65536);
	if (!strcmp(key, "trusted_max_connections"))
		return set_uint(&cfg->trusted_max_conns, value, 1, 65535);
	if (!strcmp(key, "idle_timeout_ms"))
		return set_uint(&cfg->idle_timeout_ms, value, 100,
		    24 * 3600 * 1000);
	if (!strcmp(key, "max_frame_bytes"))
		return set_uint(&cfg->max_frame, value, 64 * 1024, 64u << 20);
	if (!strcmp(key, "max_output_bytes"))
		return set_uint(&cfg->max_output, value, 64 * 1024, 1u << 30);
	if (!strcmp(key, "query_queue"))
		return set_uint(&cfg->query_queue, value, 1, 4096);
	if (!strcmp(key, "query_nice"))
		return set_uint(&cfg->query_nice, value, 0, 19);
	if (!strcmp(key, "query_warm"))
		return set_uint(&cfg->query_warm, value, 0, 1);
	if (!strcmp(key, "query_idle_s"))
		return set_uint(&cfg->query_idle_s, value, 1, 86400);
	if (!strcmp(key, "startup_pageout")) {
		int r = parse_word(value, pageout_words);

		if (r < 0)
			return r;
		cfg->startup_pageout = (unsigned)r;
		return 0;
	}
	if (!strcmp(key, "query_threads"))
		return set_uint(&cfg->query_threads, value, 1, 16);
	if (!strcmp(key, "query_queue_per_uid"))
		return set_uint(&cfg->query_uid_queue, value, 1, 4096);
	if (!strcmp(key, "query_budget_bytes"))
		return set_u64(&cfg->query_budget, value, 64 * 1024);
	return -ENOENT;
}

/* Keyword values of the enum-like keys: struct parse_word tables. */

static const struct parse_word threads_words[] = { { "none", THREADS_NONE },
	{ "changed", THREADS_CHANGED }, { "all", THREADS_ALL }, { NULL, 0 } };
static const struct parse_word scanner_words[] = { { "auto", SCANNER_AUTO },
	{ "bpf", SCANNER_BPF }, { "procfs", SCANNER_PROCFS }, { NULL, 0 } };
static const struct parse_word bpf_load_words[] = { { "auto", VBPF_LOAD_AUTO },
	{ "pinned-only", VBPF_LOAD_PINNED_ONLY }, { "off", VBPF_LOAD_OFF },
	{ NULL, 0 } };
static const struct parse_word on_off_words[] = { { "on", 1 }, { "off", 0 },
	{ NULL, 0 } };
static const struct parse_word rq_source_words[] = { { "wakeup",
							 VBPF_RQ_WAKEUP },
	{ "sched_info", VBPF_RQ_SCHED_INFO }, { NULL, 0 } };
static const struct parse_word gpumem_load_words[] = {
	{ "auto", GPUMEM_LOAD_AUTO }, { "map-only", GPUMEM_LOAD_MAP_ONLY },
	{ "off", GPUMEM_LOAD_OFF }, { NULL, 0 }
};

/* The value of a keyword in a NULL-terminated table; -EINVAL: none. */
/* Keys of the privilege drop (privs.c, doc/privileges.md). */
static const struct parse_word seccomp_words[] = { { "off", PRIVS_SECCOMP_OFF },
	{ "on", PRIVS_SECCOMP_ON }, { "log", PRIVS_SECCOMP_LOG }, { NULL, 0 } };

static int
config_set_privs(struct config *cfg, const char *key, const char *value)
{
	int r;

	if (!strcmp(key, "user")) {
		if (!strcmp(value, "none")) {
			free(cfg->user);
			cfg->user = NULL;
			return 0;
		}
		return set_str(&cfg->user, value);
	}
	if (!strcmp(key, "group")) {
		if (!strcmp(value, "none")) {
			free(cfg->groups);
			cfg->groups = NULL;
			return 0;
		}
		return set_str(&cfg->groups, value);
	}
	if (!strcmp(key, "capabilities"))
		return caps_parse(value, &cfg->keep_caps);
	if (!strcmp(key, "seccomp")) {
		if ((r = parse_word(value, seccomp_words)) < 0)
			return r;
		cfg->seccomp = (unsigned)r;
		return 0;
	}
	if (!strcmp(key, "privhelper")) {
		if ((r = parse_word(value, on_off_words)) < 0)
			return r;
		cfg->privhelper = r;
		return 0;
	}
	return -ENOENT;
}

/* -EINVAL: bad value; -ERANGE: out of bounds; -ENOENT: unknown key. */
/* ftrace keys (ftrace.c); -ENOENT: not one of them. */
static const struct parse_word ftrace_sched_words[] = { { "auto",
							    FTRACE_SCHED_AUTO },
	{ "on", FTRACE_SCHED_ON }, { "off", FTRACE_SCHED_OFF }, { NULL, 0 } };

/* System properties and ATrace categories (atrace_cat.c); -ENOENT: not
 * one of them. */
static int
config_set_atrace(struct config *cfg, const char *key, const char *value)
{
	char apps[ATCAT_APPS_MAX * SYSPROP_VALUE_MAX];
	int r;

	if (!strcmp(key, "prop_root")) {
		if (!strcmp(value, "none")) {
			free(cfg->prop_root);
			cfg->prop_root = NULL;
			return 0;
		}
		return set_str(&cfg->prop_root, value);
	}
	if (!strcmp(key, "atrace_categories"))
		return atcat_parse_categories(value, &cfg->atrace_tags, NULL,
		    0);
	if (!strcmp(key, "atrace_apps")) {
		if ((r = atcat_parse_apps(value, apps, sizeof(apps))) < 0)
			return r;
		free(cfg->atrace_apps);
		cfg->atrace_apps = NULL;
		if (apps[0] && (cfg->atrace_apps = strdup(apps)) == NULL)
			return -ENOMEM;
		return 0;
	}
	return -ENOENT;
}

static int
config_set_ftrace(struct config *cfg, const char *key, const char *value)
{
	int r;

	if (!strcmp(key, "ftrace")) {
		if ((r = parse_word(value, on_off_words)) < 0)
			return r;
		cfg->ftrace = r;
		return 0;
	}
	if (!strcmp(key, "ftrace_instance")) {
		/* a directory under instances/ that is ours: "vitals" then
		 * [A-Za-z0-9_-], under 64 bytes, the names the privileged
		 * helper may remove (a foreign instance is never touched) */
		size_t i, n = strlen(value);

		if (n < 6 || n > 63 || strncmp(value, "vitals", 6) != 0)
			return -EINVAL;
		for (i = 6; i < n; i++)
			if (!isalnum((unsigned char)value[i]) &&
			    value[i] != '_' && value[i] != '-')
				return -EINVAL;
		return set_str(&cfg->ftrace_instance, value);
	}
	if (!strcmp(key, "tracefs"))
		return set_str(&cfg->tracefs, value);
	if (!strcmp(key, "ftrace_buffer_kb"))
		return set_uint(&cfg->ftrace_buffer_kb, value, 4, 1u << 20);
	if (!strcmp(key, "ftrace_tick_ms"))
		return set_uint(&cfg->ftrace_tick_ms, value, 10, 10000);
	if (!strcmp(key, "ftrace_wake_percent"))
		return set_uint(&cfg->ftrace_wake_percent, value, 0, 100);
	if (!strcmp(key, "ftrace_max_pages"))
		return set_uint(&cfg->ftrace_max_pages, value, 1, 65536);
	if (!strcmp(key, "ftrace_sched")) {
		if ((r = parse_word(value, ftrace_sched_words)) < 0)
			return r;
		cfg->ftrace_sched = r;
		return 0;
	}
	return config_set_atrace(cfg, key, value);
}

int
config_set(struct config *cfg, const char *key, const char *value)
{
	int r;

	if (!strcmp(key, "state_dir"))
		return set_str(&cfg->state_dir, value);
	if (!strcmp(key, "socket"))
		return set_str(&cfg->socket_path, value);
	if (!strcmp(key, "proc_root"))
		return set_str(&cfg->proc_root, value);
	if (!strcmp(key, "sys_root"))
		return set_str(&cfg->sys_root, value);
	if (!strcmp(key, "gpufreq")) {
		if ((r = parse_word(value, on_off_words)) < 0)
			return r;
		cfg->gpufreq = r;
		return 0;
	}
	if (!strcmp(key, "interval_ms"))
		return set_uint(&cfg->interval_ms, value,
		    VITALS_INTERVAL_MIN_MS, 3600 * 1000);
	if (!strcmp(key, "window_s"))
		return set_uint(&cfg->window_s, value, 1, 24 * 3600);
	if (!strcmp(key, "ring"))
		return set_uint(&cfg->ring, value, 1, 1024);
	if (!strcmp(key, "write_queue"))
		return set_uint(&cfg->write_queue, value, 1, 4096);
	if (!strcmp(key, "retention_s"))
		return set_i64(&cfg->store.retain_s, value, 60);
	if (!strcmp(key, "db_max_bytes"))
		return set_u64(&cfg->store.max_bytes, value, 64 * 1024);
	if (!strcmp(key, "store_spool_dir"))
		return set_spool_dir(&cfg->store_spool_dir, value);
	if (!strcmp(key, "store_commit_s"))
		return set_uint(&cfg->store.commit_s, value, 0, 3600);
	if (!strcmp(key, "store_journal"))
		return set_journal(&cfg->store.journal, value);
	if (!strcmp(key, "store_auto_vacuum"))
		return set_vacuum(&cfg->store.vacuum, value);
	if (!strcmp(key, "rollup1_after_s"))
		return set_i64(&cfg->store.rollup1_after_s, value, 1);
	if (!strcmp(key, "rollup1_s"))
		return set_uint(&cfg->store.rollup1_s, value, 1, 86400);
	if (!strcmp(key, "rollup2_after_s"))
		return set_i64(&cfg->store.rollup2_after_s, value, 1);
	if (!strcmp(key, "rollup2_s"))
		return set_uint(&cfg->store.rollup2_s, value, 1, 7 * 86400);
	if (!strcmp(key, "burst_keep_s"))
		return set_i64(&cfg->store.burst_keep_s, value, 0);
	if (!strcmp(key, "rollup_batch_s"))
		return set_i64(&cfg->store.rollup_batch_s, value, 0);
	if (!strcmp(key, "rollup2_threads")) {
		if ((r = parse_word(value, on_off_words)) < 0)
			return r;
		cfg->store.rollup2_threads = r;
		return 0;
	}
	/* wall-clock trust for retention (store_maint.c) */
	if (!strcmp(key, "clock_jump_s"))
		return set_i64(&cfg->store.clock_jump_s, value, 60);
	if (!strcmp(key, "clock_stable_s"))
		return set_i64(&cfg->store.clock_stable_s, value, 60);
	if (!strcmp(key, "bpffs"))
		return set_str(&cfg->bpffs, value);
	if (!strcmp(key, "bpf_load")) {
		if ((r = parse_word(value, bpf_load_words)) < 0)
			return r;
		cfg->bpf_load = r;
		return 0;
	}
	/* BPF rows a window keeps: processes and uids, threads */
	if (!strcmp(key, "bpf_procs"))
		return set_uint(&cfg->bpf_procs, value, 1, 65536);
	if (!strcmp(key, "bpf_threads"))
		return set_uint(&cfg->bpf_threads, value, 1, 65536);
	/* where run-queue waits come from (sched.bpf.c rq_sched_info) */
	if (!strcmp(key, "bpf_rq_source")) {
		if ((r = parse_word(value, rq_source_words)) < 0)
			return r;
		cfg->bpf_rq_source = r;
		return 0;
	}
	if (!strcmp(key, "bpf_stats")) {
		if ((r = parse_word(value, on_off_words)) < 0)
			return r;
		cfg->bpf_stats = r;
		return 0;
	}
	if (!strcmp(key, "scanner")) {
		if ((r = parse_word(value, scanner_words)) < 0)
			return r;
		cfg->scanner = r;
		return 0;
	}
	if (!strcmp(key, "proc_stat_fds"))
		return set_uint(&cfg->proc_stat_fds, value, 0, 1 << 20);
	if (!strcmp(key, "full_walk_s"))
		return set_uint(&cfg->full_walk_s, value, 0, 24 * 3600);
	if (!strcmp(key, "threads")) {
		if ((r = parse_word(value, threads_words)) < 0)
			return r;
		cfg->threads = r;
		return 0;
	}
	if (!strcmp(key, "gpumem_map"))
		return set_str(&cfg->gpumem_map, value);
	if (!strcmp(key, "gpumem_load")) {
		if ((r = parse_word(value, gpumem_load_words)) < 0)
			return r;
		cfg->gpumem_load = r;
		return 0;
	}
	if (!strcmp(key, "gpumem_attach_s"))
		return set_uint(&cfg->gpumem_attach_s, value, 0, 3600);
	/* heapprofd_* keys (hp_rules.c) */
	if (!strncmp(key, "heapprofd_", 10))
		return cfg->hp ? hp_settings_set(cfg->hp, key, value) : -ENOMEM;
	if ((r = config_set_privs(cfg, key, value)) != -ENOENT)
		return r;
	/* working-set monitor keys: wss_* (wss.c) */
	if (!strncmp(key, "wss_", 4))
		return wss_config_set(&cfg->wss, key, value);
	/* the OpenMetrics endpoint: metrics_* (config_export.c) */
	if (!strncmp(key, "metrics_", 8))
		return config_metrics_set(cfg, key, value);
	/* OTLP push: otlp_* (config_export.c) */
	if (!strncmp(key, "otlp_", 5))
		return config_otlp_set(cfg, key, value);
	/* cgroup v2 groups: cgroup, cgroup_* (config_cgroup.c) */
	if (!strncmp(key, "cgroup", 6))
		return cgroup_config_set(&cfg->cgroup, key, value);
	/* burst triggers: burst_* (config_burst.c) */
	if (!strncmp(key, "burst_", 6))
		return burst_settings_set(&cfg->burst, key, value);
	/* foreground/background: fgbg, fgbg_* (config_fgbg.c) */
	if (!strncmp(key, "fgbg", 4))
		return fgbg_config_set(&cfg->fgbg, key, value);
	/* DMA-BUF per process: dmabuf, dmabuf_* (config_dmabuf.c) */
	if (!strncmp(key, "dmabuf", 6))
		return dmabuf_config_set(&cfg->dmabuf, key, value);
	/* syscall latency: syscall_*, syscalls (config_syscalls.c) */
	if (!strncmp(key, "syscall", 7))
		return sc_config_set(&cfg->syscalls, key, value);
	if (!strncmp(key, "fault_", 6))
		return config_set_phase(cfg, key, value);
	if ((r = config_set_ftrace(cfg, key, value)) != -ENOENT)
		return r;
	return config_set_control(cfg, key, value);
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s &&
	    (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static const char *
set_error(int r)
{
	switch (r) {
	case -ENOENT:
		return "unknown key";
	case -ERANGE:
		return "value out of range";
	case -ENOMEM:
		return "out of memory";
	default:
		return "invalid value";
	}
}

/*
 * The file, only if it is a regular file: a directory reads as empty (the
 * daemon would run on defaults, as root), a FIFO or a device blocks or
 * streams forever. O_NONBLOCK so that opening a FIFO does not wait for a
 * writer; it is cleared again once fstat() said "regular".
 */
static FILE *
config_open(const char *path, char *err, size_t errsz, int *ret_r)
{
	struct stat st;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*ret_r = -errno;
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		*ret_r = -errno;
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err, errsz, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (fcntl(fd, F_SETFL, 0) < 0 || (f = fdopen(fd, "r")) == NULL) {
		*ret_r = -errno;
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	return f;
}

int
config_parse_file(struct config *cfg, const char *path, char *err, size_t errsz)
{
	char line[1024];
	unsigned lineno = 0;
	FILE *f;
	int r = 0;

	if ((f = config_open(path, err, errsz, &r)) == NULL)
		return r;
	if ((r = config_note_path(cfg, path)) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(-r));
		fclose(f);
		return r;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s, *eq, *key, *value;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errsz, "%s:%u: line too long", path,
			    lineno);
			r = -EINVAL;
			break;
		}
		s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		if ((eq = strchr(s, '=')) == NULL) {
			snprintf(err, errsz, "%s:%u: expected key = value",
			    path, lineno);
			r = -EINVAL;
			break;
		}
		*eq = '\0';
		key = trim(s);
		value = trim(eq + 1);
		if ((r = config_set(cfg, key, value)) < 0) {
			snprintf(err, errsz, "%s:%u: %s: %s", path, lineno, key,
			    set_error(r));
			break;
		}
		if ((r = config_note(cfg, key, value, false)) < 0) {
			snprintf(err, errsz, "%s:%u: %s", path, lineno,
			    strerror(-r));
			break;
		}
	}
	fclose(f);
	return r;
}

/*
 * Paths the start builds from the configuration must fit where they go, so
 * that -n refuses what the real start would (control_sock.c: sun_path;
 * daemon.c and store.c: PATH_MAX-sized buffers, with room for the
 * ".corrupt-<time>.N" and "-wal" suffixes).
 */
static int
check_paths(const struct config *cfg, char *err, size_t errsz)
{
	size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	size_t n;

	n = cfg->socket_path ? strlen(cfg->socket_path) :
			       strlen(cfg->state_dir) + strlen("/vitalsd.sock");
	if (n > max) {
		snprintf(err, errsz,
		    "control socket path too long: %zu "
		    "bytes, at most %zu (%s)",
		    n, max,
		    cfg->socket_path ? "socket" : "state_dir + /vitalsd.sock");
		return -ENAMETOOLONG;
	}
	if (strlen(cfg->state_dir) + 64 >= 4096) {
		snprintf(err, errsz, "state_dir too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

int
config_check(const struct config *cfg, char *err, size_t errsz)
{
	int r;

	if (cfg->interval_ms < VITALS_INTERVAL_MIN_MS) {
		snprintf(err, errsz, "interval_ms below %d",
		    VITALS_INTERVAL_MIN_MS);
		return -ERANGE;
	}
	/* Name the one constraint that failed, with its values. */
	if (cfg->store.rollup1_s < cfg->window_s) {
		snprintf(err, errsz,
		    "roll-ups must get coarser: window_s "
		    "(%u) <= rollup1_s (%u)",
		    cfg->window_s, cfg->store.rollup1_s);
		return -ERANGE;
	}
	if (cfg->store.rollup2_s < cfg->store.rollup1_s) {
		snprintf(err, errsz,
		    "roll-ups must get coarser: rollup1_s "
		    "(%u) <= rollup2_s (%u)",
		    cfg->store.rollup1_s, cfg->store.rollup2_s);
		return -ERANGE;
	}
	if (cfg->store.rollup2_after_s < cfg->store.rollup1_after_s) {
		snprintf(err, errsz,
		    "roll-ups must get older: "
		    "rollup1_after_s (%lld) <= rollup2_after_s (%lld)",
		    (long long)cfg->store.rollup1_after_s,
		    (long long)cfg->store.rollup2_after_s);
		return -ERANGE;
	}
	if ((uint64_t)cfg->window_s * 1000 < cfg->interval_ms) {
		snprintf(err, errsz, "window_s shorter than one interval");
		return -ERANGE;
	}
	/* A client may have CONTROL_PIPELINE (control.c) answers of the
	 * largest size queued: that is not an overflow. */
	if ((uint64_t)cfg->max_output <
	    (uint64_t)CONFIG_PIPELINE * ((uint64_t)cfg->max_frame + 4)) {
		snprintf(err, errsz,
		    "max_output_bytes below %u frames "
		    "(%u * (max_frame_bytes + 4) = %llu)",
		    CONFIG_PIPELINE, CONFIG_PIPELINE,
		    (unsigned long long)CONFIG_PIPELINE *
			((unsigned long long)cfg->max_frame + 4));
		return -ERANGE;
	}
	if (cfg->hp == NULL) {
		snprintf(err, errsz, "out of memory (heapprofd settings)");
		return -ENOMEM;
	}
	/* seccomp on with a perfetto path is valid: with privhelper on, the
	 * helper's spawner runs perfetto; without it, sessions are refused
	 * with a named state and main() warns (doc/heapprofd.md). */
	if (cfg->state_dir == NULL || cfg->proc_root == NULL ||
	    cfg->sys_root == NULL || cfg->bpffs == NULL) {
		snprintf(err, errsz,
		    "missing state_dir, proc_root or sys_root");
		return -EINVAL;
	}
	if ((r = check_paths(cfg, err, errsz)) < 0)
		return r;
	/* Trusted callers never take the last slots: readers keep some. */
	if (cfg->trusted_max_conns >= cfg->max_conns) {
		snprintf(err, errsz,
		    "trusted_max_connections (%u) must be "
		    "below max_connections (%u): the rest is kept for "
		    "readers",
		    cfg->trusted_max_conns, cfg->max_conns);
		return -ERANGE;
	}
	if (cfg->wss.interval_min_ms > cfg->wss.interval_max_ms ||
	    cfg->wss.interval_ms < cfg->wss.interval_min_ms ||
	    cfg->wss.interval_ms > cfg->wss.interval_max_ms) {
		snprintf(err, errsz,
		    "wss intervals: need wss_interval_min_ms "
		    "<= wss_interval_ms <= wss_interval_max_ms");
		return -ERANGE;
	}
	return 0;
}
