/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DMA-BUF pass on a fixture tree (proc and sys roots of a temporary
 * directory, files byte for byte the kernel's): surfaceflinger and an app
 * share one buffer, the app holds a second through two fds, a third
 * process has a bad fdinfo, a fourth an fd directory it cannot read, a
 * fifth an ordinary file. The shared buffer is counted once; sysfs names
 * the exporter fdinfo lacked; the fd budget skips and counts; a window
 * gets a part only when a pass is due.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "vitalsd.h"

#define SEC 1000000000LL

static char root[PATH_MAX - 256];

static void
put(const char *rel, const char *text)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ck_assert_int_eq(tu_writes(p, text), 0);
}

static void
dir(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ck_assert_int_eq(mkdir(p, 0755), 0);
}

static void
link_to(const char *target, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ck_assert_int_eq(symlink(target, p), 0);
}

static const char fdi_shared[] = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\n"
				 "ino:\t5001\nsize:\t8294400\ncount:\t1\n"
				 "exp_name:\tsystem\nname:\tgralloc-fb\n";
/* an exporter name cut off: sysfs names it */
static const char fdi_own[] = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\n"
			      "ino:\t5002\nsize:\t65536\ncount:\t2\n"
			      "exp_name:\t\n";

static void
process(int pid, const char *comm)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "proc/%d", pid);
	dir(rel);
	snprintf(rel, sizeof(rel), "proc/%d/fd", pid);
	dir(rel);
	snprintf(rel, sizeof(rel), "proc/%d/fdinfo", pid);
	dir(rel);
	snprintf(rel, sizeof(rel), "proc/%d/comm", pid);
	put(rel, comm);
}

static void
build(void)
{
	char *d = tu_mkdtemp("dmabuf");

	snprintf(root, sizeof(root), "%s", d);
	free(d);
	dir("proc");
	dir("sys");
	dir("sys/kernel");
	dir("sys/kernel/dmabuf");
	dir("sys/kernel/dmabuf/buffers");
	dir("sys/kernel/dmabuf/buffers/5001");
	dir("sys/kernel/dmabuf/buffers/5002");
	put("sys/kernel/dmabuf/buffers/5001/exporter_name", "system\n");
	put("sys/kernel/dmabuf/buffers/5001/size", "8294400\n");
	put("sys/kernel/dmabuf/buffers/5002/exporter_name", "qcom,camera\n");
	/* sysfs and fdinfo disagree: counted */
	put("sys/kernel/dmabuf/buffers/5002/size", "65537\n");

	process(200, "surfaceflinger\n");
	link_to("/dmabuf:gralloc-fb", "proc/200/fd/12");
	put("proc/200/fdinfo/12", fdi_shared);
	link_to("socket:[777]", "proc/200/fd/3");

	process(300, "com.app\n");
	link_to("/dmabuf:gralloc-fb", "proc/300/fd/40");
	put("proc/300/fdinfo/40", fdi_shared);
	link_to("/dmabuf:", "proc/300/fd/41");
	put("proc/300/fdinfo/41", fdi_own);
	link_to("anon_inode:dmabuf", "proc/300/fd/42");
	put("proc/300/fdinfo/42", fdi_own);

	/* a DMA-BUF whose fdinfo was cut mid-line */
	process(400, "broken\n");
	link_to("/dmabuf:", "proc/400/fd/5");
	put("proc/400/fdinfo/5", "pos:\t0\nflags:\t02000002\nsize:\t40");

	/* an fd directory that is not a directory: unreadable */
	dir("proc/500");
	put("proc/500/fd", "");
	/* an ordinary file */
	process(600, "plain\n");
	link_to("/data/x.db", "proc/600/fd/7");
	/* not processes */
	dir("proc/self");
	put("proc/stat", "cpu 0 0 0 0\n");
}

static struct dmabuf *
reader(struct dmabuf_config *c)
{
	char proc[PATH_MAX + 8], sys[PATH_MAX + 8];
	struct dmabuf_opts o = { .proc_root = proc, .sys_root = sys, .cfg = c };
	struct dmabuf *db = NULL;

	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	ck_assert_int_eq(dmabuf_new(&o, &db), 0);
	return db;
}

