/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Everything at once against one daemon (bench/load_bench.sh drives it):
 *
 *   load_bench SOCKET SECONDS GOOD LORIS UID... (root)
 *	GOOD well-behaved clients spread over the UIDs but the last (one
 *	child process per uid, setuid to it, a thread per client, each a
 *	top-20 over the last hour or a summary about once a second on a
 *	connection of its own); LORIS slowloris connections from the last
 *	uid (half trickle a frame one byte every 300 ms, half connect and
 *	say nothing), and a query flood from that last uid too: 8
 *	connections each keeping 4 distinct windows/top reads in flight.
 *	The parent (root) polls health every 500 ms and sums the tick
 *	lateness histogram of every window that closes.
 *
 * Prints the sampling jitter (tick lateness p99 and max), the
 * well-behaved readers' p50/p99/max and the BUSY and refused counts.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "vitalsd.h"

#define MAX_LAT 200000
#define FLOOD_CONNS 8
#define FLOOD_DEPTH 4

static const char *sock_path;
static volatile int stop;

static int64_t
now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int
connect_sock(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

static int
send_req(int fd, const Vitals__Request *req)
{
	uint8_t *buf;
	size_t len;
	int r;

	if ((r = frame_pack_request(req, &buf, &len)) < 0)
		return r;
	r = frame_send(fd, buf, len, 10000);
	free(buf);
	return r;
}

/* The status of the next answer, or -errno. */
static int
recv_status(int fd)
{
	Vitals__Response *resp;
	uint8_t *buf;
	size_t len;
	int r;

	if ((r = frame_recv(fd, 64u << 20, 10000, &buf, &len)) < 0)
		return r;
	resp = frame_unpack_response(buf, len);
	free(buf);
	if (resp == NULL)
		return -EBADMSG;
	r = (int)resp->status;
	vitals__response__free_unpacked(resp, NULL);
	return r;
}

/* Counters one child reports to the parent through a pipe. */
struct tally {
	uint64_t ok, busy, errors, refused, loris_closed, flood_busy, flood_ok;
	uint32_t nlat;
};

static struct tally tl;
static pthread_mutex_t tl_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t *lat;

static void
note(int64_t ns, int status)
{
	pthread_mutex_lock(&tl_mu);
	if (status == VITALS__STATUS__STATUS_OK) {
		tl.ok++;
		if (tl.nlat < MAX_LAT)
			lat[tl.nlat++] = ns;
	} else if (status == VITALS__STATUS__STATUS_BUSY) {
		tl.busy++;
	} else if (status == -ECONNREFUSED || status == -ECONNRESET ||
	    status == -EPIPE) {
		tl.refused++;
	} else {
		tl.errors++;
	}
	pthread_mutex_unlock(&tl_mu);
}

static void *
good_main(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__SnapshotRequest snap = VITALS__SNAPSHOT_REQUEST__INIT;
	Vitals__TopRequest top = VITALS__TOP_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	uint64_t id = 0;
	int fd = -1, r;

	req.version = 1;
	snap.top_n = 10;
	tr.since_ns = 3600 * NSEC_PER_SEC;
	top.range = &tr;
	top.n = 20;
	usleep((idx * 7919) % 1000 * 1000); /* spread over the second */
	while (!stop) {
		int64_t t0 = now_ns();

		if (fd < 0 && (fd = connect_sock()) < 0) {
			note(0, fd);
			fd = -1;
			usleep(200000);
			continue;
		}
		req.id = ++id;
		if ((id + idx) % 2) {
			req.op_case = VITALS__REQUEST__OP_TOP;
			req.top = &top;
		} else {
			req.op_case = VITALS__REQUEST__OP_SNAPSHOT;
			req.snapshot = &snap;
		}
		if ((r = send_req(fd, &req)) == 0)
			r = recv_status(fd);
		note(now_ns() - t0, r);
		if (r < 0) {
			close(fd);
			fd = -1;
		}
		usleep(900000 + (id * 131 + idx) % 200 * 1000);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Half trickle a frame's bytes one by one; half say nothing at all. */
static void *
loris_main(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HealthRequest h = VITALS__HEALTH_REQUEST__INIT;
	uint8_t *buf = NULL;
	size_t len = 0, i = 0;
	int fd = -1;

	req.version = 1;
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &h;
	(void)frame_pack_request(&req, &buf, &len);
	while (!stop) {
		if (fd < 0) {
			if ((fd = connect_sock()) < 0) {
				fd = -1;
				usleep(300000);
				continue;
			}
			i = 0;
		}
		if (idx % 2 == 0 && buf != NULL) {
			if (send(fd, buf + i % len, 1, MSG_NOSIGNAL) != 1) {
				close(fd);
				fd = -1;
				pthread_mutex_lock(&tl_mu);
				tl.loris_closed++;
				pthread_mutex_unlock(&tl_mu);
				continue;
			}
			i++;
		} else {
			char c;

			if (recv(fd, &c, 1, MSG_DONTWAIT) == 0) {
				close(fd);
				fd = -1;
				pthread_mutex_lock(&tl_mu);
				tl.loris_closed++;
				pthread_mutex_unlock(&tl_mu);
				continue;
			}
		}
		usleep(300000);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* FLOOD_DEPTH distinct reads in flight on one connection, always. */
static void *
flood_main(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg, k;
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__WindowsRequest wr = VITALS__WINDOWS_REQUEST__INIT;
	Vitals__TopRequest top = VITALS__TOP_REQUEST__INIT;
	Vitals__TimeRange tr = VITALS__TIME_RANGE__INIT;
	uint64_t id = 0;
	int fd = -1, r;

	req.version = 1;
	wr.range = &tr;
	wr.with_tasks = true;
	wr.max_windows = 100000;
	top.range = &tr;
	top.n = 0; /* every task */
	while (!stop) {
		if (fd < 0 && (fd = connect_sock()) < 0) {
			fd = -1;
			usleep(100000);
			continue;
		}
		for (k = 0; k < FLOOD_DEPTH; k++) {
			req.id = ++id;
			/* never the same range twice: no read is shared */
			tr.since_ns = 3600 * NSEC_PER_SEC +
			    (int64_t)((idx * 1000003 + id) % 100000) * 2 *
				NSEC_PER_SEC;
			if (id % 2) {
				req.op_case = VITALS__REQUEST__OP_WINDOWS;
				req.windows = &wr;
			} else {
				req.op_case = VITALS__REQUEST__OP_TOP;
				req.top = &top;
			}
			if (send_req(fd, &req) < 0)
				break;
		}
		for (; k > 0; k--) {
			r = recv_status(fd);
			pthread_mutex_lock(&tl_mu);
			if (r == VITALS__STATUS__STATUS_BUSY)
				tl.flood_busy++;
			else if (r >= 0)
				tl.flood_ok++;
			pthread_mutex_unlock(&tl_mu);
			if (r < 0)
				break;
		}
		if (k > 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void
on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

/* A child as uid: n threads of fn; the tally and latencies to wfd. */
static void
child_run(uid_t uid, unsigned secs, void *(*fn)(void *), unsigned n,
    unsigned first, void *(*fn2)(void *), unsigned n2, int wfd)
{
	pthread_t *th = calloc(n + n2, sizeof(*th));
	unsigned i;

	lat = calloc(MAX_LAT, sizeof(*lat));
	if (th == NULL || lat == NULL || setgroups(0, NULL) < 0 ||
	    setgid(uid) < 0 || setuid(uid) < 0)
		_exit(1);
	signal(SIGALRM, on_alarm);
	alarm(secs);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, fn,
			(void *)(uintptr_t)(first + i)) != 0)
			_exit(2);
	for (i = 0; i < n2; i++)
		if (pthread_create(&th[n + i], NULL, fn2,
			(void *)(uintptr_t)i) != 0)
			_exit(2);
	for (i = 0; i < n + n2; i++)
		pthread_join(th[i], NULL);
	(void)!write(wfd, &tl, sizeof(tl));
	(void)!write(wfd, lat, tl.nlat * sizeof(*lat));
	_exit(0);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static ssize_t
read_all(int fd, void *p, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n && (r = read(fd, (char *)p + got, n - got)) > 0)
		got += (size_t)r;
	return (ssize_t)got;
}

struct jitter {
	uint64_t hist[VITALS_LATE_BUCKETS], max_ns, last_seq;
	unsigned windows;
};

static void
health_poll(int fd, struct jitter *j)
{
	Vitals__Request req = VITALS__REQUEST__INIT;
	Vitals__HealthRequest h = VITALS__HEALTH_REQUEST__INIT;
	Vitals__Response *resp;
	uint8_t *buf;
	size_t len, i;
	const Vitals__Window *w;

	req.version = 1;
	req.op_case = VITALS__REQUEST__OP_HEALTH;
	req.health = &h;
	if (send_req(fd, &req) < 0 ||
	    frame_recv(fd, 64u << 20, 10000, &buf, &len) < 0)
		return;
	resp = frame_unpack_response(buf, len);
	free(buf);
	if (resp == NULL)
		return;
	if (resp->health && (w = resp->health->last) != NULL && w->health &&
	    w->seq != j->last_seq) {
		j->last_seq = w->seq;
		j->windows++;
		for (i = 0;
		     i < w->health->n_tick_late_hist && i < VITALS_LATE_BUCKETS;
		     i++)
			j->hist[i] += w->health->tick_late_hist[i];
		if (w->health->tick_late_ns_max > j->max_ns)
			j->max_ns = w->health->tick_late_ns_max;
	}
	vitals__response__free_unpacked(resp, NULL);
}

int
main(int argc, char **argv)
{
	static const uint64_t bounds[] = VITALS_LATE_BOUNDS_MS;
	unsigned secs, good, loris, nuid, i, per;
	struct tally sum = { 0 };
	struct jitter j = { 0 };
	int64_t *all, t_end;
	uint64_t nt = 0, acc = 0;
	size_t nall = 0;
	int p[2], fd;
	pid_t *kids;

	if (argc < 6) {
		fprintf(stderr,
		    "usage: load_bench SOCKET SECONDS GOOD LORIS "
		    "UID...\n");
		return 2;
	}
	sock_path = argv[1];
	secs = (unsigned)atoi(argv[2]);
	good = (unsigned)atoi(argv[3]);
	loris = (unsigned)atoi(argv[4]);
	nuid = (unsigned)(argc - 5);
	if (nuid < 2 || geteuid() != 0) {
		fprintf(stderr, "load_bench: root and two uids at least\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (pipe(p) < 0 || (kids = calloc(nuid, sizeof(*kids))) == NULL ||
	    (all = calloc((size_t)MAX_LAT * nuid, sizeof(*all))) == NULL)
		return 1;
	per = (good + nuid - 2) / (nuid - 1);
	for (i = 0; i < nuid; i++) {
		uid_t uid = (uid_t)strtoul(argv[5 + i], NULL, 10);

		if ((kids[i] = fork()) == 0) {
			close(p[0]);
			if (i + 1 < nuid)
				child_run(uid, secs, good_main, per, i * per,
				    NULL, 0, p[1]);
			child_run(uid, secs, loris_main, loris, 0, flood_main,
			    FLOOD_CONNS, p[1]);
		}
	}
	close(p[1]);
	fd = connect_sock();
	t_end = now_ns() + (int64_t)secs * NSEC_PER_SEC;
	while (fd >= 0 && now_ns() < t_end) {
		health_poll(fd, &j);
		usleep(500000);
	}
	for (i = 0; i < nuid; i++) {
		struct tally t;

		if (read_all(p[0], &t, sizeof(t)) != sizeof(t))
			break;
		if (read_all(p[0], all + nall, t.nlat * sizeof(*all)) !=
		    (ssize_t)(t.nlat * sizeof(*all)))
			break;
		nall += t.nlat;
		sum.ok += t.ok;
		sum.busy += t.busy;
		sum.errors += t.errors;
		sum.refused += t.refused;
		sum.loris_closed += t.loris_closed;
		sum.flood_busy += t.flood_busy;
		sum.flood_ok += t.flood_ok;
	}
	for (i = 0; i < nuid; i++)
		waitpid(kids[i], NULL, 0);
	if (fd >= 0) {
		health_poll(fd, &j);
		close(fd);
	}
	qsort(all, nall, sizeof(*all), cmp_i64);
	for (i = 0; i < VITALS_LATE_BUCKETS; i++)
		nt += j.hist[i];
	printf("load: %u s, %u well-behaved clients over %u uids, %u "
	       "slowloris and a flood (%u conns x %u in flight) from uid %s\n",
	    secs, good, nuid - 1, loris, FLOOD_CONNS, FLOOD_DEPTH,
	    argv[4 + nuid]);
	printf("%-34s %s\n", "figure", "value");
	for (i = 0; nt && i < VITALS_LATE_BUCKETS; i++)
		if ((acc += j.hist[i]) * 100 >= nt * 99) {
			if (bounds[i])
				printf("%-34s <= %llu ms (%llu ticks, %u "
				       "windows)\n",
				    "sampling jitter p99",
				    (unsigned long long)bounds[i],
				    (unsigned long long)nt, j.windows);
			else
				printf("%-34s > 100 ms\n",
				    "sampling jitter p99");
			break;
		}
	printf("%-34s %.1f ms\n", "sampling jitter max",
	    (double)j.max_ns / 1e6);
	if (nall) {
		printf("%-34s %.2f ms\n", "well-behaved p50",
		    all[nall / 2] / 1e6);
		printf("%-34s %.2f ms\n", "well-behaved p99",
		    all[nall * 99 / 100] / 1e6);
		printf("%-34s %.2f ms\n", "well-behaved max",
		    all[nall - 1] / 1e6);
	}
	printf("%-34s %llu\n", "well-behaved answers OK",
	    (unsigned long long)sum.ok);
	printf("%-34s %llu\n", "well-behaved BUSY",
	    (unsigned long long)sum.busy);
	printf("%-34s %llu\n", "well-behaved refused/reset",
	    (unsigned long long)sum.refused);
	printf("%-34s %llu\n", "well-behaved other errors",
	    (unsigned long long)sum.errors);
	printf("%-34s %llu\n", "flood answered",
	    (unsigned long long)sum.flood_ok);
	printf("%-34s %llu\n", "flood BUSY",
	    (unsigned long long)sum.flood_busy);
	printf("%-34s %llu\n", "slowloris connections closed",
	    (unsigned long long)sum.loris_closed);
	return 0;
}
