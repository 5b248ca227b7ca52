/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall part from the platform loader's pins (bpf/aosp/vitalsd_sc.c,
 * doc/bpf.md "Syscall latency", Android): the maps opened read-only, the
 * three programs attached here (a perf event of each tracepoint, the
 * program set on it), and each window the running totals of sc_tot diffed
 * against the previous drain's snapshot. Only the configured nrs become
 * rows; a key new since the previous drain, or with a count lower than
 * before (the LRU evicted and remade it), counts its whole value. max_ns
 * is the entry's lifetime maximum. No floor, no slow calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "sc_int.h"
#include "syscalls/sc_collect.h"

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

static const char *const ldr_progs[SC_LDR_PROGS][2] = {
	{ "tracepoint_raw_syscalls_sys_enter", "raw_syscalls/sys_enter" },
	{ "tracepoint_raw_syscalls_sys_exit", "raw_syscalls/sys_exit" },
	{ "tracepoint_sched_sched_process_exit", "sched/sched_process_exit" },
};

static int
pin_open(const char *dir, const char *kind, const char *name)
{
	LIBBPF_OPTS(bpf_obj_get_opts, go, .file_flags = BPF_F_RDONLY);
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s_vitalsd_sc_%s", dir, kind, name);
	fd = bpf_obj_get_opts(path, &go);
	return fd < 0 ? -errno : fd;
}

static int
read_id(const char *path)
{
	FILE *f;
	int id;

	if ((f = fopen(path, "re")) == NULL)
		return -errno;
	if (fscanf(f, "%d", &id) != 1)
		id = -EINVAL;
	fclose(f);
	return id;
}

/*
 * The tracepoint's id, from the daemon's own tracefs instance first (on
 * Android the global events/ are not the daemon's to read; the instance
 * is made for the read if it is missing, as sched_ldr.c does), else from
 * the global events/.
 */
static int
tp_id(const char *instance, const char *ev)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
		"/sys/kernel/debug/tracing" };
	char inst[300], path[400];
	bool made = false;
	int id = -ENOENT, i;

	for (i = 0; i < 2; i++) {
		if (instance != NULL && *instance != '\0') {
			snprintf(inst, sizeof(inst), "%s/instances/%s",
			    roots[i], instance);
			if (access(inst, F_OK) < 0 && errno == ENOENT &&
			    mkdir(inst, 0750) == 0)
				made = true;
			snprintf(path, sizeof(path), "%s/events/%s/id", inst,
			    ev);
			id = read_id(path);
			if (made)
				(void)rmdir(inst);
			if (id >= 0)
				return id;
		}
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], ev);
		if ((id = read_id(path)) >= 0)
			return id;
	}
	return id;
}

static int
ldr_attach(struct sc_collector *sc, int i)
{
	struct perf_event_attr pa;
	int id = tp_id(sc->instance, ldr_progs[i][1]), pfd;

	if (id < 0)
		return id;
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = (uint64_t)id;
	pfd = (int)syscall(SYS_perf_event_open, &pa, -1, 0, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	sc->perf_fd[i] = pfd;
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, sc->ldr_prog_fd[i]) < 0 ||
	    ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	return 0;
}

