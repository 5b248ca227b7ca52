/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Raw ring-buffer pages (trace_pipe_raw) into records, with the ftrace
 * maintainers' libtraceevent: kbuffer walks a page, the event formats of
 * the running kernel (or of a fixture tree) say where each field is. Only
 * the events vitalsd uses are looked up; records of any other id are
 * counted by the caller as unknown.
 *
 * The page layout (kernel ring_buffer.c, events/header_page): a 64-bit
 * timestamp, a 64-bit commit word whose low bits are the data length and
 * whose bit 31 says events were lost before this page (bit 30: their number
 * follows the data), then the data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "core/util.h"
#include "trace/trace.h"

#define PAGE_HDR 16
#define RB_MISSED_EVENTS (1ULL << 31)
#define RB_MISSED_STORED (1ULL << 30)
#define RB_SIZE_MASK ((1ULL << 27) - 1)
#define FDEC_IDS 65536 /* common_type is 16 bits */
#define FDEC_FIELDS 6  /* fields read of one event, at most */

/* ring-buffer event header types (kernel ring_buffer.c) */
#define RB_TYPE_PADDING 29
#define RB_TYPE_TIME_EXTEND 30
#define RB_TYPE_TIME_STAMP 31

/* A field as the hot path reads it: offset, size, signedness. */
struct fdec_field {
	unsigned off, size;
	bool sign;
};

struct fdec_event {
	int id; /* −1: absent */
	struct tep_format_field *f[FDEC_FIELDS];
	struct fdec_field ff[FDEC_FIELDS];
};

struct fdec {
	struct tep_handle *tep;
	struct kbuffer *kb;
	struct fdec_event ev[FEV__MAX];
	struct fdec_field type, pid;	/* common_type, common_pid */
	bool fast;			/* the page walker below may be used */
	unsigned short by_id[FDEC_IDS]; /* id → FEV_* + 1; 0: not decoded */
};

static const struct {
	const char *sys, *name;
	const char *fields[FDEC_FIELDS];
} events[FEV__MAX] = {
	[FEV_PRINT] = { "ftrace", "print", { "buf" } },
	[FEV_SCHED_SWITCH] = { "sched", "sched_switch",
	    { "prev_pid", "prev_state", "next_pid" } },
	[FEV_SCHED_WAKING] = { "sched", "sched_waking", { "pid" } },
	[FEV_PROCESS_EXIT] = { "sched", "sched_process_exit", { "pid" } },
	[FEV_BINDER_TXN] = { "binder", "binder_transaction",
	    { "to_proc", "reply", "flags", "debug_id", "to_thread", "code" } },
	[FEV_BINDER_RECV] = { "binder", "binder_transaction_received",
	    { "debug_id" } },
	[FEV_GPU_MEM] = { "gpu_mem", "gpu_mem_total",
	    { "gpu_id", "pid", "size" } },
	[FEV_SCHED_WAKEUP] = { "sched", "sched_wakeup", { "pid" } },
	[FEV_SCHED_WAKEUP_NEW] = { "sched", "sched_wakeup_new", { "pid" } },
	[FEV_PAGE_FAULT] = { "exceptions", "page_fault_user",
	    { "address", "error_code" } },
	[FEV_FILEMAP_FAULT] = { "filemap", "mm_filemap_fault",
	    { "s_dev", "i_ino", "index" } },
	/* order came with large folios (6.x): older kernels add pages */
	[FEV_FILEMAP_ADD] = { "filemap", "mm_filemap_add_to_page_cache",
	    { "s_dev", "i_ino", "index", "?order" } },
	[FEV_RECLAIM_BEGIN] = { "vmscan", "mm_vmscan_direct_reclaim_begin",
	    { NULL } },
	[FEV_RECLAIM_END] = { "vmscan", "mm_vmscan_direct_reclaim_end",
	    { NULL } },
	[FEV_BLOCK_ISSUE] = { "block", "block_rq_issue", { "bytes" } },
};

