/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity-weighted CPU (daemon/wcpu): the frequency scale, the reduction
 * of a BPF drain into process and thread rows, a task's figure from its
 * own rows or the window's approximation, roll-up merges and their bound,
 * the store codec, a damaged blob counted, and top --weighted through the
 * store and the wire.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_int.h"
#include "store/store_bpfrows.h"
#include "store/store_codec.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define T0 (1699999800LL * NSEC_PER_SEC)
#define MS 1000000ULL

START_TEST(test_fscale)
{
	/* cur × 1024 / max, rounded down, as arch_topology.c makes it */
	ck_assert_uint_eq(wcpu_fscale(691200, 1804800), 392);
	ck_assert_uint_eq(wcpu_fscale(2419200, 2419200), 1024);
	ck_assert_uint_eq(wcpu_fscale(931200, 1804800), 528);
	/* unknown maximum: 1024 */
	ck_assert_uint_eq(wcpu_fscale(1000, -1), WCPU_SCALE);
	ck_assert_uint_eq(wcpu_fscale(1000, 0), WCPU_SCALE);
	/* a current above the maximum reads as the maximum */
	ck_assert_uint_eq(wcpu_fscale(3000000, 2419200), WCPU_SCALE);
	ck_assert_uint_eq(wcpu_fscale(1e12, 1), WCPU_SCALE);
	ck_assert_str_eq(wcpu_src_name(WCPU_SRC_BPF), "bpf");
	ck_assert_str_eq(wcpu_src_name(WCPU_SRC_APPROX), "approx");
}
END_TEST

/* Two threads of pid 100, one of pid 200, one thread of 100 exited. */
static void
mkbatch(struct bpf_sched_batch *b, struct vbpf_tid *t, struct vbpf_proc *p)
{
	memset(b, 0, sizeof(*b));
	memset(t, 0, 3 * sizeof(*t));
	memset(p, 0, 2 * sizeof(*p));
	/* 300 ms on a little core at max (325/1024) ... */
	t[0] = (struct vbpf_tid){ .tid = 100,
		.tgid = 100,
		.start_ns = SEC,
		.leader_ns = SEC,
		.oncpu_ns = 300 * MS,
		.wtd_ns = 300 * MS * 325 / 1024 };
	/* ... 100 ms on the prime core at max: 1024/1024 */
	t[1] = (struct vbpf_tid){ .tid = 101,
		.tgid = 100,
		.start_ns = 2 * SEC,
		.leader_ns = SEC,
		.oncpu_ns = 100 * MS,
		.wtd_ns = 100 * MS };
	t[2] = (struct vbpf_tid){ .tid = 200,
		.tgid = 200,
		.start_ns = 3 * SEC,
		.leader_ns = 3 * SEC,
		.oncpu_ns = 50 * MS,
		.wtd_ns = 25 * MS };
	/* an exited thread of 100: 40 ms, weighted 10 ms */
	p[0] = (struct vbpf_proc){ .tgid = 100,
		.start_ns = SEC,
		.exited_ns = 40 * MS,
		.exited_wtd_ns = 10 * MS };
	/* a process with run-queue figures alone adds no row */
	p[1] = (struct vbpf_proc){ .tgid = 300, .start_ns = SEC, .rq_ns = 5 };
	b->tids = t;
	b->ntids = 3;
	b->procs = p;
	b->nprocs = 2;
}

START_TEST(test_bpf_rows)
{
	struct bpf_sched_batch b;
	struct vbpf_tid t[3];
	struct vbpf_proc p[2];
	struct window_wcpu *w = window_wcpu_new();
	const struct wcpu_row *r;
	unsigned src;
	double v;

	ck_assert_ptr_nonnull(w);
	mkbatch(&b, t, p);
	ck_assert_int_eq(wcpu_bpf_add(w, &b, 100, 7, 9), 0);
	ck_assert_uint_eq(w->drains, 1);
	ck_assert_uint_eq(w->nprocs, 2);
	ck_assert_uint_eq(w->nthreads, 3);
	ck_assert_uint_eq(w->oncpu_ns, 490 * MS);
	ck_assert_uint_eq(w->wtd_ns, 300 * MS * 325 / 1024 + 135 * MS);
	ck_assert_uint_eq(w->nocap_ns, 7);
	ck_assert_uint_eq(w->nofreq_ns, 9);
	/* pid 100, starttime 1 s = 100 ticks: its threads and the exited */
	ck_assert_ptr_nonnull(r = wcpu_find(w, false, 100, 100));
	ck_assert_uint_eq(r->oncpu_ns, 440 * MS);
	ck_assert_uint_eq(r->wtd_ns, 95214843 + 100 * MS + 10 * MS);
	ck_assert_ptr_null(wcpu_find(w, false, 100, 101));
	ck_assert_ptr_null(wcpu_find(w, false, 300, 100));
	/* thread 101, started at 2 s */
	ck_assert_ptr_nonnull(r = wcpu_find(w, true, 101, 200));
	ck_assert_uint_eq(r->wtd_ns, 100 * MS);
	/* a task's ticks weighted by its own slices: 44 × 205.2/440 */
	v = wcpu_task(w, false, 100, 100, 44, &src);
	ck_assert_uint_eq(src, WCPU_SRC_BPF);
	ck_assert_double_eq_tol(v, 44.0 * 205214843.0 / 440e6, 1e-9);
	v = wcpu_task(w, true, 200, 300, 5, &src);
	ck_assert_uint_eq(src, WCPU_SRC_BPF);
	ck_assert_double_eq_tol(v, 2.5, 1e-12);
	/* no row: the window's approximation (nothing busy: 1) */
	v = wcpu_task(w, false, 999, 1, 10, &src);
	ck_assert_uint_eq(src, WCPU_SRC_APPROX);
	ck_assert_double_eq(v, 10.0);
	/* no part: no figure */
	ck_assert_double_eq(wcpu_task(NULL, false, 100, 100, 44, &src), 0);
	ck_assert_uint_eq(src, WCPU_SRC_NONE);

	/* the platform loader's read-only drains weigh nothing */
	b.diff = true;
	ck_assert_int_eq(wcpu_bpf_add(w, &b, 100, 1, 1), 0);
	ck_assert_uint_eq(w->drains, 1);
	ck_assert_uint_eq(w->oncpu_ns, 490 * MS);
	window_wcpu_free(w);
}
END_TEST

