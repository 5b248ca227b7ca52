/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ATrace without a kernel: the marker protocol parser, slice pairing
 * (nesting per thread, async and track slices by key), incomplete slices
 * (lost events, thread exit, stop, ends without begins), counters, the
 * window reduction and roll-up merge, run-queue delay from sched records
 * (wakeups, preemptions, wakeups absorbed by a running thread, loss), and
 * the store (schema v5) round trip.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

#define MS NSEC_PER_MSEC

/* ---------------------------------------------------------- parser */

START_TEST(test_parse_forms)
{
	struct atrace_msg m;
	const char *s;

	s = "B|1234|do work\n";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_int_eq(m.type, 'B');
	ck_assert_int_eq(m.pid, 1234);
	ck_assert_uint_eq(m.name_len, 7);
	ck_assert_int_eq(memcmp(m.name, "do work", 7), 0);

	/* a name holding the separator keeps it (only B's name is the rest) */
	s = "B|7|a|b";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_uint_eq(m.name_len, 3);

	s = "E|1234";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_int_eq(m.type, 'E');
	ck_assert(m.have_pid);
	s = "E";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert(!m.have_pid);

	s = "C|10|queue depth|-42";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_int_eq(m.value, -42);
	ck_assert_uint_eq(m.name_len, 11);
	s = "C|10|q|7|category"; /* a trailing category is allowed */
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_int_eq(m.value, 7);

	s = "S|10|load image|99";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_int_eq(m.cookie, 99);
	ck_assert_uint_eq(m.name_len, 10);
	s = "F|10|load image|-3";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_int_eq(m.cookie, -3);

	s = "G|10|track one|slice x|5";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_uint_eq(m.track_len, 9);
	ck_assert_uint_eq(m.name_len, 7);
	ck_assert_int_eq(m.cookie, 5);
	s = "H|10|track one|5";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_uint_eq(m.track_len, 9);
	ck_assert_int_eq(m.cookie, 5);
	s = "H|10|track one|slice x|5"; /* the older H with a name */
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_int_eq(m.cookie, 5);

	s = "I|10|tap";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	s = "N|10|track|tap";
	ck_assert_int_eq(atrace_parse(s, strlen(s), &m), 0);
	ck_assert_uint_eq(m.name_len, 3);
}
END_TEST

START_TEST(test_parse_rejects)
{
	static const char *const not_atrace[] = { "", "hello", "Bx", "\n",
		"X|1|a" };
	static const char *const bad[] = { "B|", "B|x|a", "B|12", "C|1|a",
		"C|1|a|zz", "S|1|a", "S|1|a|", "F|1|a|x", "G|1|t|5", "H|1|t",
		"B|99999999999|a", "C|1|a|99999999999999999999", "I|1" };
	struct atrace_msg m;
	unsigned i;

	for (i = 0; i < sizeof(not_atrace) / sizeof(*not_atrace); i++)
		ck_assert_msg(atrace_parse(not_atrace[i], strlen(not_atrace[i]),
				  &m) == -EINVAL,
		    "%s", not_atrace[i]);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(atrace_parse(bad[i], strlen(bad[i]), &m) ==
			-EBADMSG,
		    "%s", bad[i]);
}
END_TEST

/* ---------------------------------------------------------- tracker */

static void
mark(struct atrace *at, uint64_t ts, int32_t tid, const char *text)
{
	struct ftrace_rec r;

	memset(&r, 0, sizeof(r));
	r.ts = ts;
	r.tid = tid;
	r.ev = FEV_PRINT;
	r.u.print.buf = text;
	r.u.print.len = strlen(text) + 1;
	atrace_record(at, &r);
}

static const struct window_trace_slice *
find(const struct window_trace *t, unsigned kind, int32_t tid, unsigned depth,
    const char *name)
{
	unsigned i;

	for (i = 0; i < t->nslices; i++)
		if (t->slice[i].kind == kind && t->slice[i].tid == tid &&
		    t->slice[i].depth == depth &&
		    strcmp(t->slice[i].name, name) == 0)
			return &t->slice[i];
	return NULL;
}

