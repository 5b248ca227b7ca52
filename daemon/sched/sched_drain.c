/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched_switch accounting, steady-state half: the drain protocol (flip
 * the generation, wait out the programs still writing the old side, read
 * and empty it), the cumulative counters and program statistics, and the
 * reduction of a drained side into a window. Only map and program fds are
 * used here: no privilege. doc/bpf.md has the protocol and why it is exact.
 * The platform loader's pins are drained otherwise, read-only, by snapshot
 * difference (sched_ldr.c); the window half is shared.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "sched/sched.h"

#ifdef HAVE_BPF
#include "sched_int.h"

#define PUSH(b, arr, n, cap)                                         \
	((b)->n == (b)->cap ? bpf_sched_grow_arr((void **)&(b)->arr, \
				  &(b)->cap, sizeof(*(b)->arr)) :    \
			      0)

static int
put_tid(struct bpf_sched *bs, struct bpf_sched_batch *b, const void *k,
    const void *v)
{
	const struct sched_tid_key *key = k;
	const struct sched_tid *val = v;
	struct vbpf_tid *t;
	int r;

	(void)bs;
	if ((r = PUSH(b, tids, ntids, tids_cap)) < 0)
		return r;
	t = &b->tids[b->ntids++];
	t->tid = (int32_t)key->tid;
	t->uid = key->uid;
	t->pad = 0;
	t->start_ns = key->start_ns;
	t->tgid = (int32_t)val->tgid;
	t->leader_ns = val->leader_ns;
	t->oncpu_ns = val->oncpu_ns;
	t->rq_ns = val->rq_ns;
	t->rq_count = val->rq_count;
	t->wtd_ns = val->wtd_ns;
	memcpy(t->rq_hist, val->rq_hist, sizeof(t->rq_hist));
	return 0;
}

static int
put_proc(struct bpf_sched *bs, struct bpf_sched_batch *b, const void *k,
    const void *v)
{
	const struct sched_proc_key *key = k;
	const struct sched_proc *val = v;
	struct vbpf_proc *p;
	int r;

	(void)bs;
	if ((r = PUSH(b, procs, nprocs, procs_cap)) < 0)
		return r;
	p = &b->procs[b->nprocs++];
	memset(p, 0, sizeof(*p));
	p->tgid = (int32_t)key->tgid;
	p->start_ns = key->start_ns;
	p->flags = val->flags & SCHED_PROC_EXITED ? WBPF_PROC_EXITED : 0;
	p->exited_ns = val->exited_ns;
	p->rq_ns = val->rq_ns;
	p->rq_count = val->rq_count;
	memcpy(p->rq_hist, val->rq_hist, sizeof(p->rq_hist));
	p->exited_wtd_ns = val->exited_wtd_ns;
	return 0;
}

static int
put_uid(struct bpf_sched *bs, struct bpf_sched_batch *b, const void *k,
    const void *v)
{
	const struct sched_uid *val = v;
	struct vbpf_uid *u;
	int r;

	(void)bs;
	if ((r = PUSH(b, uids, nuids, uids_cap)) < 0)
		return r;
	u = &b->uids[b->nuids++];
	memset(u, 0, sizeof(*u));
	u->uid = *(const uint32_t *)k;
	u->exited_ns = val->exited_ns;
	u->exited_tasks = val->exited_tasks;
	u->overflow_ns = val->overflow_ns;
	u->exited_rq_ns = val->exited_rq_ns;
	u->exited_rq_count = val->exited_rq_count;
	memcpy(u->exited_rq_hist, val->exited_rq_hist,
	    sizeof(u->exited_rq_hist));
	return 0;
}

typedef int (*put_fn)(struct bpf_sched *, struct bpf_sched_batch *,
    const void *, const void *);

/* Old kernels without batch ops: one key at a time. */
static int
drain_keys(struct bpf_sched *bs, int fd, size_t vsz, struct bpf_sched_batch *b,
    put_fn put)
{
	int r;

	while (bpf_map_get_next_key(fd, NULL, bs->kbuf) == 0) {
		if (bpf_map_lookup_elem(fd, bs->kbuf, bs->vbuf) < 0) {
			if (errno == ENOENT)
				continue; /* gone since get_next_key */
			/* Unread is not drained: leave it for next time. */
			return -errno;
		}
		if ((r = put(bs, b, bs->kbuf, bs->vbuf)) < 0)
			return r;
		(void)vsz;
		if (bpf_map_delete_elem(fd, bs->kbuf) < 0 && errno != ENOENT)
			return -errno;
	}
	return errno == ENOENT ? 0 : -errno;
}

