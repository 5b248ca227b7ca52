/* SPDX-License-Identifier: Apache-2.0 */
/* The synthetic window check_rpc* answer from (rpc_fix.h). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "rpc_fix.h"

#define SEC NSEC_PER_SEC

struct window_task
rpcfix_mktask(int32_t id, int32_t tgid, uint64_t cpu, const char *comm)
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
struct window *
rpcfix_window(uint64_t seq, int64_t wall_start_ns)
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
		t = rpcfix_mktask(i + 1, i + 1, 3 * (uint64_t)i, comm);
		ck_assert_int_eq(window_add_task(w, false, &t), 0);
		t = rpcfix_mktask(1000 + 2 * i, i + 1, (uint64_t)i, "worker");
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
		t = rpcfix_mktask(1001 + 2 * i, i + 1, 1, "helper");
		ck_assert_int_eq(window_add_task(w, true, &t), 0);
	}
	/* A comm of arbitrary bytes: never invalid UTF-8 on the wire. */
	t = rpcfix_mktask(99, 99, 0,
	    "\xff\xfe"
	    "ab\xc3");
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	return w;
}
