/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Foreground and background (fgbg/): the parsers and mappings against
 * Android's /proc/<pid>/cgroup layouts and ActivityManager's adj levels;
 * an Android-shaped procfs and cpuset tree scanned sample by sample —
 * processes in top-app, foreground and background, one moving top-app →
 * background mid-window, one without a cpuset line placed by
 * oom_score_adj, one quiet process never read — with exact per-state
 * ticks and faults; roll-up sums; the part through the store and back, a
 * damaged blob counted with the rest of the window read; and `top` /
 * `proc` with a state answered from the stored datasets, or ABSENT.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "control/control.h"
#include "fgbg/fgbg.h"
#include "frame.h"
#include "rpc/rpc.h"
#include "rpc/rpc_int.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define T0 (1699999800LL * NSEC_PER_SEC)
#define FRAME_MAX (1u << 20)
#define PARSE_CG(text, st, src) fg_parse_cgroup((text), strlen(text), st, src)

START_TEST(test_groups)
{
	ck_assert_int_eq(fg_group_state("/top-app", 8), FG_TOP_APP);
	ck_assert_int_eq(fg_group_state("/foreground", 11), FG_FOREGROUND);
	ck_assert_int_eq(fg_group_state("/foreground/boost", 17),
	    FG_FOREGROUND);
	ck_assert_int_eq(fg_group_state("/camera-daemon", 14), FG_FOREGROUND);
	ck_assert_int_eq(fg_group_state("/background", 11), FG_BACKGROUND);
	ck_assert_int_eq(fg_group_state("/system-background", 18),
	    FG_BACKGROUND);
	ck_assert_int_eq(fg_group_state("/restricted", 11), FG_BACKGROUND);
	ck_assert_int_eq(fg_group_state("/", 1), FG_SYSTEM);
	ck_assert_int_eq(fg_group_state("/top-apps", 9), -ENOENT);
	ck_assert_int_eq(fg_group_state("/user.slice", 11), -ENOENT);
	ck_assert_int_eq(fg_group_state("", 0), -ENOENT);
	ck_assert_int_eq(fg_group_state("top-app", 7), -ENOENT);
	ck_assert_int_eq(fg_state_parse("background"), FG_BACKGROUND);
	ck_assert_int_eq(fg_state_parse("top-app"), FG_TOP_APP);
	ck_assert_int_eq(fg_state_parse("visible"), -EINVAL);
	ck_assert_str_eq(fg_state_name(FG_SYSTEM), "system");
	ck_assert_str_eq(fgbg_status_name(FGBG_ABSENT), "absent");
}
END_TEST

START_TEST(test_parse_cgroup)
{
	enum fg_source src;
	enum fg_state st;

	/* an Android 12 app: v1 controllers and the v2 uid_/pid_ line */
	ck_assert_int_eq(PARSE_CG("5:schedtune:/top-app\n4:memory:/\n"
				  "3:cpuset:/background\n2:cpu:/\n"
				  "1:blkio:/\n0::/uid_10100/pid_4711\n",
			     &st, &src),
	    0);
	ck_assert_int_eq(st, FG_BACKGROUND); /* the cpuset decides */
	ck_assert_int_eq(src, FG_SRC_CPUSET);
	/* a combined controller list */
	ck_assert_int_eq(PARSE_CG("3:cpu,cpuset:/top-app\n", &st, &src), 0);
	ck_assert_int_eq(st, FG_TOP_APP);
	/* the cpuset root: a native daemon */
	ck_assert_int_eq(PARSE_CG("3:cpuset:/\n0::/system\n", &st, &src), 0);
	ck_assert_int_eq(st, FG_SYSTEM);
	ck_assert_int_eq(src, FG_SRC_CPUSET);
	/* no cpuset line: another controller naming an Android group */
	ck_assert_int_eq(PARSE_CG("5:schedtune:/foreground\n0::/uid_1\n", &st,
			     &src),
	    0);
	ck_assert_int_eq(st, FG_FOREGROUND);
	ck_assert_int_eq(src, FG_SRC_CGROUP);
	/* a vendor cpuset: the other lines decide */
	ck_assert_int_eq(PARSE_CG("3:cpuset:/vendor-x\n5:cpu:/background\n",
			     &st, &src),
	    0);
	ck_assert_int_eq(st, FG_BACKGROUND);
	ck_assert_int_eq(src, FG_SRC_CGROUP);
	/* a host: nothing said (v2 root and a systemd slice) */
	ck_assert_int_eq(PARSE_CG("0::/user.slice/user-0.slice\n", &st, &src),
	    -ENOENT);
	ck_assert_int_eq(PARSE_CG("0::/\n", &st, &src), -ENOENT);
	ck_assert_int_eq(PARSE_CG("", &st, &src), -ENOENT);
	ck_assert_int_eq(PARSE_CG("garbage\n::\n:::\n", &st, &src), -ENOENT);
}
END_TEST

