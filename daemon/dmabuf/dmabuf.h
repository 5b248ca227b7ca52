/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA-BUF per process (doc/metrics.md, "DMA-BUF"): the buffers each
 * process holds through file descriptors, found by a pass over
 * <proc>/<pid>/fd and fdinfo (and <sys>/kernel/dmabuf/buffers/<inode>
 * where the kernel has it), deduplicated by inode so a buffer several
 * processes share is counted once in every total and its sharers listed.
 * A pass runs at a window's close when dmabuf_interval_s has passed since
 * the last one, and reads at most dmabuf_fd_budget descriptors.
 *
 * dmabuf_parse.c holds the pure parsers and the tally of one pass's
 * holdings (no I/O), dmabuf.c the pass, dmabuf_window.c the window part
 * (free, copy, merge, dump).
 */
#ifndef VITALSD_DMABUF_DMABUF_H
#define VITALSD_DMABUF_DMABUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "window/window.h"

#define DMABUF_NAME_LEN 32	     /* the kernel's DMA_BUF_NAME_LEN */
#define DMABUF_COMM_LEN 16	     /* TASK_COMM_LEN */
#define DMABUF_PROCS_DEFAULT 64	     /* process rows a pass keeps */
#define DMABUF_PROCS_MAX 1024	     /* the key's bound; roll-ups too */
#define DMABUF_EXPS_MAX 64	     /* exporter rows (then "other") */
#define DMABUF_SHARED_MAX 32	     /* shared buffers listed, largest */
#define DMABUF_SHARERS_MAX 8	     /* pids listed per shared buffer */
#define DMABUF_INTERVAL_S_DEFAULT 60 /* between passes */
#define DMABUF_FD_BUDGET_DEFAULT 65536

/* ------------------------------------------------------ dmabuf_parse.c */

/* fdinfo lines seen (dma_buf_show_fdinfo and the generic head) */
#define DMABUF_FDI_SIZE (1u << 0)
#define DMABUF_FDI_COUNT (1u << 1)
#define DMABUF_FDI_EXP (1u << 2)
#define DMABUF_FDI_NAME (1u << 3)
#define DMABUF_FDI_INO (1u << 4)

struct dmabuf_fdinfo {
	uint32_t have; /* DMABUF_FDI_* */
	uint64_t size, ino;
	int64_t count;
	char exp_name[DMABUF_NAME_LEN];
	char name[DMABUF_NAME_LEN];
};

/* The link text of <pid>/fd/<n> names a DMA-BUF ("/dmabuf:<name>" since
 * 5.3, "anon_inode:dmabuf" before). */
bool dmabuf_link_is(const char *target, size_t len);
/* /proc/<pid>/fdinfo/<fd> of a DMA-BUF into *ret. -EINVAL: no size: line,
 * a size or count that is not a number, a line cut before its newline,
 * a NUL, or no exp_name: line (not a DMA-BUF's fdinfo, or truncated). */
int dmabuf_parse_fdinfo(const char *buf, size_t len, struct dmabuf_fdinfo *ret);
/* The iterator's stream (bpf/dmabuf/dmabuf.bpf.h): the buffers and their
 * bytes. -EBADMSG: not whole records, or bytes past 2^64. buf must be 8-byte aligned. */
int dmabuf_iter_parse(const void *buf, size_t len, uint32_t *ret_n,
    uint64_t *ret_bytes);
/* A one-line sysfs file: a decimal number, or a name. -EINVAL otherwise. */
int dmabuf_parse_u64(const char *buf, size_t len, uint64_t *ret);
int dmabuf_parse_name(const char *buf, size_t len, char *out, size_t sz);

/* One buffer one process holds (one per fd; the tally dedups). */
struct dmabuf_hold {
	int32_t pid;
	char comm[DMABUF_COMM_LEN];
	uint64_t ino, size;
	char exp[DMABUF_NAME_LEN]; /* "" unknown */
};

/* ---------------------------------------------------- the window part */

struct dmabuf_proc {
	int32_t pid; /* -1: "other", the processes past the row bound */
	char name[DMABUF_COMM_LEN];
	uint32_t passes;       /* passes it held a buffer in */
	uint32_t fds, buffers; /* of its last pass */
	uint64_t bytes;	       /* of its last pass: Σ size, each once */
	uint64_t bytes_max;    /* over its passes */
	uint64_t shared_bytes; /* of bytes, buffers another process holds */
	uint64_t pss_bytes;    /* Σ size / sharers */
	uint32_t procs;	       /* "other": processes folded in */
};

