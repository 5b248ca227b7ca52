/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process and thread scan. Every task instance is keyed by its id and
 * starttime; its last counters are the baseline for the next delta, and its
 * window accumulators hold the Σ of valid deltas with their denominators.
 *
 * Files that take the target's mm lock (cmdline) and slow-to-format files
 * (status) are read once per instance, and again only when comm changes (an
 * Android app process renames itself after zygote specialises it).
 *
 * Two sources feed the same per-instance logic (proc_observe,
 * thread_observe, task_update): /proc itself, or the BPF task iterator
 * (taskiter.c), whose raw nanosecond figures are turned into /proc's ticks
 * first. Identity, validity, deltas and born/exited mean the same either way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "fgbg/fgbg.h"
#include "proc/proc.h"
#include "taskiter/taskiter.h"
#include "window/window.h"
#include "proc_scan_int.h"

#define UID_UNKNOWN UINT32_MAX

static int
ht_grow(struct htab *h)
{
	size_t nb = h->nb ? h->nb * 2 : 256, i;
	struct task **b = calloc(nb, sizeof(*b));
	struct htab nh = { b, nb, h->n };

	if (b == NULL)
		return -ENOMEM;
	for (i = 0; i < h->nb; i++) {
		struct task *t = h->b[i], *next;

		for (; t; t = next) {
			size_t s = ht_slot(&nh, t->wt.id);

			next = t->hnext;
			t->hnext = b[s];
			b[s] = t;
		}
	}
	free(h->b);
	*h = nh;
	return 0;
}

static int
ht_put(struct htab *h, struct task *t)
{
	size_t s;
	int r;

	if (h->n >= h->nb && (r = ht_grow(h)) < 0)
		return r;
	s = ht_slot(h, t->wt.id);
	t->hnext = h->b[s];
	h->b[s] = t;
	h->n++;
	return 0;
}

static void
ht_del(struct htab *h, struct task *t)
{
	struct task **pp = &h->b[ht_slot(h, t->wt.id)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == t) {
			*pp = t->hnext;
			h->n--;
			return;
		}
	}
}

int
procscan_new(int procfd, unsigned hz, enum threads_mode mode,
    struct procscan **ret)
{
	struct procscan *ps;
	int fd;

	if (hz == 0)
		return -EINVAL;
	if ((ps = calloc(1, sizeof(*ps))) == NULL)
		return -ENOMEM;
	if ((fd = fcntl(procfd, F_DUPFD_CLOEXEC, 0)) < 0 ||
	    (ps->dir = fdopendir(fd)) == NULL) {
		int r = -errno;

		if (fd >= 0)
			close(fd);
		free(ps);
		return r;
	}
	ps->procfd = procfd;
	ps->hz = hz;
	ps->tick_ns = (uint64_t)NSEC_PER_SEC / hz;
	ps->mode = mode;
	ps->why = SCANNER_WHY_CONFIG;
	ps->cgfd = -1;
	ps->pwhy = PARTIAL_WHY_SCANNER;
	ps->ev.ctl_fd = ps->ev.tot_fd = -1;
	ps->ev.tid_fd[0] = ps->ev.tid_fd[1] = -1;
	ps->ev.proc_fd[0] = ps->ev.proc_fd[1] = -1;
	*ret = ps;
	return 0;
}

/*
 * Choose the source. For anything but SCANNER_PROCFS this loads the
 * iterator, so it belongs to the privileged setup. Returns 0 when the
 * iterator is in use or was not asked for, else -errno of why not: the scan
 * then uses /proc, and procscan_scanner() names the reason.
 */
int
procscan_set_scanner(struct procscan *ps, enum scanner_mode mode,
    const char *sys_root)
{
	enum scanner_why why;
	int r;

	procscan_walk_cancel(ps);
	ps->ti = taskiter_free(ps->ti);
	ps->err = 0;
	ps->ti_fails = 0;
	ps->need_full = true;
	ps->pwhy = PARTIAL_WHY_SCANNER;
	ps->perr = 0;
	if (mode == SCANNER_PROCFS) {
		ps->why = SCANNER_WHY_CONFIG;
		return 0;
	}
	if ((why = taskiter_usable(ps->procfd)) != SCANNER_WHY_NONE) {
		ps->why = why;
		ps->err = EOPNOTSUPP;
		return -EOPNOTSUPP;
	}
	if ((r = taskiter_open_ev(ps->hz, sys_root,
		 ps->want_events ? &ps->ev : NULL, &ps->ti, &why, &ps->pwhy,
		 &ps->perr)) < 0) {
		ps->why = why;
		ps->err = -r;
		ps->pwhy = PARTIAL_WHY_SCANNER;
		return r;
	}
	ps->why = SCANNER_WHY_NONE;
	return 0;
}