START_TEST(test_adj)
{
	int64_t v;

	ck_assert_int_eq(fg_adj_state(-1000), FG_SYSTEM); /* NATIVE_ADJ */
	ck_assert_int_eq(fg_adj_state(-900), FG_SYSTEM);  /* SYSTEM_ADJ */
	ck_assert_int_eq(fg_adj_state(-800), FG_FOREGROUND);
	ck_assert_int_eq(fg_adj_state(-700), FG_FOREGROUND);
	ck_assert_int_eq(fg_adj_state(0), FG_TOP_APP);
	ck_assert_int_eq(fg_adj_state(50), FG_FOREGROUND);
	ck_assert_int_eq(fg_adj_state(100), FG_FOREGROUND);
	ck_assert_int_eq(fg_adj_state(250), FG_FOREGROUND);
	ck_assert_int_eq(fg_adj_state(300), FG_BACKGROUND); /* BACKUP */
	ck_assert_int_eq(fg_adj_state(600), FG_BACKGROUND); /* HOME */
	ck_assert_int_eq(fg_adj_state(999), FG_BACKGROUND); /* cached */
	ck_assert_int_eq(fg_adj_state(1001), FG_UNKNOWN);
	ck_assert_int_eq(fg_parse_adj("-1000\n", 6, &v), 0);
	ck_assert_int_eq(v, -1000);
	ck_assert_int_eq(fg_parse_adj("905\n", 4, &v), 0);
	ck_assert_int_eq(v, 905);
	ck_assert_int_eq(fg_parse_adj("1001\n", 5, &v), -EINVAL);
	ck_assert_int_eq(fg_parse_adj("x\n", 2, &v), -EINVAL);
	ck_assert_int_eq(fg_parse_adj("-\n", 2, &v), -EINVAL);
	ck_assert_int_eq(fg_parse_adj("", 0, &v), -EINVAL);
}
END_TEST

/* ------------------------------------------------- an Android-shaped tree */

static char *fx; /* the fixture's root: proc/, sys/fs/cgroup/cpuset/ */

struct fxproc {
	int32_t pid;
	const char *comm;
	const char *cgroup; /* /proc/<pid>/cgroup */
	const char *adj;    /* oom_score_adj; NULL: none */
	/* per sample interval: utime, stime, minflt, majflt */
	uint64_t d[4];
	uint64_t c[4]; /* the counters now */
};

static struct fxproc procs[] = {
	{ 100, "app_top",
	    "5:schedtune:/top-app\n3:cpuset:/top-app\n"
	    "0::/uid_10100/pid_100\n",
	    "0\n", { 5, 2, 30, 1 }, { 50, 20, 300, 10 } },
	{ 200, "app_fg", "3:cpuset:/foreground\n0::/uid_10200/pid_200\n",
	    "100\n", { 3, 1, 10, 0 }, { 30, 10, 100, 0 } },
	{ 300, "app_bg", "3:cpuset:/background\n0::/uid_10300/pid_300\n",
	    "900\n", { 1, 1, 5, 2 }, { 10, 10, 50, 20 } },
	/* moves top-app → background after the first interval */
	{ 400, "app_move", "3:cpuset:/top-app\n0::/uid_10400/pid_400\n", "0\n",
	    { 7, 3, 40, 1 }, { 70, 30, 400, 10 } },
	/* no cpuset line: oom_score_adj 100 (VISIBLE_APP_ADJ) decides */
	{ 500, "app_noline", "0::/uid_10500/pid_500\n", "100\n", { 2, 2, 8, 1 },
	    { 20, 20, 80, 10 } },
	/* quiet: never read */
	{ 600, "quiet", "3:cpuset:/background\n", "900\n", { 0, 0, 0, 0 },
	    { 5, 5, 5, 5 } },
};
#define NPROCS (sizeof(procs) / sizeof(procs[0]))

static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fx, rel);
	ck_assert_int_eq(tu_writes(path, text), 0);
}

static void
mkdirs(const char *rel)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", fx, rel);
	for (p = path + strlen(fx) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		(void)mkdir(path, 0755);
		*p = '/';
	}
	(void)mkdir(path, 0755);
}

