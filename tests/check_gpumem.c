/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of GPU memory without a kernel map: the timeline fed by
 * gpumem_note_event (what the ftrace reader calls), attribution against a
 * scripted process table, windows and their roll-up, the store round trip
 * and span/growth queries, and the `vitals gpumem` text layout. The map
 * reader itself runs against real kernel maps in check_gpumem_kernel.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "gpumem_dumpsys.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define KEY(gpu, pid) (((uint64_t)(gpu) << 32) | (uint32_t)(pid))

/* A scripted process table: pid → (starttime, name); starttime 0: none. */
static struct {
	int32_t pid;
	uint64_t starttime;
	const char *name;
} procs[8];

static int
fake_lookup(void *arg, int32_t pid, uint64_t *ret_starttime, char *ret_name,
    size_t namesz)
{
	unsigned i;

	(void)arg;
	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		if (procs[i].pid != pid || procs[i].starttime == 0)
			continue;
		*ret_starttime = procs[i].starttime;
		snprintf(ret_name, namesz, "%s", procs[i].name);
		return 0;
	}
	return -ESRCH;
}

static void
set_proc(unsigned slot, int32_t pid, uint64_t starttime, const char *name)
{
	procs[slot].pid = pid;
	procs[slot].starttime = starttime;
	procs[slot].name = name;
}

/* A reader with no map (map-only, nothing pinned there): events only. */
static struct gpumem *
events_only(void)
{
	struct gpumem_opts o = {
		.map_path = "/nonexistent/vitals-gpumem-map",
		.load = GPUMEM_LOAD_MAP_ONLY,
	};
	struct gpumem *g = NULL;

	memset(procs, 0, sizeof(procs));
	ck_assert_int_eq(gpumem_new(&o, &g), 0);
	gpumem_set_lookup(g, fake_lookup, NULL);
	return g;
}

static struct window *
close_at(struct gpumem *g, uint64_t seq, int64_t end_ns)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	w->mono_start_ns = end_ns - 10 * SEC;
	w->mono_end_ns = end_ns;
	ck_assert_int_eq(gpumem_window(g, w), 0);
	return w;
}

static const struct window_gpu_proc *
find(const struct window *w, uint32_t gpu, int32_t pid)
{
	const struct window_gpumem_part *g = window_gpumem(w);
	size_t i;

	for (i = 0; g && i < g->n_gpu; i++)
		if (g->gpu[i].gpu_id == gpu && g->gpu[i].pid == pid)
			return &g->gpu[i];
	return NULL;
}

START_TEST(test_states_without_map)
{
	struct gpumem_opts o = { .map_path = "/nonexistent/x",
		.load = GPUMEM_LOAD_MAP_ONLY };
	struct gpumem *g = NULL;
	unsigned why;
	int err;

	ck_assert_int_eq(gpumem_new(&o, &g), 0);
	ck_assert_uint_eq(gpumem_state(g, &why, &err), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_NO_MAP);
	ck_assert_int_eq(gpumem_tick(g, 1 * SEC), 0);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_str_eq(gpumem_state_name(GPUMEM_NOT_INIT), "not initialised");
	ck_assert_str_eq(gpumem_state_name(GPUMEM_EMPTY), "empty");
	ck_assert_str_eq(gpumem_state_name(GPUMEM_ERROR), "traversal error");
	gpumem_free(g);

	o.load = GPUMEM_LOAD_OFF;
	ck_assert_int_eq(gpumem_new(&o, &g), 0);
	ck_assert_uint_eq(gpumem_state(g, &why, NULL), GPUMEM_NOT_INIT);
	ck_assert_uint_eq(why, GPUMEM_WHY_DISABLED);
	gpumem_free(g);
}
END_TEST

START_TEST(test_saturated)
{
	ck_assert(!gpumem_saturated(0, 1024));
	ck_assert(!gpumem_saturated(1007, 1024));
	ck_assert(gpumem_saturated(1008, 1024));
	ck_assert(gpumem_saturated(1024, 1024));
	ck_assert(!gpumem_saturated(5, 0)); /* capacity unknown */
	ck_assert(gpumem_saturated(7, 8));
	ck_assert(!gpumem_saturated(6, 8));
}
END_TEST

