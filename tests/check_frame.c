/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control protocol's framing and codec (proto/frame.c and the
 * generated vitals.pb-c.c): round trips of every operation and result,
 * the length header's edge cases, and malformed payloads of every kind —
 * random bytes, every truncation of valid messages, wrong wire types —
 * which must decode to NULL (or to a valid message) without a crash.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "testutil.h"
#include "vitalsd.h"

#define MAX VITALS_FRAME_MAX_DEFAULT

/* ------------------------------------------------------------ helpers */

static Vitals__Request *
request_roundtrip(const Vitals__Request *req)
{
	uint8_t *buf;
	size_t len;
	uint32_t plen;
	Vitals__Request *out;

	ck_assert_int_eq(frame_pack_request(req, &buf, &len), 0);
	ck_assert_int_eq(frame_header(buf, MAX, &plen), 0);
	ck_assert_uint_eq(plen + VITALS_FRAME_HDR, len);
	out = frame_unpack_request(buf + VITALS_FRAME_HDR, plen);
	ck_assert_ptr_nonnull(out);
	free(buf);
	return out;
}

static Vitals__Response *
response_roundtrip(const Vitals__Response *resp)
{
	uint8_t *buf;
	size_t len;
	uint32_t plen;
	Vitals__Response *out;

	ck_assert_int_eq(frame_pack_response(resp, &buf, &len), 0);
	ck_assert_int_eq(frame_header(buf, MAX, &plen), 0);
	ck_assert_uint_eq(plen + VITALS_FRAME_HDR, len);
	out = frame_unpack_response(buf + VITALS_FRAME_HDR, plen);
	ck_assert_ptr_nonnull(out);
	free(buf);
	return out;
}

/* A payload (no header) of a request; the caller frees it. */
static uint8_t *
pack_request(const Vitals__Request *req, size_t *ret_len)
{
	size_t n = vitals__request__get_packed_size(req);
	uint8_t *p = malloc(n + 64);

	ck_assert_ptr_nonnull(p);
	vitals__request__pack(req, p);
	*ret_len = n;
	return p;
}

/* ------------------------------------------------------- round trips */

