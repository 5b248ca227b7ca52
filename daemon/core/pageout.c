/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Start-up code given back: pageout.h says why. The smaps text is parsed
 * in two passes over its mappings: the first reads each one's header and
 * Anonymous line, the second takes the read-only private ranges of the
 * files that have an executable mapping.
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/maps.h"
#include "core/memstat.h"
#include "core/pageout.h"
#include "core/util.h"
#include "core/worker.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21 /* Linux 5.4 */
#endif

#define PAGEOUT_RANGES_MAX 512

/* An smaps field line ("Anonymous:      4 kB"): its name's length, 0
 * when the line is not one. */
static size_t
field_name(const char *p, const char *eol)
{
	const char *q = p;

	while (q < eol &&
	    ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
		(*q >= '0' && *q <= '9') || *q == '_'))
		q++;
	return q > p && q < eol && *q == ':' ? (size_t)(q - p) : 0;
}

struct pline {
	struct maps_line m;
	bool anon_known;
	uint64_t anon;
};

int
pageout_parse(const char *buf, size_t len, struct pageout_range *r, size_t max,
    size_t *ret_n)
{
	const char *end = buf + len, *p;
	struct pline *l = NULL;
	size_t nl = 0, cap = 0, i, j, n = 0;
	int ret = 0;

	for (p = buf; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		const char *eol = e ? e : end;
		size_t fl;

		if (eol == p) {
			p = e ? e + 1 : end;
			continue;
		}
		if (nl > 0 && (fl = field_name(p, eol)) > 0) {
			/* an smaps field of the mapping above */
			if (fl == sizeof("Anonymous") - 1 &&
			    memcmp(p, "Anonymous", fl) == 0) {
				if (memstat_field_value(p + fl + 1, eol, true,
					&l[nl - 1].anon) < 0) {
					ret = -EINVAL;
					goto out;
				}
				l[nl - 1].anon_known = true;
			}
			p = e ? e + 1 : end;
			continue;
		}
		if (nl == cap) {
			struct pline *nb;

			cap = cap ? cap * 2 : 64;
			if ((nb = realloc(l, cap * sizeof(*l))) == NULL) {
				ret = -ENOMEM;
				goto out;
			}
			l = nb;
		}
		if (!maps_line_parse(p, eol, &l[nl].m)) {
			ret = -EINVAL;
			goto out;
		}
		l[nl].anon_known = false;
		l[nl].anon = 0;
		nl++;
		p = e ? e + 1 : end;
	}
	for (i = 0; i < nl; i++) {
		const struct maps_line *m = &l[i].m;
		bool exec_file = false;

		/* a file's path, private, not writable */
		if (m->plen == 0 || m->path[0] != '/' || m->perms[1] == 'w' ||
		    m->perms[3] != 'p')
			continue;
		for (j = 0; j < nl && !exec_file; j++)
			exec_file = l[j].m.perms[2] == 'x' &&
			    l[j].m.plen == m->plen &&
			    memcmp(l[j].m.path, m->path, m->plen) == 0;
		if (!exec_file)
			continue;
		if (n < max) {
			r[n].start = (uintptr_t)m->start;
			r[n].end = (uintptr_t)m->end;
			r[n].clean = l[i].anon_known && l[i].anon == 0;
		}
		n++;
	}
	*ret_n = n;
out:
	free(l);
	return ret;
}

/*
 * /proc/self/smaps as pageout_parse reads it: each mapping's header line
 * and its Anonymous line, the other ~25 field lines a mapping has left
 * out as they are read. The whole text (~0.9 KiB a mapping, ~0.1 MiB
 * for the daemon's) was held in one buffer during each pass; the kept
 * lines are an eighth of it. A line is gathered in line[] across reads;
 * one longer than line[] (a path near PATH_MAX) is refused (-EINVAL)
 * rather than cut.
 */
static bool
kept_line(const char *p, size_t n)
{
	size_t fl = field_name(p, p + n);

	return fl == 0 ||
	    (fl == sizeof("Anonymous") - 1 && memcmp(p, "Anonymous", fl) == 0);
}

