/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Waiting on the main file's locks (doc/storage.md, "The main file's
 * journal"). With a rollback journal a reader holds SHARED for its
 * request and a batched move needs EXCLUSIVE to commit: the move waits
 * for the readers in flight, and a reader that comes while the move holds
 * PENDING or EXCLUSIVE waits for the commit. SQLite's own busy timeout
 * sleeps 1, 2, 5, 10 ms ... between tries, so a reader would oversleep a
 * commit of a few ms by as much again; this handler tries every 50 µs at
 * first, doubling up to 1 ms, until the connection's busy timeout. What
 * it slept is added to the connection (busy_ns); the callers turn the
 * difference across a move or a read snapshot into one wait, counted
 * here process-wide (powers-of-two buckets of µs: the 99th percentile is
 * the upper edge of its bucket).
 */
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "store/store.h"
#include "store_int.h"

#define BUCKETS 32
#define FIRST_US 50
#define CAP_US 1000

struct waits {
	uint64_t n, waited, sum_ns, max_ns;
	uint64_t bucket[BUCKETS]; /* bucket i: waits < 2^i µs */
};

static struct waits move_waits, read_waits;

/* The read threads (store_busy_reader); a tid leaves under the lock, so
 * the writer never sets the priority of a tid reused by another task. */
static pthread_mutex_t readers_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t reader_tid[STORE_READERS_MAX];
static bool reader_lent[STORE_READERS_MAX]; /* under readers_mu */
static bool reader_in[STORE_READERS_MAX];   /* in a snapshot: the same */
static uint64_t lent, denied;		    /* under readers_mu */

void
store_busy_reader(bool on)
{
	pid_t me = gettid();
	unsigned i;

	pthread_mutex_lock(&readers_mu);
	for (i = 0; i < STORE_READERS_MAX; i++)
		if (on ? reader_tid[i] == 0 : reader_tid[i] == me) {
			reader_tid[i] = on ? me : 0;
			reader_lent[i] = false;
			reader_in[i] = false;
			break;
		}
	pthread_mutex_unlock(&readers_mu);
}

/* A registered read thread takes or lets go of its read snapshot (its
 * SHARED lock on the main file): only then can a lend help the writer. */
void
store_busy_reading(bool on)
{
	pid_t me = gettid();
	unsigned i;

	pthread_mutex_lock(&readers_mu);
	for (i = 0; i < STORE_READERS_MAX; i++)
		if (reader_tid[i] == me) {
			reader_in[i] = on;
			break;
		}
	pthread_mutex_unlock(&readers_mu);
}

bool
store_busy_unlend(void)
{
	pid_t me = gettid();
	bool was = false;
	unsigned i;

	pthread_mutex_lock(&readers_mu);
	for (i = 0; i < STORE_READERS_MAX; i++)
		if (reader_tid[i] == me) {
			was = reader_lent[i];
			reader_lent[i] = false;
			break;
		}
	pthread_mutex_unlock(&readers_mu);
	return was;
}

/* The writer starts to wait for a reader: its priority to every reader
 * in a snapshot whose own is lower (a higher nice value). */
static void
lend(void)
{
	int mine, theirs;
	unsigned i;

	errno = 0;
	mine = getpriority(PRIO_PROCESS, 0); /* this thread's */
	if (mine == -1 && errno != 0)
		return;
	pthread_mutex_lock(&readers_mu);
	for (i = 0; i < STORE_READERS_MAX; i++) {
		if (reader_tid[i] == 0 || reader_lent[i] || !reader_in[i])
			continue;
		errno = 0;
		theirs = getpriority(PRIO_PROCESS, (id_t)reader_tid[i]);
		if ((theirs == -1 && errno != 0) || theirs <= mine)
			continue;
		if (setpriority(PRIO_PROCESS, (id_t)reader_tid[i], mine) < 0) {
			denied++;
			continue;
		}
		reader_lent[i] = true;
		lent++;
	}
	pthread_mutex_unlock(&readers_mu);
}

