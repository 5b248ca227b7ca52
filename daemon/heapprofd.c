/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd sessions: a request (a trusted caller's, or a rule's at window
 * close) is checked — parameters, one session at a time, eligibility by
 * the platform's rules, budgets — then recorded, and the perfetto binary
 * runs as `perfetto -c - -o -`: the config on its stdin (a pipe), the trace
 * file and the log, opened here, as stdout and stderr. Under the daemon's
 * seccomp filter (no fork, no execve) the privileged helper's spawner runs
 * it and reports on a channel the loop watches; otherwise the daemon forks
 * it and watches a pidfd. Either way: a timeout (SIGTERM, then SIGKILL),
 * cancellation, exit status and output size into the record. A session a
 * restart finds "running" is closed with what happened. doc/heapprofd.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "vitalsd.h"

#define HP_FIRES_MAX 16

enum stop_why { STOP_NONE, STOP_TIMEOUT, STOP_CANCEL, STOP_DAEMON };

struct heapprofd {
	struct event_base *base;
	struct store *store;
	const struct hp_settings *hs;
	struct hp_elig_policy policy; /* hs->policy, the build type found */
	char *state_dir;
	int procfd;
	unsigned page_size;
	struct hp_rules *rules;
	struct hp_stats st;
	int (*gpu_bytes)(void *arg, const struct window *w, int32_t pid,
	    uint64_t starttime, uint64_t *bytes);
	void *gpu_arg;
	/* the running session */
	bool running;
	struct hp_record rec;
	pid_t child;
	int pidfd;
	struct event *ev_child, *ev_timer;
	enum stop_why stop;
	bool term_sent;
	/* through the spawner (privhelper_spawn.c) */
	struct ph_spawner *sp;
	struct event *ev_spawn;
	uint64_t session;  /* the spawn request's number */
	bool started;	   /* its answer came: child is known */
	int pending_sig;   /* asked for before the answer came */
};

