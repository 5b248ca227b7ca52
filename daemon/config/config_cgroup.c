/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup keys (cgroup, cgroup_root, cgroup_subtree, cgroup_depth,
 * cgroup_max; doc/vitalsd.conf.5.md): config.c hands every key with that
 * prefix here. In config's layer; cgroup.c reads what this parses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "core/util.h"

void
cgroup_config_init(struct cgroup_config *c)
{
	memset(c, 0, sizeof(*c));
	c->on = true;
	c->depth = CG_DEPTH_DEFAULT;
	c->max = CG_MAX_DEFAULT;
}

void
cgroup_config_release(struct cgroup_config *c)
{
	free(c->root);
	free(c->subtree);
	memset(c, 0, sizeof(*c));
}

static int
set_path(char **dst, const char *v, bool relative)
{
	char *s;

	if (*v == '\0' || (relative && (v[0] == '/' || strstr(v, ".."))))
		return -EINVAL;
	if ((s = strdup(v)) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* -ENOENT: not a cgroup key. */
int
cgroup_config_set(struct cgroup_config *c, const char *key, const char *v)
{
	static const struct parse_word on_off[] = { { "on", 1 }, { "off", 0 },
		{ NULL, 0 } };
	uint32_t u;
	int r;

	if (!strcmp(key, "cgroup")) {
		if ((r = parse_word(v, on_off)) < 0)
			return r;
		c->on = r;
		return 0;
	}
	if (!strcmp(key, "cgroup_root"))
		return v[0] == '/' ? set_path(&c->root, v, false) : -EINVAL;
	if (!strcmp(key, "cgroup_subtree"))
		return set_path(&c->subtree, v, true);
	if (!strcmp(key, "cgroup_depth")) {
		if ((r = parse_u32_range(v, 0, CG_DEPTH_MAX, &u)) < 0)
			return r;
		c->depth = u;
		return 0;
	}
	if (!strcmp(key, "cgroup_max")) {
		if ((r = parse_u32_range(v, 1, 4096, &u)) < 0)
			return r;
		c->max = u;
		return 0;
	}
	return -ENOENT;
}
