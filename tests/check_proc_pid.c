/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of proc_pid.c: <pid>/stat (check_proc_pid_status.c has
 * <pid>/status and <pid>/cmdline).
 *
 * Every parser call goes through a heap copy of exactly len bytes with no
 * NUL after it, so that AddressSanitizer reports any read past len.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

/* ---------------------------------------------------------------- helpers */

static int
stat_exact(const char *s, size_t len, struct pid_stat *ret)
{
	char *b = tu_exact_copy(s, len);
	int r = pidstat_parse(b, len, ret);

	free(b);
	return r;
}

/* String literals: the length leaves out only the literal's own NUL. */
#define STAT(lit, ret) stat_exact(lit, sizeof(lit) - 1, ret)

/* ------------------------------------------------------------ stat fixtures */

/*
 * surfaceflinger on a 6.x Android kernel, 52 fields: SCHED_FIFO (priority
 * -3, rt_priority 2, policy 1), tpgid -1.
 */
static const char stat_sf[] =
    "612 (surfaceflinger) S 1 612 0 0 -1 1077936384 48213 1021 377 12 "
    "90211 41877 3 5 -3 0 27 0 2468 11061370880 54321 18446744073709551615 "
    "412345036800 412345167872 549755809920 0 0 0 0 4096 1098 0 0 0 17 6 2 "
    "1 0 0 0 412345233408 412345237504 412407214080 549755811621 "
    "549755811648 549755811648 549755813862 0\n";

/* kthreadd, as this kernel prints it: no mm, so vsize and rss are 0. */
static const char stat_kthreadd[] =
    "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 14 0 0 "
    "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 "
    "0 0 0 0 0 0 0\n";

/* An idle kworker: the kernel shows the workqueue after comm, > 15 bytes. */
static const char stat_kworker[] =
    "57 (kworker/u16:2-events_unbound) I 2 0 0 0 -1 69238880 0 0 0 0 0 523 "
    "0 0 20 0 1 0 97 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 "
    "0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

static const char stat_zombie[] =
    "4242 (sh) Z 4100 4242 4100 34816 4242 4227084 91 0 0 0 1 2 0 0 20 0 1 "
    "0 889123 0 0 18446744073709551615 0 0 0 0 0 0 0 0 65536 0 0 0 17 1 0 0 "
    "0 0 0 0 0 0 0 0 0 0 0\n";

static void
assert_stat_eq(const struct pid_stat *a, const struct pid_stat *b)
{
	ck_assert_int_eq(a->pid, b->pid);
	ck_assert_str_eq(a->comm, b->comm);
	ck_assert_int_eq(a->state, b->state);
	ck_assert_int_eq(a->ppid, b->ppid);
	ck_assert_uint_eq(a->minflt, b->minflt);
	ck_assert_uint_eq(a->majflt, b->majflt);
	ck_assert_uint_eq(a->utime, b->utime);
	ck_assert_uint_eq(a->stime, b->stime);
	ck_assert_int_eq(a->num_threads, b->num_threads);
	ck_assert_uint_eq(a->starttime, b->starttime);
	ck_assert_uint_eq(a->vsize, b->vsize);
	ck_assert_uint_eq(a->rss_pages, b->rss_pages);
}

static const struct pid_stat want_sf = {
	.pid = 612,
	.comm = "surfaceflinger",
	.state = 'S',
	.ppid = 1,
	.minflt = 48213,
	.majflt = 377,
	.utime = 90211,
	.stime = 41877,
	.num_threads = 27,
	.starttime = 2468,
	.vsize = 11061370880ULL,
	.rss_pages = 54321,
};

/*
 * A short line whose field n holds the number n, so a field taken from the
 * wrong position shows at once. Field `which` (when > 0) holds `val`
 * instead, as raw text (field 2 with its parentheses).
 */
