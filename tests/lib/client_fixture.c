/* SPDX-License-Identifier: Apache-2.0 */
/* A hand-built window for the client's tests, and the summary text the
 * client must print for it. */
#include "client_fixture.h"

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
Vitals__Task t_burner = VITALS__TASK__INIT;
Vitals__Task t_sysd = VITALS__TASK__INIT;
Vitals__Task t_esc = VITALS__TASK__INIT;
Vitals__Task *procs[3];
Vitals__CpuTimes all_d = VITALS__CPU_TIMES__INIT;
Vitals__CpuTimes c0_d = VITALS__CPU_TIMES__INIT;
Vitals__Cpu all_cpu = VITALS__CPU__INIT;
Vitals__Cpu cpu0 = VITALS__CPU__INIT, cpu1 = VITALS__CPU__INIT;
Vitals__Cpu *cpus[2];
Vitals__Gauge g_load1 = VITALS__GAUGE__INIT;
Vitals__Gauge g_load5 = VITALS__GAUGE__INIT;
Vitals__Gauge g_load15 = VITALS__GAUGE__INIT;
Vitals__Gauge g_online = VITALS__GAUGE__INIT;
Vitals__Gauge g_khz = VITALS__GAUGE__INIT;
Vitals__Gauge g_ratio = VITALS__GAUGE__INIT;
Vitals__Gauge g_memtotal = VITALS__GAUGE__INIT;
Vitals__Gauge g_memavail = VITALS__GAUGE__INIT;
Vitals__NamedGauge m_total = VITALS__NAMED_GAUGE__INIT;
Vitals__NamedGauge m_avail = VITALS__NAMED_GAUGE__INIT;
Vitals__NamedGauge *meminfo[2];
Vitals__Counter vm_pgfault = VITALS__COUNTER__INIT;
Vitals__Counter vm_pgmaj = VITALS__COUNTER__INIT;
Vitals__Counter *vmstat[2];
Vitals__Psi psi_cpu = VITALS__PSI__INIT;
Vitals__Psi psi_mem = VITALS__PSI__INIT;
Vitals__Psi psi_io = VITALS__PSI__INIT;
Vitals__Psi *psis[3];
Vitals__Window win = VITALS__WINDOW__INIT;
Vitals__Snapshot snap = VITALS__SNAPSHOT__INIT;

Vitals__Task
mk_task(int32_t id, const char *name, const char *comm, uint64_t ut,
    uint64_t st, uint64_t wall_ns)
{
	Vitals__Task t = VITALS__TASK__INIT;

	t.id = t.tgid = id;
	t.name = (char *)name;
	t.comm = (char *)comm;
	t.d_utime = ut;
	t.d_stime = st;
	t.wall_ns = wall_ns;
	t.samples = (uint32_t)(wall_ns / NS);
	t.uid = 1000;
	return t;
}

Vitals__Gauge
mk_gauge(double last, double sum, uint32_t n)
{
	Vitals__Gauge g = VITALS__GAUGE__INIT;

	g.min = g.max = g.last = last;
	g.sum = sum;
	g.n = n;
	return g;
}

