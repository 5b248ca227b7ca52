/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched_switch accounting's array slots (layout 11, doc/bpf.md "Array
 * slots") against the running kernel: threads take slots at a normal load;
 * past a tiny capacity they go to the hash and the totals stay exact; a
 * thread's slot is folded at its free (its task storage still readable
 * there); a setuid thread takes a second slot; and the partial read of the
 * live side (taskiter_partial over the slots) names the groups the drain
 * then returns, walking the hash exactly when a thread can be there (the
 * hash skip). Needs root (BPF, bpffs); exits 77 only when not root.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/bpf_common.h"
#include "sched/sched.h"
#include "taskiter/taskiter.h"
#include "bpf_sched_fix.h"
#include "testutil.h"
#include "vitalsd.h"

#include "../bpf/sched/sched.bpf.h"

static void
burn_ms(unsigned ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (volatile unsigned k = 0; k < 10000; k++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while (
	    (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 <
	    ms);
}

static const char *fold_why(struct bpf_sched *bs, pid_t tid);

/* Drain both sides: from here on each side holds only what follows. */
static void
drain_both(struct bpf_sched *bs, struct bpf_sched_batch *b)
{
	ck_assert_int_eq(bpf_sched_drain(bs, b), 0);
	ck_assert_int_eq(bpf_sched_drain(bs, b), 0);
}

/* The live side's slots of tid (read through the pins), up to max. */
static unsigned
live_slots(struct bpf_sched *bs, pid_t tid, struct sched_slot *ret,
    unsigned max)
{
	int ctl, tot, tidfd[2], proc[2], slot[2], nslot;
	struct sched_ctl c;
	struct sched_nslot ns;
	uint32_t zero = 0, side, i, got = 0;
	struct sched_slot sl;

	ck_assert_int_eq(bpf_sched_event_fds(bs, &ctl, &tot, tidfd, proc, slot,
			     &nslot),
	    0);
	ck_assert_int_eq(bpf_map_lookup_elem(ctl, &zero, &c), 0);
	side = (uint32_t)(c.gen & 1);
	ck_assert_int_eq(bpf_map_lookup_elem(nslot, &side, &ns), 0);
	for (i = 0; i < ns.count && i < VITALS_SCHED_SLOTS; i++) {
		ck_assert_int_eq(bpf_map_lookup_elem(slot[side], &i, &sl), 0);
		if (sl.ready == c.gen + 1 && (pid_t)sl.key.tid == tid &&
		    got < max)
			ret[got++] = sl;
	}
	return got;
}

static uint64_t
rows_ns(const struct bpf_sched_batch *b, pid_t tid, unsigned *ret_rows)
{
	uint64_t ns = 0;
	size_t i;

	*ret_rows = 0;
	for (i = 0; i < b->ntids; i++)
		if (b->tids[i].tid == tid) {
			ns += b->tids[i].oncpu_ns;
			(*ret_rows)++;
		}
	return ns;
}

/* Σ rows + uid exited/overflow + lost == the side's ONCPU since base. */
struct exact {
	uint64_t base_oncpu[2], base_lost[2], drained[2];
};

static void
exact_base(struct exact *e, const struct bpf_sched_batch *b)
{
	unsigned s = b->side;

	e->base_oncpu[s] = b->tot[s ? TOT_ONCPU_S1 : TOT_ONCPU_S0];
	e->base_lost[s] = b->tot[s ? TOT_LOST_S1 : TOT_LOST_S0];
	e->drained[s] = 0;
}

static void
exact_check(struct exact *e, const struct bpf_sched_batch *b)
{
	unsigned s = b->side;
	uint64_t sum = 0;
	size_t i;

	ck_assert(!b->incomplete);
	for (i = 0; i < b->ntids; i++)
		sum += b->tids[i].oncpu_ns;
	for (i = 0; i < b->nuids; i++)
		sum += b->uids[i].exited_ns + b->uids[i].overflow_ns;
	e->drained[s] += sum;
	ck_assert_msg(e->drained[s] +
		    (b->tot[s ? TOT_LOST_S1 : TOT_LOST_S0] - e->base_lost[s]) ==
		b->tot[s ? TOT_ONCPU_S1 : TOT_ONCPU_S0] - e->base_oncpu[s],
	    "side %u: drained %llu, kernel %llu", s,
	    (unsigned long long)e->drained[s],
	    (unsigned long long)(b->tot[s ? TOT_ONCPU_S1 : TOT_ONCPU_S0] -
		e->base_oncpu[s]));
}

/*
 * The loader opened with o, both sides drained; with e, each side's
 * totals taken as the base the exactness checks count from.
 */
static struct bpf_sched *
open_drained(const struct bpf_sched_opts *o, struct bpf_sched_batch *b,
    struct exact *e)
{
	struct bpf_sched *bs;
	unsigned i;

	bs = bsf_open_expect(o, VBPF_ON_LOADED, NULL, 0);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(bpf_sched_drain(bs, b), 0);
		if (e)
			exact_base(e, b);
	}
	return bs;
}

static void *
short_thread(void *arg)
{
	(void)arg;
	burn_ms(1);
	usleep(500);
	burn_ms(1);
	return NULL;
}

/* n threads that run, block and end; the drains checked exact. */
static void
threads_and_drains(struct bpf_sched *bs, struct bpf_sched_batch *b,
    struct exact *e, unsigned rounds, uint32_t *ret_max_count,
    uint32_t *ret_slots, size_t *ret_rows)
{
	pthread_t t[16];
	unsigned r, i;

	*ret_max_count = *ret_slots = 0;
	*ret_rows = 0;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < 16; i++)
			ck_assert_int_eq(pthread_create(&t[i], NULL,
					     short_thread, NULL),
			    0);
		usleep(300); /* some of them switched out, still alive */
		ck_assert_int_eq(bpf_sched_drain(bs, b), 0);
		exact_check(e, b);
		if (b->slot_count > *ret_max_count)
			*ret_max_count = b->slot_count;
		*ret_slots += b->slots;
		*ret_rows += b->ntids;
		for (i = 0; i < 16; i++)
			pthread_join(t[i], NULL);
	}
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(bpf_sched_drain(bs, b), 0);
		exact_check(e, b);
		*ret_slots += b->slots;
		*ret_rows += b->ntids;
	}
}

