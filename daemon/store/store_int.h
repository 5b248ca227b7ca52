/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the store's files (daemon/store/store*.c: schema, opening,
 * writes, roll-ups, reads, one file per signal's tables): the store handle,
 * its prepared statements and the column lists both sides must agree on.
 * Nothing outside daemon/store/ uses its internals or <sqlite3.h> (but
 * check_query, which tests them); the store's API is store/store.h.
 */
#ifndef VITALSD_STORE_INT_H
#define VITALSD_STORE_INT_H

#include <pthread.h>
#include <sys/types.h>
#include <sqlite3.h>

#include "store/store.h"
#include "store/store_kv.h"
#include "store/store_codec.h"
#include "window/window.h"

/*
 * Statements of the write side (SQL: store_sql.c). Every one is prepared
 * at open, which checks the schema; all but the per-window put's
 * (store_stmt_hot) are finalized again at once and prepared at first
 * use (store_ws), and finalized after each maintenance pass
 * (store_stmts_release): most are a pass's.
 */
enum store_wstmt {
	WS_BEGIN,
	WS_COMMIT,
	WS_ROLLBACK,
	WS_INS_WINDOW,
	WS_HAVE_WINDOW, /* v26: the replay check by windows_wall */
	WS_INS_BOOT,
	WS_COVERED,
	WS_INS_PARTS,
	WS_DEL_WINDOW,
	WS_DEL_AGE,
	WS_DEL_OLDEST,
	WS_COUNT,
	WS_PAGE_COUNT,
	WS_FREELIST,
	WS_VACUUM,
	WS_ROLL_SRC,
	WS_ROLL_EXIST,
	WS_SAVEPOINT, /* a step of a maintenance pass (store_txn_begin) */
	WS_RELEASE,
	WS_ROLLBACK_TO,
	WS__MAX
};

/* Statements of the read side (SQL: store_sql.c), prepared at first
 * use (store_rs) and finalized after each maintenance pass. */
enum store_rstmt {
	RS_WINDOW,
	RS_PARTS,
	RS_KEY,
	RS_TASKS,
	RS_IDENT,
	RS_IDENT_ONE,
	RS_INST,
	RS_RANGE,
	RS_TASK_SEG,
	RS_TASK_BLOBS, /* RS_TASK_SEG's id and blob only: a top-N's */
	RS_INST_ID,
	RS_INST_TGID,
	RS__MAX
};

#define STORE_PART_NSTMT 14
#define STORE_SUM_NSTMT 12 /* store_tasksum.c's statements */
#define STORE_SPOOL_NSTMT \
	40 /* store_spool.c's statements on db */ /* statements of one part's store_<signal>.c */

/* Readings of the daemon's write accounting (store_usage.c): one kept
 * every STEP, enough for 24 h and one more. */
#define STORE_USAGE_PTS 97
#define STORE_USAGE_STEP_NS (900 * NSEC_PER_SEC)

struct store_usage_pt {
	int64_t mono_ns;
	uint64_t bytes;
};

struct store_usage {
	struct store_usage_pt pt[STORE_USAGE_PTS];
	unsigned head, n;
	struct store_usage_pt now; /* the latest reading, kept or not */
};

/* store_prov.c's statements, prepared when first used */
enum store_prov_stmt {
	STORE_PROV_PUT,
	STORE_PROV_GET,
	STORE_PROV_GET_SPOOL,
	STORE_PROV_MOVE,
	STORE_PROV_PRUNE,
	STORE_PROV__MAX
};

/*
 * One handle may be shared by threads (the writer thread; setup's reads
 * before it starts; tests): every public call holds `lock`, so statements
 * and stats are never used by two threads at once. Internal functions
 * expect it held. The loop thread makes no call on it while it runs.
 */
/* The lists a window's blobs are compressed with a dictionary for
 * (store_dict.c); the values are stored (blob_dict.slot). 1, 2 and 3
 * were trained on payloads of version 1 (task rows, counters), 5 and 6
 * on task rows of version 2: still read, no longer trained or written
 * with (7 is, on the counters' version 2; 8 and 9 on task rows of
 * version 3; 10 on BPF rows of version 4). */
enum store_dslot {
	DSLOT_NONE = 0,
	DSLOT_PROCS = 1,
	DSLOT_THREADS = 2,
	DSLOT_KV = 3,
	DSLOT_SYS = 4,
	DSLOT_PROCS2 = 5,
	DSLOT_THREADS2 = 6,
	DSLOT_KV2 = 7,
	DSLOT_PROCS3 = 8,
	DSLOT_THREADS3 = 9,
	DSLOT_BPF4 = 10,
	DSLOT__MAX
};

/* store_agg.c: instance id -> index, and per-instance sums (defined
 * here: struct store keeps one between reads) */