static struct window_trace *
close_window(struct atrace *at)
{
	struct window_trace *t = calloc(1, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	atrace_window(at, t);
	return t;
}

START_TEST(test_nesting_two_threads)
{
	struct atrace *at = NULL;
	const struct window_trace_slice *s;
	struct window_trace *t;

	ck_assert_int_eq(atrace_new(&at), 0);
	/* interleaved threads 101 and 102 of process 100 */
	mark(at, 1000 * MS, 101, "B|100|outer");
	mark(at, 1001 * MS, 102, "B|100|outer");
	mark(at, 1010 * MS, 101, "B|100|inner");
	mark(at, 1020 * MS, 102, "B|100|other inner");
	mark(at, 1030 * MS, 101, "E|100");
	mark(at, 1040 * MS, 101, "B|100|inner");
	mark(at, 1045 * MS, 101, "E|100");
	mark(at, 1050 * MS, 102, "E|100");
	mark(at, 1060 * MS, 101, "E|100");
	mark(at, 1080 * MS, 102, "E");
	ck_assert_uint_eq(atrace_open_slices(at), 0);
	t = close_window(at);
	ck_assert_uint_eq(t->slices, 5);
	ck_assert_uint_eq(t->incomplete, 0);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 101, 0, "outer"));
	ck_assert_uint_eq(s->count, 1);
	ck_assert_uint_eq(s->total_ns, 60 * MS);
	ck_assert_int_eq(s->tgid, 100);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 101, 1, "inner"));
	ck_assert_uint_eq(s->count, 2);
	ck_assert_uint_eq(s->total_ns, 25 * MS);
	ck_assert_uint_eq(s->max_ns, 20 * MS);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 102, 0, "outer"));
	ck_assert_uint_eq(s->total_ns, 79 * MS);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 102, 1, "other inner"));
	ck_assert_uint_eq(s->total_ns, 30 * MS);
	/* the next window starts empty */
	free(t);
	t = close_window(at);
	ck_assert_uint_eq(t->nslices, 0);
	ck_assert_uint_eq(t->slices, 0);
	free(t);
	atrace_free(at);
}
END_TEST

START_TEST(test_async_track_counter_instant)
{
	struct atrace *at = NULL;
	const struct window_trace_slice *s;
	struct window_trace *t;
	unsigned i;

	ck_assert_int_eq(atrace_new(&at), 0);
	mark(at, 100 * MS, 11, "S|10|load|1");
	mark(at, 110 * MS, 11, "S|10|load|2");
	mark(at, 130 * MS, 12, "F|10|load|2"); /* another thread ends it */
	mark(at, 150 * MS, 11, "F|10|load|1");
	mark(at, 200 * MS, 11, "G|10|net|fetch|7");
	mark(at, 260 * MS, 12, "H|10|net|7");
	mark(at, 300 * MS, 11, "C|10|depth|3");
	mark(at, 310 * MS, 11, "C|10|depth|9");
	mark(at, 320 * MS, 11, "C|10|depth|-1");
	mark(at, 330 * MS, 11, "I|10|tap");
	mark(at, 340 * MS, 11, "N|10|input|tap");
	mark(at, 350 * MS, 11, "just a trace_marker line");
	t = close_window(at);
	ck_assert_ptr_nonnull(s = find(t, TRACE_ASYNC, 11, 0, "load"));
	ck_assert_uint_eq(s->count, 2);
	ck_assert_uint_eq(s->total_ns, 70 * MS);
	ck_assert_uint_eq(s->max_ns, 50 * MS);
	ck_assert_ptr_nonnull(s = find(t, TRACE_TRACK, 11, 0, "fetch"));
	ck_assert_uint_eq(s->count, 1);
	ck_assert_uint_eq(s->total_ns, 60 * MS);
	ck_assert_ptr_nonnull(s = find(t, TRACE_INSTANT, 11, 0, "tap"));
	ck_assert_uint_eq(s->count, 2);
	ck_assert_uint_eq(t->ncounters, 1);
	ck_assert_str_eq(t->counter[0].name, "depth");
	ck_assert_int_eq(t->counter[0].last, -1);
	ck_assert_int_eq(t->counter[0].min, -1);
	ck_assert_int_eq(t->counter[0].max, 9);
	ck_assert_uint_eq(t->counter[0].n, 3);
	ck_assert_uint_eq(t->bad_markers, 1);
	for (i = 0; i < t->nslices; i++)
		ck_assert_uint_eq(t->slice[i].incomplete, 0);
	free(t);
	atrace_free(at);
}
END_TEST

