/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched_switch accounting when BPF is unavailable, against the running
 * kernel: a pin directory that is not bpffs, loading disabled, no BTF, no
 * privilege — each ends in procfs-only operation with the reason named, in
 * the library and in the real daemon's log and store, which also loads and
 * stores when it can. check_bpf_sched.c has the loading, the counters and
 * the verifier's refusal.
 *
 * Needs root (CAP_BPF, CAP_PERFMON, bpffs): exits 77 only when not root.
 * Every test pins under its own directory below /sys/fs/bpf and removes it.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "taskstat.h"
#include "bpf_sched_fix.h"
#include "testutil.h"
#include "vitalsd.h"

#ifdef HAVE_BPF
#include <linux/capability.h>

#include <bpf/bpf.h>

#include "../bpf/sched/sched.bpf.h"
#endif

/* ------------------------------------------------------- degradation */

START_TEST(test_off_plain_dir)
{
	struct bpf_sched_opts o = bsf_opts();
	char sub[PATH_MAX], why[512];
	struct stat sb;

	o.bpffs = bsf_tmpdir; /* exists, but is not a bpffs */
	bsf_open_expect(&o, VBPF_OFF_NO_BPFFS, why, sizeof(why));
	ck_assert_msg(strstr(why, "not on a bpf filesystem") != NULL, "%s",
	    why);
	/* missing under a plain directory: not created */
	snprintf(sub, sizeof(sub), "%s/pins", bsf_tmpdir);
	o.bpffs = sub;
	bsf_open_expect(&o, VBPF_OFF_NO_BPFFS, NULL, 0);
	ck_assert_int_eq(lstat(sub, &sb), -1);
}
END_TEST

START_TEST(test_off_disabled)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched *bs = NULL;
	unsigned st;
	char why[128];

	o.load = VBPF_LOAD_OFF;
	ck_assert_int_eq(bpf_sched_open(&o, &bs, &st, why, sizeof(why)),
	    -ECANCELED);
	ck_assert_uint_eq(st, VBPF_OFF_DISABLED);
	ck_assert_ptr_null(bs);
}
END_TEST

START_TEST(test_off_no_btf)
{
	struct bpf_sched_opts o = bsf_opts();
	struct stat sb;

	o.sys_root = bsf_tmpdir; /* a sys tree without kernel/btf/vmlinux */
	bsf_open_expect(&o, VBPF_OFF_NO_BTF, NULL, 0);
	ck_assert_int_eq(lstat(bsf_bpffs, &sb), -1);
}
END_TEST

START_TEST(test_off_no_priv)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			_LINUX_CAPABILITY_VERSION_3, 0
		};
		struct __user_cap_data_struct d[2];
		struct bpf_sched_opts o = bsf_opts();
		struct bpf_sched *bs = NULL;
		unsigned st = VBPF__MAX;
		char why[256];

		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d) < 0)
			_exit(100);
		bpf_sched_open(&o, &bs, &st, why, sizeof(why));
		_exit(bs == NULL ? (int)st : 101);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_msg(WEXITSTATUS(status) == VBPF_OFF_NO_PRIV, "state %d (%s)",
	    WEXITSTATUS(status),
	    vbpf_state_name((unsigned)WEXITSTATUS(status)));
}
END_TEST

/* ------------------------------------------------------ the real daemon */

/* Run vitalsd until its second window closes; its log into log. */
static void
run_daemon(const char *log, const char *state, const char *pins,
    const char *load)
{
	char sock[PATH_MAX], conf[PATH_MAX];
	const char *argv[] = { "vitalsd", "-f", "-c", conf, "--state-dir",
		state, "--socket", sock, "--interval-ms", "100", "--window-s",
		"1", "--bpffs", pins, "--bpf-load", load, NULL };
	int status, burner;
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/s", state);
	snprintf(conf, sizeof(conf), "%s.conf", state);
	ck_assert_int_eq(tu_writes(conf, "bpf_stats = on\n"), 0);
	/* the windows' processes and on-CPU time: ours, not the machine's */
	burner = tu_burner_start_switching(50);
	ck_assert_int_gt(burner, 0);
	pid = td_exec(log, TD_LOG_TRUNC, argv, NULL, NULL);
	td_log_until(pid, log, "window 2:", 300, 100);
	status = td_kill(pid, SIGTERM);
	tu_burner_stop(burner);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "vitalsd status %#x", status);
	ck_assert_msg(td_file_has(log, "window 2:"), "no window in %s", log);
}

