/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control plane without a socket: role decisions (control_role and
 * the config keys behind it), request validation and the in-memory
 * answers (rpc.c) against a synthetic window, and the store queries
 * (query.c) against a real database, both synchronously and through the
 * query thread and an event loop.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "frame.h"
#include "rpc/rpc_int.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define MAXF VITALS_FRAME_MAX_DEFAULT

/* ------------------------------------------------------------- roles */

START_TEST(test_role_defaults)
{
	struct config cfg;

	config_init(&cfg);
	/* root and AID_SYSTEM are trusted; own uid and AID_SHELL read;
	 * the rest nothing */
	ck_assert_int_eq(control_role(&cfg, 0, 0, 1066), ROLE_TRUSTED);
	ck_assert_int_eq(control_role(&cfg, 1000, 1000, 1066), ROLE_TRUSTED);
	ck_assert_int_eq(control_role(&cfg, 1066, 1066, 1066), ROLE_READER);
	ck_assert_int_eq(control_role(&cfg, 2000, 2000, 1066), ROLE_READER);
	/* adb shell's readproc group (3009) adds nothing to its role */
	ck_assert_int_eq(control_role(&cfg, 2000, 3009, 1066), ROLE_READER);
	/* system's group alone is not system */
	ck_assert_int_eq(control_role(&cfg, 10123, 1000, 1066), ROLE_NONE);
	ck_assert_int_eq(control_role(&cfg, 1001, 1001, 1066), ROLE_NONE);
	ck_assert_int_eq(control_role(&cfg, 65534, 65534, 1066), ROLE_NONE);
	/* a group alone grants nothing by default, not even root's */
	ck_assert_int_eq(control_role(&cfg, 10123, 0, 1066), ROLE_NONE);
	/* the daemon running as root: root is still just trusted */
	ck_assert_int_eq(control_role(&cfg, 0, 0, 0), ROLE_TRUSTED);
	config_release(&cfg);
}
END_TEST

START_TEST(test_role_lists)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert_int_eq(config_set(&cfg, "trusted_uids", "1000, 1001"), 0);
	ck_assert_int_eq(config_set(&cfg, "trusted_gids", "3009"), 0);
	ck_assert_int_eq(config_set(&cfg, "reader_uids", "65534"), 0);
	ck_assert_int_eq(config_set(&cfg, "reader_gids", "1007 3003"), 0);
	ck_assert_int_eq(config_set(&cfg, "shell_uid", "none"), 0);
	/* system_uid = none: uid 1000 has only what the lists give it */
	ck_assert_int_eq(config_set(&cfg, "system_uid", "none"), 0);
	ck_assert_int_eq(control_role(&cfg, 1000, 1000, 1066), ROLE_TRUSTED);
	ck_assert_int_eq(control_role(&cfg, 1001, 5, 1066), ROLE_TRUSTED);
	ck_assert_int_eq(control_role(&cfg, 10200, 3009, 1066), ROLE_TRUSTED);
	ck_assert_int_eq(control_role(&cfg, 65534, 65534, 1066), ROLE_READER);
	ck_assert_int_eq(control_role(&cfg, 10200, 3003, 1066), ROLE_READER);
	ck_assert_int_eq(control_role(&cfg, 10200, 1007, 1066), ROLE_READER);
	/* shell_uid = none: the shell is nobody special */
	ck_assert_int_eq(control_role(&cfg, 2000, 2000, 1066), ROLE_NONE);
	/* trusted implies reader: a uid in both lists is trusted */
	ck_assert_int_eq(config_set(&cfg, "reader_uids", "1000"), 0);
	ck_assert_int_eq(control_role(&cfg, 1000, 1000, 1066), ROLE_TRUSTED);
	/* an emptied list grants nothing; root stays trusted */
	ck_assert_int_eq(config_set(&cfg, "trusted_uids", "none"), 0);
	ck_assert_int_eq(config_set(&cfg, "trusted_gids", ""), 0);
	ck_assert_int_eq(control_role(&cfg, 1001, 5, 1066), ROLE_NONE);
	ck_assert_int_eq(control_role(&cfg, 1000, 1000, 1066), ROLE_READER);
	ck_assert_int_eq(control_role(&cfg, 0, 0, 1066), ROLE_TRUSTED);
	ck_assert_int_eq(config_set(&cfg, "shell_uid", "2001"), 0);
	ck_assert_int_eq(control_role(&cfg, 2001, 2001, 1066), ROLE_READER);
	/* another system uid (a host's platform service): that one */
	ck_assert_int_eq(config_set(&cfg, "system_uid", "1001"), 0);
	ck_assert_int_eq(control_role(&cfg, 1001, 1001, 1066), ROLE_TRUSTED);
	ck_assert_int_eq(control_role(&cfg, 1000, 1000, 1066), ROLE_READER);
	config_release(&cfg);
}
END_TEST

START_TEST(test_config_keys)
{
	struct config cfg;
	char err[256], list[1024];
	unsigned i;
	size_t n = 0;

	config_init(&cfg);
	ck_assert_uint_eq(cfg.max_conns, 64);
	ck_assert_uint_eq(cfg.max_frame, 1u << 20);
	ck_assert_uint_eq(cfg.shell_uid, 2000);
	ck_assert_uint_eq(cfg.system_uid, 1000);
	ck_assert_int_eq(config_set(&cfg, "system_uid", "x"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "system_uid", "4294967295"), -ERANGE);
	ck_assert_uint_eq(cfg.trusted_uids.n, 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&cfg, "reader_uids", "1,x"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "reader_uids", "-1"), -EINVAL);
	/* (uid_t)-1 means "no change" to the kernel: never an id */
	ck_assert_int_eq(config_set(&cfg, "reader_uids", "4294967295"),
	    -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "reader_uids", "4294967294"), 0);
	ck_assert_uint_eq(cfg.reader_uids.n, 1);
	/* a failed value leaves the list as it was */
	ck_assert_int_eq(config_set(&cfg, "reader_uids", "5,6,zz"), -EINVAL);
	ck_assert_uint_eq(cfg.reader_uids.id[0], 4294967294u);
	for (i = 0; i <= VITALS_IDLIST_MAX; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%u,", i);
	ck_assert_int_eq(config_set(&cfg, "trusted_gids", list), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "shell_uid", "abc"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "max_connections", "0"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "max_connections", "200"), 0);
	ck_assert_int_eq(config_set(&cfg, "idle_timeout_ms", "50"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "idle_timeout_ms", "1000"), 0);
	ck_assert_int_eq(config_set(&cfg, "max_frame_bytes", "100"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "max_frame_bytes", "67108865"),
	    -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "query_queue", "0"), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "query_queue", "8"), 0);
	/* the output bound must hold a full pipeline: 4 whole frames */
	ck_assert_uint_ge(cfg.max_output, 4 * (cfg.max_frame + 4));
	ck_assert_int_eq(config_set(&cfg, "max_frame_bytes", "8388608"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert_ptr_nonnull(strstr(err, "max_output_bytes"));
	ck_assert_int_eq(config_set(&cfg, "max_output_bytes", "16777216"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "max_output_bytes", "33554447"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), -ERANGE);
	ck_assert_int_eq(config_set(&cfg, "max_output_bytes", "33554448"), 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof(err)), 0);
	config_release(&cfg);
}
END_TEST

