/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The schema, one migration step per version (doc/storage.md,
 * "Migrations"): store.c runs them, each in its own transaction. A step
 * shipped is never edited: a change is a new step.
 */
#include "store/store.h"
#include "store_int.h"

/* v1: the initial design. Never edit a shipped step: add one. */
static const char schema_v1[] =
    "CREATE TABLE windows ("
    " id INTEGER PRIMARY KEY,"
    " level INTEGER NOT NULL, boot_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " mono_start_ns INTEGER NOT NULL, mono_end_ns INTEGER NOT NULL,"
    " boot_start_ns INTEGER NOT NULL, boot_end_ns INTEGER NOT NULL,"
    " wall_start_ns INTEGER NOT NULL, wall_end_ns INTEGER NOT NULL,"
    " duration_ns INTEGER NOT NULL, hz INTEGER NOT NULL,"
    " interval_ms INTEGER NOT NULL, cpu_span INTEGER NOT NULL,"
    " samples INTEGER NOT NULL, samples_valid INTEGER NOT NULL,"
    " d_ctxt INTEGER NOT NULL, d_processes INTEGER NOT NULL,"
    " vm_samples INTEGER NOT NULL,"
    " self_utime_us INTEGER NOT NULL, self_stime_us INTEGER NOT NULL,"
    " sample_ns_sum INTEGER NOT NULL, sample_ns_max INTEGER NOT NULL,"
    " late_ticks INTEGER NOT NULL, burst_samples INTEGER NOT NULL,"
    " procs_scanned INTEGER NOT NULL, threads_scanned INTEGER NOT NULL,"
    " procs_exited INTEGER NOT NULL, threads_exited INTEGER NOT NULL,"
    " cpu_dropped INTEGER NOT NULL,"
    " UNIQUE (boot_id, level, mono_start_ns));"
    "CREATE TABLE window_cpu ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " cpu INTEGER NOT NULL,"
    " user INTEGER NOT NULL, nice INTEGER NOT NULL,"
    " system INTEGER NOT NULL, idle INTEGER NOT NULL,"
    " iowait INTEGER NOT NULL, irq INTEGER NOT NULL,"
    " softirq INTEGER NOT NULL, steal INTEGER NOT NULL,"
    " guest INTEGER NOT NULL, guest_nice INTEGER NOT NULL,"
    " samples INTEGER NOT NULL, wall_ns INTEGER NOT NULL,"
    " online_end INTEGER NOT NULL,"
    " khz_n INTEGER NOT NULL, khz_min REAL, khz_max REAL, khz_sum REAL,"
    " khz_last REAL, max_khz INTEGER, capacity INTEGER,"
    " ratio_n INTEGER NOT NULL, ratio_min REAL, ratio_max REAL,"
    " ratio_sum REAL, ratio_last REAL,"
    " PRIMARY KEY (window_id, cpu)) WITHOUT ROWID;"
    "CREATE TABLE window_count ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " kind TEXT NOT NULL, key TEXT NOT NULL, value INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, kind, key)) WITHOUT ROWID;"
    "CREATE TABLE window_gauge ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " kind TEXT NOT NULL, key TEXT NOT NULL, n INTEGER NOT NULL,"
    " min REAL, max REAL, sum REAL, last REAL,"
    " PRIMARY KEY (window_id, kind, key)) WITHOUT ROWID;"
    "CREATE TABLE window_psi ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " resource TEXT NOT NULL, available INTEGER NOT NULL,"
    " have_full INTEGER NOT NULL, samples INTEGER NOT NULL,"
    " d_some_us INTEGER NOT NULL, d_full_us INTEGER NOT NULL,"
    " some_n INTEGER NOT NULL, some_min REAL, some_max REAL,"
    " some_sum REAL, some_last REAL,"
    " full_n INTEGER NOT NULL, full_min REAL, full_max REAL,"
    " full_sum REAL, full_last REAL,"
    " PRIMARY KEY (window_id, resource)) WITHOUT ROWID;"
    "CREATE TABLE window_task ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " thread INTEGER NOT NULL, id INTEGER NOT NULL,"
    " starttime INTEGER NOT NULL, tgid INTEGER NOT NULL,"
    " uid INTEGER NOT NULL, comm TEXT NOT NULL, name TEXT,"
    " d_utime INTEGER NOT NULL, d_stime INTEGER NOT NULL,"
    " d_minflt INTEGER NOT NULL, d_majflt INTEGER NOT NULL,"
    " samples INTEGER NOT NULL, wall_ns INTEGER NOT NULL,"
    " total_ticks INTEGER NOT NULL, norm_ticks REAL NOT NULL,"
    " rss_pages_max INTEGER NOT NULL, rss_pages_last INTEGER NOT NULL,"
    " born INTEGER NOT NULL, exited INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, thread, id, starttime)) WITHOUT ROWID;";

