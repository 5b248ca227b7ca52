/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ftrace reader: a tracefs instance of vitalsd's own (libtracefs),
 * its per-CPU trace_pipe_raw files read non-blocking on the libevent loop
 * (a timer, and readiness when the kernel's buffer_percent wake-up fires),
 * a bounded number of pages per CPU per drain so a flood cannot starve
 * sampling. Records of all CPUs are merged by timestamp before the
 * trackers (atrace.c) see them: a record later than what a backlogged CPU
 * has shown so far waits for the next drain.
 *
 * The top-level buffer's settings are never written. ATrace markers reach
 * the instance only through its copy_trace_marker option; without it,
 * ATrace capture is reported unavailable.
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
#include "trace/trace.h"

#define FT_LOST (FEV__MAX + 1) /* pending entry: the CPU lost events */
#define FT_RUNS_MAX 1025       /* held-back records + one run per CPU */
#define TGID_CACHE 512
/* FTRACE_KEEP_PAGES (trace.h): pages of a CPU's part of rbuf kept
 * resident between drains; the rest a flood wrote are given back once a
 * drain reads no more than this */
#define FT_KEEP_PAGES FTRACE_KEEP_PAGES

struct ft_stats {
	uint64_t entries, overrun, commit_overrun, dropped, read;
};

struct pend {
	struct ftrace_rec r;
	size_t off; /* print payload in the arena, when held back */
};

struct ftrace {
	struct event_base *base;
	struct tracefs_instance *inst;
	char *name;
	struct privhelper *ph; /* removes the instance after the drop */
	int ncpu;
	int *fd;  /* trace_pipe_raw per CPU, −1 absent */
	int *sfd; /* stats per CPU, −1 absent */
	struct event **rd;
	struct event *tick;
	struct timeval tick_tv;	     /* its period */
	int64_t tick_ns, drained_ns; /* the same; the last timed drain */
	struct ft_stats *prev;
	uint64_t *last_ts;
	bool *backlog;
	size_t page_sz;
	unsigned max_pages;
	struct fdec *dec;
	struct atrace *at;
	struct pend *pend, *pend2;
	uint32_t *order; /* pend's merged order */
	size_t npend, pend_cap;
	char *rbuf; /* a drain's pages: max_pages per CPU (mmapped) */
	size_t rbuf_len;
	unsigned *rb_hi; /* per CPU: pages of its part written, not given
			  * back (resident) */
	size_t run[FT_RUNS_MAX];
	unsigned nruns;
	struct vbuf arena, arena2;
	struct window_trace acc; /* loss and read figures of the open window */
	unsigned state;
	uint32_t enabled, missing;
	bool atrace;
	bool phases; /* fault phases configured */
	int procfd;
	/* opened for writing while privileged, so the stop can still make
	 * the instance inert after a privilege drop: copy_trace_marker,
	 * tracing_on, buffer_size_kb; −1 not open */
	int copy_fd, on_fd, size_fd;
	struct {
		int32_t tid, tgid;
	} tgid_cache[TGID_CACHE];
};

bool
ftrace_built(void)
{
	return true;
}

/* What the reader holds on the heap: the records held back and their
 * payloads. */
uint64_t
ftrace_bytes(const struct ftrace *ft)
{
	if (ft == NULL)
		return 0;
	return sizeof(*ft) + ft->arena.cap + ft->arena2.cap +
	    ft->pend_cap * (2 * sizeof(struct pend) + sizeof(uint32_t));
}

/* The drain buffer's resident pages (its own mapping, not heap): up to
 * max_pages per CPU in a flood, FT_KEEP_PAGES a CPU after it. */
uint64_t
ftrace_buffer_bytes(const struct ftrace *ft)
{
	uint64_t n = 0;
	int cpu;

	if (ft == NULL || ft->rbuf == NULL || ft->rb_hi == NULL)
		return 0;
	for (cpu = 0; cpu < ft->ncpu; cpu++)
		n += (uint64_t)ft->rb_hi[cpu] * ft->page_sz;
	return n;
}

/*
 * A CPU's drain read p pages into base: the pages past them that an
 * earlier drain wrote hold nothing live (every record of that drain was
 * processed or copied out by its pend_flush). Once the flood is over (p at
 * most FT_KEEP_PAGES) they go back to the kernel; a next flood faults them
 * in again, zeroed. The buffer's size, and so what a drain can read, does
 * not change.
 */
static void
rbuf_settle(struct ftrace *ft, int cpu, char *base, unsigned p)
{
	unsigned *hi = &ft->rb_hi[cpu];

	if (p > *hi)
		*hi = p;
	if (p > FT_KEEP_PAGES || *hi <= FT_KEEP_PAGES)
		return;
	if (madvise(base + (size_t)FT_KEEP_PAGES * ft->page_sz,
		(size_t)(*hi - FT_KEEP_PAGES) * ft->page_sz,
		MADV_DONTNEED) == 0)
		*hi = FT_KEEP_PAGES;
}

const char *
ftrace_state_name(unsigned st)
{
	static const char *const names[FTRACE__MAX] = {
		[FTRACE_UNKNOWN] = "unknown",
		[FTRACE_ON] = "on",
		[FTRACE_OFF_CONFIG] = "off_config",
		[FTRACE_OFF_NO_TRACEFS] = "off_no_tracefs",
		[FTRACE_OFF_NO_PRIV] = "off_no_priv",
		[FTRACE_OFF_ERROR] = "off_error",
	};

	return st < FTRACE__MAX ? names[st] : "?";
}

/*
 * A thread's exit ends its cache entry: the tid may come back as a thread
 * of another process, and its markers must not go to the old one. Exits
 * are dispatched in time order with the markers, so a marker before the
 * exit still finds the entry and one after it reads /proc again.
 */
static void
tgid_forget(struct ftrace *ft, int32_t tid)
{
	unsigned slot = (unsigned)tid % TGID_CACHE;

	if (tid > 0 && ft->tgid_cache[slot].tid == tid) {
		ft->tgid_cache[slot].tid = 0;
		ft->tgid_cache[slot].tgid = 0;
	}
}

/* The process of a thread, from /proc/<tid>/status; cached by tid until
 * the thread's exit (tgid_forget). */
static int32_t
tgid_of(int32_t tid, void *arg)
{
	struct ftrace *ft = arg;
	unsigned slot = (unsigned)tid % TGID_CACHE;
	struct vbuf b = { 0 };
	char path[32];
	int32_t tgid = -1;
	const char *p;

	if (ft->tgid_cache[slot].tid == tid && tid > 0)
		return ft->tgid_cache[slot].tgid;
	snprintf(path, sizeof(path), "%d/status", (int)tid);
	if (ft->procfd >= 0 && read_at(ft->procfd, path, &b) == 0 && b.p &&
	    (p = strstr(b.p, "\nTgid:")) != NULL)
		tgid = (int32_t)strtol(p + 6, NULL, 10);
	vbuf_release(&b);
	if (tgid > 0) {
		ft->tgid_cache[slot].tid = tid;
		ft->tgid_cache[slot].tgid = tgid;
	}
	return tgid;
}

/* "entries: 3\noverrun: 0\ncommit overrun: 0\n...dropped events: 0\n" */
static int
stats_parse(const char *s, struct ft_stats *ret)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "entries:", offsetof(struct ft_stats, entries) },
		{ "overrun:", offsetof(struct ft_stats, overrun) },
		{ "commit overrun:",
		    offsetof(struct ft_stats, commit_overrun) },
		{ "dropped events:", offsetof(struct ft_stats, dropped) },
		{ "read events:", offsetof(struct ft_stats, read) },
	};
	struct ft_stats st = { 0 };
	unsigned i, found = 0;

	while (s && *s) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n = strlen(keys[i].key);

			if (strncmp(s, keys[i].key, n) == 0) {
				uint64_t v = strtoull(s + n, NULL, 10);

				memcpy((char *)&st + keys[i].off, &v,
				    sizeof(v));
				found++;
			}
		}
		s = strchr(s, '\n');
		s = s ? s + 1 : NULL;
	}
	if (found < 4)
		return -EBADMSG;
	*ret = st;
	return 0;
}