struct store_imap {
	int64_t *key;
	uint32_t *val;
	size_t mask, n;
};
struct store_agg {
	int64_t iid, last_wid;
	struct window_task t; /* the sums; identity filled at the end */
	uint64_t key;
};
struct store_aggs {
	struct store_imap map;
	struct store_agg *a;
	size_t n, cap;
	size_t hint; /* the slot the next row most likely takes */
};

struct store {
	pthread_mutex_t lock;
	sqlite3 *db;
	char *path;
	struct store_opts o;
	struct store_stats st;
	sqlite3_stmt *ws[WS__MAX];
	/* A maintenance pass's one transaction is open (store_maint.c): its
	 * steps are savepoints in it (store_txn_begin) */
	bool pass_txn;
	/* a roll-up into buckets of this span is being written (0: none):
	 * summaries of longer spans stay (store_maint.c) */
	int64_t roll_span_ns;
	sqlite3_stmt *rs[RS__MAX];
	int64_t page_size;
	/* the file's auto_vacuum is INCREMENTAL (else NONE: free pages
	 * stay in the file, store_core.c's bound counts pages in use) */
	bool incremental;
	/* NONE: the file was over its budget at open (a bound lowered since
	 * it was made); store_vacuum_over rebuilds it once */
	bool rebuild_due;
	uint64_t budget;      /* bytes the main file may hold */
	uint64_t wal_reserve; /* bytes kept for the WAL inside max_bytes */
	/* truncations after a write that found a reader in the WAL, in a
	 * row (store_after_write) */
	unsigned wal_busy_run;
	int64_t max_span_ns; /* no stored window is longer (wall clock) */
	/* each window part's statements (store_parts[id]->sql) */
	sqlite3_stmt *part_st[WPART__MAX][STORE_PART_NSTMT];
	/* store_maint.c: the wall clock's offset from CLOCK_BOOTTIME at the
	 * last pass, and since when (boot ns) it has not moved */
	struct {
		bool init;
		int64_t off_ns, stable_since_ns;
	} clk;
	/* A read connection (store_conn.c): the writer's handle, whose
	 * max_span_ns it follows, and the file it has open. */
	const struct store *writer;
	dev_t dev;
	ino_t ino;
	bool in_txn;
	bool idle;	/* released while idle (store_conn_idle): still open */
	uint64_t opens; /* times it opened the file (store_conn.c) */
	/* store_conn.c: BEGIN, the spool's and the main file's first
	 * reads, COMMIT: a read snapshot's statements, kept */
	sqlite3_stmt *snap_st[4];
	dev_t spool_dev; /* the spool it attached (spool_attached) */
	ino_t spool_ino;
	/* Window ids, when set: the next window row takes ++*id_hwm, so the
	 * spool's windows and the main file's roll-ups never share an id
	 * (store_spool.c); NULL: SQLite picks. */
	int64_t *id_hwm;
	/* store_spool.c: the spool (a store of its own), its table list,
	 * when its oldest waiting window was put (CLOCK_MONOTONIC) */
	struct store *spool;
	struct store *inst_main; /* on a spool: the store it feeds */
	/* on db; the moves' only during a move (moves_release) */
	sqlite3_stmt *spool_st[STORE_SPOOL_NSTMT];
	unsigned spool_nst;
	int64_t spool_first_ns;
	int64_t id_next;     /* what id_hwm points to on the main store */
	bool spool_attached; /* attached to db as "spool" */
	bool spool_tried;    /* attaching was tried on this connection */
	/* store_spool.c: the last window whose put failed (boot, level,
	 * starts), until a put of it succeeds: a failed try may have landed
	 * (a commit that said error, a -shm fault), and its replay is then
	 * the write, counted once */
	struct {
		char boot_id[40];
		uint32_t level;
		int64_t mono_start_ns, wall_start_ns;
		bool set;
	} failed;
	/* store_heal.c: the process's -shm faults when this store was
	 * made or last opened (a fault since: store_heal_pending) */
	uint64_t shm_seen;
	/* store_inst.c: the writer's instance ids (NULL on a reader) */
	struct store_iw *iw;
	/* store_tasksum.c: its statements (NULL: a schema without summaries) */
	sqlite3_stmt *sum_st[STORE_SUM_NSTMT];
	/* store_taskread.c: identities by instance id, for one read */
	struct store_rcache *rcache;
	/* store_wcache.c: decoded window rows kept between top-N reads */
	struct store_wcache *wcache;
	/* store_wcache.c: the counts of this handle's caches already freed
	 * (idle, a moved file, a failed snapshot: any close), bytes 0 */
	struct store_cache_stats wcache_gone;
	/* store_taskread.c: a top-N read's sums, their memory kept for the
	 * next read on this connection (empty between reads) */
	struct store_aggs top_aggs;
	/* store_keys.c: the writer's key ids (NULL on a reader), and names
	 * by key id for reads */
	struct store_kw *kw;
	struct store_knames *kn;
	/* store_wparts.c: the parts of the window being written, and a
	 * window being loaded holds its parts row (RS_PARTS) */
	struct store_wacc *wacc;
	bool ld_parts;
	/* store_load of window ld_id under way: its parts row (if any) is
	 * what RS_PARTS holds while ld_parts; a folded part's lookup takes
	 * its blob there, or looks in its table only (store_fold_step) */
	bool ld_active;
	int64_t ld_id;
	/* store_usage.c */
	struct store_usage usage;
	uint64_t usage_base; /* the first reading by this handle */
	bool usage_base_set;
	/* store_busy.c: ns slept on the main file's locks by this
	 * connection, and when its current wait began */
	uint64_t busy_ns;
	int64_t busy_start_ns;
	/* store_dict.c: the dictionary (its id) the writer compresses each
	 * slot with (0: none), those a pass trained (the writer's once it
	 * commits), passes to wait before training again */
	uint32_t dict_cur[DSLOT__MAX];
	uint32_t dict_new[DSLOT__MAX];
	unsigned dict_wait;
	/* a BPF rows blob was made since open (by this handle or a spool
	 * writing for it): slot 10 is looked for only then, so a file of a
	 * daemon without BPF is not walked whole each pass for blobs it will
	 * never have */
	bool bpf_written;
	/* store_prov.c: its statements, the provenance this handle wrote */
	sqlite3_stmt *prov_st[STORE_PROV__MAX];
	struct provenance prov_last;
	bool prov_written;
	/* store_span.c: the writer's INSERT into the span tables (tasks,
	 * parts) of span_k; a reader's views made at main's schema
	 * version span_schema */
	sqlite3_stmt *span_ins[2];
	int64_t span_k[2];
	bool span_stale; /* the writer's views to be made again */
	int64_t span_schema;
};

