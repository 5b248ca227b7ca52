/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for every decoder of the store's blobs: the frame (raw
 * and zstd) and the payloads of the task rows, counters and gauges, CPU
 * and PSI rows and BPF rows (task rows: both versions; BPF rows: every
 * version, a payload alone tried as each). A blob comes back from the database file,
 * which a crash, a bad disk or another writer may have damaged.
 *
 * The first byte picks the decoder: 0 the frame (its payload then goes to
 * the part's decoder by the store's part numbers: STORE_*_PART), 1 to 4 a payload decoder on the rest
 * (a CRC the fuzzer cannot forge would otherwise hide them). Whatever
 * decodes must encode again and decode to the very same values; the BPF
 * rows' keys decoder (the span read's) must refuse exactly what the full
 * one refuses and give the same keys.
 */
#include <errno.h>
#include <stdbool.h>
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
#include "dmabuf/dmabuf.h"
#include "gpufreq/gpufreq.h"
#include "syscalls/sc_window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROWS_MAX 4096

enum { SEL_FRAME, SEL_TASKS, SEL_KV, SEL_SYS, SEL_BPF, SEL__MAX };

/* Whatever decodes as version v encodes as v again to the same rows. */
static void
tasks_v(unsigned v, const void *p, size_t n)
{
	struct window_task *t, *t2;
	uint64_t *iid, *iid2;
	struct store_enc e = { 0 };
	size_t k, k2;
	int r;

	if (store_tasks_get(p, n, v, ROWS_MAX, &t, &iid, &k) < 0)
		return;
	r = v == 1 ? store_tasks_put_v1(&e, t, iid, k) :
	    v == 2 ? store_tasks_put_v2(&e, t, iid, k) :
		     store_tasks_put(&e, t, iid, k);
	if (k > ROWS_MAX || r < 0 ||
	    store_tasks_get(e.b.p, e.b.len, v, ROWS_MAX, &t2, &iid2, &k2) < 0)
		abort();
	if (k2 != k ||
	    (k &&
		(memcmp(t, t2, k * sizeof(*t)) != 0 ||
		    memcmp(iid, iid2, k * sizeof(*iid)) != 0)))
		abort();
	free(t);
	free(iid);
	free(t2);
	free(iid2);
	store_enc_release(&e);
}

static void
tasks(const void *p, size_t n)
{
	tasks_v(1, p, n);
	tasks_v(2, p, n);
	tasks_v(3, p, n);
}

static void
kv_v(unsigned v, const void *p, size_t n)
{
	struct store_kv a, b;
	struct store_enc e = { 0 };
	int r;

	if (store_kv_get(p, n, v, ROWS_MAX, &a) < 0)
		return;
	r = v == 1 ? store_kv_put_v1(&e, a.count, a.ncount, a.gauge, a.ngauge) :
		     store_kv_put(&e, a.count, a.ncount, a.gauge, a.ngauge);
	if (a.ncount > ROWS_MAX || a.ngauge > ROWS_MAX || r < 0 ||
	    store_kv_get(e.b.p, e.b.len, v, ROWS_MAX, &b) < 0)
		abort();
	if (b.ncount != a.ncount || b.ngauge != a.ngauge ||
	    (a.ncount &&
		memcmp(a.count, b.count, a.ncount * sizeof(*a.count))) ||
	    (a.ngauge && memcmp(a.gauge, b.gauge, a.ngauge * sizeof(*a.gauge))))
		abort();
	store_kv_release(&a);
	store_kv_release(&b);
	store_enc_release(&e);
}

static void
kv(const void *p, size_t n)
{
	kv_v(1, p, n);
	kv_v(2, p, n);
}

