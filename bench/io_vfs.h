/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io_vfs: a counting shim over SQLite's default VFS, for benchmarks only.
 * It sees every write the store's connections make and sorts it by file
 * (main database, rollback journal, WAL) and, for the main file, into
 * pages appended past its end and pages rewritten in place; it can also
 * name the b-tree each rewritten page belongs to (io_vfs_attribute).
 */
#ifndef VITALS_BENCH_IO_VFS_H
#define VITALS_BENCH_IO_VFS_H

#include <stdint.h>
#include <stdio.h>

enum io_kind {
	IO_MAIN_APPEND,
	IO_MAIN_REWRITE,
	IO_JOURNAL,
	IO_WAL,
	IO_OTHER,
	IO_NKIND
};

struct io_counts {
	uint64_t bytes[IO_NKIND];
	/* distinct 4 KiB blocks each file dirtied between its syncs (and
	 * before its close), in bytes: what the kernel writes back when
	 * every sync is a writeback (a model of write_bytes) */
	uint64_t blocks[IO_NKIND];
	uint64_t syncs;
};

/* Registers the shim as the default VFS (before any store_open). */
int io_vfs_install(void);
void io_vfs_counts(struct io_counts *ret);
/* Starts remembering which pages of `path` (a main database) are
 * rewritten in place and which are copied into its rollback journal;
 * io_vfs_attribute() names both by b-tree (dbstat; pointer-map pages
 * by their place, other pages in no b-tree as the free list) and adds
 * their bytes to a table by name, then forgets them. */
void io_vfs_track(const char *path);
void io_vfs_attribute(void);
/* The table since the last call: one line per b-tree, most bytes
 * first, per simulated day of `days`; then forgotten. */
void io_vfs_print_pages(FILE *out, double days);

#endif
