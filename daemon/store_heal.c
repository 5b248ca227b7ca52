/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Self-healing of the window store: a store that cannot be opened is kept
 * as a closed handle and opened again later (store_open_retry,
 * store_reopen). doc/storage.md, "Self-healing", says what each step does
 * and which health figure counts it.
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
#include <unistd.h>

#include "store_int.h"

/*
 * store_open, except that a file that cannot be opened now (full disk,
 * read-only file system, vitals.db a directory, a denied open) still gives
 * a handle: closed (STORE_CLOSED, calls return -EBADF), with the reason in
 * last_err / last_errmsg, for store_reopen to try again. Only a failure
 * no retry can mend (-ENOMEM, a path too long) is returned.
 */
int
store_open_retry(const char *path, const struct store_opts *o,
    struct store **ret)
{
	struct store *s;
	int r;

	if ((r = store_open(path, o, ret)) == 0 || r == -ENOMEM ||
	    r == -ENAMETOOLONG || r == -EINVAL)
		return r;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	if ((s->path = strdup(path)) == NULL) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	if (o)
		s->o = *o;
	else
		store_opts_default(&s->o);
	s->st.state = STORE_CLOSED;
	s->st.last_err = r;
	snprintf(s->st.last_errmsg, sizeof(s->st.last_errmsg), "open: %s",
	    strerror(-r));
	*ret = s;
	return 0;
}

bool
store_is_open(struct store *s)
{
	bool open;

	if (s == NULL)
		return false;
	pthread_mutex_lock(&s->lock);
	open = s->db != NULL;
	pthread_mutex_unlock(&s->lock);
	return open;
}

/*
 * Try to open a closed store again (0: open now). Counted in
 * open_retries; a failure leaves it closed with the new reason. An open
 * store is left alone.
 */
int
store_reopen(struct store *s)
{
	int r;

	if (s == NULL)
		return -EBADF;
	if (store_is_open(s))
		return 0;
	pthread_mutex_lock(&s->lock);
	s->st.open_retries++;
	pthread_mutex_unlock(&s->lock);
	/* On a closed handle store_recover moves nothing: it opens. */
	if ((r = store_recover(s)) < 0)
		return r;
	return 0;
}

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
	rc = sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_schema"
	    " WHERE type IN ('trigger', 'view') LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		snprintf(why, whysz, "%s %s", sqlite3_column_text(st, 0),
		    sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * After a step of st that finished (SQLITE_DONE): an INSERT of ours always
 * adds its row; one that added none was swallowed by something that is
 * not ours. STORE_RC_NOTHING then, else SQLITE_DONE.
 */
int
store_heal_check_insert(sqlite3_stmt *st)
{
	const char *sql = sqlite3_sql(st);

	if (sql == NULL || strncmp(sql, "INSERT", 6) != 0 ||
	    strstr(sql, "DO NOTHING") != NULL)
		return SQLITE_DONE;
	return sqlite3_changes(sqlite3_db_handle(st)) > 0 ? SQLITE_DONE :
	    STORE_RC_NOTHING;
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

	rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM windows WHERE"
	    " boot_id = ?1 AND level = ?2 AND mono_start_ns = ?3", -1, &st,
	    NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, w->boot_id,
	    (int)strnlen(w->boot_id, sizeof(w->boot_id)), SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, w->level);
	sqlite3_bind_int64(st, 3, w->mono_start_ns);
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
 * a crash. The store then reopens its connection (store_heal_after_op),
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

/*
 * After an operation (lock held): a -shm fault was repaired since the
 * last look, so the index this connection used may have gone away in the
 * middle of it. Reopen: the checks of an open run again on the file.
 */
void
store_heal_after_op(struct store *s)
{
	uint64_t n = (uint64_t)shm_faults;

	if (n == s->st.shm_faults || s->db == NULL)
		return;
	s->st.shm_faults = n;
	(void)store_reopen_locked(s);
}
