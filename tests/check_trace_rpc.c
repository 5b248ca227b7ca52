/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The trace operation (op 18) without a socket: a request resolved by
 * rpc_handle, windows answered by rpc_answer_trace (filters by pid and by
 * process name, loss always whole), Health.trace, and the client's text
 * and JSON of the answer.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "frame.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

static struct window *
mkwin(void)
{
	struct window *w = window_new(1, 0);
	struct window_trace *t;
	struct window_task task;

	ck_assert_ptr_nonnull(w);
	w->wall_start_ns = 1700000000LL * NSEC_PER_SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * NSEC_PER_SEC;
	memset(&task, 0, sizeof(task));
	task.id = task.tgid = 200;
	window_task_set_namef(&task, "com.example.ui");
	snprintf(task.comm, sizeof(task.comm), "example.ui");
	ck_assert_int_eq(window_add_task(w, false, &task), 0);
	ck_assert_ptr_nonnull(window_trace_make(w, true));
	t = window_trace(w);
	t->state = FTRACE_ON;
	t->atrace = true;
	t->enabled = 1u << FEV_PRINT | 1u << FEV_PROCESS_EXIT;
	t->missing = 1u << FEV_BINDER_TXN | 1u << FEV_GPU_MEM;
	t->overrun = 40;
	t->commit_overrun = 2;
	t->pages_lost = 3;
	t->events = 1000;
	t->slices = 7;
	t->incomplete = 2;
	t->nslices = 3;
	t->slice[0] = (struct window_trace_slice){ .tgid = 200,
		.tid = 201,
		.kind = TRACE_SYNC,
		.count = 5,
		.total_ns = 50000000,
		.max_ns = 20000000,
		.name = "draw frame" };
	t->slice[1] = (struct window_trace_slice){ .tgid = 300,
		.tid = 301,
		.kind = TRACE_ASYNC,
		.count = 2,
		.incomplete = 1,
		.total_ns = 4000000,
		.max_ns = 3000000,
		.name = "load" };
	t->slice[2] = (struct window_trace_slice){ .tgid = 200,
		.tid = 202,
		.depth = 1,
		.kind = TRACE_SYNC,
		.incomplete = 1,
		.name = "" };
	t->ncounters = 1;
	t->counter[0] = (struct window_trace_counter){ .tgid = 300,
		.n = 2,
		.last = 7,
		.min = 3,
		.max = 7,
		.name = "queue" };
	return w;
}

static Vitals__Response *
answer(const struct rpc_query *q, struct window *w)
{
	Vitals__Response *r;
	uint8_t *frame = NULL;
	size_t len = 0;

	ck_assert_int_eq(rpc_answer_trace(q, &w, 1, false, 1u << 20, &frame,
			     &len),
	    0);
	ck_assert_uint_gt(len, 4);
	r = frame_unpack_response(frame + 4, len - 4);
	ck_assert_ptr_nonnull(r);
	free(frame);
	ck_assert_int_eq(r->result_case, VITALS__RESPONSE__RESULT_TRACE);
	return r;
}

