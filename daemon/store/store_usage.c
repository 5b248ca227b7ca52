/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the store costs the flash and what it holds (doc/storage.md,
 * "Usage"): the bytes the kernel counted as written to storage by the
 * daemon (/proc/self/io: write_bytes − cancelled_write_bytes, every
 * thread), as a rate per day over up to the last 24 hours, and the history
 * the stored windows cover, with how long the size bound would hold at the
 * density stored so far. Updated by each maintenance pass (the writer
 * thread, every minute), read through store_get_stats().
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "store_int.h"

/* "write_bytes: N" and "cancelled_write_bytes: N" of /proc/<pid>/io. */
int
store_io_parse(const char *text, uint64_t *ret)
{
	unsigned long long w = 0, c = 0;
	bool have_w = false;
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (sscanf(p, "write_bytes: %llu", &w) == 1)
			have_w = true;
		else
			(void)sscanf(p, "cancelled_write_bytes: %llu", &c);
	}
	if (!have_w)
		return -EINVAL;
	/* truncating a dirty file takes back what it had been charged;
	 * more taken back than charged means a torn read: refuse it */
	if (c > w)
		return -ERANGE;
	*ret = (uint64_t)(w - c);
	return 0;
}

/* One reading, kept when USAGE_STEP_NS has passed since the last kept. */
void
store_usage_sample(struct store_usage *u, int64_t mono_ns, uint64_t bytes)
{
	struct store_usage_pt *last;

	u->now = (struct store_usage_pt){ mono_ns, bytes };
	if (u->n) {
		last = &u->pt[(u->head + u->n - 1) % STORE_USAGE_PTS];
		/* a counter that went back (another process's io file, a
		 * restart within the same handle): start again from here */
		if (bytes < last->bytes || mono_ns < last->mono_ns)
			u->n = 0;
		else if (mono_ns - last->mono_ns < STORE_USAGE_STEP_NS)
			return;
	}
	if (u->n == STORE_USAGE_PTS) {
		u->head = (u->head + 1) % STORE_USAGE_PTS;
		u->n--;
	}
	u->pt[(u->head + u->n) % STORE_USAGE_PTS] = u->now;
	u->n++;
}

/* Bytes per day over the readings of the last 24 h; 0 with span 0 when
 * there is no interval yet. */
uint64_t
store_usage_per_day(const struct store_usage *u, int64_t *ret_span_ns)
{
	const struct store_usage_pt *first = NULL;
	unsigned i;
	int64_t span;

	*ret_span_ns = 0;
	for (i = 0; i < u->n; i++) {
		const struct store_usage_pt *p =
		    &u->pt[(u->head + i) % STORE_USAGE_PTS];

		if (u->now.mono_ns - p->mono_ns <= 24 * 3600 * NSEC_PER_SEC) {
			first = p;
			break;
		}
	}
	if (first == NULL || (span = u->now.mono_ns - first->mono_ns) <= 0)
		return 0;
	*ret_span_ns = span;
	return (uint64_t)((long double)(u->now.bytes - first->bytes) *
	    (86400.0L * NSEC_PER_SEC) / (long double)span);
}

static void
usage_io(struct store *s, int64_t mono_ns)
{
	char buf[512];
	ssize_t n;
	uint64_t bytes;
	int fd;

	if ((fd = open(s->o.io_path ? s->o.io_path : "/proc/self/io",
		 O_RDONLY | O_CLOEXEC)) < 0) {
		s->st.io_err = -errno;
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		s->st.io_err = n < 0 ? -errno : -ENODATA;
		return;
	}
	buf[n] = '\0';
	if ((s->st.io_err = store_io_parse(buf, &bytes)) < 0)
		return;
	store_usage_sample(&s->usage, mono_ns, bytes);
	if (!s->usage_base_set) {
		s->usage_base = bytes;
		s->usage_base_set = true;
	}
	s->st.io_written = bytes - s->usage_base;
	s->st.io_per_day = store_usage_per_day(&s->usage, &s->st.io_span_ns);
}

/* Σ window durations (a roll-up's covers its bucket), and wall span. */
static int
usage_history(struct store *s)
{
	static const char sql[] =
	    "SELECT COALESCE(SUM(duration_ns), 0), COUNT(*), "
	    "COALESCE(MIN(wall_start_ns), 0), COALESCE(MAX(wall_end_ns), 0) "
	    "FROM windows";
	sqlite3_stmt *st;
	int64_t used, nfree = 0;
	int rc;

	if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) != SQLITE_OK)
		return store_fail(s, rc, "usage");
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		s->st.history_ns = sqlite3_column_int64(st, 0);
		s->st.history_windows = (uint64_t)sqlite3_column_int64(st, 1);
		s->st.history_wall_first_ns = sqlite3_column_int64(st, 2);
		s->st.history_wall_last_ns = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return store_fail(s, rc, "usage");
	/* at the density stored so far: bound / (bytes per covered ns);
	 * the file's free pages (auto_vacuum NONE keeps them for the next
	 * writes) hold no history */
	s->st.bound_holds_ns = 0;
	used = (int64_t)s->st.db_bytes;
	if (store_run_int(store_ws(s, WS_FREELIST), &nfree) == SQLITE_OK &&
	    nfree > 0 && nfree * s->page_size < used)
		used -= nfree * s->page_size;
	if (s->o.max_bytes && used > 0 && s->st.history_ns > 0)
		s->st.bound_holds_ns = (int64_t)((long double)s->st.history_ns *
		    (long double)s->o.max_bytes / (long double)used);
	return 0;
}

int
store_usage_update(struct store *s, int64_t mono_ns)
{
	usage_io(s, mono_ns);
	return usage_history(s);
}

/* The same, on its own (the writer's start: health has the history at
 * once instead of after the first maintenance pass). */
int
store_usage_refresh(struct store *s)
{
	int r;

	if (s == NULL)
		return -EBADF;
	pthread_mutex_lock(&s->lock);
	r = s->db == NULL ? -EBADF :
			    store_usage_update(s, clock_ns(CLOCK_BOOTTIME));
	pthread_mutex_unlock(&s->lock);
	return r;
}
