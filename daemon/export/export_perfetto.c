/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stored windows as a Perfetto trace (doc/export.md, "Perfetto trace"):
 * one sequence of TracePackets, a clock snapshot first (the trace's clock
 * is CLOCK_REALTIME: windows of several boots share it), then each track's
 * descriptor, then the counter events, every one on a counter track.
 *
 * Packets are the protobuf-c structs generated from
 * proto/perfetto_trace.proto, each packed on its own and framed by hand as
 * Trace.packet (field 1, length-delimited): the structs keep the field
 * numbers in the one .proto the tests decode with, and the framing lets a
 * trace grow packet by packet without a tree of every packet in memory.
 *
 * Descriptors and events go to two buffers while the windows are walked
 * once (a track is described the first time it has a value) and are
 * joined at the end, so every descriptor precedes every event. Track
 * uuids are hashes of what identifies the track (a process by pid and
 * starttime: a reused pid is a new track), the same in every export.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "core/sysnames.h"
#include "gpumem/gpumem.h"
#include "syscalls/sc_window.h"
#include "trace/trace.h"
#include "window/window.h"

#include "perfetto_trace.pb-c.h"

#define SEQ_ID 1 /* the one trusted_packet_sequence_id */
#define CLOCK_REALTIME_ID \
	PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME
#define CLOCK_BOOTTIME_ID \
	PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME
#define UNIT_NS PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_TIME_NS
#define UNIT_COUNT PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT
#define UNIT_BYTES PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES

struct pf {
	const struct export_perfetto_opts *o;
	struct vbuf desc, ev;
	uint64_t *set; /* uuids described: open addressing, 0 empty */
	size_t setcap, setn;
	uint32_t packets, tracks;
};

/* -------------------------------------------------------------- framing */

static size_t
varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* p as Trace.packet: the tag of field 1 (wire type 2), length, bytes */
static int
put_packet(struct pf *f, struct vbuf *b, const Perfetto__Protos__TracePacket *p)
{
	size_t len = perfetto__protos__trace_packet__get_packed_size(p);
	uint8_t *at;
	int r;

	if ((r = vbuf_reserve(b, 1 + 10 + len)) < 0)
		return r;
	at = (uint8_t *)b->p + b->len;
	at[0] = 0x0a;
	b->len += 1 + varint_put(at + 1, len);
	b->len += perfetto__protos__trace_packet__pack(p,
	    (uint8_t *)b->p + b->len);
	f->packets++;
	return 0;
}

/* -------------------------------------------------------------- uuids */

static uint64_t
fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The uuid of the track a printf-formatted key names; never 0. */
static uint64_t __attribute__((format(printf, 1, 2)))
uuid_of(const char *fmt, ...)
{
	char key[VITALS_TRACE_NAME + 96];
	va_list ap;
	uint64_t h;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(key))
		n = (int)sizeof(key) - 1;
	h = fnv1a(0xcbf29ce484222325ULL, key, (size_t)n);
	return h ? h : 1;
}

/* 1: uuid was described before; 0: it is now marked; -ENOMEM */
static int
seen(struct pf *f, uint64_t uuid)
{
	size_t i, mask;

	if (f->setn * 2 >= f->setcap) {
		size_t nc = f->setcap ? f->setcap * 2 : 256, j;
		uint64_t *ns = calloc(nc, sizeof(*ns));

		if (ns == NULL)
			return -ENOMEM;
		for (j = 0; j < f->setcap; j++) {
			if (f->set[j] == 0)
				continue;
			for (i = f->set[j] & (nc - 1); ns[i];
			     i = (i + 1) & (nc - 1))
				;
			ns[i] = f->set[j];
		}
		free(f->set);
		f->set = ns;
		f->setcap = nc;
	}
	mask = f->setcap - 1;
	for (i = uuid & mask; f->set[i]; i = (i + 1) & mask)
		if (f->set[i] == uuid)
			return 1;
	f->set[i] = uuid;
	f->setn++;
	return 0;
}

/* ------------------------------------------------------------- tracks */

