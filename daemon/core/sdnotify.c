/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sd_notify(3)'s protocol by hand: the daemon names no libsystemd
 * dependency for one datagram. The socket is connected once, before the
 * privilege drop and the seccomp filter; each message is then a write()
 * on it, which the filter allows as it allows logging.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sdnotify.h"

int
sdnotify_open(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	size_t n;
	int fd, r;

	if (path == NULL || *path == '\0')
		return -1;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path)) {
		unsetenv("NOTIFY_SOCKET");
		return -EINVAL;
	}
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract: no terminating NUL */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	    (path[0] == '@' ? 0 : 1));
	unsetenv("NOTIFY_SOCKET");
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
sdnotify_send(int fd, const char *msg)
{
	size_t n = strlen(msg);
	ssize_t w;

	if (fd < 0)
		return 0;
	w = write(fd, msg, n);
	if (w < 0)
		return -errno;
	return (size_t)w == n ? 0 : -EIO;
}