int
sc_ldr_new(const struct sc_opts *o, struct sc_collector **ret)
{
	struct sc_collector *sc;
	int i, r;

	*ret = NULL;
	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return -ENOMEM;
	sc->ldr = true;
	sc->cfg = *o->cfg;
	sc->arch = sysnames_native();
	snprintf(sc->proc_root, sizeof(sc->proc_root), "%s",
	    o->proc_root ? o->proc_root : "/proc");
	snprintf(sc->instance, sizeof(sc->instance), "%s",
	    o->instance ? o->instance : "");
	sc->tot_fd = sc->stats_fd = -1;
	for (i = 0; i < SC_LDR_PROGS; i++)
		sc->perf_fd[i] = sc->ldr_prog_fd[i] = -1;
	if ((sc->ncpu = libbpf_num_possible_cpus()) <= 0) {
		r = -EINVAL;
		goto fail;
	}
	if ((r = sc->tot_fd = pin_open(o->bpffs, "map", "sc_tot")) < 0 ||
	    (r = sc->stats_fd = pin_open(o->bpffs, "map", "sc_stats")) < 0)
		goto fail;
	for (i = 0; i < SC_LDR_PROGS; i++)
		if ((r = sc->ldr_prog_fd[i] = pin_open(o->bpffs, "prog",
			 ldr_progs[i][0])) < 0)
			goto fail;
	for (i = 0; i < SC_LDR_PROGS; i++)
		if ((r = ldr_attach(sc, i)) < 0)
			goto fail;
	/* run time: the enter and exit programs */
	sc->prog_fd[0] = sc->ldr_prog_fd[0];
	sc->prog_fd[1] = sc->ldr_prog_fd[1];
	/* the first drain is a baseline: what came before is not a window's */
	sc_collect_part_free(sc_ldr_drain(sc));
	log_info("syscalls: bpfloader pins under %s opened, attached",
	    o->bpffs);
	*ret = sc;
	return 0;
fail:
	sc_ldr_free(sc);
	return r;
}

void
sc_ldr_free(struct sc_collector *sc)
{
	int i;

	for (i = 0; i < SC_LDR_PROGS; i++) {
		if (sc->perf_fd[i] >= 0)
			close(sc->perf_fd[i]);
		if (sc->ldr_prog_fd[i] >= 0)
			close(sc->ldr_prog_fd[i]);
	}
	if (sc->tot_fd >= 0)
		close(sc->tot_fd);
	if (sc->stats_fd >= 0)
		close(sc->stats_fd);
	free(sc->snap);
	free(sc);
}