/* Tests only: the next n iterator reads fail with -EIO. */
void
procscan_fail_iter_reads(struct procscan *ps, unsigned n)
{
	ps->fail_reads = n;
}

void
procscan_scanner(const struct procscan *ps, enum scanner_mode *ret_kind,
    enum scanner_why *ret_why, int *ret_err)
{
	*ret_kind = ps->ti ? SCANNER_BPF : SCANNER_PROCFS;
	*ret_why = ps->why;
	*ret_err = ps->err;
}

void
task_row(const struct task *t, struct window_task *ret)
{
	const struct task_wt *a = &t->wt;
	const char *name = task_name(t);

	memset(ret, 0, sizeof(*ret));
	ret->id = a->id;
	ret->tgid = a->tgid;
	ret->starttime = a->starttime;
	ret->uid = a->uid;
	memcpy(ret->comm, a->comm, sizeof(ret->comm));
	/* a copy, not snprintf: a row is made per active process and
	 * sample (fgbg) and per task at each close; the format's work was
	 * ~3 % of the loop's CPU at 2,100 tasks (bench/README.md, "Loop CPU") */
	window_task_set_name(ret, name);
	ret->d_utime = a->d_utime;
	ret->d_stime = a->d_stime;
	ret->d_minflt = a->d_minflt;
	ret->d_majflt = a->d_majflt;
	ret->samples = a->samples;
	ret->wall_ns = a->wall_ns;
	ret->total_ticks = a->total_ticks;
	ret->norm_ticks = a->norm_ticks;
	ret->rss_pages_max = a->rss_pages_max;
	ret->rss_pages_last = a->rss_pages_last;
	ret->born = a->born;
	ret->exited = a->exited;
}

/* An instance's activity into the window's rows. */
static int
task_emit(struct window *w, const struct task *t)
{
	struct window_task row;

	task_row(t, &row);
	return window_add_task(w, t->is_thread, &row);
}

static void
task_free(struct task *t)
{
	free(t->name);
	free(t);
}

static void
task_free_all(struct htab *h)
{
	size_t i;

	for (i = 0; i < h->nb; i++) {
		struct task *t = h->b[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->stat_fd >= 0)
				close(t->stat_fd);
			task_free(t);
		}
	}
	free(h->b);
}

void
procscan_set_stat_fds(struct procscan *ps, unsigned max)
{
	ps->sf.max = max;
}

struct procscan *
procscan_free(struct procscan *ps)
{
	if (ps == NULL)
		return NULL;
	/* first: the worker reads through procfd and looks at no task */
	ident_async_free(ps);
	/* the walk's worker reads through ti */
	walk_async_free(ps);
	taskiter_free(ps->ti);
	task_free_all(&ps->threads);
	task_free_all(&ps->procs);
	closedir(ps->dir);
	vbuf_release(&ps->buf);
	free(ps->hist);
	vbuf_release(&ps->known_pids);
	vbuf_release(&ps->known_tids);
	free(ps->gseen);
	free(ps->gidx);
	if (ps->cgfd >= 0)
		close(ps->cgfd);
	free(ps);
	return NULL;
}

static bool
task_active(const struct task *t)
{
	return t->wt.d_utime || t->wt.d_stime || t->wt.d_minflt ||
	    t->wt.d_majflt;
}

/*
 * Lazy settling (doc/bpf.md, "Event-driven samples"): the window's valid
 * samples [t->mark, upto) that observed nothing of t — a partial sample
 * skipped it, so it did not run and each of its deltas was 0 — added as
 * task_update adds a sample with no delta: in order, so the sums are the
 * very ones a full walk per sample makes. A stale instance would have
 * added nothing (its next read is a baseline).
 */
void
task_settle(const struct procscan *ps, struct task *t, uint32_t upto)
{
	for (; t->mark < upto; t->mark++) {
		const struct sample_acc *a = &ps->hist[t->mark];

		if (t->stale)
			continue;
		t->wt.samples++;
		t->wt.wall_ns += a->wall_ns;
		t->wt.total_ticks += a->total_ticks;
		t->wt.norm_ticks += a->norm_ticks;
	}
}

