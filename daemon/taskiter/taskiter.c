/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF task iterator as a source for the process scan: load the iter/task
 * program once, attach it once (a link), and per scan create an iterator
 * instance, read its whole stream of fixed-width records
 * (bpf/taskiter/taskiter.bpf.h) into a buffer that lives through the read
 * and its parse, and group them per thread group.
 *
 * The pure half (record parsing and grouping, in taskiter_parse.c; the
 * kernel's cputime_adjust() and nsec_to_clock_t()) is built with or without
 * BPF so it can be tested on its own; the loader half is stubbed to
 * -EOPNOTSUPP without BPF.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/bpf_common.h"
#include "core/util.h"
#include "taskiter/taskiter.h"
#include "../../bpf/taskiter/taskiter.bpf.h"

#ifdef HAVE_BPF_CORE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/bpf_child.h"
#include "taskiter.skel.h"
#include "../../bpf/sched/sched.bpf.h"
#endif

/* read(2) size: bpf_seq_read() hands out at most its 8-page buffer per call
 * (32 KiB with 4 KiB pages); the stream buffer starts at the last stream's
 * length plus this, and is freed after each walk's parse. */
#define TASKITER_READ_CHUNK (32 * 1024)

const char *
scanner_name(enum scanner_mode m)
{
	switch (m) {
	case SCANNER_PROCFS:
		return "procfs";
	case SCANNER_AUTO:
		return "auto";
	case SCANNER_BPF:
		return "bpf";
	}
	return "?";
}

const char *
scanner_why_name(enum scanner_why why)
{
	switch (why) {
	case SCANNER_WHY_NONE:
		return "none";
	case SCANNER_WHY_CONFIG:
		return "config";
	case SCANNER_WHY_BUILD:
		return "no_bpf_build";
	case SCANNER_WHY_ROOT:
		return "proc_root";
	case SCANNER_WHY_PIDNS:
		return "pid_namespace";
	case SCANNER_WHY_NO_BTF:
		return "no_btf";
	case SCANNER_WHY_PRIVILEGE:
		return "privilege";
	case SCANNER_WHY_VERIFIER:
		return "verifier";
	case SCANNER_WHY_ATTACH:
		return "attach";
	case SCANNER_WHY_READ:
		return "read_failed";
	case SCANNER_WHY__MAX:
		break;
	}
	return "?";
}

const char *
partial_why_name(enum partial_why why)
{
	switch (why) {
	case PARTIAL_WHY_NONE:
		return "none";
	case PARTIAL_WHY_NO_SCHED:
		return "no_sched";
	case PARTIAL_WHY_LOAD:
		return "load";
	case PARTIAL_WHY_SCANNER:
		return "scanner";
	case PARTIAL_WHY_READ:
		return "read_failed";
	case PARTIAL_WHY__MAX:
		break;
	}
	return "?";
}

/*
 * cputime_adjust() of kernel/sched/cputime.c: split the precise runtime in
 * the ratio of the tick-sampled utime and stime, never letting either half
 * go backwards. prev is the instance's last split and becomes the result.
 */
void
taskiter_cputime_adjust(struct cputime_split *prev, uint64_t utime,
    uint64_t stime, uint64_t rtime)
{
	uint64_t ut, st;

	/* rtime not ahead of what was already handed out: keep the split */
	if (prev->stime + prev->utime >= rtime)
		return;
	st = stime;
	ut = utime;
	if (st == 0) {
		ut = rtime;
		goto update;
	}
	if (ut == 0) {
		st = rtime;
		goto update;
	}
	/* mul_u64_u64_div_u64(): exact with a 128-bit intermediate */
	st = (uint64_t)((unsigned __int128)st * rtime /
	    ((unsigned __int128)st + ut));
	if (st > rtime)
		st = rtime;
update:
	if (st < prev->stime)
		st = prev->stime;
	ut = rtime - st;
	if (ut < prev->utime) {
		ut = prev->utime;
		st = rtime - ut;
	}
	prev->stime = st;
	prev->utime = ut;
}

/* Whether taskiter_cputime_ticks() would leave prev, so the ticks, as they are.
 */
bool
taskiter_cputime_kept(const struct iter_task *t,
    const struct cputime_split *prev)
{
	return (t->flags & TASKITER_F_ADJUST) &&
	    prev->utime + prev->stime >= t->runtime_ns;
}

/* /proc's utime and stime for one read: ticks, from ns and the split. */
void
taskiter_cputime_ticks(const struct iter_task *t, struct cputime_split *prev,
    unsigned hz, uint64_t *ret_utime, uint64_t *ret_stime)
{
	if (t->flags & TASKITER_F_ADJUST) {
		taskiter_cputime_adjust(prev, t->utime_ns, t->stime_ns,
		    t->runtime_ns);
		*ret_utime = ns_to_clock_t(prev->utime, hz);
		*ret_stime = ns_to_clock_t(prev->stime, hz);
	} else {
		/* native accounting: /proc prints the raw figures */
		*ret_utime = ns_to_clock_t(t->utime_ns, hz);
		*ret_stime = ns_to_clock_t(t->stime_ns, hz);
	}
}

/*
 * The iterator sees the tasks of the caller's pid namespace and reports
 * their global ids; /proc under proc_root must be that same view for the
 * two to be interchangeable.
 */
enum scanner_why
taskiter_usable(int procfd)
{
	struct vbuf b = { 0 };
	char self[32];
	const char *ns;
	ssize_t n;
	enum scanner_why why = SCANNER_WHY_NONE;

	if (!is_procfs(procfd, NULL))
		return SCANNER_WHY_ROOT;
	n = readlinkat(procfd, "self", self, sizeof(self) - 1);
	if (n <= 0)
		return SCANNER_WHY_ROOT;
	self[n] = '\0';
	if (strtol(self, NULL, 10) != (long)getpid())
		return SCANNER_WHY_ROOT;
	/* "NSpid:\t42" in the initial namespace; more ids in a nested one */
	if (read_at(procfd, "self/status", &b) == 0 &&
	    (ns = strstr(b.p, "\nNSpid:")) != NULL) {
		ns += 7;
		while (*ns == '\t' || *ns == ' ')
			ns++;
		while (*ns >= '0' && *ns <= '9')
			ns++;
		if (*ns == '\t' || *ns == ' ')
			why = SCANNER_WHY_PIDNS;
	}
	vbuf_release(&b);
	return why;
}

#ifdef HAVE_BPF_CORE

/* What the child hands over: the walk's link, the partial program, its
 * output array. */
enum { TI_FD_DUMP, TI_FD_PARTIAL, TI_FD_OUT, TI_FDS };

struct taskiter {
	int link_fd;	    /* the iterator's link, made by the loading child */
	int part_fd;	    /* taskiter_partial; -1 none */
	int out_fd;	    /* taskiter_out, mapped at out */
	int ctl_fd, tot_fd; /* the sched accounting's, dup'd */
	bool after_walk;    /* no partial read since the last walk */
	const struct taskiter_rec *out;
	size_t out_len; /* mapped: a prefix of taskiter_out (out_map) */
	unsigned ncpu;
	uint64_t *tot_buf; /* per-CPU values of one sched_tot slot */
	unsigned hz;
	struct vbuf buf;   /* a walk's stream: freed after its parse */
	size_t stream_len; /* the last walk's stream length */
	struct taskiter_snap snap;
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

struct taskiter *
taskiter_free(struct taskiter *ti)
{
	if (ti == NULL)
		return NULL;
	if (ti->out != NULL)
		munmap((void *)ti->out, ti->out_len);
	close_fd(&ti->link_fd);
	close_fd(&ti->part_fd);
	close_fd(&ti->out_fd);
	close_fd(&ti->ctl_fd);
	close_fd(&ti->tot_fd);
	free(ti->tot_buf);
	vbuf_release(&ti->buf);
	taskiter_snap_release(&ti->snap);
	free(ti);
	return NULL;
}

/* What the reader holds between reads: the stream and the scratch tables
 * (taskiter_out's mapping is the kernel's memory, resident as written). */
size_t
taskiter_bytes(const struct taskiter *ti)
{
	const struct taskiter_snap *s;

	if (ti == NULL)
		return 0;
	s = &ti->snap;
	return sizeof(*ti) + ti->buf.cap +
	    (s->cap + s->pcap) * sizeof(*s->procs) + s->cap * sizeof(*s->next) +
	    s->hcap * sizeof(*s->hash) + s->gcap * sizeof(*s->gone) +
	    ti->ncpu * sizeof(*ti->tot_buf);
}

/*
 * One full walk, parsed as it is read: a chunk at a time into ti->buf,
 * its whole records fed to the parse, a record the read cut kept for the
 * next. The stream is never whole in memory beside the snapshot's tables
 * (at 2,100 tasks it was 0.5 MiB beside their 0.33: the daemon's peak,
 * bench/README.md). The tables are sized once from the last walk.
 */
static int
read_walk(struct taskiter *ti)
{
	const size_t rs = sizeof(struct taskiter_rec);
	size_t total = 0, whole;
	ssize_t n;
	int fd, r;

	ti->buf.len = 0;
	/* one chunk exactly (vbuf_reserve adds a byte for a NUL) */
	if ((r = vbuf_reserve(&ti->buf, TASKITER_READ_CHUNK - 1)) < 0)
		return r;
	if ((r = taskiter_parse_begin(&ti->snap, ti->stream_len / rs + 1)) < 0)
		return r;
	if ((fd = bpf_iter_create(ti->link_fd)) < 0)
		return -errno;
	for (;;) {
		n = read(fd, ti->buf.p + ti->buf.len,
		    TASKITER_READ_CHUNK - ti->buf.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		total += (size_t)n;
		ti->buf.len += (size_t)n;
		whole = ti->buf.len / rs;
		if (whole == 0)
			continue;
		if ((r = taskiter_parse_feed(&ti->snap,
			 (const struct taskiter_rec *)(const void *)ti->buf.p,
			 whole)) < 0)
			break;
		ti->buf.len -= whole * rs;
		memmove(ti->buf.p, ti->buf.p + whole * rs, ti->buf.len);
	}
	close(fd);
	if (r == 0 && ti->buf.len != 0)
		r = -EBADMSG; /* the stream ended inside a record */
	if (r == 0)
		r = taskiter_parse_end(&ti->snap);
	if (r == 0)
		ti->stream_len = total;
	return r;
}

int
taskiter_read(struct taskiter *ti, const struct taskiter_snap **ret)
{
	int r;

	ti->after_walk = true;
	r = read_walk(ti);
	/* the snapshot holds copies: the chunk is not kept between walks
	 * (the partial reads after it parse taskiter_out in place) */
	vbuf_release(&ti->buf);
	if (r < 0)
		return r;
	*ret = &ti->snap;
	return 0;
}

bool
taskiter_partial_on(const struct taskiter *ti)
{
	return ti != NULL && ti->out != NULL;
}

int
taskiter_ev_gen(struct taskiter *ti, uint64_t *ret_gen)
{
	struct sched_ctl ctl;
	uint32_t zero = 0;

	if (!taskiter_partial_on(ti))
		return -EOPNOTSUPP;
	if (bpf_map_lookup_elem(ti->ctl_fd, &zero, &ctl) < 0)
		return -errno;
	*ret_gen = ctl.gen;
	return 0;
}

/* The doubt counters' sum (taskiter.bpf.c, doubt_cpu) read from here. */
static const uint32_t doubt_tots[] = { TOT_TID_FULL, TOT_PROC_FULL,
	TOT_NO_STORAGE, TOT_NO_SLICE, TOT_LOST_S0, TOT_LOST_S1 };

int
taskiter_ev_state(struct taskiter *ti, uint64_t *ret_gen, uint64_t *ret_doubt)
{
	struct sched_ctl ctl;
	uint32_t zero = 0;
	uint64_t sum = 0;
	size_t i;
	unsigned c;

	if (!taskiter_partial_on(ti))
		return -EOPNOTSUPP;
	if (bpf_map_lookup_elem(ti->ctl_fd, &zero, &ctl) < 0)
		return -errno;
	for (i = 0; i < sizeof(doubt_tots) / sizeof(doubt_tots[0]); i++) {
		if (bpf_map_lookup_elem(ti->tot_fd, &doubt_tots[i],
			ti->tot_buf) < 0)
			return -errno;
		for (c = 0; c < ti->ncpu; c++)
			sum += ti->tot_buf[c];
	}
	*ret_gen = ctl.gen;
	*ret_doubt = sum;
	return 0;
}

/* taskiter_partial's argument (taskiter.bpf.c, struct taskiter_args). */
struct partial_args {
	uint32_t side, procs;
	int32_t self; /* the reading thread: its task group reaches every CPU */
	uint32_t flags; /* TASKITER_ARG_* */
};
_Static_assert(TASKITER_READ_BOTH == TASKITER_ARG_BOTH &&
	TASKITER_READ_NO_MAPS == TASKITER_ARG_NO_MAPS &&
	TASKITER_READ_NO_CPUS == TASKITER_ARG_NO_CPUS,
    "the read's flags are the program's");

/*
 * taskiter_out is the kernel's memory, but every page of a mapping of it
 * is in our RSS from the mmap on (remap_vmalloc_range maps them all): the
 * whole array (TASKITER_OUT_MAX records, ~1.4 MiB) for the few hundred
 * records a partial read writes. So only a prefix is mapped, sized to the
 * reads: grown to a read's records (and a quarter) when it wrote past it,
 * cut back to twice a read's when that is under a quarter of it, never
 * below TASKITER_OUT_MIN_BYTES. The program writes the array whatever is
 * mapped; a new mapping shows what it wrote.
 */
#define TASKITER_OUT_MIN_BYTES (64 * 1024)

static size_t
out_full_len(void)
{
	return (size_t)(TASKITER_OUT_MAX + 1) * sizeof(struct taskiter_rec);
}

/* Map len bytes (pages) of taskiter_out in place of the mapping there is;
 * on failure the old one stays. */
static int
out_map(struct taskiter *ti, size_t len)
{
	size_t pg = (size_t)getpagesize(), full = out_full_len();
	void *p;

	if (len < TASKITER_OUT_MIN_BYTES)
		len = TASKITER_OUT_MIN_BYTES;
	len = (len + pg - 1) / pg * pg;
	if (len > (full + pg - 1) / pg * pg)
		len = (full + pg - 1) / pg * pg;
	if (ti->out != NULL && len == ti->out_len)
		return 0;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, ti->out_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (ti->out != NULL)
		munmap((void *)ti->out, ti->out_len);
	ti->out = p;
	ti->out_len = len;
	return 0;
}

/* Bytes of taskiter_out mapped (resident, counted in RssFile). */
size_t
taskiter_out_bytes(const struct taskiter *ti)
{
	return ti != NULL && ti->out != NULL ? ti->out_len : 0;
}

/*
 * One run of taskiter_partial (BPF_PROG_TEST_RUN): its records are in the
 * mapped taskiter_out, parsed from there in place.
 */
int
taskiter_read_partial(struct taskiter *ti, unsigned side, unsigned flags,
    const struct taskiter_snap **ret, struct taskiter_end *ret_end)
{
	/* the first read after a walk sees the whole process map: what the
	 * walk saw is read again, nothing since is missed */
	struct partial_args args = { side,
		ti->after_walk || (flags & TASKITER_READ_PROCS),
		(int32_t)gettid(), flags & ~TASKITER_READ_PROCS };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &args,
	    .ctx_size_in = sizeof(args));
	const struct taskiter_rec *end;
	size_t need;
	uint32_t n;
	int r;

	if (!taskiter_partial_on(ti) || side > 1)
		return -EOPNOTSUPP;
	if (bpf_prog_test_run_opts(ti->part_fd, &o) < 0)
		return -errno;
	if ((int32_t)o.retval < 0 || o.retval > TASKITER_OUT_MAX)
		return -EBADMSG;
	n = o.retval;
	need = (size_t)(n + 1) * sizeof(*end);
	if (need > ti->out_len) {
		if ((r = out_map(ti, need + need / 4)) < 0)
			return r;
	} else if (4 * need < ti->out_len &&
	    ti->out_len > TASKITER_OUT_MIN_BYTES) {
		(void)out_map(ti, 2 * need); /* kept as it is on failure */
	}
	end = &ti->out[n];
	if (end->magic != TASKITER_MAGIC_END)
		return -EBADMSG;
	taskiter_snap_fit(&ti->snap, n ? n : 1);
	if ((r = taskiter_parse(ti->out, (n + 1) * sizeof(*end), &ti->snap)) <
	    0)
		return r;
	ret_end->gen = end->start_ns;
	ret_end->doubt = end->utime_ns;
	ret_end->nostore = end->stime_ns;
	ret_end->hash_walks = end->runtime_ns;
	ret_end->hash_skips = end->min_flt;
	ret_end->proc_walks = end->maj_flt;
	ret_end->nrecs = (uint32_t)(n - ti->snap.ngone);
	ti->after_walk = false;
	*ret = &ti->snap;
	return 0;
}

/* What the loading child says back. */
struct load_out {
	enum scanner_why why;
	enum partial_why pwhy;
	int perr;
};

struct load_arg {
	unsigned hz;
	const struct taskiter_events *ev;
};

static struct vitals_taskiter *
load_skel(const struct load_arg *a, bool partial, int *ret_r)
{
	struct vitals_taskiter *skel;
	struct bpf_map *reuse[9];
	int fds[9], i, r, n;
	uint64_t mul, div;

	if ((skel = vitals_taskiter__open()) == NULL) {
		*ret_r = -errno;
		return NULL;
	}
	reuse[0] = skel->maps.sched_ctl;
	reuse[1] = skel->maps.sched_tot;
	reuse[2] = skel->maps.sched_tid0;
	reuse[3] = skel->maps.sched_tid1;
	reuse[4] = skel->maps.sched_proc0;
	reuse[5] = skel->maps.sched_proc1;
	reuse[6] = skel->maps.sched_slot0;
	reuse[7] = skel->maps.sched_slot1;
	reuse[8] = skel->maps.sched_nslot;
	/* the benchmark's floor program: not the daemon's */
	bpf_program__set_autoload(skel->progs.taskiter_walk, false);
	if (!partial) {
		bpf_program__set_autoload(skel->progs.taskiter_partial, false);
		for (i = 0; i < 9; i++)
			bpf_map__set_autocreate(reuse[i], false);
		bpf_map__set_autocreate(skel->maps.taskiter_out, false);
	} else {
		n = libbpf_num_possible_cpus();
		skel->rodata->ncpu = n > 0 ? (uint32_t)n : 1;
		skel->rodata->slot_cap = a->ev->slot_cap;
		fds[0] = a->ev->ctl_fd;
		fds[1] = a->ev->tot_fd;
		fds[2] = a->ev->tid_fd[0];
		fds[3] = a->ev->tid_fd[1];
		fds[4] = a->ev->proc_fd[0];
		fds[5] = a->ev->proc_fd[1];
		fds[6] = a->ev->slot_fd[0];
		fds[7] = a->ev->slot_fd[1];
		fds[8] = a->ev->nslot_fd;
		for (i = 0; i < 9; i++)
			if ((r = bpf_map__reuse_fd(reuse[i], fds[i])) < 0) {
				vitals_taskiter__destroy(skel);
				*ret_r = r;
				return NULL;
			}
	}
	/* the program converts as ns_to_clock_t() does */
	clock_t_factors(a->hz, &mul, &div);
	skel->rodata->ticks_mul = mul;
	skel->rodata->ticks_div = div;
	if ((r = vitals_taskiter__load(skel)) < 0) {
		vitals_taskiter__destroy(skel);
		*ret_r = r;
		return NULL;
	}
	return skel;
}

/*
 * In the loading child (bpf_child.c): open, load and attach; the fds go to
 * the parent, *out says which stage failed. With the sched accounting's
 * maps the partial program loads too, or, when it cannot (kfuncs), the
 * object loads again without it: the walk alone. Its slots then carry the
 * walk's link again (all slots must be filled).
 */
static int
load_child(void *arg, int *fds, size_t nfds, void *out, size_t outsz)
{
	const struct load_arg *a = arg;
	struct load_out *o = out;
	struct vitals_taskiter *skel = NULL;
	struct bpf_link *link;
	int r = 0;

	if ((nfds != 1 && nfds != TI_FDS) || outsz != sizeof(*o))
		return -EINVAL;
	bpf_common_init();
	o->why = SCANNER_WHY_VERIFIER;
	o->pwhy = a->ev ? PARTIAL_WHY_NONE : PARTIAL_WHY_NO_SCHED;
	o->perr = 0;
	if (a->ev && (skel = load_skel(a, true, &r)) == NULL) {
		o->pwhy = PARTIAL_WHY_LOAD;
		o->perr = -r;
	}
	if (skel == NULL && (skel = load_skel(a, false, &r)) == NULL) {
		o->why = r == -EPERM ? SCANNER_WHY_PRIVILEGE :
				       SCANNER_WHY_VERIFIER;
		return r;
	}
	if ((link = bpf_program__attach_iter(skel->progs.taskiter_dump,
		 NULL)) == NULL) {
		r = -errno;
		o->why = r == -EPERM ? SCANNER_WHY_PRIVILEGE :
				       SCANNER_WHY_ATTACH;
		return r;
	}
	/* the child exits next: the kernel drops its references, the
	 * parent's fds keep the link, the program and the array */
	fds[TI_FD_DUMP] = bpf_link__fd(link);
	if (nfds == 1)
		return 0;
	if (o->pwhy == PARTIAL_WHY_NONE) {
		fds[TI_FD_PARTIAL] = bpf_program__fd(
		    skel->progs.taskiter_partial);
		fds[TI_FD_OUT] = bpf_map__fd(skel->maps.taskiter_out);
	} else {
		fds[TI_FD_PARTIAL] = fds[TI_FD_OUT] = fds[TI_FD_DUMP];
	}
	return 0;
}

/* Map taskiter_out and keep what a partial read needs. */
static int
partial_setup(struct taskiter *ti, const struct taskiter_events *ev,
    int part_fd, int out_fd)
{
	int nc = libbpf_num_possible_cpus();

	ti->part_fd = part_fd;
	ti->out_fd = out_fd;
	if (nc <= 0)
		return nc < 0 ? nc : -EINVAL;
	ti->ncpu = (unsigned)nc;
	if ((ti->tot_buf = calloc((size_t)nc, sizeof(*ti->tot_buf))) == NULL)
		return -ENOMEM;
	if ((ti->ctl_fd = fcntl(ev->ctl_fd, F_DUPFD_CLOEXEC, 0)) < 0 ||
	    (ti->tot_fd = fcntl(ev->tot_fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	/* a prefix, grown by the reads (out_map); the array's elements are
	 * whole records (a multiple of 8 bytes), page-aligned at 0 */
	return out_map(ti, TASKITER_OUT_MIN_BYTES);
}

/*
 * Load and attach in a child (the kernel BTF's parse stays out of our
 * memory), then read once here. The kernel's BTF is looked for under
 * sys_root (libbpf itself reads /sys/kernel/btf/vmlinux for the CO-RE
 * relocations). On failure *ret_why says which stage failed.
 */
int
taskiter_open_ev(unsigned hz, const char *sys_root,
    const struct taskiter_events *ev, struct taskiter **ret,
    enum scanner_why *ret_why, enum partial_why *ret_pwhy, int *ret_perr)
{
	struct load_out out = { SCANNER_WHY_VERIFIER, PARTIAL_WHY_NO_SCHED, 0 };
	struct load_arg arg = { hz, ev };
	const struct taskiter_snap *snap;
	struct taskiter *ti;
	int fds[TI_FDS], n;
	char btf[4096];
	int r;

	*ret_pwhy = ev ? PARTIAL_WHY_LOAD : PARTIAL_WHY_NO_SCHED;
	*ret_perr = 0;
	if (hz == 0)
		return -EINVAL;
	if (snprintf(btf, sizeof(btf), "%s/kernel/btf/vmlinux", sys_root) >=
	    (int)sizeof(btf))
		return -ENAMETOOLONG;
	if (access(btf, R_OK) < 0) {
		r = -errno;
		*ret_why = SCANNER_WHY_NO_BTF;
		return r;
	}
	if ((ti = calloc(1, sizeof(*ti))) == NULL)
		return -ENOMEM;
	ti->hz = hz;
	ti->link_fd = ti->part_fd = ti->out_fd = ti->ctl_fd = ti->tot_fd = -1;
	n = ev ? TI_FDS : 1;
	if ((r = bpf_child_run(load_child, &arg, fds, (size_t)n, &out,
		 sizeof(out))) < 0) {
		*ret_why = out.why;
		goto fail;
	}
	ti->link_fd = fds[TI_FD_DUMP];
	if (n == TI_FDS && out.pwhy == PARTIAL_WHY_NONE &&
	    (r = partial_setup(ti, ev, fds[TI_FD_PARTIAL], fds[TI_FD_OUT])) <
		0) {
		out.pwhy = PARTIAL_WHY_LOAD;
		out.perr = -r;
	}
	if (out.pwhy != PARTIAL_WHY_NONE) {
		if (ti->out != NULL)
			munmap((void *)ti->out, ti->out_len);
		ti->out = NULL;
		close_fd(&ti->ctl_fd);
		close_fd(&ti->tot_fd);
		if (n == TI_FDS && ti->part_fd < 0) {
			/* copies of the walk's link in their slots */
			close(fds[TI_FD_PARTIAL]);
			close(fds[TI_FD_OUT]);
		}
		close_fd(&ti->part_fd);
		close_fd(&ti->out_fd);
	}
	*ret_pwhy = out.pwhy;
	*ret_perr = out.perr;
	/* One read now: a failure belongs to setup, not to the first tick. */
	if ((r = taskiter_read(ti, &snap)) < 0) {
		*ret_why = r == -EPERM ? SCANNER_WHY_PRIVILEGE :
					 SCANNER_WHY_READ;
		goto fail;
	}
	*ret = ti;
	return 0;
fail:
	taskiter_free(ti);
	return r < 0 ? r : -EIO;
}

int
taskiter_open(unsigned hz, const char *sys_root, struct taskiter **ret,
    enum scanner_why *ret_why)
{
	enum partial_why pwhy;
	int perr;

	return taskiter_open_ev(hz, sys_root, NULL, ret, ret_why, &pwhy, &perr);
}

#else /* !HAVE_BPF_CORE */

struct taskiter *
taskiter_free(struct taskiter *ti)
{
	(void)ti;
	return NULL;
}

size_t
taskiter_out_bytes(const struct taskiter *ti)
{
	(void)ti;
	return 0;
}

size_t
taskiter_bytes(const struct taskiter *ti)
{
	(void)ti;
	return 0;
}

int
taskiter_read(struct taskiter *ti, const struct taskiter_snap **ret)
{
	(void)ti;
	(void)ret;
	return -EOPNOTSUPP;
}

int
taskiter_open(unsigned hz, const char *sys_root, struct taskiter **ret,
    enum scanner_why *ret_why)
{
	(void)hz;
	(void)sys_root;
	(void)ret;
	*ret_why = SCANNER_WHY_BUILD;
	return -EOPNOTSUPP;
}

int
taskiter_open_ev(unsigned hz, const char *sys_root,
    const struct taskiter_events *ev, struct taskiter **ret,
    enum scanner_why *ret_why, enum partial_why *ret_pwhy, int *ret_perr)
{
	(void)ev;
	*ret_pwhy = PARTIAL_WHY_NO_SCHED;
	*ret_perr = EOPNOTSUPP;
	return taskiter_open(hz, sys_root, ret, ret_why);
}

bool
taskiter_partial_on(const struct taskiter *ti)
{
	(void)ti;
	return false;
}

int
taskiter_ev_state(struct taskiter *ti, uint64_t *ret_gen, uint64_t *ret_doubt)
{
	(void)ti;
	(void)ret_gen;
	(void)ret_doubt;
	return -EOPNOTSUPP;
}

int
taskiter_ev_gen(struct taskiter *ti, uint64_t *ret_gen)
{
	(void)ti;
	(void)ret_gen;
	return -EOPNOTSUPP;
}

int
taskiter_read_partial(struct taskiter *ti, unsigned side, unsigned flags,
    const struct taskiter_snap **ret, struct taskiter_end *ret_end)
{
	(void)ti;
	(void)side;
	(void)flags;
	(void)ret;
	(void)ret_end;
	return -EOPNOTSUPP;
}

#endif /* HAVE_BPF_CORE */