/*
 * v2: the store's own health rides in every window (NULL: written before
 * v2, not "ok"), and windows get an index by wall time, which every range
 * query, top-N, history, roll-up and retention pass starts from (a full
 * scan of windows under v1). Task rows need no index of their own: their
 * key starts (window_id, thread, id), so history seeks into each window of
 * the range, and an index by instance would scatter every write.
 */
static const char schema_v2[] =
    "ALTER TABLE windows ADD COLUMN store_state INTEGER;"
    "ALTER TABLE windows ADD COLUMN store_queued INTEGER;"
    "ALTER TABLE windows ADD COLUMN store_dropped INTEGER;"
    "CREATE INDEX windows_wall ON windows (wall_start_ns);";

/*
 * v3: BPF sched_switch accounting (store_sched.c): per uid and per process
 * of each window, uid −1 and tgid −1 being the entries everything beyond
 * the kept ones is summed into. The window-level BPF figures are named
 * counters in window_count and need no table.
 */
static const char schema_v3[] =
    "CREATE TABLE window_bpf_uid ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " uid INTEGER NOT NULL, oncpu_ns INTEGER NOT NULL,"
    " exited_ns INTEGER NOT NULL, exited_tasks INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, uid)) WITHOUT ROWID;"
    "CREATE TABLE window_bpf_proc ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " tgid INTEGER NOT NULL, starttime INTEGER NOT NULL,"
    " oncpu_ns INTEGER NOT NULL, rq_ns INTEGER NOT NULL,"
    " rq_count INTEGER NOT NULL, rq_hist TEXT NOT NULL,"
    " PRIMARY KEY (window_id, tgid, starttime)) WITHOUT ROWID;";

/*
 * v4: GPU memory (store_gpumem.c): the map's state and the reading's
 * counters per window, and per (gpu, pid) pair the bytes at window end
 * with the range inside it. pid 0 is a GPU's global total; starttime 0 a
 * pair not attributed to a live instance (stale).
 */
static const char schema_v4[] =
    "CREATE TABLE window_gpumem ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " state INTEGER NOT NULL, why INTEGER NOT NULL, err INTEGER NOT NULL,"
    " source INTEGER NOT NULL, capacity INTEGER NOT NULL,"
    " entries INTEGER NOT NULL, saturated INTEGER NOT NULL,"
    " traversals INTEGER NOT NULL, traversal_fail INTEGER NOT NULL,"
    " restarts INTEGER NOT NULL, vanished INTEGER NOT NULL,"
    " duplicates INTEGER NOT NULL, truncated INTEGER NOT NULL,"
    " stale INTEGER NOT NULL, events INTEGER NOT NULL,"
    " events_late INTEGER NOT NULL, traverse_ns INTEGER NOT NULL,"
    " traverse_ns_max INTEGER NOT NULL, tp_events INTEGER NOT NULL,"
    " insert_fail INTEGER NOT NULL);"
    "CREATE TABLE window_gpu ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " gpu_id INTEGER NOT NULL, pid INTEGER NOT NULL,"
    " starttime INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    " min_bytes INTEGER NOT NULL, max_bytes INTEGER NOT NULL,"
    " stale INTEGER NOT NULL, name TEXT NOT NULL,"
    " PRIMARY KEY (window_id, gpu_id, pid, starttime)) WITHOUT ROWID;";