static void
sys(const void *p, size_t n)
{
	struct store_sys a, b;
	struct store_enc e = { 0 };

	if (store_sys_get(p, n, ROWS_MAX, &a) < 0)
		return;
	if (a.ncpu > ROWS_MAX || a.npsi > ROWS_MAX ||
	    store_sys_put(&e, a.cpu, a.ncpu, a.psi, a.npsi) < 0 ||
	    store_sys_get(e.b.p, e.b.len, ROWS_MAX, &b) < 0)
		abort();
	if (b.ncpu != a.ncpu || b.npsi != a.npsi ||
	    (a.ncpu && memcmp(a.cpu, b.cpu, a.ncpu * sizeof(*a.cpu))) ||
	    (a.npsi && memcmp(a.psi, b.psi, a.npsi * sizeof(*a.psi))))
		abort();
	store_sys_release(&a);
	store_sys_release(&b);
	store_enc_release(&e);
}

static bool
bpf_eq(const struct store_bpfrows *a, const struct store_bpfrows *b)
{
	return a->nuid == b->nuid && a->nproc == b->nproc &&
	    a->nthread == b->nthread &&
	    !(a->nuid && memcmp(a->uid, b->uid, a->nuid * sizeof(*a->uid))) &&
	    !(a->nproc &&
		memcmp(a->proc, b->proc, a->nproc * sizeof(*a->proc))) &&
	    !(a->nthread &&
		memcmp(a->thread, b->thread, a->nthread * sizeof(*a->thread)));
}

/* The keys alone (store_bpfkeys.c, the span read's decoder): refused
 * exactly when the full decoder refuses (r), else the same keys. */
static void
bpf_keys(unsigned v, const void *p, size_t n, int r,
    const struct store_bpfrows *a)
{
	struct store_bpfkeys k;
	int rk = store_bpfrows_keys(p, n, v, ROWS_MAX, &k);
	size_t i;

	if (rk == -ENOMEM || r == -ENOMEM) {
		if (rk == 0)
			store_bpfkeys_release(&k);
		return;
	}
	if (rk != r)
		abort();
	if (r < 0)
		return;
	if (k.nproc != a->nproc || k.nthread != a->nthread)
		abort();
	for (i = 0; i < a->nproc; i++)
		if (k.proc[i].id != a->proc[i].tgid ||
		    k.proc[i].tgid != a->proc[i].tgid ||
		    k.proc[i].starttime != a->proc[i].starttime ||
		    k.proc[i].oncpu_ns != a->proc[i].oncpu_ns)
			abort();
	for (i = 0; i < a->nthread; i++)
		if (k.thread[i].id != a->thread[i].tid ||
		    k.thread[i].tgid != a->thread[i].tgid ||
		    k.thread[i].starttime != a->thread[i].starttime ||
		    k.thread[i].oncpu_ns != a->thread[i].oncpu_ns)
			abort();
	store_bpfkeys_release(&k);
}

/* Whatever decodes as version v encodes as v again to the same rows, and
 * as the version written now (which holds any rows) too; the keys
 * decoder agrees with it either way. */
static void
bpf_v(unsigned v, const void *p, size_t n)
{
	struct store_bpfrows a, b;
	struct store_enc e = { 0 };
	int r;

	r = store_bpfrows_get_v(p, n, v, ROWS_MAX, &a);
	bpf_keys(v, p, n, r, &a);
	if (r < 0)
		return;
	if (a.nuid > ROWS_MAX || a.nproc > ROWS_MAX || a.nthread > ROWS_MAX)
		abort();
	r = v == STORE_BPFROWS_V1 ?
	    store_bpfrows_put(&e, a.uid, a.nuid, a.proc, a.nproc) :
	    v == STORE_BPFROWS_V2 ? store_bpfrows_put2(&e, &a) :
	    v == STORE_BPFROWS_V3 ? store_bpfrows_put3(&e, &a) :
				    store_bpfrows_put4(&e, &a);
	if (r < 0 || store_bpfrows_get_v(e.b.p, e.b.len, v, ROWS_MAX, &b) < 0 ||
	    !bpf_eq(&a, &b))
		abort();
	store_bpfrows_release(&b);
	store_enc_release(&e);
	if (store_bpfrows_put4(&e, &a) < 0 ||
	    store_bpfrows_get_v(e.b.p, e.b.len, STORE_BPFROWS_VERSION, ROWS_MAX,
		&b) < 0 ||
	    !bpf_eq(&a, &b))
		abort();
	store_bpfrows_release(&a);
	store_bpfrows_release(&b);
	store_enc_release(&e);
}

