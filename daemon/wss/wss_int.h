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
	uint64_t id; /* names it in the opener's answers */
	/* maps, smaps, pagemap, clear_refs (enum privhelper_file), kept
	 * for the target's life and read again from offset 0; −1 not open */
	int fd[PH_FILE__MAX];
	bool fresh;	/* (re)opened, no maps read through them yet */
	int logfd;	/* page-level log; −1 none */
	bool marked;	/* a pass has begun and not ended */
	bool reload;	/* maps changed: regions rebuilt at next begin */
	unsigned asked; /* enum wss_method asked for */
	unsigned pass_method;
	uint64_t maps_hash;
	bool have_hash;
	size_t npages; /* Σ regions' sampled pages */
	/* this pass's regions, begin to end (wss_regions_show puts them in
	 * st.regions once it completes; st.regions holds shown_cap) */
	struct wss_region *work;
	size_t nwork, work_cap, shown_cap;
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
	/* wss_async.c: its pass runs on the worker; it fell due while the
	 * worker ran another's */
	bool in_pass, queued;
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
	struct privhelper *ph;	/* NULL: none */
	struct wss_opener *op;	/* the helper's opens off the loop */
	struct event *op_ev;	/* its answers are ready */
	uint64_t next_id;	/* the last target's id */
	uint64_t helper_errors; /* files the helper did not open */
	/* passes off the loop (wss_async.c): the worker, its end and the
	 * deferred start of queued passes; the target in flight; the rule
	 * scan and the helper's answers held back meanwhile; the daemon's
	 * callback between passes; wk_off: passes on the loop */
	const struct wss_pass_ops *ops;
	struct worker *wk;
	struct event *wk_ev, *kick_ev;
	struct target *job_t;
	bool rules_deferred, op_deferred, wk_off;
	void (*idle_fn)(void *);
	void *idle_arg;
	unsigned test_delay_ms; /* wss_test_delay */
	/* live targets and sampled pages when no pass ran (wss_counts) */
	uint32_t pub_live, pub_pages;
};

/* The files whose descriptors follow the address space they were opened
 * on (an exec leaves them reading nothing); clear_refs follows the task. */
#define WSS_FILES_MM \
	((1u << PH_FILE_MAPS) | (1u << PH_FILE_SMAPS) | (1u << PH_FILE_PAGEMAP))
#define WSS_FILES_ALL (WSS_FILES_MM | (1u << PH_FILE_CLEAR_REFS))

/* An opener's request and, once served, its answer. */
struct wss_open_req {
	struct wss_open_req *next;
	uint64_t id; /* the target's */
	int32_t pid;
	uint64_t starttime;
	unsigned mask;	       /* 1 << enum privhelper_file */
	int fd[PH_FILE__MAX];  /* −1: not opened */
	int err[PH_FILE__MAX]; /* 0 or the helper's −errno */
};

/* wss.c */
struct target *wss_target_find(struct wss *w, int32_t pid);
/* wss.c's pass for wss_async.c: its work (1: arm the target again, on
 * the worker or the loop; it touches the target, w->buf and w->npages,
 * never the loop's events), and the arming (loop only) */
struct wss_pass_ops {
	int (*work)(struct target *t);
	void (*arm)(struct target *t);
};
/* wss_async.c */
void wss_async_pass(struct target *t);
void wss_async_free(struct wss *w);
int wss_read_ident(struct wss *w, int32_t pid, uint64_t *ret_start, char *name,
    size_t namesz);

/* wss_regions.c */
void wss_release_pages(struct target *t);
int wss_read_maps(struct target *t, uint64_t *ret_hash);
int wss_load_regions(struct target *t);
int wss_read_pagemap(struct target *t, uint64_t *raw);
void wss_regions_gone(struct target *t);
int wss_regions_show(struct target *t);

/* wss_open.c */
void wss_access_setup(struct wss *w, const struct wss_opts *o);
int wss_file(struct target *t, enum privhelper_file which, int *ret_fd);
int wss_read(struct target *t, enum privhelper_file which, struct vbuf *b);
void wss_files_close(struct target *t, unsigned mask);
int wss_files_ask(struct target *t, unsigned mask);
int wss_files_install(struct target *t, struct wss_open_req *a);
int wss_open_bitmap(struct wss *w, const char *sys_root);
/* wss_open.c: the privileged helper's opens, on a worker thread */
struct wss_opener;
int wss_opener_new(struct privhelper *ph, struct wss_opener **ret);
struct wss_opener *wss_opener_free(struct wss_opener *op);
int wss_opener_fd(const struct wss_opener *op);
struct wss_open_req *wss_opener_take(struct wss_opener *op);
void wss_open_req_free(struct wss_open_req *a);

#endif /* VITALSD_WSS_INT_H */
