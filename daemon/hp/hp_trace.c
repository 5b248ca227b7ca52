/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A heapprofd session's trace, checked for its own verdict: the
 * ProfilePacket dumps (TracePacket field 37, ProcessHeapSamples in field
 * 5) for the target pids, and heapprofd's error fields on each of them
 * (rejected_concurrent, disconnected, buffer_overran / client_error,
 * buffer_corrupted, hit_guardrail). Field numbers are Perfetto's public
 * ones (protos/perfetto/trace/trace_packet.proto and
 * profiling/profile_packet.proto); the subset in proto/perfetto_trace.proto
 * names them for tests.
 *
 * Bounded: four fixed levels (Trace, TracePacket, ProfilePacket,
 * ProcessHeapSamples), no recursion, no allocation that depends on the
 * input; everything else (samples, interned tables, other packets) is
 * skipped by its length without being read. A file is read through one
 * 64 KiB window. Anything that does not parse as protobuf wire format —
 * a length past its parent, a varint over 10 bytes, a group, field 0, a
 * known field with the wrong wire type, a cut — makes the trace
 * trace_corrupt, with the offset and reason. Pure apart from pread(2):
 * the unit tests and fuzz/fuzz_hptrace.c feed it bytes. doc/heapprofd.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hp/hp.h"

#define RD_CACHE 65536

/* Perfetto's field numbers */
#define F_TRACE_PACKET 1
#define F_PACKET_PROFILE 37
#define F_PROFILE_DUMPS 5
#define F_DUMP_PID 1
#define F_DUMP_REJECTED 4
#define F_DUMP_DISCONNECTED 6
#define F_DUMP_OVERRAN 7
#define F_DUMP_CORRUPTED 8
#define F_DUMP_GUARDRAIL 10
#define F_DUMP_CLIENT_ERROR 14
#define CLIENT_ERROR_HIT_TIMEOUT 1 /* what buffer_overran says on S+ */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

struct rd {
	const uint8_t *mem; /* the whole input; NULL: read from fd */
	int fd;
	uint64_t size;
	uint8_t *cache;
	uint64_t base;
	size_t have;
	int err; /* a read failed: -errno */
	struct hp_trace_verdict *v;
};

static const char *const profile_names[HP_PROF__MAX] = {
	[HP_PROF_COMPLETED] = "completed",
	[HP_PROF_DISCONNECTED] = "disconnected",
	[HP_PROF_BUFFER_OVERRAN] = "buffer_overran",
	[HP_PROF_BUFFER_CORRUPTED] = "buffer_corrupted",
	[HP_PROF_GUARDRAIL] = "guardrail",
	[HP_PROF_REJECTED] = "rejected",
	[HP_PROF_NO_PROFILE] = "no_profile",
	[HP_PROF_TRACE_CORRUPT] = "trace_corrupt",
};

const char *
hp_profile_name(enum hp_profile p)
{
	return (unsigned)p < HP_PROF__MAX ? profile_names[p] : "unknown";
}

static int
corrupt(struct rd *r, uint64_t off, const char *why)
{
	if (r->v->outcome != HP_PROF_TRACE_CORRUPT) {
		r->v->outcome = HP_PROF_TRACE_CORRUPT;
		r->v->bad_offset = off;
		snprintf(r->v->why, sizeof(r->v->why), "%s", why);
	}
	return -EBADMSG;
}

/* Up to 10 bytes at off, never past end: a pointer to them and how many. */
static const uint8_t *
rd_peek(struct rd *r, uint64_t off, uint64_t end, size_t *ret_n)
{
	size_t want = end - off < 10 ? (size_t)(end - off) : 10;
	ssize_t got;

	*ret_n = want;
	if (r->mem)
		return r->mem + off;
	if (off >= r->base && off + want <= r->base + r->have)
		return r->cache + (off - r->base);
	r->base = off;
	r->have = 0;
	while (r->have < want) {
		got = pread(r->fd, r->cache + r->have, RD_CACHE - r->have,
		    (off_t)(off + r->have));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r->err = got < 0 ? -errno : -EIO;
			return NULL;
		}
		r->have += (size_t)got;
	}
	return r->cache;
}

