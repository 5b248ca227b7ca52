/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_bench's device (store_sim.h): 500 processes of which 50 are active
 * per window, ~100 active threads, Android-like names, instance churn, a
 * machine load that walks, and every window field filled from them.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "fgbg/fgbg.h"
#include "store_sim.h"
#include "wcpu/wcpu.h"

/* ------------------------------------------------------------ population */

struct sproc {
	int32_t pid;
	uint64_t starttime;
	uint32_t uid;
	char comm[VITALS_COMM_LEN];
	char name[VITALS_NAME_LEN];
	uint32_t weight;
	bool hot, kernel, born_pending;
	double load; /* scales this process's ticks */
	uint64_t rss_pages;
	uint64_t rss_now; /* -F drifting: this window's RSS */
	uint32_t first_thread, nthreads;
};

struct sthread {
	int32_t tid;
	uint64_t starttime;
	uint32_t proc;
	uint32_t weight;
	bool born_pending;
	char comm[VITALS_COMM_LEN];
};

static uint64_t
rnd(struct sim *s)
{
	/* xorshift64*: deterministic for a seed, fast, good enough here */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dULL;
}

static double
rndf(struct sim *s)
{
	return (double)(rnd(s) >> 11) / (double)(1ULL << 53);
}

/* Uniform in [lo, hi]. */
static uint64_t
rndr(struct sim *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

/* Tables read better as rows. */
/* clang-format off */
static const struct {
	const char *name;
	uint32_t uid;
	uint32_t threads;
	double load;
	uint32_t rss_mib;
} hot_procs[HOT_PROCS] = {
	{ "system_server", 1000, 180, 3.0, 380 },
	{ "/system/bin/surfaceflinger", 1000, 40, 2.5, 90 },
	{ "com.android.systemui", 10123, 90, 2.0, 260 },
	{ "/vendor/bin/hw/android.hardware.graphics.composer@2.4-service",
	    1000, 12, 1.5, 40 },
	{ "com.google.android.apps.nexuslauncher", 10180, 70, 1.2, 210 },
	{ "/system/bin/audioserver", 1041, 45, 0.8, 30 },
	{ "com.google.android.gms.persistent", 10150, 120, 1.0, 190 },
	{ "/system/bin/logd", 1036, 10, 0.6, 20 },
	{ "/system/bin/lmkd", 1069, 3, 0.2, 4 },
	{ "kworker/u16:2", 0, 1, 0.5, 0 },
	{ "kworker/u16:5", 0, 1, 0.4, 0 },
	{ "rcu_preempt", 0, 1, 0.3, 0 },
	{ "ksoftirqd/0", 0, 1, 0.2, 0 },
	{ "kswapd0", 0, 1, 0.4, 0 },
	{ "/vendor/bin/hw/android.hardware.sensors-service.multihal", 1000,
	    8, 0.3, 12 },
	{ "com.android.phone", 1001, 60, 0.5, 120 },
	{ "/system/bin/statsd", 1066, 15, 0.3, 14 },
	{ "/system/bin/traced_probes", 9999, 6, 0.2, 8 },
	{ "/apex/com.android.adbd/bin/adbd", 2000, 12, 0.2, 10 },
	{ "com.google.android.gms", 10150, 110, 0.8, 230 },
	{ "/system/bin/netd", 0, 20, 0.2, 12 },
	{ "/system/bin/cameraserver", 1047, 30, 0.3, 35 },
	{ "com.android.chrome", 10210, 80, 1.0, 280 },
	{ "com.android.chrome:sandboxed_process0:org.chromium.content.app."
	  "SandboxedProcessService0:0", 99000, 25, 0.9, 150 },
	{ "/vendor/bin/hw/android.hardware.thermal@2.0-service", 1000, 5, 0.2,
	    6 },
};

static const char *const native_bins[] = {
	"/system/bin/vold", "/system/bin/installd", "/system/bin/keystore2",
	"/system/bin/servicemanager", "/system/bin/hwservicemanager",
	"/system/bin/storaged", "/system/bin/wificond",
	"/system/bin/incidentd", "/system/bin/gpuservice",
	"/system/bin/mediaserver", "/system/bin/mediametrics",
	"/system/bin/credstore", "/system/bin/gatekeeperd",
	"/system/bin/tombstoned", "/system/bin/update_engine",
	"/system/bin/perfetto", "/system/bin/traced", "/system/bin/iorapd",
	"/system/bin/drmserver", "/system/bin/media.extractor",
	"/system/bin/media.swcodec", "/system/bin/cameraserver",
	"/system/bin/gpsd", "/system/bin/rild", "/system/bin/ueventd",
};

static const char *const hal_names[] = {
	"power-service.pixel", "health-service.pixel", "vibrator-service",
	"light-service", "bluetooth@1.1-service", "wifi@1.0-service",
	"usb-service", "memtrack-service", "drm-service.clearkey",
	"gnss@2.1-service", "camera.provider@2.7-service",
	"media.c2@1.2-service", "boot@1.2-service", "nfc@1.2-service",
	"neuralnetworks-service",
	"secure_element@1.2-service", "authsecret@1.0-service",
};

static const char *const app_vendor[] = {
	"com.android", "com.google.android", "com.samsung.android",
	"com.whatsapp", "com.spotify", "org.telegram", "com.instagram",
	"com.facebook", "com.netflix", "com.twitter", "com.microsoft",
	"com.amazon", "com.qualcomm.qti", "org.mozilla", "com.ubercab",
};

static const char *const app_name[] = {
	"providers.media", "bluetooth", "nfc", "se", "music", "messaging",
	"dialer", "contacts", "calendar", "deskclock", "camera", "photos",
	"keyboard", "inputmethod", "gm", "youtube", "maps", "music.player",
	"android", "orca", "katana", "mediaprovider", "permissioncontroller",
	"networkstack", "ims", "cellbroadcast", "wallpaper", "documentsui",
};

static const char *const app_suffix[] = {
	"", "", "", "", ":remote", ":service", ":sync", ":push",
};

static const char *const java_threads[] = {
	"Signal Catcher", "perfetto_hprof_", "ADB-JDWP Connec",
	"Jit thread pool", "HeapTaskDaemon", "ReferenceQueueD",
	"FinalizerDaemon", "FinalizerWatchd", "Profile Saver",
	"RenderThread", "hwuiTask0", "hwuiTask1", "queued-work-loo",
	"GoogleApiHandle", "OkHttp ConnectionPool", "Chrome_IOThread",
	"CrRendererMain", "ThreadPoolForeg", "android.bg", "android.fg",
	"android.display", "ActivityManager", "PowerManagerSer",
	"InputDispatcher", "InputReader", "RenderEngine", "Binder:interceptor",
	"WifiHandlerThread", "LocationManager", "AudioTrack",
};

/* clang-format on */

/* Like the kernel: a name longer than TASK_COMM_LEN − 1 is cut. */
static void __attribute__((format(printf, 2, 3)))
comm_printf(char *comm, const char *fmt, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(comm, VITALS_COMM_LEN, "%.*s", VITALS_COMM_LEN - 1, buf);
}

static void
set_comm(char *comm, const char *name, bool app)
{
	const char *base = strrchr(name, '/');
	size_t n;

	/* Android names an app's main thread after the last 15 characters
	 * of its process name; a native binary keeps its first 15. */
	if (app && (n = strlen(name)) > VITALS_COMM_LEN - 1)
		name += n - (VITALS_COMM_LEN - 1);
	else if (base != NULL)
		name = base + 1;
	comm_printf(comm, "%s", name);
}

static void
name_generated(struct sim *s, size_t i, struct sproc *p)
{
	unsigned kind = (unsigned)(i % 20);
	unsigned k = (unsigned)(i / 20);

	p->kernel = false;
	if (kind < 9) { /* about 45 %: kernel threads */
		static const char *const kt[] = {
			"kworker/%u:%u",
			"kworker/%u:%uH",
			"kworker/u16:%u",
			"irq/%u-qcom",
			"migration/%u",
			"ksoftirqd/%u",
			"cpuhp/%u",
			"jbd2/dm-%u-8",
			"f2fs_gc-254:%u",
			"ion_pool_%u",
			"kgsl_worker%u",
			"dsp_work%u",
		};
		const char *f = kt[rndr(s, 0, sizeof(kt) / sizeof(kt[0]) - 1)];

		snprintf(p->name, sizeof(p->name), f, k % 8, k + kind);
		comm_printf(p->comm, "%s", p->name);
		p->kernel = true;
		p->uid = 0;
	} else if (kind < 12) {
		const char *b = native_bins[(i / 3) %
		    (sizeof(native_bins) / sizeof(native_bins[0]))];

		snprintf(p->name, sizeof(p->name), "%s", b);
		set_comm(p->comm, p->name, false);
		p->uid = (uint32_t)rndr(s, 1000, 1090);
	} else if (kind < 14) {
		const char *h = hal_names[(i / 2) %
		    (sizeof(hal_names) / sizeof(hal_names[0]))];

		/* the daemon keeps the basename up to '@' */
		snprintf(p->name, sizeof(p->name), "android.hardware.%s", h);
		*strchrnul(p->name, '@') = '\0';
		comm_printf(p->comm, "%s", p->name);
		p->uid = 1000;
	} else {
		size_t nv = sizeof(app_vendor) / sizeof(app_vendor[0]);
		size_t na = sizeof(app_name) / sizeof(app_name[0]);
		size_t ns = sizeof(app_suffix) / sizeof(app_suffix[0]);

		snprintf(p->name, sizeof(p->name), "%s.%s%s",
		    app_vendor[rnd(s) % nv], app_name[rnd(s) % na],
		    app_suffix[rnd(s) % ns]);
		set_comm(p->comm, p->name, true);
		p->uid = 10000 + (uint32_t)i;
	}
}

static void
thread_name(struct sim *s, const struct sproc *p, uint32_t j, char *comm)
{
	if (j == 0) {
		memcpy(comm, p->comm, VITALS_COMM_LEN);
	} else if (j <= 4 || rnd(s) % 3 == 0) {
		comm_printf(comm, "%s:%d_%X", j % 2 ? "binder" : "HwBinder",
		    p->pid, j);
	} else if (rnd(s) % 4 == 0) {
		comm_printf(comm, "pool-%u-thread-%u", s->pool_seq++ % 40, j);
	} else {
		comm_printf(comm, "%s",
		    java_threads[rnd(s) %
			(sizeof(java_threads) / sizeof(java_threads[0]))]);
	}
}

/* Give process `i` a new identity: pid, starttime, tids. */
static void
proc_spawn(struct sim *s, size_t i, uint64_t starttime)
{
	struct sproc *p = &s->p[i];
	uint32_t j;

	p->pid = s->next_pid;
	s->next_pid += (int32_t)p->nthreads + (int32_t)rndr(s, 1, 8);
	p->starttime = starttime;
	for (j = 0; j < p->nthreads; j++) {
		struct sthread *t = &s->t[p->first_thread + j];

		t->tid = p->pid + (int32_t)j;
		t->starttime = starttime;
		t->proc = (uint32_t)i;
		t->born_pending = false;
		/* main, render, first binder threads carry most of the work */
		t->weight = j < 3 ? HOT_THREAD_WEIGHT : 1;
		thread_name(s, p, j, t->comm);
	}
}

int
sim_init(struct sim *s, const struct opts *o, int64_t wall0_ns)
{
	size_t i, nt = 0;
	double cum = 0;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->rng = o->seed ? o->seed : 1;
	s->np = o->nprocs;
	if ((s->p = calloc(s->np, sizeof(*s->p))) == NULL)
		return -ENOMEM;
	for (i = 0; i < s->np; i++) {
		struct sproc *p = &s->p[i];

		if (i < HOT_PROCS) {
			snprintf(p->name, sizeof(p->name), "%s",
			    hot_procs[i].name);
			p->uid = hot_procs[i].uid;
			p->kernel = hot_procs[i].threads == 1 &&
			    p->name[0] != '/';
			if (p->kernel)
				comm_printf(p->comm, "%s", p->name);
			else
				set_comm(p->comm, p->name,
				    strchr(p->name, '.') && p->name[0] != '/');
			if (strchr(p->name, '@'))
				*strchr(p->name, '@') = '\0';
			if (p->name[0] == '/')
				memmove(p->name, strrchr(p->name, '/') + 1,
				    strlen(strrchr(p->name, '/')));
			p->nthreads = hot_procs[i].threads;
			p->load = hot_procs[i].load;
			p->rss_pages = (uint64_t)hot_procs[i].rss_mib * 256;
			p->hot = true;
		} else {
			bool app;

			name_generated(s, i, p);
			app = p->uid >= 10000;
			if (p->kernel)
				p->nthreads = 1;
			else if (app)
				p->nthreads = (uint32_t)rndr(s, 15, 60);
			else
				p->nthreads = (uint32_t)rndr(s, 2, 14);
			p->load = 0.05 + 0.3 * rndf(s);
			if (!p->kernel)
				p->rss_pages = rndr(s, 1, app ? 200 : 20) * 256;
		}
		if (p->hot)
			p->weight = 0; /* chosen every time, not drawn */
		else if (i < HOT_PROCS + WARM_PROCS)
			p->weight = WARM_WEIGHT;
		else
			p->weight = 1;
		p->first_thread = (uint32_t)nt;
		nt += p->nthreads;
	}
	s->nt = nt;
	s->t = calloc(nt, sizeof(*s->t));
	s->pcum = calloc(s->np, sizeof(*s->pcum));
	s->pchosen = calloc(s->np, 1);
	s->active = calloc(s->np + 2, sizeof(*s->active));
	s->cand = calloc(nt, sizeof(*s->cand));
	s->ccum = calloc(nt, sizeof(*s->ccum));
	s->tchosen = calloc(nt, 1);
	if (!s->t || !s->pcum || !s->pchosen || !s->active || !s->cand ||
	    !s->ccum || !s->tchosen)
		return -ENOMEM;
	s->next_pid = 1;
	for (i = 0; i < s->np; i++) {
		/* system and kernel tasks start at boot, apps later */
		bool late = s->p[i].uid >= 10000 && !s->p[i].hot;
		uint64_t st = late ? rndr(s, 6000, 700000) : rndr(s, 20, 3000);

		proc_spawn(s, i, st);
		cum += s->p[i].weight;
		s->pcum[i] = cum;
	}
	/* Up 2 h (with 35 s of suspend) when the first window opens. */
	s->mono0_ns = SEC(2 * HOUR_S);
	s->boot_off_ns = SEC(35);
	s->wall0_ns = wall0_ns;
	s->level = 0.2;
	return 0;
}

void
sim_free(struct sim *s)
{
	free(s->p);
	free(s->t);
	free(s->pcum);
	free(s->pchosen);
	free(s->active);
	free(s->cand);
	free(s->ccum);
	free(s->tchosen);
}

/* Index of the first cum[] >= u (cum ascending, n > 0). */
static size_t
pick_cum(const double *cum, size_t n, double u)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cum[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ------------------------------------------------------------- a window */

static void
gauge_walk(struct sim *s, struct gauge *g, double base, double spread,
    bool integer)
{
	unsigned k;

	for (k = 0; k < SAMPLES_PER_WINDOW; k++) {
		double v = base + spread * (rndf(s) - 0.5);

		if (v < 0)
			v = 0;
		gauge_add(g, integer ? floor(v) : round(v * 100) / 100);
	}
}

static void
fill_cpus(struct sim *s, struct window *w)
{
	unsigned n = s->o->ncpus, i, k;
	uint64_t per = (uint64_t)HZ * WINDOW_S;

	for (i = 0; i < n; i++) {
		struct window_cpu *c = &w->cpu[i];
		/* little cores first, then mid, then big (phone layout) */
		bool little = i < n / 2, big = i + 1 == n && n > 1;
		int64_t max = little ? 1803000 : big ? 3000000 : 2400000;
		double share = little ? 1.2 : big ? 0.6 : 0.8;
		double busy = s->level * share * (0.7 + 0.6 * rndf(s));
		uint64_t b = (uint64_t)(busy * (double)per);

		if (b > per - 20)
			b = per - 20;
		c->d.user = b * 6 / 10;
		c->d.system = b * 3 / 10;
		c->d.nice = b / 40;
		c->d.irq = rndr(s, 1, 8);
		c->d.softirq = rndr(s, 1, 12);
		c->d.iowait = rndr(s, 0, 10);
		c->d.steal = 0;
		c->d.guest = c->d.guest_nice = 0;
		c->d.idle = per - c->d.user - c->d.system - c->d.nice -
		    c->d.irq - c->d.softirq - c->d.iowait;
		c->samples = SAMPLES_PER_WINDOW;
		c->wall_ns = (uint64_t)SEC(WINDOW_S);
		c->online_end = true;
		c->max_khz = max;
		c->capacity = little ? 325 : big ? 1024 : 828;
		for (k = 0; k < SAMPLES_PER_WINDOW; k++) {
			/* an OPP from the table, 300 MHz to max */
			int64_t f = 300000 +
			    (int64_t)rndr(s, 0, 11) * ((max - 300000) / 11);

			gauge_add(&c->cur_khz, (double)f);
			gauge_add(&c->freq_ratio, (double)f / (double)max);
		}
		cpu_times_add(&w->all.d, &c->d);
	}
	for (k = 0; k < SAMPLES_PER_WINDOW; k++)
		gauge_add(&w->online_cpus, n);
	w->all.samples = SAMPLES_PER_WINDOW;
	w->all.wall_ns = (uint64_t)SEC(WINDOW_S);
}

static void
fill_system(struct sim *s, struct window *w)
{
	static const double mem0[MI__MAX] = {
		[MI_MEMTOTAL] = 7812345,
		[MI_MEMFREE] = 412000,
		[MI_MEMAVAILABLE] = 3210000,
		[MI_BUFFERS] = 9800,
		[MI_CACHED] = 2540000,
		[MI_SWAPCACHED] = 61000,
		[MI_ACTIVE] = 2900000,
		[MI_INACTIVE] = 2300000,
		[MI_SWAPTOTAL] = 4194300,
		[MI_SWAPFREE] = 2980000,
		[MI_DIRTY] = 1400,
		[MI_ANONPAGES] = 2150000,
		[MI_MAPPED] = 910000,
		[MI_SHMEM] = 31000,
		[MI_SRECLAIMABLE] = 152000,
		[MI_SUNRECLAIM] = 251000,
		[MI_KERNELSTACK] = 61000,
		[MI_PAGETABLES] = 118000,
	};
	static const uint64_t vm_hi[VM__MAX] = {
		[VM_PGFAULT] = 250000,
		[VM_PGMAJFAULT] = 60,
		[VM_PSWPIN] = 400,
		[VM_PSWPOUT] = 900,
		[VM_PGPGIN] = 6000,
		[VM_PGPGOUT] = 20000,
		[VM_PGSCAN_KSWAPD] = 12000,
		[VM_PGSCAN_DIRECT] = 0,
		[VM_PGSTEAL_KSWAPD] = 9000,
		[VM_PGSTEAL_DIRECT] = 0,
		[VM_WORKINGSET_REFAULT_ANON] = 800,
		[VM_WORKINGSET_REFAULT_FILE] = 1500,
		[VM_OOM_KILL] = 0,
	};
	unsigned i;

	w->samples = w->samples_valid = SAMPLES_PER_WINDOW;
	w->d_ctxt = rndr(s, 80000, 400000);
	w->d_processes = rndr(s, 0, 6);
	gauge_walk(s, &w->procs_running, 1 + 10 * s->level, 4, true);
	gauge_walk(s, &w->procs_blocked, 0.5, 1.5, true);
	gauge_walk(s, &w->load1, 4 + 20 * s->level, 1.5, false);
	gauge_walk(s, &w->load5, 4 + 18 * s->level, 0.4, false);
	gauge_walk(s, &w->load15, 4 + 16 * s->level, 0.1, false);
	gauge_walk(s, &w->load_runnable, 1 + 10 * s->level, 4, true);
	gauge_walk(s, &w->load_threads, (double)s->nt + 200, 20, true);
	for (i = 0; i < PSI__MAX; i++) {
		struct window_psi *p = &w->psi[i];
		double sc = i == PSI_CPU ? 1.0 : i == PSI_MEMORY ? 0.2 : 0.4;

		p->available = true;
		p->have_full = true;
		p->samples = SAMPLES_PER_WINDOW;
		p->d_some_us = (uint64_t)(sc * s->level * 900000 * rndf(s));
		p->d_full_us = p->d_some_us / rndr(s, 3, 9);
		gauge_walk(s, &p->some_avg10, 100 * sc * s->level, 3, false);
		gauge_walk(s, &p->full_avg10, 30 * sc * s->level, 1, false);
	}
	w->vm_samples = SAMPLES_PER_WINDOW;
	for (i = 0; i < VM__MAX; i++) {
		w->d_vm[i] = vm_hi[i] ? rndr(s, 0, vm_hi[i]) : 0;
		w->vm_have |= 1u << i;
	}
	for (i = 0; i < MI__MAX; i++) {
		double spread = i == MI_MEMTOTAL || i == MI_SWAPTOTAL ?
		    0 :
		    mem0[i] * 0.02;

		/* a slow walk between windows, noise within one */
		s->mem[i] += spread * (rndf(s) - 0.5) * 0.5;
		if (fabs(s->mem[i]) > mem0[i] * 0.2)
			s->mem[i] *= 0.5;
		gauge_walk(s, &w->mem_kb[i], mem0[i] + s->mem[i], spread, true);
		w->mem_have |= 1u << i;
	}
	if (rnd(s) % 5 == 0)
		w->inv_deltas[INV_VANISHED] = (uint32_t)rndr(s, 1, 3);
}

static void
fill_health(struct sim *s, struct window *w, uint32_t threads_scanned)
{
	static const uint64_t coll_us[COLL__MAX] = {
		[COLL_STAT] = 60,
		[COLL_LOADAVG] = 15,
		[COLL_PSI] = 40,
		[COLL_VMSTAT] = 90,
		[COLL_MEMINFO] = 70,
		[COLL_CPUFREQ] = 45,
		[COLL_PROCS] = 9000,
	};
	struct window_health *h = &w->health;
	unsigned i, k;

	h->self_utime_us = rndr(s, 30000, 70000);
	h->self_stime_us = rndr(s, 50000, 120000);
	for (i = 0; i < COLL__MAX; i++) {
		for (k = 0; k < SAMPLES_PER_WINDOW; k++) {
			uint64_t ns = coll_us[i] * rndr(s, 800, 1500);

			h->coll_ns_sum[i] += ns;
			if (ns > h->coll_ns_max[i])
				h->coll_ns_max[i] = ns;
		}
		h->sample_ns_sum += h->coll_ns_sum[i];
	}
	h->sample_ns_max = h->sample_ns_sum / SAMPLES_PER_WINDOW * 13 / 10;
	h->late_ticks = rnd(s) % 50 == 0;
	h->procs_scanned = (uint32_t)s->np;
	h->threads_scanned = threads_scanned;
	h->store_state = STORE_OK;
	h->store_queued = rnd(s) % 10 == 0;
}

static void
task_from(struct sim *s, struct window_task *t, const struct sproc *p,
    uint64_t total_ticks)
{
	memset(t, 0, sizeof(*t));
	t->id = p->pid;
	t->tgid = p->pid;
	t->starttime = p->starttime;
	t->uid = p->uid;
	memcpy(t->comm, p->comm, sizeof(t->comm));
	window_task_set_name(t, p->name);
	t->samples = SAMPLES_PER_WINDOW;
	t->wall_ns = (uint64_t)SEC(WINDOW_S);
	t->total_ticks = total_ticks;
	t->norm_ticks = (double)total_ticks / s->o->ncpus;
	if (p->rss_pages && s->o->drifting) {
		t->rss_pages_last = p->rss_now;
		t->rss_pages_max = p->rss_now +
		    (rnd(s) % 4 == 0 ? rndr(s, 0, 16) : 0);
	} else if (p->rss_pages) {
		t->rss_pages_last = p->rss_pages +
		    rndr(s, 0, p->rss_pages / 20);
		t->rss_pages_max = t->rss_pages_last + rndr(s, 0, 64);
	}
}

/*
 * -F drifting: what bench/drift measured on real databases (the v7, v15
 * and v23 fixtures; doc/storage.md, "Do figures drift?"): a task's RSS
 * equals its last window's in 50-99 % of pairs and moves by a few pages
 * otherwise; minor faults are 0 in 32-94 % of rows. So each window a
 * quarter of the processes move their RSS by up to ±32 pages, and 70 %
 * of rows have no minor fault (the rest a quarter of the random range).
 * Threads report their process's RSS, as stat field 24 does.
 */
static void
rss_drift(struct sim *s)
{
	size_t i;

	for (i = 0; i < s->np; i++) {
		struct sproc *p = &s->p[i];

		if (p->rss_now == 0)
			p->rss_now = p->rss_pages;
		if (p->rss_pages && rnd(s) % 4 == 0) {
			p->rss_now += rndr(s, 0, 64);
			p->rss_now = p->rss_now > 32 + 256 ? p->rss_now - 32 :
							     256;
		}
	}
}

static uint64_t
minflt(struct sim *s, uint64_t hi)
{
	if (!s->o->drifting)
		return rndr(s, 0, hi);
	return rnd(s) % 10 < 7 ? 0 : rndr(s, 0, hi / 4);
}

/* A task born in this window: fewer samples, counters are the delta. */
static void
task_born(struct sim *s, struct window_task *t)
{
	t->born = true;
	t->samples = (uint32_t)rndr(s, 1, SAMPLES_PER_WINDOW - 1);
	t->wall_ns = (uint64_t)t->samples * NSEC_PER_SEC;
	t->total_ticks = t->total_ticks * t->samples / SAMPLES_PER_WINDOW;
	t->norm_ticks = (double)t->total_ticks / s->o->ncpus;
}

static void
choose_procs(struct sim *s)
{
	size_t want = s->o->nactive, i, tries;
	double total = s->pcum[s->np - 1];

	memset(s->pchosen, 0, s->np);
	s->nact = 0;
	for (i = 0; i < s->np && i < HOT_PROCS && s->nact < want; i++) {
		s->pchosen[i] = 1;
		s->active[s->nact++] = (uint32_t)i;
	}
	/* A process replaced since the last window shows up as born. */
	for (i = 0; i < s->np && s->nact < want; i++)
		if (s->p[i].born_pending && !s->pchosen[i]) {
			s->pchosen[i] = 1;
			s->active[s->nact++] = (uint32_t)i;
		}
	for (tries = 0; s->nact < want && s->nact < s->np && tries < 100000;
	     tries++) {
		i = pick_cum(s->pcum, s->np, rndf(s) * total);
		if (s->pchosen[i] || s->p[i].weight == 0)
			continue;
		s->pchosen[i] = 1;
		s->active[s->nact++] = (uint32_t)i;
	}
}

/* The ticks of a thread or of a process's own remainder in one window. */
static uint64_t
ticks(struct sim *s, double load, bool hot)
{
	double hi = (hot ? 60.0 : 4.0) * load * (0.5 + 3 * s->level);

	return (uint64_t)(hi * rndf(s));
}

static int
add_threads(struct sim *s, struct window *w, uint64_t total_ticks, uint64_t *pu,
    uint64_t *ps, uint32_t *ret_scanned)
{
	size_t nc = 0, i, j, want = s->o->nthreads, got = 0, tries;
	double cum = 0;
	uint32_t scanned = 0;
	int r;

	for (i = 0; i < s->nact; i++) {
		const struct sproc *p = &s->p[s->active[i]];

		scanned += p->nthreads;
		for (j = 0; j < p->nthreads; j++) {
			uint32_t ti = p->first_thread + (uint32_t)j;

			cum += s->t[ti].weight * (p->hot ? p->load : 0.3);
			s->cand[nc] = ti;
			s->ccum[nc++] = cum;
			s->tchosen[ti] = 0;
		}
	}
	*ret_scanned = scanned;
	for (tries = 0; got < want && got < nc && tries < 100000; tries++) {
		struct window_task t;
		struct sthread *th;
		const struct sproc *p;
		bool hot;

		th = &s->t[s->cand[pick_cum(s->ccum, nc, rndf(s) * cum)]];
		if (s->tchosen[th - s->t])
			continue;
		s->tchosen[th - s->t] = 1;
		got++;
		p = &s->p[th->proc];
		hot = p->hot && th->weight > 1;
		task_from(s, &t, p, total_ticks);
		t.id = th->tid;
		t.starttime = th->starttime;
		memcpy(t.comm, th->comm, sizeof(t.comm));
		window_task_set_name(&t, th->comm); /* as the daemon */
		t.d_utime = ticks(s, p->load, hot);
		t.d_stime = ticks(s, p->load, hot) / 2;
		if (t.d_utime + t.d_stime == 0)
			t.d_utime = 1;
		t.d_minflt = minflt(s, hot ? 800 : 40);
		t.d_majflt = rnd(s) % 40 == 0 ? rndr(s, 1, 10) : 0;
		if (th->born_pending) {
			task_born(s, &t);
			th->born_pending = false;
		}
		/* the owner's figures include its threads' */
		pu[th->proc] += t.d_utime;
		ps[th->proc] += t.d_stime;
		if ((r = window_add_task(w, true, &t)) < 0)
			return r;
	}
	return 0;
}

static int
add_procs(struct sim *s, struct window *w, uint64_t total_ticks,
    const uint64_t *pu, const uint64_t *ps)
{
	size_t i;
	int r;

	for (i = 0; i < s->nact; i++) {
		struct sproc *p = &s->p[s->active[i]];
		struct window_task t;

		task_from(s, &t, p, total_ticks);
		t.d_utime = pu[s->active[i]] + ticks(s, p->load, p->hot);
		t.d_stime = ps[s->active[i]] + ticks(s, p->load, p->hot) / 2;
		if (t.d_utime + t.d_stime == 0)
			t.d_stime = 1;
		t.d_minflt = minflt(s, p->hot ? 3000 : 150);
		t.d_majflt = rnd(s) % 20 == 0 ? rndr(s, 1, 30) : 0;
		if (p->born_pending) {
			task_born(s, &t);
			p->born_pending = false;
		}
		if ((r = window_add_task(w, false, &t)) < 0)
			return r;
	}
	return 0;
}

/* Processes and threads come and go: identities age out of roll-ups. */
static int
churn(struct sim *s, struct window *w, uint64_t now_ticks, uint64_t total_ticks)
{
	struct window_task t;
	size_t i;
	int r;

	if (rndf(s) < PROC_CHURN_PER_WINDOW && s->np > HOT_PROCS + WARM_PROCS) {
		i = (size_t)rndr(s, HOT_PROCS + WARM_PROCS, s->np - 1);
		if (!s->p[i].kernel) {
			/* its last window: a little work on the way out */
			task_from(s, &t, &s->p[i], total_ticks);
			t.d_utime = rndr(s, 1, 20);
			t.d_stime = rndr(s, 0, 10);
			t.d_minflt = rndr(s, 0, 500);
			t.exited = true;
			t.samples = (uint32_t)rndr(s, 1, SAMPLES_PER_WINDOW);
			t.wall_ns = (uint64_t)t.samples * NSEC_PER_SEC;
			if ((r = window_add_task(w, false, &t)) < 0)
				return r;
			w->health.procs_exited++;
			w->health.threads_exited += s->p[i].nthreads;
			proc_spawn(s, i, now_ticks - rndr(s, 0, 900));
			s->p[i].born_pending = true;
		}
	}
	if (rndf(s) < THREAD_CHURN_PER_WINDOW && s->nact > 0) {
		const struct sproc *p = &s->p[s->active[rnd(s) % s->nact]];

		if (p->nthreads > 1) {
			struct sthread *th = &s->t[p->first_thread +
			    rndr(s, 1, p->nthreads - 1)];

			th->tid = s->next_pid++;
			th->starttime = now_ticks - rndr(s, 0, 900);
			th->born_pending = true;
			thread_name(s, p, 5, th->comm);
			w->health.threads_exited++;
		}
	}
	return 0;
}

/*
 * -B: the window's BPF sched part, made the way the daemon makes it (a
 * drained batch reduced by window_bpf_add): every thread and process of
 * the window with its on-CPU ns (its ticks, plus a jitter below a tick)
 * and run-queue waits in a log2 histogram, each thread's own (BPF layout
 * 8 on; until 5 Dec 2026 only the processes had waits here) and a
 * process's the sum of its threads' (drawn for itself when none of its
 * threads has a row).
 */
/* 1 to most run-queue waits over log2 slots 0-13 into h, count, ns. */
static void
add_waits(struct sim *s, uint32_t *h, uint64_t *count, uint64_t *ns,
    uint64_t most)
{
	uint64_t n = rndr(s, 1, most), c;
	unsigned k;

	for (k = 0; k < 14 && n; k++) {
		c = k == 13 ? n : rndr(s, 0, n);
		h[k] += (uint32_t)c;
		*count += c;
		*ns += c * ((1500ull << k) + rndr(s, 0, 999));
		n -= c;
	}
}

static int
add_bpf(struct sim *s, struct window *w)
{
	struct bpf_sched_batch b = { 0 };
	struct window_bpf *wb;
	size_t i, j;
	unsigned k;
	int r = -ENOMEM;

	if ((wb = window_sched_make(w, true)) == NULL)
		return -ENOMEM;
	wb->state = VBPF_ON_LOADED;
	b.tids = calloc(w->nthreads + 1, sizeof(*b.tids));
	b.procs = calloc(w->nprocs + 1, sizeof(*b.procs));
	b.uids = calloc(1, sizeof(*b.uids));
	if (b.tids == NULL || b.procs == NULL || b.uids == NULL)
		goto out;
	for (i = 0; i < w->nthreads; i++) {
		const struct window_task *t = &w->threads[i];
		struct vbpf_tid *v = &b.tids[b.ntids++];

		v->tid = t->id;
		v->tgid = t->tgid;
		v->uid = t->uid;
		v->start_ns = t->starttime * (NSEC_PER_SEC / HZ) +
		    rndr(s, 0, NSEC_PER_SEC / HZ - 1);
		v->leader_ns = 0;
		v->oncpu_ns = (t->d_utime + t->d_stime) * (NSEC_PER_SEC / HZ) +
		    rndr(s, 0, NSEC_PER_SEC / HZ - 1);
		add_waits(s, v->rq_hist, &v->rq_count, &v->rq_ns, 200);
	}
	for (i = 0; i < w->nprocs; i++) {
		const struct window_task *t = &w->procs[i];
		struct vbpf_proc *v = &b.procs[b.nprocs++];

		v->tgid = t->id;
		v->start_ns = t->starttime * (NSEC_PER_SEC / HZ);
		v->exited_ns = t->exited ? rndr(s, 0, 20000000) : 0;
		for (j = 0; j < b.ntids && b.tids[j].tgid != t->id; j++)
			;
		if (j == b.ntids) /* no thread row: waits of its own */
			add_waits(s, v->rq_hist, &v->rq_count, &v->rq_ns, 400);
	}
	/* the leaders' starts, as the kernel keys them, and the threads'
	 * waits in their processes' */
	for (i = 0; i < b.ntids; i++) {
		for (j = 0; j < w->nprocs; j++)
			if (w->procs[j].id == b.tids[i].tgid) {
				b.tids[i].leader_ns = b.procs[j].start_ns;
				b.procs[j].rq_count += b.tids[i].rq_count;
				b.procs[j].rq_ns += b.tids[i].rq_ns;
				for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
					b.procs[j].rq_hist[k] +=
					    b.tids[i].rq_hist[k];
			}
	}
	b.uids[0].uid = 0;
	b.uids[0].exited_tasks = w->health.threads_exited;
	b.nuids = 1;
	r = window_bpf_add(wb, &b, HZ);
out:
	free(b.tids);
	free(b.procs);
	free(b.uids);
	return r;
}

/*
 * -H: the parts a Linux host's windows carry beside the task rows and
 * kept as one blob per window each (doc/storage.md, "One-blob parts in
 * the parts row"): a cgroup walk of eight groups, the capacity-weighted
 * CPU approximation and a foreground/background part with no Android
 * cpuset (what the daemon stores on a plain Linux host). Their figures
 * follow the window's load; what they cost a move is their b-trees.
 */
static int
add_host_parts(struct sim *s, struct window *w, uint64_t total)
{
	struct window_cgroup *cg = window_cgroup_new();
	struct window_wcpu *wc = window_wcpu_new();
	struct window_fgbg *fg = window_fgbg_new();
	unsigned i;

	if (cg == NULL || wc == NULL || fg == NULL)
		goto fail;
	cg->walks = WINDOW_S;
	for (i = 0; i < 8; i++) {
		struct window_cgroup_grp *g = window_cgroup_add(cg);

		if (g == NULL)
			goto fail;
		g->id = 1000 + i;
		snprintf(g->path, sizeof(g->path),
		    i ? "system.slice/unit%u" : "", i);
		g->depth = i ? 1 : 0;
		g->uid = g->pid = -1;
		g->deltas = 1;
		g->d_usage_us = rndr(s, 0, (uint64_t)(s->level * 1e7) + 1);
		g->d_user_us = g->d_usage_us / 2;
		g->d_system_us = g->d_usage_us - g->d_user_us;
	}
	cg->groups_seen = 8;
	wc->busy_ticks = total - w->all.d.idle;
	wc->wbusy = wc->busy_ticks * 1024;
	wc->windows = 1;
	fg->scans = WINDOW_S;
	window_part_set(w, WPART_CGROUP, cg);
	window_part_set(w, WPART_WCPU, wc);
	window_part_set(w, WPART_FGBG, fg);
	return 0;
fail:
	if (cg)
		window_cgroup_free(cg);
	if (wc)
		window_wcpu_free(wc);
	if (fg)
		window_fgbg_free(fg);
	return -ENOMEM;
}

/* Window i (0-based) of the simulation. */
struct window *
sim_window(struct sim *s, uint64_t i)
{
	struct window *w;
	uint64_t total, *pu = NULL, *ps = NULL, now_ticks;
	uint32_t scanned = 0;
	int64_t off = SEC((int64_t)i * WINDOW_S);

	if ((w = window_new(i + 1, s->o->ncpus)) == NULL)
		return NULL;
	snprintf(w->boot_id, sizeof(w->boot_id), "%s", BOOT_ID);
	w->mono_start_ns = s->mono0_ns + off;
	w->mono_end_ns = w->mono_start_ns + SEC(WINDOW_S);
	w->boot_start_ns = w->mono_start_ns + s->boot_off_ns;
	w->boot_end_ns = w->mono_end_ns + s->boot_off_ns;
	w->wall_start_ns = s->wall0_ns + off;
	w->wall_end_ns = w->wall_start_ns + SEC(WINDOW_S);
	w->hz = HZ;
	w->interval_ms = 1000;

	/* machine load: a bounded random walk, so figures drift like a day */
	s->level += 0.03 * (rndf(s) - 0.5);
	if (s->level < 0.05)
		s->level = 0.05;
	if (s->level > 0.6)
		s->level = 0.6;
	fill_cpus(s, w);
	fill_system(s, w);
	total = cpu_times_total(&w->all.d);
	now_ticks = (uint64_t)(w->boot_end_ns / (NSEC_PER_SEC / HZ));

	pu = calloc(s->np, sizeof(*pu));
	ps = calloc(s->np, sizeof(*ps));
	if (pu == NULL || ps == NULL)
		goto fail;
	choose_procs(s);
	if (s->o->drifting)
		rss_drift(s);
	if (churn(s, w, now_ticks, total) < 0 ||
	    add_threads(s, w, total, pu, ps, &scanned) < 0 ||
	    add_procs(s, w, total, pu, ps) < 0 ||
	    (s->o->bpf && add_bpf(s, w) < 0) ||
	    (s->o->host_parts && add_host_parts(s, w, total) < 0))
		goto fail;
	fill_health(s, w, scanned);
	free(pu);
	free(ps);
	return w;
fail:
	free(pu);
	free(ps);
	return window_free(w);
}
