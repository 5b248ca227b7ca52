/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The settings as given (config_src.h): each key's text from the file or
 * the command line, and the file's path, noted by the parser so that a
 * reload (config_reload.c) can tell what changed. Text only: nothing
 * here parses a value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_reload.h"
#include "config/config_src.h"

static struct config_src *
src_of(struct config *cfg)
{
	if (cfg->src == NULL)
		cfg->src = calloc(1, sizeof(*cfg->src));
	return cfg->src;
}

int
config_src_put(struct config_src *s, const char *key, const char *val, bool cli)
{
	struct config_kv *kv;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;

		if ((kv = realloc(s->kv, cap * sizeof(*kv))) == NULL)
			return -ENOMEM;
		s->kv = kv;
		s->cap = cap;
	}
	kv = &s->kv[s->n];
	kv->key = strdup(key);
	kv->val = strdup(val);
	kv->cli = cli;
	if (kv->key == NULL || kv->val == NULL) {
		free(kv->key);
		free(kv->val);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

int
config_note(struct config *cfg, const char *key, const char *value, bool cli)
{
	struct config_src *s = src_of(cfg);

	return s ? config_src_put(s, key, value, cli) : -ENOMEM;
}

int
config_note_path(struct config *cfg, const char *path)
{
	struct config_src *s = src_of(cfg);
	char *p;

	if (s == NULL || (p = strdup(path)) == NULL)
		return -ENOMEM;
	free(s->path);
	s->path = p;
	return 0;
}

void
config_src_free(struct config_src *src)
{
	size_t i;

	if (src == NULL)
		return;
	for (i = 0; i < src->n; i++) {
		free(src->kv[i].key);
		free(src->kv[i].val);
	}
	free(src->kv);
	free(src->path);
	free(src);
}

const char *
config_path(const struct config *cfg)
{
	return cfg->src ? cfg->src->path : NULL;
}

const char *
config_src_get(const struct config_src *s, const char *key)
{
	const char *file = NULL, *cli = NULL;
	size_t i;

	for (i = 0; s && i < s->n; i++) {
		if (strcmp(s->kv[i].key, key) != 0)
			continue;
		if (s->kv[i].cli)
			cli = s->kv[i].val;
		else
			file = s->kv[i].val;
	}
	return cli ? cli : file;
}

struct config_src *
config_src_dup(const struct config *cfg)
{
	const struct config_src *s = cfg->src;
	struct config_src *d;
	size_t i;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	if (s && s->path && (d->path = strdup(s->path)) == NULL)
		goto fail;
	for (i = 0; s && i < s->n; i++)
		if (config_src_put(d, s->kv[i].key, s->kv[i].val,
			s->kv[i].cli) < 0)
			goto fail;
	return d;
fail:
	config_src_free(d);
	return NULL;
}

int
config_src_take(struct config_src *run, const struct config *cfg,
    const char *key)
{
	const char *now = config_src_get(cfg->src, key);
	char *name;
	size_t i, k;
	int r;

	/* key may be one of run's own strings (a key only run names): a
	 * copy outlives the entries freed below */
	if ((name = strdup(key)) == NULL)
		return -ENOMEM;
	/* drop run's entries of key, then take cfg's effective one */
	for (i = k = 0; i < run->n; i++) {
		if (strcmp(run->kv[i].key, name) == 0) {
			free(run->kv[i].key);
			free(run->kv[i].val);
			continue;
		}
		run->kv[k++] = run->kv[i];
	}
	run->n = k;
	r = now == NULL ? 0 : config_src_put(run, name, now, false);
	free(name);
	return r;
}