static int
stats_read(struct ftrace *ft, int cpu, struct ft_stats *ret)
{
	char buf[1024];
	ssize_t n;

	if (ft->sfd[cpu] < 0)
		return -ENOENT;
	if ((n = pread(ft->sfd[cpu], buf, sizeof(buf) - 1, 0)) < 0)
		return -errno;
	buf[n] = '\0';
	return stats_parse(buf, ret);
}

/* ------------------------------------------------------------ draining */

/*
 * A drain reads every CPU's pages into its own part of rbuf, so decoded
 * print payloads point into it and are not copied; only records held back
 * for the next drain (later than a backlogged CPU's last record) have
 * their payload copied into the arena. Each CPU's records come in
 * timestamp order: the drain merges the runs instead of sorting.
 */
static int
pend_push(struct ftrace *ft, const struct ftrace_rec *r)
{
	if (ft->npend == ft->pend_cap) {
		size_t ncap = ft->pend_cap ? ft->pend_cap * 2 : 256;
		struct pend *np = realloc(ft->pend, ncap * sizeof(*np));
		struct pend *np2 = realloc(ft->pend2, ncap * sizeof(*np2));
		uint32_t *no = realloc(ft->order, ncap * sizeof(*no));

		if (np)
			ft->pend = np;
		if (np2)
			ft->pend2 = np2;
		if (no)
			ft->order = no;
		if (np == NULL || np2 == NULL || no == NULL)
			return -ENOMEM;
		ft->pend_cap = ncap;
	}
	ft->pend[ft->npend].r = *r;
	ft->npend++;
	return 0;
}

