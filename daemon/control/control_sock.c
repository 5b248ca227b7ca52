/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the control socket comes from: Android init (ANDROID_SOCKET_vitalsd)
 * or systemd (LISTEN_FDS) hand one over; otherwise it is made here, during
 * the privileged setup, at the configured path, mode 0660. A socket file
 * left by a daemon that died is replaced; a live one, or a file that is
 * not a socket, is never touched. See doc/protocol.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/config.h"
#include "control/control.h"
#include "core/log.h"
#include "core/util.h"

#define CONTROL_BACKLOG 128
#define ANDROID_SOCKET_ENV "ANDROID_SOCKET_vitalsd"

/* The listening fd handed over by Android init or systemd: 1 and the fd,
 * 0 when there is none, -errno when one is announced but unusable. */
static int
inherited_fd(int *ret_fd, const char **ret_how, bool *ret_android)
{
	const char *s, *n;
	uint64_t v, nfds;

	if ((s = getenv(ANDROID_SOCKET_ENV)) != NULL) {
		int r = parse_uint(s, INT_MAX, &v);

		unsetenv(ANDROID_SOCKET_ENV);
		if (r < 0)
			return -EBADF;
		*ret_fd = (int)v;
		*ret_how = "from Android init";
		*ret_android = true;
		return 1;
	}
	s = getenv("LISTEN_PID");
	n = getenv("LISTEN_FDS");
	if (s == NULL || n == NULL || parse_uint(s, INT_MAX, &v) < 0 ||
	    (pid_t)v != getpid())
		return 0;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (parse_uint(n, INT_MAX, &nfds) < 0 || nfds < 1)
		return -EBADF;
	*ret_fd = 3; /* SD_LISTEN_FDS_START */
	*ret_how = "from systemd";
	return 1;
}

/* An inherited fd must be a UNIX stream socket; make it ours. */
static int
adopt_fd(int fd)
{
	int type = 0, dom = 0, fl;
	socklen_t l = sizeof(type);
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		return -errno;
	l = sizeof(dom);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) < 0)
		return -errno;
	if (type != SOCK_STREAM || dom != AF_UNIX)
		return -EPROTOTYPE;
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	/* Android init binds but does not listen; again is harmless. */
	if (listen(fd, CONTROL_BACKLOG) < 0)
		return -errno;
	return 0;
}

/*
 * A socket file left by a daemon that died is removed; one something
 * still listens on is not (-EADDRINUSE), nor any file that is not a
 * socket (-EEXIST).
 */
static int
unlink_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, r;

	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		 0)) < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	if (r < 0)
		r = -errno;
	close(fd);
	/* EAGAIN: a listener with a full backlog is alive too. */
	if (r == 0 || r == -EAGAIN)
		return -EADDRINUSE;
	if (r != -ECONNREFUSED)
		return r == -ENOENT ? 0 : r;
	if (unlink(sa->sun_path) < 0 && errno != ENOENT)
		return -errno;
	log_info("removed stale socket %s", sa->sun_path);
	return 0;
}

static int
create_socket(struct control_sock *cs, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	if ((r = unlink_stale(&sa)) < 0)
		return r;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		 0)) < 0)
		return -errno;
	/* Owner-only until chmod: nobody connects through a wider mode. */
	old = umask(0177);
	r = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (chmod(path, 0660) < 0 || lstat(path, &st) < 0 ||
	    listen(fd, CONTROL_BACKLOG) < 0) {
		r = -errno;
		unlink(path);
		close(fd);
		return r;
	}
	if ((cs->path = strdup(path)) == NULL) {
		unlink(path);
		close(fd);
		return -ENOMEM;
	}
	cs->dev = st.st_dev;
	cs->ino = st.st_ino;
	cs->fd = fd;
	return 0;
}

/*
 * The listening socket: inherited from Android init or systemd, or made at
 * the configured path. 0 and *ret filled, or -errno (logged once here).
 */
int
control_sock_open(const struct config *cfg, struct control_sock *ret)
{
	struct control_sock cs = { .fd = -1 };
	const char *how = NULL;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	int fd, r;

	if ((r = inherited_fd(&fd, &how, &cs.android_init)) < 0)
		return r;
	if (r > 0) {
		if ((r = adopt_fd(fd)) < 0) {
			log_warnx("control socket %s (fd %d): %s", how, fd,
			    strerror(-r));
			return r;
		}
		cs.fd = fd;
		log_info("control socket %s (fd %d)", how, fd);
		*ret = cs;
		return 0;
	}
	if (cfg->socket_path)
		r = snprintf(path, sizeof(path), "%s", cfg->socket_path);
	else
		r = snprintf(path, sizeof(path), "%s/vitalsd.sock",
		    cfg->state_dir);
	if (r < 0 || (size_t)r >= sizeof(path) - 1) {
		log_warnx("control socket path too long (max %zu bytes)",
		    sizeof(path) - 2);
		return -ENAMETOOLONG;
	}
	if ((r = create_socket(&cs, path)) < 0) {
		log_warnx("control socket %s: %s", path,
		    r == -EADDRINUSE ? "another daemon is listening on it" :
			r == -EEXIST ? "exists and is not a socket" :
				       strerror(-r));
		return r;
	}
	log_info("control socket %s", path);
	*ret = cs;
	return 0;
}

/* Close; remove the file if it was made here and is still the same. */
void
control_sock_close(struct control_sock *cs)
{
	struct stat st;

	if (cs->fd >= 0)
		close(cs->fd);
	if (cs->path && lstat(cs->path, &st) == 0 && st.st_dev == cs->dev &&
	    st.st_ino == cs->ino)
		unlink(cs->path);
	free(cs->path);
	cs->fd = -1;
	cs->path = NULL;
}