/*
 * Read and empty one map of the quiescent side. Entries already taken out
 * of the kernel are in b even when this fails half-way.
 */
static int
drain_map(struct bpf_sched *bs, int fd, size_t ksz, size_t vsz,
    struct bpf_sched_batch *b, put_fn put)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint64_t in_tok = 0, out_tok = 0;
	size_t chunk = 256, i;
	bool first = true;
	uint32_t count;
	int r, err;

	for (;;) {
		if ((r = bpf_sched_grow(&bs->kbuf, &bs->kcap, chunk * ksz)) <
			0 ||
		    (r = bpf_sched_grow(&bs->vbuf, &bs->vcap, chunk * vsz)) < 0)
			return r;
		if (bs->no_batch)
			return drain_keys(bs, fd, vsz, b, put);
		count = (uint32_t)chunk;
		err = bpf_map_lookup_and_delete_batch(fd,
		    first ? NULL : &in_tok, &out_tok, bs->kbuf, bs->vbuf,
		    &count, &opts);
		err = err < 0 ? -errno : 0;
		for (i = 0; i < count; i++)
			if ((r = put(bs, b, (char *)bs->kbuf + i * ksz,
				 (char *)bs->vbuf + i * vsz)) < 0)
				return r;
		if (err == -ENOENT)
			return 0;
		if (err == -ENOSPC && count == 0) {
			chunk *= 2; /* a bucket holds more than a chunk */
			continue;
		}
		if ((err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP) &&
		    first) {
			bs->no_batch = true;
			continue;
		}
		if (err < 0)
			return err;
		in_tok = out_tok;
		first = false;
	}
}

/*
 * Layout 11: the quiescent side's array slots [0, count), read in index
 * order (batch lookups; one at a time on kernels without them), a row
 * each unless folded at its thread's free or not of a generation of
 * this side still undrained (slot_undrained()). Then the count goes back
 * to 0 for the side's next window, two flips away. Rows already put are
 * kept when this fails half-way: the count stays, and the next drain of
 * the side starts after them (slot_put) and takes the slots the side's
 * threads added meanwhile.
 */
/*
 * A slot below the count holds a generation of this side not drained
 * yet: the one drained now (tag gen + 1) or, when an earlier drain of
 * the side was skipped (a failed barrier, a close that never reached its
 * flip) and the count not reset, an older one the threads left when the
 * side became live again (they took new slots after it; the window's
 * rows merge a thread's two). A tag of the other side's parity or above
 * the drained generation is never this side's.
 */
static bool
slot_undrained(const struct bpf_sched *bs, unsigned side, uint64_t gen,
    uint64_t ready)
{
	return ready != 0 && ready <= gen + 1 &&
	    ((ready ^ (gen + 1)) & 1) == 0 && ready >= bs->slot_tag[side];
}

