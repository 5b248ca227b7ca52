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
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "trace/trace.h"

#define TAB_MIN 64
#define TAB_MAX_SLICES 8192  /* distinct slice rows per window */
#define TAB_MAX_ASYNC 8192   /* async and track slices open at once */
#define TAB_MAX_COUNTERS 2048
#define TAB_MAX_THREADS 16384 /* threads with an open B or a wake time */
#define TAB_MAX_SMALL 4096    /* binder pairs, rq threads, gpu entries */

/* ------------------------------------------------------------ parsing */

static int
parse_i64(const char *p, size_t n, int64_t *ret)
{
	bool neg = false;
	uint64_t v = 0;
	size_t i = 0;

	if (n > 0 && (p[0] == '-' || p[0] == '+')) {
		neg = p[0] == '-';
		i++;
	}
	if (i == n)
		return -EBADMSG;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EBADMSG;
		if (v > (uint64_t)INT64_MAX / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX + neg)
		return -ERANGE;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static const char *
field_end(const char *p, const char *end)
{
	const char *q = memchr(p, '|', (size_t)(end - p));

	return q ? q : end;
}

static const char *
last_bar(const char *p, const char *end)
{
	const char *q;

	for (q = end; q > p; q--)
		if (q[-1] == '|')
			return q - 1;
	return NULL;
}

/*
 * One trace_marker payload. -EINVAL: not an ATrace marker at all (a plain
 * trace_marker write); -EBADMSG: an ATrace type with malformed fields.
 */
int
atrace_parse(const char *buf, size_t len, struct atrace_msg *ret)
{
	struct atrace_msg m = { 0 };
	const char *end, *p, *f, *b;
	int64_t v;

	len = strnlen(buf, len);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
		len--;
	if (len == 0)
		return -EINVAL;
	switch (buf[0]) {
	case 'B': case 'E': case 'C': case 'S': case 'F':
	case 'G': case 'H': case 'I': case 'N':
		break;
	default:
		return -EINVAL;
	}
	m.type = buf[0];
	end = buf + len;
	if (len == 1) {
		if (m.type != 'E')
			return -EBADMSG;
		*ret = m;
		return 0;
	}
	if (buf[1] != '|')
		return -EINVAL;
	p = buf + 2;
	f = field_end(p, end);
	if (parse_i64(p, (size_t)(f - p), &v) < 0 || v < INT32_MIN ||
	    v > INT32_MAX)
		return m.type == 'E' && f == p ? -EBADMSG : -EBADMSG;
	m.pid = (int32_t)v;
	m.have_pid = true;
	p = f < end ? f + 1 : end;
	switch (m.type) {
	case 'E':
		break; /* anything after the pid is not used */
	case 'B':
	case 'I':
		if (f == end)
			return -EBADMSG;
		m.name = p;
		m.name_len = (size_t)(end - p);
		break;
	case 'C':
		if (f == end || (f = field_end(p, end)) == end)
			return -EBADMSG;
		m.name = p;
		m.name_len = (size_t)(f - p);
		b = f + 1;
		f = field_end(b, end); /* a category may follow */
		if (parse_i64(b, (size_t)(f - b), &m.value) < 0)
			return -EBADMSG;
		break;
	case 'S':
	case 'F':
		if (f == end || (b = last_bar(p, end)) == NULL || b < p)
			return -EBADMSG;
		m.name = p;
		m.name_len = (size_t)(b - p);
		if (parse_i64(b + 1, (size_t)(end - b - 1), &m.cookie) < 0)
			return -EBADMSG;
		break;
	case 'G':
	case 'H':
	case 'N':
		if (f == end || (f = field_end(p, end)) == end)
			return -EBADMSG;
		m.track = p;
		m.track_len = (size_t)(f - p);
		if (m.type == 'N') {
			m.name = f + 1;
			m.name_len = (size_t)(end - f - 1);
			break;
		}
		b = last_bar(f + 1, end);
		if (m.type == 'G') {
			if (b == NULL || b < f + 1)
				return -EBADMSG;
			m.name = f + 1;
			m.name_len = (size_t)(b - f - 1);
		} else if (b == NULL || b < f + 1) {
			b = f; /* H|pid|track|cookie */
		}
		if (parse_i64(b + 1, (size_t)(end - b - 1), &m.cookie) < 0)
			return -EBADMSG;
		break;
	}
	*ret = m;
	return 0;
}

/* ------------------------------------------------------- hash tables */

/*
 * Open addressing with linear probing; every entry begins with its hash
 * (0: empty). Deletion shifts the run back, so no tombstones.
 */
struct tab {
	char *e;
	size_t esz, cap, n, max;
};

/* Word-at-a-time multiply-xorshift: names are hashed once per event. */
static uint64_t
hash_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, c, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
		c += 8;
		n -= 8;
	}
	if (n) {
		w = 0;
		memcpy(&w, c, n);
		h = (h ^ w ^ (uint64_t)n << 56) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

static uint64_t
hash_key(int32_t a, int32_t b, int64_t c, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = (h ^ (uint32_t)a) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uint64_t)(uint32_t)b << 32) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uint64_t)c) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 31;
	if (name)
		h = hash_mix(h, name, strlen(name));
	return h ? h : 1;
}