static size_t
numbered(char *out, size_t sz, int which, const char *val)
{
	size_t off = 0;
	char num[16];
	const char *v;
	int f;

	for (f = 1; f <= 26; f++) {
		if (f == which)
			v = val;
		else if (f == 2)
			v = "(x)";
		else if (f == 3)
			v = "S";
		else {
			snprintf(num, sizeof(num), "%d", f);
			v = num;
		}
		off += (size_t)snprintf(out + off, sz - off, "%s%s",
		    f > 1 ? " " : "", v);
	}
	off += (size_t)snprintf(out + off, sz - off, "\n");
	ck_assert_uint_lt(off, sz);
	return off;
}

static const struct pid_stat want_numbered = {
	.pid = 1,
	.comm = "x",
	.state = 'S',
	.ppid = 4,
	.minflt = 10,
	.majflt = 12,
	.utime = 14,
	.stime = 15,
	.num_threads = 20,
	.starttime = 22,
	.vsize = 23,
	.rss_pages = 24,
};

/* ---------------------------------------------------------------- stat */

START_TEST(stat_real_user)
{
	struct pid_stat st;

	ck_assert_int_eq(STAT(stat_sf, &st), 0);
	assert_stat_eq(&st, &want_sf);
}
END_TEST

START_TEST(stat_kernel_thread)
{
	struct pid_stat st;

	ck_assert_int_eq(STAT(stat_kthreadd, &st), 0);
	ck_assert_int_eq(st.pid, 2);
	ck_assert_str_eq(st.comm, "kthreadd");
	ck_assert_int_eq(st.state, 'S');
	ck_assert_int_eq(st.ppid, 0);
	ck_assert_uint_eq(st.minflt, 0);
	ck_assert_uint_eq(st.majflt, 0);
	ck_assert_uint_eq(st.utime, 0);
	ck_assert_uint_eq(st.stime, 0);
	ck_assert_int_eq(st.num_threads, 1);
	ck_assert_uint_eq(st.starttime, 14);
	ck_assert_uint_eq(st.vsize, 0);
	ck_assert_uint_eq(st.rss_pages, 0);
}
END_TEST

START_TEST(stat_kworker_long_comm)
{
	struct pid_stat st;

	ck_assert_int_eq(STAT(stat_kworker, &st), 0);
	ck_assert_int_eq(st.pid, 57);
	ck_assert_str_eq(st.comm, "kworker/u16:2-e");
	ck_assert_uint_eq(strlen(st.comm), VITALS_COMM_LEN - 1);
	ck_assert_int_eq(st.state, 'I');
	ck_assert_int_eq(st.ppid, 2);
	ck_assert_uint_eq(st.utime, 0);
	ck_assert_uint_eq(st.stime, 523);
	ck_assert_int_eq(st.num_threads, 1);
	ck_assert_uint_eq(st.starttime, 97);
	ck_assert_uint_eq(st.rss_pages, 0);
}
END_TEST

START_TEST(stat_zombie_line)
{
	struct pid_stat st;

	ck_assert_int_eq(STAT(stat_zombie, &st), 0);
	ck_assert_int_eq(st.pid, 4242);
	ck_assert_str_eq(st.comm, "sh");
	ck_assert_int_eq(st.state, 'Z');
	ck_assert_int_eq(st.ppid, 4100);
	ck_assert_uint_eq(st.minflt, 91);
	ck_assert_uint_eq(st.majflt, 0);
	ck_assert_uint_eq(st.utime, 1);
	ck_assert_uint_eq(st.stime, 2);
	ck_assert_int_eq(st.num_threads, 1);
	ck_assert_uint_eq(st.starttime, 889123);
	ck_assert_uint_eq(st.vsize, 0);
	ck_assert_uint_eq(st.rss_pages, 0);
}
END_TEST

START_TEST(stat_field_positions)
{
	struct pid_stat st;
	char line[256];
	size_t n = numbered(line, sizeof(line), 0, NULL);

	ck_assert_int_eq(stat_exact(line, n, &st), 0);
	assert_stat_eq(&st, &want_numbered);
}
END_TEST

