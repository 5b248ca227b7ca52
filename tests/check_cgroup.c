/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v2 groups (cgroup/): the parsers against the kernel's file
 * layouts and garbage; walks of an Android-shaped tree (uid_<uid>/
 * pid_<pid>, with and without the memory controller) whose counters the
 * test moves between windows — deltas, levels, a group made again under
 * its path, a group gone, a counter that went backwards, depth and count
 * bounds; roll-up sums; the part through the store and back, and a
 * damaged blob counted with the rest of the window read.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
/* a parser on a string literal, its whole length */
#define PARSE(fn, text, r) fn((text), strlen(text), (r))
#define T0 (1699999800LL * NSEC_PER_SEC)

/* cpu.stat of a 6.1 kernel with the cpu controller on */
static const char cpu_stat_full[] =
    "usage_usec 3000000\nuser_usec 2000000\nsystem_usec 1000000\n"
    "core_sched.force_idle_usec 0\nnr_periods 10\nnr_throttled 2\n"
    "throttled_usec 5000\nnr_bursts 0\nburst_usec 0\n";

START_TEST(test_parse_cpu_stat)
{
	struct cg_read r = { 0 };

	ck_assert_int_eq(cg_parse_cpu_stat(cpu_stat_full, strlen(cpu_stat_full),
			     &r),
	    0);
	ck_assert_uint_eq(r.usage_us, 3000000);
	ck_assert_uint_eq(r.user_us, 2000000);
	ck_assert_uint_eq(r.system_us, 1000000);
	ck_assert_uint_eq(r.nr_periods, 10);
	ck_assert_uint_eq(r.nr_throttled, 2);
	ck_assert_uint_eq(r.throttled_us, 5000);
	ck_assert_uint_eq(r.have, CG_HAVE_CPU | CG_HAVE_THROTTLE);

	/* without the cpu controller: the base stats only */
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(PARSE(cg_parse_cpu_stat,
			     "usage_usec 5\nuser_usec 3\n"
			     "system_usec 2\nnice_usec 0\n",
			     &r),
	    0);
	ck_assert_uint_eq(r.have, CG_HAVE_CPU);

	/* garbage never reads as zeros */
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(PARSE(cg_parse_cpu_stat,
			     "usage_usec x\nuser_usec 3\n"
			     "system_usec 2\n",
			     &r),
	    -EINVAL);
	ck_assert_int_eq(PARSE(cg_parse_cpu_stat, "usage_usec 1\n", &r),
	    -EINVAL);
	ck_assert_int_eq(PARSE(cg_parse_cpu_stat, "garbage\n", &r), -EINVAL);
	ck_assert_int_eq(PARSE(cg_parse_cpu_stat,
			     "usage_usec 99999999999999999999\n"
			     "user_usec 3\nsystem_usec 2\n",
			     &r),
	    -EINVAL);
	ck_assert_uint_eq(r.have, 0);
}
END_TEST

START_TEST(test_parse_memory)
{
	static const char st[] =
	    "anon 1048576\nfile 2097152\nkernel 65536\nkernel_stack 16384\n"
	    "pagetables 4096\nsec_pagetables 0\npercpu 512\nsock 0\nvmalloc "
	    "0\nshmem 8192\nfile_mapped 4096\npgfault 1000\npgmajfault 7\n"
	    "workingset_refault_anon 0\n";
	/* before 5.18: no "kernel" line */
	static const char old[] =
	    "anon 10\nfile 20\nkernel_stack 3\nslab 4\npercpu 5\nshmem 1\n"
	    "pgfault 2\npgmajfault 1\n";
	static const char ev[] =
	    "low 0\nhigh 4\nmax 2\noom 1\noom_kill 1\noom_group_kill 0\n";
	struct cg_read r = { 0 };

	ck_assert_int_eq(cg_parse_memory_stat(st, strlen(st), &r), 0);
	ck_assert_uint_eq(r.mem[CG_MEM_ANON], 1048576);
	ck_assert_uint_eq(r.mem[CG_MEM_FILE], 2097152);
	ck_assert_uint_eq(r.mem[CG_MEM_KERNEL], 65536);
	ck_assert_uint_eq(r.mem[CG_MEM_SHMEM], 8192);
	ck_assert_uint_eq(r.pgfault, 1000);
	ck_assert_uint_eq(r.pgmajfault, 7);
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(cg_parse_memory_stat(old, strlen(old), &r), 0);
	ck_assert_uint_eq(r.mem[CG_MEM_KERNEL], 12);
	ck_assert_int_eq(PARSE(cg_parse_memory_stat, "anon 1\n", &r), -EINVAL);
	ck_assert_int_eq(cg_parse_memory_events(ev, strlen(ev), &r), 0);
	ck_assert_uint_eq(r.events[CG_EV_HIGH], 4);
	ck_assert_uint_eq(r.events[CG_EV_OOM_KILL], 1);
	ck_assert_int_eq(PARSE(cg_parse_memory_events, "low 0\nhigh 1\n", &r),
	    -EINVAL);
}
END_TEST