static void
task_reset_acc(struct task *t)
{
	struct task_wt *a = &t->wt;

	a->d_utime = a->d_stime = a->d_minflt = a->d_majflt = 0;
	a->samples = 0;
	a->wall_ns = a->total_ticks = 0;
	a->norm_ticks = 0.0;
	a->rss_pages_max = a->rss_pages_last;
	a->born = false;
	a->exited = false;
}

/* Hand an ending instance's activity to the window, then free it. */
void
task_retire(struct procscan *ps, struct task *t, struct window *w)
{
	/* not seen in this sample: the samples before it are its last */
	task_settle(ps, t, ps->nprev);
	if (task_active(t)) {
		t->wt.exited = true;
		/* ENOMEM here loses one task's record; the window still
		 * counts the exit below. */
		(void)task_emit(w, t);
	}
	if (t->is_thread) {
		struct task **pp = &t->proc->threads;

		for (; *pp; pp = &(*pp)->tnext) {
			if (*pp == t) {
				*pp = t->tnext;
				break;
			}
		}
		ht_del(&ps->threads, t);
		w->health.threads_exited++;
	} else {
		while (t->threads)
			task_retire(ps, t->threads, w);
		ht_del(&ps->procs, t);
		w->health.procs_exited++;
	}
	statfd_close(&ps->sf, &t->stat_fd);
	task_free(t);
}

/*
 * Fold one read into the instance. Returns true when a counter moved, which
 * is what THREADS_CHANGED keys on.
 */
/*
 * Whether a new instance started after the sample before the first one
 * that could have listed it: what a full walk per sample decides with the
 * previous sample's time. A partial sample lists an instance only once it
 * ran, maybe samples after it started. With its start to the ns
 * (start_ns, the BPF records'), the first sample after it is the one a
 * walk would have listed it at, so the one before that is compared with.
 * Without it (ticks only) the sample to compare with is the last one
 * (since the last full walk) at or before the tick it started in ended;
 * one inside that tick makes it a baseline, which a walk would have made
 * a birth if it started before that sample (a CPU-bound child forked just
 * before one: check_evscan cpu_bound_child).
 */
static bool
born_since(const struct procscan *ps, const struct scan_ctx *ctx,
    uint64_t starttime, uint64_t start_ns)
{
	uint64_t at = starttime * ps->tick_ns;
	uint32_t i;

	if (!ps->partial)
		return at >= (uint64_t)ctx->prev_boot_ns;
	if (start_ns != 0) {
		/* the start known to the ns: the first sample after it is
		 * the one a walk would have first listed it at */
		for (i = 0; i < ps->nsboot; i++)
			if ((uint64_t)ps->sboot[i] > start_ns)
				break;
		if (i == 0)
			return false; /* before the last full walk */
		return at >= (uint64_t)ps->sboot[i - 1];
	}
	for (i = ps->nsboot; i > 0; i--)
		if ((uint64_t)ps->sboot[i - 1] <= at + ps->tick_ns)
			return at >= (uint64_t)ps->sboot[i - 1];
	return false; /* before the last full walk: it listed it */
}

