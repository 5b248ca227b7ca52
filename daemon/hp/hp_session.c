/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A heapprofd session's perfetto, from start to end: the config in a pipe
 * and the trace and log files opened here, `perfetto -c - -o -` run either
 * by the daemon (fork, pidfd on the loop) or, under the daemon's seccomp
 * filter, by the privileged helper's spawner (requests and reports on a
 * channel the loop watches); the timeout (SIGTERM, then SIGKILL),
 * cancellation, the end into the record. doc/heapprofd.md.
 */
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

#include "config/config.h"
#include "core/compat.h"
#include "core/log.h"
#include "core/util.h"
#include "hp/hp.h"
#include "privs/privs.h"
#include "hp_int.h"

static void
session_end(struct heapprofd *hp, int status, const char *lost)
{
	struct hp_record *r = &hp->rec;
	bool checked = false;

	r->end_wall_ns = hp_wall_now();
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
	hp_file_size(r->output_path, &r->output_bytes);
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
		/* exited 0 by itself: the trace's verdict is the outcome,
		 * recorded when known (hp_check.c) */
		checked = true;
		hp_check_start(hp, r, &hp->want);
	} else {
		snprintf(r->outcome, sizeof(r->outcome), "failed");
		hp->st.failed++;
	}
	if (!checked) {
		(void)hp_record_put(hp, r, "session end not recorded");
		log_info("heapprofd: session %lld %s (exit %d, signal %d, %lld "
			 "bytes in %s)",
		    (long long)r->id, r->outcome, r->exit_status,
		    r->term_signal, (long long)r->output_bytes, r->output_path);
	}
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
	if (!checked) /* a checked one's pass follows its verdict */
		hp_expire_run(hp);
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

void
hp_session_arm(struct heapprofd *hp, uint32_t ms)
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
		hp_session_arm(hp, hp->hs->kill_after_ms);
		child_signal(hp, SIGTERM);
		return;
	}
	log_warnx("heapprofd: session %lld: perfetto (pid %d) ignored "
		  "SIGTERM for %u ms: SIGKILL",
	    (long long)hp->rec.id, (int)hp->child, hp->hs->kill_after_ms);
	child_signal(hp, SIGKILL);
}

/*
 * Made at setup; the filter refuses mkdir, so look before asking. Traces
 * are heap profiles of other processes: the directory is the daemon's
 * alone (0700, an older 0750 one tightened), the files 0600.
 */
static int
mkdir_one(const char *path)
{
	struct stat sb;
	int fd, e = 0;

	if (stat(path, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -errno;
		return 0;
	}
	if ((sb.st_mode & 07777) == 0700)
		return 0;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	    0)
		return -errno;
	if (fchmod(fd, 0700) < 0)
		e = -errno;
	close(fd);
	return e;
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
		return snprintf(why, whysz, "%.120s: %s", dir, strerror(-e)), e;
	if (snprintf(r->output_path, sizeof(r->output_path),
		"%s/session-%lld.pftrace", dir,
		(long long)r->id) >= (int)sizeof(r->output_path) ||
	    snprintf(logp, sizeof(logp), "%s/session-%lld.log", dir,
		(long long)r->id) >= (int)sizeof(logp))
		return snprintf(why, whysz, "output path too long"),
		       -ENAMETOOLONG;
	/* perfetto writes the trace to its stdout (-o -): the file is
	 * opened here, in the daemon's directory, with the daemon's rights */
	if ((f->out = open(r->output_path, fl, 0600)) < 0 ||
	    (f->log = open(logp, fl, 0600)) < 0) {
		e = -errno;
		spawn_fds_close(f);
		return snprintf(why, whysz, "%.160s: %s",
			   f->out < 0 ? r->output_path : logp, strerror(-e)),
		       e;
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
		return snprintf(why, whysz,
			   "the config (%zu bytes) does not "
			   "fit the pipe",
			   len),
		       -EMSGSIZE;
	}
	return 0;
}

