/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA-BUF: the parsers on byte-exact fixtures (tests/fixtures/dmabuf,
 * garbage and truncated fdinfo among them), the tally of one pass (every
 * buffer once by inode, sharers, "other" rows), the part's merge, the
 * store's blob round trip and roll-up, the wire answer, and the client's
 * text and JSON of it.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "frame.h"
#include "jsonmini.h"
#include "store/store_codec.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC 1000000000LL
#define T0 (1700000000LL * SEC)

static char *
fixture(const char *name, size_t *ret_len)
{
	char rel[128];
	FILE *f;
	char *buf = malloc(4096);
	size_t n;

	snprintf(rel, sizeof(rel), "fixtures/dmabuf/%s", name);
	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(f = fopen(tu_srcpath(rel), "rb"));
	n = fread(buf, 1, 4096, f);
	fclose(f);
	*ret_len = n;
	return buf;
}

START_TEST(test_parse_fdinfo)
{
	struct dmabuf_fdinfo fi;
	size_t n;
	char *b;

	b = fixture("fdinfo_5.15_named", &n);
	ck_assert_int_eq(dmabuf_parse_fdinfo(b, n, &fi), 0);
	ck_assert_uint_eq(fi.size, 8294400);
	ck_assert_uint_eq(fi.ino, 45123);
	ck_assert_int_eq(fi.count, 2);
	ck_assert_str_eq(fi.exp_name, "system");
	ck_assert_str_eq(fi.name, "gralloc-fb");
	ck_assert_uint_eq(fi.have,
	    DMABUF_FDI_SIZE | DMABUF_FDI_COUNT | DMABUF_FDI_EXP |
		DMABUF_FDI_NAME | DMABUF_FDI_INO);
	/* a byte short: the last line has no newline, refused */
	ck_assert_int_eq(dmabuf_parse_fdinfo(b, n - 1, &fi), -EINVAL);
	free(b);

	b = fixture("fdinfo_5.10", &n);
	memset(&fi, 0xff, sizeof(fi));
	ck_assert_int_eq(dmabuf_parse_fdinfo(b, n, &fi), 0);
	ck_assert_uint_eq(fi.size, 65536);
	ck_assert_str_eq(fi.exp_name, "qcom,system");
	ck_assert_uint_eq(fi.have & DMABUF_FDI_INO, 0);
	ck_assert_uint_eq(fi.have & DMABUF_FDI_NAME, 0);
	ck_assert_str_eq(fi.name, "");
	free(b);

	b = fixture("fdinfo_truncated", &n);
	ck_assert_int_eq(dmabuf_parse_fdinfo(b, n, &fi), -EINVAL);
	free(b);
	b = fixture("fdinfo_memfd", &n);
	ck_assert_int_eq(dmabuf_parse_fdinfo(b, n, &fi), -EINVAL);
	free(b);
	b = fixture("fdinfo_garbage", &n);
	ck_assert_int_eq(dmabuf_parse_fdinfo(b, n, &fi), -EINVAL);
	free(b);
	/* an embedded NUL, an empty file, a 21-digit size */
	ck_assert_int_eq(dmabuf_parse_fdinfo("size:\t1\0\nexp_name:\tx\n", 21,
			     &fi),
	    -EINVAL);
	ck_assert_int_eq(dmabuf_parse_fdinfo("", 0, &fi), -EINVAL);
	ck_assert_int_eq(
	    dmabuf_parse_fdinfo("size:\t999999999999999999999\nexp_name:\tx\n",
		41, &fi),
	    -EINVAL);
	/* a control byte in a name is replaced, a long name cut */
	ck_assert_int_eq(dmabuf_parse_fdinfo("size:\t4096\nexp_name:\ta\x01"
					     "b\n",
			     25, &fi),
	    0);
	ck_assert_str_eq(fi.exp_name, "a?b");
	ck_assert_int_eq(
	    dmabuf_parse_fdinfo("size:\t1\nexp_name:\t"
				"0123456789012345678901234567890123456789\n",
		59, &fi),
	    0);
	ck_assert_uint_eq(strlen(fi.exp_name), DMABUF_NAME_LEN - 1);
}
END_TEST

