/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's structs as protobuf-c messages: tasks, history points and
 * GpuMem's, all in an arena (rpc_int.h); windows are rpc_window.c's.
 * Strings are made valid UTF-8 on the way, as proto3 requires.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gpumem/gpumem.h"
#include "proc/proc.h"
#include "store/store.h"
#include "wcpu/wcpu.h"
#include "window/window.h"
#include "rpc_int.h"

/* ------------------------------------------------------------- frames */

/* Below rpc.c and every rpc_<signal>.c: each answers errors with it. */
int
rpc_error_frame(uint64_t id, enum rpc_status st, const char *msg, uint8_t **ret,
    size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;

	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = id;
	resp.status = (Vitals__Status)st;
	resp.error = (char *)msg;
	return frame_pack_response(&resp, ret, ret_len);
}

/* ------------------------------------------------------------- arena */

#define ARENA_CHUNK (64 * 1024)

struct rpc_chunk {
	struct rpc_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

/*
 * One released chunk of ARENA_CHUNK kept for the next answer. A chunk is
 * over the malloc mmap threshold (compat_heap_setup's 16 KiB): without
 * the spare every answer mapped it, faulted its pages in and unmapped it
 * again, and the unmap's TLB flush reaches every CPU the daemon's
 * threads ran on. Taken and given with an exchange: the query threads
 * answer too.
 */
static _Atomic(struct rpc_chunk *) spare;

static struct rpc_chunk *
chunk_new(size_t cap)
{
	struct rpc_chunk *c = NULL;

	if (cap == ARENA_CHUNK)
		c = atomic_exchange(&spare, NULL);
	if (c == NULL && (c = malloc(sizeof(*c) + cap)) == NULL)
		return NULL;
	c->cap = cap;
	return c;
}

static void
chunk_free(struct rpc_chunk *c)
{
	struct rpc_chunk *none = NULL;

	if (c->cap != ARENA_CHUNK ||
	    !atomic_compare_exchange_strong(&spare, &none, c))
		free(c);
}

void *
rpc_arena_alloc(struct rpc_arena *a, size_t n)
{
	struct rpc_chunk *c = a->head;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		if ((c = chunk_new(cap)) == NULL)
			return NULL;
		c->next = a->head;
		c->used = 0;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

void
rpc_arena_release(struct rpc_arena *a)
{
	struct rpc_chunk *c, *next;

	for (c = a->head; c != NULL; c = next) {
		next = c->next;
		chunk_free(c);
	}
	a->head = NULL;
}

/* ------------------------------------------------------------ strings */

/* Length of the well-formed UTF-8 sequence at s, 0 when there is none. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/*
 * proto3 strings must be UTF-8 and other languages' decoders reject a
 * message that breaks this; a comm is whatever bytes a task chose. Each
 * byte that starts no well-formed sequence becomes '?', in place.
 */
void
rpc_utf8_clean(char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if ((k = utf8_seq((unsigned char *)s + i, n - i)) == 0) {
			s[i++] = '?';
			continue;
		}
		i += k;
	}
}

char *
rpc_pb_str(struct rpc_arena *a, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *p;

	if ((p = rpc_arena_alloc(a, n + 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	rpc_utf8_clean(p, n);
	return p;
}

/* ----------------------------------------------------------- figures */

Vitals__Gauge *
rpc_pb_gauge(struct rpc_arena *a, const struct gauge *g)
{
	Vitals__Gauge *m;

	NEW(a, m, vitals__gauge__init);
	m->min = g->min;
	m->max = g->max;
	m->sum = g->sum;
	m->last = g->last;
	m->n = g->n;
	return m;
}

Vitals__Task *
rpc_pb_task(struct rpc_arena *a, const struct window_task *t)
{
	Vitals__Task *m;

	NEW(a, m, vitals__task__init);
	m->id = t->id;
	m->tgid = t->tgid;
	m->starttime = t->starttime;
	m->uid = t->uid;
	TRY(m->comm = rpc_pb_str(a, t->comm, sizeof(t->comm)));
	TRY(m->name = rpc_pb_str(a, window_task_name(t), VITALS_NAME_LEN));
	m->d_utime = t->d_utime;
	m->d_stime = t->d_stime;
	m->d_minflt = t->d_minflt;
	m->d_majflt = t->d_majflt;
	m->samples = t->samples;
	m->wall_ns = t->wall_ns;
	m->total_ticks = t->total_ticks;
	m->norm_ticks = t->norm_ticks;
	m->rss_pages_max = t->rss_pages_max;
	m->rss_pages_last = t->rss_pages_last;
	m->born = t->born;
	m->exited = t->exited;
	return m;
}

/* Busiest first; ties by identity so equal windows convert equally. */
Vitals__HistoryPoint **
rpc_pb_history(struct rpc_arena *a, const struct store_hist *h, size_t n)
{
	Vitals__HistoryPoint **out, *p;
	size_t i;

	ARRAY(a, out, n);
	for (i = 0; i < n; i++) {
		NEW(a, p, vitals__history_point__init);
		p->wall_start_ns = h[i].wall_start_ns;
		p->wall_end_ns = h[i].wall_end_ns;
		p->level = h[i].level;
		p->hz = h[i].hz;
		TRY(p->task = rpc_pb_task(a, &h[i].t));
		if (h[i].wtd_src) {
			p->task->wtd_ticks = h[i].wtd_ticks;
			p->task->wtd_source = (char *)wcpu_src_name(
			    h[i].wtd_src);
		}
		out[i] = p;
	}
	return out;
}

/* ------------------------------------------------------------- GpuMem */

Vitals__GpuMemState *
rpc_pb_gpumem_state(struct rpc_arena *a, const struct window_gpumem *g)
{
	Vitals__GpuMemState *m;

	NEW(a, m, vitals__gpu_mem_state__init);
	m->state = (char *)gpumem_state_name(g->state);
	m->why = (char *)gpumem_why_name(g->why);
	m->err = -g->err;
	m->source = (char *)gpumem_source_name(g->source);
	m->capacity = g->capacity;
	m->entries = g->entries;
	m->saturated = g->saturated;
	m->traversals = g->traversals;
	m->traversal_fail = g->traversal_fail;
	m->restarts = g->restarts;
	m->vanished = g->vanished;
	m->duplicates = g->duplicates;
	m->truncated = g->truncated;
	m->stale = g->stale;
	m->events = g->events;
	m->events_late = g->events_late;
	m->traverse_ns = g->traverse_ns;
	m->traverse_ns_max = g->traverse_ns_max;
	m->tp_events = g->tp_events;
	m->insert_fail = g->insert_fail;
	m->imported = g->imported;
	m->batch_walks = g->batch_walks;
	m->recovered = g->recovered;
	return m;
}

/* One pair; sp (may be NULL) adds a span's first value and extent. */
Vitals__GpuProc *
rpc_pb_gpu_proc(struct rpc_arena *a, const struct window_gpu_proc *p,
    const struct gpumem_span *sp)
{
	Vitals__GpuProc *m;

	NEW(a, m, vitals__gpu_proc__init);
	m->gpu_id = p->gpu_id;
	m->pid = p->pid;
	m->starttime = p->starttime;
	TRY(m->name = rpc_pb_str(a, p->name, sizeof(p->name)));
	m->bytes = p->bytes;
	m->min_bytes = p->min_bytes;
	m->max_bytes = p->max_bytes;
	m->stale = p->stale;
	m->imported_bytes = p->imported_bytes;
	if (sp) {
		m->first_bytes = sp->first_bytes;
		m->windows = sp->windows;
		m->first_wall_ns = sp->first_wall_ns;
		m->last_wall_ns = sp->last_wall_ns;
	}
	return m;
}

/* ------------------------------------------------------------ ranges */

/* now − since, never below VITALS_WALL_MIN (no overflow either). */
int64_t
rpc_since_from(int64_t now, int64_t since)
{
	if (now < VITALS_WALL_MIN || since >= now - VITALS_WALL_MIN)
		return VITALS_WALL_MIN;
	return now - since;
}

/*
 * A TimeRange as [from, to) in wall ns; NULL: everything stored. Wall
 * times before 1970 are times like any other: a device that booted with
 * its clock at 0 and was set later has windows there, and a clock still
 * before 1970 asks for "the last hour" below 0.
 */
const char *
rpc_resolve_range(const Vitals__TimeRange *tr, int64_t now, int64_t *from,
    int64_t *to, bool *relative)
{
	if (tr == NULL) {
		*from = VITALS_WALL_MIN;
		*to = now;
		*relative = true;
		return NULL;
	}
	if (tr->since_ns < 0)
		return "negative since_ns";
	if (tr->from_wall_ns < VITALS_WALL_MIN ||
	    tr->to_wall_ns < VITALS_WALL_MIN)
		return "time in range before 1823";
	if (tr->since_ns > 0) {
		*to = now;
		*from = rpc_since_from(now, tr->since_ns);
	} else {
		*from = tr->from_wall_ns;
		*to = tr->to_wall_ns ? tr->to_wall_ns : now;
	}
	*relative = tr->since_ns > 0 || tr->to_wall_ns == 0;
	if (*from >= *to)
		return "empty time range: from is not before to";
	return NULL;
}
