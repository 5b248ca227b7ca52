/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reloading the configuration. A reread parses the file the daemon was
 * started with (the same parser, the same checks as a start) with the
 * command line's settings over it again, then compares each key's
 * effective text with what the daemon runs with. The keys the running
 * daemon can take (roles, BPF row bounds) are applied by the caller; a
 * changed key of any other kind is refused with a log line and the
 * daemon runs on with its old value until a restart. A file that does
 * not parse or check changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_reload.h"
#include "config/config_src.h"

/* What a running daemon takes without a restart (main.c applies them). */
static const char *const reloadable[] = {
	"trusted_uids",
	"trusted_gids",
	"reader_uids",
	"reader_gids",
	"shell_uid",
	"system_uid",
	"bpf_procs",
	"bpf_threads",
};

bool
config_reloadable(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(reloadable) / sizeof(reloadable[0]); i++)
		if (strcmp(key, reloadable[i]) == 0)
			return true;
	return false;
}

int
config_set_cli(struct config *cfg, const char *key, const char *value)
{
	int r;

	if ((r = config_set(cfg, key, value)) < 0)
		return r;
	return config_note(cfg, key, value, true);
}

int
config_reread(const struct config *old, struct config *ret, char *err,
    size_t errsz)
{
	const struct config_src *s = old->src;
	size_t i;
	int r;

	config_init(ret);
	ret->verbose = old->verbose;
	if (s && s->path &&
	    (r = config_parse_file(ret, s->path, err, errsz)) < 0)
		return r;
	for (i = 0; s && i < s->n; i++) {
		if (!s->kv[i].cli)
			continue;
		if ((r = config_set_cli(ret, s->kv[i].key, s->kv[i].val)) < 0) {
			snprintf(err, errsz, "--%s %s: invalid", s->kv[i].key,
			    s->kv[i].val);
			return r;
		}
	}
	return config_check(ret, err, errsz);
}

static bool
same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Has an earlier entry of s (before i) the same key? */
static bool
seen_before(const struct config_src *s, size_t i)
{
	size_t k;

	for (k = 0; k < i; k++)
		if (strcmp(s->kv[k].key, s->kv[i].key) == 0)
			return true;
	return false;
}

static size_t
add_change(struct config_change *out, size_t max, size_t n, const char *key,
    const char *was, const char *now)
{
	if (n < max) {
		out[n].key = key;
		out[n].was = was;
		out[n].now = now;
		out[n].reloadable = config_reloadable(key);
	}
	return n + 1;
}

size_t
config_changes(const struct config_src *run, const struct config *cfg,
    struct config_change *out, size_t max)
{
	const struct config_src *now = cfg->src;
	size_t i, n = 0;

	/* every key the new settings name, then those only the old did */
	for (i = 0; now && i < now->n; i++) {
		const char *key = now->kv[i].key;

		if (seen_before(now, i) ||
		    same(config_src_get(run, key), config_src_get(now, key)))
			continue;
		n = add_change(out, max, n, key, config_src_get(run, key),
		    config_src_get(now, key));
	}
	for (i = 0; run && i < run->n; i++) {
		const char *key = run->kv[i].key;

		if (seen_before(run, i) || config_src_get(now, key) != NULL)
			continue;
		n = add_change(out, max, n, key, config_src_get(run, key),
		    NULL);
	}
	return n;
}