static int
describe(struct pf *f, Perfetto__Protos__TrackDescriptor *td)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	int r;

	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = SEQ_ID;
	p.track_descriptor = td;
	if ((r = put_packet(f, &f->desc, &p)) < 0)
		return r;
	f->tracks++;
	return 0;
}

/* A process instance's track; its uuid. */
static int
track_process(struct pf *f, int32_t pid, uint64_t starttime, const char *name,
    uint64_t *ret)
{
	Perfetto__Protos__TrackDescriptor td =
	    PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd =
	    PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	uint64_t uuid = uuid_of("process/%d/%llu", pid,
	    (unsigned long long)starttime);
	int r;

	*ret = uuid;
	if ((r = seen(f, uuid)) != 0)
		return r < 0 ? r : 0;
	td.has_uuid = 1;
	td.uuid = uuid;
	pd.has_pid = 1;
	pd.pid = pid;
	if (name[0])
		pd.process_name = (char *)name;
	td.process = &pd;
	return describe(f, &td);
}

static int
track_thread(struct pf *f, const struct window_task *t, uint64_t *ret)
{
	Perfetto__Protos__TrackDescriptor td =
	    PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thd =
	    PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	uint64_t uuid = uuid_of("thread/%d/%llu", t->id,
	    (unsigned long long)t->starttime);
	int r;

	*ret = uuid;
	if ((r = seen(f, uuid)) != 0)
		return r < 0 ? r : 0;
	td.has_uuid = 1;
	td.uuid = uuid;
	thd.has_pid = 1;
	thd.pid = t->tgid;
	thd.has_tid = 1;
	thd.tid = t->id;
	if (t->comm[0])
		thd.thread_name = (char *)t->comm;
	td.thread = &thd;
	return describe(f, &td);
}

struct unit {
	int kind;     /* CounterDescriptor.Unit */
	int64_t mult; /* unit_multiplier; 0: none */
};

/* A counter track named name under parent (0: none); its uuid. */
static int
track_counter(struct pf *f, uint64_t parent, const char *name, struct unit u,
    uint64_t *ret)
{
	Perfetto__Protos__TrackDescriptor td =
	    PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd =
	    PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	uint64_t uuid = uuid_of("counter/%llx/%s/%lld",
	    (unsigned long long)parent, name, (long long)u.mult);
	int r;

	*ret = uuid;
	if ((r = seen(f, uuid)) != 0)
		return r < 0 ? r : 0;
	td.has_uuid = 1;
	td.uuid = uuid;
	td.name = (char *)name;
	if (parent) {
		td.has_parent_uuid = 1;
		td.parent_uuid = parent;
	}
	cd.has_unit = 1;
	cd.unit = u.kind;
	if (u.mult > 1) {
		cd.has_unit_multiplier = 1;
		cd.unit_multiplier = u.mult;
	}
	td.counter = &cd;
	return describe(f, &td);
}

/* One value on a counter track at wall_ns (CLOCK_REALTIME). */
static int
counter(struct pf *f, uint64_t parent, const char *name, struct unit u,
    int64_t wall_ns, int64_t v)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	uint64_t uuid;
	int r;

	if (wall_ns <= 0)
		return 0; /* no stamp on the trace's clock */
	if ((r = track_counter(f, parent, name, u, &uuid)) < 0)
		return r;
	p.has_timestamp = 1;
	p.timestamp = (uint64_t)wall_ns;
	p.has_timestamp_clock_id = 1;
	p.timestamp_clock_id = CLOCK_REALTIME_ID;
	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = SEQ_ID;
	p.has_sequence_flags = 1;
	p.sequence_flags =
	    PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	te.has_type = 1;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	te.has_track_uuid = 1;
	te.track_uuid = uuid;
	te.has_counter_value = 1;
	te.counter_value = v;
	p.track_event = &te;
	return put_packet(f, &f->ev, &p);
}

/* ------------------------------------------------------------ figures */

static const char *const cpu_mode[] = { "user", "nice", "system", "idle",
	"iowait", "irq", "softirq", "steal" };

