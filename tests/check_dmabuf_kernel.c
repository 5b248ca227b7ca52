/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DMA-BUF pass on the real kernel and /proc (issue 20): the kernel's
 * list read through iter/dmabuf says how many buffers exist, and the
 * kernel's own account (debugfs dma_buf/bufinfo, mounted in a private
 * mount namespace of a child) must say the same; with none, the pass
 * reads no fd directory and counts the pass it spared, in the pass's part
 * and in every window that gets one. With dmabuf_iter = off the same pass
 * walks every process's fds and finds what the list said: no DMA-BUF fd.
 * This VM cannot make a DMA-BUF (no udmabuf, no dma heaps, no DRM): the
 * records of a list with buffers are tested as bytes (check_dmabuf). The
 * assertions follow the kernel's facts, not this VM's: a kernel before
 * 6.16 has no iterator (every pass walks), and one with buffers (an
 * exporter) walks too, the list's count still the kernel's.
 *
 * Root: the iterator's load needs CAP_BPF + CAP_PERFMON, debugfs a mount.
 * Without BPF in the build the list is never read and every pass walks.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dmabuf/dmabuf.h"
#include "testutil.h"
#include "window/window.h"

#define SEC 1000000000LL

/*
 * The kernel's own count of DMA-BUFs and their bytes: the last line of
 * dma_buf/bufinfo ("Total N objects, M bytes"), read in a child that
 * mounts debugfs in a mount namespace of its own (nothing of the host's
 * changes). 0, or -1 when it could not be read.
 */
static int
bufinfo_total(unsigned *ret_n, unsigned long long *ret_bytes)
{
	unsigned long long v[2] = { 0, 0 };
	int pfd[2], st;
	pid_t pid;
	ssize_t l;

	ck_assert_int_eq(pipe(pfd), 0);
	if ((pid = fork()) == 0) {
		char buf[65536], *t;
		size_t n = 0;
		FILE *f;

		close(pfd[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(2);
		/* a fresh one here is ours; where debugfs is mounted there
		 * already (EBUSY: one instance), that one is read */
		if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) <
			0 &&
		    errno != EBUSY)
			_exit(3);
		if ((f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "r")) ==
		    NULL)
			_exit(4);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if ((t = strstr(buf, "\nTotal ")) == NULL ||
		    sscanf(t, "\nTotal %llu objects, %llu bytes", &v[0],
			&v[1]) != 2)
			_exit(5);
		if (write(pfd[1], v, sizeof(v)) != (ssize_t)sizeof(v))
			_exit(6);
		_exit(0);
	}
	ck_assert_int_gt(pid, 0);
	close(pfd[1]);
	l = read(pfd[0], v, sizeof(v));
	close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (l != (ssize_t)sizeof(v) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bufinfo: child status %d\n",
		    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	*ret_n = (unsigned)v[0];
	*ret_bytes = v[1];
	return 0;
}

static struct dmabuf *
reader(bool iter)
{
	struct dmabuf_opts o = { .proc_root = "/proc", .sys_root = "/sys" };
	struct dmabuf_config c;
	struct dmabuf *db = NULL;

	dmabuf_config_init(&c);
	c.iter = iter;
	c.interval_s = 0; /* a pass at every close */
	o.cfg = &c;
	ck_assert_int_eq(dmabuf_new(&o, &db), 0);
	dmabuf_test_no_worker(db);
	return db;
}

/* Whether a pass of a reader(true) is spared: the list read, and empty. */
static bool
pass_spared(void)
{
	unsigned long long kbytes;
	unsigned kn;

#ifdef HAVE_BPF_CORE
	ck_assert_int_eq(bufinfo_total(&kn, &kbytes), 0);
	return tu_kernel_ge(6, 16) /* iter/dmabuf */ && kn == 0;
#else
	(void)kbytes;
	(void)kn;
	return false;
#endif
}

/* The list through the iterator against the kernel's bufinfo; the pass
 * with no buffer reads no fd directory and says why; one with buffers
 * (an exporter on this kernel) walks. */
