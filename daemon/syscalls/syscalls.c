/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall latency collector's loader (doc/bpf.md, "Syscall latency"):
 * the CO-RE object bpf/syscalls/ loaded, not pinned (the maps live as
 * long as the daemon holds them; a restart starts afresh, nothing for
 * another process to read), the traced set and thresholds written before
 * attach, the ring buffer's fd in the daemon's one event loop. The drain
 * is sc_drain.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loopstat.h"
#include "sc_int.h"
#include "syscalls/sc_collect.h"

_Static_assert(SC_CFG_NR_MAX == VITALS_SC_NR_MAX, "traced set size");
_Static_assert(SC_HIST_N == VITALS_SC_HIST_N, "histogram");
_Static_assert((int)SC_ERR__MAX == (int)SC_E__MAX, "error classes");

#ifdef HAVE_BPF
#include <bpf/bpf.h>

int
sc_write_ctl(struct sc_collector *sc)
{
	struct sc_ctl ctl = { .gen = sc->gen,
		.floor_ns = (uint64_t)sc->cfg.floor_us * 1000,
		.slow_ns = (uint64_t)sc->cfg.slow_ms * 1000000,
		.wake_bytes = sc->rb_size / SC_WAKE_DIV };
	uint32_t zero = 0;

	/* slow_ms 0: every traced call is slow (tests); ns 0 means none */
	if (sc->cfg.slow_ms == 0)
		ctl.slow_ns = 1;
	if (bpf_map_update_elem(sc->ctl_fd, &zero, &ctl, BPF_ANY) < 0)
		return -errno;
	return 0;
}
#endif

#if defined(HAVE_BPF) && defined(HAVE_BPF_CORE)
#include <bpf/libbpf.h>
#include <event2/event.h>

#include "syscalls.skel.h"

