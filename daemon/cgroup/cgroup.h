/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v2 groups (doc/metrics.md, "cgroups"): per group of a configured
 * subtree, CPU (cpu.stat), memory (memory.current, memory.stat,
 * memory.events) and pressure (cpu/memory/io.pressure), read once per
 * window and turned into deltas with the rules processes follow. A group
 * is its directory's inode (the kernel's cgroup id) with its path: a group
 * removed and made again under the same path is a new group, never a
 * delta across the two. Android's app hierarchy (uid_<uid>/pid_<pid>) is
 * understood: such a group carries its uid or pid.
 *
 * cgroup_parse.c holds the pure parsers, cgroup.c the walk, and
 * cgroup_window.c the window part (free, copy, merge, dump).
 */
#ifndef VITALSD_CGROUP_CGROUP_H
#define VITALSD_CGROUP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "window/window.h"

#define CG_PATH_LEN 256	   /* a longer path is cut and counted */
#define CG_MAX_DEFAULT 128 /* groups kept per window */
#define CG_DEPTH_DEFAULT 2 /* the subtree's children and grandchildren */
#define CG_DEPTH_MAX 16
#define CG_GROUPS_MAX 65536 /* a part never holds more (roll-ups too) */

/* memory.stat keys kept, as gauges of bytes */
enum cg_mem {
	CG_MEM_ANON,
	CG_MEM_FILE,
	CG_MEM_KERNEL,
	CG_MEM_SHMEM,
	CG_MEM__MAX
};
/* memory.events keys, cumulative counts */
enum cg_ev {
	CG_EV_LOW,
	CG_EV_HIGH,
	CG_EV_MAX,
	CG_EV_OOM,
	CG_EV_OOM_KILL,
	CG_EV__MAX
};
/* pressure files: the order of enum psi_res (proc/proc.h) */
#define CG_PSI__MAX 3

/* Which sources a group had (a file absent, e.g. no memory controller,
 * leaves its figures unknown, never 0). */
#define CG_HAVE_CPU (1u << 0)		 /* cpu.stat usage/user/system */
#define CG_HAVE_THROTTLE (1u << 1)	 /* cpu.stat nr_periods/throttled */
#define CG_HAVE_MEM (1u << 2)		 /* memory.current */
#define CG_HAVE_MEMSTAT (1u << 3)	 /* memory.stat */
#define CG_HAVE_EVENTS (1u << 4)	 /* memory.events */
#define CG_HAVE_PSI(r) (1u << (8 + (r))) /* <res>.pressure some */
#define CG_HAVE_PSI_FULL(r) (1u << (12 + (r))) /* its full line */

/* ------------------------------------------------------ cgroup_parse.c */

/* One reading of a group's files (cumulative counters as the kernel
 * keeps them). */
struct cg_read {
	uint32_t have; /* CG_HAVE_* */
	uint64_t usage_us, user_us, system_us;
	uint64_t nr_periods, nr_throttled, throttled_us;
	uint64_t mem_current;
	uint64_t mem[CG_MEM__MAX];
	uint64_t pgfault, pgmajfault;
	uint64_t events[CG_EV__MAX];
	uint64_t psi_some_us[CG_PSI__MAX], psi_full_us[CG_PSI__MAX];
	double psi_some_avg10[CG_PSI__MAX];
};

/* cpu.stat text into r (CG_HAVE_CPU; CG_HAVE_THROTTLE with the cpu
 * controller's lines). -EINVAL: not cpu.stat's layout. */
int cg_parse_cpu_stat(const char *buf, size_t len, struct cg_read *r);
/* memory.stat: anon, file, kernel (before 5.18, which has no "kernel"
 * line: kernel_stack + slab + percpu), shmem, pgfault, pgmajfault. */
int cg_parse_memory_stat(const char *buf, size_t len, struct cg_read *r);
int cg_parse_memory_events(const char *buf, size_t len, struct cg_read *r);
/* "uid_10123" -> 10123, "pid_4567" -> 4567; -1 otherwise. */
int64_t cg_name_id(const char *name, const char *prefix);

/* ---------------------------------------------------- the window part */

enum cg_state {
	CG_STATE_OFF,	  /* cgroup = off */
	CG_STATE_NO_ROOT, /* no cgroup v2 hierarchy found */
	CG_STATE_OK,
	CG_STATE__MAX
};

