/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU memory per process from a GpuMem total map: its part of a window,
 * the reader (gpumem.c), the map walk (gpumem_map.c) and vitalsd's own
 * program (gpumem_bpf.c).
 */
#ifndef VITALSD_GPUMEM_H
#define VITALSD_GPUMEM_H

#include "core/util.h"
#include "window/window.h"

/*
 * GPU memory of one (gpu, pid) pair as the driver last reported it through
 * gpu_mem/gpu_mem_total (doc/gpumem.md). pid 0 is that GPU's global total.
 */
struct window_gpu_proc {
	uint32_t gpu_id;
	int32_t pid;	    /* 0: that GPU's global total */
	uint64_t starttime; /* process instance; 0 when stale/unknown */
	uint64_t bytes;	    /* at window end */
	uint64_t min_bytes, max_bytes; /* within the window */
	uint64_t imported_bytes; /* of bytes, imported (window_gpumem.imported
				  * maps only; not stored) */
	bool stale;
	char name[VITALS_NAME_LEN]; /* process name when attributed, else "" */
};

/* Where the GpuMem map stands (window_gpumem.state); stored as numbers. */
enum gpumem_state {
	GPUMEM_UNKNOWN,	 /* not reported (older window, no GpuMem part) */
	GPUMEM_NOT_INIT, /* no map to read: why says which */
	GPUMEM_EMPTY,	 /* the map is read and holds no entry */
	GPUMEM_ERROR,	 /* open, layout check or traversal failed: err */
	GPUMEM_OK,	 /* the map is read and holds entries */
	GPUMEM__MAX
};

enum gpumem_why {
	GPUMEM_WHY_NONE,
	GPUMEM_WHY_DISABLED,  /* gpumem = off */
	GPUMEM_WHY_NO_MAP,    /* no map at the path, no own program to load */
	GPUMEM_WHY_WAITING,   /* own program loaded; tracepoint not there yet */
	GPUMEM_WHY_TP_ABSENT, /* own program: no tracepoint in the retry time */
	GPUMEM_WHY_LOAD,      /* own program did not load (err) */
	GPUMEM_WHY_OPEN,      /* the map could not be opened (err) */
	GPUMEM_WHY_LAYOUT,    /* the map is not AOSP's layout */
	GPUMEM_WHY_TRAVERSE,  /* the last traversal failed (err) */
	GPUMEM_WHY__MAX
};

enum gpumem_source {
	GPUMEM_SRC_NONE,
	GPUMEM_SRC_PINNED, /* a platform loader's pinned map (gpumem_map) */
	GPUMEM_SRC_OWN,	   /* vitalsd's own gpu_mem program */
};

/* A window's view of the map and of its reading. */
struct window_gpumem {
	uint32_t state;	   /* enum gpumem_state at close */
	uint32_t why;	   /* enum gpumem_why */
	int32_t err;	   /* −errno behind why, 0 none */
	uint32_t source;   /* enum gpumem_source */
	uint32_t capacity; /* max_entries of the map; 0 unknown */
	uint32_t entries;  /* keys in the last traversal, globals included */
	bool saturated;	   /* a traversal found it within 1/64 of capacity */
	uint32_t traversals, traversal_fail;
	uint32_t restarts;    /* cursor key deleted: the kernel began anew */
	uint32_t vanished;    /* keys gone between get-next-key and lookup */
	uint32_t duplicates;  /* keys seen again after a restart, skipped */
	uint32_t truncated;   /* walks stopped at the step bound */
	uint32_t batch_walks; /* traversals read by batch lookups */
	uint32_t recovered;   /* keys a walk missed that a lookup found */
	uint32_t stale;	      /* entries marked stale at window end */
	uint64_t events;      /* gpumem_note_event() calls (ftrace) */
	uint64_t events_late; /* of them, stamped before the window began */
	uint64_t traverse_ns, traverse_ns_max;
	uint64_t tp_events;   /* own program: tracepoint hits, Δ */
	uint64_t insert_fail; /* own program: inserts the full map refused, Δ */
	bool imported;	      /* the map's values carry an imported size
			       * (16-byte values; not stored) */
};

/* A window's GpuMem part: the map's state and, per (gpu, pid), the bytes
 * at the window's end with their range inside it, in gpumem_proc_cmp()
 * order. */