/*
 * v5: ftrace (store_trace.c): per window the ATrace slices by (kind,
 * process, thread, depth, name) with their complete and incomplete
 * counts, counters, binder pairs, run-queue delay per thread and
 * gpu_mem_total per (gpu, pid). Kind 255 is the row everything beyond
 * the kept ones is summed into. The window-level figures (state, loss)
 * are counters of kind "trace" in window_count.
 */
static const char schema_v5[] =
    "CREATE TABLE window_trace_slice ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " kind INTEGER NOT NULL, tgid INTEGER NOT NULL, tid INTEGER NOT NULL,"
    " depth INTEGER NOT NULL, name TEXT NOT NULL,"
    " count INTEGER NOT NULL, incomplete INTEGER NOT NULL,"
    " total_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, kind, tgid, tid, depth, name)) WITHOUT ROWID;"
    "CREATE TABLE window_trace_counter ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " tgid INTEGER NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL,"
    " last INTEGER NOT NULL, min INTEGER NOT NULL, max INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, tgid, name)) WITHOUT ROWID;"
    "CREATE TABLE window_trace_binder ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " from_pid INTEGER NOT NULL, to_pid INTEGER NOT NULL,"
    " calls INTEGER NOT NULL, oneway INTEGER NOT NULL,"
    " replies INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, from_pid, to_pid)) WITHOUT ROWID;"
    "CREATE TABLE window_trace_rq ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " tid INTEGER NOT NULL, count INTEGER NOT NULL,"
    " total_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, tid)) WITHOUT ROWID;"
    "CREATE TABLE window_trace_gpu ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " gpu_id INTEGER NOT NULL, pid INTEGER NOT NULL,"
    " events INTEGER NOT NULL, last_size INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, gpu_id, pid)) WITHOUT ROWID;";

/*
 * v6: heapprofd sessions (store_hp.c): one row per request
 * that was started or refused; the started ones are the budget records
 * (start_wall_ns, target_key), so a restart neither resets nor forgets a
 * budget. Retention of windows does not touch them.
 */
static const char schema_v6[] =
    "CREATE TABLE hp_session ("
    " id INTEGER PRIMARY KEY,"
    " created_wall_ns INTEGER NOT NULL,"
    " by_rule INTEGER NOT NULL, rule TEXT, caller_uid INTEGER,"
    " target TEXT NOT NULL, target_key TEXT NOT NULL,"
    " params TEXT NOT NULL,"
    " started INTEGER NOT NULL,"
    " start_wall_ns INTEGER, end_wall_ns INTEGER,"
    " child_pid INTEGER, child_starttime INTEGER,"
    " outcome TEXT NOT NULL, refusal INTEGER NOT NULL,"
    " message TEXT NOT NULL,"
    " exit_status INTEGER, term_signal INTEGER,"
    " output_path TEXT, output_bytes INTEGER);"
    "CREATE INDEX hp_session_start ON hp_session (started, start_wall_ns);"
    "CREATE INDEX hp_session_outcome ON hp_session (outcome);";

/*
 * v7: working-set monitor (store_wss.c): each target of a window, with
 * the passes completed in it, and the regions of its last pass there.
 */
static const char schema_v7[] =
    "CREATE TABLE window_wss ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " pid INTEGER NOT NULL, starttime INTEGER NOT NULL,"
    " name TEXT NOT NULL, mode TEXT NOT NULL, library TEXT NOT NULL,"
    " method TEXT NOT NULL, interval_ms INTEGER NOT NULL,"
    " passes INTEGER NOT NULL, pass_ns_sum INTEGER NOT NULL,"
    " pass_ns_max INTEGER NOT NULL, pass_cpu_ns INTEGER NOT NULL,"
    " maps_changes INTEGER NOT NULL, read_errors INTEGER NOT NULL,"
    " pfn_zeroed INTEGER NOT NULL, ended INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, pid, starttime)) WITHOUT ROWID;"
    "CREATE TABLE window_wss_region ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " pid INTEGER NOT NULL, starttime INTEGER NOT NULL,"
    " vaddr_start INTEGER NOT NULL, vaddr_end INTEGER NOT NULL,"
    " label TEXT NOT NULL,"
    " pages INTEGER NOT NULL, resident INTEGER NOT NULL,"
    " accessed INTEGER NOT NULL, idle INTEGER NOT NULL,"
    " not_resident INTEGER NOT NULL, gone INTEGER NOT NULL,"
    " PRIMARY KEY (window_id, pid, starttime, vaddr_start))"
    " WITHOUT ROWID;";

