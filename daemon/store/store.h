/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The window store, the only code that knows SQLite: schema, writes,
 * roll-ups and retention (store.c, store_maint.c, store_heal.c), reads
 * (store_read.c, store_conn.c), each signal's part (store_<signal>.c)
 * and the writer thread (writer.c).
 */
#ifndef VITALSD_STORE_H
#define VITALSD_STORE_H

#include "gpumem/gpumem.h"
#include "window/window.h"

struct hp_budget_rec;
struct hp_record;

/* -------------------------------------- store.c, store_maint.c, store_read.c */

enum store_state {
	STORE_OK,
	STORE_FULL,	/* SQLITE_FULL / ENOSPC: writes wait and retry */
	STORE_IO_ERROR, /* other write failures: wait and retry */
	STORE_CLOSED,	/* not open (no database) */
};

enum store_journal {
	STORE_JOURNAL_PERSIST,	/* rollback journal, kept and zeroed: default */
	STORE_JOURNAL_TRUNCATE, /* rollback journal, cut to 0 bytes */
	STORE_JOURNAL_WAL,
};

/* The auto_vacuum of a file the store creates (store.c, db_create;
 * doc/storage.md, "Schema 27: the moves' writes"). */
enum store_vacuum {
	/* no pointer-map pages: free pages are reused, the file keeps its
	 * size (at most the bound) and is rebuilt (VACUUM) only when it
	 * is over the bound with its live pages under it: default */
	STORE_VACUUM_NONE,
	/* free pages handed back by incremental vacuum */
	STORE_VACUUM_INCREMENTAL,
};

struct store_opts {
	int64_t rollup1_after_s; /* level-0 windows older than this ... */
	unsigned rollup1_s;	 /* ... merge into windows of this span */
	int64_t rollup2_after_s;
	unsigned rollup2_s;
	/* Level-2 windows keep thread rows too; false (the default): a
	 * roll-up into level 2 drops them, their figures being in their
	 * processes' rows already (doc/storage.md, "Roll-ups"). */
	bool rollup2_threads;
	/* level-0 windows sampled in bursts (burst_samples > 0) stay out of
	 * roll-ups until this old: full resolution around a stall. 0: they
	 * roll up as any other. Retention and the size bound still apply. */
	int64_t burst_keep_s;
	/* A level is rolled up only once a window is this far past its
	 * age, then all that are of age at once: fewer, larger roll-ups
	 * (store_maint.c, roll_due). 0: at every pass. */
	int64_t rollup_batch_s;
	int64_t retain_s;   /* nothing older than this is kept */
	uint64_t max_bytes; /* database size bound */
	int busy_timeout_ms;
	/* Wall-clock trust (store_maint.c): a clock more than clock_jump_s
	 * ahead of what the stored windows vouch for is suspect until the
	 * kernel says it is synchronised or it has run in step with
	 * CLOCK_BOOTTIME for clock_stable_s. 0: the defaults below. */
	int64_t clock_jump_s;
	int64_t clock_stable_s;
	/* the daemon's I/O accounting, read by each maintenance pass
	 * (store_usage.c); NULL: /proc/self/io */
	const char *io_path;
	/* Batched commits (store_spool.c): each window is committed at once
	 * into the spool, a database of its own at spool_path on a RAM file
	 * system, and the spool's windows move into the main file in one
	 * transaction every commit_s seconds (and before maintenance and at
	 * close). NULL: every window is its own transaction in the main file. */
	const char *spool_path;
	unsigned commit_s;
	/* The main file's journal when it has a spool (store.c, db_journal;
	 * doc/storage.md, "The main file's journal"): a store without one,
	 * and the spool itself, stay in WAL mode. */
	enum store_journal journal;
	/* auto_vacuum of a new file; an existing file keeps its own */
	enum store_vacuum vacuum;
	/* Level 0's task blobs and parts rows in the main tables, not in
	 * a table per span (store_span.c): the spool's own file only. */
	bool no_spans;
};

#define STORE_CLOCK_JUMP_S (24 * 3600)
#define STORE_CLOCK_STABLE_S (24 * 3600)