/* A payload alone: every version of it. */
static void
bpf(const void *p, size_t n)
{
	unsigned v;

	for (v = STORE_BPFROWS_V1; v <= STORE_BPFROWS_VERSION; v++)
		bpf_v(v, p, n);
}

/* the capacity-weighted CPU part (store_wcpu.c), framed as part 12: what
 * decodes (with the rows above at hand) encodes again to the same part */
static void
wcpu(unsigned version, const void *p, size_t n)
{
	struct window_wcpu *a = NULL, *b = NULL;
	struct store_enc e = { 0 };

	if (store_wcpu_decode(p, n, version, &wcpu_ref, &a) < 0)
		return;
	/* the same rows as keys alone (the span read's reference) */
	{
		struct store_bpfkey kp[3], kt[4];
		struct store_bpfkeys k = { kp, 3, kt, 4 };
		struct store_wcpu_ref kr = { .keys = &k };
		size_t i;

		for (i = 0; i < 3; i++)
			kp[i] = (struct store_bpfkey){ wcpu_procs[i].tgid,
				wcpu_procs[i].tgid, wcpu_procs[i].starttime,
				wcpu_procs[i].oncpu_ns };
		for (i = 0; i < 4; i++)
			kt[i] = (struct store_bpfkey){ wcpu_threads[i].tid,
				wcpu_threads[i].tgid, wcpu_threads[i].starttime,
				wcpu_threads[i].oncpu_ns };
		if (store_wcpu_decode(p, n, version, &kr, &b) < 0 ||
		    b->nprocs != a->nprocs || b->nthreads != a->nthreads ||
		    (a->nprocs &&
			memcmp(a->procs, b->procs,
			    a->nprocs * sizeof(*a->procs))) ||
		    (a->nthreads &&
			memcmp(a->threads, b->threads,
			    a->nthreads * sizeof(*a->threads))))
			abort();
		window_wcpu_free(b);
		b = NULL;
	}
	store_wcpu_encode(&e, a, &wcpu_ref);
	if (e.err || store_wcpu_decode(e.b.p, e.b.len, 2, &wcpu_ref, &b) < 0)
		abort();
	if (b->nprocs != a->nprocs || b->nthreads != a->nthreads ||
	    b->wbusy != a->wbusy || b->wtd_ns != a->wtd_ns ||
	    (a->nprocs &&
		memcmp(a->procs, b->procs, a->nprocs * sizeof(*a->procs))) ||
	    (a->nthreads &&
		memcmp(a->threads, b->threads,
		    a->nthreads * sizeof(*a->threads))))
		abort();
	window_wcpu_free(a);
	window_wcpu_free(b);
	store_enc_release(&e);
}

/* the DMA-BUF part (store_dmabuf.c), framed as part 20 */
static void
dmabuf(const void *p, size_t n)
{
	struct window_dmabuf *a = NULL, *b = NULL;
	struct store_enc e = { 0 };

	if (store_dmabuf_decode(p, n, &a) < 0)
		return;
	store_dmabuf_encode(&e, a);
	if (e.err || store_dmabuf_decode(e.b.p, e.b.len, &b) < 0)
		abort();
	if (b->nprocs != a->nprocs || b->nexps != a->nexps ||
	    b->nshared != a->nshared || b->total_bytes != a->total_bytes ||
	    (a->nprocs &&
		memcmp(a->procs, b->procs, a->nprocs * sizeof(*a->procs))) ||
	    (a->nshared &&
		memcmp(a->shared, b->shared, a->nshared * sizeof(*a->shared))))
		abort();
	window_dmabuf_free(a);
	window_dmabuf_free(b);
	store_enc_release(&e);
}