static int
drain_slots(struct bpf_sched *bs, unsigned side, struct bpf_sched_batch *b)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bs->map_fd[side ? SM_SLOT1 : SM_SLOT0];
	uint32_t key = side, n, got = 0, count, i, in_tok = 0, out_tok = 0;
	uint32_t taken;
	struct sched_nslot ns;
	int r, err;

	if (bpf_map_lookup_elem(bs->map_fd[SM_NSLOT], &key, &ns) < 0)
		return -errno;
	/* b->slot_count is set once the count is reset: a drain that fails
	 * before leaves the count to the next, which reports it whole */
	taken = ns.count;
	/* past the capacity no slot was written in this run (an earlier
	 * run's, with another capacity, may hold anything) */
	n = ns.count < bs->slot_cap ? ns.count : bs->slot_cap;
	if (n == 0) {
		b->slot_count = taken;
		return 0;
	}
	if ((r = bpf_sched_grow((void **)&bs->slots, &bs->slots_cap,
		 (size_t)n * sizeof(*bs->slots))) < 0 ||
	    (r = bpf_sched_grow(&bs->kbuf, &bs->kcap,
		 (size_t)n * sizeof(uint32_t))) < 0)
		return r;
	while (got < n && !bs->no_batch) {
		count = n - got;
		err = bpf_map_lookup_batch(fd, got ? &in_tok : NULL, &out_tok,
		    (uint32_t *)bs->kbuf + got, bs->slots + got, &count, &opts);
		err = err < 0 ? -errno : 0;
		got += count;
		if (err == -ENOENT)
			break;
		if ((err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP) &&
		    got == 0) {
			bs->no_batch = true;
			break;
		}
		if (err < 0)
			return err;
		in_tok = out_tok;
	}
	for (i = got; bs->no_batch && i < n; i++, got++)
		if (bpf_map_lookup_elem(fd, &i, &bs->slots[i]) < 0)
			return -errno;
	for (i = bs->slot_put[side]; i < got && i < n; i++) {
		const struct sched_slot *sl = &bs->slots[i];

		if (!slot_undrained(bs, side, b->gen, sl->ready) ||
		    (sl->flags & SCHED_SLOT_FOLDED))
			continue;
		if ((r = put_tid(bs, b, &sl->key, &sl->v)) < 0) {
			bs->slot_put[side] = i;
			return r;
		}
		b->slots++;
	}
	ns.count = 0;
	if (bpf_map_update_elem(bs->map_fd[SM_NSLOT], &key, &ns, BPF_ANY) < 0) {
		bs->slot_put[side] = n; /* every slot is in this batch */
		return -errno;
	}
	bs->slot_put[side] = 0;
	bs->slot_tag[side] = b->gen + 3; /* the side's next generation */
	b->slot_count = taken;
	return 0;
}

static size_t
proc_slot(int32_t tgid, uint64_t start_ns, size_t mask)
{
	uint64_t h = ((uint64_t)(uint32_t)tgid << 32 ^ start_ns) *
	    0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & mask;
}

/*
 * Since layout 9 a live thread's waits are in its thread entry alone
 * (sched_switch adds the wait to it at the switch-out that ends the slice,
 * with the CPU time, one hash update instead of three); its process's
 * entry holds only what its exited threads folded at their free and what
 * no thread entry took. The batch keeps its meaning — a process's figures
 * are all of its waits — by adding each thread's to its process here,
 * making the process's row where the side has none. Open addressing on
 * (tgid, leader start), sized for every process the side can hold.
 */
static int
fold_thread_waits(struct bpf_sched_batch *b)
{
	size_t cap = 64, mask, i, h;
	uint32_t *slot;
	int r;

	while (cap < 2 * (b->nprocs + b->ntids))
		cap <<= 1;
	mask = cap - 1;
	if ((slot = calloc(cap, sizeof(*slot))) == NULL)
		return -ENOMEM;
	for (i = 0; i < b->nprocs; i++) {
		h = proc_slot(b->procs[i].tgid, b->procs[i].start_ns, mask);
		while (slot[h] != 0)
			h = (h + 1) & mask;
		slot[h] = (uint32_t)i + 1;
	}
	for (i = 0; i < b->ntids; i++) {
		const struct vbpf_tid *t = &b->tids[i];
		struct vbpf_proc *p = NULL;
		unsigned k;

		if (t->rq_count == 0)
			continue;
		h = proc_slot(t->tgid, t->leader_ns, mask);
		for (; slot[h] != 0; h = (h + 1) & mask) {
			p = &b->procs[slot[h] - 1];
			if (p->tgid == t->tgid && p->start_ns == t->leader_ns)
				break;
			p = NULL;
		}
		if (p == NULL) {
			if ((r = PUSH(b, procs, nprocs, procs_cap)) < 0) {
				free(slot);
				return r;
			}
			p = &b->procs[b->nprocs++];
			memset(p, 0, sizeof(*p));
			p->tgid = t->tgid;
			p->start_ns = t->leader_ns;
			slot[h] = (uint32_t)b->nprocs;
		}
		p->rq_ns += t->rq_ns;
		p->rq_count += t->rq_count;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			p->rq_hist[k] += t->rq_hist[k];
	}
	free(slot);
	return 0;
}

