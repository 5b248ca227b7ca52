/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The walk of a cgroup v2 subtree, once per window (cgroup.h). Each walk
 * reads every group down to cgroup_depth, at most cgroup_max of them in
 * path order (the rest counted as cut), and keeps the readings for the
 * next: a window's figures are this walk's counters less the last walk's,
 * for a group with the same id at the same path. A counter that went
 * backwards drops its source's deltas (counted); a group seen for the
 * first time gives its levels (gauges) and no deltas, as a process does
 * in its first sample.
 *
 * A file a group does not have (memory.* without the memory controller,
 * pressure files without PSI) is not read again while the group lives:
 * an absent file costs one failed open per group, not one per window.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "core/util.h"
#include "proc/proc.h"

struct cg_grp {
	uint64_t id;
	char path[CG_PATH_LEN];
	uint32_t depth;
	uint32_t absent; /* CG_HAVE_* bits of files it does not have */
	struct cg_read r;
};

struct cg_list {
	struct cg_grp *g;
	size_t n, cap;
};

struct cgroup {
	char *sys_root;
	char *cfg_root; /* configured, or NULL: found */
	char *subtree;
	unsigned depth, max;
	int rootfd; /* the subtree's directory; -1 none */
	char root[CG_PATH_LEN];
	unsigned state;
	int err;
	struct cg_list prev, cur;
	bool have_prev;
	struct vbuf buf;
	/* this walk's counts */
	uint32_t seen, cut, read_errors, path_cut;
};

static const char *const psi_files[CG_PSI__MAX] = { "cpu.pressure",
	"memory.pressure", "io.pressure" };

static char *
dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

int
cgroup_new(const struct cgroup_opts *o, struct cgroup **ret)
{
	const struct cgroup_config *c = o->cfg;
	struct cgroup *cg;

	if ((cg = calloc(1, sizeof(*cg))) == NULL)
		return -ENOMEM;
	cg->rootfd = -1;
	cg->depth = c->depth > CG_DEPTH_MAX ? CG_DEPTH_MAX : c->depth;
	cg->max = c->max ? c->max : CG_MAX_DEFAULT;
	cg->state = c->on ? CG_STATE_NO_ROOT : CG_STATE_OFF;
	cg->err = -ENOENT;
	if ((cg->sys_root = strdup(o->sys_root ? o->sys_root : "/sys")) ==
		NULL ||
	    (c->root && *c->root && (cg->cfg_root = strdup(c->root)) == NULL) ||
	    (c->subtree && *c->subtree &&
		(cg->subtree = dup_or_null(c->subtree)) == NULL)) {
		cgroup_free(cg);
		return -ENOMEM;
	}
	*ret = cg;
	return 0;
}

struct cgroup *
cgroup_free(struct cgroup *cg)
{
	if (cg == NULL)
		return NULL;
	if (cg->rootfd >= 0)
		close(cg->rootfd);
	free(cg->prev.g);
	free(cg->cur.g);
	vbuf_release(&cg->buf);
	free(cg->sys_root);
	free(cg->cfg_root);
	free(cg->subtree);
	free(cg);
	return NULL;
}

