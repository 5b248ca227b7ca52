/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_bench: what the window store costs at a realistic load, measured on
 * the real store (daemon/store*.c, SQLite as shipped, default options).
 *
 * It synthesises the windows a device would produce (8 CPUs with every
 * field, full meminfo/vmstat/PSI, 500 processes of which 50 are active per
 * window, ~100 active threads), stamps them on a simulated 10 s grid of the
 * wall clock, writes them with store_put into a fresh database, and calls
 * store_maintain with the simulated "now" every simulated minute, so that
 * roll-ups and retention run exactly as in production, only faster than
 * real time. It reports the commit time of a window, the database size
 * over simulated time, top-N query latency and the cost of maintenance.
 *
 * Only simulated time is compressed: every put, maintenance pass and query
 * is the real call on a real file, timed with CLOCK_MONOTONIC.
 */
#include <sys/stat.h>
#include <sys/statfs.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io_vfs.h"
#include "store_sim.h"
#include "vitalsd.h"

#define MAINTAIN_EVERY 6 /* windows: once per simulated minute */
#define MAINTAIN_EVERY_N (b->o.maint_every ? b->o.maint_every : MAINTAIN_EVERY)

/* ---------------------------------------------------------- measurement */

struct series {
	int64_t *v;
	size_t n, cap;
};

static int
series_add(struct series *a, int64_t v)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 1024;
		int64_t *p = realloc(a->v, nc * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		a->v = p;
		a->cap = nc;
	}
	a->v[a->n++] = v;
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct dist {
	size_t n;
	double p50, p90, p99, max, mean; /* ms */
	double total_s;
};

/* Nearest-rank percentiles of v[from, to). */
static struct dist
dist_of(const struct series *a, size_t from, size_t to)
{
	struct dist d = { 0 };
	int64_t *c;
	size_t n = to > from ? to - from : 0;

	if (n == 0 || (c = malloc(n * sizeof(*c))) == NULL)
		return d;
	memcpy(c, a->v + from, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_i64);
	for (size_t i = 0; i < n; i++)
		d.total_s += (double)c[i] / 1e9;
	d.mean = d.total_s * 1e3 / (double)n;
#define RANK(q) c[(size_t)ceil((q) * (double)n) - 1]
	d.n = n;
	d.p50 = (double)RANK(0.50) / 1e6;
	d.p90 = (double)RANK(0.90) / 1e6;
	d.p99 = (double)RANK(0.99) / 1e6;
	d.max = (double)c[n - 1] / 1e6;
#undef RANK
	free(c);
	return d;
}

struct snap {
	int64_t at_s; /* simulated seconds since the first window */
	uint64_t main_bytes, wal_bytes, live_bytes;
	long long lvl[3];
	double procs_per[3], threads_per[3]; /* task rows per window */
	char tables[512]; /* "name=KiB ..." from dbstat, "" without it */
	double oldest_h;  /* age of the oldest window held */
	uint64_t deleted_age, deleted_size, rolled;
};

static uint64_t
file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static long long
sql_ll(struct store *st, const char *sql)
{
	char buf[64];

	if (store_exec(st, sql, buf, sizeof(buf)) < 0)
		fatalx("store_exec failed: %s", sql);
	return strtoll(buf, NULL, 10);
}

static void
task_rows(struct store *st, struct snap *ret)
{
	int64_t t0 = sql_ll(st, "SELECT min(wall_start_ns) FROM windows");
	int64_t t1 = sql_ll(st, "SELECT max(wall_start_ns) FROM windows");
	double np[3] = { 0 }, nt[3] = { 0 };
	int64_t from, step = 3600 * NSEC_PER_SEC;
	struct window **v;
	size_t n, i;
	unsigned l;

	for (from = t0; from <= t1; from += step) {
		if (store_windows(st, from, from + step, 0, &v, &n) < 0)
			fatalx("store_windows failed");
		for (i = 0; i < n; i++) {
			/* each window once: in the hour it starts in */
			if (v[i]->wall_start_ns >= from &&
			    v[i]->wall_start_ns < from + step &&
			    v[i]->level < 3) {
				np[v[i]->level] += (double)v[i]->nprocs;
				nt[v[i]->level] += (double)v[i]->nthreads;
			}
			window_free(v[i]);
		}
		free(v);
	}
	for (l = 0; l < 3; l++) {
		if (ret->lvl[l] == 0)
			continue;
		ret->procs_per[l] = np[l] / (double)ret->lvl[l];
		ret->threads_per[l] = nt[l] / (double)ret->lvl[l];
	}
}