/* Slots are what a normal load uses; the drain is exact over them. */
START_TEST(test_slots_used)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct exact e;
	struct bpf_sched *bs;
	uint32_t maxc, slots;
	size_t rows;

	bs = open_drained(&o, &b, &e);
	threads_and_drains(bs, &b, &e, 10, &maxc, &slots, &rows);
	fprintf(stderr, "slots used: count up to %u, %u slot rows of %zu\n",
	    maxc, slots, rows);
	ck_assert_uint_gt(maxc, 0);
	ck_assert_uint_gt(slots, 0);
	/* nothing near the capacity: every row is a slot's */
	ck_assert_uint_lt(maxc, VITALS_SCHED_SLOTS);
	ck_assert_uint_eq(slots, rows);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/* Past a capacity of 2 the threads go to the hash; nothing is lost. */
/*
 * A drain skipped (a flip with no collect: a failed barrier, a close that
 * never reached its flip) leaves its side's slots and count; the side is
 * live again two flips later and its threads take new slots after them.
 * The next drain of the side takes both generations' slots: the sums stay
 * exact (without it the skipped window's time of every thread in a slot
 * was lost).
 */
START_TEST(test_skipped_drain_kept)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct exact e;
	struct bpf_sched *bs;
	unsigned s, rows;
	pid_t self = (pid_t)gettid();
	uint64_t ns;

	bs = open_drained(&o, &b, &e);
	burn_ms(30);
	usleep(2000); /* switched out: the time is in this side's slot */
	ck_assert_int_eq(bpf_sched_flip(bs), 0); /* its drain skipped */
	burn_ms(2);
	usleep(2000);
	ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
	exact_check(&e, &b);
	s = b.side;
	burn_ms(2);
	usleep(2000);
	ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
	ck_assert_uint_ne(b.side, s);
	exact_check(&e, &b);
	ns = rows_ns(&b, self, &rows);
	fprintf(stderr, "skipped drain: this thread %u rows, %llu ns\n", rows,
	    (unsigned long long)ns);
	ck_assert_uint_ge(ns, 30000000ull); /* the skipped window's 30 ms */
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

START_TEST(test_overflow_to_hash)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct exact e;
	struct bpf_sched *bs;
	uint32_t maxc, slots;
	size_t rows;

	o.slot_cap = 2;
	bs = open_drained(&o, &b, &e);
	threads_and_drains(bs, &b, &e, 10, &maxc, &slots, &rows);
	fprintf(stderr, "capacity 2: count up to %u, %u slot rows of %zu\n",
	    maxc, slots, rows);
	ck_assert_uint_gt(maxc, 2);	     /* allocations went past it */
	ck_assert_uint_le(slots, 2 * 12);    /* at most 2 per drain */
	ck_assert_uint_gt(rows, slots + 16); /* the rest from the hash */
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

