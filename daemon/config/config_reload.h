/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reloading the configuration (SIGHUP, config_reload.c): the settings a
 * file and the command line made, kept as their text, so that a reread
 * can say which keys changed, and which of those the running daemon
 * takes (the rest need a restart: doc/vitalsd.8.md, "Reload").
 */
#ifndef VITALSD_CONFIG_RELOAD_H
#define VITALSD_CONFIG_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;
struct config_src;

/* What the daemon's reloads did (Health.config). */
struct vitalsd_reload {
	uint32_t reloads; /* SIGHUPs handled */
	uint32_t failed;  /* rereads refused: the file did not parse or check */
	uint32_t applied; /* changed keys taken, over all reloads */
	uint32_t refused; /* changed keys that need a restart, over all */
	int64_t last_wall_ns;
	char last[512]; /* what the last one did, in words */
};

/* config_set(), noted as given on the command line: it wins over the
 * file at every reread too. */
int config_set_cli(struct config *cfg, const char *key, const char *value);
/* config.c's parser notes each key of the file it read, and the file. */
int config_note(struct config *cfg, const char *key, const char *value,
    bool cli);
int config_note_path(struct config *cfg, const char *path);
void config_src_free(struct config_src *src);
/* The file cfg was read from; NULL: none. */
const char *config_path(const struct config *cfg);

/* The file of old read anew into *ret (initialised here: release it),
 * old's command-line settings over it, and checked. */
int config_reread(const struct config *old, struct config *ret, char *err,
    size_t errsz);

/* A key whose effective text differs (NULL: not set, the default). */
struct config_change {
	const char *key;
	const char *was, *now;
	bool reloadable; /* the running daemon takes it */
};

#define CONFIG_CHANGES_MAX 64
/* What changed from the settings the daemon runs with (run) to cfg, at
 * most max of them, in key order; the count of all. */
size_t config_changes(const struct config_src *run, const struct config *cfg,
    struct config_change *out, size_t max);
bool config_reloadable(const char *key);
/* cfg's settings as text, to compare a later reread with (run). */
struct config_src *config_src_dup(const struct config *cfg);
/* run takes key's text from cfg (an applied change). */
int config_src_take(struct config_src *run, const struct config *cfg,
    const char *key);

#endif /* VITALSD_CONFIG_RELOAD_H */
