/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the control socket's input path: the bytes a client
 * sends go through the daemon's own code exactly as control.c runs it —
 * rpc_frame_next() splits the stream and checks each length header,
 * rpc_handle() decodes the Request, checks role, version and operation,
 * validates and resolves the arguments, and builds the in-memory answers
 * (snapshot, health, burst, dump) from a synthetic daemon state. A store
 * request's resolved query is checked and answered from synthetic rows
 * with the query thread's builders. Every answer must decode again.
 *
 * The first input byte picks the caller's role; the rest is the stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sysnames.h"
#include "frame.h"
#include "vitalsd.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n) __asan_poison_memory_region((p), (n))
#define FUZZ_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#endif
#endif
#ifndef FUZZ_POISON
#define FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define FUZZ_MAX_FRAME (64u * 1024) /* small: the TOO_LARGE paths too */

/*
 * Frames run per input; the rest of a longer stream is ignored. What one
 * request leaves for the next on a connection is the answer cache
 * (RPC_CACHE_SLOTS entries, here kept across inputs as a long-lived
 * daemon keeps it) and the counters, and control.c holds at most
 * CONTROL_PIPELINE (4) requests at once: 16 frames fill and turn over the
 * cache within one input. Without the cap libFuzzer grows inputs of
 * hundreds of repeated tiny frames (each new hit count of the frame loop
 * is a "feature"), and one such input cost tens of ms under ASan.
 */
#define FUZZ_MAX_FRAMES 16

/*
 * The answers are decoded into a bump arena, not with malloc: a health
 * or snapshot answer decodes into hundreds of small objects, and under
 * ASan their malloc/free (stack capture, quarantine) was most of an
 * execution's cost. ASan still sees every object: the arena stays
 * poisoned but for the objects handed out, each followed by a poisoned
 * red zone, so an overrun while decoding is reported as it would be in
 * the heap. A decode that does not fit goes to malloc.
 */
#define ARENA_SIZE (16u << 20)
#define ARENA_RZ 16

static uint8_t *arena;
static size_t arena_used;

/* harness plumbing: no coverage feedback from it */
__attribute__((no_sanitize("coverage"))) static void *
arena_alloc(void *data, size_t n)
{
	size_t need = (n + ARENA_RZ - 1) / ARENA_RZ * ARENA_RZ + ARENA_RZ;
	void *p;

	(void)data;
	if (ARENA_SIZE - arena_used < need)
		return malloc(n);
	p = arena + arena_used;
	FUZZ_UNPOISON(p, n);
	arena_used += need;
	return p;
}

__attribute__((no_sanitize("coverage"))) static void
arena_free(void *data, void *p)
{
	(void)data;
	if ((uint8_t *)p < arena || (uint8_t *)p >= arena + ARENA_SIZE)
		free(p);
}

/* Everything decoded since the last reset is gone (use after: reported). */
static void
arena_reset(void)
{
	FUZZ_POISON(arena, arena_used);
	arena_used = 0;
}

static ProtobufCAllocator arena_pb = { arena_alloc, arena_free, NULL };

static struct window *win;
static struct window_task tasks[8];
static struct store_hist hist[4];
static struct vitalsd_info info;
static struct control_stats stats;
static struct rpc_cache cache;

static void
mktask(struct window_task *t, int32_t id, int32_t tgid, uint64_t cpu)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->tgid = tgid;
	t->starttime = 1000 + (uint64_t)id;
	t->uid = 10000;
	snprintf(t->comm, sizeof(t->comm), "t%d\xff", id);
	window_task_set_namef(t, "task.%d", id);
	t->d_utime = cpu;
	t->d_stime = cpu / 3;
	t->samples = 10;
	t->wall_ns = NSEC_PER_SEC;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned i;

	(void)argc;
	(void)argv;
	log_init(true, 0, "fuzz");
	if ((arena = malloc(ARENA_SIZE)) == NULL)
		abort();
	FUZZ_POISON(arena, ARENA_SIZE);
	if ((win = window_new(7, 4)) == NULL)
		abort();
	win->hz = 100;
	win->samples = win->samples_valid = 10;
	win->mono_end_ns = 10 * NSEC_PER_SEC;
	win->vm_have = ~0u;
	win->mem_have = ~0u;
	/* an ftrace part with rows, for the trace answers */
	if (window_trace_make(win, true) == NULL)
		abort();
	window_trace(win)->state = FTRACE_ON;
	window_trace(win)->enabled = 1u << FEV_PRINT;
	window_trace(win)->overrun = 3;
	window_trace(win)->nslices = 2;
	window_trace(win)->slice[0] = (struct window_trace_slice){ .tgid = 7,
		.tid = 8,
		.count = 2,
		.total_ns = 5,
		.name = "s\xff" };
	window_trace(win)->slice[1] = (struct window_trace_slice){ .tgid = 9,
		.tid = 9,
		.incomplete = 1,
		.name = "" };
	window_trace(win)->ncounters = 1;
	window_trace(win)->counter[0] =
	    (struct window_trace_counter){ .tgid = 7, .n = 1, .name = "c" };
	for (i = 0; i < 8; i++) {
		mktask(&tasks[i], (int32_t)i + 1, 1, 10 * i);
		if (window_add_task(win, i % 2, &tasks[i]) < 0)
			abort();
	}
	for (i = 0; i < 4; i++) {
		memset(&hist[i], 0, sizeof(hist[i]));
		hist[i].hz = 100;
		hist[i].wall_start_ns = (int64_t)i * 10 * NSEC_PER_SEC;
		hist[i].wall_end_ns = hist[i].wall_start_ns + 10 * NSEC_PER_SEC;
		hist[i].t = tasks[i];
	}
	info.last = win;
	info.hz = 100;
	info.interval_ms = 1000;
	info.have_store = true;
	return 0;
}

