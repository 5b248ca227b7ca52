/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The power-cut and I/O-error VFS of vfs_powercut.h. A shim: every method
 * forwards to the unix VFS; the write path (xWrite, xTruncate, xSync,
 * xDelete) is counted, may fail on purpose, and records, per file path,
 * the content each page had at the file's last sync. Only the main
 * database, its WAL and a rollback journal are tracked; the -shm is memory
 * that a reboot forgets.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfs_powercut.h"

#define PG 4096
#define SECTOR 512

struct pc_page {
	int64_t pgno;
	unsigned char old[PG]; /* as at the last sync (zeros past its end) */
};

struct pc_track {
	char *path;
	int64_t synced_size;
	struct pc_page *pg;
	size_t npg, cap;
	struct pc_track *next;
};

struct pc_file {
	sqlite3_file base;
	struct pc_track *t;  /* NULL: not tracked (temp files, -shm) */
	sqlite3_file real[]; /* the unix file, szOsFile bytes */
};

static sqlite3_vfs pc_vfs, *unix_vfs;
static struct pc_track *tracks;
static uint64_t ncalls, cut_at, err_at, nerrs;
static unsigned err_n;
static int err_rc;
static bool cut;
static uint64_t rng = 88172645463325252ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Count one write-path call: SQLITE_OK to go on, or the rc to fail with. */
static int
pc_gate(int iorc)
{
	ncalls++;
	if (cut_at && ncalls >= cut_at)
		cut = true;
	if (cut)
		return iorc;
	if (err_at && ncalls >= err_at && ncalls < err_at + err_n) {
		nerrs++;
		return err_rc ? err_rc : iorc;
	}
	return SQLITE_OK;
}

static struct pc_track *
track_get(const char *path)
{
	struct pc_track *t;

	for (t = tracks; t; t = t->next)
		if (strcmp(t->path, path) == 0)
			return t;
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->path = strdup(path)) == NULL) {
		free(t);
		return NULL;
	}
	t->synced_size = -1; /* set at the first size query */
	t->next = tracks;
	tracks = t;
	return t;
}

static void
track_drop(const char *path)
{
	struct pc_track **pp, *t;

	for (pp = &tracks; (t = *pp) != NULL; pp = &t->next)
		if (strcmp(t->path, path) == 0) {
			*pp = t->next;
			free(t->pg);
			free(t->path);
			free(t);
			return;
		}
}

static bool
page_dirty(const struct pc_track *t, int64_t pgno)
{
	size_t i;

	for (i = 0; i < t->npg; i++)
		if (t->pg[i].pgno == pgno)
			return true;
	return false;
}

/* Remember page pgno as it is now (before a write changes it). */
static int
page_keep(struct pc_file *f, int64_t pgno)
{
	struct pc_track *t = f->t;
	struct pc_page *p;
	int rc;

	if (page_dirty(t, pgno))
		return SQLITE_OK;
	if (t->npg == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;

		if ((p = realloc(t->pg, cap * sizeof(*p))) == NULL)
			return SQLITE_NOMEM;
		t->pg = p;
		t->cap = cap;
	}
	p = &t->pg[t->npg];
	p->pgno = pgno;
	memset(p->old, 0, PG);
	if (pgno * PG < t->synced_size) {
		rc = f->real->pMethods->xRead(f->real, p->old, PG, pgno * PG);
		if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)
			return rc;
		/* Past the synced end nothing of the page survives. */
		if ((pgno + 1) * PG > t->synced_size)
			memset(p->old + (t->synced_size - pgno * PG), 0,
			    (size_t)((pgno + 1) * PG - t->synced_size));
	}
	t->npg++;
	return SQLITE_OK;
}

static int
track_init_size(struct pc_file *f)
{
	sqlite3_int64 sz;
	int rc;

	if (f->t == NULL || f->t->synced_size >= 0)
		return SQLITE_OK;
	if ((rc = f->real->pMethods->xFileSize(f->real, &sz)) != SQLITE_OK)
		return rc;
	f->t->synced_size = sz; /* a file that exists is taken as synced */
	return SQLITE_OK;
}

static int
x_close(sqlite3_file *pf)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xClose(f->real);
}

static int
x_read(sqlite3_file *pf, void *buf, int n, sqlite3_int64 off)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xRead(f->real, buf, n, off);
}

static int
x_write(sqlite3_file *pf, const void *buf, int n, sqlite3_int64 off)
{
	struct pc_file *f = (struct pc_file *)pf;
	int64_t pg;
	int rc;

	if ((rc = pc_gate(SQLITE_IOERR_WRITE)) != SQLITE_OK)
		return rc;
	if (f->t) {
		if ((rc = track_init_size(f)) != SQLITE_OK)
			return rc;
		for (pg = off / PG; pg <= (off + n - 1) / PG; pg++)
			if ((rc = page_keep(f, pg)) != SQLITE_OK)
				return rc;
	}
	return f->real->pMethods->xWrite(f->real, buf, n, off);
}

