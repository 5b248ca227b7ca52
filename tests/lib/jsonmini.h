/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A strict little JSON reader for the client's tests (RFC 8259): rejects
 * what a real parser rejects (bad escapes, raw control bytes, invalid
 * UTF-8, leading zeros, trailing garbage), so "it parsed" means "valid
 * JSON", and then lets a test look values up. Independent of client/json.c
 * on purpose.
 */
#ifndef VITALS_JSONMINI_H
#define VITALS_JSONMINI_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum jm_type { JM_NULL, JM_BOOL, JM_NUM, JM_STR, JM_ARR, JM_OBJ };

struct jm {
	enum jm_type t;
	bool b;
	double num;
	long long ll; /* integers, exactly */
	bool is_int;
	char *str;   /* JM_STR, decoded (escapes resolved to UTF-8) */
	size_t n;    /* JM_ARR, JM_OBJ */
	char **keys; /* JM_OBJ */
	struct jm *v;
};

void jm_free(struct jm *j);
/* The document, or NULL when it is not exactly one valid JSON value. */
struct jm *jm_parse(const char *s, size_t len);
/* o's member key, or NULL (o not an object, no such key). */
const struct jm *jm_get(const struct jm *o, const char *key);
/* "a.b.c" through objects. */
const struct jm *jm_path(const struct jm *o, const char *path);
/* An integer: a JSON number, or a string holding one (proto3's form of a
 * 64-bit integer); its value in ll (and num). */
static inline bool
jm_is_int(const struct jm *v)
{
	return v && (v->t == JM_NUM || v->t == JM_STR) && v->is_int;
}

/* A number, or an integer written as a string; its value in num. */
static inline bool
jm_is_num(const struct jm *v)
{
	return v && (v->t == JM_NUM || (v->t == JM_STR && v->is_int));
}

/* The object of array arr whose "id" is the integer id, or NULL. */
const struct jm *jm_find_id(const struct jm *arr, long long id);

#endif
