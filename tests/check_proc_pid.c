/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of proc_pid.c: <pid>/stat, <pid>/status and <pid>/cmdline.
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

static char *
exact_copy(const char *s, size_t len)
{
	char *b = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(b);
	memcpy(b, s, len);
	return b;
}

static int
stat_exact(const char *s, size_t len, struct pid_stat *ret)
{
	char *b = exact_copy(s, len);
	int r = pidstat_parse(b, len, ret);

	free(b);
	return r;
}

static int
status_exact(const char *s, size_t len, struct pid_status *ret)
{
	char *b = exact_copy(s, len);
	int r = pidstatus_parse(b, len, ret);

	free(b);
	return r;
}

static int
cmdline_exact(const char *s, size_t len, char *ret, size_t retsz)
{
	char *b = exact_copy(s, len);
	int r = cmdline_name(b, len, ret, retsz);

	free(b);
	return r;
}

/* String literals: the length leaves out only the literal's own NUL. */
#define STAT(lit, ret) stat_exact(lit, sizeof(lit) - 1, ret)
#define STATUS(lit, ret) status_exact(lit, sizeof(lit) - 1, ret)
#define CMDLINE(lit, ret, sz) cmdline_exact(lit, sizeof(lit) - 1, ret, sz)

static void
poison(void *p, size_t n)
{
	memset(p, 0xa5, n);
}

static int
is_poisoned(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != 0xa5)
			return 0;
	return 1;
}

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
	poison(&st, sizeof(st));
	ck_assert_int_eq(STAT(bare, &st), -EINVAL);
	ck_assert(is_poisoned(&st, sizeof(st)));
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

	poison(&st, sizeof(st));
	ck_assert_int_eq(STAT(cut20, &st), -EINVAL);
	ck_assert_int_eq(STAT(cut23, &st), -EINVAL);
	ck_assert_int_eq(STAT(comm_only, &st), -EINVAL);
	ck_assert(is_poisoned(&st, sizeof(st)));
}
END_TEST

