/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seed corpus of fuzz_store_blob, made by the encoders themselves:
 *   gen_store_blob DIR
 * writes one file per seed (the selector byte, then a frame or a payload;
 * fuzz/fuzz_store_blob.c) with window-like rows of every part, raw and
 * zstd frames, and the empty cases. Committed as fuzz/corpus/store_blob/.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_bpfrows.h"
#include "store/store_codec.h"
#include "store/store_kv.h"
#include "store/store_sys.h"
#include "store/store_tasks.h"
#include "store/store.h"
#include "wcpu/wcpu.h"
#include "wcpu_ref.h"

enum { SEL_FRAME, SEL_TASKS, SEL_KV, SEL_SYS, SEL_BPF };

static const char *dir;

static void
out(const char *name, unsigned sel, const struct store_enc *e)
{
	char path[4096];
	uint8_t s = (uint8_t)sel;
	FILE *f;

	if (e->err) {
		fprintf(stderr, "gen_store_blob: %s: %s\n", name,
		    strerror(-e->err));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fwrite(&s, 1, 1, f) != 1 ||
	    (e->b.len && fwrite(e->b.p, e->b.len, 1, f) != 1) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A payload as itself and in a raw and a zstd frame of its part, version
 * v. */
static void
emit_v(const char *name, unsigned sel, unsigned part, unsigned v,
    struct store_enc *p)
{
	struct store_enc e = { 0 };
	char n[256];

	out(name, sel, p);
	snprintf(n, sizeof(n), "frame_raw_%s", name);
	if (store_frame_put(&e, part, v, p->b.p, p->b.len) < 0)
		exit(1);
	out(n, SEL_FRAME, &e);
	store_enc_release(&e);
	snprintf(n, sizeof(n), "frame_zstd_%s", name);
	if (store_frame_put_zstd(&e, part, v, p->b.p, p->b.len, 3) < 0)
		exit(1);
	out(n, SEL_FRAME, &e);
	store_enc_release(&e);
	store_enc_release(p);
}

static void
emit(const char *name, unsigned sel, unsigned part, struct store_enc *p)
{
	emit_v(name, sel, part, 1, p);
}

static void
gen_tasks(size_t n, const char *name)
{
	struct window_task *t = calloc(n + 1, sizeof(*t));
	uint64_t *iid = calloc(n + 1, sizeof(*iid));
	struct store_enc e = { 0 };
	size_t i;

	if (t == NULL || iid == NULL)
		exit(1);
	for (i = 0; i < n; i++) {
		iid[i] = 1 + i * 3;
		t[i].d_utime = i % 7;
		t[i].d_stime = i % 3;
		t[i].d_minflt = i * 13;
		t[i].samples = 10;
		t[i].wall_ns = 10000008636ull;
		t[i].total_ticks = 2000;
		t[i].norm_ticks = 1000;
		if (i % 5 == 2) {
			t[i].samples = 4;
			t[i].wall_ns = 4000000001ull;
			t[i].norm_ticks = 1.0 / 3;
		}
		/* threads of a process share its RSS: version 3 refers
		 * back to the first row of each value */
		t[i].rss_pages_last = 990 + i / 3;
		t[i].rss_pages_max = t[i].rss_pages_last +
		    (i % 3 == 1 ? 10 : 0);
		t[i].born = i % 5 == 2;
		t[i].exited = i % 11 == 3;
	}
	if (store_tasks_put(&e, t, iid, n) < 0)
		exit(1);
	emit(name, SEL_TASKS, 0, &e);
	free(t);
	free(iid);
}

static void
gen_kv(void)
{
	struct store_kv_count c[12];
	struct store_kv_gauge g[6] = {
		{ 1, { .n = 0 } },
		{ 2,
		    { .n = 11,
			.min = 22549024,
			.max = 22586352,
			.sum = 248168748,
			.last = 22549024 } },
		{ 3,
		    { .n = 11,
			.min = 1.36,
			.max = 24.6,
			.sum = 168.22,
			.last = 24.6 } },
		{ 5, { .n = 10, .min = 2, .max = 2, .sum = 20, .last = 2 } },
		{ 8,
		    { .n = 3,
			.min = -0.0,
			.max = NAN,
			.sum = INFINITY,
			.last = -1 } },
		{ 40, { .n = 1, .min = -7, .max = -7, .sum = -7, .last = -7 } },
	};
	struct store_enc e = { 0 };
	size_t i;

	for (i = 0; i < 12; i++) {
		c[i].key = (uint32_t)(i * 2 + 1);
		c[i].value = i == 4 ? UINT64_MAX : i * 100003;
	}
	if (store_kv_put(&e, c, 12, g, 6) < 0)
		exit(1);
	emit("kv", SEL_KV, 1, &e);
	if (store_kv_put(&e, c, 0, g, 0) < 0)
		exit(1);
	emit("kv_empty", SEL_KV, 1, &e);
}

static void
gen_sys(void)
{
	struct store_sys_cpu c[4] = { 0 };
	struct store_sys_psi p[3] = { 0 };
	struct store_enc e = { 0 };
	size_t i;

	for (i = 0; i < 4; i++) {
		c[i].cpu = (int32_t)i - 1;
		c[i].c.d.user = 800 + i;
		c[i].c.d.system = 170 + i;
		c[i].c.d.idle = 14;
		c[i].c.samples = i == 3 ? 4 : 10;
		c[i].c.wall_ns = 10000008636ull;
		c[i].c.online_end = i != 2;
		c[i].c.max_khz = i ? 2400000 : -1;
		c[i].c.capacity = i ? 1024 : -1;
		if (i)
			c[i].c.cur_khz = (struct gauge){ .n = 10,
				.min = 1200000,
				.max = 2400000,
				.sum = 18000000,
				.last = 2400000 };
		if (i == 1)
			c[i].c.freq_ratio = (struct gauge){ .n = 10,
				.min = 0.5,
				.max = 1,
				.sum = 7.5,
				.last = 1 };
	}
	for (i = 0; i < 3; i++) {
		p[i].res = (uint32_t)i;
		p[i].p.available = true;
		p[i].p.have_full = i != 0;
		p[i].p.samples = 10;
		p[i].p.d_some_us = 9448802 * i;
		p[i].p.d_full_us = 302;
		p[i].p.some_avg10 = (struct gauge){ .n = 10,
			.min = 96.24,
			.max = 97.18,
			.sum = 967.5,
			.last = 96.78 };
		p[i].p.full_avg10 = (struct gauge){ .n = 10 };
	}
	if (store_sys_put(&e, c, 4, p, 3) < 0)
		exit(1);
	emit("sys", SEL_SYS, 2, &e);
}

/* Version 4 (written now): threads of two processes, one process their
 * sum (derived), one not, one without threads. */
static void
gen_bpf4(void)
{
	struct window_bpf_uid u[1] = { 0 };
	struct window_bpf_proc p[3] = { 0 };
	struct window_bpf_thread t[4] = { 0 };
	struct store_bpfrows b = { u, 1, p, 3, t, 4 };
	struct store_enc e = { 0 };
	size_t i, k;

	u[0].uid = 10001;
	u[0].oncpu_ns = 19705938577ull;
	u[0].rq_ns = 5000000;
	u[0].rq_hist[12] = u[0].rq_count = 3;
	for (i = 0; i < 4; i++) {
		t[i].tid = (int32_t)(6000 + i);
		t[i].tgid = i < 2 ? 6000 : 6002;
		t[i].uid = 10001;
		t[i].starttime = 5072691 + i;
		t[i].oncpu_ns = 80000000ull + 1234567 * i;
		t[i].rq_ns = 4828301844ull + 777 * i;
		for (k = 2; k < 17; k++)
			t[i].rq_count += t[i].rq_hist[k] = (uint32_t)(k *
			    (i + 1) % 31);
	}
	t[3].rq_count += 2;
	for (i = 0; i < 3; i++)
		p[i].tgid = (int32_t)(6000 + 2 * i);
	for (i = 0; i < 2; i++) {
		p[0].oncpu_ns += t[i].oncpu_ns;
		p[0].rq_ns += t[i].rq_ns;
		p[0].rq_count += t[i].rq_count;
		for (k = 0; k < VITALS_BPF_RQ_SLOTS; k++)
			p[0].rq_hist[k] += t[i].rq_hist[k];
	}
	p[1].oncpu_ns = 9795437;
	p[1].rq_count = p[1].rq_hist[3] = 1;
	p[2].flags = WBPF_PROC_EXITED;
	p[2].oncpu_ns = 5455364;
	if (store_bpfrows_put4(&e, &b) < 0)
		exit(1);
	emit_v("bpf4", SEL_BPF, STORE_BPFROWS_PART, STORE_BPFROWS_VERSION, &e);
}

static void
gen_bpf(void)
{
	struct window_bpf_uid u[3] = { 0 };
	struct window_bpf_proc p[5] = { 0 };
	struct store_enc e = { 0 };
	size_t i, k;

	for (i = 0; i < 3; i++) {
		u[i].uid = i ? (uint32_t)(10000 * i) : UINT32_MAX;
		u[i].oncpu_ns = 19705938577ull / (i + 1);
		u[i].exited_ns = 2231621251ull;
		u[i].exited_tasks = 198;
	}
	for (i = 0; i < 5; i++) {
		p[i].tgid = i ? (int32_t)(5852 + 12 * i) : -1;
		p[i].starttime = i ? 2395733 + i : 0;
		p[i].oncpu_ns = 335597887;
		p[i].rq_ns = 20723198016ull;
		p[i].rq_count = 425;
		for (k = 0; k < 18; k++)
			p[i].rq_hist[k] = (uint32_t)(k * (i + 1));
	}
	if (store_bpfrows_put(&e, u, 3, p, 5) < 0)
		exit(1);
	emit("bpf", SEL_BPF, 3, &e);
	/* the smallest rows there are */
	memset(p, 0, sizeof(p));
	if (store_bpfrows_put(&e, u, 0, p, 5) < 0)
		exit(1);
	emit("bpf_zero", SEL_BPF, 3, &e);
	gen_bpf4();
}

/*
 * The wcpu part (part 12) as version-2 frames: its rows named among
 * wcpu_ref's (the threads weighed at a quarter, so the differences from
 * the prediction are not all 0), and the same rows kept in full.
 */
static void
gen_wcpu(void)
{
	static struct wcpu_row procs[] = {
		{ 100, 100, 100, 440000000, 110000000 },
		{ 200, 200, 300, 50000000, 50000000 },
	};
	static struct wcpu_row threads[] = {
		{ 100, 100, 100, 300000000, 75000000 },
		{ 101, 100, 200, 100000000, 100000000 },
		{ 200, 200, 300, 50000000, 50000000 },
	};
	struct window_wcpu w = { .busy_ticks = 267,
		.wbusy = 166485040,
		.windows = 1,
		.drains = 5,
		.oncpu_ns = 490000000,
		.wtd_ns = 160000000,
		.nprocs = 2,
		.nthreads = 3,
		.procs = procs,
		.threads = threads };
	struct store_enc p = { 0 }, e = { 0 };

	store_wcpu_encode(&p, &w, &wcpu_ref);
	if (store_frame_put(&e, 12, 2, p.b.p, p.b.len) < 0)
		exit(1);
	out("frame_raw_wcpu_ref", SEL_FRAME, &e);
	store_enc_release(&e);
	store_enc_release(&p);
	store_wcpu_encode(&p, &w, NULL);
	if (store_frame_put_zstd(&e, 12, 2, p.b.p, p.b.len, 3) < 0)
		exit(1);
	out("frame_zstd_wcpu_own", SEL_FRAME, &e);
	store_enc_release(&e);
	store_enc_release(&p);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_store_blob DIR\n");
		return 2;
	}
	dir = argv[1];
	gen_tasks(0, "tasks_empty");
	gen_tasks(3, "tasks_3");
	gen_tasks(40, "tasks_40");
	gen_kv();
	gen_sys();
	gen_bpf();
	gen_wcpu();
	return 0;
}
