/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One sample: read the system files and scan the processes, decide whether
 * the sample is valid, turn two reads into deltas, and fold them into the
 * open window. Timestamps come from the caller so tests can drive it with
 * synthetic clocks over a fixture tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "fgbg/fgbg.h"
#include "proc/proc.h"
#include "taskiter/taskiter.h"
#include "window/collector.h"
#include "window/window.h"

struct collector {
	unsigned hz;
	unsigned interval_ms;
	int64_t window_ns;
	int procfd;
	struct sysfiles *sf;
	struct procscan *ps;
	struct fgbg *fg; /* foreground/background (fgbg.c); NULL: none */
	struct sys_sample *prev, *cur;
	bool have_prev;
	struct clocks prev_clk;
	struct window *open;
	int64_t target_ns; /* nominal end of the open window */
	uint64_t seq;
	char boot_id[40];	/* identifies this boot in stored windows */
	struct provenance prov; /* copied into each window */
	struct rusage ru;	/* at the open window's start */
	struct window **ring;
	unsigned ring_cap, ring_n, ring_head;
	window_cb cb;
	void *cb_arg;
	window_close_hook close_hook; /* fills the window before the ring */
	window_flip_hook flip_hook;   /* the close's flip, before its scan */
	void *flip_arg;
	/* collector_prepare flipped for the sample it prepared (ahead_flip),
	 * with this result; that sample does not flip again */
	bool ahead_flip, ahead_flipped;
	struct window *pending; /* closed, a part still being filled */
	void *close_arg;
};

void
collector_clocks(struct clocks *ret)
{
	ret->mono_ns = clock_ns(CLOCK_MONOTONIC);
	ret->boot_ns = clock_ns(CLOCK_BOOTTIME);
	ret->wall_ns = clock_ns(CLOCK_REALTIME);
}

static int
window_open(struct collector *c, const struct clocks *now)
{
	unsigned span = c->have_prev ? c->prev->stat.cpu_span : 0;
	struct window *w = window_new(++c->seq, span);

	if (w == NULL)
		return -ENOMEM;
	w->mono_start_ns = now->mono_ns;
	w->boot_start_ns = now->boot_ns;
	w->wall_start_ns = now->wall_ns;
	w->hz = c->hz;
	memcpy(w->boot_id, c->boot_id, sizeof(w->boot_id));
	w->prov = c->prov;
	/* The loop thread only: the writer's and queries' CPU is not the
	 * collector's. */
	getrusage(RUSAGE_THREAD, &c->ru);
	if (c->target_ns == 0 || c->target_ns <= now->mono_ns)
		c->target_ns = now->mono_ns + c->window_ns;
	c->open = w;
	return 0;
}

/* Monotonic time restarts at boot: the boot id tells two boots apart. */
static void
read_boot_id(struct collector *c)
{
	struct vbuf b = { 0 };
	size_t i, n = 0;

	if (read_at(c->procfd, "sys/kernel/random/boot_id", &b) == 0) {
		for (i = 0; i < b.len && n < sizeof(c->boot_id) - 1; i++)
			if ((b.p[i] >= '0' && b.p[i] <= '9') ||
			    (b.p[i] >= 'a' && b.p[i] <= 'f') || b.p[i] == '-')
				c->boot_id[n++] = b.p[i];
	}
	c->boot_id[n] = '\0';
	vbuf_release(&b);
}