static bool
task_update(struct procscan *ps, struct task *t, const struct pid_stat *st,
    const struct scan_ctx *ctx, struct window *w, bool fresh)
{
	uint64_t du, ds, dmin, dmaj;
	bool born, moved;

	if (fresh)
		t->mark = ps->nprev; /* nothing of the window before it */
	else
		task_settle(ps, t, ps->nprev);
	t->wt.rss_pages_last = st->rss_pages;
	if (st->rss_pages > t->wt.rss_pages_max)
		t->wt.rss_pages_max = st->rss_pages;

	if (fresh) {
		/*
		 * An instance that started after the previous sample has used
		 * nothing before it: its whole counters are this sample's
		 * delta. starttime is floored to a tick, so one born in the
		 * same tick as the previous sample is taken as a baseline
		 * (losing under one tick) rather than risk counting twice.
		 */
		born = ctx->have_prev &&
		    born_since(ps, ctx, st->starttime, st->start_ns);
		du = st->utime;
		ds = st->stime;
		dmin = st->minflt;
		dmaj = st->majflt;
	} else {
		born = false;
		if (t->stale) {
			/* the last read failed: this one spans two intervals */
			t->stale = false;
			goto baseline;
		}
		if (st->utime < t->utime || st->stime < t->stime ||
		    st->minflt < t->minflt || st->majflt < t->majflt) {
			w->inv_deltas[INV_REGRESSION]++;
			goto baseline;
		}
		du = st->utime - t->utime;
		ds = st->stime - t->stime;
		dmin = st->minflt - t->minflt;
		dmaj = st->majflt - t->majflt;
	}
	if (!ctx->valid || (fresh && !born))
		goto baseline;

	t->wt.d_utime += du;
	t->wt.d_stime += ds;
	t->wt.d_minflt += dmin;
	t->wt.d_majflt += dmaj;
	t->wt.samples++;
	t->wt.wall_ns += ctx->wall_ns;
	t->wt.total_ticks += ctx->total_ticks;
	t->wt.norm_ticks += ctx->norm_ticks;
	if (born)
		t->wt.born = true;
	t->mark = ps->nhist;
	t->utime = st->utime;
	t->stime = st->stime;
	t->minflt = st->minflt;
	t->majflt = st->majflt;
	return du || ds || dmin || dmaj;

baseline:
	/*
	 * Counters that moved while the delta was dropped must still move
	 * the threads' baselines (THREADS_CHANGED), or the threads would
	 * count what the process dropped.
	 */
	moved = fresh || st->utime != t->utime || st->stime != t->stime ||
	    st->minflt != t->minflt || st->majflt != t->majflt;
	t->mark = ps->nhist;
	t->utime = st->utime;
	t->stime = st->stime;
	t->minflt = st->minflt;
	t->majflt = st->majflt;
	return moved;
}

/*
 * Read and parse one stat file, through *fdp (a task's kept file, -1:
 * none) when it is open; the failure is counted by the caller.
 */
static int
read_stat(struct procscan *ps, int *fdp, int dirfd, const char *path,
    struct pid_stat *ret, struct window *w)
{
	int r;

	r = statfd_read(&ps->sf, fdp, dirfd, path, &ps->buf, &w->health);
	/* read but not a task's stat: its file is not kept either */
	if (r == 0 &&
	    (ps->buf.len == 0 ||
		pidstat_parse(ps->buf.p, ps->buf.len, ret) < 0)) {
		statfd_close(&ps->sf, fdp);
		return ps->buf.len == 0 ? -ESRCH : -EBADMSG;
	}
	if (r == -ENOENT || r == -ESRCH)
		return -ESRCH; /* exited between readdir and read */
	return r;
}

static void
count_read_error(struct window *w, int r)
{
	if (r == -ESRCH)
		w->inv_deltas[INV_VANISHED]++;
	else if (r == -EBADMSG)
		w->inv_deltas[INV_PARSE]++;
	else
		w->inv_deltas[INV_READ_FAILED]++;
}

/*
 * uid and name: once per instance, and when comm changes. The iterator
 * hands over the uid (uid_known) at every read, and proc_observe takes a
 * changed one (setuid); /proc needs status for it. With a
 * worker (proc_ident_async.c) the files are read there and the answer
 * lands later; until then, or while the queue is full, the row carries
 * the comm (and an unknown uid where status is needed), as after a failed
 * read. A refused request is made again by a later scan with room
 * (proc_observe), not counted again.
 */
static void
proc_read_identity(struct procscan *ps, struct task *t, bool fresh,
    bool uid_known, uint32_t uid)
{
	struct pid_status status;
	char path[64], name[VITALS_NAME_LEN];

	t->ident_gen++;
	free(t->name);
	t->name = NULL;
	if (ps->ia != NULL) {
		/* a renamed process keeps the uid it had until the answer */
		if (uid_known)
			t->wt.uid = uid;
		else if (fresh)
			t->wt.uid = UID_UNKNOWN;
		t->ident_retry = !ident_queue(ps, t, !uid_known);
		t->ident_retry_uid = !uid_known;
		return;
	}
	t->wt.uid = uid_known ? uid : UID_UNKNOWN;
	ps->id_loop++;
	snprintf(path, sizeof(path), "%d/status", t->wt.id);
	if (!uid_known && read_at(ps->procfd, path, &ps->buf) == 0 &&
	    pidstatus_parse(ps->buf.p, ps->buf.len, &status) == 0)
		t->wt.uid = status.uid;
	/* none, or the comm again: the comm stands for it */
	if (proc_cmdline_name(ps->procfd, t->wt.id, &ps->buf, name,
		sizeof(name)) < 0 ||
	    strcmp(name, t->wt.comm) == 0)
		return;
	/* ENOMEM: the comm stands for it too */
	t->name = strdup(name);
}

