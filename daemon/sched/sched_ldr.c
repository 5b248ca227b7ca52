/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched accounting from the pins Android's platform BPF loader leaves
 * for bpf/aosp/vitalsd.c (installed as /system/etc/bpf/vitalsd.o):
 *   <bpffs>/map_vitalsd_<map>
 *   <bpffs>/prog_vitalsd_tracepoint_sched_<event>
 * The loader loads and pins, it never attaches: that is done here, the
 * way GpuService attaches its gpuMem program (a perf event on the
 * tracepoint, the program set on it). The attachments live as long as
 * this process holds them. Every pin is opened read-only (on Android no
 * domain outside a fixed list may open one read-write): the programs keep
 * running totals and a drain is the difference between two snapshots.
 * doc/bpf.md ("Android: bpfloader objects").
 *
 * Library code: nothing here logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "proc/proc.h"
#include "sched/sched.h"

#ifdef HAVE_BPF
#include <linux/perf_event.h>

#include "sched_int.h"

/*
 * The maps the daemon reads, by the loader's names, and their shapes
 * (entries: 0, any; the loader's object decides how many). All opened
 * BPF_F_RDONLY: read-write is refused to every domain but a fixed list on
 * Android, and the pins are 0440.
 */
static const struct {
	unsigned idx; /* enum sched_map; SM__MAX: shape checked, not kept */
	const char *name;
	uint32_t type, key, value, entries;
} ldr_maps[] = {
	{ SM_TOT, "sched_tot", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, TOT__MAX },
	{ SM__MAX, "sched_cpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4,
	    sizeof(struct sched_cpu), 1 },
	{ SM__MAX, "sched_wake", BPF_MAP_TYPE_LRU_HASH, 4,
	    sizeof(struct sched_wake), 0 },
	{ SM_TID0, "sched_tid", BPF_MAP_TYPE_LRU_HASH,
	    sizeof(struct sched_tid_key), sizeof(struct sched_ltid), 0 },
	{ SM_PROC0, "sched_proc", BPF_MAP_TYPE_LRU_HASH,
	    sizeof(struct sched_proc_key), sizeof(struct sched_lproc), 0 },
	{ SM_UID0, "sched_uid", BPF_MAP_TYPE_LRU_HASH, 4,
	    sizeof(struct sched_uid), 0 },
};

/* Programs in the order of window_bpf.prog_* (vbpf_prog_name). */
static const char *const ldr_events[VITALS_BPF_PROGS] = {
	"sched_switch",
	"sched_wakeup",
	"sched_wakeup_new",
	"sched_process_exit",
};

static int
ldr_path(const struct bpf_sched *bs, const char *kind, const char *name,
    char *buf, size_t sz)
{
	int n = snprintf(buf, sz, "%s/%s_" VITALS_LDR_OBJ "_%s", bs->bpffs,
	    kind, name);

	return n < 0 || (size_t)n >= sz ? -ENAMETOOLONG : 0;
}

/* Every pin is opened read-only: maps and programs alike. */
static int
ldr_get(const struct bpf_sched *bs, const char *kind, const char *name)
{
	LIBBPF_OPTS(bpf_obj_get_opts, go, .file_flags = BPF_F_RDONLY);
	char path[PATH_MAX];
	int fd, r;

	if ((r = ldr_path(bs, kind, name, path, sizeof(path))) < 0)
		return r;
	fd = bpf_obj_get_opts(path, &go);
	return fd < 0 ? -errno : fd;
}

static int
read_id(const char *path)
{
	char buf[32];
	ssize_t len;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	return atoi(buf) > 0 ? atoi(buf) : -EIO;
}

/*
 * The tracepoints' ids. Read from vitalsd's own tracefs instance first
 * (instances/<name>/events/sched/<event>/id): on Android the global
 * events/ tree is debugfs_tracing, which only a fixed list of domains may
 * read, while the instance is vitalsd's own type. The instance is made
 * for the read if missing, and removed again then (ftrace makes it for
 * good later, when it is on). Then the global tree (hosts).
 */
