/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One sample into the open window, and the ring of closed windows
 * (collector.c).
 */
#ifndef VITALSD_WINDOW_COLLECTOR_H
#define VITALSD_WINDOW_COLLECTOR_H

#include "window/window.h"

/* ------------------------------------------------------------ collector.c */

struct clocks {
	int64_t mono_ns, boot_ns, wall_ns;
};

struct collector_opts {
	const char *proc_root;
	const char *sys_root;
	unsigned hz;	      /* 0: sysconf(_SC_CLK_TCK) */
	unsigned interval_ms; /* nominal cadence, for window alignment */
	unsigned window_s;
	unsigned ring; /* closed windows kept in memory (0: 1) */
	enum threads_mode threads;
	unsigned scanner;     /* enum scanner_mode; 0: procfs */
	unsigned stat_fds;    /* procfs scan: stat files kept open at most */
	unsigned full_walk_s; /* event-driven scan: full walks at most this
				 far apart (0: at every close) */
};

typedef void (*window_cb)(const struct window *w, void *arg);

struct collector;

int collector_new(const struct collector_opts *o, struct collector **ret);
struct collector *collector_free(struct collector *c);
void collector_clocks(struct clocks *ret);
int collector_sample(struct collector *c, const struct clocks *now, bool burst);
int collector_close_window(struct collector *c, const struct clocks *now);
void collector_set_interval(struct collector *c, unsigned interval_ms);
void collector_note_late(struct collector *c);
/* runq_ns UINT64_MAX: not known (no schedstat); the window says so */
void collector_note_tick(struct collector *c, int64_t late_ns, uint64_t held_ns,
    uint64_t runq_ns);
void collector_set_window_cb(struct collector *c, window_cb cb, void *arg);
const struct window *collector_window(const struct collector *c, unsigned back);
const struct window *collector_open(const struct collector *c);
/* Every window opened from now on carries *p (a copy). */
void collector_set_provenance(struct collector *c, const struct provenance *p);
unsigned collector_hz(const struct collector *c);

/* collector.c: the same, for the daemon's log */
void collector_scanner(const struct collector *c, enum scanner_mode *ret_kind,
    enum scanner_why *ret_why, int *ret_err);

/*
 * collector.c: a hook on the closing window, before anyone sees it. It
 * returns 0 when the window is filled, 1 when a part is still being
 * filled off the loop: the window then waits, unseen, until
 * collector_close_finish (the next window opens meanwhile, and a close
 * that finds one waiting finishes it first, hook's work or not).
 */
typedef int (*window_close_hook)(struct window *w, void *arg);
/* Right before the process scan of a sample the window closes on: the
 * sched accounting's flip made there (true), so a partial read can stand
 * for the close's full walk (doc/bpf.md, "Full walks"). */
typedef bool (*window_flip_hook)(void *arg);
void collector_set_flip_hook(struct collector *c, window_flip_hook fn,
    void *arg);
void collector_set_close_hook(struct collector *c, window_close_hook fn,
    void *arg);
/* Bytes of the windows kept in memory (window_bytes), their number in
 * ret_n; the open one and one waiting included. */
uint64_t collector_ring_bytes(const struct collector *c, unsigned *ret_n);
/* heap bytes of the process scan's task table, and its tasks */
uint64_t collector_tasks_bytes(const struct collector *c, uint32_t *ret_n);
uint64_t collector_taskiter_out_bytes(const struct collector *c);
/* The window a close left waiting, NULL none. */
struct window *collector_pending(const struct collector *c);
/* It goes into the ring and to the window callback now. */
void collector_close_finish(struct collector *c);

/* collector.c: the foreground/background accumulators the process scan
 * feeds (fgbg.h); NULL none. fg stays the caller's. */
struct fgbg;
void collector_set_fgbg(struct collector *c, struct fgbg *fg);
/* Identities read on a worker, answered on base's loop (procscan_ident_async:
 * privileges final first). -errno: they stay in the scan. */
struct event_base;
int collector_ident_async(struct collector *c, struct event_base *base);
/*
 * Full walks read on a worker (procscan_walk_async): collector_prepare
 * before each sample; when it returns 1 the sample is owed and runs from
 * cb (base's loop), as collector_sample then. Privileges final first.
 */
int collector_walk_async(struct collector *c, struct event_base *base,
    void (*cb)(void *arg), void *arg);
int collector_prepare(struct collector *c, const struct clocks *now);
bool collector_walk_owed(const struct collector *c);
void collector_walk_delay_test(struct collector *c, unsigned ms); /* tests */
void collector_fork_epoch_test(struct collector *c, uint16_t epoch);
struct taskiter_events;
/* event-driven process samples on the sched accounting's maps (NULL:
 * none); reloads the task iterator when it is the source */
int collector_set_events(struct collector *c, const struct taskiter_events *ev,
    const char *sys_root);

/* collector.c: the latest sample's system reads and its clocks (NULL:
 * none yet), and each live process's counters, for the exporter */
const struct sys_sample *collector_last_sys(const struct collector *c,
    struct clocks *ret_clk);
void collector_each_proc(const struct collector *c, procscan_each_fn fn,
    void *arg);

int collector_proc_lookup(const struct collector *c, int32_t pid,
    uint64_t *ret_starttime, char *ret_name, size_t namesz);

#endif /* VITALSD_WINDOW_COLLECTOR_H */
