/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched accounting from the pins Android's platform BPF loader leaves
 * for bpf/aosp/vitalsd.c (installed as /system/etc/bpf/vitalsd.o):
 *   <bpffs>/map_vitalsd_<map>
 *   <bpffs>/prog_vitalsd_tracepoint_sched_<event>
 * The loader loads and pins, it never attaches: that is done here, the
 * way GpuService attaches its gpuMem program (a perf event on the
 * tracepoint, the program set on it). The attachments live as long as
 * this process holds them. doc/bpf.md ("Android: bpfloader objects").
 *
 * Library code: nothing here logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"
#include "proc/proc.h"
#include "sched/sched.h"

#ifdef HAVE_BPF
#include <linux/membarrier.h>
#include <linux/perf_event.h>

#include "sched_int.h"

/* The maps the daemon uses, by the loader's names, and their shapes. */
static const struct {
	unsigned idx; /* enum sched_map; SM__MAX: sched_cpu */
	const char *name;
	uint32_t type, key, value, entries;
} ldr_maps[] = {
	{ SM_CTL, "sched_ctl", BPF_MAP_TYPE_ARRAY, 4,
	    sizeof(struct sched_ctl), 1 },
	{ SM_TOT, "sched_tot", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, TOT__MAX },
	{ SM_TID0, "sched_tid0", BPF_MAP_TYPE_HASH,
	    sizeof(struct sched_tid_key), sizeof(struct sched_tid),
	    VITALS_SCHED_TIDS },
	{ SM_TID1, "sched_tid1", BPF_MAP_TYPE_HASH,
	    sizeof(struct sched_tid_key), sizeof(struct sched_tid),
	    VITALS_SCHED_TIDS },
	{ SM_PROC0, "sched_proc0", BPF_MAP_TYPE_HASH,
	    sizeof(struct sched_proc_key), sizeof(struct sched_proc),
	    VITALS_SCHED_PROCS },
	{ SM_PROC1, "sched_proc1", BPF_MAP_TYPE_HASH,
	    sizeof(struct sched_proc_key), sizeof(struct sched_proc),
	    VITALS_SCHED_PROCS },
	{ SM_UID0, "sched_uid0", BPF_MAP_TYPE_HASH, 4,
	    sizeof(struct sched_uid), VITALS_SCHED_UIDS },
	{ SM_UID1, "sched_uid1", BPF_MAP_TYPE_HASH, 4,
	    sizeof(struct sched_uid), VITALS_SCHED_UIDS },
	{ SM__MAX, "sched_cpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4,
	    sizeof(struct sched_cpu), 1 },
};

