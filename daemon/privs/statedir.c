/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state directory, reached the way the service user would reach it
 * (doc/privileges.md, doc/security.md).
 *
 * The setup phase runs as root, but root without CAP_DAC_OVERRIDE (Android
 * never grants it) cannot enter a 0750 directory its service user owns,
 * and root that follows a path the service user controls can be steered
 * into root's files. So every state-directory step of the setup runs with
 * the filesystem ids of the service user (setfsuid/setfsgid): the kernel
 * checks permissions as that user, files are created as that user, and a
 * planted link leads nowhere that user could not go anyway. Capabilities
 * that are not about files (setuid, setgid, setpcap) stay; threads started
 * in between inherit the ids until the drop changes every id for good.
 *
 * Root does only two things itself: make the directory when it is missing
 * (and give the directory it just made to the service user) and take over
 * a directory root made (systemd's StateDirectory=, a start without a
 * drop), both reached with O_NOFOLLOW. Nothing inside is ever chowned.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "privs/privs.h"

/* Who the state directory's files belong to; drop false: this process. */
static struct {
	bool drop;
	uint32_t uid, gid;
	int depth; /* statedir_fs_enter nesting */
	uid_t old_uid;
	gid_t old_gid;
} owner;

void
statedir_set_owner(const struct privs_req *req)
{
	owner.drop = req && req->drop;
	owner.uid = req ? req->uid : 0;
	owner.gid = req ? req->gid : 0;
}

static uint32_t
statedir_owner_uid(void)
{
	return owner.drop ? owner.uid : (uint32_t)geteuid();
}

/*
 * Filesystem ids of the service user on this thread (and the threads it
 * starts) until statedir_fs_leave. Nothing to do without a drop. Checked:
 * setfsuid reports the old value and cannot fail visibly, so the new one
 * is read back.
 */
int
statedir_fs_enter(void)
{
	if (!owner.drop || owner.depth++ > 0)
		return 0;
	owner.old_gid = (gid_t)setfsgid(owner.gid);
	owner.old_uid = (uid_t)setfsuid(owner.uid);
	if ((uint32_t)setfsgid((gid_t)-1) != owner.gid ||
	    (uint32_t)setfsuid((uid_t)-1) != owner.uid) {
		statedir_fs_leave();
		return -EPERM;
	}
	return 0;
}

void
statedir_fs_leave(void)
{
	if (!owner.drop || owner.depth == 0 || --owner.depth > 0)
		return;
	/* back to 0: the kernel puts the file capabilities back into the
	 * effective set from the permitted one */
	(void)setfsuid(owner.old_uid);
	(void)setfsgid(owner.old_gid);
}

