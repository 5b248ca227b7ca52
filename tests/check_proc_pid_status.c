/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of proc_pid.c: <pid>/status and <pid>/cmdline
 * (check_proc_pid.c has <pid>/stat), and proc_ident.c's read of a cmdline
 * file.
 *
 * Every parser call goes through a heap copy of exactly len bytes with no
 * NUL after it, so that AddressSanitizer reports any read past len.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "vitalsd.h"

/* ---------------------------------------------------------------- helpers */

static int
status_exact(const char *s, size_t len, struct pid_status *ret)
{
	char *b = tu_exact_copy(s, len);
	int r = pidstatus_parse(b, len, ret);

	free(b);
	return r;
}

static int
cmdline_exact(const char *s, size_t len, char *ret, size_t retsz)
{
	char *b = tu_exact_copy(s, len);
	int r = cmdline_name(b, len, ret, retsz);

	free(b);
	return r;
}

/* String literals: the length leaves out only the literal's own NUL. */
#define STATUS(lit, ret) status_exact(lit, sizeof(lit) - 1, ret)
#define CMDLINE(lit, ret, sz) cmdline_exact(lit, sizeof(lit) - 1, ret, sz)

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

	tu_poison(&st, sizeof(st));
	ck_assert_int_eq(status_exact("", 0, &st), -ENODATA);
	ck_assert_int_eq(pidstatus_parse(NULL, 0, &st), -ENODATA);
	ck_assert(tu_is_poisoned(&st, sizeof(st)));
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

	tu_poison(&st, sizeof(st));
	r = status_exact(status_bad[_i].text, strlen(status_bad[_i].text), &st);
	ck_assert_msg(r == status_bad[_i].r, "\"%s\": %d, want %d",
	    status_bad[_i].text, r, status_bad[_i].r);
	ck_assert(tu_is_poisoned(&st, sizeof(st)));
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
		tu_poison(&st, sizeof(st));
		r = status_exact(status_app, k, &st);
		if (k == 0) {
			ck_assert_int_eq(r, -ENODATA);
			continue;
		}
		if (k < need) {
			ck_assert_msg(r == -EINVAL, "prefix %zu: %d", k, r);
			ck_assert(tu_is_poisoned(&st, sizeof(st)));
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

	tu_poison(name, sizeof(name));
	r = cmdline_exact(name_cases[_i].in, name_cases[_i].len, name,
	    sizeof(name));
	if (want == NULL) {
		ck_assert_msg(r == -ENODATA, "case %d: %d", _i, r);
		ck_assert(tu_is_poisoned(name, sizeof(name)));
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
	tu_poison(big, sizeof(big));
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

	tu_poison(name, sizeof(name));
	ck_assert_int_eq(CMDLINE("init\0", name, 0), -EINVAL);
	ck_assert_int_eq(CMDLINE("init\0", name, 1), -EINVAL);
	ck_assert_int_eq(CMDLINE("init\0", NULL, 16), -EINVAL);
	ck_assert_int_eq(cmdline_name(NULL, 4, name, sizeof(name)), -EINVAL);
	ck_assert(tu_is_poisoned(name, sizeof(name)));
	ck_assert_int_eq(cmdline_name(NULL, 0, name, sizeof(name)), -ENODATA);
	ck_assert(tu_is_poisoned(name, sizeof(name)));
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
		tu_poison(name, sizeof(name));
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

/*
 * proc_cmdline_name() reads a file's first page once and stops when argv[0]
 * ends in it: its names equal cmdline_name() of the whole file, for an
 * argv[0] that ends past the first read (its basename there), a rewritten
 * argv with no NUL longer than it, a file of exactly one read, an empty
 * file and a missing one.
 */
START_TEST(cmdline_file_first_read)
{
	static const size_t lens[] = { 4095, 4096, 4097, 6000 };
	char *dir = tu_mkdtemp("cmdline"), path[512], *in;
	char name[VITALS_NAME_LEN], want[VITALS_NAME_LEN];
	struct vbuf b = { 0 };
	size_t i, k, n;
	int dfd, r;

	ck_assert_ptr_nonnull(dir);
	in = malloc(8192);
	ck_assert_ptr_nonnull(in);
	snprintf(path, sizeof(path), "%s/1", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/1/cmdline", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			n = lens[i];
			if (k == 0) {
				/* a long path, its NUL at n - 1 */
				memset(in, 'd', n);
				memcpy(in, "/x/", 3);
				memcpy(in + n - 10, "/longname", 9);
				in[n - 1] = '\0';
			} else if (k == 1) {
				/* a rewritten argv: one string, no NUL */
				memset(in, 'w', n);
				memcpy(in, "sshd: user@pts/0 ", 17);
			} else {
				/* argv[0] short, the arguments long */
				memset(in, 'a', n);
				memcpy(in, "/bin/prog\0", 10);
			}
			ck_assert_int_eq(tu_write(path, in, n), 0);
			ck_assert_int_eq(cmdline_exact(in, n, want,
					     sizeof(want)),
			    0);
			tu_poison(name, sizeof(name));
			r = proc_cmdline_name(dfd, 1, &b, name, sizeof(name));
			ck_assert_msg(r == 0, "kind %zu len %zu: %d", k, n, r);
			ck_assert_str_eq(name, want);
		}
	}
	ck_assert_str_eq(name, "prog");
	ck_assert_int_eq(tu_write(path, "", 0), 0);
	ck_assert_int_eq(proc_cmdline_name(dfd, 1, &b, name, sizeof(name)),
	    -ENODATA);
	ck_assert_int_eq(proc_cmdline_name(dfd, 2, &b, name, sizeof(name)),
	    -ENOENT);
	close(dfd);
	vbuf_release(&b);
	free(in);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

static Suite *
proc_pid_status_suite(void)
{
	Suite *s = suite_create("proc_pid");
	TCase *tc;

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
	tcase_add_test(tc, cmdline_file_first_read);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run(proc_pid_status_suite());
}
