/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Store reads for the control plane, on a thread of their own: a range of
 * windows or a top-N over an hour can take tens of milliseconds of SQLite,
 * which the loop (and so the sampling timer) must never wait for. This
 * file is the pool (queues, fairness, sharing, answers back to the loop);
 * what one request reads and answers is query_run.c.
 *
 * The loop submits a resolved request into a bounded queue (full: the
 * caller answers STATUS_BUSY); the thread runs it, packs the whole answer
 * frame and puts it on a done list, then writes an eventfd registered in
 * the event base. The loop drains the done list and hands each frame to
 * the control plane by connection id: a job never points at a connection,
 * so one that closed meanwhile simply gets no answer (and its queued jobs
 * are cancelled when it closes).
 *
 * Clients tend to ask the same thing at once ("top 20 over the last
 * hour", from every `vitals top` on every shell): a request equal to one
 * still queued joins it instead of taking a slot, and the one answer goes
 * to each with its own id; a request equal to one answered less than
 * QUERY_JOIN_SLACK_NS ago gets that answer at once (a few recent answers are
 * kept). "Equal" allows ranges ending "now" to differ by QUERY_JOIN_SLACK_NS,
 * so an answer is never staler than that.
 *
 * A small pool of threads runs the reads, each on a read-only connection
 * of its own (store_conn.c), opened at the thread's first read unless the
 * pool warms at start (no_warm false; doc/storage.md, "The read pool
 * opened on demand"): in WAL mode readers wait neither for each
 * other nor for the writer, so no read takes the writer's lock and a
 * roll-up pass delays none. Fairness: every caller uid has a queue of its
 * own, capped (STATUS_BUSY beyond), and the threads take from the uids in
 * turn; one uid never holds every thread while another waits, so a flood
 * from one caller delays another's read by at most one read in progress.
 *
 * Memory: a windows read loads at most `budget` bytes of windows (counted
 * as they load) and answers with the newest that fit, marked truncated;
 * after a big read the thread gives the memory back to the system.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "control/control.h"
#include "core/compat.h"
#include "core/loopstat.h"
#include "core/util.h"
#include "rpc/rpc.h"
#include "store/store.h"

#define RECENT_SLOTS 8 /* recent answers kept for reuse */
#define QUERY_NICE 10  /* the query threads' nice value */
#define QUERY_THREADS_MAX 16
_Static_assert(QUERY_THREADS_MAX <= STORE_READERS_MAX,
    "every read thread can be lent the writer's priority");
#define TRIM_AFTER (1u << 20) /* an answer this big: memory back after */
#define QUERY_IDLE_S 30	      /* a reader's memory released after this idle */

/* One requester of a job, and its answer once the job has run. */
struct waiter {
	uint64_t conn_id;
	uint32_t tag;
	uint64_t id; /* the request id its answer carries */
	uint8_t *frame;
	size_t len;
};

struct query_job {
	struct query_job *next;
	uint32_t uid;	     /* who asked first: the queue it waits in */
	struct rpc_query rq; /* rq.id 0: the answer is stamped per waiter */
	struct waiter *w;    /* fixed once the job leaves the queue */
	unsigned nw, capw;
	uint8_t *frame; /* the answer with id 0, for reuse */
	size_t len;
};

/* A recent answer (loop thread only). */
struct recent {
	struct rpc_query rq;
	int64_t at_ns; /* CLOCK_MONOTONIC when it came back */
	uint8_t *frame;
	size_t len;
};

struct job_list {
	struct query_job *head, **tail;
	unsigned n;
};

/* The reads one caller uid has queued (under mu). */
struct uid_queue {
	uint32_t uid;
	struct job_list todo;
	unsigned running;
};

struct worker {
	pthread_t thread;
	struct query *q;
	struct store *rc; /* its read-only connection */
	bool started;
	struct store_cache_stats cs; /* rc's caches after its last read (mu) */
	bool has_file; /* rc's file open after its last read (mu) */
};

struct query {
	struct worker w[QUERY_THREADS_MAX];
	unsigned nthreads;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct uid_queue **uq; /* under mu */
	unsigned nuq, capuq, rr;
	unsigned queued;      /* jobs in every uid queue */
	struct job_list done; /* under mu */
	unsigned queue_max, uid_queue, uid_running;
	bool stopping;
	bool hold; /* tests: a job taken waits before it runs */
	uint64_t runs, ns_max, budget_cut; /* under mu */
	uint64_t idle_closed;		   /* under mu */
	uint64_t warmed, warm_ns;	   /* under mu: warm reads, Σ time */
	unsigned warm_ended; /* under mu: threads past their warm read */
	unsigned idle_open;  /* under mu: threads waiting, file open */
	bool no_warm;	     /* connections opened at need, no warm read */
	unsigned idle_s; /* a reader's connection released after this idle */
	int nice;	 /* the read threads' nice value */
	struct store *store;
	char *proc_root; /* a quiet process's identity; NULL: none */
	uint32_t max_frame;
	size_t budget;
	int efd;
	struct event *ev;
	query_done_fn done_fn;
	void *arg;
	struct recent recent[RECENT_SLOTS]; /* loop thread only */
	unsigned recent_next;
	uint64_t shared; /* loop thread only */
};

static void
list_init(struct job_list *l)
{
	l->head = NULL;
	l->tail = &l->head;
	l->n = 0;
}

static void
list_push(struct job_list *l, struct query_job *j)
{
	j->next = NULL;
	*l->tail = j;
	l->tail = &j->next;
	l->n++;
}

static struct query_job *
list_pop(struct job_list *l)
{
	struct query_job *j = l->head;

	if (j == NULL)
		return NULL;
	if ((l->head = j->next) == NULL)
		l->tail = &l->head;
	l->n--;
	return j;
}

static void
job_free(struct query_job *j)
{
	unsigned i;

	for (i = 0; i < j->nw; i++)
		free(j->w[i].frame);
	free(j->w);
	free(j->frame);
	free(j);
}

static void
list_free(struct job_list *l)
{
	struct query_job *j;

	while ((j = list_pop(l)) != NULL)
		job_free(j);
}

static int
job_add_waiter(struct query_job *j, uint64_t conn_id, uint32_t tag, uint64_t id)
{
	if (j->nw == j->capw) {
		unsigned nc = j->capw ? j->capw * 2 : 2;
		struct waiter *w = realloc(j->w, nc * sizeof(*w));

		if (w == NULL)
			return -ENOMEM;
		j->w = w;
		j->capw = nc;
	}
	j->w[j->nw++] =
	    (struct waiter){ .conn_id = conn_id, .tag = tag, .id = id };
	return 0;
}

/* a read connection's cache counts added to acc (under mu) */
static void
cache_add(struct store_cache_stats *acc, const struct store_cache_stats *x)
{
	acc->hits += x->hits;
	acc->misses += x->misses;
	acc->memo_hits += x->memo_hits;
	acc->memo_saved += x->memo_saved;
	acc->bytes += x->bytes;
	acc->opens += x->opens;
}

/* Run a job on the worker's connection and stamp its answer for every
 * waiter; a waiter left without a frame has its connection closed by the
 * loop. */
static void
job_run(struct worker *wk, struct query_job *j, bool *ret_cut)
{
	struct query *q = wk->q;
	uint8_t *frame = NULL;
	size_t len = 0;
	unsigned i;
	int r;

	*ret_cut = false;
	if ((r = store_conn_begin(wk->rc)) < 0)
		r = query_store_error(&j->rq, wk->rc, r, &frame, &len);
	else {
		r = query_run_budget(wk->rc, q->proc_root, &j->rq, q->max_frame,
		    q->budget, ret_cut, &frame, &len);
		store_conn_end(wk->rc);
	}
	if (r < 0 &&
	    rpc_error_frame(0, RPC_ERROR, strerror(-r), &frame, &len) < 0)
		return;
	for (i = 0; i < j->nw; i++) {
		struct waiter *w = &j->w[i];

		if (rpc_frame_reid(frame, len, w->id, &w->frame, &w->len) < 0)
			w->frame = NULL;
	}
	j->frame = frame;
	j->len = len;
}

/* Keep a job's answer for requests that follow close behind. */
static void
recent_put(struct query *q, struct query_job *j)
{
	struct recent *r = &q->recent[q->recent_next++ % RECENT_SLOTS];

	if (j->frame == NULL)
		return;
	free(r->frame);
	r->rq = j->rq;
	r->at_ns = clock_ns(CLOCK_MONOTONIC);
	r->frame = j->frame;
	r->len = j->len;
	j->frame = NULL;
}

/* 1 and the answer when an equal request was answered under
 * QUERY_JOIN_SLACK_NS ago; 0 when none was. Loop thread. */
int
query_cached(struct query *q, const struct rpc_query *rq, uint8_t **ret,
    size_t *ret_len)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	unsigned i;
	int r;

	for (i = 0; i < RECENT_SLOTS; i++) {
		struct recent *e = &q->recent[i];

		if (e->frame == NULL || now - e->at_ns > QUERY_JOIN_SLACK_NS ||
		    !query_same(&e->rq, rq))
			continue;
		if ((r = rpc_frame_reid(e->frame, e->len, rq->id, ret,
			 ret_len)) < 0)
			return r;
		q->shared++;
		return 1;
	}
	return 0;
}

/* The queue of uid (under mu); NULL when it has none. */
static struct uid_queue *
uq_find(struct query *q, uint32_t uid)
{
	unsigned i;

	for (i = 0; i < q->nuq; i++)
		if (q->uq[i]->uid == uid)
			return q->uq[i];
	return NULL;
}

static struct uid_queue *
uq_get(struct query *q, uint32_t uid)
{
	struct uid_queue *u, **p;

	if ((u = uq_find(q, uid)) != NULL)
		return u;
	if (q->nuq == q->capuq) {
		unsigned nc = q->capuq ? q->capuq * 2 : 8;

		if ((p = realloc(q->uq, nc * sizeof(*p))) == NULL)
			return NULL;
		q->uq = p;
		q->capuq = nc;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL)
		return NULL;
	u->uid = uid;
	list_init(&u->todo);
	q->uq[q->nuq++] = u;
	return u;
}

/* A uid with nothing queued or running leaves the rotation. */
static void
uq_gc(struct query *q)
{
	unsigned i, k;

	for (i = k = 0; i < q->nuq; i++) {
		if (q->uq[i]->todo.n == 0 && q->uq[i]->running == 0) {
			free(q->uq[i]);
			continue;
		}
		q->uq[k++] = q->uq[i];
	}
	q->nuq = k;
	if (q->rr >= k)
		q->rr = 0;
}

/*
 * The next uid in turn with a job and a thread to spare (under mu). A uid
 * already running uid_running reads (all threads but one) takes the last
 * thread too when no other uid has a read queued: the thread kept for the
 * others would otherwise idle while one caller's reads wait (32 clients of
 * one uid got half the pool). A uid that comes later waits for at most one
 * read in progress, and the next free thread is its.
 */
static struct query_job *
next_job(struct query *q, uint32_t *ret_uid)
{
	unsigned i, k, pick = q->nuq;

	for (i = 0; i < q->nuq; i++) {
		struct uid_queue *u = q->uq[k = (q->rr + i) % q->nuq];

		if (u->todo.n == 0)
			continue;
		if (u->running < q->uid_running) {
			pick = k;
			break;
		}
		if (pick == q->nuq)
			pick = k; /* capped: only if nobody else waits */
	}
	if (pick < q->nuq) {
		struct uid_queue *u = q->uq[k = pick];

		q->rr = (k + 1) % q->nuq;
		u->running++;
		q->queued--;
		*ret_uid = u->uid;
		return list_pop(&u->todo);
	}
	return NULL;
}

/*
 * A connection's first read decodes every summary and edge window of its
 * range into the connection's caches and faults their memory in: 10-15
 * ms where the reads after it take under 1 ms (bench/README.md, "The
 * first burst warmed"). So before its first job each thread makes the
 * read callers ask most, top-20 of processes by CPU over the last hour,
 * and the first burst of callers finds its connection warm. A job that
 * comes meanwhile waits for it, as behind any read. Counted when it
 * succeeds (warmed, warm_ns); a failure is the next job's to meet.
 */
static void
warm(struct worker *wk)
{
	struct query *q = wk->q;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), now = clock_ns(CLOCK_REALTIME);
	struct window_task *t = NULL;
	struct store_cache_stats cs;
	size_t n = 0;
	int r;

	if (store_conn_begin(wk->rc) < 0)
		return;
	r = store_top(wk->rc, now - 3600 * NSEC_PER_SEC, now, false, METRIC_CPU,
	    20, &t, &n);
	store_conn_end(wk->rc);
	free(t);
	if (r < 0)
		return;
	store_conn_cache_stats(wk->rc, &cs);
	pthread_mutex_lock(&q->mu);
	q->warmed++;
	q->warm_ns += (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
	wk->cs = cs;
	wk->has_file = store_conn_has_file(wk->rc);
	pthread_mutex_unlock(&q->mu);
}

static void *
query_main(void *arg)
{
	struct worker *wk = arg;
	struct query *q = wk->q;
	const uint64_t one = 1;

	/* Reads yield the CPU to sampling (the loop thread) on a busy
	 * machine; raising one's own nice value needs no privilege. */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), q->nice);
	(void)prctl(PR_SET_NAME, "vitalsd-query", 0, 0, 0);
	/* a move waiting for this thread's read lends it the writer's
	 * priority (store_busy.c); given back after the read */
	store_busy_reader(true);
	if (!q->no_warm)
		warm(wk);
	pthread_mutex_lock(&q->mu);
	q->warm_ended++;
	pthread_cond_broadcast(&q->cv); /* query_warm_wait */
	for (;;) {
		struct query_job *j = NULL;
		struct uid_queue *u;
		struct store_cache_stats cs;
		int64_t t0, ns;
		uint32_t uid = 0;
		bool cut;

		for (;;) {
			bool has = store_conn_has_file(wk->rc);
			struct timespec ts;
			int rc_;

			if (q->stopping)
				break;
			/* a thread with no connection yet leaves the job to
			 * an idle one that has one: a second connection
			 * opens only when reads overlap */
			if ((has || q->idle_open == 0) &&
			    (j = next_job(q, &uid)) != NULL)
				break;
			q->idle_open += has;
			if (!store_conn_is_open(wk->rc)) {
				pthread_cond_wait(&q->cv, &q->mu);
				q->idle_open -= has;
				continue;
			}
			/* idle: its connection's decoded windows, memos,
			 * statements and page cache go after idle_s
			 * without a read; the file, the spool and the
			 * views stay open (~0.2 MiB), which the next read
			 * would take ~4 ms to open again */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += q->idle_s;
			rc_ = pthread_cond_timedwait(&q->cv, &q->mu, &ts);
			q->idle_open -= has;
			if (rc_ != ETIMEDOUT)
				continue;
			pthread_mutex_unlock(&q->mu);
			store_conn_idle(wk->rc);
			compat_heap_release();
			/* read back, not assumed: the counts stay in the
			 * handle, the bytes are what the release left */
			store_conn_cache_stats(wk->rc, &cs);
			pthread_mutex_lock(&q->mu);
			q->idle_closed++;
			wk->cs = cs;
		}
		/* more queued: a thread that left them to this one (no
		 * connection yet) looks again, now that this one is busy */
		if (j != NULL && q->queued > 0)
			pthread_cond_broadcast(&q->cv);
		while (q->hold && !q->stopping)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stopping) {
			if (j != NULL)
				job_free(j);
			break;
		}
		pthread_mutex_unlock(&q->mu);

		t0 = clock_ns(CLOCK_MONOTONIC);
		job_run(wk, j, &cut);
		ns = clock_ns(CLOCK_MONOTONIC) - t0;
		store_conn_cache_stats(wk->rc, &cs);
		if (store_busy_unlend())
			(void)setpriority(PRIO_PROCESS, (id_t)gettid(),
			    q->nice);
		/* A big answer: give its pages back rather than keep them
		 * (the allocator keeps freed heap in the thread's arena). */
		if (cut || j->len >= TRIM_AFTER)
			compat_heap_release();

		pthread_mutex_lock(&q->mu);
		if ((u = uq_find(q, uid)) != NULL && u->running > 0)
			u->running--;
		uq_gc(q);
		q->runs++;
		wk->cs = cs;
		wk->has_file = store_conn_has_file(wk->rc);
		if (cut)
			q->budget_cut++;
		if ((uint64_t)ns > q->ns_max)
			q->ns_max = (uint64_t)ns;
		list_push(&q->done, j);
		/* Another thread may now take this uid's next job. */
		pthread_cond_broadcast(&q->cv);
		/* An eventfd write fails only when the counter would
		 * overflow: the loop wakes regardless. */
		(void)!write(q->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&q->mu);
	if (store_busy_unlend())
		(void)setpriority(PRIO_PROCESS, (id_t)gettid(), q->nice);
	store_busy_reader(false);
	return NULL;
}