const char *
ftrace_ev_name(unsigned ev)
{
	static const char *const names[FEV__MAX] = {
		[FEV_PRINT] = "ftrace/print",
		[FEV_SCHED_SWITCH] = "sched/sched_switch",
		[FEV_SCHED_WAKING] = "sched/sched_waking",
		[FEV_PROCESS_EXIT] = "sched/sched_process_exit",
		[FEV_BINDER_TXN] = "binder/binder_transaction",
		[FEV_BINDER_RECV] = "binder/binder_transaction_received",
		[FEV_GPU_MEM] = "gpu_mem/gpu_mem_total",
		[FEV_SCHED_WAKEUP] = "sched/sched_wakeup",
		[FEV_SCHED_WAKEUP_NEW] = "sched/sched_wakeup_new",
		[FEV_PAGE_FAULT] = "exceptions/page_fault_user",
		[FEV_FILEMAP_FAULT] = "filemap/mm_filemap_fault",
		[FEV_FILEMAP_ADD] = "filemap/mm_filemap_add_to_page_cache",
		[FEV_RECLAIM_BEGIN] = "vmscan/mm_vmscan_direct_reclaim_begin",
		[FEV_RECLAIM_END] = "vmscan/mm_vmscan_direct_reclaim_end",
		[FEV_BLOCK_ISSUE] = "block/block_rq_issue",
	};

	return ev < FEV__MAX ? names[ev] : "?";
}

static int
read_file(const char *path, struct vbuf *b)
{
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	vbuf_reset(b);
	r = read_fd_all(fd, b);
	close(fd);
	return r;
}

static void
field_cache(struct fdec_field *c, const struct tep_format_field *f)
{
	c->off = (unsigned)f->offset;
	c->size = (unsigned)f->size;
	c->sign = (f->flags & TEP_FIELD_IS_SIGNED) != 0;
}

/*
 * The formats under events_dir (a tracefs "events" directory or a fixture
 * copy of one). An event whose format is absent is simply not decoded.
 */
int
fdec_new(const char *events_dir, struct fdec **ret)
{
	struct vbuf b = { 0 };
	struct fdec *fd;
	char path[4096];
	unsigned i, k;
	int r;

	if ((fd = calloc(1, sizeof(*fd))) == NULL)
		return -ENOMEM;
	if ((fd->tep = tep_alloc()) == NULL ||
	    (fd->kb = kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 :
							KBUFFER_LSIZE_4,
		 KBUFFER_ENDIAN_SAME_AS_HOST)) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	tep_set_long_size(fd->tep, (int)sizeof(long));
	tep_set_page_size(fd->tep, getpagesize());
	snprintf(path, sizeof(path), "%s/header_page", events_dir);
	if ((r = read_file(path, &b)) < 0)
		goto fail;
	if (tep_parse_header_page(fd->tep, b.p, (unsigned long)b.len,
		(int)sizeof(long)) != 0) {
		r = -EBADMSG;
		goto fail;
	}
	for (i = 0; i < FEV__MAX; i++) {
		struct tep_event *e;

		fd->ev[i].id = -1;
		snprintf(path, sizeof(path), "%s/%s/%s/format", events_dir,
		    events[i].sys, events[i].name);
		if (read_file(path, &b) < 0)
			continue;
		if (tep_parse_event(fd->tep, b.p, b.len, events[i].sys) != 0)
			continue;
		e = tep_find_event_by_name(fd->tep, events[i].sys,
		    events[i].name);
		if (e == NULL)
			continue;
		for (k = 0; k < FDEC_FIELDS && events[i].fields[k]; k++) {
			const char *fn = events[i].fields[k];
			bool opt = fn[0] == '?'; /* optional: 0 when absent */

			if ((fd->ev[i].f[k] = tep_find_field(e, fn + opt)) ==
				NULL &&
			    !opt)
				break;
		}
		if (k < FDEC_FIELDS && events[i].fields[k])
			continue; /* a field is missing: not this layout */
		for (k = 0; k < FDEC_FIELDS && events[i].fields[k]; k++)
			if (fd->ev[i].f[k])
				field_cache(&fd->ev[i].ff[k], fd->ev[i].f[k]);
		if (e->id < 0 || e->id >= FDEC_IDS)
			continue;
		fd->ev[i].id = e->id;
		fd->by_id[e->id] = (unsigned short)(i + 1);
		if (!fd->fast) {
			struct tep_format_field *t, *p;

			t = tep_find_common_field(e, "common_type");
			p = tep_find_common_field(e, "common_pid");
			if (t && p && (t->size == 2 || t->size == 4) &&
			    p->size == 4) {
				field_cache(&fd->type, t);
				field_cache(&fd->pid, p);
				fd->fast = true;
			}
		}
	}
	vbuf_release(&b);
	*ret = fd;
	return 0;
fail:
	vbuf_release(&b);
	fdec_free(fd);
	return r;
}

