/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ftrace reader's setup and teardown: its tracefs instance (made,
 * sized, its events enabled), the per-CPU pipes and stats files, the
 * loop's events; and the stop that leaves the instance inert and removes
 * it. The drain is ftrace.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <tracefs.h>

#include "core/loopstat.h"
#include "core/util.h"
#include "privs/privs.h"
#include "trace/phase.h"
#include "trace/ftrace_int.h"
#include "trace/trace.h"

/*
 * The kernel has the event: its directory (with a format) is in the
 * instance's own events/. An instance lists every event the top level
 * does, and its files carry the instance's label, while the top-level
 * available_events is readable on debuggable Android builds only
 * (doc/android.md): the instance is the one list readable everywhere.
 */
static bool
available(struct tracefs_instance *inst, const char *sys, const char *name)
{
	char rel[256];

	if ((size_t)snprintf(rel, sizeof(rel), "events/%s/%s/format", sys,
		name) >= sizeof(rel))
		return false;
	return tracefs_file_exists(inst, rel);
}

/* ATrace markers reach the instance (copy_trace_marker is on). */
bool
ftrace_captures_atrace(const struct ftrace *ft)
{
	return ft != NULL && ft->state == FTRACE_ON && ft->atrace;
}

/* Remove an instance of that name (a crashed run's, or a stop's). */
int
ftrace_instance_remove(const char *tracefs, const char *name)
{
	struct tracefs_instance *inst;
	int r = 0;

	if (!tracefs_instance_exists(name))
		return 0;
	if ((inst = tracefs_instance_alloc(tracefs, name)) == NULL)
		return -errno ? -errno : -ENOMEM;
	if (tracefs_instance_destroy(inst) < 0)
		r = -(errno ? errno : EIO);
	tracefs_instance_free(inst);
	return r;
}

static int
setup_events(struct ftrace *ft, const struct ftrace_opts *o)
{
	static const struct {
		unsigned ev;
		const char *sys, *name;
	} want[] = {
		{ FEV_SCHED_SWITCH, "sched", "sched_switch" },
		{ FEV_SCHED_WAKEUP, "sched", "sched_wakeup" },
		{ FEV_SCHED_WAKEUP_NEW, "sched", "sched_wakeup_new" },
		{ FEV_PROCESS_EXIT, "sched", "sched_process_exit" },
		{ FEV_BINDER_TXN, "binder", "binder_transaction" },
		{ FEV_BINDER_RECV, "binder", "binder_transaction_received" },
		{ FEV_GPU_MEM, "gpu_mem", "gpu_mem_total" },
		{ FEV_PAGE_FAULT, "exceptions", "page_fault_user" },
		{ FEV_FILEMAP_FAULT, "filemap", "mm_filemap_fault" },
		{ FEV_FILEMAP_ADD, "filemap", "mm_filemap_add_to_page_cache" },
		{ FEV_RECLAIM_BEGIN, "vmscan",
		    "mm_vmscan_direct_reclaim_begin" },
		{ FEV_RECLAIM_END, "vmscan", "mm_vmscan_direct_reclaim_end" },
		{ FEV_BLOCK_ISSUE, "block", "block_rq_issue" },
	};
	unsigned i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned ev = want[i].ev;

		if ((ev == FEV_SCHED_SWITCH || ev == FEV_SCHED_WAKEUP ||
			ev == FEV_SCHED_WAKEUP_NEW) &&
		    !o->sched)
			continue;
		/* fault phases off: nothing of theirs is enabled */
		if (((1u << ev) & FEV_PHASE_MASK) && !ft->phases)
			continue;
		if (!available(ft->inst, want[i].sys, want[i].name) ||
		    !fdec_has(ft->dec, ev)) {
			ft->missing |= 1u << ev;
			continue;
		}
		if (tracefs_event_enable(ft->inst, want[i].sys, want[i].name) <
		    0) {
			ft->missing |= 1u << ev;
			continue;
		}
		ft->enabled |= 1u << ev;
	}
	return 0;
}