START_TEST(test_parse_sysfs_link)
{
	char name[DMABUF_NAME_LEN];
	uint64_t v = 0;
	size_t n;
	char *b;

	b = fixture("sysfs_size", &n);
	ck_assert_int_eq(dmabuf_parse_u64(b, n, &v), 0);
	ck_assert_uint_eq(v, 8294400);
	free(b);
	b = fixture("sysfs_exporter_name", &n);
	ck_assert_int_eq(dmabuf_parse_name(b, n, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "system");
	free(b);
	ck_assert_int_eq(dmabuf_parse_u64("", 0, &v), -EINVAL);
	ck_assert_int_eq(dmabuf_parse_u64("12\n13\n", 6, &v), -EINVAL);
	ck_assert_int_eq(dmabuf_parse_u64("-1\n", 3, &v), -EINVAL);
	ck_assert_int_eq(dmabuf_parse_name("\n", 1, name, sizeof(name)),
	    -EINVAL);

	ck_assert(dmabuf_link_is("/dmabuf:", 8));
	ck_assert(dmabuf_link_is("/dmabuf:gralloc-fb", 18));
	ck_assert(dmabuf_link_is("anon_inode:dmabuf", 17));
	ck_assert(!dmabuf_link_is("anon_inode:dmabufx", 18));
	ck_assert(!dmabuf_link_is("/dmabu", 6));
	ck_assert(!dmabuf_link_is("/memfd:x (deleted)", 18));
	ck_assert(!dmabuf_link_is("socket:[123]", 12));
}
END_TEST

static struct dmabuf_hold
hold(int32_t pid, const char *comm, uint64_t ino, uint64_t size,
    const char *exp)
{
	struct dmabuf_hold h = { .pid = pid, .ino = ino, .size = size };

	snprintf(h.comm, sizeof(h.comm), "%s", comm);
	snprintf(h.exp, sizeof(h.exp), "%s", exp);
	return h;
}

static const struct dmabuf_proc *
proc_of(const struct window_dmabuf *p, int32_t pid)
{
	size_t i;

	for (i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	return NULL;
}

/* Three processes: surfaceflinger and an app share buffer 10 (two fds in
 * the app), the app alone holds 11, the camera 12 of another exporter. */
static struct window_dmabuf *
tally3(unsigned procs_max)
{
	struct dmabuf_hold h[] = {
		hold(300, "app", 10, 8192, "system"),
		hold(200, "surfaceflinger", 10, 8192, "system"),
		hold(300, "app", 10, 8192, "system"),
		hold(300, "app", 11, 4096, "system"),
		hold(400, "camera", 12, 65536, "qcom,secure"),
	};
	struct window_dmabuf *p = NULL;

	ck_assert_int_eq(dmabuf_tally(h, 5, procs_max, &p), 0);
	return p;
}

START_TEST(test_tally)
{
	struct window_dmabuf *p = tally3(64);
	const struct dmabuf_proc *r;
	size_t i;
	uint64_t pss = 0;

	/* every buffer once: 8192 + 4096 + 65536, not 8192 three times */
	ck_assert_uint_eq(p->total_bytes, 8192 + 4096 + 65536);
	ck_assert_uint_eq(p->buffers, 3);
	ck_assert_uint_eq(p->shared_bytes, 8192);
	ck_assert_uint_eq(p->shared_buffers, 1);
	ck_assert_uint_eq(p->nprocs, 3);
	ck_assert_int_eq(p->procs[0].pid, 400); /* largest first */
	ck_assert_ptr_nonnull(r = proc_of(p, 300));
	ck_assert_str_eq(r->name, "app");
	ck_assert_uint_eq(r->bytes, 8192 + 4096);
	ck_assert_uint_eq(r->buffers, 2);
	ck_assert_uint_eq(r->fds, 3);
	ck_assert_uint_eq(r->shared_bytes, 8192);
	ck_assert_uint_eq(r->pss_bytes, 4096 + 4096);
	ck_assert_ptr_nonnull(r = proc_of(p, 200));
	ck_assert_uint_eq(r->bytes, 8192);
	ck_assert_uint_eq(r->pss_bytes, 4096);
	for (i = 0; i < p->nprocs; i++)
		pss += p->procs[i].pss_bytes;
	ck_assert_uint_eq(pss, p->total_bytes); /* sizes divide evenly */
	ck_assert_uint_eq(p->nexps, 2);
	ck_assert_str_eq(p->exps[0].name, "qcom,secure");
	ck_assert_str_eq(p->exps[1].name, "system");
	ck_assert_uint_eq(p->exps[1].bytes, 8192 + 4096);
	ck_assert_uint_eq(p->exps[1].buffers, 2);
	ck_assert_uint_eq(p->nshared, 1);
	ck_assert_uint_eq(p->shared[0].ino, 10);
	ck_assert_uint_eq(p->shared[0].sharers, 2);
	ck_assert_uint_eq(p->shared[0].npids, 2);
	ck_assert_int_eq(p->shared[0].pids[0], 200);
	ck_assert_int_eq(p->shared[0].pids[1], 300);
	window_dmabuf_free(p);

	/* one row kept: the two smaller processes fold into "other" */
	p = tally3(1);
	ck_assert_uint_eq(p->nprocs, 2);
	ck_assert_int_eq(p->procs[0].pid, 400);
	ck_assert_int_eq(p->procs[1].pid, -1);
	ck_assert_str_eq(p->procs[1].name, "other");
	ck_assert_uint_eq(p->procs[1].procs, 2);
	ck_assert_uint_eq(p->procs[1].bytes, 8192 + 4096 + 8192);
	ck_assert_uint_eq(p->procs_cut, 2);
	ck_assert_uint_eq(p->total_bytes, 8192 + 4096 + 65536);
	window_dmabuf_free(p);

	/* nothing held: a pass with zeros that are real zeros */
	ck_assert_int_eq(dmabuf_tally(NULL, 0, 64, &p), 0);
	ck_assert_uint_eq(p->passes, 1);
	ck_assert_uint_eq(p->buffers, 0);
	ck_assert_uint_eq(p->nprocs, 0);
	window_dmabuf_free(p);
}
END_TEST

/* More exporters than rows: the smallest fold into one "other" row. */
START_TEST(test_tally_exporters)
{
	struct dmabuf_hold h[DMABUF_EXPS_MAX + 6];
	struct window_dmabuf *p = NULL;
	char name[16];
	size_t i, n = sizeof(h) / sizeof(h[0]);

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "exp%zu", i);
		h[i] = hold(100, "p", 1000 + i, 4096 * (i + 1), name);
	}
	ck_assert_int_eq(dmabuf_tally(h, n, 64, &p), 0);
	ck_assert_uint_eq(p->nexps, DMABUF_EXPS_MAX);
	ck_assert(p->exps[DMABUF_EXPS_MAX - 1].other);
	ck_assert_uint_eq(p->exps[DMABUF_EXPS_MAX - 1].buffers, 7);
	ck_assert_uint_eq(p->exps_cut, 7);
	ck_assert_str_eq(p->exps[0].name, "exp69");
	window_dmabuf_free(p);
}
END_TEST