static int
tp_ids(const struct bpf_sched *bs, int ret[VITALS_BPF_PROGS], char *why,
    size_t whysz)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
		"/sys/kernel/debug/tracing" };
	unsigned i, k, n = bs->tracefs ? 1 : 2;
	char inst[PATH_MAX], path[PATH_MAX + 128];
	int r = -ENOENT;

	for (k = 0; k < n; k++) {
		const char *root = bs->tracefs ? bs->tracefs : roots[k];
		bool made = false;

		if (bs->instance) {
			snprintf(inst, sizeof(inst), "%s/instances/%s", root,
			    bs->instance);
			if (access(inst, F_OK) < 0 && errno == ENOENT &&
			    mkdir(inst, 0750) == 0)
				made = true;
			for (i = 0; i < VITALS_BPF_PROGS; i++) {
				snprintf(path, sizeof(path),
				    "%s/events/sched/%s/id", inst,
				    ldr_events[i]);
				if ((ret[i] = read_id(path)) < 0)
					break;
			}
			if (made)
				(void)rmdir(inst);
			if (i == VITALS_BPF_PROGS)
				return 0;
		}
		for (i = 0; i < VITALS_BPF_PROGS; i++) {
			snprintf(path, sizeof(path), "%s/events/sched/%s/id",
			    root, ldr_events[i]);
			if ((ret[i] = read_id(path)) < 0) {
				r = ret[i];
				break;
			}
		}
		if (i == VITALS_BPF_PROGS)
			return 0;
	}
	snprintf(why, whysz, "tracepoint ids (events/sched/*/id): %s",
	    strerror(-r));
	return r;
}

/*
 * One program onto its tracepoint: a perf event of the tracepoint on CPU
 * 0 (a tracepoint's programs run for hits on every CPU), then a BPF link
 * on it, or on kernels without perf links (before 5.15) the program set
 * by ioctl. Where perf_event_paranoid > 1 this needs CAP_PERFMON (or
 * CAP_SYS_ADMIN); Android's init sets it to -1 on kernels with the
 * perf_event SELinux hooks, and the policy decides (perf_event { open cpu
 * kernel write }).
 */
static int
attach(struct bpf_sched *bs, unsigned i, int id, uint64_t epoch, char *why,
    size_t whysz)
{
	/* the cookie: when this attachment began (sched_switch refuses a
	 * CPU stamp older than that: from before a restart) */
	LIBBPF_OPTS(bpf_link_create_opts, lo, .perf_event.bpf_cookie = epoch);
	struct perf_event_attr pa;
	int pfd, lfd, r;

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = (uint64_t)id;
	/* a counting event: the program runs on every hit all the same, and
	 * without raw samples the kernel asks no "tracepoint" permission */
	pfd = (int)syscall(SYS_perf_event_open, &pa, -1, 0, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		r = -errno;
		snprintf(why, whysz, "perf_event_open sched/%s: %s",
		    ldr_events[i], strerror(errno));
		return r;
	}
	bs->perf_fd[i] = pfd;
	lfd = bpf_link_create(bs->prog_fd[i], pfd, BPF_PERF_EVENT, &lo);
	if (lfd >= 0) {
		bs->link_fd[i] = lfd;
		return 0;
	}
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, bs->prog_fd[i]) < 0 ||
	    ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		r = -errno;
		snprintf(why, whysz, "attach sched/%s: %s", ldr_events[i],
		    strerror(errno));
		return r;
	}
	return 0;
}

/*
 * Open the loader's pins under bs->bpffs and attach. -ENOENT (why says
 * which) when the object's pins are not there; other errors when they
 * are but cannot be used (another shape: -EPROTOTYPE).
 */