/* The ftrace path: totals between traversals give the window its range. */
START_TEST(test_note_event_timeline)
{
	struct gpumem *g = events_only();
	const struct window_gpu_proc *p;
	struct window *w;

	set_proc(0, 100, 50, "com.example.game"); /* started at 0.5 s */
	gpumem_note_event(g, 0, 0, 1000000, 1 * SEC);
	gpumem_note_event(g, 0, 100, 4096, 1 * SEC);
	gpumem_note_event(g, 0, 100, 65536, 2 * SEC);
	gpumem_note_event(g, 0, 100, 8192, 3 * SEC);
	gpumem_note_event(g, 1, 200, 777, 3 * SEC); /* pid 200: no process */
	w = close_at(g, 1, 10 * SEC);

	ck_assert_uint_eq(window_gpumem(w)->st.events, 5);
	ck_assert_uint_eq(window_gpumem(w)->st.events_late, 0);
	ck_assert_uint_eq(window_gpumem(w)->n_gpu, 3);
	/* gpu, then pid order */
	ck_assert_uint_eq(window_gpumem(w)->gpu[0].gpu_id, 0);
	ck_assert_int_eq(window_gpumem(w)->gpu[0].pid, 0);
	ck_assert_uint_eq(window_gpumem(w)->gpu[0].bytes, 1000000);
	ck_assert(!window_gpumem(w)->gpu[0].stale);
	p = find(w, 0, 100);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->bytes, 8192);
	ck_assert_uint_eq(p->min_bytes, 4096);
	ck_assert_uint_eq(p->max_bytes, 65536);
	ck_assert_uint_eq(p->starttime, 50);
	ck_assert_str_eq(p->name, "com.example.game");
	ck_assert(!p->stale);
	p = find(w, 1, 200);
	ck_assert_ptr_nonnull(p);
	ck_assert(p->stale);
	ck_assert_uint_eq(p->starttime, 0);
	ck_assert_str_eq(p->name, "");
	ck_assert_uint_eq(window_gpumem(w)->st.stale, 1);
	window_free(w);

	/* next window: starts from each pair's total; size 0 deletes */
	gpumem_note_event(g, 0, 100, 0, 12 * SEC);
	gpumem_note_event(g, 0, 0, 2000000, 5 * SEC); /* late: ignored */
	w = close_at(g, 2, 20 * SEC);
	ck_assert_uint_eq(window_gpumem(w)->st.events, 2);
	ck_assert_uint_eq(window_gpumem(w)->st.events_late, 1);
	p = find(w, 0, 0);
	ck_assert_uint_eq(p->bytes, 1000000);
	ck_assert_uint_eq(p->min_bytes, 1000000);
	ck_assert_uint_eq(p->max_bytes, 1000000);
	p = find(w, 0, 100);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->bytes, 0);
	ck_assert_uint_eq(p->min_bytes, 0);
	ck_assert_uint_eq(p->max_bytes, 8192);
	window_free(w);

	/* deleted pairs are gone one window later */
	w = close_at(g, 3, 30 * SEC);
	ck_assert_ptr_null(find(w, 0, 100));
	ck_assert_ptr_nonnull(find(w, 0, 0));
	ck_assert_uint_eq(window_gpumem(w)->n_gpu, 2);
	window_free(w);
	gpumem_free(g);
}
END_TEST

/*
 * A pair belongs to the instance that existed when it was reported; a
 * process that started after the report (pid reuse) gets nothing.
 */