/* A varint at *off, below end; *off moves past it. */
static int
rd_varint(struct rd *r, uint64_t *off, uint64_t end, uint64_t *ret)
{
	const uint8_t *p;
	uint64_t v = 0;
	size_t n, i;

	if (*off >= end)
		return corrupt(r, *off, "cut inside a field");
	if ((p = rd_peek(r, *off, end, &n)) == NULL)
		return corrupt(r, *off, "read failed");
	for (i = 0; i < n; i++) {
		if (i == 9 && p[i] > 1)
			return corrupt(r, *off, "varint over 64 bits");
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if ((p[i] & 0x80) == 0) {
			*off += i + 1;
			*ret = v;
			return 0;
		}
	}
	return corrupt(r, *off,
	    n < 10 ? "cut inside a varint" : "varint over 10 bytes");
}

/*
 * The next field's key at *off (below end): number and wire type; for a
 * length-delimited field its payload is [*ret_start, *ret_end) and *off
 * moves past it, for the others past the value (a varint's in *ret_val).
 */
static int
rd_field(struct rd *r, uint64_t *off, uint64_t end, uint32_t *ret_num,
    unsigned *ret_wt, uint64_t *ret_val, uint64_t *ret_start, uint64_t *ret_end)
{
	uint64_t at = *off, key, len;
	int e;

	if ((e = rd_varint(r, off, end, &key)) < 0)
		return e;
	if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff)
		return corrupt(r, at, "field number 0 or too large");
	*ret_num = (uint32_t)(key >> 3);
	*ret_wt = (unsigned)(key & 7);
	*ret_val = 0;
	switch (*ret_wt) {
	case WT_VARINT:
		return rd_varint(r, off, end, ret_val);
	case WT_I64:
	case WT_I32:
		len = *ret_wt == WT_I64 ? 8 : 4;
		if (end - *off < len)
			return corrupt(r, *off, "fixed-size field cut");
		*off += len;
		return 0;
	case WT_LEN:
		if ((e = rd_varint(r, off, end, &len)) < 0)
			return e;
		if (len > end - *off)
			return corrupt(r, at, "length past its message");
		*ret_start = *off;
		*ret_end = *off + len;
		*off += len;
		return 0;
	default:
		return corrupt(r, at, "group or unknown wire type");
	}
}

static struct hp_trace_pid *
pid_slot(struct hp_trace_verdict *v, uint64_t pid)
{
	unsigned i;

	for (i = 0; i < v->npids; i++)
		if ((uint64_t)(uint32_t)v->pid[i].pid == pid)
			return &v->pid[i];
	return NULL;
}