/* A cgroup v2 directory: it has cgroup.controllers (v1 has not). */
static int
open_v2(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (faccessat(fd, "cgroup.controllers", F_OK, 0) < 0) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

/* The hierarchy (configured, else <sys>/fs/cgroup or, on a hybrid host,
 * <sys>/fs/cgroup/unified) and the subtree in it. */
static int
find_root(struct cgroup *cg)
{
	static const char *const cand[] = { "fs/cgroup", "fs/cgroup/unified" };
	char path[4096];
	int fd = -ENOENT, sub;
	size_t i;

	if (cg->cfg_root) {
		snprintf(path, sizeof(path), "%s", cg->cfg_root);
		fd = open_v2(path);
	}
	for (i = 0; cg->cfg_root == NULL && i < 2 && fd < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", cg->sys_root, cand[i]);
		fd = open_v2(path);
	}
	if (fd < 0)
		return fd;
	if (cg->subtree &&
	    strlen(path) + 1 + strlen(cg->subtree) < sizeof(path)) {
		strcat(path, "/");
		strcat(path, cg->subtree);
	}
	if (cg->subtree) {
		sub = openat(fd, cg->subtree,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		if (sub < 0)
			return -errno;
		fd = sub;
	}
	if (strlen(path) >= sizeof(cg->root)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	memcpy(cg->root, path, strlen(path) + 1);
	cg->rootfd = fd;
	return 0;
}

/* ---------------------------------------------------------------- read */

static bool
read_file(struct cgroup *cg, int dfd, const char *name, uint32_t bit,
    struct cg_grp *g)
{
	int r;

	if (g->absent & bit)
		return false;
	vbuf_reset(&cg->buf);
	if ((r = read_at(dfd, name, &cg->buf)) == -ENOENT || r == -EOPNOTSUPP) {
		g->absent |= bit;
		return false;
	}
	if (r < 0) {
		/* a group removed under the walk reads ENODEV: gone, not
		 * an error */
		if (r != -ENODEV)
			cg->read_errors++;
		return false;
	}
	return true;
}

static void
read_psi(struct cgroup *cg, int dfd, struct cg_grp *g)
{
	struct psi p;
	unsigned k;

	for (k = 0; k < CG_PSI__MAX; k++) {
		if (!read_file(cg, dfd, psi_files[k], CG_HAVE_PSI(k), g))
			continue;
		if (psi_parse(cg->buf.p, cg->buf.len, &p) < 0) {
			cg->read_errors++;
			continue;
		}
		g->r.have |= CG_HAVE_PSI(k);
		g->r.psi_some_us[k] = p.some.total_us;
		g->r.psi_some_avg10[k] = p.some.avg10;
		if (p.have_full) {
			g->r.have |= CG_HAVE_PSI_FULL(k);
			g->r.psi_full_us[k] = p.full.total_us;
		}
	}
}

static void
read_group(struct cgroup *cg, int dfd, struct cg_grp *g)
{
	uint64_t v;

	if (read_file(cg, dfd, "cpu.stat", CG_HAVE_CPU, g) &&
	    cg_parse_cpu_stat(cg->buf.p, cg->buf.len, &g->r) < 0)
		cg->read_errors++;
	if (read_file(cg, dfd, "memory.current", CG_HAVE_MEM, g)) {
		if (parse_u64_text(cg->buf.p, cg->buf.len, &v) == 0) {
			g->r.mem_current = v;
			g->r.have |= CG_HAVE_MEM;
		} else {
			cg->read_errors++;
		}
	}
	if (read_file(cg, dfd, "memory.stat", CG_HAVE_MEMSTAT, g) &&
	    cg_parse_memory_stat(cg->buf.p, cg->buf.len, &g->r) < 0)
		cg->read_errors++;
	if (read_file(cg, dfd, "memory.events", CG_HAVE_EVENTS, g) &&
	    cg_parse_memory_events(cg->buf.p, cg->buf.len, &g->r) < 0)
		cg->read_errors++;
	read_psi(cg, dfd, g);
}

static struct cg_grp *
list_add(struct cg_list *l)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 32;
		struct cg_grp *g = realloc(l->g, nc * sizeof(*g));

		if (g == NULL)
			return NULL;
		l->g = g;
		l->cap = nc;
	}
	memset(&l->g[l->n], 0, sizeof(l->g[0]));
	return &l->g[l->n++];
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmp_grp(const void *a, const void *b)
{
	const struct cg_grp *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static const struct cg_grp *
find_prev(const struct cgroup *cg, const char *path)
{
	struct cg_grp key;
	size_t n = strlen(path);

	if (!cg->have_prev || n >= sizeof(key.path))
		return NULL;
	memcpy(key.path, path, n + 1);
	return bsearch(&key, cg->prev.g, cg->prev.n, sizeof(key), cmp_grp);
}

/* dfd's group (its path rel, depth) and, while depth allows, its
 * children in name order. dfd is the caller's. */
static int
walk(struct cgroup *cg, int dfd, const char *rel, unsigned depth)
{
	char **names = NULL, child[CG_PATH_LEN + 256];
	size_t nn = 0, cap = 0, i;
	struct cg_grp *g;
	const struct cg_grp *old;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, r = 0;

	cg->seen++;
	if (cg->cur.n >= cg->max) {
		cg->cut++;
	} else if (fstat(dfd, &st) == 0) {
		if ((g = list_add(&cg->cur)) == NULL)
			return -ENOMEM;
		g->id = (uint64_t)st.st_ino;
		g->depth = depth;
		if (strlen(rel) >= sizeof(g->path))
			cg->path_cut++;
		snprintf(g->path, sizeof(g->path), "%s", rel);
		/* files it lacked last time stay unread while it is the
		 * same group */
		old = find_prev(cg, g->path);
		if (old && old->id == g->id)
			g->absent = old->absent;
		read_group(cg, dfd, g);
	}
	if (depth >= cg->depth)
		return 0;
	if ((fd = dup(dfd)) < 0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		char **nv;

		if (de->d_name[0] == '.' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (nn == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = realloc(names, cap * sizeof(*nv))) == NULL) {
				r = -ENOMEM;
				break;
			}
			names = nv;
		}
		if ((names[nn] = strdup(de->d_name)) == NULL) {
			r = -ENOMEM;
			break;
		}
		nn++;
	}
	closedir(d);
	if (nn > 1)
		qsort(names, nn, sizeof(*names), cmp_name);
	for (i = 0; i < nn && r == 0; i++) {
		snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "",
		    names[i]);
		fd = openat(dfd, names[i],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue; /* not a directory, or gone under the walk */
		r = walk(cg, fd, child, depth + 1);
		close(fd);
	}
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	return r;
}

/* ------------------------------------------------------------ the window */

/* b − a of a source whose counters all moved forward; false: one went
 * backwards (the source's deltas are dropped). */
static bool
forward(const uint64_t *a, const uint64_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] < a[i])
			return false;
	return true;
}

