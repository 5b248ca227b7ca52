/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Linux capability names, as the keep_caps setting and the health reports
 * spell them: "sys_ptrace", also "CAP_SYS_PTRACE" or a number on input.
 * Pure text work, below config (which parses the setting) and privs
 * (which reports what the kernel kept).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/caps.h"
#include "core/util.h"

static const char *const cap_names[] = {
	"chown",
	"dac_override",
	"dac_read_search",
	"fowner",
	"fsetid",
	"kill",
	"setgid",
	"setuid",
	"setpcap",
	"linux_immutable",
	"net_bind_service",
	"net_broadcast",
	"net_admin",
	"net_raw",
	"ipc_lock",
	"ipc_owner",
	"sys_module",
	"sys_rawio",
	"sys_chroot",
	"sys_ptrace",
	"sys_pacct",
	"sys_admin",
	"sys_boot",
	"sys_nice",
	"sys_resource",
	"sys_time",
	"sys_tty_config",
	"mknod",
	"lease",
	"audit_write",
	"audit_control",
	"setfcap",
	"mac_override",
	"mac_admin",
	"syslog",
	"wake_alarm",
	"block_suspend",
	"audit_read",
	"perfmon",
	"bpf",
	"checkpoint_restore",
};
#define NCAPS (sizeof(cap_names) / sizeof(cap_names[0]))

const char *
caps_name(unsigned cap)
{
	return cap < NCAPS ? cap_names[cap] : NULL;
}

/* One name: "sys_ptrace", "CAP_SYS_PTRACE", "SYS_PTRACE" or a number. */
static int
cap_lookup(const char *s, size_t len)
{
	char name[32];
	uint64_t v;
	size_t i;

	if (len >= sizeof(name) || len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++)
		name[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	name[len] = '\0';
	if (strspn(name, "0123456789") == len) {
		int r = parse_uint(name, CAPS_MAX - 1, &v);

		return r < 0 ? r : (int)v;
	}
	s = strncmp(name, "cap_", 4) == 0 ? name + 4 : name;
	for (i = 0; i < NCAPS; i++)
		if (!strcmp(s, cap_names[i]))
			return (int)i;
	return -EINVAL;
}

/* "sys_ptrace, dac_read_search" (commas or blanks), "none" or "". */
int
caps_parse(const char *s, uint64_t *ret)
{
	uint64_t mask = 0;
	int cap;

	if (!strcmp(s, "none")) {
		*ret = 0;
		return 0;
	}
	while (*s) {
		size_t n;

		s += strspn(s, ", \t");
		if ((n = strcspn(s, ", \t")) == 0)
			break;
		if ((cap = cap_lookup(s, n)) < 0)
			return cap;
		mask |= 1ull << cap;
		s += n;
	}
	*ret = mask;
	return 0;
}

/* "sys_ptrace,dac_read_search" or "none"; -ENOSPC when cut. */
int
caps_format(uint64_t mask, char *buf, size_t bufsz)
{
	size_t len = 0;
	unsigned cap;
	int n;

	if (bufsz == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (mask == 0)
		return snprintf(buf, bufsz, "none") < (int)bufsz ? 0 : -ENOSPC;
	for (cap = 0; cap < CAPS_MAX; cap++) {
		const char *name = caps_name(cap);
		char num[8];

		if (!(mask & (1ull << cap)))
			continue;
		if (name == NULL) {
			snprintf(num, sizeof(num), "%u", cap);
			name = num;
		}
		n = snprintf(buf + len, bufsz - len, "%s%s", len ? "," : "",
		    name);
		if (n < 0 || (size_t)n >= bufsz - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return 0;
}