int
collector_new(const struct collector_opts *o, struct collector **ret)
{
	struct collector *c;
	long hz = o->hz;
	int r;

	if (o->window_s == 0 || o->interval_ms < VITALS_INTERVAL_MIN_MS)
		return -EINVAL;
	if (hz == 0 && (hz = sysconf(_SC_CLK_TCK)) <= 0)
		return -EINVAL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	c->hz = (unsigned)hz;
	c->interval_ms = o->interval_ms;
	c->window_ns = (int64_t)o->window_s * NSEC_PER_SEC;
	c->ring_cap = o->ring ? o->ring : 1;
	c->procfd = -1;
	c->prev = calloc(1, sizeof(*c->prev));
	c->cur = calloc(1, sizeof(*c->cur));
	c->ring = calloc(c->ring_cap, sizeof(*c->ring));
	if (c->prev == NULL || c->cur == NULL || c->ring == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	c->procfd = open(o->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->procfd < 0) {
		r = -errno;
		goto fail;
	}
	read_boot_id(c);
	if ((r = sysfiles_open(o->proc_root, o->sys_root, &c->sf)) < 0)
		goto fail;
	if ((r = procscan_new(c->procfd, c->hz, o->threads, &c->ps)) < 0)
		goto fail;
	/* Not fatal: /proc stands in, collector_scanner() says why. */
	(void)procscan_set_scanner(c->ps, (enum scanner_mode)o->scanner,
	    o->sys_root);
	procscan_set_stat_fds(c->ps, statfd_limit(o->stat_fds));
	procscan_set_walk_period(c->ps,
	    (uint64_t)o->full_walk_s * (uint64_t)NSEC_PER_SEC);
	/* hidepid: count what the scan cannot see (proc_hidden.c); a mount
	 * that cannot be looked at is taken as hiding nothing */
	(void)procscan_watch_hidden(c->ps, o->sys_root);
	*ret = c;
	return 0;
fail:
	collector_free(c);
	return r;
}

void
collector_set_fgbg(struct collector *c, struct fgbg *fg)
{
	c->fg = fg;
}

int
collector_ident_async(struct collector *c, struct event_base *base)
{
	return procscan_ident_async(c->ps, base, 0);
}

int
collector_walk_async(struct collector *c, struct event_base *base,
    void (*cb)(void *arg), void *arg)
{
	return procscan_walk_async(c->ps, base, cb, arg);
}

bool
collector_walk_owed(const struct collector *c)
{
	return procscan_walk_owed(c->ps);
}

void
collector_walk_delay_test(struct collector *c, unsigned ms)
{
	procscan_walk_delay_test(c->ps, ms);
}

void
collector_fork_epoch_test(struct collector *c, uint16_t epoch)
{
	procscan_fork_epoch_test(c->ps, epoch);
}

/*
 * The sample due at now, made ready: a close flips here (as the sample
 * would, right before its scan), and a full walk is started on the scan's
 * worker when the sample will walk. 1: it was; the sample runs from the
 * walk's continuation (collector_walk_async's cb) with now then. 0: the
 * sample runs now. Nothing else may sample in between; a close that comes
 * first (outside a sample: today only the stop's) takes the flip and
 * drops the walk.
 */
int
collector_prepare(struct collector *c, const struct clocks *now)
{
	struct scan_ctx ctx = { 0 };

	c->ahead_flip = false;
	ctx.have_prev = c->have_prev;
	ctx.prev_boot_ns = c->prev_clk.boot_ns;
	ctx.boot_ns = now->boot_ns;
	/* no window open (the first sample): the one its sample opens ends
	 * a window later (window_open), so that sample does not close it */
	ctx.full = c->open != NULL &&
	    now->mono_ns + (int64_t)c->interval_ms * NSEC_PER_MSEC / 2 >=
		c->target_ns;
	if (ctx.full && c->flip_hook != NULL) {
		ctx.flipped = c->flip_hook(c->flip_arg);
		c->ahead_flip = true;
		c->ahead_flipped = ctx.flipped;
	}
	return procscan_walk_start(c->ps, &ctx);
}

int
collector_set_events(struct collector *c, const struct taskiter_events *ev,
    const char *sys_root)
{
	return procscan_set_events(c->ps, ev, sys_root);
}

void
collector_set_provenance(struct collector *c, const struct provenance *p)
{
	c->prov = *p;
}

struct collector *
collector_free(struct collector *c)
{
	unsigned i;

	if (c == NULL)
		return NULL;
	procscan_free(c->ps);
	sysfiles_free(c->sf);
	if (c->procfd >= 0)
		close(c->procfd);
	for (i = 0; i < c->ring_cap && c->ring; i++)
		window_free(c->ring[i]);
	window_free(c->open);
	window_free(c->pending);
	free(c->ring);
	free(c->prev);
	free(c->cur);
	free(c);
	return NULL;
}

void
collector_set_interval(struct collector *c, unsigned interval_ms)
{
	c->interval_ms = interval_ms;
}

void
collector_note_late(struct collector *c)
{
	if (c->open)
		c->open->health.late_ticks++;
}

/* How late the sampling timer fired against its grid (control plane), and
 * of that the time the loop was held by an earlier callback and the time
 * its thread waited for a CPU (loopstat_late). */
void
collector_note_tick(struct collector *c, int64_t late_ns, uint64_t held_ns,
    uint64_t runq_ns)
{
	uint64_t late = late_ns > 0 ? (uint64_t)late_ns : 0;

	if (c->open == NULL)
		return;
	if (runq_ns == UINT64_MAX) {
		c->open->health.tick_late_runq_absent = true;
		runq_ns = 0;
	}
	c->open->health.tick_late_ns_sum += late;
	c->open->health.tick_late_held_ns_sum += held_ns;
	c->open->health.tick_late_runq_ns_sum += runq_ns;
	{
		static const uint64_t ms[] = VITALS_LATE_BOUNDS_MS;
		unsigned i;

		for (i = 0; i + 1 < VITALS_LATE_BUCKETS &&
		     late >= ms[i] * NSEC_PER_MSEC;
		     i++)
			;
		c->open->health.tick_late_hist[i]++;
	}
	if (late > c->open->health.tick_late_ns_max) {
		c->open->health.tick_late_ns_max = late;
		c->open->health.tick_late_max_held_ns = held_ns;
		c->open->health.tick_late_max_runq_ns = runq_ns;
	}
}

void
collector_set_window_cb(struct collector *c, window_cb cb, void *arg)
{
	c->cb = cb;
	c->cb_arg = arg;
}

/* Runs on the closing window before it is kept or handed to anyone (the
 * BPF drain); its cost counts in the collector's own CPU. */
void
collector_set_close_hook(struct collector *c, window_close_hook fn, void *arg)
{
	c->close_hook = fn;
	c->close_arg = arg;
}

void
collector_set_flip_hook(struct collector *c, window_flip_hook fn, void *arg)
{
	c->flip_hook = fn;
	c->flip_arg = arg;
}

unsigned
collector_hz(const struct collector *c)
{
	return c->hz;
}

void
collector_scanner(const struct collector *c, enum scanner_mode *ret_kind,
    enum scanner_why *ret_why, int *ret_err)
{
	procscan_scanner(c->ps, ret_kind, ret_why, ret_err);
}

const struct window *
collector_window(const struct collector *c, unsigned back)
{
	if (back >= c->ring_n)
		return NULL;
	return c->ring[(c->ring_head + c->ring_cap - 1 - back) % c->ring_cap];
}

const struct window *
collector_open(const struct collector *c)
{
	return c->open;
}

/* A file that is absent is "unavailable"; one that fails is counted. */
static void
count_file_error(struct window *w, int err)
{
	if (err == 0 || err == -ENOENT || err == -EOPNOTSUPP)
		return;
	/* An empty read (-ENODATA) is a failed read, as for /proc/stat. */
	w->inv_deltas[err == -EINVAL || err == -ERANGE ? INV_PARSE :
							 INV_READ_FAILED]++;
}

/* Σ a cumulative counter's delta, or count why it was dropped. */
static void
add_counter(struct window *w, uint64_t *acc, uint64_t prev, uint64_t cur)
{
	if (cur < prev)
		w->inv_deltas[INV_REGRESSION]++;
	else
		*acc += cur - prev;
}

static void
add_cpu_deltas(struct collector *c, struct window *w, uint64_t dmono)
{
	const struct procstat *p = &c->prev->stat, *s = &c->cur->stat;
	unsigned span = p->cpu_span > s->cpu_span ? p->cpu_span : s->cpu_span;
	struct cpu_times d;
	unsigned i;

	for (i = 0; i < span; i++) {
		bool was = i < p->cpu_span && p->online[i];
		bool is = i < s->cpu_span && s->online[i];

		if (was != is) {
			/* Hotplug: this CPU's delta spans on/offline time. */
			w->inv_deltas[INV_HOTPLUG]++;
			continue;
		}
		if (!is)
			continue;
		if (cpu_times_delta(&p->cpu[i], &s->cpu[i], &d) < 0) {
			w->inv_deltas[INV_REGRESSION]++;
			continue;
		}
		cpu_times_add(&w->cpu[i].d, &d);
		w->cpu[i].samples++;
		w->cpu[i].wall_ns += dmono;
	}
	if ((p->have & s->have & PROCSTAT_HAVE_CTXT))
		add_counter(w, &w->d_ctxt, p->ctxt, s->ctxt);
	if ((p->have & s->have & PROCSTAT_HAVE_PROCESSES))
		add_counter(w, &w->d_processes, p->processes, s->processes);
}

static void
add_psi_vm_deltas(struct collector *c, struct window *w)
{
	const struct sys_sample *p = c->prev, *s = c->cur;
	unsigned i;

	for (i = 0; i < PSI__MAX; i++) {
		struct window_psi *wp = &w->psi[i];

		if (p->psi_err[i] || s->psi_err[i])
			continue;
		if (s->psi[i].some.total_us < p->psi[i].some.total_us ||
		    (s->psi[i].have_full && p->psi[i].have_full &&
			s->psi[i].full.total_us < p->psi[i].full.total_us)) {
			w->inv_deltas[INV_REGRESSION]++;
			continue;
		}
		wp->d_some_us += s->psi[i].some.total_us -
		    p->psi[i].some.total_us;
		if (s->psi[i].have_full && p->psi[i].have_full)
			wp->d_full_us += s->psi[i].full.total_us -
			    p->psi[i].full.total_us;
		wp->samples++;
	}
	if (p->vm_err || s->vm_err)
		return;
	for (i = 0; i < VM__MAX; i++)
		if (p->vm.have & s->vm.have & (1u << i))
			add_counter(w, &w->d_vm[i], p->vm.v[i], s->vm.v[i]);
	w->vm_samples++;
}

/* Instantaneous readings: valid whatever happened to the deltas. */
static void
add_gauges(struct collector *c, struct window *w)
{
	const struct sys_sample *s = c->cur;
	unsigned i;

	if (s->stat_err == 0) {
		if (s->stat.have & PROCSTAT_HAVE_RUNNING)
			gauge_add(&w->procs_running,
			    (double)s->stat.procs_running);
		if (s->stat.have & PROCSTAT_HAVE_BLOCKED)
			gauge_add(&w->procs_blocked,
			    (double)s->stat.procs_blocked);
		gauge_add(&w->online_cpus, s->stat.ncpu_online);
		w->health.cpu_dropped = s->stat.cpu_dropped;
		for (i = 0; i < w->cpu_span; i++) {
			struct window_cpu *wc = &w->cpu[i];
			int64_t cur = s->cur_khz[i];

			wc->online_end = i < s->stat.cpu_span &&
			    s->stat.online[i];
			wc->max_khz = sysfiles_max_khz(c->sf, i);
			wc->capacity = sysfiles_capacity(c->sf, i);
			if (!wc->online_end || cur < 0)
				continue;
			gauge_add(&wc->cur_khz, (double)cur);
			if (wc->max_khz > 0)
				gauge_add(&wc->freq_ratio,
				    (double)cur / (double)wc->max_khz);
		}
	}
	count_file_error(w, s->loadavg_err);
	if (s->loadavg_err == 0) {
		gauge_add(&w->load1, s->loadavg.avg1);
		gauge_add(&w->load5, s->loadavg.avg5);
		gauge_add(&w->load15, s->loadavg.avg15);
		gauge_add(&w->load_runnable, s->loadavg.runnable);
		gauge_add(&w->load_threads, s->loadavg.threads);
	}
	for (i = 0; i < PSI__MAX; i++) {
		count_file_error(w, s->psi_err[i]);
		if (s->psi_err[i])
			continue;
		w->psi[i].available = true;
		w->psi[i].have_full = s->psi[i].have_full;
		gauge_add(&w->psi[i].some_avg10, s->psi[i].some.avg10);
		if (s->psi[i].have_full)
			gauge_add(&w->psi[i].full_avg10, s->psi[i].full.avg10);
	}
	count_file_error(w, s->vm_err);
	if (s->vm_err == 0)
		w->vm_have |= s->vm.have;
	count_file_error(w, s->mem_err);
	if (s->mem_err == 0) {
		for (i = 0; i < MI__MAX; i++)
			if (s->mem.have & (1u << i))
				gauge_add(&w->mem_kb[i], (double)s->mem.kb[i]);
		w->mem_have |= s->mem.have;
	}
}

/*
 * Decide whether this sample's deltas can be used at all; count the reason
 * once per sample when not. ret_* are the denominators for the process scan.
 */
static bool
sample_valid(struct collector *c, struct window *w, const struct clocks *now,
    uint64_t *ret_dmono, struct cpu_times *ret_d)
{
	int64_t dmono, dboot;
	struct cpu_times d;

	if (c->cur->stat_err) {
		w->inv_samples[c->cur->stat_err == -EINVAL ||
			    c->cur->stat_err == -ERANGE ?
			INV_PARSE :
			INV_READ_FAILED]++;
		return false;
	}
	if (!c->have_prev || c->prev->stat_err)
		return false; /* a baseline, not a failure */
	dmono = now->mono_ns - c->prev_clk.mono_ns;
	dboot = now->boot_ns - c->prev_clk.boot_ns;
	if (dmono <= 0) {
		w->inv_samples[INV_NO_ADVANCE]++;
		return false;
	}
	if (dboot - dmono > VITALS_SLEEP_NS) {
		w->inv_samples[INV_SLEPT]++;
		return false;
	}
	if (cpu_times_delta(&c->prev->stat.all, &c->cur->stat.all, &d) < 0) {
		w->inv_samples[INV_REGRESSION]++;
		return false;
	}
	*ret_dmono = (uint64_t)dmono;
	*ret_d = d;
	return true;
}

static void
add_health(struct window *w, const uint64_t coll_ns[COLL__MAX],
    uint64_t sample_ns)
{
	unsigned i;

	for (i = 0; i < COLL__MAX; i++) {
		w->health.coll_ns_sum[i] += coll_ns[i];
		if (coll_ns[i] > w->health.coll_ns_max[i])
			w->health.coll_ns_max[i] = coll_ns[i];
	}
	w->health.sample_ns_sum += sample_ns;
	if (sample_ns > w->health.sample_ns_max)
		w->health.sample_ns_max = sample_ns;
}

static int sample_run(struct collector *c, const struct clocks *now,
    bool burst);

int
collector_sample(struct collector *c, const struct clocks *now, bool burst)
{
	int r = sample_run(c, now, burst);

	/* a walk read for it that its scan did not take is of no later one */
	procscan_walk_unused(c->ps);
	c->ahead_flip = false;
	return r;
}

static int
sample_run(struct collector *c, const struct clocks *now, bool burst)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), t1;
	struct scan_ctx ctx = { 0 };
	struct sys_sample *tmp;
	struct cpu_times d;
	uint64_t dmono = 0;
	struct window *w;
	int r;

	if (c->open == NULL && (r = window_open(c, now)) < 0)
		return r;
	w = c->open;
	w->samples++;
	if (burst)
		w->health.burst_samples++;

	sysfiles_read(c->sf, c->cur);
	if (c->cur->stat_err == 0 &&
	    (r = window_grow_cpus(w, c->cur->stat.cpu_span)) < 0) {
		/* Taken but unusable: still counted under a reason. */
		w->inv_samples[INV_READ_FAILED]++;
		return r;
	}

	ctx.have_prev = c->have_prev;
	ctx.prev_boot_ns = c->prev_clk.boot_ns;
	if (c->cur->stat_err == 0 &&
	    (c->cur->stat.have & PROCSTAT_HAVE_PROCESSES)) {
		ctx.have_forks = true;
		ctx.forks = c->cur->stat.processes;
	}
	ctx.valid = sample_valid(c, w, now, &dmono, &d);
	if (ctx.valid) {
		uint64_t total = cpu_times_total(&d);
		unsigned online = c->cur->stat.ncpu_online;

		w->samples_valid++;
		cpu_times_add(&w->all.d, &d);
		w->all.samples++;
		w->all.wall_ns += dmono;
		add_cpu_deltas(c, w, dmono);
		add_psi_vm_deltas(c, w);
		ctx.wall_ns = dmono;
		ctx.total_ticks = total;
		ctx.norm_ticks = online ? (double)total / online : 0.0;
	}
	add_gauges(c, w);

	t1 = clock_ns(CLOCK_MONOTONIC);
	ctx.fg = c->fg;
	/* the window closes on this sample (below): its scan walks in full,
	 * or reads partially after the flip (doc/bpf.md, "Full walks") */
	ctx.full = now->mono_ns + (int64_t)c->interval_ms * NSEC_PER_MSEC / 2 >=
	    c->target_ns;
	ctx.boot_ns = now->boot_ns;
	if (ctx.full && c->ahead_flip)
		ctx.flipped = c->ahead_flipped; /* collector_prepare's */
	else if (ctx.full && c->flip_hook != NULL)
		ctx.flipped = c->flip_hook(c->flip_arg);
	r = procscan_run(c->ps, &ctx, w);
	fgbg_scanned(c->fg);
	c->cur->coll_ns[COLL_PROCS] = (uint64_t)(clock_ns(CLOCK_MONOTONIC) -
	    t1);
	add_health(w, c->cur->coll_ns,
	    (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0));

	/*
	 * This read is the next baseline even when the process scan failed:
	 * the system deltas are already in the window and must not be
	 * summed twice.
	 */
	tmp = c->prev;
	c->prev = c->cur;
	c->cur = tmp;
	c->prev_clk = *now;
	c->have_prev = true;
	if (r < 0) {
		/* /proc itself failed (EMFILE, ENOMEM): the window still
		 * closes on time, with the failure counted in it. */
		w->inv_deltas[INV_READ_FAILED]++;
	}

	/* Close on the sample nearest the nominal boundary. */
	if (now->mono_ns + (int64_t)c->interval_ms * NSEC_PER_MSEC / 2 >=
	    c->target_ns) {
		int rc = collector_close_window(c, now);

		if (rc < 0)
			return rc;
	}
	return r;
}

