/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"

int
frame_header(const uint8_t hdr[VITALS_FRAME_HDR], uint32_t max,
    uint32_t *ret_len)
{
	uint32_t len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
	    (uint32_t)hdr[2] << 8 | (uint32_t)hdr[3];

	if (len == 0)
		return -EBADMSG;
	if (len > max)
		return -EMSGSIZE;
	*ret_len = len;
	return 0;
}

void
frame_put_header(uint8_t hdr[VITALS_FRAME_HDR], uint32_t len)
{
	hdr[0] = (uint8_t)(len >> 24);
	hdr[1] = (uint8_t)(len >> 16);
	hdr[2] = (uint8_t)(len >> 8);
	hdr[3] = (uint8_t)len;
}

static int
pack(size_t n, const ProtobufCMessage *m, uint8_t **ret, size_t *ret_len)
{
	uint8_t *buf;

	/* An empty message is legal protobuf but not a legal frame. */
	if (n == 0 || n > UINT32_MAX)
		return -EMSGSIZE;
	if ((buf = malloc(VITALS_FRAME_HDR + n)) == NULL)
		return -ENOMEM;
	protobuf_c_message_pack(m, buf + VITALS_FRAME_HDR);
	frame_put_header(buf, (uint32_t)n);
	*ret = buf;
	*ret_len = VITALS_FRAME_HDR + n;
	return 0;
}

int
frame_pack_request(const Vitals__Request *req, uint8_t **ret, size_t *ret_len)
{
	return pack(vitals__request__get_packed_size(req),
	    (const ProtobufCMessage *)req, ret, ret_len);
}

int
frame_pack_response(const Vitals__Response *resp, uint8_t **ret,
    size_t *ret_len)
{
	return pack(vitals__response__get_packed_size(resp),
	    (const ProtobufCMessage *)resp, ret, ret_len);
}

Vitals__Request *
frame_unpack_request(const uint8_t *payload, size_t len)
{
	return vitals__request__unpack(NULL, len, payload);
}

Vitals__Response *
frame_unpack_response(const uint8_t *payload, size_t len)
{
	return vitals__response__unpack(NULL, len, payload);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for fd to become ready for events, within the deadline. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left = deadline - now_ms();
	int r;

	if (left <= 0)
		return -ETIMEDOUT;
	r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

int
frame_send(int fd, const uint8_t *buf, size_t len, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	int r;

	while (len > 0) {
		/* MSG_NOSIGNAL: a vanished peer is an error, not a SIGPIPE. */
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EPIPE)
			return -ECONNRESET;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if ((r = wait_fd(fd, POLLOUT, deadline)) < 0)
			return r;
	}
	return 0;
}

static int
recv_exact(int fd, uint8_t *buf, size_t len, int64_t deadline)
{
	int r;

	while (len > 0) {
		ssize_t n = read(fd, buf, len);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if ((r = wait_fd(fd, POLLIN, deadline)) < 0)
			return r;
	}
	return 0;
}

int
frame_recv(int fd, uint32_t max, int timeout_ms, uint8_t **ret, size_t *ret_len)
{
	int64_t deadline = now_ms() + timeout_ms;
	uint8_t hdr[VITALS_FRAME_HDR];
	uint8_t *buf;
	uint32_t len;
	int r;

	if ((r = recv_exact(fd, hdr, sizeof(hdr), deadline)) < 0)
		return r;
	if ((r = frame_header(hdr, max, &len)) < 0)
		return r;
	if ((buf = malloc(len)) == NULL)
		return -ENOMEM;
	if ((r = recv_exact(fd, buf, len, deadline)) < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}