START_TEST(test_incomplete)
{
	struct atrace *at = NULL;
	const struct window_trace_slice *s;
	struct ftrace_rec r;
	struct window_trace *t;

	ck_assert_int_eq(atrace_new(&at), 0);
	/* an end whose begin came before the reader started */
	mark(at, 10 * MS, 21, "E|20");
	/* a begin whose thread exits */
	mark(at, 20 * MS, 22, "B|20|never ends");
	memset(&r, 0, sizeof(r));
	r.ts = 30 * MS;
	r.ev = FEV_PROCESS_EXIT;
	r.u.exit.tid = 22;
	atrace_record(at, &r);
	/* a begin, then lost events, then an end: the pair is not trusted */
	mark(at, 40 * MS, 23, "B|20|across loss");
	atrace_lost(at);
	mark(at, 50 * MS, 23, "E|20");
	/* async slices of a process whose leader exits */
	mark(at, 60 * MS, 20, "S|20|pending|1");
	r.ts = 70 * MS;
	r.u.exit.tid = 20;
	atrace_record(at, &r);
	/* still open at stop */
	mark(at, 80 * MS, 24, "B|20|at stop");
	mark(at, 80 * MS, 24, "G|20|trk|open track|3");
	atrace_finish(at);
	t = close_window(at);
	ck_assert_uint_eq(t->slices, 0);
	ck_assert_uint_eq(t->incomplete, 7);
	ck_assert_uint_eq(t->orphan_ends, 2);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 21, 0, ""));
	ck_assert_uint_eq(s->incomplete, 1);
	ck_assert_uint_eq(s->total_ns, 0);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 22, 0, "never ends"));
	ck_assert_uint_eq(s->incomplete, 1);
	ck_assert_uint_eq(s->count, 0);
	ck_assert_uint_eq(s->total_ns, 0);
	ck_assert_uint_eq(s->max_ns, 0);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 23, 0, "across loss"));
	ck_assert_uint_eq(s->incomplete, 1);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 23, 0, ""));
	ck_assert_uint_eq(s->incomplete, 1);
	ck_assert_ptr_nonnull(s = find(t, TRACE_ASYNC, 20, 0, "pending"));
	ck_assert_uint_eq(s->incomplete, 1);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 24, 0, "at stop"));
	ck_assert_uint_eq(s->incomplete, 1);
	ck_assert_ptr_nonnull(s = find(t, TRACE_TRACK, 24, 0, "open track"));
	ck_assert_uint_eq(s->incomplete, 1);
	ck_assert_uint_eq(atrace_open_slices(at), 0);
	free(t);
	atrace_free(at);
}
END_TEST

/* One B/E pair named name (at ms t and t + 1) on thread 6. */
static void
mark_named(struct atrace *at, uint64_t t, const char *name)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "B|5|%s", name);
	mark(at, t * MS, 6, buf);
	mark(at, (t + 1) * MS, 6, "E|5");
}

/* n copies of the UTF-8 character c, then tail, into dst. */
static char *
repeat(char *dst, const char *c, size_t n, const char *tail)
{
	size_t i, len = strlen(c);

	for (i = 0; i < n; i++)
		memcpy(dst + i * len, c, len);
	strcpy(dst + n * len, tail);
	return dst;
}

/*
 * Names are measured as the platform measures them, in UTF-16 code units
 * (127 at most): a BMP character is one unit whatever its UTF-8 length,
 * a supplementary one (4 bytes) two and never split; a byte name_clean()
 * turns into '?' one.
 */
START_TEST(test_names)
{
	struct atrace *at = NULL;
	struct window_trace *t;
	char in[600], want[600];
	const struct window_trace_slice *s;

	ck_assert_int_eq(atrace_new(&at), 0);
	/* 127 ASCII: whole */
	mark_named(at, 1, repeat(in, "a", 127, ""));
	/* 126 ASCII, a 3-byte character (unit 127), then more: cut after
	 * the character, 129 bytes kept */
	mark_named(at, 3,
	    repeat(in, "b", 126,
		"\xe2\x82\xac"
		"tail"));
	/* 127 CJK characters, 381 bytes: whole */
	mark_named(at, 5, repeat(in, "\xe6\x97\xa5", 127, ""));
	/* 126 ASCII and a supplementary character (units 127 and 128): cut
	 * before it, the pair is not split */
	mark_named(at, 7, repeat(in, "c", 126, "\xf0\x9f\x98\x80"));
	/* 125 ASCII and the same character (units 126, 127): whole */
	mark_named(at, 9, repeat(in, "d", 125, "\xf0\x9f\x98\x80"));
	/* 128 ASCII: the last one cut */
	mark_named(at, 11, repeat(in, "e", 128, ""));
	/* 130 stray bytes, one '?' (one unit) each: 127 kept */
	mark_named(at, 13, repeat(in, "\xff", 130, ""));
	mark_named(at, 15, "draw frame \xc3\xa9\xe6\x97\xa5 \xf0\x9f\x98\x80");
	t = close_window(at);
	ck_assert_ptr_nonnull(
	    s = find(t, TRACE_SYNC, 6, 0, repeat(want, "a", 127, "")));
	ck_assert_uint_eq(strlen(s->name), 127);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 6, 0,
				  repeat(want, "b", 126, "\xe2\x82\xac")));
	ck_assert_uint_eq(strlen(s->name), 129);
	ck_assert_ptr_nonnull(s = find(t, TRACE_SYNC, 6, 0,
				  repeat(want, "\xe6\x97\xa5", 127, "")));
	ck_assert_uint_eq(strlen(s->name), 381);
	ck_assert_ptr_nonnull(
	    find(t, TRACE_SYNC, 6, 0, repeat(want, "c", 126, "")));
	ck_assert_ptr_nonnull(find(t, TRACE_SYNC, 6, 0,
	    repeat(want, "d", 125, "\xf0\x9f\x98\x80")));
	ck_assert_ptr_nonnull(
	    find(t, TRACE_SYNC, 6, 0, repeat(want, "e", 127, "")));
	ck_assert_ptr_nonnull(
	    find(t, TRACE_SYNC, 6, 0, repeat(want, "?", 127, "")));
	ck_assert_ptr_nonnull(find(t, TRACE_SYNC, 6, 0,
	    "draw frame \xc3\xa9\xe6\x97\xa5 \xf0\x9f\x98\x80"));
	ck_assert_uint_eq(t->names_cut, 4);
	free(t);
	atrace_free(at);
}
END_TEST