struct window_gpumem_part {
	struct window_gpumem st;
	size_t n_gpu;
	struct window_gpu_proc *gpu;
};

/* The GpuMem part of w (window_parts[WPART_GPUMEM]), NULL: none (the
 * window has no GpuMem state: GPUMEM_UNKNOWN). */
static inline struct window_gpumem_part *
window_gpumem(const struct window *w)
{
	return (struct window_gpumem_part *)window_part(w, WPART_GPUMEM);
}

/* gpumem_window.c: names, the order of pairs, w's part made when it has
 * none (NULL: no memory), its operations for window.c, rollup.c, dump.c */
const char *gpumem_state_name(unsigned st);
const char *gpumem_why_name(unsigned why);
const char *gpumem_source_name(unsigned src);
int gpumem_proc_cmp(const struct window_gpu_proc *a,
    const struct window_gpu_proc *b);
int gpumem_proc_qcmp(const void *a, const void *b);
struct window_gpumem_part *window_gpumem_make(struct window *w);
extern const struct window_part_ops gpumem_window_part;

/* ------------------------------------------- gpumem.c, gpumem_bpf.c */

/*
 * The platform's pins, tried in order (a ':'-separated list): AOSP main's
 * gpu_mem.o pins map_gpu_mem_gpu_mem_total_map; Android 15 and older
 * (gpuMem.o) pin map_gpuMem_gpu_mem_total_map.
 */
#define VITALS_GPUMEM_MAP_MAIN "/sys/fs/bpf/map_gpu_mem_gpu_mem_total_map"
#define VITALS_GPUMEM_MAP_OLD "/sys/fs/bpf/map_gpuMem_gpu_mem_total_map"
#define VITALS_GPUMEM_MAP VITALS_GPUMEM_MAP_MAIN ":" VITALS_GPUMEM_MAP_OLD
#define VITALS_GPUMEM_ATTACH_S 30 /* own program: attach retry time */

/* Config `gpumem_load`: may vitalsd load its own program. */
enum gpumem_load {
	GPUMEM_LOAD_AUTO,     /* own program when no map is at gpumem_map */
	GPUMEM_LOAD_MAP_ONLY, /* read gpumem_map only (Android) */
	GPUMEM_LOAD_OFF,      /* no GPU memory at all */
};

/* The scanner's answer for a pid: 0 and its live instance, or -ESRCH. */
typedef int (*gpumem_lookup_fn)(void *arg, int32_t pid, uint64_t *ret_starttime,
    char *ret_name, size_t namesz);

struct gpumem_opts {
	const char *map_path; /* the platform map, or ':'-separated maps tried
			       * in order; NULL: VITALS_GPUMEM_MAP */
	const char *bpffs;    /* own program's pins; NULL: not pinned */
	unsigned load;	      /* enum gpumem_load */
	unsigned attach_s;    /* own program: retry attaching this long */
	const char *tracefs;  /* where the tracepoint is looked up; NULL:
			       * /sys/kernel/tracing, then debug/tracing */
};

/* The live answer (GpuMem without a span). */
struct gpumem_view {
	struct window_gpumem st;       /* counters: of the open window so far */
	int64_t at_mono_ns;	       /* last traversal, 0 none */
	struct window_gpu_proc *procs; /* gpu, then pid order */
	size_t n;
};

/* One instance over a span of stored windows (store_gpumem.c). */
struct gpumem_span {
	struct window_gpu_proc p; /* bytes: at the last window's end */
	uint64_t first_bytes;	  /* at the first window's end */
	int64_t first_wall_ns, last_wall_ns; /* those windows' ends */
	uint32_t windows;		     /* windows it appears in */
	size_t series_off, series_n;	     /* its values in a gpumem_series */
};

/*
 * A span's bytes over time (store_gpumem_span_series): points oldest
 * first, each `step` consecutive windows counted back from the newest (the
 * oldest point may hold fewer) and stamped with its last window's end. An
 * instance's values sit at bytes[series_off ..] with their point in
 * index[]; a point it has no row in has no value (a gap, never 0).
 */