struct fdec *
fdec_free(struct fdec *fd)
{
	if (fd == NULL)
		return NULL;
	if (fd->kb)
		kbuffer_free(fd->kb);
	if (fd->tep)
		tep_free(fd->tep);
	free(fd);
	return NULL;
}

bool
fdec_has(const struct fdec *fd, unsigned ev)
{
	return ev < FEV__MAX && fd->ev[ev].id >= 0;
}

static int64_t
num(const struct fdec_event *e, unsigned k, const void *data, int size)
{
	const struct tep_format_field *f = e->f[k];
	unsigned long long v = 0;

	if (f == NULL || (int)(f->offset + f->size) > size)
		return 0;
	tep_read_number_field(e->f[k], data, &v);
	if (f->flags & TEP_FIELD_IS_SIGNED) {
		switch (f->size) {
		case 1:
			return (int8_t)v;
		case 2:
			return (int16_t)v;
		case 4:
			return (int32_t)v;
		}
	}
	return (int64_t)v;
}

/* A numeric field read in place (host byte order, as the kernel wrote). */
static int64_t
fnum(const struct fdec_field *f, const unsigned char *d, unsigned size)
{
	if (f->size == 0 || f->off + f->size > size) /* absent optional */
		return 0;
	switch (f->size) {
	case 1:
		return f->sign ? (int64_t)(int8_t)d[f->off] :
				 (int64_t)d[f->off];
	case 2: {
		uint16_t v;

		memcpy(&v, d + f->off, 2);
		return f->sign ? (int64_t)(int16_t)v : (int64_t)v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, d + f->off, 4);
		return f->sign ? (int64_t)(int32_t)v : (int64_t)v;
	}
	case 8: {
		uint64_t v;

		memcpy(&v, d + f->off, 8);
		return (int64_t)v;
	}
	}
	return 0;
}

/* The hot path's decode: the same fields as decode(), read in place. */
static bool
decode_fast(const struct fdec *fd, const unsigned char *d, unsigned size,
    struct ftrace_rec *r)
{
	const struct fdec_event *e;
	unsigned i;

