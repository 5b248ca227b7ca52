/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The privilege drop between the setup phase and the loop (doc/privileges.md).
 *
 * Order matters: supplementary groups, gid and uid change while
 * PR_SET_KEEPCAPS holds the permitted set; the kept capabilities are then
 * the only permitted and effective ones, every other one leaves the bounding
 * set, the ambient set is cleared, securebits lock root's special cases
 * out and no_new_privs is set. What the kernel then reports is checked
 * against what was asked, and the daemon does not run if anything differs.
 *
 * No libcap: capget/capset and prctl are called directly.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <pwd.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/log.h"
#include "core/caps.h"
#include "core/util.h"
#include "privs/privs.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_IS_SET 1
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* The state after privs_drop (or as read at startup without a drop). */
static struct privs_state privs_now;

const char *
privs_seccomp_name(unsigned mode)
{
	switch (mode) {
	case PRIVS_SECCOMP_OFF:
		return "off";
	case PRIVS_SECCOMP_ON:
		return "on";
	case PRIVS_SECCOMP_LOG:
		return "log";
	}
	return "?";
}

static int
resolve_group(const char *name, size_t len, uint32_t *ret)
{
	char buf[64];
	struct group *gr;
	uint64_t v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (parse_uint(buf, UINT32_MAX - 1, &v) == 0) {
		*ret = (uint32_t)v;
		return 0;
	}
	errno = 0;
	if ((gr = getgrnam(buf)) == NULL)
		return errno ? -errno : -ENOENT;
	*ret = (uint32_t)gr->gr_gid;
	return 0;
}

/*
 * Names to ids, before the setup phase so that a typo stops the start.
 * user: a name from the passwd database (its primary group comes with it)
 * or a number (primary group: the same number, as Android's AIDs have it);
 * NULL: no drop. groups: supplementary groups, names or numbers.
 */
int
privs_resolve(const char *user, const char *groups, uint64_t keep,
    unsigned seccomp, struct privs_req *ret, char *err, size_t errsz)
{
	struct privs_req rq = { .keep = keep, .seccomp = seccomp };
	struct passwd *pw;
	bool have_gid = false;
	uint64_t v;
	int r;

	if (user == NULL) {
		if (groups != NULL) {
			snprintf(err, errsz, "group is set but user is not");
			return -EINVAL;
		}
		*ret = rq;
		return 0;
	}
	rq.drop = true;
	snprintf(rq.user, sizeof(rq.user), "%s", user);
	if (parse_uint(user, UINT32_MAX - 1, &v) == 0) {
		rq.uid = (uint32_t)v;
	} else {
		errno = 0;
		if ((pw = getpwnam(user)) == NULL) {
			snprintf(err, errsz, "user %s: %s", user,
			    errno ? strerror(errno) : "no such user");
			return errno ? -errno : -ENOENT;
		}
		rq.uid = (uint32_t)pw->pw_uid;
		rq.gid = (uint32_t)pw->pw_gid;
		have_gid = true;
	}
	if (rq.uid == 0) {
		snprintf(err, errsz, "user %s is root: nothing to drop to",
		    user);
		return -EINVAL;
	}
	while (groups && *groups) {
		size_t n;

		groups += strspn(groups, ", \t");
		if ((n = strcspn(groups, ", \t")) == 0)
			break;
		if (rq.ngroups == VITALS_PRIVS_GROUPS) {
			snprintf(err, errsz, "more than %d groups",
			    VITALS_PRIVS_GROUPS);
			return -ERANGE;
		}
		if ((r = resolve_group(groups, n, &rq.groups[rq.ngroups])) <
		    0) {
			snprintf(err, errsz, "group %.*s: %s", (int)n, groups,
			    r == -ENOENT ? "no such group" : strerror(-r));
			return r;
		}
		if (rq.groups[rq.ngroups] == 0) {
			snprintf(err, errsz, "group %.*s is root's", (int)n,
			    groups);
			return -EINVAL;
		}
		rq.ngroups++;
		groups += n;
	}
	if (!have_gid)
		rq.gid = rq.uid;
	if (rq.gid == 0) {
		snprintf(err, errsz, "user %s has group 0 (root)", user);
		return -EINVAL;
	}
	*ret = rq;
	return 0;
}