static const struct dmabuf_proc *
proc_of(const struct window_dmabuf *p, int32_t pid)
{
	size_t i;

	for (i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	return NULL;
}

START_TEST(test_pass)
{
	struct dmabuf_config c;
	struct window_dmabuf *p = NULL;
	const struct dmabuf_proc *r;
	struct dmabuf *db;

	build();
	dmabuf_config_init(&c);
	db = reader(&c);
	ck_assert_int_eq(dmabuf_pass(db, 77, &p), 0);
	ck_assert_int_eq(p->pass_wall_ns, 77);
	/* 8294400 once, though two processes hold it; 65536 once, though
	 * the app holds it through two fds */
	ck_assert_uint_eq(p->total_bytes, 8294400 + 65536);
	ck_assert_uint_eq(p->buffers, 2);
	ck_assert_uint_eq(p->shared_bytes, 8294400);
	ck_assert_uint_eq(p->shared_buffers, 1);
	ck_assert_uint_eq(p->procs_scanned, 4); /* 200, 300, 400, 600 */
	ck_assert_uint_eq(p->procs_unreadable, 1);
	ck_assert_uint_eq(p->procs_skipped, 0);
	ck_assert_uint_eq(p->fds_read, 7);
	ck_assert_uint_eq(p->fds_dmabuf, 5);
	ck_assert_uint_eq(p->fdinfo_invalid, 1);
	ck_assert_uint_eq(p->sysfs_found, 2);
	ck_assert_uint_eq(p->size_mismatch, 1);
	/* a fixture root is not the kernel's: its list (empty here) is not
	 * read, the tree is walked (dmabuf_iter = auto, the default) */
	ck_assert(c.iter);
	ck_assert_uint_eq(dmabuf_iter_state(db), DMABUF_ITER_WHY_ROOT);
	ck_assert_uint_eq(p->iter_why, DMABUF_ITER_WHY_ROOT);
	ck_assert_uint_eq(p->kernel_passes, 0);
	ck_assert_uint_eq(p->passes_no_buffer, 0);
	ck_assert_uint_eq(p->nprocs, 2);
	ck_assert_ptr_nonnull(r = proc_of(p, 300));
	ck_assert_str_eq(r->name, "com.app");
	ck_assert_uint_eq(r->bytes, 8294400 + 65536);
	ck_assert_uint_eq(r->buffers, 2);
	ck_assert_uint_eq(r->fds, 3);
	ck_assert_uint_eq(r->shared_bytes, 8294400);
	ck_assert_uint_eq(r->pss_bytes, 8294400 / 2 + 65536);
	ck_assert_ptr_nonnull(r = proc_of(p, 200));
	ck_assert_str_eq(r->name, "surfaceflinger");
	ck_assert_uint_eq(r->bytes, 8294400);
	ck_assert_uint_eq(p->nexps, 2);
	ck_assert_str_eq(p->exps[0].name, "system");
	ck_assert_str_eq(p->exps[1].name, "qcom,camera"); /* from sysfs */
	ck_assert_uint_eq(p->nshared, 1);
	ck_assert_uint_eq(p->shared[0].ino, 5001);
	ck_assert_uint_eq(p->shared[0].npids, 2);
	ck_assert_int_eq(p->shared[0].pids[0], 200);
	ck_assert_int_eq(p->shared[0].pids[1], 300);
	window_dmabuf_free(p);
	dmabuf_free(db);

	/* a budget of one link: the first process read, the rest counted
	 * as not reached (readdir order: whichever comes first) */
	c.fd_budget = 1;
	db = reader(&c);
	ck_assert_int_eq(dmabuf_pass(db, 0, &p), 0);
	ck_assert_uint_eq(p->procs_scanned + p->procs_unreadable +
		p->procs_skipped,
	    5);
	ck_assert_uint_ge(p->procs_skipped, 3);
	ck_assert_uint_le(p->fds_read, 3);
	window_dmabuf_free(p);
	dmabuf_free(db);
	tu_rmtree(root);
}
END_TEST

/* A part only in the windows where a pass is due; the last pass kept. */
START_TEST(test_window_cadence)
{
	struct dmabuf_config c;
	struct dmabuf *db;
	struct window *w;
	int k, parts = 0;

	build();
	dmabuf_config_init(&c);
	c.interval_s = 30;
	db = reader(&c);
	ck_assert_ptr_null(dmabuf_last(db));
	for (k = 0; k < 7; k++) { /* 10 s windows: passes at 0, 30, 60 s */
		ck_assert_ptr_nonnull(w = window_new((uint64_t)k, 1));
		w->mono_end_ns = (k + 1) * 10 * SEC;
		w->wall_end_ns = w->mono_end_ns;
		ck_assert_int_eq(dmabuf_window(db, w, w->mono_end_ns), 0);
		if (window_dmabuf(w)) {
			parts++;
			ck_assert_uint_eq(window_dmabuf(w)->total_bytes,
			    8294400 + 65536);
		}
		window_free(w);
	}
	ck_assert_int_eq(parts, 3);
	ck_assert_ptr_nonnull(dmabuf_last(db));
	ck_assert_uint_eq(dmabuf_last(db)->buffers, 2);
	dmabuf_free(db);

	/* off: no part, no pass */
	c.on = false;
	db = reader(&c);
	ck_assert_ptr_nonnull(w = window_new(1, 1));
	ck_assert_int_eq(dmabuf_window(db, w, SEC), 0);
	ck_assert_ptr_null(window_dmabuf(w));
	ck_assert_ptr_null(dmabuf_last(db));
	window_free(w);
	dmabuf_free(db);
	tu_rmtree(root);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dmabuf_fixture");
	TCase *tc = tcase_create("tree");

	tcase_add_test(tc, test_pass);
	tcase_add_test(tc, test_window_cadence);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
