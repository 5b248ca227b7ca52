/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DMA-BUF pass: every process's <proc>/<pid>/fd links, the fdinfo of
 * those that name a DMA-BUF, and per buffer <sys>/kernel/dmabuf/buffers/
 * <inode>/{exporter_name,size} where the kernel has them (5.13+, config
 * DMABUF_SYSFS_STATS). The inode is fdinfo's ino: line (5.14+), else the
 * fd's stat. What the pass could not read is counted, never a zero.
 * Buffers only mapped (in /proc/<pid>/maps, no fd) are not seen: a
 * process that closed its fd after mmap() is not credited (doc/metrics.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "dmabuf/dmabuf.h"

struct dmabuf {
	char *proc_root, *sys_root;
	struct dmabuf_config cfg;
	int64_t last_mono_ns;
	bool ran;
	struct window_dmabuf *last;
};

int
dmabuf_new(const struct dmabuf_opts *o, struct dmabuf **ret)
{
	struct dmabuf *db;

	if ((db = calloc(1, sizeof(*db))) == NULL)
		return -ENOMEM;
	db->proc_root = strdup(o->proc_root ? o->proc_root : "/proc");
	db->sys_root = strdup(o->sys_root ? o->sys_root : "/sys");
	if (o->cfg)
		db->cfg = *o->cfg;
	else
		dmabuf_config_init(&db->cfg);
	if (db->proc_root == NULL || db->sys_root == NULL) {
		dmabuf_free(db);
		return -ENOMEM;
	}
	*ret = db;
	return 0;
}

struct dmabuf *
dmabuf_free(struct dmabuf *db)
{
	if (db == NULL)
		return NULL;
	window_dmabuf_free(db->last);
	free(db->proc_root);
	free(db->sys_root);
	free(db);
	return NULL;
}

const struct window_dmabuf *
dmabuf_last(const struct dmabuf *db)
{
	return db ? db->last : NULL;
}

struct pass {
	struct window_dmabuf c; /* the counters */
	struct dmabuf_hold *h;
	size_t n, cap;
	uint64_t budget;
	struct vbuf b;
};

static int
hold_add(struct pass *ps, const struct dmabuf_hold *h)
{
	struct dmabuf_hold *v;

	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? ps->cap * 2 : 64;

		if ((v = realloc(ps->h, nc * sizeof(*v))) == NULL)
			return -ENOMEM;
		ps->h = v;
		ps->cap = nc;
	}
	ps->h[ps->n++] = *h;
	return 0;
}

static void
read_comm(int root, int32_t pid, char *out, size_t sz, struct vbuf *b)
{
	char path[32];

	vbuf_reset(b);
	out[0] = '\0';
	snprintf(path, sizeof(path), "%d/comm", (int)pid);
	if (read_at(root, path, b) < 0 || b->len == 0)
		return;
	if (b->p[b->len - 1] == '\n')
		b->len--;
	/* name_clean's output is never longer than its input */
	name_clean(out, b->p, b->len < sz ? b->len : sz - 1);
}

/*
 * One process's fds; -ENOMEM alone stops the pass. One open per process
 * (<pid>/fd, relative to the /proc root): its fdinfo directory and comm
 * are opened only at its first DMA-BUF, so the processes that hold none —
 * nearly all — cost an open, the directory read and a readlink per fd.
 */
