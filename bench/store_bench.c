/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_bench: what the window store costs at a realistic load, measured on
 * the real store (daemon/store*.c, SQLite as shipped, default options).
 *
 * It synthesises the windows a device would produce (8 CPUs with every
 * field, full meminfo/vmstat/PSI, 500 processes of which 50 are active per
 * window, ~100 active threads), stamps them on a simulated 10 s grid of the
 * wall clock, writes them with store_put into a fresh database, and calls
 * store_maintain with the simulated "now" every simulated minute, so that
 * roll-ups and retention run exactly as in production, only faster than
 * real time. It reports the commit time of a window, the database size
 * over simulated time, top-N query latency and the cost of maintenance.
 *
 * Only simulated time is compressed: every put, maintenance pass and query
 * is the real call on a real file, timed with CLOCK_MONOTONIC.
 */
#include <sys/stat.h>
#include <sys/statfs.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io_vfs.h"
#include "vitalsd.h"

#define WINDOW_S 10
#define HZ 100
#define SAMPLES_PER_WINDOW 10 /* 1 s cadence, the daemon's default */
#define MAINTAIN_EVERY 6      /* windows: once per simulated minute */
#define MAINTAIN_EVERY_N (b->o.maint_every ? b->o.maint_every : MAINTAIN_EVERY)
#define HOT_PROCS 25  /* active in every window */
#define WARM_PROCS 75 /* active often (weight WARM_WEIGHT) */
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
	bool io;	       /* -I: writes by file, kind and b-tree */
	int64_t rollup_batch;  /* -R: store_opts.rollup_batch_s; -1 default */
	bool drifting;	       /* -F drifting: figures drift (see rss_drift) */
};

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

static int
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

static void
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
 * and run-queue waits in a log2 histogram.
 */
static int
add_bpf(struct sim *s, struct window *w)
{
	struct bpf_sched_batch b = { 0 };
	struct window_bpf *wb;
	size_t i;
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
	}
	for (i = 0; i < w->nprocs; i++) {
		const struct window_task *t = &w->procs[i];
		struct vbpf_proc *v = &b.procs[b.nprocs++];
		uint64_t n = rndr(s, 1, 400);

		v->tgid = t->id;
		v->start_ns = t->starttime * (NSEC_PER_SEC / HZ);
		v->exited_ns = t->exited ? rndr(s, 0, 20000000) : 0;
		for (k = 0; k < 14 && n; k++) {
			uint64_t c = k == 13 ? n : rndr(s, 0, n);

			v->rq_hist[k] = (uint32_t)c;
			v->rq_count += c;
			v->rq_ns += c * ((1500ull << k) + rndr(s, 0, 999));
			n -= c;
		}
	}
	/* the leaders' starts, as the kernel keys them */
	for (i = 0; i < b.ntids; i++) {
		size_t j;

		for (j = 0; j < w->nprocs; j++)
			if (w->procs[j].id == b.tids[i].tgid)
				b.tids[i].leader_ns = b.procs[j].start_ns;
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

/* Window i (0-based) of the simulation. */
static struct window *
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
	    (s->o->bpf && add_bpf(s, w) < 0))
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

/* ---------------------------------------------------------- measurement */

struct series {
	int64_t *v;
	size_t n, cap;
};

static int
series_add(struct series *a, int64_t v)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 1024;
		int64_t *p = realloc(a->v, nc * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		a->v = p;
		a->cap = nc;
	}
	a->v[a->n++] = v;
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct dist {
	size_t n;
	double p50, p90, p99, max, mean; /* ms */
	double total_s;
};

/* Nearest-rank percentiles of v[from, to). */
static struct dist
dist_of(const struct series *a, size_t from, size_t to)
{
	struct dist d = { 0 };
	int64_t *c;
	size_t n = to > from ? to - from : 0;

	if (n == 0 || (c = malloc(n * sizeof(*c))) == NULL)
		return d;
	memcpy(c, a->v + from, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_i64);
	for (size_t i = 0; i < n; i++)
		d.total_s += (double)c[i] / 1e9;
	d.mean = d.total_s * 1e3 / (double)n;
#define RANK(q) c[(size_t)ceil((q) * (double)n) - 1]
	d.n = n;
	d.p50 = (double)RANK(0.50) / 1e6;
	d.p90 = (double)RANK(0.90) / 1e6;
	d.p99 = (double)RANK(0.99) / 1e6;
	d.max = (double)c[n - 1] / 1e6;
#undef RANK
	free(c);
	return d;
}