START_TEST(test_no_buffer_skips)
{
	struct dmabuf *db = reader(true);
	struct window_dmabuf *p = NULL;
	unsigned long long kbytes = 1;
	unsigned kn = 1;

	ck_assert_int_eq(bufinfo_total(&kn, &kbytes), 0);
#ifdef HAVE_BPF_CORE
	if (!tu_kernel_ge(6, 16) /* iter/dmabuf */) {
		/* no iter/dmabuf before 6.16: the pass walks, why says so */
		ck_assert_uint_ne(dmabuf_iter_state(db), DMABUF_ITER_WHY_NONE);
		ck_assert_int_eq(dmabuf_pass(db, 5, &p), 0);
		ck_assert_uint_eq(p->kernel_passes, 0);
		ck_assert_uint_eq(p->passes_no_buffer, 0);
		ck_assert_uint_gt(p->procs_scanned, 0);
		goto out;
	}
	ck_assert_msg(dmabuf_iter_state(db) == DMABUF_ITER_WHY_NONE,
	    "iter/dmabuf on this kernel: %s",
	    dmabuf_iter_why_name(dmabuf_iter_state(db)));
	ck_assert_int_eq(dmabuf_pass(db, 5, &p), 0);
	ck_assert_uint_eq(p->iter_why, DMABUF_ITER_WHY_NONE);
	ck_assert_uint_eq(p->kernel_passes, 1);
	ck_assert_uint_eq(p->iter_errors, 0);
	/* the iterator's count is the kernel's */
	ck_assert_uint_eq(p->kernel_buffers, kn);
	ck_assert_uint_eq(p->kernel_bytes, kbytes);
	ck_assert_uint_eq(p->passes, 1);
	ck_assert_int_eq(p->pass_wall_ns, 5);
	ck_assert_uint_gt(p->pass_ns_sum, 0);
	if (kn > 0) {
		/* buffers exist: the pass walks the fds to find holders */
		ck_assert_uint_eq(p->passes_no_buffer, 0);
		ck_assert_uint_gt(p->procs_scanned, 0);
		goto out;
	}
	/* none (this VM): the pass is spared, and exact (none held) */
	ck_assert_uint_eq(p->passes_no_buffer, 1);
	ck_assert_uint_eq(p->procs_scanned, 0);
	ck_assert_uint_eq(p->fds_read, 0);
	ck_assert_uint_eq(p->buffers, 0);
	ck_assert_uint_eq(p->total_bytes, 0);
	ck_assert_uint_eq(p->nprocs, 0);
#else
	(void)kbytes;
	ck_assert_uint_eq(dmabuf_iter_state(db), DMABUF_ITER_WHY_BUILD);
	ck_assert_int_eq(dmabuf_pass(db, 5, &p), 0);
	ck_assert_uint_eq(p->kernel_passes, 0);
	ck_assert_uint_eq(p->passes_no_buffer, 0);
	ck_assert_uint_gt(p->procs_scanned, 0);
	ck_assert_uint_eq(p->fds_dmabuf, kn);
	goto out;
#endif
out:
	window_dmabuf_free(p);
	dmabuf_free(db);
}
END_TEST

/* Closes with a pass due at each: every window's part counts its spared
 * pass, the live copy too. */
START_TEST(test_windows_count)
{
	struct dmabuf *db = reader(true);
	const struct window_dmabuf *p;
	struct window *w;
	bool spared = pass_spared();
	int i;

	for (i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(w = window_new((uint64_t)i + 1, 1));
		w->wall_end_ns = (int64_t)(i + 1) * 10 * SEC;
		ck_assert_int_eq(dmabuf_window(db, w, (i + 1) * 10 * SEC), 0);
		ck_assert_ptr_nonnull(p = window_dmabuf(w));
		ck_assert_uint_eq(p->passes, 1);
		if (spared) {
			ck_assert_uint_eq(p->passes_no_buffer, 1);
			ck_assert_uint_eq(p->kernel_passes, 1);
			ck_assert_uint_eq(p->fds_read, 0);
		} else {
			ck_assert_uint_eq(p->passes_no_buffer, 0);
			ck_assert_uint_gt(p->fds_read, 0);
		}
		window_free(w);
	}
	ck_assert_ptr_nonnull(p = dmabuf_last(db));
	ck_assert_int_eq(p->pass_wall_ns, 30 * SEC);
	dmabuf_free(db);
}
END_TEST

