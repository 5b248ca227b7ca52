/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon: one libevent loop with the sampling timer and the signals.
 * vitalsd_setup() is the privileged phase (state directory, kernel files
 * opened; later BPF, tracefs and the socket); vitalsd_run() is everything
 * after it, so a privilege drop fits between the two.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "burst/burst.h"
#include "config/config.h"
#include "cgroup/cgroup.h"
#include "fgbg/fgbg.h"
#include "wcpu/wcpu.h"
#include "dmabuf/dmabuf.h"
#include "gpufreq/gpufreq.h"
#include "syscalls/sc_collect.h"
#include "control/control.h"
#include "core/bpf_common.h"
#include "core/log.h"
#include "core/loopstat.h"
#include "core/provenance.h"
#include "core/sdnotify.h"
#include "core/util.h"
#include "trace/atrace_cat.h"
#include "daemon.h"
#include "export/export.h"
#include "export/otlp.h"
#include "gpumem/gpumem.h"
#include "hp/hp.h"
#include "privs/privs.h"
#include "rpc/rpc.h"
#include "sched/sched.h"
#include "store/store.h"
#include "taskiter/taskiter.h"
#include "trace/trace.h"
#include "window/collector.h"
#include "window/window.h"
#include "wss/wss.h"

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
};

static void gpumem_sample(struct vitalsd *d, int64_t mono_ns);
static void sched_settle(struct vitalsd *d);
static void sc_async_stop(struct vitalsd *d);

/* path names an entry directly in dir (no normalisation: as configured) */
static bool
in_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && path[n] == '/' &&
	    strchr(path + n + 1, '/') == NULL;
}

/*
 * A window's line, "window N: ..., store ...", once the writer has
 * committed it: a kill after the line loses at most the open window. When
 * it was not committed (the store fails, the queue dropped it) the line
 * says why.
 */
static void
window_done(void *arg, const struct writer_done *dn)
{
	struct vitalsd *d = arg;
	struct vbuf b = { 0 };
	struct store_stats st;
	unsigned queued;
	uint64_t dropped;
	const char *why;

	writer_get(d->wr, &st, &queued, &dropped);
	if (dn->err == -ENOBUFS)
		why = "not stored: the write queue was full";
	else if (dn->err < 0)
		why = dn->final ? "not stored" : "not committed yet";
	else
		why = NULL;
	vbuf_printf(&b, "%s, store %s (queued %u, dropped %llu", dn->note,
	    store_state_name(st.state), queued, (unsigned long long)dropped);
	if (why && dn->err != -ENOBUFS)
		vbuf_printf(&b, ": %s: %s", why,
		    st.last_err ? st.last_errmsg : strerror(-dn->err));
	else if (why)
		vbuf_printf(&b, ": %s", why);
	else if (st.last_err)
		vbuf_printf(&b, ": %s", st.last_errmsg);
	vbuf_printf(&b, ")");
	if (b.p)
		log_info("%s", b.p);
	vbuf_release(&b);
}

static void
writer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;

	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	writer_each_done(d->wr, window_done, d);
	loopstat_end("writer done", t0);
}

static void
window_log_cb(const struct window *w, void *arg)
{
	struct vitalsd *d = arg;
	struct vbuf b = { 0 };
	int r;

	dump_summary_line(w, &b);
	/* Queued, not waited for: the line comes when the writer says the
	 * window is committed (window_done). */
	if (d->wr && (r = writer_submit_note(d->wr, w, b.p ? b.p : "")) < 0)
		log_warnx("%s; not queued for the store: %s", b.p ? b.p : "",
		    strerror(-r));
	else if (d->wr == NULL && b.p)
		log_info("%s", b.p);
	vbuf_release(&b);
	/* heapprofd rules look at every closed window but the
	 * last: a session started while stopping would be killed at once
	 * and still spend its budget */
	if (d->hp && !d->stopping)
		heapprofd_window(d->hp, w);
	if (d->bu && !d->stopping) {
		struct clocks now;

		collector_clocks(&now);
		burst_window(d->bu, w, now.mono_ns, now.wall_ns);
	}
	if (d->ex)
		export_window(d->ex, w);
}

static void
arm_tick(struct vitalsd *d, int64_t now_ns)
{
	int64_t delay = d->next_ns - now_ns;
	struct timeval tv;

	if (delay < 0)
		delay = 0;
	tv.tv_sec = delay / NSEC_PER_SEC;
	tv.tv_usec = (delay % NSEC_PER_SEC) / NSEC_PER_USEC;
	event_add(d->tick, &tv);
}

/* The CPUs' scales as just sampled, into the kernel's weighting; a
 * window just opened has none yet: the ones written stay. */
static void
wcpu_push_scale(struct vitalsd *d)
{
	uint32_t cap[VITALS_CPU_MAX], freq[VITALS_CPU_MAX];
	const struct window *w;
	unsigned n;

	if (d->bs == NULL || (w = collector_open(d->col)) == NULL ||
	    w->samples == 0)
		return;
	n = wcpu_scales(w, cap, freq, VITALS_CPU_MAX);
	(void)bpf_sched_set_scale(d->bs, cap, freq, n);
}

static void
tick_run(struct vitalsd *d)
{
	int64_t step, after;
	struct clocks now;
	bool burst;
	int r;

	/* a drain still running (never so 10 s after its start) ends
	 * before anything else can close a window */
	sched_settle(d);
	collector_clocks(&now);
	gpumem_sample(d, now.mono_ns);
	if (d->gf)
		gpufreq_tick(d->gf);
	burst = d->burst_until_ns > now.mono_ns;
	if (!burst && d->cur_ms != d->interval_ms) {
		d->cur_ms = d->interval_ms;
		collector_set_interval(d->col, d->cur_ms);
		log_info("burst sampling ended");
	}
	step = (int64_t)d->cur_ms * NSEC_PER_MSEC;
	if (now.mono_ns - d->next_ns > step / 2)
		collector_note_late(d->col);
	collector_note_tick(d->col, now.mono_ns - d->next_ns);
	if ((r = collector_sample(d->col, &now, burst)) < 0)
		log_warnx("sample failed: %s", strerror(-r));
	if (d->bu) {
		struct clocks clk;
		const struct sys_sample *sys = collector_last_sys(d->col, &clk);

		burst_sample(d->bu, sys, clk.mono_ns, clk.wall_ns);
	}
	wcpu_push_scale(d);
	/* the exporter's walk of the process table; the page waits for a
	 * scrape */
	if (d->ex && (r = export_sample(d->ex)) < 0)
		log_debug("metrics: sample not exported: %s", strerror(-r));

	/* a rule that started a burst in this tick (at a window close or
	 * above) has put the timer on the burst's grid already */
	if (d->cur_ms * NSEC_PER_MSEC != step)
		return;
	/* Keep to the grid; after a stall skip the missed ticks. */
	after = clock_ns(CLOCK_MONOTONIC);
	d->next_ns += step;
	if (d->next_ns <= after)
		d->next_ns = after + step;
	arm_tick(d, after);
}

/* The sample, and the window's close when it is due (the close takes the
 * longest callback so far: this one counts in the next window). */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;
	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	tick_run(d);
	loopstat_end("tick", t0);
}

