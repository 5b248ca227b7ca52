/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provenance of the windows this daemon makes (provenance.h). Every read
 * here happens once, at start: nothing in it changes while a boot and a
 * daemon last (a kernel or vitalsd upgrade means a new boot or a new
 * daemon, and so a new record).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/provenance.h"
#include "core/sysprop.h"
#include "core/util.h"

/* s into dst (size n), cut at the first control character (a newline
 * ending a procfs line or a hostile property). */
static void
copy_clean(char *dst, size_t n, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			break;
		dst[i] = s[i];
	}
	dst[i] = '\0';
}

int64_t
provenance_parse_btime(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	char num[24];
	uint64_t v;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (ll > 6 && memcmp(p, "btime ", 6) == 0 &&
		    ll - 6 < sizeof(num)) {
			memcpy(num, p + 6, ll - 6);
			num[ll - 6] = '\0';
			if (parse_uint(num, INT64_MAX, &v) == 0)
				return (int64_t)v;
			return 0;
		}
		p += ll + 1;
	}
	return 0;
}

static void
read_proc(int procfd, struct provenance *p)
{
	struct vbuf b = { 0 };

	if (read_at(procfd, "sys/kernel/random/boot_id", &b) == 0)
		copy_clean(p->boot_id, sizeof(p->boot_id), b.p, b.len);
	vbuf_reset(&b);
	if (read_at(procfd, "stat", &b) == 0)
		p->btime_s = provenance_parse_btime(b.p, b.len);
	vbuf_release(&b);
}

static void
read_fingerprint(const char *prop_root, struct provenance *p)
{
	char v[PROV_FINGERPRINT_LEN];
	int r;

	r = sysprop_read(prop_root, "ro.build.fingerprint", v, sizeof(v));
	if (r == 0) {
		copy_clean(p->fingerprint, sizeof(p->fingerprint), v,
		    strlen(v));
		p->fp_source = p->fingerprint[0] ? PROV_FP_PROPERTY :
						   PROV_FP_UNSET;
	} else if (r == -EOPNOTSUPP)
		p->fp_source = PROV_FP_NONE;
	else if (r == -ENOENT)
		p->fp_source = PROV_FP_UNSET;
	else
		p->fp_source = PROV_FP_ERROR;
}

int
provenance_read(const char *proc_root, const char *prop_root,
    const char *version, struct provenance *ret)
{
	struct provenance p = { 0 };
	struct utsname u;
	int procfd;

	if (proc_root == NULL || version == NULL || ret == NULL)
		return -EINVAL;
	procfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd >= 0) {
		read_proc(procfd, &p);
		close(procfd);
	}
	if (uname(&u) == 0)
		copy_clean(p.kernel, sizeof(p.kernel), u.release,
		    strlen(u.release));
	copy_clean(p.version, sizeof(p.version), version, strlen(version));
	read_fingerprint(prop_root, &p);
	p.since_mono_ns = clock_ns(CLOCK_MONOTONIC);
	*ret = p;
	return 0;
}

bool
provenance_same(const struct provenance *a, const struct provenance *b)
{
	return strcmp(a->boot_id, b->boot_id) == 0 &&
	    strcmp(a->kernel, b->kernel) == 0 &&
	    strcmp(a->version, b->version) == 0 &&
	    strcmp(a->fingerprint, b->fingerprint) == 0 &&
	    a->fp_source == b->fp_source && a->btime_s == b->btime_s;
}

const char *
provenance_fp_source_name(uint32_t src)
{
	static const char *const names[] = {
		[PROV_FP_NONE] = "none",
		[PROV_FP_PROPERTY] = "property",
		[PROV_FP_UNSET] = "unset",
		[PROV_FP_ERROR] = "error",
	};

	return src < sizeof(names) / sizeof(names[0]) ? names[src] : "?";
}