static int
keep(struct vbuf *b, const char *line, size_t n)
{
	int r = vbuf_reserve(b, n);

	if (r < 0)
		return r;
	memcpy(b->p + b->len, line, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int
read_smaps(struct vbuf *b)
{
	char chunk[4096], line[PATH_MAX + 256];
	size_t ll = 0;
	ssize_t n;
	int fd, r = 0;

	if ((fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		const char *p = chunk, *end;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		end = chunk + n;
		while (p < end && r == 0) {
			const char *e = memchr(p, '\n', (size_t)(end - p));
			size_t k = (size_t)((e ? e : end) - p);

			if (ll + k + 1 > sizeof(line)) {
				r = -EINVAL;
				break;
			}
			memcpy(line + ll, p, k);
			ll += k;
			p += k;
			if (e == NULL)
				break; /* the rest comes with the next read */
			line[ll++] = '\n';
			p++;
			if (kept_line(line, ll - 1))
				r = keep(b, line, ll);
			ll = 0;
		}
		if (r < 0)
			break;
	}
	close(fd);
	if (r == 0 && ll > 0 && kept_line(line, ll))
		r = keep(b, line, ll);
	return r;
}

/*
 * The loaded objects' segments that the ELF says are never written (a
 * PT_LOAD without PF_W), page-aligned. A range is dropped whole only
 * inside one of them: a range that smaps showed clean but that a
 * concurrent dlopen() mapped over between the read and the madvise (the
 * loader reserves a new object's whole span, then maps its segments over
 * it and relocates the writable ones) is never inside such a segment of
 * an object already listed, so no written page can be dropped.
 */
struct rosegs {
	struct pageout_range *r;
	size_t n, max;
};

static int
rosegs_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct rosegs *rs = arg;
	/* 4 KiB here; 16 KiB on arm64 Androids that run with it */
	const uintptr_t pg = (uintptr_t)getpagesize();
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a, b;

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) ||
		    rs->n == rs->max)
			continue;
		a = (uintptr_t)(info->dlpi_addr + ph->p_vaddr);
		b = a + (uintptr_t)ph->p_memsz;
		rs->r[rs->n].start = a & ~(pg - 1);
		rs->r[rs->n].end = (b + pg - 1) & ~(pg - 1);
		rs->n++;
	}
	return 0;
}

static bool
inside_ro(const struct rosegs *rs, uintptr_t start, uintptr_t end)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (start >= rs->r[i].start && end <= rs->r[i].end)
			return true;
	return false;
}

int
pageout_self(bool random, struct pageout_stats *ret)
{
	return pageout_pass(true, random, ret);
}

int
pageout_pass(bool reclaim, bool random, struct pageout_stats *ret)
{
	struct pageout_range r[PAGEOUT_RANGES_MAX], ro[PAGEOUT_RANGES_MAX];
	struct rosegs rs = { .r = ro, .max = PAGEOUT_RANGES_MAX };
	struct pageout_stats st = { 0 };
	struct vbuf b = { 0 };
	struct memstat m;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	size_t n, i;
	int rc;

	if ((rc = read_smaps(&b)) == 0)
		rc = pageout_parse(b.p, b.len, r, PAGEOUT_RANGES_MAX, &n);
	vbuf_release(&b);
	if (rc < 0)
		return rc;
	if (n > PAGEOUT_RANGES_MAX)
		n = PAGEOUT_RANGES_MAX;
	if (memstat_read(NULL, &m) == 0 && (m.have & MEMSTAT_FILE))
		st.before = m.file;
	for (i = 0; i < n && reclaim; i++) {
		void *a = (void *)r[i].start;
		size_t sz = r[i].end - r[i].start;

		if ((random && madvise(a, sz, MADV_RANDOM) < 0) ||
		    madvise(a, sz, MADV_PAGEOUT) < 0) {
			if (st.failed++ == 0)
				st.err = -errno;
			continue;
		}
		st.ranges++;
		st.advised += sz;
	}
	/* What the pageout left mapped because another process maps it too;
	 * a range with pages of this process's own keeps them (pageout.h),
	 * and one outside every never-written segment is left alone too */
	(void)dl_iterate_phdr(rosegs_cb, &rs);
	for (i = 0; i < n; i++) {
		size_t sz = r[i].end - r[i].start;

		if (!r[i].clean || !inside_ro(&rs, r[i].start, r[i].end)) {
			st.kept++;
			continue;
		}
		if (madvise((void *)r[i].start, sz, MADV_DONTNEED) < 0) {
			if (st.failed++ == 0)
				st.err = -errno;
			continue;
		}
		st.unmapped += sz;
	}
	if (memstat_read(NULL, &m) == 0 && (m.have & MEMSTAT_FILE))
		st.after = m.file;
	st.given = st.before > st.after ? st.before - st.after : 0;
	st.passes = 1;
	st.ns = clock_ns(CLOCK_MONOTONIC) - t0;
	*ret = st;
	return 0;
}