struct dmabuf_exp {
	char name[DMABUF_NAME_LEN]; /* "" unknown exporter */
	bool other;		    /* the exporters past DMABUF_EXPS_MAX */
	uint32_t passes;
	uint32_t buffers; /* of its last pass */
	uint64_t bytes, bytes_max;
};

struct dmabuf_shared {
	uint64_t ino, size;
	char exp[DMABUF_NAME_LEN];
	uint32_t sharers; /* processes holding it */
	uint32_t npids;	  /* listed: at most DMABUF_SHARERS_MAX */
	int32_t pids[DMABUF_SHARERS_MAX];
};

struct window_dmabuf {
	uint32_t passes;      /* passes folded in */
	int64_t pass_wall_ns; /* the last one's */
	/* the last pass's totals, every buffer once */
	uint64_t total_bytes, shared_bytes;
	uint32_t buffers, shared_buffers;
	uint64_t total_bytes_max; /* over the passes */
	/* counted over the passes */
	uint32_t procs_scanned;	   /* fd directories read */
	uint32_t procs_skipped;	   /* not reached: the fd budget was spent */
	uint32_t procs_unreadable; /* fd directory refused (EACCES, ...) */
	uint32_t procs_gone;	   /* exited while read */
	uint64_t fds_read;	   /* links read */
	uint32_t fds_dmabuf;	   /* of those, DMA-BUFs */
	uint32_t fdinfo_invalid;   /* a DMA-BUF's fdinfo did not parse */
	uint32_t sysfs_found;	   /* buffers with a sysfs entry */
	uint32_t size_mismatch;	   /* fdinfo and sysfs sizes differ */
	uint32_t procs_cut, exps_cut, shared_cut; /* folded / not listed */
	uint64_t pass_ns_sum, pass_ns_max;
	/* the kernel's list of every DMA-BUF (iter/dmabuf, dmabuf_iter.c):
	 * passes that read it, of those the passes it had no buffer in (no
	 * process can hold one: no fd directory read), reads that failed
	 * (the pass walked /proc); the last reading pass's buffers and
	 * bytes; why the list is not read (the last pass's) */
	uint32_t kernel_passes, passes_no_buffer, iter_errors;
	uint32_t kernel_buffers;
	uint64_t kernel_bytes;
	uint32_t iter_why; /* enum dmabuf_iter_why */
	/* window closes a pass fell due at while the last one still ran on
	 * its worker (none started); counted in the part of that pass */
	uint32_t passes_overlapped;
	size_t nprocs, nexps, nshared;
	struct dmabuf_proc *procs;    /* by bytes, largest first */
	struct dmabuf_exp *exps;      /* by bytes, largest first */
	struct dmabuf_shared *shared; /* by size, largest first */
};

static inline struct window_dmabuf *
window_dmabuf(const struct window *w)
{
	return (struct window_dmabuf *)window_part(w, WPART_DMABUF);
}

/* dmabuf_parse.c: one pass's holdings (sorted in place) into a new part
 * with passes = 1: procs_max process rows, the rest one "other" row. */
int dmabuf_tally(struct dmabuf_hold *h, size_t n, unsigned procs_max,
    struct window_dmabuf **ret);

/* dmabuf_window.c */
struct window_dmabuf *window_dmabuf_new(void);
void window_dmabuf_free(struct window_dmabuf *p);
struct window_dmabuf *window_dmabuf_dup(const struct window_dmabuf *p);
/* src (a later pass or window) into *accp; either may be NULL */
int window_dmabuf_merge(struct window_dmabuf **accp,
    const struct window_dmabuf *src);
void window_dmabuf_sort(struct window_dmabuf *p);
extern const struct window_part_ops dmabuf_window_part;

/* ------------------------------------------------------- dmabuf_iter.c */

