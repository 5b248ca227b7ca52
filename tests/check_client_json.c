/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client's JSON survives a reader whose numbers are doubles, one test
 * per rule (doc/protocol.md, "JSON"): every 64-bit integer is a decimal
 * string, exact past 2^53, and every 32-bit one a number (checked field by
 * field against the message through its descriptor); the page size stands
 * beside every count of pages; each "unknown" the protocol defines is null
 * (the aggregate CPU line as the daemon sends it too), and so is a field
 * that applies under one parent field only (StoreWaits.lent: move_waits)
 * under the others. The refusal message on stderr is check_client_cli's
 * (test_json_refusal_stderr).
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "client_fixture.h"
#include "jsonmini.h"
#include "testutil.h"

static struct jm *
to_json(const Vitals__Response *r, unsigned page_size, struct sbuf *b)
{
	struct jm *j;

	sbuf_init(b);
	json_response_page(b, r, page_size);
	j = jm_parse(b->buf, b->len);
	ck_assert_msg(j != NULL, "not JSON: %s", sbuf_str(b));
	return j;
}

static unsigned n64, n32;

/* One scalar of field f at p against its JSON value v. */
static void
check_scalar(const ProtobufCFieldDescriptor *f, const void *p,
    const struct jm *v)
{
	char want[32];

	if (v->t == JM_NULL)
		return; /* an unknown (test_unknowns_null) */
	switch (f->type) {
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		snprintf(want, sizeof(want), "%" PRIu64, *(const uint64_t *)p);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		snprintf(want, sizeof(want), "%" PRId64, *(const int64_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		ck_assert_msg(v->t == JM_NUM && v->is_int &&
			v->ll == *(const uint32_t *)p,
		    "%s: a 32-bit integer is a number", f->name);
		n32++;
		return;
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		ck_assert_msg(v->t == JM_NUM && v->is_int &&
			v->ll == *(const int32_t *)p,
		    "%s: a 32-bit integer is a number", f->name);
		n32++;
		return;
	default:
		return;
	}
	ck_assert_msg(v->t == JM_STR, "%s: a 64-bit integer is a string",
	    f->name);
	ck_assert_msg(strcmp(v->str, want) == 0, "%s: \"%s\", not \"%s\"",
	    f->name, v->str, want);
	n64++;
}

/* The message and its JSON side by side, every field, every depth. */
static void
walk(const ProtobufCMessage *m, const struct jm *o)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	unsigned i;

	if (o->t == JM_NULL)
		return;
	ck_assert_int_eq(o->t, JM_OBJ);
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m;
		const struct jm *v = jm_get(o, f->name);
		size_t k, n, sz;

		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		ck_assert_msg(v != NULL, "%s.%s missing", d->name, f->name);
		if (f->label != PROTOBUF_C_LABEL_REPEATED) {
			if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (*(void *const *)(base + f->offset))
					walk(*(ProtobufCMessage *const *)(base +
						 f->offset),
					    v);
			} else {
				check_scalar(f, base + f->offset, v);
			}
			continue;
		}
		n = *(const size_t *)(base + f->quantifier_offset);
		ck_assert_int_eq(v->t, JM_ARR);
		ck_assert_uint_eq(v->n, n);
		sz = f->type == PROTOBUF_C_TYPE_MESSAGE ? sizeof(void *) :
		    f->type == PROTOBUF_C_TYPE_UINT64 ||
			f->type == PROTOBUF_C_TYPE_INT64 ||
			f->type == PROTOBUF_C_TYPE_SINT64 ||
			f->type == PROTOBUF_C_TYPE_FIXED64 ||
			f->type == PROTOBUF_C_TYPE_SFIXED64 ?
							  8 :
							  4;
		if (f->type == PROTOBUF_C_TYPE_STRING)
			continue;
		for (k = 0; k < n; k++) {
			const char *arr = *(char *const *)(base + f->offset);

			if (f->type == PROTOBUF_C_TYPE_MESSAGE)
				walk(*(ProtobufCMessage *const *)(arr + k * sz),
				    &v->v[k]);
			else
				check_scalar(f, arr + k * sz, &v->v[k]);
		}
	}
}

static Vitals__Response
snapshot_response(void)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;

	build_window();
	r.version = 1;
	r.id = UINT64_MAX; /* a request id past every double */
	r.result_case = VITALS__RESPONSE__RESULT_SNAPSHOT;
	r.snapshot = &snap;
	return r;
}

