// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Objects for tests/check_bpf_ldr.c, one per -D: each breaks one rule of
 * the platform BPF loader's format (bpf/aosp/bpfloader.h), and the test
 * loader (tests/bpfldr.c) must treat it as the real one does.
 *   BAD_NO_LICENSE  no "license" section: refused
 *   BAD_MAP_SIZE    "maps" entries of 124 bytes, size_of_bpf_map_def
 *                   says 120: the section is no whole number: refused
 *   BAD_SMALL_DEF   size_of_bpf_map_def 16, below the oldest format's 32:
 *                   refused
 *   BAD_ZERO        a map's v0.0 uid field is not 0: refused
 *   BAD_NO_DEF      a program without its F_def in "progs": refused
 *   BAD_BTF_MAP     the program uses a BTF-style ".maps" map the loader
 *                   never creates: its load instruction is left as is and
 *                   the verifier refuses the program
 *   UNKNOWN_SECTION a "tp_btf/" section besides a good tracepoint one: not
 *                   a program type the loader knows, so it is skipped (no
 *                   pin) and the rest loads
 */
#include "../bpf/aosp/bpfloader.h"

struct args {
	__u64 common;
	char comm[16];
	__s32 pid;
};

#ifdef BAD_MAP_SIZE
struct big_def {
	struct vldr_map_def def;
	__u32 extra;
};
const struct big_def VLDR_SEC("maps") counts = {
	.def = { .type = VLDR_MAP_ARRAY,
	    .key_size = 4,
	    .value_size = 8,
	    .max_entries = 1,
	    .mode = 0600,
	    .bpfloader_max_ver = VLDR_MAX_VER,
	    .max_kver = VLDR_KVER_INF },
};
#elif defined(BAD_BTF_MAP)
struct {
	int (*type)[VLDR_MAP_ARRAY];
	int (*max_entries)[1];
	__u32 *key;
	__u64 *value;
} counts VLDR_SEC(".maps");
#else
VLDR_MAP(counts, ARRAY, __u32, __u64, 1, 0, 0, 0600);
#endif

#ifdef BAD_ZERO
const struct vldr_map_def VLDR_SEC("maps") other = {
	.type = VLDR_MAP_ARRAY,
	.key_size = 4,
	.value_size = 8,
	.max_entries = 1,
	.zero = 1000,
	.mode = 0600,
	.bpfloader_max_ver = VLDR_MAX_VER,
	.max_kver = VLDR_KVER_INF,
};
#endif

static __always_inline int
bump(void)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &zero);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

#ifdef BAD_NO_DEF
VLDR_SEC("tracepoint/sched/sched_switch") int tp_switch(struct args *ctx)
{
	(void)ctx;
	return bump();
}
#else
VLDR_PROG("tracepoint/sched/sched_switch", 0, 0, tp_switch, struct args)
{
	(void)ctx;
	return bump();
}
#endif

#ifdef UNKNOWN_SECTION
VLDR_PROG("tp_btf/sched_switch", 0, 0, btf_switch, struct args)
{
	(void)ctx;
	return bump();
}
#endif

#ifdef BAD_SMALL_DEF
__u32 _bpfloader_min_ver VLDR_SEC("bpfloader_min_ver") = VLDR_MIN_VER;
__u32 _bpfloader_max_ver VLDR_SEC("bpfloader_max_ver") = VLDR_MAX_VER;
__u32 _size_of_bpf_map_def VLDR_SEC("size_of_bpf_map_def") = 16;
__u32 _size_of_bpf_prog_def VLDR_SEC("size_of_bpf_prog_def") = 92;
char _license[] VLDR_SEC("license") = "GPL";
#elif defined(BAD_NO_LICENSE)
__u32 _size_of_bpf_map_def VLDR_SEC("size_of_bpf_map_def") = 120;
__u32 _size_of_bpf_prog_def VLDR_SEC("size_of_bpf_prog_def") = 92;
#else
VLDR_LICENSE("GPL");
#endif
