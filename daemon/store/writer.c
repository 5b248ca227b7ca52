/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store writer: a thread of its own that writes closed windows, so a
 * slow commit, a full disk or a checkpoint never delays a sample. Its SQLite
 * connection is shared, under the store's lock, with the heapprofd records
 * the loop writes (hp.c); readers have their own (store_conn.c). Closed
 * windows wait in a bounded queue; when it overflows the oldest is dropped
 * and counted. Failed writes are retried with a backoff; the queue keeps the
 * windows meanwhile.
 */
#include <sys/timex.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "store/store.h"
#include "window/window.h"

#define RETRY_MIN_MS 500
#define RETRY_MAX_MS 10000
#define MAINTAIN_EVERY_S 60

struct writer {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_cond_t done_cv; /* the queue emptied (writer_wait) */
	struct store *store;
	struct window **q; /* ring of queued windows */
	unsigned qcap, qhead, qlen;
	uint64_t dropped;	 /* lost to a full queue */
	uint64_t rejected;	 /* refused by the store for good */
	struct window *inflight; /* the head, while the thread writes it */
	bool stopping;
	int64_t flush_deadline_ns; /* at stop: give up retrying after this */
	struct store_stats stats;  /* copy, refreshed after each operation */
	bool started;
};

static void
timespec_after_ms(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Remove the queue entry at logical position k (0 = oldest). */
static struct window *
q_remove_at(struct writer *wr, unsigned k)
{
	struct window *w = wr->q[(wr->qhead + k) % wr->qcap];
	unsigned i;

	for (i = k; i + 1 < wr->qlen; i++)
		wr->q[(wr->qhead + i) % wr->qcap] =
		    wr->q[(wr->qhead + i + 1) % wr->qcap];
	wr->q[(wr->qhead + wr->qlen - 1) % wr->qcap] = NULL;
	wr->qlen--;
	return w;
}

/*
 * The kernel's word on the wall clock: synchronised (an NTP daemon, chrony
 * or timesyncd keeps STA_UNSYNC clear), not, or unknown (a seccomp filter
 * or a kernel that refuses the read). modes = 0 only reads.
 */
static int
kernel_time_sync(void)
{
	struct timex tx;
	int st;

	memset(&tx, 0, sizeof(tx));
	if ((st = adjtimex(&tx)) < 0)
		return -errno;
	return st != TIME_ERROR && !(tx.status & STA_UNSYNC);
}

/* Maintenance with the boot's clocks: ages within this boot by
 * CLOCK_BOOTTIME, the wall clock only where it has to be. */
static void
maintain(struct writer *wr, const char *boot_id)
{
	struct store_now now;

	memset(&now, 0, sizeof(now));
	now.wall_ns = clock_ns(CLOCK_REALTIME);
	now.boot_ns = clock_ns(CLOCK_BOOTTIME);
	snprintf(now.boot_id, sizeof(now.boot_id), "%s", boot_id);
	now.wall_sync = kernel_time_sync();
	(void)store_maintain_at(wr->store, &now);
}

static void *
writer_main(void *arg)
{
	struct writer *wr = arg;
	unsigned backoff = RETRY_MIN_MS;
	int64_t next_maint = clock_ns(CLOCK_MONOTONIC) +
	    MAINTAIN_EVERY_S * NSEC_PER_SEC;
	bool failing = false;
	bool recovered = false; /* store_recover tried since the last write */
	struct store_stats st;
	char boot_id[40] = ""; /* of the windows written: this boot's */

	/* what the store holds, for health before the first maintenance */
	if (store_usage_refresh(wr->store) == 0) {
		store_get_stats(wr->store, &st);
		pthread_mutex_lock(&wr->mu);
		wr->stats = st;
		pthread_mutex_unlock(&wr->mu);
	}
	pthread_mutex_lock(&wr->mu);
	for (;;) {
		struct window *w;
		struct timespec ts;
		int r;

		if (wr->stopping &&
		    (wr->qlen == 0 ||
			clock_ns(CLOCK_MONOTONIC) > wr->flush_deadline_ns))
			break;
		if (wr->qlen == 0 || failing) {
			unsigned ms = failing ? backoff :
						MAINTAIN_EVERY_S * 1000;

			if (wr->stopping && ms > 200)
				ms = 200; /* retry until the flush deadline */
			timespec_after_ms(&ts, ms);
			pthread_cond_timedwait(&wr->cv, &wr->mu, &ts);
			failing = false;
		}
		if (clock_ns(CLOCK_MONOTONIC) >= next_maint) {
			pthread_mutex_unlock(&wr->mu);
			maintain(wr, boot_id);
			/* Not under mu: the store lock may be held by a long
			 * control-plane read, and the loop takes mu. */
			store_get_stats(wr->store, &st);
			pthread_mutex_lock(&wr->mu);
			wr->stats = st;
			next_maint = clock_ns(CLOCK_MONOTONIC) +
			    MAINTAIN_EVERY_S * NSEC_PER_SEC;
		}
		if (wr->qlen == 0)
			continue;
		/* Peek, write without the lock, pop only on success. */
		w = wr->inflight = wr->q[wr->qhead];
		pthread_mutex_unlock(&wr->mu);
		r = store_put(wr->store, w);
		/*
		 * Corrupt under us: no retry can pass, a fresh file can. Once
		 * per streak of failures, so a medium that corrupts every new
		 * file does not get a file moved aside per retry; again only
		 * while a failed recovery left the store closed (-EBADF).
		 */
		if (r == -EUCLEAN && !recovered) {
			recovered = true;
			if (store_recover(wr->store) == 0)
				r = store_put(wr->store, w);
		} else if (r == -EBADF) {
			/* Closed: its open failed at start (full, read-only,
			 * not a file) or a recovery failed. Open it again. */
			if (store_reopen(wr->store) == 0)
				r = store_put(wr->store, w);
		}
		store_get_stats(wr->store, &st);
		pthread_mutex_lock(&wr->mu);
		wr->inflight = NULL;
		wr->stats = st;
		if (r == -ENOSPC || r == -EIO || r == -EROFS || r == -EBUSY ||
		    r == -EUCLEAN || r == -EBADF || r == -EACCES ||
		    r == -ENOENT || r == -EISDIR || r == -ENOTDIR) {
			/* The condition may pass: keep the window, retry. */
			failing = true;
			if (backoff < RETRY_MAX_MS)
				backoff *= 2;
			wr->stats.retry_at_mono_ns = clock_ns(CLOCK_MONOTONIC) +
			    (int64_t)backoff * NSEC_PER_MSEC;
			pthread_cond_broadcast(&wr->done_cv);
			continue;
		}
		if (r < 0)
			wr->rejected++; /* can never succeed (-EFBIG, -EINVAL) */
		else
			memcpy(boot_id, w->boot_id, sizeof(boot_id));
		backoff = RETRY_MIN_MS;
		recovered = false;
		/* An overflow never drops the window in flight: still head. */
		q_remove_at(wr, 0);
		window_free(w);
		if (wr->qlen == 0)
			pthread_cond_broadcast(&wr->done_cv);
	}
	pthread_cond_broadcast(&wr->done_cv);
	pthread_mutex_unlock(&wr->mu);
	return NULL;
}

int
writer_start(struct store *store, unsigned queue_max, struct writer **ret)
{
	struct writer *wr;
	int r;

	if ((wr = calloc(1, sizeof(*wr))) == NULL)
		return -ENOMEM;
	wr->qcap = queue_max ? queue_max : 64;
	if ((wr->q = calloc(wr->qcap, sizeof(*wr->q))) == NULL) {
		free(wr);
		return -ENOMEM;
	}
	wr->store = store;
	store_get_stats(store, &wr->stats);
	pthread_mutex_init(&wr->mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&wr->cv, &ca);
		pthread_cond_init(&wr->done_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	if ((r = pthread_create(&wr->thread, NULL, writer_main, wr)) != 0) {
		writer_stop(wr, 0);
		return -r;
	}
	wr->started = true;
	*ret = wr;
	return 0;
}

/*
 * Queue a copy of w. The copy is stamped with the store's state as seen now,
 * so the database records when it could not keep up.
 */
int
writer_submit(struct writer *wr, const struct window *w)
{
	struct window *c = window_dup(w);
	struct window *old = NULL;

	if (c == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&wr->mu);
	if (wr->qlen == wr->qcap) {
		/* Drop the oldest, but never the one being written. */
		unsigned k = wr->inflight && wr->qcap > 1 ? 1 : 0;

		if (wr->inflight && wr->qcap == 1) {
			wr->dropped++;
			pthread_mutex_unlock(&wr->mu);
			window_free(c);
			return -ENOBUFS;
		}
		old = q_remove_at(wr, k);
		wr->dropped++;
	}
	c->health.store_state = wr->stats.state;
	c->health.store_queued = wr->qlen;
	c->health.store_dropped = (uint32_t)wr->dropped;
	wr->q[(wr->qhead + wr->qlen) % wr->qcap] = c;
	wr->qlen++;
	pthread_cond_signal(&wr->cv);
	pthread_mutex_unlock(&wr->mu);
	window_free(old);
	return 0;
}

/*
 * Wait (at most ms) until every queued window is committed. A window is
 * "closed" for the crash contract once this returns 0: a kill after that
 * loses at most the open window. A failing store is not waited for (the
 * windows stay queued, as before); -ETIMEDOUT: the commit took longer.
 */
int
writer_wait(struct writer *wr, unsigned ms)
{
	struct timespec ts;
	int r = 0;

	if (wr == NULL)
		return 0;
	timespec_after_ms(&ts, ms);
	pthread_mutex_lock(&wr->mu);
	while (wr->qlen > 0 && !wr->stopping && r == 0) {
		if (wr->stats.state != STORE_OK) {
			r = -EAGAIN;
			break;
		}
		if (pthread_cond_timedwait(&wr->done_cv, &wr->mu, &ts) ==
		    ETIMEDOUT)
			r = -ETIMEDOUT;
	}
	if (r == -ETIMEDOUT && wr->qlen == 0)
		r = 0;
	pthread_mutex_unlock(&wr->mu);
	return r;
}

void
writer_get(struct writer *wr, struct store_stats *ret_stats,
    unsigned *ret_queued, uint64_t *ret_dropped)
{
	pthread_mutex_lock(&wr->mu);
	*ret_stats = wr->stats;
	*ret_queued = wr->qlen;
	*ret_dropped = wr->dropped + wr->rejected;
	pthread_mutex_unlock(&wr->mu);
}

/* Write what is queued (retrying until the deadline), then stop. */
struct writer *
writer_stop(struct writer *wr, unsigned flush_ms)
{
	unsigned i;

	if (wr == NULL)
		return NULL;
	if (wr->started) {
		pthread_mutex_lock(&wr->mu);
		wr->stopping = true;
		wr->flush_deadline_ns = clock_ns(CLOCK_MONOTONIC) +
		    (int64_t)flush_ms * NSEC_PER_MSEC;
		pthread_cond_signal(&wr->cv);
		pthread_mutex_unlock(&wr->mu);
		pthread_join(wr->thread, NULL);
	}
	for (i = 0; i < wr->qcap; i++)
		window_free(wr->q[i]);
	pthread_cond_destroy(&wr->cv);
	pthread_cond_destroy(&wr->done_cv);
	pthread_mutex_destroy(&wr->mu);
	free(wr->q);
	free(wr);
	return NULL;
}
