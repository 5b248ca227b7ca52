/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tracker's hash tables (atrace_int.h): open addressing with linear
 * probing over fixed-size entries that begin with their hash, each table
 * bounded so a flood of distinct names costs no more than its cap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/atrace_int.h"

#define TAB_MIN 64

/* Word-at-a-time multiply-xorshift: names are hashed once per event. */
static uint64_t
hash_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, c, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
		c += 8;
		n -= 8;
	}
	if (n) {
		w = 0;
		memcpy(&w, c, n);
		h = (h ^ w ^ (uint64_t)n << 56) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

uint64_t
atab_key(int32_t a, int32_t b, int64_t c, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = (h ^ (uint32_t)a) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uint64_t)(uint32_t)b << 32) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uint64_t)c) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 31;
	if (name)
		h = hash_mix(h, name, strlen(name));
	return h ? h : 1;
}

void *
atab_at(const struct tab *t, size_t i)
{
	return t->e + i * t->esz;
}

uint64_t
atab_hash(const struct tab *t, size_t i)
{
	uint64_t h;

	memcpy(&h, atab_at(t, i), sizeof(h));
	return h;
}

static int
atab_grow(struct tab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : TAB_MIN, i, j;
	char *ne = calloc(ncap, t->esz);

	if (ne == NULL)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		uint64_t h = atab_hash(t, i);

		if (h == 0)
			continue;
		for (j = h & (ncap - 1);; j = (j + 1) & (ncap - 1)) {
			uint64_t o;

			memcpy(&o, ne + j * t->esz, sizeof(o));
			if (o == 0)
				break;
		}
		memcpy(ne + j * t->esz, atab_at(t, i), t->esz);
	}
	free(t->e);
	t->e = ne;
	t->cap = ncap;
	return 0;
}

/*
 * The entry of key, or a new zeroed one with its hash set (*ret_new);
 * NULL when the table is at its bound or memory ran out.
 */
void *
atab_get(struct tab *t, uint64_t h, tab_eq eq, const void *key, bool add,
    bool *ret_new)
{
	size_t i;

	if (ret_new)
		*ret_new = false;
	if (t->cap) {
		for (i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
			uint64_t o = atab_hash(t, i);

			if (o == 0)
				break;
			if (o == h && eq(atab_at(t, i), key))
				return atab_at(t, i);
		}
	}
	if (!add || t->n >= t->max)
		return NULL;
	if ((t->n + 1) * 4 > t->cap * 3 && atab_grow(t) < 0)
		return NULL;
	for (i = h & (t->cap - 1); atab_hash(t, i) != 0;
	     i = (i + 1) & (t->cap - 1))
		;
	memset(atab_at(t, i), 0, t->esz);
	memcpy(atab_at(t, i), &h, sizeof(h));
	t->n++;
	if (ret_new)
		*ret_new = true;
	return atab_at(t, i);
}

void
atab_del(struct tab *t, void *e)
{
	size_t i = (size_t)((char *)e - t->e) / t->esz, j = i,
	       mask = t->cap - 1;

	for (;;) {
		uint64_t h;
		size_t k;

		j = (j + 1) & mask;
		if ((h = atab_hash(t, j)) == 0)
			break;
		k = h & mask;
		/* move j back to i when i lies on j's probe path */
		if ((i <= j) ? (k <= i || k > j) : (k <= i && k > j)) {
			memcpy(atab_at(t, i), atab_at(t, j), t->esz);
			i = j;
		}
	}
	memset(atab_at(t, i), 0, t->esz);
	t->n--;
}

void
atab_clear(struct tab *t)
{
	if (t->e)
		memset(t->e, 0, t->cap * t->esz);
	t->n = 0;
}

void
atab_release(struct tab *t)
{
	free(t->e);
	t->e = NULL;
	t->cap = t->n = 0;
}