/* seccomp off or log: the daemon forks perfetto and watches a pidfd. */
static int
spawn_direct(struct heapprofd *hp, struct spawn_fds *f, char *why, size_t whysz)
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
		compat_close_from(3);
		execl(hp->hs->perfetto, "perfetto", "-c", "-", "-o", "-",
		    (char *)NULL);
		_exit(127);
	}
	hp->child = pid;
	r->child_pid = pid;
	(void)hp_proc_starttime(hp, pid, &r->child_starttime);
	hp->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (hp->pidfd < 0) {
		e = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return snprintf(why, whysz, "pidfd_open: %s", strerror(-e)), e;
	}
	hp->ev_child = event_new(hp->base, hp->pidfd, EV_READ | EV_PERSIST,
	    child_cb, hp);
	if (hp->ev_child == NULL || event_priority_set(hp->ev_child, 1) < 0 ||
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

int
hp_session_spawn(struct heapprofd *hp, const struct hp_params *p,
    const uint8_t *cfg, size_t len, char *why, size_t whysz)
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
	if (e < 0) {
		if (hp->ev_child)
			event_free(hp->ev_child);
		event_free(hp->ev_timer);
		hp->ev_child = hp->ev_timer = NULL;
		if (hp->pidfd >= 0)
			close(hp->pidfd);
		hp->pidfd = -1;
		return e;
	}
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

	if (ev->err < 0) {
		hp->st.started--; /* it was counted at the request */
		hp->st.spawn_failed++;
		snprintf(r->message, sizeof(r->message),
		    "perfetto did not "
		    "start: spawn helper: %s",
		    strerror(-ev->err));
		r->end_wall_ns = hp_wall_now();
		snprintf(r->outcome, sizeof(r->outcome), "spawn failed");
		(void)hp_record_put(hp, r, "spawn failure not recorded");
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
	(void)hp_proc_starttime(hp, ev->pid, &r->child_starttime);
	(void)hp_record_put(hp, r, "child pid not recorded");
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
					  "signal: %s",
				    strerror(-ev.err));
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

/* How perfetto will be started, or why it cannot be. */
int
hp_session_setup(struct heapprofd *hp, const struct config *cfg,
    const struct privs_helpers *helpers)
{
	struct hp_stats *st = &hp->st;
	struct ph_spawner *sp = helpers ? helpers->sp : NULL;
	int err = helpers ? helpers->sp_err : 0;

	if (cfg->hp->perfetto == NULL) {
		st->spawn = HP_SPAWN_NONE;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail),
		    "no "
		    "perfetto binary configured (heapprofd_perfetto, "
		    "--perfetto)");
	} else if (sp) {
		st->spawn = HP_SPAWN_HELPER;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail),
		    "%s by "
		    "the spawn helper (pid %d)",
		    cfg->hp->perfetto, (int)privhelper_spawn_pid(sp));
		hp->sp = sp;
		hp->ev_spawn = event_new(hp->base, privhelper_spawn_fd(sp),
		    EV_READ | EV_PERSIST, spawn_cb, hp);
		if (hp->ev_spawn == NULL ||
		    event_priority_set(hp->ev_spawn, 1) < 0 ||
		    event_add(hp->ev_spawn, NULL) < 0)
			return -ENOMEM;
	} else if (cfg->privhelper) {
		st->spawn = HP_SPAWN_FAILED;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail),
		    "the "
		    "spawn helper did not start: %s: %s",
		    cfg->hp->perfetto, strerror(err < 0 ? -err : ENOENT));
	} else if (cfg->seccomp == PRIVS_SECCOMP_ON) {
		st->spawn = HP_SPAWN_BLOCKED;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail),
		    "seccomp "
		    "on refuses fork and execve and privhelper is off: "
		    "--privhelper on runs perfetto through its spawner");
	} else {
		st->spawn = HP_SPAWN_DIRECT;
		snprintf(st->spawn_detail, sizeof(st->spawn_detail),
		    "%s "
		    "forked by the daemon (seccomp %s)",
		    cfg->hp->perfetto, privs_seccomp_name(cfg->seccomp));
	}
	if (st->spawn == HP_SPAWN_BLOCKED || st->spawn == HP_SPAWN_FAILED)
		log_warnx("heapprofd: sessions will be refused: %s",
		    st->spawn_detail);
	/* The output directory is made now, in setup: the state directory's
	 * entries then become the service user's, and the seccomp filter
	 * has no mkdir. */
	if (cfg->hp->perfetto) {
		char dir[512];
		int r;

		if (snprintf(dir, sizeof(dir), "%s/heapprofd", hp->state_dir) <
			(int)sizeof(dir) &&
		    (r = mkdir_one(dir)) < 0)
			log_warnx("heapprofd: %s: %s", dir, strerror(-r));
	}
	hp_expire_run(hp);
	return 0;
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

		if (left <= 0 ||
		    privhelper_spawn_wait(hp->sp, (int)(left / 1000000), &ev) <
			0)
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
		until = clock_ns(CLOCK_MONOTONIC) +
		    (sig == SIGTERM ? (int64_t)hp->hs->kill_after_ms : 2000) *
			1000000LL;
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

/* A cancel: SIGTERM now (perfetto stops and writes its file), SIGKILL
 * kill_after_ms later if it has not ended. */
void
hp_session_term(struct heapprofd *hp)
{
	if (hp->term_sent)
		return;
	hp->term_sent = true;
	event_del(hp->ev_timer);
	hp_session_arm(hp, hp->hs->kill_after_ms);
	child_signal(hp, SIGTERM);
}

/* The daemon stops: a running perfetto is stopped and waited for. */
void
hp_session_stop(struct heapprofd *hp)
{
	int status = 0, i;

	if (hp->running && hp->sp) {
		hp->stop = STOP_DAEMON;
		if ((status = stop_via_helper(hp)) < 0)
			session_end(hp, 0,
			    "vitalsd stopped during the session; "
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
	hp->ev_spawn = NULL;
}
