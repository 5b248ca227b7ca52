/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the working-set monitor opens a target's /proc files and the
 * page_idle bitmap. The kernel checks these files when they are opened,
 * with the opener's credentials (doc/wss.md, Privileges): after the drop
 * to the service user the daemon can no longer open another user's maps,
 * smaps, pagemap or clear_refs, nor see PFNs, nor open the bitmap. With
 * the privileged helper on (privhelper.c) they are opened through it,
 * checked against the target's starttime; without it, directly, and what
 * that costs is said at startup, in Health.wss.access, in each target's
 * files and counted (opens refused).
 *
 * A target's files are opened once and kept: maps and smaps are read
 * again from offset 0 every pass (a seq file starts over there), pagemap
 * is read at offsets, clear_refs written. A helper call is a synchronous
 * round trip that waits up to its timeout when the helper is stuck, so
 * with a loop the helper's opens run on a worker thread of their own and
 * the answer comes back as an event (wss.c); a direct open is a syscall
 * and is made on the spot.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "privs/privs.h"
#include "wss/wss.h"
#include "wss_int.h"

static const char *const wss_files[PH_FILE__MAX] = {
	[PH_FILE_MAPS] = "maps",
	[PH_FILE_SMAPS] = "smaps",
	[PH_FILE_PAGEMAP] = "pagemap",
	[PH_FILE_CLEAR_REFS] = "clear_refs",
};

#define CAP(c) (1ull << (c))

/*
 * Decide (at setup, still privileged) how the monitor will open files
 * after the drop, and say what a drop without the helper loses.
 */
void
wss_access_setup(struct wss *w, const struct wss_opts *o)
{
	struct privhelper *ph = o->helper;
	uint64_t k = o->keep_caps;
	bool pfn, others;

	w->ph = ph;
	if (ph != NULL) {
		w->helper = true;
		snprintf(w->access, sizeof(w->access),
		    "privileged helper "
		    "(pid %d): PFNs and other users' targets readable",
		    (int)privhelper_pid(ph));
	} else if (o->user == NULL) {
		snprintf(w->access, sizeof(w->access),
		    "direct, with the "
		    "daemon's own credentials (uid %u, no drop)",
		    (unsigned)geteuid());
	} else {
		/* what the kernel checks at open (doc/wss.md, Privileges) */
		pfn = (k & CAP(CAP_SYS_ADMIN)) != 0;
		others = (k & CAP(CAP_SYS_PTRACE)) &&
		    (k & CAP(CAP_DAC_READ_SEARCH)) &&
		    (k & CAP(CAP_DAC_OVERRIDE));
		w->weak = !pfn || !others;
		if (!w->weak)
			snprintf(w->access, sizeof(w->access),
			    "direct as "
			    "user %s, keeping CAP_SYS_ADMIN, CAP_SYS_PTRACE "
			    "and CAP_DAC_*",
			    o->user);
		else
			snprintf(w->access, sizeof(w->access),
			    "direct as "
			    "user %s without the privileged helper:%s%s",
			    o->user,
			    pfn ? "" :
				  " page-level unavailable "
				  "(PFNs need CAP_SYS_ADMIN);",
			    others ? "" : " other users' targets unreadable");
	}
	if (w->weak && w->cfg.nrules)
		log_warnx("wss: %u rules configured, but files are opened %s "
			  "(privhelper = on lifts this; doc/privileges.md)",
		    w->cfg.nrules, w->access);
	else
		log_info("wss: files opened %s", w->access);
}

const char *
wss_access(const struct wss *w, uint64_t *ret_denied)
{
	if (ret_denied)
		*ret_denied = w->denied;
	return w->access;
}

uint64_t
wss_helper_errors(const struct wss *w)
{
	return w->helper_errors;
}