static void *
exiting_thread(void *arg)
{
	pid_t *tid = arg;

	*tid = (pid_t)gettid();
	burn_ms(20);
	usleep(1000); /* a switch-out: its slot is made */
	burn_ms(5);
	return NULL;
}

/*
 * A thread that ran and ended inside one window: its slot is marked
 * folded at its free, which needs its task storage there (the slot's
 * index is only in it), and its time is in its uid's exited figures,
 * not in a thread row. The kernel may hold a thread's free back for
 * seconds or longer (doc/bpf.md, "Array slots": seen about once in a few
 * thousand exits on this VM): such a thread's slot stays whole for the
 * drain, and another thread is tried, up to three.
 */
START_TEST(test_folded_at_exit)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct sched_slot sl[4];
	struct bpf_sched *bs;
	uint64_t ex0, ns = 0, exited = 0;
	pthread_t t;
	pid_t tid = 0;
	unsigned n, rows, i, tries;

	bs = open_drained(&o, &b, NULL);
	ex0 = b.tot[TOT_EXITED];
	for (tries = 0; tries < 3; tries++) {
		ck_assert_int_eq(pthread_create(&t, NULL, exiting_thread, &tid),
		    0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		/* the free comes after an RCU grace period */
		for (i = 0; i < 200; i++) {
			n = live_slots(bs, tid, sl, 4);
			if (n == 1 && (sl[0].flags & SCHED_SLOT_FOLDED))
				break;
			tu_sleep_ms(10);
		}
		ck_assert_uint_eq(n, 1);
		if (sl[0].flags & SCHED_SLOT_FOLDED)
			break;
		fprintf(stderr, "exited thread %d: no free in 2 s (%s)\n",
		    (int)tid, fold_why(bs, tid));
	}
	ck_assert_msg(sl[0].flags & SCHED_SLOT_FOLDED,
	    "the slots of %u exited threads were not folded (%s)", tries,
	    fold_why(bs, tid));
	ck_assert_uint_ge(sl[0].v.oncpu_ns, 20 * 1000000ULL);
	ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
	ns = rows_ns(&b, tid, &rows);
	ck_assert_uint_eq(rows, 0); /* folded: no thread row */
	ck_assert_uint_eq(ns, 0);
	for (i = 0; i < b.nuids; i++)
		if (b.uids[i].uid == getuid())
			exited += b.uids[i].exited_ns;
	ck_assert_uint_ge(exited, sl[0].v.oncpu_ns);
	ck_assert_uint_gt(b.tot[TOT_EXITED], ex0);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/* A child whose credentials change between two slices of CPU. */
struct cred_child {
	pid_t pid;
	int rep[2], go[2];
};

/*
 * Fork a child that burns 10 ms and sleeps (a switch-out), takes uid or
 * (gid) gid 4321, burns and sleeps again, then waits for cred_child_end;
 * back when it has done all but the wait.
 */
static void
cred_child_start(struct cred_child *k, bool gid)
{
	char c;

	ck_assert_int_eq(pipe(k->rep), 0);
	ck_assert_int_eq(pipe(k->go), 0);
	k->pid = fork();
	ck_assert_int_ge(k->pid, 0);
	if (k->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		burn_ms(10);
		usleep(1000);
		if ((gid ? setresgid(4321, 4321, 4321) :
			   setresuid(4321, 4321, 4321)) < 0)
			_exit(1);
		burn_ms(10);
		usleep(1000);
		(void)!write(k->rep[1], "x", 1);
		(void)!read(k->go[0], &c, 1);
		_exit(0);
	}
	ck_assert_int_eq(read(k->rep[0], &c, 1), 1);
}

static void
cred_child_end(struct cred_child *k)
{
	int st;

	(void)!write(k->go[1], "x", 1);
	ck_assert_int_eq(waitpid(k->pid, &st, 0), k->pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(k->rep[0]);
	close(k->rep[1]);
	close(k->go[0]);
	close(k->go[1]);
}

/* A thread that changes its real uid mid-window takes a second slot:
 * per-uid sums stay exact, as with the hash's second key. */
START_TEST(test_setuid_second_slot)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct sched_slot sl[4];
	struct cred_child k;
	struct bpf_sched *bs;
	unsigned n, i, rows;
	bool u0 = false, u1 = false;
	pid_t pid;

	bs = open_drained(&o, &b, NULL);
	cred_child_start(&k, false);
	pid = k.pid;
	n = live_slots(bs, pid, sl, 4);
	for (i = 0; i < n; i++) {
		u0 |= sl[i].key.uid == 0;
		u1 |= sl[i].key.uid == 4321;
	}
	ck_assert_msg(n == 2 && u0 && u1, "%u slots of %d (uid 0 %d, 4321 %d)",
	    n, (int)pid, u0, u1);
	ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
	(void)rows_ns(&b, pid, &rows);
	ck_assert_uint_eq(rows, 2);
	cred_child_end(&k);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/*
 * Layout 14: a slot is kept while the thread's credentials are the same
 * object (task->real_cred), which is read without its uid. A change that
 * keeps the real uid (setresgid) still makes new credentials, so the
 * thread takes a second slot under the same key; the window's settle
 * sums the two into one thread row, its time whole.
 */
START_TEST(test_setgid_second_slot_one_row)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct sched_slot sl[4];
	struct cred_child k;
	struct window_bpf wb;
	struct bpf_sched *bs;
	unsigned n, i, rows = 0;
	uint64_t slots_ns = 0, row_ns = 0;
	pid_t pid;

	bs = open_drained(&o, &b, NULL);
	cred_child_start(&k, true);
	pid = k.pid;
	n = live_slots(bs, pid, sl, 4);
	ck_assert_msg(n == 2, "%u slots of %d", n, (int)pid);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(sl[i].key.uid, getuid());
		ck_assert_uint_eq(sl[i].key.start_ns, sl[0].key.start_ns);
		slots_ns += sl[i].v.oncpu_ns;
	}
	ck_assert_uint_ge(slots_ns, 20 * 1000000ULL);
	/* the daemon's path: the drain reduced into a window's part */
	memset(&wb, 0, sizeof(wb));
	ck_assert_int_eq(bpf_sched_window(bs, &wb, 100), 0);
	for (i = 0; i < wb.nthreads; i++)
		if (wb.thread[i].tid == pid) {
			rows++;
			row_ns += wb.thread[i].oncpu_ns;
			ck_assert_uint_eq(wb.thread[i].uid, getuid());
		}
	ck_assert_uint_eq(rows, 1);
	/* its switch-out into read() may come after the slots were read */
	ck_assert_uint_ge(row_ns, slots_ns);
	ck_assert_uint_lt(row_ns, slots_ns + 50 * 1000000ULL);
	window_bpf_release(&wb);
	cred_child_end(&k);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/* 16 short threads started; usleep: some switched out, still alive */
static void
start_16(pthread_t t[16])
{
	unsigned i;

	for (i = 0; i < 16; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, short_thread,
				     NULL),
		    0);
	usleep(300);
}

