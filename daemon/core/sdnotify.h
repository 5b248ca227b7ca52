/* SPDX-License-Identifier: Apache-2.0 */
/*
 * systemd's readiness protocol (sd_notify(3)) without libsystemd
 * (sdnotify.c): one datagram of "KEY=value" lines to $NOTIFY_SOCKET.
 */
#ifndef VITALSD_SDNOTIFY_H
#define VITALSD_SDNOTIFY_H

/* Connect to $NOTIFY_SOCKET (a path, or "@name" in the abstract
 * namespace) and unset it, so no child inherits it: the fd, -1 when there
 * is none (not under systemd), -errno on failure. Before the privilege
 * drop: the socket is root's. */
int sdnotify_open(void);
/* One message, e.g. "READY=1\nSTATUS=sampling"; nothing when fd < 0. */
int sdnotify_send(int fd, const char *msg);

#endif /* VITALSD_SDNOTIFY_H */