/* The fullest stored window (the last one may be a short flush). */
static struct window *
last_stored(const char *state)
{
	struct window **ws = NULL, *w = NULL;
	struct store *s = NULL;
	char db[PATH_MAX];
	size_t n = 0, i;

	snprintf(db, sizeof(db), "%s/vitals.db", state);
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_windows(s, 0, INT64_MAX, 0, &ws, &n), 0);
	ck_assert_uint_gt(n, 0);
	for (i = 0; i < n; i++) {
		if (w == NULL || ws[i]->samples > w->samples) {
			window_free(w);
			w = ws[i];
		} else {
			window_free(ws[i]);
		}
	}
	free(ws);
	store_close(s);
	return w;
}

START_TEST(test_daemon_degrades_and_says_so)
{
	char log[PATH_MAX], state[PATH_MAX];
	struct window *w;

	snprintf(log, sizeof(log), "%s/a.log", bsf_tmpdir);
	snprintf(state, sizeof(state), "%s/a", bsf_tmpdir);
	run_daemon(log, state, bsf_tmpdir, "auto"); /* not a bpffs */
	ck_assert(td_file_has(log, "bpf: off_no_bpffs"));
	ck_assert(td_file_has(log, "procfs only"));
	ck_assert(td_file_has(log, "bpf off_no_bpffs"));
	w = last_stored(state);
	ck_assert_uint_eq(window_sched(w)->state, VBPF_OFF_NO_BPFFS);
	ck_assert_uint_gt(w->nprocs, 0); /* procfs went on */
	window_free(w);

	snprintf(log, sizeof(log), "%s/b.log", bsf_tmpdir);
	snprintf(state, sizeof(state), "%s/b", bsf_tmpdir);
	run_daemon(log, state, bsf_bpffs, "off");
	ck_assert(td_file_has(log, "bpf: off_disabled"));
	w = last_stored(state);
	ck_assert_uint_eq(window_sched(w)->state, VBPF_OFF_DISABLED);
	window_free(w);
}
END_TEST

START_TEST(test_daemon_loads_and_stores)
{
	char log[PATH_MAX], state[PATH_MAX];
	struct window *w;

	snprintf(log, sizeof(log), "%s/c.log", bsf_tmpdir);
	snprintf(state, sizeof(state), "%s/c", bsf_tmpdir);
	run_daemon(log, state, bsf_bpffs, "auto");
	ck_assert(td_file_has(log, "bpf: loaded"));
	ck_assert(td_file_has(log, "bpf loaded"));
	w = last_stored(state);
	ck_assert_uint_eq(window_sched(w)->state, VBPF_ON_LOADED);
	ck_assert_uint_eq(window_sched(w)->drains, 1);
	ck_assert_uint_gt(window_sched(w)->oncpu_ns, 0);
	ck_assert_uint_gt(window_sched(w)->nuids, 0);
	ck_assert_uint_gt(window_sched(w)->nprocs, 0);
	ck_assert(window_sched(w)->stats);
	ck_assert_uint_gt(window_sched(w)->prog_runs[0], 0);
	ck_assert_uint_gt(window_sched(w)->prog_ns[0], 0);
	window_free(w);

	/* restarted: the pins are reused */
	snprintf(log, sizeof(log), "%s/d.log", bsf_tmpdir);
	run_daemon(log, state, bsf_bpffs, "auto");
	ck_assert(td_file_has(log, "bpf: reused"));
}
END_TEST

static Suite *
bpf_sched_off_suite(void)
{
	Suite *s = suite_create("bpf_sched");
	TCase *tc = tcase_create("kernel");

	tcase_add_checked_fixture(tc, bsf_setup, bsf_teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_off_plain_dir);
	tcase_add_test(tc, test_off_disabled);
	tcase_add_test(tc, test_off_no_btf);
	tcase_add_test(tc, test_off_no_priv);
	tcase_add_test(tc, test_daemon_degrades_and_says_so);
	tcase_add_test(tc, test_daemon_loads_and_stores);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("bpffs and BPF loading"))
		return 77;
	/* scripts/test.sh mounts it; a bare run may need it too */
	if (bpf_check_bpffs("/sys/fs/bpf") < 0)
		(void)mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
	bsf_sweep_stale();
	return tu_run(bpf_sched_off_suite());
}