static void
take_snap(struct store *st, const char *db, int64_t at_s, int64_t now_ns,
    bool rows, struct snap *ret)
{
	char wal[PATH_MAX + 8], q[160];
	struct store_stats ss;
	unsigned l;

	/* After a checkpoint the main file holds everything. */
	if (store_exec(st, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, 0) < 0)
		fatalx("checkpoint failed");
	snprintf(wal, sizeof(wal), "%s-wal", db);
	memset(ret, 0, sizeof(*ret));
	ret->at_s = at_s;
	ret->main_bytes = file_size(db);
	ret->wal_bytes = file_size(wal);
	ret->live_bytes = (uint64_t)(sql_ll(st, "PRAGMA page_count") -
			      sql_ll(st, "PRAGMA freelist_count")) *
	    (uint64_t)sql_ll(st, "PRAGMA page_size");
	for (l = 0; l < 3; l++) {
		snprintf(q, sizeof(q),
		    "SELECT count(*) FROM windows WHERE level = %u", l);
		ret->lvl[l] = sql_ll(st, q);
		if (!rows || ret->lvl[l] == 0)
			continue;
	}
	/* How much a roll-up holds: the union of the tasks merged (the
	 * rows are in blobs: read back, an hour of windows at a time). */
	if (rows)
		task_rows(st, ret);
	/* Where the bytes are, if this SQLite has the dbstat table. */
	if (rows &&
	    store_exec(st,
		"SELECT group_concat(name || '=' || kib, "
		"' ') FROM (SELECT CASE WHEN name GLOB 'l0_tasks_*' THEN "
		"'l0_tasks_*' WHEN name GLOB 'l0_parts_*' THEN 'l0_parts_*' "
		"ELSE name END AS name, sum(pgsize) / 1024 AS kib FROM dbstat "
		"GROUP BY 1 ORDER BY kib DESC)",
		ret->tables, sizeof(ret->tables)) < 0)
		ret->tables[0] = '\0';
	ret->oldest_h = (double)(now_ns -
			    sql_ll(st,
				"SELECT min(wall_start_ns) FROM windows")) /
	    3.6e12;
	store_get_stats(st, &ss);
	ret->deleted_age = ss.deleted_age;
	ret->deleted_size = ss.deleted_size;
	ret->rolled = ss.windows_rolled;
}

struct qres {
	int64_t at_s;
	struct dist h1, d1, w60;
	size_t rows_h1, rows_d1, rows_w60;
};

/* The windows a history asks for, loaded whole (store_load each): the 60
 * of the ten minutes that ended an hour ago, level 0 and, with a spool,
 * moved into the main file by then. */
#define LOAD_BACK_S HOUR_S
#define LOAD_SPAN_S 600
#define LOAD_MAX 60

static size_t
load_windows(struct store *st, int64_t now_ns)
{
	int64_t to = now_ns - SEC(LOAD_BACK_S);
	struct window **w = NULL;
	size_t n = 0, i;
	int r = store_windows_max(st, to - SEC(LOAD_SPAN_S), to, 0, LOAD_MAX,
	    &w, &n, NULL);

	if (r < 0)
		fatalx("store_windows_max: %s", strerror(-r));
	for (i = 0; i < n; i++)
		window_free(w[i]);
	free(w);
	return n;
}

/* A request's snapshot on the read connection, as a query thread takes
 * one (control/query.c): its begin and end are in the time measured */
static void
snap_begin(struct store *rc)
{
	int r = store_conn_begin(rc);

	if (r < 0)
		fatalx("store_conn_begin: %s", strerror(-r));
}

/*
 * The reads on rc, a read connection as the daemon's query threads have
 * (store_conn.c: read-only, the spool attached, one snapshot a request).
 */
static void
run_queries(struct store *st, unsigned nq, int64_t at_s, int64_t now_ns,
    struct qres *ret)
{
	struct series h = { 0 }, d = { 0 }, l = { 0 };
	unsigned k;

	memset(ret, 0, sizeof(*ret));
	ret->at_s = at_s;
	for (k = 0; k < nq && at_s > LOAD_BACK_S + LOAD_SPAN_S; k++) {
		int64_t t0 = clock_ns(CLOCK_MONOTONIC);

		snap_begin(st);
		ret->rows_w60 = load_windows(st, now_ns);
		store_conn_end(st);
		if (series_add(&l, clock_ns(CLOCK_MONOTONIC) - t0) < 0)
			fatalx("out of memory");
	}
	ret->w60 = dist_of(&l, 0, l.n);
	free(l.v);
	for (k = 0; k < 2 * nq; k++) {
		bool day = k % 2; /* interleaved: neither gets a warmer cache */
		int64_t from = now_ns - SEC(day ? DAY_S : HOUR_S);
		struct window_task *t = NULL;
		size_t n = 0;
		int64_t t0 = clock_ns(CLOCK_MONOTONIC), dt;
		int r;

		snap_begin(st);
		r = store_top(st, from, now_ns, false, METRIC_CPU, 20, &t, &n);
		store_conn_end(st);
		dt = clock_ns(CLOCK_MONOTONIC) - t0;
		if (r < 0)
			fatalx("store_top: %s", strerror(-r));
		free(t);
		if (series_add(day ? &d : &h, dt) < 0)
			fatalx("out of memory");
		*(day ? &ret->rows_d1 : &ret->rows_h1) = n;
	}
	ret->h1 = dist_of(&h, 0, h.n);
	ret->d1 = dist_of(&d, 0, d.n);
	free(h.v);
	free(d.v);
}

