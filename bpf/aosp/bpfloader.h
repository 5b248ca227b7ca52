/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The object format Android's platform BPF loader (bpfloader, from
 * /system/etc/bpf at boot) reads, written down for vitalsd's programs and
 * for the test loader that checks them (tests/bpfldr.c). Facts, as
 * doc/bpf.md ("Android: bpfloader objects") cites them; no AOSP header is
 * needed, so the meson build here and Soong's bpf module build the same
 * source.
 *
 * What an object holds, section by section:
 *   "license"               NUL-terminated string; no license, no load
 *   "critical"              optional string: a failure fails the boot step
 *   "bpfloader_min_ver"     u32, inclusive; absent: 0
 *   "bpfloader_max_ver"     u32, exclusive; absent: 0x10000 (v1.0)
 *   "size_of_bpf_map_def"   u32, the size of one "maps" entry; absent: 32
 *   "size_of_bpf_prog_def"  u32, the size of one "progs" entry; absent: 20
 *   "maps"                  an array of struct vldr_map_def, one per
 *                           symbol in the section (the map's name)
 *   "progs"                 an array of struct vldr_prog_def, the one for
 *                           program function F named F_def
 *   "<type>/<anything>"     one program per section, its type from the
 *                           prefix ("tracepoint/", "kprobe/", ...), with
 *                           ".rel<section>" right after it for map loads
 * Nothing else is read: no BTF, no ".maps", no global data (.rodata,
 * .data, .bss), no calls between functions (one section is one program).
 *
 * Built for the BPF target (clang -target bpf, __bpf__) this also
 * declares the helpers the programs call; built for the host it only
 * gives the layouts.
 */
#ifndef VITALS_BPFLOADER_H
#define VITALS_BPFLOADER_H

#ifdef __bpf__
/* No system header for the BPF target: the few uapi types and numbers
 * the programs use, with the kernel's values. */
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed int __s32;
typedef signed long long __s64;
#else
#include <linux/types.h>
#endif

/* enum bpf_map_type values (uapi/linux/bpf.h) */
#define VLDR_MAP_HASH 1
#define VLDR_MAP_ARRAY 2
#define VLDR_MAP_PERCPU_ARRAY 6
#define VLDR_MAP_LRU_HASH 9

/* enum bpf_prog_type values the platform loader knows by prefix */
#define VLDR_PROG_SOCKET_FILTER 1
#define VLDR_PROG_KPROBE 2
#define VLDR_PROG_TRACEPOINT 5
#define VLDR_PROG_PERF_EVENT 7

/* Loader versions are (major << 16) | minor. */
#define VLDR_VERSION(maj, min) (((maj) << 16) | (min))
/*
 * The oldest loader the objects are meant for: v0.2 (Android 12, the
 * first with min_kver/max_kver). Every field after bpfloader_max_ver is
 * read only by newer loaders, and zero (or the default) means "no
 * constraint" to all of them.
 */
#define VLDR_MIN_VER VLDR_VERSION(0, 2)
#define VLDR_MAX_VER VLDR_VERSION(1, 0) /* exclusive: every v0.x */

/* One "maps" entry: 120 bytes, 4-byte aligned, little endian. */
struct vldr_map_def {
	__u32 type; /* enum bpf_map_type */
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 map_flags;
	__u32 zero; /* the pin's uid in v0.0; must be 0 (root) */
	__u32 gid;  /* the pin's group */
	__u32 mode; /* the pin's mode */
	/* v0.1 */
	__u32 bpfloader_min_ver;
	__u32 bpfloader_max_ver;
	/* v0.2: created only if min_kver <= kernel < max_kver */
	__u32 min_kver;
	__u32 max_kver;
	/* v0.18: empty strings keep the defaults of the object's location */
	char selinux_context[32];
	char pin_subdir[32];
	__u8 shared;	/* pin without the object's name */
	__u8 ignore_on; /* v0.32+ build-type and arch bits: none */
	__u8 pad0[2];
	__u32 uid; /* the pin's owner (v0.28+) */
};

/* One "progs" entry: 92 bytes. */
struct vldr_prog_def {
	__u32 uid; /* the program pin's owner and group */
	__u32 gid;
	__u32 min_kver; /* loaded only if min_kver <= kernel < max_kver */
	__u32 max_kver;
	__u8 optional;	/* a failed load skips it, not the object */
	__u8 ignore_on; /* build-type and arch bits: none */
	__u8 pad0[2];
	__u32 bpfloader_min_ver;
	__u32 bpfloader_max_ver;
	char selinux_context[32];
	char pin_subdir[32];
};

_Static_assert(sizeof(struct vldr_map_def) == 120, "bpf_map_def is 120 bytes");
_Static_assert(sizeof(struct vldr_prog_def) == 92, "bpf_prog_def is 92 bytes");

/* The smallest entries a loader accepts (the v0.0 layouts). */
#define VLDR_MAP_DEF_MIN 32
#define VLDR_PROG_DEF_MIN 20

#define VLDR_KVER(a, b, c) (((a) << 24) + ((b) << 16) + (c))
#define VLDR_KVER_INF 0xffffffffu

#ifdef __bpf__
#define VLDR_SEC(name) __attribute__((section(name), used))

/* The object's header sections, once per object. */
#define VLDR_LICENSE(text)                                                     \
	__u32 _bpfloader_min_ver VLDR_SEC("bpfloader_min_ver") = VLDR_MIN_VER; \
	__u32 _bpfloader_max_ver VLDR_SEC("bpfloader_max_ver") = VLDR_MAX_VER; \
	__u32 _size_of_bpf_map_def VLDR_SEC("size_of_bpf_map_def") = sizeof(   \
	    struct vldr_map_def);                                              \
	__u32 _size_of_bpf_prog_def VLDR_SEC("size_of_bpf_prog_def") = sizeof( \
	    struct vldr_prog_def);                                             \
	char _license[] VLDR_SEC("license") = (text)

/* A map: its pin is map_<object>_<name>, owned uid:gid with mode. */
#define VLDR_MAP(name, TYPE, ktype, vtype, entries, owner, group, md) \
	const struct vldr_map_def VLDR_SEC("maps") name = {           \
		.type = VLDR_MAP_##TYPE,                              \
		.key_size = sizeof(ktype),                            \
		.value_size = sizeof(vtype),                          \
		.max_entries = (entries),                             \
		.gid = (group),                                       \
		.mode = (md),                                         \
		.bpfloader_min_ver = VLDR_MIN_VER,                    \
		.bpfloader_max_ver = VLDR_MAX_VER,                    \
		.min_kver = 0,                                        \
		.max_kver = VLDR_KVER_INF,                            \
		.uid = (owner),                                       \
	}

/*
 * A program in section sec ("tracepoint/<group>/<event>"): its pin is
 * prog_<object>_<sec with '/' made '_'>, mode 0440, owner:group.
 */
#define VLDR_PROG(sec, owner, group, fn, ctxtype)                 \
	const struct vldr_prog_def VLDR_SEC("progs") fn##_def = { \
		.uid = (owner),                                   \
		.gid = (group),                                   \
		.min_kver = 0,                                    \
		.max_kver = VLDR_KVER_INF,                        \
		.bpfloader_min_ver = VLDR_MIN_VER,                \
		.bpfloader_max_ver = VLDR_MAX_VER,                \
	};                                                        \
	VLDR_SEC(sec) int fn(ctxtype *ctx)

