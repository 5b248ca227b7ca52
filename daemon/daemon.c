/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon: one libevent loop with the sampling timer and the signals.
 * vitalsd_setup() is the privileged phase (state directory, kernel files
 * opened; later BPF, tracefs and the socket); vitalsd_run() is everything
 * after it, so a privilege drop fits between the two. Each module's set-up
 * is in daemon_setup.c, the tick in daemon_tick.c, a window's close in
 * daemon_close.c, the control plane's figures in daemon_info.c, signals
 * and reload in daemon_signal.c (daemon_int.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "burst/burst.h"
#include "config/config.h"
#include "cgroup/cgroup.h"
#include "fgbg/fgbg.h"
#include "dmabuf/dmabuf.h"
#include "gpufreq/gpufreq.h"
#include "syscalls/sc_collect.h"
#include "control/control.h"
#include "core/log.h"
#include "core/provenance.h"
#include "core/sdnotify.h"
#include "core/util.h"
#include "trace/atrace_cat.h"
#include "daemon.h"
#include "daemon_int.h"
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
#include "wcpu/wcpu.h"
#include "window/collector.h"
#include "window/window.h"
#include "wss/wss.h"

#ifdef VITALS_HOT_PROFILE
/* libgcov's (bench/hot_order.sh) */
void __gcov_reset(void);
void __gcov_dump(void);
#endif

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
 * The sched accounting's flip ahead of a close, before its last sample's
 * process scan (doc/bpf.md, "Full walks"); sched_close's flip is then this
 * one. Not while a drain still runs: its side is being read.
 */
static bool
sched_flip_cb(void *arg)
{
	struct vitalsd *d = arg;

	if (d->bs == NULL || bpf_sched_async_busy(d->bsa))
		return false;
	return bpf_sched_flip_early(d->bs) == 0;
}

static void setup_pageout(struct vitalsd *d, const char *phase);

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
		.full_walk_s = cfg->full_walk_s,
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
	d->pageout_mode = cfg->startup_pageout;
	d->settle_window_s = cfg->window_s;
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
	/* what loading the program and libraries touched (set-up's first
	 * pageout: each phase's pages go before the next phase's come) */
	setup_pageout(d, "loaded");
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
	collector_set_flip_hook(d->col, sched_flip_cb, d);
	/* the database as the service user: its files are that user's
	 * from the start, and the writer thread inherits the ids */
	if ((r = statedir_fs_enter()) < 0 || (r = open_store(d, cfg)) < 0) {
		statedir_fs_leave();
		goto fail;
	}
	statedir_fs_leave();
	setup_pageout(d, "BPF and the store");

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
			.cfg = &cfg->dmabuf,
			.base = d->base,
			.no_bpf_load = cfg->bpf_load != VBPF_LOAD_AUTO };

		if ((r = dmabuf_new(&mo, &d->db)) < 0)
			goto fail;
		if (dmabuf_iter_state(d->db) == DMABUF_ITER_WHY_NONE)
			log_info(
			    "dmabuf: the kernel's list first (iter/dmabuf): "
			    "no buffer, no /proc walk");
		else
			log_info("dmabuf: every pass walks /proc (iter/dmabuf: "
				 "%s)",
			    dmabuf_iter_why_name(dmabuf_iter_state(d->db)));
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

/*
 * One pass of the start-up pageout (core/pageout.h), summed into
 * d->pageout; the first failure is kept in d->pageout_rc (1: every pass
 * ran). Never inside statedir_fs_enter's scope: the kernel gives back a
 * file's pages only to its owner, and there the file ids are the
 * service user's.
 */
static void
setup_pageout(struct vitalsd *d, const char *phase)
{
	struct pageout_stats st;
	int r;

	if (d->pageout_mode == 0)
		return;
	if ((r = pageout_self(d->pageout_mode == 2, &st)) < 0) {
		if (d->pageout_rc >= 0)
			d->pageout_rc = r;
		log_warnx("start-up pageout (%s): %s", phase, strerror(-r));
		return;
	}
	pageout_add(&d->pageout, &st);
	if (d->pageout_rc == 0)
		d->pageout_rc = 1;
	log_debug("start-up pageout (%s): file pages %.2f -> %.2f MiB, %.2f "
		  "ms",
	    phase, (double)st.before / (1024.0 * 1024.0),
	    (double)st.after / (1024.0 * 1024.0), (double)st.ns / 1e6);
}