START_TEST(test_request_ops)
{
	Vitals__Request req = VITALS__REQUEST__INIT, *out;
	Vitals__SnapshotRequest snap = VITALS__SNAPSHOT_REQUEST__INIT;
	Vitals__WindowsRequest win = VITALS__WINDOWS_REQUEST__INIT;
	Vitals__TopRequest top = VITALS__TOP_REQUEST__INIT;
	Vitals__ProcessRequest proc = VITALS__PROCESS_REQUEST__INIT;
	Vitals__HealthRequest health = VITALS__HEALTH_REQUEST__INIT;
	Vitals__BurstRequest burst = VITALS__BURST_REQUEST__INIT;
	Vitals__DumpRequest dump = VITALS__DUMP_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;

	req.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	req.id = UINT64_MAX;
	tr.from_wall_ns = 1700000000000000000LL;
	tr.to_wall_ns = INT64_MAX;
	tr.since_ns = 3600LL * 1000000000LL;

	snap.top_n = 7;
	req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
	req.snapshot = &snap;
	out = request_roundtrip(&req);
	ck_assert_uint_eq(out->version, 1);
	ck_assert_uint_eq(out->id, UINT64_MAX);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_SNAPSHOT);
	ck_assert_uint_eq(out->snapshot->top_n, 7);
	vitals__request__free_unpacked(out, NULL);

	win.range = &tr;
	win.granularity_s = 60;
	win.with_tasks = true;
	win.max_windows = 12;
	win.top_n = 3;
	req.op_case = VITALS__REQUEST__OP_WINDOWS;
	req.windows = &win;
	out = request_roundtrip(&req);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_WINDOWS);
	ck_assert_int_eq(out->windows->range->from_wall_ns, tr.from_wall_ns);
	ck_assert_int_eq(out->windows->range->to_wall_ns, INT64_MAX);
	ck_assert_int_eq(out->windows->range->since_ns, tr.since_ns);
	ck_assert_uint_eq(out->windows->granularity_s, 60);
	ck_assert(out->windows->with_tasks);
	ck_assert_uint_eq(out->windows->max_windows, 12);
	ck_assert_uint_eq(out->windows->top_n, 3);
	vitals__request__free_unpacked(out, NULL);

	top.range = &tr;
	top.metric = VITALS__METRIC__METRIC_MAJFLT;
	top.threads = true;
	top.n = 20;
	req.op_case = VITALS__REQUEST__OP_TOP;
	req.top = &top;
	out = request_roundtrip(&req);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_TOP);
	ck_assert_int_eq(out->top->metric, VITALS__METRIC__METRIC_MAJFLT);
	ck_assert(out->top->threads);
	ck_assert_uint_eq(out->top->n, 20);
	ck_assert_int_eq(out->top->range->since_ns, tr.since_ns);
	vitals__request__free_unpacked(out, NULL);

	proc.pid = 4321;
	proc.starttime = 123456789;
	proc.threads = true;
	proc.range = &tr;
	req.op_case = VITALS__REQUEST__OP_PROCESS;
	req.process = &proc;
	out = request_roundtrip(&req);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_PROCESS);
	ck_assert_int_eq(out->process->pid, 4321);
	ck_assert_uint_eq(out->process->starttime, 123456789);
	ck_assert(out->process->threads);
	vitals__request__free_unpacked(out, NULL);

	/* An empty sub-message still selects its operation. */
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &health;
	out = request_roundtrip(&req);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_HEALTH);
	ck_assert_ptr_nonnull(out->health);
	vitals__request__free_unpacked(out, NULL);

	burst.duration_ms = 5000;
	req.op_case = VITALS__REQUEST__OP_BURST;
	req.burst = &burst;
	out = request_roundtrip(&req);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_BURST);
	ck_assert_uint_eq(out->burst->duration_ms, 5000);
	vitals__request__free_unpacked(out, NULL);

	dump.top_n = 30;
	req.op_case = VITALS__REQUEST__OP_DUMP;
	req.dump = &dump;
	out = request_roundtrip(&req);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_DUMP);
	ck_assert_uint_eq(out->dump->top_n, 30);
	vitals__request__free_unpacked(out, NULL);

	/* No operation at all is still a decodable message. */
	req.op_case = VITALS__REQUEST__OP__NOT_SET;
	out = request_roundtrip(&req);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP__NOT_SET);
	vitals__request__free_unpacked(out, NULL);
}
END_TEST

static void
init_task(Vitals__Task *t, int32_t id)
{
	vitals__task__init(t);
	t->id = id;
	t->tgid = id;
	t->starttime = 1000 + (uint64_t)id;
	t->uid = 10123;
	t->comm = (char *)"com.example";
	t->name = (char *)"com.example.app";
	t->d_utime = 10;
	t->d_stime = 5;
	t->d_minflt = 1234;
	t->d_majflt = 3;
	t->samples = 10;
	t->wall_ns = 1000000000;
	t->total_ticks = 800;
	t->norm_ticks = 100.5;
	t->rss_pages_max = 4096;
	t->rss_pages_last = 4000;
	t->born = true;
}

