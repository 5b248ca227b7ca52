/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client's rendering read back: the JSON snapshot, top and history
 * parsed (jsonmini.h) and its numbers compared with the hand-built
 * messages (client_fixture.h), unknowns as null; the store usage, BPF and
 * memory health lines. check_client.c has the pure parts.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "client_fixture.h"
#include "jsonmini.h"
#include "testutil.h"

static double
num(const struct jm *o, const char *path)
{
	const struct jm *v = jm_path(o, path);

	ck_assert_msg(v != NULL, "no %s", path);
	ck_assert_msg(jm_is_num(v), "%s is not a number", path);
	return v->num;
}

/* Derived figures are one or two float operations away from the value
 * worked out by hand. */
static bool
near(double got, double want)
{
	return fabs(got - want) <= 1e-12 * fabs(want);
}

static bool
is_null(const struct jm *o, const char *path)
{
	const struct jm *v = jm_path(o, path);

	return v != NULL && v->t == JM_NULL;
}

/* r's JSON rendered into b (initialised here), parsed, and the object at
 * path found: both asserted. The caller frees the tree and b. */
static struct jm *
json_at(struct sbuf *b, const Vitals__Response *r, const char *path,
    const struct jm **ret_at)
{
	struct jm *j;

	sbuf_init(b);
	json_response(b, r);
	ck_assert_int_eq(b->err, 0);
	j = jm_parse(b->buf, b->len);
	ck_assert_msg(j != NULL, "invalid JSON: %s", b->buf);
	*ret_at = jm_path(j, path);
	ck_assert_msg(*ret_at != NULL, "no %s in %s", path, b->buf);
	return j;
}

/* m's text rendered into b (initialised here), without an error */
static void
text_memory(struct sbuf *b, const Vitals__MemoryHealth *m)
{
	sbuf_init(b);
	fmt_memory_health(b, m);
	ck_assert_int_eq(b->err, 0);
}

START_TEST(test_json_snapshot)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	const struct jm *w, *t, *c;
	struct sbuf b;
	struct jm *j;

	build_window();
	r.version = 1;
	r.id = 99;
	r.result_case = VITALS__RESPONSE__RESULT_SNAPSHOT;
	r.snapshot = &snap;
	sbuf_init(&b);
	json_response(&b, &r);
	ck_assert_int_eq(b.err, 0);
	ck_assert(b.len > 0 && b.buf[b.len - 1] == '\n');
	ck_assert_ptr_null(memchr(b.buf, '\n', b.len - 1)); /* one line */
	j = jm_parse(b.buf, b.len);
	ck_assert_msg(j != NULL, "invalid JSON: %s", b.buf);
	ck_assert_str_eq(jm_get(j, "status")->str, "STATUS_OK");
	ck_assert(num(j, "id") == 99);
	ck_assert_ptr_null(jm_get(j, "windows")); /* unset oneof members */
	w = jm_path(j, "snapshot.window");
	ck_assert(num(w, "hz") == 100);
	/* raw fields and derived figures side by side */
	t = jm_find_id(jm_get(w, "procs"), 1234);
	ck_assert_ptr_nonnull(t);
	ck_assert(num(t, "d_utime") == 950 && num(t, "d_stime") == 50);
	ck_assert(num(t, "cpu_ticks") == 1000);
	ck_assert(num(t, "core_equiv") == 1.0);
	ck_assert(num(t, "machine_share") == 0.25);
	ck_assert(num(t, "normalised") == 0.5);
	ck_assert(num(t, "uid") == 1000);
	t = jm_find_id(jm_get(w, "procs"), 5);
	ck_assert(is_null(t, "uid"));		/* 4294967295: unknown */
	ck_assert(is_null(t, "machine_share")); /* no denominator */
	ck_assert(near(num(t, "core_equiv"), 0.001));
	ck_assert_str_eq(jm_get(t, "comm")->str, "k\x1b[31m"); /* exact */
	ck_assert(jm_get(t, "exited")->b);
	/* CPU lines: shares of Δtotal; unknown frequency is null */
	ck_assert(num(w, "all.total") == 4000 && num(w, "all.busy") == 960);
	ck_assert(num(w, "all.busy_share") == 0.24);
	ck_assert(num(w, "all.steal_share") == 0.025);
	ck_assert(is_null(w, "all.max_khz") && is_null(w, "all.capacity"));
	c = &jm_get(w, "cpus")->v[1];
	ck_assert(is_null(c, "cur_khz") && is_null(c, "busy_share"));
	c = &jm_get(w, "cpus")->v[0];
	ck_assert(num(c, "max_khz") == 2000000 && num(c, "capacity") == 1024);
	ck_assert(num(c, "cur_khz.avg") == 1500000 && num(c, "cur_khz.n") == 2);
	/* gauges: avg derived, never-read gauge null */
	ck_assert(num(w, "load1.avg") == 1.5);
	ck_assert(is_null(w, "load15"));
	/* PSI: share of the window's wall time; absent file all null */
	c = &jm_get(w, "psi")->v[0];
	ck_assert(num(c, "some_share") == 0.025);
	ck_assert(is_null(c, "full_share") && is_null(c, "d_full_us"));
	c = &jm_get(w, "psi")->v[2];
	ck_assert(!jm_get(c, "available")->b);
	ck_assert(is_null(c, "d_some_us") && is_null(c, "some_share"));
	ck_assert_str_eq(jm_get(c, "resource")->str, "io");
	c = &jm_get(w, "vmstat")->v[0];
	ck_assert_str_eq(jm_get(c, "name")->str, "pgfault");
	ck_assert(num(c, "value") == 5000);
	jm_free(j);
	sbuf_free(&b);
}
END_TEST