START_TEST(test_name_id)
{
	ck_assert_int_eq(cg_name_id("uid_10123", "uid_"), 10123);
	ck_assert_int_eq(cg_name_id("pid_4567", "pid_"), 4567);
	ck_assert_int_eq(cg_name_id("uid_", "uid_"), -1);
	ck_assert_int_eq(cg_name_id("uid_12x", "uid_"), -1);
	ck_assert_int_eq(cg_name_id("uid_99999999999", "uid_"), -1);
	ck_assert_int_eq(cg_name_id("system.slice", "uid_"), -1);
}
END_TEST

/* ------------------------------------------------------- a fixture tree */

static char *dir;
static char root[4096];

static void
put_file(const char *grp, const char *name, const char *text)
{
	char p[8192];

	snprintf(p, sizeof(p), "%s/%s%s%s", root, grp, *grp ? "/" : "", name);
	ck_assert_int_eq(tu_writes(p, text), 0);
}

static void
put_cpu(const char *grp, unsigned long long usage)
{
	char t[256];

	snprintf(t, sizeof(t),
	    "usage_usec %llu\nuser_usec %llu\nsystem_usec %llu\n"
	    "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
	    usage, usage * 3 / 4, usage - usage * 3 / 4);
	put_file(grp, "cpu.stat", t);
}

static void
put_psi(const char *grp, const char *res, unsigned long long some)
{
	char t[256], f[64];

	snprintf(t, sizeof(t),
	    "some avg10=1.50 avg60=0.00 avg300=0.00 total=%llu\n"
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n",
	    some, some / 2);
	snprintf(f, sizeof(f), "%s.pressure", res);
	put_file(grp, f, t);
}

static void
put_mem(const char *grp, unsigned long long cur, unsigned long long fault)
{
	char t[512];

	snprintf(t, sizeof(t), "%llu\n", cur);
	put_file(grp, "memory.current", t);
	snprintf(t, sizeof(t),
	    "anon %llu\nfile 4096\nkernel 8192\nshmem 0\npgfault %llu\n"
	    "pgmajfault 1\n",
	    cur / 2, fault);
	put_file(grp, "memory.stat", t);
	put_file(grp, "memory.events",
	    "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
}

/* Android 13's cgroup v2 app hierarchy, memory controller off (the
 * phone's memcg is v1): uid_1000/pid_100, uid_10123/pid_200; and a
 * host-like system.slice with memory. */
static void
make_tree(void)
{
	put_file("", "cgroup.controllers", "cpuset cpu io memory pids\n");
	put_cpu("", 100000000);
	put_cpu("uid_1000", 5000000);
	put_psi("uid_1000", "cpu", 1000);
	put_cpu("uid_1000/pid_100", 4000000);
	put_cpu("uid_10123", 2000000);
	put_cpu("uid_10123/pid_200", 2000000);
	put_cpu("system.slice", 9000000);
	put_mem("system.slice", 10485760, 500);
}

static void
setup(void)
{
	dir = tu_mkdtemp("cgroup");
	snprintf(root, sizeof(root), "%s/cg", dir);
	make_tree();
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static struct cgroup *
open_cg(struct cgroup_config *c)
{
	struct cgroup_opts o = { .sys_root = "/nonexistent", .cfg = c };
	struct cgroup *cg;

	c->on = true;
	c->root = root;
	if (c->depth == 0)
		c->depth = CG_DEPTH_DEFAULT;
	if (c->max == 0)
		c->max = CG_MAX_DEFAULT;
	ck_assert_int_eq(cgroup_new(&o, &cg), 0);
	return cg;
}

static struct window *
walk(struct cgroup *cg)
{
	struct window *w = window_new(1, 0);

	ck_assert_ptr_nonnull(w);
	w->mono_start_ns = 0;
	w->mono_end_ns = 10 * SEC;
	ck_assert_int_eq(cgroup_window(cg, w), 0);
	ck_assert_ptr_nonnull(window_cgroup(w));
	return w;
}

static const struct window_cgroup_grp *
grp(const struct window *w, const char *path)
{
	const struct window_cgroup *p = window_cgroup(w);
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->g[i].path, path))
			return &p->g[i];
	return NULL;
}