/* store_tclock.c: one writer operation's time by its thread's clocks
 * (doc/storage.md, "What delays the writer"): wall = cpu + runq + lock +
 * other; ckpt is a part of it (the WAL checkpoint after the commit). */
struct store_commit_split {
	uint64_t wall_ns;  /* CLOCK_MONOTONIC, the whole operation */
	uint64_t cpu_ns;   /* CLOCK_THREAD_CPUTIME_ID: on a CPU */
	uint64_t runq_ns;  /* runnable, waiting for a CPU (schedstat) */
	uint64_t lock_ns;  /* asleep in the busy handler: a reader's lock */
	uint64_t ckpt_ns;  /* in the WAL checkpoint after the commit */
	uint64_t other_ns; /* the rest: blocked in the kernel (fsync, I/O) */
	bool runq_known;   /* the kernel keeps schedstat */
};

/* The writer's operations of one kind since it started. */
struct store_commit_stats {
	uint64_t n;
	struct store_commit_split last, worst; /* worst: the longest wall */
	uint64_t lock_max_ns, lock_sum_ns, runq_max_ns;
	uint64_t lock_over; /* operations a reader delayed > 1 ms */
};

#define STORE_READER_DELAY_NS 1000000 /* the goal: a reader delays ≤ 1 ms */
/* truncations of the WAL that found a reader's snapshot in the way, in a
 * row, before the next one waits for the readers (store_after_write) */
#define STORE_WAL_BUSY_RUN 16

struct store_tclock {
	int64_t wall, cpu, runq;
	uint64_t lock, ckpt;
};

void store_tclock_start(struct store_tclock *t);
void store_tclock_stop(const struct store_tclock *t,
    struct store_commit_split *ret);
void store_tclock_note(struct store_commit_stats *c,
    const struct store_commit_split *s);
void store_tclock_add_lock(uint64_t ns);
void store_tclock_add_ckpt(uint64_t ns);

struct store_stats {
	enum store_state state;
	int last_err; /* -errno of the last failed operation, 0 none */
	char last_errmsg[128];
	uint64_t windows_written, write_failures;
	uint64_t windows_rolled, deleted_age, deleted_size;
	/* auto_vacuum NONE files rebuilt (VACUUM) to come back under a
	 * lowered bound (store_vacuum_over) */
	uint64_t rebuilds;
	uint64_t corrupt_moved; /* databases moved aside at open */
	char corrupt_path[256];
	uint64_t db_bytes;
	uint64_t commit_ns_last, commit_ns_max;
	/* self-healing (store_heal.c) */
	uint64_t open_retries;	   /* opens of a closed store tried again */
	int64_t retry_at_mono_ns;  /* the writer tries again then; 0 none */
	uint64_t windows_salvaged; /* copied out of a damaged file */
	uint64_t wal_damaged;	   /* WAL files found damaged at open */
	uint64_t shm_faults;	   /* faults on a cut -shm, repaired */
	/* the wall clock as the last maintenance pass judged it */
	bool clock_suspect;	/* ahead by more than clock_jump_s */
	bool clock_confirmed;	/* kernel-synchronised, or stable long enough */
	int64_t clock_ahead_ns; /* how far ahead of the stored windows */
	uint64_t clock_deferred; /* passes whose wall-clock deletions waited */
	uint64_t clock_held;	 /* windows the last such pass kept */
	/* usage (store_usage.c), as of the last maintenance pass: bytes the
	 * kernel counted written to storage by the daemon since this handle
	 * opened, their rate per day over io_span_ns (up to the last 24 h),
	 * the error of the last read of the accounting (0 none) */
	uint64_t io_written, io_per_day;
	int64_t io_span_ns;
	int io_err;
	/* the history stored: Σ window durations, windows, the first start
	 * and last end by the wall clock, and how long max_bytes would hold
	 * at the bytes per covered ns stored so far (0: unknown) */
	int64_t history_ns;
	uint64_t history_windows;
	int64_t history_wall_first_ns, history_wall_last_ns;
	int64_t bound_holds_ns;
	/* batched commits (store_spool.c): whether the spool is in use, and
	 * why not (-errno, 0 none); windows waiting in it; batches moved into
	 * the main file, the windows they held and the last batch's cost;
	 * batches that failed (their windows wait for the next) */
	bool spool_on;
	int spool_err;
	uint64_t spool_pending;
	uint64_t spool_flushes, spool_moved, spool_failures;
	uint64_t flush_ns_last, flush_ns_max;
	/* blobs refused by a read (bad frame, checksum, version or bytes):
	 * their rows were skipped, the rest of the window read */
	uint64_t blob_errors;
	uint64_t instances_pruned; /* instances no window referred to */
	/* the WAL's truncation after a write (store_after_write): tries a
	 * reader's snapshot kept from finishing without waiting, and those
	 * that waited for the readers (the WAL past its reserve, or
	 * STORE_WAL_BUSY_RUN of the others in a row) */
	uint64_t wal_busy, wal_waited;
	/* the writer thread's own clocks (store_tclock.c), filled by the
	 * writer (writer.c): each window's put, each maintenance pass */
	struct store_commit_stats puts, passes;
};