static const char *
fs_name(const char *dir)
{
	static char buf[32];
	struct statfs sf;

	if (statfs(dir, &sf) < 0)
		return "?";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53:
		return "ext4";
	case 0x01021994:
		return "tmpfs";
	case 0x58465342:
		return "xfs";
	case 0x9123683E:
		return "btrfs";
	case 0xF2F52010:
		return "f2fs";
	case 0x794c7630:
		return "overlayfs";
	}
	snprintf(buf, sizeof(buf), "0x%lx", (unsigned long)sf.f_type);
	return buf;
}

static const char *
span_name(int64_t s, char *buf, size_t sz)
{
	if (s % DAY_S == 0)
		snprintf(buf, sz, "%lld d", (long long)(s / DAY_S));
	else if (s % HOUR_S == 0)
		snprintf(buf, sz, "%lld h", (long long)(s / HOUR_S));
	else
		snprintf(buf, sz, "%.2f h", (double)s / HOUR_S);
	return buf;
}

static double
mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* --------------------------------------------------------------- main */

static void usage(void) __attribute__((noreturn));

static void
usage(void)
{
	fprintf(stderr,
	    "usage: store_bench [-BHIk] [-a active] [-c cpus] [-d days] "
	    "[-D dir] [-m max_mib]\n"
	    "                   [-p procs] [-q queries] [-s seed] "
	    "[-t threads]\n"
	    "                   [-S spool_dir] [-j persist|truncate|wal] "
	    "[-M windows]\n"
	    "                   [-R rollup_batch_s] [-F random|drifting]\n");
	exit(2);
}

static uint64_t
num_arg(const char *s, uint64_t lo, uint64_t hi)
{
	uint64_t v;

	if (parse_uint(s, hi, &v) < 0 || v < lo) {
		fprintf(stderr,
		    "store_bench: bad number '%s' (%" PRIu64 "..%" PRIu64 ")\n",
		    s, lo, hi);
		usage();
	}
	return v;
}

