/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon (daemon.c and the daemon_*.c files, daemon_int.h): setup,
 * loop, and what it hands the modules that reach back into it.
 */
#ifndef VITALSD_DAEMON_H
#define VITALSD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config_reload.h"

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
/* daemon_tick.c */
void vitalsd_burst(struct vitalsd *d, unsigned duration_ms);

/* daemon_info.c, the figures of one control-plane answer */
void vitalsd_get_info(struct vitalsd *d, struct vitalsd_info *ret);

/* daemon.c, for the drop */
bool vitalsd_uses_bpf(struct vitalsd *d);
/* The start-up pageout (core/pageout.h), once, after vitalsd_setup and
 * before the privileges drop: the kernel pages a file's pages out only
 * for a process that owns the file or may write it, and the service user
 * owns none of the program's and libraries' files. */
void vitalsd_pageout(struct vitalsd *d);

/*
 * Reload (SIGHUP, daemon_signal.c): fn rereads the configuration and applies what the
 * running daemon takes (main.c); the daemon says RELOADING=1 and then
 * READY=1 to systemd around it. Its outcome (struct vitalsd_reload,
 * config/config_reload.h) is kept for Health.config.
 */
void vitalsd_on_reload(struct vitalsd *d,
    void (*fn)(struct vitalsd *d, void *arg), void *arg);
struct vitalsd_reload *vitalsd_reload_state(struct vitalsd *d);
/* Take a reloadable key's value from cfg: 0, or -ENOTSUP for a key the
 * running daemon cannot take (config_reloadable() says which). */
int vitalsd_apply(struct vitalsd *d, const struct config *cfg, const char *key);
/* systemd's notify socket (core/sdnotify.h), -1: none. READY=1 is sent
 * by vitalsd_run when the loop starts, STOPPING=1 at a stop. */
void vitalsd_set_notify(struct vitalsd *d, int fd);

#endif /* VITALSD_DAEMON_H */
