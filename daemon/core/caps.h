/* SPDX-License-Identifier: Apache-2.0 */
/* Capability names (caps.c). */
#ifndef VITALSD_CORE_CAPS_H
#define VITALSD_CORE_CAPS_H

#include <stddef.h>
#include <stdint.h>

#define CAPS_MAX 64 /* capability numbers fit a uint64_t mask */

/* "sys_ptrace, dac_read_search" (commas or blanks), "none" or "" → mask;
 * -EINVAL for an unknown name, -ERANGE for a number over CAPS_MAX - 1. */
int caps_parse(const char *s, uint64_t *ret);
/* "sys_ptrace" for CAP_SYS_PTRACE; NULL for a number with no name. */
const char *caps_name(unsigned cap);
/* "sys_ptrace,dac_read_search" or "none"; -ENOSPC when cut. */
int caps_format(uint64_t mask, char *buf, size_t bufsz);

#endif /* VITALSD_CORE_CAPS_H */
