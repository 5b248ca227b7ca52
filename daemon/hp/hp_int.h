/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd's private state, shared by hp.c (requests, checks,
 * rules, records, lifetime) and hp_session.c (the running perfetto).
 */
#ifndef VITALS_HP_INT_H
#define VITALS_HP_INT_H

#include <event2/event.h>

#include "config/config.h"
#include "hp/hp.h"
#include "window/window.h"

enum stop_why { STOP_NONE, STOP_TIMEOUT, STOP_CANCEL, STOP_DAEMON };

#define HP_SEEN_MAX 64 /* outcomes of the newest records, for cancel */

/* The processes a session's trace must have a heap dump of: the pids
 * asked for, or those a name or uid matched at the start. */
struct hp_want {
	int32_t pids[HP_PIDS_MAX];
	unsigned n;
};

struct hp_seen {
	int64_t id;
	char outcome[32];
};

/* The session table as heapprofd reads it (hp_records_read). */
struct hp_load {
	int64_t max_id;
	struct hp_budget_rec *budget; /* started in the last week */
	size_t nbudget;
	struct hp_record *recent; /* newest first */
	size_t nrecent;
	struct hp_record *running; /* left "running" by an earlier vitalsd */
	size_t nrunning;
};

struct heapprofd {
	struct event_base *base;
	struct store *store;
	struct writer *wr; /* records are queued to it; NULL: written here */
	/* the records as the loop keeps them (hp_record.c) */
	int64_t next_id; /* of the next record; 0: not read at setup */
	int load_err;	 /* why not */
	struct hp_budget_rec *budget; /* started in the last week */
	size_t nbudget, budget_cap;
	struct hp_seen seen[HP_SEEN_MAX]; /* a ring */
	unsigned nseen, seen_next;
	/* not read at setup: read by the writer thread once the store opens
	 * (writer_call); the loop touches it only when told */
	struct hp_load late;
	bool late_asked;
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
	struct hp_want want;
	pid_t child;
	int pidfd;
	struct event *ev_child, *ev_timer;
	enum stop_why stop;
	bool term_sent;
	/* through the spawner (privhelper_spawn.c) */
	struct ph_spawner *sp;
	struct event *ev_spawn;
	uint64_t session;	 /* the spawn request's number */
	bool started;		 /* its answer came: child is known */
	int pending_sig;	 /* asked for before the answer came */
	int64_t expired_mono_ns; /* the last expiry pass */
	struct hp_check *check;	 /* the trace's verdict, off the loop */
};

/* hp_proc.c */
int64_t hp_wall_now(void);
int hp_proc_starttime(struct heapprofd *hp, int32_t pid, uint64_t *ret);
void hp_file_size(const char *path, int64_t *ret);

/* hp_record.c */
void hp_note_store_error(struct heapprofd *hp, int r, const char *what);
int hp_records_read(struct store *s, int64_t now_wall_ns, struct hp_load *ret);
void hp_load_release(struct hp_load *ld);
void hp_records_install(struct heapprofd *hp, struct hp_load *ld);
void hp_records_free(struct heapprofd *hp);
int64_t hp_record_id(struct heapprofd *hp);
int hp_record_put(struct heapprofd *hp, const struct hp_record *r,
    const char *what);
bool hp_record_outcome(const struct heapprofd *hp, int64_t id, char *ret,
    size_t retsz);
int hp_budget_note(struct heapprofd *hp, int64_t start_wall_ns,
    const char *key);
const struct hp_budget_rec *hp_budget_recs(struct heapprofd *hp,
    int64_t now_wall_ns, size_t *ret_n);

/* hp_check.c */
void hp_check_start(struct heapprofd *hp, const struct hp_record *r,
    const struct hp_want *w);
void hp_check_stop(struct heapprofd *hp);
void hp_check_free(struct heapprofd *hp);

/* hp_expire.c */
void hp_expire_run(struct heapprofd *hp);
void hp_expire_tick(struct heapprofd *hp);

/* hp_session.c */
int hp_session_setup(struct heapprofd *hp, const struct config *cfg,
    const struct privs_helpers *helpers);
int hp_session_spawn(struct heapprofd *hp, const struct hp_params *p,
    const uint8_t *cfg, size_t len, char *why, size_t whysz);
void hp_session_arm(struct heapprofd *hp, uint32_t ms);
void hp_session_term(struct heapprofd *hp);
void hp_session_stop(struct heapprofd *hp);

#endif
