/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A BPF load in a child process (bpf_child.c): the kernel BTF's parse
 * stays out of the daemon's memory high-water mark.
 */
#ifndef VITALSD_CORE_BPF_CHILD_H
#define VITALSD_CORE_BPF_CHILD_H

#include <stddef.h>
#include <stdint.h>

#define BPF_CHILD_FDS_MAX 8
#define BPF_CHILD_TIMEOUT_MS 30000 /* a child not answering by then is killed */

/*
 * Runs in the child: fills fds[0..nfds) (all of them when it returns >= 0)
 * and out; its result (0 or -errno) is bpf_child_run's.
 */
typedef int (
    *bpf_child_fn)(void *arg, int *fds, size_t nfds, void *out, size_t outsz);

/*
 * fn in a child; its fds become ours (close-on-exec), out is copied back.
 * -ECHILD: the child died without an answer; -EPROTO: a short answer;
 * -ETIMEDOUT: no answer in BPF_CHILD_TIMEOUT_MS (the child is killed).
 */
int bpf_child_run(bpf_child_fn fn, void *arg, int *fds, size_t nfds, void *out,
    size_t outsz);

#endif /* VITALSD_CORE_BPF_CHILD_H */
