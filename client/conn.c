/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One request, one answer over the control socket, and the mapping of every
 * way that can fail onto the client's exit codes (doc/vitals.1.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "frame.h"

/* Answers may be larger than requests; the daemon bounds them itself. */
#define CONN_RECV_MAX (64u << 20)

/*
 * $VITALS_SOCKET, else the Android path when it exists (init creates it
 * there), else the Linux host path. A path we may not even look at (the
 * shell user and a 0750 state directory) counts as existing: connecting
 * then says "permission denied" about the right path, not "not running"
 * about the wrong one.
 */
const char *
conn_default_socket(void)
{
	const char *env = getenv("VITALS_SOCKET");

	if (env && *env)
		return env;
	if (access(VITALS_SOCKET_ANDROID, F_OK) == 0 || errno == EACCES)
		return VITALS_SOCKET_ANDROID;
	return VITALS_SOCKET_LINUX;
}

static const char *
conn_status_name(Vitals__Status s)
{
	const ProtobufCEnumValue *v =
	    protobuf_c_enum_descriptor_get_value(&vitals__status__descriptor,
		(int)s);

	return v ? v->name : "STATUS_UNKNOWN";
}

static int
conn_status_exit(Vitals__Status s)
{
	switch (s) {
	case VITALS__STATUS__STATUS_OK:
		return VX_OK;
	case VITALS__STATUS__STATUS_PERMISSION_DENIED:
		return VX_DENIED;
	case VITALS__STATUS__STATUS_UNAVAILABLE:
		return VX_UNAVAILABLE;
	case VITALS__STATUS__STATUS_NOT_FOUND:
		return VX_NOT_FOUND;
	case VITALS__STATUS__STATUS_ABSENT:
		return VX_ABSENT;
	default:
		return VX_PROTOCOL;
	}
}

static int
conn_open(const char *path, int timeout_ms, int *ret_fd, struct sbuf *msg)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		sbuf_printf(msg, "socket path too long: %s", path);
		return VX_USAGE;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		sbuf_printf(msg, "socket: %s", strerror(errno));
		return VX_PROTOCOL;
	}
	/* A full backlog blocks connect(2) on a UNIX socket: bound it. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		close(fd);
		switch (e) {
		case ENOENT:
		case ENOTDIR:
			sbuf_printf(msg,
			    "vitalsd is not running: no socket at "
			    "%s (set --socket or VITALS_SOCKET)",
			    path);
			return VX_NOT_RUNNING;
		case ECONNREFUSED:
			sbuf_printf(msg,
			    "vitalsd is not running: nothing "
			    "listens on %s",
			    path);
			return VX_NOT_RUNNING;
		case EACCES:
		case EPERM:
			sbuf_printf(msg,
			    "permission denied connecting to %s: "
			    "%s (the socket is for vitalsd's reader and "
			    "trusted users)",
			    path, strerror(e));
			return VX_DENIED;
		case EAGAIN:
		case ETIMEDOUT:
			sbuf_printf(msg,
			    "vitalsd did not accept a connection "
			    "on %s within %d ms",
			    path, timeout_ms);
			return VX_PROTOCOL;
		default:
			sbuf_printf(msg, "cannot connect to %s: %s", path,
			    strerror(e));
			return VX_PROTOCOL;
		}
	}
	/* frame_send/frame_recv poll with the deadline themselves */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		sbuf_printf(msg, "fcntl: %s", strerror(errno));
		close(fd);
		return VX_PROTOCOL;
	}
	*ret_fd = fd;
	return VX_OK;
}

static int
io_error(int r, int timeout_ms, const char *what, struct sbuf *msg)
{
	switch (r) {
	case -ETIMEDOUT:
		sbuf_printf(msg, "vitalsd did not %s within %d ms", what,
		    timeout_ms);
		break;
	case -ECONNRESET:
		sbuf_printf(msg, "vitalsd closed the connection (%s)", what);
		break;
	case -EBADMSG:
		sbuf_printf(msg, "bad frame from vitalsd: length 0");
		break;
	case -EMSGSIZE:
		sbuf_printf(msg, "bad frame from vitalsd: length above %u",
		    CONN_RECV_MAX);
		break;
	default:
		sbuf_printf(msg, "%s: %s", what, strerror(-r));
		break;
	}
	return VX_PROTOCOL;
}

static void
status_message(const Vitals__Response *resp, struct sbuf *msg)
{
	const char *err = resp->error && *resp->error ? resp->error : NULL;

	switch (resp->status) {
	case VITALS__STATUS__STATUS_PERMISSION_DENIED:
		sbuf_printf(msg, "permission denied by vitalsd: %s",
		    err ? err : "(no reason given)");
		break;
	case VITALS__STATUS__STATUS_UNAVAILABLE:
		sbuf_printf(msg, "vitalsd: %s", err ? err : "unavailable");
		break;
	case VITALS__STATUS__STATUS_ABSENT:
		sbuf_printf(msg, "%s", err ? err : "absent on this device");
		break;
	default:
		sbuf_printf(msg, "vitalsd answered %s%s%s",
		    conn_status_name(resp->status), err ? ": " : "",
		    err ? err : "");
		break;
	}
}

int
conn_call(const char *path, int timeout_ms, const Vitals__Request *req,
    Vitals__Response **ret, struct sbuf *msg)
{
	Vitals__Response *resp = NULL;
	uint8_t *buf = NULL;
	size_t len;
	int fd = -1, r, x;

	*ret = NULL;
	if ((x = conn_open(path, timeout_ms, &fd, msg)) != VX_OK)
		return x;
	if ((r = frame_pack_request(req, &buf, &len)) < 0) {
		sbuf_printf(msg, "cannot encode the request: %s", strerror(-r));
		x = VX_PROTOCOL;
		goto out;
	}
	if ((r = frame_send(fd, buf, len, timeout_ms)) < 0) {
		x = io_error(r, timeout_ms, "take the request", msg);
		goto out;
	}
	free(buf);
	buf = NULL;
	if ((r = frame_recv(fd, CONN_RECV_MAX, timeout_ms, &buf, &len)) < 0) {
		x = io_error(r, timeout_ms, "answer", msg);
		goto out;
	}
	if ((resp = frame_unpack_response(buf, len)) == NULL) {
		sbuf_printf(msg, "malformed answer from vitalsd (%zu bytes)",
		    len);
		x = VX_PROTOCOL;
		goto out;
	}
	/* A refusal before the request was parsed may not know the id. */
	if (resp->id != req->id &&
	    !(resp->id == 0 && resp->status != VITALS__STATUS__STATUS_OK)) {
		sbuf_printf(msg, "answer for request %llu, expected %llu",
		    (unsigned long long)resp->id, (unsigned long long)req->id);
		x = VX_PROTOCOL;
		goto out;
	}
	if (resp->status != VITALS__STATUS__STATUS_OK) {
		status_message(resp, msg);
		x = conn_status_exit(resp->status);
		*ret = resp;
		resp = NULL;
		goto out;
	}
	/* Request op and Response result share their field numbers. */
	if ((int)resp->result_case != (int)req->op_case) {
		sbuf_printf(msg,
		    "vitalsd answered with result %d to "
		    "operation %d",
		    (int)resp->result_case, (int)req->op_case);
		x = VX_PROTOCOL;
		goto out;
	}
	*ret = resp;
	resp = NULL;
	x = VX_OK;
out:
	if (resp)
		vitals__response__free_unpacked(resp, NULL);
	free(buf);
	if (fd >= 0)
		close(fd);
	return x;
}