static struct task *
task_new(int32_t id, const struct pid_stat *st, bool is_thread)
{
	struct task *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->wt.id = id;
	t->wt.starttime = st->starttime;
	memcpy(t->wt.comm, st->comm, sizeof(t->wt.comm));
	t->is_thread = is_thread;
	t->stat_fd = -1;
	return t;
}

/*
 * One read of a thread of p, from either source: identity (a reused tid or
 * a thread that moved to another process is a new instance), then the delta.
 * t is what the thread table holds for tid (the caller looked it up).
 */
int
thread_observe(struct procscan *ps, struct task *p, int32_t tid, struct task *t,
    const struct pid_stat *st, const struct scan_ctx *ctx, struct window *w,
    struct task **ret)
{
	bool fresh = false;

	ps->nscanned_threads++;
	if (t && (t->wt.starttime != st->starttime || t->proc != p)) {
		w->inv_deltas[INV_IDENTITY]++;
		task_retire(ps, t, w);
		t = NULL;
	}
	if (t == NULL) {
		if ((t = task_new(tid, st, true)) == NULL)
			return -ENOMEM;
		if (ht_put(&ps->threads, t) < 0) {
			free(t);
			return -ENOMEM;
		}
		t->proc = p;
		t->tnext = p->threads;
		p->threads = t;
		fresh = true;
	}
	t->wt.tgid = p->wt.id;
	t->wt.uid = p->wt.uid;
	/* a thread's name is its comm (task_name) */
	if (fresh || memcmp(t->wt.comm, st->comm, sizeof(t->wt.comm)) != 0)
		memcpy(t->wt.comm, st->comm, sizeof(t->wt.comm));
	task_update(ps, t, st, ctx, w, fresh);
	t->seen_gen = ps->gen;
	*ret = t;
	return 0;
}

/* Threads of p not seen in this scan have exited. */
void
threads_retire_unseen(struct procscan *ps, struct task *p, struct window *w)
{
	struct task *t, *next;

	for (t = p->threads; t; t = next) {
		next = t->tnext;
		if (t->seen_gen != ps->gen)
			task_retire(ps, t, w);
	}
}

/*
 * Listings skipped (doc/metrics.md): a directory listed whole with the
 * kernel's fork count at f names every task it can hold while the count
 * stays at f, since every new task, thread or process, is a fork; one that
 * ended since fails its read (a kept file's with ESRCH, a path's with
 * ENOENT), as it would have been missing from a new listing. A closing
 * sample lists anyway, so a window never rests on an older listing; and a
 * listing that named a task it could not read and does not hold (no
 * table entry to keep it by) is not whole: the next sample lists again.
 */
static bool
listing_current(const struct procscan *ps, const struct scan_ctx *ctx,
    bool listed, uint16_t epoch)
{
	return ctx->have_forks && listed && epoch == ps->fork_epoch &&
	    !ctx->full;
}

/*
 * The fork count as an epoch that moves whenever it does: a task needs 2
 * bytes for its stamp, not 8. At the epoch's wrap (2^16 samples with a
 * fork: 18 h at 1 s) no stamp counts any more, so an old one never matches.
 */
static void
fork_epoch_update(struct procscan *ps, const struct scan_ctx *ctx)
{
	size_t i;

	if (!ctx->have_forks || (ps->have_forks && ps->forks == ctx->forks))
		return;
	ps->forks = ctx->forks;
	ps->have_forks = true;
	if (++ps->fork_epoch != 0)
		return;
	ps->have_listed = false;
	for (i = 0; i < ps->procs.nb; i++) {
		struct task *p;

		for (p = ps->procs.b[i]; p; p = p->hnext)
			p->tasks_listed = false;
	}
}

/* b emptied and made to hold n ids, for reads that may change the tables;
 * NULL: out of memory */
static int32_t *
ids_room(struct vbuf *b, size_t n)
{
	b->len = 0;
	if (vbuf_reserve(b, n * sizeof(int32_t)) < 0)
		return NULL;
	return (int32_t *)(void *)b->p;
}

void
procscan_fork_epoch_test(struct procscan *ps, uint16_t epoch)
{
	ps->fork_epoch = epoch;
}

/*
 * One thread of p read, listed (a listing named it; dirfd: p's task/) or
 * known (the table named it, dirfd: /proc). A known thread that ended is
 * not counted as vanished: a listing would not have named it.
 */
