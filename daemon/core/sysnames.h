/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Syscall names and numbers (sysnames.c) for the syscall latency tracer
 * (issue 22): the numbers of the traced families on x86_64 and aarch64,
 * the two ABIs vitalsd ships on. The config turns names into the running
 * build's numbers; the daemon turns numbers back into names for its answers.
 * Compat (32-bit) tasks use other numbers and are not in this table.
 */
#ifndef VITALSD_CORE_SYSNAMES_H
#define VITALSD_CORE_SYSNAMES_H

#include <stdint.h>

enum sysnames_arch {
	SYSNAMES_X86_64,
	SYSNAMES_ARM64,
	SYSNAMES__MAX,
};

/* The ABI this build traces (__x86_64__ or __aarch64__); SYSNAMES__MAX on
 * any other, where no name resolves. */
enum sysnames_arch sysnames_native(void);
const char *sysnames_arch_name(enum sysnames_arch arch); /* "x86_64" ... */

/* The number of name on arch, or -ENOENT (not in the table, or no such
 * call on that arch: aarch64 has no open, epoll_wait or access). */
int sysnames_nr(enum sysnames_arch arch, const char *name);

/* The name of nr on arch, or NULL when the table does not know it. */
const char *sysnames_name(enum sysnames_arch arch, uint32_t nr);

#endif