void
vitalsd_burst(struct vitalsd *d, unsigned duration_ms)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);

	if (duration_ms == 0 || duration_ms > VITALS_BURST_MAX_MS)
		duration_ms = VITALS_BURST_MAX_MS;
	d->burst_until_ns = now + (int64_t)duration_ms * NSEC_PER_MSEC;
	if (d->cur_ms != VITALS_BURST_INTERVAL_MS &&
	    d->interval_ms > VITALS_BURST_INTERVAL_MS) {
		d->cur_ms = VITALS_BURST_INTERVAL_MS;
		collector_set_interval(d->col, d->cur_ms);
		d->next_ns = now + (int64_t)d->cur_ms * NSEC_PER_MSEC;
		arm_tick(d, now);
	}
	log_info("burst sampling every %u ms for %u ms",
	    VITALS_BURST_INTERVAL_MS, duration_ms);
}

static void
burst_cb(void *arg, unsigned duration_ms)
{
	vitalsd_burst(arg, duration_ms);
}

static int64_t
burst_until_cb(void *arg)
{
	return ((struct vitalsd *)arg)->burst_until_ns;
}

static void
get_info_cb(void *arg, struct vitalsd_info *ret)
{
	vitalsd_get_info(arg, ret);
}

void
vitalsd_get_info(struct vitalsd *d, struct vitalsd_info *ret)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);

	memset(ret, 0, sizeof(*ret));
	ret->last = collector_window(d->col, 0);
	ret->hz = collector_hz(d->col);
	ret->interval_ms = d->burst_until_ns > now ? d->cur_ms : d->interval_ms;
	ret->burst_until_ns = d->burst_until_ns > now ? d->burst_until_ns : 0;
	ret->uptime_ns = d->start_ns ? now - d->start_ns : 0;
	ret->store.state = STORE_CLOSED;
	ret->gpumem = d->gm;
	ret->dmabuf = dmabuf_last(d->db);
	ret->gpufreq = d->gf;
	ret->syscalls = d->sch;
	ret->syscalls.state = d->sc_state;
	ret->syscalls.err = d->sc_err;
	ret->syscalls.progs = d->sc ? sc_attached(d->sc) : 0;
	ret->syscalls.traced = d->sc ? sc_traced(d->sc) : 0;
	if (d->wr) {
		ret->have_store = true;
		writer_get(d->wr, &ret->store, &ret->store_queued,
		    &ret->store_dropped);
		writer_trims(d->wr, &ret->trims, &ret->trimmed_bytes);
	}
	ret->spool_path = d->spool_path;
	ret->spool_note = d->spool_note;
	ret->prov = &d->prov;
	if (d->ex) {
		export_get_stats(d->ex, &ret->metrics);
		ret->have_otlp = export_get_otlp(d->ex, &ret->otlp);
	}
	ret->reload = &d->reload;
	ret->ring_bytes = collector_ring_bytes(d->col, &ret->ring_windows);
	ret->tasks_bytes = collector_tasks_bytes(d->col, &ret->tasks);
	ret->ftrace_bytes = ftrace_bytes(d->ft);
	ret->ftrace_buffer_bytes = ftrace_buffer_bytes(d->ft);
	ret->taskiter_out_bytes = collector_taskiter_out_bytes(d->col);
	ret->bpf_bytes = bpf_sched_bytes(d->bs);
}

void
vitalsd_on_reload(struct vitalsd *d, void (*fn)(struct vitalsd *, void *),
    void *arg)
{
	d->reload_fn = fn;
	d->reload_arg = arg;
}

struct vitalsd_reload *
vitalsd_reload_state(struct vitalsd *d)
{
	return &d->reload;
}

void
vitalsd_set_notify(struct vitalsd *d, int fd)
{
	d->notify_fd = fd;
}

int
vitalsd_apply(struct vitalsd *d, const struct config *cfg, const char *key)
{
	if (strcmp(key, "bpf_procs") == 0) {
		d->bpf_procs = cfg->bpf_procs;
		return 0;
	}
	if (strcmp(key, "bpf_threads") == 0) {
		d->bpf_threads = cfg->bpf_threads;
		return 0;
	}
	if (strncmp(key, "syscall", 7) == 0) {
		/* a changed set or threshold into the maps, no re-attach;
		 * on -> off detaches (off -> on needs the privileges of a
		 * start: refused, -ENOTSUP) */
		/* a drain running on the worker ends first */
		sc_async_stop(d);
		if (!cfg->syscalls.on) {
			sc_free(d->sc);
			d->sc = NULL;
			d->sc_state = SC_OFF;
			d->sc_err = 0;
			return 0;
		}
		if (d->sc == NULL)
			return -ENOTSUP;
		if (strcmp(key, "syscall_rb_kib") == 0)
			return -ENOTSUP;
		return sc_reconfig(d->sc, &cfg->syscalls);
	}
	if (strcmp(key, "trusted_uids") == 0 ||
	    strcmp(key, "trusted_gids") == 0 ||
	    strcmp(key, "reader_uids") == 0 ||
	    strcmp(key, "reader_gids") == 0 || strcmp(key, "shell_uid") == 0 ||
	    strcmp(key, "system_uid") == 0) {
		if (d->ctl)
			control_set_roles(d->ctl, cfg);
		return 0;
	}
	return -ENOTSUP;
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct vitalsd *d = arg;
	const struct window *w;
	struct vbuf b = { 0 };

	(void)what;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("signal %d: stopping", (int)sig);
		(void)sdnotify_send(d->notify_fd, "STOPPING=1");
		event_base_loopbreak(d->base);
		break;
	case SIGHUP:
		/* a lost terminal never stops an init-started daemon */
		if (d->reload_fn == NULL) {
			log_info("SIGHUP: no configuration to reread");
			break;
		}
		(void)sdnotify_send(d->notify_fd, "RELOADING=1");
		d->reload_fn(d, d->reload_arg);
		(void)sdnotify_send(d->notify_fd, "READY=1");
		break;
	case SIGUSR1:
		vitalsd_burst(d, VITALS_BURST_MAX_MS);
		break;
	case SIGUSR2:
		if ((w = collector_window(d->col, 0)) == NULL) {
			log_info("no closed window yet");
			break;
		}
		if (dump_window(w, 20, &b) == 0 && b.p) {
			char *line, *save = NULL;

			/* One record per line: a log record is cut at 1 KiB
			 * (and syslog, logd cut theirs), a dump is longer. */
			log_info("dump:");
			for (line = strtok_r(b.p, "\n", &save); line != NULL;
			     line = strtok_r(NULL, "\n", &save))
				log_info("  %s", line);
		}
		vbuf_release(&b);
		break;
	default:
		break;
	}
}

/* What store_open's checks of the files refuse (store.c, db_precheck). */
static const char *
store_refusal(int r)
{
	switch (r) {
	case -ELOOP:
		return "a symbolic link (the database, its -wal, -shm or "
		       "-journal): refused";
	case -EMLINK:
		return "a hard link (the database, its -wal, -shm or "
		       "-journal): refused";
	case -EPERM:
		return "not a regular file of the directory's owner (the "
		       "database, its -wal, -shm or -journal): refused";
	}
	return strerror(-r);
}

/*
 * A database that cannot be opened at all does not stop sampling: windows
 * stay in memory and the condition is logged. A corrupt one has been moved
 * aside by store_open and is reported here.
 */
