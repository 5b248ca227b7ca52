/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A store that could not be opened now: a closed handle, opened again
 * later (store_open_retry, store_reopen). Above store.c: it opens through
 * store_open() and store_recover().
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
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