/* comm as the kernel writes it (raw) and as vitalsd keeps it. */
static const struct {
	const char *in, *want;
} comm_cases[] = {
	{ "Binder:1234_2", "Binder:1234_2" },
	{ "Jit thread pool", "Jit thread pool" }, /* spaces, exactly 15 */
	{ "(a) (b)", "(a) (b)" },
	{ "((x)", "((x)" },
	{ ") (", ") (" },
	{ ")", ")" },
	{ "(", "(" },
	{ "", "" },
	{ ") S 1 2 3", ") S 1 2 3" }, /* a comm that mimics the fields */
	{ "0123456789abcdef", "0123456789abcde" },
	{ "HeapTaskDaemon) (x", "HeapTaskDaemon)" },
};

START_TEST(stat_comm_shapes)
{
	struct pid_stat st, want = want_numbered;
	char line[256], comm[64];
	size_t n;

	snprintf(comm, sizeof(comm), "(%s)", comm_cases[_i].in);
	n = numbered(line, sizeof(line), 2, comm);
	snprintf(want.comm, sizeof(want.comm), "%s", comm_cases[_i].want);
	ck_assert_int_eq(stat_exact(line, n, &st), 0);
	assert_stat_eq(&st, &want);
}
END_TEST

START_TEST(stat_comm_unprintable)
{
	/* prctl(PR_SET_NAME) takes any bytes but NUL; stat prints them raw. */
	static const char line[] =
	    "77 (a\nb\tc\x1b\x7f\xc3\xa9) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 "
	    "15 16 17 18 19 20 21 22\n";
	struct pid_stat st;

	ck_assert_int_eq(STAT(line, &st), 0);
	ck_assert_int_eq(st.pid, 77);
	ck_assert_str_eq(st.comm, "a?b?c??\xc3\xa9");
	ck_assert_int_eq(st.state, 'S');
	ck_assert_int_eq(st.ppid, 1);
	ck_assert_uint_eq(st.rss_pages, 21);
}
END_TEST

/* name_clean (util.c): the one rule for every name a task chooses. */
static const struct {
	const char *in;
	size_t n;
	const char *want;
} clean_cases[] = {
	{ "plain name", 10, "plain name" },
	{ "\x1b[31mred\x1b[0m", 12, "?[31mred?[0m" },
	{ "a\nb\rc\td", 7, "a?b?c?d" },
	{ "del\x7f", 4, "del?" },
	{ "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 14,
	    "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80" },
	{ "c1\xc2\x9b"
	  "2J",
	    6, "c1?2J" }, /* CSI as U+009B */
	{ "rtl\xe2\x80\xae"
	  "exe",
	    9, "rtl?exe" },		  /* RIGHT-TO-LEFT OVERRIDE */
	{ "ls\xe2\x80\xa8x", 6, "ls?x" }, /* LINE SEPARATOR */
	{ "cut\xe2\x82", 5, "cut??" },	  /* a cut character */
	{ "\xc0\x80\xed\xa0\x80\xff", 6, "??????" }, /* overlong, surrogate */
	{ "nul\0after", 9, "nul?after" },
};

START_TEST(name_clean_rule)
{
	char out[64];
	size_t n;

	n = name_clean(out, clean_cases[_i].in, clean_cases[_i].n);
	ck_assert_str_eq(out, clean_cases[_i].want);
	ck_assert_uint_eq(n, strlen(clean_cases[_i].want));
	ck_assert_uint_le(n, clean_cases[_i].n);
}
END_TEST

