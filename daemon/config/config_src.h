/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The settings as given, as text (config_src.c): what config.c's parser
 * and the command line noted, for a reload (config_reload.c).
 */
#ifndef VITALSD_CONFIG_SRC_H
#define VITALSD_CONFIG_SRC_H

#include <stdbool.h>
#include <stddef.h>

struct config_kv {
	char *key, *val;
	bool cli;
};

struct config_src {
	char *path; /* the file; NULL: none */
	struct config_kv *kv;
	size_t n, cap;
};

int config_src_put(struct config_src *s, const char *key, const char *val,
    bool cli);
/* key's effective text in s: the command line's last, else the file's
 * last; NULL: not set (s may be NULL). */
const char *config_src_get(const struct config_src *s, const char *key);

#endif /* VITALSD_CONFIG_SRC_H */