struct window_cgroup_grp {
	uint64_t id;		/* inode of its directory: the cgroup id */
	char path[CG_PATH_LEN]; /* under the root; "" the root itself */
	uint32_t depth;		/* under the subtree; 0 the subtree */
	int64_t uid, pid;	/* Android's uid_<uid>, pid_<pid>; -1 none */
	uint32_t have;		/* CG_HAVE_*: of the last reading */
	uint32_t deltas;	/* windows of valid deltas folded in */
	bool born;		/* first seen by this window's walk */
	uint64_t d_usage_us, d_user_us, d_system_us;
	uint64_t d_nr_periods, d_nr_throttled, d_throttled_us;
	struct gauge mem_current;      /* bytes */
	struct gauge mem[CG_MEM__MAX]; /* bytes */
	uint64_t d_pgfault, d_pgmajfault;
	uint64_t d_events[CG_EV__MAX];
	uint64_t d_psi_some_us[CG_PSI__MAX], d_psi_full_us[CG_PSI__MAX];
	struct gauge psi_some_avg10[CG_PSI__MAX];
};

struct window_cgroup {
	uint32_t state; /* enum cg_state */
	int32_t err;	/* -errno behind NO_ROOT */
	char root[CG_PATH_LEN];
	uint32_t walks;	      /* walks folded in (one per window) */
	uint32_t groups_seen; /* in the last walk, the cut ones included */
	uint32_t groups_cut;  /* past cgroup_max or cgroup_depth's room */
	uint32_t read_errors; /* files that failed (not: that are absent) */
	uint32_t recreated;   /* a path with a new id: no delta across */
	uint32_t gone;	      /* groups of the last walk not found again */
	uint32_t inv_deltas;  /* a counter that went backwards: dropped */
	uint32_t path_cut;    /* paths longer than CG_PATH_LEN */
	uint64_t walk_ns_sum, walk_ns_max;
	size_t n, cap;
	struct window_cgroup_grp *g; /* by path */
};

static inline struct window_cgroup *
window_cgroup(const struct window *w)
{
	return (struct window_cgroup *)window_part(w, WPART_CGROUP);
}

/* cgroup_window.c */
const char *cg_state_name(unsigned st);
const char *cg_mem_name(unsigned k);
const char *cg_ev_name(unsigned k);
struct window_cgroup *window_cgroup_new(void);
void window_cgroup_free(struct window_cgroup *p);
/* Room for one more group: NULL without memory. */
struct window_cgroup_grp *window_cgroup_add(struct window_cgroup *p);
/* The group of (id, path), NULL none. */
const struct window_cgroup_grp *
window_cgroup_find(const struct window_cgroup *p, uint64_t id,
    const char *path);
extern const struct window_part_ops cgroup_window_part;

/* ------------------------------------------------------------ cgroup.c */

struct cgroup_config {
	bool on;
	char *root;    /* the v2 hierarchy; NULL: found under sys_root */
	char *subtree; /* under root; NULL or "": all of it */
	unsigned depth;
	unsigned max;
};

/* config_cgroup.c (config's layer): the cgroup* keys; -ENOENT not one */
void cgroup_config_init(struct cgroup_config *c);
void cgroup_config_release(struct cgroup_config *c);
int cgroup_config_set(struct cgroup_config *c, const char *key,
    const char *value);

struct cgroup_opts {
	const char *sys_root;
	const struct cgroup_config *cfg;
};

struct cgroup;

int cgroup_new(const struct cgroup_opts *o, struct cgroup **ret);
struct cgroup *cgroup_free(struct cgroup *cg);
/* Walk the groups now and give w its part: deltas against the last walk. */
int cgroup_window(struct cgroup *cg, struct window *w);
unsigned cgroup_state(const struct cgroup *cg, int *ret_err);
const char *cgroup_root(const struct cgroup *cg);
/* The cgroup v2 path of a process ("0::/path" of /proc/<pid>/cgroup), or
 * -ENOENT when it has none (a v1-only system). */
int cgroup_of_pid(const char *proc_root, int32_t pid, char *buf, size_t sz);

#endif /* VITALSD_CGROUP_CGROUP_H */