/* ---------------------------------------------------- synthetic data */

static struct window_task
mktask(int32_t id, int32_t tgid, uint64_t cpu, const char *comm)
{
	struct window_task t;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.tgid = tgid;
	t.starttime = 5000 + (uint64_t)id;
	t.uid = 10000 + (uint32_t)id;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	window_task_set_name(&t, comm);
	t.d_utime = cpu;
	t.d_stime = cpu / 2;
	t.d_minflt = 100 * (uint64_t)id;
	t.d_majflt = (uint64_t)id % 3;
	t.samples = 10;
	t.wall_ns = 10 * SEC;
	t.total_ticks = 2000;
	t.norm_ticks = 1000;
	t.rss_pages_max = 1000 + (uint64_t)id;
	t.rss_pages_last = 900 + (uint64_t)id;
	return t;
}

/* 30 processes (pid i + 1 burns 3 * i ticks), each with 2 threads. */
static struct window *
mkwindow(uint64_t seq, int64_t wall_start_ns)
{
	struct window *w = window_new(seq, 2);
	struct window_task t;
	int i;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id),
	    "11111111-2222-3333-4444-555555555555");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (int64_t)seq * 10 * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = wall_start_ns;
	w->wall_end_ns = wall_start_ns + 10 * SEC;
	w->samples = w->samples_valid = 10;
	w->all.d.user = 500;
	w->all.d.idle = 1500;
	w->all.samples = 10;
	w->cpu[0].d.user = 250;
	w->cpu[1].d.user = 250;
	gauge_add(&w->load1, 1.5);
	w->vm_have = 1u << VM_PGFAULT;
	w->d_vm[VM_PGFAULT] = 12345;
	w->mem_have = 1u << MI_MEMTOTAL;
	gauge_add(&w->mem_kb[MI_MEMTOTAL], 8000000);
	w->psi[PSI_CPU].available = true;
	w->health.tick_late_ns_max = 250000;
	w->health.loop_cb_ns_max = 1700000;
	snprintf(w->health.loop_cb_what, sizeof(w->health.loop_cb_what),
	    "wss pass");
	w->health.loop_cb_over_1ms = 3;
	w->health.loop_cb_cpu_ns = 900000;
	w->health.tick_late_held_ns_sum = 110000;
	w->health.tick_late_runq_ns_sum = 220000;
	w->health.tick_late_max_held_ns = 33000;
	w->health.tick_late_max_runq_ns = 44000;
	for (i = 0; i < 30; i++) {
		char comm[16];

		snprintf(comm, sizeof(comm), "proc%d", i + 1);
		t = mktask(i + 1, i + 1, 3 * (uint64_t)i, comm);
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
		t = mktask(1000 + 2 * i, i + 1, (uint64_t)i, "worker");
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
		t = mktask(1001 + 2 * i, i + 1, 1, "helper");
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
	}
	/* A comm of arbitrary bytes: never invalid UTF-8 on the wire. */
	t = mktask(99, 99, 0,
	    "\xff\xfe"
	    "ab\xc3");
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	return w;
}

/* ------------------------------------------------------ rpc_handle */

struct fixture {
	struct window *w;
	struct vitalsd_info info;
	struct control_stats stats;
	struct rpc_cache cache;
	struct rpc_ctx ctx;
};

static struct fixture fx;

static void
fx_setup(void)
{
	memset(&fx, 0, sizeof(fx));
	fx.w = mkwindow(5, 1700000000LL * SEC);
	fx.info.last = fx.w;
	fx.info.hz = 100;
	fx.info.interval_ms = 1000;
	fx.info.uptime_ns = 42 * SEC;
	fx.info.have_store = true;
	fx.info.store.state = STORE_OK;
	fx.info.store.windows_written = 17;
	fx.info.store.clock_suspect = true;
	fx.info.store.clock_ahead_ns = 3 * 86400 * SEC;
	fx.info.store.clock_deferred = 4;
	fx.info.store.clock_held = 99;
	fx.stats.cap_refused = 5;
	fx.stats.connections = 2;
	fx.stats.denied = 3;
	fx.ctx.info = &fx.info;
	fx.ctx.stats = &fx.stats;
	fx.ctx.cache = &fx.cache;
	fx.ctx.max_frame = MAXF;
	fx.ctx.now_wall_ns = 1700000100LL * SEC;
}

static void
fx_teardown(void)
{
	window_free(fx.w);
	rpc_cache_release(&fx.cache);
}

/* Handle a request as `role`; the decoded answer (NULL for a query). */
static Vitals__Response *
handle(const Vitals__Request *req, enum control_role role,
    struct rpc_result *res)
{
	uint8_t *buf;
	size_t len;
	uint32_t plen;
	Vitals__Response *resp = NULL;

	ck_assert_int_eq(frame_pack_request(req, &buf, &len), 0);
	ck_assert_int_eq(rpc_handle(&fx.ctx, role, buf + VITALS_FRAME_HDR,
			     len - VITALS_FRAME_HDR, res),
	    0);
	free(buf);
	if (res->verdict == RPC_QUERY) {
		ck_assert_ptr_null(res->frame);
		return NULL;
	}
	ck_assert_ptr_nonnull(res->frame);
	ck_assert_int_eq(frame_header(res->frame, UINT32_MAX, &plen), 0);
	ck_assert_uint_eq(plen + VITALS_FRAME_HDR, res->len);
	resp = frame_unpack_response(res->frame + VITALS_FRAME_HDR, plen);
	ck_assert_ptr_nonnull(resp);
	ck_assert_uint_eq(resp->version, 1);
	free(res->frame);
	res->frame = NULL;
	return resp;
}

static void
init_req(Vitals__Request *req, uint64_t id)
{
	vitals__request__init(req);
	req->version = 1;
	req->id = id;
}

START_TEST(test_malformed)
{
	static const uint8_t junk[] = { 0x0a, 0x7f, 0x01 };
	struct rpc_result res;
	Vitals__Response *resp;
	uint32_t plen;

	ck_assert_int_eq(rpc_handle(&fx.ctx, ROLE_TRUSTED, junk, sizeof(junk),
			     &res),
	    0);
	ck_assert_int_eq(res.verdict, RPC_ANSWER_CLOSE);
	ck_assert(res.bad_frame);
	ck_assert_int_eq(frame_header(res.frame, MAXF, &plen), 0);
	resp = frame_unpack_response(res.frame + 4, plen);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	ck_assert_ptr_nonnull(strstr(resp->error, "malformed"));
	vitals__response__free_unpacked(resp, NULL);
	free(res.frame);
}
END_TEST