	if (size < 8)
		return false;
	i = fd->by_id[(uint16_t)fnum(&fd->type, d, size)];
	if (i-- == 0)
		return false;
	e = &fd->ev[i];
	r->ev = i;
	r->tid = (int32_t)fnum(&fd->pid, d, size);
	switch (i) {
	case FEV_PRINT:
		if (e->ff[0].off > size)
			return false;
		r->u.print.buf = (const char *)d + e->ff[0].off;
		r->u.print.len = size - e->ff[0].off;
		break;
	case FEV_SCHED_SWITCH:
		r->u.sw.prev_tid = (int32_t)fnum(&e->ff[0], d, size);
		r->u.sw.prev_state = fnum(&e->ff[1], d, size);
		r->u.sw.next_tid = (int32_t)fnum(&e->ff[2], d, size);
		break;
	case FEV_SCHED_WAKING:
	case FEV_SCHED_WAKEUP:
	case FEV_SCHED_WAKEUP_NEW:
		r->u.waking.tid = (int32_t)fnum(&e->ff[0], d, size);
		break;
	case FEV_PROCESS_EXIT:
		r->u.exit.tid = (int32_t)fnum(&e->ff[0], d, size);
		break;
	case FEV_BINDER_TXN:
		r->u.txn.to_proc = (int32_t)fnum(&e->ff[0], d, size);
		r->u.txn.reply = (int32_t)fnum(&e->ff[1], d, size);
		r->u.txn.flags = (uint32_t)fnum(&e->ff[2], d, size);
		r->u.txn.debug_id = (int32_t)fnum(&e->ff[3], d, size);
		r->u.txn.to_thread = (int32_t)fnum(&e->ff[4], d, size);
		r->u.txn.code = (uint32_t)fnum(&e->ff[5], d, size);
		break;
	case FEV_BINDER_RECV:
		r->u.recv.debug_id = (int32_t)fnum(&e->ff[0], d, size);
		break;
	case FEV_GPU_MEM:
		r->u.gpu.gpu_id = (uint32_t)fnum(&e->ff[0], d, size);
		r->u.gpu.pid = (uint32_t)fnum(&e->ff[1], d, size);
		r->u.gpu.size = (uint64_t)fnum(&e->ff[2], d, size);
		break;
	case FEV_PAGE_FAULT:
		r->u.fault.addr = (uint64_t)fnum(&e->ff[0], d, size);
		r->u.fault.error = (uint64_t)fnum(&e->ff[1], d, size);
		break;
	case FEV_FILEMAP_FAULT:
	case FEV_FILEMAP_ADD:
		r->u.fmap.dev = (uint32_t)fnum(&e->ff[0], d, size);
		r->u.fmap.ino = (uint64_t)fnum(&e->ff[1], d, size);
		r->u.fmap.index = (uint64_t)fnum(&e->ff[2], d, size);
		r->u.fmap.order = i == FEV_FILEMAP_ADD ?
		    (uint32_t)fnum(&e->ff[3], d, size) :
		    0;
		break;
	case FEV_BLOCK_ISSUE:
		r->u.blk.bytes = (uint32_t)fnum(&e->ff[0], d, size);
		break;
	}
	return true;
}

static bool
decode(struct fdec *fd, const void *data, int size, struct ftrace_rec *r)
{
	struct tep_record rec = { .data = (void *)data, .size = size };
	const struct fdec_event *e;
	unsigned i;
	int id;

	if (size < 8)
		return false;
	id = tep_data_type(fd->tep, &rec);
	for (i = 0; i < FEV__MAX; i++)
		if (fd->ev[i].id == id)
			break;
	if (i == FEV__MAX)
		return false;
	e = &fd->ev[i];
	r->ev = i;
	r->tid = (int32_t)tep_data_pid(fd->tep, &rec);
	switch (i) {
	case FEV_PRINT: {
		const struct tep_format_field *f = e->f[0];

		if ((int)f->offset > size)
			return false;
		r->u.print.buf = (const char *)data + f->offset;
		r->u.print.len = (size_t)(size - (int)f->offset);
		break;
	}
	case FEV_SCHED_SWITCH:
		r->u.sw.prev_tid = (int32_t)num(e, 0, data, size);
		r->u.sw.prev_state = num(e, 1, data, size);
		r->u.sw.next_tid = (int32_t)num(e, 2, data, size);
		break;
	case FEV_SCHED_WAKING:
	case FEV_SCHED_WAKEUP:
	case FEV_SCHED_WAKEUP_NEW:
		r->u.waking.tid = (int32_t)num(e, 0, data, size);
		break;
	case FEV_PROCESS_EXIT:
		r->u.exit.tid = (int32_t)num(e, 0, data, size);
		break;
	case FEV_BINDER_TXN:
		r->u.txn.to_proc = (int32_t)num(e, 0, data, size);
		r->u.txn.reply = (int32_t)num(e, 1, data, size);
		r->u.txn.flags = (uint32_t)num(e, 2, data, size);
		r->u.txn.debug_id = (int32_t)num(e, 3, data, size);
		r->u.txn.to_thread = (int32_t)num(e, 4, data, size);
		r->u.txn.code = (uint32_t)num(e, 5, data, size);
		break;
	case FEV_BINDER_RECV:
		r->u.recv.debug_id = (int32_t)num(e, 0, data, size);
		break;
	case FEV_GPU_MEM:
		r->u.gpu.gpu_id = (uint32_t)num(e, 0, data, size);
		r->u.gpu.pid = (uint32_t)num(e, 1, data, size);
		r->u.gpu.size = (uint64_t)num(e, 2, data, size);
		break;
	case FEV_PAGE_FAULT:
		r->u.fault.addr = (uint64_t)num(e, 0, data, size);
		r->u.fault.error = (uint64_t)num(e, 1, data, size);
		break;
	case FEV_FILEMAP_FAULT:
	case FEV_FILEMAP_ADD:
		r->u.fmap.dev = (uint32_t)num(e, 0, data, size);
		r->u.fmap.ino = (uint64_t)num(e, 1, data, size);
		r->u.fmap.index = (uint64_t)num(e, 2, data, size);
		r->u.fmap.order = i == FEV_FILEMAP_ADD ?
		    (uint32_t)num(e, 3, data, size) :
		    0;
		break;
	case FEV_BLOCK_ISSUE:
		r->u.blk.bytes = (uint32_t)num(e, 0, data, size);
		break;
	}
	return true;
}