/*
 * Flip, wait, drain. After the flip a program either read the new
 * generation or is still running with the old one; storing a map fd into
 * sched_barrier returns only after synchronize_rcu(), and every program
 * runs inside an RCU read-side section, so once it returns the old side
 * has no writer left and reading it races with nothing. The cumulative
 * counters are read afterwards: their entries for the drained side are
 * final then too.
 *
 * The flip is the window's edge and belongs on the loop; the wait (a grace
 * period, 5-30 ms) and the reads may run on another thread
 * (sched_async.c): between bpf_sched_flip and the end of
 * bpf_sched_collect nothing else touches bs's batch or buffers.
 */
int
bpf_sched_flip(struct bpf_sched *bs)
{
	struct sched_ctl ctl = { .gen = bs->gen + 1 };
	uint32_t zero = 0;

	if (bs->ldr)
		return 0; /* read-only pins: a difference, no sides */
	if (bs->early) {
		bs->early = false; /* made before the close's last scan */
		return 0;
	}
	if (bpf_map_update_elem(bs->map_fd[SM_CTL], &zero, &ctl, BPF_ANY) < 0)
		return -errno;
	bs->gen = ctl.gen;
	return 0;
}

int
bpf_sched_flip_early(struct bpf_sched *bs)
{
	int r;

	if (bs->ldr)
		return -EOPNOTSUPP;
	/*
	 * One made before an earlier close that never reached its flip (the
	 * close failed before the sched part): stale, so the close drains
	 * nothing of this window's. Flip again: this window's side is
	 * drained, what the old one held shows at the next drain.
	 */
	bs->early = false;
	if ((r = bpf_sched_flip(bs)) < 0)
		return r;
	bs->early = true;
	return 0;
}

int
bpf_sched_collect(struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	unsigned side = (unsigned)((bs->gen - 1) & 1);
	int fd, r, r2;
	uint32_t zero = 0;

	/* the platform loader's pins: read only, a difference of snapshots */
	if (bs->ldr)
		return bpf_ldr_drain(bs, b);
	b->ntids = b->nprocs = b->nuids = 0;
	b->incomplete = false;
	b->diff = false;
	/* A failed wait leaves the old side alone: it becomes the active
	 * one again at the next flip and is drained one flip later. */
	fd = bs->map_fd[SM_CTL];
	if (bpf_map_update_elem(bs->map_fd[SM_BARRIER], &zero, &fd, BPF_ANY) <
	    0)
		return -errno;
	b->gen = bs->gen - 1;
	b->side = side;
	b->slots = b->slot_count = 0;
	/* the slots, then the hash: the threads past them */
	r = drain_slots(bs, side, b);
	r2 = drain_map(bs, bs->map_fd[side ? SM_TID1 : SM_TID0],
	    sizeof(struct sched_tid_key), sizeof(struct sched_tid), b, put_tid);
	if (r == 0)
		r = r2;
	r2 = drain_map(bs, bs->map_fd[side ? SM_PROC1 : SM_PROC0],
	    sizeof(struct sched_proc_key), sizeof(struct sched_proc), b,
	    put_proc);
	if (r == 0)
		r = r2;
	r2 = drain_map(bs, bs->map_fd[side ? SM_UID1 : SM_UID0],
	    sizeof(uint32_t), sizeof(struct sched_uid), b, put_uid);
	if (r == 0)
		r = r2;
	/* after both reads: a thread and its process may come in either */
	if ((r2 = fold_thread_waits(b)) < 0 && r == 0)
		r = r2;
	b->incomplete = r < 0;
	if ((r2 = bpf_sched_totals(bs, b->tot)) < 0 && r == 0)
		r = r2;
	b->drain_ns = (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
	/* what was read is handed out even after a failure: never lost */
	return b->incomplete ? 0 : r;
}

int
bpf_sched_drain(struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	int r;

	if ((r = bpf_sched_flip(bs)) < 0)
		return r;
	return bpf_sched_collect(bs, b);
}

void
bpf_sched_batch_release(struct bpf_sched_batch *b)
{
	free(b->tids);
	free(b->procs);
	free(b->uids);
	memset(b, 0, sizeof(*b));
}

int
bpf_sched_prog_stats(struct bpf_sched *bs,
    struct vbpf_prog_stat ret[VITALS_BPF_PROGS])
{
	unsigned i;
	int r = 0;

	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&ret[i], 0, sizeof(ret[i]));
		if (bs->prog_fd[i] < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bs->prog_fd[i], &info, &len) < 0) {
			r = -errno;
			continue;
		}
		ret[i].id = info.id;
		ret[i].run_cnt = info.run_cnt;
		ret[i].run_ns = info.run_time_ns;
		ret[i].misses = info.recursion_misses;
	}
	return r;
}