/* The store's usage lines: flash written per day and the history held;
 * an unreadable accounting says so instead of a zero rate. */
START_TEST(test_fmt_store_usage)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__StoreHealth st = VITALS__STORE_HEALTH__INIT;
	Vitals__StoreWaits mw = VITALS__STORE_WAITS__INIT;
	Vitals__StoreWaits rw = VITALS__STORE_WAITS__INIT;
	const struct jm *js;
	struct sbuf b;
	struct jm *j;
	const char *s;

	st.state = "ok";
	st.move_waits = &mw;
	st.read_waits = &rw;
	mw.n = 4;
	st.io_written_bytes = 3 << 20;
	st.io_bytes_per_day = 1536 << 20;
	st.io_span_ns = 3 * 3600 * NS;
	st.history_ns = (2 * 86400 + 5 * 3600) * NS;
	st.history_windows = 19800;
	st.bound_holds_ns = (6 * 86400 + 12 * 3600) * NS;
	h.store = &st;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	/* no refused blob: no line */
	ck_assert_ptr_null(strstr(s, "task blobs refused"));
	ck_assert_ptr_null(strstr(s, "WAL truncation")); /* none: no line */
	ck_assert_ptr_nonnull(strstr(s, "lock waits: 4 moves"));
	ck_assert_ptr_null(strstr(s, "readers lent")); /* none: no line */
	sbuf_free(&b);
	mw.lent = 5;
	mw.lend_denied = 1;
	st.blob_errors = 3;
	st.wal_busy = 17;
	st.wal_waited = 2;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	ck_assert_msg(strstr(s,
			  "  task blobs refused by reads 3 (their rows "
			  "skipped, the rest of each window read)\n") != NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  written by the daemon 1536.0 MiB per day (over "
			  "the last 3h00m), 3.0 MiB since the store "
			  "opened\n") != NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  history 2d05h in 19800 windows; the size bound "
			  "holds about 6d12h at this density\n") != NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  WAL truncation: 17 found a reader, 2 ran waiting "
			  "for readers\n") != NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  readers lent the writer's priority: 5 times (1 "
			  "refused by the kernel)\n") != NULL,
	    "%s", s);
	sbuf_free(&b);
	st.io_err = -ENOENT;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&b),
	    "  written by the daemon: unknown (errno 2)\n"));
	ck_assert_ptr_null(strstr(sbuf_str(&b), "MiB per day"));
	sbuf_free(&b);
	r.version = 1;
	r.result_case = VITALS__RESPONSE__RESULT_HEALTH;
	r.health = &h;
	j = json_at(&b, &r, "health.store", &js);
	ck_assert(num(js, "io_bytes_per_day") == 1536 << 20);
	ck_assert(num(js, "io_written_bytes") == 3 << 20);
	ck_assert(num(js, "io_err") == -ENOENT);
	ck_assert(num(js, "history_windows") == 19800);
	ck_assert(num(js, "history_ns") == (2 * 86400 + 5 * 3600) * NS);
	ck_assert(num(js, "bound_holds_ns") == (6 * 86400 + 12 * 3600) * NS);
	ck_assert(num(js, "blob_errors") == 3);
	ck_assert(num(js, "wal_busy") == 17);
	ck_assert(num(js, "wal_waited") == 2);
	ck_assert_ptr_nonnull(js = jm_path(j, "health.store.move_waits"));
	ck_assert(num(js, "lent") == 5);
	ck_assert(num(js, "lend_denied") == 1);
	jm_free(j);
	sbuf_free(&b);
}
END_TEST