/* Metrics for top-N queries. */
enum store_metric { METRIC_CPU, METRIC_MINFLT, METRIC_MAJFLT, METRIC_RSS };

struct store;

void store_opts_default(struct store_opts *o);
/* store.c */
int store_open(const char *path, const struct store_opts *o,
    struct store **ret);
struct store *store_close(struct store *s);
int store_put(struct store *s, const struct window *w);
/* Move the spool's windows into the main file now (store_spool.c); 0
 * when there is no spool or nothing waits. */
int store_flush(struct store *s);
/* The maintenance period, in s, for a store whose passes also move the
 * spool (store_spool.c): commit_s with a spool, at least min_s. */
unsigned store_maintain_every_s(const struct store *s, unsigned min_s);
/* store_maint.c */
int store_maintain(struct store *s, int64_t now_wall_ns);

/* "Now" for maintenance: the three clocks it judges ages with. */
struct store_now {
	int64_t wall_ns;  /* CLOCK_REALTIME */
	int64_t boot_ns;  /* CLOCK_BOOTTIME */
	char boot_id[40]; /* this boot, as windows carry it; "": unknown */
	int wall_sync;	  /* kernel time status: 1 synchronised, 0 not,
			   * < 0 unknown */
};

int store_maintain_at(struct store *s, const struct store_now *now);
/* store.c */
void store_get_stats(const struct store *s, struct store_stats *ret);
void store_sqlite_memory(uint64_t *ret_used, uint64_t *ret_peak);
uint64_t store_sqlite_cache(void);
void store_release_memory(struct store *s);
/* store_busy.c: how long the batched moves waited for readers of the main
 * file and readers for a move (rollback journal: a reader's SHARED lock
 * and a commit's EXCLUSIVE one exclude each other), process-wide since
 * start: waits, their sum, largest and 99th percentile (the upper edge
 * of its power-of-two bucket), in ns */
struct store_wait {
	uint64_t n, waited, sum_ns, max_ns, p99_ns;
};

void store_busy_stats(struct store_wait *ret_move, struct store_wait *ret_read);
void store_busy_reset(void);
/*
 * Read threads lent the writer's priority while it waits for them: a
 * thread that reads the main file registers itself (store_busy_reader
 * true; false before it ends). When the writer's connection starts to
 * wait for a reader's lock it sets the nice value of every registered
 * thread inside a read snapshot (store_conn_begin .. store_conn_end; an
 * idle one holds no lock, and a boost would last into its next request)
 * to its own (the read in flight then finishes at the writer's priority,
 * not at the pool's +10 behind every other task of the machine);
 * store_busy_unlend, called by a read thread between reads, says whether
 * it had been lent and is to set its own nice value back (raising one's
 * own needs no privilege; lowering another's needs CAP_SYS_NICE or
 * RLIMIT_NICE, and without either nothing is lent: counted in denied).
 */