START_TEST(test_response_results)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT, *out;
	Vitals__Window w = VITALS__WINDOW__INIT, *wp = &w;
	Vitals__WindowHealth wh = VITALS__WINDOW_HEALTH__INIT;
	Vitals__Cpu all = VITALS__CPU__INIT;
	Vitals__CpuTimes d = VITALS__CPU_TIMES__INIT;
	Vitals__Gauge g = VITALS__GAUGE__INIT;
	Vitals__Task t1, t2, *tasks[2] = { &t1, &t2 };
	Vitals__Snapshot snap = VITALS__SNAPSHOT__INIT;
	Vitals__WindowList wl = VITALS__WINDOW_LIST__INIT;
	Vitals__TaskList tl = VITALS__TASK_LIST__INIT;
	Vitals__HistoryPoint hp = VITALS__HISTORY_POINT__INIT,
			     *hps[1] = { &hp };
	Vitals__ProcessInfo pi = VITALS__PROCESS_INFO__INIT;
	Vitals__StoreHealth sh = VITALS__STORE_HEALTH__INIT;
	Vitals__ControlHealth ch = VITALS__CONTROL_HEALTH__INIT;
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__BurstAck ack = VITALS__BURST_ACK__INIT;
	Vitals__Dump dump = VITALS__DUMP__INIT;

	init_task(&t1, 100);
	init_task(&t2, 200);
	d.user = 100;
	d.idle = 700;
	all.cpu = -1;
	all.d = &d;
	g.min = 1;
	g.max = 3;
	g.sum = 6;
	g.last = 2;
	g.n = 3;
	all.cur_khz = &g;
	w.seq = 42;
	w.boot_id = (char *)"0b5e2c4d-aaaa-bbbb-cccc-0123456789ab";
	w.all = &all;
	w.load1 = &g;
	w.procs = tasks;
	w.n_procs = 2;
	w.nprocs_total = 57;
	wh.tick_late_ns_max = 123456;
	wh.store_state = (char *)"ok";
	w.health = &wh;
	resp.version = 1;
	resp.id = 9;

	snap.window = &w;
	resp.result_case = VITALS__RESPONSE__RESULT_SNAPSHOT;
	resp.snapshot = &snap;
	out = response_roundtrip(&resp);
	ck_assert_uint_eq(out->id, 9);
	ck_assert_int_eq(out->status, VITALS__STATUS__STATUS_OK);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT_SNAPSHOT);
	ck_assert_uint_eq(out->snapshot->window->seq, 42);
	ck_assert_str_eq(out->snapshot->window->boot_id, w.boot_id);
	ck_assert_int_eq(out->snapshot->window->all->cpu, -1);
	ck_assert_uint_eq(out->snapshot->window->all->d->idle, 700);
	ck_assert_uint_eq(out->snapshot->window->all->cur_khz->n, 3);
	ck_assert(out->snapshot->window->load1->sum == 6.0);
	ck_assert_uint_eq(out->snapshot->window->n_procs, 2);
	ck_assert_uint_eq(out->snapshot->window->nprocs_total, 57);
	ck_assert_str_eq(out->snapshot->window->procs[1]->name,
	    "com.example.app");
	ck_assert(out->snapshot->window->procs[0]->norm_ticks == 100.5);
	ck_assert(out->snapshot->window->procs[0]->born);
	ck_assert_uint_eq(out->snapshot->window->health->tick_late_ns_max,
	    123456);
	vitals__response__free_unpacked(out, NULL);

	wl.windows = &wp;
	wl.n_windows = 1;
	wl.truncated = true;
	resp.result_case = VITALS__RESPONSE__RESULT_WINDOWS;
	resp.windows = &wl;
	out = response_roundtrip(&resp);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT_WINDOWS);
	ck_assert_uint_eq(out->windows->n_windows, 1);
	ck_assert(out->windows->truncated);
	ck_assert_uint_eq(out->windows->windows[0]->seq, 42);
	vitals__response__free_unpacked(out, NULL);

	tl.metric = VITALS__METRIC__METRIC_RSS;
	tl.threads = true;
	tl.from_wall_ns = 1;
	tl.to_wall_ns = 2;
	tl.hz = 100;
	tl.tasks = tasks;
	tl.n_tasks = 2;
	resp.result_case = VITALS__RESPONSE__RESULT_TOP;
	resp.top = &tl;
	out = response_roundtrip(&resp);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT_TOP);
	ck_assert_int_eq(out->top->metric, VITALS__METRIC__METRIC_RSS);
	ck_assert_uint_eq(out->top->hz, 100);
	ck_assert_uint_eq(out->top->n_tasks, 2);
	ck_assert_int_eq(out->top->tasks[1]->id, 200);
	ck_assert_uint_eq(out->top->tasks[1]->d_minflt, 1234);
	vitals__response__free_unpacked(out, NULL);

	hp.wall_start_ns = 10;
	hp.wall_end_ns = 20;
	hp.level = 1;
	hp.hz = 100;
	hp.task = &t1;
	pi.history = hps;
	pi.n_history = 1;
	pi.threads = hps;
	pi.n_threads = 1;
	resp.result_case = VITALS__RESPONSE__RESULT_PROCESS;
	resp.process = &pi;
	out = response_roundtrip(&resp);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT_PROCESS);
	ck_assert_uint_eq(out->process->n_history, 1);
	ck_assert_uint_eq(out->process->n_threads, 1);
	ck_assert_uint_eq(out->process->history[0]->level, 1);
	ck_assert_int_eq(out->process->history[0]->task->id, 100);
	vitals__response__free_unpacked(out, NULL);

	sh.state = (char *)"full";
	sh.last_err = -28;
	sh.last_errmsg = (char *)"database or disk is full";
	sh.windows_written = 77;
	ch.connections = 3;
	ch.denied = 2;
	ch.bad_frames = 5;
	ch.queries = 8;
	h.last = &w;
	h.store = &sh;
	h.control = &ch;
	h.interval_ms = 100;
	h.burst_until_mono_ns = 99;
	h.uptime_ns = 1000;
	resp.result_case = VITALS__RESPONSE__RESULT_HEALTH;
	resp.health = &h;
	out = response_roundtrip(&resp);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT_HEALTH);
	ck_assert_str_eq(out->health->store->state, "full");
	ck_assert_int_eq(out->health->store->last_err, -28);
	ck_assert_uint_eq(out->health->store->windows_written, 77);
	ck_assert_uint_eq(out->health->control->denied, 2);
	ck_assert_uint_eq(out->health->control->bad_frames, 5);
	ck_assert_uint_eq(out->health->control->queries, 8);
	ck_assert_uint_eq(out->health->interval_ms, 100);
	ck_assert_int_eq(out->health->burst_until_mono_ns, 99);
	vitals__response__free_unpacked(out, NULL);

	ack.duration_ms = 10000;
	ack.interval_ms = 100;
	resp.result_case = VITALS__RESPONSE__RESULT_BURST;
	resp.burst = &ack;
	out = response_roundtrip(&resp);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT_BURST);
	ck_assert_uint_eq(out->burst->duration_ms, 10000);
	ck_assert_uint_eq(out->burst->interval_ms, 100);
	vitals__response__free_unpacked(out, NULL);

	dump.text = (char *)"Window 1: 1.000 s\n";
	resp.result_case = VITALS__RESPONSE__RESULT_DUMP;
	resp.dump = &dump;
	out = response_roundtrip(&resp);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT_DUMP);
	ck_assert_str_eq(out->dump->text, dump.text);
	vitals__response__free_unpacked(out, NULL);

	/* An error answer: status and message, no result. */
	resp.status = VITALS__STATUS__STATUS_PERMISSION_DENIED;
	resp.error = (char *)"burst requires the trusted role";
	resp.result_case = VITALS__RESPONSE__RESULT__NOT_SET;
	out = response_roundtrip(&resp);
	ck_assert_int_eq(out->status, VITALS__STATUS__STATUS_PERMISSION_DENIED);
	ck_assert_str_eq(out->error, resp.error);
	ck_assert_int_eq(out->result_case, VITALS__RESPONSE__RESULT__NOT_SET);
	vitals__response__free_unpacked(out, NULL);
}
END_TEST