static void
join_16(pthread_t t[16])
{
	unsigned i;

	for (i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
}

/*
 * The slot figures a window reports (BpfHealth.slot_*): under a real
 * population they are non-zero and consistent: rows from slots <= slots
 * taken <= the capacity; rows from slots + rows from the hash = the thread
 * rows the drains read. At capacity 4 (_i 1) the sides fill: threads
 * overflow to the hash and the full drains are counted; at the full
 * capacity (_i 0) nothing overflows.
 */
START_TEST(test_window_slot_figures)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct window_bpf wb, sum;
	struct bpf_sched *bs;
	pthread_t t[16];
	uint32_t cap = _i ? 4 : VITALS_SCHED_SLOTS;
	uint64_t rows = 0, slots = 0;
	unsigned r;

	o.slot_cap = _i ? 4 : 0;
	bs = open_drained(&o, &b, NULL);
	memset(&sum, 0, sizeof(sum));
	/* the daemon's path: a window's drain reduced (bpf_sched_window) */
	for (r = 0; r < 6; r++) {
		start_16(t);
		memset(&wb, 0, sizeof(wb));
		ck_assert_int_eq(bpf_sched_window(bs, &wb, 100), 0);
		join_16(t);
		ck_assert_uint_eq(wb.drains, 1);
		ck_assert_uint_eq(wb.slot_cap, cap);
		ck_assert_uint_le(wb.slot_rows, wb.slots_taken);
		ck_assert_uint_le(wb.slots_taken, cap);
		ck_assert_uint_le(wb.nthreads,
		    wb.slot_rows + wb.slot_hash_rows);
		ck_assert_uint_le(wb.slot_rows + wb.slot_hash_rows, wb.entries);
		ck_assert_int_eq(window_bpf_merge(&sum, &wb), 0);
		window_bpf_release(&wb);
	}
	fprintf(stderr,
	    "cap %u: %llu slot rows, %llu taken, %llu hash rows, %llu "
	    "overflowed, %u full drains\n",
	    cap, (unsigned long long)sum.slot_rows,
	    (unsigned long long)sum.slots_taken,
	    (unsigned long long)sum.slot_hash_rows,
	    (unsigned long long)sum.slot_overflow, sum.slot_full_drains);
	ck_assert_uint_gt(sum.slot_rows, 0);
	ck_assert_uint_le(sum.slots_taken, 6ull * cap);
	if (_i) {
		ck_assert_uint_gt(sum.slot_full_drains, 0);
		ck_assert_uint_gt(sum.slot_overflow, 0);
		/* the overflowed threads still alive are read from the hash
		 * (those that ended were folded at their free: no row) */
		ck_assert_uint_gt(sum.slot_hash_rows, 0);
	} else {
		ck_assert_uint_eq(sum.slot_full_drains, 0);
		ck_assert_uint_eq(sum.slot_overflow, 0);
	}
	window_bpf_release(&sum);
	/* a drain's own rows against the figures it gives */
	memset(&wb, 0, sizeof(wb));
	for (r = 0; r < 4; r++) {
		start_16(t);
		ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
		join_16(t);
		window_bpf_slots(&wb, &b, cap);
		rows += b.ntids;
		slots += b.slots;
	}
	ck_assert_uint_gt(wb.slot_rows, 0);
	ck_assert_uint_gt(rows, 0);
	ck_assert_uint_le(wb.slot_rows, wb.slots_taken);
	if (_i)
		/* a drain reads at most the capacity's slots */
		ck_assert_uint_le(slots, 4ull * cap);
	else
		/* below the capacity no thread goes to the hash: every
		 * thread row of the drains came from a slot */
		ck_assert_uint_eq(slots, rows);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

static bool
snap_has(const struct taskiter_snap *s, pid_t tgid)
{
	size_t j;

	for (j = 0; j < s->nprocs; j++)
		if (s->procs[j].tgid == tgid)
			return true;
	return false;
}

enum { KIDS = 6 };

/* Children that each ran ~5 ms since they were forked and are now blocked
 * in a read until kids_end. */
struct kids {
	pid_t pid[KIDS];
	int rep[2], go[2];
};

static void
kids_start(struct kids *k)
{
	unsigned i;
	char c;

	ck_assert_int_eq(pipe(k->rep), 0);
	ck_assert_int_eq(pipe(k->go), 0);
	for (i = 0; i < KIDS; i++) {
		k->pid[i] = fork();
		ck_assert_int_ge(k->pid[i], 0);
		if (k->pid[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			burn_ms(5);
			usleep(500);
			(void)!write(k->rep[1], "x", 1);
			(void)!read(k->go[0], &c, 1);
			_exit(0);
		}
	}
	for (i = 0; i < KIDS; i++)
		ck_assert_int_eq(read(k->rep[0], &c, 1), 1);
	tu_sleep_ms(5); /* each blocked in its read */
}

static void
kids_end(struct kids *k)
{
	unsigned i;
	int st;

	for (i = 0; i < KIDS; i++)
		(void)!write(k->go[1], "x", 1);
	for (i = 0; i < KIDS; i++)
		ck_assert_int_eq(waitpid(k->pid[i], &st, 0), k->pid[i]);
	close(k->rep[0]);
	close(k->rep[1]);
	close(k->go[0]);
	close(k->go[1]);
}

/* The task iterator on bs's maps, its partial read loaded. */
static struct taskiter *
partial_open(struct bpf_sched *bs)
{
	struct taskiter_events ev;
	struct taskiter *ti;
	enum scanner_why why;
	enum partial_why pwhy;
	int perr;

	bsf_events_of(bs, &ev);
	ck_assert_int_eq(taskiter_open_ev((unsigned)sysconf(_SC_CLK_TCK),
			     "/sys", &ev, &ti, &why, &pwhy, &perr),
	    0);
	ck_assert_msg(pwhy == PARTIAL_WHY_NONE, "partial: %s (%s)",
	    partial_why_name(pwhy), strerror(perr));
	return ti;
}

/* The live side's partial read (maps only) names every child. */
static void
partial_has_kids(struct taskiter *ti, const struct kids *k,
    struct taskiter_end *ret_end)
{
	const struct taskiter_snap *snap;
	uint64_t gen, doubt;
	unsigned i;

	ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
	ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1),
			     TASKITER_READ_NO_CPUS, &snap, ret_end),
	    0);
	for (i = 0; i < KIDS; i++)
		ck_assert_msg(snap_has(snap, k->pid[i]),
		    "child %d not in the partial read", (int)k->pid[i]);
}