static int64_t
wall_now(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* ------------------------------------------------------------ /proc */

static int
proc_name(struct heapprofd *hp, int32_t pid, char *buf, size_t sz)
{
	struct vbuf b = { 0 };
	char path[32];
	int r;

	snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
	if ((r = read_at(hp->procfd, path, &b)) == 0)
		r = hp_normalize(b.p, b.len, buf, sz);
	vbuf_release(&b);
	return r;
}

static int
proc_status(struct heapprofd *hp, int32_t pid, struct pid_status *ret)
{
	struct vbuf b = { 0 };
	char path[32];
	int r;

	snprintf(path, sizeof(path), "%d/status", (int)pid);
	if ((r = read_at(hp->procfd, path, &b)) == 0)
		r = pidstatus_parse(b.p, b.len, ret);
	vbuf_release(&b);
	return r;
}

static int
proc_starttime(struct heapprofd *hp, int32_t pid, uint64_t *ret)
{
	struct vbuf b = { 0 };
	struct pid_stat ps;
	char path[32];
	int r;

	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	if ((r = read_at(hp->procfd, path, &b)) == 0 &&
	    (r = pidstat_parse(b.p, b.len, &ps)) == 0)
		*ret = ps.starttime;
	vbuf_release(&b);
	return r;
}

static int
eval_name_cb(void *arg, int32_t pid, char *buf, size_t sz)
{
	return proc_name(arg, pid, buf, sz);
}

static int
eval_anon_cb(void *arg, int32_t pid, uint64_t starttime, uint64_t *kb)
{
	struct heapprofd *hp = arg;
	struct pid_status s;
	uint64_t st;
	int r;

	if ((r = proc_starttime(hp, pid, &st)) < 0)
		return r;
	if (st != starttime)
		return -ESRCH;
	if ((r = proc_status(hp, pid, &s)) < 0)
		return r;
	if (s.rss_anon_kb < 0)
		return -ENODATA;
	*kb = (uint64_t)s.rss_anon_kb;
	return 0;
}

static int
eval_gpu_cb(void *arg, const struct window *w, int32_t pid,
    uint64_t starttime, uint64_t *bytes)
{
	struct heapprofd *hp = arg;

	if (hp->gpu_bytes == NULL)
		return -ENOENT;
	return hp->gpu_bytes(hp->gpu_arg, w, pid, starttime, bytes);
}

/*
 * Calls fn for every numeric entry of the proc root until it returns
 * non-zero (which is returned; 0 at the end).
 */
static int
proc_each(struct heapprofd *hp, int (*fn)(struct heapprofd *hp,
    int32_t pid, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if ((fd = openat(hp->procfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0 || pid > INT32_MAX)
			continue;
		r = fn(hp, (int32_t)pid, arg);
	}
	closedir(d);
	return r;
}

struct find {
	const char *name;     /* by name: heapprofd's normalised name */
	uint32_t uid;	      /* by uid: effective */
	uint32_t *uids;	      /* by name: the matches' uids */
	int32_t *pids;	      /* by uid: the matches */
	unsigned max, n;
};

static int
find_name_cb(struct heapprofd *hp, int32_t pid, void *arg)
{
	struct find *f = arg;
	struct pid_status s;
	char n[HP_NAME_MAX];

	if (proc_name(hp, pid, n, sizeof(n)) < 0 || strcmp(n, f->name) != 0 ||
	    proc_status(hp, pid, &s) < 0)
		return 0;
	if (f->n < f->max)
		f->uids[f->n] = s.euid;
	f->n++;
	return 0;
}

/* Every process whose normalised name is name: their effective uids. */
static int
find_by_name(struct heapprofd *hp, const char *name, uint32_t *uids,
    unsigned max, unsigned *ret_n)
{
	struct find f = { .name = name, .uids = uids, .max = max };
	int r;

	if ((r = proc_each(hp, find_name_cb, &f)) < 0)
		return r;
	*ret_n = f.n < max ? f.n : max;
	return 0;
}

static int
find_uid_cb(struct heapprofd *hp, int32_t pid, void *arg)
{
	struct find *f = arg;
	struct pid_status s;

	/* kernel threads have no memory */
	if (proc_status(hp, pid, &s) < 0 || s.euid != f->uid ||
	    s.vm_rss_kb < 0)
		return 0;
	f->pids[f->n++] = pid;
	return f->n == f->max; /* full: stop */
}

/* Every process of uid (effective), at most max of them. */
static int
find_by_uid(struct heapprofd *hp, uint32_t uid, int32_t *pids, unsigned max,
    unsigned *ret_n)
{
	struct find f = { .uid = uid, .pids = pids, .max = max };
	int r;

	if (max == 0 || (r = proc_each(hp, find_uid_cb, &f)) < 0) {
		*ret_n = 0;
		return max == 0 ? 0 : r;
	}
	*ret_n = f.n;
	return 0;
}

/* ------------------------------------------------------------ records */

static void
params_line(const struct hp_params *p, char *buf, size_t sz)
{
	struct vbuf b = { 0 };
	unsigned i;

	vbuf_printf(&b, "duration_ms=%u sampling_interval_bytes=%llu "
	    "shmem_size_bytes=%llu dump_interval_ms=%u block_client=%s",
	    p->duration_ms, (unsigned long long)p->sampling_interval_bytes,
	    (unsigned long long)p->shmem_size_bytes, p->dump_interval_ms,
	    p->block_client ? "on" : "off");
	if (p->max_heapprofd_memory_kb)
		vbuf_printf(&b, " max_heapprofd_memory_kb=%u",
		    p->max_heapprofd_memory_kb);
	if (p->max_heapprofd_cpu_secs)
		vbuf_printf(&b, " max_heapprofd_cpu_secs=%llu",
		    (unsigned long long)p->max_heapprofd_cpu_secs);
	for (i = 0; i < p->ninstalled_by; i++)
		vbuf_printf(&b, " target_installed_by=%s",
		    p->installed_by[i]);
	snprintf(buf, sz, "%s", b.p ? b.p : "");
	vbuf_release(&b);
}

static void
note_store_error(struct heapprofd *hp, int r, const char *what)
{
	hp->st.store_errors++;
	log_warnx("heapprofd: %s: %s", what, strerror(-r));
}

static void
file_size(const char *path, int64_t *ret)
{
	struct stat sb;

	*ret = stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* ------------------------------------------------------------ child */

static void
session_end(struct heapprofd *hp, int status, const char *lost)
{
	struct hp_record *r = &hp->rec;
	int e;

	r->end_wall_ns = wall_now();
	if (lost) {
		r->exit_status = -1;
		r->term_signal = 0;
	} else if (WIFEXITED(status)) {
		r->exit_status = WEXITSTATUS(status);
		r->term_signal = 0;
	} else if (WIFSIGNALED(status)) {
		r->exit_status = -1;
		r->term_signal = WTERMSIG(status);
	}
	file_size(r->output_path, &r->output_bytes);
	if (lost) {
		snprintf(r->outcome, sizeof(r->outcome), "%s",
		    hp->stop == STOP_DAEMON ? "daemon stopped" : "failed");
		snprintf(r->message, sizeof(r->message), "%s", lost);
		if (hp->stop != STOP_DAEMON)
			hp->st.failed++;
	} else if (hp->stop == STOP_DAEMON) {
		snprintf(r->outcome, sizeof(r->outcome), "daemon stopped");
	} else if (hp->stop == STOP_CANCEL) {
		snprintf(r->outcome, sizeof(r->outcome), "cancelled");
		hp->st.cancelled++;
	} else if (hp->stop == STOP_TIMEOUT) {
		snprintf(r->outcome, sizeof(r->outcome), "timeout");
		hp->st.timeouts++;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		snprintf(r->outcome, sizeof(r->outcome), "completed");
		hp->st.completed++;
	} else {
		snprintf(r->outcome, sizeof(r->outcome), "failed");
		hp->st.failed++;
	}
	if ((e = store_hp_update(hp->store, r)) < 0)
		note_store_error(hp, e, "session end not recorded");
	log_info("heapprofd: session %lld %s (exit %d, signal %d, %lld "
	    "bytes in %s)", (long long)r->id, r->outcome, r->exit_status,
	    r->term_signal, (long long)r->output_bytes, r->output_path);
	if (hp->ev_child)
		event_free(hp->ev_child);
	if (hp->ev_timer)
		event_free(hp->ev_timer);
	hp->ev_child = hp->ev_timer = NULL;
	if (hp->pidfd >= 0)
		close(hp->pidfd);
	hp->pidfd = -1;
	hp->child = 0;
	hp->started = false;
	hp->pending_sig = 0;
	hp->running = false;
	hp->st.running = false;
	hp->st.running_id = 0;
}

static void
child_cb(evutil_socket_t fd, short what, void *arg)
{
	struct heapprofd *hp = arg;
	int status;
	pid_t p;

	(void)fd;
	(void)what;
	if (!hp->running)
		return;
	p = waitpid(hp->child, &status, WNOHANG);
	if (p == 0)
		return; /* spurious: the pidfd stays armed (EV_PERSIST) */
	if (p < 0)
		status = 0x7f00; /* reaped elsewhere: say "failed" */
	session_end(hp, status, NULL);
}

static void
arm_timer(struct heapprofd *hp, uint32_t ms)
{
	struct timeval tv = { ms / 1000, (long)(ms % 1000) * 1000 };

	event_add(hp->ev_timer, &tv);
}

/* SIGTERM or SIGKILL to perfetto: ours to send, or the spawner's (the
 * daemon's filter allows kill with signal 0 only). */
static void
child_signal(struct heapprofd *hp, int sig)
{
	int r;

	if (hp->sp == NULL) {
		kill(hp->child, sig);
		return;
	}
	if (!hp->started) {
		hp->pending_sig = sig; /* sent when the pid is known */
		return;
	}
	if ((r = privhelper_spawn_signal(hp->sp, hp->session, sig)) < 0)
		/* the channel is closed: the spawn callback ends the
		 * session when the loop gets there */
		event_active(hp->ev_spawn, EV_READ, 0);
}

/* First SIGTERM (perfetto stops and writes its file), then SIGKILL. */
static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct heapprofd *hp = arg;

	(void)fd;
	(void)what;
	if (!hp->running)
		return;
	if (!hp->term_sent) {
		if (hp->stop == STOP_NONE)
			hp->stop = STOP_TIMEOUT;
		hp->term_sent = true;
		arm_timer(hp, hp->hs->kill_after_ms);
		child_signal(hp, SIGTERM);
		return;
	}
	log_warnx("heapprofd: session %lld: perfetto (pid %d) ignored "
	    "SIGTERM for %u ms: SIGKILL", (long long)hp->rec.id,
	    (int)hp->child, hp->hs->kill_after_ms);
	child_signal(hp, SIGKILL);
}

/* Made at setup; the filter refuses mkdir, so look before asking. */
static int
mkdir_one(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	return mkdir(path, 0750) < 0 && errno != EEXIST ? -errno : 0;
}

/* The session's fds: the config in a pipe, the trace and the log files. */
struct spawn_fds {
	int in, out, log;
};

static void
spawn_fds_close(struct spawn_fds *f)
{
	if (f->in >= 0)
		close(f->in);
	if (f->out >= 0)
		close(f->out);
	if (f->log >= 0)
		close(f->log);
	f->in = f->out = f->log = -1;
}

static int
spawn_files(struct heapprofd *hp, const uint8_t *cfg, size_t len,
    struct spawn_fds *f, char *why, size_t whysz)
{
	const int fl = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW;
	struct hp_record *r = &hp->rec;
	char dir[512], logp[600];
	int in[2], e;
	ssize_t w;
	size_t off = 0;

	f->in = f->out = f->log = -1;
	if (snprintf(dir, sizeof(dir), "%s/heapprofd", hp->state_dir) >=
	    (int)sizeof(dir) - 40)
		return snprintf(why, whysz, "state directory path too long"),
		    -ENAMETOOLONG;
	if ((e = mkdir_one(dir)) < 0)
		return snprintf(why, whysz, "%.120s: %s", dir, strerror(-e)),
		    e;
	if (snprintf(r->output_path, sizeof(r->output_path),
	    "%s/session-%lld.pftrace", dir, (long long)r->id) >=
	    (int)sizeof(r->output_path) ||
	    snprintf(logp, sizeof(logp), "%s/session-%lld.log", dir,
	    (long long)r->id) >= (int)sizeof(logp))
		return snprintf(why, whysz, "output path too long"),
		    -ENAMETOOLONG;
	/* perfetto writes the trace to its stdout (-o -): the file is
	 * opened here, in the daemon's directory, with the daemon's rights */
	if ((f->out = open(r->output_path, fl, 0640)) < 0 ||
	    (f->log = open(logp, fl, 0640)) < 0) {
		e = -errno;
		spawn_fds_close(f);
		return snprintf(why, whysz, "%.160s: %s", f->out < 0 ?
		    r->output_path : logp, strerror(-e)), e;
	}
	if (pipe2(in, O_CLOEXEC) < 0) {
		e = -errno;
		spawn_fds_close(f);
		return snprintf(why, whysz, "pipe: %s", strerror(-e)), e;
	}
	/* The whole config goes in before perfetto exists (it is a few
	 * kB at most): the loop never waits on the pipe. */
	(void)fcntl(in[1], F_SETPIPE_SZ, 65536);
	(void)fcntl(in[1], F_SETFL, O_NONBLOCK);
	while (off < len) {
		w = write(in[1], cfg + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(in[1]);
	f->in = in[0];
	if (off < len) {
		spawn_fds_close(f);
		return snprintf(why, whysz, "the config (%zu bytes) does not "
		    "fit the pipe", len), -EMSGSIZE;
	}
	return 0;
}

/* seccomp off or log: the daemon forks perfetto and watches a pidfd. */
static int
spawn_direct(struct heapprofd *hp, struct spawn_fds *f, char *why,
    size_t whysz)
{
	struct hp_record *r = &hp->rec;
	pid_t pid;
	int e;

	if ((pid = fork()) < 0) {
		e = -errno;
		return snprintf(why, whysz, "fork: %s", strerror(-e)), e;
	}
	if (pid == 0) {
		sigset_t all;

		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (dup2(f->in, 0) < 0 || dup2(f->out, 1) < 0 ||
		    dup2(f->log, 2) < 0)
			_exit(126);
		close_range(3, ~0U, 0);
		execl(hp->hs->perfetto, "perfetto", "-c", "-", "-o", "-",
		    (char *)NULL);
		_exit(127);
	}
	hp->child = pid;
	r->child_pid = pid;
	(void)proc_starttime(hp, pid, &r->child_starttime);
	hp->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (hp->pidfd < 0) {
		e = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return snprintf(why, whysz, "pidfd_open: %s", strerror(-e)),
		    e;
	}
	hp->ev_child = event_new(hp->base, hp->pidfd, EV_READ | EV_PERSIST,
	    child_cb, hp);
	if (hp->ev_child == NULL ||
	    event_priority_set(hp->ev_child, 1) < 0 ||
	    event_add(hp->ev_child, NULL) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return snprintf(why, whysz, "out of memory"), -ENOMEM;
	}
	return 0;
}

/* seccomp on: the spawner runs it; its answer comes to spawn_cb. The
 * spawner's own SIGKILL is a backstop for a daemon that stopped asking. */
static int
spawn_helper(struct heapprofd *hp, const struct hp_params *p,
    struct spawn_fds *f, char *why, size_t whysz)
{
	uint64_t t = (uint64_t)p->duration_ms + hp->hs->grace_ms +
	    hp->hs->kill_after_ms + 10000;
	int e;

	if (t > 25ull * 3600 * 1000)
		t = 25ull * 3600 * 1000;
	if ((e = privhelper_spawn_request(hp->sp, f->in, f->out, f->log,
	    (uint32_t)t, &hp->session)) < 0)
		return snprintf(why, whysz, "spawn helper: %s", strerror(-e)),
		    e;
	hp->started = false;
	hp->pending_sig = 0;
	return 0;
}

static int
spawn(struct heapprofd *hp, const struct hp_params *p, const uint8_t *cfg,
    size_t len, char *why, size_t whysz)
{
	struct spawn_fds f;
	int e;

	if ((e = spawn_files(hp, cfg, len, &f, why, whysz)) < 0)
		return e;
	hp->ev_timer = event_new(hp->base, -1, 0, timer_cb, hp);
	if (hp->ev_timer == NULL || event_priority_set(hp->ev_timer, 1) < 0) {
		spawn_fds_close(&f);
		return snprintf(why, whysz, "out of memory"), -ENOMEM;
	}
	e = hp->sp ? spawn_helper(hp, p, &f, why, whysz) :
	    spawn_direct(hp, &f, why, whysz);
	/* the child (or the spawner) holds its copies */
	spawn_fds_close(&f);
	if (e < 0)
		return e;
	hp->stop = STOP_NONE;
	hp->term_sent = false;
	return 0;
}

/* The spawner's channel closed: no session can run any more. */
static void
spawn_lost(struct heapprofd *hp, int r)
{
	char msg[200];

	event_del(hp->ev_spawn);
	hp->st.spawn = HP_SPAWN_LOST;
	snprintf(hp->st.spawn_detail, sizeof(hp->st.spawn_detail),
	    "the spawn helper's channel closed: %s", strerror(-r));
	log_warnx("heapprofd: %s; sessions are refused from now on",
	    hp->st.spawn_detail);
	if (!hp->running)
		return;
	snprintf(msg, sizeof(msg), "%s; perfetto's end is unknown",
	    hp->st.spawn_detail);
	session_end(hp, 0, msg);
}

static void
spawn_started(struct heapprofd *hp, const struct ph_spawn_event *ev)
{
	struct hp_record *r = &hp->rec;
	int e;

	if (ev->err < 0) {
		hp->st.started--; /* it was counted at the request */
		hp->st.spawn_failed++;
		snprintf(r->message, sizeof(r->message), "perfetto did not "
		    "start: spawn helper: %s", strerror(-ev->err));
		r->end_wall_ns = wall_now();
		snprintf(r->outcome, sizeof(r->outcome), "spawn failed");
		if ((e = store_hp_update(hp->store, r)) < 0)
			note_store_error(hp, e, "spawn failure not recorded");
		log_warnx("heapprofd: session %lld: %s", (long long)r->id,
		    r->message);
		if (hp->ev_timer)
			event_free(hp->ev_timer);
		hp->ev_timer = NULL;
		hp->running = false;
		hp->st.running = false;
		hp->st.running_id = 0;
		return;
	}
	hp->started = true;
	hp->child = ev->pid;
	r->child_pid = ev->pid;
	(void)proc_starttime(hp, ev->pid, &r->child_starttime);
	if ((e = store_hp_update(hp->store, r)) < 0)
		note_store_error(hp, e, "child pid not recorded");
	log_info("heapprofd: session %lld: perfetto pid %d (spawn helper)",
	    (long long)r->id, (int)ev->pid);
	if (hp->pending_sig)
		child_signal(hp, hp->pending_sig);
	hp->pending_sig = 0;
}

static void
spawn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct heapprofd *hp = arg;
	struct ph_spawn_event ev;
	int r;

	(void)fd;
	(void)what;
	for (;;) {
		if ((r = privhelper_spawn_read(hp->sp, &ev)) == -EAGAIN)
			return;
		if (r < 0) {
			spawn_lost(hp, r);
			return;
		}
		if (ev.kind == PH_SPAWN_ANSWER) {
			if (ev.err < 0 && ev.err != -ESRCH)
				log_warnx("heapprofd: spawn helper refused a "
				    "signal: %s", strerror(-ev.err));
			continue;
		}
		/* answers about an earlier session: it was closed already */
		if (!hp->running || ev.seq != hp->session)
			continue;
		if (ev.kind == PH_SPAWN_STARTED) {
			spawn_started(hp, &ev);
		} else {
			if ((ev.flags & PH_SPAWN_BACKSTOP) &&
			    hp->stop == STOP_NONE)
				hp->stop = STOP_TIMEOUT;
			session_end(hp, ev.status, NULL);
		}
	}
}

/* ------------------------------------------------------------ requests */

static enum hp_refusal
refuse(struct hp_answer *ret, enum hp_refusal r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum hp_refusal
refuse(struct hp_answer *ret, enum hp_refusal r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ret->message, sizeof(ret->message), fmt, ap);
	va_end(ap);
	ret->refusal = r;
	return r;
}

static void
build_params(const struct heapprofd *hp, const struct hp_request *rq,
    struct hp_params *p)
{
	const struct hp_rule *ru = rq->by_rule ? rq->rule : NULL;
	unsigned i;

	*p = hp->hs->defaults;
	p->npids = p->nnames = 0;
	if (ru) {
		if (ru->duration_ms)
			p->duration_ms = ru->duration_ms;
		if (ru->sampling_interval_bytes)
			p->sampling_interval_bytes =
			    ru->sampling_interval_bytes;
		if (ru->shmem_size_bytes)
			p->shmem_size_bytes = ru->shmem_size_bytes;
		if (ru->dump_interval_ms)
			p->dump_interval_ms = ru->dump_interval_ms;
	} else {
		if (rq->duration_ms)
			p->duration_ms = rq->duration_ms;
		if (rq->sampling_interval_bytes)
			p->sampling_interval_bytes =
			    rq->sampling_interval_bytes;
		if (rq->shmem_size_bytes)
			p->shmem_size_bytes = rq->shmem_size_bytes;
		if (rq->dump_interval_ms)
			p->dump_interval_ms = rq->dump_interval_ms;
		if (rq->block_client)
			p->block_client = true;
		if (rq->max_heapprofd_memory_kb)
			p->max_heapprofd_memory_kb =
			    rq->max_heapprofd_memory_kb;
		if (rq->max_heapprofd_cpu_secs)
			p->max_heapprofd_cpu_secs = rq->max_heapprofd_cpu_secs;
	}
	p->ninstalled_by = hp->hs->policy.ninstalled_by;
	for (i = 0; i < p->ninstalled_by; i++)
		memcpy(p->installed_by[i], hp->hs->policy.installed_by[i],
		    HP_NAME_MAX);
}

static int
load_packages(struct heapprofd *hp, struct hp_packages *pk, bool *ret_have,
    char *why, size_t whysz)
{
	struct vbuf b = { 0 };
	int fd, r;

	*ret_have = false;
	if ((fd = open(hp->hs->packages_list, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 0;
		r = -errno;
		snprintf(why, whysz, "%s: %s", hp->hs->packages_list,
		    strerror(-r));
		return r;
	}
	r = read_fd_all(fd, &b);
	close(fd);
	if (r == 0)
		r = hp_packages_parse(b.p ? b.p : "", b.len, pk);
	vbuf_release(&b);
	if (r < 0)
		snprintf(why, whysz, "%s: %s", hp->hs->packages_list,
		    strerror(-r));
	else
		*ret_have = true;
	return r;
}

/* Resolve the target, judge eligibility; fill params and the key. */
static enum hp_refusal
check_target(struct heapprofd *hp, const struct hp_request *rq,
    struct hp_params *p, struct hp_record *rec, struct hp_answer *ret)
{
	uint32_t uids[HP_PIDS_MAX];
	struct hp_packages pk = { 0 };
	enum hp_elig_why why;
	struct pid_status s;
	unsigned n = 0, i;
	char msg[160];
	bool have;
	int r;

	if (rq->by_uid) {
		snprintf(rec->target, sizeof(rec->target), "uid %u", rq->uid);
		snprintf(rec->target_key, sizeof(rec->target_key), "uid:%u",
		    rq->uid);
		if (find_by_uid(hp, rq->uid, p->pids, HP_PIDS_MAX,
		    &p->npids) < 0 || p->npids == 0)
			return refuse(ret, HP_REFUSE_INVALID, "no process of "
			    "uid %u", rq->uid);
		uids[n++] = rq->uid;
	} else if (rq->pid > 0) {
		p->pids[p->npids++] = rq->pid;
		snprintf(rec->target, sizeof(rec->target), "pid %d",
		    (int)rq->pid);
		if (proc_status(hp, rq->pid, &s) < 0 ||
		    proc_name(hp, rq->pid, rec->target_key,
		    sizeof(rec->target_key)) < 0)
			return refuse(ret, HP_REFUSE_INVALID, "no process %d "
			    "(or its cmdline is unreadable)", (int)rq->pid);
		uids[n++] = s.euid;
	} else {
		snprintf(p->names[p->nnames++], HP_NAME_MAX, "%s", rq->name);
		snprintf(rec->target, sizeof(rec->target), "%s", rq->name);
		snprintf(rec->target_key, sizeof(rec->target_key), "%s",
		    rq->name);
		if (hp_params_check(p, msg, sizeof(msg)) < 0)
			return refuse(ret, HP_REFUSE_INVALID, "%s", msg);
		if ((r = find_by_name(hp, rq->name, uids, HP_PIDS_MAX,
		    &n)) < 0 || n == 0)
			return refuse(ret, HP_REFUSE_INVALID, "no running "
			    "process named '%s'", rq->name);
	}
	if (hp_params_check(p, msg, sizeof(msg)) < 0)
		return refuse(ret, HP_REFUSE_INVALID, "%s", msg);
	if (load_packages(hp, &pk, &have, msg, sizeof(msg)) < 0)
		return refuse(ret, HP_REFUSE_NOT_ELIGIBLE, "%s", msg);
	for (i = 0; i < n; i++) {
		if (!hp_eligible(&hp->policy, have ? &pk : NULL, uids[i],
		    &why)) {
			hp_packages_release(&pk);
			return refuse(ret, HP_REFUSE_NOT_ELIGIBLE, "uid %u "
			    "(%s initiator): %s", uids[i],
			    hp_initiator_name(hp->policy.initiator),
			    hp_elig_why_name(why));
		}
	}
	hp_packages_release(&pk);
	return HP_OK;
}

static enum hp_refusal
check_budget(struct heapprofd *hp, const char *key, int64_t now,
    struct hp_answer *ret)
{
	struct hp_budget_rec *recs = NULL;
	enum hp_refusal r;
	char why[200];
	int64_t retry = 0;
	size_t n = 0;
	int e;

	if ((e = store_hp_budget(hp->store, now - HP_WEEK_NS, &recs,
	    &n)) < 0) {
		note_store_error(hp, e, "budget records not read");
		return refuse(ret, HP_REFUSE_UNAVAILABLE, "budget records "
		    "unreadable: %s", strerror(-e));
	}
	r = hp_budget_check(&hp->hs->limits, recs, n, key, now, &retry, why,
	    sizeof(why));
	free(recs);
	if (r != HP_OK)
		refuse(ret, r, "%s; next possible in %lld s", why,
		    (long long)((retry + NSEC_PER_SEC - 1) / NSEC_PER_SEC));
	return r;
}

static enum hp_refusal
decide(struct heapprofd *hp, const struct hp_request *rq,
    struct hp_params *p, struct hp_record *rec, int64_t now,
    struct hp_answer *ret)
{
	enum hp_refusal r;

	if ((rq->pid > 0) + (rq->name[0] != '\0') + rq->by_uid != 1)
		return refuse(ret, HP_REFUSE_INVALID, "give exactly one "
		    "target: a pid or a name");
	if (hp->store == NULL)
		return refuse(ret, HP_REFUSE_UNAVAILABLE, "no store: session "
		    "budgets cannot be kept");
	if (!rq->dry_run && hp->st.spawn != HP_SPAWN_DIRECT &&
	    hp->st.spawn != HP_SPAWN_HELPER)
		return refuse(ret, HP_REFUSE_UNAVAILABLE, "sessions cannot run "
		    "(%s): %s", hp_spawn_state_name(hp->st.spawn),
		    hp->st.spawn_detail);
	build_params(hp, rq, p);
	if ((r = check_target(hp, rq, p, rec, ret)) != HP_OK)
		return r;
	if (hp->running)
		return refuse(ret, HP_REFUSE_IN_PROGRESS, "session %lld is "
		    "running (one session at a time)", (long long)hp->rec.id);
	return check_budget(hp, rec->target_key, now, ret);
}

int
heapprofd_start(struct heapprofd *hp, const struct hp_request *rq,
    struct hp_answer *ret)
{
	struct hp_record rec;
	struct hp_params p;
	int64_t now = wall_now();
	uint8_t *cfg = NULL;
	size_t len = 0;
	char why[200];
	int e;

	memset(ret, 0, sizeof(*ret));
	memset(&rec, 0, sizeof(rec));
	memset(&p, 0, sizeof(p));
	rec.created_wall_ns = now;
	rec.by_rule = rq->by_rule;
	if (rq->by_rule && rq->rule)
		snprintf(rec.rule, sizeof(rec.rule), "%s", rq->rule->name);
	rec.caller_uid = rq->caller_uid;
	rec.exit_status = -1;
	rec.output_bytes = -1;
	hp->st.requests++;
	if (decide(hp, rq, &p, &rec, now, ret) != HP_OK) {
		if (rq->dry_run)
			return 0;
		hp->st.refused[ret->refusal]++;
		hp->st.last_refusal = ret->refusal;
		snprintf(hp->st.last_message, sizeof(hp->st.last_message),
		    "%s", ret->message);
		params_line(&p, rec.params, sizeof(rec.params));
		snprintf(rec.outcome, sizeof(rec.outcome), "refused");
		rec.refusal = ret->refusal;
		snprintf(rec.message, sizeof(rec.message), "%s", ret->message);
		if (rec.target[0] == '\0')
			snprintf(rec.target, sizeof(rec.target), "%s",
			    rq->pid > 0 ? "pid" : rq->name);
		if (hp->store && (e = store_hp_insert(hp->store, &rec)) < 0)
			note_store_error(hp, e, "refusal not recorded");
		ret->id = rec.id;
		return 0;
	}
	if (rq->dry_run) {
		hp->st.dry_runs++;
		snprintf(ret->message, sizeof(ret->message), "dry run: would "
		    "start a session on %.200s", rec.target);
		return hp_config_text(&p, &ret->text);
	}
	if ((e = hp_config_encode(&p, &cfg, &len)) < 0) {
		refuse(ret, HP_REFUSE_UNAVAILABLE, "config: %s", strerror(-e));
		hp->st.refused[ret->refusal]++;
		return 0;
	}
	params_line(&p, rec.params, sizeof(rec.params));
	rec.started = true;
	rec.start_wall_ns = now;
	snprintf(rec.outcome, sizeof(rec.outcome), "running");
	snprintf(rec.message, sizeof(rec.message), "%s",
	    rq->by_rule ? "started by rule" : "started by caller");
	/* Recorded before the child exists: a crash from here on leaves a
	 * "running" row the next start closes, and the budget is spent. */
	if ((e = store_hp_insert(hp->store, &rec)) < 0) {
		free(cfg);
		note_store_error(hp, e, "session not recorded");
		refuse(ret, HP_REFUSE_UNAVAILABLE, "session not recorded: %s",
		    strerror(-e));
		hp->st.refused[ret->refusal]++;
		return 0;
	}
	hp->rec = rec;
	if ((e = spawn(hp, &p, cfg, len, why, sizeof(why))) < 0) {
		free(cfg);
		hp->rec.end_wall_ns = wall_now();
		snprintf(hp->rec.outcome, sizeof(hp->rec.outcome),
		    "spawn failed");
		snprintf(hp->rec.message, sizeof(hp->rec.message), "%s", why);
		if (hp->ev_child)
			event_free(hp->ev_child);
		if (hp->ev_timer)
			event_free(hp->ev_timer);
		hp->ev_child = hp->ev_timer = NULL;
		if (hp->pidfd >= 0)
			close(hp->pidfd);
		hp->pidfd = -1;
		hp->st.spawn_failed++;
		if ((e = store_hp_update(hp->store, &hp->rec)) < 0)
			note_store_error(hp, e, "spawn failure not recorded");
		ret->id = hp->rec.id;
		snprintf(ret->message, sizeof(ret->message), "perfetto did not "
		    "start: %s", why);
		return 0;
	}
	free(cfg);
	hp->running = true;
	hp->st.running = true;
	hp->st.running_id = hp->rec.id;
	hp->st.started++;
	if ((e = store_hp_update(hp->store, &hp->rec)) < 0)
		note_store_error(hp, e, "child pid not recorded");
	arm_timer(hp, p.duration_ms + hp->hs->grace_ms);
	ret->id = hp->rec.id;
	snprintf(ret->output_path, sizeof(ret->output_path), "%s",
	    hp->rec.output_path);
	if (hp->sp)
		snprintf(ret->message, sizeof(ret->message), "session %lld "
		    "started on %.180s: perfetto through the spawn helper",
		    (long long)hp->rec.id, hp->rec.target);
	else
		snprintf(ret->message, sizeof(ret->message), "session %lld "
		    "started on %.180s: perfetto pid %d", (long long)hp->rec.id,
		    hp->rec.target, (int)hp->child);
	log_info("heapprofd: %s by %s%s (%s)", ret->message,
	    rq->by_rule ? "rule " : "uid ", rq->by_rule ? hp->rec.rule : "",
	    hp->rec.params);
	return 0;
}

int
heapprofd_cancel(struct heapprofd *hp, int64_t id, char *msg, size_t msgsz)
{
	struct hp_record r;

	if (hp->running && hp->rec.id == id) {
		if (hp->stop == STOP_NONE)
			hp->stop = STOP_CANCEL;
		if (!hp->term_sent) {
			hp->term_sent = true;
			event_del(hp->ev_timer);
			arm_timer(hp, hp->hs->kill_after_ms);
			child_signal(hp, SIGTERM);
		}
		if (hp->child > 0)
			snprintf(msg, msgsz, "session %lld: SIGTERM sent to "
			    "perfetto (pid %d), SIGKILL after %u ms",
			    (long long)id, (int)hp->child,
			    hp->hs->kill_after_ms);
		else
			snprintf(msg, msgsz, "session %lld: SIGTERM to perfetto "
			    "as soon as the spawn helper reports it started, "
			    "SIGKILL after %u ms", (long long)id,
			    hp->hs->kill_after_ms);
		return 0;
	}
	if (hp->store && store_hp_get(hp->store, id, &r) == 0) {
		snprintf(msg, msgsz, "session %lld is not running (%s)",
		    (long long)id, r.outcome);
		return -EALREADY;
	}
	snprintf(msg, msgsz, "no session %lld", (long long)id);
	return -ENOENT;
}

int
heapprofd_list(struct heapprofd *hp, unsigned limit, struct hp_record **ret,
    size_t *ret_n)
{
	if (hp->store == NULL)
		return -ENODEV;
	return store_hp_list(hp->store, limit, ret, ret_n);
}

void
heapprofd_note_denied(struct heapprofd *hp)
{
	hp->st.denied++;
}

void
heapprofd_get_stats(struct heapprofd *hp, struct hp_stats *ret)
{
	*ret = hp->st;
	ret->rules = hp->hs->nrules;
	ret->initiator = hp->policy.initiator;
	ret->build = hp->policy.build;
	if (hp->rules)
		hp_rules_stats(hp->rules, &ret->rs);
}

void
heapprofd_set_gpu(struct heapprofd *hp,
    int (*gpu_bytes)(void *arg, const struct window *w, int32_t pid,
	uint64_t starttime, uint64_t *bytes), void *arg)
{
	hp->gpu_bytes = gpu_bytes;
	hp->gpu_arg = arg;
}

/* Rules at each window close: a rule that holds asks for a session like a
 * caller would, and is refused for the same reasons. */
void
heapprofd_window(struct heapprofd *hp, const struct window *w)
{
	struct hp_fire f[HP_FIRES_MAX];
	struct hp_eval_ctx ctx = {
		.name = eval_name_cb,
		.anon_kb = eval_anon_cb,
		.gpu_bytes = eval_gpu_cb,
		.arg = hp,
		.page_size = hp->page_size,
	};
	struct hp_request rq;
	struct hp_answer a;
	size_t n = 0, i;

	if (hp->rules == NULL || hp->hs->nrules == 0)
		return;
	if (hp_rules_eval(hp->rules, w, &ctx, f, HP_FIRES_MAX, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		const struct hp_rule *ru = &hp->hs->rules[f[i].rule];

		memset(&rq, 0, sizeof(rq));
		rq.by_rule = true;
		rq.rule = ru;
		if (ru->tgt == HP_TGT_NAME) {
			snprintf(rq.name, sizeof(rq.name), "%s", ru->tgt_name);
		} else if (ru->tgt == HP_TGT_UID) {
			rq.by_uid = true;
			rq.uid = ru->tgt_uid;
		} else {
			rq.pid = f[i].pid;
		}
		(void)heapprofd_start(hp, &rq, &a);
		if (a.refusal == HP_OK)
			log_info("heapprofd: rule %s: %s (pid %d): %s",
			    ru->name, f[i].why, (int)f[i].pid, a.message);
		else
			log_info("heapprofd: rule %s held (%s, pid %d), "
			    "refused: %s: %s", ru->name, f[i].why,
			    (int)f[i].pid, hp_refusal_name(a.refusal),
			    a.message);
		vbuf_release(&a.text);
	}
}

/* ------------------------------------------------------------ lifetime */

/* Sessions recorded as running belong to an earlier vitalsd: nobody
 * watches their child any more. Close them honestly; a perfetto that is
 * still alive (same pid and start time) is stopped, its output kept. */
static void
close_stale(struct heapprofd *hp)
{
	struct hp_record *v = NULL;
	size_t n = 0, i;
	uint64_t st;
	int e;

	if ((e = store_hp_running(hp->store, &v, &n)) < 0) {
		note_store_error(hp, e, "running sessions not read");
		return;
	}
	for (i = 0; i < n; i++) {
		struct hp_record *r = &v[i];
		bool alive = r->child_pid > 0 &&
		    proc_starttime(hp, r->child_pid, &st) == 0 &&
		    st == r->child_starttime;

		if (alive)
			kill(r->child_pid, SIGTERM);
		r->end_wall_ns = wall_now();
		snprintf(r->outcome, sizeof(r->outcome), "daemon restarted");
		snprintf(r->message, sizeof(r->message), "vitalsd restarted "
		    "during the session; perfetto (pid %d) %s", r->child_pid,
		    alive ? "was still running: sent SIGTERM, exit status "
		    "unknown" : "had ended: exit status unknown");
		file_size(r->output_path, &r->output_bytes);
		if ((e = store_hp_update(hp->store, r)) < 0)
			note_store_error(hp, e, "stale session not closed");
		hp->st.restarted_closed++;
		log_warnx("heapprofd: session %lld: %s", (long long)r->id,
		    r->message);
	}
	free(v);
}

/*
 * The build type heapprofd's eligibility rules depend on: ro.build.type
 * through the platform's property API where there is one; the
 * heapprofd_build_type key where there is none (hosts, tests) or it says
 * nothing. An unknown value means the strictest rules (user). Read once:
 * ro.* properties do not change while the system runs.
 */
static void
hp_build_type(struct heapprofd *hp)
{
	char v[92] = "";
	int r = -ENOSYS;

	/* >>> THE ro.build.type CALL SITE: the property backend goes here,
	 * e.g. r = sysprop_get("ro.build.type", v, sizeof(v));
	 * (r >= 0 with v filled: the property's value) <<< */
	if (r >= 0 && v[0] != '\0') {
		if (hp_build_parse(v, &hp->policy.build) < 0) {
			hp->policy.build = HP_BUILD_USER;
			snprintf(hp->st.build_source,
			    sizeof(hp->st.build_source), "ro.build.type "
			    "(unknown value: user rules)");
		} else {
			snprintf(hp->st.build_source,
			    sizeof(hp->st.build_source), "ro.build.type");
		}
		return;
	}
	hp->policy.build = hp->hs->policy.build;
	snprintf(hp->st.build_source, sizeof(hp->st.build_source),
	    "heapprofd_build_type");
}

/* How perfetto will be started, or why it cannot be. */
static int
hp_spawn_setup(struct heapprofd *hp, const struct config *cfg)
{
	struct hp_stats *st = &hp->st;
	struct ph_spawner *sp;
	int err = 0;

	sp = privhelper_spawn_get(&err);
	if (cfg->hp->perfetto == NULL) {
		st->spawn = HP_SPAWN_NONE;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail), "no "
		    "perfetto binary configured (heapprofd_perfetto, "
		    "--perfetto)");
	} else if (sp) {
		st->spawn = HP_SPAWN_HELPER;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail), "%s by "
		    "the spawn helper (pid %d)", cfg->hp->perfetto,
		    (int)privhelper_spawn_pid(sp));
		hp->sp = sp;
		hp->ev_spawn = event_new(hp->base, privhelper_spawn_fd(sp),
		    EV_READ | EV_PERSIST, spawn_cb, hp);
		if (hp->ev_spawn == NULL ||
		    event_priority_set(hp->ev_spawn, 1) < 0 ||
		    event_add(hp->ev_spawn, NULL) < 0)
			return -ENOMEM;
	} else if (cfg->privhelper) {
		st->spawn = HP_SPAWN_FAILED;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail), "the "
		    "spawn helper did not start: %s: %s", cfg->hp->perfetto,
		    strerror(err < 0 ? -err : ENOENT));
	} else if (cfg->seccomp == PRIVS_SECCOMP_ON) {
		st->spawn = HP_SPAWN_BLOCKED;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail), "seccomp "
		    "on refuses fork and execve and privhelper is off: "
		    "--privhelper on runs perfetto through its spawner");
	} else {
		st->spawn = HP_SPAWN_DIRECT;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail), "%s "
		    "forked by the daemon (seccomp %s)", cfg->hp->perfetto,
		    privs_seccomp_name(cfg->seccomp));
	}
	if (st->spawn == HP_SPAWN_BLOCKED || st->spawn == HP_SPAWN_FAILED)
		log_warnx("heapprofd: sessions will be refused: %s",
		    st->spawn_detail);
	return 0;
}