static void
collect_cb(const struct ftrace_rec *r, void *arg)
{
	struct ftrace *ft = arg;

	if (pend_push(ft, r) < 0) {
		/* no memory to hold it: it is lost, and said so */
		ft->acc.missed++;
		ft->acc.pages_lost++;
		return;
	}
	ft->last_ts[r->cpu] = r->ts;
}

/* The merged order of pend's sorted runs (ties: the earlier run). */
static void
pend_merge(struct ftrace *ft)
{
	size_t head[FT_RUNS_MAX], end[FT_RUNS_MAX], out = 0;
	unsigned i, n = ft->nruns;

	for (i = 0; i < n; i++) {
		head[i] = ft->run[i];
		end[i] = i + 1 < n ? ft->run[i + 1] : ft->npend;
	}
	/* runs that are empty drop out at once */
	for (;;) {
		unsigned best = n;
		uint64_t bts = 0;

		for (i = 0; i < n; i++)
			if (head[i] < end[i] &&
			    (best == n || ft->pend[head[i]].r.ts < bts)) {
				best = i;
				bts = ft->pend[head[i]].r.ts;
			}
		if (best == n)
			break;
		ft->order[out++] = (uint32_t)head[best]++;
	}
}

/* The held-record arrays, once a flush holds under a quarter of them, cut
 * back to twice what it holds (a failed cut keeps a larger block); the
 * spare payload arena freed when over FT_ARENA_KEEP. */
#define FT_PEND_MIN 256
#define FT_ARENA_KEEP (64 * 1024)

static void
pend_cut(struct ftrace *ft)
{
	size_t ncap = FT_PEND_MIN;
	void *np;

	if (ft->arena2.cap > FT_ARENA_KEEP)
		vbuf_release(&ft->arena2);
	if (ft->pend_cap <= FT_PEND_MIN || ft->npend * 4 >= ft->pend_cap)
		return;
	while (ncap < 2 * ft->npend)
		ncap *= 2;
	if (ncap >= ft->pend_cap)
		return;
	if ((np = realloc(ft->pend, ncap * sizeof(*ft->pend))) != NULL)
		ft->pend = np;
	if ((np = realloc(ft->pend2, ncap * sizeof(*ft->pend2))) != NULL)
		ft->pend2 = np;
	if ((np = realloc(ft->order, ncap * sizeof(*ft->order))) != NULL)
		ft->order = np;
	ft->pend_cap = ncap;
}

