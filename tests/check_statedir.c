/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state directory and the database's files, attacked the way the
 * service user (who owns them after the drop) could attack the next root
 * start (statedir.c, store.c db_precheck; doc/security.md):
 *  - a planted vitals.db symlink (to a root file, or dangling into a root
 *    directory) and planted -wal, -shm, -journal links: refused by name,
 *    the target untouched, nothing made through a dangling one;
 *  - a hard link as vitals.db: refused, the other name untouched;
 *  - a directory as vitals.db, a state directory that is a symlink, or of
 *    another owner, or writable by others: refused, said why;
 *  - as root with the service user's fs ids (statedir_fs_enter), a root
 *    file cannot be opened even when a check is raced past.
 * Each case was first run against the code before the checks: the
 * symlinked database was opened (SQLite created the dangling target as
 * root, wrote into the root file), the hard link was used.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "testutil.h"
#include "vitalsd.h"

#define SVC_UID 2901u /* an unused uid standing for the service user */

static char *dir;
static char path[PATH_MAX];

static void
setup(void)
{
	dir = tu_mkdtemp_db("statedir", path, sizeof(path));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	statedir_set_owner(NULL);
}

static void
teardown(void)
{
	statedir_set_owner(NULL);
	tu_rmtree(dir);
	free(dir);
}

static void
sub(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/%s", dir, name);
}

static off_t
size_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	return st.st_size;
}

static void
make_file(const char *p, const char *text)
{
	ck_assert_int_eq(tu_writes(p, text), 0);
}

/* store_open refuses with want; no handle */
static void
assert_refused(int want)
{
	struct store *s = NULL;
	int r = store_open(path, NULL, &s);

	ck_assert_msg(r == want, "store_open: %d (%s), want %d", r,
	    strerror(-r), want);
	ck_assert_ptr_null(s);
}

START_TEST(test_db_symlink_refused)
{
	char target[PATH_MAX], dangling[PATH_MAX + 16], rootdir[PATH_MAX];

	/* to a file with contents: not a byte written, not moved aside */
	sub(target, sizeof(target), "victim");
	make_file(target, "precious\n");
	ck_assert_int_eq(symlink(target, path), 0);
	assert_refused(-ELOOP);
	ck_assert_int_eq(size_of(target), 9);
	ck_assert_int_eq(access(target, F_OK), 0);
	/* still the same link: nothing renamed or replaced it */
	{
		struct stat st;

		ck_assert_int_eq(lstat(path, &st), 0);
		ck_assert(S_ISLNK(st.st_mode));
	}
	/* to an empty file: SQLite would take it as a new database */
	make_file(target, "");
	assert_refused(-ELOOP);
	ck_assert_int_eq(size_of(target), 0);
	/* dangling into another directory: nothing created there */
	ck_assert_int_eq(unlink(path), 0);
	sub(rootdir, sizeof(rootdir), "rootonly");
	ck_assert_int_eq(mkdir(rootdir, 0700), 0);
	snprintf(dangling, sizeof(dangling), "%s/new.db", rootdir);
	ck_assert_int_eq(symlink(dangling, path), 0);
	assert_refused(-ELOOP);
	ck_assert_int_eq(access(dangling, F_OK), -1);
}
END_TEST

START_TEST(test_side_file_links_refused)
{
	static const char *const side[] = { "-wal", "-shm", "-journal" };
	char target[PATH_MAX], lnk[PATH_MAX];
	struct store *s = NULL;
	unsigned i;

	sub(target, sizeof(target), "victim");
	/* a healthy store first, closed */
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	store_close(s);
	for (i = 0; i < 3; i++) {
		make_file(target, "precious\n");
		snprintf(lnk, sizeof(lnk), "%s%s", path, side[i]);
		unlink(lnk);
		ck_assert_int_eq(symlink(target, lnk), 0);
		assert_refused(-ELOOP);
		ck_assert_int_eq(size_of(target), 9);
		ck_assert_int_eq(unlink(lnk), 0);
		/* and as a hard link */
		ck_assert_int_eq(link(target, lnk) == 0 ? 0 : -errno, 0);
		assert_refused(-EMLINK);
		ck_assert_int_eq(size_of(target), 9);
		ck_assert_int_eq(unlink(lnk), 0);
	}
	/* all gone: it opens again */
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	store_close(s);
}
END_TEST

START_TEST(test_db_hard_link_refused)
{
	char other[PATH_MAX];
	struct store *s = NULL;

	/* the attacker's name for a file the daemon would write */
	sub(other, sizeof(other), "elsewhere");
	make_file(other, "");
	ck_assert_int_eq(link(other, path), 0);
	assert_refused(-EMLINK);
	ck_assert_int_eq(size_of(other), 0);
	/* once the other name is gone the file is ours alone */
	ck_assert_int_eq(unlink(other), 0);
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	store_close(s);
}
END_TEST