/*
 * v8: the compact task store (store_inst.c): instances written once, a
 * window's processes and threads as two blobs (doc/storage.md, "Blobs"),
 * and the identities a window's tasks carried when they differ from their
 * instance's. The step's C half converts window_task and drops it.
 */
static const char schema_v8[] =
    "CREATE TABLE instance ("
    " iid INTEGER PRIMARY KEY,"
    " thread INTEGER NOT NULL, id INTEGER NOT NULL,"
    " starttime INTEGER NOT NULL, tgid INTEGER NOT NULL,"
    " uid INTEGER NOT NULL, comm TEXT NOT NULL, name TEXT,"
    " until_ns INTEGER NOT NULL,"
    " UNIQUE (thread, id, starttime));"
    "CREATE INDEX instance_until ON instance (until_ns);"
    "CREATE TABLE window_tasks ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " procs BLOB, threads BLOB);"
    "CREATE TABLE window_task_ident ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " iid INTEGER NOT NULL, tgid INTEGER NOT NULL, uid INTEGER NOT NULL,"
    " comm TEXT NOT NULL, name TEXT,"
    " PRIMARY KEY (window_id, iid)) WITHOUT ROWID;";

/*
 * v9: the rest of a window as blobs (store_wparts.c): its counters and
 * gauges (named by ids of the key dictionary window_key, written once per
 * key), its CPU and PSI rows and its BPF rows, one row per window. The
 * step's C half (store_v9.c) converts the six tables and drops them.
 */
static const char schema_v9[] =
    "CREATE TABLE window_key ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL, key TEXT NOT NULL,"
    " UNIQUE (kind, key));"
    "CREATE TABLE window_parts ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " kv BLOB, sys BLOB, bpf BLOB);";

/*
 * v10: per-instance summaries of wall-clock spans of 60, 600 and 3600 s
 * (store_tasksum.c): built by maintenance from the windows, forgotten by
 * every write that changes a span's windows. An empty table is a valid
 * state (reads go window by window): nothing to convert.
 */
static const char schema_v10[] =
    "CREATE TABLE task_sum ("
    " start_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL,"
    " n_windows INTEGER NOT NULL, procs BLOB, threads BLOB,"
    " PRIMARY KEY (start_ns, span_ns)) WITHOUT ROWID;";

/*
 * v11: provenance (store_prov.c): one row per daemon start, (boot, kernel,
 * vitalsd, platform build), which windows find by boot and start time.
 */
static const char schema_v11[] =
    "CREATE TABLE provenance ("
    " boot_id TEXT NOT NULL, since_mono_ns INTEGER NOT NULL,"
    " kernel TEXT NOT NULL, version TEXT NOT NULL,"
    " btime_s INTEGER NOT NULL, fingerprint TEXT NOT NULL,"
    " fp_source INTEGER NOT NULL,"
    " PRIMARY KEY (boot_id, since_mono_ns)) WITHOUT ROWID;";

/*
 * v12: cgroup v2 groups per window (store_cgroup.c): one framed, compressed
 * blob each.
 */
static const char schema_v12[] =
    "CREATE TABLE window_cgroup ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " blob BLOB NOT NULL);";

/*
 * v13: instance_until goes. Every raise of an instance's until_ns moved
 * its entry from a page in the middle of the index to the end, so each
 * batch rewrote (and journaled) a page of the index per raised instance
 * it met; pruning, the index's only reader, scans the table once per
 * maintenance pass instead (a few thousand rows, ~1 ms).
 */