static void *
tab_at(const struct tab *t, size_t i)
{
	return t->e + i * t->esz;
}

static uint64_t
tab_hash(const struct tab *t, size_t i)
{
	uint64_t h;

	memcpy(&h, tab_at(t, i), sizeof(h));
	return h;
}

static int
tab_grow(struct tab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : TAB_MIN, i, j;
	char *ne = calloc(ncap, t->esz);

	if (ne == NULL)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		uint64_t h = tab_hash(t, i);

		if (h == 0)
			continue;
		for (j = h & (ncap - 1); ; j = (j + 1) & (ncap - 1)) {
			uint64_t o;

			memcpy(&o, ne + j * t->esz, sizeof(o));
			if (o == 0)
				break;
		}
		memcpy(ne + j * t->esz, tab_at(t, i), t->esz);
	}
	free(t->e);
	t->e = ne;
	t->cap = ncap;
	return 0;
}

typedef bool (*tab_eq)(const void *e, const void *key);

/*
 * The entry of key, or a new zeroed one with its hash set (*ret_new);
 * NULL when the table is at its bound or memory ran out.
 */
static void *
tab_get(struct tab *t, uint64_t h, tab_eq eq, const void *key, bool add,
    bool *ret_new)
{
	size_t i;

	if (ret_new)
		*ret_new = false;
	if (t->cap) {
		for (i = h & (t->cap - 1); ; i = (i + 1) & (t->cap - 1)) {
			uint64_t o = tab_hash(t, i);

			if (o == 0)
				break;
			if (o == h && eq(tab_at(t, i), key))
				return tab_at(t, i);
		}
	}
	if (!add || t->n >= t->max)
		return NULL;
	if ((t->n + 1) * 4 > t->cap * 3 && tab_grow(t) < 0)
		return NULL;
	for (i = h & (t->cap - 1); tab_hash(t, i) != 0;
	    i = (i + 1) & (t->cap - 1))
		;
	memset(tab_at(t, i), 0, t->esz);
	memcpy(tab_at(t, i), &h, sizeof(h));
	t->n++;
	if (ret_new)
		*ret_new = true;
	return tab_at(t, i);
}

static void
tab_del(struct tab *t, void *e)
{
	size_t i = (size_t)((char *)e - t->e) / t->esz, j = i, mask = t->cap - 1;

	for (;;) {
		uint64_t h;
		size_t k;

		j = (j + 1) & mask;
		if ((h = tab_hash(t, j)) == 0)
			break;
		k = h & mask;
		/* move j back to i when i lies on j's probe path */
		if ((i <= j) ? (k <= i || k > j) : (k <= i && k > j)) {
			memcpy(tab_at(t, i), tab_at(t, j), t->esz);
			i = j;
		}
	}
	memset(tab_at(t, i), 0, t->esz);
	t->n--;
}

static void
tab_clear(struct tab *t)
{
	if (t->e)
		memset(t->e, 0, t->cap * t->esz);
	t->n = 0;
}

static void
tab_release(struct tab *t)
{
	free(t->e);
	t->e = NULL;
	t->cap = t->n = 0;
}

/* --------------------------------------------------------- the tracker */

struct open_slice {
	uint64_t ts;
	int32_t tgid;
	char name[VITALS_TRACE_NAME];
};