static int
open_store(struct vitalsd *d, const struct config *cfg)
{
	struct store_opts so = cfg->store;
	struct store_stats st;
	char path[4096];
	int r;

	if (snprintf(path, sizeof(path), "%s/vitals.db", cfg->state_dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	/* the store keeps the pointer: d->spool_path lives as long */
	so.spool_path = d->spool_path[0] ? d->spool_path : NULL;
	/* A -shm cut under the daemon is repaired, not a SIGBUS death. */
	if ((r = store_heal_sigbus_install()) < 0)
		log_warnx("SIGBUS handler: %s", strerror(-r));
	if ((r = store_open_retry(path, &so, &d->store)) < 0) {
		log_warnx("store %s: %s; windows are kept in memory only", path,
		    store_refusal(r));
		return 0;
	}
	store_get_stats(d->store, &st);
	/* Not open now (full, read-only, not a file): the writer opens it
	 * again with a backoff; windows wait in its queue meanwhile. */
	if (st.state == STORE_CLOSED)
		log_warnx("store %s: %s; retrying, windows queue in memory "
			  "(%u at most)",
		    path,
		    st.last_err ? store_refusal(st.last_err) : st.last_errmsg,
		    cfg->write_queue);
	if (st.wal_damaged)
		log_warnx("store %s: %s", path, st.last_errmsg);
	if (st.corrupt_moved)
		log_warnx("store %s was corrupt: moved to %s, started afresh "
			  "with %llu windows salvaged from it",
		    path, st.corrupt_path,
		    (unsigned long long)st.windows_salvaged);
	if (so.spool_path && st.spool_err)
		log_warnx("store spool %s off: %s", so.spool_path,
		    strerror(-st.spool_err));
	if ((r = writer_start(d->store, cfg->write_queue, &d->wr)) < 0) {
		log_warnx("store writer: %s", strerror(-r));
		return r;
	}
	log_info("store %s", path);
	return 0;
}

/*
 * Say once which source the process scan uses and, when it is not the BPF
 * iterator, why. scanner = bpf makes the iterator a requirement.
 */
static int
log_scanner(struct collector *col, const struct config *cfg)
{
	enum scanner_mode kind;
	enum scanner_why why;
	int err;

	collector_scanner(col, &kind, &why, &err);
	if (kind == SCANNER_BPF) {
		log_info("process scan: BPF task iterator");
		return 0;
	}
	if (why == SCANNER_WHY_CONFIG) {
		log_info("process scan: %s (scanner = procfs)", cfg->proc_root);
		return 0;
	}
	if (cfg->scanner == SCANNER_BPF) {
		log_warnx("scanner = bpf: task iterator unavailable (%s): %s",
		    scanner_why_name(why), strerror(err));
		return err ? -err : -EOPNOTSUPP;
	}
	log_warnx("process scan: %s; task iterator unavailable (%s): %s",
	    cfg->proc_root, scanner_why_name(why), strerror(err));
	return 0;
}

/*
 * BPF accounting is set up here, while privileged; afterwards only its fds
 * are used. Whatever fails, sampling goes on from procfs and every window
 * says why (its sched part's state).
 */

/*
 * The kernel's weighting counters as the open left them (its first drains
 * read them): the first window's "weighted without a scale" is a
 * difference from these, not from its own batch.
 */
static void
wcpu_baseline(struct vitalsd *d)
{
	const struct bpf_sched_batch *b = bpf_sched_last_batch(d->bs);

	if (b == NULL || b->diff)
		return;
	d->wcpu_tot[0] = b->tot[VBPF_TOT_WTD_NOCAP];
	d->wcpu_tot[1] = b->tot[VBPF_TOT_WTD_NOFREQ];
	d->wcpu_have_tot = true;
	d->wcpu_gen = b->gen;
	d->wcpu_have_gen = true;
}
static void
bpf_setup(struct vitalsd *d, const struct config *cfg)
{
	struct bpf_sched_opts o = {
		.bpffs = cfg->bpffs,
		.sys_root = cfg->sys_root,
		.load = cfg->bpf_load,
		.rq = true,
		.tracefs = cfg->tracefs,
		.proc_root = cfg->proc_root,
		.instance = cfg->ftrace_instance,
	};
	struct taskiter_events ev;
	char why[512];
	int r;

	d->bpf_procs = cfg->bpf_procs;
	d->bpf_threads = cfg->bpf_threads;
	bpf_common_init();
	r = bpf_sched_open(&o, &d->bs, &d->bpf_state, why, sizeof(why));
	if (r < 0) {
		/* off by configuration or by build: said, not warned */
		bool chosen = r == -ECANCELED || r == -EOPNOTSUPP;

		d->bpf_err = chosen ? 0 : r;
		if (chosen)
			log_info("bpf: %s (%s): procfs only",
			    vbpf_state_name(d->bpf_state), why);
		else
			log_warnx("bpf: %s: %s; procfs only",
			    vbpf_state_name(d->bpf_state), why);
		return;
	}
	log_info("bpf: %s: %s", vbpf_state_name(d->bpf_state), why);
	wcpu_baseline(d);
	/* partial process samples read its live side (doc/bpf.md) */
	if (bpf_sched_event_fds(d->bs, &ev.ctl_fd, &ev.tot_fd, ev.tid_fd,
		ev.proc_fd) == 0 &&
	    (r = collector_set_events(d->col, &ev, cfg->sys_root)) < 0)
		log_warnx("process scan: task iterator reload: %s",
		    strerror(-r));
	if (!cfg->bpf_stats)
		return;
	if ((d->bpf_stats_fd = bpf_stats_enable()) < 0) {
		log_warnx("bpf: run-time statistics: %s",
		    strerror(-d->bpf_stats_fd));
		return;
	}
	bpf_sched_set_stats(d->bs, true);
}

/*
 * Syscall latency (doc/bpf.md): loaded and attached while privileged when
 * syscall_trace = on. Never fatal: a failure is the part's state.
 */
static void
syscalls_setup(struct vitalsd *d, const struct config *cfg)
{
	/* the loop does not exist yet: sc_set_base once it does */
	struct sc_opts o = { .cfg = &cfg->syscalls, .base = NULL };
	int r;

	d->sc_state = SC_OFF;
	d->sc_err = 0;
	if (!cfg->syscalls.on)
		return;
	/* the platform loader's pins of vitalsd_sc.o (Android) where the
	 * sched part takes pins too, or the build has no object of its own */
	o.proc_root = cfg->proc_root;
	o.instance = cfg->ftrace_instance;
#ifdef HAVE_BPF_CORE
	if (cfg->bpf_load == VBPF_LOAD_PINNED_ONLY)
		o.bpffs = cfg->bpffs;
#else
	o.bpffs = cfg->bpffs;
#endif
	if ((r = sc_new(&o, &d->sc)) < 0) {
		d->sc_state = r == -EOPNOTSUPP ? SC_UNSUPPORTED : SC_FAILED;
		d->sc_err = -r;
		log_warnx("syscalls: %s: %s",
		    d->sc_state == SC_FAILED ? "failed" : "unsupported",
		    strerror(-r));
		return;
	}
	d->sc_state = SC_ON;
	/* the programs' run time, as the sched part keeps it */
	if (cfg->bpf_stats && d->bpf_stats_fd < 0 &&
	    (d->bpf_stats_fd = bpf_stats_enable()) < 0)
		log_warnx("syscalls: run-time statistics: %s",
		    strerror(-d->bpf_stats_fd));
}

/*
 * GPU memory: the platform's pinned map when there is one, else our own
 * program, loaded here while privileged. Never fatal: every window says
 * where the map stands (its GpuMem part's state).
 */
static int
gpumem_lookup_cb(void *arg, int32_t pid, uint64_t *ret_starttime,
    char *ret_name, size_t namesz)
{
	struct vitalsd *d = arg;

	return collector_proc_lookup(d->col, pid, ret_starttime, ret_name,
	    namesz);
}

static void
gpumem_setup(struct vitalsd *d, const struct config *cfg)
{
	struct gpumem_opts o = {
		.map_path = cfg->gpumem_map,
		.bpffs = cfg->bpffs,
		.load = cfg->gpumem_load,
		.attach_s = cfg->gpumem_attach_s,
		.tracefs = cfg->tracefs,
	};
	unsigned st, why;
	int r, err;

	/* bpf_load decides for every program we would load ourselves */
	if (o.load == GPUMEM_LOAD_AUTO && cfg->bpf_load != VBPF_LOAD_AUTO)
		o.load = GPUMEM_LOAD_MAP_ONLY;
	if ((r = gpumem_new(&o, &d->gm)) < 0) {
		log_warnx("gpumem: %s", strerror(-r));
		return;
	}
	gpumem_set_lookup(d->gm, gpumem_lookup_cb, d);
	/* Attaching needs privilege (perf_event_open): try while we have
	 * it; after a drop the retries can only report why they fail. */
	gpumem_attach_now(d->gm, clock_ns(CLOCK_MONOTONIC));
	st = gpumem_state(d->gm, &why, &err);
	d->gm_why = why;
	log_info("gpumem: %s%s%s%s%s (map %s)", gpumem_state_name(st),
	    why ? ": " : "", gpumem_why_name(why), err ? ": " : "",
	    err ? strerror(-err) : "",
	    o.map_path ? o.map_path : VITALS_GPUMEM_MAP);
}

/* A traversal per tick; a change of state is logged once. */
static void
gpumem_sample(struct vitalsd *d, int64_t mono_ns)
{
	unsigned st, why;
	int err;

	if (d->gm == NULL)
		return;
	(void)gpumem_tick(d->gm, mono_ns); /* failures: in the window */
	st = gpumem_state(d->gm, &why, &err);
	if (why == d->gm_why)
		return;
	d->gm_why = why;
	log_info("gpumem: %s%s%s%s%s", gpumem_state_name(st), why ? ": " : "",
	    gpumem_why_name(why), err ? ": " : "", err ? strerror(-err) : "");
}

static void
gpumem_close(struct vitalsd *d, struct window *w)
{
	int r;

	if (d->gm && (r = gpumem_window(d->gm, w)) < 0)
		log_warnx("gpumem: window %llu: %s", (unsigned long long)w->seq,
		    strerror(-r));
}

/* gpu_mem/gpu_mem_total from ftrace, straight into the GPU memory
 * timeline between map traversals (same clock, loop thread). */
static void
ftrace_gpu_mem_cb(const struct ftrace_gpu_mem *e, void *arg)
{
	struct vitalsd *d = arg;

	if (d->gm)
		gpumem_note_event(d->gm, e->gpu_id, e->pid, e->size,
		    e->mono_ns);
}

/*
 * ftrace, set up while privileged: the instance and the per-CPU fds.
 * Failure leaves sampling alone; every window says why (trace.state).
 * sched events default to off while BPF accounts the scheduler.
 */
static void
ftrace_setup(struct vitalsd *d, const struct config *cfg,
    const struct privs_helpers *helpers)
{
	struct ftrace_opts o = {
		.tracefs = cfg->tracefs,
		.instance = cfg->ftrace_instance,
		.buffer_kb = cfg->ftrace_buffer_kb,
		.tick_ms = cfg->ftrace_tick_ms,
		.max_pages = cfg->ftrace_max_pages,
		.wake_percent = cfg->ftrace_wake_percent,
		.fault_phases = cfg->fault_phases,
		.fault_maps_reads = cfg->fault_maps_reads,
		.helper = helpers ? helpers->ph : NULL,
	};
	char why[512];
	int r;

	if (!cfg->ftrace) {
		d->ft_state = FTRACE_OFF_CONFIG;
		log_info("ftrace: off (ftrace = off)");
		return;
	}
	o.sched = cfg->ftrace_sched == FTRACE_SCHED_ON ||
	    (cfg->ftrace_sched == FTRACE_SCHED_AUTO && d->bs == NULL);
	r = ftrace_open(d->base, &o, &d->ft, &d->ft_state, why, sizeof(why));
	if (r < 0) {
		d->ft_err = r;
		log_warnx("ftrace: %s: %s", ftrace_state_name(d->ft_state),
		    why);
		return;
	}
	log_info("ftrace: %s", why);
	ftrace_set_gpu_mem_cb(d->ft, ftrace_gpu_mem_cb, d);
}

/*
 * ATrace categories (atrace_cat.c): made here, set from vitalsd_run on and
 * only while the instance captures ATrace, re-checked every sampling
 * interval; nothing is written before the loop runs.
 */
static int
atcat_setup(struct vitalsd *d, const struct config *cfg)
{
	struct atcat_opts o = {
		.prop_root = cfg->prop_root,
		.tags = cfg->atrace_tags,
		.apps = cfg->atrace_apps,
		.check_ms = cfg->interval_ms,
	};
	char names[512];
	int r;

	if ((r = atcat_new(d->base, &o, &d->ac)) < 0) {
		log_warnx("atrace categories: %s", strerror(-r));
		return r;
	}
	if (cfg->atrace_tags == 0 && cfg->atrace_apps == NULL)
		return 0;
	d->atcat_wanted = true;
	atcat_tag_names(cfg->atrace_tags, names, sizeof(names));
	log_info("atrace categories: %s%s%s; properties: %s%s%s",
	    names[0] ? names : "none", cfg->atrace_apps ? "; apps " : "",
	    cfg->atrace_apps ? cfg->atrace_apps : "", atcat_backend(d->ac),
	    cfg->prop_root ? " " : "", cfg->prop_root ? cfg->prop_root : "");
	return 0;
}

static void
ftrace_close(struct vitalsd *d, struct window *w)
{
	struct window_trace *t;

	/* the whole part while the trackers fill it, then the head alone
	 * when they kept no rows (always so with ftrace off) */
	if ((t = window_trace_make(w, d->ft != NULL)) == NULL) {
		log_warnx("ftrace: window %llu: %s", (unsigned long long)w->seq,
		    strerror(ENOMEM));
		return;
	}
	t->state = d->ft_state;
	t->err = d->ft_err;
	if (d->ft && window_trace_rows(&t) == 0)
		ftrace_window(d->ft, t);
	atcat_window(d->ac, t);
	window_trace_trim(&t);
	window_part_set(w, WPART_TRACE, t);
}

static void wcpu_close(struct vitalsd *d, struct window *w);

/* The waiting window is handed out once no drain still fills a part. */
static void
pending_finish(struct vitalsd *d)
{
	if (!bpf_sched_async_busy(d->bsa) && !sc_async_busy(d->sca) &&
	    !d->wss_wait)
		collector_close_finish(d->col);
}

/* The syscall part a worker drained (NULL: no memory) into the waiting
 * window. */
static void
sc_finish(struct vitalsd *d, struct window_syscalls *p)
{
	struct window *w = collector_pending(d->col);

	if (w == NULL) {
		sc_collect_part_free(p);
		return;
	}
	if (p == NULL) {
		log_warnx("syscalls: window %llu: %s",
		    (unsigned long long)w->seq, strerror(ENOMEM));
	} else {
		sc_collect_part_free(w->part[WPART_SYSCALLS]);
		window_part_set(w, WPART_SYSCALLS, p);
		sc_health_add(&d->sch, p);
	}
	pending_finish(d);
}

static void
sc_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;
	struct window_syscalls *p;
	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	if (sc_async_done(d->sca, false, &p) > 0)
		sc_finish(d, p);
	loopstat_end("sc drain done", t0);
}

/* Waits for a syscall drain still running and gives its part over. */
static void
sc_settle(struct vitalsd *d)
{
	struct window_syscalls *p;

	if (sc_async_busy(d->sca) && sc_async_done(d->sca, true, &p) > 0)
		sc_finish(d, p);
}

/* The syscall drain's worker, made at the first close (privileges final,
 * as the sched drain's). */
static bool
sc_async_ready(struct vitalsd *d)
{
	int r;

	if (d->sca)
		return true;
	if (d->sca_off || d->stopping)
		return false;
	if ((r = sc_async_new(d->sc, &d->sca)) < 0 ||
	    (d->sca_ev = event_new(d->base, sc_async_fd(d->sca),
		 EV_READ | EV_PERSIST, sc_done_cb, d)) == NULL ||
	    event_add(d->sca_ev, NULL) < 0) {
		log_warnx("syscalls: the drain stays on the loop: %s",
		    strerror(r < 0 ? -r : ENOMEM));
		if (d->sca_ev)
			event_free(d->sca_ev);
		d->sca_ev = NULL;
		d->sca = sc_async_free(d->sca);
		d->sca_off = true;
		return false;
	}
	return true;
}

/* Before d->sc changes or goes: its drain settled, its worker gone. */
static void
sc_async_stop(struct vitalsd *d)
{
	sc_settle(d);
	if (d->sca_ev)
		event_free(d->sca_ev);
	d->sca_ev = NULL;
	d->sca = sc_async_free(d->sca);
}

static void
sched_drain_failed(struct vitalsd *d, int r)
{
	if (!d->bpf_warned)
		log_warnx("bpf: drain failed: %s (counted per window)",
		    strerror(-r));
	d->bpf_warned = true;
}

/*
 * The drain a close left to the other thread has ended (r: its result):
 * the waiting window gets its sched and wcpu parts and is handed out.
 */
static void
sched_finish(struct vitalsd *d, int r)
{
	struct window *w = collector_pending(d->col);
	struct window_bpf *b;

	if (w == NULL)
		return;
	if ((b = window_sched(w)) != NULL &&
	    (r = bpf_sched_window_reduce(d->bs, b, w->hz, r)) < 0)
		sched_drain_failed(d, r);
	wcpu_close(d, w);
	bpf_sched_batch_trim(d->bs);
	pending_finish(d);
}

static void
sched_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vitalsd *d = arg;
	int r;

	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	if (bpf_sched_async_done(d->bsa, false, &r) > 0)
		sched_finish(d, r);
	loopstat_end("sched drain done", t0);
}

