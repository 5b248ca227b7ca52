/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phases (doc/metrics.md "Fault phases"): the tracker fed by the
 * ATrace tracker (phase.c) and the /proc/<pid>/maps parser and class
 * lookup it uses (phase_maps.c, no I/O).
 */
#ifndef VITALSD_PHASE_H
#define VITALSD_PHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define PHASE_NAMES_MAX 16  /* configured names or prefixes */
#define PHASE_MAPS_MAX 4096 /* ranges kept of one process's maps */

/* One line of /proc/<pid>/maps as the class lookup keeps it. */
struct phase_range {
	uint64_t start, end; /* [start, end) */
	uint64_t ino;
	uint32_t dev; /* the kernel's dev_t: major << 20 | minor */
	uint8_t cls;  /* enum phase_class */
	uint8_t pad[3];
};

/* phase_maps.c */
unsigned phase_class_of_path(const char *path, size_t len, bool exec);
int phase_maps_parse(const char *buf, size_t len, struct phase_range *out,
    size_t max, size_t *ret_n, uint64_t *ret_bad, uint64_t *ret_cut);
unsigned phase_maps_class_addr(const struct phase_range *r, size_t n,
    uint64_t addr);
unsigned phase_maps_class_file(const struct phase_range *r, size_t n,
    uint32_t dev, uint64_t ino);

/* phase.c */
struct phase;

int phase_new(const char *names, unsigned maps_reads, int procfd,
    struct phase **ret);
struct phase *phase_free(struct phase *ph);
bool phase_match(const struct phase *ph, const char *name);
void phase_set_tgid_fn(struct phase *ph, int32_t (*fn)(int32_t, void *),
    void *arg);
void phase_set_events(struct phase *ph, uint32_t enabled);
void phase_begin(struct phase *ph, const struct ftrace_rec *r, unsigned depth,
    const char *name);
void phase_end(struct phase *ph, const struct ftrace_rec *r, unsigned depth);
void phase_record(struct phase *ph, const struct ftrace_rec *r);
void phase_exit(struct phase *ph, int32_t tid);
void phase_lost(struct phase *ph);
void phase_finish(struct phase *ph);
void phase_window(struct phase *ph, struct window_trace *wt);
size_t phase_open_count(const struct phase *ph);

#endif /* VITALSD_PHASE_H */