START_TEST(test_walk_deltas)
{
	struct cgroup_config c = { 0 };
	struct cgroup *cg = open_cg(&c);
	const struct window_cgroup_grp *g;
	struct window *w1, *w2;

	w1 = walk(cg);
	ck_assert_uint_eq(window_cgroup(w1)->state, CG_STATE_OK);
	ck_assert_uint_eq(window_cgroup(w1)->n, 6);
	ck_assert_str_eq(window_cgroup(w1)->root, root);
	/* the first walk: levels, no deltas, not "born" (nothing before) */
	g = grp(w1, "system.slice");
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->deltas, 0);
	ck_assert(!g->born);
	ck_assert_uint_eq(g->mem_current.n, 1);
	ck_assert(g->mem_current.last == 10485760.0);
	ck_assert_uint_eq(g->have &
		(CG_HAVE_MEM | CG_HAVE_MEMSTAT | CG_HAVE_EVENTS),
	    CG_HAVE_MEM | CG_HAVE_MEMSTAT | CG_HAVE_EVENTS);
	/* Android's app groups carry their uid and pid */
	g = grp(w1, "uid_10123/pid_200");
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(g->uid, 10123);
	ck_assert_int_eq(g->pid, 200);
	ck_assert_uint_eq(g->depth, 2);
	/* no memory controller: unknown, not 0 */
	ck_assert_uint_eq(g->have & CG_HAVE_MEM, 0);
	ck_assert_uint_eq(g->mem_current.n, 0);
	g = grp(w1, "uid_1000");
	ck_assert_int_eq(g->uid, 1000);
	ck_assert_int_eq(g->pid, -1);
	ck_assert(g->have & CG_HAVE_PSI(0));
	ck_assert(g->have & CG_HAVE_PSI_FULL(0));
	ck_assert_uint_eq(g->have & CG_HAVE_PSI(1), 0);

	/* ten seconds later */
	put_cpu("uid_1000", 7500000);
	put_cpu("uid_1000/pid_100", 6000000);
	put_psi("uid_1000", "cpu", 4000);
	put_mem("system.slice", 20971520, 800);
	w2 = walk(cg);
	g = grp(w2, "uid_1000");
	ck_assert_uint_eq(g->deltas, 1);
	ck_assert_uint_eq(g->d_usage_us, 2500000);
	ck_assert_uint_eq(g->d_user_us, 7500000 * 3 / 4 - 5000000 * 3 / 4);
	ck_assert_uint_eq(g->d_user_us + g->d_system_us, g->d_usage_us);
	ck_assert_uint_eq(g->d_psi_some_us[0], 3000);
	ck_assert_uint_eq(g->d_psi_full_us[0], 1500);
	ck_assert_uint_eq(grp(w2, "uid_1000/pid_100")->d_usage_us, 2000000);
	ck_assert_uint_eq(grp(w2, "uid_10123")->d_usage_us, 0);
	ck_assert_uint_eq(grp(w2, "uid_10123")->deltas, 1);
	g = grp(w2, "system.slice");
	ck_assert_uint_eq(g->d_pgfault, 300);
	ck_assert(g->mem_current.last == 20971520.0);
	ck_assert_uint_eq(window_cgroup(w2)->read_errors, 0);
	window_free(w1);
	window_free(w2);
	cgroup_free(cg);
}
END_TEST

