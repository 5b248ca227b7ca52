/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the Check suites. */
#ifndef VITALS_TESTUTIL_H
#define VITALS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Path of a file under the source tree's tests/ directory. */
const char *tu_srcpath(const char *rel);
/* Make a fresh temporary directory; the caller removes it with tu_rmtree. */
char *tu_mkdtemp(const char *tag);
int tu_rmtree(const char *path);
/* tu_mkdtemp that fails the test, with the database path <dir>/vitals.db
 * in db (a store test's fixture). */
char *tu_mkdtemp_db(const char *tag, char *db, size_t dbsz);

/* Sleep ms milliseconds, across signals. */
void tu_sleep_ms(unsigned ms);
/* Spend ms milliseconds of this thread's own CPU time, so a test that needs
 * activity makes it instead of hoping the machine's background load does.
 * Wall time is bounded by 20 × ms; returns the CPU ns actually spent. */
unsigned long long tu_burn_ms(unsigned ms);
/* The same, switching out (a 200 us sleep) after every slice_ms of it: a
 * sched_switch accounting that misses one switch-in loses one slice at
 * most (check_bpf_ldr says when that happens). */
unsigned long long tu_burn_sliced_ms(unsigned ms, unsigned slice_ms);
/* A child process that burns CPU until tu_burner_stop (or until this
 * process dies): the activity a daemon window under test must see. */
int tu_burner_start(void);
/* the same, switching out at least every burn_ms (testutil.c says why) */
int tu_burner_start_switching(unsigned burn_ms);
void tu_burner_stop(int pid);
/* A child that waits for one byte on *gate (the write end, the caller's
 * to write to and close) and then execs argv (argv[0] a path): a process
 * whose pid is known before its exec. Fails the test if fork fails. */
int tu_spawn_gated(const char *const *argv, int *gate);
/* Another connection holding the write lock of the database at path
 * (BEGIN IMMEDIATE), as a slow or stuck writer would; tu_db_release rolls
 * back and closes it. */
struct sqlite3;
struct sqlite3 *tu_db_hold(const char *path);
void tu_db_release(struct sqlite3 *h);
/* Every field of two task rows equal (norm_ticks bit for bit): what a
 * store read back against what was put. */
struct window_task;
void tu_task_eq(const struct window_task *a, const struct window_task *b);
/* Write data to path (creating parent directories), truncating in place so
 * an fd already open on the file sees the new contents. */
int tu_write(const char *path, const char *data, size_t len);
int tu_writes(const char *path, const char *text);
/* Copy a tree recursively, overwriting files in place. */
int tu_copytree(const char *src, const char *dst);
/* A heap copy of exactly len bytes with no NUL after it (asserted), so that
 * AddressSanitizer reports a parser's read past len; free() it. */
char *tu_exact_copy(const char *s, size_t len);
/* Fill n bytes with 0xa5; whether they all still hold it (1) or not (0):
 * an output a failed parse must leave untouched. */
void tu_poison(void *p, size_t n);
int tu_is_poisoned(const void *p, size_t n);
/* Run a suite with CK_NORMAL output; returns the process exit status. */
struct Suite;
int tu_run(struct Suite *s);
/* A program whose test cases meson runs as separate tests, one case each
 * (CK_RUN_CASE; tests/meson.build split_cases), names its cases (NULL-
 * terminated): false, said on stderr, when CK_RUN_CASE names none of them
 * (Check would run nothing, and pass) or when VITALS_TEST_CASES, the
 * comma-separated list meson gives each, is not exactly those names (a
 * case left out of CI, or one renamed). */
bool tu_cases_ok(const char *const *names);
/* Whether this runs as root; as a user it says on stderr that the test,
 * which needs root for why, is skipped: main then returns 77, a skip to
 * meson (CI runs as root, where it runs). */
bool tu_need_root(const char *why);
/* Whether this runs as root: a suite adds its root-only test case only
 * then (tu_run_root reports the rest as a skip when not). */
bool tu_root(void);
/* tu_run for a suite with a root-only test case: as a user, with that case
 * left out, a pass is 77 (a skip to meson: not everything ran). */
int tu_run_root(struct Suite *s);
/* VITALS_TEST_SCALE (default 1, at most 1000): the divisor of a long
 * suite's iteration counts. CI's sanitizer build sets it (.ci/run), where
 * every call costs ~10x and fewer iterations still reach each path; the
 * plain build keeps the full counts (tests/README.md). */
unsigned tu_test_scale(void);
/* Whether the running kernel's release is maj.min or later. */
bool tu_kernel_ge(unsigned maj, unsigned min);
/* n divided by the scale, never below min (nor above n). */
unsigned long long tu_scaled(unsigned long long n, unsigned long long min);

#endif
