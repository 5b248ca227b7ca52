/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor: for each target process, the regions of its
 * maps that a mode selects (a library's segments, or its heap), sampled in
 * passes. A pass begins by marking (Method A: the PFNs idle in page_idle;
 * Method B: clear_refs), waits the target's interval, and ends by reading
 * back which pages were touched. Passes run back to back on one timer per
 * target at loop priority 1, below sampling. A target's files are opened
 * once and kept (wss_open.c); with the privileged helper that happens off
 * the loop and the target is "opening" until they arrive, so no pass and
 * no sample waits on the helper. doc/wss.md has the methods, their cost
 * and their limits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/loopstat.h"
#include "core/util.h"
#include "privs/privs.h"
#include "proc/proc.h"
#include "wss/wss.h"
#include "wss_int.h"

#define WSS_ENDED_KEPT 8 /* ended targets shown until stopped */

/* ----------------------------------------------------------- helpers */

static int64_t
cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static size_t
live_targets(const struct wss *w)
{
	size_t i, n = 0;

	for (i = 0; i < w->nt; i++)
		n += !w->t[i]->st.ended;
	return n;
}

struct target *
wss_target_find(struct wss *w, int32_t pid)
{
	size_t i;

	/* a live target before an ended one of the same pid */
	for (i = 0; i < w->nt; i++)
		if (w->t[i]->st.pid == pid && !w->t[i]->st.ended)
			return w->t[i];
	for (i = 0; i < w->nt; i++)
		if (w->t[i]->st.pid == pid)
			return w->t[i];
	return NULL;
}

/* starttime and name of pid; -ESRCH when it is gone. */
int
wss_read_ident(struct wss *w, int32_t pid, uint64_t *ret_start, char *name,
    size_t namesz)
{
	struct pid_stat ps;
	char path[48];
	int r;

	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	if ((r = read_at(w->procfd, path, &w->buf)) < 0)
		return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
	if (pidstat_parse(w->buf.p, w->buf.len, &ps) < 0)
		return -EBADMSG;
	*ret_start = ps.starttime;
	if (name == NULL)
		return 0;
	snprintf(name, namesz, "%s", ps.comm);
	snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
	if (read_at(w->procfd, path, &w->buf) == 0 && w->buf.len > 0)
		cmdline_name(w->buf.p, w->buf.len, name, namesz);
	return 0;
}

static void
end_target(struct target *t, const char *why)
{
	if (t->st.ended)
		return;
	t->st.ended = true;
	snprintf(t->st.end_reason, sizeof(t->st.end_reason), "%s", why);
	/* on the worker (in_pass) the timer has fired and is not pending:
	 * the loop's structures stay the loop's */
	if (t->ev && !t->in_pass)
		event_del(t->ev);
	t->queued = false;
	wss_files_close(t, WSS_FILES_ALL);
	t->st.opening = false;
	if (t->logfd >= 0)
		close(t->logfd);
	t->logfd = -1;
	t->marked = false;
	wss_release_pages(t);
	if (strcmp(why, "stopped") != 0)
		log_info("wss: pid %d (%s): ended: %s", (int)t->st.pid,
		    t->st.name, why);
}

static void
target_free(struct target *t)
{
	if (t == NULL)
		return;
	end_target(t, "stopped");
	if (t->ev)
		event_free(t->ev);
	free(t->st.regions);
	free(t->work);
	free(t->raw0);
	free(t->raw1);
	free(t->pfn);
	wss_idle_release(&t->idle);
	free(t);
}

/* A read failed: the target vanished (ended), or an error to count. */
static int
failed(struct target *t, int r)
{
	uint64_t st = t->st.starttime;

	if (r == -ESRCH || r == -ENOENT ||
	    wss_read_ident(t->w, t->st.pid, &st, NULL, 0) == -ESRCH) {
		end_target(t, "process exited");
		return -ESRCH;
	}
	if (st != t->st.starttime) {
		end_target(t, "process exited (pid reused)");
		return -ESRCH;
	}
	t->st.read_errors++;
	return r;
}

/* ------------------------------------------------------------ passes */

static void
cost_add(struct target *t, int64_t t0, int64_t c0)
{
	t->cost_ns += (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
	t->cost_cpu_ns += (uint64_t)(cpu_ns() - c0);
}

/* Method A's mark; -EPERM when the PFNs came back zeroed. */
static int
mark_idle(struct target *t)
{
	struct wss_pm pm;
	size_t i, present = 0, k = 0;
	int r;

	for (i = 0; i < t->npages; i++) {
		wss_pm_decode(t->raw0[i], &pm);
		present += pm.present;
		if (pm.pfn)
			t->pfn[k++] = pm.pfn;
	}
	/* Unprivileged readers see the present bit with PFN 0. */
	if (present > 0 && k == 0)
		return -EPERM;
	if ((r = wss_idle_build(&t->idle, t->pfn, k)) < 0)
		return r;
	return wss_idle_mark(t->w->bmfd, &t->idle, &t->st.io);
}

/* Method B's mark, on the kept clear_refs (it acts on the task's
 * address space of the moment, exec or not). */
static int
clear_refs(struct target *t)
{
	int fd, r;

	if ((r = wss_file(t, PH_FILE_CLEAR_REFS, &fd)) < 0)
		return r;
	return wss_refs_write(fd);
}

/* Without the bitmap: can this pass's pagemap show PFNs at all? (The
 * note says so, and a pass that cannot is counted in pfn_zeroed.) */
static bool
pfns_hidden(const struct target *t)
{
	struct wss_pm pm;
	size_t i, present = 0;

	for (i = 0; i < t->npages; i++) {
		wss_pm_decode(t->raw0[i], &pm);
		if (pm.present && pm.pfn)
			return false;
		present += pm.present;
	}
	return present > 0;
}

static int
begin(struct target *t)
{
	struct wss *w = t->w;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = cpu_ns();
	uint64_t hash, start;
	int r;

	if (t->st.ended)
		return -ESRCH;
	if (t->marked)
		return -EALREADY;
	if (t->st.opening)
		return -EINPROGRESS;
	t->cost_ns = t->cost_cpu_ns = 0;
	if ((r = wss_read_ident(w, t->st.pid, &start, NULL, 0)) < 0)
		return failed(t, r);
	if (start != t->st.starttime) {
		end_target(t, "process exited (pid reused)");
		return -ESRCH;
	}
	if ((r = wss_read_maps(t, &hash)) < 0)
		return failed(t, r);
	if (w->buf.len == 0 && !t->fresh) {
		/* The address space the files were opened on is gone (an
		 * exec: same pid and starttime, new mm): open them again,
		 * through the helper off the loop when there is one. */
		wss_files_close(t, WSS_FILES_MM);
		t->fresh = true;
		if ((r = wss_files_ask(t, WSS_FILES_MM)) > 0)
			return -EINPROGRESS; /* the pass begins on the answer */
		if (r < 0 || (r = wss_read_maps(t, &hash)) < 0)
			return failed(t, r);
	}
	t->fresh &= w->buf.len == 0;
	if (!t->have_hash || t->reload || hash != t->maps_hash) {
		if (t->have_hash && !t->reload)
			t->st.maps_changes++;
		if ((r = wss_load_regions(t)) < 0 ||
		    (t->st.seq == 0 && (r = wss_regions_show(t)) < 0))
			return r;
		t->maps_hash = hash;
		t->have_hash = true;
		t->reload = false;
	}
	if ((r = wss_read_pagemap(t, t->raw0)) < 0)
		return failed(t, r);
	t->pass_method = WSS_METHOD_CLEAR_REFS;
	if (t->asked != WSS_METHOD_CLEAR_REFS && w->bmfd >= 0) {
		r = mark_idle(t);
		if (r == 0) {
			t->pass_method = WSS_METHOD_PAGE_IDLE;
			t->st.note[0] = '\0';
		} else if (r == -EPERM) {
			t->st.pfn_zeroed++;
			snprintf(t->st.note, sizeof(t->st.note),
			    "page-level "
			    "unavailable: needs CAP_SYS_ADMIN (PFNs read as "
			    "0); region-level clear_refs instead");
		} else {
			t->st.read_errors++;
			snprintf(t->st.note, sizeof(t->st.note),
			    "page_idle "
			    "bitmap: %s; clear_refs instead",
			    strerror(-r));
		}
	} else if (t->asked != WSS_METHOD_CLEAR_REFS) {
		bool hidden = pfns_hidden(t);

		t->st.pfn_zeroed += hidden;
		snprintf(t->st.note, sizeof(t->st.note),
		    "page_idle: %s; "
		    "clear_refs instead; %s",
		    strerror(-w->bm_err),
		    hidden ? "PFNs read as 0: needs CAP_SYS_ADMIN" :
			     "PFNs readable");
	}
	if (t->pass_method == WSS_METHOD_CLEAR_REFS && (r = clear_refs(t)) < 0)
		return failed(t, r);
	t->marked = true;
	cost_add(t, t0, c0);
	return 0;
}

static void
log_page(struct target *t, struct vbuf *b, uint64_t ts_us, uint64_t vaddr,
    uint64_t pfn, int state, const char *label)
{
	if (t->logfd < 0)
		return;
	if (vbuf_printf(b, "%llu,%llu,0x%llx,%llu,%d,(%s)\n",
		(unsigned long long)ts_us, (unsigned long long)t->st.seq,
		(unsigned long long)vaddr, (unsigned long long)pfn, state,
		label) < 0)
		t->st.log_errors++;
	else
		t->st.log_lines++;
}

/* Method A: each page from the two pagemap reads and the bitmap. */
static void
end_page_level(struct target *t, struct vbuf *log)
{
	uint64_t ts_us = (uint64_t)clock_ns(CLOCK_MONOTONIC) / 1000;
	struct wss_pm a, b;
	size_t i, j, k = 0;
	int s;

	for (i = 0; i < t->nwork; i++) {
		struct wss_region *g = &t->work[i];

		for (j = 0; j < g->pages; j++, k++) {
			wss_pm_decode(t->raw0[k], &a);
			wss_pm_decode(t->raw1[k], &b);
			if (!b.present) {
				s = -1; /* not resident, whatever it was */
			} else if (!a.present || a.pfn != b.pfn) {
				/* faulted in, or a new page (COW, migration)
				 * inside the pass: not the page we marked */
				g->moved += a.present;
				s = 1;
			} else {
				s = wss_idle_state(&t->idle, b.pfn);
			}
			g->resident += s >= 0;
			g->accessed += s == 1;
			g->idle += s == 0;
			g->not_resident += s < 0;
			log_page(t, log, ts_us, g->start + j * t->w->page_size,
			    b.present ? b.pfn : 0, s, g->label);
		}
	}
}

/* Method B: residency from pagemap, accesses from smaps Referenced. */
static int
end_region_level(struct target *t)
{
	struct wss *w = t->w;
	unsigned page_kb = w->page_size / 1024;
	struct wss_smaps *sm = NULL;
	struct wss_pm pm;
	size_t i, j, k = 0, n = 0, x = 0;
	int r;

	if ((r = wss_read(t, PH_FILE_SMAPS, &w->buf)) < 0 ||
	    (r = wss_smaps_parse(w->buf.p, w->buf.len, &sm, &n)) < 0)
		return r;
	for (i = 0; i < t->nwork; i++) {
		struct wss_region *g = &t->work[i];
		uint64_t refs;

		for (j = 0; j < g->pages; j++, k++) {
			wss_pm_decode(t->raw1[k], &pm);
			g->resident += pm.present;
		}
		g->not_resident = g->pages - g->resident;
		/* smaps is in address order, as the regions are */
		while (x < n && sm[x].end <= g->start)
			x++;
		if (x == n || sm[x].start != g->start || sm[x].end != g->end) {
			g->gone = true;
			continue;
		}
		g->rss_kb = sm[x].rss_kb;
		g->referenced_kb = sm[x].referenced_kb;
		refs = page_kb ? sm[x].referenced_kb / page_kb : 0;
		if (refs > g->resident) {
			t->st.refs_over++;
			refs = g->resident;
		}
		g->accessed = (uint32_t)refs;
		g->idle = g->resident - g->accessed;
	}
	free(sm);
	return 0;
}

static int
end(struct target *t)
{
	struct wss *w = t->w;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = cpu_ns();
	uint64_t hash, acc = 0, res = 0;
	struct vbuf log = { 0 };
	size_t i, x;
	int r;

	if (t->st.ended)
		return -ESRCH;
	if (!t->marked)
		return -EALREADY;
	t->marked = false;
	if ((r = wss_read_pagemap(t, t->raw1)) < 0)
		return failed(t, r);
	for (i = 0; i < t->nwork; i++) {
		struct wss_region *g = &t->work[i];

		g->resident = g->accessed = g->idle = g->not_resident = 0;
		g->moved = 0;
		g->rss_kb = g->referenced_kb = 0;
		g->gone = false;
		g->done = true;
	}
	if (t->pass_method == WSS_METHOD_PAGE_IDLE) {
		if ((r = wss_idle_read(w->bmfd, &t->idle, &t->st.io)) < 0) {
			t->st.read_errors++;
			return r;
		}
		end_page_level(t, &log);
	} else if ((r = end_region_level(t)) < 0) {
		return failed(t, r);
	}
	if (log.len && t->logfd >= 0 &&
	    write(t->logfd, log.p, log.len) != (ssize_t)log.len)
		t->st.log_errors++;
	vbuf_release(&log);
	/* A region unmapped inside the pass: its figures mean nothing. */
	if ((r = wss_read_maps(t, &hash)) < 0)
		return failed(t, r);
	if (hash != t->maps_hash) {
		t->st.maps_changes++;
		t->reload = true;
		wss_regions_gone(t);
	}
	for (x = 0; x < t->nwork; x++) {
		if (t->work[x].gone)
			continue;
		acc += t->work[x].accessed;
		res += t->work[x].resident;
	}
	if ((r = wss_regions_show(t)) < 0)
		return r;
	t->st.method = t->pass_method;
	t->st.seq++;
	t->st.last_mono_ns = clock_ns(CLOCK_MONOTONIC);
	t->st.interval_ms = wss_adapt_interval(t->st.interval_ms, acc, res,
	    t->st.interval_min_ms, t->st.interval_max_ms);
	cost_add(t, t0, c0);
	t->st.pass_ns_last = t->cost_ns;
	if (t->cost_ns > t->st.pass_ns_max)
		t->st.pass_ns_max = t->cost_ns;
	t->st.pass_ns_sum += t->cost_ns;
	t->st.pass_cpu_ns_sum += t->cost_cpu_ns;
	t->win_passes++;
	t->win_ns_sum += t->cost_ns;
	if (t->cost_ns > t->win_ns_max)
		t->win_ns_max = t->cost_ns;
	t->win_cpu_ns += t->cost_cpu_ns;
	return 0;
}

int
wss_pass_begin(struct wss *w, int32_t pid)
{
	struct target *t;

	wss_settle(w);
	t = wss_target_find(w, pid);
	return t ? begin(t) : -ENOENT;
}

int
wss_pass_end(struct wss *w, int32_t pid)
{
	struct target *t;

	wss_settle(w);
	t = wss_target_find(w, pid);
	return t ? end(t) : -ENOENT;
}

static void
arm(struct target *t)
{
	struct timeval tv = {
		.tv_sec = t->st.interval_ms / 1000,
		.tv_usec = (t->st.interval_ms % 1000) * 1000,
	};

	if (t->ev && !t->st.ended)
		event_add(t->ev, &tv);
}

/*
 * End the pass that waited its interval and begin the next: 1 when the
 * target is to be armed again. On the worker (wss_async.c) or the loop;
 * it touches the target, w->buf and w->npages, never the loop's events.
 */
static int
pass_work(struct target *t)
{
	struct timespec ts = { .tv_sec = t->w->test_delay_ms / 1000,
		.tv_nsec = (long)(t->w->test_delay_ms % 1000) * 1000000 };
	int r;

	if (t->w->test_delay_ms)
		(void)nanosleep(&ts, NULL);
	if (t->marked && (r = end(t)) < 0 && r != -ESRCH)
		log_debug("wss: pid %d: pass end: %s", (int)t->st.pid,
		    strerror(-r));
	if (t->st.ended)
		return 0;
	if ((r = begin(t)) == -EINPROGRESS)
		return 0; /* files being opened: armed when they arrive */
	if (r < 0 && r != -ESRCH)
		log_debug("wss: pid %d: pass begin: %s", (int)t->st.pid,
		    strerror(-r));
	return 1;
}

static void
pass_cb_run(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	wss_async_pass(arg);
}

/* what wss_async.c calls back (no call from it into this file) */
static const struct wss_pass_ops pass_ops = {
	.work = pass_work,
	.arm = arm,
};

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
pass_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	pass_cb_run(fd, what, arg);
	loopstat_end("wss pass", t0);
}

static void
log_started(const struct target *t)
{
	const char *lib = t->st.lib;

	log_info("wss: pid %d (%s): %s%s%s, %zu regions", (int)t->st.pid,
	    t->st.name, wss_mode_name(t->st.mode), *lib ? " " : "", lib,
	    t->nwork);
}

/* The target is gone, or its pid another process's now. */
static void
end_gone(struct target *t)
{
	uint64_t start;

	end_target(t,
	    wss_read_ident(t->w, t->st.pid, &start, NULL, 0) == 0 &&
		    start != t->st.starttime ?
		"process exited (pid reused)" :
		"process exited");
}

/* The helper's answer for t: its files, and the pass that waited on them
 * (the first one at a start, as wss_start() runs it without a helper). */
static void
files_arrived(struct target *t, struct wss_open_req *a)
{
	bool first = !t->have_hash;
	char why[64];
	int r;

	if ((r = wss_files_install(t, a)) == -ESRCH || r == -ENOENT) {
		end_gone(t);
		return;
	}
	if (r < 0) {
		snprintf(why, sizeof(why), "pagemap: %s", strerror(-r));
		end_target(t, why);
		return;
	}
	t->fresh = true;
	if ((r = begin(t)) == -EINPROGRESS || t->st.ended)
		return;
	if (r < 0 && first) {
		snprintf(why, sizeof(why), "first pass: %s", strerror(-r));
		end_target(t, why);
		return;
	}
	if (r < 0)
		log_debug("wss: pid %d: pass begin: %s", (int)t->st.pid,
		    strerror(-r));
	else if (first)
		log_started(t);
	arm(t);
}

/* Answers from the helper's worker (wss_open.c). */
static void
opened_cb_run(evutil_socket_t fd, short what, void *arg)
{
	struct wss *w = arg;
	struct wss_open_req *a;
	size_t i;

	(void)fd;
	(void)what;
	if (wss_busy(w)) {
		/* taken when the pass ends (its eventfd stays readable) */
		event_del(w->op_ev);
		w->op_deferred = true;
		return;
	}
	while ((a = wss_opener_take(w->op)) != NULL) {
		for (i = 0; i < w->nt; i++) {
			struct target *t = w->t[i];

			if (t->id == a->id && t->st.opening && !t->st.ended) {
				files_arrived(t, a);
				break;
			}
		}
		wss_open_req_free(a); /* what was not taken, closed */
	}
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
opened_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	opened_cb_run(fd, what, arg);
	loopstat_end("wss opened", t0);
}

/* ------------------------------------------------------------ targets */

static int
open_log(struct target *t)
{
	char path[4096];

	t->logfd = -1;
	if (t->w->cfg.log_dir == NULL)
		return 0;
	if (snprintf(path, sizeof(path), "%s/wss-%d.log", t->w->cfg.log_dir,
		(int)t->st.pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((t->logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		 0640)) < 0)
		return -errno;
	return 0;
}

/* Room for one more: the oldest ended target goes when too many are. */
static int
make_room(struct wss *w)
{
	size_t i, ended = w->nt - live_targets(w);

	if (ended >= WSS_ENDED_KEPT) {
		for (i = 0; i < w->nt && !w->t[i]->st.ended; i++)
			;
		target_free(w->t[i]);
		memmove(&w->t[i], &w->t[i + 1],
		    (w->nt - i - 1) * sizeof(*w->t));
		w->nt--;
	}
	if (w->nt == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 8;
		struct target **v = realloc(w->t, nc * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		w->t = v;
		w->cap = nc;
	}
	return 0;
}

int
wss_start(struct wss *w, int32_t pid, unsigned mode, const char *lib,
    unsigned method, char *err, size_t errsz)
{
	struct target *t, *old;
	unsigned i;
	int fd, r;

	wss_settle(w);

	if (pid <= 0 || mode > WSS_MODE_LIBRARY ||
	    method > WSS_METHOD_CLEAR_REFS) {
		snprintf(err, errsz, "bad pid, mode or method");
		return -EINVAL;
	}
	if (mode == WSS_MODE_LIBRARY &&
	    (lib == NULL || *lib == '\0' || strchr(lib, '/') ||
		strlen(lib) >= WSS_NAME_LEN)) {
		snprintf(err, errsz,
		    "library mode needs a file name (no '/', "
		    "under %d bytes)",
		    WSS_NAME_LEN);
		return -EINVAL;
	}
	if ((old = wss_target_find(w, pid)) != NULL && !old->st.ended) {
		snprintf(err, errsz, "pid %d is already a target", (int)pid);
		return -EEXIST;
	}
	if (live_targets(w) >= w->cfg.max_targets) {
		snprintf(err, errsz, "target limit reached (%u)",
		    w->cfg.max_targets);
		return -EBUSY;
	}
	if (w->npages >= w->cfg.max_pages) {
		snprintf(err, errsz, "page limit reached (%u pages)",
		    w->cfg.max_pages);
		return -ENOSPC;
	}
	if (method == WSS_METHOD_PAGE_IDLE && w->bmfd < 0) {
		snprintf(err, errsz, "page_idle unavailable: %s",
		    strerror(-w->bm_err));
		return -EOPNOTSUPP;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -ENOMEM;
	t->w = w;
	t->id = ++w->next_id;
	for (i = 0; i < PH_FILE__MAX; i++)
		t->fd[i] = -1;
	t->fresh = true;
	t->logfd = -1;
	t->asked = method;
	t->st.pid = pid;
	t->st.mode = mode;
	t->st.method = method == WSS_METHOD_PAGE_IDLE ? method :
							WSS_METHOD_CLEAR_REFS;
	snprintf(t->st.lib, sizeof(t->st.lib), "%s",
	    mode == WSS_MODE_LIBRARY ? lib : "");
	t->st.interval_ms = w->cfg.interval_ms;
	t->st.interval_min_ms = w->cfg.interval_min_ms;
	t->st.interval_max_ms = w->cfg.interval_max_ms;
	if ((r = wss_read_ident(w, pid, &t->st.starttime, t->st.name,
		 sizeof(t->st.name))) < 0) {
		snprintf(err, errsz, "pid %d: %s", (int)pid,
		    r == -ESRCH ? "no such process" : strerror(-r));
		goto fail;
	}
	/* With the helper its opens run off the loop and the first pass
	 * waits for them; without, pagemap is opened now (a syscall) so a
	 * refusal is the start's answer, and the rest at first use. */
	if (w->op != NULL && w->base != NULL)
		r = 0;
	else
		r = wss_file(t, PH_FILE_PAGEMAP, &fd);
	if (r < 0) {
		snprintf(err, errsz, "pid %d: pagemap: %s%s", (int)pid,
		    strerror(-r),
		    (r == -EACCES || r == -EPERM) && w->weak ?
			": unreadable to the service user without the privileged "
			"helper (privhelper = on)" :
			"");
		if (r == -ENOENT)
			r = -ESRCH;
		goto fail;
	}
	if ((r = open_log(t)) < 0) {
		snprintf(err, errsz, "log in %s: %s", w->cfg.log_dir,
		    strerror(-r));
		goto fail;
	}
	if (w->base) {
		if ((t->ev = event_new(w->base, -1, 0, pass_cb, t)) == NULL) {
			r = -ENOMEM;
			goto fail;
		}
		/* below sampling (0): a pass never delays a due sample */
		if (event_base_get_npriorities(w->base) > 1)
			event_priority_set(t->ev, 1);
	}
	if ((r = make_room(w)) < 0)
		goto fail;
	w->t[w->nt++] = t;
	if (w->base && (r = wss_files_ask(t, WSS_FILES_ALL)) > 0) {
		log_info("wss: pid %d (%s): files asked of the privileged "
			 "helper",
		    (int)pid, t->st.name);
		return 0; /* starting: opened_cb runs the first pass */
	}
	if (w->base) {
		if (r < 0 || (r = begin(t)) < 0) {
			snprintf(err, errsz, "pid %d: first pass: %s", (int)pid,
			    strerror(-r));
			w->nt--;
			goto fail;
		}
		arm(t);
	}
	log_started(t);
	return 0;
fail:
	target_free(t);
	return r;
}

int
wss_stop(struct wss *w, int32_t pid)
{
	size_t i = 0;
	int r = -ENOENT;

	wss_settle(w);
	/* the target and any ended entry of an earlier one of the pid */
	while (i < w->nt) {
		if (w->t[i]->st.pid != pid) {
			i++;
			continue;
		}
		target_free(w->t[i]);
		memmove(&w->t[i], &w->t[i + 1],
		    (w->nt - i - 1) * sizeof(*w->t));
		w->nt--;
		r = 0;
	}
	return r;
}

const struct wss_status *
wss_get(struct wss *w, int32_t pid)
{
	struct target *t;

	wss_settle(w);
	t = wss_target_find(w, pid);
	return t ? &t->st : NULL;
}

size_t
wss_list(struct wss *w, const struct wss_status **ret, size_t max)
{
	size_t i;

	wss_settle(w);
	for (i = 0; i < w->nt && i < max; i++)
		ret[i] = &w->t[i]->st;
	return w->nt;
}

unsigned
wss_npages(const struct wss *w)
{
	return (unsigned)w->npages;
}

void
wss_limits(const struct wss *w, uint32_t *ret_targets, uint32_t *ret_pages)
{
	*ret_targets = w->cfg.max_targets;
	*ret_pages = w->cfg.max_pages;
}

bool
wss_page_idle(const struct wss *w)
{
	return w->bmfd >= 0;
}

bool
wss_damon(const struct wss *w, char *note, size_t notesz)
{
	snprintf(note, notesz, "%s", w->damon_note);
	return w->damon;
}

/* ------------------------------------------------------------ monitor */

static void
probe_damon(struct wss *w, const char *sys_root)
{
	char path[4096];
	struct vbuf b = { 0 };
	struct stat sb;

	snprintf(path, sizeof(path), "%s/kernel/mm/damon/admin", sys_root);
	if (stat(path, &sb) < 0) {
		snprintf(w->damon_note, sizeof(w->damon_note), "absent");
		return;
	}
	w->damon = true;
	snprintf(path, sizeof(path),
	    "%s/kernel/mm/damon/admin/kdamonds/0/"
	    "contexts/0/avail_operations",
	    sys_root);
	if (read_at(AT_FDCWD, path, &b) == 0 && b.len) {
		while (b.len && b.p[b.len - 1] == '\n')
			b.p[--b.len] = '\0';
		snprintf(w->damon_note, sizeof(w->damon_note),
		    "present "
		    "(operations: %s); not used: region sampling, no "
		    "per-page state",
		    b.p);
	} else {
		snprintf(w->damon_note, sizeof(w->damon_note),
		    "present; not "
		    "used: region sampling, no per-page state");
	}
	vbuf_release(&b);
}

int
wss_new(struct event_base *base, const struct wss_opts *o, struct wss **ret)
{
	struct wss *w;
	long ps;
	int r;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	w->base = base;
	w->ops = &pass_ops;
	w->procfd = w->bmfd = -1;
	w->cfg = *o->cfg;
	w->cfg.log_dir = NULL;
	if (o->cfg->log_dir &&
	    (w->cfg.log_dir = strdup(o->cfg->log_dir)) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if (w->cfg.interval_min_ms > w->cfg.interval_max_ms)
		w->cfg.interval_min_ms = w->cfg.interval_max_ms;
	if (w->cfg.interval_ms < w->cfg.interval_min_ms)
		w->cfg.interval_ms = w->cfg.interval_min_ms;
	if (w->cfg.interval_ms > w->cfg.interval_max_ms)
		w->cfg.interval_ms = w->cfg.interval_max_ms;
	ps = sysconf(_SC_PAGESIZE);
	w->page_size = ps > 0 ? (unsigned)ps : 4096;
	if ((w->procfd = open(o->proc_root,
		 O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = -errno;
		goto fail;
	}
	wss_access_setup(w, o);
	/* the helper's opens of target files: on a worker, answers as an
	 * event (no loop: made on the spot, tests) */
	if (w->ph && base) {
		if ((r = wss_opener_new(w->ph, &w->op)) < 0)
			goto fail;
		w->op_ev = event_new(base, wss_opener_fd(w->op),
		    EV_READ | EV_PERSIST, opened_cb, w);
		if (w->op_ev == NULL ||
		    (event_base_get_npriorities(base) > 1 &&
			event_priority_set(w->op_ev, 1) < 0) ||
		    event_add(w->op_ev, NULL) < 0) {
			r = -ENOMEM;
			goto fail;
		}
	}
	(void)wss_open_bitmap(w, o->sys_root);
	probe_damon(w, o->sys_root);
	*ret = w;
	return 0;
fail:
	wss_free(w);
	return r;
}

struct wss *
wss_free(struct wss *w)
{
	size_t i;

	if (w == NULL)
		return NULL;
	/* a pass running ends first, then its worker goes */
	wss_settle(w);
	wss_async_free(w);
	/* the worker first: it may hold a call's answer for a target */
	w->op = wss_opener_free(w->op);
	if (w->op_ev)
		event_free(w->op_ev);
	for (i = 0; i < w->nt; i++)
		target_free(w->t[i]);
	free(w->t);
	if (w->rules_ev)
		event_free(w->rules_ev);
	if (w->procfd >= 0)
		close(w->procfd);
	if (w->bmfd >= 0)
		close(w->bmfd);
	vbuf_release(&w->buf);
	wss_config_release(&w->cfg);
	free(w);
	return NULL;
}