/*
 * wcpu_keep_bpf_rows: the part keeps the rows the window's BPF part kept
 * (a bound of bpf_threads or bpf_procs folded the others into its "other"
 * rows); the rest are counted as cut, the totals stay. Without the BPF
 * part's rows nothing changes.
 */
START_TEST(test_keep_bpf_rows)
{
	struct bpf_sched_batch b;
	struct vbpf_tid t[3];
	struct vbpf_proc p[2];
	struct window_wcpu *w = window_wcpu_new();
	struct window_bpf *s = calloc(1, sizeof(*s));
	unsigned src;

	ck_assert(w && s);
	mkbatch(&b, t, p);
	ck_assert_int_eq(wcpu_bpf_add(w, &b, 100, 0, 0), 0);
	ck_assert_uint_eq(w->nthreads, 3);
	ck_assert_uint_eq(w->nprocs, 2);

	/* no rows (a head-only part, drained), no part: nothing cut */
	s->head_only = true;
	s->drains = 1;
	wcpu_keep_bpf_rows(w, s);
	wcpu_keep_bpf_rows(w, NULL);
	ck_assert_uint_eq(w->nthreads, 3);
	ck_assert_uint_eq(w->nprocs, 2);

	/* the BPF part kept thread 101 and process 100 (starttimes in
	 * ticks: 2 s and 1 s at 100 Hz), a thread and a process "other" */
	s->head_only = false;
	ck_assert_int_eq(window_bpf_reserve(s, 0, 2, 2), 0);
	s->proc[s->nprocs++] = (struct window_bpf_proc){ .tgid = 100,
		.starttime = 100 };
	s->proc[s->nprocs++] = (struct window_bpf_proc){ .tgid = -1 };
	s->thread[s->nthreads++] = (struct window_bpf_thread){ .tid = 101,
		.tgid = 100,
		.starttime = 200 };
	s->thread[s->nthreads++] = (struct window_bpf_thread){ .tid = -1,
		.tgid = -1 };
	/* ... from no drain (its rows found no memory): nothing cut */
	s->drains = 0;
	wcpu_keep_bpf_rows(w, s);
	ck_assert_uint_eq(w->nthreads, 3);
	ck_assert_uint_eq(w->nprocs, 2);
	s->drains = 1;
	wcpu_keep_bpf_rows(w, s);
	ck_assert_uint_eq(w->nthreads, 1);
	ck_assert_uint_eq(w->threads_cut, 2);
	ck_assert_ptr_nonnull(wcpu_find(w, true, 101, 200));
	ck_assert_ptr_null(wcpu_find(w, true, 100, 100));
	ck_assert_ptr_null(wcpu_find(w, true, 200, 300));
	ck_assert_uint_eq(w->nprocs, 1);
	ck_assert_uint_eq(w->procs_cut, 1);
	ck_assert_ptr_nonnull(wcpu_find(w, false, 100, 100));
	ck_assert_ptr_null(wcpu_find(w, false, 200, 300));
	/* the totals keep every drained ns */
	ck_assert_uint_eq(w->oncpu_ns, 490 * MS);
	/* a cut task is weighted by the approximation */
	(void)wcpu_task(w, false, 200, 300, 5, &src);
	ck_assert_uint_eq(src, WCPU_SRC_APPROX);
	window_bpf_release(s);
	free(s);
	window_wcpu_free(w);
}
END_TEST

START_TEST(test_merge_bound)
{
	struct bpf_sched_batch b;
	struct vbpf_tid t[3];
	struct vbpf_proc p[2];
	struct window_wcpu *a = window_wcpu_new(), *c = window_wcpu_new();
	struct window_wcpu *big = window_wcpu_new();
	void *acc;
	size_t i;

	mkbatch(&b, t, p);
	ck_assert_int_eq(wcpu_bpf_add(a, &b, 100, 0, 0), 0);
	ck_assert_int_eq(wcpu_bpf_add(c, &b, 100, 0, 0), 0);
	a->busy_ticks = 10;
	a->wbusy = 5 * (uint64_t)WCPU_ONE;
	c->busy_ticks = 30;
	c->wbusy = 30 * (uint64_t)WCPU_ONE;
	acc = window_wcpu_dup(a);
	ck_assert_int_eq(wcpu_window_part.merge(&acc, c), 0);
	a = (window_wcpu_free(a), acc);
	ck_assert_uint_eq(a->drains, 2);
	ck_assert_uint_eq(a->nprocs, 2);
	ck_assert_uint_eq(wcpu_find(a, false, 100, 100)->oncpu_ns, 880 * MS);
	/* (5 + 30) / 40 */
	ck_assert_double_eq_tol(wcpu_approx_factor(a), 35.0 / 40.0, 1e-15);

	/* past the bound: the busiest kept, the rest counted */
	big->nprocs = WCPU_PROCS_MAX;
	big->procs = calloc(WCPU_PROCS_MAX, sizeof(*big->procs));
	ck_assert_ptr_nonnull(big->procs);
	for (i = 0; i < WCPU_PROCS_MAX; i++)
		big->procs[i] = (struct wcpu_row){ .id = 1000 + (int32_t)i,
			.starttime = 1,
			.oncpu_ns = 1000 + i,
			.wtd_ns = 1 };
	acc = a;
	ck_assert_int_eq(wcpu_window_part.merge(&acc, big), 0);
	ck_assert_uint_eq(a->nprocs, WCPU_PROCS_MAX);
	ck_assert_uint_eq(a->procs_cut, 2);
	/* the two smallest of big went; pid 100 and 200 stayed */
	ck_assert_ptr_nonnull(wcpu_find(a, false, 100, 100));
	ck_assert_ptr_nonnull(wcpu_find(a, false, 200, 300));
	ck_assert_ptr_null(wcpu_find(a, false, 1000, 1));
	ck_assert_ptr_null(wcpu_find(a, false, 1001, 1));
	ck_assert_ptr_nonnull(wcpu_find(a, false, 1002, 1));
	window_wcpu_free(a);
	window_wcpu_free(c);
	window_wcpu_free(big);
}
END_TEST

