/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor: its settings, the pagemap and page_idle I/O,
 * the maps and smaps parsers, targets, and its part of a window.
 */
#ifndef VITALSD_WSS_H
#define VITALSD_WSS_H

#include "core/util.h"
#include "window/window.h"

struct event_base;
struct privhelper;
struct window;

/* The monitor's settings (wss_conf.c), held in struct config. */
#define WSS_NAME_LEN 64
#define WSS_RULES_MAX 8

/* A config rule: processes named name get a target. */
struct wss_rule {
	char name[WSS_NAME_LEN];
	unsigned mode;
	char lib[WSS_NAME_LEN];
};

struct wss_config {
	unsigned interval_ms, interval_min_ms, interval_max_ms;
	unsigned max_targets, max_pages; /* pages: Σ over every target */
	unsigned method;		 /* enum wss_method */
	char *log_dir;			 /* page-level log export; NULL off */
	unsigned nrules;
	struct wss_rule rule[WSS_RULES_MAX];
};

/* ------------------------------------------- wss*.c: working-set monitor */

/* /proc/<pid>/pagemap entry bits (Documentation/admin-guide/mm/pagemap). */
#define WSS_PM_PRESENT (1ULL << 63)
#define WSS_PM_SWAPPED (1ULL << 62)
#define WSS_PM_FILE (1ULL << 61)
#define WSS_PM_EXCLUSIVE (1ULL << 56)
#define WSS_PM_SOFT_DIRTY (1ULL << 55)
#define WSS_PM_PFN_MASK ((1ULL << 55) - 1)

#define WSS_REGIONS_MAX 256 /* regions kept per target; more are counted */
#define WSS_LABEL_LEN 80

/* One decoded pagemap entry. pfn is 0 when not present, and also when the
 * reader lacks CAP_SYS_ADMIN (the kernel zeroes it). */
struct wss_pm {
	uint64_t pfn;
	bool present, swapped, file, exclusive, soft_dirty;
};

/* Syscalls and bytes of one pass's pagemap and bitmap I/O. */
struct wss_io {
	uint64_t pm_reads, bm_reads, bm_writes;
	uint64_t bytes;
};

/* The page_idle bitmap words one pass touches: word[i] (= pfn / 64) in
 * increasing order, mask[i] the PFNs of ours in it, bits[i] as read back. */
struct wss_idle {
	uint64_t *word, *mask, *bits;
	size_t n, cap;
};

/* wss_pagemap.c: pagemap entries and page_idle words; fds in, no paths. */
void wss_pm_decode(uint64_t raw, struct wss_pm *ret);
int wss_pm_read(int fd, uint64_t vaddr, size_t npages, unsigned page_size,
    uint64_t *ret, struct wss_io *io);
int wss_idle_build(struct wss_idle *b, const uint64_t *pfn, size_t n);
int wss_idle_mark(int fd, const struct wss_idle *b, struct wss_io *io);
int wss_idle_read(int fd, struct wss_idle *b, struct wss_io *io);
int wss_idle_state(const struct wss_idle *b, uint64_t pfn);
void wss_idle_release(struct wss_idle *b);

/* One line of /proc/<pid>/maps. */
struct wss_map {
	uint64_t start, end, offset, inode;
	char perms[5];
	char path[256]; /* "" anonymous; cut at 255 bytes */
};

/* One region of /proc/<pid>/smaps with the fields Method B reads. */
struct wss_smaps {
	uint64_t start, end;
	uint64_t rss_kb, referenced_kb, anon_kb, swap_kb;
};

enum wss_mode { WSS_MODE_HEAP, WSS_MODE_LIBRARY };
enum wss_method {
	WSS_METHOD_AUTO,       /* page_idle where it works, else clear_refs */
	WSS_METHOD_PAGE_IDLE,  /* A: page-level, needs CAP_SYS_ADMIN */
	WSS_METHOD_CLEAR_REFS, /* B: region-level Referenced */
};

/* wss_maps.c: pure */
int wss_maps_line(const char *line, size_t len, struct wss_map *ret);
bool wss_map_selected(const struct wss_map *m, enum wss_mode mode,
    const char *lib, bool apk_fallback);
void wss_map_label(const struct wss_map *m, enum wss_mode mode, char *ret,
    size_t retsz);
uint64_t wss_hash(const void *p, size_t n);
unsigned wss_adapt_interval(unsigned cur_ms, uint64_t accessed,
    uint64_t resident, unsigned min_ms, unsigned max_ms);
const char *wss_mode_name(unsigned mode);
const char *wss_method_name(unsigned method);

/* wss_refs.c: Method B */
int wss_smaps_parse(const char *buf, size_t len, struct wss_smaps **ret,
    size_t *ret_n);
int wss_refs_write(int fd);

/* A target process's region as last sampled. */
struct wss_region {
	uint64_t start, end;
	char perms[5];
	char label[WSS_LABEL_LEN];
	uint32_t pages; /* sampled: (end − start) / page, after any cut */
	uint32_t cut;	/* pages beyond the page limit, not sampled */
	uint32_t resident, accessed, idle, not_resident;
	uint32_t moved;			/* A: PFN changed inside the pass */
	uint64_t rss_kb, referenced_kb; /* B: smaps figures */
	bool gone; /* unmapped inside the pass: accessed unknown */
	bool done; /* a pass has completed on it */
};