static int
setup_cpus(struct ftrace *ft)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int cpu, any = 0;

	if (n < 1)
		n = 1;
	if ((ft->fd = calloc((size_t)n, sizeof(*ft->fd))) == NULL ||
	    (ft->sfd = calloc((size_t)n, sizeof(*ft->sfd))) == NULL ||
	    (ft->rd = calloc((size_t)n, sizeof(*ft->rd))) == NULL ||
	    (ft->prev = calloc((size_t)n, sizeof(*ft->prev))) == NULL ||
	    (ft->last_ts = calloc((size_t)n, sizeof(*ft->last_ts))) == NULL ||
	    (ft->backlog = calloc((size_t)n, sizeof(*ft->backlog))) == NULL)
		return -ENOMEM;
	ft->ncpu = (int)n;
	for (cpu = 0; cpu < ft->ncpu; cpu++) {
		char path[64];

		snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw",
		    cpu);
		ft->fd[cpu] = tracefs_instance_file_open(ft->inst, path,
		    O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
		ft->sfd[cpu] = tracefs_instance_file_open(ft->inst, path,
		    O_RDONLY | O_CLOEXEC);
		if (ft->fd[cpu] >= 0)
			any++;
		if (ft->sfd[cpu] >= 0)
			ftrace_stats_read(ft, cpu, &ft->prev[cpu]);
	}
	return any ? 0 : -ENOENT;
}

static void
ftrace_ready_cb_run(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ftrace_drain(arg);
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
ftrace_ready_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	ftrace_ready_cb_run(fd, what, arg);
	loopstat_end("ftrace read", t0);
}

static int
setup_loop(struct ftrace *ft, const struct ftrace_opts *o)
{
	struct timeval tv = {
		.tv_sec = o->tick_ms / 1000,
		.tv_usec = (o->tick_ms % 1000) * 1000,
	};
	int cpu;

	ft->tick_tv = tv;
	ft->tick_ns = (int64_t)o->tick_ms * NSEC_PER_MSEC;
	ft->drained_ns = clock_ns(CLOCK_MONOTONIC);
	if ((ft->tick = event_new(ft->base, -1, EV_PERSIST, ftrace_tick_cb,
		 ft)) == NULL ||
	    event_priority_set(ft->tick, 1) < 0 || event_add(ft->tick, &tv) < 0)
		return -ENOMEM;
	/* readiness: the kernel wakes readers at buffer_percent full */
	for (cpu = 0; cpu < ft->ncpu; cpu++) {
		if (ft->fd[cpu] < 0)
			continue;
		if ((ft->rd[cpu] = event_new(ft->base, ft->fd[cpu],
			 EV_READ | EV_PERSIST, ftrace_ready_cb, ft)) == NULL)
			return -ENOMEM;
		event_priority_set(ft->rd[cpu], 1);
		if (event_add(ft->rd[cpu], NULL) < 0) {
			/* no poll support: the timer alone drains it */
			event_free(ft->rd[cpu]);
			ft->rd[cpu] = NULL;
		}
	}
	return 0;
}

/*
 * The tracing directory ftrace_open will use: the configured one, else
 * the mount libtracefs finds, else <sys_root>/kernel/tracing (for the
 * privileged helper, which must name the same instances).
 */
int
ftrace_tracing_dir(const char *tracefs, const char *sys_root, char *buf,
    size_t sz)
{
	const char *dir = tracefs ? tracefs : tracefs_tracing_dir();
	int n;

	if (dir)
		n = snprintf(buf, sz, "%s", dir);
	else
		n = snprintf(buf, sz, "%s/kernel/tracing", sys_root);
	return n < 0 || (size_t)n >= sz ? -ENAMETOOLONG : 0;
}

/*
 * Make the instance and start reading. On failure *ret_state says why
 * (FTRACE_OFF_*) and why[] has the detail; nothing is left behind.
 */
int
ftrace_open(struct event_base *base, const struct ftrace_opts *o,
    struct ftrace **ret, unsigned *ret_state, char *why, size_t whysz)
{
	const char *dir;
	struct ftrace *ft;
	char events[4096];
	long long sub;
	int r;

