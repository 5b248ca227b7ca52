/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_vfs: counts what SQLite asks the kernel to write, by file and kind
 * (see io_vfs.h). A write to the main file at or past the size the file
 * had at its last sync is an append; below it, a rewrite of a page that
 * was already on storage. The rewritten pages of a tracked file, and
 * the pages its rollback journal saves (a record is the page number, 4
 * bytes, then the page, then a checksum), are kept by page number until
 * io_vfs_attribute() looks them up in dbstat. Each file also keeps the
 * 4 KiB blocks it dirtied since its last sync: at the sync (or close)
 * they are counted once each, as the kernel writes a dirty block back
 * once however often it changed.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_vfs.h"

struct shim_file {
	sqlite3_file base;
	enum io_kind kind; /* IO_MAIN_APPEND for a main database */
	sqlite3_int64 synced;
	int tracked, counted; /* counted: the tracked file or its journal */
	/* a journal: the page number just written and where */
	sqlite3_int64 pgno_off;
	uint32_t pgno;
	/* the 4 KiB blocks dirtied since the last sync, by kind */
	struct dirty {
		uint64_t blk;
		enum io_kind kind;
	} * dirty;
	size_t ndirty, capdirty;
	sqlite3_file *real; /* follows this struct */
};

static sqlite3_vfs *orig;
static sqlite3_vfs shim_vfs;
static struct io_counts counts;
static char track_path[4096];

/* pages of the tracked file rewritten in place (0) and journaled (1)
 * since the last attribution */
static uint32_t *pages[2];
static size_t npages[2], cappages[2];

struct named {
	char name[64];
	uint64_t bytes[2];
};
static struct named *names;
static size_t nnames;

static void
page_add(int j, uint32_t p)
{
	if (npages[j] == cappages[j]) {
		size_t n = cappages[j] ? cappages[j] * 2 : 1024;
		uint32_t *np = realloc(pages[j], n * sizeof(*np));

		if (np == NULL)
			return;
		pages[j] = np;
		cappages[j] = n;
	}
	pages[j][npages[j]++] = p;
}

static void
page_note(sqlite3_int64 off, int amt)
{
	if (amt > 0)
		page_add(0, (uint32_t)(off / 4096) + 1);
}

/* a write's 4 KiB blocks, each counted once at the file's next sync */
static void
dirty_note(struct shim_file *s, enum io_kind k, sqlite3_int64 off, int amt)
{
	uint64_t b, last;
	size_t i;

	if (amt <= 0)
		return;
	last = (uint64_t)(off + amt - 1) / 4096;
	for (b = (uint64_t)off / 4096; b <= last; b++) {
		for (i = 0; i < s->ndirty; i++)
			if (s->dirty[i].blk == b)
				break;
		if (i < s->ndirty)
			continue;
		if (s->ndirty == s->capdirty) {
			size_t n = s->capdirty ? s->capdirty * 2 : 64;
			struct dirty *nd = realloc(s->dirty, n * sizeof(*nd));

			if (nd == NULL)
				return;
			s->dirty = nd;
			s->capdirty = n;
		}
		s->dirty[s->ndirty].blk = b;
		s->dirty[s->ndirty++].kind = k;
	}
}

static void
dirty_flush(struct shim_file *s)
{
	size_t i;

	for (i = 0; i < s->ndirty; i++)
		counts.blocks[s->dirty[i].kind] += 4096;
	s->ndirty = 0;
}

static int
x_close(sqlite3_file *f)
{
	struct shim_file *s = (struct shim_file *)f;

	dirty_flush(s);
	free(s->dirty);
	s->dirty = NULL;
	return s->real->pMethods->xClose(s->real);
}

static int
x_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xRead(s->real, buf, amt, off);
}

static int
x_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct shim_file *s = (struct shim_file *)f;
	enum io_kind k = s->kind;

	if (!s->counted)
		return s->real->pMethods->xWrite(s->real, buf, amt, off);
	if (k == IO_MAIN_APPEND && off < s->synced) {
		k = IO_MAIN_REWRITE;
		if (s->tracked)
			page_note(off, amt);
	}
	/* a journal record: its page number, then the page right after */
	if (k == IO_JOURNAL && amt == 4) {
		const unsigned char *c = buf;

		s->pgno = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 |
		    (uint32_t)c[2] << 8 | c[3];
		s->pgno_off = off;
	} else if (k == IO_JOURNAL && amt >= 512 && s->pgno &&
	    off == s->pgno_off + 4) {
		page_add(1, s->pgno);
		s->pgno = 0;
	}
	counts.bytes[k] += (uint64_t)amt;
	dirty_note(s, k, off, amt);
	return s->real->pMethods->xWrite(s->real, buf, amt, off);
}