/* Why the pass does not read the kernel's list (Dmabuf.iter_why). */
enum dmabuf_iter_why {
	DMABUF_ITER_WHY_UNKNOWN,   /* a part from before the list was read */
	DMABUF_ITER_WHY_NONE,	   /* it does */
	DMABUF_ITER_WHY_CONFIG,	   /* dmabuf_iter = off */
	DMABUF_ITER_WHY_BUILD,	   /* built without BPF */
	DMABUF_ITER_WHY_ROOT,	   /* proc_root is not a procfs (fixtures) */
	DMABUF_ITER_WHY_NO_BTF,	   /* no <sys>/kernel/btf/vmlinux */
	DMABUF_ITER_WHY_PRIVILEGE, /* EPERM: no CAP_BPF + CAP_PERFMON */
	DMABUF_ITER_WHY_KERNEL,	   /* no iter/dmabuf: a kernel before 6.16 */
	DMABUF_ITER_WHY_VERIFIER,  /* open or load failed otherwise */
	DMABUF_ITER_WHY_ATTACH,	   /* the iterator link was not made */
	DMABUF_ITER_WHY_READ,	   /* the read at setup failed */
	DMABUF_ITER_WHY_BPF_LOAD,  /* bpf_load is not auto: no own loads */
	DMABUF_ITER_WHY__MAX
};

struct dmabuf_iter;

const char *dmabuf_iter_why_name(enum dmabuf_iter_why why);
/* Load and attach (in a child), then one read; *ret_why: the stage that
 * failed. -EOPNOTSUPP without BPF in the build. */
int dmabuf_iter_open(const char *sys_root, struct dmabuf_iter **ret,
    enum dmabuf_iter_why *ret_why);
/* The kernel's DMA-BUFs now: how many, their bytes. */
int dmabuf_iter_count(struct dmabuf_iter *it, uint32_t *ret_n,
    uint64_t *ret_bytes);
struct dmabuf_iter *dmabuf_iter_free(struct dmabuf_iter *it);

/* ------------------------------------------------------------ dmabuf.c */

struct dmabuf_config {
	bool on;
	unsigned interval_s; /* 0: a pass at every window's close */
	unsigned fd_budget;  /* links read per pass */
	unsigned procs_max;  /* process rows per pass */
	bool iter;	     /* dmabuf_iter: read the kernel's list first */
};

/* config_dmabuf.c (config's layer): the dmabuf* keys; -ENOENT not one */
void dmabuf_config_init(struct dmabuf_config *c);
int dmabuf_config_set(struct dmabuf_config *c, const char *key,
    const char *value);

struct dmabuf_opts {
	const char *proc_root;
	const char *sys_root;
	const struct dmabuf_config *cfg;
	/* the loop a pass's end is told on; NULL: passes on the caller */
	struct event_base *base;
	/* bpf_load is not auto (pinned-only, off): the daemon loads no
	 * program of its own, this iterator included */
	bool no_bpf_load;
};

struct dmabuf;

int dmabuf_new(const struct dmabuf_opts *o, struct dmabuf **ret);
struct dmabuf *dmabuf_free(struct dmabuf *db);
/* One pass now, into a new part (the caller's). */
int dmabuf_pass(struct dmabuf *db, int64_t wall_ns, struct window_dmabuf **ret);
/* At a window's close: the part of the last pass that ended since the
 * last close given to w, then a pass started when one is due (on the
 * worker; without one on the loop, its part to w). */
int dmabuf_window(struct dmabuf *db, struct window *w, int64_t mono_ns);
/* A pass runs on the worker. */
bool dmabuf_busy(const struct dmabuf *db);
/* Waits for a running pass; its part goes to the next window. */
void dmabuf_settle(struct dmabuf *db);
/* Shutdown, before the last close: waits for a running pass (its part
 * goes to that window) and runs later passes on the caller, so the last
 * window gets a due pass rather than one dmabuf_free cancels. */
void dmabuf_stop(struct dmabuf *db);
/* tests: passes on the caller; each pass ms slower */
void dmabuf_test_no_worker(struct dmabuf *db);
void dmabuf_test_delay(struct dmabuf *db, unsigned ms);
/* Why the kernel's list is not read (NONE: it is). */
enum dmabuf_iter_why dmabuf_iter_state(const struct dmabuf *db);
/* The last pass's part; NULL before the first. */
const struct window_dmabuf *dmabuf_last(const struct dmabuf *db);

#endif /* VITALSD_DMABUF_DMABUF_H */