/*
 * The live side's reader (the partial read, maps only) names every child
 * that ran since the flip and is blocked now; the drain that follows has a
 * row for each, from a slot (_i 0) or, at capacity 1, from the hash for
 * all but one (_i 1).
 */
START_TEST(test_live_reader_agrees)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	struct taskiter_end end;
	struct taskiter *ti;
	struct bpf_sched *bs;
	struct kids k;
	unsigned i, rows;

	if (_i == 1)
		o.slot_cap = 1;
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	ti = partial_open(bs);
	drain_both(bs, &b);
	kids_start(&k);
	partial_has_kids(ti, &k, &end);
	ck_assert_int_eq(bpf_sched_drain(bs, &b), 0);
	for (i = 0; i < KIDS; i++) {
		(void)rows_ns(&b, k.pid[i], &rows);
		ck_assert_uint_ge(rows, 1);
	}
	if (_i == 0)
		ck_assert_uint_ge(b.slots, KIDS);
	else
		ck_assert_uint_le(b.slots, 1);
	kids_end(&k);
	taskiter_free(ti);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/* The live side's slot count, and whether tid has a hash entry there. */
static uint32_t
live_count(struct bpf_sched *bs, pid_t tid, bool *ret_in_hash)
{
	int ctl, tot, tidfd[2], proc[2], slot[2], nslot;
	struct sched_tid_key k, *prev = NULL;
	struct sched_nslot ns;
	struct sched_ctl c;
	uint32_t zero = 0, side;

	ck_assert_int_eq(bpf_sched_event_fds(bs, &ctl, &tot, tidfd, proc, slot,
			     &nslot),
	    0);
	ck_assert_int_eq(bpf_map_lookup_elem(ctl, &zero, &c), 0);
	side = (uint32_t)(c.gen & 1);
	ck_assert_int_eq(bpf_map_lookup_elem(nslot, &side, &ns), 0);
	*ret_in_hash = false;
	while (bpf_map_get_next_key(tidfd[side], prev, &k) == 0) {
		if ((pid_t)k.tid == tid)
			*ret_in_hash = true;
		prev = &k;
	}
	return ns.count;
}