/* An answer must be a frame holding a Response of the right id. */
static void
check_answer(const uint8_t *frame, size_t len)
{
	Vitals__Response *resp;
	uint32_t plen;

	if (frame == NULL || len < VITALS_FRAME_HDR ||
	    frame_header(frame, UINT32_MAX, &plen) < 0 ||
	    plen + VITALS_FRAME_HDR != len)
		abort();
	if ((resp = vitals__response__unpack(&arena_pb, plen,
		 frame + VITALS_FRAME_HDR)) == NULL)
		abort();
	if (resp->version != 1)
		abort();
	/* An answer without an id can be shared: restamped, it is the same
	 * payload with the id field right after the version. Checked on the
	 * bytes: by protobuf's field concatenation such a payload decodes to
	 * this answer with the new id (all of it, not only status and kind),
	 * and a second decode of the largest answers cost as much as the
	 * first. */
	if (resp->id == 0) {
		Vitals__Response head = VITALS__RESPONSE__INIT;
		uint8_t pre[16], *f;
		uint32_t flen;
		size_t l, n;

		head.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
		head.id = 0x1234567890ULL;
		n = vitals__response__pack(&head, pre); /* version, id */
		if (rpc_frame_reid(frame, len, head.id, &f, &l) < 0 ||
		    l != len + n - 2 ||
		    frame_header(f, UINT32_MAX, &flen) < 0 ||
		    flen + VITALS_FRAME_HDR != l ||
		    memcmp(frame + VITALS_FRAME_HDR, pre, 2) != 0 ||
		    memcmp(f + VITALS_FRAME_HDR, pre, n) != 0 ||
		    memcmp(f + VITALS_FRAME_HDR + n,
			frame + VITALS_FRAME_HDR + 2,
			len - VITALS_FRAME_HDR - 2) != 0)
			abort();
		free(f);
	}
	vitals__response__free_unpacked(resp, &arena_pb);
	arena_reset();
}

