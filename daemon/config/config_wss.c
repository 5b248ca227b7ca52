/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor's configuration keys (wss_*, doc/vitalsd.8.md):
 * config.c hands every key with that prefix here. In config's layer, so
 * config.c calls nothing above it; wss.c reads what this parses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "wss/wss.h"

void
wss_config_init(struct wss_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval_ms = 1000;
	c->interval_min_ms = 100;
	c->interval_max_ms = 10000;
	c->max_targets = 4;
	c->max_pages = 65536;
	c->method = WSS_METHOD_AUTO;
}

void
wss_config_release(struct wss_config *c)
{
	free(c->log_dir);
	c->log_dir = NULL;
}

/* "NAME heap" or "NAME library LIB": exact process name, mode. */
static int
parse_rule(const char *value, struct wss_rule *ret)
{
	char buf[3 * WSS_NAME_LEN], *a, *b, *c, *d, *save = NULL;
	struct wss_rule r;

	memset(&r, 0, sizeof(r));
	if (strlen(value) >= sizeof(buf))
		return -ERANGE;
	strcpy(buf, value);
	a = strtok_r(buf, " \t", &save);
	b = strtok_r(NULL, " \t", &save);
	c = strtok_r(NULL, " \t", &save);
	d = strtok_r(NULL, " \t", &save);
	if (a == NULL || b == NULL || d != NULL || strlen(a) >= sizeof(r.name))
		return -EINVAL;
	strcpy(r.name, a);
	if (strcmp(b, "heap") == 0 && c == NULL) {
		r.mode = WSS_MODE_HEAP;
	} else if (strcmp(b, "library") == 0 && c != NULL &&
	    strlen(c) < sizeof(r.lib) && strchr(c, '/') == NULL) {
		r.mode = WSS_MODE_LIBRARY;
		strcpy(r.lib, c);
	} else {
		return -EINVAL;
	}
	*ret = r;
	return 0;
}

/* -ENOENT: not a wss key. */
int
wss_config_set(struct wss_config *c, const char *key, const char *value)
{
	char *s;
	int r;

	if (!strcmp(key, "wss_interval_ms"))
		return parse_u32_range(value, 100, 3600000, &c->interval_ms);
	if (!strcmp(key, "wss_interval_min_ms"))
		return parse_u32_range(value, 100, 3600000,
		    &c->interval_min_ms);
	if (!strcmp(key, "wss_interval_max_ms"))
		return parse_u32_range(value, 100, 3600000,
		    &c->interval_max_ms);
	if (!strcmp(key, "wss_max_targets"))
		return parse_u32_range(value, 1, 64, &c->max_targets);
	if (!strcmp(key, "wss_max_pages"))
		return parse_u32_range(value, 1, 1u << 24, &c->max_pages);
	if (!strcmp(key, "wss_method")) {
		if (!strcmp(value, "auto"))
			c->method = WSS_METHOD_AUTO;
		else if (!strcmp(value, "page_idle"))
			c->method = WSS_METHOD_PAGE_IDLE;
		else if (!strcmp(value, "clear_refs"))
			c->method = WSS_METHOD_CLEAR_REFS;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(key, "wss_log_dir")) {
		if (*value == '\0')
			return -EINVAL;
		if ((s = strdup(value)) == NULL)
			return -ENOMEM;
		free(c->log_dir);
		c->log_dir = s;
		return 0;
	}
	if (!strcmp(key, "wss_rule")) {
		if (c->nrules == WSS_RULES_MAX)
			return -ERANGE;
		if ((r = parse_rule(value, &c->rule[c->nrules])) < 0)
			return r;
		c->nrules++;
		return 0;
	}
	return -ENOENT;
}