/* Waits for a drain still running and hands its window out. */
static void
sched_settle(struct vitalsd *d)
{
	int r;

	if (bpf_sched_async_busy(d->bsa) &&
	    bpf_sched_async_done(d->bsa, true, &r) > 0)
		sched_finish(d, r);
	sc_settle(d);
	/* a window waiting for a pass: its end fills the part (passes with
	 * no window waiting are not waited for) */
	if (d->wss_wait)
		wss_settle(d->wss);
}

/* The drain's thread, made at the first close (privileges final). */
static bool
sched_async_ready(struct vitalsd *d)
{
	int r;

	if (d->bsa)
		return true;
	if (d->bsa_off || d->stopping)
		return false;
	if ((r = bpf_sched_async_new(d->bs, &d->bsa)) < 0 ||
	    (d->bsa_ev = event_new(d->base, bpf_sched_async_fd(d->bsa),
		 EV_READ | EV_PERSIST, sched_done_cb, d)) == NULL ||
	    event_add(d->bsa_ev, NULL) < 0) {
		log_warnx("bpf: the drain stays on the loop: %s",
		    strerror(r < 0 ? -r : ENOMEM));
		if (d->bsa_ev)
			event_free(d->bsa_ev);
		d->bsa_ev = NULL;
		d->bsa = bpf_sched_async_free(d->bsa);
		d->bsa_off = true;
		return false;
	}
	return true;
}