/*
 * Columns of windows in the order of enum wcol; the write and the read
 * side both index rows with it. Keep the three in step.
 */
#define STORE_WINDOW_COLS STORE_WINDOW_COLS_AS("boot_id")
/* v24: the boot's id in the row (the insert), its text through the boot
 * table (the reads) */
#define STORE_WINDOW_INS_COLS STORE_WINDOW_COLS_AS("boot")
#define STORE_WINDOW_SEL_COLS STORE_WINDOW_COLS_AS(STORE_BOOT_TEXT("windows."))
#define STORE_WINDOW_COLS_AS(boot)                                          \
	"level, " boot ", seq, mono_start_ns, mono_end_ns, boot_start_ns, " \
	"boot_end_ns, wall_start_ns, wall_end_ns, duration_ns, hz, "        \
	"interval_ms, cpu_span, samples, samples_valid, d_ctxt, "           \
	"d_processes, vm_samples, self_utime_us, self_stime_us, "           \
	"sample_ns_sum, sample_ns_max, late_ticks, burst_samples, "         \
	"procs_scanned, threads_scanned, procs_exited, threads_exited, "    \
	"cpu_dropped, store_state, store_queued, store_dropped"

enum wcol {
	WC_LEVEL,
	WC_BOOT_ID,
	WC_SEQ,
	WC_MONO_START,
	WC_MONO_END,
	WC_BOOT_START,
	WC_BOOT_END,
	WC_WALL_START,
	WC_WALL_END,
	WC_DURATION,
	WC_HZ,
	WC_INTERVAL,
	WC_CPU_SPAN,
	WC_SAMPLES,
	WC_SAMPLES_VALID,
	WC_D_CTXT,
	WC_D_PROCESSES,
	WC_VM_SAMPLES,
	WC_SELF_UTIME,
	WC_SELF_STIME,
	WC_SAMPLE_NS_SUM,
	WC_SAMPLE_NS_MAX,
	WC_LATE,
	WC_BURST,
	WC_PROCS_SCANNED,
	WC_THREADS_SCANNED,
	WC_PROCS_EXITED,
	WC_THREADS_EXITED,
	WC_CPU_DROPPED,
	WC_STORE_STATE,
	WC_STORE_QUEUED,
	WC_STORE_DROPPED,
	WC__MAX
};

/* v7's window_task columns after window_id (its migration reads them). */
#define STORE_TASK_COLS                                                    \
	"thread, id, starttime, tgid, uid, comm, name, d_utime, d_stime, " \
	"d_minflt, d_majflt, samples, wall_ns, total_ticks, norm_ticks, "  \
	"rss_pages_max, rss_pages_last, born, exited"
#define STORE_TASK_NCOLS 19

/* window_cpu columns after window_id. */
#define STORE_CPU_COLS                                                        \
	"cpu, user, nice, system, idle, iowait, irq, softirq, steal, guest, " \
	"guest_nice, samples, wall_ns, online_end, "                          \
	"khz_n, khz_min, khz_max, khz_sum, khz_last, max_khz, capacity, "     \
	"ratio_n, ratio_min, ratio_max, ratio_sum, ratio_last"