void
pageout_add(struct pageout_stats *sum, const struct pageout_stats *pass)
{
	sum->before = pass->before;
	sum->after = pass->after;
	sum->advised = pass->advised;
	sum->unmapped = pass->unmapped;
	sum->ranges = pass->ranges;
	sum->kept = pass->kept;
	sum->given += pass->given;
	sum->failed += pass->failed;
	sum->passes += pass->passes;
	sum->ns += pass->ns;
	if (sum->err == 0)
		sum->err = pass->err;
}

/* ------------------------------------------------- settling passes */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool running, stop;
	unsigned window_s;
	struct pageout_stats sum;
} settle = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* at these tenths of a window after the start (pageout.h) */
static const unsigned settle_at[] = { 15, 30, 65 };

static void *
settle_main(void *arg)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(settle_at) / sizeof(settle_at[0]); i++) {
		int64_t due = t0 +
		    (int64_t)settle_at[i] * (int64_t)settle.window_s *
			100000000LL;
		struct pageout_stats st;
		struct timespec ts;
		bool stop;
		int rc = 0;

		pthread_mutex_lock(&settle.lock);
		ts.tv_sec = (time_t)(due / 1000000000LL);
		ts.tv_nsec = (long)(due % 1000000000LL);
		/* woken early (a signal, or none): wait on; timed out or any
		 * error: the pass is due */
		while (!settle.stop && rc == 0)
			rc = pthread_cond_timedwait(&settle.cond, &settle.lock,
			    &ts);
		stop = settle.stop;
		pthread_mutex_unlock(&settle.lock);
		if (stop)
			break;
		/* no reclaim: a page the kernel took from the page cache
		 * would come back with a read, in the loop's time */
		rc = pageout_pass(false, false, &st);
		pthread_mutex_lock(&settle.lock);
		if (rc < 0) {
			/* smaps unreadable: counted as a refusal */
			if (settle.sum.failed++ == 0)
				settle.sum.err = rc;
		} else {
			pageout_add(&settle.sum, &st);
		}
		pthread_mutex_unlock(&settle.lock);
	}
	return NULL;
}

int
pageout_settle_start(unsigned window_s)
{
	int r;

	if (settle.running)
		return -EALREADY;
	/* timed waits on the monotonic clock: a wall-clock jump moves none */
	if ((r = cond_init_monotonic(&settle.cond)) < 0)
		return r;
	settle.window_s = window_s ? window_s : 1;
	settle.stop = false;
	memset(&settle.sum, 0, sizeof(settle.sum));
	if ((r = thread_start_quiet(&settle.thread, settle_main, NULL)) < 0) {
		pthread_cond_destroy(&settle.cond);
		return r;
	}
	settle.running = true;
	return 0;
}

void
pageout_settle_stop(void)
{
	if (!settle.running)
		return;
	pthread_mutex_lock(&settle.lock);
	settle.stop = true;
	pthread_cond_signal(&settle.cond);
	pthread_mutex_unlock(&settle.lock);
	pthread_join(settle.thread, NULL);
	pthread_cond_destroy(&settle.cond);
	settle.running = false;
}

void
pageout_settle_get(struct pageout_stats *ret)
{
	pthread_mutex_lock(&settle.lock);
	*ret = settle.sum;
	pthread_mutex_unlock(&settle.lock);
}
