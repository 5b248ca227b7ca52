/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one way the suites run vitalsd: a config written, the daemon started
 * on a private state directory and socket with its stderr in a log, waited
 * for until it answers, polled with a deadline, stopped with SIGTERM and
 * reaped, its files removed.
 */
#ifndef VITALS_TEST_HARNESS_H
#define VITALS_TEST_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "client_run.h"

struct td {
	pid_t pid;	     /* 0: not running */
	char *dir;	     /* the state directory, 0700 from mkdtemp */
	char sock[PATH_MAX]; /* <dir>/vitalsd.sock */
	char log[PATH_MAX];  /* <dir>.log: the daemon's stderr */
	char conf[PATH_MAX]; /* <dir>/vitalsd.conf */
	/* the spool's directory, its own under /dev/shm (--store-spool-dir,
	 * before the test's args: theirs win); "": the daemon's default */
	char spool[PATH_MAX];
	/* its BPF pin directory, its own under /sys/fs/bpf (--bpffs, before
	 * the test's args: theirs win), made by the daemon and removed by
	 * td_cleanup: no suite leaves its programs attached (to
	 * sched_switch, for every later suite and benchmark) */
	char bpffs[96];
};

/* Runs in the daemon's child just before the exec (rlimits, seccomp). */
typedef void (*td_child_fn)(void *arg);

/* How a daemon gets its listening socket: it makes it, or inherits fd as
 * Android init (ANDROID_SOCKET_vitalsd) or systemd (LISTEN_FDS, fd 3)
 * hand it. */
enum td_inherit { TD_INHERIT_NONE, TD_INHERIT_ANDROID, TD_INHERIT_SYSTEMD };
/* In the daemon's child before the exec: hand it fd that way. */
void td_pass_socket(enum td_inherit how, int fd);

/* $VITALS_BUILDDIR/daemon/vitalsd (the build directory when unset). */
const char *td_vitalsd(void);

/* How td_exec opens the log. */
enum td_log { TD_LOG_APPEND, TD_LOG_TRUNC };

/* Fork and exec vitalsd with argv (argv[0] "vitalsd", NULL-terminated),
 * its stderr into log (NULL: /dev/null); child, when not NULL, runs first
 * in the child. The pid, once the exec has happened. The spool is off
 * ("--store-spool-dir off" before argv[1]) unless argv names a spool
 * directory (td_spawn gives each daemon its own). */
pid_t td_exec(const char *log, enum td_log how, const char *const *argv,
    td_child_fn child, void *arg);
/* vitalsd with argv, run to its end, stderr to /dev/null: its status. */
int td_exec_wait(const char *const *argv);
/* Send sig to pid and reap it: the wait status. */
int td_kill(pid_t pid, int sig);
/* SIGTERM and reap: the daemon must end with status 0 (log: named). */
void td_term(pid_t pid, const char *log);
/* The file holds needle (false: unreadable). */
bool td_file_has(const char *path, const char *needle);

/* A fresh state directory named for tag, with its socket, log and
 * config paths; conf (NULL: empty) written to the config. */
void td_prepare(struct td *d, const char *tag, const char *conf);
/* vitalsd -f -c CONF --state-dir DIR --socket SOCK [--store-spool-dir
 * SPOOL], then args
 * (NULL-terminated; NULL: none). */
void td_spawn(struct td *d, const char *const *args, td_child_fn child,
    void *arg);
/* td_prepare then td_spawn. */
void td_start(struct td *d, const char *tag, const char *conf,
    const char *const *args);

/* The client against d's socket: vitals --socket SOCK args..., as uid
 * when uid >= 0; args NULL-terminated, at most 16. */
struct run td_vitals(const struct td *d, int uid, const char *const *args);
/* Until `vitals --timeout 10000 args` (args NULL: health) exits 0 and
 * ready (NULL: any answer) accepts it, every 100 ms for ms at most; the
 * test fails naming the log otherwise. */
void td_wait(const struct td *d, unsigned ms, const char *const *args,
    bool (*ready)(const struct run *r));
/* `vitals --json health` shows a closed window (health.last). */
bool td_has_window(const struct run *r);
/* ... and the store has committed one (health.store.windows_written):
 * health.last is the loop's window, which a read of the store (top,
 * export) finds only once the writer has committed it, a few ms later. */
bool td_has_stored_window(const struct run *r);
/* Until log holds needle, every step ms for n steps at most, the daemon
 * pid alive throughout (pid 0: not checked): whether it does. */
bool td_log_until(pid_t pid, const char *log, const char *needle, unsigned n,
    unsigned step);

/* SIGTERM and reap: the daemon must end with status 0. */
void td_stop_only(struct td *d);
/* td_stop_only, then its state directory and log removed. */
void td_stop(struct td *d);
/* Its state directory and log removed (the daemon already reaped). */
void td_cleanup(struct td *d);

#endif
