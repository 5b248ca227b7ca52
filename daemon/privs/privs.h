/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Privileges: the drop (privs.c), the state directory (statedir.c), the
 * seccomp filter (seccomp.c) and the privileged helper with its spawner
 * (privhelper.c, privhelper_spawn.c).
 */
#ifndef VITALSD_PRIVS_H
#define VITALSD_PRIVS_H

#include "core/caps.h"
#include "core/util.h"

/* ---------------------------------------------------------------- privs.c */

#define VITALS_PRIVS_GROUPS 16 /* supplementary groups of the service user */

/* What the privilege drop is asked to do (config keys user, group,
 * capabilities, seccomp), with names resolved by privs_resolve(). */
struct privs_req {
	bool drop;	   /* a user is configured */
	uint32_t uid, gid; /* the user's, and its primary group */
	uint32_t ngroups;
	uint32_t groups[VITALS_PRIVS_GROUPS]; /* supplementary */
	uint64_t keep;	  /* capabilities to keep (bit = CAP_*) */
	unsigned seccomp; /* enum privs_seccomp */
	bool need_bpf;	  /* BPF fds are in use after the drop */
	bool need_inet;	  /* TCP connections out (OTLP push) */
	char user[64];	  /* for the log: the name given */
};

enum privs_seccomp {
	PRIVS_SECCOMP_OFF,
	PRIVS_SECCOMP_ON,  /* any other syscall fails with EPERM */
	PRIVS_SECCOMP_LOG, /* any other syscall is allowed and logged */
};

/* The privileges the daemon runs with, as verified after the drop
 * (Health.privileges). */
struct privs_state {
	bool dropped;	   /* the drop ran (a user is configured) */
	bool verified;	   /* every check after it held */
	uint32_t uid, gid; /* real = effective = saved */
	uint32_t ngroups;
	uint32_t groups[VITALS_PRIVS_GROUPS];
	uint64_t cap_eff, cap_prm, cap_inh, cap_bnd, cap_amb;
	uint64_t cap_auto; /* kept because the kernel needs it (bpf()) */
	bool no_new_privs;
	unsigned seccomp;	/* enum privs_seccomp in force */
	uint32_t seccomp_rules; /* syscalls the filter allows */
	char user[64];
};

const char *privs_seccomp_name(unsigned mode);
int privs_resolve(const char *user, const char *groups, uint64_t keep,
    unsigned seccomp, struct privs_req *ret, char *err, size_t errsz);
/* statedir.c: the state directory as the service user reaches it */
struct stat;
void statedir_set_owner(const struct privs_req *req);
int statedir_fs_enter(void);
void statedir_fs_leave(void);
int statedir_open(const char *path, int *ret_fd, char *err, size_t errsz);
int statedir_check_file(int dirfd, const char *name, uint32_t want_uid,
    char *err, size_t errsz);
int statedir_check_stat(const struct stat *st, const char *name,
    uint32_t want_uid, char *err, size_t errsz);
/* spooldir.c: the spool's directory and file (batched commits) */
const char *spooldir_default(void);
uint64_t spooldir_hash(const char *s);
int spooldir_setup(const char *dir, unsigned commit_s, const char *state_dir,
    char *path, size_t pathsz, char *note, size_t notesz);
/* privs.c: the drop and the state it leaves */
int privs_drop(const struct privs_req *req, struct privs_state *ret);
void privs_get(struct privs_state *ret);
void privs_log(const struct privs_state *st);

/* seccomp.c: the daemon's syscall allowlist (classic BPF) */
/* inet: socket(AF_INET, AF_INET6) allowed too (an OTLP endpoint is set) */
int seccomp_install(unsigned mode, bool inet, uint32_t *ret_rules);
size_t seccomp_syscalls(const char *const **ret_names);

/* The helper processes main() starts before setup, handed explicitly to
 * the modules that use them (no global). */
