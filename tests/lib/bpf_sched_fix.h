/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the check_bpf_sched* suites share: each test's own pin directory
 * below /sys/fs/bpf and plain directory (bsf_setup/bsf_teardown as a Check
 * fixture), and opening the sched accounting with an expected state.
 */
#ifndef VITALS_TEST_BPF_SCHED_FIX_H
#define VITALS_TEST_BPF_SCHED_FIX_H

#include <stdbool.h>
#include <stddef.h>

#include "vitalsd.h"

struct taskiter_events;

extern char *bsf_bpffs;	 /* this test's pin directory */
extern char *bsf_tmpdir; /* this test's plain directory */

void bsf_setup(void);
void bsf_teardown(void);
/* Options on this test's pins and the real /sys, loading on auto. */
struct bpf_sched_opts bsf_opts(void);
/* Open with o, expect state st; returns the handle (NULL when off). */
struct bpf_sched *bsf_open_expect(const struct bpf_sched_opts *o, unsigned st,
    char *why, size_t whysz);
/* The sched accounting opened on pins, loaded or reused (asserted). */
struct bpf_sched *bsf_sched_open(const char *pins);
/* The maps a taskiter scan reads beside the sched accounting (asserted). */
void bsf_events_of(struct bpf_sched *bs, struct taskiter_events *ev);
/* Whether <bpffs>/<kind>_vitals_<name> is pinned. */
bool bsf_exists(const char *kind, const char *name);
/* Remove the pin directories of test processes that are gone. */
void bsf_sweep_stale(void);

#endif
