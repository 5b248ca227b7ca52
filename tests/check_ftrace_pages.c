/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Raw ring-buffer pages built here, byte by byte, from the documented
 * layout (events/header_page: u64 timestamp, u64 commit whose low bits are
 * the data length, bit 31 "events lost before this page", bit 30 "their
 * number follows the data"; each event a u32 header of type_len:5 and
 * time_delta:27, type_len 1..28 giving the data length in words) and
 * decoded with the format files under tests/fixtures/ftrace/events.
 * binder and gpu_mem are absent on the CI kernel; this is their coverage.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

#define PAGE 4096
#define ID_PRINT 5 /* ftrace/print in the fixture (this kernel's) */
#define ID_BINDER_TXN 1501
#define ID_BINDER_RECV 1502
#define ID_GPU_MEM 1601
#define RB_EXTEND 30

struct page {
	unsigned char b[PAGE];
	size_t len; /* data bytes after the header */
};

static void
page_init(struct page *p, uint64_t ts)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->b, &ts, 8);
}

/* One event: header word, then data padded to a word. */
static void
page_event(struct page *p, uint32_t delta, const void *data, size_t len)
{
	size_t words = (len + 3) / 4;
	uint32_t hdr;

	ck_assert_uint_le(words, 28);
	hdr = (uint32_t)words | delta << 5;
	memcpy(p->b + 16 + p->len, &hdr, 4);
	memcpy(p->b + 16 + p->len + 4, data, len);
	p->len += 4 + words * 4;
}

/* A long event: type_len 0, the length word (itself included) first. */
static void
page_event_long(struct page *p, uint32_t delta, const void *data, size_t len)
{
	uint32_t hdr = delta << 5, l = (uint32_t)(len + 4);
	size_t words = (len + 3) / 4;

	memcpy(p->b + 16 + p->len, &hdr, 4);
	memcpy(p->b + 16 + p->len + 4, &l, 4);
	memcpy(p->b + 16 + p->len + 8, data, len);
	p->len += 8 + words * 4;
}

/* A time extend: delta bits 27 and up in the next word. */
static void
page_extend(struct page *p, uint64_t delta)
{
	uint32_t hdr = RB_EXTEND | (uint32_t)(delta & ((1u << 27) - 1)) << 5;
	uint32_t hi = (uint32_t)(delta >> 27);

	memcpy(p->b + 16 + p->len, &hdr, 4);
	memcpy(p->b + 16 + p->len + 4, &hi, 4);
	p->len += 8;
}

static void
page_seal(struct page *p, uint64_t flags)
{
	uint64_t commit = p->len | flags;

	memcpy(p->b + 8, &commit, 8);
}

static void
common(unsigned char *d, uint16_t id, int32_t pid)
{
	memcpy(d, &id, 2);
	d[2] = 0;
	d[3] = 0;
	memcpy(d + 4, &pid, 4);
}

static void
ev_binder(struct page *p, uint32_t delta, int32_t tid, int32_t to_proc,
    int32_t reply, uint32_t flags)
{
	unsigned char d[36] = { 0 };
	int32_t debug_id = 77, node = 5, to_thread = to_proc + 1;
	uint32_t code = 3;

	common(d, ID_BINDER_TXN, tid);
	memcpy(d + 8, &debug_id, 4);
	memcpy(d + 12, &node, 4);
	memcpy(d + 16, &to_proc, 4);
	memcpy(d + 20, &to_thread, 4);
	memcpy(d + 24, &reply, 4);
	memcpy(d + 28, &code, 4);
	memcpy(d + 32, &flags, 4);
	page_event(p, delta, d, sizeof(d));
}

static void
ev_recv(struct page *p, uint32_t delta, int32_t tid)
{
	unsigned char d[12] = { 0 };
	int32_t debug_id = 77;

	common(d, ID_BINDER_RECV, tid);
	memcpy(d + 8, &debug_id, 4);
	page_event(p, delta, d, sizeof(d));
}