static const char schema_v13[] = "DROP INDEX IF EXISTS instance_until;";

/*
 * v14: foreground/background per window (store_fgbg.c): one framed,
 * compressed blob each.
 */
static const char schema_v14[] =
    "CREATE TABLE window_fgbg ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " blob BLOB NOT NULL);";

/*
 * v15: capacity-weighted CPU per window (store_wcpu.c): one framed,
 * compressed blob each.
 */
static const char schema_v15[] =
    "CREATE TABLE window_wcpu ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " blob BLOB NOT NULL);";

/*
 * v16: trained zstd dictionaries (store_dict.c), one row each, named by
 * the frames of codec 2 by id (the CRC-32C of dict). Nothing to convert:
 * older blobs stay plain zstd frames.
 */
static const char schema_v16[] =
    "CREATE TABLE blob_dict ("
    " id INTEGER PRIMARY KEY,"
    " slot INTEGER NOT NULL, made_ns INTEGER NOT NULL,"
    " dict BLOB NOT NULL);";

/*
 * v17: how GPU memory walks read the map (store_gpumem.c): traversals by
 * batch lookup, and keys a walk missed that a lookup then found. Older
 * windows read 0 for both (not measured then).
 */
static const char schema_v17[] =
    "ALTER TABLE window_gpumem ADD COLUMN batch_walks INTEGER NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE window_gpumem ADD COLUMN recovered INTEGER NOT NULL"
    " DEFAULT 0;";

/*
 * v18: DMA-BUF per window (store_dmabuf.c): one framed, compressed blob
 * for each window a pass ran in (or a roll-up of such windows).
 */
static const char schema_v18[] =
    "CREATE TABLE window_dmabuf ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " blob BLOB NOT NULL);";

/*
 * v19: binder transaction latency per (caller, callee, code) and window
 * (store_trace.c, doc/ftrace.md): counts, sums, maxima and the two log2
 * histograms as blobs of little-endian u32 slots up to the last non-zero
 * one. other = 1 is the row the rows beyond the kept ones are summed in.
 */
static const char schema_v19[] =
    "CREATE TABLE window_trace_btxn ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " other INTEGER NOT NULL, from_pid INTEGER NOT NULL,"
    " to_pid INTEGER NOT NULL, code INTEGER NOT NULL,"
    " twoway INTEGER NOT NULL, oneway INTEGER NOT NULL,"
    " received INTEGER NOT NULL, replied INTEGER NOT NULL,"
    " unreceived INTEGER NOT NULL, unreplied INTEGER NOT NULL,"
    " recv_sum_ns INTEGER NOT NULL, recv_max_ns INTEGER NOT NULL,"
    " reply_sum_ns INTEGER NOT NULL, reply_max_ns INTEGER NOT NULL,"
    " recv_hist BLOB NOT NULL, reply_hist BLOB NOT NULL,"
    " PRIMARY KEY (window_id, other, from_pid, to_pid, code)) WITHOUT ROWID;";

/*
 * v20: fault phases per (process, slice name) and window (store_phase.c,
 * doc/metrics.md): the phase counts, durations and the deltas of the
 * process's fault, page-cache, reclaim and block counters; have says
 * which figures were measured (the others are unknown, not 0);
 * faults_by and major_by are blobs of 8 little-endian u64s, one per
 * mapping class. other = 1 is the row the rows beyond the kept ones
 * are summed in.
 */