/*
 * A thread's stack of open slices grows as it nests (4, 8, ... 64): every
 * kept level pairs with its own begin, levels beyond 64 end incomplete.
 */
START_TEST(test_deep_nesting)
{
	struct atrace *at = NULL;
	struct window_trace *t;
	const struct window_trace_slice *s;
	char buf[64], name[32];
	unsigned i, depth = VITALS_TRACE_DEPTH + 6;

	ck_assert_int_eq(atrace_new(&at), 0);
	for (i = 0; i < depth; i++) {
		snprintf(buf, sizeof(buf), "B|5|level %u", i);
		mark(at, (i + 1) * MS, 7, buf);
	}
	for (i = depth; i-- > 0;)
		mark(at, (2 * depth - i) * MS, 7, "E|5");
	t = close_window(at);
	for (i = 0; i < VITALS_TRACE_DEPTH; i++) {
		snprintf(name, sizeof(name), "level %u", i);
		ck_assert_msg((s = find(t, TRACE_SYNC, 7, i, name)) != NULL,
		    "level %u", i);
		ck_assert_uint_eq(s->count, 1);
		ck_assert_uint_eq(s->incomplete, 0);
		/* begun at i + 1 ms, ended at 2 * depth - i ms */
		ck_assert_uint_eq(s->total_ns, (2 * depth - 2 * i - 1) * MS);
	}
	for (i = VITALS_TRACE_DEPTH; i < depth; i++) {
		ck_assert_ptr_nonnull(
		    s = find(t, TRACE_SYNC, 7, i, "(too deep)"));
		ck_assert_uint_eq(s->incomplete, 1);
	}
	ck_assert_uint_eq(atrace_open_slices(at), 0);
	free(t);
	atrace_free(at);
}
END_TEST

/* More rows than a window keeps: the rest is folded, totals stay whole. */
START_TEST(test_keep_and_merge)
{
	struct atrace *at = NULL;
	struct window_trace *a, *b;
	uint64_t sum = 0, count = 0;
	char buf[64];
	unsigned i;

	ck_assert_int_eq(atrace_new(&at), 0);
	for (i = 0; i < VITALS_TRACE_SLICES + 10; i++) {
		snprintf(buf, sizeof(buf), "B|1|s%u", i);
		mark(at, 1000 * MS, 2, buf);
		mark(at, 1000 * MS + (i + 1) * MS, 2, "E");
	}
	a = close_window(at);
	ck_assert_uint_eq(a->nslices, VITALS_TRACE_SLICES);
	ck_assert_uint_eq(a->slices_other, 10);
	for (i = 0; i < a->nslices; i++) {
		sum += a->slice[i].total_ns;
		count += a->slice[i].count;
	}
	sum += a->slice_other.total_ns;
	count += a->slice_other.count;
	ck_assert_uint_eq(count, VITALS_TRACE_SLICES + 10);
	/* Σ (i + 1) ms for i < 138 */
	ck_assert_uint_eq(sum, (uint64_t)138 * 139 / 2 * MS);
	/* the heaviest are the kept ones */
	ck_assert_str_eq(a->slice[0].name, "s137");

	mark(at, 5000 * MS, 2, "B|1|s137");
	mark(at, 5500 * MS, 2, "E");
	b = close_window(at);
	ck_assert_int_eq(window_trace_merge(&a, b), 0);
	ck_assert_str_eq(a->slice[0].name, "s137");
	ck_assert_uint_eq(a->slice[0].count, 2);
	ck_assert_uint_eq(a->slice[0].max_ns, 500 * MS);
	ck_assert_uint_eq(a->slices, VITALS_TRACE_SLICES + 11);
	free(a);
	free(b);
	atrace_free(at);
}
END_TEST