/* Made again under its path: a new id, no delta across the two; a group
 * removed is counted gone; a counter that went backwards is dropped. */
START_TEST(test_walk_identity)
{
	struct cgroup_config c = { 0 };
	struct cgroup *cg = open_cg(&c);
	const struct window_cgroup_grp *g;
	struct window *w1, *w2;
	char a[8192], b[8192];
	uint64_t id0;

	w1 = walk(cg);
	id0 = grp(w1, "uid_10123/pid_200")->id;
	/* pid_200 exits and a new process of that pid gets the path: the
	 * new directory exists before the old one goes (a new inode) */
	snprintf(a, sizeof(a), "%s/uid_10123/pid_200", root);
	snprintf(b, sizeof(b), "%s/uid_10123/old", root);
	ck_assert_int_eq(rename(a, b), 0);
	put_cpu("uid_10123/pid_200", 50);
	/* uid_1000/pid_100 is gone */
	snprintf(a, sizeof(a), "%s/uid_1000/pid_100", root);
	ck_assert_int_eq(tu_rmtree(a), 0);
	/* the root's usage went backwards (a bad read, say) */
	put_cpu("", 1);
	w2 = walk(cg);
	g = grp(w2, "uid_10123/pid_200");
	ck_assert_uint_ne(g->id, id0);
	ck_assert(g->born);
	ck_assert_uint_eq(g->deltas, 0);
	ck_assert_uint_eq(g->d_usage_us, 0);
	ck_assert_uint_eq(window_cgroup(w2)->recreated, 1);
	ck_assert_ptr_null(grp(w2, "uid_1000/pid_100"));
	ck_assert_uint_eq(window_cgroup(w2)->gone, 1);
	ck_assert_uint_eq(grp(w2, "")->deltas, 0);
	ck_assert_uint_eq(grp(w2, "")->d_usage_us, 0);
	ck_assert_uint_eq(window_cgroup(w2)->inv_deltas, 1);
	/* "old" is new to this walk: born, levels only */
	ck_assert(grp(w2, "uid_10123/old")->born);
	window_free(w1);
	window_free(w2);
	cgroup_free(cg);
}
END_TEST

/* Depth, count and subtree bounds; garbage counted as a read error. */
START_TEST(test_walk_bounds)
{
	struct cgroup_config c = { 0 };
	struct cgroup *cg;
	struct window *w;

	c.depth = 1;
	cg = open_cg(&c);
	w = walk(cg);
	ck_assert_uint_eq(window_cgroup(w)->n, 4); /* root + 3 children */
	ck_assert_ptr_null(grp(w, "uid_1000/pid_100"));
	window_free(w);
	cgroup_free(cg);

	memset(&c, 0, sizeof(c));
	c.max = 3;
	cg = open_cg(&c);
	w = walk(cg);
	ck_assert_uint_eq(window_cgroup(w)->n, 3);
	ck_assert_uint_eq(window_cgroup(w)->groups_seen, 6);
	ck_assert_uint_eq(window_cgroup(w)->groups_cut, 3);
	window_free(w);
	cgroup_free(cg);

	memset(&c, 0, sizeof(c));
	c.subtree = "uid_10123";
	cg = open_cg(&c);
	put_file("uid_10123", "cpu.stat", "usage_usec what\n");
	w = walk(cg);
	ck_assert_uint_eq(window_cgroup(w)->n, 2);
	ck_assert_ptr_nonnull(grp(w, "pid_200"));
	ck_assert_uint_eq(grp(w, "")->have & CG_HAVE_CPU, 0);
	ck_assert_uint_eq(window_cgroup(w)->read_errors, 1);
	window_free(w);
	cgroup_free(cg);

	/* no hierarchy: said, with the errno */
	memset(&c, 0, sizeof(c));
	c.on = true;
	{
		struct cgroup_opts o = { .sys_root = dir, .cfg = &c };

		c.depth = 1;
		c.max = 1;
		ck_assert_int_eq(cgroup_new(&o, &cg), 0);
		w = walk(cg);
		ck_assert_uint_eq(window_cgroup(w)->state, CG_STATE_NO_ROOT);
		ck_assert_int_lt(window_cgroup(w)->err, 0);
		ck_assert_uint_eq(window_cgroup(w)->n, 0);
		window_free(w);
		cgroup_free(cg);
	}
}
END_TEST