/* The read pool's caches (ControlHealth.read_*): text and JSON, the hit
 * ratio hits / (hits + misses). */
START_TEST(test_fmt_read_caches)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__ControlHealth c = VITALS__CONTROL_HEALTH__INIT;
	const struct jm *jc;
	struct sbuf b;
	struct jm *j;

	c.query_threads = 2;
	c.read_cache_hits = 300;
	c.read_cache_misses = 100;
	c.read_memo_hits = 12;
	c.read_memo_saved = 1200;
	c.read_cache_bytes = 3 << 19;
	c.readers_idle_closed = 3;
	c.readers_opened = 4;
	c.readers_open = 1;
	c.readers_warmed = 2;
	c.readers_warm_ns = 12345678;
	h.control = &c;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	ck_assert_int_eq(b.err, 0);
	ck_assert_msg(strstr(b.buf,
			  "  read caches: windows 300 reused, 100 decoded "
			  "(75.0 % reused); whole reads from a memo 12, kept "
			  "as memos 1200; held 1536.0 KiB\n") != NULL,
	    "%s", b.buf);
	ck_assert_msg(
	    strstr(b.buf,
		"  read pool 2 threads, connections open 1; answers "
		"cut at the memory budget 0; connections released "
		"idle 3, opened 4; warmed at start 2 (12.346 ms)\n") != NULL,
	    "%s", b.buf);
	sbuf_free(&b);
	r.version = 1;
	r.result_case = VITALS__RESPONSE__RESULT_HEALTH;
	r.health = &h;
	j = json_at(&b, &r, "health.control", &jc);
	ck_assert(num(jc, "readers_warmed") == 2);
	ck_assert(num(jc, "readers_opened") == 4);
	ck_assert(num(jc, "readers_open") == 1);
	ck_assert(num(jc, "readers_idle_closed") == 3);
	ck_assert(num(jc, "readers_warm_ns") == 12345678);
	ck_assert(num(jc, "read_cache_hits") == 300);
	ck_assert(num(jc, "read_cache_misses") == 100);
	ck_assert(num(jc, "read_memo_hits") == 12);
	ck_assert(num(jc, "read_memo_saved") == 1200);
	ck_assert(num(jc, "read_cache_bytes") == 3 << 19);
	jm_free(j);
	sbuf_free(&b);
}
END_TEST

/* Every BpfHealth figure reaches the text and the JSON, lost and
 * unattributed time included (a negative unattributed_ns stays signed). */