START_TEST(test_no_role)
{
	Vitals__Request req;
	Vitals__HealthRequest h = VITALS__HEALTH_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp;

	init_req(&req, 11);
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &h;
	resp = handle(&req, ROLE_NONE, &res);
	ck_assert_int_eq(resp->status,
	    VITALS__STATUS__STATUS_PERMISSION_DENIED);
	ck_assert_str_eq(resp->error, "reader role required");
	ck_assert_uint_eq(resp->id, 11);
	ck_assert_int_eq(res.verdict, RPC_ANSWER_CLOSE);
	ck_assert(res.denied);
	vitals__response__free_unpacked(resp, NULL);

	/* ... even with a version it does not speak */
	req.version = 9;
	resp = handle(&req, ROLE_NONE, &res);
	ck_assert_int_eq(resp->status,
	    VITALS__STATUS__STATUS_PERMISSION_DENIED);
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

START_TEST(test_version_and_op)
{
	Vitals__Request req;
	Vitals__HealthRequest h = VITALS__HEALTH_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp;

	init_req(&req, 12);
	req.version = 2;
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &h;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status,
	    VITALS__STATUS__STATUS_UNSUPPORTED_VERSION);
	ck_assert_ptr_nonnull(strstr(resp->error, "version 2"));
	ck_assert_int_eq(res.verdict, RPC_ANSWER);
	ck_assert(!res.denied);
	vitals__response__free_unpacked(resp, NULL);

	req.version = 0; /* unset */
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status,
	    VITALS__STATUS__STATUS_UNSUPPORTED_VERSION);
	vitals__response__free_unpacked(resp, NULL);

	req.version = 1;
	req.op_case = VITALS__REQUEST__OP__NOT_SET;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	ck_assert_uint_eq(resp->id, 12);
	ck_assert_int_eq(res.verdict, RPC_ANSWER);
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

START_TEST(test_burst_roles)
{
	Vitals__Request req;
	Vitals__BurstRequest b = VITALS__BURST_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp;

	init_req(&req, 13);
	req.op_case = VITALS__REQUEST__OP_BURST;
	req.burst = &b;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status,
	    VITALS__STATUS__STATUS_PERMISSION_DENIED);
	ck_assert_str_eq(resp->error, "burst requires the trusted role");
	ck_assert(res.denied);
	/* a reader's connection stays usable */
	ck_assert_int_eq(res.verdict, RPC_ANSWER);
	vitals__response__free_unpacked(resp, NULL);

	resp = handle(&req, ROLE_TRUSTED, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_int_eq(resp->result_case, VITALS__RESPONSE__RESULT_BURST);
	ck_assert_uint_eq(resp->burst->duration_ms, 10000);
	ck_assert_uint_eq(resp->burst->interval_ms, 100);
	vitals__response__free_unpacked(resp, NULL);

	b.duration_ms = 2500;
	resp = handle(&req, ROLE_TRUSTED, &res);
	ck_assert_uint_eq(resp->burst->duration_ms, 2500);
	vitals__response__free_unpacked(resp, NULL);
	b.duration_ms = 60000;
	resp = handle(&req, ROLE_TRUSTED, &res);
	ck_assert_uint_eq(resp->burst->duration_ms, 10000);
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

START_TEST(test_snapshot)
{
	Vitals__Request req;
	Vitals__SnapshotRequest s = VITALS__SNAPSHOT_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp, *again;
	Vitals__Window *w;
	size_t i;

	init_req(&req, 14);
	req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
	req.snapshot = &s;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->id, 14);
	w = resp->snapshot->window;
	ck_assert_uint_eq(w->seq, 5);
	ck_assert_uint_eq(w->hz, 100);
	ck_assert_int_eq(w->all->cpu, -1);
	ck_assert_uint_eq(w->all->d->user, 500);
	ck_assert_uint_eq(w->n_cpus, 2);
	ck_assert_int_eq(w->cpus[1]->cpu, 1);
	ck_assert_uint_eq(w->n_vmstat, 1);
	ck_assert_str_eq(w->vmstat[0]->name, "pgfault");
	ck_assert_uint_eq(w->vmstat[0]->value, 12345);
	ck_assert_uint_eq(w->n_meminfo, 1);
	ck_assert_uint_eq(w->n_psi, PSI__MAX);
	ck_assert_uint_eq(w->n_invalid_samples, INV__MAX);
	ck_assert_uint_eq(w->health->tick_late_ns_max, 250000);
	ck_assert_uint_eq(w->health->loop_cb_ns_max, 1700000);
	ck_assert_str_eq(w->health->loop_cb_what, "wss pass");
	ck_assert_uint_eq(w->health->loop_cb_over_1ms, 3);
	ck_assert_uint_eq(w->health->loop_cb_cpu_ns, 900000);
	ck_assert_uint_eq(w->health->tick_late_held_ns_sum, 110000);
	ck_assert_uint_eq(w->health->tick_late_runq_ns_sum, 220000);
	ck_assert_uint_eq(w->health->tick_late_max_held_ns, 33000);
	ck_assert_uint_eq(w->health->tick_late_max_runq_ns, 44000);
	/* top 10 by CPU, busiest first; totals before the cut */
	ck_assert_uint_eq(w->n_procs, 10);
	ck_assert_uint_eq(w->nprocs_total, 31);
	ck_assert_uint_eq(w->n_threads, 10);
	ck_assert_uint_eq(w->nthreads_total, 60);
	ck_assert_int_eq(w->procs[0]->id, 30);
	for (i = 1; i < w->n_procs; i++)
		ck_assert_uint_ge(w->procs[i - 1]->d_utime +
			w->procs[i - 1]->d_stime,
		    w->procs[i]->d_utime + w->procs[i]->d_stime);
	vitals__response__free_unpacked(resp, NULL);

	/* The second ask is served from the cache: same body, new id. */
	ck_assert_ptr_nonnull(fx.cache.e[0].body);
	ck_assert_uint_eq(fx.cache.seq, 5);
	req.id = 300;
	again = handle(&req, ROLE_READER, &res);
	ck_assert_uint_eq(again->id, 300);
	ck_assert_uint_eq(again->snapshot->window->n_procs, 10);
	ck_assert_int_eq(again->snapshot->window->procs[0]->id, 30);
	vitals__response__free_unpacked(again, NULL);

	/* another top_n misses the cache; 0 tasks cut is "all" only when
	 * asked for more than there are */
	s.top_n = 100;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_uint_eq(resp->snapshot->window->n_procs, 31);
	for (i = 0; i < resp->snapshot->window->n_procs; i++)
		if (resp->snapshot->window->procs[i]->id == 99)
			ck_assert_str_eq(resp->snapshot->window->procs[i]->comm,
			    "??ab?");
	vitals__response__free_unpacked(resp, NULL);

	/* no closed window yet */
	fx.info.last = NULL;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_UNAVAILABLE);
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