START_TEST(test_merge)
{
	struct window_dmabuf *a = tally3(64), *acc = NULL;
	struct dmabuf_hold h[] = {
		hold(300, "app", 11, 4096, "system"),
	};
	struct window_dmabuf *b = NULL;
	const struct dmabuf_proc *r;

	a->procs_unreadable = 2;
	/* a read the kernel's list: 3 buffers (one only mapped, say) */
	a->kernel_passes = 1;
	a->kernel_buffers = 3;
	a->kernel_bytes = 3 * 4096;
	a->iter_why = DMABUF_ITER_WHY_NONE;
	ck_assert_int_eq(dmabuf_tally(h, 1, 64, &b), 0);
	b->procs_unreadable = 1;
	/* b's read failed: a's list figures stand, its reason is the last */
	b->iter_errors = 1;
	b->iter_why = DMABUF_ITER_WHY_READ;
	ck_assert_int_eq(window_dmabuf_merge(&acc, a), 0);
	ck_assert_int_eq(window_dmabuf_merge(&acc, NULL), 0);
	ck_assert_int_eq(window_dmabuf_merge(&acc, b), 0);
	/* the last pass's totals, the max over both, counters summed */
	ck_assert_uint_eq(acc->passes, 2);
	ck_assert_uint_eq(acc->total_bytes, 4096);
	ck_assert_uint_eq(acc->total_bytes_max, 8192 + 4096 + 65536);
	ck_assert_uint_eq(acc->procs_unreadable, 3);
	ck_assert_uint_eq(acc->kernel_passes, 1);
	ck_assert_uint_eq(acc->iter_errors, 1);
	ck_assert_uint_eq(acc->passes_no_buffer, 0);
	ck_assert_uint_eq(acc->kernel_buffers, 3);
	ck_assert_uint_eq(acc->kernel_bytes, 3 * 4096);
	ck_assert_uint_eq(acc->iter_why, DMABUF_ITER_WHY_READ);
	ck_assert_uint_eq(acc->nshared, 0);
	ck_assert_ptr_nonnull(r = proc_of(acc, 300));
	ck_assert_uint_eq(r->passes, 2);
	ck_assert_uint_eq(r->bytes, 4096);
	ck_assert_uint_eq(r->bytes_max, 8192 + 4096);
	ck_assert_ptr_nonnull(r = proc_of(acc, 400));
	ck_assert_uint_eq(r->passes, 1);
	ck_assert_uint_eq(r->bytes, 65536);
	window_dmabuf_free(a);
	window_dmabuf_free(b);
	window_dmabuf_free(acc);
}
END_TEST

