/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the check_store* suites share: a store in its own temporary
 * directory (sf_setup/sf_teardown as a Check fixture), hand-made windows,
 * and a field-by-field comparison of windows that names the field.
 */
#ifndef VITALS_TEST_STORE_FIX_H
#define VITALS_TEST_STORE_FIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vitalsd.h"

/* A wall-clock origin aligned on 600 s, so roll-up buckets are exact. */
#define T0 (1699999800LL * NSEC_PER_SEC)
#define SEC NSEC_PER_SEC

/* The fixture's directory and the database path inside it. */
extern char *sf_dir;
extern char sf_path[];

void sf_setup(void);
void sf_teardown(void);

/* store_open on sf_path; asserts success. sf_open_default rolls at every
 * pass (rollup_batch_s = 0). */
struct store *sf_open_opts(const struct store_opts *o);
struct store *sf_open_default(void);
/* store_open on p with store_opts_default's options, and with a spool at
 * spool (NULL: none) committed every commit_s; asserts success. */
struct store *sf_open_path(const char *p);
struct store *sf_open_spool(const char *p, const char *spool,
    unsigned commit_s);
/* One integer from SQL run through store_exec; asserts success. */
long long sf_q_int(struct store *s, const char *sql);
/* PRAGMA integrity_check says "ok" */
void sf_assert_intact(struct store *s);
/* A file's size (0 when absent), whether it exists. */
uint64_t sf_fsize(const char *p);
bool sf_exists(const char *p);

struct window_task sf_mktask(int32_t id, uint64_t starttime, uint64_t ut,
    uint64_t st);
/* A 10 s level-0 window; seq fixes its monotonic place in the boot. */
struct window *sf_mkwin(uint64_t seq, int64_t wall_start_ns);
/* ... without tasks, of boot `boot`, its boot clock the monotonic one and
 * its wall clock T0 + it. */
struct window *sf_mkwin_boot(uint64_t seq, const char *boot);
void sf_add_task(struct window *w, bool thread, struct window_task t);
/* Every field set, every storage rule exercised. */
struct window *sf_full_window(uint64_t seq, int64_t wall, unsigned nprocs,
    unsigned nthreads);
/* The process (thread) id with start time st in w, or NULL. */
const struct window_task *sf_find_task(const struct window *w, bool thread,
    int32_t id, uint64_t st);
/* Field by field, so a failure names the field. */
void sf_eq_window(const struct window *a, const struct window *b);
/* ... the system figures alone: invalid samples, CPU lines, the stat and
 * loadavg gauges, PSI, vmstat, meminfo. */
void sf_eq_sys(const struct window *a, const struct window *b);
/* ... one CPU line (cpu −1: the aggregate), its gauges' every field. */
void sf_eq_cpu(const struct window_cpu *a, const struct window_cpu *b, int cpu);
void sf_free_windows(struct window **v, size_t n);
/* store_put, asserted, then the window freed. */
void sf_put(struct store *s, struct window *w);

/* SQL on a connection of the test's own; asserts success. */
void sf_exec_raw(sqlite3 *db, const char *sql);
/* The store at `from` as an older schema holds it: a fresh file at `to`
 * made by the real steps up to `version`, then, in one transaction, `first`
 * (NULL: nothing) and every table's rows copied but those of the tables in
 * `skip` (an SQL list such as "('windows', 'boot')"; NULL: none). */
void sf_copy_to_version(const char *from, const char *to, unsigned version,
    const char *first, const char *skip);

#endif