/*
 * The sched part: the state always (the head alone when BPF is off), then
 * what the kernel counted since the last window. The flip is the window's
 * edge, here; the grace period after it and the reads go to the drain's
 * thread (1: the window waits for them), except when the loop is over.
 */
static int
sched_close(struct vitalsd *d, struct window *w)
{
	struct window_bpf *b;
	int r;

	if ((b = window_sched_make(w, d->bs != NULL)) == NULL) {
		log_warnx("bpf: window %llu: %s", (unsigned long long)w->seq,
		    strerror(ENOMEM));
		return 0;
	}
	b->state = d->bpf_state;
	b->err = d->bpf_err;
	b->max_procs = d->bpf_procs;
	b->max_threads = d->bpf_threads;
	if (d->bs == NULL)
		return 0;
	/* read-only pins: the snapshot is the edge, taken here */
	if (!d->stopping && bpf_sched_needs_grace(d->bs) &&
	    sched_async_ready(d)) {
		if ((r = bpf_sched_async_start(d->bsa)) == 0)
			return 1;
		/* the flip failed: nothing drained, as on the loop */
		b->drain_fail++;
		sched_drain_failed(d, r);
		return 0;
	}
	if ((r = bpf_sched_window(d->bs, b, w->hz)) < 0)
		sched_drain_failed(d, r);
	return 0;
}

/* The working-set targets' part (wss_window.c); 1 while a pass runs on
 * its worker: filled between two passes (wss_idle_cb), the window waits. */
static int
wss_close(struct vitalsd *d, struct window *w)
{
	if (d->wss == NULL)
		return 0;
	if (!d->stopping && wss_busy(d->wss)) {
		d->wss_wait = true;
		return 1;
	}
	if (wss_window_fill(d->wss, w) < 0)
		log_warnx("wss: window %llu: out of memory",
		    (unsigned long long)w->seq);
	return 0;
}

static void
wss_idle_cb(void *arg)
{
	struct vitalsd *d = arg;
	struct window *w = collector_pending(d->col);

	if (!d->wss_wait)
		return;
	d->wss_wait = false;
	if (w && wss_window_fill(d->wss, w) < 0)
		log_warnx("wss: window %llu: out of memory",
		    (unsigned long long)w->seq);
	pending_finish(d);
}

/*
 * What fills each part of a closing window, one line per part, in this
 * order: ftrace first, its drain hands gpu_mem events to the GpuMem
 * window before that closes.
 */
/* The cgroup walk, once per window; a change of state is logged once. */
static void
cgroup_close(struct vitalsd *d, struct window *w)
{
	unsigned st;
	int r, err;

	if (d->cg == NULL)
		return;
	if ((r = cgroup_window(d->cg, w)) < 0)
		log_warnx("cgroup: window %llu: %s", (unsigned long long)w->seq,
		    strerror(-r));
	st = cgroup_state(d->cg, &err);
	if (st == d->cg_state)
		return;
	d->cg_state = st;
	log_info("cgroup: %s%s%s%s%s", cg_state_name(st),
	    st == CG_STATE_OK ? " at " : "",
	    st == CG_STATE_OK ? cgroup_root(d->cg) : "", err ? ": " : "",
	    err ? strerror(-err) : "");
}

/* Capacity-weighted CPU: the approximation from the window's CPUs, the
 * kernel's weighting from the drain sched_close just made (so it comes
 * after sched_close in part_close[]). */
