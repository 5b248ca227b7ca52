/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Foreground and background at run time (fgbg.h): whether the signal is
 * on here, the state of a process read when its counters moved, and the
 * open window's accumulators, one per (pid, starttime, state).
 *
 * The cost: nothing when off or absent (the scan does not call in); when
 * on, /proc/<pid>/cgroup of each process whose counters moved in the
 * sample, and its oom_score_adj only when no cgroup line said anything.
 * A quiet process's state is not read: there is nothing to attribute.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "fgbg/fgbg.h"

struct fgbg {
	int procfd;
	unsigned status;
	char cpuset[FG_PATH_LEN];
	struct window_fgbg *acc; /* the open window's; NULL when not on */
	uint32_t *slot;		 /* hash of acc->e indexes + 1; 0 empty */
	size_t nslot;
	struct vbuf buf;
};

/* The cpuset root with Android's groups: configured, or looked for under
 * the sys root (fixtures) and at Android's mount point. */
static bool
find_cpuset(const struct fgbg_opts *o, char *ret, size_t sz)
{
	char cand[2][FG_PATH_LEN], top[FG_PATH_LEN + 16];
	unsigned i, n = 0;
	struct stat st;
	int k;

	if (o->cfg && o->cfg->cpuset) {
		k = snprintf(cand[n++], sizeof(cand[0]), "%s", o->cfg->cpuset);
	} else {
		k = snprintf(cand[n++], sizeof(cand[0]), "%s/fs/cgroup/cpuset",
		    o->sys_root ? o->sys_root : "/sys");
		snprintf(cand[n++], sizeof(cand[0]), "/dev/cpuset");
	}
	/* a root too long to keep is not looked at */
	if (k < 0 || (size_t)k >= sizeof(cand[0]))
		cand[0][0] = '\0';
	for (i = 0; i < n; i++) {
		if (cand[i][0] == '\0' || strlen(cand[i]) >= sz ||
		    snprintf(top, sizeof(top), "%s/top-app", cand[i]) >=
			(int)sizeof(top))
			continue;
		if (stat(top, &st) == 0 && S_ISDIR(st.st_mode)) {
			memcpy(ret, cand[i], strlen(cand[i]) + 1);
			return true;
		}
	}
	return false;
}

int
fgbg_new(const struct fgbg_opts *o, struct fgbg **ret)
{
	unsigned mode = o->cfg ? o->cfg->mode : FGBG_MODE_AUTO;
	struct fgbg *fg;
	bool hier;

	if ((fg = calloc(1, sizeof(*fg))) == NULL)
		return -ENOMEM;
	fg->procfd = -1;
	hier = find_cpuset(o, fg->cpuset, sizeof(fg->cpuset));
	if (mode == FGBG_MODE_OFF)
		fg->status = FGBG_OFF;
	else if (mode == FGBG_MODE_ON || hier || o->android)
		fg->status = FGBG_ON;
	else
		fg->status = FGBG_ABSENT;
	if (fg->status == FGBG_ON) {
		fg->procfd = open(o->proc_root ? o->proc_root : "/proc",
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fg->procfd < 0 || (fg->acc = window_fgbg_new()) == NULL) {
			int r = fg->procfd < 0 ? -errno : -ENOMEM;

			fgbg_free(fg);
			return r;
		}
	}
	*ret = fg;
	return 0;
}

struct fgbg *
fgbg_free(struct fgbg *fg)
{
	if (fg == NULL)
		return NULL;
	if (fg->procfd >= 0)
		close(fg->procfd);
	window_fgbg_free(fg->acc);
	free(fg->slot);
	vbuf_release(&fg->buf);
	free(fg);
	return NULL;
}

unsigned
fgbg_status(const struct fgbg *fg)
{
	return fg->status;
}

const char *
fgbg_cpuset(const struct fgbg *fg)
{
	return fg->cpuset;
}

static size_t
ent_hash(int32_t pid, uint64_t starttime, unsigned st, size_t nslot)
{
	uint64_t h = ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) ^
	    (starttime * 0xff51afd7ed558ccdull) ^ st;

	return (size_t)(h ^ (h >> 29)) & (nslot - 1);
}

static int
slots_grow(struct fgbg *fg)
{
	size_t nslot = fg->nslot ? fg->nslot * 2 : 256, i;
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (slot == NULL)
		return -ENOMEM;
	for (i = 0; i < fg->acc->n; i++) {
		const struct window_fgbg_ent *e = &fg->acc->e[i];
		size_t s = ent_hash(e->pid, e->starttime, e->state, nslot);

		while (slot[s])
			s = (s + 1) & (nslot - 1);
		slot[s] = (uint32_t)i + 1;
	}
	free(fg->slot);
	fg->slot = slot;
	fg->nslot = nslot;
	return 0;
}