START_TEST(test_codec)
{
	struct bpf_sched_batch b;
	struct vbpf_tid t[3];
	struct vbpf_proc p[2];
	struct window_wcpu *w = window_wcpu_new(), *r = NULL;
	struct store_enc e = { 0 };

	mkbatch(&b, t, p);
	ck_assert_int_eq(wcpu_bpf_add(w, &b, 100, 3, 4), 0);
	w->busy_ticks = 267;
	w->wbusy = 166485040;
	w->nocap_ticks = 1;
	w->nofreq_ticks = 58;
	w->windows = 1;
	w->threads_cut = 5;
	store_wcpu_encode(&e, w, NULL);
	ck_assert_int_eq(e.err, 0);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &r), 0);
	ck_assert_uint_eq(r->busy_ticks, 267);
	ck_assert_uint_eq(r->wbusy, 166485040);
	ck_assert_uint_eq(r->nofreq_ticks, 58);
	ck_assert_uint_eq(r->nocap_ns, 3);
	ck_assert_uint_eq(r->threads_cut, 5);
	ck_assert_uint_eq(r->nprocs, w->nprocs);
	ck_assert_uint_eq(r->nthreads, w->nthreads);
	ck_assert_mem_eq(r->procs, w->procs, w->nprocs * sizeof(*w->procs));
	ck_assert_mem_eq(r->threads, w->threads,
	    w->nthreads * sizeof(*w->threads));
	window_wcpu_free(r);
	/* cut short, or a byte more: refused */
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len - 1, 2, NULL, &r),
	    -EBADMSG);
	/* a version this build does not know */
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 3, NULL, &r),
	    -EBADMSG);
	store_enc_u(&e, 1);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &r),
	    -EBADMSG);
	store_enc_release(&e);

	/* an own row's tgid offset far out of range: refused, and no
	 * overflow computing it (UBSan builds) */
	memset(&e, 0, sizeof(e));
	{
		unsigned k;

		for (k = 0; k < 12; k++)
			store_enc_u(&e, 0);
		store_enc_u(&e, 0); /* processes: own rows */
		store_enc_u(&e, 1);
		store_enc_s(&e, 5);
		store_enc_s(&e, INT64_MIN);
		store_enc_s(&e, 0);
		store_enc_u(&e, 0);
		store_enc_s(&e, 0);
		store_enc_u(&e, 0); /* threads: none */
		store_enc_u(&e, 0);
		ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &r),
		    -EBADMSG);
	}
	store_enc_release(&e);

	/* version 1 (older stores) still reads, row for row */
	memset(&e, 0, sizeof(e));
	store_wcpu_encode_v1(&e, w);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 1, NULL, &r), 0);
	ck_assert_uint_eq(r->nthreads, w->nthreads);
	ck_assert_mem_eq(r->threads, w->threads,
	    w->nthreads * sizeof(*w->threads));
	ck_assert_mem_eq(r->procs, w->procs, w->nprocs * sizeof(*w->procs));
	window_wcpu_free(r);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len - 1, 1, NULL, &r),
	    -EBADMSG);
	store_enc_release(&e);

	/* rows out of order (wcpu_find bisects): refused, either version */
	memset(&e, 0, sizeof(e));
	w->procs[0].id = 500;
	store_wcpu_encode(&e, w, NULL);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &r),
	    -EBADMSG);
	store_enc_release(&e);
	memset(&e, 0, sizeof(e));
	store_wcpu_encode_v1(&e, w);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 1, NULL, &r),
	    -EBADMSG);
	store_enc_release(&e);
	window_wcpu_free(w);
}
END_TEST

/*
 * BPF rows as the sched part would hold them for mkbatch's drain: the
 * processes 100 (its threads and its exited one: 440 ms) and 200, the
 * threads 100, 101 and 200, in an order of their own (the codec sorts);
 * and the "other" rows a blob carries, which no wcpu row names.
 */
static void
mkref(struct window_bpf_proc *p, struct window_bpf_thread *t)
{
	memset(p, 0, 3 * sizeof(*p));
	memset(t, 0, 4 * sizeof(*t));
	p[0] = (struct window_bpf_proc){ .tgid = 200,
		.starttime = 300,
		.oncpu_ns = 50 * MS };
	p[1] = (struct window_bpf_proc){ .tgid = 100,
		.starttime = 100,
		.oncpu_ns = 440 * MS };
	p[2] = (struct window_bpf_proc){ .tgid = -1, .oncpu_ns = 7 };
	t[0] = (struct window_bpf_thread){ .tid = 101,
		.tgid = 100,
		.starttime = 200,
		.oncpu_ns = 100 * MS };
	t[1] =
	    (struct window_bpf_thread){ .tid = -1, .tgid = -1, .oncpu_ns = 7 };
	t[2] = (struct window_bpf_thread){ .tid = 200,
		.tgid = 200,
		.starttime = 300,
		.oncpu_ns = 50 * MS };
	t[3] = (struct window_bpf_thread){ .tid = 100,
		.tgid = 100,
		.starttime = 100,
		.oncpu_ns = 300 * MS };
}

/* Version 2 names the BPF part's rows: the same figures in fewer bytes,
 * and only with the same rows at hand. */