static void
wcpu_close(struct vitalsd *d, struct window *w)
{
	const struct bpf_sched_batch *b = bpf_sched_last_batch(d->bs);
	struct window_wcpu *p;
	uint64_t nocap = 0, nofreq = 0;

	if ((p = window_wcpu_new()) == NULL) {
		log_warnx("wcpu: window %llu: %s", (unsigned long long)w->seq,
		    strerror(ENOMEM));
		return;
	}
	wcpu_approx_add(p, w);
	/* a batch counted once: a window whose sched_close did not drain
	 * (no memory for its part) finds the last window's batch here */
	if (b && !b->diff && !(d->wcpu_have_gen && b->gen == d->wcpu_gen)) {
		d->wcpu_gen = b->gen;
		d->wcpu_have_gen = true;
		if (d->wcpu_have_tot) {
			nocap = b->tot[VBPF_TOT_WTD_NOCAP] - d->wcpu_tot[0];
			nofreq = b->tot[VBPF_TOT_WTD_NOFREQ] - d->wcpu_tot[1];
		}
		d->wcpu_tot[0] = b->tot[VBPF_TOT_WTD_NOCAP];
		d->wcpu_tot[1] = b->tot[VBPF_TOT_WTD_NOFREQ];
		d->wcpu_have_tot = true;
		if (wcpu_bpf_add(p, b, w->hz, nocap, nofreq) < 0)
			log_warnx("wcpu: window %llu: %s",
			    (unsigned long long)w->seq, strerror(ENOMEM));
	}
	window_wcpu_free(window_wcpu(w));
	window_part_set(w, WPART_WCPU, p);
}

/* DMA-BUF: a pass when one is due (dmabuf_interval_s), given to w */
static void
dmabuf_close(struct vitalsd *d, struct window *w)
{
	int r;

	if (d->db && (r = dmabuf_window(d->db, w, w->mono_end_ns)) < 0)
		log_warnx("dmabuf: window %llu: %s", (unsigned long long)w->seq,
		    strerror(-r));
}

/* GPU frequency: the devices' figures since the last close, given to w */
static void
gpufreq_close(struct vitalsd *d, struct window *w)
{
	int r;

	if (d->gf && (r = gpufreq_window(d->gf, w)) < 0)
		log_warnx("gpufreq: window %llu: %s",
		    (unsigned long long)w->seq, strerror(-r));
}

/* Syscall latency: the drained part, or one saying why there is none;
 * off: no part at all. The flip here, the rest on the worker (1: the
 * window waits for it), except when the loop is over. */
static int
syscalls_close(struct vitalsd *d, struct window *w)
{
	struct window_syscalls *p;
	int r;

	if (d->sc != NULL && !d->stopping && sc_async_ready(d)) {
		if ((r = sc_async_start(d->sca)) == 0)
			return 1;
		/* -EBUSY: never, sched_settle took the last one */
		log_warnx("syscalls: window %llu: %s",
		    (unsigned long long)w->seq, strerror(-r));
		return 0;
	}
	if (d->sc != NULL) {
		if ((r = sc_window(d->sc, w)) < 0)
			log_warnx("syscalls: window %llu: %s",
			    (unsigned long long)w->seq, strerror(-r));
		else
			sc_health_add(&d->sch, w->part[WPART_SYSCALLS]);
		return 0;
	}
	if (d->sc_state == SC_OFF || w->part[WPART_SYSCALLS] != NULL)
		return 0;
	if ((p = sc_state_part(d->sc_state, d->sc_err)) != NULL)
		window_part_set(w, WPART_SYSCALLS, p);
	return 0;
}

static void (*const part_close[])(struct vitalsd *, struct window *) = {
	ftrace_close,
	gpumem_close,
	cgroup_close,
	dmabuf_close,
	gpufreq_close,
};

/*
 * The closing window gets what each signal counted since the last one;
 * then the syscall part and the sched part, and the capacity-weighted CPU
 * that needs the sched drain (1 when a drain runs on: the window waits
 * for sc_finish and sched_finish, pending_finish hands it out).
 */
static int
parts_close_cb(struct window *w, void *arg)
{
	struct vitalsd *d = arg;
	struct loopstat ls;
	size_t i;
	int later;

	/* the loop's longest callback since the last close */
	loopstat_take(&ls);
	w->health.loop_cb_ns_max = ls.max_ns;
	memcpy(w->health.loop_cb_what, ls.what, sizeof(ls.what));
	w->health.loop_cb_over_1ms = ls.over;
	w->health.loop_cb_cpu_ns = ls.cpu_ns;
	for (i = 0; i < sizeof(part_close) / sizeof(part_close[0]); i++)
		part_close[i](d, w);
	later = wss_close(d, w);
	later |= syscalls_close(d, w);
	if (sched_close(d, w) > 0)
		return 1;
	wcpu_close(d, w);
	bpf_sched_batch_trim(d->bs);
	return later;
}

/*
 * GPU memory of one process instance at a window's end, summed over its
 * GPUs, for heapprofd's gpu_growth rules. Stale pairs are nobody's.
 */
static int
window_gpu_bytes(void *arg, const struct window *w, int32_t pid,
    uint64_t starttime, uint64_t *bytes)
{
	const struct window_gpumem_part *g = window_gpumem(w);
	uint64_t sum = 0;
	bool seen = false;
	size_t i;

	(void)arg;
	for (i = 0; g && i < g->n_gpu; i++) {
		const struct window_gpu_proc *p = &g->gpu[i];

		if (p->pid != pid || p->stale || p->starttime != starttime)
			continue;
		sum += p->bytes;
		seen = true;
	}
	if (!seen)
		return -ENOENT;
	*bytes = sum;
	return 0;
}

/* The working-set monitor; without page_idle it samples with clear_refs. */
static int
wss_setup(struct vitalsd *d, const struct config *cfg,
    const struct privs_helpers *helpers)
{
	struct wss_opts o = {
		.proc_root = cfg->proc_root,
		.sys_root = cfg->sys_root,
		.cfg = &cfg->wss,
		/* how files are opened after the drop (wss_open.c) */
		.user = cfg->user,
		.keep_caps = cfg->keep_caps,
		.helper = helpers ? helpers->ph : NULL,
	};
	char note[160];
	int r;

	if ((r = wss_new(d->base, &o, &d->wss)) < 0) {
		log_warnx("wss: %s", strerror(-r));
		return r;
	}
	wss_set_idle(d->wss, wss_idle_cb, d);
	if ((r = wss_rules_start(d->wss)) < 0) {
		log_warnx("wss: rules: %s", strerror(-r));
		return r;
	}
	wss_damon(d->wss, note, sizeof(note));
	log_info("wss: page_idle %s; DAMON %s",
	    wss_page_idle(d->wss) ? "present" : "absent (clear_refs method)",
	    note);
	return 0;
}

/* The OpenMetrics endpoint (export/), bound here while privileged, and
 * the OTLP push (its collector's name resolved now); metrics_listen and
 * otlp_endpoint unset: off. */