int
bpf_ldr_open(struct bpf_sched *bs, char *why, size_t whysz)
{
	int fd, other_fd = -1, r, ids[VITALS_BPF_PROGS];
	uint64_t epoch;
	unsigned i;

	for (i = 0; i < sizeof(ldr_maps) / sizeof(ldr_maps[0]); i++) {
		struct bpf_map_info info;
		uint32_t len = sizeof(info);

		if ((fd = ldr_get(bs, "map", ldr_maps[i].name)) < 0) {
			snprintf(why, whysz, "map_" VITALS_LDR_OBJ "_%s: %s",
			    ldr_maps[i].name, strerror(-fd));
			r = fd;
			goto fail;
		}
		if (ldr_maps[i].idx == SM__MAX)
			other_fd = fd;
		else
			bs->map_fd[ldr_maps[i].idx] = fd;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0) {
			r = -errno;
			snprintf(why, whysz, "map %s: %s", ldr_maps[i].name,
			    strerror(errno));
			goto fail;
		}
		if (info.type != ldr_maps[i].type ||
		    info.key_size != ldr_maps[i].key ||
		    info.value_size != ldr_maps[i].value ||
		    (ldr_maps[i].entries ?
			    info.max_entries != ldr_maps[i].entries :
			    info.max_entries == 0) ||
		    info.map_flags != 0) {
			snprintf(why, whysz,
			    "map %s is type %u, key %u, "
			    "value %u, entries %u, flags %#x; this build reads "
			    "%u, %u, %u, %u, 0",
			    ldr_maps[i].name, info.type, info.key_size,
			    info.value_size, info.max_entries, info.map_flags,
			    ldr_maps[i].type, ldr_maps[i].key,
			    ldr_maps[i].value, ldr_maps[i].entries);
			r = -EPROTOTYPE;
			goto fail;
		}
		if (other_fd >= 0)
			close(other_fd);
		other_fd = -1;
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		char sec[64];

		snprintf(sec, sizeof(sec), "tracepoint_sched_%s",
		    ldr_events[i]);
		/* the loader pins programs 0440; read-only is enough to
		 * attach them */
		if ((bs->prog_fd[i] = ldr_get(bs, "prog", sec)) < 0) {
			r = bs->prog_fd[i];
			snprintf(why, whysz, "prog_" VITALS_LDR_OBJ "_%s: %s",
			    sec, strerror(-r));
			goto fail;
		}
	}
	bs->ldr = true;
	if ((r = tp_ids(bs, ids, why, whysz)) < 0)
		goto fail;
	/* before the first attach: every stamp the programs make is later */
	epoch = (uint64_t)clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if ((r = attach(bs, i, ids[i], epoch, why, whysz)) < 0)
			goto fail;
	return 0;
fail:
	if (other_fd >= 0)
		close(other_fd);
	bpf_ldr_close(bs);
	bs->ldr = false;
	for (i = 0; i < SM__MAX; i++) {
		if (bs->map_fd[i] >= 0)
			close(bs->map_fd[i]);
		bs->map_fd[i] = -1;
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		if (bs->prog_fd[i] >= 0)
			close(bs->prog_fd[i]);
		bs->prog_fd[i] = -1;
	}
	return r;
}

/* Detach: the programs stay loaded (pinned), nothing runs them. */
void
bpf_ldr_close(struct bpf_sched *bs)
{
	unsigned i;

	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		if (bs->link_fd[i] >= 0)
			close(bs->link_fd[i]);
		if (bs->perf_fd[i] >= 0)
			close(bs->perf_fd[i]);
		bs->link_fd[i] = bs->perf_fd[i] = -1;
	}
}

/* /proc/<tgid>/stat starttime in ns; 0 when it cannot be read. */
static uint64_t
leader_start(const struct bpf_sched *bs, int32_t tgid, uint64_t ns_per_tick)
{
	char path[PATH_MAX], buf[1024];
	struct pid_stat ps;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat",
	    bs->proc_root ? bs->proc_root : "/proc", (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || pidstat_parse(buf, (size_t)n, &ps) < 0)
		return 0;
	return ps.starttime * ns_per_tick;
}

