/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DMA-BUF pass: every process's <proc>/<pid>/fd links, the fdinfo of
 * those that name a DMA-BUF, and per buffer <sys>/kernel/dmabuf/buffers/
 * <inode>/{exporter_name,size} where the kernel has them (5.13+, config
 * DMABUF_SYSFS_STATS). The inode is fdinfo's ino: line (5.14+), else the
 * fd's stat. What the pass could not read is counted, never a zero.
 * Buffers only mapped (in /proc/<pid>/maps, no fd) are not seen: a
 * process that closed its fd after mmap() is not credited (doc/metrics.md).
 *
 * Off the loop (issue 20): a pass reads every process's fd directory
 * (10-12 ms of CPU at 600 processes), so a due close starts it on a
 * worker thread (core/worker.c) and goes on; the loop takes the part when
 * the worker's eventfd says it ended and gives it to the next window that
 * closes. While a pass runs the worker owns db->cfg, the roots, job_wall_ns
 * and job_p; the loop touches only the other fields. A close due while the
 * last pass still runs starts none (passes_overlapped); one that ended
 * but whose eventfd the loop has not read yet is taken at that close. At
 * shutdown (dmabuf_stop) a running pass is waited for and the last
 * close's due pass runs on the loop: the last window has its pass, as
 * when every pass ran on the loop. The thread is made
 * at the first pass, on the loop, after the daemon's privileges are final
 * (it has the loop thread's credentials and capabilities); none can be
 * made: passes run on the loop and fill the closing window, as before.
 *
 * The kernel's list first (issue 20): where the BPF iterator iter/dmabuf
 * loaded at setup (dmabuf_iter.c), a pass starts by reading the kernel's
 * list of every DMA-BUF. An empty list means no process holds one through
 * an fd (an fd holds a reference, so its buffer is on the list): the pass
 * is exact without reading a single fd directory, and costs one iterator
 * read instead of a readlink per fd of every process. Otherwise, or where
 * the iterator is not there (older kernel, no BPF, Android, a fixture
 * root, dmabuf_iter = off), the pass walks /proc as it always did.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/loopstat.h"
#include "core/util.h"
#include "core/worker.h"
#include "dmabuf/dmabuf.h"

struct dmabuf {
	char *proc_root, *sys_root;
	struct dmabuf_config cfg;
	struct dmabuf_iter *it; /* the kernel's list; NULL: not read */
	enum dmabuf_iter_why iter_why;
	bool no_bpf_load; /* dmabuf_opts */
	int64_t last_mono_ns;
	bool ran;
	struct window_dmabuf *last;
	/* the pass on the worker */
	struct event_base *base;
	struct worker *wk;
	struct event *wk_ev;
	bool wk_off;
	int64_t job_wall_ns;	     /* the worker's while busy */
	struct window_dmabuf *job_p; /* the worker's while busy */
	struct window_dmabuf *ready; /* ended, for the next window */
	uint32_t overlapped;	     /* due closes skipped, for ready */
	bool stopping;		     /* the last closes: passes on the loop */
	atomic_bool cancel;	     /* shutdown: the pass stops early */
	atomic_uint test_delay_ms;
};

/* The iterator, where it is to be and can be loaded (a failure leaves the
 * /proc pass, its reason in iter_why). */
static void
iter_setup(struct dmabuf *db)
{
	if (!db->cfg.iter)
		db->iter_why = DMABUF_ITER_WHY_CONFIG;
	/* a fixture tree's processes are not the kernel's, whose list the
	 * iterator reads */
	else if (!is_procfs(-1, db->proc_root))
		db->iter_why = DMABUF_ITER_WHY_ROOT;
	else if (db->no_bpf_load)
		db->iter_why = DMABUF_ITER_WHY_BPF_LOAD;
	else if (dmabuf_iter_open(db->sys_root, &db->it, &db->iter_why) == 0)
		db->iter_why = DMABUF_ITER_WHY_NONE;
	else
		db->it = NULL;
}

enum dmabuf_iter_why
dmabuf_iter_state(const struct dmabuf *db)
{
	return db ? db->iter_why : DMABUF_ITER_WHY_CONFIG;
}

int
dmabuf_new(const struct dmabuf_opts *o, struct dmabuf **ret)
{
	struct dmabuf *db;

	if ((db = calloc(1, sizeof(*db))) == NULL)
		return -ENOMEM;
	db->proc_root = strdup(o->proc_root ? o->proc_root : "/proc");
	db->sys_root = strdup(o->sys_root ? o->sys_root : "/sys");
	db->base = o->base;
	db->no_bpf_load = o->no_bpf_load;
	if (o->cfg)
		db->cfg = *o->cfg;
	else
		dmabuf_config_init(&db->cfg);
	if (db->proc_root == NULL || db->sys_root == NULL) {
		dmabuf_free(db);
		return -ENOMEM;
	}
	iter_setup(db);
	*ret = db;
	return 0;
}

struct dmabuf *
dmabuf_free(struct dmabuf *db)
{
	if (db == NULL)
		return NULL;
	/* a running pass stops at its next process and is waited for */
	atomic_store(&db->cancel, true);
	/* the event before the worker's eventfd it watches */
	if (db->wk_ev)
		event_free(db->wk_ev);
	db->wk = worker_free(db->wk);
	window_dmabuf_free(db->job_p);
	window_dmabuf_free(db->ready);
	window_dmabuf_free(db->last);
	dmabuf_iter_free(db->it);
	free(db->proc_root);
	free(db->sys_root);
	free(db);
	return NULL;
}

const struct window_dmabuf *
dmabuf_last(const struct dmabuf *db)
{
	return db ? db->last : NULL;
}

struct pass {
	struct window_dmabuf c; /* the counters */
	struct dmabuf_hold *h;
	size_t n, cap;
	uint64_t budget;
	struct vbuf b;
};

static int
hold_add(struct pass *ps, const struct dmabuf_hold *h)
{
	struct dmabuf_hold *v;

	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? ps->cap * 2 : 64;

		if ((v = realloc(ps->h, nc * sizeof(*v))) == NULL)
			return -ENOMEM;
		ps->h = v;
		ps->cap = nc;
	}
	ps->h[ps->n++] = *h;
	return 0;
}

