/* SPDX-License-Identifier: Apache-2.0 */
/* A hand-built window for the client's tests, and the summary text the
 * client must print for it. */
#ifndef VITALS_CLIENT_FIXTURE_H
#define VITALS_CLIENT_FIXTURE_H

#include "client.h"

#define NS VITALS_NSEC_PER_SEC

/*
 * One window, with figures chosen so every percentage is easy by hand:
 * hz 100, window 10 s.
 *
 * burner (1234): 950 + 50 ticks over 10 s of samples:
 *   (1000/100 s) / 10 s = 100.0 %; user 95.0 %, kernel 5.0 %.
 * sysd (77, born): 3 + 2 ticks over 5 s: 0.05 s / 5 s = 1.0 %;
 *   user 0.03/5 = 0.6 %, kernel 0.02/5 = 0.4 %.
 * k\e[31m (5, exited, comm only): 0 + 1 tick over 10 s: 0.1 %.
 * all: user 700 nice 100 system 120 idle 2900 iowait 40 irq 20 softirq 20
 *   steal 100 → total 4000, busy 960 (24.0 %); user+nice 20.0 %,
 *   system 3.0 %, iowait 1.0 %, irq 0.5 %, softirq 0.5 %, steal 2.5 %.
 * PSI over all.wall_ns = 10 s: cpu some 250000 us → 2.5 %; memory some
 *   10000 us → 0.1 %, full 2000 us → 0.0 %; io unavailable.
 */
extern Vitals__Task t_burner;
extern Vitals__Task t_sysd;
extern Vitals__Task t_esc;
extern Vitals__Task *procs[3];
extern Vitals__CpuTimes all_d;
extern Vitals__CpuTimes c0_d;
extern Vitals__Cpu all_cpu;
extern Vitals__Cpu cpu0, cpu1;
extern Vitals__Cpu *cpus[2];
extern Vitals__Gauge g_load1;
extern Vitals__Gauge g_load5;
extern Vitals__Gauge g_load15;
extern Vitals__Gauge g_online;
extern Vitals__Gauge g_khz;
extern Vitals__Gauge g_ratio;
extern Vitals__Gauge g_memtotal;
extern Vitals__Gauge g_memavail;
extern Vitals__NamedGauge m_total;
extern Vitals__NamedGauge m_avail;
extern Vitals__NamedGauge *meminfo[2];
extern Vitals__Counter vm_pgfault;
extern Vitals__Counter vm_pgmaj;
extern Vitals__Counter *vmstat[2];
extern Vitals__Psi psi_cpu;
extern Vitals__Psi psi_mem;
extern Vitals__Psi psi_io;
extern Vitals__Psi *psis[3];
extern Vitals__Window win;
extern Vitals__Snapshot snap;

Vitals__Task mk_task(int32_t id, const char *name, const char *comm,
    uint64_t ut, uint64_t st, uint64_t wall_ns);
Vitals__Gauge mk_gauge(double last, double sum, uint32_t n);
/* Fill the globals above into the window and snapshot. */
void build_window(void);

/* What the client's summary prints for the window, at fctx. */
extern const char summary_text[];
extern const struct fmt_ctx fctx;

#endif
