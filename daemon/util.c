/* SPDX-License-Identifier: Apache-2.0 */
/* Small shared helpers: growable buffers, whole-file reads, clocks. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vitalsd.h"

int
vbuf_reserve(struct vbuf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return -ENOMEM;
	need = b->len + extra + 1; /* room for a NUL */
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int
vbuf_printf(struct vbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((r = vbuf_reserve(b, (size_t)n)) < 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void
vbuf_reset(struct vbuf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

void
vbuf_release(struct vbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/*
 * Read a whole file from offset 0 into b (replacing its contents). Long-lived
 * procfs fds are re-read this way instead of being reopened each tick; procfs
 * regenerates the text on every read at offset 0.
 */
int
read_fd_all(int fd, struct vbuf *b)
{
	off_t off = 0;
	ssize_t n;
	int r;

	b->len = 0;
	for (;;) {
		if (b->cap - b->len < 512 && (r = vbuf_reserve(b, 4096)) < 0)
			return r;
		if (b->cap == 0 && (r = vbuf_reserve(b, 4096)) < 0)
			return r;
		n = pread(fd, b->p + b->len, b->cap - b->len - 1, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		b->len += (size_t)n;
		off += n;
	}
	b->p[b->len] = '\0';
	return 0;
}

/* Open path relative to dirfd, read it whole, close it. */
int
read_at(int dirfd, const char *path, struct vbuf *b)
{
	int fd, r;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_fd_all(fd, b);
	close(fd);
	return r;
}

int64_t
clock_ns(int clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts) < 0)
		return -1;
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Strict decimal: digits only, no sign, no trailing text, at most max. */
int
parse_uint(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ret = v;
	return 0;
}

/* A configuration number: parse_uint, then at least min, into 32 bits. */
int
parse_u32_range(const char *s, uint64_t min, uint64_t max, uint32_t *ret)
{
	uint64_t v;
	int r;

	if (max > UINT32_MAX)
		max = UINT32_MAX;
	if ((r = parse_uint(s, max, &v)) < 0)
		return r;
	if (v < min)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}