/*
 * A cumulative kernel counter that went backwards (maps recreated by a
 * platform loader) gives no delta this window; it is counted, not hidden.
 */
static uint64_t
delta_of(struct window_bpf *wb, uint64_t now, uint64_t then)
{
	if (now < then) {
		wb->counter_regressions++;
		return 0;
	}
	return now - then;
}

/*
 * One window's part: drain, reduce into wb, counters as deltas since the
 * last window. A failed drain is counted in wb; its data stays in the
 * kernel for the next one.
 */
int
bpf_sched_window(struct bpf_sched *bs, struct window_bpf *wb, unsigned hz)
{
	return bpf_sched_window_reduce(bs, wb, hz,
	    bpf_sched_drain(bs, &bs->batch));
}

/*
 * The second half of bpf_sched_window, on the loop: drained is what the
 * drain of bs->batch returned (bpf_sched_drain, or bpf_sched_collect on
 * another thread after the loop's bpf_sched_flip).
 */
int
bpf_sched_window_reduce(struct bpf_sched *bs, struct window_bpf *wb,
    unsigned hz, int drained)
{
	struct bpf_sched_batch *b = &bs->batch;
	struct vbpf_prog_stat ps[VITALS_BPF_PROGS];
	const uint64_t *t = b->tot;
	unsigned i;
	int r;

	if ((r = drained) < 0) {
		wb->drain_fail++;
		return r;
	}
	if (b->incomplete)
		wb->drain_fail++;
	if ((r = window_bpf_add(wb, b, hz)) < 0) {
		wb->drain_fail++;
		return r;
	}
	wb->drains++;
	wb->drain_ns += b->drain_ns;
	wb->entries += b->ntids + b->nprocs + b->nuids;
	wb->pre_ns += bs->pre_ns;
	bs->pre_ns = 0;
	wb->switches += delta_of(wb, t[TOT_SWITCHES], bs->tot[TOT_SWITCHES]);
	wb->no_slice += delta_of(wb, t[TOT_NO_SLICE], bs->tot[TOT_NO_SLICE]);
	wb->wakeups += delta_of(wb, t[TOT_WAKEUPS], bs->tot[TOT_WAKEUPS]);
	wb->lost_ns += delta_of(wb, t[TOT_LOST_S0] + t[TOT_LOST_S1],
	    bs->tot[TOT_LOST_S0] + bs->tot[TOT_LOST_S1]);
	wb->full_tid += delta_of(wb, t[TOT_TID_FULL], bs->tot[TOT_TID_FULL]);
	wb->full_proc += delta_of(wb, t[TOT_PROC_FULL], bs->tot[TOT_PROC_FULL]);
	wb->full_uid += delta_of(wb, t[TOT_UID_FULL], bs->tot[TOT_UID_FULL]);
	wb->no_storage += delta_of(wb, t[TOT_NO_STORAGE],
	    bs->tot[TOT_NO_STORAGE]);
	wb->rq_samples += delta_of(wb, t[TOT_RQ_SAMPLES],
	    bs->tot[TOT_RQ_SAMPLES]);
	wb->thr_exited += delta_of(wb, t[TOT_EXITED], bs->tot[TOT_EXITED]);
	wb->procs_exited += delta_of(wb, t[TOT_PROC_EXITED],
	    bs->tot[TOT_PROC_EXITED]);
	wb->oncpu_total += delta_of(wb, t[TOT_ONCPU_S0] + t[TOT_ONCPU_S1],
	    bs->tot[TOT_ONCPU_S0] + bs->tot[TOT_ONCPU_S1]);
	wb->rq_notid += delta_of(wb, t[TOT_RQ_NOTID], bs->tot[TOT_RQ_NOTID]);
	window_bpf_slots(wb, b, bs->ldr ? 0 : bs->slot_cap);
	wb->rq_source = bpf_sched_rq(bs);
	if (b->diff) {
		wb->diff_drains++;
		wb->unattributed_ns += b->unattributed_ns;
		wb->evicted += b->evicted;
		wb->recreated += b->recreated;
		wb->retired += b->retired;
	}
	memcpy(bs->tot, t, sizeof(bs->tot));
	if (bs->stats && bpf_sched_prog_stats(bs, ps) == 0) {
		wb->stats = true;
		for (i = 0; i < VITALS_BPF_PROGS; i++) {
			wb->prog_runs[i] += delta_of(wb, ps[i].run_cnt,
			    bs->prog[i].run_cnt);
			wb->prog_ns[i] += delta_of(wb, ps[i].run_ns,
			    bs->prog[i].run_ns);
		}
		memcpy(bs->prog, ps, sizeof(ps));
	}
	return 0;
}

