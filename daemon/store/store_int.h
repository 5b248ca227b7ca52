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
	WS_INS_TASK,
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
	RS_TASK,
	RS_RANGE,
	RS_TOP_CPU,
	RS_TOP_MINFLT,
	RS_TOP_MAJFLT,
	RS_TOP_RSS,
	RS_LATEST,
	RS_HIST,
	RS_HIST_TGID,
	RS__MAX
};

#define STORE_BPF_NSTMT 4    /* statements of store_sched.c */
#define STORE_GPUMEM_NSTMT 7 /* statements of store_gpumem.c */
#define STORE_WSS_NSTMT 2    /* statements of store_wss.c */
#define STORE_TRACE_NSTMT 10 /* statements of store_trace.c */

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
	sqlite3_stmt *bpf[STORE_BPF_NSTMT];	  /* store_sched.c */
	sqlite3_stmt *gpumem[STORE_GPUMEM_NSTMT]; /* store_gpumem.c */
	sqlite3_stmt *wss[STORE_WSS_NSTMT];	  /* store_wss.c */
	sqlite3_stmt *trace[STORE_TRACE_NSTMT];	  /* store_trace.c */
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

/* window_task columns after window_id, in the order store_task_read uses. */
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
void store_rollback(struct store *s);
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

/* store_maint.c */
int store_enforce_size(struct store *s, int64_t keep);

/* store_read.c */
int store_read_prepare(struct store *s);
void store_read_finalize(struct store *s);
int store_load(struct store *s, int64_t id, struct window **ret);

/* store_sched.c */
int store_bpf_prepare(struct store *s);
void store_bpf_finalize(struct store *s);
int store_bpf_put(struct store *s, int64_t id, const struct window *w);
int store_bpf_load(struct store *s, int64_t id, struct window *w);
void store_bpf_count(struct window *w, const char *kind, const char *key,
    uint64_t v);

/* store_gpumem.c */
int store_gpumem_prepare(struct store *s);
void store_gpumem_finalize(struct store *s);
int store_gpumem_put(struct store *s, int64_t id, const struct window *w);
int store_gpumem_load(struct store *s, int64_t id, struct window *w);
/* store_wss.c */
int store_wss_prepare(struct store *s);
void store_wss_finalize(struct store *s);
int store_wss_put(struct store *s, int64_t id, const struct window *w);
/* store_trace.c */
int store_trace_prepare(struct store *s);
void store_trace_finalize(struct store *s);
int store_trace_put(struct store *s, int64_t id, const struct window *w);
int store_trace_load(struct store *s, int64_t id, struct window *w);
void store_trace_count(struct window *w, const char *key, uint64_t v);

#endif /* VITALSD_STORE_INT_H */