START_TEST(test_attribution_reuse)
{
	struct gpumem *g = events_only();
	const struct window_gpu_proc *p;
	struct window *w;
	unsigned hz = (unsigned)sysconf(_SC_CLK_TCK);

	set_proc(0, 300, hz / 2, "old"); /* started at 0.5 s */
	gpumem_note_event(g, 0, 300, 1000, 1 * SEC);
	w = close_at(g, 1, 10 * SEC);
	p = find(w, 0, 300);
	ck_assert(!p->stale);
	ck_assert_uint_eq(p->starttime, hz / 2);
	ck_assert_str_eq(p->name, "old");
	window_free(w);

	/* pid 300 is now a process started at 13 s; a report stamped 12 s
	 * (before it existed) is not its */
	set_proc(0, 300, 13 * hz, "new");
	gpumem_note_event(g, 0, 300, 2000, 12 * SEC);
	w = close_at(g, 2, 20 * SEC);
	p = find(w, 0, 300);
	ck_assert(p->stale);
	ck_assert_uint_eq(p->starttime, 0);
	ck_assert_str_eq(p->name, "");
	window_free(w);

	/* its own report: credited, its range starting there */
	gpumem_note_event(g, 0, 300, 3000, 21 * SEC);
	w = close_at(g, 3, 30 * SEC);
	p = find(w, 0, 300);
	ck_assert(!p->stale);
	ck_assert_uint_eq(p->starttime, 13 * hz);
	ck_assert_str_eq(p->name, "new");
	ck_assert_uint_eq(p->bytes, 3000);
	ck_assert_uint_eq(p->min_bytes, 3000);
	window_free(w);
	gpumem_free(g);
}
END_TEST

/* The live view has present pairs only, sorted. */
START_TEST(test_view)
{
	struct gpumem *g = events_only();
	struct gpumem_view v;

	set_proc(0, 7, 70, "seven");
	gpumem_note_event(g, 1, 7, 10, 1 * SEC);
	gpumem_note_event(g, 0, 9, 20, 1 * SEC);
	gpumem_note_event(g, 0, 3, 30, 1 * SEC);
	gpumem_note_event(g, 0, 3, 0, 1 * SEC);
	ck_assert_int_eq(gpumem_view(g, &v), 0);
	ck_assert_uint_eq(v.n, 2);
	ck_assert_int_eq(v.procs[0].pid, 9);
	ck_assert_uint_eq(v.procs[1].gpu_id, 1);
	ck_assert_str_eq(v.procs[1].name, "seven");
	ck_assert_uint_eq(v.st.state, GPUMEM_NOT_INIT);
	ck_assert_uint_eq(v.st.events, 4);
	gpumem_view_release(&v);
	gpumem_free(g);
}
END_TEST

static struct window *
gpu_window(uint64_t seq, int64_t wall_end_s, const struct window_gpu_proc *p,
    size_t n)
{
	struct window *w = window_new(seq, 0);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "boot-g");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (wall_end_s - 10) * SEC;
	w->mono_end_ns = wall_end_s * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = (1700000000 + wall_end_s - 10) * SEC;
	w->wall_end_ns = (1700000000 + wall_end_s) * SEC;
	ck_assert_ptr_nonnull(window_gpumem_make(w));
	window_gpumem(w)->st.state = GPUMEM_OK;
	window_gpumem(w)->st.source = GPUMEM_SRC_PINNED;
	window_gpumem(w)->st.capacity = 1024;
	window_gpumem(w)->st.entries = (uint32_t)n;
	window_gpumem(w)->st.traversals = 10;
	window_gpumem(w)->st.restarts = 1;
	if (n) {
		window_gpumem(w)->gpu = calloc(n,
		    sizeof(*window_gpumem(w)->gpu));
		ck_assert_ptr_nonnull(window_gpumem(w)->gpu);
		memcpy(window_gpumem(w)->gpu, p, n * sizeof(*p));
		window_gpumem(w)->n_gpu = n;
	}
	return w;
}

static struct window_gpu_proc
gp(uint32_t gpu, int32_t pid, uint64_t start, uint64_t bytes, uint64_t mn,
    uint64_t mx, bool stale, const char *name)
{
	struct window_gpu_proc p;

	memset(&p, 0, sizeof(p));
	p.gpu_id = gpu;
	p.pid = pid;
	p.starttime = start;
	p.bytes = bytes;
	p.min_bytes = mn;
	p.max_bytes = mx;
	p.stale = stale;
	snprintf(p.name, sizeof(p.name), "%s", name);
	return p;
}