#define STORE_READERS_MAX 16
void store_busy_reader(bool on);
void store_busy_reading(bool on); /* store_conn.c: a snapshot held */
bool store_busy_unlend(void);
void store_busy_lend_stats(uint64_t *ret_lent, uint64_t *ret_denied);
/* store_usage.c: the usage figures now (they follow each maintenance) */
int store_usage_refresh(struct store *s);
/* store_read.c */
int store_windows(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, struct window ***ret, size_t *ret_n);
/* At most max windows (buckets at a granularity), the newest of the range,
 * returned oldest first; only those are loaded. *ret_truncated (may be
 * NULL): older ones matched too. max 0: no limit (internal callers). */
int store_windows_max(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    unsigned granularity_s, size_t max, struct window ***ret, size_t *ret_n,
    bool *ret_truncated);
int store_windows_budget(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, unsigned granularity_s, size_t max, size_t budget,
    struct window ***ret, size_t *ret_n, bool *ret_truncated,
    size_t *ret_bytes);
size_t store_window_bytes(const struct window *w);
/* store.c: after -EUCLEAN (corrupt while open): move the file aside as store_open
 * does and start a fresh database in the same handle. */
int store_recover(struct store *s);
/* store_heal.c: a store that cannot open now is returned closed and
 * reopened later (the writer does, with backoff). */
int store_open_retry(const char *path, const struct store_opts *o,
    struct store **ret);
bool store_is_open(struct store *s);
int store_reopen(struct store *s);
int store_heal_sigbus_install(void);
/* store_read.c */
int store_top(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, enum store_metric m, unsigned n, struct window_task **ret,
    size_t *ret_n);
int store_process(struct store *s, int32_t pid, uint64_t starttime,
    int64_t from_wall_ns, int64_t to_wall_ns, struct window_task **ret,
    size_t *ret_n);
/* store.c */
const char *store_state_name(enum store_state st);

/* Added with the store: the schema a new database gets, and its mark. */
#define STORE_SCHEMA_VERSION 28
#define STORE_APPLICATION_ID 0x56544c53 /* "VTLS" */

/* One window of a task's history, with the window it came from. */
struct store_hist {
	char boot_id[40];
	uint32_t level;
	uint32_t hz;
	int64_t mono_start_ns, mono_end_ns;
	int64_t wall_start_ns, wall_end_ns;
	struct window_task t;
	/* capacity-weighted t's ticks (wcpu/wcpu.h), filled by the query
	 * after the read; wtd_src 0: none */
	double wtd_ticks;
	uint32_t wtd_src;
};

/* store_wcpu.c: the capacity-weighted CPU parts of a range, oldest
 * first (p NULL: the window has none) */
struct window_wcpu;
struct store_enc;
struct store_wcpu_win {
	char boot_id[40];
	uint32_t level, hz;
	int64_t wall_start_ns, wall_end_ns;
	struct window_wcpu *p;
};
int store_wcpu_span(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct store_wcpu_win **ret, size_t *ret_n);
void store_wcpu_span_free(struct store_wcpu_win *v, size_t n);
/*
 * The payload (doc/storage.md, "window_wcpu"). Version 2 gives a kind of
 * rows (processes, threads) by reference when they are ref's rows of that
 * kind, key for key and on-CPU time for on-CPU time: the BPF rows of the
 * same window (its sched part), "other" rows left out; ref NULL: every
 * row in full. Decoding such a payload needs the same rows: -ENODATA
 * without them, -EBADMSG when they differ in number; -EBADMSG for
 * anything malformed. Version 1 (older stores) has every row in full.
 */
struct window_bpf_proc;
struct window_bpf_thread;
struct store_bpfkeys;
struct store_wcpu_ref {
	const struct window_bpf_proc *proc; /* tgid −1: "other", left out */
	size_t nproc;
	const struct window_bpf_thread *thread; /* tid −1: left out */
	size_t nthread;
	/* the same rows' keys alone (store_bpfrows_keys; id −1 left out)
	 * in place of proc and thread when not NULL */
	const struct store_bpfkeys *keys;
};
void store_wcpu_encode(struct store_enc *e, const struct window_wcpu *p,
    const struct store_wcpu_ref *ref);