static const char schema_v20[] =
    "CREATE TABLE window_trace_phase ("
    " window_id INTEGER NOT NULL REFERENCES windows(id) ON DELETE CASCADE,"
    " other INTEGER NOT NULL, pid INTEGER NOT NULL,"
    " start_ticks INTEGER NOT NULL, comm TEXT NOT NULL,"
    " name TEXT NOT NULL, have INTEGER NOT NULL,"
    " count INTEGER NOT NULL, incomplete INTEGER NOT NULL,"
    " open INTEGER NOT NULL, total_ns INTEGER NOT NULL,"
    " max_ns INTEGER NOT NULL, faults INTEGER NOT NULL,"
    " file_faults INTEGER NOT NULL, major INTEGER NOT NULL,"
    " pages_read INTEGER NOT NULL, reclaim INTEGER NOT NULL,"
    " reclaim_ns INTEGER NOT NULL, blk INTEGER NOT NULL,"
    " blk_bytes INTEGER NOT NULL, faults_by BLOB NOT NULL,"
    " major_by BLOB NOT NULL,"
    " PRIMARY KEY (window_id, other, pid, start_ticks, name)) WITHOUT ROWID;";

/*
 * v21: summaries of 600 s and 3600 s spans only (store_tasksum.c): the
 * 60 s ones cost a fifth of a level-0 window's bytes; they go.
 */
static const char schema_v21[] =
    "DELETE FROM task_sum WHERE span_ns < 600000000000;";

/*
 * v22: GPU frequency per window (store_gpufreq.c, doc/storage.md): one
 * framed, compressed blob per window with at least one GPU device; every
 * device's figures and its time in state in it.
 */
static const char schema_v22[] =
    "CREATE TABLE window_gpufreq ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " blob BLOB NOT NULL);";

/*
 * v23: syscall latency
 * per process (store_syscalls.c): one framed, compressed blob for each
 * window that has the part (the tracer on, or its off/failed state), or a
 * roll-up of such windows.
 */
static const char schema_v23[] =
    "CREATE TABLE window_syscalls ("
    " window_id INTEGER PRIMARY KEY REFERENCES windows(id)"
    " ON DELETE CASCADE,"
    " blob BLOB NOT NULL);";

/*
 * v24: boots interned (doc/storage.md, "boot"): a window's row and its
 * UNIQUE key hold the boot's id (store_boot_key: 6 bytes, 0 for "") where
 * they held the 36-character text, which the boot table keeps once per
 * boot. windows is rebuilt (SQLite cannot change a column or a UNIQUE
 * constraint in place) with its columns in the same order; its rows keep
 * their ids. The step runs before the connection turns foreign keys on
 * (store.c): with them on, dropping the old table would delete every
 * window's child rows, so the C half refuses to run then.
 */
static const char schema_v24[] = "";

/* the columns of windows after id, level and the boot, v1 to v24 */
#define COLS_V24                                                 \
	"seq, mono_start_ns, mono_end_ns, boot_start_ns, "       \
	"boot_end_ns, wall_start_ns, wall_end_ns, duration_ns, " \
	"hz, interval_ms, cpu_span, samples, samples_valid, "    \
	"d_ctxt, d_processes, vm_samples, self_utime_us, "       \
	"self_stime_us, sample_ns_sum, sample_ns_max, "          \
	"late_ticks, burst_samples, procs_scanned, "             \
	"threads_scanned, procs_exited, threads_exited, "        \
	"cpu_dropped, store_state, store_queued, store_dropped"

/* windows' columns since v24 (v26 keeps them, without the UNIQUE key) */
#define WINDOWS_V24_COLS                                                        \
	" id INTEGER PRIMARY KEY,"                                              \
	" level INTEGER NOT NULL, boot INTEGER NOT NULL, seq INTEGER NOT NULL," \
	" mono_start_ns INTEGER NOT NULL, mono_end_ns INTEGER NOT NULL,"        \
	" boot_start_ns INTEGER NOT NULL, boot_end_ns INTEGER NOT NULL,"        \
	" wall_start_ns INTEGER NOT NULL, wall_end_ns INTEGER NOT NULL,"        \
	" duration_ns INTEGER NOT NULL, hz INTEGER NOT NULL,"                   \
	" interval_ms INTEGER NOT NULL, cpu_span INTEGER NOT NULL,"             \
	" samples INTEGER NOT NULL, samples_valid INTEGER NOT NULL,"            \
	" d_ctxt INTEGER NOT NULL, d_processes INTEGER NOT NULL,"               \
	" vm_samples INTEGER NOT NULL,"                                         \
	" self_utime_us INTEGER NOT NULL, self_stime_us INTEGER NOT NULL,"      \
	" sample_ns_sum INTEGER NOT NULL, sample_ns_max INTEGER NOT NULL,"      \
	" late_ticks INTEGER NOT NULL, burst_samples INTEGER NOT NULL,"         \
	" procs_scanned INTEGER NOT NULL, threads_scanned INTEGER NOT NULL,"    \
	" procs_exited INTEGER NOT NULL, threads_exited INTEGER NOT NULL,"      \
	" cpu_dropped INTEGER NOT NULL,"                                        \
	" store_state INTEGER, store_queued INTEGER, store_dropped INTEGER"

