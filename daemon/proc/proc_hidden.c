/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Processes the /proc scan could not see. A procfs mounted with
 * hidepid=2 (invisible) or 4 (ptraceable) lists only the processes the
 * reader may ptrace, unless it is in the mount's gid= group (Android's
 * readproc). Without that group a scan is an undercount, and this says by
 * how much instead of letting it pass silently.
 *
 * The other list of every process is the cgroup hierarchy: each process
 * sits in exactly one cgroup of it, and cgroup.procs files are not subject
 * to hidepid. A pid listed there but not by the scan is checked once more:
 * visible in /proc now (born after the scan) is not hidden; kill(pid, 0)
 * failing with ESRCH is gone; anything else (0, EPERM, or EACCES from
 * SELinux) exists and was hidden. Only run when the mount hides, once per
 * window.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "proc/proc.h"

#define CGROUP_DEPTH_MAX 32

const char *
unseen_state_name(unsigned st)
{
	switch (st) {
	case UNSEEN_NOT_REPORTED:
		return "not reported";
	case UNSEEN_NONE_HIDDEN:
		return "nothing hidden";
	case UNSEEN_COUNTED:
		return "counted";
	case UNSEEN_UNKNOWN:
		return "unknown";
	}
	return "?";
}

/* hidepid=VALUE from a super-options field: anything but 0/off hides. */
static bool
opts_hide(const char *opts, size_t len)
{
	const char *p = opts, *end = opts + len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = (size_t)((comma ? comma : end) - p);

		if (n > 8 && !strncmp(p, "hidepid=", 8)) {
			const char *v = p + 8;
			size_t vn = n - 8;

			return !((vn == 1 && v[0] == '0') ||
			    (vn == 3 && !strncmp(v, "off", 3)));
		}
		p += n + 1;
	}
	return false;
}

/*
 * Does the procfs procfd is on hide processes? Its mount is found by
 * mnt_id (fdinfo) in mountinfo, both read through procfd itself. A root
 * that is not a procfs (fixture trees) hides nothing.
 */
int
prochidden_detect(int procfd, bool *ret_hiding)
{
	struct vbuf b = { 0 };
	char path[64];
	const char *p;
	uint64_t mnt_id = 0;
	bool found = false, hiding = false;
	int r;

	snprintf(path, sizeof(path), "self/fdinfo/%d", procfd);
	if ((r = read_at(procfd, path, &b)) < 0) {
		vbuf_release(&b);
		*ret_hiding = false;
		return r == -ENOENT || r == -ENOTDIR ? 0 : r;
	}
	if ((p = strstr(b.p, "mnt_id:")) == NULL) {
		vbuf_release(&b);
		return -EBADMSG;
	}
	for (p += 7; *p == ' ' || *p == '\t'; p++)
		;
	for (; *p >= '0' && *p <= '9'; p++)
		mnt_id = mnt_id * 10 + (uint64_t)(*p - '0');
	if ((r = read_at(procfd, "self/mountinfo", &b)) < 0) {
		vbuf_release(&b);
		return r;
	}
	/* "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] - FSTYPE SRC SUPER" */
	for (p = b.p; p && *p && !found;) {
		const char *eol = strchr(p, '\n'), *sep, *f;
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		uint64_t id = 0;

		for (f = p; *f >= '0' && *f <= '9'; f++)
			id = id * 10 + (uint64_t)(*f - '0');
		sep = memmem(p, len, " - ", 3);
		if (id == mnt_id && sep) {
			const char *fs = sep + 3, *end = p + len;
			const char *src = memchr(fs, ' ', (size_t)(end - fs));
			const char *opts = src ?
			    memchr(src + 1, ' ', (size_t)(end - src - 1)) :
			    NULL;

			found = true;
			if (src && (size_t)(src - fs) == 4 &&
			    !strncmp(fs, "proc", 4) && opts)
				hiding = opts_hide(opts + 1,
				    (size_t)(end - opts - 1));
		}
		p = eol ? eol + 1 : NULL;
	}
	vbuf_release(&b);
	*ret_hiding = hiding;
	return found ? 0 : -ENOENT;
}

/*
 * The root of a cgroup hierarchy every process is in: v2 (Android, unified
 * hosts) or the hybrid layout's v2 or named hierarchy, else one v1
 * controller. An O_DIRECTORY fd, or -errno.
 */
int
prochidden_cgroup_open(const char *sys_root)
{
	static const char *const cand[] = { "fs/cgroup", "fs/cgroup/unified",
		"fs/cgroup/systemd", "fs/cgroup/pids", "fs/cgroup/cpu",
		"fs/cgroup/memory" };
	char path[4096];
	size_t i;
	int fd, r = -ENOENT;

	for (i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		if (snprintf(path, sizeof(path), "%s/%s", sys_root, cand[i]) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		if (faccessat(fd, "cgroup.procs", R_OK, 0) == 0)
			return fd;
		r = -errno;
		close(fd);
	}
	return r;
}

struct walk {
	int procfd;
	bool (*seen)(int32_t pid, void *arg);
	void *arg;
	uint32_t unseen;
	struct vbuf buf;
};

/* Not in the scan: hidden, or born since, or gone since? */
static bool
hidden(const struct walk *wk, int32_t pid)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", pid);
	if (faccessat(wk->procfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return false; /* visible: it started after the scan */
	/* EPERM: another user's; EACCES: SELinux said no (signull) */
	return kill(pid, 0) == 0 || errno != ESRCH;
}

static int
walk_dir(struct walk *wk, int dfd, unsigned depth)
{
	struct dirent *de;
	const char *p;
	int fd, r;
	DIR *d;

	if ((r = read_at(dfd, "cgroup.procs", &wk->buf)) < 0)
		return r == -ENOENT || r == -ENODEV ? 0 : r; /* rmdir'd */
	for (p = wk->buf.p; p && p < wk->buf.p + wk->buf.len;) {
		uint64_t v = 0;

		for (; *p >= '0' && *p <= '9'; p++)
			v = v * 10 + (uint64_t)(*p - '0');
		/* 0: a process of another pid namespace */
		if (v > 0 && v <= INT32_MAX && !wk->seen((int32_t)v, wk->arg) &&
		    hidden(wk, (int32_t)v))
			wk->unseen++;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (depth >= CGROUP_DEPTH_MAX)
		return 0;
	if ((fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d)) != NULL) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (sub < 0)
			continue; /* removed since readdir */
		r = walk_dir(wk, sub, depth + 1);
		close(sub);
		if (r < 0)
			break;
	}
	closedir(d);
	return r < 0 ? r : 0;
}

/* Processes in the hierarchy at cgfd that seen() does not know and that
 * /proc (procfd) does not show either. */
int
prochidden_count(int cgfd, int procfd, bool (*seen)(int32_t pid, void *arg),
    void *arg, uint32_t *ret_unseen)
{
	struct walk wk = { .procfd = procfd, .seen = seen, .arg = arg };
	int r;

	r = walk_dir(&wk, cgfd, 0);
	vbuf_release(&wk.buf);
	if (r < 0)
		return r;
	*ret_unseen = wk.unseen;
	return 0;
}