START_TEST(test_64bit_strings)
{
	Vitals__Response r = snapshot_response();
	const struct jm *t, *w;
	struct sbuf b;
	struct jm *j;

	/* 2^53 + 1: a double reads 2^53; the string keeps it */
	t_burner.starttime = 9007199254740993ULL;
	win.wall_end_ns = INT64_MAX;
	win.seq = 9007199254740993ULL;
	j = to_json(&r, 4096, &b);
	n64 = n32 = 0;
	walk(&r.base, j);
	ck_assert_uint_gt(n64, 40);
	ck_assert_uint_gt(n32, 10);
	ck_assert_str_eq(jm_get(j, "id")->str, "18446744073709551615");
	w = jm_path(j, "snapshot.window");
	ck_assert_str_eq(jm_get(w, "seq")->str, "9007199254740993");
	ck_assert_str_eq(jm_get(w, "wall_end_ns")->str, "9223372036854775807");
	t = jm_find_id(jm_get(w, "procs"), 1234);
	ck_assert_str_eq(jm_get(t, "starttime")->str, "9007199254740993");
	/* derived 64-bit counts too; 32-bit and doubles stay numbers */
	ck_assert_str_eq(jm_get(t, "cpu_ticks")->str, "1000");
	ck_assert_str_eq(jm_path(w, "all.total")->str, "4000");
	ck_assert_int_eq(jm_get(t, "id")->t, JM_NUM);
	ck_assert_int_eq(jm_get(t, "core_equiv")->t, JM_NUM);
	ck_assert_int_eq(jm_get(w, "hz")->t, JM_NUM);
	jm_free(j);
	sbuf_free(&b);
}
END_TEST

/* Every object with a key that counts pages has page_size, and only
 * those. */
static unsigned
pages_ok(const struct jm *o, unsigned page_size)
{
	unsigned found = 0;
	bool pages = false;
	size_t i;

	if (o->t == JM_ARR) {
		for (i = 0; i < o->n; i++)
			found += pages_ok(&o->v[i], page_size);
		return found;
	}
	if (o->t != JM_OBJ)
		return 0;
	for (i = 0; i < o->n; i++) {
		if (strstr(o->keys[i], "pages"))
			pages = true;
		found += pages_ok(&o->v[i], page_size);
	}
	if (pages) {
		const struct jm *p = jm_get(o, "page_size");

		ck_assert_msg(p && p->t == JM_NUM && p->ll == page_size,
		    "an object with pages has no page_size %u", page_size);
		return found + 1;
	}
	ck_assert_ptr_null(jm_get(o, "page_size"));
	return found;
}

START_TEST(test_page_size)
{
	Vitals__Response r = snapshot_response();
	Vitals__Response wr = VITALS__RESPONSE__INIT;
	Vitals__WssList wl = VITALS__WSS_LIST__INIT;
	Vitals__WssTarget tg = VITALS__WSS_TARGET__INIT;
	Vitals__WssRegion rg = VITALS__WSS_REGION__INIT;
	Vitals__WssTarget *tgs[1] = { &tg };
	Vitals__WssRegion *rgs[1] = { &rg };
	struct sbuf b;
	struct jm *j;

	j = to_json(&r, 16384, &b);
	/* the three processes of the window */
	ck_assert_uint_eq(pages_ok(j, 16384), 3);
	jm_free(j);
	sbuf_free(&b);

	rg.pages = 100;
	rg.sampled = true;
	tg.n_regions = 1;
	tg.regions = rgs;
	wl.n_targets = 1;
	wl.targets = tgs;
	wr.result_case = VITALS__RESPONSE__RESULT_WSS_GET;
	wr.wss_get = &wl;
	j = to_json(&wr, 4096, &b);
	ck_assert_uint_eq(pages_ok(j, 4096), 1);
	jm_free(j);
	sbuf_free(&b);

	/* json_response: this machine's page size */
	sbuf_init(&b);
	json_response(&b, &r);
	j = jm_parse(b.buf, b.len);
	ck_assert_uint_eq(pages_ok(j, (unsigned)sysconf(_SC_PAGESIZE)), 3);
	jm_free(j);
	sbuf_free(&b);
}
END_TEST