static uint64_t
tv_us(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

/* A closed window joins the ring and is handed out. */
static void
close_publish(struct collector *c, struct window *w)
{
	unsigned slot = c->ring_head;

	window_shrink(w);
	window_free(c->ring[slot]);
	c->ring[slot] = w;
	c->ring_head = (c->ring_head + 1) % c->ring_cap;
	if (c->ring_n < c->ring_cap)
		c->ring_n++;
	if (c->cb)
		c->cb(w, c->cb_arg);
}

uint64_t
collector_ring_bytes(const struct collector *c, unsigned *ret_n)
{
	uint64_t sum = 0;
	unsigned i, n = 0;

	for (i = 0; i < c->ring_cap; i++)
		if (c->ring[i]) {
			sum += window_bytes(c->ring[i]);
			n++;
		}
	if (c->open) {
		sum += window_bytes(c->open);
		n++;
	}
	if (c->pending) {
		sum += window_bytes(c->pending);
		n++;
	}
	*ret_n = n;
	return sum;
}

uint64_t
collector_tasks_bytes(const struct collector *c, uint32_t *ret_n)
{
	return procscan_bytes(c->ps, ret_n);
}

uint64_t
collector_taskiter_out_bytes(const struct collector *c)
{
	return procscan_out_bytes(c->ps);
}

struct window *
collector_pending(const struct collector *c)
{
	return c->pending;
}

void
collector_close_finish(struct collector *c)
{
	struct window *w = c->pending;

	if (w == NULL)
		return;
	c->pending = NULL;
	close_publish(c, w);
}

int
collector_close_window(struct collector *c, const struct clocks *now)
{
	struct window *w = c->open;
	struct rusage ru;
	int64_t half;
	int r, later = 0;

	/* a walk read ahead for a sample this close comes before is of no
	 * use to it (its continuation still runs that sample) */
	procscan_walk_cancel(c->ps);
	c->ahead_flip = false;
	if (w == NULL)
		return 0;
	/* windows are handed out in order: one left waiting goes first */
	collector_close_finish(c);
	w->mono_end_ns = now->mono_ns;
	w->boot_end_ns = now->boot_ns;
	w->wall_end_ns = now->wall_ns;
	w->interval_ms = c->interval_ms;
	if ((r = procscan_flush(c->ps, w)) < 0 ||
	    (r = fgbg_flush(c->fg, w)) < 0)
		return r;
	if (c->close_hook)
		later = c->close_hook(w, c->close_arg);
	getrusage(RUSAGE_THREAD, &ru);
	w->health.self_utime_us = tv_us(&ru.ru_utime) - tv_us(&c->ru.ru_utime);
	w->health.self_stime_us = tv_us(&ru.ru_stime) - tv_us(&c->ru.ru_stime);
	c->open = NULL;
	/*
	 * The next grid boundary this close has not reached. An early close
	 * (shutdown, flush) leaves the grid where it was, so the next window
	 * is never longer than window_s; a late one skips missed boundaries.
	 */
	half = (int64_t)c->interval_ms * NSEC_PER_MSEC / 2;
	if (c->target_ns <= now->mono_ns + half)
		c->target_ns +=
		    ((now->mono_ns + half - c->target_ns) / c->window_ns + 1) *
		    c->window_ns;
	if (later > 0)
		c->pending = w;
	else
		close_publish(c, w);
	return window_open(c, now);
}

int
collector_proc_lookup(const struct collector *c, int32_t pid,
    uint64_t *ret_starttime, char *ret_name, size_t namesz)
{
	return procscan_lookup(c->ps, pid, ret_starttime, ret_name, namesz);
}

const struct sys_sample *
collector_last_sys(const struct collector *c, struct clocks *ret_clk)
{
	if (!c->have_prev)
		return NULL;
	if (ret_clk)
		*ret_clk = c->prev_clk;
	return c->prev;
}

void
collector_each_proc(const struct collector *c, procscan_each_fn fn, void *arg)
{
	procscan_each(c->ps, fn, arg);
}