/* Programs in the order of window_bpf.prog_* (vbpf_prog_name). */
static const char *const ldr_events[VITALS_BPF_PROGS] = {
	"sched_switch", "sched_wakeup", "sched_wakeup_new",
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

static int
ldr_get(const struct bpf_sched *bs, const char *kind, const char *name,
    bool rdonly)
{
	LIBBPF_OPTS(bpf_obj_get_opts, go,
	    .file_flags = rdonly ? BPF_F_RDONLY : 0);
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
attach(struct bpf_sched *bs, unsigned i, int id, char *why, size_t whysz)
{
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
	lfd = bpf_link_create(bs->prog_fd[i], pfd, BPF_PERF_EVENT, NULL);
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

/* Every CPU's last-switch stamp to 0: the first switch seen on each CPU
 * after attaching measures nothing (NO_SLICE), rather than a gap. */
static int
reset_cpus(int fd, unsigned ncpu)
{
	struct sched_cpu *v = calloc(ncpu, sizeof(*v));
	uint32_t zero = 0;
	int r = 0;

	if (v == NULL)
		return -ENOMEM;
	if (bpf_map_update_elem(fd, &zero, v, BPF_ANY) < 0)
		r = -errno;
	free(v);
	return r;
}

/*
 * Open the loader's pins under bs->bpffs and attach. -ENOENT (why says
 * which) when the object's pins are not there; other errors when they
 * are but cannot be used (another shape: -EPROTOTYPE).
 */
int
bpf_ldr_open(struct bpf_sched *bs, char *why, size_t whysz)
{
	int fd, cpu_fd = -1, r, ids[VITALS_BPF_PROGS];
	unsigned i;

	for (i = 0; i < sizeof(ldr_maps) / sizeof(ldr_maps[0]); i++) {
		struct bpf_map_info info;
		uint32_t len = sizeof(info);

		if ((fd = ldr_get(bs, "map", ldr_maps[i].name, false)) < 0) {
			snprintf(why, whysz, "map_" VITALS_LDR_OBJ "_%s: %s",
			    ldr_maps[i].name, strerror(-fd));
			r = fd;
			goto fail;
		}
		if (ldr_maps[i].idx == SM__MAX)
			cpu_fd = fd;
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
		    info.max_entries != ldr_maps[i].entries ||
		    info.map_flags != 0) {
			snprintf(why, whysz, "map %s is type %u, key %u, "
			    "value %u, entries %u, flags %#x; this build reads "
			    "%u, %u, %u, %u, 0", ldr_maps[i].name, info.type,
			    info.key_size, info.value_size, info.max_entries,
			    info.map_flags, ldr_maps[i].type, ldr_maps[i].key,
			    ldr_maps[i].value, ldr_maps[i].entries);
			r = -EPROTOTYPE;
			goto fail;
		}
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		char sec[64];

		snprintf(sec, sizeof(sec), "tracepoint_sched_%s",
		    ldr_events[i]);
		/* the loader pins programs 0440: read-only is all we get */
		if ((bs->prog_fd[i] = ldr_get(bs, "prog", sec, true)) < 0) {
			r = bs->prog_fd[i];
			snprintf(why, whysz, "prog_" VITALS_LDR_OBJ "_%s: %s",
			    sec, strerror(-r));
			goto fail;
		}
	}
	if ((r = reset_cpus(cpu_fd, bs->ncpu)) < 0) {
		snprintf(why, whysz, "map sched_cpu: %s", strerror(-r));
		goto fail;
	}
	close(cpu_fd);
	cpu_fd = -1;
	bs->ldr = true;
	if ((r = tp_ids(bs, ids, why, whysz)) < 0)
		goto fail;
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if ((r = attach(bs, i, ids[i], why, whysz)) < 0)
			goto fail;
	return 0;
fail:
	if (cpu_fd >= 0)
		close(cpu_fd);
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

/*
 * The drain's wait without a map-in-map (the loader cannot make one):
 * membarrier(MEMBARRIER_CMD_GLOBAL) returns after synchronize_rcu(), and
 * tracepoint programs run inside rcu_read_lock() (trace_call_bpf). Not
 * available under nohz_full (-EINVAL): the drain then fails, counted.
 */
int
bpf_ldr_wait(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
		return -errno;
	return 0;
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
void
bpf_ldr_fill_starts(const struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t ns_per_tick = hz > 0 ? (uint64_t)NSEC_PER_SEC / (uint64_t)hz :
	    10000000;
	size_t cap = 64, i, h;
	struct slot {
		int32_t tgid; /* 0: empty */
		uint64_t ns;
	} *t;

	while (cap < 2 * (b->ntids + b->nprocs))
		cap *= 2;
	if ((t = calloc(cap, sizeof(*t))) == NULL)
		return;
#define LOOKUP(pid, out)                                                   \
	do {                                                               \
		for (h = ((size_t)(pid) * 2654435761u) & (cap - 1);        \
		    t[h].tgid != 0 && t[h].tgid != (pid);                  \
		    h = (h + 1) & (cap - 1))                               \
			;                                                  \
		if (t[h].tgid == 0) {                                      \
			t[h].tgid = (pid);                                 \
			t[h].ns = leader_start(bs, (pid), ns_per_tick);    \
		}                                                          \
		(out) = t[h].ns;                                           \
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

#endif /* HAVE_BPF */