/* One ProcessHeapSamples. */
static int
rd_dump(struct rd *r, uint64_t off, uint64_t end)
{
	struct hp_trace_verdict *v = r->v;
	struct hp_trace_pid d = { 0 }, *s;
	uint64_t val, a, b;
	uint32_t num;
	unsigned wt;
	bool have_pid = false;
	int e;

	while (off < end) {
		uint64_t at = off;

		if ((e = rd_field(r, &off, end, &num, &wt, &val, &a, &b)) < 0)
			return e;
		switch (num) {
		case F_DUMP_PID:
		case F_DUMP_REJECTED:
		case F_DUMP_DISCONNECTED:
		case F_DUMP_OVERRAN:
		case F_DUMP_CORRUPTED:
		case F_DUMP_GUARDRAIL:
		case F_DUMP_CLIENT_ERROR:
			if (wt != WT_VARINT)
				return corrupt(r, at,
				    "a heap dump's field "
				    "with the wrong wire type");
			break;
		default:
			continue; /* samples, stats, names: skipped */
		}
		if (num == F_DUMP_PID) {
			d.pid = (int32_t)(uint32_t)val;
			have_pid = val <= UINT32_MAX;
		} else if (num == F_DUMP_REJECTED) {
			d.rejected |= val != 0;
		} else if (num == F_DUMP_DISCONNECTED) {
			d.disconnected |= val != 0;
		} else if (num == F_DUMP_OVERRAN) {
			d.overran |= val != 0;
		} else if (num == F_DUMP_CORRUPTED) {
			d.corrupted |= val != 0;
		} else if (num == F_DUMP_GUARDRAIL) {
			d.guardrail |= val != 0;
		} else if (val == CLIENT_ERROR_HIT_TIMEOUT) {
			d.overran = true;
		} else if (val != 0) {
			d.disconnected = true; /* another client error */
		}
	}
	v->dumps++;
	v->flags.rejected |= d.rejected;
	v->flags.disconnected |= d.disconnected;
	v->flags.overran |= d.overran;
	v->flags.corrupted |= d.corrupted;
	v->flags.guardrail |= d.guardrail;
	if (!have_pid || (s = pid_slot(v, (uint32_t)d.pid)) == NULL) {
		v->other_dumps++;
		return 0;
	}
	s->dumps++;
	s->rejected |= d.rejected;
	s->disconnected |= d.disconnected;
	s->overran |= d.overran;
	s->corrupted |= d.corrupted;
	s->guardrail |= d.guardrail;
	return 0;
}

static int
rd_profile(struct rd *r, uint64_t off, uint64_t end)
{
	uint64_t val, a, b;
	uint32_t num;
	unsigned wt;
	int e;

	r->v->profile_packets++;
	while (off < end) {
		uint64_t at = off;

		if ((e = rd_field(r, &off, end, &num, &wt, &val, &a, &b)) < 0)
			return e;
		if (num != F_PROFILE_DUMPS)
			continue;
		if (wt != WT_LEN)
			return corrupt(r, at, "process_dumps not a message");
		if ((e = rd_dump(r, a, b)) < 0)
			return e;
	}
	return 0;
}

static int
rd_packet(struct rd *r, uint64_t off, uint64_t end)
{
	uint64_t val, a, b;
	uint32_t num;
	unsigned wt;
	int e;

	r->v->packets++;
	while (off < end) {
		uint64_t at = off;

		if ((e = rd_field(r, &off, end, &num, &wt, &val, &a, &b)) < 0)
			return e;
		if (num != F_PACKET_PROFILE)
			continue;
		if (wt != WT_LEN)
			return corrupt(r, at, "profile_packet not a message");
		if ((e = rd_profile(r, a, b)) < 0)
			return e;
	}
	return 0;
}

/* The outcome from what was read: the worst of every target's. */
static void
judge(struct hp_trace_verdict *v)
{
	enum hp_profile worst = HP_PROF_COMPLETED, p;
	unsigned i;

	if (v->outcome == HP_PROF_TRACE_CORRUPT)
		return;
	/* flags of any dump count, a target's own or a process the same
	 * name brought in during the session */
	if (v->flags.disconnected)
		worst = HP_PROF_DISCONNECTED;
	if (v->flags.overran)
		worst = HP_PROF_BUFFER_OVERRAN;
	if (v->flags.corrupted)
		worst = HP_PROF_BUFFER_CORRUPTED;
	if (v->flags.guardrail)
		worst = HP_PROF_GUARDRAIL;
	if (v->flags.rejected)
		worst = HP_PROF_REJECTED;
	for (i = 0; i < v->npids; i++) {
		p = v->pid[i].dumps ? HP_PROF_COMPLETED : HP_PROF_NO_PROFILE;
		if (p > worst)
			worst = p;
	}
	if (v->dumps == 0)
		worst = HP_PROF_NO_PROFILE;
	v->outcome = worst;
}

