/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader of `dumpsys gpu --gpumem` text that follows the rules of
 * AOSP's GpuMem::dump and GpuService::doDump and nothing else (see
 * tests/fixtures/gpumem/README.md): a line that is not exactly one of its
 * forms, a number with a sign, a leading zero or out of range, pids out
 * of order, a GPU twice, an empty section, or a missing final empty line
 * is an error. Whatever vitals prints by default must read back here
 * with every field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpumem_dumpsys.h"

/* A decimal as printf's %u / PRIu64 writes it: digits, no leading zero. */
static const char *
ds_num(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*ret = v;
	return p;
}

/* s after prefix, or NULL. */
static const char *
ds_lit(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* 0 and the parsed text, or -1 with out->err_line. */
int
ds_parse(const char *text, struct ds_out *out)
{
	const char *s = text, *p;
	char line[256];
	unsigned ln = 0;
	bool in_sec = false, have_procs = true, global_na = false;
	uint32_t last_pid = 0;
	uint64_t v;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->kind = DS_ERR;
	for (;;) {
		const char *nl = strchr(s, '\n');
		size_t len;

		ln++;
		if (nl == NULL || (len = (size_t)(nl - s)) >= sizeof(line))
			goto bad; /* every line ends in '\n' */
		memcpy(line, s, len);
		line[len] = '\0';
		s = nl + 1;
		if (len == 0) {
			/* GpuService's closing empty line: the end */
			if (*s != '\0' || out->kind == DS_ERR ||
			    (in_sec && !have_procs && global_na))
				goto bad;
			return 0;
		}
		if (ln == 1 && !strcmp(line, DS_FAILED)) {
			out->kind = DS_KIND_FAILED;
			continue;
		}
		if (ln == 1 && !strcmp(line, DS_EMPTY)) {
			out->kind = DS_KIND_EMPTY;
			continue;
		}
		if (out->kind == DS_KIND_FAILED || out->kind == DS_KIND_EMPTY ||
		    out->n == sizeof(out->row) / sizeof(out->row[0]))
			goto bad;
		if ((p = ds_lit(line, "Memory snapshot for GPU ")) != NULL) {
			/* an N/A section needs a process line */
			if (in_sec && !have_procs && global_na)
				goto bad;
			if ((p = ds_num(p, UINT32_MAX, &v)) == NULL ||
			    strcmp(p, ":"))
				goto bad;
			for (i = 0; i < out->n; i++)
				if (out->row[i].gpu == v)
					goto bad; /* a GPU once */
			out->kind = DS_KIND_SNAPSHOT;
			out->row[out->n].gpu = (uint32_t)v;
			/* the global line must come next */
			ln++;
			nl = strchr(s, '\n');
			if (nl == NULL ||
			    (len = (size_t)(nl - s)) >= sizeof(line))
				goto bad;
			memcpy(line, s, len);
			line[len] = '\0';
			s = nl + 1;
			if ((p = ds_lit(line, "Global total: ")) == NULL)
				goto bad;
			if (!strcmp(p, "N/A")) {
				out->row[out->n].na = true;
				global_na = true;
			} else if ((p = ds_num(p, UINT64_MAX, &v)) != NULL &&
			    *p == '\0') {
				out->row[out->n].bytes = v;
				global_na = false;
			} else {
				goto bad;
			}
			out->n++;
			in_sec = true;
			have_procs = false;
			last_pid = 0;
			continue;
		}
		if ((p = ds_lit(line, "Proc ")) != NULL && in_sec) {
			struct ds_row *r = &out->row[out->n];

			if ((p = ds_num(p, UINT32_MAX, &v)) == NULL || v == 0 ||
			    (have_procs && v <= last_pid))
				goto bad; /* ascending, never pid 0 */
			r->pid = (uint32_t)v;
			if ((p = ds_lit(p, " total: ")) == NULL ||
			    (p = ds_num(p, UINT64_MAX, &v)) == NULL ||
			    *p != '\0')
				goto bad;
			r->bytes = v;
			r->gpu = out->row[out->n - 1].gpu;
			last_pid = r->pid;
			have_procs = true;
			out->n++;
			continue;
		}
		goto bad;
	}
bad:
	out->kind = DS_ERR;
	out->err_line = ln;
	return -1;
}
