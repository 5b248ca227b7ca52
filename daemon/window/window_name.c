/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A task row's name (window.h: window_task_name() reads it). A row holds a
 * pointer, not the 128-byte array it held inline (bench/README.md, rss6):
 *
 *  - a name equal to the row's comm (every thread's, and a process's whose
 *    cmdline gives nothing longer) points at window_task_name_comm_, and
 *    is read from the comm: it costs no storage;
 *  - any other name is interned once in the process's name table below
 *    and the row points at its entry. An entry is never freed, so a row
 *    copied by value (rpc's top rows, the store's aggregates and reads, a
 *    roll-up, a dup on the writer's queue) stays valid whatever becomes of
 *    the window it came from: no row's lifetime is tied to a window's,
 *    and a query thread reading the ring while it rotates reads names
 *    that cannot go away.
 *
 * The table grows with the distinct names the daemon ever meets that are
 * not their comm (the cmdline names of processes: package names, program
 * names), bounded at NAMES_MAX_BYTES; past it a new name reads as its
 * row's comm and is counted (Health.memory.names_full).
 *
 * On its own file: every signal's window code sets rows' names, and
 * window.c reaches the signals' parts (window_part.c).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "window/window.h"

#define NAMES_BLOCK (16 * 1024)	      /* strings are carved from these */
#define NAMES_MAX_BYTES (1024 * 1024) /* the strings' bound, NULs included */

const char window_task_name_comm_[1] = "";

struct name_block {
	struct name_block *next;
	size_t used;
	char s[NAMES_BLOCK];
};

/* Open addressing over the interned strings; a NULL slot is empty. */
static struct {
	pthread_mutex_t mu;
	struct name_block *blocks;
	const char **slot;
	size_t mask; /* slots − 1; 0 before the first name */
	size_t n;    /* names held */
	size_t str_bytes;
	size_t heap_bytes; /* blocks and slots */
	uint64_t full;	   /* names refused at the bound (or for memory) */
} names = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t
name_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return (size_t)(h ^ (h >> 29));
}

static void
slot_put(const char **slot, size_t mask, const char *e)
{
	size_t h = name_hash(e, strlen(e)) & mask;

	while (slot[h] != NULL)
		h = (h + 1) & mask;
	slot[h] = e;
}

/* Room for one more name at a load of at most one half; names.mu held. */
static int
names_grow(void)
{
	size_t size = names.mask ? (names.mask + 1) * 2 : 256;
	const char **slot;
	size_t i;

	if (names.mask && (names.n + 1) * 2 <= names.mask + 1)
		return 0;
	if ((slot = calloc(size, sizeof(*slot))) == NULL)
		return -1;
	for (i = 0; names.mask && i <= names.mask; i++)
		if (names.slot[i] != NULL)
			slot_put(slot, size - 1, names.slot[i]);
	names.heap_bytes -= names.mask ? (names.mask + 1) * sizeof(*slot) : 0;
	names.heap_bytes += size * sizeof(*slot);
	free(names.slot);
	names.slot = slot;
	names.mask = size - 1;
	return 0;
}

/* s's n bytes as an interned string; NULL at the bound or without memory. */
static const char *
names_intern(const char *s, size_t n)
{
	struct name_block *b;
	const char *e = NULL;
	char *p;
	size_t h;

	pthread_mutex_lock(&names.mu);
	if (names_grow() < 0)
		goto refused;
	for (h = name_hash(s, n) & names.mask; names.slot[h] != NULL;
	     h = (h + 1) & names.mask) {
		e = names.slot[h];
		if (strncmp(e, s, n) == 0 && e[n] == '\0')
			goto out;
	}
	if (names.str_bytes + n + 1 > NAMES_MAX_BYTES)
		goto refused;
	b = names.blocks;
	if (b == NULL || b->used + n + 1 > sizeof(b->s)) {
		if ((b = malloc(sizeof(*b))) == NULL)
			goto refused;
		b->next = names.blocks;
		b->used = 0;
		names.blocks = b;
		names.heap_bytes += sizeof(*b);
	}
	p = b->s + b->used;
	memcpy(p, s, n);
	p[n] = '\0';
	b->used += n + 1;
	names.str_bytes += n + 1;
	names.slot[h] = p;
	names.n++;
	e = p;
out:
	pthread_mutex_unlock(&names.mu);
	return e;
refused:
	names.full++;
	pthread_mutex_unlock(&names.mu);
	return NULL;
}

void
window_task_set_name(struct window_task *t, const char *s)
{
	size_t n = strnlen(s, VITALS_NAME_LEN - 1);
	const char *e;

	if (n == 0) {
		t->name_ = NULL;
		return;
	}
	if (n < sizeof(t->comm) && strncmp(s, t->comm, n) == 0 &&
	    t->comm[n] == '\0') {
		t->name_ = window_task_name_comm_;
		return;
	}
	/* refused (bound, memory): the comm stands in, counted in full */
	e = names_intern(s, n);
	t->name_ = e != NULL ? e : window_task_name_comm_;
}

void
window_task_set_namef(struct window_task *t, const char *fmt, ...)
{
	char buf[VITALS_NAME_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	window_task_set_name(t, buf);
}

void
window_task_copy_name(struct window_task *dst, const struct window_task *src)
{
	if (src->name_ != window_task_name_comm_ ||
	    memcmp(dst->comm, src->comm, sizeof(dst->comm)) == 0)
		dst->name_ = src->name_;
	else
		window_task_set_name(dst, window_task_name(src));
}

void
window_names_stats(struct window_names_stats *ret)
{
	pthread_mutex_lock(&names.mu);
	ret->names = names.n;
	ret->str_bytes = names.str_bytes;
	ret->heap_bytes = names.heap_bytes;
	ret->full = names.full;
	pthread_mutex_unlock(&names.mu);
}