START_TEST(test_fmt_bpf_health)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__WindowHealth wh = VITALS__WINDOW_HEALTH__INIT;
	Vitals__BpfHealth bh = VITALS__BPF_HEALTH__INIT;
	const struct jm *jb;
	struct sbuf b;
	struct jm *j;
	const char *s;

	build_window();
	bh.state = "pinned";
	bh.drains = 10;
	bh.drain_fail = 1;
	bh.counter_regressions = 2;
	bh.oncpu_ns = 1234500000;
	bh.switches = 98765;
	bh.no_slice = 12;
	bh.lost_ns = 2500000;
	bh.no_storage = 7;
	bh.pre_ns = 3000000;
	bh.diff_drains = 9;
	bh.unattributed_ns = -1500000;
	bh.evicted = 4;
	bh.recreated = 5;
	bh.retired = 6;
	bh.oncpu_total_ns = 1240000000;
	bh.wakeups = 555;
	bh.rq_samples = 444;
	bh.rq_count = 440;
	bh.rq_notid = 2;
	bh.full_tid = 1;
	bh.full_proc = 4;
	bh.full_uid = 0;
	bh.thr_exited = 33;
	bh.procs_exited = 3;
	bh.threads_other = 17;
	bh.slot_rows = 4000;
	bh.slots_taken = 4096;
	bh.slot_hash_rows = 130;
	bh.slot_overflow = 25;
	bh.slot_full_drains = 1;
	bh.slot_cap = 4096;
	wh.bpf = &bh;
	win.health = &wh;
	h.last = &win;
	h.interval_ms = 1000;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	s = sbuf_str(&b);
	ck_assert_msg(strstr(s,
			  "  bpf: pinned; drains 10 (failed 1), switches "
			  "98765, no slice 12, lost 2.500 ms, counter "
			  "regressions 2\n") != NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  bpf on-CPU 1234.500 ms attributed to uids; "
			  "waits with no process 7; before this start "
			  "3.000 ms\n") != NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  bpf read-only: 9 snapshot diffs, unattributed "
			  "-1.500 ms, evicted 4, recreated 5, retired 6\n") !=
		NULL,
	    "%s", s);
	/* every kernel counter, the losses among them */
	ck_assert_msg(strstr(s,
			  "  bpf kernel: accounted 1240.000 ms, wakeups 555, "
			  "waits measured 444 (in process rows 440, no "
			  "thread entry 2), map full: tid 1 proc 4 uid 0; "
			  "exited: 33 threads, 3 procs\n") != NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  bpf rows folded into \"other\": 0 procs, 17 "
			  "threads, 0 uids\n") != NULL,
	    "%s", s);
	/* the array slots (layout 11) */
	ck_assert_msg(strstr(s,
			  "  bpf slots: 4000 thread rows from slots, 130 "
			  "from the hash; slots taken 4096 (capacity 4096 a "
			  "side), 1 drains full, 25 threads overflowed\n") !=
		NULL,
	    "%s", s);
	sbuf_free(&b);
	/* where the waits came from, when a drain said (BPF layout 13) */
	bh.rq_source = "sched_info";
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	ck_assert_msg(strstr(sbuf_str(&b),
			  "wakeups 555, waits measured 444 from sched_info "
			  "(in process rows 440,") != NULL,
	    "%s", sbuf_str(&b));
	sbuf_free(&b);
	/* an off state says why */
	bh.state = "off_no_btf";
	bh.err = -ENOENT;
	sbuf_init(&b);
	fmt_health(&b, &h, &fctx);
	ck_assert_ptr_nonnull(
	    strstr(sbuf_str(&b), "  bpf: off_no_btf (errno 2);"));
	sbuf_free(&b);
	bh.err = 0;

	r.version = 1;
	r.result_case = VITALS__RESPONSE__RESULT_HEALTH;
	r.health = &h;
	sbuf_init(&b);
	json_response(&b, &r);
	ck_assert_int_eq(b.err, 0);
	j = jm_parse(b.buf, b.len);
	ck_assert_msg(j != NULL, "invalid JSON: %s", b.buf);
	jb = jm_path(j, "health.last.health.bpf");
	ck_assert_msg(jb != NULL, "%s", b.buf);
	ck_assert_str_eq(jm_get(jb, "state")->str, "off_no_btf");
	ck_assert(num(jb, "drains") == 10 && num(jb, "drain_fail") == 1);
	ck_assert(num(jb, "counter_regressions") == 2);
	ck_assert(num(jb, "oncpu_ns") == 1234500000);
	ck_assert(num(jb, "switches") == 98765 && num(jb, "no_slice") == 12);
	ck_assert(num(jb, "lost_ns") == 2500000);
	ck_assert(num(jb, "no_storage") == 7 && num(jb, "pre_ns") == 3000000);
	ck_assert(num(jb, "diff_drains") == 9);
	ck_assert(num(jb, "unattributed_ns") == -1500000);
	ck_assert(num(jb, "evicted") == 4 && num(jb, "recreated") == 5 &&
	    num(jb, "retired") == 6);
	ck_assert(num(jb, "rq_samples") == 444 && num(jb, "rq_count") == 440);
	ck_assert(num(jb, "rq_notid") == 2);
	ck_assert(num(jb, "procs_exited") == 3 && num(jb, "thr_exited") == 33);
	ck_assert(num(jb, "full_proc") == 4 && num(jb, "wakeups") == 555);
	ck_assert(num(jb, "oncpu_total_ns") == 1240000000);
	ck_assert(
	    num(jb, "slot_rows") == 4000 && num(jb, "slots_taken") == 4096);
	ck_assert(
	    num(jb, "slot_hash_rows") == 130 && num(jb, "slot_overflow") == 25);
	ck_assert(
	    num(jb, "slot_full_drains") == 1 && num(jb, "slot_cap") == 4096);
	ck_assert_str_eq(jm_get(jb, "rq_source")->str, "sched_info");
	jm_free(j);
	sbuf_free(&b);
	win.health = NULL;
}
END_TEST