static void
write_proc(const struct fxproc *p)
{
	char rel[64], text[512];

	snprintf(rel, sizeof(rel), "proc/%d", p->pid);
	mkdirs(rel);
	snprintf(text, sizeof(text),
	    "%d (%s) S 1 %d %d 0 -1 4194304 %llu 0 %llu 0 %llu %llu 0 0 20 0 "
	    "1 0 1000 10000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 "
	    "0 0 17 0 0 0 0 0 0\n",
	    p->pid, p->comm, p->pid, p->pid, (unsigned long long)p->c[2],
	    (unsigned long long)p->c[3], (unsigned long long)p->c[0],
	    (unsigned long long)p->c[1]);
	snprintf(rel, sizeof(rel), "proc/%d/stat", p->pid);
	put(rel, text);
	snprintf(text, sizeof(text),
	    "Name:\t%s\nTgid:\t%d\nUid:\t%d\t%d\t%d\t%d\n"
	    "Gid:\t%d\t%d\t%d\t%d\n",
	    p->comm, p->pid, 10000 + p->pid, 10000 + p->pid, 10000 + p->pid,
	    10000 + p->pid, 10000 + p->pid, 10000 + p->pid, 10000 + p->pid,
	    10000 + p->pid);
	snprintf(rel, sizeof(rel), "proc/%d/status", p->pid);
	put(rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", p->pid);
	put(rel, p->comm);
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", p->pid);
	put(rel, p->cgroup);
	if (p->adj) {
		snprintf(rel, sizeof(rel), "proc/%d/oom_score_adj", p->pid);
		put(rel, p->adj);
	}
}

static void
fx_setup(void)
{
	size_t i;

	fx = tu_mkdtemp("fgbg");
	ck_assert_ptr_nonnull(fx);
	mkdirs("sys/fs/cgroup/cpuset/top-app");
	mkdirs("sys/fs/cgroup/cpuset/foreground");
	mkdirs("sys/fs/cgroup/cpuset/background");
	for (i = 0; i < NPROCS; i++)
		write_proc(&procs[i]);
}

static void
fx_teardown(void)
{
	tu_rmtree(fx);
	free(fx);
	fx = NULL;
}

/* Every process's counters move by its per-interval deltas. */
static void
advance(void)
{
	size_t i;
	unsigned k;

	for (i = 0; i < NPROCS; i++) {
		for (k = 0; k < 4; k++)
			procs[i].c[k] += procs[i].d[k];
		write_proc(&procs[i]);
	}
}

static void
scan(struct procscan *ps, struct fgbg *fg, struct window *w, bool have_prev)
{
	struct scan_ctx ctx = {
		.valid = true,
		.have_prev = have_prev,
		/* after every starttime: nothing is "born" */
		.prev_boot_ns = 3600 * SEC,
		.wall_ns = SEC,
		.total_ticks = 200,
		.norm_ticks = 100.0,
		.fg = fg,
	};

	ck_assert_int_eq(procscan_run(ps, &ctx, w), 0);
	fgbg_scanned(fg);
}

static struct fgbg *
fx_fgbg(const char *mode, unsigned *ret_status)
{
	struct fgbg_config cfg;
	struct fgbg_opts o = { 0 };
	char proc[PATH_MAX], sys[PATH_MAX];
	struct fgbg *fg = NULL;

	snprintf(proc, sizeof(proc), "%s/proc", fx);
	snprintf(sys, sizeof(sys), "%s/sys", fx);
	fgbg_config_init(&cfg);
	ck_assert_int_eq(fgbg_config_set(&cfg, "fgbg", mode), 0);
	o.proc_root = proc;
	o.sys_root = sys;
	o.cfg = &cfg;
	ck_assert_int_eq(fgbg_new(&o, &fg), 0);
	*ret_status = fgbg_status(fg);
	fgbg_config_release(&cfg);
	return fg;
}

static const struct window_fgbg_ent *
ent(const struct window_fgbg *p, int32_t pid, enum fg_state st)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->e[i].pid == pid && p->e[i].state == (uint32_t)st)
			return &p->e[i];
	return NULL;
}

static void
ent_eq(const struct window_fgbg *p, int32_t pid, enum fg_state st, uint64_t ut,
    uint64_t stime, uint64_t mn, uint64_t mj, uint32_t samples)
{
	const struct window_fgbg_ent *e = ent(p, pid, st);

	ck_assert_msg(e != NULL, "no entry for %d in %s", pid,
	    fg_state_name(st));
	ck_assert_uint_eq(e->d_utime, ut);
	ck_assert_uint_eq(e->d_stime, stime);
	ck_assert_uint_eq(e->d_minflt, mn);
	ck_assert_uint_eq(e->d_majflt, mj);
	ck_assert_uint_eq(e->samples, samples);
	ck_assert_uint_eq(e->starttime, 1000);
}

/* The whole window: three intervals, pid 400 moving after the first. */
static struct window *
three_intervals(struct fgbg *fg)
{
	char proc[PATH_MAX];
	struct procscan *ps;
	struct window *w;
	int procfd;

	snprintf(proc, sizeof(proc), "%s/proc", fx);
	procfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
	ck_assert_int_eq(procscan_new(procfd, 100, THREADS_NONE, &ps), 0);
	ck_assert_ptr_nonnull(w = window_new(1, 2));
	w->hz = 100;
	scan(ps, fg, w, false); /* the baseline */
	advance();
	scan(ps, fg, w, true); /* interval 1: pid 400 in top-app */
	procs[3].cgroup = "3:cpuset:/background\n0::/uid_10400/pid_400\n";
	advance();
	scan(ps, fg, w, true); /* interval 2: pid 400 in background */
	advance();
	scan(ps, fg, w, true); /* interval 3 */
	ck_assert_int_eq(procscan_flush(ps, w), 0);
	ck_assert_int_eq(fgbg_flush(fg, w), 0);
	procscan_free(ps);
	close(procfd);
	return w;
}