struct snap {
	int64_t at_s; /* simulated seconds since the first window */
	uint64_t main_bytes, wal_bytes, live_bytes;
	long long lvl[3];
	double procs_per[3], threads_per[3]; /* task rows per window */
	char tables[512]; /* "name=KiB ..." from dbstat, "" without it */
	double oldest_h;  /* age of the oldest window held */
	uint64_t deleted_age, deleted_size, rolled;
};

static uint64_t
file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static long long
sql_ll(struct store *st, const char *sql)
{
	char buf[64];

	if (store_exec(st, sql, buf, sizeof(buf)) < 0)
		fatalx("store_exec failed: %s", sql);
	return strtoll(buf, NULL, 10);
}

static void
task_rows(struct store *st, struct snap *ret)
{
	int64_t t0 = sql_ll(st, "SELECT min(wall_start_ns) FROM windows");
	int64_t t1 = sql_ll(st, "SELECT max(wall_start_ns) FROM windows");
	double np[3] = { 0 }, nt[3] = { 0 };
	int64_t from, step = 3600 * NSEC_PER_SEC;
	struct window **v;
	size_t n, i;
	unsigned l;

	for (from = t0; from <= t1; from += step) {
		if (store_windows(st, from, from + step, 0, &v, &n) < 0)
			fatalx("store_windows failed");
		for (i = 0; i < n; i++) {
			/* each window once: in the hour it starts in */
			if (v[i]->wall_start_ns >= from &&
			    v[i]->wall_start_ns < from + step &&
			    v[i]->level < 3) {
				np[v[i]->level] += (double)v[i]->nprocs;
				nt[v[i]->level] += (double)v[i]->nthreads;
			}
			window_free(v[i]);
		}
		free(v);
	}
	for (l = 0; l < 3; l++) {
		if (ret->lvl[l] == 0)
			continue;
		ret->procs_per[l] = np[l] / (double)ret->lvl[l];
		ret->threads_per[l] = nt[l] / (double)ret->lvl[l];
	}
}

static void
take_snap(struct store *st, const char *db, int64_t at_s, int64_t now_ns,
    bool rows, struct snap *ret)
{
	char wal[PATH_MAX + 8], q[160];
	struct store_stats ss;
	unsigned l;

	/* After a checkpoint the main file holds everything. */
	if (store_exec(st, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, 0) < 0)
		fatalx("checkpoint failed");
	snprintf(wal, sizeof(wal), "%s-wal", db);
	memset(ret, 0, sizeof(*ret));
	ret->at_s = at_s;
	ret->main_bytes = file_size(db);
	ret->wal_bytes = file_size(wal);
	ret->live_bytes = (uint64_t)(sql_ll(st, "PRAGMA page_count") -
			      sql_ll(st, "PRAGMA freelist_count")) *
	    (uint64_t)sql_ll(st, "PRAGMA page_size");
	for (l = 0; l < 3; l++) {
		snprintf(q, sizeof(q),
		    "SELECT count(*) FROM windows WHERE level = %u", l);
		ret->lvl[l] = sql_ll(st, q);
		if (!rows || ret->lvl[l] == 0)
			continue;
	}
	/* How much a roll-up holds: the union of the tasks merged (the
	 * rows are in blobs: read back, an hour of windows at a time). */
	if (rows)
		task_rows(st, ret);
	/* Where the bytes are, if this SQLite has the dbstat table. */
	if (rows &&
	    store_exec(st,
		"SELECT group_concat(name || '=' || kib, "
		"' ') FROM (SELECT name, sum(pgsize) / 1024 AS kib FROM dbstat "
		"GROUP BY name ORDER BY kib DESC)",
		ret->tables, sizeof(ret->tables)) < 0)
		ret->tables[0] = '\0';
	ret->oldest_h = (double)(now_ns -
			    sql_ll(st,
				"SELECT min(wall_start_ns) FROM windows")) /
	    3.6e12;
	store_get_stats(st, &ss);
	ret->deleted_age = ss.deleted_age;
	ret->deleted_size = ss.deleted_size;
	ret->rolled = ss.windows_rolled;
}

struct qres {
	int64_t at_s;
	struct dist h1, d1;
	size_t rows_h1, rows_d1;
};

static void
run_queries(struct store *st, unsigned nq, int64_t at_s, int64_t now_ns,
    struct qres *ret)
{
	struct series h = { 0 }, d = { 0 };
	unsigned k;