START_TEST(test_json_top_and_history)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	Vitals__TaskList tl = VITALS__TASK_LIST__INIT;
	Vitals__ProcessInfo pi = VITALS__PROCESS_INFO__INIT;
	Vitals__HistoryPoint h = VITALS__HISTORY_POINT__INIT;
	Vitals__HistoryPoint *hv[1] = { &h };
	Vitals__Task a = mk_task(1, "init", "init", 30, 20, 10 * NS);
	Vitals__Task *v[1] = { &a };
	struct sbuf b;
	struct jm *j;

	/* hz from the enclosing TaskList / HistoryPoint */
	a.norm_ticks = 200;
	tl.hz = 250;
	tl.metric = VITALS__METRIC__METRIC_RSS;
	tl.n_tasks = 1;
	tl.tasks = v;
	r.result_case = VITALS__RESPONSE__RESULT_TOP;
	r.top = &tl;
	sbuf_init(&b);
	json_response(&b, &r);
	j = jm_parse(b.buf, b.len);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(jm_path(j, "top.metric")->str, "METRIC_RSS");
	/* 50 ticks / 250 Hz = 0.2 s over 10 s */
	ck_assert(
	    near(num(&jm_path(j, "top.tasks")->v[0], "core_equiv"), 0.02));
	ck_assert(num(&jm_path(j, "top.tasks")->v[0], "normalised") == 0.25);
	jm_free(j);

	h.hz = 100;
	h.task = &a;
	pi.n_history = 1;
	pi.history = hv;
	r.result_case = VITALS__RESPONSE__RESULT_PROCESS;
	r.process = &pi;
	r.status = VITALS__STATUS__STATUS_NOT_FOUND;
	r.error = "no \"such\" process";
	sbuf_reset(&b);
	json_response(&b, &r);
	j = jm_parse(b.buf, b.len);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(jm_get(j, "status")->str, "STATUS_NOT_FOUND");
	ck_assert_str_eq(jm_get(j, "error")->str, "no \"such\" process");
	ck_assert(num(&jm_path(j, "process.history")->v[0],
		      "task.core_equiv") == 0.05);
	ck_assert_int_eq(jm_path(j, "process.threads")->n, 0);
	jm_free(j);
	sbuf_free(&b);
}
END_TEST

/* MemoryHealth in JSON: a figure malloc (have_heap) or the kernel
 * (have_status) did not give is null, never a 0 */
