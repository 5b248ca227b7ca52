/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the window part registry (window_part.c, store_part.c,
 * rpc_part.c): every part is registered in each layer, a window without
 * parts goes through every operation, a merge where one side lacks a part,
 * and a signal that is off keeps its state through the store and the wire
 * while the window carries no more than its part's head.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "rpc/rpc_int.h"
#include "store/store_int.h"
#include "syscalls/sc_collect.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC 1000000000LL

static struct window *
mkwin(uint64_t seq, int64_t wall)
{
	struct window *w = window_new(seq, 2);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b0075e7e-0000-4000-8000-9");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + 10 * SEC;
	w->samples = w->samples_valid = 10;
	return w;
}

/* Every part a window can have, each as its signal makes it when off (the
 * working-set part: one target; it has no "off" state). */
static void
add_off_parts(struct window *w)
{
	struct window_wss_part *ws;
	struct window_cgroup *cg;
	struct window_fgbg *fg;
	struct window_wcpu *wc;
	struct window_dmabuf *db;
	struct window_gpufreq *gf;
	struct window_syscalls *sc;
	struct window_gpumem_part *g;
	struct window_trace *t;
	struct window_bpf *b;

	ck_assert_ptr_nonnull(b = window_sched_make(w, false));
	b->state = VBPF_OFF_NO_BTF;
	b->err = -ENOENT;
	ck_assert_ptr_nonnull(g = window_gpumem_make(w));
	g->st.state = GPUMEM_NOT_INIT;
	g->st.why = GPUMEM_WHY_DISABLED;
	ck_assert_ptr_nonnull(t = window_trace_make(w, false));
	t->state = FTRACE_OFF_CONFIG;
	ws = calloc(1, sizeof(*ws) + sizeof(ws->target[0]));
	ck_assert_ptr_nonnull(ws);
	ws->ntargets = 1;
	ws->target[0].pid = 4242;
	snprintf(ws->target[0].name, sizeof(ws->target[0].name), "target");
	window_part_set(w, WPART_WSS, ws);
	/* cgroup = off: the head says so */
	ck_assert_ptr_nonnull(cg = window_cgroup_new());
	cg->state = CG_STATE_OFF;
	window_part_set(w, WPART_CGROUP, cg);
	/* foreground/background on a host: the head says absent */
	ck_assert_ptr_nonnull(fg = window_fgbg_new());
	fg->status = FGBG_ABSENT;
	window_part_set(w, WPART_FGBG, fg);
	/* capacity-weighted CPU: nothing busy yet */
	ck_assert_ptr_nonnull(wc = window_wcpu_new());
	window_part_set(w, WPART_WCPU, wc);
	/* DMA-BUF: a pass that found nothing */
	ck_assert_ptr_nonnull(db = window_dmabuf_new());
	db->passes = 1;
	window_part_set(w, WPART_DMABUF, db);
	/* GPU frequency on a machine with no GPU: no device */
	ck_assert_ptr_nonnull(gf = window_gpufreq_new(0));
	window_part_set(w, WPART_GPUFREQ, gf);
	/* syscall latency: syscall_trace = off */
	ck_assert_ptr_nonnull(sc = window_syscalls_new());
	sc->state = SC_OFF;
	window_part_set(w, WPART_SYSCALLS, sc);
}

static void
assert_no_parts(const struct window *w)
{
	unsigned i;

	for (i = 0; i < WPART__MAX; i++)
		ck_assert_msg(window_part(w, i) == NULL, "window has part %s",
		    window_parts[i]->name);
}