static int
thread_read(struct procscan *ps, struct task *p, int32_t tid, int dirfd,
    bool listed, const struct scan_ctx *ctx, struct window *w)
{
	struct pid_stat st;
	struct task *t;
	char path[64];
	int r, sfd = -1;

	if (listed)
		snprintf(path, sizeof(path), "%d/stat", tid);
	else
		snprintf(path, sizeof(path), "%d/task/%d/stat", p->wt.id, tid);
	/* its kept file goes to whichever instance the read finds */
	t = ht_get(&ps->threads, tid);
	if (t != NULL && t->proc == p) {
		sfd = t->stat_fd;
		t->stat_fd = -1;
	}
	if ((r = read_stat(ps, &sfd, dirfd, path, &st, w)) < 0) {
		if (listed || r != -ESRCH)
			count_read_error(w, r);
		/* listed but unreadable is not gone: keep it */
		if (r != -ESRCH && t != NULL && t->proc == p) {
			t->seen_gen = ps->gen;
			t->stale = true;
		} else if (r != -ESRCH && listed) {
			ps->unread_threads++;
		}
		return 0;
	}
	if ((r = thread_observe(ps, p, tid, t, &st, ctx, w, &t)) < 0) {
		statfd_close(&ps->sf, &sfd);
		return r;
	}
	t->stat_fd = sfd;
	return 0;
}

/* p's known threads, read without listing its task/ (listing_current) */
static int
threads_known(struct procscan *ps, struct task *p, const struct scan_ctx *ctx,
    struct window *w)
{
	struct task *t;
	size_t n = 0, i;
	int32_t *ids;
	int r;

	for (t = p->threads; t; t = t->tnext)
		n++;
	if ((ids = ids_room(&ps->known_tids, n)) == NULL)
		return -ENOMEM;
	n = 0;
	for (t = p->threads; t; t = t->tnext)
		ids[n++] = t->wt.id;
	for (i = 0; i < n; i++)
		if ((r = thread_read(ps, p, ids[i], ps->procfd, false, ctx,
			 w)) < 0)
			return r;
	threads_retire_unseen(ps, p, w);
	return 0;
}

static int
scan_threads(struct procscan *ps, struct task *p, const struct scan_ctx *ctx,
    struct window *w)
{
	uint32_t unread = ps->unread_threads;
	struct dirent *de;
	char path[64];
	int fd, r;
	DIR *d;