	*ret_state = FTRACE_OFF_ERROR;
	if (o->tracefs && tracefs_set_tracing_dir((char *)o->tracefs) < 0) {
		snprintf(why, whysz, "tracefs %s not usable", o->tracefs);
		*ret_state = FTRACE_OFF_NO_TRACEFS;
		return -ENOENT;
	}
	if ((dir = tracefs_tracing_dir()) == NULL) {
		snprintf(why, whysz, "tracefs is not mounted");
		*ret_state = FTRACE_OFF_NO_TRACEFS;
		return -ENOENT;
	}
	if ((ft = calloc(1, sizeof(*ft))) == NULL)
		return -ENOMEM;
	ft->base = base;
	ft->copy_fd = ft->on_fd = ft->size_fd = -1;
	ft->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ft->ph = o->helper;
	ft->max_pages = o->max_pages ? o->max_pages : 64;
	if ((ft->name = strdup(o->instance)) == NULL ||
	    (ft->acc = calloc(1, WINDOW_TRACE_HEAD)) == NULL ||
	    (r = atrace_new(&ft->at)) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	atrace_set_tgid_fn(ft->at, ftrace_tgid_of, ft);
	if (o->fault_phases && o->fault_phases[0]) {
		struct phase *ph;

		if ((r = phase_new(o->fault_phases, o->fault_maps_reads,
			 ft->procfd, &ph)) < 0) {
			snprintf(why, whysz, "fault_phases: %s", strerror(-r));
			goto fail;
		}
		phase_set_tgid_fn(ph, ftrace_tgid_of, ft);
		atrace_set_phase(ft->at, ph);
		ft->phases = true;
	}
	/* a crashed run's instance: start afresh, its stats included */
	if ((r = ftrace_instance_remove(NULL, o->instance)) < 0) {
		snprintf(why, whysz, "stale instance %s not removed: %s",
		    o->instance, strerror(-r));
		goto fail;
	}
	if ((ft->inst = tracefs_instance_create(o->instance)) == NULL) {
		r = -(errno ? errno : EIO);
		if (r == -EACCES || r == -EPERM)
			*ret_state = FTRACE_OFF_NO_PRIV;
		snprintf(why, whysz, "instance %s: %s", o->instance,
		    strerror(-r));
		goto fail;
	}
	tracefs_trace_off(ft->inst);
	if (tracefs_instance_set_buffer_size(ft->inst,
		o->buffer_kb ? o->buffer_kb : 2048, -1) < 0 ||
	    tracefs_instance_file_write(ft->inst, "trace_clock", "mono") < 0) {
		r = -(errno ? errno : EIO);
		snprintf(why, whysz, "instance %s: buffer size or clock: %s",
		    o->instance, strerror(-r));
		goto fail;
	}
	if (tracefs_file_exists(ft->inst, "buffer_percent")) {
		char pct[16];

		snprintf(pct, sizeof(pct), "%u", o->wake_percent);
		tracefs_instance_file_write(ft->inst, "buffer_percent", pct);
	}
	/* copy_trace_marker is turned on last, once tracing is on: the
	 * kernel fails every trace_marker write (EBADF) while an instance
	 * that receives copies has its buffer off */
	ft->atrace = tracefs_file_exists(ft->inst, "options/copy_trace_marker");
	if (ft->atrace)
		ft->enabled |= 1u << FEV_PRINT;
	else
		ft->missing |= 1u << FEV_PRINT;
	snprintf(events, sizeof(events), "%s/events", dir);
	if ((r = fdec_new(events, &ft->dec)) < 0) {
		snprintf(why, whysz, "event formats in %s: %s", events,
		    strerror(-r));
		goto fail;
	}
	if ((r = setup_events(ft, o)) < 0) {
		snprintf(why, whysz, "events: %s", strerror(-r));
		goto fail;
	}
	if (ft->phases)
		atrace_phase_events(ft->at, ft->enabled);
	ft->page_sz = (size_t)getpagesize();
	if (tracefs_instance_file_read_number(ft->inst, "buffer_subbuf_size_kb",
		&sub) == 0 &&
	    sub > 0)
		ft->page_sz = (size_t)sub * 1024;
	if ((r = setup_cpus(ft)) < 0) {
		snprintf(why, whysz, "per-CPU buffers: %s", strerror(-r));
		goto fail;
	}
	/* its own mapping: pages a flood wrote can be given back (and
	 * only written pages are resident) */
	ft->rbuf_len = (size_t)ft->ncpu * ft->max_pages * ft->page_sz;
	ft->rbuf = mmap(NULL, ft->rbuf_len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ft->rbuf == MAP_FAILED) {
		ft->rbuf = NULL;
		r = -ENOMEM;
		goto fail;
	}
	if ((ft->rb_hi = calloc((size_t)ft->ncpu, sizeof(*ft->rb_hi))) ==
	    NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = setup_loop(ft, o)) < 0)
		goto fail;
	if (tracefs_trace_on(ft->inst) < 0) {
		r = -(errno ? errno : EIO);
		snprintf(why, whysz, "tracing_on: %s", strerror(-r));
		goto fail;
	}
	if (ft->atrace &&
	    tracefs_instance_file_write(ft->inst, "options/copy_trace_marker",
		"1") <= 0) {
		ft->atrace = false;
		ft->enabled &= ~(1u << FEV_PRINT);
		ft->missing |= 1u << FEV_PRINT;
	}
	ft->copy_fd = ft->atrace ?
	    tracefs_instance_file_open(ft->inst, "options/copy_trace_marker",
		O_WRONLY | O_CLOEXEC) :
	    -1;
	ft->on_fd = tracefs_instance_file_open(ft->inst, "tracing_on",
	    O_WRONLY | O_CLOEXEC);
	ft->size_fd = tracefs_instance_file_open(ft->inst, "buffer_size_kb",
	    O_WRONLY | O_CLOEXEC);
	ft->state = FTRACE_ON;
	*ret_state = FTRACE_ON;
	snprintf(why, whysz, "instance %s, %u KiB per CPU, ATrace %s%s",
	    o->instance, o->buffer_kb ? o->buffer_kb : 2048,
	    ft->atrace ? "on" : "unavailable (no copy_trace_marker)",
	    !ft->phases ?
		"" :
		(ft->enabled & FEV_PHASE_MASK) == FEV_PHASE_MASK ?
		", fault phases: every event" :
		", fault phases: some events absent (health: missing)");
	*ret = ft;
	return 0;
fail:
	ftrace_free(ft);
	return r;
}