void
build_window(void)
{
	t_burner = mk_task(1234, "burner", "burner", 950, 50, 10 * NS);
	t_burner.d_minflt = 12;
	t_burner.total_ticks = 4000;
	t_burner.norm_ticks = 2000.0;
	t_sysd = mk_task(77, "sysd", "sysd", 3, 2, 5 * NS);
	t_sysd.d_minflt = 100;
	t_sysd.d_majflt = 3;
	t_sysd.born = true;
	t_esc = mk_task(5, "", "k\x1b[31m", 0, 1, 10 * NS);
	t_esc.exited = true;
	t_esc.uid = VITALS_UID_UNKNOWN;
	/* deliberately unsorted: the client sorts by CPU */
	procs[0] = &t_esc;
	procs[1] = &t_burner;
	procs[2] = &t_sysd;

	all_d.user = 700;
	all_d.nice = 100;
	all_d.system = 120;
	all_d.idle = 2900;
	all_d.iowait = 40;
	all_d.irq = 20;
	all_d.softirq = 20;
	all_d.steal = 100;
	all_d.guest = 50; /* inside user: must not count again */
	all_cpu.cpu = -1;
	all_cpu.d = &all_d;
	all_cpu.samples = 10;
	all_cpu.wall_ns = 10 * NS;
	all_cpu.online = true;
	all_cpu.max_khz = -1;
	all_cpu.capacity = -1;

	/* cpu0: busy 300 of 1000 (30.0 %), iowait 10 (1.0 %), freq known */
	c0_d.user = 250;
	c0_d.system = 50;
	c0_d.idle = 690;
	c0_d.iowait = 10;
	g_khz = mk_gauge(1800000, 2 * 1500000, 2);
	g_ratio = mk_gauge(0.9, 1.5, 2);
	cpu0.cpu = 0;
	cpu0.d = &c0_d;
	cpu0.samples = 10;
	cpu0.wall_ns = 10 * NS;
	cpu0.online = true;
	cpu0.cur_khz = &g_khz;
	cpu0.max_khz = 2000000;
	cpu0.capacity = 1024;
	cpu0.freq_ratio = &g_ratio;
	/* cpu1: offline all window: nothing known */
	cpu1.cpu = 1;
	cpu1.max_khz = -1;
	cpu1.capacity = -1;
	cpus[0] = &cpu0;
	cpus[1] = &cpu1;

	g_load1 = mk_gauge(1.5, 15, 10);
	g_load5 = mk_gauge(0.75, 7.5, 10);
	g_load15 = mk_gauge(0, 0, 0); /* never read: n/a */
	g_online = mk_gauge(1, 10, 10);
	g_memtotal = mk_gauge(8000000, 80000000, 10);
	g_memavail = mk_gauge(6000000, 60000000, 10);
	m_total.name = "MemTotal";
	m_total.gauge = &g_memtotal;
	m_avail.name = "MemAvailable";
	m_avail.gauge = &g_memavail;
	meminfo[0] = &m_total;
	meminfo[1] = &m_avail;
	vm_pgfault.name = "pgfault";
	vm_pgfault.value = 5000;
	vm_pgmaj.name = "pgmajfault";
	vm_pgmaj.value = 7;
	vmstat[0] = &vm_pgfault;
	vmstat[1] = &vm_pgmaj;

	psi_cpu.resource = "cpu";
	psi_cpu.available = true;
	psi_cpu.d_some_us = 250000;
	psi_mem.resource = "memory";
	psi_mem.available = true;
	psi_mem.have_full = true;
	psi_mem.d_some_us = 10000;
	psi_mem.d_full_us = 2000;
	psi_io.resource = "io";
	psis[0] = &psi_cpu;
	psis[1] = &psi_mem;
	psis[2] = &psi_io;

	win.seq = 42;
	win.hz = 100;
	win.mono_start_ns = 100 * NS;
	win.mono_end_ns = 110 * NS;
	win.wall_start_ns = 1700000000LL * NS; /* 2023-11-14 22:13:20 UTC */
	win.wall_end_ns = 1700000010LL * NS;
	win.samples = 10;
	win.samples_valid = 10;
	win.all = &all_cpu;
	win.n_cpus = 2;
	win.cpus = cpus;
	win.online_cpus = &g_online;
	win.load1 = &g_load1;
	win.load5 = &g_load5;
	win.load15 = &g_load15;
	win.n_psi = 3;
	win.psi = psis;
	win.n_meminfo = 2;
	win.meminfo = meminfo;
	win.n_vmstat = 2;
	win.vmstat = vmstat;
	win.n_procs = 3;
	win.procs = procs;
	win.nprocs_total = 5;
	snap.window = &win;
}

/* tests/fixtures/dumpsys/summary.txt, which check_dumpsys also reads */
const char summary_text[] =
    "Load: 1.5 / 0.75 / n/a\n"
    "CPU usage from 10500ms to 500ms ago (2023-11-14 22:13:20.000 to 2023-11-14 22:13:30.000):\n"
    "  100% 1234/burner: 95% user + 5% kernel / faults: 12 minor\n"
    " +1% 77/sysd: 0.6% user + 0.4% kernel / faults: 100 minor 3 major\n"
    " -0.1% 5/k?[31m: 0% user + 0.1% kernel\n"
    "25% TOTAL: 20% user + 3% kernel + 1% iowait + 0.5% irq + 0.5% softirq\n"
    "\n"
    "vitals: window 42 (level 0), 10/10 samples valid, USER_HZ 100\n"
    "  (core: 100% = one core, as above; share: of all CPUs' time)\n"
    "        pid    core  share   utime   stime  name\n"
    "       1234  100.0%  25.0%     950      50  burner\n"
    "  +      77    1.0%    n/a       3       2  sysd\n"
    "  -       5    0.1%    n/a       0       1  k?[31m\n"
    "  (2 more processes with activity)\n"
    "CPU busy 24.0% = user 20.0% + kernel 3.0% + irq 0.5% + softirq 0.5%\n"
    "  iowait 1.0%, steal 2.5%, idle 72.5%; of 4000 ticks, all CPUs\n"
    "Pressure (stalled share of 10.0s): cpu some 2.5% full n/a,\n"
    "  memory some 0.1% full 0.0%,\n"
    "  io unavailable\n"
    "Memory (kB, last): MemTotal 8000000, MemAvailable 6000000,\n"
    "  SwapTotal n/a, SwapFree n/a\n"
    "vmstat (window deltas): pgfault 5000, pgmajfault 7, pswpin n/a, pswpout n/a\n";

const struct fmt_ctx fctx = { 110500000000LL, 4, false, 0, false };