/* Hand the records up to watermark to the trackers; keep the rest. */
static void
pend_flush(struct ftrace *ft, uint64_t watermark)
{
	size_t i, k = 0;

	if (ft->npend == 0) {
		pend_cut(ft);
		return;
	}
	if (ft->nruns > 1)
		pend_merge(ft);
	else
		for (i = 0; i < ft->npend; i++)
			ft->order[i] = (uint32_t)i;
	vbuf_reset(&ft->arena2);
	for (i = 0; i < ft->npend; i++) {
		struct pend *p = &ft->pend[ft->order[i]];

		if (p->r.ts <= watermark) {
			if (p->r.ev == FT_LOST) {
				/* the exits among the lost end no entry:
				 * every tid is looked up again */
				memset(ft->tgid_cache, 0,
				    sizeof(ft->tgid_cache));
				atrace_lost(ft->at);
				continue;
			}
			atrace_record(ft->at, &p->r);
			if (p->r.ev == FEV_PROCESS_EXIT)
				tgid_forget(ft, p->r.u.exit.tid);
			continue;
		}
		/* held back: its payload must outlive rbuf */
		if (p->r.ev == FEV_PRINT) {
			size_t len = strnlen(p->r.u.print.buf,
			    p->r.u.print.len);

			if (vbuf_reserve(&ft->arena2, len + 1) < 0) {
				ft->acc.missed++;
				continue;
			}
			p->off = ft->arena2.len;
			memcpy(ft->arena2.p + ft->arena2.len, p->r.u.print.buf,
			    len);
			ft->arena2.p[ft->arena2.len + len] = '\0';
			ft->arena2.len += len + 1;
			p->r.u.print.len = len;
		}
		ft->pend2[k++] = *p;
	}
	ft->npend = k;
	/* the kept records are pend2, in order; their payloads arena2 */
	{
		struct pend *t = ft->pend;
		struct vbuf v = ft->arena;

		ft->pend = ft->pend2;
		ft->pend2 = t;
		ft->arena = ft->arena2;
		ft->arena2 = v;
	}
	for (i = 0; i < k; i++)
		if (ft->pend[i].r.ev == FEV_PRINT)
			ft->pend[i].r.u.print.buf = ft->arena.p +
			    ft->pend[i].off;
	pend_cut(ft);
}

static void
page_lost(struct ftrace *ft, int cpu, const void *page)
{
	struct ftrace_rec r = { 0 };
	uint64_t ts;

	ft->acc.pages_lost++;
	memcpy(&ts, page, sizeof(ts));
	r.ts = ts;
	r.cpu = cpu;
	r.ev = FT_LOST;
	collect_cb(&r, ft);
}

/*
 * Read every CPU (at most max_pages each), then process in timestamp
 * order what no backlogged CPU can still precede. Returns the pages read.
 */
int
ftrace_drain(struct ftrace *ft)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t wm = (uint64_t)t0;
	int cpu, pages = 0;
	unsigned p;

	if (ft == NULL)
		return 0;
	/* run 0: what the last drain held back (already in order) */
	ft->nruns = 0;
	ft->run[ft->nruns++] = 0;
	for (cpu = 0; cpu < ft->ncpu; cpu++) {
		char *base = ft->rbuf +
		    (size_t)cpu * ft->max_pages * ft->page_sz;

		ft->backlog[cpu] = false;
		if (ft->fd[cpu] < 0)
			continue;
		if (ft->nruns < FT_RUNS_MAX)
			ft->run[ft->nruns++] = ft->npend;
		for (p = 0; p < ft->max_pages; p++) {
			char *page = base + (size_t)p * ft->page_sz;
			ssize_t n = read(ft->fd[cpu], page, ft->page_sz);
			int64_t missed = 0;
			uint64_t commit;
			int r;

			if (n <= 0)
				break;
			pages++;
			ft->acc.pages++;
			ft->acc.bytes += (uint64_t)n;
			if ((size_t)n < 16) /* not a page: skip it */
				continue;
			/* a loss before this page comes before its records */
			memcpy(&commit, page + 8, 8);
			if (commit & (1ULL << 31))
				page_lost(ft, cpu, page);
			r = fdec_page(ft->dec, page, (size_t)n, cpu, collect_cb,
			    ft, &missed);
			if (r < 0)
				ft->acc.bad_pages++;
			if (missed > 0) /* the count the header stored */
				ft->acc.missed += (uint64_t)missed;
		}
		rbuf_settle(ft, cpu, base, p);
		if (p == ft->max_pages) {
			ft->backlog[cpu] = true;
			ft->acc.backlog++;
			if (ft->last_ts[cpu] < wm)
				wm = ft->last_ts[cpu];
		}
	}
	pend_flush(ft, wm);
	ft->acc.read_ns += (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
	return pages;
}