/* The reader stops: what is buffered is read, what is open is lost. */
void
ftrace_finish(struct ftrace *ft)
{
	if (ft == NULL)
		return;
	ftrace_drain(ft);
	ftrace_pend_flush(ft, UINT64_MAX);
	atrace_finish(ft->at);
}

/* Stop reading and remove the instance (the fds first: it is busy). */
struct ftrace *
ftrace_free(struct ftrace *ft)
{
	bool copies = ft && ft->atrace;
	int cpu;

	if (ft == NULL)
		return NULL;
	/* stop receiving markers before the buffer goes off (see open),
	 * through the fds opened while privileged; if that fails the buffer
	 * stays on, so applications' markers are never refused */
	if (ft->inst && copies &&
	    ((ft->copy_fd >= 0 && write(ft->copy_fd, "0", 1) == 1) ||
		tracefs_instance_file_write(ft->inst,
		    "options/copy_trace_marker", "0") > 0))
		copies = false;
	if (ft->inst && !copies &&
	    (ft->on_fd < 0 || write(ft->on_fd, "0", 1) != 1))
		tracefs_trace_off(ft->inst);
	/* should the removal fail (no privilege left, no helper), what
	 * stays behind holds the kernel's minimum of a few pages per CPU,
	 * not the whole buffer */
	if (ft->inst && !copies && ft->size_fd >= 0 &&
	    write(ft->size_fd, "4", 1) < 0) {
		/* best effort: the next start removes it anyway */
	}
	if (ft->copy_fd >= 0)
		close(ft->copy_fd);
	if (ft->on_fd >= 0)
		close(ft->on_fd);
	if (ft->size_fd >= 0)
		close(ft->size_fd);
	if (ft->tick)
		event_free(ft->tick);
	for (cpu = 0; cpu < ft->ncpu; cpu++) {
		if (ft->rd && ft->rd[cpu])
			event_free(ft->rd[cpu]);
		if (ft->fd && ft->fd[cpu] >= 0)
			close(ft->fd[cpu]);
		if (ft->sfd && ft->sfd[cpu] >= 0)
			close(ft->sfd[cpu]);
	}
	if (ft->inst) {
		/* after the privilege drop the privileged helper removes it
		 * (doc/privileges.md); failing that, the next start does.
		 * A synchronous call: teardown runs after the loop stopped,
		 * so a stuck helper delays the exit, no sample. */
		if (tracefs_instance_destroy(ft->inst) < 0 && ft->ph)
			privhelper_rmdir_instance(ft->ph, ft->name);
		tracefs_instance_free(ft->inst);
	}
	if (ft->procfd >= 0)
		close(ft->procfd);
	fdec_free(ft->dec);
	atrace_free(ft->at);
	free(ft->fd);
	free(ft->sfd);
	free(ft->rd);
	free(ft->prev);
	free(ft->last_ts);
	free(ft->backlog);
	if (ft->rbuf != NULL)
		munmap(ft->rbuf, ft->rbuf_len);
	free(ft->rb_hi);
	free(ft->pend);
	free(ft->pend2);
	free(ft->order);
	vbuf_release(&ft->arena);
	vbuf_release(&ft->arena2);
	free(ft->acc);
	free(ft->name);
	free(ft);
	return NULL;
}
