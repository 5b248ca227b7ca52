/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace markers and the other decoded ftrace records turned into window
 * figures. No I/O: ftrace.c reads the kernel and hands records over in
 * timestamp order; this file parses the marker protocol, pairs slices and
 * counts.
 *
 * The marker protocol is the one Android's libcutils writes to trace_marker
 * (and Perfetto's systrace parser reads):
 *   B|pid|name            begin a slice on the writing thread
 *   E|pid  (or just E)    end the innermost open slice of the thread
 *   C|pid|name|value      counter
 *   S|pid|name|cookie     async begin,  F|pid|name|cookie  async end
 *   G|pid|track|name|cookie  track begin, H|pid|track|cookie track end
 *   I|pid|name            instant,      N|pid|track|name   track instant
 * pid is the writer's process (getpid()); the thread is the record's
 * common_pid. Pairing: B/E per thread stack, S/F by (pid, name, cookie),
 * G/H by (pid, track, cookie).
 *
 * A slice whose begin or end was lost (events overwritten, reader started
 * late, the thread exited) is incomplete: counted, never given a duration.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "trace/atrace_int.h"
#include "trace/phase.h"

#define TAB_MAX_SLICES 8192 /* distinct slice rows per window */
#define TAB_MAX_ASYNC 8192  /* async and track slices open at once */
#define TAB_MAX_COUNTERS 2048
#define TAB_MAX_THREADS 16384 /* threads with an open B or a wake time */
#define TAB_MAX_SMALL 4096    /* binder pairs, rq threads, gpu entries */

/* --------------------------------------------------------- the tracker */

static void
cur_unknown(struct atrace *at)
{
	size_t i;

	for (i = 0; i < ATRACE_CPUS; i++)
		at->cur[i] = -1;
}

int
atrace_new(struct atrace **ret)
{
	struct atrace *at;

	if ((at = calloc(1, sizeof(*at))) == NULL)
		return -ENOMEM;
	if ((at->w = calloc(1, WINDOW_TRACE_HEAD)) == NULL) {
		free(at);
		return -ENOMEM;
	}
	at->threads.esz = sizeof(struct thread_ent);
	at->threads.max = TAB_MAX_THREADS;
	at->async.esz = sizeof(struct async_ent);
	at->async.max = TAB_MAX_ASYNC;
	at->slices.esz = sizeof(struct slice_ent);
	at->slices.max = TAB_MAX_SLICES;
	at->counters.esz = sizeof(struct counter_ent);
	at->counters.max = TAB_MAX_COUNTERS;
	at->binder.esz = sizeof(struct binder_ent);
	at->binder.max = TAB_MAX_SMALL;
	at->rq.esz = sizeof(struct rq_ent);
	at->rq.max = TAB_MAX_SMALL;
	at->gpu.esz = sizeof(struct gpu_ent);
	at->gpu.max = TAB_MAX_SMALL;
	if (binder_new(&at->bl) < 0) {
		free(at->w);
		free(at);
		return -ENOMEM;
	}
	cur_unknown(at);
	*ret = at;
	return 0;
}

static void
threads_release(struct atrace *at)
{
	size_t i;

	for (i = 0; i < at->threads.cap; i++) {
		struct thread_ent *t = atab_at(&at->threads, i);

		if (t->h)
			free(t->stack);
	}
	atab_release(&at->threads);
}

struct atrace *
atrace_free(struct atrace *at)
{
	if (at == NULL)
		return NULL;
	threads_release(at);
	atab_release(&at->async);
	atab_release(&at->slices);
	atab_release(&at->counters);
	atab_release(&at->binder);
	atab_release(&at->rq);
	atab_release(&at->gpu);
	binder_free(at->bl);
	phase_free(at->ph);
	free(at->w);
	free(at);
	return NULL;
}

/* The tracker's heap: itself, its window head and its tables' room
 * (binder pairing and fault phases not counted) */
uint64_t
atrace_bytes(const struct atrace *at)
{
	const struct tab *t[] = { &at->threads, &at->async, &at->slices,
		&at->counters, &at->binder, &at->rq, &at->gpu };
	uint64_t n;
	size_t i;

	if (at == NULL)
		return 0;
	n = sizeof(*at) + WINDOW_TRACE_HEAD;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		n += (uint64_t)t[i]->cap * t[i]->esz;
	return n;
}

void
atrace_set_tgid_fn(struct atrace *at, int32_t (*fn)(int32_t, void *), void *arg)
{
	at->tgid_fn = fn;
	at->tgid_arg = arg;
}

void
atrace_phase_events(struct atrace *at, uint32_t enabled)
{
	if (at->ph)
		phase_set_events(at->ph, enabled);
}

/* Fault phases: the tracker is the ATrace tracker's from now on. */
void
atrace_set_phase(struct atrace *at, struct phase *ph)
{
	phase_free(at->ph);
	at->ph = ph;
}

void
atrace_set_gpu_mem_cb(struct atrace *at, ftrace_gpu_mem_fn fn, void *arg)
{
	at->gpu_fn = fn;
	at->gpu_arg = arg;
}

/* A name cut to 127 UTF-16 code units between two characters; control
 * characters and broken UTF-8 as name_clean() (util.c) says. */
static void
name_copy(struct atrace *at, char *dst, const char *src, size_t n)
{
	bool cut;

	n = name_utf16_prefix(src, n, VITALS_TRACE_NAME_UNITS, &cut);
	if (cut)
		at->w->names_cut++;
	(void)name_clean(dst, src, n);
}

static bool
thread_eq(const void *e, const void *key)
{
	return ((const struct thread_ent *)e)->tid == *(const int32_t *)key;
}

static struct thread_ent *
thread_get(struct atrace *at, int32_t tid, bool add)
{
	struct thread_ent *t;
	bool fresh;

	t = atab_get(&at->threads, atab_key(tid, 0, 0, NULL), thread_eq, &tid,
	    add, &fresh);
	if (t && fresh)
		t->tid = tid;
	return t;
}

/* Room for one more open slice: the stack doubles from 4 up to
 * VITALS_TRACE_DEPTH (a slice is ~400 bytes with its name). */
static int
thread_stack_grow(struct thread_ent *t)
{
	uint32_t cap = t->stack_cap ? t->stack_cap * 2 : 4;
	struct open_slice *s;

	if (cap > VITALS_TRACE_DEPTH)
		cap = VITALS_TRACE_DEPTH;
	if ((s = realloc(t->stack, cap * sizeof(*s))) == NULL)
		return -ENOMEM;
	t->stack = s;
	t->stack_cap = cap;
	return 0;
}

void
atrace_thread_forget(struct atrace *at, struct thread_ent *t)
{
	free(t->stack);
	atab_del(&at->threads, t);
}

static bool
slice_eq(const void *e, const void *key)
{
	const struct window_trace_slice *a = &((const struct slice_ent *)e)->s;
	const struct window_trace_slice *b = key;

	return a->tgid == b->tgid && a->tid == b->tid && a->depth == b->depth &&
	    a->kind == b->kind && strcmp(a->name, b->name) == 0;
}

/* Count one slice (dur_ns < 0: incomplete) on its window row. */
static void
slice_note(struct atrace *at, int32_t tgid, int32_t tid, unsigned depth,
    unsigned kind, const char *name, int64_t dur_ns)
{
	struct window_trace_slice key, *s;
	struct slice_ent *e;
	size_t len = strnlen(name, VITALS_TRACE_NAME - 1);
	bool fresh;

	/* only the key fields: the entry is zeroed when it is new */
	key.tgid = tgid;
	key.tid = tid;
	key.depth = (uint16_t)(depth > UINT16_MAX ? UINT16_MAX : depth);
	key.kind = (uint8_t)kind;
	memcpy(key.name, name, len);
	key.name[len] = '\0';
	e = atab_get(&at->slices,
	    atab_key(tgid, tid, (int64_t)key.depth << 8 | kind, key.name),
	    slice_eq, &key, true, &fresh);
	if (e == NULL) {
		s = &at->w->slice_other;
		s->tgid = s->tid = -1;
		at->w->slices_other++;
	} else {
		s = &e->s;
		if (fresh) {
			s->tgid = key.tgid;
			s->tid = key.tid;
			s->depth = key.depth;
			s->kind = key.kind;
			memcpy(s->name, key.name, len + 1);
		}
	}
	if (dur_ns < 0) {
		s->incomplete++;
		at->w->incomplete++;
		if (name[0] == '\0')
			at->w->orphan_ends++;
		return;
	}
	s->count++;
	s->total_ns += (uint64_t)dur_ns;
	if ((uint64_t)dur_ns > s->max_ns)
		s->max_ns = (uint64_t)dur_ns;
	at->w->slices++;
}

/* Every open B of a thread is incomplete: its end will not come. */
static void
thread_abandon(struct atrace *at, struct thread_ent *t)
{
	uint32_t d;

	for (d = t->depth; d > 0; d--) {
		if (d <= VITALS_TRACE_DEPTH && t->stack)
			slice_note(at, t->stack[d - 1].tgid, t->tid, d - 1,
			    TRACE_SYNC, t->stack[d - 1].name, -1);
		else
			slice_note(at, -1, t->tid, d - 1, TRACE_SYNC,
			    "(too deep)", -1);
	}
	t->depth = 0;
}

static bool
async_eq(const void *e, const void *key)
{
	const struct async_ent *a = e, *b = key;

	return a->tgid == b->tgid && a->kind == b->kind &&
	    a->cookie == b->cookie && strcmp(a->key, b->key) == 0;
}

static void
async_begin(struct atrace *at, const struct ftrace_rec *r,
    const struct atrace_msg *m, unsigned kind)
{
	struct async_ent key = { 0 }, *a;
	bool fresh;

	key.tgid = m->pid;
	key.kind = (uint8_t)kind;
	key.cookie = m->cookie;
	if (kind == TRACE_TRACK)
		name_copy(at, key.key, m->track, m->track_len);
	else
		name_copy(at, key.key, m->name, m->name_len);
	a = atab_get(&at->async,
	    atab_key(key.tgid, (int32_t)kind, key.cookie, key.key), async_eq,
	    &key, true, &fresh);
	if (a == NULL) {
		/* no room to remember it: its end will be an orphan */
		slice_note(at, m->pid, r->tid, 0, kind, key.key, -1);
		return;
	}
	if (!fresh) /* begun again before its end: the first is lost */
		slice_note(at, a->tgid, a->tid, 0, kind, a->name, -1);
	else
		memcpy(a->key, key.key, sizeof(a->key));
	a->tgid = key.tgid;
	a->kind = key.kind;
	a->cookie = key.cookie;
	if (kind == TRACE_TRACK)
		name_copy(at, a->name, m->name, m->name_len);
	else
		memcpy(a->name, key.key, sizeof(a->name));
	a->ts = r->ts;
	a->tid = r->tid;
}

static void
async_end(struct atrace *at, const struct ftrace_rec *r,
    const struct atrace_msg *m, unsigned kind)
{
	struct async_ent key = { 0 }, *a;

	key.tgid = m->pid;
	key.kind = (uint8_t)kind;
	key.cookie = m->cookie;
	if (kind == TRACE_TRACK)
		name_copy(at, key.key, m->track, m->track_len);
	else
		name_copy(at, key.key, m->name, m->name_len);
	a = atab_get(&at->async,
	    atab_key(key.tgid, (int32_t)kind, key.cookie, key.key), async_eq,
	    &key, false, NULL);
	if (a == NULL) {
		slice_note(at, m->pid, r->tid, 0, kind, "", -1);
		return;
	}
	slice_note(at, a->tgid, a->tid, 0, kind, a->name,
	    r->ts >= a->ts ? (int64_t)(r->ts - a->ts) : -1);
	atab_del(&at->async, a);
}

static bool
counter_eq(const void *e, const void *key)
{
	const struct window_trace_counter *a =
	    &((const struct counter_ent *)e)->c;
	const struct window_trace_counter *b = key;

	return a->tgid == b->tgid && strcmp(a->name, b->name) == 0;
}

static void
counter_note(struct atrace *at, const struct atrace_msg *m)
{
	struct window_trace_counter key = { 0 }, *c;
	struct counter_ent *e;
	bool fresh;

	key.tgid = m->pid;
	name_copy(at, key.name, m->name, m->name_len);
	e = atab_get(&at->counters, atab_key(key.tgid, 0, 0, key.name),
	    counter_eq, &key, true, &fresh);
	if (e == NULL) {
		at->w->counters_other++;
		return;
	}
	c = &e->c;
	if (fresh)
		*c = key;
	if (c->n == 0 || m->value < c->min)
		c->min = m->value;
	if (c->n == 0 || m->value > c->max)
		c->max = m->value;
	c->last = m->value;
	c->n++;
}

static void
marker(struct atrace *at, const struct ftrace_rec *r)
{
	struct atrace_msg m;
	struct thread_ent *t;
	char name[VITALS_TRACE_NAME];

	if (atrace_parse(r->u.print.buf, r->u.print.len, &m) < 0) {
		at->w->bad_markers++;
		return;
	}
	if (!m.have_pid)
		m.pid = at->tgid_fn ? at->tgid_fn(r->tid, at->tgid_arg) : -1;
	switch (m.type) {
	case 'B':
		if ((t = thread_get(at, r->tid, true)) == NULL) {
			name_copy(at, name, m.name, m.name_len);
			slice_note(at, m.pid, r->tid, 0, TRACE_SYNC, name, -1);
			return;
		}
		if (t->depth < VITALS_TRACE_DEPTH) {
			if (t->depth == t->stack_cap &&
			    thread_stack_grow(t) < 0) {
				at->w->bad_markers++;
				return;
			}
			t->stack[t->depth].ts = r->ts;
			t->stack[t->depth].tgid = m.pid;
			name_copy(at, t->stack[t->depth].name, m.name,
			    m.name_len);
			if (at->ph)
				phase_begin(at->ph, r, t->depth,
				    t->stack[t->depth].name);
		}
		t->depth++;
		break;
	case 'E':
		t = thread_get(at, r->tid, false);
		if (t == NULL || t->depth == 0) {
			slice_note(at, m.pid, r->tid, 0, TRACE_SYNC, "", -1);
			return;
		}
		t->depth--;
		if (at->ph && t->depth < VITALS_TRACE_DEPTH)
			phase_end(at->ph, r, t->depth);
		if (t->depth < VITALS_TRACE_DEPTH) {
			struct open_slice *o = &t->stack[t->depth];

			slice_note(at, o->tgid, r->tid, t->depth, TRACE_SYNC,
			    o->name,
			    r->ts >= o->ts ? (int64_t)(r->ts - o->ts) : -1);
		} else {
			slice_note(at, m.pid, r->tid, t->depth, TRACE_SYNC,
			    "(too deep)", -1);
		}
		/* the entry (and its stack) stays for the thread's next
		 * slice; exit and loss forget it */
		break;
	case 'C':
		counter_note(at, &m);
		break;
	case 'S':
		async_begin(at, r, &m, TRACE_ASYNC);
		break;
	case 'F':
		async_end(at, r, &m, TRACE_ASYNC);
		break;
	case 'G':
		async_begin(at, r, &m, TRACE_TRACK);
		break;
	case 'H':
		async_end(at, r, &m, TRACE_TRACK);
		break;
	case 'I':
	case 'N':
		name_copy(at, name, m.name, m.name_len);
		slice_note(at, m.pid, r->tid, 0, TRACE_INSTANT, name, 0);
		break;
	}
}

static bool
rq_eq(const void *e, const void *key)
{
	return ((const struct rq_ent *)e)->r.tid == *(const int32_t *)key;
}

static void
rq_note(struct atrace *at, int32_t tid, uint64_t ns)
{
	struct rq_ent *e;
	bool fresh;

	at->w->rq_total.count++;
	at->w->rq_total.total_ns += ns;
	if (ns > at->w->rq_total.max_ns)
		at->w->rq_total.max_ns = ns;
	e = atab_get(&at->rq, atab_key(tid, 1, 0, NULL), rq_eq, &tid, true,
	    &fresh);
	if (e == NULL) {
		at->w->rq_other++;
		return;
	}
	if (fresh)
		e->r.tid = tid;
	e->r.count++;
	e->r.total_ns += ns;
	if (ns > e->r.max_ns)
		e->r.max_ns = ns;
}

/*
 * prev_state of a task that stays runnable: TASK_RUNNING (0) or a
 * preemption, which the kernel reports as TASK_REPORT_MAX (0x100 since
 * Linux 4.14) whatever the task's state was. Every sleeping state
 * reported is one of the bits below it (S D T t X Z P I).
 */
#define SCHED_STATE_SLEEP_MASK 0xff

/*
 * Run-queue delay, the rule of the BPF program (bpf/sched/sched.bpf.c,
 * doc/metrics.md): a thread waits from the moment it becomes runnable —
 * sched_wakeup or sched_wakeup_new, or a switch-out that leaves it
 * runnable — to its next switch-in. A switch-out asleep ends any wait; a
 * wakeup of a thread that is running, or already waiting, changes
 * nothing. CPUs do not matter: a migration keeps the start.
 */
static void
sched_switch(struct atrace *at, const struct ftrace_rec *r)
{
	struct thread_ent *t;

	at->w->sched_switch++;
	if (r->cpu >= 0 && r->cpu < ATRACE_CPUS) {
		at->cur[r->cpu] = r->u.sw.next_tid;
		if ((unsigned)r->cpu >= at->ncur)
			at->ncur = (unsigned)r->cpu + 1;
	}
	if (r->u.sw.prev_tid != 0) {
		if ((r->u.sw.prev_state & SCHED_STATE_SLEEP_MASK) == 0) {
			/* preempted or yielded: queued again from now */
			if ((t = thread_get(at, r->u.sw.prev_tid, true)) !=
			    NULL)
				t->wake_ts = r->ts;
		} else if ((t = thread_get(at, r->u.sw.prev_tid, false)) !=
		    NULL) {
			/* asleep: only a wakeup makes it runnable again */
			t->wake_ts = 0;
		}
	}
	if (r->u.sw.next_tid == 0 ||
	    (t = thread_get(at, r->u.sw.next_tid, false)) == NULL ||
	    t->wake_ts == 0)
		return;
	if (r->ts >= t->wake_ts)
		rq_note(at, t->tid, r->ts - t->wake_ts);
	t->wake_ts = 0;
}

static bool
running(const struct atrace *at, int32_t tid)
{
	size_t i;

	for (i = 0; i < at->ncur; i++)
		if (at->cur[i] == tid)
			return true;
	return false;
}

static void
sched_wakeup(struct atrace *at, const struct ftrace_rec *r)
{
	struct thread_ent *t;

	at->w->sched_waking++;
	if (r->u.waking.tid == 0 || running(at, r->u.waking.tid))
		return;
	if ((t = thread_get(at, r->u.waking.tid, true)) != NULL &&
	    t->wake_ts == 0)
		t->wake_ts = r->ts;
}

static void
async_abandon_tgid(struct atrace *at, int32_t tgid)
{
	size_t i = 0;

	while (i < at->async.cap) {
		struct async_ent *a = atab_at(&at->async, i);

		if (a->h && a->tgid == tgid) {
			slice_note(at, a->tgid, a->tid, 0, a->kind, a->name,
			    -1);
			atab_del(&at->async, a); /* slot i is refilled: again */
			continue;
		}
		i++;
	}
}

static void
process_exit(struct atrace *at, const struct ftrace_rec *r)
{
	struct thread_ent *t = thread_get(at, r->u.exit.tid, false);
	int32_t tgid = -1;

	binder_exit(at->bl, r->u.exit.tid);
	if (at->ph)
		phase_exit(at->ph, r->u.exit.tid);
	if (t != NULL) {
		if (t->depth > 0 && t->stack)
			tgid = t->stack[0].tgid;
		thread_abandon(at, t);
		atrace_thread_forget(at, t);
	}
	/* the group leader's exit ends the process's async slices: the
	 * kernel reports the leader last */
	if (tgid == r->u.exit.tid || tgid < 0)
		async_abandon_tgid(at, r->u.exit.tid);
}

static bool
binder_eq(const void *e, const void *key)
{
	const struct window_trace_binder *a =
	    &((const struct binder_ent *)e)->b;
	const struct window_trace_binder *b = key;

	return a->from_pid == b->from_pid && a->to_pid == b->to_pid;
}

#define BINDER_TF_ONE_WAY 0x01 /* uapi/linux/android/binder.h */

static void
binder_count(struct atrace *at, const struct ftrace_rec *r)
{
	struct window_trace_binder key = { 0 }, *b;
	struct binder_ent *e;
	bool fresh;
	unsigned k;
	int32_t tgid;

	tgid = at->tgid_fn ? at->tgid_fn(r->tid, at->tgid_arg) : -1;
	binder_txn(at->bl, r, tgid);
	key.from_pid = tgid;
	if (key.from_pid <= 0)
		key.from_pid = r->tid;
	key.to_pid = r->u.txn.to_proc;
	e = atab_get(&at->binder, atab_key(key.from_pid, key.to_pid, 2, NULL),
	    binder_eq, &key, true, &fresh);
	for (k = 0; k < 2; k++) {
		if (k == 0)
			b = &at->w->binder_total;
		else if (e == NULL) {
			at->w->binder_other++;
			break;
		} else {
			b = &e->b;
			if (fresh)
				*b = key;
		}
		if (r->u.txn.reply)
			b->replies++;
		else if (r->u.txn.flags & BINDER_TF_ONE_WAY)
			b->oneway++;
		else
			b->calls++;
	}
}

static bool
gpu_eq(const void *e, const void *key)
{
	const struct window_trace_gpu *a = &((const struct gpu_ent *)e)->g;
	const struct window_trace_gpu *b = key;

	return a->gpu_id == b->gpu_id && a->pid == b->pid;
}

static void
gpu_mem(struct atrace *at, const struct ftrace_rec *r)
{
	struct window_trace_gpu key = { 0 };
	struct gpu_ent *e;
	bool fresh;

	at->w->gpu_events++;
	key.gpu_id = r->u.gpu.gpu_id;
	key.pid = (int32_t)r->u.gpu.pid;
	e = atab_get(&at->gpu, atab_key((int32_t)key.gpu_id, key.pid, 3, NULL),
	    gpu_eq, &key, true, &fresh);
	if (e == NULL)
		at->w->gpu_other++;
	else {
		if (fresh)
			e->g = key;
		e->g.events++;
		e->g.last_size = r->u.gpu.size;
	}
	if (at->gpu_fn) {
		struct ftrace_gpu_mem g = {
			.gpu_id = r->u.gpu.gpu_id,
			.pid = (int32_t)r->u.gpu.pid,
			.size = r->u.gpu.size,
			.mono_ns = (int64_t)r->ts,
		};

		at->gpu_fn(&g, at->gpu_arg);
	}
}

/* One record, in timestamp order across CPUs. */
void
atrace_record(struct atrace *at, const struct ftrace_rec *r)
{
	at->w->events++;
	switch (r->ev) {
	case FEV_PRINT:
		marker(at, r);
		break;
	case FEV_SCHED_SWITCH:
		sched_switch(at, r);
		break;
	case FEV_SCHED_WAKEUP:
	case FEV_SCHED_WAKEUP_NEW:
		sched_wakeup(at, r);
		break;
	case FEV_PROCESS_EXIT:
		process_exit(at, r);
		break;
	case FEV_BINDER_TXN:
		binder_count(at, r);
		break;
	case FEV_BINDER_RECV:
		at->w->binder_received++;
		binder_recv(at->bl, r);
		break;
	case FEV_GPU_MEM:
		gpu_mem(at, r);
		break;
	case FEV_PAGE_FAULT:
	case FEV_FILEMAP_FAULT:
	case FEV_FILEMAP_ADD:
	case FEV_RECLAIM_BEGIN:
	case FEV_RECLAIM_END:
	case FEV_BLOCK_ISSUE:
		if (at->ph)
			phase_record(at->ph, r);
		break;
	default:
		at->w->unknown_events++;
		break;
	}
}

/*
 * Events were lost: any E may be among them, so every open B is
 * incomplete (pairing by position would put the wrong ends on the
 * wrong begins). Async and track slices pair by key and stay open; wake
 * times are dropped (the switch may be lost), and so is what each CPU
 * runs.
 */
void
atrace_lost(struct atrace *at)
{
	size_t i = 0;

	while (i < at->threads.cap) {
		struct thread_ent *t = atab_at(&at->threads, i);

		if (t->h) {
			thread_abandon(at, t);
			atrace_thread_forget(at, t);
			continue;
		}
		i++;
	}
	binder_lost(at->bl);
	if (at->ph)
		phase_lost(at->ph);
	cur_unknown(at);
}

/* The reader stops: whatever is open will never end. */
void
atrace_finish(struct atrace *at)
{
	size_t i = 0;

	atrace_lost(at);
	while (i < at->async.cap) {
		struct async_ent *a = atab_at(&at->async, i);

		if (a->h) {
			slice_note(at, a->tgid, a->tid, 0, a->kind, a->name,
			    -1);
			atab_del(&at->async, a);
			continue;
		}
		i++;
	}
}

size_t
atrace_open_slices(const struct atrace *at)
{
	size_t i, n = at->async.n;

	for (i = 0; i < at->threads.cap; i++) {
		const struct thread_ent *t = atab_at(&at->threads, i);

		if (t->h)
			n += t->depth;
	}
	return n;
}
