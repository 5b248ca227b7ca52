/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the working-set monitor's files (wss.c, wss_window.c): a
 * target's and the monitor's state.
 */
#ifndef VITALSD_WSS_INT_H
#define VITALSD_WSS_INT_H

#include "core/util.h"
#include "privs/privs.h"
#include "wss/wss.h"

struct target {
	struct wss_status st; /* what wss_get shows */
	struct wss *w;
	struct event *ev;
	int pmfd;	/* <pid>/pagemap */
	int logfd;	/* page-level log; −1 none */
	bool marked;	/* a pass has begun and not ended */
	bool reload;	/* maps changed: regions rebuilt at next begin */
	unsigned asked; /* enum wss_method asked for */
	unsigned pass_method;
	uint64_t maps_hash;
	bool have_hash;
	size_t npages; /* Σ regions' sampled pages */
	size_t regions_cap;
	uint64_t *raw0, *raw1; /* pagemap at begin and at end */
	uint64_t *pfn;
	size_t raw_cap;
	struct wss_idle idle;
	uint64_t cost_ns, cost_cpu_ns; /* this pass so far */
	/* since the last window closed (wss_window_fill) */
	uint32_t win_passes;
	uint64_t win_ns_sum, win_ns_max, win_cpu_ns;
	uint64_t win_maps0, win_err0, win_zero0; /* counters at the last */
	bool win_ended_told; /* an ended target is in one window only */
};

struct wss {
	struct event_base *base;
	struct wss_config cfg; /* log_dir owned */
	int procfd;
	int bmfd;   /* page_idle bitmap, −1 absent */
	int bm_err; /* why it is absent */
	unsigned page_size;
	struct target **t;
	size_t nt, cap;
	size_t npages; /* Σ live targets' sampled pages */
	struct event *rules_ev;
	struct vbuf buf;
	bool damon;
	char damon_note[160];
	/* how target files are opened (wss_open.c) */
	bool helper;	  /* a privileged helper was there at setup */
	bool weak;	  /* dropping without helper nor the capabilities */
	char access[192]; /* Health.wss.access */
	uint64_t denied;  /* opens the daemon's credentials refused */
};

/* wss.c */
struct target *wss_target_find(struct wss *w, int32_t pid);
int wss_read_ident(struct wss *w, int32_t pid, uint64_t *ret_start, char *name,
    size_t namesz);

/* wss_open.c */
void wss_access_setup(struct wss *w, const struct wss_opts *o);
int wss_open(struct target *t, enum privhelper_file which, int *ret_fd);
int wss_read(struct target *t, enum privhelper_file which, struct vbuf *b);
int wss_open_bitmap(struct wss *w, const char *sys_root);

#endif /* VITALSD_WSS_INT_H */