static bool
is_null(const struct jm *o, const char *path)
{
	const struct jm *v = jm_path(o, path);

	return v != NULL && v->t == JM_NULL;
}

START_TEST(test_unknowns_null)
{
	Vitals__Response r = snapshot_response();
	Vitals__Gauge none = VITALS__GAUGE__INIT;
	Vitals__CgroupWindow cw = VITALS__CGROUP_WINDOW__INIT;
	Vitals__Cgroup g = VITALS__CGROUP__INIT, g2 = VITALS__CGROUP__INIT;
	Vitals__Cgroup *gs[2] = { &g, &g2 };
	char *src[1] = { "memory.stat" };
	Vitals__WindowHealth wh = VITALS__WINDOW_HEALTH__INIT;
	const struct jm *w, *c;
	struct sbuf b;
	struct jm *j;

	/* the aggregate line as the daemon fills it: 0 frequency and
	 * capacity, offline, gauges never read */
	all_cpu.max_khz = 0;
	all_cpu.capacity = 0;
	all_cpu.online = false;
	all_cpu.cur_khz = &none;
	all_cpu.freq_ratio = &none;
	cpu1.d = NULL; /* offline all window: no times */
	/* a group without cpu.stat; a group on its first walk */
	g.path = "a";
	g.uid = 10123;
	g.pid = -1;
	g.deltas = 1;
	g.n_sources = 1;
	g.sources = src;
	g.d_pgfault = 7;
	g2.path = "b";
	g2.uid = -1;
	g2.pid = -1;
	cw.n_groups = 2;
	cw.groups = gs;
	win.cgroup = &cw;
	win.health = &wh; /* read from the store: no lateness histogram */
	j = to_json(&r, 4096, &b);
	w = jm_path(j, "snapshot.window");
	ck_assert(is_null(w, "all.max_khz") && is_null(w, "all.capacity"));
	ck_assert(is_null(w, "all.online") && is_null(w, "all.cur_khz"));
	ck_assert(is_null(w, "all.freq_ratio"));
	ck_assert_int_eq(jm_path(w, "all.cpu")->ll, -1);
	c = &jm_get(w, "cpus")->v[1];
	ck_assert(is_null(c, "total") && is_null(c, "busy"));
	ck_assert(is_null(c, "busy_share"));
	c = &jm_get(w, "cpus")->v[0];
	ck_assert_str_eq(jm_get(c, "total")->str, "1000");
	ck_assert(!is_null(c, "online"));
	c = &jm_path(w, "cgroup.groups")->v[0];
	ck_assert_int_eq(jm_get(c, "uid")->t, JM_STR); /* sint64: a string */
	ck_assert(is_null(c, "pid"));
	ck_assert(is_null(c, "d_usage_us") && is_null(c, "d_nr_periods"));
	ck_assert_str_eq(jm_get(c, "d_pgfault")->str, "7");
	c = &jm_path(w, "cgroup.groups")->v[1];
	ck_assert(is_null(c, "uid") && is_null(c, "d_pgfault"));
	ck_assert(is_null(w, "health.tick_late_ns_max"));
	ck_assert(is_null(w, "health.tick_late_ns_p99"));
	ck_assert(is_null(jm_find_id(jm_get(w, "procs"), 5), "uid"));
	/* no capacity-weighted figure: null, not 0 */
	ck_assert(is_null(jm_find_id(jm_get(w, "procs"), 5), "wtd_ticks"));
	jm_free(j);
	sbuf_free(&b);
	{
		/* in memory, without schedstat: only the CPU wait unknown */
		uint32_t hist[] = { 3, 1 };

		wh.n_tick_late_hist = 2;
		wh.tick_late_hist = hist;
		wh.tick_late_runq_absent = true;
		wh.tick_late_held_ns_sum = 5000;
		j = to_json(&r, 4096, &b);
		w = jm_path(j, "snapshot.window");
		ck_assert(is_null(w, "health.tick_late_runq_ns_sum"));
		ck_assert(is_null(w, "health.tick_late_max_runq_ns"));
		ck_assert_str_eq(
		    jm_path(w, "health.tick_late_held_ns_sum")->str, "5000");
		jm_free(j);
		sbuf_free(&b);
		wh.n_tick_late_hist = 0;
		wh.tick_late_hist = NULL;
	}
}
END_TEST

