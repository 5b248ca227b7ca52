/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_bench's device: a population of processes and threads with their
 * names, weights, churn and load, and the 10 s windows it produces
 * (store_sim.c). store_bench.c writes them to the store and measures.
 */
#ifndef VITALS_BENCH_STORE_SIM_H
#define VITALS_BENCH_STORE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vitalsd.h"

#define WINDOW_S 10
#define HZ 100
#define SAMPLES_PER_WINDOW 10 /* 1 s cadence, the daemon's default */
#define HOT_PROCS 25	      /* active in every window */
#define WARM_PROCS 75	      /* active often (weight WARM_WEIGHT) */
#define WARM_WEIGHT 12
#define HOT_THREAD_WEIGHT 150 /* main, render and first binder threads */
/* Instance churn: a process is replaced every ~5 min, a thread every
 * ~10 s (thread pools, short-lived workers). New identities are what make
 * a coarse roll-up hold more task rows than a fine window. */
#define PROC_CHURN_PER_WINDOW (1.0 / 30)
#define THREAD_CHURN_PER_WINDOW 1.0
#define BOOT_ID "6a1e3b52-4f0c-4a8e-9d6b-2f1c7e9a0b13"

#define SEC(x) ((int64_t)(x)*NSEC_PER_SEC)
#define HOUR_S 3600
#define DAY_S (24 * HOUR_S)

struct opts {
	double days;
	const char *dir;
	unsigned nprocs, nactive, nthreads, ncpus, nqueries;
	uint64_t max_bytes;
	bool max_set;
	uint64_t seed;
	bool keep;
	const char *spool_dir; /* batched commits: the spool's directory */
	int journal;	       /* -1: the store's default */
	unsigned maint_every;  /* windows between maintenance passes */
	bool bpf;	       /* windows carry BPF sched rows (-B) */
	bool host_parts;       /* -H: cgroup, wcpu and fgbg parts (a host's) */
	bool io;	       /* -I: writes by file, kind and b-tree */
	int64_t rollup_batch;  /* -R: store_opts.rollup_batch_s; -1 default */
	bool drifting;	       /* -F drifting: figures drift (see rss_drift) */
};

struct sproc;
struct sthread;

struct sim {
	const struct opts *o;
	uint64_t rng;
	struct sproc *p;
	struct sthread *t;
	size_t np, nt;
	double *pcum; /* cumulative process weights */
	uint8_t *pchosen;
	uint32_t *active; /* indices of active processes, this window */
	size_t nact;
	uint32_t *cand; /* candidate threads, this window */
	double *ccum;
	uint8_t *tchosen;
	int32_t next_pid;
	uint32_t pool_seq;
	int64_t mono0_ns, boot_off_ns, wall0_ns;
	double level; /* machine load, a slow random walk */
	double mem[MI__MAX];
};

/* The population for o; its wall clock starts at wall0_ns. 0 or -errno. */
int sim_init(struct sim *s, const struct opts *o, int64_t wall0_ns);
void sim_free(struct sim *s);
/* Window i of the run (NULL: out of memory). */
struct window *sim_window(struct sim *s, uint64_t i);

#endif