START_TEST(test_codec_ref)
{
	struct bpf_sched_batch b;
	struct vbpf_tid t[3];
	struct vbpf_proc p[2];
	struct window_bpf_proc bp[3];
	struct window_bpf_thread bt[4];
	struct store_wcpu_ref ref = { bp, 3, bt, 4, NULL }, less;
	struct window_wcpu *w = window_wcpu_new(), *r = NULL;
	struct store_enc own = { 0 }, e = { 0 }, v1 = { 0 };

	mkbatch(&b, t, p);
	mkref(bp, bt);
	ck_assert_int_eq(wcpu_bpf_add(w, &b, 100, 0, 0), 0);
	ck_assert_uint_eq(w->nprocs, 2);
	ck_assert_uint_eq(w->nthreads, 3);
	store_wcpu_encode(&own, w, NULL);
	store_wcpu_encode(&e, w, &ref);
	store_wcpu_encode_v1(&v1, w);
	ck_assert_int_eq(e.err, 0);
	/* keys and on-CPU times left to the reference: 5 rows × ≥ 5 bytes;
	 * and version 2's own rows no longer than version 1's */
	ck_assert_uint_le(e.b.len + 25, own.b.len);
	ck_assert_uint_le(own.b.len, v1.b.len);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, &ref, &r), 0);
	ck_assert_uint_eq(r->nprocs, w->nprocs);
	ck_assert_uint_eq(r->nthreads, w->nthreads);
	ck_assert_mem_eq(r->procs, w->procs, w->nprocs * sizeof(*w->procs));
	ck_assert_mem_eq(r->threads, w->threads,
	    w->nthreads * sizeof(*w->threads));
	ck_assert_uint_eq(r->wtd_ns, w->wtd_ns);
	window_wcpu_free(r);
	store_enc_release(&e);
	/* more BPF rows than wcpu ones (a process that only waited): the
	 * wcpu rows are named among them, by the gaps between */
	{
		struct window_bpf_proc more[4];
		struct store_wcpu_ref mref = { more, 4, bt, 4, NULL };

		memcpy(more, bp, sizeof(bp));
		more[3] = (struct window_bpf_proc){ .tgid = 150,
			.starttime = 7,
			.rq_ns = 5,
			.rq_count = 1 };
		memset(&e, 0, sizeof(e));
		store_wcpu_encode(&e, w, &mref);
		ck_assert_uint_le(e.b.len + 25, own.b.len);
		ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, &mref,
				     &r),
		    0);
		ck_assert_mem_eq(r->procs, w->procs,
		    w->nprocs * sizeof(*w->procs));
		window_wcpu_free(r);
		/* read against the rows without it: process 200 is then
		 * past the end */
		ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, &ref, &r),
		    -EBADMSG);
		store_enc_release(&e);
	}
	memset(&e, 0, sizeof(e));
	store_wcpu_encode(&e, w, &ref);
	/* without the rows, or with fewer of them: refused */
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &r),
	    -ENODATA);
	ck_assert_ptr_null(r);
	less = ref;
	less.nthread = 3; /* thread 100 missing */
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, &less, &r),
	    -EBADMSG);
	/* two BPF rows of one key: no payload can name them */
	bt[2].tid = 101;
	bt[2].starttime = 200;
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, &ref, &r),
	    -EBADMSG);
	store_enc_release(&e);
	/* threads that are not the BPF ones (one on-CPU time differs): the
	 * threads kept in full, the processes still named */
	mkref(bp, bt);
	bt[0].oncpu_ns++;
	memset(&e, 0, sizeof(e));
	store_wcpu_encode(&e, w, &ref);
	ck_assert_uint_gt(e.b.len, 40);
	ck_assert_uint_lt(e.b.len, own.b.len);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &r),
	    -ENODATA);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, &ref, &r), 0);
	ck_assert_mem_eq(r->threads, w->threads,
	    w->nthreads * sizeof(*w->threads));
	ck_assert_mem_eq(r->procs, w->procs, w->nprocs * sizeof(*w->procs));
	window_wcpu_free(r);
	store_enc_release(&e);
	/* a process's start differs too: every row in full, as without a
	 * reference, and they read back without one */
	bp[0].starttime++;
	memset(&e, 0, sizeof(e));
	store_wcpu_encode(&e, w, &ref);
	ck_assert_uint_eq(e.b.len, own.b.len);
	ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &r), 0);
	ck_assert_mem_eq(r->threads, w->threads,
	    w->nthreads * sizeof(*w->threads));
	ck_assert_mem_eq(r->procs, w->procs, w->nprocs * sizeof(*w->procs));
	window_wcpu_free(r);
	store_enc_release(&e);
	store_enc_release(&own);
	store_enc_release(&v1);
	window_wcpu_free(w);
}
END_TEST

static struct window *
mkwin(void)
{
	struct window *w = window_new(1, 2);
	struct window_task pt = { .id = 100,
		.tgid = 100,
		.starttime = 100,
		.d_utime = 30,
		.d_stime = 14,
		.samples = 1,
		.wall_ns = SEC };
	struct window_task other = { .id = 50,
		.tgid = 50,
		.starttime = 9,
		.d_utime = 60,
		.samples = 1,
		.wall_ns = SEC };
	struct bpf_sched_batch b;
	struct vbpf_tid t[3];
	struct vbpf_proc p[2];
	struct window_wcpu *wc = window_wcpu_new();

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b");
	w->hz = 100;
	w->wall_start_ns = T0;
	w->wall_end_ns = T0 + 10 * SEC;
	w->mono_start_ns = SEC;
	w->mono_end_ns = 11 * SEC;
	snprintf(pt.comm, sizeof(pt.comm), "burner");
	snprintf(other.comm, sizeof(other.comm), "plain");
	ck_assert_int_eq(window_add_task(w, false, &pt), 0);
	ck_assert_int_eq(window_add_task(w, false, &other), 0);
	mkbatch(&b, t, p);
	ck_assert_int_eq(wcpu_bpf_add(wc, &b, 100, 0, 0), 0);
	/* every busy tick at a quarter of a full CPU */
	wc->busy_ticks = 200;
	wc->wbusy = 50 * (uint64_t)WCPU_ONE;
	wc->windows = 1;
	window_part_set(w, WPART_WCPU, wc);
	return w;
}