static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct query *q = arg;
	struct job_list l;
	struct query_job *j;
	uint64_t v;

	(void)what;
	int64_t t0 = loopstat_begin();

	(void)!read(fd, &v, sizeof(v));
	pthread_mutex_lock(&q->mu);
	l = q->done;
	if (l.head == NULL)
		list_init(&l);
	list_init(&q->done);
	pthread_mutex_unlock(&q->mu);
	while ((j = list_pop(&l)) != NULL) {
		unsigned i;

		for (i = 0; i < j->nw; i++) {
			q->done_fn(j->w[i].conn_id, j->w[i].tag, j->w[i].frame,
			    j->w[i].len, q->arg);
			j->w[i].frame = NULL;
		}
		recent_put(q, j);
		job_free(j);
	}
	loopstat_end("query answer", t0);
}

/*
 * Until every thread's warm read has ended, at most max_ns: set-up's last
 * pageout (daemon.c, vitalsd_pageout) runs after it, so the pages the
 * warm reads mapped (SQLite's read paths, the readers' code) are given
 * back with set-up's and not held until the first settling pass, in
 * front of the first window's close. A read that takes longer is not
 * waited for.
 */
void
query_warm_wait(struct query *q, int64_t max_ns)
{
	struct timespec ts;
	int64_t end;
	int rc = 0;

	if (q == NULL || q->no_warm)
		return;
	end = clock_ns(CLOCK_MONOTONIC) + max_ns;
	ts.tv_sec = (time_t)(end / NSEC_PER_SEC);
	ts.tv_nsec = (long)(end % NSEC_PER_SEC);
	pthread_mutex_lock(&q->mu);
	/* woken early: wait on; timed out or any error: no more waiting */
	while (q->warm_ended < q->nthreads && !q->stopping && rc == 0)
		rc = pthread_cond_timedwait(&q->cv, &q->mu, &ts);
	pthread_mutex_unlock(&q->mu);
}