struct thread_ent {
	uint64_t h;
	int32_t tid;
	uint32_t depth; /* open B slices, also those beyond the kept stack */
	uint64_t wake_ts; /* sched_waking or preemption; 0 none */
	struct open_slice *stack; /* VITALS_TRACE_DEPTH entries, lazily */
};

struct async_ent {
	uint64_t h;
	int32_t tgid;
	uint8_t kind; /* TRACE_ASYNC or TRACE_TRACK */
	int64_t cookie;
	char key[VITALS_TRACE_NAME]; /* name (S/F) or track (G/H) */
	char name[VITALS_TRACE_NAME];
	uint64_t ts;
	int32_t tid;
};

struct slice_ent {
	uint64_t h;
	struct window_trace_slice s;
};

struct counter_ent {
	uint64_t h;
	struct window_trace_counter c;
};

struct binder_ent {
	uint64_t h;
	struct window_trace_binder b;
};

struct rq_ent {
	uint64_t h;
	struct window_trace_rq r;
};

struct gpu_ent {
	uint64_t h;
	struct window_trace_gpu g;
};

struct atrace {
	struct tab threads, async, slices, counters, binder, rq, gpu;
	struct window_trace w; /* scalar figures of the open window */
	int32_t (*tgid_fn)(int32_t tid, void *arg);
	void *tgid_arg;
	ftrace_gpu_mem_fn gpu_fn;
	void *gpu_arg;
};

int
atrace_new(struct atrace **ret)
{
	struct atrace *at;

	if ((at = calloc(1, sizeof(*at))) == NULL)
		return -ENOMEM;
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
	*ret = at;
	return 0;
}

static void
threads_release(struct atrace *at)
{
	size_t i;

	for (i = 0; i < at->threads.cap; i++) {
		struct thread_ent *t = tab_at(&at->threads, i);

		if (t->h)
			free(t->stack);
	}
	tab_release(&at->threads);
}

struct atrace *
atrace_free(struct atrace *at)
{
	if (at == NULL)
		return NULL;
	threads_release(at);
	tab_release(&at->async);
	tab_release(&at->slices);
	tab_release(&at->counters);
	tab_release(&at->binder);
	tab_release(&at->rq);
	tab_release(&at->gpu);
	free(at);
	return NULL;
}

void
atrace_set_tgid_fn(struct atrace *at, int32_t (*fn)(int32_t, void *),
    void *arg)
{
	at->tgid_fn = fn;
	at->tgid_arg = arg;
}

void
atrace_set_gpu_mem_cb(struct atrace *at, ftrace_gpu_mem_fn fn, void *arg)
{
	at->gpu_fn = fn;
	at->gpu_arg = arg;
}

/* A name cut to 127 bytes at a UTF-8 character boundary; control
 * characters and broken UTF-8 as name_clean() (util.c) says. */
static void
name_copy(struct atrace *at, char *dst, const char *src, size_t n)
{
	if (n >= VITALS_TRACE_NAME) {
		n = VITALS_TRACE_NAME - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
		at->w.names_cut++;
	}
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

	t = tab_get(&at->threads, hash_key(tid, 0, 0, NULL), thread_eq, &tid,
	    add, &fresh);
	if (t && fresh)
		t->tid = tid;
	return t;
}

static void
thread_forget(struct atrace *at, struct thread_ent *t)
{
	free(t->stack);
	tab_del(&at->threads, t);
}