/* binder_transaction with every field given (the fixture's layout) */
static void
ev_txn(struct page *p, uint32_t delta, int32_t tid, int32_t debug_id,
    int32_t to_proc, int32_t to_thread, int32_t reply, uint32_t flags,
    uint32_t code)
{
	unsigned char d[36] = { 0 };
	int32_t node = 5;

	common(d, ID_BINDER_TXN, tid);
	memcpy(d + 8, &debug_id, 4);
	memcpy(d + 12, &node, 4);
	memcpy(d + 16, &to_proc, 4);
	memcpy(d + 20, &to_thread, 4);
	memcpy(d + 24, &reply, 4);
	memcpy(d + 28, &code, 4);
	memcpy(d + 32, &flags, 4);
	page_event(p, delta, d, sizeof(d));
}

static void
ev_rcv(struct page *p, uint32_t delta, int32_t tid, int32_t debug_id)
{
	unsigned char d[12] = { 0 };

	common(d, ID_BINDER_RECV, tid);
	memcpy(d + 8, &debug_id, 4);
	page_event(p, delta, d, sizeof(d));
}

/* An absolute time stamp (type_len 31): the fast walker leaves such a
 * page to libtraceevent's kbuffer. */
static void
page_abs(struct page *p, uint64_t ts)
{
	uint32_t hdr = 31 | (uint32_t)(ts & ((1u << 27) - 1)) << 5;
	uint32_t hi = (uint32_t)(ts >> 27);

	memcpy(p->b + 16 + p->len, &hdr, 4);
	memcpy(p->b + 16 + p->len + 4, &hi, 4);
	p->len += 8;
}

static void
ev_gpu(struct page *p, uint32_t delta, uint32_t gpu, uint32_t pid,
    uint64_t size)
{
	unsigned char d[24] = { 0 };

	common(d, ID_GPU_MEM, 0);
	memcpy(d + 8, &gpu, 4);
	memcpy(d + 12, &pid, 4);
	memcpy(d + 16, &size, 8);
	page_event(p, delta, d, sizeof(d));
}

static void
ev_print(struct page *p, uint32_t delta, int32_t tid, const char *text)
{
	unsigned char d[112] = { 0 };
	uint64_t ip = 0xffffffff81000000ULL;
	size_t n = strlen(text) + 1;

	ck_assert_uint_le(16 + n, sizeof(d));
	common(d, ID_PRINT, tid);
	memcpy(d + 8, &ip, 8);
	memcpy(d + 16, text, n);
	page_event(p, delta, d, 16 + n);
}

static void
ev_unknown(struct page *p, uint32_t delta)
{
	unsigned char d[8];

	common(d, 9999, 1);
	page_event(p, delta, d, sizeof(d));
}

/* ------------------------------------------------------------ fixtures */

static struct fdec *
open_dec(void)
{
	struct fdec *fd = NULL;

	ck_assert_int_eq(fdec_new(tu_srcpath("fixtures/ftrace/events"), &fd),
	    0);
	return fd;
}

static void
to_atrace(const struct ftrace_rec *r, void *arg)
{
	atrace_record(arg, r);
}

static int32_t
tgid_3000(int32_t tid, void *arg)
{
	(void)arg;
	return tid >= 300 && tid < 310 ? 3000 : -1;
}

struct gpu_seen {
	unsigned n;
	struct ftrace_gpu_mem e[8];
};

static void
gpu_cb(const struct ftrace_gpu_mem *e, void *arg)
{
	struct gpu_seen *g = arg;

	if (g->n < 8)
		g->e[g->n++] = *e;
}

START_TEST(test_formats)
{
	struct fdec *fd = open_dec();

	ck_assert(fdec_has(fd, FEV_PRINT));
	ck_assert(fdec_has(fd, FEV_SCHED_SWITCH));
	ck_assert(fdec_has(fd, FEV_BINDER_TXN));
	ck_assert(fdec_has(fd, FEV_BINDER_RECV));
	ck_assert(fdec_has(fd, FEV_GPU_MEM));
	ck_assert(!fdec_has(fd, FEV_SCHED_WAKING)); /* not in the fixture */
	fdec_free(fd);
}
END_TEST