/*
 * Identities from the worker (proc_ident_async.c): the first sample of a
 * process makes its entries before its name and uid are back (the /proc
 * scan knows no uid without status). Its entries take them from the rows
 * once they are: pid 100's top-app entry, made in interval 1 with the
 * comm and no uid, has its uid and name after the answers (intervals 2
 * and 3); pid 400's, whose only sample was interval 1, keeps what it had.
 */
START_TEST(test_fixture_late_identity)
{
	const struct window_fgbg *p;
	const struct window_fgbg_ent *e;
	struct event_base *base;
	char proc[PATH_MAX];
	struct procscan *ps;
	struct window *w;
	struct fgbg *fg;
	unsigned status;
	int procfd;

	fg = fx_fgbg("auto", &status);
	snprintf(proc, sizeof(proc), "%s/proc", fx);
	procfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
	ck_assert_int_eq(procscan_new(procfd, 100, THREADS_NONE, &ps), 0);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_int_eq(procscan_ident_async(ps, base, 0), 0);
	ck_assert_ptr_nonnull(w = window_new(1, 2));
	w->hz = 100;
	scan(ps, fg, w, false); /* the baseline; the asks queued */
	advance();
	scan(ps, fg, w, true); /* interval 1: no answer taken yet */
	while (procscan_ident_settle(ps, true) > 0)
		;
	procs[3].cgroup = "3:cpuset:/background\n0::/uid_10400/pid_400\n";
	advance();
	scan(ps, fg, w, true); /* interval 2 */
	advance();
	scan(ps, fg, w, true); /* interval 3 */
	ck_assert_int_eq(procscan_flush(ps, w), 0);
	ck_assert_int_eq(fgbg_flush(fg, w), 0);
	ck_assert_ptr_nonnull(p = window_fgbg(w));
	/* interval 1's entry of 400 says no answer had come then */
	ck_assert_ptr_nonnull(e = ent(p, 400, FG_TOP_APP));
	ck_assert_uint_eq(e->uid, UINT32_MAX);
	ck_assert_uint_eq(ent(p, 100, FG_TOP_APP)->uid, 10100);
	ck_assert_uint_eq(ent(p, 400, FG_BACKGROUND)->uid, 10400);
	ck_assert_str_eq(ent(p, 400, FG_BACKGROUND)->name, "app_move");
	ck_assert_uint_gt(w->health.ident_queued, 0);
	ck_assert_uint_eq(w->health.ident_loop, 0);
	window_free(w);
	procscan_free(ps);
	event_base_free(base);
	close(procfd);
	fgbg_free(fg);
}
END_TEST

START_TEST(test_fixture_states)
{
	const struct window_fgbg *p;
	unsigned status, st;
	struct fgbg *fg;
	struct window *w;
	size_t i;

	fg = fx_fgbg("auto", &status);
	ck_assert_uint_eq(status, FGBG_ON); /* the cpuset tree says Android */
	ck_assert_ptr_nonnull(strstr(fgbg_cpuset(fg), "/sys/fs/cgroup/cpuset"));
	w = three_intervals(fg);
	ck_assert_ptr_nonnull(p = window_fgbg(w));
	ck_assert_uint_eq(p->status, FGBG_ON);
	ck_assert_uint_eq(p->scans, 4);
	/* five processes moved in each of three intervals; the quiet one
	 * was never read */
	ck_assert_uint_eq(p->reads, 15);
	ck_assert_uint_eq(p->by_src[FG_SRC_CPUSET], 12);
	ck_assert_uint_eq(p->by_src[FG_SRC_ADJ], 3);
	ck_assert_uint_eq(p->by_src[FG_SRC_CGROUP], 0);
	ck_assert_uint_eq(p->by_src[FG_SRC_NONE], 0);
	ck_assert_uint_eq(p->read_errors, 0);
	ck_assert_uint_eq(p->n, 6);
	ent_eq(p, 100, FG_TOP_APP, 15, 6, 90, 3, 3);
	ent_eq(p, 200, FG_FOREGROUND, 9, 3, 30, 0, 3);
	ent_eq(p, 300, FG_BACKGROUND, 3, 3, 15, 6, 3);
	/* the move: each interval goes to the state read at its end */
	ent_eq(p, 400, FG_TOP_APP, 7, 3, 40, 1, 1);
	ent_eq(p, 400, FG_BACKGROUND, 14, 6, 80, 2, 2);
	ent_eq(p, 500, FG_FOREGROUND, 6, 6, 24, 3, 3);
	ck_assert_ptr_null(ent(p, 600, FG_BACKGROUND));
	ck_assert_str_eq(ent(p, 400, FG_TOP_APP)->name, "app_move");
	ck_assert_uint_eq(ent(p, 100, FG_TOP_APP)->uid, 10100);
	/* the datasets partition the process figures exactly */
	for (i = 0; i < w->nprocs; i++) {
		const struct window_task *t = &w->procs[i];
		uint64_t ut = 0, stt = 0, mn = 0, mj = 0;

		for (st = 0; st < FG__MAX; st++) {
			const struct window_fgbg_ent *e = ent(p, t->id, st);

			if (e == NULL)
				continue;
			ut += e->d_utime;
			stt += e->d_stime;
			mn += e->d_minflt;
			mj += e->d_majflt;
		}
		ck_assert_uint_eq(ut, t->d_utime);
		ck_assert_uint_eq(stt, t->d_stime);
		ck_assert_uint_eq(mn, t->d_minflt);
		ck_assert_uint_eq(mj, t->d_majflt);
	}
	window_free(w);
	fgbg_free(fg);
}
END_TEST