/* Parents 0755 (the service user must be able to pass), as this process. */
static int
mkdir_parents(const char *path)
{
	char tmp[4096];
	char *s;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

static int
open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * Open (making it when missing) and check the state directory: a real
 * directory, not a symlink, owned by the service user (or by this process
 * without a drop), writable by nobody else. The fd is the caller's.
 * -errno with err[] saying what is wrong.
 */
int
statedir_open(const char *path, int *ret_fd, char *err, size_t errsz)
{
	uint32_t want = statedir_owner_uid();
	bool created = false;
	struct stat st;
	int fd, r;

	err[0] = '\0';
	if ((r = statedir_fs_enter()) < 0) {
		snprintf(err, errsz, "cannot take the service user's file ids");
		return r;
	}
	fd = open_dir(path);
	statedir_fs_leave();
	if (fd == -EACCES && owner.drop) {
		/* a root-made 0750 directory: root may take it over below;
		 * or missing below a parent closed to the service user (said
		 * once it is made) */
		if ((fd = open_dir(path)) >= 0 &&
		    (fstat(fd, &st) < 0 || st.st_uid != 0)) {
			close(fd);
			fd = -EACCES;
		}
	}
	if (fd == -ENOENT) {
		/* made by root: its parent is root's business */
		if ((r = mkdir_parents(path)) < 0) {
			snprintf(err, errsz, "parent: %s", strerror(-r));
			return r;
		}
		if (mkdir(path, 0750) == 0)
			created = true;
		else if (errno != EEXIST) {
			r = -errno;
			snprintf(err, errsz, "%s", strerror(-r));
			return r;
		}
		fd = open_dir(path);
	}
	if (fd == -ELOOP || fd == -ENOTDIR) {
		struct stat lst;

		if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
			snprintf(err, errsz,
			    "is a symbolic link: refused (give "
			    "the real directory)");
			return -ELOOP;
		}
		snprintf(err, errsz, "not a directory");
		return -ENOTDIR;
	}
	if (fd < 0) {
		snprintf(err, errsz, "%s%s", strerror(-fd),
		    fd == -EACCES && owner.drop ? " (as the service user)" :
						  "");
		return fd;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errsz, "%s", strerror(-r));
		close(fd);
		return r;
	}
	/* a directory root made (just now, or systemd's StateDirectory=)
	 * becomes the service user's; reached without a symlink, it is
	 * root's to give. Entries inside are never chowned. */
	if (owner.drop && st.st_uid == 0 &&
	    (created || !(st.st_mode & (S_IWGRP | S_IWOTH)))) {
		if (fchown(fd, owner.uid, owner.gid) < 0 ||
		    fstat(fd, &st) < 0) {
			r = -errno;
			snprintf(err, errsz, "giving it to uid %u: %s",
			    owner.uid, strerror(-r));
			close(fd);
			return r;
		}
	}
	if (st.st_uid != want) {
		snprintf(err, errsz, "owned by uid %u, not uid %u: refused",
		    (unsigned)st.st_uid, want);
		close(fd);
		return -EPERM;
	}
	if ((st.st_mode & S_IWOTH) ||
	    ((st.st_mode & S_IWGRP) &&
		st.st_gid != (owner.drop ? owner.gid : getegid()))) {
		snprintf(err, errsz,
		    "writable by others (mode %04o, gid %u): "
		    "refused",
		    (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid);
		close(fd);
		return -EPERM;
	}
	/* made or taken by root: the service user must reach it too, or
	 * its files could not be opened as that user */
	if (owner.drop) {
		struct stat st2;
		int fd2;

		if ((r = statedir_fs_enter()) < 0) {
			close(fd);
			return r;
		}
		fd2 = open_dir(path);
		statedir_fs_leave();
		if (fd2 >= 0 &&
		    (fstat(fd2, &st2) < 0 || st2.st_dev != st.st_dev ||
			st2.st_ino != st.st_ino)) {
			close(fd2);
			fd2 = -ESTALE;
		}
		if (fd2 < 0) {
			snprintf(err, errsz,
			    "uid %u cannot reach it: %s (a "
			    "parent directory closed to it?)",
			    owner.uid, strerror(-fd2));
			close(fd);
			return fd2;
		}
		close(fd2);
	}
	*ret_fd = fd;
	return 0;
}

/*
 * A file in a state directory, checked without following anything: absent
 * (-ENOENT), or a regular file owned by want_uid with one link. Used for
 * the database and its -wal, -shm and -journal companions (store.c).
 */
int
statedir_check_file(int dirfd, const char *name, uint32_t want_uid, char *err,
    size_t errsz)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return statedir_check_stat(&st, name, want_uid, err, errsz);
}

int
statedir_check_stat(const struct stat *st, const char *name, uint32_t want_uid,
    char *err, size_t errsz)
{
	if (S_ISLNK(st->st_mode)) {
		snprintf(err, errsz, "%s is a symbolic link: refused", name);
		return -ELOOP;
	}
	if (S_ISDIR(st->st_mode)) {
		snprintf(err, errsz, "%s is a directory", name);
		return -EISDIR;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errsz, "%s is not a regular file: refused", name);
		return -EPERM;
	}
	if (st->st_uid != want_uid) {
		snprintf(err, errsz,
		    "%s is owned by uid %u, not uid %u: "
		    "refused",
		    name, (unsigned)st->st_uid, want_uid);
		return -EPERM;
	}
	if (st->st_nlink != 1) {
		snprintf(err, errsz, "%s has %lu links (a hard link): refused",
		    name, (unsigned long)st->st_nlink);
		return -EMLINK;
	}
	return 0;
}
