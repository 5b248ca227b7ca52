/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The spool's directory (batched commits, doc/storage.md): where the
 * store commits each window before moving a batch into vitals.db.
 *
 * The directory is made and checked by statedir_open, with the state
 * directory's rules (a real directory of the service user, writable by
 * nobody else), and must be on a RAM file system: a spool on storage
 * would write every window twice. The file is named after a hash of the
 * database's absolute path, so daemons with different state directories
 * never share a spool. Anything wrong leaves the spool off (each window
 * is then its own commit) with the reason in note[].
 */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "privs/privs.h"

static bool
on_ram_fs(const struct statfs *sf)
{
	return sf->f_type == TMPFS_MAGIC || sf->f_type == RAMFS_MAGIC;
}

/* Android's /dev is a tmpfs; on hosts /run when it is one, else /dev/shm. */
const char *
spooldir_default(void)
{
#ifdef __ANDROID__
	return "/dev/vitalsd";
#else
	struct statfs sf;

	if (statfs("/run", &sf) == 0 && on_ram_fs(&sf))
		return "/run/vitalsd";
	return "/dev/shm/vitalsd";
#endif
}

/* 64-bit FNV-1a */
uint64_t
spooldir_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * The spool file for the database <state_dir>/vitals.db in dir (NULL: the
 * default; "": off) into path[]; commit_s 0: off. 0 with path[0] set: use
 * it; otherwise path[0] is '\0' and note[] says why (-errno returned when
 * something failed, 0 when the configuration turned it off).
 */
int
spooldir_setup(const char *dir, unsigned commit_s, const char *state_dir,
    char *path, size_t pathsz, char *note, size_t notesz)
{
	char real[PATH_MAX], why[512];
	struct statfs sf;
	int fd, r;

	path[0] = note[0] = '\0';
	if (dir == NULL)
		dir = spooldir_default();
	if (commit_s == 0 || dir[0] == '\0') {
		snprintf(note, notesz, "off by configuration (%s)",
		    commit_s == 0 ? "store_commit_s 0" : "store_spool_dir off");
		return 0;
	}
	if (realpath(state_dir, real) == NULL) {
		r = -errno;
		snprintf(note, notesz, "state directory %s: %s", state_dir,
		    strerror(-r));
		return r;
	}
	if ((r = statedir_open(dir, &fd, why, sizeof(why))) < 0) {
		snprintf(note, notesz, "%s: %s", dir, why);
		return r;
	}
	if (fstatfs(fd, &sf) < 0) {
		r = -errno;
		snprintf(note, notesz, "%s: %s", dir, strerror(-r));
		close(fd);
		return r;
	}
	close(fd);
	if (!on_ram_fs(&sf)) {
		snprintf(note, notesz,
		    "%s is not on a RAM file system (f_type 0x%lx): a spool "
		    "there would write every window twice",
		    dir, (unsigned long)sf.f_type);
		return -EXDEV;
	}
	if (strlen(real) + sizeof("/vitals.db") > sizeof(real)) {
		snprintf(note, notesz, "state directory path too long");
		return -ENAMETOOLONG;
	}
	strcat(real, "/vitals.db");
	if (snprintf(path, pathsz, "%s/spool-%016llx.db", dir,
		(unsigned long long)spooldir_hash(real)) >= (int)pathsz) {
		path[0] = '\0';
		snprintf(note, notesz, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}
