/* SPDX-License-Identifier: Apache-2.0 */
/*
 * System properties: bionic's API on Android, a directory of files on a
 * host. The directory double keeps the rules of init's property service
 * (system/core/init/property_service.cpp PropertySet and util.cpp), so code
 * tested against it meets the same refusals on a device:
 *   - a name is [A-Za-z0-9_.@:-]+, neither starting nor ending with '.',
 *     without "..";
 *   - a value is valid UTF-8 and shorter than PROP_VALUE_MAX (92) bytes,
 *     except for ro.* names;
 *   - a ro.* property is write-once;
 *   - a ctl.* name is a control message to init, not a property: the
 *     double refuses it (vitalsd never starts or stops services).
 * The double's file holds the value's bytes; one trailing newline (as
 * `echo` writes) is not part of the value. Files are replaced by rename,
 * so a reader never sees half a value. The double has no SELinux: on a
 * device the property service also checks the caller's context.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __BIONIC__
#include <sys/system_properties.h>
#endif

#include "core/sysprop.h"
#include "sysprop.h"

/* A double's file larger than this is not a value the platform holds. */
#define SYSPROP_FILE_MAX 4096

enum sysprop_kind {
	SP_NONE,
	SP_PLATFORM,
	SP_DIR,
};

struct sysprop {
	enum sysprop_kind kind;
	int dirfd; /* SP_DIR */
};

static bool
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool
sysprop_name_ok(const char *name)
{
	size_t i, n;

	if (name == NULL || (n = strlen(name)) == 0)
		return false;
	if (name[0] == '.' || name[n - 1] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (c == '.') {
			if (name[i - 1] == '.')
				return false;
			continue;
		}
		if (c == '_' || c == '-' || c == '@' || c == ':')
			continue;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9'))
			continue;
		return false;
	}
	return true;
}