START_TEST(test_binder_gpu_print)
{
	struct fdec *fd = open_dec();
	struct atrace *at = NULL;
	struct window_trace *t = calloc(1, sizeof(*t));
	struct gpu_seen seen = { 0 };
	struct page p;
	int64_t missed = -5;
	unsigned i;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(atrace_new(&at), 0);
	atrace_set_tgid_fn(at, tgid_3000, NULL);
	atrace_set_gpu_mem_cb(at, gpu_cb, &seen);
	page_init(&p, 5000000000ULL);
	ev_binder(&p, 0, 300, 400, 0, 0);      /* call */
	ev_binder(&p, 100, 301, 400, 0, 0x01); /* oneway */
	ev_recv(&p, 50, 401);
	ev_binder(&p, 1000, 401, 3000, 1, 0); /* 401's reply to 3000 */
	ev_recv(&p, 50, 300);
	ev_binder(&p, 10, 300, 500, 0, 0x10); /* call with other flags */
	ev_gpu(&p, 10, 0, 0, 1000);
	ev_gpu(&p, 10, 0, 77, 4096);
	ev_print(&p, 10, 305, "B|3000|binder call");
	ev_unknown(&p, 10);
	ev_gpu(&p, 2000000, 0, 77, 8192);
	ev_print(&p, 3000000, 305, "E|3000");
	page_seal(&p, 0);
	ck_assert_int_eq(fdec_page(fd, p.b, PAGE, 2, to_atrace, at, &missed),
	    12);
	ck_assert_int_eq(missed, 0);
	atrace_window(at, t);

	ck_assert_uint_eq(t->events, 12);
	ck_assert_uint_eq(t->unknown_events, 1);
	ck_assert_uint_eq(t->binder_received, 2);
	ck_assert_uint_eq(t->binder_total.calls, 2);
	ck_assert_uint_eq(t->binder_total.oneway, 1);
	ck_assert_uint_eq(t->binder_total.replies, 1);
	ck_assert_uint_eq(t->nbinder, 3);
	for (i = 0; i < t->nbinder; i++) {
		const struct window_trace_binder *b = &t->binder[i];

		if (b->from_pid == 3000 && b->to_pid == 400) {
			ck_assert_uint_eq(b->calls, 1);
			ck_assert_uint_eq(b->oneway, 1);
			ck_assert_uint_eq(b->replies, 0);
		} else if (b->from_pid == 3000 && b->to_pid == 500) {
			ck_assert_uint_eq(b->calls, 1);
		} else {
			/* 401's process is unknown: the thread stands in */
			ck_assert_int_eq(b->from_pid, 401);
			ck_assert_int_eq(b->to_pid, 3000);
			ck_assert_uint_eq(b->replies, 1);
		}
	}

	ck_assert_uint_eq(t->gpu_events, 3);
	ck_assert_uint_eq(t->ngpu, 2);
	ck_assert_int_eq(t->gpu[0].pid, 0);
	ck_assert_uint_eq(t->gpu[0].last_size, 1000);
	ck_assert_int_eq(t->gpu[1].pid, 77);
	ck_assert_uint_eq(t->gpu[1].events, 2);
	ck_assert_uint_eq(t->gpu[1].last_size, 8192);
	/* delivered to the GPU memory timeline with their times */
	ck_assert_uint_eq(seen.n, 3);
	ck_assert_int_eq(seen.e[2].pid, 77);
	ck_assert_uint_eq(seen.e[2].size, 8192);
	ck_assert_int_eq(seen.e[0].mono_ns, 5000000000LL + 1220);
	ck_assert_int_eq(seen.e[2].mono_ns, 5000000000LL + 1250 + 2000000);

	/* the slice from the markers of the same page: 5 ms + 10 ns */
	ck_assert_uint_eq(t->nslices, 1);
	ck_assert_str_eq(t->slice[0].name, "binder call");
	ck_assert_int_eq(t->slice[0].tid, 305);
	ck_assert_int_eq(t->slice[0].tgid, 3000);
	ck_assert_uint_eq(t->slice[0].total_ns, 5000010);
	free(t);
	atrace_free(at);
	fdec_free(fd);
}
END_TEST