/*
 * The BPF-less program cannot read a task's start time: the drained
 * process keys get it from /proc/<tgid>/stat, once per process per
 * drain (a small open-addressing table). A process already gone keeps 0:
 * its starttime is unknown.
 */
static void
fill_starts(const struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t ns_per_tick = hz > 0 ? (uint64_t)NSEC_PER_SEC / (uint64_t)hz :
					10000000;
	size_t cap = 64, i, h;
	struct slot {
		int32_t tgid; /* 0: empty */
		uint64_t ns;
	} * t;

	while (cap < 2 * (b->ntids + b->nprocs))
		cap *= 2;
	if ((t = calloc(cap, sizeof(*t))) == NULL)
		return;
#define LOOKUP(pid, out)                                                \
	do {                                                            \
		for (h = ((size_t)(pid)*2654435761u) & (cap - 1);       \
		     t[h].tgid != 0 && t[h].tgid != (pid);              \
		     h = (h + 1) & (cap - 1))                           \
			;                                               \
		if (t[h].tgid == 0) {                                   \
			t[h].tgid = (pid);                              \
			t[h].ns = leader_start(bs, (pid), ns_per_tick); \
		}                                                       \
		(out) = t[h].ns;                                        \
	} while (0)
	for (i = 0; i < b->ntids; i++)
		if (b->tids[i].leader_ns == 0 && b->tids[i].tgid > 0)
			LOOKUP(b->tids[i].tgid, b->tids[i].leader_ns);
	for (i = 0; i < b->nprocs; i++)
		if (b->procs[i].start_ns == 0 && b->procs[i].tgid > 0)
			LOOKUP(b->procs[i].tgid, b->procs[i].start_ns);
#undef LOOKUP
	free(t);
}

/* ------------------------------------------------------------ the drain */

/* One map's snapshot: records sorted by key, no key twice. */
struct ldr_tid {
	struct sched_tid_key k;
	struct sched_ltid v;
};

struct ldr_proc {
	struct sched_proc_key k;
	struct sched_lproc v;
};

struct ldr_uid {
	uint32_t k, pad;
	struct sched_uid v;
};

struct ldr_snap {
	bool valid;
	struct ldr_tid *tid;
	struct ldr_proc *proc;
	struct ldr_uid *uid;
	size_t ntid, nproc, nuid, tid_cap, proc_cap, uid_cap;
	uint64_t oncpu, lost; /* the on-CPU and lost totals, read after */
};

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int
cmp_tid(const void *a, const void *b)
{
	const struct sched_tid_key *x = a, *y = b;

	if (x->tid != y->tid)
		return CMP(x->tid, y->tid);
	if (x->uid != y->uid)
		return CMP(x->uid, y->uid);
	return CMP(x->start_ns, y->start_ns);
}

static int
cmp_proc(const void *a, const void *b)
{
	const struct sched_proc_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return CMP(x->tgid, y->tgid);
	return CMP(x->start_ns, y->start_ns);
}

static int
cmp_uid(const void *a, const void *b)
{
	return CMP(*(const uint32_t *)a, *(const uint32_t *)b);
}

/*
 * Every (key, value) of fd into bs->kbuf/vbuf, *ret_n of them: batch
 * lookups (no delete: nothing is ever removed from userspace), or on
 * kernels without them one key at a time. A key iterated while the
 * program evicts may come twice (get_next_key restarts at an unknown
 * key): the caller keeps one.
 */
