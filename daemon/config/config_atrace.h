/* SPDX-License-Identifier: Apache-2.0 */
/* ATrace category and app settings (config_atrace.c). */
#ifndef VITALSD_CONFIG_ATRACE_H
#define VITALSD_CONFIG_ATRACE_H

#include <stddef.h>
#include <stdint.h>

/* apps vitalsd names at most (the limit older atrace had: MAX_PACKAGES) */
#define ATCAT_APPS_MAX 16

/* "gfx input view" (blanks or commas between) → ATRACE_TAG_* bits;
 * "" or "none": 0. -EINVAL names the first bad word in bad[]. */
int atcat_parse_categories(const char *value, uint64_t *ret, char *bad,
    size_t badsz);
/* Names of the categories in tags, blank-separated ("" for 0). */
void atcat_tag_names(uint64_t tags, char *buf, size_t len);
/* "com.a,com.b" or "*" → the list normalised (commas, no blanks);
 * "" or "none": empty. */
int atcat_parse_apps(const char *value, char *buf, size_t len);

#endif /* VITALSD_CONFIG_ATRACE_H */