/* Without Android's cpusets, auto is absent: nothing read, a head only;
 * off gives no part at all; on reads even here. */
START_TEST(test_fixture_absent)
{
	unsigned status;
	struct fgbg *fg;
	struct window *w;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cpuset/top-app", fx);
	ck_assert_int_eq(rmdir(path), 0);
	fg = fx_fgbg("auto", &status);
	ck_assert_uint_eq(status, FGBG_ABSENT);
	ck_assert_str_eq(fgbg_cpuset(fg), "");
	w = three_intervals(fg);
	ck_assert_ptr_nonnull(window_fgbg(w));
	ck_assert_uint_eq(window_fgbg(w)->status, FGBG_ABSENT);
	ck_assert_uint_eq(window_fgbg(w)->reads, 0);
	ck_assert_uint_eq(window_fgbg(w)->n, 0);
	window_free(w);
	fgbg_free(fg);

	fg = fx_fgbg("off", &status);
	ck_assert_uint_eq(status, FGBG_OFF);
	w = three_intervals(fg);
	ck_assert_ptr_null(window_fgbg(w));
	window_free(w);
	fgbg_free(fg);

	fg = fx_fgbg("on", &status);
	ck_assert_uint_eq(status, FGBG_ON);
	w = three_intervals(fg);
	ck_assert_uint_eq(window_fgbg(w)->reads, 15);
	window_free(w);
	fgbg_free(fg);
}
END_TEST

/* ----------------------------------------------------- roll-ups, store */

static struct window *
mkwin(uint64_t seq, int64_t wall)
{
	struct window *w = window_new(seq, 2);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "f9b90000-0000-4000-8000-1");
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

static void
add_ent(struct window_fgbg *p, int32_t pid, enum fg_state st, uint64_t ut,
    uint64_t stt, uint64_t mn, uint64_t mj)
{
	struct window_fgbg_ent *e = window_fgbg_add(p);

	ck_assert_ptr_nonnull(e);
	e->pid = pid;
	e->starttime = 1000 + (uint64_t)pid;
	e->uid = 10000 + (uint32_t)pid;
	e->state = st;
	snprintf(e->name, sizeof(e->name), "proc%d", pid);
	e->d_utime = ut;
	e->d_stime = stt;
	e->d_minflt = mn;
	e->d_majflt = mj;
	e->samples = 1;
}

/* A window with an fgbg part on: a few processes in a few states. */
static struct window *
win_with(uint64_t seq, int64_t wall, unsigned k)
{
	struct window *w = mkwin(seq, wall);
	struct window_fgbg *p = window_fgbg_new();

	ck_assert_ptr_nonnull(p);
	p->status = FGBG_ON;
	snprintf(p->cpuset, sizeof(p->cpuset), "/dev/cpuset");
	p->scans = 10;
	p->reads = 20 + k;
	p->by_src[FG_SRC_CPUSET] = 18 + k;
	p->by_src[FG_SRC_ADJ] = 2;
	p->read_errors = k;
	add_ent(p, 7, FG_TOP_APP, 10 * k, 2, 100, 1);
	add_ent(p, 7, FG_BACKGROUND, k, 1, 5, 0);
	add_ent(p, 9, FG_BACKGROUND, 3, 3 * k, 7, k);
	if (k == 2)
		add_ent(p, 11, FG_FOREGROUND, 4, 4, 4, 4);
	window_fgbg_sort(p);
	window_part_set(w, WPART_FGBG, p);
	return w;
}