START_TEST(stat_empty)
{
	struct pid_stat st;

	poison(&st, sizeof(st));
	ck_assert_int_eq(stat_exact("", 0, &st), -ENODATA);
	ck_assert_int_eq(pidstat_parse(NULL, 0, &st), -ENODATA);
	ck_assert(is_poisoned(&st, sizeof(st)));
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

	poison(&st, sizeof(st));
	ck_assert_msg(stat_exact(stat_garbage[_i], strlen(stat_garbage[_i]),
			  &st) == -EINVAL,
	    "accepted: \"%s\"", stat_garbage[_i]);
	ck_assert(is_poisoned(&st, sizeof(st)));
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
	poison(&st, sizeof(st));
	r = stat_exact(line, n, &st);
	ck_assert_msg(r == field_cases[_i].r, "field %d \"%s\": %d, want %d",
	    field_cases[_i].field, field_cases[_i].val, r, field_cases[_i].r);
	if (r < 0) {
		ck_assert(is_poisoned(&st, sizeof(st)));
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
		poison(&st, sizeof(st));
		r = stat_exact(line, k, &st);
		if (k == 0) {
			ck_assert_int_eq(r, -ENODATA);
		} else if (k <= end24) {
			ck_assert_msg(r == -EINVAL, "prefix %zu: %d", k, r);
			ck_assert(is_poisoned(&st, sizeof(st)));
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

/* ---------------------------------------------------------------- status */

/* com.android.systemui on a 6.x kernel (Kthread: and untag_mask lines). */
static const char status_app[] =
    "Name:\tndroid.systemui\n"
    "Umask:\t0077\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t1873\n"
    "Ngid:\t0\n"
    "Pid:\t1873\n"
    "PPid:\t734\n"
    "TracerPid:\t0\n"
    "Uid:\t10123\t10123\t10123\t10123\n"
    "Gid:\t10123\t10123\t10123\t10123\n"
    "FDSize:\t512\n"
    "Groups:\t1065 3002 3003 9997 20123 50123 \n"
    "NStgid:\t1873\n"
    "NSpid:\t1873\n"
    "NSpgid:\t734\n"
    "NSsid:\t0\n"
    "Kthread:\t0\n"
    "VmPeak:\t17046528 kB\n"
    "VmSize:\t16785380 kB\n"
    "VmLck:\t       0 kB\n"
    "VmPin:\t       0 kB\n"
    "VmHWM:\t  412340 kB\n"
    "VmRSS:\t  301152 kB\n"
    "RssAnon:\t  121024 kB\n"
    "RssFile:\t  174600 kB\n"
    "RssShmem:\t    5528 kB\n"
    "VmData:\t 1498208 kB\n"
    "VmStk:\t    8192 kB\n"
    "VmExe:\t      24 kB\n"
    "VmLib:\t  203448 kB\n"
    "VmPTE:\t    2604 kB\n"
    "VmSwap:\t   38912 kB\n"
    "HugetlbPages:\t       0 kB\n"
    "CoreDumping:\t0\n"
    "THP_enabled:\t1\n"
    "untag_mask:\t0xffffffffffffffff\n"
    "Threads:\t142\n"
    "SigQ:\t0/27543\n"
    "SigPnd:\t0000000000000000\n"
    "ShdPnd:\t0000000000000000\n"
    "SigBlk:\t0000000080001204\n"
    "SigIgn:\t0000000000000001\n"
    "SigCgt:\t0000006e400084f8\n"
    "CapInh:\t0000000000000000\n"
    "CapPrm:\t0000000000000000\n"
    "CapEff:\t0000000000000000\n"
    "CapBnd:\t0000000000000000\n"
    "CapAmb:\t0000000000000000\n"
    "NoNewPrivs:\t0\n"
    "Seccomp:\t2\n"
    "Seccomp_filters:\t1\n"
    "Speculation_Store_Bypass:\tthread vulnerable\n"
    "SpeculationIndirectBranch:\tconditional enabled\n"
    "Cpus_allowed:\tff\n"
    "Cpus_allowed_list:\t0-7\n"
    "Mems_allowed:\t1\n"
    "Mems_allowed_list:\t0\n"
    "voluntary_ctxt_switches:\t91825\n"
    "nonvoluntary_ctxt_switches:\t10423\n";

/* kthreadd as this kernel prints it: no mm, so no Vm and Rss lines. */
static const char status_kthread[] =
    "Name:\tkthreadd\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t2\n"
    "Ngid:\t0\n"
    "Pid:\t2\n"
    "PPid:\t0\n"
    "TracerPid:\t0\n"
    "Uid:\t0\t0\t0\t0\n"
    "Gid:\t0\t0\t0\t0\n"
    "FDSize:\t64\n"
    "Groups:\t \n"
    "NStgid:\t2\n"
    "NSpid:\t2\n"
    "NSpgid:\t0\n"
    "NSsid:\t0\n"
    "Kthread:\t1\n"
    "Threads:\t1\n"
    "SigQ:\t0/96364\n"
    "SigPnd:\t0000000000000000\n"
    "ShdPnd:\t0000000000000000\n"
    "SigBlk:\t0000000000000000\n"
    "SigIgn:\tffffffffffffffff\n"
    "SigCgt:\t0000000000000000\n"
    "CapInh:\t0000000000000000\n"
    "CapPrm:\t000001ffffffffff\n"
    "CapEff:\t000001ffffffffff\n"
    "CapBnd:\t000001ffffffffff\n"
    "CapAmb:\t0000000000000000\n"
    "NoNewPrivs:\t0\n"
    "Seccomp:\t0\n"
    "Seccomp_filters:\t0\n"
    "Speculation_Store_Bypass:\tthread vulnerable\n"
    "SpeculationIndirectBranch:\tconditional enabled\n"
    "Cpus_allowed:\t3\n"
    "Cpus_allowed_list:\t0-1\n"
    "Mems_allowed:\t00000000,00000001\n"
    "Mems_allowed_list:\t0\n"
    "voluntary_ctxt_switches:\t59\n"
    "nonvoluntary_ctxt_switches:\t0\n";

START_TEST(status_user_process)
{
	struct pid_status st;

	ck_assert_int_eq(STATUS(status_app, &st), 0);
	ck_assert_uint_eq(st.uid, 10123);
	ck_assert_uint_eq(st.euid, 10123);
	ck_assert_uint_eq(st.gid, 10123);
	ck_assert_int_eq(st.tgid, 1873);
	ck_assert_int_eq(st.vm_rss_kb, 301152);
	ck_assert_int_eq(st.rss_anon_kb, 121024);
	ck_assert_int_eq(st.rss_file_kb, 174600);
	ck_assert_int_eq(st.rss_shmem_kb, 5528);
	ck_assert_int_eq(st.vm_swap_kb, 38912);
}
END_TEST

START_TEST(status_kernel_thread)
{
	struct pid_status st;

	ck_assert_int_eq(STATUS(status_kthread, &st), 0);
	ck_assert_uint_eq(st.uid, 0);
	ck_assert_uint_eq(st.euid, 0);
	ck_assert_uint_eq(st.gid, 0);
	ck_assert_int_eq(st.tgid, 2);
	ck_assert_int_eq(st.vm_rss_kb, -1);
	ck_assert_int_eq(st.rss_anon_kb, -1);
	ck_assert_int_eq(st.rss_file_kb, -1);
	ck_assert_int_eq(st.rss_shmem_kb, -1);
	ck_assert_int_eq(st.vm_swap_kb, -1);
}
END_TEST

START_TEST(status_ids_apart)
{
	/* A setuid program: real, effective, saved, fs ids all differ. */
	static const char text[] =
	    "Name:\tsu\nTgid:\t9001\nUid:\t2000\t0\t1\t2\n"
	    "Gid:\t2001\t3\t4\t5\nVmRSS:\t 0 kB\n";
	struct pid_status st;

	ck_assert_int_eq(STATUS(text, &st), 0);
	ck_assert_uint_eq(st.uid, 2000);
	ck_assert_uint_eq(st.euid, 0);
	ck_assert_uint_eq(st.gid, 2001);
	ck_assert_int_eq(st.tgid, 9001);
	ck_assert_int_eq(st.vm_rss_kb, 0);
	ck_assert_int_eq(st.rss_anon_kb, -1);
	ck_assert_int_eq(st.vm_swap_kb, -1);
}
END_TEST

START_TEST(status_limits)
{
	static const char max[] =
	    "Tgid:\t2147483647\nUid:\t4294967295\t4294967294\t0\t0\n"
	    "Gid:\t4294967295\t0\t0\t0\nVmSwap:\t9223372036854775807 kB";
	struct pid_status st;

	ck_assert_int_eq(STATUS(max, &st), 0);
	ck_assert_uint_eq(st.uid, 4294967295u);
	ck_assert_uint_eq(st.euid, 4294967294u);
	ck_assert_uint_eq(st.gid, 4294967295u);
	ck_assert_int_eq(st.tgid, 2147483647);
	ck_assert_int_eq(st.vm_swap_kb, INT64_MAX);
	ck_assert_int_eq(st.vm_rss_kb, -1);
}
END_TEST

START_TEST(status_name_is_opaque)
{
	/* Key-like text inside a Name value, and keys that merely begin
	 * like a kept one, are not matched. */
	static const char text[] = "Name:\tUid:\t0\t0\t0\t0\n"
				   "Umask:\t0077\n"
				   "Tgid:\t300\n"
				   "NStgid:\t1\n"
				   "Uids:\t7\t7\t7\t7\n"
				   "Uid:\t10050\t10050\t10050\t10050\n"
				   " Gid:\t1\t1\t1\t1\n"
				   "Gid:\t10050\t10050\t10050\t10050\n"
				   "VmRSSx:\t5 kB\n"
				   "VmRSS:\t  1200 kB\n";
	struct pid_status st;

	ck_assert_int_eq(STATUS(text, &st), 0);
	ck_assert_uint_eq(st.uid, 10050);
	ck_assert_uint_eq(st.euid, 10050);
	ck_assert_uint_eq(st.gid, 10050);
	ck_assert_int_eq(st.tgid, 300);
	ck_assert_int_eq(st.vm_rss_kb, 1200);
}
END_TEST

START_TEST(status_no_trailing_newline)
{
	static const char text[] =
	    "Tgid:\t44\nUid:\t1000\t1000\t1000\t1000\n"
	    "Gid:\t1000\t1000\t1000\t1000\nVmRSS:\t    16 kB";
	struct pid_status st;

	ck_assert_int_eq(STATUS(text, &st), 0);
	ck_assert_uint_eq(st.uid, 1000);
	ck_assert_int_eq(st.tgid, 44);
	ck_assert_int_eq(st.vm_rss_kb, 16);
}
END_TEST

START_TEST(status_empty)
{
	struct pid_status st;

	poison(&st, sizeof(st));
	ck_assert_int_eq(status_exact("", 0, &st), -ENODATA);
	ck_assert_int_eq(pidstatus_parse(NULL, 0, &st), -ENODATA);
	ck_assert(is_poisoned(&st, sizeof(st)));
	ck_assert_int_eq(pidstatus_parse(NULL, 3, &st), -EINVAL);
	ck_assert_int_eq(pidstatus_parse(status_app, 10, NULL), -EINVAL);
}
END_TEST

#define IDS "Uid:\t1\t2\t3\t4\nGid:\t5\t6\t7\t8\n"

static const struct {
	const char *text;
	int r;
} status_bad[] = {
	/* A required line is missing. */
	{ "Tgid:\t5\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Uid:\t1\t2\t3\t4\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Tgid:\t5\nUid:\t1\t2\t3\t4\n", -EINVAL },
	{ "Name:\tx\n", -EINVAL },
	{ "\n", -EINVAL },
	/* A key seen twice: a smuggled line is never believed. */
	{ "Tgid:\t5\n" IDS "Uid:\t0\t0\t0\t0\n", -EINVAL },
	{ "Tgid:\t5\nTgid:\t5\n" IDS, -EINVAL },
	{ "Tgid:\t5\n" IDS "VmRSS:\t1 kB\nVmRSS:\t1 kB\n", -EINVAL },
	/* Ids: four numbers, blanks between. */
	{ "Tgid:\t5\nUid:\t1000\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Tgid:\t5\nUid:\t1\t2\t3\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Tgid:\t5\nUid:\t1\t2\t3\t4x\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Tgid:\t5\nUid:1\t2\t3\t4\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Tgid:\t5\nUid:\t-1\t2\t3\t4\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Tgid:\t5\nUid:\tabc\t2\t3\t4\nGid:\t5\t6\t7\t8\n", -EINVAL },
	{ "Tgid:\t5\nUid:\t4294967296\t2\t3\t4\nGid:\t5\t6\t7\t8\n", -ERANGE },
	{ "Tgid:\t5\nUid:\t1\t2\t3\t4\nGid:\t99999999999\t6\t7\t8\n", -ERANGE },
	/* Tgid. */
	{ "Tgid:\t\n" IDS, -EINVAL },
	{ "Tgid:\t-5\n" IDS, -EINVAL },
	{ "Tgid:\t5 6\n" IDS, -EINVAL },
	{ "Tgid:\t2147483648\n" IDS, -ERANGE },
	/* kB lines: number and unit. */
	{ "Tgid:\t5\n" IDS "VmRSS:\t  1616\n", -EINVAL },
	{ "Tgid:\t5\n" IDS "VmRSS:\t  1616kB\n", -EINVAL },
	{ "Tgid:\t5\n" IDS "VmRSS:\t  1616 MB\n", -EINVAL },
	{ "Tgid:\t5\n" IDS "VmRSS:\t  1616 kB extra\n", -EINVAL },
	{ "Tgid:\t5\n" IDS "VmRSS:\t  -1 kB\n", -EINVAL },
	{ "Tgid:\t5\n" IDS "VmRSS:\n", -EINVAL },
	{ "Tgid:\t5\n" IDS "VmSwap:\t9223372036854775808 kB\n", -ERANGE },
	{ "Tgid:\t5\n" IDS "RssShmem:\t99999999999999999999 kB\n", -ERANGE },
};

START_TEST(status_rejected)
{
	struct pid_status st;
	int r;

	poison(&st, sizeof(st));
	r = status_exact(status_bad[_i].text, strlen(status_bad[_i].text), &st);
	ck_assert_msg(r == status_bad[_i].r, "\"%s\": %d, want %d",
	    status_bad[_i].text, r, status_bad[_i].r);
	ck_assert(is_poisoned(&st, sizeof(st)));
}
END_TEST

/*
 * Every prefix: no crash, and a result only once all four Gid numbers have
 * begun; the ids then match the whole text, and each kB figure is either
 * absent (-1) or exact, never a number cut short.
 */
START_TEST(status_every_prefix)
{
	/* The shortest text that holds all four Gid numbers. */
	static const char gid4[] = "Gid:\t10123\t10123\t10123\t1";
	struct pid_status full, st;
	size_t len = sizeof(status_app) - 1, k, need;
	const char *g;
	int r;

	g = strstr(status_app, gid4);
	ck_assert_ptr_nonnull(g);
	need = (size_t)(g - status_app) + sizeof(gid4) - 1;
	ck_assert_int_eq(STATUS(status_app, &full), 0);

	for (k = 0; k <= len; k++) {
		poison(&st, sizeof(st));
		r = status_exact(status_app, k, &st);
		if (k == 0) {
			ck_assert_int_eq(r, -ENODATA);
			continue;
		}
		if (k < need) {
			ck_assert_msg(r == -EINVAL, "prefix %zu: %d", k, r);
			ck_assert(is_poisoned(&st, sizeof(st)));
			continue;
		}
		if (r < 0) {
			ck_assert_msg(r == -EINVAL, "prefix %zu: %d", k, r);
			continue;
		}
		ck_assert_uint_eq(st.uid, full.uid);
		ck_assert_uint_eq(st.euid, full.euid);
		ck_assert_uint_eq(st.gid, full.gid);
		ck_assert_int_eq(st.tgid, full.tgid);
		ck_assert(st.vm_rss_kb == -1 || st.vm_rss_kb == full.vm_rss_kb);
		ck_assert(
		    st.rss_anon_kb == -1 || st.rss_anon_kb == full.rss_anon_kb);
		ck_assert(
		    st.rss_file_kb == -1 || st.rss_file_kb == full.rss_file_kb);
		ck_assert(st.rss_shmem_kb == -1 ||
		    st.rss_shmem_kb == full.rss_shmem_kb);
		ck_assert(
		    st.vm_swap_kb == -1 || st.vm_swap_kb == full.vm_swap_kb);
	}
	/* The whole text has every figure. */
	ck_assert_int_eq(status_exact(status_app, len, &st), 0);
	ck_assert_int_eq(st.vm_swap_kb, 38912);
}
END_TEST

/* --------------------------------------------------------------- cmdline */

static const struct {
	const char *in;
	size_t len;
	const char *want; /* NULL: -ENODATA */
} name_cases[] = {
/* clang-format off */
#define NC(lit, want) { lit, sizeof(lit) - 1, want }
	NC("/system/bin/surfaceflinger\0", "surfaceflinger"),
	NC("com.android.systemui\0", "com.android.systemui"),
	NC("/data/app/~~x/com.foo-1/lib/arm64/libfoo.so@bar\0", "libfoo.so"),
	NC("sshd: root@pts/0", "sshd: root"),
	NC("/usr/bin/\0", NULL),
	NC("", NULL),
	NC("\0", NULL),
	NC("\0/system/bin/vold\0", NULL), /* first argument empty */
	NC("@foo\0", NULL),
	NC("/bin/@x\0", NULL),
	NC("/system/bin/vold", "vold"), /* no trailing NUL */
	NC("/system/bin/app_process64\0-Xzygote\0/system/bin\0--zygote\0",
	    "app_process64"),
	NC("zygote64\0", "zygote64"),
	NC("com.android.chrome:sandboxed_process0:org.chromium.content.app."
	   "SandboxedProcessService0:0\0",
	    "com.android.chrome:sandboxed_process0:org.chromium.content.app."
	    "SandboxedProcessService0:0"),
	/* Rewritten argv: one string, later words are not a path. */
	NC("/opt/google/chrome/chrome --type=renderer --x=1/2/3",
	    "chrome --type=renderer --x=1/2/3"),
	NC("nginx: worker process\0\0\0\0\0\0\0\0", "nginx: worker process"),
	NC("postgres: checkpointer /x", "postgres: checkpointer /x"),
	/* A versioned APEX mount: '@' in a directory, not in the name. */
	NC("/apex/com.android.adbd@330443000/bin/adbd\0", "adbd"),
	NC("./relative/tool\0--flag\0", "tool"),
	NC("/\0", NULL),
	/* Control bytes become '?'; whole UTF-8 characters stay. */
	NC("foo\x01" "bar\x7f\xc3\xa9\0", "foo?bar?\xc3\xa9"),
	/* A tab ends the first word too, then turns into '?'. */
	NC("/bin/a\tb/c\0", "a?b/c"),
#undef NC
	/* clang-format on */
};

START_TEST(cmdline_names)
{
	char name[VITALS_NAME_LEN];
	const char *want = name_cases[_i].want;
	int r;

	poison(name, sizeof(name));
	r = cmdline_exact(name_cases[_i].in, name_cases[_i].len, name,
	    sizeof(name));
	if (want == NULL) {
		ck_assert_msg(r == -ENODATA, "case %d: %d", _i, r);
		ck_assert(is_poisoned(name, sizeof(name)));
		return;
	}
	ck_assert_msg(r == 0, "case %d: %d", _i, r);
	ck_assert_str_eq(name, want);
}
END_TEST

START_TEST(cmdline_truncation)
{
	char name[8], big[VITALS_NAME_LEN], in[300];
	size_t i;

	/* Room for 7 bytes and the NUL; nothing written past retsz. */
	memset(name, 'Z', sizeof(name));
	ck_assert_int_eq(CMDLINE("/system/bin/surfaceflinger\0", name, 8), 0);
	ck_assert_str_eq(name, "surface");

	ck_assert_int_eq(CMDLINE("/system/bin/surfaceflinger\0", name, 2), 0);
	ck_assert_str_eq(name, "s");
	ck_assert_int_eq(name[2], 'r'); /* untouched from the call before */

	/* A name longer than VITALS_NAME_LEN keeps its first 127 bytes. */
	memcpy(in, "/data/local/tmp/", 16);
	for (i = 16; i < sizeof(in); i++)
		in[i] = (char)('a' + i % 26);
	poison(big, sizeof(big));
	ck_assert_int_eq(cmdline_exact(in, sizeof(in), big, sizeof(big)), 0);
	ck_assert_uint_eq(strlen(big), VITALS_NAME_LEN - 1);
	ck_assert_int_eq(memcmp(big, in + 16, VITALS_NAME_LEN - 1), 0);

	/* Exactly fits. */
	ck_assert_int_eq(CMDLINE("abcdefg\0", name, 8), 0);
	ck_assert_str_eq(name, "abcdefg");
}
END_TEST

START_TEST(cmdline_bad_args)
{
	char name[16];

	poison(name, sizeof(name));
	ck_assert_int_eq(CMDLINE("init\0", name, 0), -EINVAL);
	ck_assert_int_eq(CMDLINE("init\0", name, 1), -EINVAL);
	ck_assert_int_eq(CMDLINE("init\0", NULL, 16), -EINVAL);
	ck_assert_int_eq(cmdline_name(NULL, 4, name, sizeof(name)), -EINVAL);
	ck_assert(is_poisoned(name, sizeof(name)));
	ck_assert_int_eq(cmdline_name(NULL, 0, name, sizeof(name)), -ENODATA);
	ck_assert(is_poisoned(name, sizeof(name)));
}
END_TEST

START_TEST(cmdline_every_prefix)
{
	static const char in[] =
	    "/apex/com.android.art@1/bin/dex2oat64\0--zip-fd=6\0";
	/* What each prefix length yields, from the rules above. */
	char name[VITALS_NAME_LEN], want[VITALS_NAME_LEN];
	size_t len = sizeof(in) - 1, k, base, end;
	int r;

	base = strlen("/apex/com.android.art@1/bin/");
	end = strlen("/apex/com.android.art@1/bin/dex2oat64");
	for (k = 0; k <= len; k++) {
		poison(name, sizeof(name));
		r = cmdline_exact(in, k, name, sizeof(name));
		if (k == 0) {
			ck_assert_int_eq(r, -ENODATA);
			continue;
		}
		/* Inside the directories the last '/' so far decides. */
		if (k <= base) {
			size_t s = 0, i, e;

			for (i = 0; i < k; i++)
				if (in[i] == '/')
					s = i + 1;
			e = k;
			for (i = s; i < k; i++)
				if (in[i] == '@') {
					e = i;
					break;
				}
			if (e == s) {
				ck_assert_msg(r == -ENODATA, "prefix %zu", k);
				continue;
			}
			snprintf(want, sizeof(want), "%.*s", (int)(e - s),
			    in + s);
		} else {
			size_t e = k < end ? k : end;

			snprintf(want, sizeof(want), "%.*s", (int)(e - base),
			    in + base);
		}
		ck_assert_msg(r == 0, "prefix %zu: %d", k, r);
		ck_assert_str_eq(name, want);
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

	tc = tcase_create("status");
	tcase_add_test(tc, status_user_process);
	tcase_add_test(tc, status_kernel_thread);
	tcase_add_test(tc, status_ids_apart);
	tcase_add_test(tc, status_limits);
	tcase_add_test(tc, status_name_is_opaque);
	tcase_add_test(tc, status_no_trailing_newline);
	tcase_add_test(tc, status_empty);
	tcase_add_loop_test(tc, status_rejected, 0,
	    sizeof(status_bad) / sizeof(status_bad[0]));
	tcase_add_test(tc, status_every_prefix);
	suite_add_tcase(s, tc);

	tc = tcase_create("cmdline");
	tcase_add_loop_test(tc, cmdline_names, 0,
	    sizeof(name_cases) / sizeof(name_cases[0]));
	tcase_add_test(tc, cmdline_truncation);
	tcase_add_test(tc, cmdline_bad_args);
	tcase_add_test(tc, cmdline_every_prefix);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run(proc_pid_suite());
}