/* Ticks as time when a tick is a whole number of ns, else as counts. */
static struct unit
tick_unit(uint32_t hz)
{
	if (hz && 1000000000u % hz == 0)
		return (struct unit){ UNIT_NS, 1000000000 / hz };
	return (struct unit){ UNIT_COUNT, 0 };
}

static int
put_system(struct pf *f, const struct window *w)
{
	const struct cpu_times *d = &w->all.d;
	const uint64_t mode[] = { d->user, d->nice, d->system, d->idle,
		d->iowait, d->irq, d->softirq, d->steal };
	struct unit tick = tick_unit(w->hz), us = { UNIT_NS, 1000 };
	struct unit kb = { UNIT_BYTES, 1024 }, count = { UNIT_COUNT, 0 };
	char name[96];
	unsigned i;
	int r;

	/* deltas at the window's start: the step covers the window */
	for (i = 0; w->all.samples && i < 8; i++) {
		snprintf(name, sizeof(name), "cpu.%s", cpu_mode[i]);
		if ((r = counter(f, 0, name, tick, w->wall_start_ns,
			 (int64_t)mode[i])) < 0)
			return r;
	}
	for (i = 0; i < PSI__MAX; i++) {
		const struct window_psi *p = &w->psi[i];

		if (!p->available || p->samples == 0)
			continue;
		snprintf(name, sizeof(name), "psi.%s.some", psi_res_name(i));
		if ((r = counter(f, 0, name, us, w->wall_start_ns,
			 (int64_t)p->d_some_us)) < 0)
			return r;
		if (!p->have_full)
			continue;
		snprintf(name, sizeof(name), "psi.%s.full", psi_res_name(i));
		if ((r = counter(f, 0, name, us, w->wall_start_ns,
			 (int64_t)p->d_full_us)) < 0)
			return r;
	}
	for (i = 0; w->vm_samples && i < VM__MAX; i++) {
		if (!(w->vm_have & (1u << i)))
			continue;
		snprintf(name, sizeof(name), "vmstat.%s", vmstat_key_name(i));
		if ((r = counter(f, 0, name, count, w->wall_start_ns,
			 (int64_t)w->d_vm[i])) < 0)
			return r;
	}
	/* levels at the window's end: the last reading */
	for (i = 0; i < MI__MAX; i++) {
		if (!(w->mem_have & (1u << i)) || w->mem_kb[i].n == 0)
			continue;
		snprintf(name, sizeof(name), "meminfo.%s", meminfo_key_name(i));
		if ((r = counter(f, 0, name, kb, w->wall_end_ns,
			 (int64_t)w->mem_kb[i].last)) < 0)
			return r;
	}
	return 0;
}

static bool
wanted(const struct pf *f, int32_t tgid)
{
	return f->o->pid <= 0 || tgid == f->o->pid;
}

static int
put_tasks(struct pf *f, const struct window *w)
{
	struct unit tick = tick_unit(w->hz), count = { UNIT_COUNT, 0 };
	struct unit pages = { UNIT_BYTES, (int64_t)f->o->page_bytes };
	uint64_t uuid;
	size_t i;
	int r;

	for (i = 0; i < w->nprocs; i++) {
		const struct window_task *t = &w->procs[i];

		if (!wanted(f, t->id))
			continue;
		if ((r = track_process(f, t->id, t->starttime,
			 window_task_name(t)[0] ? window_task_name(t) : t->comm,
			 &uuid)) < 0 ||
		    (r = counter(f, uuid, "cpu", tick, w->wall_start_ns,
			 (int64_t)(t->d_utime + t->d_stime))) < 0 ||
		    (r = counter(f, uuid, "minflt", count, w->wall_start_ns,
			 (int64_t)t->d_minflt)) < 0 ||
		    (r = counter(f, uuid, "majflt", count, w->wall_start_ns,
			 (int64_t)t->d_majflt)) < 0 ||
		    (r = counter(f, uuid, "rss", pages, w->wall_end_ns,
			 (int64_t)t->rss_pages_last)) < 0)
			return r;
	}
	for (i = 0; i < w->nthreads; i++) {
		const struct window_task *t = &w->threads[i];

		if (!wanted(f, t->tgid))
			continue;
		if ((r = track_thread(f, t, &uuid)) < 0 ||
		    (r = counter(f, uuid, "cpu", tick, w->wall_start_ns,
			 (int64_t)(t->d_utime + t->d_stime))) < 0)
			return r;
	}
	return 0;
}