/* window_trace_merge() and _trim() on the part a window holds */
static int
merge_part(struct window *w, const struct window_trace *src)
{
	struct window_trace *t = window_trace(w);
	int r = window_trace_merge(&t, src);

	window_part_set(w, WPART_TRACE, t);
	return r;
}

static void
trim_part(struct window *w)
{
	struct window_trace *t = window_trace(w);

	window_trace_trim(&t);
	window_part_set(w, WPART_TRACE, t);
}

/*
 * The part of a window: none until made, the head alone when it keeps no
 * rows, room made before rows are written; a missing part folds as zeros.
 * Under ASan a row written into a head alone is an overflow.
 */
START_TEST(test_part_life)
{
	struct window *w = window_new(1, 0), *c;
	struct window_trace *rows;

	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_null(window_trace(w));
	c = window_dup(w);
	ck_assert_ptr_null(window_trace(c));
	ck_assert_int_eq(window_merge(c, w), 0);
	ck_assert_ptr_null(window_trace(c)); /* nothing from nothing */
	window_free(c);

	/* the state alone, as with ftrace off */
	ck_assert_ptr_nonnull(window_trace_make(w, false));
	ck_assert(window_trace(w)->head_only);
	window_trace(w)->state = FTRACE_OFF_CONFIG;
	window_trace(w)->err = -ENOENT;
	window_trace(w)->buffered = 5;
	c = window_dup(w);
	ck_assert_ptr_nonnull(window_trace(c));
	ck_assert_uint_eq(window_trace(c)->state, FTRACE_OFF_CONFIG);
	ck_assert_int_eq(window_trace(c)->err, -ENOENT);
	window_free(c);

	/* into a window without a part: made, the state taken */
	c = window_new(0, 0);
	ck_assert_int_eq(window_merge(c, w), 0);
	ck_assert_ptr_nonnull(window_trace(c));
	ck_assert_uint_eq(window_trace(c)->state, FTRACE_OFF_CONFIG);
	ck_assert_uint_eq(window_trace(c)->buffered, 5);

	/* rows into a head: room is made for them */
	ck_assert_ptr_nonnull(rows = window_trace_new(true));
	rows->state = FTRACE_ON;
	rows->nrq = 1;
	rows->rq[0] = (struct window_trace_rq){ .tid = 9, .count = 2 };
	ck_assert_int_eq(merge_part(c, rows), 0);
	ck_assert(!window_trace(c)->head_only);
	ck_assert_uint_eq(window_trace(c)->state, FTRACE_ON);
	ck_assert_uint_eq(window_trace(c)->nrq, 1);
	ck_assert_int_eq(window_trace(c)->rq[0].tid, 9);
	/* a missing later part folds as zeros: the gauge goes to 0 */
	ck_assert_int_eq(merge_part(c, NULL), 0);
	ck_assert_uint_eq(window_trace(c)->buffered, 0);
	ck_assert_uint_eq(window_trace(c)->rq[0].count, 2);

	/* a part that kept no rows gives their room back */
	trim_part(c);
	ck_assert(!window_trace(c)->head_only); /* it has one */
	rows->nrq = 0;
	window_trace_trim(&rows);
	ck_assert(rows->head_only);
	ck_assert_uint_eq(rows->state, FTRACE_ON);
	ck_assert_int_eq(window_trace_rows(&rows), 0);
	ck_assert(!rows->head_only);
	ck_assert_uint_eq(rows->nslices, 0);
	rows->gpu[VITALS_TRACE_GPU - 1].pid = 1; /* the last row is there */
	window_trace_free(rows);
	window_free(c);
	window_free(w);
}
END_TEST

/* ------------------------------------------------------ run queue */

static void
sw(struct atrace *at, uint64_t ts, int32_t cpu, int32_t prev, int64_t state,
    int32_t next)
{
	struct ftrace_rec r = { .ts = ts, .cpu = cpu, .ev = FEV_SCHED_SWITCH };

	r.u.sw.prev_tid = prev;
	r.u.sw.prev_state = state;
	r.u.sw.next_tid = next;
	atrace_record(at, &r);
}