/* Stored, read back, ranked by weighted ticks, a damaged blob counted. */
START_TEST(test_store_top)
{
	char db[PATH_MAX], *dir = tu_mkdtemp_db("wcpu", db, sizeof(db));
	struct window *w = mkwin(), **v = NULL;
	struct rpc_query q = { .op = RPC_Q_TOP,
		.id = 1,
		.from_wall_ns = T0,
		.to_wall_ns = T0 + 20 * SEC,
		.hz = 100,
		.n = 10,
		.weighted = true };
	struct store_hist h = { 0 };
	struct store_stats st;
	struct store *s = NULL;
	Vitals__Response *res;
	uint8_t *frame = NULL;
	size_t n = 0, len = 0;

	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 20 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(window_wcpu(v[0]));
	ck_assert_uint_eq(window_wcpu(v[0])->nprocs, 2);
	ck_assert_uint_eq(window_wcpu(v[0])->wbusy, 50 * (uint64_t)WCPU_ONE);
	window_free(v[0]);
	free(v);

	/* pid 100: 44 ticks × its own 205.2/440 (bpf); pid 50: 60 ticks ×
	 * 0.25 (approx); so 100 ranks first though it used fewer ticks */
	ck_assert_int_eq(query_wcpu_top(s, &q, 1 << 20, &frame, &len), 0);
	ck_assert_ptr_nonnull(
	    res = frame_unpack_response(frame + VITALS_FRAME_HDR,
		len - VITALS_FRAME_HDR));
	ck_assert_int_eq(res->top->metric, VITALS__METRIC__METRIC_WEIGHTED);
	ck_assert_uint_eq(res->top->n_tasks, 2);
	ck_assert_int_eq(res->top->tasks[0]->id, 100);
	ck_assert_str_eq(res->top->tasks[0]->wtd_source, "bpf");
	ck_assert_double_eq_tol(res->top->tasks[0]->wtd_ticks,
	    44.0 * 205214843.0 / 440e6, 1e-9);
	ck_assert_int_eq(res->top->tasks[1]->id, 50);
	ck_assert_str_eq(res->top->tasks[1]->wtd_source, "approx");
	ck_assert_double_eq_tol(res->top->tasks[1]->wtd_ticks, 15.0, 1e-12);
	vitals__response__free_unpacked(res, NULL);
	free(frame);

	/* a history point gets its window's figure */
	snprintf(h.boot_id, sizeof(h.boot_id), "b");
	h.wall_start_ns = T0;
	h.wall_end_ns = T0 + 10 * SEC;
	h.t.id = 50;
	h.t.starttime = 9;
	h.t.d_utime = 60;
	ck_assert_int_eq(query_wcpu_history(s, T0, T0 + 20 * SEC, false, &h, 1),
	    0);
	ck_assert_uint_eq(h.wtd_src, WCPU_SRC_APPROX);
	ck_assert_double_eq_tol(h.wtd_ticks, 15.0, 1e-12);

	/* a damaged blob: counted, the window reads without the part */
	ck_assert_int_eq(store_exec(s,
			     "UPDATE window_wcpu SET blob = x'b70102'", NULL,
			     0),
	    0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 20 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_null(window_wcpu(v[0]));
	ck_assert_uint_eq(v[0]->nprocs, 2);
	window_free(v[0]);
	free(v);
	h.wtd_src = 0;
	ck_assert_int_eq(query_wcpu_history(s, T0, T0 + 20 * SEC, false, &h, 1),
	    0);
	ck_assert_uint_eq(h.wtd_src, WCPU_SRC_NONE);
	store_get_stats(s, &st);
	ck_assert_uint_ge(st.blob_errors, 2);
	store_close(s);
	window_free(w);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* Column col of the one window's parts row (level 0, T0's span table)
 * set to the SQL value val. */
static void
set_part(struct store *s, const char *col, const char *val)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "UPDATE l0_parts_%lld SET %s = %s",
	    (long long)(T0 / (3600 * SEC)), col, val);
	ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
}

/* The one window, read back; the store's counters before in *st0. */
static struct window *
load_one(struct store *s, struct store_stats *st0)
{
	struct window **v = NULL, *w;
	size_t n = 0;

	store_get_stats(s, st0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 20 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	w = v[0];
	free(v);
	return w;
}

/*
 * A window with BPF rows: its wcpu blob names them (version 2, no keys of
 * its own), reads back exactly by a window's load and by the span read
 * `top --weighted` makes, and a damaged BPF blob leaves the wcpu part
 * unreadable, counted, the rest of the window read.
 */
START_TEST(test_store_ref)
{
	char db[PATH_MAX], *dir = tu_mkdtemp_db("wcpu", db, sizeof(db));
	char sql[160], out[64];
	struct store_enc own = { 0 };
	struct window *w = mkwin(), **v = NULL, *got;
	struct window_bpf *b = window_sched_make(w, true);
	const struct window_wcpu *wc = window_wcpu(w);
	struct rpc_query q = { .op = RPC_Q_TOP,
		.id = 1,
		.from_wall_ns = T0,
		.to_wall_ns = T0 + 20 * SEC,
		.hz = 100,
		.n = 10,
		.weighted = true };
	struct store_stats st0, st;
	struct store *s = NULL;
	Vitals__Response *res;
	uint8_t *frame = NULL;
	size_t n = 0, len = 0;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(window_bpf_reserve(b, 0, 2, 3), 0);
	b->state = VBPF_ON_LOADED;
	{
		struct window_bpf_proc bp[3];
		struct window_bpf_thread bt[4];

		mkref(bp, bt);
		b->proc[b->nprocs++] = bp[0];
		b->proc[b->nprocs++] = bp[1];
		b->thread[b->nthreads++] = bt[0];
		b->thread[b->nthreads++] = bt[2];
		b->thread[b->nthreads++] = bt[3];
	}
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	/* the frame: magic 0xb7, part 12, version 2; and the rows named,
	 * not written (the same part without them, framed raw, is longer) */
	ck_assert_int_eq(store_exec(s,
			     "SELECT hex(substr(blob, 1, 3)) FROM window_wcpu",
			     out, sizeof(out)),
	    0);
	ck_assert_str_eq(out, "B70C02");
	ck_assert_int_eq(store_exec(s, "SELECT length(blob) FROM window_wcpu",
			     out, sizeof(out)),
	    0);
	store_wcpu_encode(&own, wc, NULL);
	ck_assert_int_lt(strtoll(out, NULL, 10), (long long)own.b.len);
	store_enc_release(&own);

	ck_assert_int_eq(store_windows(s, T0, T0 + 20 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(window_wcpu(v[0]));
	ck_assert_uint_eq(window_wcpu(v[0])->nprocs, wc->nprocs);
	ck_assert_uint_eq(window_wcpu(v[0])->nthreads, wc->nthreads);
	ck_assert_mem_eq(window_wcpu(v[0])->procs, wc->procs,
	    wc->nprocs * sizeof(*wc->procs));
	ck_assert_mem_eq(window_wcpu(v[0])->threads, wc->threads,
	    wc->nthreads * sizeof(*wc->threads));
	window_free(v[0]);
	free(v);

	/* the span read decodes the BPF blob for the rows it names */
	store_get_stats(s, &st0);
	ck_assert_int_eq(query_wcpu_top(s, &q, 1 << 20, &frame, &len), 0);
	ck_assert_ptr_nonnull(
	    res = frame_unpack_response(frame + VITALS_FRAME_HDR,
		len - VITALS_FRAME_HDR));
	ck_assert_int_eq(res->top->tasks[0]->id, 100);
	ck_assert_str_eq(res->top->tasks[0]->wtd_source, "bpf");
	ck_assert_double_eq_tol(res->top->tasks[0]->wtd_ticks,
	    44.0 * 205214843.0 / 440e6, 1e-9);
	vitals__response__free_unpacked(res, NULL);
	free(frame);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, st0.blob_errors);

	/* the kv blob damaged: the sched part's counters gone (its rows
	 * read, under an unknown state), the wcpu part still read, its rows
	 * from the BPF blob; one error */
	snprintf(sql, sizeof(sql),
	    "CREATE TABLE keep AS SELECT kv FROM l0_parts_%lld",
	    (long long)(T0 / (3600 * SEC)));
	ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
	set_part(s, "kv", "x'b70102'");
	got = load_one(s, &st0);
	ck_assert_ptr_nonnull(window_sched(got));
	ck_assert_uint_eq(window_sched(got)->state, VBPF_UNKNOWN);
	ck_assert_uint_eq(window_sched(got)->nthreads,
	    window_sched(w)->nthreads);
	ck_assert_ptr_nonnull(window_wcpu(got));
	ck_assert_mem_eq(window_wcpu(got)->threads, wc->threads,
	    wc->nthreads * sizeof(*wc->threads));
	window_free(got);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, st0.blob_errors + 1);
	set_part(s, "kv", "(SELECT kv FROM keep)");

	/* the BPF blob damaged: the wcpu part cannot be read either */
	set_part(s, "bpf", "x'b70102'");
	got = load_one(s, &st0);
	ck_assert_ptr_null(window_wcpu(got));
	ck_assert_uint_eq(got->nprocs, 2);
	window_free(got);
	ck_assert_int_eq(query_wcpu_top(s, &q, 1 << 20, &frame, &len), 0);
	ck_assert_ptr_nonnull(
	    res = frame_unpack_response(frame + VITALS_FRAME_HDR,
		len - VITALS_FRAME_HDR));
	/* no part: no weighting for either task (50 ranks first by ticks) */
	ck_assert_uint_eq(res->top->n_tasks, 2);
	ck_assert_int_eq(res->top->tasks[1]->id, 100);
	ck_assert_str_eq(res->top->tasks[1]->wtd_source,
	    wcpu_src_name(WCPU_SRC_NONE));
	vitals__response__free_unpacked(res, NULL);
	free(frame);
	/* the BPF blob and the wcpu one at the load, the BPF one at the
	 * span read: three */
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, st0.blob_errors + 3);

	/* kv damaged too: the three blobs counted once each at the load
	 * (kv, BPF, and the wcpu one unreadable without its rows) */
	set_part(s, "kv", "x'b70102'");
	got = load_one(s, &st0);
	ck_assert_ptr_null(window_sched(got));
	ck_assert_ptr_null(window_wcpu(got));
	ck_assert_uint_eq(got->nprocs, 2);
	window_free(got);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, st0.blob_errors + 3);
	store_close(s);
	window_free(w);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * The largest BPF bounds (bpf_threads 65536) and the "other" row beside
 * them: 65,537 thread rows in the blob, read back whole (the reader's
 * limit counts the "other" row), and no blob refused.
 */