int
query_new_pool(struct event_base *base, struct store *store,
    const struct query_opts *o, int priority, query_done_fn done, void *arg,
    struct query **ret)
{
	struct query *q;
	unsigned i;
	int r;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return -ENOMEM;
	q->efd = -1;
	list_init(&q->done);
	q->nthreads = o->threads ? o->threads : 2;
	if (q->nthreads > QUERY_THREADS_MAX)
		q->nthreads = QUERY_THREADS_MAX;
	q->queue_max = o->queue_max ? o->queue_max : 64;
	q->uid_queue = o->uid_queue ? o->uid_queue : 16;
	/* One thread is always left for the other callers. */
	q->uid_running = q->nthreads > 1 ? q->nthreads - 1 : 1;
	q->store = store;
	q->max_frame = o->max_frame;
	q->budget = o->budget;
	q->idle_s = o->idle_s ? o->idle_s : QUERY_IDLE_S;
	q->no_warm = o->no_warm;
	q->nice = o->nice_set && o->nice >= 0 && o->nice <= 19 ? o->nice :
								 QUERY_NICE;
	if (o->proc_root && (q->proc_root = strdup(o->proc_root)) == NULL) {
		free(q);
		return -ENOMEM;
	}
	q->done_fn = done;
	q->arg = arg;
	pthread_mutex_init(&q->mu, NULL);
	{
		/* the idle close's deadline on the monotonic clock: a step
		 * of the wall clock neither hastens nor delays it */
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&q->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	if ((q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		r = -errno;
		goto fail;
	}
	q->ev = event_new(base, q->efd, EV_READ | EV_PERSIST, done_cb, q);
	if (q->ev == NULL || event_priority_set(q->ev, priority) < 0 ||
	    event_add(q->ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < q->nthreads; i++) {
		struct worker *wk = &q->w[i];

		wk->q = q;
		/* warmed: opened now; else at the thread's first read */
		if (q->no_warm)
			r = store_conn_new(store, &wk->rc);
		else
			r = store_conn_open(store, &wk->rc);
		if (r < 0)
			goto fail;
		wk->has_file = store_conn_has_file(wk->rc);
		if ((r = pthread_create(&wk->thread, NULL, query_main, wk)) !=
		    0) {
			r = -r;
			goto fail;
		}
		wk->started = true;
	}
	*ret = q;
	return 0;
fail:
	query_free(q);
	return r;
}

int
query_new(struct event_base *base, struct store *store, unsigned queue_max,
    uint32_t max_frame, int priority, query_done_fn done, void *arg,
    struct query **ret)
{
	struct query_opts o = { .threads = 1,
		.queue_max = queue_max,
		.uid_queue = queue_max,
		.max_frame = max_frame };

	return query_new_pool(base, store, &o, priority, done, arg, ret);
}

/* Abandon what is queued, wait for the reads in progress, free. */
struct query *
query_free(struct query *q)
{
	unsigned i;

	if (q == NULL)
		return NULL;
	pthread_mutex_lock(&q->mu);
	q->stopping = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	for (i = 0; i < QUERY_THREADS_MAX; i++) {
		if (q->w[i].started)
			pthread_join(q->w[i].thread, NULL);
		q->w[i].rc = store_conn_close(q->w[i].rc);
	}
	for (i = 0; i < q->nuq; i++) {
		list_free(&q->uq[i]->todo);
		free(q->uq[i]);
	}
	free(q->uq);
	list_free(&q->done);
	for (i = 0; i < RECENT_SLOTS; i++)
		free(q->recent[i].frame);
	if (q->ev)
		event_free(q->ev);
	if (q->efd >= 0)
		close(q->efd);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q->proc_root);
	free(q);
	return NULL;
}

/*
 * Queue a read for uid. A read equal to one queued (by anyone) joins it;
 * otherwise -EBUSY when uid already has uid_queue reads queued, or all
 * uids together queue_max.
 */
int
query_submit_uid(struct query *q, uint64_t conn_id, uint32_t uid, uint32_t tag,
    const struct rpc_query *rq)
{
	struct query_job *j;
	struct uid_queue *u;
	struct rpc_query key = *rq;
	unsigned i;
	int r;

	key.id = 0;
	pthread_mutex_lock(&q->mu);
	for (i = 0; i < q->nuq; i++)
		for (j = q->uq[i]->todo.head; j != NULL; j = j->next)
			if (query_same(&j->rq, &key)) {
				if ((r = job_add_waiter(j, conn_id, tag,
					 rq->id)) == 0)
					q->shared++;
				pthread_mutex_unlock(&q->mu);
				return r;
			}
	u = uq_find(q, uid);
	if (q->queued >= q->queue_max ||
	    (u != NULL && u->todo.n >= q->uid_queue)) {
		pthread_mutex_unlock(&q->mu);
		return -EBUSY;
	}
	if ((u = uq_get(q, uid)) == NULL ||
	    (j = calloc(1, sizeof(*j))) == NULL) {
		uq_gc(q);
		pthread_mutex_unlock(&q->mu);
		return -ENOMEM;
	}
	if (job_add_waiter(j, conn_id, tag, rq->id) < 0) {
		uq_gc(q);
		pthread_mutex_unlock(&q->mu);
		free(j);
		return -ENOMEM;
	}
	j->rq = key;
	j->uid = uid;
	list_push(&u->todo, j);
	q->queued++;
	/* every thread waits on this one condition, some for a job and some
	 * (query_hold) with one: a signal could wake only a holder, which
	 * waits again, and leave the job queued with a reader idle */
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int
query_submit(struct query *q, uint64_t conn_id, uint32_t tag,
    const struct rpc_query *rq)
{
	return query_submit_uid(q, conn_id, 0, tag, rq);
}

/* A closed connection leaves the queued jobs it waits on (a job nobody
 * waits on is dropped); a running job finishes and the control plane
 * discards the answer. */
void
query_cancel(struct query *q, uint64_t conn_id)
{
	struct query_job *j, *next;
	unsigned i, k, u;

	pthread_mutex_lock(&q->mu);
	for (u = 0; u < q->nuq; u++) {
		struct job_list *l = &q->uq[u]->todo;

		j = l->head;
		list_init(l);
		for (; j != NULL; j = next) {
			next = j->next;
			for (i = k = 0; i < j->nw; i++)
				if (j->w[i].conn_id != conn_id)
					j->w[k++] = j->w[i];
			j->nw = k;
			if (j->nw == 0) {
				job_free(j);
				q->queued--;
			} else {
				list_push(l, j);
			}
		}
	}
	uq_gc(q);
	pthread_mutex_unlock(&q->mu);
}

/* Tests: hold the jobs the threads take before they run (a read that
 * takes long, without depending on how long), or let them go. */
void
query_hold(struct query *q, bool hold)
{
	pthread_mutex_lock(&q->mu);
	q->hold = hold;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void
query_get_stats(struct query *q, struct control_stats *ret)
{
	struct store_cache_stats cs;
	unsigned i;

	pthread_mutex_lock(&q->mu);
	memset(&cs, 0, sizeof(cs));
	ret->readers_open = 0;
	for (i = 0; i < q->nthreads; i++) {
		cache_add(&cs, &q->w[i].cs);
		ret->readers_open += q->w[i].has_file;
	}
	ret->rc_hits = cs.hits;
	ret->rc_misses = cs.misses;
	ret->rc_memo_hits = cs.memo_hits;
	ret->rc_memo_saved = cs.memo_saved;
	ret->rc_bytes = cs.bytes;
	ret->readers_opened = cs.opens;
	ret->queries = q->runs;
	ret->query_ns_max = q->ns_max;
	ret->queries_queued = q->queued;
	ret->queries_budget_cut = q->budget_cut;
	ret->readers_idle_closed = q->idle_closed;
	ret->readers_warmed = q->warmed;
	ret->readers_warm_ns = q->warm_ns;
	pthread_mutex_unlock(&q->mu);
	ret->queries_shared = q->shared;
	ret->query_threads = q->nthreads;
}