/* the GPU frequency part (store_gpufreq.c), framed as part 22 */
static void
gpufreq(const void *p, size_t n)
{
	struct window_gpufreq *a = NULL, *b = NULL;
	struct store_enc e = { 0 };

	if (store_gpufreq_decode(p, n, &a) < 0)
		return;
	store_gpufreq_encode(&e, a);
	if (e.err || store_gpufreq_decode(e.b.p, e.b.len, &b) < 0)
		abort();
	if (b->ndev != a->ndev || b->reads != a->reads ||
	    b->read_ns != a->read_ns ||
	    (a->ndev && memcmp(a->dev, b->dev, a->ndev * sizeof(*a->dev))))
		abort();
	window_gpufreq_free(a);
	window_gpufreq_free(b);
	store_enc_release(&e);
}

/* the syscall part (store_syscalls.c), framed as part 23: what decodes
 * encodes to a payload that decodes to the same part */
static void
syscalls(const void *p, size_t n)
{
	struct window_syscalls *a = NULL, *b = NULL;
	struct store_enc e = { 0 };

	if (store_syscalls_decode(p, n, &a) < 0)
		return;
	store_syscalls_encode(&e, a);
	if (e.err || store_syscalls_decode(e.b.p, e.b.len, &b) < 0)
		abort();
	if (b->nrows != a->nrows || b->nslow != a->nslow ||
	    b->state != a->state || b->other_rows != a->other_rows ||
	    memcmp(&b->other, &a->other, sizeof(a->other)) ||
	    (a->nrows &&
		memcmp(a->rows, b->rows, a->nrows * sizeof(*a->rows))) ||
	    (a->nslow && memcmp(a->slow, b->slow, a->nslow * sizeof(*a->slow))))
		abort();
	window_syscalls_free(a);
	window_syscalls_free(b);
	store_enc_release(&e);
}

static void (*const parts[])(const void *, size_t) = { tasks, kv, sys, bpf };

static void
frame(const uint8_t *p, size_t n)
{
	struct store_frame f, g;
	struct store_enc e = { 0 };

	if (store_frame_get(p, n, &f) < 0)
		return;
	if (f.len > STORE_FRAME_MAX || f.stored > n ||
	    f.codec >= STORE_CODEC__MAX ||
	    (f.codec == STORE_CODEC_RAW) != (f.buf == NULL))
		abort();
	/* the part the store keeps under that number, else by its residue */
	switch (f.part) {
	case STORE_TASKS_PART:
		tasks_v(f.version, f.payload, f.len);
		break;
	case STORE_KV_PART:
		kv_v(f.version, f.payload, f.len);
		break;
	case STORE_SYS_PART:
		sys(f.payload, f.len);
		break;
	case STORE_BPFROWS_PART:
		bpf_v(f.version, f.payload, f.len);
		break;
	case 12: /* WCPU_PART */
		wcpu(f.version, f.payload, f.len);
		break;
	case 20: /* DMABUF_PART */
		dmabuf(f.payload, f.len);
		break;
	case 22: /* GPUFREQ_PART */
		gpufreq(f.payload, f.len);
		break;
	case 23: /* SC_PART */
		syscalls(f.payload, f.len);
		break;
	default:
		parts[f.part % 4](f.payload, f.len);
		break;
	}
	/* framed again, compressed or not, it reads back the same */
	if (store_frame_put_zstd(&e, f.part, f.version, f.payload, f.len, 1) <
		0 ||
	    store_frame_get(e.b.p, e.b.len, &g) < 0)
		abort();
	if (g.part != f.part || g.version != f.version || g.len != f.len ||
	    (f.len && memcmp(g.payload, f.payload, f.len) != 0))
		abort();
	store_frame_release(&g);
	store_frame_release(&f);
	store_enc_release(&e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % SEL__MAX) {
	case SEL_FRAME:
		frame(data + 1, size - 1);
		break;
	default:
		parts[data[0] % SEL__MAX - 1](data + 1, size - 1);
		break;
	}
	return 0;
}