/* ---------------------------------------------------------- headers */

static void
put_len(uint8_t hdr[4], uint32_t v)
{
	frame_put_header(hdr, v);
}

START_TEST(test_header_edges)
{
	static const struct {
		uint32_t len;
		int want;
	} cases[] = {
		{ 0, -EBADMSG },
		{ 1, 0 },
		{ MAX - 1, 0 },
		{ MAX, 0 },
		{ MAX + 1, -EMSGSIZE },
		{ 1u << 31, -EMSGSIZE },
		{ 0xffffffffu, -EMSGSIZE },
	};
	uint8_t hdr[4];
	uint32_t got;
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = 0xdeadbeef;
		put_len(hdr, cases[i].len);
		ck_assert_int_eq(frame_header(hdr, MAX, &got), cases[i].want);
		if (cases[i].want == 0)
			ck_assert_uint_eq(got, cases[i].len);
		else /* untouched on failure */
			ck_assert_uint_eq(got, 0xdeadbeef);
	}
	/* Big-endian on the wire. */
	put_len(hdr, 0x01020304);
	ck_assert_uint_eq(hdr[0], 1);
	ck_assert_uint_eq(hdr[3], 4);
	hdr[0] = 0x80;
	hdr[1] = hdr[2] = hdr[3] = 0;
	ck_assert_int_eq(frame_header(hdr, UINT32_MAX, &got), 0);
	ck_assert_uint_eq(got, 1u << 31);
	/* A smaller configured maximum is honoured. */
	put_len(hdr, 65537);
	ck_assert_int_eq(frame_header(hdr, 65536, &got), -EMSGSIZE);
}
END_TEST