static int
read_all(struct bpf_sched *bs, int fd, size_t ksz, size_t vsz,
    uint32_t max_entries, size_t *ret_n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint64_t in_tok = 0, out_tok = 0;
	size_t n = 0, chunk = 256, steps = 0;
	char prev[64]; /* the largest key is 16 bytes */
	bool first = true;
	uint32_t count;
	int r, err;

	while (!bs->no_batch) {
		if ((r = bpf_sched_grow(&bs->kbuf, &bs->kcap,
			 (n + chunk) * ksz)) < 0 ||
		    (r = bpf_sched_grow(&bs->vbuf, &bs->vcap,
			 (n + chunk) * vsz)) < 0)
			return r;
		count = (uint32_t)chunk;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in_tok, &out_tok,
		    (char *)bs->kbuf + n * ksz, (char *)bs->vbuf + n * vsz,
		    &count, &opts);
		err = err < 0 ? -errno : 0;
		n += count;
		if (err == -ENOENT) {
			*ret_n = n;
			return 0;
		}
		if (err == -ENOSPC && count == 0) {
			chunk *= 2; /* a bucket holds more than a chunk */
			continue;
		}
		if ((err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP) &&
		    first) {
			bs->no_batch = true;
			break;
		}
		if (err < 0)
			return err;
		in_tok = out_tok;
		first = false;
	}
	n = 0;
	for (;;) {
		char *key;

		if ((r = bpf_sched_grow(&bs->kbuf, &bs->kcap, (n + 1) * ksz)) <
			0 ||
		    (r = bpf_sched_grow(&bs->vbuf, &bs->vcap, (n + 1) * vsz)) <
			0)
			return r;
		key = (char *)bs->kbuf + n * ksz;
		if (bpf_map_get_next_key(fd, steps ? prev : NULL, key) < 0) {
			if (errno != ENOENT)
				return -errno;
			break;
		}
		/* a restart comes at most a few times over: bounded */
		if (++steps > 4 * (size_t)max_entries + 64)
			break;
		memcpy(prev, key, ksz);
		if (bpf_map_lookup_elem(fd, key, (char *)bs->vbuf + n * vsz) ==
		    0)
			n++;
		else if (errno != ENOENT) /* ENOENT: gone since */
			return -errno;
	}
	*ret_n = n;
	return 0;
}

static uint32_t
max_entries(int fd)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return 1u << 20;
	return info.max_entries;
}

/* A map into one sorted array of records (key, value), duplicates out. */
static int
read_sorted(struct bpf_sched *bs, int fd, size_t ksz, size_t vsz, size_t koff,
    size_t voff, size_t rsz, void **arr, size_t *cap, size_t *ret_n,
    int (*cmp)(const void *, const void *))
{
	size_t n = 0, i, m = 0;
	char *a;
	int r;

	if ((r = read_all(bs, fd, ksz, vsz, max_entries(fd), &n)) < 0)
		return r;
	if ((r = bpf_sched_grow(arr, cap, (n + 1) * rsz)) < 0)
		return r;
	a = *arr;
	for (i = 0; i < n; i++) {
		memset(a + i * rsz, 0, rsz);
		memcpy(a + i * rsz + koff, (char *)bs->kbuf + i * ksz, ksz);
		memcpy(a + i * rsz + voff, (char *)bs->vbuf + i * vsz, vsz);
	}
	qsort(a, n, rsz, cmp);
	for (i = 0; i < n; i++) {
		if (m > 0 && cmp(a + (m - 1) * rsz, a + i * rsz) == 0)
			m--; /* the later read wins */
		if (m != i)
			memmove(a + m * rsz, a + i * rsz, rsz);
		m++;
	}
	*ret_n = m;
	return 0;
}

/* The maps first, then the totals: whatever the totals count that the
 * entries did not hold yet shows as unattributed now and is attributed
 * (and taken back from unattributed) by the next drain. */
