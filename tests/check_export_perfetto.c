/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Perfetto trace writer (export_perfetto.c) on hand-made windows,
 * decoded by protoc against proto/perfetto_trace.proto: the sequence's
 * rules (pf_check), every track and value the windows hold, a reused pid
 * as two process tracks, the pid filter, and the cut to a byte bound that
 * keeps the newest windows.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "gpumem/gpumem.h"
#include "core/sysnames.h"
#include "pftrace.h"
#include "syscalls/sc_window.h"
#include "testutil.h"
#include "trace/trace.h"
#include "window/window.h"

#define T0 1700000000000000000LL
#define PAGE 4096

static struct window_task
task(int32_t id, int32_t tgid, uint64_t st, const char *name, uint64_t ut,
    uint64_t stime)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.tgid = tgid;
	t.starttime = st;
	snprintf(t.comm, sizeof(t.comm), "%s", name);
	window_task_set_name(&t, name);
	t.d_utime = ut;
	t.d_stime = stime;
	t.samples = 10;
	return t;
}

/* Window k (0, 1): a second each; k 1 has pid 100 reused. */
static struct window *
mk(unsigned k)
{
	struct window *w = window_new(k + 1, 1);
	struct window_task t;
	struct window_gpumem_part *g;
	struct window_trace *tr;

	ck_assert_ptr_nonnull(w);
	w->hz = 100;
	w->wall_start_ns = T0 + (int64_t)k * 1000000000;
	w->wall_end_ns = w->wall_start_ns + 1000000000;
	w->boot_start_ns = 5000000000LL + (int64_t)k * 1000000000;
	w->boot_end_ns = w->boot_start_ns + 1000000000;
	w->all.samples = 10;
	w->all.d.user = 10 + k;
	w->all.d.nice = 1;
	w->all.d.system = 5 + k;
	w->all.d.idle = 300;
	w->all.d.iowait = 2;
	w->all.d.softirq = 1;
	w->psi[PSI_CPU].available = true;
	w->psi[PSI_CPU].samples = 10;
	w->psi[PSI_CPU].d_some_us = 1234 + k;
	w->psi[PSI_MEMORY].available = true;
	w->psi[PSI_MEMORY].have_full = true;
	w->psi[PSI_MEMORY].samples = 10;
	w->psi[PSI_MEMORY].d_some_us = 50;
	w->psi[PSI_MEMORY].d_full_us = 20 + k;
	w->vm_samples = 10;
	w->vm_have = 1u << VM_PGFAULT;
	w->d_vm[VM_PGFAULT] = 777 + k;
	w->mem_have = 1u << MI_MEMFREE;
	gauge_add(&w->mem_kb[MI_MEMFREE], 100000);
	gauge_add(&w->mem_kb[MI_MEMFREE], 123456 + k);
	if (k == 0) {
		t = task(100, 100, 5, "burner", 7, 3);
		t.d_minflt = 11;
		t.d_majflt = 2;
		t.rss_pages_last = 50;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
		t = task(101, 100, 6, "worker", 4, 0);
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
	} else {
		t = task(100, 100, 99, "burner2", 1, 1);
		t.rss_pages_last = 60;
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
	}
	t = task(200, 200, 8, "other", 2, 2);
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	ck_assert_ptr_nonnull(g = window_gpumem_make(w));
	g->st.state = GPUMEM_OK;
	ck_assert_ptr_nonnull(g->gpu = calloc(2, sizeof(*g->gpu)));
	g->n_gpu = 2;
	g->gpu[0].bytes = 1000 + k;
	g->gpu[1].pid = 100;
	g->gpu[1].starttime = k ? 99 : 5;
	g->gpu[1].bytes = 4096 * (k + 1);
	snprintf(g->gpu[1].name, sizeof(g->gpu[1].name), "%s",
	    k ? "burner2" : "burner");
	ck_assert_ptr_nonnull(tr = window_trace_make(w, true));
	tr->state = FTRACE_ON;
	tr->nslices = 3;
	tr->slice[0] = (struct window_trace_slice){ .tgid = 100,
		.tid = 101,
		.kind = TRACE_SYNC,
		.count = 3,
		.total_ns = 3000 };
	strcpy(tr->slice[0].name, "draw");
	tr->slice[1] = (struct window_trace_slice){ .tgid = 100,
		.tid = 100,
		.depth = 1,
		.kind = TRACE_SYNC,
		.count = 2,
		.total_ns = 500 };
	strcpy(tr->slice[1].name, "draw");
	tr->slice[2] = (struct window_trace_slice){ .tgid = 100,
		.tid = 100,
		.kind = TRACE_INSTANT,
		.count = 4 };
	strcpy(tr->slice[2].name, "tick");
	tr->ncounters = 1;
	tr->counter[0] = (struct window_trace_counter){ .tgid = 100,
		.n = 2,
		.last = 9 + k,
		.min = 1,
		.max = 12 };
	strcpy(tr->counter[0].name, "queue");
	return w;
}