/* Each layer has a line for every part: ops, store tables, wire fields. */
START_TEST(registry_complete)
{
	unsigned i, k;

	for (i = 0; i < WPART__MAX; i++) {
		const struct window_part_ops *o = window_parts[i];
		const struct store_part *sp = store_parts[i];

		ck_assert_msg(o != NULL, "part %u has no window ops", i);
		ck_assert_ptr_nonnull(o->name);
		ck_assert_ptr_nonnull(o->free);
		ck_assert_ptr_nonnull(o->dup);
		ck_assert_ptr_nonnull(o->merge);
		ck_assert_ptr_nonnull(o->dump);
		ck_assert_ptr_nonnull(o->bytes);
		for (k = 0; k < i; k++)
			ck_assert_str_ne(o->name, window_parts[k]->name);

		/* a store entry or the explicit none */
		ck_assert_msg(sp != NULL, "part %s has no store entry",
		    o->name);
		ck_assert_uint_le(sp->nsql, STORE_PART_NSTMT);
		ck_assert(sp->nsql == 0 || sp->sql != NULL);
		ck_assert(sp->put != NULL || sp == &store_part_none);
		ck_assert(sp->load == NULL || sp->put != NULL);
		ck_assert(sp->count == NULL || sp->count_kind != NULL);
		for (k = 0; k < sp->nsql; k++)
			ck_assert_ptr_nonnull(sp->sql[k]);

		/* an rpc entry or the explicit none */
		ck_assert_msg(rpc_parts[i] != NULL, "part %s has no rpc entry",
		    o->name);
	}
	/* no two parts claim the same window_count kinds */
	for (i = 0; i < WPART__MAX; i++)
		for (k = 0; k < WPART__MAX; k++)
			if (i != k && store_parts[i]->count &&
			    store_parts[k]->count)
				ck_assert(
				    strncmp(store_parts[i]->count_kind,
					store_parts[k]->count_kind,
					strlen(store_parts[k]->count_kind)) !=
				    0);
}
END_TEST