/*
 * Transactions through the real decoder, both ways a page is read: the
 * fast walker and, for a page with an absolute time stamp, kbuffer. The
 * same records give the same rows: code and to_thread are decoded, a
 * two-way call pairs with its received and its reply, a one-way call with
 * its received only.
 */
static void
binder_page(struct page *p, bool abs)
{
	page_init(p, 1000);
	if (abs)
		page_abs(p, 1000);
	ev_txn(p, 0, 300, 41, 400, 0, 0, 0, 0x5f); /* 3000 -> 400 */
	ev_rcv(p, 40000, 401, 41);		   /* 40 µs */
	ev_txn(p, 100, 300, 42, 400, 0, 0, 0x01, 0x11);
	ev_rcv(p, 7000, 402, 42); /* one-way, 7 µs */
	ev_txn(p, 2000000, 401, 43, 3000, 300, 1, 0, 0);
	ev_rcv(p, 10000, 300, 43);
	page_seal(p, 0);
}

START_TEST(test_binder_latency_both_paths)
{
	struct window_trace *t[2];
	unsigned pass;

	for (pass = 0; pass < 2; pass++) {
		struct fdec *fd = open_dec();
		struct atrace *at = NULL;
		const struct window_trace_btxn *b = NULL;
		struct page p;
		int64_t missed = 0;
		unsigned i;

		ck_assert_ptr_nonnull(t[pass] = calloc(1, sizeof(*t[pass])));
		ck_assert_int_eq(atrace_new(&at), 0);
		atrace_set_tgid_fn(at, tgid_3000, NULL);
		binder_page(&p, pass == 1);
		ck_assert_int_eq(fdec_page(fd, p.b, PAGE, 0, to_atrace, at,
				     &missed),
		    6);
		atrace_window(at, t[pass]);
		ck_assert_uint_eq(t[pass]->nbtxn, 2);
		for (i = 0; i < t[pass]->nbtxn; i++)
			if (t[pass]->btxn[i].code == 0x5f)
				b = &t[pass]->btxn[i];
		ck_assert_ptr_nonnull(b);
		ck_assert_int_eq(b->from_pid, 3000);
		ck_assert_int_eq(b->to_pid, 400);
		ck_assert_uint_eq(b->twoway, 1);
		ck_assert_uint_eq(b->received, 1);
		ck_assert_uint_eq(b->recv_sum_ns, 40000);
		ck_assert_uint_eq(b->replied, 1);
		/* the reply came 2 ms + 7.1 µs after the call's send */
		ck_assert_uint_eq(b->reply_sum_ns,
		    40000 + 100 + 7000 + 2000000);
		ck_assert_uint_eq(b->reply_hist[10], 1); /* 1024 ≤ 2047.1 µs */
		b = b == &t[pass]->btxn[0] ? &t[pass]->btxn[1] :
					     &t[pass]->btxn[0];
		ck_assert_uint_eq(b->code, 0x11);
		ck_assert_uint_eq(b->oneway, 1);
		ck_assert_uint_eq(b->recv_sum_ns, 7000);
		ck_assert_uint_eq(b->replied, 0);
		ck_assert_uint_eq(t[pass]->btxn_orphan_recv, 0);
		ck_assert_uint_eq(t[pass]->btxn_orphan_replies, 0);
		atrace_free(at);
		fdec_free(fd);
	}
	/* the fast walker and kbuffer agree row for row */
	ck_assert_int_eq(memcmp(t[0]->btxn, t[1]->btxn, sizeof(t[0]->btxn)), 0);
	free(t[0]);
	free(t[1]);
}
END_TEST