/* e's name from t's row: its cmdline name, else its comm. */
static void
ent_name(struct window_fgbg_ent *e, const struct window_task *t)
{
	if (window_task_name(t)[0])
		snprintf(e->name, sizeof(e->name), "%s", window_task_name(t));
	else
		memcpy(e->name, t->comm, sizeof(t->comm));
}

static struct window_fgbg_ent *
ent_get(struct fgbg *fg, const struct window_task *t, unsigned st)
{
	struct window_fgbg_ent *e;
	size_t s;

	if ((fg->acc->n + 1) * 2 > fg->nslot && slots_grow(fg) < 0)
		return NULL;
	s = ent_hash(t->id, t->starttime, st, fg->nslot);
	for (; fg->slot[s]; s = (s + 1) & (fg->nslot - 1)) {
		e = &fg->acc->e[fg->slot[s] - 1];
		if (e->pid == t->id && e->starttime == t->starttime &&
		    e->state == st) {
			/* the identity the scan learnt since (its reads
			 * answer from a worker, after the first sample of
			 * a new process): the latest known stands */
			if (t->uid != UINT32_MAX)
				e->uid = t->uid;
			if (window_task_name(t)[0])
				ent_name(e, t);
			return e;
		}
	}
	if (fg->acc->n >= FG_ENTS_MAX) {
		fg->acc->ents_cut++;
		return NULL;
	}
	if ((e = window_fgbg_add(fg->acc)) == NULL)
		return NULL;
	e->pid = t->id;
	e->starttime = t->starttime;
	e->uid = t->uid;
	e->state = st;
	ent_name(e, t);
	fg->slot[s] = (uint32_t)fg->acc->n;
	return e;
}

/* The state of pid now, and where it came from. */
static void
read_state(struct fgbg *fg, int32_t pid, enum fg_state *ret_st,
    enum fg_source *ret_src)
{
	char path[48];
	int64_t adj;
	int r;

	fg->acc->reads++;
	snprintf(path, sizeof(path), "%d/cgroup", (int)pid);
	r = read_at(fg->procfd, path, &fg->buf);
	if (r == 0 &&
	    fg_parse_cgroup(fg->buf.p, fg->buf.len, ret_st, ret_src) == 0)
		return;
	if (r < 0)
		fg->acc->read_errors++;
	snprintf(path, sizeof(path), "%d/oom_score_adj", (int)pid);
	if (read_at(fg->procfd, path, &fg->buf) == 0 &&
	    fg_parse_adj(fg->buf.p, fg->buf.len, &adj) == 0) {
		*ret_st = fg_adj_state(adj);
		*ret_src = FG_SRC_ADJ;
		return;
	}
	*ret_st = FG_UNKNOWN;
	*ret_src = FG_SRC_NONE;
}

void
fgbg_observe(struct fgbg *fg, const struct window_task *t, uint64_t du,
    uint64_t ds, uint64_t dmin, uint64_t dmaj)
{
	struct window_fgbg_ent *e;
	enum fg_source src;
	enum fg_state st;

	if (fg == NULL || fg->acc == NULL || (du | ds | dmin | dmaj) == 0)
		return;
	read_state(fg, t->id, &st, &src);
	fg->acc->by_src[src]++;
	/* ENOMEM or the bound: this interval is lost to the dataset, and
	 * ents_cut says so when it is the bound */
	if ((e = ent_get(fg, t, st)) == NULL)
		return;
	e->d_utime += du;
	e->d_stime += ds;
	e->d_minflt += dmin;
	e->d_majflt += dmaj;
	e->samples++;
}

void
fgbg_scanned(struct fgbg *fg)
{
	if (fg && fg->acc)
		fg->acc->scans++;
}

int
fgbg_flush(struct fgbg *fg, struct window *w)
{
	struct window_fgbg *p;

	if (fg == NULL || fg->status == FGBG_OFF)
		return 0;
	if (fg->acc) {
		struct window_fgbg *fresh = window_fgbg_new();

		if (fresh == NULL)
			return -ENOMEM;
		p = fg->acc;
		fg->acc = fresh;
		if (fg->nslot)
			memset(fg->slot, 0, fg->nslot * sizeof(*fg->slot));
	} else if ((p = window_fgbg_new()) == NULL) {
		return -ENOMEM;
	}
	p->status = fg->status;
	memcpy(p->cpuset, fg->cpuset, sizeof(p->cpuset));
	window_fgbg_sort(p);
	window_fgbg_free(window_fgbg(w));
	window_part_set(w, WPART_FGBG, p);
	return 0;
}