/* A window without parts: copied, merged, dumped, stored and freed. */
START_TEST(window_without_parts)
{
	int64_t wall = 1700000000LL * SEC;
	struct window *w = mkwin(1, wall), *c, **ws = NULL;
	struct vbuf b = { 0 };
	struct store *s = NULL;
	char db[PATH_MAX], *dir;
	size_t n = 0;

	assert_no_parts(w);
	ck_assert_uint_eq(window_bytes(w),
	    sizeof(*w) + 2 * sizeof(struct window_cpu));
	ck_assert_ptr_nonnull(c = window_dup(w));
	assert_no_parts(c);
	ck_assert_int_eq(window_merge(c, w), 0);
	assert_no_parts(c); /* nothing from nothing */
	ck_assert_int_eq(dump_window(c, 10, &b), 0);
	ck_assert_ptr_null(strstr(b.p, "bpf"));
	ck_assert_ptr_null(strstr(b.p, "gpu memory"));
	ck_assert_ptr_null(strstr(b.p, "ftrace"));
	ck_assert_ptr_null(strstr(b.p, "working set"));
	vbuf_reset(&b);
	dump_summary_line(c, &b);
	ck_assert_ptr_null(strstr(b.p, "bpf"));
	vbuf_release(&b);
	window_free(c);

	/* stored without any part's rows, read back without parts */
	dir = tu_mkdtemp_db("wpart-none", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_windows(s, wall, wall + 10 * SEC, 0, &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	assert_no_parts(ws[0]);
	window_free(ws[0]);
	free(ws);
	store_close(s);
	tu_rmtree(dir);
	free(dir);
	window_free(w);
}
END_TEST

/* One side has every part, the other none: in both directions. */
START_TEST(merge_one_side)
{
	struct window *with = mkwin(1, 0), *without = mkwin(2, 10 * SEC);
	struct window *acc;

	add_off_parts(with);
	/* into a window without parts: each part made, the state taken */
	ck_assert_ptr_nonnull(acc = window_dup(without));
	ck_assert_int_eq(window_merge(acc, with), 0);
	ck_assert_ptr_nonnull(window_sched(acc));
	ck_assert_uint_eq(window_sched(acc)->state, VBPF_OFF_NO_BTF);
	ck_assert_int_eq(window_sched(acc)->err, -ENOENT);
	ck_assert(window_sched(acc)->head_only); /* no rows: still a head */
	ck_assert_ptr_nonnull(window_gpumem(acc));
	ck_assert_uint_eq(window_gpumem(acc)->st.state, GPUMEM_NOT_INIT);
	ck_assert_uint_eq(window_gpumem(acc)->st.why, GPUMEM_WHY_DISABLED);
	ck_assert_ptr_nonnull(window_trace(acc));
	ck_assert_uint_eq(window_trace(acc)->state, FTRACE_OFF_CONFIG);
	/* a roll-up keeps the earliest window's working-set targets */
	ck_assert_ptr_null(window_wss(acc));
	window_free(acc);

	/* a later window without parts: each kept with its state */
	ck_assert_ptr_nonnull(acc = window_dup(with));
	ck_assert_int_eq(window_merge(acc, without), 0);
	ck_assert_uint_eq(window_sched(acc)->state, VBPF_OFF_NO_BTF);
	ck_assert_uint_eq(window_gpumem(acc)->st.state, GPUMEM_NOT_INIT);
	ck_assert_uint_eq(window_trace(acc)->state, FTRACE_OFF_CONFIG);
	ck_assert_ptr_nonnull(window_wss(acc));
	ck_assert_int_eq(window_wss(acc)->target[0].pid, 4242);
	window_free(acc);
	window_free(with);
	window_free(without);
}
END_TEST

/* Off signals: heads only, copied apart, dumped, stored and sent as the
 * off state they say. */
START_TEST(off_parts_are_heads)
{
	int64_t wall = 1700000000LL * SEC;
	struct window *w = mkwin(1, wall), *c, **ws = NULL;
	struct rpc_arena a = { 0 };
	struct vbuf b = { 0 };
	struct store *s = NULL;
	char db[PATH_MAX], *dir;
	Vitals__Window *m;
	size_t n = 0, parts = 0;
	unsigned i;

	add_off_parts(w);
	ck_assert_uint_eq(window_parts[WPART_SCHED]->bytes(window_sched(w)),
	    WINDOW_BPF_HEAD);
	ck_assert_uint_lt(WINDOW_BPF_HEAD, 1024); /* rows are elsewhere */
	ck_assert_uint_eq(window_parts[WPART_TRACE]->bytes(window_trace(w)),
	    WINDOW_TRACE_HEAD);
	for (i = 0; i < WPART__MAX; i++)
		parts += window_parts[i]->bytes(window_part(w, i));
	ck_assert_uint_eq(window_bytes(w),
	    sizeof(*w) + 2 * sizeof(struct window_cpu) + parts);

	ck_assert_ptr_nonnull(c = window_dup(w));
	for (i = 0; i < WPART__MAX; i++) {
		ck_assert_ptr_nonnull(window_part(c, i));
		ck_assert_ptr_ne(window_part(c, i), window_part(w, i));
	}
	ck_assert_int_eq(dump_window(c, 10, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "bpf: off_no_btf ("));
	ck_assert_ptr_nonnull(strstr(b.p,
	    "gpu memory: not initialised: "
	    "disabled"));
	ck_assert_ptr_nonnull(strstr(b.p, "ftrace off_config"));
	ck_assert_ptr_nonnull(strstr(b.p, "working set: pid 4242 (target)"));
	ck_assert_ptr_nonnull(strstr(b.p, "cgroup: off, 0 groups"));
	ck_assert_ptr_nonnull(strstr(b.p, "fgbg: absent, 0 entries"));
	ck_assert_ptr_nonnull(
	    strstr(b.p, "dmabuf: 1 passes, 0 B in 0 buffers"));
	ck_assert_ptr_nonnull(strstr(b.p, "gpufreq: 0 GPU devices"));
	ck_assert_ptr_nonnull(strstr(b.p, "syscalls: off (err 0)"));
	/* in the order of enum window_part_id */
	ck_assert(strstr(b.p, "bpf:") < strstr(b.p, "gpu memory"));
	ck_assert(strstr(b.p, "gpu memory") < strstr(b.p, "working set"));
	ck_assert(strstr(b.p, "working set") < strstr(b.p, "ftrace"));
	vbuf_reset(&b);
	dump_summary_line(c, &b);
	ck_assert_ptr_nonnull(strstr(b.p, ", bpf off_no_btf"));
	vbuf_release(&b);
	window_free(c);

	/* on the wire: the sched part's state; nothing without the part */
	ck_assert_ptr_nonnull(m = rpc_pb_window(&a, w, false, 0));
	ck_assert_ptr_nonnull(m->health->bpf);
	ck_assert_str_eq(m->health->bpf->state, "off_no_btf");
	ck_assert_int_eq(m->health->bpf->err, -ENOENT);
	c = mkwin(2, wall);
	ck_assert_ptr_nonnull(m = rpc_pb_window(&a, c, false, 0));
	ck_assert_ptr_null(m->health->bpf);
	window_free(c);
	rpc_arena_release(&a);

	/* the store keeps each state and reads the heads back */
	dir = tu_mkdtemp_db("wpart-off", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_windows(s, wall, wall + 10 * SEC, 0, &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(window_sched(ws[0]));
	ck_assert(window_sched(ws[0])->head_only);
	ck_assert_uint_eq(window_sched(ws[0])->state, VBPF_OFF_NO_BTF);
	ck_assert_int_eq(window_sched(ws[0])->err, -ENOENT);
	ck_assert_ptr_nonnull(window_gpumem(ws[0]));
	ck_assert_uint_eq(window_gpumem(ws[0])->st.why, GPUMEM_WHY_DISABLED);
	ck_assert_ptr_nonnull(window_trace(ws[0]));
	ck_assert(window_trace(ws[0])->head_only);
	ck_assert_uint_eq(window_trace(ws[0])->state, FTRACE_OFF_CONFIG);
	ck_assert_ptr_nonnull(window_fgbg(ws[0]));
	ck_assert_uint_eq(window_fgbg(ws[0])->status, FGBG_ABSENT);
	/* no GPU device: no row, so no part read back */
	ck_assert_ptr_null(window_gpufreq(ws[0]));
	ck_assert_ptr_nonnull(window_syscalls(ws[0]));
	ck_assert_uint_eq(window_syscalls(ws[0])->state, SC_OFF);
	ck_assert_uint_eq(window_syscalls(ws[0])->nrows, 0);
	/* working-set targets are written, not read back (doc/wss.md) */
	ck_assert_ptr_null(window_wss(ws[0]));
	window_free(ws[0]);
	free(ws);
	store_close(s);
	tu_rmtree(dir);
	free(dir);
	window_free(w);
}
END_TEST

/*
 * A closed window shared by the ring and the writer's queue
 * (window_share): each window_free drops one owner and the last frees it,
 * parts and all, whichever thread it runs on. The ASan stage runs this:
 * a free too early is a use after free below, one too late a leak.
 */
START_TEST(share_frees_once)
{
	struct window *w = mkwin(7, 100 * SEC), *s;

	add_off_parts(w);
	ck_assert_ptr_eq(s = window_share(w), w);
	ck_assert_ptr_eq(window_share(w), w);
	ck_assert_uint_eq(atomic_load(&w->owners_more), 2);
	ck_assert_ptr_null(window_free(w));
	ck_assert_ptr_null(window_free(s));
	/* one owner left: still whole */
	ck_assert_uint_eq(atomic_load(&w->owners_more), 0);
	ck_assert_uint_eq(w->seq, 7);
	ck_assert_ptr_nonnull(window_sched(w));
	ck_assert_ptr_null(window_share(NULL));
	window_free(w);
}
END_TEST

static void *
free_on_thread(void *arg)
{
	window_free(arg);
	return NULL;
}

/* The two owners free at once, on two threads, many times over. */
START_TEST(share_freed_by_two_threads)
{
	pthread_t th;
	int i;

	for (i = 0; i < 2000; i++) {
		struct window *w = mkwin((uint64_t)i, 100 * SEC);

		add_off_parts(w);
		window_share(w);
		ck_assert_int_eq(pthread_create(&th, NULL, free_on_thread, w),
		    0);
		window_free(w);
		ck_assert_int_eq(pthread_join(th, NULL), 0);
	}
}
END_TEST

/* A copy is owned alone, whatever the original's owners. */
START_TEST(dup_owned_alone)
{
	struct window *w = mkwin(9, 100 * SEC), *c;

	window_share(w);
	ck_assert_ptr_nonnull(c = window_dup(w));
	ck_assert_uint_eq(atomic_load(&c->owners_more), 0);
	ck_assert_uint_eq(c->seq, 9);
	window_free(c);
	window_free(w);
	window_free(w);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("window_part");
	TCase *tc = tcase_create("registry");
	TCase *sh = tcase_create("share");

	tcase_add_test(tc, registry_complete);
	tcase_add_test(tc, window_without_parts);
	tcase_add_test(tc, merge_one_side);
	tcase_add_test(tc, off_parts_are_heads);
	suite_add_tcase(s, tc);
	tcase_add_test(sh, share_frees_once);
	tcase_add_test(sh, share_freed_by_two_threads);
	tcase_add_test(sh, dup_owned_alone);
	suite_add_tcase(s, sh);
	return tu_run(s);
}