/* rpc_frame_next: the daemon's stream splitter on top of frame_header. */
START_TEST(test_frame_next)
{
	uint8_t buf[16] = { 0, 0, 0, 5, 1, 2, 3, 4, 5 };
	uint32_t len = 0;

	ck_assert_int_eq(rpc_frame_next(buf, 0, MAX, &len), -EAGAIN);
	ck_assert_int_eq(rpc_frame_next(buf, 3, MAX, &len), -EAGAIN);
	ck_assert_int_eq(rpc_frame_next(buf, 8, MAX, &len), -EAGAIN);
	ck_assert_int_eq(rpc_frame_next(buf, 9, MAX, &len), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_int_eq(rpc_frame_next(buf, 16, MAX, &len), 0);
	ck_assert_int_eq(rpc_frame_next(buf, 9, 4, &len), -EMSGSIZE);
	put_len(buf, 0);
	ck_assert_int_eq(rpc_frame_next(buf, 4, MAX, &len), -EBADMSG);
	put_len(buf, 1u << 31);
	/* Rejected from the header alone: no waiting for 2 GiB. */
	ck_assert_int_eq(rpc_frame_next(buf, 4, MAX, &len), -EMSGSIZE);
	put_len(buf, 0xffffffffu);
	ck_assert_int_eq(rpc_frame_next(buf, 4, MAX, &len), -EMSGSIZE);
}
END_TEST

START_TEST(test_pack_limits)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	uint8_t *buf = NULL;
	size_t len = 0;

	/* An all-default message packs to nothing: not a legal frame. */
	ck_assert_int_eq(frame_pack_request(&req, &buf, &len), -EMSGSIZE);
	ck_assert_ptr_null(buf);
	req.version = 1;
	ck_assert_int_eq(frame_pack_request(&req, &buf, &len), 0);
	ck_assert_uint_eq(len, VITALS_FRAME_HDR + 2);
	free(buf);
}
END_TEST

/* --------------------------------------------------------- malformed */

/* Decode whatever; a non-NULL result must be a usable message. */
static void
decode_any(const uint8_t *p, size_t n, unsigned *ret_null)
{
	Vitals__Request *req = frame_unpack_request(p, n);
	Vitals__Response *resp = frame_unpack_response(p, n);

	if (req == NULL)
		(*ret_null)++;
	else
		(void)vitals__request__get_packed_size(req);
	if (resp != NULL)
		(void)vitals__response__get_packed_size(resp);
	vitals__request__free_unpacked(req, NULL);
	vitals__response__free_unpacked(resp, NULL);
}

