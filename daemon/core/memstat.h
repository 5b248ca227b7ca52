/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the daemon's own memory goes (Health.memory): the kernel's view
 * from /proc/self/status, next to what the daemon's parts say they hold.
 */
#ifndef VITALSD_MEMSTAT_H
#define VITALSD_MEMSTAT_H

#include <stddef.h>
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

/* The lines of a status file's text; -EINVAL when none was there. */
int memstat_parse(const char *buf, size_t len, struct memstat *ret);
/* The calling process's, from <proc_root>/self/status (NULL: /proc). */
int memstat_read(const char *proc_root, struct memstat *ret);

#endif /* VITALSD_MEMSTAT_H */