START_TEST(stat_extra_fields)
{
	/* A future kernel with more fields, and odd text after field 24. */
	static const char more[] =
	    "9 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 "
	    "23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 "
	    "45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60\n";
	static const char odd_tail[] =
	    "9 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 "
	    "new-field=7 x:y\n";
	struct pid_stat st;

	ck_assert_int_eq(STAT(more, &st), 0);
	ck_assert_int_eq(st.state, 'R');
	ck_assert_int_eq(st.ppid, 1);
	ck_assert_uint_eq(st.minflt, 7);
	ck_assert_uint_eq(st.majflt, 9);
	ck_assert_uint_eq(st.utime, 11);
	ck_assert_uint_eq(st.stime, 12);
	ck_assert_int_eq(st.num_threads, 17);
	ck_assert_uint_eq(st.starttime, 19);
	ck_assert_uint_eq(st.vsize, 20);
	ck_assert_uint_eq(st.rss_pages, 21);

	ck_assert_int_eq(STAT(odd_tail, &st), 0);
	ck_assert_uint_eq(st.rss_pages, 21);
}
END_TEST

START_TEST(stat_exactly_24_fields)
{
	static const char nl[] =
	    "5 (y) D 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n";
	static const char sp[] =
	    "5 (y) D 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 ";
	/* Ends inside field 24: it could be a read cut short. */
	static const char bare[] =
	    "5 (y) D 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21";
	struct pid_stat st;

	ck_assert_int_eq(STAT(nl, &st), 0);
	ck_assert_int_eq(st.state, 'D');
	ck_assert_uint_eq(st.rss_pages, 21);
	ck_assert_int_eq(STAT(sp, &st), 0);
	ck_assert_uint_eq(st.rss_pages, 21);
	tu_poison(&st, sizeof(st));
	ck_assert_int_eq(STAT(bare, &st), -EINVAL);
	ck_assert(tu_is_poisoned(&st, sizeof(st)));
}
END_TEST

START_TEST(stat_missing_fields)
{
	/* Cut after field 20 (num_threads), and after 23. */
	static const char cut20[] =
	    "5 (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n";
	static const char cut23[] =
	    "5 (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n";
	static const char comm_only[] = "5 (y)\n";
	struct pid_stat st;

	tu_poison(&st, sizeof(st));
	ck_assert_int_eq(STAT(cut20, &st), -EINVAL);
	ck_assert_int_eq(STAT(cut23, &st), -EINVAL);
	ck_assert_int_eq(STAT(comm_only, &st), -EINVAL);
	ck_assert(tu_is_poisoned(&st, sizeof(st)));
}
END_TEST

START_TEST(stat_empty)
{
	struct pid_stat st;

	tu_poison(&st, sizeof(st));
	ck_assert_int_eq(stat_exact("", 0, &st), -ENODATA);
	ck_assert_int_eq(pidstat_parse(NULL, 0, &st), -ENODATA);
	ck_assert(tu_is_poisoned(&st, sizeof(st)));
	ck_assert_int_eq(pidstat_parse(NULL, 5, &st), -EINVAL);
	ck_assert_int_eq(pidstat_parse(stat_sf, sizeof(stat_sf) - 1, NULL),
	    -EINVAL);
}
END_TEST