/* The process track of tgid in w: its instance when w has a row of it,
 * else (tgid, starttime 0). */
static int
track_tgid(struct pf *f, const struct window *w, int32_t tgid, uint64_t *ret)
{
	size_t i;

	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].id == tgid)
			return track_process(f, tgid, w->procs[i].starttime,
			    window_task_name(&w->procs[i])[0] ?
				window_task_name(&w->procs[i]) :
				w->procs[i].comm,
			    ret);
	return track_process(f, tgid, 0, "", ret);
}

static int
put_gpumem(struct pf *f, const struct window *w)
{
	const struct window_gpumem_part *g = window_gpumem(w);
	struct unit bytes = { UNIT_BYTES, 0 };
	uint64_t uuid;
	char name[64];
	size_t i;
	int r;

	for (i = 0; g && i < g->n_gpu; i++) {
		const struct window_gpu_proc *p = &g->gpu[i];

		if (p->pid == 0) {
			snprintf(name, sizeof(name), "gpu%u.mem.total",
			    p->gpu_id);
			uuid = 0;
		} else {
			if (!wanted(f, p->pid))
				continue;
			snprintf(name, sizeof(name), "gpu%u.mem", p->gpu_id);
			if ((r = track_process(f, p->pid, p->starttime, p->name,
				 &uuid)) < 0)
				return r;
		}
		if (p->pid == 0 && f->o->pid > 0)
			continue;
		if ((r = counter(f, uuid, name, bytes, w->wall_end_ns,
			 (int64_t)p->bytes)) < 0)
			return r;
	}
	return 0;
}

/*
 * ATrace: a window keeps slice statistics per (process, thread, depth,
 * kind, name), not the slices; each (process, kind, name) becomes two
 * counters, complete slices and their Σ duration, summed over threads and
 * depths. Counters (C markers) keep their last value.
 */
static int
put_trace(struct pf *f, const struct window *w)
{
	const struct window_trace *t = window_trace(w);
	struct unit ns = { UNIT_NS, 0 }, count = { UNIT_COUNT, 0 };
	char name[VITALS_TRACE_NAME + 32];
	uint64_t uuid, n, sum;
	uint32_t i, j;
	int r;

	if (t == NULL || t->state == FTRACE_UNKNOWN)
		return 0;
	for (i = 0; i < t->nslices; i++) {
		const struct window_trace_slice *s = &t->slice[i];
		bool dup = false;

		if (!wanted(f, s->tgid))
			continue;
		/* first row of its (process, kind, name) sums the rest */
		for (j = 0; j < i && !dup; j++)
			dup = t->slice[j].tgid == s->tgid &&
			    t->slice[j].kind == s->kind &&
			    strcmp(t->slice[j].name, s->name) == 0;
		if (dup)
			continue;
		n = sum = 0;
		for (j = i; j < t->nslices; j++)
			if (t->slice[j].tgid == s->tgid &&
			    t->slice[j].kind == s->kind &&
			    strcmp(t->slice[j].name, s->name) == 0) {
				n += t->slice[j].count;
				sum += t->slice[j].total_ns;
			}
		uuid = 0;
		if (s->tgid > 0 && (r = track_tgid(f, w, s->tgid, &uuid)) < 0)
			return r;
		snprintf(name, sizeof(name), "atrace.%s %s count",
		    trace_kind_name(s->kind), s->name);
		if ((r = counter(f, uuid, name, count, w->wall_start_ns,
			 (int64_t)n)) < 0)
			return r;
		if (s->kind == TRACE_INSTANT)
			continue;
		snprintf(name, sizeof(name), "atrace.%s %s ns",
		    trace_kind_name(s->kind), s->name);
		if ((r = counter(f, uuid, name, ns, w->wall_start_ns,
			 (int64_t)sum)) < 0)
			return r;
	}
	for (i = 0; i < t->ncounters; i++) {
		const struct window_trace_counter *c = &t->counter[i];

		if (!wanted(f, c->tgid) || c->n == 0)
			continue;
		uuid = 0;
		if (c->tgid > 0 && (r = track_tgid(f, w, c->tgid, &uuid)) < 0)
			return r;
		snprintf(name, sizeof(name), "atrace %s", c->name);
		if ((r = counter(f, uuid, name, count, w->wall_end_ns,
			 c->last)) < 0)
			return r;
	}
	return 0;
}

