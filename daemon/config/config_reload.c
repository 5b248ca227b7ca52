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
	/* syscall latency: into the maps; on -> off detaches (daemon.c) */
	"syscall_trace",
	"syscalls",
	"syscall_floor_us",
	"syscall_slow_ms",
	"syscall_top",
	"syscall_slow_max",
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

/* The keys that may be given more than once, each entry one item. */
static const char *const lists[] = { "burst_rule", "rule", "wss_rule" };

/* Does key's i-th effective entry in a and in b read alike, for every i?
 * For a list key the command line's entries replace the file's, and a
 * change to any entry, not only the last, is a change. */
static bool
same_list(const struct config_src *a, const struct config_src *b,
    const char *key)
{
	bool cli_a = false, cli_b = false, list = false;
	size_t i = 0, k = 0;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		list |= strcmp(key, lists[i]) == 0;
	if (!list)
		return true;
	for (i = 0; a && i < a->n; i++)
		cli_a |= a->kv[i].cli && strcmp(a->kv[i].key, key) == 0;
	for (; b && k < b->n; k++)
		cli_b |= b->kv[k].cli && strcmp(b->kv[k].key, key) == 0;
	for (i = k = 0;;) {
		while (a && i < a->n &&
		    (strcmp(a->kv[i].key, key) != 0 || a->kv[i].cli != cli_a))
			i++;
		while (b && k < b->n &&
		    (strcmp(b->kv[k].key, key) != 0 || b->kv[k].cli != cli_b))
			k++;
		if (!a || i >= a->n || !b || k >= b->n)
			return (!a || i >= a->n) && (!b || k >= b->n);
		if (strcmp(a->kv[i].val, b->kv[k].val) != 0)
			return false;
		i++;
		k++;
	}
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
		    (same(config_src_get(run, key), config_src_get(now, key)) &&
			same_list(run, now, key)))
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
