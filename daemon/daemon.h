/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon (daemon.c): setup, loop, and what it hands the modules that
 * reach back into it.
 */
#ifndef VITALSD_DAEMON_H
#define VITALSD_DAEMON_H

#include <stdbool.h>

struct config;
struct heapprofd;
struct privs_helpers;
struct vitalsd_info;
struct wss;

/* --------------------------------------------------------------- daemon.c */

struct vitalsd;

int vitalsd_setup(const struct config *cfg, bool foreground,
    const struct privs_helpers *helpers, struct vitalsd **ret);
int vitalsd_run(struct vitalsd *d);
struct vitalsd *vitalsd_free(struct vitalsd *d);
void vitalsd_burst(struct vitalsd *d, unsigned duration_ms);

/* daemon.c, the figures of one control-plane answer */
void vitalsd_get_info(struct vitalsd *d, struct vitalsd_info *ret);

/* daemon.c, for the drop */
bool vitalsd_uses_bpf(struct vitalsd *d);

#endif /* VITALSD_DAEMON_H */