/* The same, loaded only where min_kver <= kernel < max_kver: variants of
 * one program for kernels with and without a helper, sections "sec$x"
 * and "sec$y" (the "$..." is not part of the pin). */
#define VLDR_PROG_KVER(sec, owner, group, fn, ctxtype, minkv, maxkv) \
	const struct vldr_prog_def VLDR_SEC("progs") fn##_def = {    \
		.uid = (owner),                                      \
		.gid = (group),                                      \
		.min_kver = (minkv),                                 \
		.max_kver = (maxkv),                                 \
		.bpfloader_min_ver = VLDR_MIN_VER,                   \
		.bpfloader_max_ver = VLDR_MAX_VER,                   \
	};                                                           \
	VLDR_SEC(sec) int fn(ctxtype *ctx)

/* Helper calls by number (uapi enum bpf_func_id). */
static void *(
    *bpf_map_lookup_elem)(const void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(const void *map, const void *key,
    const void *value, __u64 flags) = (void *)2;
static long (
    *bpf_map_delete_elem)(const void *map, const void *key) = (void *)3;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static __u64 (*bpf_get_current_uid_gid)(void) = (void *)15;
/* Linux 5.15+: the cookie given to the perf event link at attach */
static __u64 (*bpf_get_attach_cookie)(void *ctx) = (void *)174;

#define BPF_ANY 0
#define BPF_NOEXIST 1

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif /* __bpf__ */

#endif /* VITALS_BPFLOADER_H */