/* A roll-up sums deltas and merges levels group by group. */
START_TEST(test_merge)
{
	struct cgroup_config c = { 0 };
	struct cgroup *cg = open_cg(&c);
	struct window *w[3], *acc;
	const struct window_cgroup_grp *g;
	int i;

	for (i = 0; i < 3; i++) {
		put_cpu("uid_1000", 5000000 + 1000000 * (unsigned)i);
		w[i] = walk(cg);
	}
	acc = window_dup(w[1]);
	ck_assert_ptr_nonnull(acc);
	ck_assert_int_eq(window_merge(acc, w[2]), 0);
	g = grp(acc, "uid_1000");
	ck_assert_uint_eq(g->d_usage_us, 2000000);
	ck_assert_uint_eq(g->deltas, 2);
	ck_assert_uint_eq(window_cgroup(acc)->walks, 2);
	g = grp(acc, "system.slice");
	ck_assert_uint_eq(g->mem_current.n, 2);
	for (i = 0; i < 3; i++)
		window_free(w[i]);
	window_free(acc);
	cgroup_free(cg);
}
END_TEST

/* ------------------------------------------------------------ the store */

START_TEST(test_store_roundtrip)
{
	struct cgroup_config c = { 0 };
	struct cgroup *cg = open_cg(&c);
	struct store_opts o;
	struct store *s, *rc;
	struct window *w1, *w2, **v;
	struct store_stats st;
	char path[4200];
	size_t n, i;

	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	w1 = walk(cg);
	put_cpu("uid_1000", 9000000);
	w2 = walk(cg);
	snprintf(w2->boot_id, sizeof(w2->boot_id), "b");
	w2->hz = 100;
	w2->wall_start_ns = T0;
	w2->wall_end_ns = T0 + 10 * SEC;
	store_opts_default(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(store_conn_open(s, &rc), 0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_windows(rc, T0, T0 + 86400 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(window_cgroup(v[0]));
	ck_assert_uint_eq(window_cgroup(v[0])->n, window_cgroup(w2)->n);
	for (i = 0; i < window_cgroup(w2)->n; i++) {
		const struct window_cgroup_grp *a = &window_cgroup(w2)->g[i];
		const struct window_cgroup_grp *b = &window_cgroup(v[0])->g[i];

		ck_assert_mem_eq(a, b, sizeof(*a));
	}
	ck_assert_str_eq(window_cgroup(v[0])->root, root);
	window_free(v[0]);
	free(v);
	store_conn_end(rc);

	/* a damaged blob: counted, the window still reads, without it */
	ck_assert_int_eq(store_exec(s,
			     "UPDATE window_cgroup SET blob = x'b70102'", NULL,
			     0),
	    0);
	ck_assert_int_eq(store_conn_begin(rc), 0);
	ck_assert_int_eq(store_windows(rc, T0, T0 + 86400 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_null(window_cgroup(v[0]));
	ck_assert_uint_eq(v[0]->hz, 100);
	window_free(v[0]);
	free(v);
	store_conn_end(rc);
	store_conn_close(rc);
	store_get_stats(s, &st);
	ck_assert_uint_ge(st.blob_errors, 1);
	store_close(s);
	window_free(w1);
	window_free(w2);
	cgroup_free(cg);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_parse_cpu_stat);
	tcase_add_test(tc, test_parse_memory);
	tcase_add_test(tc, test_name_id);
	suite_add_tcase(s, tc);
	tc = tcase_create("walk");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_walk_deltas);
	tcase_add_test(tc, test_walk_identity);
	tcase_add_test(tc, test_walk_bounds);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_store_roundtrip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(suite());
}