static int
x_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct shim_file *s = (struct shim_file *)f;

	if (s->synced > size)
		s->synced = size;
	/* blocks past the new end are never written back */
	for (size_t i = 0; i < s->ndirty;)
		if ((sqlite3_int64)(s->dirty[i].blk * 4096) >= size)
			s->dirty[i] = s->dirty[--s->ndirty];
		else
			i++;
	return s->real->pMethods->xTruncate(s->real, size);
}

static int
x_sync(sqlite3_file *f, int flags)
{
	struct shim_file *s = (struct shim_file *)f;
	sqlite3_int64 sz;
	int rc = s->real->pMethods->xSync(s->real, flags);

	counts.syncs += s->counted;
	dirty_flush(s);
	if (rc == SQLITE_OK &&
	    s->real->pMethods->xFileSize(s->real, &sz) == SQLITE_OK)
		s->synced = sz;
	return rc;
}

static int
x_size(sqlite3_file *f, sqlite3_int64 *ret)
{
	struct shim_file *s = (struct shim_file *)f;

	return s->real->pMethods->xFileSize(s->real, ret);
}

#define FWD(name, sig, args)                                 \
	static int x_##name sig                              \
	{                                                    \
		struct shim_file *s = (struct shim_file *)f; \
		return s->real->pMethods->x##name args;      \
	}
FWD(Lock, (sqlite3_file * f, int l), (s->real, l))
FWD(Unlock, (sqlite3_file * f, int l), (s->real, l))
FWD(CheckReservedLock, (sqlite3_file * f, int *r), (s->real, r))
FWD(FileControl, (sqlite3_file * f, int op, void *a), (s->real, op, a))
FWD(SectorSize, (sqlite3_file * f), (s->real))
FWD(DeviceCharacteristics, (sqlite3_file * f), (s->real))
FWD(ShmMap, (sqlite3_file * f, int pg, int sz, int ext, void volatile **pp),
    (s->real, pg, sz, ext, pp))
FWD(ShmLock, (sqlite3_file * f, int o, int n, int fl), (s->real, o, n, fl))
FWD(ShmUnmap, (sqlite3_file * f, int del), (s->real, del))
#undef FWD

static void
x_ShmBarrier(sqlite3_file *f)
{
	struct shim_file *s = (struct shim_file *)f;

	s->real->pMethods->xShmBarrier(s->real);
}

static const sqlite3_io_methods shim_io = {
	.iVersion = 2,
	.xClose = x_close,
	.xRead = x_read,
	.xWrite = x_write,
	.xTruncate = x_truncate,
	.xSync = x_sync,
	.xFileSize = x_size,
	.xLock = x_Lock,
	.xUnlock = x_Unlock,
	.xCheckReservedLock = x_CheckReservedLock,
	.xFileControl = x_FileControl,
	.xSectorSize = x_SectorSize,
	.xDeviceCharacteristics = x_DeviceCharacteristics,
	.xShmMap = x_ShmMap,
	.xShmLock = x_ShmLock,
	.xShmBarrier = x_ShmBarrier,
	.xShmUnmap = x_ShmUnmap,
};

static int
x_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct shim_file *s = (struct shim_file *)f;
	int rc;

	(void)v;
	memset(s, 0, sizeof(*s));
	s->real = (sqlite3_file *)(s + 1);
	rc = orig->xOpen(orig, name, s->real, flags, out);
	if (rc != SQLITE_OK || s->real->pMethods == NULL) {
		s->base.pMethods = NULL;
		return rc;
	}
	if (flags & SQLITE_OPEN_MAIN_DB) {
		s->kind = IO_MAIN_APPEND;
		s->real->pMethods->xFileSize(s->real, &s->synced);
		s->tracked = name && track_path[0] &&
		    strcmp(name, track_path) == 0;
	} else if (flags & SQLITE_OPEN_MAIN_JOURNAL)
		s->kind = IO_JOURNAL;
	else if (flags & SQLITE_OPEN_WAL)
		s->kind = IO_WAL;
	else
		s->kind = IO_OTHER;
	s->counted = name && track_path[0] &&
	    strncmp(name, track_path, strlen(track_path)) == 0;
	s->base.pMethods = &shim_io;
	return rc;
}

