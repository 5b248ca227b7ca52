/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_vfs: counts what SQLite asks the kernel to write, by file and kind
 * (see io_vfs.h). A write to the main file at or past the size the file
 * had at its last sync is an append; below it, a rewrite of a page that
 * was already on storage. The rewritten pages of a tracked file are kept
 * by page number until io_vfs_attribute() looks them up in dbstat.
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
	sqlite3_file *real;   /* follows this struct */
};

static sqlite3_vfs *orig;
static sqlite3_vfs shim_vfs;
static struct io_counts counts;
static char track_path[4096];

/* rewritten pages of the tracked file since the last attribution */
static uint32_t *pages;
static size_t npages, cappages;

struct named {
	char name[64];
	uint64_t bytes, pages;
};
static struct named *names;
static size_t nnames;

static void
page_note(sqlite3_int64 off, int amt)
{
	uint32_t p = (uint32_t)(off / 4096) + 1;

	if (amt <= 0)
		return;
	if (npages == cappages) {
		size_t n = cappages ? cappages * 2 : 1024;
		uint32_t *np = realloc(pages, n * sizeof(*np));

		if (np == NULL)
			return;
		pages = np;
		cappages = n;
	}
	pages[npages++] = p;
}

static int
x_close(sqlite3_file *f)
{
	struct shim_file *s = (struct shim_file *)f;

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
	counts.bytes[k] += (uint64_t)amt;
	return s->real->pMethods->xWrite(s->real, buf, amt, off);
}

static int
x_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct shim_file *s = (struct shim_file *)f;

	if (s->synced > size)
		s->synced = size;
	return s->real->pMethods->xTruncate(s->real, size);
}

static int
x_sync(sqlite3_file *f, int flags)
{
	struct shim_file *s = (struct shim_file *)f;
	sqlite3_int64 sz;
	int rc = s->real->pMethods->xSync(s->real, flags);

	counts.syncs += s->counted;
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
name_add(const char *name, uint64_t bytes)
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
	names[i].bytes += bytes;
	names[i].pages++;
}

void
io_vfs_attribute(void)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char **by_page = NULL;
	uint32_t maxp = 0;
	size_t i;

	if (npages == 0)
		return;
	for (i = 0; i < npages; i++)
		if (pages[i] > maxp)
			maxp = pages[i];
	if ((by_page = calloc(maxp + 1, sizeof(*by_page))) == NULL)
		goto out;
	if (sqlite3_open_v2(track_path, &db, SQLITE_OPEN_READONLY, NULL) !=
		SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT name, pageno FROM dbstat", -1, &st,
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
	for (i = 0; i < npages; i++) {
		uint32_t p = pages[i];

		name_add(p == 1	   ? "page 1 (header, schema root)" :
			by_page[p] ? by_page[p] :
				     "(free list, pointer map)",
		    4096);
	}
out:
	if (by_page) {
		for (i = 0; i <= maxp; i++)
			free(by_page[i]);
		free(by_page);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	npages = 0;
}

static int
by_bytes(const void *a, const void *b)
{
	const struct named *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

void
io_vfs_print_pages(FILE *out, double days)
{
	uint64_t tot = 0;
	size_t i;

	if (nnames == 0)
		return;
	qsort(names, nnames, sizeof(names[0]), by_bytes);
	for (i = 0; i < nnames; i++)
		tot += names[i].bytes;
	fprintf(out,
	    "    pages rewritten in place, by b-tree (each also journaled "
	    "first):\n");
	for (i = 0; i < nnames; i++)
		fprintf(out, "    %-32s %7.2f MB/day %5.1f %%\n", names[i].name,
		    (double)names[i].bytes / 1e6 / days,
		    100.0 * (double)names[i].bytes / (double)tot);
	nnames = 0;
}