/* Why a freed thread's figures may still be live, for a failure's
 * message: each program's recursion misses, the storage and exit
 * counters, and where the thread still is. */
static const char *
fold_why(struct bpf_sched *bs, pid_t tid)
{
	static char why[320];
	struct vbpf_prog_stat ps[VITALS_BPF_PROGS];
	uint64_t tot[VITALS_BPF_TOT];
	struct sched_slot sl;
	size_t len = 0;
	bool in_hash;
	unsigned n, i;

	ck_assert_int_eq(bpf_sched_totals(bs, tot), 0);
	(void)bpf_sched_prog_stats(bs, ps);
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		len += (size_t)snprintf(why + len, sizeof(why) - len,
		    "%s misses %llu; ", vbpf_prog_name(i),
		    (unsigned long long)ps[i].misses);
	n = live_slots(bs, tid, &sl, 1);
	(void)live_count(bs, tid, &in_hash);
	snprintf(why + len, sizeof(why) - len,
	    "no_storage %llu, exited %llu; slot %u (flags %u), in hash %d",
	    (unsigned long long)tot[TOT_NO_STORAGE],
	    (unsigned long long)tot[TOT_EXITED], n, n ? sl.flags : 0,
	    (int)in_hash);
	return why;
}

/*
 * The hash skip (doc/bpf.md, "Event-driven samples"): a partial read
 * walks sched_tid<side> only when the side's slot count passed the
 * capacity. At the full capacity (_i 0) children that ran take slots and
 * the read skips the hash; at capacity 2 (_i 1), the slots taken before
 * they run, each child lives only in the hash, and the read must walk it
 * and name every one — a skip judged by any other capacity than the
 * accounting's (the map's 4,096, say) would drop them.
 */
