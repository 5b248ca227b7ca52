/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provenance (provenance.c): what produced a window — the boot, the
 * kernel, the daemon's build and, on Android, the platform build — so a
 * figure read a month later says which kernel and which vitalsd made it.
 * Read once when the daemon starts; every window carries it, the store
 * keeps it once per daemon start (doc/storage.md, "Provenance").
 */
#ifndef VITALSD_CORE_PROVENANCE_H
#define VITALSD_CORE_PROVENANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROV_BOOT_ID_LEN 40 /* a UUID and its NUL */
#define PROV_KERNEL_LEN 65  /* struct utsname's release */
#define PROV_VERSION_LEN 32
#define PROV_FINGERPRINT_LEN 256 /* ro.* values may pass PROP_VALUE_MAX */

/* Where the build fingerprint came from. */
enum prov_fp_source {
	PROV_FP_NONE,	  /* no system properties: a host, not Android */
	PROV_FP_PROPERTY, /* ro.build.fingerprint */
	PROV_FP_UNSET,	  /* properties, but ro.build.fingerprint not set */
	PROV_FP_ERROR,	  /* the property could not be read */
};

struct provenance {
	char boot_id[PROV_BOOT_ID_LEN]; /* "" unknown */
	char kernel[PROV_KERNEL_LEN];	/* uname(2) release */
	char version[PROV_VERSION_LEN]; /* vitalsd's */
	char fingerprint[PROV_FINGERPRINT_LEN];
	uint32_t fp_source;    /* enum prov_fp_source */
	int64_t btime_s;       /* /proc/stat btime; 0 unknown */
	int64_t since_mono_ns; /* CLOCK_MONOTONIC when the daemon took it */
};

/*
 * Fill *ret from proc_root (boot_id, btime), uname(2) and, through
 * prop_root (sysprop.h: NULL is the platform's properties, none on a
 * host), ro.build.fingerprint. What cannot be read stays empty (or 0)
 * and is not an error; -EINVAL only for a NULL argument.
 */
int provenance_read(const char *proc_root, const char *prop_root,
    const char *version, struct provenance *ret);
/* The same daemon start (since_mono_ns aside, every field equal). */
bool provenance_same(const struct provenance *a, const struct provenance *b);
/* "none", "property", "unset", "error" */
const char *provenance_fp_source_name(uint32_t src);
/* btime from /proc/stat text; 0 when it has none. Pure, for tests. */
int64_t provenance_parse_btime(const char *text, size_t len);

#endif