static int
x_truncate(sqlite3_file *pf, sqlite3_int64 size)
{
	struct pc_file *f = (struct pc_file *)pf;
	int64_t pg;
	int rc;

	if ((rc = pc_gate(SQLITE_IOERR_TRUNCATE)) != SQLITE_OK)
		return rc;
	if (f->t) {
		if ((rc = track_init_size(f)) != SQLITE_OK)
			return rc;
		for (pg = size / PG; pg * PG < f->t->synced_size; pg++)
			if ((rc = page_keep(f, pg)) != SQLITE_OK)
				return rc;
	}
	return f->real->pMethods->xTruncate(f->real, size);
}

static int
x_sync(sqlite3_file *pf, int flags)
{
	struct pc_file *f = (struct pc_file *)pf;
	sqlite3_int64 sz;
	int rc;

	if ((rc = pc_gate(SQLITE_IOERR_FSYNC)) != SQLITE_OK)
		return rc;
	if ((rc = f->real->pMethods->xSync(f->real, flags)) != SQLITE_OK)
		return rc;
	if (f->t && f->real->pMethods->xFileSize(f->real, &sz) == SQLITE_OK) {
		f->t->synced_size = sz;
		f->t->npg = 0;
	}
	return SQLITE_OK;
}

static int
x_file_size(sqlite3_file *pf, sqlite3_int64 *ret)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xFileSize(f->real, ret);
}

static int
x_lock(sqlite3_file *pf, int l)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xLock(f->real, l);
}

static int
x_unlock(sqlite3_file *pf, int l)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xUnlock(f->real, l);
}

static int
x_check_lock(sqlite3_file *pf, int *ret)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xCheckReservedLock(f->real, ret);
}

static int
x_fcntl(sqlite3_file *pf, int op, void *arg)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int
x_sector(sqlite3_file *pf)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xSectorSize(f->real);
}

static int
x_devchar(sqlite3_file *pf)
{
	struct pc_file *f = (struct pc_file *)pf;

	/* As in production: the tears of pc_apply_cut only mix old and
	 * new bytes of what was written (powersafe overwrite holds). */
	return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int
x_shm_map(sqlite3_file *pf, int pg, int sz, int ext, void volatile **ret)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xShmMap(f->real, pg, sz, ext, ret);
}

static int
x_shm_lock(sqlite3_file *pf, int off, int n, int flags)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xShmLock(f->real, off, n, flags);
}

static void
x_shm_barrier(sqlite3_file *pf)
{
	struct pc_file *f = (struct pc_file *)pf;

	f->real->pMethods->xShmBarrier(f->real);
}

static int
x_shm_unmap(sqlite3_file *pf, int del)
{
	struct pc_file *f = (struct pc_file *)pf;

	return f->real->pMethods->xShmUnmap(f->real, del);
}

static int
x_fetch(sqlite3_file *pf, sqlite3_int64 off, int n, void **ret)
{
	(void)pf;
	(void)off;
	(void)n;
	*ret = NULL; /* no memory-mapped reads: every read is seen */
	return SQLITE_OK;
}

static int
x_unfetch(sqlite3_file *pf, sqlite3_int64 off, void *p)
{
	(void)pf;
	(void)off;
	(void)p;
	return SQLITE_OK;
}

static const sqlite3_io_methods pc_io = {
	3,
	x_close,
	x_read,
	x_write,
	x_truncate,
	x_sync,
	x_file_size,
	x_lock,
	x_unlock,
	x_check_lock,
	x_fcntl,
	x_sector,
	x_devchar,
	x_shm_map,
	x_shm_lock,
	x_shm_barrier,
	x_shm_unmap,
	x_fetch,
	x_unfetch,
};

static int
v_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *pf, int flags,
    int *ret_flags)
{
	struct pc_file *f = (struct pc_file *)pf;
	int rc;

	(void)vfs;
	memset(f, 0, sizeof(*f));
	if (cut)
		return SQLITE_CANTOPEN;
	rc = unix_vfs->xOpen(unix_vfs, name, f->real, flags, ret_flags);
	if (rc != SQLITE_OK)
		return rc;
	if (name &&
	    (flags &
		(SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL |
		    SQLITE_OPEN_MAIN_JOURNAL)))
		f->t = track_get(name);
	f->base.pMethods = &pc_io;
	if ((rc = track_init_size(f)) != SQLITE_OK) {
		x_close(pf);
		f->base.pMethods = NULL;
	}
	return rc;
}