START_TEST(test_answer_and_filters)
{
	struct window *w = mkwin();
	struct rpc_query q;
	Vitals__Response *r;
	Vitals__TraceWindow *tw;

	memset(&q, 0, sizeof(q));
	q.op = RPC_Q_TRACE;
	q.id = 9;
	r = answer(&q, w);
	ck_assert_uint_eq(r->id, 9);
	ck_assert_uint_eq(r->trace->n_windows, 1);
	tw = r->trace->windows[0];
	ck_assert_str_eq(tw->state, "on");
	ck_assert(tw->lossy);
	ck_assert_uint_eq(tw->lost, 42);
	ck_assert_uint_eq(tw->pages_lost, 3);
	ck_assert_uint_eq(tw->n_enabled, 2);
	ck_assert_str_eq(tw->enabled[0], "ftrace/print");
	ck_assert_uint_eq(tw->n_missing, 2);
	ck_assert_str_eq(tw->missing[1], "gpu_mem/gpu_mem_total");
	ck_assert_uint_eq(tw->n_slice, 3);
	ck_assert_str_eq(tw->slice[1]->kind, "async");
	ck_assert_uint_eq(tw->slice[1]->incomplete, 1);
	ck_assert_uint_eq(tw->n_counter, 1);
	vitals__response__free_unpacked(r, NULL);

	/* by pid: only that process's rows; loss stays whole */
	q.pid = 300;
	r = answer(&q, w);
	tw = r->trace->windows[0];
	ck_assert_uint_eq(tw->n_slice, 1);
	ck_assert_str_eq(tw->slice[0]->name, "load");
	ck_assert_uint_eq(tw->n_counter, 1);
	ck_assert_uint_eq(tw->lost, 42);
	ck_assert_uint_eq(tw->incomplete, 2);
	vitals__response__free_unpacked(r, NULL);

	/* by name, through the window's processes (name or comm) */
	q.pid = 0;
	snprintf(q.process, sizeof(q.process), "example.ui");
	r = answer(&q, w);
	tw = r->trace->windows[0];
	ck_assert_uint_eq(tw->n_slice, 2);
	ck_assert_int_eq(tw->slice[0]->pid, 200);
	ck_assert_int_eq(tw->slice[1]->pid, 200);
	ck_assert_uint_eq(tw->n_counter, 0);
	vitals__response__free_unpacked(r, NULL);
	snprintf(q.process, sizeof(q.process), "nobody");
	r = answer(&q, w);
	ck_assert_uint_eq(r->trace->windows[0]->n_slice, 0);
	vitals__response__free_unpacked(r, NULL);

	/* a window without an ftrace part is left out */
	q.process[0] = '\0';
	window_trace(w)->state = FTRACE_UNKNOWN;
	r = answer(&q, w);
	ck_assert_uint_eq(r->trace->n_windows, 0);
	vitals__response__free_unpacked(r, NULL);
	/* and so is one whose part was never made */
	window_trace_free(window_trace(w));
	window_part_set(w, WPART_TRACE, NULL);
	r = answer(&q, w);
	ck_assert_uint_eq(r->trace->n_windows, 0);
	vitals__response__free_unpacked(r, NULL);
	window_free(w);
}
END_TEST

START_TEST(test_request_validation)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__TraceRequest tr = VITALS__TRACE_REQUEST__INIT;
	struct vitalsd_info info = { .hz = 100 };
	struct rpc_ctx ctx = { .info = &info,
		.max_frame = 1u << 20,
		.now_wall_ns = 1800000000LL * NSEC_PER_SEC };
	char longname[200];
	struct rpc_result res;
	uint8_t *buf;
	size_t len;

	req.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	req.id = 5;
	req.op_case = VITALS__REQUEST__OP_TRACE;
	req.trace = &tr;
	tr.pid = 0;
	tr.process = (char *)"com.example.ui";
	len = vitals__request__get_packed_size(&req);
	buf = malloc(len);
	vitals__request__pack(&req, buf);
	ck_assert_int_eq(rpc_handle(&ctx, ROLE_READER, buf, len, &res), 0);
	ck_assert_int_eq(res.verdict, RPC_QUERY);
	ck_assert_int_eq(res.query.op, RPC_Q_TRACE);
	ck_assert_str_eq(res.query.process, "com.example.ui");
	ck_assert_uint_eq(res.query.max_windows, 360);
	free(buf);

	/* whole windows are loaded: a reader gets at most 720 */
	tr.max_windows = 100000;
	len = vitals__request__get_packed_size(&req);
	buf = malloc(len);
	vitals__request__pack(&req, buf);
	ck_assert_int_eq(rpc_handle(&ctx, ROLE_READER, buf, len, &res), 0);
	ck_assert_int_eq(res.verdict, RPC_QUERY);
	ck_assert_uint_eq(res.query.max_windows, 720);
	free(buf);
	tr.max_windows = 0;

	tr.pid = -4;
	len = vitals__request__get_packed_size(&req);
	buf = malloc(len);
	vitals__request__pack(&req, buf);
	ck_assert_int_eq(rpc_handle(&ctx, ROLE_READER, buf, len, &res), 0);
	ck_assert_int_eq(res.verdict, RPC_ANSWER);
	ck_assert_ptr_nonnull(res.frame);
	free(res.frame);
	free(buf);

	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	tr.pid = 0;
	tr.process = longname;
	len = vitals__request__get_packed_size(&req);
	buf = malloc(len);
	vitals__request__pack(&req, buf);
	ck_assert_int_eq(rpc_handle(&ctx, ROLE_READER, buf, len, &res), 0);
	ck_assert_int_eq(res.verdict, RPC_ANSWER);
	free(res.frame);
	free(buf);
}
END_TEST

