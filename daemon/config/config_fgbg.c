/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The foreground/background keys (fgbg, fgbg_cpuset; doc/vitalsd.8.md):
 * config.c hands every key with that prefix here. In config's layer;
 * fgbg.c reads what this parses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fgbg/fgbg.h"

void
fgbg_config_init(struct fgbg_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = FGBG_MODE_AUTO;
}

void
fgbg_config_release(struct fgbg_config *c)
{
	free(c->cpuset);
	memset(c, 0, sizeof(*c));
}

/* -ENOENT: not an fgbg key. */
int
fgbg_config_set(struct fgbg_config *c, const char *key, const char *v)
{
	static const struct parse_word modes[] = { { "auto", FGBG_MODE_AUTO },
		{ "on", FGBG_MODE_ON }, { "off", FGBG_MODE_OFF }, { NULL, 0 } };
	char *s;
	int r;

	if (!strcmp(key, "fgbg")) {
		if ((r = parse_word(v, modes)) < 0)
			return r;
		c->mode = (unsigned)r;
		return 0;
	}
	if (!strcmp(key, "fgbg_cpuset")) {
		if (v[0] != '/' || strlen(v) >= FG_PATH_LEN)
			return -EINVAL;
		if ((s = strdup(v)) == NULL)
			return -ENOMEM;
		free(c->cpuset);
		c->cpuset = s;
		return 0;
	}
	return -ENOENT;
}