static void
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "active", required_argument, NULL, 'a' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "days", required_argument, NULL, 'd' },
		{ "dir", required_argument, NULL, 'D' },
		{ "keep", no_argument, NULL, 'k' },
		{ "max-mib", required_argument, NULL, 'm' },
		{ "procs", required_argument, NULL, 'p' },
		{ "queries", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "spool", required_argument, NULL, 'S' },
		{ "journal", required_argument, NULL, 'j' },
		{ "maintain-every", required_argument, NULL, 'M' },
		{ "bpf", no_argument, NULL, 'B' },
		{ "host-parts", no_argument, NULL, 'H' },
		{ "io", no_argument, NULL, 'I' },
		{ "rollup-batch", required_argument, NULL, 'R' },
		{ "figures", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int ch;

	/* 7 days take 6-10 min here; the size bound binds after ~18 h */
	o->days = 2;
	/* not $TMPDIR: it may be a tmpfs, where fsync is free */
	o->dir = "/tmp";
	o->nprocs = 500;
	o->nactive = 50;
	o->nthreads = 100;
	o->ncpus = 8;
	o->nqueries = 50;
	o->seed = 1;
	o->journal = -1;
	o->rollup_batch = -1;
	while ((ch = getopt_long(argc, argv,
		    "a:Bc:d:D:F:hHIj:kM:m:p:q:R:s:S:t:", lo, NULL)) != -1) {
		switch (ch) {
		case 'H':
			o->host_parts = true;
			break;
		case 'a':
			o->nactive = (unsigned)num_arg(optarg, 1, 100000);
			break;
		case 'B':
			o->bpf = true;
			break;
		case 'I':
			o->io = true;
			break;
		case 'F':
			if (strcmp(optarg, "random") == 0)
				o->drifting = false;
			else if (strcmp(optarg, "drifting") == 0)
				o->drifting = true;
			else
				usage();
			break;
		case 'R':
			o->rollup_batch = (int64_t)num_arg(optarg, 0, 86400);
			break;
		case 'c':
			o->ncpus = (unsigned)num_arg(optarg, 1, VITALS_CPU_MAX);
			break;
		case 'd':
			o->days = strtod(optarg, &end);
			if (*end != '\0' || !(o->days > 0) || o->days > 365)
				usage();
			break;
		case 'D':
			o->dir = optarg;
			break;
		case 'k':
			o->keep = true;
			break;
		case 'm':
			o->max_bytes = num_arg(optarg, 0, 1 << 20) << 20;
			o->max_set = true;
			break;
		case 'p':
			o->nprocs = (unsigned)num_arg(optarg, HOT_PROCS,
			    100000);
			break;
		case 'q':
			o->nqueries = (unsigned)num_arg(optarg, 1, 100000);
			break;
		case 's':
			o->seed = num_arg(optarg, 1, UINT64_MAX);
			break;
		case 't':
			o->nthreads = (unsigned)num_arg(optarg, 0, 1000000);
			break;
		case 'S':
			o->spool_dir = optarg;
			break;
		case 'M':
			o->maint_every = (unsigned)num_arg(optarg, 1, 8640);
			break;
		case 'j':
			if (strcmp(optarg, "persist") == 0)
				o->journal = STORE_JOURNAL_PERSIST;
			else if (strcmp(optarg, "truncate") == 0)
				o->journal = STORE_JOURNAL_TRUNCATE;
			else if (strcmp(optarg, "wal") == 0)
				o->journal = STORE_JOURNAL_WAL;
			else
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (o->nactive > o->nprocs)
		o->nactive = o->nprocs;
}

/* Bytes this process passed to write() and caused to reach storage. */
struct io {
	uint64_t wchar, write_bytes;
};

static void
io_read(struct io *ret)
{
	char buf[512], *p;
	FILE *f;

	memset(ret, 0, sizeof(*ret));
	if ((f = fopen("/proc/self/io", "re")) == NULL)
		return;
	while (fgets(buf, sizeof(buf), f) != NULL) {
		if ((p = strchr(buf, ':')) == NULL)
			continue;
		*p++ = '\0';
		if (strcmp(buf, "wchar") == 0)
			ret->wchar = strtoull(p, NULL, 10);
		else if (strcmp(buf, "write_bytes") == 0)
			ret->write_bytes = strtoull(p, NULL, 10);
	}
	fclose(f);
}

static void
io_add(struct io *acc, const struct io *a, const struct io *b)
{
	acc->wchar += b->wchar - a->wchar;
	acc->write_bytes += b->write_bytes - a->write_bytes;
}

struct bench {
	struct opts o;
	struct store_opts so;
	struct store *st;
	struct store *rc; /* the reads' connection (store_conn_open) */
	struct sim sim;
	char dir[PATH_MAX], db[PATH_MAX + 16], spool[PATH_MAX + 40];
	uint64_t nwin;
	int64_t end_s, now_ns;
	struct series put, put_bound, maint;
	uint64_t bound_at_s; /* first deletion by the size bound */
	uint64_t put_ckpt;   /* puts after which the WAL had shrunk */
	char wal[PATH_MAX + 32];
	struct snap snaps[16];
	char bpf_bytes[256]; /* -B: BPF blob bytes per window, by level */
	size_t nsnap;
	struct qres qs[2];
	size_t nq;
	struct io io_put, io_maint;
	double real_s, query_s;
	/* -I: the kernel's write_bytes and the shim's counts at each mark */
	struct io io_at[16];
	struct io_counts vfs_at[16];
	int64_t io_at_s[16];
	char *pages_at[16]; /* the b-tree table of each phase */
	size_t nio;
};

static void
bench_setup(struct bench *b)
{
	char ver[64], uv[16], sp[32];
	int64_t wall0;
	int r;

	store_opts_default(&b->so);
	if (b->o.max_set)
		b->so.max_bytes = b->o.max_bytes;
	b->nwin = (uint64_t)llround(b->o.days * DAY_S / WINDOW_S);
	b->nwin -= b->nwin % MAINTAIN_EVERY_N;
	if (b->nwin < MAINTAIN_EVERY_N)
		b->nwin = MAINTAIN_EVERY_N;
	b->end_s = (int64_t)b->nwin * WINDOW_S;

	snprintf(b->dir, sizeof(b->dir), "%s/store_bench.XXXXXX", b->o.dir);
	if (mkdtemp(b->dir) == NULL)
		fatal("mkdtemp %s", b->dir);
	snprintf(b->db, sizeof(b->db), "%s/vitals.db", b->dir);
	snprintf(b->wal, sizeof(b->wal), "%s-wal", b->db);
	/* With a spool (on a RAM file system: its writes reach no storage)
	 * each put commits there and every maintenance pass, once a
	 * simulated minute, moves the six windows waiting: the daemon's
	 * batched commits at store_commit_s 60 */
	if (b->o.spool_dir) {
		snprintf(b->spool, sizeof(b->spool), "%s/store_bench-%d.db",
		    b->o.spool_dir, (int)getpid());
		b->so.spool_path = b->spool;
		b->so.commit_s = 3600;
	}
	if (b->o.journal >= 0)
		b->so.journal = (enum store_journal)b->o.journal;
	if (b->o.rollup_batch >= 0)
		b->so.rollup_batch_s = b->o.rollup_batch;
	if (b->o.io) {
		if (io_vfs_install() < 0)
			fatalx("io_vfs_install");
		io_vfs_track(b->db);
	}
	if ((r = store_open(b->db, &b->so, &b->st)) < 0)
		fatalx("store_open %s: %s", b->db, strerror(-r));
	store_exec(b->st, "SELECT sqlite_version()", ver, sizeof(ver));
	store_exec(b->st, "PRAGMA user_version", uv, sizeof(uv));

	/* The run ends at the present, on a 10-minute boundary, so a kept
	 * database reads like a real one. */
	wall0 = clock_ns(CLOCK_REALTIME) / SEC(600) * SEC(600) - SEC(b->end_s);
	if ((r = sim_init(&b->sim, &b->o, wall0)) < 0)
		fatalx("sim_init: %s", strerror(-r));

	printf("store_bench: %u CPUs, %u processes with %zu threads, per "
	       "window %u active processes\n  and %u active threads, %d s "
	       "windows\n",
	    b->o.ncpus, b->o.nprocs, b->sim.nt, b->o.nactive, b->o.nthreads,
	    WINDOW_S);
	printf("figures: %s\n",
	    b->o.drifting ? "drifting (-F drifting)" :
			    "redrawn at random every window (-F random)");
	printf("simulating %s (%" PRIu64 " windows), store_maintain every "
	       "%u windows (%u simulated s)\n",
	    span_name(b->end_s, sp, sizeof(sp)), b->nwin, MAINTAIN_EVERY_N,
	    MAINTAIN_EVERY_N * WINDOW_S);
	printf("database: %s (%s), sqlite %s, schema %s\n", b->db,
	    fs_name(b->dir), ver, uv);
	printf("store options: roll-up 1 after %lld h into %u s, roll-up 2 "
	       "after %lld h into %u s,\n  retain %lld d, ",
	    (long long)b->so.rollup1_after_s / 3600, b->so.rollup1_s,
	    (long long)b->so.rollup2_after_s / 3600, b->so.rollup2_s,
	    (long long)b->so.retain_s / DAY_S);
	if (b->so.rollup_batch_s)
		printf("roll-ups in batches of %lld s, ",
		    (long long)b->so.rollup_batch_s);
	if (b->so.max_bytes)
		printf("max %.0f MiB (main file + WAL)\n",
		    mib(b->so.max_bytes));
	else
		printf("no size bound\n");
	if (b->so.spool_path)
		printf("spool %s, moved at each maintenance pass; main file "
		       "journal %s\n\n",
		    b->so.spool_path,
		    b->so.journal == STORE_JOURNAL_WAL		? "WAL" :
			b->so.journal == STORE_JOURNAL_TRUNCATE ? "TRUNCATE" :
								  "PERSIST");
	else
		printf("no spool: each window its own commit, WAL\n\n");
	fflush(stdout);
}

static void
bench_queries(struct bench *b, int64_t at_s)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int r;

	if (b->rc == NULL && (r = store_conn_open(b->st, &b->rc)) < 0)
		fatalx("store_conn_open: %s", strerror(-r));
	run_queries(b->rc, b->o.nqueries, at_s, b->now_ns, &b->qs[b->nq++]);
	b->query_s += (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

/* -I: the b-tree table of the phase that ends here, kept as text */
static char *
io_pages_text(double days)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	io_vfs_print_pages(f, days);
	fclose(f);
	return buf;
}

/* -I: totals at a mark, the phases of the day told apart later */
static void
io_mark(struct bench *b, int64_t at_s)
{
	if (b->nio >= sizeof(b->io_at) / sizeof(b->io_at[0]))
		return;
	b->io_at[b->nio].wchar = b->io_put.wchar + b->io_maint.wchar;
	b->io_at[b->nio].write_bytes = b->io_put.write_bytes +
	    b->io_maint.write_bytes;
	io_vfs_counts(&b->vfs_at[b->nio]);
	b->pages_at[b->nio] = io_pages_text(
	    (double)(at_s - (b->nio ? b->io_at_s[b->nio - 1] : 0)) / DAY_S);
	b->io_at_s[b->nio++] = at_s;
}

static void
bench_run(struct bench *b)
{
	static const int64_t marks[] = { HOUR_S, 6 * HOUR_S, 12 * HOUR_S, DAY_S,
		2 * DAY_S, 3 * DAY_S, 7 * DAY_S };
	int64_t t_start = clock_ns(CLOCK_MONOTONIC), t0, dt, at_s;
	struct store_stats ss;
	struct io i0, i1;
	uint64_t w_i, del0, wal0 = 0, wal1;
	size_t i;
	int r;

	for (w_i = 0; w_i < b->nwin; w_i++) {
		struct window *w = sim_window(&b->sim, w_i);

		if (w == NULL)
			fatalx("out of memory");
		at_s = (int64_t)(w_i + 1) * WINDOW_S;
		store_get_stats(b->st, &ss);
		del0 = ss.deleted_size;
		io_read(&i0);
		t0 = clock_ns(CLOCK_MONOTONIC);
		r = store_put(b->st, w);
		dt = clock_ns(CLOCK_MONOTONIC) - t0;
		io_read(&i1);
		if (r < 0)
			fatalx("store_put window %" PRIu64 ": %s", w_i,
			    strerror(-r));
		io_add(&b->io_put, &i0, &i1);
		/* A put that checkpointed leaves a truncated WAL. */
		if ((wal1 = file_size(b->wal)) < wal0)
			b->put_ckpt++;
		wal0 = wal1;
		b->now_ns = w->wall_end_ns;
		window_free(w);
		if (series_add(&b->put, dt) < 0)
			fatalx("out of memory");
		store_get_stats(b->st, &ss);
		if (ss.deleted_size != del0) {
			if (b->bound_at_s == 0)
				b->bound_at_s = (uint64_t)at_s;
			if (series_add(&b->put_bound, dt) < 0)
				fatalx("out of memory");
		}
		if ((w_i + 1) % MAINTAIN_EVERY_N == 0) {
			io_read(&i0);
			t0 = clock_ns(CLOCK_MONOTONIC);
			r = store_maintain(b->st, b->now_ns);
			dt = clock_ns(CLOCK_MONOTONIC) - t0;
			io_read(&i1);
			if (r < 0)
				fatalx("store_maintain: %s", strerror(-r));
			io_add(&b->io_maint, &i0, &i1);
			if (b->o.io)
				io_vfs_attribute();
			if (series_add(&b->maint, dt) < 0)
				fatalx("out of memory");
			store_get_stats(b->st, &ss);
			if (b->bound_at_s == 0 && ss.deleted_size)
				b->bound_at_s = (uint64_t)at_s;
		}
		if (at_s == b->end_s)
			break;
		for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
			if (marks[i] == at_s && b->o.io)
				io_mark(b, at_s);
		for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
			if (marks[i] == at_s)
				take_snap(b->st, b->db, at_s, b->now_ns, false,
				    &b->snaps[b->nsnap++]);
		if (at_s == DAY_S)
			bench_queries(b, at_s);
	}
	if (b->o.io)
		io_mark(b, b->end_s);
	take_snap(b->st, b->db, b->end_s, b->now_ns, true,
	    &b->snaps[b->nsnap++]);
	bench_queries(b, b->end_s);
	/* -B: what the BPF rows cost, per stored window and level */
	if (b->o.bpf &&
	    store_exec(b->st,
		"SELECT group_concat('L' || level || ' ' || n || ' windows, '"
		" || bytes || ' bytes/window', '; ') FROM (SELECT w.level,"
		" count(*) AS n, CAST(avg(length(p.bpf)) AS INTEGER) AS bytes"
		" FROM windows w JOIN window_parts p ON p.window_id = w.id"
		" GROUP BY w.level)",
		b->bpf_bytes, sizeof(b->bpf_bytes)) < 0)
		b->bpf_bytes[0] = '\0';
	b->real_s = (double)(clock_ns(CLOCK_MONOTONIC) - t_start) / 1e9;
}

static void
print_dist(const char *label, const struct dist *d)
{
	printf("  %-26s %7zu %8.3f %8.3f %8.3f %8.3f %8.3f %7.1f\n", label,
	    d->n, d->p50, d->p90, d->p99, d->max, d->mean, d->total_s);
}

static void
print_query(const char *range, int64_t at_s, const struct dist *d, size_t rows)
{
	char lab[64], sp[32];

	snprintf(lab, sizeof(lab), "at %s, %s", span_name(at_s, sp, sizeof(sp)),
	    range);
	printf("  %-30s %5zu %8.3f %8.3f %8.3f %8.3f %5zu\n", lab, d->n, d->p50,
	    d->p90, d->p99, d->max, rows);
}

/* -I: what each phase of the run wrote, per simulated day, by file and
 * kind, against the live bytes the store held at its end */
static void
io_report(const struct bench *b, double days)
{
	static const char *const kn[IO_NKIND] = { "main+", "main~", "journal",
		"wal", "other" };
	struct io_counts z = { 0 };
	const struct io_counts *p = &z, *c;
	uint64_t wb0 = 0, wb, live;
	int64_t s0 = 0;
	size_t i, j, k;
	char sp[32], sp0[32];

	(void)days;
	printf("\nwritten per simulated day, by phase (main+ appended pages, "
	       "main~ rewritten in place; MB = 10^6 B):\n");
	for (i = 0; i < b->nio; i++) {
		double d = (double)(b->io_at_s[i] - s0) / DAY_S;

		c = &b->vfs_at[i];
		wb = b->io_at[i].write_bytes - wb0;
		live = 0;
		for (j = 0; j < b->nsnap; j++)
			if (b->snaps[j].at_s == b->io_at_s[i])
				live = b->snaps[j].live_bytes;
		printf("  %6s-%-6s kernel %7.1f MB/day  sqlite",
		    span_name(s0, sp0, sizeof(sp0)),
		    span_name(b->io_at_s[i], sp, sizeof(sp)),
		    (double)wb / 1e6 / d);
		for (k = 0; k < IO_NKIND; k++)
			if (c->bytes[k] - p->bytes[k])
				printf(" %s %.1f", kn[k],
				    (double)(c->bytes[k] - p->bytes[k]) / 1e6 /
					d);
		printf("  syncs %.0f/day  live at end %.2f MB\n",
		    (double)(c->syncs - p->syncs) / d, (double)live / 1e6);
		/* the same writes as 4 KiB blocks, each once per sync */
		printf("  %13s blocks (4 KiB, once per sync)", "");
		for (k = 0; k < IO_NKIND; k++)
			if (c->blocks[k] - p->blocks[k])
				printf(" %s %.1f", kn[k],
				    (double)(c->blocks[k] - p->blocks[k]) /
					1e6 / d);
		printf("\n");
		if (b->pages_at[i])
			fputs(b->pages_at[i], stdout);
		p = c;
		wb0 = b->io_at[i].write_bytes;
		s0 = b->io_at_s[i];
	}
}

static void
bench_report(const struct bench *b)
{
	struct dist dh = dist_of(&b->put, 0,
	    b->put.n < HOUR_S / WINDOW_S ? b->put.n : HOUR_S / WINDOW_S);
	struct dist da = dist_of(&b->put, 0, b->put.n);
	struct dist dbd = dist_of(&b->put_bound, 0, b->put_bound.n);
	struct dist dm = dist_of(&b->maint, 0, b->maint.n);
	const struct snap *s1 = NULL, *s24 = NULL, *s48 = NULL;
	const struct snap *last = &b->snaps[b->nsnap - 1];
	const struct qres *ql = &b->qs[b->nq - 1];
	double per_hour = 0, per_day = 0, per_day_l2 = 0;
	double days = (double)b->end_s / DAY_S;
	uint64_t wchar = b->io_put.wchar + b->io_maint.wchar;
	uint64_t wbytes = b->io_put.write_bytes + b->io_maint.write_bytes;
	char sp[32];
	size_t i;

	printf("window commit, store_put (ms)   n       p50      p90      p99"
	       "      max     mean total s\n");
	print_dist("first simulated hour", &dh);
	print_dist("whole run", &da);
	if (dbd.n)
		print_dist("puts that enforced max", &dbd);
	printf("  WAL truncated (checkpoint) after %" PRIu64 " puts "
	       "(one in %.1f)\n",
	    b->put_ckpt, b->put_ckpt ? (double)b->nwin / b->put_ckpt : 0.0);
	if (b->o.bpf)
		printf("bpf rows blob: %s\n", b->bpf_bytes);
	printf("store_maintain (ms)\n");
	print_dist("every simulated minute", &dm);

	printf("\ndatabase size  main+WAL (bytes)     MiB  live MiB  windows "
	       "L0/L1/L2   oldest  rolled  del_age del_size\n");
	for (i = 0; i < b->nsnap; i++) {
		const struct snap *s = &b->snaps[i];

		printf("  %-8s %16" PRIu64 " %8.2f %8.2f  %6lld/%5lld/%4lld "
		       "%7.1fh %7" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
		    span_name(s->at_s, sp, sizeof(sp)),
		    s->main_bytes + s->wal_bytes,
		    mib(s->main_bytes + s->wal_bytes), mib(s->live_bytes),
		    s->lvl[0], s->lvl[1], s->lvl[2], s->oldest_h, s->rolled,
		    s->deleted_age, s->deleted_size);
		if (s->at_s == HOUR_S)
			s1 = s;
		if (s->at_s == DAY_S)
			s24 = s;
		if (s->at_s == 2 * DAY_S)
			s48 = s;
	}
	if (s1) {
		per_hour = (double)(s1->main_bytes + s1->wal_bytes);
		printf("  per hour (first hour, level 0): %.0f bytes = %.2f "
		       "MiB, %.1f KiB/window\n",
		    per_hour, mib((uint64_t)per_hour),
		    per_hour / 1024 / (HOUR_S / WINDOW_S));
	}
	if (s24) {
		per_day = (double)(s24->main_bytes + s24->wal_bytes);
		printf("  first day (6 h level 0 + 18 h level 1): %.0f bytes = "
		       "%.2f MiB%s\n",
		    per_day, mib((uint64_t)per_day),
		    s24->deleted_size ? " (size bound already reached)" : "");
	}
	if (s24 && s48 && !s48->deleted_size) {
		per_day_l2 = (double)s48->live_bytes - (double)s24->live_bytes;
		printf(
		    "  each further day (level 2, live growth 24 h -> 48 h): "
		    "%.0f bytes = %.2f MiB\n",
		    per_day_l2, mib((uint64_t)per_day_l2));
	}
	if (b->bound_at_s)
		printf(
		    "  size bound (%.0f MiB) first enforced at %.1f h "
		    "simulated; at the end the oldest window is %.1f h old\n",
		    mib(b->so.max_bytes), (double)b->bound_at_s / HOUR_S,
		    last->oldest_h);
	printf("  steady state: %.2f MiB at %s\n",
	    mib(last->main_bytes + last->wal_bytes),
	    span_name(last->at_s, sp, sizeof(sp)));
	printf("  task rows per stored window at the end:");
	for (i = 0; i < 3; i++)
		if (last->lvl[i])
			printf("  L%zu %.0f procs + %.0f threads", i,
			    last->procs_per[i], last->threads_per[i]);
	if (last->tables[0])
		printf("\n  KiB per table and index at the end: %s",
		    last->tables);
	printf("\n  written by puts + maintenance: %.2f GiB to write(), "
	       "%.2f GiB to storage;\n  per simulated day %.0f MiB to storage "
	       "(puts %.0f KiB/window, maintenance %.0f MiB/day)\n",
	    (double)wchar / 1073741824.0, (double)wbytes / 1073741824.0,
	    mib(wbytes) / days,
	    (double)b->io_put.write_bytes / 1024 / (double)b->nwin,
	    mib(b->io_maint.write_bytes) / days);

	if (b->o.io)
		io_report(b, days);
	printf("\nstore_top, 20 processes by CPU (ms)  n       p50      p90"
	       "      p99      max  rows\n");
	for (i = 0; i < b->nq; i++) {
		print_query("last hour", b->qs[i].at_s, &b->qs[i].h1,
		    b->qs[i].rows_h1);
		print_query("last day", b->qs[i].at_s, &b->qs[i].d1,
		    b->qs[i].rows_d1);
	}
	printf("\nstore_windows_max, the %d windows of the 10 min that "
	       "ended 1 h before (ms)\n"
	       "                                   n       p50      p90"
	       "      p99      max  rows\n",
	    LOAD_MAX);
	for (i = 0; i < b->nq; i++)
		if (b->qs[i].w60.n)
			print_query("10 min, 1 h back", b->qs[i].at_s,
			    &b->qs[i].w60, b->qs[i].rows_w60);
	printf("\nrun: %.1f s real for %s simulated: puts %.1f s, maintenance "
	       "%.1f s, queries %.1f s\n",
	    b->real_s, span_name(b->end_s, sp, sizeof(sp)), da.total_s,
	    dm.total_s, b->query_s);

	printf(
	    "RESULT store commit_p50_ms=%.3f commit_p99_ms=%.3f "
	    "bytes_per_hour=%.0f bytes_per_day=%.0f top20_1h_p50_ms=%.3f "
	    "top20_1d_p50_ms=%.3f commit_1h_p50_ms=%.3f commit_1h_p99_ms=%.3f "
	    "commit_max_ms=%.3f bytes_per_day_l2=%.0f steady_bytes=%" PRIu64
	    " top20_1h_p99_ms=%.3f top20_1d_p99_ms=%.3f top20_at_s=%lld "
	    "maintain_p50_ms=%.3f maintain_max_ms=%.3f bound_hit_s=%" PRIu64
	    " storage_write_bytes_per_day=%.0f days=%.3f load60_p50_ms=%.3f\n",
	    da.p50, da.p99, per_hour, per_day, ql->h1.p50, ql->d1.p50, dh.p50,
	    dh.p99, da.max, per_day_l2, last->main_bytes + last->wal_bytes,
	    ql->h1.p99, ql->d1.p99, (long long)ql->at_s, dm.p50, dm.max,
	    b->bound_at_s, (double)wbytes / days, days, ql->w60.p50);
}

static void
bench_cleanup(struct bench *b)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[PATH_MAX + 32];
	size_t i;

	store_conn_close(b->rc);
	store_close(b->st);
	sim_free(&b->sim);
	free(b->put.v);
	free(b->put_bound.v);
	free(b->maint.v);
	if (b->o.keep) {
		printf("kept %s\n", b->dir);
		return;
	}
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", b->db, sfx[i]);
		unlink(p);
	}
	if (rmdir(b->dir) < 0)
		log_warn("rmdir %s", b->dir);
}

int
main(int argc, char **argv)
{
	static struct bench b;

	log_init(true, 0, "store_bench");
	parse_opts(argc, argv, &b.o);
	bench_setup(&b);
	bench_run(&b);
	bench_report(&b);
	bench_cleanup(&b);
	return 0;
}
