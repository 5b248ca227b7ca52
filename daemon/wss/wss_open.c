/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the working-set monitor opens a target's /proc files and the
 * page_idle bitmap. The kernel checks these files when they are opened,
 * with the opener's credentials (doc/wss.md, Privileges): after the drop
 * to the service user the daemon can no longer open another user's maps,
 * smaps, pagemap or clear_refs, nor see PFNs, nor open the bitmap. With
 * the privileged helper on (privhelper.c) every such open goes through it,
 * checked against the target's starttime; without it, directly, and what
 * that costs is said at startup, in Health.wss.access, in each target's
 * files and counted (opens refused).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "privs/privs.h"
#include "wss/wss.h"
#include "wss_int.h"

static const char *const wss_files[PH_FILE__MAX] = {
	[PH_FILE_MAPS] = "maps",
	[PH_FILE_SMAPS] = "smaps",
	[PH_FILE_PAGEMAP] = "pagemap",
	[PH_FILE_CLEAR_REFS] = "clear_refs",
};

#define CAP(c) (1ull << (c))

/*
 * Decide (at setup, still privileged) how the monitor will open files
 * after the drop, and say what a drop without the helper loses.
 */
void
wss_access_setup(struct wss *w, const struct wss_opts *o)
{
	struct privhelper *ph = privhelper_get();
	uint64_t k = o->keep_caps;
	bool pfn, others;

	if (ph != NULL) {
		w->helper = true;
		snprintf(w->access, sizeof(w->access),
		    "privileged helper "
		    "(pid %d): PFNs and other users' targets readable",
		    (int)privhelper_pid(ph));
	} else if (o->user == NULL) {
		snprintf(w->access, sizeof(w->access),
		    "direct, with the "
		    "daemon's own credentials (uid %u, no drop)",
		    (unsigned)geteuid());
	} else {
		/* what the kernel checks at open (doc/wss.md, Privileges) */
		pfn = (k & CAP(CAP_SYS_ADMIN)) != 0;
		others = (k & CAP(CAP_SYS_PTRACE)) &&
		    (k & CAP(CAP_DAC_READ_SEARCH)) &&
		    (k & CAP(CAP_DAC_OVERRIDE));
		w->weak = !pfn || !others;
		if (!w->weak)
			snprintf(w->access, sizeof(w->access),
			    "direct as "
			    "user %s, keeping CAP_SYS_ADMIN, CAP_SYS_PTRACE "
			    "and CAP_DAC_*",
			    o->user);
		else
			snprintf(w->access, sizeof(w->access),
			    "direct as "
			    "user %s without the privileged helper:%s%s",
			    o->user,
			    pfn ? "" :
				  " page-level unavailable "
				  "(PFNs need CAP_SYS_ADMIN);",
			    others ? "" : " other users' targets unreadable");
	}
	if (w->weak && w->cfg.nrules)
		log_warnx("wss: %u rules configured, but files are opened %s "
			  "(privhelper = on lifts this; doc/privileges.md)",
		    w->cfg.nrules, w->access);
	else
		log_info("wss: files opened %s", w->access);
}

const char *
wss_access(const struct wss *w, uint64_t *ret_denied)
{
	if (ret_denied)
		*ret_denied = w->denied;
	return w->access;
}

/*
 * One of the target's files, through the helper when there is one (it
 * checks the starttime after its open: -ESRCH for a reused pid), directly
 * otherwise or when the helper failed. t->st.files says which.
 */
int
wss_open(struct target *t, enum privhelper_file which, int *ret_fd)
{
	struct privhelper *ph = privhelper_get();
	struct wss *w = t->w;
	char path[48];
	int fd, r, herr = 0;

	if (which >= PH_FILE__MAX)
		return -EINVAL;
	if (ph != NULL) {
		r = privhelper_open(ph, t->st.pid, t->st.starttime, which, &fd);
		if (r == 0) {
			snprintf(t->st.files, sizeof(t->st.files),
			    "privileged helper");
			*ret_fd = fd;
			return 0;
		}
		if (r == -ESRCH || r == -ENOENT)
			return r; /* gone, or another process now */
		herr = r; /* the helper itself failed: direct, said so */
	}
	snprintf(path, sizeof(path), "%d/%s", (int)t->st.pid, wss_files[which]);
	fd = openat(w->procfd, path,
	    (which == PH_FILE_CLEAR_REFS ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -EACCES || r == -EPERM)
			w->denied++;
		return r;
	}
	if (herr)
		snprintf(t->st.files, sizeof(t->st.files),
		    "direct (helper: "
		    "%s)",
		    strerror(-herr));
	else
		snprintf(t->st.files, sizeof(t->st.files), "direct");
	*ret_fd = fd;
	return 0;
}

int
wss_read(struct target *t, enum privhelper_file which, struct vbuf *b)
{
	int fd, r;

	if ((r = wss_open(t, which, &fd)) < 0)
		return r;
	r = read_fd_all(fd, b);
	close(fd);
	return r;
}

/* The page_idle bitmap (once, at setup): the helper's, else our own. */
int
wss_open_bitmap(struct wss *w, const char *sys_root)
{
	struct privhelper *ph = privhelper_get();
	char path[4096];
	int fd;

	if (ph != NULL && privhelper_page_idle(ph, &fd) == 0) {
		w->bmfd = fd;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/kernel/mm/page_idle/bitmap", sys_root);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		w->bm_err = -errno;
		if (w->bm_err == -EACCES || w->bm_err == -EPERM)
			w->denied++;
		return w->bm_err;
	}
	w->bmfd = fd;
	return 0;
}
