/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The syscall latency keys (syscall_trace, syscalls, syscall_floor_us,
 * syscall_slow_ms, syscall_top, syscall_slow_max, syscall_rb_kib;
 * doc/vitalsd.conf.5.md): config.c hands every key starting "syscall"
 * here. Names resolve on the daemon's own ABI (core/sysnames).
 */
#include <errno.h>
#include <string.h>

#include "core/sysnames.h"
#include "core/util.h"
#include "syscalls/sc_collect.h"

static const char *const sc_default_set[] = { "read", "write", "pread64",
	"pwrite64", "fsync", "fdatasync", "openat", "futex", "epoll_wait",
	"epoll_pwait", "ioctl", "nanosleep", "clock_nanosleep", NULL };

static void
set_bit(struct sc_config *c, int nr)
{
	c->set[nr / 8] |= (uint8_t)(1u << (nr % 8));
}

void
sc_config_init(struct sc_config *c)
{
	enum sysnames_arch a = sysnames_native();
	size_t i;
	int nr;

	memset(c, 0, sizeof(*c));
	c->on = false;
	c->floor_us = 0;
	c->slow_ms = SC_SLOW_MS_DEFAULT;
	c->top = SC_TOP_DEFAULT;
	c->slow_max = SC_SLOW_MAX_DEFAULT;
	c->rb_kib = SC_RB_KIB_DEFAULT;
	/* a name the ABI lacks (epoll_wait on aarch64) is skipped here */
	for (i = 0; sc_default_set[i]; i++)
		if ((nr = sysnames_nr(a, sc_default_set[i])) >= 0 &&
		    nr < SC_CFG_NR_MAX)
			set_bit(c, nr);
}

/* NAME[,NAME...]; an unknown name is an error (-EINVAL), none left
 * changed. */
static int
parse_set(struct sc_config *c, const char *v)
{
	enum sysnames_arch a = sysnames_native();
	uint8_t set[sizeof(c->set)] = { 0 };
	char name[64];
	const char *p = v, *e;
	size_t n;
	int nr, any = 0;

	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		for (e = p; *e && *e != ',' && *e != ' '; e++)
			;
		n = (size_t)(e - p);
		if (n >= sizeof(name))
			return -EINVAL;
		memcpy(name, p, n);
		name[n] = '\0';
		if ((nr = sysnames_nr(a, name)) < 0 || nr >= SC_CFG_NR_MAX)
			return -EINVAL;
		set[nr / 8] |= (uint8_t)(1u << (nr % 8));
		any = 1;
		p = e;
	}
	if (!any)
		return -EINVAL;
	memcpy(c->set, set, sizeof(set));
	return 0;
}

/* -ENOENT: not a syscall key. */
int
sc_config_set(struct sc_config *c, const char *key, const char *v)
{
	static const struct parse_word onoff[] = { { "on", 1 }, { "off", 0 },
		{ NULL, 0 } };
	uint32_t u;
	int r;

	if (!strcmp(key, "syscall_trace")) {
		if ((r = parse_word(v, onoff)) < 0)
			return r;
		c->on = r == 1;
		return 0;
	}
	if (!strcmp(key, "syscalls"))
		return parse_set(c, v);
	if (!strcmp(key, "syscall_floor_us")) {
		if ((r = parse_u32_range(v, 0, 60000000, &u)) < 0)
			return r;
		c->floor_us = u;
		return 0;
	}
	if (!strcmp(key, "syscall_slow_ms")) {
		/* 0: every traced call is reported (tests, short bursts) */
		if ((r = parse_u32_range(v, 0, 3600000, &u)) < 0)
			return r;
		c->slow_ms = u;
		return 0;
	}
	if (!strcmp(key, "syscall_top")) {
		if ((r = parse_u32_range(v, 1, 4096, &u)) < 0)
			return r;
		c->top = u;
		return 0;
	}
	if (!strcmp(key, "syscall_slow_max")) {
		if ((r = parse_u32_range(v, 0, 65536, &u)) < 0)
			return r;
		c->slow_max = u;
		return 0;
	}
	if (!strcmp(key, "syscall_rb_kib")) {
		/* a power of two, at least a page (4 KiB; the loader raises
		 * it to a larger page) */
		if ((r = parse_u32_range(v, 4, 262144, &u)) < 0)
			return r;
		if (u & (u - 1))
			return -EINVAL;
		c->rb_kib = u;
		return 0;
	}
	return -ENOENT;
}