static int
cap_get(uint64_t *ret_eff, uint64_t *ret_prm, uint64_t *ret_inh)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct c[2];

	memset(c, 0, sizeof(c));
	if (syscall(SYS_capget, &h, c) < 0)
		return -errno;
	*ret_eff = c[0].effective | (uint64_t)c[1].effective << 32;
	*ret_prm = c[0].permitted | (uint64_t)c[1].permitted << 32;
	*ret_inh = c[0].inheritable | (uint64_t)c[1].inheritable << 32;
	return 0;
}

static int
cap_set(uint64_t eff, uint64_t prm, uint64_t inh)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct c[2] = {
		{ (uint32_t)eff, (uint32_t)prm, (uint32_t)inh },
		{ (uint32_t)(eff >> 32), (uint32_t)(prm >> 32),
		    (uint32_t)(inh >> 32) },
	};

	return syscall(SYS_capset, &h, c) < 0 ? -errno : 0;
}

/* The highest capability this kernel knows. */
static unsigned
cap_last(void)
{
	unsigned cap;

	/* PR_CAPBSET_READ fails with EINVAL past the last one. */
	for (cap = 0; cap < CAPS_MAX - 1; cap++)
		if (prctl(PR_CAPBSET_READ, cap + 1, 0, 0, 0) < 0)
			break;
	return cap;
}

/*
 * Before Linux 6.5 every bpf() command, reading a map by fd included, is
 * refused without CAP_BPF (CAP_SYS_ADMIN before 5.8) when
 * kernel.unprivileged_bpf_disabled is set; from 6.5 only map and program
 * creation are. Asked of the kernel rather than guessed from its version:
 * a lookup on fd -1 fails with EBADF where the command is open to us and
 * with EPERM where it is not. Called with an empty effective set.
 */
static bool
bpf_gated(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)-1;
	return syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) < 0 &&
	    errno == EPERM;
}

/* What the kernel says this process runs with. */
static int
privs_read(struct privs_state *ret)
{
	struct privs_state st = { 0 };
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	gid_t g[VITALS_PRIVS_GROUPS];
	unsigned cap, last = cap_last();
	int n, r;

	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -errno;
	if (ru != eu || eu != su || rg != eg || eg != sg)
		return -EPERM; /* a split identity: not what the drop made */
	st.uid = (uint32_t)ru;
	st.gid = (uint32_t)rg;
	if ((n = getgroups(VITALS_PRIVS_GROUPS, g)) < 0)
		return -errno;
	for (st.ngroups = 0; st.ngroups < (uint32_t)n; st.ngroups++)
		st.groups[st.ngroups] = (uint32_t)g[st.ngroups];
	if ((r = cap_get(&st.cap_eff, &st.cap_prm, &st.cap_inh)) < 0)
		return r;
	for (cap = 0; cap <= last; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
			st.cap_bnd |= 1ull << cap;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) ==
		    1)
			st.cap_amb |= 1ull << cap;
	}
	st.no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
	*ret = st;
	return 0;
}

/*
 * The threads setup started (the store writer, the query thread) have
 * per-thread credentials: bounding set, securebits, no_new_privs and
 * KEEPCAPS, and to the kernel the uids and groups too. glibc's setresuid
 * changes the ids in every thread; bionic's only in the caller's. So each
 * thread is asked, by a signal, to trim its own state while still root
 * and then to switch its own ids with the system calls (compat.h): the
 * same on both libcs. The switch leaves it no capability at all (it never
 * had KEEPCAPS), so the kept ones are the loop thread's alone.
 */
#define PRIVS_SECBITS                                                    \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | \
	    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED)