static int
metrics_setup(struct vitalsd *d, const struct config *cfg)
{
	struct export_opts o = { 0 };
	struct otlp_opts oo = { 0 };
	int r;

	if (cfg->metrics_listen == NULL && cfg->otlp_endpoint == NULL)
		return 0;
	o.listen = cfg->metrics_listen;
	if (cfg->otlp_endpoint) {
		oo.endpoint = cfg->otlp_endpoint;
		oo.interval_s = cfg->otlp_interval_s;
		oo.queue_max = cfg->otlp_queue_max;
		oo.timeout_ms = cfg->otlp_timeout_ms;
		oo.priority = event_base_get_npriorities(d->base) - 1;
		o.otlp = &oo;
	}
	o.top_n = cfg->metrics_top_n;
	o.max_conns = cfg->metrics_max_conns;
	o.timeout_ms = cfg->metrics_timeout_ms;
	o.max_request = cfg->metrics_max_request;
	o.priority = event_base_get_npriorities(d->base) - 1;
	/* not fatal: the daemon's own work goes on without the endpoint,
	 * and Health.metrics is absent (it is off) */
	if ((r = export_new(d->base, &o, d->col, &d->ex)) < 0) {
		log_warnx("metrics: %s%s%s: %s; no export",
		    cfg->metrics_listen ? cfg->metrics_listen : "",
		    cfg->metrics_listen && cfg->otlp_endpoint ? ", " : "",
		    cfg->otlp_endpoint ? cfg->otlp_endpoint : "", strerror(-r));
		d->ex = NULL;
		return 0;
	}
	if (cfg->metrics_listen)
		log_info("metrics: serving /metrics on %s (top %u processes)",
		    cfg->metrics_listen, cfg->metrics_top_n);
	if (cfg->otlp_endpoint)
		log_info("otlp: pushing to %s every %u s (queue %u batches)",
		    cfg->otlp_endpoint, cfg->otlp_interval_s,
		    cfg->otlp_queue_max);
	return 0;
}