START_TEST(test_db_kinds)
{
	struct store *s = NULL;
	struct stat st;

	/* a directory says so (it used to be "No such file or directory"
	 * after SQLite's read-only retry) */
	ck_assert_int_eq(mkdir(path, 0700), 0);
	assert_refused(-EISDIR);
	ck_assert_int_eq(rmdir(path), 0);
	/* a FIFO: refused at once, never blocked on */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	assert_refused(-EPERM);
	ck_assert_int_eq(unlink(path), 0);
	/* missing: made 0640 by the check, then a store */
	ck_assert_int_eq(store_open(path, NULL, &s), 0);
	store_close(s);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
	ck_assert_uint_eq(st.st_nlink, 1);
}
END_TEST

/* As root: a file of another owner is refused. */
START_TEST(test_db_owner)
{
	make_file(path, "");
	ck_assert_int_eq(chown(path, SVC_UID, SVC_UID), 0);
	assert_refused(-EPERM);
	ck_assert_int_eq(unlink(path), 0);
}
END_TEST

/* A directory reached through a symlink in its path (resolved for
 * SQLite, whose NOFOLLOW refuses any). */
START_TEST(test_db_path)
{
	char real[PATH_MAX], via[PATH_MAX], p[PATH_MAX + 16];
	struct store *s = NULL;

	/* a symlink above the state directory is the admin's choice */
	sub(real, sizeof(real), "real");
	ck_assert_int_eq(mkdir(real, 0750), 0);
	sub(via, sizeof(via), "via");
	ck_assert_int_eq(symlink(real, via), 0);
	snprintf(p, sizeof(p), "%s/vitals.db", via);
	ck_assert_int_eq(store_open(p, NULL, &s), 0);
	store_close(s);
	snprintf(p, sizeof(p), "%s/vitals.db", real);
	ck_assert_int_eq(access(p, F_OK), 0);
}
END_TEST