/* A pass the kernel's list spared (no buffer) folded after one that
 * walked: the totals are the last pass's (none), the counters sum. */
START_TEST(test_merge_no_buffer)
{
	struct window_dmabuf *a = tally3(64), *b = NULL, *acc = NULL;

	a->kernel_passes = 1;
	a->kernel_buffers = 3;
	a->kernel_bytes = 8192 + 4096 + 65536;
	ck_assert_int_eq(dmabuf_tally(NULL, 0, 64, &b), 0);
	b->kernel_passes = 1;
	b->passes_no_buffer = 1;
	ck_assert_int_eq(window_dmabuf_merge(&acc, a), 0);
	ck_assert_int_eq(window_dmabuf_merge(&acc, b), 0);
	ck_assert_uint_eq(acc->passes, 2);
	ck_assert_uint_eq(acc->kernel_passes, 2);
	ck_assert_uint_eq(acc->passes_no_buffer, 1);
	ck_assert_uint_eq(acc->kernel_buffers, 0);
	ck_assert_uint_eq(acc->kernel_bytes, 0);
	ck_assert_uint_eq(acc->total_bytes, 0);
	ck_assert_uint_eq(acc->buffers, 0);
	ck_assert_uint_eq(acc->total_bytes_max, 8192 + 4096 + 65536);
	window_dmabuf_free(a);
	window_dmabuf_free(b);
	window_dmabuf_free(acc);
}
END_TEST

/* The iterator's stream: whole records summed; a cut record, bytes past
 * 2^64 refused. */