static int
v_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	int rc;

	(void)vfs;
	if ((rc = pc_gate(SQLITE_IOERR_DELETE)) != SQLITE_OK)
		return rc;
	track_drop(name);
	return unix_vfs->xDelete(unix_vfs, name, sync);
}

static int
v_access(sqlite3_vfs *vfs, const char *name, int flags, int *ret)
{
	(void)vfs;
	return unix_vfs->xAccess(unix_vfs, name, flags, ret);
}

static int
v_fullpath(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return unix_vfs->xFullPathname(unix_vfs, name, n, out);
}

static int
v_random(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return unix_vfs->xRandomness(unix_vfs, n, out);
}

static int
v_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return unix_vfs->xSleep(unix_vfs, us);
}

static int
v_time(sqlite3_vfs *vfs, double *ret)
{
	(void)vfs;
	return unix_vfs->xCurrentTime(unix_vfs, ret);
}

static int
v_lasterr(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return unix_vfs->xGetLastError(unix_vfs, n, out);
}

static int
v_time64(sqlite3_vfs *vfs, sqlite3_int64 *ret)
{
	(void)vfs;
	return unix_vfs->xCurrentTimeInt64(unix_vfs, ret);
}

int
pc_register(void)
{
	if (unix_vfs)
		return 0;
	if ((unix_vfs = sqlite3_vfs_find("unix")) == NULL)
		return -ENOENT;
	pc_vfs.iVersion = 2;
	pc_vfs.szOsFile = (int)sizeof(struct pc_file) + unix_vfs->szOsFile;
	pc_vfs.mxPathname = unix_vfs->mxPathname;
	pc_vfs.zName = "powercut";
	pc_vfs.xOpen = v_open;
	pc_vfs.xDelete = v_delete;
	pc_vfs.xAccess = v_access;
	pc_vfs.xFullPathname = v_fullpath;
	pc_vfs.xRandomness = v_random;
	pc_vfs.xSleep = v_sleep;
	pc_vfs.xCurrentTime = v_time;
	pc_vfs.xGetLastError = v_lasterr;
	pc_vfs.xCurrentTimeInt64 = v_time64;
	return sqlite3_vfs_register(&pc_vfs, 1) == SQLITE_OK ? 0 : -EIO;
}

void
pc_reset(uint64_t seed)
{
	while (tracks)
		track_drop(tracks->path);
	ncalls = cut_at = err_at = nerrs = 0;
	err_n = 0;
	err_rc = 0;
	cut = false;
	rng = seed ? seed : 88172645463325252ULL;
}

void
pc_arm_cut(uint64_t k)
{
	cut_at = k;
}

bool
pc_cut_done(void)
{
	return cut;
}

void
pc_arm_errors(uint64_t k, unsigned n, int rc)
{
	err_at = k;
	err_n = n;
	err_rc = rc;
}

uint64_t
pc_calls(void)
{
	return ncalls;
}

uint64_t
pc_errors(void)
{
	return nerrs;
}

/* One file as the power cut leaves it. */
static int
apply_one(const struct pc_track *t)
{
	unsigned char cur[PG];
	struct stat sb;
	int64_t size;
	size_t i;
	int fd, s;

	if ((fd = open(t->path, O_RDWR)) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &sb) < 0)
		goto fail;
	/* The size reached the disk, or not. */
	size = t->synced_size < 0 || (rnd() & 1) ? (int64_t)sb.st_size :
						   t->synced_size;
	for (i = 0; i < t->npg; i++) {
		const struct pc_page *p = &t->pg[i];
		unsigned mode = (unsigned)(rnd() % 3);
		ssize_t n;

		memset(cur, 0, PG);
		n = pread(fd, cur, PG, p->pgno * PG);
		if (n < 0)
			goto fail;
		if (p->pgno * PG >= sb.st_size)
			mode = 1; /* gone from the live file: old or nothing */
		if (mode == 1)	  /* the write never reached the disk */
			memcpy(cur, p->old, PG);
		else if (mode == 2) /* torn: some sectors new, some old */
			for (s = 0; s < PG / SECTOR; s++)
				if (rnd() & 1)
					memcpy(cur + s * SECTOR,
					    p->old + s * SECTOR, SECTOR);
		if (pwrite(fd, cur, PG, p->pgno * PG) != PG)
			goto fail;
	}
	if (ftruncate(fd, size) < 0)
		goto fail;
	close(fd);
	return 0;
fail:
	s = -errno;
	close(fd);
	return s;
}

int
pc_apply_cut(void)
{
	const struct pc_track *t;
	char shm[4096];
	int r;

	for (t = tracks; t; t = t->next) {
		if ((r = apply_one(t)) < 0)
			return r;
		snprintf(shm, sizeof(shm), "%s-shm", t->path);
		(void)unlink(shm);
	}
	while (tracks)
		track_drop(tracks->path);
	cut = false;
	cut_at = 0;
	return 0;
}