START_TEST(test_rollup)
{
	struct window *a = win_with(1, T0, 1),
		      *b = win_with(2, T0 + 10 * SEC, 2);
	const struct window_fgbg *p;

	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_ptr_nonnull(p = window_fgbg(a));
	ck_assert_uint_eq(p->scans, 20);
	ck_assert_uint_eq(p->reads, 43);
	ck_assert_uint_eq(p->by_src[FG_SRC_CPUSET], 39);
	ck_assert_uint_eq(p->by_src[FG_SRC_ADJ], 4);
	ck_assert_uint_eq(p->read_errors, 3);
	ck_assert_uint_eq(p->n, 4);
	ck_assert_uint_eq(ent(p, 7, FG_TOP_APP)->d_utime, 30);
	ck_assert_uint_eq(ent(p, 7, FG_TOP_APP)->d_stime, 4);
	ck_assert_uint_eq(ent(p, 7, FG_TOP_APP)->d_minflt, 200);
	ck_assert_uint_eq(ent(p, 7, FG_TOP_APP)->d_majflt, 2);
	ck_assert_uint_eq(ent(p, 7, FG_TOP_APP)->samples, 2);
	ck_assert_uint_eq(ent(p, 7, FG_BACKGROUND)->d_utime, 3);
	ck_assert_uint_eq(ent(p, 9, FG_BACKGROUND)->d_stime, 9);
	ck_assert_uint_eq(ent(p, 9, FG_BACKGROUND)->d_majflt, 3);
	ck_assert_uint_eq(ent(p, 11, FG_FOREGROUND)->d_utime, 4);
	ck_assert_uint_eq(ent(p, 11, FG_FOREGROUND)->samples, 1);
	/* still sorted: a second roll-up folds by the same keys */
	ck_assert_int_lt(p->e[0].pid, p->e[3].pid);
	window_free(a);
	window_free(b);

	/* an absent window rolled into an on one stays on */
	a = win_with(1, T0, 1);
	b = mkwin(2, T0 + 10 * SEC);
	ck_assert_ptr_nonnull(p = window_fgbg_new());
	((struct window_fgbg *)p)->status = FGBG_ABSENT;
	window_part_set(b, WPART_FGBG, (void *)p);
	ck_assert_int_eq(window_merge(a, b), 0);
	ck_assert_uint_eq(window_fgbg(a)->status, FGBG_ON);
	ck_assert_uint_eq(window_fgbg(a)->n, 3);
	window_free(a);
	window_free(b);
}
END_TEST

static void
part_eq(const struct window_fgbg *a, const struct window_fgbg *b)
{
	size_t i;

	ck_assert_uint_eq(a->status, b->status);
	ck_assert_str_eq(a->cpuset, b->cpuset);
	ck_assert_uint_eq(a->scans, b->scans);
	ck_assert_uint_eq(a->reads, b->reads);
	ck_assert_mem_eq(a->by_src, b->by_src, sizeof(a->by_src));
	ck_assert_uint_eq(a->read_errors, b->read_errors);
	ck_assert_uint_eq(a->ents_cut, b->ents_cut);
	ck_assert_uint_eq(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		ck_assert_int_eq(a->e[i].pid, b->e[i].pid);
		ck_assert_uint_eq(a->e[i].starttime, b->e[i].starttime);
		ck_assert_uint_eq(a->e[i].uid, b->e[i].uid);
		ck_assert_uint_eq(a->e[i].state, b->e[i].state);
		ck_assert_str_eq(a->e[i].name, b->e[i].name);
		ck_assert_uint_eq(a->e[i].d_utime, b->e[i].d_utime);
		ck_assert_uint_eq(a->e[i].d_stime, b->e[i].d_stime);
		ck_assert_uint_eq(a->e[i].d_minflt, b->e[i].d_minflt);
		ck_assert_uint_eq(a->e[i].d_majflt, b->e[i].d_majflt);
		ck_assert_uint_eq(a->e[i].samples, b->e[i].samples);
	}
}

START_TEST(test_blob)
{
	struct window *w = win_with(1, T0, 2);
	struct window_fgbg *back = NULL;
	uint8_t *b = NULL;
	size_t n = 0, cut;

	ck_assert_int_eq(store_fgbg_blob(window_fgbg(w), &b, &n), 0);
	ck_assert_int_eq(store_fgbg_unblob(b, n, &back), 0);
	part_eq(window_fgbg(w), back);
	window_fgbg_free(back);
	/* every cut and a flipped byte in the payload are refused */
	for (cut = 0; cut < n; cut++)
		ck_assert_int_eq(store_fgbg_unblob(b, cut, &back), -EBADMSG);
	b[n - 1] ^= 0x55;
	ck_assert_int_eq(store_fgbg_unblob(b, n, &back), -EBADMSG);
	free(b);
	window_free(w);
}
END_TEST