static const char *const stat_garbage[] = {
	"\n",
	" ",
	"hello world",
	"1234",
	"1234 ",
	"1234 (",
	"1234 (x",
	"1234 x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"1234(x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"12  (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	" 12 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"(x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"-5 (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"5 (y)S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"5 (y) S  1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"5 (y) S\t1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n",
	"5 (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21x 22\n",
	"5 (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n21 22\n",
	"5 (y) 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n",
	"5 (y) ) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22)\n",
	"Name:\tcat\nState:\tR (running)\n",
	"\x01\x02\x03\xff\xfe (\x80) \xff",
};

START_TEST(stat_garbage_rejected)
{
	struct pid_stat st;

	tu_poison(&st, sizeof(st));
	ck_assert_msg(stat_exact(stat_garbage[_i], strlen(stat_garbage[_i]),
			  &st) == -EINVAL,
	    "accepted: \"%s\"", stat_garbage[_i]);
	ck_assert(tu_is_poisoned(&st, sizeof(st)));
}
END_TEST

/* One field of the numbered line replaced: sign, size and shape rules. */
static const struct {
	int field;
	const char *val;
	int r;
	uint64_t want; /* when r == 0 and the field is kept */
} field_cases[] = {
	/* Signed fields vitalsd skips may be negative. */
	{ 5, "-1", 0, 0 },
	{ 8, "-1", 0, 0 },			 /* tpgid, no terminal */
	{ 16, "-5", 0, 0 },			 /* cutime */
	{ 17, "-7", 0, 0 },			 /* cstime */
	{ 18, "-100", 0, 0 },			 /* priority of an RT task */
	{ 19, "-20", 0, 0 },			 /* nice */
	{ 21, "-1", 0, 0 },			 /* itrealvalue */
	{ 9, "184467440737095516150000", 0, 0 }, /* skipped: not converted */
	/* Fields vitalsd keeps: digits only, range checked. */
	{ 1, "2147483647", 0, 2147483647 },
	{ 1, "2147483648", -ERANGE, 0 },
	{ 1, "0", 0, 0 },
	{ 4, "2147483647", 0, 2147483647 },
	{ 4, "2147483648", -ERANGE, 0 },
	{ 4, "-1", -EINVAL, 0 },
	{ 10, "18446744073709551615", 0, UINT64_MAX },
	{ 10, "18446744073709551616", -ERANGE, 0 },
	{ 10, "-1", -EINVAL, 0 },
	{ 12, "99999999999999999999", -ERANGE, 0 },
	{ 14, "18446744073709551616", -ERANGE, 0 },
	{ 14, "000000000000000000000000000042", 0, 42 },
	{ 15, "184467440737095516150", -ERANGE, 0 },
	{ 20, "2147483648", -ERANGE, 0 },
	{ 20, "-1", -EINVAL, 0 },
	{ 22, "18446744073709551616", -ERANGE, 0 },
	{ 23, "18446744073709551615", 0, UINT64_MAX },
	{ 24, "-1", -EINVAL, 0 },
	{ 24, "18446744073709551616", -ERANGE, 0 },
	/* Shapes that are not a number. */
	{ 5, "-", -EINVAL, 0 },
	{ 5, "--1", -EINVAL, 0 },
	{ 5, "1-", -EINVAL, 0 },
	{ 5, "", -EINVAL, 0 }, /* two spaces in a row */
	{ 10, "+1", -EINVAL, 0 },
	{ 10, "0x10", -EINVAL, 0 },
	{ 14, "1.5", -EINVAL, 0 },
	{ 3, "SS", -EINVAL, 0 },
	{ 3, "1", -EINVAL, 0 },
	{ 3, "", -EINVAL, 0 },
	{ 3, "?", -EINVAL, 0 },
	/* Past field 24 nothing is checked. */
	{ 25, "anything", 0, 0 },
};

static void
set_field(struct pid_stat *st, int field, uint64_t v)
{
	switch (field) {
	case 1:
		st->pid = (int32_t)v;
		break;
	case 4:
		st->ppid = (int32_t)v;
		break;
	case 10:
		st->minflt = v;
		break;
	case 12:
		st->majflt = v;
		break;
	case 14:
		st->utime = v;
		break;
	case 15:
		st->stime = v;
		break;
	case 20:
		st->num_threads = (int32_t)v;
		break;
	case 22:
		st->starttime = v;
		break;
	case 23:
		st->vsize = v;
		break;
	case 24:
		st->rss_pages = v;
		break;
	default:
		break; /* not kept */
	}
}

START_TEST(stat_field_values)
{
	struct pid_stat st, want = want_numbered;
	char line[256];
	size_t n;
	int r;

	n = numbered(line, sizeof(line), field_cases[_i].field,
	    field_cases[_i].val);
	tu_poison(&st, sizeof(st));
	r = stat_exact(line, n, &st);
	ck_assert_msg(r == field_cases[_i].r, "field %d \"%s\": %d, want %d",
	    field_cases[_i].field, field_cases[_i].val, r, field_cases[_i].r);
	if (r < 0) {
		ck_assert(tu_is_poisoned(&st, sizeof(st)));
		return;
	}
	set_field(&want, field_cases[_i].field, field_cases[_i].want);
	assert_stat_eq(&st, &want);
}
END_TEST

/*
 * Every prefix of a line, each in a buffer of exactly that size: prefixes
 * that end before the separator after field 24 fail, longer ones give the
 * whole result.
 */
static void
stat_prefixes(const char *line, size_t end24)
{
	struct pid_stat full, st;
	size_t len = strlen(line), k;
	int r;

	ck_assert_int_eq(stat_exact(line, len, &full), 0);
	for (k = 0; k <= len; k++) {
		tu_poison(&st, sizeof(st));
		r = stat_exact(line, k, &st);
		if (k == 0) {
			ck_assert_int_eq(r, -ENODATA);
		} else if (k <= end24) {
			ck_assert_msg(r == -EINVAL, "prefix %zu: %d", k, r);
			ck_assert(tu_is_poisoned(&st, sizeof(st)));
		} else {
			ck_assert_msg(r == 0, "prefix %zu: %d", k, r);
			assert_stat_eq(&st, &full);
		}
	}
}

START_TEST(stat_every_prefix)
{
	static const char tricky[] =
	    "31337 () (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 "
	    "4096 25 26\n";
	const char *p;

	p = strstr(stat_sf, " 54321 ");
	ck_assert_ptr_nonnull(p);
	stat_prefixes(stat_sf, (size_t)(p - stat_sf) + 6);

	p = strstr(tricky, " 4096 ");
	ck_assert_ptr_nonnull(p);
	stat_prefixes(tricky, (size_t)(p - tricky) + 5);
}
END_TEST

START_TEST(stat_byte_mutations)
{
	/* Every byte of a real line replaced by a few hostile values. */
	static const char repl[] = { '\0', ' ', ')', '(', '-', '9', '\n', 'Z',
		(char)0xff };
	char buf[sizeof(stat_sf)];
	struct pid_stat st;
	size_t len = sizeof(stat_sf) - 1, i, j;
	int r;

	for (i = 0; i < len; i++) {
		for (j = 0; j < sizeof(repl); j++) {
			memcpy(buf, stat_sf, len);
			buf[i] = repl[j];
			r = stat_exact(buf, len, &st);
			ck_assert_msg(r == 0 || r == -EINVAL || r == -ERANGE,
			    "byte %zu: %d", i, r);
		}
	}
}
END_TEST

/* ------------------------------------------------------------------ main */

static Suite *
proc_pid_suite(void)
{
	Suite *s = suite_create("proc_pid");
	TCase *tc;

	tc = tcase_create("stat");
	tcase_add_test(tc, stat_real_user);
	tcase_add_test(tc, stat_kernel_thread);
	tcase_add_test(tc, stat_kworker_long_comm);
	tcase_add_test(tc, stat_zombie_line);
	tcase_add_test(tc, stat_field_positions);
	tcase_add_loop_test(tc, stat_comm_shapes, 0,
	    sizeof(comm_cases) / sizeof(comm_cases[0]));
	tcase_add_test(tc, stat_comm_unprintable);
	tcase_add_loop_test(tc, name_clean_rule, 0,
	    sizeof(clean_cases) / sizeof(clean_cases[0]));
	tcase_add_test(tc, stat_extra_fields);
	tcase_add_test(tc, stat_exactly_24_fields);
	tcase_add_test(tc, stat_missing_fields);
	tcase_add_test(tc, stat_empty);
	tcase_add_loop_test(tc, stat_garbage_rejected, 0,
	    sizeof(stat_garbage) / sizeof(stat_garbage[0]));
	tcase_add_loop_test(tc, stat_field_values, 0,
	    sizeof(field_cases) / sizeof(field_cases[0]));
	tcase_add_test(tc, stat_every_prefix);
	tcase_add_test(tc, stat_byte_mutations);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run(proc_pid_suite());
}
