/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constants every module shares, wall-time buckets, growable buffers,
 * whole-file reads, clocks and number parsing (util.c).
 */
#ifndef VITALSD_CORE_UTIL_H
#define VITALSD_CORE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define VITALS_CPU_MAX 512  /* cpuN lines above this are counted, not kept */
#define VITALS_COMM_LEN 16  /* TASK_COMM_LEN, including the NUL */
#define VITALS_NAME_LEN 128 /* process name from cmdline, cut */
#define VITALS_SLEEP_NS 50000000LL /* Δboot − Δmono above this: slept */
#define VITALS_INTERVAL_MIN_MS 100
/* The earliest wall time a range reaches (-2^62 ns, year 1823): far
 * before any clock, far enough from INT64_MIN that range arithmetic
 * (from − span) cannot overflow. */
#define VITALS_WALL_MIN (-(INT64_C(1) << 62))

/* The span-aligned bucket of wall time t (span > 0): floor(t / span), so
 * that a bucket before 1970 is as wide as any other. */
static inline int64_t
wall_bucket(int64_t t, int64_t span)
{
	return t / span - (t % span < 0);
}
#define VITALS_BURST_INTERVAL_MS 100
#define VITALS_BURST_MAX_MS 10000

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL
#define NSEC_PER_USEC 1000LL

/* ---------------------------------------------------------------- util.c */

/* A growable byte buffer used for reads and text output. */
struct vbuf {
	char *p;
	size_t len, cap;
};

int vbuf_reserve(struct vbuf *b, size_t extra);
int vbuf_printf(struct vbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vbuf_reset(struct vbuf *b);
void vbuf_release(struct vbuf *b);
int read_fd_all(int fd, struct vbuf *b);
int read_fd_stream(int fd, struct vbuf *b, size_t low, size_t grow);
/* Whether the file system of fd (path NULL) or of path is a kernel's
 * procfs, not a tree of files standing in for one (a fixture). */
bool is_procfs(int fd, const char *path);
int read_at(int dirfd, const char *path, struct vbuf *b);
int64_t clock_ns(int clockid);
/* ms slept whole, a signal's wake-up slept on (test hooks' delays) */
void nap_ms(unsigned ms);
/*
 * The kernel's nsec_to_clock_t() (kernel/time/time.c), USER_HZ = hz: what
 * /proc/<pid>/stat's starttime (field 22) is made of start_boottime with.
 * Floored; the one conversion every BPF figure keyed by starttime uses.
 * clock_t_factors gives it as ns * mul / div, for a BPF program.
 */
void clock_t_factors(unsigned hz, uint64_t *ret_mul, uint64_t *ret_div);
uint64_t ns_to_clock_t(uint64_t ns, unsigned hz);
int parse_uint(const char *s, uint64_t max, uint64_t *ret);
/* Keyword values of an enum-like setting; tables end with a NULL name. */
struct parse_word {
	const char *name;
	int value;
};
int parse_word(const char *value, const struct parse_word *w);
int parse_u32_range(const char *s, uint64_t min, uint64_t max, uint32_t *ret);
int parse_span_ns(const char *s, int64_t *ret);
int parse_level(const char *s, double *ret);
size_t name_clean(char *dst, const char *src, size_t n);
size_t name_utf16_prefix(const char *src, size_t n, size_t max_units,
    bool *ret_cut);

#endif /* VITALSD_CORE_UTIL_H */