START_TEST(test_statedir_checks)
{
	char real[PATH_MAX], lnk[PATH_MAX], err[256];
	struct stat st;
	int fd = -1;

	/* missing: made 0750 */
	sub(real, sizeof(real), "state");
	ck_assert_int_eq(statedir_open(real, &fd, err, sizeof(err)), 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(stat(real, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0750);
	/* a symlink to it: refused, said so */
	sub(lnk, sizeof(lnk), "link");
	ck_assert_int_eq(symlink(real, lnk), 0);
	ck_assert_int_eq(statedir_open(lnk, &fd, err, sizeof(err)), -ELOOP);
	ck_assert_ptr_nonnull(strstr(err, "symbolic link"));
	/* writable by others: refused */
	ck_assert_int_eq(chmod(real, 0757), 0);
	ck_assert_int_eq(statedir_open(real, &fd, err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "writable by others"));
	ck_assert_int_eq(chmod(real, 0750), 0);
	/* not a directory */
	ck_assert_int_eq(rmdir(real), 0);
	make_file(real, "");
	ck_assert_int_eq(statedir_open(real, &fd, err, sizeof(err)), -ENOTDIR);
}
END_TEST

/* Root with the service user's fs ids: a directory it owns is made and
 * given to it, one of another owner refused, root's files out of reach. */
START_TEST(test_statedir_service_ids)
{
	struct privs_req rq = { .drop = true, .uid = SVC_UID, .gid = SVC_UID };
	char state[PATH_MAX], p[PATH_MAX + 16], err[256];
	struct stat st;
	int fd = -1, f;

	statedir_set_owner(&rq);
	sub(state, sizeof(state), "state");
	/* made by root, given to the service user (just made) */
	ck_assert_int_eq(statedir_open(state, &fd, err, sizeof(err)), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq(st.st_uid, SVC_UID);
	close(fd);
	/* a database made as the service user is the service user's */
	ck_assert_int_eq(statedir_fs_enter(), 0);
	snprintf(p, sizeof(p), "%s/vitals.db", state);
	{
		struct store *s = NULL;

		ck_assert_int_eq(store_open(p, NULL, &s), 0);
		store_close(s);
	}
	/* root's file next to it: out of reach under these ids */
	statedir_fs_leave();
	snprintf(p, sizeof(p), "%s/rootfile", dir);
	make_file(p, "x");
	ck_assert_int_eq(chmod(p, 0600), 0);
	ck_assert_int_eq(statedir_fs_enter(), 0);
	f = open(p, O_RDWR);
	ck_assert_int_eq(f, -1);
	ck_assert_int_eq(errno, EACCES);
	statedir_fs_leave();
	/* back to root's ids: root reaches it again */
	ck_assert_int_ge(f = open(p, O_RDWR), 0);
	close(f);
	snprintf(p, sizeof(p), "%s/vitals.db", state);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_uid, SVC_UID);
	/* a state directory of another user: refused */
	ck_assert_int_eq(chown(state, SVC_UID + 1, SVC_UID + 1), 0);
	ck_assert_int_lt(statedir_open(state, &fd, err, sizeof(err)), 0);
	/* a root-made one (systemd's StateDirectory=): taken over, only it */
	ck_assert_int_eq(chown(state, 0, 0), 0);
	ck_assert_int_eq(chown(p, 0, 0), 0);
	ck_assert_int_eq(statedir_open(state, &fd, err, sizeof(err)), 0);
	close(fd);
	ck_assert_int_eq(stat(state, &st), 0);
	ck_assert_uint_eq(st.st_uid, SVC_UID);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_uid, 0); /* entries are never chowned */
	/* below a parent closed to the service user: made, then refused
	 * with the reason (its files could never be opened as that user) */
	snprintf(p, sizeof(p), "%s/closed", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(state, sizeof(state), "%s/closed/state", dir);
	ck_assert_int_eq(statedir_open(state, &fd, err, sizeof(err)), -EACCES);
	ck_assert_msg(strstr(err, "cannot reach") != NULL, "%s", err);
}
END_TEST

/*
 * The spool's directory (spooldir.c): off by configuration without a
 * look at the disk; the state directory's rules; refused off a RAM file
 * system; its file named by the FNV-1a hash of vitals.db's absolute path.
 */
START_TEST(test_spooldir)
{
	char spool[PATH_MAX], sp[PATH_MAX], note[256], want[PATH_MAX + 64];
	char real[PATH_MAX];
	struct statfs sf;
	int r;

	/* FNV-1a 64 reference values */
	ck_assert_uint_eq(spooldir_hash(""), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(spooldir_hash("a"), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(spooldir_hash("foobar"), 0x85944171f73967e8ULL);

	ck_assert_int_eq(spooldir_setup("/nonexistent/x", 0, dir, sp,
			     sizeof(sp), note, sizeof(note)),
	    0);
	ck_assert_str_eq(sp, "");
	ck_assert_msg(strstr(note, "store_commit_s 0"), "%s", note);
	ck_assert_int_eq(spooldir_setup("", 60, dir, sp, sizeof(sp), note,
			     sizeof(note)),
	    0);
	ck_assert_str_eq(sp, "");
	ck_assert_msg(strstr(note, "off"), "%s", note);
	ck_assert_str_ne(spooldir_default(), "");

	/* on a RAM file system: made, named after the database */
	snprintf(spool, sizeof(spool), "/dev/shm/vitals-sdtest-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(spool));
	ck_assert_int_eq(rmdir(spool), 0); /* made by spooldir_setup */
	ck_assert_int_eq(spooldir_setup(spool, 60, dir, sp, sizeof(sp), note,
			     sizeof(note)),
	    0);
	ck_assert_ptr_nonnull(realpath(dir, real));
	strcat(real, "/vitals.db");
	snprintf(want, sizeof(want), "%s/spool-%016llx.db", spool,
	    (unsigned long long)spooldir_hash(real));
	ck_assert_str_eq(sp, want);
	ck_assert_str_eq(note, "");
	/* writable by others: the state directory's rule */
	ck_assert_int_eq(chmod(spool, 0777), 0);
	ck_assert_int_lt(spooldir_setup(spool, 60, dir, sp, sizeof(sp), note,
			     sizeof(note)),
	    0);
	ck_assert_str_eq(sp, "");
	ck_assert_msg(strstr(note, "writable by others"), "%s", note);
	ck_assert_int_eq(rmdir(spool), 0);

	/* on disk: refused, said why */
	ck_assert_int_eq(statfs(dir, &sf), 0);
	if (sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC) {
		snprintf(spool, sizeof(spool), "%s/spool", dir);
		r = spooldir_setup(spool, 60, dir, sp, sizeof(sp), note,
		    sizeof(note));
		ck_assert_int_eq(r, -EXDEV);
		ck_assert_str_eq(sp, "");
		ck_assert_msg(strstr(note, "not on a RAM file system"), "%s",
		    note);
	}
}
END_TEST

static Suite *
statedir_suite(void)
{
	Suite *s = suite_create("statedir");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_db_symlink_refused);
	tcase_add_test(tc, test_side_file_links_refused);
	tcase_add_test(tc, test_db_hard_link_refused);
	tcase_add_test(tc, test_db_kinds);
	tcase_add_test(tc, test_db_path);
	tcase_add_test(tc, test_statedir_checks);
	tcase_add_test(tc, test_spooldir);
	/* other owners and the service user's ids: root only (CI is root) */
	if (tu_root()) {
		tcase_add_test(tc, test_db_owner);
		tcase_add_test(tc, test_statedir_service_ids);
	}
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_root(statedir_suite());
}