START_TEST(test_client_text_and_json)
{
	struct window *w = mkwin();
	struct rpc_query q;
	Vitals__Response *r;
	struct sbuf b;

	memset(&q, 0, sizeof(q));
	q.op = RPC_Q_TRACE;
	snprintf(window_trace(w)->slice[0].name, VITALS_TRACE_NAME,
	    "draw \xc3\xa9\x1b[31m");
	r = answer(&q, w);
	sbuf_init(&b);
	fmt_trace(&b, r->trace);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "LOST EVENTS: 42"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "partial"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "draw \xc3\xa9?[31m"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "(end without begin)"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "missing events: "
	    "binder/binder_transaction gpu_mem/gpu_mem_total"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "counter pid 300 queue: "
	    "last 7 min 3 max 7"));
	/* the loss comes before any slice */
	ck_assert(
	    strstr(sbuf_str(&b), "LOST EVENTS") < strstr(sbuf_str(&b), "draw"));
	sbuf_reset(&b);
	json_response(&b, r);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "\"lossy\":true"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "\"lost\":\"42\""));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "\"kind\":\"async\""));
	sbuf_free(&b);
	vitals__response__free_unpacked(r, NULL);

	/* empty answer */
	window_trace(w)->state = FTRACE_UNKNOWN;
	r = answer(&q, w);
	sbuf_init(&b);
	fmt_trace(&b, r->trace);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b), "no window with ftrace"));
	sbuf_free(&b);
	vitals__response__free_unpacked(r, NULL);
	window_free(w);
}
END_TEST

/*
 * Binder latency rows on the wire (TraceWindow 53-64), filtered like the
 * other per-process rows, quantiles from the slots; `vitals binder` text
 * and JSON (a quantile with no sample is null, 64-bit figures strings).
 */
