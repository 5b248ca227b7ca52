/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DMA-BUF keys (dmabuf, dmabuf_interval_s, dmabuf_fd_budget,
 * dmabuf_procs, dmabuf_iter; doc/vitalsd.conf.5.md): config.c hands every key with
 * that prefix here. In config's layer; dmabuf.c reads what this parses.
 */
#include <errno.h>
#include <string.h>

#include "core/util.h"
#include "dmabuf/dmabuf.h"

void
dmabuf_config_init(struct dmabuf_config *c)
{
	memset(c, 0, sizeof(*c));
	c->on = true;
	c->interval_s = DMABUF_INTERVAL_S_DEFAULT;
	c->fd_budget = DMABUF_FD_BUDGET_DEFAULT;
	c->procs_max = DMABUF_PROCS_DEFAULT;
	c->iter = true;
}

/* -ENOENT: not a dmabuf key. */
int
dmabuf_config_set(struct dmabuf_config *c, const char *key, const char *v)
{
	static const struct parse_word onoff[] = { { "on", 1 }, { "off", 0 },
		{ NULL, 0 } };
	uint32_t u;
	int r;

	if (!strcmp(key, "dmabuf")) {
		if ((r = parse_word(v, onoff)) < 0)
			return r;
		c->on = r == 1;
		return 0;
	}
	if (!strcmp(key, "dmabuf_interval_s")) {
		if ((r = parse_u32_range(v, 0, 86400, &u)) < 0)
			return r;
		c->interval_s = u;
		return 0;
	}
	if (!strcmp(key, "dmabuf_fd_budget")) {
		if ((r = parse_u32_range(v, 0, 16777216, &u)) < 0)
			return r;
		c->fd_budget = u;
		return 0;
	}
	if (!strcmp(key, "dmabuf_procs")) {
		if ((r = parse_u32_range(v, 1, DMABUF_PROCS_MAX, &u)) < 0)
			return r;
		c->procs_max = u;
		return 0;
	}
	if (!strcmp(key, "dmabuf_iter")) {
		static const struct parse_word autooff[] = { { "auto", 1 },
			{ "off", 0 }, { NULL, 0 } };

		if ((r = parse_word(v, autooff)) < 0)
			return r;
		c->iter = r == 1;
		return 0;
	}
	return -ENOENT;
}