static void
wake(struct atrace *at, uint64_t ts, int32_t cpu, int32_t tid, bool fresh)
{
	struct ftrace_rec r = { .ts = ts, .cpu = cpu };

	r.ev = fresh ? FEV_SCHED_WAKEUP_NEW : FEV_SCHED_WAKEUP;
	r.u.waking.tid = tid;
	atrace_record(at, &r);
}

static const struct window_trace_rq *
rq_row(const struct window_trace *t, int32_t tid)
{
	uint32_t i;

	for (i = 0; i < t->nrq; i++)
		if (t->rq[i].tid == tid)
			return &t->rq[i];
	return NULL;
}

#define ST_S 0x1	 /* prev_state: interruptible sleep */
#define ST_D 0x2	 /* uninterruptible */
#define ST_I 0x80	 /* idle kernel thread (TASK_REPORT_IDLE) */
#define ST_PREEMPT 0x100 /* "R+": TASK_REPORT_MAX */

/* A wakeup, or a switch-out that leaves the thread runnable (R, R+), to
 * the next switch-in; CPUs do not matter. */
START_TEST(test_runqueue)
{
	const struct window_trace_rq *q;
	struct atrace *at = NULL;
	struct window_trace *t;

	ck_assert_int_eq(atrace_new(&at), 0);
	wake(at, 100, 1, 5, false); /* woken from CPU 1, runs on CPU 0 */
	sw(at, 130, 0, 0, 0, 5);
	/* 6 is preempted (R) on CPU 1 at 200, runs again on CPU 0 at 260:
	 * a migration keeps the start */
	sw(at, 200, 1, 6, 0, 9);
	sw(at, 260, 0, 5, ST_S, 6);
	/* 9 is preempted in any state (R+) at 300, back at 340 */
	sw(at, 300, 1, 9, ST_PREEMPT, 0);
	sw(at, 340, 1, 0, 0, 9);
	/* a new task: its first wait is from sched_wakeup_new */
	wake(at, 400, 1, 11, true);
	sw(at, 405, 0, 6, ST_D, 11);
	/* 5 slept: a switch-in without a wakeup is no wait */
	sw(at, 500, 0, 11, ST_S, 5);
	t = close_window(at);
	ck_assert_uint_eq(t->sched_switch, 7);
	ck_assert_uint_eq(t->sched_waking, 2); /* the wakeups seen */
	ck_assert_uint_eq(t->rq_total.count, 4);
	ck_assert_uint_eq(t->rq_total.total_ns, 30 + 60 + 40 + 5);
	ck_assert_uint_eq(t->rq_total.max_ns, 60);
	ck_assert_ptr_nonnull(q = rq_row(t, 5));
	ck_assert_uint_eq(q->count, 1);
	ck_assert_uint_eq(q->total_ns, 30);
	ck_assert_ptr_nonnull(q = rq_row(t, 6));
	ck_assert_uint_eq(q->total_ns, 60);
	ck_assert_ptr_nonnull(q = rq_row(t, 9));
	ck_assert_uint_eq(q->total_ns, 40);
	ck_assert_ptr_nonnull(q = rq_row(t, 11));
	ck_assert_uint_eq(q->total_ns, 5);
	free(t);
	atrace_free(at);
}
END_TEST

/*
 * The wait the old pairing invented: a kernel worker woken while it still
 * runs (work queued from another CPU), then asleep; its next real wakeup
 * is the start of its wait, not the one it absorbed seconds earlier.
 */
START_TEST(test_runqueue_absorbed)
{
	const struct window_trace_rq *q;
	struct atrace *at = NULL;
	struct window_trace *t;

	ck_assert_int_eq(atrace_new(&at), 0);
	sw(at, 1000, 0, 0, 0, 20);    /* 20 runs on CPU 0 */
	wake(at, 1100, 1, 20, false); /* woken while it runs */
	wake(at, 1150, 0, 20, false); /* by itself, too */
	sw(at, 1200, 0, 20, ST_I, 0); /* idle again */
	wake(at, 3 * NSEC_PER_SEC, 1, 20, false);
	sw(at, 3 * NSEC_PER_SEC + 25, 0, 0, 0, 20);
	t = close_window(at);
	ck_assert_ptr_nonnull(q = rq_row(t, 20));
	ck_assert_uint_eq(q->count, 1);
	ck_assert_uint_eq(q->total_ns, 25);
	ck_assert_uint_eq(q->max_ns, 25);
	free(t);
	atrace_free(at);
}
END_TEST

/*
 * A thread running since before the trace began is not known to run: a
 * wakeup then starts a wait, and its switch-out asleep clears it (and a
 * switch-out runnable restarts it), as it would any pending start.
 */