START_TEST(test_store)
{
	struct window *w1 = win_with(1, T0, 1),
		      *w2 = win_with(2, T0 + 10 * SEC, 2);
	struct window **ws = NULL, *r;
	struct window_fgbg **parts = NULL;
	struct store_hist *wins = NULL;
	struct store_stats st;
	struct store *s = NULL;
	char db[PATH_MAX], *dir;
	size_t n = 0, i;

	dir = tu_mkdtemp_db("fgbg-store", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	/* round trip, through the window reader */
	ck_assert_int_eq(store_windows(s, T0, T0 + 30 * SEC, 0, &ws, &n), 0);
	ck_assert_uint_eq(n, 2);
	part_eq(window_fgbg(w1), window_fgbg(ws[0]));
	part_eq(window_fgbg(w2), window_fgbg(ws[1]));
	/* roll-up sums exact: the two stored windows merged equal the
	 * two made ones merged */
	ck_assert_int_eq(window_merge(ws[0], ws[1]), 0);
	ck_assert_ptr_nonnull(r = window_dup(w1));
	ck_assert_int_eq(window_merge(r, w2), 0);
	part_eq(window_fgbg(r), window_fgbg(ws[0]));
	window_free(r);
	for (i = 0; i < n; i++)
		window_free(ws[i]);
	free(ws);
	/* the range reader */
	ck_assert_int_eq(store_fgbg_range(s, T0, T0 + 30 * SEC, &parts, &wins,
			     &n),
	    0);
	ck_assert_uint_eq(n, 2);
	part_eq(window_fgbg(w2), parts[1]);
	ck_assert_int_eq(wins[1].wall_start_ns, T0 + 10 * SEC);
	ck_assert_uint_eq(wins[1].hz, 100);
	store_fgbg_range_free(parts, wins, n);

	/* a damaged blob: counted, the window read without its part */
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, 0);
	ck_assert_int_eq(store_exec(s,
			     "UPDATE window_fgbg SET blob = x'0102030405'"
			     " WHERE window_id = (SELECT min(window_id) FROM"
			     " window_fgbg)",
			     NULL, 0),
	    0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 30 * SEC, 0, &ws, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_null(window_fgbg(ws[0]));
	ck_assert_uint_eq(ws[0]->samples, 10); /* the rest of it is read */
	ck_assert_ptr_nonnull(window_fgbg(ws[1]));
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, 1);
	for (i = 0; i < n; i++)
		window_free(ws[i]);
	free(ws);
	ck_assert_int_eq(store_fgbg_range(s, T0, T0 + 30 * SEC, &parts, &wins,
			     &n),
	    0);
	ck_assert_uint_eq(n, 1);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, 2);
	store_fgbg_range_free(parts, wins, n);
	store_close(s);
	window_free(w1);
	window_free(w2);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* On the wire: the head always, the entries of the processes carried. */
START_TEST(test_wire)
{
	struct window *w = win_with(1, T0, 2);
	struct rpc_arena a = { 0 };
	struct window_task t;
	Vitals__Window *m;

	/* pid 9 busiest, pid 7 next; pid 11 has no process row */
	memset(&t, 0, sizeof(t));
	t.id = t.tgid = 9;
	t.starttime = 1009;
	t.d_utime = 50;
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	t.id = t.tgid = 7;
	t.starttime = 1007;
	t.d_utime = 20;
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	ck_assert_ptr_nonnull(m = rpc_pb_window(&a, w, false, 0));
	ck_assert_ptr_nonnull(m->fgbg);
	ck_assert_str_eq(m->fgbg->status, "on");
	ck_assert_str_eq(m->fgbg->cpuset, "/dev/cpuset");
	ck_assert_uint_eq(m->fgbg->reads, 22);
	ck_assert_uint_eq(m->fgbg->n_sources, FG_SRC__MAX);
	ck_assert_uint_eq(m->fgbg->sources[FG_SRC_ADJ]->value, 2);
	ck_assert_uint_eq(m->fgbg->n_entries, 0); /* no tasks: head only */
	ck_assert_ptr_nonnull(m = rpc_pb_window(&a, w, true, 1));
	ck_assert_uint_eq(m->fgbg->n_entries, 1); /* pid 9's one state */
	ck_assert_int_eq(m->fgbg->entries[0]->task->id, 9);
	ck_assert_str_eq(m->fgbg->entries[0]->state, "background");
	ck_assert_uint_eq(m->fgbg->entries[0]->task->d_stime, 6);
	ck_assert_ptr_nonnull(m = rpc_pb_window(&a, w, true, 0));
	ck_assert_uint_eq(m->fgbg->n_entries, 3); /* 7 twice, 9 */
	rpc_arena_release(&a);
	window_free(w);
}
END_TEST

/* ------------------------------------------------------------- queries */

static Vitals__Response *
ask(struct store *s, const struct rpc_query *rq)
{
	Vitals__Response *r;
	uint8_t *f = NULL;
	uint32_t plen;
	size_t len = 0;

	ck_assert_int_eq(query_run(s, rq, FRAME_MAX, &f, &len), 0);
	ck_assert_int_eq(frame_header(f, FRAME_MAX + 64, &plen), 0);
	ck_assert_ptr_nonnull(r = frame_unpack_response(f + 4, plen));
	free(f);
	return r;
}

static struct rpc_query
state_query(enum rpc_qop op, const char *state)
{
	struct rpc_query q = { 0 };

	q.op = op;
	q.id = 7;
	q.hz = 100;
	q.from_wall_ns = T0 - SEC;
	q.to_wall_ns = T0 + 60 * SEC;
	q.metric = METRIC_CPU;
	q.n = 20;
	q.state = (unsigned)fg_state_parse(state) + 1;
	return q;
}