/* window_psi columns after window_id. */
#define STORE_PSI_COLS                                                    \
	"resource, available, have_full, samples, d_some_us, d_full_us, " \
	"some_n, some_min, some_max, some_sum, some_last, "               \
	"full_n, full_min, full_max, full_sum, full_last"

/* store_wparts.c: a window's counters, gauges and BPF frame while it is
 * written (or migrated: store_v9.c) */
struct store_wacc {
	struct store_kv_count *c;
	size_t nc, capc;
	struct store_kv_gauge *g;
	size_t ng, capg;
	struct store_enc bpf;	    /* the BPF rows' frame, empty for none */
	uint32_t dict_kv, dict_sys; /* their dictionaries (0: none) */
};

/* store_dict.c: trained zstd dictionaries (schema v16) */
uint32_t store_dict_cur(const struct store *s, enum store_dslot slot);
/* A BPF rows blob was framed for s (or the spool writing for it): slot 10
 * is looked for from then on. */
void store_dict_bpf_written(struct store *s);
int store_dict_load(struct store *s);
int store_dict_train(struct store *s, int64_t now_wall_ns);
void store_dict_done(struct store *s, bool committed);

/* store_core.c: the layer every file of the store shares */
int store_rc_errno(int rc);
int store_fail(struct store *s, int rc, const char *what);
int store_fail_errno(struct store *s, int err, const char *msg);
void store_note_write_error(struct store *s, int err);
int store_run(sqlite3_stmt *st);
int64_t store_boot_key(const char *boot_id, size_t n);
int store_boot_fn(sqlite3 *db);
/* SQLite's process-wide settings, before its first open (once) */
void store_sqlite_setup(void);
/* a window's boot as text, where the row has its id (v24) */
#define STORE_BOOT_TEXT(w) \
	"(SELECT b.boot_id FROM boot b WHERE b.id = " w "boot)"
/*
 * A statement prepared at its first use: *slot, prepared from sql when
 * NULL. NULL when it does not prepare: SQLite's message stays on the
 * connection and a step or bind of NULL fails (SQLITE_MISUSE), which the
 * caller maps and counts as any failed step.
 */
sqlite3_stmt *store_stmt(struct store *s, sqlite3_stmt **slot, const char *sql);
sqlite3_stmt *store_ws(struct store *s, enum store_wstmt i);
sqlite3_stmt *store_rs(struct store *s, enum store_rstmt i);
/* Finalize what store_stmt prepares again when needed: the write side's
 * but the put's, the read side's, the parts' but their INSERTs (every
 * part's too with parts: right after open, so that a part this build or
 * configuration never writes holds none). */
void store_stmts_release(struct store *s, bool parts);
extern const char *const store_ws_sql[WS__MAX];
extern const char *const store_rs_sql[RS__MAX];
/* a maintenance step's transaction, a savepoint inside a pass's */
int store_txn_begin(struct store *s);
int store_txn_commit(struct store *s);

/* Window-level figures stored as named counters (the kv part): a table of a
 * struct's 4- or 8-byte unsigned fields (store_sched.c, store_trace.c). */
struct store_field {
	const char *key;
	size_t off, size;
};

