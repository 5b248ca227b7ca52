/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Burst triggers (doc/bursts.md): rules that start burst sampling (every
 * 100 ms for 10 s) on their own when a stall shows — memory, CPU or I/O
 * pressure, a long run-queue tail, a long ATrace slice, a major-fault
 * storm — rate-limited, each firing recorded with its reason.
 * config/config_burst.c parses the rules (the heapprofd rules' syntax), burst.c
 * evaluates them and keeps the budgets and the record.
 */
#ifndef VITALSD_BURST_H
#define VITALSD_BURST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/proc.h"

struct window;

#define BURST_RULES_MAX 16
#define BURST_NAME_MAX 32
#define BURST_MATCH_MAX 128 /* a slice pattern or a process name */
#define BURST_LOG_MAX 64    /* firings kept in memory, newest last */
#define BURST_WHY_MAX 160

/* What a rule watches; stored in answers, so values never change. */
enum burst_cond {
	BURST_PSI_SOME,	   /* pressure: share of the window stalled */
	BURST_RQ_P99,	   /* run-queue delay p99 (BPF histograms) */
	BURST_SLICE,	   /* an ATrace slice over a bound */
	BURST_MAJFLT_RATE, /* a process's major faults per second */
	BURST_COND__MAX
};

/* Which processes a per-process condition looks at. */
enum burst_sel { BURST_SEL_ANY, BURST_SEL_NAME, BURST_SEL_UID };

struct burst_rule {
	char name[BURST_NAME_MAX];
	enum burst_cond cond;
	enum psi_res res; /* BURST_PSI_SOME */
	double level;	  /* percent (PSI) or per second (faults) */
	int64_t bound_ns; /* BURST_RQ_P99, BURST_SLICE */
	char pattern[BURST_MATCH_MAX]; /* BURST_SLICE: fnmatch(3) glob */
	enum burst_sel sel;
	char sel_name[BURST_MATCH_MAX];
	uint32_t sel_uid;
	uint32_t duration_ms; /* 0: the configured default */
	uint32_t cooldown_ms; /* with have_cooldown; else the default */
	bool have_cooldown;
};

/* The budgets and defaults (config keys burst_*). */
struct burst_settings {
	struct burst_rule rule[BURST_RULES_MAX];
	unsigned nrules;
	uint32_t duration_ms; /* a firing's burst; ≤ VITALS_BURST_MAX_MS */
	uint32_t cooldown_ms; /* a rule fires again only after this */
	uint32_t min_gap_ms;  /* between two rule-started bursts */
	uint32_t max_per_hour;
};

/* What came of a rule that held; stored in answers, never renumbered. */
enum burst_outcome {
	BURST_STARTED,	    /* a burst began */
	BURST_DURING_BURST, /* one was already running: not extended */
	BURST_COOLDOWN,	    /* the rule fired less than cooldown ago */
	BURST_GAP,	    /* another rule's burst began < min_gap ago */
	BURST_HOURLY,	    /* max_per_hour bursts in the last hour */
	BURST_OUTCOME__MAX
};

/* One rule holding, as recorded. */
struct burst_fire {
	int64_t wall_ns, mono_ns; /* when it was evaluated */
	uint32_t rule;		  /* index in the settings */
	char rule_name[BURST_NAME_MAX];
	enum burst_cond cond;
	enum burst_outcome outcome;
	double value, threshold; /* the condition's units (doc/bursts.md) */
	int32_t pid;		 /* the process it held for; 0 system-wide */
	uint32_t duration_ms;	 /* the burst asked for */
	char why[BURST_WHY_MAX];
};

struct burst_stats {
	uint64_t evaluations; /* rule × window (or × sample, for PSI) */
	uint64_t held;	      /* evaluations that held */
	uint64_t outcome[BURST_OUTCOME__MAX];
	uint64_t unavailable; /* the figure was absent (no BPF rows, no
			       * ftrace part, no PSI file) */
	uint64_t logged;      /* firings recorded since start */
};

/* What the daemon lends the evaluator. */
struct burst_hooks {
	/* start burst sampling for duration_ms */
	void (*start)(void *arg, unsigned duration_ms);
	/* when the running burst ends (CLOCK_MONOTONIC; any burst: a
	 * signal's, a caller's); NULL: only the rules' own are known */
	int64_t (*until)(void *arg);
	void *arg;
};

struct burst;

/* config/config_burst.c */
int burst_rule_parse(const char *s, struct burst_rule *ret, char *err,
    size_t errsz);
const char *burst_cond_name(enum burst_cond c);
const char *burst_outcome_name(enum burst_outcome o);
void burst_settings_init(struct burst_settings *bs);
int burst_settings_set(struct burst_settings *bs, const char *key,
    const char *v);

/* burst.c */
int burst_new(const struct burst_settings *bs, const struct burst_hooks *h,
    struct burst **ret);
struct burst *burst_free(struct burst *b);
void burst_window(struct burst *b, const struct window *w, int64_t mono_ns,
    int64_t wall_ns);
void burst_sample(struct burst *b, const struct sys_sample *s, int64_t mono_ns,
    int64_t wall_ns);
void burst_stats(const struct burst *b, struct burst_stats *ret);
size_t burst_log(const struct burst *b, struct burst_fire *ret, size_t max);
const struct burst_settings *burst_settings(const struct burst *b);

#endif /* VITALSD_BURST_H */