/* top_n past the tasks there are is one cache entry, not one per value;
 * dumps are cached too, apart from snapshots. */
START_TEST(test_cache_top_clamp)
{
	Vitals__Request req;
	Vitals__SnapshotRequest s = VITALS__SNAPSHOT_REQUEST__INIT;
	Vitals__DumpRequest d = VITALS__DUMP_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp;
	struct window *w = window_new(9, 1);
	struct window_task t;
	unsigned i, k, full;

	ck_assert_ptr_nonnull(w);
	/* 100 tasks: 60 processes, 40 threads */
	for (i = 0; i < 100; i++) {
		t = mktask((int32_t)(1000 + i), (int32_t)(1000 + i % 60), i,
		    "t");
		ck_assert_int_eq(window_add_task(w, i >= 60, &t), 0);
	}
	fx.info.last = w;
	ck_assert_uint_eq(rpc_top_clamp(w, 500, false), 60);
	ck_assert_uint_eq(rpc_top_clamp(w, 600, false), 60);
	ck_assert_uint_eq(rpc_top_clamp(w, 7, false), 7);

	init_req(&req, 40);
	req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
	req.snapshot = &s;
	s.top_n = 500;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->snapshot->window->n_procs, 60);
	ck_assert_uint_eq(resp->snapshot->window->n_threads, 40);
	vitals__response__free_unpacked(resp, NULL);
	ck_assert_uint_eq(fx.cache.seq, 9);
	ck_assert_uint_eq(fx.cache.next, 1);
	ck_assert_uint_eq(fx.cache.e[0].top_n, 60);
	/* 600: the same entry, nothing built or added */
	s.top_n = 600;
	req.id = 41;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->id, 41);
	ck_assert_uint_eq(resp->snapshot->window->n_procs, 60);
	vitals__response__free_unpacked(resp, NULL);
	ck_assert_uint_eq(fx.cache.next, 1);
	ck_assert_ptr_null(fx.cache.e[1].body);

	/* a dump is cached by (window, top_n) too, apart from snapshots */
	init_req(&req, 42);
	req.op_case = VITALS__REQUEST__OP_DUMP;
	req.dump = &d;
	d.top_n = 500;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->id, 42);
	ck_assert_uint_eq(resp->version, 1);
	ck_assert_ptr_nonnull(strstr(resp->dump->text, "Window 9"));
	vitals__response__free_unpacked(resp, NULL);
	ck_assert_uint_eq(fx.cache.next, 2);
	d.top_n = 900;
	req.id = 43;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->id, 43);
	ck_assert_ptr_nonnull(strstr(resp->dump->text, "Window 9"));
	vitals__response__free_unpacked(resp, NULL);
	ck_assert_uint_eq(fx.cache.next, 2);

	/* An answer above the frame limit is not kept: its TOO_LARGE is,
	 * a few bytes, and answers the next ask as well. */
	rpc_cache_release(&fx.cache);
	fx.ctx.max_frame = 2048;
	init_req(&req, 44);
	req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
	req.snapshot = &s;
	for (k = 0; k < 2; k++) {
		req.id = 44 + k;
		resp = handle(&req, ROLE_READER, &res);
		ck_assert_int_eq(resp->status,
		    VITALS__STATUS__STATUS_TOO_LARGE);
		ck_assert_uint_eq(resp->id, 44 + k);
		ck_assert_ptr_nonnull(strstr(resp->error, "2048-byte"));
		vitals__response__free_unpacked(resp, NULL);
		ck_assert_uint_eq(fx.cache.next, 1);
		ck_assert_uint_lt(fx.cache.e[0].len, 200);
	}
	/* a cut that fits is built and kept whole */
	s.top_n = 1;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	full = (unsigned)fx.cache.e[1].len;
	ck_assert_uint_gt(full, 200);
	vitals__response__free_unpacked(resp, NULL);

	fx.info.last = fx.w;
	window_free(w);
}
END_TEST

/* One answer restamped for each request that shares it. */
START_TEST(test_reid)
{
	static const uint64_t ids[] = { 0, 1, 300, UINT64_MAX };
	struct rpc_query q = { .op = RPC_Q_TOP,
		.metric = METRIC_CPU,
		.threads = true,
		.hz = 100,
		.from_wall_ns = 1,
		.to_wall_ns = 2 };
	Vitals__Response *resp;
	uint8_t *f0, *f;
	size_t l0, l;
	uint32_t plen;
	unsigned i;

	ck_assert_int_eq(rpc_answer_top(&q, fx.w->procs, 3, MAXF, &f0, &l0), 0);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		ck_assert_int_eq(rpc_frame_reid(f0, l0, ids[i], &f, &l), 0);
		ck_assert_int_eq(frame_header(f, MAXF, &plen), 0);
		ck_assert_uint_eq(plen + 4, l);
		resp = frame_unpack_response(f + 4, plen);
		ck_assert_ptr_nonnull(resp);
		ck_assert_uint_eq(resp->version, 1);
		ck_assert_uint_eq(resp->id, ids[i]);
		ck_assert_uint_eq(resp->top->n_tasks, 3);
		ck_assert(resp->top->threads);
		vitals__response__free_unpacked(resp, NULL);
		if (ids[i] == 0) {
			ck_assert_uint_eq(l, l0);
			ck_assert_int_eq(memcmp(f, f0, l), 0);
		}
		/* a frame that already has an id is not restamped */
		if (ids[i] != 0) {
			uint8_t *g;
			size_t gl;

			ck_assert_int_eq(rpc_frame_reid(f, l, 5, &g, &gl),
			    -EINVAL);
		}
		free(f);
	}
	free(f0);
	ck_assert_int_eq(rpc_error_frame(0, RPC_BUSY, "x", &f0, &l0), 0);
	ck_assert_int_eq(rpc_frame_reid(f0, l0, 9, &f, &l), 0);
	resp = frame_unpack_response(f + 4, l - 4);
	ck_assert_uint_eq(resp->id, 9);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BUSY);
	ck_assert_str_eq(resp->error, "x");
	vitals__response__free_unpacked(resp, NULL);
	free(f);
	free(f0);
}
END_TEST