START_TEST(test_binder_rpc_text_json)
{
	struct window *w = mkwin();
	struct window_trace *t = window_trace(w);
	const Vitals__TraceBinderTxn *b;
	const struct jm *rows, *x;
	struct rpc_query q;
	Vitals__Response *r;
	Vitals__TraceWindow *tw;
	struct jm *j;
	struct sbuf s;
	unsigned k;

	t->enabled |= 1u << FEV_BINDER_TXN;
	t->nbtxn = 2;
	t->btxn[0] = (struct window_trace_btxn){ .from_pid = 200,
		.to_pid = 500,
		.code = 7,
		.twoway = 10,
		.received = 10,
		.replied = 9,
		.unreplied = 1,
		.recv_sum_ns = 100000,
		.recv_max_ns = 30000,
		.reply_sum_ns = 9 * 3000000ULL,
		.reply_max_ns = 5000000 };
	for (k = 0; k < 10; k++)
		window_btxn_hist_add(t->btxn[0].recv_hist, 10000);
	for (k = 0; k < 9; k++)
		window_btxn_hist_add(t->btxn[0].reply_hist,
		    k == 8 ? 5000000 : 2500000);
	t->btxn[1] = (struct window_trace_btxn){ .from_pid = 300,
		.to_pid = 500,
		.code = 1,
		.oneway = 4,
		.unreceived = 4 };
	t->btxn_rest = (struct window_trace_btxn){ .twoway = 3, .replied = 3 };
	t->btxn_other = 2;
	t->btxn_orphan_replies = 6;
	t->btxn_abandoned = 1;
	t->btxn_open = 2;

	memset(&q, 0, sizeof(q));
	q.op = RPC_Q_TRACE;
	q.pid = 200;
	r = answer(&q, w);
	tw = r->trace->windows[0];
	ck_assert_uint_eq(tw->n_binder_txn, 1); /* 300's row filtered out */
	b = tw->binder_txn[0];
	ck_assert_int_eq(b->from_pid, 200);
	ck_assert_uint_eq(b->code, 7);
	ck_assert_uint_eq(b->replied, 9);
	ck_assert_uint_eq(b->n_recv_hist, 4); /* slot 3: 8 ≤ 10 µs < 16 */
	ck_assert_uint_eq(b->recv_hist[3], 10);
	ck_assert_uint_eq(b->recv_p50_ns, 16000);
	ck_assert_uint_eq(b->reply_p50_ns, 4096000); /* 2048 ≤ 2500 µs */
	ck_assert_uint_eq(b->reply_p99_ns, 8192000); /* 4096 ≤ 5000 µs */
	ck_assert_ptr_nonnull(tw->binder_txn_rest);
	ck_assert_int_eq(tw->binder_txn_rest->from_pid, -1);
	ck_assert_uint_eq(tw->binder_txn_rest->replied, 3);
	ck_assert_uint_eq(tw->binder_txn_rows_other, 2);
	ck_assert_uint_eq(tw->binder_orphan_replies, 6);
	ck_assert_uint_eq(tw->binder_gave_up_abandoned, 1);
	ck_assert_uint_eq(tw->binder_open, 2);

	sbuf_init(&s);
	fmt_binder(&s, r->trace);
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&s), "200 -> 500 code 7: 10 two-way"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s),
	    "call->reply 9: mean 3.000 ms, max 5.000 ms, p50 <=4ms p99 <=8ms"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "send->received 10"));
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&s), "0 never received, 1 never"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "(other rows): 3 two-way"));
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&s), "6 replies to no known call"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "abandoned 1"));
	/* the loss comes first */
	ck_assert(strstr(sbuf_str(&s), "LOST EVENTS") <
	    strstr(sbuf_str(&s), "200 -> 500"));
	sbuf_reset(&s);
	json_response(&s, r);
	j = jm_parse(s.buf, s.len);
	ck_assert_ptr_nonnull(j);
	x = jm_get(j, "trace");
	ck_assert_ptr_nonnull(x);
	x = jm_get(x, "windows");
	ck_assert(x && x->t == JM_ARR && x->n == 1);
	rows = jm_get(&x->v[0], "binder_txn");
	ck_assert(rows && rows->t == JM_ARR && rows->n == 1);
	x = jm_get(&rows->v[0], "reply_p99_ns");
	ck_assert(x && x->t == JM_STR && strcmp(x->str, "8192000") == 0);
	x = jm_get(&rows->v[0], "recv_max_ns");
	ck_assert(x && x->t == JM_STR && strcmp(x->str, "30000") == 0);
	x = jm_get(&rows->v[0], "code");
	ck_assert(x && x->t == JM_NUM && x->ll == 7);
	/* the rest has no slots: its quantiles are unknown, not 0 */
	x = jm_get(jm_get(j, "trace"), "windows");
	x = jm_get(&x->v[0], "binder_txn_rest");
	ck_assert_ptr_nonnull(x);
	ck_assert(jm_get(x, "reply_p50_ns") &&
	    jm_get(x, "reply_p50_ns")->t == JM_NULL);
	ck_assert(
	    jm_get(x, "recv_p99_ns") && jm_get(x, "recv_p99_ns")->t == JM_NULL);
	ck_assert(jm_get(x, "replied") && jm_get(x, "replied")->ll == 3);
	jm_free(j);
	sbuf_free(&s);
	vitals__response__free_unpacked(r, NULL);
	window_free(w);
}
END_TEST

/* Fault phases on the wire, in text and JSON: a figure whose events were
 * not enabled is absent (null, "?"), never 0; rows filtered by pid. */