/* clang-format off */
#define STORE_FIELD(type, f) \
	{ #f, offsetof(type, f), sizeof(((type *)0)->f) }
/* clang-format on */

uint64_t store_field_get(const void *base, const struct store_field *f);
void store_field_set(void *base, const struct store_field *f, uint64_t v);
int store_run_int(sqlite3_stmt *st, int64_t *ret);
void store_after_write(struct store *s);
int store_check_insert(sqlite3_stmt *st);

/* store_write.c */
int store_write_window(struct store *s, const struct window *w,
    int64_t *ret_id);

/* store_heal.c */
/* An insert that stored nothing (a trigger, a view: not our schema). */
#define STORE_RC_NOTHING (SQLITE_CORRUPT | (0x56 << 8))
int store_heal_foreign_objects(sqlite3 *db, char *why, size_t whysz);
int store_heal_check_replay(struct store *s, const struct window *w);
uint64_t store_heal_faults(void);
bool store_heal_pending(const struct store *s);
void store_heal_reopen(struct store *s);
int store_heal_shm_reset(const char *dbpath);
int store_heal_copy_file(const char *src, const char *dst);
int store_heal_before_open(struct store *s);
#define STORE_HEAL_FULL_CHECK_BYTES (256ULL << 20)
const char *store_heal_check_sql(const struct store *s);
/* store.c: close and open the same file again (lock held) */
int store_reopen_locked(struct store *s);

/* store_salvage.c */
int store_salvage(struct store *s, const char *bad);

/* store_core.c: the size bound, inside the caller's transaction */
int store_enforce_size(struct store *s, int64_t keep);
int store_vacuum_excess(struct store *s);
int store_vacuum_over(struct store *s);
int store_pages(struct store *s, int64_t *ret_pages, int64_t *ret_free);

/* store_read.c */
int store_read_prepare(struct store *s);
void store_read_finalize(struct store *s);
int store_load(struct store *s, int64_t id, struct window **ret);
void store_wparts_done(struct store *s);

/*
 * A window part's tables (store_<signal>.c), one line each in store_part.c:
 * its statements, prepared on every connection into s->part_st[id]; its
 * rows of one window written (put, inside the caller's transaction) and
 * read back (load: NULL when nothing reads them into a window); the
 * window_count rows whose kind starts with count_kind (count: NULL for
 * none; the first such row may make the part).
 */
struct store_part {
	const char *const *sql;
	unsigned nsql;
	int (*put)(struct store *s, int64_t id, const struct window *w);
	int (*load)(struct store *s, int64_t id, struct window *w);
	const char *count_kind;
	void (*count)(struct window *w, const char *kind, const char *key,
	    uint64_t v);
};

/* store_part.c: indexed by enum window_part_id */
extern const struct store_part *const store_parts[WPART__MAX];
/* Prepare every part's statements (readable: only the parts read back),
 * or finalize them all. */
int store_parts_prepare(struct store *s, bool readable);
void store_parts_finalize(struct store *s);

/* store_<signal>.c: each part's tables; store_part.c: a part without */
extern const struct store_part store_part_none;
extern const struct store_part store_sched_part;
extern const struct store_part store_gpumem_part;
extern const struct store_part store_wss_part;
extern const struct store_part store_trace_part;
/* store_phase.c: fault phase rows, with store_trace.c's statements */
struct window_trace;
extern const char store_phase_ins_sql[], store_phase_sel_sql[];
int store_phase_put(sqlite3_stmt *st, int64_t id, const struct window_trace *t);
int store_phase_load(sqlite3_stmt *st, int64_t id, struct window_trace *t,
    uint64_t *ret_bad);
extern const struct store_part store_cgroup_part;
extern const struct store_part store_fgbg_part;
extern const struct store_part store_wcpu_part;
extern const struct store_part store_dmabuf_part;
extern const struct store_part store_gpufreq_part;
extern const struct store_part store_syscalls_part;

/* store_schema.c: migrations[v] takes user_version v to v + 1 */
struct store_migration {
	const char *sql;
	int (*fn)(sqlite3 *db); /* its C half, in the same transaction */
};
extern const struct store_migration store_migrations[STORE_SCHEMA_VERSION];

/* store.c: one database file, below store_spool.c's public calls */
int store_db_open(const char *path, const struct store_opts *o,
    struct store **ret);
struct store *store_db_close(struct store *s);
int store_put_locked(struct store *s, const struct window *w);

/* store_spool.c */
int store_spool_flush_locked(struct store *s);
/* A move inside the caller's transaction, and what follows its end
 * (store_maint.c puts a pass's move in the pass's transaction). */
struct store_move {
	bool on; /* a spool is attached: the move ran */
	int64_t moved, t0;
	uint64_t busy0, del0;
};
void store_spool_attach(struct store *s);
int store_spool_move(struct store *s, struct store_move *m);
int store_spool_let_go(struct store *s, const struct store_move *m,
    bool committed);
/* store_spool_ids.c: a leftover spool's ids made to agree with the
 * main file's, before its first move */
int store_spool_fix_ids(struct store *s, int64_t *max_id, int64_t *max_iid,
    int64_t *max_key);
int store_spool_tables(sqlite3 *db,
    int (*fn)(sqlite3 *db, const char *t, const char *cols, void *arg),
    void *arg);
/* store_inst.c */
struct store_iw;
int store_inst_prepare(struct store *s);
void store_inst_finalize(struct store *s);
void store_inst_forget(struct store *s);
/* tests: the writer's instance cache outgrew its bound (lookups scan) */
bool store_inst_cache_bounded(const struct store *s);
/* tests: instances looked up by a scan of a table, since the start */
uint64_t store_inst_finds(void);
void store_rollback(struct store *s); /* and forget the ids it undid */
int store_inst_put(struct store *s, int64_t id, const struct window *w);
int store_inst_prune(struct store *s, uint64_t *ret_n);
void store_inst_moved(struct store *s);
void store_inst_seed(struct store *s, int64_t max_iid);
void store_inst_leftover(struct store *s);
extern size_t store_inst_cache_max; /* tests */
int store_inst_migrate_v8(sqlite3 *db);
extern int (*store_inst_migrate_test)(unsigned n); /* tests */

/* store_prov.c: provenance rows (doc/storage.md, "Provenance") */
int store_prov_put(struct store *s, const struct provenance *p);
void store_prov_forget(struct store *s);
int store_prov_load(struct store *s, struct window *w);
int store_prov_move(struct store *s);
int store_prov_prune(struct store *s);
void store_prov_finalize(struct store *s);

/* store_taskread.c: tasks read back from their blobs */
struct store_rcache;
void store_rcache_free(struct store *s);
void store_rcache_reset(struct store *s);
int store_load_tasks(struct store *s, int64_t id, struct window *w);
void store_blob_error(struct store *s); /* store_core.c */
/* The parts schema v28 folds into the parts row (STORE_FOLD_COLS below),
 * in the order of those columns; in RS_PARTS at STORE_FOLD_COL(fold) */
enum store_fold {
	STORE_FOLD_NONE, /* (a part that forgot its own: looked up both ways) */
	STORE_FOLD_CGROUP,
	STORE_FOLD_WCPU,
	STORE_FOLD_FGBG,
	STORE_FOLD_DMABUF,
	STORE_FOLD_GPUFREQ,
	STORE_FOLD_SYSCALLS,
};
/* RS_PARTS: kv, sys, bpf (0-2), then the six (3-8) */
#define STORE_FOLD_COL(fold) (2 + (int)(fold))
/* store_core.c: a part kept as one framed blob per window in its own
 * table; dec decodes a payload into a new part (-EBADMSG: malformed) */
typedef int store_blob_dec(const void *payload, size_t len, void **ret);
int store_blob_put(sqlite3_stmt *st, int64_t id, unsigned part,
    unsigned version, const struct store_enc *payload);
int store_blob_unframe(const void *b, size_t n, unsigned part, unsigned version,
    store_blob_dec *dec, void **ret);
int store_blob_load(struct store *s, sqlite3_stmt *st, enum store_fold fold,
    int64_t id, unsigned part, unsigned version, store_blob_dec *dec,
    void **ret, const char *what);
int store_blob_column(struct store *s, sqlite3_stmt *st, int col, unsigned part,
    unsigned version, store_blob_dec *dec, void **ret);
void store_bind_named(sqlite3_stmt *st, const char *name, int64_t v);

/*
 * store_blobpart.c: a part kept as one framed blob per window in a table of
 * its own, `table (window_id INTEGER PRIMARY KEY, blob BLOB NOT NULL)`:
 * its put, load and the fold of a range (windows that ended in
 * (from, to], oldest first, merged by the part's window_part_ops; NULL
 * when none has one; ret_windows, if not NULL: parts folded). A blob
 * that does not decode is counted (blob_errors) and skipped.
 */
enum { BP_INS, BP_SEL, BP_RANGE, BP__MAX };
#define STORE_BLOBPART_SQL(table, col)                                    \
	{                                                                 \
		[BP_INS] = "INSERT INTO main." table " (window_id, blob)" \
			   " VALUES (?, ?)",                              \
		[BP_SEL] = STORE_FOLD_SEL(table, col),                    \
		[BP_RANGE] = "SELECT " STORE_FOLD_BLOB("w", table,        \
		    col) " AS b FROM windows w"                           \
			 " WHERE w.wall_end_ns > :from"                   \
			 " AND w.wall_end_ns <= :to"                      \
			 " ORDER BY w.wall_start_ns, w.mono_start_ns,"    \
			 " w.id",                                         \
	}
struct store_blobpart {
	enum window_part_id id; /* its statements: s->part_st[id] */
	enum store_fold fold;	/* its column of the parts row */
	unsigned part, version; /* the frame's */
	const char *const *sql; /* STORE_BLOBPART_SQL */
	store_blob_dec *dec;
	const char *what, *range_what; /* store_fail's words */
};
int store_blobpart_put(struct store *s, const struct store_blobpart *bp,
    int64_t id, const struct store_enc *payload);
int store_blobpart_load(struct store *s, const struct store_blobpart *bp,
    int64_t id, struct window *w);
int store_blobpart_range(struct store *s, const struct store_blobpart *bp,
    int64_t from_wall_ns, int64_t to_wall_ns, void **ret,
    uint32_t *ret_windows);

/* store_agg.c: instance id -> index, and per-instance sums */
void store_imap_free(struct store_imap *m);
uint32_t store_imap_get(const struct store_imap *m, int64_t k);
int store_imap_put(struct store_imap *m, int64_t k, uint32_t v);

/* One instance's figures summed over windows, with the latest of them
 * that held it (whose identity and end state the sums carry). */
int store_agg_rows(struct store_aggs *g, int64_t wid,
    const struct window_task *t, const uint64_t *iid, size_t n);
int store_agg_sums(struct store_aggs *g, const struct store_agg *a, size_t n);
struct store_agg *store_agg_slot(struct store_aggs *g, int64_t iid);
void store_aggs_reset(struct store_aggs *g);
void store_aggs_free(struct store_aggs *g);

/* store_wcache.c: decoded window rows kept between top-N reads */
struct store_wcache;
void store_wcache_begin(struct store *s);
int store_wcache_sum(struct store *s, int64_t wid, bool threads,
    const void *blob, size_t blob_n, struct store_aggs *g);
void store_wcache_put(struct store *s, int64_t wid, bool threads,
    const void *blob, size_t blob_n, const struct window_task *t,
    const uint64_t *iid, size_t n);
void store_wcache_put_aggs(struct store *s, int64_t key, bool threads,
    const void *blob, size_t blob_n, const struct store_agg *a, size_t n);
void store_wcache_free(struct store *s);
int store_wcache_end(struct store *s, struct store_aggs *g, int r);
void store_wcache_memo_stats(const struct store *s, uint64_t *hits,
    uint64_t *saved, size_t *bytes);
void store_wcache_stats(const struct store *s, uint64_t *hits,
    uint64_t *misses);

/* store_tasksum.c: per-instance summaries of wall-clock spans; their
 * payload (store_sumcodec.c: rows in iid order) is pure byte work.
 * Version 2 is written (columns, each sample tuple once), 1 still read. */
#define STORE_TASKSUM_PART 16
#define STORE_TASKSUM_VERSION 2
int store_tasksum_put(struct store_enc *e, const struct store_agg *a, size_t n);
int store_tasksum_put_v1(struct store_enc *e, const struct store_agg *a,
    size_t n);
/* The rows of a payload of that version (1 or 2; any other -EBADMSG). */
int store_tasksum_get(const void *p, size_t len, unsigned version,
    struct store_agg **ret, size_t *ret_n);
extern const char store_sum_range_sql[]; /* store_tasksum.c */
int store_sum_prepare(struct store *s);
void store_sum_spool_gone(struct store *s);
void store_sum_finalize(struct store *s);
/* The windows of the range starting in [lo, hi), summed in order. */
typedef int (*store_sum_windows_fn)(struct store *s, int64_t from_wall_ns,
    int64_t to_wall_ns, bool threads, int64_t lo, int64_t hi,
    struct store_aggs *g);
int store_sum_top(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, struct store_aggs *g, store_sum_windows_fn windows);
int store_sum_build(struct store *s);
int store_sum_absent(struct store *s, int64_t from_wall_ns, int64_t to_wall_ns,
    bool threads, const uint64_t *want, size_t nwant, int64_t **ret,
    size_t *ret_n);
#define STORE_SUM_HOUR_NS (3600 * NSEC_PER_SEC) /* store_sum_absent's spans */
/* store_span.c: level 0's bulky rows in a table per span of
 * STORE_SPAN_NS (schema v27, a format constant) */
#define STORE_SPAN_NS 3600000000000LL
#define SQL_SPAN_NS "3600000000000"
#define SQL_SPAN_OF(x)                                        \
	"((" x " - ((" x " % " SQL_SPAN_NS ") + " SQL_SPAN_NS \
	") % " SQL_SPAN_NS ") / " SQL_SPAN_NS ")"
extern bool store_span_nosweep; /* tests: no sweep after a delete */
/*
 * Schema v28: the parts kept as one blob per window in a table of their
 * own (window_cgroup, window_wcpu, window_fgbg, window_dmabuf,
 * window_gpufreq, window_syscalls) are columns of the parts row too. A
 * level-0 window the spool moves has them there, in its span's parts
 * table (one b-tree a move appends to instead of seven); any other
 * window in its part's table. A read takes whichever holds the blob:
 * STORE_FOLD_SEL for one window (by ?1): at most one row, as a blob is
 * in one place only (which arm SQLite runs first changes the time, not
 * the answer; the parts row's is first, where the windows of the last
 * hours have it). STORE_FOLD_BLOB for the window of alias a in a query
 * over windows: the parts row looked at for level 0 only (no roll-up is
 * folded); NULL for a window without the part, which the caller skips
 * (a NULL is no part, not a damaged blob).
 */
#define STORE_FOLD_N 6
#define STORE_FOLD_COLS "cgroup, wcpu, fgbg, dmabuf, gpufreq, syscalls"
/* ?2 0: the table only (a constant term: SQLite skips the arm) */
#define STORE_FOLD_SEL(table, col)                                \
	"SELECT " col                                             \
	" FROM window_parts WHERE ?2 AND window_id = ?1 AND " col \
	" IS NOT NULL UNION ALL SELECT blob FROM " table          \
	" WHERE window_id = ?1 LIMIT 1"
int store_fold_step(struct store *s, sqlite3_stmt *st, enum store_fold fold,
    int64_t id, sqlite3_stmt **ret_st, int *ret_col);
#define STORE_FOLD_BLOB(a, table, col)                                    \
	"coalesce(CASE WHEN " a ".level = 0 THEN (SELECT x." col          \
	" FROM window_parts x WHERE x.window_id = " a ".id) END, (SELECT" \
	" x.blob FROM " table " x WHERE x.window_id = " a ".id))"
int store_span_migrate_v28(sqlite3 *db);
bool store_span_folded(const char *t);
int64_t store_span_of(int64_t wall_start_ns);
bool store_span_table(const char *name);
bool store_span_on(const struct store *s);
int store_span_views(sqlite3 *db, bool spool);
int64_t store_span_schema(sqlite3 *db);
sqlite3_stmt *store_span_ins(struct store *s, unsigned t, int64_t wall_start_ns,
    int *ret_rc);
int store_span_move(struct store *s);
int store_span_sweep(struct store *s);
int store_span_open(struct store *s);
void store_span_release(struct store *s);
void store_span_forget(struct store *s);
extern bool store_sum_off; /* tests: every range read window by window */
/* Forget the summaries of the spans holding a window the condition
 * selects (enum store_sum_forget), inside the caller's transaction and
 * before the windows go (or after they came). */
enum store_sum_forget {
	SUMF_ID,     /* ?1 a window id; ?2 keep spans longer than this that
		      * it divides (a roll-up's bucket), INT64_MAX: none */
	SUMF_AGE,    /* store_maint.c's retention: ?1..?4 as there */
	SUMF_OLDEST, /* the size bound: ?1 keep, ?2 how many */
	SUMF_MOVED,  /* the windows a spool move picked (temp.spool_ids) */
	SUMF__MAX
};
/* The statement to bind as the delete is bound, and run (NULL: none) */
sqlite3_stmt *store_sum_forget_stmt(struct store *s, enum store_sum_forget f);
int store_sum_forget_run(struct store *s, sqlite3_stmt *st);

/* store_keys.c: the key dictionary */
struct store_kw;
struct store_knames;
struct store_kw *store_kw_new(sqlite3 *db, unsigned flags);
struct store_kw *store_kw_free(struct store_kw *kw);
int store_kw_id(struct store_kw *kw, struct store_kw *main, const char *kind,
    const char *key, uint32_t *ret);
int store_keys_prepare(struct store *s);
void store_keys_finalize(struct store *s);
void store_keys_forget(struct store *s);
void store_keys_seed(struct store *s, int64_t max_id);
int store_key_id(struct store *s, const char *kind, const char *key,
    uint32_t *ret);
int store_key_name(struct store *s, uint32_t id, const char **ret_kind,
    const char **ret_key);
void store_knames_free(struct store *s);

/* store_wparts.c: a window's kv, sys and BPF parts as blobs */
struct store_sys_cpu;
struct store_sys_psi;
struct store_bpfrows;
struct window_bpf_uid;
struct window_bpf_proc;
int store_put_count(struct store *s, int64_t id, const char *kind,
    const char *key, uint64_t v);
int store_put_gauge(struct store *s, const char *kind, const char *key,
    const struct gauge *g);
int store_put_bpfrows(struct store *s, const struct store_bpfrows *b);
void store_wparts_begin(struct store *s);
int store_wparts_put(struct store *s, int64_t id, const struct window *w);
int store_get_bpfrows(struct store *s, struct store_bpfrows *ret);
struct store_frame;
int store_unframe(const void *blob, size_t n, unsigned part, unsigned version,
    struct store_frame *ret);
void store_wacc_reset(struct store_wacc *a);
void store_wacc_release(struct store_wacc *a);
int store_wacc_count(struct store_wacc *a, uint32_t key, uint64_t v);
int store_wacc_gauge(struct store_wacc *a, uint32_t key, const struct gauge *g);
int store_wacc_bpfrows(struct store_wacc *a, const struct window_bpf_uid *u,
    size_t nu, const struct window_bpf_proc *p, size_t np);
int store_wacc_bpfrows2(struct store_wacc *a, const struct store_bpfrows *b,
    uint32_t dict);
int store_wacc_insert(sqlite3_stmt *ins, int64_t id, struct store_wacc *a,
    const struct store_sys_cpu *c, size_t nc, const struct store_sys_psi *p,
    size_t np);

/* store_v9.c: v8 → v9, the C half */
int store_migrate_v9(sqlite3 *db);

/* store_busy.c: the busy handler of every connection, and one wait of a
 * move (move) or a read snapshot (!move) counted */
int store_busy_cb(void *arg, int count);
void store_busy_set(struct store *s);
void store_busy_note(bool move, uint64_t ns);
/* store_usage.c */
int store_io_parse(const char *text, uint64_t *ret);
void store_usage_sample(struct store_usage *u, int64_t mono_ns, uint64_t bytes);
uint64_t store_usage_per_day(const struct store_usage *u, int64_t *ret_span_ns);
int store_usage_update(struct store *s, int64_t mono_ns);

#endif /* VITALSD_STORE_INT_H */