START_TEST(test_hash_skip)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	const struct taskiter_snap *snap;
	struct taskiter_end end0, end;
	struct taskiter_events ev;
	struct sched_slot sl;
	struct taskiter *ti;
	struct bpf_sched *bs;
	struct kids k;
	unsigned i, tries;
	uint64_t gen, doubt;
	uint32_t count;
	bool in_hash;

	if (_i == 1)
		o.slot_cap = 2;
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	bsf_events_of(bs, &ev);
	ck_assert_uint_eq(ev.slot_cap, _i == 1 ? 2 : VITALS_SCHED_SLOTS);
	ti = partial_open(bs);
	drain_both(bs, &b);
	/* at capacity 2 the slots go first (this thread, the machine's) */
	for (tries = 0; _i == 1 && tries < 100; tries++) {
		if (live_count(bs, 0, &in_hash) >= 2)
			break;
		burn_ms(1);
		usleep(1000);
	}
	ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
	ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1),
			     TASKITER_READ_NO_CPUS, &snap, &end0),
	    0);
	kids_start(&k);
	for (i = 0; i < KIDS; i++) {
		count = live_count(bs, k.pid[i], &in_hash);
		if (_i == 0) {
			ck_assert_uint_le(count, VITALS_SCHED_SLOTS);
			ck_assert_uint_eq(live_slots(bs, k.pid[i], &sl, 1), 1);
			ck_assert(!in_hash);
		} else {
			/* only in the hash: no slot of this window */
			ck_assert_uint_gt(count, 2);
			ck_assert_uint_eq(live_slots(bs, k.pid[i], &sl, 1), 0);
			ck_assert_msg(in_hash, "child %d not in the hash",
			    (int)k.pid[i]);
		}
	}
	partial_has_kids(ti, &k, &end);
	if (_i == 0) {
		ck_assert_uint_eq(end.hash_skips, end0.hash_skips + 1);
		ck_assert_uint_eq(end.hash_walks, end0.hash_walks);
	} else {
		ck_assert_uint_eq(end.hash_skips, end0.hash_skips);
		ck_assert_uint_eq(end.hash_walks, end0.hash_walks + 1);
	}
	kids_end(&k);
	taskiter_free(ti);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

/* The worker of proc_skip_child: says its tid, blocks until told, ends. */
static volatile pid_t skip_wtid;

static void *
wait_then_end(void *arg)
{
	int fd = *(int *)arg;
	char c;

	burn_ms(1);
	skip_wtid = gettid();
	(void)!read(fd, &c, 1);
	burn_ms(1);
	return NULL;
}

/* A process whose main thread blocks for good while its worker waits for
 * a byte on wfd and ends; the worker's tid on rep once both are blocked. */
static void
proc_skip_child(int wfd, int rep)
{
	pthread_t t;
	pid_t tid;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pthread_create(&t, NULL, wait_then_end, &wfd) != 0)
		_exit(1);
	pthread_detach(t);
	while ((tid = skip_wtid) == 0)
		usleep(100);
	usleep(2000);
	(void)!write(rep, &tid, sizeof(tid));
	for (;;)
		pause();
}

/* Whether tid of pid ended and its figures left the live side (its slot
 * folded at its free; without a slot, its hash entry deleted), waiting up
 * to 5 s. */
static bool
folded_or_gone(struct bpf_sched *bs, pid_t pid, pid_t tid)
{
	struct sched_slot sl;
	char path[64];
	unsigned i;
	bool in_hash;

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	for (i = 0; i < 500 && access(path, F_OK) == 0; i++)
		tu_sleep_ms(10);
	for (i = 0; i < 500; i++) {
		if (live_slots(bs, tid, &sl, 1) == 1) {
			if (sl.flags & SCHED_SLOT_FOLDED)
				return true;
		} else if (i >= 30) { /* its last switch-out, its free */
			(void)live_count(bs, tid, &in_hash);
			if (!in_hash)
				return true;
		}
		tu_sleep_ms(10);
	}
	return false;
}

/*
 * The process-map skip (layout 12, doc/bpf.md "Event-driven samples"): a
 * group whose only thread that ran in the window was freed since is named
 * from that thread's folded slot, without a walk of the process map
 * (_i 0); one freed from the hash (capacity 2, _i 1) moves proc_other, and
 * the read walks the map and names the group from its entry. The child's
 * threads block before the flips, so the worker, woken after the first
 * read, ends the only thread of the group that ran in the new window. At
 * full capacity a read without a walk must name it (the machine's own
 * exits may move proc_other: up to ten tries). A worker whose free the
 * kernel holds back (test_folded_at_exit) proves nothing: another child
 * is tried, up to three such.
 */