#define GPUMEM_SERIES_POINTS 240
#define GPUMEM_SERIES_VALUES 65536 /* all instances' values, by default */
struct gpumem_series {
	int64_t *end_wall_ns; /* per point */
	size_t n;	      /* points */
	uint32_t step;	      /* windows per point */
	uint32_t windows;     /* windows in the span */
	uint64_t *bytes;      /* nvalues, instance after instance */
	uint32_t *index;      /* each value's point, ascending per instance */
	size_t nvalues;
};

struct gpumem;
struct gpumem_bpf;

/* gpumem.c */
bool gpumem_saturated(uint32_t entries, uint32_t capacity);
int gpumem_new(const struct gpumem_opts *o, struct gpumem **ret);
struct gpumem *gpumem_free(struct gpumem *g);
void gpumem_set_lookup(struct gpumem *g, gpumem_lookup_fn fn, void *arg);
/* tests, bench: false walks by get-next-key only (default: batch where
 * the kernel has it) */
void gpumem_set_walk_batch(struct gpumem *g, bool on);
int gpumem_tick(struct gpumem *g, int64_t mono_ns);
/* The own program's first attach attempt, at setup while privileged. */
void gpumem_attach_now(struct gpumem *g, int64_t mono_ns);
bool gpumem_uses_bpf(const struct gpumem *g);
/* One gpu_mem/gpu_mem_total event (the ftrace reader): the pair's new
 * total (0: deleted), stamped on CLOCK_MONOTONIC. Loop thread only. */
void gpumem_note_event(struct gpumem *g, uint32_t gpu_id, int32_t pid,
    uint64_t size, int64_t mono_ns);
int gpumem_window(struct gpumem *g, struct window *w);
int gpumem_view(const struct gpumem *g, struct gpumem_view *ret);
void gpumem_view_release(struct gpumem_view *v);
unsigned gpumem_state(const struct gpumem *g, unsigned *ret_why, int *ret_err);
/* The pin read now, or the one whose open failed; "" none (own map). */
const char *gpumem_map_used(const struct gpumem *g);

/* gpumem_map.c: one read of a map with AOSP's layout, bpf() calls only */
#define GPUMEM_VAL_TOTAL 8     /* value: u64 total bytes (AOSP) */
#define GPUMEM_VAL_IMPORTED 16 /* value: u64 total, u64 imported of it */
struct gpumem_walk {
	uint32_t value_size; /* GPUMEM_VAL_*; 0: GPUMEM_VAL_TOTAL */
	uint64_t *key, *val; /* n pairs, each key once */
	uint64_t *imp;	     /* imported bytes; NULL unless value_size 16 */
	size_t n, cap;
	uint32_t restarts, vanished, duplicates;
	bool truncated;
	bool batch;	       /* out: read by BPF_MAP_LOOKUP_BATCH */
	bool no_batch;	       /* in: walk by get-next-key only (set once
			      * the kernel refuses batches) */
	uint64_t *bkey, *bval; /* the batch buffers, bcap pairs */
	size_t bcap;
};

int gpumem_map_open(const char *path, int *ret_fd, uint32_t *ret_capacity,
    uint32_t *ret_value_size);
int gpumem_map_check(int fd, uint32_t *ret_capacity);
int gpumem_map_layout(int fd, uint32_t *ret_capacity, uint32_t *ret_value_size);
int gpumem_map_walk(int fd, uint32_t capacity, struct gpumem_walk *ret);
int gpumem_map_lookup(int fd, uint64_t key, uint64_t ret[2]);
void gpumem_walk_release(struct gpumem_walk *wk);

/* gpumem_bpf.c: the own program; -EOPNOTSUPP without BPF */
int gpumem_bpf_load(const char *bpffs, struct gpumem_bpf **ret,
    int *ret_map_fd);
int gpumem_bpf_attach(struct gpumem_bpf *gb, const char *tracefs);
int gpumem_bpf_stats(struct gpumem_bpf *gb, uint64_t *ret_events,
    uint64_t *ret_insert_fail);
struct gpumem_bpf *gpumem_bpf_free(struct gpumem_bpf *gb);

/* gpumem.c: the state as the last window saw it */
void gpumem_get_state(const struct gpumem *g, struct window_gpumem *ret);

#endif /* VITALSD_GPUMEM_H */