START_TEST(test_dup_and_merge)
{
	struct window_gpu_proc a[] = {
		gp(0, 0, 0, 100, 90, 120, false, ""),
		gp(0, 5, 55, 10, 10, 40, false, "five"),
		gp(0, 6, 66, 7, 7, 7, false, "six"),
	};
	struct window_gpu_proc b[] = {
		gp(0, 0, 0, 110, 80, 110, false, ""),
		gp(0, 5, 55, 30, 20, 30, false, "five"),
		gp(1, 9, 99, 1, 1, 1, false, "nine"),
	};
	struct window *wa = gpu_window(1, 10, a, 3);
	struct window *wb = gpu_window(2, 20, b, 3);
	struct window *c = window_dup(wa);

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_ne(window_gpumem(c)->gpu, window_gpumem(wa)->gpu);
	ck_assert_uint_eq(window_gpumem(c)->n_gpu, 3);
	ck_assert_str_eq(window_gpumem(c)->gpu[1].name, "five");
	window_free(c);

	window_gpumem(wb)->st.saturated = true;
	ck_assert_int_eq(window_merge(wa, wb), 0);
	ck_assert_uint_eq(window_gpumem(wa)->n_gpu,
	    3); /* pid 6 ended inside wa */
	ck_assert_uint_eq(window_gpumem(wa)->gpu[0].bytes, 110);
	ck_assert_uint_eq(window_gpumem(wa)->gpu[0].min_bytes, 80);
	ck_assert_uint_eq(window_gpumem(wa)->gpu[0].max_bytes, 120);
	ck_assert_int_eq(window_gpumem(wa)->gpu[1].pid, 5);
	ck_assert_uint_eq(window_gpumem(wa)->gpu[1].bytes, 30);
	ck_assert_uint_eq(window_gpumem(wa)->gpu[1].min_bytes, 10);
	ck_assert_uint_eq(window_gpumem(wa)->gpu[1].max_bytes, 40);
	ck_assert_uint_eq(window_gpumem(wa)->gpu[2].gpu_id, 1);
	ck_assert_uint_eq(window_gpumem(wa)->st.traversals, 20);
	ck_assert_uint_eq(window_gpumem(wa)->st.restarts, 2);
	ck_assert(window_gpumem(wa)->st.saturated);
	window_free(wa);
	window_free(wb);
}
END_TEST