	memset(ret, 0, sizeof(*ret));
	ret->at_s = at_s;
	for (k = 0; k < 2 * nq; k++) {
		bool day = k % 2; /* interleaved: neither gets a warmer cache */
		int64_t from = now_ns - SEC(day ? DAY_S : HOUR_S);
		struct window_task *t = NULL;
		size_t n = 0;
		int64_t t0 = clock_ns(CLOCK_MONOTONIC), dt;
		int r = store_top(st, from, now_ns, false, METRIC_CPU, 20, &t,
		    &n);

		dt = clock_ns(CLOCK_MONOTONIC) - t0;
		if (r < 0)
			fatalx("store_top: %s", strerror(-r));
		free(t);
		if (series_add(day ? &d : &h, dt) < 0)
			fatalx("out of memory");
		*(day ? &ret->rows_d1 : &ret->rows_h1) = n;
	}
	ret->h1 = dist_of(&h, 0, h.n);
	ret->d1 = dist_of(&d, 0, d.n);
	free(h.v);
	free(d.v);
}

static const char *
fs_name(const char *dir)
{
	static char buf[32];
	struct statfs sf;

	if (statfs(dir, &sf) < 0)
		return "?";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53:
		return "ext4";
	case 0x01021994:
		return "tmpfs";
	case 0x58465342:
		return "xfs";
	case 0x9123683E:
		return "btrfs";
	case 0xF2F52010:
		return "f2fs";
	case 0x794c7630:
		return "overlayfs";
	}
	snprintf(buf, sizeof(buf), "0x%lx", (unsigned long)sf.f_type);
	return buf;
}

static const char *
span_name(int64_t s, char *buf, size_t sz)
{
	if (s % DAY_S == 0)
		snprintf(buf, sz, "%lld d", (long long)(s / DAY_S));
	else if (s % HOUR_S == 0)
		snprintf(buf, sz, "%lld h", (long long)(s / HOUR_S));
	else
		snprintf(buf, sz, "%.2f h", (double)s / HOUR_S);
	return buf;
}

static double
mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* --------------------------------------------------------------- main */

static void usage(void) __attribute__((noreturn));

static void
usage(void)
{
	fprintf(stderr,
	    "usage: store_bench [-BIk] [-a active] [-c cpus] [-d days] "
	    "[-D dir] [-m max_mib]\n"
	    "                   [-p procs] [-q queries] [-s seed] "
	    "[-t threads]\n"
	    "                   [-S spool_dir] [-j persist|truncate|wal] "
	    "[-M windows]\n"
	    "                   [-R rollup_batch_s] [-F random|drifting]\n");
	exit(2);
}

static uint64_t
num_arg(const char *s, uint64_t lo, uint64_t hi)
{
	uint64_t v;

	if (parse_uint(s, hi, &v) < 0 || v < lo) {
		fprintf(stderr,
		    "store_bench: bad number '%s' (%" PRIu64 "..%" PRIu64 ")\n",
		    s, lo, hi);
		usage();
	}
	return v;
}