static int
read_proc(struct pass *ps, int root, int32_t pid)
{
	struct dmabuf_hold h = { .pid = pid };
	struct dmabuf_fdinfo fi;
	struct dirent *de;
	struct stat st;
	char link[64], path[32];
	int fd, infod = -1;
	bool infod_tried = false;
	DIR *d;
	ssize_t l;
	int r = 0;

	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	if ((fd = openat(root, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT || errno == ESRCH)
			ps->c.procs_gone++;
		else
			ps->c.procs_unreadable++;
		return 0;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		ps->c.procs_unreadable++;
		return 0;
	}
	ps->c.procs_scanned++;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		ps->c.fds_read++;
		if (ps->budget)
			ps->budget--;
		l = readlinkat(fd, de->d_name, link, sizeof(link) - 1);
		if (l < 0 || !dmabuf_link_is(link, (size_t)l))
			continue;
		ps->c.fds_dmabuf++;
		if (!infod_tried) {
			infod_tried = true;
			snprintf(path, sizeof(path), "%d/fdinfo", (int)pid);
			infod = openat(root, path,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		vbuf_reset(&ps->b);
		if (infod < 0 || read_at(infod, de->d_name, &ps->b) < 0 ||
		    dmabuf_parse_fdinfo(ps->b.p ? ps->b.p : "", ps->b.len,
			&fi) < 0) {
			ps->c.fdinfo_invalid++;
			continue;
		}
		h.ino = fi.ino;
		if (!(fi.have & DMABUF_FDI_INO)) {
			/* stat follows the link to the buffer's own inode */
			if (fstatat(fd, de->d_name, &st, 0) < 0) {
				ps->c.fdinfo_invalid++;
				continue;
			}
			h.ino = (uint64_t)st.st_ino;
		}
		h.size = fi.size;
		snprintf(h.exp, sizeof(h.exp), "%s", fi.exp_name);
		if (h.comm[0] == '\0')
			read_comm(root, pid, h.comm, sizeof(h.comm), &ps->b);
		if ((r = hold_add(ps, &h)) < 0)
			break;
	}
	if (infod >= 0)
		close(infod);
	closedir(d);
	return r;
}

static int
cmp_ino(const void *a, const void *b)
{
	const struct dmabuf_hold *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Each buffer's sysfs entry, once per inode: the exporter where fdinfo
 * had none, and whether the sizes agree. */
static void
read_sysfs(struct dmabuf *db, struct pass *ps)
{
	char path[PATH_MAX], name[DMABUF_NAME_LEN];
	uint64_t size;
	size_t i, j, k;
	int dir;

	snprintf(path, sizeof(path), "%s/kernel/dmabuf/buffers", db->sys_root);
	if ((dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (ps->n > 1)
		qsort(ps->h, ps->n, sizeof(*ps->h), cmp_ino);
	for (i = 0; i < ps->n; i = j) {
		for (j = i + 1; j < ps->n && ps->h[j].ino == ps->h[i].ino; j++)
			;
		snprintf(path, sizeof(path), "%llu/size",
		    (unsigned long long)ps->h[i].ino);
		vbuf_reset(&ps->b);
		if (read_at(dir, path, &ps->b) < 0)
			continue;
		ps->c.sysfs_found++;
		if (dmabuf_parse_u64(ps->b.p, ps->b.len, &size) == 0 &&
		    size != ps->h[i].size)
			ps->c.size_mismatch++;
		snprintf(path, sizeof(path), "%llu/exporter_name",
		    (unsigned long long)ps->h[i].ino);
		vbuf_reset(&ps->b);
		if (ps->h[i].exp[0] || read_at(dir, path, &ps->b) < 0 ||
		    dmabuf_parse_name(ps->b.p, ps->b.len, name, sizeof(name)) <
			0)
			continue;
		for (k = i; k < j; k++)
			snprintf(ps->h[k].exp, sizeof(ps->h[k].exp), "%s",
			    name);
	}
	close(dir);
}

static bool
is_pid(const char *s, int32_t *ret)
{
	uint64_t v;

	if (parse_uint(s, INT32_MAX, &v) < 0 || v == 0)
		return false;
	*ret = (int32_t)v;
	return true;
}

int
dmabuf_pass(struct dmabuf *db, int64_t wall_ns, struct window_dmabuf **ret)
{
	struct pass ps = { .budget = db->cfg.fd_budget };
	struct window_dmabuf *p = NULL;
	struct dirent *de;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), dt;
	int32_t pid;
	int root, r = 0;
	DIR *d;

	if ((root = open(db->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
	    0)
		return -errno;
	if ((d = fdopendir(root)) == NULL) {
		r = -errno;
		close(root);
		return r;
	}
	while ((de = readdir(d)) != NULL) {
		if (!is_pid(de->d_name, &pid))
			continue;
		if (db->cfg.fd_budget && ps.budget == 0) {
			ps.c.procs_skipped++;
			continue;
		}
		r = read_proc(&ps, root, pid);
		if (r < 0)
			break;
	}
	closedir(d);
	if (r == 0) {
		read_sysfs(db, &ps);
		r = dmabuf_tally(ps.h, ps.n,
		    db->cfg.procs_max ? db->cfg.procs_max :
					DMABUF_PROCS_DEFAULT,
		    &p);
	}
	free(ps.h);
	vbuf_release(&ps.b);
	if (r < 0)
		return r;
	dt = clock_ns(CLOCK_MONOTONIC) - t0;
	p->pass_wall_ns = wall_ns;
	p->procs_scanned = ps.c.procs_scanned;
	p->procs_skipped = ps.c.procs_skipped;
	p->procs_unreadable = ps.c.procs_unreadable;
	p->procs_gone = ps.c.procs_gone;
	p->fds_read = ps.c.fds_read;
	p->fds_dmabuf = ps.c.fds_dmabuf;
	p->fdinfo_invalid = ps.c.fdinfo_invalid;
	p->sysfs_found = ps.c.sysfs_found;
	p->size_mismatch = ps.c.size_mismatch;
	p->pass_ns_sum = p->pass_ns_max = dt > 0 ? (uint64_t)dt : 0;
	*ret = p;
	return 0;
}

int
dmabuf_window(struct dmabuf *db, struct window *w, int64_t mono_ns)
{
	struct window_dmabuf *p, *c;
	int r;

	if (db == NULL || !db->cfg.on)
		return 0;
	if (db->ran &&
	    mono_ns - db->last_mono_ns <
		(int64_t)db->cfg.interval_s * 1000000000LL)
		return 0;
	db->ran = true;
	db->last_mono_ns = mono_ns;
	if ((r = dmabuf_pass(db, w->wall_end_ns, &p)) < 0)
		return r;
	if ((c = window_dmabuf_dup(p)) == NULL) {
		window_dmabuf_free(p);
		return -ENOMEM;
	}
	window_dmabuf_free(db->last);
	db->last = c;
	window_dmabuf_free(window_dmabuf(w));
	window_part_set(w, WPART_DMABUF, p);
	return 0;
}
