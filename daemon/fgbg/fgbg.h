/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Foreground and background (doc/metrics.md, "Foreground and background"):
 * on Android, the state of each process — top-app, foreground,
 * background, system — read with the process in every sample where its
 * counters moved, from its cpuset (the cpuset line of /proc/<pid>/cgroup),
 * else another cgroup line naming an Android group, else oom_score_adj
 * mapped by ActivityManager's adj levels. A window keeps the datasets
 * apart: per process and state, the CPU ticks and faults of the sample
 * intervals that ended in that state. On a host the notion is absent,
 * and the window says so.
 *
 * fgbg_parse.c holds the pure parsers and mappings, fgbg.c the reads and
 * the open window's accumulators, fgbg_window.c the window part and the
 * sums a query answers from.
 */
#ifndef VITALSD_FGBG_FGBG_H
#define VITALSD_FGBG_FGBG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "window/window.h"

#define FG_PATH_LEN 128	  /* the cpuset root found */
#define FG_ENTS_MAX 65536 /* a part never holds more (roll-ups too) */

/* A process's state. The order is the wire's and the store's. */
enum fg_state {
	FG_TOP_APP,    /* the app the user is looking at */
	FG_FOREGROUND, /* visible, perceptible, persistent, camera-daemon */
	FG_BACKGROUND, /* background, system-background, restricted, cached */
	FG_SYSTEM,     /* the root cpuset; native daemons, system_server */
	FG_UNKNOWN,    /* nothing said: no cpuset line, no oom_score_adj */
	FG__MAX
};

/* Where a state came from. */
enum fg_source {
	FG_SRC_CPUSET, /* the cpuset controller's line */
	FG_SRC_CGROUP, /* another cgroup line naming an Android group */
	FG_SRC_ADJ,    /* oom_score_adj, ActivityManager's levels */
	FG_SRC_NONE,   /* none of them: FG_UNKNOWN */
	FG_SRC__MAX
};

/* The signal's state in a window. */
enum fgbg_status {
	FGBG_OFF,    /* fgbg = off */
	FGBG_ABSENT, /* fgbg = auto, and neither Android nor its cpusets */
	FGBG_ON,
	FGBG__MAX
};

enum fgbg_mode { FGBG_MODE_AUTO, FGBG_MODE_ON, FGBG_MODE_OFF };

/* ------------------------------------------------------- fgbg_parse.c */

const char *fg_state_name(unsigned st);
/* "top-app", "foreground", "background", "system", "unknown"; -EINVAL */
int fg_state_parse(const char *name);
const char *fg_source_name(unsigned src);
const char *fgbg_status_name(unsigned st);
/* An Android cpuset or cgroup path ("/top-app", "/foreground/boost",
 * "/" ...) as a state; -ENOENT: not one of Android's groups. */
int fg_group_state(const char *path, size_t len);
/* /proc/<pid>/cgroup text: the state its cpuset line gives, else one of
 * its other lines; -ENOENT none does. */
int fg_parse_cgroup(const char *buf, size_t len, enum fg_state *ret_state,
    enum fg_source *ret_src);
/* oom_score_adj as ActivityManager sets it (ProcessList's levels). */
enum fg_state fg_adj_state(int64_t adj);
/* oom_score_adj text; -EINVAL when it is not a number in [-1000, 1000] */
int fg_parse_adj(const char *buf, size_t len, int64_t *ret);

/* ------------------------------------------------------ the window part */

/* One process instance's activity in one state. */
struct window_fgbg_ent {
	int32_t pid;
	uint64_t starttime;
	uint32_t uid;
	uint32_t state; /* enum fg_state */
	char name[VITALS_NAME_LEN];
	uint64_t d_utime, d_stime;   /* ticks */
	uint64_t d_minflt, d_majflt; /* counts */
	uint32_t samples;	     /* sample intervals attributed */
};

struct window_fgbg {
	uint32_t status;	  /* enum fgbg_status */
	char cpuset[FG_PATH_LEN]; /* the Android cpuset root found; "" */
	uint32_t scans;		  /* process scans folded in */
	uint32_t reads;		  /* states read */
	uint32_t by_src[FG_SRC__MAX];
	uint32_t read_errors; /* a cgroup file that could not be read */
	uint32_t ents_cut;    /* entries past FG_ENTS_MAX */
	size_t n, cap;
	struct window_fgbg_ent *e; /* by pid, starttime, state */
};

static inline struct window_fgbg *
window_fgbg(const struct window *w)
{
	return (struct window_fgbg *)window_part(w, WPART_FGBG);
}

/* fgbg_window.c */
struct window_fgbg *window_fgbg_new(void);
void window_fgbg_free(struct window_fgbg *p);
struct window_fgbg_ent *window_fgbg_add(struct window_fgbg *p);
void window_fgbg_sort(struct window_fgbg *p);
extern const struct window_part_ops fgbg_window_part;

/*
 * The sums a query answers from: per process instance, its activity in
 * state st over parts p[0..n) (windows of a range, oldest first) as
 * window_tasks (id, starttime, uid, name, d_* and samples; the rest 0),
 * into *ret (the caller frees). pid > 0: that process only (starttime 0:
 * every instance).
 */
int fgbg_sum(struct window_fgbg *const *p, size_t n, enum fg_state st,
    int32_t pid, uint64_t starttime, struct window_task **ret, size_t *ret_n);
/* The status a range has: FGBG_ON when any part is on, else the newest
 * part's; -ENOENT when no window has a part. */
int fgbg_range_status(struct window_fgbg *const *p, size_t n);

/* ------------------------------------------------------------ fgbg.c */

struct fgbg_config {
	unsigned mode; /* enum fgbg_mode */
	char *cpuset;  /* the cpuset root; NULL: looked for */
};

/* config_fgbg.c (config's layer): fgbg, fgbg_cpuset; -ENOENT not one */
void fgbg_config_init(struct fgbg_config *c);
void fgbg_config_release(struct fgbg_config *c);
int fgbg_config_set(struct fgbg_config *c, const char *key, const char *value);

struct fgbg_opts {
	const char *proc_root;
	const char *sys_root;
	const struct fgbg_config *cfg;
	bool android; /* built for Android: auto is on */
};

struct fgbg;

int fgbg_new(const struct fgbg_opts *o, struct fgbg **ret);
struct fgbg *fgbg_free(struct fgbg *fg);
unsigned fgbg_status(const struct fgbg *fg);
const char *fgbg_cpuset(const struct fgbg *fg);
/* A process's deltas of one sample interval: its state read now, the
 * deltas added to (pid, starttime, state). Nothing is read when all four
 * are 0, or when the signal is not on. */
void fgbg_observe(struct fgbg *fg, const struct window_task *t, uint64_t du,
    uint64_t ds, uint64_t dmin, uint64_t dmaj);
/* One process scan done (counted in the part). */
void fgbg_scanned(struct fgbg *fg);
/* Window close: w gets the part (the head alone when absent), and the
 * accumulators start again. */
int fgbg_flush(struct fgbg *fg, struct window *w);

#endif /* VITALSD_FGBG_FGBG_H */
