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
	uint64_t session; /* the spawn request's number */
	bool started;	  /* its answer came: child is known */
	int pending_sig;  /* asked for before the answer came */
};

/* hp_proc.c */
int64_t hp_wall_now(void);
int hp_proc_starttime(struct heapprofd *hp, int32_t pid, uint64_t *ret);
void hp_file_size(const char *path, int64_t *ret);

/* hp_session.c */
void hp_note_store_error(struct heapprofd *hp, int r, const char *what);
int hp_session_setup(struct heapprofd *hp, const struct config *cfg,
    const struct privs_helpers *helpers);
int hp_session_spawn(struct heapprofd *hp, const struct hp_params *p,
    const uint8_t *cfg, size_t len, char *why, size_t whysz);
void hp_session_arm(struct heapprofd *hp, uint32_t ms);
void hp_session_term(struct heapprofd *hp);
void hp_session_stop(struct heapprofd *hp);

#endif
