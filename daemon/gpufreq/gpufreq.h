/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU frequency and busy time per GPU device from sysfs (issue 22, source
 * 004): the pure parsers of the driver files (gpufreq_parse.c) and the
 * collector that finds devices under a configurable sys root and folds
 * their readings into a window's gauges (gpufreq.c). Device-level: no pid.
 */
#ifndef VITALSD_GPUFREQ_H
#define VITALSD_GPUFREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "window/window.h"

#define GPUFREQ_MAX_DEV 8
#define GPUFREQ_MAX_STATES 32
#define GPUFREQ_NAME_LEN 64

enum gpufreq_kind {
	GPUFREQ_KGSL,	 /* Adreno: class/kgsl/kgsl-3d0 */
	GPUFREQ_DEVFREQ, /* a GPU's class/devfreq node, no vendor files */
	GPUFREQ_MALI,	 /* Mali: devfreq node plus device/utilisation */
};

/* Which figures a reading (and a window) has; absent means "unknown". */
enum gpufreq_have {
	GPUFREQ_HAVE_CUR = 1u << 0,	 /* cur_hz */
	GPUFREQ_HAVE_MIN = 1u << 1,	 /* min_hz (devfreq floor) */
	GPUFREQ_HAVE_MAX = 1u << 2,	 /* max_hz (devfreq or max_gpuclk) */
	GPUFREQ_HAVE_BUSY = 1u << 3,	 /* busy_us / total_us (gpubusy) */
	GPUFREQ_HAVE_BUSY_PCT = 1u << 4, /* busy_pct (gpu_busy_percentage,
					  * utilisation) */
	GPUFREQ_HAVE_TIS = 1u << 5,	 /* time in state (trans_stat) */
};

/* devfreq trans_stat: the frequency table and the ms spent in each. */
struct gpufreq_tis {
	uint32_t n;
	uint64_t hz[GPUFREQ_MAX_STATES];
	uint64_t ms[GPUFREQ_MAX_STATES];
	uint64_t total_trans;
};

/* One reading of one device's files. */
struct gpufreq_sample {
	uint32_t have; /* enum gpufreq_have */
	uint64_t cur_hz, min_hz, max_hz;
	uint64_t busy_us, total_us; /* the driver's last busy period */
	uint32_t busy_pct;
	struct gpufreq_tis tis;
};

/* A device's figures over a window (since the last gpufreq_take). */
struct gpufreq_win {
	uint32_t have;	 /* figures seen in at least one reading */
	uint32_t reads;	 /* readings folded in */
	uint32_t errors; /* files that were there but did not parse */
	uint32_t cur_n;	 /* readings with cur_hz */
	uint64_t cur_min_hz, cur_max_hz, cur_sum_hz; /* mean = sum / cur_n */
	uint64_t min_hz, max_hz;		     /* last reading's */
	uint64_t busy_us, total_us; /* Σ of sampled periods (kgsl) */
	uint32_t busy_pct_n;
	uint64_t busy_pct_sum; /* mean = sum / busy_pct_n */
	uint32_t tis_n;	       /* states in tis_* */
	uint64_t tis_hz[GPUFREQ_MAX_STATES];
	uint64_t tis_ms[GPUFREQ_MAX_STATES]; /* Δ time in state, ms */
};

struct gpufreq_dev {
	char name[GPUFREQ_NAME_LEN];
	enum gpufreq_kind kind;
	char *dir;	/* kgsl-3d0 or the devfreq node */
	char *devfreq;	/* the devfreq dir (kgsl: <dir>/devfreq), or NULL */
	char *util;	/* Mali utilisation file, or NULL */
	bool have_prev; /* prev holds a reading with trans_stat */
	struct gpufreq_tis prev;
	struct gpufreq_win win;
};

struct gpufreq {
	char *sys_root;
	uint32_t ndev;
	struct gpufreq_dev dev[GPUFREQ_MAX_DEV];
	uint64_t errors;  /* parse errors since start */
	uint64_t skipped; /* GPU devices over GPUFREQ_MAX_DEV */
	/* gpufreq_tick's readings since the last gpufreq_window */
	uint32_t win_reads;
	uint64_t win_read_ns, win_read_ns_max;
};

/* gpufreq_parse.c: bytes in, numbers out; 0 or -EINVAL (-ENOTSUP for a
 * trans_stat the driver says it does not keep). */
int gpufreq_parse_u64(const char *buf, size_t len, uint64_t *ret);
int gpufreq_parse_gpubusy(const char *buf, size_t len, uint64_t *ret_busy,
    uint64_t *ret_total);
int gpufreq_parse_pct(const char *buf, size_t len, uint32_t *ret);
int gpufreq_parse_trans_stat(const char *buf, size_t len,
    struct gpufreq_tis *ret);

/* gpufreq.c */
int gpufreq_new(const char *sys_root, struct gpufreq **ret);
void gpufreq_free(struct gpufreq *g);
int gpufreq_sample_dev(const struct gpufreq_dev *d, struct gpufreq_sample *ret,
    uint32_t *ret_errors);
void gpufreq_read(struct gpufreq *g);
void gpufreq_take(struct gpufreq *g, uint32_t i, struct gpufreq_win *ret);
const char *gpufreq_kind_name(enum gpufreq_kind k);

/* ------------------------------------------------------- the window part */

/* A device's figures in a window (or a roll-up of windows). */
struct gpufreq_wdev {
	char name[GPUFREQ_NAME_LEN];
	uint32_t kind; /* enum gpufreq_kind */
	struct gpufreq_win w;
};

/*
 * WPART_GPUFREQ: every device the collector found, with what its readings
 * gave in the window. A window of a daemon with the collector on has the
 * part even with no device (ndev 0: "0 GPU devices"); off: no part.
 */
struct window_gpufreq {
	uint32_t found;	  /* devices the collector found (the last's) */
	uint32_t skipped; /* GPU devices over GPUFREQ_MAX_DEV (the last's) */
	uint32_t windows; /* windows folded in (1 unless a roll-up) */
	uint32_t reads;	  /* collector readings (ticks) */
	uint64_t read_ns; /* Σ their cost, ns */
	uint64_t read_ns_max;
	uint32_t errors; /* Σ the devices' parse errors */
	uint32_t ndev;
	struct gpufreq_wdev *dev; /* ndev, by name */
};

static inline struct window_gpufreq *
window_gpufreq(const struct window *w)
{
	return (struct window_gpufreq *)window_part(w, WPART_GPUFREQ);
}

/* gpufreq_window.c */
struct window_gpufreq *window_gpufreq_new(uint32_t ndev);
void window_gpufreq_free(struct window_gpufreq *p);
struct window_gpufreq *window_gpufreq_dup(const struct window_gpufreq *p);
int window_gpufreq_merge(struct window_gpufreq **accp,
    const struct window_gpufreq *src);
/* fold src's figures into acc (one device, a later window's) */
void gpufreq_win_merge(struct gpufreq_win *acc, const struct gpufreq_win *src);
/* a reading of every device, timed (the daemon's sample tick) */
void gpufreq_tick(struct gpufreq *g);
/* g's devices and readings taken into w's part (replacing any) */
int gpufreq_window(struct gpufreq *g, struct window *w);
/* busy share in parts per million: kgsl's Σbusy/Σtotal, else the mean of
 * the driver's percentages; false: unknown */
bool gpufreq_busy_ppm(const struct gpufreq_win *w, uint64_t *ret);
extern const struct window_part_ops gpufreq_window_part;

#endif
