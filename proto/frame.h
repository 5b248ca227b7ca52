/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Framing of the control protocol, shared by the daemon and the client:
 * a 4-byte big-endian payload length, then a serialized Request/Response.
 */
#ifndef VITALS_FRAME_H
#define VITALS_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "vitals.pb-c.h"

#define VITALS_FRAME_HDR 4
#define VITALS_FRAME_MAX_DEFAULT (1u << 20)

/* 0 and *ret_len, or -EBADMSG (length 0) / -EMSGSIZE (above max). */
int frame_header(const uint8_t hdr[VITALS_FRAME_HDR], uint32_t max,
    uint32_t *ret_len);
void frame_put_header(uint8_t hdr[VITALS_FRAME_HDR], uint32_t len);

/* A whole frame (header + payload) in a malloc'd buffer. */
int frame_pack_request(const Vitals__Request *req, uint8_t **ret,
    size_t *ret_len);
int frame_pack_response(const Vitals__Response *resp, uint8_t **ret,
    size_t *ret_len);

/* Decode a payload (no header); NULL when malformed. Free with
 * vitals__request__free_unpacked(x, NULL). */
Vitals__Request *frame_unpack_request(const uint8_t *payload, size_t len);
Vitals__Response *frame_unpack_response(const uint8_t *payload, size_t len);

/*
 * Blocking I/O for clients, bounded by timeout_ms overall: send a whole
 * frame; receive one frame's payload (malloc'd). -ETIMEDOUT, -ECONNRESET
 * (peer closed), -EBADMSG, -EMSGSIZE or another -errno.
 */
int frame_send(int fd, const uint8_t *buf, size_t len, int timeout_ms);
int frame_recv(int fd, uint32_t max, int timeout_ms, uint8_t **ret,
    size_t *ret_len);

#endif