void
store_busy_lend_stats(uint64_t *ret_lent, uint64_t *ret_denied)
{
	pthread_mutex_lock(&readers_mu);
	*ret_lent = lent;
	*ret_denied = denied;
	pthread_mutex_unlock(&readers_mu);
}

int
store_busy_cb(void *arg, int count)
{
	struct store *s = arg;
	int64_t t0, limit_ns, us;
	struct timespec ts;

	if (count == 0) {
		s->busy_start_ns = clock_ns(CLOCK_MONOTONIC);
		/* the writer's connection waits: for a reader's lock */
		if (s->writer == NULL)
			lend();
	}
	limit_ns = (int64_t)(s->o.busy_timeout_ms > 0 ? s->o.busy_timeout_ms :
							1000) *
	    1000000;
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (t0 - s->busy_start_ns >= limit_ns)
		return 0; /* SQLITE_BUSY to the caller */
	us = count < 5 ? FIRST_US << count : CAP_US;
	if (us > CAP_US)
		us = CAP_US;
	ts.tv_sec = 0;
	ts.tv_nsec = us * 1000;
	nanosleep(&ts, NULL);
	t0 = clock_ns(CLOCK_MONOTONIC) - t0;
	s->busy_ns += (uint64_t)t0;
	store_tclock_add_lock((uint64_t)t0); /* this thread's lock wait */
	return 1;
}

void
store_busy_set(struct store *s)
{
	if (s->db == NULL)
		return;
	/* the writer with no timeout: BUSY at once, as SQLite's own */
	if (s->writer == NULL && s->o.busy_timeout_ms <= 0)
		sqlite3_busy_handler(s->db, NULL, NULL);
	else
		sqlite3_busy_handler(s->db, store_busy_cb, s);
}

/* One wait (of 0 ns when nothing had to wait), counted. */
void
store_busy_note(bool move, uint64_t ns)
{
	struct waits *w = move ? &move_waits : &read_waits;
	uint64_t us = ns / 1000, max;
	unsigned i = 0;

	while (i < BUCKETS - 1 && us >= (1ULL << i))
		i++;
	__atomic_add_fetch(&w->n, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->bucket[i], 1, __ATOMIC_RELAXED);
	if (ns == 0)
		return;
	__atomic_add_fetch(&w->waited, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->sum_ns, ns, __ATOMIC_RELAXED);
	max = __atomic_load_n(&w->max_ns, __ATOMIC_RELAXED);
	while (ns > max &&
	    !__atomic_compare_exchange_n(&w->max_ns, &max, ns, false,
		__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void
get(struct waits *w, struct store_wait *ret)
{
	uint64_t seen = 0, b;
	unsigned i;

	ret->n = __atomic_load_n(&w->n, __ATOMIC_RELAXED);
	ret->waited = __atomic_load_n(&w->waited, __ATOMIC_RELAXED);
	ret->sum_ns = __atomic_load_n(&w->sum_ns, __ATOMIC_RELAXED);
	ret->max_ns = __atomic_load_n(&w->max_ns, __ATOMIC_RELAXED);
	ret->p99_ns = 0;
	for (i = 0; i < BUCKETS && ret->n > 0; i++) {
		b = __atomic_load_n(&w->bucket[i], __ATOMIC_RELAXED);
		seen += b;
		if (seen * 100 >= ret->n * 99) {
			/* bucket 0 holds the waits under 1 µs: none at all */
			ret->p99_ns = i == 0 ? 0 : (1ULL << i) * 1000;
			break;
		}
	}
	if (ret->p99_ns > ret->max_ns)
		ret->p99_ns = ret->max_ns;
}

void
store_busy_stats(struct store_wait *ret_move, struct store_wait *ret_read)
{
	if (ret_move)
		get(&move_waits, ret_move);
	if (ret_read)
		get(&read_waits, ret_read);
}

void
store_busy_reset(void)
{
	struct waits z = { 0 };

	/* tests and benchmarks, with no move or read under way */
	move_waits = z;
	read_waits = z;
}
