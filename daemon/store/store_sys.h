/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's system rows as a compact payload (store_sys.c): the CPU
 * lines (the aggregate and each CPU) and the PSI resources. Pure encoding.
 */
#ifndef VITALSD_STORE_SYS_H
#define VITALSD_STORE_SYS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store_codec.h"
#include "window/window.h"

/* The frame's part number and this encoding's version (store_codec.h). */
#define STORE_SYS_PART 3
#define STORE_SYS_VERSION 1

struct store_sys_cpu {
	int32_t cpu; /* −1: the aggregate line */
	struct window_cpu c;
};

struct store_sys_psi {
	uint32_t res; /* enum psi_res */
	struct window_psi p;
};

struct store_sys {
	struct store_sys_cpu *cpu;
	size_t ncpu;
	struct store_sys_psi *psi;
	size_t npsi;
};

/* CPU rows c[0..nc) and PSI rows p[0..np), in any order (kept); a
 * resource past 255 is -EINVAL. */
int store_sys_put(struct store_enc *e, const struct store_sys_cpu *c, size_t nc,
    const struct store_sys_psi *p, size_t np);
/* The rows of buf[0..len), at most max of each kind (-EBADMSG past it,
 * or for any malformed byte). Release *ret with store_sys_release(). */
int store_sys_get(const void *buf, size_t len, size_t max,
    struct store_sys *ret);
void store_sys_release(struct store_sys *s);

#endif /* VITALSD_STORE_SYS_H */