static int
write_set(struct sc_collector *sc)
{
	uint32_t nr;
	uint8_t on;

	for (nr = 0; nr < SC_CFG_NR_MAX; nr++) {
		on = sc_config_traced(&sc->cfg, nr);
		if (bpf_map_update_elem(sc->traced_fd, &nr, &on, BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

static int
rb_record(void *ctx, void *data, size_t size)
{
	struct sc_collector *sc = ctx;
	const struct sc_rec *r = data;
	struct sc_slow *s;

	sc->rb_records++;
	if (size < sizeof(*r))
		return 0;
	if (sc->nslow >= sc->cfg.slow_max) {
		sc->slow_dropped++;
		return 0;
	}
	if (sc->nslow == sc->slow_cap) {
		size_t cap = sc->slow_cap ? sc->slow_cap * 2 : 16;

		if (cap > sc->cfg.slow_max)
			cap = sc->cfg.slow_max;
		s = realloc(sc->slow, cap * sizeof(*s));
		if (s == NULL) {
			sc->slow_dropped++;
			return 0;
		}
		sc->slow = s;
		sc->slow_cap = cap;
	}
	s = &sc->slow[sc->nslow++];
	memset(s, 0, sizeof(*s));
	s->tid = r->tid;
	s->tgid = r->tgid;
	s->start_ns = r->start_ns;
	memcpy(s->comm, r->comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	s->nr = r->nr;
	s->ret = r->ret;
	s->boot_enter_ns = (int64_t)r->t_enter;
	s->lat_ns = r->lat_ns;
	return 0;
}

static int
rb_read(struct sc_collector *sc)
{
	int r = ring_buffer__consume(sc->rb);

	return r < 0 ? r : 0;
}

int
sc_poll(struct sc_collector *sc)
{
	if (sc->rb == NULL)
		return 0;
	sc->rb_reads++;
	return rb_read(sc);
}

/* the ring a quarter full: its fd ready */
static void
rb_cb_run(evutil_socket_t fd, short what, void *arg)
{
	struct sc_collector *sc = arg;

	(void)fd;
	(void)what;
	sc->rb_wakeups++;
	(void)rb_read(sc);
}

/* timed for the window's longest loop callback (core/loopstat.c) */
static void
rb_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t t0 = loopstat_begin();

	rb_cb_run(fd, what, arg);
	loopstat_end("sc ring", t0);
}

int
sc_set_base(struct sc_collector *sc, struct event_base *base)
{
	if (sc->ev != NULL || sc->rb == NULL)
		return 0;
	sc->ev = event_new(base, ring_buffer__epoll_fd(sc->rb),
	    EV_READ | EV_PERSIST, rb_cb, sc);
	if (sc->ev == NULL || event_add(sc->ev, NULL) < 0) {
		if (sc->ev)
			event_free(sc->ev);
		sc->ev = NULL;
		return -ENOMEM;
	}
	return 0;
}

static unsigned
rb_bytes(unsigned kib)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned b = kib * 1024;

	if (page > 0 && b < (unsigned long)page)
		b = (unsigned)page;
	return b;
}

int
sc_new(const struct sc_opts *o, struct sc_collector **ret)
{
	struct sc_collector *sc;
	struct vitals_syscalls *skel;
	int r;

	*ret = NULL;
	if (o->bpffs != NULL)
		return sc_ldr_new(o, ret);
	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return -ENOMEM;
	sc->cfg = *o->cfg;
	sc->arch = sysnames_native();
	if ((sc->ncpu = libbpf_num_possible_cpus()) <= 0) {
		r = sc->ncpu < 0 ? sc->ncpu : -EINVAL;
		goto fail;
	}
	if ((skel = vitals_syscalls__open()) == NULL) {
		r = -errno;
		goto fail;
	}
	sc->skel = skel;
	sc->rb_size = rb_bytes(sc->cfg.rb_kib);
	if ((r = bpf_map__set_max_entries(skel->maps.sc_rb, sc->rb_size)) < 0)
		goto fail;
	if ((r = vitals_syscalls__load(skel)) < 0)
		goto fail;
	sc->ctl_fd = bpf_map__fd(skel->maps.sc_ctl);
	sc->barrier_fd = bpf_map__fd(skel->maps.sc_barrier);
	sc->agg_fd[0] = bpf_map__fd(skel->maps.sc_agg0);
	sc->agg_fd[1] = bpf_map__fd(skel->maps.sc_agg1);
	sc->stats_fd = bpf_map__fd(skel->maps.sc_stats);
	sc->traced_fd = bpf_map__fd(skel->maps.sc_traced);
	sc->prog_fd[0] = bpf_program__fd(skel->progs.vitals_sys_enter);
	sc->prog_fd[1] = bpf_program__fd(skel->progs.vitals_sys_exit);
	if ((r = sc_write_ctl(sc)) < 0 || (r = write_set(sc)) < 0)
		goto fail;
	sc->rb = ring_buffer__new(bpf_map__fd(skel->maps.sc_rb), rb_record, sc,
	    NULL);
	if (sc->rb == NULL) {
		r = -errno;
		goto fail;
	}
	if (o->base != NULL && (r = sc_set_base(sc, o->base)) < 0)
		goto fail;
	if ((r = vitals_syscalls__attach(skel)) < 0)
		goto fail;
	log_info("syscalls: attached (raw_syscalls sys_enter/sys_exit, "
		 "ring buffer %u B, woken at %u B)",
	    sc->rb_size, sc->rb_size / SC_WAKE_DIV);
	*ret = sc;
	return 0;
fail:
	if (r == 0)
		r = -EINVAL;
	sc_free(sc);
	return r;
}

int
sc_reconfig(struct sc_collector *sc, const struct sc_config *cfg)
{
	bool set = memcmp(sc->cfg.set, cfg->set, sizeof(cfg->set)) != 0;
	int r;

	if (sc->ldr) { /* the set applies at the drain */
		sc->cfg = *cfg;
		return 0;
	}
	/* rb_kib is the ring buffer's size, fixed at load */
	sc->cfg.floor_us = cfg->floor_us;
	sc->cfg.slow_ms = cfg->slow_ms;
	sc->cfg.top = cfg->top;
	sc->cfg.slow_max = cfg->slow_max;
	memcpy(sc->cfg.set, cfg->set, sizeof(cfg->set));
	if ((r = sc_write_ctl(sc)) < 0)
		return r;
	return set ? write_set(sc) : 0;
}

size_t
sc_pending_slow(const struct sc_collector *sc)
{
	return sc->nslow;
}

void
sc_ring_stats(const struct sc_collector *sc, struct sc_ring_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (sc == NULL || sc->rb == NULL)
		return;
	ret->size = sc->rb_size;
	ret->wake_bytes = sc->rb_size / SC_WAKE_DIV;
	ret->wakeups = sc->rb_wakeups;
	ret->reads = sc->rb_reads;
	ret->records = sc->rb_records;
}

unsigned
sc_attached(const struct sc_collector *sc)
{
	unsigned n = 0, i;

	if (sc->ldr) {
		for (i = 0; i < SC_LDR_PROGS; i++)
			n += sc->perf_fd[i] >= 0;
		return n;
	}
	return (sc->skel->links.vitals_sys_enter != NULL) +
	    (sc->skel->links.vitals_sys_exit != NULL);
}

int
sc_prog_ids(const struct sc_collector *sc, uint32_t ids[2])
{
	struct bpf_prog_info info;
	uint32_t len;
	int i;

	for (i = 0; i < SC_NPROG; i++) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(sc->prog_fd[i], &info, &len) < 0)
			return -errno;
		ids[i] = info.id;
	}
	return 0;
}

void
sc_free(struct sc_collector *sc)
{
	if (sc == NULL)
		return;
	if (sc->ldr) {
		sc_ldr_free(sc);
		return;
	}
	if (sc->ev)
		event_free(sc->ev);
	ring_buffer__free(sc->rb);
	vitals_syscalls__destroy(sc->skel);
	free(sc->slow);
	free(sc);
}

#else /* no CO-RE object in this build */

/* the platform loader's pins only (Android) */
int
sc_new(const struct sc_opts *o, struct sc_collector **ret)
{
	*ret = NULL;
	return o->bpffs != NULL ? sc_ldr_new(o, ret) : -EOPNOTSUPP;
}

int
sc_reconfig(struct sc_collector *sc, const struct sc_config *cfg)
{
	sc->cfg = *cfg;
	return 0;
}

int
sc_poll(struct sc_collector *sc)
{
	(void)sc;
	return 0;
}

int
sc_set_base(struct sc_collector *sc, struct event_base *base)
{
	(void)sc;
	(void)base;
	return -EOPNOTSUPP;
}

size_t
sc_pending_slow(const struct sc_collector *sc)
{
	(void)sc;
	return 0;
}

void
sc_ring_stats(const struct sc_collector *sc, struct sc_ring_stats *ret)
{
	(void)sc;
	memset(ret, 0, sizeof(*ret));
}

unsigned
sc_attached(const struct sc_collector *sc)
{
	unsigned n = 0, i;

	for (i = 0; i < SC_LDR_PROGS; i++)
		n += sc->perf_fd[i] >= 0;
	return n;
}

int
sc_prog_ids(const struct sc_collector *sc, uint32_t ids[2])
{
	(void)sc;
	ids[0] = ids[1] = 0;
	return -EOPNOTSUPP;
}

void
sc_free(struct sc_collector *sc)
{
	if (sc != NULL)
		sc_ldr_free(sc);
}
#endif
