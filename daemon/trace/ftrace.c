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

#include "trace/ftrace_int.h"

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
	return sizeof(*ft) + WINDOW_TRACE_HEAD + atrace_bytes(ft->at) +
	    ft->arena.cap + ft->arena2.cap +
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
 * processed or copied out by its ftrace_pend_flush). Once the flood is over (p at
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
int32_t
ftrace_tgid_of(int32_t tid, void *arg)
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

int
ftrace_stats_read(struct ftrace *ft, int cpu, struct ft_stats *ret)
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
		ft->acc->missed++;
		ft->acc->pages_lost++;
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
void
ftrace_pend_flush(struct ftrace *ft, uint64_t watermark)
{
	size_t i, k = 0;

	if (ft->npend == 0) {
		ft->nruns = 1; /* nothing held: the runs are gone with it */
		ft->run[0] = 0;
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
				ft->acc->missed++;
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
	/* what is held is one run, in order: the drain's runs index the
	 * records before this flush, and a later flush (the stop's) must not
	 * merge by them (they can lie past npend, and past the cut arrays) */
	ft->nruns = 1;
	ft->run[0] = 0;
	pend_cut(ft);
}

static void
page_lost(struct ftrace *ft, int cpu, const void *page)
{
	struct ftrace_rec r = { 0 };
	uint64_t ts;

	ft->acc->pages_lost++;
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
			ft->acc->pages++;
			ft->acc->bytes += (uint64_t)n;
			if ((size_t)n < 16) /* not a page: skip it */
				continue;
			/* a loss before this page comes before its records */
			memcpy(&commit, page + 8, 8);
			if (commit & (1ULL << 31))
				page_lost(ft, cpu, page);
			r = fdec_page(ft->dec, page, (size_t)n, cpu, collect_cb,
			    ft, &missed);
			if (r < 0)
				ft->acc->bad_pages++;
			if (missed > 0) /* the count the header stored */
				ft->acc->missed += (uint64_t)missed;
		}
		rbuf_settle(ft, cpu, base, p);
		if (p == ft->max_pages) {
			ft->backlog[cpu] = true;
			ft->acc->backlog++;
			if (ft->last_ts[cpu] < wm)
				wm = ft->last_ts[cpu];
		}
	}
	ftrace_pend_flush(ft, wm);
	ft->acc->read_ns += (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
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
void
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
		if ((r = ftrace_stats_read(ft, cpu, &st)) < 0) {
			ft->acc->stats_fail++;
			continue;
		}
		/* counters only grow while the instance lives */
		if (st.overrun >= pv->overrun)
			ft->acc->overrun += st.overrun - pv->overrun;
		if (st.dropped >= pv->dropped)
			ft->acc->dropped += st.dropped - pv->dropped;
		if (st.commit_overrun >= pv->commit_overrun)
			ft->acc->commit_overrun += st.commit_overrun -
			    pv->commit_overrun;
		if (st.read >= pv->read)
			ft->acc->entries += st.read - pv->read;
		buffered += st.entries;
		*pv = st;
	}
	wt->overrun = ft->acc->overrun;
	wt->dropped = ft->acc->dropped;
	wt->commit_overrun = ft->acc->commit_overrun;
	wt->pages_lost = ft->acc->pages_lost;
	wt->missed = ft->acc->missed;
	wt->stats_fail = ft->acc->stats_fail;
	wt->backlog = ft->acc->backlog;
	wt->entries = ft->acc->entries;
	wt->pages = ft->acc->pages;
	wt->bytes = ft->acc->bytes;
	wt->read_ns = ft->acc->read_ns;
	wt->bad_markers = ft->acc->bad_markers;
	wt->bad_pages = ft->acc->bad_pages;
	wt->buffered = buffered;
	wt->unknown_events = ft->acc->unknown_events;
	memset(ft->acc, 0, WINDOW_TRACE_HEAD);
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
