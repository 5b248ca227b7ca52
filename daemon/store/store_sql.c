/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SQL of the store's write-side (enum store_wstmt) and read-side
 * (enum store_rstmt) statements: data only, below every file that
 * prepares them (store.c and store_read.c at open, store_core.c's
 * store_ws()/store_rs() at first use).
 */
#include "store/store.h"
#include "store_int.h"

const char *const store_ws_sql[WS__MAX] = {
	[WS_BEGIN] = "BEGIN IMMEDIATE",
	[WS_COMMIT] = "COMMIT",
	[WS_ROLLBACK] = "ROLLBACK",
	[WS_INS_WINDOW] =
	    "INSERT INTO windows (" STORE_WINDOW_INS_COLS ", id) VALUES"
	    " (?1, boot_key(?2), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	    " ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26,"
	    " ?27, ?28, ?29, ?30, ?31, ?32, ?33)"
	    " ON CONFLICT DO NOTHING RETURNING id",
	/* v26: windows has no UNIQUE key; a replay carries its window's
	 * wall start, which windows_wall finds by equality */
	[WS_HAVE_WINDOW] =
	    "SELECT 1 FROM windows WHERE wall_start_ns = ?4 AND"
	    " boot = boot_key(?1) AND level = ?2 AND mono_start_ns = ?3",
	/* the boot of the window put next (v24): its id is its text's */
	[WS_INS_BOOT] = "INSERT INTO boot (id, boot_id) VALUES"
			" (boot_key(?1), ?1) ON CONFLICT DO NOTHING",
	/* A level-0 window already folded into a roll-up is a replay. */
	[WS_COVERED] =
	    "SELECT 1 FROM windows INDEXED BY windows_roll WHERE"
	    " boot = boot_key(?1) AND level > 0 AND mono_start_ns <= ?2"
	    " AND mono_end_ns >= ?3 LIMIT 1",
	[WS_INS_PARTS] =
	    "INSERT INTO main.window_parts (window_id, kv, sys, bpf)"
	    " VALUES (?1, ?2, ?3, ?4)",
	[WS_DEL_WINDOW] = "DELETE FROM windows WHERE id = ?",
	[WS_DEL_AGE] = "DELETE FROM windows WHERE wall_end_ns < ?",
	[WS_DEL_OLDEST] =
	    "DELETE FROM windows WHERE id IN (SELECT id FROM"
	    " windows WHERE id != ?1 ORDER BY wall_start_ns, id LIMIT ?2)",
	[WS_COUNT] = "SELECT count(*) FROM windows",
	[WS_PAGE_COUNT] = "PRAGMA page_count",
	[WS_FREELIST] = "PRAGMA freelist_count",
	[WS_VACUUM] = "PRAGMA incremental_vacuum",
	[WS_ROLL_SRC] = "SELECT id, " STORE_BOOT_TEXT(
	    "windows.") ","
			" wall_start_ns FROM windows"
			" WHERE level = ?1 AND wall_start_ns < ?2"
			" ORDER BY boot, wall_start_ns / ?3, mono_start_ns",
	[WS_SAVEPOINT] = "SAVEPOINT step",
	[WS_RELEASE] = "RELEASE step",
	[WS_ROLLBACK_TO] = "ROLLBACK TO step",
	[WS_ROLL_EXIST] =
	    "SELECT id FROM windows WHERE boot = boot_key(?1) AND"
	    " level = ?2 AND wall_start_ns >= ?3 AND wall_start_ns < ?4",
};

/*
 * Windows overlapping [:from, :to). The lower bound on wall_start_ns is
 * implied (no window is longer than :span, the longest stored) and lets
 * the windows_wall index bound the scan on both sides. CROSS JOIN keeps
 * windows as the outer loop, so a window's task blobs are reached by
 * their key (store_taskread.c decodes them).
 */
/* clang-format off */
#define IN_RANGE(w)                                                         \
	" " w "wall_start_ns < :to AND " w "wall_start_ns >= :from - :span" \
	" AND " w "wall_end_ns > :from"

/* RS_TASK_SEG's and RS_TASK_BLOBS's last column, table, condition and
 * order */
#define TASK_SEG_BLOB                                                        \
	" (SELECT CASE WHEN :thread THEN t.threads ELSE t.procs END"         \
	" FROM window_tasks t WHERE t.window_id = w.id)"                     \
	" FROM windows w WHERE" IN_RANGE("w.") " AND w.wall_start_ns >= :lo" \
	" AND w.wall_start_ns < :hi ORDER BY w.wall_start_ns,"               \
	" w.mono_start_ns, w.id"

const char *const store_rs_sql[RS__MAX] = {
	[RS_WINDOW] = "SELECT " STORE_WINDOW_SEL_COLS " FROM windows WHERE id = ?",
	[RS_PARTS] = "SELECT kv, sys, bpf, " STORE_FOLD_COLS
	    " FROM window_parts WHERE window_id = ?",
	[RS_KEY] = "SELECT kind, key FROM window_key WHERE id = ?",
	[RS_TASKS] = "SELECT procs, threads FROM window_tasks"
	    " WHERE window_id = ?",
	[RS_IDENT] = "SELECT iid, tgid, uid, comm, name"
	    " FROM window_task_ident WHERE window_id = ?",
	[RS_IDENT_ONE] = "SELECT tgid, uid, comm, name FROM window_task_ident"
	    " WHERE window_id = ?1 AND iid = ?2",
	[RS_INST] = "SELECT thread, id, starttime, tgid, uid, comm, name"
	    " FROM instance WHERE iid = ?",
	/* Newest first, so LIMIT keeps the newest (windows_locked). */
	[RS_RANGE] = "SELECT id, " STORE_BOOT_TEXT("windows.") " AS bt,"
	    " wall_start_ns FROM windows WHERE"
	    IN_RANGE("") " ORDER BY wall_start_ns DESC, bt DESC,"
	    " mono_start_ns DESC, id DESC LIMIT :limit",
	/* Oldest first, a list's blob each (store_taskread.c; NULL: none),
	 * of the windows of the range that start in [:lo, :hi), with the
	 * windows' own columns: a history's (it skips the hours where its
	 * tasks are absent, store_tasksum.c). A correlated lookup, not a
	 * join: where a reader's views stand for the tables (store_conn.c),
	 * SQLite would read a joined view whole. */
	[RS_TASK_SEG] = "SELECT w.id, " STORE_BOOT_TEXT("w.") ", w.level, w.hz,"
	    " w.mono_start_ns, w.mono_end_ns, w.wall_start_ns, w.wall_end_ns,"
	    TASK_SEG_BLOB,
	/* The same windows' id and blob alone: a top-N's edges (it reads
	 * the rest from summaries, store_tasksum.c). Its sums use no other
	 * column, so no boot lookup a row. */
	[RS_TASK_BLOBS] = "SELECT w.id," TASK_SEG_BLOB,
	/* The instances of one task (starttime 0: every one of that id). */
	[RS_INST_ID] = "SELECT iid FROM instance WHERE thread = :thread"
	    " AND id = :id AND (:start = 0 OR starttime = :start)",
	/* A process's threads (the control plane's process view). */
	[RS_INST_TGID] = "SELECT iid FROM instance WHERE thread = 1"
	    " AND tgid = :id AND (:start = 0 OR starttime >= :start)",
};
/* clang-format on */