const struct bpf_sched_batch *
bpf_sched_last_batch(const struct bpf_sched *bs)
{
	return bs ? &bs->batch : NULL;
}

/*
 * The maps a partial process sample reads (doc/bpf.md, "Event-driven
 * samples"): only of an object this daemon loaded or reused with its own
 * layout, whose sides it flips; -EOPNOTSUPP for the platform loader's
 * read-only pins. The fds stay bs's.
 */
int
bpf_sched_event_fds(const struct bpf_sched *bs, int *ret_ctl, int *ret_tot,
    int ret_tid[2], int ret_proc[2], int ret_slot[2], int *ret_nslot)
{
	if (bs == NULL || bs->ldr)
		return -EOPNOTSUPP;
	ret_slot[0] = bs->map_fd[SM_SLOT0];
	ret_slot[1] = bs->map_fd[SM_SLOT1];
	*ret_nslot = bs->map_fd[SM_NSLOT];
	*ret_ctl = bs->map_fd[SM_CTL];
	*ret_tot = bs->map_fd[SM_TOT];
	ret_tid[0] = bs->map_fd[SM_TID0];
	ret_tid[1] = bs->map_fd[SM_TID1];
	ret_proc[0] = bs->map_fd[SM_PROC0];
	ret_proc[1] = bs->map_fd[SM_PROC1];
	return 0;
}

/* A side whose slot count is at most this sent no thread to its hash
 * (doc/bpf.md, "Event-driven samples"). */
unsigned
bpf_sched_slot_cap(const struct bpf_sched *bs)
{
	return bs == NULL || bs->ldr ? 0 : bs->slot_cap;
}

/* Where the running programs take run-queue waits from (enum vbpf_rq):
 * the platform loader's object stamps wakeups (bpf/aosp/vitalsd.c). */
unsigned
bpf_sched_rq(const struct bpf_sched *bs)
{
	if (bs == NULL)
		return VBPF_RQ_UNKNOWN;
	return !bs->ldr && (bs->meta_flags & SCHED_META_RQ_SI) ?
	    VBPF_RQ_SCHED_INFO :
	    VBPF_RQ_WAKEUP;
}

/* Heap the reader holds between drains: its scratch, the batch's rows
 * and the read-only drain's snapshots. */
uint64_t
bpf_sched_bytes(const struct bpf_sched *bs)
{
	const struct bpf_sched_batch *b;

	if (bs == NULL)
		return 0;
	b = &bs->batch;
	return sizeof(*bs) + bs->kcap + bs->vcap + bs->slots_cap +
	    bpf_ldr_bytes(bs) + b->tids_cap * sizeof(*b->tids) +
	    b->procs_cap * sizeof(*b->procs) + b->uids_cap * sizeof(*b->uids);
}

/*
 * The batch's rows freed once the window took them (reduce, then wcpu):
 * at 2,100 tasks they are ~1 MiB (a row per thread with its run-queue
 * histogram) that would otherwise sit unused for a window's length. The
 * next drain grows them again from 256 rows; the totals, generation and
 * side stay for the next window's deltas.
 */
void
bpf_sched_batch_trim(struct bpf_sched *bs)
{
	struct bpf_sched_batch *b;

	if (bs == NULL)
		return;
	b = &bs->batch;
	free(b->tids);
	free(b->procs);
	free(b->uids);
	b->tids = NULL;
	b->procs = NULL;
	b->uids = NULL;
	b->ntids = b->nprocs = b->nuids = 0;
	b->tids_cap = b->procs_cap = b->uids_cap = 0;
}

