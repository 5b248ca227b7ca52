/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's private header: struct vitalsd and what its files
 * (daemon.c, daemon_setup.c, daemon_tick.c, daemon_close.c,
 * daemon_info.c, daemon_signal.c) call of each other. Calls go one way:
 * daemon.c calls the others; daemon_setup.c, daemon_tick.c and
 * daemon_signal.c call daemon_close.c; daemon_signal.c calls
 * daemon_tick.c (vitalsd_burst); daemon_close.c and daemon_info.c call
 * none of them.
 */
#ifndef VITALSD_DAEMON_INT_H
#define VITALSD_DAEMON_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/util.h>

#include "core/pageout.h"
#include "core/provenance.h"
#include "daemon.h"
#include "syscalls/syscalls.h"

struct collector;
struct config;
struct privs_helpers;
struct window;
struct writer_done;

struct vitalsd {
	struct event_base *base;
	struct event *tick;
	struct event *sig[5];
	struct collector *col;
	struct store *store; /* NULL: windows live in memory only */
	struct writer *wr;
	struct event *wr_ev;  /* the writer tells of commits (writer_fd) */
	unsigned interval_ms; /* configured cadence */
	unsigned cur_ms;      /* cadence now (burst or not) */
	int64_t next_ns;      /* monotonic deadline of the next sample */
	int64_t burst_until_ns;
	bool tick_burst; /* the tick's sample is a burst's (tick_run) */
	bool verbose_windows;
	struct control *ctl;  /* the control socket (control.c) */
	int64_t start_ns;     /* monotonic, at vitalsd_run */
	struct bpf_sched *bs; /* sched_switch accounting; NULL: off */
	unsigned bpf_state;   /* enum vbpf_state, for every window */
	int bpf_err;	      /* -errno behind an off state */
	int bpf_stats_fd;     /* BPF run-time statistics on while open */
	bool bpf_warned;      /* a failed drain was logged */
	/* the drain's grace period and reads on a thread of their own
	 * (sched_async.c), its end on bsa_ev; bsa_off: could not start one,
	 * the drain runs on the loop */
	struct bpf_sched_async *bsa;
	struct event *bsa_ev;
	/* the pending window's sched part while the drain's thread reduces
	 * into it: out of the window until the drain ends, so no reader of
	 * the window (its bytes in health) meets it half written */
	struct window_bpf *bsa_part;
	/* its wcpu part, weighed on the drain's thread after the reduce
	 * (sched_after_drain; NULL: no memory), and the error of its rows */
	struct window_wcpu *bsa_wcpu;
	int bsa_wcpu_err;
	bool bsa_off;
	unsigned bpf_procs, bpf_threads; /* rows a window keeps */
	bool stopping;	      /* the loop is over: the last window closes */
	struct gpumem *gm;    /* GPU memory map reader (gpumem.c) */
	unsigned gm_why;      /* the state last logged */
	struct heapprofd *hp; /* heapprofd triggers (doc/heapprofd.md) */
	struct burst *bu;     /* burst triggers (doc/bursts.md); NULL: none */
	struct wss *wss;      /* working-set monitor (wss.c) */
	bool wss_wait;	      /* the waiting window's part, after a pass */
	struct cgroup *cg;    /* cgroup v2 groups (cgroup.c); NULL: none */
	struct fgbg *fg;      /* foreground/background (fgbg.c); NULL: off */
	struct dmabuf *db;    /* DMA-BUF per process (dmabuf.c); NULL: off */
	struct gpufreq *gf;   /* GPU frequency (gpufreq.c); NULL: off */
	/* syscall latency (syscalls/): NULL when off or failed; sc_state
	 * (enum sc_state) and sc_err go into every window's part */
	struct sc_collector *sc;
	/* its drain's grace period and reads on a worker (sc_async.c),
	 * told on sca_ev; sca_off: no worker, the drain runs on the loop */
	struct sc_async *sca;
	struct event *sca_ev;
	bool sca_off;
	unsigned sc_state;
	int sc_err;
	/* Health.syscalls: windows drained, counters since the start */
	struct sc_health sch;
	unsigned cg_state; /* the state last logged */
	struct ftrace *ft; /* ftrace reader (ftrace.c); NULL: off */
	unsigned ft_state; /* enum ftrace_state, for every window */
	int ft_err;	   /* -errno behind an off state */
	struct atcat *ac;  /* ATrace categories (atrace_cat.c) */
	bool atcat_wanted; /* some are configured */
	int state_fd;	   /* the state directory (statedir.c) */
	/* batched commits (spooldir.c): the spool file, "" none, and why */
	char spool_path[4096];
	char spool_note[256];
	struct provenance prov; /* what makes this run's windows */
	/* the kernel's cumulative TOT_WTD_NOCAP, _NOFREQ at the last drain */
	uint64_t wcpu_tot[2];
	bool wcpu_have_tot;
	uint64_t wcpu_gen; /* the last batch weighed (its generation) */
	bool wcpu_have_gen;
	/* SIGHUP (main.c rereads), systemd's notify socket (-1: none) */
	void (*reload_fn)(struct vitalsd *, void *);
	void *reload_arg;
	struct vitalsd_reload reload;
	int notify_fd;
	struct export *ex; /* the OpenMetrics endpoint; NULL: off */
	/* the start-up pageout, before the first sample (core/pageout.h):
	 * the mode configured, pageout_self's return (1 ran), its figures */
	unsigned pageout_mode;
	int pageout_rc;
	struct pageout_stats pageout;
	/* the settling passes once running (pageout_settle_start): the
	 * window's length they are timed by, the thread made */
	unsigned settle_window_s;
	bool settle_on;
};

/* --------------------------------------------------------- daemon_setup.c */

int open_store(struct vitalsd *d, const struct config *cfg);
int log_scanner(struct collector *col, const struct config *cfg);
void bpf_setup(struct vitalsd *d, const struct config *cfg);
void syscalls_setup(struct vitalsd *d, const struct config *cfg);
void gpumem_setup(struct vitalsd *d, const struct config *cfg);
void ftrace_setup(struct vitalsd *d, const struct config *cfg,
    const struct privs_helpers *helpers);
int atcat_setup(struct vitalsd *d, const struct config *cfg);
int wss_setup(struct vitalsd *d, const struct config *cfg,
    const struct privs_helpers *helpers);
int metrics_setup(struct vitalsd *d, const struct config *cfg);

/* ---------------------------------------------------------- daemon_tick.c */

void window_done(void *arg, const struct writer_done *dn);
void writer_cb(evutil_socket_t fd, short what, void *arg);
void window_log_cb(const struct window *w, void *arg);
void arm_tick(struct vitalsd *d, int64_t now_ns);
void tick_cb(evutil_socket_t fd, short what, void *arg);
void tick_walked(void *arg);
void burst_cb(void *arg, unsigned duration_ms);
int64_t burst_until_cb(void *arg);

/* --------------------------------------------------------- daemon_close.c */

void sched_settle(struct vitalsd *d);
void sc_async_stop(struct vitalsd *d);
void wss_idle_cb(void *arg);
int parts_close_cb(struct window *w, void *arg);

/* ---------------------------------------------------------- daemon_info.c */

void get_info_cb(void *arg, struct vitalsd_info *ret);

/* -------------------------------------------------------- daemon_signal.c */

void signal_cb(evutil_socket_t sig, short what, void *arg);

#endif /* VITALSD_DAEMON_INT_H */