/*
 * Syscall latency: each slow call of a window as a slice on its thread's
 * track (the thread's instance when the window has its row), named after
 * the syscall, its return value as the argument "ret". The enter time is
 * CLOCK_BOOTTIME: moved onto the trace's clock by the window's offset
 * between the two clocks at its end.
 */
static int
slice(struct pf *f, uint64_t track, int64_t wall_ns, bool begin,
    const char *name, int64_t ret)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	Perfetto__Protos__DebugAnnotation da =
	    PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	Perfetto__Protos__DebugAnnotation *dav[1] = { &da };

	p.has_timestamp = 1;
	p.timestamp = (uint64_t)wall_ns;
	p.has_timestamp_clock_id = 1;
	p.timestamp_clock_id = CLOCK_REALTIME_ID;
	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = SEQ_ID;
	p.has_sequence_flags = 1;
	p.sequence_flags =
	    PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	te.has_type = 1;
	te.type = begin ?
	    PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN :
	    PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	te.has_track_uuid = 1;
	te.track_uuid = track;
	if (begin) {
		te.name = (char *)name;
		da.name = "ret";
		da.has_int_value = 1;
		da.int_value = ret;
		te.debug_annotations = dav;
		te.n_debug_annotations = 1;
	}
	p.track_event = &te;
	return put_packet(f, &f->ev, &p);
}