static bool
slice_eq(const void *e, const void *key)
{
	const struct window_trace_slice *a = &((const struct slice_ent *)e)->s;
	const struct window_trace_slice *b = key;

	return a->tgid == b->tgid && a->tid == b->tid &&
	    a->depth == b->depth && a->kind == b->kind &&
	    strcmp(a->name, b->name) == 0;
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
	e = tab_get(&at->slices, hash_key(tgid, tid,
	    (int64_t)key.depth << 8 | kind, key.name), slice_eq, &key, true,
	    &fresh);
	if (e == NULL) {
		s = &at->w.slice_other;
		s->tgid = s->tid = -1;
		at->w.slices_other++;
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
		at->w.incomplete++;
		if (name[0] == '\0')
			at->w.orphan_ends++;
		return;
	}
	s->count++;
	s->total_ns += (uint64_t)dur_ns;
	if ((uint64_t)dur_ns > s->max_ns)
		s->max_ns = (uint64_t)dur_ns;
	at->w.slices++;
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
	a = tab_get(&at->async, hash_key(key.tgid, (int32_t)kind, key.cookie,
	    key.key), async_eq, &key, true, &fresh);
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
	a = tab_get(&at->async, hash_key(key.tgid, (int32_t)kind, key.cookie,
	    key.key), async_eq, &key, false, NULL);
	if (a == NULL) {
		slice_note(at, m->pid, r->tid, 0, kind, "", -1);
		return;
	}
	slice_note(at, a->tgid, a->tid, 0, kind, a->name,
	    r->ts >= a->ts ? (int64_t)(r->ts - a->ts) : -1);
	tab_del(&at->async, a);
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
	e = tab_get(&at->counters, hash_key(key.tgid, 0, 0, key.name),
	    counter_eq, &key, true, &fresh);
	if (e == NULL) {
		at->w.counters_other++;
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
		at->w.bad_markers++;
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
			if (t->stack == NULL && (t->stack = malloc(
			    VITALS_TRACE_DEPTH * sizeof(*t->stack))) == NULL) {
				at->w.bad_markers++;
				return;
			}
			t->stack[t->depth].ts = r->ts;
			t->stack[t->depth].tgid = m.pid;
			name_copy(at, t->stack[t->depth].name, m.name,
			    m.name_len);
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
		if (t->depth < VITALS_TRACE_DEPTH) {
			struct open_slice *o = &t->stack[t->depth];

			slice_note(at, o->tgid, r->tid, t->depth, TRACE_SYNC,
			    o->name, r->ts >= o->ts ? (int64_t)(r->ts - o->ts)
			    : -1);
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

	at->w.rq_total.count++;
	at->w.rq_total.total_ns += ns;
	if (ns > at->w.rq_total.max_ns)
		at->w.rq_total.max_ns = ns;
	e = tab_get(&at->rq, hash_key(tid, 1, 0, NULL), rq_eq, &tid, true,
	    &fresh);
	if (e == NULL) {
		at->w.rq_other++;
		return;
	}
	if (fresh)
		e->r.tid = tid;
	e->r.count++;
	e->r.total_ns += ns;
	if (ns > e->r.max_ns)
		e->r.max_ns = ns;
}

static void
sched_switch(struct atrace *at, const struct ftrace_rec *r)
{
	struct thread_ent *t;

	at->w.sched_switch++;
	/* preempted while runnable: it waits on the run queue from now */
	if (r->u.sw.prev_state == 0 && r->u.sw.prev_tid != 0 &&
	    (t = thread_get(at, r->u.sw.prev_tid, true)) != NULL)
		t->wake_ts = r->ts;
	if (r->u.sw.next_tid == 0 ||
	    (t = thread_get(at, r->u.sw.next_tid, false)) == NULL ||
	    t->wake_ts == 0)
		return;
	if (r->ts >= t->wake_ts)
		rq_note(at, t->tid, r->ts - t->wake_ts);
	t->wake_ts = 0;
}

static void
sched_waking(struct atrace *at, const struct ftrace_rec *r)
{
	struct thread_ent *t;

	at->w.sched_waking++;
	if (r->u.waking.tid != 0 &&
	    (t = thread_get(at, r->u.waking.tid, true)) != NULL &&
	    t->wake_ts == 0)
		t->wake_ts = r->ts;
}

static void
async_abandon_tgid(struct atrace *at, int32_t tgid)
{
	size_t i = 0;

	while (i < at->async.cap) {
		struct async_ent *a = tab_at(&at->async, i);

		if (a->h && a->tgid == tgid) {
			slice_note(at, a->tgid, a->tid, 0, a->kind, a->name,
			    -1);
			tab_del(&at->async, a); /* slot i is refilled: again */
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

	if (t != NULL) {
		if (t->depth > 0 && t->stack)
			tgid = t->stack[0].tgid;
		thread_abandon(at, t);
		thread_forget(at, t);
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
binder_txn(struct atrace *at, const struct ftrace_rec *r)
{
	struct window_trace_binder key = { 0 }, *b;
	struct binder_ent *e;
	bool fresh;
	unsigned k;

	key.from_pid = at->tgid_fn ? at->tgid_fn(r->tid, at->tgid_arg) : -1;
	if (key.from_pid <= 0)
		key.from_pid = r->tid;
	key.to_pid = r->u.txn.to_proc;
	e = tab_get(&at->binder, hash_key(key.from_pid, key.to_pid, 2, NULL),
	    binder_eq, &key, true, &fresh);
	for (k = 0; k < 2; k++) {
		if (k == 0)
			b = &at->w.binder_total;
		else if (e == NULL) {
			at->w.binder_other++;
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

	at->w.gpu_events++;
	key.gpu_id = r->u.gpu.gpu_id;
	key.pid = (int32_t)r->u.gpu.pid;
	e = tab_get(&at->gpu, hash_key((int32_t)key.gpu_id, key.pid, 3, NULL),
	    gpu_eq, &key, true, &fresh);
	if (e == NULL)
		at->w.gpu_other++;
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
	at->w.events++;
	switch (r->ev) {
	case FEV_PRINT:
		marker(at, r);
		break;
	case FEV_SCHED_SWITCH:
		sched_switch(at, r);
		break;
	case FEV_SCHED_WAKING:
		sched_waking(at, r);
		break;
	case FEV_PROCESS_EXIT:
		process_exit(at, r);
		break;
	case FEV_BINDER_TXN:
		binder_txn(at, r);
		break;
	case FEV_BINDER_RECV:
		at->w.binder_received++;
		break;
	case FEV_GPU_MEM:
		gpu_mem(at, r);
		break;
	default:
		at->w.unknown_events++;
		break;
	}
}

/*
 * Events were lost: any E may be among them, so every open B is
 * incomplete (pairing by position would put the wrong ends on the
 * wrong begins). Async and track slices pair by key and stay open; wake
 * times are dropped (the switch may be lost).
 */
void
atrace_lost(struct atrace *at)
{
	size_t i = 0;

	while (i < at->threads.cap) {
		struct thread_ent *t = tab_at(&at->threads, i);

		if (t->h) {
			thread_abandon(at, t);
			thread_forget(at, t);
			continue;
		}
		i++;
	}
}

/* The reader stops: whatever is open will never end. */
void
atrace_finish(struct atrace *at)
{
	size_t i = 0;

	atrace_lost(at);
	while (i < at->async.cap) {
		struct async_ent *a = tab_at(&at->async, i);

		if (a->h) {
			slice_note(at, a->tgid, a->tid, 0, a->kind, a->name,
			    -1);
			tab_del(&at->async, a);
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
		const struct thread_ent *t = tab_at(&at->threads, i);

		if (t->h)
			n += t->depth;
	}
	return n;
}

/* ------------------------------------------------------ window close */

static int
slice_by_weight(const void *a, const void *b)
{
	const struct window_trace_slice *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->count + x->incomplete != y->count + y->incomplete)
		return x->count + x->incomplete < y->count + y->incomplete ?
		    1 : -1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void
slice_fold(struct window_trace_slice *o, const struct window_trace_slice *s)
{
	o->count += s->count;
	o->incomplete += s->incomplete;
	o->total_ns += s->total_ns;
	if (s->max_ns > o->max_ns)
		o->max_ns = s->max_ns;
}

/* Keep the heaviest VITALS_TRACE_SLICES rows, fold the rest into other. */
void
window_trace_keep_slices(struct window_trace *wt,
    struct window_trace_slice *s, size_t n, uint32_t other_rows)
{
	size_t i;

	qsort(s, n, sizeof(*s), slice_by_weight);
	wt->nslices = 0;
	for (i = 0; i < n; i++) {
		if (i < VITALS_TRACE_SLICES) {
			wt->slice[wt->nslices++] = s[i];
			continue;
		}
		wt->slice_other.tgid = wt->slice_other.tid = -1;
		slice_fold(&wt->slice_other, &s[i]);
		other_rows++;
	}
	wt->slices_other = other_rows;
}

static int
counter_by_n(const void *a, const void *b)
{
	const struct window_trace_counter *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
binder_by_n(const void *a, const void *b)
{
	const struct window_trace_binder *x = a, *y = b;
	uint64_t nx = (uint64_t)x->calls + x->oneway + x->replies;
	uint64_t ny = (uint64_t)y->calls + y->oneway + y->replies;

	if (nx != ny)
		return nx < ny ? 1 : -1;
	if (x->from_pid != y->from_pid)
		return x->from_pid < y->from_pid ? -1 : 1;
	return x->to_pid < y->to_pid ? -1 : x->to_pid > y->to_pid;
}

static int
rq_by_total(const void *a, const void *b)
{
	const struct window_trace_rq *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int
gpu_by_key(const void *a, const void *b)
{
	const struct window_trace_gpu *x = a, *y = b;

	if (x->gpu_id != y->gpu_id)
		return x->gpu_id < y->gpu_id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Entries of a table (after their hash) packed into one array. */
static void *
tab_pack(const struct tab *t, size_t off, size_t sz)
{
	char *out = malloc((t->n ? t->n : 1) * sz);
	size_t i, k = 0;

	if (out == NULL)
		return NULL;
	for (i = 0; i < t->cap; i++)
		if (tab_hash(t, i))
			memcpy(out + sz * k++, (char *)tab_at(t, i) + off, sz);
	return out;
}

/*
 * A table's entries sorted by cmp, the first cap of them into dst (*ret_n
 * of them), the rest counted on top of other into *ret_other. Out of
 * memory: nothing kept, dst untouched.
 */
static void
keep_top(const struct tab *t, size_t off, size_t sz,
    int (*cmp)(const void *, const void *), void *dst, size_t cap,
    uint32_t *ret_n, uint32_t *ret_other, uint32_t other)
{
	size_t n = t->n, k = n < cap ? n : cap;
	void *p;

	if ((p = tab_pack(t, off, sz)) == NULL)
		return;
	qsort(p, n, sz, cmp);
	memcpy(dst, p, k * sz);
	*ret_n = (uint32_t)k;
	*ret_other = other + (uint32_t)(n - k);
	free(p);
}

/*
 * The figures since the last call go into wt (its ftrace part but the
 * loss and state fields, which ftrace.c owns); open slices stay open.
 */
void
atrace_window(struct atrace *at, struct window_trace *wt)
{
	struct window_trace *w = &at->w;
	size_t i, n;
	void *p;

	wt->events += w->events;
	wt->bad_markers += w->bad_markers;
	wt->names_cut += w->names_cut;
	wt->unknown_events += w->unknown_events;
	wt->slices += w->slices;
	wt->incomplete += w->incomplete;
	wt->orphan_ends += w->orphan_ends;
	wt->sched_switch += w->sched_switch;
	wt->sched_waking += w->sched_waking;
	wt->binder_received += w->binder_received;
	wt->gpu_events += w->gpu_events;
	wt->slice_other = w->slice_other;
	wt->binder_total = w->binder_total;
	wt->rq_total = w->rq_total;

	n = at->slices.n;
	if ((p = tab_pack(&at->slices, offsetof(struct slice_ent, s),
	    sizeof(struct window_trace_slice))) != NULL) {
		window_trace_keep_slices(wt, p, n, w->slices_other);
		free(p);
	}
	keep_top(&at->counters, offsetof(struct counter_ent, c),
	    sizeof(struct window_trace_counter), counter_by_n, wt->counter,
	    VITALS_TRACE_COUNTERS, &wt->ncounters, &wt->counters_other,
	    w->counters_other);
	keep_top(&at->binder, offsetof(struct binder_ent, b),
	    sizeof(struct window_trace_binder), binder_by_n, wt->binder,
	    VITALS_TRACE_BINDER, &wt->nbinder, &wt->binder_other,
	    w->binder_other);
	keep_top(&at->rq, offsetof(struct rq_ent, r),
	    sizeof(struct window_trace_rq), rq_by_total, wt->rq,
	    VITALS_TRACE_RQ, &wt->nrq, &wt->rq_other, w->rq_other);
	keep_top(&at->gpu, offsetof(struct gpu_ent, g),
	    sizeof(struct window_trace_gpu), gpu_by_key, wt->gpu,
	    VITALS_TRACE_GPU, &wt->ngpu, &wt->gpu_other, w->gpu_other);
	/* threads with nothing open are forgotten once a window: a thread
	 * whose exit was not seen cannot hold a slot for ever */
	i = 0;
	while (i < at->threads.cap) {
		struct thread_ent *th = tab_at(&at->threads, i);

		if (th->h && th->depth == 0 && th->wake_ts == 0) {
			thread_forget(at, th);
			continue;
		}
		i++;
	}
	tab_clear(&at->slices);
	tab_clear(&at->counters);
	tab_clear(&at->binder);
	tab_clear(&at->rq);
	tab_clear(&at->gpu);
	memset(w, 0, sizeof(*w));
}