	if (listing_current(ps, ctx, p->tasks_listed, p->list_epoch)) {
		w->health.lists_skipped++;
		return threads_known(ps, p, ctx, w);
	}
	w->health.lists_read++;
	p->tasks_listed = false;
	snprintf(path, sizeof(path), "%d/task", p->wt.id);
	fd = openat(ps->procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		count_read_error(w, errno == ENOENT ? -ESRCH : -errno);
		return 0;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	for (;;) {
		uint64_t tid;

		errno = 0;
		if ((de = readdir(d)) == NULL)
			break;
		if (parse_uint(de->d_name, INT32_MAX, &tid) < 0)
			continue;
		if ((r = thread_read(ps, p, (int32_t)tid, dirfd(d), true, ctx,
			 w)) < 0) {
			closedir(d);
			return r;
		}
	}
	/* listed whole: what it named stands until the next fork */
	p->tasks_listed = errno == 0 && ctx->have_forks &&
	    ps->unread_threads == unread;
	p->list_epoch = ps->fork_epoch;
	closedir(d);
	threads_retire_unseen(ps, p, w);
	return 0;
}

/*
 * THREADS_CHANGED skips the threads of a process whose counters did not
 * move: theirs did not either, so this sample's delta of each is 0 and is
 * summed as such. Without it a thread's denominators would cover only the
 * samples where its process moved, and its core-equivalent would depend on
 * the threads mode.
 */
void
threads_unmoved(struct procscan *ps, struct task *p)
{
	struct task *t;

	/* this sample (valid: in hist) and any skipped before it */
	for (t = p->threads; t; t = t->tnext)
		task_settle(ps, t, ps->nhist);
}

bool
threads_wanted(const struct procscan *ps, bool moved)
{
	return ps->mode == THREADS_ALL ||
	    (ps->mode == THREADS_CHANGED && moved);
}

/*
 * One read of a process, from either source: identity (a changed starttime
 * is a reused pid), names once per instance, then the delta. p is what the
 * process table holds for pid; uid_known: the source gave the uid, status
 * need not be read.
 */
int
proc_observe(struct procscan *ps, int32_t pid, struct task *p,
    const struct pid_stat *st, bool uid_known, uint32_t uid,
    const struct scan_ctx *ctx, struct window *w, struct task **ret,
    bool *ret_moved)
{
	uint64_t u0, s0, min0, maj0;
	bool fresh = false;

	ps->nscanned_procs++;
	if (p && p->wt.starttime != st->starttime) {
		/* pid reused: the old instance ended unseen. */
		w->inv_deltas[INV_IDENTITY]++;
		task_retire(ps, p, w);
		p = NULL;
	}
	if (p == NULL) {
		if ((p = task_new(pid, st, false)) == NULL)
			return -ENOMEM;
		if (ht_put(&ps->procs, p) < 0) {
			free(p);
			return -ENOMEM;
		}
		p->wt.tgid = pid;
		proc_read_identity(ps, p, true, uid_known, uid);
		fresh = true;
	} else if (memcmp(p->wt.comm, st->comm, sizeof(st->comm)) != 0) {
		memcpy(p->wt.comm, st->comm, sizeof(st->comm));
		proc_read_identity(ps, p, false, uid_known, uid);
	} else if (p->ident_retry && ident_room(ps)) {
		/* refused when the queue was full: the same ask again (its
		 * ident_gen kept), the uid too when it asked for it and the
		 * source still gives none */
		p->ident_retry = !ident_queue(ps, p,
		    !uid_known && p->ident_retry_uid);
	}
	if (!fresh && uid_known && p->wt.uid != uid) {
		struct task *t;

		/* setuid() since the instance was first read (a child forked
		 * as root that drops to its app's uid, as zygote's do): the
		 * source's uid from now on, for its threads too */
		p->wt.uid = uid;
		for (t = p->threads; t; t = t->tnext)
			t->wt.uid = uid;
	}
	u0 = p->wt.d_utime;
	s0 = p->wt.d_stime;
	min0 = p->wt.d_minflt;
	maj0 = p->wt.d_majflt;
	*ret_moved = task_update(ps, p, st, ctx, w, fresh);
	/* the deltas this sample added, to the state the process is in
	 * (none: fgbg_observe has nothing to add, no row made for it) */
	if (ctx->fg != NULL &&
	    ((p->wt.d_utime - u0) | (p->wt.d_stime - s0) |
		(p->wt.d_minflt - min0) | (p->wt.d_majflt - maj0)) != 0) {
		struct window_task row;

		task_row(p, &row);
		fgbg_observe(ctx->fg, &row, p->wt.d_utime - u0,
		    p->wt.d_stime - s0, p->wt.d_minflt - min0,
		    p->wt.d_majflt - maj0);
	}
	p->seen_gen = ps->gen;
	*ret = p;
	return 0;
}

/* A process listed but unreadable is not an exit: keep it, drop its delta. */
static void
proc_mark_stale(struct procscan *ps, struct task *p)
{
	struct task *t;

	p->seen_gen = ps->gen;
	p->stale = true;
	for (t = p->threads; t; t = t->tnext)
		t->stale = true;
}

/*
 * One process read: listed (a listing of /proc named it) or known (the
 * table did, listing_current; one that ended is not counted as vanished).
 */
static int
scan_one(struct procscan *ps, int32_t pid, bool listed,
    const struct scan_ctx *ctx, struct window *w)
{
	struct pid_stat st;
	struct task *p;
	char path[32];
	bool moved;
	int r, sfd = -1;

	snprintf(path, sizeof(path), "%d/stat", pid);
	/* its kept file goes to whichever instance the read finds */
	if ((p = ht_get(&ps->procs, pid)) != NULL) {
		sfd = p->stat_fd;
		p->stat_fd = -1;
	}
	if ((r = read_stat(ps, &sfd, ps->procfd, path, &st, w)) < 0) {
		if (listed || r != -ESRCH)
			count_read_error(w, r);
		/* its threads stay, unread, until the process reads again */
		if (r != -ESRCH && p != NULL)
			proc_mark_stale(ps, p);
		else if (r != -ESRCH && listed)
			ps->unread_procs++;
		return 0;
	}
	if ((r = proc_observe(ps, pid, p, &st, false, 0, ctx, w, &p, &moved)) <
	    0) {
		statfd_close(&ps->sf, &sfd);
		return r;
	}
	p->stat_fd = sfd;
	if (threads_wanted(ps, moved))
		return scan_threads(ps, p, ctx, w);
	if (ps->mode == THREADS_CHANGED && ctx->valid)
		threads_unmoved(ps, p);
	return 0;
}

/* The known processes, read without listing /proc (listing_current). */
static int
scan_known(struct procscan *ps, const struct scan_ctx *ctx, struct window *w)
{
	size_t n = 0, i;
	int32_t *ids;
	int r;

	if ((ids = ids_room(&ps->known_pids, ps->procs.n)) == NULL)
		return -ENOMEM;
	for (i = 0; i < ps->procs.nb; i++) {
		struct task *p;

		for (p = ps->procs.b[i]; p; p = p->hnext)
			ids[n++] = p->wt.id;
	}
	for (i = 0; i < n; i++)
		if ((r = scan_one(ps, ids[i], false, ctx, w)) < 0)
			return r;
	return 0;
}

int
scan_procfs(struct procscan *ps, const struct scan_ctx *ctx, struct window *w)
{
	uint32_t unread = ps->unread_procs;
	struct dirent *de;
	int r;

	fork_epoch_update(ps, ctx);
	if (listing_current(ps, ctx, ps->have_listed, ps->list_epoch)) {
		w->health.lists_skipped++;
		return scan_known(ps, ctx, w);
	}
	w->health.lists_read++;
	ps->have_listed = false;
	rewinddir(ps->dir);
	for (;;) {
		uint64_t pid;

		errno = 0;
		if ((de = readdir(ps->dir)) == NULL)
			break;
		if (parse_uint(de->d_name, INT32_MAX, &pid) < 0)
			continue;
		if ((r = scan_one(ps, (int32_t)pid, true, ctx, w)) < 0)
			return r;
	}
	if (errno != 0)
		return -errno;
	/* listed whole: what it named stands until the next fork */
	ps->have_listed = ctx->have_forks && ps->unread_procs == unread;
	ps->list_epoch = ps->fork_epoch;
	return 0;
}

/*
 * The two sources split utime/stime each their own way (the kernel's
 * prev_cputime against the iterator's own): across a change of source every
 * instance's next read is a baseline, never a delta between the two.
 */
void
sources_switched(struct procscan *ps)
{
	size_t i;

	/* the other source's table is no listing of /proc */
	ps->have_listed = false;
	for (i = 0; i < ps->procs.nb; i++) {
		struct task *p, *t;

		for (p = ps->procs.b[i]; p; p = p->hnext) {
			/* what was skipped was skipped while not stale */
			task_settle(ps, p, ps->nprev);
			for (t = p->threads; t; t = t->tnext)
				task_settle(ps, t, ps->nprev);
			p->stale = true;
			p->cpu_set = false;
			p->tasks_listed = false;
			/* kept files serve /proc alone: the other source
			 * has no use for them */
			statfd_close(&ps->sf, &p->stat_fd);
			for (t = p->threads; t; t = t->tnext) {
				t->stale = true;
				t->cpu_set = false;
				statfd_close(&ps->sf, &t->stat_fd);
			}
		}
	}
}

/* Window close: hand over every live instance with activity, then reset. */
int
procscan_flush(struct procscan *ps, struct window *w)
{
	size_t i;
	int r;

	procscan_count_hidden(ps, w);
	w->health.ident_queued += ps->id_queued;
	w->health.ident_done += ps->id_done;
	w->health.ident_full += ps->id_full;
	w->health.ident_stale += ps->id_stale;
	w->health.ident_loop += ps->id_loop;
	w->health.ident_pending = ident_pending(ps);
	ps->id_queued = ps->id_done = ps->id_full = ps->id_stale = 0;
	ps->id_loop = 0;
	for (i = 0; i < ps->procs.nb; i++) {
		struct task *p, *t;

		for (p = ps->procs.b[i]; p; p = p->hnext) {
			task_settle(ps, p, ps->nhist);
			if (task_active(p) && (r = task_emit(w, p)) < 0)
				return r;
			task_reset_acc(p);
			p->mark = 0;
			for (t = p->threads; t; t = t->tnext) {
				task_settle(ps, t, ps->nhist);
				if (task_active(t) && (r = task_emit(w, t)) < 0)
					return r;
				task_reset_acc(t);
				t->mark = 0;
			}
		}
	}
	/* the next window's samples start afresh */
	ps->nhist = ps->nprev = 0;
	return 0;
}