struct privhelper;
struct ph_spawner;
struct privs_helpers {
	struct privhelper *ph; /* the privileged helper; NULL: none */
	struct ph_spawner *sp; /* its perfetto spawner; NULL: none */
	int sp_err;	       /* why sp is NULL when it was asked for */
};

/* privhelper.c: the privileged helper (doc/privileges.md) */
enum privhelper_file {
	PH_FILE_MAPS,	    /* /proc/<pid>/maps, read */
	PH_FILE_SMAPS,	    /* /proc/<pid>/smaps, read */
	PH_FILE_PAGEMAP,    /* /proc/<pid>/pagemap, read, with PFNs */
	PH_FILE_CLEAR_REFS, /* /proc/<pid>/clear_refs, write */
	PH_FILE__MAX
};

int privhelper_start(const char *proc_root, const char *sys_root,
    const char *tracefs, struct privhelper **ret);
struct privhelper *privhelper_stop(struct privhelper *ph);
pid_t privhelper_pid(const struct privhelper *ph);
int privhelper_open(struct privhelper *ph, int32_t pid, uint64_t starttime,
    enum privhelper_file which, int *ret_fd);
int privhelper_page_idle(struct privhelper *ph, int *ret_fd);
int privhelper_rmdir_instance(struct privhelper *ph, const char *name);
int privhelper_raw(struct privhelper *ph, const void *buf, size_t len);
size_t privhelper_req_size(void);

/* privhelper.c: the channel's health and the test hooks */
struct privhelper_stats {
	uint64_t calls;	      /* requests made */
	uint64_t stale;	      /* answers to earlier requests discarded */
	uint64_t refused;     /* calls failed EPIPE: the channel is closed */
	int dead;	      /* 0, or the -errno that closed the channel */
	uint64_t interrupted; /* waits a signal cut short, resumed */
};

void privhelper_stats(struct privhelper *ph, struct privhelper_stats *ret);
void privhelper_set_timeout(struct privhelper *ph, int ms);
int privhelper_send_stale(struct privhelper *ph, int32_t pid,
    enum privhelper_file which);

/* privhelper_spawn.c: the helper's spawner, which runs perfetto for
 * heapprofd sessions outside the daemon's seccomp filter */
struct ph_spawner;

enum ph_spawn_kind {
	PH_SPAWN_STARTED, /* a spawn's answer: err, or the child's pid */
	PH_SPAWN_EXITED,  /* a session's child ended: its wait status */
	PH_SPAWN_ANSWER,  /* a signal request's answer: err */
};

#define PH_SPAWN_BACKSTOP \
	1u /* EXITED: the spawner killed it at the
			      * request's timeout */

struct ph_spawn_event {
	enum ph_spawn_kind kind;
	uint64_t seq; /* the request's; EXITED: the session's */
	int err;      /* 0 or -errno */
	int32_t pid;
	int status;
	uint32_t flags;
};

int privhelper_spawn_start(const char *perfetto, const struct privs_req *who,
    struct ph_spawner **ret);
struct ph_spawner *privhelper_spawn_stop(struct ph_spawner *sp);
pid_t privhelper_spawn_pid(const struct ph_spawner *sp);
int privhelper_spawn_fd(const struct ph_spawner *sp);
int privhelper_spawn_request(struct ph_spawner *sp, int fd_in, int fd_out,
    int fd_err, uint32_t timeout_ms, uint64_t *ret_session);
int privhelper_spawn_signal(struct ph_spawner *sp, uint64_t session, int sig);
int privhelper_spawn_read(struct ph_spawner *sp, struct ph_spawn_event *ret);
int privhelper_spawn_wait(struct ph_spawner *sp, int ms,
    struct ph_spawn_event *ret);
/* tests */
int privhelper_spawn_raw(struct ph_spawner *sp, const void *buf, size_t len,
    const int *fds, unsigned nfds);
size_t privhelper_spawn_req(void *buf, size_t sz, unsigned op, uint64_t seq,
    uint64_t session, int sig, uint32_t timeout_ms);

#endif /* VITALSD_PRIVS_H */
