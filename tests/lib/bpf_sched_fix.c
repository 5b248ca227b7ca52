/* SPDX-License-Identifier: Apache-2.0 */
/* Each test's own pin and plain directories, and opening the sched
 * accounting with an expected state, for check_bpf_sched* (bpf_sched_fix.h). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf_sched_fix.h"
#include "taskiter/taskiter.h"
#include "testutil.h"

char *bsf_bpffs;  /* this test's pin directory */
char *bsf_tmpdir; /* this test's plain directory */
static int dir_seq;

void
bsf_setup(void)
{
	if (asprintf(&bsf_bpffs, "/sys/fs/bpf/vitals-test-%d-%d", (int)getpid(),
		dir_seq++) < 0)
		ck_abort();
	bsf_tmpdir = tu_mkdtemp("bpfsched");
	ck_assert_ptr_nonnull(bsf_tmpdir);
	bpf_common_init();
}

void
bsf_teardown(void)
{
	/* pins are files: removing them detaches and frees what they hold */
	tu_rmtree(bsf_bpffs);
	tu_rmtree(bsf_tmpdir);
	free(bsf_bpffs);
	free(bsf_tmpdir);
}

struct bpf_sched_opts
bsf_opts(void)
{
	struct bpf_sched_opts o = {
		.bpffs = bsf_bpffs,
		.sys_root = "/sys",
		.load = VBPF_LOAD_AUTO,
		.rq = true,
	};

	return o;
}

/* Open with o, expect state st; returns the handle (NULL when off). */
struct bpf_sched *
bsf_open_expect(const struct bpf_sched_opts *o, unsigned st, char *why,
    size_t whysz)
{
	struct bpf_sched *bs = NULL;
	unsigned got = VBPF__MAX;
	char buf[512];
	int r;

	if (why == NULL) {
		why = buf;
		whysz = sizeof(buf);
	}
	r = bpf_sched_open(o, &bs, &got, why, whysz);
	ck_assert_msg(got == st, "state %s, want %s (%d: %s)",
	    vbpf_state_name(got), vbpf_state_name(st), r, why);
	if (vbpf_state_on(st)) {
		ck_assert_int_eq(r, 0);
		ck_assert_ptr_nonnull(bs);
	} else {
		ck_assert_int_lt(r, 0);
		ck_assert_ptr_null(bs);
	}
	return bs;
}

struct bpf_sched *
bsf_sched_open(const char *pins)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched *bs = NULL;
	unsigned st;
	char why[512];

	o.bpffs = pins;
	ck_assert_msg(bpf_sched_open(&o, &bs, &st, why, sizeof(why)) == 0,
	    "sched: %s", why);
	return bs;
}

void
bsf_events_of(struct bpf_sched *bs, struct taskiter_events *ev)
{
	ck_assert_int_eq(bpf_sched_event_fds(bs, &ev->ctl_fd, &ev->tot_fd,
			     ev->tid_fd, ev->proc_fd, ev->slot_fd,
			     &ev->nslot_fd),
	    0);
	ev->slot_cap = bpf_sched_slot_cap(bs);
}

bool
bsf_exists(const char *kind, const char *name)
{
	char path[PATH_MAX];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s_vitals_%s", bsf_bpffs, kind, name);
	return lstat(path, &sb) == 0;
}

/*
 * Pins of a run that was killed (a timeout skips the teardown) keep their
 * programs attached: remove the directories of test processes that are
 * gone.
 */
void
bsf_sweep_stale(void)
{
	struct dirent *de;
	DIR *d = opendir("/sys/fs/bpf");
	char path[PATH_MAX];
	int pid, seq;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "vitals-test-%d-%d", &pid, &seq) != 2 ||
		    pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "/sys/fs/bpf/%s", de->d_name);
		tu_rmtree(path);
	}
	closedir(d);
}