static void
fill_deltas(struct window_cgroup *p, struct window_cgroup_grp *w,
    const struct cg_read *a, const struct cg_read *b)
{
	uint32_t both = a->have & b->have;
	unsigned k;

	if (both & CG_HAVE_CPU) {
		const uint64_t x[] = { a->usage_us, a->user_us, a->system_us };
		const uint64_t y[] = { b->usage_us, b->user_us, b->system_us };

		if (forward(x, y, 3)) {
			w->d_usage_us = b->usage_us - a->usage_us;
			w->d_user_us = b->user_us - a->user_us;
			w->d_system_us = b->system_us - a->system_us;
			w->deltas = 1;
		} else {
			p->inv_deltas++;
		}
	}
	if (both & CG_HAVE_THROTTLE) {
		const uint64_t x[] = { a->nr_periods, a->nr_throttled,
			a->throttled_us };
		const uint64_t y[] = { b->nr_periods, b->nr_throttled,
			b->throttled_us };

		if (forward(x, y, 3)) {
			w->d_nr_periods = b->nr_periods - a->nr_periods;
			w->d_nr_throttled = b->nr_throttled - a->nr_throttled;
			w->d_throttled_us = b->throttled_us - a->throttled_us;
		} else {
			p->inv_deltas++;
		}
	}
	if (both & CG_HAVE_MEMSTAT) {
		const uint64_t x[] = { a->pgfault, a->pgmajfault };
		const uint64_t y[] = { b->pgfault, b->pgmajfault };

		if (forward(x, y, 2)) {
			w->d_pgfault = b->pgfault - a->pgfault;
			w->d_pgmajfault = b->pgmajfault - a->pgmajfault;
		} else {
			p->inv_deltas++;
		}
	}
	if (both & CG_HAVE_EVENTS) {
		if (forward(a->events, b->events, CG_EV__MAX))
			for (k = 0; k < CG_EV__MAX; k++)
				w->d_events[k] = b->events[k] - a->events[k];
		else
			p->inv_deltas++;
	}
	for (k = 0; k < CG_PSI__MAX; k++) {
		if ((both & CG_HAVE_PSI(k)) &&
		    forward(&a->psi_some_us[k], &b->psi_some_us[k], 1))
			w->d_psi_some_us[k] = b->psi_some_us[k] -
			    a->psi_some_us[k];
		else if (both & CG_HAVE_PSI(k))
			p->inv_deltas++;
		if ((both & CG_HAVE_PSI_FULL(k)) &&
		    forward(&a->psi_full_us[k], &b->psi_full_us[k], 1))
			w->d_psi_full_us[k] = b->psi_full_us[k] -
			    a->psi_full_us[k];
		else if (both & CG_HAVE_PSI_FULL(k))
			p->inv_deltas++;
	}
}

static void
fill_levels(struct window_cgroup_grp *w, const struct cg_read *b)
{
	unsigned k;

	if (b->have & CG_HAVE_MEM)
		gauge_add(&w->mem_current, (double)b->mem_current);
	if (b->have & CG_HAVE_MEMSTAT)
		for (k = 0; k < CG_MEM__MAX; k++)
			gauge_add(&w->mem[k], (double)b->mem[k]);
	for (k = 0; k < CG_PSI__MAX; k++)
		if (b->have & CG_HAVE_PSI(k))
			gauge_add(&w->psi_some_avg10[k], b->psi_some_avg10[k]);
}

static void
ids_of(struct window_cgroup_grp *w)
{
	const char *base = strrchr(w->path, '/');

	base = base ? base + 1 : w->path;
	w->uid = cg_name_id(base, "uid_");
	w->pid = cg_name_id(base, "pid_");
	/* pid_<pid> lives under its app's uid_<uid> */
	if (w->pid >= 0) {
		char parent[CG_PATH_LEN];
		const char *pb;

		snprintf(parent, sizeof(parent), "%.*s",
		    (int)(base > w->path ? base - 1 - w->path : 0), w->path);
		pb = strrchr(parent, '/');
		w->uid = cg_name_id(pb ? pb + 1 : parent, "uid_");
	}
}