/* What the API shows of one target (wss.c keeps the rest). */
struct wss_status {
	int32_t pid;
	uint64_t starttime; /* identity with pid */
	char name[WSS_NAME_LEN];
	unsigned mode; /* enum wss_mode */
	char lib[WSS_NAME_LEN];
	unsigned method;   /* method of the last pass (enum wss_method) */
	char note[128];	   /* why that method; "" when asked for */
	bool apk_fallback; /* library found only as base.apk mappings */
	bool ended;
	char end_reason[64];
	unsigned interval_ms, interval_min_ms, interval_max_ms;
	uint64_t seq; /* passes completed */
	int64_t last_mono_ns;
	uint64_t pass_ns_last, pass_ns_max, pass_ns_sum; /* wall on the loop */
	uint64_t pass_cpu_ns_sum; /* thread CPU time of those passes */
	uint64_t maps_changes, read_errors, pfn_zeroed, regions_over;
	uint64_t refs_over; /* B: Referenced above resident, clamped */
	uint64_t log_lines, log_errors;
	struct wss_io io; /* cumulative */
	size_t nregions;
	struct wss_region *regions;
	char files[64]; /* how its /proc files were last opened:
			     * "privileged helper", "direct" (wss_open.c) */
	bool opening;	/* the helper is opening its files: no pass runs
			 * until they arrive */
};

struct wss_opts {
	const char *proc_root, *sys_root;
	const struct wss_config *cfg;
	const char *user;   /* the service user the daemon drops to; NULL:
			     * it keeps its credentials */
	uint64_t keep_caps; /* capabilities it keeps after the drop */
	/* the privileged helper that opens target files (NULL: direct);
	 * with a loop, its calls run on a worker thread, never the loop */
	struct privhelper *helper;
};

struct wss;

/* wss_conf.c: the settings */
void wss_config_init(struct wss_config *c);
void wss_config_release(struct wss_config *c);
int wss_config_set(struct wss_config *c, const char *key, const char *value);
/* wss.c: targets and their passes */
int wss_new(struct event_base *base, const struct wss_opts *o,
    struct wss **ret);
struct wss *wss_free(struct wss *w);
int wss_start(struct wss *w, int32_t pid, unsigned mode, const char *lib,
    unsigned method, char *err, size_t errsz);
int wss_stop(struct wss *w, int32_t pid);
const struct wss_status *wss_get(struct wss *w, int32_t pid);
size_t wss_list(struct wss *w, const struct wss_status **ret, size_t max);
/*
 * wss_async.c: passes run on a worker thread. wss_busy: one runs now;
 * wss_settle waits for it (the public calls here do so themselves);
 * wss_set_idle: fn(arg) on the loop after each pass, when the worker is
 * idle (the daemon's window close waits for that instead of the pass).
 * Tests: passes on the loop, or each made ms slower.
 */
bool wss_busy(const struct wss *w);
/* Live targets and sampled pages without waiting: while a pass runs, as
 * they were when the last one ended (Health.wss). */
void wss_counts(struct wss *w, uint32_t *ret_live, uint32_t *ret_pages);
void wss_settle(struct wss *w);
void wss_set_idle(struct wss *w, void (*fn)(void *), void *arg);
void wss_test_no_worker(struct wss *w);
void wss_test_delay(struct wss *w, unsigned ms);
int wss_pass_begin(struct wss *w, int32_t pid);
int wss_pass_end(struct wss *w, int32_t pid);
bool wss_page_idle(const struct wss *w);
bool wss_damon(const struct wss *w, char *note, size_t notesz);
unsigned wss_npages(const struct wss *w);
/* wss_rules.c: wss_rule lines, targets by process name */
int wss_find_name(struct wss *w, const char *name, int32_t *ret_pid);
int wss_rules_scan(struct wss *w);
int wss_rules_start(struct wss *w);
/* wss_open.c: how target files are opened (privileged helper or direct),
 * and how many opens the daemon's credentials refused */
const char *wss_access(const struct wss *w, uint64_t *ret_denied);
uint64_t wss_helper_errors(const struct wss *w);
/* wss.c */
void wss_limits(const struct wss *w, uint32_t *ret_targets,
    uint32_t *ret_pages);

/* A target's region in a window: its last completed pass there. */
struct window_wss_region {
	uint64_t start, end;
	char label[WSS_LABEL_LEN];
	uint32_t pages, resident, accessed, idle, not_resident;
	bool gone;
};

/* A target in a window: passes completed inside it and their cost. */
struct window_wss {
	int32_t pid;
	uint64_t starttime;
	char name[WSS_NAME_LEN];
	char lib[WSS_NAME_LEN];
	uint32_t mode, method; /* method of the last pass */
	uint32_t interval_ms;  /* at close */
	uint32_t passes;       /* completed in the window */
	uint64_t pass_ns_sum, pass_ns_max, pass_cpu_ns;
	uint32_t maps_changes, read_errors, pfn_zeroed; /* in the window */
	bool ended;	   /* ended in the window */
	uint32_t nregions; /* of the last pass; 0: no pass yet */
	struct window_wss_region *regions;
};

/* The working-set part of a window: its targets. */
struct window_wss_part {
	size_t ntargets;
	struct window_wss target[];
};

/* The working-set part of w (window_parts[WPART_WSS]), NULL: none. */
static inline struct window_wss_part *
window_wss(const struct window *w)
{
	return (struct window_wss_part *)window_part(w, WPART_WSS);
}

/* wss_window.c: the closing window gets every target's part, and the
 * part's operations for window.c, rollup.c and dump.c */
int wss_window_fill(struct wss *w, struct window *win);
extern const struct window_part_ops wss_window_part;

#endif /* VITALSD_WSS_H */