/* The spans of the three windows test_store_span_growth writes. */
static void
span_check(struct store *s, int64_t base)
{
	struct window_gpumem st;
	struct gpumem_span *sp = NULL, one;
	size_t n = 0;

	/* the whole span */
	ck_assert_int_eq(store_gpumem_span(s, base, base + 30 * SEC, &sp, &n,
			     &st),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(sp[0].p.pid, 0);
	ck_assert_uint_eq(sp[0].first_bytes, 1000);
	ck_assert_uint_eq(sp[0].p.bytes, 2000);
	ck_assert_uint_eq(sp[0].p.min_bytes, 1000);
	ck_assert_uint_eq(sp[0].p.max_bytes, 3000);
	ck_assert_uint_eq(sp[0].windows, 3);
	ck_assert_int_eq(sp[1].p.pid, 42);
	ck_assert_uint_eq(sp[1].first_bytes, 100);
	ck_assert_uint_eq(sp[1].p.bytes, 300);
	ck_assert_uint_eq(sp[1].p.min_bytes, 50);
	ck_assert_uint_eq(sp[1].p.max_bytes, 900);
	ck_assert_int_eq(sp[1].first_wall_ns, base + 10 * SEC);
	ck_assert_int_eq(sp[1].last_wall_ns, base + 30 * SEC);
	ck_assert_int_eq(sp[2].p.pid, 43);
	ck_assert(sp[2].p.stale);
	ck_assert_uint_eq(sp[2].windows, 1);
	/* the newest window's state, saturated when any window was */
	ck_assert_uint_eq(st.state, GPUMEM_ERROR);
	ck_assert_int_eq(st.err, -EPERM);
	ck_assert(st.saturated);
	free(sp);

	/* growth of one instance over part of the span */
	ck_assert_int_eq(store_gpumem_growth(s, 0, 42, 4200, base + 15 * SEC,
			     base + 30 * SEC, &one),
	    0);
	ck_assert_uint_eq(one.first_bytes, 400);
	ck_assert_uint_eq(one.p.bytes, 300);
	ck_assert_uint_eq(one.p.max_bytes, 900);
	ck_assert_uint_eq(one.windows, 2);
	ck_assert_int_eq(store_gpumem_growth(s, 0, 42, 1, base, base + 30 * SEC,
			     &one),
	    -ENOENT);
	ck_assert_int_eq(store_gpumem_growth(s, 0, 42, 4200, base + 30 * SEC,
			     base + 30 * SEC, &one),
	    -EINVAL);
}

static struct window_gpu_proc gp(uint32_t gpu, int32_t pid, uint64_t start,
    uint64_t bytes, uint64_t mn, uint64_t mx, bool stale, const char *name);

/* Three windows: the GPU total, pid 42 growing, pid 43 stale once. */
static void
span_put(struct store *s, int upto)
{
	struct window_gpu_proc w1[] = {
		gp(0, 0, 0, 1000, 1000, 1000, false, ""),
		gp(0, 42, 4200, 100, 50, 100, false, "app"),
	};
	struct window_gpu_proc w2[] = {
		gp(0, 0, 0, 3000, 1000, 3000, false, ""),
		gp(0, 42, 4200, 400, 100, 900, false, "app"),
		gp(0, 43, 0, 5, 5, 5, true, ""),
	};
	struct window_gpu_proc w3[] = {
		gp(0, 0, 0, 2000, 2000, 3000, false, ""),
		gp(0, 42, 4200, 300, 300, 400, false, "app"),
	};
	struct window *w;

	if (upto <= 2) {
		w = gpu_window(1, 10, w1, 2);
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
		w = gpu_window(2, 20, w2, 3);
		window_gpumem(w)->st.saturated = true;
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	if (upto != 2) {
		w = gpu_window(3, 30, w3, 2);
		window_gpumem(w)->st.state = GPUMEM_ERROR;
		window_gpumem(w)->st.why = GPUMEM_WHY_TRAVERSE;
		window_gpumem(w)->st.err = -EPERM;
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
}

/* Read by a reader through its views: two windows moved into the main
 * file, the third still in the spool. */
START_TEST(test_store_span_spool)
{
	struct store_opts o;
	struct store *s = NULL, *r = NULL;
	char *dir = tu_mkdtemp("gpumem-spool"), path[4096], spool[4096];

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
	store_opts_default(&o);
	o.spool_path = spool;
	o.commit_s = 3600;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	span_put(s, 2);
	ck_assert_int_eq(store_flush(s), 0);
	span_put(s, 3);
	ck_assert_int_eq(store_conn_open(s, &r), 0);
	ck_assert_int_eq(store_conn_begin(r), 0);
	span_check(r, 1700000000LL * SEC);
	store_conn_end(r);
	store_conn_close(r);
	store_close(s);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_store_span_growth)
{
	struct window_gpu_proc w1[] = {
		gp(0, 0, 0, 1000, 1000, 1000, false, ""),
		gp(0, 42, 4200, 100, 50, 100, false, "app"),
	};
	struct window_gpu_proc w2[] = {
		gp(0, 0, 0, 3000, 1000, 3000, false, ""),
		gp(0, 42, 4200, 400, 100, 900, false, "app"),
		gp(0, 43, 0, 5, 5, 5, true, ""),
	};
	struct window_gpu_proc w3[] = {
		gp(0, 0, 0, 2000, 2000, 3000, false, ""),
		gp(0, 42, 4200, 300, 300, 400, false, "app"),
	};
	struct window **ws = NULL;
	struct store_opts o;
	struct store *s = NULL;
	struct window *w;
	char *dir = tu_mkdtemp("gpumem-store"), path[4096];
	size_t n = 0, i;
	int64_t base = 1700000000LL * SEC;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	store_opts_default(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	w = gpu_window(1, 10, w1, 2);
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
	w = gpu_window(2, 20, w2, 3);
	window_gpumem(w)->st.saturated = true;
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);
	w = gpu_window(3, 30, w3, 2);
	window_gpumem(w)->st.state = GPUMEM_ERROR;
	window_gpumem(w)->st.why = GPUMEM_WHY_TRAVERSE;
	window_gpumem(w)->st.err = -EPERM;
	ck_assert_int_eq(store_put(s, w), 0);
	window_free(w);

	/* a window reads back as it was written */
	ck_assert_int_eq(store_windows(s, base + 15 * SEC, base + 19 * SEC, 0,
			     &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(window_gpumem(ws[0])->n_gpu, 3);
	ck_assert_uint_eq(window_gpumem(ws[0])->gpu[1].max_bytes, 900);
	ck_assert_str_eq(window_gpumem(ws[0])->gpu[1].name, "app");
	ck_assert(window_gpumem(ws[0])->gpu[2].stale);
	ck_assert(window_gpumem(ws[0])->st.saturated);
	ck_assert_uint_eq(window_gpumem(ws[0])->st.state, GPUMEM_OK);
	ck_assert_uint_eq(window_gpumem(ws[0])->st.capacity, 1024);
	ck_assert_uint_eq(window_gpumem(ws[0])->st.restarts, 1);
	for (i = 0; i < n; i++)
		window_free(ws[i]);
	free(ws);

	span_check(s, base);
	store_close(s);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ---------------------------------------------------------- client text */

static Vitals__GpuProc
cp(uint32_t gpu, int32_t pid, uint64_t bytes, const char *name, bool stale)
{
	Vitals__GpuProc p = VITALS__GPU_PROC__INIT;

	p.gpu_id = gpu;
	p.pid = pid;
	p.bytes = bytes;
	p.name = (char *)name;
	p.stale = stale;
	return p;
}

START_TEST(test_client_text)
{
	Vitals__GpuMemState st = VITALS__GPU_MEM_STATE__INIT;
	Vitals__GpuMem g = VITALS__GPU_MEM__INIT;
	Vitals__GpuProc p[5] = {
		cp(0, 0, 2291724288ULL, "", false),
		cp(0, 1203, 104857600, "surfaceflinger", false),
		cp(0, 18724, 4096, "", true),
		cp(1, 77, 12, "com.example.game", false),
	};
	Vitals__GpuProc *pp[5] = { &p[0], &p[1], &p[2], &p[3], &p[4] };
	struct sbuf b;

	st.state = (char *)"ok";
	st.why = (char *)"";
	st.source = (char *)"pinned";
	st.capacity = 1024;
	st.entries = 4;
	g.state = &st;
	g.procs = pp;
	g.n_procs = 4;
	sbuf_init(&b);
	fmt_gpumem(&b, &g, true);
	ck_assert_str_eq(sbuf_str(&b),
	    "GPU memory: ok; pinned map, 4 of 1024 entries\n"
	    "Memory snapshot for GPU 0:\n"
	    "Global total: 2291724288\n"
	    "Proc 1203 total: 104857600 surfaceflinger\n"
	    "Proc 18724 total: 4096 [stale]\n"
	    "Memory snapshot for GPU 1:\n"
	    "Global total: N/A\n"
	    "Proc 77 total: 12 com.example.game\n");

	/* saturated, over a span */
	sbuf_reset(&b);
	st.saturated = true;
	st.entries = 1020;
	g.since_ns = 300 * NSEC_PER_SEC;
	p[1].first_bytes = 4857600;
	p[1].min_bytes = 4857600;
	p[1].max_bytes = 204857600;
	g.procs = &pp[1];
	g.n_procs = 1;
	fmt_gpumem(&b, &g, true);
	ck_assert_str_eq(sbuf_str(&b),
	    "GPU memory: ok; pinned map, 1020 of 1024 entries\n"
	    "Warning: map saturated (1020 of 1024 entries): GPU memory of "
	    "further (gpu, pid) pairs is not recorded\n"
	    "Over the last 5m00s\n"
	    "Memory snapshot for GPU 0:\n"
	    "Global total: N/A\n"
	    "Proc 1203 total: 104857600 surfaceflinger (min 4857600, "
	    "max 204857600, growth +100000000)\n");

	/* not initialised: the reason, no snapshot */
	sbuf_reset(&b);
	memset(&g, 0, sizeof(g));
	vitals__gpu_mem__init(&g);
	st.saturated = false;
	st.state = (char *)"not initialised";
	st.why = (char *)"tracepoint absent";
	st.err = ENOENT;
	st.source = (char *)"own";
	st.entries = 0;
	g.state = &st;
	fmt_gpumem(&b, &g, true);
	ck_assert_str_eq(sbuf_str(&b),
	    "GPU memory: not initialised (tracepoint absent: No such file or "
	    "directory); own map, 0 of 1024 entries\n");
	sbuf_free(&b);
}
END_TEST

/* ------------------------------------------- dumpsys gpu --gpumem, exactly */

static char *
golden(const char *name)
{
	char rel[128], *buf;
	const char *path;
	FILE *f;
	long n;

	snprintf(rel, sizeof(rel), "fixtures/gpumem/%s", name);
	path = tu_srcpath(rel);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* Every pair of g, once, in what the reader read back. */
static void
assert_read_back(const Vitals__GpuMem *g, const struct ds_out *d)
{
	size_t i, j, globals_na = 0;

	for (j = 0; j < d->n; j++)
		globals_na += d->row[j].na;
	ck_assert_uint_eq(d->n - globals_na, g->n_procs);
	for (i = 0; i < g->n_procs; i++) {
		const Vitals__GpuProc *p = g->procs[i];

		for (j = 0; j < d->n; j++)
			if (!d->row[j].na && d->row[j].gpu == p->gpu_id &&
			    d->row[j].pid == (uint32_t)p->pid)
				break;
		ck_assert_msg(j < d->n, "gpu %u pid %d not read back",
		    p->gpu_id, p->pid);
		ck_assert_uint_eq(d->row[j].bytes, p->bytes);
	}
}

START_TEST(test_dumpsys_golden)
{
	Vitals__GpuMemState st = VITALS__GPU_MEM_STATE__INIT;
	Vitals__GpuMem g = VITALS__GPU_MEM__INIT;
	/* out of order on purpose; a pid past INT32_MAX sorts as dumpsys's
	 * unsigned key does; names, stale and imported sizes stay out */
	Vitals__GpuProc p[] = {
		cp(1, 77, 12, "com.example.game", false),
		cp(0, 18724, 4096, "", true),
		cp(UINT32_MAX, 0, UINT64_MAX, "", false),
		cp(0, -5, 1, "", true),
		cp(0, 0, 2291724288ULL, "", false),
		cp(0, 1203, 104857600, "surfaceflinger", false),
	};
	Vitals__GpuProc *pp[6];
	struct ds_out d;
	struct sbuf b;
	char *want;
	size_t i;

	for (i = 0; i < 6; i++) {
		p[i].imported_bytes = 7;
		pp[i] = &p[i];
	}
	st.state = (char *)"ok";
	st.why = (char *)"";
	st.source = (char *)"pinned";
	st.map_path = (char *)"/sys/fs/bpf/map_gpu_mem_gpu_mem_total_map";
	st.capacity = 1024;
	st.entries = 1020;
	st.saturated = true;
	st.imported = true;
	st.restarts = 3;
	g.state = &st;
	g.procs = pp;
	g.n_procs = 6;
	sbuf_init(&b);
	fmt_gpumem(&b, &g, false);
	want = golden("dumpsys_gpus.txt");
	ck_assert_str_eq(sbuf_str(&b), want);
	ck_assert_int_eq(ds_parse(want, &d), 0);
	ck_assert_int_eq(ds_parse(sbuf_str(&b), &d), 0);
	ck_assert_int_eq(d.kind, DS_KIND_SNAPSHOT);
	assert_read_back(&g, &d);
	/* the N/A line of GPU 1 was read as such */
	ck_assert(d.row[4].na && d.row[4].gpu == 1);
	free(want);

	/* --verbose is not dumpsys: the strict reader refuses it */
	sbuf_reset(&b);
	fmt_gpumem(&b, &g, true);
	ck_assert_int_eq(ds_parse(sbuf_str(&b), &d), -1);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "pinned map "
	    "/sys/fs/bpf/map_gpu_mem_gpu_mem_total_map, 1020 of 1024 "
	    "entries, imported sizes\n"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "Proc 1203 total: 104857600 (imported 7) surfaceflinger\n"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "Proc 18724 total: 4096 (imported 7) [stale]\n"));

	/* the two messages, for every state that dumpsys folds into them */
	{
		static const struct {
			const char *state, *why, *file;
		} m[] = {
			{ "empty", "", "dumpsys_empty.txt" },
			{ "traversal error", "traversal failed",
			    "dumpsys_empty.txt" },
			{ "not initialised", "no map", "dumpsys_failed.txt" },
			{ "not initialised", "tracepoint absent",
			    "dumpsys_failed.txt" },
			{ "traversal error", "open failed",
			    "dumpsys_failed.txt" },
			{ "traversal error", "not AOSP's layout",
			    "dumpsys_failed.txt" },
			{ "unknown", "", "dumpsys_failed.txt" },
		};

		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
			sbuf_reset(&b);
			st.state = (char *)m[i].state;
			st.why = (char *)m[i].why;
			g.n_procs = 0;
			fmt_gpumem(&b, &g, false);
			want = golden(m[i].file);
			ck_assert_str_eq(sbuf_str(&b), want);
			ck_assert_int_eq(ds_parse(sbuf_str(&b), &d), 0);
			ck_assert_int_eq(d.kind,
			    strstr(m[i].file, "empty") ? DS_KIND_EMPTY :
							 DS_KIND_FAILED);
			free(want);
		}
		/* no state at all (an answer without one) */
		sbuf_reset(&b);
		g.state = NULL;
		fmt_gpumem(&b, &g, false);
		ck_assert_str_eq(sbuf_str(&b), DS_FAILED "\n\n");
	}
	sbuf_free(&b);
}
END_TEST

/* The reader itself: it refuses what dumpsys never prints. */
START_TEST(test_dumpsys_reader_strict)
{
	static const char *const bad[] = {
		"",
		"Memory snapshot for GPU 0:\nGlobal total: 1\n", /* no end */
		"Memory snapshot for GPU 0:\nGlobal total: 01\n\n",
		"Memory snapshot for GPU 0:\nGlobal total: -1\n\n",
		"Memory snapshot for GPU 0:\nGlobal total: 18446744073709551616"
		"\n\n",
		"Memory snapshot for GPU 0:\nGlobal total: N/A\n\n",
		"Memory snapshot for GPU 0:\nProc 1 total: 1\n\n",
		"Memory snapshot for GPU 0:\nGlobal total: 1\nProc 2 total: 1\n"
		"Proc 2 total: 1\n\n",
		"Memory snapshot for GPU 0:\nGlobal total: 1\nProc 3 total: 1\n"
		"Proc 2 total: 1\n\n",
		"Memory snapshot for GPU 0:\nGlobal total: 1\nProc 0 total: 1\n"
		"\n",
		"Memory snapshot for GPU 0:\nGlobal total: 1\nProc 2 total: 1 "
		"surfaceflinger\n\n",
		"Memory snapshot for GPU 0:\nGlobal total: 1\n"
		"Memory snapshot for GPU 0:\nGlobal total: 2\n\n",
		"GPU memory: ok; pinned map, 1 of 1024 entries\n"
		"Memory snapshot for GPU 0:\nGlobal total: 1\n\n",
		"GPU memory total usage map is empty\nProc 1 total: 1\n\n",
		"GPU memory total usage map is empty\n\n\n",
	};
	struct ds_out d;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(ds_parse(bad[i], &d) == -1, "accepted #%zu", i);
	ck_assert_int_eq(ds_parse("Memory snapshot for GPU 3:\nGlobal total: "
				  "N/A\nProc 4294967295 total: 0\n\n",
			     &d),
	    0);
	ck_assert_uint_eq(d.n, 2);
	ck_assert_uint_eq(d.row[1].pid, UINT32_MAX);
}
END_TEST

static Suite *
gpumem_suite(void)
{
	Suite *s = suite_create("gpumem");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_states_without_map);
	tcase_add_test(tc, test_saturated);
	tcase_add_test(tc, test_note_event_timeline);
	tcase_add_test(tc, test_attribution_reuse);
	tcase_add_test(tc, test_view);
	tcase_add_test(tc, test_dup_and_merge);
	tcase_add_test(tc, test_store_span_growth);
	tcase_add_test(tc, test_store_span_spool);
	tcase_add_test(tc, test_client_text);
	tcase_add_test(tc, test_dumpsys_golden);
	tcase_add_test(tc, test_dumpsys_reader_strict);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(gpumem_suite());
}
