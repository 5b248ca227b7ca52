/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The export operation (op 25, doc/export.md): a request checked into a
 * store query, and the query's windows as an ExportAnswer whose data is
 * the trace export_perfetto.c writes, cut to the frame limit (the newest
 * windows that fit, like a WindowList). With rpc.c and rpc_pb.c the only
 * code that knows vitals' protobuf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/export.h"
#include "rpc/rpc.h"
#include "window/window.h"
#include "rpc_int.h"

#define EXPORT_WINDOWS_DEFAULT 360
/* whole windows are loaded on the query thread, as for trace */
#define EXPORT_WINDOWS_MAX 720
/* room for the Response and ExportAnswer fields around the data */
#define EXPORT_ENVELOPE 256

/* NULL and q filled (all but the range), or why the request is bad. */
const char *
rpc_export_query(const Vitals__ExportRequest *er, struct rpc_query *q)
{
	if (er->format != VITALS__EXPORT_FORMAT__EXPORT_FORMAT_PERFETTO)
		return "format: EXPORT_FORMAT_PERFETTO is the one format";
	if (er->pid < 0)
		return "pid must not be negative";
	q->op = RPC_Q_EXPORT;
	q->format = (unsigned)er->format;
	q->pid = er->pid;
	q->max_windows = er->max_windows ? er->max_windows :
					   EXPORT_WINDOWS_DEFAULT;
	if (q->max_windows > EXPORT_WINDOWS_MAX)
		q->max_windows = EXPORT_WINDOWS_MAX;
	return NULL;
}

int
rpc_answer_export(const struct rpc_query *q, struct window *const *w, size_t n,
    bool truncated, uint32_t max, uint8_t **ret, size_t *ret_len)
{
	Vitals__Response resp = VITALS__RESPONSE__INIT;
	Vitals__ExportAnswer ea = VITALS__EXPORT_ANSWER__INIT;
	struct export_perfetto_opts o = { 0 };
	struct export_perfetto_info info;
	uint8_t *data = NULL;
	size_t len = 0;
	long page = sysconf(_SC_PAGESIZE);
	char msg[160];
	int r;

	o.pid = q->pid;
	o.page_bytes = page > 0 ? (uint64_t)page : 4096;
	o.max_bytes = max > EXPORT_ENVELOPE ? max - EXPORT_ENVELOPE : 1;
	if ((r = export_perfetto(w, n, &o, &data, &len, &info)) == -EMSGSIZE) {
		snprintf(msg, sizeof(msg),
		    "not even the newest window fits the %u-byte frame "
		    "limit: export a process (pid)",
		    max);
		return rpc_error_frame(q->id, RPC_TOO_LARGE, msg, ret, ret_len);
	}
	if (r < 0)
		return r;
	resp.version = VITALS__PROTOCOL_VERSION__PROTOCOL_VERSION_1;
	resp.id = q->id;
	ea.format = (Vitals__ExportFormat)q->format;
	ea.data.data = data;
	ea.data.len = len;
	ea.windows = info.windows;
	ea.first_wall_ns = info.first_wall_ns;
	ea.last_wall_ns = info.last_wall_ns;
	ea.truncated = truncated || info.first > 0;
	ea.packets = info.packets;
	ea.tracks = info.tracks;
	resp.result_case = VITALS__RESPONSE__RESULT_EXPORT;
	resp.export = &ea;
	r = frame_pack_response(&resp, ret, ret_len);
	free(data);
	return r;
}