START_TEST(test_too_large)
{
	Vitals__Request req;
	Vitals__SnapshotRequest s = VITALS__SNAPSHOT_REQUEST__INIT;
	Vitals__DumpRequest d = VITALS__DUMP_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp;

	fx.ctx.max_frame = 1024;
	init_req(&req, 15);
	req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
	req.snapshot = &s;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_TOO_LARGE);
	ck_assert_uint_eq(resp->id, 15);
	ck_assert_int_eq(resp->result_case, VITALS__RESPONSE__RESULT__NOT_SET);
	vitals__response__free_unpacked(resp, NULL);

	req.op_case = VITALS__REQUEST__OP_DUMP;
	req.dump = &d;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_TOO_LARGE);
	ck_assert_ptr_nonnull(strstr(resp->error, "1024-byte"));
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

START_TEST(test_health_dump)
{
	Vitals__Request req;
	Vitals__HealthRequest h = VITALS__HEALTH_REQUEST__INIT;
	Vitals__DumpRequest d = VITALS__DUMP_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp;

	init_req(&req, 16);
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &h;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_ptr_nonnull(resp->health->last);
	/* the last window without its tasks, with its totals */
	ck_assert_uint_eq(resp->health->last->n_procs, 0);
	ck_assert_uint_eq(resp->health->last->nprocs_total, 31);
	ck_assert_str_eq(resp->health->store->state, "ok");
	ck_assert_uint_eq(resp->health->store->windows_written, 17);
	ck_assert(resp->health->store->clock_suspect);
	ck_assert(!resp->health->store->clock_confirmed);
	ck_assert_int_eq(resp->health->store->clock_ahead_ns, 3 * 86400 * SEC);
	ck_assert_uint_eq(resp->health->store->clock_deferred, 4);
	ck_assert_uint_eq(resp->health->store->clock_held, 99);
	ck_assert_uint_eq(resp->health->control->cap_refused, 5);
	ck_assert_uint_eq(resp->health->control->connections, 2);
	ck_assert_uint_eq(resp->health->control->denied, 3);
	ck_assert_uint_eq(resp->health->uptime_ns, 42 * SEC);
	ck_assert_uint_eq(resp->health->interval_ms, 1000);
	vitals__response__free_unpacked(resp, NULL);

	req.op_case = VITALS__REQUEST__OP_DUMP;
	req.dump = &d;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_ptr_nonnull(strstr(resp->dump->text, "Window 5"));
	ck_assert_ptr_nonnull(strstr(resp->dump->text, "proc30"));
	vitals__response__free_unpacked(resp, NULL);

	fx.info.last = NULL;
	fx.info.have_store = false;
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &h;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_ptr_null(resp->health->last);
	ck_assert_str_eq(resp->health->store->state, "closed");
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

START_TEST(test_query_validation)
{
	Vitals__Request req;
	Vitals__TopRequest top = VITALS__TOP_REQUEST__INIT;
	Vitals__ProcessRequest proc = VITALS__PROCESS_REQUEST__INIT;
	Vitals__WindowsRequest win = VITALS__WINDOWS_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	struct rpc_result res;
	Vitals__Response *resp;
	int64_t now = fx.ctx.now_wall_ns;

	init_req(&req, 17);
	req.op_case = VITALS__REQUEST__OP_TOP;
	req.top = &top;
	/* no range: everything stored; defaults */
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.op, RPC_Q_TOP);
	ck_assert_uint_eq(res.query.id, 17);
	ck_assert_int_eq(res.query.from_wall_ns, VITALS_WALL_MIN);
	ck_assert_int_eq(res.query.to_wall_ns, now);
	ck_assert_uint_eq(res.query.n, 20);
	ck_assert_uint_eq(res.query.hz, 100);
	ck_assert_int_eq(res.query.metric, METRIC_CPU);
	/* since wins over from/to; n is clamped */
	tr.from_wall_ns = 5;
	tr.to_wall_ns = 6;
	tr.since_ns = 3600 * SEC;
	top.range = &tr;
	top.n = 1000000;
	top.metric = VITALS__METRIC__METRIC_RSS;
	top.threads = true;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.from_wall_ns, now - 3600 * SEC);
	ck_assert_int_eq(res.query.to_wall_ns, now);
	ck_assert_uint_eq(res.query.n, 1000);
	ck_assert_int_eq(res.query.metric, METRIC_RSS);
	ck_assert(res.query.threads);
	/* an unknown metric */
	top.metric = (Vitals__Metric)7;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	ck_assert_str_eq(resp->error, "unknown metric");
	vitals__response__free_unpacked(resp, NULL);
	top.metric = VITALS__METRIC__METRIC_CPU;
	/* one dataset and one ranking per answer: a state with weighted,
	 * or source bpf with a state, weighted or a metric, is refused
	 * rather than half answered */
	{
		static const struct {
			const char *state;
			Vitals__Metric metric;
			Vitals__TopSource source;
		} bad[] = {
			{ "foreground", VITALS__METRIC__METRIC_WEIGHTED,
			    VITALS__TOP_SOURCE__TOP_SOURCE_PROCFS },
			{ "foreground", VITALS__METRIC__METRIC_CPU,
			    VITALS__TOP_SOURCE__TOP_SOURCE_BPF },
			{ "", VITALS__METRIC__METRIC_WEIGHTED,
			    VITALS__TOP_SOURCE__TOP_SOURCE_BPF },
			{ "", VITALS__METRIC__METRIC_MINFLT,
			    VITALS__TOP_SOURCE__TOP_SOURCE_BPF },
		};
		size_t k;

		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			top.state = (char *)bad[k].state;
			top.metric = bad[k].metric;
			top.source = bad[k].source;
			resp = handle(&req, ROLE_READER, &res);
			ck_assert_int_eq(resp->status,
			    VITALS__STATUS__STATUS_BAD_REQUEST);
			vitals__response__free_unpacked(resp, NULL);
		}
		top.state = (char *)"";
		top.metric = VITALS__METRIC__METRIC_CPU;
		top.source = VITALS__TOP_SOURCE__TOP_SOURCE_BPF;
		ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
		ck_assert(res.query.bpf);
		top.source = VITALS__TOP_SOURCE__TOP_SOURCE_PROCFS;
	}
	/* empty and negative ranges */
	tr.since_ns = 0;
	tr.from_wall_ns = 10;
	tr.to_wall_ns = 10;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(resp, NULL);
	tr.since_ns = -1;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(resp, NULL);
	/* to == 0: now */
	tr.since_ns = 0;
	tr.to_wall_ns = 0;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.from_wall_ns, 10);
	ck_assert_int_eq(res.query.to_wall_ns, now);

	req.op_case = VITALS__REQUEST__OP_PROCESS;
	req.process = &proc;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(resp, NULL);
	proc.pid = 4321;
	proc.starttime = 77;
	proc.threads = true;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.op, RPC_Q_PROCESS);
	ck_assert_int_eq(res.query.pid, 4321);
	ck_assert_uint_eq(res.query.starttime, 77);
	ck_assert(res.query.threads);

	req.op_case = VITALS__REQUEST__OP_WINDOWS;
	req.windows = &win;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.op, RPC_Q_WINDOWS);
	ck_assert_uint_eq(res.query.max_windows, 360);
	ck_assert_uint_eq(res.query.top_n, 0);
	win.granularity_s = 400 * 86400;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(resp, NULL);

	/* store reads need the reader role too */
	resp = handle(&req, ROLE_NONE, &res);
	ck_assert_int_eq(resp->status,
	    VITALS__STATUS__STATUS_PERMISSION_DENIED);
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