static void
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "active", required_argument, NULL, 'a' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "days", required_argument, NULL, 'd' },
		{ "dir", required_argument, NULL, 'D' },
		{ "keep", no_argument, NULL, 'k' },
		{ "max-mib", required_argument, NULL, 'm' },
		{ "procs", required_argument, NULL, 'p' },
		{ "queries", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "spool", required_argument, NULL, 'S' },
		{ "journal", required_argument, NULL, 'j' },
		{ "maintain-every", required_argument, NULL, 'M' },
		{ "bpf", no_argument, NULL, 'B' },
		{ "io", no_argument, NULL, 'I' },
		{ "rollup-batch", required_argument, NULL, 'R' },
		{ "figures", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int ch;

	/* 7 days take 6-10 min here; the size bound binds after ~18 h */
	o->days = 2;
	/* not $TMPDIR: it may be a tmpfs, where fsync is free */
	o->dir = "/tmp";
	o->nprocs = 500;
	o->nactive = 50;
	o->nthreads = 100;
	o->ncpus = 8;
	o->nqueries = 50;
	o->seed = 1;
	o->journal = -1;
	o->rollup_batch = -1;
	while ((ch = getopt_long(argc, argv,
		    "a:Bc:d:D:F:hIj:kM:m:p:q:R:s:S:t:", lo, NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->nactive = (unsigned)num_arg(optarg, 1, 100000);
			break;
		case 'B':
			o->bpf = true;
			break;
		case 'I':
			o->io = true;
			break;
		case 'F':
			if (strcmp(optarg, "random") == 0)
				o->drifting = false;
			else if (strcmp(optarg, "drifting") == 0)
				o->drifting = true;
			else
				usage();
			break;
		case 'R':
			o->rollup_batch = (int64_t)num_arg(optarg, 0, 86400);
			break;
		case 'c':
			o->ncpus = (unsigned)num_arg(optarg, 1, VITALS_CPU_MAX);
			break;
		case 'd':
			o->days = strtod(optarg, &end);
			if (*end != '\0' || !(o->days > 0) || o->days > 365)
				usage();
			break;
		case 'D':
			o->dir = optarg;
			break;
		case 'k':
			o->keep = true;
			break;
		case 'm':
			o->max_bytes = num_arg(optarg, 0, 1 << 20) << 20;
			o->max_set = true;
			break;
		case 'p':
			o->nprocs = (unsigned)num_arg(optarg, HOT_PROCS,
			    100000);
			break;
		case 'q':
			o->nqueries = (unsigned)num_arg(optarg, 1, 100000);
			break;
		case 's':
			o->seed = num_arg(optarg, 1, UINT64_MAX);
			break;
		case 't':
			o->nthreads = (unsigned)num_arg(optarg, 0, 1000000);
			break;
		case 'S':
			o->spool_dir = optarg;
			break;
		case 'M':
			o->maint_every = (unsigned)num_arg(optarg, 1, 8640);
			break;
		case 'j':
			if (strcmp(optarg, "persist") == 0)
				o->journal = STORE_JOURNAL_PERSIST;
			else if (strcmp(optarg, "truncate") == 0)
				o->journal = STORE_JOURNAL_TRUNCATE;
			else if (strcmp(optarg, "wal") == 0)
				o->journal = STORE_JOURNAL_WAL;
			else
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (o->nactive > o->nprocs)
		o->nactive = o->nprocs;
}

/* Bytes this process passed to write() and caused to reach storage. */
struct io {
	uint64_t wchar, write_bytes;
};

static void
io_read(struct io *ret)
{
	char buf[512], *p;
	FILE *f;

	memset(ret, 0, sizeof(*ret));
	if ((f = fopen("/proc/self/io", "re")) == NULL)
		return;
	while (fgets(buf, sizeof(buf), f) != NULL) {
		if ((p = strchr(buf, ':')) == NULL)
			continue;
		*p++ = '\0';
		if (strcmp(buf, "wchar") == 0)
			ret->wchar = strtoull(p, NULL, 10);
		else if (strcmp(buf, "write_bytes") == 0)
			ret->write_bytes = strtoull(p, NULL, 10);
	}
	fclose(f);
}

static void
io_add(struct io *acc, const struct io *a, const struct io *b)
{
	acc->wchar += b->wchar - a->wchar;
	acc->write_bytes += b->write_bytes - a->write_bytes;
}

struct bench {
	struct opts o;
	struct store_opts so;
	struct store *st;
	struct sim sim;
	char dir[PATH_MAX], db[PATH_MAX + 16], spool[PATH_MAX + 40];
	uint64_t nwin;
	int64_t end_s, now_ns;
	struct series put, put_bound, maint;
	uint64_t bound_at_s; /* first deletion by the size bound */
	uint64_t put_ckpt;   /* puts after which the WAL had shrunk */
	char wal[PATH_MAX + 32];
	struct snap snaps[16];
	char bpf_bytes[256]; /* -B: BPF blob bytes per window, by level */
	size_t nsnap;
	struct qres qs[2];
	size_t nq;
	struct io io_put, io_maint;
	double real_s, query_s;
	/* -I: the kernel's write_bytes and the shim's counts at each mark */
	struct io io_at[16];
	struct io_counts vfs_at[16];
	int64_t io_at_s[16];
	char *pages_at[16]; /* the b-tree table of each phase */
	size_t nio;
};

static void
bench_setup(struct bench *b)
{
	char ver[64], uv[16], sp[32];
	int64_t wall0;
	int r;

	store_opts_default(&b->so);
	if (b->o.max_set)
		b->so.max_bytes = b->o.max_bytes;
	b->nwin = (uint64_t)llround(b->o.days * DAY_S / WINDOW_S);
	b->nwin -= b->nwin % MAINTAIN_EVERY_N;
	if (b->nwin < MAINTAIN_EVERY_N)
		b->nwin = MAINTAIN_EVERY_N;
	b->end_s = (int64_t)b->nwin * WINDOW_S;

	snprintf(b->dir, sizeof(b->dir), "%s/store_bench.XXXXXX", b->o.dir);
	if (mkdtemp(b->dir) == NULL)
		fatal("mkdtemp %s", b->dir);
	snprintf(b->db, sizeof(b->db), "%s/vitals.db", b->dir);
	snprintf(b->wal, sizeof(b->wal), "%s-wal", b->db);
	/* With a spool (on a RAM file system: its writes reach no storage)
	 * each put commits there and every maintenance pass, once a
	 * simulated minute, moves the six windows waiting: the daemon's
	 * batched commits at store_commit_s 60 */
	if (b->o.spool_dir) {
		snprintf(b->spool, sizeof(b->spool), "%s/store_bench-%d.db",
		    b->o.spool_dir, (int)getpid());
		b->so.spool_path = b->spool;
		b->so.commit_s = 3600;
	}
	if (b->o.journal >= 0)
		b->so.journal = (enum store_journal)b->o.journal;
	if (b->o.rollup_batch >= 0)
		b->so.rollup_batch_s = b->o.rollup_batch;
	if (b->o.io) {
		if (io_vfs_install() < 0)
			fatalx("io_vfs_install");
		io_vfs_track(b->db);
	}
	if ((r = store_open(b->db, &b->so, &b->st)) < 0)
		fatalx("store_open %s: %s", b->db, strerror(-r));
	store_exec(b->st, "SELECT sqlite_version()", ver, sizeof(ver));
	store_exec(b->st, "PRAGMA user_version", uv, sizeof(uv));

	/* The run ends at the present, on a 10-minute boundary, so a kept
	 * database reads like a real one. */
	wall0 = clock_ns(CLOCK_REALTIME) / SEC(600) * SEC(600) - SEC(b->end_s);
	if ((r = sim_init(&b->sim, &b->o, wall0)) < 0)
		fatalx("sim_init: %s", strerror(-r));

	printf("store_bench: %u CPUs, %u processes with %zu threads, per "
	       "window %u active processes\n  and %u active threads, %d s "
	       "windows\n",
	    b->o.ncpus, b->o.nprocs, b->sim.nt, b->o.nactive, b->o.nthreads,
	    WINDOW_S);
	printf("figures: %s\n",
	    b->o.drifting ? "drifting (-F drifting)" :
			    "redrawn at random every window (-F random)");
	printf("simulating %s (%" PRIu64 " windows), store_maintain every "
	       "%u windows (%u simulated s)\n",
	    span_name(b->end_s, sp, sizeof(sp)), b->nwin, MAINTAIN_EVERY_N,
	    MAINTAIN_EVERY_N * WINDOW_S);
	printf("database: %s (%s), sqlite %s, schema %s\n", b->db,
	    fs_name(b->dir), ver, uv);
	printf("store options: roll-up 1 after %lld h into %u s, roll-up 2 "
	       "after %lld h into %u s,\n  retain %lld d, ",
	    (long long)b->so.rollup1_after_s / 3600, b->so.rollup1_s,
	    (long long)b->so.rollup2_after_s / 3600, b->so.rollup2_s,
	    (long long)b->so.retain_s / DAY_S);
	if (b->so.rollup_batch_s)
		printf("roll-ups in batches of %lld s, ",
		    (long long)b->so.rollup_batch_s);
	if (b->so.max_bytes)
		printf("max %.0f MiB (main file + WAL)\n",
		    mib(b->so.max_bytes));
	else
		printf("no size bound\n");
	if (b->so.spool_path)
		printf("spool %s, moved at each maintenance pass; main file "
		       "journal %s\n\n",
		    b->so.spool_path,
		    b->so.journal == STORE_JOURNAL_WAL		? "WAL" :
			b->so.journal == STORE_JOURNAL_TRUNCATE ? "TRUNCATE" :
								  "PERSIST");
	else
		printf("no spool: each window its own commit, WAL\n\n");
	fflush(stdout);
}

static void
bench_queries(struct bench *b, int64_t at_s)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);

	run_queries(b->st, b->o.nqueries, at_s, b->now_ns, &b->qs[b->nq++]);
	b->query_s += (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

/* -I: the b-tree table of the phase that ends here, kept as text */
static char *
io_pages_text(double days)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	io_vfs_print_pages(f, days);
	fclose(f);
	return buf;
}

/* -I: totals at a mark, the phases of the day told apart later */
static void
io_mark(struct bench *b, int64_t at_s)
{
	if (b->nio >= sizeof(b->io_at) / sizeof(b->io_at[0]))
		return;
	b->io_at[b->nio].wchar = b->io_put.wchar + b->io_maint.wchar;
	b->io_at[b->nio].write_bytes = b->io_put.write_bytes +
	    b->io_maint.write_bytes;
	io_vfs_counts(&b->vfs_at[b->nio]);
	b->pages_at[b->nio] = io_pages_text(
	    (double)(at_s - (b->nio ? b->io_at_s[b->nio - 1] : 0)) / DAY_S);
	b->io_at_s[b->nio++] = at_s;
}

static void
bench_run(struct bench *b)
{
	static const int64_t marks[] = { HOUR_S, 6 * HOUR_S, 12 * HOUR_S, DAY_S,
		2 * DAY_S, 3 * DAY_S, 7 * DAY_S };
	int64_t t_start = clock_ns(CLOCK_MONOTONIC), t0, dt, at_s;
	struct store_stats ss;
	struct io i0, i1;
	uint64_t w_i, del0, wal0 = 0, wal1;
	size_t i;
	int r;

	for (w_i = 0; w_i < b->nwin; w_i++) {
		struct window *w = sim_window(&b->sim, w_i);

		if (w == NULL)
			fatalx("out of memory");
		at_s = (int64_t)(w_i + 1) * WINDOW_S;
		store_get_stats(b->st, &ss);
		del0 = ss.deleted_size;
		io_read(&i0);
		t0 = clock_ns(CLOCK_MONOTONIC);
		r = store_put(b->st, w);
		dt = clock_ns(CLOCK_MONOTONIC) - t0;
		io_read(&i1);
		if (r < 0)
			fatalx("store_put window %" PRIu64 ": %s", w_i,
			    strerror(-r));
		io_add(&b->io_put, &i0, &i1);
		/* A put that checkpointed leaves a truncated WAL. */
		if ((wal1 = file_size(b->wal)) < wal0)
			b->put_ckpt++;
		wal0 = wal1;
		b->now_ns = w->wall_end_ns;
		window_free(w);
		if (series_add(&b->put, dt) < 0)
			fatalx("out of memory");
		store_get_stats(b->st, &ss);
		if (ss.deleted_size != del0) {
			if (b->bound_at_s == 0)
				b->bound_at_s = (uint64_t)at_s;
			if (series_add(&b->put_bound, dt) < 0)
				fatalx("out of memory");
		}
		if ((w_i + 1) % MAINTAIN_EVERY_N == 0) {
			io_read(&i0);
			t0 = clock_ns(CLOCK_MONOTONIC);
			r = store_maintain(b->st, b->now_ns);
			dt = clock_ns(CLOCK_MONOTONIC) - t0;
			io_read(&i1);
			if (r < 0)
				fatalx("store_maintain: %s", strerror(-r));
			io_add(&b->io_maint, &i0, &i1);
			if (b->o.io)
				io_vfs_attribute();
			if (series_add(&b->maint, dt) < 0)
				fatalx("out of memory");
			store_get_stats(b->st, &ss);
			if (b->bound_at_s == 0 && ss.deleted_size)
				b->bound_at_s = (uint64_t)at_s;
		}
		if (at_s == b->end_s)
			break;
		for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
			if (marks[i] == at_s && b->o.io)
				io_mark(b, at_s);
		for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
			if (marks[i] == at_s)
				take_snap(b->st, b->db, at_s, b->now_ns, false,
				    &b->snaps[b->nsnap++]);
		if (at_s == DAY_S)
			bench_queries(b, at_s);
	}
	if (b->o.io)
		io_mark(b, b->end_s);
	take_snap(b->st, b->db, b->end_s, b->now_ns, true,
	    &b->snaps[b->nsnap++]);
	bench_queries(b, b->end_s);
	/* -B: what the BPF rows cost, per stored window and level */
	if (b->o.bpf &&
	    store_exec(b->st,
		"SELECT group_concat('L' || level || ' ' || n || ' windows, '"
		" || bytes || ' bytes/window', '; ') FROM (SELECT w.level,"
		" count(*) AS n, CAST(avg(length(p.bpf)) AS INTEGER) AS bytes"
		" FROM windows w JOIN window_parts p ON p.window_id = w.id"
		" GROUP BY w.level)",
		b->bpf_bytes, sizeof(b->bpf_bytes)) < 0)
		b->bpf_bytes[0] = '\0';
	b->real_s = (double)(clock_ns(CLOCK_MONOTONIC) - t_start) / 1e9;
}

static void
print_dist(const char *label, const struct dist *d)
{
	printf("  %-26s %7zu %8.3f %8.3f %8.3f %8.3f %8.3f %7.1f\n", label,
	    d->n, d->p50, d->p90, d->p99, d->max, d->mean, d->total_s);
}

static void
print_query(const char *range, int64_t at_s, const struct dist *d, size_t rows)
{
	char lab[64], sp[32];

	snprintf(lab, sizeof(lab), "at %s, last %s",
	    span_name(at_s, sp, sizeof(sp)), range);
	printf("  %-30s %5zu %8.3f %8.3f %8.3f %8.3f %5zu\n", lab, d->n, d->p50,
	    d->p90, d->p99, d->max, rows);
}

/* -I: what each phase of the run wrote, per simulated day, by file and
 * kind, against the live bytes the store held at its end */
static void
io_report(const struct bench *b, double days)
{
	static const char *const kn[IO_NKIND] = { "main+", "main~", "journal",
		"wal", "other" };
	struct io_counts z = { 0 };
	const struct io_counts *p = &z, *c;
	uint64_t wb0 = 0, wb, live;
	int64_t s0 = 0;
	size_t i, j, k;
	char sp[32], sp0[32];

	(void)days;
	printf("\nwritten per simulated day, by phase (main+ appended pages, "
	       "main~ rewritten in place; MB = 10^6 B):\n");
	for (i = 0; i < b->nio; i++) {
		double d = (double)(b->io_at_s[i] - s0) / DAY_S;

		c = &b->vfs_at[i];
		wb = b->io_at[i].write_bytes - wb0;
		live = 0;
		for (j = 0; j < b->nsnap; j++)
			if (b->snaps[j].at_s == b->io_at_s[i])
				live = b->snaps[j].live_bytes;
		printf("  %6s-%-6s kernel %7.1f MB/day  sqlite",
		    span_name(s0, sp0, sizeof(sp0)),
		    span_name(b->io_at_s[i], sp, sizeof(sp)),
		    (double)wb / 1e6 / d);
		for (k = 0; k < IO_NKIND; k++)
			if (c->bytes[k] - p->bytes[k])
				printf(" %s %.1f", kn[k],
				    (double)(c->bytes[k] - p->bytes[k]) / 1e6 /
					d);
		printf("  syncs %.0f/day  live at end %.2f MB\n",
		    (double)(c->syncs - p->syncs) / d, (double)live / 1e6);
		if (b->pages_at[i])
			fputs(b->pages_at[i], stdout);
		p = c;
		wb0 = b->io_at[i].write_bytes;
		s0 = b->io_at_s[i];
	}
}

static void
bench_report(const struct bench *b)
{
	struct dist dh = dist_of(&b->put, 0,
	    b->put.n < HOUR_S / WINDOW_S ? b->put.n : HOUR_S / WINDOW_S);
	struct dist da = dist_of(&b->put, 0, b->put.n);
	struct dist dbd = dist_of(&b->put_bound, 0, b->put_bound.n);
	struct dist dm = dist_of(&b->maint, 0, b->maint.n);
	const struct snap *s1 = NULL, *s24 = NULL, *s48 = NULL;
	const struct snap *last = &b->snaps[b->nsnap - 1];
	const struct qres *ql = &b->qs[b->nq - 1];
	double per_hour = 0, per_day = 0, per_day_l2 = 0;
	double days = (double)b->end_s / DAY_S;
	uint64_t wchar = b->io_put.wchar + b->io_maint.wchar;
	uint64_t wbytes = b->io_put.write_bytes + b->io_maint.write_bytes;
	char sp[32];
	size_t i;

	printf("window commit, store_put (ms)   n       p50      p90      p99"
	       "      max     mean total s\n");
	print_dist("first simulated hour", &dh);
	print_dist("whole run", &da);
	if (dbd.n)
		print_dist("puts that enforced max", &dbd);
	printf("  WAL truncated (checkpoint) after %" PRIu64 " puts "
	       "(one in %.1f)\n",
	    b->put_ckpt, b->put_ckpt ? (double)b->nwin / b->put_ckpt : 0.0);
	if (b->o.bpf)
		printf("bpf rows blob: %s\n", b->bpf_bytes);
	printf("store_maintain (ms)\n");
	print_dist("every simulated minute", &dm);

	printf("\ndatabase size  main+WAL (bytes)     MiB  live MiB  windows "
	       "L0/L1/L2   oldest  rolled  del_age del_size\n");
	for (i = 0; i < b->nsnap; i++) {
		const struct snap *s = &b->snaps[i];

		printf("  %-8s %16" PRIu64 " %8.2f %8.2f  %6lld/%5lld/%4lld "
		       "%7.1fh %7" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
		    span_name(s->at_s, sp, sizeof(sp)),
		    s->main_bytes + s->wal_bytes,
		    mib(s->main_bytes + s->wal_bytes), mib(s->live_bytes),
		    s->lvl[0], s->lvl[1], s->lvl[2], s->oldest_h, s->rolled,
		    s->deleted_age, s->deleted_size);
		if (s->at_s == HOUR_S)
			s1 = s;
		if (s->at_s == DAY_S)
			s24 = s;
		if (s->at_s == 2 * DAY_S)
			s48 = s;
	}
	if (s1) {
		per_hour = (double)(s1->main_bytes + s1->wal_bytes);
		printf("  per hour (first hour, level 0): %.0f bytes = %.2f "
		       "MiB, %.1f KiB/window\n",
		    per_hour, mib((uint64_t)per_hour),
		    per_hour / 1024 / (HOUR_S / WINDOW_S));
	}
	if (s24) {
		per_day = (double)(s24->main_bytes + s24->wal_bytes);
		printf("  first day (6 h level 0 + 18 h level 1): %.0f bytes = "
		       "%.2f MiB%s\n",
		    per_day, mib((uint64_t)per_day),
		    s24->deleted_size ? " (size bound already reached)" : "");
	}
	if (s24 && s48 && !s48->deleted_size) {
		per_day_l2 = (double)s48->live_bytes - (double)s24->live_bytes;
		printf(
		    "  each further day (level 2, live growth 24 h -> 48 h): "
		    "%.0f bytes = %.2f MiB\n",
		    per_day_l2, mib((uint64_t)per_day_l2));
	}
	if (b->bound_at_s)
		printf(
		    "  size bound (%.0f MiB) first enforced at %.1f h "
		    "simulated; at the end the oldest window is %.1f h old\n",
		    mib(b->so.max_bytes), (double)b->bound_at_s / HOUR_S,
		    last->oldest_h);
	printf("  steady state: %.2f MiB at %s\n",
	    mib(last->main_bytes + last->wal_bytes),
	    span_name(last->at_s, sp, sizeof(sp)));
	printf("  task rows per stored window at the end:");
	for (i = 0; i < 3; i++)
		if (last->lvl[i])
			printf("  L%zu %.0f procs + %.0f threads", i,
			    last->procs_per[i], last->threads_per[i]);
	if (last->tables[0])
		printf("\n  KiB per table and index at the end: %s",
		    last->tables);
	printf("\n  written by puts + maintenance: %.2f GiB to write(), "
	       "%.2f GiB to storage;\n  per simulated day %.0f MiB to storage "
	       "(puts %.0f KiB/window, maintenance %.0f MiB/day)\n",
	    (double)wchar / 1073741824.0, (double)wbytes / 1073741824.0,
	    mib(wbytes) / days,
	    (double)b->io_put.write_bytes / 1024 / (double)b->nwin,
	    mib(b->io_maint.write_bytes) / days);

	if (b->o.io)
		io_report(b, days);
	printf("\nstore_top, 20 processes by CPU (ms)  n       p50      p90"
	       "      p99      max  rows\n");
	for (i = 0; i < b->nq; i++) {
		print_query("hour", b->qs[i].at_s, &b->qs[i].h1,
		    b->qs[i].rows_h1);
		print_query("day", b->qs[i].at_s, &b->qs[i].d1,
		    b->qs[i].rows_d1);
	}
	printf("\nrun: %.1f s real for %s simulated: puts %.1f s, maintenance "
	       "%.1f s, queries %.1f s\n",
	    b->real_s, span_name(b->end_s, sp, sizeof(sp)), da.total_s,
	    dm.total_s, b->query_s);

	printf(
	    "RESULT store commit_p50_ms=%.3f commit_p99_ms=%.3f "
	    "bytes_per_hour=%.0f bytes_per_day=%.0f top20_1h_p50_ms=%.3f "
	    "top20_1d_p50_ms=%.3f commit_1h_p50_ms=%.3f commit_1h_p99_ms=%.3f "
	    "commit_max_ms=%.3f bytes_per_day_l2=%.0f steady_bytes=%" PRIu64
	    " top20_1h_p99_ms=%.3f top20_1d_p99_ms=%.3f top20_at_s=%lld "
	    "maintain_p50_ms=%.3f maintain_max_ms=%.3f bound_hit_s=%" PRIu64
	    " storage_write_bytes_per_day=%.0f days=%.3f\n",
	    da.p50, da.p99, per_hour, per_day, ql->h1.p50, ql->d1.p50, dh.p50,
	    dh.p99, da.max, per_day_l2, last->main_bytes + last->wal_bytes,
	    ql->h1.p99, ql->d1.p99, (long long)ql->at_s, dm.p50, dm.max,
	    b->bound_at_s, (double)wbytes / days, days);
}

static void
bench_cleanup(struct bench *b)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[PATH_MAX + 32];
	size_t i;

	store_close(b->st);
	sim_free(&b->sim);
	free(b->put.v);
	free(b->put_bound.v);
	free(b->maint.v);
	if (b->o.keep) {
		printf("kept %s\n", b->dir);
		return;
	}
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", b->db, sfx[i]);
		unlink(p);
	}
	if (rmdir(b->dir) < 0)
		log_warn("rmdir %s", b->dir);
}

int
main(int argc, char **argv)
{
	static struct bench b;

	log_init(true, 0, "store_bench");
	parse_opts(argc, argv, &b.o);
	bench_setup(&b);
	bench_run(&b);
	bench_report(&b);
	bench_cleanup(&b);
	return 0;
}