struct bpf_sched_batch *
bpf_sched_batch_of(struct bpf_sched *bs)
{
	return &bs->batch;
}

bool
bpf_sched_needs_grace(const struct bpf_sched *bs)
{
	return bs != NULL && !bs->ldr;
}

/* Only what changed is written: a frequency step is one update. */
int
bpf_sched_set_scale(struct bpf_sched *bs, const uint32_t *cap,
    const uint32_t *freq, unsigned n)
{
	uint32_t i;
	int r = 0;

	if (bs == NULL || bs->ldr)
		return -EOPNOTSUPP;
	for (i = 0; i < n && i < VITALS_SCHED_CPUS; i++) {
		struct sched_scale v = { .cap = cap[i], .freq = freq[i] };

		if (bs->scale_valid && bs->scale[i].cap == v.cap &&
		    bs->scale[i].freq == v.freq)
			continue;
		if (bpf_map_update_elem(bs->map_fd[SM_SCALE], &i, &v, BPF_ANY) <
		    0) {
			r = -errno;
			continue;
		}
		bs->scale[i] = v;
	}
	bs->scale_valid = r == 0;
	return r;
}

#else /* !HAVE_BPF */

const struct bpf_sched_batch *
bpf_sched_last_batch(const struct bpf_sched *bs)
{
	(void)bs;
	return NULL;
}

void
bpf_sched_batch_trim(struct bpf_sched *bs)
{
	(void)bs;
}

uint64_t
bpf_sched_bytes(const struct bpf_sched *bs)
{
	(void)bs;
	return 0;
}

int
bpf_sched_event_fds(const struct bpf_sched *bs, int *ret_ctl, int *ret_tot,
    int ret_tid[2], int ret_proc[2], int ret_slot[2], int *ret_nslot)
{
	(void)bs;
	(void)ret_slot;
	(void)ret_nslot;
	(void)ret_ctl;
	(void)ret_tot;
	(void)ret_tid;
	(void)ret_proc;
	return -EOPNOTSUPP;
}

unsigned
bpf_sched_slot_cap(const struct bpf_sched *bs)
{
	(void)bs;
	return 0;
}

unsigned
bpf_sched_rq(const struct bpf_sched *bs)
{
	(void)bs;
	return VBPF_RQ_UNKNOWN;
}

struct bpf_sched_batch *
bpf_sched_batch_of(struct bpf_sched *bs)
{
	(void)bs;
	return NULL;
}

bool
bpf_sched_needs_grace(const struct bpf_sched *bs)
{
	(void)bs;
	return false;
}

int
bpf_sched_set_scale(struct bpf_sched *bs, const uint32_t *cap,
    const uint32_t *freq, unsigned n)
{
	(void)bs;
	(void)cap;
	(void)freq;
	(void)n;
	return -EOPNOTSUPP;
}

int
bpf_sched_drain(struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	(void)bs;
	(void)b;
	return -EOPNOTSUPP;
}

void
bpf_sched_batch_release(struct bpf_sched_batch *b)
{
	memset(b, 0, sizeof(*b));
}

int
bpf_sched_flip(struct bpf_sched *bs)
{
	(void)bs;
	return -EOPNOTSUPP;
}

int
bpf_sched_flip_early(struct bpf_sched *bs)
{
	(void)bs;
	return -EOPNOTSUPP;
}

int
bpf_sched_collect(struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	(void)bs;
	(void)b;
	return -EOPNOTSUPP;
}

int
bpf_sched_window_reduce(struct bpf_sched *bs, struct window_bpf *wb,
    unsigned hz, int drained)
{
	(void)bs;
	(void)wb;
	(void)hz;
	(void)drained;
	return -EOPNOTSUPP;
}

int
bpf_sched_window(struct bpf_sched *bs, struct window_bpf *wb, unsigned hz)
{
	(void)bs;
	(void)wb;
	(void)hz;
	return -EOPNOTSUPP;
}

int
bpf_sched_prog_stats(struct bpf_sched *bs,
    struct vbpf_prog_stat ret[VITALS_BPF_PROGS])
{
	(void)bs;
	memset(ret, 0, VITALS_BPF_PROGS * sizeof(*ret));
	return -EOPNOTSUPP;
}

#endif /* HAVE_BPF */