static void
count_cb(const struct ftrace_rec *r, void *arg)
{
	(void)r;
	(*(unsigned *)arg)++;
}

START_TEST(test_lost_flags)
{
	struct fdec *fd = open_dec();
	uint64_t stored = 1234;
	unsigned n = 0;
	int64_t missed = 0;
	struct page p;

	/* lost, number stored after the data */
	page_init(&p, 1000);
	ev_recv(&p, 0, 1);
	memcpy(p.b + 16 + p.len, &stored, 8);
	page_seal(&p, 1ULL << 31 | 1ULL << 30);
	ck_assert_int_eq(fdec_page(fd, p.b, PAGE, 0, count_cb, &n, &missed), 1);
	ck_assert_int_eq(missed, 1234);
	/* lost, number unknown */
	page_init(&p, 1000);
	ev_recv(&p, 0, 1);
	page_seal(&p, 1ULL << 31);
	ck_assert_int_eq(fdec_page(fd, p.b, PAGE, 0, count_cb, &n, &missed), 1);
	ck_assert_int_eq(missed, -1);
	fdec_free(fd);
}
END_TEST

START_TEST(test_bad_pages)
{
	struct fdec *fd = open_dec();
	unsigned n = 0;
	int64_t missed = 0;
	struct page p;

	page_init(&p, 1000);
	ev_recv(&p, 0, 1);
	page_seal(&p, 0);
	/* shorter than its header says */
	ck_assert_int_eq(fdec_page(fd, p.b, 16 + p.len - 1, 0, count_cb, &n,
			     &missed),
	    -EBADMSG);
	ck_assert_int_eq(fdec_page(fd, p.b, 8, 0, count_cb, &n, &missed),
	    -EBADMSG);
	/* a length beyond the page */
	page_seal(&p, PAGE);
	ck_assert_int_eq(fdec_page(fd, p.b, PAGE, 0, count_cb, &n, &missed),
	    -EBADMSG);
	ck_assert_uint_eq(n, 0);
	/* an empty page is no records */
	page_init(&p, 1000);
	page_seal(&p, 0);
	ck_assert_int_eq(fdec_page(fd, p.b, PAGE, 0, count_cb, &n, &missed), 0);
	fdec_free(fd);
}
END_TEST

/*
 * A damaged page (found by fuzz_atrace) whose records do not move the
 * walk on: fdec_page used to loop forever on it. It must end, with at
 * most as many records as 4-byte headers fit in the page.
 */
START_TEST(test_page_no_progress)
{
	struct fdec *fd = open_dec();
	uint8_t page[4096] = { 0 };
	unsigned n = 0;
	int64_t missed = 0;
	size_t len;
	int r;
	FILE *f;

	f = fopen(tu_srcpath("fixtures/ftrace/page-no-progress.bin"), "rb");
	ck_assert_ptr_nonnull(f);
	len = fread(page, 1, sizeof(page), f);
	fclose(f);
	ck_assert_uint_gt(len, 16);
	r = fdec_page(fd, page, len, 0, count_cb, &n, &missed);
	ck_assert(r == -EBADMSG || (r >= 0 && (size_t)r <= len / 4 + 1));
	ck_assert_uint_le(n, len / 4 + 1);
	fdec_free(fd);
}
END_TEST

/*
 * A page (found by fuzz_atrace) that the fast walker leaves to
 * libtraceevent's kbuffer, with a length word that sends kbuffer's walk
 * back onto itself: kbuffer_load_subbuffer() never returned. It is refused
 * before kbuffer sees it (the test's timeout catches a hang).
 */
