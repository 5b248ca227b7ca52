/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's BPF scheduler rows as a compact payload (store_bpfrows.c;
 * version 4 and the reader of every version store_bpfrows4.c):
 * per uid (window_bpf_uid), per process (window_bpf_proc), the
 * run-queue histogram included, and per thread (window_bpf_thread). Pure encoding.
 */
#ifndef VITALSD_STORE_BPFROWS_H
#define VITALSD_STORE_BPFROWS_H

#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "store/store_codec.h"

/* The frame's part number and the encodings' versions (store_codec.h):
 * 1 row after row, uids and processes; 2 column after column, threads
 * too and a process's flags; 3 version 2 and the uids' run-queue figures
 * and the threads' histograms; 4 (written now) version 3's figures in
 * fewer bytes (a process that is the sum of its thread rows derived,
 * byte planes, histograms slot after slot). */
#define STORE_BPFROWS_PART 4
#define STORE_BPFROWS_V1 1
#define STORE_BPFROWS_V2 2
#define STORE_BPFROWS_V3 3
#define STORE_BPFROWS_V4 4
#define STORE_BPFROWS_VERSION STORE_BPFROWS_V4

struct store_bpfrows {
	struct window_bpf_uid *uid; /* uid UINT32_MAX: the "other" row */
	size_t nuid;
	struct window_bpf_proc *proc; /* tgid −1: the "other" row */
	size_t nproc;
	struct window_bpf_thread *thread; /* tid −1: the "other" row */
	size_t nthread;
};

/* Version 4: every row of b, in any order (kept); pad fields are not
 * written. */
int store_bpfrows_put4(struct store_enc *e, const struct store_bpfrows *b);
/* Version 3 (older stores; tests): the same rows, as doc/storage.md's
 * "BPF rows, version 3". */
int store_bpfrows_put3(struct store_enc *e, const struct store_bpfrows *b);
/* Version 2 (older stores; tests): as version 3 without the uids'
 * run-queue figures and the threads' histograms. */
int store_bpfrows_put2(struct store_enc *e, const struct store_bpfrows *b);
/* The rows of buf[0..len) in version (1 to 4), as store_bpfrows_get. */
int store_bpfrows_get_v(const void *buf, size_t len, unsigned version,
    size_t max, struct store_bpfrows *ret);

/* Version 1 (older stores; tests): rows u[0..nu) and p[0..np), in any
 * order (kept); pad fields and process flags are not written. */
int store_bpfrows_put(struct store_enc *e, const struct window_bpf_uid *u,
    size_t nu, const struct window_bpf_proc *p, size_t np);
/* The rows of buf[0..len), at most max of each kind (-EBADMSG past it, or
 * for any malformed byte), pads zeroed. Release *ret with
 * store_bpfrows_release(). */
int store_bpfrows_get(const void *buf, size_t len, size_t max,
    struct store_bpfrows *ret);
void store_bpfrows_release(struct store_bpfrows *b);

/* A row's key and on-CPU time alone (a process: id is its tgid; the
 * "other" rows: id −1), what a wcpu part may name (store_wcpu.c). */
struct store_bpfkey {
	int32_t id, tgid;
	uint64_t starttime, oncpu_ns;
};

struct store_bpfkeys {
	struct store_bpfkey *proc; /* the process rows, in the blob's order */
	size_t nproc;
	struct store_bpfkey *thread; /* the thread rows, in the blob's order */
	size_t nthread;
};

/* store_bpfkeys.c: the keys of the rows of buf[0..len) in version (1 to
 * 4): those store_bpfrows_get_v gives, refused exactly when it refuses
 * the payload (version 4 read without keeping the run-queue columns).
 * Release *ret with store_bpfkeys_release(). */
int store_bpfrows_keys(const void *buf, size_t len, unsigned version,
    size_t max, struct store_bpfkeys *ret);
void store_bpfkeys_release(struct store_bpfkeys *k);

#endif /* VITALSD_STORE_BPFROWS_H */