START_TEST(test_json_memory_unknown)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__MemoryHealth m = VITALS__MEMORY_HEALTH__INIT;
	const struct jm *jmem;
	struct sbuf b;
	struct jm *j;

	m.rss_bytes = 8 << 20;
	m.peak_rss_bytes = 0; /* no VmHWM line */
	m.have_status = 1;    /* rss alone */
	m.have_heap = false;
	m.tasks_bytes = 4096;
	h.memory = &m;
	r.version = 1;
	r.result_case = VITALS__RESPONSE__RESULT_HEALTH;
	r.health = &h;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "rss_bytes")->str, "8388608");
	ck_assert_int_eq(jm_get(jmem, "peak_rss_bytes")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "threads")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "heap_in_use_bytes")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "heap_free_bytes")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "heap_mmap_bytes")->t, JM_NULL);
	ck_assert_str_eq(jm_get(jmem, "tasks_bytes")->str, "4096");
	/* no smaps figures (have_status 64, 128): null */
	ck_assert_int_eq(jm_get(jmem, "program_bytes")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "program_dirty_bytes")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "libraries_bytes")->t, JM_NULL);
	jm_free(j);
	sbuf_free(&b);
	/* given: the figures, zeros included */
	m.have_heap = true;
	m.heap_in_use_bytes = 5 << 20;
	m.have_status = 63;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "heap_in_use_bytes")->str, "5242880");
	ck_assert_str_eq(jm_get(jmem, "heap_free_bytes")->str, "0");
	ck_assert_str_eq(jm_get(jmem, "peak_rss_bytes")->str, "0");
	/* the mappings outside the heap: strings, zeros included */
	ck_assert_str_eq(jm_get(jmem, "taskiter_out_bytes")->str, "0");
	ck_assert_str_eq(jm_get(jmem, "ftrace_buffer_bytes")->str, "0");
	jm_free(j);
	sbuf_free(&b);
	m.taskiter_out_bytes = 90112;
	m.ftrace_buffer_bytes = 1 << 20;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "taskiter_out_bytes")->str, "90112");
	ck_assert_str_eq(jm_get(jmem, "ftrace_buffer_bytes")->str, "1048576");
	ck_assert_int_eq(jm_get(jmem, "program_bytes")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "pss_bytes")->t, JM_NULL);
	ck_assert_int_eq(jm_get(jmem, "libraries_pss_bytes")->t, JM_NULL);
	jm_free(j);
	sbuf_free(&b);
	text_memory(&b, &m);
	ck_assert_ptr_nonnull(strstr(b.buf,
	    "mapped: task iterator output 0.09 MiB (file), ftrace drain "
	    "buffer 1.00 MiB (anon)"));
	ck_assert_ptr_null(strstr(b.buf, "program"));
	ck_assert_ptr_null(strstr(b.buf, "PSS"));
	sbuf_free(&b);
	/* smaps's figures given: strings, the program's dirty part too */
	m.have_status = 63 | 64 | 128;
	m.program_bytes = 1 << 20;
	m.program_dirty_bytes = 131072;
	m.libraries_bytes = 4 << 20;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "program_bytes")->str, "1048576");
	ck_assert_str_eq(jm_get(jmem, "program_dirty_bytes")->str, "131072");
	ck_assert_str_eq(jm_get(jmem, "libraries_bytes")->str, "4194304");
	jm_free(j);
	sbuf_free(&b);
	text_memory(&b, &m);
	ck_assert_ptr_nonnull(strstr(b.buf,
	    "  program 1.00 MiB resident (0.12 written: relocations, data),"
	    " libraries 4.00 MiB\n"));
	ck_assert_ptr_null(strstr(b.buf, "refused"));
	ck_assert_ptr_null(strstr(b.buf, "PSS"));
	sbuf_free(&b);
	/* smaps's Pss lines (bit 256): the PSS and the libraries' share */
	m.have_status |= 256;
	m.pss_bytes = 7 << 20;
	m.libraries_pss_bytes = 3 << 18;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "pss_bytes")->str, "7340032");
	ck_assert_str_eq(jm_get(jmem, "libraries_pss_bytes")->str, "786432");
	jm_free(j);
	sbuf_free(&b);
	text_memory(&b, &m);
	ck_assert_ptr_nonnull(strstr(b.buf,
	    "  PSS 7.00 MiB, of it libraries 0.75 (a page mapped by n"
	    " processes counts 1/n)\n"));
	sbuf_free(&b);
	/* the interned names: a part of the heap, and the refused ones */
	m.names_bytes = 3 << 19;
	m.names = 412;
	m.names_full = 7;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "names_bytes")->str, "1572864");
	ck_assert_str_eq(jm_get(jmem, "names_full")->str, "7");
	jm_free(j);
	sbuf_free(&b);
	text_memory(&b, &m);
	ck_assert_ptr_nonnull(strstr(b.buf,
	    "names 1.50 (412), read caches "
	    "0.00, zstd 0.00, other "));
	sbuf_free(&b);
	/* the read pool's caches: a part of the heap, out of "other" */
	m.read_cache_bytes = 1 << 20;
	text_memory(&b, &m);
	ck_assert_msg(strstr(b.buf,
			  "names 1.50 (412), read caches 1.00, "
			  "zstd 0.00, other 2.50\n") != NULL,
	    "%s", b.buf);
	ck_assert_ptr_nonnull(strstr(b.buf,
	    "  names: 7 refused at the table's bound (shown as their comm)\n"));
	sbuf_free(&b);
	/* zstd's contexts and dictionaries: a part of the heap, out of
	 * "other", and in JSON */
	m.zstd_bytes = 1 << 19;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "zstd_bytes")->str, "524288");
	jm_free(j);
	sbuf_free(&b);
	text_memory(&b, &m);
	ck_assert_msg(strstr(b.buf,
			  "read caches 1.00, zstd 0.50, other 2.00\n") != NULL,
	    "%s", b.buf);
	sbuf_free(&b);
	/* the start-up pageout: off, ran (with refusals), failed */
	text_memory(&b, &m);
	ck_assert_ptr_nonnull(
	    strstr(b.buf, "  start-up pageout off: not run\n"));
	sbuf_free(&b);
	m.pageout_mode = 1;
	m.pageout_state = 1;
	m.pageout_file_before_bytes = 5 << 20;
	m.pageout_file_after_bytes = 2 << 20;
	m.pageout_advised_bytes = 8 << 20;
	m.pageout_ranges = 40;
	m.pageout_ns = 1500000;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_str_eq(jm_get(jmem, "pageout_file_before_bytes")->str,
	    "5242880");
	ck_assert_str_eq(jm_get(jmem, "pageout_file_after_bytes")->str,
	    "2097152");
	ck_assert_int_eq(jm_get(jmem, "pageout_ranges")->ll, 40);
	ck_assert_int_eq(jm_get(jmem, "pageout_state")->ll, 1);
	jm_free(j);
	sbuf_free(&b);
	/* a daemon from before the passes (none said): one, its own given */
	text_memory(&b, &m);
	ck_assert_msg(strstr(b.buf,
			  "  start-up pageout on: 1 pass gave back 3.00 MiB in"
			  " 1.50 ms; the last: file pages 5.00 -> 2.00 MiB, 40"
			  " ranges of 8.00 MiB (0.00 unmapped, 0 with pages of"
			  " their own)\n") != NULL,
	    "%s", b.buf);
	sbuf_free(&b);
	/* set-up's passes: their sum, then the last one's ranges */
	m.pageout_passes = 4;
	m.pageout_given_bytes = 9 << 20;
	m.pageout_unmapped_bytes = 6 << 20;
	m.pageout_kept_ranges = 7;
	j = json_at(&b, &r, "health.memory", &jmem);
	ck_assert_int_eq(jm_get(jmem, "pageout_passes")->ll, 4);
	ck_assert_str_eq(jm_get(jmem, "pageout_given_bytes")->str, "9437184");
	ck_assert_str_eq(jm_get(jmem, "pageout_unmapped_bytes")->str,
	    "6291456");
	ck_assert_int_eq(jm_get(jmem, "pageout_kept_ranges")->ll, 7);
	jm_free(j);
	sbuf_free(&b);
	m.pageout_mode = 2;
	m.pageout_failed = 2;
	m.pageout_errno = 22;
	text_memory(&b, &m);
	ck_assert_msg(
	    strstr(b.buf,
		"pageout random: 4 passes gave back 9.00 MiB in 1.50"
		" ms; the last: file pages 5.00 -> 2.00 MiB, 40 ranges"
		" of 8.00 MiB (6.00 unmapped, 7 with pages of their"
		" own); 2 refused (errno 22)\n") != NULL,
	    "%s", b.buf);
	sbuf_free(&b);
	m.pageout_state = 2;
	m.pageout_errno = 13;
	text_memory(&b, &m);
	ck_assert_ptr_nonnull(
	    strstr(b.buf, "  start-up pageout random: failed, errno 13\n"));
	sbuf_free(&b);
}
END_TEST

static Suite *
client_render_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_fmt_bpf_health);
	tcase_add_test(tc, test_fmt_store_usage);
	tcase_add_test(tc, test_fmt_read_caches);
	tcase_add_test(tc, test_json_snapshot);
	tcase_add_test(tc, test_json_memory_unknown);
	tcase_add_test(tc, test_json_top_and_history);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* rendered times are local: pin the zone */
	setenv("TZ", "UTC", 1);
	tzset();
	return tu_run(client_render_suite());
}