START_TEST(test_page_kbuffer_loop)
{
	struct fdec *fd = open_dec();
	uint8_t page[4096] = { 0 };
	unsigned n = 0;
	int64_t missed = 0;
	size_t len;
	FILE *f;

	f = fopen(tu_srcpath("fixtures/ftrace/page-kbuffer-loop.bin"), "rb");
	ck_assert_ptr_nonnull(f);
	len = fread(page, 1, sizeof(page), f);
	fclose(f);
	ck_assert_uint_gt(len, 16);
	ck_assert_int_eq(fdec_page(fd, page, len, 0, count_cb, &n, &missed),
	    -EBADMSG);
	ck_assert_uint_eq(n, 0);
	/* the same with the whole page behind it, as the reader passes it */
	ck_assert_int_eq(fdec_page(fd, page, sizeof(page), 0, count_cb, &n,
			     &missed),
	    -EBADMSG);
	fdec_free(fd);
}
END_TEST

START_TEST(test_missing_formats)
{
	struct fdec *fd = NULL;
	char *dir = tu_mkdtemp("ftfmt");
	char path[512];

	ck_assert_ptr_nonnull(dir);
	/* no header_page: not a tracefs events directory */
	ck_assert_int_lt(fdec_new(dir, &fd), 0);
	snprintf(path, sizeof(path), "%s/header_page", dir);
	ck_assert_int_eq(
	    tu_writes(path,
		"\tfield: u64 timestamp;\toffset:0;"
		"\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\t"
		"size:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\t"
		"size:1;\tsigned:1;\n\tfield: char data;\toffset:16;\t"
		"size:4080;\tsigned:0;\n"),
	    0);
	ck_assert_int_eq(fdec_new(dir, &fd), 0);
	ck_assert(!fdec_has(fd, FEV_PRINT));
	ck_assert(!fdec_has(fd, FEV_GPU_MEM));
	fdec_free(fd);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* Long records (type_len 0) and time extends, as the kernel writes them
 * for names near the limit and for gaps above 2^27 ns. */
START_TEST(test_long_and_extend)
{
	struct fdec *fd = open_dec();
	struct atrace *at = NULL;
	struct window_trace *t = calloc(1, sizeof(*t));
	unsigned char d[256] = { 0 };
	uint64_t ip = 1;
	char name[200];
	int64_t missed;
	int32_t tid = 77;
	uint16_t id = ID_PRINT;
	struct page p;
	size_t n;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(atrace_new(&at), 0);
	memset(name, 'q', 127);
	name[127] = '\0';
	n = (size_t)snprintf((char *)d + 16, sizeof(d) - 16, "B|7|%s", name) +
	    1;
	memcpy(d, &id, 2);
	memcpy(d + 4, &tid, 4);
	memcpy(d + 8, &ip, 8);
	page_init(&p, 1000);
	page_event_long(&p, 5, d, 16 + n);
	page_extend(&p, 3ULL << 30); /* 3.2 s later */
	ev_print(&p, 7, 77, "E|7");
	page_seal(&p, 0);
	ck_assert_int_eq(fdec_page(fd, p.b, PAGE, 1, to_atrace, at, &missed),
	    2);
	atrace_window(at, t);
	ck_assert_uint_eq(t->nslices, 1);
	ck_assert_uint_eq(strlen(t->slice[0].name), 127);
	ck_assert_uint_eq(t->slice[0].total_ns, (3ULL << 30) + 7);
	free(t);
	atrace_free(at);
	fdec_free(fd);
}
END_TEST

static Suite *
ftrace_pages_suite(void)
{
	Suite *s = suite_create("ftrace_pages");
	TCase *tc = tcase_create("pages");

	tcase_add_test(tc, test_formats);
	tcase_add_test(tc, test_binder_gpu_print);
	tcase_add_test(tc, test_binder_latency_both_paths);
	tcase_add_test(tc, test_lost_flags);
	tcase_add_test(tc, test_long_and_extend);
	tcase_add_test(tc, test_bad_pages);
	tcase_add_test(tc, test_page_no_progress);
	tcase_add_test(tc, test_page_kbuffer_loop);
	tcase_add_test(tc, test_missing_formats);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(ftrace_pages_suite());
}