START_TEST(test_random_bytes)
{
	static const unsigned seeds[] = { 1, 2, 3, 42, 4242, 0xc0ffee };
	uint8_t buf[512];
	unsigned s, i, k, nulls = 0, total = 0;

	for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		srandom(seeds[s]);
		for (i = 0; i < 500; i++) {
			size_t n = 1 + (size_t)random() % sizeof(buf);

			for (k = 0; k < n; k++)
				buf[k] = (uint8_t)random();
			decode_any(buf, n, &nulls);
			total++;
		}
	}
	/* Random bytes are nearly never a valid message. */
	ck_assert_uint_ge(nulls, total * 9 / 10);
}
END_TEST

/*
 * Every prefix of a valid encoding decodes to NULL, except those that end
 * exactly between two top-level fields (which are valid, shorter
 * messages, and must equal the message with those fields only).
 */
START_TEST(test_truncated)
{
	Vitals__Request req = VITALS__REQUEST__INIT, *out;
	Vitals__TopRequest top = VITALS__TOP_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	size_t n, cut, b_version, b_id;
	uint8_t *p;
	unsigned nulls = 0;

	req.version = 1;
	b_version = vitals__request__get_packed_size(&req);
	req.id = 0x123456789abcULL;
	b_id = vitals__request__get_packed_size(&req);
	tr.since_ns = 3600LL * 1000000000LL;
	top.range = &tr;
	top.metric = VITALS__METRIC__METRIC_MINFLT;
	top.n = 20;
	req.op_case = VITALS__REQUEST__OP_TOP;
	req.top = &top;
	p = pack_request(&req, &n);
	for (cut = 1; cut < n; cut++) {
		out = frame_unpack_request(p, cut);
		if (cut == b_version || cut == b_id) {
			ck_assert_ptr_nonnull(out);
			ck_assert_uint_eq(out->version, 1);
			ck_assert_int_eq(out->op_case,
			    VITALS__REQUEST__OP__NOT_SET);
		} else {
			ck_assert_msg(out == NULL, "prefix %zu of %zu decoded",
			    cut, n);
			nulls++;
		}
		vitals__request__free_unpacked(out, NULL);
	}
	ck_assert_uint_eq(nulls, n - 3);
	free(p);
}
END_TEST

/* A whole response, truncated at every length: never a crash. */
START_TEST(test_truncated_response)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT, *out;
	Vitals__TaskList tl = VITALS__TASK_LIST__INIT;
	Vitals__Task t1, t2, *tasks[2] = { &t1, &t2 };
	uint8_t *buf;
	size_t len, cut;

	init_task(&t1, 1);
	init_task(&t2, 2);
	resp.version = 1;
	resp.id = 5;
	tl.tasks = tasks;
	tl.n_tasks = 2;
	resp.result_case = VITALS__RESPONSE__RESULT_TOP;
	resp.top = &tl;
	ck_assert_int_eq(frame_pack_response(&resp, &buf, &len), 0);
	for (cut = 1; cut < len - VITALS_FRAME_HDR; cut++) {
		out = frame_unpack_response(buf + VITALS_FRAME_HDR, cut);
		/* Inside the result (the last field): always malformed. */
		if (cut > 4)
			ck_assert_ptr_null(out);
		vitals__response__free_unpacked(out, NULL);
	}
	free(buf);
}
END_TEST