static void
read_comm(int pd, char *out, size_t sz, struct vbuf *b)
{
	vbuf_reset(b);
	out[0] = '\0';
	if (read_at(pd, "comm", b) < 0 || b->len == 0)
		return;
	if (b->p[b->len - 1] == '\n')
		b->len--;
	/* name_clean's output is never longer than its input */
	name_clean(out, b->p, b->len < sz ? b->len : sz - 1);
}

/* The open of <pid> or of a file under it failed: gone or unreadable. */
static void
proc_failed(struct pass *ps)
{
	if (errno == ENOENT || errno == ESRCH)
		ps->c.procs_gone++;
	else
		ps->c.procs_unreadable++;
}

/*
 * One process's fds; -ENOMEM alone stops the pass. Everything is read
 * through one <pid> directory fd (relative to the /proc root): a pid that
 * exits and is reused after the open makes the later opens fail rather
 * than read another process's fdinfo or comm. Its fd directory is opened
 * at once, fdinfo and comm only at its first DMA-BUF, so the processes
 * that hold none — nearly all — cost two opens, the directory read and a
 * readlink per fd.
 */
static int
read_proc(struct pass *ps, int root, int32_t pid)
{
	struct dmabuf_hold h = { .pid = pid };
	struct dmabuf_fdinfo fi;
	struct dirent *de;
	struct stat st;
	char link[64], path[16];
	int pd, fd, infod = -1;
	bool infod_tried = false;
	DIR *d;
	ssize_t l;
	int r = 0;

	snprintf(path, sizeof(path), "%d", (int)pid);
	if ((pd = openat(root, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		proc_failed(ps);
		return 0;
	}
	if ((fd = openat(pd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		proc_failed(ps);
		close(pd);
		return 0;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		close(pd);
		ps->c.procs_unreadable++;
		return 0;
	}
	ps->c.procs_scanned++;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		ps->c.fds_read++;
		if (ps->budget)
			ps->budget--;
		l = readlinkat(fd, de->d_name, link, sizeof(link) - 1);
		if (l < 0 || !dmabuf_link_is(link, (size_t)l))
			continue;
		ps->c.fds_dmabuf++;
		if (!infod_tried) {
			infod_tried = true;
			infod = openat(pd, "fdinfo",
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		vbuf_reset(&ps->b);
		if (infod < 0 || read_at(infod, de->d_name, &ps->b) < 0 ||
		    dmabuf_parse_fdinfo(ps->b.p ? ps->b.p : "", ps->b.len,
			&fi) < 0) {
			ps->c.fdinfo_invalid++;
			continue;
		}
		h.ino = fi.ino;
		if (!(fi.have & DMABUF_FDI_INO)) {
			/* stat follows the link to the buffer's own inode */
			if (fstatat(fd, de->d_name, &st, 0) < 0) {
				ps->c.fdinfo_invalid++;
				continue;
			}
			h.ino = (uint64_t)st.st_ino;
		}
		h.size = fi.size;
		snprintf(h.exp, sizeof(h.exp), "%s", fi.exp_name);
		if (h.comm[0] == '\0')
			read_comm(pd, h.comm, sizeof(h.comm), &ps->b);
		if ((r = hold_add(ps, &h)) < 0)
			break;
	}
	if (infod >= 0)
		close(infod);
	closedir(d);
	close(pd);
	return r;
}

static int
cmp_ino(const void *a, const void *b)
{
	const struct dmabuf_hold *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Each buffer's sysfs entry, once per inode: the exporter where fdinfo
 * had none, and whether the sizes agree. */
static void
read_sysfs(struct dmabuf *db, struct pass *ps)
{
	char path[PATH_MAX], name[DMABUF_NAME_LEN];
	uint64_t size;
	size_t i, j, k;
	int dir;

	snprintf(path, sizeof(path), "%s/kernel/dmabuf/buffers", db->sys_root);
	if ((dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (ps->n > 1)
		qsort(ps->h, ps->n, sizeof(*ps->h), cmp_ino);
	for (i = 0; i < ps->n; i = j) {
		for (j = i + 1; j < ps->n && ps->h[j].ino == ps->h[i].ino; j++)
			;
		snprintf(path, sizeof(path), "%llu/size",
		    (unsigned long long)ps->h[i].ino);
		vbuf_reset(&ps->b);
		if (read_at(dir, path, &ps->b) < 0)
			continue;
		ps->c.sysfs_found++;
		if (dmabuf_parse_u64(ps->b.p, ps->b.len, &size) == 0 &&
		    size != ps->h[i].size)
			ps->c.size_mismatch++;
		snprintf(path, sizeof(path), "%llu/exporter_name",
		    (unsigned long long)ps->h[i].ino);
		vbuf_reset(&ps->b);
		if (ps->h[i].exp[0] || read_at(dir, path, &ps->b) < 0 ||
		    dmabuf_parse_name(ps->b.p, ps->b.len, name, sizeof(name)) <
			0)
			continue;
		for (k = i; k < j; k++)
			snprintf(ps->h[k].exp, sizeof(ps->h[k].exp), "%s",
			    name);
	}
	close(dir);
}

static bool
is_pid(const char *s, int32_t *ret)
{
	uint64_t v;

	if (parse_uint(s, INT32_MAX, &v) < 0 || v == 0)
		return false;
	*ret = (int32_t)v;
	return true;
}

/* the test hook: a slower pass (cancel ends the wait) */
static void
test_delay(struct dmabuf *db)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) +
	    (int64_t)atomic_load(&db->test_delay_ms) * 1000000LL;
	struct timespec ts = { 0, 2000000 };

	while (clock_ns(CLOCK_MONOTONIC) < end && !atomic_load(&db->cancel))
		nanosleep(&ts, NULL);
}

int
dmabuf_pass(struct dmabuf *db, int64_t wall_ns, struct window_dmabuf **ret)
{
	struct pass ps = { .budget = db->cfg.fd_budget };
	struct window_dmabuf *p = NULL;
	struct dirent *de;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), dt;
	int32_t pid;
	int root, r = 0;
	DIR *d;

	test_delay(db);
	if (atomic_load(&db->cancel))
		return -ECANCELED;
	if (db->it != NULL) {
		if (dmabuf_iter_count(db->it, &ps.c.kernel_buffers,
			&ps.c.kernel_bytes) == 0) {
			ps.c.kernel_passes = 1;
			/* no buffer in the kernel: none in any process */
			if (ps.c.kernel_buffers == 0) {
				ps.c.passes_no_buffer = 1;
				r = dmabuf_tally(NULL, 0, 1, &p);
				goto out;
			}
		} else {
			ps.c.iter_errors = 1;
		}
	}
	if ((root = open(db->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
	    0)
		return -errno;
	if ((d = fdopendir(root)) == NULL) {
		r = -errno;
		close(root);
		return r;
	}
	while ((de = readdir(d)) != NULL) {
		if (!is_pid(de->d_name, &pid))
			continue;
		if (atomic_load_explicit(&db->cancel, memory_order_relaxed)) {
			r = -ECANCELED;
			break;
		}
		if (db->cfg.fd_budget && ps.budget == 0) {
			ps.c.procs_skipped++;
			continue;
		}
		r = read_proc(&ps, root, pid);
		if (r < 0)
			break;
	}
	closedir(d);
	if (r == 0) {
		read_sysfs(db, &ps);
		r = dmabuf_tally(ps.h, ps.n,
		    db->cfg.procs_max ? db->cfg.procs_max :
					DMABUF_PROCS_DEFAULT,
		    &p);
	}
out:
	free(ps.h);
	vbuf_release(&ps.b);
	if (r < 0)
		return r;
	dt = clock_ns(CLOCK_MONOTONIC) - t0;
	p->pass_wall_ns = wall_ns;
	p->procs_scanned = ps.c.procs_scanned;
	p->procs_skipped = ps.c.procs_skipped;
	p->procs_unreadable = ps.c.procs_unreadable;
	p->procs_gone = ps.c.procs_gone;
	p->fds_read = ps.c.fds_read;
	p->fds_dmabuf = ps.c.fds_dmabuf;
	p->fdinfo_invalid = ps.c.fdinfo_invalid;
	p->sysfs_found = ps.c.sysfs_found;
	p->size_mismatch = ps.c.size_mismatch;
	p->kernel_passes = ps.c.kernel_passes;
	p->passes_no_buffer = ps.c.passes_no_buffer;
	p->iter_errors = ps.c.iter_errors;
	p->kernel_buffers = ps.c.kernel_buffers;
	p->kernel_bytes = ps.c.kernel_bytes;
	p->iter_why = (uint32_t)db->iter_why;
	p->pass_ns_sum = p->pass_ns_max = dt > 0 ? (uint64_t)dt : 0;
	*ret = p;
	return 0;
}

/* A pass's part (the loop's): the live copy, and the next window's. */
static int
take(struct dmabuf *db, struct window_dmabuf *p)
{
	struct window_dmabuf *c;
	int r;

	if ((c = window_dmabuf_dup(p)) == NULL) {
		window_dmabuf_free(p);
		return -ENOMEM;
	}
	window_dmabuf_free(db->last);
	db->last = c;
	/* never two: a pass starts only at a close, which took the last */
	r = window_dmabuf_merge(&db->ready, p);
	window_dmabuf_free(p);
	return r;
}

static int
pass_job(void *arg)
{
	struct dmabuf *db = arg;

	return dmabuf_pass(db, db->job_wall_ns, &db->job_p);
}

/* The worker's pass, once it ended (wait: until it does), to ready. */
static void
collect(struct dmabuf *db, bool wait)
{
	struct window_dmabuf *p;
	int r;

	if (db->wk == NULL || worker_done(db->wk, wait, &r) <= 0)
		return;
	p = db->job_p;
	db->job_p = NULL;
	if (r == 0)
		r = take(db, p);
	if (r < 0 && r != -ECANCELED)
		log_warnx("dmabuf: pass: %s", strerror(-r));
}

static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dmabuf *db = arg;
	int64_t t0 = loopstat_begin();

	(void)fd;
	(void)what;
	collect(db, false);
	loopstat_end("dmabuf pass done", t0);
}

static bool
ready(struct dmabuf *db)
{
	int r = 0;

	if (db->wk)
		return true;
	if (db->wk_off || db->base == NULL)
		return false;
	if ((r = worker_new(&db->wk)) < 0 ||
	    (db->wk_ev = event_new(db->base, worker_fd(db->wk),
		 EV_READ | EV_PERSIST, done_cb, db)) == NULL ||
	    event_add(db->wk_ev, NULL) < 0) {
		log_warnx("dmabuf: passes stay on the loop: %s",
		    strerror(r < 0 ? -r : ENOMEM));
		if (db->wk_ev)
			event_free(db->wk_ev);
		db->wk_ev = NULL;
		db->wk = worker_free(db->wk);
		db->wk_off = true;
		return false;
	}
	return true;
}

/* The part of the last pass that ended since the last close, to w. */
static void
give(struct dmabuf *db, struct window *w)
{
	struct window_dmabuf *p = db->ready;

	if (p == NULL)
		return;
	db->ready = NULL;
	p->passes_overlapped += db->overlapped;
	db->overlapped = 0;
	window_dmabuf_free(window_dmabuf(w));
	window_part_set(w, WPART_DMABUF, p);
}

int
dmabuf_window(struct dmabuf *db, struct window *w, int64_t mono_ns)
{
	struct window_dmabuf *p;
	int r = 0;

	if (db == NULL || !db->cfg.on)
		return 0;
	/* a pass that ended on the worker, its eventfd not yet seen by the
	 * loop: not busy any more (stopping: waited for) */
	collect(db, db->stopping);
	if (db->ran &&
	    mono_ns - db->last_mono_ns <
		(int64_t)db->cfg.interval_s * 1000000000LL)
		goto out;
	if (worker_busy(db->wk)) {
		/* still running: not started twice, due again next close */
		db->overlapped++;
		goto out;
	}
	db->ran = true;
	db->last_mono_ns = mono_ns;
	if (!db->stopping && ready(db)) {
		db->job_wall_ns = w->wall_end_ns;
		db->job_p = NULL;
		if ((r = worker_start(db->wk, pass_job, db)) == 0)
			goto out;
	}
	/* no worker, or the last closes (a pass started now would be
	 * cancelled): the pass on the loop, its part to w */
	if ((r = dmabuf_pass(db, w->wall_end_ns, &p)) < 0 ||
	    (r = take(db, p)) < 0)
		return r;
out:
	/* the passes that ended since the last close, this one's too */
	give(db, w);
	return 0;
}

bool
dmabuf_busy(const struct dmabuf *db)
{
	return db != NULL && worker_busy(db->wk);
}

void
dmabuf_settle(struct dmabuf *db)
{
	if (db != NULL && worker_busy(db->wk))
		collect(db, true);
}

void
dmabuf_stop(struct dmabuf *db)
{
	if (db == NULL)
		return;
	dmabuf_settle(db);
	db->stopping = true;
}

void
dmabuf_test_no_worker(struct dmabuf *db)
{
	db->wk_off = true;
}

void
dmabuf_test_delay(struct dmabuf *db, unsigned ms)
{
	atomic_store(&db->test_delay_ms, ms);
}
