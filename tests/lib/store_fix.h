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
/* One integer from SQL run through store_exec; asserts success. */
long long sf_q_int(struct store *s, const char *sql);
/* A file's size (0 when absent), whether it exists. */
uint64_t sf_fsize(const char *p);
bool sf_exists(const char *p);

struct window_task sf_mktask(int32_t id, uint64_t starttime, uint64_t ut,
    uint64_t st);
/* A 10 s level-0 window; seq fixes its monotonic place in the boot. */
struct window *sf_mkwin(uint64_t seq, int64_t wall_start_ns);
void sf_add_task(struct window *w, bool thread, struct window_task t);
/* Every field set, every storage rule exercised. */
struct window *sf_full_window(uint64_t seq, int64_t wall, unsigned nprocs,
    unsigned nthreads);
/* The process (thread) id with start time st in w, or NULL. */
const struct window_task *sf_find_task(const struct window *w, bool thread,
    int32_t id, uint64_t st);
/* Field by field, so a failure names the field. */
void sf_eq_window(const struct window *a, const struct window *b);
void sf_free_windows(struct window **v, size_t n);
/* store_put, asserted, then the window freed. */
void sf_put(struct store *s, struct window *w);

#endif