/* The trace of w[0..n) decoded; 0 or the export's error. */
static int
decode(struct window **w, size_t n, int32_t pid, size_t max,
    struct pf_trace *ret, struct export_perfetto_info *info, size_t *ret_len)
{
	struct export_perfetto_opts o = { .pid = pid,
		.page_bytes = PAGE,
		.max_bytes = max };
	char *dir = tu_mkdtemp("pftrace"), path[512], why[512];
	uint8_t *data;
	size_t len;
	int r;

	if ((r = export_perfetto(w, n, &o, &data, &len, info)) < 0) {
		tu_rmtree(dir);
		free(dir);
		return r;
	}
	snprintf(path, sizeof(path), "%s/t.pftrace", dir);
	ck_assert_int_eq(tu_write(path, (const char *)data, len), 0);
	free(data);
	ck_assert_msg(pf_decode(path, ret, NULL, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_msg(pf_check(ret, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(ret->npackets, info->packets);
	ck_assert_uint_eq(ret->nt, info->tracks);
	ck_assert_uint_eq(ret->clocks, n ? 2 : 1);
	if (ret_len)
		*ret_len = len;
	tu_rmtree(dir);
	free(dir);
	return 0;
}

static int64_t
val(const struct pf_trace *t, uint64_t parent, const char *name, int64_t ts)
{
	const struct pf_track *k = pf_child(t, parent, name);
	int64_t v;

	ck_assert_msg(k != NULL, "no track %s", name);
	ck_assert_msg(pf_value(t, k->uuid, (uint64_t)ts, &v) == 1,
	    "track %s: no value at %lld", name, (long long)ts);
	return v;
}

static const struct pf_track *
unit_of(const struct pf_trace *t, uint64_t parent, const char *name,
    const char *unit, int64_t mult)
{
	const struct pf_track *k = pf_child(t, parent, name);

	ck_assert_msg(k != NULL, "no track %s", name);
	ck_assert_str_eq(k->unit, unit);
	ck_assert_int_eq(k->mult, mult);
	return k;
}

START_TEST(every_track)
{
	struct window *w[2] = { mk(0), mk(1) };
	struct export_perfetto_info info;
	const struct pf_track *p, *p2, *th, *k;
	struct pf_trace t;
	int64_t s0 = w[0]->wall_start_ns, e0 = w[0]->wall_end_ns;
	int64_t s1 = w[1]->wall_start_ns, e1 = w[1]->wall_end_ns;
	char name[64];

	ck_assert_int_eq(decode(w, 2, 0, 0, &t, &info, NULL), 0);
	ck_assert_uint_eq(info.windows, 2);
	ck_assert_uint_eq(info.first, 0);
	ck_assert_int_eq(info.first_wall_ns, s0);
	ck_assert_int_eq(info.last_wall_ns, e1);
	/* system CPU by mode, ticks at USER_HZ shown as time */
	unit_of(&t, 0, "cpu.user", "UNIT_TIME_NS", 10000000);
	ck_assert_int_eq(val(&t, 0, "cpu.user", s0), 10);
	ck_assert_int_eq(val(&t, 0, "cpu.user", s1), 11);
	ck_assert_int_eq(val(&t, 0, "cpu.system", s1), 6);
	ck_assert_int_eq(val(&t, 0, "cpu.idle", s0), 300);
	ck_assert_int_eq(val(&t, 0, "cpu.steal", s0), 0);
	/* PSI stall µs shown as time; full only where the file has it */
	unit_of(&t, 0, "psi.cpu.some", "UNIT_TIME_NS", 1000);
	ck_assert_int_eq(val(&t, 0, "psi.cpu.some", s1), 1235);
	ck_assert_ptr_null(pf_child(&t, 0, "psi.cpu.full"));
	ck_assert_ptr_null(pf_child(&t, 0, "psi.io.some"));
	ck_assert_int_eq(val(&t, 0, "psi.memory.full", s1), 21);
	ck_assert_int_eq(val(&t, 0, "vmstat.pgfault", s0), 777);
	ck_assert_ptr_null(pf_child(&t, 0, "vmstat.pgmajfault"));
	/* memory: the last reading, at the window's end, kB as bytes */
	snprintf(name, sizeof(name), "meminfo.%s",
	    meminfo_key_name(MI_MEMFREE));
	unit_of(&t, 0, name, "UNIT_SIZE_BYTES", 1024);
	ck_assert_int_eq(val(&t, 0, name, e0), 123456);
	ck_assert_int_eq(val(&t, 0, name, e1), 123457);
	/* processes: one track per instance */
	ck_assert_ptr_nonnull(p = pf_process(&t, 100, "burner"));
	ck_assert_ptr_nonnull(p2 = pf_process(&t, 100, "burner2"));
	ck_assert(p->uuid != p2->uuid);
	unit_of(&t, p->uuid, "cpu", "UNIT_TIME_NS", 10000000);
	ck_assert_int_eq(val(&t, p->uuid, "cpu", s0), 10);
	ck_assert_uint_eq(pf_count(&t, pf_child(&t, p->uuid, "cpu")->uuid), 1);
	ck_assert_int_eq(val(&t, p2->uuid, "cpu", s1), 2);
	ck_assert_int_eq(val(&t, p->uuid, "minflt", s0), 11);
	ck_assert_int_eq(val(&t, p->uuid, "majflt", s0), 2);
	unit_of(&t, p->uuid, "rss", "UNIT_SIZE_BYTES", PAGE);
	ck_assert_int_eq(val(&t, p->uuid, "rss", e0), 50);
	ck_assert_int_eq(val(&t, p2->uuid, "rss", e1), 60);
	/* its thread */
	th = NULL;
	for (size_t i = 0; i < t.nt; i++)
		if (t.t[i].thread && t.t[i].tid == 101)
			th = &t.t[i];
	ck_assert_ptr_nonnull(th);
	ck_assert_int_eq(th->pid, 100);
	ck_assert_str_eq(th->pname, "worker");
	ck_assert_int_eq(val(&t, th->uuid, "cpu", s0), 4);
	/* GPU memory: the global total on its own, a process's under it */
	unit_of(&t, 0, "gpu0.mem.total", "UNIT_SIZE_BYTES", 0);
	ck_assert_int_eq(val(&t, 0, "gpu0.mem.total", e1), 1001);
	ck_assert_int_eq(val(&t, p->uuid, "gpu0.mem", e0), 4096);
	ck_assert_int_eq(val(&t, p2->uuid, "gpu0.mem", e1), 8192);
	/* ATrace: per (process, kind, name), Σ over threads and depths */
	ck_assert_int_eq(val(&t, p->uuid, "atrace.slice draw count", s0), 5);
	unit_of(&t, p->uuid, "atrace.slice draw ns", "UNIT_TIME_NS", 0);
	ck_assert_int_eq(val(&t, p->uuid, "atrace.slice draw ns", s0), 3500);
	ck_assert_int_eq(val(&t, p2->uuid, "atrace.slice draw ns", s1), 3500);
	ck_assert_int_eq(val(&t, p->uuid, "atrace.instant tick count", s0), 4);
	ck_assert_ptr_null(pf_child(&t, p->uuid, "atrace.instant tick ns"));
	ck_assert_int_eq(val(&t, p->uuid, "atrace queue", e0), 9);
	ck_assert_int_eq(val(&t, p2->uuid, "atrace queue", e1), 10);
	/* the other process is there too */
	ck_assert_ptr_nonnull(k = pf_process(&t, 200, "other"));
	ck_assert_int_eq(val(&t, k->uuid, "cpu", s1), 4);
	pf_free(&t);
	window_free(w[0]);
	window_free(w[1]);
}
END_TEST

START_TEST(pid_filter)
{
	struct window *w[2] = { mk(0), mk(1) };
	struct export_perfetto_info info;
	struct pf_trace t;

	ck_assert_int_eq(decode(w, 2, 200, 0, &t, &info, NULL), 0);
	ck_assert_ptr_nonnull(pf_process(&t, 200, "other"));
	ck_assert_ptr_null(pf_process(&t, 100, "burner"));
	ck_assert_ptr_null(pf_process(&t, 100, "burner2"));
	for (size_t i = 0; i < t.nt; i++)
		ck_assert(!t.t[i].thread);
	/* the system's tracks stay; the GPU's global total goes */
	ck_assert_ptr_nonnull(pf_child(&t, 0, "cpu.user"));
	ck_assert_ptr_null(pf_child(&t, 0, "gpu0.mem.total"));
	pf_free(&t);
	window_free(w[0]);
	window_free(w[1]);
}
END_TEST

START_TEST(byte_bound)
{
	struct window *w[2] = { mk(0), mk(1) };
	struct export_perfetto_info info;
	struct export_perfetto_opts o = { .page_bytes = PAGE, .max_bytes = 64 };
	struct pf_trace t;
	uint8_t *data = NULL;
	size_t all, one;

	ck_assert_int_eq(decode(w, 2, 0, 0, &t, &info, &all), 0);
	pf_free(&t);
	/* a byte short of both: the newest alone */
	ck_assert_int_eq(decode(w, 2, 0, all - 1, &t, &info, &one), 0);
	ck_assert_uint_lt(one, all);
	ck_assert_uint_eq(info.first, 1);
	ck_assert_uint_eq(info.windows, 1);
	ck_assert_int_eq(info.first_wall_ns, w[1]->wall_start_ns);
	ck_assert_ptr_nonnull(pf_process(&t, 100, "burner2"));
	ck_assert_ptr_null(pf_process(&t, 100, "burner"));
	pf_free(&t);
	/* exactly its size fits */
	ck_assert_int_eq(decode(w, 2, 0, all, &t, &info, NULL), 0);
	ck_assert_uint_eq(info.windows, 2);
	pf_free(&t);
	/* not even the newest */
	ck_assert_int_eq(export_perfetto(w, 2, &o, &data, &one, &info),
	    -EMSGSIZE);
	ck_assert_ptr_null(data);
	/* no window: the clock snapshot alone */
	ck_assert_int_eq(decode(w, 0, 0, 0, &t, &info, NULL), 0);
	ck_assert_uint_eq(t.npackets, 1);
	ck_assert_uint_eq(info.windows, 0);
	pf_free(&t);
	window_free(w[0]);
	window_free(w[1]);
}
END_TEST

/* Slow syscalls as slices on their thread's track: name, ret, the enter
 * time moved from BOOTTIME onto the trace's clock, the end at + latency;
 * a thread the window has a row of keeps its instance's track. */
START_TEST(syscall_slices)
{
	struct window *w[1] = { mk(0) };
	struct window_syscalls *p = window_syscalls_new();
	struct export_perfetto_info info;
	const struct pf_track *k;
	struct pf_trace t;
	size_t i, begins = 0, ends = 0;
	int64_t at = w[0]->boot_start_ns + 200000000; /* 0.2 s in */
	int64_t wall = w[0]->wall_start_ns + 200000000;

	ck_assert_ptr_nonnull(p);
	p->state = SC_ON;
	p->arch = SYSNAMES_X86_64;
	ck_assert_ptr_nonnull(p->slow = calloc(2, sizeof(*p->slow)));
	p->nslow = 2;
	p->slow[0] = (struct sc_slow){ .tid = 101,
		.tgid = 100,
		.comm = "worker",
		.nr = 202, /* futex */
		.ret = -110,
		.boot_enter_ns = at,
		.lat_ns = 60000000 };
	p->slow[1] = (struct sc_slow){ .tid = 201,
		.tgid = 200,
		.comm = "io",
		.nr = 9999, /* not in the table */
		.ret = 4096,
		.boot_enter_ns = at + 1000,
		.lat_ns = 70000000 };
	window_part_set(w[0], WPART_SYSCALLS, p);
	ck_assert_int_eq(decode(w, 1, 0, 0, &t, &info, NULL), 0);
	for (i = 0; i < t.ne; i++) {
		const struct pf_event *e = &t.e[i];

		if (strcmp(e->type, "TYPE_SLICE_BEGIN") == 0) {
			ck_assert_ptr_nonnull(k = pf_track(&t, e->track));
			ck_assert(k->thread);
			ck_assert(e->has_ret);
			if (k->tid == 101) {
				ck_assert_str_eq(e->name, "futex");
				ck_assert_int_eq(e->ret, -110);
				ck_assert_uint_eq(e->ts, (uint64_t)wall);
				ck_assert_int_eq(k->pid, 100);
			} else {
				ck_assert_int_eq(k->tid, 201);
				ck_assert_str_eq(e->name, "nr9999");
				ck_assert_int_eq(e->ret, 4096);
			}
			begins++;
		} else if (strcmp(e->type, "TYPE_SLICE_END") == 0) {
			ck_assert_ptr_nonnull(k = pf_track(&t, e->track));
			if (k->tid == 101)
				ck_assert_uint_eq(e->ts,
				    (uint64_t)wall + 60000000);
			ends++;
		}
	}
	ck_assert_uint_eq(begins, 2);
	ck_assert_uint_eq(ends, 2);
	pf_free(&t);
	/* the pid filter keeps process 200's slice only */
	ck_assert_int_eq(decode(w, 1, 200, 0, &t, &info, NULL), 0);
	for (i = begins = 0; i < t.ne; i++)
		if (strcmp(t.e[i].type, "TYPE_SLICE_BEGIN") == 0) {
			ck_assert_int_eq(pf_track(&t, t.e[i].track)->tid, 201);
			begins++;
		}
	ck_assert_uint_eq(begins, 1);
	pf_free(&t);
	window_free(w[0]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("export_perfetto");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_track);
	tcase_add_test(tc, pid_filter);
	tcase_add_test(tc, byte_bound);
	tcase_add_test(tc, syscall_slices);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