static int
snap_read(struct bpf_sched *bs, struct ldr_snap *s, uint64_t tot[TOT__MAX])
{
	size_t cap;
	int r;

	s->valid = false;
	cap = s->tid_cap * sizeof(*s->tid);
	r = read_sorted(bs, bs->map_fd[SM_TID0], sizeof(struct sched_tid_key),
	    sizeof(struct sched_ltid), offsetof(struct ldr_tid, k),
	    offsetof(struct ldr_tid, v), sizeof(struct ldr_tid),
	    (void **)&s->tid, &cap, &s->ntid, cmp_tid);
	s->tid_cap = cap / sizeof(*s->tid);
	if (r < 0)
		return r;
	cap = s->proc_cap * sizeof(*s->proc);
	r = read_sorted(bs, bs->map_fd[SM_PROC0], sizeof(struct sched_proc_key),
	    sizeof(struct sched_lproc), offsetof(struct ldr_proc, k),
	    offsetof(struct ldr_proc, v), sizeof(struct ldr_proc),
	    (void **)&s->proc, &cap, &s->nproc, cmp_proc);
	s->proc_cap = cap / sizeof(*s->proc);
	if (r < 0)
		return r;
	cap = s->uid_cap * sizeof(*s->uid);
	r = read_sorted(bs, bs->map_fd[SM_UID0], sizeof(uint32_t),
	    sizeof(struct sched_uid), offsetof(struct ldr_uid, k),
	    offsetof(struct ldr_uid, v), sizeof(struct ldr_uid),
	    (void **)&s->uid, &cap, &s->nuid, cmp_uid);
	s->uid_cap = cap / sizeof(*s->uid);
	if (r < 0)
		return r;
	if ((r = bpf_sched_totals(bs, tot)) < 0)
		return r;
	s->oncpu = tot[TOT_ONCPU_S0] + tot[TOT_ONCPU_S1];
	s->lost = tot[TOT_LOST_S0] + tot[TOT_LOST_S1];
	s->valid = true;
	return 0;
}

#define PUSH(b, arr, n, cap)                                         \
	((b)->n == (b)->cap ? bpf_sched_grow_arr((void **)&(b)->arr, \
				  &(b)->cap, sizeof(*(b)->arr)) :    \
			      0)

/* A dead thread's last growth: its uid's and its process's exited time. */
static int
put_exited(struct bpf_sched_batch *b, uint32_t uid, uint32_t tgid, uint64_t ns)
{
	struct vbpf_uid *u;
	struct vbpf_proc *p;
	int r;

	if ((r = PUSH(b, uids, nuids, uids_cap)) < 0 ||
	    (r = PUSH(b, procs, nprocs, procs_cap)) < 0)
		return r;
	u = &b->uids[b->nuids++];
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	u->exited_ns = ns;
	p = &b->procs[b->nprocs++];
	memset(p, 0, sizeof(*p));
	p->tgid = (int32_t)tgid;
	p->exited_ns = ns;
	return 0;
}

/*
 * Threads. Per key in both snapshots: the growth; a key made anew since
 * (another made_ns, another process, a counter lower than before) has its
 * whole value as the growth (recreated; the old entry's growth since the
 * last read is lost, and so unattributed). A key gone: retired if it was
 * dead (its last figure was read), evicted otherwise.
 */
static int
diff_tid(const struct ldr_snap *o, const struct ldr_snap *n,
    struct bpf_sched_batch *b, uint64_t *attributed)
{
	size_t i = 0, j = 0;
	int r;

	while (i < o->ntid || j < n->ntid) {
		int d = i == o->ntid ? 1 :
		    j == n->ntid     ? -1 :
				       cmp_tid(&o->tid[i].k, &n->tid[j].k);
		const struct ldr_tid *old, *cur;
		uint64_t ns;

		if (d < 0) {
			if (o->tid[i].v.flags & SCHED_LDR_DEAD)
				b->retired++;
			else
				b->evicted++;
			i++;
			continue;
		}
		cur = &n->tid[j++];
		old = d == 0 ? &o->tid[i++] : NULL;
		if (old && old->v.made_ns == cur->v.made_ns &&
		    old->v.tgid == cur->v.tgid &&
		    cur->v.oncpu_ns >= old->v.oncpu_ns) {
			ns = cur->v.oncpu_ns - old->v.oncpu_ns;
		} else {
			if (old) {
				b->recreated++;
				if (old->v.flags & SCHED_LDR_DEAD)
					b->retired++;
				else
					b->evicted++;
			}
			ns = cur->v.oncpu_ns;
		}
		if (ns == 0)
			continue;
		*attributed += ns;
		if (cur->v.flags & SCHED_LDR_DEAD) {
			if ((r = put_exited(b, cur->k.uid, cur->v.tgid, ns)) <
			    0)
				return r;
		} else {
			struct vbpf_tid *t;

			if ((r = PUSH(b, tids, ntids, tids_cap)) < 0)
				return r;
			t = &b->tids[b->ntids++];
			memset(t, 0, sizeof(*t));
			t->tid = (int32_t)cur->k.tid;
			t->uid = cur->k.uid;
			t->tgid = (int32_t)cur->v.tgid;
			t->oncpu_ns = ns;
		}
	}
	return 0;
}