START_TEST(test_proc_skip)
{
	struct bpf_sched_opts o = bsf_opts();
	struct bpf_sched_batch b = { 0 };
	const struct taskiter_snap *snap;
	struct taskiter_end end0, end;
	struct taskiter_events ev;
	struct sched_slot sl;
	struct taskiter *ti;
	struct bpf_sched *bs;
	enum scanner_why why;
	enum partial_why pwhy;
	unsigned tries, unwalked = 0, done = 0, late = 0;
	int wk[2], rep[2], perr, st;
	uint64_t gen, doubt;
	pid_t kid, wtid;
	bool in_hash;

	if (_i == 1)
		o.slot_cap = 2;
	bs = bsf_open_expect(&o, VBPF_ON_LOADED, NULL, 0);
	bsf_events_of(bs, &ev);
	ck_assert_int_eq(taskiter_open_ev((unsigned)sysconf(_SC_CLK_TCK),
			     "/sys", &ev, &ti, &why, &pwhy, &perr),
	    0);
	ck_assert_msg(pwhy == PARTIAL_WHY_NONE, "partial: %s (%s)",
	    partial_why_name(pwhy), strerror(perr));
	for (tries = 0;
	     tries < 10 && late < 3 && (_i == 1 ? done == 0 : unwalked == 0);
	     tries++) {
		ck_assert_int_eq(pipe(wk), 0);
		ck_assert_int_eq(pipe(rep), 0);
		kid = fork();
		ck_assert_int_ge(kid, 0);
		if (kid == 0)
			proc_skip_child(wk[0], rep[1]);
		ck_assert_int_eq(read(rep[0], &wtid, sizeof(wtid)),
		    sizeof(wtid));
		tu_sleep_ms(5);
		/* a window where no thread of the child ran yet */
		drain_both(bs, &b);
		if (_i == 1) /* the slots taken first */
			while (live_count(bs, 0, &in_hash) < 2)
				usleep(1000);
		/* the frees of the machine's tasks that ended before the
		 * flips (no slot of this window: proc_other) land now, and
		 * the first read takes them */
		tu_sleep_ms(100);
		ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt), 0);
		ck_assert_int_eq(taskiter_read_partial(ti, (unsigned)(gen & 1),
				     TASKITER_READ_NO_CPUS, &snap, &end0),
		    0);
		ck_assert_msg(!snap_has(snap, kid), "child %d named idle",
		    (int)kid);
		(void)!write(wk[1], "x", 1); /* the worker runs and ends */
		if (!folded_or_gone(bs, kid, wtid)) {
			/* its free held back (test_folded_at_exit): another
			 * child, up to three such */
			fprintf(stderr, "worker %d: no free in 5 s (%s)\n",
			    (int)wtid, fold_why(bs, wtid));
			late++;
		} else {
			if (_i == 1) /* it was in the hash, not a slot */
				ck_assert_uint_eq(live_slots(bs, wtid, &sl, 1),
				    0);
			ck_assert_int_eq(taskiter_ev_state(ti, &gen, &doubt),
			    0);
			ck_assert_int_eq(taskiter_read_partial(ti,
					     (unsigned)(gen & 1),
					     TASKITER_READ_NO_CPUS, &snap,
					     &end),
			    0);
			ck_assert_msg(snap_has(snap, kid),
			    "child %d lost a thread, not in the partial read",
			    (int)kid);
			if (_i == 1)
				ck_assert_uint_gt(end.proc_walks,
				    end0.proc_walks);
			else if (end.proc_walks == end0.proc_walks)
				unwalked++;
			done++;
		}
		ck_assert_int_eq(kill(kid, SIGKILL), 0);
		ck_assert_int_eq(waitpid(kid, &st, 0), kid);
		close(wk[0]);
		close(wk[1]);
		close(rep[0]);
		close(rep[1]);
	}
	ck_assert_msg(done > 0, "no worker's free in %u tries", tries);
	if (_i == 0)
		ck_assert_msg(unwalked > 0,
		    "every read walked the process map (%u tries)", tries);
	taskiter_free(ti);
	bpf_sched_batch_release(&b);
	bpf_sched_free(bs);
}
END_TEST

static Suite *
bpf_slots_suite(void)
{
	Suite *s = suite_create("bpf_slots");
	TCase *tc = tcase_create("kernel");

	tcase_add_checked_fixture(tc, bsf_setup, bsf_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_slots_used);
	tcase_add_test(tc, test_skipped_drain_kept);
	tcase_add_test(tc, test_overflow_to_hash);
	tcase_add_test(tc, test_folded_at_exit);
	tcase_add_test(tc, test_setuid_second_slot);
	tcase_add_test(tc, test_setgid_second_slot_one_row);
	tcase_add_loop_test(tc, test_live_reader_agrees, 0, 2);
	tcase_add_loop_test(tc, test_hash_skip, 0, 2);
	tcase_add_loop_test(tc, test_proc_skip, 0, 2);
	tcase_add_loop_test(tc, test_window_slot_figures, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	if (!tu_need_root("bpffs and BPF loading"))
		return 77;
	if (bpf_check_bpffs("/sys/fs/bpf") < 0)
		(void)mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
	bsf_sweep_stale();
	return tu_run(bpf_slots_suite());
}