START_TEST(test_store_rows_max)
{
	char db[PATH_MAX], *dir = tu_mkdtemp_db("wcpu", db, sizeof(db));
	struct window *w = mkwin(), **v = NULL;
	struct window_bpf *b = window_sched_make(w, true);
	struct store_stats st0, st;
	struct store *s = NULL;
	size_t n = 0, i;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(window_bpf_reserve(b, 0, 0, VITALS_BPF_ROWS_MAX), 0);
	b->state = VBPF_ON_LOADED;
	for (i = 0; i < VITALS_BPF_ROWS_MAX; i++)
		b->thread[b->nthreads++] =
		    (struct window_bpf_thread){ .tid = (int32_t)i + 1000,
			    .tgid = 1000,
			    .starttime = 5,
			    .oncpu_ns = i + 1 };
	b->thread_other = (struct window_bpf_thread){ .oncpu_ns = 3 };
	b->threads_other = 1;
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	store_get_stats(s, &st0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_windows(s, T0, T0 + 20 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(window_sched(v[0]));
	ck_assert_uint_eq(window_sched(v[0])->nthreads, VITALS_BPF_ROWS_MAX);
	ck_assert_uint_eq(window_sched(v[0])->thread_other.oncpu_ns, 3);
	ck_assert_ptr_nonnull(window_wcpu(v[0]));
	window_free(v[0]);
	free(v);
	store_get_stats(s, &st);
	ck_assert_uint_eq(st.blob_errors, st0.blob_errors);
	store_close(s);
	window_free(w);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A thread's or process's run-queue figures, made up. */
static void
rq_fill(uint64_t *s, uint64_t *rq_ns, uint64_t *rq_count, uint32_t *h)
{
	unsigned k, len = (unsigned)(rnd(s) % 9);

	for (k = 0, *rq_count = 0; k < len; k++)
		*rq_count += h[k] = (uint32_t)(k + 1 == len ? 1 + rnd(s) % 300 :
							      rnd(s) % 300);
	*rq_ns = *rq_count * 4000 + rnd(s) % 1000;
}

/*
 * Window k of the span test: 20-40 processes of 1-3 threads; most of
 * them their threads' sums (the blob derives them), one in five with an
 * exited thread's time of its own; the "other" rows, the process their
 * sum. Its wcpu part: a row for each process and thread row, but for
 * every third process in odd windows (one that only waited); in window 3
 * the threads' on-CPU times differ from the BPF ones (rows of its own).
 */
static struct window *
span_win(unsigned k)
{
	uint64_t s = 0x2545f4914f6cdd1dull * (k + 1), on = 0;
	struct window *w = window_new(1, 2);
	struct window_bpf *b = window_sched_make(w, true);
	struct window_wcpu *c = window_wcpu_new();
	size_t np = 20 + rnd(&s) % 21, i, j, n;
	int32_t tgid = 300 + (int32_t)(rnd(&s) % 100);

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(c);
	snprintf(w->boot_id, sizeof(w->boot_id), "b");
	w->hz = 100;
	w->wall_start_ns = T0 + (int64_t)k * 10 * SEC;
	w->wall_end_ns = w->wall_start_ns + 10 * SEC;
	w->mono_start_ns = (int64_t)(1 + k * 10) * SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	ck_assert_int_eq(window_bpf_reserve(b, 0, np, 3 * np), 0);
	b->state = VBPF_ON_LOADED;
	c->procs = calloc(np, sizeof(*c->procs));
	c->threads = calloc(3 * np, sizeof(*c->threads));
	ck_assert_ptr_nonnull(c->procs);
	ck_assert_ptr_nonnull(c->threads);
	for (i = 0; i < np; i++, tgid += 5 + (int32_t)(rnd(&s) % 40)) {
		struct window_bpf_proc *p = &b->proc[b->nprocs++];

		p->tgid = tgid;
		p->starttime = 1000 + rnd(&s) % 5000;
		n = 1 + rnd(&s) % 3;
		for (j = 0; j < n; j++) {
			struct window_bpf_thread *t = &b->thread[b->nthreads++];
			unsigned h;

			t->tid = tgid + (int32_t)j;
			t->tgid = tgid;
			t->uid = 10000 + (uint32_t)(i % 3);
			t->starttime = p->starttime + j;
			t->oncpu_ns = rnd(&s) % (3 * SEC);
			rq_fill(&s, &t->rq_ns, &t->rq_count, t->rq_hist);
			p->oncpu_ns += t->oncpu_ns;
			p->rq_ns += t->rq_ns;
			p->rq_count += t->rq_count;
			for (h = 0; h < VITALS_BPF_RQ_SLOTS; h++)
				p->rq_hist[h] += t->rq_hist[h];
			c->threads[c->nthreads++] = (struct wcpu_row){
				.id = t->tid,
				.tgid = tgid,
				.starttime = t->starttime,
				.oncpu_ns = t->oncpu_ns + (k == 3),
				.wtd_ns = t->oncpu_ns * 3 / 4 + rnd(&s) % 1000,
			};
			on += t->oncpu_ns;
		}
		if (rnd(&s) % 5 == 0) { /* an exited thread's time */
			p->oncpu_ns += 1 + rnd(&s) % SEC;
			p->flags = WBPF_PROC_EXITED;
		}
		if (k % 2 == 1 && i % 3 == 2)
			continue;
		c->procs[c->nprocs++] = (struct wcpu_row){ .id = tgid,
			.tgid = tgid,
			.starttime = p->starttime,
			.oncpu_ns = p->oncpu_ns,
			.wtd_ns = p->oncpu_ns * 3 / 4 + rnd(&s) % 1000 };
	}
	b->thread_other = (struct window_bpf_thread){ .oncpu_ns = 77777 };
	rq_fill(&s, &b->thread_other.rq_ns, &b->thread_other.rq_count,
	    b->thread_other.rq_hist);
	b->threads_other = 1;
	b->proc_other = (struct window_bpf_proc){
		.oncpu_ns = b->thread_other.oncpu_ns,
		.rq_ns = b->thread_other.rq_ns,
		.rq_count = b->thread_other.rq_count,
	};
	memcpy(b->proc_other.rq_hist, b->thread_other.rq_hist,
	    sizeof(b->proc_other.rq_hist));
	b->procs_other = 1;
	c->busy_ticks = 700 + k;
	c->wbusy = (uint64_t)WCPU_ONE * 500;
	c->windows = 1;
	c->drains = 10;
	c->oncpu_ns = on;
	c->wtd_ns = on * 3 / 4;
	window_part_set(w, WPART_WCPU, c);
	return w;
}

/* A part's every figure as bytes: its own rows' encoding. */
static void
wcpu_bytes(const struct window_wcpu *p, struct store_enc *e)
{
	memset(e, 0, sizeof(*e));
	ck_assert_ptr_nonnull(p);
	store_wcpu_encode(e, p, NULL);
	ck_assert_int_eq(e->err, 0);
}

/* The span read of st over the windows w[0..n) gives each window's part
 * as the window's load gives it, and as it was written. */
static void
span_same(struct store *st, struct window **w, size_t n)
{
	struct store_wcpu_win *v = NULL;
	struct window **lw = NULL;
	struct store_enc a, b, c;
	struct store_stats s0, s1;
	size_t nv = 0, nl = 0, i;

	store_get_stats(st, &s0);
	ck_assert_int_eq(store_wcpu_span(st, T0, T0 + 100 * SEC, &v, &nv), 0);
	ck_assert_int_eq(store_windows(st, T0, T0 + 100 * SEC, 0, &lw, &nl), 0);
	ck_assert_uint_eq(nv, n);
	ck_assert_uint_eq(nl, n);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(v[i].wall_start_ns, w[i]->wall_start_ns);
		ck_assert_int_eq(lw[i]->wall_start_ns, w[i]->wall_start_ns);
		wcpu_bytes(v[i].p, &a);
		wcpu_bytes(window_wcpu(lw[i]), &b);
		wcpu_bytes(window_wcpu(w[i]), &c);
		ck_assert_uint_eq(a.b.len, c.b.len);
		ck_assert_mem_eq(a.b.p, c.b.p, c.b.len);
		ck_assert_uint_eq(b.b.len, c.b.len);
		ck_assert_mem_eq(b.b.p, c.b.p, c.b.len);
		store_enc_release(&a);
		store_enc_release(&b);
		store_enc_release(&c);
		window_free(lw[i]);
	}
	free(lw);
	store_wcpu_span_free(v, nv);
	store_get_stats(st, &s1);
	ck_assert_uint_eq(s1.blob_errors, s0.blob_errors);
}

/*
 * The span read names the BPF rows through their keys alone
 * (store_bpfrows_keys): over eight windows of rows of every kind, four
 * moved into the main file and four in the spool, a reader's read
 * (through the views of both files) and the writer's (the main file)
 * give every window's part as its load does and as it was written; and so with one window's BPF
 * blob rewritten as version 3 (decoded whole).
 */
START_TEST(test_store_span_keys)
{
	enum { NW = 8 };
	char *dir = tu_mkdtemp("wcpu-span"), path[4096], spool[4096];
	struct window *w[NW];
	struct store_opts o;
	struct store *s = NULL, *r = NULL;
	struct store_enc e, own;
	unsigned k;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	snprintf(spool, sizeof(spool), "%s/spool.db", dir);
	store_opts_default(&o);
	o.spool_path = spool;
	o.commit_s = 3600;
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	for (k = 0; k < NW; k++) {
		const struct window_bpf *b;
		struct window_wcpu *x = NULL;

		w[k] = span_win(k);
		b = window_sched(w[k]);
		/* the part names the BPF rows (processes, and threads but
		 * in window 3): unreadable without them */
		memset(&e, 0, sizeof(e));
		memset(&own, 0, sizeof(own));
		store_wcpu_encode(&e, window_wcpu(w[k]),
		    &(struct store_wcpu_ref){ b->proc, b->nprocs, b->thread,
			b->nthreads, NULL });
		store_wcpu_encode(&own, window_wcpu(w[k]), NULL);
		ck_assert_int_eq(store_wcpu_decode(e.b.p, e.b.len, 2, NULL, &x),
		    -ENODATA);
		ck_assert_uint_lt(e.b.len + (k == 3 ? 100 : 300), own.b.len);
		store_enc_release(&e);
		store_enc_release(&own);
		ck_assert_int_eq(store_put(s, w[k]), 0);
		if (k == NW / 2 - 1)
			ck_assert_int_eq(store_flush(s), 0);
	}
	/* the writer reads the main file; a reader both */
	span_same(s, w, NW / 2);
	ck_assert_int_eq(store_conn_open(s, &r), 0);
	ck_assert_int_eq(store_conn_begin(r), 0);
	span_same(r, w, NW);
	store_conn_end(r);

	/* window 1's BPF blob as version 3 (older stores), same rows */
	{
		const struct window_bpf *b = window_sched(w[1]);
		struct window_bpf_proc p[64];
		struct window_bpf_thread t[128];
		struct store_bpfrows rows = { NULL, 0, p, 0, t, 0 };
		struct store_enc pl = { 0 }, fr = { 0 };
		char *sql, out[32];
		size_t i, n;

		ck_assert_uint_lt(b->nprocs, 64);
		ck_assert_uint_lt(b->nthreads, 128);
		p[rows.nproc] = b->proc_other;
		p[rows.nproc++].tgid = -1;
		for (i = 0; i < b->nprocs; i++)
			p[rows.nproc++] = b->proc[i];
		t[rows.nthread] = b->thread_other;
		t[rows.nthread].tid = t[rows.nthread].tgid = -1;
		t[rows.nthread++].uid = UINT32_MAX;
		for (i = 0; i < b->nthreads; i++)
			t[rows.nthread++] = b->thread[i];
		ck_assert_int_eq(store_bpfrows_put3(&pl, &rows), 0);
		ck_assert_int_eq(store_frame_put_zstd(&fr, STORE_BPFROWS_PART,
				     STORE_BPFROWS_V3, pl.b.p, pl.b.len, 0),
		    0);
		n = 2 * fr.b.len + 256;
		ck_assert_ptr_nonnull(sql = malloc(n));
		i = (size_t)snprintf(sql, n,
		    "UPDATE l0_parts_%lld SET bpf = x'",
		    (long long)(w[1]->wall_start_ns / (3600 * SEC)));
		for (k = 0; k < fr.b.len; k++)
			i += (size_t)snprintf(sql + i, n - i, "%02x",
			    ((const uint8_t *)fr.b.p)[k]);
		snprintf(sql + i, n - i,
		    "' WHERE window_id = (SELECT id FROM windows"
		    " WHERE wall_start_ns = %lld)",
		    (long long)w[1]->wall_start_ns);
		ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
		snprintf(sql, n,
		    "SELECT hex(substr(bpf, 1, 3)) FROM l0_parts_%lld"
		    " WHERE window_id = (SELECT id FROM windows"
		    " WHERE wall_start_ns = %lld)",
		    (long long)(w[1]->wall_start_ns / (3600 * SEC)),
		    (long long)w[1]->wall_start_ns);
		ck_assert_int_eq(store_exec(s, sql, out, sizeof(out)), 0);
		ck_assert_str_eq(out, "B70403");
		free(sql);
		store_enc_release(&pl);
		store_enc_release(&fr);
	}
	span_same(s, w, NW / 2);
	ck_assert_int_eq(store_conn_begin(r), 0);
	span_same(r, w, NW);
	store_conn_end(r);

	/* window 2's BPF blob gone (NULL): the span read and the window's
	 * load both read it without its wcpu part, one counted error each,
	 * and every other window whole */
	{
		struct store_wcpu_win *v = NULL;
		struct store_stats s0, s1;
		struct window **lw = NULL;
		char sql[256];
		size_t nv = 0, nl = 0, i;

		snprintf(sql, sizeof(sql),
		    "UPDATE l0_parts_%lld SET bpf = NULL WHERE window_id = "
		    "(SELECT id FROM windows WHERE wall_start_ns = %lld)",
		    (long long)(w[2]->wall_start_ns / (3600 * SEC)),
		    (long long)w[2]->wall_start_ns);
		ck_assert_int_eq(store_exec(s, sql, NULL, 0), 0);
		store_get_stats(s, &s0);
		ck_assert_int_eq(store_wcpu_span(s, T0, T0 + 100 * SEC, &v,
				     &nv),
		    0);
		store_get_stats(s, &s1);
		ck_assert_uint_eq(nv, NW / 2);
		for (i = 0; i < nv; i++)
			if (i == 2)
				ck_assert_ptr_null(v[i].p);
			else
				ck_assert_ptr_nonnull(v[i].p);
		ck_assert_uint_eq(s1.blob_errors, s0.blob_errors + 1);
		store_wcpu_span_free(v, nv);
		ck_assert_int_eq(store_windows(s, T0, T0 + 100 * SEC, 0, &lw,
				     &nl),
		    0);
		store_get_stats(s, &s0);
		ck_assert_uint_eq(nl, NW / 2);
		ck_assert_ptr_null(window_wcpu(lw[2]));
		ck_assert_ptr_nonnull(window_wcpu(lw[1]));
		ck_assert_uint_eq(s0.blob_errors, s1.blob_errors + 1);
		for (i = 0; i < nl; i++)
			window_free(lw[i]);
		free(lw);
	}
	store_conn_close(r);
	store_close(s);
	for (k = 0; k < NW; k++)
		window_free(w[k]);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("wcpu");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_fscale);
	tcase_add_test(tc, test_bpf_rows);
	tcase_add_test(tc, test_keep_bpf_rows);
	tcase_add_test(tc, test_merge_bound);
	tcase_add_test(tc, test_codec);
	tcase_add_test(tc, test_codec_ref);
	suite_add_tcase(s, tc);
	tc = tcase_create("store");
	tcase_add_test(tc, test_store_top);
	tcase_add_test(tc, test_store_ref);
	tcase_add_test(tc, test_store_rows_max);
	tcase_add_test(tc, test_store_span_keys);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
