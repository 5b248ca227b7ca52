/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's privileged set-up of each module (daemon.c's vitalsd_setup
 * calls them in order): the store, BPF accounting, syscall latency, GPU
 * memory, ftrace and ATrace categories, the working-set monitor and the
 * exporter. Each logs its outcome once; most failures only turn a signal
 * off.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "burst/burst.h"
#include "config/config.h"
#include "syscalls/sc_collect.h"
#include "control/control.h"
#include "core/bpf_common.h"
#include "core/log.h"
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
#include "daemon_int.h"

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
int
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
int
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

void
bpf_setup(struct vitalsd *d, const struct config *cfg)
{
	struct bpf_sched_opts o = {
		.bpffs = cfg->bpffs,
		.sys_root = cfg->sys_root,
		.load = cfg->bpf_load,
		.rq = true,
		.rq_source = cfg->bpf_rq_source,
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
	if (cfg->bpf_rq_source == VBPF_RQ_SCHED_INFO &&
	    bpf_sched_rq(d->bs) != VBPF_RQ_SCHED_INFO)
		log_warnx("bpf: bpf_rq_source = sched_info: %s; run-queue "
			  "waits from wakeup stamps",
		    bpf_sched_rq(d->bs) == VBPF_RQ_WAKEUP ?
			"the kernel keeps no sched_info, or the programs "
			"running are not this build's" :
			"not known");
	wcpu_baseline(d);
	/* partial process samples read its live side (doc/bpf.md) */
	ev.slot_cap = bpf_sched_slot_cap(d->bs);
	if (bpf_sched_event_fds(d->bs, &ev.ctl_fd, &ev.tot_fd, ev.tid_fd,
		ev.proc_fd, ev.slot_fd, &ev.nslot_fd) == 0 &&
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
void
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

void
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
void
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
int
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

/* The working-set monitor; without page_idle it samples with clear_refs. */
int
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
int
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