static const char schema_v24_sql[] =
    "CREATE TABLE boot (id INTEGER PRIMARY KEY, boot_id TEXT NOT NULL);"
    "INSERT INTO boot (id, boot_id) SELECT DISTINCT boot_key(boot_id),"
    " boot_id FROM windows WHERE true ON CONFLICT DO NOTHING;"
    "CREATE TABLE windows_v24 (" WINDOWS_V24_COLS ","
    " UNIQUE (boot, level, mono_start_ns));"
    "INSERT INTO windows_v24 (id, level, boot, " COLS_V24 ")"
    " SELECT id, level, boot_key(boot_id), " COLS_V24 " FROM windows;"
    "DROP TABLE windows;"
    "ALTER TABLE windows_v24 RENAME TO windows;"
    "CREATE INDEX windows_wall ON windows (wall_start_ns);";

/* SQLITE_OK when foreign keys are off: windows may be rebuilt (v24, v26) */
static int
fk_off(sqlite3 *db)
{
	sqlite3_stmt *st;
	int rc, fk = 1;

	if ((rc = sqlite3_prepare_v2(db, "PRAGMA foreign_keys", -1, &st,
		 NULL)) != SQLITE_OK)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW)
		fk = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return fk != 0 ? SQLITE_MISUSE : SQLITE_OK;
}

static int
migrate_v24(sqlite3 *db)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = fk_off(db)) != SQLITE_OK)
		return rc; /* would cascade: see above */
	/*
	 * Two boots of the file on one key (odds ~n^2/2^48) would read as
	 * one, or collide on the UNIQUE key: refuse the step (the file stays
	 * at v23, untouched) rather than merge them.
	 */
	if ((rc = sqlite3_prepare_v2(db,
		 "SELECT count(DISTINCT boot_id) ="
		 " count(DISTINCT boot_key(boot_id)) FROM windows",
		 -1, &st, NULL)) != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1 ?
	    SQLITE_OK :
	    SQLITE_CONSTRAINT;
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return rc;
	return sqlite3_exec(db, schema_v24_sql, NULL, NULL, NULL);
}

/*
 * v25: instance without its UNIQUE (thread, id, starttime) index
 * (doc/storage.md, "Instance ids"). A new instance's identity lands at a
 * random key of that index, so each move rewrote (and journaled) about
 * eleven of its leaves; the writer finds instances in its cache, which a
 * scan of the table fills (store_inst.c), and the rows keep their ids.
 * No table refers to instance by a foreign key: the rebuild cascades
 * nothing.
 */
static const char schema_v25[] =
    "CREATE TABLE instance_v25 ("
    " iid INTEGER PRIMARY KEY,"
    " thread INTEGER NOT NULL, id INTEGER NOT NULL,"
    " starttime INTEGER NOT NULL, tgid INTEGER NOT NULL,"
    " uid INTEGER NOT NULL, comm TEXT NOT NULL, name TEXT,"
    " until_ns INTEGER NOT NULL);"
    "INSERT INTO instance_v25 (iid, thread, id, starttime, tgid, uid,"
    " comm, name, until_ns) SELECT iid, thread, id, starttime, tgid, uid,"
    " comm, name, until_ns FROM instance ORDER BY iid;"
    "DROP TABLE instance;"
    "ALTER TABLE instance_v25 RENAME TO instance;";

