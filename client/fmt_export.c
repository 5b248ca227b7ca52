/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals export`: the trace's bytes into a file, and the summary of the
 * answer (doc/vitals.1.md). The trace itself never goes through JSON: the
 * summary says where it went and what it covers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"

int
fmt_export_write(const char *path, const uint8_t *p, size_t len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
	int r = 0;

	if (f == NULL)
		return -errno;
	if (len && fwrite(p, 1, len, f) != len)
		r = -EIO;
	if (f == stdout) {
		if (fflush(f) != 0 && r == 0)
			r = -errno;
	} else if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

void
fmt_export(struct sbuf *b, const Vitals__ExportAnswer *ea, const char *file,
    bool json)
{
	char from[64], to[64];
	struct json j;

	if (json) {
		json_init(&j, b);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", "STATUS_OK");
		json_obj_begin(&j, "export");
		json_str(&j, "format", "EXPORT_FORMAT_PERFETTO");
		json_str(&j, "file", file);
		json_u64(&j, "bytes", ea->data.len);
		json_i32(&j, "windows", ea->windows);
		json_i64(&j, "first_wall_ns", ea->first_wall_ns);
		json_i64(&j, "last_wall_ns", ea->last_wall_ns);
		json_bool(&j, "truncated", ea->truncated);
		json_i32(&j, "packets", ea->packets);
		json_i32(&j, "tracks", ea->tracks);
		json_obj_end(&j);
		json_obj_end(&j);
		sbuf_putc(b, '\n');
		return;
	}
	if (ea->windows == 0) {
		sbuf_printf(b,
		    "%s: %zu bytes, no stored window in the range "
		    "(%u packets)\n",
		    file, ea->data.len, ea->packets);
		return;
	}
	fmt_time(from, sizeof(from), ea->first_wall_ns);
	fmt_time(to, sizeof(to), ea->last_wall_ns);
	sbuf_printf(b,
	    "%s: %zu bytes, %u windows %s .. %s, %u tracks, %u packets%s\n",
	    file, ea->data.len, ea->windows, from, to, ea->tracks, ea->packets,
	    ea->truncated ? " (truncated: the newest windows that fit)" : "");
}