/* A wall clock before 1970 is a clock like any other: ranges relative to
 * it, and explicit ranges before 1970, are queries, not BAD_REQUEST. */
START_TEST(test_range_before_1970)
{
	Vitals__Request req;
	Vitals__TopRequest top = VITALS__TOP_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	Vitals__GpuMemRequest gr = VITALS__GPU_MEM_REQUEST__INIT;
	struct rpc_result res;
	Vitals__Response *resp;
	int64_t saved = fx.ctx.now_wall_ns;
	int64_t now = -86400 * SEC; /* 1969-12-31 */

	fx.ctx.now_wall_ns = now;
	init_req(&req, 3);
	req.op_case = VITALS__REQUEST__OP_TOP;
	req.top = &top;
	/* no range: everything stored, up to now */
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.from_wall_ns, VITALS_WALL_MIN);
	ck_assert_int_eq(res.query.to_wall_ns, now);
	/* the last hour */
	tr.since_ns = 3600 * SEC;
	top.range = &tr;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.from_wall_ns, now - 3600 * SEC);
	ck_assert_int_eq(res.query.to_wall_ns, now);
	/* a span longer than the clock reaches back: from the earliest */
	tr.since_ns = INT64_MAX;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.from_wall_ns, VITALS_WALL_MIN);
	/* explicit, before 1970, and across it */
	tr.since_ns = 0;
	tr.from_wall_ns = -7200 * SEC;
	tr.to_wall_ns = -3600 * SEC;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.from_wall_ns, -7200 * SEC);
	ck_assert_int_eq(res.query.to_wall_ns, -3600 * SEC);
	tr.to_wall_ns = 3600 * SEC;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.to_wall_ns, 3600 * SEC);
	/* still refused: empty, negative since, beyond the earliest */
	tr.from_wall_ns = tr.to_wall_ns;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(resp, NULL);
	tr.from_wall_ns = INT64_MIN;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(resp, NULL);
	tr.from_wall_ns = 0;
	tr.since_ns = -1;
	resp = handle(&req, ROLE_READER, &res);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_BAD_REQUEST);
	vitals__response__free_unpacked(resp, NULL);
	/* GPU memory spans too */
	init_req(&req, 4);
	req.op_case = VITALS__REQUEST__OP_GPU_MEM;
	req.gpu_mem = &gr;
	gr.since_ns = 60 * SEC;
	ck_assert_ptr_null(handle(&req, ROLE_READER, &res));
	ck_assert_int_eq(res.query.from_wall_ns, now - 60 * SEC);
	ck_assert_int_eq(res.query.to_wall_ns, now);
	fx.ctx.now_wall_ns = saved;
}
END_TEST

/* ---------------------------------------------------------- queries */

static char *qdir;
static struct store *qstore;
static const int64_t T0 = 1700000010LL * SEC; /* a multiple of 30 s */

static void
q_setup(void)
{
	struct store_opts o;
	char path[PATH_MAX];
	uint64_t i;

	fx_setup();
	qdir = tu_mkdtemp("rpc");
	snprintf(path, sizeof(path), "%s/vitals.db", qdir);
	store_opts_default(&o);
	o.retain_s = INT64_MAX / NSEC_PER_SEC / 2;
	ck_assert_int_eq(store_open(path, &o, &qstore), 0);
	/* six 10 s windows from T0 */
	for (i = 0; i < 6; i++) {
		struct window *w = mkwindow(i + 1, T0 + (int64_t)i * 10 * SEC);

		ck_assert_int_eq(store_put(qstore, w), 0);
		window_free(w);
	}
}

static void
q_teardown(void)
{
	store_close(qstore);
	tu_rmtree(qdir);
	free(qdir);
	fx_teardown();
}

static Vitals__Response *
run_query(const struct rpc_query *q)
{
	uint8_t *frame;
	size_t len;
	uint32_t plen;
	Vitals__Response *resp;

	ck_assert_int_eq(query_run(qstore, q, MAXF, &frame, &len), 0);
	ck_assert_int_eq(frame_header(frame, MAXF, &plen), 0);
	resp = frame_unpack_response(frame + VITALS_FRAME_HDR, plen);
	ck_assert_ptr_nonnull(resp);
	free(frame);
	ck_assert_uint_eq(resp->id, q->id);
	return resp;
}

/*
 * A process with no row in the range: from the store, when rows of the same
 * instance lie before and after it (it lived through, idle), its identity
 * and zeros; NOT_FOUND when the earlier rows end in its exit, or when only
 * one side has rows. (The daemon looks in /proc first: check_client_daemon.)
 */
START_TEST(test_query_quiet_process)
{
	struct rpc_query q = { .id = 22,
		.op = RPC_Q_PROCESS,
		.pid = 7,
		.from_wall_ns = T0 + 110 * SEC,
		.to_wall_ns = T0 + 120 * SEC,
		.hz = 100 };
	const Vitals__Task *t;
	Vitals__Response *resp;
	struct window *w;
	size_t i;

	/* windows at +100 s and +130 s: nothing between +110 and +130 */
	w = mkwindow(7, T0 + 100 * SEC);
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);
	w = mkwindow(8, T0 + 130 * SEC);
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);

	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->process->n_history, 0);
	ck_assert_ptr_nonnull(t = resp->process->identity);
	ck_assert_str_eq(resp->process->identity_source, "store");
	ck_assert_int_eq(t->id, 7);
	ck_assert_int_eq(t->tgid, 7);
	ck_assert_uint_eq(t->starttime, 5007);
	ck_assert_uint_eq(t->uid, 10007);
	ck_assert_str_eq(t->comm, "proc7");
	ck_assert_uint_eq(t->d_utime + t->d_stime + t->d_minflt + t->d_majflt,
	    0);
	ck_assert_uint_eq(t->samples, 0);
	vitals__response__free_unpacked(resp, NULL);

	/* another instance of the pid is not it */
	q.starttime = 5008;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);
	q.starttime = 0;

	/* after the last row: only one side */
	q.from_wall_ns = T0 + 150 * SEC;
	q.to_wall_ns = T0 + 160 * SEC;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);

	/* its last row before the gap says it exited */
	w = mkwindow(9, T0 + 200 * SEC);
	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].id == 7)
			w->procs[i].exited = true;
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);
	w = mkwindow(10, T0 + 230 * SEC);
	ck_assert_int_eq(store_put(qstore, w), 0);
	window_free(w);
	q.from_wall_ns = T0 + 210 * SEC;
	q.to_wall_ns = T0 + 220 * SEC;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);
}
END_TEST