/* dmabuf_iter = off: the list is not read, the pass walks every process's
 * fds (this test's own open ones among them) and finds no DMA-BUF fd,
 * which is what the list said. */
START_TEST(test_forced_proc_walks)
{
	struct dmabuf *db = reader(false);
	struct window_dmabuf *p = NULL;
	unsigned long long kbytes = 0;
	unsigned kn = 1;

	ck_assert_uint_eq(dmabuf_iter_state(db), DMABUF_ITER_WHY_CONFIG);
	ck_assert_int_eq(dmabuf_pass(db, 7, &p), 0);
	ck_assert_uint_eq(p->iter_why, DMABUF_ITER_WHY_CONFIG);
	ck_assert_uint_eq(p->kernel_passes, 0);
	ck_assert_uint_eq(p->passes_no_buffer, 0);
	/* init, this process and more: their fd directories were read */
	ck_assert_uint_gt(p->procs_scanned, 1);
	ck_assert_uint_gt(p->fds_read, 3);
	ck_assert_int_eq(bufinfo_total(&kn, &kbytes), 0);
	/* what the fds hold is on the kernel's list; none when it is empty */
	ck_assert_uint_le(p->buffers, kn);
	if (kn == 0)
		ck_assert_uint_eq(p->fds_dmabuf, 0);
	window_dmabuf_free(p);
	dmabuf_free(db);
}
END_TEST

/* bpf_load pinned-only or off: the daemon loads no program of its own,
 * so the iterator is not loaded either and every pass walks; why says so.
 * The order of the checks: dmabuf_iter = off first, then this. */
START_TEST(test_no_bpf_load_walks)
{
	struct dmabuf_opts o = { .proc_root = "/proc",
		.sys_root = "/sys",
		.no_bpf_load = true };
	struct dmabuf_config c;
	struct dmabuf *db = NULL;
	struct window_dmabuf *p = NULL;

	dmabuf_config_init(&c);
	ck_assert(c.iter);
	c.interval_s = 0;
	o.cfg = &c;
	ck_assert_int_eq(dmabuf_new(&o, &db), 0);
	dmabuf_test_no_worker(db);
	ck_assert_uint_eq(dmabuf_iter_state(db), DMABUF_ITER_WHY_BPF_LOAD);
	ck_assert_str_eq(dmabuf_iter_why_name(dmabuf_iter_state(db)),
	    "bpf_load");
	ck_assert_int_eq(dmabuf_pass(db, 9, &p), 0);
	ck_assert_uint_eq(p->iter_why, DMABUF_ITER_WHY_BPF_LOAD);
	ck_assert_uint_eq(p->kernel_passes, 0);
	ck_assert_uint_eq(p->passes_no_buffer, 0);
	ck_assert_uint_gt(p->procs_scanned, 1);
	window_dmabuf_free(p);
	dmabuf_free(db);

	/* off wins: the reason is the setting */
	c.iter = false;
	ck_assert_int_eq(dmabuf_new(&o, &db), 0);
	ck_assert_uint_eq(dmabuf_iter_state(db), DMABUF_ITER_WHY_CONFIG);
	dmabuf_free(db);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dmabuf_kernel");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	if (geteuid() != 0) {
		fprintf(stderr, "not root: skipped\n");
		return 77;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_no_buffer_skips);
	tcase_add_test(tc, test_windows_count);
	tcase_add_test(tc, test_forced_proc_walks);
	tcase_add_test(tc, test_no_bpf_load_walks);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