/* What the query thread would answer, from synthetic rows. */
static void
run_query(const struct rpc_query *q, int64_t now)
{
	struct window *ws[2] = { win, win };
	uint8_t *frame = NULL;
	size_t len = 0;
	int r = -EINVAL;

	/* Whatever came in, the resolved range is sane: ranges before 1970
	 * are allowed (a device whose clock starts at 0), "since" saturates
	 * at -2^62 ns. */
	if (q->from_wall_ns < -(INT64_C(1) << 62) ||
	    q->from_wall_ns >= q->to_wall_ns ||
	    (q->op == RPC_Q_TOP && (q->n == 0 || q->n > 1000)) ||
	    (q->op == RPC_Q_TOP && q->metric > METRIC_RSS) ||
	    (q->op == RPC_Q_PROCESS && q->pid <= 0) ||
	    (q->op == RPC_Q_WINDOWS && q->max_windows == 0) ||
	    (q->op == RPC_Q_TRACE &&
		(q->pid < 0 || q->max_windows == 0 ||
		    memchr(q->process, '\0', sizeof(q->process)) == NULL)) ||
	    (q->op == RPC_Q_EXPORT && (q->pid < 0 || q->max_windows == 0)) ||
	    (q->op == RPC_Q_SYSCALLS &&
		(q->pid < 0 ||
		    memchr(q->process, '\0', sizeof(q->process)) == NULL)))
		abort();
	switch (q->op) {
	case RPC_Q_WINDOWS:
		r = rpc_answer_windows(q, ws, 2, true, FUZZ_MAX_FRAME, &frame,
		    &len);
		break;
	case RPC_Q_TOP:
		r = rpc_answer_top(q, tasks, q->n < 8 ? q->n : 8,
		    FUZZ_MAX_FRAME, &frame, &len);
		break;
	case RPC_Q_PROCESS:
		/* odd n: a quiet process, answered by its identity alone */
		r = rpc_answer_process(q, hist, q->n & 1 ? 0 : 4, hist,
		    q->threads ? 4 : 0, q->n & 1 ? &tasks[0] : NULL,
		    q->n & 1 ? RPC_IDENT_PROC : RPC_IDENT_NONE,
		    q->n & 2 ? q->process : NULL, NULL, 0, FUZZ_MAX_FRAME,
		    &frame, &len);
		break;
	case RPC_Q_GPUMEM: {
		/* a GPU's global total and one process on it */
		struct gpumem_span sp[2] = {
			{ .p = { .gpu_id = 0,
			      .pid = 0,
			      .bytes = 1 << 20,
			      .min_bytes = 1 << 19,
			      .max_bytes = 1 << 21 },
			    .first_bytes = 1 << 19,
			    .windows = 2,
			    .series_n = 2 },
			{ .p = { .gpu_id = 0,
			      .pid = 42,
			      .starttime = 7,
			      .bytes = 4096,
			      .min_bytes = 0,
			      .max_bytes = 8192,
			      .name = "app" },
			    .first_bytes = 0,
			    .windows = 2,
			    .series_off = 2,
			    .series_n = 1 },
		};
		/* two points; pid 42 in the newer only (a gap before) */
		int64_t ends[2] = { now - 10, now };
		uint64_t bytes[3] = { 1 << 19, 1 << 20, 4096 };
		uint32_t index[3] = { 0, 1, 1 };
		struct gpumem_series ser = { .end_wall_ns = ends,
			.n = 2,
			.step = 1,
			.windows = 2,
			.bytes = bytes,
			.index = index,
			.nvalues = 3 };
		struct window_gpumem st = { .state = 4,
			.capacity = 1024,
			.entries = 2 };

		r = rpc_answer_gpumem_span(q, sp, 2, &st, &ser, FUZZ_MAX_FRAME,
		    &frame, &len);
		break;
	}
	case RPC_Q_TRACE:
		r = rpc_answer_trace(q, ws, 2, false, FUZZ_MAX_FRAME, &frame,
		    &len);
		break;
	case RPC_Q_EXPORT:
		r = rpc_answer_export(q, ws, 2, false, FUZZ_MAX_FRAME, &frame,
		    &len);
		break;
	case RPC_Q_DMABUF: {
		/* one buffer two processes share, one exporter */
		struct dmabuf_proc pr[2] = {
			{ .pid = 42,
			    .name = "app",
			    .passes = 1,
			    .fds = 2,
			    .buffers = 1,
			    .bytes = 4096,
			    .bytes_max = 4096,
			    .shared_bytes = 4096,
			    .pss_bytes = 2048 },
			{ .pid = -1, .name = "other", .passes = 1, .procs = 3 }
		};
		struct dmabuf_exp ex = { .name = "system",
			.passes = 1,
			.buffers = 1,
			.bytes = 4096,
			.bytes_max = 4096 };
		struct dmabuf_shared sh = { .ino = 7,
			.size = 4096,
			.exp = "system",
			.sharers = 2,
			.npids = 2,
			.pids = { 42, 43 } };
		struct window_dmabuf p = { .passes = 1,
			.pass_wall_ns = now,
			.total_bytes = 4096,
			.buffers = 1,
			.shared_bytes = 4096,
			.shared_buffers = 1,
			.nprocs = 2,
			.procs = pr,
			.nexps = 1,
			.exps = &ex,
			.nshared = 1,
			.shared = &sh };

		r = rpc_answer_dmabuf(q, q->n & 1 ? NULL : &p, 2,
		    FUZZ_MAX_FRAME, &frame, &len);
		break;
	}
	case RPC_Q_GPUFREQ: {
		/* a kgsl device with busy time and two states, one with
		 * nothing known */
		struct gpufreq_wdev dv[2] = {
			{ .name = "kgsl-3d0",
			    .kind = GPUFREQ_KGSL,
			    .w = { .have = GPUFREQ_HAVE_CUR |
				    GPUFREQ_HAVE_BUSY | GPUFREQ_HAVE_TIS,
				.reads = 2,
				.cur_n = 2,
				.cur_min_hz = 180000000,
				.cur_max_hz = 585000000,
				.cur_sum_hz = 765000000,
				.busy_us = 10,
				.total_us = 40,
				.tis_n = 2,
				.tis_hz = { 585000000, 180000000 },
				.tis_ms = { 5, 7 } } },
			{ .name = "gpu", .kind = GPUFREQ_DEVFREQ }
		};
		struct window_gpufreq p = { .found = 2,
			.windows = 1,
			.reads = 2,
			.ndev = 2,
			.dev = dv };

		r = rpc_answer_gpufreq(q, q->n & 1 ? NULL : &p, FUZZ_MAX_FRAME,
		    &frame, &len);
		break;
	}
	case RPC_Q_SYSCALLS: {
		/* one process's reads (two with errors), the other row, and
		 * one slow call; names resolved on x86_64 */
		struct sc_row row = { .tgid = 42,
			.start_ns = 7,
			.comm = "app",
			.nr = 0,
			.count = 10,
			.errors = { 1, 1, 0, 0 },
			.sum_ns = 50000,
			.max_ns = 20000,
			.hist = { [12] = 8, [14] = 2 } };
		struct sc_slow sl = { .tid = 43,
			.tgid = 42,
			.start_ns = 7,
			.comm = "worker",
			.nr = 202,
			.ret = -110,
			.boot_enter_ns = now,
			.lat_ns = 60000000 };
		struct window_syscalls p = { .state = SC_ON,
			.arch = SYSNAMES_X86_64,
			.slow_ns = 50000000,
			.nrows = 1,
			.rows = &row,
			.other = { .tgid = -1, .count = 3, .sum_ns = 300 },
			.other_rows = 2,
			.nslow = 1,
			.slow = &sl };

		r = rpc_answer_syscalls(q, q->n & 1 ? NULL : &p, 2,
		    FUZZ_MAX_FRAME, &frame, &len);
		break;
	}
	case RPC_Q_HP_LIST: {
		/* a finished session by a rule and a running one by a caller */
		struct hp_record v[2] = {
			{ .id = 1,
			    .created_wall_ns = now,
			    .by_rule = true,
			    .rule = "grow",
			    .target = "com.app",
			    .outcome = "completed",
			    .exit_status = 0,
			    .output_bytes = 4096,
			    .child_pid = 99 },
			{ .id = 2,
			    .created_wall_ns = now,
			    .caller_uid = 1000,
			    .target = "pid 42",
			    .outcome = "running",
			    .exit_status = -1,
			    .output_bytes = -1 },
		};

		r = rpc_answer_hp_list(q, v, q->n < 2 ? q->n : 2,
		    FUZZ_MAX_FRAME, &frame, &len);
		break;
	}
	}
	if (r < 0)
		abort();
	check_answer(frame, len);
	free(frame);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_ctx ctx = {
		.info = &info,
		.stats = &stats,
		/* no modules: a burst is acknowledged, not started */
		.cache = &cache,
		.max_frame = FUZZ_MAX_FRAME,
		.now_wall_ns = 1700000000LL * NSEC_PER_SEC,
	};
	enum control_role role;
	struct rpc_result res;
	unsigned nframes;
	uint32_t len;

	if (size < 1)
		return 0;
	role = (enum control_role)(data[0] % 3);
	data++;
	size--;
	/* The no-window state of a fresh daemon, now and then. */
	info.last = size % 7 == 0 ? NULL : win;
	for (nframes = 0; nframes < FUZZ_MAX_FRAMES; nframes++) {
		int r = rpc_frame_next(data, size, FUZZ_MAX_FRAME, &len);

		if (r == -EAGAIN)
			break;
		if (r < 0) { /* control.c closes the connection */
			if (r != -EBADMSG && r != -EMSGSIZE)
				abort();
			break;
		}
		if (rpc_handle(&ctx, role, data + VITALS_FRAME_HDR, len, &res) <
		    0)
			abort();
		if (res.verdict == RPC_QUERY) {
			if (res.frame != NULL || role == ROLE_NONE)
				abort();
			run_query(&res.query, ctx.now_wall_ns);
		} else {
			check_answer(res.frame, res.len);
			free(res.frame);
		}
		if (res.denied)
			stats.denied++;
		if (res.verdict == RPC_ANSWER_CLOSE)
			break;
		data += VITALS_FRAME_HDR + len;
		size -= VITALS_FRAME_HDR + len;
	}
	return 0;
}
