/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd's trace files expire: a session's trace and log under
 * <state_dir>/heapprofd go when they are older than
 * heapprofd_trace_max_age_s, and the oldest sessions' go while all of them
 * together pass heapprofd_trace_max_bytes. The running session's files
 * are never touched, nor the newest session's by the size bound. What was removed, and what could not be, is counted
 * in health. A pass runs at setup, after every session and once an hour
 * at a window close; it reads one directory of at most a few hundred
 * entries (the budgets bound the sessions). doc/heapprofd.md, "Trace
 * files".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "hp/hp.h"
#include "hp_int.h"

#define EXPIRE_SESSIONS_MAX 65536 /* per pass; more wait for the next */

static int
by_id(const void *a, const void *b)
{
	const struct hp_trace_file *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

void
hp_expire_plan(struct hp_trace_file *f, size_t n, int64_t now_wall_ns,
    uint32_t max_age_s, uint64_t max_bytes, int64_t keep_id,
    enum hp_expire_why *ret_why)
{
	int64_t cut = now_wall_ns - (int64_t)max_age_s * NSEC_PER_SEC;
	uint64_t total = 0;
	size_t i;

	if (n)
		qsort(f, n, sizeof(*f), by_id);
	for (i = 0; i < n; i++) {
		ret_why[i] = HP_EXPIRE_KEEP;
		if (f[i].id != keep_id && max_age_s && f[i].mtime_ns < cut)
			ret_why[i] = HP_EXPIRE_AGE;
		else
			total += f[i].bytes;
	}
	/* oldest first, until what is left fits; the newest session's
	 * files stay (the result a caller is about to pull) */
	for (i = 0; i + 1 < n && max_bytes && total > max_bytes; i++) {
		if (ret_why[i] != HP_EXPIRE_KEEP || f[i].id == keep_id)
			continue;
		ret_why[i] = HP_EXPIRE_SIZE;
		total -= f[i].bytes;
	}
}

/* "session-<id>.pftrace" or "session-<id>.log": the id; 0 another name */
static int64_t
file_id(const char *name)
{
	char *end;
	long long id;

	if (strncmp(name, "session-", 8) != 0)
		return 0;
	errno = 0;
	id = strtoll(name + 8, &end, 10);
	if (errno || id <= 0 || end == name + 8 ||
	    (strcmp(end, ".pftrace") != 0 && strcmp(end, ".log") != 0))
		return 0;
	return id;
}

static struct hp_trace_file *
slot(struct hp_trace_file **v, size_t *n, size_t *cap, int64_t id)
{
	struct hp_trace_file *nv;
	size_t i, c;

	for (i = *n; i-- > 0;) /* the two files of one id come close */
		if ((*v)[i].id == id)
			return &(*v)[i];
	if (*n == EXPIRE_SESSIONS_MAX)
		return NULL;
	if (*n == *cap) {
		c = *cap ? *cap * 2 : 64;
		if ((nv = realloc(*v, c * sizeof(*nv))) == NULL)
			return NULL;
		*v = nv;
		*cap = c;
	}
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].id = id;
	return &(*v)[(*n)++];
}

static int
list_dir(int dfd, struct hp_trace_file **ret, size_t *ret_n)
{
	struct hp_trace_file *v = NULL, *s;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int fd;

	if ((fd = dup(dfd)) < 0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		int64_t id = file_id(de->d_name), mt;

		if (id == 0 ||
		    fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(sb.st_mode) ||
		    (s = slot(&v, &n, &cap, id)) == NULL)
			continue;
		mt = (int64_t)sb.st_mtim.tv_sec * NSEC_PER_SEC +
		    sb.st_mtim.tv_nsec;
		if (mt > s->mtime_ns)
			s->mtime_ns = mt;
		s->bytes += (uint64_t)sb.st_size;
		s->nfiles++;
	}
	closedir(d);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Both files of session f: removed ones counted by why, failures too. */
static void
remove_session(struct heapprofd *hp, int dfd, const struct hp_trace_file *f,
    enum hp_expire_why why)
{
	static const char *const ext[] = { "pftrace", "log" };
	struct hp_stats *st = &hp->st;
	char name[64];
	struct stat sb;
	unsigned i;

	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "session-%lld.%s",
		    (long long)f->id, ext[i]);
		if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (unlinkat(dfd, name, 0) < 0) {
			st->expire_errors++;
			continue;
		}
		st->expired_bytes += (uint64_t)sb.st_size;
		if (why == HP_EXPIRE_AGE)
			st->expired_age_files++;
		else
			st->expired_size_files++;
	}
}

/* One pass over the directory. */
void
hp_expire_run(struct heapprofd *hp)
{
	const struct hp_settings *hs = hp->hs;
	struct hp_trace_file *f = NULL;
	enum hp_expire_why *why = NULL;
	char dir[512];
	size_t n = 0, i;
	uint64_t bytes = 0;
	unsigned files = 0;
	int dfd, e;

	hp->expired_mono_ns = clock_ns(CLOCK_MONOTONIC);
	if (snprintf(dir, sizeof(dir), "%s/heapprofd", hp->state_dir) >=
	    (int)sizeof(dir))
		return;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) <
	    0) {
		if (errno != ENOENT)
			hp->st.expire_errors++;
		return;
	}
	if ((e = list_dir(dfd, &f, &n)) < 0 ||
	    (n && (why = calloc(n, sizeof(*why))) == NULL)) {
		hp->st.expire_errors++;
		log_warnx("heapprofd: %s: trace expiry: %s", dir,
		    strerror(e < 0 ? -e : ENOMEM));
		goto out;
	}
	hp_expire_plan(f, n, hp_wall_now(), hs->trace_max_age_s,
	    hs->trace_max_bytes, hp->running ? hp->rec.id : 0, why);
	for (i = 0; i < n; i++) {
		if (why[i] == HP_EXPIRE_KEEP) {
			files += f[i].nfiles;
			bytes += f[i].bytes;
			continue;
		}
		remove_session(hp, dfd, &f[i], why[i]);
	}
	hp->st.trace_files = files;
	hp->st.trace_bytes = bytes;
out:
	free(f);
	free(why);
	close(dfd);
}

/* At a window close: a pass when the last is an hour old. */
void
hp_expire_tick(struct heapprofd *hp)
{
	if (clock_ns(CLOCK_MONOTONIC) - hp->expired_mono_ns >=
	    3600 * NSEC_PER_SEC)
		hp_expire_run(hp);
}