START_TEST(test_query)
{
	struct window *w1 = win_with(1, T0, 1),
		      *w2 = win_with(2, T0 + 10 * SEC, 2);
	struct rpc_query q;
	struct store *s = NULL;
	Vitals__Response *r;
	char db[PATH_MAX], *dir;

	dir = tu_mkdtemp_db("fgbg-query", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);

	/* top in background: pid 9 (3+3 utime, 3+6 stime) before pid 7 */
	q = state_query(RPC_Q_TOP, "background");
	r = ask(s, &q);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_OK);
	ck_assert_str_eq(r->top->state, "background");
	ck_assert_uint_eq(r->top->n_tasks, 2);
	ck_assert_int_eq(r->top->tasks[0]->id, 9);
	ck_assert_uint_eq(r->top->tasks[0]->d_utime, 6);
	ck_assert_uint_eq(r->top->tasks[0]->d_stime, 9);
	ck_assert_uint_eq(r->top->tasks[0]->d_majflt, 3);
	ck_assert_int_eq(r->top->tasks[1]->id, 7);
	ck_assert_uint_eq(r->top->tasks[1]->d_utime, 3);
	ck_assert_uint_eq(r->top->tasks[1]->d_minflt, 10);
	ck_assert_uint_eq(r->top->tasks[1]->samples, 2);
	vitals__response__free_unpacked(r, NULL);
	/* by majflt, top-app */
	q = state_query(RPC_Q_TOP, "top-app");
	q.metric = METRIC_MAJFLT;
	r = ask(s, &q);
	ck_assert_uint_eq(r->top->n_tasks, 1);
	ck_assert_uint_eq(r->top->tasks[0]->d_utime, 30);
	ck_assert_uint_eq(r->top->tasks[0]->d_majflt, 2);
	vitals__response__free_unpacked(r, NULL);
	/* a state nobody was in: an empty list, the dataset exists */
	q = state_query(RPC_Q_TOP, "system");
	r = ask(s, &q);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(r->top->n_tasks, 0);
	vitals__response__free_unpacked(r, NULL);

	/* proc 7 in top-app: one point per window */
	q = state_query(RPC_Q_PROCESS, "top-app");
	q.pid = 7;
	r = ask(s, &q);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_OK);
	ck_assert_str_eq(r->process->state, "top-app");
	ck_assert_uint_eq(r->process->n_history, 2);
	ck_assert_uint_eq(r->process->history[0]->task->d_utime, 10);
	ck_assert_uint_eq(r->process->history[1]->task->d_utime, 20);
	ck_assert_int_eq(r->process->history[1]->wall_start_ns, T0 + 10 * SEC);
	vitals__response__free_unpacked(r, NULL);
	/* pid 11 was in foreground only: no history in top-app, known */
	q = state_query(RPC_Q_PROCESS, "top-app");
	q.pid = 11;
	r = ask(s, &q);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(r->process->n_history, 0);
	vitals__response__free_unpacked(r, NULL);
	/* a pid no dataset holds */
	q.pid = 12345;
	r = ask(s, &q);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(r, NULL);

	/* a range whose windows say absent: ABSENT, not an empty list */
	q = state_query(RPC_Q_TOP, "foreground");
	q.from_wall_ns = T0 + 100 * SEC;
	q.to_wall_ns = T0 + 200 * SEC;
	{
		struct window *w3 = mkwin(3, T0 + 120 * SEC);
		struct window_fgbg *p = window_fgbg_new();

		ck_assert_ptr_nonnull(p);
		p->status = FGBG_ABSENT;
		window_part_set(w3, WPART_FGBG, p);
		ck_assert_int_eq(store_put(s, w3), 0);
		window_free(w3);
	}
	r = ask(s, &q);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_ABSENT);
	ck_assert_ptr_nonnull(strstr(r->error, "absent"));
	vitals__response__free_unpacked(r, NULL);
	/* no window at all in the range */
	q.from_wall_ns = T0 + 1000 * SEC;
	q.to_wall_ns = T0 + 2000 * SEC;
	r = ask(s, &q);
	ck_assert_int_eq(r->status, VITALS__STATUS__STATUS_ABSENT);
	vitals__response__free_unpacked(r, NULL);

	store_close(s);
	window_free(w1);
	window_free(w2);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("fgbg");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_groups);
	tcase_add_test(tc, test_parse_cgroup);
	tcase_add_test(tc, test_adj);
	suite_add_tcase(s, tc);
	tc = tcase_create("fixture");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_fixture_states);
	tcase_add_test(tc, test_fixture_late_identity);
	tcase_add_test(tc, test_fixture_absent);
	suite_add_tcase(s, tc);
	tc = tcase_create("store");
	tcase_add_test(tc, test_rollup);
	tcase_add_test(tc, test_blob);
	tcase_add_test(tc, test_store);
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_wire);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