/*
 * The page walker of the hot path (the layout of events/header_page and
 * kernel ring_buffer.c): a u32 header per event, type_len in its low 5
 * bits and the time delta in the other 27; type_len 1..28 is data of
 * type_len words, 0 a data length in the next word (that word included),
 * 29 padding (delta 0: the rest of the page), 30 a time extend. It returns
 * −1 for what it leaves to kbuffer (31, an absolute time stamp, whose
 * upper bits come from elsewhere), before calling fn for any record.
 */
static int
walk_page(const struct fdec *fd, const unsigned char *page, uint64_t size,
    uint64_t commit, int cpu, fdec_fn fn, void *arg, int64_t *ret_missed)
{
	const unsigned char *p = page + PAGE_HDR, *end = p + size;
	uint64_t ts;
	uint32_t h;
	int n = 0;

	/* a first pass only checks for what the walker does not handle */
	while (p + 4 <= end) {
		unsigned tl;

		memcpy(&h, p, 4);
		tl = h & 31;
		if (tl == RB_TYPE_TIME_STAMP)
			return -1;
		if (tl == 0 || tl == RB_TYPE_PADDING) {
			uint32_t len;

			if (tl == RB_TYPE_PADDING && (h >> 5) == 0)
				break;
			if (p + 8 > end)
				return -1;
			memcpy(&len, p + 4, 4);
			if (len < 4 || len > (uint64_t)(end - p - 4))
				return -1;
			p += 4 + ((len + 3) & ~3u);
		} else if (tl == RB_TYPE_TIME_EXTEND) {
			p += 8;
		} else {
			p += 4 + tl * 4;
		}
	}
	memcpy(&ts, page, 8);
	*ret_missed = 0;
	if (commit & RB_MISSED_EVENTS) {
		*ret_missed = -1;
		if (commit & RB_MISSED_STORED)
			memcpy(ret_missed, end, 8);
	}
	p = page + PAGE_HDR;
	while (p + 4 <= end) {
		struct ftrace_rec r;
		const unsigned char *d;
		unsigned tl, dlen;
		uint32_t len;

		memcpy(&h, p, 4);
		tl = h & 31;
		if (tl == RB_TYPE_TIME_EXTEND) {
			if (p + 8 > end)
				break;
			memcpy(&len, p + 4, 4);
			ts += (uint64_t)len << 27 | h >> 5;
			p += 8;
			continue;
		}
		if (tl == RB_TYPE_PADDING) {
			if ((h >> 5) == 0)
				break;
			memcpy(&len, p + 4, 4);
			ts += h >> 5;
			p += 4 + ((len + 3) & ~3u);
			continue;
		}
		ts += h >> 5;
		if (tl == 0) {
			memcpy(&len, p + 4, 4);
			d = p + 8;
			dlen = len - 4;
			p += 4 + ((len + 3) & ~3u);
		} else {
			d = p + 4;
			dlen = tl * 4;
			p += 4 + tl * 4;
		}
		if (d + dlen > end)
			break;
		r.ts = ts;
		r.cpu = cpu;
		if (!decode_fast(fd, d, dlen, &r))
			r.ev = FEV__MAX;
		fn(&r, arg);
		n++;
	}
	return n;
}