START_TEST(test_wrong_wire_types)
{
	/* field 1 (version, varint) sent as length-delimited */
	static const uint8_t v_as_len[] = { 0x0a, 0x01, 0x01 };
	/* field 10 (snapshot, message) sent as a varint */
	static const uint8_t msg_as_varint[] = { 0x08, 0x01, 0x50, 0x01 };
	/* field 2 (id, varint) sent as fixed64, truncated */
	static const uint8_t fixed_short[] = { 0x11, 0x01, 0x02 };
	/* a sub-message whose length runs past the end */
	static const uint8_t sub_overrun[] = { 0x08, 0x01, 0x62, 0x7f, 0x08 };
	/* a varint of 11 bytes */
	static const uint8_t long_varint[] = { 0x10, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	/* wire types 6 and 7 do not exist; 3/4 are deprecated groups */
	static const uint8_t bad_wt6[] = { 0x0e, 0x00 };
	static const uint8_t bad_wt7[] = { 0x0f, 0x00 };
	static const uint8_t group[] = { 0x0b, 0x0c };
	/* field number 0 is reserved */
	static const uint8_t field0[] = { 0x00, 0x01 };
	/* TopRequest.metric (enum) as length-delimited */
	static const uint8_t enum_as_len[] = { 0x62, 0x03, 0x12, 0x01, 0x00 };
	static const struct {
		const uint8_t *p;
		size_t n;
	} cases[] = {
		{ v_as_len, sizeof(v_as_len) },
		{ msg_as_varint, sizeof(msg_as_varint) },
		{ fixed_short, sizeof(fixed_short) },
		{ sub_overrun, sizeof(sub_overrun) },
		{ long_varint, sizeof(long_varint) },
		{ bad_wt6, sizeof(bad_wt6) },
		{ bad_wt7, sizeof(bad_wt7) },
		{ group, sizeof(group) },
		{ field0, sizeof(field0) },
		{ enum_as_len, sizeof(enum_as_len) },
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Vitals__Request *r = frame_unpack_request(cases[i].p,
		    cases[i].n);

		ck_assert_msg(r == NULL, "case %u decoded", i);
	}
}
END_TEST

/* Fields this version does not know are skipped, whatever their type. */
START_TEST(test_unknown_fields)
{
	Vitals__Request req = VITALS__REQUEST__INIT, *out;
	Vitals__BurstRequest burst = VITALS__BURST_REQUEST__INIT;
	static const uint8_t extra[] = {
		0xa0, 0x06, 0x2a,		    /* field 100, varint 42 */
		0xaa, 0x06, 0x03, 'a', 'b', 'c',    /* field 101, bytes */
		0xb5, 0x06, 1, 2, 3, 4,		    /* field 102, fixed32 */
		0xb9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, /* field 103, fixed64 */
	};
	/* An operation from a newer protocol (field 99, a message). */
	static const uint8_t new_op[] = { 0x08, 0x01, 0x9a, 0x06, 0x02, 0x08,
		0x01 };
	uint8_t *p;
	size_t n;

	req.version = 1;
	req.id = 77;
	burst.duration_ms = 2500;
	req.op_case = VITALS__REQUEST__OP_BURST;
	req.burst = &burst;
	p = pack_request(&req, &n);
	memcpy(p + n, extra, sizeof(extra));
	out = frame_unpack_request(p, n + sizeof(extra));
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(out->version, 1);
	ck_assert_uint_eq(out->id, 77);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP_BURST);
	ck_assert_uint_eq(out->burst->duration_ms, 2500);
	vitals__request__free_unpacked(out, NULL);
	/* ... also in front of the known fields */
	memmove(p + sizeof(extra), p, n);
	memcpy(p, extra, sizeof(extra));
	out = frame_unpack_request(p, n + sizeof(extra));
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(out->burst->duration_ms, 2500);
	vitals__request__free_unpacked(out, NULL);
	free(p);

	out = frame_unpack_request(new_op, sizeof(new_op));
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(out->op_case, VITALS__REQUEST__OP__NOT_SET);
	vitals__request__free_unpacked(out, NULL);
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_request_ops);
	tcase_add_test(tc, test_response_results);
	tcase_add_test(tc, test_header_edges);
	tcase_add_test(tc, test_frame_next);
	tcase_add_test(tc, test_pack_limits);
	tcase_add_test(tc, test_random_bytes);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_truncated_response);
	tcase_add_test(tc, test_wrong_wire_types);
	tcase_add_test(tc, test_unknown_fields);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(frame_suite());
}