static int
make_part(struct cgroup *cg, struct window_cgroup *p)
{
	size_t i, j;

	for (i = 0; i < cg->cur.n; i++) {
		const struct cg_grp *c = &cg->cur.g[i];
		const struct cg_grp *o = find_prev(cg, c->path);
		struct window_cgroup_grp *w = window_cgroup_add(p);

		if (w == NULL)
			return -ENOMEM;
		w->id = c->id;
		memcpy(w->path, c->path, sizeof(w->path));
		w->depth = c->depth;
		w->have = c->r.have;
		ids_of(w);
		fill_levels(w, &c->r);
		if (o == NULL) {
			w->born = cg->have_prev;
		} else if (o->id != c->id) {
			w->born = true;
			p->recreated++;
		} else {
			fill_deltas(p, w, &o->r, &c->r);
		}
	}
	/* groups of the last walk not found in this one (both sorted) */
	for (i = 0, j = 0; cg->have_prev && i < cg->prev.n; i++) {
		int c = 1;

		while (j < cg->cur.n &&
		    (c = strcmp(cg->cur.g[j].path, cg->prev.g[i].path)) < 0)
			j++;
		if (j >= cg->cur.n || c != 0)
			p->gone++;
	}
	return 0;
}

int
cgroup_window(struct cgroup *cg, struct window *w)
{
	struct window_cgroup *p;
	struct cg_list t;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), dt;
	int r = 0;

	if ((p = window_cgroup_new()) == NULL)
		return -ENOMEM;
	/* a root (or subtree) removed since: find it again */
	if (cg->rootfd >= 0) {
		struct stat st;

		if (fstat(cg->rootfd, &st) < 0 || st.st_nlink == 0) {
			close(cg->rootfd);
			cg->rootfd = -1;
			cg->have_prev = false;
		}
	}
	if (cg->state != CG_STATE_OFF && cg->rootfd < 0) {
		if ((r = find_root(cg)) < 0) {
			cg->state = CG_STATE_NO_ROOT;
			cg->err = r;
			r = 0;
		} else {
			cg->state = CG_STATE_OK;
			cg->err = 0;
		}
	}
	p->state = cg->state;
	p->err = cg->err;
	if (cg->state == CG_STATE_OK) {
		memcpy(p->root, cg->root, sizeof(p->root));
		cg->cur.n = 0;
		cg->seen = cg->cut = cg->read_errors = cg->path_cut = 0;
		r = walk(cg, cg->rootfd, "", 0);
		if (cg->cur.n > 1)
			qsort(cg->cur.g, cg->cur.n, sizeof(*cg->cur.g),
			    cmp_grp);
		if (r == 0)
			r = make_part(cg, p);
		p->walks = 1;
		p->groups_seen = cg->seen;
		p->groups_cut = cg->cut;
		p->read_errors = cg->read_errors;
		p->path_cut = cg->path_cut;
		dt = clock_ns(CLOCK_MONOTONIC) - t0;
		p->walk_ns_sum = p->walk_ns_max = (uint64_t)dt;
		/* this walk is the next one's base */
		t = cg->prev;
		cg->prev = cg->cur;
		cg->cur = t;
		cg->have_prev = r == 0;
	}
	if (r < 0) {
		window_cgroup_free(p);
		return r;
	}
	window_cgroup_free(window_cgroup(w));
	window_part_set(w, WPART_CGROUP, p);
	return 0;
}

unsigned
cgroup_state(const struct cgroup *cg, int *ret_err)
{
	if (ret_err)
		*ret_err = cg->err;
	return cg->state;
}

const char *
cgroup_root(const struct cgroup *cg)
{
	return cg->root;
}

int
cgroup_of_pid(const char *proc_root, int32_t pid, char *buf, size_t sz)
{
	struct vbuf b = { 0 };
	char path[64];
	const char *p, *end;
	int r, fd;

	snprintf(path, sizeof(path), "%d/cgroup", (int)pid);
	if ((fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	r = read_at(fd, path, &b);
	close(fd);
	if (r < 0) {
		vbuf_release(&b);
		return r;
	}
	r = -ENOENT;
	for (p = b.p, end = b.p + b.len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if (le - p >= 3 && memcmp(p, "0::", 3) == 0) {
			if ((size_t)(le - p - 3) >= sz) {
				r = -ENAMETOOLONG;
				break;
			}
			snprintf(buf, sz, "%.*s", (int)(le - p - 3), p + 3);
			r = 0;
			break;
		}
		p = le + 1;
	}
	vbuf_release(&b);
	return r;
}
