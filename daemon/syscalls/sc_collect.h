/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall latency collector (syscalls.c, sc_drain.c): its settings
 * (parsed by config/config_syscalls.c), the loader and the drain that
 * hands each closing window a struct window_syscalls (syscalls.h).
 */
#ifndef VITALSD_SC_COLLECT_H
#define VITALSD_SC_COLLECT_H

#include <stdbool.h>
#include <stdint.h>

#include "syscalls/syscalls.h"

struct event_base;
struct window;

#define SC_CFG_NR_MAX 1024 /* = VITALS_SC_NR_MAX (bpf/syscalls) */
#define SC_SLOW_MAX_DEFAULT 64
#define SC_SLOW_MS_DEFAULT 50
#define SC_RB_KIB_DEFAULT 64

/* syscall_* keys (doc/vitalsd.conf.5.md) */
struct sc_config {
	bool on;			/* syscall_trace */
	uint8_t set[SC_CFG_NR_MAX / 8]; /* syscalls: bit nr, native ABI */
	uint32_t floor_us, slow_ms;	/* syscall_floor_us, syscall_slow_ms */
	uint32_t top, slow_max, rb_kib; /* syscall_top, _slow_max, _rb_kib */
};

/* config/config_syscalls.c */
void sc_config_init(struct sc_config *c);
int sc_config_set(struct sc_config *c, const char *key, const char *v);
static inline bool
sc_config_traced(const struct sc_config *c, uint32_t nr)
{
	return nr < SC_CFG_NR_MAX && (c->set[nr / 8] >> (nr % 8) & 1);
}

/* syscalls in the traced set */
static inline unsigned
sc_config_count(const struct sc_config *c)
{
	unsigned n = 0, i;

	for (i = 0; i < SC_CFG_NR_MAX / 8; i++)
		n += (unsigned)__builtin_popcount(c->set[i]);
	return n;
}

struct sc_opts {
	const struct sc_config *cfg;
	struct event_base *base; /* the loop the ring buffer's fd joins */
	/* non-NULL: the platform loader's pins of vitalsd_sc.o there
	 * (bpf/aosp/vitalsd_sc.c) instead of loading our object */
	const char *bpffs;
	const char *proc_root; /* NULL: /proc (start times, pins mode) */
	const char *instance;  /* tracefs instance for event ids (pins) */
};

struct sc_collector;

/* Load, fill the traced set, attach, join the loop. -errno; *ret NULL. */
int sc_new(const struct sc_opts *o, struct sc_collector **ret);
/* The ring buffer's fd into base's loop (when sc_new had none). */
int sc_set_base(struct sc_collector *sc, struct event_base *base);
/* A changed set or thresholds, written into the maps (no re-attach). */
int sc_reconfig(struct sc_collector *sc, const struct sc_config *cfg);
/*
 * Read what the ring buffer holds: the daemon's tick and a drain's first
 * half. The fd is ready (the loop woken) only once the ring is a quarter
 * full (SC_WAKE_DIV); below that a record waits for the next tick.
 */
int sc_poll(struct sc_collector *sc);
#define SC_WAKE_DIV 4
void sc_ring_stats(const struct sc_collector *sc, struct sc_ring_stats *ret);
/* The window's part: drain the old side into it. NULL: no memory. */
struct window_syscalls *sc_drain(struct sc_collector *sc);
/*
 * sc_drain in two halves, for a drain off the loop: _begin on the loop
 * (the slow calls so far, the flip: no waiting), _end on one other thread
 * at a time (the grace period, the reads; it returns the part to give the
 * window, NULL without memory). Between them the loop may poll the ring
 * buffer but must not call sc_reconfig, sc_drain* or sc_free.
 */
struct window_syscalls *sc_drain_begin(struct sc_collector *sc);
struct window_syscalls *sc_drain_end(struct sc_collector *sc,
    struct window_syscalls *p);
/*
 * sc_async.c: sc_drain_begin on the caller's thread, sc_drain_end on a
 * worker of its own; its end is told on sc_async_fd (readable).
 * sc_async_done: 1 and the part (NULL: no memory) once the drain ended
 * (wait: until it does), 0 while it runs, -EALREADY when none was started.
 * sc_async_start: -EBUSY while the last part was not taken.
 */
struct sc_async;
int sc_async_new(struct sc_collector *sc, struct sc_async **ret);
struct sc_async *sc_async_free(struct sc_async *a);
int sc_async_fd(const struct sc_async *a);
bool sc_async_busy(const struct sc_async *a);
int sc_async_start(struct sc_async *a);
int sc_async_done(struct sc_async *a, bool wait,
    struct window_syscalls **ret_p);
/* Tests: ms slept after the grace period in each sc_drain_end, a slow
 * barrier's stand-in. */
void sc_test_delay(struct sc_collector *sc, unsigned ms);
/* sc_drain, given to w with window_part_set. -errno. */
int sc_window(struct sc_collector *sc, struct window *w);
/* A part saying only state and err (SC_FAILED, SC_UNSUPPORTED). */
struct window_syscalls *sc_state_part(uint32_t state, int err);
void sc_free(struct sc_collector *sc);
/* slow calls read for the open window so far (tests) */
size_t sc_pending_slow(const struct sc_collector *sc);
/* programs attached now (our object: enter and exit; the platform
 * loader's pins: their three perf events) */
unsigned sc_attached(const struct sc_collector *sc);
/* syscalls in the set in force */
unsigned sc_traced(const struct sc_collector *sc);
/* both programs' ids (tests), 0 when absent */
int sc_prog_ids(const struct sc_collector *sc, uint32_t ids[2]);
void sc_collect_part_free(struct window_syscalls *p);

#endif