/*
 * The start is over (configuration, BPF set up, the store opened, the
 * threads made): give back the pages of the program and libraries that
 * only it touched (core/pageout.h), the last of set-up's passes. Before
 * the first sample is armed, so no tick waits for it; what the loop runs
 * from here faults back in. Before the privileges drop (main.c): Linux's
 * madvise_pageout skips the file pages of a mapping whose file the
 * caller neither owns nor may write, and the service user owns none of
 * them (CI's dropped daemons logged "file pages 4.32 -> 4.32 MiB" when
 * it ran after the drop).
 */
void
vitalsd_pageout(struct vitalsd *d)
{
	const struct pageout_stats *po = &d->pageout;

	if (d->pageout_mode == 0)
		return;
	/* the read threads' warm reads first (10-20 ms each): what they
	 * mapped goes with set-up's pages (query.c, query_warm_wait) */
	control_warm_wait(d->ctl, 250 * NSEC_PER_MSEC);
	setup_pageout(d, "end of set-up");
	if (d->pageout_rc < 0)
		return;
	log_info("start-up pageout: %u passes gave back %.2f MiB; the last: "
		 "file pages %.2f -> %.2f MiB, %u ranges (%.2f MiB unmapped, "
		 "%u with pages of their own), %u refused; %.2f ms in all",
	    po->passes, (double)po->given / (1024.0 * 1024.0),
	    (double)po->before / (1024.0 * 1024.0),
	    (double)po->after / (1024.0 * 1024.0), po->ranges,
	    (double)po->unmapped / (1024.0 * 1024.0), po->kept, po->failed,
	    (double)po->ns / 1e6);
}

int
vitalsd_run(struct vitalsd *d)
{
	struct clocks now;
	int r;

	log_info("sampling every %u ms", d->interval_ms);
	/* identities (cmdline) off the loop: the worker made now, with the
	 * privileges final (proc_ident_async.c) */
	if ((r = collector_ident_async(d->col, d->base)) < 0)
		log_warnx("identities: read on the loop: %s", strerror(-r));
	/* the iterator's full walks off the loop too (proc_walk_async.c) */
	if ((r = collector_walk_async(d->col, d->base, tick_walked, d)) < 0)
		log_warnx("full walks: read on the loop: %s", strerror(-r));
#ifdef VITALS_HOT_PROFILE
	/* bench/hot_order.sh's build (--coverage): the counts from here on
	 * are the running daemon's, set-up's left out */
	__gcov_reset();
#endif
	/* the pages only the first windows run go too, off the loop
	 * (core/pageout.h) */
	if (d->pageout_mode != 0) {
		if ((r = pageout_settle_start(d->settle_window_s)) < 0)
			log_warnx("settling pageout: %s", strerror(-r));
		else
			d->settle_on = true;
	}
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
	r = event_base_dispatch(d->base);
#ifdef VITALS_HOT_PROFILE
	/* written now, the stop's code left out (the exit's dump is then
	 * skipped: one dump a process) */
	__gcov_dump();
#endif
	if (r < 0) {
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
	/* a running DMA-BUF pass ends and goes to the last window; a due
	 * one runs at its close, on the loop */
	dmabuf_stop(d->db);
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
	/* a settling pass in progress ends first (a few ms) */
	if (d->settle_on)
		pageout_settle_stop();
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
	/* a part out of its window for the drain's thread: a dispatch
	 * that failed never settled it */
	if (d->bsa_part != NULL) {
		window_bpf_release(d->bsa_part);
		free(d->bsa_part);
		d->bsa_part = NULL;
	}
	window_wcpu_free(d->bsa_wcpu);
	d->bsa_wcpu = NULL;
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