static sem_t thr_ack;
static volatile sig_atomic_t thr_fail;
static uint64_t thr_keep;
static const struct privs_req *thr_req; /* the ids each thread takes */
static gid_t thr_groups[VITALS_PRIVS_GROUPS];

static void
thread_trim_cb(int sig)
{
	int saved = errno;
	unsigned cap;

	uint64_t eff, prm, inh;

	(void)sig;
	for (cap = 0; cap < CAPS_MAX; cap++)
		if (!(thr_keep & (1ull << cap)) &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			thr_fail = 1;
	/* the uid change empties permitted and effective, never the
	 * inheritable set: Android init fills it (and the ambient set)
	 * with the rc's capabilities, so it is emptied here */
	if (cap_get(&eff, &prm, &inh) < 0 || (inh && cap_set(eff, prm, 0) < 0))
		thr_fail = 1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		thr_fail = 1;
	/* not NO_SETUID_FIXUP here: the uid change must empty this thread */
	if (prctl(PR_SET_SECUREBITS,
		SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED,
		0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		thr_fail = 1;
	if (compat_thread_setids((uid_t)thr_req->uid, (gid_t)thr_req->gid,
		thr_req->ngroups, thr_groups) < 0)
		thr_fail = 1;
	sem_post(&thr_ack);
	errno = saved;
}

static int
trim_threads(uint64_t keep, const struct privs_req *req)
{
	struct sigaction sa = { .sa_handler = thread_trim_cb }, old;
	int sig = SIGRTMIN + 3, n = 0, r = 0;
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct dirent *de;
	DIR *d;

	if ((d = opendir("/proc/self/task")) == NULL)
		return -errno;
	thr_keep = keep;
	thr_req = req;
	for (n = 0; n < (int)req->ngroups; n++)
		thr_groups[n] = (gid_t)req->groups[n];
	n = 0;
	thr_fail = 0;
	sem_init(&thr_ack, 0, 0);
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) < 0) {
		r = -errno;
		closedir(d);
		return r;
	}
	while ((de = readdir(d)) != NULL) {
		uint64_t tid;

		if (parse_uint(de->d_name, INT32_MAX, &tid) < 0 ||
		    (pid_t)tid == self)
			continue;
		if (syscall(SYS_tgkill, getpid(), (pid_t)tid, sig) == 0)
			n++;
		else if (errno != ESRCH)
			r = -errno;
	}
	closedir(d);
	while (n-- > 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 5;
		if (sem_timedwait(&thr_ack, &ts) < 0) {
			r = -ETIMEDOUT;
			break;
		}
	}
	sigaction(sig, &old, NULL);
	sem_destroy(&thr_ack);
	if (r == 0 && thr_fail)
		r = -EPERM;
	return r;
}

/* "Key:\t..." of /proc/self/task/<tid>/status, as hex or as the first
 * decimal; false when absent. */
static bool
task_field(const char *status, const char *key, bool hex, uint64_t *ret)
{
	size_t kl = strlen(key);
	const char *p = status;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			*ret = strtoull(p + kl + 1, NULL, hex ? 16 : 10);
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

/* Every other thread: the uid, no capability, no_new_privs, the bounding
 * set trimmed. */
static int
verify_threads(const struct privs_req *req, uint64_t keep)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct vbuf b = { 0 };
	struct dirent *de;
	int r = 0;
	DIR *d;

	if ((d = opendir("/proc/self/task")) == NULL)
		return -errno;
	while (r == 0 && (de = readdir(d)) != NULL) {
		uint64_t tid, v, eff = 1, prm = 1, inh = 1, amb = 1,
				 bnd = ~0ull, nnp = 0;
		char path[64];

		if (parse_uint(de->d_name, INT32_MAX, &tid) < 0 ||
		    (pid_t)tid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%u/status",
		    (unsigned)tid);
		if (read_at(AT_FDCWD, path, &b) < 0)
			continue; /* exited */
		if (!task_field(b.p, "Uid", false, &v) || v != req->uid ||
		    !task_field(b.p, "CapEff", true, &eff) ||
		    !task_field(b.p, "CapPrm", true, &prm) ||
		    !task_field(b.p, "CapInh", true, &inh) ||
		    !task_field(b.p, "CapBnd", true, &bnd) ||
		    !task_field(b.p, "NoNewPrivs", false, &nnp) || eff || prm ||
		    inh || (bnd & ~keep) || nnp != 1 ||
		    (task_field(b.p, "CapAmb", true, &amb) && amb))
			r = -EPERM;
	}
	closedir(d);
	vbuf_release(&b);
	return r;
}

/* Every check of the drop's outcome; the first that fails names itself. */
static int
verify(const struct privs_req *req, uint64_t keep, struct privs_state *st,
    const char **ret_what)
{
	uint32_t i;
	int r;

	if ((r = privs_read(st)) < 0) {
		*ret_what = "uid/gid not the same in real, effective, saved";
		return r;
	}
	*ret_what = "uid or gid";
	if (st->uid != req->uid || st->gid != req->gid)
		return -EPERM;
	*ret_what = "supplementary groups";
	if (st->ngroups != req->ngroups)
		return -EPERM;
	/* the kernel keeps them sorted: "readproc,readtracefs" (3009,
	 * 1093) reads back as 1093,3009; every asked one must be there */
	for (i = 0; i < req->ngroups; i++) {
		uint32_t j;

		for (j = 0; j < st->ngroups; j++)
			if (st->groups[j] == req->groups[i])
				break;
		if (j == st->ngroups)
			return -EPERM;
	}
	*ret_what = "capability sets";
	if (st->cap_eff != keep || st->cap_prm != keep || st->cap_inh != 0 ||
	    (st->cap_bnd & ~keep) != 0 || st->cap_amb != 0)
		return -EPERM;
	*ret_what = "no_new_privs";
	if (!st->no_new_privs)
		return -EPERM;
	*ret_what = "another thread kept privileges";
	if ((r = verify_threads(req, keep)) < 0)
		return r;
	/* The point of it all: root cannot come back. */
	*ret_what = "setuid(0) succeeded";
	if (setuid(0) == 0 || errno != EPERM)
		return -EPERM;
	*ret_what = NULL;
	return 0;
}

/*
 * Drop to req's user and groups keeping req->keep (and CAP_BPF where the
 * kernel needs it for the fds held, see bpf_gated), then no_new_privs,
 * then the seccomp filter when asked. Without a user only the seccomp
 * filter (and no_new_privs with it) applies. -errno (logged) on any
 * failure: the caller must not run.
 */
int
privs_drop(const struct privs_req *req, struct privs_state *ret)
{
	struct privs_state st = { 0 };
	uint64_t keep = req->keep, eff, prm, inh, setpcap;
	const char *what = NULL;
	gid_t g[VITALS_PRIVS_GROUPS];
	unsigned cap, last;
	uint32_t i;
	int r;

	if (!req->drop)
		goto filter;
	if (geteuid() != 0) {
		log_warnx("privileges: user %s configured but not started as "
			  "root",
		    req->user);
		return -EPERM;
	}
	last = cap_last();
	/* Setup's threads first, while they are root (see trim_threads). */
	if ((r = trim_threads(keep, req)) < 0) {
		log_warnx("privileges: trimming the other threads: %s",
		    strerror(-r));
		return r;
	}
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) {
		log_warn("privileges: PR_SET_KEEPCAPS");
		return -errno;
	}
	for (i = 0; i < req->ngroups; i++)
		g[i] = (gid_t)req->groups[i];
	/* this thread's own ids: the others switched theirs above */
	if ((r = compat_thread_setids((uid_t)req->uid, (gid_t)req->gid,
		 req->ngroups, g)) < 0) {
		errno = -r;
		log_warn("privileges: switching to uid %u gid %u", req->uid,
		    req->gid);
		return r;
	}
	/* The effective set is empty now: ask the kernel what bpf() needs. */
	if (req->need_bpf && bpf_gated()) {
		st.cap_auto = 1ull
		    << (last >= CAP_BPF ? CAP_BPF : CAP_SYS_ADMIN);
		keep |= st.cap_auto;
	}
	if ((r = cap_get(&eff, &prm, &inh)) < 0)
		return r;
	if ((keep & ~prm) != 0) {
		char miss[256];

		caps_format(keep & ~prm, miss, sizeof(miss));
		log_warnx("privileges: capabilities to keep were never held: "
			  "%s",
		    miss);
		return -EPERM;
	}
	/* CAP_SETPCAP only for as long as the bounding set takes. */
	setpcap = 1ull << CAP_SETPCAP;
	if ((r = cap_set(keep | setpcap, keep | setpcap, 0)) < 0) {
		log_warnx("privileges: capset: %s", strerror(-r));
		return r;
	}
	for (cap = 0; cap <= last; cap++) {
		if (keep & (1ull << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EINVAL) {
			r = -errno;
			log_warn("privileges: dropping %s from the bounding "
				 "set",
			    caps_name(cap));
			return r;
		}
	}
	/* Root's special cases off for good, then the last CAP_SETPCAP. */
	if (prctl(PR_SET_SECUREBITS, PRIVS_SECBITS, 0, 0, 0) < 0) {
		r = -errno;
		log_warn("privileges: securebits");
		return r;
	}
	if ((prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
		errno != EINVAL) ||
	    (r = cap_set(keep, keep, 0)) < 0) {
		r = r < 0 ? r : -errno;
		log_warnx("privileges: final capability sets: %s",
		    strerror(-r));
		return r;
	}
filter:
	if (req->drop || req->seccomp != PRIVS_SECCOMP_OFF) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
			r = -errno;
			log_warn("privileges: no_new_privs");
			return r;
		}
	}
	if (req->drop && (r = verify(req, keep, &st, &what)) < 0) {
		log_warnx("privileges: check after the drop failed: %s", what);
		return r;
	}
	if (!req->drop && (r = privs_read(&st)) < 0)
		return r;
	st.dropped = req->drop;
	st.verified = req->drop;
	snprintf(st.user, sizeof(st.user), "%s", req->drop ? req->user : "");
	if (req->seccomp != PRIVS_SECCOMP_OFF) {
		if ((r = seccomp_install(req->seccomp, req->need_inet,
			 &st.seccomp_rules)) < 0) {
			log_warnx("privileges: seccomp filter: %s",
			    strerror(-r));
			return r;
		}
		st.seccomp = req->seccomp;
	}
	privs_now = st;
	if (ret)
		*ret = st;
	return 0;
}

void
privs_get(struct privs_state *ret)
{
	*ret = privs_now;
}

/* One line: who the daemon runs as and what it kept. */
void
privs_log(const struct privs_state *st)
{
	char eff[512], bnd[512], grp[256];
	size_t len = 0;
	uint32_t i;

	caps_format(st->cap_eff, eff, sizeof(eff));
	caps_format(st->cap_bnd, bnd, sizeof(bnd));
	grp[0] = '\0';
	for (i = 0; i < st->ngroups && len < sizeof(grp); i++)
		len += (size_t)snprintf(grp + len, sizeof(grp) - len, "%s%u",
		    i ? "," : "", st->groups[i]);
	log_info("privileges: %s%s uid %u gid %u groups %s; capabilities "
		 "%s%s (bounding %s); no_new_privs %s; seccomp %s%s",
	    st->dropped ? "dropped to " : "not dropped (no user configured),",
	    st->dropped ? st->user : "", st->uid, st->gid,
	    st->ngroups ? grp : "none", eff,
	    st->cap_auto ? " (bpf() needs it on this kernel)" : "", bnd,
	    st->no_new_privs ? "on" : "off", privs_seccomp_name(st->seccomp),
	    st->verified ? "; verified" : "");
}