/* RFC 3629 UTF-8 (no overlongs, surrogates or code points > U+10FFFF). */
static bool
utf8_ok(const unsigned char *s, size_t len)
{
	size_t i = 0, n, k;

	while (i < len) {
		unsigned char c = s[i], lo = 0x80, hi = 0xbf;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4;
		else
			return false;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
		else if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
		if (len - i < n || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (k = 2; k < n; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return false;
		i += n;
	}
	return true;
}

int
sysprop_value_check(const char *name, const char *value)
{
	size_t n = strlen(value);

	if (n >= SYSPROP_VALUE_MAX && !starts_with(name, "ro."))
		return -E2BIG;
	if (!utf8_ok((const unsigned char *)value, n))
		return -EILSEQ;
	return 0;
}

int
sysprop_open(const char *root, struct sysprop **ret)
{
	struct sysprop *sp;

	if ((sp = calloc(1, sizeof(*sp))) == NULL)
		return -ENOMEM;
	sp->dirfd = -1;
	if (root != NULL) {
		sp->dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sp->dirfd < 0) {
			int r = -errno;

			free(sp);
			return r;
		}
		sp->kind = SP_DIR;
	} else {
#ifdef __BIONIC__
		sp->kind = SP_PLATFORM;
#else
		sp->kind = SP_NONE;
#endif
	}
	*ret = sp;
	return 0;
}

struct sysprop *
sysprop_free(struct sysprop *sp)
{
	if (sp == NULL)
		return NULL;
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	free(sp);
	return NULL;
}

const char *
sysprop_backend(const struct sysprop *sp)
{
	if (sp == NULL)
		return "none";
	switch (sp->kind) {
	case SP_PLATFORM:
		return "platform";
	case SP_DIR:
		return "dir";
	case SP_NONE:
		break;
	}
	return "none";
}

bool
sysprop_available(const struct sysprop *sp)
{
	return sp != NULL && sp->kind != SP_NONE;
}

/* ------------------------------------------------------------ platform */

#ifdef __BIONIC__
struct read_arg {
	char *buf;
	size_t len;
	int r;
};

static void
read_cb(void *cookie, const char *name, const char *value, uint32_t serial)
{
	struct read_arg *a = cookie;
	size_t n = strlen(value);

	(void)name;
	(void)serial;
	if (n >= a->len) {
		a->r = -ERANGE;
		return;
	}
	memcpy(a->buf, value, n + 1);
	a->r = 0;
}

static int
platform_get(const char *name, char *buf, size_t len)
{
	const prop_info *pi = __system_property_find(name);
	struct read_arg a = { buf, len, -ENOENT };

	if (pi == NULL)
		return -ENOENT;
	/* the callback form reads long ro.* values too */
	__system_property_read_callback(pi, read_cb, &a);
	return a.r;
}

static int
platform_set(const char *name, const char *value)
{
	/* the service answers only success or failure; a refusal is
	 * usually SELinux (the caller's context may not set the name) */
	return __system_property_set(name, value) == 0 ? 0 : -EPERM;
}
#endif

/* ------------------------------------------------------- the double */

static int
dir_get(const struct sysprop *sp, const char *name, char *buf, size_t len)
{
	char tmp[SYSPROP_FILE_MAX + 1];
	size_t n = 0;
	ssize_t k;
	int fd, r = 0;

	if ((fd = openat(sp->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) <
	    0)
		return errno == ENOENT ? -ENOENT : -errno;
	while (n < sizeof(tmp) - 1 &&
	    (k = read(fd, tmp + n, sizeof(tmp) - 1 - n)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		n += (size_t)k;
	}
	close(fd);
	if (r < 0)
		return r;
	if (n == sizeof(tmp) - 1)
		return -EFBIG;
	if (n > 0 && tmp[n - 1] == '\n')
		n--;
	tmp[n] = '\0';
	if (strlen(tmp) != n) /* a NUL inside: not a property value */
		return -EBADMSG;
	if (n >= len)
		return -ERANGE;
	memcpy(buf, tmp, n + 1);
	return 0;
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int
dir_set(const struct sysprop *sp, const char *name, const char *value)
{
	char tmp[NAME_MAX + 1];
	size_t n = strlen(value);
	int fd, r;

	if (strlen(name) > NAME_MAX - 16)
		return -ENAMETOOLONG;
	if (starts_with(name, "ro.")) {
		/* write-once: created exclusively, never replaced */
		if ((fd = openat(sp->dirfd, name,
			 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 0644)) < 0)
			return errno == EEXIST ? -EROFS : -errno;
		r = write_all(fd, value, n);
		if (close(fd) < 0 && r == 0)
			r = -errno;
		return r;
	}
	/* names never start with '.': the temporary name is never one */
	snprintf(tmp, sizeof(tmp), ".%s.%ld", name, (long)getpid());
	if ((fd = openat(sp->dirfd, tmp,
		 O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)) <
	    0)
		return -errno;
	r = write_all(fd, value, n);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(sp->dirfd, tmp, sp->dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(sp->dirfd, tmp, 0);
	return r;
}

/* ---------------------------------------------------------------- API */

int
sysprop_get(const struct sysprop *sp, const char *name, char *buf, size_t len)
{
	if (!sysprop_name_ok(name))
		return -EINVAL;
	if (!sysprop_available(sp))
		return -EOPNOTSUPP;
	if (sp->kind == SP_DIR)
		return dir_get(sp, name, buf, len);
#ifdef __BIONIC__
	return platform_get(name, buf, len);
#else
	return -EOPNOTSUPP;
#endif
}

int
sysprop_set(const struct sysprop *sp, const char *name, const char *value)
{
	int r;

	if (!sysprop_name_ok(name))
		return -EINVAL;
	if (starts_with(name, "ctl."))
		return -EPERM;
	if ((r = sysprop_value_check(name, value)) < 0)
		return r;
	if (!sysprop_available(sp))
		return -EOPNOTSUPP;
	if (sp->kind == SP_DIR)
		return dir_set(sp, name, value);
#ifdef __BIONIC__
	return platform_set(name, value);
#else
	return -EOPNOTSUPP;
#endif
}

int
sysprop_unset(const struct sysprop *sp, const char *name)
{
	if (!sysprop_name_ok(name))
		return -EINVAL;
	if (starts_with(name, "ctl."))
		return -EPERM;
	if (!sysprop_available(sp))
		return -EOPNOTSUPP;
	if (starts_with(name, "ro.")) {
		char v[2];

		/* write-once holds for removal too */
		return sysprop_get(sp, name, v, sizeof(v)) == -ENOENT ? 0 :
									-EROFS;
	}
	if (sp->kind == SP_DIR) {
		if (unlinkat(sp->dirfd, name, 0) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	return sysprop_set(sp, name, "");
}

int
sysprop_read(const char *root, const char *name, char *buf, size_t len)
{
	struct sysprop *sp;
	int r;

	if ((r = sysprop_open(root, &sp)) < 0)
		return r;
	r = sysprop_get(sp, name, buf, len);
	sysprop_free(sp);
	return r;
}