static void
ftrace_tick_cb_run(evutil_socket_t fd, short what, void *arg)
{
	struct ftrace *ft = arg;

	(void)fd;
	(void)what;
	ft->drained_ns = clock_ns(CLOCK_MONOTONIC);
	ftrace_drain(ft);
}

/*
 * A sample just ran: when the tick's period is half gone the drain runs
 * now, in the same wake-up of the loop, and the own timer starts its
 * period again, so with the sampling interval at or under the period it
 * never fires (one wake-up a second instead of two; bench/README.md,
 * "Loop CPU"). Floods still wake the reader at buffer_percent.
 */
void
ftrace_after_sample(struct ftrace *ft)
{
	int64_t now;

	if (ft == NULL || ft->tick == NULL)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	if (now - ft->drained_ns < ft->tick_ns / 2)
		return;
	ft->drained_ns = now;
	ftrace_drain(ft);
	(void)event_add(ft->tick, &ft->tick_tv);
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
ftrace_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	ftrace_tick_cb_run(fd, what, arg);
	loopstat_end("ftrace tick", t0);
}

/* ---------------------------------------------------------- the window */

/* Everything since the last call: drained first, stats deltas, trackers. */
int
ftrace_window(struct ftrace *ft, struct window_trace *wt)
{
	uint64_t buffered = 0;
	int cpu, r = 0;

	wt->state = ft->state;
	wt->enabled = ft->enabled;
	wt->missing = ft->missing;
	wt->atrace = ft->atrace;
	ftrace_drain(ft);
	for (cpu = 0; cpu < ft->ncpu; cpu++) {
		struct ft_stats st, *pv = &ft->prev[cpu];

		if (ft->sfd[cpu] < 0)
			continue;
		if ((r = stats_read(ft, cpu, &st)) < 0) {
			ft->acc.stats_fail++;
			continue;
		}
		/* counters only grow while the instance lives */
		if (st.overrun >= pv->overrun)
			ft->acc.overrun += st.overrun - pv->overrun;
		if (st.dropped >= pv->dropped)
			ft->acc.dropped += st.dropped - pv->dropped;
		if (st.commit_overrun >= pv->commit_overrun)
			ft->acc.commit_overrun += st.commit_overrun -
			    pv->commit_overrun;
		if (st.read >= pv->read)
			ft->acc.entries += st.read - pv->read;
		buffered += st.entries;
		*pv = st;
	}
	wt->overrun = ft->acc.overrun;
	wt->dropped = ft->acc.dropped;
	wt->commit_overrun = ft->acc.commit_overrun;
	wt->pages_lost = ft->acc.pages_lost;
	wt->missed = ft->acc.missed;
	wt->stats_fail = ft->acc.stats_fail;
	wt->backlog = ft->acc.backlog;
	wt->entries = ft->acc.entries;
	wt->pages = ft->acc.pages;
	wt->bytes = ft->acc.bytes;
	wt->read_ns = ft->acc.read_ns;
	wt->bad_markers = ft->acc.bad_markers;
	wt->bad_pages = ft->acc.bad_pages;
	wt->buffered = buffered;
	wt->unknown_events = ft->acc.unknown_events;
	memset(&ft->acc, 0, sizeof(ft->acc));
	atrace_window(ft->at, wt);
	return 0;
}

void
ftrace_set_gpu_mem_cb(struct ftrace *ft, ftrace_gpu_mem_fn fn, void *arg)
{
	if (ft)
		atrace_set_gpu_mem_cb(ft->at, fn, arg);
}

/* ------------------------------------------------------------- setup */

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
			stats_read(ft, cpu, &ft->prev[cpu]);
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
	    (r = atrace_new(&ft->at)) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	atrace_set_tgid_fn(ft->at, tgid_of, ft);
	if (o->fault_phases && o->fault_phases[0]) {
		struct phase *ph;

		if ((r = phase_new(o->fault_phases, o->fault_maps_reads,
			 ft->procfd, &ph)) < 0) {
			snprintf(why, whysz, "fault_phases: %s", strerror(-r));
			goto fail;
		}
		phase_set_tgid_fn(ph, tgid_of, ft);
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
	pend_flush(ft, UINT64_MAX);
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
	free(ft->name);
	free(ft);
	return NULL;
}