/*
 * libtraceevent's kbuffer follows a page's length words as signed ints
 * and moves on by index + length in unsigned arithmetic: a type-0 record
 * whose length word is under 4, or a padding or type-0 length that is
 * negative as an int, sends its walk back to where it was, and
 * kbuffer_load_subbuffer() never returns (the fuzzer found one). Walk the
 * headers as it will (a time extend or an absolute stamp 8 bytes, padding
 * 4 plus its length, a type-0 record 8 plus its rounded length, others 4
 * plus 4 per type_len) and refuse such a page first. Lengths the kernel
 * writes are small and positive: no real page is refused.
 */
static bool
kb_page_safe(const uint8_t *d, uint64_t size, size_t buflen)
{
	uint64_t off = 0;
	uint32_t h, len;
	unsigned type;

	while (off + 4 <= size) {
		memcpy(&h, d + off, 4);
		switch (type = h & 31) {
		case 0:
		case 29:
			if (off + 8 > buflen)
				return false;
			memcpy(&len, d + off + 4, 4);
			if ((int32_t)len < 0 || (type == 0 && len < 4))
				return false;
			off += type == 0 ? 8 + ((len - 4 + 3ull) & ~3ull) :
					   4 + (uint64_t)len;
			break;
		case 30:
		case 31:
			off += 8;
			break;
		default:
			off += 4 + 4 * (uint64_t)type;
		}
	}
	return true;
}

/*
 * Every record of one page, in order, to fn; records of ids not decoded
 * reach fn with ev == FEV__MAX. *ret_missed: 0, the events the header says
 * were lost before this page, or −1 when it says "some" without a number.
 * Returns the number of records, or -EBADMSG for a page whose header
 * claims more data than it holds.
 */
int
fdec_page(struct fdec *fd, const void *page, size_t len, int cpu, fdec_fn fn,
    void *arg, int64_t *ret_missed)
{
	unsigned long long ts;
	uint64_t commit, size, steps = 0;
	void *data;
	int n, m, last;

	if (len < PAGE_HDR)
		return -EBADMSG;
	memcpy(&commit, (const char *)page + 8, sizeof(commit));
	size = commit & RB_SIZE_MASK;
	if (size > len - PAGE_HDR ||
	    ((commit & RB_MISSED_STORED) && size + 8 > len - PAGE_HDR))
		return -EBADMSG;
	if (fd->fast &&
	    (n = walk_page(fd, page, size, commit, cpu, fn, arg, ret_missed)) >=
		0)
		return n;
	/* an absolute time stamp, or something the walker does not take:
	 * libtraceevent's kbuffer reads the page */
	n = 0;
	if (!kb_page_safe((const uint8_t *)page + PAGE_HDR, size,
		len - PAGE_HDR) ||
	    kbuffer_load_subbuffer(fd->kb, (void *)page) < 0)
		return -EBADMSG;
	m = kbuffer_missed_events(fd->kb);
	*ret_missed = m;
	/*
	 * kbuffer walks the page by the lengths in it; a damaged page can
	 * hold a record that does not move it on. Every record takes at
	 * least its 4-byte header, so a walk that does not advance, or one
	 * longer than the page could hold, is a bad page, not a hang.
	 */
	last = -1;
	for (data = kbuffer_read_event(fd->kb, &ts); data != NULL;
	     data = kbuffer_next_event(fd->kb, &ts)) {
		struct ftrace_rec r;
		int esz = kbuffer_event_size(fd->kb);
		int off = kbuffer_curr_offset(fd->kb);

		if (off <= last || ++steps > size / 4 + 1)
			return n ? n : -EBADMSG;
		last = off;

		memset(&r, 0, sizeof(r));
		r.ts = ts;
		r.cpu = cpu;
		if (esz < 0 ||
		    (const char *)data + esz >
			(const char *)page + PAGE_HDR + size)
			break;
		if (!decode(fd, data, esz, &r))
			r.ev = FEV__MAX;
		fn(&r, arg);
		n++;
	}
	return n;
}