START_TEST(test_query_run)
{
	struct rpc_query q = { .id = 21,
		.from_wall_ns = T0,
		.to_wall_ns = T0 + 60 * SEC,
		.hz = 100 };
	Vitals__Response *resp;
	size_t i;

	q.op = RPC_Q_TOP;
	q.metric = METRIC_CPU;
	q.n = 5;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->top->n_tasks, 5);
	ck_assert_uint_eq(resp->top->hz, 100);
	ck_assert_int_eq(resp->top->from_wall_ns, T0);
	/* pid 30: (87 + 43) ticks in each of 6 windows */
	ck_assert_int_eq(resp->top->tasks[0]->id, 30);
	ck_assert_uint_eq(resp->top->tasks[0]->d_utime, 6 * 87);
	ck_assert_uint_eq(resp->top->tasks[0]->d_stime, 6 * 43);
	ck_assert_str_eq(resp->top->tasks[0]->comm, "proc30");
	vitals__response__free_unpacked(resp, NULL);

	q.threads = true;
	q.metric = METRIC_MINFLT;
	resp = run_query(&q);
	ck_assert_int_eq(resp->top->tasks[0]->id, 1059);
	ck_assert_int_eq(resp->top->tasks[0]->tgid, 30);
	vitals__response__free_unpacked(resp, NULL);

	q.op = RPC_Q_PROCESS;
	q.pid = 7;
	q.threads = true;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	ck_assert_uint_eq(resp->process->n_history, 6);
	ck_assert_uint_eq(resp->process->n_threads, 12);
	for (i = 0; i < resp->process->n_threads; i++)
		ck_assert_int_eq(resp->process->threads[i]->task->tgid, 7);
	ck_assert_int_eq(resp->process->history[5]->wall_start_ns,
	    T0 + 50 * SEC);
	vitals__response__free_unpacked(resp, NULL);
	q.threads = false;
	resp = run_query(&q);
	ck_assert_uint_eq(resp->process->n_threads, 0);
	vitals__response__free_unpacked(resp, NULL);

	q.pid = 31337;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_NOT_FOUND);
	vitals__response__free_unpacked(resp, NULL);

	q.op = RPC_Q_WINDOWS;
	q.max_windows = 4;
	q.with_tasks = true;
	q.top_n = 3;
	resp = run_query(&q);
	ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
	/* the newest four; more matched */
	ck_assert_uint_eq(resp->windows->n_windows, 4);
	ck_assert(resp->windows->truncated);
	ck_assert_int_eq(resp->windows->windows[3]->wall_start_ns,
	    T0 + 50 * SEC);
	ck_assert_uint_eq(resp->windows->windows[0]->n_procs, 3);
	ck_assert_uint_eq(resp->windows->windows[0]->nprocs_total, 31);
	vitals__response__free_unpacked(resp, NULL);
	/* granularity 30 s: two merged buckets */
	q.granularity_s = 30;
	q.with_tasks = false;
	resp = run_query(&q);
	ck_assert_uint_eq(resp->windows->n_windows, 2);
	ck_assert(!resp->windows->truncated);
	ck_assert_uint_eq(resp->windows->windows[0]->samples, 30);
	ck_assert_uint_eq(resp->windows->windows[0]->n_procs, 0);
	vitals__response__free_unpacked(resp, NULL);

	/* too much for the frame limit: the newest windows that fit, cut
	 * and said so; not even the newest: TOO_LARGE */
	q.granularity_s = 0;
	q.with_tasks = true;
	q.top_n = 0;
	{
		uint8_t *frame;
		size_t len;
		uint32_t plen;

		ck_assert_int_eq(query_run(qstore, &q, 8192, &frame, &len), 0);
		ck_assert_int_eq(frame_header(frame, 8192, &plen), 0);
		resp = frame_unpack_response(frame + 4, plen);
		free(frame);
		ck_assert_int_eq(resp->status, VITALS__STATUS__STATUS_OK);
		ck_assert_uint_ge(resp->windows->n_windows, 1);
		ck_assert_uint_lt(resp->windows->n_windows, 4);
		ck_assert(resp->windows->truncated);
		ck_assert(resp->windows->budget_exhausted);
		ck_assert_uint_eq(resp->windows->budget_bytes, 0);
		ck_assert_int_eq(resp->windows
				     ->windows[resp->windows->n_windows - 1]
				     ->wall_start_ns,
		    T0 + 50 * SEC);
		vitals__response__free_unpacked(resp, NULL);

		ck_assert_int_eq(query_run(qstore, &q, 600, &frame, &len), 0);
		ck_assert_int_eq(frame_header(frame, 600, &plen), 0);
		resp = frame_unpack_response(frame + 4, plen);
		free(frame);
		ck_assert_int_eq(resp->status,
		    VITALS__STATUS__STATUS_TOO_LARGE);
		vitals__response__free_unpacked(resp, NULL);
	}
}
END_TEST

/* Answers collected on the loop. */
struct done_rec {
	unsigned n;
	uint64_t conn[64];
	uint32_t tag[64];
	uint64_t id[64];
	int status[64];
	struct event_base *base;
	unsigned want;
};

static void
done_fn(uint64_t conn_id, uint32_t tag, uint8_t *frame, size_t len, void *arg)
{
	struct done_rec *d = arg;
	Vitals__Response *resp;

	ck_assert_ptr_nonnull(frame);
	ck_assert_uint_gt(len, 4);
	resp = frame_unpack_response(frame + 4, len - 4);
	ck_assert_ptr_nonnull(resp);
	d->conn[d->n] = conn_id;
	d->tag[d->n] = tag;
	d->id[d->n] = resp->id;
	d->status[d->n] = resp->status;
	d->n++;
	vitals__response__free_unpacked(resp, NULL);
	free(frame);
	if (d->n >= d->want)
		event_base_loopbreak(d->base);
}

/* The pool held (query_hold) stands for a read that takes long. A held
 * thread took the last job submitted off the queue and waits before
 * running it: polled, not a sleep. */
static void
query_dequeued(struct query *qq)
{
	struct control_stats st;
	unsigned i;

	for (i = 0; i < 1000; i++) {
		query_get_stats(qq, &st);
		if (st.queries_queued == 0)
			return;
		tu_sleep_ms(5);
	}
	ck_abort_msg("the query thread never took the job");
}