START_TEST(test_runqueue_sleep_clears)
{
	const struct window_trace_rq *q;
	struct atrace *at = NULL;
	struct window_trace *t;

	ck_assert_int_eq(atrace_new(&at), 0);
	wake(at, 100, 1, 30, false); /* 30 runs, unseen, on CPU 0 */
	sw(at, 150, 0, 30, ST_S, 0); /* asleep: the start goes */
	wake(at, 500, 1, 30, false);
	sw(at, 520, 0, 0, 0, 30);
	wake(at, 600, 1, 31, false); /* 31 the same, but preempted */
	sw(at, 700, 1, 31, ST_PREEMPT, 0);
	sw(at, 710, 1, 0, 0, 31);
	t = close_window(at);
	ck_assert_ptr_nonnull(q = rq_row(t, 30));
	ck_assert_uint_eq(q->count, 1);
	ck_assert_uint_eq(q->total_ns, 20);
	ck_assert_ptr_nonnull(q = rq_row(t, 31));
	ck_assert_uint_eq(q->count, 1);
	ck_assert_uint_eq(q->total_ns, 10);
	free(t);
	atrace_free(at);
}
END_TEST

/* A wakeup of a thread already waiting (preempted while going to sleep,
 * then woken) keeps the start; a loss forgets starts and what CPUs run. */
START_TEST(test_runqueue_waiting_and_loss)
{
	const struct window_trace_rq *q;
	struct atrace *at = NULL;
	struct window_trace *t;

	ck_assert_int_eq(atrace_new(&at), 0);
	sw(at, 100, 0, 40, ST_PREEMPT, 41);
	wake(at, 150, 1, 40, false);
	sw(at, 300, 1, 0, 0, 40);
	/* 41 runs on CPU 0; events are lost: what runs is not known, so a
	 * wakeup starts a wait its switch-out (asleep) then clears */
	wake(at, 400, 1, 42, false);
	atrace_lost(at);
	sw(at, 500, 1, 0, 0, 42); /* 42's start was lost with the rest */
	wake(at, 600, 1, 41, false);
	sw(at, 650, 0, 41, ST_S, 0);
	wake(at, 700, 1, 41, false);
	sw(at, 707, 0, 0, 0, 41);
	t = close_window(at);
	ck_assert_ptr_nonnull(q = rq_row(t, 40));
	ck_assert_uint_eq(q->total_ns, 200);
	ck_assert_ptr_null(rq_row(t, 42));
	ck_assert_ptr_nonnull(q = rq_row(t, 41));
	ck_assert_uint_eq(q->count, 1);
	ck_assert_uint_eq(q->total_ns, 7);
	free(t);
	atrace_free(at);
}
END_TEST

/* ------------------------------------------------------------ store */

static char *dir;