/* One file of the target's, directly with the daemon's credentials. */
static int
open_direct(struct target *t, enum privhelper_file which, int *ret_fd)
{
	char path[48];
	int fd, r;

	snprintf(path, sizeof(path), "%d/%s", (int)t->st.pid, wss_files[which]);
	fd = openat(t->w->procfd, path,
	    (which == PH_FILE_CLEAR_REFS ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -EACCES || r == -EPERM)
			t->w->denied++;
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static void
say_direct(struct target *t, int herr)
{
	if (herr)
		snprintf(t->st.files, sizeof(t->st.files),
		    "direct (helper: %s)", strerror(-herr));
	else
		snprintf(t->st.files, sizeof(t->st.files), "direct");
}

/*
 * One of the target's files, opened now: through the helper when there
 * is one and no loop to wait on it for (it checks the starttime after
 * its open: -ESRCH for a reused pid), directly otherwise or when the
 * helper failed. With a loop the helper's opens are asked for with
 * wss_files_ask() instead. t->st.files says which.
 */
static int
wss_open(struct target *t, enum privhelper_file which, int *ret_fd)
{
	struct wss *w = t->w;
	int fd, r, herr = 0;

	if (which >= PH_FILE__MAX)
		return -EINVAL;
	if (w->ph != NULL && w->op == NULL) {
		r = privhelper_open(w->ph, t->st.pid, t->st.starttime, which,
		    &fd);
		if (r == 0) {
			snprintf(t->st.files, sizeof(t->st.files),
			    "privileged helper");
			*ret_fd = fd;
			return 0;
		}
		if (r == -ESRCH || r == -ENOENT)
			return r; /* gone, or another process now */
		herr = r; /* the helper itself failed: direct, said so */
		w->helper_errors++;
	}
	if ((r = open_direct(t, which, &fd)) < 0)
		return r;
	say_direct(t, herr);
	*ret_fd = fd;
	return 0;
}

/* The target's kept descriptor of which, opened now if it has none. */
int
wss_file(struct target *t, enum privhelper_file which, int *ret_fd)
{
	int r;

	if (which >= PH_FILE__MAX)
		return -EINVAL;
	if (t->fd[which] < 0 && (r = wss_open(t, which, &t->fd[which])) < 0) {
		t->fd[which] = -1;
		return r;
	}
	*ret_fd = t->fd[which];
	return 0;
}

/* The whole file, from offset 0 of the kept descriptor. */
int
wss_read(struct target *t, enum privhelper_file which, struct vbuf *b)
{
	int fd, r;

	if ((r = wss_file(t, which, &fd)) < 0)
		return r;
	return read_fd_all(fd, b);
}

void
wss_files_close(struct target *t, unsigned mask)
{
	unsigned i;

	for (i = 0; i < PH_FILE__MAX; i++) {
		if (!(mask & (1u << i)) || t->fd[i] < 0)
			continue;
		close(t->fd[i]);
		t->fd[i] = -1;
	}
}

/* ------------------------------------------------------ the opener */

/*
 * The helper's opens of targets' files, on a thread of their own: the
 * loop queues a request and goes on; the thread makes the calls (each up
 * to the helper's timeout when it is stuck) and puts the answer on a done
 * list, then writes an eventfd the loop watches. The thread is made at
 * the first request, on the loop after the privilege drop, so it never
 * held a privilege and runs under the seccomp filter like the rest.
 */
struct wss_opener {
	struct privhelper *ph;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wss_open_req *todo, **todo_tail; /* under mu */
	struct wss_open_req *done, **done_tail; /* under mu */
	bool stop;				/* under mu */
	bool running;				/* the thread was made */
	pthread_t th;
	int efd;
};

void
wss_open_req_free(struct wss_open_req *a)
{
	unsigned i;

	if (a == NULL)
		return;
	for (i = 0; i < PH_FILE__MAX; i++)
		if (a->fd[i] >= 0)
			close(a->fd[i]);
	free(a);
}

static bool
helper_gone_or_dead(int r)
{
	/* the process is another one now (no point asking for its other
	 * files), or the channel is closed for good */
	return r == -ESRCH || r == -ETIMEDOUT || r == -EPIPE || r == -EPROTO;
}

/* pagemap first: the file a start cannot do without */
static const enum privhelper_file open_order[PH_FILE__MAX] = {
	PH_FILE_PAGEMAP,
	PH_FILE_MAPS,
	PH_FILE_SMAPS,
	PH_FILE_CLEAR_REFS,
};

static void
serve(struct wss_opener *op, struct wss_open_req *a)
{
	unsigned i;
	int r = 0;

	for (i = 0; i < PH_FILE__MAX; i++) {
		enum privhelper_file f = open_order[i];

		if (!(a->mask & (1u << f)))
			continue;
		if (r == 0 || !helper_gone_or_dead(r))
			r = privhelper_open(op->ph, a->pid, a->starttime, f,
			    &a->fd[f]);
		if (r < 0) {
			a->fd[f] = -1;
			a->err[f] = r;
		}
	}
}

static void *
opener_main(void *arg)
{
	struct wss_opener *op = arg;
	struct wss_open_req *a;
	uint64_t one = 1;

	(void)prctl(PR_SET_NAME, "vitalsd-wssopen", 0, 0, 0);
	pthread_mutex_lock(&op->mu);
	for (;;) {
		while (!op->stop && op->todo == NULL)
			pthread_cond_wait(&op->cv, &op->mu);
		if (op->stop)
			break;
		a = op->todo;
		if ((op->todo = a->next) == NULL)
			op->todo_tail = &op->todo;
		pthread_mutex_unlock(&op->mu);
		serve(op, a);
		pthread_mutex_lock(&op->mu);
		a->next = NULL;
		*op->done_tail = a;
		op->done_tail = &a->next;
		/* fails only when the counter would overflow: it is set */
		if (write(op->efd, &one, sizeof(one)) < 0) {
		}
	}
	pthread_mutex_unlock(&op->mu);
	return NULL;
}

int
wss_opener_new(struct privhelper *ph, struct wss_opener **ret)
{
	struct wss_opener *op;

	if ((op = calloc(1, sizeof(*op))) == NULL)
		return -ENOMEM;
	op->ph = ph;
	op->todo_tail = &op->todo;
	op->done_tail = &op->done;
	if ((op->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		int r = -errno;

		free(op);
		return r;
	}
	pthread_mutex_init(&op->mu, NULL);
	pthread_cond_init(&op->cv, NULL);
	*ret = op;
	return 0;
}

static void
free_list(struct wss_open_req *a)
{
	struct wss_open_req *n;

	for (; a; a = n) {
		n = a->next;
		wss_open_req_free(a);
	}
}

/* Stops the thread: a call in progress ends first (at most the helper's
 * timeout; the loop has stopped by then). */
struct wss_opener *
wss_opener_free(struct wss_opener *op)
{
	if (op == NULL)
		return NULL;
	pthread_mutex_lock(&op->mu);
	op->stop = true;
	pthread_cond_signal(&op->cv);
	pthread_mutex_unlock(&op->mu);
	if (op->running)
		pthread_join(op->th, NULL);
	free_list(op->todo);
	free_list(op->done);
	close(op->efd);
	pthread_cond_destroy(&op->cv);
	pthread_mutex_destroy(&op->mu);
	free(op);
	return NULL;
}

int
wss_opener_fd(const struct wss_opener *op)
{
	return op->efd;
}

static int
opener_run(struct wss_opener *op)
{
	sigset_t all, old;
	int r;

	if (op->running)
		return 0;
	/* signals stay the loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&op->th, NULL, opener_main, op);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -r;
	op->running = true;
	return 0;
}

/* The next answer, or NULL; the eventfd is read empty first. */
struct wss_open_req *
wss_opener_take(struct wss_opener *op)
{
	struct wss_open_req *a;
	uint64_t n;

	while (read(op->efd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		;
	pthread_mutex_lock(&op->mu);
	if ((a = op->done) != NULL && (op->done = a->next) == NULL)
		op->done_tail = &op->done;
	pthread_mutex_unlock(&op->mu);
	return a;
}

/*
 * The target's files in mask, from the helper off the loop: 1 when the
 * answer comes later (wss.c installs it with wss_files_install()), 0
 * when there is no opener and they are opened when first used.
 */
int
wss_files_ask(struct target *t, unsigned mask)
{
	struct wss_opener *op = t->w->op;
	struct wss_open_req *a;
	unsigned i;
	int r;

	if (op == NULL)
		return 0;
	if ((r = opener_run(op)) < 0)
		return r;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -ENOMEM;
	a->id = t->id;
	a->pid = t->st.pid;
	a->starttime = t->st.starttime;
	a->mask = mask;
	for (i = 0; i < PH_FILE__MAX; i++)
		a->fd[i] = -1;
	pthread_mutex_lock(&op->mu);
	*op->todo_tail = a;
	op->todo_tail = &a->next;
	pthread_cond_signal(&op->cv);
	pthread_mutex_unlock(&op->mu);
	t->st.opening = true;
	return 1;
}

/*
 * The helper's answer for t: its descriptors replace the target's; a
 * file the helper did not open (it failed, timed out, its channel is
 * closed) is opened directly, said in files and counted. -ESRCH or
 * -ENOENT: the process is gone or another one; another -errno: pagemap
 * could not be opened either way, the target cannot run. Another file
 * that does not exist stays unopened: its reads fail and are counted,
 * as a direct open's would.
 */
int
wss_files_install(struct target *t, struct wss_open_req *a)
{
	unsigned i;
	int herr = 0, pm = 0, r;

	t->st.opening = false;
	for (i = 0; i < PH_FILE__MAX; i++) {
		if (!(a->mask & (1u << i)))
			continue;
		if (a->err[i] == -ESRCH ||
		    (a->err[i] == -ENOENT && i == PH_FILE_PAGEMAP))
			return a->err[i];
	}
	wss_files_close(t, a->mask);
	for (i = 0; i < PH_FILE__MAX; i++) {
		if (!(a->mask & (1u << i)))
			continue;
		if (a->err[i] == 0) {
			t->fd[i] = a->fd[i];
			a->fd[i] = -1;
			continue;
		}
		if (a->err[i] == -ENOENT)
			continue;
		t->w->helper_errors++;
		if (herr == 0)
			herr = a->err[i];
		if ((r = open_direct(t, i, &t->fd[i])) < 0) {
			t->fd[i] = -1;
			if (i == PH_FILE_PAGEMAP)
				pm = r;
		}
	}
	if (herr)
		say_direct(t, herr);
	else
		snprintf(t->st.files, sizeof(t->st.files), "privileged helper");
	return pm;
}

/* The page_idle bitmap (once, at setup): the helper's, else our own. */
int
wss_open_bitmap(struct wss *w, const char *sys_root)
{
	char path[4096];
	int fd;

	/* once, at setup, before the loop runs: a wait here delays none */
	if (w->ph != NULL && privhelper_page_idle(w->ph, &fd) == 0) {
		w->bmfd = fd;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/kernel/mm/page_idle/bitmap", sys_root);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		w->bm_err = -errno;
		if (w->bm_err == -EACCES || w->bm_err == -EPERM)
			w->denied++;
		return w->bm_err;
	}
	w->bmfd = fd;
	return 0;
}
