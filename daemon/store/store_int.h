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
#include "window/window.h"

/* Statements of the write side, prepared once at open (store.c). */
enum store_wstmt {
	WS_BEGIN,
	WS_COMMIT,
	WS_ROLLBACK,
	WS_INS_WINDOW,
	WS_COVERED,
	WS_INS_CPU,
	WS_INS_COUNT,
	WS_INS_GAUGE,
	WS_INS_PSI,
	WS_DEL_WINDOW,
	WS_DEL_AGE,
	WS_DEL_OLDEST,
	WS_COUNT,
	WS_PAGE_COUNT,
	WS_FREELIST,
	WS_VACUUM,
	WS_ROLL_SRC,
	WS_ROLL_EXIST,
	WS__MAX
};

/* Statements of the read side (store_read.c). */
enum store_rstmt {
	RS_WINDOW,
	RS_CPU,
	RS_COUNT,
	RS_GAUGE,
	RS_PSI,
	RS_TASKS,
	RS_IDENT,
	RS_IDENT_ONE,
	RS_INST,
	RS_RANGE,
	RS_TASK_WINS,
	RS_INST_ID,
	RS_INST_TGID,
	RS__MAX
};

#define STORE_PART_NSTMT 10
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

/*
 * One handle may be shared by threads (the writer thread; setup's reads
 * before it starts; tests): every public call holds `lock`, so statements
 * and stats are never used by two threads at once. Internal functions
 * expect it held. The loop thread makes no call on it while it runs.
 */
struct store {
	pthread_mutex_t lock;
	sqlite3 *db;
	char *path;
	struct store_opts o;
	struct store_stats st;
	sqlite3_stmt *ws[WS__MAX];
	sqlite3_stmt *rs[RS__MAX];
	int64_t page_size;
	uint64_t budget;      /* bytes the main file may hold */
	uint64_t wal_reserve; /* bytes kept for the WAL inside max_bytes */
	int64_t max_span_ns;  /* no stored window is longer (wall clock) */
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
	sqlite3_stmt
	    *spool_st[STORE_SPOOL_NSTMT]; /* on db, finalized with it */
	unsigned spool_nst;
	int64_t spool_first_ns;
	int64_t id_next;     /* what id_hwm points to on the main store */
	bool spool_attached; /* attached to db as "spool" */
	bool spool_tried;    /* attaching was tried on this connection */
	/* store_inst.c: the writer's instance ids (NULL on a reader) */
	struct store_iw *iw;
	/* store_taskread.c: identities by instance id, for one read */
	struct store_rcache *rcache;
	/* store_usage.c */
	struct store_usage usage;
	uint64_t usage_base; /* the first reading by this handle */
	bool usage_base_set;
};

/*
 * Columns of windows in the order of enum wcol; the write and the read
 * side both index rows with it. Keep the three in step.
 */
#define STORE_WINDOW_COLS                                                  \
	"level, boot_id, seq, mono_start_ns, mono_end_ns, boot_start_ns, " \
	"boot_end_ns, wall_start_ns, wall_end_ns, duration_ns, hz, "       \
	"interval_ms, cpu_span, samples, samples_valid, d_ctxt, "          \
	"d_processes, vm_samples, self_utime_us, self_stime_us, "          \
	"sample_ns_sum, sample_ns_max, late_ticks, burst_samples, "        \
	"procs_scanned, threads_scanned, procs_exited, threads_exited, "   \
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

/* store_core.c: the layer every file of the store shares */
int store_rc_errno(int rc);
int store_fail(struct store *s, int rc, const char *what);
int store_fail_errno(struct store *s, int err, const char *msg);
void store_note_write_error(struct store *s, int err);
int store_run(sqlite3_stmt *st);

/* Window-level figures stored by name in window_count: a table of a
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
int store_put_count(struct store *s, int64_t id, const char *kind,
    const char *key, uint64_t v);
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
bool store_heal_after_op(struct store *s);
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

/* store_read.c */
int store_read_prepare(struct store *s);
void store_read_finalize(struct store *s);
int store_load(struct store *s, int64_t id, struct window **ret);

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
extern const struct store_part store_cgroup_part;

/* store.c: one database file, below store_spool.c's public calls */
int store_db_open(const char *path, const struct store_opts *o,
    struct store **ret);
struct store *store_db_close(struct store *s);
int store_put_locked(struct store *s, const struct window *w);

/* store_spool.c */
int store_spool_flush_locked(struct store *s);
int store_spool_tables(sqlite3 *db,
    int (*fn)(sqlite3 *db, const char *t, const char *cols, void *arg),
    void *arg);
/* store_inst.c */
struct store_iw;
int store_inst_prepare(struct store *s);
void store_inst_finalize(struct store *s);
void store_inst_forget(struct store *s);
void store_rollback(struct store *s); /* and forget the ids it undid */
int store_inst_put(struct store *s, int64_t id, const struct window *w);
int store_inst_prune(struct store *s, uint64_t *ret_n);
void store_inst_moved(struct store *s);
void store_inst_seed(struct store *s, int64_t max_iid);
int store_inst_migrate_v8(sqlite3 *db);
extern int (*store_inst_migrate_test)(unsigned n); /* tests */

/* store_taskread.c: tasks read back from their blobs */
struct store_rcache;
void store_rcache_free(struct store *s);
void store_rcache_reset(struct store *s);
int store_load_tasks(struct store *s, int64_t id, struct window *w);
void store_blob_error(struct store *s);

/* store_usage.c */
int store_io_parse(const char *text, uint64_t *ret);
void store_usage_sample(struct store_usage *u, int64_t mono_ns, uint64_t bytes);
uint64_t store_usage_per_day(const struct store_usage *u, int64_t *ret_span_ns);
int store_usage_update(struct store *s, int64_t mono_ns);

#endif /* VITALSD_STORE_INT_H */