void store_wcpu_encode_v1(struct store_enc *e, const struct window_wcpu *p);
int store_wcpu_decode(const void *payload, size_t len, unsigned version,
    const struct store_wcpu_ref *ref, struct window_wcpu **ret);

/* store_dmabuf.c: the DMA-BUF parts of the windows that ended in (from,
 * to] folded into one (*ret NULL: none), and the blob's payload */
struct window_dmabuf;
int store_dmabuf_range(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, struct window_dmabuf **ret, uint32_t *ret_windows);
void store_dmabuf_encode(struct store_enc *e, const struct window_dmabuf *p);
/* store_gpufreq.c: the GPU frequency parts of the windows that ended in
 * (from, to] folded into one (NULL: none); the blob's payload */
struct window_gpufreq;
int store_gpufreq_range(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, struct window_gpufreq **ret);
void store_gpufreq_encode(struct store_enc *e, const struct window_gpufreq *p);
int store_gpufreq_decode(const void *payload, size_t len,
    struct window_gpufreq **ret);
int store_dmabuf_decode(const void *payload, size_t len,
    struct window_dmabuf **ret);

/* store_syscalls.c: the syscall parts of the windows that ended in (from,
 * to] folded into one (*ret NULL: none), and the blob's payload */
struct window_syscalls;
int store_syscalls_range(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, struct window_syscalls **ret, uint32_t *ret_windows);
void store_syscalls_encode(struct store_enc *e,
    const struct window_syscalls *p);
int store_syscalls_decode(const void *payload, size_t len,
    struct window_syscalls **ret);

/* store_read.c */
int store_history(struct store *s, bool threads, int32_t id, uint64_t starttime,
    int64_t from_wall_ns, int64_t to_wall_ns, struct store_hist **ret,
    size_t *ret_n);
/* store.c, tests and tools only: run SQL, return the first column of the first row. */
int store_exec(struct store *s, const char *sql, char *ret, size_t retsz);
/* Tests only: a new database at an older schema version, plus some SQL. */
int store_create_version(const char *path, unsigned version, const char *sql);

/* store_conn.c: read-only connections for the query threads. */
int store_conn_open(const struct store *writer, struct store **ret);
/* the same handle, the file opened at its first read */
int store_conn_new(const struct store *writer, struct store **ret);
struct store *store_conn_close(struct store *rc);
int store_conn_begin(struct store *rc);
void store_conn_end(struct store *rc);
/* an idle reader's memory given back; its file stays open (store_conn.c) */
void store_conn_idle(struct store *rc);
/* open and not released since its last read: something to give back */
bool store_conn_is_open(const struct store *rc);
/* the file open, released or not (a handle from store_conn_new: after
 * its first read) */
bool store_conn_has_file(const struct store *rc);
/* store_wcache.c: what a connection's decoded-window cache and whole-read
 * memo did since it was opened, and the heap they hold now (the reader's
 * own thread, or one that excludes its reads) */
struct store_cache_stats {
	uint64_t hits, misses;		/* decoded windows reused / decoded */
	uint64_t memo_hits, memo_saved; /* reads answered from a memo, reads
					 * whose sums were kept as one */
	uint64_t bytes;			/* decoded windows + memos held */
	uint64_t opens; /* times the connection opened its file */
};
void store_conn_cache_stats(const struct store *rc,
    struct store_cache_stats *ret);

/* --------------------------------------------------------------- writer.c */

struct writer;

/* A window queued with a note, as the loop is told of it. */
struct writer_done {
	uint64_t seq; /* the window's */
	int err;      /* 0: committed; < 0: not (yet) */
	bool final;   /* err < 0: never will be (dropped, refused) */
	char *note;   /* as given to writer_submit_note */
};

/* heapprofd's records through the writer (Health.heapprofd.records_*). */
struct writer_rec_stats {
	unsigned queued;
	uint64_t written, dropped, failed;
};

int writer_start(struct store *store, unsigned queue_max, struct writer **ret);
/* w queued, shared (window_share): closed, no one writes it any more; the
 * caller keeps its own ownership and may free it at once. */
int writer_submit(struct writer *wr, const struct window *w);
int writer_submit_note(struct writer *wr, const struct window *w,
    const char *note);
