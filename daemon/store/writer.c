/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store writer: a thread of its own that writes closed windows and
 * heapprofd's session records, so a slow commit, a full disk or a
 * checkpoint never delays a sample or an answer. Its SQLite connection is
 * its own (readers have theirs, store_conn.c). Closed windows wait in a
 * bounded queue; when it overflows the oldest is dropped and counted.
 * Records wait in a queue of their own, written first, in the order put,
 * one entry per session id (a newer put of an id replaces the queued one).
 * Failed writes are retried with a backoff; the queues keep what waits.
 * A window queued with a note is told back to the loop (an eventfd it
 * watches) once it is committed, or when it cannot be (yet).
 */
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timex.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/memstat.h"
#include "core/util.h"
#include "hp/hp.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "window/window.h"

#define RETRY_MIN_MS 500
#define RETRY_MAX_MS 10000
#define MAINTAIN_EVERY_S 60
#define TRIM_EVERY_S 60	  /* heap trims at most this often (writer_trim) */
#define REC_QUEUE_MAX 256 /* session records waiting (distinct ids) */

/* A queued window and what the loop is told of it (NULL: nothing). */
struct wslot {
	struct window *w;
	char *note;
	bool told; /* "not yet" was said; the outcome will be too */
};

struct writer {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_cond_t done_cv; /* the queues emptied (writer_wait) */
	struct store *store;
	struct wslot *q; /* ring of queued windows */
	unsigned qcap, qhead, qlen;
	uint64_t dropped;	 /* lost to a full queue */
	uint64_t rejected;	 /* refused by the store for good */
	struct window *inflight; /* the head, while the thread writes it */
	bool retrying;		 /* the head failed, waits for its retry */
	bool stopping;
	int64_t flush_deadline_ns; /* at stop: give up retrying after this */
	struct store_stats stats;  /* copy, refreshed after each operation */
	bool started;
	/* the last window written, its share kept until the next is (see
	 * write_window) */
	struct window *held;
	/* heapprofd's session records: a ring, oldest first */
	struct hp_record **rq;
	unsigned rcap, rhead, rlen;
	bool rinflight; /* the head, while the thread writes it */
	uint64_t rec_written, rec_dropped, rec_failed;
	/* what the loop is told: windows committed or not, and an eventfd */
	struct writer_done *done;
	size_t ndone, done_cap;
	int efd;
	/* one call to run on this thread when the store lets it (writer_call) */
	int (*call_fn)(struct store *s, void *arg);
	void (*call_done)(void *arg);
	void *call_arg;
	bool call_pending, call_running, call_told;
	int64_t call_next_ns;
	unsigned call_backoff;
	/* the writer's own clocks over its puts and passes (store_tclock.c) */
	struct store_commit_stats puts, passes;
	/* heap trims after the queue emptied: runs, RSS given back */
	uint32_t trims;
	int64_t trim_next_ns; /* no trim before (writer_main) */
	uint64_t trimmed;
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
static struct wslot
q_remove_at(struct writer *wr, unsigned k)
{
	struct wslot sl = wr->q[(wr->qhead + k) % wr->qcap];
	unsigned i;

	for (i = k; i + 1 < wr->qlen; i++)
		wr->q[(wr->qhead + i) % wr->qcap] =
		    wr->q[(wr->qhead + i + 1) % wr->qcap];
	memset(&wr->q[(wr->qhead + wr->qlen - 1) % wr->qcap], 0,
	    sizeof(*wr->q));
	wr->qlen--;
	return sl;
}

/*
 * Tell the loop about a queued window: err 0, committed; < 0 not, final
 * when it never will be. "Not yet" is said once, the outcome after it
 * too (the note goes with it then). Under mu.
 */
static void
tell(struct writer *wr, struct wslot *sl, int err, bool final)
{
	struct writer_done *nd;
	uint64_t one = 1;
	char *note;
	size_t cap;

	if (sl->note == NULL || (!final && sl->told))
		return;
	if (final)
		note = sl->note;
	else if ((note = strdup(sl->note)) == NULL)
		return;
	if (wr->ndone == wr->done_cap) {
		cap = wr->done_cap ? wr->done_cap * 2 : 8;
		if ((nd = realloc(wr->done, cap * sizeof(*nd))) == NULL) {
			/* the window stays queued; only its line is lost */
			free(note);
			if (final)
				sl->note = NULL;
			return;
		}
		wr->done = nd;
		wr->done_cap = cap;
	}
	wr->done[wr->ndone++] = (struct writer_done){
		.seq = sl->w->seq,
		.err = err,
		.final = final,
		.note = note,
	};
	if (final)
		sl->note = NULL;
	sl->told = true;
	/* a full counter (never: the loop reads it) needs no second wake */
	(void)!write(wr->efd, &one, sizeof(one));
}

/* Failures that may pass: the item stays queued and is tried again. */
static bool
transient(int r)
{
	return r == -ENOSPC || r == -EIO || r == -EROFS || r == -EBUSY ||
	    r == -EUCLEAN || r == -EBADF || r == -EACCES || r == -ENOENT ||
	    r == -EISDIR || r == -ENOTDIR;
}

static int
put_one(struct store *s, const struct window *w, const struct hp_record *rec)
{
	return w ? store_put(s, w) : store_hp_put(s, rec);
}

/* The store's figures with the writer's timing (under mu). */
static void
stats_set(struct writer *wr, const struct store_stats *st)
{
	wr->stats = *st;
	wr->stats.puts = wr->puts;
	wr->stats.passes = wr->passes;
}

/*
 * One write (a window, or a record), with the writer's repairs. Corrupt
 * under us: no retry can pass, a fresh file can. Once per streak of
 * failures, so a medium that corrupts every new file does not get a file
 * moved aside per retry; again only while a failed recovery left the
 * store closed (-EBADF). Closed: its open failed at start (full,
 * read-only, not a file) or a recovery failed: open it again.
 */
static int
put_healed(struct writer *wr, const struct window *w,
    const struct hp_record *rec, bool *recovered)
{
	int r = put_one(wr->store, w, rec);

	if (r == -EUCLEAN && !*recovered) {
		*recovered = true;
		if (store_recover(wr->store) == 0)
			r = put_one(wr->store, w, rec);
	} else if (r == -EBADF) {
		if (store_reopen(wr->store) == 0)
			r = put_one(wr->store, w, rec);
	}
	return r;
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

/* The caller's call, on this thread: told to the loop once it succeeds,
 * tried again with its own backoff while it fails (the store closed). */
static void
run_call(struct writer *wr)
{
	int r;

	wr->call_running = true;
	pthread_mutex_unlock(&wr->mu);
	if (!store_is_open(wr->store))
		(void)store_reopen(wr->store);
	r = wr->call_fn(wr->store, wr->call_arg);
	pthread_mutex_lock(&wr->mu);
	wr->call_running = false;
	pthread_cond_broadcast(&wr->done_cv);
	if (!wr->call_pending) /* cancelled meanwhile */
		return;
	if (r < 0) {
		wr->call_next_ns = clock_ns(CLOCK_MONOTONIC) +
		    (int64_t)wr->call_backoff * NSEC_PER_MSEC;
		if (wr->call_backoff < RETRY_MAX_MS)
			wr->call_backoff *= 2;
		return;
	}
	wr->call_pending = false;
	wr->call_told = true;
	(void)!write(wr->efd, &(uint64_t){ 1 }, sizeof(uint64_t));
}

/* After a failure that may pass: back off, say when the next try is. */
static void
note_retry(struct writer *wr, unsigned *backoff)
{
	if (*backoff < RETRY_MAX_MS)
		*backoff *= 2;
	wr->retrying = true;
	wr->stats.retry_at_mono_ns = clock_ns(CLOCK_MONOTONIC) +
	    (int64_t)*backoff * NSEC_PER_MSEC;
	pthread_cond_broadcast(&wr->done_cv);
}

/* The head record, written; false: it failed and waits for a retry. */
static bool
write_record(struct writer *wr, unsigned *backoff, bool *recovered)
{
	struct hp_record *rec = wr->rq[wr->rhead];
	struct store_stats st;
	int r;

	wr->rinflight = true;
	pthread_mutex_unlock(&wr->mu);
	r = put_healed(wr, NULL, rec, recovered);
	store_get_stats(wr->store, &st);
	pthread_mutex_lock(&wr->mu);
	wr->rinflight = false;
	stats_set(wr, &st);
	if (transient(r)) {
		note_retry(wr, backoff);
		return false;
	}
	if (r < 0)
		wr->rec_failed++; /* can never succeed (-EINVAL) */
	else
		wr->rec_written++;
	wr->rq[wr->rhead] = NULL;
	wr->rhead = (wr->rhead + 1) % wr->rcap;
	wr->rlen--;
	free(rec);
	return true;
}

/* The head window, written; false: it failed and waits for a retry. */
static bool
write_window(struct writer *wr, unsigned *backoff, bool *recovered,
    char boot_id[40])
{
	struct store_commit_split sp;
	struct store_stats st;
	struct store_tclock tc;
	struct window *w, *old;
	struct wslot sl;
	int r;

	/* Peek, write without the lock, pop only on success. */
	w = wr->inflight = wr->q[wr->qhead].w;
	pthread_mutex_unlock(&wr->mu);
	store_tclock_start(&tc);
	r = put_healed(wr, w, NULL, recovered);
	store_tclock_stop(&tc, &sp);
	store_get_stats(wr->store, &st);
	pthread_mutex_lock(&wr->mu);
	wr->inflight = NULL;
	if (r == 0)
		store_tclock_note(&wr->puts, &sp);
	stats_set(wr, &st);
	/* An overflow never drops the window in flight: still head. */
	if (transient(r)) {
		/* The condition may pass: keep the window, retry. */
		tell(wr, &wr->q[wr->qhead], r, false);
		note_retry(wr, backoff);
		return false;
	}
	if (r < 0)
		wr->rejected++; /* can never succeed (-EFBIG, -EINVAL) */
	else
		memcpy(boot_id, w->boot_id, 40);
	tell(wr, &wr->q[wr->qhead], r, true);
	sl = q_remove_at(wr, 0);
	/*
	 * Its share kept until the next window is written. The ring drops
	 * its own at the next close, before that window comes here; this
	 * thread's is then the last, and the window's free (its arrays are
	 * mmapped chunks: an munmap each, and the TLB flush of every CPU the
	 * daemon ran on) runs here, not on the loop. Between two closes the
	 * share held is the ring's window itself: no memory beside it.
	 */
	old = wr->held;
	wr->held = sl.w;
	pthread_mutex_unlock(&wr->mu);
	window_free(old);
	free(sl.note);
	pthread_mutex_lock(&wr->mu);
	return true;
}

/*
 * Give back what a write freed. A window's rows, its decoded copy and
 * SQLite's statement scratch are freed as the write ends; glibc keeps
 * those pages in the arena (and the writer has its own arena) until a
 * trim. Its zstd decompression context goes too (the compression one
 * is kept: store_codec_release_decoder), and its connections' cached
 * pages (read again from the OS's page cache). Here, off the loop, at the
 * first drained queue and then at most once per TRIM_EVERY_S: each of
 * malloc_trim's madvise calls is a TLB shootdown of the other CPUs, and
 * what it gives back the next window faults in again, so a trim per
 * window was ~60 % of the writer's CPU and a share of the loop's (bench/
 * README.md, "Writer thread, sixth pass"; VmRSS +0.7 MiB for it). The
 * trim walks the
 * arenas' free chunks (well under a millisecond at this heap's size).
 * What it gave back is RssAnon before less after.
 */
static void
writer_trim(struct writer *wr)
{
	struct memstat a, b;
	bool both = memstat_read(NULL, &a) == 0 && (a.have & MEMSTAT_ANON);

	store_release_memory(wr->store);
	store_codec_release_decoder(); /* the encoder's kept: see there */
	compat_heap_release();
	both = both && memstat_read(NULL, &b) == 0 && (b.have & MEMSTAT_ANON);
	pthread_mutex_lock(&wr->mu);
	wr->trims++;
	if (both && a.anon > b.anon)
		wr->trimmed += a.anon - b.anon;
	pthread_mutex_unlock(&wr->mu);
}

static void *
writer_main(void *arg)
{
	struct writer *wr = arg;
	unsigned backoff = RETRY_MIN_MS;
	/* with a spool, one pass per batch (store_maintain_every_s) */
	unsigned maint_s = store_maintain_every_s(wr->store, MAINTAIN_EVERY_S);
	int64_t next_maint = clock_ns(CLOCK_MONOTONIC) +
	    (int64_t)maint_s * NSEC_PER_SEC;
	bool failing = false;
	bool recovered = false; /* store_recover tried since the last write */
	struct store_stats st;
	char boot_id[40] = ""; /* of the windows written: this boot's */

	(void)prctl(PR_SET_NAME, "vitalsd-writer", 0, 0, 0);
	/* what the store holds, for health before the first maintenance */
	if (store_usage_refresh(wr->store) == 0) {
		store_get_stats(wr->store, &st);
		pthread_mutex_lock(&wr->mu);
		stats_set(wr, &st);
		pthread_mutex_unlock(&wr->mu);
	}
	pthread_mutex_lock(&wr->mu);
	for (;;) {
		struct timespec ts;
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		bool empty = wr->qlen == 0 && wr->rlen == 0, ok;
		bool due = wr->call_pending && now >= wr->call_next_ns;

		if (wr->stopping && (empty || now > wr->flush_deadline_ns))
			break;
		if (due && !wr->stopping) {
			run_call(wr);
			continue;
		}
		if (empty || failing) {
			unsigned ms = failing ? backoff : maint_s * 1000;

			if (wr->call_pending &&
			    wr->call_next_ns - now <
				(int64_t)ms * NSEC_PER_MSEC)
				ms = (unsigned)((wr->call_next_ns - now) /
					NSEC_PER_MSEC +
				    1);
			if (wr->stopping && ms > 200)
				ms = 200; /* retry until the flush deadline */
			timespec_after_ms(&ts, ms);
			pthread_cond_timedwait(&wr->cv, &wr->mu, &ts);
			failing = false;
		}
		if (clock_ns(CLOCK_MONOTONIC) >= next_maint) {
			struct store_commit_split sp;
			struct store_tclock tc;

			pthread_mutex_unlock(&wr->mu);
			store_tclock_start(&tc);
			maintain(wr, boot_id);
			store_tclock_stop(&tc, &sp);
			/* Not under mu: the store lock may be held by a long
			 * control-plane read, and the loop takes mu. */
			store_get_stats(wr->store, &st);
			pthread_mutex_lock(&wr->mu);
			store_tclock_note(&wr->passes, &sp);
			stats_set(wr, &st);
			next_maint = clock_ns(CLOCK_MONOTONIC) +
			    (int64_t)maint_s * NSEC_PER_SEC;
		}
		/* Records first: a started session's record is what a crash
		 * must not lose, and it is one small row. */
		if (wr->rlen > 0)
			ok = write_record(wr, &backoff, &recovered);
		else if (wr->qlen > 0)
			ok = write_window(wr, &backoff, &recovered, boot_id);
		else
			continue;
		if (!ok) {
			failing = true;
			continue;
		}
		backoff = RETRY_MIN_MS;
		recovered = false;
		wr->retrying = false;
		if (wr->qlen == 0 && wr->rlen == 0) {
			pthread_cond_broadcast(&wr->done_cv);
			pthread_mutex_unlock(&wr->mu);
			if (clock_ns(CLOCK_MONOTONIC) >= wr->trim_next_ns) {
				writer_trim(wr);
				wr->trim_next_ns = clock_ns(CLOCK_MONOTONIC) +
				    (int64_t)TRIM_EVERY_S * NSEC_PER_SEC;
			}
			pthread_mutex_lock(&wr->mu);
		}
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
	wr->efd = -1;
	wr->qcap = queue_max ? queue_max : 64;
	wr->rcap = REC_QUEUE_MAX;
	if ((wr->q = calloc(wr->qcap, sizeof(*wr->q))) == NULL ||
	    (wr->rq = calloc(wr->rcap, sizeof(*wr->rq))) == NULL) {
		free(wr->q);
		free(wr);
		return -ENOMEM;
	}
	if ((wr->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		r = -errno;
		free(wr->rq);
		free(wr->q);
		free(wr);
		return r;
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
 * Queue w, shared with the caller (the ring), not copied: a closed window
 * is only read, here and on the loop, and the last window_free frees it.
 * It is stamped with the store's state as seen now, on the caller's
 * thread before the writer can see it, so the database records when it
 * could not keep up. With a note, the loop is told (writer_each_done)
 * when the window is committed; at once when the store is failing (the
 * window waits for its retry), or when it is dropped.
 */
int
writer_submit_note(struct writer *wr, const struct window *w, const char *note)
{
	struct window *c;
	struct wslot old = { 0 }, sl = { 0 };
	char *n = NULL;

	if (note && (n = strdup(note)) == NULL)
		return -ENOMEM;
	c = window_share(w);
	pthread_mutex_lock(&wr->mu);
	if (wr->qlen == wr->qcap) {
		/* Drop the oldest, but never the one being written. */
		unsigned k = wr->inflight && wr->qcap > 1 ? 1 : 0;

		if (wr->inflight && wr->qcap == 1) {
			wr->dropped++;
			pthread_mutex_unlock(&wr->mu);
			window_free(c);
			free(n);
			return -ENOBUFS;
		}
		old = q_remove_at(wr, k);
		wr->dropped++;
		tell(wr, &old, -ENOBUFS, true);
	}
	c->health.store_state = wr->stats.state;
	c->health.store_queued = wr->qlen;
	c->health.store_dropped = (uint32_t)wr->dropped;
	sl.w = c;
	sl.note = n;
	/* Failing now: say so at once, not after the next retry. */
	if (wr->retrying || wr->stats.state != STORE_OK)
		tell(wr, &sl, wr->stats.last_err ? wr->stats.last_err : -EAGAIN,
		    false);
	wr->q[(wr->qhead + wr->qlen) % wr->qcap] = sl;
	wr->qlen++;
	pthread_cond_signal(&wr->cv);
	pthread_mutex_unlock(&wr->mu);
	window_free(old.w);
	free(old.note);
	return 0;
}

int
writer_submit(struct writer *wr, const struct window *w)
{
	return writer_submit_note(wr, w, NULL);
}

/* The eventfd the loop watches: readable when writer_each_done has news. */
int
writer_fd(const struct writer *wr)
{
	return wr->efd;
}

/* What the writer has to tell, each once, oldest first; fn runs without
 * the writer's lock (it may call writer_get). A call that succeeded has
 * its done callback run here too. */
void
writer_each_done(struct writer *wr,
    void (*fn)(void *arg, const struct writer_done *dn), void *arg)
{
	struct writer_done *v;
	bool called;
	uint64_t u;
	size_t n, i;

	(void)!read(wr->efd, &u, sizeof(u));
	pthread_mutex_lock(&wr->mu);
	v = wr->done;
	n = wr->ndone;
	wr->done = NULL;
	wr->ndone = wr->done_cap = 0;
	called = wr->call_told;
	wr->call_told = false;
	pthread_mutex_unlock(&wr->mu);
	for (i = 0; i < n; i++) {
		fn(arg, &v[i]);
		free(v[i].note);
	}
	free(v);
	if (called)
		wr->call_done(wr->call_arg);
}

/*
 * Run fn(store, arg) on the writer thread, ahead of its queues, until it
 * returns 0 (the store, if closed, opened first; a failure tried again
 * with a backoff of 0.5 s doubling to 10 s); then done(arg) runs on the
 * loop, from writer_each_done. One call at a time: -EBUSY.
 */
int
writer_call(struct writer *wr, int (*fn)(struct store *s, void *arg),
    void (*done)(void *arg), void *arg)
{
	pthread_mutex_lock(&wr->mu);
	if (wr->call_pending || wr->call_told) {
		pthread_mutex_unlock(&wr->mu);
		return -EBUSY;
	}
	wr->call_fn = fn;
	wr->call_done = done;
	wr->call_arg = arg;
	wr->call_pending = true;
	wr->call_next_ns = 0;
	wr->call_backoff = RETRY_MIN_MS;
	pthread_cond_signal(&wr->cv);
	pthread_mutex_unlock(&wr->mu);
	return 0;
}

/* The call is not to run (any more), nor its done: returns once a run
 * of it in progress has ended, so its argument may be freed. */
void
writer_call_cancel(struct writer *wr)
{
	pthread_mutex_lock(&wr->mu);
	wr->call_pending = wr->call_told = false;
	while (wr->call_running)
		pthread_cond_wait(&wr->done_cv, &wr->mu);
	pthread_mutex_unlock(&wr->mu);
}

/*
 * Queue heapprofd's record r as it is now, to be written by the thread:
 * after every record put before it, and replacing a queued (not yet
 * written) put of the same id. -ENOBUFS: the queue is full, counted.
 */
int
writer_hp_put(struct writer *wr, const struct hp_record *r)
{
	struct hp_record *c = malloc(sizeof(*c));
	unsigned i;

	if (c == NULL)
		return -ENOMEM;
	*c = *r;
	pthread_mutex_lock(&wr->mu);
	for (i = wr->rinflight ? 1 : 0; i < wr->rlen; i++) {
		struct hp_record *q = wr->rq[(wr->rhead + i) % wr->rcap];

		if (q->id == r->id) {
			*q = *r;
			pthread_mutex_unlock(&wr->mu);
			free(c);
			return 0;
		}
	}
	if (wr->rlen == wr->rcap) {
		wr->rec_dropped++;
		pthread_mutex_unlock(&wr->mu);
		free(c);
		return -ENOBUFS;
	}
	wr->rq[(wr->rhead + wr->rlen) % wr->rcap] = c;
	wr->rlen++;
	pthread_cond_signal(&wr->cv);
	pthread_mutex_unlock(&wr->mu);
	return 0;
}

void
writer_hp_stats(struct writer *wr, struct writer_rec_stats *ret)
{
	pthread_mutex_lock(&wr->mu);
	ret->queued = wr->rlen;
	ret->written = wr->rec_written;
	ret->dropped = wr->rec_dropped;
	ret->failed = wr->rec_failed;
	pthread_mutex_unlock(&wr->mu);
}

/*
 * Wait (at most ms) until every queued window and record is committed:
 * for a stopping daemon (the loop has ended) and tests; the loop hears of
 * commits through writer_each_done instead. A failing store is not waited
 * for (what is queued stays queued); -ETIMEDOUT: the commit took longer.
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
	while ((wr->qlen > 0 || wr->rlen > 0) && !wr->stopping && r == 0) {
		if (wr->stats.state != STORE_OK) {
			r = -EAGAIN;
			break;
		}
		if (pthread_cond_timedwait(&wr->done_cv, &wr->mu, &ts) ==
		    ETIMEDOUT)
			r = -ETIMEDOUT;
	}
	if (r == -ETIMEDOUT && wr->qlen == 0 && wr->rlen == 0)
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

void
writer_trims(struct writer *wr, uint32_t *ret_n, uint64_t *ret_bytes)
{
	pthread_mutex_lock(&wr->mu);
	*ret_n = wr->trims;
	*ret_bytes = wr->trimmed;
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
	for (i = 0; i < wr->qcap; i++) {
		window_free(wr->q[i].w);
		free(wr->q[i].note);
	}
	window_free(wr->held);
	for (i = 0; i < wr->rcap; i++)
		free(wr->rq[i]);
	for (i = 0; i < wr->ndone; i++)
		free(wr->done[i].note);
	free(wr->done);
	if (wr->efd >= 0)
		close(wr->efd);
	pthread_cond_destroy(&wr->cv);
	pthread_cond_destroy(&wr->done_cv);
	pthread_mutex_destroy(&wr->mu);
	free(wr->q);
	free(wr->rq);
	free(wr);
	return NULL;
}