/* The other sentinels: a session not started and without a file, a slice
 * with no pid, a stale GPU row, a region unmapped in its pass, the
 * store's usage before an interval, a BPF process row. */
START_TEST(test_unknowns_sentinels)
{
	Vitals__Response r = VITALS__RESPONSE__INIT;
	Vitals__HeapprofdList hl = VITALS__HEAPPROFD_LIST__INIT;
	Vitals__HeapprofdSession hs = VITALS__HEAPPROFD_SESSION__INIT;
	Vitals__HeapprofdSession *hss[1] = { &hs };
	Vitals__TraceList tl = VITALS__TRACE_LIST__INIT;
	Vitals__TraceWindow tw = VITALS__TRACE_WINDOW__INIT;
	Vitals__TraceWindow *tws[1] = { &tw };
	Vitals__TraceSlice sl = VITALS__TRACE_SLICE__INIT;
	Vitals__TraceSlice *sls[1] = { &sl };
	Vitals__GpuMem gm = VITALS__GPU_MEM__INIT;
	Vitals__GpuProc gp = VITALS__GPU_PROC__INIT;
	Vitals__GpuProc *gps[1] = { &gp };
	Vitals__Health h = VITALS__HEALTH__INIT;
	Vitals__StoreHealth st = VITALS__STORE_HEALTH__INIT;
	Vitals__TaskList top = VITALS__TASK_LIST__INIT;
	Vitals__SchedTask s = VITALS__SCHED_TASK__INIT;
	Vitals__SchedTask *ss[1] = { &s };
	Vitals__WssList wl = VITALS__WSS_LIST__INIT;
	Vitals__WssTarget tg = VITALS__WSS_TARGET__INIT;
	Vitals__WssRegion rg = VITALS__WSS_REGION__INIT;
	Vitals__WssTarget *tgs[1] = { &tg };
	Vitals__WssRegion *rgs[1] = { &rg };
	struct sbuf b;
	struct jm *j;
	const struct jm *v;

	hs.id = 3;
	hs.exit_status = -1;
	hs.output_bytes = -1;
	hl.n_sessions = 1;
	hl.sessions = hss;
	r.result_case = VITALS__RESPONSE__RESULT_HEAPPROFD_LIST;
	r.heapprofd_list = &hl;
	j = to_json(&r, 4096, &b);
	v = &jm_path(j, "heapprofd_list.sessions")->v[0];
	ck_assert(is_null(v, "exit_status") && is_null(v, "output_bytes"));
	ck_assert(is_null(v, "start_wall_ns") && is_null(v, "end_wall_ns"));
	ck_assert_str_eq(jm_get(v, "id")->str, "3");
	jm_free(j);
	sbuf_free(&b);

	sl.pid = -1;
	sl.tid = 12;
	tw.n_slice = 1;
	tw.slice = sls;
	tl.n_windows = 1;
	tl.windows = tws;
	r.result_case = VITALS__RESPONSE__RESULT_TRACE;
	r.trace = &tl;
	j = to_json(&r, 4096, &b);
	v = &jm_path(j, "trace.windows")->v[0];
	ck_assert(is_null(&jm_get(v, "slice")->v[0], "pid"));
	ck_assert_int_eq(jm_get(&jm_get(v, "slice")->v[0], "tid")->ll, 12);
	jm_free(j);
	sbuf_free(&b);

	gp.pid = 77;
	gp.stale = true;
	gm.n_procs = 1;
	gm.procs = gps;
	r.result_case = VITALS__RESPONSE__RESULT_GPU_MEM;
	r.gpu_mem = &gm;
	j = to_json(&r, 4096, &b);
	ck_assert(is_null(&jm_path(j, "gpu_mem.procs")->v[0], "starttime"));
	jm_free(j);
	sbuf_free(&b);

	st.io_written_bytes = 5;
	h.store = &st;
	r.result_case = VITALS__RESPONSE__RESULT_HEALTH;
	r.health = &h;
	j = to_json(&r, 4096, &b);
	ck_assert(is_null(j, "health.store.io_bytes_per_day"));
	ck_assert(is_null(j, "health.store.bound_holds_ns"));
	ck_assert(is_null(j, "health.store.history_wall_first_ns"));
	ck_assert_str_eq(jm_path(j, "health.store.io_written_bytes")->str, "5");
	jm_free(j);
	sbuf_free(&b);
	{
		/* the same message in two fields: the priority lends are the
		 * writer's moves' (move_waits), they do not apply to reads */
		Vitals__StoreWaits mw = VITALS__STORE_WAITS__INIT;
		Vitals__StoreWaits rw = VITALS__STORE_WAITS__INIT;

		mw.n = 9;
		mw.lent = 2;
		mw.lend_denied = 1;
		rw.n = 40;
		rw.waited = 3;
		st.move_waits = &mw;
		st.read_waits = &rw;
		j = to_json(&r, 4096, &b);
		ck_assert_str_eq(
		    jm_path(j, "health.store.move_waits.lent")->str, "2");
		ck_assert_str_eq(
		    jm_path(j, "health.store.move_waits.lend_denied")->str,
		    "1");
		ck_assert(is_null(j, "health.store.read_waits.lent"));
		ck_assert(is_null(j, "health.store.read_waits.lend_denied"));
		ck_assert_str_eq(
		    jm_path(j, "health.store.read_waits.waited")->str, "3");
		jm_free(j);
		sbuf_free(&b);
		st.move_waits = NULL;
		st.read_waits = NULL;
	}

	s.id = 40;
	s.uid = VITALS_UID_UNKNOWN; /* a process row */
	s.name = "";
	top.n_sched = 1;
	top.sched = ss;
	r.result_case = VITALS__RESPONSE__RESULT_TOP;
	r.top = &top;
	j = to_json(&r, 4096, &b);
	v = &jm_path(j, "top.sched")->v[0];
	ck_assert(is_null(v, "uid") && is_null(v, "name"));
	/* no histogram: no quantile */
	ck_assert(is_null(v, "rq_p50_ns") && is_null(v, "rq_p99_ns"));
	jm_free(j);
	sbuf_free(&b);
	{
		uint32_t hist[3] = { 0, 2, 1 };

		s.rq_hist = hist;
		s.n_rq_hist = 3;
		s.rq_count = 3;
		s.rq_p99_ns = 8000;
		j = to_json(&r, 4096, &b);
		v = &jm_path(j, "top.sched")->v[0];
		ck_assert_str_eq(jm_get(v, "rq_p99_ns")->str, "8000");
		jm_free(j);
		sbuf_free(&b);
	}

	/* no reload yet: no last one; after one, both */
	{
		Vitals__Health hh = VITALS__HEALTH__INIT;
		Vitals__ConfigHealth ch = VITALS__CONFIG_HEALTH__INIT;

		hh.config = &ch;
		r.result_case = VITALS__RESPONSE__RESULT_HEALTH;
		r.health = &hh;
		j = to_json(&r, 4096, &b);
		ck_assert(is_null(j, "health.config.last_wall_ns"));
		ck_assert(is_null(j, "health.config.last"));
		jm_free(j);
		sbuf_free(&b);
		ch.reloads = 1;
		ch.last_wall_ns = 1700000000000000000LL;
		ch.last = "1 changed keys applied, 0 need a restart";
		j = to_json(&r, 4096, &b);
		ck_assert_str_eq(jm_path(j, "health.config.last_wall_ns")->str,
		    "1700000000000000000");
		jm_free(j);
		sbuf_free(&b);
	}

	rg.pages = 10;
	rg.resident = 4;
	rg.sampled = true;
	rg.gone = true;
	tg.n_regions = 1;
	tg.regions = rgs;
	wl.n_targets = 1;
	wl.targets = tgs;
	r.result_case = VITALS__RESPONSE__RESULT_WSS_GET;
	r.wss_get = &wl;
	j = to_json(&r, 4096, &b);
	v = &jm_path(&jm_path(j, "wss_get.targets")->v[0], "regions")->v[0];
	ck_assert(is_null(v, "resident") && is_null(v, "idle"));
	ck_assert_int_eq(jm_get(v, "pages")->ll, 10);
	jm_free(j);
	sbuf_free(&b);
}
END_TEST

static Suite *
client_json_suite(void)
{
	Suite *s = suite_create("client_json");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_64bit_strings);
	tcase_add_test(tc, test_page_size);
	tcase_add_test(tc, test_unknowns_null);
	tcase_add_test(tc, test_unknowns_sentinels);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(client_json_suite());
}