START_TEST(test_phase_rpc_text_json)
{
	struct window *w = mkwin();
	struct window_trace *t = window_trace(w);
	const Vitals__TracePhase *p;
	const struct jm *rows, *x;
	struct rpc_query q;
	Vitals__Response *r;
	Vitals__TraceWindow *tw;
	struct jm *j;
	struct sbuf s;

	t->nphase = 2;
	t->phase[0] = (struct window_trace_phase){ .pid = 200,
		.have = 1u << PHAVE_FAULTS | 1u << PHAVE_FILE |
		    1u << PHAVE_READ | 1u << PHAVE_MAJOR,
		.start_ticks = 777,
		.comm = "example.ui",
		.count = 2,
		.open = 1,
		.total_ns = 250000000,
		.max_ns = 150000000,
		.faults = 900,
		.file_faults = 40,
		.major = 12,
		.pages_read = 300,
		.name = "bindApplication" };
	t->phase[0].faults_by[PCLASS_DEX] = 100;
	t->phase[0].faults_by[PCLASS_ANON] = 800;
	t->phase[0].major_by[PCLASS_DEX] = 12;
	t->phase[1] = (struct window_trace_phase){ .pid = 300,
		.have = 1u << PHAVE_FAULTS,
		.count = 1,
		.faults = 5,
		.name = "other" };
	t->phase_rest = (struct window_trace_phase){ .pid = -1,
		.have = 1u << PHAVE_FAULTS,
		.count = 4,
		.faults = 9 };
	t->phase_other = 3;
	t->phase_events = 123456;
	t->phase_open = 1;
	t->maps_reads = 2;
	t->maps_skipped = 1;
	t->maps_cut = 5;
	t->fault_unknown = 6;

	memset(&q, 0, sizeof(q));
	q.op = RPC_Q_TRACE;
	q.pid = 200;
	r = answer(&q, w);
	tw = r->trace->windows[0];
	ck_assert_uint_eq(tw->n_phase, 1); /* 300's row filtered out */
	p = tw->phase[0];
	ck_assert_int_eq(p->pid, 200);
	ck_assert_uint_eq(p->start_ticks, 777);
	ck_assert_str_eq(p->name, "bindApplication");
	ck_assert_ptr_nonnull(p->faults);
	ck_assert_uint_eq(p->faults->value, 900);
	ck_assert_uint_eq(p->faults->n_by_class, PCLASS__MAX);
	ck_assert_uint_eq(p->faults->by_class[PCLASS_ANON], 800);
	ck_assert_uint_eq(p->major->value, 12);
	ck_assert_uint_eq(p->major->by_class[PCLASS_DEX], 12);
	ck_assert_uint_eq(p->file_faults->n_by_class, 0);
	ck_assert_ptr_null(p->reclaim); /* not enabled: unknown */
	ck_assert_ptr_null(p->block);
	ck_assert_ptr_nonnull(tw->phase_rest);
	ck_assert_int_eq(tw->phase_rest->pid, -1);
	ck_assert_ptr_null(tw->phase_rest->major);
	ck_assert_uint_eq(tw->phase_rows_other, 3);
	ck_assert_uint_eq(tw->phase_events, 123456);
	ck_assert_uint_eq(tw->maps_skipped, 1);
	ck_assert_uint_eq(tw->fault_unknown, 6);
	ck_assert_uint_eq(tw->maps_cut, 5);

	sbuf_init(&s);
	fmt_trace(&s, r->trace);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "fault phases, LOSSY"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "bindApplication"));
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&s), "by class: dex 100/12 anon 800/0"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "reclaim ?, block ?"));
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&s), "5 ranges cut; 6 faults unclassed"));
	{
		/* the phase table and its lines (the window's header line
		 * is prose, wrapped by the client's fit) */
		const char *l = strstr(sbuf_str(&s), "  fault phases"), *e;

		for (; (e = strchr(l, '\n')) != NULL; l = e + 1)
			ck_assert_msg(e - l <= 80, "line over 80: %.*s",
			    (int)(e - l), l);
	}
	if (getenv("VITALS_SHOW"))
		fputs(sbuf_str(&s), stderr);
	sbuf_reset(&s);
	fmt_phase_proc(&s, r->trace, 200);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "Fault phases:"));
	ck_assert_ptr_nonnull(strstr(sbuf_str(&s), "bindApplication"));
	sbuf_reset(&s);
	fmt_phase_proc(&s, r->trace, 999);
	ck_assert_uint_eq(s.len, 0);
	sbuf_reset(&s);
	json_response(&s, r);
	j = jm_parse(s.buf, s.len);
	ck_assert_ptr_nonnull(j);
	x = jm_get(jm_get(j, "trace"), "windows");
	ck_assert(x && x->t == JM_ARR && x->n == 1);
	rows = jm_get(&x->v[0], "phase");
	ck_assert(rows && rows->t == JM_ARR && rows->n == 1);
	x = jm_get(jm_get(&rows->v[0], "faults"), "value");
	ck_assert(x && x->t == JM_STR && strcmp(x->str, "900") == 0);
	x = jm_get(&rows->v[0], "reclaim");
	ck_assert(x && x->t == JM_NULL);
	x = jm_get(&rows->v[0], "total_ns");
	ck_assert(x && x->t == JM_STR && strcmp(x->str, "250000000") == 0);
	jm_free(j);
	sbuf_free(&s);
	vitals__response__free_unpacked(r, NULL);
	window_free(w);
}
END_TEST

static Suite *
trace_rpc_suite(void)
{
	Suite *s = suite_create("trace_rpc");
	TCase *tc = tcase_create("rpc");

	tcase_add_test(tc, test_answer_and_filters);
	tcase_add_test(tc, test_request_validation);
	tcase_add_test(tc, test_client_text_and_json);
	tcase_add_test(tc, test_binder_rpc_text_json);
	tcase_add_test(tc, test_phase_rpc_text_json);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(trace_rpc_suite());
}