int
vitalsd_setup(const struct config *cfg, bool foreground,
    const struct privs_helpers *helpers, struct vitalsd **ret)
{
	/* SIGHUP rereads the configuration (vitalsd_on_reload); without a
	 * reader it is logged, never a stop. */
	static const int sigs[] = { SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP };
	struct collector_opts o = {
		.proc_root = cfg->proc_root,
		.sys_root = cfg->sys_root,
		.interval_ms = cfg->interval_ms,
		.window_s = cfg->window_s,
		.ring = cfg->ring,
		.threads = cfg->threads,
		.scanner = cfg->scanner,
		.stat_fds = cfg->proc_stat_fds,
	};
	struct control_hooks hooks = { 0 };
	struct event_config *ec;
	struct vitalsd *d;
	bool sock_in_state;
	char why[512];
	unsigned i;
	int r;

	(void)foreground;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->interval_ms = d->cur_ms = cfg->interval_ms;
	d->bpf_stats_fd = -1;
	d->state_fd = -1;
	d->notify_fd = -1;
	/* first: a refused directory gets nothing made anywhere */
	if ((r = statedir_open(cfg->state_dir, &d->state_fd, why,
		 sizeof(why))) < 0) {
		log_warnx("state directory %s: %s", cfg->state_dir, why);
		goto fail;
	}
	/* the spool's directory, made and checked as the state directory
	 * is; any failure: each window is committed on its own */
	if (spooldir_setup(cfg->store_spool_dir, cfg->store.commit_s,
		cfg->state_dir, d->spool_path, sizeof(d->spool_path),
		d->spool_note, sizeof(d->spool_note)) < 0)
		log_warnx("store spool off: %s", d->spool_note);
	if ((r = collector_new(&o, &d->col)) < 0) {
		log_warnx("collector on %s and %s: %s", cfg->proc_root,
		    cfg->sys_root, strerror(-r));
		goto fail;
	}
	if ((r = log_scanner(d->col, cfg)) < 0)
		goto fail;
	(void)provenance_read(cfg->proc_root, cfg->prop_root, VITALS_VERSION,
	    &d->prov);
	if (d->prov.fp_source == PROV_FP_ERROR)
		log_warnx("ro.build.fingerprint could not be read");
	collector_set_provenance(d->col, &d->prov);
	collector_set_window_cb(d->col, window_log_cb, d);
	bpf_setup(d, cfg);
	syscalls_setup(d, cfg);
	gpumem_setup(d, cfg);
	collector_set_close_hook(d->col, parts_close_cb, d);
	/* the database as the service user: its files are that user's
	 * from the start, and the writer thread inherits the ids */
	if ((r = statedir_fs_enter()) < 0 || (r = open_store(d, cfg)) < 0) {
		statedir_fs_leave();
		goto fail;
	}
	statedir_fs_leave();

	/* Precise timers: the default coarse clock drifts the cadence. */
	if ((ec = event_config_new()) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	/* Below the top priority, look at timers again after 16 callbacks
	 * or 2 ms of them: a due sample waits for at most that much. */
	event_config_set_max_dispatch_interval(ec,
	    &(struct timeval){ .tv_usec = 2000 }, 16, 1);
	d->base = event_base_new_with_config(ec);
	event_config_free(ec);
	/* Priorities: 0 sampling, 1 the rest, 2 (lowest) the control plane,
	 * so no client traffic runs before a due sample. */
	if (d->base == NULL || event_base_priority_init(d->base, 3) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	/* the syscall ring buffer's fd joins the loop (loaded before it) */
	if (d->sc != NULL && (r = sc_set_base(d->sc, d->base)) < 0)
		log_warnx("syscalls: ring buffer not in the loop (%s): read "
			  "at each window's close only",
		    strerror(-r));
	if ((d->tick = event_new(d->base, -1, 0, tick_cb, d)) == NULL ||
	    event_priority_set(d->tick, 0) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if (d->wr &&
	    ((d->wr_ev = event_new(d->base, writer_fd(d->wr),
		  EV_READ | EV_PERSIST, writer_cb, d)) == NULL ||
		event_priority_set(d->wr_ev, 1) < 0 ||
		event_add(d->wr_ev, NULL) < 0)) {
		r = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		d->sig[i] = evsignal_new(d->base, sigs[i], signal_cb, d);
		if (d->sig[i] == NULL || evsignal_add(d->sig[i], NULL) < 0) {
			r = -ENOMEM;
			goto fail;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	/* heapprofd sessions: closes what a restart left open */
	/* its heapprofd/ directory is made as the service user, who writes
	 * the traces into it after the drop */
	if ((r = statedir_fs_enter()) < 0 ||
	    (r = heapprofd_new(d->base, cfg, d->store, helpers, &d->hp)) < 0) {
		statedir_fs_leave();
		log_warnx("heapprofd: %s", strerror(-r));
		goto fail;
	}
	statedir_fs_leave();
	heapprofd_set_gpu(d->hp, window_gpu_bytes, NULL);
	/* from here on its records are written by the writer thread */
	heapprofd_set_writer(d->hp, d->wr);
	/* Working-set targets: passes at priority 1 (wss.c). */
	if ((r = wss_setup(d, cfg, helpers)) < 0)
		goto fail;
	/* cgroup v2 groups, walked as each window closes (cgroup.c) */
	if (cfg->cgroup.on) {
		struct cgroup_opts co = { .sys_root = cfg->sys_root,
			.cfg = &cfg->cgroup };

		d->cg_state = CG_STATE__MAX; /* the first state is logged */
		if ((r = cgroup_new(&co, &d->cg)) < 0)
			goto fail;
	}
	/* DMA-BUF per process, a pass at a window's close when due */
	if (cfg->dmabuf.on) {
		struct dmabuf_opts mo = { .proc_root = cfg->proc_root,
			.sys_root = cfg->sys_root,
			.cfg = &cfg->dmabuf };

		if ((r = dmabuf_new(&mo, &d->db)) < 0)
			goto fail;
	}
	/* GPU frequency, a reading per sample tick (gpufreq.c) */
	if (cfg->gpufreq) {
		if ((r = gpufreq_new(cfg->sys_root, &d->gf)) < 0)
			goto fail;
		log_info("gpufreq: %u GPU devices under %s", d->gf->ndev,
		    cfg->sys_root);
	}
	/* foreground/background, read by the process scan (fgbg.c) */
	if (cfg->fgbg.mode != FGBG_MODE_OFF) {
		struct fgbg_opts fo = { .proc_root = cfg->proc_root,
			.sys_root = cfg->sys_root,
			.cfg = &cfg->fgbg };

#ifdef __ANDROID__
		fo.android = true;
#endif
		if ((r = fgbg_new(&fo, &d->fg)) < 0)
			goto fail;
		collector_set_fgbg(d->col, d->fg);
		log_info("fgbg: %s%s%s", fgbg_status_name(fgbg_status(d->fg)),
		    *fgbg_cpuset(d->fg) ? ", cpusets at " : "",
		    fgbg_cpuset(d->fg));
	}
	ftrace_setup(d, cfg, helpers);
	if ((r = atcat_setup(d, cfg)) < 0)
		goto fail;
	/* The socket is made (or adopted) here, while privileged. */
	/* a socket in the state directory is made as the service user */
	sock_in_state = cfg->socket_path == NULL ||
	    in_dir(cfg->socket_path, cfg->state_dir);
	/* what answers act on: the modules made above, no way back */
	hooks.mod.wss = d->wss;
	hooks.mod.hp = d->hp;
	hooks.mod.burst = burst_cb;
	hooks.mod.burst_arg = d;
	/* burst triggers: rules that start the burst above on their own */
	if (cfg->burst.nrules) {
		struct burst_hooks bh = { .start = burst_cb,
			.until = burst_until_cb,
			.arg = d };

		if ((r = burst_new(&cfg->burst, &bh, &d->bu)) < 0)
			goto fail;
		log_info("burst: %u rules", cfg->burst.nrules);
	}
	hooks.mod.bursts = d->bu;
	hooks.get_info = get_info_cb;
	hooks.info_arg = d;
	if ((sock_in_state && (r = statedir_fs_enter()) < 0) ||
	    (r = control_new(d->base, cfg, &hooks, d->store, &d->ctl)) < 0) {
		if (sock_in_state)
			statedir_fs_leave();
		goto fail;
	}
	if (sock_in_state)
		statedir_fs_leave();
	if ((r = metrics_setup(d, cfg)) < 0)
		goto fail;
	*ret = d;
	return 0;
fail:
	vitalsd_free(d);
	return r;
}

/* The main file's lock waits (store_busy.c), for bench/store_io.sh. */
static void
log_store_waits(void)
{
	struct store_wait mv, rd;

	store_busy_stats(&mv, &rd);
	log_info("store waits: %llu moves, %llu waited for readers, max %.3f "
		 "ms, p99 %.3f ms; %llu read snapshots, %llu waited for a "
		 "move, max %.3f ms, p99 %.3f ms",
	    (unsigned long long)mv.n, (unsigned long long)mv.waited,
	    (double)mv.max_ns / 1e6, (double)mv.p99_ns / 1e6,
	    (unsigned long long)rd.n, (unsigned long long)rd.waited,
	    (double)rd.max_ns / 1e6, (double)rd.p99_ns / 1e6);
}

int
vitalsd_run(struct vitalsd *d)
{
	struct clocks now;
	int r;

	log_info("sampling every %u ms", d->interval_ms);
	d->next_ns = d->start_ns = clock_ns(CLOCK_MONOTONIC);
	arm_tick(d, d->next_ns);
	if (ftrace_captures_atrace(d->ft))
		atcat_start(d->ac);
	else if (d->atcat_wanted)
		log_info("atrace categories: not set: no ATrace capture "
			 "(ftrace %s)",
		    ftrace_state_name(d->ft_state));
	/* the socket is served and the first sample armed */
	(void)sdnotify_send(d->notify_fd, "READY=1\nSTATUS=sampling");
	if (event_base_dispatch(d->base) < 0) {
		atcat_stop(d->ac);
		return -EIO;
	}
	/* No client after this: connections closed, queued reads dropped. */
	d->ctl = control_free(d->ctl);
	/* a window waiting for its drain is handed out as any other */
	sched_settle(d);
	d->stopping = true;
	/* the categories go back before the instance stops capturing */
	atcat_stop(d->ac);
	/* Flush: the open window holds samples nobody has seen yet; open
	 * slices will never end now. */
	ftrace_finish(d->ft);
	sched_settle(d);
	collector_clocks(&now);
	if ((r = collector_close_window(d->col, &now)) < 0)
		log_warnx("closing the last window: %s", strerror(-r));
	/* a running session ends now, its record queued before the writer
	 * stops */
	heapprofd_stop(d->hp);
	if (d->wr) {
		struct store_stats st;

		/* The loop has stopped: waiting is fine now. The last lines,
		 * then what is queued; give a full disk a few seconds. */
		(void)writer_wait(d->wr, WRITER_FLUSH_MS);
		writer_each_done(d->wr, window_done, d);
		heapprofd_set_writer(d->hp, NULL);
		d->wr = writer_stop(d->wr, WRITER_FLUSH_MS);
		store_get_stats(d->store, &st);
		log_info("store: %llu windows written, %llu write failures",
		    (unsigned long long)st.windows_written,
		    (unsigned long long)st.write_failures);
		log_store_waits();
	}
	return 0;
}

struct vitalsd *
vitalsd_free(struct vitalsd *d)
{
	unsigned i;

	if (d == NULL)
		return NULL;
	for (i = 0; i < sizeof(d->sig) / sizeof(d->sig[0]); i++)
		if (d->sig[i])
			event_free(d->sig[i]);
	if (d->tick)
		event_free(d->tick);
	if (d->wr_ev)
		event_free(d->wr_ev);
	if (d->bsa_ev)
		event_free(d->bsa_ev);
	d->bsa = bpf_sched_async_free(d->bsa);
	bpf_sched_free(d->bs);
	if (d->sca_ev)
		event_free(d->sca_ev);
	d->sca = sc_async_free(d->sca);
	sc_free(d->sc);
	d->sc = NULL;
	/* the categories before the instance (a failed start included) */
	d->ac = atcat_free(d->ac);
	/* ftrace first: its gpu_mem events go into d->gm */
	d->ft = ftrace_free(d->ft);
	d->gm = gpumem_free(d->gm);
	if (d->bpf_stats_fd >= 0)
		close(d->bpf_stats_fd);
	control_free(d->ctl);
	/*
	 * No window is published from here on: a pass still running when
	 * the loop failed would end in wss_idle_cb, which publishes to the
	 * exporter and heapprofd freed below.
	 */
	if (d->wss != NULL)
		wss_set_idle(d->wss, NULL, NULL);
	d->wss_wait = false;
	wss_free(d->wss);
	d->wss = NULL;
	export_free(d->ex);
	d->ex = NULL;
	heapprofd_free(d->hp);
	d->hp = NULL;
	d->bu = burst_free(d->bu);
	d->cg = cgroup_free(d->cg);
	d->db = dmabuf_free(d->db);
	gpufreq_free(d->gf);
	d->gf = NULL;
	writer_stop(d->wr, 0);
	store_close(d->store);
	collector_free(d->col);
	d->fg = fgbg_free(d->fg);
	if (d->base)
		event_base_free(d->base);
	if (d->state_fd >= 0)
		close(d->state_fd);
	free(d);
	return NULL;
}

/* For the privilege drop: whether bpf() is still called after setup (the
 * sched_switch maps, the task iterator), so the kernel may need CAP_BPF. */
bool
vitalsd_uses_bpf(struct vitalsd *d)
{
	enum scanner_mode kind;
	enum scanner_why why;
	int err;

	collector_scanner(d->col, &kind, &why, &err);
	return d->bs != NULL || kind == SCANNER_BPF || d->sc != NULL ||
	    (d->gm != NULL && gpumem_uses_bpf(d->gm));
}