static int
by_key(const void *a, const void *b)
{
	const struct sc_snap *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

/* the leader's start_boottime to the tick (/proc/<tgid>/stat field 22) */
static uint64_t
start_ns(const struct sc_collector *sc, int32_t tgid)
{
	char path[300], buf[1024], *p;
	unsigned long long st = 0;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd, f;

	snprintf(path, sizeof(path), "%s/%d/stat", sc->proc_root, (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	/* field 3 starts after ") " */
	for (f = 2; f < 22 && p; f++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &st) != 1 || hz <= 0)
		return 0;
	return (uint64_t)st * (1000000000ull / (uint64_t)hz);
}

struct sc_ldr_key {
	int32_t tgid;
	uint32_t nr;
};

/* Whether now is a value made anew since old: any running total lower
 * (an entry evicted and made again, or a pid reused). Its whole value is
 * then the window's. */
static bool
made_anew(const struct sc_val *now, const struct sc_val *old)
{
	int k;

	if (now->count < old->count || now->sum_ns < old->sum_ns ||
	    now->fast < old->fast)
		return true;
	for (k = 0; k < SC_ERR__MAX; k++)
		if (now->errors[k] < old->errors[k])
			return true;
	for (k = 0; k < SC_HIST_N; k++)
		if (now->hist[k] < old->hist[k])
			return true;
	return false;
}

/* One row: now's growth over old (NULL: all of now). */
static void
ldr_row(struct sc_row *r, const struct sc_snap *now, const struct sc_val *old)
{
	const struct sc_val *v = &now->v;
	int k;

	memset(r, 0, sizeof(*r));
	r->tgid = now->tgid;
	r->nr = now->nr;
	r->start_ns = now->start_ns;
	memcpy(r->comm, v->comm, SC_COMM_LEN);
	r->comm[SC_COMM_LEN - 1] = '\0';
	r->count = v->count - (old ? old->count : 0);
	r->sum_ns = v->sum_ns - (old ? old->sum_ns : 0);
	r->fast = v->fast - (old ? old->fast : 0);
	r->max_ns = v->max_ns;
	for (k = 0; k < SC_ERR__MAX; k++)
		r->errors[k] = v->errors[k] - (old ? old->errors[k] : 0);
	for (k = 0; k < SC_HIST_N; k++)
		r->hist[k] = v->hist[k] - (old ? old->hist[k] : 0);
}

/*
 * The running totals now, against the previous drain's snapshot. The walk
 * runs while the kernel may evict (LRU): a walk whose current key went
 * restarts from the first bucket and sees keys twice, so the snapshot is
 * sorted and each key kept once (the larger count: the later read). A walk
 * cut short (the entry bound, or memory) keeps the old snapshot's entries
 * it did not reach as their baseline, so they are not counted whole again
 * at the next drain; counted in drain_errors.
 */
struct window_syscalls *
sc_ldr_drain(struct sc_collector *sc)
{
	struct window_syscalls *p = sc_state_part(SC_ON, 0);
	struct sc_ldr_key cur, next;
	struct sc_snap *now = NULL, *o;
	struct sc_row *rows = NULL;
	size_t n = 0, cap = 0, nrows = 0, i, u;
	bool cut = false;
	struct sc_val v;
	void *prev = NULL;

	if (p == NULL)
		return NULL;
	p->arch = sc->arch;
	for (;;) {
		if (n > 2 * (size_t)VITALS_SC_ENTRIES) {
			cut = true; /* restarted walks: bounded */
			break;
		}
		if (bpf_map_get_next_key(sc->tot_fd, prev, &next) != 0)
			break;
		cur = next;
		prev = &cur;
		if (bpf_map_lookup_elem(sc->tot_fd, &cur, &v) < 0)
			continue; /* evicted since */
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			void *a = realloc(now, c * sizeof(*now));

			if (a == NULL) {
				cut = true;
				break;
			}
			now = a;
			cap = c;
		}
		now[n].tgid = cur.tgid;
		now[n].nr = cur.nr;
		now[n].v = v;
		now[n].start_ns = 0;
		n++;
	}
	if (n > 1)
		qsort(now, n, sizeof(*now), by_key);
	/* each key once: of two reads, the later has the larger count */
	for (i = 0, u = 0; i < n; i++) {
		if (u > 0 && by_key(&now[u - 1], &now[i]) == 0) {
			if (now[i].v.count > now[u - 1].v.count)
				now[u - 1] = now[i];
			continue;
		}
		now[u++] = now[i];
	}
	n = u;
	if (n > 0 && (rows = malloc(n * sizeof(*rows))) == NULL)
		cut = true;
	for (i = 0; i < n; i++) {
		const struct sc_val *old = NULL;

		o = sc->snap ? bsearch(&now[i], sc->snap, sc->nsnap,
				   sizeof(*sc->snap), by_key) :
			       NULL;
		if (o != NULL && !made_anew(&now[i].v, &o->v)) {
			old = &o->v;
			now[i].start_ns = o->start_ns;
		} else {
			now[i].start_ns = start_ns(sc, now[i].tgid);
		}
		if (rows == NULL || !sc_config_traced(&sc->cfg, now[i].nr))
			continue;
		if (old != NULL && old->count == now[i].v.count)
			continue;
		ldr_row(&rows[nrows++], &now[i], old);
	}
	if (cut) {
		size_t n0 = n;

		p->ctr.drain_errors++;
		/* the old baselines the walk did not reach stay */
		for (i = 0; i < sc->nsnap; i++) {
			if (n0 > 0 &&
			    bsearch(&sc->snap[i], now, n0, sizeof(*now),
				by_key) != NULL)
				continue;
			if (n == cap) {
				size_t c = cap ? cap * 2 : 64;
				void *a = realloc(now, c * sizeof(*now));

				if (a == NULL)
					break;
				now = a;
				cap = c;
			}
			now[n++] = sc->snap[i];
		}
		if (n > 1)
			qsort(now, n, sizeof(*now), by_key);
	}
	free(sc->snap);
	sc->snap = now;
	sc->nsnap = n;
	sc_rows_keep(sc, p, rows, nrows);
	sc_read_stats(sc, p);
	sc_read_progs(sc, p);
	return p;
}
#else
int
sc_ldr_new(const struct sc_opts *o, struct sc_collector **ret)
{
	(void)o;
	*ret = NULL;
	return -EOPNOTSUPP;
}

struct window_syscalls *
sc_ldr_drain(struct sc_collector *sc)
{
	(void)sc;
	return NULL;
}

void
sc_ldr_free(struct sc_collector *sc)
{
	free(sc);
}
#endif