/*
 * v26: windows without its UNIQUE (boot, level, mono_start_ns) index
 * (doc/storage.md, "Where a day's writes go"). Each move rewrote and
 * journaled that index's leaves beside windows_wall's, for a check that
 * windows_wall makes as well: a replay is the same window, wall start
 * included (store_write.c, store_spool.c). The check whether a roll-up
 * already holds a level-0 window goes by windows_roll, which holds the
 * roll-ups only (one row in tens), so a move does not touch it. windows
 * is rebuilt as in v24, foreign keys off, its rows keeping their ids.
 */
static const char schema_v26[] = "";

static const char schema_v26_sql[] =
    "CREATE TABLE windows_v26 (" WINDOWS_V24_COLS ");"
    "INSERT INTO windows_v26 (id, level, boot, " COLS_V24 ")"
    " SELECT id, level, boot, " COLS_V24 " FROM windows ORDER BY id;"
    "DROP TABLE windows;"
    "ALTER TABLE windows_v26 RENAME TO windows;"
    "CREATE INDEX windows_wall ON windows (wall_start_ns);"
    "CREATE INDEX windows_roll ON windows (boot, level, mono_start_ns)"
    " WHERE level > 0;";

static int
migrate_v26(sqlite3 *db)
{
	int rc;

	if ((rc = fk_off(db)) != SQLITE_OK)
		return rc; /* would cascade: see v24 */
	return sqlite3_exec(db, schema_v26_sql, NULL, NULL, NULL);
}

/*
 * v27: level 0's task blobs and parts rows in a table per hour of wall
 * time (store_span.c: l0_tasks_K and l0_parts_K, made by the first write
 * into a span and dropped whole once its level-0 windows are gone). No
 * row moves: level-0 rows an older version wrote stay in window_tasks and
 * window_parts, which the readers' views include, and go as before (their
 * foreign keys). The version says a file may hold span tables, which an
 * older build would not read.
 */
static const char schema_v27[] = "";

/*
 * v28: the parts kept as one blob per window in a table of their own are
 * columns of the parts row too (store_span.c, STORE_FOLD_COLS): a level-0
 * window the spool moves has them in its span's parts row, so a move
 * appends to one b-tree where it appended to seven. No row moves: blobs
 * already in the parts' tables stay there and are read there.
 */
static const char schema_v28[] =
    "ALTER TABLE window_parts ADD COLUMN cgroup BLOB;"
    "ALTER TABLE window_parts ADD COLUMN wcpu BLOB;"
    "ALTER TABLE window_parts ADD COLUMN fgbg BLOB;"
    "ALTER TABLE window_parts ADD COLUMN dmabuf BLOB;"
    "ALTER TABLE window_parts ADD COLUMN gpufreq BLOB;"
    "ALTER TABLE window_parts ADD COLUMN syscalls BLOB;";

/*
 * migrations[v] takes a database from user_version v to v + 1: its SQL,
 * then its C half (NULL: none) in the same transaction.
 */
const struct store_migration store_migrations[STORE_SCHEMA_VERSION] = {
	{ schema_v1, NULL },
	{ schema_v2, NULL },
	{ schema_v3, NULL },
	{ schema_v4, NULL },
	{ schema_v5, NULL },
	{ schema_v6, NULL },
	{ schema_v7, NULL },
	{ schema_v8, store_inst_migrate_v8 },
	{ schema_v9, store_migrate_v9 },
	{ schema_v10, NULL },
	{ schema_v11, NULL },
	{ schema_v12, NULL },
	{ schema_v13, NULL },
	{ schema_v14, NULL },
	{ schema_v15, NULL },
	{ schema_v16, NULL },
	{ schema_v17, NULL },
	{ schema_v18, NULL },
	{ schema_v19, NULL },
	{ schema_v20, NULL },
	{ schema_v21, NULL },
	{ schema_v22, NULL },
	{ schema_v23, NULL },
	{ schema_v24, migrate_v24 },
	{ schema_v25, NULL },
	{ schema_v26, migrate_v26 },
	{ schema_v27, NULL },
	{ schema_v28, store_span_migrate_v28 },
};