/* Processes: run-queue waits, the same way. */
static int
diff_proc(const struct ldr_snap *o, const struct ldr_snap *n,
    struct bpf_sched_batch *b)
{
	size_t i = 0, j = 0;
	unsigned k;
	int r;

	while (i < o->nproc || j < n->nproc) {
		int d = i == o->nproc ? 1 :
		    j == n->nproc     ? -1 :
					cmp_proc(&o->proc[i].k, &n->proc[j].k);
		const struct ldr_proc *old, *cur;
		struct vbpf_proc *p;
		bool fresh, died;

		if (d < 0) {
			if (o->proc[i].v.flags & SCHED_LDR_DEAD)
				b->retired++;
			else
				b->evicted++;
			i++;
			continue;
		}
		cur = &n->proc[j++];
		old = d == 0 ? &o->proc[i++] : NULL;
		fresh = old == NULL || old->v.made_ns != cur->v.made_ns ||
		    cur->v.rq_count < old->v.rq_count ||
		    cur->v.rq_ns < old->v.rq_ns;
		for (k = 0; !fresh && k < VITALS_SCHED_RQ_SLOTS; k++)
			fresh = cur->v.rq_hist[k] < old->v.rq_hist[k];
		if (fresh && old) {
			b->recreated++;
			if (old->v.flags & SCHED_LDR_DEAD)
				b->retired++;
			else
				b->evicted++;
		}
		/* its leader's exit, seen first in this snapshot */
		died = (cur->v.flags & SCHED_LDR_DEAD) &&
		    (fresh || !(old->v.flags & SCHED_LDR_DEAD));
		if (!fresh && !died && cur->v.rq_count == old->v.rq_count)
			continue;
		if ((r = PUSH(b, procs, nprocs, procs_cap)) < 0)
			return r;
		p = &b->procs[b->nprocs++];
		memset(p, 0, sizeof(*p));
		p->tgid = (int32_t)cur->k.tgid;
		p->flags = died ? WBPF_PROC_EXITED : 0;
		p->rq_ns = cur->v.rq_ns - (fresh ? 0 : old->v.rq_ns);
		p->rq_count = cur->v.rq_count - (fresh ? 0 : old->v.rq_count);
		for (k = 0; k < VITALS_SCHED_RQ_SLOTS; k++)
			p->rq_hist[k] = cur->v.rq_hist[k] -
			    (fresh ? 0 : old->v.rq_hist[k]);
	}
	return 0;
}

/* Uids: exited threads (counted at exit) and overflow. */
static int
diff_uid(const struct ldr_snap *o, const struct ldr_snap *n,
    struct bpf_sched_batch *b, uint64_t *attributed)
{
	size_t i = 0, j = 0;
	int r;

