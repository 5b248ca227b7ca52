/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ftrace reader's state, shared by its drain (ftrace.c) and its
 * setup and teardown (ftrace_open.c). Not an interface: trace.h is.
 */
#ifndef VITALS_FTRACE_INT_H
#define VITALS_FTRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <tracefs.h>

#include "core/util.h"
#include "trace/trace.h"

#define FT_LOST (FEV__MAX + 1) /* pending entry: the CPU lost events */
#define FT_RUNS_MAX 1025       /* held-back records + one run per CPU */
#define TGID_CACHE 512
/* FTRACE_KEEP_PAGES (trace.h): pages of a CPU's part of rbuf kept
 * resident between drains; the rest a flood wrote are given back once a
 * drain reads no more than this */
#define FT_KEEP_PAGES FTRACE_KEEP_PAGES

struct ft_stats {
	uint64_t entries, overrun, commit_overrun, dropped, read;
};

struct pend {
	struct ftrace_rec r;
	size_t off; /* print payload in the arena, when held back */
};

struct ftrace {
	struct event_base *base;
	struct tracefs_instance *inst;
	char *name;
	struct privhelper *ph; /* removes the instance after the drop */
	int ncpu;
	int *fd;  /* trace_pipe_raw per CPU, −1 absent */
	int *sfd; /* stats per CPU, −1 absent */
	struct event **rd;
	struct event *tick;
	struct timeval tick_tv;	     /* its period */
	int64_t tick_ns, drained_ns; /* the same; the last timed drain */
	struct ft_stats *prev;
	uint64_t *last_ts;
	bool *backlog;
	size_t page_sz;
	unsigned max_pages;
	struct fdec *dec;
	struct atrace *at;
	struct pend *pend, *pend2;
	uint32_t *order; /* pend's merged order */
	size_t npend, pend_cap;
	char *rbuf; /* a drain's pages: max_pages per CPU (mmapped) */
	size_t rbuf_len;
	unsigned *rb_hi; /* per CPU: pages of its part written, not given
			  * back (resident) */
	size_t run[FT_RUNS_MAX];
	unsigned nruns;
	struct vbuf arena, arena2;
	/* loss and read figures of the open window: a head-only part
	 * (WINDOW_TRACE_HEAD bytes), its rows never used here (a whole
	 * struct window_trace is ~98 KiB of rows, zeroed every window) */
	struct window_trace *acc;
	unsigned state;
	uint32_t enabled, missing;
	bool atrace;
	bool phases; /* fault phases configured */
	int procfd;
	/* opened for writing while privileged, so the stop can still make
	 * the instance inert after a privilege drop: copy_trace_marker,
	 * tracing_on, buffer_size_kb; −1 not open */
	int copy_fd, on_fd, size_fd;
	struct {
		int32_t tid, tgid;
	} tgid_cache[TGID_CACHE];
};

int32_t ftrace_tgid_of(int32_t tid, void *arg);
int ftrace_stats_read(struct ftrace *ft, int cpu, struct ft_stats *ret);
void ftrace_pend_flush(struct ftrace *ft, uint64_t watermark);
void ftrace_tick_cb(evutil_socket_t fd, short what, void *arg);

#endif
