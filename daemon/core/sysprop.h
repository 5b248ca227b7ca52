/* SPDX-License-Identifier: Apache-2.0 */
/*
 * System properties (sysprop.c): the platform's on Android (bionic's
 * __system_property_* API, writes through init's property service), or on
 * a host a directory of files standing in for it, one file per property
 * name, that keeps the property service's rules. Without either there are
 * no properties, and every call says so (-EOPNOTSUPP).
 */
#ifndef VITALS_SYSPROP_H
#define VITALS_SYSPROP_H

#include <stdbool.h>
#include <stddef.h>

/* PROP_VALUE_MAX of <sys/system_properties.h>: a value holds at most 91
 * bytes (ro.* values may be longer), so 92 with its NUL. */
#define SYSPROP_VALUE_MAX 92

struct sysprop;

/*
 * root: a directory of property files (the host double; also usable on a
 * device for tests), or NULL: the platform's properties on bionic, none
 * on a host. A root that is not a directory is an error; NULL on a host
 * is not (sysprop_backend() says "none").
 */
int sysprop_open(const char *root, struct sysprop **ret);
struct sysprop *sysprop_free(struct sysprop *sp);
/* "platform", "dir" or "none" */
const char *sysprop_backend(const struct sysprop *sp);
bool sysprop_available(const struct sysprop *sp);

/*
 * The value of name into buf (NUL-terminated). -ENOENT: not set;
 * -ERANGE: buf too small (buf untouched); -EINVAL: not a legal name;
 * -EOPNOTSUPP: no properties here.
 */
int sysprop_get(const struct sysprop *sp, const char *name, char *buf,
    size_t len);
/*
 * Set name to value as the property service would: -EINVAL illegal name,
 * -E2BIG value of 92 bytes or more (not ro.*), -EILSEQ value not UTF-8,
 * -EROFS a ro.* property already set, -EPERM a ctl.* name (a control
 * message to init, never a stored property: refused here).
 */
int sysprop_set(const struct sysprop *sp, const char *name, const char *value);
/* Put name back to "never set": the double removes its file; the platform
 * cannot remove a property and sets it to "" (what atrace writes to clear
 * one). */
int sysprop_unset(const struct sysprop *sp, const char *name);

/* One read without keeping a handle: open root (NULL as above), get, free.
 * For a single look-up such as ro.build.type. */
int sysprop_read(const char *root, const char *name, char *buf, size_t len);

/* init's rules (system/core/init/util.cpp IsLegalPropertyName,
 * IsLegalPropertyValue) */
bool sysprop_name_ok(const char *name);
int sysprop_value_check(const char *name, const char *value);

#endif /* VITALS_SYSPROP_H */
