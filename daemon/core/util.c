/* SPDX-License-Identifier: Apache-2.0 */
/* Small shared helpers: growable buffers, whole-file reads, clocks. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

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

/*
 * Append what a stream fd (a BPF iterator's, a pipe) gives until its end,
 * with read(2): seq_file streams cannot be read at an offset. The buffer
 * grows by grow bytes whenever less than low is left. On an error what
 * was read stays in b (no NUL is added).
 */
int
read_fd_stream(int fd, struct vbuf *b, size_t low, size_t grow)
{
	ssize_t n;
	int r;

	for (;;) {
		if (b->cap - b->len < low && (r = vbuf_reserve(b, grow)) < 0)
			return r;
		n = read(fd, b->p + b->len, b->cap - b->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		b->len += (size_t)n;
	}
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

/*
 * The kernel picks one of three formulas at build time, by USER_HZ: an
 * exact division when USER_HZ divides 10^9 (100, 250, 1000: every
 * configuration in use), an exact one through 512 when 512 divides
 * USER_HZ, else ×9 over a rounded divisor. hz 0 (unknown) gives 0.
 */
void
clock_t_factors(unsigned hz, uint64_t *ret_mul, uint64_t *ret_div)
{
	if (hz == 0) {
		*ret_mul = 0;
		*ret_div = 1;
	} else if (NSEC_PER_SEC % hz == 0) {
		*ret_mul = 1;
		*ret_div = (uint64_t)NSEC_PER_SEC / hz;
	} else if (hz % 512 == 0) {
		*ret_mul = hz / 512;
		*ret_div = (uint64_t)NSEC_PER_SEC / 512;
	} else {
		*ret_mul = 9;
		*ret_div = (9ull * NSEC_PER_SEC + hz / 2) / hz;
	}
}

uint64_t
ns_to_clock_t(uint64_t ns, unsigned hz)
{
	uint64_t mul, div;

	clock_t_factors(hz, &mul, &div);
	return mul == 1 ? ns / div : ns * mul / div;
}

int64_t
clock_ns(int clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts) < 0)
		return -1;
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

void
nap_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The value of the word value names in table w; -EINVAL none. */
int
parse_word(const char *value, const struct parse_word *w)
{
	for (; w->name; w++)
		if (!strcmp(value, w->name))
			return w->value;
	return -EINVAL;
}

/* Strict decimal: digits only, no sign, no trailing text, at most max. */
int
parse_uint(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (*s < '0' || *s > '9')
			return -EINVAL;
		/* d > max first: max - d would wrap (a digit over a max
		 * below 9 passed until 6 Dec 2026) */
		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
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

/* "500ms", "30s", "10m", "1h", a bare number is seconds: ns. */
int
parse_span_ns(const char *s, int64_t *ret)
{
	char *end;
	unsigned long long v;
	int64_t unit = NSEC_PER_SEC;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (!strcmp(end, "ms"))
		unit = NSEC_PER_MSEC;
	else if (!strcmp(end, "us"))
		unit = NSEC_PER_USEC;
	else if (!strcmp(end, "s") || *end == '\0')
		unit = NSEC_PER_SEC;
	else if (!strcmp(end, "m"))
		unit = 60 * NSEC_PER_SEC;
	else if (!strcmp(end, "h"))
		unit = 3600 * NSEC_PER_SEC;
	else
		return -EINVAL;
	if (v > (unsigned long long)(INT64_MAX / unit))
		return -ERANGE;
	*ret = (int64_t)v * unit;
	return 0;
}

/* A finite number ≥ 0 ("2.5"). */
int
parse_level(const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || !isfinite(v) || v < 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * Length of the UTF-8 sequence at s (at most n bytes) if it is complete,
 * shortest-form and not a surrogate; 0 otherwise. *ret_cp: the code point.
 */
static size_t
utf8_seq(const unsigned char *s, size_t n, uint32_t *ret_cp)
{
	uint32_t cp, min;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0; /* cut: a name cut to fit ends here */
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return len;
}

/* Code points that move the cursor, break lines or turn text around. */
static bool
cp_is_control(uint32_t cp)
{
	return cp < 0xa0 ||		      /* C1 controls (CSI 0x9b) */
	    cp == 0x2028 || cp == 0x2029 ||   /* line, paragraph breaks */
	    cp == 0x200e || cp == 0x200f ||   /* direction marks */
	    (cp >= 0x202a && cp <= 0x202e) || /* embeddings, overrides */
	    (cp >= 0x2066 && cp <= 0x2069) || /* isolates */
	    cp == 0xfeff;		      /* BOM, zero width */
}

/*
 * Bytes of src (n of them) that make at most max_units UTF-16 code units
 * once name_clean() has kept them: a character of the supplementary planes
 * (4 UTF-8 bytes) is two units, any other character one, and every byte
 * name_clean() turns into '?' one. The cut falls between characters, never
 * inside one (a pair is never split). *ret_cut: something was left out.
 */
size_t
name_utf16_prefix(const char *src, size_t n, size_t max_units, bool *ret_cut)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, units = 0, len, u;
	uint32_t cp;

	while (i < n) {
		len = 1;
		u = 1;
		if (s[i] >= 0x80 && (len = utf8_seq(s + i, n - i, &cp)) == 0)
			len = 1;
		else if (len == 4)
			u = 2;
		if (units + u > max_units)
			break;
		units += u;
		i += len;
	}
	*ret_cut = i < n;
	return i;
}

/*
 * The one rule for every name a task chooses for itself (comm, cmdline,
 * from /proc or the BPF task iterator; ATrace names from trace_marker):
 * it is kept as valid UTF-8 without control characters, so it can reach a
 * terminal (`vitals`, `vitals dump`), the log (SIGUSR2 dump) and protobuf
 * strings as it is. Printable ASCII and complete UTF-8 characters stay;
 * every C0/C1 control, DEL, line or direction control becomes one '?', and
 * every byte of broken UTF-8 (a sequence a cut split, a stray byte) one
 * '?'. Writes at most n bytes and a NUL into dst (n + 1 bytes); dst may
 * be src. Returns the length written.
 */
size_t
name_clean(char *dst, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, len;
	uint32_t cp;

	while (i < n) {
		if (s[i] >= 0x20 && s[i] < 0x7f) {
			dst[o++] = (char)s[i++];
			continue;
		}
		if (s[i] < 0x80 || (len = utf8_seq(s + i, n - i, &cp)) == 0) {
			dst[o++] = '?';
			i++;
			continue;
		}
		if (cp_is_control(cp)) {
			dst[o++] = '?';
		} else {
			memmove(dst + o, s + i, len);
			o += len;
		}
		i += len;
	}
	dst[o] = '\0';
	return o;
}

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

bool
is_procfs(int fd, const char *path)
{
	struct statfs sf;

	if ((path != NULL ? statfs(path, &sf) : fstatfs(fd, &sf)) < 0)
		return false;
	return (unsigned long)sf.f_type == (unsigned long)PROC_SUPER_MAGIC;
}