START_TEST(test_iter_parse)
{
	struct {
		uint64_t ino, size;
	} r[3] = { { 5001, 8294400 }, { 5002, 65536 }, { 5003, 4096 } };
	uint64_t bytes = 1;
	uint32_t n = 1;

	ck_assert_int_eq(dmabuf_iter_parse(r, 0, &n, &bytes), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(bytes, 0);
	ck_assert_int_eq(dmabuf_iter_parse(r, sizeof(r), &n, &bytes), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(bytes, 8294400 + 65536 + 4096);
	n = 7;
	ck_assert_int_eq(dmabuf_iter_parse(r, sizeof(r) - 8, &n, &bytes),
	    -EBADMSG);
	ck_assert_int_eq(dmabuf_iter_parse(r, 8, &n, &bytes), -EBADMSG);
	ck_assert_uint_eq(n, 7); /* untouched on failure */
	r[2].size = UINT64_MAX - 65536;
	ck_assert_int_eq(dmabuf_iter_parse(r, sizeof(r), &n, &bytes), -EBADMSG);
	ck_assert_int_eq(dmabuf_iter_parse(r + 1, 2 * sizeof(r[0]), &n, &bytes),
	    0);
	ck_assert_uint_eq(bytes, UINT64_MAX);
	ck_assert_str_eq(dmabuf_iter_why_name(DMABUF_ITER_WHY_NONE), "none");
	ck_assert_str_eq(dmabuf_iter_why_name(DMABUF_ITER_WHY_KERNEL),
	    "no_kernel_iter");
	ck_assert_str_eq(dmabuf_iter_why_name(DMABUF_ITER_WHY__MAX), "?");
}
END_TEST

static struct window *
mkwin(uint64_t seq, int64_t start, struct window_dmabuf *p)
{
	struct window *w = window_new(seq, 1);

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b");
	w->hz = 100;
	w->wall_start_ns = start;
	w->wall_end_ns = start + 10 * SEC;
	w->mono_start_ns = start - T0 + SEC;
	w->mono_end_ns = w->mono_start_ns + 10 * SEC;
	if (p)
		window_part_set(w, WPART_DMABUF, p);
	return w;
}

/* The blob round trip, damaged blobs counted, and a truncated payload. */
START_TEST(test_codec)
{
	struct window_dmabuf *p = tally3(1), *q = NULL;
	struct store_enc e = { 0 };

	p->pass_wall_ns = T0;
	p->fds_read = 5000000000ULL;
	p->passes_overlapped = 3;
	/* one byte each (under 128): the tail's length below */
	p->kernel_passes = 5;
	p->passes_no_buffer = 4;
	p->iter_errors = 1;
	p->kernel_buffers = 2;
	p->kernel_bytes = 100;
	p->iter_why = DMABUF_ITER_WHY_NONE;
	store_dmabuf_encode(&e, p);
	ck_assert_int_eq(e.err, 0);
	ck_assert_int_eq(store_dmabuf_decode(e.b.p, e.b.len, &q), 0);
	ck_assert_uint_eq(q->total_bytes, p->total_bytes);
	ck_assert_uint_eq(q->fds_read, 5000000000ULL);
	ck_assert_int_eq(q->pass_wall_ns, T0);
	ck_assert_uint_eq(q->nprocs, 2);
	ck_assert_int_eq(q->procs[1].pid, -1);
	ck_assert_uint_eq(q->procs[1].procs, 2);
	ck_assert_uint_eq(q->nshared, 1);
	ck_assert_int_eq(q->shared[0].pids[1], 300);
	ck_assert_uint_eq(q->nexps, 2);
	ck_assert_int_eq(memcmp(q->exps, p->exps, 2 * sizeof(*p->exps)), 0);
	ck_assert_uint_eq(q->passes_overlapped, 3);
	ck_assert_uint_eq(q->kernel_passes, 5);
	ck_assert_uint_eq(q->passes_no_buffer, 4);
	ck_assert_uint_eq(q->iter_errors, 1);
	ck_assert_uint_eq(q->kernel_buffers, 2);
	ck_assert_uint_eq(q->kernel_bytes, 100);
	ck_assert_uint_eq(q->iter_why, DMABUF_ITER_WHY_NONE);
	window_dmabuf_free(q);
	/* a payload that ends before the kernel list's six fields is one
	 * written before them: they read as 0, the reason "unknown"; one cut
	 * inside them does not decode */
	ck_assert_int_eq(store_dmabuf_decode(e.b.p, e.b.len - 6, &q), 0);
	ck_assert_uint_eq(q->passes_overlapped, 3);
	ck_assert_uint_eq(q->kernel_passes, 0);
	ck_assert_uint_eq(q->iter_why, DMABUF_ITER_WHY_UNKNOWN);
	window_dmabuf_free(q);
	ck_assert_int_eq(store_dmabuf_decode(e.b.p, e.b.len - 3, &q), -EBADMSG);
	/* a reason past the last one does not decode */
	e.b.p[e.b.len - 1] = DMABUF_ITER_WHY__MAX;
	ck_assert_int_eq(store_dmabuf_decode(e.b.p, e.b.len, &q), -EBADMSG);
	/* a payload that ends before passes_overlapped is one written before
	 * the field (the frame's length and CRC catch a cut blob): it reads as
	 * 0; a payload cut inside its rows does not decode */
	ck_assert_int_eq(store_dmabuf_decode(e.b.p, e.b.len - 7, &q), 0);
	ck_assert_uint_eq(q->passes_overlapped, 0);
	ck_assert_uint_eq(q->nshared, 1);
	window_dmabuf_free(q);
	ck_assert_int_eq(store_dmabuf_decode(e.b.p, e.b.len - 8, &q), -EBADMSG);
	ck_assert_int_eq(store_dmabuf_decode(e.b.p, e.b.len / 2, &q), -EBADMSG);
	store_enc_release(&e);
	window_dmabuf_free(p);
}
END_TEST

/* Stored, read back, folded over a range and rolled up at read. */
START_TEST(test_store)
{
	char db[PATH_MAX], *dir = tu_mkdtemp_db("dmabuf", db, sizeof(db));
	struct dmabuf_hold h[] = { hold(300, "app", 11, 4096, "system") };
	struct window_dmabuf *b = NULL, *r = NULL;
	struct window *w1 = mkwin(1, T0, tally3(64)), *w2, *w3, **v = NULL;
	struct store *s = NULL;
	size_t n = 0;
	uint32_t nw = 0;

	ck_assert_int_eq(dmabuf_tally(h, 1, 64, &b), 0);
	w2 = mkwin(2, T0 + 10 * SEC, NULL); /* no pass in it */
	w3 = mkwin(3, T0 + 20 * SEC, b);
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(store_put(s, w3), 0);

	ck_assert_int_eq(store_windows(s, T0, T0 + 40 * SEC, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_nonnull(window_dmabuf(v[0]));
	ck_assert_uint_eq(window_dmabuf(v[0])->total_bytes,
	    8192 + 4096 + 65536);
	ck_assert_ptr_null(window_dmabuf(v[1]));
	ck_assert_uint_eq(window_dmabuf(v[2])->total_bytes, 4096);
	for (size_t i = 0; i < n; i++)
		window_free(v[i]);
	free(v);

	/* a 60 s granularity merges the three into one window */
	ck_assert_int_eq(store_windows(s, T0, T0 + 40 * SEC, 60, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(window_dmabuf(v[0]));
	ck_assert_uint_eq(window_dmabuf(v[0])->passes, 2);
	ck_assert_uint_eq(window_dmabuf(v[0])->total_bytes, 4096);
	ck_assert_uint_eq(window_dmabuf(v[0])->total_bytes_max,
	    8192 + 4096 + 65536);
	window_free(v[0]);
	free(v);

	ck_assert_int_eq(store_dmabuf_range(s, T0, T0 + 40 * SEC, &r, &nw), 0);
	ck_assert_uint_eq(nw, 2);
	ck_assert_uint_eq(r->passes, 2);
	ck_assert_uint_eq(proc_of(r, 400)->bytes_max, 65536);
	window_dmabuf_free(r);
	/* the first window alone */
	ck_assert_int_eq(store_dmabuf_range(s, T0, T0 + 15 * SEC, &r, &nw), 0);
	ck_assert_uint_eq(nw, 1);
	ck_assert_uint_eq(r->shared_bytes, 8192);
	window_dmabuf_free(r);
	/* a damaged blob: counted, left out */
	ck_assert_int_eq(store_exec(s,
			     "UPDATE window_dmabuf SET blob = x'b70102' WHERE "
			     "window_id = (SELECT min(window_id) FROM "
			     "window_dmabuf)",
			     NULL, 0),
	    0);
	ck_assert_int_eq(store_dmabuf_range(s, T0, T0 + 40 * SEC, &r, &nw), 0);
	ck_assert_uint_eq(nw, 1);
	ck_assert_uint_eq(r->passes, 1);
	window_dmabuf_free(r);
	ck_assert_int_eq(store_dmabuf_range(s, T0, T0 + 5 * SEC, &r, &nw), 0);
	ck_assert_ptr_null(r);
	ck_assert_uint_eq(nw, 0);
	/* the maintenance roll-up (level 1, one minute): the windows and
	 * their parts become one window with one part */
	store_close(s);
	tu_rmtree(dir);
	free(dir);
	dir = tu_mkdtemp_db("dmabuf-roll", db, sizeof(db));
	ck_assert_int_eq(store_open(db, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w1), 0);
	ck_assert_int_eq(store_put(s, w2), 0);
	ck_assert_int_eq(store_put(s, w3), 0);
	/* level 0 rolls in hourly batches: an hour past its 6 h age */
	ck_assert_int_eq(store_maintain(s, T0 + 8 * 3600 * SEC), 0);
	ck_assert_int_eq(store_windows(s, T0 - 60 * SEC, T0 + 60 * SEC, 0, &v,
			     &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0]->level, 1);
	ck_assert_ptr_nonnull(window_dmabuf(v[0]));
	ck_assert_uint_eq(window_dmabuf(v[0])->passes, 2);
	ck_assert_uint_eq(window_dmabuf(v[0])->total_bytes, 4096);
	ck_assert_uint_eq(window_dmabuf(v[0])->total_bytes_max,
	    8192 + 4096 + 65536);
	ck_assert_uint_eq(proc_of(window_dmabuf(v[0]), 300)->passes, 2);
	window_free(v[0]);
	free(v);
	ck_assert_int_eq(store_dmabuf_range(s, T0 - 60 * SEC, T0 + 60 * SEC, &r,
			     &nw),
	    0);
	ck_assert_uint_eq(nw, 1);
	ck_assert_uint_eq(r->passes, 2);
	window_dmabuf_free(r);
	store_close(s);
	window_free(w1);
	window_free(w2);
	window_free(w3);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

static Vitals__Response *
answer_of(const struct window_dmabuf *p, uint32_t windows)
{
	struct rpc_query q = { .op = RPC_Q_DMABUF, .id = 9 };
	uint8_t *frame = NULL;
	size_t len = 0;
	Vitals__Response *res;

	ck_assert_int_eq(rpc_answer_dmabuf(&q, p, windows, 1 << 20, &frame,
			     &len),
	    0);
	ck_assert_ptr_nonnull(
	    res = frame_unpack_response(frame + VITALS_FRAME_HDR,
		len - VITALS_FRAME_HDR));
	free(frame);
	return res;
}

/* The answer, then the client's text and JSON of it. */
START_TEST(test_wire_client)
{
	struct window_dmabuf *p = tally3(2);
	const struct jm *d, *pr;
	Vitals__Response *res;
	struct sbuf o;
	struct jm *j;
	const char *s;

	p->pass_wall_ns = T0;
	p->procs_unreadable = 3;
	p->kernel_passes = 4;
	p->passes_no_buffer = 2;
	p->kernel_buffers = 3;
	p->kernel_bytes = 8192 + 4096 + 65536;
	p->iter_why = DMABUF_ITER_WHY_NONE;
	res = answer_of(p, 4);
	ck_assert_int_eq(res->result_case, VITALS__RESPONSE__RESULT_DMABUF);
	ck_assert(res->dmabuf->on);
	ck_assert(res->dmabuf->stored);
	ck_assert_uint_eq(res->dmabuf->windows, 4);
	ck_assert_uint_eq(res->dmabuf->total_bytes, 8192 + 4096 + 65536);
	ck_assert_uint_eq(res->dmabuf->n_procs, 3);
	ck_assert_int_eq(res->dmabuf->procs[2]->pid, -1);
	ck_assert_uint_eq(res->dmabuf->n_shared, 1);
	ck_assert_uint_eq(res->dmabuf->shared[0]->n_pids, 2);
	ck_assert_uint_eq(res->dmabuf->kernel_passes, 4);
	ck_assert_uint_eq(res->dmabuf->passes_no_buffer, 2);
	ck_assert_uint_eq(res->dmabuf->kernel_buffers, 3);
	ck_assert_uint_eq(res->dmabuf->kernel_bytes, 8192 + 4096 + 65536);
	ck_assert_str_eq(res->dmabuf->iter_why, "none");

	sbuf_init(&o);
	fmt_dmabuf(&o, res->dmabuf);
	s = sbuf_str(&o);
	ck_assert_msg(strstr(s, "76 KiB in 3 buffers, each counted once") !=
		NULL,
	    "%s", s);
	ck_assert_msg(strstr(s, "shared by two or more processes 8 KiB in 1") !=
		NULL,
	    "%s", s);
	ck_assert_ptr_nonnull(strstr(s, "unreadable 3"));
	ck_assert_ptr_nonnull(strstr(s, "(other: 1 processes)"));
	ck_assert_ptr_nonnull(strstr(s, "qcom,secure"));
	ck_assert_ptr_nonnull(strstr(s, "200,300"));
	ck_assert_msg(strstr(s,
			  "kernel list (iter/dmabuf): 3 buffers, 76 KiB, "
			  "whoever holds them; read by 4 passes, 2 of them "
			  "with no buffer (no /proc walk), read failed 0\n") !=
		NULL,
	    "%s", s);
	ck_assert_msg(strstr(s,
			  "  400  64      64    1   1          0      "
			  "64  camera\n") != NULL,
	    "%s", s);
	sbuf_free(&o);

	sbuf_init(&o);
	json_response(&o, res);
	ck_assert_ptr_nonnull(j = jm_parse(sbuf_str(&o), o.len));
	ck_assert_ptr_nonnull(d = jm_get(j, "dmabuf"));
	/* 64-bit figures as strings, every bool printed */
	ck_assert_int_eq(jm_get(d, "total_bytes")->t, JM_STR);
	ck_assert(jm_is_int(jm_get(d, "total_bytes")));
	ck_assert_int_eq(jm_get(d, "total_bytes")->ll, 8192 + 4096 + 65536);
	ck_assert_int_eq(jm_get(d, "on")->t, JM_BOOL);
	ck_assert_int_eq(jm_get(d, "stored")->t, JM_BOOL);
	ck_assert_int_eq(jm_get(d, "procs_unreadable")->ll, 3);
	ck_assert_int_eq(jm_get(d, "passes_no_buffer")->ll, 2);
	ck_assert_int_eq(jm_get(d, "kernel_bytes")->ll, 8192 + 4096 + 65536);
	ck_assert_str_eq(jm_get(d, "iter_why")->str, "none");
	ck_assert_int_eq(jm_get(d, "procs")->n, 3);
	pr = &jm_get(d, "procs")->v[2];
	ck_assert_int_eq(jm_get(pr, "pid")->ll, -1);
	ck_assert_str_eq(jm_get(pr, "name")->str, "other");
	ck_assert_int_eq(jm_get(&jm_get(d, "exporters")->v[0], "other")->t,
	    JM_BOOL);
	ck_assert_int_eq(jm_get(&jm_get(d, "shared")->v[0], "pids")->n, 2);
	jm_free(j);
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);
	window_dmabuf_free(p);

	/* a list not read: why, not zeros */
	p = tally3(2);
	p->iter_why = DMABUF_ITER_WHY_KERNEL;
	res = answer_of(p, 1);
	sbuf_init(&o);
	fmt_dmabuf(&o, res->dmabuf);
	ck_assert_msg(strstr(sbuf_str(&o),
			  "kernel list (iter/dmabuf): not read "
			  "(no_kernel_iter): every pass walked /proc\n") !=
		NULL,
	    "%s", sbuf_str(&o));
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);
	window_dmabuf_free(p);

	/* no pass: said, not zeros */
	res = answer_of(NULL, 0);
	ck_assert(!res->dmabuf->on);
	sbuf_init(&o);
	fmt_dmabuf(&o, res->dmabuf);
	ck_assert_ptr_nonnull(strstr(sbuf_str(&o), "no pass in the 0 stored"));
	sbuf_free(&o);
	vitals__response__free_unpacked(res, NULL);
}
END_TEST

START_TEST(test_config)
{
	struct dmabuf_config c;

	dmabuf_config_init(&c);
	ck_assert(c.on);
	ck_assert_uint_eq(c.interval_s, DMABUF_INTERVAL_S_DEFAULT);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf", "off"), 0);
	ck_assert(!c.on);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf", "maybe"), -EINVAL);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_interval_s", "0"), 0);
	ck_assert_uint_eq(c.interval_s, 0);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_fd_budget", "100"), 0);
	ck_assert_uint_eq(c.fd_budget, 100);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_procs", "0"), -ERANGE);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_procs", "5000"),
	    -ERANGE);
	ck_assert(c.iter);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_iter", "off"), 0);
	ck_assert(!c.iter);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_iter", "on"), -EINVAL);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_iter", "auto"), 0);
	ck_assert(c.iter);
	ck_assert_int_eq(dmabuf_config_set(&c, "dmabuf_x", "1"), -ENOENT);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dmabuf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_fdinfo);
	tcase_add_test(tc, test_parse_sysfs_link);
	tcase_add_test(tc, test_tally);
	tcase_add_test(tc, test_tally_exporters);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_merge_no_buffer);
	tcase_add_test(tc, test_iter_parse);
	tcase_add_test(tc, test_codec);
	tcase_add_test(tc, test_store);
	tcase_add_test(tc, test_wire_client);
	tcase_add_test(tc, test_config);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