int
heapprofd_new(struct event_base *base, const struct config *cfg,
    struct store *store, struct heapprofd **ret)
{
	struct heapprofd *hp;
	long page;
	int r;

	if ((hp = calloc(1, sizeof(*hp))) == NULL)
		return -ENOMEM;
	hp->base = base;
	hp->store = store;
	hp->hs = cfg->hp;
	hp->policy = cfg->hp->policy;
	hp->pidfd = -1;
	hp->procfd = -1;
	page = sysconf(_SC_PAGESIZE);
	hp->page_size = page > 0 ? (unsigned)page : 4096;
	if ((hp->state_dir = strdup(cfg->state_dir)) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((hp->procfd = open(cfg->proc_root, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0) {
		r = -errno;
		goto fail;
	}
	if ((r = hp_rules_new(hp->hs->rules, hp->hs->nrules,
	    &hp->rules)) < 0)
		goto fail;
	hp_build_type(hp);
	if ((r = hp_spawn_setup(hp, cfg)) < 0)
		goto fail;
	/* The output directory is made now, in setup: the state directory's
	 * entries then become the service user's, and the seccomp filter
	 * has no mkdir. */
	if (cfg->hp->perfetto) {
		char dir[512];

		if (snprintf(dir, sizeof(dir), "%s/heapprofd", hp->state_dir) <
		    (int)sizeof(dir) && (r = mkdir_one(dir)) < 0)
			log_warnx("heapprofd: %s: %s", dir, strerror(-r));
	}
	if (store)
		close_stale(hp);
	*ret = hp;
	return 0;
fail:
	heapprofd_free(hp);
	return r;
}

/*
 * The spawner's perfetto at stop: SIGTERM, kill_after_ms for it to end,
 * then SIGKILL and a last wait. The loop has stopped: waiting is fine.
 * Its wait status, or -1 (the spawner gave none).
 */
static int
stop_via_helper(struct heapprofd *hp)
{
	struct ph_spawn_event ev;
	int64_t until;
	int sig = SIGTERM, r;

	until = clock_ns(CLOCK_MONOTONIC) + 2000 * 1000000LL;
	while (!hp->started) {
		int64_t left = until - clock_ns(CLOCK_MONOTONIC);

		if (left <= 0 || privhelper_spawn_wait(hp->sp,
		    (int)(left / 1000000), &ev) < 0)
			return -1;
		if (ev.kind == PH_SPAWN_STARTED && ev.seq == hp->session) {
			if (ev.err < 0)
				return -1;
			hp->started = true;
			hp->child = ev.pid;
		}
	}
	for (;;) {
		if (privhelper_spawn_signal(hp->sp, hp->session, sig) < 0)
			return -1;
		until = clock_ns(CLOCK_MONOTONIC) + (sig == SIGTERM ?
		    (int64_t)hp->hs->kill_after_ms : 2000) * 1000000LL;
		for (;;) {
			int64_t left = until - clock_ns(CLOCK_MONOTONIC);

			if (left <= 0)
				break;
			r = privhelper_spawn_wait(hp->sp, (int)(left / 1000000),
			    &ev);
			if (r < 0 && r != -ETIMEDOUT)
				return -1;
			if (r == 0 && ev.kind == PH_SPAWN_EXITED &&
			    ev.seq == hp->session)
				return ev.status;
		}
		if (sig == SIGKILL)
			return -1;
		sig = SIGKILL;
	}
}

/* The daemon stops: a running perfetto is stopped and waited for. */
struct heapprofd *
heapprofd_free(struct heapprofd *hp)
{
	int status = 0, i;

	if (hp == NULL)
		return NULL;
	if (hp->running && hp->sp) {
		hp->stop = STOP_DAEMON;
		if ((status = stop_via_helper(hp)) < 0)
			session_end(hp, 0, "vitalsd stopped during the session; "
			    "the spawn helper did not report perfetto's end");
		else
			session_end(hp, status, NULL);
	} else if (hp->running) {
		kill(hp->child, SIGTERM);
		for (i = 0; i < (int)hp->hs->kill_after_ms / 10; i++) {
			if (waitpid(hp->child, &status, WNOHANG) == hp->child)
				break;
			usleep(10000);
		}
		if (i >= (int)hp->hs->kill_after_ms / 10) {
			kill(hp->child, SIGKILL);
			waitpid(hp->child, &status, 0);
		}
		hp->stop = STOP_DAEMON;
		session_end(hp, status, NULL);
	}
	if (hp->ev_spawn)
		event_free(hp->ev_spawn);
	hp_rules_free(hp->rules);
	if (hp->procfd >= 0)
		close(hp->procfd);
	free(hp->state_dir);
	free(hp);
	return NULL;
}