	while (i < o->nuid || j < n->nuid) {
		int d = i == o->nuid ? 1 :
		    j == n->nuid     ? -1 :
				       cmp_uid(&o->uid[i].k, &n->uid[j].k);
		const struct ldr_uid *old, *cur;
		struct vbpf_uid *u;
		bool fresh;

		if (d < 0) {
			b->evicted++; /* a uid's entry never dies */
			i++;
			continue;
		}
		cur = &n->uid[j++];
		old = d == 0 ? &o->uid[i++] : NULL;
		fresh = old == NULL ||
		    cur->v.exited_tasks < old->v.exited_tasks ||
		    cur->v.overflow_ns < old->v.overflow_ns;
		if (fresh && old) {
			b->recreated++;
			b->evicted++;
		}
		if (!fresh && cur->v.exited_tasks == old->v.exited_tasks &&
		    cur->v.overflow_ns == old->v.overflow_ns)
			continue;
		if ((r = PUSH(b, uids, nuids, uids_cap)) < 0)
			return r;
		u = &b->uids[b->nuids++];
		memset(u, 0, sizeof(*u));
		u->uid = cur->k;
		u->exited_tasks = cur->v.exited_tasks -
		    (fresh ? 0 : old->v.exited_tasks);
		u->overflow_ns = cur->v.overflow_ns -
		    (fresh ? 0 : old->v.overflow_ns);
		*attributed += u->overflow_ns;
	}
	return 0;
}

static void
snap_free(struct ldr_snap *s)
{
	if (s == NULL)
		return;
	free(s->tid);
	free(s->proc);
	free(s->uid);
	free(s);
}

/* The two snapshots' tables: what the read-only drain holds between drains. */
size_t
bpf_ldr_bytes(const struct bpf_sched *bs)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < 2; i++) {
		const struct ldr_snap *s = bs->lsnap[i];

		if (s == NULL)
			continue;
		n += sizeof(*s) + s->tid_cap * sizeof(*s->tid) +
		    s->proc_cap * sizeof(*s->proc) +
		    s->uid_cap * sizeof(*s->uid);
	}
	return n;
}

void
bpf_ldr_release(struct bpf_sched *bs)
{
	snap_free(bs->lsnap[0]);
	snap_free(bs->lsnap[1]);
	bs->lsnap[0] = bs->lsnap[1] = NULL;
}

/*
 * A read-only drain: a snapshot of every map, its difference from the
 * last one as the batch. The first call (at open) only takes the
 * baseline. A failed read leaves the last snapshot as the baseline: the
 * next drain's difference covers both windows, nothing is lost.
 *
 * Exact by construction, and checkable: Δ on-CPU total = Σ attributed
 * growth (threads, exited threads, overflow, lost) + unattributed, where
 * unattributed is the growth of entries evicted before they were read,
 * plus what the totals counted between the read of the entries and the
 * read of the totals (attributed, and taken back, by the next drain).
 */
int
bpf_ldr_drain(struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	struct ldr_snap *o, *n;
	uint64_t attributed = 0;
	int r;

	b->ntids = b->nprocs = b->nuids = 0;
	b->incomplete = false;
	b->diff = true;
	b->gen = 0;
	b->side = 0;
	b->unattributed_ns = 0;
	b->evicted = b->recreated = b->retired = 0;
	if (bs->lsnap[0] == NULL &&
	    (bs->lsnap[0] = calloc(1, sizeof(*bs->lsnap[0]))) == NULL)
		return -ENOMEM;
	if (bs->lsnap[1] == NULL &&
	    (bs->lsnap[1] = calloc(1, sizeof(*bs->lsnap[1]))) == NULL)
		return -ENOMEM;
	o = bs->lsnap[0];
	n = bs->lsnap[1];
	if ((r = snap_read(bs, n, b->tot)) < 0)
		return r;
	if (o->valid) {
		if ((r = diff_tid(o, n, b, &attributed)) < 0 ||
		    (r = diff_proc(o, n, b)) < 0 ||
		    (r = diff_uid(o, n, b, &attributed)) < 0) {
			/* keep the old baseline: the next drain redoes it */
			b->ntids = b->nprocs = b->nuids = 0;
			return r;
		}
		attributed += n->lost >= o->lost ? n->lost - o->lost : 0;
		b->unattributed_ns = (int64_t)(n->oncpu - o->oncpu) -
		    (int64_t)attributed;
	}
	bs->lsnap[0] = n;
	bs->lsnap[1] = o;
	o->valid = false;
	fill_starts(bs, b);
	b->drain_ns = (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
	return 0;
}

#endif /* HAVE_BPF */