static void
setup(void)
{
	dir = tu_mkdtemp("atrace");
	ck_assert_ptr_nonnull(dir);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

START_TEST(test_store_round_trip)
{
	int64_t wall = 1700000000LL * NSEC_PER_SEC;
	struct window *w = window_new(1, 0), **ws = NULL;
	struct atrace *at = NULL;
	struct store *s = NULL;
	char path[PATH_MAX], v[64];
	size_t n = 0;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "b0075e7e-0000-4000-8000-7");
	w->hz = 100;
	w->mono_end_ns = 10 * NSEC_PER_SEC;
	w->wall_start_ns = wall;
	w->wall_end_ns = wall + 10 * NSEC_PER_SEC;
	ck_assert_int_eq(atrace_new(&at), 0);
	mark(at, 1 * MS, 6, "B|5|draw \xc3\xa9");
	mark(at, 9 * MS, 6, "E|5");
	mark(at, 10 * MS, 6, "E|5");
	mark(at, 11 * MS, 6, "C|5|fps|60");
	ck_assert_ptr_nonnull(window_trace_make(w, true));
	atrace_window(at, window_trace(w));
	window_trace(w)->state = FTRACE_ON;
	window_trace(w)->enabled = 1u << FEV_PRINT;
	window_trace(w)->missing = 1u << FEV_GPU_MEM;
	window_trace(w)->atrace = true;
	window_trace(w)->overrun = 17;
	window_trace(w)->pages_lost = 2;
	window_trace(w)->binder_total.calls = 3;
	window_trace(w)->nbinder = 1;
	window_trace(w)->binder[0] =
	    (struct window_trace_binder){ .from_pid = 40,
		    .to_pid = 41,
		    .calls = 3 };
	window_trace(w)->ngpu = 1;
	window_trace(w)->gpu[0] = (struct window_trace_gpu){ .gpu_id = 1,
		.pid = 42,
		.events = 2,
		.last_size = 4096 };
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	ck_assert_int_eq(store_put(s, w), 0);
	ck_assert_int_eq(store_exec(s,
			     "SELECT count(*) FROM "
			     "window_trace_slice",
			     v, sizeof(v)),
	    0);
	ck_assert_str_eq(v, "2");
	ck_assert_int_eq(store_windows(s, wall, wall + 20 * NSEC_PER_SEC, 0,
			     &ws, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(window_trace(ws[0])->state, FTRACE_ON);
	ck_assert_uint_eq(window_trace(ws[0])->overrun, 17);
	ck_assert_uint_eq(window_trace(ws[0])->pages_lost, 2);
	ck_assert(window_trace(ws[0])->atrace);
	ck_assert(window_trace_lossy(window_trace(ws[0])));
	ck_assert_uint_eq(window_trace(ws[0])->missing, 1u << FEV_GPU_MEM);
	ck_assert_uint_eq(window_trace(ws[0])->nslices, 2);
	ck_assert_ptr_nonnull(
	    find(window_trace(ws[0]), TRACE_SYNC, 6, 0, "draw \xc3\xa9"));
	ck_assert_uint_eq(find(window_trace(ws[0]), TRACE_SYNC, 6, 0,
			      "draw \xc3\xa9")
			      ->total_ns,
	    8 * MS);
	ck_assert_uint_eq(
	    find(window_trace(ws[0]), TRACE_SYNC, 6, 0, "")->incomplete, 1);
	ck_assert_uint_eq(window_trace(ws[0])->ncounters, 1);
	ck_assert_int_eq(window_trace(ws[0])->counter[0].last, 60);
	ck_assert_uint_eq(window_trace(ws[0])->binder_total.calls, 3);
	ck_assert_int_eq(window_trace(ws[0])->binder[0].to_pid, 41);
	ck_assert_uint_eq(window_trace(ws[0])->gpu[0].last_size, 4096);
	ck_assert_uint_eq(window_trace(ws[0])->incomplete, 1);
	window_free(ws[0]);
	free(ws);
	store_close(s);
	window_free(w);
	atrace_free(at);
}
END_TEST

START_TEST(test_config_keys)
{
	struct config cfg;

	config_init(&cfg);
	ck_assert(cfg.ftrace);
	ck_assert_str_eq(cfg.ftrace_instance, "vitals");
	ck_assert_uint_eq(cfg.ftrace_buffer_kb, 2048);
	ck_assert_uint_eq(cfg.ftrace_sched, FTRACE_SCHED_AUTO);
	ck_assert_int_eq(config_set(&cfg, "ftrace_instance", "a/b"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "ftrace_instance", ".."), -EINVAL);
	/* only names the privileged helper may remove: vitals[A-Za-z0-9_-]* */
	ck_assert_int_eq(config_set(&cfg, "ftrace_instance", "mine"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "ftrace_instance", "vital"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "ftrace_instance", "vitals x"),
	    -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "ftrace_instance", "vitals_mine"), 0);
	ck_assert_str_eq(cfg.ftrace_instance, "vitals_mine");
	ck_assert_int_eq(config_set(&cfg, "ftrace_sched", "on"), 0);
	ck_assert_uint_eq(cfg.ftrace_sched, FTRACE_SCHED_ON);
	ck_assert_int_eq(config_set(&cfg, "ftrace_sched", "maybe"), -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "ftrace", "off"), 0);
	ck_assert(!cfg.ftrace);
	ck_assert_int_eq(config_set(&cfg, "ftrace_buffer_kb", "1"), -ERANGE);
	config_release(&cfg);
}
END_TEST

static Suite *
atrace_suite(void)
{
	Suite *s = suite_create("atrace");
	TCase *tc = tcase_create("pure");
	TCase *st = tcase_create("store");

	tcase_add_test(tc, test_parse_forms);
	tcase_add_test(tc, test_parse_rejects);
	tcase_add_test(tc, test_nesting_two_threads);
	tcase_add_test(tc, test_deep_nesting);
	tcase_add_test(tc, test_async_track_counter_instant);
	tcase_add_test(tc, test_incomplete);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_keep_and_merge);
	tcase_add_test(tc, test_part_life);
	tcase_add_test(tc, test_runqueue);
	tcase_add_test(tc, test_runqueue_absorbed);
	tcase_add_test(tc, test_runqueue_sleep_clears);
	tcase_add_test(tc, test_runqueue_waiting_and_loss);
	tcase_add_test(tc, test_config_keys);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(st, setup, teardown);
	tcase_add_test(st, test_store_round_trip);
	suite_add_tcase(s, st);
	return s;
}

int
main(void)
{
	return tu_run(atrace_suite());
}
