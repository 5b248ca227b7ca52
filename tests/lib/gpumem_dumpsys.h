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
#ifndef VITALS_GPUMEM_DUMPSYS_H
#define VITALS_GPUMEM_DUMPSYS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define DS_FAILED "Failed to initialize GPU memory eBPF"
#define DS_EMPTY "GPU memory total usage map is empty"

enum ds_kind { DS_ERR, DS_KIND_FAILED, DS_KIND_EMPTY, DS_KIND_SNAPSHOT };

struct ds_row {
	uint32_t gpu;
	uint32_t pid; /* 0: the global line */
	uint64_t bytes;
	bool na; /* "Global total: N/A" */
};

struct ds_out {
	enum ds_kind kind;
	struct ds_row row[64];
	size_t n;
	unsigned err_line; /* 1-based line of the first error */
};

/* 0 and the parsed text, or -1 with out->err_line. */
int ds_parse(const char *text, struct ds_out *out);

#endif
