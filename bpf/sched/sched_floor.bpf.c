// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench/bpf_sched.sh's floor, never loaded by the daemon: the hooks of
 * sched.bpf.c with empty bodies. The kernel's BPF statistics time a run
 * with sched_clock() before and after it, so what these report per run is
 * the statistics' own cost plus the call into the program, read with the
 * real programs in the same ping-pong; the real programs' figures minus
 * these are what their bodies cost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_switch")
int
BPF_PROG(floor_switch, bool preempt, struct task_struct *prev,
    struct task_struct *next)
{
	return 0;
}

SEC("tp_btf/sched_wakeup")
int
BPF_PROG(floor_wakeup, struct task_struct *p)
{
	return 0;
}