START_TEST(test_query_thread)
{
	struct rpc_query q = { .op = RPC_Q_TOP,
		.from_wall_ns = T0,
		.to_wall_ns = T0 + 60 * SEC,
		.n = 3,
		.hz = 100 };
	struct done_rec d = { 0 };
	struct timeval tv = { 10, 0 };
	struct control_stats st;
	struct query *qq;
	uint8_t *frame;
	size_t len;
	unsigned i, busy = 0;

	d.base = event_base_new();
	ck_assert_ptr_nonnull(d.base);
	ck_assert_int_eq(query_new(d.base, qstore, 4, MAXF, 0, done_fn, &d,
			     &qq),
	    0);

	/* While the store is busy: one runs (blocked), four (different)
	 * wait, the rest are refused; connection 2 closes and loses its
	 * jobs. */
	query_hold(qq, true);
	tu_sleep_ms(100);
	ck_assert_int_eq(query_submit(qq, 1, 0, &q), 0);
	query_dequeued(qq);
	for (i = 1; i < 8; i++) {
		int r;

		q.n = 3 + i;
		q.id = 1000 + i;
		r = query_submit(qq, i % 2 ? 2 : 1, i, &q);

		if (r == -EBUSY)
			busy++;
		else
			ck_assert_int_eq(r, 0);
	}
	ck_assert_uint_eq(busy, 3);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 4);
	query_cancel(qq, 2);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 2);
	d.want = 3;
	query_hold(qq, false);
	event_base_loopexit(d.base, &tv);
	event_base_dispatch(d.base);
	ck_assert_uint_eq(d.n, 3);
	for (i = 0; i < d.n; i++) {
		ck_assert_uint_eq(d.conn[i], 1);
		ck_assert_int_eq(d.status[i], VITALS__STATUS__STATUS_OK);
	}
	/* in submission order, each with its id */
	ck_assert_uint_eq(d.tag[0], 0);
	ck_assert_uint_eq(d.tag[1], 2);
	ck_assert_uint_eq(d.id[1], 1002);
	ck_assert_uint_eq(d.tag[2], 4);
	ck_assert_uint_eq(d.id[2], 1004);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries, 3);
	ck_assert_uint_gt(st.query_ns_max, 0);

	/* Cancelling what is not queued leaves a queue that still works. */
	query_cancel(qq, 1);
	query_cancel(qq, 77);
	ck_assert_int_eq(query_submit(qq, 5, 40, &q), 0);
	d.n = 0;
	d.want = 1;
	event_base_loopexit(d.base, &tv);
	event_base_dispatch(d.base);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_uint_eq(d.conn[0], 5);
	ck_assert_uint_eq(d.tag[0], 40);

	/* The same question joins the queued job: one run, an answer for
	 * each with its own id; a "now" range resolved 0.5 s later is the
	 * same, 2 s later is not; a closed connection leaves its job. */
	query_hold(qq, true);
	tu_sleep_ms(100);
	q.n = 99; /* the blocked one */
	ck_assert_int_eq(query_submit(qq, 10, 0, &q), 0);
	query_dequeued(qq);
	q.n = 5;
	q.relative = true;
	q.id = 111;
	ck_assert_int_eq(query_submit(qq, 11, 1, &q), 0);
	q.id = 112;
	q.from_wall_ns += SEC / 2;
	q.to_wall_ns += SEC / 2;
	ck_assert_int_eq(query_submit(qq, 12, 2, &q), 0);
	q.id = 0;
	ck_assert_int_eq(query_submit(qq, 13, 3, &q), 0);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 1);
	q.id = 114;
	q.from_wall_ns += 2 * SEC;
	q.to_wall_ns += 2 * SEC;
	ck_assert_int_eq(query_submit(qq, 14, 4, &q), 0);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 2);
	query_cancel(qq, 12);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 2);
	query_cancel(qq, 14); /* its job's only waiter: the job goes */
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_queued, 1);
	d.n = 0;
	d.want = 3;
	query_hold(qq, false);
	event_base_loopexit(d.base, &tv);
	event_base_dispatch(d.base);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_uint_eq(d.conn[1], 11);
	ck_assert_uint_eq(d.id[1], 111);
	ck_assert_uint_eq(d.tag[1], 1);
	ck_assert_uint_eq(d.conn[2], 13);
	ck_assert_uint_eq(d.id[2], 0);
	ck_assert_int_eq(d.status[2], VITALS__STATUS__STATUS_OK);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries, 6);
	ck_assert_uint_eq(st.queries_shared, 2);

	/* Just answered: an equal request is served from memory, with its
	 * own id; a different one, or after JOIN_SLACK (1 s), is not. */
	q.id = 4242;
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 0); /* +2.5 s */
	q.from_wall_ns -= 2 * SEC;
	q.to_wall_ns -= 2 * SEC;
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 1); /* +0.5 s */
	{
		Vitals__Response *resp = frame_unpack_response(frame + 4,
		    len - 4);

		ck_assert_ptr_nonnull(resp);
		ck_assert_uint_eq(resp->id, 4242);
		ck_assert_uint_eq(resp->top->n_tasks, 5);
		vitals__response__free_unpacked(resp, NULL);
		free(frame);
	}
	q.n = 6;
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 0);
	q.n = 5;
	tu_sleep_ms(1100);
	ck_assert_int_eq(query_cached(qq, &q, &frame, &len), 0);
	query_get_stats(qq, &st);
	ck_assert_uint_eq(st.queries_shared, 3);

	/* Stopping with work queued abandons it. */
	query_hold(qq, true);
	tu_sleep_ms(100);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(query_submit(qq, 9, i, &q), 0);
	query_free(qq);
	event_base_free(d.base);
}
END_TEST

static Suite *
rpc_suite(void)
{
	Suite *s = suite_create("rpc");
	TCase *tc;

	tc = tcase_create("roles");
	tcase_add_test(tc, test_role_defaults);
	tcase_add_test(tc, test_role_lists);
	tcase_add_test(tc, test_config_keys);
	suite_add_tcase(s, tc);

	tc = tcase_create("handle");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_no_role);
	tcase_add_test(tc, test_version_and_op);
	tcase_add_test(tc, test_burst_roles);
	tcase_add_test(tc, test_snapshot);
	tcase_add_test(tc, test_cache_top_clamp);
	tcase_add_test(tc, test_too_large);
	tcase_add_test(tc, test_reid);
	tcase_add_test(tc, test_health_dump);
	tcase_add_test(tc, test_query_validation);
	tcase_add_test(tc, test_range_before_1970);
	suite_add_tcase(s, tc);

	tc = tcase_create("query");
	tcase_add_checked_fixture(tc, q_setup, q_teardown);
	tcase_set_timeout(tc, 60); /* the store is held busy on purpose */
	tcase_add_test(tc, test_query_run);
	tcase_add_test(tc, test_query_quiet_process);
	tcase_add_test(tc, test_query_thread);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(rpc_suite());
}