static int
put_syscalls(struct pf *f, const struct window *w)
{
	const struct window_syscalls *p = window_syscalls(w);
	int64_t off = w->wall_end_ns - w->boot_end_ns, at;
	struct window_task t;
	const char *nm;
	char name[32];
	uint64_t uuid;
	size_t i, k;
	int r;

	if (p == NULL || w->wall_end_ns <= 0 || w->boot_end_ns <= 0)
		return 0;
	for (i = 0; i < p->nslow; i++) {
		const struct sc_slow *s = &p->slow[i];

		if (!wanted(f, s->tgid) || (at = s->boot_enter_ns + off) <= 0)
			continue;
		memset(&t, 0, sizeof(t));
		t.id = s->tid;
		t.tgid = s->tgid;
		memcpy(t.comm, s->comm, sizeof(s->comm));
		t.comm[sizeof(t.comm) - 1] = '\0';
		for (k = 0; k < w->nthreads; k++)
			if (w->threads[k].id == s->tid) {
				t.starttime = w->threads[k].starttime;
				break;
			}
		nm = p->arch < SYSNAMES__MAX ? sysnames_name(p->arch, s->nr) :
					       NULL;
		if (nm == NULL) {
			snprintf(name, sizeof(name), "nr%u", s->nr);
			nm = name;
		}
		if ((r = track_thread(f, &t, &uuid)) < 0 ||
		    (r = slice(f, uuid, at, true, nm, s->ret)) < 0 ||
		    (r = slice(f, uuid, at + (int64_t)s->lat_ns, false, NULL,
			 0)) < 0)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------- a trace */

/* The first packet: clears the sequence's state and names the trace's
 * clock; BOOTTIME beside it (the newest window's two ends were read
 * together) lets a reader place other BOOTTIME data. */
static int
put_head(struct pf *f, struct vbuf *b, const struct window *newest)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot cs =
	    PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[2] = {
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
		PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
	};
	Perfetto__Protos__ClockSnapshot__Clock *cv[2] = { &c[0], &c[1] };

	c[0].has_clock_id = c[0].has_timestamp = 1;
	c[0].clock_id = CLOCK_REALTIME_ID;
	c[0].timestamp = (uint64_t)(newest && newest->wall_end_ns > 0 ?
		newest->wall_end_ns :
		0);
	c[1].has_clock_id = c[1].has_timestamp = 1;
	c[1].clock_id = CLOCK_BOOTTIME_ID;
	c[1].timestamp = (uint64_t)(newest && newest->boot_end_ns > 0 ?
		newest->boot_end_ns :
		0);
	cs.clocks = cv;
	cs.n_clocks = newest && newest->boot_end_ns > 0 ? 2 : 1;
	cs.has_primary_trace_clock = 1;
	cs.primary_trace_clock = CLOCK_REALTIME_ID;
	p.clock_snapshot = &cs;
	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = SEQ_ID;
	p.has_sequence_flags = 1;
	p.sequence_flags =
	    PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	return put_packet(f, b, &p);
}

static void
pf_release(struct pf *f)
{
	vbuf_release(&f->desc);
	vbuf_release(&f->ev);
	free(f->set);
	memset(f, 0, sizeof(*f));
}

/* The trace of w[first..n) into out. */
static int
encode(struct window *const *w, size_t first, size_t n,
    const struct export_perfetto_opts *o, struct vbuf *out,
    struct export_perfetto_info *info)
{
	struct pf f = { .o = o };
	size_t i;
	int r;

	vbuf_reset(out);
	if ((r = put_head(&f, out, n > first ? w[n - 1] : NULL)) < 0)
		goto out;
	for (i = first; i < n; i++)
		if ((r = put_system(&f, w[i])) < 0 ||
		    (r = put_tasks(&f, w[i])) < 0 ||
		    (r = put_gpumem(&f, w[i])) < 0 ||
		    (r = put_trace(&f, w[i])) < 0 ||
		    (r = put_syscalls(&f, w[i])) < 0)
			goto out;
	r = -ENOMEM;
	if (vbuf_reserve(out, f.desc.len + f.ev.len) < 0)
		goto out;
	if (f.desc.len)
		memcpy(out->p + out->len, f.desc.p, f.desc.len);
	out->len += f.desc.len;
	if (f.ev.len)
		memcpy(out->p + out->len, f.ev.p, f.ev.len);
	out->len += f.ev.len;
	memset(info, 0, sizeof(*info));
	info->first = first;
	info->windows = (uint32_t)(n - first);
	info->packets = f.packets;
	info->tracks = f.tracks;
	if (n > first) {
		info->first_wall_ns = w[first]->wall_start_ns;
		info->last_wall_ns = w[n - 1]->wall_end_ns;
	}
	r = 0;
out:
	pf_release(&f);
	return r;
}

static bool
fits(const struct export_perfetto_opts *o, const struct vbuf *b)
{
	return o->max_bytes == 0 || b->len <= o->max_bytes;
}

int
export_perfetto(struct window *const *w, size_t n,
    const struct export_perfetto_opts *o, uint8_t **ret, size_t *ret_len,
    struct export_perfetto_info *ret_info)
{
	struct export_perfetto_info info;
	struct vbuf out = { 0 };
	size_t lo, hi, mid;
	int r;

	if ((r = encode(w, 0, n, o, &out, &info)) < 0)
		goto fail;
	if (!fits(o, &out)) {
		/* the newest that fit: the smallest first whose trace fits
		 * (a trace of fewer windows is never larger) */
		if ((r = encode(w, n ? n - 1 : 0, n, o, &out, &info)) < 0)
			goto fail;
		if (!fits(o, &out)) {
			r = -EMSGSIZE;
			goto fail;
		}
		lo = 1;
		hi = n ? n - 1 : 0;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if ((r = encode(w, mid, n, o, &out, &info)) < 0)
				goto fail;
			if (fits(o, &out))
				hi = mid;
			else
				lo = mid + 1;
		}
		if ((r = encode(w, hi, n, o, &out, &info)) < 0)
			goto fail;
	}
	*ret = (uint8_t *)out.p;
	*ret_len = out.len;
	*ret_info = info;
	return 0;
fail:
	vbuf_release(&out);
	return r;
}