int writer_fd(const struct writer *wr);
void writer_each_done(struct writer *wr,
    void (*fn)(void *arg, const struct writer_done *dn), void *arg);
int writer_call(struct writer *wr, int (*fn)(struct store *s, void *arg),
    void (*done)(void *arg), void *arg);
void writer_call_cancel(struct writer *wr);
int writer_hp_put(struct writer *wr, const struct hp_record *r);
void writer_hp_stats(struct writer *wr, struct writer_rec_stats *ret);
/* Stopping daemons and tests only: the loop never waits for the writer. */
int writer_wait(struct writer *wr, unsigned ms);
#define WRITER_FLUSH_MS 5000 /* a stopping daemon waits this long */
void writer_get(struct writer *wr, struct store_stats *ret_stats,
    unsigned *ret_queued, uint64_t *ret_dropped);
/* heap trims after the queue drained, and RSS they gave back (bytes) */
void writer_trims(struct writer *wr, uint32_t *ret_n, uint64_t *ret_bytes);
struct writer *writer_stop(struct writer *wr, unsigned flush_ms);

/* store_read.c: every thread of process tgid (starttime >= since, when set) */
int store_thread_history(struct store *s, int32_t tgid, uint64_t since,
    int64_t from_wall_ns, int64_t to_wall_ns, struct store_hist **ret,
    size_t *ret_n);

/* store_fgbg.c: the foreground/background parts of the windows ending in
 * (from, to], oldest first, with each window's times in ret_w (its t
 * zeroed); a blob that does not decode is counted and its window left
 * out. Free both with store_fgbg_range_free. */
struct window_fgbg;
int store_fgbg_range(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct window_fgbg ***ret_p, struct store_hist **ret_w, size_t *ret_n);
void store_fgbg_range_free(struct window_fgbg **p, struct store_hist *w,
    size_t n);
/* tests: a part as stored (framed, compressed), and back; -EBADMSG */
int store_fgbg_blob(const struct window_fgbg *p, uint8_t **ret,
    size_t *ret_len);
int store_fgbg_unblob(const void *b, size_t n, struct window_fgbg **ret);

/* store_gpumem.c: spans of stored windows (store lock taken). ret_state
 * (may be NULL): the newest window's, saturated if any window was. */
struct store;
int store_gpumem_span(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    struct gpumem_span **ret, size_t *ret_n, struct window_gpumem *ret_state);
/* The same, and each instance's bytes per point of the span (ret_series,
 * free with store_gpumem_series_free): at most GPUMEM_SERIES_POINTS points
 * and max_values values in all (0: GPUMEM_SERIES_VALUES), windows bucketed
 * into fewer points as needed. */
struct gpumem_series;
int store_gpumem_span_series(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, size_t max_values, struct gpumem_span **ret,
    size_t *ret_n, struct window_gpumem *ret_state,
    struct gpumem_series *ret_series);
void store_gpumem_series_free(struct gpumem_series *ser);
int store_gpumem_growth(struct store *s, uint32_t gpu_id, int32_t pid,
    uint64_t starttime, int64_t from_wall_ns, int64_t to_wall_ns,
    struct gpumem_span *ret);

/* store_hp.c (never on the loop thread: the writer thread puts records,
 * heapprofd reads at setup, query threads list; the store's lock is
 * taken). store_hp_insert, _update, _get: tests and tools. */
int store_hp_put(struct store *s, const struct hp_record *r);
int store_hp_max_id(struct store *s, int64_t *ret);
int store_hp_insert(struct store *s, struct hp_record *r);
int store_hp_update(struct store *s, const struct hp_record *r);
int store_hp_budget(struct store *s, int64_t since_wall_ns,
    struct hp_budget_rec **ret, size_t *ret_n);
int store_hp_list(struct store *s, unsigned limit, struct hp_record **ret,
    size_t *ret_n);
int store_hp_running(struct store *s, struct hp_record **ret, size_t *ret_n);
int store_hp_get(struct store *s, int64_t id, struct hp_record *ret);

#endif /* VITALSD_STORE_H */
