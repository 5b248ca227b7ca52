/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the daemon's own memory goes (Health.memory): the kernel's view
 * from /proc/self/status, next to what the daemon's parts say they hold.
 */
#ifndef VITALSD_MEMSTAT_H
#define VITALSD_MEMSTAT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct memstat {
	uint64_t rss, hwm;	    /* VmRSS, VmHWM: bytes now and at peak */
	uint64_t anon, file, shmem; /* RssAnon, RssFile, RssShmem */
	uint32_t threads;	    /* Threads */
	uint32_t have;		    /* MEMSTAT_* of the lines found */
};

#define MEMSTAT_RSS 0x01
#define MEMSTAT_HWM 0x02
#define MEMSTAT_ANON 0x04
#define MEMSTAT_FILE 0x08
#define MEMSTAT_SHMEM 0x10
#define MEMSTAT_THREADS 0x20

/* What /proc/self/smaps says of the mapped files (Health.memory): the
 * daemon's own program, its relocated and written pages of it, and the
 * shared libraries (paths with ".so"); and the proportional set size,
 * every mapping's and the libraries'. have: MEMSTAT_PROGRAM (program and
 * program_dirty), MEMSTAT_LIBS, set when a mapping of the kind was seen;
 * MEMSTAT_PSS (pss and libs_pss) when a mapping had a Pss line. */
struct memstat_maps {
	uint64_t program;	/* Rss of the executable's mappings */
	uint64_t program_dirty; /* of it Private_Dirty: relocations, data */
	uint64_t libs;		/* Rss of the libraries' mappings */
	uint64_t pss;		/* Σ Pss over every mapping */
	uint64_t libs_pss;	/* of it the libraries' */
	uint32_t have;
};

#define MEMSTAT_PROGRAM 0x40
#define MEMSTAT_LIBS 0x80
#define MEMSTAT_PSS 0x100

/* The lines of a status file's text; -EINVAL when none was there. */
int memstat_parse(const char *buf, size_t len, struct memstat *ret);
/* A status or smaps field's value, [p, end) after its "Name:":
 * "<spaces>N kB" (kb: bytes) or "<spaces>N" (a count). 0, -EINVAL,
 * -ERANGE. */
int memstat_field_value(const char *p, const char *end, bool kb, uint64_t *ret);
/* The calling process's, from <proc_root>/self/status (NULL: /proc). */
int memstat_read(const char *proc_root, struct memstat *ret);

/* An smaps text's mappings, exe the program's path as its mappings name
 * it; -EINVAL when no mapping of either kind was there. */
int memstat_maps_parse(const char *buf, size_t len, const char *exe,
    struct memstat_maps *ret);
/* The calling process's (NULL proc_root: /proc); reads the whole smaps,
 * so for a request, not for every sample. */
int memstat_maps_read(const char *proc_root, struct memstat_maps *ret);
/*
 * memstat_maps_read, read again only when the last read is max_age_ns
 * old or older (CLOCK_MONOTONIC; <= 0: always): the walk of every
 * mapping's page tables costs 0.2-1 ms at the daemon's size (87
 * mappings), too much to run on the event loop for each health request
 * a caller can send. A failed read is kept too (its error returned until
 * it is old; *ret and *ret_age_ns untouched), so the bound holds either
 * way. *ret_age_ns (if not NULL): how old the figures are. One cache per
 * process, whatever proc_root; thread-safe.
 */
int memstat_maps_cached(const char *proc_root, int64_t max_age_ns,
    struct memstat_maps *ret, int64_t *ret_age_ns);

/* malloc's own account of the heap, every arena (mallinfo2) */
struct memstat_heap {
	uint64_t in_use; /* allocated and not freed, mmapped chunks included */
	uint64_t free;	 /* freed, still held by malloc (may be resident) */
	uint64_t mmap;	 /* of in_use: chunks malloc mmapped on their own */
};

/* 0, or -ENOTSUP where the C library gives no such account or its malloc
 * is not the one in use (ASan). */
int memstat_heap(struct memstat_heap *ret);

#endif /* VITALSD_MEMSTAT_H */
