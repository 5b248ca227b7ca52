/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A BPF load's child process (core/bpf_child.c): its fds and its answer
 * come back, its heap stays its own, and a child that fails or dies is
 * told apart from one that answered.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bpf_child.h"

/* the child's work: a pipe with a word in it, and a note */
static int
make_pipe(void *arg, int *fds, size_t nfds, void *out, size_t outsz)
{
	int p[2];

	(void)arg;
	if (nfds != 2 || outsz != 16 || pipe(p) < 0)
		return -EINVAL;
	if (write(p[1], "word", 4) != 4)
		return -EIO;
	fds[0] = p[0];
	fds[1] = p[1];
	snprintf(out, outsz, "pid %d", (int)getpid());
	return 0;
}

START_TEST(test_fds_come_back)
{
	int fds[2];
	char note[16] = "", buf[8] = "", mine[16];

	ck_assert_int_eq(bpf_child_run(make_pipe, NULL, fds, 2, note,
			     sizeof(note)),
	    0);
	/* made by another process, readable here */
	snprintf(mine, sizeof(mine), "pid %d", (int)getpid());
	ck_assert_str_ne(note, mine);
	ck_assert_int_ge(fds[0], 0);
	ck_assert_int_ge(fds[1], 0);
	ck_assert_int_eq(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(read(fds[0], buf, sizeof(buf)), 4);
	ck_assert_str_eq(buf, "word");
	close(fds[0]);
	close(fds[1]);
}
END_TEST

/* a big allocation in the child is not ours */
static int
grab(void *arg, int *fds, size_t nfds, void *out, size_t outsz)
{
	size_t n = 64u << 20;
	char *p = malloc(n);

	(void)arg;
	(void)fds;
	(void)nfds;
	(void)outsz;
	if (p == NULL)
		return -ENOMEM;
	memset(p, 1, n);
	*(int *)out = p[n - 1];
	free(p);
	return 0;
}

static long
hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

START_TEST(test_heap_stays_in_child)
{
	long before = hwm_kb(), after;
	int v = 0;

	ck_assert_int_eq(bpf_child_run(grab, NULL, NULL, 0, &v, sizeof(v)), 0);
	after = hwm_kb();
	ck_assert_int_eq(v, 1);
	/* 64 MiB touched over there, a few pages here */
	ck_assert_msg(after - before < 8 * 1024, "VmHWM %ld -> %ld kB", before,
	    after);
}
END_TEST

/* fn's error and its out come back; no fd does */
static int
refuse(void *arg, int *fds, size_t nfds, void *out, size_t outsz)
{
	(void)arg;
	fds[0] = open("/dev/null", O_RDONLY);
	(void)nfds;
	snprintf(out, outsz, "verifier: no");
	return -EACCES;
}

START_TEST(test_error_and_why)
{
	char why[32] = "";
	int fd = 12345;

	ck_assert_int_eq(bpf_child_run(refuse, NULL, &fd, 1, why, sizeof(why)),
	    -EACCES);
	ck_assert_str_eq(why, "verifier: no");
	ck_assert_int_eq(fd, -1);
}
END_TEST

/* a child killed before it answers: -ECHILD, nothing made up */
static int
die(void *arg, int *fds, size_t nfds, void *out, size_t outsz)
{
	(void)arg;
	(void)fds;
	(void)nfds;
	(void)out;
	(void)outsz;
	raise(SIGKILL);
	return 0;
}

START_TEST(test_child_dies)
{
	int fd = 7, v = 0;

	ck_assert_int_eq(bpf_child_run(die, NULL, &fd, 1, &v, sizeof(v)),
	    -ECHILD);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(bpf_child_run(die, NULL, NULL, BPF_CHILD_FDS_MAX + 1,
			     NULL, 0),
	    -EINVAL);
}
END_TEST

static Suite *
bpf_child_suite(void)
{
	Suite *s = suite_create("bpf_child");
	TCase *tc = tcase_create("bpf_child");

	tcase_add_test(tc, test_fds_come_back);
	tcase_add_test(tc, test_heap_stays_in_child);
	tcase_add_test(tc, test_error_and_why);
	tcase_add_test(tc, test_child_dies);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(bpf_child_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