static void
verdict_init(struct hp_trace_verdict *v, const int32_t *pids, unsigned npids)
{
	unsigned i, k;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < npids && v->npids < HP_PIDS_MAX; i++) {
		for (k = 0; k < v->npids; k++)
			if (v->pid[k].pid == pids[i])
				break;
		if (k == v->npids)
			v->pid[v->npids++].pid = pids[i];
	}
}

static void
rd_trace(struct rd *r)
{
	uint64_t off = 0, val, a, b;
	uint32_t num;
	unsigned wt;

	r->v->bytes = r->size;
	while (off < r->size) {
		uint64_t at = off;

		if (rd_field(r, &off, r->size, &num, &wt, &val, &a, &b) < 0)
			break;
		if (num != F_TRACE_PACKET)
			continue;
		if (wt != WT_LEN) {
			corrupt(r, at, "packet not a message");
			break;
		}
		if (rd_packet(r, a, b) < 0)
			break;
	}
	judge(r->v);
}

void
hp_trace_check(const uint8_t *buf, size_t len, const int32_t *pids,
    unsigned npids, struct hp_trace_verdict *ret)
{
	struct rd r = { .mem = buf, .size = len, .fd = -1, .v = ret };

	verdict_init(ret, pids, npids);
	if (buf == NULL)
		r.size = 0;
	rd_trace(&r);
}

/*
 * The same over a file: 0, or -errno when it could not be read (the
 * verdict then says trace_corrupt, with the reason).
 */
int
hp_trace_check_fd(int fd, const int32_t *pids, unsigned npids,
    struct hp_trace_verdict *ret)
{
	struct rd r = { .fd = fd, .v = ret };
	struct stat sb;

	verdict_init(ret, pids, npids);
	if (fstat(fd, &sb) < 0) {
		r.err = -errno;
		corrupt(&r, 0, "fstat failed");
		return r.err;
	}
	if (!S_ISREG(sb.st_mode)) {
		corrupt(&r, 0, "not a regular file");
		return -EINVAL;
	}
	if ((r.cache = malloc(RD_CACHE)) == NULL) {
		corrupt(&r, 0, "out of memory");
		return -ENOMEM;
	}
	r.size = (uint64_t)sb.st_size;
	rd_trace(&r);
	free(r.cache);
	return r.err;
}

/* One line for the record's message: the outcome's evidence. */
void
hp_trace_summary(const struct hp_trace_verdict *v, char *buf, size_t sz)
{
	size_t n;
	unsigned i;

	if (v->outcome == HP_PROF_TRACE_CORRUPT) {
		snprintf(buf, sz,
		    "trace_corrupt at byte %llu of %llu: %s (%llu packets, "
		    "%llu heap dumps read before)",
		    (unsigned long long)v->bad_offset,
		    (unsigned long long)v->bytes, v->why,
		    (unsigned long long)v->packets,
		    (unsigned long long)v->dumps);
		return;
	}
	n = (size_t)snprintf(buf, sz,
	    "%s: %llu bytes, %llu packets, %llu profile packets, %llu heap "
	    "dumps",
	    hp_profile_name(v->outcome), (unsigned long long)v->bytes,
	    (unsigned long long)v->packets,
	    (unsigned long long)v->profile_packets,
	    (unsigned long long)v->dumps);
	for (i = 0; i < v->npids && n < sz; i++) {
		const struct hp_trace_pid *p = &v->pid[i];

		n += (size_t)snprintf(buf + n, sz - n,
		    "; pid %d: %u dump%s%s%s%s%s%s", (int)p->pid, p->dumps,
		    p->dumps == 1 ? "" : "s", p->rejected ? ", rejected" : "",
		    p->guardrail ? ", guardrail" : "",
		    p->corrupted ? ", buffer corrupted" : "",
		    p->overran ? ", buffer overran" : "",
		    p->disconnected ? ", disconnected" : "");
	}
	if (n < sz && v->other_dumps)
		snprintf(buf + n, sz - n, "; %llu dumps of other pids",
		    (unsigned long long)v->other_dumps);
}
