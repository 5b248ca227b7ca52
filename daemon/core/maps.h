/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One line of /proc/<pid>/maps (maps.c): "start-end perms offset
 * major:minor inode path", addresses, offset and device in hex, the inode
 * in decimal, the path (which may hold blanks, or be absent) to the end.
 * Shared by the fault phases' classes (trace/phase_maps.c), the
 * working-set monitor's regions (wss/wss_maps.c) and the start-up
 * pageout (core/pageout.c).
 */
#ifndef VITALSD_MAPS_H
#define VITALSD_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct maps_line {
	uint64_t start, end; /* [start, end) */
	uint64_t off, ino;
	uint32_t dev;	  /* the kernel's dev_t: major << 20 | minor */
	char perms[4];	  /* r/-, w/-, x/-, p/s */
	const char *path; /* in the line; plen 0: none */
	size_t plen;
};

/* The line [p, end) (no newline); false: not in the format (a field
 * missing or out of range, end <= start, a perms character unknown). */
bool maps_line_parse(const char *p, const char *end, struct maps_line *ret);

#endif /* VITALSD_MAPS_H */
