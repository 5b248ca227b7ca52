/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Self-healing of the window store, the checks and repairs opening and
 * writing use: schema objects not ours, replays, -shm faults (SIGBUS), a
 * WAL rebuilt before opening, the integrity check. Below store.c and
 * store_write.c, calling neither; a closed handle opened again is
 * store_retry.c's, salvage store_salvage.c's. doc/storage.md,
 * "Self-healing", says what each step does and which health figure
 * counts it.
 *
 * Library code: nothing here logs; the stats say what happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "window/window.h"
#include "store_int.h"

/* ------------------------------------------------- writes that store nothing */

/*
 * Our schema has no triggers and no views. One that is there was put
 * there by somebody else and can turn an insert into nothing (a trigger
 * with RAISE(IGNORE), a view with INSTEAD OF): such a file is not ours.
 * SQLITE_OK with why[0] == '\0': none.
 */
int
store_heal_foreign_objects(sqlite3 *db, char *why, size_t whysz)
{
	sqlite3_stmt *st;
	int rc;

	why[0] = '\0';
	rc = sqlite3_prepare_v2(db,
	    "SELECT type, name FROM sqlite_schema"
	    " WHERE type IN ('trigger', 'view') LIMIT 1",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		snprintf(why, whysz, "%s %s", sqlite3_column_text(st, 0),
		    sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * The window row's insert returned no id: a replay (the row is there) or
 * an insert that stored nothing. SQLITE_OK or STORE_RC_NOTHING.
 */
int
store_heal_check_replay(struct store *s, const struct window *w)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	rc = sqlite3_prepare_v2(s->db,
	    "SELECT 1 FROM windows WHERE wall_start_ns = ?4 AND"
	    " boot = boot_key(?1) AND level = ?2 AND mono_start_ns = ?3",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, w->boot_id,
	    (int)strnlen(w->boot_id, sizeof(w->boot_id)), SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, w->level);
	sqlite3_bind_int64(st, 3, w->mono_start_ns);
	sqlite3_bind_int64(st, 4, w->wall_start_ns);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		found = 1;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return rc;
	return found ? SQLITE_OK : STORE_RC_NOTHING;
}

/* ------------------------------------------------------ a -shm cut under us */

/*
 * SQLite maps the WAL index (<db>-shm) shared. A file cut shorter under
 * the running process (truncated by whoever can write it, a failing
 * medium) turns the next access into SIGBUS, which kills the process.
 * The handler below gives the file its length back: the pages read as
 * zeros, which SQLite takes as an index to rebuild from the WAL, as after
 * a crash. Each store then reopens its connection (store_heal_reopen),
 * so nothing keeps using an index that went away mid-transaction. Any
 * other SIGBUS keeps its default action.
 *
 * Async-signal-safe: open, read, fstat, ftruncate, close only; no malloc,
 * no stdio. The maps parser works on a fixed buffer.
 */
static volatile sig_atomic_t shm_faults;
static bool sigbus_installed;

static unsigned long
hex_at(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

/* The mapping of /proc/self/maps holding addr, if it is a -shm file. */
static bool
shm_mapping(uintptr_t addr, char *ret_path, size_t pathsz,
    unsigned long *ret_end_off)
{
	static char buf[8192];
	char line[PATH_MAX + 128];
	size_t ll = 0;
	ssize_t n;
	int fd;
	bool found = false;

	if ((fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	while (!found && (n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i;

		for (i = 0; i < n && !found; i++) {
			const char *p, *name;
			unsigned long lo, hi, off;
			size_t nl;

			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = '\0';
			ll = 0;
			p = line;
			lo = hex_at(&p);
			if (*p++ != '-')
				continue;
			hi = hex_at(&p);
			if (addr < lo || addr >= hi)
				continue;
			/* perms, then the offset */
			while (*p == ' ')
				p++;
			while (*p && *p != ' ')
				p++;
			while (*p == ' ')
				p++;
			off = hex_at(&p);
			if ((name = strchr(p, '/')) == NULL)
				break;
			nl = strlen(name);
			if (nl < 4 || strcmp(name + nl - 4, "-shm") != 0 ||
			    nl >= pathsz)
				break;
			memcpy(ret_path, name, nl + 1);
			*ret_end_off = off + (hi - lo);
			found = true;
		}
	}
	close(fd);
	return found;
}

static void
sigbus_cb(int sig, siginfo_t *si, void *uc)
{
	static char p[PATH_MAX];
	unsigned long end;
	struct stat sb;
	int fd, saved = errno;

	(void)uc;
	if (shm_mapping((uintptr_t)si->si_addr, p, sizeof(p), &end) &&
	    (fd = open(p, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		if (fstat(fd, &sb) == 0 && (unsigned long)sb.st_size < end &&
		    ftruncate(fd, (off_t)end) == 0) {
			close(fd);
			shm_faults++;
			errno = saved;
			return; /* the access is retried and now succeeds */
		}
		close(fd);
	}
	/* Not ours or not mendable: the default action on the retry. */
	signal(sig, SIG_DFL);
	errno = saved;
}

/* Once per process, before the first store is opened. */
int
store_heal_sigbus_install(void)
{
	struct sigaction sa;

	if (sigbus_installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigbus_cb;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return -errno;
	sigbus_installed = true;
	return 0;
}

/* Every -shm fault the handler mended in this process. */
uint64_t
store_heal_faults(void)
{
	return (uint64_t)shm_faults;
}

/*
 * A -shm fault mended since this store's connection last closed: the
 * handler counts faults for the process, since it cannot tell whose
 * connection mapped the file (the main store's connection maps the
 * spool's index too, through its attachment). Its index may be zeros
 * under a valid header, so no checkpoint may trust it: store_after_write
 * skips its own, db_close (store.c) closes without one,
 * store_heal_reopen reopens at the next top-level call, and that open
 * resets the index first (store_heal_before_open).
 */
bool
store_heal_pending(const struct store *s)
{
	return s->db != NULL && (uint64_t)shm_faults != s->shm_seen;
}

/*
 * After a -shm fault, the writer's connection closed: zero the WAL
 * index's header (its two copies and the checkpoint record, the first
 * 136 bytes). The pages the fault gave back read as zeros, but a commit
 * after it wrote a valid header over them: a connection trusting that
 * header would find no entry for the frames committed before the fault,
 * read those pages from the main file, and a checkpoint (the one at
 * close included) would copy none of them back before the WAL is reset,
 * losing committed windows. With the header zeroed the next connection
 * rebuilds the whole index from the WAL file's frames (SQLite's
 * recovery), and the checkpoint record starts again from frame 0.
 */
int
store_heal_shm_reset(const char *dbpath)
{
	static const char zero[136];
	char p[PATH_MAX];
	int fd, r = 0;

	if (snprintf(p, sizeof(p), "%s-shm", dbpath) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	if ((fd = open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (pwrite(fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero))
		r = -EIO;
	close(fd);
	return r;
}

/* -------------------------------------------------- the WAL, before opening */

#define WAL_HDR 32
#define WAL_FRAME_HDR 24

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* SQLite's WAL checksum: pairs of 32-bit words, in the WAL's byte order. */
static void
wal_cksum(bool big, const unsigned char *d, size_t n, uint32_t *s1,
    uint32_t *s2)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint32_t x0, x1;

		if (big) {
			x0 = be32(d + i);
			x1 = be32(d + i + 4);
		} else {
			memcpy(&x0, d + i, 4);
			memcpy(&x1, d + i + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			x0 = __builtin_bswap32(x0);
			x1 = __builtin_bswap32(x1);
#endif
		}
		*s1 += x0 + *s2;
		*s2 += x1 + *s1;
	}
}

struct wal_scan {
	bool present; /* a WAL with a valid header */
	uint32_t pgsz;
	uint64_t frames;   /* whole frames in the file */
	uint64_t valid;	   /* frames up to the last valid commit */
	uint64_t bad_at;   /* first frame that fails (1-based), 0 none */
	uint64_t lost;	   /* valid commit frames after it: dropped */
	uint32_t db_pages; /* database size at the last valid commit */
};

/*
 * Read the WAL as SQLite's recovery will: frames count while their salts
 * match the header and the running checksum holds. SQLite stops at the
 * first frame that fails and drops the rest, silently. A commit frame
 * after that point that is whole on its own (checked from the stored
 * checksum of the frame before it) is a transaction that reached the disk
 * and will be lost: that is damage, not a torn tail.
 */
static int
wal_scan(int fd, struct wal_scan *ret)
{
	unsigned char hdr[WAL_HDR], *fr = NULL;
	uint32_t magic, s1 = 0, s2 = 0, ps1 = 0, ps2 = 0;
	struct stat sb;
	uint64_t k;
	size_t fsz;
	bool big, broken = false;

	memset(ret, 0, sizeof(*ret));
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (sb.st_size < WAL_HDR || pread(fd, hdr, WAL_HDR, 0) != WAL_HDR)
		return 0;
	magic = be32(hdr);
	if ((magic & ~1u) != 0x377f0682)
		return 0;
	big = magic & 1;
	ret->pgsz = be32(hdr + 8);
	if (ret->pgsz < 512 || ret->pgsz > 65536 ||
	    (ret->pgsz & (ret->pgsz - 1)))
		return 0;
	wal_cksum(big, hdr, 24, &s1, &s2);
	if (s1 != be32(hdr + 24) || s2 != be32(hdr + 28))
		return 0; /* a header SQLite ignores: nothing in it counts */
	ret->present = true;
	fsz = WAL_FRAME_HDR + ret->pgsz;
	ret->frames = (uint64_t)(sb.st_size - WAL_HDR) / fsz;
	if ((fr = malloc(fsz)) == NULL)
		return -ENOMEM;
	ps1 = s1;
	ps2 = s2;
	for (k = 0; k < ret->frames; k++) {
		uint32_t c1, c2;
		bool salts, whole;

		if (pread(fd, fr, fsz, WAL_HDR + (off_t)(k * fsz)) !=
		    (ssize_t)fsz)
			break;
		salts = memcmp(fr + 8, hdr + 16, 8) == 0;
		/* checked from the frame before it (its stored sum) */
		c1 = ps1;
		c2 = ps2;
		wal_cksum(big, fr, 8, &c1, &c2);
		wal_cksum(big, fr + WAL_FRAME_HDR, ret->pgsz, &c1, &c2);
		whole = salts && c1 == be32(fr + 16) && c2 == be32(fr + 20);
		if (!salts)
			break; /* an older generation: not this WAL's */
		if (!broken && whole) {
			if (be32(fr + 4) != 0) {
				ret->valid = k + 1;
				ret->db_pages = be32(fr + 4);
			}
		} else if (!broken) {
			broken = true;
			ret->bad_at = k + 1;
		} else if (whole && be32(fr + 4) != 0) {
			ret->lost++;
		}
		ps1 = be32(fr + 16);
		ps2 = be32(fr + 20);
	}
	free(fr);
	return 0;
}

static const char *
base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* Copy src to dst (a new file); -errno. */
int
store_heal_copy_file(const char *src, const char *dst)
{
	char buf[65536];
	ssize_t n;
	int in, out, r = 0;

	if ((in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((out = open(dst,
		 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) <
	    0) {
		r = -errno;
		close(in);
		return r;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			r = -EIO;
			break;
		}
	if (n < 0)
		r = -errno;
	if (r == 0 && fsync(out) < 0)
		r = -errno;
	close(in);
	close(out);
	return r;
}

/* Keep path and its WAL as found, as <path>.<tag>-<time>[.N]. */
static int
keep_copy(struct store *s, const char *tag, char *ret, size_t retsz)
{
	char wsrc[PATH_MAX], wdst[PATH_MAX + 8];
	long long t = (long long)time(NULL);
	struct stat sb;
	int i, r;

	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(ret, retsz, "%s.%s-%lld", s->path, tag, t);
		else
			snprintf(ret, retsz, "%s.%s-%lld.%d", s->path, tag, t,
			    i);
		if (lstat(ret, &sb) < 0 && errno == ENOENT)
			break;
	}
	if ((r = store_heal_copy_file(s->path, ret)) < 0)
		return r;
	snprintf(wsrc, sizeof(wsrc), "%s-wal", s->path);
	snprintf(wdst, sizeof(wdst), "%s-wal", ret);
	return store_heal_copy_file(wsrc, wdst);
}

/*
 * A main file cut to 0 bytes beside a WAL that holds data: SQLite would
 * delete that WAL on open. Write the WAL's last committed version of each
 * page into the main file instead, so the open finds them; what the WAL
 * did not hold (pages checkpointed earlier) is gone, and the open's
 * integrity check then moves the file aside and salvages what reads.
 */
static int
rebuild_from_wal(int dbfd, int walfd, const struct wal_scan *ws)
{
	size_t fsz = WAL_FRAME_HDR + ws->pgsz;
	unsigned char *fr;
	uint64_t k;
	int r = 0;

	if ((fr = malloc(fsz)) == NULL)
		return -ENOMEM;
	for (k = 0; k < ws->valid && r == 0; k++) {
		uint32_t pgno;

		if (pread(walfd, fr, fsz, WAL_HDR + (off_t)(k * fsz)) !=
		    (ssize_t)fsz) {
			r = -EIO;
			break;
		}
		pgno = be32(fr);
		if (pgno == 0 || pgno > ws->db_pages)
			continue;
		if (pwrite(dbfd, fr + WAL_FRAME_HDR, ws->pgsz,
			(off_t)(pgno - 1) * ws->pgsz) != (ssize_t)ws->pgsz)
			r = -errno;
	}
	free(fr);
	if (r == 0 && ftruncate(dbfd, (off_t)ws->db_pages * ws->pgsz) < 0)
		r = -errno;
	if (r == 0 && fsync(dbfd) < 0)
		r = -errno;
	return r;
}

/*
 * Before SQLite opens s->path (no connection open): after a -shm fault,
 * reset the index (store_heal_shm_reset); look at the WAL the way
 * SQLite's recovery would and say what it would drop. Damage (whole
 * commits after a bad frame, or a 0-byte main file beside a WAL with
 * data) is counted in wal_damaged, explained in last_errmsg (the caller
 * logs it) and kept as a copy; SQLite then keeps the valid prefix.
 * Returns 1 when something was found, 0 when not, -errno.
 */
int
store_heal_before_open(struct store *s)
{
	char wal[PATH_MAX], kept[sizeof(s->st.corrupt_path)];
	struct wal_scan ws;
	struct stat sb;
	int walfd, dbfd = -1, r;
	bool empty_main;
	uint64_t faults = store_heal_faults();

	/* a -shm fault since this store's last open: whichever connection
	 * took it, this file's index may be zeros under a valid header */
	if (faults != s->shm_seen) {
		(void)store_heal_shm_reset(s->path);
		s->shm_seen = faults;
	}
	if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", s->path) >=
	    sizeof(wal))
		return 0;
	if ((walfd = open(wal, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	if ((r = wal_scan(walfd, &ws)) < 0 || !ws.present) {
		close(walfd);
		return r;
	}
	empty_main = stat(s->path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size == 0 && ws.valid > 0;
	if (ws.lost == 0 && !empty_main) {
		close(walfd);
		return 0;
	}
	if ((r = keep_copy(s, "wal-damaged", kept, sizeof(kept))) < 0) {
		close(walfd);
		return r;
	}
	s->st.wal_damaged++;
	if (empty_main) {
		if ((dbfd = open(s->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) < 0)
			r = -errno;
		else
			r = rebuild_from_wal(dbfd, walfd, &ws);
		if (dbfd >= 0)
			close(dbfd);
		snprintf(s->st.last_errmsg, sizeof(s->st.last_errmsg),
		    "main file empty beside its WAL: %llu pages rebuilt "
		    "from it (copy %.40s)",
		    (unsigned long long)ws.db_pages, base_name(kept));
	} else {
		snprintf(s->st.last_errmsg, sizeof(s->st.last_errmsg),
		    "WAL damaged at frame %llu: %llu later commits dropped "
		    "(copy %.40s)",
		    (unsigned long long)ws.bad_at, (unsigned long long)ws.lost,
		    base_name(kept));
	}
	s->st.last_err = -EUCLEAN;
	close(walfd);
	return r < 0 ? r : 1;
}

/*
 * The check an open runs. integrity_check also compares every index with
 * its table and checks constraints, which quick_check skips (a flipped
 * index entry passes it and is then used); it costs more, so files beyond
 * STORE_HEAL_FULL_CHECK_BYTES (four times the default size bound) get
 * quick_check. doc/storage.md has the measured times.
 */
const char *
store_heal_check_sql(const struct store *s)
{
	struct stat sb;

	if (stat(s->path, &sb) == 0 &&
	    (uint64_t)sb.st_size > STORE_HEAL_FULL_CHECK_BYTES)
		return "PRAGMA quick_check";
	return "PRAGMA integrity_check";
}