int
io_vfs_install(void)
{
	if (orig != NULL)
		return 0;
	if ((orig = sqlite3_vfs_find(NULL)) == NULL)
		return -1;
	shim_vfs = *orig;
	shim_vfs.zName = "io_count";
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) + orig->szOsFile;
	shim_vfs.xOpen = x_open;
	return sqlite3_vfs_register(&shim_vfs, 1) == SQLITE_OK ? 0 : -1;
}

void
io_vfs_counts(struct io_counts *ret)
{
	*ret = counts;
}

void
io_vfs_track(const char *path)
{
	snprintf(track_path, sizeof(track_path), "%s", path);
}

static void
name_add(const char *name, int j, uint64_t bytes)
{
	size_t i;

	for (i = 0; i < nnames; i++)
		if (strcmp(names[i].name, name) == 0)
			break;
	if (i == nnames) {
		struct named *n = realloc(names, (nnames + 1) * sizeof(*n));

		if (n == NULL)
			return;
		names = n;
		memset(&names[nnames], 0, sizeof(names[0]));
		snprintf(names[nnames].name, sizeof(names[0].name), "%s", name);
		nnames++;
	}
	names[i].bytes[j] += bytes;
}

/* page p's name: page 1, a b-tree's (dbstat), a pointer-map page (with
 * auto_vacuum, page 2 and every 820th after it), else the free list */
static const char *
page_name(char **by_page, uint32_t maxp, uint32_t p, int av)
{
	if (p == 1)
		return "page 1 (header, schema root)";
	if (p <= maxp && by_page[p])
		return by_page[p];
	if (av && p >= 2 && (p - 2) % (4096 / 5 + 1) == 0)
		return "(pointer map)";
	return "(free list: trunks, leaves)";
}

void
io_vfs_attribute(void)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char **by_page = NULL;
	uint32_t maxp = 0;
	int av = 1, j;
	size_t i;

	if (npages[0] + npages[1] == 0)
		return;
	for (j = 0; j < 2; j++)
		for (i = 0; i < npages[j]; i++)
			if (pages[j][i] > maxp)
				maxp = pages[j][i];
	if ((by_page = calloc(maxp + 1, sizeof(*by_page))) == NULL)
		goto out;
	if (sqlite3_open_v2(track_path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(db, "PRAGMA auto_vacuum", -1, &st, NULL) ==
		SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		av = sqlite3_column_int(st, 0) != 0;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT name, pageno FROM dbstat", -1, &st,
		NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 p = sqlite3_column_int64(st, 1);
		const char *n = (const char *)sqlite3_column_text(st, 0);

		/* level 0's span tables (store_span.c) as one each */
		if (n && strncmp(n, "l0_tasks_", 9) == 0)
			n = "l0_tasks_* (level 0 by span)";
		else if (n && strncmp(n, "l0_parts_", 9) == 0)
			n = "l0_parts_* (level 0 by span)";
		if (p > 0 && p <= maxp && n && by_page[p] == NULL)
			by_page[p] = strdup(n);
	}
	for (j = 0; j < 2; j++)
		for (i = 0; i < npages[j]; i++)
			name_add(page_name(by_page, maxp, pages[j][i], av), j,
			    4096);
out:
	if (by_page) {
		for (i = 0; i <= maxp; i++)
			free(by_page[i]);
		free(by_page);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	npages[0] = npages[1] = 0;
}

static int
by_bytes(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	uint64_t u = x->bytes[0] + x->bytes[1], v = y->bytes[0] + y->bytes[1];

	return u < v ? 1 : u > v ? -1 : 0;
}

void
io_vfs_print_pages(FILE *out, double days)
{
	uint64_t tot[2] = { 0, 0 };
	size_t i;

	if (nnames == 0)
		return;
	qsort(names, nnames, sizeof(names[0]), by_bytes);
	for (i = 0; i < nnames; i++) {
		tot[0] += names[i].bytes[0];
		tot[1] += names[i].bytes[1];
	}
	fprintf(out,
	    "    pages by b-tree, MB/day: rewritten in place | journaled "
	    "(pages only)\n");
	for (i = 0; i < nnames; i++)
		fprintf(out, "    %-32s %7.2f %5.1f %% | %7.2f %5.1f %%\n",
		    names[i].name, (double)names[i].bytes[0] / 1e6 / days,
		    tot[0] ?
			100.0 * (double)names[i].bytes[0] / (double)tot[0] :
			0.0,
		    (double)names[i].bytes[1] / 1e6 / days,
		    tot[1] ?
			100.0 * (double)names[i].bytes[1] / (double)tot[1] :
			0.0);
	nnames = 0;
}
